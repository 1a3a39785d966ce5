"""Helpers shared by the math modules of the paddle namespace (_math_ext, _math_special, _math_stats)."""
import builtins

import numpy as np

from . import _C
from ._inplace import inplace_source
from .autograd import no_grad as _no_grad  # noqa: F401 - used by the math modules

Tensor = _C.Tensor
_DT = _C.dtype
_INTS = (_DT.uint8, _DT.int8, _DT.int16, _DT.int32, _DT.int64)


def _tensor(x, api, what="x"):
    if not isinstance(x, Tensor):
        raise TypeError(f"[{api}] {what} must be a Tensor, got {type(x).__name__}")
    return x


def _like(v, x):
    """v as a tensor of x's dtype (a Python number, a NumPy array or a Tensor)."""
    if isinstance(v, Tensor):
        return v if v.dtype == x.dtype else _C.cast(v, x.dtype)
    return _C.full([], v, x.dtype) if np.ndim(v) == 0 else _C.cast(_from_numpy(np.asarray(v), x), x.dtype)


def _float_input(x, api, what="x", complex_ok=False):
    """x as a floating-point tensor: integer and bool inputs become the default float dtype."""
    _tensor(x, api, what)
    if x.dtype.is_floating_point:
        return x
    if x.dtype.is_complex:
        if complex_ok:
            return x
        raise TypeError(f"[{api}] {what} must be a real tensor, got {x.dtype.name}")
    return _C.cast(x, _C.get_default_dtype())


def _inplace(x, fn, api):
    """Applies fn to x and writes the result back into x (Paddle's `op_` forms);
    fn reads x through inplace_source (Note [in-place composites])."""
    _tensor(x, api)
    out = fn(inplace_source(x))
    if out.dtype != x.dtype:
        raise TypeError(f"[{api}] the result has dtype {out.dtype.name} and cannot be written in place into a "
                        f"{x.dtype.name} tensor")
    if list(out.shape) != list(x.shape):
        raise ValueError(f"[{api}] the result has shape {list(out.shape)} and cannot be written in place into a "
                         f"tensor of shape {list(x.shape)}")
    x.copy_(out)
    return x


def _from_numpy(arr, like):
    """A NumPy result as a tensor on `like`'s device."""
    out = _C.from_numpy(np.ascontiguousarray(arr))
    kind, index = _C._device_index(like)
    return out if kind == 0 else _C._to_device(out, kind, index)


def _int_scalar(v, api, what):
    if isinstance(v, Tensor):
        if v.size != 1 or v.dtype not in _INTS:
            raise TypeError(f"[{api}] {what} must be an int, got a {v.dtype.name} Tensor of shape {list(v.shape)}")
        return int(v.item())
    if isinstance(v, builtins.bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"[{api}] {what} must be an int, got {type(v).__name__}")
    return int(v)


def _number(v, api, what):
    if isinstance(v, Tensor):
        if v.size != 1:
            raise TypeError(f"[{api}] {what} must be a number, got a Tensor of shape {list(v.shape)}")
        return v.item()
    if isinstance(v, builtins.bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"[{api}] {what} must be a number, got {type(v).__name__}")
    return float(v) if isinstance(v, (float, np.floating)) else int(v)


def _norm_axis(axis, ndim, api):
    if axis < -builtins.max(ndim, 1) or axis >= builtins.max(ndim, 1):
        raise IndexError(f"[{api}] axis {axis} is out of range for a {ndim}-D tensor")
    return axis % builtins.max(ndim, 1)


def _dtype_name(d, api):
    """The name of dtype d (a dtype, its name, a NumPy dtype or a Python type)."""
    from .framework import _dtype
    try:
        return _dtype(d.replace("paddle.", "") if isinstance(d, str) else d).name
    except (TypeError, ValueError, AttributeError):
        raise TypeError(f"[{api}] expected a dtype or its name, got {d!r}") from None


def _common(x, y, api):
    _tensor(x, api)
    _tensor(y, api, "y")
    if x.dtype != y.dtype:
        d = _C.promote_types(x.dtype, y.dtype)
        x, y = _C.cast(x, d), _C.cast(y, d)
    return x, y


def _check_rank(x, n, api, what):
    if x.ndim != n:
        raise ValueError(f"[{api}] {what} must be {n}-D, got shape {list(x.shape)}")


def _back(v, dtype):
    return v if v.dtype == dtype else _C.cast(v, dtype)


def _f64(v):
    return _C.full([], v, _DT.float64)
