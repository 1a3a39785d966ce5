"""The multivariate normal distribution, parameterised through the Cholesky factor of
its covariance so that sampling, densities and KL need only triangular solves."""
import math

import numpy as np

import oar

from .. import _C
from . import _params
from .distribution import Distribution


def _batch_mv(mat, vec):
    """mat @ vec over batches: [..., n, n] x [..., n] -> [..., n]."""
    return _C.matmul(mat, vec.unsqueeze(-1)).squeeze(-1)


def _tri_solve(lower, rhs):
    """lower^-1 @ rhs for a lower-triangular [..., n, n] and rhs [..., n, m] (batches broadcast)."""
    return oar.linalg.triangular_solve(lower, rhs, upper=False)


def _half_log_det(scale_tril):
    return _C.diagonal(scale_tril, 0, -2, -1).log().sum(axis=-1)


class MultivariateNormal(Distribution):
    r"""The multivariate normal distribution with mean ``loc`` and a covariance given by
    exactly one of ``covariance_matrix``, ``precision_matrix`` (its inverse) or
    ``scale_tril`` (its lower Cholesky factor, positive diagonal).

    Args:
        loc (list|numpy.ndarray|Tensor): the mean, [..., k].
        covariance_matrix (list|numpy.ndarray|Tensor, optional): symmetric positive definite, [..., k, k].
        precision_matrix (list|numpy.ndarray|Tensor, optional): symmetric positive definite, [..., k, k].
        scale_tril (list|numpy.ndarray|Tensor, optional): lower triangular with positive diagonal, [..., k, k].

    >>> import oar
    >>> from oar.distribution import MultivariateNormal
    >>> d = MultivariateNormal(oar.to_tensor([0.0, 1.0]), covariance_matrix=oar.to_tensor([[2.0, 0.0], [0.0, 0.5]]))
    >>> d.event_shape, d.batch_shape
    ((2,), ())
    >>> [round(v, 4) for v in d.variance.numpy().tolist()]
    [2.0, 0.5]
    >>> round(float(d.log_prob(oar.to_tensor([0.0, 1.0]))), 4)
    -1.8379
    >>> d.sample([3]).shape
    [3, 2]
    """

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None):
        api = self._api()
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix), ("scale_tril", scale_tril))
                 if m is not None]
        if len(given) != 1:
            raise ValueError(f"[{api}] exactly one of covariance_matrix, precision_matrix and scale_tril must be "
                             f"given, got {[n for n, _ in given] or 'none'}")
        kind, matrix = given[0]
        loc, matrix = _params.as_tensors(api, ("loc", kind), (loc, matrix))
        _params.check_rank(api, "loc", loc, 1)
        _params.check_rank(api, kind, matrix, 2)
        k = loc.shape[-1]
        if matrix.shape[-1] != matrix.shape[-2] or matrix.shape[-1] != k:
            raise ValueError(f"[{api}] {kind} must be [..., {k}, {k}] to match loc of shape {list(loc.shape)}, "
                             f"got shape {list(matrix.shape)}")
        try:
            batch = tuple(np.broadcast_shapes(tuple(loc.shape[:-1]), tuple(matrix.shape[:-2])))
        except ValueError:
            raise ValueError(f"[{api}] the batch shapes of loc {list(loc.shape[:-1])} and {kind} "
                             f"{list(matrix.shape[:-2])} do not broadcast") from None
        _params.check(api, "loc", loc, "real")
        self._check_matrix(api, kind, matrix)
        if kind == "scale_tril":
            tril = _C.tril(matrix)  # only the lower triangle is a parameter, also for gradients
        elif kind == "covariance_matrix":
            tril = oar.linalg.cholesky(matrix)
        else:
            tril = oar.linalg.cholesky(oar.linalg.inv(matrix))
        self.loc = loc.expand(list(batch) + [k])
        self.scale_tril = tril.expand(list(batch) + [k, k])
        self._given = (kind, matrix)
        self.dtype = self._dtype = loc.dtype
        super().__init__(batch_shape=batch, event_shape=(k,))

    @staticmethod
    def _check_matrix(api, kind, matrix):
        v = _params.numpy_values(matrix)
        if v is None or v.size == 0:
            return
        if not np.all(np.isfinite(v)):
            raise ValueError(f"[{api}] {kind} must hold finite values")
        if kind == "scale_tril":
            diag = np.diagonal(v, axis1=-2, axis2=-1)
            if np.any(np.triu(v, 1) != 0) or np.any(diag <= 0):
                raise ValueError(f"[{api}] scale_tril must be lower triangular with a positive diagonal")
            return
        if not np.allclose(v, np.swapaxes(v, -1, -2), rtol=1e-5, atol=1e-6):
            raise ValueError(f"[{api}] {kind} must be symmetric")
        try:
            np.linalg.cholesky(v.astype(np.float64))
        except np.linalg.LinAlgError:
            raise ValueError(f"[{api}] {kind} must be positive definite") from None

    @property
    def covariance_matrix(self):
        """``scale_tril @ scale_tril^T``."""
        return _C.matmul(self.scale_tril, self.scale_tril.transpose(self._swap()))

    @property
    def precision_matrix(self):
        """The inverse of the covariance matrix."""
        return oar.linalg.inv(self.covariance_matrix)

    def _swap(self):
        n = len(self.scale_tril.shape)
        perm = list(range(n))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return perm

    @property
    def mean(self):
        """``loc``."""
        return self.loc

    @property
    def variance(self):
        """The diagonal of the covariance matrix."""
        return self.scale_tril.square().sum(axis=-1)

    def rsample(self, shape=()):
        """Reparameterised samples ``loc + scale_tril @ eps`` with eps ~ N(0, I)."""
        out = self._sample_shape(shape, "rsample")
        eps = _C.standard_normal(list(out), self._dtype)
        return self.loc + _batch_mv(self.scale_tril, eps)

    def _mahalanobis(self, diff):
        """diff^T Sigma^-1 diff for diff [..., k] (batch dims broadcast with the distribution's)."""
        k = diff.shape[-1]
        shape = list(np.broadcast_shapes(tuple(diff.shape[:-1]), tuple(self.batch_shape)))
        tril = self.scale_tril.expand(shape + [k, k])
        sol = _tri_solve(tril, diff.expand(shape + [k]).unsqueeze(-1)).squeeze(-1)
        return sol.square().sum(axis=-1)

    def log_prob(self, value):
        """``-0.5 (k log(2 pi) + (x - loc)^T Sigma^-1 (x - loc)) - 0.5 log det Sigma``."""
        v = self._value(value)
        k = self.event_shape[0]
        if len(v.shape) < 1 or v.shape[-1] != k:
            raise ValueError(f"[{self._api('log_prob')}] value must have last dimension {k}, got shape "
                             f"{list(v.shape)}")
        m = self._mahalanobis(v - self.loc)
        return -0.5 * (k * math.log(2 * math.pi) + m) - _half_log_det(self.scale_tril)

    def entropy(self):
        """``0.5 k (1 + log(2 pi)) + 0.5 log det Sigma``."""
        k = self.event_shape[0]
        return 0.5 * k * (1 + math.log(2 * math.pi)) + _half_log_det(self.scale_tril)


def kl_mvn_mvn(p, q):
    """KL(p || q) = 0.5 (tr(Sq^-1 Sp) + (mq - mp)^T Sq^-1 (mq - mp) - k + log det Sq - log det Sp)."""
    k = p.event_shape[0]
    shape = list(np.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape)))
    lp = p.scale_tril.expand(shape + [k, k])
    lq = q.scale_tril.expand(shape + [k, k])
    trace = _tri_solve(lq, lp).square().sum(axis=[-2, -1])
    diff = (q.loc - p.loc).expand(shape + [k])
    maha = _tri_solve(lq, diff.unsqueeze(-1)).squeeze(-1).square().sum(axis=-1)
    return 0.5 * (trace + maha - k) + _half_log_det(lq) - _half_log_det(lp)
