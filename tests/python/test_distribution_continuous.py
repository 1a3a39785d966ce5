"""Univariate continuous distributions of oar.distribution against SciPy: densities,
CDFs and quantiles, moments, entropy, sampling, reparameterised gradients, dtypes and
error inputs."""
import math

import numpy as np
import pytest
import scipy.stats as stats

import oar
import oar.distribution as D
from test_distribution_helpers import check_error, check_ks, check_moments, close, pathwise_fd, t64

# name -> (constructor, SciPy frozen distribution from the parameters, parameter sets
# (each broadcasting set gives a batch), whether icdf is defined)
CASES = {
    "Normal": (D.Normal, lambda m, s: stats.norm(m, s),
               [(0.3, 1.7), ([0.0, 1.5, -2.0], [[1.0], [0.5]])], True),
    "Uniform": (D.Uniform, lambda lo, hi: stats.uniform(lo, np.subtract(hi, lo)),
                [(-1.0, 2.0), ([-1.0, 0.5, 2.0], [[3.0], [4.5]])], True),
    "Laplace": (D.Laplace, lambda m, s: stats.laplace(m, s),
                [(0.5, 2.0), ([0.0, 1.0, -3.0], [[0.7], [2.5]])], True),
    "Cauchy": (D.Cauchy, lambda m, s: stats.cauchy(m, s),
               [(1.0, 0.5), ([0.0, 1.0, -3.0], [[0.7], [2.5]])], True),
    "Gumbel": (D.Gumbel, lambda m, s: stats.gumbel_r(m, s),
               [(1.0, 2.0), ([0.0, 1.0, -3.0], [[0.7], [2.5]])], True),
    "LogNormal": (D.LogNormal, lambda m, s: stats.lognorm(s=s, scale=np.exp(m)),
                  [(0.2, 0.6), ([0.0, 0.5, -1.0], [[0.3], [1.1]])], True),
    "Gamma": (D.Gamma, lambda a, b: stats.gamma(a, scale=1 / np.asarray(b)),
              [(2.5, 1.5), ([0.5, 1.0, 4.0], [[0.5], [3.0]])], False),
    "Exponential": (D.Exponential, lambda r: stats.expon(scale=1 / np.asarray(r)),
                    [(1.5,), ([0.5, 1.0, 4.0],)], True),
    "Beta": (D.Beta, lambda a, b: stats.beta(a, b),
             [(2.0, 3.0), ([0.7, 1.0, 4.0], [[0.8], [3.0]])], False),
    "Chi2": (D.Chi2, lambda k: stats.chi2(k), [(3.0,), ([0.8, 2.0, 7.5],)], False),
    "StudentT": (D.StudentT, lambda n, m, s: stats.t(n, m, s),
                 [(5.0, 0.5, 2.0), ([[4.5], [9.0]], [0.0, 1.0, -2.0], [0.7, 1.0, 2.5])], False),
}
NO_CDF = ("Beta", "StudentT")
MIXTURES = ("Beta", "StudentT")  # draws built from several variates: no per-draw quantile gradient
NAMES = sorted(CASES)


def _make(name, params, grad=False):
    ctor, ref, _, _ = CASES[name]
    tensors = [t64(p, grad) for p in params]
    return ctor(*tensors), ref(*[np.asarray(p, dtype=np.float64) for p in params])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("which", [0, 1])
def test_density_cdf_icdf_against_scipy(name, which):
    params = CASES[name][2][which]
    dist, ref = _make(name, params)
    shape = np.broadcast_shapes(*[np.shape(p) for p in params])
    assert dist.batch_shape == tuple(shape) and dist.event_shape == ()
    x = ref.rvs(size=(4,) + tuple(shape), random_state=np.random.default_rng(1))
    close(dist.log_prob(t64(x)), ref.logpdf(x), rtol=1e-6, atol=1e-9)
    close(dist.prob(t64(x)), ref.pdf(x), rtol=1e-6, atol=1e-12)
    if name not in NO_CDF:
        close(dist.cdf(t64(x)), ref.cdf(x), rtol=1e-6, atol=1e-9)
    if CASES[name][3]:
        u = np.linspace(0.05, 0.95, 7).reshape((7,) + (1,) * len(shape))
        close(dist.icdf(t64(u)), ref.ppf(u), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", NAMES)
def test_moments_and_entropy_against_scipy(name):
    params = CASES[name][2][1]
    dist, ref = _make(name, params)
    close(dist.entropy(), ref.entropy(), rtol=1e-6, atol=1e-9)
    if name == "Cauchy":
        check_error(ValueError, "[oar.distribution.Cauchy.mean]", lambda: dist.mean)
        check_error(ValueError, "[oar.distribution.Cauchy.variance]", lambda: dist.variance)
        return
    close(dist.mean, ref.mean(), rtol=1e-6)
    close(dist.variance, ref.var(), rtol=1e-6)
    close(dist.stddev, ref.std(), rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_sampling_moments_support_and_ks(name):
    params = CASES[name][2][1]
    dist, ref = _make(name, params)
    oar.seed(7)
    n = 4000
    s = dist.sample([n])
    assert s.shape == [n] + list(dist.batch_shape) and s.dtype == oar.float64 and s.stop_gradient
    v = s.numpy()
    lo, hi = ref.support()
    assert np.all(v >= lo) and np.all(v <= hi)
    if name != "Cauchy":
        check_moments(v, ref.mean(), ref.var(), ref.stats(moments="k"))
    frozen = [CASES[name][1](*[np.broadcast_to(np.asarray(p, dtype=np.float64), v.shape[1:])[idx] for p in params])
              for idx in np.ndindex(*v.shape[1:])]
    for idx, f in zip(np.ndindex(*v.shape[1:]), frozen):
        check_ks(v[(slice(None),) + idx], f.cdf)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in MIXTURES])
def test_rsample_gradients_match_pathwise_finite_differences(name):
    """d(sum of draws)/d(parameter) against dx/dtheta from SciPy's quantile function with
    each draw's quantile held fixed. (Beta and Student t draws combine several variates:
    their gradient is a different, equally unbiased estimator, checked in expectation below.)"""
    ctor, ref_of, sets, _ = CASES[name]
    params = [float(p) for p in sets[0]]
    tensors = [t64(p, grad=True) for p in params]
    oar.seed(3)
    x = ctor(*tensors).rsample([50])
    assert not x.stop_gradient
    grads = oar.grad(x.sum(), tensors)
    xs = x.numpy()
    for i, g in enumerate(grads):
        def ref(theta, i=i):
            ps = list(params)
            ps[i] = theta
            return ref_of(*ps)
        fd = pathwise_fd(lambda u, th: ref(th).ppf(u), lambda v, th: ref(th).cdf(v), xs, params[i], h=1e-6)
        np.testing.assert_allclose(float(g), fd.sum(), rtol=2e-4, atol=1e-6)


def test_dirichlet_against_scipy():
    alpha = np.array([[0.8, 2.0, 3.5], [1.0, 1.0, 1.0]])
    d = D.Dirichlet(t64(alpha))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = np.stack([stats.dirichlet(a).rvs(5, random_state=1) for a in alpha], axis=1)  # [5, 2, 3]
    ref_lp = np.array([[stats.dirichlet(alpha[j]).logpdf(x[i, j]) for j in range(2)] for i in range(5)])
    close(d.log_prob(t64(x)), ref_lp, rtol=1e-6)
    close(d.entropy(), [stats.dirichlet(a).entropy() for a in alpha], rtol=1e-6)
    close(d.mean, np.stack([stats.dirichlet(a).mean() for a in alpha]), rtol=1e-6)
    close(d.variance, np.stack([stats.dirichlet(a).var() for a in alpha]), rtol=1e-6)
    oar.seed(11)
    s = d.sample([20000]).numpy()
    assert s.shape == (20000, 2, 3) and np.all(s >= 0)
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-9)
    check_moments(s, d.mean.numpy(), d.variance.numpy(), kurt_excess=3.0)


def test_dirichlet_and_beta_rsample_gradients():
    """d E[x_0]/d alpha by Monte Carlo over reparameterised draws against the closed form
    d(alpha_0 / a0)/d alpha."""
    a = t64([2.0, 3.0, 5.0], grad=True)
    oar.seed(5)
    x = D.Dirichlet(a).rsample([20000])
    (g,) = oar.grad(x[:, 0].mean(), [a])
    a0 = 10.0
    exact = np.array([1 / a0 - 2.0 / a0 ** 2, -2.0 / a0 ** 2, -2.0 / a0 ** 2])
    np.testing.assert_allclose(g.numpy(), exact, atol=4e-3)
    alpha, beta = t64(2.0, grad=True), t64(3.0, grad=True)
    xb = D.Beta(alpha, beta).rsample([20000])
    ga, gb = oar.grad(xb.mean(), [alpha, beta])
    np.testing.assert_allclose([float(ga), float(gb)], [3 / 25, -2 / 25], atol=4e-3)


def test_student_t_rsample_gradients_in_expectation():
    """d E[x^2]/d(scale, df) for loc = 0 against the closed form of scale^2 df / (df - 2)."""
    df, scale = t64(12.0, grad=True), t64(1.5, grad=True)
    oar.seed(6)
    x = D.StudentT(df, 0.0, scale).rsample([50000])
    gd, gs = oar.grad(x.square().mean(), [df, scale])
    np.testing.assert_allclose(float(gs), 2 * 1.5 * 12 / 10, rtol=0.03)
    np.testing.assert_allclose(float(gd), -2 * 1.5 ** 2 / 10 ** 2, rtol=0.1)


def test_student_t_moments_where_undefined():
    d = D.StudentT(t64([0.5, 1.5, 3.0]), 1.0, 2.0)
    m, v = d.mean.numpy(), d.variance.numpy()
    assert np.isnan(m[0]) and m[1] == m[2] == 1.0
    assert np.isnan(v[0]) and v[1] == np.inf and v[2] == 12.0


def test_gamma_rsample_gradient_is_exact_per_draw():
    """The implicit gradient of each draw against dx/dalpha from SciPy's gammaincinv."""
    import scipy.special as sp

    alpha = t64([0.3, 1.0, 7.5], grad=True)
    oar.seed(9)
    x = D.Gamma(alpha, 1.0).rsample([30])
    xs = x.numpy()
    (g,) = oar.grad(x.sum(), [alpha])
    u = sp.gammainc(alpha.numpy(), xs)
    a = alpha.numpy()
    h = 1e-6 * a
    fd = (sp.gammaincinv(a + h, u) - sp.gammaincinv(a - h, u)) / (2 * h)
    np.testing.assert_allclose(g.numpy(), fd.sum(0), rtol=1e-4)


def test_normal_rsample_gradient_closed_form():
    loc, scale = t64([1.0, -2.0], grad=True), t64([0.5, 3.0], grad=True)
    oar.seed(0)
    x = D.Normal(loc, scale).rsample([10])
    gl, gs = oar.grad((x * x).sum(), [loc, scale])
    eps = (x.numpy() - loc.numpy()) / scale.numpy()
    close(gl, (2 * x.numpy()).sum(0))
    close(gs, (2 * x.numpy() * eps).sum(0))


def test_gradients_of_log_prob_and_entropy_reach_parameters():
    loc, scale = t64(0.5, grad=True), t64(2.0, grad=True)
    lp = D.Normal(loc, scale).log_prob(t64(1.5))
    gl, gs = oar.grad(lp, [loc, scale])
    np.testing.assert_allclose([float(gl), float(gs)], [1.0 / 4, -1 / 2 + 1.0 / 8])
    a = t64(2.5, grad=True)
    (ga,) = oar.grad(D.Gamma(a, 1.0).entropy(), [a])
    h = 1e-6
    fd = (stats.gamma(2.5 + h).entropy() - stats.gamma(2.5 - h).entropy()) / (2 * h)
    np.testing.assert_allclose(float(ga), fd, rtol=1e-5)


def test_parameter_types_and_dtypes():
    assert D.Normal(0.0, 1.0).sample([2]).dtype == oar.float32
    assert D.Normal([0.0, 1.0], 1).loc.dtype == oar.float32
    assert D.Normal(np.array([0.0]), 1.0).loc.dtype == oar.float64
    assert D.Normal(oar.to_tensor([0.0], dtype="float64"), 1.0).scale.dtype == oar.float64
    assert D.Normal(np.float32(0.0), np.array(1.0, dtype=np.float32)).loc.dtype == oar.float32
    d = D.Normal(oar.zeros([3, 1]), oar.ones([4]))
    assert d.batch_shape == (3, 4) and d.sample().shape == [3, 4] and d.sample([2, 5]).shape == [2, 5, 3, 4]
    assert D.Uniform(0, 1).rsample(()).shape == []
    assert float(D.Uniform(0.0, 1.0).log_prob(2.0)) == -math.inf
    assert float(D.Exponential(1.0).log_prob(-1.0)) == -math.inf
    assert float(D.Gamma(2.0, 1.0).log_prob(-1.0)) == -math.inf


@pytest.mark.parametrize("ctor,args,exc,prefix", [
    (D.Normal, (0.0, -1.0), ValueError, "[oar.distribution.Normal] scale must be positive"),
    (D.Normal, (0.0, 0.0), ValueError, "[oar.distribution.Normal] scale"),
    (D.Normal, ("a", 1.0), TypeError, "[oar.distribution.Normal] loc"),
    (D.Normal, ([0.0, 1.0], [1.0, 2.0, 3.0]), ValueError, "[oar.distribution.Normal] the parameters do not broadcast"),
    (D.Uniform, (1.0, 1.0), ValueError, "[oar.distribution.Uniform] high - low must be positive"),
    (D.Laplace, (0.0, -2.0), ValueError, "[oar.distribution.Laplace] scale"),
    (D.Cauchy, (float("nan"), 1.0), ValueError, "[oar.distribution.Cauchy] loc"),
    (D.Gumbel, (0.0, 0.0), ValueError, "[oar.distribution.Gumbel] scale"),
    (D.LogNormal, (0.0, -1.0), ValueError, "[oar.distribution.LogNormal] scale"),
    (D.Gamma, (0.0, 1.0), ValueError, "[oar.distribution.Gamma] concentration"),
    (D.Gamma, (1.0, -1.0), ValueError, "[oar.distribution.Gamma] rate"),
    (D.Exponential, (0.0,), ValueError, "[oar.distribution.Exponential] rate"),
    (D.Beta, (1.0, -1.0), ValueError, "[oar.distribution.Beta] beta"),
    (D.Dirichlet, (1.0,), ValueError, "[oar.distribution.Dirichlet] concentration must have at least 1"),
    (D.Dirichlet, ([1.0, -1.0],), ValueError, "[oar.distribution.Dirichlet] concentration must be positive"),
    (D.Normal, (None, 1.0), TypeError, "[oar.distribution.Normal] loc must be"),
    (D.Chi2, (-1.0,), ValueError, "[oar.distribution.Chi2] df must be positive"),
    (D.StudentT, (0.0, 0.0, 1.0), ValueError, "[oar.distribution.StudentT] df must be positive"),
    (D.StudentT, (3.0, 0.0, -1.0), ValueError, "[oar.distribution.StudentT] scale must be positive"),
])
def test_invalid_parameters(ctor, args, exc, prefix):
    check_error(exc, prefix, ctor, *args)


def test_invalid_sample_shapes_and_values():
    d = D.Normal(0.0, 1.0)
    check_error(TypeError, "[oar.distribution.Normal.sample] shape", d.sample, "3")
    check_error(TypeError, "[oar.distribution.Normal.rsample] shape", d.rsample, [-1])
    check_error(TypeError, "[oar.distribution.Normal.log_prob] value", d.log_prob, "x")
    check_error(ValueError, "[oar.distribution.Cauchy.stddev]",
                lambda: D.Cauchy(0.0, 1.0).stddev)


def test_errors_from_inside_name_the_method_called():
    check_error(ValueError, "[oar.distribution.Normal.log_prob] subtract: shapes [4] and [3]",
                D.Normal(oar.zeros([3]), 1.0).log_prob, oar.ones([4]))
    check_error(ValueError, "[oar.distribution.Dirichlet.prob]", D.Dirichlet(oar.ones([3])).prob, oar.ones([4]))
    check_error(TypeError, "[oar.distribution.ExpTransform.forward]", D.ExpTransform().forward, oar.ones([2]), 3)
    check_error(TypeError, "[oar.distribution.Chi2] df", D.Chi2, "x")


def test_to_static_matches_eager():
    def f(loc, scale, x):
        d = D.Normal(loc, scale)
        g = D.Gamma(scale + 1.0, 2.0)
        return d.log_prob(x) + d.entropy() + D.kl_divergence(d, D.Normal(0.0, 1.0)) + g.log_prob(x.abs() + 0.1)

    args = (oar.to_tensor([0.5, 1.0]), oar.to_tensor([1.0, 2.0]), oar.to_tensor([0.3, -0.1]))
    close(oar.jit.to_static(f)(*args), f(*args).numpy(), rtol=1e-6)
