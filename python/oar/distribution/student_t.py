"""Student's t distribution, a normal scale mixture: loc + scale * Z * sqrt(df / V) with
Z ~ N(0, 1) and V ~ chi2(df), reparameterised through the gamma draw of V."""
import math

from .. import _C
from . import _params
from ._ops import lbeta
from .distribution import Distribution
from .gamma_family import standard_gamma_rsample


class StudentT(Distribution):
    r"""Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``:
    pdf(x) = Gamma((df + 1) / 2) / (Gamma(df / 2) sqrt(df pi) scale) (1 + z^2 / df)^(-(df + 1) / 2),
    z = (x - loc) / scale.

    ``mean`` is NaN for df <= 1; ``variance`` is inf for 1 < df <= 2 and NaN for df <= 1.

    Args:
        df (float|list|numpy.ndarray|Tensor): the degrees of freedom, positive.
        loc (float|list|numpy.ndarray|Tensor): the location.
        scale (float|list|numpy.ndarray|Tensor): the scale, positive.
        name (str, optional): unused, for Paddle compatibility.

    >>> import oar
    >>> from oar.distribution import StudentT
    >>> d = StudentT(oar.to_tensor([1.0, 5.0]), 0.0, 1.0)
    >>> [round(v, 4) for v in d.log_prob(oar.to_tensor([0.0, 0.0])).numpy().tolist()]
    [-1.1447, -0.9686]
    >>> round(d.variance.numpy().tolist()[1], 4)
    1.6667
    """

    def __init__(self, df, loc, scale, name=None):
        api = self._api()
        self.df, self.loc, self.scale = _params.params(api, ("df", "loc", "scale"), (df, loc, scale))
        _params.check(api, "df", self.df, "positive")
        _params.check(api, "loc", self.loc, "real")
        _params.check(api, "scale", self.scale, "positive")
        self.name = name or "StudentT"
        self.dtype = self._dtype = self.df.dtype
        super().__init__(batch_shape=tuple(self.df.shape))

    @property
    def mean(self):
        """``loc`` for df > 1, NaN otherwise."""
        return _C.where(self.df > 1, self.loc, _C.full_like(self.loc, float("nan")))

    @property
    def variance(self):
        """``scale^2 df / (df - 2)`` for df > 2, inf for 1 < df <= 2, NaN for df <= 1."""
        v = self.scale.square() * self.df / (self.df - 2).clip(min=1e-30)
        v = _C.where(self.df > 2, v, _C.full_like(v, float("inf")))
        return _C.where(self.df > 1, v, _C.full_like(v, float("nan")))

    def rsample(self, shape=()):
        """Reparameterised samples ``loc + scale Z sqrt(df / (2 G))`` with G ~ Gamma(df / 2, 1)."""
        out = list(self._sample_shape(shape, "rsample"))
        z = _C.standard_normal(out, self._dtype)
        g = standard_gamma_rsample((0.5 * self.df).expand(out))
        return self.loc + self.scale * z * (0.5 * self.df / g).sqrt()

    def log_prob(self, value):
        """The log density at ``value``."""
        v = self._value(value)
        df = self.df
        z = (v - self.loc) / self.scale
        return (_C.lgamma(0.5 * (df + 1)) - _C.lgamma(0.5 * df) - 0.5 * (df * math.pi).log() - self.scale.log()
                - 0.5 * (df + 1) * (z.square() / df).log1p())

    def entropy(self):
        """``(df + 1)/2 (psi((df + 1)/2) - psi(df/2)) + log(sqrt(df) B(df/2, 1/2)) + log(scale)``."""
        df = self.df
        return (0.5 * (df + 1) * (_C.digamma(0.5 * (df + 1)) - _C.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta(0.5 * df, _C.full_like(df, 0.5)) + self.scale.log())
