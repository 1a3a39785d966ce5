"""oar.autograd.jacobian / hessian against central finite differences."""
import numpy as np
import pytest

import oar


def _f_np(x):
    return np.array([np.sin(x[0]) * x[1], np.exp(x[1] - x[2]), x[0] * x[1] * x[2], x[2] ** 3])


def _f(x):
    return oar.stack([oar.sin(x[0]) * x[1], oar.exp(x[1] - x[2]), x[0] * x[1] * x[2], x[2] ** 3])


def _num_jac(f, x, eps=1e-6):
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = eps
        cols.append((f(x + e) - f(x - e)) / (2 * eps))
    return np.stack(cols, axis=-1)


X = np.array([0.3, -0.7, 1.1])


def test_jacobian_matches_finite_differences_and_is_differentiable():
    x = oar.to_tensor(X, stop_gradient=False)
    J = oar.autograd.jacobian(_f(x), x)
    assert J.shape == [4, 3]
    np.testing.assert_allclose(J[:].numpy(), _num_jac(_f_np, X), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(J[1, 1:].numpy(), _num_jac(_f_np, X)[1, 1:], rtol=1e-7)
    # The entries are differentiable: d/dx of sum(J) by finite differences.
    (g,) = oar.grad(J[:].sum(), x)
    np.testing.assert_allclose(g.numpy(), _num_jac(lambda v: _num_jac(_f_np, v, 1e-4).sum(), X, 1e-4), rtol=1e-4)


def test_batched_jacobian_and_tuples():
    xb = np.array([[0.5, 1.5], [-1.0, 2.0]])
    x = oar.to_tensor(xb, stop_gradient=False)
    J = oar.autograd.jacobian(oar.tanh(x) * x[:, :1], x, batch_axis=0)
    assert J.shape == [2, 2, 2]
    for b in range(2):
        want = _num_jac(lambda v: np.tanh(v) * v[0], xb[b])
        np.testing.assert_allclose(J[:][b].numpy(), want, rtol=1e-7, atol=1e-9)
    x1 = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    x2 = oar.to_tensor([3.0], stop_gradient=False)
    Js = oar.autograd.jacobian((x1 * 2, x1 * x2), (x1, x2))
    assert isinstance(Js, tuple) and isinstance(Js[1], tuple) and Js[0][1].shape == [2, 1]
    np.testing.assert_allclose(Js[1][1][:].numpy(), [[1.0], [2.0]])
    np.testing.assert_allclose(Js[0][1][:].numpy(), [[0.0], [0.0]])  # x1 * 2 does not read x2


def test_hessian_matches_finite_differences():
    def s_np(v):
        return float(np.sum(np.sin(v) * v[::-1]) + v[0] * v[1] ** 2)

    x = oar.to_tensor(X, stop_gradient=False)
    H = oar.autograd.hessian((oar.sin(x) * oar.flip(x, [0])).sum() + x[0] * x[1] ** 2, x)
    want = _num_jac(lambda v: _num_jac(lambda u: np.array([s_np(u)]), v, 1e-4)[0], X, 1e-4)
    np.testing.assert_allclose(H[:].numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(H[:].numpy(), H[:].numpy().T, rtol=1e-12)
    xb = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
    Hb = oar.autograd.hessian((xb ** 3).sum(-1), xb, batch_axis=0)
    np.testing.assert_allclose(Hb[:].numpy(), [[[6, 0], [0, 12]], [[18, 0], [0, 24]]])


def test_errors():
    x = oar.to_tensor(X, stop_gradient=False)
    with pytest.raises(ValueError, match=r"^\[oar.autograd.jacobian\] batch_axis must be None or 0"):
        oar.autograd.jacobian(x * 2, x, batch_axis=1)
    with pytest.raises(ValueError, match=r"^\[oar.autograd.jacobian\] xs.ndim must be 0 or 1"):
        oar.autograd.jacobian(x * 2, x.reshape([1, 3]))
    with pytest.raises(ValueError, match=r"^\[oar.autograd.hessian\] ys must hold one value"):
        oar.autograd.hessian(x * 2, x)
    with pytest.raises(TypeError, match=r"^\[oar.autograd.jacobian\] ys must be a Tensor"):
        oar.autograd.jacobian([1.0], x)
