"""oar.sparse.nn.functional: activations of sparse tensors, on the stored entries."""
from ... import _C
from .. import _index as ix
from .._tensor import SparseCooTensor, SparseCsrTensor
from ..unary import check_sparse

__all__ = ["relu", "relu6", "leaky_relu", "softmax"]


def relu(x, name=None):
    """max(x, 0) at each stored entry of the sparse tensor x.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 2.0], [3])
    >>> oar.sparse.nn.functional.relu(x).values().numpy().tolist()
    [0.0, 2.0]
    """
    import oar
    check_sparse(x, "oar.sparse.nn.functional.relu")
    return x._with_values(oar.nn.functional.relu(x._values))


def relu6(x, name=None):
    """min(max(x, 0), 6) at each stored entry of the sparse tensor x.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 7.0], [3])
    >>> oar.sparse.nn.functional.relu6(x).values().numpy().tolist()
    [0.0, 6.0]
    """
    import oar
    check_sparse(x, "oar.sparse.nn.functional.relu6")
    return x._with_values(oar.nn.functional.relu6(x._values))


def leaky_relu(x, negative_slope=0.01, name=None):
    """x where x >= 0 and negative_slope * x elsewhere, at each stored entry of the sparse tensor x.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 2.0], [3])
    >>> oar.sparse.nn.functional.leaky_relu(x, 0.5).values().numpy().tolist()
    [-0.5, 2.0]
    """
    import oar
    check_sparse(x, "oar.sparse.nn.functional.leaky_relu")
    return x._with_values(oar.nn.functional.leaky_relu(x._values, negative_slope))


def softmax(x, axis=-1, name=None):
    """Softmax along the last axis over the stored entries only: each row of a CSR matrix, or each run of
    COO coordinates that differ only in the last dim, is normalised on its own; absent entries stay absent
    (they are not zeros taking part). A COO tensor whose last dim is dense takes the softmax of its value
    blocks along that dim. Differentiable in the values.

    >>> import oar
    >>> x = oar.sparse.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1.0, 1.0, 5.0], [2, 3])
    >>> y = oar.sparse.nn.functional.softmax(x)
    >>> y.values().numpy().tolist()
    [0.5, 0.5, 1.0]
    """
    import oar
    api = "oar.sparse.nn.functional.softmax"
    check_sparse(x, api)
    if isinstance(axis, bool) or not isinstance(axis, int) or axis not in (-1, x.ndim - 1):
        raise ValueError(f"[{api}] only the last axis (-1) is supported, got axis={axis!r}")
    if isinstance(x, SparseCooTensor):
        x = x.coalesce()
        if x.dense_dim():
            return x._with_values(oar.nn.functional.softmax(x._values, axis=-1))
        ind = ix.i64(x._indices)
        group = ix.linear_key(ind[:-1], x.shape[:-1])
    else:
        rows = ix.csr_rows(x._crows, x.shape[-2], x.shape[0] if x.ndim == 3 else None)
        group = rows[0] if rows.shape[0] == 1 else rows[0] * x.shape[-2] + rows[1]
    if x.nnz() == 0:
        return x
    uniq, seg = oar.unique(group, return_inverse=True)
    seg = seg.reshape([-1])
    n = int(uniq.shape[0])
    v = x._values
    # subtracting each group's max keeps exp finite; it is a constant shift, so no gradient flows through it
    top = oar.put_along_axis(oar.full([n], float("-inf"), dtype=v.dtype), seg, v.detach(), 0, reduce="amax")
    e = oar.exp(v - oar.gather(top, seg))
    total = ix.segment_sum(e, seg, n)
    return x._with_values(e / oar.gather(total, seg))
