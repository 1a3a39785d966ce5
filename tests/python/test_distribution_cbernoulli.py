"""ContinuousBernoulli against numerical integration of its density (SciPy's quad), on
both sides of and inside the Taylor region around p = 1/2."""
import numpy as np
import pytest
from scipy.integrate import quad

import oar
import oar.distribution as D
from test_distribution_helpers import check_error, check_ks, check_moments, close, t64

PROBS = [0.05, 0.2, 0.4995, 0.5, 0.5004, 0.7, 0.97]


def _ref(p):
    """Normaliser, mean, variance, entropy and the CDF by quadrature of p^x (1 - p)^(1 - x)."""
    f = lambda x: p ** x * (1 - p) ** (1 - x)  # noqa: E731
    z = quad(f, 0, 1, epsabs=1e-14, epsrel=1e-13)[0]
    pdf = lambda x: f(x) / z  # noqa: E731
    mean = quad(lambda x: x * pdf(x), 0, 1, epsabs=1e-14)[0]
    var = quad(lambda x: (x - mean) ** 2 * pdf(x), 0, 1, epsabs=1e-14)[0]
    ent = -quad(lambda x: pdf(x) * np.log(pdf(x)), 0, 1, epsabs=1e-14)[0]
    return pdf, mean, var, ent, lambda t: quad(pdf, 0, t, epsabs=1e-14)[0]


@pytest.mark.parametrize("p", PROBS)
def test_against_quadrature(p):
    d = D.ContinuousBernoulli(t64(p))
    pdf, mean, var, ent, cdf = _ref(p)
    x = np.array([0.0, 0.1, 0.5, 0.83, 1.0])
    close(d.prob(t64(x)), [pdf(v) for v in x], rtol=1e-7)
    close(d.mean, mean, rtol=1e-7)
    close(d.variance, var, rtol=1e-6)
    close(d.entropy(), ent, rtol=1e-6, atol=1e-9)
    close(d.cdf(t64(x)), [cdf(v) for v in x], rtol=1e-7, atol=1e-12)
    u = np.array([0.01, 0.3, 0.9])
    close(d.cdf(d.icdf(t64(u))), u, rtol=1e-7)


def test_sampling_gradients_and_kl():
    probs = np.array([0.1, 0.5, 0.8])
    d = D.ContinuousBernoulli(t64(probs))
    oar.seed(10)
    s = d.sample([20000]).numpy()
    assert s.shape == (20000, 3) and np.all((s >= 0) & (s <= 1))
    check_moments(s, d.mean.numpy(), d.variance.numpy(), kurt_excess=-1.2)
    for j in range(3):
        check_ks(s[:, j], lambda t, j=j: d.cdf(t64(np.asarray(t)[:, None])).numpy()[:, j])
    p = t64(0.3, grad=True)
    oar.seed(1)
    (g,) = oar.grad(D.ContinuousBernoulli(p).rsample([100000]).mean(), [p])
    h = 1e-5
    np.testing.assert_allclose(float(g), (_ref(0.3 + h)[1] - _ref(0.3 - h)[1]) / (2 * h), rtol=0.02)
    q = D.ContinuousBernoulli(t64([0.7, 0.5, 0.2]))
    for j, (a, b) in enumerate(zip(probs, [0.7, 0.5, 0.2])):
        pa, pb = _ref(a)[0], _ref(b)[0]
        ref = quad(lambda x: pa(x) * np.log(pa(x) / pb(x)), 0, 1, epsabs=1e-14)[0]
        close(D.kl_divergence(d, q)[j], ref, rtol=1e-6, atol=1e-10)


def test_errors():
    check_error(ValueError, "[oar.distribution.ContinuousBernoulli] probs must be in [0, 1]",
                D.ContinuousBernoulli, 1.5)
    check_error(ValueError, "[oar.distribution.ContinuousBernoulli] lims", D.ContinuousBernoulli, 0.3, (0.6, 0.7))
