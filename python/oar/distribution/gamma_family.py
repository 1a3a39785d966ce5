"""The gamma family and the distributions built from gamma draws: Gamma, Exponential,
Beta, Dirichlet.

Note [implicit reparameterisation]
----------------------------------
A gamma draw x ~ Gamma(alpha, 1) is not a smooth function of alpha and a noise of fixed
law, so the location-scale trick does not apply. Holding the draw's quantile
u = P(alpha, x) fixed instead (P the regularised lower incomplete gamma function) gives
the implicit gradient dx/dalpha = -(dP/dalpha)(alpha, x) / p(x; alpha). P's derivative in
alpha has no closed form; it is the derivative of ``oar.gammainc``'s own float64 series and
continued fraction (Note [series evaluation]), taken by autograd. Beta and Dirichlet draws
are normalised gamma draws, so they inherit the gradient. The rule is first order only: differentiating the gradient again treats
dx/dalpha as a constant.
"""
import oar

from .. import _C
from ..autograd import PyLayer
from . import _params
from ._ops import lbeta as _log_beta, open_uniform, tiny, xlogy
from .distribution import ExponentialFamily


class _StandardGamma(PyLayer):
    """Gamma(alpha, 1) draws with the implicit gradient of Note [implicit reparameterisation]."""

    @staticmethod
    def forward(ctx, alpha):
        x = oar.standard_gamma(alpha)
        # a float32 draw can round to 0 for small alpha; the smallest normal keeps logs finite
        x = x.clip(min=tiny(alpha.dtype))
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, dx):
        alpha, x = ctx.saved_tensor()
        a = _C.cast(alpha, _C.dtype.float64).detach()
        v = _C.cast(x, _C.dtype.float64).detach()
        a.stop_gradient = False
        with oar.enable_grad():
            (dp_da,) = oar.grad(oar.gammainc(a, v).sum(), [a])
        a = a.detach()
        log_pdf = (a - 1) * v.log() - v - _C.lgamma(a)
        dx_da = -dp_da * (-log_pdf).exp()
        # where the density underflows (far tails) the quotient is 0/0 or inf: no usable gradient
        dx_da = _C.where(_C.logical_or(dx_da.isnan(), dx_da.isinf()), _C.zeros_like(dx_da), dx_da)
        return dx * _C.cast(dx_da, dx.dtype)


def standard_gamma_rsample(alpha):
    """Gamma(alpha, 1) draws of alpha's shape through which gradients reach alpha."""
    return _StandardGamma.apply(alpha)


class Gamma(ExponentialFamily):
    r"""The gamma distribution with shape ``concentration`` (alpha) and ``rate`` (beta):
    pdf(x) = beta^alpha x^(alpha - 1) exp(-beta x) / Gamma(alpha), x > 0.

    ``rsample`` is reparameterised (Note [implicit reparameterisation]).

    Args:
        concentration (float|list|numpy.ndarray|Tensor): the shape alpha, positive.
        rate (float|list|numpy.ndarray|Tensor): the rate beta, positive.

    >>> import oar
    >>> from oar.distribution import Gamma
    >>> d = Gamma(oar.to_tensor([1.0, 2.0]), 2.0)
    >>> d.mean.numpy().tolist()
    [0.5, 1.0]
    >>> [round(v, 4) for v in d.log_prob(oar.to_tensor([1.0, 1.0])).numpy().tolist()]
    [-1.3069, -0.6137]
    """

    def __init__(self, concentration, rate):
        api = self._api()
        self.concentration, self.rate = _params.params(api, ("concentration", "rate"), (concentration, rate))
        _params.check(api, "concentration", self.concentration, "positive")
        _params.check(api, "rate", self.rate, "positive")
        self.dtype = self._dtype = self.concentration.dtype
        super().__init__(batch_shape=tuple(self.concentration.shape))

    @property
    def mean(self):
        """``concentration / rate``."""
        return self.concentration / self.rate

    @property
    def variance(self):
        """``concentration / rate^2``."""
        return self.concentration / self.rate.square()

    def rsample(self, shape=()):
        """Reparameterised samples (Note [implicit reparameterisation])."""
        out = self._sample_shape(shape, "rsample")
        return standard_gamma_rsample(self.concentration.expand(list(out))) / self.rate

    def log_prob(self, value):
        """Log density at ``value`` (``-inf`` for value <= 0)."""
        v = self._value(value)
        a, b = self.concentration, self.rate
        inside = v > 0
        safe = _C.where(inside, v, _C.ones_like(v))
        lp = a * b.log() + (a - 1) * safe.log() - b * safe - _C.lgamma(a)
        return _C.where(inside, lp, _C.full_like(lp, float("-inf")))

    def entropy(self):
        """``alpha - log(beta) + lgamma(alpha) + (1 - alpha) digamma(alpha)``."""
        a = self.concentration
        return a - self.rate.log() + _C.lgamma(a) + (1 - a) * _C.digamma(a)

    def cdf(self, value):
        """``P(alpha, beta value)`` (regularised lower incomplete gamma function)."""
        v = self._value(value, "cdf")
        return oar.gammainc(self.concentration, (self.rate * v).clip(min=0.0))

    @property
    def _natural_parameters(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, eta1, eta2):
        return _C.lgamma(eta1 + 1) - (eta1 + 1) * (-eta2).log()

    @property
    def _mean_carrier_measure(self):
        return 0.0


class Exponential(ExponentialFamily):
    r"""The exponential distribution: pdf(x) = rate exp(-rate x), x >= 0.

    Args:
        rate (float|list|numpy.ndarray|Tensor): the rate, positive.

    >>> import oar
    >>> from oar.distribution import Exponential
    >>> d = Exponential(oar.to_tensor([1.0, 4.0]))
    >>> d.mean.numpy().tolist()
    [1.0, 0.25]
    >>> round(float(d.cdf(oar.to_tensor([1.0, 1.0]))[0]), 4)
    0.6321
    """

    def __init__(self, rate):
        api = self._api()
        (self.rate,) = _params.params(api, ("rate",), (rate,))
        _params.check(api, "rate", self.rate, "positive")
        self.dtype = self._dtype = self.rate.dtype
        super().__init__(batch_shape=tuple(self.rate.shape))

    @property
    def mean(self):
        """``1 / rate``."""
        return 1 / self.rate

    @property
    def variance(self):
        """``1 / rate^2``."""
        return 1 / self.rate.square()

    def rsample(self, shape=()):
        """Reparameterised samples ``-log(u) / rate``."""
        out = self._sample_shape(shape, "rsample")
        return -open_uniform(out, self._dtype).log() / self.rate

    def log_prob(self, value):
        """``log(rate) - rate value`` for value >= 0, ``-inf`` below."""
        v = self._value(value)
        lp = self.rate.log() - self.rate * v
        return _C.where(v >= 0, lp, _C.full_like(lp, float("-inf")))

    def entropy(self):
        """``1 - log(rate)``."""
        return 1 - self.rate.log()

    def cdf(self, value):
        """``1 - exp(-rate value)`` (0 below 0)."""
        v = self._value(value, "cdf")
        return -_C.expm1(-self.rate * v.clip(min=0.0))

    def icdf(self, value):
        """``-log(1 - value) / rate``."""
        v = self._value(value, "icdf")
        return -(-v).log1p() / self.rate

    @property
    def _natural_parameters(self):
        return (-self.rate,)

    def _log_normalizer(self, eta):
        return -(-eta).log()

    @property
    def _mean_carrier_measure(self):
        return 0.0


class Beta(ExponentialFamily):
    r"""The beta distribution on [0, 1]:
    pdf(x) = x^(alpha - 1) (1 - x)^(beta - 1) / B(alpha, beta).

    ``rsample`` is reparameterised (Note [implicit reparameterisation]).

    Args:
        alpha (float|list|numpy.ndarray|Tensor): the first shape, positive.
        beta (float|list|numpy.ndarray|Tensor): the second shape, positive.

    >>> import oar
    >>> from oar.distribution import Beta
    >>> d = Beta(2.0, oar.to_tensor([2.0, 6.0]))
    >>> d.mean.numpy().tolist()
    [0.5, 0.25]
    >>> round(float(d.prob(oar.to_tensor([0.5, 0.5]))[0]), 4)
    1.5
    """

    def __init__(self, alpha, beta):
        api = self._api()
        self.alpha, self.beta = _params.params(api, ("alpha", "beta"), (alpha, beta))
        _params.check(api, "alpha", self.alpha, "positive")
        _params.check(api, "beta", self.beta, "positive")
        self.dtype = self._dtype = self.alpha.dtype
        super().__init__(batch_shape=tuple(self.alpha.shape))

    @property
    def mean(self):
        """``alpha / (alpha + beta)``."""
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self):
        """``alpha beta / ((alpha + beta)^2 (alpha + beta + 1))``."""
        s = self.alpha + self.beta
        return self.alpha * self.beta / (s.square() * (s + 1))

    def rsample(self, shape=()):
        """Reparameterised samples ``X / (X + Y)`` of gamma draws X, Y."""
        out = list(self._sample_shape(shape, "rsample"))
        x = standard_gamma_rsample(self.alpha.expand(out))
        y = standard_gamma_rsample(self.beta.expand(out))
        return x / (x + y)

    def log_prob(self, value):
        """Log density at ``value`` in [0, 1]."""
        v = self._value(value)
        a, b = self.alpha, self.beta
        return xlogy(a - 1, v) + xlogy(b - 1, 1 - v) - _log_beta(a, b)

    def entropy(self):
        """``log B(a, b) - (a - 1) psi(a) - (b - 1) psi(b) + (a + b - 2) psi(a + b)``."""
        a, b = self.alpha, self.beta
        return (_log_beta(a, b) - (a - 1) * _C.digamma(a) - (b - 1) * _C.digamma(b)
                + (a + b - 2) * _C.digamma(a + b))

    @property
    def _natural_parameters(self):
        return (self.alpha, self.beta)

    def _log_normalizer(self, eta1, eta2):
        return _log_beta(eta1, eta2)

    @property
    def _mean_carrier_measure(self):
        a, b = self.alpha, self.beta
        return -(_C.digamma(a) + _C.digamma(b) - 2 * _C.digamma(a + b))


class Dirichlet(ExponentialFamily):
    r"""The Dirichlet distribution on the probability simplex of the last axis:
    pdf(x) = prod x_i^(alpha_i - 1) / B(alpha).

    ``rsample`` is reparameterised (Note [implicit reparameterisation]).

    Args:
        concentration (list|numpy.ndarray|Tensor): alpha, positive, at least one axis;
            the last axis is the event axis.

    >>> import oar
    >>> from oar.distribution import Dirichlet
    >>> d = Dirichlet(oar.to_tensor([1.0, 2.0, 1.0]))
    >>> d.event_shape, d.batch_shape
    ((3,), ())
    >>> d.mean.numpy().tolist()
    [0.25, 0.5, 0.25]
    >>> round(float(d.log_prob(oar.to_tensor([0.25, 0.5, 0.25]))), 4)
    1.0986
    """

    def __init__(self, concentration):
        api = self._api()
        (self.concentration,) = _params.params(api, ("concentration",), (concentration,))
        _params.check_rank(api, "concentration", self.concentration, 1)
        _params.check(api, "concentration", self.concentration, "positive")
        self.dtype = self._dtype = self.concentration.dtype
        shape = tuple(self.concentration.shape)
        super().__init__(batch_shape=shape[:-1], event_shape=shape[-1:])

    @property
    def mean(self):
        """``alpha / sum(alpha)``."""
        return self.concentration / self.concentration.sum(axis=-1, keepdim=True)

    @property
    def variance(self):
        """``alpha (a0 - alpha) / (a0^2 (a0 + 1))`` with a0 = sum(alpha)."""
        a = self.concentration
        a0 = a.sum(axis=-1, keepdim=True)
        return a * (a0 - a) / (a0.square() * (a0 + 1))

    def rsample(self, shape=()):
        """Reparameterised samples: gamma draws normalised over the last axis."""
        out = list(self._sample_shape(shape, "rsample"))
        g = standard_gamma_rsample(self.concentration.expand(out))
        return g / g.sum(axis=-1, keepdim=True)

    def log_prob(self, value):
        """Log density at ``value`` (a point of the simplex, last axis the event)."""
        v = self._value(value)
        a = self.concentration
        return (xlogy(a - 1, v).sum(axis=-1) + _C.lgamma(a.sum(axis=-1))
                - _C.lgamma(a).sum(axis=-1))

    def entropy(self):
        """``log B(alpha) + (a0 - K) psi(a0) - sum (alpha_i - 1) psi(alpha_i)``."""
        a = self.concentration
        k = a.shape[-1]
        a0 = a.sum(axis=-1)
        log_b = _C.lgamma(a).sum(axis=-1) - _C.lgamma(a0)
        return log_b + (a0 - k) * _C.digamma(a0) - ((a - 1) * _C.digamma(a)).sum(axis=-1)

    @property
    def _natural_parameters(self):
        return (self.concentration,)

    def _log_normalizer(self, eta):
        return _C.lgamma(eta).sum(axis=-1) - _C.lgamma(eta.sum(axis=-1))

    @property
    def _mean_carrier_measure(self):
        a = self.concentration
        return -(_C.digamma(a) - _C.digamma(a.sum(axis=-1, keepdim=True))).sum(axis=-1)



class Chi2(Gamma):
    r"""The chi-squared distribution with ``df`` degrees of freedom: Gamma(df / 2, rate 1/2).

    Args:
        df (float|list|numpy.ndarray|Tensor): the degrees of freedom, positive.

    >>> import oar
    >>> from oar.distribution import Chi2
    >>> d = Chi2(oar.to_tensor([2.0, 4.0]))
    >>> d.mean.numpy().tolist(), d.variance.numpy().tolist()
    ([2.0, 4.0], [4.0, 8.0])
    """

    def __init__(self, df):
        (df,) = _params.params(self._api(), ("df",), (df,))
        _params.check(self._api(), "df", df, "positive")
        super().__init__(df * 0.5, _C.full_like(df, 0.5))

    @property
    def df(self):
        """The degrees of freedom, ``2 concentration``."""
        return self.concentration * 2
