"""The continuous Bernoulli distribution on [0, 1].

Note [continuous Bernoulli near 1/2]
------------------------------------
The normaliser C(p) = 2 atanh(1 - 2p) / (1 - 2p), the mean, variance, CDF and quantile
are all 0/0 at p = 1/2, and lose digits near it. Inside ``lims`` (default
(0.499, 0.501), as in Paddle) they are replaced by their Taylor expansions in p - 1/2;
outside, the closed forms are evaluated at p itself. The closed forms are evaluated at a
clipped stand-in inside ``lims`` so that neither branch of a select produces NaN, which
would poison the gradient of the other.
"""
import math

from .. import _C
from . import _params
from ._ops import eps
from .distribution import Distribution


class ContinuousBernoulli(Distribution):
    r"""The continuous Bernoulli distribution: pdf(x) = C(p) p^x (1 - p)^(1 - x) on [0, 1],
    with C(p) = 2 atanh(1 - 2p) / (1 - 2p) (and C(1/2) = 2).

    ``rsample`` is reparameterised (the inverse CDF of uniform draws).

    Args:
        probs (float|list|numpy.ndarray|Tensor): the shape parameter p, in [0, 1]
            (clipped to [eps, 1 - eps]).
        lims (tuple): the interval around 1/2 in which Taylor expansions replace the
            closed forms (Note [continuous Bernoulli near 1/2]).

    >>> import oar
    >>> from oar.distribution import ContinuousBernoulli
    >>> d = ContinuousBernoulli(oar.to_tensor([0.2, 0.5]))
    >>> [round(v, 4) for v in d.mean.numpy().tolist()]
    [0.388, 0.5]
    >>> [round(v, 4) for v in d.cdf(oar.to_tensor(0.1)).numpy().tolist()]
    [0.1726, 0.1]
    """

    def __init__(self, probs, lims=(0.499, 0.501)):
        api = self._api()
        (p,) = _params.params(api, ("probs",), (probs,))
        _params.check(api, "probs", p, "unit")
        if not (isinstance(lims, (tuple, list)) and len(lims) == 2 and all(isinstance(v, (int, float)) for v in lims)
                and 0 < lims[0] < 0.5 < lims[1] < 1):
            raise ValueError(f"[{api}] lims must be a pair (lo, hi) with 0 < lo < 0.5 < hi < 1, got {lims!r}")
        self.lims = (float(lims[0]), float(lims[1]))
        self.dtype = self._dtype = p.dtype
        e = eps(self._dtype)
        self.probs = p.clip(e, 1 - e)
        super().__init__(batch_shape=tuple(p.shape))

    def _stable(self):
        return _C.logical_or(self.probs <= self.lims[0], self.probs > self.lims[1])

    def _cut(self):
        """p outside lims, and lims[0] (where the closed forms are finite) inside."""
        return _C.where(self._stable(), self.probs, _C.full_like(self.probs, self.lims[0]))

    def _log_constant(self):
        p = self._cut()
        t = 1 - 2 * p  # the closed form, with |atanh(t) / t| written to stay positive
        closed = (2 * _C.atanh(t).abs()).log() - t.abs().log()
        x = (self.probs - 0.5).square()
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return _C.where(self._stable(), closed, taylor)

    @property
    def mean(self):
        """``p / (2p - 1) + 1 / (2 atanh(1 - 2p))`` (1/2 at p = 1/2)."""
        p = self._cut()
        closed = p / (2 * p - 1) + 1 / (2 * _C.atanh(1 - 2 * p))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.square()) * x
        return _C.where(self._stable(), closed, taylor)

    @property
    def variance(self):
        """``p (p - 1) / (1 - 2p)^2 + 1 / log(p / (1 - p))^2`` (1/12 at p = 1/2)."""
        p = self._cut()
        closed = p * (p - 1) / (1 - 2 * p).square() + 1 / (p.log() - (-p).log1p()).square()
        x = (self.probs - 0.5).square()
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _C.where(self._stable(), closed, taylor)

    def rsample(self, shape=()):
        """Reparameterised samples ``icdf(u)`` with u ~ U[0, 1)."""
        out = self._sample_shape(shape, "rsample")
        return self.icdf(_C.rand(list(out), self._dtype))

    def log_prob(self, value):
        """``log C(p) + x log p + (1 - x) log(1 - p)``."""
        v = self._value(value)
        p = self.probs
        return self._log_constant() + v * p.log() + (1 - v) * (-p).log1p()

    def entropy(self):
        """``-log C(p) - E[X] log p - (1 - E[X]) log(1 - p)``."""
        m = self.mean
        p = self.probs
        return -self._log_constant() - m * p.log() - (1 - m) * (-p).log1p()

    def cdf(self, value):
        """``(p^x (1 - p)^(1 - x) + p - 1) / (2p - 1)`` on [0, 1]; near p = 1/2, its expansion
        to second order in d = p - 1/2: ``x - 2 d x (1 - x) + d^2 x (4/3 - 4x + 8/3 x^2)``."""
        v = self._value(value, "cdf").clip(0.0, 1.0)
        p = self._cut()
        closed = ((v * p.log() + (1 - v) * (-p).log1p()).exp() + p - 1) / (2 * p - 1)
        d = self.probs - 0.5
        taylor = v + 2 * d * (v - 1) * v + d.square() * v * (4.0 / 3.0 - 4 * v + 8.0 / 3.0 * v.square())
        return _C.where(self._stable(), closed, taylor)

    def icdf(self, value):
        """``(log1p((2p - 1) u - p) - log1p(-p)) / (log p - log1p(-p))``; near p = 1/2, its
        expansion ``u + 2 d u (1 - u) + d^2 u (8/3 - 8u + 16/3 u^2)`` with d = p - 1/2."""
        u = self._value(value, "icdf")
        p = self._cut()
        closed = ((-p + u * (2 * p - 1)).log1p() - (-p).log1p()) / (p.log() - (-p).log1p())
        d = self.probs - 0.5
        taylor = u + 2 * d * u * (1 - u) + d.square() * u * (8.0 / 3.0 - 8 * u + 16.0 / 3.0 * u.square())
        return _C.where(self._stable(), closed, taylor)


def kl_continuous_bernoulli(p, q):
    """KL(p || q) = E_p[log p(X) - log q(X)], linear in E_p[X]."""
    m = p.mean
    a, b = p.probs, q.probs
    return (p._log_constant() - q._log_constant() + m * (a.log() - b.log())
            + (1 - m) * ((-a).log1p() - (-b).log1p()))
