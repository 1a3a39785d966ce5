"""oar.jit.save / oar.jit.load and the versioned model format.

Loaded models are checked against NumPy computed from the saved weights and
against the original layer; every malformed file must raise ValueError naming
the file, and random corruptions must never crash the process.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import oar
from nets import MLP
from oar import _C
from oar.static import InputSpec

RNG = np.random.default_rng(11)


def np_mlp(state, x):
    h = np.maximum(x @ state["fc1.weight"] + state["fc1.bias"], 0)
    return h @ state["fc2.weight"] + state["fc2.bias"]


@pytest.fixture
def saved_mlp(tmp_path):
    net = MLP()
    path = str(tmp_path / "mlp")
    oar.jit.save(net, path, input_spec=[InputSpec([None, 4], "float32", name="x")])
    return net, path


def test_mlp_round_trip_matches_numpy(saved_mlp):
    net, path = saved_mlp
    assert os.path.isfile(path + ".json") and os.path.isfile(path + ".safetensors")
    loaded = oar.jit.load(path)
    assert isinstance(loaded, oar.jit.TranslatedLayer) and isinstance(loaded, oar.nn.Layer)
    state = {k: v.numpy() for k, v in net.state_dict().items()}
    assert sorted(loaded.state_dict()) == sorted(state)
    for batch in (1, 6, 13):  # the batch dim was saved dynamic
        x = RNG.standard_normal((batch, 4)).astype("float32")
        got = loaded(oar.to_tensor(x)).numpy()
        np.testing.assert_allclose(got, np_mlp(state, x), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, net(oar.to_tensor(x)).numpy(), rtol=1e-6, atol=1e-7)
    loaded.eval()
    assert not loaded.training
    loaded.train()
    assert loaded.training


def test_saved_weights_are_independent_copies(saved_mlp):
    net, path = saved_mlp
    loaded = oar.jit.load(path)
    w = loaded.state_dict()["fc1.weight"]
    assert w is not net.fc1.weight
    assert not w.stop_gradient and w.trainable


def test_fine_tune_loaded_layer(saved_mlp):
    net, path = saved_mlp
    before_orig = net.fc1.weight.numpy().copy()
    loaded = oar.jit.load(path)
    before = {k: v.numpy().copy() for k, v in loaded.state_dict().items()}
    opt = oar.optimizer.SGD(learning_rate=0.05, parameters=loaded.parameters())
    x = oar.to_tensor(RNG.standard_normal((16, 4)).astype("float32"))
    y = oar.to_tensor(RNG.standard_normal((16, 3)).astype("float32"))
    losses = []
    for _ in range(8):
        loss = ((loaded(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss.numpy()))
    assert losses[-1] < losses[0]
    after = loaded.state_dict()
    for k in before:
        assert not np.allclose(after[k].numpy(), before[k]), k
    # The forward reads the updated weights: it matches NumPy on them.
    state = {k: v.numpy() for k, v in after.items()}
    xn = x.numpy()
    np.testing.assert_allclose(loaded(x).numpy(), np_mlp(state, xn), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(net.fc1.weight.numpy(), before_orig)


def test_save_to_static_layer_without_spec(tmp_path):
    net = oar.jit.to_static(MLP())
    x = oar.to_tensor(RNG.standard_normal((3, 4)).astype("float32"))
    ref = net(x).numpy()
    path = str(tmp_path / "m")
    oar.jit.save(net, path)  # the last traced program (static batch 3)
    np.testing.assert_allclose(oar.jit.load(path)(x).numpy(), ref, rtol=1e-6, atol=1e-7)


def test_save_function_with_tuple_output(tmp_path):
    def f(x, y):
        return x * 2.0 + y, oar.matmul(x, y, transpose_y=True)

    path = str(tmp_path / "f")
    oar.jit.save(oar.jit.to_static(f), path,
                 input_spec=[InputSpec([None, 3], "float64"), InputSpec([None, 3], "float64")])
    g = oar.jit.load(path)
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    out = g(oar.to_tensor(a), oar.to_tensor(b))
    assert isinstance(out, tuple) and len(out) == 2
    np.testing.assert_allclose(out[0].numpy(), a * 2 + b, rtol=1e-12)
    np.testing.assert_allclose(out[1].numpy(), a @ b.T, rtol=1e-12)


def test_save_needs_spec_or_call():
    with pytest.raises(ValueError, match=r"^\[oar.jit.save\]"):
        oar.jit.save(MLP(), "/tmp/never")
    with pytest.raises(TypeError, match=r"^\[oar.jit.save\]"):
        oar.jit.save(42, "/tmp/never", input_spec=[InputSpec([2])])


def test_lenet_round_trip(tmp_path):
    net = oar.vision.models.LeNet()
    net.eval()
    path = str(tmp_path / "lenet")
    # flatten leaves the batch dim to be inferred, so the batch stays dynamic
    oar.jit.save(net, path, input_spec=[InputSpec([None, 1, 28, 28], "float32")])
    loaded = oar.jit.load(path)
    assert sorted(loaded.state_dict()) == sorted(net.state_dict())
    for batch in (3, 5):
        x = oar.to_tensor(RNG.standard_normal((batch, 1, 28, 28)).astype("float32"))
        np.testing.assert_allclose(loaded(x).numpy(), net(x).numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="expects float32"):
        loaded(oar.ones([2, 1, 28, 28], dtype="float64"))


class _ShapeFromInput(oar.nn.Layer):
    """Reshapes with the traced batch size taken from x.shape."""

    def __init__(self):
        super().__init__()
        self.fc = oar.nn.Linear(12, 2)

    def forward(self, x):
        return self.fc(x.reshape([x.shape[0], 12]))


def test_a_forward_that_fixes_a_dynamic_dim_is_refused(tmp_path):
    path = str(tmp_path / "fixed")
    net = _ShapeFromInput()
    with pytest.raises(ValueError, match=r"^\[oar.jit.save\] the forward fixes a dynamic input dim"):
        oar.jit.save(net, path, input_spec=[InputSpec([None, 3, 4], "float32")])
    assert not os.path.exists(path + ".json")
    oar.jit.save(net, path, input_spec=[InputSpec([2, 3, 4], "float32")])  # a fixed batch is fine
    x = oar.to_tensor(RNG.standard_normal((2, 3, 4)).astype("float32"))
    np.testing.assert_allclose(oar.jit.load(path)(x).numpy(), net(x).numpy(), rtol=1e-6)


def _attr_program():
    def f(x, w):
        y = oar.matmul(x, w, transpose_y=True)
        z = oar.sum(y * 0.5, axis=[1], keepdim=True).astype("float64")
        return oar.reshape(z, [-1])

    sf = oar.jit.to_static(f, input_spec=[InputSpec([None, 3]), InputSpec([2, 3])])
    return sf.get_concrete_program()


def test_to_json_from_json_same_printed_program():
    prog = _attr_program()
    text = _C._ir_to_json(prog._prog)
    doc = json.loads(text)
    assert doc["format"] == "oar.program" and doc["version"] == 2
    back = _C._ir_from_json(text, "mem.json")
    assert str(back) == str(prog)
    assert _C._ir_to_json(back) == text
    # The reloaded program computes what NumPy does.
    x, w = RNG.standard_normal((5, 3)).astype("float32"), RNG.standard_normal((2, 3)).astype("float32")
    (out,) = back.run([oar.to_tensor(x), oar.to_tensor(w)], [])
    np.testing.assert_allclose(out.numpy(), ((x @ w.T) * 0.5).sum(1), rtol=1e-5)
    assert out.dtype == oar.float64


def test_special_floats_and_strings_round_trip():
    # A float attribute that is not finite and a name that needs escaping.
    doc = json.loads(_C._ir_to_json(_attr_program()._prog))
    doc["inputs"][0]["name"] = 'x "quoted" \\ \u00e9\n'
    for op in doc["ops"]:
        for a in op["attrs"]:
            if "float" in a:
                a["float"] = "inf"
    back = _C._ir_from_json(json.dumps(doc), "mem.json")
    assert "quoted" in str(back)
    assert "inf" in str(back)
    again = json.loads(_C._ir_to_json(back))
    assert again["inputs"][0]["name"] == doc["inputs"][0]["name"]


# ---------------------------------------------------------------- malformed files


def _edit(path, fn):
    with open(path + ".json") as f:
        doc = json.load(f)
    fn(doc)
    with open(path + ".json", "w") as f:
        json.dump(doc, f)


def _expect_error(path, fragment, file_suffix=".json"):
    with pytest.raises(ValueError) as e:
        oar.jit.load(path)
    msg = str(e.value)
    assert msg.startswith("[oar.jit.load]"), msg
    assert path + file_suffix in msg, msg
    assert fragment in msg, msg


def test_truncated_json(saved_mlp):
    _, path = saved_mlp
    with open(path + ".json") as f:
        text = f.read()
    for cut in (0, 1, len(text) // 3, len(text) // 2, len(text) - 3):
        with open(path + ".json", "w") as f:
            f.write(text[:cut])
        _expect_error(path, "truncated" if cut else "")


def test_not_json_and_not_utf8(saved_mlp):
    _, path = saved_mlp
    with open(path + ".json", "wb") as f:
        f.write(b"\xff\xfe{}")
    _expect_error(path, "UTF-8")
    for bad, what in [("{\"a\": 1,}", "expected a string key"), ("[" * 10000, "nested deeper"),
                      ("{\"format\": \"oar.program\", \"format\": 1}", "duplicate key"), ("[1, 2]", "object"),
                      ("{}", "not an oar program"), ("{\"a\": 01}", "expected '}'"), ("1 2", "unexpected data")]:
        with open(path + ".json", "w") as f:
            f.write(bad)
        _expect_error(path, what)


def test_json_errors_give_the_byte_offset(saved_mlp):
    # One strict reader (src/io/json.cpp) serves the program, the safetensors
    # header and the runtime; its errors say where the text went wrong.
    _, path = saved_mlp
    for bad, offset, what in [("{\"a\": [1, 2,]}", 12, "unexpected character"),
                              ("{\"a\": \"\\q\"}", 8, "unknown escape"),
                              ("{\"a\": 1e}", 8, "malformed number"),
                              ("{\"a\": \"\\ud800\"}", 13, "unpaired surrogate"),
                              ("{\"a\": NaN}", 6, "unexpected character")]:
        with open(path + ".json", "w") as f:
            f.write(bad)
        _expect_error(path, f"malformed JSON at byte {offset}: {what}")


def test_unknown_op(saved_mlp):
    _, path = saved_mlp
    _edit(path, lambda d: d["ops"][1].update(op="no_such_op"))
    _expect_error(path, "unknown op 'no_such_op'")


def test_newer_version(saved_mlp):
    _, path = saved_mlp
    _edit(path, lambda d: d.update(version=7, new_field=[1]))
    _expect_error(path, "written by a newer oar: format version 7, this build reads up to 2")


def test_unknown_dtype_and_bad_shape(saved_mlp):
    _, path = saved_mlp
    _edit(path, lambda d: d["inputs"][0].update(dtype="float128"))
    _expect_error(path, "unknown dtype \"float128\"")
    oar.jit.save(MLP(), path, input_spec=[InputSpec([None, 4])])
    _edit(path, lambda d: d["ops"][0]["results"][0].update(shape=[-5, 8]))
    _expect_error(path, "dims are sizes >= 0")
    oar.jit.save(MLP(), path, input_spec=[InputSpec([None, 4])])
    _edit(path, lambda d: d["ops"][0]["results"][0].update(shape=[-1, 9]))
    _expect_error(path, "does not verify")


def test_bad_operand_ids(saved_mlp):
    _, path = saved_mlp
    _edit(path, lambda d: d["ops"][0].update(operands=[0, 1, 99]))
    _expect_error(path, "id 99, which is not defined")
    oar.jit.save(MLP(), path, input_spec=[InputSpec([None, 4])])
    # Use before definition: the first op reads the last op's result.
    _edit(path, lambda d: d["ops"][0].update(operands=[d["ops"][-1]["results"][0]["id"], 1, 2]))
    _expect_error(path, "not defined before it is used")
    oar.jit.save(MLP(), path, input_spec=[InputSpec([None, 4])])
    _edit(path, lambda d: d["ops"][1]["results"][0].update(id=0))
    _expect_error(path, "already defined")
    oar.jit.save(MLP(), path, input_spec=[InputSpec([None, 4])])
    _edit(path, lambda d: d["ops"][0].update(operands=[0, 1.5, 2]))
    _expect_error(path, "must be an integer")


def test_too_few_operands(saved_mlp):
    # relu's single operand given to binary ops: rejected before infer_meta reads past it.
    _, path = saved_mlp
    for name in ("add", "multiply", "where", "linear"):
        oar.jit.save(MLP(), path, input_spec=[InputSpec([None, 4])])
        _edit(path, lambda d: d["ops"][1].update(op=name))
        _expect_error(path, "")
    oar.jit.save(MLP(), path, input_spec=[InputSpec([None, 4])])
    _edit(path, lambda d: d["ops"][2].update(operands=d["ops"][2]["operands"][:1]))
    _expect_error(path, "too few")


def _save_attr_program(path):
    prog = _attr_program()
    with open(path + ".json", "w") as f:
        f.write(_C._ir_to_json(prog._prog))
    oar.save({}, path + ".safetensors")


def test_attr_type_and_count(tmp_path):
    path = str(tmp_path / "a")
    _save_attr_program(path)
    oar.jit.load(path)  # valid as written

    def set_matmul_attr(d, value):
        op = next(o for o in d["ops"] if o["op"] == "matmul")
        op["attrs"][1] = value

    _edit(path, lambda d: set_matmul_attr(d, {"int": 1}))
    _expect_error(path, "wrong type")
    _save_attr_program(path)
    _edit(path, lambda d: set_matmul_attr(d, {"colour": 1}))
    _expect_error(path, "unknown attribute type \"colour\"")
    _save_attr_program(path)
    _edit(path, lambda d: set_matmul_attr(d, {"bool": True, "int": 2}))
    _expect_error(path, "one key")
    _save_attr_program(path)
    _edit(path, lambda d: next(o for o in d["ops"] if o["op"] == "matmul")["attrs"].append({"bool": True}))
    _expect_error(path, "attribute(s) but the op declares")


def test_regions_on_an_op_without_them(saved_mlp):
    _, path = saved_mlp
    _edit(path, lambda d: d["ops"][0].update(regions=[]))
    _expect_error(path, "takes no regions")


def test_null_operand_where_the_op_needs_one(saved_mlp):
    # (infer_meta reads required inputs unchecked: the loader must refuse before calling it)
    _, path = saved_mlp
    _edit(path, lambda d: d["ops"][0]["operands"].__setitem__(0, None))
    _expect_error(path, "operand 0 is null, but the op requires that input")


def test_missing_program_and_weights(saved_mlp):
    _, path = saved_mlp
    os.unlink(path + ".safetensors")
    _expect_error(path, "missing", ".safetensors")
    os.unlink(path + ".json")
    _expect_error(path, "no such file")


def test_weights_wrong_shape_dtype_or_names(saved_mlp):
    net, path = saved_mlp
    state = dict(net.state_dict())
    oar.save({**state, "fc1.weight": oar.ones([5, 8])}, path + ".safetensors")
    _expect_error(path, "'fc1.weight' has type float32[5, 8]", ".safetensors")
    oar.save({**state, "fc1.bias": oar.ones([8], "float64")}, path + ".safetensors")
    _expect_error(path, "expects float32", ".safetensors")
    oar.save({k: v for k, v in state.items() if k != "fc2.bias"}, path + ".safetensors")
    _expect_error(path, "no tensor for the program parameter(s) ['fc2.bias']", ".safetensors")
    oar.save({**state, "extra": oar.ones([1])}, path + ".safetensors")
    _expect_error(path, "does not use", ".safetensors")
    with open(path + ".safetensors", "wb") as f:
        f.write(b"\x10\x00")
    _expect_error(path, "", ".safetensors")


FUZZ = textwrap.dedent("""
    import os, random, shutil, sys
    import oar
    src, work = sys.argv[1], sys.argv[2]
    data = open(src + ".json", "rb").read()
    shutil.copy(src + ".safetensors", work + ".safetensors")
    rng = random.Random(1234)
    raised = loaded = 0
    for i in range(200):
        b = bytearray(data)
        for _ in range(rng.choice([1, 1, 2, 4])):
            b[rng.randrange(len(b))] = rng.randrange(256)
        if rng.random() < 0.2:
            del b[rng.randrange(len(b)):]
        with open(work + ".json", "wb") as f:
            f.write(bytes(b))
        try:
            oar.jit.load(work)(oar.ones([2, 4]))
            loaded += 1
        except Exception:
            raised += 1
    print(raised, loaded)
""")


def test_fuzz_mutations_never_crash(saved_mlp, tmp_path):
    _, path = saved_mlp
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(oar.__file__))] +
                                        [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, "-c", FUZZ, path, str(tmp_path / "fz")], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    raised, loaded = map(int, r.stdout.split()[-2:])
    assert raised + loaded == 200
    # A mutation may leave a valid file (a name or a digit of a value changed); most must be rejected.
    assert raised >= 150, (raised, loaded)


class _Offset(oar.nn.Layer):
    """A layer with a buffer, to see buffers survive a save."""

    def __init__(self):
        super().__init__()
        self.register_buffer("offset", oar.to_tensor(np.arange(6, dtype="float32")))

    def forward(self, x):
        return x + self.offset


def test_buffers_and_frozen_parameters_keep_their_kind(tmp_path):
    # Batch-norm statistics are non-trainable parameters (as in Paddle); the offset is a buffer.
    net = oar.nn.Sequential(oar.nn.Linear(4, 6), oar.nn.BatchNorm1D(6), _Offset(), oar.nn.ReLU())
    net(oar.to_tensor(RNG.standard_normal((8, 4)).astype("float32")))  # move the running statistics
    net.eval()
    path = str(tmp_path / "bn")
    oar.jit.save(net, path, input_spec=[InputSpec([None, 4])])
    loaded = oar.jit.load(path)
    x = RNG.standard_normal((5, 4)).astype("float32")
    np.testing.assert_allclose(loaded(oar.to_tensor(x)).numpy(), net(oar.to_tensor(x)).numpy(), rtol=1e-5,
                               atol=1e-6)
    params = {n: p.trainable for n, p in loaded.named_parameters()}
    buffers = {n for n, _ in loaded.named_buffers()}
    assert params == {n: p.trainable for n, p in net.named_parameters()}
    assert not params["1._mean"] and params["1.weight"]
    assert buffers == {n for n, _ in net.named_buffers()} == {"2.offset"}
    assert set(loaded.state_dict()) == set(params) | buffers


def test_translated_layer_names_that_collide():
    from oar.jit.io import TranslatedLayer

    layer = TranslatedLayer.__new__(TranslatedLayer)
    oar.nn.Layer.__init__(layer)
    owner, attr = layer._slot_for("a.b")
    owner.add_parameter(attr, oar.ones([1]))
    assert owner is layer.a and attr == "b"
    owner, attr = layer._slot_for("a")  # a sublayer already holds this name
    assert owner is layer and attr == "a_1"
    owner, attr = layer._slot_for("a.b")  # taken: kept flat
    assert owner is layer and attr == "a_b"
