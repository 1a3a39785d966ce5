"""Regression tests for the reliability classes: checkpoints that must load,
files that must be refused, ranks above the limit, loader work bounded by the
input, killed saves, a predictor shared by threads."""
import json
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import oar
from oar import serialization

MAX_RANK = 16


# ---------------------------------------------------------------- format detection

def test_saves_of_every_header_length_round_trip(tmp_path):
    # The header length's low byte once decided the format (0x80 read as a
    # pickle): every length from the smallest up to 4096 must load back.
    p = tmp_path / "x.pdparams"
    lengths = set()
    for k in range(1, 4097):
        oar.save({"w" * k: oar.ones([2])}, p)
        n = struct.unpack("<Q", p.read_bytes()[:8])[0]
        lengths.add(n)
        back = oar.load(p)
        assert list(back) == ["w" * k] and back["w" * k].numpy().tolist() == [1.0, 1.0]
    assert min(lengths) < 256 and max(lengths) >= 4096
    assert any(n & 0xFF == 0x80 for n in lengths)
    oar.save({}, p)  # the smallest header there is
    assert oar.load(p) == {}


def test_pickles_of_every_protocol_are_still_recognised(tmp_path):
    p = tmp_path / "m.pdparams"
    for protocol in (2, 3, 4, 5):
        with open(p, "wb") as f:
            pickle.dump({"w": np.arange(3, dtype=np.float32)}, f, protocol=protocol)
        assert oar.load(p)["w"].numpy().tolist() == [0.0, 1.0, 2.0]


# ---------------------------------------------------------------- strict safetensors

def _good_file(path):
    oar.save({"a": oar.to_tensor(np.arange(6, dtype=np.float32)), "b": oar.ones([3], "int64")}, path)
    return path.read_bytes()


@pytest.mark.parametrize("mutate,match", [
    (lambda d: d + b"\0", "1 trailing bytes"),
    (lambda d: d + b"junk-after-the-last-tensor", "trailing bytes"),
    # one byte short: the header's last padding byte becomes data, every weight shifted by one
    (lambda d: struct.pack("<Q", struct.unpack("<Q", d[:8])[0] - 1) + d[8:], "trailing bytes|not valid JSON"),
    (lambda d: struct.pack("<Q", struct.unpack("<Q", d[:8])[0] + 1) + d[8:], "not valid JSON|needs|outside"),
    (lambda d: d[:8] + b" " + d[9:], "must begin with '\\{'"),
])
def test_misaligned_or_padded_files_are_refused(tmp_path, mutate, match):
    p = tmp_path / "w.safetensors"
    p.write_bytes(mutate(_good_file(p)))
    with pytest.raises(ValueError, match=r"^\[oar.load\] .*w.safetensors: .*(" + match + ")"):
        oar.load(p)


def _raw(path, header, data):
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + data)


def test_holes_and_high_ranks_are_refused(tmp_path):
    p = tmp_path / "h.safetensors"
    _raw(p, {"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8)
    with pytest.raises(ValueError, match=r"^\[oar.load\] .*hole of 4 bytes"):
        oar.load(p)
    _raw(p, {"a": {"dtype": "F32", "shape": [1] * (MAX_RANK + 1), "data_offsets": [0, 4]}}, b"\0" * 4)
    with pytest.raises(ValueError, match=rf"^\[oar.load\] .*rank {MAX_RANK + 1}"):
        oar.load(p)
    _raw(p, {"a": {"dtype": "F32", "shape": [1] * MAX_RANK, "data_offsets": [0, 4]}}, b"\0" * 4)
    assert oar.load(p)["a"].shape == [1] * MAX_RANK


@pytest.mark.parametrize("name", [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf5\x80\x80\x80"])
def test_names_that_are_not_utf8_are_refused(tmp_path, name):
    # invalid byte, overlong NUL, a surrogate, above U+10FFFF
    p = tmp_path / "u.safetensors"
    for header in (b'{"' + name + b'":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
                   b'{"__metadata__":{"k":"' + name + b'"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'):
        p.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)
        with pytest.raises(ValueError, match=r"^\[oar.load\] .*is not valid UTF-8"):
            oar.load(p)


def test_the_runtime_refuses_a_shifted_weights_file(tmp_path):
    prefix = str(tmp_path / "m")
    net = oar.nn.Linear(3, 2)
    oar.jit.save(net, prefix, [oar.static.InputSpec([None, 3], "float32", name="x")])
    w = tmp_path / "m.safetensors"
    d = w.read_bytes()
    w.write_bytes(struct.pack("<Q", struct.unpack("<Q", d[:8])[0] - 1) + d[8:])
    with pytest.raises(ValueError, match="trailing bytes|not valid JSON"):
        oar.inference.create_predictor(oar.inference.Config(prefix))
    with pytest.raises(ValueError, match=r"^\[oar.jit.load\].*(trailing bytes|not valid JSON)"):
        oar.jit.load(prefix)


# ---------------------------------------------------------------- rank limit

@pytest.mark.parametrize("make", [
    lambda: oar.reshape(oar.ones([1]), [1] * (MAX_RANK + 1)),
    lambda: oar.unsqueeze(oar.ones([1] * MAX_RANK), 0),
    lambda: oar.tile(oar.ones([2]), [1] * (MAX_RANK + 1)),
    lambda: oar.expand(oar.ones([1]), [1] * (MAX_RANK + 1)),
    lambda: oar.to_tensor(np.zeros([1] * (MAX_RANK + 1))),
    lambda: oar.zeros([1] * (MAX_RANK + 1)),
])
def test_ranks_above_the_limit_are_refused(make):
    with pytest.raises(ValueError, match=rf"^\[oar\.\w+\] .*at most {MAX_RANK}"):
        make()


def test_kernels_at_the_maximum_rank_match_numpy():
    rng = np.random.default_rng(0)
    shape = [2, 1, 3] + [1, 2] * 6 + [2]  # rank 16, 768 elements, dims that do not merge
    assert len(shape) == MAX_RANK
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal([3] + [1, 2] * 6 + [1]).astype(np.float32)  # broadcasts against a
    x, y = oar.to_tensor(a), oar.to_tensor(b)
    np.testing.assert_allclose((x * y + x).numpy(), a * b + a, rtol=1e-6)
    perm = list(range(MAX_RANK))[::-1]
    xt = oar.transpose(x, perm)  # non-contiguous operand
    np.testing.assert_allclose(oar.exp(xt).numpy(), np.exp(a.transpose(perm)), rtol=1e-6)
    assert int(oar.count_nonzero(oar.to_tensor(a > 0)).numpy()) == int((a > 0).sum())
    np.testing.assert_allclose(oar.sum(xt, axis=[1, 5, 15]).numpy(), a.transpose(perm).sum(axis=(1, 5, 15)),
                               rtol=1e-5, atol=1e-5)
    mask = oar.to_tensor(a > 0.5)
    np.testing.assert_allclose(oar.masked_fill(x, mask, 7.0).numpy(), np.where(a > 0.5, 7.0, a), rtol=1e-6)
    np.testing.assert_allclose(oar.tile(oar.to_tensor(a[0, 0, 0]), [2] + [1] * 12).numpy(),
                               np.tile(a[0, 0, 0], [2] + [1] * 12), rtol=0)
    k = rng.standard_normal([2] * 8 + [1] * 8).astype(np.float32)
    np.testing.assert_allclose(oar.kron(oar.to_tensor(k), oar.to_tensor(k)).numpy(), np.kron(k, k), rtol=1e-6)


# ---------------------------------------------------------------- integer attributes

def test_float_tensor_counts_are_refused():
    with pytest.raises(TypeError, match=r"^\[oar.tile\] repeat_times must be an integer Tensor"):
        oar.tile(oar.ones([2]), oar.to_tensor([2.7, 1.2]))
    assert oar.tile(oar.ones([2]), oar.to_tensor([2, 1])).shape == [2, 2]


@pytest.mark.parametrize("stride", [2 ** 30, 2 ** 31, 2 ** 62])
def test_pooling_with_huge_strides_is_cheap_or_refused(stride):
    x = oar.ones([1, 1, 8, 8])
    for f in (oar.nn.functional.max_pool2d, oar.nn.functional.avg_pool2d):
        try:
            y = f(x, kernel_size=2, stride=stride)
        except (ValueError, OverflowError) as e:
            assert str(e).startswith(f"[oar.nn.functional.{f.__name__}]") or str(e).startswith(f"[oar.{f.__name__}]")
            continue
        assert y.shape == [1, 1, 1, 1] and float(y.numpy().ravel()[0]) == 1.0


# ---------------------------------------------------------------- integer overflow wraps

_BIG = np.array([2 ** 62, -2 ** 63, 2 ** 63 - 1, 3], dtype=np.int64)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_integer_arithmetic_wraps_as_numpy(dtype):
    # Signed overflow is undefined in C++ (UBSan stopped on it); results wrap as NumPy's.
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.max // 2 + 1, -1], dtype=dtype)
    b = np.array([1, -1, 4, info.min], dtype=dtype)
    x, y = oar.to_tensor(a), oar.to_tensor(b)
    with np.errstate(over="ignore"):
        for fn, ref in [(oar.add, np.add), (oar.subtract, np.subtract), (oar.multiply, np.multiply)]:
            np.testing.assert_array_equal(fn(x, y).numpy(), ref(a, b))
        np.testing.assert_array_equal(oar.square(x).numpy(), a * a)
        np.testing.assert_array_equal(oar.neg(x).numpy(), -a)
        np.testing.assert_array_equal(oar.abs(x).numpy(), np.abs(a))
        for fn, ref in [(oar.prod, np.prod), (lambda t: oar.cumprod(t, 0), np.cumprod),
                        (lambda t: oar.cumsum(t, 0), np.cumsum)]:
            got = fn(x).numpy()  # in the op's result dtype (int64 accumulation for narrow ints)
            np.testing.assert_array_equal(got, ref(a.astype(got.dtype), dtype=got.dtype))


def test_int64_sums_wrap_as_numpy():
    x = oar.to_tensor(np.tile(_BIG, 300))
    with np.errstate(over="ignore"):
        assert int(oar.sum(x)) == int(np.sum(np.tile(_BIG, 300)))


def test_extreme_diagonal_offsets_are_empty_or_refused():
    x = oar.ones([3, 4])
    for off in (-2 ** 63, 2 ** 63 - 1):
        assert oar.diagonal(x, off).shape == [0]
        with pytest.raises(ValueError, match=r"^\[oar.diag\]"):
            oar.diag(oar.ones([3]), off)


# ---------------------------------------------------------------- pickle loader bounds

def _nested_shared_lists(depth):
    a = [np.zeros(1, np.float32)]
    for _ in range(depth):
        a = [a, a]
    return a


def test_pickles_of_shared_references_load_in_time_linear_in_the_file(tmp_path):
    p = tmp_path / "bomb.pdparams"
    with open(p, "wb") as f:
        pickle.dump(_nested_shared_lists(60), f, protocol=4)  # 2**60 leaves if expanded
    assert p.stat().st_size < 2000
    t0 = time.time()
    out = oar.load(p)
    assert time.time() - t0 < 5
    node = out
    for _ in range(60):
        assert node[0] is node[1]  # sharing is kept, not expanded
        node = node[0]
    assert isinstance(node[0], oar.Tensor)
    arr = oar.load(p, return_numpy=True)
    assert arr[0] is arr[1]


def test_pickles_with_cycles_or_object_arrays_are_refused(tmp_path):
    p = tmp_path / "c.pdparams"
    a = []
    a.append(a)
    with open(p, "wb") as f:
        pickle.dump({"w": a}, f, protocol=4)
    with pytest.raises(pickle.UnpicklingError, match=r"^\[oar.load\] .*contains itself"):
        oar.load(p)
    with open(p, "wb") as f:
        pickle.dump({"w": np.array([1, "x"], dtype=object)}, f, protocol=4)
    with pytest.raises(pickle.UnpicklingError, match=r"^\[oar.load\]"):
        oar.load(p)


def test_deeply_nested_pickles_do_not_exhaust_the_stack(tmp_path):
    p = tmp_path / "deep.pdparams"
    a = np.ones(1, np.float32)
    for _ in range(3000):
        a = [a]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20000)  # for pickle.dumps; the loader itself does not recurse
    try:
        data = pickle.dumps(a, protocol=4)
    finally:
        sys.setrecursionlimit(limit)
    p.write_bytes(data)
    out = oar.load(p)
    for _ in range(3000):
        out = out[0]
    assert isinstance(out, oar.Tensor)


class _Reduce:
    """Pickles as ``fn(*args)`` then ``__setstate__(state)``: hand-made array pickles."""

    def __init__(self, fn, args, state=None):
        self.fn, self.args, self.state = fn, args, state

    def __reduce__(self):
        return (self.fn, self.args) if self.state is None else (self.fn, self.args, self.state)


_RECONSTRUCT = type(np.ones(1)).__reduce__(np.ones(1))[0]  # numpy's _reconstruct, wherever it lives


def _array_pickle(state, dtype=None):
    dtype = dtype if dtype is not None else _Reduce(np.dtype, ("f4", False, True), (3, "<", None, None, None,
                                                                                    -1, -1, 0))
    state = tuple(dtype if s == "DTYPE" else s for s in state)
    return pickle.dumps({"w": _Reduce(_RECONSTRUCT, (np.ndarray, (0,), b"b"), state)}, protocol=4)


@pytest.mark.parametrize("state,dtype,match", [
    ((1, (2,), "DTYPE", False, [1.0, 2.0]), None, "data must be bytes"),  # once a segfault in NumPy
    ((1, (2,), "DTYPE", False, b"\0" * 7), None, "needs 8 bytes, the file holds 7"),
    ((1, (-2,), "DTYPE", False, b""), None, "non-negative ints"),
    ((1, (2,), "DTYPE", "yes", b"\0" * 8), None, "malformed array state"),
    ((1, (2,), "DTYPE", False, b"\0" * 16), _Reduce(np.dtype, ("m8", False, True)), "'m8' is not a numeric"),
    ((1, (2,), "DTYPE", False, b"\0" * 16), _Reduce(np.dtype, ("O", False, True)), "'O' is not a numeric"),
    ((1, (2,), "DTYPE", False, b"\0" * 8), _Reduce(np.dtype, ("f4", False, True), (3, "?", None, None, None)),
     "malformed dtype state"),
])
def test_malformed_array_pickles_are_refused(tmp_path, state, dtype, match):
    p = tmp_path / "a.pdparams"
    p.write_bytes(_array_pickle(state, dtype))
    with pytest.raises(pickle.UnpicklingError, match=r"^\[oar.load\] .*a.pdparams: .*" + match):
        oar.load(p)


def test_array_pickles_keep_byte_order_layout_and_scalars(tmp_path):
    p = tmp_path / "a.pdparams"
    d = {"be": np.arange(6, dtype=">f4").reshape(2, 3), "fortran": np.asfortranarray(np.arange(6.).reshape(2, 3)),
         "empty": np.zeros((0, 3), "i8"), "c": np.array([1 + 2j], np.complex64), "s": np.float32(2.5)}
    for protocol in (2, 4, 5):
        p.write_bytes(pickle.dumps(d, protocol=protocol))
        back = oar.load(p)
        for k in ("be", "fortran", "empty", "c"):
            np.testing.assert_array_equal(back[k].numpy(), d[k].astype(d[k].dtype.newbyteorder("=")))
        assert back["s"] == np.float32(2.5)


def test_paddle_tensor_pickles_load_as_tensors_without_the_name_table(tmp_path):
    # paddle.save pickles a tensor inside other objects as tuple((name, array)),
    # and a state dict carries a structured-name -> parameter-name table.
    p = tmp_path / "pd.pdparams"
    data = pickle.dumps({"StructuredToParameterName@@": {"w": "linear_0.w_0"}, "w": np.ones(3, "f4"),
                         "opt": [_Reduce(tuple, (("m_0", np.zeros(2, "f4")),))], "t": (1, "a")}, protocol=4)
    assert b"tuple" in data
    p.write_bytes(data)
    back = oar.load(p)
    assert set(back) == {"w", "opt", "t"} and back["t"] == (1, "a")
    assert isinstance(back["opt"][0], oar.Tensor) and back["opt"][0].numpy().tolist() == [0.0, 0.0]
    assert oar.load(p, keep_name_table=True)["StructuredToParameterName@@"] == {"w": "linear_0.w_0"}


# ---------------------------------------------------------------- killed saves

_KILLED_SAVER = r"""
import sys, time
sys.path.insert(0, sys.argv[2])
import oar
from oar import serialization
def write(f):
    f.write(b"x" * 4096)
    f.flush()
    print("writing", flush=True)
    time.sleep(60)
serialization._atomic_write(sys.argv[1], write)
"""


def _temps(folder):
    return sorted(n for n in os.listdir(folder) if n.startswith(".oar-save-"))


def test_killed_saves_leave_no_temp_files_after_the_next_save(tmp_path):
    target = tmp_path / "ckpt.pdparams"
    pkg = os.path.dirname(os.path.dirname(oar.__file__))
    for _ in range(3):
        p = subprocess.Popen([sys.executable, "-c", _KILLED_SAVER, str(target), pkg], stdout=subprocess.PIPE,
                             text=True)
        assert p.stdout.readline().strip() == "writing"
        p.send_signal(signal.SIGKILL)
        p.wait()
    # each killed save removed the one killed before it
    assert len(_temps(tmp_path)) == 1
    # a save in progress elsewhere (a live process) and files not of our naming are left alone
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        busy = tmp_path / f".oar-save-{serialization._host()}-{live.pid}-abc123.tmp"
        busy.write_bytes(b"in progress")
        other = tmp_path / ".oar-save-notes.txt"
        other.write_bytes(b"user file")
        oar.save({"w": oar.ones([2])}, target)
        assert _temps(tmp_path) == sorted([busy.name, other.name])
        assert oar.load(target)["w"].numpy().tolist() == [1.0, 1.0]
    finally:
        live.kill()
        live.wait()


# ---------------------------------------------------------------- predictor threads

def _predictor(tmp_path):
    oar.seed(0)
    net = oar.nn.Sequential(oar.nn.Linear(8, 32), oar.nn.ReLU(), oar.nn.Linear(32, 4))
    net.eval()
    prefix = str(tmp_path / "m")
    oar.jit.save(net, prefix, [oar.static.InputSpec([None, 8], "float32", name="x")])
    return net, oar.inference.create_predictor(oar.inference.Config(prefix))


def test_one_predictor_shared_by_threads_gives_each_its_own_results(tmp_path):
    net, pred = _predictor(tmp_path)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((1 + i % 5, 8)).astype(np.float32) for i in range(8)]
    expected = [net(oar.to_tensor(x)).numpy() for x in inputs]
    errors = []

    def worker(i):
        try:
            for k in range(40):
                j = (i + k) % len(inputs)
                if k % 3 == 0:
                    pred.clear_intermediate_tensor()
                    pred.get_input_handle("x").shape()
                [y] = pred.run([inputs[j]])
                np.testing.assert_allclose(y, expected[j], rtol=1e-5, atol=1e-5)
        except Exception as e:  # reported below; a crash would kill the test process
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
