"""Shape functions of sparse tensors: transpose, reshape, slice and the sum reduction.

Each works on the COO coordinates (a CSR input goes through COO and comes back as CSR) and keeps the values
differentiable: coordinates are recomputed, values are gathered, summed with index_add, or reduced densely.
"""
from . import _index as ix
from ._tensor import SparseCooTensor, SparseCsrTensor
from .unary import check_sparse

__all__ = ["transpose", "reshape", "slice", "sum"]


def _axes(axis, ndim, api, what="axis"):
    items = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    out = []
    for a in items:
        if isinstance(a, bool) or not isinstance(a, int) or not -ndim <= a < ndim:
            raise ValueError(f"[{api}] {what} must hold ints in [{-ndim}, {ndim}), got {axis!r}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"[{api}] {what} must not repeat a dim, got {axis!r}")
    return out


def _coo(x):
    return x.to_sparse_coo() if isinstance(x, SparseCsrTensor) else x


def _back(x, out):
    """out in x's layout when x is CSR and out can be CSR; else out as it is."""
    if isinstance(x, SparseCsrTensor) and out.ndim in (2, 3) and not out.dense_dim():
        return out.to_sparse_csr()
    return out


def transpose(x, perm, name=None):
    """x with its dims permuted by perm. A COO tensor may permute its sparse dims among themselves and its dense
    dims among themselves; a CSR matrix any of its dims.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]).to_sparse_csr()
    >>> oar.sparse.transpose(x, [1, 0]).to_dense().numpy().tolist()
    [[0.0, 2.0], [1.0, 0.0], [0.0, 3.0]]
    """
    import oar
    api = "oar.sparse.transpose"
    check_sparse(x, api)
    perm = _axes(perm, x.ndim, api, "perm")
    if len(perm) != x.ndim:
        raise ValueError(f"[{api}] perm must list all {x.ndim} dims, got {perm}")
    c = _coo(x)
    sd = c.sparse_dim()
    if sorted(perm[:sd]) != list(range(sd)):
        raise ValueError(f"[{api}] perm must keep the {sd} sparse dims first (a COO tensor's dense dims cannot "
                         f"move into its coordinates), got {perm}")
    ind = oar.stack([c._indices[p] for p in perm[:sd]], axis=0)
    vals = c._values
    if sd < x.ndim:
        vals = oar.transpose(vals, [0] + [p - sd + 1 for p in perm[sd:]])
    out = SparseCooTensor(ind, vals, [x.shape[p] for p in perm])
    return out.to_sparse_csr() if isinstance(x, SparseCsrTensor) else out


def reshape(x, shape, name=None):
    """x with a new shape of the same size (one dim may be -1). Only a COO tensor's sparse dims are reshaped:
    its dense dims must end the new shape unchanged.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]).to_sparse_coo(2)
    >>> oar.sparse.reshape(x, [3, -1]).to_dense().numpy().tolist()
    [[0.0, 1.0], [0.0, 2.0], [0.0, 3.0]]
    """
    api = "oar.sparse.reshape"
    check_sparse(x, api)
    if not isinstance(shape, (list, tuple)) or not all(isinstance(d, int) and not isinstance(d, bool)
                                                       for d in shape):
        raise TypeError(f"[{api}] shape must be a list or tuple of ints, got {shape!r}")
    shape = list(shape)
    if shape.count(-1) > 1 or any(d < -1 for d in shape):
        raise ValueError(f"[{api}] shape may hold one -1 and otherwise sizes >= 0, got {shape}")
    c = _coo(x)
    sd = c.sparse_dim()
    dense = x.shape[sd:]
    if dense and shape[len(shape) - len(dense):] != dense:
        raise ValueError(f"[{api}] the dense dims {dense} must end the new shape, got {shape}")
    new_sparse = shape[:len(shape) - len(dense)]
    total = ix.checked_prod(x.shape[:sd], api)
    if -1 in new_sparse:
        rest = ix.checked_prod([d for d in new_sparse if d != -1], api)
        if rest == 0 or total % rest:
            raise ValueError(f"[{api}] cannot reshape a tensor of shape {x.shape} into {shape}")
        new_sparse[new_sparse.index(-1)] = total // rest
    if not new_sparse or ix.checked_prod(new_sparse, api) != total:
        raise ValueError(f"[{api}] cannot reshape a tensor of shape {x.shape} into {shape}")
    key = ix.linear_key(ix.i64(c._indices), x.shape[:sd])
    ind = ix.unravel(key, new_sparse).astype(ix.dname(c._indices))
    return _back(x, SparseCooTensor(ind, c._values, new_sparse + dense, c._coalesced))


def slice(x, axes, starts, ends, name=None):
    """x[starts[i]:ends[i]] along each of axes (negative and out-of-range bounds clamp as in oar.slice).

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]).to_sparse_coo(2)
    >>> oar.sparse.slice(x, [1], [1], [3]).to_dense().numpy().tolist()
    [[1.0, 0.0], [0.0, 3.0]]
    """
    import builtins
    import oar
    api = "oar.sparse.slice"
    check_sparse(x, api)
    axes = _axes(axes, x.ndim, api, "axes")
    if not (len(axes) == len(starts) == len(ends)):
        raise ValueError(f"[{api}] axes, starts and ends must have the same length, got {len(axes)}, "
                         f"{len(starts)} and {len(ends)}")
    c = _coo(x)
    sd = c.sparse_dim()
    shape = list(x.shape)
    ind, vals = ix.i64(c._indices), c._values
    keep = oar.ones([ind.shape[1]], dtype="bool")
    lo = [0] * x.ndim
    for a, s, e in zip(axes, starts, ends):
        s, e = int(s), int(e)
        n = shape[a]
        s = builtins.min(builtins.max(s + n if s < 0 else s, 0), n)
        e = builtins.min(builtins.max(e + n if e < 0 else e, 0), n)
        e = builtins.max(e, s)
        lo[a], shape[a] = s, e - s
        if a < sd:
            keep = oar.logical_and(keep, oar.logical_and(ind[a] >= s, ind[a] < e))
        else:
            vals = oar.slice(vals, [a - sd + 1], [s], [e])
    pos = oar.nonzero(keep).reshape([-1])
    shift = oar.to_tensor(lo[:sd], dtype="int64").reshape([sd, 1])
    ind = oar.gather(ind, pos, axis=1) - shift
    out = SparseCooTensor(ind.astype(ix.dname(c._indices)), oar.gather(vals, pos, axis=0), shape, c._coalesced)
    return _back(x, out)


def sum(x, axis=None, dtype=None, keepdim=False, name=None):
    """The sum of x's entries over axis (all dims when None), as a sparse tensor.

    Reduced sparse dims merge coordinates (their values are summed); reduced dense dims sum the values.
    When no sparse dim would remain, one of size 1 is kept in front (so a full sum has shape [1]).
    A CSR input keeps its rank (keepdim is taken as True), so that the result is a CSR matrix again:
    axis=None gives shape [1, 1] (or [1, 1, 1]), axis=-1 gives [*, rows, 1]. bool and int32 inputs
    sum to int64.

    >>> import oar
    >>> x = oar.to_tensor([[-2.0, 0.0], [1.0, 2.0]]).to_sparse_coo(2)
    >>> oar.sparse.sum(x, axis=1).to_dense().numpy().tolist()
    [-2.0, 3.0]
    >>> oar.sparse.sum(x).to_dense().numpy().tolist()
    [1.0]
    """
    import oar
    api = "oar.sparse.sum"
    check_sparse(x, api)
    axes = list(range(x.ndim)) if axis is None else _axes(axis, x.ndim, api)
    keepdim = keepdim or isinstance(x, SparseCsrTensor)
    c = _coo(x)
    sd = c.sparse_dim()
    vals = c._values
    if dtype is not None:
        vals = vals.astype(dtype)
    elif ix.dname(vals) in ("bool", "int32"):
        vals = vals.astype("int64")
    dense_axes = [a - sd + 1 for a in axes if a >= sd]
    if dense_axes:
        vals = vals.sum(axis=dense_axes, keepdim=keepdim)
    ind = ix.i64(c._indices)
    kept = [d for d in range(sd) if keepdim or d not in axes]
    rows = [ind[d] if d not in axes else oar.zeros_like(ind[d]) for d in kept]
    sparse_shape = [x.shape[d] if d not in axes else 1 for d in kept]
    if not rows:
        rows, sparse_shape = [oar.zeros([ind.shape[1]], dtype="int64")], [1]
    dense_shape = [1 if a in axes else x.shape[a] for a in range(sd, x.ndim) if keepdim or a not in axes]
    out = SparseCooTensor(oar.stack(rows, axis=0), vals, sparse_shape + dense_shape).coalesce()
    return _back(x, out)


ix.scope_module(globals())  # Note [device scope]: sparse arguments count as their values
