"""Reductions and scans (src/ops/reduce.toml) against NumPy, finite differences and error inputs."""
import numpy as np
import pytest

import oar

RNG = np.random.default_rng(0)
FLOATS = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}


def t(a, grad=False):
    x = oar.to_tensor(np.asarray(a))
    x.stop_gradient = not grad
    return x


def check_grad(f, a, eps=1e-6, rtol=1e-6, atol=1e-7):
    """Gradient of sum(f(x) * w) by backward against central differences (float64)."""
    a = np.asarray(a, dtype=np.float64)
    y0 = f(t(a)).numpy()
    w = RNG.standard_normal(y0.shape)

    def loss(v):
        return float(np.sum(f(t(v)).numpy() * w))

    x = t(a, grad=True)
    (f(x) * t(w)).sum().backward()
    got = x.grad.numpy()
    num = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        p, m = a.copy(), a.copy()
        p[i] += eps
        m[i] -= eps
        num[i] = (loss(p) - loss(m)) / (2 * eps)
    np.testing.assert_allclose(got, num, rtol=rtol, atol=atol)


AXES = [None, 0, -1, 1, [0, 2], (-1, 0)]


# ---- max / min

@pytest.mark.parametrize("dt", FLOATS + [np.int32, np.int64])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_forward(dt, axis, keepdim):
    a = (RNG.standard_normal((3, 4, 5)) * 10).astype(dt)
    ax = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    np.testing.assert_array_equal(oar.max(t(a), axis, keepdim).numpy(), np.max(a, axis=ax, keepdims=keepdim))
    np.testing.assert_array_equal(oar.min(t(a), axis, keepdim).numpy(), np.min(a, axis=ax, keepdims=keepdim))
    np.testing.assert_array_equal(t(a).max(axis=axis, keepdim=keepdim).numpy(), np.max(a, axis=ax, keepdims=keepdim))


def test_max_min_grad_and_ties():
    check_grad(lambda x: oar.max(x, axis=1), RNG.standard_normal((3, 4)))
    check_grad(lambda x: oar.min(x, axis=[0, 1], keepdim=True), RNG.standard_normal((3, 4)))
    x = t([1.0, 3.0, 3.0], grad=True)
    oar.max(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, 0.5, 0.5])


def test_max_noncontiguous_and_0d():
    a = RNG.standard_normal((4, 5))
    x = t(a).transpose([1, 0])
    np.testing.assert_array_equal(oar.max(x, axis=1).numpy(), a.T.max(axis=1))
    assert oar.max(t(np.float64(2.5))).item() == 2.5


# ---- argmax / argmin

@pytest.mark.parametrize("dt", FLOATS + [np.int32, np.int64])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin(dt, axis, keepdim):
    a = RNG.integers(-5, 5, (4, 6)).astype(dt)  # with ties: the first one wins
    for f, ref in ((oar.argmax, np.argmax), (oar.argmin, np.argmin)):
        got = f(t(a), axis=axis, keepdim=keepdim)
        want = ref(a, axis=axis, keepdims=keepdim)
        if axis is None and not keepdim:
            assert got.shape == []
        assert got.dtype == oar.int64
        np.testing.assert_array_equal(got.numpy(), want)
    assert t(a).argmax(axis=axis, dtype="int32").dtype == oar.int32


def test_argmax_nan_and_noncontiguous():
    a = np.array([[1.0, np.nan, 3.0, np.nan]])
    assert oar.argmax(t(a)).item() == 1 and oar.argmin(t(a)).item() == 1
    b = RNG.standard_normal((5, 3))
    np.testing.assert_array_equal(oar.argmax(t(b).transpose([1, 0]), axis=1).numpy(), np.argmax(b.T, axis=1))


# ---- all / any / count_nonzero

@pytest.mark.parametrize("dt", [np.bool_, np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_all_any_count(dt, axis, keepdim):
    a = (RNG.integers(0, 4, (3, 4, 5)) > 0).astype(dt)
    a[0, 0, :] = 1
    ax = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    np.testing.assert_array_equal(oar.all(t(a), axis, keepdim).numpy(), np.all(a, axis=ax, keepdims=keepdim))
    np.testing.assert_array_equal(oar.any(t(a), axis, keepdim).numpy(), np.any(a, axis=ax, keepdims=keepdim))
    got = oar.count_nonzero(t(a), axis, keepdim)
    assert got.dtype == oar.int64
    np.testing.assert_array_equal(got.numpy(), np.count_nonzero(a, axis=ax, keepdims=keepdim))


def test_all_any_empty():
    e = np.zeros((0, 3), dtype=bool)
    assert oar.all(t(e)).item() is True and oar.any(t(e)).item() is False
    np.testing.assert_array_equal(oar.all(t(e), axis=0).numpy(), [True, True, True])
    assert t(np.array([True, False])).any().item() is True


# ---- var / std

@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("unbiased", [True, False])
def test_var_std(dt, axis, keepdim, unbiased):
    a = RNG.standard_normal((3, 4, 5)).astype(dt)
    ax = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    dd = 1 if unbiased else 0
    np.testing.assert_allclose(oar.var(t(a), axis, unbiased, keepdim).numpy(),
                               np.var(a.astype(np.float64), axis=ax, ddof=dd, keepdims=keepdim), **TOL[dt])
    np.testing.assert_allclose(t(a).std(axis=axis, unbiased=unbiased, keepdim=keepdim).numpy(),
                               np.std(a.astype(np.float64), axis=ax, ddof=dd, keepdims=keepdim), **TOL[dt])


def test_var_std_int_grad_and_degenerate():
    a = np.array([[1, 2, 4], [3, 3, 9]])
    r = oar.var(t(a), axis=1)
    assert r.dtype == oar.float32
    np.testing.assert_allclose(r.numpy(), np.var(a, axis=1, ddof=1), rtol=1e-6)
    assert np.isnan(oar.var(t([1.0])).item())
    check_grad(lambda x: oar.var(x, axis=0), RNG.standard_normal((4, 3)))
    check_grad(lambda x: oar.std(x, axis=[0, 1], unbiased=False), RNG.standard_normal((4, 3)))


# ---- median

@pytest.mark.parametrize("dt", FLOATS + [np.int32, np.int64])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("n", [5, 6])
def test_median(dt, axis, keepdim, n):
    a = (RNG.standard_normal((4, n)) * 10).astype(dt)
    got = oar.median(t(a), axis=axis, keepdim=keepdim)
    want = np.median(a.astype(np.float64), axis=axis, keepdims=keepdim)
    assert got.dtype == (oar.float64 if dt == np.float64 else oar.float32)
    assert list(got.shape) == list(np.shape(want))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_median_min_mode():
    a = RNG.permutation(24).reshape(4, 6).astype(np.float64)
    v, i = oar.median(t(a), axis=1, mode="min")
    s = np.sort(a, axis=1)
    np.testing.assert_array_equal(v.numpy(), s[:, 2])
    np.testing.assert_array_equal(np.take_along_axis(a, i.numpy()[:, None], 1)[:, 0], s[:, 2])
    assert oar.median(t(a), mode="min").item() == np.sort(a.reshape(-1))[11]
    with pytest.raises(ValueError, match=r"^\[oar.median\]"):
        oar.median(t(a), mode="max")


def test_median_nan_grad_noncontiguous():
    a = np.array([[1.0, np.nan, 3.0], [2.0, 0.0, 5.0]])
    got = oar.median(t(a), axis=1).numpy()
    assert np.isnan(got[0]) and got[1] == 2.0
    b = RNG.standard_normal((5, 4))
    np.testing.assert_allclose(oar.median(t(b).transpose([1, 0]), axis=1).numpy(), np.median(b.T, axis=1))
    check_grad(lambda x: oar.median(x, axis=1), RNG.standard_normal((3, 4)))
    check_grad(lambda x: oar.median(x, axis=0, keepdim=True), RNG.standard_normal((5, 2)))
    check_grad(lambda x: oar.median(x), RNG.standard_normal((3, 3)))


# ---- logsumexp

def np_logsumexp(a, axis, keepdims):
    m = np.max(a, axis=axis, keepdims=True)
    r = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp(dt, axis, keepdim):
    a = (RNG.standard_normal((3, 4, 5)) * 300).astype(dt)  # exp would overflow unshifted
    ax = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    np.testing.assert_allclose(oar.logsumexp(t(a), axis, keepdim).numpy(),
                               np_logsumexp(a.astype(np.float64), ax, keepdim), **TOL[dt])


def test_logsumexp_inf_grad():
    a = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [0.0, 0.0]])
    np.testing.assert_allclose(oar.logsumexp(t(a), axis=1).numpy(), [-np.inf, np.inf, np.log(2)])
    check_grad(lambda x: oar.logsumexp(x, axis=-1), RNG.standard_normal((3, 4)))
    check_grad(lambda x: x.logsumexp(), RNG.standard_normal((2, 3)))


# ---- norm

@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("p", [None, "fro", 2, 1, np.inf, -np.inf, 0, 3, 0.5])
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_vector_norm(dt, p, axis, keepdim):
    a = RNG.standard_normal((4, 5)).astype(dt)
    a[0, 0] = 0
    pp = 2 if p in (None, "fro") else p
    flat = a.astype(np.float64) if axis is not None else a.astype(np.float64).reshape(-1)
    want = np.linalg.norm(flat, ord=pp, axis=0 if axis is None else axis, keepdims=keepdim and axis is not None)
    if axis is None and keepdim:
        want = np.reshape(want, (1, 1))
    got = oar.norm(t(a), p=p, axis=axis, keepdim=keepdim)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if dt == np.float32 else 1e-12)


@pytest.mark.parametrize("p", [None, "fro", 1, -1, np.inf, -np.inf])
@pytest.mark.parametrize("axis", [[0, 1], [-1, -2], (1, 2)])
def test_matrix_norm(p, axis):
    a = RNG.standard_normal((3, 4, 5))
    ax = tuple(axis)
    if ax == (1, 2):
        want = np.linalg.norm(a, ord=p, axis=ax)
    else:
        want = np.linalg.norm(a if axis == [0, 1] else a, ord=p, axis=ax)
    np.testing.assert_allclose(oar.norm(t(a), p=p, axis=axis).numpy(), want, rtol=1e-12)


def test_norm_grad_and_errors():
    a = RNG.standard_normal((3, 4)) + 0.1
    check_grad(lambda x: oar.norm(x), a)
    check_grad(lambda x: oar.norm(x, p=1, axis=1), a)
    check_grad(lambda x: oar.norm(x, p=3, axis=0), a)
    check_grad(lambda x: oar.norm(x, p=np.inf, axis=[0, 1]), a)
    check_grad(lambda x: x.norm(p="fro", axis=[0, 1]), a)
    with pytest.raises(ValueError, match=r"^\[oar.norm\]"):
        oar.norm(t(a), p="bad")
    with pytest.raises(ValueError, match=r"^\[oar.norm\]"):
        oar.norm(t(a), p=3, axis=[0, 1])
    with pytest.raises(ValueError, match=r"^\[oar.norm\]"):
        oar.norm(t(np.zeros((2, 2, 2))), axis=[0, 1, 2])


# ---- cumsum / cumprod

@pytest.mark.parametrize("dt", FLOATS + [np.int32, np.int64])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, -3])
def test_cumsum_cumprod(dt, axis):
    a = RNG.integers(-3, 4, (3, 4, 2)).astype(dt)
    got = oar.cumsum(t(a), axis=axis)
    assert got.dtype == t(a).dtype
    np.testing.assert_allclose(got.numpy(), np.cumsum(a, axis=axis).astype(dt), rtol=1e-6)
    np.testing.assert_allclose(oar.cumprod(t(a), dim=axis).numpy(), np.cumprod(a, axis=axis).astype(dt), rtol=1e-6)
    np.testing.assert_allclose(t(a).cumsum(axis).numpy(), np.cumsum(a, axis=axis).astype(dt), rtol=1e-6)


def test_cumsum_dtype_bool_0d_noncontiguous():
    a = np.array([[1, 2], [3, 4]], dtype=np.int32)
    r = oar.cumsum(t(a), axis=1, dtype="float64")
    assert r.dtype == oar.float64
    np.testing.assert_array_equal(r.numpy(), [[1, 3], [3, 7]])
    b = oar.cumsum(t(np.array([True, True, False])))
    assert b.dtype == oar.int64 and b.numpy().tolist() == [1, 2, 2]
    z = oar.cumsum(t(np.float64(3.0)), axis=0)
    assert z.shape == [] and z.item() == 3.0
    c = RNG.standard_normal((4, 3))
    np.testing.assert_allclose(oar.cumsum(t(c).transpose([1, 0]), axis=1).numpy(), np.cumsum(c.T, axis=1))
    np.testing.assert_allclose(oar.cumprod(t(c).transpose([1, 0]), dim=0).numpy(), np.cumprod(c.T, axis=0))
    assert oar.cumsum(t(np.zeros((0, 3))), axis=0).shape == [0, 3]


def test_cumsum_cumprod_grad():
    check_grad(lambda x: oar.cumsum(x, axis=1), RNG.standard_normal((3, 4)))
    check_grad(lambda x: oar.cumsum(x), RNG.standard_normal((3, 4)))
    check_grad(lambda x: oar.cumprod(x, dim=0), RNG.standard_normal((4, 3)))
    # Zeros: none, one, two in a line (Note [cumprod gradient]).
    a = np.array([[0.5, 2.0, -1.5, 1.2, 0.7], [1.1, 0.0, 2.0, 0.9, -0.4], [0.0, 1.3, 0.0, 0.8, 2.0]])
    check_grad(lambda x: oar.cumprod(x, dim=1), a)
    check_grad(lambda x: oar.cumprod(x, dim=-1), a.T.copy().T)


def test_cumprod_double_backward():
    a = np.array([0.5, 2.0, -1.5])
    x = t(a, grad=True)
    (g,) = oar.grad([oar.cumprod(x, dim=0).sum()], [x], create_graph=True)
    # g_i = sum_{j >= i} prod_{k <= j, k != i} x_k; its own gradient checked by differences.
    (h,) = oar.grad([g.sum()], [x])

    def gsum(v):
        x0, x1, x2 = v
        return (1 + x1 + x1 * x2) + (x0 + x0 * x2) + (x0 * x1)

    num = [(gsum(a + e * 1e-6) - gsum(a - e * 1e-6)) / 2e-6 for e in np.eye(3)]
    np.testing.assert_allclose(h.numpy(), num, rtol=1e-6, atol=1e-8)


# ---- cummax / cummin

def ref_cum(a, axis, is_max):
    a = np.moveaxis(a, axis, -1)
    v, i = np.empty_like(a), np.zeros(a.shape, dtype=np.int64)
    for idx in np.ndindex(a.shape[:-1]):
        best, bi = None, 0
        for j, x in enumerate(a[idx]):
            if j == 0 or np.isnan(x) or (not np.isnan(best) and (x >= best if is_max else x <= best)):
                best, bi = x, j
            v[idx + (j,)], i[idx + (j,)] = best, bi
    return np.moveaxis(v, -1, axis), np.moveaxis(i, -1, axis)


@pytest.mark.parametrize("dt", FLOATS + [np.int32, np.int64])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cummax_cummin(dt, axis):
    a = RNG.integers(-3, 4, (4, 5)).astype(dt)
    for f, is_max in ((oar.cummax, True), (oar.cummin, False)):
        v, i = f(t(a), axis=axis)
        rv, ri = ref_cum(a, axis, is_max)
        np.testing.assert_array_equal(v.numpy(), rv)
        np.testing.assert_array_equal(i.numpy(), ri)
    np.testing.assert_array_equal(oar.cummax(t(a), axis=axis)[0].numpy(), np.maximum.accumulate(a, axis=axis))


def test_cummax_flat_nan_dtype_grad():
    a = np.array([[1.0, np.nan], [0.0, 4.0]])
    v, i = oar.cummax(t(a))
    np.testing.assert_array_equal(i.numpy(), [0, 1, 1, 1])
    assert np.isnan(v.numpy()[1:]).all()
    assert t(a).cummax(axis=0, dtype="int32")[1].dtype == oar.int32
    check_grad(lambda x: oar.cummax(x, axis=1)[0], RNG.standard_normal((3, 5)))
    check_grad(lambda x: oar.cummin(x, axis=0)[0], RNG.standard_normal((4, 2)))


# ---- error inputs

@pytest.mark.parametrize("name,call", [
    ("max", lambda x: oar.max(x, axis=3)),
    ("min", lambda x: oar.min(x, axis=-4)),
    ("argmax", lambda x: oar.argmax(x, axis=3)),
    ("argmin", lambda x: oar.argmin(x, axis=-4)),
    ("all", lambda x: oar.all(x, axis=5)),
    ("any", lambda x: oar.any(x, axis=[0, 7])),
    ("std", lambda x: oar.std(x, axis=3)),
    ("var", lambda x: oar.var(x, axis=3)),
    ("median", lambda x: oar.median(x, axis=3)),
    ("logsumexp", lambda x: oar.logsumexp(x, axis=3)),
    ("norm", lambda x: oar.norm(x, axis=3)),
    ("cumsum", lambda x: oar.cumsum(x, axis=3)),
    ("cumprod", lambda x: oar.cumprod(x, dim=-4)),
    ("cummax", lambda x: oar.cummax(x, axis=3)),
    ("cummin", lambda x: oar.cummin(x, axis=3)),
    ("count_nonzero", lambda x: oar.count_nonzero(x, axis=3)),
])
def test_axis_out_of_range(name, call):
    with pytest.raises(IndexError, match=rf"^\[oar.{name}\]"):
        call(t(np.ones((2, 3, 4))))


def test_other_errors():
    e = t(np.zeros((0, 3)))
    with pytest.raises(ValueError, match=r"^\[oar.max\]"):
        oar.max(e)
    with pytest.raises(ValueError, match=r"^\[oar.argmax\]"):
        oar.argmax(e, axis=0)
    with pytest.raises(ValueError, match=r"^\[oar.median\]"):
        oar.median(e)
    x = t(np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"^\[oar.argmax\]"):
        oar.argmax(x, dtype="float32")
    with pytest.raises(TypeError, match=r"^\[oar.cummax\]"):
        oar.cummax(x, dtype="float32")
    with pytest.raises(TypeError, match=r"^\[oar.argmin\]"):
        oar.argmin(x, axis=[0, 1])
    with pytest.raises(ValueError, match=r"^\[oar.max\]"):
        oar.max(x, axis=[1, 1])
    with pytest.raises(TypeError, match=r"^\[oar.max\]"):
        oar.max(t(np.array([True, False])))
