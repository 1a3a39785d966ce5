"""The Paddle static-graph API on oar's IR (issue 4 §7): enable_static, Program,
program_guard, data, Executor.run, append_backward, gradients, minimize.

Numerics are checked against NumPy and against the same steps run eagerly.
"""
import copy

import numpy as np
import pytest

import oar
from oar import static
from oar.nn import functional as F

RNG = np.random.default_rng(5)


@pytest.fixture
def static_mode():
    oar.enable_static()
    try:
        yield
    finally:
        oar.disable_static()


def regression_data(n=16, d=5):
    x = RNG.standard_normal((n, d)).astype(np.float32)
    w = RNG.standard_normal((d, 1)).astype(np.float32)
    return x, (x @ w + 0.5).astype(np.float32)


class Net(oar.nn.Layer):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1 = oar.nn.Linear(d, hidden)
        self.fc2 = oar.nn.Linear(hidden, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def eager_curve(net, make_opt, x, y, steps):
    opt = make_opt(net.parameters())
    losses = []
    for _ in range(steps):
        loss = F.mse_loss(net(oar.to_tensor(x)), oar.to_tensor(y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss.numpy()))
    return np.array(losses)


def test_mode_switches():
    assert oar.in_dynamic_mode()
    oar.enable_static()
    try:
        assert not oar.in_dynamic_mode()
    finally:
        oar.disable_static()
    assert oar.in_dynamic_mode()


@pytest.mark.parametrize("opt", ["sgd", "momentum", "adamw"])
def test_fit_a_line_converges_and_matches_eager(opt):
    makers = {
        "sgd": lambda ps: oar.optimizer.SGD(learning_rate=0.05, parameters=ps),
        "momentum": lambda ps: oar.optimizer.Momentum(learning_rate=0.02, momentum=0.9, parameters=ps),
        "adamw": lambda ps: oar.optimizer.AdamW(learning_rate=0.02, parameters=ps),
    }
    x_np, y_np = regression_data()
    oar.seed(3)
    eager_net = Net(5, 8)
    state = {k: v.numpy().copy() for k, v in eager_net.state_dict().items()}

    oar.enable_static()
    try:
        main, startup = static.Program(), static.Program()
        with static.program_guard(main, startup):
            x = static.data("x", [None, 5], "float32")
            y = static.data("y", [None, 1], "float32")
            net = Net(5, 8)
            net.set_state_dict({k: oar.to_tensor(v) for k, v in state.items()})
            loss = F.mse_loss(net(x), y)
            # Paddle's static style: the optimizer takes its parameters from the loss.
            makers[opt](None).minimize(loss)
        exe = static.Executor()
        assert exe.run(startup) == []
        curve = np.array([float(exe.run(main, feed={"x": x_np, "y": y_np}, fetch_list=[loss])[0])
                          for _ in range(20)])
    finally:
        oar.disable_static()
    expected = eager_curve(eager_net, makers[opt], x_np, y_np, 20)
    np.testing.assert_allclose(curve, expected, rtol=1e-5)
    assert curve[-1] < 0.5 * curve[0], curve
    # The static run updated the parameters held by the layer, outside the program.
    for name, p in net.state_dict().items():
        np.testing.assert_allclose(p.numpy(), eager_net.state_dict()[name].numpy(), rtol=1e-4, atol=1e-6)


def test_append_backward_gradients_equal_numpy(static_mode):
    x_np, y_np = regression_data(6, 3)
    x = static.data("x", [None, 3], "float32")
    y = static.data("y", [None, 1], "float32")
    lin = oar.nn.Linear(3, 1)
    pred = lin(x)
    loss = ((pred - y) ** 2).mean()
    pairs = static.append_backward(loss)
    assert [p is q for (p, _), q in zip(pairs, [lin.weight, lin.bias])] == [True, True]
    exe = static.Executor()
    w, b = lin.weight.numpy(), lin.bias.numpy()
    got_loss, gw, gb = exe.run(feed={"x": x_np, "y": y_np}, fetch_list=[loss, pairs[0][1], pairs[1][1]])
    r = x_np @ w + b - y_np
    np.testing.assert_allclose(got_loss, (r ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(gw, 2 * x_np.T @ r / len(r), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb, 2 * r.sum(0) / len(r), rtol=1e-5, atol=1e-6)
    # append_backward alone does not train.
    np.testing.assert_array_equal(lin.weight.numpy(), w)
    # A different batch size: the gradient program is made again for the new feed shapes.
    x2, y2 = regression_data(9, 3)
    (gw2,) = exe.run(feed={"x": x2, "y": y2[:, :1]}, fetch_list=[pairs[0][1]])
    r2 = x2 @ w + b - y2[:, :1]
    np.testing.assert_allclose(gw2, 2 * x2.T @ r2 / len(r2), rtol=1e-5, atol=1e-6)


def test_gradients_with_respect_to_data(static_mode):
    x = static.data("x", [None, 2], "float64")
    y = (oar.sin(x) * x).sum()
    (gx,) = static.gradients([y], [x])
    v = RNG.standard_normal((4, 2))
    (got,) = static.Executor().run(feed={"x": v}, fetch_list=[gx])
    np.testing.assert_allclose(got, np.cos(v) * v + np.sin(v), rtol=1e-12)


def test_fetch_intermediate_and_other_batch_sizes(static_mode):
    x = static.data("x", [None, 4], "float32")
    lin = oar.nn.Linear(4, 3)
    hidden = F.relu(lin(x))
    out = hidden.sum(axis=1)
    exe = static.Executor()
    w, b = lin.weight.numpy(), lin.bias.numpy()
    for n in (1, 5, 2):
        v = RNG.standard_normal((n, 4)).astype(np.float32)
        h, o = exe.run(feed={"x": v}, fetch_list=[hidden, out])
        np.testing.assert_allclose(h, np.maximum(v @ w + b, 0), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(o, np.maximum(v @ w + b, 0).sum(1), rtol=1e-5, atol=1e-6)
    # Fetching by tensor or data name, return_numpy=False gives tensors.
    (t,) = exe.run(feed={"x": np.ones((2, 4), np.float32)}, fetch_list=["x"], return_numpy=False)
    assert isinstance(t, oar.Tensor) and t.shape == [2, 4]


def test_program_prints_ir_and_guard_sets_defaults(static_mode):
    main = static.Program()
    assert static.default_main_program() is not main
    with static.program_guard(main):
        assert static.default_main_program() is main
        x = static.data("x", [3], "float32")
        y = oar.exp(x)
    text = str(main)
    assert 'input %0 "x": float32[3]' in text and "exp(" in text
    np.testing.assert_allclose(static.Executor().run(main, feed={"x": np.zeros(3, np.float32)}, fetch_list=[y])[0],
                               np.ones(3))


def test_clone_for_test_does_not_train(static_mode):
    x = static.data("x", [None, 2], "float32")
    lin = oar.nn.Linear(2, 1)
    loss = lin(x).mean()
    oar.optimizer.SGD(learning_rate=0.1).minimize(loss)
    main = static.default_main_program()
    test = main.clone(for_test=True)
    exe = static.Executor()
    w = lin.weight.numpy().copy()
    exe.run(test, feed={"x": np.ones((3, 2), np.float32)}, fetch_list=[loss])
    np.testing.assert_array_equal(lin.weight.numpy(), w)
    exe.run(main, feed={"x": np.ones((3, 2), np.float32)}, fetch_list=[loss])
    # d mean(x @ w + b) / dw = mean of the rows of x = 1
    np.testing.assert_allclose(lin.weight.numpy(), w - 0.1, rtol=1e-6)


# ---------------------------------------------------------------- errors


def test_missing_and_unknown_feeds(static_mode):
    x = static.data("x", [None, 2], "float32")
    y = x * 2.0
    exe = static.Executor()
    with pytest.raises(ValueError, match=r"^\[oar.static.Executor.run\] feed has no value for the input 'x'"):
        exe.run(fetch_list=[y])
    with pytest.raises(ValueError, match=r"^\[oar.static.Executor.run\] feed names 'z'"):
        exe.run(feed={"x": np.ones((1, 2), np.float32), "z": 1.0}, fetch_list=[y])


def test_wrong_feed_dtype_and_shape(static_mode):
    x = static.data("x", [None, 2], "float32")
    y = x + 1.0
    exe = static.Executor()
    with pytest.raises(TypeError, match=r"^\[oar.static.Executor.run\] feed 'x' has dtype float64"):
        exe.run(feed={"x": np.ones((1, 2))}, fetch_list=[y])
    with pytest.raises(ValueError, match=r"^\[oar.static.Executor.run\] feed 'x' has shape \[1, 3\]"):
        exe.run(feed={"x": np.ones((1, 3), np.float32)}, fetch_list=[y])
    with pytest.raises(ValueError, match=r"^\[oar.static.Executor.run\] feed 'x' has shape \[2\]"):
        exe.run(feed={"x": np.ones(2, np.float32)}, fetch_list=[y])


def test_fetching_a_value_of_another_program(static_mode):
    a, b = static.Program(), static.Program()
    with static.program_guard(a):
        xa = static.data("x", [2], "float32")
        ya = xa * 3.0
    with static.program_guard(b):
        xb = static.data("x", [2], "float32")
        yb = xb + 1.0
    exe = static.Executor()
    feed = {"x": np.ones(2, np.float32)}
    with pytest.raises(ValueError, match=r"^\[oar.static.Executor.run\] fetch value .* is not a value of this program"):
        exe.run(b, feed=feed, fetch_list=[ya])
    with pytest.raises(ValueError, match=r"^\[oar.static.Executor.run\] fetch value .* is not a value of this program"):
        exe.run(a, feed=feed, fetch_list=[yb])
    np.testing.assert_allclose(exe.run(a, feed=feed, fetch_list=[ya])[0], [3.0, 3.0])
    np.testing.assert_allclose(exe.run(b, feed=feed, fetch_list=[yb])[0], [2.0, 2.0])


def test_bad_declarations(static_mode):
    static.data("x", [2], "float32")
    with pytest.raises(ValueError, match=r"^\[oar.static.data\] the program already has an input named 'x'"):
        static.data("x", [2], "float32")
    with pytest.raises(ValueError, match=r"^\[oar.static.data\] shape\[0\] must be"):
        static.data("z", [-3], "float32")
    with pytest.raises(TypeError, match=r"^\[oar.static.Executor.run\] program must be"):
        static.Executor().run("main")
    with pytest.raises(ValueError, match=r"^\[oar.static.append_backward\] loss must hold one value"):
        static.append_backward(static.data("v", [3], "float32") * 2.0)


def test_static_only_apis_in_dynamic_mode():
    for call in (lambda: static.data("x", [1], "float32"),
                 lambda: static.append_backward(oar.ones([1])),
                 lambda: static.gradients([oar.ones([1])], [oar.ones([1])]),
                 lambda: static.Executor().run(static.Program())):
        with pytest.raises(RuntimeError, match=r"^\[oar.static.\w+(\.run)?\] is only available in static mode"):
            call()


def test_programs_stop_recording_when_static_mode_ends():
    oar.enable_static()
    main = static.default_main_program()
    x = static.data("x", [1], "float32")
    y = x * 2.0
    oar.disable_static()
    z = oar.ones([1]) * 3.0  # eager again: nothing is recorded
    np.testing.assert_allclose(z.numpy(), [3.0])
    assert "multiply" in str(main)
    oar.enable_static()
    try:
        with pytest.raises(RuntimeError, match=r"^\[oar.static.Executor.run\] the program's recording ended"):
            static.Executor().run(main, feed={"x": np.ones(1, np.float32)}, fetch_list=[y])
    finally:
        oar.disable_static()


def test_batch_norm_statistics_are_updated_by_each_run():
    class BNNet(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = oar.nn.Linear(3, 4)
            self.bn = oar.nn.BatchNorm1D(4, momentum=0.5)

        def forward(self, x):
            return self.bn(self.fc(x))

    oar.seed(4)
    eager = BNNet()
    state = {k: v.numpy().copy() for k, v in eager.state_dict().items()}
    xs = [RNG.standard_normal((6, 3)).astype(np.float32) for _ in range(3)]
    make = lambda ps: oar.optimizer.SGD(learning_rate=0.1, parameters=ps)  # noqa: E731
    oar.enable_static()
    try:
        x = static.data("x", [None, 3], "float32")
        net = BNNet()
        net.set_state_dict({k: oar.to_tensor(v) for k, v in state.items()})
        loss = (net(x) ** 2 * oar.to_tensor([1.0, 2.0, 3.0, 4.0])).mean()
        make(None).minimize(loss)
        exe = static.Executor()
        curve = [float(exe.run(feed={"x": v}, fetch_list=[loss])[0]) for v in xs]
    finally:
        oar.disable_static()
    opt = make(eager.parameters())
    want = []
    for v in xs:
        ev = (eager(oar.to_tensor(v)) ** 2 * oar.to_tensor([1.0, 2.0, 3.0, 4.0])).mean()
        ev.backward()
        opt.step()
        opt.clear_grad()
        want.append(float(ev.numpy()))
    np.testing.assert_allclose(curve, want, rtol=1e-5)
    np.testing.assert_allclose(net.bn._mean.numpy(), eager.bn._mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.bn._variance.numpy(), eager.bn._variance.numpy(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(net.bn._mean.numpy(), 0)


def test_lenet_static_training_loop_matches_eager():
    from oar.vision.models import LeNet

    oar.seed(1)
    eager = LeNet()
    net = copy.deepcopy(eager)
    xs = [RNG.standard_normal((4, 1, 28, 28)).astype(np.float32) for _ in range(3)]
    ys = [RNG.integers(0, 10, (4, 1)).astype(np.int64) for _ in range(3)]
    oar.enable_static()
    try:
        img = static.data("img", [None, 1, 28, 28], "float32")
        label = static.data("label", [None, 1], "int64")
        loss = F.cross_entropy(net(img), label)
        oar.optimizer.Adam(learning_rate=1e-3).minimize(loss)
        exe = static.Executor()
        exe.run(static.default_startup_program())
        got = [exe.run(feed={"img": x, "label": y}, fetch_list=[loss, net.fc[0].weight]) for x, y in zip(xs, ys)]
    finally:
        oar.disable_static()
    opt = oar.optimizer.Adam(learning_rate=1e-3, parameters=eager.parameters())
    for (got_loss, got_w), x, y in zip(got, xs, ys):
        # A fetched parameter is its value after the run's update.
        loss = F.cross_entropy(eager(oar.to_tensor(x)), oar.to_tensor(y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        np.testing.assert_allclose(got_loss, loss.numpy(), rtol=1e-5)
        np.testing.assert_allclose(got_w, eager.fc[0].weight.numpy(), rtol=1e-5, atol=1e-7)


def test_values_computed_from_data_report_dynamic_dims():
    # Paddle reports -1 for every dim that follows a dynamic input dim, so code reading
    # .shape cannot bake the example batch size into the program.
    oar.enable_static()
    try:
        main = oar.static.Program()
        with oar.static.program_guard(main):
            x = oar.static.data("x", [None, 2, 3], "float32")
            h = x * 2.0
            y = oar.static.nn.fc(oar.flatten(x, 1), 1)
            assert (x.shape, h.shape, y.shape) == ([-1, 2, 3], [-1, 2, 3], [-1, 1])
            with pytest.raises(ValueError, match=r"only one dim may be -1"):
                oar.reshape(h, [h.shape[0], -1])
            flat = oar.reshape(h, [-1, 6])
        out = oar.static.Executor().run(main, feed={"x": np.ones((5, 2, 3), np.float32)}, fetch_list=[flat])[0]
    finally:
        oar.disable_static()
    assert out.shape == (5, 6)
