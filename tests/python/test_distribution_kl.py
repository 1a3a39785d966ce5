"""KL divergences of oar.distribution against closed forms computed in NumPy/SciPy or
Monte Carlo estimates, the registry's dispatch, the exponential-family (Bregman) rule,
and the multivariate normal distribution."""
import warnings

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as stats

import oar
import oar.distribution as D
from test_distribution_helpers import check_error, check_moments, close, t64


def _np_kl_normal(m1, s1, m2, s2):
    return np.log(s2 / s1) + (s1 ** 2 + (m1 - m2) ** 2) / (2 * s2 ** 2) - 0.5


def _np_kl_gamma(a1, b1, a2, b2):
    return ((a1 - a2) * sp.digamma(a1) - sp.gammaln(a1) + sp.gammaln(a2) + a2 * np.log(b1 / b2)
            + a1 * (b2 - b1) / b1)


def _np_kl_beta(a1, b1, a2, b2):
    return (sp.betaln(a2, b2) - sp.betaln(a1, b1) + (a1 - a2) * sp.digamma(a1) + (b1 - b2) * sp.digamma(b1)
            + (a2 - a1 + b2 - b1) * sp.digamma(a1 + b1))


def _np_kl_discrete(logp, logq):
    return (np.exp(logp) * (logp - logq)).sum(0)


A = np.array([0.5, 1.5, 3.0])
B = np.array([[0.7], [2.0]])

# name -> (p, q, reference value): parameters broadcast to batch (2, 3)
CLOSED = {
    "Normal": (lambda: (D.Normal(t64(A), t64(B)), D.Normal(t64(B), t64(A))),
               lambda: _np_kl_normal(A, B, B, A)),
    "LogNormal": (lambda: (D.LogNormal(t64(A), t64(B)), D.LogNormal(t64(B), t64(A))),
                  lambda: _np_kl_normal(A, B, B, A)),
    "Gamma": (lambda: (D.Gamma(t64(A), t64(B)), D.Gamma(t64(B), t64(A))), lambda: _np_kl_gamma(A, B, B, A)),
    "Beta": (lambda: (D.Beta(t64(A), t64(B)), D.Beta(t64(B), t64(A))), lambda: _np_kl_beta(A, B, B, A)),
    "Exponential": (lambda: (D.Exponential(t64(A)), D.Exponential(t64(B))),
                    lambda: np.log(A / B) + B / A - 1),
    "Poisson": (lambda: (D.Poisson(t64(A)), D.Poisson(t64(B))),
                lambda: _np_kl_discrete(stats.poisson(A).logpmf(np.arange(200.0)[:, None, None]),
                                        stats.poisson(B).logpmf(np.arange(200.0)[:, None, None]))),
    "Geometric": (lambda: (D.Geometric(t64(A / 4)), D.Geometric(t64(B / 3))),
                  lambda: _np_kl_discrete(stats.geom(A / 4).logpmf(np.arange(1.0, 2000.0)[:, None, None]),
                                          stats.geom(B / 3).logpmf(np.arange(1.0, 2000.0)[:, None, None]))),
    "Bernoulli": (lambda: (D.Bernoulli(t64(A / 4)), D.Bernoulli(t64(B / 3))),
                  lambda: _np_kl_discrete(stats.bernoulli(A / 4).logpmf(np.arange(2.0)[:, None, None]),
                                          stats.bernoulli(B / 3).logpmf(np.arange(2.0)[:, None, None]))),
    "Binomial": (lambda: (D.Binomial(7, t64(A / 4)), D.Binomial(7, t64(B / 3))),
                 lambda: _np_kl_discrete(stats.binom(7, A / 4).logpmf(np.arange(8.0)[:, None, None]),
                                         stats.binom(7, B / 3).logpmf(np.arange(8.0)[:, None, None]))),
    "Uniform": (lambda: (D.Uniform(t64(-A), t64(A)), D.Uniform(t64(-A - B), t64(A + B))),
                lambda: np.log((2 * A + 2 * B) / (2 * A))),
}


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_closed_forms(name):
    make, ref = CLOSED[name]
    p, q = make()
    kl = D.kl_divergence(p, q)
    assert kl.shape == [2, 3]
    close(kl, ref(), rtol=1e-7, atol=1e-10)
    close(p.kl_divergence(q), ref(), rtol=1e-7, atol=1e-10)


def _monte_carlo_kl(p, q, n=200000):
    oar.seed(13)
    x = p.sample([n])
    return (p.log_prob(x) - q.log_prob(x)).numpy()


@pytest.mark.parametrize("name", ["Laplace", "Cauchy"])
def test_location_scale_kl_against_monte_carlo(name):
    ctor = getattr(D, name)
    p, q = ctor(t64([0.0, 1.0]), t64([1.0, 0.5])), ctor(t64([0.5, -1.0]), t64([2.0, 1.5]))
    mc = _monte_carlo_kl(p, q)
    se = mc.std(0) / np.sqrt(mc.shape[0])
    assert np.all(np.abs(mc.mean(0) - D.kl_divergence(p, q).numpy()) < 5 * se)


def test_categorical_and_dirichlet():
    lp, lq = np.log([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]), np.log([0.4, 0.4, 0.2])
    kl = D.kl_divergence(D.Categorical(t64(lp + 1.0)), D.Categorical(t64(lq)))
    close(kl, (np.exp(lp) * (lp - lq)).sum(-1), rtol=1e-8)
    a, b = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]]), np.array([2.0, 2.0, 2.0])
    p, q = D.Dirichlet(t64(a)), D.Dirichlet(t64(b))
    mc = _monte_carlo_kl(p, q, n=100000)
    se = mc.std(0) / np.sqrt(mc.shape[0])
    assert np.all(np.abs(mc.mean(0) - D.kl_divergence(p, q).numpy()) < 5 * se)
    # Dirichlet with two classes is a Beta
    close(D.kl_divergence(D.Dirichlet(t64([2.0, 3.0])), D.Dirichlet(t64([1.0, 4.0]))),
          _np_kl_beta(2.0, 3.0, 1.0, 4.0), rtol=1e-8)


def test_uniform_outside_support_is_inf_and_binomial_counts_must_match():
    assert float(D.kl_divergence(D.Uniform(0.0, 2.0), D.Uniform(0.5, 3.0))) == np.inf
    check_error(NotImplementedError, "[oar.distribution.kl_divergence] the KL divergence of binomials",
                D.kl_divergence, D.Binomial(3, 0.5), D.Binomial(4, 0.5))


def test_kl_gradients_reach_parameters():
    m, s = t64(0.3, grad=True), t64(1.4, grad=True)
    gm, gs = oar.grad(D.kl_divergence(D.Normal(m, s), D.Normal(0.0, 1.0)), [m, s])
    np.testing.assert_allclose([float(gm), float(gs)], [0.3, 1.4 - 1 / 1.4], rtol=1e-10)


def _random_spd(rng, k, batch=()):
    a = rng.normal(size=batch + (k, k))
    return a @ np.swapaxes(a, -1, -2) + k * np.eye(k)


def test_multivariate_normal_against_scipy():
    rng = np.random.default_rng(4)
    loc = rng.normal(size=(2, 3))
    cov = _random_spd(rng, 3, (2,))
    x = rng.normal(size=(5, 2, 3))
    ref_lp = np.stack([stats.multivariate_normal(loc[b], cov[b]).logpdf(x[:, b]) for b in range(2)], -1)
    ref_h = [stats.multivariate_normal(loc[b], cov[b]).entropy() for b in range(2)]
    for kw in ({"covariance_matrix": t64(cov)}, {"precision_matrix": t64(np.linalg.inv(cov))},
               {"scale_tril": t64(np.linalg.cholesky(cov))}):
        d = D.MultivariateNormal(t64(loc), **kw)
        assert d.batch_shape == (2,) and d.event_shape == (3,)
        close(d.log_prob(t64(x)), ref_lp, rtol=1e-8)
        close(d.entropy(), ref_h, rtol=1e-8)
        close(d.covariance_matrix, cov, rtol=1e-8)
        close(d.variance, np.diagonal(cov, axis1=-2, axis2=-1), rtol=1e-8)
    # a single mean shared by a batch of covariances
    d = D.MultivariateNormal(t64(loc[0]), covariance_matrix=t64(cov))
    assert d.batch_shape == (2,)
    close(d.log_prob(t64(x[0, 0])), [stats.multivariate_normal(loc[0], cov[b]).logpdf(x[0, 0]) for b in range(2)],
          rtol=1e-8)


def test_multivariate_normal_sampling_and_gradients():
    rng = np.random.default_rng(5)
    loc, cov = np.array([1.0, -2.0]), _random_spd(rng, 2)
    oar.seed(17)
    s = D.MultivariateNormal(t64(loc), covariance_matrix=t64(cov)).sample([40000]).numpy()
    check_moments(s, loc, np.diag(cov))
    np.testing.assert_allclose(np.cov(s.T), cov, rtol=0.05, atol=0.05 * np.abs(cov).max())
    tril = t64(np.linalg.cholesky(cov), grad=True)
    m = t64(loc, grad=True)
    x = D.MultivariateNormal(m, scale_tril=tril).rsample([3])
    gm, gl = oar.grad((x * x).sum(), [m, tril])
    eps = np.linalg.solve(np.linalg.cholesky(cov), (x.numpy() - loc).T).T
    close(gm, (2 * x.numpy()).sum(0), rtol=1e-8)
    close(gl, np.tril(np.einsum("ni,nj->ij", 2 * x.numpy(), eps)), rtol=1e-8)
    # log_prob's gradient in loc is Sigma^-1 (x - loc)
    v = np.array([0.5, 0.5])
    (g,) = oar.grad(D.MultivariateNormal(m, covariance_matrix=t64(cov)).log_prob(t64(v)), [m])
    close(g, np.linalg.solve(cov, v - loc), rtol=1e-8)


def test_multivariate_normal_kl():
    rng = np.random.default_rng(6)
    m1, m2 = rng.normal(size=(2, 3)), rng.normal(size=3)
    c1, c2 = _random_spd(rng, 3, (2,)), _random_spd(rng, 3)
    inv2 = np.linalg.inv(c2)
    ref = [0.5 * (np.trace(inv2 @ c1[b]) + (m2 - m1[b]) @ inv2 @ (m2 - m1[b]) - 3
                  + np.linalg.slogdet(c2)[1] - np.linalg.slogdet(c1[b])[1]) for b in range(2)]
    p = D.MultivariateNormal(t64(m1), covariance_matrix=t64(c1))
    q = D.MultivariateNormal(t64(m2), covariance_matrix=t64(c2))
    close(D.kl_divergence(p, q), ref, rtol=1e-8)


def test_multivariate_normal_errors():
    api = "[oar.distribution.MultivariateNormal]"
    check_error(ValueError, f"{api} exactly one of", D.MultivariateNormal, [0.0, 0.0])
    check_error(ValueError, f"{api} exactly one of", D.MultivariateNormal, [0.0], covariance_matrix=[[1.0]],
                scale_tril=[[1.0]])
    check_error(ValueError, f"{api} covariance_matrix must be [..., 2, 2]", D.MultivariateNormal, [0.0, 0.0],
                covariance_matrix=np.eye(3))
    check_error(ValueError, f"{api} covariance_matrix must be symmetric", D.MultivariateNormal, [0.0, 0.0],
                covariance_matrix=[[1.0, 0.5], [0.0, 1.0]])
    check_error(ValueError, f"{api} covariance_matrix must be positive definite", D.MultivariateNormal, [0.0, 0.0],
                covariance_matrix=[[1.0, 2.0], [2.0, 1.0]])
    check_error(ValueError, f"{api} scale_tril must be lower triangular", D.MultivariateNormal, [0.0, 0.0],
                scale_tril=[[1.0, 1.0], [0.0, 1.0]])
    check_error(ValueError, f"{api} loc must have at least 1", D.MultivariateNormal, 0.0, covariance_matrix=[[1.0]])
    check_error(ValueError, "[oar.distribution.MultivariateNormal.log_prob] value must have last dimension 2",
                D.MultivariateNormal([0.0, 0.0], covariance_matrix=np.eye(2)).log_prob, t64([1.0, 2.0, 3.0]))


def test_exponential_family_bregman_matches_closed_forms():
    """The Bregman rule of ExponentialFamily, called directly, against the registered
    closed forms; and its entropy against the closed-form entropies."""
    from oar.distribution.kl import _kl_expfamily_expfamily

    pairs = [CLOSED[n][0]() for n in ("Normal", "Gamma", "Beta", "Exponential", "Bernoulli")]
    pairs.append((D.Dirichlet(t64([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]])), D.Dirichlet(t64([2.0, 2.0, 2.0]))))
    for p, q in pairs:
        close(_kl_expfamily_expfamily(p, q), D.kl_divergence(p, q).numpy(), rtol=1e-6, atol=1e-6)
        close(D.ExponentialFamily.entropy(p), p.entropy().numpy(), rtol=1e-6, atol=1e-6)


class _Rayleigh(D.ExponentialFamily):
    """A family with no registered KL: p(x) = x / s^2 exp(-x^2 / (2 s^2)), eta = -1/(2 s^2),
    T(x) = x^2, A(eta) = -log(-2 eta), h(x) = x."""

    def __init__(self, s):
        self.s = s
        super().__init__(batch_shape=tuple(s.shape))

    @property
    def _natural_parameters(self):
        return (-0.5 / self.s.square(),)

    def _log_normalizer(self, eta):
        return -(-2 * eta).log()

    @property
    def _mean_carrier_measure(self):
        # E[log x] for a Rayleigh(s): log(s) + (log 2 - euler_gamma) / 2
        return self.s.log() + (np.log(2.0) - np.euler_gamma) / 2


def test_exponential_family_rule_is_dispatched_for_unregistered_families():
    s1, s2 = t64([1.0, 2.0], grad=True), t64([1.5, 0.5])
    kl = D.kl_divergence(_Rayleigh(s1), _Rayleigh(s2))
    ref = 2 * np.log(s2.numpy() / s1.numpy()) + s1.numpy() ** 2 / s2.numpy() ** 2 - 1
    close(kl, ref, rtol=1e-8)
    (g,) = oar.grad(kl.sum(), [s1])
    close(g, -2 / s1.numpy() + 2 * s1.numpy() / s2.numpy() ** 2, rtol=1e-8)
    close(_Rayleigh(s2).entropy(), stats.rayleigh(scale=s2.numpy()).entropy(), rtol=1e-8)


def test_registry_dispatch_and_errors():
    class MyNormal(D.Normal):
        pass

    # a subclass uses its base pair's rule
    close(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)), 0.5, rtol=1e-6)

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return oar.to_tensor(42.0)

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0))) == 42.0  # most specific wins
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(1.0, 1.0))) == 0.5

    class Other(D.Normal):
        pass

    @D.register_kl(D.Normal, Other)
    def _kl_other(p, q):
        return oar.to_tensor(7.0)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        D.kl_divergence(MyNormal(0.0, 1.0), Other(0.0, 1.0))
    assert any("ambiguous" in str(w.message) for w in caught)
    check_error(NotImplementedError, "[oar.distribution.kl_divergence] no KL divergence is registered for "
                "(Normal, Uniform)", D.kl_divergence, D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0))
    check_error(NotImplementedError, "[oar.distribution.kl_divergence] no KL divergence is registered for "
                "(Normal, Gamma)", D.kl_divergence, D.Normal(0.0, 1.0), D.Gamma(1.0, 1.0))
    check_error(TypeError, "[oar.distribution.kl_divergence] q must be a Distribution",
                D.kl_divergence, D.Normal(0.0, 1.0), 1.0)
    check_error(TypeError, "[oar.distribution.register_kl] cls_p must be a subclass of Distribution",
                D.register_kl, int, D.Normal)
