"""paddle.linalg's general eigendecomposition, LU family, solvers, least
squares, matrix exponential, Householder products, covariance and randomised
low-rank SVD: Paddle's output conventions, closed forms, gradients by finite
differences, Tensor methods. Per-dtype numerics against NumPy are in
opdb_linalg.py.
"""
import numpy as np
import pytest

import oar

LA = oar.linalg


def _t(a, dtype="float64"):
    return oar.to_tensor(np.asarray(a, dtype=dtype))


def _fd(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for idx in np.ndindex(*a.shape):
        p, m = a.copy(), a.copy()
        p[idx] += eps
        m[idx] -= eps
        g[idx] = (f(p) - f(m)) / (2 * eps)
    return g


# ---------------------------------------------------------------- eig

def test_eig_rotation_closed_form():
    w, v = LA.eig(_t([[0.0, -2.0], [2.0, 0.0]]))
    assert str(w.dtype).endswith("complex128") and w.shape == [2] and v.shape == [2, 2]
    np.testing.assert_allclose(sorted(w.numpy().tolist(), key=lambda z: z.imag), [-2j, 2j], atol=1e-12)
    vn = v.numpy()
    # Unit columns whose largest component is real (LAPACK's normalisation).
    np.testing.assert_allclose(np.linalg.norm(vn, axis=0), [1.0, 1.0], atol=1e-12)
    for j in range(2):
        big = vn[np.argmax(np.abs(vn[:, j])), j]
        assert abs(big.imag) < 1e-12
    a = np.array([[0.0, -2.0], [2.0, 0.0]])
    np.testing.assert_allclose(a @ vn, vn * w.numpy()[None, :], atol=1e-12)


def test_eig_float32_gives_complex64_and_batches():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    w, v = LA.eig(oar.to_tensor(a))
    assert str(w.dtype).endswith("complex64") and w.shape == [2, 3, 4] and v.shape == [2, 3, 4, 4]
    wn, vn = w.numpy().astype(np.complex128), v.numpy().astype(np.complex128)
    np.testing.assert_allclose(a @ vn, vn * wn[..., None, :], atol=1e-4)
    # eigvals agrees with eig and with the trace.
    np.testing.assert_allclose(LA.eigvals(oar.to_tensor(a)).numpy(), w.numpy(), atol=1e-6)
    np.testing.assert_allclose(wn.sum(-1).real, np.trace(a, axis1=-2, axis2=-1), atol=1e-4)


def test_eig_nonfinite_gives_nan():
    w, v = LA.eig(_t([[1.0, np.nan], [0.0, 1.0]]))
    assert np.isnan(w.numpy().real).all() and np.isnan(v.numpy().real).all()


def test_eig_eigenvector_gradient_finite_differences():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3))
    wts = rng.standard_normal((3, 3))

    # |V_ij|^2 does not depend on each eigenvector's phase, so it is differentiable.
    def loss(x):
        w, v = LA.eig(x)
        return (oar.abs(v) ** 2 * _t(wts)).sum() + oar.real(w).sum() * 0.5

    x = _t(a)
    x.stop_gradient = False
    loss(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), _fd(lambda b: float(loss(_t(b)).item()), a), atol=1e-6)


# ---------------------------------------------------------------- LU

def test_lu_matches_paddle_conventions():
    # Values from Paddle 3.3.1: paddle.linalg.lu on this matrix.
    x = _t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
    lu, piv, info = LA.lu(x, get_infos=True)
    np.testing.assert_allclose(lu.numpy(), [[7.0, 8.0, 10.0], [1 / 7, 6 / 7, 11 / 7], [4 / 7, 0.5, -0.5]],
                               atol=1e-12)
    assert piv.numpy().tolist() == [3, 3, 3] and str(piv.dtype).endswith("int32")
    assert info.shape == [] and info.item() == 0 and str(info.dtype).endswith("int32")
    assert len(LA.lu(x)) == 2


def test_lu_infos_report_singular_and_shapes():
    lu, piv, info = LA.lu(oar.zeros([2, 2]), get_infos=True)
    assert info.item() == 1 and piv.numpy().tolist() == [1, 2]
    _, piv, info = LA.lu(oar.ones([2, 4, 3]), get_infos=True)
    assert piv.shape == [2, 3] and info.shape == [2] and info.numpy().tolist() == [2, 2]
    assert LA.lu(oar.ones([3, 5]))[1].shape == [3]


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 4)])
def test_lu_unpack_reconstructs(shape):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(shape)
    p, low, up = LA.lu_unpack(*LA.lu(_t(a)))
    m, n = shape[-2:]
    k = min(m, n)
    assert p.shape == list(shape[:-2]) + [m, m] and low.shape == list(shape[:-2]) + [m, k]
    assert up.shape == list(shape[:-2]) + [k, n]
    pn, ln, un = p.numpy(), low.numpy(), up.numpy()
    np.testing.assert_allclose(pn @ ln @ un, a, atol=1e-12)
    np.testing.assert_allclose(np.tril(ln, -1) + np.eye(m, k), ln, atol=0)
    np.testing.assert_allclose(np.triu(un), un, atol=0)
    # Partial pivoting keeps |L| <= 1.
    assert np.abs(ln).max() <= 1.0 + 1e-12


def test_lu_unpack_flags_give_empty_tensors():
    lu, piv = LA.lu(oar.eye(3))
    p, low, up = LA.lu_unpack(lu, piv, unpack_ludata=False)
    assert p.shape == [3, 3] and low.shape == [0] and up.shape == [0]
    p, low, up = LA.lu_unpack(lu, piv, unpack_pivots=False)
    assert p.shape == [0] and low.shape == [3, 3] and up.shape == [3, 3]


def test_lu_nopivot_and_errors():
    with pytest.raises(ValueError, match=r"^\[oar.linalg.lu\]"):
        LA.lu(oar.eye(2), pivot=False)
    with pytest.raises(ValueError, match=r"^\[oar.linalg.lu_unpack\] pivots"):
        LA.lu_unpack(oar.eye(2), oar.to_tensor(np.array([0, 2], dtype=np.int32)))


def test_lu_solve_broadcasts_batches():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((2, 3, 2))
    lu, piv = LA.lu(_t(a))
    x = LA.lu_solve(_t(b), lu, piv)
    np.testing.assert_allclose(a @ x.numpy(), b, atol=1e-12)


# ---------------------------------------------------------------- triangular solve

def test_triangular_solve_reads_one_triangle_and_broadcasts():
    x = np.array([[2.0, 1.0], [99.0, 4.0]])  # 99 lies outside the upper triangle
    y = np.ones((3, 2, 1))
    out = LA.triangular_solve(_t(x), _t(y))
    assert out.shape == [3, 2, 1]
    np.testing.assert_allclose(out.numpy()[0], np.linalg.solve(np.triu(x), y[0]), atol=1e-14)
    unit = LA.triangular_solve(_t(x), _t(y[0]), upper=False, unitriangular=True)
    np.testing.assert_allclose(unit.numpy(), [[1.0], [1.0 - 99.0]], atol=1e-12)


def test_triangular_solve_zero_pivot_gives_inf_and_checks_shapes():
    out = LA.triangular_solve(_t([[0.0, 1.0], [0.0, 1.0]]), _t([[1.0], [1.0]]))
    assert not np.isfinite(out.numpy()).all()
    with pytest.raises(ValueError, match=r"^\[oar.linalg.triangular_solve\]"):
        LA.triangular_solve(oar.eye(3), oar.ones([2, 1]))


# ---------------------------------------------------------------- lstsq

# Output shapes and dtypes per driver from Paddle 3.3.1 for x [4, 3], y [4, 2] float64.
_LSTSQ_PADDLE = {
    None: ([3, 2], [0], ([], "int32"), [0]),
    "gels": ([3, 2], [2], ([0], "int64"), [0]),
    "gelsy": ([3, 2], [0], ([], "int32"), [0]),
    "gelsd": ([3, 2], [2], ([], "int32"), [3]),
    "gelss": ([3, 2], [2], ([], "int32"), [3]),
}


@pytest.mark.parametrize("driver", list(_LSTSQ_PADDLE))
def test_lstsq_outputs_per_driver(driver):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    sol, res, rank, sv = LA.lstsq(_t(a), _t(b), driver=driver)
    s_shape, r_shape, (k_shape, k_dtype), v_shape = _LSTSQ_PADDLE[driver]
    assert sol.shape == s_shape and res.shape == r_shape and sv.shape == v_shape
    assert rank.shape == k_shape and str(rank.dtype).endswith(k_dtype)
    # The normal equations hold at the least-squares solution.
    np.testing.assert_allclose(a.T @ (a @ sol.numpy() - b), 0.0, atol=1e-12)
    if res.shape == [2]:
        np.testing.assert_allclose(res.numpy(), ((a @ sol.numpy() - b) ** 2).sum(0), atol=1e-12)
    if k_shape == []:
        assert rank.item() == 3
    if v_shape == [3]:
        np.testing.assert_allclose(sv.numpy(), np.linalg.svd(a, compute_uv=False), atol=1e-12)


def test_lstsq_rank_deficient_gives_minimum_norm():
    a = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    b = np.array([[2.0], [2.0], [0.0]])
    sol, res, rank, _ = LA.lstsq(_t(a), _t(b), driver="gelsd")
    np.testing.assert_allclose(sol.numpy(), [[1.0], [1.0]], atol=1e-12)
    assert rank.item() == 1 and res.shape == [0]


# ---------------------------------------------------------------- matrix_exp

def test_matrix_exp_closed_forms():
    t = 3.0
    rot = LA.matrix_exp(_t([[0.0, -t], [t, 0.0]]))
    np.testing.assert_allclose(rot.numpy(), [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], atol=1e-13)
    big = LA.matrix_exp(_t(np.diag([10.0, -10.0])))
    np.testing.assert_allclose(np.diag(big.numpy()), [np.exp(10.0), np.exp(-10.0)], rtol=1e-13)
    # exp(A) exp(-A) = I.
    a = np.random.default_rng(5).standard_normal((2, 3, 3))
    prod = LA.matrix_exp(_t(a)).numpy() @ LA.matrix_exp(_t(-a)).numpy()
    np.testing.assert_allclose(prod, np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-12)


# ---------------------------------------------------------------- Householder

def test_householder_product_orthonormal_and_ormqr_consistent():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 3))
    # tau = 2 / |v|^2 makes each H_i an exact reflection.
    v = np.tril(x, -1) + np.eye(5, 3)
    tau = 2.0 / (v ** 2).sum(0)
    q = LA.householder_product(_t(x), _t(tau)).numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-12)
    y = rng.standard_normal((5, 2))
    qy = LA.ormqr(_t(x), _t(tau), _t(y)).numpy()
    back = LA.ormqr(_t(x), _t(tau), _t(qy), transpose=True).numpy()
    np.testing.assert_allclose(back, y, atol=1e-12)
    # The first columns of the full Q are householder_product's.
    full = LA.ormqr(_t(x), _t(tau), oar.eye(5, dtype="float64")).numpy()
    np.testing.assert_allclose(full[:, :3], q, atol=1e-12)


# ---------------------------------------------------------------- cov, corrcoef

def test_cov_matches_numpy_cov_and_int_input():
    rng = np.random.default_rng(7)
    x = rng.integers(-5, 5, size=(3, 6))
    fw, aw = np.array([1, 2, 1, 3, 1, 2]), rng.random(6)
    got = LA.cov(oar.to_tensor(x), fweights=oar.to_tensor(fw), aweights=_t(aw))
    assert str(got.dtype).endswith("float32")
    np.testing.assert_allclose(got.numpy(), np.cov(x, fweights=fw, aweights=aw), rtol=1e-5)
    assert LA.cov(_t(x[0])).shape == []
    np.testing.assert_allclose(LA.corrcoef(_t(x)).numpy(), np.corrcoef(x), atol=1e-12)


# ---------------------------------------------------------------- low rank

def test_svd_lowrank_shapes_and_values():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((7, 3)) @ rng.standard_normal((3, 5))
    u, s, v = LA.svd_lowrank(_t(a))
    assert u.shape == [7, 5] and s.shape == [5] and v.shape == [5, 5]
    np.testing.assert_allclose(s.numpy()[:3], np.linalg.svd(a, compute_uv=False)[:3], rtol=1e-10)
    m = np.ones((7, 5))
    u, s, v = LA.svd_lowrank(_t(a + m), q=3, M=_t(m))
    np.testing.assert_allclose(u.numpy() @ np.diag(s.numpy()) @ v.numpy().T, a, atol=1e-10)


def test_pca_lowrank_default_q_and_centering():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((8, 7))
    u, s, v = LA.pca_lowrank(_t(a))
    assert u.shape == [8, 6] and s.shape == [6] and v.shape == [7, 6]
    centred = a - a.mean(0)
    ref = np.linalg.svd(centred, compute_uv=False)
    # Randomised with 2 power iterations: the leading values are close.
    np.testing.assert_allclose(s.numpy()[:2], ref[:2], rtol=1e-2)


# ---------------------------------------------------------------- Tensor methods and names

_METHODS = ("cholesky_inverse", "corrcoef", "cov", "eig", "eigvals", "householder_product", "lstsq", "lu",
            "lu_unpack", "pinv", "slogdet", "multi_dot", "diagflat", "ormqr", "pca_lowrank", "svd_lowrank")


@pytest.mark.parametrize("name", _METHODS)
def test_tensor_methods_exist(name):
    assert callable(getattr(oar.Tensor, name))


def test_tensor_methods_compute():
    a = _t([[4.0, 2.0], [2.0, 5.0]])
    np.testing.assert_allclose(a.pinv().numpy(), np.linalg.inv(a.numpy()), atol=1e-12)
    np.testing.assert_allclose(a.slogdet().numpy(), [1.0, np.log(16.0)], atol=1e-12)
    np.testing.assert_allclose(np.sort(a.eigvals().numpy().real), np.linalg.eigvalsh(a.numpy()), atol=1e-12)
    assert a.lu()[1].numpy().tolist() == [1, 2]
    assert _t([1.0, 2.0]).diagflat().numpy().tolist() == [[1.0, 0.0], [0.0, 2.0]]
    low = LA.cholesky(a)
    np.testing.assert_allclose(low.cholesky_inverse().numpy(), np.linalg.inv(a.numpy()), atol=1e-12)


def test_linalg_diagonal_is_paddles():
    x = oar.arange(24).reshape([2, 3, 4])
    assert LA.diagonal(x).shape == [4, 2]
    assert LA.diagonal(x, 1, 1, 2).numpy().tolist() == [[1, 6, 11], [13, 18, 23]]
