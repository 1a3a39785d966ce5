"""oar.autograd.PyLayer and saved_tensors_hooks, checked against closed-form derivatives."""
import gc

import numpy as np
import pytest

import oar
from oar.autograd import PyLayer, PyLayerContext, saved_tensors_hooks


class Tanh2(PyLayer):
    """Two outputs, a saved output, a non-tensor argument kept on ctx."""

    @staticmethod
    def forward(ctx, x, k=2.0):
        y = oar.tanh(x)
        ctx.save_for_backward(y)
        ctx.k = k
        return y, y * k

    @staticmethod
    def backward(ctx, dy, dz):
        (y,) = ctx.saved_tensor()
        return (dy + ctx.k * dz) * (1 - oar.square(y))


X = np.array([0.5, -1.0, 2.0])


def _leaf(a):
    return oar.to_tensor(np.asarray(a, dtype=np.float64), stop_gradient=False)


def test_forward_backward_with_two_outputs():
    x = _leaf(X)
    a, b = Tanh2.apply(x, k=3.0)
    assert not a.stop_gradient and not b.stop_gradient
    np.testing.assert_allclose(a.numpy(), np.tanh(X), rtol=1e-12)
    (a + b).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4.0 * (1 - np.tanh(X) ** 2), rtol=1e-12)


def test_double_backward_through_a_differentiable_backward():
    # d/dx of g = (1 - tanh^2) is -2 tanh (1 - tanh^2): it flows through the saved output.
    x = _leaf(X)
    a, _ = Tanh2.apply(x)
    (g,) = oar.grad(a.sum(), x, create_graph=True)
    assert not g.stop_gradient
    (g2,) = oar.grad(g.sum(), x)
    t = np.tanh(X)
    np.testing.assert_allclose(g2.numpy(), -2 * t * (1 - t ** 2), rtol=1e-10)


def test_custom_gradient_is_used_not_the_forward_ops():
    class StraightThrough(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return oar.round(x)

        @staticmethod
        def backward(ctx, dy):
            return dy

    x = _leaf([0.2, 1.7])
    (StraightThrough.apply(x) * oar.to_tensor([2.0, 3.0], dtype="float64")).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 3.0])


def test_inputs_without_grad_non_tensor_args_and_none_gradients():
    class Mul(PyLayer):
        @staticmethod
        def forward(ctx, x, w, scale):
            ctx.save_for_backward(x, w)
            ctx.scale = scale
            return x * w * scale

        @staticmethod
        def backward(ctx, dy):
            x, w = ctx.saved_tensor()
            return dy * w * ctx.scale, None

    x, w = _leaf([1.0, 2.0]), oar.to_tensor([3.0, 4.0], dtype="float64")
    Mul.apply(x, w, 0.5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.5, 2.0])
    # No input requires grad: a plain forward, nothing recorded.
    out = Mul.apply(w, w, 1.0)
    assert out.stop_gradient


def test_non_differentiable_output_and_materialized_grads():
    seen = []

    class ArgmaxAndValue(PyLayer):
        @staticmethod
        def forward(ctx, x):
            idx = oar.argmax(x)
            y = x * 2
            ctx.mark_non_differentiable(idx)
            return y, idx

        @staticmethod
        def backward(ctx, dy):
            seen.append(dy.numpy().tolist())
            return dy * 2

    x = _leaf([1.0, 5.0])
    y, idx = ArgmaxAndValue.apply(x)
    assert idx.stop_gradient and not y.stop_gradient
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])

    class TwoOut(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 1, x * 1

        @staticmethod
        def backward(ctx, da, db):
            seen.append(None if db is None else db.numpy().tolist())
            return da

    x = _leaf([1.0, 5.0])
    a, _ = TwoOut.apply(x)
    a.sum().backward()
    assert seen[-1] == [0.0, 0.0]  # the unused output's gradient is materialized as zeros


def test_returning_an_input_unchanged_keeps_the_input_a_leaf():
    class Ident(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, dy):
            return dy * 5

    x = _leaf([1.0, 2.0])
    y = Ident.apply(x)
    assert y is not x and x.grad is None
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])


def test_errors_name_the_api():
    class Bad(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, dy):
            return dy, dy

    x = _leaf([1.0])
    with pytest.raises(ValueError, match=r"^\[oar.autograd.PyLayer\] Bad.backward returned 2 gradient"):
        Bad.apply(x).sum().backward()

    class WrongShape(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, dy):
            return oar.ones([3], dtype="float64")

    with pytest.raises(ValueError, match=r"^\[oar.autograd.PyLayer\] WrongShape.backward gradient 0 has shape"):
        WrongShape.apply(_leaf([1.0])).sum().backward()

    class NoBackward(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x

    with pytest.raises(NotImplementedError, match=r"^\[NoBackward.apply\]"):
        NoBackward.apply(x)
    with pytest.raises(RuntimeError, match=r"^\[oar.autograd.PyLayerContext.saved_tensor\]"):
        PyLayerContext().saved_tensor()
    with pytest.raises(TypeError, match=r"^\[oar.autograd.PyLayerContext.save_for_backward\]"):
        PyLayerContext().save_for_backward([1.0])
    # A second backward through a freed graph says so.
    y = Tanh2.apply(_leaf(X))[0].sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_graph_is_freed_with_its_tensors():
    import weakref
    x = _leaf(X)
    ctxs = []

    class Keep(PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctxs.append(weakref.ref(ctx))
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, dy):
            return dy * 2

    y = Keep.apply(x)
    del y
    gc.collect()
    assert ctxs[0]() is None


def test_saved_tensors_hooks_see_every_saved_tensor():
    packed, unpacked = [], []

    def pack(t):
        packed.append(tuple(t.shape))
        return t.numpy().copy()

    def unpack(a):
        unpacked.append(a.shape)
        return oar.to_tensor(a)

    x = _leaf(X)
    with saved_tensors_hooks(pack, unpack):
        y = (oar.exp(x) * x).sum()
    n = len(packed)
    assert n >= 2
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(X) * (1 + X), rtol=1e-12)
    assert len(unpacked) == n
    # Outside the block nothing is packed.
    (oar.exp(_leaf(X)) * 2).sum().backward()
    assert len(packed) == n


def test_saved_tensors_hooks_identity_keeps_double_backward():
    x = _leaf(X)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = (x * x * x).sum()
    (g,) = oar.grad(y, x, create_graph=True)
    (g2,) = oar.grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), 6 * X, rtol=1e-12)


def test_saved_tensors_hooks_errors():
    with pytest.raises(TypeError, match=r"^\[oar.autograd.saved_tensors_hooks\] pack_hook must be callable"):
        saved_tensors_hooks(1, lambda t: t)
    x = _leaf(X)
    with saved_tensors_hooks(lambda t: t, lambda t: "not a tensor"):
        y = oar.exp(x).sum()
    with pytest.raises(TypeError, match=r"unpack_hook must return a Tensor"):
        y.backward()


# ---------------------------------------------------------------- under to_static (Note [PyLayer in programs])

class ScaledTanhGrad(PyLayer):
    """tanh forward with a deliberately different backward (10x the true
    gradient), saving an intermediate that is neither input nor output."""

    @staticmethod
    def forward(ctx, x):
        t = oar.tanh(x)
        one_minus = 1 - t * t
        ctx.save_for_backward(one_minus)
        return t * 1

    @staticmethod
    def backward(ctx, dy):
        (one_minus,) = ctx.saved_tensor()
        return dy * one_minus * 10.0


class _Net(oar.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = oar.nn.Linear(3, 2)

    def forward(self, x):
        return ScaledTanhGrad.apply(self.fc(x))


def _net_and_input():
    oar.seed(7)
    net = _Net()
    x = oar.to_tensor((np.arange(12).reshape(4, 3) / 10 - 0.5).astype(np.float32))
    return net, x


def _closed_form_weight_grad(net, x):
    w, b = net.fc.weight.numpy().astype(np.float64), net.fc.bias.numpy().astype(np.float64)
    xs = x.numpy().astype(np.float64)
    z = xs @ w + b
    dz = 10.0 * (1 - np.tanh(z) ** 2)  # d(sum y)/dz by the custom backward
    return xs.T @ dz


def test_to_static_trains_with_the_custom_backward():
    net, x = _net_and_input()
    want = _closed_form_weight_grad(net, x)
    snet = oar.jit.to_static(net)
    for _ in range(2):  # the trace, then the cached program
        y = snet(x)
        np.testing.assert_allclose(y.numpy(), np.tanh(x.numpy() @ net.fc.weight.numpy() + net.fc.bias.numpy()),
                                   rtol=1e-5, atol=1e-6)
        y.sum().backward()
        np.testing.assert_allclose(net.fc.weight.grad.numpy(), want, rtol=1e-4, atol=1e-5)
        net.clear_gradients()
    # It trained through split forward and backward programs, the backward holding the Python backward's ops.
    splits = [s for p in snet.forward.program_cache.concrete_programs()
              for s in p.__dict__.get("_oar_split", {}).values()]
    assert splits and all(s is not None for s in splits)


def test_to_static_program_holds_one_py_layer_op():
    net, x = _net_and_input()
    prog, _ = oar._ir.trace(lambda t: ScaledTanhGrad.apply(t), [x])
    text = str(prog)
    assert "py_layer" in text and "tanh" in text
    prog.verify()
    np.testing.assert_allclose(prog.run(x).numpy(), np.tanh(x.numpy()), rtol=1e-6)


def test_saved_program_runs_the_forward_region_where_the_call_is_unknown(tmp_path):
    # In another process (or the C++ runtime) the token is unknown and the
    # region (the forward's own ops) runs; here the runner is taken away to see it.
    net, x = _net_and_input()
    want = net(x).numpy()
    oar.jit.save(oar.jit.to_static(net), str(tmp_path / "m"), input_spec=[oar.static.InputSpec([None, 3], "float32")])
    oar._C._set_py_layer_runner(None)
    try:
        loaded = oar.jit.load(str(tmp_path / "m"))
        np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-5, atol=1e-6)
    finally:
        oar._C._set_py_layer_runner(oar.autograd._run_traced_call)


def test_to_static_double_backward_and_static_mode():
    class Cube(PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensor()
            return dy * 3 * x * x

    f = oar.jit.to_static(lambda t: Cube.apply(t))
    x = _leaf([1.0, 2.0])
    for _ in range(2):
        (g,) = oar.grad(f(x).sum(), x, create_graph=True)
        (g2,) = oar.grad(g.sum(), x)
        np.testing.assert_allclose(g.numpy(), [3.0, 12.0])
        np.testing.assert_allclose(g2.numpy(), [6.0, 12.0])
    oar.enable_static()
    try:
        main = oar.static.Program()
        with oar.static.program_guard(main):
            xd = oar.static.data("x", [None, 2], "float32")
            xd.stop_gradient = False
            out = Cube.apply(xd)
            (gx,) = oar.static.gradients([out.sum()], [xd])
        got = oar.static.Executor().run(main, feed={"x": np.array([[1.0, -2.0]], np.float32)}, fetch_list=[out, gx])
    finally:
        oar.disable_static()
    np.testing.assert_allclose(got[0], [[1.0, -8.0]])
    np.testing.assert_allclose(got[1], [[3.0, 12.0]])
