"""oar.audio against NumPy references written here: framing + window +
np.fft.rfft for the spectrograms, the mel-scale and filter-bank formulas, the
DCT-II matrix (checked itself against scipy.fft.dct), and scipy.signal's
windows; gradients of the features against finite differences of the
NumPy references in float64; typed errors for bad arguments."""
import math

import numpy as np
import pytest
import scipy.fft
import scipy.signal

import oar
import oar.audio
from oar.audio import features, functional as AF

RNG = np.random.default_rng(20240611)


def _t(a, dtype):
    return oar.to_tensor(np.asarray(a, dtype=dtype))


def _tol(dtype):
    return dict(rtol=2e-4, atol=2e-4) if dtype == "float32" else dict(rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- references

def np_window(name, m, periodic=True, params=()):
    if name == "exponential":
        return scipy.signal.windows.exponential(m, *params, sym=not periodic)
    return scipy.signal.get_window((name, *params) if params else name, m, fftbins=periodic)


def np_hz_to_mel(f, htk=False):
    f = np.asarray(f, dtype=np.float64)
    if htk:
        return 2595.0 * np.log10(1.0 + f / 700.0)
    logstep = np.log(6.4) / 27.0
    return np.where(f >= 1000.0, 15.0 + np.log(np.maximum(f, 1e-300) / 1000.0) / logstep, 3.0 * f / 200.0)


def np_mel_to_hz(m, htk=False):
    m = np.asarray(m, dtype=np.float64)
    if htk:
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    logstep = np.log(6.4) / 27.0
    return np.where(m >= 15.0, 1000.0 * np.exp(logstep * (m - 15.0)), 200.0 * m / 3.0)


def np_fbank(sr, n_fft, n_mels, f_min, f_max, htk, norm):
    freqs = np.linspace(0.0, sr / 2.0, n_fft // 2 + 1)
    mel_f = np_mel_to_hz(np.linspace(np_hz_to_mel(f_min, htk), np_hz_to_mel(f_max, htk), n_mels + 2), htk)
    w = np.zeros((n_mels, freqs.size))
    for i in range(n_mels):
        lo, mid, hi = mel_f[i], mel_f[i + 1], mel_f[i + 2]
        up = (freqs - lo) / (mid - lo)
        down = (hi - freqs) / (hi - mid)
        w[i] = np.maximum(0.0, np.minimum(up, down))
        if norm == "slaney":
            w[i] *= 2.0 / (hi - lo)
        elif norm is not None:
            w[i] /= max(np.sum(np.abs(w[i]) ** norm) ** (1.0 / norm), 1e-12)
    return w


def np_dct(n_mfcc, n_mels, norm):
    n = np.arange(n_mels)
    k = np.arange(n_mfcc)[:, None]
    d = np.cos(np.pi / n_mels * (n + 0.5) * k)
    if norm is None:
        return (2.0 * d).T
    d *= np.sqrt(2.0 / n_mels)
    d[0] /= np.sqrt(2.0)
    return d.T


def np_power_to_db(s, ref=1.0, amin=1e-10, top_db=None):
    db = 10.0 * np.log10(np.maximum(s, amin)) - 10.0 * np.log10(max(ref, amin))
    if top_db is not None:
        db = np.maximum(db, db.max() - top_db)
    return db


def np_spectrogram(x, n_fft, hop, win_length=None, window="hann", power=1.0, center=True, pad_mode="reflect"):
    x = np.atleast_2d(x)
    win_length = win_length or n_fft
    if center:
        x = np.pad(x, [(0, 0), (n_fft // 2, n_fft // 2)], mode=pad_mode)
    w = np.zeros(n_fft)
    left = (n_fft - win_length) // 2
    w[left:left + win_length] = np_window(window, win_length) if isinstance(window, str) else \
        np_window(window[0], win_length, params=window[1:])
    frames = 1 + (x.shape[-1] - n_fft) // hop
    idx = np.arange(frames)[:, None] * hop + np.arange(n_fft)[None, :]
    spec = np.fft.rfft(x[:, idx] * w, axis=-1).transpose(0, 2, 1)
    return np.abs(spec) ** power


def np_mel(x, sr, n_fft, hop, n_mels, f_min=50.0, f_max=None, htk=False, norm="slaney", power=2.0, **kw):
    fb = np_fbank(sr, n_fft, n_mels, f_min, sr // 2 if f_max is None else f_max, htk, norm)
    return fb @ np_spectrogram(x, n_fft, hop, power=power, **kw)


def np_mfcc(x, sr, n_mfcc, n_fft, hop, n_mels, ref=1.0, amin=1e-10, top_db=None, **kw):
    logmel = np_power_to_db(np_mel(x, sr, n_fft, hop, n_mels, **kw), ref, amin, top_db)
    return np_dct(n_mfcc, n_mels, "ortho").T @ logmel


def _same_batching(ref, x):
    return ref if x.ndim == 2 else ref[0]


# ---------------------------------------------------------------- windows

WINDOWS = [("hann", ()), ("hamming", ()), ("blackman", ()), ("bartlett", ()), ("nuttall", ()), ("triang", ()),
           ("bohman", ()), ("cosine", ()), ("tukey", ()), ("tukey", (0.3,)), ("taylor", ()), ("taylor", (5, 40)),
           ("kaiser", (8.6,)), ("gaussian", (7.0,)), ("general_gaussian", (1.5, 5.0)), ("exponential", ()),
           ("exponential", (None, 3.0))]


@pytest.mark.parametrize("name,params", WINDOWS)
@pytest.mark.parametrize("m", [1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_get_window_matches_scipy(name, params, m, periodic):
    window = (name, *params) if params else name
    got = AF.get_window(window, m, fftbins=periodic)
    assert got.dtype == oar.float64 and got.shape == [m]
    np.testing.assert_allclose(got.numpy(), np_window(name, m, periodic, params), rtol=1e-12, atol=1e-12)


def test_get_window_closed_forms_and_dtype():
    m = 12
    n = np.arange(m)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / m)  # periodic: period m
    np.testing.assert_allclose(AF.get_window("hann", m).numpy(), hann, atol=1e-12)
    np.testing.assert_allclose(AF.get_window("hamming", m, fftbins=False).numpy(), np.hamming(m), atol=1e-12)
    np.testing.assert_allclose(AF.get_window("blackman", m, fftbins=False).numpy(), np.blackman(m), atol=1e-12)
    np.testing.assert_allclose(AF.get_window("bartlett", m, fftbins=False).numpy(), np.bartlett(m), atol=1e-12)
    np.testing.assert_allclose(AF.get_window(("kaiser", 5.0), m, fftbins=False).numpy(), np.kaiser(m, 5.0),
                               atol=1e-12)
    w32 = AF.get_window("hann", m, dtype="float32")
    assert w32.dtype == oar.float32
    np.testing.assert_allclose(w32.numpy(), hann, atol=1e-7)


# ---------------------------------------------------------------- mel scale

@pytest.mark.parametrize("htk", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hz_mel_round_trip_and_reference(htk, dtype):
    f = np.array([0.0, 20.0, 440.0, 999.0, 1000.0, 1001.0, 4000.0, 11025.0, 22050.0])
    mel = AF.hz_to_mel(_t(f, dtype), htk=htk)
    assert mel.dtype.name == dtype and mel.shape == [f.size]
    np.testing.assert_allclose(mel.numpy(), np_hz_to_mel(f, htk), **_tol(dtype))
    back = AF.mel_to_hz(mel, htk=htk)
    np.testing.assert_allclose(back.numpy(), f, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-2)
    for v in f:  # Python floats in, Python floats out
        assert isinstance(AF.hz_to_mel(float(v), htk), float)
        assert math.isclose(AF.hz_to_mel(float(v), htk), float(np_hz_to_mel(v, htk)), rel_tol=1e-12, abs_tol=1e-12)
        assert math.isclose(AF.mel_to_hz(AF.hz_to_mel(float(v), htk), htk), v, rel_tol=1e-12, abs_tol=1e-9)


def test_mel_scale_anchor_points():
    # Slaney: 3 mels per 200 Hz below 1 kHz, 27 mels per factor 6.4 above.
    assert AF.hz_to_mel(200.0) == 3.0 and AF.hz_to_mel(1000.0) == 15.0
    assert math.isclose(AF.hz_to_mel(6400.0), 42.0, rel_tol=1e-12)
    assert math.isclose(AF.hz_to_mel(700.0, htk=True), 2595.0 * math.log10(2.0), rel_tol=1e-12)


def test_hz_to_mel_gradient_is_finite_at_zero():
    f = oar.to_tensor([0.0, 500.0, 2000.0], dtype="float64", stop_gradient=False)
    AF.hz_to_mel(f).sum().backward()
    logstep = math.log(6.4) / 27.0
    np.testing.assert_allclose(f.grad.numpy(), [0.015, 0.015, 1.0 / (2000.0 * logstep)], rtol=1e-12)


@pytest.mark.parametrize("htk", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mel_and_fft_frequencies(htk, dtype):
    got = AF.mel_frequencies(n_mels=20, f_min=30.0, f_max=8000.0, htk=htk, dtype=dtype)
    assert got.dtype.name == dtype and got.shape == [20]
    want = np_mel_to_hz(np.linspace(np_hz_to_mel(30.0, htk), np_hz_to_mel(8000.0, htk), 20), htk)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6 if dtype == "float32" else 1e-12)
    ff = AF.fft_frequencies(sr=16000, n_fft=400, dtype=dtype)
    assert ff.dtype.name == dtype and ff.shape == [201]
    np.testing.assert_allclose(ff.numpy(), np.fft.rfftfreq(400, 1 / 16000), rtol=1e-6)
    d = AF.mel_frequencies()  # Paddle's defaults: 64 bands, 0 to 11025 Hz, float32
    assert d.dtype == oar.float32 and d.shape == [64]
    assert math.isclose(float(d[0]), 0.0, abs_tol=1e-6) and math.isclose(float(d[-1]), 11025.0, rel_tol=1e-6)


# ---------------------------------------------------------------- filter bank, dB, DCT

@pytest.mark.parametrize("sr,n_fft,n_mels,f_min,f_max", [(16000, 512, 40, 0.0, None), (22050, 256, 24, 50.0, 8000.0),
                                                         (8000, 64, 10, 100.0, 4000.0)])
@pytest.mark.parametrize("htk", [False, True])
@pytest.mark.parametrize("norm", ["slaney", None, 1.0, 2.0])
def test_compute_fbank_matrix(sr, n_fft, n_mels, f_min, f_max, htk, norm):
    want = np_fbank(sr, n_fft, n_mels, f_min, sr / 2 if f_max is None else f_max, htk, norm)
    for dtype in ("float32", "float64"):
        got = AF.compute_fbank_matrix(sr, n_fft, n_mels=n_mels, f_min=f_min, f_max=f_max, htk=htk, norm=norm,
                                      dtype=dtype)
        assert got.dtype.name == dtype and got.shape == [n_mels, n_fft // 2 + 1]
        scale = np.abs(want).max()
        np.testing.assert_allclose(got.numpy() / scale, want / scale, rtol=0,
                                   atol=1e-6 if dtype == "float32" else 1e-12)


def test_fbank_defaults_and_triangles():
    fb = AF.compute_fbank_matrix(22050, 2048)  # 64 bands, 0 to sr/2, slaney, float32
    assert fb.shape == [64, 1025] and fb.dtype == oar.float32
    # without normalisation, a filter whose peak falls on a bin reaches 1 there
    fb = AF.compute_fbank_matrix(8, 8, n_mels=1, norm=None, dtype="float64").numpy()
    np.testing.assert_array_equal(fb, [[0.0, 0.5, 1.0, 0.5, 0.0]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ref,amin,top_db", [(1.0, 1e-10, None), (1.0, 1e-10, 80.0), (10.0, 1e-5, 30.0),
                                             (0.5, 1e-3, 0.0)])
def test_power_to_db(dtype, ref, amin, top_db):
    s = RNG.uniform(0, 1, size=(2, 5, 7)) ** 8  # spans many decades
    s[0, 0, 0] = 0.0
    got = AF.power_to_db(_t(s, dtype), ref_value=ref, amin=amin, top_db=top_db)
    assert got.dtype.name == dtype and got.shape == [2, 5, 7]
    np.testing.assert_allclose(got.numpy(), np_power_to_db(s, ref, amin, top_db), rtol=1e-5, atol=1e-4)


def test_power_to_db_default_top_db_is_80():
    s = np.array([1.0, 1e-3, 1e-12])
    np.testing.assert_allclose(AF.power_to_db(_t(s, "float64")).numpy(), [0.0, -30.0, -80.0])


@pytest.mark.parametrize("n_mfcc,n_mels", [(13, 40), (5, 5), (1, 7)])
@pytest.mark.parametrize("norm", ["ortho", None])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_create_dct(n_mfcc, n_mels, norm, dtype):
    got = AF.create_dct(n_mfcc, n_mels, norm=norm, dtype=dtype)
    assert got.dtype.name == dtype and got.shape == [n_mels, n_mfcc]
    want = np_dct(n_mfcc, n_mels, norm)
    np.testing.assert_allclose(got.numpy(), want, **_tol(dtype))
    # the reference is the DCT-II itself
    x = RNG.standard_normal((3, n_mels))
    np.testing.assert_allclose(x @ want, scipy.fft.dct(x, type=2, norm=norm, axis=-1)[:, :n_mfcc], atol=1e-10)


# ---------------------------------------------------------------- features

def _wave(batched, n=700, seed=0):
    r = np.random.default_rng(seed)
    t = np.arange(n) / 8000.0
    x = np.sin(2 * np.pi * 440.0 * t) + 0.3 * r.standard_normal(n)
    return np.stack([x, 0.5 * x[::-1] + 0.1]) if batched else x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("n_fft,hop,win_length,window,power,center,pad_mode", [
    (64, 16, None, "hann", 1.0, True, "reflect"),
    (64, 32, None, "hamming", 2.0, False, "reflect"),
    (50, 20, 40, "blackman", 1.0, True, "constant"),
    (32, 8, None, ("kaiser", 6.0), 0.5, False, "reflect"),
    (128, 128, 100, ("gaussian", 20.0), 2.0, True, "reflect"),
])
def test_spectrogram(dtype, batched, n_fft, hop, win_length, window, power, center, pad_mode):
    x = _wave(batched)
    layer = features.Spectrogram(n_fft=n_fft, hop_length=hop, win_length=win_length, window=window, power=power,
                                 center=center, pad_mode=pad_mode, dtype=dtype)
    got = layer(_t(x, dtype))
    want = _same_batching(np_spectrogram(x, n_fft, hop, win_length, window, power, center, pad_mode), x)
    assert got.dtype.name == dtype and got.shape == list(want.shape)
    scale = want.max()
    np.testing.assert_allclose(got.numpy() / scale, want / scale, rtol=0, atol=1e-5 if dtype == "float32" else 1e-12)


def test_spectrogram_defaults_follow_paddle():
    layer = features.Spectrogram()  # n_fft 512, hop 512, hann, power 1, center, reflect, float32
    x = _wave(True, n=2048)
    got = layer(_t(x, "float32"))
    want = np_spectrogram(x, 512, 512, power=1.0)
    assert got.shape == [2, 257, 5] and got.dtype == oar.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-3)
    assert features.Spectrogram(n_fft=64, hop_length=None)(_t(x, "float32")).shape[-1] == 1 + 2048 // 16
    # an input of another dtype is computed in the layer's dtype
    assert layer(_t(x, "float64")).dtype == oar.float32


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("kw", [
    dict(sr=8000, n_fft=128, hop=32, n_mels=20),
    dict(sr=8000, n_fft=128, hop=64, n_mels=12, f_min=0.0, f_max=3000.0, htk=True, norm=None, center=False),
    dict(sr=16000, n_fft=100, hop=25, n_mels=16, f_min=20.0, norm=2.0, power=1.0, window="hamming"),
])
def test_mel_spectrogram(dtype, batched, kw):
    x = _wave(batched)
    kw = dict(kw)
    hop = kw.pop("hop")
    layer = features.MelSpectrogram(hop_length=hop, dtype=dtype, **kw)
    got = layer(_t(x, dtype))
    sr, n_fft, n_mels = kw.pop("sr"), kw.pop("n_fft"), kw.pop("n_mels")
    want = _same_batching(np_mel(x, sr, n_fft, hop, n_mels, **kw), x)
    assert got.dtype.name == dtype and got.shape == list(want.shape)
    scale = want.max()
    np.testing.assert_allclose(got.numpy() / scale, want / scale, rtol=0, atol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("ref,amin,top_db,htk", [(1.0, 1e-10, None, False), (2.0, 1e-6, 40.0, True),
                                                 (0.1, 1e-10, 80.0, False)])
def test_log_mel_spectrogram(dtype, batched, ref, amin, top_db, htk):
    x = _wave(batched)
    layer = features.LogMelSpectrogram(sr=8000, n_fft=128, hop_length=32, n_mels=20, htk=htk, ref_value=ref,
                                       amin=amin, top_db=top_db, dtype=dtype)
    got = layer(_t(x, dtype))
    want = _same_batching(np_power_to_db(np_mel(x, 8000, 128, 32, 20, htk=htk), ref, amin, top_db), x)
    assert got.dtype.name == dtype and got.shape == list(want.shape)
    np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=2e-3 if dtype == "float32" else 1e-9)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("n_mfcc,n_mels,center,top_db", [(13, 20, True, None), (20, 20, False, 60.0),
                                                         (1, 8, True, None)])
def test_mfcc(dtype, batched, n_mfcc, n_mels, center, top_db):
    x = _wave(batched)
    layer = features.MFCC(sr=8000, n_mfcc=n_mfcc, n_fft=128, hop_length=40, n_mels=n_mels, center=center,
                          top_db=top_db, dtype=dtype)
    got = layer(_t(x, dtype))
    want = _same_batching(np_mfcc(x, 8000, n_mfcc, 128, 40, n_mels, top_db=top_db, center=center), x)
    assert got.dtype.name == dtype and got.shape == list(want.shape)
    np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=1e-2 if dtype == "float32" else 1e-8)


def test_feature_defaults_and_state_dict_names():
    x = _t(_wave(True, n=3000), "float32")
    mel = features.MelSpectrogram()  # sr 22050, n_fft 2048, hop 512, 64 mels from 50 Hz
    assert mel(x).shape == [2, 64, 1 + 3000 // 512]
    assert features.LogMelSpectrogram()(x).shape == [2, 64, 1 + 3000 // 128]
    mfcc = features.MFCC()
    assert mfcc(x).shape == [2, 40, 1 + 3000 // 128]
    # buffers under Paddle's names, so Paddle state dicts load
    assert sorted(mfcc.state_dict()) == sorted(["dct_matrix", "_log_melspectrogram._melspectrogram.fbank_matrix",
                                                "_log_melspectrogram._melspectrogram._spectrogram.fft_window"])
    assert mfcc.dct_matrix.shape == [64, 40]


def test_feature_state_dict_round_trip_and_integer_waveform():
    a = features.MelSpectrogram(sr=8000, n_fft=64, hop_length=16, n_mels=10)
    b = features.MelSpectrogram(sr=8000, n_fft=64, hop_length=16, n_mels=10, window="hamming", f_min=0.0)
    b.set_state_dict(a.state_dict())  # the buffers are the whole state
    x = (_wave(True, n=300) * 1000).astype(np.int32)
    ya, yb = a(oar.to_tensor(x)), b(oar.to_tensor(x))
    assert ya.dtype == oar.float32  # an integer waveform is computed in the layer's dtype
    np.testing.assert_array_equal(ya.numpy(), yb.numpy())
    np.testing.assert_allclose(ya.numpy(), np_mel(x.astype(np.float64), 8000, 64, 16, 10), rtol=1e-4)


@pytest.mark.parametrize("cls,kw", [(features.MFCC, dict(n_mfcc=8, n_mels=12, top_db=60.0)),
                                    (features.LogMelSpectrogram, dict(n_mels=12, power=1.0))])
def test_features_under_to_static_match_eager(cls, kw):
    layer = cls(sr=8000, n_fft=64, hop_length=16, **kw)
    static = oar.jit.to_static(layer)
    for seed in (3, 4):
        x = _t(_wave(True, n=400, seed=seed), "float32")
        np.testing.assert_array_equal(static(x).numpy(), layer(x).numpy())


# ---------------------------------------------------------------- gradients

def _fd_check(layer, ref_fn, x, seed):
    """The gradient of sum(layer(x) * r) w.r.t. x against central
    differences of the NumPy reference."""
    r = np.random.default_rng(seed)
    xt = oar.to_tensor(x, dtype="float64", stop_gradient=False)
    out = layer(xt)
    w = r.standard_normal(out.shape)
    (out * oar.to_tensor(w)).sum().backward()
    got = xt.grad.numpy()
    eps = 1e-6
    fd = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        fd[i] = (np.sum(ref_fn(xp) * w) - np.sum(ref_fn(xm) * w)) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-6 * np.abs(fd).max())


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("center", [True, False])
def test_mfcc_gradient(batched, center):
    x = RNG.standard_normal((2, 48) if batched else 48)
    layer = features.MFCC(sr=800, n_mfcc=4, n_fft=16, hop_length=8, n_mels=6, f_min=0.0, center=center,
                          dtype="float64")
    _fd_check(layer, lambda v: _same_batching(np_mfcc(v, 800, 4, 16, 8, 6, f_min=0.0, center=center), v), x, 1)


@pytest.mark.parametrize("htk,power,top_db", [(False, 2.0, None), (True, 1.0, 200.0)])
def test_log_mel_gradient(htk, power, top_db):
    x = RNG.standard_normal((2, 40))
    layer = features.LogMelSpectrogram(sr=800, n_fft=16, hop_length=4, n_mels=5, f_min=0.0, htk=htk, power=power,
                                       top_db=top_db, dtype="float64")

    def ref(v):
        return np_power_to_db(np_mel(v, 800, 16, 4, 5, f_min=0.0, htk=htk, power=power), top_db=top_db)
    _fd_check(layer, ref, x, 2)


def test_spectrogram_power2_gradient_at_silence_is_zero():
    x = oar.zeros([40], dtype="float64")
    x.stop_gradient = False
    features.Spectrogram(n_fft=16, hop_length=4, power=2.0, dtype="float64")(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(40))


# ---------------------------------------------------------------- errors

ERRORS = [
    (lambda: AF.get_window("nope", 8), ValueError, "get_window] unknown window 'nope'"),
    (lambda: AF.get_window("kaiser", 8), ValueError, "get_window] the 'kaiser' window takes 1"),
    (lambda: AF.get_window(("hann", 1.0), 8), ValueError, "get_window] the 'hann' window takes 0"),
    (lambda: AF.get_window(3, 8), TypeError, "get_window] window must be"),
    (lambda: AF.get_window("hann", -1), ValueError, "get_window] win_length must be non-negative"),
    (lambda: AF.get_window("hann", 8, dtype="int32"), TypeError, "get_window] dtype must be a floating"),
    (lambda: AF.get_window(("exponential", 2.0), 8, fftbins=False), ValueError, "get_window] a symmetric"),
    (lambda: AF.compute_fbank_matrix(16000, 512, n_mels=0), ValueError, "compute_fbank_matrix] n_mels must be"),
    (lambda: AF.compute_fbank_matrix(16000, 512, f_max=9000.0), ValueError,
     "compute_fbank_matrix] f_max (9000.0) must not exceed"),
    (lambda: AF.compute_fbank_matrix(16000, 512, f_min=5000.0, f_max=4000.0), ValueError, "compute_fbank_matrix]"),
    (lambda: AF.compute_fbank_matrix(16000, 512, norm="l2"), ValueError, "compute_fbank_matrix] norm must be"),
    (lambda: AF.mel_frequencies(0), ValueError, "mel_frequencies] n_mels must be"),
    (lambda: AF.fft_frequencies(0, 512), ValueError, "fft_frequencies] sr must be positive"),
    (lambda: AF.power_to_db(oar.ones([3]), amin=0.0), ValueError, "power_to_db] amin must be positive"),
    (lambda: AF.power_to_db(oar.ones([3]), ref_value=-1.0), ValueError, "power_to_db] ref_value must be positive"),
    (lambda: AF.power_to_db(oar.ones([3]), top_db=-1.0), ValueError, "power_to_db] top_db must be non-negative"),
    (lambda: AF.power_to_db([1.0]), TypeError, "power_to_db] spect must be a Tensor"),
    (lambda: AF.create_dct(4, 8, norm="l2"), ValueError, "create_dct] norm must be"),
    (lambda: AF.create_dct(0, 8), ValueError, "create_dct] n_mfcc must be"),
    (lambda: AF.hz_to_mel("a"), TypeError, "hz_to_mel] freq must be a number"),
    (lambda: AF.mel_to_hz(oar.to_tensor([1 + 2j])), TypeError, "mel_to_hz] mel must be real"),
    (lambda: AF.create_dct(4, 8, dtype="int32"), TypeError, "create_dct] dtype must be a floating-point dtype"),
    (lambda: AF.compute_fbank_matrix(8000, 64, dtype="nope"), TypeError, "compute_fbank_matrix] dtype must be"),
    (lambda: AF.mel_frequencies(dtype="int64"), TypeError, "mel_frequencies] dtype must be"),
    (lambda: AF.fft_frequencies(8000, 64, dtype="bool"), TypeError, "fft_frequencies] dtype must be"),
    (lambda: features.Spectrogram(n_fft=64, center=False)(oar.ones([32])), ValueError,
     "features.Spectrogram] n_fft (64) must not exceed the waveform length (32)"),
    (lambda: features.Spectrogram(n_fft=64)(oar.ones([32])), ValueError, "features.Spectrogram] reflect padding"),
    (lambda: features.Spectrogram(n_fft=64)(oar.ones([2, 3, 100])), ValueError, "features.Spectrogram] x must be"),
    (lambda: features.Spectrogram(n_fft=64)(np.ones(100)), TypeError, "features.Spectrogram] x must be a Tensor"),
    (lambda: features.Spectrogram(window="nope"), ValueError, "features.Spectrogram] unknown window"),
    (lambda: features.Spectrogram(n_fft=64, win_length=65), ValueError, "features.Spectrogram] win_length (65)"),
    (lambda: features.Spectrogram(power=0.0), ValueError, "features.Spectrogram] power must be positive"),
    (lambda: features.Spectrogram(power="2"), TypeError, "features.Spectrogram] power must be a number"),
    (lambda: features.Spectrogram(pad_mode="edge"), ValueError, "features.Spectrogram] pad_mode must be"),
    (lambda: features.Spectrogram(hop_length=0), ValueError, "features.Spectrogram] hop_length must be at least 1"),
    (lambda: features.Spectrogram(dtype="int32"), TypeError, "features.Spectrogram] dtype must be"),
    (lambda: features.MFCC(dtype="nope"), TypeError, "features.MFCC] dtype must be"),
    (lambda: features.MelSpectrogram(sr="16k"), TypeError, "features.MelSpectrogram] sr must be a number"),
    (lambda: features.MelSpectrogram(n_mels=0), ValueError, "features.MelSpectrogram] n_mels must be"),
    (lambda: features.MelSpectrogram(sr=16000, f_max=8001.0), ValueError, "features.MelSpectrogram] f_max"),
    (lambda: features.MelSpectrogram(n_fft=64, center=False)(oar.ones([32])), ValueError,
     "features.MelSpectrogram] n_fft (64) must not exceed"),
    (lambda: features.LogMelSpectrogram(window="nope"), ValueError, "features.LogMelSpectrogram] unknown window"),
    (lambda: features.LogMelSpectrogram(amin=0.0), ValueError, "features.LogMelSpectrogram] amin must be"),
    (lambda: features.LogMelSpectrogram(n_fft=64, center=False)(oar.ones([32])), ValueError,
     "features.LogMelSpectrogram] n_fft (64)"),
    (lambda: features.MFCC(n_mfcc=65, n_mels=64), ValueError, "features.MFCC] n_mfcc (65) must not exceed n_mels"),
    (lambda: features.MFCC(n_mels=0), ValueError, "features.MFCC] n_mels must be at least 1"),
    (lambda: features.MFCC(sr=16000, f_max=9000.0), ValueError, "features.MFCC] f_max"),
    (lambda: features.MFCC(window="nope"), ValueError, "features.MFCC] unknown window"),
    (lambda: features.MFCC(n_fft=64, center=False)(oar.ones([32])), ValueError, "features.MFCC] n_fft (64)"),
]


@pytest.mark.parametrize("fn,exc,msg", ERRORS, ids=[e[2].split("]")[0] + f"-{i}" for i, e in enumerate(ERRORS)])
def test_errors(fn, exc, msg):
    with pytest.raises(exc) as info:
        fn()
    text = str(info.value)
    assert text.startswith("[oar.audio."), text
    assert msg in text, text
