"""Structured losses: hierarchical sigmoid, RNN-T and adaptive log-softmax, as composites of oar ops.

Exported through oar.nn.functional.loss. Paths, lattices and clusters are laid
out with NumPy from the (integer) labels; every value that depends on a
differentiable input is an oar op, so autograd gives the gradients.
"""
import numpy as np

from ... import _C
from ..._index import index_select, take_along_axis
from ..._manip import concat, stack
from ..._C import logsumexp
from .loss import _check_float, _check_int_tensors, _check_reduction, _check_tensor, _err, _is_int, _reduce, _softplus

__all__ = ["hsigmoid_loss", "rnnt_loss", "adaptive_log_softmax_with_loss"]


def _default_paths(lab, num_classes):
    """Paddle's default tree: class c has code c + num_classes; step j visits node (code >> (j + 1)) - 1
    and goes right when bit j of the code is set; a path has floor(log2(code)) steps."""
    max_len = int(2 * num_classes - 1).bit_length() - 1
    table = np.full((lab.size, max_len), -1, dtype=np.int64)
    code = np.zeros((lab.size, max_len), dtype=np.int64)
    for i, c in enumerate(lab + num_classes):
        for j in range(int(c).bit_length() - 1):
            table[i, j] = (c >> (j + 1)) - 1
            code[i, j] = (c >> j) & 1
    return table, code


def hsigmoid_loss(input, label, num_classes, weight, bias=None, path_table=None, path_code=None,  # noqa: A002
                  is_sparse=False, name=None):
    """Hierarchical sigmoid loss: a sum of binary logistic losses along the tree path of each label.

    Without path_table / path_code the tree is Paddle's default complete
    binary tree over num_classes classes (weight [num_classes - 1, D], bias
    [num_classes - 1, 1]); with them, row i of path_table lists the node ids of
    sample i's path (-1 pads) and path_code the branch taken at each node. At
    each node, with pre = clip(x . w + b, -40, 40), the loss adds
    log(1 + exp(pre)) - code * pre; as in Paddle, each padded step up to the
    longest path adds log(2) (a constant, so gradients are unaffected). Returns
    [N, 1].

    >>> import oar
    >>> x = oar.zeros([1, 2]); w = oar.zeros([3, 2])
    >>> round(oar.nn.functional.hsigmoid_loss(x, oar.to_tensor([0]), 4, w).item(), 4)  # two steps of log(2)
    1.3863
    """
    api = "hsigmoid_loss"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    _check_float(weight, api, "weight")
    if input.ndim != 2:
        raise _err(api, f"input must be 2-D [N, D], got shape {list(input.shape)}")
    n, d = input.shape
    if not _is_int(label) or label.size != n:
        raise _err(api, f"label must be an integer tensor with {n} values, got {label.dtype} {list(label.shape)}")
    if weight.ndim != 2 or weight.shape[1] != d:
        raise _err(api, f"weight must be 2-D [num_nodes, {d}], got shape {list(weight.shape)}")
    lab = label.numpy().reshape(-1).astype(np.int64)
    if (path_table is None) != (path_code is None):
        raise _err(api, "path_table and path_code must be given together")
    if path_table is None:
        if num_classes < 2:
            raise _err(api, f"num_classes must be >= 2, got {num_classes}")
        if lab.size and (lab.min() < 0 or lab.max() >= num_classes):
            raise _err(api, f"label values must be in [0, {num_classes}), got [{lab.min()}, {lab.max()}]")
        if weight.shape[0] < num_classes - 1:
            raise _err(api, f"weight must have at least num_classes - 1 ({num_classes - 1}) rows, "
                            f"got {weight.shape[0]}")
        table, code = _default_paths(lab, num_classes)
    else:
        table = path_table.numpy().astype(np.int64)
        code = path_code.numpy().astype(np.int64)
        if table.shape != code.shape or table.ndim != 2 or table.shape[0] != n:
            raise _err(api, f"path_table and path_code must both be [{n}, L], got {list(table.shape)} and "
                            f"{list(code.shape)}")
        if table.size and table.max() >= weight.shape[0]:
            raise _err(api, f"path_table holds node {table.max()} but weight has {weight.shape[0]} rows")
    # Steps after the first -1 of a row are padding.
    valid = np.cumsum(table < 0, axis=1) == 0
    safe = np.where(valid, table, 0)
    idx = _C.from_numpy(np.ascontiguousarray(safe.reshape(-1)))
    w = _C.reshape(index_select(weight, idx, 0), [n, table.shape[1], d])
    pre = _C.sum(w * _C.unsqueeze(input, [1]), [-1])
    if bias is not None:
        _check_float(bias, api, "bias")
        pre = pre + _C.reshape(index_select(_C.reshape(bias, [-1]), idx, 0), [n, table.shape[1]])
    pre = _C.clip(pre, -40.0, 40.0)
    step = _softplus(pre) - _C.from_numpy(code.astype(np.float64)).astype(input.dtype) * pre
    validf = _C.from_numpy(valid.astype(np.float64)).astype(input.dtype)
    pad = _C.from_numpy(((~valid).sum(1, keepdims=True) * np.log(2.0))).astype(input.dtype)
    return _C.sum(step * validf, [1], keepdim=True) + pad


def rnnt_loss(input, label, input_lengths, label_lengths, blank=0, fastemit_lambda=0.001,  # noqa: A002
              reduction="mean", name=None):
    """RNN-Transducer loss: -log of the total probability of all alignments of label to the input frames.

    input: [B, T, U + 1, V] log-probabilities (used as given, as Paddle does);
    label: [B, U] int; input_lengths, label_lengths: [B]. The forward variable
    alpha[t, u] = logaddexp(alpha[t-1, u] + blank(t-1, u), alpha[t, u-1] +
    emit(t, u-1)) runs over the lattice with oar ops, one time step at a time
    (a cumulative log-sum-exp along u), so autograd gives the gradient.
    fastemit_lambda leaves the value unchanged and scales the gradient of the
    label emissions by (1 + fastemit_lambda) (FastEmit). 'mean' averages over
    the batch.

    >>> import oar
    >>> lp = oar.full([1, 2, 2, 2], -0.6931471805599453)  # every step: log(1/2)
    >>> loss = oar.nn.functional.rnnt_loss(lp, oar.to_tensor([[1]], dtype="int32"), oar.to_tensor([2], dtype="int32"),
    ...                                    oar.to_tensor([1], dtype="int32"), reduction="none")
    >>> round(loss.item(), 4)  # two alignments, each of probability 1/8
    1.3863
    """
    api = "rnnt_loss"
    _check_float(input, api, "input")
    _check_int_tensors(api, label=label, input_lengths=input_lengths, label_lengths=label_lengths)
    _check_reduction(reduction, api)
    if input.ndim != 4:
        raise _err(api, f"input must be 4-D [batch, max_time, max_label_length + 1, num_classes], "
                        f"got {list(input.shape)}")
    B, T, U1, V = input.shape
    if label.ndim != 2 or label.shape[0] != B or label.shape[1] != U1 - 1:
        raise _err(api, f"label must be [{B}, {U1 - 1}] for input shape {list(input.shape)}, got {list(label.shape)}")
    if list(input_lengths.shape) != [B] or list(label_lengths.shape) != [B]:
        raise _err(api, f"input_lengths and label_lengths must have shape [{B}], got {list(input_lengths.shape)} "
                        f"and {list(label_lengths.shape)}")
    if not 0 <= blank < V:
        raise _err(api, f"blank must be in [0, {V}), got {blank}")
    t_len = input_lengths.numpy().astype(np.int64)
    u_len = label_lengths.numpy().astype(np.int64)
    lab = label.numpy().astype(np.int64)
    if B and (t_len.min() < 1 or t_len.max() > T):
        raise _err(api, f"input_lengths must be in [1, {T}], got {t_len.tolist()}")
    if B and (u_len.min() < 0 or u_len.max() > U1 - 1):
        raise _err(api, f"label_lengths must be in [0, {U1 - 1}], got {u_len.tolist()}")
    used = np.arange(U1 - 1)[None, :] < u_len[:, None]
    if used.any() and (lab[used].min() < 0 or lab[used].max() >= V or (lab[used] == blank).any()):
        raise _err(api, f"labels must be in [0, {V}) and differ from blank ({blank})")
    dt = input.dtype
    blank_lp = input[:, :, :, blank]  # [B, T, U + 1]
    safe_lab = np.where(used, lab, 0)
    idx = np.broadcast_to(safe_lab[:, None, :, None], (B, T, U1 - 1, 1))
    emit = _C.squeeze(take_along_axis(input[:, :, :U1 - 1, :], _C.from_numpy(np.ascontiguousarray(idx)), 3), [3])
    if fastemit_lambda:
        emit = emit * (1.0 + fastemit_lambda) - emit.detach() * fastemit_lambda
    zero_col = _C.full([B, 1], 0.0, dt)
    neg = _C.full([B, 1], -1e30, dt)
    alphas = []
    # alpha[t, u] = E[u] + logcumsumexp_k<=u (h[k] - E[k]), E the prefix sums of emit[t].
    prev = None
    for t in range(T):
        e_cum = concat([zero_col, _C.cumsum(emit[:, t, :], 1)], axis=1) if U1 > 1 else zero_col
        if prev is None:
            h = concat([zero_col, _C.expand(neg, [B, U1 - 1])], axis=1) if U1 > 1 else zero_col
        else:
            h = prev + blank_lp[:, t - 1, :]
        g = h - e_cum
        # logcumsumexp along u as a masked logsumexp over k <= u.
        tri = np.tril(np.ones((U1, U1), dtype=bool))  # [u, k]
        gg = _C.where(_C.from_numpy(tri)[None], _C.unsqueeze(g, [1]), _C.full([], -1e30, dt))
        cur = e_cum + logsumexp(gg, axis=2)
        alphas.append(cur)
        prev = cur
    alpha = stack(alphas, 1)  # [B, T, U + 1]
    tt = _C.from_numpy(np.ascontiguousarray((t_len - 1)[:, None, None]))
    uu = _C.from_numpy(np.ascontiguousarray(u_len[:, None]))
    last_alpha = take_along_axis(_C.squeeze(take_along_axis(alpha, _C.expand(tt, [B, 1, U1]), 1), [1]), uu, 1)
    last_blank = take_along_axis(_C.squeeze(take_along_axis(blank_lp, _C.expand(tt, [B, 1, U1]), 1), [1]), uu, 1)
    loss = -_C.squeeze(last_alpha + last_blank, [1])
    return _reduce(loss, reduction)


def adaptive_log_softmax_with_loss(input, label, head_weight, tail_weights, cutoffs, head_bias=None,  # noqa: A002
                                   name=None):
    """Adaptive softmax: log-probability of each label and the mean negative log-likelihood.

    cutoffs ends with the number of classes, e.g. [3, 6, 10]: classes below
    cutoffs[0] are scored by the head ([D, cutoffs[0] + n_clusters]); class c
    in cluster i (cutoffs[i] <= c < cutoffs[i + 1]) scores head[cutoffs[0] + i]
    plus the log-softmax of tail i (input @ tail_weights[i][0] @
    tail_weights[i][1]) at c - cutoffs[i]. Returns (output [N], loss []).

    >>> import oar
    >>> x = oar.ones([1, 2])
    >>> hw, tails = oar.zeros([2, 3]), [[oar.zeros([2, 1]), oar.zeros([1, 2])]]
    >>> out, loss = oar.nn.functional.adaptive_log_softmax_with_loss(x, oar.to_tensor([3]), hw, tails, [2, 4])
    >>> round(out.item(), 4), round(loss.item(), 4)  # log(1/3) + log(1/2)
    (-1.7918, 1.7918)
    """
    api = "adaptive_log_softmax_with_loss"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    _check_float(head_weight, api, "head_weight")
    cutoffs = [int(c) for c in cutoffs]
    if input.ndim not in (1, 2):
        raise _err(api, f"input must be 1-D [D] or 2-D [N, D], got shape {list(input.shape)}")
    squeeze = input.ndim == 1
    if squeeze:
        input, label = _C.unsqueeze(input, [0]), _C.reshape(label, [1])
    if not _is_int(label) or list(label.shape) != [input.shape[0]]:
        raise _err(api, f"label must be an integer tensor of shape [{input.shape[0]}], got {label.dtype} "
                        f"{list(label.shape)}")
    if len(cutoffs) < 2 or cutoffs != sorted(set(cutoffs)) or cutoffs[0] <= 0:
        raise _err(api, f"cutoffs must be increasing positive ints ending with the number of classes, got {cutoffs}")
    n_clusters = len(cutoffs) - 1
    if len(tail_weights) != n_clusters:
        raise _err(api, f"tail_weights must hold {n_clusters} [proj, out] pairs, got {len(tail_weights)}")
    if list(head_weight.shape) != [input.shape[1], cutoffs[0] + n_clusters]:
        raise _err(api, f"head_weight must be [{input.shape[1]}, {cutoffs[0] + n_clusters}], "
                        f"got {list(head_weight.shape)}")
    lab = label.numpy().astype(np.int64)
    if lab.size and (lab.min() < 0 or lab.max() >= cutoffs[-1]):
        raise _err(api, f"label values must be in [0, {cutoffs[-1]}), got [{lab.min()}, {lab.max()}]")
    head = _C.matmul(input, head_weight, False, False)
    if head_bias is not None:
        head = head + head_bias
    head_lp = _C._nn_functional.log_softmax(head, -1)
    cluster = np.searchsorted(np.asarray(cutoffs), lab, side="right")  # 0: head, i: tail i - 1
    head_idx = np.where(cluster == 0, lab, cutoffs[0] + cluster - 1)
    out = _C.squeeze(take_along_axis(head_lp, _C.from_numpy(np.ascontiguousarray(head_idx[:, None])), 1), [1])
    for i, (proj, w_out) in enumerate(tail_weights):
        rows = np.nonzero(cluster == i + 1)[0]
        size = cutoffs[i + 1] - cutoffs[i]
        if list(w_out.shape)[-1] != size:
            raise _err(api, f"tail_weights[{i}][1] must have {size} columns, got shape {list(w_out.shape)}")
        tail_lp = _C._nn_functional.log_softmax(_C.matmul(_C.matmul(input, proj, False, False), w_out, False, False), -1)
        local = np.where(cluster == i + 1, lab - cutoffs[i], 0)
        picked = _C.squeeze(take_along_axis(tail_lp, _C.from_numpy(np.ascontiguousarray(local[:, None])), 1), [1])
        if rows.size:
            mask = _C.from_numpy(cluster == i + 1)
            out = _C.where(mask, out + picked, out)
    loss = _C.mean(-out)
    if squeeze:
        out = _C.squeeze(out, [0])
    return out, loss


def _adaptive_log_prob(input, head_weight, tail_weights, cutoffs, head_bias=None):  # noqa: A002
    """Log-probabilities [N, n_classes] of the adaptive softmax."""
    head = _C.matmul(input, head_weight, False, False)
    if head_bias is not None:
        head = head + head_bias
    head_lp = _C._nn_functional.log_softmax(head, -1)
    parts = [head_lp[:, :cutoffs[0]]]
    for i, (proj, w_out) in enumerate(tail_weights):
        tail_lp = _C._nn_functional.log_softmax(_C.matmul(_C.matmul(input, proj, False, False), w_out, False, False), -1)
        parts.append(tail_lp + head_lp[:, cutoffs[0] + i:cutoffs[0] + i + 1])
    return concat(parts, axis=1)
