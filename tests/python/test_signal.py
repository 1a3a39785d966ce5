"""oar.signal.stft / istft against a NumPy short-time transform written
here, round trips, gradients against finite differences, and errors."""
import numpy as np
import pytest

import oar
from oar import signal

RNG = np.random.default_rng(77)


def np_stft(x, n_fft, hop=None, win_length=None, window=None, center=True, pad_mode="reflect", normalized=False,
            onesided=True):
    """The reference: frame, window, transform each frame (x is [B, T])."""
    hop = hop or n_fft // 4
    win_length = win_length or n_fft
    w = np.ones(win_length) if window is None else window
    left = (n_fft - win_length) // 2
    w = np.concatenate([np.zeros(left), w, np.zeros(n_fft - win_length - left)])
    if center:
        x = np.pad(x, [(0, 0), (n_fft // 2, n_fft // 2)], mode=pad_mode)
    frames = 1 + (x.shape[-1] - n_fft) // hop
    out = np.stack([x[:, f * hop:f * hop + n_fft] * w for f in range(frames)], axis=1)  # [B, frames, n_fft]
    spec = np.fft.fft(out, axis=-1)
    if onesided:
        spec = spec[..., :n_fft // 2 + 1]
    if normalized:
        spec = spec / np.sqrt(n_fft)
    return np.swapaxes(spec, 1, 2)


CASES = [dict(n_fft=8), dict(n_fft=16, hop=4, win_length=10, window="hann"), dict(n_fft=9, hop=3, center=False),
         dict(n_fft=12, hop=5, pad_mode="constant", normalized=True), dict(n_fft=8, onesided=False),
         dict(n_fft=7, hop=2, win_length=5, window="hamming", normalized=True)]


def _window(kind, length):
    if kind == "hann":
        return np.hanning(length)
    if kind == "hamming":
        return np.hamming(length)
    return None


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
@pytest.mark.parametrize("batched", [False, True])
def test_stft_against_numpy(case, batched):
    case = dict(case)
    w = _window(case.pop("window", None), case.get("win_length") or case["n_fft"])
    x = RNG.standard_normal((3, 50) if batched else (50,))
    want = np_stft(np.atleast_2d(x), window=w, **case)
    kw = {("hop_length" if k == "hop" else k): v for k, v in case.items()}
    got = signal.stft(oar.to_tensor(x), window=None if w is None else oar.to_tensor(w), **kw)
    np.testing.assert_allclose(got.numpy(), want if batched else want[0], atol=1e-12, rtol=1e-12)
    got32 = signal.stft(oar.to_tensor(x.astype(np.float32)), window=None if w is None else
                        oar.to_tensor(w.astype(np.float32)), **kw)
    assert got32.dtype.name == "complex64"
    np.testing.assert_allclose(got32.numpy(), want if batched else want[0], atol=1e-4, rtol=1e-4)


def test_stft_complex_input():
    x = RNG.standard_normal((2, 40)) + 1j * RNG.standard_normal((2, 40))
    want = np_stft(x, 8, 3, onesided=False)
    got = signal.stft(oar.to_tensor(x), 8, hop_length=3, onesided=False)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    # onesided defaults to False for a complex x (True for a real one).
    np.testing.assert_allclose(signal.stft(oar.to_tensor(x), 8, hop_length=3).numpy(), want, atol=1e-12)
    assert signal.stft(oar.to_tensor(x.real), 8).shape == [2, 5, 21]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_round_trip(case):
    case = dict(case)
    w = _window(case.pop("window", None), case.get("win_length") or case["n_fft"])
    kw = {("hop_length" if k == "hop" else k): v for k, v in case.items() if k != "pad_mode"}
    x = RNG.standard_normal((2, 64))
    spec = signal.stft(oar.to_tensor(x), window=None if w is None else oar.to_tensor(w), **kw,
                       pad_mode=case.get("pad_mode", "reflect"))
    n_fft, hop = kw["n_fft"], kw.get("hop_length") or kw["n_fft"] // 4
    y = signal.istft(spec, window=None if w is None else oar.to_tensor(w), length=64, **kw)
    # Without centring, the samples after the last whole frame are not covered.
    covered = 64 if kw.get("center", True) else n_fft + hop * ((64 - n_fft) // hop)
    np.testing.assert_allclose(y.numpy()[:, :covered], x[:, :covered], atol=1e-10)


def test_round_trip_complex_and_length():
    x = RNG.standard_normal(45) + 1j * RNG.standard_normal(45)
    spec = signal.stft(oar.to_tensor(x), 10, hop_length=2, onesided=False)
    y = signal.istft(spec, 10, hop_length=2, onesided=False, return_complex=True, length=45)
    assert y.dtype.name == "complex128"
    np.testing.assert_allclose(y.numpy(), x, atol=1e-10)
    # A longer length reads on into the centring pad (here the reflection
    # xr[38], xr[37], ...) as far as the frames reach, and no further;
    # no length gives the centred signal.
    xr = RNG.standard_normal(40)
    spec = signal.stft(oar.to_tensor(xr), 8)
    y = signal.istft(spec, 8, length=50)
    assert y.shape == [44]
    np.testing.assert_allclose(y.numpy(), np.concatenate([xr, xr[38:34:-1]]), atol=1e-10)
    assert signal.istft(spec, 8).shape == [40]


def _fd(f, x0, eps=1e-6):
    g = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        p, m = x0.copy(), x0.copy()
        p[i] += eps
        m[i] -= eps
        g[i] = (f(p) - f(m)) / (2 * eps)
    return g


def test_stft_gradient():
    x0 = RNG.standard_normal(24)
    w = np.hanning(8)
    v = RNG.standard_normal((5, 7)) + 1j * RNG.standard_normal((5, 7))

    def loss_np(a):
        return float(np.sum(np.real(np.conj(v) * np_stft(a[None], 8, 4, window=w)[0])))

    x = oar.to_tensor(x0)
    x.stop_gradient = False
    y = signal.stft(x, 8, hop_length=4, window=oar.to_tensor(w))
    (g,) = oar.grad([oar.sum(oar.real(y * oar.to_tensor(np.conj(v))))], [x])
    np.testing.assert_allclose(g.numpy(), _fd(loss_np, x0), atol=1e-6)


def test_istft_gradient():
    spec0 = signal.stft(oar.to_tensor(RNG.standard_normal(20)), 8, hop_length=2).numpy()
    r = RNG.standard_normal(20)

    def loss(s):
        return oar.sum(signal.istft(s, 8, hop_length=2, length=20) * oar.to_tensor(r))

    s = oar.to_tensor(spec0)
    s.stop_gradient = False
    (g,) = oar.grad([loss(s)], [s])
    # Central differences over the real and imaginary parts of each bin.
    fd = np.zeros_like(spec0)
    for i in np.ndindex(spec0.shape):
        for step in (1.0, 1j):
            p, m = spec0.copy(), spec0.copy()
            p[i] += 1e-6 * step
            m[i] -= 1e-6 * step
            fd[i] += (float(loss(oar.to_tensor(p))) - float(loss(oar.to_tensor(m)))) / 2e-6 * step
    np.testing.assert_allclose(g.numpy(), fd, atol=1e-6)


@pytest.mark.parametrize("call,exc", [
    (lambda: signal.stft(oar.ones([2, 2, 8]), 4), ValueError),
    (lambda: signal.stft(oar.ones([16]), 0), ValueError),
    (lambda: signal.stft(oar.ones([16]), 4, win_length=5), ValueError),
    (lambda: signal.stft(oar.ones([16]), 4, window=oar.ones([3])), ValueError),
    (lambda: signal.stft(oar.ones([16]), 4, pad_mode="wrap"), ValueError),
    (lambda: signal.stft(oar.ones([16], dtype="complex64"), 4, onesided=True), ValueError),
    (lambda: signal.stft(oar.ones([4]), 16, center=False), ValueError),
    (lambda: signal.stft(np.ones(16), 4), TypeError),
    (lambda: signal.istft(oar.ones([5, 4]), 8), TypeError),
    (lambda: signal.istft(oar.ones([4, 4], dtype="complex64"), 8), ValueError),
    (lambda: signal.istft(oar.ones([5, 4], dtype="complex64"), 8, return_complex=True), ValueError),
    (lambda: signal.istft(oar.ones([5, 4], dtype="complex64"), 8, hop_length=8, win_length=4), ValueError),
    (lambda: signal.istft(oar.ones([5, 4], dtype="complex64"), 8, window=oar.zeros([8])), ValueError),
])
def test_errors(call, exc):
    with pytest.raises(exc) as e:
        call()
    assert str(e.value).startswith("[oar.signal."), str(e.value)


def test_to_static_matches_eager():
    def f(x, w):
        s = signal.stft(x, 8, hop_length=2, window=w)
        return signal.istft(s, 8, hop_length=2, window=w, length=30), s

    x, w = oar.to_tensor(RNG.standard_normal((2, 30))), oar.to_tensor(np.hanning(8) + 0.1)
    eager = f(x, w)
    static = oar.jit.to_static(f)(x, w)
    for a, b in zip(eager, static):
        np.testing.assert_allclose(b.numpy(), a.numpy(), atol=1e-12)
    np.testing.assert_allclose(eager[0].numpy(), x.numpy(), atol=1e-10)


def test_tensor_methods():
    x = oar.to_tensor(RNG.standard_normal(32))
    s = x.stft(8)
    np.testing.assert_allclose(s.numpy(), signal.stft(x, 8).numpy())
    np.testing.assert_allclose(s.istft(8, length=32).numpy(), x.numpy(), atol=1e-10)
