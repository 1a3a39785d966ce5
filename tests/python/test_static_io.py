"""oar.static io (inference models, serialisation, checkpoints) and the other
paddle.static names: Variable, create_global_var, places, device_guard,
Print, accuracy, auc, ExponentialMovingAverage, CompiledProgram.

References are NumPy written here (for auc, the pairwise definition: the
share of (positive, negative) pairs ranked right, ties counting one half).
"""
import os

import numpy as np
import pytest

import oar
from oar import static
from oar.static import nn

RNG = np.random.default_rng(23)


@pytest.fixture
def program():
    oar.enable_static()
    try:
        main = static.Program()
        with static.program_guard(main, static.Program()):
            yield main
    finally:
        oar.disable_static()


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def mlp():
    x = static.data("x", [None, 4], "float32")
    h = nn.fc(x, 5, activation="relu", name="hidden")
    y = nn.fc(h, 2, name="out")
    return x, y


def reference_mlp(prog, v):
    p = {q.name: q.numpy() for q in prog.all_parameters()}
    h = np.maximum(v @ p["hidden.w_0"] + p["hidden.b_0"], 0)
    return h @ p["out.w_0"] + p["out.b_0"]


# ---------------------------------------------------------------- inference models


def test_save_and_load_inference_model(program, tmp_path):
    x, y = mlp()
    exe = static.Executor()
    prefix = str(tmp_path / "infer" / "mlp")
    static.save_inference_model(prefix, [x], [y], exe)
    assert sorted(os.listdir(tmp_path / "infer")) == ["mlp.json", "mlp.safetensors"]
    prog, feed_names, fetch_targets = static.load_inference_model(prefix, exe)
    assert feed_names == ["x"] and len(fetch_targets) == 1
    assert fetch_targets[0].shape == [-1, 2]
    for n in (1, 6):
        v = rand(n, 4)
        (got,) = exe.run(prog, feed={"x": v}, fetch_list=fetch_targets)
        np.testing.assert_allclose(got, reference_mlp(program, v), rtol=1e-5, atol=1e-5)
    # The same files load in oar.jit and in the C++ inference runtime.
    v = rand(3, 4)
    np.testing.assert_allclose(oar.jit.load(prefix)(oar.to_tensor(v)).numpy(), reference_mlp(program, v),
                               rtol=1e-5, atol=1e-5)
    from oar.inference import Config, create_predictor

    predictor = create_predictor(Config(prefix))
    assert predictor.get_input_names() == ["x"]
    predictor.get_input_handle("x").copy_from_cpu(v)
    predictor.run()
    out = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
    np.testing.assert_allclose(out, reference_mlp(program, v), rtol=1e-5, atol=1e-5)


def test_inference_model_keeps_feed_order_and_prunes(program, tmp_path):
    a = static.data("a", [None, 2], "float32")
    b = static.data("b", [None, 2], "float32")
    unused = static.data("unused", [None, 3], "float32")
    s = a * 2.0 + b
    loss = nn.fc(unused, 1).sum()
    oar.optimizer.SGD(learning_rate=0.1).minimize(loss)
    prefix = str(tmp_path / "two")
    static.save_inference_model(prefix, [b, a], [s], static.Executor())
    prog, names, targets = static.load_inference_model(prefix, static.Executor())
    assert names == ["b", "a"] and prog.all_parameters() == []
    va, vb = rand(2, 2), rand(2, 2)
    (got,) = static.Executor().run(prog, feed={"a": va, "b": vb}, fetch_list=targets)
    np.testing.assert_allclose(got, va * 2 + vb, rtol=1e-6)


def test_serialize_round_trip_and_files(program, tmp_path):
    x, y = mlp()
    exe = static.Executor()
    prog_bytes = static.serialize_program([x], [y])
    param_bytes = static.serialize_persistables([x], [y], exe)
    static.save_to_file(str(tmp_path / "p.json"), prog_bytes)
    static.save_to_file(str(tmp_path / "p.safetensors"), param_bytes)
    assert static.load_from_file(str(tmp_path / "p.json")) == prog_bytes
    loaded = static.deserialize_program(static.load_from_file(str(tmp_path / "p.json")))
    v = rand(3, 4)
    assert np.all(exe.run(loaded, feed={"x": v}, fetch_list=["fetch_0"])[0] == 0)  # weights start at zero
    static.deserialize_persistables(loaded, static.load_from_file(str(tmp_path / "p.safetensors")), exe)
    np.testing.assert_allclose(exe.run(loaded, feed={"x": v}, fetch_list=["fetch_0"])[0],
                               reference_mlp(program, v), rtol=1e-5, atol=1e-5)
    # The two files are an inference model too.
    prog, _, targets = static.load_inference_model(str(tmp_path / "p"), exe)
    np.testing.assert_allclose(exe.run(prog, feed={"x": v}, fetch_list=targets)[0], reference_mlp(program, v),
                               rtol=1e-5, atol=1e-5)


def test_normalize_program_shares_parameters(program):
    x, y = mlp()
    infer = static.normalize_program(program, [x], [y])
    exe = static.Executor()
    v = rand(2, 4)
    before = exe.run(infer, feed={"x": v}, fetch_list=[y])[0]
    np.testing.assert_allclose(before, reference_mlp(program, v), rtol=1e-5, atol=1e-5)
    program.set_state_dict({"out.b_0": np.array([10.0, -10.0], np.float32)})
    after = exe.run(infer, feed={"x": v}, fetch_list=[y])[0]
    np.testing.assert_allclose(after, reference_mlp(program, v), rtol=1e-5, atol=1e-5)
    assert not np.allclose(before, after)


def test_inference_errors(program, tmp_path):
    x, y = mlp()
    exe = static.Executor()
    other = static.data("other", [None, 4], "float32")
    with pytest.raises(ValueError, match=r"^\[oar.static.save_inference_model\] fetch_vars need the input"):
        static.save_inference_model(str(tmp_path / "m"), [other], [y], exe)
    with pytest.raises(TypeError, match=r"^\[oar.static.save_inference_model\] feed_vars"):
        static.save_inference_model(str(tmp_path / "m"), "x", [y], exe)
    with pytest.raises(ValueError, match=r"^\[oar.static.save_inference_model\] path_prefix"):
        static.save_inference_model(str(tmp_path), [x], [y], exe)
    with pytest.raises(ValueError, match="no such file"):
        static.load_inference_model(str(tmp_path / "missing"), exe)
    static.save_inference_model(str(tmp_path / "m"), [x], [y], exe)
    prog, _, targets = static.load_inference_model(str(tmp_path / "m"), exe)
    with pytest.raises(ValueError, match=r"^\[oar.static.Executor.run\] feed 'x' has shape \[2, 3\]"):
        exe.run(prog, feed={"x": np.ones((2, 3), np.float32)}, fetch_list=targets)
    with pytest.raises(TypeError, match=r"^\[oar.static.deserialize_program\] data must be bytes"):
        static.deserialize_program("text")
    with pytest.raises(ValueError):
        static.deserialize_program(b"{not json")


# ---------------------------------------------------------------- checkpoints


def test_save_load_program_state_with_optimizer(program, tmp_path):
    x, y = mlp()
    t = static.data("t", [None, 2], "float32")
    loss = ((y - t) ** 2).mean()
    opt = oar.optimizer.Adam(learning_rate=0.01)
    opt.minimize(loss)
    exe = static.Executor()
    feed = {"x": rand(8, 4), "t": rand(8, 2)}
    for _ in range(3):
        exe.run(program, feed=feed, fetch_list=[loss])
    path = str(tmp_path / "ckpt" / "model")
    static.save(program, path)
    saved = {k: v.copy() for k, v in static.load_program_state(path).items()}
    params = {q.name: q.numpy().copy() for q in program.all_parameters()}
    assert set(params) <= set(saved)
    for k, v in params.items():
        np.testing.assert_array_equal(saved[k], v)
    assert os.path.isfile(path + ".pdopt")
    next_loss = float(exe.run(program, feed=feed, fetch_list=[loss])[0])
    for _ in range(3):
        exe.run(program, feed=feed, fetch_list=[loss])
    static.load(program, path + ".pdparams")
    for q in program.all_parameters():
        np.testing.assert_array_equal(q.numpy(), params[q.name])
    # Parameters and Adam's moments restored: the next step repeats exactly.
    assert float(exe.run(program, feed=feed, fetch_list=[loss])[0]) == pytest.approx(next_loss, rel=1e-6)
    only = static.load_program_state(path, var_list=["out.b_0"])
    assert list(only) == ["out.b_0"]
    static.set_program_state(program, {"out.b_0": np.array([1.0, 2.0], np.float32), "unknown": np.zeros(1)})
    assert program.state_dict()["out.b_0"].tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match=r"^\[oar.static.set_program_state\] 'out.b_0' has shape"):
        static.set_program_state(program, {"out.b_0": np.zeros(3, np.float32)})


# ---------------------------------------------------------------- other names


def test_variable_global_var_and_places(program):
    x = static.data("x", [None, 2], "float32")
    assert isinstance(x, static.Variable)
    counter = static.create_global_var([1], 5, "int64", persistable=True, name="counter")
    assert counter.numpy().tolist() == [5] and counter.stop_gradient and counter.persistable
    y = x * counter.astype("float32")
    exe = static.Executor()
    assert exe.run(feed={"x": np.ones((1, 2), np.float32)}, fetch_list=[y])[0].tolist() == [[5.0, 5.0]]
    assert [str(p) for p in static.cpu_places(3)] == ["Place(cpu)"] * 3
    with pytest.raises(ValueError, match=r"^\[oar.static.cpu_places\]"):
        static.cpu_places(0)
    with pytest.raises(RuntimeError, match=r"^\[oar.static.xpu_places\]"):
        static.xpu_places()
    if oar.device.cuda.device_count() == 0:
        with pytest.raises(RuntimeError, match=r"^\[oar.static.cuda_places\]"):
            static.cuda_places()
    else:
        assert len(static.cuda_places([0])) == 1
    with static.device_guard("cpu"):
        assert str(oar.ones([1]).place) == "Place(cpu)"
    with pytest.raises(ValueError, match=r"^\[oar.static.device_guard\]"):
        with static.device_guard("tpu"):
            pass


def test_print(program, capsys):
    x = static.data("x", [None, 3], "float32")
    y = static.Print(x + 1.0, first_n=2, message="plus one: ", summarize=2)
    exe = static.Executor()
    for _ in range(3):
        exe.run(feed={"x": np.zeros((2, 3), np.float32)}, fetch_list=[y * 2.0])
    out = capsys.readouterr().out
    assert out.count("plus one: ") == 2  # first_n
    assert "  - shape: [2, 3]" in out and "  - data: [1.0, 1.0]" in out and "dtype: float32" in out


def test_accuracy(program):
    scores = static.data("scores", [None, 4], "float32")
    label = static.data("label", [None, 1], "int64")
    top1, top2 = static.accuracy(scores, label), static.accuracy(scores, label, k=2)
    s = rand(10, 4)
    lab = RNG.integers(0, 4, (10, 1))
    got1, got2 = static.Executor().run(feed={"scores": s, "label": lab}, fetch_list=[top1, top2])
    order = np.argsort(-s, axis=1)
    assert float(got1) == pytest.approx(np.mean(order[:, 0] == lab[:, 0]))
    assert float(got2) == pytest.approx(np.mean((order[:, :2] == lab).any(axis=1)))


def pairwise_auc(score, label):
    pos, neg = score[label == 1], score[label == 0]
    if len(pos) == 0 or len(neg) == 0:
        return 0.0
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0) + 0.5 * (diff == 0)).mean())


def test_auc_batch_and_accumulated(program):
    prob = static.data("prob", [None, 2], "float32")
    label = static.data("label", [None, 1], "int64")
    auc_out, batch_auc, stats = static.auc(prob, label, num_thresholds=200)
    exe = static.Executor()
    seen_s, seen_l = [], []
    for n in (20, 13, 30):
        p1 = RNG.random(n).astype(np.float32)
        lab = (RNG.random(n) < p1).astype(np.int64)
        feed = {"prob": np.stack([1 - p1, p1], 1), "label": lab.reshape(-1, 1)}
        got_all, got_batch = exe.run(feed=feed, fetch_list=[auc_out, batch_auc])
        seen_s.append(p1)
        seen_l.append(lab)
        # Scores are compared by bucket (floor(score * 200)), as Paddle's auc counts them.
        bucket = lambda s: np.floor(s.astype(np.float64) * 200)  # noqa: E731
        assert float(got_batch) == pytest.approx(pairwise_auc(bucket(p1), lab), abs=1e-9)
        assert float(got_all) == pytest.approx(pairwise_auc(bucket(np.concatenate(seen_s)), np.concatenate(seen_l)),
                                               abs=1e-9)
    assert stats[2].numpy().sum() == sum(l.sum() for l in seen_l)
    assert stats[3].numpy().sum() == sum((1 - l).sum() for l in seen_l)


def test_ctr_metric_bundle(program):
    # Paddle 3.3 (legacy static mode) gives, for these two batches,
    # [0.2, 0.6, 0.8, 1.19549, 1, 2] and then [0.45, 1.1, 1.3, 1.81795, 2, 3].
    pred = static.data("pred", [None, 1], "float32")
    label = static.data("label", [None, 1], "float32")
    sums = static.ctr_metric_bundle(pred, label)
    exe = static.Executor()
    ps, ls = [], []
    for p, lab in (([0.2, 0.6], [0.0, 1.0]), ([0.5], [1.0]), ([0.1, 0.9, 0.3], [0.0, 0.0, 1.0])):
        ps += p
        ls += lab
        got = exe.run(feed={"pred": np.array(p, np.float32).reshape(-1, 1),
                            "label": np.array(lab, np.float32).reshape(-1, 1)}, fetch_list=sums)
        a, b = np.array(ps), np.array(ls)
        want = [((a - b) ** 2).sum(), np.abs(a - b).sum(), a.sum(), (1 / (1 + np.exp(-a))).sum(), b.sum(), len(a)]
        assert [g.shape for g in got] == [(1,), (1,), (1,), (1, 1), (1,), (1, 1)]
        np.testing.assert_allclose([float(g.reshape(-1)[0]) for g in got], want, rtol=1e-5)


def test_exponential_moving_average(program):
    x = static.data("x", [None, 1], "float32")
    y = nn.fc(x, 1, bias_attr=False, weight_attr=oar.nn.initializer.Constant(1.0), name="w")
    oar.optimizer.SGD(learning_rate=0.1).minimize(y.sum())
    ema = static.ExponentialMovingAverage(decay=0.9)
    ema.update()
    exe = static.Executor()
    w = program.all_parameters()[0]
    ema_value, weights = 0.0, []
    for step in range(1, 5):
        exe.run(program, feed={"x": np.ones((2, 1), np.float32)}, fetch_list=[y])
        weights.append(float(w.numpy()[0, 0]))
        ema_value = 0.9 * ema_value + 0.1 * weights[-1]
    corrected = ema_value / (1 - 0.9 ** 4)
    with ema.apply(exe):
        assert float(w.numpy()[0, 0]) == pytest.approx(corrected, rel=1e-5)
    assert float(w.numpy()[0, 0]) == pytest.approx(weights[-1])
    with ema.apply(exe, need_restore=False):
        pass
    assert float(w.numpy()[0, 0]) == pytest.approx(corrected, rel=1e-5)
    ema.restore(exe)
    assert float(w.numpy()[0, 0]) == pytest.approx(weights[-1])


def test_compiled_program(program):
    x = static.data("x", [None, 3], "float32")
    y = oar.tanh(oar.exp(x) * 2.0 + x)
    compiled = static.CompiledProgram(program, static.BuildStrategy())
    v = rand(4, 3)
    got = static.Executor().run(compiled, feed={"x": v}, fetch_list=[y])[0]
    np.testing.assert_allclose(got, np.tanh(np.exp(v) * 2 + v), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match=r"^\[oar.static.CompiledProgram\]"):
        static.CompiledProgram("main")
