"""oar.linalg: decompositions against numpy.linalg, gradients against finite
differences, the composites built on them and the error paths."""
import numpy as np
import pytest

import oar

RTOL = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}
ATOL = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}
DTYPES = ["float32", "float64", "complex64", "complex128"]


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def well_conditioned(shape, dtype, seed=0):
    a = rand(shape, dtype, seed)
    n = shape[-1]
    return (a + 3 * n * np.eye(n)).astype(dtype) if n else a


def hermitian(shape, dtype, seed=0):
    a = rand(shape, dtype, seed)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)


def spd(shape, dtype, seed=0):
    a = rand(shape, dtype, seed)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def close(got, want, dtype, scale=1.0):
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype] * 10, atol=ATOL[dtype] * 10 * scale)


def mH(a):
    return np.conj(np.swapaxes(a, -1, -2))


def numeric_grad(f, a, eps=1e-6):
    g = np.zeros_like(a)
    it = np.nditer(a, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        ap, am = a.copy(), a.copy()
        ap[i] += eps
        am[i] -= eps
        g[i] = (f(ap) - f(am)) / (2 * eps)
    return g


def check_grad(fn, *arrays, rtol=1e-5, atol=1e-6):
    """fn maps oar tensors to a 0-D tensor; compares backward with central differences."""
    xs = [oar.to_tensor(a, stop_gradient=False) for a in arrays]
    fn(*xs).backward()
    for k, a in enumerate(arrays):
        def f(ak, k=k):
            args = [oar.to_tensor(b) for b in arrays]
            args[k] = oar.to_tensor(ak)
            return float(fn(*args).item())
        np.testing.assert_allclose(xs[k].grad.numpy(), numeric_grad(f, a.copy()), rtol=rtol, atol=atol)


def raises(exc, api, fn):
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value).startswith(f"[oar.linalg.{api}]"), str(e.value)


# ---------------------------------------------------------------- svd

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (2, 3, 4, 3), (1, 1)])
def test_svd_reduced(dtype, shape):
    a = rand(shape, dtype)
    u, s, vh = oar.linalg.svd(oar.to_tensor(a))
    k = min(shape[-2:])
    assert u.shape == list(shape[:-1]) + [k] and vh.shape == list(shape[:-2]) + [k, shape[-1]]
    assert str(s.dtype).endswith("float32" if dtype in ("float32", "complex64") else "float64")
    close(s.numpy(), np.linalg.svd(a, compute_uv=False), dtype)
    un, sn, vhn = u.numpy(), s.numpy(), vh.numpy()
    close((un * sn[..., None, :]) @ vhn, a, dtype)
    close(mH(un) @ un, np.broadcast_to(np.eye(k), un.shape[:-2] + (k, k)), dtype)
    close(vhn @ mH(vhn), np.broadcast_to(np.eye(k), un.shape[:-2] + (k, k)), dtype)


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
@pytest.mark.parametrize("shape", [(3, 5), (5, 3)])
def test_svd_full_matrices(dtype, shape):
    a = rand(shape, dtype)
    u, s, vh = oar.linalg.svd(oar.to_tensor(a), full_matrices=True)
    m, n = shape
    k = min(m, n)
    assert u.shape == [m, m] and vh.shape == [n, n]
    un, vhn = u.numpy(), vh.numpy()
    close(mH(un) @ un, np.eye(m), dtype)
    close(vhn @ mH(vhn), np.eye(n), dtype)
    close((un[:, :k] * s.numpy()) @ vhn[:k], a, dtype)


def test_svd_zero_size_and_nonfinite():
    u, s, vh = oar.linalg.svd(oar.zeros([0, 3, 2]))
    assert u.shape == [0, 3, 2] and s.shape == [0, 2] and vh.shape == [0, 2, 2]
    u, s, vh = oar.linalg.svd(oar.zeros([3, 0]))
    assert u.shape == [3, 0] and s.shape == [0] and vh.shape == [0, 0]
    u, s, vh = oar.linalg.svd(oar.zeros([3, 0]), full_matrices=True)
    np.testing.assert_array_equal(u.numpy(), np.eye(3))
    a = np.ones((2, 3, 3))
    a[1, 0, 0] = np.nan
    u, s, vh = oar.linalg.svd(oar.to_tensor(a))
    assert np.isnan(s.numpy()[1]).all() and np.isfinite(s.numpy()[0]).all()
    w, v = oar.linalg.eigh(oar.to_tensor(np.array([[np.inf, 0.0], [0.0, 1.0]])))
    assert np.isnan(w.numpy()).all()


def test_svd_noncontiguous_and_int():
    a = rand((4, 3), "float64")
    s = oar.linalg.svdvals(oar.to_tensor(a).T)
    close(s.numpy(), np.linalg.svd(a.T, compute_uv=False), "float64")
    s = oar.linalg.svdvals(oar.to_tensor([[1, 2], [3, 4]]))
    close(s.numpy(), np.linalg.svd(np.array([[1.0, 2.0], [3.0, 4.0]]), compute_uv=False), "float32")


def test_svd_large_batch_parallel():
    a = rand((300, 4, 3), "float64")
    s = oar.linalg.svdvals(oar.to_tensor(a))
    close(s.numpy(), np.linalg.svd(a, compute_uv=False), "float64")


# ---------------------------------------------------------------- eigh

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1)])
def test_eigh(dtype, shape):
    a = hermitian(shape, dtype)
    w, v = oar.linalg.eigh(oar.to_tensor(a))
    close(w.numpy(), np.linalg.eigvalsh(a), dtype)
    vn = v.numpy()
    close((vn * w.numpy()[..., None, :]) @ mH(vn), a, dtype)
    close(oar.linalg.eigvalsh(oar.to_tensor(a)).numpy(), np.linalg.eigvalsh(a), dtype)


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
def test_eigh_uplo_reads_one_triangle(dtype):
    a = hermitian((4, 4), dtype)
    junk_upper = np.tril(a) + np.triu(rand((4, 4), dtype, 5), 1)
    junk_lower = np.triu(a) + np.tril(rand((4, 4), dtype, 6), -1)
    want = np.linalg.eigvalsh(a)
    close(oar.linalg.eigh(oar.to_tensor(junk_upper), UPLO="L")[0].numpy(), want, dtype)
    close(oar.linalg.eigh(oar.to_tensor(junk_lower), UPLO="U")[0].numpy(), want, dtype)
    close(oar.linalg.eigvalsh(oar.to_tensor(junk_lower), UPLO="U").numpy(), want, dtype)


def test_eigh_zero_size():
    w, v = oar.linalg.eigh(oar.zeros([0, 3, 3]))
    assert w.shape == [0, 3] and v.shape == [0, 3, 3]
    w, v = oar.linalg.eigh(oar.zeros([2, 0, 0]))
    assert w.shape == [2, 0] and v.shape == [2, 0, 0]


# ---------------------------------------------------------------- qr

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 4, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(dtype, shape, mode):
    a = rand(shape, dtype)
    q, r = oar.linalg.qr(oar.to_tensor(a), mode=mode)
    m, n = shape[-2:]
    kq = m if mode == "complete" else min(m, n)
    assert q.shape == list(shape[:-2]) + [m, kq] and r.shape == list(shape[:-2]) + [kq, n]
    qn, rn = q.numpy(), r.numpy()
    close(qn @ rn, a, dtype)
    close(mH(qn) @ qn, np.broadcast_to(np.eye(kq), qn.shape[:-2] + (kq, kq)), dtype)
    np.testing.assert_array_equal(np.tril(rn, -1), np.zeros_like(rn))
    # R agrees with numpy up to the sign of each row.
    rref = np.linalg.qr(a, mode=mode)[1]
    close(np.abs(rn), np.abs(rref), dtype)


def test_qr_mode_r_and_zero_size():
    a = rand((4, 3), "float64")
    r = oar.linalg.qr(oar.to_tensor(a), mode="r")
    assert isinstance(r, oar.Tensor) and r.shape == [3, 3]
    close(np.abs(r.numpy()), np.abs(np.linalg.qr(a, mode="r")), "float64")
    q, r = oar.linalg.qr(oar.zeros([0, 4, 3]))
    assert q.shape == [0, 4, 3] and r.shape == [0, 3, 3]
    q, r = oar.linalg.qr(oar.zeros([3, 0]), mode="complete")
    np.testing.assert_array_equal(q.numpy(), np.eye(3))
    assert r.shape == [3, 0]


# ---------------------------------------------------------------- inv, det, slogdet, solve

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1)])
def test_inv_det_slogdet(dtype, shape):
    a = well_conditioned(shape, dtype)
    close(oar.linalg.inv(oar.to_tensor(a)).numpy(), np.linalg.inv(a), dtype)
    d = np.linalg.det(a)
    close(oar.linalg.det(oar.to_tensor(a)).numpy(), d, dtype, scale=np.abs(d).max())
    out = oar.linalg.slogdet(oar.to_tensor(a)).numpy()
    sign, logabs = np.linalg.slogdet(a)
    assert out.shape == (2,) + shape[:-2]
    close(out[0], sign, dtype)
    close(out[1].real, logabs, dtype)


def test_det_slogdet_singular_and_sign():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert oar.linalg.det(oar.to_tensor(a)).item() == 0.0
    out = oar.linalg.slogdet(oar.to_tensor(a)).numpy()
    assert out[0] == 0 and out[1] == -np.inf
    p = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert oar.linalg.det(oar.to_tensor(p)).item() == -1.0
    assert oar.linalg.det(oar.zeros([0, 0])).item() == 1.0
    assert oar.linalg.inv(oar.zeros([0, 0])).shape == [0, 0]
    assert oar.linalg.det(oar.zeros([0, 3, 3])).shape == [0]


def test_inv_large_batch_parallel():
    a = well_conditioned((500, 4, 4), "float64")
    close(oar.linalg.inv(oar.to_tensor(a)).numpy(), np.linalg.inv(a), "float64")


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve(dtype):
    a = well_conditioned((2, 3, 3), dtype)
    b = rand((2, 3, 4), dtype, 1)
    close(oar.linalg.solve(oar.to_tensor(a), oar.to_tensor(b)).numpy(), np.linalg.solve(a, b), dtype)
    # Broadcast batch dims and a vector right-hand side.
    b1 = rand((3, 2), dtype, 2)
    close(oar.linalg.solve(oar.to_tensor(a), oar.to_tensor(b1)).numpy(), np.linalg.solve(a, b1), dtype)
    v = rand((3,), dtype, 3)
    close(oar.linalg.solve(oar.to_tensor(a[0]), oar.to_tensor(v)).numpy(), np.linalg.solve(a[0], v), dtype)
    assert oar.linalg.solve(oar.zeros([0, 3, 3]), oar.zeros([0, 3, 2])).shape == [0, 3, 2]


# ---------------------------------------------------------------- cholesky

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_cholesky(dtype, shape):
    a = spd(shape, dtype)
    low = oar.linalg.cholesky(oar.to_tensor(a)).numpy()
    close(low, np.linalg.cholesky(a), dtype)
    up = oar.linalg.cholesky(oar.to_tensor(a), upper=True).numpy()
    close(up, mH(np.linalg.cholesky(a)), dtype)
    assert oar.linalg.cholesky(oar.zeros([0, 2, 2])).shape == [0, 2, 2]


# ---------------------------------------------------------------- errors

def test_errors():
    sq = oar.to_tensor(rand((2, 3), "float32"))
    for api, fn in [("inv", oar.linalg.inv), ("det", oar.linalg.det), ("slogdet", oar.linalg.slogdet),
                    ("cholesky", oar.linalg.cholesky), ("eigh", oar.linalg.eigh)]:
        raises(ValueError, api, lambda fn=fn: fn(sq))
        raises(ValueError, api, lambda fn=fn: fn(oar.ones([3])))
    raises(ValueError, "svd", lambda: oar.linalg.svd(oar.ones([3])))
    raises(ValueError, "qr", lambda: oar.linalg.qr(oar.ones([3])))
    raises(ValueError, "solve", lambda: oar.linalg.solve(sq, oar.ones([2, 1])))
    raises(ValueError, "solve", lambda: oar.linalg.solve(oar.eye(3), oar.ones([2, 1])))
    raises(ValueError, "solve", lambda: oar.linalg.solve(oar.eye(3), oar.ones([2])))
    sing = oar.to_tensor([[1.0, 2.0], [2.0, 4.0]])
    raises(ValueError, "inv", lambda: oar.linalg.inv(sing))
    raises(ValueError, "solve", lambda: oar.linalg.solve(sing, oar.ones([2, 1])))
    batch = oar.to_tensor(np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]]))
    with pytest.raises(ValueError, match="batch item 1"):
        oar.linalg.inv(batch)
    raises(ValueError, "cholesky", lambda: oar.linalg.cholesky(oar.to_tensor([[1.0, 2.0], [2.0, 1.0]])))
    raises(ValueError, "cholesky", lambda: oar.linalg.cholesky(oar.to_tensor([[np.nan, 0.0], [0.0, 1.0]])))
    raises(TypeError, "svd", lambda: oar.linalg.svd(oar.ones([2, 2], dtype="float16")))
    raises(ValueError, "eigh", lambda: oar.linalg.eigh(oar.eye(2), UPLO="X"))
    raises(ValueError, "qr", lambda: oar.linalg.qr(oar.eye(2), mode="full"))
    raises(TypeError, "matrix_power", lambda: oar.linalg.matrix_power(oar.eye(2), 1.5))
    raises(ValueError, "matrix_power", lambda: oar.linalg.matrix_power(oar.ones([2, 3]), 2))
    raises(ValueError, "multi_dot", lambda: oar.linalg.multi_dot([oar.ones([2, 3]), oar.ones([2, 3])]))
    raises(ValueError, "matrix_norm", lambda: oar.linalg.matrix_norm(oar.eye(2), p=3))
    raises(ValueError, "pinv", lambda: oar.linalg.pinv(oar.ones([3])))
    raises(ValueError, "cond", lambda: oar.linalg.cond(oar.ones([2, 3]), p="fro"))


# ---------------------------------------------------------------- gradients (float64 vs finite differences)

@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 3, 2)])
def test_svd_grad(shape):
    a = rand(shape, "float64", 1)
    k = min(shape[-2:])
    rng = np.random.default_rng(9)
    wu = oar.to_tensor(rng.standard_normal(shape[:-1] + (k,)))
    wv = oar.to_tensor(rng.standard_normal(shape[:-2] + (k, shape[-1])))
    ws = oar.to_tensor(rng.standard_normal(shape[:-2] + (k,)))

    def loss(x):  # gauge invariant: squares of U and VH, functions of S
        u, s, vh = oar.linalg.svd(x)
        return (u * u * wu).sum() + (vh * vh * wv).sum() + (s * ws).sum()

    check_grad(loss, a)
    check_grad(lambda x: (oar.linalg.svdvals(x) ** 2 * ws).sum(), a)
    check_grad(lambda x: (oar.linalg.svd(x)[1] * ws).sum(), a)


def test_svd_grad_full_matrices():
    a = rand((3, 3), "float64", 2)
    check_grad(lambda x: (oar.linalg.svd(x, full_matrices=True)[0] ** 2).sum(axis=0)[0] +
               oar.linalg.svd(x, full_matrices=True)[1].sum(), a)
    x = oar.to_tensor(rand((3, 2), "float64"), stop_gradient=False)
    with pytest.raises(NotImplementedError, match=r"^\[oar.linalg.svd\]"):
        oar.linalg.svd(x, full_matrices=True)[0].sum().backward()


def test_eigh_grad():
    a = rand((2, 4, 4), "float64", 3)
    rng = np.random.default_rng(4)
    ww = oar.to_tensor(rng.standard_normal((2, 4)))
    wv = oar.to_tensor(rng.standard_normal((2, 4, 4)))

    def loss(x):
        w, v = oar.linalg.eigh((x + x.transpose([0, 2, 1])) * 0.5)
        return (w * ww).sum() + (v * v * wv).sum()

    check_grad(loss, a)
    check_grad(lambda x: (oar.linalg.eigvalsh((x + x.transpose([0, 2, 1])) * 0.5) ** 3).sum(), a)


@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (2, 4, 2)])
def test_qr_grad(shape):
    a = rand(shape, "float64", 5)
    rng = np.random.default_rng(6)
    n = shape[-1]
    wq = oar.to_tensor(rng.standard_normal(shape))
    wr = oar.to_tensor(rng.standard_normal(shape[:-2] + (n, n)))

    def loss(x):
        q, r = oar.linalg.qr(x)
        return (q * wq).sum() + (r * wr).sum()

    check_grad(loss, a)


def test_inv_det_slogdet_solve_grad():
    a = well_conditioned((2, 3, 3), "float64", 7)
    b = rand((2, 3, 2), "float64", 8)
    w = oar.to_tensor(rand((2, 3, 3), "float64", 9))
    check_grad(lambda x: (oar.linalg.inv(x) * w).sum(), a)
    check_grad(lambda x: (oar.linalg.det(x) * oar.to_tensor([1.0, -2.0])).sum(), a)
    check_grad(lambda x: (oar.linalg.slogdet(x) * oar.to_tensor([[0.0, 0.0], [1.0, -3.0]])).sum(), a)
    wx = oar.to_tensor(rand((2, 3, 2), "float64", 10))
    check_grad(lambda x, y: (oar.linalg.solve(x, y) * wx).sum(), a, b)
    # Broadcast batch: y shared by both matrices.
    check_grad(lambda x, y: (oar.linalg.solve(x, y) * wx).sum(), a, b[0])
    check_grad(lambda x: (oar.linalg.matrix_power(x, -2) * w).sum(), a)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_grad(upper):
    a = rand((2, 3, 3), "float64", 11)
    w = oar.to_tensor(rand((2, 3, 3), "float64", 12))

    def loss(x):
        s = oar.matmul(x, x.transpose([0, 2, 1])) + oar.eye(3, dtype="float64") * 3.0
        return (oar.linalg.cholesky(s, upper=upper) * w).sum()

    check_grad(loss, a)


def test_inv_double_backward():
    a = well_conditioned((3, 3), "float64", 13)
    w = oar.to_tensor(rand((3, 3), "float64", 14))

    def first(x):
        xt = oar.to_tensor(x, stop_gradient=False) if not isinstance(x, oar.Tensor) else x
        (g,) = oar.grad([(oar.linalg.inv(xt) * w).sum()], [xt], create_graph=True)
        return g

    x = oar.to_tensor(a, stop_gradient=False)
    (gg,) = oar.grad([(first(x) ** 2).sum()], [x])
    num = numeric_grad(lambda ak: float((first(oar.to_tensor(ak, stop_gradient=False)) ** 2).sum().item()), a.copy())
    np.testing.assert_allclose(gg.numpy(), num, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- matrix norms

@pytest.mark.parametrize("p", ["nuc", 2, -2, "fro", 1, -1, np.inf, -np.inf])
def test_matrix_norms(p):
    a = rand((3, 4, 5), "float64", 15)
    want = np.linalg.norm(a, ord=p, axis=(1, 2))
    close(oar.norm(oar.to_tensor(a), p=p, axis=[1, 2]).numpy(), want, "float64")
    close(oar.linalg.matrix_norm(oar.to_tensor(a), p=p, axis=[1, 2]).numpy(), want, "float64")
    close(oar.linalg.norm(oar.to_tensor(a), p=p, axis=[1, 2]).numpy(), want, "float64")
    kd = oar.norm(oar.to_tensor(a), p=p, axis=[2, 0], keepdim=True).numpy()
    close(kd, np.linalg.norm(a, ord=p, axis=(2, 0), keepdims=True), "float64")
    f32 = oar.norm(oar.to_tensor(a.astype("float32")), p=p, axis=[-2, -1]).numpy()
    close(f32, np.linalg.norm(a, ord=p, axis=(-2, -1)), "float32")


@pytest.mark.parametrize("p", ["nuc", 2, -2])
def test_matrix_norm_grad(p):
    a = rand((2, 4, 3), "float64", 16)
    check_grad(lambda x: (oar.norm(x, p=p, axis=[1, 2]) * oar.to_tensor([1.0, 2.0])).sum(), a)


def test_vector_norm():
    a = rand((3, 4, 5), "float64", 17)
    close(oar.linalg.vector_norm(oar.to_tensor(a)).numpy(), np.linalg.norm(a.ravel()), "float64")
    close(oar.linalg.vector_norm(oar.to_tensor(a), p=1, axis=[0, 2]).numpy(),
          np.abs(a).sum(axis=(0, 2)), "float64")
    got = oar.linalg.vector_norm(oar.to_tensor(a), p=3, axis=[0, 2], keepdim=True).numpy()
    close(got, (np.abs(a) ** 3).sum(axis=(0, 2), keepdims=True) ** (1 / 3), "float64")
    close(oar.linalg.vector_norm(oar.to_tensor(a), p=np.inf, axis=-1).numpy(), np.abs(a).max(-1), "float64")


def test_nuclear_norm_errors():
    with pytest.raises(ValueError, match=r"^\[oar.norm\]"):
        oar.norm(oar.ones([2, 2]), p="nuc", axis=[0])
    with pytest.raises(ValueError):
        oar.norm(oar.ones([0, 2]), p=2, axis=[0, 1])
    assert oar.norm(oar.ones([0, 2]), p="nuc", axis=[0, 1]).item() == 0.0


# ---------------------------------------------------------------- composites

@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_pinv(dtype):
    a = rand((2, 4, 3), dtype, 18)
    close(oar.linalg.pinv(oar.to_tensor(a)).numpy(), np.linalg.pinv(a), dtype, scale=10)
    low_rank = (rand((4, 2), dtype, 19) @ rand((2, 5), dtype, 20)).astype(dtype)
    close(oar.linalg.pinv(oar.to_tensor(low_rank), rcond=1e-5).numpy(), np.linalg.pinv(low_rank, rcond=1e-5),
          dtype, scale=10)
    h = hermitian((3, 3), dtype, 21)
    close(oar.linalg.pinv(oar.to_tensor(h), hermitian=True).numpy(), np.linalg.pinv(h, hermitian=True),
          dtype, scale=10)


def test_pinv_grad():
    a = rand((4, 3), "float64", 22)
    w = oar.to_tensor(rand((3, 4), "float64", 23))
    check_grad(lambda x: (oar.linalg.pinv(x) * w).sum(), a)


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(n):
    a = well_conditioned((2, 3, 3), "float64", 24) / 10
    close(oar.linalg.matrix_power(oar.to_tensor(a), n).numpy(), np.linalg.matrix_power(a, n), "float64", scale=100)


def test_matrix_rank():
    a = rand((4, 2), "float64", 25) @ rand((2, 5), "float64", 26)
    assert oar.linalg.matrix_rank(oar.to_tensor(a)).item() == np.linalg.matrix_rank(a) == 2
    batch = np.stack([np.eye(4), np.diag([1.0, 1.0, 1e-3, 0.0])])
    np.testing.assert_array_equal(oar.linalg.matrix_rank(oar.to_tensor(batch)).numpy(), [4, 3])
    np.testing.assert_array_equal(oar.linalg.matrix_rank(oar.to_tensor(batch), tol=0.01).numpy(), [4, 2])
    np.testing.assert_array_equal(oar.linalg.matrix_rank(oar.to_tensor(batch), hermitian=True).numpy(), [4, 3])
    np.testing.assert_array_equal(oar.linalg.matrix_rank(oar.to_tensor(batch), atol=0.5).numpy(), [4, 2])
    np.testing.assert_array_equal(oar.linalg.matrix_rank(oar.to_tensor(batch), rtol=0.01).numpy(), [4, 2])
    assert str(oar.linalg.matrix_rank(oar.eye(3)).dtype).endswith("int64")


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf])
def test_cond(p):
    a = well_conditioned((2, 3, 3), "float64", 27)
    close(oar.linalg.cond(oar.to_tensor(a), p=p).numpy(), np.linalg.cond(a, p=p), "float64", scale=10)


def test_cond_rectangular():
    a = rand((4, 3), "float64", 28)
    close(oar.linalg.cond(oar.to_tensor(a)).numpy(), np.linalg.cond(a), "float64")


def test_multi_dot():
    rng = np.random.default_rng(29)
    mats = [rng.standard_normal(s) for s in [(5,), (5, 30), (30, 2), (2, 40), (40,)]]
    close(oar.linalg.multi_dot([oar.to_tensor(m) for m in mats]).numpy(), np.linalg.multi_dot(mats), "float64")
    mats = [rng.standard_normal(s) for s in [(3, 4), (4, 5)]]
    close(oar.linalg.multi_dot([oar.to_tensor(m) for m in mats]).numpy(), np.linalg.multi_dot(mats), "float64")


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(upper):
    a = spd((2, 3, 3), "float64", 30)
    b = rand((2, 3, 2), "float64", 31)
    f = oar.linalg.cholesky(oar.to_tensor(a), upper=upper)
    close(oar.linalg.cholesky_solve(oar.to_tensor(b), f, upper=upper).numpy(), np.linalg.solve(a, b), "float64")
    close(oar.linalg.cholesky_inverse(f, upper=upper).numpy(), np.linalg.inv(a), "float64")


def test_small_helpers_and_methods():
    a = rand((2, 3, 4), "complex128", 32)
    b = rand((2, 3, 4), "complex128", 33)
    close(oar.linalg.matrix_transpose(oar.to_tensor(a)).numpy(), np.swapaxes(a, -1, -2), "complex128")
    close(oar.linalg.vecdot(oar.to_tensor(a), oar.to_tensor(b)).numpy(), (np.conj(a) * b).sum(-1), "complex128")
    m = well_conditioned((3, 3), "float64", 34)
    t = oar.to_tensor(m)
    close(t.inverse().numpy(), np.linalg.inv(m), "float64")
    close(t.matrix_power(2).numpy(), m @ m, "float64")
    close(oar.to_tensor(spd((3, 3), "float64")).cholesky().numpy(), np.linalg.cholesky(spd((3, 3), "float64")),
          "float64")
    assert oar.linalg.matmul is oar.matmul and oar.linalg.cross is oar.cross


def check_complex_grad(fn, a, atol=1e-6):
    """Complex input, real loss: the gradient is dL/dRe + i dL/dIm (conjugate Wirtinger, doubled)."""
    x = oar.to_tensor(a, stop_gradient=False)
    fn(x).backward()
    num = np.zeros_like(a)
    eps = 1e-6
    for idx in np.ndindex(a.shape):
        for unit in (1, 1j):
            ap, am = a.copy(), a.copy()
            ap[idx] += eps * unit
            am[idx] -= eps * unit
            num[idx] += unit * (fn(oar.to_tensor(ap)).item() - fn(oar.to_tensor(am)).item()) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=atol)


def test_complex_grads():
    a = well_conditioned((3, 3), "complex128", 35)
    w = oar.to_tensor(rand((3, 3), "complex128", 36))
    b = oar.to_tensor(rand((3, 2), "complex128", 37))
    check_complex_grad(lambda x: oar.real(oar.linalg.inv(x) * w).sum(), a)
    check_complex_grad(lambda x: oar.real(oar.linalg.det(x) * w[0, 0]), a, atol=1e-4)
    check_complex_grad(lambda x: oar.real(oar.linalg.solve(x, b) * w[:, :2]).sum(), a)
    eye = oar.eye(3, dtype="complex128")
    check_complex_grad(lambda x: oar.real(oar.linalg.cholesky(oar.matmul(x, oar.conj(x.T)) + eye * 3.0) * w).sum(),
                       a, atol=1e-5)
    r = rand((3, 4), "complex128", 38)
    check_complex_grad(lambda x: oar.norm(x, p="nuc", axis=[0, 1]), r)
    check_complex_grad(lambda x: (oar.linalg.svdvals(x) ** 2).sum() + oar.linalg.svdvals(x)[0], r)
    wl = oar.to_tensor([1.0, -2.0, 3.0])
    check_complex_grad(lambda x: (oar.linalg.eigvalsh((x + oar.conj(x.T)) * 0.5) * wl).sum(), a)
    x = oar.to_tensor(r, stop_gradient=False)
    with pytest.raises(NotImplementedError, match=r"^\[oar.linalg.svd\]"):
        oar.real(oar.linalg.svd(x)[0]).sum().backward()
