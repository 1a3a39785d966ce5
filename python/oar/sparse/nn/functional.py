"""oar.sparse.nn.functional: activations of sparse tensors, on the stored entries."""
from ... import _C
from .. import _index as ix
from .._tensor import SparseCooTensor, SparseCsrTensor
from ..unary import check_sparse

__all__ = ["relu", "relu6", "leaky_relu", "softmax", "attention", "conv2d", "conv3d", "subm_conv2d", "subm_conv3d",
           "subm_conv2d_igemm", "subm_conv3d_igemm", "max_pool3d"]


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
    return x._with_values(_group_softmax(x._values, seg.reshape([-1]), int(uniq.shape[0])))


def _group_softmax(v, seg, n, keep=None):
    """Softmax of v [nnz] within each group seg [nnz] (in [0, n)); entries with keep False take no part and
    give 0, and a group with nothing kept gives zeros."""
    import oar
    live = v.detach() if keep is None else oar.where(keep, v.detach(), oar.full([], float("-inf"), dtype=v.dtype))
    # subtracting each group's max keeps exp finite; it is a constant shift, so no gradient flows through it
    top = oar.put_along_axis(oar.full([n], float("-inf"), dtype=v.dtype), seg, live, 0, reduce="amax")
    top = oar.where(oar.isfinite(top), top, oar.zeros_like(top))
    e = oar.exp(v - oar.gather(top, seg))
    if keep is not None:
        e = oar.where(keep, e, oar.zeros_like(e))
    total = ix.segment_sum(e, seg, n)
    total = oar.where(total > 0, total, oar.ones_like(total))
    return e / oar.gather(total, seg)


def attention(query, key, value, sparse_mask, key_padding_mask=None, attn_mask=None, name=None):
    """softmax(q k^T / sqrt(head_dim)) v, with the attention scores computed and normalised only at the
    stored entries of sparse_mask: a CSR tensor [batch * num_heads, seq_len, seq_len] (its values unused).

    query, key and value are dense [batch, num_heads, seq_len, head_dim]. key_padding_mask [batch, seq_len]
    and attn_mask [seq_len, seq_len] hide the entries where they are 0; a row with nothing left gives zeros.
    Memory and work scale with the mask's nnz, not seq_len ** 2. Differentiable in query, key and value.

    >>> import oar
    >>> q = oar.to_tensor([[[[1.0, 0.0], [0.0, 1.0]]]])
    >>> mask = oar.sparse.sparse_csr_tensor([0, 1, 3], [0, 0, 1], [1.0, 1.0, 1.0], [1, 2, 2])
    >>> out = oar.sparse.nn.functional.attention(q, q, q, mask)
    >>> [[round(v, 4) for v in row] for row in out[0, 0].numpy().tolist()]
    [[1.0, 0.0], [0.3302, 0.6698]]
    """
    import math
    import oar
    from ..matmul import _coords, masked_matmul, matmul
    api = "oar.sparse.nn.functional.attention"
    for nm, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, _C.Tensor) or t.ndim != 4:
            raise ValueError(f"[{api}] {nm} must be a dense 4-D Tensor [batch, num_heads, seq_len, head_dim], "
                             f"got {type(t).__name__}" + (f" of shape {t.shape}" if isinstance(t, _C.Tensor) else ""))
    b, h, s, d = query.shape
    if list(key.shape) != [b, h, s, d] or list(value.shape) != [b, h, s, d]:
        raise ValueError(f"[{api}] query, key and value must share one shape, got {query.shape}, {key.shape} and "
                         f"{value.shape}")
    if not isinstance(sparse_mask, SparseCsrTensor) or sparse_mask.shape != [b * h, s, s]:
        raise ValueError(f"[{api}] sparse_mask must be a SparseCsrTensor of shape [batch * num_heads, seq_len, "
                         f"seq_len] = {[b * h, s, s]}, got {type(sparse_mask).__name__}"
                         + (f" of shape {sparse_mask.shape}" if hasattr(sparse_mask, "shape") else ""))
    q, k, v = (t.reshape([b * h, s, d]) for t in (query, key, value))
    scores = masked_matmul(q, oar.transpose(k, [0, 2, 1]), sparse_mask)
    bi, r, c = _coords(sparse_mask)
    keep = None
    for nm, m, shape, pos in (("key_padding_mask", key_padding_mask, [b, s], (bi // h) * s + c),
                              ("attn_mask", attn_mask, [s, s], r * s + c)):
        if m is None:
            continue
        if not isinstance(m, _C.Tensor) or list(m.shape) != shape:
            raise ValueError(f"[{api}] {nm} must be a dense Tensor of shape {shape}, got {type(m).__name__}"
                             + (f" of shape {m.shape}" if isinstance(m, _C.Tensor) else ""))
        ok = oar.gather(m.reshape([-1]), pos) != 0
        keep = ok if keep is None else oar.logical_and(keep, ok)
    probs = _group_softmax(scores._values / math.sqrt(d), bi * s + r, b * h * s, keep)
    return matmul(sparse_mask._with_values(probs), v).reshape([b, h, s, d])


from .conv import (conv2d, conv3d, max_pool3d, subm_conv2d, subm_conv2d_igemm, subm_conv3d,  # noqa: E402,F401
                   subm_conv3d_igemm)


ix.scope_module(globals())  # Note [device scope]: sparse arguments count as their values
