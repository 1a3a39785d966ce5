"""Autograd engine behaviour: higher order, hooks, retained grads, errors, modes, complex convention."""
import numpy as np
import pytest

import oar


def _leaf(a, dtype="float64"):
    return oar.to_tensor(np.asarray(a), dtype=dtype, stop_gradient=False)


def test_third_derivative_of_tanh():
    xs = np.array([-1.3, -0.2, 0.0, 0.7, 2.1])
    x = _leaf(xs)
    y = oar.tanh(x)
    (g1,) = oar.grad(y.sum(), x, create_graph=True)
    (g2,) = oar.grad(g1.sum(), x, create_graph=True)
    (g3,) = oar.grad(g2.sum(), x)
    t = np.tanh(xs)
    np.testing.assert_allclose(g1.numpy(), 1 - t ** 2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g2.numpy(), -2 * t * (1 - t ** 2), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g3.numpy(), (1 - t ** 2) * (6 * t ** 2 - 2), rtol=1e-12, atol=1e-12)


def _mlp_loss(w1, w2, x):
    h = oar.tanh(oar.matmul(x, w1))
    return oar.tanh(oar.matmul(h, w2)).sum()


def test_hessian_vector_product_of_mlp():
    rng = np.random.default_rng(0)
    xn = rng.standard_normal((4, 3))
    w1n, w2n = rng.standard_normal((3, 5)), rng.standard_normal((5, 2))
    v1n, v2n = rng.standard_normal((3, 5)), rng.standard_normal((5, 2))
    x = oar.to_tensor(xn)

    def grads(a, b, create):
        w1, w2 = _leaf(a), _leaf(b)
        return (w1, w2), oar.grad(_mlp_loss(w1, w2, x), [w1, w2], create_graph=create)

    (w1, w2), (g1, g2) = grads(w1n, w2n, True)
    gv = (g1 * oar.to_tensor(v1n)).sum() + (g2 * oar.to_tensor(v2n)).sum()
    h1, h2 = oar.grad(gv, [w1, w2])
    # H v by central differences of the gradient along v.
    eps = 1e-6
    (_, _), (p1, p2) = grads(w1n + eps * v1n, w2n + eps * v2n, False)
    (_, _), (m1, m2) = grads(w1n - eps * v1n, w2n - eps * v2n, False)
    np.testing.assert_allclose(h1.numpy(), (p1.numpy() - m1.numpy()) / (2 * eps), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(h2.numpy(), (p2.numpy() - m2.numpy()) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_hook_modifies_grad():
    x = _leaf([1.0, 2.0, 3.0])
    y = x * 3
    seen = []
    y.register_hook(lambda g: (seen.append(g.numpy().copy()), g * 2)[1])
    (y * y).sum().backward()
    np.testing.assert_allclose(seen[0], 2 * 3 * np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * 9 * np.array([1.0, 2.0, 3.0]))


def test_hook_on_leaf():
    x = _leaf([1.0, -2.0])
    x.register_hook(lambda g: g * 0 + 5)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


def test_retain_grads_on_non_leaf():
    x = _leaf([1.0, 2.0])
    y = x * x
    y.retain_grads()
    z = (y * 3).sum()
    z.backward()
    np.testing.assert_allclose(y.grad.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])
    assert not y.is_leaf and x.is_leaf


def test_backward_twice_without_retain_graph_raises():
    x = _leaf([1.0, 2.0])
    y = (oar.exp(x) * x).sum()
    y.backward()
    with pytest.raises(RuntimeError):
        y.backward()


def test_backward_twice_with_retain_graph_accumulates():
    x = _leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_grad_accumulates_over_two_graphs():
    x = _leaf([1.0, 2.0])
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 7.0])
    x.clear_grad()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])


def test_saved_tensor_modified_in_place_raises():
    x = _leaf([0.5, 1.0])
    a = x * 1.0
    b = oar.sin(a)  # saves a
    a.add_(oar.ones([2], dtype="float64"))
    with pytest.raises(RuntimeError, match="in-place|inplace|in place"):
        b.sum().backward()


def test_in_place_on_leaf_requiring_grad_raises():
    x = _leaf([1.0, 2.0])
    with pytest.raises((RuntimeError, ValueError)):
        x.add_(oar.ones([2], dtype="float64"))
    with oar.no_grad():
        x.add_(oar.ones([2], dtype="float64"))  # allowed without recording
    np.testing.assert_allclose(x.numpy(), [2.0, 3.0])


def test_no_grad():
    x = _leaf([1.0, 2.0])
    with oar.no_grad():
        y = x * 2
        assert not oar.is_grad_enabled()
    assert oar.is_grad_enabled()
    assert y.stop_gradient and y.grad_fn is None

    @oar.no_grad()
    def f(t):
        return t * 3
    assert f(x).stop_gradient
    with oar.set_grad_enabled(False):
        assert (x * 2).stop_gradient
    assert not (x * 2).stop_gradient


def test_stop_gradient_semantics():
    a = oar.to_tensor([1.0, 2.0])
    assert a.stop_gradient  # Paddle default: tensors do not require grad
    b = _leaf([3.0, 4.0])
    assert not b.stop_gradient
    c = a * b
    assert not c.stop_gradient
    assert (a * a).stop_gradient
    d = b.detach()
    assert d.stop_gradient
    e = (d * b).sum()
    e.backward()
    np.testing.assert_allclose(b.grad.numpy(), [3.0, 4.0])  # d is a constant
    assert a.grad is None


def test_complex_grad_convention():
    zn = np.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])
    z = oar.to_tensor(zn, stop_gradient=False)
    loss = oar.real(z * oar.conj(z)).sum()
    loss.backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * zn, rtol=1e-12)

    z2 = oar.to_tensor(zn, stop_gradient=False)
    oar.abs(z2).sum().backward()
    np.testing.assert_allclose(z2.grad.numpy(), zn / np.abs(zn), rtol=1e-12)


def test_grad_allow_unused():
    x, y = _leaf([1.0, 2.0]), _leaf([3.0])
    out = (x * x).sum()
    gx, gy = oar.grad(out, [x, y], allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), [2.0, 4.0])
    assert gy is None
    assert x.grad is None  # oar.grad does not touch .grad
    out2 = (x * x).sum()
    with pytest.raises((RuntimeError, ValueError)):
        oar.grad(out2, [x, y])


def test_grad_outputs_and_retain():
    x = _leaf([1.0, 2.0, 3.0])
    y = x * x
    (g,) = oar.grad(y, x, grad_outputs=oar.to_tensor([1.0, 0.5, 0.0], dtype="float64"), retain_graph=True)
    np.testing.assert_allclose(g.numpy(), [2.0, 2.0, 0.0])
    (g,) = oar.grad(y.sum(), x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0, 6.0])


def test_inplace_on_a_view_while_recording_is_refused():
    x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    y = x * 1
    for view in (y[0:1], y.reshape([2, 1]), y.unsqueeze(0)):
        with pytest.raises(NotImplementedError, match=r"^\[oar.multiply_\] in-place modification of a view"):
            view.multiply_(oar.ones(view.shape))
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0])  # nothing was written
    # a view of a tensor that does not require grad, written with a value that does
    base = oar.zeros([3])
    with pytest.raises(NotImplementedError):
        base[0:2].add_(x)
    # without recording, views are written through to the base
    with oar.no_grad():
        w = oar.ones([4])
        w[1:3].multiply_(oar.to_tensor([2.0, 3.0]))
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0, 3.0, 1.0])


def test_hook_handles_remove_hooks():
    x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    h1 = x.register_hook(lambda g: g * 10)
    h2 = x.register_hook(lambda g: g + 1)
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [21.0, 41.0])  # (2x * 10) + 1
    h1.remove()
    h1.remove()  # twice is harmless
    x.clear_grad()
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 5.0])
    h2.remove()
    x.clear_grad()
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    y = x * 3
    hy = y.register_hook(lambda g: g * 0)
    hy.remove()
    x.clear_grad()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    with pytest.raises(TypeError, match=r"^\[oar.Tensor.register_hook\] hook must be callable"):
        x.register_hook(3)


def test_clear_grad_to_zero_reads_zeros_and_next_backward_replaces():
    w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    (w * 3).sum().backward()
    w.clear_grad()
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0])
    (w * 5).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [5.0, 5.0])
    w.clear_grad()  # not read this time: the next backward still starts from zero
    (w * 7).sum().backward()
    (w * 1).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [8.0, 8.0])
    w.clear_grad(set_to_zero=False)
    assert w.grad is None
    w.clear_grad()
    w.grad = oar.to_tensor([4.0, 4.0])  # an assigned gradient is kept, not zeroed
    (w * 1).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [5.0, 5.0])


def test_grad_twice_over_one_graph_without_retain_graph():
    # As in Paddle, oar.grad leaves the graph in place; backward afterwards still runs, once.
    x = _leaf([0.5, -1.0])
    y = oar.exp(x * x).sum()
    want = 2 * np.array([0.5, -1.0]) * np.exp(np.array([0.25, 1.0]))
    for _ in range(2):
        (g,) = oar.grad(y, x, retain_graph=False)
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_parameter_trainable_is_not_stop_gradient():
    lin = oar.nn.Linear(2, 2)
    w = lin.weight
    assert w.trainable and not w.stop_gradient
    w.trainable = False
    assert w.stop_gradient
    w.stop_gradient = False
    assert w.trainable
    w.stop_gradient = True
    assert not w.trainable
    assert not hasattr(oar.ones([2]), "trainable")  # plain tensors are not parameters
    # An optimizer leaves a frozen parameter alone.
    w.trainable = False
    before = w.numpy().copy()
    opt = oar.optimizer.SGD(learning_rate=0.5, parameters=lin.parameters())
    lin(oar.ones([3, 2])).sum().backward()
    opt.step()
    np.testing.assert_array_equal(w.numpy(), before)
    assert not np.allclose(lin.bias.numpy(), 0.0)
