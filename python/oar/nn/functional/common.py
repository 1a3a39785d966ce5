"""oar.nn.functional: linear maps, embeddings, dropout, distances and label helpers.

All are composites of oar ops, so they are differentiable to any order.
"""
import numbers

from ... import _C
from ..._manip import pad as _pad

__all__ = [
    "linear", "bilinear", "embedding", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "one_hot",
    "cosine_similarity", "pairwise_distance", "normalize", "label_smooth", "pad", "zeropad2d",
]

pad = _pad


def _check_tensor(x, api, what="x"):
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[oar.nn.functional.{api}] {what} must be a Tensor, got {type(x).__name__}")


def _is_float(t):
    return str(t.dtype).split(".")[-1].startswith(("float", "bfloat"))


def linear(x, weight, bias=None, name=None):
    """x @ weight + bias, with weight of shape [in_features, out_features] (Paddle's layout).

    >>> import oar
    >>> x = oar.ones([2, 3]); w = oar.ones([3, 4]); b = oar.zeros([4])
    >>> oar.nn.functional.linear(x, w, b).numpy().tolist()[0]
    [3.0, 3.0, 3.0, 3.0]
    """
    _check_tensor(x, "linear")
    _check_tensor(weight, "linear", "weight")
    if weight.ndim != 2:
        raise ValueError(f"[oar.nn.functional.linear] weight must be 2-D [in, out], got shape {weight.shape}")
    if x.ndim == 0 or x.shape[-1] != weight.shape[0]:
        raise ValueError(f"[oar.nn.functional.linear] x.shape[-1] must equal weight.shape[0] ({weight.shape[0]}), "
                         f"got x.shape {x.shape}")
    if bias is not None and bias.ndim == 1 and all(t.dtype.is_floating_point for t in (x, weight, bias)):
        return _C._linear(x, weight, bias)  # one product that starts from the bias
    out = _C.matmul(x, weight)
    if bias is not None:
        out = out + bias
    return out


def bilinear(x1, x2, weight, bias=None, name=None):
    """out[b, o] = x1[b] @ weight[o] @ x2[b] + bias[o]; weight is [out, in1, in2], bias [1, out].

    >>> import oar
    >>> w = oar.ones([2, 3, 4])
    >>> oar.nn.functional.bilinear(oar.ones([5, 3]), oar.ones([5, 4]), w).shape
    [5, 2]
    """
    for t, n in ((x1, "x1"), (x2, "x2"), (weight, "weight")):
        _check_tensor(t, "bilinear", n)
    if weight.ndim != 3 or x1.ndim != 2 or x2.ndim != 2:
        raise ValueError(f"[oar.nn.functional.bilinear] expected x1 [N, in1], x2 [N, in2], weight [out, in1, in2], "
                         f"got {x1.shape}, {x2.shape}, {weight.shape}")
    out_f, in1, in2 = weight.shape
    if x1.shape[1] != in1 or x2.shape[1] != in2 or x1.shape[0] != x2.shape[0]:
        raise ValueError(f"[oar.nn.functional.bilinear] shapes do not match: x1 {x1.shape}, x2 {x2.shape}, "
                         f"weight {weight.shape}")
    # [N, in1] @ [in1, out*in2] -> [N, out, in2], then contract with x2.
    w = _C.reshape(_C.transpose(weight, [1, 0, 2]), [in1, out_f * in2])
    t = _C.reshape(_C.matmul(x1, w), [x1.shape[0], out_f, in2])
    out = _C.sum(t * _C.unsqueeze(x2, [1]), [2])
    if bias is not None:
        out = out + _C.reshape(bias, [1, out_f])
    return out


def embedding(x, weight, padding_idx=None, max_norm=None, norm_type=2.0, sparse=False, scale_grad_by_freq=False,
              name=None):
    """Looks up rows of weight; rows at padding_idx come out as zeros and get no gradient.

    >>> import oar
    >>> w = oar.to_tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    >>> oar.nn.functional.embedding(oar.to_tensor([[2, 1]]), w).numpy().tolist()
    [[[3.0, 4.0], [1.0, 2.0]]]
    >>> oar.nn.functional.embedding(oar.to_tensor([2, 1]), w, padding_idx=1).numpy().tolist()
    [[3.0, 4.0], [0.0, 0.0]]
    """
    _check_tensor(x, "embedding")
    _check_tensor(weight, "embedding", "weight")
    if weight.ndim != 2:
        raise ValueError(f"[oar.nn.functional.embedding] weight must be 2-D, got shape {weight.shape}")
    if _is_float(x) or str(x.dtype).split(".")[-1] in ("bool", "complex64", "complex128"):
        raise TypeError(f"[oar.nn.functional.embedding] x must be an integer tensor, got {x.dtype}")
    n = weight.shape[0]
    if x.size and not _C._ir_is_tracing():  # (inside a trace the gather itself checks the ids)
        lo, hi = int(x.min()), int(x.max())
        if lo < 0 or hi >= n:
            raise IndexError(f"[oar.nn.functional.embedding] ids must be in [0, {n}), got values in [{lo}, {hi}]")
    if padding_idx is not None:
        padding_idx = int(padding_idx)
        if padding_idx < -n or padding_idx >= n:
            raise ValueError(f"[oar.nn.functional.embedding] padding_idx must be in [-{n}, {n}), got {padding_idx}")
        padding_idx = padding_idx + n if padding_idx < 0 else padding_idx
    if max_norm is not None:
        from ... import no_grad

        with no_grad():  # renormalise the looked-up rows in place, as Paddle and PyTorch do
            norms = _C.norm(weight, float(norm_type), [1], True)
            scale = _C.where(norms > max_norm, max_norm / (norms + 1e-7), _C.full([1], 1.0, weight.dtype))
            weight.copy_(weight * scale)
    # One gather over the ids' own shape (no flatten and reshape back), so a
    # captured program keeps the ids' dynamic dims.
    rows = _C._gather_nd(weight, _C.unsqueeze(x, [-1]))
    if padding_idx is not None:
        keep = _C.cast(_C.not_equal(x, _C.full([1], padding_idx, x.dtype)), weight.dtype)
        rows = rows * _C.unsqueeze(keep, [-1])
    return rows


def _check_p(p, api):
    if isinstance(p, bool) or not isinstance(p, numbers.Number):
        raise TypeError(f"[oar.nn.functional.{api}] p must be a number, got {type(p).__name__}")
    if not 0 <= p <= 1:
        raise ValueError(f"[oar.nn.functional.{api}] p must be in [0, 1], got {p}")


def dropout(x, p=0.5, axis=None, training=True, mode="upscale_in_train", name=None):
    """Zeroes entries with probability p.

    mode 'upscale_in_train' scales kept entries by 1/(1-p) in training and is the
    identity in evaluation; 'downscale_in_infer' keeps entries unscaled in training
    and multiplies by (1-p) in evaluation. axis, if given, drops whole slices: the
    mask varies only along those axes.

    >>> import oar
    >>> x = oar.ones([2, 3])
    >>> oar.nn.functional.dropout(x, 0.5, training=False).numpy().tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    >>> y = oar.nn.functional.dropout(x, 0.5)
    >>> sorted(set(y.numpy().reshape(-1).tolist())) in ([0.0], [2.0], [0.0, 2.0])
    True
    """
    _check_tensor(x, "dropout")
    _check_p(p, "dropout")
    if mode not in ("upscale_in_train", "downscale_in_infer"):
        raise ValueError(f"[oar.nn.functional.dropout] mode must be 'upscale_in_train' or 'downscale_in_infer', "
                         f"got {mode!r}")
    if not _is_float(x):
        raise TypeError(f"[oar.nn.functional.dropout] x must be a floating tensor, got {x.dtype}")
    if not training:
        return x * (1.0 - p) if mode == "downscale_in_infer" else x
    if p == 0:
        return x
    if axis is None:
        mask_shape = list(x.shape)
    else:
        axes = [axis] if isinstance(axis, int) else list(axis)
        axes = [a + x.ndim if a < 0 else a for a in axes]
        if any(a < 0 or a >= x.ndim for a in axes) or len(set(axes)) != len(axes):
            raise ValueError(f"[oar.nn.functional.dropout] axis {axis} is invalid for a {x.ndim}-D input")
        mask_shape = [s if i in axes else 1 for i, s in enumerate(x.shape)]
    if p == 1:
        return x * 0.0
    work = _C.dtype.float64 if x.dtype == _C.dtype.float64 else _C.dtype.float32
    keep = _C.cast(_C.uniform(mask_shape, work, 0.0, 1.0, 0) >= p, x.dtype)
    if mode == "upscale_in_train":
        keep = keep * (1.0 / (1.0 - p))
    return x * keep


def _feature_dropout(x, p, training, data_format, ndim, formats, api):
    _check_tensor(x, api)
    if x.ndim != ndim:
        raise ValueError(f"[oar.nn.functional.{api}] x must be {ndim}-D, got shape {x.shape}")
    if data_format not in formats:
        raise ValueError(f"[oar.nn.functional.{api}] data_format must be one of {formats}, got {data_format!r}")
    axis = [0, 1] if data_format == formats[0] else [0, ndim - 1]
    return dropout(x, p, axis=axis, training=training)


def dropout2d(x, p=0.5, training=True, data_format="NCHW", name=None):
    """Drops whole channels of a 4-D input.

    >>> import oar
    >>> oar.nn.functional.dropout2d(oar.ones([1, 2, 2, 2]), 0.5, training=False).shape
    [1, 2, 2, 2]
    """
    return _feature_dropout(x, p, training, data_format, 4, ("NCHW", "NHWC"), "dropout2d")


def dropout3d(x, p=0.5, training=True, data_format="NCDHW", name=None):
    """Drops whole channels of a 5-D input.

    >>> import oar
    >>> oar.nn.functional.dropout3d(oar.ones([1, 2, 1, 2, 2]), 0.5, training=False).shape
    [1, 2, 1, 2, 2]
    """
    return _feature_dropout(x, p, training, data_format, 5, ("NCDHW", "NDHWC"), "dropout3d")


def dropout1d(input, p=0.5, training=True, inplace=False):  # noqa: A002 - Paddle's argument name
    """Drops whole channels of a [N, C, L] (or [C, L]) input, scaling the kept ones by 1 / (1 - p).

    >>> import oar
    >>> oar.nn.functional.dropout1d(oar.ones([2, 3, 4]), 0.5, training=False).shape
    [2, 3, 4]
    """
    _check_tensor(input, "dropout1d", "input")
    if input.ndim not in (2, 3):
        raise ValueError(f"[oar.nn.functional.dropout1d] input must be 2-D [C, L] or 3-D [N, C, L], "
                         f"got shape {input.shape}")
    out = dropout(input, p, axis=[0] if input.ndim == 2 else [0, 1], training=training)
    if inplace and out is not input:
        return input.copy_(out)
    return out


_SELU_NEG = -1.7580993408473766  # -scale * alpha of SELU: the value SELU saturates to


def _alpha_dropout(x, p, training, mask_shape, api):
    _check_p(p, api)
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0.0 + _SELU_NEG
    a = ((1 - p) * (1 + p * _SELU_NEG ** 2)) ** -0.5
    b = -a * _SELU_NEG * p
    work = _C.dtype.float64 if x.dtype == _C.dtype.float64 else _C.dtype.float32
    keep = _C.cast(_C.uniform(mask_shape, work, 0.0, 1.0, 0) >= p, x.dtype)
    return (x * keep + (1.0 - keep) * _SELU_NEG) * a + b


def alpha_dropout(x, p=0.5, training=True, name=None):
    """Dropout for SELU networks: dropped entries take SELU's negative saturation value and an
    affine map keeps the mean and variance.

    >>> import oar
    >>> oar.nn.functional.alpha_dropout(oar.ones([3]), 0.5, training=False).numpy().tolist()
    [1.0, 1.0, 1.0]
    """
    _check_tensor(x, "alpha_dropout")
    return _alpha_dropout(x, p, training, list(x.shape), "alpha_dropout")


def feature_alpha_dropout(x, p=0.5, training=True, name=None):
    """alpha_dropout that drops whole channels: one draw per (batch, channel) of an input with >= 2 dims.

    >>> import oar
    >>> y = oar.nn.functional.feature_alpha_dropout(oar.ones([2, 3, 4]), 0.5)
    >>> all(len(set(row)) == 1 for row in y.numpy().reshape(6, 4).round(4).tolist())
    True
    """
    _check_tensor(x, "feature_alpha_dropout")
    if x.ndim < 2:
        raise ValueError(f"[oar.nn.functional.feature_alpha_dropout] x must have at least 2 dims, got shape {x.shape}")
    return _alpha_dropout(x, p, training, list(x.shape[:2]) + [1] * (x.ndim - 2), "feature_alpha_dropout")


def one_hot(x, num_classes, name=None):
    """One-hot float32 encoding; the output has shape x.shape + [num_classes].

    >>> import oar
    >>> oar.nn.functional.one_hot(oar.to_tensor([0, 2]), 3).numpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    _check_tensor(x, "one_hot")
    if _is_float(x):
        raise TypeError(f"[oar.nn.functional.one_hot] x must be an integer tensor, got {x.dtype}")
    num_classes = int(num_classes)
    if num_classes < 1:
        raise ValueError(f"[oar.nn.functional.one_hot] num_classes must be >= 1, got {num_classes}")
    if x.size and not _C._ir_is_tracing():  # (inside a trace the gather itself checks the ids)
        lo, hi = int(x.min()), int(x.max())
        if lo < 0 or hi >= num_classes:
            raise ValueError(f"[oar.nn.functional.one_hot] values must be in [0, {num_classes}), "
                             f"got values in [{lo}, {hi}]")
    classes = _C.arange(0, num_classes, 1, x.dtype)
    return _C.cast(_C.equal(_C.unsqueeze(x, [-1]), classes), _C.dtype.float32)


def cosine_similarity(x1, x2, axis=1, eps=1e-8):
    """Cosine of the angle between x1 and x2 along axis (norms clipped below by eps).

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 0.0], [1.0, 1.0]]); y = oar.to_tensor([[1.0, 0.0], [-1.0, -1.0]])
    >>> [round(v, 4) for v in oar.nn.functional.cosine_similarity(x, y).numpy().tolist()]
    [1.0, -1.0]
    """
    _check_tensor(x1, "cosine_similarity", "x1")
    _check_tensor(x2, "cosine_similarity", "x2")
    w12 = _C.sum(x1 * x2, [axis])
    w1 = _C.sum(x1 * x1, [axis])
    w2 = _C.sum(x2 * x2, [axis])
    n12 = _C.sqrt(_C.clip(w1 * w2, eps * eps, float("inf")))
    return w12 / n12


def pairwise_distance(x, y, p=2.0, epsilon=1e-6, keepdim=False, name=None):
    """The p-norm of (x - y + epsilon) along the last axis.

    >>> import oar
    >>> d = oar.nn.functional.pairwise_distance(oar.to_tensor([[3.0, 0.0]]), oar.to_tensor([[0.0, 4.0]]), epsilon=0)
    >>> d.numpy().tolist()
    [5.0]
    """
    _check_tensor(x, "pairwise_distance")
    _check_tensor(y, "pairwise_distance", "y")
    from ..._C import norm

    return norm(x - y + epsilon, p=float(p), axis=-1, keepdim=keepdim)


def normalize(x, p=2, axis=1, epsilon=1e-12, name=None):
    """x / max(||x||_p along axis, epsilon).

    >>> import oar
    >>> oar.nn.functional.normalize(oar.to_tensor([[3.0, 4.0]])).numpy().tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    _check_tensor(x, "normalize")
    from ..._C import norm

    n = norm(x, p=float(p), axis=axis, keepdim=True)
    return x / _C.clip(n, float(epsilon), float("inf"))


def label_smooth(label, prior_dist=None, epsilon=0.1, name=None):
    """(1 - epsilon) * label + epsilon * prior_dist (uniform over the last axis by default).

    >>> import oar
    >>> y = oar.nn.functional.label_smooth(oar.to_tensor([[0.0, 1.0]]), epsilon=0.2)
    >>> [round(v, 4) for v in y.numpy()[0].tolist()]
    [0.1, 0.9]
    """
    _check_tensor(label, "label_smooth", "label")
    if not 0 <= epsilon <= 1:
        raise ValueError(f"[oar.nn.functional.label_smooth] epsilon must be in [0, 1], got {epsilon}")
    if prior_dist is None:
        return label * (1.0 - epsilon) + epsilon / label.shape[-1]
    return label * (1.0 - epsilon) + prior_dist * epsilon


def zeropad2d(x, padding, data_format="NCHW", name=None):
    """Zero padding of the two spatial axes; padding is [left, right, top, bottom].

    >>> import oar
    >>> oar.nn.functional.zeropad2d(oar.ones([1, 1, 1, 1]), [1, 0, 0, 1]).shape
    [1, 1, 2, 2]
    """
    return _pad(x, padding, mode="constant", value=0.0, data_format=data_format)
