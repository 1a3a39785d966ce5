"""Pooling with Paddle signatures: max/avg pooling and their adaptive forms
over 1, 2 or 3 spatial dims (C++ ops in src/ops/pool.cpp).

Windows follow Paddle: out = (in + pad_l + pad_r - k) / stride + 1 (rounded up
with ceil_mode); average pooling divides by the count of non-padding elements
when exclusive, else by the kernel size; masks are flat spatial indices.

Max and average pooling and their adaptive forms are declared in
src/ops/nn.toml and come from the generated _ops_gen. Power-average (lp)
pooling, max unpooling and fractional max pooling are composites over those
ops and gathers/scatters, so they are differentiable.
"""
import math
import numbers

from ... import _C
from . import _nn_args as A
from ._ops_gen import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,  # noqa: F401
                       adaptive_max_pool2d, adaptive_max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d,
                       max_pool2d, max_pool3d)

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "fractional_max_pool2d", "fractional_max_pool3d",
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


# ---------------------------------------------------------------------------------------------
# lp pooling


def _lp_pool(x, norm_type, kernel_size, stride, padding, ceil_mode, data_format, nd, api):
    if isinstance(norm_type, bool) or not isinstance(norm_type, numbers.Real) or norm_type == 0 \
            or math.isnan(norm_type):
        raise ValueError(f"[{api}] norm_type must be a non-zero number, got {norm_type!r}")
    if math.isinf(norm_type):
        if norm_type < 0:
            raise ValueError(f"[{api}] norm_type must not be -inf")
        return _max_pool(x, kernel_size, stride, padding, False, ceil_mode, data_format, nd, api)
    xc, last, kernel, strides, pl, pr = _pool_args(x, kernel_size, stride, padding, data_format, nd, api)
    # Sum of x**p over each window (padding adds nothing), then the 1/p power. The zero padding,
    # including what ceil_mode's last window reaches past, is explicit so every window averages
    # over exactly prod(kernel) entries.
    sizes = list(xc.shape[2:])
    pads = []
    for i, k, s, a, b in zip(sizes, kernel, strides, pl, pr):
        span = i + a + b - k
        if span < 0:
            raise ValueError(f"[{api}] kernel_size {kernel} is larger than the padded input {sizes}")
        out = (span + (s - 1 if ceil_mode else 0)) // s + 1
        pads.append((a, max(b, (out - 1) * s + k - i - a)))
    flat = []
    for a, b in reversed(pads):
        flat += [a, b]
    from ..._manip import pad as _pad

    xp = _pad(_C.pow(xc, float(norm_type)), flat, mode="constant", value=0.0)
    zeros = [0] * nd
    y = _C.nn_avg_pool(xp, kernel, strides, zeros, zeros, False, False, False, api) * float(math.prod(kernel))
    y = _C.pow(y, 1.0 / float(norm_type))
    return A.to_channel_last(y, nd) if last else y


def lp_pool1d(x, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False, data_format="NCL", name=None):
    """Power-average pooling over L: (sum of x**p over each window) ** (1/p); p = inf is max pooling.

    >>> import oar
    >>> x = oar.to_tensor([[[3.0, 4.0, 1.0, 0.0]]])
    >>> oar.nn.functional.lp_pool1d(x, 2, 2).numpy().tolist()
    [[[5.0, 1.0]]]
    """
    return _lp_pool(x, norm_type, kernel_size, stride, padding, ceil_mode, data_format, 1,
                    "oar.nn.functional.lp_pool1d")


def lp_pool2d(x, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False, data_format="NCHW", name=None):
    """Power-average pooling over H, W of x [N, C, H, W] (or NHWC).

    >>> import oar
    >>> oar.nn.functional.lp_pool2d(oar.ones([1, 1, 4, 4]), 1, 2).numpy().tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    return _lp_pool(x, norm_type, kernel_size, stride, padding, ceil_mode, data_format, 2,
                    "oar.nn.functional.lp_pool2d")


# ---------------------------------------------------------------------------------------------
# max unpooling


def _max_unpool(x, indices, kernel_size, stride, padding, data_format, output_size, nd, api):
    A.check_tensor(x, api)
    A.check_tensor(indices, api, "indices")
    first = A._FORMATS[nd][0]
    if data_format != first:
        raise ValueError(f"[{api}] data_format must be {first!r}, got {data_format!r}")
    A.check_rank(x, nd, api)
    if list(indices.shape) != list(x.shape):
        raise ValueError(f"[{api}] indices must have the shape of x {list(x.shape)}, got {list(indices.shape)}")
    if indices.dtype not in (_C.dtype.int32, _C.dtype.int64):
        raise TypeError(f"[{api}] indices must be int32 or int64, got {indices.dtype}")
    kernel = A.ntuple(kernel_size, nd, "kernel_size", api)
    strides = kernel if stride is None else A.ntuple(stride, nd, "stride", api)
    alg, pl, pr = A.padding(padding, nd, False, api)
    if alg is not None:
        raise ValueError(f"[{api}] padding must be an int or a list of ints, got {padding!r}")
    n, c = x.shape[0], x.shape[1]
    default = [(i - 1) * s - a - b + k for i, s, a, b, k in zip(x.shape[2:], strides, pl, pr, kernel)]
    if output_size is None:
        out = default
    else:
        if isinstance(output_size, _C.Tensor):
            output_size = output_size.numpy().reshape(-1).tolist()
        sizes = list(output_size) if isinstance(output_size, (list, tuple)) else None
        if sizes is not None and len(sizes) == nd + 2:
            sizes = sizes[2:]
        if sizes is None or len(sizes) != nd or not all(A._is_int(v) for v in sizes):
            raise ValueError(f"[{api}] output_size must hold {nd} (or {nd + 2}) ints, got {output_size!r}")
        for o, d, s in zip(sizes, default, strides):
            if not d <= o < d + s:
                raise ValueError(f"[{api}] output_size {sizes} must lie between {default} and "
                                 f"{[d + s - 1 for d, s in zip(default, strides)]}")
        out = [int(v) for v in sizes]
    if any(o <= 0 for o in out):
        raise ValueError(f"[{api}] the output size {out} must be positive")
    total = math.prod(out)
    if indices.size and not _C._ir_is_tracing():
        lo, hi = int(indices.min()), int(indices.max())
        if lo < 0 or hi >= total:
            raise ValueError(f"[{api}] indices must be in [0, {total}) for the output size {out}, "
                             f"got values in [{lo}, {hi}]")
    xf = _C.reshape(x, [n, c, -1])
    idx = _C.cast(_C.reshape(indices, [n, c, -1]), _C.dtype.int64)
    y = _C._put_along_axis(_C.full([n, c, total], 0.0, x.dtype), idx, xf, 2, "assign", True, True)
    return _C.reshape(y, [n, c] + out)


def max_unpool1d(x, indices, kernel_size, stride=None, padding=0, data_format="NCL", output_size=None, name=None):
    """Inverse of max_pool1d: puts each value of x at its flat index (from return_mask) in a zero tensor
    of length (L - 1) * stride - 2 * padding + kernel_size (or output_size).

    >>> import oar
    >>> x = oar.to_tensor([[[1.0, 5.0, 3.0, 2.0]]])
    >>> y, m = oar.nn.functional.max_pool1d(x, 2, return_mask=True)
    >>> oar.nn.functional.max_unpool1d(y, m, 2).numpy().tolist()
    [[[0.0, 5.0, 3.0, 0.0]]]
    """
    return _max_unpool(x, indices, kernel_size, stride, padding, data_format, output_size, 1,
                       "oar.nn.functional.max_unpool1d")


def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, data_format="NCHW", output_size=None,
                 name=None):
    """Inverse of max_pool2d over [N, C, H, W] (see max_unpool1d).

    >>> import oar
    >>> x = oar.arange(16, dtype="float32").reshape([1, 1, 4, 4])
    >>> y, m = oar.nn.functional.max_pool2d(x, 2, return_mask=True)
    >>> oar.nn.functional.max_unpool2d(y, m, 2)[0, 0].numpy().tolist()
    [[0.0, 0.0, 0.0, 0.0], [0.0, 5.0, 0.0, 7.0], [0.0, 0.0, 0.0, 0.0], [0.0, 13.0, 0.0, 15.0]]
    """
    return _max_unpool(x, indices, kernel_size, stride, padding, data_format, output_size, 2,
                       "oar.nn.functional.max_unpool2d")


def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, data_format="NCDHW", output_size=None,
                 name=None):
    """Inverse of max_pool3d over [N, C, D, H, W] (see max_unpool1d).

    >>> import oar
    >>> x = oar.arange(8, dtype="float32").reshape([1, 1, 2, 2, 2])
    >>> y, m = oar.nn.functional.max_pool3d(x, 2, return_mask=True)
    >>> oar.nn.functional.max_unpool3d(y, m, 2).numpy().reshape(-1).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0]
    """
    return _max_unpool(x, indices, kernel_size, stride, padding, data_format, output_size, 3,
                       "oar.nn.functional.max_unpool3d")


# ---------------------------------------------------------------------------------------------
# fractional max pooling


def _fractional_windows(n_in, n_out, k, u):
    """[start, end) of each output window along one axis (Graham's pseudo-random sequence, Paddle's form).

    Without a kernel size the windows tile the axis with sizes floor(alpha) or ceil(alpha),
    alpha = n_in / n_out, and u is first scaled into the range that keeps every window inside.
    With one, window i starts at the same positions for alpha = (n_in - k) / (n_out - 1) and is k long.
    """
    if k > 0:
        alpha = (n_in - k) / (n_out - 1) if n_out > 1 else 0.0
    else:
        alpha = n_in / n_out
        base = n_in // n_out
        u = u * min((base + 2) / alpha - 1, (n_in + 1 - base) / alpha - (n_out - 1))
    off = int(u * alpha)
    out = []
    for i in range(n_out):
        start = int((i + u) * alpha) - off
        end = start + k if k > 0 else int((i + 1 + u) * alpha) - off
        out.append((max(start, 0), min(end, n_in)))
    return out


def _fractional(x, output_size, kernel_size, random_u, return_mask, nd, api):
    from ... import to_tensor

    A.check_tensor(x, api)
    A.check_rank(x, nd, api)
    if not x.dtype.is_floating_point:
        raise TypeError(f"[{api}] x must be a floating-point tensor, got {x.dtype}")
    sizes = list(x.shape[2:])
    out = _output_size(x, output_size, nd, False, api)
    kernel = [0] * nd if kernel_size is None else A.ntuple(kernel_size, nd, "kernel_size", api)
    for i, o, k in zip(sizes, out, kernel):
        if i < o - 1 + max(k, 1):
            raise ValueError(f"[{api}] the input size {sizes} is too small for output_size {out} and kernel_size "
                             f"{kernel if kernel_size is not None else None}")
    if random_u is None:
        u = float(_C.uniform([1], _C.dtype.float64, 0.0, 1.0, 0).item())
        u = min(max(u, 1e-6), 1 - 1e-6)
    else:
        if isinstance(random_u, bool) or not isinstance(random_u, numbers.Real) or not 0 < random_u < 1:
            raise ValueError(f"[{api}] random_u must be a float in (0, 1), got {random_u!r}")
        u = float(random_u)
    # The max over a box is the max over each axis in turn. Each axis gathers its windows,
    # padded to the widest by repeating their last index, and keeps the first maximum; the
    # flat input index of that maximum travels along, so ties resolve in row-major order.
    val = x
    arg = _C.expand(_C.reshape(_C.arange(0, math.prod(sizes), 1, _C.dtype.int64), [1, 1] + sizes), list(x.shape))
    for d in reversed(range(nd)):
        axis = 2 + d
        wins = _fractional_windows(sizes[d], out[d], kernel[d], u)
        width = max(e - s for s, e in wins)
        gather = [min(s + w, e - 1) for s, e in wins for w in range(width)]
        g = to_tensor(gather, dtype="int64")
        shape = list(val.shape)
        shape[axis:axis + 1] = [out[d], width]
        vg = _C.reshape(_C._gather(val, g, axis), shape)
        ag = _C.reshape(_C._gather(arg, g, axis), shape)
        pick = _C.argmax(vg, axis + 1, True, _C.dtype.int64)
        val = _C.squeeze(_C._take_along_axis(vg, pick, axis + 1, False), [axis + 1])
        arg = _C.squeeze(_C._take_along_axis(ag, pick, axis + 1, False), [axis + 1])
    if return_mask:
        return val, _C.cast(arg, _C.dtype.int32)
    return val


def fractional_max_pool2d(x, output_size, kernel_size=None, random_u=None, return_mask=False, name=None):
    """Fractional max pooling of x [N, C, H, W] to output_size (entries may be None: keep).

    The windows follow the pseudo-random sequence of Graham (2015) for the number random_u
    in (0, 1), drawn uniformly when not given; kernel_size, if given, fixes the window size
    (windows may overlap). The mask holds flat H * W indices.

    >>> import oar
    >>> x = oar.arange(49, dtype="float32").reshape([1, 1, 7, 7])
    >>> oar.nn.functional.fractional_max_pool2d(x, 3, random_u=0.3)[0, 0].numpy().tolist()
    [[8.0, 11.0, 13.0], [29.0, 32.0, 34.0], [43.0, 46.0, 48.0]]
    """
    return _fractional(x, output_size, kernel_size, random_u, return_mask, 2,
                       "oar.nn.functional.fractional_max_pool2d")


def fractional_max_pool3d(x, output_size, kernel_size=None, random_u=None, return_mask=False, name=None):
    """Fractional max pooling of x [N, C, D, H, W] (see fractional_max_pool2d).

    >>> import oar
    >>> x = oar.arange(27, dtype="float32").reshape([1, 1, 3, 3, 3])
    >>> oar.nn.functional.fractional_max_pool3d(x, 2, random_u=0.5).numpy().reshape(-1).tolist()
    [13.0, 14.0, 16.0, 17.0, 22.0, 23.0, 25.0, 26.0]
    """
    return _fractional(x, output_size, kernel_size, random_u, return_mask, 3,
                       "oar.nn.functional.fractional_max_pool3d")
