"""Short-time Fourier transforms (``paddle.signal``): `stft` and its inverse
`istft`, composed of framing (a gather), the transforms of oar.fft and
overlap-add (an index_add), so gradients flow through both.
"""
import numbers

from . import _C
from . import fft as _fft
from ._manip import concat
from .creation import arange, ones, zeros

__all__ = ["stft", "istft"]
# Also Tensor methods, as in Paddle (Note [Tensor methods]).
__tensor_methods__ = ("stft", "istft")


def _api(fn):
    return f"oar.signal.{fn}"


def _pos_int(v, fn, what):
    if not isinstance(v, numbers.Integral) or isinstance(v, bool):
        raise TypeError(f"[{_api(fn)}] {what} must be an int, got {type(v).__name__}")
    if v < 1:
        raise ValueError(f"[{_api(fn)}] {what} must be positive, got {v}")
    return int(v)


def _window(window, win_length, n_fft, dtype, fn):
    """The window as a length-n_fft tensor: `window` (default ones) of
    win_length points, centred with zeros on both sides."""
    if window is None:
        w = ones([win_length], dtype=dtype)
    else:
        if not isinstance(window, _C.Tensor):
            raise TypeError(f"[{_api(fn)}] window must be a Tensor, got {type(window).__name__}")
        if window.ndim != 1 or window.shape[0] != win_length:
            raise ValueError(f"[{_api(fn)}] window must be a 1-D tensor of win_length ({win_length}) points, got "
                             f"shape {list(window.shape)}")
        w = window
    left = (n_fft - win_length) // 2
    if left or n_fft - win_length - left:
        parts = [zeros([left], dtype=w.dtype)] if left else []
        parts.append(w)
        if n_fft - win_length - left:
            parts.append(zeros([n_fft - win_length - left], dtype=w.dtype))
        w = concat(parts, axis=0)
    return w


def _frame_index(n_fft, hop, frames):
    """int64 [frames * n_fft]: the sample positions of each frame, in order."""
    starts = arange(frames, dtype="int64") * hop
    return (starts.unsqueeze(1) + arange(n_fft, dtype="int64").unsqueeze(0)).reshape([-1])


def _lengths(x_len, n_fft, hop_length, win_length, fn):
    n_fft = _pos_int(n_fft, fn, "n_fft")
    hop = _pos_int(n_fft // 4 if hop_length is None else hop_length, fn, "hop_length")
    win = _pos_int(n_fft if win_length is None else win_length, fn, "win_length")
    if win > n_fft:
        raise ValueError(f"[{_api(fn)}] win_length ({win}) must not exceed n_fft ({n_fft})")
    return n_fft, hop, win


def stft(x, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, name=None):
    """The short-time Fourier transform of x ([T] or [B, T]): the transforms
    of windowed frames of n_fft samples, hop_length apart, as
    [B, n_fft // 2 + 1 (onesided) or n_fft, num_frames].

    With center, x is padded by n_fft // 2 on both sides (pad_mode 'reflect'
    or 'constant'); normalized scales by 1 / sqrt(n_fft). onesided defaults
    to True for a real x; a complex x needs onesided=False (its default).

    Examples:
        >>> import oar
        >>> x = oar.ones([16])
        >>> oar.signal.stft(x, n_fft=8).shape
        [5, 9]
    """
    fn = "stft"
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{_api(fn)}] x must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (1, 2):
        raise ValueError(f"[{_api(fn)}] x must be 1-D [T] or 2-D [B, T], got shape {list(x.shape)}")
    n_fft, hop, win = _lengths(x.shape[-1], n_fft, hop_length, win_length, fn)
    if pad_mode not in ("reflect", "constant"):
        raise ValueError(f"[{_api(fn)}] pad_mode must be 'reflect' or 'constant', got {pad_mode!r}")
    if onesided is None:
        onesided = not x.dtype.is_complex
    if x.dtype.is_complex and onesided:
        raise ValueError(f"[{_api(fn)}] onesided must be False for a complex x ({x.dtype.name})")
    if not (x.dtype.is_complex or x.dtype.is_floating_point):
        x = x.astype(_fft._default_float())
    batched = x.ndim == 2
    if not batched:
        x = x.unsqueeze(0)
    if center:
        half = n_fft // 2
        if pad_mode == "reflect" and x.shape[-1] <= half:
            raise ValueError(f"[{_api(fn)}] reflect padding by n_fft // 2 ({half}) needs more than {half} samples, "
                             f"got {x.shape[-1]}")
        from .nn.functional import pad
        if x.dtype.is_complex:  # padded as its real and imaginary parts
            x = _C.complex(pad(x.real().unsqueeze(1), [half, half], mode=pad_mode).squeeze(1),
                           pad(x.imag().unsqueeze(1), [half, half], mode=pad_mode).squeeze(1))
        else:
            x = pad(x.unsqueeze(1), [half, half], mode=pad_mode).squeeze(1)
    length = x.shape[-1]
    if n_fft > length:
        raise ValueError(f"[{_api(fn)}] n_fft ({n_fft}) must not exceed the (padded) signal length ({length})")
    frames = 1 + (length - n_fft) // hop
    w = _window(window, win, n_fft, x.dtype if not x.dtype.is_complex else x.real().dtype, fn)
    framed = x.index_select(_frame_index(n_fft, hop, frames), axis=-1).reshape([x.shape[0], frames, n_fft])
    framed = framed * w
    norm = "ortho" if normalized else "backward"
    out = _fft.rfft(framed, norm=norm) if onesided else _fft.fft(framed, norm=norm)
    out = out.transpose([0, 2, 1])
    return out if batched else out.squeeze(0)


def istft(x, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False, onesided=True,
          length=None, return_complex=False, name=None):
    """The inverse of `stft` by windowed overlap-add: x is
    [B, n_fft // 2 + 1 (onesided) or n_fft, num_frames] (or without B), the
    result [B, length] real (complex with return_complex, which needs
    onesided=False). length cuts the rebuilt signal (centring pad removed
    from its start) to that many samples, or to as many as the frames
    cover. The squared window summed over the frames must be nonzero
    wherever the signal is rebuilt.

    Examples:
        >>> import oar
        >>> x = oar.arange(16, dtype="float32")
        >>> y = oar.signal.istft(oar.signal.stft(x, n_fft=8), n_fft=8, length=16)
        >>> bool(oar.allclose(x, y, atol=1e-5))
        True
    """
    fn = "istft"
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{_api(fn)}] x must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (2, 3):
        raise ValueError(f"[{_api(fn)}] x must be 2-D [F, frames] or 3-D [B, F, frames], got shape {list(x.shape)}")
    if not x.dtype.is_complex:
        raise TypeError(f"[{_api(fn)}] x must be complex64 or complex128, got {x.dtype.name}")
    n_fft, hop, win = _lengths(None, n_fft, hop_length, win_length, fn)
    if return_complex and onesided:
        raise ValueError(f"[{_api(fn)}] return_complex=True needs onesided=False (a onesided spectrum is that of a "
                         f"real signal)")
    bins = n_fft // 2 + 1 if onesided else n_fft
    if x.shape[-2] != bins:
        raise ValueError(f"[{_api(fn)}] x must have {bins} frequency bins for n_fft={n_fft} "
                         f"(onesided={onesided}), got {x.shape[-2]}")
    if hop > win:
        raise ValueError(f"[{_api(fn)}] hop_length ({hop}) must not exceed win_length ({win}): samples between "
                         f"windows could not be rebuilt")
    if length is not None:
        length = _pos_int(length, fn, "length")
    batched = x.ndim == 3
    if not batched:
        x = x.unsqueeze(0)
    frames = x.shape[-1]
    norm = "ortho" if normalized else "backward"
    spec = x.transpose([0, 2, 1])
    if onesided:
        sig = _fft.irfft(spec, n=n_fft, norm=norm)
    else:
        sig = _fft.ifft(spec, n=n_fft, norm=norm)
        if not return_complex:
            sig = sig.real()
    real_dtype = sig.dtype if not sig.dtype.is_complex else sig.real().dtype
    w = _window(window, win, n_fft, real_dtype, fn).astype(real_dtype)
    sig = sig * w
    total = n_fft + hop * (frames - 1)
    idx = _frame_index(n_fft, hop, frames)
    y = zeros([x.shape[0], total], dtype=sig.dtype)
    y = y.index_add(idx, -1, sig.reshape([x.shape[0], frames * n_fft]))
    env = zeros([total], dtype=real_dtype).index_add(idx, 0, (w * w).unsqueeze(0).expand([frames, n_fft])
                                                     .reshape([-1]))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0)
    if length is not None:
        end = min(start + length, total)
    if end <= start:
        raise ValueError(f"[{_api(fn)}] no samples are left to rebuild from {frames} frames")
    env = env[start:end]
    if float(env.abs().min()) < 1e-11:
        raise ValueError(f"[{_api(fn)}] the window overlap-add is zero somewhere (the window and hop_length "
                         f"fail the NOLA condition)")
    y = y[:, start:end] / env
    return y if batched else y.squeeze(0)
