"""Mel scale, filter banks, decibels and the DCT (``paddle.audio.functional``).

The constant matrices (filter bank, DCT) are built in float64 and cast to the
requested dtype at the end. The functions of a tensor (hz_to_mel, mel_to_hz,
power_to_db) are oar ops, so gradients flow through them.

Note [mel scales]: two mel scales are in use. HTK's is one formula,
mel = 2595 log10(1 + f / 700). Slaney's (the Auditory Toolbox's, the default)
is linear below 1 kHz, 3 mels per 200 Hz, and logarithmic above it, 27 mels
per factor 6.4 of frequency; the two pieces meet at 1 kHz = 15 mels.
"""
import math
import numbers

from ... import _C
from ...creation import arange, linspace
from ._checks import _check_int, _check_number, _float_dtype

__all__ = ["hz_to_mel", "mel_to_hz", "mel_frequencies", "fft_frequencies", "compute_fbank_matrix", "power_to_db",
           "create_dct"]

# Slaney's mel scale (Note [mel scales])
_MEL_PER_HZ = 3.0 / 200.0  # below the break
_MIN_LOG_HZ = 1000.0       # the break
_MIN_LOG_MEL = 15.0
_LOGSTEP = math.log(6.4) / 27.0


def _api(fn):
    return f"oar.audio.functional.{fn}"


def _is_tensor(x):
    return isinstance(x, _C.Tensor)


def hz_to_mel(freq, htk=False):
    """Frequencies in Hz to mels, on HTK's scale (htk=True) or Slaney's
    (the default; linear below 1 kHz, logarithmic above).

    Args:
        freq (float|Tensor): frequencies in Hz, of any shape.
        htk (bool, optional): use the HTK formula 2595 log10(1 + f / 700).

    Returns:
        float|Tensor: the mels, a float for a float.

    Examples:
        >>> import oar
        >>> oar.audio.functional.hz_to_mel(1000.0)
        15.0
        >>> round(oar.audio.functional.hz_to_mel(1000.0, htk=True), 3)
        999.986
        >>> oar.audio.functional.hz_to_mel(oar.to_tensor([0.0, 200.0])).numpy().tolist()
        [0.0, 3.0]
    """
    api = _api("hz_to_mel")
    if not _is_tensor(freq):  # one formula for both: a number goes through a float64 scalar tensor
        return float(hz_to_mel(_C.full([], _check_number(freq, api, "freq"), "float64"), htk))
    if freq.dtype.is_complex:
        raise TypeError(f"[{api}] freq must be real, got {freq.dtype.name}")
    if not freq.dtype.is_floating_point:
        freq = freq.astype("float32")
    if htk:
        return (1.0 + freq / 700.0).log10() * 2595.0
    linear = freq * _MEL_PER_HZ
    # The log branch sees at least the break frequency, so it stays finite
    # (and its gradient zero) where the linear branch is taken.
    log = _MIN_LOG_MEL + (freq.clip(min=_MIN_LOG_HZ) / _MIN_LOG_HZ).log() / _LOGSTEP
    return _C.where(freq >= _MIN_LOG_HZ, log, linear)


def mel_to_hz(mel, htk=False):
    """Mels to frequencies in Hz, the inverse of `hz_to_mel`.

    Args:
        mel (float|Tensor): mels, of any shape.
        htk (bool, optional): use the HTK scale instead of Slaney's.

    Returns:
        float|Tensor: frequencies in Hz, a float for a float.

    Examples:
        >>> import oar
        >>> oar.audio.functional.mel_to_hz(15.0)
        1000.0
        >>> m = oar.to_tensor([3.0, 42.0], dtype='float64')
        >>> oar.audio.functional.mel_to_hz(m).numpy().round(2).tolist()
        [200.0, 6400.0]
    """
    api = _api("mel_to_hz")
    if not _is_tensor(mel):
        return float(mel_to_hz(_C.full([], _check_number(mel, api, "mel"), "float64"), htk))
    if mel.dtype.is_complex:
        raise TypeError(f"[{api}] mel must be real, got {mel.dtype.name}")
    if not mel.dtype.is_floating_point:
        mel = mel.astype("float32")
    if htk:
        return ((mel / 2595.0 * math.log(10.0)).exp() - 1.0) * 700.0
    linear = mel / _MEL_PER_HZ
    log = ((mel.clip(min=_MIN_LOG_MEL) - _MIN_LOG_MEL) * _LOGSTEP).exp() * _MIN_LOG_HZ
    return _C.where(mel >= _MIN_LOG_MEL, log, linear)


def _mel_frequencies(n_mels, f_min, f_max, htk):
    """float64 [n_mels]: frequencies evenly spaced in mels from f_min to f_max."""
    mels = linspace(hz_to_mel(f_min, htk=htk), hz_to_mel(f_max, htk=htk), n_mels, dtype="float64")
    return mel_to_hz(mels, htk=htk)


def mel_frequencies(n_mels=64, f_min=0.0, f_max=11025.0, htk=False, dtype="float32"):
    """`n_mels` frequencies in Hz, evenly spaced on the mel scale from f_min
    to f_max (both included).

    Args:
        n_mels (int, optional): how many frequencies.
        f_min (float, optional): the lowest, in Hz.
        f_max (float, optional): the highest, in Hz.
        htk (bool, optional): use the HTK mel scale instead of Slaney's.
        dtype (str, optional): a floating-point dtype.

    Returns:
        Tensor: shape [n_mels].

    Examples:
        >>> import oar
        >>> f = oar.audio.functional.mel_frequencies(3, 0.0, 2000.0, dtype='float64')
        >>> f.numpy().round(1).tolist()
        [0.0, 836.1, 2000.0]
    """
    api = _api("mel_frequencies")
    n_mels = _check_int(n_mels, api, "n_mels")
    f_min, f_max = _check_number(f_min, api, "f_min"), _check_number(f_max, api, "f_max")
    if not 0.0 <= f_min <= f_max:
        raise ValueError(f"[{api}] expected 0 <= f_min <= f_max, got f_min={f_min}, f_max={f_max}")
    dtype = _float_dtype(dtype, api)
    return _mel_frequencies(n_mels, f_min, f_max, htk).astype(dtype)


def fft_frequencies(sr, n_fft, dtype="float32"):
    """The centre frequencies in Hz of the n_fft // 2 + 1 bins of a onesided
    transform of n_fft points at sample rate sr.

    Args:
        sr (int): the sample rate in Hz.
        n_fft (int): the transform length.
        dtype (str, optional): a floating-point dtype.

    Returns:
        Tensor: shape [n_fft // 2 + 1], from 0 to sr / 2.

    Examples:
        >>> import oar
        >>> oar.audio.functional.fft_frequencies(16000, 8).numpy().tolist()
        [0.0, 2000.0, 4000.0, 6000.0, 8000.0]
    """
    api = _api("fft_frequencies")
    sr = _check_number(sr, api, "sr")
    if sr <= 0:
        raise ValueError(f"[{api}] sr must be positive, got {sr}")
    n_fft = _check_int(n_fft, api, "n_fft")
    dtype = _float_dtype(dtype, api)
    return linspace(0.0, sr / 2.0, 1 + n_fft // 2, dtype="float64").astype(dtype)


def _fbank_matrix(sr, n_fft, n_mels, f_min, f_max, htk, norm, dtype, api):
    """compute_fbank_matrix with the error messages naming `api`."""
    sr = _check_number(sr, api, "sr")
    if sr <= 0:
        raise ValueError(f"[{api}] sr must be positive, got {sr}")
    n_fft = _check_int(n_fft, api, "n_fft")
    n_mels = _check_int(n_mels, api, "n_mels")
    f_min = _check_number(f_min, api, "f_min")
    f_max = sr / 2.0 if f_max is None else _check_number(f_max, api, "f_max")
    if f_max > sr / 2.0:
        raise ValueError(f"[{api}] f_max ({f_max}) must not exceed the Nyquist frequency sr / 2 ({sr / 2.0})")
    if not 0.0 <= f_min < f_max:
        raise ValueError(f"[{api}] expected 0 <= f_min < f_max, got f_min={f_min}, f_max={f_max}")
    if not (norm is None or norm == "slaney" or (isinstance(norm, numbers.Real) and not isinstance(norm, bool))):
        raise ValueError(f"[{api}] norm must be 'slaney', None or a number p (p-norm), got {norm!r}")
    dtype = _float_dtype(dtype, api)
    fftfreqs = linspace(0.0, sr / 2.0, 1 + n_fft // 2, dtype="float64")
    # n_mels + 2 band edges: filter i rises from edge i to edge i+1 and falls to edge i+2.
    edges = _mel_frequencies(n_mels + 2, f_min, f_max, htk)
    widths = edges[1:] - edges[:-1]
    f = fftfreqs.unsqueeze(0)                                 # [1, bins] against [n_mels, 1]
    rising = (f - edges[:-2].unsqueeze(1)) / widths[:-1].unsqueeze(1)
    falling = (edges[2:].unsqueeze(1) - f) / widths[1:].unsqueeze(1)
    weights = _C.minimum(rising, falling).clip(min=0.0)
    if norm == "slaney":  # each filter's area made equal: about constant energy per channel
        weights = weights * (2.0 / (edges[2:] - edges[:-2])).unsqueeze(1)
    elif norm is not None:
        from ...nn.functional import normalize
        weights = normalize(weights, p=float(norm), axis=-1)
    return weights.astype(dtype)


def compute_fbank_matrix(sr, n_fft, n_mels=64, f_min=0.0, f_max=None, htk=False, norm="slaney", dtype="float32"):
    """The mel filter bank: n_mels triangular filters over the n_fft // 2 + 1
    bins of a onesided transform, their peaks evenly spaced in mels from
    f_min to f_max. A power spectrogram S [bins, frames] becomes the mel
    spectrogram `matrix @ S`.

    Args:
        sr (int): the sample rate in Hz.
        n_fft (int): the transform length.
        n_mels (int, optional): the number of filters.
        f_min (float, optional): the lowest frequency in Hz.
        f_max (float, optional): the highest, at most sr / 2 (the default).
        htk (bool, optional): use the HTK mel scale instead of Slaney's.
        norm (str|float|None, optional): 'slaney' scales each filter by
            2 / (its bandwidth in Hz) so all have the same area; a number p
            scales each to unit p-norm; None leaves peaks at 1.
        dtype (str, optional): a floating-point dtype.

    Returns:
        Tensor: shape [n_mels, n_fft // 2 + 1].

    Examples:
        >>> import oar
        >>> fb = oar.audio.functional.compute_fbank_matrix(sr=16000, n_fft=512, n_mels=40)
        >>> fb.shape
        [40, 257]
        >>> fb = oar.audio.functional.compute_fbank_matrix(8, 8, n_mels=1, norm=None)
        >>> fb.numpy().tolist()
        [[0.0, 0.5, 1.0, 0.5, 0.0]]
    """
    return _fbank_matrix(sr, n_fft, n_mels, f_min, f_max, htk, norm, dtype, _api("compute_fbank_matrix"))


def _check_db_args(ref_value, amin, top_db, api):
    ref_value = _check_number(ref_value, api, "ref_value")
    amin = _check_number(amin, api, "amin")
    if amin <= 0:
        raise ValueError(f"[{api}] amin must be positive, got {amin}")
    if ref_value <= 0:
        raise ValueError(f"[{api}] ref_value must be positive, got {ref_value}")
    if top_db is not None:
        top_db = _check_number(top_db, api, "top_db")
        if top_db < 0:
            raise ValueError(f"[{api}] top_db must be non-negative or None, got {top_db}")
    return ref_value, amin, top_db


def _power_to_db(spect, ref_value, amin, top_db, api):
    if not _is_tensor(spect):
        raise TypeError(f"[{api}] spect must be a Tensor, got {type(spect).__name__}")
    if not spect.dtype.is_floating_point:
        raise TypeError(f"[{api}] spect must be a floating-point tensor, got {spect.dtype.name}")
    ref_value, amin, top_db = _check_db_args(ref_value, amin, top_db, api)
    db = spect.clip(min=amin).log10() * 10.0 - 10.0 * math.log10(max(ref_value, amin))
    if top_db is not None:
        db = _C.maximum(db, db.max() - top_db)
    return db


def power_to_db(spect, ref_value=1.0, amin=1e-10, top_db=80.0):
    """A power spectrogram in decibels: 10 log10(max(spect, amin) / ref_value).

    With top_db, values more than top_db below the largest value of the whole
    tensor (all batch items together) are raised to that floor.

    Args:
        spect (Tensor): a power (squared magnitude) spectrogram.
        ref_value (float, optional): the power that becomes 0 dB.
        amin (float, optional): the smallest power considered, > 0.
        top_db (float|None, optional): the dynamic range kept, >= 0; None keeps all.

    Returns:
        Tensor: the same shape as spect.

    Examples:
        >>> import oar
        >>> p = oar.to_tensor([1.0, 10.0, 100.0, 0.0])
        >>> oar.audio.functional.power_to_db(p, top_db=None).numpy().tolist()
        [0.0, 10.0, 20.0, -100.0]
        >>> oar.audio.functional.power_to_db(p, ref_value=10.0, top_db=25.0).numpy().tolist()
        [-10.0, 0.0, 10.0, -15.0]
    """
    return _power_to_db(spect, ref_value, amin, top_db, _api("power_to_db"))


def _dct_matrix(n_mfcc, n_mels, norm, dtype, api):
    n_mfcc = _check_int(n_mfcc, api, "n_mfcc")
    n_mels = _check_int(n_mels, api, "n_mels")
    if norm not in ("ortho", None):
        raise ValueError(f"[{api}] norm must be 'ortho' or None, got {norm!r}")
    dtype = _float_dtype(dtype, api)
    n = arange(n_mels, dtype="float64") + 0.5
    k = arange(n_mfcc, dtype="float64").unsqueeze(1)
    dct = (k * n * (math.pi / n_mels)).cos()                 # [n_mfcc, n_mels]
    if norm is None:
        dct = dct * 2.0
    else:  # rows of unit length: the first has half the weight of the others
        scale = _C.full([n_mfcc, 1], math.sqrt(2.0 / n_mels), "float64")
        scale[0] = math.sqrt(1.0 / n_mels)
        dct = dct * scale
    return dct.t().astype(dtype)


def create_dct(n_mfcc, n_mels, norm="ortho", dtype="float32"):
    """The DCT-II matrix that turns n_mels log-mel energies into n_mfcc
    cepstral coefficients: `mfcc = log_mel @ matrix` along the mel axis.

    Args:
        n_mfcc (int): the number of coefficients kept.
        n_mels (int): the number of mel bands.
        norm (str|None, optional): 'ortho' makes the full matrix orthonormal;
            None gives the unnormalised transform (scale 2).
        dtype (str, optional): a floating-point dtype.

    Returns:
        Tensor: shape [n_mels, n_mfcc].

    Examples:
        >>> import oar
        >>> d = oar.audio.functional.create_dct(4, 4, dtype='float64')
        >>> d.shape
        [4, 4]
        >>> bool(oar.allclose(d.t() @ d, oar.eye(4, dtype='float64')))
        True
    """
    return _dct_matrix(n_mfcc, n_mels, norm, dtype, _api("create_dct"))
