"""Pooling with Paddle signatures: max/avg pooling and their adaptive forms
over 1, 2 or 3 spatial dims (C++ ops in src/ops/pool.cpp).

Windows follow Paddle: out = (in + pad_l + pad_r - k) / stride + 1 (rounded up
with ceil_mode); average pooling divides by the count of non-padding elements
when exclusive, else by the kernel size; masks are flat spatial indices.
"""
from ... import _C
from . import _nn_args as A

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
]


def _pool_args(x, kernel_size, stride, padding, data_format, nd, api):
    A.check_tensor(x, api)
    last = A.channel_last(data_format, nd, api)
    A.check_rank(x, nd, api)
    kernel = A.ntuple(kernel_size, nd, "kernel_size", api)
    strides = kernel if stride is None else A.ntuple(stride, nd, "stride", api)
    xc = A.to_channel_first(x, nd) if last else x
    alg, pl, pr = A.padding(padding, nd, last, api)
    if alg == "same":
        pl, pr = A.same_pads(list(xc.shape[2:]), kernel, strides)
    return xc, last, kernel, strides, pl, pr


def _max_pool(x, kernel_size, stride, padding, return_mask, ceil_mode, data_format, nd, api):
    xc, last, kernel, strides, pl, pr = _pool_args(x, kernel_size, stride, padding, data_format, nd, api)
    y, mask = _C.nn_max_pool(xc, kernel, strides, pl, pr, bool(ceil_mode), False, api)
    if last:
        y, mask = A.to_channel_last(y, nd), A.to_channel_last(mask, nd)
    return (y, mask) if return_mask else y


def _avg_pool(x, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, data_format, nd, api):
    xc, last, kernel, strides, pl, pr = _pool_args(x, kernel_size, stride, padding, data_format, nd, api)
    if divisor_override is not None:
        if not A._is_int(divisor_override) or divisor_override <= 0:
            raise ValueError(f"[{api}] divisor_override must be a positive int, got {divisor_override!r}")
        y = _C.nn_avg_pool(xc, kernel, strides, pl, pr, bool(ceil_mode), False, False, api)
        ksize = 1
        for k in kernel:
            ksize *= k
        y = y * (ksize / float(divisor_override))
    else:
        y = _C.nn_avg_pool(xc, kernel, strides, pl, pr, bool(ceil_mode), False, bool(exclusive), api)
    return A.to_channel_last(y, nd) if last else y


def max_pool1d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, name=None):
    """Max pooling over L of x [N, C, L]; with return_mask also the argmax indices.

    >>> import oar
    >>> x = oar.to_tensor([[[1.0, 3.0, 2.0, 5.0]]])
    >>> y, m = oar.nn.functional.max_pool1d(x, 2, return_mask=True)
    >>> y.numpy().tolist(), m.numpy().tolist()
    ([[[3.0, 5.0]]], [[[1, 3]]])
    """
    return _max_pool(x, kernel_size, stride, padding, return_mask, ceil_mode, "NCL", 1,
                     "oar.nn.functional.max_pool1d")


def max_pool2d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCHW",
               name=None):
    """Max pooling over H, W of x [N, C, H, W] (or NHWC).

    >>> import oar
    >>> x = oar.arange(16, dtype="float32").reshape([1, 1, 4, 4])
    >>> oar.nn.functional.max_pool2d(x, 2).numpy().tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return _max_pool(x, kernel_size, stride, padding, return_mask, ceil_mode, data_format, 2,
                     "oar.nn.functional.max_pool2d")


def max_pool3d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCDHW",
               name=None):
    """Max pooling over D, H, W of x [N, C, D, H, W] (or NDHWC).

    >>> import oar
    >>> x = oar.arange(8, dtype="float32").reshape([1, 1, 2, 2, 2])
    >>> oar.nn.functional.max_pool3d(x, 2).numpy().reshape(-1).tolist()
    [7.0]
    """
    return _max_pool(x, kernel_size, stride, padding, return_mask, ceil_mode, data_format, 3,
                     "oar.nn.functional.max_pool3d")


def avg_pool1d(x, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False, name=None):
    """Average pooling over L of x [N, C, L].

    >>> import oar
    >>> x = oar.to_tensor([[[1.0, 3.0, 2.0, 6.0]]])
    >>> oar.nn.functional.avg_pool1d(x, 2).numpy().tolist()
    [[[2.0, 4.0]]]
    """
    return _avg_pool(x, kernel_size, stride, padding, ceil_mode, exclusive, None, "NCL", 1,
                     "oar.nn.functional.avg_pool1d")


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
               data_format="NCHW", name=None):
    """Average pooling over H, W of x [N, C, H, W] (or NHWC).

    >>> import oar
    >>> x = oar.ones([1, 1, 2, 2])
    >>> oar.nn.functional.avg_pool2d(x, 2, padding=1, exclusive=False).numpy().tolist()
    [[[[0.25, 0.25], [0.25, 0.25]]]]
    """
    return _avg_pool(x, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, data_format, 2,
                     "oar.nn.functional.avg_pool2d")


def avg_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
               data_format="NCDHW", name=None):
    """Average pooling over D, H, W of x [N, C, D, H, W] (or NDHWC).

    >>> import oar
    >>> x = oar.arange(8, dtype="float32").reshape([1, 1, 2, 2, 2])
    >>> oar.nn.functional.avg_pool3d(x, 2).numpy().reshape(-1).tolist()
    [3.5]
    """
    return _avg_pool(x, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, data_format, 3,
                     "oar.nn.functional.avg_pool3d")


def _output_size(x, output_size, nd, last, api):
    """An int or nd entries (None keeps the input size) -> list of nd ints."""
    sp = list(x.shape[1:-1] if last else x.shape[2:])
    if A._is_int(output_size):
        out = [int(output_size)] * nd
    elif isinstance(output_size, (list, tuple)) and len(output_size) == nd:
        out = []
        for o, s in zip(output_size, sp):
            if o is None:
                out.append(s)
            elif A._is_int(o):
                out.append(int(o))
            else:
                raise ValueError(f"[{api}] output_size entries must be ints or None, got {output_size!r}")
    else:
        raise ValueError(f"[{api}] output_size must be an int or {nd} entries, got {output_size!r}")
    if any(o <= 0 for o in out):
        raise ValueError(f"[{api}] output_size must be positive, got {output_size!r}")
    return out


def _adaptive(x, output_size, data_format, nd, is_max, return_mask, api):
    A.check_tensor(x, api)
    last = A.channel_last(data_format, nd, api)
    A.check_rank(x, nd, api)
    out = _output_size(x, output_size, nd, last, api)
    xc = A.to_channel_first(x, nd) if last else x
    zeros = [0] * nd
    if is_max:
        y, mask = _C.nn_max_pool(xc, out, [1] * nd, zeros, zeros, False, True, api)
        if last:
            y, mask = A.to_channel_last(y, nd), A.to_channel_last(mask, nd)
        return (y, mask) if return_mask else y
    y = _C.nn_avg_pool(xc, out, [1] * nd, zeros, zeros, False, True, True, api)
    return A.to_channel_last(y, nd) if last else y


def adaptive_avg_pool1d(x, output_size, name=None):
    """Average pooling of x [N, C, L] into output_size windows [floor(i*L/O), ceil((i+1)*L/O)).

    >>> import oar
    >>> x = oar.to_tensor([[[1.0, 2.0, 3.0, 4.0]]])
    >>> oar.nn.functional.adaptive_avg_pool1d(x, 2).numpy().tolist()
    [[[1.5, 3.5]]]
    """
    return _adaptive(x, output_size, "NCL", 1, False, False, "oar.nn.functional.adaptive_avg_pool1d")


def adaptive_avg_pool2d(x, output_size, data_format="NCHW", name=None):
    """Adaptive average pooling of x [N, C, H, W]; output_size entries may be None (keep).

    >>> import oar
    >>> x = oar.arange(16, dtype="float32").reshape([1, 1, 4, 4])
    >>> oar.nn.functional.adaptive_avg_pool2d(x, 1).numpy().reshape(-1).tolist()
    [7.5]
    """
    return _adaptive(x, output_size, data_format, 2, False, False, "oar.nn.functional.adaptive_avg_pool2d")


def adaptive_avg_pool3d(x, output_size, data_format="NCDHW", name=None):
    """Adaptive average pooling of x [N, C, D, H, W].

    >>> import oar
    >>> oar.nn.functional.adaptive_avg_pool3d(oar.ones([1, 2, 4, 4, 4]), [2, None, 1]).shape
    [1, 2, 2, 4, 1]
    """
    return _adaptive(x, output_size, data_format, 3, False, False, "oar.nn.functional.adaptive_avg_pool3d")


def adaptive_max_pool1d(x, output_size, return_mask=False, name=None):
    """Adaptive max pooling of x [N, C, L].

    >>> import oar
    >>> x = oar.to_tensor([[[1.0, 4.0, 3.0, 2.0]]])
    >>> oar.nn.functional.adaptive_max_pool1d(x, 2).numpy().tolist()
    [[[4.0, 3.0]]]
    """
    return _adaptive(x, output_size, "NCL", 1, True, return_mask, "oar.nn.functional.adaptive_max_pool1d")


def adaptive_max_pool2d(x, output_size, return_mask=False, name=None):
    """Adaptive max pooling of x [N, C, H, W].

    >>> import oar
    >>> x = oar.arange(16, dtype="float32").reshape([1, 1, 4, 4])
    >>> oar.nn.functional.adaptive_max_pool2d(x, 2).numpy().tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return _adaptive(x, output_size, "NCHW", 2, True, return_mask, "oar.nn.functional.adaptive_max_pool2d")


def adaptive_max_pool3d(x, output_size, return_mask=False, name=None):
    """Adaptive max pooling of x [N, C, D, H, W].

    >>> import oar
    >>> x = oar.arange(8, dtype="float32").reshape([1, 1, 2, 2, 2])
    >>> oar.nn.functional.adaptive_max_pool3d(x, 1).numpy().reshape(-1).tolist()
    [7.0]
    """
    return _adaptive(x, output_size, "NCDHW", 3, True, return_mask, "oar.nn.functional.adaptive_max_pool3d")
