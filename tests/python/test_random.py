"""Random creation: reproducibility, thread independence, distribution statistics
(1e5 samples against closed forms), and error inputs."""
import math

import numpy as np
import pytest

import oar

N = 100_000


def ks_stat(samples, cdf):
    """Kolmogorov-Smirnov distance between the empirical CDF of `samples` and `cdf`."""
    x = np.sort(np.asarray(samples, dtype=np.float64))
    n = len(x)
    f = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(0, n) / n))


# 99.9% critical value of the KS statistic is about 1.95 / sqrt(n).
KS_LIMIT = 1.95 / math.sqrt(N)
normal_cdf = np.vectorize(lambda v: 0.5 * (1 + math.erf(v / math.sqrt(2))))


def test_seed_reproducible_and_distinct():
    oar.seed(123)
    a = oar.rand([1000]).numpy()
    b = oar.randn([10]).numpy()
    oar.seed(123)
    np.testing.assert_array_equal(oar.rand([1000]).numpy(), a)
    np.testing.assert_array_equal(oar.randn([10]).numpy(), b)
    oar.seed(124)
    assert not np.array_equal(oar.rand([1000]).numpy(), a)


def test_consecutive_draws_differ():
    oar.seed(5)
    assert not np.array_equal(oar.rand([100]).numpy(), oar.rand([100]).numpy())


def test_rng_state_roundtrip():
    oar.seed(1)
    oar.rand([7])
    st = oar.get_rng_state()
    a = oar.randn([33]).numpy()
    oar.rand([3])
    oar.set_rng_state(st)
    np.testing.assert_array_equal(oar.randn([33]).numpy(), a)


def test_independent_of_thread_count():
    n0 = oar.get_num_threads()
    try:
        for f in (lambda: oar.rand([300_001]), lambda: oar.randn([300_001], "float64"),
                  lambda: oar.randint(0, 1000, [200_003]), lambda: oar.randperm(100_000)):
            oar.set_num_threads(1)
            oar.seed(9)
            a = f().numpy()
            oar.set_num_threads(max(2, n0))
            oar.seed(9)
            np.testing.assert_array_equal(f().numpy(), a)
    finally:
        oar.set_num_threads(n0)


def test_prefix_property():
    # Element i depends only on (seed, offset, i): a longer draw extends a shorter one.
    oar.seed(3)
    a = oar.rand([10]).numpy()
    oar.seed(3)
    b = oar.rand([1000]).numpy()
    np.testing.assert_array_equal(a, b[:10])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rand_statistics(dtype):
    oar.seed(2024)
    x = oar.rand([N], dtype=dtype)
    assert x.dtype == getattr(oar, dtype)
    v = x.numpy().astype(np.float64)
    assert v.min() >= 0 and v.max() < 1
    assert abs(v.mean() - 0.5) < 0.005
    assert abs(v.var() - 1 / 12) < 0.002
    assert ks_stat(v, lambda t: t) < KS_LIMIT


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rand_half(dtype):
    oar.seed(0)
    v = oar.rand([N], dtype=dtype).astype("float32").numpy()
    assert v.min() >= 0 and v.max() < 1
    assert abs(v.mean() - 0.5) < 0.01


def test_uniform_range_and_seed_argument():
    oar.seed(0)
    v = oar.uniform([N], min=-3.0, max=5.0).numpy().astype(np.float64)
    assert v.min() >= -3 and v.max() < 5
    assert abs(v.mean() - 1.0) < 0.05
    assert ks_stat(v, lambda t: (t + 3) / 8) < KS_LIMIT
    st = oar.get_rng_state()
    a = oar.uniform([50], seed=77).numpy()
    b = oar.uniform([50], seed=77).numpy()
    np.testing.assert_array_equal(a, b)
    assert oar.get_rng_state() == st  # an explicit seed leaves the global generator alone
    assert oar.uniform([2, 0, 3]).shape == [2, 0, 3]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_randn_statistics(dtype):
    oar.seed(11)
    v = oar.randn([N], dtype=dtype).numpy().astype(np.float64)
    assert abs(v.mean()) < 0.015
    assert abs(v.var() - 1) < 0.02
    assert abs(np.mean(v ** 4) - 3) < 0.1  # kurtosis of a normal
    assert ks_stat(v, normal_cdf) < KS_LIMIT


def test_normal():
    oar.seed(4)
    v = oar.normal(2.0, 3.0, [N]).numpy().astype(np.float64)
    assert abs(v.mean() - 2) < 0.05 and abs(v.std() - 3) < 0.05
    m = oar.to_tensor(np.array([-100.0, 0.0, 100.0]))
    s = oar.to_tensor(np.array([1e-6, 1e-6, 1e-6]))
    np.testing.assert_allclose(oar.normal(m, s).numpy(), [-100, 0, 100], atol=1e-4)
    assert oar.standard_normal([3, 4]).shape == [3, 4]
    with pytest.raises(ValueError, match=r"^\[oar.normal\]"):
        oar.normal(0.0, -1.0, [2])


def test_randint():
    oar.seed(8)
    x = oar.randint(-3, 7, [N])
    assert x.dtype == oar.int64
    v = x.numpy()
    assert v.min() == -3 and v.max() == 6
    counts = np.bincount(v + 3, minlength=10) / N
    np.testing.assert_allclose(counts, 0.1, atol=0.006)
    assert oar.randint(5, shape=[4], dtype="int32").dtype == oar.int32
    assert ((oar.randint(5, shape=[100]).numpy() >= 0) & (oar.randint(5, shape=[100]).numpy() < 5)).all()
    big = oar.randint(-(2 ** 62), 2 ** 62, [1000]).numpy()
    assert big.min() < -(2 ** 60) and big.max() > 2 ** 60
    y = oar.randint_like(oar.zeros([3, 2]), 0, 3)
    assert y.shape == [3, 2] and y.dtype == oar.float32


def test_bernoulli():
    oar.seed(6)
    p = oar.full([N], 0.3, dtype="float64")
    v = oar.bernoulli(p).numpy()
    assert set(np.unique(v)) <= {0.0, 1.0}
    assert abs(v.mean() - 0.3) < 0.006
    edge = oar.to_tensor(np.array([[0.0, 1.0], [1.0, 0.0]], dtype=np.float32))
    np.testing.assert_array_equal(oar.bernoulli(edge).numpy(), edge.numpy())
    # non-contiguous probabilities are read correctly
    np.testing.assert_array_equal(oar.bernoulli(edge.transpose([1, 0])).numpy(), edge.numpy().T)
    with pytest.raises(ValueError, match=r"^\[oar.bernoulli\]"):
        oar.bernoulli(oar.to_tensor([0.5, 1.5]))
    with pytest.raises(ValueError, match=r"^\[oar.bernoulli\]"):
        oar.bernoulli(oar.to_tensor([float("nan")]))


def test_multinomial_with_replacement_frequencies():
    oar.seed(10)
    w = np.array([1.0, 2.0, 0.0, 7.0])
    v = oar.multinomial(oar.to_tensor(w), N, replacement=True).numpy()
    freq = np.bincount(v, minlength=4) / N
    np.testing.assert_allclose(freq, w / w.sum(), atol=0.006)
    assert freq[2] == 0


def test_multinomial_without_replacement():
    oar.seed(12)
    w = np.array([[1.0, 1.0, 1.0, 1.0, 0.0], [5.0, 1.0, 1.0, 1.0, 1.0]])
    x = oar.to_tensor(w)
    out = oar.multinomial(x, 4)
    assert out.shape == [2, 4] and out.dtype == oar.int64
    o = out.numpy()
    assert sorted(o[0].tolist()) == [0, 1, 2, 3]
    assert len(set(o[1].tolist())) == 4
    # The first draw follows the weights: P(first == 0) = 5/9 in row 1.
    firsts = np.array([oar.multinomial(x[1], 1).item() for _ in range(3000)])
    assert abs(np.mean(firsts == 0) - 5 / 9) < 0.04


def test_multinomial_errors():
    with pytest.raises(ValueError, match=r"^\[oar.multinomial\]"):
        oar.multinomial(oar.to_tensor([0.5, 0.5]), 3)
    with pytest.raises(ValueError, match=r"^\[oar.multinomial\]"):
        oar.multinomial(oar.to_tensor([1.0, -1.0]), 1)
    with pytest.raises(ValueError, match=r"^\[oar.multinomial\]"):
        oar.multinomial(oar.to_tensor([0.0, 0.0]), 1)
    with pytest.raises(ValueError, match=r"^\[oar.multinomial\]"):
        oar.multinomial(oar.to_tensor([1.0, 0.0, 0.0]), 2)
    with pytest.raises(ValueError, match=r"^\[oar.multinomial\]"):
        oar.multinomial(oar.zeros([2, 2, 2]), 1)


def test_randperm():
    oar.seed(13)
    p = oar.randperm(1000)
    assert p.dtype == oar.int64
    v = p.numpy()
    np.testing.assert_array_equal(np.sort(v), np.arange(1000))
    assert not np.array_equal(v, np.arange(1000))
    assert oar.randperm(0).shape == [0]
    assert sorted(oar.randperm(6, dtype="float32").numpy().tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    # every position is uniform over the values
    firsts = np.array([oar.randperm(4).numpy()[0] for _ in range(4000)])
    np.testing.assert_allclose(np.bincount(firsts, minlength=4) / 4000, 0.25, atol=0.035)


def test_error_inputs():
    with pytest.raises(ValueError, match=r"^\[oar.rand\]"):
        oar.rand([2, -1])
    with pytest.raises(ValueError, match=r"^\[oar.randn\]"):
        oar.randn([-3])
    with pytest.raises(ValueError, match=r"^\[oar.randint\]"):
        oar.randint(5, 5, [2])
    with pytest.raises(ValueError, match=r"^\[oar.randint\]"):
        oar.randint(0, 5, [-2])
    with pytest.raises(ValueError, match=r"^\[oar.uniform\]"):
        oar.uniform([2], min=1.0, max=0.0)
    with pytest.raises(TypeError, match=r"^\[oar.rand\]"):
        oar.rand([2], dtype="int32")
    with pytest.raises(TypeError, match=r"^\[oar.randint\]"):
        oar.randint(0, 3, [2], dtype="float32")
    with pytest.raises(ValueError, match=r"^\[oar.randperm\]"):
        oar.randperm(-1)
    with pytest.raises(ValueError, match=r"^\[oar.randint\]"):
        oar.randint(0, 2 ** 40, [2], dtype="int32")


def test_tensor_uniform_and_normal_inplace():
    x = oar.zeros([1000])
    x.uniform_(2.0, 3.0)
    v = x.numpy()
    assert v.min() >= 2 and v.max() < 3
    x.normal_(5.0, 0.0)
    np.testing.assert_array_equal(x.numpy(), 5.0)


def test_multinomial_refuses_a_draw_count_that_overflows():
    x = oar.to_tensor([[0.2, 0.8], [0.5, 0.5]])
    with pytest.raises(ValueError, match=r"^\[oar.multinomial\] the number of elements overflows int64"):
        oar.multinomial(x, 2**63 - 1, True)
