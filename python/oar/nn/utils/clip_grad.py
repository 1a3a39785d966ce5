"""Clipping the gradients stored on parameters, in place: clip_grad_norm_ and clip_grad_value_.

Unlike the clip objects of oar.nn.clip (given to an optimizer), these act on
``param.grad`` directly and ignore ``need_clip``, as Paddle's do.
"""
import math
import numbers

from ... import _C
from ...autograd import no_grad
from ..initializer import _float_work_dtype

__all__ = ["clip_grad_norm_", "clip_grad_value_"]

_Tensor = _C.Tensor


def _as_param_list(parameters, api):
    if isinstance(parameters, _Tensor):
        return [parameters]
    try:
        params = list(parameters)
    except TypeError:
        raise TypeError(f"[{api}] parameters must be a Tensor or an iterable of Tensors, "
                        f"got {type(parameters).__name__}") from None
    for p in params:
        if not isinstance(p, _Tensor):
            raise TypeError(f"[{api}] parameters must be Tensors, got an entry of type {type(p).__name__}")
    return params


def _as_number(value, api, what):
    if isinstance(value, _Tensor):
        if value.size != 1:
            raise ValueError(f"[{api}] {what} must be a number or a 1-element Tensor, got shape {list(value.shape)}")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"[{api}] {what} must be a number, got {type(value).__name__}")
    return float(value)


def grads_norm(grads, norm_type=2.0):
    """The norm_type-norm of all ``grads`` taken together, as a float64 0-D Tensor (None for no grads).

    This is the norm of the vector of per-gradient norms: for p > 0 and inf the
    norm of all entries; for p = 0 (as Paddle) the number of gradients that have
    a nonzero entry. Each gradient is reduced in float32 (float64 stays float64)
    and the per-gradient sums are accumulated in float64.

    >>> import oar
    >>> from oar.nn.utils.clip_grad import grads_norm
    >>> float(grads_norm([oar.to_tensor([3.0]), oar.to_tensor([0.0, -4.0])]))
    5.0
    >>> float(grads_norm([oar.to_tensor([3.0]), oar.to_tensor([0.0, -4.0])], float("inf")))
    4.0
    """
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    f64 = _C.dtype.float64
    total = None
    for g in grads:
        if g.size == 0:
            continue
        w = _C.cast(g, _float_work_dtype(g.dtype))
        if norm_type == math.inf:
            part = _C.cast(_C.max(_C.abs(w)), f64)
            total = part if total is None else _C.maximum(total, part)
            continue
        if norm_type == 0:
            part = _C.cast(_C.count_nonzero(w) > 0, f64)
        elif norm_type == 2:
            part = _C.cast(_C.sum(_C.square(w)), f64)
        elif norm_type == 1:
            part = _C.cast(_C.sum(_C.abs(w)), f64)
        else:
            part = _C.sum(_C.pow(_C.cast(_C.abs(w), f64), _C.full([], norm_type, f64)))
        total = part if total is None else total + part
    if total is None:
        return _C.full([], 0.0, f64)
    if norm_type in (0, 1, math.inf):
        return total
    if norm_type == 2:
        return _C.sqrt(total)
    return _C.pow(total, _C.full([], 1.0 / norm_type, f64))


def _result_dtype(grads):
    dtypes = {g.dtype for g in grads}
    if len(dtypes) == 1:
        return dtypes.pop()
    return _C.dtype.float64 if _C.dtype.float64 in dtypes else _C.dtype.float32


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scales the gradients of ``parameters`` in place so that their total norm is at most max_norm.

    The total norm is the norm_type-norm of all gradients together (see
    ``grads_norm``; norm_type is any p >= 0 or ``float('inf')``; Paddle allows
    0, 1, 2 and inf). Every gradient is multiplied by
    min(max_norm / (total_norm + 1e-6), 1). Parameters without a gradient are
    skipped. Returns the total norm before clipping (0-D, in the gradients'
    dtype; 0.0 when no parameter has a gradient). With error_if_nonfinite=True
    a NaN or infinite total norm raises RuntimeError and leaves the gradients
    unchanged.

    >>> import oar
    >>> w = oar.create_parameter([2], "float32")
    >>> (w * oar.to_tensor([3.0, 4.0])).sum().backward()
    >>> float(oar.nn.utils.clip_grad_norm_([w], max_norm=1.0))
    5.0
    >>> [round(v, 4) for v in w.grad.numpy().tolist()]
    [0.6, 0.8]
    """
    api = "oar.nn.utils.clip_grad_norm_"
    params = _as_param_list(parameters, api)
    max_norm = _as_number(max_norm, api, "max_norm")
    norm_type = _as_number(norm_type, api, "norm_type")
    if math.isnan(max_norm) or max_norm < 0:
        raise ValueError(f"[{api}] max_norm must be >= 0, got {max_norm}")
    if math.isnan(norm_type) or norm_type < 0:
        raise ValueError(f"[{api}] norm_type must be >= 0 or inf, got {norm_type}")
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return _C.full([], 0.0, _C.dtype.float32)
    total = grads_norm(grads, norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"[{api}] the total {norm_type:g}-norm of the gradients is {float(total)}, so they "
                           f"cannot be clipped; pass error_if_nonfinite=False to scale them by it anyway")
    coef = _C.clip(max_norm / (total + 1e-6), None, 1.0)
    for g in grads:
        g.multiply_(_C.cast(coef, g.dtype))
    return _C.cast(total, _result_dtype(grads))


@no_grad()
def clip_grad_value_(parameters, clip_value):
    """Clips the gradients of ``parameters`` in place into [-clip_value, clip_value]; returns None.

    >>> import oar
    >>> w = oar.create_parameter([3], "float32")
    >>> (w * oar.to_tensor([3.0, -0.5, -4.0])).sum().backward()
    >>> oar.nn.utils.clip_grad_value_(w, 1.0)
    >>> w.grad.numpy().tolist()
    [1.0, -0.5, -1.0]
    """
    api = "oar.nn.utils.clip_grad_value_"
    params = _as_param_list(parameters, api)
    clip_value = _as_number(clip_value, api, "clip_value")
    if math.isnan(clip_value) or clip_value < 0:
        raise ValueError(f"[{api}] clip_value must be >= 0, got {clip_value}")
    for p in params:
        if p.grad is not None:
            p.grad.clip_(-clip_value, clip_value)
