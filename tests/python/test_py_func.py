"""oar.static.py_func in static programs run by an Executor, checked against NumPy at several batch sizes."""
import numpy as np
import pytest

import oar
from oar.static import InputSpec


@pytest.fixture
def static():
    oar.enable_static()
    yield oar.static.Executor()
    oar.disable_static()


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_forward_two_batch_sizes(static):
    calls = []

    def first3_tanh(a):
        calls.append(a.shape)
        return np.tanh(a[:, :3]) * 2

    main = oar.static.Program()
    with oar.static.program_guard(main):
        x = oar.static.data("x", [None, 4], "float32")
        y = oar.static.py_func(first3_tanh, x, InputSpec([-1, 3], "float32"))
        z = y * 3.0 + 1.0
    assert calls == []  # func runs when the program runs, not while it is recorded
    for b in (2, 5, 1):
        xv = _rand(b, 4, seed=b)
        got_y, got_z = static.run(main, feed={"x": xv}, fetch_list=[y, z])
        np.testing.assert_allclose(got_y, np.tanh(xv[:, :3]) * 2, rtol=1e-6)
        np.testing.assert_allclose(got_z, np.tanh(xv[:, :3]) * 6 + 1, rtol=1e-5)
    assert calls == [(2, 4), (5, 4), (1, 4)]


def test_out_tensor_is_filled(static):
    """Paddle style: declare the output variable, call py_func, fetch the variable."""
    main = oar.static.Program()
    with oar.static.program_guard(main):
        a = oar.static.data("a", [None, 3], "int32")
        b = oar.static.data("b", [None, 3], "int32")
        total = oar.zeros([2, 3], dtype="int32")
        diff = np.zeros([2, 3], dtype=np.int64)
        ret, d = oar.static.py_func(lambda u, v: (u + v, (u - v).astype(np.int64)), [a, b], [total, diff])
    assert ret is total and d.dtype == oar.int64
    rng = np.random.default_rng(3)
    for n in (2, 4):
        av, bv = rng.integers(0, 9, (n, 3)).astype(np.int32), rng.integers(0, 9, (n, 3)).astype(np.int32)
        got_t, got_d = static.run(main, feed={"a": av, "b": bv}, fetch_list=[total, d])
        np.testing.assert_array_equal(got_t, av + bv)
        np.testing.assert_array_equal(got_d, av.astype(np.int64) - bv)
        assert got_d.dtype == np.int64


def test_backward_func(static):
    seen = []

    def tanh_grad(y, dy):  # x is skipped: backward_func gets the output and its gradient
        seen.append(y.shape)
        return dy * (1 - np.square(y))

    main = oar.static.Program()
    with oar.static.program_guard(main):
        x = oar.static.data("x", [None, 3], "float32")
        x.stop_gradient = False
        out = oar.zeros([2, 3])
        y = oar.static.py_func(np.tanh, x, out, backward_func=tanh_grad, skip_vars_in_backward_input=x)
        w = oar.to_tensor(np.array([1.0, -2.0, 0.5], np.float32))
        loss = (y * w).sum() + (x * x).sum()
        (gx,) = oar.static.gradients([loss], [x])
    for b in (2, 5):
        xv = _rand(b, 3, seed=10 + b)
        got_loss, got_g = static.run(main, feed={"x": xv}, fetch_list=[loss, gx])
        t = np.tanh(xv)
        np.testing.assert_allclose(got_loss, (t * [1.0, -2.0, 0.5]).sum() + (xv * xv).sum(), rtol=1e-5)
        np.testing.assert_allclose(got_g, (1 - t * t) * [1.0, -2.0, 0.5] + 2 * xv, rtol=1e-5, atol=1e-6)
    assert seen == [(2, 3), (5, 3)]


def test_backward_func_sees_inputs_outputs_and_grads(static):
    got = {}

    def fwd(a, b):
        return a * b

    def bwd(a, b, y, dy):
        got["args"] = (a.copy(), b.copy(), y.copy(), dy.copy())
        return dy * b, None  # no gradient for b

    main = oar.static.Program()
    with oar.static.program_guard(main):
        a = oar.static.data("a", [None, 2], "float64")
        b = oar.static.data("b", [None, 2], "float64")
        a.stop_gradient = False
        b.stop_gradient = False
        y = oar.static.py_func(fwd, [a, b], InputSpec([-1, 2], "float64"), backward_func=bwd)
        loss = (y * 3.0).sum()
        ga, gb = oar.static.gradients([loss], [a, b])
    av, bv = _rand(4, 2, seed=1).astype(np.float64), _rand(4, 2, seed=2).astype(np.float64)
    r_ga, r_gb = static.run(main, feed={"a": av, "b": bv}, fetch_list=[ga, gb])
    np.testing.assert_allclose(r_ga, 3.0 * bv)
    np.testing.assert_array_equal(r_gb, np.zeros_like(bv))
    ra, rb, ry, rdy = got["args"]
    np.testing.assert_array_equal(ra, av)
    np.testing.assert_array_equal(rb, bv)
    np.testing.assert_allclose(ry, av * bv)
    np.testing.assert_array_equal(rdy, np.full((4, 2), 3.0))


def test_no_backward_func_stops_gradient(static):
    main = oar.static.Program()
    with oar.static.program_guard(main):
        x = oar.static.data("x", [None, 3], "float32")
        x.stop_gradient = False
        y = oar.static.py_func(lambda a: a * 10, x, InputSpec([-1, 3], "float32"))
        loss = y.sum() + (x * 2.0).sum()
        (gx,) = oar.static.gradients([loss], [x])
    for b in (1, 3):
        xv = _rand(b, 3, seed=b)
        got_loss, got_g = static.run(main, feed={"x": xv}, fetch_list=[loss, gx])
        np.testing.assert_allclose(got_loss, 12 * xv.sum(), rtol=1e-5)
        np.testing.assert_array_equal(got_g, np.full((b, 3), 2.0, np.float32))  # nothing through py_func


def test_observer_runs_each_run(static):
    seen = []
    main = oar.static.Program()
    with oar.static.program_guard(main):
        x = oar.static.data("x", [None, 2], "float32")
        y = x + 1.0
        assert oar.static.nn.py_func(lambda a, b: seen.append((a.copy(), b.copy())), [x, y], None) is None
    assert seen == []
    for b in (1, 3):
        xv = _rand(b, 2, seed=b)
        static.run(main, feed={"x": xv}, fetch_list=[y])
        np.testing.assert_array_equal(seen[-1][0], xv)
        np.testing.assert_allclose(seen[-1][1], xv + 1)
    assert len(seen) == 2


def test_wrong_result_shape_raises_at_run(static):
    main = oar.static.Program()
    with oar.static.program_guard(main):
        x = oar.static.data("x", [None, 3], "float32")
        y = oar.static.py_func(lambda a: a[:, :2], x, InputSpec([-1, 3], "float32"))
    with pytest.raises(ValueError, match=r"\[oar.static.py_func\] func returned an array of shape \[2, 2\]"):
        static.run(main, feed={"x": _rand(2, 3)}, fetch_list=[y])


def test_eager():
    x = oar.to_tensor(_rand(3, 2, seed=4), stop_gradient=False)
    y = oar.static.py_func(np.exp, x, np.zeros([3, 2], np.float32), backward_func=lambda a, y, dy: dy * y)
    np.testing.assert_allclose(y.numpy(), np.exp(x.numpy()), rtol=1e-6)
    (y * 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.numpy()), rtol=1e-6)


def test_errors():
    x = oar.ones([2, 2])
    with pytest.raises(TypeError, match=r"^\[oar.static.py_func\] func"):
        oar.static.py_func(3, x, x)
    with pytest.raises(TypeError, match=r"^\[oar.static.py_func\] x"):
        oar.static.py_func(np.tanh, [np.ones(2)], x)
    with pytest.raises(TypeError, match=r"^\[oar.static.py_func\] out"):
        oar.static.py_func(np.tanh, x, "float32")
    with pytest.raises(TypeError, match=r"^\[oar.static.py_func\] backward_func"):
        oar.static.py_func(np.tanh, x, x, backward_func=1)
    with pytest.raises(ValueError, match=r"^\[oar.static.py_func\] skip_vars_in_backward_input"):
        oar.static.py_func(np.tanh, x, x, backward_func=np.tanh, skip_vars_in_backward_input=oar.ones([1]))
    with pytest.raises(ValueError, match=r"^\[oar.static.py_func\] func must return 2"):
        oar.static.py_func(lambda a: a, x, [InputSpec([2, 2]), InputSpec([2, 2])])
    with pytest.raises(ValueError, match=r"^\[oar.static.py_func\] func returned None for out\[0\]"):
        oar.static.py_func(lambda a: None, x, x)
    with pytest.raises(ValueError, match=r"^\[oar.static.py_func\] out\[0\] has a -1 dim"):
        oar.static.py_func(lambda: np.ones(2), None, InputSpec([-1]))
