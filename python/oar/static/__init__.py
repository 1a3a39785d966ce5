"""Static-graph API (Paddle's ``paddle.static``).

``oar.enable_static()`` records the ops that user code runs into a
``Program``; ``data`` declares its inputs, ``Executor().run(program, feed,
fetch_list)`` runs it, and ``append_backward``, ``gradients`` and
``Optimizer.minimize`` add gradients and training steps, all on oar's IR
(see Note [static mode] in oar/static/program.py). ``oar.static.nn`` holds
the layers that create their parameters (``fc``, ``conv2d``,
``batch_norm``, ...) and control flow; io.py saves and loads programs
(inference models in ``oar.jit.save``'s format, checkpoints); misc.py has
the other names (``Print``, ``accuracy``, ``auc``,
``ExponentialMovingAverage``, places, ...).

``InputSpec`` describes the inputs of a function converted by
``oar.jit.to_static``: shape (``None`` or ``-1`` marks a dim whose size may
change between calls), dtype and name.
"""
import builtins

import numpy as np

from .. import _C
from ..framework import _dtype

__all__ = ["InputSpec", "Program", "program_guard", "default_main_program", "default_startup_program", "data",
           "append_backward", "gradients", "name_scope", "Executor", "global_scope", "scope_guard", "Scope", "nn",
           "BuildStrategy"]


class InputSpec:
    """The shape, dtype and name of one input of a to_static function or layer.

    ``None`` or ``-1`` in ``shape`` marks a dynamic dim: calls whose inputs differ
    only in such dims share one captured program. Specs compare equal when
    shape, dtype, name and stop_gradient are equal; the hash leaves out the
    name, as in Paddle.

    >>> import oar
    >>> from oar.static import InputSpec
    >>> spec = InputSpec([None, 784], "float32", name="x")
    >>> spec
    InputSpec(shape=(-1, 784), dtype=paddle.float32, name=x, stop_gradient=False)
    >>> spec == InputSpec([-1, 784], oar.float32, name="x")
    True
    >>> InputSpec.from_tensor(oar.ones([2, 3]), name="y").shape
    (2, 3)
    """

    def __init__(self, shape, dtype="float32", name=None, stop_gradient=False):
        self.shape = self._verify(shape)
        self.dtype = self._convert_dtype(dtype)
        self.name = name
        self.stop_gradient = stop_gradient

    @staticmethod
    def _convert_dtype(dtype):
        try:
            d = _dtype(dtype)
        except (TypeError, ValueError) as e:
            raise TypeError(f"[oar.static.InputSpec] dtype must be an oar dtype or its name, got {dtype!r}") from e
        if d is None:
            raise TypeError("[oar.static.InputSpec] dtype must be an oar dtype or its name, got None")
        return d

    @staticmethod
    def _verify(shape):
        if isinstance(shape, builtins.int) and not isinstance(shape, builtins.bool):
            shape = [shape]
        if not isinstance(shape, (list, tuple)):
            raise TypeError(f"[oar.static.InputSpec] shape must be a list or tuple, got {type(shape).__name__}")
        dims = []
        for i, d in enumerate(shape):
            if d is None:
                dims.append(-1)
                continue
            if isinstance(d, builtins.bool) or not isinstance(d, (builtins.int, np.integer)):
                raise ValueError(f"[oar.static.InputSpec] shape[{i}] must be an int, None or -1, got {d!r}")
            if d < -1:
                raise ValueError(f"[oar.static.InputSpec] shape[{i}] must be >= -1 (-1 or None: dynamic), got {d}")
            dims.append(builtins.int(d))
        return tuple(dims)

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of an existing tensor (its shape, dtype and, unless given, its name).

        >>> import oar
        >>> oar.static.InputSpec.from_tensor(oar.ones([3], dtype="int64"))
        InputSpec(shape=(3,), dtype=paddle.int64, name=None, stop_gradient=False)
        """
        if not isinstance(tensor, _C.Tensor):
            raise TypeError(f"[oar.static.InputSpec.from_tensor] expected a Tensor, got {type(tensor).__name__}")
        # A static data variable keeps its declared dims (Note [declared shapes] in program.py).
        shape = getattr(tensor, "__dict__", {}).get("_declared_shape") or tensor.shape
        return cls(shape, tensor.dtype, name if name is not None else getattr(tensor, "name", None))

    @classmethod
    def from_numpy(cls, ndarray, name=None):
        """The spec of a NumPy array.

        >>> import numpy as np
        >>> import oar
        >>> oar.static.InputSpec.from_numpy(np.zeros((2, 5), np.float64)).shape
        (2, 5)
        """
        arr = np.asarray(ndarray)
        return cls(arr.shape, arr.dtype, name)

    def batch(self, batch_size):
        """Prepends a batch dim to the shape, in place; returns self.

        >>> import oar
        >>> oar.static.InputSpec([784]).batch(16).shape
        (16, 784)
        """
        if isinstance(batch_size, (list, tuple)):
            if len(batch_size) != 1:
                raise ValueError(f"[oar.static.InputSpec.batch] batch_size must be an int or a list of one int, "
                                 f"got {list(batch_size)}")
            batch_size = batch_size[0]
        if batch_size is None:
            batch_size = -1
        if isinstance(batch_size, builtins.bool) or not isinstance(batch_size, (builtins.int, np.integer)):
            raise TypeError(f"[oar.static.InputSpec.batch] batch_size must be an int, got {type(batch_size).__name__}")
        self.shape = self._verify([builtins.int(batch_size)] + list(self.shape))
        return self

    def unbatch(self):
        """Removes the first dim of the shape, in place; returns self.

        >>> import oar
        >>> oar.static.InputSpec([16, 784]).unbatch().shape
        (784,)
        """
        if len(self.shape) == 0:
            raise ValueError("[oar.static.InputSpec.unbatch] the shape is 0-D and has no batch dim")
        self.shape = self.shape[1:]
        return self

    def __repr__(self):
        return (f"{type(self).__name__}(shape={self.shape}, dtype={self.dtype}, name={self.name}, "
                f"stop_gradient={self.stop_gradient})")

    def __hash__(self):
        return hash((self.shape, self.dtype, self.stop_gradient))

    def __eq__(self, other):
        if type(self) is not type(other):
            return NotImplemented
        return (self.shape, self.dtype, self.name, self.stop_gradient) == \
            (other.shape, other.dtype, other.name, other.stop_gradient)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq


from .program import (Program, append_backward, data, default_main_program, default_startup_program,  # noqa: E402
                      gradients, name_scope, program_guard)
from .executor import Executor, Scope, global_scope, scope_guard  # noqa: E402
from . import nn  # noqa: E402,F401
from .build_strategy import BuildStrategy  # noqa: E402
from .py_func import py_func  # noqa: E402
from .io import *  # noqa: E402,F401,F403
from .io import __all__ as _io_names  # noqa: E402
from .misc import *  # noqa: E402,F401,F403
from .misc import __all__ as _misc_names  # noqa: E402

__all__ += _io_names + _misc_names + ["py_func"]
