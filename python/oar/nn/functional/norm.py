"""Normalisation with Paddle signatures: batch_norm, layer_norm, group_norm,
instance_norm, rms_norm and local_response_norm (C++ ops in src/ops/norm.cpp).

batch_norm and layer_norm run fused forward kernels; the gradients are
composites of ops, so they are differentiable to any order.
"""
import numbers

from ... import _C
from . import _nn_args as A

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "local_response_norm"]

_CHANNEL_FIRST = ("NC", "NCL", "NCHW", "NCDHW")
_CHANNEL_LAST = ("NLC", "NHWC", "NDHWC")


def _channel_axis(data_format, api):
    if data_format in _CHANNEL_FIRST:
        return 1
    if data_format in _CHANNEL_LAST:
        return -1
    raise ValueError(f"[{api}] data_format must be one of {_CHANNEL_FIRST + _CHANNEL_LAST}, got {data_format!r}")


def _opt_tensor(t, api, what):
    if t is not None:
        A.check_tensor(t, api, what)
    return t


def batch_norm(x, running_mean, running_var, weight, bias, training=False, momentum=0.9, epsilon=1e-05,
               data_format="NCHW", use_global_stats=None, name=None):
    """Batch normalisation over every axis but the channel axis.

    training (with use_global_stats None or False) normalises with the batch
    statistics and updates running_mean / running_var in place:
    running = momentum * running + (1 - momentum) * batch (biased variance).
    Otherwise the running statistics normalise.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0], [3.0, 6.0]])
    >>> rm, rv = oar.zeros([2]), oar.ones([2])
    >>> y = oar.nn.functional.batch_norm(x, rm, rv, None, None, training=True, data_format="NC")
    >>> [round(v, 3) for v in y.numpy()[:, 0].tolist()], [round(v, 3) for v in rm.numpy().tolist()]
    ([-1.0, 1.0], [0.2, 0.4])
    """
    api = "oar.nn.functional.batch_norm"
    A.check_tensor(x, api)
    for t, w in ((running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"), (bias, "bias")):
        _opt_tensor(t, api, w)
    axis = _channel_axis(data_format, api)
    if x.ndim < 2:
        raise ValueError(f"[{api}] expects an input with at least 2 dims, got shape {list(x.shape)}")
    use_batch = (not use_global_stats) if use_global_stats is not None else bool(training)
    update = bool(training) and use_batch
    # Batch statistics outside training normalise without touching the running tensors.
    rm, rv = (running_mean, running_var) if update or not use_batch else (None, None)
    return _C.nn_batch_norm(x, rm, rv, weight, bias, use_batch, float(momentum), float(epsilon), axis, api)


def _normalized_shape(x, normalized_shape, api):
    if isinstance(normalized_shape, numbers.Integral):
        ns = [int(normalized_shape)]
    elif isinstance(normalized_shape, (list, tuple)):
        ns = [int(v) for v in normalized_shape]
    else:
        raise ValueError(f"[{api}] normalized_shape must be an int or a list of ints, got {normalized_shape!r}")
    if not ns or len(ns) > x.ndim or list(x.shape[x.ndim - len(ns):]) != ns:
        raise ValueError(f"[{api}] normalized_shape {ns} must be non-empty and match the trailing dims of the "
                         f"input shape {list(x.shape)}")
    return x.ndim - len(ns)


def layer_norm(x, normalized_shape, weight=None, bias=None, epsilon=1e-05, name=None):
    """Normalises over the trailing dims given by normalized_shape, then scales and shifts.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0, 3.0]])
    >>> [round(v, 4) for v in oar.nn.functional.layer_norm(x, 3).numpy()[0].tolist()]
    [-1.2247, 0.0, 1.2247]
    """
    api = "oar.nn.functional.layer_norm"
    A.check_tensor(x, api)
    begin = _normalized_shape(x, normalized_shape, api)
    return _C.nn_layer_norm(x, begin, _opt_tensor(weight, api, "weight"), _opt_tensor(bias, api, "bias"),
                            float(epsilon), api)


def _channel_first(x, data_format, api, allowed):
    if data_format not in allowed:
        raise ValueError(f"[{api}] data_format must be one of {allowed}, got {data_format!r}")
    return data_format in _CHANNEL_LAST


def group_norm(x, num_groups, epsilon=1e-05, weight=None, bias=None, data_format="NCHW", name=None):
    """Normalises each group of channels of each sample, then a per-channel affine.

    >>> import oar
    >>> x = oar.to_tensor([[[1.0], [3.0], [5.0], [9.0]]])
    >>> [round(v, 3) for v in oar.nn.functional.group_norm(x, 2).numpy().reshape(-1).tolist()]
    [-1.0, 1.0, -1.0, 1.0]
    """
    api = "oar.nn.functional.group_norm"
    A.check_tensor(x, api)
    last = _channel_first(x, data_format, api, ("NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC", "NC"))
    if not A._is_int(num_groups):
        raise ValueError(f"[{api}] num_groups must be an int, got {num_groups!r}")
    if x.ndim < 2:
        raise ValueError(f"[{api}] expects an input with at least 2 dims, got shape {list(x.shape)}")
    nd = x.ndim - 2
    xc = A.to_channel_first(x, nd) if last and nd > 0 else x
    y = _C.nn_group_norm(xc, int(num_groups), _opt_tensor(weight, api, "weight"), _opt_tensor(bias, api, "bias"),
                         float(epsilon), api)
    return A.to_channel_last(y, nd) if last and nd > 0 else y


def instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.9, eps=1e-05, data_format="NCHW", name=None):
    """Normalises each channel of each sample over its spatial dims.

    >>> import oar
    >>> x = oar.to_tensor([[[1.0, 3.0], [2.0, 2.0]]])
    >>> [round(v, 3) for v in oar.nn.functional.instance_norm(x).numpy().reshape(-1).tolist()]
    [-1.0, 1.0, 0.0, 0.0]
    """
    api = "oar.nn.functional.instance_norm"
    A.check_tensor(x, api)
    last = _channel_first(x, data_format, api, ("NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"))
    if x.ndim < 3:
        raise ValueError(f"[{api}] expects an input with at least 3 dims (N, C, *), got shape {list(x.shape)}")
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ValueError(f"[{api}] running_mean and running_var are required when use_input_stats is False")
        return batch_norm(x, running_mean, running_var, weight, bias, training=False, epsilon=eps,
                          data_format=data_format)
    nd = x.ndim - 2
    xc = A.to_channel_first(x, nd) if last else x
    y = _C.nn_instance_norm(xc, _opt_tensor(weight, api, "weight"), _opt_tensor(bias, api, "bias"), float(eps), api)
    return A.to_channel_last(y, nd) if last else y


def rms_norm(input, normalized_shape, weight=None, eps=1e-05, name=None):  # noqa: A002 - Paddle's name
    """x / sqrt(mean(x ** 2 over the normalized dims) + eps) * weight.

    >>> import oar
    >>> x = oar.to_tensor([[3.0, 4.0]])
    >>> [round(v, 4) for v in oar.nn.functional.rms_norm(x, 2, eps=0.0).numpy()[0].tolist()]
    [0.8485, 1.1314]
    """
    api = "oar.nn.functional.rms_norm"
    A.check_tensor(input, api, "input")
    begin = _normalized_shape(input, normalized_shape, api)
    return _C.nn_rms_norm(input, begin, _opt_tensor(weight, api, "weight"), float(eps), api)


def local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0, data_format="NCHW", name=None):
    """x / (k + alpha / size * sum of x ** 2 over `size` neighbouring channels) ** beta.

    >>> import oar
    >>> y = oar.nn.functional.local_response_norm(oar.ones([1, 3, 1, 1]), size=3, alpha=3.0, beta=1.0)
    >>> [round(v, 4) for v in y.numpy().reshape(-1).tolist()]
    [0.3333, 0.25, 0.3333]
    """
    api = "oar.nn.functional.local_response_norm"
    A.check_tensor(x, api)
    if x.ndim < 3:
        raise ValueError(f"[{api}] expects an input with at least 3 dims, got shape {list(x.shape)}")
    if not A._is_int(size) or size <= 0:
        raise ValueError(f"[{api}] size must be a positive int, got {size!r}")
    last = _channel_first(x, data_format, api, ("NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"))
    nd = x.ndim - 2
    xc = A.to_channel_first(x, nd) if last else x
    # Sum of squares over a channel window: average-pool the squares along C
    # (non-exclusive, so the divisor is always `size`), as a 3-D pool over (C, rest).
    n, c = xc.shape[0], xc.shape[1]
    sq = _C.reshape(_C.square(xc), [n, 1, c, -1])
    pre, post = (size - 1) // 2, size // 2
    avg = _C.nn_avg_pool(sq, [size, 1], [1, 1], [pre, 0], [post, 0], False, False, False, api)
    div = (_C.reshape(avg, list(xc.shape)) * float(alpha) + float(k)) ** float(beta)
    y = xc / div
    return A.to_channel_last(y, nd) if last else y
