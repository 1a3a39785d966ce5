"""Normalisation with Paddle signatures: batch_norm, layer_norm, group_norm,
instance_norm, rms_norm and local_response_norm (C++ ops in src/ops/norm.cpp).

All but local_response_norm are declared in src/ops/nn.toml and come from the
generated _ops_gen. batch_norm and layer_norm run fused forward kernels; the
gradients are composites of ops, so they are differentiable to any order.
"""
from ... import _C
from . import _nn_args as A
from ._ops_gen import batch_norm, group_norm, instance_norm, layer_norm, rms_norm  # noqa: F401

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "local_response_norm"]

_CHANNEL_LAST = ("NLC", "NHWC", "NDHWC")


def _channel_first(x, data_format, api, allowed):
    if data_format not in allowed:
        raise ValueError(f"[{api}] data_format must be one of {allowed}, got {data_format!r}")
    return data_format in _CHANNEL_LAST


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
