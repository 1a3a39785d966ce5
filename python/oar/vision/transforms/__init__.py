"""Image transforms (``paddle.vision.transforms``): classes, and the functions of ``functional``.

>>> import numpy as np
>>> from oar.vision import transforms as T
>>> T.Compose([T.Resize(4), T.ToTensor()])(np.zeros((8, 8, 3), np.uint8)).shape
[3, 4, 4]
"""
from . import functional
from .functional import *  # noqa: F401,F403
from .transforms import *  # noqa: F401,F403
from . import transforms as _transforms

__all__ = _transforms.__all__ + functional.__all__ + ["functional"]
