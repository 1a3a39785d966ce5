"""Probability distributions, transforms of random variables and KL divergences, with
Paddle's ``paddle.distribution`` names and semantics.

Parameters may be Python numbers, lists, NumPy arrays or Tensors (Note [distribution
parameter dtypes] in _params.py); every density, moment and reparameterised sample is
built from differentiable oar ops, so gradients reach Tensor parameters.

>>> import oar
>>> from oar.distribution import Normal, kl_divergence
>>> loc = oar.to_tensor([0.0, 1.0], stop_gradient=False)
>>> d = Normal(loc, 1.0)
>>> d.rsample([1000]).mean().backward()
>>> [round(v, 4) for v in loc.grad.numpy().tolist()]
[0.5, 0.5]
>>> round(float(kl_divergence(Normal(0.0, 1.0), Normal(0.0, 2.0))), 4)
0.3181
"""
from .continuous_bernoulli import ContinuousBernoulli
from .discrete import Bernoulli, Binomial, Categorical, Geometric, Multinomial, Poisson
from .distribution import Distribution, ExponentialFamily
from .gamma_family import Beta, Chi2, Dirichlet, Exponential, Gamma
from .kl import kl_divergence, register_kl
from .lkj_cholesky import LKJCholesky
from .location_scale import Cauchy, Gumbel, Laplace, Normal, Uniform
from .multivariate_normal import MultivariateNormal
from .student_t import StudentT
from .transform import (AbsTransform, AffineTransform, ChainTransform, ExpTransform, IndependentTransform,
                        PowerTransform, ReshapeTransform, SigmoidTransform, SoftmaxTransform, StackTransform,
                        StickBreakingTransform, TanhTransform, Transform)
from .transformed_distribution import Independent, LogNormal, TransformedDistribution

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "Independent",
    "LKJCholesky", "Laplace", "LogNormal", "Multinomial", "MultivariateNormal", "Normal", "Poisson", "StudentT",
    "TransformedDistribution", "Uniform", "kl_divergence", "register_kl",
    "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform", "IndependentTransform", "PowerTransform",
    "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
    "TanhTransform", "Transform",
]


def _guard_functions():
    """Puts the module's functions behind oar's error boundary (Note [API error boundary]);
    the classes guard their own methods (see _boundary.py)."""
    import sys

    from .. import _api

    _api.guard_module(sys.modules[__name__], "oar.distribution")


_guard_functions()
