"""oar.nn.functional.sparse_attention: attention restricted to a CSR sparsity layout.

Paddle runs it as a CUDA kernel; here the layout becomes a dense keep mask for the
masked attention of flash_attention.py (same result, dense cost), so it runs on any
device and is differentiable.
"""
import math

from ... import _C
from .flash_attention import _attend, _check_qkv, _dname

__all__ = ["sparse_attention"]


def _csr_keep(offset, columns, m, api):
    """[B, H, M, M] bool: row r keeps the columns columns[offset[r]:offset[r + 1]]."""
    import oar

    nnz = columns.shape[-1]
    if not _C._ir_is_tracing():
        off = offset.numpy()
        if (off[..., 0] != 0).any() or (off[..., 1:] < off[..., :-1]).any() or (off[..., -1] > nnz).any():
            raise ValueError(f"[{api}] sparse_csr_offset must start at 0, be non-decreasing and end at most at "
                             f"sparse_nnz ({nnz})")
        if nnz and (int(columns.min()) < 0 or int(columns.max()) >= m):
            raise ValueError(f"[{api}] sparse_csr_columns must be in [0, {m}), got values in "
                             f"[{int(columns.min())}, {int(columns.max())}]")
    b, h = offset.shape[0], offset.shape[1]
    pos = oar.arange(nnz, dtype="int64").reshape([1, 1, nnz, 1])
    ends = _C.strided_slice(offset.astype("int64"), [2], [1], [m + 1], [1]).unsqueeze(2)  # [B, H, 1, M]
    row = (pos >= ends).astype("int64").sum(axis=-1)  # [B, H, nnz]; entries past offset[-1] land on row M
    valid = (row < m).astype("float32")
    flat = oar.minimum(row, oar.full([], m - 1, dtype="int64")) * m + columns.astype("int64")
    grid = _C._put_along_axis(oar.zeros([b, h, m * m], dtype="float32"), flat, valid, 2, "add", True, True)
    return (grid > 0).reshape([b, h, m, m])


def sparse_attention(query, key, value, sparse_csr_offset, sparse_csr_columns, key_padding_mask=None,
                     attn_mask=None, name=None):
    """softmax(q k^T / sqrt(head_dim)) v over the entries of a CSR layout, for query, key and value of
    shape [batch, num_heads, seq_len, head_dim].

    sparse_csr_offset [batch, num_heads, seq_len + 1] and sparse_csr_columns [batch, num_heads, nnz]
    (int32) list the key columns each query row attends to. key_padding_mask [batch, seq_len] and
    attn_mask [seq_len, seq_len] hide the entries where they are 0. Rows with nothing left give zeros.

    >>> import oar
    >>> x = oar.to_tensor([[[[0.0, 1.0], [2.0, 3.0], [0.0, 1.0], [2.0, 3.0]]]])
    >>> offset = oar.to_tensor([[[0, 2, 4, 6, 8]]], dtype="int32")
    >>> columns = oar.to_tensor([[[0, 1, 0, 1, 2, 3, 2, 3]]], dtype="int32")
    >>> y = oar.nn.functional.sparse_attention(x, x, x, offset, columns)
    >>> [[round(v, 4) for v in row] for row in y[0, 0].numpy().tolist()]
    [[1.6089, 2.6089], [1.9983, 2.9983], [1.6089, 2.6089], [1.9983, 2.9983]]
    """
    import oar

    api = "oar.nn.functional.sparse_attention"
    _check_qkv(api, query=query, key=key, value=value)
    if query.ndim != 4 or list(key.shape) != list(query.shape) or list(value.shape) != list(query.shape):
        raise ValueError(f"[{api}] query, key and value must share one 4-D shape [batch, num_heads, seq_len, "
                         f"head_dim], got {query.shape}, {key.shape}, {value.shape}")
    b, h, m, d = query.shape
    for nm, t in (("sparse_csr_offset", sparse_csr_offset), ("sparse_csr_columns", sparse_csr_columns)):
        if not isinstance(t, _C.Tensor) or _dname(t) not in ("int32", "int64"):
            raise TypeError(f"[{api}] {nm} must be an int32 tensor")
        if t.ndim != 3 or list(t.shape[:2]) != [b, h]:
            raise ValueError(f"[{api}] {nm} must have shape [{b}, {h}, ...], got {t.shape}")
    if sparse_csr_offset.shape[2] != m + 1:
        raise ValueError(f"[{api}] sparse_csr_offset must have shape [{b}, {h}, {m + 1}], got "
                         f"{sparse_csr_offset.shape}")
    keep = _csr_keep(sparse_csr_offset, sparse_csr_columns, m, api)
    if key_padding_mask is not None:
        if not isinstance(key_padding_mask, _C.Tensor) or list(key_padding_mask.shape) != [b, m]:
            raise ValueError(f"[{api}] key_padding_mask must have shape [{b}, {m}], got "
                             f"{getattr(key_padding_mask, 'shape', key_padding_mask)!r}")
        keep = oar.logical_and(keep, (key_padding_mask != 0).reshape([b, 1, 1, m]))
    if attn_mask is not None:
        if not isinstance(attn_mask, _C.Tensor) or list(attn_mask.shape) != [m, m]:
            raise ValueError(f"[{api}] attn_mask must have shape [{m}, {m}], got "
                             f"{getattr(attn_mask, 'shape', attn_mask)!r}")
        keep = oar.logical_and(keep, (attn_mask != 0).reshape([1, 1, m, m]))
    t = [x.transpose([0, 2, 1, 3]) for x in (query, key, value)]
    out, _, _ = _attend(t[0], t[1], t[2], keep, 1.0 / math.sqrt(d), 0.0, False)
    return out.transpose([0, 2, 1, 3])
