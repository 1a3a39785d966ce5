"""Graph capture with Paddle's ``paddle.jit`` names: ``to_static`` converts a
function or a Layer so that calls run a captured program (see oar.jit.api).

>>> import oar
>>> @oar.jit.to_static
... def f(x, y):
...     return oar.matmul(x, y) + 1.0
>>> f(oar.ones([2, 3]), oar.ones([3, 2])).numpy().tolist()
[[4.0, 4.0], [4.0, 4.0]]
"""
from .. import _tensor_methods  # noqa: F401  the Tensor methods to guard must exist first
from . import _guard, dy2static
from ._guard import Dy2StaticError
from .api import StaticFunction, enable_to_static, ignore_module, not_to_static, to_static
from .io import TranslatedLayer, load, save
from .sot import GraphBreak, sot_report

__all__ = ["to_static", "not_to_static", "enable_to_static", "ignore_module", "StaticFunction", "Dy2StaticError",
           "save", "load", "TranslatedLayer", "dy2static", "GraphBreak", "sot_report"]

_guard.install()
