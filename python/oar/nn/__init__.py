"""oar.nn: layers, losses, initializers and gradient clipping."""
from . import functional  # noqa: F401
from .layer import *  # noqa: F401,F403
from . import initializer  # noqa: F401,E402
from .clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue  # noqa: F401,E402
from . import decode  # noqa: F401,E402
from .decode import BeamSearchDecoder, dynamic_decode  # noqa: F401,E402
from . import utils  # noqa: F401,E402
