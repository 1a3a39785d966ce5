"""meshgrid, and the helpers that turn Paddle's flexible arguments (ints,
lists, Tensors holding counts) into plain ints for the functions written in
Python.

The other shape-manipulation functions (concat, stack, split, tile, flip,
roll, pad, ...) are declared in src/ops/manip.toml and bound in C++; they are
re-exported here for the modules that import them from this one (concat and
stack as the Python functions below).
"""
import builtins

import numpy as np

from . import _C
from ._C import (  # noqa: F401
    chunk, diag, diagflat, diagonal, flip, pad, repeat_interleave, roll, split, tile, tril, triu, unbind,
)

__all__ = ["meshgrid"]

Tensor = _C.Tensor


def _int_tensor(v, api, what):
    # A float tensor is not silently truncated into counts or axes.
    if v.dtype not in (_C.dtype.int64, _C.dtype.int32, _C.dtype.int16, _C.dtype.int8, _C.dtype.uint8):
        raise TypeError(f"[{api}] {what} must be an integer Tensor, got a {str(v.dtype).replace('paddle.', '')} Tensor")
    return v


def _int(v, api, what):
    if isinstance(v, Tensor):
        if v.size != 1:
            raise ValueError(f"[{api}] {what} must hold one value, got shape {v.shape}")
        v = _int_tensor(v, api, what).item()
    if isinstance(v, builtins.bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"[{api}] {what} must be an int, got {type(v).__name__}")
    return int(v)


def _ints(v, api, what):
    if isinstance(v, Tensor):
        return [int(i) for i in _int_tensor(v, api, what).numpy().reshape(-1)]
    if isinstance(v, (int, np.integer)) and not isinstance(v, builtins.bool):
        return [int(v)]
    if isinstance(v, (list, tuple)):
        return [_int(i, api, what) for i in v]
    raise TypeError(f"[{api}] {what} must be an int, a list of ints or a Tensor, got {type(v).__name__}")


def _tensors(xs, api):
    if isinstance(xs, Tensor) or not isinstance(xs, (list, tuple)):
        raise TypeError(f"[{api}] x must be a list or tuple of Tensors, got {type(xs).__name__}")
    for i, t in enumerate(xs):
        if not isinstance(t, Tensor):
            raise TypeError(f"[{api}] x[{i}] must be a Tensor, got {type(t).__name__}")
    return list(xs)


# concat and stack also serve as Tensor methods (_shape_index.py), where
# x.stack() is stack(x) and refused as in Paddle (x must be a list); a function
# bound in C++ is no descriptor, so they are Python functions here.
def concat(x, axis=0, name=None):
    """oar.concat (src/ops/manip.toml)."""
    return _C.concat(x, axis)


def stack(x, axis=0, name=None):
    """oar.stack (src/ops/manip.toml)."""
    return _C.stack(x, axis)


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors ('ij' indexing: output i varies along axis i).

    >>> import oar
    >>> a, b = oar.meshgrid(oar.to_tensor([1, 2]), oar.to_tensor([3, 4, 5]))
    >>> a.shape, b.numpy().tolist()
    ([2, 3], [[3, 4, 5], [3, 4, 5]])
    """
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"[oar.meshgrid] unexpected keyword arguments {sorted(kwargs)}")
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    return _C._meshgrid(_tensors(list(args), "oar.meshgrid"))
