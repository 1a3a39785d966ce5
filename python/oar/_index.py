"""Indexing, gathering, scattering, sorting and searching.

The functions (gather, scatter, put_along_axis, sort, topk, unique, ...) are
declared in src/ops/index.toml and bound in C++ (python/bind/index.cpp): oar
exports them with the other declared ops (_ops_gen) and they are Tensor
methods already. They are importable from here too, for the modules that
build on them. Tensor.__getitem__ and Tensor.__setitem__ are in
python/bind/getitem.cpp.
"""
import numpy as np

from . import _C
from ._C import (  # noqa: F401
    argsort, gather, gather_nd, index_add, index_select, masked_fill, masked_select, nonzero, put_along_axis,
    put_along_axis_, scatter, scatter_nd_add, searchsorted, sort, take_along_axis, topk, unique,
)
from .creation import _from_host

Tensor = _C.Tensor

__all__ = []  # oar exports the functions from _ops_gen


def _as_tensor(v, dtype=None):
    """v as a tensor (of dtype when given): a Tensor is cast, anything else read by NumPy
    (float64 read as float32 when no dtype is given)."""
    if isinstance(v, Tensor):
        return v if dtype is None or v.dtype == dtype else _C.cast(v, dtype)
    arr = np.asarray(v)
    if dtype is None and arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    t = _from_host(arr)
    return t if dtype is None else _C.cast(t, dtype)
