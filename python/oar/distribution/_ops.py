"""Small numerical building blocks shared by the distributions, written with oar ops so
that gradients flow through them."""
from .. import _C


def tiny(dtype):
    """The smallest positive normal number of a float dtype (keeps logs finite)."""
    return 1.1754944e-38 if dtype == _C.dtype.float32 else 2.2250738585072014e-308


def eps(dtype):
    """The machine epsilon of a float dtype."""
    return 1.1920929e-07 if dtype == _C.dtype.float32 else 2.220446049250313e-16


def xlogy(x, y):
    """x log(y): 0 where x == 0 (even when y == 0, for densities at the ends of a support)
    and -inf where y == 0 < x. y is clipped away from 0 inside the log so that no branch of
    the selects produces inf * 0 = NaN in the backward pass."""
    prod = x * y.clip(min=tiny(y.dtype)).log()
    prod = _C.where(_C.logical_and(y <= 0, x != 0), _C.full_like(prod, float("-inf")), prod)
    return _C.where(x == 0, _C.zeros_like(prod), prod)


def softplus(x):
    """log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|))."""
    return x.clip(min=0.0) + (-x.abs()).exp().log1p()


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along axis."""
    return x - _C.logsumexp(x, axis=axis, keepdim=True)


def lbeta(a, b):
    """log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b)."""
    return _C.lgamma(a) + _C.lgamma(b) - _C.lgamma(a + b)


def open_uniform(shape, dtype):
    """Uniform draws in the open interval (0, 1), safe to take logs of and to invert CDFs at:
    the draws of oar.rand, in [0, 1), are moved at least one float32 epsilon from both ends."""
    e = 1e-7 if dtype == _C.dtype.float32 else 1e-15
    return _C.rand(list(shape), dtype).clip(e, 1.0 - e)
