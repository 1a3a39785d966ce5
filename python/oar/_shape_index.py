"""Diagonals, scatters, takes, in-place forms and Tensor-only methods of the paddle namespace,
written over the core ops (the rest of the shape functions are in _shape_ext, which exports these).

Everything here is a composite of existing ops, so gradients come from the
ops' own rules. Positions that follow from shapes alone (a diagonal, a window)
are worked out once in NumPy and applied by one gather, so the result stays
differentiable with respect to every tensor whose values it copies. Positions
that follow from the values of an index or mask tensor are computed with ops
(take, index_fill, masked_scatter, shard_index), so a traced program stays
right for other index values; index_put still reads its indices in NumPy.

In-place forms (`name_`) write through ``Tensor.copy_``, which autograd
records; those that change the shape or dtype give the tensor new metadata
over the same storage (see `_restride`). Note [in-place shape change] says
what that cannot do.
"""
import builtins

import numpy as np

from . import _C
from ._inplace import inplace_source
from ._index import _as_tensor, put_along_axis, scatter, scatter_nd_add, take_along_axis, \
    masked_fill, index_add
from ._manip import _int, _ints, concat, stack, tile, tril, triu
from .creation import _from_host, _shape_list, add_n, scale, to_tensor
from .framework import _dtype

Tensor = _C.Tensor

__all__ = [
    "diag_embed", "diagonal_scatter", "select_scatter", "index_fill", "index_put", "index_sample",
    "masked_scatter", "scatter_add", "scatter_nd", "scatter_reduce", "take", "take_along_dim", "shard_index",
    "unique_consecutive",
    "cast_", "flatten_", "reshape_", "squeeze_", "unsqueeze_", "transpose_", "t_", "tril_", "triu_", "where_",
    "index_add_", "index_fill_", "index_put_", "masked_fill_", "masked_scatter_", "scatter_", "scatter_add_",
]


# ---------------------------------------------------------------- helpers

def _tensor(x, api, what="x"):
    if not isinstance(x, Tensor):
        raise TypeError(f"[{api}] {what} must be a Tensor, got {type(x).__name__}")
    return x


def _axis(axis, ndim, api, what="axis"):
    a = _int(axis, api, what)
    n = builtins.max(ndim, 1)
    if not -n <= a < n:
        raise IndexError(f"[{api}] {what} {a} is out of range for a {ndim}-D tensor (expected [{-n}, {n}))")
    return a % n


def _slice(x, axis, start, stop):
    return _C.strided_slice(x, [axis], [start], [stop], [1])


def _gather_flat(x, index_array):
    """x's elements at the flat positions index_array (NumPy ints), shaped like index_array."""
    flat = _C.reshape(x, [-1])
    idx = _from_host(np.ascontiguousarray(index_array, dtype=np.int64).reshape(-1))
    return _C.reshape(_C._gather(flat, idx, 0), list(index_array.shape))


def _merge(x, values, source):
    """x with the positions where `source` >= 0 taken from values.flatten()[source].

    One gather over the concatenation of both, so the result is differentiable
    with respect to x and values alike.
    """
    v = values if values.dtype == x.dtype else _C.cast(values, x.dtype)
    flat = _C._concat([_C.reshape(v, [-1]), _C.reshape(x, [-1])], 0)
    own = np.arange(x.size, dtype=np.int64).reshape(source.shape) + v.size
    return _gather_flat(flat, np.where(source >= 0, source, own))


def _check_inplace(x, api):
    _tensor(x, api)
    if x.is_leaf and not x.stop_gradient and _C.is_grad_enabled():
        raise ValueError(f"[{api}] a leaf Tensor that requires grad (stop_gradient=False) cannot be modified in "
                         f"place; use the out-of-place op or wrap it in oar.no_grad()")


def _source(x, api):
    """What an in-place op should compute from: x itself, or, when autograd records x, a
    copy, so that ops saving their input for backward do not see it overwritten."""
    _check_inplace(x, api)
    return inplace_source(x)


def _write(x, value, api):
    """Writes value (x's shape) into x in place, recorded by autograd; returns x."""
    _check_inplace(x, api)
    if list(value.shape) != list(x.shape):
        raise ValueError(f"[{api}] the result has shape {value.shape} but the tensor written in place has "
                         f"shape {x.shape}")
    if value.stop_gradient and not x.stop_gradient and _C.is_grad_enabled():
        # copy_ from a tensor outside autograd keeps x's old gradient path;
        # selecting the new values over x's copy gives x the (zero) gradient
        # of constants instead.
        value = _C.where(_C.full_like(x, True, _C.dtype.bool), value, _source(x, api))
    x.copy_(value if value.dtype == x.dtype else _C.cast(value, x.dtype))
    return x


# Note [in-place shape change]
# reshape_, squeeze_, cast_ and the like give the tensor object the shape,
# strides and dtype of the out-of-place result (a view of the same storage
# where the op makes one) through _C._set_data_. The autograd graph cannot be
# rewired from Python, so a tensor that already has a grad_fn refuses; leaves
# and tensors outside autograd work, as do all tensors under oar.no_grad() that
# have no grad_fn. Graph tracing does not see the change either, so it is
# refused inside a trace. A C++ op that swaps a tensor's metadata together with
# its grad_fn (and that the tracer records) would lift both limits.

def _restride(x, out, api):
    _check_inplace(x, api)
    if _C._ir_is_tracing():
        raise NotImplementedError(f"[{api}] a graph being traced (oar.jit.to_static) cannot change a tensor's shape "
                                  f"or dtype in place; use the out-of-place {api.rsplit('.', 1)[-1][:-1]}")
    if x.grad_fn is not None:
        raise NotImplementedError(f"[{api}] cannot change in place the shape or dtype of a tensor recorded by "
                                  f"autograd (it has a grad_fn); use the out-of-place {api.rsplit('.', 1)[-1][:-1]}")
    _C._set_data_(x, out)
    return x


def _assign_out(out, res, api):
    """Puts res into the `out=` tensor, as Paddle's out arguments do, and returns out."""
    if out is None:
        return res
    _tensor(out, api, "out")
    if list(out.shape) == list(res.shape):
        return _write(out, res, api)
    return _restride(out, res, api)


def _np_int_array(v, api, what):
    if isinstance(v, Tensor):
        if v.dtype not in (_C.dtype.int32, _C.dtype.int64):
            raise TypeError(f"[{api}] {what} must be an int32 or int64 Tensor, got {str(v.dtype).split('.')[-1]}")
        return v.numpy().astype(np.int64)
    arr = np.asarray(v)
    if arr.dtype.kind not in "iu" and arr.size:
        raise TypeError(f"[{api}] {what} must hold integers, got {arr.dtype}")
    return arr.astype(np.int64)


def _broadcast(shapes, api):
    out = []
    for s in shapes:
        s = _shape_list(s, api) if not isinstance(s, Tensor) else list(s.shape)
        n = builtins.max(len(out), len(s))
        a = [1] * (n - len(out)) + out
        b = [1] * (n - len(s)) + s
        res = []
        for da, db in zip(a, b):
            if da != db and da != 1 and db != 1:
                raise ValueError(f"[{api}] shapes {a} and {b} cannot be broadcast together (dims {da} and {db})")
            res.append(db if da == 1 else da)
        out = res
    return out


# ---------------------------------------------------------------- diagonals and scatters

def _diag_positions(shape, offset, a1, a2):
    """For each element of a tensor of `shape`: its index in diagonal(offset, a1, a2).flatten(), or -1."""
    nd = len(shape)
    grids = np.indices(shape, dtype=np.int64) if builtins.all(shape) else np.zeros((nd,) + tuple(shape), np.int64)
    i, j = grids[a1], grids[a2]
    on = (j - i) == offset
    n1, n2 = shape[a1], shape[a2]
    dlen = builtins.max(0, builtins.min(n1, n2 - offset) if offset >= 0 else builtins.min(n1 + offset, n2))
    rest = [d for d in builtins.range(nd) if d not in (a1, a2)]
    k = i if offset >= 0 else j  # position along the diagonal
    pos = k.copy()
    mult = dlen
    for d in reversed(rest):
        pos = pos + grids[d] * mult
        mult *= shape[d]
    return np.where(on, pos, -1), [shape[d] for d in rest] + [dlen]


def diagonal_scatter(x, y, offset=0, axis1=0, axis2=1, name=None):
    """A copy of x whose `offset` diagonal of the (axis1, axis2) planes holds y (shaped like
    ``oar.diagonal(x, offset, axis1, axis2)``). Differentiable in x and y.

    >>> import oar
    >>> oar.diagonal_scatter(oar.zeros([2, 3]), oar.ones([2]), 1).numpy().tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    return _diag_scatter(x, y, offset, axis1, axis2, "oar.diagonal_scatter")


def _diag_scatter(x, y, offset, axis1, axis2, api):
    _tensor(x, api)
    _tensor(y, api, "y")
    if x.ndim < 2:
        raise ValueError(f"[{api}] x must have at least 2 dims, got shape {x.shape}")
    a1 = _axis(axis1, x.ndim, api, "axis1")
    a2 = _axis(axis2, x.ndim, api, "axis2")
    if a1 == a2:
        raise ValueError(f"[{api}] axis1 and axis2 must differ, got {axis1} and {axis2}")
    pos, dshape = _diag_positions(list(x.shape), _int(offset, api, "offset"), a1, a2)
    if list(y.shape) != dshape:
        raise ValueError(f"[{api}] y must have the diagonal's shape {dshape}, got {y.shape}")
    return _merge(x, y, pos)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002
    """Matrices with the last dim of input on their `offset` diagonal, in the (dim1, dim2)
    planes of a result with one more dim; zeros elsewhere.

    >>> import oar
    >>> oar.diag_embed(oar.to_tensor([1, 2])).numpy().tolist()
    [[1, 0], [0, 2]]
    """
    api = "oar.diag_embed"
    x = input if isinstance(input, Tensor) else to_tensor(input)
    if x.ndim < 1:
        raise ValueError(f"[{api}] input must have at least one dim, got a 0-D tensor")
    nd = x.ndim + 1
    d1 = _axis(dim1, nd, api, "dim1")
    d2 = _axis(dim2, nd, api, "dim2")
    if d1 == d2:
        raise ValueError(f"[{api}] dim1 and dim2 must differ, got {dim1} and {dim2}")
    off = _int(offset, api, "offset")
    n = x.shape[-1]
    m = n + builtins.abs(off)
    zeros = _C.full_like(_slice(x, x.ndim - 1, 0, 1), 0, None)
    padded = _C._concat([x, zeros], x.ndim - 1)  # entry n is the zero
    i, j = np.indices((m, m), dtype=np.int64) if m else (np.zeros((0, 0), np.int64),) * 2
    k = i if off >= 0 else j
    idx = np.where(j - i == off, k, n)
    g = _C._index_select(padded, _from_host(idx.reshape(-1)), x.ndim - 1)
    g = _C.reshape(g, list(x.shape[:-1]) + [m, m])
    batch = iter(builtins.range(nd - 2))
    perm = [nd - 2 if p == d1 else nd - 1 if p == d2 else next(batch) for p in builtins.range(nd)]
    return _C.transpose(g, perm)


def select_scatter(x, values, axis, index, name=None):
    """A copy of x whose slice `index` along `axis` holds values (shaped like that slice).

    >>> import oar
    >>> oar.select_scatter(oar.zeros([2, 3]), oar.ones([2]), 1, 1).numpy().tolist()
    [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]
    """
    api = "oar.select_scatter"
    _tensor(x, api)
    _tensor(values, api, "values")
    if x.ndim == 0:
        raise ValueError(f"[{api}] x must have at least one dim, got a 0-D tensor")
    ax = _axis(axis, x.ndim, api)
    n = x.shape[ax]
    i = _int(index, api, "index")
    if not -n <= i < n:
        raise IndexError(f"[{api}] index {i} is out of range for axis {ax} of size {n}")
    i %= n
    want = list(x.shape[:ax]) + list(x.shape[ax + 1:])
    if list(values.shape) != want:
        raise ValueError(f"[{api}] values must have the shape of the selected slice {want}, got {values.shape}")
    v = values if values.dtype == x.dtype else _C.cast(values, x.dtype)
    return _C.slice_scatter(x, _C.unsqueeze(v, [ax]), [ax], [i], [i + 1], [1])


def _int_index(index, api, what="index"):
    """index as an int32/int64 tensor (lists and arrays of ints are converted)."""
    if not isinstance(index, Tensor):
        return _from_host(_np_int_array(index, api, what))
    if index.dtype not in (_C.dtype.int32, _C.dtype.int64):
        raise TypeError(f"[{api}] {what} must be an int32 or int64 Tensor, got {str(index.dtype).split('.')[-1]}")
    return index


def _check_range(idx, n, api, what):
    """Eager bounds check of an index tensor against [-n, n) (inside a trace the ops check it)."""
    if idx.size and not _C._ir_is_tracing():
        lo, hi = int(_C.min(idx).item()), int(_C.max(idx).item())
        if lo < -n or hi >= n:
            raise IndexError(f"[{api}] {what} values must lie in [{-n}, {n}), got {lo if lo < -n else hi}")


def _index_mask(x, index, axis, api):
    """A bool tensor, x.ndim dims with size 1 except along axis, True at the positions `index`."""
    ax = _axis(axis, x.ndim, api)
    idx = _C.reshape(_int_index(index, api), [-1])
    n = x.shape[ax] if x.ndim else 1
    _check_range(idx, n, api, "index")
    idx = _C.remainder(_C.cast(idx, _C.dtype.int64), n) if n else idx
    hit = _C.eq(_C.unsqueeze(_C.arange(0, n, 1, _C.dtype.int64), [1]), _C.unsqueeze(idx, [0]))
    mask = _C.any(hit, [1]) if idx.size else _C.full([n], False, _C.dtype.bool)
    shape = [1] * x.ndim
    if x.ndim:
        shape[ax] = n
    return _C.reshape(mask, shape)


def index_fill(x, index, axis, value, name=None):
    """A copy of x with the entries `index` along `axis` set to value (a number or 0-D tensor).

    >>> import oar
    >>> x = oar.to_tensor([[1, 2, 3], [4, 5, 6]])
    >>> oar.index_fill(x, oar.to_tensor([0, 2]), 1, -1).numpy().tolist()
    [[-1, 2, -1], [-1, 5, -1]]
    """
    api = "oar.index_fill"
    _tensor(x, api)
    mask = _index_mask(x, index, axis, api)
    v = _as_tensor(value, x.dtype)
    if v.ndim:
        raise ValueError(f"[{api}] value must be a number or a 0-D tensor, got shape {v.shape}")
    return _C.where(mask, v, x)


def index_put(x, indices, value, accumulate=False, name=None):
    """A copy of x with value put at x[indices] (a tuple of int or bool index tensors, as in
    advanced indexing); accumulate=True adds instead, summing repeated positions. Without
    accumulate the last of repeated positions wins. Differentiable in x and value.

    >>> import oar
    >>> x = oar.zeros([3])
    >>> oar.index_put(x, (oar.to_tensor([0, 2]),), oar.to_tensor([5.0, 6.0])).numpy().tolist()
    [5.0, 0.0, 6.0]
    >>> oar.index_put(x, (oar.to_tensor([0, 0]),), oar.to_tensor(1.0), accumulate=True).numpy().tolist()
    [2.0, 0.0, 0.0]
    """
    api = "oar.index_put"
    _tensor(x, api)
    if isinstance(indices, Tensor) or not isinstance(indices, (list, tuple)):
        raise TypeError(f"[{api}] indices must be a tuple or list of Tensors, got {type(indices).__name__}")
    for i, t in enumerate(indices):
        _tensor(t, api, f"indices[{i}]")
    pos = _C._index_positions(x, tuple(indices), api)  # x[indices]'s linear positions in x
    target = list(pos.shape)
    v = _as_tensor(value, x.dtype)
    try:
        v = _C.expand(v, target) if list(v.shape) != target else v
    except ValueError:
        raise ValueError(f"[{api}] value of shape {v.shape} cannot be broadcast to the indexed shape "
                         f"{target}") from None
    if accumulate:
        flat_x = _C.reshape(x, [x.size])
        out = _C._scatter_nd_add(flat_x, _C.reshape(pos, [pos.size, 1]), _C.reshape(v, [pos.size]))
        return _C.reshape(out, list(x.shape))
    flat = pos.numpy().reshape(-1)
    source = np.full(x.size, -1, dtype=np.int64)
    source[flat] = np.arange(flat.size, dtype=np.int64)  # the last write wins
    return _merge(x, v, source.reshape(x.shape))


def index_sample(x, index):
    """out[i, j] = x[i, index[i, j]] for 2-D x [N, D] and 2-D int index [N, K].

    >>> import oar
    >>> x = oar.to_tensor([[1, 2, 3], [4, 5, 6]])
    >>> oar.index_sample(x, oar.to_tensor([[2, 0], [1, 1]])).numpy().tolist()
    [[3, 1], [5, 5]]
    """
    api = "oar.index_sample"
    _tensor(x, api)
    _tensor(index, api, "index")
    if x.ndim != 2 or index.ndim != 2:
        raise ValueError(f"[{api}] x and index must be 2-D, got shapes {x.shape} and {index.shape}")
    if index.shape[0] != x.shape[0]:
        raise ValueError(f"[{api}] index must have x's {x.shape[0]} rows, got {index.shape[0]}")
    return take_along_axis(x, index, 1, broadcast=False)


def masked_scatter(x, mask, value, name=None):
    """A copy of x whose entries where the bool mask (broadcast with x) is True take the first
    elements of value in row-major order. Differentiable in x and value.

    >>> import oar
    >>> x = oar.zeros([2, 2])
    >>> m = oar.to_tensor([[True, False], [True, True]])
    >>> oar.masked_scatter(x, m, oar.to_tensor([1.0, 2.0, 3.0])).numpy().tolist()
    [[1.0, 0.0], [2.0, 3.0]]
    """
    api = "oar.masked_scatter"
    _tensor(x, api)
    _tensor(mask, api, "mask")
    _tensor(value, api, "value")
    if mask.dtype != _C.dtype.bool:
        raise TypeError(f"[{api}] mask must be a bool Tensor, got {str(mask.dtype).split('.')[-1]}")
    shape = _broadcast([list(x.shape), list(mask.shape)], api)
    if list(x.shape) != shape:
        x = _C.expand(x, shape)
    m = _C.expand(mask, shape) if list(mask.shape) != shape else mask
    # Entry i of the mask (row-major) takes value element (number of Trues before it).
    order = _C.cumsum(_C.cast(_C.reshape(m, [-1]), _C.dtype.int64), None)
    count = int(_C.max(order).item()) if order.size and not _C._ir_is_tracing() else 0
    if count > value.size:
        raise ValueError(f"[{api}] the mask selects {count} entries but value has only {value.size}")
    if value.size == 0:  # then nothing is selected
        return x
    pos = _C.clip(order - 1, 0, value.size - 1)
    v = value if value.dtype == x.dtype else _C.cast(value, x.dtype)
    picked = _C.reshape(_C._gather(_C.reshape(v, [-1]), pos, 0), shape)
    return _C.where(m, picked, x)


def scatter_add(input, dim, index, src):  # noqa: A002
    """A copy of input with src[i][j] added at input[index[i][j]][j] (dim 0; likewise for
    other dims). index may be smaller than src, whose corner it then uses.

    >>> import oar
    >>> out = oar.scatter_add(oar.zeros([3]), 0, oar.to_tensor([0, 0, 2]), oar.to_tensor([1.0, 2.0, 3.0]))
    >>> out.numpy().tolist()
    [3.0, 0.0, 3.0]
    """
    return put_along_axis(input, index, src, dim, "add", True, False)


_REDUCE = {"sum": "add", "prod": "mul", "mean": "mean", "amin": "amin", "amax": "amax"}


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):  # noqa: A002
    """scatter_add with another reduction: 'sum', 'prod', 'mean', 'amin' or 'amax'; with
    include_self=False input's own values at the written positions take no part.

    >>> import oar
    >>> x = oar.ones([3])
    >>> i, s = oar.to_tensor([0, 0, 2]), oar.to_tensor([2.0, 3.0, 4.0])
    >>> oar.scatter_reduce(x, 0, i, s, "prod").numpy().tolist()
    [6.0, 1.0, 4.0]
    >>> oar.scatter_reduce(x, 0, i, s, "mean", include_self=False).numpy().tolist()
    [2.5, 1.0, 4.0]
    """
    if reduce not in _REDUCE:
        raise ValueError(f"[oar.scatter_reduce] reduce must be one of {sorted(_REDUCE)}, got {reduce!r}")
    return put_along_axis(input, index, src, dim, _REDUCE[reduce], builtins.bool(include_self), False)


def scatter_nd(index, updates, shape, name=None):
    """A zero tensor of `shape` with the slices `updates` added at the positions of index's
    last dim (repeats accumulate).

    >>> import oar
    >>> oar.scatter_nd(oar.to_tensor([[1], [1], [3]]), oar.to_tensor([1.0, 2.0, 3.0]), [4]).numpy().tolist()
    [0.0, 3.0, 0.0, 3.0]
    """
    api = "oar.scatter_nd"
    _tensor(updates, api, "updates")
    base = _C.full(_shape_list(shape, api), 0, updates.dtype)
    return scatter_nd_add(base, index, updates)


def take(x, index, mode="raise", name=None):
    """The elements of flattened x at `index` (shaped like index). mode 'raise': indices in
    [-n, n), negative ones counting from the end; 'wrap': taken modulo n; 'clip': clamped to
    [0, n - 1].

    >>> import oar
    >>> x = oar.to_tensor([[1, 2], [3, 4]])
    >>> oar.take(x, oar.to_tensor([0, -1])).numpy().tolist()
    [1, 4]
    >>> oar.take(x, oar.to_tensor([5]), mode="wrap").numpy().tolist()
    [2]
    """
    api = "oar.take"
    _tensor(x, api)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"[{api}] mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    idx = _int_index(_tensor(index, api, "index"), api)
    n = x.size
    if idx.size and n == 0:
        raise IndexError(f"[{api}] cannot take from an empty tensor")
    idx = _C.cast(idx, _C.dtype.int64)
    if mode == "raise":
        _check_range(idx, n, api, "index")
        idx = _C.where(_C.lt(idx, 0), idx + n, idx)
    elif mode == "wrap":
        idx = _C.remainder(idx, n) if n else idx
    else:
        idx = _C.clip(idx, 0, builtins.max(n - 1, 0))
    return _C.reshape(_C._gather(_C.reshape(x, [-1]), _C.reshape(idx, [-1]), 0), list(idx.shape))


def take_along_dim(arr, indices, axis, broadcast=True, *, out=None):
    """take_along_axis under its other name; `out` receives the result.

    >>> import oar
    >>> x = oar.to_tensor([[10, 30], [60, 40]])
    >>> oar.take_along_dim(x, oar.to_tensor([[1], [0]]), 1).numpy().tolist()
    [[30], [60]]
    """
    return _assign_out(out, take_along_axis(arr, indices, axis, broadcast), "oar.take_along_dim")


def shard_index(input, index_num, nshards, shard_id, ignore_value=-1):  # noqa: A002
    """Re-numbers indices for shard `shard_id` of `nshards` equal shards of [0, index_num):
    an index in that shard becomes its offset within it, any other becomes ignore_value.
    input is an int tensor [..., 1] with at least 2 dims.

    >>> import oar
    >>> oar.shard_index(oar.to_tensor([[16], [1], [9]]), 20, 2, 0).numpy().tolist()
    [[-1], [1], [9]]
    """
    api = "oar.shard_index"
    _tensor(input, api, "input")
    if input.dtype not in (_C.dtype.int32, _C.dtype.int64):
        raise TypeError(f"[{api}] input must be an int32 or int64 Tensor, got {str(input.dtype).split('.')[-1]}")
    if input.ndim < 2 or input.shape[-1] != 1:
        raise ValueError(f"[{api}] input must have at least 2 dims and a last dim of size 1, got shape {input.shape}")
    index_num = _int(index_num, api, "index_num")
    nshards = _int(nshards, api, "nshards")
    shard_id = _int(shard_id, api, "shard_id")
    if index_num <= 0 or nshards <= 0:
        raise ValueError(f"[{api}] index_num and nshards must be positive, got {index_num} and {nshards}")
    if not 0 <= shard_id < nshards:
        raise ValueError(f"[{api}] shard_id must lie in [0, {nshards}), got {shard_id}")
    size = (index_num + nshards - 1) // nshards
    if input.size and not _C._ir_is_tracing():
        lo, hi = int(_C.min(input).item()), int(_C.max(input).item())
        if lo < 0 or hi >= index_num:
            raise ValueError(f"[{api}] input values must lie in [0, {index_num}), got {lo if lo < 0 else hi}")
    ignore = _int(ignore_value, api, "ignore_value")
    mine = _C.eq(_C.floor_divide(input, size), shard_id)
    return _C.where(mine, input - shard_id * size, _C.full_like(input, ignore, None))


def unique_consecutive(x, return_inverse=False, return_counts=False, axis=None, dtype="int64", name=None):
    """x with each run of equal consecutive values (or slices along `axis`) collapsed to one;
    optionally also the run number of each input entry and the run lengths.

    >>> import oar
    >>> out, counts = oar.unique_consecutive(oar.to_tensor([1, 1, 2, 2, 3, 1]), return_counts=True)
    >>> out.numpy().tolist(), counts.numpy().tolist()
    ([1, 2, 3, 1], [2, 2, 1, 1])
    """
    api = "oar.unique_consecutive"
    _tensor(x, api)
    idt = _dtype(dtype)
    if idt not in (_C.dtype.int32, _C.dtype.int64):
        raise TypeError(f"[{api}] dtype must be int32 or int64, got {dtype}")
    a = x.numpy()
    if axis is None:
        a = a.reshape(-1)
        ax = 0
    else:
        ax = _axis(axis, x.ndim, api)
    moved = np.moveaxis(a, ax, 0)
    n = moved.shape[0] if moved.ndim else 0
    if n:
        flat = moved.reshape(n, -1)
        change = np.concatenate([[True], np.any(flat[1:] != flat[:-1], axis=1)])
    else:
        change = np.zeros(0, dtype=bool)
    starts = np.flatnonzero(change)
    inverse = np.cumsum(change) - 1
    counts = np.diff(np.append(starts, n))
    sel = _from_host(starts.astype(np.int64))
    out = _C._index_select(_C.reshape(x, [-1]) if axis is None else x, sel, ax)
    res = [out]
    if return_inverse:
        res.append(_C.cast(_from_host(inverse.astype(np.int64)), idt))
    if return_counts:
        res.append(_C.cast(_from_host(counts.astype(np.int64)), idt))
    return res[0] if len(res) == 1 else tuple(res)


# ---------------------------------------------------------------- in place

def cast_(x, dtype):
    """Casts x to dtype in place (x gets new storage of the new dtype); see Note [in-place shape change].

    >>> import oar
    >>> x = oar.to_tensor([1.5, 2.5])
    >>> _ = oar.cast_(x, "int32")
    >>> x.dtype == oar.int32, x.numpy().tolist()
    (True, [1, 2])
    """
    api = "oar.cast_"
    _tensor(x, api)
    dt = _dtype(dtype)
    return x if dt == x.dtype else _restride(x, _C.cast(x, dt), api)


def flatten_(x, start_axis=0, stop_axis=-1, name=None):
    """flatten in place (Note [in-place shape change]).

    >>> import oar
    >>> x = oar.ones([2, 3])
    >>> oar.flatten_(x).shape
    [6]
    """
    _tensor(x, "oar.flatten_")
    return _restride(x, _C.flatten(x, start_axis, stop_axis), "oar.flatten_")


def reshape_(x, shape, name=None):
    """reshape in place (Note [in-place shape change]).

    >>> import oar
    >>> x = oar.arange(6)
    >>> _ = oar.reshape_(x, [2, 3])
    >>> x.shape
    [2, 3]
    """
    _tensor(x, "oar.reshape_")
    return _restride(x, _C.reshape(x, _shape_ints(shape, "oar.reshape_")), "oar.reshape_")


def _shape_ints(shape, api):
    return _ints(shape, api, "shape")


def squeeze_(x, axis=None, name=None):
    """squeeze in place (Note [in-place shape change]).

    >>> import oar
    >>> oar.squeeze_(oar.ones([1, 2, 1])).shape
    [2]
    """
    _tensor(x, "oar.squeeze_")
    ax = None if axis is None else _ints(axis, "oar.squeeze_", "axis")
    return _restride(x, _C.squeeze(x, ax), "oar.squeeze_")


def unsqueeze_(x, axis, name=None):
    """unsqueeze in place (Note [in-place shape change]).

    >>> import oar
    >>> oar.unsqueeze_(oar.ones([2]), 0).shape
    [1, 2]
    """
    _tensor(x, "oar.unsqueeze_")
    return _restride(x, _C.unsqueeze(x, _ints(axis, "oar.unsqueeze_", "axis")), "oar.unsqueeze_")


def transpose_(x, perm, name=None):
    """transpose in place (Note [in-place shape change]).

    >>> import oar
    >>> oar.transpose_(oar.ones([2, 3]), [1, 0]).shape
    [3, 2]
    """
    _tensor(x, "oar.transpose_")
    return _restride(x, _C.transpose(x, _ints(perm, "oar.transpose_", "perm")), "oar.transpose_")


def t_(input, name=None):  # noqa: A002
    """Transposes a tensor of at most 2 dims in place (Note [in-place shape change]).

    >>> import oar
    >>> oar.t_(oar.ones([2, 3])).shape
    [3, 2]
    """
    api = "oar.t_"
    _tensor(input, api, "input")
    if input.ndim > 2:
        raise ValueError(f"[{api}] input must have at most 2 dims, got shape {input.shape}")
    return input if input.ndim < 2 else _restride(input, _C.transpose(input, [1, 0]), api)


def tril_(x, diagonal=0, name=None):
    """tril in place.

    >>> import oar
    >>> x = oar.ones([2, 2])
    >>> oar.tril_(x).numpy().tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    return _write(x, tril(_source(x, "oar.tril_"), diagonal), "oar.tril_")


def triu_(x, diagonal=0, name=None):
    """triu in place.

    >>> import oar
    >>> x = oar.ones([2, 2])
    >>> oar.triu_(x).numpy().tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    return _write(x, triu(_source(x, "oar.triu_"), diagonal), "oar.triu_")


def where_(condition, x=None, y=None, name=None):
    """where, written into x in place: x takes y's value where condition is False.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0, 3.0])
    >>> _ = oar.where_(x > 1.5, x, oar.zeros([3]))
    >>> x.numpy().tolist()
    [0.0, 2.0, 3.0]
    """
    api = "oar.where_"
    _tensor(x, api)
    if y is None:
        raise TypeError(f"[{api}] y must be given")
    return _write(x, _C.where(condition, _source(x, api), y), api)


def index_add_(x, index, axis, value, alpha=1, name=None):
    """index_add in place, adding alpha * value.

    >>> import oar
    >>> x = oar.zeros([2, 2])
    >>> _ = oar.index_add_(x, oar.to_tensor([1]), 0, oar.ones([1, 2]), alpha=2)
    >>> x.numpy().tolist()
    [[0.0, 0.0], [2.0, 2.0]]
    """
    api = "oar.index_add_"
    _tensor(x, api)
    v = _as_tensor(value, x.dtype)
    if alpha != 1:
        v = v * alpha
    return _write(x, index_add(_source(x, api), index, axis, v), api)


def index_fill_(x, index, axis, value, name=None):
    """index_fill in place.

    >>> import oar
    >>> x = oar.zeros([3])
    >>> _ = oar.index_fill_(x, oar.to_tensor([1]), 0, 7.0)
    >>> x.numpy().tolist()
    [0.0, 7.0, 0.0]
    """
    return _write(x, index_fill(_source(x, "oar.index_fill_"), index, axis, value), "oar.index_fill_")


def index_put_(x, indices, value, accumulate=False, name=None):
    """index_put in place.

    >>> import oar
    >>> x = oar.zeros([2, 2])
    >>> _ = oar.index_put_(x, (oar.to_tensor([0, 1]), oar.to_tensor([1, 0])), oar.to_tensor(3.0))
    >>> x.numpy().tolist()
    [[0.0, 3.0], [3.0, 0.0]]
    """
    return _write(x, index_put(_source(x, "oar.index_put_"), indices, value, accumulate), "oar.index_put_")


def masked_fill_(x, mask, value, name=None):
    """masked_fill in place.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0])
    >>> _ = oar.masked_fill_(x, x > 1.5, 0.0)
    >>> x.numpy().tolist()
    [1.0, 0.0]
    """
    _tensor(x, "oar.masked_fill_")
    return _write(x, masked_fill(_source(x, "oar.masked_fill_"), mask, value), "oar.masked_fill_")


def masked_scatter_(x, mask, value, name=None):
    """masked_scatter in place (mask must broadcast to x's shape).

    >>> import oar
    >>> x = oar.zeros([3])
    >>> _ = oar.masked_scatter_(x, oar.to_tensor([False, True, True]), oar.to_tensor([4.0, 5.0]))
    >>> x.numpy().tolist()
    [0.0, 4.0, 5.0]
    """
    return _write(x, masked_scatter(_source(x, "oar.masked_scatter_"), mask, value), "oar.masked_scatter_")


def scatter_(x, index, updates, overwrite=True, name=None):
    """scatter in place.

    >>> import oar
    >>> x = oar.zeros([3])
    >>> _ = oar.scatter_(x, oar.to_tensor([2]), oar.to_tensor([9.0]))
    >>> x.numpy().tolist()
    [0.0, 0.0, 9.0]
    """
    _tensor(x, "oar.scatter_")
    return _write(x, scatter(_source(x, "oar.scatter_"), index, updates, overwrite), "oar.scatter_")


def scatter_add_(input, dim, index, src):  # noqa: A002
    """scatter_add in place.

    >>> import oar
    >>> x = oar.zeros([2])
    >>> _ = oar.scatter_add_(x, 0, oar.to_tensor([1, 1]), oar.to_tensor([1.0, 2.0]))
    >>> x.numpy().tolist()
    [0.0, 3.0]
    """
    return _write(input, scatter_add(_source(input, "oar.scatter_add_"), dim, index, src), "oar.scatter_add_")


# ---------------------------------------------------------------- Tensor-only methods

def _as(name):
    dt = _C.dtype_from_name(name)

    def conv(self):
        return self if self.dtype == dt else _C.cast(self, dt)
    conv.__name__ = name
    conv.__doc__ = f"This tensor cast to {name} (itself when it is {name} already)."
    return conv


_CONVERSIONS = {"bool": "bool", "byte": "uint8", "char": "int8", "short": "int16", "int": "int32", "long": "int64",
                "half": "float16", "float": "float32", "double": "float64", "bfloat16": "bfloat16",
                "float16": "float16", "float32": "float32", "float64": "float64", "int8": "int8", "int16": "int16",
                "int32": "int32", "int64": "int64", "uint8": "uint8", "complex64": "complex64",
                "complex128": "complex128"}


__test__ = {"Tensor dtype conversions": """
>>> import oar
>>> x = oar.to_tensor([1.5, 2.0])
>>> [str(getattr(x, m)().dtype)[7:] for m in ("bool", "byte", "char", "short", "int", "long", "half", "double")]
['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'float64']
>>> x.int64().numpy().tolist(), x.type, x.itemsize
([1, 2], 'DENSE_TENSOR', 4)
"""}


def _type_as(self, other):
    """This tensor cast to other's dtype.

    >>> import oar
    >>> oar.to_tensor([1.5]).type_as(oar.to_tensor([1])).numpy().tolist()
    [1]
    """
    _tensor(other, "oar.Tensor.type_as", "other")
    return self if self.dtype == other.dtype else _C.cast(self, other.dtype)


def _type(self):
    # Paddle's Tensor.type names the variable kind; an eager tensor is always dense.
    return "DENSE_TENSOR"


def _new_size(size, api):
    if len(size) == 1:
        size = size[0]
    return _shape_list(list(size) if isinstance(size, tuple) else size, api)


def _new(self, shape, value, dtype, device, requires_grad):
    out = _C.full(shape, value, _dtype(dtype) or self.dtype)
    if device is not None:
        out = out.to(device)
    out.stop_gradient = not requires_grad
    return out


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor of `size` filled with fill_value, of this tensor's dtype unless given.

    >>> import oar
    >>> oar.ones([2]).new_full([2], 3).numpy().tolist()
    [3.0, 3.0]
    """
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _new(self, _shape_list(size, "oar.Tensor.new_full"), fill_value, dtype, device, requires_grad)


def _new_zeros(self, *size, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Zeros of `size` (a list or separate ints), of this tensor's dtype unless given.

    >>> import oar
    >>> oar.ones([2], "int32").new_zeros(2, 1).numpy().tolist()
    [[0], [0]]
    """
    return _new(self, _new_size(size, "oar.Tensor.new_zeros"), 0, dtype, device, requires_grad)


def _new_ones(self, *size, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Ones of `size` (a list or separate ints), of this tensor's dtype unless given.

    >>> import oar
    >>> oar.zeros([1]).new_ones([2]).numpy().tolist()
    [1.0, 1.0]
    """
    return _new(self, _new_size(size, "oar.Tensor.new_ones"), 1, dtype, device, requires_grad)


def _new_empty(self, *size, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor of `size` (here zero-filled), of this tensor's dtype unless given.

    >>> import oar
    >>> oar.zeros([1]).new_empty([2, 3]).shape
    [2, 3]
    """
    return _new(self, _new_size(size, "oar.Tensor.new_empty"), 0, dtype, device, requires_grad)


def _fill_(self, value):
    """Sets every element to value, in place.

    >>> import oar
    >>> oar.zeros([2]).fill_(1.5).numpy().tolist()
    [1.5, 1.5]
    """
    api = "oar.Tensor.fill_"
    _tensor(self, api)
    if isinstance(value, Tensor):
        value = value.item()
    return _write(self, _C.full_like(self, value, None), api)


def _zero_(self):
    """Sets every element to zero, in place.

    >>> import oar
    >>> oar.ones([2]).zero_().numpy().tolist()
    [0.0, 0.0]
    """
    return _write(self, _C.full_like(_tensor(self, "oar.Tensor.zero_"), 0, None), "oar.Tensor.zero_")


def _fill_diagonal_(self, value, offset=0, wrap=False, name=None):
    """Sets the main diagonal (shifted right by `offset`, within each row) to value, in place.
    A tall matrix with wrap=True continues the diagonal below every ncols + 1 rows; a tensor
    of more than 2 dims has its [i, i, ..., i] entries set.

    >>> import oar
    >>> oar.zeros([3, 2]).fill_diagonal_(5.0).numpy().tolist()
    [[5.0, 0.0], [0.0, 5.0], [0.0, 0.0]]
    """
    api = "oar.Tensor.fill_diagonal_"
    _tensor(self, api)
    if self.ndim < 2:
        raise ValueError(f"[{api}] the tensor must have at least 2 dims, got shape {self.shape}")
    offset = _int(offset, api, "offset")
    shape = list(self.shape)
    # Walk the flat data in steps of the sum of the strides (one step down every
    # axis); a 2-D tensor stops after its first ncols rows unless wrap. The
    # offset moves each position along its row, keeping it inside that row.
    strides = np.cumprod([1] + shape[::-1])[:-1][::-1]
    size = self.size if wrap or self.ndim > 2 else builtins.min(self.size, shape[1] * shape[1])
    pos = np.arange(0, size, builtins.max(builtins.int(strides.sum()), 1), dtype=np.int64)
    col = pos % shape[1] + offset if shape[1] else pos
    pos = pos[(col >= 0) & (col < shape[1])] + offset
    mask = np.zeros(self.size, dtype=bool)
    mask[pos] = True
    mask = mask.reshape(shape)
    if isinstance(value, Tensor):
        value = value.item()
    m = _from_host(mask)
    return _write(self, _C.where(m, _C.full_like(self, value, None), _source(self, api)), api)


def _fill_diagonal_tensor(self, y, offset=0, dim1=0, dim2=1, name=None):
    """A copy of this tensor with y on its `offset` diagonal of the (dim1, dim2) planes (as
    diagonal_scatter).

    >>> import oar
    >>> oar.zeros([2, 3]).fill_diagonal_tensor(oar.to_tensor([1.0, 2.0])).numpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
    """
    return _diag_scatter(self, y, offset, dim1, dim2, "oar.Tensor.fill_diagonal_tensor")


def _fill_diagonal_tensor_(self, y, offset=0, dim1=0, dim2=1, name=None):
    """fill_diagonal_tensor in place.

    >>> import oar
    >>> x = oar.zeros([2, 2])
    >>> _ = x.fill_diagonal_tensor_(oar.to_tensor([1.0, 2.0]))
    >>> x.numpy().tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    api = "oar.Tensor.fill_diagonal_tensor_"
    return _write(self, _diag_scatter(_source(self, api), y, offset, dim1, dim2, api), api)


def _ndimension(self):
    """The number of dims.

    >>> import oar
    >>> oar.ones([2, 3]).ndimension()
    2
    """
    return self.ndim


def _itemsize(self):
    return self.element_size()


def _is_same_shape(self, y):
    """Whether y has this tensor's shape.

    >>> import oar
    >>> oar.ones([2, 3]).is_same_shape(oar.zeros([2, 3]))
    True
    """
    return list(self.shape) == list(_tensor(y, "oar.Tensor.is_same_shape", "y").shape)


def _requires_grad_(self, requires_grad=True):
    """Sets whether autograd records operations on this tensor (stop_gradient = not
    requires_grad); returns the tensor.

    >>> import oar
    >>> oar.ones([1]).requires_grad_().stop_gradient
    False
    """
    self.stop_gradient = not requires_grad
    return self


def _repeat(self, *repeats):
    """Paddle's Tensor.repeat: tiles the tensor `repeats[i]` times along each dim (ints, a list
    or a Tensor); fewer entries than dims apply to the last dims, more add leading dims.

    >>> import oar
    >>> oar.to_tensor([[1, 2]]).repeat(2, 2).numpy().tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    if len(repeats) == 1 and isinstance(repeats[0], (list, tuple, Tensor)):
        repeats = repeats[0]
    return tile(self, _ints(list(repeats) if isinstance(repeats, tuple) else repeats, "oar.Tensor.repeat",
                            "repeats"))


def _slice_method(input, axes, starts, ends):  # noqa: A002
    """oar.slice as a method.

    >>> import oar
    >>> oar.arange(6).reshape([2, 3]).slice([1], [1], [3]).numpy().tolist()
    [[1, 2], [4, 5]]
    """
    from .creation import slice as slice_
    return slice_(input, axes, starts, ends)


def _scale_(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    """scale in place.

    >>> import oar
    >>> oar.to_tensor([1.0, 2.0]).scale_(2.0, 1.0).numpy().tolist()
    [3.0, 5.0]
    """
    return _write(x, scale_fn(_source(x, "oar.Tensor.scale_"), scale, bias, bias_after_scale, act), "oar.Tensor.scale_")


scale_fn = scale


def _clamp(x, min=None, max=None, name=None, *, out=None):  # noqa: A002
    """clip under its other name; `out` receives the result.

    >>> import oar
    >>> oar.to_tensor([0.0, 5.0]).clamp(1.0, 3.0).numpy().tolist()
    [1.0, 3.0]
    """
    return _assign_out(out, _C.clip(x, min, max), "oar.Tensor.clamp")


def _clip_(x, min=None, max=None, name=None):  # noqa: A002
    """clip in place.

    >>> import oar
    >>> oar.to_tensor([0.0, 5.0]).clip_(max=3.0).numpy().tolist()
    [0.0, 3.0]
    """
    return _write(x, _C.clip(_source(x, "oar.Tensor.clip_"), min, max), "oar.Tensor.clip_")


__tensor_methods__ = (
    "cast_", "diag_embed", "diagonal_scatter", "select_scatter", "flatten_", "reshape_", "squeeze_", "unsqueeze_",
    "transpose_", "t_", "tril_", "triu_", "where_", "index_add_", "index_fill", "index_fill_", "index_put",
    "index_put_", "index_sample", "masked_fill_", "masked_scatter", "masked_scatter_", "scatter_", "scatter_add",
    "scatter_add_", "scatter_nd", "scatter_reduce", "take", "take_along_dim", "shard_index", "unique_consecutive",
    *((m, _as(d)) for m, d in _CONVERSIONS.items()),
    ("type", property(_type)), ("type_as", _type_as),
    ("new_full", _new_full), ("new_zeros", _new_zeros), ("new_ones", _new_ones), ("new_empty", _new_empty),
    ("fill_", _fill_), ("zero_", _zero_), ("fill_diagonal_", _fill_diagonal_),
    ("fill_diagonal_tensor", _fill_diagonal_tensor), ("fill_diagonal_tensor_", _fill_diagonal_tensor_),
    ("ndimension", _ndimension), ("itemsize", property(_itemsize)), ("is_same_shape", _is_same_shape),
    ("requires_grad_", _requires_grad_), ("repeat", _repeat), ("stack", stack), ("concat", concat),
    ("slice", _slice_method), ("add_n", add_n), ("scale", scale),
    ("scale_", _scale_), ("clip_", _clip_), ("clamp", _clamp), ("clamp_", _clip_),
)
