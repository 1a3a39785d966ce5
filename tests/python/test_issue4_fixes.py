"""Correctness fixes around tracing, the executor, autocast, static mode and the
inference config. References are NumPy or closed forms, never oar itself.
"""
import numpy as np
import pytest

import oar
from oar import static
from oar.nn import functional as F
from oar.static import InputSpec

RNG = np.random.default_rng(11)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def np_cross_entropy(x, y, weight=None, ignore_index=-100):
    logp = np_log_softmax(x.astype(np.float64))
    valid = y != ignore_index
    safe = np.where(valid, y, 0)
    nll = -np.take_along_axis(logp, safe[:, None], -1)[:, 0]
    w = valid.astype(np.float64) if weight is None else weight[safe] * valid
    return (nll * w).sum() / w.sum()


# ---- cross_entropy under to_static --------------------------------------------


def test_gpt_loss_traces_and_matches_numpy():
    from oar.models import GPTConfig, GPTForCausalLM

    oar.seed(3)
    cfg = GPTConfig(vocab_size=20, max_position_embeddings=16, hidden_size=16, num_hidden_layers=1,
                    num_attention_heads=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = GPTForCausalLM(cfg)
    model.eval()
    ids = RNG.integers(0, 20, (2, 6)).astype(np.int64)
    eager_loss, eager_logits = model(oar.to_tensor(ids), labels=oar.to_tensor(ids))
    f = oar.jit.to_static(lambda a, b: model(a, labels=b),
                          input_spec=[InputSpec([None, 6], "int64"), InputSpec([None, 6], "int64")])
    loss, logits = f(oar.to_tensor(ids), oar.to_tensor(ids))
    np.testing.assert_allclose(logits.numpy(), eager_logits.numpy(), rtol=1e-5, atol=1e-5)
    ref = np_cross_entropy(logits.numpy()[:, :-1].reshape(-1, 20), ids[:, 1:].reshape(-1))
    np.testing.assert_allclose(loss.numpy(), ref, rtol=1e-5)
    np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-6)
    # Another batch size runs the same program.
    ids3 = RNG.integers(0, 20, (3, 6)).astype(np.int64)
    loss3, logits3 = f(oar.to_tensor(ids3), oar.to_tensor(ids3))
    ref3 = np_cross_entropy(logits3.numpy()[:, :-1].reshape(-1, 20), ids3[:, 1:].reshape(-1))
    np.testing.assert_allclose(loss3.numpy(), ref3, rtol=1e-5)
    # Out-of-range labels in the traced program raise a typed error.
    for bad in (25, -3):
        lab = ids.copy()
        lab[0, 3] = bad
        with pytest.raises(ValueError, match=r"^\[oar.nn.functional.cross_entropy\] labels must be in"):
            f(oar.to_tensor(ids), oar.to_tensor(lab))


@pytest.mark.parametrize("bad", [20, -2])
def test_weighted_cross_entropy_traced_checks_labels(bad):
    w = RNG.random(20).astype(np.float32)
    g = oar.jit.to_static(lambda x, y: F.cross_entropy(x, y, weight=oar.to_tensor(w)),
                          input_spec=[InputSpec([None, 20], "float32"), InputSpec([None], "int64")])
    x = rand(5, 20)
    y = np.array([1, 2, 3, 4, 19])
    np.testing.assert_allclose(g(oar.to_tensor(x), oar.to_tensor(y)).numpy(), np_cross_entropy(x, y, w), rtol=1e-5)
    with pytest.raises(IndexError):
        g(oar.to_tensor(x), oar.to_tensor(np.array([1, 2, bad, 4, 5])))


def test_nll_loss_traces():
    g = oar.jit.to_static(lambda x, y: F.nll_loss(x, y), input_spec=[InputSpec([None, 4], "float32"),
                                                                      InputSpec([None], "int64")])
    x = np_log_softmax(rand(6, 4)).astype(np.float32)
    y = np.array([0, 3, 1, 2, 2, 0])
    np.testing.assert_allclose(g(oar.to_tensor(x), oar.to_tensor(y)).numpy(), -x[np.arange(6), y].mean(),
                               rtol=1e-5)
    with pytest.raises(IndexError):
        g(oar.to_tensor(x), oar.to_tensor(np.array([0, -1, 1, 2, 2, 0])))


# ---- autocast of the fused ops -------------------------------------------------


def test_fused_ops_run_in_bfloat16_under_autocast():
    q, k, v = (oar.to_tensor(rand(2, 2, 4, 8)) for _ in range(3))
    w, b = oar.to_tensor(rand(8, 5)), oar.to_tensor(rand(5))
    x = oar.to_tensor(rand(3, 8))
    with oar.amp.auto_cast(dtype="bfloat16"):
        att = oar._C.fused_attention(q, k, v, None, 0.3, False)
        lin = oar._C.fused_linear_act(x, w, b, "relu")
        ref_lin = F.relu(F.linear(x, w, b))
        ref_att = oar.matmul(F.softmax(oar.matmul(q, k, transpose_y=True).astype("float32") * 0.3, -1)
                             .astype("bfloat16"), v)
    assert att.dtype == oar.bfloat16 and lin.dtype == oar.bfloat16
    assert ref_lin.dtype == oar.bfloat16 and ref_att.dtype == oar.bfloat16
    np.testing.assert_allclose(lin.astype("float32").numpy(), ref_lin.astype("float32").numpy(), rtol=2e-2,
                               atol=2e-2)
    np.testing.assert_allclose(att.astype("float32").numpy(), ref_att.astype("float32").numpy(), rtol=3e-2,
                               atol=3e-2)
    # And against float64 NumPy, at bfloat16 accuracy.
    xn, wn, bn = x.numpy().astype(np.float64), w.numpy().astype(np.float64), b.numpy().astype(np.float64)
    np.testing.assert_allclose(lin.astype("float32").numpy(), np.maximum(xn @ wn + bn, 0), rtol=5e-2, atol=5e-2)


# ---- static mode: recording after training -------------------------------------


def test_static_record_after_training():
    oar.enable_static()
    try:
        main, startup = static.Program(), static.Program()
        with static.program_guard(main, startup):
            x = static.data("x", [None, 3], "float32")
            fc = oar.nn.Linear(3, 1)
            loss = oar.mean((fc(x) - 1.0) ** 2)
            oar.optimizer.SGD(learning_rate=0.1, parameters=fc.parameters()).minimize(loss)
            exe = static.Executor()
            xv = rand(4, 3)
            w0 = fc.weight.numpy().copy()
            for _ in range(3):
                exe.run(main, feed={"x": xv}, fetch_list=[loss])
            w_trained = fc.weight.numpy().copy()
            assert not np.allclose(w0, w_trained)
            # A new op reading the trained parameter, recorded after training.
            y = x @ fc.weight
            (got,) = exe.run(main, feed={"x": xv}, fetch_list=[y])
            np.testing.assert_allclose(got, xv @ w_trained, rtol=1e-5, atol=1e-6)
    finally:
        oar.disable_static()


# ---- inference Config precision ------------------------------------------------


def test_inference_config_rejects_unknown_precision():
    from oar.inference import Config, PrecisionType

    c = Config("m")
    for bad in (7, -1, 4):
        with pytest.raises(ValueError, match=r"^\[oar.inference.Config"):
            c.set_precision(bad)
    c.set_precision(3)
    assert c.precision() == PrecisionType.Bfloat16
    c.set_precision(PrecisionType.Float32)
    assert c.precision() == PrecisionType.Float32


# ---- strided program inputs and intermediates ----------------------------------


def np_layer_norm(x, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(x.var(-1, keepdims=True) + eps)


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_to_static_with_transposed_input():
    f = oar.jit.to_static(lambda x: (F.layer_norm(x, 4), F.softmax(x, -1), F.log_softmax(x, -1)),
                          input_spec=[InputSpec([None, 4], "float32")])
    a = rand(4, 3)
    xt = oar.to_tensor(a).T  # strided
    ln, sm, lsm = f(xt)
    np.testing.assert_allclose(ln.numpy(), np_layer_norm(a.T), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sm.numpy(), np_softmax(a.T), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lsm.numpy(), np.log(np_softmax(a.T)), rtol=1e-5, atol=1e-5)


def test_program_with_transposed_intermediate():
    from oar import _ir

    # The example's transpose is [1, 4] and contiguous, so no copy is recorded:
    # at run time the transpose of a [4, 5] input reaches the kernels strided.
    prog, _ = _ir.trace(lambda x: (F.layer_norm(x.T, 4), F.softmax(x.T, -1)), [oar.ones([4, 1])],
                        dynamic_dims=[[1]])
    b = rand(4, 5)
    ln, sm = prog.run(oar.to_tensor(b))
    np.testing.assert_allclose(ln.numpy(), np_layer_norm(b.T), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sm.numpy(), np_softmax(b.T), rtol=1e-5, atol=1e-6)
    # And a strided input to that program.
    c = rand(5, 4)
    ln, sm = prog.run(oar.to_tensor(c).T)
    np.testing.assert_allclose(ln.numpy(), np_layer_norm(c), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sm.numpy(), np_softmax(c), rtol=1e-5, atol=1e-6)


# ---- slicing a dynamic dim -----------------------------------------------------

SLICES = [
    (lambda x: x[-1:], lambda a: a[-1:]),
    (lambda x: x[1:], lambda a: a[1:]),
    (lambda x: x[:-1], lambda a: a[:-1]),
    (lambda x: x[::-1], lambda a: a[::-1]),
    (lambda x: x[-2::-2], lambda a: a[-2::-2]),
    (lambda x: x[:-10], lambda a: a[:-10]),
    (lambda x: x[-1], lambda a: a[-1]),
    (lambda x: x[-2], lambda a: a[-2]),
    (lambda x: x[1:, ::-1], lambda a: a[1:, ::-1]),
    (lambda x: x[:, -2:], lambda a: a[:, -2:]),
]


@pytest.mark.parametrize("k", range(len(SLICES)))
def test_traced_slices_follow_the_dynamic_dim(k):
    from oar import _ir

    fn, ref = SLICES[k]
    prog, _ = _ir.trace(lambda x: fn(x) * 2.0, [oar.ones([4, 3])], dynamic_dims=[[0]])
    for n in (2, 4, 7):
        a = rand(n, 3)
        np.testing.assert_array_equal(prog.run(oar.to_tensor(a)).numpy(), ref(a) * 2.0)


def test_to_static_slices_and_their_gradients():
    f = oar.jit.to_static(lambda x: (x[1:] - x[:-1]) * x[::-1][1:], input_spec=[InputSpec([None, 2], "float64")])
    for n in (3, 6):
        a = RNG.standard_normal((n, 2))
        x = oar.to_tensor(a, stop_gradient=False)
        y = f(x)
        np.testing.assert_allclose(y.numpy(), (a[1:] - a[:-1]) * a[::-1][1:], rtol=1e-12)
        g = RNG.standard_normal(y.shape)
        y.backward(oar.to_tensor(g))
        # d/da of sum(g * (a[1:] - a[:-1]) * r[1:]), r = a[::-1]
        r = a[::-1]
        expect = np.zeros_like(a)
        expect[1:] += g * r[1:]
        expect[:-1] -= g * r[1:]
        expect[::-1][1:] += g * (a[1:] - a[:-1])
        np.testing.assert_allclose(x.grad.numpy(), expect, rtol=1e-10, atol=1e-12)


def test_eager_slicing_edge_bounds():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = oar.to_tensor(a)
    for idx in [(slice(None, None, -1),), (slice(-100, 100),), (slice(100, -100, -1),), (slice(2**70, None, -2),),
                (slice(None, -(2**70), -1),), (slice(3, 1),), (-4,), (slice(None), slice(-1, None, -3))]:
        np.testing.assert_array_equal(x[idx].numpy(), a[idx])
    y = oar.to_tensor(a.copy())
    y[-2:, ::-2] = -1.0
    b = a.copy()
    b[-2:, ::-2] = -1.0
    np.testing.assert_array_equal(y.numpy(), b)
    xt = oar.to_tensor(a).T  # non-contiguous
    np.testing.assert_array_equal(xt[-2::-2, 1:].numpy(), a.T[-2::-2, 1:])
    z = oar.zeros([0, 3])
    assert z[-1:].shape == [0, 3] and z[::-1].shape == [0, 3]
    with pytest.raises(ValueError, match=r"^\[oar.strided_slice\]"):
        oar._C.strided_slice(x, [0], [0], [1, 2], [1], None)


# ---- static mode lives in the classes, not in patches -------------------------


def test_enable_static_patches_no_class():
    from oar.nn.layer import layers
    from oar.optimizer.optimizer import Optimizer

    names = ["__call__", "set_state_dict", "set_dict", "load_dict", "register_buffer", "create_parameter"]
    before = {n: layers.Layer.__dict__[n] for n in names}
    before_opt = {n: Optimizer.__dict__[n] for n in ["__init__", "minimize"]}
    before_sgd = oar.optimizer.SGD.__dict__["__init__"]
    oar.enable_static()
    try:
        # Static behaviour still applies: an optimizer without parameters is allowed.
        oar.optimizer.SGD(learning_rate=0.1)
    finally:
        oar.disable_static()
    assert {n: layers.Layer.__dict__[n] for n in names} == before
    assert {n: Optimizer.__dict__[n] for n in ["__init__", "minimize"]} == before_opt
    assert oar.optimizer.SGD.__dict__["__init__"] is before_sgd
    with pytest.raises(ValueError, match=r"parameters must be given"):
        oar.optimizer.SGD(learning_rate=0.1)


def test_program_cross_entropy_with_transposed_intermediate():
    from oar import _ir

    prog, _ = _ir.trace(lambda x, y: F.cross_entropy(x.T, y, reduction="none"),
                        [oar.ones([4, 1]), oar.zeros([1], dtype="int64")], dynamic_dims=[[1], [0]])
    a = rand(4, 5)
    y = np.array([0, 3, 1, 2, 3])
    got = prog.run(oar.to_tensor(a), oar.to_tensor(y)).numpy()
    ref = -np.take_along_axis(np_log_softmax(a.T.astype(np.float64)), y[:, None], -1)[:, 0]  # the label's shape
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_saved_program_keeps_slice_bounds_symbolic(tmp_path):
    from oar.inference import Config, create_predictor

    class Net(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = oar.nn.Linear(3, 3)

        def forward(self, x):
            return self.fc(x)[::-1][:-1] + x[-1:]

    net = Net()
    net.eval()
    prefix = str(tmp_path / "m")
    oar.jit.save(net, prefix, input_spec=[InputSpec([None, 3], "float32", name="x")])
    loaded = oar.jit.load(prefix)
    w, b = net.fc.weight.numpy(), net.fc.bias.numpy()
    for n in (2, 5):
        a = rand(n, 3)
        ref = (a @ w + b)[::-1][:-1] + a[-1:]
        np.testing.assert_allclose(loaded(oar.to_tensor(a)).numpy(), ref, rtol=1e-5, atol=1e-6)
        pred = create_predictor(Config(prefix))
        h = pred.get_input_handle(pred.get_input_names()[0])
        h.reshape([n, 3])
        h.copy_from_cpu(a)
        assert pred.run() is True
        out = pred.get_output_handle(pred.get_output_names()[0]).copy_to_cpu()
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
