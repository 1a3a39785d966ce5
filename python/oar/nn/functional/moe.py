"""Token permutation for mixture-of-experts layers: ``moe_permute`` / ``moe_unpermute`` (Paddle's names).

Note [moe permute layout]
Each token (a row of ``hidden_states``) is routed to up to ``topk`` experts
(``expert_routemap_topk[t, k]``, -1 for an unused slot). ``moe_permute`` copies
each token once per expert it is routed to into one buffer laid out expert by
expert: expert ``e`` owns ``ceil(tokens_per_expert[e] / padding_alignment) *
padding_alignment`` rows, starting after the rows of experts ``0 .. e-1``; its
tokens fill them in token order and the remaining rows are padding (zeros, with
probability 0 and expert index -1). ``zipped_expertwise_rowmap[t, e]`` is the
buffer row of token ``t`` for expert ``e``, or -1. ``moe_unpermute`` sums, per
token, its rows of the buffer (weighted by their probabilities when asked) and
gathers the probabilities back into the ``[tokens, topk]`` layout.

Both are composites of gathers and scatters, so gradients flow to
``hidden_states`` and ``hidden_states_unzipped`` (and to the probabilities where
they are used as weights). ``tokens_per_expert`` is a Python list, as in
Paddle: it fixes the buffer's size, and it must hold each expert's count.
"""
import numpy as np

from ... import _C

__all__ = ["moe_permute", "moe_unpermute"]


def _int(api, name, v, lo):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"[{api}] {name} must be an int, got {type(v).__name__}")
    if v < lo:
        raise ValueError(f"[{api}] {name} must be >= {lo}, got {v}")
    return int(v)


def _tensor(api, name, t, ndim, ints=False):
    if not isinstance(t, _C.Tensor):
        raise TypeError(f"[{api}] {name} must be a Tensor, got {type(t).__name__}")
    if t.ndim != ndim:
        raise ValueError(f"[{api}] {name} must be {ndim}-D, got shape {list(t.shape)}")
    if ints and t.dtype.name not in ("int32", "int64"):
        raise TypeError(f"[{api}] {name} must be int32 or int64, got {t.dtype.name}")


def _routed(routemap, num_experts):
    """[tokens, num_experts] bool: whether each token goes to each expert."""
    import oar

    experts = oar.arange(num_experts, dtype=routemap.dtype)
    return oar.any(routemap.unsqueeze(-1) == experts, axis=1)


def moe_permute(hidden_states, scale, expert_routemap_topk, expert_prob_topk, num_experts, tokens_per_expert,
                padding_alignment, do_gather=True, using_ue8m0_scale=False, return_expert_indices=False,
                override_buffer_size=-1, name=None):
    """Copies each token to the buffer rows of the experts it is routed to (Note [moe permute layout]).

    Returns ``(hidden_states_unzipped [rows, dim], zipped_expertwise_rowmap [tokens,
    num_experts] int32, token_prob_unzipped [rows] float32, scale_unzipped [rows,
    scale_dim])`` and, with ``return_expert_indices``, the expert of each row
    (-1 for padding). ``scale`` (per-token scaling factors of quantised inputs, or
    None) is permuted like the tokens; ``do_gather=False`` leaves the token buffer
    zero and computes only the maps; ``override_buffer_size`` (> 0) sets the number
    of rows. ``padding_alignment`` rounds each expert's rows up to a multiple.

    >>> import oar
    >>> import oar.nn.functional as F
    >>> x = oar.to_tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> routes = oar.to_tensor([[0, 2], [1, -1], [1, 0]], dtype="int32")
    >>> probs = oar.to_tensor([[0.6, 0.4], [1.0, 0.0], [0.5, 0.5]])
    >>> buf, rowmap, p, _ = F.moe_permute(x, None, routes, probs, 3, [2, 2, 1], 2)
    >>> buf[:, 0].numpy().tolist()
    [1.0, 3.0, 2.0, 3.0, 1.0, 0.0]
    >>> rowmap.numpy().tolist()
    [[0, -1, 4], [-1, 2, -1], [1, 3, -1]]
    >>> p.numpy().tolist()
    [0.6000000238418579, 0.5, 1.0, 0.5, 0.4000000059604645, 0.0]
    >>> y, p2 = F.moe_unpermute(buf, rowmap, routes, p, 3, 3)
    >>> y[:, 0].numpy().tolist(), p2.numpy().tolist() == probs.numpy().tolist()
    ([2.0, 2.0, 6.0], True)
    """
    import oar

    api = "oar.nn.functional.moe_permute"
    _tensor(api, "hidden_states", hidden_states, 2)
    _tensor(api, "expert_routemap_topk", expert_routemap_topk, 2, ints=True)
    _tensor(api, "expert_prob_topk", expert_prob_topk, 2)
    num_experts = _int(api, "num_experts", num_experts, 1)
    padding_alignment = _int(api, "padding_alignment", padding_alignment, 1)
    override_buffer_size = _int(api, "override_buffer_size", override_buffer_size, -1)
    tokens, dim = hidden_states.shape
    if list(expert_routemap_topk.shape)[0] != tokens:
        raise ValueError(f"[{api}] expert_routemap_topk must have {tokens} rows (one per token), "
                         f"got shape {list(expert_routemap_topk.shape)}")
    if list(expert_prob_topk.shape) != list(expert_routemap_topk.shape):
        raise ValueError(f"[{api}] expert_prob_topk must have the shape of expert_routemap_topk "
                         f"{list(expert_routemap_topk.shape)}, got {list(expert_prob_topk.shape)}")
    if scale is not None:
        _tensor(api, "scale", scale, 2)
        if scale.shape[0] != tokens:
            raise ValueError(f"[{api}] scale must have {tokens} rows (one per token), got shape {list(scale.shape)}")
    counts = [_int(api, f"tokens_per_expert[{i}]", c, 0) for i, c in enumerate(_as_list(api, tokens_per_expert))]
    if len(counts) != num_experts:
        raise ValueError(f"[{api}] tokens_per_expert must have num_experts ({num_experts}) counts, "
                         f"got {len(counts)}")
    sizes = [-(-c // padding_alignment) * padding_alignment for c in counts]
    rows = sum(sizes)
    if override_buffer_size > 0:
        if override_buffer_size < rows:
            raise ValueError(f"[{api}] override_buffer_size ({override_buffer_size}) is smaller than the "
                             f"{rows} rows the aligned tokens_per_expert need")
        rows = override_buffer_size
    if not _C._ir_is_tracing() and expert_routemap_topk.size:
        lo, hi = int(expert_routemap_topk.min()), int(expert_routemap_topk.max())
        if lo < -1 or hi >= num_experts:
            raise ValueError(f"[{api}] expert_routemap_topk must be in [-1, {num_experts}), got values in "
                             f"[{lo}, {hi}]")

    routemap = expert_routemap_topk.astype("int64")
    routed = _routed(routemap, num_experts)                                      # [T, E]
    if not _C._ir_is_tracing() and tokens:
        got = routed.astype("int64").sum(axis=0).numpy().tolist()
        if any(g > c for g, c in zip(got, counts)):
            raise ValueError(f"[{api}] tokens_per_expert {counts} is less than the tokens routed to each "
                             f"expert {got}")
    starts = oar.to_tensor(np.cumsum([0] + sizes[:-1]), dtype="int64")
    slot = oar.cumsum(routed.astype("int64"), axis=0) - 1                        # rank among the expert's tokens
    rowmap = oar.where(routed, slot + starts, oar.full([], -1, dtype="int64"))   # [T, E]

    # Source of each buffer row, as token * E + expert; rows nobody fills point past the end.
    trash = tokens * num_experts
    target = oar.where(routed, rowmap, oar.full([], rows, dtype="int64")).reshape([-1])
    source = oar.scatter(oar.full([rows + 1], trash, dtype="int64"), target,
                         oar.arange(trash, dtype="int64"), overwrite=True)[:rows]
    padding = source == trash
    token_of_row = source // num_experts                                         # == tokens for padding
    expert_of_row = oar.where(padding, oar.full([], -1, dtype="int64"), source % num_experts)

    prob_te = (expert_prob_topk.astype("float32").unsqueeze(-1)
               * (routemap.unsqueeze(-1) == oar.arange(num_experts, dtype="int64")).astype("float32")).sum(axis=1)
    prob_rows = oar.gather(oar.concat([prob_te.reshape([-1]), oar.zeros([1], "float32")]), source)

    def rows_of(x):
        padded = oar.concat([x, oar.zeros([1] + list(x.shape[1:]), dtype=x.dtype)], axis=0)
        return oar.gather(padded, token_of_row, axis=0)

    if do_gather:
        unzipped = rows_of(hidden_states)
    else:
        unzipped = oar.zeros([rows, dim], dtype=hidden_states.dtype)
    scale_unzipped = rows_of(scale) if scale is not None else oar.zeros([0], dtype="float32")
    out = (unzipped, rowmap.astype("int32"), prob_rows, scale_unzipped)
    if return_expert_indices:
        out = out + (expert_of_row.astype("int32"),)
    return out


def _as_list(api, v):
    if isinstance(v, _C.Tensor):
        return v.numpy().reshape([-1]).tolist()
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"[{api}] tokens_per_expert must be a list of ints, got {type(v).__name__}")
    return list(v)


def moe_unpermute(hidden_states_unzipped, zipped_expertwise_rowmap, expert_routemap_topk, token_prob_unzipped,
                  total_zipped_tokens, num_experts, using_mix_precision=True, using_weighted_combine=False,
                  name=None):
    """Sums each token's expert rows back into token order, the inverse of ``moe_permute``.

    Returns ``(hidden_states [total_zipped_tokens, dim], expert_prob_topk [tokens,
    topk] float32, float64 for float64 probabilities)``: row ``t`` is the sum of the buffer rows
    ``zipped_expertwise_rowmap[t]`` (each times its probability when
    ``using_weighted_combine``), and the probabilities are read back into the
    ``expert_routemap_topk`` layout (0 where a slot is -1). ``using_mix_precision``
    accumulates 16-bit inputs in float32.

    >>> import oar
    >>> import oar.nn.functional as F
    >>> buf = oar.to_tensor([[1.0], [2.0], [4.0], [0.0]])
    >>> rowmap = oar.to_tensor([[0, 2], [1, -1]], dtype="int32")
    >>> routes = oar.to_tensor([[1, 0], [0, -1]], dtype="int32")
    >>> probs = oar.to_tensor([0.25, 1.0, 0.75, 0.0])
    >>> y, p = F.moe_unpermute(buf, rowmap, routes, probs, 2, 2, using_weighted_combine=True)
    >>> y.numpy().tolist(), p.numpy().tolist()
    ([[3.25], [2.0]], [[0.75, 0.25], [1.0, 0.0]])
    """
    import oar

    api = "oar.nn.functional.moe_unpermute"
    _tensor(api, "hidden_states_unzipped", hidden_states_unzipped, 2)
    _tensor(api, "zipped_expertwise_rowmap", zipped_expertwise_rowmap, 2, ints=True)
    _tensor(api, "expert_routemap_topk", expert_routemap_topk, 2, ints=True)
    if not isinstance(token_prob_unzipped, _C.Tensor):
        raise TypeError(f"[{api}] token_prob_unzipped must be a Tensor, got {type(token_prob_unzipped).__name__}")
    total_zipped_tokens = _int(api, "total_zipped_tokens", total_zipped_tokens, 0)
    num_experts = _int(api, "num_experts", num_experts, 1)
    rows = hidden_states_unzipped.shape[0]
    if list(zipped_expertwise_rowmap.shape) != [total_zipped_tokens, num_experts]:
        raise ValueError(f"[{api}] zipped_expertwise_rowmap must be [total_zipped_tokens, num_experts] = "
                         f"[{total_zipped_tokens}, {num_experts}], got {list(zipped_expertwise_rowmap.shape)}")
    if expert_routemap_topk.shape[0] != total_zipped_tokens:
        raise ValueError(f"[{api}] expert_routemap_topk must have {total_zipped_tokens} rows, "
                         f"got shape {list(expert_routemap_topk.shape)}")
    if token_prob_unzipped.size != rows:
        raise ValueError(f"[{api}] token_prob_unzipped must hold one probability per row of "
                         f"hidden_states_unzipped ({rows}), got shape {list(token_prob_unzipped.shape)}")
    if not _C._ir_is_tracing() and zipped_expertwise_rowmap.size:
        lo, hi = int(zipped_expertwise_rowmap.min()), int(zipped_expertwise_rowmap.max())
        if lo < -1 or hi >= rows:
            raise ValueError(f"[{api}] zipped_expertwise_rowmap must be in [-1, {rows}), got values in "
                             f"[{lo}, {hi}]")

    rowmap = zipped_expertwise_rowmap.astype("int64")
    valid = rowmap >= 0
    index = oar.where(valid, rowmap, oar.full([], rows, dtype="int64"))          # [T, E]; rows = a zero row
    dtype = hidden_states_unzipped.dtype
    acc = "float32" if using_mix_precision and dtype.name in ("float16", "bfloat16") else dtype.name
    x = hidden_states_unzipped.astype(acc)
    x = oar.concat([x, oar.zeros([1, x.shape[1]], dtype=acc)], axis=0)
    pdtype = "float64" if token_prob_unzipped.dtype.name == "float64" else "float32"
    probs = oar.concat([token_prob_unzipped.reshape([-1]).astype(pdtype), oar.zeros([1], pdtype)])
    picked = oar.gather(x, index.reshape([-1]), axis=0).reshape([total_zipped_tokens, num_experts, -1])
    if using_weighted_combine:
        weights = oar.gather(probs, index.reshape([-1])).reshape([total_zipped_tokens, num_experts, 1])
        picked = picked * weights.astype(acc)
    hidden = picked.sum(axis=1).astype(dtype)

    routemap = expert_routemap_topk.astype("int64")
    slot_rows = oar.take_along_axis(index, oar.clip(routemap, 0, num_experts - 1), axis=1)
    slot_rows = oar.where(routemap >= 0, slot_rows, oar.full([], rows, dtype="int64"))
    prob_topk = oar.gather(probs, slot_rows.reshape([-1])).reshape(list(routemap.shape))
    return hidden, prob_topk
