"""oar.inference runs programs with control flow: cond, switch_case, while_loop
and PyLayer regions, nested, with shapes that change from one iteration to the
next. Each model goes to_static -> oar.jit.save -> create_predictor (and the C++
example, with no Python in the process) and must match the eager layer for
inputs that take every branch and different iteration counts."""
import os
import subprocess

import numpy as np
import pytest

import oar
from oar.autograd import PyLayer
from oar.inference import Config, create_predictor
from oar.static import InputSpec, nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build", "release")
RNG = np.random.default_rng(11)
MODES = [(True, True), (True, False), (False, True), (False, False)]  # (ir_optim, memory_optim)


class CondNet(oar.nn.Layer):
    """A branch on the data between two layers; one branch reuses a value from before the branch."""

    def __init__(self):
        super().__init__()
        self.fc1 = oar.nn.Linear(4, 6)
        self.fc2 = oar.nn.Linear(6, 3)

    def forward(self, x):
        h = oar.nn.functional.relu(self.fc1(x))
        h = nn.cond(x.mean() > 0, lambda: self.fc2(h) * 2.0, lambda: self.fc2(h - 1.0) + x[:, :3])
        return h.tanh()


class PassThroughNet(oar.nn.Layer):
    """A branch yields a value from before the branch unchanged (or a loop runs no iteration): the
    result must not stay in the memory plan's arena, whose bytes later results reuse."""

    def __init__(self):
        super().__init__()
        self.fc1 = oar.nn.Linear(4, 4)
        self.fc2 = oar.nn.Linear(4, 4)

    def forward(self, x, n):
        h = self.fc1(x).exp()
        y = nn.cond(x.mean() > 0, lambda: h, lambda: h * 2.0)
        y = nn.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v + 1.0), [oar.zeros_like(n), y])[1]
        z = (self.fc2(x).tanh() + 1.0) * 3.0
        return oar.concat([y, z.exp() - z], axis=1)


class ConvNet(oar.nn.Layer):
    """Convolutions before, inside and after a branch: the graph passes fold and fuse them in every block, and
    a convolution's output read by a branch must not be left in a kernel's private layout."""

    def __init__(self):
        super().__init__()
        self.conv1 = oar.nn.Conv2D(3, 8, 3, padding=1)
        self.bn = oar.nn.BatchNorm2D(8)
        self.conv2 = oar.nn.Conv2D(8, 8, 3, padding=1)
        self.conv3 = oar.nn.Conv2D(8, 4, 3, padding=1)

    def forward(self, x):
        h = oar.nn.functional.relu(self.bn(self.conv1(x)))
        p = oar.nn.functional.max_pool2d(h, 2)
        h = nn.cond(x.mean() > 0, lambda: oar.nn.functional.relu(self.conv2(p)),
                    lambda: oar.nn.functional.avg_pool2d(h, 2) + p)
        return self.conv3(h).flatten(1)


class SwitchNet(oar.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = oar.nn.Linear(3, 3)

    def forward(self, x, k):
        y = self.fc(x)
        return nn.switch_case(k, {0: lambda: y + 1.0, 1: lambda: y * y, 3: lambda: oar.exp(y)},
                              default=lambda: -y)


class GrowNet(oar.nn.Layer):
    """A loop that appends a row per iteration: the carried tensor's first dim is -1."""

    def __init__(self):
        super().__init__()
        self.fc = oar.nn.Linear(2, 2)

    def forward(self, x, n):
        def body(i, acc):
            return i + 1, oar.concat([acc, self.fc(acc[-1:]) * 0.5], axis=0)

        return nn.while_loop(lambda i, acc: i < n, body, [oar.zeros_like(n), x])[1]


class NestedNet(oar.nn.Layer):
    """A cond inside a loop body, a switch_case inside that cond, and a loop inside a cond branch."""

    def __init__(self):
        super().__init__()
        self.fc = oar.nn.Linear(3, 3)

    def forward(self, x, n):
        def body(i, acc):
            def odd():
                return nn.switch_case((i % 4).astype("int64"), [lambda: acc + 1.0, lambda: acc * 0.5],
                                      default=lambda: self.fc(acc))

            return i + 1, nn.cond(i % 2 == 1, odd, lambda: acc - x * 0.5)

        y = nn.while_loop(lambda i, acc: i < n, body, [oar.zeros_like(n), x])[1]

        def count_down():
            return nn.while_loop(lambda v: v.sum() > 1.0, lambda v: [v * 0.5], [y.abs() + 1.0])[0]

        return nn.cond(y.mean() > 0, count_down, lambda: y * 3.0)


class Cube(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * 3.0 * x * x


class PyLayerNet(oar.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = oar.nn.Linear(3, 3)

    def forward(self, x):
        y = Cube.apply(self.fc(x))
        return nn.cond(y.sum() > 0, lambda: Cube.apply(y) + 1.0, lambda: y)


def _save(net, specs, tmp_path, name):
    oar.seed(0)
    net.eval()
    prefix = str(tmp_path / name)
    oar.jit.save(oar.jit.to_static(net, input_spec=specs), prefix, input_spec=specs)
    return prefix


def _predictor(prefix, ir_optim=True, memory_optim=True):
    c = Config(prefix)
    c.switch_ir_optim(ir_optim)
    c.enable_memory_optim(memory_optim)
    c.disable_glog_info()
    return create_predictor(c)


def _eager(net, inputs):
    with oar.no_grad():
        return net(*[oar.to_tensor(a) for a in inputs]).numpy()


def _check(prefix, net, cases):
    for ir_optim, memory_optim in MODES:
        p = _predictor(prefix, ir_optim, memory_optim)
        for inputs in cases + cases[:1]:  # and back to a cached plan
            got = p.run(list(inputs))
            assert len(got) == 1
            ref = _eager(net, inputs)
            assert got[0].shape == ref.shape and got[0].dtype == ref.dtype, (got[0].shape, ref.shape)
            np.testing.assert_allclose(got[0], ref, rtol=2e-5, atol=2e-6)


def _x(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype("float32")


@pytest.fixture(scope="module")
def cond_model(tmp_path_factory):
    oar.seed(1)
    net = CondNet()
    return net, _save(net, [InputSpec([None, 4], "float32", "x")], tmp_path_factory.mktemp("cond"), "cond")


def test_cond_takes_both_branches(cond_model):
    net, prefix = cond_model
    pos, neg = np.abs(_x(3, 4)) + 0.1, -np.abs(_x(2, 4)) - 0.1  # one input per branch
    _check(prefix, net, [(pos,), (neg,), (_x(1, 4),)])


def test_results_that_alias_planned_buffers_are_copied_out(tmp_path):
    oar.seed(7)
    net = PassThroughNet()
    prefix = _save(net, [InputSpec([None, 4], "float32", "x"), InputSpec([], "int64", "n")], tmp_path, "alias")
    pos, neg = np.abs(_x(3, 4)) + 0.1, -np.abs(_x(3, 4)) - 0.1
    _check(prefix, net, [(a, np.array(n, "int64")) for a in (pos, neg) for n in (0, 2)])


def test_convolutions_around_and_inside_a_branch(tmp_path):
    oar.seed(8)
    net = ConvNet()
    prefix = _save(net, [InputSpec([None, 3, 8, 8], "float32", "x")], tmp_path, "conv")
    pos, neg = np.abs(_x(2, 3, 8, 8)) + 0.1, -np.abs(_x(1, 3, 8, 8)) - 0.1
    _check(prefix, net, [(pos,), (neg,)])


def test_switch_case_every_key_and_the_default(tmp_path):
    oar.seed(2)
    net = SwitchNet()
    prefix = _save(net, [InputSpec([None, 3], "float32", "x"), InputSpec([1], "int64", "k")], tmp_path, "switch")
    _check(prefix, net, [(_x(2, 3), np.array([k], "int64")) for k in (0, 1, 3, 2, -7)])


def test_while_loop_grows_a_tensor(tmp_path):
    oar.seed(3)
    net = GrowNet()
    prefix = _save(net, [InputSpec([None, 2], "float32", "x"), InputSpec([], "int64", "n")], tmp_path, "grow")
    cases = [(_x(r, 2), np.array(n, "int64")) for r, n in ((1, 0), (2, 1), (1, 5), (3, 12))]
    _check(prefix, net, cases)
    got = _predictor(prefix).run(list(cases[3]))[0]
    assert got.shape == (15, 2)


def test_nested_control_flow(tmp_path):
    oar.seed(4)
    net = NestedNet()
    prefix = _save(net, [InputSpec([None, 3], "float32", "x"), InputSpec([], "int64", "n")], tmp_path, "nested")
    text = open(prefix + ".json").read()
    assert text.count('"while_loop"') == 2 and text.count('"cond"') == 2 and '"switch_case"' in text
    cases = [(_x(2, 3, scale=s) * sign, np.array(n, "int64"))
             for s, n in ((1.0, 0), (3.0, 1), (0.5, 2), (2.0, 7), (1.0, 9)) for sign in (1.0, -1.0)]
    # The outer cond takes both branches: its loop (positive results) and the scaling (mean <= 0).
    assert {bool(_eager(net, c).mean() > 0) for c in cases} == {True, False}
    _check(prefix, net, cases)


def test_py_layer_region_runs_its_forward(tmp_path):
    oar.seed(5)
    net = PyLayerNet()
    prefix = _save(net, [InputSpec([None, 3], "float32", "x")], tmp_path, "pylayer")
    assert '"py_layer"' in open(prefix + ".json").read()
    _check(prefix, net, [(_x(2, 3),), (_x(4, 3) - 2.0,), (_x(1, 3) + 2.0,)])


def test_bfloat16_rewrite_keeps_branches_working(cond_model):
    # Layers before and inside the branches: the rewrite casts the top-level ones, region ops keep float32.
    net, prefix = cond_model
    c = Config(prefix)
    c.enable_mkldnn_bfloat16()
    p = create_predictor(c)
    for x in (np.abs(_x(3, 4)) + 0.1, -np.abs(_x(2, 4)) - 0.1):
        got, ref = p.run([x])[0], _eager(net, [x])
        assert got.shape == ref.shape and got.dtype == ref.dtype
        assert np.abs(got - ref).max() <= 3e-2 * max(np.abs(ref).max(), 1e-3)


def test_predictor_handles_and_clone(cond_model):
    net, prefix = cond_model
    p = _predictor(prefix)
    q = p.clone()
    x = _x(5, 4, scale=3.0)
    h = p.get_input_handle(p.get_input_names()[0])
    h.reshape([5, 4])
    h.copy_from_cpu(x)
    assert p.run() is True
    got = p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()
    np.testing.assert_allclose(got, _eager(net, [x]), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(q.run([x])[0], got, rtol=0, atol=0)
    stats = p.memory_stats()
    assert isinstance(stats, dict) and stats


def test_loop_limit_is_a_typed_error(tmp_path):
    oar.seed(3)
    net = GrowNet()
    prefix = _save(net, [InputSpec([None, 2], "float32", "x"), InputSpec([], "int64", "n")], tmp_path, "grow")
    p = _predictor(prefix)
    nn.set_max_loop_iterations(4)
    try:
        with pytest.raises(RuntimeError, match=r"^\[oar\.inference\.[A-Za-z_.]+\] while_loop ran 4 iterations"):
            p.run([_x(1, 2), np.array(5, "int64")])
        assert p.run([_x(1, 2), np.array(4, "int64")])[0].shape == (5, 2)
    finally:
        nn.set_max_loop_iterations(1000000)


def _rewrite(prefix, tmp_path, edit):
    import json
    import shutil
    doc = json.load(open(prefix + ".json"))
    edit(doc)
    out = str(tmp_path / "edited")
    json.dump(doc, open(out + ".json", "w"))
    shutil.copy(prefix + ".safetensors", out + ".safetensors")
    return out


def test_malformed_control_flow_is_rejected_with_the_api_name(cond_model, tmp_path):
    _, prefix = cond_model

    def drop_region(doc):
        op = next(o for o in doc["ops"] if o["op"] == "cond")
        op["regions"] = op["regions"][:1]

    bad = _rewrite(prefix, tmp_path, drop_region)
    with pytest.raises(ValueError, match=r"^\[oar\.inference\.create_predictor\] .*cond"):
        _predictor(bad)


def test_jit_load_runs_and_trains_through_saved_control_flow(tmp_path):
    oar.seed(6)
    net = NestedNet()
    specs = [InputSpec([None, 3], "float32", "x"), InputSpec([], "int64", "n")]
    prefix = _save(net, specs, tmp_path, "nested")
    loaded = oar.jit.load(prefix)
    for s, n in ((1.0, 0), (2.0, 3), (1.0, 6)):
        x, k = _x(2, 3, scale=s), np.array(n, "int64")
        np.testing.assert_allclose(loaded(oar.to_tensor(x), oar.to_tensor(k)).numpy(), _eager(net, [x, k]),
                                   rtol=2e-5, atol=2e-6)
    # It fine-tunes: gradients reach the loaded weights through the branch and
    # the iterations that ran (n=4: iteration 3 takes the switch's default, the
    # Linear), and match the eager layer's.
    x, k = _x(2, 3), np.array(4, "int64")
    loaded.train()
    loaded(oar.to_tensor(x), oar.to_tensor(k)).sum().backward()
    net(oar.to_tensor(x), oar.to_tensor(k)).sum().backward()
    got = {p.name: p.grad for p in loaded.parameters()}
    for name, p in net.named_parameters():
        assert got[name] is not None and np.abs(p.grad.numpy()).sum() > 0
        np.testing.assert_allclose(got[name].numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-5)
    sgd = oar.optimizer.SGD(learning_rate=0.1, parameters=loaded.parameters())
    before = loaded(oar.to_tensor(x), oar.to_tensor(k)).sum().item()
    for _ in range(3):
        loss = loaded(oar.to_tensor(x), oar.to_tensor(k)).sum()
        loss.backward()
        sgd.step()
        sgd.clear_grad()
    assert loaded(oar.to_tensor(x), oar.to_tensor(k)).sum().item() < before


def test_cpp_example_runs_a_control_flow_model(tmp_path):
    exe = os.path.join(BUILD, "oar_infer_example")
    if not os.path.isfile(exe):
        pytest.skip(f"oar_infer_example is not built (cmake --build {BUILD})")
    oar.seed(4)
    net = NestedNet()
    prefix = _save(net, [InputSpec([None, 3], "float32", "x"), InputSpec([], "int64", "n")], tmp_path, "nested")
    for n in (0, 3, 8):
        x, k = _x(2, 3, scale=2.0), np.array(n, "int64")
        np.save(tmp_path / "x.npy", x)
        np.save(tmp_path / "n.npy", k)
        out = str(tmp_path / "y")
        for flags in ([], ["--no-memory-optim", "--no-ir-optim"]):
            r = subprocess.run([exe, prefix, "--input", f"x={tmp_path / 'x.npy'}", "--input",
                                f"n={tmp_path / 'n.npy'}", "--out", out] + flags,
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr
            np.testing.assert_allclose(np.load(out + "_out0.npy"), _eager(net, [x, k]), rtol=2e-5, atol=2e-6)


class PythonFlowNet(oar.nn.Layer):
    """Plain Python control flow on tensor values, converted by to_static(full_graph=True)."""

    def __init__(self):
        super().__init__()
        self.fc = oar.nn.Linear(3, 3)

    def forward(self, x, n):
        h = self.fc(x)
        if h.mean() > 0:
            h = h * 2.0
        else:
            h = h - 1.0
        i = 0
        while i < n:
            h = h + 0.5
            i += 1
        for _ in range(n):
            h = h * 0.9
            if h.max() > 10.0:
                break
        return h


def test_converted_python_control_flow_runs_in_the_runtime(tmp_path):
    oar.seed(5)
    net = PythonFlowNet()
    net.eval()
    specs = [InputSpec([None, 3], "float32", "x"), InputSpec([], "int64", "n")]
    prefix = str(tmp_path / "pyflow")
    oar.jit.save(oar.jit.to_static(net, input_spec=specs, full_graph=True), prefix, input_spec=specs)
    text = open(prefix + ".json").read()
    assert '"cond"' in text and '"while_loop"' in text
    cases = [(np.abs(_x(2, 3)) + 1.0, np.array(n, "int64")) for n in (0, 2)]
    cases += [(-np.abs(_x(4, 3)) - 1.0, np.array(n, "int64")) for n in (1, 40)]
    _check(prefix, net, cases)
    exe = os.path.join(BUILD, "oar_infer_example")
    if not os.path.isfile(exe):
        pytest.skip(f"oar_infer_example is not built (cmake --build {BUILD})")
    for x, k in cases:  # and with no Python in the process
        np.save(tmp_path / "x.npy", x)
        np.save(tmp_path / "n.npy", k)
        out = str(tmp_path / "y")
        r = subprocess.run([exe, prefix, "--input", f"x={tmp_path / 'x.npy'}", "--input", f"n={tmp_path / 'n.npy'}",
                            "--out", out], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        np.testing.assert_allclose(np.load(out + "_out0.npy"), _eager(net, [x, k]), rtol=2e-5, atol=2e-6)
