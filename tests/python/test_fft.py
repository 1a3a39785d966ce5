"""oar.fft against numpy.fft (scipy.fft for the n-D Hermitian transforms):
every function, norm and length form, prime and odd sizes, large and
threaded shapes; derivatives up to the third against exact NumPy values;
eager against to_static; argument errors."""
import numpy as np
import pytest
import scipy.fft

import oar
from oar import fft as F

NORMS = ("backward", "ortho", "forward")
RNG = np.random.default_rng(2024)


def _x(shape, dtype):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def _close(got, want, dtype):
    tol = 1e-10 if dtype in (np.float64, np.complex128) else 2e-4
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got.numpy(), want, atol=tol * scale, rtol=tol)


# ---- forward values
ONE_D = [("fft", np.fft.fft, True), ("ifft", np.fft.ifft, True), ("rfft", np.fft.rfft, False),
         ("ihfft", np.fft.ihfft, False), ("irfft", np.fft.irfft, True), ("hfft", np.fft.hfft, True)]


@pytest.mark.parametrize("name,ref,takes_complex", ONE_D)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 1, 7, 16, 1009, 4099, 1000, 1536])
def test_1d_against_numpy(name, ref, takes_complex, norm, n):
    for dtype in (np.float32, np.float64) + ((np.complex64, np.complex128) if takes_complex else ()):
        x = _x((3, 600), dtype)
        got = getattr(F, name)(oar.to_tensor(x), n=n, norm=norm)
        _close(got, ref(x, n=n, norm=norm), dtype)


@pytest.mark.parametrize("name,ref,takes_complex", ONE_D)
def test_1d_axis_and_dtypes(name, ref, takes_complex):
    x = _x((5, 6, 7), np.float64)
    for axis in (0, 1, -1, -3):
        _close(getattr(F, name)(oar.to_tensor(x), axis=axis), ref(x, axis=axis), np.float64)
    out = getattr(F, name)(oar.to_tensor(x.astype(np.float32)))
    real_out = name in ("irfft", "hfft")
    assert out.dtype.name == ("float32" if real_out else "complex64")
    out = getattr(F, name)(oar.to_tensor(x))
    assert out.dtype.name == ("float64" if real_out else "complex128")


ND = [("fftn", np.fft.fftn, True), ("ifftn", np.fft.ifftn, True), ("rfftn", np.fft.rfftn, False),
      ("irfftn", np.fft.irfftn, True), ("hfftn", scipy.fft.hfftn, True), ("ihfftn", scipy.fft.ihfftn, False)]


@pytest.mark.parametrize("name,ref,takes_complex", ND)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s,axes", [(None, None), (None, [0, 2]), ([5, 9], [1, 2]), ([3, 4, 6], None),
                                    ([7, 2], [2, 0]), (None, [-1]), ([13], [1])])
def test_nd_against_reference(name, ref, takes_complex, norm, s, axes):
    for dtype in (np.float64, np.complex128) if takes_complex else (np.float64, np.float32):
        x = _x((4, 6, 5), dtype)
        got = getattr(F, name)(oar.to_tensor(x), s=s, axes=axes, norm=norm)
        ax = axes if axes is not None or s is None else list(range(3 - len(s), 3))
        _close(got, ref(x, s=s, axes=ax, norm=norm), dtype)


TWO_D = [("fft2", np.fft.fftn), ("ifft2", np.fft.ifftn), ("rfft2", np.fft.rfftn), ("irfft2", np.fft.irfftn),
         ("hfft2", scipy.fft.hfftn), ("ihfft2", scipy.fft.ihfftn)]


@pytest.mark.parametrize("name,ref", TWO_D)
@pytest.mark.parametrize("norm", NORMS)
def test_2d_against_reference(name, ref, norm):
    x = _x((3, 8, 11), np.float64)
    if name in ("fft2", "ifft2", "irfft2", "hfft2"):
        x = x + 1j * _x((3, 8, 11), np.float64)
    _close(getattr(F, name)(oar.to_tensor(x), norm=norm), ref(x, axes=(-2, -1), norm=norm), np.float64)
    _close(getattr(F, name)(oar.to_tensor(x), s=[5, 6], axes=[0, 2], norm=norm),
           ref(x, s=[5, 6], axes=(0, 2), norm=norm), np.float64)


def test_large_and_threaded_shapes():
    # Batches above the threading threshold, along the last, a middle and the first axis.
    for shape, axes in (((256, 1024), [-1]), ((64, 96, 40), [1]), ((300, 7, 33), [0]), ((64, 64, 64), None),
                        ((512, 512), None)):
        for dtype in (np.complex64, np.complex128):
            x = _x(shape, dtype)
            _close(F.fftn(oar.to_tensor(x), axes=axes), np.fft.fftn(x, axes=axes), dtype)
        x = _x(shape, np.float64)
        _close(F.rfftn(oar.to_tensor(x), axes=axes), np.fft.rfftn(x, axes=axes), np.float64)
        y = np.fft.rfftn(x, axes=axes)
        s = [shape[a] for a in (axes if axes is not None else range(len(shape)))]
        _close(F.irfftn(oar.to_tensor(y), s=s, axes=axes), x, np.float64)


def test_round_trips_and_special_inputs():
    x = _x((4, 1009), np.float64)
    t = oar.to_tensor(x)
    _close(F.irfft(F.rfft(t), n=1009), x, np.float64)
    _close(F.ifft(F.fft(t)), x.astype(complex), np.float64)
    _close(F.hfft(F.ihfft(t), n=1009), x, np.float64)
    # Integer inputs compute in the default float dtype.
    xi = np.arange(12).reshape(3, 4)
    out = F.fft(oar.to_tensor(xi))
    assert out.dtype.name == "complex64"
    _close(out, np.fft.fft(xi), np.float32)
    # The imaginary parts of the zero and Nyquist bins do not reach a real result.
    c = _x((6,), np.complex128)
    _close(F.irfft(oar.to_tensor(c)), np.fft.irfft(c), np.float64)
    # Non-contiguous inputs.
    base = _x((6, 8), np.complex128)
    _close(F.fft(oar.to_tensor(base).transpose([1, 0]), axis=0), np.fft.fft(base.T, axis=0), np.float64)


def test_freqs_and_shifts():
    for n in (1, 2, 7, 8):
        for d in (1.0, 0.1):
            _close(F.fftfreq(n, d), np.fft.fftfreq(n, d), np.float32)
            _close(F.rfftfreq(n, d, dtype="float64"), np.fft.rfftfreq(n, d), np.float64)
    assert F.fftfreq(4, dtype="float64").dtype.name == "float64"
    x = RNG.standard_normal((4, 5, 6))
    for axes in (None, 0, [1, 2], (-1,)):
        np.testing.assert_array_equal(F.fftshift(oar.to_tensor(x), axes).numpy(), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(F.ifftshift(oar.to_tensor(x), axes).numpy(), np.fft.ifftshift(x, axes))


# ---- derivatives up to the third, against exact values
#
# L(x) = Re sum(conj(v) * T(c * x^3)) with x real and T linear is
# sum_i u_i x_i^3 with u_i = Re sum_k conj(v_k) T(c e_i)_k, computed by NumPy
# from the columns T(c e_i). Then grad L = 3 u x^2; the gradient of
# <grad L, w1> is 6 u x w1; that of <that, w2> is 6 u w1 w2. With c complex
# the transform's complex-input gradient is used too.

HIGHER = [("fft", np.fft.fft, {}, 6), ("ifft", np.fft.ifft, {"norm": "ortho"}, 5),
          ("rfft", np.fft.rfft, {}, 7), ("rfft", np.fft.rfft, {"n": 10, "norm": "forward"}, 7),
          ("irfft", np.fft.irfft, {}, 5), ("irfft", np.fft.irfft, {"n": 9}, 5),
          ("hfft", np.fft.hfft, {"norm": "ortho"}, 4), ("hfft", np.fft.hfft, {"n": 7}, 4),
          ("ihfft", np.fft.ihfft, {}, 6)]


# (rfft and ihfft take real inputs only)
CASES = [h + (cc,) for h in HIGHER for cc in (False, True) if not (cc and h[0] in ("rfft", "ihfft"))]


@pytest.mark.parametrize("name,ref,kw,n,complex_c", CASES, ids=[f"{h[0]}-{h[2]}-{h[4]}" for h in CASES])
def test_first_second_third_derivatives(name, ref, kw, n, complex_c):
    c = 0.7 - 0.4j if complex_c else 1.0
    x0 = RNG.standard_normal(n)
    cols = ref(c * np.eye(n), axis=0, **kw)  # column i is T(c e_i)
    v = RNG.standard_normal(cols.shape[0]) + (1j * RNG.standard_normal(cols.shape[0])
                                              if np.iscomplexobj(cols) else 0)
    u = np.real(np.conj(v) @ cols)
    w1, w2 = RNG.standard_normal(n), RNG.standard_normal(n)

    x = oar.to_tensor(x0)
    x.stop_gradient = False
    z = x * x * x
    if complex_c:
        z = z.astype("complex128") * oar.to_tensor(np.array(c))
    y = getattr(F, name)(z, **kw)
    vt = oar.to_tensor(np.conj(v) if y.dtype.is_complex else v)
    loss = oar.sum(oar.real(y * vt)) if y.dtype.is_complex else oar.sum(y * vt)
    (g1,) = oar.grad([loss], [x], create_graph=True)
    np.testing.assert_allclose(g1.numpy(), 3 * u * x0 ** 2, atol=1e-10, rtol=1e-10)
    (g2,) = oar.grad([oar.sum(g1 * oar.to_tensor(w1))], [x], create_graph=True)
    np.testing.assert_allclose(g2.numpy(), 6 * u * x0 * w1, atol=1e-10, rtol=1e-10)
    (g3,) = oar.grad([oar.sum(g2 * oar.to_tensor(w2))], [x])
    np.testing.assert_allclose(g3.numpy(), 6 * u * w1 * w2, atol=1e-10, rtol=1e-10)


def test_nd_gradients_against_finite_differences():
    # Multi-axis r2c / c2r with padding and cropping: the gradient of a
    # quadratic loss against central differences.
    x0 = RNG.standard_normal((3, 4, 5))

    def loss_np(a, s):
        return float(np.sum(np.abs(np.fft.irfftn(np.fft.rfftn(a, s=s, axes=(0, 2)) * 1.5, s=(4, 6), axes=(0, 2)))
                            ** 2))

    for s in ((3, 5), (4, 7), (2, 4)):
        x = oar.to_tensor(x0)
        x.stop_gradient = False
        y = F.irfftn(F.rfftn(x, s=s, axes=(0, 2)) * 1.5, s=(4, 6), axes=(0, 2))
        (g,) = oar.grad([oar.sum(y * y)], [x])
        fd = np.zeros_like(x0)
        for i in np.ndindex(x0.shape):
            p, m = x0.copy(), x0.copy()
            p[i] += 1e-6
            m[i] -= 1e-6
            fd[i] = (loss_np(p, s) - loss_np(m, s)) / 2e-6
        np.testing.assert_allclose(g.numpy(), fd, atol=1e-6, rtol=1e-6)


# ---- eager against to_static
def _pipeline(x):
    spec = F.rfft2(x, norm="ortho")
    back = F.irfft2(spec * spec, s=[x.shape[-2], x.shape[-1]])
    h = F.hfft(F.fft(x, n=9), n=12, axis=0)
    return back + F.fftshift(x), F.ifftn(F.fftn(x, axes=[0])).real(), h


def test_to_static_matches_eager():
    x0 = RNG.standard_normal((6, 10))
    x = oar.to_tensor(x0)
    eager = _pipeline(x)
    static = oar.jit.to_static(_pipeline)(oar.to_tensor(x0))
    for a, b in zip(eager, static):
        np.testing.assert_allclose(b.numpy(), a.numpy(), atol=1e-12, rtol=1e-12)


def test_to_static_gradients_match_eager():
    def loss(x):
        y = F.irfft(F.rfft(x * x), n=x.shape[-1])
        return oar.sum(y * y * x)

    x0 = RNG.standard_normal((3, 7))
    xe = oar.to_tensor(x0)
    xe.stop_gradient = False
    le = loss(xe)
    (ge,) = oar.grad([le], [xe])
    xs = oar.to_tensor(x0)
    xs.stop_gradient = False
    ls = oar.jit.to_static(loss)(xs)
    ls.backward()
    np.testing.assert_allclose(float(ls), float(le), rtol=1e-12)
    np.testing.assert_allclose(xs.grad.numpy(), ge.numpy(), atol=1e-12, rtol=1e-10)


# ---- errors
@pytest.mark.parametrize("call,exc,prefix", [
    (lambda: F.fft(oar.ones([4]), n=0), ValueError, "[oar.fft.fft]"),
    (lambda: F.fft(oar.ones([4]), n=-3), ValueError, "[oar.fft.fft]"),
    (lambda: F.fft(oar.ones([4]), norm="Ortho"), ValueError, "[oar.fft.fft]"),
    (lambda: F.fft(oar.ones([4]), axis=1), IndexError, "[oar.fft.fft]"),
    (lambda: F.fft(oar.ones([4]), axis=0.5), TypeError, "[oar.fft.fft]"),
    (lambda: F.fft(np.ones(4)), TypeError, "[oar.fft.fft]"),
    (lambda: F.fft(oar.ones([4], dtype="bfloat16")), TypeError, "[oar.fft.fft]"),
    (lambda: F.rfft(oar.ones([4], dtype="complex128")), TypeError, "[oar.fft.rfft]"),
    (lambda: F.irfft(oar.ones([1], dtype="complex64")), ValueError, "[oar.fft.irfft]"),
    (lambda: F.fft2(oar.ones([4])), ValueError, "[oar.fft.fft2]"),
    (lambda: F.fft2(oar.ones([4, 4]), axes=[0]), ValueError, "[oar.fft.fft2]"),
    (lambda: F.fftn(oar.ones([4, 4]), s=[2, 2, 2]), ValueError, "[oar.fft.fftn]"),
    (lambda: F.fftn(oar.ones([4, 4]), s=[2], axes=[0, 1]), ValueError, "[oar.fft.fftn]"),
    (lambda: F.fftn(oar.ones([4, 4]), axes=[1, -1]), ValueError, "[oar.fft.fftn]"),
    (lambda: F.fftn(oar.ones([4, 4]), axes=[]), ValueError, "[oar.fft.fftn]"),
    (lambda: F.fftn(oar.ones([0, 4])), ValueError, "[oar.fft.fftn]"),
    (lambda: F.rfftn(oar.ones([4, 4]), s=4), TypeError, "[oar.fft.rfftn]"),
    (lambda: F.fftfreq(0), ValueError, "[oar.fft.fftfreq]"),
    (lambda: F.rfftfreq(4, d="x"), TypeError, "[oar.fft.rfftfreq]"),
    (lambda: F.fftshift(oar.ones([3]), axes=[3]), IndexError, "[oar.fft.fftshift]"),
])
def test_errors(call, exc, prefix):
    with pytest.raises(exc) as e:
        call()
    assert str(e.value).startswith(prefix), str(e.value)


def test_module_forms():
    import oar.fft as fft_mod
    assert fft_mod.fft is oar.fft.fft
    assert sorted(fft_mod.__all__) == sorted([
        "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
        "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"])


def test_out_device_and_requires_grad_arguments():
    x = _x((3, 8), np.float64)
    out = oar.zeros([3, 5], dtype="complex128")
    res = F.rfft(oar.to_tensor(x), out=out)
    assert res is out
    _close(out, np.fft.rfft(x), np.float64)
    out2 = oar.zeros([3, 8])
    F.irfftn(oar.to_tensor(np.fft.rfftn(x)), s=[3, 8], out=out2)
    np.testing.assert_allclose(out2.numpy(), x, atol=1e-6)
    f = F.fftfreq(6, 0.5, dtype="float64", device="cpu", requires_grad=True)
    assert not f.stop_gradient and "cpu" in str(f.place).lower()
    np.testing.assert_allclose(f.numpy(), np.fft.fftfreq(6, 0.5))
    buf = oar.zeros([4], dtype="float64")
    assert F.rfftfreq(6, out=buf) is buf
    np.testing.assert_allclose(buf.numpy(), np.fft.rfftfreq(6))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_power_of_two_strided_axes_match_numpy(dtype):
    # Axes whose lines have a power-of-two stride of 64 or more run in cache panels.
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((4, 128, 64)) + 1j * rng.standard_normal((4, 128, 64))).astype(dtype)
    tol = 1e-4 if dtype == "complex64" else 1e-10
    for axes in [(0,), (1,), (0, 1), (0, 1, 2)]:
        for norm in ("backward", "ortho", "forward"):
            got = oar.fft.fftn(oar.to_tensor(a), axes=axes, norm=norm).numpy()
            np.testing.assert_allclose(got, np.fft.fftn(a.astype(np.complex128), axes=axes, norm=norm),
                                       rtol=tol, atol=tol * np.sqrt(a.size))
            back = oar.fft.ifftn(oar.to_tensor(a), axes=axes, norm=norm).numpy()
            np.testing.assert_allclose(back, np.fft.ifftn(a.astype(np.complex128), axes=axes, norm=norm),
                                       rtol=tol, atol=tol * np.sqrt(a.size))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_threaded_multidimensional_r2c_matches_numpy(dtype):
    # Threaded r2c over the trailing axes takes one multi-dimensional plan.
    rng = np.random.default_rng(8)
    before = oar.get_num_threads()
    oar.set_num_threads(2)
    try:
        tol = 1e-4 if dtype == "float32" else 1e-10
        for shape, axes in [((64, 64, 64), (0, 1, 2)), ((3, 100, 250), (1, 2)), ((250, 300), (0, 1))]:
            a = rng.standard_normal(shape).astype(dtype)
            for norm in ("backward", "ortho", "forward"):
                want = np.fft.rfftn(a.astype(np.float64), axes=axes, norm=norm)
                got = oar.fft.rfftn(oar.to_tensor(a), axes=axes, norm=norm).numpy()
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
                inv = oar.fft.ifftn(oar.to_tensor(a), axes=axes, norm=norm).numpy()  # the exp(+i) side
                np.testing.assert_allclose(inv, np.fft.ifftn(a.astype(np.float64), axes=axes, norm=norm),
                                           rtol=tol, atol=tol * np.abs(want).max() / a.size)
    finally:
        oar.set_num_threads(before)
