"""Image classification models with Paddle's names (paddle.vision.models)."""
from .alexnet import *  # noqa: F401,F403
from .alexnet import __all__ as _alexnet_all
from .densenet import *  # noqa: F401,F403
from .densenet import __all__ as _densenet_all
from .googlenet import *  # noqa: F401,F403
from .googlenet import __all__ as _googlenet_all
from .inceptionv3 import *  # noqa: F401,F403
from .inceptionv3 import __all__ as _inceptionv3_all
from .lenet import *  # noqa: F401,F403
from .lenet import __all__ as _lenet_all
from .mobilenetv1 import *  # noqa: F401,F403
from .mobilenetv1 import __all__ as _mobilenetv1_all
from .mobilenetv2 import *  # noqa: F401,F403
from .mobilenetv2 import __all__ as _mobilenet_all
from .mobilenetv3 import *  # noqa: F401,F403
from .mobilenetv3 import __all__ as _mobilenetv3_all
from .resnet import *  # noqa: F401,F403
from .resnet import __all__ as _resnet_all
from .shufflenetv2 import *  # noqa: F401,F403
from .shufflenetv2 import __all__ as _shufflenetv2_all
from .squeezenet import *  # noqa: F401,F403
from .squeezenet import __all__ as _squeezenet_all
from .vgg import *  # noqa: F401,F403
from .vgg import __all__ as _vgg_all

__all__ = (_lenet_all + _resnet_all + _mobilenetv1_all + _mobilenet_all + _mobilenetv3_all + _vgg_all + _alexnet_all
           + _squeezenet_all + _densenet_all + _googlenet_all + _inceptionv3_all + _shufflenetv2_all)
