"""Distributions built from other distributions: TransformedDistribution, Independent and
LogNormal (a normal pushed through exp)."""

from .. import _C
from . import _params
from .distribution import Distribution
from .location_scale import Normal
from .transform import ChainTransform, ExpTransform, Transform, _sum_rightmost


class TransformedDistribution(Distribution):
    """The law of ``transforms[-1](...transforms[0](X))`` for X drawn from ``base``.

    ``log_prob`` uses the change of variables formula, so every transform must be
    injective; ``rsample`` is reparameterised when the base's is.

    Args:
        base (Distribution): the base distribution.
        transforms (list[Transform]): the transforms, applied in order.

    >>> import math, oar
    >>> from oar.distribution import AffineTransform, Normal, TransformedDistribution
    >>> d = TransformedDistribution(Normal(0.0, 1.0), [AffineTransform(1.0, 2.0)])
    >>> round(float(d.log_prob(oar.to_tensor(1.0))), 4) == round(-0.5 * math.log(2 * math.pi) - math.log(2.0), 4)
    True
    """

    def __init__(self, base, transforms):
        api = self._api()
        if not isinstance(base, Distribution):
            raise TypeError(f"[{api}] base must be a Distribution, got {type(base).__name__}")
        if not isinstance(transforms, (list, tuple)) or not all(isinstance(t, Transform) for t in transforms):
            raise TypeError(f"[{api}] transforms must be a list or tuple of Transform, got {transforms!r}")
        self._base = base
        self._transforms = list(transforms)
        chain = ChainTransform(self._transforms)
        base_event = len(base.event_shape)
        if chain._domain_rank > len(base.batch_shape) + base_event:
            raise ValueError(f"[{api}] the transforms need inputs of at least {chain._domain_rank} dimension(s), "
                             f"but the base distribution has shape {list(base.batch_shape + base.event_shape)}")
        shape = chain.forward_shape(base.batch_shape + base.event_shape)
        event_rank = chain._codomain_rank + max(base_event - chain._domain_rank, 0)
        self.dtype = self._dtype = getattr(base, "_dtype", _C.dtype.float32)
        cut = len(shape) - event_rank
        super().__init__(batch_shape=shape[:cut], event_shape=shape[cut:])

    @property
    def base(self):
        return self._base

    @property
    def transforms(self):
        return self._transforms

    def sample(self, shape=()):
        """Samples of the base pushed through the transforms (no gradient flows)."""
        x = self._base.sample(shape)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def rsample(self, shape=()):
        """Reparameterised samples (when the base has them)."""
        x = self._base.rsample(shape)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def log_prob(self, value):
        """log p(value) = log p_base(x) - sum log|det J_t| along the inverse path."""
        y = self._value(value)
        event_rank = len(self.event_shape)
        lp = 0.0
        for t in reversed(self._transforms):
            if not t._is_injective():
                raise NotImplementedError(f"[{self._api('log_prob')}] {type(t).__name__} is not injective, "
                                          "so the density has no change-of-variables form")
            x = t.inverse(y)
            event_rank += t._domain_rank - t._codomain_rank
            lp = lp - _sum_rightmost(t.forward_log_det_jacobian(x), event_rank - t._domain_rank)
            y = x
        return lp + _sum_rightmost(self._base.log_prob(y), event_rank - len(self._base.event_shape))


class Independent(Distribution):
    """Reinterprets the rightmost ``reinterpreted_batch_rank`` batch axes of ``base`` as
    event axes: ``log_prob`` and ``entropy`` are summed over them.

    Args:
        base (Distribution): the base distribution.
        reinterpreted_batch_rank (int): how many batch axes become event axes, in
            [1, len(base.batch_shape)].

    >>> import oar
    >>> from oar.distribution import Independent, Normal
    >>> d = Independent(Normal(oar.zeros([3]), oar.ones([3])), 1)
    >>> d.batch_shape, d.event_shape
    ((), (3,))
    >>> round(float(d.log_prob(oar.zeros([3]))), 4)
    -2.7568
    """

    def __init__(self, base, reinterpreted_batch_rank):
        api = self._api()
        if not isinstance(base, Distribution):
            raise TypeError(f"[{api}] base must be a Distribution, got {type(base).__name__}")
        n = len(base.batch_shape)
        if not isinstance(reinterpreted_batch_rank, int) or isinstance(reinterpreted_batch_rank, bool) \
                or not 1 <= reinterpreted_batch_rank <= n:
            raise ValueError(f"[{api}] reinterpreted_batch_rank must be an int in [1, {n}] (the base's batch "
                             f"rank), got {reinterpreted_batch_rank!r}")
        self._base = base
        self._reinterpreted_batch_rank = reinterpreted_batch_rank
        self.dtype = self._dtype = getattr(base, "_dtype", _C.dtype.float32)
        cut = n - reinterpreted_batch_rank
        super().__init__(batch_shape=base.batch_shape[:cut],
                         event_shape=base.batch_shape[cut:] + base.event_shape)

    @property
    def base(self):
        return self._base

    @property
    def mean(self):
        """The base's mean."""
        return self._base.mean

    @property
    def variance(self):
        """The base's variance."""
        return self._base.variance

    def sample(self, shape=()):
        """The base's samples."""
        return self._base.sample(shape)

    def rsample(self, shape=()):
        """The base's reparameterised samples."""
        return self._base.rsample(shape)

    def log_prob(self, value):
        """The base's log_prob summed over the reinterpreted axes."""
        return _sum_rightmost(self._base.log_prob(value), self._reinterpreted_batch_rank)

    def entropy(self):
        """The base's entropy summed over the reinterpreted axes."""
        return _sum_rightmost(self._base.entropy(), self._reinterpreted_batch_rank)


class LogNormal(TransformedDistribution):
    r"""The log-normal distribution: exp(X) for X ~ Normal(loc, scale).

    Args:
        loc (float|list|numpy.ndarray|Tensor): the mean of log(X).
        scale (float|list|numpy.ndarray|Tensor): the standard deviation of log(X), positive.

    >>> import math, oar
    >>> from oar.distribution import LogNormal
    >>> d = LogNormal(0.0, 1.0)
    >>> round(float(d.mean), 4) == round(math.exp(0.5), 4)
    True
    >>> round(float(d.log_prob(oar.to_tensor(1.0))), 4)
    -0.9189
    """

    def __init__(self, loc, scale):
        api = self._api()
        loc, scale = _params.params(api, ("loc", "scale"), (loc, scale))
        _params.check(api, "loc", loc, "real")
        _params.check(api, "scale", scale, "positive")
        base = Normal(loc, scale)
        self._base_normal = base
        self.loc, self.scale = base.loc, base.scale
        super().__init__(base, [ExpTransform()])

    def _api(self, method=None):
        name = "oar.distribution.LogNormal"
        return f"{name}.{method}" if method else name

    @property
    def mean(self):
        """``exp(loc + scale^2 / 2)``."""
        return (self.loc + self.scale.square() / 2).exp()

    @property
    def variance(self):
        """``(exp(scale^2) - 1) exp(2 loc + scale^2)``."""
        s2 = self.scale.square()
        return _C.expm1(s2) * (2 * self.loc + s2).exp()

    def entropy(self):
        """``loc + 0.5 + 0.5 log(2 pi) + log(scale)``."""
        return self._base_normal.entropy() + self.loc

    def log_prob(self, value):
        """``Normal(loc, scale).log_prob(log value) - log value``."""
        v = self._value(value)
        lv = v.log()
        return self._base_normal.log_prob(lv) - lv

    def cdf(self, value):
        """The normal CDF at ``log(value)``."""
        return self._base_normal.cdf(self._value(value, "cdf").log())

    def icdf(self, value):
        """``exp(Normal.icdf(value))``."""
        return self._base_normal.icdf(value).exp()
