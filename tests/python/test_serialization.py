"""oar.save / oar.load: round trips, interop with the safetensors reference
reader, atomic writes, rejection of malformed files, Paddle pickles."""
import json
import os
import pickle
import struct
from collections import OrderedDict

import numpy as np
import pytest
import safetensors.numpy as st_np

import oar
from oar import serialization


def _same(a, b):
    assert str(a.dtype) == str(b.dtype) and list(a.shape) == list(b.shape)
    np.testing.assert_array_equal(a.astype("float64").numpy() if "complex" not in str(a.dtype) else a.numpy(),
                                  b.astype("float64").numpy() if "complex" not in str(b.dtype) else b.numpy())


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [[], [0, 3], [2, 3]])
def test_round_trip_every_dtype(tmp_path, dtype, shape):
    rng = np.random.default_rng(0)
    a = rng.uniform(-4, 4, shape)
    if "complex" in dtype:
        a = a + 1j * rng.uniform(-4, 4, shape)
    t = oar.to_tensor(a).astype(dtype)
    p = tmp_path / "t.pdparams"
    oar.save({"x": t}, p)
    _same(oar.load(p)["x"], t)


def test_flat_state_dict_is_a_standard_safetensors_file(tmp_path):
    sd = {"fc.weight": oar.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3)),
          "fc.bias": oar.to_tensor(np.array([1, 2], np.int64))}
    p = tmp_path / "m.safetensors"
    oar.save(sd, p)
    ref = st_np.load_file(str(p))  # the reference implementation's reader
    assert set(ref) == set(sd)
    for k in sd:
        np.testing.assert_array_equal(ref[k], sd[k].numpy())
    # and the other direction: a file written by the reference writer
    q = tmp_path / "ref.safetensors"
    st_np.save_file({"a": np.eye(3, dtype=np.float64), "b": np.array([True, False])}, str(q))
    back = oar.load(q)
    np.testing.assert_array_equal(back["a"].numpy(), np.eye(3))
    assert back["b"].numpy().tolist() == [True, False]


def test_nested_structure_round_trip(tmp_path):
    obj = {"model": {"w": oar.ones([2]), "layers": [oar.zeros([1]), oar.full([2], 3.0)]},
           "step": 7, "lr": 0.1, "name": "adam", "flags": (True, None), "inf": float("inf"),
           "arr": np.arange(4, dtype=np.int32), 3: "int key"}
    p = tmp_path / "ckpt.pdopt"
    oar.save(obj, p)
    back = oar.load(p)
    assert back["step"] == 7 and back["lr"] == 0.1 and back["name"] == "adam"
    assert back["flags"] == (True, None) and back["inf"] == float("inf") and back[3] == "int key"
    assert isinstance(back["arr"], np.ndarray) and back["arr"].tolist() == [0, 1, 2, 3]
    assert back["model"]["w"].numpy().tolist() == [1.0, 1.0]
    assert [t.numpy().tolist() for t in back["model"]["layers"]] == [[0.0], [3.0, 3.0]]
    as_np = oar.load(p, return_numpy=True)
    assert isinstance(as_np["model"]["w"], np.ndarray)


def test_single_tensor_and_numpy_option(tmp_path):
    p = tmp_path / "x"
    oar.save(oar.to_tensor([[1.5, 2.5]]), p)
    t = oar.load(p)
    assert t.numpy().tolist() == [[1.5, 2.5]]
    assert oar.load(p, return_numpy=True).tolist() == [[1.5, 2.5]]


def test_interrupted_save_keeps_the_previous_file(tmp_path, monkeypatch):
    p = tmp_path / "w.pdparams"
    oar.save({"w": oar.ones([3])}, p)
    before = p.read_bytes()

    def boom(*a, **k):
        raise KeyboardInterrupt("killed during save")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        oar.save({"w": oar.zeros([1000])}, p)
    monkeypatch.undo()
    assert p.read_bytes() == before
    assert [f for f in os.listdir(tmp_path) if f.endswith(".tmp")] == []  # no temp file left behind
    assert oar.load(p)["w"].numpy().tolist() == [1.0, 1.0, 1.0]


def _write(path, header, data=b"", raw_len=None):
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h) if raw_len is None else raw_len))
        f.write(h)
        f.write(data)


GOOD = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}


@pytest.mark.parametrize("header,data,raw_len,match", [
    (None, b"", None, "8-byte header length"),
    (GOOD, b"\0" * 8, 1 << 40, "exceeds"),
    (GOOD, b"\0" * 8, 10 ** 6, "runs past the end"),
    ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4, None, "outside"),
    ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8, None, "needs 12"),
    ({"a": {"dtype": "OBJ", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8, None, "allowed"),
    ({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 8]}}, b"\0" * 8, None, "non-negative"),
    ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
      "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, b"\0" * 12, None, "overlap"),
    ({"a": {"dtype": "F32", "shape": [2]}}, b"\0" * 8, None, "exactly dtype"),
    ({"__metadata__": {"oar.format": "99"}}, b"", None, "newer"),
    ({"__metadata__": {"oar.structure": "{\"__tensor__\": \"zz\"}"}}, b"", None, "missing entry"),
])
def test_malformed_files_are_rejected_naming_the_file(tmp_path, header, data, raw_len, match):
    p = tmp_path / "bad.safetensors"
    if header is None:
        p.write_bytes(b"\1\2\3")
    else:
        _write(p, header, data, raw_len)
    with pytest.raises(ValueError, match=r"^\[oar.load\] .*bad.safetensors: .*" + match):
        oar.load(p)


def test_truncated_real_file_is_rejected(tmp_path):
    p = tmp_path / "w.pdparams"
    oar.save({"w": oar.ones([100])}, p)
    data = p.read_bytes()
    for cut in (4, 20, len(data) - 1):
        p.write_bytes(data[:cut])
        with pytest.raises(ValueError, match=r"^\[oar.load\]"):
            oar.load(p)


def test_invalid_json_header(tmp_path):
    p = tmp_path / "x.safetensors"
    p.write_bytes(struct.pack("<Q", 5) + b"{nope")
    with pytest.raises(ValueError, match="not valid JSON"):
        oar.load(p)


def test_paddle_pickle_of_arrays_loads(tmp_path):
    p = tmp_path / "model.pdparams"
    sd = OrderedDict([("linear_0.w_0", np.ones((2, 3), np.float32)), ("linear_0.b_0", np.zeros(3, np.float32))])
    for protocol in (2, 4):
        with open(p, "wb") as f:
            pickle.dump(sd, f, protocol=protocol)
        back = oar.load(p)
        assert back["linear_0.w_0"].numpy().tolist() == [[1.0] * 3] * 2
        assert oar.load(p, return_numpy=True)["linear_0.b_0"].dtype == np.float32


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_pickle_with_code_is_refused_and_not_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "evil.pdparams"
    with open(p, "wb") as f:
        pickle.dump({"w": _Evil()}, f, protocol=4)
    with pytest.raises(pickle.UnpicklingError, match=r"^\[oar.load\] .*evil.pdparams: refusing to load"):
        oar.load(p)
    assert not (tmp_path / "pwned").exists()


def test_bad_arguments(tmp_path):
    with pytest.raises(TypeError, match=r"^\[oar.save\] cannot store an object of type object"):
        oar.save({"x": object()}, tmp_path / "a")
    with pytest.raises(TypeError, match=r"^\[oar.save\] path"):
        oar.save({}, 3)
    with pytest.raises(ValueError, match=r"^\[oar.save\] path must name a file"):
        oar.save({}, str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"^\[oar.load\]"):
        oar.load(tmp_path / "missing")
    assert serialization.__all__ == ["save", "load"]


def _train(net, opt, sched, steps, x, y):
    for _ in range(steps):
        loss = oar.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step()


def _setup(seed=0):
    oar.seed(seed)
    net = oar.nn.Sequential(oar.nn.Linear(6, 16), oar.nn.ReLU(), oar.nn.Linear(16, 3))
    sched = oar.optimizer.lr.StepDecay(learning_rate=0.05, step_size=2, gamma=0.5)
    opt = oar.optimizer.AdamW(learning_rate=sched, parameters=net.parameters(), weight_decay=0.01)
    return net, opt, sched


def test_training_resumes_bit_exactly_from_files(tmp_path):
    rng = np.random.default_rng(0)
    x = oar.to_tensor(rng.standard_normal((32, 6)).astype(np.float32))
    y = oar.to_tensor(rng.integers(0, 3, 32))
    ref_net, ref_opt, ref_sched = _setup()
    _train(ref_net, ref_opt, ref_sched, 6, x, y)

    net, opt, sched = _setup()
    _train(net, opt, sched, 3, x, y)
    oar.save(net.state_dict(), tmp_path / "m.pdparams")
    oar.save(opt.state_dict(), tmp_path / "m.pdopt")
    # a fresh process would rebuild the objects: different init, fresh state
    net2, opt2, sched2 = _setup(seed=123)
    net2.set_state_dict(oar.load(tmp_path / "m.pdparams"))
    opt_state = oar.load(tmp_path / "m.pdopt")
    # optimizer state is keyed by parameter names, which a rebuilt net renames
    rename = {p1.name: p2.name for p1, p2 in zip(net.parameters(), net2.parameters())}
    renamed = {}
    for k, v in opt_state.items():
        for old, new in rename.items():
            if k.startswith(old + "_"):
                k = new + k[len(old):]
                break
        renamed[k] = v
    opt2.set_state_dict(renamed)
    assert sched2.last_epoch == sched.last_epoch and sched2.get_lr() == sched.get_lr()
    _train(net2, opt2, sched2, 3, x, y)
    for p_ref, p in zip(ref_net.parameters(), net2.parameters()):
        np.testing.assert_array_equal(p.numpy(), p_ref.numpy())
