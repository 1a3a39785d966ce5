"""oar.nn.functional.flash_attention: Paddle's flash-attention entry points over oar ops.

Paddle runs these as fused GPU kernels for float16/bfloat16. Here each is the same
computation written with matmul, softmax and masks (any floating dtype, any device,
differentiable to any order): scores = q k^T * scale, masked entries excluded, rows
with every entry masked give zeros (as the kernels do), dropout on the probabilities
when training. Inputs use Paddle's [batch, seq_len, num_heads, head_dim] layout;
keys/values with fewer heads serve groups of query heads (query head h reads key
head h // (num_heads / num_heads_k)). Causal masks with seq_len_q != seq_len_k are
aligned to the bottom-right corner, as in FlashAttention 2.

Not provided: seeds/offsets of the kernels' dropout generator (``fixed_seed_offset``,
``return_seed_offset``); dropout draws from oar's global generator.

``flash_attention`` (the function) is reached as
``oar.nn.functional.flash_attention.flash_attention``, as in Paddle, where
``paddle.nn.functional.flash_attention`` is this module.
"""
import math
import numbers

import numpy as np

from ... import _C

__all__ = ["flash_attn_qkvpacked", "flash_attn_varlen_qkvpacked", "flashmask_attention", "flash_attention_v3_varlen"]

_LOW = ("float16", "bfloat16")


def _dname(t):
    return str(t.dtype).split(".")[-1]


def _check_qkv(api, **tensors):
    for nm, t in tensors.items():
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"[{api}] {nm} must be a Tensor, got {type(t).__name__}")
        if not t.dtype.is_floating_point:
            raise TypeError(f"[{api}] {nm} must be floating point, got {t.dtype}")


def _check_dropout(p, api):
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"[{api}] dropout must be a number in [0, 1], got {p!r}")
    return float(p)


def _no_fixed_seed(fixed_seed_offset, api):
    if fixed_seed_offset is not None:
        raise ValueError(f"[{api}] fixed_seed_offset is not supported: dropout draws from oar's global generator "
                         f"(set it with oar.seed)")


def _causal_keep(lq, lk):
    """[lq, lk] bool: query i sees key j when j <= i + (lk - lq) (bottom-right aligned)."""
    i = np.arange(lq)[:, None]
    j = np.arange(lk)[None, :]
    return j <= i + (lk - lq)


def _to_bool(a):
    import oar

    return oar.to_tensor(np.ascontiguousarray(a))


def _and(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return _C.logical_and(a, b)


def _attend(q, k, v, keep, scale, dropout, training, want_probs=False, want_lse=False, softcap=0.0):
    """q [B, Sq, H, D], k/v [B, Sk, Hk, D], keep None or bool broadcastable to [B, H, Sq, Sk].

    Returns (out [B, Sq, H, D], probs [B, H, Sq, Sk] or None, lse [B, H, Sq] float32 or None).
    """
    import oar

    h, hk = q.shape[2], k.shape[2]
    if hk != h:
        k = oar.repeat_interleave(k, h // hk, axis=2)
        v = oar.repeat_interleave(v, h // hk, axis=2)
    out_dtype = _dname(q)
    if out_dtype in _LOW:  # accumulate the scores and softmax in float32
        q, k, v = q.astype("float32"), k.astype("float32"), v.astype("float32")
    q, k, v = (t.transpose([0, 2, 1, 3]) for t in (q, k, v))
    s = oar.matmul(q, k, transpose_y=True) * scale
    if softcap > 0:
        s = oar.tanh(s / softcap) * softcap
    if keep is not None:
        lowest = float(oar.finfo(_dname(s)).min)
        s = oar.where(keep, s, oar.full([], lowest, dtype=_dname(s)))
        p = oar.nn.functional.softmax(s, axis=-1) * keep.astype(_dname(s))
    else:
        p = oar.nn.functional.softmax(s, axis=-1)
    lse = None
    if want_lse:
        masked = s if keep is None else oar.where(keep, s, oar.full([], -math.inf, dtype=_dname(s)))
        lse = oar.logsumexp(masked, axis=-1).astype("float32")
    pd = p
    if training and dropout > 0.0:
        from .extension import _dropout

        pd = _dropout(p, dropout, True, "flash_attention")
    out = oar.matmul(pd, v).transpose([0, 2, 1, 3])
    if out_dtype in _LOW:
        out = out.astype(out_dtype)
        p = p.astype(out_dtype)
    return out, (p if want_probs else None), lse


def _check_heads(q, k, v, api):
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(f"[{api}] query, key and value must be 4-D [batch, seq_len, num_heads, head_dim], "
                         f"got {q.shape}, {k.shape}, {v.shape}")
    b, _, h, d = q.shape
    if k.shape != v.shape or k.shape[0] != b or k.shape[3] != d:
        raise ValueError(f"[{api}] incompatible shapes query {q.shape}, key {k.shape}, value {v.shape}")
    if k.shape[2] == 0 or h % k.shape[2]:
        raise ValueError(f"[{api}] query heads ({h}) must be a multiple of key heads ({k.shape[2]})")


def _varlen_attend(q, k, v, q_rows, k_rows, lq, lk, scale, dropout, causal, training, want_probs, window=None,
                   softcap=0.0, want_lse=False):
    """Gathers each sequence's rows (q_rows [B, max_q], k_rows [B, max_k] of row ids) into a padded
    batch, attends with the padding masked, and returns (out [B, max_q, H, D], probs or None, lse or None)."""
    import oar

    batch, mq, mk = q_rows.shape[0], q_rows.shape[1], k_rows.shape[1]
    d = q.shape[-1]

    def gather(t, rows):
        idx = oar.to_tensor(rows.reshape(-1).astype(np.int64))
        return oar.gather(t, idx, axis=0).reshape([batch, rows.shape[1], t.shape[1], d])

    keep = (np.arange(mq)[None, :, None] < lq[:, None, None]) & (np.arange(mk)[None, None, :] < lk[:, None, None])
    i = np.arange(mq)[None, :, None] + (lk - lq)[:, None, None]  # query row aligned to the key axis
    j = np.arange(mk)[None, None, :]
    if causal:
        keep &= j <= i
    if window is not None:
        left, right = window
        if left >= 0:
            keep &= j >= i - left
        if right >= 0:
            keep &= j <= i + right
    return _attend(gather(q, q_rows), gather(k, k_rows), gather(v, k_rows), _to_bool(keep[:, None]), scale,
                   dropout, training, want_probs=want_probs, want_lse=want_lse, softcap=softcap)


def _unpadded_rows(cu, m, total):
    return np.minimum(cu[:-1, None] + np.arange(m)[None, :], max(total - 1, 0))


def _scatter_rows(out, cu, lens, total):
    """Row r of sequence b of the result reads out[b, r - cu[b]]; rows outside every sequence are zeros."""
    import oar

    batch, m, h, d = out.shape
    src = np.full(total, batch * m, dtype=np.int64)
    for b in range(batch):
        src[cu[b]:cu[b + 1]] = b * m + np.arange(lens[b])
    flat = oar.concat([out.reshape([batch * m, h, d]), oar.zeros([1, h, d], dtype=_dname(out))], axis=0)
    return oar.gather(flat, oar.to_tensor(src), axis=0)


def flash_attention(query, key, value, dropout=0.0, causal=False, return_softmax=False, *, fixed_seed_offset=None,
                    rng_name="", training=True, name=None, softmax_scale=None):
    """softmax(q k^T * softmax_scale) v for [batch, seq_len, num_heads, head_dim] inputs; returns
    (out, softmax) where softmax (the probabilities before dropout) is None unless asked for.

    >>> import oar
    >>> from oar.nn.functional.flash_attention import flash_attention
    >>> q = oar.ones([1, 3, 2, 4])
    >>> out, p = flash_attention(q, q, q, causal=True, return_softmax=True)
    >>> out.shape, [[round(x, 3) for x in row] for row in p[0, 0].numpy().tolist()]
    ([1, 3, 2, 4], [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.333, 0.333, 0.333]])
    """
    api = "oar.nn.functional.flash_attention.flash_attention"
    _check_qkv(api, query=query, key=key, value=value)
    _check_heads(query, key, value, api)
    dropout = _check_dropout(dropout, api)
    _no_fixed_seed(fixed_seed_offset, api)
    scale = 1.0 / math.sqrt(query.shape[3]) if softmax_scale is None else float(softmax_scale)
    keep = _to_bool(_causal_keep(query.shape[1], key.shape[1])) if causal else None
    out, p, _ = _attend(query, key, value, keep, scale, dropout, training, want_probs=return_softmax)
    return out, p


def _unpack(qkv, api):
    """[..., G + 2, Hk, D] -> q [..., G * Hk, D], k, v [..., Hk, D]."""
    g2 = qkv.shape[-3]
    if g2 < 3:
        raise ValueError(f"[{api}] qkv.shape[-3] must be num_heads / num_heads_k + 2 >= 3, got shape {qkv.shape}")
    lead = list(qkv.shape[:-3])
    hk, d = qkv.shape[-2], qkv.shape[-1]
    ax = len(lead)
    q = _C.strided_slice(qkv, [ax], [0], [g2 - 2], [1]).reshape(lead + [(g2 - 2) * hk, d])
    k = _C.strided_slice(qkv, [ax], [g2 - 2], [g2 - 1], [1]).reshape(lead + [hk, d])
    v = _C.strided_slice(qkv, [ax], [g2 - 1], [g2], [1]).reshape(lead + [hk, d])
    return q, k, v


def flash_attn_qkvpacked(qkv, dropout=0.0, causal=False, return_softmax=False, *, fixed_seed_offset=None,
                         rng_name="", training=True, name=None):
    """Attention over a packed qkv of shape [batch, seq_len, num_heads / num_heads_k + 2, num_heads_k, head_dim]
    (the query heads first, then the key and the value); returns (out [batch, seq_len, num_heads, head_dim],
    softmax or None).

    >>> import oar
    >>> qkv = oar.ones([2, 5, 3, 2, 8])
    >>> out, _ = oar.nn.functional.flash_attn_qkvpacked(qkv, causal=True)
    >>> out.shape
    [2, 5, 2, 8]
    """
    api = "oar.nn.functional.flash_attn_qkvpacked"
    _check_qkv(api, qkv=qkv)
    if qkv.ndim != 5:
        raise ValueError(f"[{api}] qkv must be 5-D [batch, seq_len, num_heads / num_heads_k + 2, num_heads_k, "
                         f"head_dim], got shape {qkv.shape}")
    dropout = _check_dropout(dropout, api)
    _no_fixed_seed(fixed_seed_offset, api)
    q, k, v = _unpack(qkv, api)
    keep = _to_bool(_causal_keep(q.shape[1], k.shape[1])) if causal else None
    out, p, _ = _attend(q, k, v, keep, 1.0 / math.sqrt(q.shape[3]), dropout, training, want_probs=return_softmax)
    return out, p


def _cu_lengths(cu, api, what):
    if not isinstance(cu, _C.Tensor) or _dname(cu) not in ("int32", "int64") or cu.ndim != 1 or cu.shape[0] < 2:
        raise ValueError(f"[{api}] {what} must be a 1-D int32 tensor of batch_size + 1 offsets, got "
                         f"{getattr(cu, 'shape', cu)!r}")
    c = cu.numpy().astype(np.int64)
    lens = np.diff(c)
    if c[0] != 0 or (lens < 0).any():
        raise ValueError(f"[{api}] {what} must start at 0 and be non-decreasing, got {c.tolist()}")
    return c, lens


def flash_attn_varlen_qkvpacked(qkv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, dropout=0.0,
                                causal=False, return_softmax=False, fixed_seed_offset=None, rng_name="",
                                varlen_padded=True, training=True, name=None):
    """Attention over variable-length sequences packed along the first axis of
    qkv [total_seq_len, num_heads / num_heads_k + 2, num_heads_k, head_dim].

    Sequence b has cu_seqlens[b + 1] - cu_seqlens[b] tokens. With varlen_padded (the default) it
    starts at row b * max_seqlen and the rows up to the next sequence are padding; otherwise it
    occupies rows cu_seqlens[b] to cu_seqlens[b + 1]. Padding rows of the output are zeros.
    Returns (out [total_seq_len, num_heads, head_dim], softmax [batch, num_heads, max_seqlen_q,
    max_seqlen_k] or None).

    >>> import oar
    >>> qkv = oar.rand([8, 3, 1, 4])
    >>> cu = oar.to_tensor([0, 3, 4], dtype="int32")
    >>> out, _ = oar.nn.functional.flash_attn_varlen_qkvpacked(qkv, cu, cu, 4, 4, 0.5)
    >>> out.shape, out[3].abs().sum().item(), out[5:].abs().sum().item()
    ([8, 1, 4], 0.0, 0.0)
    """
    api = "oar.nn.functional.flash_attn_varlen_qkvpacked"
    _check_qkv(api, qkv=qkv)
    if qkv.ndim != 4:
        raise ValueError(f"[{api}] qkv must be 4-D [total_seq_len, num_heads / num_heads_k + 2, num_heads_k, "
                         f"head_dim], got shape {qkv.shape}")
    dropout = _check_dropout(dropout, api)
    _no_fixed_seed(fixed_seed_offset, api)
    cq, lq = _cu_lengths(cu_seqlens_q, api, "cu_seqlens_q")
    ck, lk = _cu_lengths(cu_seqlens_k, api, "cu_seqlens_k")
    if len(lq) != len(lk):
        raise ValueError(f"[{api}] cu_seqlens_q and cu_seqlens_k must hold the same batch size, got "
                         f"{len(lq)} and {len(lk)}")
    mq, mk = int(max_seqlen_q), int(max_seqlen_k)
    if (lq > mq).any() or (lk > mk).any():
        raise ValueError(f"[{api}] sequence lengths {lq.tolist()} / {lk.tolist()} exceed max_seqlen_q={mq} / "
                         f"max_seqlen_k={mk}")
    batch, total = len(lq), qkv.shape[0]
    if varlen_padded:
        if mq != mk or total != batch * mq:
            raise ValueError(f"[{api}] with varlen_padded the packed qkv needs total_seq_len == batch_size * "
                             f"max_seqlen ({batch} * {mq}) and max_seqlen_q == max_seqlen_k, got total_seq_len "
                             f"{total}, max_seqlen_k {mk}")
        q_rows = np.arange(batch * mq).reshape(batch, mq)
        k_rows = np.arange(batch * mk).reshape(batch, mk)
    else:
        if cq[-1] > total or ck[-1] > total:
            raise ValueError(f"[{api}] cu_seqlens reach row {max(cq[-1], ck[-1])} but qkv has {total} rows")
        q_rows, k_rows = _unpadded_rows(cq, mq, total), _unpadded_rows(ck, mk, total)
    q, k, v = _unpack(qkv, api)
    out, p, _ = _varlen_attend(q, k, v, q_rows, k_rows, lq, lk, float(scale), dropout, causal, training,
                               return_softmax)
    if varlen_padded:
        # Rows past each sequence's length are fully masked, hence already zeros.
        return out.reshape([total] + list(out.shape[2:])), p
    return _scatter_rows(out, cq, lq, total), p


def _flashmask_keep(startend, causal, sq, sk, api):
    """Dense keep mask [B, Hm, Sq, Sk] from FlashMask's per-column row bounds."""
    import oar

    c = startend.shape[-1]
    if causal and c not in (1, 2) or not causal and c not in (2, 4):
        raise ValueError(f"[{api}] startend_row_indices.shape[-1] must be {'1 or 2' if causal else '2 or 4'} when "
                         f"causal={causal}, got {c}")
    rows = oar.arange(sq, dtype="int64").reshape([1, 1, sq, 1])
    b = startend.astype("int64")

    def bound(i):
        return _C.strided_slice(b, [3], [i], [i + 1], [1]).transpose([0, 1, 3, 2])  # [B, H, 1, Sk]

    if c == 1:
        masked = rows >= bound(0)
    elif c == 2 and causal:
        masked = _C.logical_and(rows >= bound(0), rows < bound(1))
    elif c == 2:
        masked = _C.logical_or(rows >= bound(0), rows < bound(1))
    else:
        masked = _C.logical_or(_C.logical_and(rows >= bound(0), rows < bound(1)),
                               _C.logical_and(rows >= bound(2), rows < bound(3)))
    return _C.logical_not(masked)


def flashmask_attention(query, key, value, startend_row_indices=None, *, dropout=0.0, causal=False,
                        window_size=None, return_softmax_lse=False, return_seed_offset=False,
                        fixed_seed_offset=None, rng_name="", training=True, name=None, softmax_scale=None,
                        block_mask=None):
    """Attention with FlashMask's column-wise sparse mask.

    startend_row_indices [batch, 1 or num_heads_k, k_seq_len, n] (int32) gives, per key column,
    the rows it is hidden from: n = 1 (causal): rows >= start; n = 2 (causal): start <= row < end;
    n = 2 (not causal): rows >= lower start or rows < upper end; n = 4 (not causal): the rows in
    [lower start, lower end) or [upper start, upper end). window_size w (or (left, right)) keeps
    keys in [i - left, i] when causal, [i - left, i + right] otherwise; block_mask
    [batch, num_heads, ceil(q_seq_len / 128), ceil(k_seq_len / 128)] keeps the 128 x 128 blocks
    marked 1. Returns out [batch, q_seq_len, num_heads, head_dim], and the float32 log-sum-exp
    [batch, num_heads, q_seq_len] of the masked scores with return_softmax_lse.

    >>> import oar
    >>> q = oar.ones([1, 4, 1, 8])
    >>> v = oar.arange(4, dtype="float32").reshape([1, 4, 1, 1]).expand([1, 4, 1, 8])
    >>> se = oar.to_tensor([2, 4, 4, 4], dtype="int32").reshape([1, 1, 4, 1])
    >>> out = oar.nn.functional.flashmask_attention(q, q, v, se, causal=True)
    >>> out[0, :, 0, 0].numpy().tolist()
    [0.0, 0.5, 1.5, 2.0]
    """
    import oar

    api = "oar.nn.functional.flashmask_attention"
    _check_qkv(api, query=query, key=key, value=value)
    _check_heads(query, key, value, api)
    dropout = _check_dropout(dropout, api)
    _no_fixed_seed(fixed_seed_offset, api)
    if return_seed_offset:
        raise ValueError(f"[{api}] return_seed_offset is not supported: dropout draws from oar's global generator")
    bsz, sq, h, d = query.shape
    sk, hk = key.shape[1], key.shape[2]
    keep = _to_bool(_causal_keep(sq, sk)) if causal else None
    if window_size is not None:
        if isinstance(window_size, numbers.Integral):
            left, right = int(window_size), int(window_size)
        elif isinstance(window_size, (list, tuple)) and len(window_size) == 2:
            left, right = int(window_size[0]), int(window_size[1])
        else:
            raise ValueError(f"[{api}] window_size must be an int or a pair of ints, got {window_size!r}")
        i = np.arange(sq)[:, None] + (sk - sq)
        j = np.arange(sk)[None, :]
        win = (j >= i - left) if left >= 0 else np.ones((sq, sk), bool)
        if not causal and right >= 0:
            win &= j <= i + right
        keep = _and(keep, _to_bool(win))
    if startend_row_indices is not None:
        se = startend_row_indices
        if not isinstance(se, _C.Tensor) or _dname(se) not in ("int32", "int64"):
            raise TypeError(f"[{api}] startend_row_indices must be an int32 tensor")
        if se.ndim != 4 or se.shape[0] != bsz or se.shape[2] != sk or se.shape[1] not in (1, hk):
            raise ValueError(f"[{api}] startend_row_indices must have shape [{bsz}, 1 or {hk}, {sk}, n], got "
                             f"{se.shape}")
        m = _flashmask_keep(se, causal, sq, sk, api)
        if se.shape[1] != 1 and h != hk:
            m = oar.repeat_interleave(m, h // hk, axis=1)
        keep = _and(keep, m)
    if block_mask is not None:
        nbq, nbk = -(-sq // 128), -(-sk // 128)
        if not isinstance(block_mask, _C.Tensor) or block_mask.ndim != 4 or block_mask.shape[0] != bsz or \
                block_mask.shape[1] not in (1, h) or block_mask.shape[2:] != [nbq, nbk]:
            raise ValueError(f"[{api}] block_mask must have shape [{bsz}, {h}, {nbq}, {nbk}], got "
                             f"{getattr(block_mask, 'shape', block_mask)!r}")
        bm = oar.repeat_interleave(oar.repeat_interleave(block_mask != 0, 128, axis=2), 128, axis=3)
        keep = _and(keep, bm[:, :, :sq, :sk])
    scale = 1.0 / math.sqrt(d) if softmax_scale is None else float(softmax_scale)
    out, _, lse = _attend(query, key, value, keep, scale, dropout, training, want_lse=return_softmax_lse)
    return (out, lse) if return_softmax_lse else out


def flash_attn_unpadded(query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale,
                        dropout=0.0, causal=False, return_softmax=False, fixed_seed_offset=None, rng_name="",
                        training=True, name=None):
    """Variable-length attention on unpadded query [total_q, num_heads, head_dim] and key/value
    [total_k, num_heads_k, head_dim]; sequence b spans rows cu_seqlens[b] to cu_seqlens[b + 1].
    Returns (out [total_q, num_heads, head_dim], softmax or None).

    >>> import oar
    >>> from oar.nn.functional.flash_attention import flash_attn_unpadded
    >>> q = oar.rand([5, 2, 4]); cu = oar.to_tensor([0, 2, 5], dtype="int32")
    >>> flash_attn_unpadded(q, q, q, cu, cu, 3, 3, 0.5)[0].shape
    [5, 2, 4]
    """
    api = "oar.nn.functional.flash_attention.flash_attn_unpadded"
    cq, lq, ck, lk, mq, mk = _check_unpadded(query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                             max_seqlen_k, api)
    dropout = _check_dropout(dropout, api)
    _no_fixed_seed(fixed_seed_offset, api)
    out, p, _ = _varlen_attend(query, key, value, _unpadded_rows(cq, mq, query.shape[0]),
                               _unpadded_rows(ck, mk, key.shape[0]), lq, lk, float(scale), dropout, causal,
                               training, return_softmax)
    return _scatter_rows(out, cq, lq, query.shape[0]), p


def _check_unpadded(query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, api):
    """Shapes of unpadded varlen inputs -> (cq, lq, ck, lk, max_q, max_k) as NumPy/ints."""
    _check_qkv(api, query=query, key=key, value=value)
    if query.ndim != 3 or key.ndim != 3 or key.shape != value.shape:
        raise ValueError(f"[{api}] query must be [total_q, num_heads, head_dim] and key/value "
                         f"[total_k, num_heads_k, head_dim], got {query.shape}, {key.shape}, {value.shape}")
    h, hk = query.shape[1], key.shape[1]
    if hk == 0 or h % hk or query.shape[2] != key.shape[2]:
        raise ValueError(f"[{api}] query heads ({h}) must be a multiple of key heads ({hk}) with one head_dim, "
                         f"got {query.shape} and {key.shape}")
    cq, lq = _cu_lengths(cu_seqlens_q, api, "cu_seqlens_q")
    ck, lk = _cu_lengths(cu_seqlens_k, api, "cu_seqlens_k")
    if len(lq) != len(lk):
        raise ValueError(f"[{api}] cu_seqlens_q and cu_seqlens_k must hold the same batch size, got "
                         f"{len(lq)} and {len(lk)}")
    mq, mk = int(max_seqlen_q), int(max_seqlen_k)
    if (lq > mq).any() or (lk > mk).any() or cq[-1] > query.shape[0] or ck[-1] > key.shape[0]:
        raise ValueError(f"[{api}] cu_seqlens {cq.tolist()} / {ck.tolist()} do not fit max_seqlen_q={mq}, "
                         f"max_seqlen_k={mk} and inputs of {query.shape[0]} / {key.shape[0]} rows")
    return cq, lq, ck, lk, mq, mk


def flash_attn_varlen_func(query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_q=None,
                           seqused_k=None, softmax_scale=None, causal=False, qv=None, q_descale=None, k_descale=None,
                           v_descale=None, window_size=(-1, -1), softcap=0.0, num_splits=1, pack_gqa=None,
                           sm_margin=0):
    """FlashAttention-3's variable-length attention on unpadded query [total_q, num_heads, head_dim] and
    key/value [total_k, num_heads_k, head_dim]; sequence b spans rows cu_seqlens[b] to cu_seqlens[b + 1],
    of which only the first seqused[b] take part when seqused is given.

    window_size (left, right) limits the keys to [i - left, i + right] (-1: unbounded), softcap > 0
    caps the scores with softcap * tanh(s / softcap). Returns (out [total_q, num_heads, head_dim],
    softmax_lse [num_heads, total_q] float32, 0 on rows outside every sequence). num_splits,
    pack_gqa and sm_margin only tune the GPU kernel and are accepted as they are.

    >>> import oar
    >>> q = oar.rand([5, 2, 4]); cu = oar.to_tensor([0, 2, 5], dtype="int32")
    >>> out, lse = oar.nn.functional.flash_attention_v3_varlen(q, q, q, cu, cu, 3, 3, causal=True)
    >>> out.shape, lse.shape
    ([5, 2, 4], [2, 5])
    """
    api = "oar.nn.functional.flash_attention_v3_varlen"
    for nm, t in (("qv", qv), ("q_descale", q_descale), ("k_descale", k_descale), ("v_descale", v_descale)):
        if t is not None:
            raise ValueError(f"[{api}] {nm} is not supported (it belongs to the FP8/extra-value paths of the "
                             f"FlashAttention-3 kernel)")
    cq, lq, ck, lk, mq, mk = _check_unpadded(query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                             max_seqlen_k, api)
    for nm, used, lens in (("seqused_q", seqused_q, lq), ("seqused_k", seqused_k, lk)):
        if used is not None:
            u = used.numpy().astype(np.int64).reshape(-1) if isinstance(used, _C.Tensor) else np.asarray(used)
            if u.shape != lens.shape or (u < 0).any() or (u > lens).any():
                raise ValueError(f"[{api}] {nm} must hold {len(lens)} lengths within {lens.tolist()}, got "
                                 f"{u.tolist()}")
            lens[:] = u
    if not (isinstance(window_size, (list, tuple)) and len(window_size) == 2):
        raise ValueError(f"[{api}] window_size must be a pair (left, right), got {window_size!r}")
    scale = query.shape[-1] ** -0.5 if softmax_scale is None else float(softmax_scale)
    out, _, lse = _varlen_attend(query, key, value, _unpadded_rows(cq, mq, query.shape[0]),
                                 _unpadded_rows(ck, mk, key.shape[0]), lq, lk, scale, 0.0, causal, False, False,
                                 window=(int(window_size[0]), int(window_size[1])), softcap=float(softcap),
                                 want_lse=True)
    lse = _scatter_rows(lse.transpose([0, 2, 1]).unsqueeze(-1), cq, lq, query.shape[0])  # [total_q, H, 1]
    return _scatter_rows(out, cq, lq, query.shape[0]), lse.squeeze(-1).transpose([1, 0])


flash_attention_v3_varlen = flash_attn_varlen_func
