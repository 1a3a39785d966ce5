"""Discrete distributions: Bernoulli, Categorical, Multinomial, Geometric, Poisson, Binomial.

Their draws are not differentiable functions of the parameters, so ``rsample`` raises
NotImplementedError, except Bernoulli's, which (as in Paddle) returns the relaxed
(Concrete / Gumbel-softmax) sample with a temperature.
"""
import math

import numpy as np

import oar

from .. import _C
from . import _params
from ._ops import eps, log_softmax, open_uniform, softplus, tiny, xlogy
from .distribution import Distribution, ExponentialFamily


def _no_rsample(dist):
    raise NotImplementedError(f"[{dist._api('rsample')}] {type(dist).__name__} is discrete and has no "
                              "reparameterised sampler; use sample() (no gradient flows through it)")


class Bernoulli(ExponentialFamily):
    r"""The Bernoulli distribution: 1 with probability ``probs``, 0 otherwise.

    Args:
        probs (float|list|numpy.ndarray|Tensor): the probability of 1, in [0, 1].
        name (str, optional): unused, for Paddle compatibility.

    >>> import oar
    >>> from oar.distribution import Bernoulli
    >>> d = Bernoulli(oar.to_tensor([0.25, 0.5]))
    >>> d.prob(oar.to_tensor([1.0, 0.0])).numpy().tolist()
    [0.25, 0.5]
    >>> d.variance.numpy().tolist()
    [0.1875, 0.25]
    >>> sorted(set(d.sample([100]).numpy().ravel().tolist())) in ([0.0, 1.0], [0.0], [1.0])
    True
    """

    def __init__(self, probs, name=None):
        api = self._api()
        (self.probs,) = _params.params(api, ("probs",), (probs,))
        _params.check(api, "probs", self.probs, "unit")
        self.name = name or "Bernoulli"
        self.dtype = self._dtype = self.probs.dtype
        e = eps(self._dtype)
        p = self.probs.clip(e, 1 - e)
        self.logits = p.log() - (-p).log1p()
        super().__init__(batch_shape=tuple(self.probs.shape))

    @property
    def mean(self):
        """``probs``."""
        return self.probs

    @property
    def variance(self):
        """``probs (1 - probs)``."""
        return self.probs * (1 - self.probs)

    def sample(self, shape=()):
        """0/1 samples (in the distribution's float dtype) of shape ``shape + batch_shape``."""
        out = list(self._sample_shape(shape))
        with oar.no_grad():
            return _C.bernoulli(self.probs.expand(out))

    def rsample(self, shape=(), temperature=1.0):
        """Relaxed samples in (0, 1): ``sigmoid((logits + log u - log(1 - u)) / temperature)``;
        they tend to 0/1 draws as the temperature goes to 0, and gradients reach ``probs``."""
        if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or temperature <= 0:
            raise ValueError(f"[{self._api('rsample')}] temperature must be a positive number, got {temperature!r}")
        out = self._sample_shape(shape, "rsample")
        u = open_uniform(out, self._dtype)
        return _C.sigmoid((self.logits + u.log() - (-u).log1p()) / temperature)

    def log_prob(self, value):
        """``value log(probs) + (1 - value) log(1 - probs)``."""
        v = self._value(value)
        return xlogy(v, self.probs) + xlogy(1 - v, 1 - self.probs)

    def entropy(self):
        """``-p log p - (1 - p) log(1 - p)``."""
        p = self.probs
        return -(xlogy(p, p) + xlogy(1 - p, 1 - p))

    def cdf(self, value):
        """0 below 0, ``1 - probs`` on [0, 1), 1 from 1 on."""
        v = self._value(value, "cdf")
        p = self.probs + v * 0
        low = _C.where(v < 0, _C.zeros_like(p), 1 - p)
        return _C.where(v >= 1, _C.ones_like(p), low)

    @property
    def _natural_parameters(self):
        return (self.logits,)

    def _log_normalizer(self, eta):
        return softplus(eta)

    @property
    def _mean_carrier_measure(self):
        return 0.0


class Categorical(Distribution):
    r"""The categorical distribution over the K classes of the last axis of ``logits``.

    ``logits`` are unnormalised log-probabilities: the class probabilities are
    ``softmax(logits)`` everywhere (sampling, ``prob``, ``log_prob``, ``entropy``, KL).

    Note [Categorical logits]: Paddle's ``Categorical`` divides ``logits`` by their sum in
    ``probs``/``log_prob``/``sample`` but applies a softmax in ``entropy`` and
    ``kl_divergence``, so its methods describe two different distributions. oar uses the
    softmax in all of them; pass ``probs.log()`` to describe given probabilities.

    Args:
        logits (list|numpy.ndarray|Tensor): unnormalised log-probabilities, at least one
            axis; the leading axes are the batch.
        name (str, optional): unused, for Paddle compatibility.

    >>> import math, oar
    >>> from oar.distribution import Categorical
    >>> d = Categorical(oar.to_tensor([0.1, 0.2, 0.7]).log())
    >>> [round(v, 4) for v in d.prob(oar.to_tensor([2, 0])).numpy().tolist()]
    [0.7, 0.1]
    >>> d.sample([4]).dtype == oar.int64
    True
    """

    def __init__(self, logits, name=None):
        api = self._api()
        (self.logits,) = _params.params(api, ("logits",), (logits,))
        _params.check_rank(api, "logits", self.logits, 1)
        v = _params.numpy_values(self.logits)
        if v is not None and (np.isnan(v).any() or np.isposinf(v).any()):
            raise ValueError(f"[{api}] logits must not hold NaN or +inf")
        if self.logits.shape[-1] == 0:
            raise ValueError(f"[{api}] logits must have at least one class in the last axis, "
                             f"got shape {list(self.logits.shape)}")
        self.name = name or "Categorical"
        self.dtype = self._dtype = self.logits.dtype
        self._log_p = log_softmax(self.logits)
        super().__init__(batch_shape=tuple(self.logits.shape[:-1]))

    @property
    def probs_tensor(self):
        """The class probabilities, ``softmax(logits)``."""
        return self._log_p.exp()

    def sample(self, shape=()):
        """Class indices (int64) of shape ``shape + batch_shape``."""
        sshape = _params.sample_shape(self._api("sample"), shape)
        n = _params.shape_numel(sshape)
        k = self.logits.shape[-1]
        rows = _params.shape_numel(self.batch_shape)
        out = list(sshape) + list(self.batch_shape)
        if n == 0 or rows == 0:
            return _C.zeros(out, _C.dtype.int64)
        with oar.no_grad():
            p = self._log_p.exp().reshape([rows, k])
            idx = _C.multinomial(p, n, True)  # [rows, n]
            return idx.transpose([1, 0]).reshape(out)

    def log_prob(self, value):
        """Log probability of the class indices ``value`` (broadcast against the batch)."""
        api = self._api("log_prob")
        v = value if isinstance(value, _C.Tensor) else oar.to_tensor(np.asarray(value))
        if v.dtype not in (_C.dtype.int64, _C.dtype.int32, _C.dtype.int16, _C.dtype.int8, _C.dtype.uint8):
            vals = _params.numpy_values(v)
            if vals is not None and np.any(vals != np.floor(vals)):
                raise ValueError(f"[{api}] value must hold class indices (integers), got {vals.ravel()[:4]}")
        v = _C.cast(v, _C.dtype.int64)
        vals = _params.numpy_values(v)
        k = self.logits.shape[-1]
        if vals is not None and vals.size and (vals.min() < 0 or vals.max() >= k):
            raise ValueError(f"[{api}] value must hold class indices in [0, {k}), got values in "
                             f"[{vals.min()}, {vals.max()}]")
        try:
            shape = list(np.broadcast_shapes(tuple(v.shape), tuple(self.batch_shape)))
        except ValueError:
            raise ValueError(f"[{api}] value of shape {list(v.shape)} does not broadcast with the batch "
                             f"shape {list(self.batch_shape)}") from None
        lp = self._log_p.expand(shape + [k])
        idx = v.expand(shape).unsqueeze(-1)
        return _C.take_along_axis(lp, idx, -1).squeeze(-1)

    def entropy(self):
        """``-sum p log p`` over the classes."""
        p = self._log_p.exp()
        return -(xlogy(p, p)).sum(axis=-1)


class Multinomial(Distribution):
    r"""The multinomial distribution: counts of each of K classes in ``total_count`` draws
    from the class probabilities ``probs`` (last axis; normalised to sum to 1).

    Args:
        total_count (int): the number of draws, positive.
        probs (list|numpy.ndarray|Tensor): non-negative class weights, at least one axis.

    >>> import oar
    >>> from oar.distribution import Multinomial
    >>> d = Multinomial(4, oar.to_tensor([0.2, 0.3, 0.5]))
    >>> d.mean.numpy().tolist()
    [0.800000011920929, 1.2000000476837158, 2.0]
    >>> s = d.sample([3])
    >>> s.shape, s.sum(axis=-1).numpy().tolist()
    ([3, 3], [4.0, 4.0, 4.0])
    """

    def __init__(self, total_count, probs):
        api = self._api()
        if not isinstance(total_count, (int, np.integer)) or isinstance(total_count, bool) or total_count < 1:
            raise ValueError(f"[{api}] total_count must be a positive int, got {total_count!r}")
        self.total_count = int(total_count)
        (p,) = _params.params(api, ("probs",), (probs,))
        _params.check_rank(api, "probs", p, 1)
        _params.check(api, "probs", p, "nonnegative")
        v = _params.numpy_values(p)
        if v is not None and v.size and np.any(v.sum(axis=-1) <= 0):
            raise ValueError(f"[{api}] probs must have a positive sum along the last axis")
        self.probs = p / p.sum(axis=-1, keepdim=True)
        self.dtype = self._dtype = p.dtype
        shape = tuple(p.shape)
        super().__init__(batch_shape=shape[:-1], event_shape=shape[-1:])

    @property
    def mean(self):
        """``total_count probs``."""
        return self.total_count * self.probs

    @property
    def variance(self):
        """``total_count probs (1 - probs)``."""
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, shape=()):
        """Count vectors (float, summing to ``total_count``) of shape ``shape + batch_shape + [K]``."""
        sshape = _params.sample_shape(self._api("sample"), shape)
        n = _params.shape_numel(sshape)
        k = self.probs.shape[-1]
        rows = _params.shape_numel(self.batch_shape)
        out = list(sshape) + list(self.batch_shape) + [k]
        if n == 0 or rows == 0:
            return _C.zeros(out, self._dtype)
        # Class by class, each count is binomial given the earlier ones: K draws of the
        # output's size instead of total_count categorical draws per sample.
        with oar.no_grad():
            p = self.probs.expand(out)
            left_n = _C.full(out[:-1], self.total_count, _C.dtype.int64)
            left_p = _C.ones(out[:-1], self._dtype)
            counts = []
            for i in range(k - 1):
                p_i = p[..., i]
                q = _C.where(left_p > 0, p_i / left_p.clip(min=tiny(self._dtype)), _C.zeros_like(p_i)).clip(0.0, 1.0)
                c = oar.binomial(left_n, q)
                counts.append(c)
                left_n = left_n - c
                left_p = left_p - p_i
            counts.append(left_n)
            return _C.cast(_C.stack(counts, -1), self._dtype).reshape(out)

    def log_prob(self, value):
        """``lgamma(n + 1) - sum lgamma(x_i + 1) + sum x_i log p_i``."""
        v = self._value(value)
        return (math.lgamma(self.total_count + 1) - _C.lgamma(v + 1).sum(axis=-1)
                + xlogy(v, self.probs).sum(axis=-1))

    def entropy(self):
        """Exact entropy: ``-lgamma(n + 1) - n sum p log p + sum_i E[lgamma(X_i + 1)]`` with
        X_i ~ Binomial(n, p_i), the last expectation summed over the support 0..n."""
        n = self.total_count
        p = self.probs
        k = _C.arange(0, n + 1, 1, self._dtype).reshape([n + 1] + [1] * len(p.shape))
        log_pmf = (math.lgamma(n + 1) - _C.lgamma(k + 1) - _C.lgamma(n - k + 1)
                   + xlogy(k, p) + xlogy(n - k, 1 - p))
        expected = (log_pmf.exp() * _C.lgamma(k + 1)).sum(axis=0).sum(axis=-1)
        return -math.lgamma(n + 1) - n * xlogy(p, p).sum(axis=-1) + expected


class Geometric(Distribution):
    r"""The geometric distribution: the number of Bernoulli(``probs``) trials up to and
    including the first success, k = 1, 2, ...; pmf(k) = (1 - p)^(k - 1) p.

    As in Paddle, ``mean`` is 1 / p, ``pmf(k)`` = (1 - p)^(k - 1) p and ``cdf(k)`` =
    1 - (1 - p)^k. Paddle's ``sample`` returns non-integer values and its KL is the
    Bernoulli one; oar samples integers k >= 1 and uses the geometric KL.

    Args:
        probs (float|list|numpy.ndarray|Tensor): the success probability, in (0, 1].

    >>> import oar
    >>> from oar.distribution import Geometric
    >>> d = Geometric(0.5)
    >>> float(d.mean), float(d.variance)
    (2.0, 2.0)
    >>> float(d.pmf(2)), float(d.cdf(4))
    (0.25, 0.9375)
    """

    def __init__(self, probs):
        api = self._api()
        (self.probs,) = _params.params(api, ("probs",), (probs,))
        _params.check(api, "probs", self.probs, "unit_open_left")
        self.dtype = self._dtype = self.probs.dtype
        super().__init__(batch_shape=tuple(self.probs.shape))

    @property
    def mean(self):
        """``1 / probs``."""
        return 1 / self.probs

    @property
    def variance(self):
        """``(1 - probs) / probs^2``."""
        return (1 - self.probs) / self.probs.square()

    def sample(self, shape=()):
        """Integer-valued samples k >= 1 (in the float dtype): ``floor(log u / log(1 - p)) + 1``."""
        out = self._sample_shape(shape)
        with oar.no_grad():
            u = open_uniform(out, self._dtype)
            q = (-self.probs).log1p()  # log(1 - p); -inf when p == 1 gives k = 1
            return (u.log() / q).floor() + 1

    def rsample(self, shape=()):
        """Not available: the geometric distribution is discrete."""
        _no_rsample(self)

    def log_prob(self, value):
        """``(k - 1) log(1 - p) + log p`` for integers k >= 1, ``-inf`` elsewhere."""
        v = self._value(value)
        lp = xlogy(v - 1, 1 - self.probs) + self.probs.log()
        ok = _C.logical_and(v >= 1, v == v.floor())
        return _C.where(ok, lp, _C.full_like(lp, float("-inf")))

    def pmf(self, k):
        """The probability mass at ``k``: ``(1 - p)^(k - 1) p``."""
        return self.log_prob(self._value(k, "pmf")).exp()

    def log_pmf(self, k):
        """The log probability mass at ``k``."""
        return self.log_prob(self._value(k, "log_pmf"))

    def cdf(self, k):
        """``1 - (1 - p)^floor(k)`` for k >= 0 (0 below)."""
        v = self._value(k, "cdf").floor().clip(min=0.0)
        return -_C.expm1(xlogy(v, 1 - self.probs))

    def entropy(self):
        """``-((1 - p) log(1 - p) + p log p) / p``."""
        p = self.probs
        return -(xlogy(1 - p, 1 - p) + xlogy(p, p)) / p


class Poisson(Distribution):
    r"""The Poisson distribution: pmf(k) = rate^k exp(-rate) / k!, k = 0, 1, ...

    Args:
        rate (float|list|numpy.ndarray|Tensor): the rate, positive.

    >>> import oar
    >>> from oar.distribution import Poisson
    >>> d = Poisson(oar.to_tensor([1.0, 3.0]))
    >>> [round(v, 4) for v in d.prob(oar.to_tensor([0.0, 3.0])).numpy().tolist()]
    [0.3679, 0.224]
    """

    def __init__(self, rate):
        api = self._api()
        (self.rate,) = _params.params(api, ("rate",), (rate,))
        _params.check(api, "rate", self.rate, "positive")
        self.dtype = self._dtype = self.rate.dtype
        super().__init__(batch_shape=tuple(self.rate.shape))

    @property
    def mean(self):
        """``rate``."""
        return self.rate

    @property
    def variance(self):
        """``rate``."""
        return self.rate

    def sample(self, shape=()):
        """Counts (in the float dtype) of shape ``shape + batch_shape``."""
        out = list(self._sample_shape(shape))
        with oar.no_grad():
            return oar.poisson(self.rate.expand(out))

    def rsample(self, shape=()):
        """Not available: the Poisson distribution is discrete."""
        _no_rsample(self)

    def log_prob(self, value):
        """``k log(rate) - rate - lgamma(k + 1)`` for integers k >= 0, ``-inf`` elsewhere."""
        v = self._value(value)
        ok = _C.logical_and(v >= 0, v == v.floor())
        safe = _C.where(ok, v, _C.zeros_like(v))
        lp = xlogy(safe, self.rate) - self.rate - _C.lgamma(safe + 1)
        return _C.where(ok, lp, _C.full_like(lp, float("-inf")))

    def entropy(self):
        """``-sum_k p(k) log p(k)``, summed over k up to rate + 30 sqrt(rate) + 30 (the
        omitted tail is below float64 resolution)."""
        r = _params.numpy_values(self.rate)
        top = float(r.max()) if r is not None and r.size else 0.0
        n = int(math.ceil(top + 30 * math.sqrt(top) + 30))
        k = _C.arange(0, n + 1, 1, self._dtype).reshape([n + 1] + [1] * len(self.rate.shape))
        pk = (xlogy(k, self.rate) - self.rate - _C.lgamma(k + 1)).exp()
        return -xlogy(pk, pk).sum(axis=0)


class Binomial(Distribution):
    r"""The binomial distribution: successes in ``total_count`` Bernoulli(``probs``) trials.

    Args:
        total_count (int|list|numpy.ndarray|Tensor): the number of trials, non-negative integers.
        probs (float|list|numpy.ndarray|Tensor): the success probability, in [0, 1].
            Both broadcast to the batch shape.

    >>> import oar
    >>> from oar.distribution import Binomial
    >>> d = Binomial(10, oar.to_tensor([0.5, 0.2]))
    >>> d.mean.numpy().tolist()
    [5.0, 2.0]
    >>> round(float(d.prob(oar.to_tensor([5.0, 2.0]))[0]), 4)
    0.2461
    """

    def __init__(self, total_count, probs):
        api = self._api()
        self.total_count, self.probs = _params.params(api, ("total_count", "probs"), (total_count, probs))
        _params.check(api, "total_count", self.total_count, "integer")
        _params.check(api, "probs", self.probs, "unit")
        self.dtype = self._dtype = self.probs.dtype
        super().__init__(batch_shape=tuple(self.probs.shape))

    @property
    def mean(self):
        """``total_count probs``."""
        return self.total_count * self.probs

    @property
    def variance(self):
        """``total_count probs (1 - probs)``."""
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, shape=()):
        """Success counts (in the float dtype) of shape ``shape + batch_shape``."""
        out = list(self._sample_shape(shape))
        with oar.no_grad():
            n = _C.cast(self.total_count.expand(out), _C.dtype.int64)
            return _C.cast(oar.binomial(n, self.probs.expand(out)), self._dtype)

    def rsample(self, shape=()):
        """Not available: the binomial distribution is discrete."""
        _no_rsample(self)

    def _log_pmf(self, v):
        """(mask of the support, log pmf there and a finite stand-in elsewhere): points off
        the support are evaluated at k = 0 so that no inf reaches a gradient."""
        n, p = self.total_count, self.probs
        ok = _C.logical_and(_C.logical_and(v >= 0, v <= n), v == v.floor())
        k = _C.where(ok, v, _C.zeros_like(v))
        lp = (_C.lgamma(n + 1) - _C.lgamma(k + 1) - _C.lgamma(n - k + 1)
              + xlogy(k, p) + xlogy(n - k, 1 - p))
        return ok, lp

    def log_prob(self, value):
        """``log C(n, k) + k log p + (n - k) log(1 - p)`` for integers 0 <= k <= n, ``-inf`` elsewhere."""
        ok, lp = self._log_pmf(self._value(value))
        return _C.where(ok, lp, _C.full_like(lp, float("-inf")))

    def entropy(self):
        """``-sum_k p(k) log p(k)`` over the support 0..total_count."""
        nv = _params.numpy_values(self.total_count)
        top = int(nv.max()) if nv is not None and nv.size else 0
        k = _C.arange(0, top + 1, 1, self._dtype).reshape([top + 1] + [1] * len(self.probs.shape))
        ok, lp = self._log_pmf(k)
        pk = _C.where(ok, lp.exp(), _C.zeros_like(lp))
        return -xlogy(pk, pk).sum(axis=0)
