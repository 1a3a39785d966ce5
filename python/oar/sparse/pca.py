"""oar.sparse.pca_lowrank: randomized PCA of a sparse matrix, touching it only through sparse @ dense products."""
from . import _index as ix
from .matmul import _check_matrix, matmul
from .unary import check_sparse

__all__ = ["pca_lowrank"]


def pca_lowrank(x, q=None, center=True, niter=2, name=None):
    """(U, S, V) with U [M, q], S [q], V [N, q] such that U diag(S) V^T approximates the sparse matrix
    x [M, N], centred by its column means when center is True: a randomized range finder with niter
    power iterations (Halko, Martinsson and Tropp), exact when q reaches the rank. The centred matrix is
    never formed: its products are sparse products minus rank-one corrections. q defaults to
    min(6, M, N); the random start comes from oar's generator (oar.seed).

    >>> import oar
    >>> x = oar.to_tensor([[3.0, 0.0], [0.0, 2.0], [0.0, 0.0]]).to_sparse_coo(2)
    >>> u, s, v = oar.sparse.pca_lowrank(x, q=2, center=False)
    >>> [round(t, 4) for t in s.numpy().tolist()]
    [3.0, 2.0]
    """
    import oar
    api = "oar.sparse.pca_lowrank"
    check_sparse(x, api)
    _check_matrix(x, api, "x")
    if x.ndim != 2:
        raise ValueError(f"[{api}] x must be a 2-D sparse matrix, got shape {x.shape}")
    if ix.dname(x.values()) not in ("float32", "float64"):
        raise TypeError(f"[{api}] x must be float32 or float64, got {ix.dname(x.values())}")
    m, n = x.shape
    q = min(6, m, n) if q is None else q
    if isinstance(q, bool) or not isinstance(q, int) or not 0 < q <= min(m, n):
        raise ValueError(f"[{api}] q must be an int in [1, min(M, N) = {min(m, n)}], got {q!r}")
    if isinstance(niter, bool) or not isinstance(niter, int) or niter < 0:
        raise ValueError(f"[{api}] niter must be a non-negative int, got {niter!r}")
    dt = ix.dname(x.values())
    from .manip import transpose
    xt = transpose(x, [1, 0])
    ones = oar.ones([m, 1], dtype=dt)
    mean = matmul(xt, ones) / m if center else None  # [N, 1] column means

    def a_times(b):  # (x - 1 mean^T) @ b
        out = matmul(x, b)
        return out - oar.matmul(ones, oar.matmul(mean.t(), b)) if center else out

    def at_times(b):  # (x - 1 mean^T)^T @ b
        out = matmul(xt, b)
        return out - oar.matmul(mean, oar.matmul(ones.t(), b)) if center else out

    basis = oar.linalg.qr(a_times(oar.randn([n, q], dtype=dt)))[0]
    for _ in range(niter):
        basis = oar.linalg.qr(at_times(basis))[0]
        basis = oar.linalg.qr(a_times(basis))[0]
    u, s, vh = oar.linalg.svd(at_times(basis).t(), full_matrices=False)
    return oar.matmul(basis, u), s, vh.t()


ix.scope_module(globals())  # Note [device scope]: sparse arguments count as their values
