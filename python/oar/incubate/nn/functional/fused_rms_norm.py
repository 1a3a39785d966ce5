"""fused_rms_norm with Paddle's signature, on the fused rms_norm op (src/ops/norm.cpp).

The residual sum and the norm bias are separate ops around rms_norm; the
optional int8 output follows Paddle's quantisation: round(max_bound * scale * y),
to even (round type 0) or away from zero (1), clipped to [min_bound, max_bound].
"""
import numbers

from ...._C import Tensor
from .... import nn as _nn

_API = "[oar.incubate.nn.functional.fused_rms_norm]"


def _check_tensor(t, what, optional):
    if t is None and optional:
        return
    if not isinstance(t, Tensor):
        raise TypeError(f"{_API} {what} must be a Tensor{' or None' if optional else ''}, got {type(t).__name__}")


def _quantize(y, scale, round_type, max_bound, min_bound):
    import oar
    q = y.astype("float32") * float(max_bound * scale)
    r = oar.round(q)  # half away from zero
    if round_type == 0:  # half to even: move the odd results of exact ties one step back
        tie = oar.abs(q - oar.trunc(q)) == 0.5
        odd = oar.remainder(r, oar.full_like(r, 2.0)) != 0
        r = oar.where(oar.logical_and(tie, odd), r - oar.sign(q), r)
    return oar.clip(r, float(min_bound), float(max_bound)).astype("int8")


def fused_rms_norm(x, norm_weight, norm_bias, epsilon, begin_norm_axis, bias=None, residual=None, quant_scale=-1,
                   quant_round_type=0, quant_max_bound=0, quant_min_bound=0):
    """RMS normalisation of ``h = x + bias + residual`` over the dims from begin_norm_axis on:
    ``h / sqrt(mean(h ** 2) + epsilon) * norm_weight + norm_bias``.

    Returns ``(out, residual_out)`` as Paddle's eager mode does: residual_out is ``h`` when a
    residual is given, else None. With ``quant_scale > 0`` out is int8, quantised as
    ``clip(round(quant_max_bound * quant_scale * y), quant_min_bound, quant_max_bound)``
    (quant_round_type 0 rounds half to even, 1 half away from zero). norm_weight, norm_bias
    and bias have the normalised dims' shape; bias and residual may be None, and so may
    norm_weight and norm_bias (no scale, no shift).

    >>> import oar
    >>> x = oar.to_tensor([[3.0, 4.0], [1.0, -1.0]])
    >>> out, res = oar.incubate.nn.functional.fused_rms_norm(x, oar.ones([2]), None, 0.0, 1)
    >>> [[round(v, 4) for v in row] for row in out.numpy().tolist()], res
    ([[0.8485, 1.1314], [1.0, -1.0]], None)
    >>> out, res = oar.incubate.nn.functional.fused_rms_norm(x, None, oar.ones([2]), 0.0, 1, residual=x)
    >>> res.numpy().tolist()
    [[6.0, 8.0], [2.0, -2.0]]
    """
    _check_tensor(x, "x", False)
    for what, t in (("norm_weight", norm_weight), ("norm_bias", norm_bias), ("bias", bias),
                    ("residual", residual)):
        _check_tensor(t, what, True)
    if isinstance(begin_norm_axis, bool) or not isinstance(begin_norm_axis, numbers.Integral):
        raise TypeError(f"{_API} begin_norm_axis must be an int, got {type(begin_norm_axis).__name__}")
    nd = x.ndim
    if not -nd <= begin_norm_axis < nd:
        raise ValueError(f"{_API} begin_norm_axis must be in [{-nd}, {nd}) for an input of shape {x.shape}, "
                         f"got {begin_norm_axis}")
    begin = int(begin_norm_axis) % nd
    normalized = list(x.shape[begin:])
    for what, t in (("norm_weight", norm_weight), ("norm_bias", norm_bias), ("bias", bias)):
        if t is not None and list(t.shape) != normalized:
            raise ValueError(f"{_API} {what} must have the normalised dims' shape {normalized}, got {t.shape}")
    if residual is not None and list(residual.shape) != list(x.shape):
        raise ValueError(f"{_API} residual must have x's shape {x.shape}, got {residual.shape}")
    h = x
    if bias is not None:
        h = h + bias.astype(x.dtype)
    if residual is not None:
        h = h + residual.astype(x.dtype)
    out = _nn.functional.rms_norm(h, normalized, norm_weight, epsilon)
    if norm_bias is not None:
        out = out + norm_bias.astype(out.dtype)
    if quant_scale > 0:
        out = _quantize(out, quant_scale, quant_round_type, quant_max_bound, quant_min_bound)
    return out, (h if residual is not None else None)
