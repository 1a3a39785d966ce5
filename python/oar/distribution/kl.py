"""Kullback-Leibler divergence: a registry of closed forms keyed by pairs of distribution
classes, and ``kl_divergence`` that dispatches to the most specific registered pair.

Note [KL dispatch]
------------------
A rule registered for (P, Q) applies to every (p, q) with isinstance(p, P) and
isinstance(q, Q). Among the applicable rules, one that is more specific in both places
than another wins (Normal-Normal over ExponentialFamily-ExponentialFamily). When two
applicable rules are incomparable (one more specific in p, the other in q), the rule
whose classes are nearest in the method resolution orders of type(p) and type(q) is
used and a RuntimeWarning names the ambiguity, so that registering the missing pair
resolves it.
"""
import warnings

from .. import _C
from ..autograd import enable_grad
from ._ops import lbeta, log_softmax, xlogy
from .continuous_bernoulli import ContinuousBernoulli, kl_continuous_bernoulli
from .discrete import Bernoulli, Binomial, Categorical, Geometric, Poisson
from .distribution import Distribution, ExponentialFamily
from .gamma_family import Beta, Dirichlet, Exponential, Gamma
from .location_scale import Cauchy, Laplace, Normal, Uniform
from .multivariate_normal import MultivariateNormal, kl_mvn_mvn
from .transformed_distribution import Independent, LogNormal
from .transform import _sum_rightmost

_REGISTRY = {}
_API = "oar.distribution.kl_divergence"


def register_kl(cls_p, cls_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for p of class ``cls_p`` and q of
    class ``cls_q`` (and their subclasses, unless a more specific pair is registered).

    >>> import oar
    >>> from oar.distribution import Distribution, kl_divergence, register_kl
    >>> class Point(Distribution):
    ...     def __init__(self, x):
    ...         self.x = oar.to_tensor(x)
    ...         super().__init__()
    >>> @register_kl(Point, Point)
    ... def _kl_point(p, q):
    ...     return oar.where(p.x == q.x, oar.to_tensor(0.0), oar.to_tensor(float("inf")))
    >>> float(kl_divergence(Point(1.0), Point(1.0)))
    0.0
    """
    for what, cls in (("cls_p", cls_p), ("cls_q", cls_q)):
        if not (isinstance(cls, type) and issubclass(cls, Distribution)):
            raise TypeError(f"[oar.distribution.register_kl] {what} must be a subclass of Distribution, "
                            f"got {cls!r}")

    def decorator(fn):
        if not callable(fn):
            raise TypeError(f"[oar.distribution.register_kl] the registered object must be callable, got {fn!r}")
        _REGISTRY[(cls_p, cls_q)] = fn
        return fn

    return decorator


def _dispatch(type_p, type_q):
    matches = [(p, q) for (p, q) in _REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return None
    minimal = [m for m in matches
               if not any(o != m and issubclass(o[0], m[0]) and issubclass(o[1], m[1]) for o in matches)]
    if len(minimal) > 1:
        minimal.sort(key=lambda m: type_p.__mro__.index(m[0]) + type_q.__mro__.index(m[1]))
        funcs = {_REGISTRY[m] for m in minimal}
        if len(funcs) > 1:
            names = ", ".join(f"({p.__name__}, {q.__name__})" for p, q in minimal)
            warnings.warn(f"[{_API}] ambiguous rules for ({type_p.__name__}, {type_q.__name__}): {names}; "
                          f"using ({minimal[0][0].__name__}, {minimal[0][1].__name__}). Register "
                          f"({type_p.__name__}, {type_q.__name__}) to decide.", RuntimeWarning, stacklevel=3)
    return _REGISTRY[minimal[0]]


def kl_divergence(p, q):
    r"""KL(p || q) = E_p[log p(x) - log q(x)], one value per batch element, by the most
    specific registered rule (Note [KL dispatch]).

    Args:
        p (Distribution): the first distribution.
        q (Distribution): the second distribution.

    >>> import oar
    >>> from oar.distribution import Normal, kl_divergence
    >>> round(float(kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))), 4)
    0.5
    """
    for what, d in (("p", p), ("q", q)):
        if not isinstance(d, Distribution):
            raise TypeError(f"[{_API}] {what} must be a Distribution, got {type(d).__name__}")
    fn = _dispatch(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"[{_API}] no KL divergence is registered for ({type(p).__name__}, "
                                  f"{type(q).__name__}); add one with oar.distribution.register_kl")
    return fn(p, q)


def _inf_where(cond, value):
    return _C.where(cond, _C.full_like(value, float("inf")), value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    ratio = (p.scale / q.scale).square()
    t = ((p.loc - q.loc) / q.scale).square()
    return 0.5 * (ratio + t - 1 - ratio.log())


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    return _kl_normal_normal(p._base_normal, q._base_normal)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    value = ((q.high - q.low) / (p.high - p.low)).log()
    outside = _C.logical_or(q.low > p.low, q.high < p.high)
    return _inf_where(outside, value)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    a, b = p.probs, q.probs
    return xlogy(a, a) - xlogy(a, b) + xlogy(1 - a, 1 - a) - xlogy(1 - a, 1 - b)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    n_p, n_q = p.total_count.numpy(), q.total_count.numpy()
    try:
        same = bool((n_p == n_q).all())
    except ValueError:
        same = False
    if not same:
        raise NotImplementedError(f"[{_API}] the KL divergence of binomials is implemented only for equal "
                                  "total_count (otherwise it is infinite or needs the supports compared)")
    return p.total_count * _kl_bernoulli_bernoulli(p, q)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    lp, lq = p._log_p, log_softmax(q.logits)
    prob = lp.exp()
    return (prob * (lp - lq)).sum(axis=-1)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    a, b = p.probs, q.probs
    return (a / b).log() + (xlogy(1 - a, 1 - a) - xlogy(1 - a, 1 - b)) / a


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    a, b = p.rate, q.rate
    return a * (a / b).log() - a + b


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    ap, bp, aq, bq = p.alpha, p.beta, q.alpha, q.beta
    return (lbeta(aq, bq) - lbeta(ap, bp) + (ap - aq) * _C.digamma(ap) + (bp - bq) * _C.digamma(bp)
            + (aq - ap + bq - bp) * _C.digamma(ap + bp))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    a0 = a.sum(axis=-1)
    return (_C.lgamma(a0) - _C.lgamma(a).sum(axis=-1) - _C.lgamma(b.sum(axis=-1)) + _C.lgamma(b).sum(axis=-1)
            + ((a - b) * (_C.digamma(a) - _C.digamma(a0.unsqueeze(-1)))).sum(axis=-1))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    ap, bp, aq, bq = p.concentration, p.rate, q.concentration, q.rate
    return ((ap - aq) * _C.digamma(ap) - _C.lgamma(ap) + _C.lgamma(aq) + aq * (bp.log() - bq.log())
            + ap * (bq - bp) / bp)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    d = (p.loc - q.loc).abs()
    return (q.scale / p.scale).log() + d / q.scale + p.scale / q.scale * (-d / p.scale).exp() - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    s = (p.scale + q.scale).square() + (p.loc - q.loc).square()
    return (s / (4 * p.scale * q.scale)).log()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli(p, q):
    return kl_continuous_bernoulli(p, q)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(f"[{_API}] the multivariate normals have different event shapes "
                         f"{list(p.event_shape)} and {list(q.event_shape)}")
    return kl_mvn_mvn(p, q)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p._reinterpreted_batch_rank != q._reinterpreted_batch_rank or p.event_shape != q.event_shape:
        raise NotImplementedError(f"[{_API}] Independent distributions with different event shapes "
                                  f"({list(p.event_shape)} and {list(q.event_shape)})")
    return _sum_rightmost(kl_divergence(p.base, q.base), p._reinterpreted_batch_rank)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normaliser A between the natural parameters:
    KL(p || q) = A(eta_q) - A(eta_p) - <eta_q - eta_p, dA/deta(eta_p)>."""
    if type(p) is not type(q):
        raise NotImplementedError(f"[{_API}] no KL divergence is registered for ({type(p).__name__}, "
                                  f"{type(q).__name__}), and the exponential-family rule needs one family")
    etas_p, a_p, grads = p._natural_and_gradients()
    etas_q = q._natural_parameters
    with enable_grad():
        a_q = q._log_normalizer(*etas_q)
    result = a_q - a_p
    for ep, eq, g in zip(etas_p, etas_q, grads):
        term = (eq - ep) * g
        result = result - _sum_rightmost(term, len(term.shape) - len(result.shape))
    return result
