"""Products with sparse matrices: matmul, masked_matmul, addmm, mv (2-D, or batched 3-D).

Note [sparse products]: sparse x dense gathers, for each stored entry (b, i, k), row k of y's batch b,
scales it by the entry's value and index_adds it into output row (b, i): O(nnz * n) work, never a dense
copy of x. sparse x sparse pairs every entry (i, k) of x with every entry (k, j) of y by expanding each
x entry over the run of y entries in row k (repeat_interleave over run lengths), then coalesces the
products. masked_matmul computes only the dot products at the mask's entries: O(nnz * k).
"""
from .. import _C
from . import _index as ix
from ._tensor import SparseCooTensor, SparseCsrTensor, is_sparse_tensor
from .unary import check_sparse

__all__ = ["matmul", "masked_matmul", "addmm", "mv"]


def _coords(x):
    """(batch or None, rows, cols) int64 coordinates of a sparse 2-D/3-D matrix's entries, in storage order."""
    ind = x._coo_indices() if isinstance(x, SparseCsrTensor) else ix.i64(x._indices)
    if ind.shape[0] == 3:
        return ind[0], ind[1], ind[2]
    return None, ind[0], ind[1]


def _check_matrix(x, api, what):
    if x.ndim not in (2, 3):
        raise ValueError(f"[{api}] {what} must be a 2-D matrix or a 3-D batch of matrices, got shape {x.shape}")
    if isinstance(x, SparseCooTensor) and x.dense_dim():
        raise ValueError(f"[{api}] {what} must have all its dims sparse (sparse_dim {x.ndim}), got sparse_dim "
                         f"{x.sparse_dim()}")


def _check_pair(x, y, api):
    xs, ys = list(x.shape), list(y.shape)
    if len(xs) != len(ys) or xs[:-2] != ys[:-2] or xs[-1] != ys[-2]:
        raise ValueError(f"[{api}] x [*, M, K] and y [*, K, N] must have the same batch dims and agree on K, got "
                         f"shapes {xs} and {ys}")
    if x.dtype != y.dtype:
        raise TypeError(f"[{api}] x and y must have the same dtype, got {x.dtype} and {y.dtype}")


def _sparse_dense(x, y):
    import oar
    b, r, c = _coords(x)
    m, k, n = x.shape[-2], x.shape[-1], y.shape[-1]
    nb = x.shape[0] if b is not None else 1
    src = c if b is None else b * k + c
    seg = r if b is None else b * m + r
    rows = oar.gather(ix.reshape(y, [nb * k, n]), src, axis=0)
    out = ix.segment_sum(x._values.unsqueeze(-1) * rows, seg, nb * m)
    return ix.reshape(out, x.shape[:-1] + [n])


def _sparse_sparse(x, y):
    import oar
    xc = x.to_sparse_coo() if isinstance(x, SparseCsrTensor) else x
    yc = (y.to_sparse_coo() if isinstance(y, SparseCsrTensor) else y).coalesce()
    bx, rx, cx = _coords(xc)
    by, ry, cy = _coords(yc)
    m, k, n = x.shape[-2], x.shape[-1], y.shape[-1]
    nb = x.shape[0] if bx is not None else 1
    # y is sorted by (batch, row): the entries of y's row key sit at start[key] .. start[key] + count[key]
    ykey = ry if by is None else by * k + ry
    count = ix.i64(oar.bincount(ykey, minlength=nb * k)) if ykey.shape[0] else oar.zeros([nb * k], dtype="int64")
    start = oar.cumsum(count, axis=0) - count
    xkey = cx if bx is None else bx * k + cx
    reps = oar.gather(count, xkey) if xkey.shape[0] else oar.zeros([0], dtype="int64")
    total = int(reps.sum()) if reps.shape[0] else 0
    if total == 0:
        ind = oar.zeros([x.ndim, 0], dtype="int64")
        vals = oar.zeros([0], dtype=x.dtype) + (x._values.sum() + y._values.sum()) * 0
    else:
        xi = oar.repeat_interleave(oar.arange(xkey.shape[0], dtype="int64"), reps)
        first = oar.cumsum(reps, axis=0) - reps  # where each x entry's run of pairs starts
        yi = oar.gather(start, oar.gather(xkey, xi)) + (oar.arange(total, dtype="int64") - oar.gather(first, xi))
        vals = oar.gather(xc._values, xi) * oar.gather(yc._values, yi)
        parts = [] if bx is None else [oar.gather(bx, xi)]
        ind = oar.stack(parts + [oar.gather(rx, xi), oar.gather(cy, yi)], axis=0)
    out = SparseCooTensor(ind, vals, x.shape[:-1] + [n]).coalesce()
    return out.to_sparse_csr() if isinstance(x, SparseCsrTensor) else out


def matmul(x, y, name=None):
    """x @ y for a sparse x [*, M, K] (COO or CSR, 2-D or batched 3-D) and a dense y [*, K, N] (dense
    result), or a sparse y of x's layout (sparse result). Gradients reach x's values and a dense y.

    >>> import oar
    >>> x = oar.sparse.sparse_csr_tensor([0, 1, 2, 3], [1, 2, 0], [1.0, 2.0, 3.0], [3, 3])
    >>> y = oar.to_tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> oar.sparse.matmul(x, y).numpy().tolist()
    [[0.0, 1.0], [2.0, 2.0], [3.0, 0.0]]
    >>> oar.sparse.matmul(x, x).to_dense().numpy().tolist()
    [[0.0, 0.0, 2.0], [6.0, 0.0, 0.0], [0.0, 3.0, 0.0]]
    """
    api = "oar.sparse.matmul"
    check_sparse(x, api)
    _check_matrix(x, api, "x")
    if is_sparse_tensor(y):
        if type(y) is not type(x):
            raise TypeError(f"[{api}] a sparse y must have x's layout, got {type(x).__name__} and "
                            f"{type(y).__name__}")
        _check_matrix(y, api, "y")
        _check_pair(x, y, api)
        return _sparse_sparse(x, y)
    if not isinstance(y, _C.Tensor):
        raise TypeError(f"[{api}] y must be a dense Tensor or a sparse tensor, got {type(y).__name__}")
    _check_pair(x, y, api)
    return _sparse_dense(x, y)


def mv(x, vec, name=None):
    """x @ vec for a sparse 2-D matrix x [M, N] (COO or CSR) and a dense vector vec [N]: a dense [M].

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 1, 1], [1, 0, 2]], [1.0, 2.0, 3.0], [2, 3])
    >>> oar.sparse.mv(x, oar.to_tensor([1.0, 2.0, 3.0])).numpy().tolist()
    [2.0, 11.0]
    """
    api = "oar.sparse.mv"
    check_sparse(x, api)
    if x.ndim != 2 or not isinstance(vec, _C.Tensor) or vec.ndim != 1:
        raise ValueError(f"[{api}] x must be a sparse 2-D matrix and vec a dense 1-D Tensor, got x of shape "
                         f"{x.shape} and vec of type {type(vec).__name__}"
                         + (f" and shape {vec.shape}" if isinstance(vec, _C.Tensor) else ""))
    _check_matrix(x, api, "x")
    if vec.shape[0] != x.shape[1]:
        raise ValueError(f"[{api}] vec must have x.shape[1] ({x.shape[1]}) entries, got {vec.shape[0]}")
    if x.dtype != vec.dtype:
        raise TypeError(f"[{api}] x and vec must have the same dtype, got {x.dtype} and {vec.dtype}")
    return _sparse_dense(x, vec.unsqueeze(-1)).squeeze(-1)


def masked_matmul(x, y, mask, name=None):
    """(x @ y) computed only at the stored entries of the sparse mask, for dense x [*, M, K] and y [*, K, N]:
    a sparse tensor with mask's layout and pattern (mask's values are not used). Differentiable in x and y.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> y = oar.to_tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> mask = oar.sparse.sparse_csr_tensor([0, 1, 2], [1, 0], [1.0, 1.0], [2, 2])
    >>> oar.sparse.masked_matmul(x, y, mask).to_dense().numpy().tolist()
    [[0.0, 2.0], [3.0, 0.0]]
    """
    import oar
    api = "oar.sparse.masked_matmul"
    check_sparse(mask, api, "mask")
    for nm, t in (("x", x), ("y", y)):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"[{api}] {nm} must be a dense Tensor, got {type(t).__name__}")
    _check_matrix(mask, api, "mask")
    _check_pair(x, y, api)
    if list(x.shape[:-1]) + [y.shape[-1]] != mask.shape:
        raise ValueError(f"[{api}] mask must have the shape of x @ y, {list(x.shape[:-1]) + [y.shape[-1]]}, "
                         f"got {mask.shape}")
    b, r, c = _coords(mask)
    m, k, n = x.shape[-2], x.shape[-1], y.shape[-1]
    nb = x.shape[0] if b is not None else 1
    yt = oar.transpose(y, list(range(y.ndim - 2)) + [y.ndim - 1, y.ndim - 2])
    yt = ix.reshape(yt, [nb * n, k])
    xr = oar.gather(ix.reshape(x, [nb * m, k]), r if b is None else b * m + r, axis=0)
    yc = oar.gather(yt, c if b is None else b * n + c, axis=0)
    return mask._with_values((xr * yc).sum(axis=-1))


def addmm(input, x, y, beta=1.0, alpha=1.0, name=None):
    """beta * input + alpha * (x @ y): dense input and y with a sparse x give a dense result; sparse input,
    x and y of one layout give a sparse result.

    >>> import oar
    >>> x = oar.sparse.sparse_csr_tensor([0, 1, 2], [1, 0], [1.0, 2.0], [2, 2])
    >>> y = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> oar.sparse.addmm(oar.ones([2, 2]), x, y, beta=2.0, alpha=1.0).numpy().tolist()
    [[5.0, 6.0], [4.0, 6.0]]
    """
    from .binary import add
    api = "oar.sparse.addmm"
    check_sparse(x, api, "x")
    prod = matmul(x, y)
    if list(input.shape) != list(prod.shape):
        raise ValueError(f"[{api}] input must have the shape of x @ y, {list(prod.shape)}, got {list(input.shape)}")
    if is_sparse_tensor(prod):
        if type(input) is not type(prod):
            raise TypeError(f"[{api}] with a sparse y, input must be a sparse tensor of x's layout, got "
                            f"{type(input).__name__}")
        return add(input._with_values(input._values * beta), prod._with_values(prod._values * alpha))
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"[{api}] with a dense y, input must be a dense Tensor, got {type(input).__name__}")
    return input * beta + prod * alpha


ix.scope_module(globals())  # Note [device scope]: sparse arguments count as their values
