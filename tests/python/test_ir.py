"""The graph IR: trace a function into a Program, print, verify and run it.

Numerics are checked against NumPy computed from the layer weights, never
against oar's own eager output alone.
"""
import numpy as np
import pytest

import oar
from nets import MLP
from oar import _ir, nn

RNG = np.random.default_rng(11)


def np_mlp(net, x):
    w1, b1 = net.fc1.weight.numpy(), net.fc1.bias.numpy()
    w2, b2 = net.fc2.weight.numpy(), net.fc2.bias.numpy()
    z = x @ w1 + b1
    h = np.maximum(z, 0)
    return h @ w2 + b2, z, h


def np_mlp_grads(net, x, g):
    """Gradients of sum(mlp(x) * g) w.r.t. x and the four parameters."""
    w1, w2 = net.fc1.weight.numpy(), net.fc2.weight.numpy()
    _, z, h = np_mlp(net, x)
    dh = g @ w2.T
    dz = dh * (z > 0)
    return {"x": dz @ w1.T, "fc1.weight": x.T @ dz, "fc1.bias": dz.sum(0),
            "fc2.weight": h.T @ g, "fc2.bias": g.sum(0)}


def traced_mlp(batch=5):
    net = MLP()
    x = RNG.standard_normal((batch, 4)).astype(np.float32)
    prog, y = _ir.trace(net, [oar.to_tensor(x)], dynamic_dims=[[0]], parameters=net.named_parameters())
    return net, prog, x, y


def test_trace_mlp_prints_and_verifies():
    net, prog, x, y = traced_mlp()
    prog.verify()
    text = str(prog)
    assert 'input %0 "x0": float32[-1,4]' in text
    assert 'param %1 "fc1.weight": float32[4,8]' in text
    assert "float32[-1,8] = linear(%0, %1, %2)" in text
    assert "relu(" in text
    assert 'output "out0" = ' in text
    assert prog.inputs == ["x0"] and prog.outputs == ["out0"]
    assert prog.parameters == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert prog.input_types == [("float32", [-1, 4])]
    assert prog.notes == []
    # The eager outputs of the trace are the function's outputs on the examples.
    np.testing.assert_allclose(y.numpy(), np_mlp(net, x)[0], rtol=1e-5, atol=1e-5)
    # Autograd records during a trace as it does eagerly (the parameters require grad).
    assert not y.stop_gradient


@pytest.mark.parametrize("batch", [5, 1, 9])
def test_run_same_and_other_batch_sizes(batch):
    net, prog, _, _ = traced_mlp(batch=5)
    x = RNG.standard_normal((batch, 4)).astype(np.float32)
    out = prog.run(oar.to_tensor(x))
    assert out.shape == [batch, 3]
    np.testing.assert_allclose(out.numpy(), np_mlp(net, x)[0], rtol=1e-5, atol=1e-5)


def test_run_sees_parameter_updates():
    net, prog, _, _ = traced_mlp()
    w = RNG.standard_normal((8, 3)).astype(np.float32)
    net.fc2.weight.set_value(w)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(prog.run(oar.to_tensor(x)).numpy(), np_mlp(net, x)[0], rtol=1e-5, atol=1e-5)


def check_grads(net, x_t, g, want):
    got = {"x": x_t.grad.numpy()}
    got.update({n: p.grad.numpy() for n, p in net.named_parameters()})
    for k, v in want.items():
        np.testing.assert_allclose(got[k], v, rtol=1e-4, atol=1e-5, err_msg=k)


def test_gradients_flow_through_run():
    net, prog, _, _ = traced_mlp()
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    g = RNG.standard_normal((6, 3)).astype(np.float32)
    want = np_mlp_grads(net, x, g)
    # Through the program.
    xt = oar.to_tensor(x, stop_gradient=False)
    out = prog.run(xt)
    assert not out.stop_gradient
    (out * oar.to_tensor(g)).sum().backward()
    check_grads(net, xt, g, want)
    # Eager gives the same.
    net.clear_gradients()
    xe = oar.to_tensor(x, stop_gradient=False)
    (net(xe) * oar.to_tensor(g)).sum().backward()
    check_grads(net, xe, g, want)


def test_gradients_float64_against_finite_differences():
    prev = oar.get_default_dtype()
    oar.set_default_dtype("float64")
    try:
        lin = nn.Linear(3, 2)
        fn = lambda x: oar.tanh(lin(x)).sum(axis=1)  # noqa: E731
        prog, _ = _ir.trace(fn, [oar.ones([4, 3], dtype="float64")], dynamic_dims=[[0]],
                            parameters=lin.named_parameters())
        prog.verify()
        x = RNG.standard_normal((2, 3))
        w = lin.weight.numpy()
        b = lin.bias.numpy()
        prog.run(oar.to_tensor(x)).sum().backward()
        eps = 1e-6
        num = np.zeros_like(w)
        for i in np.ndindex(w.shape):
            wp, wm = w.copy(), w.copy()
            wp[i] += eps
            wm[i] -= eps
            num[i] = (np.tanh(x @ wp + b).sum() - np.tanh(x @ wm + b).sum()) / (2 * eps)
        np.testing.assert_allclose(lin.weight.grad.numpy(), num, rtol=1e-6, atol=1e-8)
    finally:
        oar.set_default_dtype(prev)


def test_constants_and_multiple_outputs():
    c = np.array([1.0, -2.0, 0.5], dtype=np.float32)

    def f(x):
        y = x * oar.to_tensor(c)
        return y.sum(axis=0), [y, None]  # nested results come back in their structure

    prog, _ = _ir.trace(f, [oar.ones([2, 3])])
    s, (y, none) = prog.run(oar.full([2, 3], 2.0))
    np.testing.assert_allclose(y.numpy(), 2.0 * np.broadcast_to(c, (2, 3)))
    np.testing.assert_allclose(s.numpy(), 4.0 * c)
    assert none is None

    def g(x):
        y = x * oar.to_tensor(c)
        return y.sum(axis=0), oar.exp(y)

    prog, (s, e) = _ir.trace(g, [oar.ones([2, 3])], dynamic_dims=[[0]])
    prog.verify()
    assert prog.parameters == ["const_0"]
    assert 'const %1 "const_0": float32[3]' in str(prog)
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    s2, e2 = prog.run(oar.to_tensor(x))
    np.testing.assert_allclose(s2.numpy(), (x * c).sum(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(e2.numpy(), np.exp(x * c), rtol=1e-5)


def test_baked_size_keeps_concrete_dims_with_a_note():
    def f(x):
        return x.reshape([x.shape[0], 2, 2])

    prog, _ = _ir.trace(f, [oar.ones([3, 4])], dynamic_dims=[[0]])
    prog.verify()
    assert len(prog.notes) == 1 and "reshape" in prog.notes[0]
    assert "float32[3,2,2] = reshape(%0)" in str(prog)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(prog.run(oar.to_tensor(x)).numpy(), x.reshape(3, 2, 2))
    with pytest.raises(ValueError, match=r"\[oar.reshape\]"):
        prog.run(oar.ones([5, 4]))


def test_run_errors():
    _, prog, _, _ = traced_mlp()
    with pytest.raises(ValueError, match=r"\[oar.ir.run\] input 'x0' expects float32\[-1,4\], got float32\[2,5\]"):
        prog.run(oar.ones([2, 5]))
    with pytest.raises(ValueError, match=r"\[oar.ir.run\] input 'x0' expects float32\[-1,4\], got float64"):
        prog.run(oar.ones([2, 4], dtype="float64"))
    with pytest.raises(ValueError, match=r"takes 1 input"):
        prog.run(oar.ones([2, 4]), oar.ones([2, 4]))
    with pytest.raises(TypeError, match=r"\[oar.ir.run\] input 0 must be a Tensor"):
        prog.run(np.ones((2, 4), np.float32))


def test_trace_errors_and_state_restored():
    x = oar.ones([2, 3])
    with pytest.raises(IndexError, match=r"\[oar.ir.trace\] dynamic dim 2 is out of range"):
        _ir.trace(lambda t: t * 2.0, [x], dynamic_dims=[[2]])
    with pytest.raises(ValueError, match=r"\[oar.ir.trace\] dynamic_dims needs one entry per input"):
        _ir.trace(lambda t: t * 2.0, [x], dynamic_dims=[[0], [0]])
    prog, out = _ir.trace(lambda t: (t * 2.0, 3), [x])  # Python values in the result are kept as they are
    assert out[1] == 3 and prog.run(x)[1] == 3
    with pytest.raises(TypeError, match=r"\[oar.ir.trace\] example input 0"):
        _ir.trace(lambda t: t, [np.ones(3)])

    w = oar.ones([2, 3])
    row = w[0]  # a view of the data made outside the trace

    def inplace_through_view(t):
        y = t + w
        row.add_(oar.ones([3]))  # a write through a view of bound data is not captured
        return y * w

    with pytest.raises(NotImplementedError, match=r"modified in place"):
        _ir.trace(inplace_through_view, [x])

    def boom(t):
        t * 2.0
        raise KeyError("user error")

    with pytest.raises(KeyError):
        _ir.trace(boom, [x])
    # After failed traces, eager code records autograd again.
    assert not _C_is_tracing()
    xr = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    y = xr * 3.0
    assert not y.stop_gradient
    y.sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), [3.0, 3.0])


def _C_is_tracing():
    return oar._C._ir_is_tracing()


def test_zero_size_and_0d_inputs():
    prog, _ = _ir.trace(lambda t, s: (t * s).sum(axis=1), [oar.ones([0, 3]), oar.to_tensor(2.0)],
                        dynamic_dims=[[0], None])
    prog.verify()
    assert prog.input_types == [("float32", [-1, 3]), ("float32", [])]
    out = prog.run(oar.ones([4, 3]), oar.to_tensor(0.5))
    np.testing.assert_allclose(out.numpy(), np.full(4, 1.5))
    assert prog.run(oar.ones([0, 3]), oar.to_tensor(0.5)).shape == [0]


def test_non_contiguous_input():
    net, prog, _, _ = traced_mlp()
    base = RNG.standard_normal((4, 6)).astype(np.float32)
    x = oar.to_tensor(base.T.copy())[::2]  # [3, 4], every other row: a strided view
    assert x.shape == [3, 4]
    want = np_mlp(net, base.T[::2])[0]
    np.testing.assert_allclose(prog.run(x).numpy(), want, rtol=1e-5, atol=1e-5)


def test_data_dependent_shapes_are_dynamic():
    prog, y = _ir.trace(lambda t: oar.nonzero(t > 0), [oar.to_tensor([[1.0, -1.0], [2.0, 3.0]])])
    prog.verify()
    assert "int64[-1,2] = nonzero(" in str(prog)  # the count is data; the rank is not
    assert y.numpy().tolist() == [[0, 0], [1, 0], [1, 1]]
    x = np.array([[1.0, -1.0], [-2.0, -3.0]], dtype=np.float32)
    np.testing.assert_array_equal(prog.run(oar.to_tensor(x)).numpy(), np.argwhere(x > 0))


def test_detach_keeps_the_trace_and_batch_norm_statistics_are_traced():
    prog, _ = _ir.trace(lambda t: t.detach() * 2.0, [oar.ones([3])], dynamic_dims=[[0]])
    prog.verify()
    assert prog.parameters == []  # not captured as a constant holding the example
    np.testing.assert_allclose(prog.run(oar.to_tensor([1.0, -2.0])).numpy(), [2.0, -4.0])
    # Training-mode batch norm reads its running statistics through detached aliases.
    bn = nn.BatchNorm1D(2)
    bn.train()
    named = list(bn.named_parameters()) + list(bn.named_buffers())
    prog, _ = _ir.trace(bn, [oar.ones([4, 2])], dynamic_dims=[[0]], parameters=named)
    prog.verify()
    assert sorted(prog.parameters) == ["_mean", "_variance", "bias", "weight"]
    assert not any(n.startswith("const") for n in prog.parameters)


def test_parameter_names_do_not_clash_with_inputs():
    w = oar.ones([3])
    prog, _ = _ir.trace(lambda t: t * w, [oar.ones([3])], parameters={"x0": w})
    prog.verify()
    assert prog.inputs == ["x0"] and prog.parameters == ["x0_1"]


# ---------------------------------------------------------------- every op in the op database

from opdb import OP_DB, ref_array, to_oar  # noqa: E402

OPS = [(info, "float32" if "float32" in info.dtypes else info.dtypes[0]) for info in OP_DB]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy references of empty reductions
@pytest.mark.parametrize("info,dtype", OPS, ids=[f"{i.name}-{d}" for i, d in OPS])
def test_every_op_traces_verifies_and_runs(info, dtype):
    """Each op sample, traced with dim 0 of its tensor inputs dynamic, verifies and runs like NumPy."""
    atol, rtol = info.tolerance(dtype)
    for sample in info.samples(dtype):
        args = [to_oar(a, dtype, sample.noncontig) if isinstance(a, np.ndarray) else a for a in sample.args]
        pos = [i for i, a in enumerate(args) if isinstance(a, oar.Tensor)]
        extra = {"dtype": dtype} if info.creation else {}

        def fn(*ts):
            full = list(args)
            for i, t in zip(pos, ts):
                full[i] = t
            return info.op(*full, **sample.kwargs, **extra)

        inputs = [args[i] for i in pos]
        prog, _ = _ir.trace(fn, inputs, dynamic_dims=[[0] if t.ndim else None for t in inputs])
        prog.verify()
        got = prog.run(*inputs).numpy()
        if info.creation:
            expected = np.asarray(info.ref(*args, dtype=dtype, **sample.kwargs))
        else:
            expected = np.asarray(info.ref(*[ref_array(a) if isinstance(a, oar.Tensor) else a for a in args],
                                           **sample.kwargs))
        assert list(got.shape) == list(expected.shape), (sample, str(prog))
        if got.dtype.kind in "biu" or expected.dtype.kind == "b":
            np.testing.assert_array_equal(got, expected.astype(got.dtype), err_msg=repr(sample))
        else:
            np.testing.assert_allclose(got.astype(np.complex128 if got.dtype.kind == "c" else np.float64), expected,
                                       atol=atol, rtol=rtol, equal_nan=True, err_msg=repr(sample))


def test_one_tensor_cannot_be_two_inputs():
    x = oar.ones([2])
    with pytest.raises(ValueError, match=r"^\[oar.ir.trace\] input 'x1' is the same tensor as an earlier input"):
        _ir.trace(lambda a, b: a * b + a, [x, x])
    prog, _ = _ir.trace(lambda a, b: a * b + a, [x, x.clone()])
    y = oar.to_tensor([2.0, 3.0])
    np.testing.assert_allclose(prog.run(y, y + 1).numpy(), [2 * 3 + 2, 3 * 4 + 3])


def test_in_place_ops_on_traced_values_are_recorded():
    def f(t):
        y = t * 2.0
        y.add_(1.0)
        y.exp_()
        return y * 3.0

    x = oar.to_tensor(RNG.standard_normal((1, 3)).astype(np.float32))
    prog, out = _ir.trace(f, [x], dynamic_dims=[[0]])
    text = str(prog)
    assert "add(" in text and "exp(" in text
    z = RNG.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(prog.run(oar.to_tensor(z)).numpy(), 3 * np.exp(2 * z + 1), rtol=1e-6)
    np.testing.assert_allclose(out.numpy(), 3 * np.exp(2 * x.numpy() + 1), rtol=1e-6)


def test_gradients_taken_inside_a_trace_become_program_ops():
    # d/dW sum(tanh(x @ W)) = x^T (1 - tanh(x @ W)^2), run on a batch the trace never saw.
    rng = np.random.default_rng(3)
    w_np = rng.standard_normal((3, 2))
    w = oar.to_tensor(w_np)
    w.stop_gradient = False

    def f(x):
        y = oar.tanh(x @ w).sum()
        (g,) = oar.grad(y, [w])
        return y, g

    # (Gradient rules read concrete shapes, e.g. sum's backward expands to the input's shape,
    # so a traced backward is specialised to the traced batch size.)
    prog, _ = _ir.trace(f, [oar.to_tensor(rng.standard_normal((4, 3)))], parameters={"w": w})
    assert "tanh" in str(prog) and str(prog).count("matmul") == 2
    x = rng.standard_normal((4, 3))
    y, g = prog.run(oar.to_tensor(x))
    t = np.tanh(x @ w_np)
    np.testing.assert_allclose(y.numpy(), t.sum(), rtol=1e-12)
    np.testing.assert_allclose(g.numpy(), x.T @ (1 - t**2), rtol=1e-12)
