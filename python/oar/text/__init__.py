"""Text models (paddle.text counterpart)."""
from . import models  # noqa: F401
from .models import *  # noqa: F401,F403
from .models import __all__ as _models_all

__all__ = list(_models_all)
