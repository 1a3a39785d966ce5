"""oar.inference: the C++ inference runtime from Python, the C++ example and oar-bench.

Every model of the zoo goes eager -> oar.jit.save -> create_predictor -> run and
must match the eager layer (float32 tight, bfloat16 loose), with graph passes and
the memory planner on and off. References are the eager layers' outputs, never the
runtime's own.
"""
import os
import re
import subprocess
import threading

import numpy as np
import pytest

import oar
import oar.models as LM
from oar.inference import Config, DataType, PrecisionType, create_predictor
from oar.static import InputSpec
from oar.vision import models as V

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build", "release")
RNG = np.random.default_rng(7)


def _tiny_gpt():
    return LM.GPTForCausalLM(LM.GPTConfig(
        vocab_size=37, max_position_embeddings=12, hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))


def _tiny_bert():
    return LM.BertModel(LM.BertConfig(
        vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=24,
        max_position_embeddings=10, type_vocab_size=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))


def _images(c, hw):
    return lambda b: [RNG.standard_normal((b, c, hw, hw)).astype("float32")]


def _ids(vocab, seq):
    return lambda b: [RNG.integers(0, vocab, (b, seq)).astype("int64")]


# name -> (builder, input specs, input maker(batch))
ZOO = {
    "lenet": (lambda: V.LeNet(), [InputSpec([None, 1, 28, 28], "float32", "x")], _images(1, 28)),
    "resnet18": (lambda: V.resnet18(num_classes=10), [InputSpec([None, 3, 32, 32], "float32", "x")], _images(3, 32)),
    "mobilenetv2": (lambda: V.mobilenet_v2(scale=0.5, num_classes=10), [InputSpec([None, 3, 32, 32], "float32", "x")],
                    _images(3, 32)),
    # The convolutional part of VGG-11 (its 4096-wide classifier alone is 400 MB of weights).
    "vgg11": (lambda: V.vgg11(num_classes=0), [InputSpec([None, 3, 32, 32], "float32", "x")], _images(3, 32)),
    "gpt": (_tiny_gpt, [InputSpec([None, 8], "int64", "input_ids")], _ids(37, 8)),
    "bert": (_tiny_bert, [InputSpec([None, 8], "int64", "input_ids")], _ids(40, 8)),
}


def _as_list(out):
    if isinstance(out, (list, tuple)):
        return [o.numpy() for o in out]
    return [out.numpy()]


class Saved:
    def __init__(self, name, prefix, net, make):
        self.name, self.prefix, self.net, self.make = name, prefix, net, make

    def eager(self, inputs):
        with oar.no_grad():
            return _as_list(self.net(*[oar.to_tensor(x) for x in inputs]))


_saved = {}


@pytest.fixture(scope="module", params=list(ZOO))
def zoo(request, tmp_path_factory):
    name = request.param
    if name not in _saved:
        build, spec, make = ZOO[name]
        oar.seed(0)
        net = build()
        net.eval()
        prefix = str(tmp_path_factory.mktemp(name) / name)
        oar.jit.save(net, prefix, input_spec=spec)
        _saved[name] = Saved(name, prefix, net, make)
    return _saved[name]


def _predictor(prefix, ir_optim=True, memory_optim=True, bf16=False, threads=0):
    c = Config(prefix)
    c.switch_ir_optim(ir_optim)
    c.enable_memory_optim(memory_optim)
    if bf16:
        c.enable_mkldnn_bfloat16()
    if threads:
        c.set_cpu_math_library_num_threads(threads)
    c.disable_glog_info()
    return create_predictor(c)


def _run(p, inputs):
    for name, x in zip(p.get_input_names(), inputs):
        h = p.get_input_handle(name)
        h.reshape(list(x.shape))
        h.copy_from_cpu(x)
    assert p.run() is True
    return [p.get_output_handle(n).copy_to_cpu() for n in p.get_output_names()]


def _close(got, ref, rel):
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g.shape == r.shape and g.dtype == r.dtype, (g.shape, r.shape, g.dtype, r.dtype)
        scale = max(float(np.abs(r).max()), 1e-3)
        err = float(np.abs(g.astype("float64") - r).max())
        assert err <= rel * scale, f"max error {err} exceeds {rel} x {scale}"


@pytest.mark.parametrize("ir_optim, memory_optim", [(True, True), (True, False), (False, True), (False, False)])
def test_zoo_round_trip_float32(zoo, ir_optim, memory_optim):
    p = _predictor(zoo.prefix, ir_optim, memory_optim)
    dynamic = ZOO[zoo.name][1][0].shape[0] in (None, -1)
    for batch in (2, 3, 2) if dynamic else (2, 2):  # dynamic batch, and back to a cached plan
        x = zoo.make(batch)
        _close(_run(p, x), zoo.eager(x), 2e-5)


@pytest.mark.parametrize("deleted", Config.pass_names())
def test_zoo_round_trip_with_one_pass_deleted(zoo, deleted):
    c = Config(zoo.prefix)
    c.delete_pass(deleted)
    p = create_predictor(c)
    x = zoo.make(2)
    _close(_run(p, x), zoo.eager(x), 2e-5)


def test_delete_pass_leaves_that_pass_out(resnet):
    _, prefix = resnet
    x = RNG.standard_normal((2, 3, 32, 32)).astype("float32")

    def stats(*deleted):
        c = Config(prefix)
        for name in deleted:
            c.delete_pass(name)
        p = create_predictor(c)
        _run(p, [x])
        return p.memory_stats()

    everything = stats()
    # Batch norms left unfolded keep their statistics as weights; convolutions
    # left without their activation give each relu a buffer of its own.
    assert stats("fold_conv_batch_norm")["weight_bytes"] > everything["weight_bytes"]
    assert stats("fuse_conv_activation")["unplanned_bytes"] > everything["unplanned_bytes"]


def test_delete_pass_bad_names():
    c = Config("m")
    with pytest.raises(ValueError, match=r"^\[oar.inference.Config.delete_pass\] no graph pass is named 'fc_fuse'; "
                                         r"the passes are .*fuse_attention"):
        c.delete_pass("fc_fuse")
    with pytest.raises(TypeError, match=r"^\[oar.inference.Config.delete_pass\] name must be a str, got int"):
        c.delete_pass(3)
    c.delete_pass("fuse_attention")
    c.delete_pass("fuse_attention")
    assert c.deleted_passes() == ["fuse_attention"]
    assert "deleted_passes: fuse_attention" in c.summary()


def test_zoo_round_trip_bfloat16(zoo):
    p = _predictor(zoo.prefix, bf16=True)
    x = zoo.make(2)
    got, ref = _run(p, x), zoo.eager(x)
    assert all(g.dtype == np.float32 for g in got)
    _close(got, ref, 0.1)
    # bfloat16 is really used: the result is not the float32 one.
    assert any(not np.array_equal(g, r) for g, r in zip(got, ref))


def test_inputs_are_named_by_input_spec(zoo):
    p = _predictor(zoo.prefix)
    assert p.get_input_names() == [s.name for s in ZOO[zoo.name][1]]
    assert p.get_output_names() and all(isinstance(n, str) for n in p.get_output_names())


def _saved_model(tmp_path, net, spec, name="m"):
    prefix = str(tmp_path / name)
    net.eval()
    oar.jit.save(net, prefix, input_spec=spec)
    return prefix


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    oar.seed(1)
    net = V.resnet18(num_classes=10)
    net.eval()
    prefix = str(tmp_path_factory.mktemp("r18") / "r18")
    oar.jit.save(net, prefix, input_spec=[InputSpec([None, 3, 32, 32], "float32", "x")])
    return net, prefix


def test_memory_planner_peak_below_no_planner(resnet):
    net, prefix = resnet
    x = RNG.standard_normal((4, 3, 32, 32)).astype("float32")
    on, off = _predictor(prefix, memory_optim=True), _predictor(prefix, memory_optim=False)
    _run(on, [x])
    _run(off, [x])
    s_on, s_off = on.memory_stats(), off.memory_stats()
    assert s_on["memory_optim"] and not s_off["memory_optim"]
    # Without the planner every intermediate keeps its own buffer for the whole run.
    assert s_off["intermediate_peak_bytes"] >= s_off["unplanned_bytes"] * 0.9
    assert s_on["intermediate_peak_bytes"] < 0.5 * s_off["intermediate_peak_bytes"]
    assert s_on["live_lower_bound_bytes"] <= s_on["planned_bytes"] <= s_on["unplanned_bytes"]
    assert s_on["weight_bytes"] == s_off["weight_bytes"] > 11_000_000 * 4
    # The conv1 output alone (4 x 64 x 16 x 16 float32) must fit in the arena.
    assert s_on["planned_bytes"] >= 4 * 64 * 16 * 16 * 4
    assert s_on["output_bytes"] == 4 * 10 * 4


def test_clone_shares_weights_and_runs_in_threads(resnet):
    net, prefix = resnet
    p = _predictor(prefix, threads=1)
    clones = [p.clone(), p.clone()]
    assert all(c._weights_id() == p._weights_id() for c in clones)
    assert all(c.memory_stats()["weight_bytes"] == p.memory_stats()["weight_bytes"] for c in clones)
    inputs = [RNG.standard_normal((b, 3, 32, 32)).astype("float32") for b in (2, 3)]
    refs = [net(oar.to_tensor(x)).numpy() for x in inputs]
    errors = []

    def work(pred, k):
        try:
            for _ in range(4):
                _close(_run(pred, [inputs[k]]), [refs[k]], 2e-5)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(c, k)) for k, c in enumerate(clones)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    # The original still has its own inputs and outputs.
    with pytest.raises(RuntimeError, match=r"^\[oar.inference.Tensor.copy_to_cpu\]"):
        p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()


def test_run_with_input_list_and_handles_api(tmp_path):
    net = oar.nn.Sequential(oar.nn.Linear(4, 8), oar.nn.GELU(), oar.nn.Linear(8, 3))
    prefix = _saved_model(tmp_path, net, [InputSpec([None, 4], "float32", "feat")])
    p = create_predictor(Config(prefix + ".json"))  # the .json file names the model too
    x = RNG.standard_normal((5, 4)).astype("float32")
    [y] = p.run([x])
    np.testing.assert_allclose(y, net(oar.to_tensor(x)).numpy(), rtol=1e-5, atol=1e-6)
    h = p.get_input_handle("feat")
    assert h.name() == "feat" and h.type() == DataType.FLOAT32 and h.shape() == [5, 4]
    out = p.get_output_handle(p.get_output_names()[0])
    assert out.shape() == [5, 3] and out.type() == DataType.FLOAT32
    # Non-contiguous arrays are copied in as their values.
    xs = RNG.standard_normal((5, 8)).astype("float32")[:, ::2]
    [y2] = p.run([xs])
    np.testing.assert_allclose(y2, net(oar.to_tensor(np.ascontiguousarray(xs))).numpy(), rtol=1e-5, atol=1e-6)
    # A zero-size batch runs and gives an empty result.
    [y0] = p.run([np.zeros((0, 4), "float32")])
    assert y0.shape == (0, 3)
    # Config(prog_file, params_file) and Config(folder) name the same model.
    p2 = create_predictor(Config(prefix + ".json", prefix + ".safetensors"))
    np.testing.assert_array_equal(p2.run([x])[0], y)
    p3 = create_predictor(Config(str(tmp_path)))
    np.testing.assert_array_equal(p3.run([x])[0], y)


class _ViewOut(oar.nn.Layer):
    def forward(self, x):
        return x.transpose([1, 0]), x.reshape([-1]), x * 2.0


def test_outputs_that_are_views_are_own_copies(tmp_path):
    prefix = _saved_model(tmp_path, _ViewOut(), [InputSpec([None, 3], "float32", "x")])
    p = create_predictor(Config(prefix))
    x = np.arange(6, dtype="float32").reshape(2, 3)
    t, r, d = p.run([x])
    np.testing.assert_array_equal(t, x.T)
    np.testing.assert_array_equal(r, x.reshape(-1))
    np.testing.assert_array_equal(d, 2 * x)
    x2 = x + 10
    t2, _, _ = p.run([x2])
    np.testing.assert_array_equal(t, x.T)  # earlier results are not overwritten
    np.testing.assert_array_equal(t2, x2.T)


class _ConvFanOut(oar.nn.Layer):
    """Convolution outputs read in each way the runtime's layout hand-off tells apart."""

    def __init__(self):
        super().__init__()

        def conv(i, o, k=3, s=1, g=1):
            return oar.nn.Conv2D(i, o, k, s, padding=k // 2, groups=g)

        self.c0, self.c1, self.c2 = conv(3, 8), conv(8, 8), conv(8, 8, 1)
        self.c3, self.c4, self.c5 = conv(8, 8, 3, 1, 8), conv(8, 16, 3, 2), conv(16, 16)
        self.c6, self.c7, self.c8 = conv(16, 16), conv(16, 16), conv(16, 4, 1)
        self.c9, self.c10 = conv(16, 8), conv(8, 8, 1)
        self.pool_avg = oar.nn.AvgPool2D(3, 1, padding=1, exclusive=False)
        self.pool = oar.nn.MaxPool2D(2)
        self.pool_pad = oar.nn.MaxPool2D(3, 2, padding=1)
        self.pool_ceil = oar.nn.MaxPool2D(2, 2, ceil_mode=True)

    def forward(self, x):
        relu = oar.nn.functional.relu
        a = relu(self.c0(x))  # read by c1 (as input and as residual) and by c2
        b = relu(self.c1(a) + a)  # input and residual are one value
        c = self.c2(a) + b  # b is read again below: a residual that lives on
        d = relu(self.c3(b) + c)  # depthwise; its residual c dies here
        e = relu(self.c4(d))  # d is also a program output
        f = self.c5(e) + e  # e is also read by a pooling
        g = self.pool_pad(relu(self.c6(f)))  # pools a kept layout, keeps its output
        h = relu(self.c7(g) + g)
        k = self.pool_ceil(h)  # odd size: ceil_mode's last window is clipped
        m = self.c10(self.pool_avg(relu(self.c9(f))))  # padding counted in the average
        n = oar.nn.functional.adaptive_avg_pool2d(relu(self.c9(e)), 1)  # one window per plane
        return f, self.pool(e), d, self.c8(k), m, n


@pytest.mark.parametrize("memory_optim", [True, False])
def test_convolutions_reading_kept_layouts_match_eager(tmp_path, memory_optim):
    oar.seed(3)
    net = _ConvFanOut()
    prefix = _saved_model(tmp_path, net, [InputSpec([None, 3, 12, 12], "float32", "x")])
    p = _predictor(prefix, memory_optim=memory_optim)
    for batch in (2, 3, 2):
        x = RNG.standard_normal((batch, 3, 12, 12)).astype("float32")
        ref = [t.numpy() for t in net(oar.to_tensor(x))]
        _close(_run(p, [x]), ref, 2e-5)


def test_bfloat16_convolution_chain_matches_eager(tmp_path):
    # bfloat16 convolutions run on float32 copies: the layout hand-off between
    # the convolutions must leave those temporaries alone.
    class Net(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.body = oar.nn.Sequential(oar.nn.Conv2D(3, 8, 3, padding=1), oar.nn.ReLU(),
                                          oar.nn.Conv2D(8, 8, 3, padding=1), oar.nn.ReLU(), oar.nn.Conv2D(8, 4, 1))

        def forward(self, x):
            return self.body(x.astype("bfloat16")).astype("float32")

    oar.seed(4)
    net = Net()
    net.body.to(dtype="bfloat16")
    prefix = _saved_model(tmp_path, net, [InputSpec([None, 3, 10, 10], "float32", "x")])
    x = RNG.standard_normal((2, 3, 10, 10)).astype("float32")
    ref = net(oar.to_tensor(x)).numpy()
    _close(_run(_predictor(prefix), [x]), [ref], 1e-2)


def test_scalar_and_int_inputs(tmp_path):
    class F(oar.nn.Layer):
        def forward(self, a, b):
            return (a * 3).sum() + b.astype("float32").mean()

    prefix = _saved_model(tmp_path, F(), [InputSpec([], "float32", "a"), InputSpec([None], "int64", "b")])
    p = create_predictor(Config(prefix))
    a, b = np.array(1.5, dtype="float32"), np.array([1, 2, 6], dtype="int64")
    [y] = p.run([a, b])
    assert y.shape == () and abs(float(y) - (4.5 + 3.0)) < 1e-6


def test_config_settings():
    c = Config("m")
    assert (c.ir_optim(), c.memory_optim_enabled(), c.precision()) == (True, True, PrecisionType.Float32)
    c.set_precision(PrecisionType.Bfloat16)
    assert c.mkldnn_bfloat16_enabled()
    c.set_precision("float32")
    assert not c.mkldnn_bfloat16_enabled()
    with pytest.raises(NotImplementedError, match=r"^\[oar.inference.Config.set_precision\]"):
        c.set_precision(PrecisionType.Int8)
    with pytest.raises(ValueError, match=r"^\[oar.inference.Config.set_cpu_math_library_num_threads\]"):
        c.set_cpu_math_library_num_threads(-2)
    with pytest.raises(TypeError, match=r"^\[oar.inference.Config"):
        c.set_cpu_math_library_num_threads("2")
    with pytest.raises(TypeError, match=r"^\[oar.inference.create_predictor\]"):
        create_predictor("m")
    c.enable_mkldnn()
    assert c.mkldnn_enabled()
    assert "ir_optim: True" in c.summary()


@pytest.fixture
def mlp(tmp_path):
    net = oar.nn.Sequential(oar.nn.Linear(4, 8), oar.nn.ReLU(), oar.nn.Linear(8, 3))
    return net, _saved_model(tmp_path, net, [InputSpec([None, 4], "float32", "x")])


def test_bad_inputs_raise_typed_errors(mlp):
    _, prefix = mlp
    p = create_predictor(Config(prefix))
    with pytest.raises(ValueError, match=r"^\[oar.inference.Predictor.get_input_handle\] no input named 'y'"):
        p.get_input_handle("y")
    with pytest.raises(ValueError, match=r"^\[oar.inference.Predictor.get_output_handle\]"):
        p.get_output_handle("nope")
    h = p.get_input_handle("x")
    with pytest.raises(TypeError, match=r"^\[oar.inference.Tensor.copy_from_cpu\] input 'x' holds float32"):
        h.copy_from_cpu(np.ones((2, 4), "float64"))
    with pytest.raises(ValueError, match=r"^\[oar.inference.Tensor.copy_from_cpu\] input 'x' expects shape"):
        h.copy_from_cpu(np.ones((2, 4, 1), "float32"))
    with pytest.raises(ValueError, match=r"^\[oar.inference.Tensor.copy_from_cpu\]"):
        h.copy_from_cpu(np.ones((2, 5), "float32"))
    with pytest.raises(ValueError, match=r"^\[oar.inference.Tensor.reshape\]"):
        h.reshape([2, -1])
    with pytest.raises(TypeError, match=r"^\[oar.inference.Tensor.copy_from_cpu\]"):
        h.copy_from_cpu([[1.0, 2.0, 3.0, 4.0]])
    with pytest.raises(ValueError, match=r"^\[oar.inference.Predictor.run\] input 'x' has no data"):
        p.run()
    out = p.get_output_handle(p.get_output_names()[0])
    with pytest.raises(RuntimeError, match=r"^\[oar.inference.Tensor.copy_to_cpu\] output .* call Predictor.run"):
        out.copy_to_cpu()
    with pytest.raises(ValueError, match=r"^\[oar.inference.Tensor.reshape\] .* is an output"):
        out.reshape([1, 3])
    with pytest.raises(ValueError, match=r"^\[oar.inference.Predictor.run\] the model takes 1 input"):
        p.run([np.ones((1, 4), "float32")] * 2)
    # After an error the predictor still works.
    h.copy_from_cpu(np.ones((2, 4), "float32"))
    assert p.run() and out.copy_to_cpu().shape == (2, 3)


def test_missing_and_corrupted_files(mlp, tmp_path):
    _, prefix = mlp
    with pytest.raises(ValueError, match=r"^\[oar.inference.create_predictor\] .*nothere.json"):
        create_predictor(Config(str(tmp_path / "nothere")))
    data = open(prefix + ".safetensors", "rb").read()
    bad = str(tmp_path / "bad")
    program = open(prefix + ".json").read()

    def write(weights, prog=program):
        with open(bad + ".json", "w") as f:
            f.write(prog)
        with open(bad + ".safetensors", "wb") as f:
            f.write(weights)

    write(data[: len(data) - 7])  # truncated data section
    with pytest.raises(ValueError, match=r"^\[oar.inference.create_predictor\] .*bad.safetensors: .*outside"):
        create_predictor(Config(bad))
    write(data[:5])
    with pytest.raises(ValueError, match=r"^\[oar.inference.create_predictor\] .*8-byte header length"):
        create_predictor(Config(bad))
    write((1 << 62).to_bytes(8, "little") + data[8:])
    with pytest.raises(ValueError, match=r"^\[oar.inference.create_predictor\] .*exceeds"):
        create_predictor(Config(bad))
    write(data.replace(b'"F32"', b'"Q32"', 1))
    with pytest.raises(ValueError, match=r"dtype 'Q32'"):
        create_predictor(Config(bad))
    # Weights of another model: a parameter with the wrong shape.
    other = oar.nn.Sequential(oar.nn.Linear(4, 9), oar.nn.ReLU(), oar.nn.Linear(9, 3))
    other_prefix = _saved_model(tmp_path, other, [InputSpec([None, 4], "float32", "x")], name="other")
    write(open(other_prefix + ".safetensors", "rb").read())
    with pytest.raises(ValueError, match=r"^\[oar.inference.create_predictor\] .*has type float32\[4, ?9\]"):
        create_predictor(Config(bad))
    os.remove(bad + ".safetensors")
    with pytest.raises(ValueError, match=r"^\[oar.inference.create_predictor\] .*bad.safetensors"):
        create_predictor(Config(bad))
    write(data, program[: len(program) // 2])
    with pytest.raises(ValueError, match=r"^\[oar.inference.create_predictor\] .*bad.json"):
        create_predictor(Config(bad))
    write(data, program.replace('"relu"', '"no_such_op"'))
    with pytest.raises(ValueError, match=r"^\[oar.inference.create_predictor\]"):
        create_predictor(Config(bad))


def test_corrupted_weights_fuzz_never_crash(mlp, tmp_path):
    _, prefix = mlp
    data = bytearray(open(prefix + ".safetensors", "rb").read())
    header_len = int.from_bytes(data[:8], "little")
    bad = str(tmp_path / "fz")
    with open(bad + ".json", "w") as f:
        f.write(open(prefix + ".json").read())
    rng = np.random.default_rng(0)
    for _ in range(60):
        b = bytearray(data)
        for _ in range(int(rng.integers(1, 4))):
            b[int(rng.integers(0, 8 + header_len))] = int(rng.integers(0, 256))
        with open(bad + ".safetensors", "wb") as f:
            f.write(bytes(b))
        try:
            create_predictor(Config(bad)).run([np.ones((1, 4), "float32")])
        except ValueError as e:
            assert str(e).startswith("[oar.inference.")


def _binary(name):
    path = os.path.join(BUILD, name)
    if not os.path.isfile(path):
        pytest.skip(f"{name} is not built (cmake --build {BUILD})")
    return path


def test_cpp_example_matches_eager(resnet, tmp_path):
    net, prefix = resnet
    exe = _binary("oar_infer_example")
    x = RNG.standard_normal((2, 3, 32, 32)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    ref = net(oar.to_tensor(x)).numpy()
    for flags in ([], ["--no-memory-optim", "--no-ir-optim", "--threads", "1"]):
        out = str(tmp_path / "y")
        r = subprocess.run([exe, prefix, "--input", f"x={tmp_path / 'x.npy'}", "--out", out] + flags,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert re.search(r"^out0: shape \[2, 10\] sum ", r.stdout, re.M), r.stdout
        _close([np.load(out + "_out0.npy")], [ref], 2e-5)
    r = subprocess.run([exe, prefix, "--bf16", "--shape", "x:1x3x32x32"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "shape [1, 10]" in r.stdout, r.stderr
    r = subprocess.run([exe, str(tmp_path / "missing")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.startswith("[oar.inference.create_predictor]")


def test_cpp_example_runs_every_zoo_model(zoo, tmp_path):
    # The C++ example (no Python in the process) against eager, for every model of the zoo.
    exe = _binary("oar_infer_example")
    inputs = zoo.make(3)
    args = []
    for spec, x in zip(ZOO[zoo.name][1], inputs):
        np.save(tmp_path / f"{spec.name}.npy", x)
        args += ["--input", f"{spec.name}={tmp_path / (spec.name + '.npy')}"]
    out = str(tmp_path / "y")
    r = subprocess.run([exe, zoo.prefix, "--out", out] + args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    ref = zoo.eager(inputs)
    got = [np.load(f"{out}_out{i}.npy") for i in range(len(ref))]
    _close(got, ref, 2e-5)


def test_oar_bench_reports_latency_and_throughput(mlp):
    _, prefix = mlp
    exe = _binary("oar-bench")
    r = subprocess.run([exe, prefix, "--shape", "x:8x4", "--warmup", "2", "--iters", "20", "--threads", "1"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    m = re.search(r"^latency_ms: p50 ([\d.]+)  p90 ([\d.]+)  p99 ([\d.]+)  mean ([\d.]+)", r.stdout, re.M)
    assert m, r.stdout
    p50, p90, p99 = (float(v) for v in m.groups()[:3])
    assert 0 < p50 <= p90 <= p99
    t = re.search(r"^throughput: ([\d.]+) samples/s \(batch 8\)", r.stdout, re.M)
    assert t and float(t.group(1)) > 0, r.stdout
    assert re.search(r"^inputs: x:8x4$", r.stdout, re.M)
    assert re.search(r"^memory_bytes: weights \d+  intermediate_peak \d+  planned \d+  without_planner \d+",
                     r.stdout, re.M)
    r = subprocess.run([exe, prefix], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "dynamic dim" in r.stderr
    r = subprocess.run([exe, prefix, "--shape", "x:8x4", "--iters", "zero"], capture_output=True, text=True)
    assert r.returncode == 2 and "--iters" in r.stderr


def test_run_ignores_the_callers_autocast_and_grad_state(mlp):
    net, prefix = mlp
    p = create_predictor(Config(prefix))
    x = RNG.standard_normal((3, 4)).astype("float32")
    ref = net(oar.to_tensor(x)).numpy()
    with oar.amp.auto_cast(dtype="bfloat16"):
        got = p.run([x])[0]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    with oar.enable_grad():
        assert p.run([x])[0].dtype == np.float32


class _Identity(oar.nn.Layer):
    def forward(self, x):
        return x, x


def test_outputs_that_alias_inputs_or_each_other(tmp_path):
    prefix = _saved_model(tmp_path, _Identity(), [InputSpec([None, 2], "float32", "x")])
    p = create_predictor(Config(prefix))
    x = np.array([[1, 2], [3, 4]], dtype="float32")
    a, b = p.run([x])
    np.testing.assert_array_equal(a, x)
    np.testing.assert_array_equal(b, x)
    assert p.memory_stats()["output_bytes"] == 2 * x.nbytes


class _Nonzero(oar.nn.Layer):
    def forward(self, x):
        return oar.nonzero(x > 0).astype("float32").sum() + x.mean()


@pytest.mark.parametrize("memory_optim", [True, False])
def test_data_dependent_shapes_are_sized_at_run_time(tmp_path, memory_optim):
    prefix = _saved_model(tmp_path, _Nonzero(), [InputSpec([3, 4], "float32", "x")])
    c = Config(prefix)
    c.enable_memory_optim(memory_optim)
    p = create_predictor(c)
    for _ in range(3):  # a different number of nonzeros each time
        x = RNG.standard_normal((3, 4)).astype("float32")
        idx = np.argwhere(x > 0)
        [y] = p.run([x])
        np.testing.assert_allclose(y, idx.sum() + x.mean(), rtol=1e-6)


def test_public_header_alone_builds_the_example(resnet, tmp_path):
    """include/oar/inference.h needs no internal header and no C++20: a user's
    program compiles against it alone and links liboar_inference."""
    import shutil

    lib = _binary("liboar_inference.so")
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    exe = str(tmp_path / "infer")
    r = subprocess.run([cxx, "-std=c++17", "-O1", "-I", os.path.join(ROOT, "include"),
                        os.path.join(ROOT, "examples", "cpp", "infer.cpp"), "-L", BUILD, "-loar_inference",
                        f"-Wl,-rpath,{os.path.dirname(lib)}", "-o", exe], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    net, prefix = resnet
    r = subprocess.run([exe, prefix, "--shape", "x:1x3x32x32"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("out0: shape [1, 10]"), r.stderr


def _shared_libraries(path):
    """The shared libraries the dynamic loader resolves for `path`, and the
    symbols it cannot resolve (ldd -r)."""
    r = subprocess.run(["ldd", "-r", path], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    text = r.stdout + r.stderr
    libs = {line.split()[0] for line in text.splitlines() if "=>" in line}
    undefined = [line for line in text.splitlines() if "undefined symbol" in line]
    return libs, undefined


def test_runtime_links_without_autograd_or_python():
    # The deployed runtime (the C++ example, oar-bench) loads the core and the
    # runtime only: no autograd engine, no Python, and nothing left unresolved.
    for name in ("oar_infer_example", "oar-bench", "liboar_inference.so", "liboar.so"):
        libs, undefined = _shared_libraries(_binary(name))
        assert not undefined, (name, undefined[:5])
        assert not [lib for lib in libs if "autograd" in lib or "python" in lib], (name, sorted(libs))
    libs, _ = _shared_libraries(_binary("oar_infer_example"))
    assert {"liboar.so", "liboar_inference.so"} <= libs
    # The engine's entry points are defined in liboar_autograd, not in the core.
    r = subprocess.run(["nm", "-DC", "--defined-only", _binary("liboar.so")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "oar::dispatch(" in r.stdout
    assert "oar::run_backward(" not in r.stdout and "oar::record_op(" not in r.stdout
    libs, undefined = _shared_libraries(_binary("liboar_autograd.so"))
    assert not undefined and "liboar.so" in libs


def test_a_program_saved_in_training_mode_is_refused(tmp_path):
    # Training-mode batch norm updates its running statistics: the predictor's weights are read-only.
    net = oar.nn.Sequential(oar.nn.Conv2D(1, 2, 3), oar.nn.BatchNorm2D(2))
    net.train()
    prefix = str(tmp_path / "bn_train")
    oar.jit.save(net, prefix, input_spec=[InputSpec([None, 1, 5, 5], "float32", "x")])
    with pytest.raises(ValueError, match=r"updates 2 of its parameters in place .*layer.eval\(\)"):
        create_predictor(Config(prefix))
