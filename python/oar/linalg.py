"""Linear algebra (``paddle.linalg``): decompositions on LAPACK and what is
built on them.

svd, eigh, qr, inv, det, slogdet, solve and cholesky are ops with their own
kernels and gradient rules (src/ops/linalg_lapack.cpp); the rest are
composites of them and of the elementwise/reduction ops, so gradients flow
through them too. Every function works on the last two dims and batches over
the leading ones.
"""
import builtins
import numbers

from . import _C
from ._C import matmul
from ._linalg_ext import cross
from ._reduce_ext import norm
from .creation import full_like, ones_like, zeros, zeros_like

__all__ = ["svd", "svdvals", "eigh", "eigvalsh", "qr", "inv", "det", "slogdet", "solve", "cholesky", "pinv",
           "matrix_power", "matrix_rank", "cond", "multi_dot", "norm", "vector_norm", "matrix_norm",
           "cholesky_solve", "cholesky_inverse", "matrix_transpose", "vecdot", "matmul", "cross"]

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


def svd(x, full_matrices=False, name=None):
    """Singular value decomposition ``x = U @ diag(S) @ VH``.

    Returns (U, S, VH): for x of shape [..., M, N] and K = min(M, N), U is
    [..., M, K] ([..., M, M] with full_matrices), S [..., K] real and
    descending, VH [..., K, N] ([..., N, N]) the conjugate transpose of V.
    Non-finite input gives NaN results.

    >>> import oar
    >>> x = oar.to_tensor([[3.0, 0.0], [0.0, -4.0], [0.0, 0.0]])
    >>> u, s, vh = oar.linalg.svd(x)
    >>> s.numpy().tolist()
    [4.0, 3.0]
    >>> u.shape, vh.shape
    ([3, 2], [2, 2])
    """
    return _C._linalg_svd(x, bool(full_matrices))


def svdvals(x, name=None):
    """Singular values of x ([..., M, N] -> [..., min(M, N)]), descending.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0], [1.0, 3.0], [4.0, 6.0]])
    >>> [round(v, 4) for v in oar.linalg.svdvals(x).numpy().tolist()]
    [8.1475, 0.7859]
    """
    return _C._linalg_svdvals(x)


def _uplo(UPLO, api):
    if UPLO not in ("L", "U"):
        raise ValueError(f"[{api}] UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO


def eigh(x, UPLO="L", name=None):  # noqa: N803 - Paddle's argument name
    """Eigenvalues (ascending, real) and eigenvectors (columns) of a real
    symmetric or complex Hermitian matrix. Only the triangle named by UPLO
    ('L' lower, 'U' upper) is read.

    >>> import oar
    >>> x = oar.to_tensor([[2.0, 1.0], [1.0, 2.0]])
    >>> w, v = oar.linalg.eigh(x)
    >>> w.numpy().tolist()
    [1.0, 3.0]
    """
    return _C._linalg_eigh(x, _uplo(UPLO, "oar.linalg.eigh"))


def eigvalsh(x, UPLO="L", name=None):  # noqa: N803
    """Eigenvalues (ascending) of a symmetric/Hermitian matrix; see eigh.

    >>> import oar
    >>> oar.linalg.eigvalsh(oar.to_tensor([[2.0, 0.0], [0.0, -1.0]])).numpy().tolist()
    [-1.0, 2.0]
    """
    return _C._linalg_eigvalsh(x, _uplo(UPLO, "oar.linalg.eigvalsh"))


def qr(x, mode="reduced", name=None):
    """QR decomposition ``x = Q @ R``. mode 'reduced' (Q [..., M, K], R
    [..., K, N], K = min(M, N)), 'complete' (Q [..., M, M], R [..., M, N]) or
    'r' (only R is returned).

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> q, r = oar.linalg.qr(x)
    >>> q.shape, r.shape
    ([3, 2], [2, 2])
    >>> float(abs(oar.matmul(q, r) - x).max()) < 1e-5
    True
    """
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"[oar.linalg.qr] mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    return _C._linalg_qr(x, mode)


def inv(x, name=None):
    """Inverse of a square matrix (batched). A singular matrix raises ValueError.

    >>> import oar
    >>> (oar.linalg.inv(oar.to_tensor([[2.0, 0.0], [0.0, 4.0]])) + 0.0).numpy().tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return _C._linalg_inv(x)


def det(x, name=None):
    """Determinant of a square matrix ([..., N, N] -> [...]).

    >>> import oar
    >>> round(oar.linalg.det(oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])).item(), 5)
    -2.0
    """
    return _C._linalg_det(x)


def slogdet(x, name=None):
    """Sign and natural log of the absolute determinant, stacked into one
    tensor of shape [2, ...] (index 0 the sign, 1 the log). A singular matrix
    gives (0, -inf).

    >>> import oar
    >>> out = oar.linalg.slogdet(oar.to_tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> [round(v, 4) for v in out.numpy().tolist()]
    [-1.0, 0.6931]
    """
    return _C._linalg_slogdet(x)


def solve(x, y, name=None):
    """Solves ``x @ out = y`` for square x [..., N, N] and y [..., N, K] (or
    a vector [N]); the batch dims broadcast. A singular x raises ValueError.

    >>> import oar
    >>> x = oar.to_tensor([[3.0, 1.0], [1.0, 2.0]])
    >>> y = oar.to_tensor([9.0, 8.0])
    >>> [round(v, 4) for v in oar.linalg.solve(x, y).numpy().tolist()]
    [2.0, 3.0]
    """
    return _C._linalg_solve(x, y)


def cholesky(x, upper=False, name=None):
    """Cholesky factor of a symmetric (Hermitian) positive-definite matrix:
    lower L with ``x = L @ L^H``, or upper U with ``x = U^H @ U``. A matrix
    that is not positive definite raises ValueError.

    >>> import oar
    >>> oar.linalg.cholesky(oar.to_tensor([[4.0, 2.0], [2.0, 5.0]])).numpy().tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    return _C._linalg_cholesky(x, bool(upper))


def matrix_power(x, n, name=None):
    """x raised to the integer power n (n = 0 gives the identity, n < 0 the
    power of the inverse), by repeated squaring.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 1.0], [0.0, 1.0]])
    >>> oar.linalg.matrix_power(x, 3).numpy().tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    >>> (oar.linalg.matrix_power(x, -1) + 0.0).numpy().tolist()
    [[1.0, -1.0], [0.0, 1.0]]
    """
    if isinstance(n, builtins.bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"[oar.linalg.matrix_power] n must be an int, got {type(n).__name__}")
    return _C._linalg_matrix_power(x, int(n))


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


# Tensor methods Paddle has for these functions: (method, function) where the names differ.
__tensor_methods__ = ("cholesky", "matrix_power", "qr", "eigvalsh", ("inverse", "inv"), "solve", "cond",
                      "cholesky_solve")
