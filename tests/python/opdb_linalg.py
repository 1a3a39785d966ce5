"""Op-database entries for paddle.linalg's factorisations and solvers
(python/oar/linalg.py): eig, eigvals, lu, lu_unpack, lu_solve,
triangular_solve, lstsq, matrix_exp, householder_product, ormqr, cov,
corrcoef, svd_lowrank, pca_lowrank.

References are written here in NumPy, independently of oar's algorithms: LU
by Doolittle elimination with LAPACK's pivot choice, the matrix exponential
by its Taylor series after scaling, Householder products by forming each
reflector, covariance by its defining sums. Functions whose results are fixed
only up to order or phase (eig, the randomised low-rank SVD) are checked
through quantities that are not: the reconstruction V diag(w) V^-1 and the
power sums of the eigenvalues (equal to the traces of the powers of x).
"""
import numpy as np

import oar
from opdb import COMPLEX, ErrorInput, OpInfo, Sample, register

F32_64 = ("float32", "float64")
INEXACT2 = F32_64 + COMPLEX
LA = oar.linalg


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.linalg.{name}]")


def _rand(dtype, seed):
    rng = np.random.default_rng(seed)

    def make(*shape):
        v = rng.uniform(-1.0, 1.0, size=shape)
        if dtype in COMPLEX:
            v = v + 1j * rng.uniform(-1.0, 1.0, size=shape)
        return v
    return make


def _well(dtype, seed, *shape):
    """Random square matrices made well conditioned by a dominant diagonal."""
    a = _rand(dtype, seed)(*shape)
    return a + 3.0 * np.eye(shape[-1])


def _mh(a):
    return np.conj(np.swapaxes(a, -1, -2))


# ---------------------------------------------------------------- LU

def _np_lu(a):
    """Packed LU and 1-based pivots of one matrix, pivoting on the largest |re| + |im| (LAPACK's choice)."""
    a = np.array(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64)
    m, n = a.shape
    k = min(m, n)
    piv = np.zeros(k, dtype=np.int64)
    for j in range(k):
        mag = np.abs(a[j:, j].real) + np.abs(a[j:, j].imag)
        p = j + int(np.argmax(mag))
        piv[j] = p + 1
        a[[j, p]] = a[[p, j]]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
            a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, piv


def _batched(f, a):
    if a.ndim == 2:
        return f(a)
    outs = [_batched(f, x) for x in a]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o) for o in zip(*outs))
    return np.stack(outs)


def _lu_samples(dtype):
    r = _rand(dtype, 1)
    return [Sample((r(3, 3),)), Sample((r(4, 3),)), Sample((r(3, 5),)), Sample((r(2, 3, 3),)),
            Sample((r(3, 3),), noncontig=True), Sample((r(0, 3),), grad=False), Sample((r(2, 0, 0),), grad=False)]


register(OpInfo("linalg.lu", lambda x: LA.lu(x)[0], lambda a: _batched(lambda m: _np_lu(m)[0], a), INEXACT2,
                _lu_samples, grad=True, complex_grad=True,
                errors=lambda: [_err(lambda: LA.lu(oar.ones([3])), ValueError, "lu"),
                                _err(lambda: LA.lu(oar.ones([2, 2]), pivot=False), ValueError, "lu"),
                                _err(lambda: LA.lu([[1.0]]), TypeError, "lu")]))

register(OpInfo("linalg.lu_pivots", lambda x: LA.lu(x)[1], lambda a: _batched(lambda m: _np_lu(m)[1], a), INEXACT2,
                _lu_samples, out_dtype=lambda d: "int32"))


def _np_unpack(lu_, piv):
    m, n = lu_.shape
    k = min(m, n)
    perm = list(range(m))
    for i, p in enumerate(piv):
        perm[i], perm[p - 1] = perm[p - 1], perm[i]
    pm = np.zeros((m, m))
    pm[perm, range(m)] = 1.0
    return pm @ (np.tril(lu_, -1)[:, :k] + np.eye(m, k)) @ np.triu(lu_)[:k, :]


def _unpack_samples(dtype):
    r = _rand(dtype, 2)
    out = []
    for shape in ((3, 3), (4, 2), (2, 4)):
        a = r(*shape)
        lu_, piv = _np_lu(a)
        out.append(Sample((lu_.real if dtype not in COMPLEX else lu_, oar.to_tensor(piv.astype(np.int32)))))
    return out


def _reconstruct(lu_, piv):
    p, lo, up = LA.lu_unpack(lu_, piv)
    return p @ lo @ up


register(OpInfo("linalg.lu_unpack", _reconstruct, _np_unpack, INEXACT2, _unpack_samples, grad=True, complex_grad=True,
                errors=lambda: [_err(lambda: LA.lu_unpack(oar.ones([3, 3]), oar.ones([2], "int32")), ValueError,
                                     "lu_unpack"),
                                _err(lambda: LA.lu_unpack(oar.ones([2, 2]), oar.to_tensor([3, 2], "int32")),
                                     ValueError, "lu_unpack")]))


def _lu_solve_samples(dtype):
    r = _rand(dtype, 3)
    out = []
    for a_shape, b_shape, trans in (((3, 3), (3, 2), "N"), ((3, 3), (3, 1), "T"), ((3, 3), (3, 2), "C"),
                                    ((2, 3, 3), (2, 3, 1), "N")):
        a = _well(dtype, 4, *a_shape)
        lu_, piv = _batched(_np_lu, a)
        out.append(Sample((r(*b_shape), lu_, oar.to_tensor(piv.astype(np.int32))), {"trans": trans}))
    return out


def _np_lu_solve(b, lu_, piv, trans="N"):
    a = _np_unpack(lu_, piv) if lu_.ndim == 2 else np.stack([_np_unpack(x, p) for x, p in zip(lu_, piv)])
    if trans == "T":
        a = np.swapaxes(a, -1, -2)
    elif trans == "C":
        a = _mh(a)
    return np.linalg.solve(a, b)


register(OpInfo("linalg.lu_solve", LA.lu_solve, _np_lu_solve, INEXACT2, _lu_solve_samples, grad=True, complex_grad=True,
                errors=lambda: [_err(lambda: LA.lu_solve(oar.ones([3, 1]), *LA.lu(oar.eye(3)), trans="X"),
                                     ValueError, "lu_solve"),
                                _err(lambda: LA.lu_solve(oar.ones([2, 1]), *LA.lu(oar.eye(3))), ValueError,
                                     "lu_solve")]))


# ---------------------------------------------------------------- triangular solve

def _np_tri_solve(x, y, upper=True, transpose=False, unitriangular=False):
    a = np.triu(x) if upper else np.tril(x)
    if unitriangular:
        a = a - a * np.eye(x.shape[-1]) + np.eye(x.shape[-1])
    if transpose:
        a = np.swapaxes(a, -1, -2)
    b = np.broadcast_shapes(a.shape[:-2], y.shape[:-2])
    return np.linalg.solve(np.broadcast_to(a, b + a.shape[-2:]), np.broadcast_to(y, b + y.shape[-2:]))


def _tri_samples(dtype):
    r = _rand(dtype, 5)
    out = []
    for up in (True, False):
        for tr in (True, False):
            for un in (True, False):
                out.append(Sample((_well(dtype, 6, 3, 3), r(3, 2)),
                                  {"upper": up, "transpose": tr, "unitriangular": un}))
    out += [Sample((_well(dtype, 7, 2, 1, 3, 3), r(4, 3, 1))), Sample((_well(dtype, 8, 3, 3), r(3, 2)), noncontig=True),
            Sample((r(0, 0), r(0, 2)), grad=False)]
    return out


register(OpInfo("linalg.triangular_solve", LA.triangular_solve, _np_tri_solve, INEXACT2, _tri_samples, grad=True,
                gradgrad=True, complex_grad=True,
                errors=lambda: [_err(lambda: LA.triangular_solve(oar.eye(2), oar.ones([2])), ValueError,
                                     "triangular_solve"),
                                _err(lambda: LA.triangular_solve(oar.ones([2, 3]), oar.ones([2, 1])), ValueError,
                                     "triangular_solve")]))


# ---------------------------------------------------------------- least squares

def _np_lstsq(x, y, rcond=None, driver=None):
    return np.linalg.pinv(x) @ y


def _lstsq_samples(dtype):
    r = _rand(dtype, 9)
    return [Sample((r(5, 3), r(5, 2))), Sample((r(3, 3), r(3, 1)), {"driver": "gelsd"}),
            Sample((r(2, 4), r(2, 2)), {"driver": "gelss"}), Sample((r(2, 4, 3), r(2, 4, 1)), {"driver": "gels"})]


register(OpInfo("linalg.lstsq", lambda x, y, **kw: LA.lstsq(x, y, **kw)[0], _np_lstsq, INEXACT2, _lstsq_samples,
                grad=True, tol={"float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4)},
                errors=lambda: [_err(lambda: LA.lstsq(oar.ones([3, 2]), oar.ones([3, 1]), driver="qr"), ValueError,
                                     "lstsq"),
                                _err(lambda: LA.lstsq(oar.ones([3, 2]), oar.ones([2, 1])), ValueError, "lstsq"),
                                _err(lambda: LA.lstsq(oar.ones([3, 2]), oar.ones([3, 1], "float64")), TypeError,
                                     "lstsq")]))


# ---------------------------------------------------------------- matrix exponential

def _np_expm(a):
    """Taylor series of exp(a / 2^s), then s squarings."""
    norm = np.max(np.sum(np.abs(a), axis=-2)) if a.size else 0.0
    s = max(0, int(np.ceil(np.log2(norm))) + 1) if norm > 0 else 0
    x = a / 2.0 ** s
    term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).astype(a.dtype)
    total = term.copy()
    for k in range(1, 40):
        term = term @ x / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return total


def _expm_samples(dtype):
    r = _rand(dtype, 10)
    return [Sample((r(3, 3),)), Sample((4.0 * r(2, 2),)), Sample((8.0 * r(2, 2, 2),)), Sample((r(1, 1),)),
            Sample((r(3, 3),), noncontig=True), Sample((r(0, 0),), grad=False)]


register(OpInfo("linalg.matrix_exp", LA.matrix_exp, _np_expm, INEXACT2, _expm_samples, grad=True, complex_grad=True,
                tol={"float32": (1e-4, 1e-5), "complex64": (1e-4, 1e-5), "float64": (1e-9, 1e-10)},
                errors=lambda: [_err(lambda: LA.matrix_exp(oar.ones([2, 3])), ValueError, "matrix_exp"),
                                _err(lambda: LA.matrix_exp(oar.ones([2, 2], "int64")), TypeError, "matrix_exp")]))


# ---------------------------------------------------------------- Householder products

def _np_reflectors_q(x, tau):
    """The full product H_1 ... H_k."""
    m = x.shape[0]
    q = np.eye(m, dtype=np.result_type(x, tau))
    for i in range(tau.shape[0]):
        v = np.zeros(m, dtype=q.dtype)
        v[i] = 1.0
        v[i + 1:] = x[i + 1:, i]
        q = q @ (np.eye(m) - tau[i] * np.outer(v, np.conj(v)))
    return q


def _np_hh(x, tau):
    if x.ndim > 2:
        return np.stack([_np_hh(a, t) for a, t in zip(x, tau)])
    return _np_reflectors_q(x, tau)[:, :x.shape[1]]


def _hh_samples(dtype):
    r = _rand(dtype, 11)
    return [Sample((r(4, 3), r(3))), Sample((r(4, 3), r(2))), Sample((r(3, 3), r(3))), Sample((r(2, 3, 2), r(2, 2))),
            Sample((r(4, 3), r(3)), noncontig=True)]


register(OpInfo("linalg.householder_product", LA.householder_product, _np_hh, INEXACT2, _hh_samples, grad=True,
                complex_grad=True,
                errors=lambda: [_err(lambda: LA.householder_product(oar.ones([2, 3]), oar.ones([2])), ValueError,
                                     "householder_product"),
                                _err(lambda: LA.householder_product(oar.ones([3, 2]), oar.ones([3])), ValueError,
                                     "householder_product"),
                                _err(lambda: LA.householder_product(oar.ones([3, 2]), oar.ones([2], "float64")),
                                     TypeError, "householder_product")]))


def _np_ormqr(x, tau, y, left=True, transpose=False):
    if x.ndim > 2:
        return np.stack([_np_ormqr(a, t, b, left, transpose) for a, t, b in zip(x, tau, y)])
    q = _np_reflectors_q(x, tau)
    if transpose:
        q = _mh(q)
    return q @ y if left else y @ q


def _ormqr_samples(dtype):
    r = _rand(dtype, 12)
    out = []
    for left in (True, False):
        for tr in (True, False):
            out.append(Sample((r(3, 3), r(3), r(3, 2) if left else r(2, 3)), {"left": left, "transpose": tr}))
    out += [Sample((r(4, 2), r(2), r(4, 2))), Sample((r(2, 3, 3), r(2, 2), r(2, 3, 1)), {"transpose": True})]
    return out


register(OpInfo("linalg.ormqr", LA.ormqr, _np_ormqr, INEXACT2, _ormqr_samples, grad=True, complex_grad=True,
                errors=lambda: [_err(lambda: LA.ormqr(oar.ones([3, 3]), oar.ones([3]), oar.ones([2, 2])),
                                     ValueError, "ormqr"),
                                _err(lambda: LA.ormqr(oar.ones([3, 3]), oar.ones([3]), oar.ones([3])), ValueError,
                                     "ormqr")]))


# ---------------------------------------------------------------- covariance

def _np_cov(x, rowvar=True, ddof=True, fweights=None, aweights=None):
    x = np.atleast_2d(np.asarray(x, dtype=np.result_type(x, np.float64)))
    if not rowvar and x.shape[0] != 1:
        x = x.T
    n = x.shape[1]
    w = np.ones(n)
    if fweights is not None:
        w = w * fweights
    if aweights is not None:
        w = w * aweights
    v1 = w.sum()
    mean = (x * w).sum(axis=1, keepdims=True) / v1
    if not ddof:
        fact = v1
    elif aweights is None:
        fact = v1 - 1
    else:
        fact = v1 - (w * aweights).sum() / v1
    xc = x - mean
    c = (xc * w) @ np.conj(xc.T) / fact
    return c.reshape(()) if c.shape == (1, 1) else c


def _cov_samples(dtype):
    r = _rand(dtype, 13)
    fw = oar.to_tensor(np.array([1, 2, 1, 3, 2], dtype=np.int64))
    aw = oar.to_tensor(np.array([0.5, 1.0, 2.0, 1.5, 0.25]))
    return [Sample((r(3, 5),)), Sample((r(5, 3),), {"rowvar": False}), Sample((r(5),)),
            Sample((r(2, 5),), {"ddof": False}),
            Sample((r(2, 5),), {"fweights": fw}), Sample((r(2, 5),), {"aweights": aw}),
            Sample((r(2, 5),), {"fweights": fw, "aweights": aw, "ddof": False}), Sample((r(3, 4),), noncontig=True)]


def _cov_ref(x, rowvar=True, ddof=True, fweights=None, aweights=None):
    f = None if fweights is None else fweights.numpy()
    a = None if aweights is None else aweights.numpy()
    return _np_cov(x, rowvar, ddof, f, a)


register(OpInfo("linalg.cov", LA.cov, _cov_ref, INEXACT2, _cov_samples, grad=True, complex_grad=True,
                errors=lambda: [_err(lambda: LA.cov(oar.ones([2, 2, 2])), ValueError, "cov"),
                                _err(lambda: LA.cov(oar.ones([2, 3]), fweights=oar.ones([3])), TypeError, "cov"),
                                _err(lambda: LA.cov(oar.ones([2, 3]), aweights=oar.ones([2])), ValueError, "cov"),
                                _err(lambda: LA.cov(oar.ones([2, 3]), fweights=oar.to_tensor([1, -1, 1])),
                                     ValueError, "cov")]))


def _np_corrcoef(x, rowvar=True):
    c = _np_cov(x, rowvar)
    if c.ndim == 0:
        return c / c
    d = np.sqrt(np.diag(c).real)
    c = c / d[:, None] / d[None, :]
    if np.iscomplexobj(c):
        return np.clip(c.real, -1, 1) + 1j * np.clip(c.imag, -1, 1)
    return np.clip(c, -1, 1)


def _corr_samples(dtype):
    r = _rand(dtype, 14)
    return [Sample((r(3, 5),)), Sample((r(5, 2),), {"rowvar": False}), Sample((r(4),))]


register(OpInfo("linalg.corrcoef", LA.corrcoef, _np_corrcoef, INEXACT2, _corr_samples, grad=True,
                errors=lambda: [_err(lambda: LA.corrcoef(oar.ones([1, 2, 3])), ValueError, "corrcoef")]))


# ---------------------------------------------------------------- eigen

def _eig_reconstruct(x):
    w, v = LA.eig(x)
    return v @ (w.unsqueeze(-1) * LA.inv(v))


def _eig_samples(dtype):
    r = _rand(dtype, 15)
    rot = np.array([[0.0, -2.0], [2.0, 0.0]])
    return [Sample((r(3, 3),)), Sample((r(2, 4, 4),)), Sample((rot + 0.1 * r(2, 2),)),
            Sample((r(3, 3),), noncontig=True)]


def _complex_out(d):
    return "complex128" if d in ("float64", "complex128") else "complex64"


register(OpInfo("linalg.eig", _eig_reconstruct, lambda x: x.astype(np.complex128), INEXACT2, _eig_samples,
                out_dtype=_complex_out, grad=True, complex_grad=True,
                tol={"float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4)},
                errors=lambda: [_err(lambda: LA.eig(oar.ones([2, 3])), ValueError, "eig"),
                                _err(lambda: LA.eig(oar.ones([3])), ValueError, "eig")]))


def _power_sums(x):
    w = LA.eigvals(x)
    return oar.stack([w.sum(-1), (w * w).sum(-1), (w * w * w).sum(-1)], axis=-1)


def _np_trace_powers(x):
    x2 = x @ x
    return np.stack([np.trace(p, axis1=-2, axis2=-1) for p in (x, x2, x2 @ x)], axis=-1).astype(np.complex128)


register(OpInfo("linalg.eigvals", _power_sums, _np_trace_powers, INEXACT2, _eig_samples, out_dtype=_complex_out,
                grad=True, complex_grad=True, tol={"float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4)},
                errors=lambda: [_err(lambda: LA.eigvals(oar.ones([2, 3])), ValueError, "eigvals")]))


# ---------------------------------------------------------------- randomised low-rank SVD

def _low_rank(dtype, seed, m, n, rank):
    r = _rand(dtype, seed)
    return r(m, rank) @ r(rank, n)


def _svd_lr_reconstruct(x, **kw):
    u, s, v = LA.svd_lowrank(x, **kw)
    return (u * s.astype(u.dtype).unsqueeze(-2)) @ v.conj().transpose([*range(v.ndim - 2), v.ndim - 1, v.ndim - 2])


def _svd_lr_samples(dtype):
    return [Sample((_low_rank(dtype, 16, 6, 5, 2),), {"q": 3}, grad=False),
            Sample((_low_rank(dtype, 17, 4, 7, 3),), {"q": 3, "niter": 1}, grad=False),
            Sample((_low_rank(dtype, 18, 5, 5, 5),), grad=False)]


def _svd_lr_ref(x, q=None, niter=2, M=None):
    return x


register(OpInfo("linalg.svd_lowrank", _svd_lr_reconstruct, _svd_lr_ref, INEXACT2, _svd_lr_samples,
                tol={"float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4), "float64": (1e-9, 1e-9)},
                errors=lambda: [_err(lambda: LA.svd_lowrank(oar.ones([3, 2]), q=3), ValueError, "svd_lowrank"),
                                _err(lambda: LA.svd_lowrank(oar.ones([3, 2]), niter=-1), ValueError, "svd_lowrank")]))


def _pca_reconstruct(x, **kw):
    u, s, v = LA.pca_lowrank(x, **kw)
    return (u * s.astype(u.dtype).unsqueeze(-2)) @ v.conj().transpose([*range(v.ndim - 2), v.ndim - 1, v.ndim - 2])


def _pca_ref(x, q=None, center=True, niter=2):
    return x - x.mean(axis=-2, keepdims=True) if center else x


def _pca_samples(dtype):
    return [Sample((_low_rank(dtype, 19, 6, 4, 2),), {"q": 3}, grad=False),
            Sample((_low_rank(dtype, 20, 5, 3, 2),), {"q": 2, "center": False}, grad=False)]


register(OpInfo("linalg.pca_lowrank", _pca_reconstruct, _pca_ref, F32_64, _pca_samples,
                tol={"float32": (1e-4, 1e-4), "float64": (1e-9, 1e-9)},
                errors=lambda: [_err(lambda: LA.pca_lowrank(oar.ones([3, 2]), q=5), ValueError, "pca_lowrank")]))
