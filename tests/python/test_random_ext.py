"""oar.Generator, manual_seed and the extra samplers, checked against closed-form moments."""
import math

import numpy as np
import pytest

import oar

N = 40000  # samples per moment check: standard errors are about 0.5% of a unit-variance mean


def _moments_close(v, mean, var, k=5.0):
    """The sample mean within k standard errors of `mean`, the variance within 10%."""
    v = np.asarray(v, dtype=np.float64)
    se = math.sqrt(var / v.size)
    assert abs(v.mean() - mean) < k * se + 1e-12, (v.mean(), mean, se)
    assert abs(v.var() - var) < 0.1 * var + 1e-12, (v.var(), var)


# ---- generator state -------------------------------------------------------------------

def test_manual_seed_reproduces_and_returns_generator():
    g = oar.manual_seed(123)
    a = oar.rand([5]).numpy()
    assert isinstance(g, oar.Generator) and g.initial_seed() == 123
    oar.manual_seed(123)
    assert np.array_equal(a, oar.rand([5]).numpy())
    assert oar.seed(123) is g  # paddle.seed also returns the global generator


def test_generator_state_is_its_own():
    oar.seed(5)
    before = oar.get_rng_state()[0]
    g = oar.Generator(77)
    x = oar.zeros([16], dtype="int64").random_(0, 1000, generator=g).numpy()
    assert oar.get_rng_state()[0] == before  # the global generator did not move
    assert g.get_state()[0] == 77 and g.get_state()[1] > 0
    g.manual_seed(77)
    y = oar.zeros([16], dtype="int64").random_(0, 1000, generator=g).numpy()
    assert np.array_equal(x, y)
    # the same seed in the global generator gives the same numbers
    oar.seed(77)
    z = oar.zeros([16], dtype="int64").random_(0, 1000).numpy()
    assert np.array_equal(x, z)


def test_generator_get_set_state_and_seed():
    g = oar.Generator(1)
    st = g.get_state()
    a = g.random()
    g.set_state(st)
    assert g.random() == a
    s = g.seed()
    assert g.initial_seed() == s and g.get_state() == (s, 0)
    with pytest.raises(TypeError, match=r"^\[oar.Generator.set_state\]"):
        g.set_state("nope")
    with pytest.raises(TypeError, match=r"^\[oar.Generator.manual_seed\]"):
        g.manual_seed(1.5)


def test_cuda_rng_state_is_empty_list():
    assert oar.get_cuda_rng_state() == []
    oar.set_cuda_rng_state([])
    with pytest.raises(ValueError, match=r"^\[oar.set_cuda_rng_state\]"):
        oar.set_cuda_rng_state([(1, 0)])


# ---- samplers: moments -------------------------------------------------------------------

def test_exponential_moments():
    oar.seed(0)
    v = oar.zeros([N], dtype="float64").exponential_(2.5).numpy()
    assert v.min() >= 0
    _moments_close(v, 1 / 2.5, 1 / 2.5 ** 2)


def test_cauchy_quantiles():
    # Cauchy has no mean: check the median and quartiles (loc, loc -+ scale)
    oar.seed(1)
    v = oar.zeros([N], dtype="float64").cauchy_(loc=-1.0, scale=2.0).numpy()
    q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    se = 2.0 * math.pi / 2 / math.sqrt(N) * 2  # generous: density at the quartiles is 1/(2*pi*scale)
    assert abs(med + 1.0) < 5 * se and abs(q1 + 3.0) < 5 * se and abs(q3 - 1.0) < 5 * se


def test_geometric_support_and_moments():
    oar.seed(2)
    p = 0.3
    v = oar.zeros([N], dtype="float64").geometric_(p).numpy()
    assert v.min() >= 1 and np.all(v == np.floor(v))
    _moments_close(v, 1 / p, (1 - p) / p ** 2)
    # P(X = 1) = p
    assert abs((v == 1).mean() - p) < 5 * math.sqrt(p * (1 - p) / N)


def test_geometric_tensor_probs():
    oar.seed(3)
    probs = oar.to_tensor([1.0, 0.5])
    v = oar.zeros([N // 2, 2], dtype="float64").geometric_(probs).numpy()
    assert np.all(v[:, 0] == 1)
    _moments_close(v[:, 1], 2.0, 2.0)


def test_log_normal_moments():
    oar.seed(4)
    m, s = 0.2, 0.5
    v = oar.zeros([N], dtype="float64").log_normal_(m, s).numpy()
    mean = math.exp(m + s * s / 2)
    var = (math.exp(s * s) - 1) * math.exp(2 * m + s * s)
    _moments_close(v, mean, var)
    w = oar.log_normal(m, s, [N]).numpy()
    _moments_close(np.log(w), m, s * s)


def test_bernoulli_inplace():
    oar.seed(5)
    v = oar.zeros([N], dtype="float64").bernoulli_(0.3).numpy()
    assert set(np.unique(v)) <= {0.0, 1.0}
    _moments_close(v, 0.3, 0.21)
    x = oar.zeros([4]).bernoulli_(oar.to_tensor([0.0, 1.0, 0.0, 1.0]))
    assert x.numpy().tolist() == [0.0, 1.0, 0.0, 1.0]


def test_random_ranges():
    oar.seed(6)
    v = oar.zeros([N], dtype="int64").random_(-3, 4).numpy()
    assert v.min() == -3 and v.max() == 3
    _moments_close(v, 0.0, (7 ** 2 - 1) / 12)  # discrete uniform on 7 values
    w = oar.zeros([1000], dtype="float32").random_(5).numpy()
    assert w.min() >= 0 and w.max() <= 4 and np.all(w == np.floor(w))
    u = oar.zeros([1000], dtype="uint8").random_().numpy()
    assert u.max() > 200  # [0, 255]


def test_binomial_moments():
    oar.seed(7)
    count = oar.full([N], 20, dtype="int64")
    v = oar.binomial(count, oar.full([N], 0.25, dtype="float32"))
    assert v.dtype == oar.int64
    _moments_close(v.numpy(), 5.0, 20 * 0.25 * 0.75)
    # broadcasting and the degenerate probabilities
    w = oar.binomial(oar.to_tensor([[3], [9]]), oar.to_tensor([0.0, 1.0])).numpy()
    assert w.tolist() == [[0, 3], [0, 9]]


def test_poisson_moments():
    oar.seed(8)
    x = oar.full([N], 3.5, dtype="float64")
    v = oar.poisson(x)
    assert v.dtype == oar.float64
    _moments_close(v.numpy(), 3.5, 3.5)


def test_standard_gamma_moments():
    oar.seed(9)
    for a in (0.5, 4.0):
        v = oar.standard_gamma(oar.full([N], a, dtype="float32"))
        assert v.dtype == oar.float32
        _moments_close(v.numpy(), a, a)


@pytest.mark.parametrize("make", [
    lambda: oar.zeros([64]).exponential_(1.0),
    lambda: oar.zeros([64]).cauchy_(),
    lambda: oar.zeros([64]).geometric_(0.4),
    lambda: oar.zeros([64]).log_normal_(),
    lambda: oar.zeros([64]).bernoulli_(0.5),
    lambda: oar.zeros([64], dtype="int64").random_(0, 10),
    lambda: oar.poisson(oar.full([64], 2.0)),
    lambda: oar.binomial(oar.full([64], 5, dtype="int64"), oar.full([64], 0.5)),
    lambda: oar.standard_gamma(oar.full([64], 2.0)),
    lambda: oar.log_normal(shape=[64]),
])
def test_reproducible_under_manual_seed(make):
    oar.manual_seed(2024)
    a = make().numpy()
    oar.manual_seed(2024)
    b = make().numpy()
    oar.manual_seed(2025)
    c = make().numpy()
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_inplace_returns_self_and_keeps_dtype():
    x = oar.zeros([8], dtype="float64")
    assert x.exponential_() is x and x.dtype == oar.float64
    y = oar.zeros([8], dtype="int32")
    assert y.random_(0, 3) is y and y.dtype == oar.int32


@pytest.mark.parametrize("call, exc, api", [
    (lambda: oar.zeros([2]).exponential_(-1.0), ValueError, "oar.Tensor.exponential_"),
    (lambda: oar.zeros([2], dtype="int64").exponential_(), TypeError, "oar.Tensor.exponential_"),
    (lambda: oar.zeros([2]).geometric_(0.0), ValueError, "oar.geometric_"),
    (lambda: oar.zeros([2]).geometric_(1.5), ValueError, "oar.geometric_"),
    (lambda: oar.zeros([2]).cauchy_(scale=0.0), ValueError, "oar.cauchy_"),
    (lambda: oar.zeros([2]).bernoulli_(oar.to_tensor([0.5, 2.0])), ValueError, "oar.bernoulli_"),
    (lambda: oar.zeros([2]).bernoulli_(oar.to_tensor([0.5, 0.5, 0.5])), ValueError, "oar.bernoulli_"),
    (lambda: oar.zeros([2], dtype="int64").random_(5, 5), ValueError, "oar.Tensor.random_"),
    (lambda: oar.zeros([2], dtype="uint8").random_(0, 300), ValueError, "oar.Tensor.random_"),
    (lambda: oar.poisson(oar.to_tensor([-1.0])), ValueError, "oar.poisson"),
    (lambda: oar.standard_gamma(oar.to_tensor([0.0])), ValueError, "oar.standard_gamma"),
    (lambda: oar.binomial(oar.to_tensor([2]), oar.to_tensor([1.5])), ValueError, "oar.binomial"),
    (lambda: oar.binomial(oar.to_tensor([-2]), oar.to_tensor([0.5])), ValueError, "oar.binomial"),
    (lambda: oar.binomial(oar.to_tensor([2, 3]), oar.to_tensor([0.5, 0.5, 0.5])), ValueError, "oar.binomial"),
    (lambda: oar.log_normal_(oar.zeros([2]), std=-1.0), ValueError, "oar.log_normal_"),
])
def test_errors(call, exc, api):
    with pytest.raises(exc, match=r"^\[" + api.replace(".", r"\.") + r"\]"):
        call()
