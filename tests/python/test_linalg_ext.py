"""bmm, mm, dot, outer, t, kron, cross, einsum, lerp, nan_to_num, frac, logspace:
forward against NumPy, gradients against central differences, error inputs."""
import numpy as np
import pytest

import oar

RNG = np.random.default_rng(0)
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12),
       np.complex128: dict(rtol=1e-12, atol=1e-12)}


def rand(shape, dtype=np.float64):
    a = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def T(a, grad=False):
    return oar.to_tensor(a, stop_gradient=not grad)


def check_grad(fn, arrays, eps=1e-6, tol=1e-6):
    """Gradient of sum(fn(*xs) * w) w.r.t. each float64 input, against central differences."""
    ts = [T(a, grad=True) for a in arrays]
    out = fn(*ts)
    w = RNG.standard_normal(out.shape)
    (out * T(w)).sum().backward()

    def f(*xs):
        return float((fn(*[T(x) for x in xs]).numpy() * w).sum())

    for i, a in enumerate(arrays):
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            hi = [x.copy() for x in arrays]
            lo = [x.copy() for x in arrays]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            num[idx] = (f(*hi) - f(*lo)) / (2 * eps)
        np.testing.assert_allclose(ts[i].grad.numpy(), num, rtol=tol, atol=tol)


# ---- forward

@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
def test_bmm_mm(dt):
    x, y = rand([3, 2, 4], dt), rand([3, 4, 5], dt)
    np.testing.assert_allclose(oar.bmm(T(x), T(y)).numpy(), np.matmul(x, y), **TOL[dt])
    np.testing.assert_allclose(T(x).bmm(T(y)).numpy(), np.matmul(x, y), **TOL[dt])
    a, b = rand([2, 4], dt), rand([4, 3], dt)
    np.testing.assert_allclose(oar.mm(T(a), T(b)).numpy(), a @ b, **TOL[dt])
    np.testing.assert_allclose(T(a).mm(T(b)).numpy(), a @ b, **TOL[dt])


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
def test_dot(dt):
    x, y = rand([5], dt), rand([5], dt)
    out = oar.dot(T(x), T(y))
    assert out.shape == []
    np.testing.assert_allclose(out.numpy(), np.dot(x, y), **TOL[dt])
    a, b = rand([3, 4], dt), rand([3, 4], dt)
    out = T(a).dot(T(b))
    assert out.shape == [3]
    np.testing.assert_allclose(out.numpy(), (a * b).sum(-1), **TOL[dt])


def test_dot_int_and_empty():
    a = np.array([1, 2, 3], np.int32)
    out = oar.dot(T(a), T(a))
    assert out.dtype == oar.int32 and out.item() == 14
    assert oar.dot(T(np.zeros([0])), T(np.zeros([0]))).item() == 0.0


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
def test_outer_kron(dt):
    x, y = rand([3], dt), rand([4], dt)
    np.testing.assert_allclose(oar.outer(T(x), T(y)).numpy(), np.outer(x, y), **TOL[dt])
    m = rand([2, 3], dt)
    np.testing.assert_allclose(T(m).outer(T(y)).numpy(), np.outer(m, y), **TOL[dt])
    for sa, sb in [([2, 3], [4, 5]), ([3], [2, 2]), ([2, 1, 3], [3, 2]), ([], [3])]:
        a, b = rand(sa, dt), rand(sb, dt)
        np.testing.assert_allclose(oar.kron(T(a), T(b)).numpy(), np.kron(a, b), **TOL[dt])
    np.testing.assert_array_equal(T(np.array([1, 2])).kron(T(np.array([[1, 0], [0, 1]]))).numpy(),
                                  np.kron([1, 2], np.eye(2, dtype=np.int64)))


def test_t():
    a = rand([2, 3])
    np.testing.assert_array_equal(oar.t(T(a)).numpy(), a.T)
    np.testing.assert_array_equal(T(a).t().numpy(), a.T)
    v = rand([4])
    np.testing.assert_array_equal(oar.t(T(v)).numpy(), v)
    assert oar.t(T(np.float64(2.0))).shape == []


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
def test_cross(dt):
    x, y = rand([4, 3, 2], dt), rand([4, 3, 2], dt)
    np.testing.assert_allclose(oar.cross(T(x), T(y)).numpy(), np.cross(x, y, axis=1), **TOL[dt])
    x, y = rand([3, 3], dt), rand([3, 3], dt)
    np.testing.assert_allclose(oar.cross(T(x), T(y)).numpy(), np.cross(x, y, axis=0), **TOL[dt])
    np.testing.assert_allclose(T(x).cross(T(y), axis=1).numpy(), np.cross(x, y, axis=1), **TOL[dt])
    np.testing.assert_allclose(oar.cross(T(x), T(y), axis=-1).numpy(), np.cross(x, y, axis=-1), **TOL[dt])


EINSUM_CASES = [
    ("ij,jk->ik", [[2, 3], [3, 4]]),
    ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
    ("ii->i", [[4, 4]]),
    ("ii", [[4, 4]]),
    ("i,i->", [[5], [5]]),
    ("...ij,...jk", [[2, 3, 4], [2, 4, 5]]),
    ("...ij,...jk->...ik", [[2, 1, 3, 4], [5, 4, 2]]),
    ("ij->ji", [[2, 3]]),
    ("ij", [[2, 3]]),
    ("ji", [[2, 3]]),
    ("ij->", [[2, 3]]),
    ("ij->j", [[2, 3]]),
    ("i,j->ij", [[3], [4]]),
    ("ij,ij->ij", [[2, 3], [2, 3]]),
    ("bn,anm,bm->ba", [[2, 3], [4, 3, 5], [2, 5]]),
    ("iij->j", [[3, 3, 2]]),
    ("iji->j", [[3, 2, 3]]),
    ("ijk,ikl->jl", [[2, 3, 4], [2, 4, 5]]),
    ("i...->...", [[3, 2, 4]]),
    ("a b, b c -> a c", [[2, 3], [3, 2]]),
    ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]]),
    ("ij,kl->ijkl", [[2, 2], [3, 1]]),
    ("ij,jk->ik", [[0, 3], [3, 4]]),
    ("ij,jk->ik", [[2, 0], [0, 4]]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
def test_einsum(eq, shapes, dt):
    arrays = [rand(s, dt) for s in shapes]
    out = oar.einsum(eq, *[T(a) for a in arrays])
    ref = np.einsum(eq.replace(" ", ""), *arrays)
    assert out.shape == list(ref.shape)
    np.testing.assert_allclose(out.numpy(), ref, **TOL[dt])


def test_einsum_list_and_noncontiguous():
    a, b = rand([4, 3]), rand([4, 5])
    at = oar.transpose(T(a), [1, 0])  # a non-contiguous view
    np.testing.assert_allclose(oar.einsum("ij,jk->ik", [at, T(b)]).numpy(), a.T @ b, rtol=1e-12)
    x = oar.einsum("ij->ij", T(a))
    np.testing.assert_array_equal(x.numpy(), a)


def test_einsum_int():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    np.testing.assert_array_equal(oar.einsum("ij,kj->ik", T(a), T(a)).numpy(), a @ a.T)


# ---- elementwise and creation

@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
def test_lerp(dt):
    x, y, w = rand([2, 3], dt), rand([2, 3], dt), rand([3], dt)
    np.testing.assert_allclose(oar.lerp(T(x), T(y), T(w)).numpy(), x + w * (y - x), **TOL[dt])
    np.testing.assert_allclose(T(x).lerp(T(y), 0.25).numpy(), x + 0.25 * (y - x), **TOL[dt])
    assert oar.lerp(T(x), T(y), 0.5).dtype == T(x).dtype


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_nan_to_num(dt):
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0], dt)
    np.testing.assert_array_equal(oar.nan_to_num(T(a)).numpy(), np.nan_to_num(a))
    np.testing.assert_array_equal(T(a).nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0).numpy(),
                                  np.nan_to_num(a, nan=1.0, posinf=2.0, neginf=-3.0))


def test_nan_to_num_complex_and_int():
    a = np.array([complex(np.nan, np.inf), complex(-np.inf, 2.0)])
    np.testing.assert_array_equal(oar.nan_to_num(T(a)).numpy(), np.nan_to_num(a))
    i = np.array([1, -2], np.int32)
    np.testing.assert_array_equal(oar.nan_to_num(T(i)).numpy(), i)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_frac(dt):
    a = np.array([1.5, -2.25, 0.0, 3.0, -0.75], dt)
    np.testing.assert_array_equal(oar.frac(T(a)).numpy(), a - np.trunc(a))
    np.testing.assert_array_equal(T(a).frac().numpy(), a - np.trunc(a))
    np.testing.assert_array_equal(oar.frac(T(np.array([3, -4], np.int64))).numpy(), [0, 0])
    assert oar.frac(T(np.float64(2.5))).shape == []


def test_logspace():
    np.testing.assert_allclose(oar.logspace(0, 3, 4).numpy(), np.logspace(0, 3, 4), rtol=1e-6)
    assert oar.logspace(0, 3, 4).dtype == oar.float32
    np.testing.assert_allclose(oar.logspace(1, 4, 7, base=2.0, dtype="float64").numpy(),
                               np.logspace(1, 4, 7, base=2.0), rtol=1e-14)
    np.testing.assert_array_equal(oar.logspace(0, 3, 4, dtype="int64").numpy(), [1, 10, 100, 1000])
    assert oar.logspace(0, 1, 0).shape == [0]
    np.testing.assert_allclose(oar.logspace(oar.to_tensor(1.0), 2, 2, dtype=oar.float64).numpy(), [10.0, 100.0])


# ---- gradients (float64, central differences)

GRAD_CASES = [
    ("bmm", lambda x, y: oar.bmm(x, y), [[2, 2, 3], [2, 3, 2]]),
    ("mm", lambda x, y: oar.mm(x, y), [[2, 3], [3, 2]]),
    ("dot1", lambda x, y: oar.dot(x, y), [[4], [4]]),
    ("dot2", lambda x, y: oar.dot(x, y), [[2, 3], [2, 3]]),
    ("outer", lambda x, y: oar.outer(x, y), [[3], [2]]),
    ("t", lambda x: oar.t(x), [[2, 3]]),
    ("kron", lambda x, y: oar.kron(x, y), [[2, 2], [2, 3]]),
    ("cross", lambda x, y: oar.cross(x, y), [[3, 2], [3, 2]]),
    ("einsum_mm", lambda x, y: oar.einsum("ij,jk->ik", x, y), [[2, 3], [3, 2]]),
    ("einsum_diag", lambda x: oar.einsum("ii->i", x), [[3, 3]]),
    ("einsum_trace", lambda x: oar.einsum("ii", x), [[3, 3]]),
    ("einsum_bcast", lambda x, y: oar.einsum("...ij,...jk", x, y), [[2, 1, 2, 3], [3, 3, 2]]),
    ("einsum_three", lambda x, y, z: oar.einsum("bn,anm,bm->ba", x, y, z), [[2, 3], [2, 3, 2], [2, 2]]),
    ("lerp", lambda x, y, w: oar.lerp(x, y, w), [[2, 3], [2, 3], [3]]),
    ("frac", lambda x: oar.frac(x), [[5]]),
]


@pytest.mark.parametrize("name,fn,shapes", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grad(name, fn, shapes):
    arrays = [rand(s) for s in shapes]
    if name == "frac":  # stay away from the integer jumps
        arrays = [np.array([0.3, -1.4, 2.7, -0.2, 5.6])]
    check_grad(fn, arrays)


def test_grad_nan_to_num_and_lerp_scalar():
    x = T(np.array([np.nan, 2.0, np.inf, -3.0]), grad=True)
    oar.nan_to_num(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0, 1.0])
    a, b = T(np.array([1.0, 2.0]), grad=True), T(np.array([3.0, 5.0]), grad=True)
    oar.lerp(a, b, 0.25).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.75, 0.75])
    np.testing.assert_allclose(b.grad.numpy(), [0.25, 0.25])


def test_grad_complex_einsum():
    # d/dx of sum(|x @ y|^2): conjugate-Wirtinger gradient 2 * (x @ y) @ y^H.
    x, y = rand([2, 3], np.complex128), rand([3, 2], np.complex128)
    xt = T(x, grad=True)
    out = oar.einsum("ij,jk->ik", xt, T(y))
    (out * oar.conj(out)).real().sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), 2 * (x @ y) @ y.conj().T, rtol=1e-12)


# ---- errors

def raises(exc, name, fn):
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value).startswith(f"[oar.{name}]"), str(e.value)


def test_errors():
    a2, a3 = T(rand([2, 3])), T(rand([2, 3, 4]))
    raises(ValueError, "bmm", lambda: oar.bmm(a2, a3))
    raises(ValueError, "bmm", lambda: oar.bmm(a3, T(rand([3, 4, 2]))))
    raises(ValueError, "bmm", lambda: oar.bmm(a3, T(rand([2, 3, 2]))))
    raises(ValueError, "dot", lambda: oar.dot(a3, a3))
    raises(ValueError, "dot", lambda: oar.dot(T(rand([3])), T(rand([4]))))
    raises(ValueError, "t", lambda: oar.t(a3))
    raises(ValueError, "cross", lambda: oar.cross(a2, a2, axis=0))
    raises(ValueError, "cross", lambda: oar.cross(T(rand([2, 2])), T(rand([2, 2]))))
    raises(IndexError, "cross", lambda: oar.cross(a2, a2, axis=5))
    raises(ValueError, "einsum", lambda: oar.einsum("ij,jk->ik", a2))
    raises(ValueError, "einsum", lambda: oar.einsum("ij->ik", a2))
    raises(ValueError, "einsum", lambda: oar.einsum("ijk", a2))
    raises(ValueError, "einsum", lambda: oar.einsum("ij,jk", a2, a2))
    raises(ValueError, "einsum", lambda: oar.einsum("i1", a2))
    raises(ValueError, "einsum", lambda: oar.einsum("..ij", a2))
    raises(ValueError, "einsum", lambda: oar.einsum("...i...", a2))
    raises(ValueError, "einsum", lambda: oar.einsum("ij->ii", a2))
    raises(ValueError, "einsum", lambda: oar.einsum("ij"))
    raises(ValueError, "einsum", lambda: oar.einsum("...j,...j", T(rand([2, 3])), T(rand([4, 3]))))
    raises(TypeError, "einsum", lambda: oar.einsum("ij", np.ones([2, 2])))
    raises(TypeError, "lerp", lambda: oar.lerp(T(np.array([1, 2])), T(np.array([3, 4])), T(np.array([1, 1]))))
    raises(TypeError, "frac", lambda: oar.frac(T(np.array([True]))))
    raises(ValueError, "logspace", lambda: oar.logspace(0, 1, -1))


def test_zero_size():
    np.testing.assert_array_equal(oar.kron(T(np.ones([0, 2])), T(np.ones([3, 1]))).numpy(),
                                  np.kron(np.ones([0, 2]), np.ones([3, 1])))
    assert oar.outer(T(np.ones([0])), T(np.ones([3]))).shape == [0, 3]
    assert oar.cross(T(np.ones([0, 3])), T(np.ones([0, 3]))).shape == [0, 3]
    assert oar.bmm(T(np.ones([0, 2, 3])), T(np.ones([0, 3, 4]))).shape == [0, 2, 4]
    x = T(np.ones([0, 3]), grad=True)
    oar.einsum("ij,jk->ik", x, T(np.ones([3, 2]))).sum().backward()
    assert x.grad.shape == [0, 3]


def test_cross_keeps_inf():
    x = np.array([np.inf, 1.0, 2.0])
    y = np.array([1.0, 2.0, 3.0])
    with np.errstate(invalid="ignore"):
        ref = np.cross(x, y)
    np.testing.assert_array_equal(oar.cross(T(x), T(y)).numpy(), ref)
