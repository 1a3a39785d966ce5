"""Transforms of oar.distribution: forward/inverse round trips, log-determinants of the
Jacobian against NumPy finite differences, shapes, composition, TransformedDistribution
and Independent against SciPy, and error inputs."""
import numpy as np
import pytest
import scipy.stats as stats

import oar
import oar.distribution as D
from test_distribution_helpers import check_error, check_moments, close, t64


def _fd_jacobian(f, x, h=1e-6):
    """Jacobian of f (NumPy -> NumPy) at the vector x by central differences: [out, in]."""
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, -1)


def _np(t, fn):
    return lambda a: fn(t64(a)).numpy()


# name -> (transform, domain sampler (rng, shape) -> x)
ELEMENTWISE = {
    "Affine": (lambda: D.AffineTransform(t64(0.5), t64(-2.0)), lambda r, s: r.normal(size=s)),
    "Exp": (lambda: D.ExpTransform(), lambda r, s: r.normal(size=s)),
    "Power": (lambda: D.PowerTransform(t64(2.5)), lambda r, s: r.uniform(0.2, 3.0, size=s)),
    "Sigmoid": (lambda: D.SigmoidTransform(), lambda r, s: r.normal(scale=3.0, size=s)),
    "Tanh": (lambda: D.TanhTransform(), lambda r, s: r.normal(size=s)),
    "Chain": (lambda: D.ChainTransform([D.AffineTransform(t64(1.0), t64(0.5)), D.ExpTransform(),
                                        D.PowerTransform(t64(0.5))]), lambda r, s: r.normal(size=s)),
    "Stack": (lambda: D.StackTransform([D.ExpTransform(), D.TanhTransform(), D.AffineTransform(t64(1.0), t64(3.0))],
                                       axis=1), lambda r, s: r.normal(size=(4, 3))),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_round_trip_and_log_det(name):
    make, draw = ELEMENTWISE[name]
    t = make()
    x = draw(np.random.default_rng(0), (4, 3))
    y = t.forward(t64(x))
    close(t.inverse(y), x, rtol=1e-8, atol=1e-10)
    assert t.forward_shape(x.shape) == x.shape and t.inverse_shape(x.shape) == x.shape
    ldj = t.forward_log_det_jacobian(t64(x)).numpy()
    f = _np(t, t.forward)
    h = 1e-6
    # elementwise: the Jacobian is diagonal, so central differences of all entries at once suffice
    deriv = (f(x + h) - f(x - h)) / (2 * h)
    np.testing.assert_allclose(ldj, np.log(np.abs(deriv)), rtol=1e-6, atol=1e-7)
    close(t.inverse_log_det_jacobian(y), -ldj, rtol=1e-8, atol=1e-10)
    assert t(t64(x)).shape == list(x.shape)


def test_tanh_and_sigmoid_log_det_stay_finite_for_large_inputs():
    x = t64([-40.0, 40.0])
    assert np.all(np.isfinite(D.TanhTransform().forward_log_det_jacobian(x).numpy()))
    close(D.SigmoidTransform().forward_log_det_jacobian(x), [-40.0, -40.0], rtol=1e-9)


def test_stick_breaking_round_trip_and_log_det():
    t = D.StickBreakingTransform()
    x = np.random.default_rng(1).normal(size=(2, 3))
    y = t.forward(t64(x))
    assert y.shape == [2, 4]
    np.testing.assert_allclose(y.numpy().sum(-1), 1.0, rtol=1e-12)
    close(t.inverse(y), x, rtol=1e-8, atol=1e-10)
    assert t.forward_shape((2, 3)) == (2, 4) and t.inverse_shape((2, 4)) == (2, 3)
    ldj = t.forward_log_det_jacobian(t64(x)).numpy()
    assert ldj.shape == (2,)
    for b in range(2):
        jac = _fd_jacobian(lambda v: t.forward(t64(v)).numpy()[:-1], x[b])  # drop the dependent coordinate
        np.testing.assert_allclose(ldj[b], np.log(abs(np.linalg.det(jac))), rtol=1e-6)
    close(t.inverse_log_det_jacobian(y), -ldj, rtol=1e-8)


def test_softmax_abs_reshape_independent():
    x = t64([[1.0, 2.0, 3.0]])
    s = D.SoftmaxTransform()
    close(s.forward(x), np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum(), rtol=1e-12)
    close(s.forward(s.inverse(s.forward(x))), s.forward(x).numpy(), rtol=1e-12)
    check_error(NotImplementedError, "[oar.distribution.SoftmaxTransform.forward_log_det_jacobian]",
                s.forward_log_det_jacobian, x)
    a = D.AbsTransform()
    close(a.forward(t64([-2.0, 3.0])), [2.0, 3.0])
    neg, pos = a.inverse(t64([2.0]))
    close(neg, [-2.0])
    close(pos, [2.0])
    r = D.ReshapeTransform((2, 3), (3, 2))
    v = t64(np.arange(12.0).reshape(2, 2, 3))
    out = r.forward(v)
    assert out.shape == [2, 3, 2] and r.inverse(out).shape == [2, 2, 3]
    close(r.inverse(out), v.numpy())
    assert r.forward_log_det_jacobian(v).shape == [2] and r.forward_shape((5, 2, 3)) == (5, 3, 2)
    ind = D.IndependentTransform(D.ExpTransform(), 2)
    close(ind.forward_log_det_jacobian(v), v.numpy().sum((-2, -1)))


def test_chain_event_ranks_and_call_forms():
    chain = D.ChainTransform([D.ExpTransform(), D.StickBreakingTransform()])
    x = t64(np.random.default_rng(2).normal(size=(5, 3)))
    # Exp then stick breaking: the Exp log-dets are summed over the vector axis
    expected = x.numpy().sum(-1) + D.StickBreakingTransform().forward_log_det_jacobian(x.exp()).numpy()
    close(chain.forward_log_det_jacobian(x), expected, rtol=1e-10)
    composed = D.ExpTransform()(D.AffineTransform(t64(0.0), t64(2.0)))
    assert isinstance(composed, D.ChainTransform)
    assert isinstance(D.ExpTransform()(D.Normal(0.0, 1.0)), D.TransformedDistribution)


def test_transformed_distribution_against_scipy():
    base = D.Normal(t64([0.0, 0.5]), t64([1.0, 0.3]))
    d = D.TransformedDistribution(base, [D.AffineTransform(t64(1.0), t64(2.0)), D.ExpTransform()])
    ref = stats.lognorm(s=2 * np.array([1.0, 0.3]), scale=np.exp(1 + 2 * np.array([0.0, 0.5])))
    x = np.array([[0.5, 3.0], [7.0, 1.2]])
    close(d.log_prob(t64(x)), ref.logpdf(x), rtol=1e-8)
    close(d.prob(t64(x)), ref.pdf(x), rtol=1e-8)
    oar.seed(12)
    s = d.sample([20000])
    assert s.shape == [20000, 2] and d.batch_shape == (2,) and d.event_shape == ()
    check_moments(np.log(s.numpy()), 1 + 2 * np.array([0.0, 0.5]), (2 * np.array([1.0, 0.3])) ** 2)
    loc = t64(0.3, grad=True)
    (g,) = oar.grad(D.TransformedDistribution(D.Normal(loc, 1.0), [D.ExpTransform()]).rsample([4]).sum(), [loc])
    assert float(g) > 0


def test_transformed_distribution_with_stick_breaking_is_a_simplex_law():
    base = D.Independent(D.Normal(t64(np.zeros(2)), t64(np.ones(2))), 1)
    d = D.TransformedDistribution(base, [D.StickBreakingTransform()])
    assert d.batch_shape == () and d.event_shape == (3,)
    y = D.StickBreakingTransform().forward(t64([0.3, -0.4]))
    x = np.array([0.3, -0.4])
    t = D.StickBreakingTransform()
    expected = stats.norm.logpdf(x).sum() - float(t.forward_log_det_jacobian(t64(x)))
    close(d.log_prob(y), expected, rtol=1e-8)


def test_independent_against_scipy():
    loc, scale = np.array([[0.0, 1.0, 2.0], [1.0, -1.0, 0.5]]), np.array([1.0, 2.0, 0.5])
    d = D.Independent(D.Normal(t64(loc), t64(scale)), 1)
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = np.random.default_rng(3).normal(size=(4, 2, 3))
    close(d.log_prob(t64(x)), stats.norm(loc, scale).logpdf(x).sum(-1), rtol=1e-8)
    close(d.entropy(), stats.norm(loc, scale).entropy().sum(-1), rtol=1e-8)
    close(d.mean, loc)
    close(d.variance, np.broadcast_to(scale ** 2, loc.shape))
    assert d.sample([7]).shape == [7, 2, 3]


def test_lognormal_is_a_transformed_distribution():
    d = D.LogNormal(t64([0.0, 1.0]), t64(0.5))
    assert isinstance(d, D.TransformedDistribution)
    x = np.array([0.7, 2.0])
    ref = stats.lognorm(s=0.5, scale=np.exp([0.0, 1.0]))
    close(D.TransformedDistribution.log_prob(d, t64(x)), ref.logpdf(x), rtol=1e-8)


def test_errors():
    check_error(ValueError, "[oar.distribution.AffineTransform] scale must be non-zero",
                D.AffineTransform, 0.0, 0.0)
    check_error(ValueError, "[oar.distribution.PowerTransform] power must be non-zero", D.PowerTransform, 0.0)
    check_error(ValueError, "[oar.distribution.ReshapeTransform] in_event_shape [2, 3] and out_event_shape [4]",
                D.ReshapeTransform, (2, 3), (4,))
    check_error(ValueError, "[oar.distribution.ReshapeTransform.forward] the trailing shape must be [2, 3]",
                D.ReshapeTransform((2, 3), (6,)).forward, oar.ones([3, 2]))
    check_error(TypeError, "[oar.distribution.ChainTransform] transforms", D.ChainTransform, [1])
    check_error(TypeError, "[oar.distribution.StackTransform] transforms", D.StackTransform, [])
    check_error(ValueError, "[oar.distribution.StackTransform.forward] the input needs 2 slices along axis 0",
                D.StackTransform([D.ExpTransform(), D.ExpTransform()]).forward, oar.ones([3]))
    check_error(ValueError, "[oar.distribution.IndependentTransform] reinterpreted_batch_rank",
                D.IndependentTransform, D.ExpTransform(), 0)
    check_error(TypeError, "[oar.distribution.ExpTransform.forward] expects a Tensor", D.ExpTransform().forward, 1.0)
    check_error(ValueError, "[oar.distribution.StickBreakingTransform.forward] the input needs at least 1",
                D.StickBreakingTransform().forward, t64(1.0))
    check_error(TypeError, "[oar.distribution.TransformedDistribution] base", D.TransformedDistribution, 1, [])
    check_error(TypeError, "[oar.distribution.TransformedDistribution] transforms",
                D.TransformedDistribution, D.Normal(0.0, 1.0), [1])
    check_error(ValueError, "[oar.distribution.TransformedDistribution] the transforms need inputs of at least 1",
                D.TransformedDistribution, D.Normal(0.0, 1.0), [D.StickBreakingTransform()])
    check_error(ValueError, "[oar.distribution.Independent] reinterpreted_batch_rank must be an int in [1, 1]",
                D.Independent, D.Normal(oar.zeros([2]), 1.0), 2)
    check_error(NotImplementedError, "[oar.distribution.TransformedDistribution.log_prob] AbsTransform",
                D.TransformedDistribution(D.Normal(0.0, 1.0), [D.AbsTransform()]).log_prob, t64(1.0))

