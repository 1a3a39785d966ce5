"""Index arithmetic shared by the sparse layouts: linear keys, coalescing, COO <-> CSR.

Note [sparse as composites]: a sparse tensor is index tensors plus one dense
values Tensor. Every operation below computes its new indices with integer
oar ops (no gradient) and its new values with differentiable oar ops (gather,
index_add, matmul, elementwise), so autograd reaches the values, and the
dense operands of products, with no sparse-specific gradient rule. Nothing
loops over the nonzeros in Python; loops run over dimensions only.
"""
import functools
import types

import numpy as np

from .. import _C

_INT_DTYPES = ("int32", "int64")


def dname(t):
    """The dtype name of a Tensor ('float32', 'int64', ...)."""
    return str(t.dtype).split(".")[-1]


def i64(t):
    return t if dname(t) == "int64" else t.astype("int64")


def checked_prod(dims, api):
    """prod(dims) as a Python int, rejecting products that overflow int64 index arithmetic."""
    p = 1
    for d in dims:
        p *= int(d)
    if p >= 2 ** 63:
        raise ValueError(f"[{api}] the sparse dims {list(dims)} hold {p} elements, more than int64 indices can "
                         f"address")
    return p


def linear_key(indices, dims):
    """[nnz] int64 row-major position of each column of indices [len(dims), nnz] in a grid of shape dims."""
    import oar
    if not dims:
        return oar.zeros([indices.shape[1]], dtype="int64")
    key = indices[0]
    for d in range(1, len(dims)):  # Horner's rule: one multiply and one add per further dim
        key = key * int(dims[d]) + indices[d]
    return key


def unravel(key, dims):
    """Inverse of linear_key: [len(dims), nnz] int64."""
    import oar
    if not dims:
        return oar.zeros([0, key.shape[0]], dtype="int64")
    rows = []
    for n in reversed(dims[1:]):
        n = max(int(n), 1)  # a zero-size dim holds no entries; avoid dividing by 0 on the empty key
        rows.append(key % n)
        key = key // n
    rows.append(key)  # what is left is the first coordinate (keys are in range)
    return oar.stack(rows[::-1], axis=0)


def reshape(t, shape):
    """t.reshape(shape) for explicit sizes, where a 0 is a size (oar.reshape reads 0 as "copy the input dim")."""
    import oar
    if any(int(d) == 0 for d in shape):
        return oar.zeros([int(d) for d in shape], dtype=t.dtype)  # no elements: nothing to carry
    return t.reshape([int(d) for d in shape])


def segment_sum(values, segment, count):
    """[count, *values.shape[1:]]: row r is the sum of values[i] with segment[i] == r (differentiable)."""
    import oar
    out = oar.zeros([count] + list(values.shape[1:]), dtype=values.dtype)
    return oar.index_add(out, segment, 0, values)


def coalesce(indices, values, dims):
    """Sorted unique indices and the values of duplicates summed: (indices [sd, n], values [n, ...])."""
    import oar
    indices = i64(indices)
    if indices.shape[1] == 0:
        return indices, values
    key = linear_key(indices, dims)
    uniq, inverse = oar.unique(key, return_inverse=True)
    vals = segment_sum(values, inverse.reshape([-1]), uniq.shape[0])
    return unravel(uniq, dims), vals


def coo_to_csr(indices, nrows, batch):
    """crows [batch * (nrows + 1)] int64 for sorted COO indices [(batch,) row, col]; crows start at 0 per batch."""
    import oar
    bidx = indices[0] if batch is not None else None
    rows = indices[-2]
    nb = batch or 1
    seg = rows if bidx is None else bidx * nrows + rows
    counts = oar.bincount(seg, minlength=nb * nrows) if seg.shape[0] else oar.zeros([nb * nrows], dtype="int64")
    counts = reshape(i64(counts), [nb, nrows])
    crows = oar.concat([oar.zeros([nb, 1], dtype="int64"), oar.cumsum(counts, axis=1)], axis=1)
    return crows.reshape([-1])


def csr_rows(crows, nrows, batch):
    """COO row indices ([batch,] row) of each stored entry of a CSR matrix, as [1 or 2, nnz] int64."""
    import oar
    nb = batch or 1
    c = reshape(i64(crows), [nb, nrows + 1])
    counts = (c[:, 1:] - c[:, :-1]).reshape([-1])
    seg = oar.arange(nb * nrows, dtype="int64")
    flat = oar.repeat_interleave(seg, counts) if int(counts.shape[0]) else oar.zeros([0], dtype="int64")
    if batch is None:
        return flat.reshape([1, -1])
    return oar.stack([flat // nrows, flat % nrows], axis=0)


def host(t):
    """A Tensor's data as a NumPy array, or None while a graph is being captured (checks skipped then)."""
    if _C._ir_is_tracing():
        return None
    return np.asarray(t.numpy())


def on_values_device(f):
    """f run in the device scope (Note [device scope]) of its arguments, a sparse argument counting as its
    values: the index and value tensors f makes (zeros, arange, ...) land where the sparse data lives,
    which the API boundary alone cannot see, since it looks at dense Tensor arguments only."""
    if getattr(f, "__oar_sparse_scoped__", False):
        return f
    enter, leave, tensor = _C._enter_device_scope, _C._exit_device_scope, _C.Tensor

    def scoped(*args, **kwargs):
        scope = enter(*[a if isinstance(a, tensor) else getattr(a, "_values", a) for a in args],
                      **{k: v if isinstance(v, tensor) else getattr(v, "_values", v) for k, v in kwargs.items()})
        try:
            return f(*args, **kwargs)
        finally:
            if scope >= 0:
                leave(scope)

    # built over f's globals, so doctest still finds f in its module and runs its examples
    g = types.FunctionType(scoped.__code__, f.__globals__, f.__name__, None, scoped.__closure__)
    functools.update_wrapper(g, f)
    g.__oar_sparse_scoped__ = True
    return g


def scope_module(namespace):
    """Wraps the public functions of a module (its __all__, given as its globals()) in on_values_device."""
    for name in namespace["__all__"]:
        f = namespace.get(name)
        if isinstance(f, types.FunctionType):
            namespace[name] = on_values_device(f)
