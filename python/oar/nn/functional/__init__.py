"""oar.nn.functional: the functional forms of the layers in oar.nn."""
from .activation import *  # noqa: F401,F403
from .common import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .norm import *  # noqa: F401,F403
from .extension import *  # noqa: F401,F403
from .flash_attention import *  # noqa: F401,F403
from .sparse_attention import *  # noqa: F401,F403
from .moe import *  # noqa: F401,F403
