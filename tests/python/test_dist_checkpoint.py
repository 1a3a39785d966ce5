"""Distributed checkpoints (oar.distributed.checkpoint): pieces saved on one
mesh load onto another mesh, another number of ranks or one process; the
manifest commits a save; broken checkpoints are refused with clear errors."""
import json
import os
import re
import sys

import numpy as np
import pytest

import oar
import oar.distributed as dist
import oar.distributed.checkpoint as ckpt
from oar.distributed import Partial, Replicate, Shard
from oar.distributed.checkpoint import load_state_dict, save_state_dict

from dist_util import SCRIPTS, run_ranks

sys.path.insert(0, SCRIPTS)
import ckpt_common as cc  # noqa: E402

LOAD = "[oar.distributed.load_state_dict]"
SAVE = "[oar.distributed.save_state_dict]"
PLAIN = {k: None for k in cc.SAVE_2X2}


def _counts(p, pattern):
    return {int(r): int(c) for r, c in re.findall(pattern, p.stdout)}


@pytest.mark.skipif(not dist.is_available(), reason="oar was built without MPI")
def test_across_meshes_rank_counts_and_optimizer_state(tmp_path):
    # 1 process -> 2x2 mesh (other placements); 2x2 mesh (mixed, uneven) -> 2
    # ranks on a 1-D mesh and -> 1 process; Adam state 2x2 -> 2 ranks; a rank
    # dying in a save leaves the previous checkpoint loadable.
    d = str(tmp_path)
    save_state_dict(cc.build(None, PLAIN), d + "/plain")
    p = run_ranks(4, "ckpt_roundtrip.py", "four", d + "/plain", d + "/four")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    assert _counts(p, r"rank (\d+): (\d+) checkpoint checks passed") == {r: 15 for r in range(4)}, out[-4000:]

    p = run_ranks(2, "ckpt_roundtrip.py", "two", d + "/four")
    out = p.stdout + p.stderr
    found = _counts(p, r"rank (\d+): (\d+) checkpoint checks passed")
    assert sorted(found) == [0, 1] and all(c >= 35 for c in found.values()), out[-4000:]
    # rank 1 dies on purpose (so mpirun fails); rank 0 goes on and checks.
    assert _counts(p, r"rank (\d+): (\d+) checks after a crashed save passed") == {0: 15}, out[-4000:]

    target = cc.zeros_like_target(None, PLAIN)
    load_state_dict(target, d + "/four")
    assert cc.check(target, None, PLAIN, 0, "2x2 -> 1 process") == 15
    target = cc.zeros_like_target(None, PLAIN)
    load_state_dict(target, d + "/four-again")
    assert cc.check(target, None, PLAIN, 0, "saved twice", scale=-1) == 15
    sub = {"s": oar.zeros([7, 5]), "p": oar.zeros([7, 5])}
    load_state_dict(sub, d + "/four-sub")
    for k in "sp":
        assert np.array_equal(sub[k].numpy(), cc.reference()["a"]), k
    # Ranks 0 and 1 hold no piece to write (rank 3 writes the replicated, reduced "p").
    assert sorted(os.listdir(d + "/four-sub/gen-0")) == ["0.json", "1.json", "2.json", "2.safetensors", "3.json",
                                                          "3.safetensors"]
    # The folder keeps one generation; the crashed save's pieces stay until the next commit.
    assert sorted(os.listdir(d + "/four-again")) == ["gen-1", "manifest.json"]
    assert sorted(os.listdir(d + "/four-crash")) == ["gen-0", "gen-1", "manifest.json"]


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def _values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 8, size=shape)
    if dtype == "bool":
        return a > 0
    if dtype == "uint8":
        return np.abs(a).astype(np.uint8)
    if dtype.startswith("complex"):
        return (a + 1j * rng.integers(-8, 8, size=shape) / 4).astype(dtype)
    return (a / 4).astype("float32" if dtype == "bfloat16" else dtype)


def _tensor(a, dtype):
    return oar.to_tensor(a).astype("bfloat16") if dtype == "bfloat16" else oar.to_tensor(a, dtype=dtype)


def _numpy(t):
    return t.astype("float32").numpy() if "bfloat16" in str(t.dtype) else t.numpy()


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_0d_zero_size_and_non_contiguous(tmp_path, dtype):
    vals = {"m": _values(dtype, (3, 4), 0), "s": _values(dtype, (), 1), "e": _values(dtype, (0, 2), 2),
            "t": _values(dtype, (4, 3), 3)}
    sd = {k: _tensor(v, dtype) for k, v in vals.items()}
    sd["t"] = _tensor(vals["t"].T.copy(), dtype).transpose([1, 0])  # a non-contiguous view
    save_state_dict(sd, tmp_path)
    target = {k: _tensor(np.zeros_like(v), dtype) for k, v in vals.items()}
    base = _tensor(np.zeros((3, 4), dtype=vals["t"].dtype), dtype)
    target["t"] = base.transpose([1, 0])  # loads into a view: the base sees it
    load_state_dict(target, tmp_path)
    for k, v in vals.items():
        got = _numpy(target[k])
        assert got.shape == v.shape and np.array_equal(got, v), (k, got, v)
    assert np.array_equal(_numpy(base), vals["t"].T)
    # The rank file is an ordinary safetensors file.
    assert np.array_equal(_numpy(oar.load(str(tmp_path / "gen-0" / "0.safetensors"))["m"]), vals["m"])


def test_dist_tensors_on_one_rank_partial_and_nested_values(tmp_path):
    mesh = dist.ProcessMesh([0], dim_names=["x"])
    x = np.arange(12, dtype=np.float64).reshape(3, 4) - 5
    sd = {"w": dist.shard_tensor(oar.to_tensor(x), mesh, [Shard(1)]),
          "p": dist.shard_tensor(oar.to_tensor(x), mesh, [Partial()]),  # saved reduced
          "sched": {"last_epoch": 3, "last_lr": 0.5, "tags": ["a", None, True], "inf": float("inf")}}
    save_state_dict(sd, tmp_path)
    tgt = {"w": dist.shard_tensor(oar.zeros([3, 4], "float64"), mesh, [Partial()]),
           "p": oar.zeros([3, 4], "float64"), "sched": {"last_epoch": 0, "last_lr": 0.0, "tags": [], "inf": 0.0}}
    load_state_dict(tgt, tmp_path)
    assert tgt["w"].placements == [Partial()]
    assert np.array_equal(tgt["w"]._local_value().numpy(), x) and np.array_equal(tgt["p"].numpy(), x)
    assert tgt["sched"] == {"last_epoch": 3, "last_lr": 0.5, "tags": ["a", None, True], "inf": float("inf")}
    # Keys the target lacks are ignored.
    part = {"w": oar.zeros([3, 4], "float64")}
    load_state_dict(part, tmp_path)
    assert np.array_equal(part["w"].numpy(), x)


def test_gradients_are_untouched_and_params_stay_params(tmp_path):
    lin = oar.nn.Linear(3, 2)
    save_state_dict(lin.state_dict(), tmp_path)
    lin2 = oar.nn.Linear(3, 2)
    load_state_dict(lin2.state_dict(), tmp_path)
    assert np.array_equal(lin2.weight.numpy(), lin.weight.numpy())
    assert not lin2.weight.stop_gradient and lin2.weight.grad is None


# ---------------------------------------------------------------- commit

def _fail_commit(monkeypatch):
    def merge(*a, **k):
        raise RuntimeError("simulated crash before the manifest")
    monkeypatch.setattr(ckpt, "_merge", merge)


def test_crash_before_the_manifest_is_refused(tmp_path, monkeypatch):
    _fail_commit(monkeypatch)
    with pytest.raises(RuntimeError, match="simulated crash"):
        save_state_dict({"w": oar.ones([2])}, tmp_path)
    assert os.path.isfile(tmp_path / "gen-0" / "0.safetensors")  # pieces written, never committed
    with pytest.raises(FileNotFoundError) as e:
        load_state_dict({"w": oar.zeros([2])}, tmp_path)
    msg = str(e.value)
    assert msg.startswith(LOAD) and "manifest.json" in msg and "gen-0" in msg and str(tmp_path) in msg


def test_failed_save_leaves_the_previous_checkpoint_whole(tmp_path, monkeypatch):
    save_state_dict({"w": oar.to_tensor([1.0, 2.0]), "step": 1}, tmp_path)
    with monkeypatch.context() as m:
        _fail_commit(m)
        with pytest.raises(RuntimeError):
            save_state_dict({"w": oar.to_tensor([9.0, 9.0]), "step": 2}, tmp_path)
    t = {"w": oar.zeros([2]), "step": 0}
    load_state_dict(t, tmp_path)
    assert t["w"].numpy().tolist() == [1.0, 2.0] and t["step"] == 1
    save_state_dict({"w": oar.to_tensor([3.0, 4.0]), "step": 3}, tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["gen-2", "manifest.json"]  # committed; the rest removed
    load_state_dict(t, tmp_path)
    assert t["w"].numpy().tolist() == [3.0, 4.0] and t["step"] == 3
    assert not [f for f in os.listdir(tmp_path / "gen-2") if f.endswith(".tmp")]


def test_unique_id(tmp_path):
    save_state_dict({"w": oar.ones([1])}, tmp_path, unique_id=5)
    load_state_dict({"w": oar.zeros([1])}, tmp_path, unique_id=5)
    with pytest.raises(ValueError, match=re.escape(LOAD) + ".*unique_id 4"):
        load_state_dict({"w": oar.zeros([1])}, tmp_path, unique_id=4)
    with pytest.raises(ValueError, match=re.escape(SAVE) + ".*must exceed"):
        save_state_dict({"w": oar.ones([1])}, tmp_path, unique_id=5)
    save_state_dict({"w": oar.ones([1])}, tmp_path)
    assert os.listdir(tmp_path / "gen-6")


# ---------------------------------------------------------------- broken checkpoints

@pytest.fixture
def saved(tmp_path):
    save_state_dict({"w": oar.to_tensor(np.arange(6.0).reshape(2, 3)), "b": oar.ones([3], "int32")}, tmp_path)
    return tmp_path


def _edit_manifest(path, fn):
    mpath = path / "manifest.json"
    m = json.loads(mpath.read_text())
    fn(m)
    mpath.write_text(json.dumps(m))


def _load_err(path, exc=ValueError):
    with pytest.raises(exc) as e:
        load_state_dict({"w": oar.zeros([2, 3], "float64"), "b": oar.zeros([3], "int32")}, path)
    assert str(e.value).startswith(LOAD), str(e.value)
    return str(e.value)


@pytest.mark.parametrize("edit, words", [
    (lambda m: m.update(format="something else"), "not an oar distributed checkpoint"),
    (lambda m: m.update(version=99), "newer than this oar reads"),
    (lambda m: m.update(version="1"), "version"),
    (lambda m: m.pop("tensors"), "\"tensors\""),
    (lambda m: m["tensors"]["w"].update(dtype="object"), "dtype 'object'"),
    (lambda m: m["tensors"]["w"].update(shape=[2, -3]), "shape [2, -3]"),
    (lambda m: m["tensors"]["w"]["pieces"][0].update(file="../../etc/passwd"), "malformed piece"),
    (lambda m: m["tensors"]["w"]["pieces"][0].update(offsets=[1, 0]), "outside the shape"),
    (lambda m: m["tensors"]["w"]["pieces"].append(dict(m["tensors"]["w"]["pieces"][0])), "overlap"),
    (lambda m: m["tensors"]["w"]["pieces"][0].update(shape=[1, 3]), "cover 3 of its 6"),
    (lambda m: m["values"].update(w=1), "both a tensor and a value"),
])
def test_malformed_manifest(saved, edit, words):
    _edit_manifest(saved, edit)
    msg = _load_err(saved)
    assert "manifest.json" in msg and words in msg, msg


def test_manifest_not_json_or_missing_folder(saved, tmp_path):
    mpath = saved / "manifest.json"
    mpath.write_bytes(mpath.read_bytes()[:40])  # truncated
    assert "not valid JSON" in _load_err(saved)
    assert "no such checkpoint folder" in _load_err(tmp_path / "nope", FileNotFoundError)


def test_missing_truncated_or_wrong_files(saved):
    f = saved / "gen-0" / "0.safetensors"
    data = f.read_bytes()
    f.write_bytes(data[:-5])
    msg = _load_err(saved)
    assert str(f) in msg and "truncated" in msg, msg
    oar.save({"w": oar.zeros([3, 2], "float64"), "b": oar.ones([3], "int32")}, str(f))
    msg = _load_err(saved)
    assert str(f) in msg and "entry 'w'" in msg and "shape [3, 2]" in msg, msg
    oar.save({"b": oar.ones([3], "int32")}, str(f))
    msg = _load_err(saved)
    assert str(f) in msg and "no entry 'w'" in msg, msg
    f.write_bytes(b"\x01" * 7)
    assert "8-byte header" in _load_err(saved)
    f.unlink()
    msg = _load_err(saved, FileNotFoundError)
    assert str(f) in msg and "missing" in msg, msg


def test_target_mismatches(saved):
    def err(target, exc):
        with pytest.raises(exc) as e:
            load_state_dict(target, saved)
        assert str(e.value).startswith(LOAD) and "manifest.json" in str(e.value), str(e.value)
        return str(e.value)
    assert "no key 'x'" in err({"x": oar.zeros([1])}, ValueError)
    assert "shape [2, 3]" in err({"w": oar.zeros([3, 2], "float64")}, ValueError)
    assert "saved as float64" in err({"w": oar.zeros([2, 3], "float32")}, TypeError)
    assert "plain value" in err({"w": 3}, TypeError)
    assert "no such key" in err({"zz": 3}, ValueError)
    with pytest.raises(TypeError, match=re.escape(LOAD)):
        load_state_dict([oar.zeros([1])], saved)
    with pytest.raises(TypeError, match=re.escape(LOAD)):
        load_state_dict({"w": oar.zeros([2, 3], "float64")}, saved, process_group="world")


def test_save_argument_errors(tmp_path):
    with pytest.raises(TypeError, match=re.escape(SAVE) + ".*must be a dict"):
        save_state_dict([oar.ones([1])], tmp_path)
    with pytest.raises(TypeError, match=re.escape(SAVE) + ".*'o'.*type object"):
        save_state_dict({"o": object()}, tmp_path)
    with pytest.raises(TypeError, match=re.escape(SAVE) + ".*keys must be str"):
        save_state_dict({1: oar.ones([1])}, tmp_path)
    with pytest.raises(ValueError, match=re.escape(SAVE) + ".*'a.b' occurs twice"):
        save_state_dict({"a": {"b": oar.ones([1])}, "a.b": oar.ones([1])}, tmp_path)
    with pytest.raises(TypeError, match=re.escape(SAVE) + ".*path"):
        save_state_dict({"w": oar.ones([1])}, 3)
    with pytest.raises(ValueError, match=re.escape(SAVE) + ".*coordinator_rank 5"):
        save_state_dict({"w": oar.ones([1])}, tmp_path, coordinator_rank=5)
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(NotADirectoryError, match=re.escape(SAVE) + ".*not a folder"):
        save_state_dict({"w": oar.ones([1])}, f)
    assert sorted(os.listdir(tmp_path)) == ["file"]  # nothing was written by the failed saves
