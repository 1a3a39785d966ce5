"""Image classification models with Paddle's names (paddle.vision.models)."""
from .lenet import *  # noqa: F401,F403
from .lenet import __all__ as _lenet_all
from .mobilenetv2 import *  # noqa: F401,F403
from .mobilenetv2 import __all__ as _mobilenet_all
from .resnet import *  # noqa: F401,F403
from .resnet import __all__ as _resnet_all
from .vgg import *  # noqa: F401,F403
from .vgg import __all__ as _vgg_all

__all__ = _lenet_all + _resnet_all + _mobilenet_all + _vgg_all
