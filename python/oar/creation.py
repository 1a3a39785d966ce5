"""Tensor creation from Python data (to_tensor) and a few composite functions with Paddle signatures.

full, zeros, arange, eye and the other creation functions are declared in
src/ops/creation.toml (Note [function declarations], tools/gen_ops.py)."""
import builtins

import numpy as np

from . import _C
from ._C import (  # noqa: F401  declared in src/ops/creation.toml; modules import them from here too
    arange, empty, empty_like, eye, full, full_like, linspace, ones, ones_like, zeros, zeros_like,
)
from .framework import _dtype

_NP_OF = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "float16": np.float16, "float32": np.float32, "float64": np.float64,
    "complex64": np.complex64, "complex128": np.complex128,
}


def _shape_list(shape, api):
    if isinstance(shape, _C.Tensor):
        return [int(v) for v in shape.numpy().reshape(-1)]
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    if isinstance(shape, (list, tuple)):
        out = []
        for s in shape:
            if isinstance(s, _C.Tensor):
                s = s.item()
            if not isinstance(s, (int, np.integer)) or isinstance(s, builtins.bool):
                raise TypeError(f"[{api}] shape entries must be ints, got {type(s).__name__}")
            if s < 0:
                raise ValueError(f"[{api}] shape dims must be non-negative, got {list(shape)}")
            out.append(int(s))
        return out
    raise TypeError(f"[{api}] shape must be a list, tuple or Tensor of ints, got {type(shape).__name__}")


def _from_host(arr):
    """A tensor holding a copy of NumPy array `arr`, made where new tensors go: the device
    oar.set_device chose, or that of the arguments of the API being run (Note [device scope])."""
    t = _C.from_numpy(arr)
    kind, index = _C._default_device()
    return _C.clone(t) if kind == 0 else _C._to_device(t, kind, index)


def to_tensor(data, dtype=None, place=None, stop_gradient=True):
    """Creates a Tensor from a scalar, a (nested) list, a NumPy array or a Tensor (copied).

    Python floats get the default dtype (float32); NumPy arrays keep theirs.

    >>> import oar
    >>> oar.to_tensor([1, 2, 3]).dtype == oar.int64
    True
    >>> oar.to_tensor([1.0, 2.0]).dtype == oar.float32
    True
    """
    dt = _dtype(dtype)
    if isinstance(data, _C.Tensor):
        t = _C.clone(data.detach())
    else:
        if isinstance(data, (np.ndarray, np.generic)):
            arr = np.asarray(data)
        else:
            try:
                arr = np.array(data)
            except ValueError as e:
                raise ValueError(f"[oar.to_tensor] data must be a rectangular nested list of numbers: {e}") from e
            if arr.dtype == np.float64 and dt is None:
                arr = arr.astype(_NP_OF[str(_C.get_default_dtype()).split(".")[-1]]
                                 if _C.get_default_dtype() != _C.dtype.bfloat16 else np.float32)
            elif arr.dtype == np.complex128 and dt is None and _C.get_default_dtype() != _C.dtype.float64:
                arr = arr.astype(np.complex64)
        if arr.dtype == object or arr.dtype.kind in "USV":
            raise TypeError(f"[oar.to_tensor] data must be numeric, got an array of dtype {arr.dtype}")
        if not arr.dtype.isnative:  # big-endian data, e.g. from a file
            arr = arr.astype(arr.dtype.newbyteorder("="))
        if arr.dtype.kind == "u" and arr.dtype != np.uint8:
            arr = arr.astype(np.int64)
        if dt is None and str(_C.get_default_dtype()) == "paddle.bfloat16" and arr.dtype == np.float32 \
                and not isinstance(data, (np.ndarray, np.generic)):
            dt = _C.dtype.bfloat16
        t = _C.clone(_C.from_numpy(arr))
    if dt is not None and t.dtype != dt:
        t = _C.cast(t, dt)
    if place is not None:
        from .device import _parse
        kind, index = _parse(place, "oar.to_tensor")
    else:
        kind, index = _C._default_device()  # oar.set_device's choice
    if tuple(_C._device_index(t)) != (kind, index):
        t = _C._to_device(t, kind, index)
    t.stop_gradient = stop_gradient
    return t


def broadcast_to(x, shape, name=None):
    """Broadcasts x to shape (a view).

    >>> import oar
    >>> oar.broadcast_to(oar.ones([3]), [2, 3]).shape
    [2, 3]
    """
    return _C.expand(x, _shape_list(shape, "oar.broadcast_to"))


def slice(input, axes, starts, ends):  # noqa: A001 - Paddle's name
    """Slices input along axes from starts to ends (step 1).

    >>> import oar
    >>> oar.slice(oar.arange(6).reshape([2, 3]), [1], [1], [3]).numpy().tolist()
    [[1, 2], [4, 5]]
    """
    starts = _shape_list(starts, "oar.slice")
    ends = _shape_list(ends, "oar.slice")
    return _C.strided_slice(input, list(axes), starts, ends, [1] * len(axes))


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    """scale * x + bias (or scale * (x + bias)).

    >>> import oar
    >>> oar.scale(oar.to_tensor([1.0, 2.0]), 2.0, 1.0).numpy().tolist()
    [3.0, 5.0]
    """
    if isinstance(scale, _C.Tensor):
        scale = scale.item()
    out = x * scale + bias if bias_after_scale else (x + bias) * scale
    return out.astype(x.dtype) if out.dtype != x.dtype else out


def add_n(inputs, name=None):
    """Sum of a list of tensors.

    >>> import oar
    >>> oar.add_n([oar.ones([2]), oar.ones([2])]).numpy().tolist()
    [2.0, 2.0]
    """
    if isinstance(inputs, _C.Tensor):
        return inputs
    if not inputs:
        raise ValueError("[oar.add_n] expects at least one tensor")
    out = inputs[0]
    for t in inputs[1:]:
        out = out + t
    return out


def numel(x, name=None):
    """Number of elements as an int64 0-D tensor.

    >>> import oar
    >>> int(oar.numel(oar.ones([2, 3])))
    6
    """
    return _C.full([], x.size, _C.dtype.int64)


def shape(input):
    """The shape as an int64 tensor.

    >>> import oar
    >>> oar.shape(oar.ones([2, 3])).numpy().tolist()
    [2, 3]
    """
    return to_tensor(np.array(input.shape, dtype=np.int64))


def rank(input):
    """The number of dims as an int32 0-D tensor.

    >>> import oar
    >>> int(oar.rank(oar.ones([2, 3, 4])))
    3
    """
    return _C.full([], input.ndim, _C.dtype.int32)
