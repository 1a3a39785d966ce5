"""Vision datasets (``paddle.vision.datasets``) read from local files; nothing is downloaded.

>>> from oar.vision.datasets import Digits
>>> len(Digits(mode="test", test_ratio=0.5))
898
"""
from .digits import *  # noqa: F401,F403
from .folder import *  # noqa: F401,F403
from .mnist import *  # noqa: F401,F403
from . import digits, folder, mnist

__all__ = digits.__all__ + folder.__all__ + mnist.__all__
