"""oar.incubate.autograd (Paddle's names) and the lazily evaluated Jacobians."""
import numpy as np
import pytest

import oar
from oar.incubate import autograd as ia

rng = np.random.default_rng(3)


def T(a):
    return oar.to_tensor(np.asarray(a, dtype="float64"))


def test_jacobian_of_matmul_flattens_and_concatenates():
    xn = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = T(xn)
    J = ia.Jacobian(lambda a, b: oar.matmul(a, b), [x, x])
    assert J.shape == [4, 8]
    # d(A B)_{ij} / dA_{kl} = [i==k] B_{lj};  / dB_{kl} = A_{ik} [l==j]
    ref = np.zeros((4, 8))
    for i in range(2):
        for j in range(2):
            for k in range(2):
                for l in range(2):
                    ref[i * 2 + j, k * 2 + l] = (i == k) * xn[l, j]
                    ref[i * 2 + j, 4 + k * 2 + l] = xn[i, k] * (l == j)
    np.testing.assert_allclose(J[:].numpy(), ref)
    np.testing.assert_allclose(J[:, 5].numpy(), ref[:, 5])


def test_rows_are_evaluated_lazily_and_cached():
    x = T(rng.standard_normal(5))
    J = ia.Jacobian(lambda a: oar.sin(a) * a.sum(), x)
    r = J[2].numpy()
    assert sorted(J._rows) == [2]
    J[1:3]
    assert sorted(J._rows) == [1, 2]
    xn = x.numpy()
    ref = np.diag(np.cos(xn) * xn.sum()) + np.sin(xn)[:, None]
    np.testing.assert_allclose(r, ref[2])
    np.testing.assert_allclose(J[:].numpy(), ref)
    with pytest.raises(IndexError, match=r"^\[oar.autograd.Jacobian\] Ellipsis"):
        J[..., 0]


def test_batched_jacobian_and_hessian():
    xb = T(rng.standard_normal((3, 4)))
    J = ia.Jacobian(lambda a: a * a, xb, is_batched=True)
    assert J.shape == [3, 4, 4]
    for b in range(3):
        np.testing.assert_allclose(J[b].numpy(), np.diag(2 * xb.numpy()[b]))
    H = ia.Hessian(lambda a: (a ** 3).sum(axis=1), xb, is_batched=True)
    assert H.shape == [3, 4, 4]
    for b in range(3):
        np.testing.assert_allclose(H[:][b].numpy(), np.diag(6 * xb.numpy()[b]))


def test_hessian_of_quadratic_form_with_two_inputs():
    A = rng.standard_normal((3, 3))
    x, y = T(rng.standard_normal(3)), T(rng.standard_normal(2))
    H = ia.Hessian(lambda a, b: oar.dot(a, oar.matmul(T(A), a)) + (b * b).sum() * a.sum(), [x, y])
    xn, yn = x.numpy(), y.numpy()
    ref = np.zeros((5, 5))
    ref[:3, :3] = A + A.T
    ref[:3, 3:] = 2 * yn[None, :]
    ref[3:, :3] = 2 * yn[:, None]
    ref[3:, 3:] = 2 * xn.sum() * np.eye(2)
    np.testing.assert_allclose(H[:].numpy(), ref, rtol=1e-12)


def test_vjp_jvp_forward_grad_grad():
    x = T(rng.standard_normal(4))
    f = lambda a: oar.tanh(a) * 3
    d = 3 * (1 - np.tanh(x.numpy()) ** 2)
    out, g = ia.vjp(f, x)
    np.testing.assert_allclose(g.numpy(), d)
    v = T(rng.standard_normal(4))
    out, t = ia.jvp(f, x, v)
    np.testing.assert_allclose(t.numpy(), d * v.numpy())
    out, gs = ia.vjp(lambda a, b: a * b, [x, v])
    np.testing.assert_allclose(gs[1].numpy(), x.numpy())
    xs = x.detach()
    xs.stop_gradient = False
    y = f(xs)
    np.testing.assert_allclose(ia.forward_grad(y, xs, v).numpy(), d * v.numpy(), rtol=1e-12)
    (g2,) = oar.grad(ia.grad(y.sum(), xs).sum(), [xs])
    th = np.tanh(x.numpy())
    np.testing.assert_allclose(g2.numpy(), -6 * th * (1 - th ** 2), rtol=1e-12)


def test_prim_switches_and_errors():
    ia.enable_prim()
    assert ia.prim_enabled()
    ia.disable_prim()
    assert not ia.prim_enabled()
    with pytest.raises(TypeError, match=r"^\[oar.incubate.autograd.vjp\] func must be callable"):
        ia.vjp(3, T([1.0]))
    with pytest.raises(ValueError, match=r"^\[oar.incubate.autograd.jvp\] v\[0\] has shape"):
        ia.jvp(lambda a: a, T([1.0, 2.0]), T([1.0]))
    with pytest.raises(TypeError, match=r"^\[oar.incubate.autograd.Jacobian\] xs must be a Tensor"):
        ia.Jacobian(lambda a: a, [1.0])
    with pytest.raises(ValueError, match=r"^\[oar.incubate.autograd.Hessian\] func must return one value"):
        ia.Hessian(lambda a: a * 2, T([1.0, 2.0]))
