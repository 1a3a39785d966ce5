"""Shared checks for the oar.distribution tests (this module holds no tests itself)."""
import numpy as np
import pytest
import scipy.stats as stats

import oar


def t64(a, grad=False):
    return oar.to_tensor(np.asarray(a, dtype=np.float64), stop_gradient=not grad)


def close(actual, expected, rtol=1e-6, atol=1e-8):
    actual = actual.numpy() if isinstance(actual, oar.Tensor) else np.asarray(actual)
    np.testing.assert_allclose(actual, np.broadcast_to(expected, actual.shape), rtol=rtol, atol=atol)


def check_moments(samples, mean, var, kurt_excess=0.0, k=6.0):
    """Sample mean within k standard errors of `mean`; sample variance within k standard
    errors of `var` (the standard error of a variance uses the excess kurtosis)."""
    s = samples.numpy() if isinstance(samples, oar.Tensor) else samples
    n = s.shape[0]
    mean, var = np.broadcast_to(mean, s.shape[1:]), np.broadcast_to(var, s.shape[1:])
    assert np.all(np.abs(s.mean(0) - mean) <= k * np.sqrt(var / n) + 1e-12), (s.mean(0), mean)
    # (plus a 1/n term: for a fair coin the leading term vanishes)
    se_var = var * (np.sqrt((np.asarray(kurt_excess) + 2) / n) + 1.0 / n)
    assert np.all(np.abs(s.var(0) - var) <= k * se_var + 1e-12), (s.var(0), var)


def check_ks(samples, cdf, alpha=1e-4):
    """Kolmogorov-Smirnov test of one-dimensional samples against a CDF."""
    s = samples.numpy().ravel() if isinstance(samples, oar.Tensor) else np.ravel(samples)
    assert stats.kstest(s, cdf).pvalue > alpha


def check_error(exc, prefix, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert str(info.value).startswith(prefix), str(info.value)


def pathwise_fd(ppf, cdf, x, theta, h=1e-6):
    """dx/dtheta of a draw x holding its quantile u = cdf(x; theta) fixed, by a central
    difference of the quantile function ppf(u; theta)."""
    u = cdf(x, theta)
    return (ppf(u, theta + h) - ppf(u, theta - h)) / (2 * h)
