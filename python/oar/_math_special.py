"""Special functions of the paddle namespace: modified Bessel functions (i0, i0e,
i1, i1e), the regularized incomplete gamma functions, polygamma and multigammaln,
written over the core ops (Note [series evaluation])."""
import builtins
import math

import numpy as np

from . import _C
from ._math_common import _DT, _back, _f64, _float_input, _inplace, _int_scalar, _like, _no_grad, _tensor

__all__ = ["i0", "i0_", "i0e", "i1", "i1e", "gammainc", "gammainc_", "gammaincc", "gammaincc_", "polygamma",
           "polygamma_", "multigammaln", "multigammaln_", "xlogy"]


# ---------------------------------------------------------------- special functions
# Note [series evaluation]: the special functions below are computed in float64
# (and cast back to the input's dtype) from convergent power series, asymptotic
# expansions and continued fractions with fixed term counts, selected per
# element with `where`. Each branch is evaluated at inputs clamped into its own
# domain, so the unused branch never produces inf/NaN that a gradient through
# `where` would turn into NaN. Term counts (checked against SciPy to ~1e-14
# relative in float64):
# - I0/I1: the power series for |x| <= 20 (60 terms) and Hankel's asymptotic
#   expansion beyond (30 terms; its smallest term there is ~e^-40);
# - polygamma: the recurrence psi(n, x) = psi(n, x + 1) - (-1)^n n! / x^(n+1)
#   shifts x by 16 + n (and past any negative x, down to -1000) before the
#   asymptotic series with Bernoulli numbers B_2 ... B_20; n <= 170;
# - the regularized incomplete gamma functions: the series for y < x + 1 and
#   Legendre's continued fraction otherwise, 250 terms each, more (as sqrt(x))
#   for shape parameters x beyond ~1e3, up to 4000 terms (x ~ 2e5).

def _special_input(x, api):
    """(x as float64, the dtype to return): integers compute in the default float dtype."""
    x = _float_input(x, api)
    return (x if x.dtype == _DT.float64 else _C.cast(x, _DT.float64)), x.dtype


_BESSEL_SPLIT = 20.0
_BESSEL_SERIES_TERMS = 60
_BESSEL_ASYMPTOTIC_TERMS = 30


def _bessel_i(x, order, scaled):
    """I_order(x) (order 0 or 1) of a float64 tensor, times exp(-|x|) when scaled."""
    a = _C.abs(x)
    small = _C.less_equal(a, _f64(_BESSEL_SPLIT))
    # Series: (x/2)^order * sum_k (x^2/4)^k / (k! (k+order)!), by Horner in t = x^2/4.
    xs = _C.where(small, x, _f64(0.0))
    t = _C.square(_C.multiply(xs, _f64(0.5)))
    coef = [1.0 / (math.factorial(k) * math.factorial(k + order)) for k in range(_BESSEL_SERIES_TERMS)]
    acc = _f64(coef[-1])
    for c in reversed(coef[:-1]):
        acc = _C.add(_C.multiply(acc, t), _f64(c))
    if order == 1:
        acc = _C.multiply(acc, _C.multiply(xs, _f64(0.5)))
    if scaled:
        acc = _C.multiply(acc, _C.exp(_C.neg(_C.abs(xs))))
    # Asymptotic: e^|x| / sqrt(2 pi |x|) * sum_k (-1)^k a_k / |x|^k,
    # a_k = prod_{j<=k} (4 order^2 - (2j - 1)^2) / (k! 8^k), by Horner in 1/|x|.
    xl = _C.where(small, _f64(_BESSEL_SPLIT + 1.0), a)
    r = _C.reciprocal(xl)
    mu = 4.0 * order * order
    ak, terms = 1.0, [1.0]
    for k in range(1, _BESSEL_ASYMPTOTIC_TERMS):
        ak *= -(mu - (2 * k - 1) ** 2) / (k * 8.0)
        terms.append(ak)
    big = _f64(terms[-1])
    for c in reversed(terms[:-1]):
        big = _C.add(_C.multiply(big, r), _f64(c))
    log_pref = _C.multiply(_f64(-0.5), _C.log(_C.multiply(xl, _f64(2 * math.pi))))
    if not scaled:
        log_pref = _C.add(log_pref, xl)
    big = _C.multiply(big, _C.exp(log_pref))
    if order == 1:
        big = _C.multiply(big, _C.sign(x))
    out = _C.where(small, acc, big)
    if not scaled:  # e^|x| / sqrt(|x|) is inf - inf in the log domain at |x| = inf
        out = _C.where(_C.isinf(x), _C.abs(x) if order == 0 else x, out)
    return out


def _bessel_api(x, order, scaled, api):
    xf, dt = _special_input(_tensor(x, api), api)
    return _back(_bessel_i(xf, order, scaled), dt)


def i0(x, name=None):
    """The modified Bessel function of the first kind of order 0 (integers
    become the default float dtype). Differentiable: its derivative is i1.

    >>> import oar
    >>> [round(v, 6) for v in oar.i0(oar.to_tensor([0.0, 1.0, -2.5])).numpy().tolist()]
    [1.0, 1.266066, 3.289839]
    """
    return _bessel_api(x, 0, False, "oar.i0")


def i0_(x, name=None):
    """In-place i0.

    >>> import oar
    >>> x = oar.to_tensor([0.0])
    >>> oar.i0_(x).numpy().tolist()
    [1.0]
    """
    return _inplace(x, lambda v: _bessel_api(v, 0, False, "oar.i0_"), "oar.i0_")


def i0e(x, name=None):
    """The exponentially scaled i0: exp(-|x|) * i0(x), finite for large |x|.

    >>> import oar
    >>> [round(v, 6) for v in oar.i0e(oar.to_tensor([0.0, 1.0, 30.0])).numpy().tolist()]
    [1.0, 0.46576, 0.073146]
    """
    return _bessel_api(x, 0, True, "oar.i0e")


def i1(x, name=None):
    """The modified Bessel function of the first kind of order 1 (odd in x).

    >>> import oar
    >>> [round(v, 6) for v in oar.i1(oar.to_tensor([0.0, 1.0, -2.5])).numpy().tolist()]
    [0.0, 0.565159, -2.516716]
    """
    return _bessel_api(x, 1, False, "oar.i1")


def i1e(x, name=None):
    """The exponentially scaled i1: exp(-|x|) * i1(x).

    >>> import oar
    >>> [round(v, 6) for v in oar.i1e(oar.to_tensor([1.0, -2.5, 30.0])).numpy().tolist()]
    [0.20791, -0.206585, 0.071916]
    """
    return _bessel_api(x, 1, True, "oar.i1e")


_GAMMAINC_TERMS = 250  # enough for a shape parameter up to ~1e3
_GAMMAINC_MAX_TERMS = 4000  # the count grows as sqrt(a) beyond: enough up to ~2e5


def _check_nonnegative(v, api, what):
    if v.size and not _C._ir_is_tracing():
        with _no_grad():
            bad = builtins.bool(_C.any(_C.less_than(v, _like(0, v)), None, False).item())
        if bad:
            raise ValueError(f"[{api}] {what} must be non-negative, got a negative element")


def _gammainc_terms(a):
    """The series/continued-fraction length for shape parameters a: both converge after ~sqrt(2 a ln 1e16) terms."""
    if a.size == 0 or _C._ir_is_tracing():
        return _GAMMAINC_TERMS
    with _no_grad():
        top = float(_C.amax(_C.where(_C.isfinite(a), a, _f64(0.0)), None, False).item())
    return builtins.min(builtins.max(_GAMMAINC_TERMS, int(9 * math.sqrt(top)) + 30), _GAMMAINC_MAX_TERMS)


def _gammainc_pq(a, y):
    """(P, Q): the regularized lower and upper incomplete gamma functions of float64 a and y."""
    terms = _gammainc_terms(a)
    shape = list(np.broadcast_shapes(tuple(a.shape), tuple(y.shape)))
    a, y = _C.expand(a, shape), _C.expand(y, shape)
    valid = _C.logical_and(_C.logical_and(_C.greater_than(a, _f64(0)), _C.greater_than(y, _f64(0))),
                           _C.logical_and(_C.isfinite(a), _C.isfinite(y)))
    use_series = _C.logical_and(valid, _C.less_than(y, _C.add(a, _f64(1))))
    use_cf = _C.logical_and(valid, _C.logical_not(use_series))
    # Series: P = y^a e^-y / Gamma(a + 1) * sum_n y^n / ((a+1)...(a+n)).
    a_s, y_s = _C.where(use_series, a, _f64(1)), _C.where(use_series, y, _f64(0.5))
    term = _f64(1.0)
    total = term
    den = a_s
    for _ in range(terms):
        den = _C.add(den, _f64(1))
        term = _C.multiply(term, _C.divide(y_s, den))
        total = _C.add(total, term)
    p_series = _C.multiply(total, _C.exp(_C.subtract(_C.subtract(_C.multiply(a_s, _C.log(y_s)), y_s),
                                                     _C.lgamma(_C.add(a_s, _f64(1))))))
    # Continued fraction: Q = y^a e^-y / Gamma(a) / (b_1 - a_1 / (b_2 - a_2 / ...)),
    # b_n = y + 2n - 1 - a, a_n = n (n - a), evaluated from the bottom up.
    a_c, y_c = _C.where(use_cf, a, _f64(1)), _C.where(use_cf, y, _f64(3))
    base = _C.subtract(y_c, a_c)
    f = _C.add(base, _f64(2 * terms + 1))
    for n in range(terms, 0, -1):
        an = _C.multiply(_f64(n), _C.subtract(_f64(n), a_c))
        f = _C.subtract(_C.add(base, _f64(2 * n - 1)), _C.divide(an, f))
    q_cf = _C.divide(_C.exp(_C.subtract(_C.subtract(_C.multiply(a_c, _C.log(y_c)), y_c), _C.lgamma(a_c))), f)
    p = _C.where(use_series, p_series, _C.subtract(_f64(1), q_cf))
    q = _C.where(use_series, _C.subtract(_f64(1), p_series), q_cf)
    # Edges: y = 0 or a = 0 give P = 0 (Paddle's convention for a = 0); y = inf gives P = 1.
    edge_one = _C.logical_and(_C.isposinf(y), _C.greater_than(a, _f64(0)))
    nan_in = _C.logical_or(_C.isnan(a), _C.isnan(y))
    p = _C.where(valid, p, _C.where(edge_one, _f64(1), _f64(0)))
    q = _C.where(valid, q, _C.where(edge_one, _f64(0), _f64(1)))
    p = _C.where(nan_in, _f64(math.nan), p)
    q = _C.where(nan_in, _f64(math.nan), q)
    return p, q


def _gammainc(x, y, upper, api):
    _tensor(x, api)
    _tensor(y, api, "y")
    for v, w in ((x, "x"), (y, "y")):
        if not v.dtype.is_floating_point:
            raise TypeError(f"[{api}] {w} must be a floating-point tensor, got {v.dtype.name}")
    _check_nonnegative(x, api, "x")
    _check_nonnegative(y, api, "y")
    dt = _C.promote_types(x.dtype, y.dtype)
    p, q = _gammainc_pq(_C.cast(x, _DT.float64), _C.cast(y, _DT.float64))
    return _back(q if upper else p, dt)


def gammainc(x, y, name=None):
    """The regularized lower incomplete gamma function P(x, y) =
    gamma(x, y) / Gamma(x) for x, y >= 0 (broadcasting); P(0, y) = 0 as in
    Paddle. Differentiable in both arguments (Note [series evaluation]).

    >>> import oar
    >>> p = oar.gammainc(oar.to_tensor([0.5, 1.0]), oar.to_tensor([1.0, 2.0]))
    >>> [round(v, 6) for v in p.numpy().tolist()]
    [0.842701, 0.864665]
    """
    return _gammainc(x, y, False, "oar.gammainc")


def gammainc_(x, y, name=None):
    """In-place gammainc (into x).

    >>> import oar
    >>> x = oar.to_tensor([1.0])
    >>> round(oar.gammainc_(x, oar.to_tensor([1.0])).item(), 6)
    0.632121
    """
    return _inplace(x, lambda v: _gammainc(v, y, False, "oar.gammainc_"), "oar.gammainc_")


def gammaincc(x, y, name=None):
    """The regularized upper incomplete gamma function Q(x, y) = 1 - P(x, y)
    for x, y >= 0 (broadcasting); Q(0, y) = 1 as in Paddle.

    >>> import oar
    >>> q = oar.gammaincc(oar.to_tensor([0.5, 1.0]), oar.to_tensor([1.0, 2.0]))
    >>> [round(v, 6) for v in q.numpy().tolist()]
    [0.157299, 0.135335]
    """
    return _gammainc(x, y, True, "oar.gammaincc")


def gammaincc_(x, y, name=None):
    """In-place gammaincc (into x).

    >>> import oar
    >>> x = oar.to_tensor([1.0])
    >>> round(oar.gammaincc_(x, oar.to_tensor([1.0])).item(), 6)
    0.367879
    """
    return _inplace(x, lambda v: _gammainc(v, y, True, "oar.gammaincc_"), "oar.gammaincc_")


_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
              -174611 / 330]  # B_2, B_4, ..., B_20


_POLYGAMMA_MAX_N = 170  # n! overflows float64 beyond
_POLYGAMMA_MIN_X = -1000.0  # the recurrence steps past negative x one by one


def _polygamma(x, n, api):
    """psi^(n)(x) for float64 x and 1 <= n <= 170:
    (-1)^(n+1) n! (sum_{k<S} (x+k)^-(n+1) + tail(x+S)), the tail from its asymptotic series."""
    shift = 16 + n
    if x.size and not _C._ir_is_tracing():
        with _no_grad():
            lo = float(_C.amin(_C.where(_C.isfinite(x), x, _f64(0.0)), None, False).item())
        if lo < _POLYGAMMA_MIN_X:
            raise ValueError(f"[{api}] x must be at least {_POLYGAMMA_MIN_X:g}, got {lo:g}")
        if lo < 0:
            shift += int(math.ceil(-lo))
    z = x
    acc = None
    for _ in range(shift):
        term = _C.pow(z, _f64(-(n + 1)))
        acc = term if acc is None else _C.add(acc, term)
        z = _C.add(z, _f64(1))
    # sum_{k>=0} (z+k)^-(n+1) ~ z^-n (1/n + 1/(2z) + sum_j B_2j (n+1)...(n+2j-1) / (2j)! z^-2j)
    r = _C.reciprocal(z)
    r2 = _C.square(r)
    coef, rising = [], 1.0
    for j in range(1, len(_BERNOULLI) + 1):
        rising *= (n + 2 * j - 2) * (n + 2 * j - 1) if j > 1 else (n + 1)
        coef.append(_BERNOULLI[j - 1] * rising / math.factorial(2 * j))
    series = _f64(0.0)
    for c in reversed(coef):
        series = _C.multiply(_C.add(series, _f64(c)), r2)
    series = _C.add(series, _C.add(_f64(1.0 / n), _C.multiply(r, _f64(0.5))))
    tail = _C.multiply(series, _C.pow(r, _f64(float(n))))
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    return _C.multiply(_C.add(acc, tail), _f64(sign * float(math.factorial(n))))


def _polygamma_api(x, n, api):
    _tensor(x, api)
    n = _int_scalar(n, api, "n")
    if n < 0 or n > _POLYGAMMA_MAX_N:
        raise ValueError(f"[{api}] n must be in [0, {_POLYGAMMA_MAX_N}] (n! overflows float64 beyond), got {n}")
    xf, dt = _special_input(x, api)
    if n == 0:
        return _back(_C.digamma(xf), dt)
    return _back(_polygamma(xf, n, api), dt)


def polygamma(x, n, name=None):
    """The n-th derivative of the digamma function (n = 0 is digamma itself);
    integers become the default float dtype. Differentiable in x.

    >>> import oar
    >>> [round(v, 5) for v in oar.polygamma(oar.to_tensor([0.5, 1.0, 3.0]), 1).numpy().tolist()]
    [4.9348, 1.64493, 0.39493]
    """
    return _polygamma_api(x, n, "oar.polygamma")


def polygamma_(x, n, name=None):
    """In-place polygamma.

    >>> import oar
    >>> x = oar.to_tensor([1.0])
    >>> round(oar.polygamma_(x, 1).item(), 5)
    1.64493
    """
    return _inplace(x, lambda v: _polygamma_api(v, n, "oar.polygamma_"), "oar.polygamma_")


def _multigammaln(x, p, api):
    _tensor(x, api)
    p = _int_scalar(p, api, "p")
    if p < 1:
        raise ValueError(f"[{api}] p must be a positive int, got {p}")
    x = _float_input(x, api)
    # sum_j lgamma(x - j/2) over a trailing axis of the p offsets
    half = _C.multiply(_C.arange(0, p, 1, x.dtype), _like(0.5, x))
    terms = _C.lgamma(_C.subtract(_C.unsqueeze(x, [-1]), half))
    return _C.add(_C.sum(terms, [-1], None, False), _like(p * (p - 1) / 4.0 * math.log(math.pi), x))


def multigammaln(x, p, name=None):
    """The log of the multivariate gamma function of dimension p:
    p (p - 1) / 4 log(pi) + sum_{j<p} lgamma(x - j / 2).

    >>> import oar
    >>> [round(v, 5) for v in oar.multigammaln(oar.to_tensor([2.5, 3.0]), 2).numpy().tolist()]
    [0.85705, 1.55019]
    """
    return _multigammaln(x, p, "oar.multigammaln")


def multigammaln_(x, p, name=None):
    """In-place multigammaln.

    >>> import oar
    >>> x = oar.to_tensor([3.0])
    >>> round(oar.multigammaln_(x, 1).item(), 5)
    0.69315
    """
    return _inplace(x, lambda v: _multigammaln(v, p, "oar.multigammaln_"), "oar.multigammaln_")


def xlogy(x, y, name=None):
    """x * log(y), taken to be 0 where x is 0 (whatever y, NaN aside), with
    broadcasting; the gradients are log(y) and x / y, 0 where x is 0.

    >>> import oar
    >>> [round(v, 4) for v in oar.xlogy(oar.to_tensor([0.0, 2.0, 3.0]), oar.to_tensor([0.0, 1.0, 2.0])).tolist()]
    [0.0, 0.0, 2.0794]
    """
    api = "oar.xlogy"
    if not isinstance(x, _C.Tensor) and not isinstance(y, _C.Tensor):
        raise TypeError(f"[{api}] x or y must be a Tensor, got {type(x).__name__} and {type(y).__name__}")
    if not isinstance(x, _C.Tensor):
        x = _like(x, y)
    if not isinstance(y, _C.Tensor):
        y = _like(y, x)
    x, y = _float_input(x, api), _float_input(y, api)
    zero = _C.equal(x, _like(0.0, x))
    # log(y) is evaluated only where x != 0, so log(0) never meets a 0 factor
    # (its -inf would make the product and its gradient NaN).
    safe_y = _C.where(zero, _like(1.0, y), y)
    out = _C.where(zero, _like(0.0, x), _C.multiply(x, _C.log(safe_y)))
    return _C.where(_C.isnan(y), y, out)
