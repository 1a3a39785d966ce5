"""Indexing, gathering, scattering, sorting and searching, with Paddle signatures.

Index tensors must be int32 or int64. Negative indices count from the end of
their axis; an index outside [-n, n) raises IndexError. (Tensor.__getitem__
and Tensor.__setitem__ are in python/bind/getitem.cpp.)
"""
import builtins

import numpy as np

from . import _C

Tensor = _C.Tensor

__all__ = [
    "gather", "gather_nd", "scatter", "scatter_nd_add", "index_select", "index_add", "take_along_axis",
    "put_along_axis", "put_along_axis_", "masked_fill", "masked_select", "nonzero", "sort", "argsort", "topk",
    "unique", "searchsorted",
]


def _int_arg(v, api, what):
    if isinstance(v, Tensor):
        if v.size != 1:
            raise ValueError(f"[{api}] {what} must be an int or a one-element tensor, got shape {v.shape}")
        v = v.item()
    if isinstance(v, (builtins.bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"[{api}] {what} must be an int, got {type(v).__name__}")
    return int(v)


def _as_tensor(v, dtype=None):
    if isinstance(v, Tensor):
        return v if dtype is None or v.dtype == dtype else _C.cast(v, dtype)
    arr = np.asarray(v)
    if dtype is None and arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    t = _C.clone(_C.from_numpy(arr))
    return t if dtype is None else _C.cast(t, dtype)


def _index_arg(v, api, what="index"):
    if isinstance(v, Tensor):
        return v
    arr = np.asarray(v)
    if arr.dtype.kind not in "iu" and not (arr.size == 0 and arr.dtype == np.float64):
        raise TypeError(f"[{api}] {what} must be an int32 or int64 tensor, got {arr.dtype}")
    return _C.clone(_C.from_numpy(arr.astype(np.int64)))


def gather(x, index, axis=None, name=None):
    """Selects the entries `index` of `x` along `axis` (default 0).

    A 1-D index keeps the axis (with len(index) entries), a 0-D index removes it.

    >>> import oar
    >>> x = oar.to_tensor([[1, 2], [3, 4], [5, 6]])
    >>> oar.gather(x, oar.to_tensor([2, 0])).numpy().tolist()
    [[5, 6], [1, 2]]
    >>> oar.gather(x, oar.to_tensor([1]), axis=1).numpy().tolist()
    [[2], [4], [6]]
    """
    ax = 0 if axis is None else _int_arg(axis, "oar.gather", "axis")
    return _C._gather(x, _index_arg(index, "oar.gather"), ax)


def gather_nd(x, index, name=None):
    """Gathers slices of `x` addressed by the last dim of `index`.

    The result has shape index.shape[:-1] + x.shape[index.shape[-1]:].

    >>> import oar
    >>> x = oar.to_tensor([[1, 2], [3, 4]])
    >>> oar.gather_nd(x, oar.to_tensor([[1, 0], [0, 1]])).numpy().tolist()
    [3, 2]
    >>> oar.gather_nd(x, oar.to_tensor([[1]])).numpy().tolist()
    [[3, 4]]
    """
    return _C._gather_nd(x, _index_arg(index, "oar.gather_nd"))


def scatter(x, index, updates, overwrite=True, name=None):
    """Writes the rows of `updates` into the rows `index` of a copy of `x` (axis 0).

    With overwrite=True a repeated index keeps the last update; with
    overwrite=False the indexed rows are zeroed and then every update is added.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> u = oar.to_tensor([[9.0, 9.0], [7.0, 7.0]])
    >>> oar.scatter(x, oar.to_tensor([1, 1]), u).numpy().tolist()
    [[1.0, 1.0], [7.0, 7.0], [3.0, 3.0]]
    >>> oar.scatter(x, oar.to_tensor([1, 1]), u, overwrite=False).numpy().tolist()
    [[1.0, 1.0], [16.0, 16.0], [3.0, 3.0]]
    """
    return _C._scatter(x, _index_arg(index, "oar.scatter"), _as_tensor(updates, x.dtype), builtins.bool(overwrite))


def scatter_nd_add(x, index, updates, name=None):
    """Adds `updates` into a copy of `x` at the slices addressed by `index` (repeats accumulate).

    >>> import oar
    >>> x = oar.zeros([3])
    >>> oar.scatter_nd_add(x, oar.to_tensor([[1], [1], [2]]), oar.to_tensor([1.0, 2.0, 5.0])).numpy().tolist()
    [0.0, 3.0, 5.0]
    """
    return _C._scatter_nd_add(x, _index_arg(index, "oar.scatter_nd_add"), _as_tensor(updates, x.dtype))


def index_select(x, index, axis=0, name=None):
    """Selects the entries `index` (1-D) of `x` along `axis`.

    >>> import oar
    >>> x = oar.to_tensor([[1, 2, 3], [4, 5, 6]])
    >>> oar.index_select(x, oar.to_tensor([2, 0]), axis=1).numpy().tolist()
    [[3, 1], [6, 4]]
    """
    return _C._index_select(x, _index_arg(index, "oar.index_select"), _int_arg(axis, "oar.index_select", "axis"))


def index_add(x, index, axis, value, name=None):
    """Adds the slices of `value` to a copy of `x` at positions `index` along `axis`.

    >>> import oar
    >>> x = oar.ones([3, 2])
    >>> v = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> oar.index_add(x, oar.to_tensor([0, 0]), 0, v).numpy().tolist()
    [[5.0, 7.0], [1.0, 1.0], [1.0, 1.0]]
    """
    return _C._index_add(x, _index_arg(index, "oar.index_add"), _int_arg(axis, "oar.index_add", "axis"),
                         _as_tensor(value, x.dtype))


def take_along_axis(arr, indices, axis, broadcast=True):
    """out[..., j, ...] = arr[..., indices[..., j, ...], ...] along `axis` (NumPy's take_along_axis).

    >>> import oar
    >>> x = oar.to_tensor([[10, 30, 20], [60, 40, 50]])
    >>> oar.take_along_axis(x, oar.to_tensor([[0], [2]]), axis=1).numpy().tolist()
    [[10], [50]]
    """
    return _C._take_along_axis(arr, _index_arg(indices, "oar.take_along_axis", "indices"),
                               _int_arg(axis, "oar.take_along_axis", "axis"), builtins.bool(broadcast))


def put_along_axis(arr, indices, values, axis, reduce="assign", include_self=True, broadcast=True):
    """A copy of `arr` with `values` put at `indices` along `axis`, combined by `reduce`.

    reduce is 'assign' (the last of repeated indices wins), 'add', 'mul' (or
    'multiply'), 'mean', 'amin' or 'amax'. With include_self=False arr's own
    value at a written position takes no part in the reduction (positions not
    written keep arr's value); 'mean' divides by the number of values reduced,
    counting arr's value when include_self=True (integer means truncate toward
    zero). With broadcast=True indices and values broadcast against arr except
    along axis; with broadcast=False indices may be smaller than arr in the
    other dims and values larger than indices, and only that corner is used.

    >>> import oar
    >>> x = oar.zeros([2, 3])
    >>> oar.put_along_axis(x, oar.to_tensor([[1], [2]]), 5.0, axis=1).numpy().tolist()
    [[0.0, 5.0, 0.0], [0.0, 0.0, 5.0]]
    >>> x = oar.to_tensor([[1.0, 2.0, 3.0]])
    >>> idx = oar.to_tensor([[0, 0, 2]])
    >>> oar.put_along_axis(x, idx, oar.to_tensor([[4.0, 6.0, 7.0]]), 1, reduce="mean").numpy().tolist()
    [[3.6666667461395264, 2.0, 5.0]]
    >>> oar.put_along_axis(x, idx, oar.to_tensor([[4.0, 6.0, 7.0]]), 1, "amax", include_self=False).numpy().tolist()
    [[6.0, 2.0, 7.0]]
    """
    return _C._put_along_axis(arr, _index_arg(indices, "oar.put_along_axis", "indices"),
                              _as_tensor(values, arr.dtype), _int_arg(axis, "oar.put_along_axis", "axis"),
                              str(reduce), builtins.bool(include_self), builtins.bool(broadcast))


def put_along_axis_(arr, indices, values, axis, reduce="assign", include_self=True, broadcast=True):
    """In-place form of put_along_axis: writes into `arr` and returns it.

    >>> import oar
    >>> x = oar.ones([1, 3])
    >>> _ = oar.put_along_axis_(x, oar.to_tensor([[2, 2]]), 3.0, 1, reduce="mul")
    >>> x.numpy().tolist()
    [[1.0, 1.0, 9.0]]
    """
    _C._put_along_axis_(arr, _index_arg(indices, "oar.put_along_axis", "indices"),
                        _as_tensor(values, arr.dtype), _int_arg(axis, "oar.put_along_axis", "axis"),
                        str(reduce), builtins.bool(include_self), builtins.bool(broadcast))
    return arr


def masked_fill(x, mask, value, name=None):
    """A copy of `x` with `value` where the bool `mask` (broadcast to x) is True.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0, 3.0])
    >>> oar.masked_fill(x, oar.to_tensor([True, False, True]), -1.0).numpy().tolist()
    [-1.0, 2.0, -1.0]
    """
    return _C._masked_fill(x, mask, _as_tensor(value, x.dtype))


def masked_select(x, mask, name=None):
    """The 1-D tensor of the entries of `x` where the bool `mask` (broadcast with x) is True.

    >>> import oar
    >>> x = oar.to_tensor([[1, 2], [3, 4]])
    >>> oar.masked_select(x, x > 1).numpy().tolist()
    [2, 3, 4]
    """
    return _C._masked_select(x, mask)


def nonzero(x, as_tuple=False):
    """Coordinates of the non-zero entries of `x`: an int64 tensor [count, x.ndim],
    or with as_tuple=True a tuple of x.ndim tensors of shape [count, 1].

    >>> import oar
    >>> x = oar.to_tensor([[0, 1], [2, 0]])
    >>> oar.nonzero(x).numpy().tolist()
    [[0, 1], [1, 0]]
    """
    out = _C._nonzero(x)
    if not as_tuple:
        return out
    return tuple(_C.strided_slice(out, [1], [i], [i + 1], [1]) for i in range(out.shape[1]))


def sort(x, axis=-1, descending=False, stable=False, name=None):
    """The values of `x` sorted along `axis` (NaN last when ascending).

    >>> import oar
    >>> oar.sort(oar.to_tensor([3, 1, 2]), descending=True).numpy().tolist()
    [3, 2, 1]
    """
    return _C._sort(x, _int_arg(axis, "oar.sort", "axis"), builtins.bool(descending), builtins.bool(stable))


def argsort(x, axis=-1, descending=False, stable=False, name=None):
    """The int64 indices that sort `x` along `axis`. Equal values keep their order.

    >>> import oar
    >>> oar.argsort(oar.to_tensor([3.0, 1.0, 2.0])).numpy().tolist()
    [1, 2, 0]
    """
    return _C._argsort(x, _int_arg(axis, "oar.argsort", "axis"), builtins.bool(descending), builtins.bool(stable))


def topk(x, k, axis=None, largest=True, sorted=True, name=None):
    """The k largest (or smallest) entries along `axis` (default -1): (values, int64 indices).

    Among equal values the lower index comes first.

    >>> import oar
    >>> v, i = oar.topk(oar.to_tensor([1.0, 4.0, 3.0, 2.0]), 2)
    >>> v.numpy().tolist(), i.numpy().tolist()
    ([4.0, 3.0], [1, 2])
    """
    ax = -1 if axis is None else _int_arg(axis, "oar.topk", "axis")
    v, i = _C._topk(x, _int_arg(k, "oar.topk", "k"), ax, builtins.bool(largest), builtins.bool(sorted))
    return v, i


def unique(x, return_index=False, return_inverse=False, return_counts=False, axis=None, dtype="int64", name=None):
    """The sorted unique values of `x` (flattened, or unique slices along `axis`).

    Optionally also the first index of each, the inverse map and the counts,
    as in numpy.unique.

    >>> import oar
    >>> out, counts = oar.unique(oar.to_tensor([3, 1, 3, 2]), return_counts=True)
    >>> out.numpy().tolist(), counts.numpy().tolist()
    ([1, 2, 3], [1, 1, 2])
    """
    ax = None if axis is None else _int_arg(axis, "oar.unique", "axis")
    out, index, inverse, counts = _C._unique(x, ax, dtype)
    res = [out]
    if return_index:
        res.append(index)
    if return_inverse:
        res.append(inverse)
    if return_counts:
        res.append(counts)
    return res[0] if len(res) == 1 else tuple(res)


def searchsorted(sorted_sequence, values, out_int32=False, right=False, name=None):
    """Insertion positions of `values` in the last dim of `sorted_sequence` that keep it sorted.

    >>> import oar
    >>> s = oar.to_tensor([1, 3, 5, 7])
    >>> oar.searchsorted(s, oar.to_tensor([3, 6])).numpy().tolist()
    [1, 3]
    >>> oar.searchsorted(s, oar.to_tensor([3, 6]), right=True).numpy().tolist()
    [2, 3]
    """
    return _C._searchsorted(sorted_sequence, _as_tensor(values), builtins.bool(right), builtins.bool(out_int32))


__tensor_methods__ = ("gather", "gather_nd", "scatter", "scatter_nd_add", "index_select", "index_add", "take_along_axis",
                      "put_along_axis", "put_along_axis_", "masked_fill", "masked_select", "nonzero", "sort", "argsort",
                      "topk", "unique")
