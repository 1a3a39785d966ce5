"""Linear algebra (``paddle.linalg``): decompositions on LAPACK and what is
built on them.

svd, eigh, eig, qr, lu, inv, det, slogdet, solve, triangular_solve and
cholesky are ops with their own kernels and gradient rules
(src/ops/linalg_lapack.cpp); they and the functions that are one call of
them (svdvals, eigvalsh, eigvals, matrix_power) are declared in
src/ops/linalg_lapack.toml and come from the generated _linalg_ops_gen. The
rest, written here, are composites of them and of the elementwise/reduction
ops, so gradients flow through them too. Every function works on the last
two dims and batches over the leading ones.
"""
import builtins
import math
import numbers

import numpy as np

from . import _C
from . import _linalg_ops_gen
from ._linalg_ops_gen import *  # noqa: F401,F403  the declared functions (src/ops/linalg_lapack.toml)
from ._linalg_ops_gen import eigh, eigvalsh, inv, qr, solve, svd, svdvals
from ._C import matmul
from ._linalg_ext import cross
from ._manip import diagonal, tril, triu
from ._random import randn
from ._C import norm
from .creation import eye, full_like, ones_like, to_tensor, zeros, zeros_like

__all__ = list(_linalg_ops_gen.__all__) + [  # and those written here
    "pinv", "matrix_rank", "cond", "multi_dot", "norm", "vector_norm", "matrix_norm", "cholesky_solve",
    "cholesky_inverse", "matrix_transpose", "vecdot", "matmul", "cross", "lu_unpack", "lu_solve", "lstsq",
    "matrix_exp", "householder_product", "ormqr", "cov", "corrcoef", "svd_lowrank", "pca_lowrank", "diagonal",
]

_EPS = {"float32": 1.1920928955078125e-07, "float64": 2.220446049250313e-16,
        "complex64": 1.1920928955078125e-07, "complex128": 2.220446049250313e-16}


def _mT(x):
    perm = list(range(len(x.shape)))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return _C.transpose(x, perm)


def _mH(x):
    return _C.conj(_mT(x))


def _dtype_name(x):
    return str(x.dtype).split(".")[-1]


def _is_complex(x):
    return _dtype_name(x).startswith("complex")


def _check_matrix(x, api):
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{api}] x must be a Tensor, got {type(x).__name__}")
    if len(x.shape) < 2:
        raise ValueError(f"[{api}] x must have at least 2 dims [..., M, N], got shape {list(x.shape)}")


def pinv(x, rcond=1e-15, hermitian=False, name=None):
    """Moore-Penrose pseudo-inverse from the SVD (or, with hermitian=True, the
    eigendecomposition); singular values at most rcond * the largest one are
    treated as zero.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 0.0], [0.0, 0.0]])
    >>> oar.linalg.pinv(x).numpy().tolist()
    [[1.0, 0.0], [0.0, 0.0]]
    """
    _check_matrix(x, "oar.linalg.pinv")
    if hermitian:
        w, v = eigh(x)
        s, left, right = _C.abs(w), v, _mH(v)
    else:
        u, s, vh = svd(x)
        left, right = _mH(vh), _mH(u)
    if s.shape[-1] == 0:
        return _C.matmul(left, right)
    cutoff = _C.multiply(_C.amax(s, [-1], True), float(rcond))
    keep = _C.greater_than(s, cutoff)
    safe = _C.where(keep, s, ones_like(s))
    inv_s = _C.where(keep, _C.reciprocal(safe), zeros_like(s))
    if hermitian:
        # 1/w keeps the eigenvalue's sign: w = |w| sign(w).
        inv_s = _C.multiply(inv_s, _C.sign(w))
    inv_s = _C.cast(inv_s, left.dtype) if _is_complex(left) else inv_s
    return _C.matmul(_C.multiply(left, _C.unsqueeze(inv_s, [-2])), right)


def matrix_rank(x, tol=None, hermitian=False, atol=None, rtol=None, name=None):
    """Number of singular values (absolute eigenvalues with hermitian=True)
    above a threshold: tol if given; else max(atol, rtol * the largest); by
    default largest * max(M, N) * eps of x's dtype. Returns int64.

    >>> import oar
    >>> oar.linalg.matrix_rank(oar.eye(4)).item()
    4
    >>> oar.linalg.matrix_rank(oar.ones([3, 3])).item()
    1
    """
    _check_matrix(x, "oar.linalg.matrix_rank")
    if tol is not None and (atol is not None or rtol is not None):
        raise ValueError("[oar.linalg.matrix_rank] give either tol or atol/rtol, not both")
    xf = x if _dtype_name(x) in _EPS else _C.cast(x, "float32")
    s = _C.abs(eigvalsh(xf)) if hermitian else svdvals(xf)
    m, n = x.shape[-2], x.shape[-1]
    if s.shape[-1] == 0:
        return zeros(list(s.shape[:-1]), "int64")
    smax = _C.amax(s, [-1], True)
    if tol is not None:
        thr = tol if isinstance(tol, _C.Tensor) else float(tol)
        if isinstance(thr, _C.Tensor) and len(thr.shape) > 0:
            thr = _C.unsqueeze(thr, [-1])
    else:
        eps = _EPS[_dtype_name(s)]
        a = 0.0 if atol is None else atol
        if rtol is None:
            a_pos = isinstance(a, _C.Tensor) or a > 0
            r = 0.0 if a_pos else builtins.max(m, n) * eps
        else:
            r = rtol
        rel = _C.multiply(smax, r if not isinstance(r, _C.Tensor) else _C.unsqueeze(r, [-1]))
        thr = _C.maximum(rel, full_like(rel, a) if not isinstance(a, _C.Tensor) else _C.unsqueeze(a, [-1]))
    big = _C.greater_than(s, thr if isinstance(thr, _C.Tensor) else full_like(s, thr))
    return _C.sum(_C.cast(big, "int64"), [-1])


def cond(x, p=None, name=None):
    """Condition number of x in the norm p: None or 2 (ratio of the largest
    to the smallest singular value), -2 (the inverse ratio), or 'fro', 'nuc',
    1, -1, inf, -inf (norm(x) * norm(inv(x)), square x only).

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 0.0], [0.0, 4.0]])
    >>> oar.linalg.cond(x).item()
    4.0
    """
    _check_matrix(x, "oar.linalg.cond")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svdvals(x)
        if s.shape[-1] == 0:
            raise ValueError(f"[oar.linalg.cond] x must not be empty, got shape {list(x.shape)}")
        big, small = _C.amax(s, [-1]), _C.amin(s, [-1])
        return _C.divide(small, big) if p == -2 else _C.divide(big, small)
    ok = p in ("fro", "nuc") if isinstance(p, str) else p in (1, -1, float("inf"), float("-inf"))
    if not ok:
        raise ValueError(f"[oar.linalg.cond] p must be None, 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {p!r}")
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"[oar.linalg.cond] p={p!r} needs square matrices, got shape {list(x.shape)}")
    return _C.multiply(matrix_norm(x, p), matrix_norm(inv(x), p))


def multi_dot(x, name=None):
    """Product of a list of matrices in the cheapest association order. The
    first may be 1-D (a row vector) and the last 1-D (a column vector).

    >>> import oar
    >>> a, b, c = oar.ones([2, 3]), oar.ones([3, 4]), oar.ones([4])
    >>> oar.linalg.multi_dot([a, b, c]).numpy().tolist()
    [12.0, 12.0]
    """
    if not isinstance(x, (list, tuple)) or len(x) < 2:
        raise ValueError("[oar.linalg.multi_dot] x must be a list of at least 2 tensors")
    ts = list(x)
    for i, t in enumerate(ts):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"[oar.linalg.multi_dot] x[{i}] must be a Tensor, got {type(t).__name__}")
        nd = len(t.shape)
        if not (nd == 2 or (nd == 1 and i in (0, len(ts) - 1))):
            raise ValueError(f"[oar.linalg.multi_dot] x[{i}] must be 2-D (the first and last may be 1-D), "
                             f"got shape {list(t.shape)}")
    first_vec, last_vec = len(ts[0].shape) == 1, len(ts[-1].shape) == 1
    if first_vec:
        ts[0] = _C.unsqueeze(ts[0], [0])
    if last_vec:
        ts[-1] = _C.unsqueeze(ts[-1], [1])
    for i in range(len(ts) - 1):
        if ts[i].shape[1] != ts[i + 1].shape[0]:
            raise ValueError(f"[oar.linalg.multi_dot] shapes do not chain: x[{i}] has {ts[i].shape[1]} columns, "
                             f"x[{i + 1}] has {ts[i + 1].shape[0]} rows")
    # Matrix-chain order by dynamic programming over the split points.
    k = len(ts)
    dims = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def chain(i, j):
        if i == j:
            return ts[i]
        s = split[i][j]
        return _C.matmul(chain(i, s), chain(s + 1, j))

    out = chain(0, k - 1)
    if first_vec:
        out = _C.squeeze(out, [0])
    if last_vec:
        out = _C.squeeze(out, [-1])
    return out


def vector_norm(x, p=2.0, axis=None, keepdim=False, name=None):
    """Vector p-norm over all elements (axis None) or over the given axes:
    p = inf / -inf the largest / smallest magnitude, 0 the count of non-zeros.

    >>> import oar
    >>> x = oar.to_tensor([[3.0, -4.0], [0.0, 0.0]])
    >>> oar.linalg.vector_norm(x).item()
    5.0
    >>> oar.linalg.vector_norm(x, p=1, axis=[0, 1]).item()
    7.0
    """
    if isinstance(p, str) or isinstance(p, builtins.bool) or not isinstance(p, numbers.Real):
        raise ValueError(f"[oar.linalg.vector_norm] p must be a number, got {p!r}")
    if axis is None or isinstance(axis, numbers.Integral) or len(axis) <= 1:
        if axis is not None and not isinstance(axis, numbers.Integral):
            axis = list(axis)
        if axis is None and keepdim:
            out = norm(x, float(p), None, False)
            return _C.reshape(out, [1] * len(x.shape))
        return norm(x, float(p), axis, keepdim)
    nd = len(x.shape)
    ax = []
    for a in axis:
        if not -nd <= a < nd:
            raise IndexError(f"[oar.linalg.vector_norm] axis {a} is out of range for a tensor of {nd} dims")
        ax.append(a % nd)
    if len(set(ax)) != len(ax):
        raise ValueError(f"[oar.linalg.vector_norm] axis contains duplicates: {list(axis)}")
    rest = [d for d in range(nd) if d not in ax]
    xt = _C.transpose(x, rest + sorted(ax))
    merged = 1
    for a in ax:
        merged *= x.shape[a]
    out = norm(_C.reshape(xt, [x.shape[d] for d in rest] + [merged]), float(p), -1, False)
    if keepdim:
        out = _C.reshape(out, [1 if d in ax else x.shape[d] for d in range(nd)])
    return out


def matrix_norm(x, p="fro", axis=[-2, -1], keepdim=False, name=None):  # noqa: B006 - Paddle's default
    """Matrix norm over two axes: 'fro', 'nuc' (sum of singular values), 2 /
    -2 (largest / smallest singular value), 1 / -1 (largest / smallest column
    abs-sum), inf / -inf (largest / smallest row abs-sum).

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 0.0], [0.0, -2.0]])
    >>> oar.linalg.matrix_norm(x, p='nuc').item()
    3.0
    >>> oar.linalg.matrix_norm(x, p=2).item()
    2.0
    """
    if isinstance(axis, numbers.Integral) or len(axis) != 2:
        raise ValueError(f"[oar.linalg.matrix_norm] axis must be a list of 2 ints, got {axis!r}")
    if isinstance(p, str):
        if p not in ("fro", "nuc"):
            raise ValueError(f"[oar.linalg.matrix_norm] p must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {p!r}")
    elif isinstance(p, builtins.bool) or not isinstance(p, numbers.Real) or \
            p not in (1, -1, 2, -2, float("inf"), float("-inf")):
        raise ValueError(f"[oar.linalg.matrix_norm] p must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {p!r}")
    return norm(x, p, list(axis), keepdim)


def cholesky_solve(x, y, upper=False, name=None):
    """Solves ``A @ out = x`` given the Cholesky factor y of A (lower, or
    upper with upper=True), by two solves with the factor.

    >>> import oar
    >>> a = oar.to_tensor([[4.0, 2.0], [2.0, 5.0]])
    >>> b = oar.to_tensor([[6.0], [7.0]])
    >>> [round(v, 4) for v in oar.linalg.cholesky_solve(b, oar.linalg.cholesky(a)).numpy().ravel().tolist()]
    [1.0, 1.0]
    """
    low = _mH(y) if upper else y
    return solve(_mH(low), solve(low, x))


def cholesky_inverse(x, upper=False, name=None):
    """Inverse of A from its Cholesky factor x (A = x @ x^H, or x^H @ x with upper=True).

    >>> import oar
    >>> l = oar.to_tensor([[2.0, 0.0], [0.0, 4.0]])
    >>> (oar.linalg.cholesky_inverse(l) + 0.0).numpy().tolist()
    [[0.25, 0.0], [0.0, 0.0625]]
    """
    _check_matrix(x, "oar.linalg.cholesky_inverse")
    a = _C.matmul(_mH(x), x) if upper else _C.matmul(x, _mH(x))
    return inv(a)


def matrix_transpose(x, name=None):
    """Swaps the last two dims.

    >>> import oar
    >>> oar.linalg.matrix_transpose(oar.ones([2, 3, 4])).shape
    [2, 4, 3]
    """
    _check_matrix(x, "oar.linalg.matrix_transpose")
    return _mT(x)


def vecdot(x, y, axis=-1, name=None):
    """Dot product of vectors along `axis` (x conjugated for complex inputs); broadcasts.

    >>> import oar
    >>> oar.linalg.vecdot(oar.to_tensor([[1.0, 2.0], [3.0, 4.0]]), oar.to_tensor([1.0, 1.0])).numpy().tolist()
    [3.0, 7.0]
    """
    return _C.sum(_C.multiply(_C.conj(x), y), [axis])


def _check_tensor(x, api, what="x"):
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{api}] {what} must be a Tensor, got {type(x).__name__}")


def _inexact(x):
    """x itself if floating or complex, else cast to the default float dtype."""
    if _dtype_name(x) in _EPS or _dtype_name(x) in ("float16", "bfloat16"):
        return x
    from .framework import get_default_dtype
    return _C.cast(x, get_default_dtype())


def _cols(x, start, stop):
    return x[..., start:stop]


def _rows(x, start, stop):
    return x[..., start:stop, :]


def _eye_like(x, rows, cols):
    return _C.cast(eye(rows, cols, "float64"), x.dtype)


def _permutation(piv, m, dtype):
    """P [..., m, m] with A = P @ L @ U from 1-based getrf pivots [..., k]."""
    p = piv.numpy().astype("int64")
    batch = p.shape[:-1]
    flat = p.reshape(int(np.prod(batch)), p.shape[-1])
    out = np.zeros((flat.shape[0], m, m))
    for b in range(flat.shape[0]):
        perm = list(range(m))
        for i, t in enumerate(flat[b].tolist()):
            if not 1 <= t <= m:
                raise ValueError(f"[oar.linalg.lu_unpack] pivots must lie in [1, {m}], got {t}")
            perm[i], perm[t - 1] = perm[t - 1], perm[i]
        out[b, perm, range(m)] = 1.0
    return _C.cast(to_tensor(out.reshape(tuple(batch) + (m, m))), dtype)


def lu_unpack(x, y, unpack_ludata=True, unpack_pivots=True, name=None):
    """Unpacks lu's results: x the packed LU [..., M, N], y the pivots
    [..., min(M, N)]. Returns (P, L, U) with ``A = P @ L @ U``: P [..., M, M],
    L [..., M, K] unit lower, U [..., K, N] upper (K = min(M, N)). Parts not
    asked for (unpack_ludata / unpack_pivots False) come back as empty tensors.

    >>> import oar
    >>> a = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> p, l, u = oar.linalg.lu_unpack(*oar.linalg.lu(a))
    >>> p.numpy().tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    >>> float(abs(p @ l @ u - a).max()) < 1e-6
    True
    """
    api = "oar.linalg.lu_unpack"
    _check_matrix(x, api)
    _check_tensor(y, api, "y")
    m, n = x.shape[-2], x.shape[-1]
    k = builtins.min(m, n)
    if list(y.shape) != list(x.shape[:-2]) + [k]:
        raise ValueError(f"[{api}] y (the pivots) must have shape {list(x.shape[:-2]) + [k]} for x of shape "
                         f"{list(x.shape)}, got {list(y.shape)}")
    empty = zeros([0], x.dtype)
    if unpack_ludata:
        low = _C.add(_cols(tril(x, -1), 0, k), _eye_like(x, m, k))
        up = _rows(triu(x), 0, k)
    else:
        low = up = empty
    p = _permutation(y, m, x.dtype) if unpack_pivots else empty
    return p, low, up


def lu_solve(b, lu, pivots, trans="N", name=None):
    """Solves ``A @ X = b`` (trans 'N'), ``A^T @ X = b`` ('T') or
    ``A^H @ X = b`` ('C') from A's LU factorisation (lu, pivots) as returned by
    oar.linalg.lu; b is [..., N, K] and the batch dims broadcast.

    >>> import oar
    >>> a = oar.to_tensor([[3.0, 1.0], [1.0, 2.0]])
    >>> lu, piv = oar.linalg.lu(a)
    >>> x = oar.linalg.lu_solve(oar.to_tensor([[9.0], [8.0]]), lu, piv)
    >>> [round(v, 4) for v in x.numpy().ravel().tolist()]
    [2.0, 3.0]
    """
    api = "oar.linalg.lu_solve"
    _check_tensor(b, api, "b")
    _check_matrix(lu, api)
    if trans not in ("N", "T", "C"):
        raise ValueError(f"[{api}] trans must be 'N', 'T' or 'C', got {trans!r}")
    if lu.shape[-1] != lu.shape[-2]:
        raise ValueError(f"[{api}] lu must be square [..., N, N], got shape {list(lu.shape)}")
    if len(b.shape) < 2 or b.shape[-2] != lu.shape[-1]:
        raise ValueError(f"[{api}] b must have shape [..., {lu.shape[-1]}, K], got {list(b.shape)}")
    p, low, up = lu_unpack(lu, pivots)
    if trans == "N":
        # A = P L U: X = U^-1 L^-1 P^T b.
        z = triangular_solve(low, matmul(_mT(p), b), upper=False, unitriangular=True)
        return triangular_solve(up, z, upper=True)
    # A^T = U^T L^T P^T: X = P L^-T U^-T b; for 'C' the factors are conjugated.
    if trans == "C":
        low, up = _C.conj(low), _C.conj(up)
    z = triangular_solve(up, b, upper=True, transpose=True)
    return matmul(p, triangular_solve(low, z, upper=False, transpose=True, unitriangular=True))


def lstsq(x, y, rcond=None, driver=None, name=None):
    """Least-squares solution of ``x @ out = y`` for x [..., M, N] and y
    [..., M, K], the minimum-norm one when x is rank deficient or wide.
    Singular values at most rcond (default: eps of the dtype * max(M, N))
    times the largest count as zero. Returns (solution [..., N, K], residuals,
    rank, singular_values) as Paddle does per driver ('gels', 'gelsy' (the
    default), 'gelsd', 'gelss'): residuals [..., K] (the squared residual
    norms) when M > N, x has full rank and the driver is not 'gelsy', else
    empty; rank int32 [...] (empty int64 for 'gels'); singular_values
    [..., min(M, N)] for 'gelsd' and 'gelss', else empty. Computed from the
    SVD, so differentiable.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> y = oar.to_tensor([[1.0], [2.0], [3.0]])
    >>> sol, res, rank, sv = oar.linalg.lstsq(x, y, driver="gelsd")
    >>> [round(v, 4) for v in sol.numpy().ravel().tolist()], rank.item()
    ([1.0, 2.0], 2)
    >>> [round(v, 4) for v in res.numpy().tolist()]
    [0.0]
    """
    api = "oar.linalg.lstsq"
    _check_matrix(x, api)
    _check_tensor(y, api, "y")
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise ValueError(f"[{api}] driver must be 'gels', 'gelsy', 'gelsd', 'gelss' or None, got {driver!r}")
    if len(y.shape) < 2 or y.shape[-2] != x.shape[-2]:
        raise ValueError(f"[{api}] y must have shape [..., {x.shape[-2]}, K] for x of shape {list(x.shape)}, "
                         f"got {list(y.shape)}")
    if x.dtype != y.dtype:
        raise TypeError(f"[{api}] x and y must have the same dtype, got {_dtype_name(x)} and {_dtype_name(y)}")
    if _dtype_name(x) not in _EPS:
        raise TypeError(f"[{api}] supports float32, float64, complex64 and complex128 inputs, got {_dtype_name(x)}")
    m, n = x.shape[-2], x.shape[-1]
    if rcond is None:
        rcond = _EPS[_dtype_name(x)] * builtins.max(m, n)
    u, s, vh = svd(x)
    k = s.shape[-1]
    if k == 0:
        sol = zeros(list(x.shape[:-2]) + [n, y.shape[-1]], x.dtype)
        rank_t = zeros(list(s.shape[:-1]), "int32")
    else:
        keep = _C.greater_than(s, _C.multiply(_C.amax(s, [-1], True), float(rcond)))
        inv_s = _C.where(keep, _C.reciprocal(_C.where(keep, s, ones_like(s))), zeros_like(s))
        inv_s = _C.cast(inv_s, x.dtype) if _is_complex(x) else inv_s
        sol = matmul(_mH(vh), _C.multiply(_C.unsqueeze(inv_s, [-1]), matmul(_mH(u), y)))
        rank_t = _C.cast(_C.sum(_C.cast(keep, "int64"), [-1]), "int32")
    real_dt = _dtype_name(s)
    full_rank = k == n and (k == 0 or bool(_C.all(_C.equal(rank_t, full_like(rank_t, n)))))
    if m > n and driver != "gelsy" and full_rank:
        r = _C.subtract(matmul(x, sol), y)
        residuals = _C.sum(_C.real(_C.multiply(_C.conj(r), r)) if _is_complex(r) else _C.multiply(r, r), [-2])
    else:
        residuals = zeros([0], real_dt if not _is_complex(x) else _dtype_name(x))
    rank_out = zeros([0], "int64") if driver == "gels" else rank_t
    sv = s if driver in ("gelsd", "gelss") else zeros([0], real_dt)
    return sol, residuals, rank_out, sv


# Padé [13/13] coefficients and the norm bound below which it reaches double precision (Higham 2005).
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0,
           960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def matrix_exp(x, name=None):
    """Matrix exponential of square matrices [..., N, N], by scaling and
    squaring with a [13/13] Padé approximant. Differentiable.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 1.0], [0.0, 0.0]])
    >>> oar.linalg.matrix_exp(x).numpy().tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    api = "oar.linalg.matrix_exp"
    _check_matrix(x, api)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"[{api}] x must be square [..., N, N], got shape {list(x.shape)}")
    if _dtype_name(x) not in _EPS:
        raise TypeError(f"[{api}] supports float32, float64, complex64 and complex128 inputs, got {_dtype_name(x)}")
    n = x.shape[-1]
    if n == 0 or x.size == 0:
        return _C.multiply(x, 1.0)
    # One scaling for the whole batch, from its largest 1-norm.
    col_sums = _C.sum(_C.abs(x), [-2])
    norm1 = float(_C.amax(col_sums, list(range(len(col_sums.shape)))).item())
    s = 0 if not math.isfinite(norm1) or norm1 <= _THETA13 else int(math.ceil(math.log2(norm1 / _THETA13)))
    a = _C.multiply(x, 2.0 ** -s) if s else x
    b = _PADE13
    ident = _C.expand(_eye_like(x, n, n), list(x.shape))
    a2 = matmul(a, a)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)

    def lin(c6, c4, c2, c0=None):
        t = _C.add(_C.add(_C.multiply(a6, c6), _C.multiply(a4, c4)), _C.multiply(a2, c2))
        return t if c0 is None else _C.add(t, _C.multiply(ident, c0))

    u = matmul(a, _C.add(matmul(a6, lin(b[13], b[11], b[9])), lin(b[7], b[5], b[3], b[1])))
    v = _C.add(matmul(a6, lin(b[12], b[10], b[8])), lin(b[6], b[4], b[2], b[0]))
    r = solve(_C.subtract(v, u), _C.add(v, u))
    for _ in range(s):
        r = matmul(r, r)
    return r


def _reflectors(x, k):
    """The Householder vectors as columns [..., M, k]: x's strict lower part, ones on the diagonal."""
    return _C.add(_cols(tril(x, -1), 0, k), _eye_like(x, x.shape[-2], k))


def _check_householder(x, tau, api):
    _check_matrix(x, api)
    _check_tensor(tau, api, "tau")
    k = tau.shape[-1] if len(tau.shape) else -1
    if len(tau.shape) != len(x.shape) - 1 or list(tau.shape[:-1]) != list(x.shape[:-2]) or k > x.shape[-1]:
        raise ValueError(f"[{api}] tau must have shape {list(x.shape[:-2])} + [k] with k <= {x.shape[-1]} for x of "
                         f"shape {list(x.shape)}, got {list(tau.shape)}")
    if x.dtype != tau.dtype:
        raise TypeError(f"[{api}] x and tau must have the same dtype, got {_dtype_name(x)} and {_dtype_name(tau)}")
    return k


def _apply_reflector(y, v, t, left):
    """(I - t v v^H) y (left) or y (I - t v v^H); v [..., M, 1], t [..., 1, 1]."""
    if left:
        return _C.subtract(y, _C.multiply(t, matmul(v, matmul(_mH(v), y))))
    return _C.subtract(y, _C.multiply(t, matmul(matmul(y, v), _mH(v))))


def householder_product(x, tau, name=None):
    """The first N columns of ``H_1 @ ... @ H_k`` for x [..., M, N] (M >= N)
    and tau [..., k] (k <= N), where ``H_i = I - tau_i v_i v_i^H`` and v_i is
    column i of x below the diagonal with a 1 on it (the Q of a QR
    factorisation stored as LAPACK's geqrf leaves it). Differentiable.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 0.0], [1.0, 1.0]])
    >>> oar.linalg.householder_product(x, oar.to_tensor([1.0, 0.0])).numpy().tolist()
    [[0.0, -1.0], [-1.0, 0.0]]
    """
    api = "oar.linalg.householder_product"
    k = _check_householder(x, tau, api)
    m, n = x.shape[-2], x.shape[-1]
    if m < n:
        raise ValueError(f"[{api}] x must have at least as many rows as columns, got shape {list(x.shape)}")
    v = _reflectors(x, k)
    q = _C.expand(_eye_like(x, m, n), list(x.shape))
    for i in reversed(range(k)):
        q = _apply_reflector(q, _cols(v, i, i + 1), _C.unsqueeze(_cols(tau, i, i + 1), [-1]), True)
    return q


def ormqr(x, tau, y, left=True, transpose=False, name=None):
    """Multiplies y by the orthogonal (unitary) Q = H_1 ... H_k [..., M, M]
    held in (x, tau) as geqrf leaves it (see householder_product), without
    forming Q: ``Q @ y`` (left), ``y @ Q`` (left=False), with Q^H in place of Q
    when transpose. x is [..., M, k'] (k <= k') with M = y.shape[-2] (left) or
    y.shape[-1]. Differentiable. For a square x this is Paddle's result; for
    a tall x, Q here is the full M x M product (LAPACK's ormqr), whereas
    Paddle multiplies by its first N columns.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 0.0], [1.0, 1.0]])
    >>> tau = oar.to_tensor([1.0, 0.0])
    >>> oar.linalg.ormqr(x, tau, oar.to_tensor([[1.0], [2.0]])).numpy().tolist()
    [[-2.0], [-1.0]]
    """
    api = "oar.linalg.ormqr"
    k = _check_householder(x, tau, api)
    _check_tensor(y, api, "y")
    if len(y.shape) < 2:
        raise ValueError(f"[{api}] y must have at least 2 dims, got shape {list(y.shape)}")
    m = y.shape[-2] if left else y.shape[-1]
    if x.shape[-2] != m:
        side = "rows" if left else "columns"
        raise ValueError(f"[{api}] x must have as many rows as y has {side} ({m}), got x of shape {list(x.shape)}")
    v = _reflectors(x, k)
    order = range(k) if left == transpose else reversed(range(k))
    t_all = _C.conj(tau) if transpose else tau
    for i in order:
        t = _C.unsqueeze(_cols(t_all, i, i + 1), [-1])
        y = _apply_reflector(y, _cols(v, i, i + 1), t, left)
    return y


def cov(x, rowvar=True, ddof=True, fweights=None, aweights=None, name=None):
    """Covariance matrix of the variables in x (1-D: one variable; 2-D: one
    per row, or per column with rowvar=False), as numpy.cov: ddof=True
    divides by N - 1 (N without); fweights (integer repeat counts) and
    aweights (relative weights) weight the observations. One variable gives
    a 0-D result.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    >>> oar.linalg.cov(x).numpy().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    return _cov(x, rowvar, ddof, fweights, aweights, "oar.linalg.cov")


def _cov(x, rowvar, ddof, fweights, aweights, api):
    _check_tensor(x, api)
    if len(x.shape) > 2:
        raise ValueError(f"[{api}] x must be 1-D or 2-D, got shape {list(x.shape)}")
    x = _inexact(x)
    if len(x.shape) < 2:
        x = _C.reshape(x, [1, -1])
    if not rowvar and x.shape[0] != 1:
        x = _mT(x)
    nobs = x.shape[1]
    w = None
    for wt, what in ((fweights, "fweights"), (aweights, "aweights")):
        if wt is None:
            continue
        _check_tensor(wt, api, what)
        if list(wt.shape) != [nobs]:
            raise ValueError(f"[{api}] {what} must have shape [{nobs}] (one per observation), got {list(wt.shape)}")
        if what == "fweights" and _dtype_name(wt) not in ("int32", "int64", "int16", "int8", "uint8"):
            raise TypeError(f"[{api}] fweights must be an integer tensor, got {_dtype_name(wt)}")
        if bool(_C.any(_C.less_than(wt, full_like(wt, 0)))):
            raise ValueError(f"[{api}] {what} must be non-negative")
        wt = _C.cast(wt, x.dtype)
        w = wt if w is None else _C.multiply(w, wt)
    if w is None:
        avg = _C.mean(x, [1], True)
        fact = nobs - (1 if ddof else 0)
    else:
        v1 = _C.sum(w, None)
        avg = _C.divide(_C.sum(_C.multiply(x, w), [1], keepdim=True), v1)
        if not ddof:
            fact = v1
        elif aweights is None:
            fact = _C.subtract(v1, full_like(v1, 1.0))
        else:
            aw = _C.cast(aweights, x.dtype)
            fact = _C.subtract(v1, _C.divide(_C.sum(_C.multiply(w, aw), None), v1))
    xc = _C.subtract(x, avg)
    xw = xc if w is None else _C.multiply(xc, w)
    c = matmul(xw, _mH(xc))
    c = _C.divide(c, fact if isinstance(fact, _C.Tensor) else full_like(c, float(fact)))
    return _C.reshape(c, []) if c.shape == [1, 1] else c


def corrcoef(x, rowvar=True, name=None):
    """Pearson correlation coefficients of the variables in x (see cov),
    clipped to [-1, 1].

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    >>> oar.linalg.corrcoef(x).numpy().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = _cov(x, rowvar, True, None, None, "oar.linalg.corrcoef")
    if len(c.shape) == 0:
        return _C.divide(c, c)
    d = _C.sqrt(_C.real(diagonal(c)) if _is_complex(c) else diagonal(c))
    if _is_complex(c):
        d = _C.cast(d, c.dtype)
    c = _C.divide(_C.divide(c, _C.unsqueeze(d, [1])), _C.unsqueeze(d, [0]))
    if _is_complex(c):
        return _C.complex(_C.clip(_C.real(c), -1.0, 1.0), _C.clip(_C.imag(c), -1.0, 1.0))
    return _C.clip(c, -1.0, 1.0)


def _lowrank_q(q, m, n, api):
    if q is None:
        return builtins.min(6, m, n)
    if isinstance(q, builtins.bool) or not isinstance(q, numbers.Integral) or not 0 <= q <= builtins.min(m, n):
        raise ValueError(f"[{api}] q must be an int in [0, {builtins.min(m, n)}] (min(M, N)), got {q!r}")
    return int(q)


def _orth(a):
    return qr(a)[0]


_MAX_NITER = 1000


def svd_lowrank(x, q=None, niter=2, M=None, name=None):
    """Approximate truncated SVD of x - M (M defaults to zero) by randomised
    subspace iteration (Halko, Martinsson and Tropp 2011): (U [..., M, q],
    S [..., q], V [..., N, q]) with ``x - M ~= U @ diag(S) @ V^H``. q defaults
    to min(6, M, N); niter is the number of power iterations. Exact when q
    reaches the rank of x - M.

    >>> import oar
    >>> x = oar.to_tensor([[3.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    >>> u, s, v = oar.linalg.svd_lowrank(x, q=2)
    >>> [round(t, 4) for t in s.numpy().tolist()]
    [3.0, 2.0]
    """
    api = "oar.linalg.svd_lowrank"
    _check_matrix(x, api)
    # Power iterations converge geometrically; beyond a few hundred they only
    # cost time, so a larger count is refused rather than run for hours.
    if isinstance(niter, builtins.bool) or not isinstance(niter, numbers.Integral) or not 0 <= niter <= _MAX_NITER:
        raise ValueError(f"[{api}] niter must be an int in [0, {_MAX_NITER}], got {niter!r}")
    a = _inexact(x)
    if M is not None:
        _check_tensor(M, api, "M")
        a = _C.subtract(a, _C.cast(M, a.dtype))
    m, n = a.shape[-2], a.shape[-1]
    q = _lowrank_q(q, m, n, api)
    wide = m < n
    if wide:
        a = _mH(a)
        m, n = n, m
    g = randn(list(a.shape[:-2]) + [n, q], "float64" if _dtype_name(a) in ("float64", "complex128") else "float32")
    g = _C.cast(g, a.dtype)
    basis = _orth(matmul(a, g))
    for _ in range(int(niter)):
        basis = _orth(matmul(a, _orth(matmul(_mH(a), basis))))
    ub, s, vh = svd(matmul(_mH(basis), a))
    u, v = matmul(basis, ub), _mH(vh)
    return (v, s, u) if wide else (u, s, v)


def pca_lowrank(x, q=None, center=True, niter=2, name=None):
    """Principal component analysis of the rows of x [..., M, N]: the
    svd_lowrank of x with its column means subtracted (center=True). Returns
    (U [..., M, q], S [..., q], V [..., N, q]); the columns of V are the
    principal directions. q defaults to min(6, M, N).

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> u, s, v = oar.linalg.pca_lowrank(x, q=1)
    >>> round(s.item(), 4), [round(abs(t), 4) for t in v.numpy().ravel().tolist()]
    (2.0, [0.7071, 0.7071])
    """
    api = "oar.linalg.pca_lowrank"
    _check_matrix(x, api)
    q = _lowrank_q(q, x.shape[-2], x.shape[-1], api)
    a = _inexact(x)
    if center:
        a = _C.subtract(a, _C.mean(a, [-2], True))
    return svd_lowrank(a, q=q, niter=niter)


# Tensor methods Paddle has for the functions written here (the declared ones
# are Tensor methods from their declarations: method = true).
__tensor_methods__ = ("cond", "cholesky_solve", "cholesky_inverse", "pinv", "multi_dot", "lu_unpack", "lstsq",
                      "householder_product", "ormqr", "cov", "corrcoef", "svd_lowrank", "pca_lowrank")
