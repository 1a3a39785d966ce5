"""Shared helpers of oar.distribution: turning user parameters into tensors of one float
dtype, broadcasting them, checking their constraints, and checking sample shapes.

Note [distribution parameter dtypes]
------------------------------------
As in Paddle, a parameter given as a Python number or list becomes a tensor of the
default float dtype (float32 unless changed), a NumPy array keeps float64 when it has it,
and a float Tensor keeps its dtype (and its place in the autograd graph, so gradients
reach it). The parameters of one distribution then share the widest of those dtypes.
Integer tensors and arrays are read as values, not as a dtype request.
"""
import numbers

import numpy as np

from .. import _C
from ..creation import to_tensor
from ..framework import get_default_dtype, in_dynamic_mode

_FLOATS = ("float32", "float64")


def _dtype_name(dtype):
    return dtype.name if hasattr(dtype, "name") else str(dtype).replace("paddle.", "")


def _preferred_dtype(value):
    """The float dtype a parameter asks for, or None when it asks for none (numbers, ints)."""
    if isinstance(value, _C.Tensor):
        name = _dtype_name(value.dtype)
        return name if name in _FLOATS else None
    if isinstance(value, np.ndarray) and value.dtype.name in _FLOATS:
        return value.dtype.name
    return None


def as_tensors(api, names, values):
    """Converts the parameters `values` (named `names` in errors) to tensors of one float dtype
    (Note [distribution parameter dtypes]), without broadcasting them."""
    wanted = [d for d in (_preferred_dtype(v) for v in values) if d is not None]
    dtype = "float64" if "float64" in wanted else (wanted[0] if wanted else _dtype_name(get_default_dtype()))
    if dtype not in _FLOATS:
        dtype = "float32"
    out = []
    for name, value in zip(names, values):
        if isinstance(value, _C.Tensor):
            if _dtype_name(value.dtype).startswith("complex"):
                raise TypeError(f"[{api}] {name} must be real, got a {value.dtype} Tensor")
            t = value if _dtype_name(value.dtype) == dtype else _C.cast(value, getattr(_C.dtype, dtype))
        elif isinstance(value, (numbers.Real, list, tuple, np.ndarray, np.generic)) and not isinstance(value, bool):
            arr = np.asarray(value)
            if arr.dtype.kind not in "fiu":
                raise TypeError(f"[{api}] {name} must hold real numbers, got an array of {arr.dtype}")
            t = to_tensor(arr.astype(dtype))
        else:
            raise TypeError(f"[{api}] {name} must be a float, list, numpy.ndarray or Tensor, "
                            f"got {type(value).__name__}")
        out.append(t)
    return out


def broadcast(api, names, tensors):
    """Broadcasts the parameter tensors to their common shape (a view keeps gradients flowing)."""
    shapes = [list(t.shape) for t in tensors]
    try:
        shape = list(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        detail = ", ".join(f"{n} of shape {s}" for n, s in zip(names, shapes))
        raise ValueError(f"[{api}] the parameters do not broadcast together: {detail}") from None
    return [t if list(t.shape) == shape else t.expand(shape) for t in tensors]


def params(api, names, values, do_broadcast=True):
    """as_tensors followed by broadcast."""
    ts = as_tensors(api, names, values)
    return broadcast(api, names, ts) if do_broadcast and len(ts) > 1 else ts


def numpy_values(t):
    """NumPy values of t for validation, or None while t is symbolic (graph capture)."""
    if not in_dynamic_mode():
        return None
    try:
        return t.numpy()
    except Exception:  # a value without data (captured graph): nothing to check now
        return None


def check(api, name, t, rule):
    """Checks the constraint `rule` on parameter t, raising ValueError naming it."""
    v = numpy_values(t)
    if v is None or v.size == 0:
        return
    tests = {  # each gives the mask of values that satisfy it
        "positive": (lambda a: a > 0, "positive"),
        "nonnegative": (lambda a: a >= 0, "non-negative"),
        "real": (lambda a: ~np.isnan(a), "a real number (not NaN)"),
        "unit": (lambda a: (a >= 0) & (a <= 1), "in [0, 1]"),
        "unit_open_left": (lambda a: (a > 0) & (a <= 1), "in (0, 1]"),
        "unit_open": (lambda a: (a > 0) & (a < 1), "in (0, 1)"),
        "integer": (lambda a: (a >= 0) & (a == np.floor(a)), "a non-negative integer"),
    }
    ok, what = tests[rule]
    good = np.asarray(ok(v))
    if not good.all():
        example = np.asarray(v)[~good].ravel()[0]
        raise ValueError(f"[{api}] {name} must be {what}, got {example!r} among its values")


def check_rank(api, name, t, rank):
    if len(t.shape) < rank:
        raise ValueError(f"[{api}] {name} must have at least {rank} dimension(s), got shape {list(t.shape)}")


def sample_shape(api, shape):
    """The sample shape as a tuple of ints; accepts a sequence of non-negative ints (or one int)."""
    if isinstance(shape, _C.Tensor):
        shape = shape.numpy().tolist()
    if isinstance(shape, (numbers.Integral, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, (list, tuple)) or not all(
            isinstance(s, (numbers.Integral, np.integer)) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise TypeError(f"[{api}] shape must be a list or tuple of non-negative ints, got {shape!r}")
    return tuple(int(s) for s in shape)


def value_tensor(api, value, dtype):
    """A value at which to evaluate a density, as a tensor of the distribution's dtype."""
    if isinstance(value, _C.Tensor):
        return value if value.dtype == dtype else _C.cast(value, dtype)
    if isinstance(value, (numbers.Real, list, tuple, np.ndarray, np.generic)) and not isinstance(value, bool):
        return to_tensor(np.asarray(value, dtype=_dtype_name(dtype)))
    raise TypeError(f"[{api}] value must be a number, list, numpy.ndarray or Tensor, got {type(value).__name__}")


def shape_numel(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n
