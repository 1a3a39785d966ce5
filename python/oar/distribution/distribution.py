"""The Distribution base class and ExponentialFamily."""
from ..autograd import grad, no_grad, enable_grad
from . import _params
from ._boundary import guard_class


class Distribution:
    """Base class of probability distributions.

    A distribution has a ``batch_shape`` (independent, differently parameterised copies)
    and an ``event_shape`` (the shape of one draw). ``sample(shape)`` returns a tensor of
    shape ``shape + batch_shape + event_shape``; ``log_prob(value)`` returns one number
    per batch element.

    >>> import oar
    >>> from oar.distribution import Distribution
    >>> d = Distribution(batch_shape=(2,), event_shape=(3,))
    >>> d.batch_shape, d.event_shape
    ((2,), (3,))
    >>> d._extend_shape((4,))
    (4, 2, 3)
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        guard_class(cls)

    def __init__(self, batch_shape=(), event_shape=()):
        self._batch_shape = self._as_shape(batch_shape, "batch_shape")
        self._event_shape = self._as_shape(event_shape, "event_shape")

    def _api(self, method=None):
        name = f"oar.distribution.{type(self).__name__}"
        return f"{name}.{method}" if method else name

    def _as_shape(self, shape, what):
        try:
            return _params.sample_shape(self._api(), shape)
        except TypeError:
            raise TypeError(f"[{self._api()}] {what} must be a sequence of non-negative ints, "
                            f"got {shape!r}") from None

    @property
    def batch_shape(self):
        """The shape over which parameters are batched (a tuple)."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single draw (a tuple)."""
        return self._event_shape

    @property
    def mean(self):
        """The mean of the distribution."""
        raise NotImplementedError(f"[{self._api('mean')}] is not defined for this distribution")

    @property
    def variance(self):
        """The variance of the distribution."""
        raise NotImplementedError(f"[{self._api('variance')}] is not defined for this distribution")

    @property
    def stddev(self):
        """The standard deviation, the square root of the variance."""
        return self.variance.sqrt()

    def sample(self, shape=()):
        """Draws samples of shape ``shape + batch_shape + event_shape``; no gradient flows."""
        shape = _params.sample_shape(self._api("sample"), shape)
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """Reparameterised samples: gradients flow from them to the parameters."""
        raise NotImplementedError(f"[{self._api('rsample')}] {type(self).__name__} has no reparameterised "
                                  "sampler; use sample() (no gradient flows through it)")

    def entropy(self):
        """Shannon entropy in nats, one value per batch element."""
        raise NotImplementedError(f"[{self._api('entropy')}] is not implemented for this distribution")

    def log_prob(self, value):
        """The log density (or log mass) at ``value``."""
        raise NotImplementedError(f"[{self._api('log_prob')}] is not implemented for this distribution")

    def prob(self, value):
        """The density (or mass) at ``value``: ``exp(log_prob(value))``."""
        return self.log_prob(value).exp()

    def probs(self, value):
        """The same as ``prob`` (Paddle's older name)."""
        return self.prob(value)

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError(f"[{self._api('cdf')}] is not implemented for this distribution")

    def icdf(self, value):
        """The inverse of the cumulative distribution function at ``value`` in [0, 1]."""
        raise NotImplementedError(f"[{self._api('icdf')}] is not implemented for this distribution")

    def kl_divergence(self, other):
        """KL(self || other), dispatched through ``oar.distribution.kl_divergence``."""
        from .kl import kl_divergence

        return kl_divergence(self, other)

    @staticmethod
    def _probs_to_logits(probs, is_binary=False):
        """Logits of probabilities (clipped away from 0 and 1): log-odds for a binary
        probability, log-probabilities otherwise."""
        from ._ops import eps

        e = eps(probs.dtype)
        p = probs.clip(e, 1 - e) if is_binary else probs.clip(min=e)
        return p.log() - (-p).log1p() if is_binary else p.log()

    @staticmethod
    def _logits_to_probs(logits, is_binary=False):
        """The inverse of _probs_to_logits: a sigmoid, or a softmax over the last axis."""
        from .. import _C
        from ._ops import log_softmax

        return _C.sigmoid(logits) if is_binary else log_softmax(logits).exp()

    def _extend_shape(self, sample_shape):
        return tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape)

    def _sample_shape(self, shape, method="sample"):
        return self._extend_shape(_params.sample_shape(self._api(method), shape))

    def _value(self, value, method="log_prob"):
        return _params.value_tensor(self._api(method), value, self._dtype)

    def __repr__(self):
        return f"{type(self).__name__}(batch_shape={self.batch_shape}, event_shape={self.event_shape})"


guard_class(Distribution)


class ExponentialFamily(Distribution):
    r"""Base class of exponential-family distributions,
    p(x) = h(x) exp(<eta, T(x)> - A(eta)).

    A subclass gives ``_natural_parameters`` (a tuple of tensors eta),
    ``_log_normalizer(*eta)`` (A) and ``_mean_carrier_measure`` (E[log h(x)]); then
    ``entropy`` and the KL divergence between two members of one family follow from
    automatic differentiation of A (a Bregman divergence).

    >>> import math, oar
    >>> from oar.distribution import ExponentialFamily
    >>> class Exp(ExponentialFamily):  # the exponential distribution: eta = -rate, A = -log(-eta)
    ...     def __init__(self, rate):
    ...         self.rate = oar.to_tensor(rate)
    ...         super().__init__(batch_shape=tuple(self.rate.shape))
    ...     @property
    ...     def _natural_parameters(self):
    ...         return (-self.rate,)
    ...     def _log_normalizer(self, eta):
    ...         return -(-eta).log()
    ...     @property
    ...     def _mean_carrier_measure(self):
    ...         return 0.0
    >>> round(float(Exp(2.0).entropy()), 5) == round(1 - math.log(2.0), 5)
    True
    """

    @property
    def _natural_parameters(self):
        raise NotImplementedError(f"[{self._api('_natural_parameters')}] must be given by the subclass")

    def _log_normalizer(self, *natural_parameters):
        raise NotImplementedError(f"[{self._api('_log_normalizer')}] must be given by the subclass")

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError(f"[{self._api('_mean_carrier_measure')}] must be given by the subclass")

    def _natural_and_gradients(self):
        """The natural parameters eta, A(eta) and dA/deta. dA/deta is computed with
        create_graph, so results built from it stay differentiable with respect to the
        distribution's parameters; an eta outside any graph is replaced by a leaf copy
        so that A can be differentiated at all."""
        etas = []
        for e in self._natural_parameters:
            if e.stop_gradient:
                e = e.detach()
                e.stop_gradient = False
            etas.append(e)
        with enable_grad():
            log_norm = self._log_normalizer(*etas)
            grads = grad(log_norm.sum(), etas, create_graph=True)
        return etas, log_norm, grads

    def entropy(self):
        """Entropy from the log normaliser: A(eta) - <eta, dA/deta> - E[log h(x)]."""
        etas, log_norm, grads = self._natural_and_gradients()
        result = log_norm - self._mean_carrier_measure
        for e, g in zip(etas, grads):
            result = result - _sum_event(e * g, len(e.shape) - len(log_norm.shape))
        return result


def _sum_event(t, n):
    """Sums the trailing n axes of t (the event axes of a natural parameter)."""
    return t.sum(axis=list(range(len(t.shape) - n, len(t.shape)))) if n > 0 else t
