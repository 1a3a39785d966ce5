"""Discrete distributions of oar.distribution against SciPy: mass functions, CDFs,
moments, entropy, sampling, the relaxed Bernoulli sample, dtypes and error inputs."""
import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as stats

import oar
import oar.distribution as D
from test_distribution_helpers import check_error, check_moments, close, t64

# name -> (constructor, SciPy frozen distribution, parameter sets, values to evaluate at)
CASES = {
    "Bernoulli": (D.Bernoulli, lambda p: stats.bernoulli(p),
                  [(0.3,), ([0.1, 0.5, 0.9],)], [0.0, 1.0]),
    "Geometric": (D.Geometric, lambda p: stats.geom(p),
                  [(0.3,), ([[0.1], [0.5], [0.95]],)], [1.0, 2.0, 5.0]),
    "Poisson": (D.Poisson, lambda r: stats.poisson(r),
                [(2.5,), ([0.5, 3.0, 12.0],)], [0.0, 1.0, 4.0, 11.0]),
    "Binomial": (D.Binomial, lambda n, p: stats.binom(n, p),
                 [(10, 0.3), ([[5.0], [12.0]], [0.1, 0.5, 0.8])], [0.0, 2.0, 5.0]),
}
NAMES = sorted(CASES)


def _make(name, params):
    ctor, ref, _, _ = CASES[name]
    return ctor(*[t64(p) for p in params]), ref(*[np.asarray(p, dtype=np.float64) for p in params])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("which", [0, 1])
def test_pmf_cdf_moments_entropy_against_scipy(name, which):
    params = CASES[name][2][which]
    dist, ref = _make(name, params)
    shape = np.broadcast_shapes(*[np.shape(p) for p in params])
    assert dist.batch_shape == tuple(shape)
    k = np.asarray(CASES[name][3]).reshape((-1,) + (1,) * len(shape))
    close(dist.log_prob(t64(k)), ref.logpmf(k), rtol=1e-6, atol=1e-10)
    close(dist.prob(t64(k)), ref.pmf(k), rtol=1e-6, atol=1e-12)
    close(dist.mean, ref.mean(), rtol=1e-6)
    close(dist.variance, ref.var(), rtol=1e-6)
    close(dist.entropy(), ref.entropy(), rtol=1e-6, atol=1e-10)
    if name in ("Bernoulli", "Geometric"):
        close(dist.cdf(t64(k)), ref.cdf(k), rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_sampling_moments_and_support(name):
    dist, ref = _make(name, CASES[name][2][1])
    oar.seed(21)
    n = 20000
    s = dist.sample([n])
    assert s.shape == [n] + list(dist.batch_shape) and s.stop_gradient
    v = s.numpy()
    assert np.all(v == np.floor(v))
    lo, hi = ref.support()
    assert np.all(v >= lo) and np.all(v <= np.broadcast_to(hi, v.shape[1:]))
    check_moments(v, ref.mean(), ref.var(), ref.stats(moments="k"))


def test_values_outside_the_support():
    assert float(D.Geometric(0.5).log_prob(0.0)) == -math.inf
    assert float(D.Geometric(0.5).log_prob(1.5)) == -math.inf
    assert float(D.Poisson(2.0).log_prob(-1.0)) == -math.inf
    assert float(D.Poisson(2.0).log_prob(0.5)) == -math.inf
    assert float(D.Binomial(3, 0.5).log_prob(4.0)) == -math.inf
    close(D.Bernoulli(0.4).cdf(t64([-0.5, 0.5, 1.0])), [0.0, 0.6, 1.0], rtol=1e-6)
    assert float(D.Geometric(0.5).cdf(-1.0)) == 0.0


def test_geometric_pmf_and_paddle_values():
    g = D.Geometric(0.5)
    assert float(g.pmf(2)) == 0.25 and round(float(g.log_pmf(2)), 6) == round(math.log(0.25), 6)
    assert float(g.cdf(4)) == 0.9375 and float(g.mean) == 2.0 and float(g.variance) == 2.0
    assert round(float(g.entropy()), 6) == round(2 * math.log(2), 6)


def test_bernoulli_relaxed_rsample():
    p = t64([0.2, 0.7], grad=True)
    oar.seed(4)
    d = D.Bernoulli(p)
    y = d.rsample([20000], temperature=0.05)
    v = y.numpy()
    assert np.all((v >= 0) & (v <= 1))
    np.testing.assert_allclose((v > 0.5).mean(0), [0.2, 0.7], atol=0.02)  # the relaxation keeps P(y > 1/2) = p
    (g,) = oar.grad(d.rsample([1000], temperature=1.0).mean(), [p])
    assert np.all(g.numpy() > 0)
    check_error(ValueError, "[oar.distribution.Bernoulli.rsample] temperature", d.rsample, [2], temperature=0.0)


def test_categorical_against_numpy():
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))
    d = D.Categorical(t64(logits + 3.0))  # logits are unnormalised
    p = np.exp(logits)
    assert d.batch_shape == (2,) and d.event_shape == ()
    close(d.prob(oar.to_tensor([2, 0])), [0.7, 0.5], rtol=1e-6)
    close(d.log_prob(oar.to_tensor([[0], [1]])), np.log([[0.1, 0.5], [0.2, 0.25]]), rtol=1e-6)
    close(d.entropy(), -(p * np.log(p)).sum(-1), rtol=1e-6)
    oar.seed(2)
    s = d.sample([20000])
    assert s.dtype == oar.int64 and s.shape == [20000, 2]
    freq = np.stack([(s.numpy() == k).mean(0) for k in range(3)], -1)
    np.testing.assert_allclose(freq, p, atol=0.015)
    one = D.Categorical(oar.to_tensor([0.0, 0.0, math.log(2.0)]))
    assert one.sample([3, 4]).shape == [3, 4]
    close(one.prob(oar.to_tensor([[2, 1]])), [[0.5, 0.25]], rtol=1e-6)
    lg = t64([0.1, 0.2, 0.3], grad=True)
    (g,) = oar.grad(D.Categorical(lg).log_prob(oar.to_tensor(1)), [lg])
    close(g, np.array([0.0, 1.0, 0.0]) - sp.softmax([0.1, 0.2, 0.3]), rtol=1e-6)


def test_multinomial_against_scipy():
    probs = np.array([[0.2, 0.3, 0.5], [1.0, 1.0, 2.0]])  # the second row is normalised
    d = D.Multinomial(6, t64(probs))
    pn = probs / probs.sum(-1, keepdims=True)
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = np.array([[1.0, 2.0, 3.0], [0.0, 6.0, 0.0]])
    close(d.log_prob(t64(x)), [stats.multinomial(6, pn[i]).logpmf(x[i]) for i in range(2)], rtol=1e-6)
    close(d.entropy(), [stats.multinomial(6, pn[i]).entropy() for i in range(2)], rtol=1e-6)
    close(d.mean, 6 * pn, rtol=1e-6)
    close(d.variance, 6 * pn * (1 - pn), rtol=1e-6)
    oar.seed(8)
    s = d.sample([5000]).numpy()
    assert s.shape == (5000, 2, 3) and np.all(s.sum(-1) == 6) and np.all(s >= 0)
    check_moments(s, 6 * pn, 6 * pn * (1 - pn), kurt_excess=(1 - 6 * pn * (1 - pn)) / (6 * pn * (1 - pn)))


@pytest.mark.parametrize("name", ["Geometric", "Poisson", "Binomial"])
def test_discrete_rsample_raises(name):
    dist, _ = _make(name, CASES[name][2][0])
    check_error(NotImplementedError, f"[oar.distribution.{name}.rsample]", dist.rsample, [2])


def test_log_prob_gradients():
    r = t64(2.5, grad=True)
    (g,) = oar.grad(D.Poisson(r).log_prob(t64(4.0)), [r])
    np.testing.assert_allclose(float(g), 4.0 / 2.5 - 1)
    p = t64(0.3, grad=True)
    (g,) = oar.grad(D.Binomial(10, p).log_prob(t64(4.0)), [p])
    np.testing.assert_allclose(float(g), 4 / 0.3 - 6 / 0.7)
    (g,) = oar.grad(D.Binomial(10, p).entropy(), [p])
    h = 1e-6
    np.testing.assert_allclose(float(g), (stats.binom(10, 0.3 + h).entropy() - stats.binom(10, 0.3 - h).entropy())
                               / (2 * h), rtol=1e-5)


def test_default_dtypes():
    assert D.Bernoulli(0.5).sample([3]).dtype == oar.float32
    assert D.Poisson([1.0, 2.0]).sample().dtype == oar.float32
    assert D.Binomial(5, np.array([0.5])).sample().dtype == oar.float64


@pytest.mark.parametrize("ctor,args,exc,prefix", [
    (D.Bernoulli, (1.5,), ValueError, "[oar.distribution.Bernoulli] probs must be in [0, 1]"),
    (D.Bernoulli, ("p",), TypeError, "[oar.distribution.Bernoulli] probs"),
    (D.Geometric, (0.0,), ValueError, "[oar.distribution.Geometric] probs must be in (0, 1]"),
    (D.Poisson, (-1.0,), ValueError, "[oar.distribution.Poisson] rate must be positive"),
    (D.Binomial, (2.5, 0.5), ValueError, "[oar.distribution.Binomial] total_count must be a non-negative integer"),
    (D.Binomial, (-3, 0.5), ValueError, "[oar.distribution.Binomial] total_count"),
    (D.Binomial, (3, 1.5), ValueError, "[oar.distribution.Binomial] probs"),
    (D.Categorical, (1.0,), ValueError, "[oar.distribution.Categorical] logits must have at least 1"),
    (D.Categorical, ([0.0, float("nan")],), ValueError, "[oar.distribution.Categorical] logits must not"),
    (D.Multinomial, (0, [0.5, 0.5]), ValueError, "[oar.distribution.Multinomial] total_count"),
    (D.Multinomial, (3, [0.5, -0.5]), ValueError, "[oar.distribution.Multinomial] probs must be non-negative"),
    (D.Multinomial, (3, [0.0, 0.0]), ValueError, "[oar.distribution.Multinomial] probs must have a positive sum"),
])
def test_invalid_parameters(ctor, args, exc, prefix):
    check_error(exc, prefix, ctor, *args)


def test_categorical_invalid_values():
    d = D.Categorical(oar.zeros([2, 3]))
    check_error(ValueError, "[oar.distribution.Categorical.log_prob] value must hold class indices in [0, 3)",
                d.log_prob, oar.to_tensor([3, 0]))
    check_error(ValueError, "[oar.distribution.Categorical.log_prob] value must hold class indices (integers)",
                d.log_prob, oar.to_tensor([0.5, 1.0]))
    check_error(ValueError, "[oar.distribution.Categorical.log_prob] value of shape [3]",
                d.log_prob, oar.to_tensor([0, 1, 2]))


def test_probability_logit_helpers_for_subclasses():
    p = np.array([0.2, 0.5, 0.9])
    logits = D.Distribution._probs_to_logits(t64(p), is_binary=True)
    close(logits, np.log(p / (1 - p)), rtol=1e-10)
    close(D.Distribution._logits_to_probs(logits, is_binary=True), p, rtol=1e-10)
    close(D.Distribution._logits_to_probs(t64(np.log(p))), p / p.sum(), rtol=1e-10)
