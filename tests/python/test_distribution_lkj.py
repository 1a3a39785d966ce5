"""LKJCholesky: the samplers' laws against the known marginals of LKJ correlations (KS
tests), the normalisation of log_prob by Monte Carlo integration, and error inputs."""
import math

import numpy as np
import pytest
import scipy.stats as stats

import oar
import oar.distribution as D
from test_distribution_helpers import check_error, check_ks, close, t64


@pytest.mark.parametrize("method", ["onion", "cvine"])
@pytest.mark.parametrize("dim,eta", [(2, 0.7), (3, 1.0), (4, 2.5)])
def test_samples_are_cholesky_factors_with_lkj_marginals(method, dim, eta):
    oar.seed(31)
    d = D.LKJCholesky(dim, t64(eta), sample_method=method)
    L = d.sample([4000]).numpy()
    assert L.shape == (4000, dim, dim)
    assert np.all(np.triu(L, 1) == 0) and np.all(np.diagonal(L, axis1=1, axis2=2) > 0)
    c = L @ np.swapaxes(L, 1, 2)
    np.testing.assert_allclose(np.diagonal(c, axis1=1, axis2=2), 1.0, rtol=1e-10)
    # every off-diagonal correlation of LKJ(eta) in dim d is 2 Beta(b, b) - 1, b = eta - 1 + d / 2
    b = eta - 1 + dim / 2
    marginal = stats.beta(b, b, loc=-1, scale=2)
    for i in range(1, dim):
        for j in range(i):
            check_ks(c[:, i, j], marginal.cdf)


@pytest.mark.parametrize("dim,eta", [(2, 0.7), (3, 1.0), (3, 2.5)])
def test_log_prob_is_normalised(dim, eta):
    """E[exp(log_prob)] over factors drawn uniformly in the strictly lower entries (row i
    uniform in the unit ball of R^i) times the domain's volume is 1."""
    rng = np.random.default_rng(0)
    n = 200000
    L = np.zeros((n, dim, dim))
    L[:, 0, 0] = 1.0
    volume = 1.0
    for i in range(1, dim):
        direction = rng.normal(size=(n, i))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        radius = rng.uniform(size=(n, 1)) ** (1.0 / i)
        L[:, i, :i] = direction * radius
        L[:, i, i] = np.sqrt(1 - (L[:, i, :i] ** 2).sum(1))
        volume *= math.pi ** (i / 2) / math.gamma(i / 2 + 1)
    lp = D.LKJCholesky(dim, t64(eta)).log_prob(t64(L)).numpy()
    est = np.exp(lp) * volume
    assert abs(est.mean() - 1.0) < 5 * est.std() / np.sqrt(n)


def test_log_prob_of_dim_two_is_the_beta_density_of_r():
    r = np.array([-0.9, 0.0, 0.4])
    L = np.zeros((3, 2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1.0, r, np.sqrt(1 - r ** 2)
    eta = np.array([[0.5], [3.0]])
    lp = D.LKJCholesky(2, t64(eta)).log_prob(t64(L))
    close(lp, stats.beta(eta, eta, loc=-1, scale=2).logpdf(r), rtol=1e-10)
    conc = t64(2.0, grad=True)
    (g,) = oar.grad(D.LKJCholesky(2, conc).log_prob(t64(L[1])), [conc])
    h = 1e-6
    fd = (stats.beta(2 + h, 2 + h, loc=-1, scale=2).logpdf(0.0) - stats.beta(2 - h, 2 - h, loc=-1, scale=2).logpdf(0.0))
    np.testing.assert_allclose(float(g), fd / (2 * h), rtol=1e-6)


def test_batches_and_errors():
    d = D.LKJCholesky(3, t64([1.0, 2.0]))
    assert d.batch_shape == (2,) and d.event_shape == (3, 3) and d.sample([5]).shape == [5, 2, 3, 3]
    check_error(ValueError, "[oar.distribution.LKJCholesky] dim must be an int of at least 2", D.LKJCholesky, 1)
    check_error(ValueError, "[oar.distribution.LKJCholesky] sample_method", D.LKJCholesky, 3, 1.0, "x")
    check_error(ValueError, "[oar.distribution.LKJCholesky] concentration must be positive", D.LKJCholesky, 3, 0.0)
    check_error(ValueError, "[oar.distribution.LKJCholesky.log_prob] value must be [..., 3, 3]",
                d.log_prob, oar.eye(2))
    check_error(NotImplementedError, "[oar.distribution.LKJCholesky.rsample]", d.rsample, [2])
