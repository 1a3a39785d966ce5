"""oar.nn.functional: losses, written as composites of oar ops (so autograd gives every gradient).

Logs of probabilities are computed in log space (log_softmax, softplus-style
forms, logsumexp) so that large logits do not overflow.
"""
import numpy as np

from ... import _C
from ..._index import take_along_axis
from ..._manip import concat, stack
from ..._C import logsumexp
from .common import cosine_similarity, pairwise_distance

__all__ = [
    "cross_entropy", "softmax_with_cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "mse_loss", "l1_loss", "smooth_l1_loss", "kl_div", "margin_ranking_loss",
    "cosine_embedding_loss", "triplet_margin_loss", "ctc_loss", "soft_margin_loss", "hinge_embedding_loss",
    "square_error_cost", "log_loss", "sigmoid_focal_loss", "gaussian_nll_loss", "poisson_nll_loss",
    "multi_label_soft_margin_loss", "multi_margin_loss", "multi_label_margin_loss",
    "triplet_margin_with_distance_loss", "dice_loss", "npair_loss", "margin_cross_entropy", "class_center_sample",
    "hsigmoid_loss", "rnnt_loss", "adaptive_log_softmax_with_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


def _err(api, msg):
    return ValueError(f"[oar.nn.functional.{api}] {msg}")


def _check_reduction(reduction, api, allowed=_REDUCTIONS):
    if reduction not in allowed:
        raise _err(api, f"reduction must be one of {', '.join(repr(r) for r in allowed)}, got {reduction!r}")


def _check_tensor(x, api, what):
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[oar.nn.functional.{api}] {what} must be a Tensor, got {type(x).__name__}")


def _check_int_tensors(api, **tensors):
    """Each keyword argument is an integer Tensor (labels, lengths)."""
    for n, t in tensors.items():
        _check_tensor(t, api, n)
        if not _is_int(t):
            raise TypeError(f"[oar.nn.functional.{api}] {n} must be an integer tensor, got {t.dtype}")


def _check_float(x, api, what):
    _check_tensor(x, api, what)
    if not str(x.dtype).split(".")[-1].startswith(("float", "bfloat")):
        raise TypeError(f"[oar.nn.functional.{api}] {what} must be a floating tensor, got {x.dtype}")


def _check_same_shape(a, b, api, na, nb):
    if list(a.shape) != list(b.shape):
        raise _err(api, f"{na} and {nb} must have the same shape, got {a.shape} and {b.shape}")


def _reduce(loss, reduction):
    if reduction == "mean":
        return _C.mean(loss)
    if reduction == "sum":
        return _C.sum(loss)
    return loss


def _zero(x):
    return _C.full([], 0.0, x.dtype)


def _safe_div(num, den):
    """num / den, with den == 0 treated as 1 (a mean over no valid entries is 0, as in Paddle)."""
    return num / (den + _C.cast(_C.equal(den, _zero(den)), den.dtype))


def _is_int(t):
    return str(t.dtype).split(".")[-1] in ("int8", "int16", "int32", "int64", "uint8")


def cross_entropy(input, label, weight=None, ignore_index=-100, reduction="mean",  # noqa: A002 - Paddle's names
                  soft_label=False, axis=-1, use_softmax=True, label_smoothing=0.0, name=None):
    """Cross entropy between input logits (or probabilities, use_softmax=False) and label.

    Hard labels hold class indices, of input's shape with the class axis removed or
    of size 1; soft labels hold a distribution of input's shape. With reduction
    'none' the result has the hard label's shape (with or without the size-1
    class axis, as given), and for soft labels input's shape with the class
    axis of size 1, as in Paddle.

    'mean' follows Paddle (Note [cross entropy mean]): without weight it is
    sum(loss) / N over all N entries when ignore_index < 0 (the default -100;
    ignored entries count in N with a loss of 0), and sum(loss) / (number of
    entries not ignored) when ignore_index >= 0. With weight it is the weighted
    mean sum(w_i * loss_i) / sum(w_i), w_i = weight[y_i] (0 for ignored entries).
    label_smoothing turns hard labels into t = (1 - eps) * one_hot + eps / C, and
    the weight of an entry into sum(t * weight); ignored entries stay excluded.
    Soft labels are never ignored and 'mean' divides by N (or by the weights).

    >>> import oar
    >>> logits = oar.to_tensor([[2.0, 0.0], [0.0, 2.0]])
    >>> round(oar.nn.functional.cross_entropy(logits, oar.to_tensor([0, 1])).item(), 4)
    0.1269
    >>> oar.nn.functional.cross_entropy(logits, oar.to_tensor([0, 1]), reduction="none").shape
    [2]
    >>> oar.nn.functional.cross_entropy(logits, oar.to_tensor([[0], [1]]), reduction="none").shape
    [2, 1]
    """
    api = "cross_entropy"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    _check_reduction(reduction, api)
    if input.ndim == 0:
        raise _err(api, "input must have at least 1 dimension (the class axis)")
    axis = int(axis)
    if not -input.ndim <= axis < input.ndim:
        raise _err(api, f"axis {axis} is out of range for a {input.ndim}-D input")
    axis = axis + input.ndim if axis < 0 else axis
    # 'none' returns the hard label's shape: without the class axis if the label has none.
    drop_class_axis = reduction == "none" and not soft_label and label.ndim == input.ndim - 1
    if not 0.0 <= label_smoothing <= 1.0:
        raise _err(api, f"label_smoothing must be in [0, 1], got {label_smoothing}")
    n_class = input.shape[axis]
    if weight is not None:
        _check_tensor(weight, api, "weight")
        if list(weight.shape) != [n_class]:
            raise _err(api, f"weight must have shape [{n_class}] (one entry per class), got {weight.shape}")
        weight = _C.cast(weight, input.dtype)
    # Work with the class axis last; 'none' results are permuted back at the end.
    if axis != input.ndim - 1:
        perm = [i for i in range(input.ndim) if i != axis] + [axis]
        input = _C.transpose(input, perm)
        if label.ndim == input.ndim:
            label = _C.transpose(label, perm)
        loss = _cross_entropy_last(input, label, weight, ignore_index, reduction, soft_label, use_softmax,
                                   label_smoothing, n_class)
        if reduction == "none":
            loss = _C.transpose(loss, [perm.index(i) for i in range(input.ndim)])
    else:
        loss = _cross_entropy_last(input, label, weight, ignore_index, reduction, soft_label, use_softmax,
                                   label_smoothing, n_class)
    return _C.squeeze(loss, [axis]) if drop_class_axis else loss


def _cross_entropy_last(input, label, weight, ignore_index, reduction, soft_label, use_softmax,  # noqa: A002
                        label_smoothing, n_class):
    api = "cross_entropy"
    fused = use_softmax and not soft_label and weight is None and label_smoothing == 0
    batch_shape = list(input.shape[:-1])
    if not fused:
        logp = _C._nn_functional.log_softmax(input, -1) if use_softmax else _C.log(input)

    if soft_label:
        _check_float(label, api, "label (soft)")
        _check_same_shape(label, input, api, "label", "input")
        target = label
        if label_smoothing > 0:
            target = label * (1.0 - label_smoothing) + label_smoothing / n_class
        loss = -_C.sum(target * logp, [-1], keepdim=True)
        if weight is None:
            return _reduce(loss, reduction)
        w = _C.sum(target * weight, [-1], keepdim=True)
        loss = loss * w
        if reduction == "mean":
            return _safe_div(_C.sum(loss), _C.sum(w))
        return _reduce(loss, reduction)

    if not _is_int(label):
        raise TypeError(f"[oar.nn.functional.{api}] hard labels must be an integer tensor, got {label.dtype} "
                        f"(pass soft_label=True for probabilities)")
    if list(label.shape) == batch_shape:
        label = _C.unsqueeze(label, [-1])
    if list(label.shape) != batch_shape + [1]:
        raise _err(api, f"label shape {label.shape} does not match input shape {input.shape} "
                        f"(expected {batch_shape} or {batch_shape + [1]})")
    valid = _C.not_equal(label, _C.full([], ignore_index, label.dtype))
    tracing = _C._ir_is_tracing()
    # Reading label values here would bake the example into a trace; there the
    # kernels check them instead (see _traced_safe_label).
    if label.size and not tracing:
        vals = label.numpy()[valid.numpy()]
        if vals.size and (vals.min() < 0 or vals.max() >= n_class):
            raise _err(api, f"labels must be in [0, {n_class}) or equal ignore_index ({ignore_index}), "
                            f"got values in [{vals.min()}, {vals.max()}]")
    validf = _C.cast(valid, input.dtype)
    if fused:  # one pass per row forward and backward
        loss = _C._softmax_cross_entropy(input, label, int(ignore_index))
        if reduction == "mean":
            return _hard_label_mean(loss, validf, ignore_index)
        return _reduce(loss, reduction)
    safe_label = _safe_label(label, valid, n_class, tracing)
    nll = -take_along_axis(logp, safe_label, -1)
    if label_smoothing > 0:
        nll = nll * (1.0 - label_smoothing) - _C.mean(logp, [-1], keepdim=True) * label_smoothing
    loss = nll * validf
    if weight is None:
        if reduction == "mean":
            return _hard_label_mean(loss, validf, ignore_index)
        return _reduce(loss, reduction)
    # A -1 leading dim keeps a traced batch dim dynamic (ambiguous only when
    # another dim is 0).
    w_shape = batch_shape + [1]
    if batch_shape and all(batch_shape[1:]):
        w_shape[0] = -1
    w = _C.reshape(take_along_axis(weight, _C.reshape(safe_label, [-1]), 0), w_shape)
    if label_smoothing > 0:  # the weight of the smoothed target: sum(t * weight)
        w = w * (1.0 - label_smoothing) + _C.mean(weight) * label_smoothing
    w = w * validf
    loss = loss * w
    if reduction == "mean":
        return _safe_div(_C.sum(loss), _C.sum(w))
    return _reduce(loss, reduction)


# Note [cross entropy mean]
# Paddle's 'mean' of hard-label cross entropy without weight divides by the
# number of entries whose label differs from ignore_index only when
# ignore_index >= 0; with a negative ignore_index (the default -100) it is the
# plain mean over all entries, ignored ones included as zeros. oar follows
# that, so losses and gradients match Paddle's for the same code. Paddle's
# soft-label path (and label_smoothing) counts the soft label's elements that
# differ from a non-negative ignore_index, i.e. divides by N * C; oar divides
# by N there, and keeps entries whose hard label is ignore_index out of a
# smoothed loss instead of raising.
def _hard_label_mean(loss, validf, ignore_index):
    if ignore_index < 0:
        return _C.mean(loss) if 0 not in loss.shape else _C.sum(loss)
    return _safe_div(_C.sum(loss), _C.sum(validf))


def _safe_label(label, valid, n_class, tracing):
    """Labels to gather with: ignored entries read class 0 (and are masked out).

    Inside a trace the labels cannot be checked in Python, and take_along_axis
    wraps negative indices, so a negative label that is not ignore_index is
    mapped to n_class: the gather's own bounds check then rejects it with an
    IndexError instead of silently reading the last classes.
    """
    zero = _C.full([], 0, label.dtype)
    if tracing:
        label = _C.where(_C.less_than(label, zero), _C.full([], n_class, label.dtype), label)
    return _C.where(valid, label, zero)


def softmax_with_cross_entropy(logits, label, soft_label=False, ignore_index=-100, numeric_stable_mode=True,
                               return_softmax=False, axis=-1):
    """Per-entry cross entropy (class axis kept with size 1); optionally also the softmax.

    >>> import oar
    >>> oar.nn.functional.softmax_with_cross_entropy(oar.zeros([2, 3]), oar.to_tensor([[0], [2]])).shape
    [2, 1]
    """
    loss = cross_entropy(logits, label, ignore_index=ignore_index, reduction="none", soft_label=soft_label,
                         axis=axis)
    if return_softmax:
        return loss, _C._nn_functional.softmax(logits, axis)
    return loss


def nll_loss(input, label, weight=None, ignore_index=-100, reduction="mean", name=None):  # noqa: A002
    """Negative log likelihood of log-probabilities input [N, C, *] at the classes label [N, *].

    'mean' is the weighted mean over entries whose label is not ignore_index.

    >>> import oar
    >>> logp = oar.to_tensor([[-0.1, -2.0], [-3.0, -0.2]])
    >>> round(oar.nn.functional.nll_loss(logp, oar.to_tensor([0, 1])).item(), 4)
    0.15
    """
    api = "nll_loss"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    _check_reduction(reduction, api)
    if not _is_int(label):
        raise TypeError(f"[oar.nn.functional.{api}] label must be an integer tensor, got {label.dtype}")
    if input.ndim < 2:
        raise _err(api, f"input must be at least 2-D [N, C, ...], got shape {input.shape}")
    expected = [input.shape[0]] + list(input.shape[2:])
    if list(label.shape) != expected:
        raise _err(api, f"label shape must be {expected} for input shape {input.shape}, got {label.shape}")
    n_class = input.shape[1]
    valid = _C.not_equal(label, _C.full([], ignore_index, label.dtype))
    tracing = _C._ir_is_tracing()
    if not tracing:  # inside a trace the gather checks them (see _safe_label)
        vals = label.numpy()[valid.numpy()]
        if vals.size and (vals.min() < 0 or vals.max() >= n_class):
            raise _err(api, f"labels must be in [0, {n_class}) or equal ignore_index, got [{vals.min()}, {vals.max()}]")
    safe = _safe_label(label, valid, n_class, tracing)
    validf = _C.cast(valid, input.dtype)
    picked = _C.squeeze(take_along_axis(input, _C.unsqueeze(safe, [1]), 1), [1])
    w = validf
    if weight is not None:
        _check_tensor(weight, api, "weight")
        if list(weight.shape) != [n_class]:
            raise _err(api, f"weight must have shape [{n_class}], got {weight.shape}")
        w = _C.reshape(take_along_axis(_C.cast(weight, input.dtype), _C.reshape(safe, [-1]), 0), label.shape) * validf
    loss = -picked * w
    if reduction == "mean":
        return _safe_div(_C.sum(loss), _C.sum(w))
    return _reduce(loss, reduction)


def binary_cross_entropy(input, label, weight=None, reduction="mean", name=None):  # noqa: A002
    """-w * (y * log(x) + (1 - y) * log(1 - x)), logs clipped at -100 as Paddle does.

    >>> import oar
    >>> p = oar.to_tensor([0.8, 0.2]); y = oar.to_tensor([1.0, 0.0])
    >>> round(oar.nn.functional.binary_cross_entropy(p, y).item(), 4)
    0.2231
    """
    api = "binary_cross_entropy"
    _check_float(input, api, "input")
    _check_float(label, api, "label")
    _check_reduction(reduction, api)
    _check_same_shape(input, label, api, "input", "label")
    log_p = _C.clip(_C.log(input), -100.0, None)
    log_1mp = _C.clip(_C.log(1.0 - input), -100.0, None)
    loss = -(label * log_p + (1.0 - label) * log_1mp)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(logit, label, weight=None, reduction="mean", pos_weight=None, name=None):
    """binary_cross_entropy(sigmoid(logit), label) computed stably; pos_weight scales the positive term.

    >>> import oar
    >>> x = oar.to_tensor([100.0, -100.0]); y = oar.to_tensor([1.0, 0.0])
    >>> oar.nn.functional.binary_cross_entropy_with_logits(x, y).item() < 1e-30
    True
    """
    api = "binary_cross_entropy_with_logits"
    _check_float(logit, api, "logit")
    _check_float(label, api, "label")
    _check_reduction(reduction, api)
    _check_same_shape(logit, label, api, "logit", "label")
    # log(1 + exp(-|x|)) + max(-x, 0) == -log(sigmoid(x)), without overflow.
    neg_log_sig = _C.log1p(_C.exp(-_C.abs(logit))) + _C.clip(-logit, 0.0, None)
    if pos_weight is None:
        loss = (1.0 - label) * logit + neg_log_sig
    else:
        loss = (1.0 - label) * logit + (1.0 + (pos_weight - 1.0) * label) * neg_log_sig
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def mse_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """(input - label)^2, reduced.

    >>> import oar
    >>> oar.nn.functional.mse_loss(oar.to_tensor([1.0, 3.0]), oar.to_tensor([0.0, 0.0])).item()
    5.0
    """
    api = "mse_loss"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    _check_reduction(reduction, api)
    _check_same_shape(input, label, api, "input", "label")
    return _reduce(_C.square(input - label), reduction)


def l1_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """|input - label|, reduced.

    >>> import oar
    >>> oar.nn.functional.l1_loss(oar.to_tensor([1.0, -3.0]), oar.to_tensor([0.0, 0.0])).item()
    2.0
    """
    api = "l1_loss"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    _check_reduction(reduction, api)
    _check_same_shape(input, label, api, "input", "label")
    return _reduce(_C.abs(input - label), reduction)


def smooth_l1_loss(input, label, reduction="mean", delta=1.0, name=None):  # noqa: A002
    """Paddle's smooth L1 (the Huber loss): 0.5 d^2 where |d| < delta, else delta * (|d| - 0.5 delta).

    >>> import oar
    >>> oar.nn.functional.smooth_l1_loss(oar.to_tensor([0.5, 3.0]), oar.zeros([2]), reduction="none").numpy().tolist()
    [0.125, 2.5]
    """
    api = "smooth_l1_loss"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    _check_reduction(reduction, api)
    _check_same_shape(input, label, api, "input", "label")
    if delta <= 0:
        raise _err(api, f"delta must be > 0, got {delta}")
    d = input - label
    ad = _C.abs(d)
    loss = _C.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))
    return _reduce(loss, reduction)


def kl_div(input, label, reduction="mean", log_target=False, name=None):  # noqa: A002
    """KL divergence with input holding log-probabilities: label * (log(label) - input).

    reduction: 'none', 'mean' (over all entries), 'batchmean' (sum / batch size) or 'sum'.
    log_target=True means label holds log-probabilities too.

    >>> import oar
    >>> x = oar.log(oar.to_tensor([0.5, 0.5])); y = oar.to_tensor([0.5, 0.5])
    >>> oar.nn.functional.kl_div(x, y, reduction="sum").item()
    0.0
    """
    api = "kl_div"
    _check_float(input, api, "input")
    _check_float(label, api, "label")
    _check_reduction(reduction, api, ("none", "mean", "batchmean", "sum"))
    _check_same_shape(input, label, api, "input", "label")
    if log_target:
        loss = _C.exp(label) * (label - input)
    else:
        positive = label > 0
        safe = _C.where(positive, label, _C.full([], 1.0, label.dtype))
        loss = _C.where(positive, label * (_C.log(safe) - input), _C.full([], 0.0, input.dtype) * input)
    if reduction == "batchmean":
        return _C.sum(loss) / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


def margin_ranking_loss(input, other, label, margin=0.0, reduction="mean", name=None):  # noqa: A002
    """max(0, -label * (input - other) + margin).

    >>> import oar
    >>> oar.nn.functional.margin_ranking_loss(oar.to_tensor([1.0]), oar.to_tensor([2.0]), oar.to_tensor([1.0])).item()
    1.0
    """
    api = "margin_ranking_loss"
    for t, n in ((input, "input"), (other, "other"), (label, "label")):
        _check_float(t, api, n)
    _check_reduction(reduction, api)
    _check_same_shape(input, other, api, "input", "other")
    _check_same_shape(input, label, api, "input", "label")
    return _reduce(_C.clip(-label * (input - other) + margin, 0.0, None), reduction)


def cosine_embedding_loss(input1, input2, label, margin=0, reduction="mean", name=None):
    """1 - cos(x1, x2) for label 1, max(0, cos(x1, x2) - margin) for label -1.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 0.0]]); y = oar.to_tensor([[0.0, 1.0]])
    >>> oar.nn.functional.cosine_embedding_loss(x, y, oar.to_tensor([1])).item()
    1.0
    """
    api = "cosine_embedding_loss"
    _check_float(input1, api, "input1")
    _check_float(input2, api, "input2")
    _check_tensor(label, api, "label")
    _check_reduction(reduction, api)
    _check_same_shape(input1, input2, api, "input1", "input2")
    if input1.ndim not in (1, 2):
        raise _err(api, f"inputs must be 1-D or 2-D, got shape {input1.shape}")
    if input1.ndim == 2 and list(label.shape) != [input1.shape[0]] or input1.ndim == 1 and label.size != 1:
        raise _err(api, f"label shape {label.shape} does not match the batch of inputs {input1.shape}")
    if not -1.0 <= margin <= 1.0:
        raise _err(api, f"margin must be in [-1, 1], got {margin}")
    prod = _C.sum(input1 * input2, [-1])
    mag1 = _C.sum(input1 * input1, [-1]) + 1e-11
    mag2 = _C.sum(input2 * input2, [-1]) + 1e-11
    cos = prod / _C.sqrt(mag1 * mag2)
    label = _C.reshape(_C.cast(label, input1.dtype), cos.shape)
    pos = 1.0 - cos
    neg = _C.clip(cos - margin, 0.0, None)
    loss = _C.where(label > 0, pos, _C.where(label < 0, neg, cos * 0.0))
    return _reduce(loss, reduction)


def triplet_margin_loss(input, positive, negative, margin=1.0, p=2, epsilon=1e-6, swap=False,  # noqa: A002
                        reduction="mean", name=None):
    """max(d(a, p) - d(a, n) + margin, 0) with d the pairwise p-norm distance.

    >>> import oar
    >>> a = oar.to_tensor([[0.0, 0.0]]); pos = oar.to_tensor([[0.0, 1.0]]); neg = oar.to_tensor([[0.0, 3.0]])
    >>> round(oar.nn.functional.triplet_margin_loss(a, pos, neg, epsilon=0.0).item(), 4)
    0.0
    """
    return _triplet(input, positive, negative, lambda a, b: pairwise_distance(a, b, p, epsilon), margin, swap,
                    reduction, "triplet_margin_loss")


def _triplet(input, positive, negative, dist, margin, swap, reduction, api):  # noqa: A002
    """The triplet margin loss with distance function `dist`, for `api`."""
    for t, n in ((input, "input"), (positive, "positive"), (negative, "negative")):
        _check_float(t, api, n)
    _check_reduction(reduction, api)
    _check_same_shape(input, positive, api, "input", "positive")
    _check_same_shape(input, negative, api, "input", "negative")
    if margin < 0:
        raise _err(api, f"margin must be >= 0, got {margin}")
    d_pos = dist(input, positive)
    d_neg = dist(input, negative)
    if swap:
        d_neg = _C.minimum(d_neg, dist(positive, negative))
    return _reduce(_C.clip(d_pos - d_neg + float(margin), 0.0, None), reduction)


def soft_margin_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """log(1 + exp(-label * input)), computed stably.

    >>> import oar
    >>> round(oar.nn.functional.soft_margin_loss(oar.to_tensor([0.0]), oar.to_tensor([1.0])).item(), 4)
    0.6931
    """
    api = "soft_margin_loss"
    _check_float(input, api, "input")
    _check_reduction(reduction, api)
    _check_same_shape(input, label, api, "input", "label")
    z = -_C.cast(label, input.dtype) * input
    return _reduce(_C.clip(z, 0.0, None) + _C.log1p(_C.exp(-_C.abs(z))), reduction)


def hinge_embedding_loss(input, label, margin=1.0, reduction="mean", name=None):  # noqa: A002
    """input for label 1, max(0, margin - input) for label -1.

    >>> import oar
    >>> oar.nn.functional.hinge_embedding_loss(oar.to_tensor([0.3, 0.3]), oar.to_tensor([1.0, -1.0])).item()
    0.5
    """
    api = "hinge_embedding_loss"
    _check_float(input, api, "input")
    _check_reduction(reduction, api)
    _check_same_shape(input, label, api, "input", "label")
    label = _C.cast(label, input.dtype)
    loss = _C.where(label > 0, input, input * 0.0) + _C.where(label < 0, _C.clip(margin - input, 0.0, None),
                                                               input * 0.0)
    return _reduce(loss, reduction)


def square_error_cost(input, label):  # noqa: A002
    """(input - label)^2 elementwise.

    >>> import oar
    >>> oar.nn.functional.square_error_cost(oar.to_tensor([3.0]), oar.to_tensor([1.0])).numpy().tolist()
    [4.0]
    """
    return mse_loss(input, label, reduction="none")


def log_loss(input, label, epsilon=1e-4, name=None):  # noqa: A002
    """-label * log(input + eps) - (1 - label) * log(1 - input + eps).

    >>> import oar
    >>> oar.nn.functional.log_loss(oar.to_tensor([[0.5]]), oar.to_tensor([[1.0]])).shape
    [1, 1]
    """
    api = "log_loss"
    _check_float(input, api, "input")
    _check_same_shape(input, label, api, "input", "label")
    return -label * _C.log(input + epsilon) - (1.0 - label) * _C.log(1.0 - input + epsilon)


def sigmoid_focal_loss(logit, label, normalizer=None, alpha=0.25, gamma=2.0, reduction="sum", name=None):
    """Focal loss on logits: alpha_t * (1 - p_t)^gamma * BCE, optionally divided by normalizer.

    >>> import oar
    >>> oar.nn.functional.sigmoid_focal_loss(oar.to_tensor([10.0]), oar.to_tensor([1.0])).item() < 1e-6
    True
    """
    api = "sigmoid_focal_loss"
    _check_float(logit, api, "logit")
    _check_reduction(reduction, api)
    _check_same_shape(logit, label, api, "logit", "label")
    p = _C.sigmoid(logit)
    ce = binary_cross_entropy_with_logits(logit, label, reduction="none")
    p_t = p * label + (1.0 - p) * (1.0 - label)
    loss = ce * _C.pow(1.0 - p_t, _C.full([], float(gamma), logit.dtype))
    if alpha >= 0:
        loss = loss * (alpha * label + (1.0 - alpha) * (1.0 - label))
    if normalizer is not None:
        loss = loss / normalizer
    return _reduce(loss, reduction)


def ctc_loss(log_probs, labels, input_lengths, label_lengths, blank=0, reduction="mean", norm_by_times=False,
             name=None):
    """Connectionist temporal classification loss (Paddle's warpctc semantics).

    log_probs: [T, B, C] scores (a softmax is applied over C, as warpctc does, so
    either logits or log-probabilities may be passed); labels: [B, L] int;
    input_lengths, label_lengths: [B]. The forward algorithm runs in log space with
    oar ops, so the gradient comes from autograd. 'mean' divides each loss by its
    label length, then averages; norm_by_times divides the gradient (not the value)
    by the input length.

    >>> import oar
    >>> lp = oar.zeros([3, 1, 2])  # uniform over {blank, a}
    >>> loss = oar.nn.functional.ctc_loss(lp, oar.to_tensor([[1]], dtype="int32"), oar.to_tensor([3]),
    ...                                   oar.to_tensor([1]), reduction="none")
    >>> round(loss.item(), 4)  # -log(6 / 8): six of the eight paths emit 'a'
    0.2877
    """
    api = "ctc_loss"
    _check_float(log_probs, api, "log_probs")
    _check_int_tensors(api, labels=labels, input_lengths=input_lengths, label_lengths=label_lengths)
    _check_reduction(reduction, api)
    if log_probs.ndim != 3:
        raise _err(api, f"log_probs must be 3-D [max_logit_length, batch, num_classes], got {log_probs.shape}")
    T, B, C = log_probs.shape
    if labels.ndim != 2 or labels.shape[0] != B:
        raise _err(api, f"labels must be 2-D [batch ({B}), max_label_length], got {labels.shape}")
    if list(input_lengths.shape) != [B] or list(label_lengths.shape) != [B]:
        raise _err(api, f"input_lengths and label_lengths must have shape [{B}], got {input_lengths.shape} and "
                        f"{label_lengths.shape}")
    if not 0 <= blank < C:
        raise _err(api, f"blank must be in [0, {C}), got {blank}")
    L = labels.shape[1]
    in_len = input_lengths.numpy().astype(np.int64)
    lab_len = label_lengths.numpy().astype(np.int64)
    lab = labels.numpy().astype(np.int64)
    if B and (in_len.min() < 1 or in_len.max() > T):
        raise _err(api, f"input_lengths must be in [1, {T}], got {in_len.tolist()}")
    if B and (lab_len.min() < 0 or lab_len.max() > L):
        raise _err(api, f"label_lengths must be in [0, {L}], got {lab_len.tolist()}")
    for b in range(B):
        used = lab[b, :lab_len[b]]
        if used.size and (used.min() < 0 or used.max() >= C or (used == blank).any()):
            raise _err(api, f"labels of sample {b} must be in [0, {C}) and differ from blank ({blank}), "
                            f"got {used.tolist()}")
    S = 2 * L + 1
    ext = np.full((B, S), blank, dtype=np.int64)
    ext[:, 1::2] = np.where(lab >= 0, lab, blank)
    skip = np.zeros((B, S), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])

    dt = log_probs.dtype
    neg = -1e30  # log(0) stand-in: finite, so exp() and its gradient stay 0 instead of NaN
    lp = _C._nn_functional.log_softmax(log_probs, -1)
    idx = _C.expand(_C.unsqueeze(_C.from_numpy(ext), [0]), [T, B, S])
    emit = take_along_axis(lp, idx, 2)  # [T, B, S]: log-prob of each extended symbol at each step
    skip_t = _C.from_numpy(skip)
    neg_col = _C.full([B, 1], neg, dt)
    neg_fill = _C.full([B, S], neg, dt)
    init = np.full((B, S), False)
    init[:, :2] = True
    alpha = _C.where(_C.from_numpy(init), emit[0], neg_fill)
    in_len_t = _C.from_numpy(in_len)
    for t in range(1, T):
        a1 = concat([neg_col, alpha[:, :S - 1]], axis=1)
        a2 = concat([neg_col, neg_col, alpha[:, :S - 2]], axis=1) if S > 2 else neg_fill
        a2 = _C.where(skip_t, a2, neg_fill)
        new = logsumexp(stack([alpha, a1, a2], 0), axis=0) + emit[t]
        active = _C.unsqueeze(_C.less_than(_C.full([], t, in_len_t.dtype), in_len_t), [1])
        alpha = _C.where(active, new, alpha)
    last = _C.from_numpy(np.ascontiguousarray((2 * lab_len)[:, None]))
    prev = _C.from_numpy(np.ascontiguousarray(np.maximum(2 * lab_len - 1, 0)[:, None]))
    end1 = take_along_axis(alpha, last, 1)
    end2 = _C.where(_C.from_numpy((lab_len > 0)[:, None].copy()), take_along_axis(alpha, prev, 1),
                    _C.full([B, 1], neg, dt))
    loss = -_C.squeeze(logsumexp(concat([end1, end2], axis=1), axis=1, keepdim=True), [1])  # [B]
    if norm_by_times:
        # Same value, gradient divided by the input length (warpctc's norm_by_times).
        scaled = loss / _C.cast(in_len_t, dt)
        loss = scaled + (loss - scaled).detach()
    if reduction == "mean":
        return _C.mean(loss / _C.cast(_C.from_numpy(np.maximum(lab_len, 1)), dt))
    return _reduce(loss, reduction)


def _softplus(z):
    """log(1 + exp(z)) without overflow."""
    return _C.clip(z, 0.0, None) + _C.log1p(_C.exp(-_C.abs(z)))


def _check_labels_in(label, n_class, api, what="label"):
    if label.size and not _C._ir_is_tracing():
        vals = label.numpy()
        if vals.min() < 0 or vals.max() >= n_class:
            raise _err(api, f"{what} values must be in [0, {n_class}), got values in [{vals.min()}, {vals.max()}]")


def gaussian_nll_loss(input, label, variance, full=False, epsilon=1e-6, reduction="mean", name=None):  # noqa: A002
    """Gaussian negative log likelihood: 0.5 * (log(var) + (input - label)^2 / var) (+ 0.5 log(2 pi) if full).

    variance has input's shape, or input's shape with the last dim 1 or dropped
    (one variance per sample). Values below epsilon are raised to epsilon for
    the loss; the gradient still reaches variance (Paddle's reaches only input).

    >>> import oar
    >>> x, y = oar.to_tensor([1.0, 2.0]), oar.to_tensor([1.0, 0.0])
    >>> loss = oar.nn.functional.gaussian_nll_loss(x, y, oar.to_tensor([1.0, 2.0]), reduction="none")
    >>> [round(v, 4) for v in loss.numpy().tolist()]
    [0.0, 1.3466]
    """
    api = "gaussian_nll_loss"
    for t, n in ((input, "input"), (label, "label"), (variance, "variance")):
        _check_float(t, api, n)
    _check_reduction(reduction, api)
    _check_same_shape(input, label, api, "input", "label")
    shape = list(input.shape)
    if list(variance.shape) != shape:
        if input.ndim and list(variance.shape) == shape[:-1]:
            variance = _C.unsqueeze(variance, [-1])
        elif not (input.ndim and list(variance.shape) == shape[:-1] + [1]):
            raise _err(api, f"variance must have input's shape {shape} or that shape with the last dim 1 or "
                            f"removed, got {list(variance.shape)}")
    if not _C._ir_is_tracing() and variance.size and bool((variance.numpy() < 0).any()):
        raise _err(api, "variance must be non-negative")
    var = variance + (_C.clip(variance, float(epsilon), None) - variance).detach()
    loss = 0.5 * (_C.log(var) + _C.square(input - label) / var)
    if full:
        loss = loss + 0.5 * float(np.log(2 * np.pi))
    return _reduce(loss, reduction)


def poisson_nll_loss(input, label, log_input=True, full=False, epsilon=1e-8, reduction="mean",  # noqa: A002
                     name=None):
    """Poisson negative log likelihood: exp(input) - label * input (log_input), else input - label * log(input + eps).

    full adds Stirling's approximation of log(label!) for labels > 1:
    label * log(label) - label + 0.5 * log(2 pi label).

    >>> import oar
    >>> loss = oar.nn.functional.poisson_nll_loss(oar.to_tensor([0.0, 1.0]), oar.to_tensor([1.0, 2.0]),
    ...                                           reduction="none")
    >>> [round(v, 4) for v in loss.numpy().tolist()]
    [1.0, 0.7183]
    """
    api = "poisson_nll_loss"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    _check_reduction(reduction, api)
    _check_same_shape(input, label, api, "input", "label")
    if epsilon <= 0:
        raise _err(api, f"epsilon must be > 0, got {epsilon}")
    label = _C.cast(label, input.dtype)
    if log_input:
        loss = _C.exp(input) - label * input
    else:
        loss = input - label * _C.log(input + float(epsilon))
    if full:
        big = label > 1.0
        safe = _C.where(big, label, _C.full([], 1.0, label.dtype))
        stirling = safe * _C.log(safe) - safe + 0.5 * _C.log(2 * float(np.pi) * safe)
        loss = loss + _C.where(big, stirling, _C.full([], 0.0, label.dtype))
    return _reduce(loss, reduction)


def multi_label_soft_margin_loss(input, label, weight=None, reduction="mean", name=None):  # noqa: A002
    """Mean over classes of -(y log sigmoid(x) + (1 - y) log sigmoid(-x)), times weight; one value per sample.

    >>> import oar
    >>> x, y = oar.to_tensor([[0.0, 0.0]]), oar.to_tensor([[1.0, 0.0]])
    >>> round(oar.nn.functional.multi_label_soft_margin_loss(x, y).item(), 4)
    0.6931
    """
    api = "multi_label_soft_margin_loss"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    _check_reduction(reduction, api)
    if input.ndim != 2:
        raise _err(api, f"input must be 2-D [N, C], got shape {list(input.shape)}")
    _check_same_shape(input, label, api, "input", "label")
    label = _C.cast(label, input.dtype)
    loss = label * _softplus(-input) + (1.0 - label) * _softplus(input)
    if weight is not None:
        _check_tensor(weight, api, "weight")
        loss = loss * _C.cast(weight, input.dtype)
    return _reduce(_C.mean(loss, [-1]), reduction)


def _pick(x, label):
    """x[i, label[i]] as an [N, 1] tensor."""
    return take_along_axis(x, _C.unsqueeze(label, [-1]), -1)


def multi_margin_loss(input, label, p=1, margin=1.0, weight=None, reduction="mean", name=None):  # noqa: A002
    """Multi-class hinge loss: sum over j != y of max(0, margin - x[y] + x[j])^p / C (times weight[y]).

    >>> import oar
    >>> x = oar.to_tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(oar.nn.functional.multi_margin_loss(x, oar.to_tensor([3])).item(), 4)
    0.325
    """
    api = "multi_margin_loss"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    _check_reduction(reduction, api)
    if p not in (1, 2):
        raise _err(api, f"p must be 1 or 2, got {p}")
    if input.ndim != 2:
        raise _err(api, f"input must be 2-D [N, C], got shape {list(input.shape)}")
    if not _is_int(label) or list(label.shape) != [input.shape[0]]:
        raise _err(api, f"label must be an integer tensor of shape [{input.shape[0]}], got {label.dtype} "
                        f"{list(label.shape)}")
    n_class = input.shape[1]
    _check_labels_in(label, n_class, api)
    label = _C.cast(label, "int64")
    hinge = _C.clip(float(margin) - _pick(input, label) + input, 0.0, None)
    if p == 2:
        hinge = _C.square(hinge)
    if weight is not None:
        _check_tensor(weight, api, "weight")
        if list(weight.shape) != [n_class]:
            raise _err(api, f"weight must have shape [{n_class}], got {list(weight.shape)}")
        hinge = hinge * take_along_axis(_C.cast(weight, input.dtype), label, 0)[:, None]
    not_target = 1.0 - _C.cast(_C.equal(_C.unsqueeze(label, [-1]), _C.arange(0, n_class, 1, "int64")), input.dtype)
    return _reduce(_C.sum(hinge * not_target, [-1]) / n_class, reduction)


def multi_label_margin_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """Multi-label hinge loss. label[i] lists the target classes of sample i, ended by the first -1.

    loss_i = sum over targets j and non-targets k of max(0, 1 - (x[j] - x[k])) / C.

    >>> import oar
    >>> x = oar.to_tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(oar.nn.functional.multi_label_margin_loss(x, oar.to_tensor([[3, 0, -1, 1]])).item(), 4)
    0.85
    """
    api = "multi_label_margin_loss"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    _check_reduction(reduction, api)
    if input.ndim not in (1, 2):
        raise _err(api, f"input must be 1-D [C] or 2-D [N, C], got shape {list(input.shape)}")
    if not _is_int(label):
        raise TypeError(f"[oar.nn.functional.{api}] label must be an integer tensor, got {label.dtype}")
    _check_same_shape(input, label, api, "input", "label")
    squeeze = input.ndim == 1
    if squeeze:
        input, label = _C.unsqueeze(input, [0]), _C.unsqueeze(label, [0])
    n_class = input.shape[1]
    lab = label.numpy().astype(np.int64)
    if lab.size and lab.max() >= n_class:
        raise _err(api, f"label values must be in [0, {n_class}) or -1, got {lab.max()}")
    # target[i, c]: class c is one of sample i's targets (those before the first -1).
    ended = np.cumsum(lab < 0, axis=1) > 0
    target = np.zeros(lab.shape, dtype=bool)
    rows, cols = np.nonzero(~ended)
    target[rows, lab[rows, cols]] = True
    tgt = _C.from_numpy(target.astype(np.float64)).astype(input.dtype)
    # pairs[i, j, k] = max(0, 1 - x[i, j] + x[i, k]) for target j, non-target k
    pairs = _C.clip(1.0 - _C.unsqueeze(input, [2]) + _C.unsqueeze(input, [1]), 0.0, None)
    mask = _C.unsqueeze(tgt, [2]) * _C.unsqueeze(1.0 - tgt, [1])
    loss = _C.sum(pairs * mask, [1, 2]) / n_class
    if squeeze:
        loss = _C.squeeze(loss, [0])
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(input, positive, negative, distance_function=None, margin=1.0,  # noqa: A002
                                      swap=False, reduction="mean", name=None):
    """max(d(a, p) - d(a, n) + margin, 0) with d a callable (default: pairwise_distance, p=2).

    >>> import oar
    >>> a = oar.to_tensor([[0.0, 0.0]]); pos = oar.to_tensor([[0.0, 1.0]]); neg = oar.to_tensor([[0.0, 3.0]])
    >>> d = lambda u, v: (u - v).abs().sum(-1)
    >>> oar.nn.functional.triplet_margin_with_distance_loss(a, pos, neg, distance_function=d, margin=3.0).item()
    1.0
    """
    api = "triplet_margin_with_distance_loss"
    if distance_function is not None and not callable(distance_function):
        raise TypeError(f"[oar.nn.functional.{api}] distance_function must be callable, "
                        f"got {type(distance_function).__name__}")
    return _triplet(input, positive, negative, distance_function or pairwise_distance, margin, swap, reduction, api)


def dice_loss(input, label, epsilon=1e-05, name=None):  # noqa: A002
    """Mean over the batch of 1 - 2 |X n Y| / (|X| + |Y| + eps), X the probabilities [N, ..., C], Y one_hot(label).

    label holds class indices with input's shape and a last dim of 1.

    >>> import oar
    >>> p = oar.to_tensor([[0.9, 0.1], [0.2, 0.8]])
    >>> round(oar.nn.functional.dice_loss(p, oar.to_tensor([[0], [1]])).item(), 4)
    0.15
    """
    api = "dice_loss"
    _check_float(input, api, "input")
    _check_tensor(label, api, "label")
    if not _is_int(label):
        raise TypeError(f"[oar.nn.functional.{api}] label must be an integer tensor, got {label.dtype}")
    if input.ndim < 2 or list(label.shape) != list(input.shape[:-1]) + [1]:
        raise _err(api, f"label shape must be {list(input.shape[:-1]) + [1]} for input shape "
                        f"{list(input.shape)} (class indices, last dim 1), got {list(label.shape)}")
    n_class = input.shape[-1]
    _check_labels_in(label, n_class, api)
    one_hot = _C.cast(_C.equal(_C.cast(label, "int64"), _C.arange(0, n_class, 1, "int64")), input.dtype)
    axes = list(range(1, input.ndim))
    inse = _C.sum(input * one_hot, axes)
    denom = _C.sum(input, axes) + _C.sum(one_hot, axes)
    return _C.mean(1.0 - 2.0 * inse / (denom + float(epsilon)))


def npair_loss(anchor, positive, labels, l2_reg=0.002):
    """N-pair loss: soft-label cross entropy of anchor @ positive^T against same-label targets, plus L2.

    The target row of anchor i spreads evenly over the positives with its label;
    the L2 term is l2_reg * (mean ||a||^2 + mean ||p||^2) / 4.

    >>> import oar
    >>> a = oar.to_tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> round(oar.nn.functional.npair_loss(a, a, oar.to_tensor([0, 1]), l2_reg=0.0).item(), 4)
    0.3133
    """
    api = "npair_loss"
    _check_float(anchor, api, "anchor")
    _check_float(positive, api, "positive")
    _check_tensor(labels, api, "labels")
    if anchor.ndim != 2:
        raise _err(api, f"anchor must be 2-D [N, D], got shape {list(anchor.shape)}")
    _check_same_shape(anchor, positive, api, "anchor", "positive")
    if labels.size != anchor.shape[0]:
        raise _err(api, f"labels must hold {anchor.shape[0]} values (one per anchor), got shape {list(labels.shape)}")
    labels = _C.reshape(labels, [-1, 1])
    same = _C.cast(_C.equal(labels, _C.transpose(labels, [1, 0])), anchor.dtype)
    target = same / _C.sum(same, [1], keepdim=True)
    l2 = (_C.mean(_C.sum(_C.square(anchor), [1])) + _C.mean(_C.sum(_C.square(positive), [1]))) * (0.25 * l2_reg)
    sim = _C.matmul(anchor, positive, False, True)
    ce = -_C.sum(target * _C._nn_functional.log_softmax(sim, -1), [-1])
    return _C.mean(ce) + l2


def margin_cross_entropy(logits, label, margin1=1.0, margin2=0.5, margin3=0.0, scale=64.0, group=None,
                         return_softmax=False, reduction="mean"):
    """Combined-margin softmax cross entropy (ArcFace / CosFace / SphereFace) on one process.

    logits hold cosines cos(theta) [N, C]; the target logit becomes
    cos(margin1 * theta + margin2) - margin3, every logit is multiplied by
    scale, then softmax cross entropy. reduction: 'mean', 'sum' or 'none'/None
    (shape [N, 1]). group is accepted for Paddle compatibility; classes are
    not split across processes here.

    >>> import oar
    >>> cos = oar.to_tensor([[1.0, 0.0]])
    >>> round(oar.nn.functional.margin_cross_entropy(cos, oar.to_tensor([0]), margin2=0.0, scale=1.0).item(), 4)
    0.3133
    """
    api = "margin_cross_entropy"
    _check_float(logits, api, "logits")
    _check_tensor(label, api, "label")
    if reduction is None:
        reduction = "none"
    _check_reduction(reduction, api)
    if logits.ndim != 2:
        raise _err(api, f"logits must be 2-D [N, C], got shape {list(logits.shape)}")
    if label.ndim == 2 and label.shape[1] == 1:
        label = _C.squeeze(label, [1])
    if not _is_int(label) or list(label.shape) != [logits.shape[0]]:
        raise _err(api, f"label must be an integer tensor of shape [{logits.shape[0]}] or "
                        f"[{logits.shape[0]}, 1], got {label.dtype} {list(label.shape)}")
    n_class = logits.shape[1]
    _check_labels_in(label, n_class, api)
    label = _C.cast(label, "int64")
    target = _pick(logits, label)
    theta = _C.acos(_C.clip(target, -1.0, 1.0))
    changed = _C.cos(theta * float(margin1) + float(margin2)) - float(margin3)
    is_target = _C.equal(_C.unsqueeze(label, [-1]), _C.arange(0, n_class, 1, "int64"))
    z = _C.where(is_target, _C.expand(changed, logits.shape), logits) * float(scale)
    logp = _C._nn_functional.log_softmax(z, -1)
    loss = _reduce(-_pick(logp, label), reduction)
    if return_softmax:
        return loss, _C.exp(logp)
    return loss


def class_center_sample(label, num_classes, num_samples, group=None):
    """Samples class centers for partial-FC training (one process): every class present in label, then
    random other classes up to num_samples.

    Returns (remapped_label, sampled_class_center): the positive classes in
    ascending order followed by the sampled negatives, and each label's index
    in that list.

    >>> import oar
    >>> remapped, centers = oar.nn.functional.class_center_sample(oar.to_tensor([3, 7, 3]), 10, 2)
    >>> remapped.numpy().tolist(), centers.numpy().tolist()
    ([0, 1, 0], [3, 7])
    """
    api = "class_center_sample"
    _check_tensor(label, api, "label")
    if not _is_int(label) or label.ndim != 1:
        raise _err(api, f"label must be a 1-D integer tensor, got {label.dtype} of shape {list(label.shape)}")
    if num_samples <= 0 or num_samples > num_classes:
        raise _err(api, f"num_samples must be in [1, num_classes ({num_classes})], got {num_samples}")
    _check_labels_in(label, num_classes, api)
    lab = label.numpy().astype(np.int64)
    positive = np.unique(lab)
    n_neg = max(num_samples - positive.size, 0)
    if n_neg:
        rest = np.setdiff1d(np.arange(num_classes, dtype=np.int64), positive)
        perm = _C.randperm(rest.size, "int64").numpy()
        centers = np.concatenate([positive, np.sort(rest[perm[:n_neg]])])
    else:
        centers = positive
    remapped = np.searchsorted(positive, lab)
    return (_C.from_numpy(remapped.astype(lab.dtype)).astype(label.dtype),
            _C.from_numpy(centers.astype(lab.dtype)).astype(label.dtype))


from ._loss_ext import adaptive_log_softmax_with_loss, hsigmoid_loss, rnnt_loss  # noqa: E402 - uses the helpers above
