"""Audio feature layers (``paddle.audio.features``): Spectrogram,
MelSpectrogram, LogMelSpectrogram and MFCC.

Each is a Layer over oar.signal.stft and oar ops, so gradients flow from the
features back to the waveform. Waveforms are [batch, time] or [time]; the
features are [batch, freq, frames] or [freq, frames]. The constant matrices
(window, filter bank, DCT) are buffers, saved in the state dict under the
names Paddle gives them, and the layers nest the same way
(MFCC._log_melspectrogram._melspectrogram._spectrogram), so state dicts
carry over.
"""
from ... import _C
from ...nn import Layer
from ...signal import stft
from ..functional.functional import _check_db_args, _dct_matrix, _fbank_matrix, _power_to_db
from ..functional._checks import _check_int, _check_number
from ..functional.window import _make_window

__all__ = ["Spectrogram", "MelSpectrogram", "LogMelSpectrogram", "MFCC"]


def _api(cls):
    return f"oar.audio.features.{cls}"


def _inner(cls, api, *args):
    """A layer of class cls built inside another: its errors, at construction
    and when it runs, name the outer layer `api`, the one the user made."""
    layer = cls.__new__(cls)
    layer._init(api, *args)
    return layer


class Spectrogram(Layer):
    """The spectrogram of waveforms: |STFT(x)| ** power, the short-time
    Fourier transform of frames of n_fft samples hop_length apart, each
    multiplied by the window.

    Args:
        n_fft (int, optional): the transform length; n_fft // 2 + 1 bins.
        hop_length (int|None, optional): samples between frames; None means n_fft // 4.
        win_length (int|None, optional): the window length, <= n_fft (centred in
            the frame, zeros around); None means n_fft.
        window (str|tuple, optional): a window name or (name, *params), see
            oar.audio.functional.get_window; periodic.
        power (float, optional): the exponent of the magnitude, > 0 (2 gives power).
        center (bool, optional): pad x by n_fft // 2 on both sides so frame t is
            centred on sample t * hop_length; otherwise frame t starts there.
        pad_mode (str, optional): 'reflect' or 'constant' (zeros), with center.
        dtype (str, optional): the floating-point dtype of the window and the
            computation; waveforms are cast to it.

    Shape:
        x: [batch, time] or [time]; output: [batch, n_fft // 2 + 1, frames]
        (without batch for a 1-D x), frames = 1 + (time - n_fft) // hop_length
        without center, 1 + (time + 2 * (n_fft // 2) - n_fft) // hop_length
        with it (1 + time // hop_length for an even n_fft).

    Examples:
        >>> import oar
        >>> x = oar.randn([2, 1000])
        >>> spec = oar.audio.features.Spectrogram(n_fft=256, hop_length=128)
        >>> spec(x).shape
        [2, 129, 8]
    """

    def __init__(self, n_fft=512, hop_length=512, win_length=None, window="hann", power=1.0, center=True,
                 pad_mode="reflect", dtype="float32"):
        self._init(_api("Spectrogram"), n_fft, hop_length, win_length, window, power, center, pad_mode, dtype)

    def _init(self, api, n_fft, hop_length, win_length, window, power, center, pad_mode, dtype):
        super().__init__()
        self._api = api
        self.n_fft = _check_int(n_fft, api, "n_fft")
        self.hop_length = self.n_fft // 4 if hop_length is None else _check_int(hop_length, api, "hop_length")
        if self.hop_length < 1:
            raise ValueError(f"[{api}] the default hop_length n_fft // 4 is 0 for n_fft={n_fft}; pass hop_length")
        self.win_length = self.n_fft if win_length is None else _check_int(win_length, api, "win_length")
        if self.win_length > self.n_fft:
            raise ValueError(f"[{api}] win_length ({self.win_length}) must not exceed n_fft ({self.n_fft})")
        self.power = _check_number(power, api, "power")
        if not self.power > 0:
            raise ValueError(f"[{api}] power must be positive, got {power!r}")
        self.center = bool(center)
        if pad_mode not in ("reflect", "constant"):
            raise ValueError(f"[{api}] pad_mode must be 'reflect' or 'constant', got {pad_mode!r}")
        self.pad_mode = pad_mode
        self.register_buffer("fft_window", _make_window(window, self.win_length, True, dtype, api))

    def forward(self, x):
        """The spectrogram of x ([batch, time] or [time])."""
        api = self._api
        if not isinstance(x, _C.Tensor):
            raise TypeError(f"[{api}] x must be a Tensor, got {type(x).__name__}")
        if x.ndim not in (1, 2):
            raise ValueError(f"[{api}] x must be a waveform [time] or a batch of them [batch, time], got shape "
                             f"{list(x.shape)}")
        if x.dtype.is_complex:
            raise TypeError(f"[{api}] x must be a real waveform, got {x.dtype.name}")
        if x.dtype != self.fft_window.dtype:
            x = x.astype(self.fft_window.dtype)
        length = x.shape[-1]
        if self.center:
            half = self.n_fft // 2
            if self.pad_mode == "reflect" and length <= half:
                raise ValueError(f"[{api}] reflect padding by n_fft // 2 ({half}) needs more than {half} samples, "
                                 f"got {length}")
        elif self.n_fft > length:
            raise ValueError(f"[{api}] n_fft ({self.n_fft}) must not exceed the waveform length ({length}) with "
                             f"center=False")
        s = stft(x, self.n_fft, hop_length=self.hop_length, win_length=self.win_length, window=self.fft_window,
                 center=self.center, pad_mode=self.pad_mode)
        if self.power == 2.0:  # re^2 + im^2: smooth everywhere, also where the magnitude is 0
            return s.real() ** 2 + s.imag() ** 2
        return s.abs() ** self.power


class MelSpectrogram(Layer):
    """The mel spectrogram of waveforms: the spectrogram (|STFT| ** power)
    mapped onto n_mels mel bands by the filter bank of
    oar.audio.functional.compute_fbank_matrix.

    Args:
        sr (int, optional): the sample rate in Hz.
        n_fft, hop_length, win_length, window, power, center, pad_mode:
            as for Spectrogram (here power defaults to 2).
        n_mels (int, optional): the number of mel bands.
        f_min (float, optional): the lowest frequency in Hz.
        f_max (float|None, optional): the highest, at most sr / 2; None means sr // 2.
        htk (bool, optional): use the HTK mel scale instead of Slaney's.
        norm (str|float|None, optional): filter normalisation, 'slaney', a p-norm or None.
        dtype (str, optional): the floating-point dtype of the computation.

    Shape:
        x: [batch, time] or [time]; output: [batch, n_mels, frames].

    Examples:
        >>> import oar
        >>> x = oar.randn([2, 4000])
        >>> mel = oar.audio.features.MelSpectrogram(sr=16000, n_fft=512, hop_length=160, n_mels=40)
        >>> mel(x).shape
        [2, 40, 26]
    """

    def __init__(self, sr=22050, n_fft=2048, hop_length=512, win_length=None, window="hann", power=2.0, center=True,
                 pad_mode="reflect", n_mels=64, f_min=50.0, f_max=None, htk=False, norm="slaney", dtype="float32"):
        self._init(_api("MelSpectrogram"), sr, n_fft, hop_length, win_length, window, power, center, pad_mode,
                   n_mels, f_min, f_max, htk, norm, dtype)

    def _init(self, api, sr, n_fft, hop_length, win_length, window, power, center, pad_mode, n_mels, f_min, f_max,
              htk, norm, dtype):
        super().__init__()
        self._spectrogram = _inner(Spectrogram, api, n_fft, hop_length, win_length, window, power, center, pad_mode,
                                   dtype)
        self.n_mels = n_mels
        self.f_min = f_min
        self.f_max = f_max
        self.htk = htk
        self.norm = norm
        if f_max is None:  # sr // 2, as Paddle's layers have it (compute_fbank_matrix's own default is sr / 2)
            f_max = _check_number(sr, api, "sr") // 2
        self.register_buffer("fbank_matrix", _fbank_matrix(sr, n_fft, n_mels, f_min, f_max, htk, norm, dtype, api))

    def forward(self, x):
        """The mel spectrogram of x ([batch, time] or [time])."""
        return self.fbank_matrix @ self._spectrogram(x)


class LogMelSpectrogram(Layer):
    """The log-mel spectrogram of waveforms: the mel spectrogram in decibels,
    10 log10(max(mel, amin) / ref_value), optionally limited to top_db below
    its largest value (over the whole batch), as
    oar.audio.functional.power_to_db.

    Args:
        sr, n_fft, hop_length, win_length, window, power, center, pad_mode,
        n_mels, f_min, f_max, htk, norm: as for MelSpectrogram (here n_fft
            defaults to 512 and hop_length to None, n_fft // 4).
        ref_value (float, optional): the power that becomes 0 dB.
        amin (float, optional): the smallest power considered, > 0.
        top_db (float|None, optional): the dynamic range kept; None keeps all.
        dtype (str, optional): the floating-point dtype of the computation.

    Shape:
        x: [batch, time] or [time]; output: [batch, n_mels, frames].

    Examples:
        >>> import oar
        >>> x = oar.randn([1, 2048])
        >>> logmel = oar.audio.features.LogMelSpectrogram(sr=16000, n_mels=32, top_db=80.0)
        >>> y = logmel(x)
        >>> y.shape
        [1, 32, 17]
        >>> bool(y.max() - y.min() <= 80.0)
        True
    """

    def __init__(self, sr=22050, n_fft=512, hop_length=None, win_length=None, window="hann", power=2.0,
                 center=True, pad_mode="reflect", n_mels=64, f_min=50.0, f_max=None, htk=False, norm="slaney",
                 ref_value=1.0, amin=1e-10, top_db=None, dtype="float32"):
        self._init(_api("LogMelSpectrogram"), sr, n_fft, hop_length, win_length, window, power, center, pad_mode,
                   n_mels, f_min, f_max, htk, norm, ref_value, amin, top_db, dtype)

    def _init(self, api, sr, n_fft, hop_length, win_length, window, power, center, pad_mode, n_mels, f_min, f_max,
              htk, norm, ref_value, amin, top_db, dtype):
        super().__init__()
        self._api = api
        self.ref_value, self.amin, self.top_db = _check_db_args(ref_value, amin, top_db, api)
        self._melspectrogram = _inner(MelSpectrogram, api, sr, n_fft, hop_length, win_length, window, power,
                                      center, pad_mode, n_mels, f_min, f_max, htk, norm, dtype)

    def forward(self, x):
        """The log-mel spectrogram of x ([batch, time] or [time])."""
        return _power_to_db(self._melspectrogram(x), self.ref_value, self.amin, self.top_db, self._api)


class MFCC(Layer):
    """Mel-frequency cepstral coefficients of waveforms: the orthonormal DCT-II
    (oar.audio.functional.create_dct) of the log-mel spectrogram along the mel
    axis, keeping the first n_mfcc coefficients.

    Args:
        sr (int, optional): the sample rate in Hz.
        n_mfcc (int, optional): the number of coefficients, <= n_mels.
        n_fft, hop_length, win_length, window, power, center, pad_mode,
        n_mels, f_min, f_max, htk, norm, ref_value, amin, top_db: as for
            LogMelSpectrogram.
        dtype (str, optional): the floating-point dtype of the computation.

    Shape:
        x: [batch, time] or [time]; output: [batch, n_mfcc, frames].

    Examples:
        >>> import oar
        >>> x = oar.randn([3, 1600])
        >>> mfcc = oar.audio.features.MFCC(sr=16000, n_mfcc=13, n_fft=400, hop_length=160, n_mels=40)
        >>> mfcc(x).shape
        [3, 13, 11]
    """

    def __init__(self, sr=22050, n_mfcc=40, n_fft=512, hop_length=None, win_length=None, window="hann", power=2.0,
                 center=True, pad_mode="reflect", n_mels=64, f_min=50.0, f_max=None, htk=False, norm="slaney",
                 ref_value=1.0, amin=1e-10, top_db=None, dtype="float32"):
        super().__init__()
        api = _api("MFCC")
        n_mfcc = _check_int(n_mfcc, api, "n_mfcc")
        n_mels_ = _check_int(n_mels, api, "n_mels")
        if n_mfcc > n_mels_:
            raise ValueError(f"[{api}] n_mfcc ({n_mfcc}) must not exceed n_mels ({n_mels_})")
        self._log_melspectrogram = _inner(LogMelSpectrogram, api, sr, n_fft, hop_length, win_length, window, power,
                                          center, pad_mode, n_mels, f_min, f_max, htk, norm, ref_value, amin, top_db,
                                          dtype)
        self.register_buffer("dct_matrix", _dct_matrix(n_mfcc, n_mels_, "ortho", dtype, api))

    def forward(self, x):
        """The MFCCs of x ([batch, time] or [time])."""
        # dct_matrix is [n_mels, n_mfcc]; its transpose maps the mel axis of
        # [..., n_mels, frames] to coefficients.
        return self.dct_matrix.t() @ self._log_melspectrogram(x)
