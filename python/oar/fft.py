"""Discrete Fourier transforms (``paddle.fft``).

Every transform is one of three ops (src/ops/fft.h): ``fft_c2c`` (complex to
complex), ``fft_r2c`` (real to complex, optionally only the n/2 + 1
non-negative frequencies of the last axis) and ``fft_c2r`` (the half spectrum
of a Hermitian signal to a real signal). This module reads Paddle's
arguments (``n`` / ``s`` for lengths, ``axis`` / ``axes``, ``norm``), crops or
zero-pads the input to the requested lengths and calls the op; the ops'
gradient rules are transforms too, so derivatives of any order work, eagerly
and under ``oar.jit.to_static``.

``norm`` is "backward" (no scaling forward, 1/n backward: the default),
"forward" (the reverse) or "ortho" (1/sqrt(n) both ways). Inputs may be
float32, float64, complex64 or complex128 of any length (primes included);
integer inputs compute in the default float dtype.
"""
import numbers

from . import _C
from .creation import arange, zeros
from ._manip import concat, roll
from ._shape_index import _assign_out

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "forward", "ortho")


# ---- argument reading
def _api(fn):
    return f"oar.fft.{fn}"


def _check_tensor(x, fn):
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{_api(fn)}] x must be a Tensor, got {type(x).__name__}")
    if x.dtype.name in ("float16", "bfloat16"):
        raise TypeError(f"[{_api(fn)}] {x.dtype.name} inputs are not supported; cast x to float32 or float64 first")
    if x.ndim == 0:
        raise ValueError(f"[{_api(fn)}] x must have at least 1 dim, got a 0-D tensor")


def _check_norm(norm, fn):
    if norm not in _NORMS:
        raise ValueError(f"[{_api(fn)}] norm must be 'backward', 'forward' or 'ortho', got {norm!r}")


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _axis(a, ndim, fn, what="axis"):
    if isinstance(a, _C.Tensor) and a.size == 1:
        a = int(a.item())
    if not _is_int(a):
        raise TypeError(f"[{_api(fn)}] {what} must be an int, got {type(a).__name__}")
    if not -ndim <= a < ndim:
        raise IndexError(f"[{_api(fn)}] {what} {a} is out of range for a {ndim}-D tensor")
    return int(a) % ndim


def _length(v, fn, what):
    if isinstance(v, _C.Tensor) and v.size == 1:
        v = int(v.item())
    if not _is_int(v):
        raise TypeError(f"[{_api(fn)}] {what} must be an int, got {type(v).__name__}")
    if v < 1:
        raise ValueError(f"[{_api(fn)}] {what} must be at least 1, got {v}")
    return int(v)


def _seq(v, fn, what):
    if isinstance(v, _C.Tensor):
        v = v.tolist()
        v = v if isinstance(v, list) else [v]
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"[{_api(fn)}] {what} must be a list or tuple of ints, got {type(v).__name__}")
    return list(v)


def _axes_and_sizes(x, s, axes, fn, default_axes=None):
    """The normalised axes and the requested lengths (None: keep) for the
    n-D transforms: axes default to the last len(s) (all without s)."""
    nd = x.ndim
    if s is not None:
        s = [_length(v, fn, "s[i]") for v in _seq(s, fn, "s")]
    if axes is None:
        axes = default_axes
    if axes is None:
        axes = list(range(nd - len(s), nd)) if s is not None else list(range(nd))
        if s is not None and len(s) > nd:
            raise ValueError(f"[{_api(fn)}] s has {len(s)} entries but x has only {nd} dims")
    else:
        axes = [_axis(a, nd, fn, "axes[i]") for a in _seq(axes, fn, "axes")]
    if len(set(axes)) != len(axes):
        raise ValueError(f"[{_api(fn)}] axes must be unique, got {axes}")
    if not axes:
        raise ValueError(f"[{_api(fn)}] axes must not be empty")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"[{_api(fn)}] s and axes must have the same length, got {len(s)} and {len(axes)}")
    return axes, (s if s is not None else [None] * len(axes))


def _resize(x, axis, size):
    """x cropped or zero-padded at the end of `axis` to `size` elements."""
    cur = x.shape[axis]
    if size is None or size == cur:
        return x
    if size < cur:
        return _C.strided_slice(x, [axis], [0], [size], [1])
    shape = list(x.shape)
    shape[axis] = size - cur
    return concat([x, zeros(shape, dtype=x.dtype)], axis=axis)


def _resize_all(x, axes, sizes):
    for a, n in zip(axes, sizes):
        x = _resize(x, a, n)
    return x


def _promote(x):
    """Integer and bool inputs compute in the default float dtype."""
    if x.dtype.is_complex or x.dtype.is_floating_point:
        return x
    return x.astype(_default_float())


def _real_only(x, fn):
    if x.dtype.is_complex:
        raise TypeError(f"[{_api(fn)}] expects a real input (float32 or float64), got {x.dtype.name}")
    return _promote(x)


# ---- the three shapes of transform, on normalised axes and lengths
def _c2c(x, axes, sizes, norm, forward, fn):
    _check_norm(norm, fn)
    x = _resize_all(_promote(x), axes, sizes)
    if x.dtype.is_complex:
        return _C._fft_c2c(x, axes, norm, forward)
    # A real signal: both halves of its spectrum.
    return _C._fft_r2c(x, axes, norm, forward, False)


def _r2c(x, axes, sizes, norm, forward, fn):
    _check_norm(norm, fn)
    x = _resize_all(_real_only(x, fn), axes, sizes)
    return _C._fft_r2c(x, axes, norm, forward, True)


def _c2r(x, axes, sizes, norm, forward, fn):
    _check_norm(norm, fn)
    x = _promote(x)
    last = axes[-1]
    n = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[last] - 1)
    if n < 1:
        raise ValueError(f"[{_api(fn)}] the output length along axis {last} must be at least 1, got {n} (from "
                         f"{x.shape[last]} input bins); pass n or s")
    x = _resize_all(x, axes[:-1], sizes[:-1])
    x = _resize(x, last, n // 2 + 1)
    return _C._fft_c2r(x, axes, norm, forward, n)


def _one(x, n, axis, fn):
    _check_tensor(x, fn)
    return [_axis(axis, x.ndim, fn)], [None if n is None else _length(n, fn, "n")]


def _two(x, s, axes, fn):
    _check_tensor(x, fn)
    if x.ndim < 2:
        raise ValueError(f"[{_api(fn)}] x must have at least 2 dims, got {x.ndim}")
    if axes is not None and len(_seq(axes, fn, "axes")) != 2:
        raise ValueError(f"[{_api(fn)}] axes must have 2 entries, got {list(_seq(axes, fn, 'axes'))}")
    if s is not None and len(_seq(s, fn, "s")) != 2:
        raise ValueError(f"[{_api(fn)}] s must have 2 entries, got {list(_seq(s, fn, 's'))}")
    return _axes_and_sizes(x, s, axes if axes is not None else (-2, -1), fn)


def _many(x, s, axes, fn):
    _check_tensor(x, fn)
    return _axes_and_sizes(x, s, axes, fn)


# ---- 1-D
def fft(x, n=None, axis=-1, norm="backward", name=None, *, out=None):
    """The 1-D discrete Fourier transform of x along `axis`, cropped or
    zero-padded to n points first. Real inputs give their full spectrum.

    Examples:
        >>> import oar
        >>> x = oar.to_tensor([1.0, 2.0, 3.0, 4.0])
        >>> oar.fft.fft(x).numpy()
        array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex64)
    """
    axes, sizes = _one(x, n, axis, "fft")
    return _assign_out(out, _c2c(x, axes, sizes, norm, True, "fft"), _api("fft"))


def ifft(x, n=None, axis=-1, norm="backward", name=None, *, out=None):
    """The inverse of `fft` along `axis`.

    Examples:
        >>> import oar
        >>> x = oar.to_tensor([10 + 0j, -2 + 2j, -2 + 0j, -2 - 2j])
        >>> oar.fft.ifft(x).real().numpy()
        array([1., 2., 3., 4.], dtype=float32)
    """
    axes, sizes = _one(x, n, axis, "ifft")
    return _assign_out(out, _c2c(x, axes, sizes, norm, False, "ifft"), _api("ifft"))


def rfft(x, n=None, axis=-1, norm="backward", name=None, *, out=None):
    """The 1-D transform of a real x: the n // 2 + 1 non-negative frequencies.

    Examples:
        >>> import oar
        >>> oar.fft.rfft(oar.to_tensor([1.0, 2.0, 3.0, 4.0])).numpy()
        array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)
    """
    axes, sizes = _one(x, n, axis, "rfft")
    return _assign_out(out, _r2c(x, axes, sizes, norm, True, "rfft"), _api("rfft"))


def irfft(x, n=None, axis=-1, norm="backward", name=None, *, out=None):
    """The inverse of `rfft`: a real signal of n points (default 2 * (m - 1)
    for m input bins) from its non-negative frequencies.

    Examples:
        >>> import oar
        >>> x = oar.to_tensor([10 + 0j, -2 + 2j, -2 + 0j])
        >>> oar.fft.irfft(x).numpy()
        array([1., 2., 3., 4.], dtype=float32)
    """
    axes, sizes = _one(x, n, axis, "irfft")
    return _assign_out(out, _c2r(x, axes, sizes, norm, False, "irfft"), _api("irfft"))


def hfft(x, n=None, axis=-1, norm="backward", name=None, *, out=None):
    """The transform of a Hermitian-symmetric signal given by its first half:
    a real spectrum of n points (default 2 * (m - 1)).

    Examples:
        >>> import oar
        >>> oar.fft.hfft(oar.to_tensor([1 + 0j, 2 + 0j, 3 + 0j])).numpy()
        array([ 8., -2.,  0., -2.], dtype=float32)
    """
    axes, sizes = _one(x, n, axis, "hfft")
    return _assign_out(out, _c2r(x, axes, sizes, norm, True, "hfft"), _api("hfft"))


def ihfft(x, n=None, axis=-1, norm="backward", name=None, *, out=None):
    """The inverse of `hfft`: the first n // 2 + 1 points of the Hermitian
    signal whose transform is the real x.

    Examples:
        >>> import oar
        >>> oar.fft.ihfft(oar.to_tensor([8.0, -2.0, 0.0, -2.0])).numpy()
        array([1.-0.j, 2.-0.j, 3.-0.j], dtype=complex64)
    """
    axes, sizes = _one(x, n, axis, "ihfft")
    return _assign_out(out, _r2c(x, axes, sizes, norm, False, "ihfft"), _api("ihfft"))


# ---- 2-D
def fft2(x, s=None, axes=(-2, -1), norm="backward", name=None, *, out=None):
    """The 2-D transform over `axes` (the last two by default), each cropped
    or zero-padded to `s` first.

    Examples:
        >>> import oar
        >>> oar.fft.fft2(oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])).numpy()
        array([[10.+0.j, -2.+0.j],
               [-4.+0.j,  0.+0.j]], dtype=complex64)
    """
    axes, sizes = _two(x, s, axes, "fft2")
    return _assign_out(out, _c2c(x, axes, sizes, norm, True, "fft2"), _api("fft2"))


def ifft2(x, s=None, axes=(-2, -1), norm="backward", name=None, *, out=None):
    """The inverse of `fft2`.

    Examples:
        >>> import oar
        >>> x = oar.to_tensor([[10 + 0j, -2 + 0j], [-4 + 0j, 0j]])
        >>> oar.fft.ifft2(x).real().numpy()
        array([[1., 2.],
               [3., 4.]], dtype=float32)
    """
    axes, sizes = _two(x, s, axes, "ifft2")
    return _assign_out(out, _c2c(x, axes, sizes, norm, False, "ifft2"), _api("ifft2"))


def rfft2(x, s=None, axes=(-2, -1), norm="backward", name=None, *, out=None):
    """The 2-D transform of a real x, keeping the non-negative frequencies of
    the last axis.

    Examples:
        >>> import oar
        >>> oar.fft.rfft2(oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])).numpy()
        array([[10.+0.j, -2.+0.j],
               [-4.+0.j,  0.+0.j]], dtype=complex64)
    """
    axes, sizes = _two(x, s, axes, "rfft2")
    return _assign_out(out, _r2c(x, axes, sizes, norm, True, "rfft2"), _api("rfft2"))


def irfft2(x, s=None, axes=(-2, -1), norm="backward", name=None, *, out=None):
    """The inverse of `rfft2`.

    Examples:
        >>> import oar
        >>> x = oar.to_tensor([[10 + 0j, -2 + 0j], [-4 + 0j, 0j]])
        >>> oar.fft.irfft2(x).numpy()
        array([[1., 2.],
               [3., 4.]], dtype=float32)
    """
    axes, sizes = _two(x, s, axes, "irfft2")
    return _assign_out(out, _c2r(x, axes, sizes, norm, False, "irfft2"), _api("irfft2"))


def hfft2(x, s=None, axes=(-2, -1), norm="backward", name=None, *, out=None):
    """The 2-D transform of a Hermitian-symmetric signal given by its half:
    a real result.

    Examples:
        >>> import oar
        >>> oar.fft.hfft2(oar.to_tensor([[1 + 0j, 2 + 0j], [3 + 0j, 4 + 0j]])).shape
        [2, 2]
    """
    axes, sizes = _two(x, s, axes, "hfft2")
    return _assign_out(out, _c2r(x, axes, sizes, norm, True, "hfft2"), _api("hfft2"))


def ihfft2(x, s=None, axes=(-2, -1), norm="backward", name=None, *, out=None):
    """The inverse of `hfft2`.

    Examples:
        >>> import oar
        >>> oar.fft.ihfft2(oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])).shape
        [2, 2]
    """
    axes, sizes = _two(x, s, axes, "ihfft2")
    return _assign_out(out, _r2c(x, axes, sizes, norm, False, "ihfft2"), _api("ihfft2"))


# ---- n-D
def fftn(x, s=None, axes=None, norm="backward", name=None, *, out=None):
    """The n-D transform over `axes` (all, or the last len(s), by default).

    Examples:
        >>> import oar
        >>> complex(oar.fft.fftn(oar.ones([2, 2, 2])).numpy()[0, 0, 0])
        (8+0j)
    """
    axes, sizes = _many(x, s, axes, "fftn")
    return _assign_out(out, _c2c(x, axes, sizes, norm, True, "fftn"), _api("fftn"))


def ifftn(x, s=None, axes=None, norm="backward", name=None, *, out=None):
    """The inverse of `fftn`.

    Examples:
        >>> import oar
        >>> oar.fft.ifftn(oar.fft.fftn(oar.ones([2, 3]))).real().numpy()
        array([[1., 1., 1.],
               [1., 1., 1.]], dtype=float32)
    """
    axes, sizes = _many(x, s, axes, "ifftn")
    return _assign_out(out, _c2c(x, axes, sizes, norm, False, "ifftn"), _api("ifftn"))


def rfftn(x, s=None, axes=None, norm="backward", name=None, *, out=None):
    """The n-D transform of a real x, keeping the non-negative frequencies of
    the last axis.

    Examples:
        >>> import oar
        >>> oar.fft.rfftn(oar.ones([2, 4])).shape
        [2, 3]
    """
    axes, sizes = _many(x, s, axes, "rfftn")
    return _assign_out(out, _r2c(x, axes, sizes, norm, True, "rfftn"), _api("rfftn"))


def irfftn(x, s=None, axes=None, norm="backward", name=None, *, out=None):
    """The inverse of `rfftn`: the last axis gets s[-1] points (default
    2 * (m - 1)).

    Examples:
        >>> import oar
        >>> x = oar.ones([2, 4])
        >>> oar.fft.irfftn(oar.fft.rfftn(x), s=[2, 4]).numpy()
        array([[1., 1., 1., 1.],
               [1., 1., 1., 1.]], dtype=float32)
    """
    axes, sizes = _many(x, s, axes, "irfftn")
    return _assign_out(out, _c2r(x, axes, sizes, norm, False, "irfftn"), _api("irfftn"))


def hfftn(x, s=None, axes=None, norm="backward", name=None, *, out=None):
    """The n-D transform of a Hermitian-symmetric signal given by its half.

    Examples:
        >>> import oar
        >>> oar.fft.hfftn(oar.ones([2, 3], dtype="complex64")).shape
        [2, 4]
    """
    axes, sizes = _many(x, s, axes, "hfftn")
    return _assign_out(out, _c2r(x, axes, sizes, norm, True, "hfftn"), _api("hfftn"))


def ihfftn(x, s=None, axes=None, norm="backward", name=None, *, out=None):
    """The inverse of `hfftn`.

    Examples:
        >>> import oar
        >>> oar.fft.ihfftn(oar.ones([2, 4])).shape
        [2, 3]
    """
    axes, sizes = _many(x, s, axes, "ihfftn")
    return _assign_out(out, _r2c(x, axes, sizes, norm, False, "ihfftn"), _api("ihfftn"))


# ---- helpers
def _freq_args(n, d, fn):
    if isinstance(n, _C.Tensor) and n.size == 1:
        n = int(n.item())
    if not _is_int(n):
        raise TypeError(f"[{_api(fn)}] n must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"[{_api(fn)}] n must be at least 1, got {n}")
    if isinstance(d, _C.Tensor) and d.size == 1:
        d = float(d.item())
    if not isinstance(d, numbers.Real) or isinstance(d, bool):
        raise TypeError(f"[{_api(fn)}] d must be a number, got {type(d).__name__}")
    if d == 0:
        raise ValueError(f"[{_api(fn)}] d must not be 0")
    return int(n), float(d)


def fftfreq(n, d=1.0, dtype=None, name=None, *, out=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point `fft` with sample spacing d:
    [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n).

    Examples:
        >>> import oar
        >>> oar.fft.fftfreq(4, d=0.5).numpy()
        array([ 0. ,  0.5, -1. , -0.5], dtype=float32)
    """
    n, d = _freq_args(n, d, "fftfreq")

    def make():
        k = arange(n, dtype="int64")
        k = k - (k >= (n + 1) // 2).astype("int64") * n
        return k.astype(dtype if dtype is not None else _default_float()) * (1.0 / (d * n))
    return _freq_result(make, out, device, requires_grad, "fftfreq")


def rfftfreq(n, d=1.0, dtype=None, name=None, *, out=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point `rfft`: [0, 1, ..., n // 2] / (d * n).

    Examples:
        >>> import oar
        >>> oar.fft.rfftfreq(5).numpy()
        array([0. , 0.2, 0.4], dtype=float32)
    """
    n, d = _freq_args(n, d, "rfftfreq")

    def make():
        return arange(n // 2 + 1, dtype=dtype if dtype is not None else _default_float()) * (1.0 / (d * n))
    return _freq_result(make, out, device, requires_grad, "rfftfreq")


def _freq_result(make, out, device, requires_grad, fn):
    """make() on `device` (default: the current one), into `out` if given."""
    if device is not None:
        from .device import device_guard
        with device_guard(device):
            res = make()
    else:
        res = make()
    res.stop_gradient = not requires_grad
    return _assign_out(out, res, _api(fn))


def _default_float():
    from .framework import get_default_dtype
    return get_default_dtype()


def _shift_axes(x, axes, fn):
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{_api(fn)}] x must be a Tensor, got {type(x).__name__}")
    if axes is None:
        return list(range(x.ndim))
    if _is_int(axes) or (isinstance(axes, _C.Tensor) and axes.size == 1 and axes.ndim == 0):
        return [_axis(axes, x.ndim, fn, "axes")]
    return [_axis(a, x.ndim, fn, "axes[i]") for a in _seq(axes, fn, "axes")]


def fftshift(x, axes=None, name=None):
    """x with the zero frequency moved to the middle of each axis in `axes`
    (all by default): a roll by n // 2.

    Examples:
        >>> import oar
        >>> oar.fft.fftshift(oar.fft.fftfreq(5)).numpy()
        array([-0.4, -0.2,  0. ,  0.2,  0.4], dtype=float32)
    """
    axes = _shift_axes(x, axes, "fftshift")
    if not axes:
        return x
    return roll(x, [x.shape[a] // 2 for a in axes], axes)


def ifftshift(x, axes=None, name=None):
    """The inverse of `fftshift`: a roll by -(n // 2).

    Examples:
        >>> import oar
        >>> oar.fft.ifftshift(oar.fft.fftshift(oar.fft.fftfreq(5))).numpy()
        array([ 0. ,  0.2,  0.4, -0.4, -0.2], dtype=float32)
    """
    axes = _shift_axes(x, axes, "ifftshift")
    if not axes:
        return x
    return roll(x, [-(x.shape[a] // 2) for a in axes], axes)
