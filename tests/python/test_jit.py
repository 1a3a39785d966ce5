"""oar.jit.to_static and oar.static.InputSpec: capture, caching with guards, errors.

Numerics are checked against NumPy computed from the layer weights as well as
against the eager output.
"""
import copy
import warnings

import numpy as np
import pytest

import oar
from nets import MLP
from oar import nn
from oar.jit import Dy2StaticError, StaticFunction
from oar.static import InputSpec

RNG = np.random.default_rng(7)


class DecoratedMLP(MLP):
    @oar.jit.to_static(input_spec=[InputSpec([None, 4], "float32", name="x")], full_graph=True)
    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def np_mlp(net, x):
    w1, b1 = net.fc1.weight.numpy(), net.fc1.bias.numpy()
    w2, b2 = net.fc2.weight.numpy(), net.fc2.bias.numpy()
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def check_mlp(net, static_net, x):
    got = static_net(oar.to_tensor(x)).numpy()
    np.testing.assert_allclose(got, np_mlp(net, x), rtol=1e-5, atol=1e-5)
    return got


@pytest.fixture(autouse=True)
def _conversion_on():
    yield
    oar.jit.enable_to_static(True)


# ---------------------------------------------------------------- forms and results


def test_function_decorator_forms():
    x = rand(3, 4)

    @oar.jit.to_static(full_graph=True)
    def f(a, b):
        return oar.tanh(a) * b + 1.0

    @oar.jit.to_static(input_spec=[InputSpec([None, 4]), InputSpec([None, 4])], full_graph=True)
    def g(a, b):
        return oar.tanh(a) * b + 1.0

    h = oar.jit.to_static(lambda a, b: oar.tanh(a) * b + 1.0, full_graph=True)
    want = np.tanh(x) * x + 1.0
    for fn in (f, g, h):
        assert isinstance(fn, StaticFunction)
        np.testing.assert_allclose(fn(oar.to_tensor(x), oar.to_tensor(x)).numpy(), want, rtol=1e-5, atol=1e-6)
        assert len(fn.program_cache) == 1
        fn.concrete_program.verify()
    assert f.__name__ == "f"
    assert f.rollback() is f.dygraph_function


def test_layer_call_form_matches_eager_and_numpy():
    net = MLP()
    x = rand(5, 4)
    eager = net(oar.to_tensor(x)).numpy()
    static = oar.jit.to_static(net, input_spec=[InputSpec([None, 4])], full_graph=True)
    assert static is net and isinstance(net.forward, StaticFunction)
    got = check_mlp(net, net, x)
    np.testing.assert_allclose(got, eager, rtol=1e-6, atol=1e-6)
    prog = net.forward.concrete_program
    assert prog.parameters == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert prog.input_types == [("float32", [-1, 4])]
    # rollback gives the eager forward back.
    net.forward.rollback()
    assert not isinstance(net.forward, StaticFunction)
    np.testing.assert_allclose(net(oar.to_tensor(x)).numpy(), eager, rtol=1e-6, atol=1e-6)


def test_decorated_forward_has_one_cache_per_instance():
    a, b = DecoratedMLP(), DecoratedMLP()
    x = rand(2, 4)
    check_mlp(a, a, x)
    check_mlp(b, b, x)
    check_mlp(a, a, rand(6, 4))
    assert len(a.forward.program_cache) == 1 and len(b.forward.program_cache) == 1
    assert a.forward is not b.forward
    # A deep copy has its own weights and its own (empty) cache.
    c = copy.deepcopy(a)
    assert len(c.forward.program_cache) == 0
    c.fc1.weight.set_value(rand(4, 8))
    check_mlp(c, c, x)
    check_mlp(a, a, x)
    # rollback on a decorated class shadows the class attribute with the eager forward.
    a.forward.rollback()
    assert not isinstance(a.forward, StaticFunction)
    check_mlp(a, a, x)


def test_layer_call_hooks_still_run():
    net = oar.jit.to_static(MLP(), full_graph=True)
    net.register_forward_post_hook(lambda layer, inp, out: out * 2.0)
    x = rand(2, 4)
    np.testing.assert_allclose(net(oar.to_tensor(x)).numpy(), 2.0 * np_mlp(net, x), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- caching and guards


def test_dynamic_batch_reuses_the_program():
    net = oar.jit.to_static(MLP(), input_spec=[InputSpec([None, 4])], full_graph=True)
    for batch in (3, 7, 1, 0):
        x = rand(batch, 4)
        assert list(net(oar.to_tensor(x)).shape) == [batch, 3]
        if batch:
            check_mlp(net, net, x)
    assert len(net.forward.program_cache) == 1


def test_static_batch_retraces():
    net = oar.jit.to_static(MLP(), full_graph=True)
    check_mlp(net, net, rand(3, 4))
    check_mlp(net, net, rand(3, 4))
    assert len(net.forward.program_cache) == 1
    check_mlp(net, net, rand(5, 4))
    assert len(net.forward.program_cache) == 2
    assert net.forward.concrete_program.input_types == [("float32", [5, 4])]


def test_dtype_and_python_arguments_are_part_of_the_key():
    @oar.jit.to_static(input_spec=[InputSpec([-1])], full_graph=True)
    def f(x, k=2, mode="mul"):
        return x * float(k) if mode == "mul" else x + float(k)

    x = np.array([1.0, 2.0], np.float32)
    assert f(oar.to_tensor(x)).numpy().tolist() == [2.0, 4.0]
    assert f(oar.to_tensor(x), 3).numpy().tolist() == [3.0, 6.0]
    assert f(oar.to_tensor(x), k=3, mode="add").numpy().tolist() == [4.0, 5.0]
    assert f(oar.to_tensor(x.astype(np.float64))).dtype == oar.float64
    assert len(f.program_cache) == 4
    assert f(oar.to_tensor([5.0, 6.0, 7.0]), 3).numpy().tolist() == [15.0, 18.0, 21.0]
    assert len(f.program_cache) == 4


def test_one_tensor_passed_twice_is_not_confused_with_two():
    f = oar.jit.to_static(lambda a, b: a * b + a, full_graph=True)
    x = np.array([1.0, 2.0], np.float32)
    y = np.array([3.0, 4.0], np.float32)
    xt = oar.to_tensor(x)
    np.testing.assert_allclose(f(xt, xt).numpy(), x * x + x)
    np.testing.assert_allclose(f(xt, oar.to_tensor(y)).numpy(), x * y + x)
    np.testing.assert_allclose(f(oar.to_tensor(y), xt).numpy(), y * x + y)
    assert len(f.program_cache) == 2
    z = oar.to_tensor(np.concatenate([x, y]))
    np.testing.assert_allclose(f(z[0:2], z[2:4]).numpy(), x * y + x)  # two views of one storage


def test_training_flag_change_retraces():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(x)

    net = oar.jit.to_static(Net(), input_spec=[InputSpec([None, 64])], full_graph=True)
    x = np.ones((4, 64), np.float32)
    train_out = net(oar.to_tensor(x)).numpy()
    assert set(np.unique(train_out)) <= {0.0, 2.0} and (train_out == 0).any()
    net.eval()
    np.testing.assert_array_equal(net(oar.to_tensor(x)).numpy(), x)
    assert len(net.forward.program_cache) == 2
    net.train()
    net(oar.to_tensor(x))
    assert len(net.forward.program_cache) == 2  # back to the first program


def test_batch_norm_normalises_and_updates_statistics_like_eager():
    bn = nn.BatchNorm1D(2, momentum=0.5)
    sbn = oar.jit.to_static(copy.deepcopy(bn), input_spec=[InputSpec([None, 2])], full_graph=True)
    x = rand(4, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the statistics update is captured: no warning
        got = sbn(oar.to_tensor(x)).numpy()
    want = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got, bn(oar.to_tensor(x)).numpy(), rtol=1e-5, atol=1e-5)
    # The running-statistics update is a state update of the program: each
    # call applies it once, as eager does (the trace's own update is undone).
    np.testing.assert_allclose(sbn._mean.numpy(), 0.5 * x.mean(0), rtol=1e-5, atol=1e-6)
    x2 = rand(6, 2)
    np.testing.assert_allclose(sbn(oar.to_tensor(x2)).numpy(), bn(oar.to_tensor(x2)).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sbn._mean.numpy(), bn._mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sbn._variance.numpy(), bn._variance.numpy(), rtol=1e-5, atol=1e-6)
    # Evaluation mode normalises with the running statistics, as eager does, and leaves them alone.
    bn.eval()
    sbn.eval()
    mean = sbn._mean.numpy().copy()
    np.testing.assert_allclose(sbn(oar.to_tensor(x2)).numpy(), bn(oar.to_tensor(x2)).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(sbn._mean.numpy(), mean)
    assert len(sbn.forward.program_cache) == 2


def test_weight_updates_are_seen_without_retracing():
    net = oar.jit.to_static(MLP(), input_spec=[InputSpec([None, 4])], full_graph=True)
    opt = oar.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    x = rand(6, 4)
    before = check_mlp(net, net, x)
    loss = (net(oar.to_tensor(x)) ** 2).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    after = check_mlp(net, net, x)  # NumPy from the updated weights
    assert not np.allclose(before, after)
    net.fc2.bias.set_value(np.full(3, 10.0, np.float32))
    check_mlp(net, net, x)
    assert len(net.forward.program_cache) == 1


def test_gradients_equal_eager():
    net = MLP()
    static = oar.jit.to_static(copy.deepcopy(net), input_spec=[InputSpec([None, 4])], full_graph=True)
    x, g = rand(5, 4), rand(5, 3)
    grads = []
    for model in (net, static, static):  # the second static call runs the cached program
        model.clear_gradients()
        xt = oar.to_tensor(x, stop_gradient=False)
        out = model(xt)
        assert not out.stop_gradient
        (out * oar.to_tensor(g)).sum().backward()
        grads.append([xt.grad.numpy()] + [p.grad.numpy() for p in model.parameters()])
    # NumPy reference for d/dx.
    w1, b1, w2 = net.fc1.weight.numpy(), net.fc1.bias.numpy(), net.fc2.weight.numpy()
    dx = ((g @ w2.T) * (x @ w1 + b1 > 0)) @ w1.T
    np.testing.assert_allclose(grads[0][0], dx, rtol=1e-4, atol=1e-5)
    for got in grads[1:]:
        for a, b in zip(got, grads[0]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_training_runs_a_captured_backward_program():
    class Partly(nn.Layer):
        def __init__(self):
            super().__init__()
            self.used = nn.Linear(3, 2)
            self.unused = nn.Linear(3, 2)

        def forward(self, x):
            return oar.tanh(self.used(x))

    net = oar.jit.to_static(Partly(), full_graph=True)
    x = rand(4, 3)
    xt = oar.to_tensor(x, stop_gradient=False)
    y = net(xt)
    (y * y).sum().backward(retain_graph=True)
    program = net.forward.concrete_program
    (split,) = program._oar_split.values()
    assert split is not None and "tanh" not in str(split.backward)  # the backward reads the saved tanh output
    w, b = net.used.weight.numpy(), net.used.bias.numpy()
    t = np.tanh(x @ w + b)
    g = 2 * t * (1 - t ** 2)
    np.testing.assert_allclose(net.used.weight.grad.numpy(), x.T @ g, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.used.bias.grad.numpy(), g.sum(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xt.grad.numpy(), g @ w.T, rtol=1e-5, atol=1e-6)
    assert net.unused.weight.grad is None  # as in eager mode: a parameter the output does not read gets no grad
    (y * y).sum().backward()  # retained: a second backward accumulates
    np.testing.assert_allclose(net.used.bias.grad.numpy(), 2 * g.sum(0), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match=r"^\[oar.jit.to_static\] trying to backward through a to_static call"):
        (y * y).sum().backward()

    # A gradient of the gradient (create_graph=True) reruns the forward with autograd: any order, as eager.
    def second(model):
        xv = oar.to_tensor(x.astype(np.float64), stop_gradient=False)
        (gx,) = oar.grad((model(xv) ** 2).sum(), [xv], create_graph=True)
        ggx, ggw = oar.grad((gx * gx).sum(), [xv, model.used.weight])
        return gx.numpy(), ggx.numpy(), ggw.numpy()

    eager = copy.deepcopy(net)
    eager.forward.rollback()
    net.to(dtype="float64")
    eager.to(dtype="float64")
    for got, want in zip(second(net), second(eager)):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_training_under_autocast_matches_eager():
    net = MLP()
    static_net = oar.jit.to_static(copy.deepcopy(net), input_spec=[InputSpec([None, 4])], full_graph=True)
    x = rand(5, 4)
    grads = []
    for model in (net, static_net, static_net):
        model.clear_gradients()
        with oar.amp.auto_cast(dtype="bfloat16"):
            out = model(oar.to_tensor(x))
        assert out.dtype == oar.bfloat16
        out.astype("float32").sum().backward()
        grads.append([p.grad.numpy() for p in model.parameters()])
    for got in grads[1:]:
        for a, b in zip(got, grads[0]):
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_control_flow_trains_with_eager_autograd_over_the_program():
    lin = nn.Linear(2, 2)

    def f(x):
        h = lin(x)
        return oar.static.nn.cond(h.sum() > 0, lambda: h * 2.0, lambda: h * -3.0)

    static_f = oar.jit.to_static(f, full_graph=True)
    for sign in (1.0, -1.0):
        x = sign * np.abs(rand(3, 2)) * 10
        grads = []
        for fn in (f, static_f):
            lin.clear_gradients()
            fn(oar.to_tensor(x)).sum().backward()
            grads.append(lin.weight.grad.numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def test_enable_to_static_false_runs_eagerly():
    calls = []

    @oar.jit.to_static(full_graph=True)
    def f(x):
        calls.append(1)
        return x * 2.0

    oar.jit.enable_to_static(False)
    assert f(oar.to_tensor([1.0])).numpy().tolist() == [2.0]
    assert f(oar.to_tensor([1.0])).numpy().tolist() == [2.0]
    assert len(calls) == 2 and len(f.program_cache) == 0
    oar.jit.enable_to_static(True)
    f(oar.to_tensor([1.0]))
    f(oar.to_tensor([3.0]))
    assert len(calls) == 3 and len(f.program_cache) == 1  # traced once, then the program runs
    with pytest.raises(TypeError, match=r"\[oar.jit.enable_to_static\]"):
        oar.jit.enable_to_static(1)


def test_not_to_static_and_nesting():
    @oar.jit.not_to_static
    def helper(x):
        return x + 1.0

    inner = oar.jit.to_static(MLP(), full_graph=True)

    @oar.jit.to_static(full_graph=True)
    def outer(x):
        return helper(inner(x))

    x = rand(2, 4)
    np.testing.assert_allclose(outer(oar.to_tensor(x)).numpy(), np_mlp(inner, x) + 1.0, rtol=1e-5, atol=1e-5)
    assert len(inner.forward.program_cache) == 0  # ran inside the outer trace
    calls = []

    def counted(x):
        calls.append(1)
        return x * 2.0

    s = oar.jit.to_static(oar.jit.not_to_static(counted), full_graph=True)
    s(oar.ones([1]))
    s(oar.ones([1]))
    assert len(calls) == 2 and len(s.program_cache) == 0
    oar.jit.ignore_module([np])
    with pytest.raises(TypeError, match=r"\[oar.jit.ignore_module\]"):
        oar.jit.ignore_module(["numpy"])


def test_shape_dependent_reshape_warns_and_retraces():
    @oar.jit.to_static(input_spec=[InputSpec([None, 4])], full_graph=True)
    def f(x):
        return x.reshape([x.shape[0], 2, 2]) * 2.0

    with pytest.warns(UserWarning, match=r"\[oar.jit.to_static\] .*fixed"):
        f(oar.ones([3, 4]))
    x = rand(5, 4)
    np.testing.assert_allclose(f(oar.to_tensor(x)).numpy(), x.reshape(5, 2, 2) * 2.0, rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(oar.ones([3, 4]))
    assert len(f.program_cache) == 2


def test_nested_list_arguments_and_outputs():
    @oar.jit.to_static(input_spec=[[InputSpec([None, 2]), InputSpec([None, 2])]], full_graph=True)
    def f(xs, alpha=1.0):
        return xs[0] + xs[1] * alpha, xs[0] - xs[1]

    a, b = rand(3, 2), rand(3, 2)
    s, d = f([oar.to_tensor(a), oar.to_tensor(b)])
    np.testing.assert_allclose(s.numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose(d.numpy(), a - b, rtol=1e-6)
    f([oar.ones([5, 2]), oar.ones([5, 2])])
    assert len(f.program_cache) == 1
    with pytest.raises(ValueError, match=r"argument 'xs' has 3 items"):
        f([oar.ones([5, 2])] * 3)


def test_concrete_program_from_input_spec_before_any_call():
    net = oar.jit.to_static(MLP(), input_spec=[InputSpec([None, 4])], full_graph=True)
    prog = net.forward.concrete_program
    assert prog.input_types == [("float32", [-1, 4])]
    check_mlp(net, net, rand(9, 4))
    assert len(net.forward.program_cache) == 1
    with pytest.raises(ValueError, match=r"\[oar.jit.to_static\] .*needs a call first"):
        oar.jit.to_static(lambda x: x, full_graph=True).concrete_program


# ---------------------------------------------------------------- errors


def test_bool_of_tensor_names_this_file_and_line():
    # `if tensor:` converts (tests/python/test_dy2static.py); bool() called
    # directly is Python reading the tensor's value, which tracing cannot keep.
    @oar.jit.to_static(full_graph=True)
    def f(x):
        flag = bool(x.sum() > 0)  # the line the error must name
        return x * 2.0 if flag else x

    line = f.dygraph_function.__code__.co_firstlineno + 2
    with pytest.raises(Dy2StaticError) as info:
        f(oar.ones([2]))
    msg = str(info.value)
    assert isinstance(info.value, TypeError)
    assert msg.startswith("[oar.jit.to_static] bool() of a Tensor")
    assert f'test_jit.py", line {line}, in f' in msg
    assert "flag = bool(x.sum() > 0)" in msg
    assert "oar.static.nn.cond" in msg and "while_loop" in msg
    # Nothing is left half-traced: eager code records autograd again.
    assert not oar._C._ir_is_tracing()
    x = oar.to_tensor([1.0], stop_gradient=False)
    assert not (x * 2.0).stop_gradient
    assert bool(oar.to_tensor([1.0])) is True


@pytest.mark.parametrize("use", [
    lambda t: t.item(), lambda t: t.numpy(), lambda t: int(t), lambda t: float(t), lambda t: t.tolist(),
    lambda t: np.asarray(t),
])
def test_python_values_of_tensors_are_rejected(use):
    @oar.jit.to_static(full_graph=True)
    def f(x):
        s = x.sum()
        return x * use(s)

    with pytest.raises(Dy2StaticError, match=r"(?s)^\[oar.jit.to_static\] .*test_jit.py.*Compute on tensors"):
        f(oar.ones([1]))
    # Outside a trace, and in plain _ir.trace, the methods behave as before.
    t = oar.to_tensor([2.0])
    assert t.item() == 2.0 and int(t) == 2 and float(t) == 2.0 and t.tolist() == [2.0]
    prog, out = oar._ir.trace(lambda x: x * x.sum().item(), [oar.to_tensor([3.0])])
    assert out.numpy().tolist() == [9.0]


def test_printing_inside_a_trace_is_allowed(capsys):
    @oar.jit.to_static(full_graph=True)
    def f(x):
        print(x)
        return x + 1.0

    assert f(oar.to_tensor([1.0])).numpy().tolist() == [2.0]
    assert "Tensor(shape=[1]" in capsys.readouterr().out


def test_input_spec_mismatch():
    net = oar.jit.to_static(MLP(), input_spec=[InputSpec([None, 4], name="x")], full_graph=True)
    with pytest.raises(ValueError, match=r"^\[oar.jit.to_static\] argument 'x' expects shape \[-1, 4\] .*"
                                         r"got shape \[2, 5\]"):
        net(oar.ones([2, 5]))
    with pytest.raises(ValueError, match=r"argument 'x' expects shape \[-1, 4\] .*got shape \[4\]"):
        net(oar.ones([4]))
    with pytest.raises(ValueError, match=r"argument 'x' expects a Tensor"):
        net(3.0)
    f = oar.jit.to_static(lambda a: a, input_spec=[InputSpec([2]), InputSpec([2])], full_graph=True)
    with pytest.raises(ValueError, match=r"input_spec has 2 entries"):
        f(oar.ones([2]))
    with pytest.raises(TypeError, match=r"\[oar.jit.to_static\] .*missing"):
        net()
    with pytest.raises(TypeError, match=r"\[oar.jit.to_static\] input_spec must be a list"):
        oar.jit.to_static(lambda a: a, input_spec="x", full_graph=True)
    assert len(net.forward.program_cache) == 0


def test_trace_errors_propagate_with_a_note():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        raise KeyError("user")

    with pytest.raises(KeyError) as info:
        f(oar.ones([1]))
    assert any("[oar.jit.to_static] raised while tracing" in n for n in info.value.__notes__)
    assert not oar._C._ir_is_tracing()


# ---------------------------------------------------------------- InputSpec


def test_input_spec():
    s = InputSpec([None, 784], "float32", "x")
    assert s.shape == (-1, 784) and s.dtype == oar.float32 and s.name == "x" and not s.stop_gradient
    assert repr(s) == "InputSpec(shape=(-1, 784), dtype=paddle.float32, name=x, stop_gradient=False)"
    assert s == InputSpec((-1, 784), oar.float32, "x")
    assert s != InputSpec((-1, 784), oar.float32, "y")
    assert s != InputSpec((-1, 784), "float64", "x")
    assert hash(s) == hash(InputSpec((-1, 784), "float32", "y"))  # the name is not hashed
    assert len({s, InputSpec([-1, 784], name="x")}) == 1
    assert InputSpec([3], np.int64).dtype == oar.int64
    b = InputSpec([784]).batch(16)
    assert b.shape == (16, 784)
    assert InputSpec([784]).batch([None]).shape == (-1, 784)
    assert b.unbatch().shape == (784,)
    t = oar.ones([2, 3], dtype="float64")
    assert InputSpec.from_tensor(t, name="t") == InputSpec([2, 3], "float64", "t")
    assert InputSpec.from_numpy(np.zeros((4,), np.int32)).shape == (4,)
    with pytest.raises(ValueError, match=r"\[oar.static.InputSpec\] shape\[1\]"):
        InputSpec([2, -3])
    with pytest.raises(ValueError, match=r"\[oar.static.InputSpec\] shape\[0\]"):
        InputSpec([2.5])
    with pytest.raises(TypeError, match=r"\[oar.static.InputSpec\] shape must be"):
        InputSpec("2")
    with pytest.raises(TypeError, match=r"\[oar.static.InputSpec\] dtype"):
        InputSpec([2], "float99")
    with pytest.raises(ValueError, match=r"\[oar.static.InputSpec.unbatch\]"):
        InputSpec([]).unbatch()
    with pytest.raises(ValueError, match=r"\[oar.static.InputSpec.batch\]"):
        InputSpec([2]).batch([1, 2])


def test_build_strategy_runs_the_fusions_and_keeps_results():
    bs = oar.static.BuildStrategy()
    net = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3))
    eager = copy.deepcopy(net)
    snet = oar.jit.to_static(net, input_spec=[InputSpec([None, 4])], build_strategy=bs, full_graph=True)
    x = rand(5, 4)
    got = snet(oar.to_tensor(x)).numpy()
    text = str(snet.forward.concrete_program)
    assert "fused_linear_act" in text and "gelu(" not in text
    np.testing.assert_allclose(got, eager(oar.to_tensor(x)).numpy(), rtol=1e-5, atol=1e-6)
