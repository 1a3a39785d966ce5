"""Continuous location-scale families: Normal, Uniform, Laplace, Cauchy, Gumbel.

All are sampled by transforming standard draws (x = loc + scale * eps), so ``rsample``
is reparameterised: gradients reach ``loc`` and ``scale``.
"""
import math

from .. import _C
from . import _params
from ._ops import open_uniform
from .distribution import Distribution, ExponentialFamily

_EULER = 0.57721566490153286061


def _set_loc_scale(dist, loc, scale, base):
    """Validates and stores ``loc`` (real) and ``scale`` (positive), broadcast to the batch
    shape, then initialises ``base`` (the distribution's parent class) with that batch shape."""
    api = dist._api()
    dist.loc, dist.scale = _params.params(api, ("loc", "scale"), (loc, scale))
    _params.check(api, "loc", dist.loc, "real")
    _params.check(api, "scale", dist.scale, "positive")
    dist.dtype = dist._dtype = dist.loc.dtype
    base.__init__(dist, batch_shape=tuple(dist.loc.shape))


class Normal(ExponentialFamily):
    r"""The normal (Gaussian) distribution with mean ``loc`` and standard deviation ``scale``.

    pdf(x) = exp(-(x - loc)^2 / (2 scale^2)) / sqrt(2 pi scale^2)

    Args:
        loc (float|list|numpy.ndarray|Tensor): the mean.
        scale (float|list|numpy.ndarray|Tensor): the standard deviation, positive.
            ``loc`` and ``scale`` broadcast together to the batch shape.
        name (str, optional): unused, for Paddle compatibility.

    >>> import oar
    >>> from oar.distribution import Normal
    >>> d = Normal(oar.to_tensor([0.0, 1.0]), 2.0)
    >>> d.batch_shape
    (2,)
    >>> [round(v, 4) for v in d.log_prob(oar.to_tensor([0.0, 1.0])).numpy().tolist()]
    [-1.6121, -1.6121]
    >>> d.sample([5]).shape
    [5, 2]
    >>> round(float(Normal(0.0, 1.0).cdf(0.0)), 4)
    0.5
    """

    def __init__(self, loc, scale, name=None):
        self.name = name or "Normal"
        _set_loc_scale(self, loc, scale, ExponentialFamily)

    @property
    def mean(self):
        """The mean, ``loc``."""
        return self.loc

    @property
    def variance(self):
        """The variance, ``scale ** 2``."""
        return self.scale * self.scale

    @property
    def stddev(self):
        """The standard deviation, ``scale``."""
        return self.scale

    def sample(self, shape=(), seed=0):
        """Samples of shape ``shape + batch_shape`` (``seed`` is accepted for Paddle compatibility)."""
        return super().sample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples ``loc + scale * eps`` with eps ~ N(0, 1)."""
        out = self._sample_shape(shape, "rsample")
        return self.loc + self.scale * _C.standard_normal(list(out), self._dtype)

    def log_prob(self, value):
        """Log density at ``value``."""
        v = self._value(value)
        z = (v - self.loc) / self.scale
        return -0.5 * z * z - self.scale.log() - 0.5 * math.log(2 * math.pi)

    def entropy(self):
        """Entropy ``0.5 + 0.5 log(2 pi) + log(scale)``."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def cdf(self, value):
        """``0.5 (1 + erf((value - loc) / (scale sqrt 2)))``."""
        v = self._value(value, "cdf")
        return 0.5 * (1 + _C.erf((v - self.loc) / (self.scale * math.sqrt(2.0))))

    def icdf(self, value):
        """``loc + scale sqrt(2) erfinv(2 value - 1)``."""
        v = self._value(value, "icdf")
        return self.loc + self.scale * math.sqrt(2.0) * _C.erfinv(2 * v - 1)

    @property
    def _natural_parameters(self):
        return (self.loc / self.scale.square(), -0.5 / self.scale.square())

    def _log_normalizer(self, eta1, eta2):
        return -0.25 * eta1.square() / eta2 + 0.5 * (-math.pi / eta2).log()

    @property
    def _mean_carrier_measure(self):
        return 0.0


class Uniform(Distribution):
    r"""The continuous uniform distribution on ``[low, high)``.

    Args:
        low (float|list|numpy.ndarray|Tensor): the lower bound.
        high (float|list|numpy.ndarray|Tensor): the upper bound, greater than ``low``.
        name (str, optional): unused, for Paddle compatibility.

    >>> import oar
    >>> from oar.distribution import Uniform
    >>> d = Uniform(oar.to_tensor([0.0, 1.0]), 3.0)
    >>> d.prob(oar.to_tensor([1.0, 2.0])).numpy().tolist()
    [0.3333333432674408, 0.5]
    >>> float(d.log_prob(oar.to_tensor([5.0, 5.0]))[0])
    -inf
    """

    def __init__(self, low, high, name=None):
        api = self._api()
        self.low, self.high = _params.params(api, ("low", "high"), (low, high))
        _params.check(api, "low", self.low, "real")
        _params.check(api, "high - low", self.high - self.low, "positive")
        self.name = name or "Uniform"
        self.dtype = self._dtype = self.low.dtype
        super().__init__(batch_shape=tuple(self.low.shape))

    @property
    def mean(self):
        """``(low + high) / 2``."""
        return (self.low + self.high) / 2

    @property
    def variance(self):
        """``(high - low)^2 / 12``."""
        return (self.high - self.low).square() / 12

    def sample(self, shape=(), seed=0):
        """Samples of shape ``shape + batch_shape`` (``seed`` is accepted for Paddle compatibility)."""
        return super().sample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples ``low + (high - low) u`` with u ~ U[0, 1)."""
        out = self._sample_shape(shape, "rsample")
        return self.low + (self.high - self.low) * _C.rand(list(out), self._dtype)

    def _inside(self, v):
        return _C.logical_and(v >= self.low, v < self.high)

    def log_prob(self, value):
        """``-log(high - low)`` inside the support, ``-inf`` outside."""
        v = self._value(value)
        lp = -(self.high - self.low).log() + v * 0
        return _C.where(self._inside(v), lp, _C.full_like(lp, float("-inf")))

    def entropy(self):
        """``log(high - low)``."""
        return (self.high - self.low).log()

    def cdf(self, value):
        """``(value - low) / (high - low)``, clipped to [0, 1]."""
        v = self._value(value, "cdf")
        return ((v - self.low) / (self.high - self.low)).clip(0.0, 1.0)

    def icdf(self, value):
        """``low + value (high - low)``."""
        v = self._value(value, "icdf")
        return self.low + v * (self.high - self.low)


class Laplace(Distribution):
    r"""The Laplace distribution: pdf(x) = exp(-|x - loc| / scale) / (2 scale).

    Args:
        loc (float|list|numpy.ndarray|Tensor): the location (mean and median).
        scale (float|list|numpy.ndarray|Tensor): the scale, positive.

    >>> import oar
    >>> from oar.distribution import Laplace
    >>> d = Laplace(0.0, 1.0)
    >>> round(float(d.log_prob(oar.to_tensor(1.0))), 4)
    -1.6931
    >>> round(float(d.icdf(d.cdf(oar.to_tensor(0.3)))), 4)
    0.3
    """

    def __init__(self, loc, scale):
        _set_loc_scale(self, loc, scale, Distribution)

    @property
    def mean(self):
        """``loc``."""
        return self.loc

    @property
    def variance(self):
        """``2 scale^2``."""
        return 2 * self.scale.square()

    @property
    def stddev(self):
        """``sqrt(2) scale``."""
        return math.sqrt(2.0) * self.scale

    def rsample(self, shape=()):
        """Reparameterised samples by the inverse CDF of uniform draws."""
        out = self._sample_shape(shape, "rsample")
        u = open_uniform(out, self._dtype) * 2 - 1  # in (-1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        """``-log(2 scale) - |value - loc| / scale``."""
        v = self._value(value)
        return -(2 * self.scale).log() - (v - self.loc).abs() / self.scale

    def entropy(self):
        """``1 + log(2 scale)``."""
        return 1 + (2 * self.scale).log()

    def cdf(self, value):
        """``0.5 - 0.5 sign(z) expm1(-|z|)`` with z = (value - loc) / scale."""
        v = self._value(value, "cdf")
        z = (v - self.loc) / self.scale
        return 0.5 - 0.5 * z.sign() * _C.expm1(-z.abs())

    def icdf(self, value):
        """``loc - scale sign(value - 0.5) log(1 - 2 |value - 0.5|)``."""
        v = self._value(value, "icdf")
        t = v - 0.5
        return self.loc - self.scale * t.sign() * (-2 * t.abs()).log1p()


class Cauchy(Distribution):
    r"""The Cauchy distribution: pdf(x) = 1 / (pi scale (1 + ((x - loc) / scale)^2)).

    It has no mean or variance; ``mean`` and ``variance`` raise ``ValueError``, as in Paddle.

    Args:
        loc (float|list|numpy.ndarray|Tensor): the location (median).
        scale (float|list|numpy.ndarray|Tensor): the half width at half maximum, positive.
        name (str, optional): unused, for Paddle compatibility.

    >>> import oar
    >>> from oar.distribution import Cauchy
    >>> d = Cauchy(0.0, 1.0)
    >>> round(float(d.cdf(oar.to_tensor(1.0))), 4)
    0.75
    >>> round(float(d.entropy()), 3)
    2.531
    """

    def __init__(self, loc, scale, name=None):
        self.name = name or "Cauchy"
        _set_loc_scale(self, loc, scale, Distribution)

    @property
    def mean(self):
        """Undefined: raises ValueError."""
        raise ValueError(f"[{self._api('mean')}] the Cauchy distribution has no mean")

    @property
    def variance(self):
        """Undefined: raises ValueError."""
        raise ValueError(f"[{self._api('variance')}] the Cauchy distribution has no variance")

    @property
    def stddev(self):
        """Undefined: raises ValueError."""
        raise ValueError(f"[{self._api('stddev')}] the Cauchy distribution has no standard deviation")

    def sample(self, shape=(), name=None):
        """Samples of shape ``shape + batch_shape``."""
        return super().sample(shape)

    def rsample(self, shape=(), name=None):
        """Reparameterised samples ``loc + scale tan(pi (u - 1/2))``."""
        out = self._sample_shape(shape, "rsample")
        u = open_uniform(out, self._dtype)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value):
        """``-log(pi scale) - log1p(((value - loc) / scale)^2)``."""
        v = self._value(value)
        z = (v - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - z.square().log1p()

    def entropy(self):
        """``log(4 pi scale)``."""
        return (4 * math.pi * self.scale).log()

    def cdf(self, value):
        """``atan((value - loc) / scale) / pi + 1/2``."""
        v = self._value(value, "cdf")
        return ((v - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        """``loc + scale tan(pi (value - 1/2))``."""
        v = self._value(value, "icdf")
        return self.loc + self.scale * (math.pi * (v - 0.5)).tan()


class Gumbel(Distribution):
    r"""The Gumbel (type-I extreme value) distribution:
    pdf(x) = exp(-(z + exp(-z))) / scale with z = (x - loc) / scale.

    Args:
        loc (float|list|numpy.ndarray|Tensor): the location (mode).
        scale (float|list|numpy.ndarray|Tensor): the scale, positive.

    >>> import oar
    >>> from oar.distribution import Gumbel
    >>> d = Gumbel(0.0, 1.0)
    >>> round(float(d.mean), 4)
    0.5772
    >>> round(float(d.cdf(oar.to_tensor(0.0))), 4)
    0.3679
    """

    def __init__(self, loc, scale):
        _set_loc_scale(self, loc, scale, Distribution)

    @property
    def mean(self):
        """``loc + scale * euler_gamma``."""
        return self.loc + self.scale * _EULER

    @property
    def variance(self):
        """``pi^2 scale^2 / 6``."""
        return math.pi ** 2 / 6 * self.scale.square()

    @property
    def stddev(self):
        """``pi scale / sqrt(6)``."""
        return math.pi / math.sqrt(6.0) * self.scale

    def rsample(self, shape=()):
        """Reparameterised samples ``loc - scale log(-log u)``."""
        out = self._sample_shape(shape, "rsample")
        u = open_uniform(out, self._dtype)
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value):
        """``-(z + exp(-z)) - log(scale)``."""
        v = self._value(value)
        z = (v - self.loc) / self.scale
        return -(z + (-z).exp()) - self.scale.log()

    def entropy(self):
        """``log(scale) + 1 + euler_gamma``."""
        return self.scale.log() + 1 + _EULER

    def cdf(self, value):
        """``exp(-exp(-z))``."""
        v = self._value(value, "cdf")
        return (-(-(v - self.loc) / self.scale).exp()).exp()

    def icdf(self, value):
        """``loc - scale log(-log(value))``."""
        v = self._value(value, "icdf")
        return self.loc - self.scale * (-v.log()).log()
