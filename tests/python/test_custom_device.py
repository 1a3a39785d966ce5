"""Plugin devices, through the example plugin custom_cpu (plugins/custom_cpu): places and
device strings, copies across the device boundary (counted by the plugin), ops against NumPy,
the errors of missing kernels and mixed devices, streams and events, memory statistics.
The loader's refusals are in test_custom_device_loader.py."""
import ctypes
import os

import numpy as np
import pytest

import oar
from conftest import CUSTOM_CPU



@pytest.fixture(scope="module")
def lib():
    """custom_cpu's test hooks (the library oar loaded: the same file, so the same state)."""
    assert os.path.exists(CUSTOM_CPU), f"{CUSTOM_CPU} is missing: `make build` builds it"
    assert "custom_cpu" in oar.device.get_all_custom_device_type()
    lib = ctypes.CDLL(CUSTOM_CPU)
    lib.custom_cpu_bytes_in_use.restype = ctypes.c_int64
    lib.custom_cpu_bytes_in_use.argtypes = [ctypes.c_int]
    lib.custom_cpu_set_task_delay_us.argtypes = [ctypes.c_int]
    return lib


def copies(lib):
    """(counts, bytes) of the plugin's copies so far: host to device, device to host, device to device."""
    counts, nbytes = (ctypes.c_int64 * 3)(), (ctypes.c_int64 * 3)()
    lib.custom_cpu_copy_counts(counts, nbytes)
    return list(counts), list(nbytes)


@pytest.fixture
def delay(lib):
    """Sets how long each queued task of the plugin's streams waits first; reset afterwards."""
    yield lambda us: lib.custom_cpu_set_task_delay_us(us)
    lib.custom_cpu_set_task_delay_us(0)


@pytest.fixture
def on_cpu_after():
    yield
    oar.set_device("cpu")


def on(arr, device="custom_cpu:0", **kw):
    return oar.to_tensor(arr, place=device, **kw)


RNG = np.random.default_rng(0)


# ---------------------------------------------------------------- discovery and places

def test_custom_cpu_is_loaded_with_two_devices(lib):
    assert oar.device.get_all_custom_device_type() == ["custom_cpu"]
    assert oar.device.get_available_custom_device() == ["custom_cpu:0", "custom_cpu:1"]
    assert oar.device.is_compiled_with_custom_device("custom_cpu")
    assert not oar.device.is_compiled_with_custom_device("npu")
    assert oar.device.get_device_name("custom_cpu:1") == "custom_cpu host-memory device 1"
    assert "custom_cpu" in oar.device.get_all_device_type()


def test_places_and_device_strings(lib):
    p = oar.CustomPlace("custom_cpu", 1)
    assert p == "custom_cpu:1" and p == oar.CustomPlace("custom_cpu", 1) and p != oar.CustomPlace("custom_cpu", 0)
    assert p.is_custom_place() and not p.is_cpu_place() and not p.is_gpu_place()
    assert (p.custom_device_type(), p.custom_device_id(), p.get_device_type()) == ("custom_cpu", 1, "custom_cpu")
    x = on([1.0, 2.0], p)
    assert x.place == p and x.device == "custom_cpu:1" and x.device.type == "custom_cpu" and x.device.index == 1
    assert x.get_device() == 1 and not x.is_cuda
    assert "place=Place(custom_cpu:1)" in repr(x)
    assert on([1.0], "custom_cpu").place == "custom_cpu:0"  # no index: device 0
    for bad in ("Custom CPU", "cpu", 3):
        with pytest.raises(ValueError, match=r"^\[oar\.CustomPlace\] device_type must be a plugin device type"):
            oar.CustomPlace(bad)
    with pytest.raises(ValueError, match=r"^\[oar\.CustomPlace\] device_id must be a non-negative int, got -1"):
        oar.CustomPlace("custom_cpu", -1)
    with pytest.raises(ValueError, match=r"^\[oar\.to_tensor\] custom_cpu:2 does not exist: 2 custom_cpu device"):
        on([1.0], "custom_cpu:2")
    with pytest.raises(ValueError, match=r"^\[oar\.to_tensor\] no device type is named 'npu': expected 'cpu', "
                                         r"'gpu' or a plugin device type \('custom_cpu'\)"):
        on([1.0], "npu:0")


def test_set_device_makes_new_tensors_there(lib, on_cpu_after):
    assert oar.set_device("custom_cpu") == oar.CustomPlace("custom_cpu", 0)
    assert oar.get_device() == "custom_cpu:0"
    assert oar.ones([2, 3]).place == "custom_cpu:0" and oar.to_tensor([1.0]).place == "custom_cpu:0"
    assert oar.set_device("custom_cpu:1") == "custom_cpu:1" and oar.get_device() == "custom_cpu:1"
    assert oar.arange(4).place == "custom_cpu:1"
    # Note [creation on the current device]: random draws are the CPU generator's, wherever they land
    oar.seed(5)
    a = oar.rand([6])
    oar.set_device("cpu")
    oar.seed(5)
    b = oar.rand([6])
    assert a.place == "custom_cpu:1" and b.place == "cpu"
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    with oar.device.device_guard("custom_cpu:1"):
        assert oar.zeros([1]).place == "custom_cpu:1"
    assert oar.get_device() == "cpu"


# ---------------------------------------------------------------- copies

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "bool", "float16", "complex64"])
def test_copies_cross_the_boundary_exactly_and_are_counted(lib, dtype):
    arr = (RNG.standard_normal((3, 5)) * 10).astype(dtype)
    host = oar.to_tensor(arr)
    (c0, b0) = copies(lib)
    x = host.to("custom_cpu:0")
    (c1, b1) = copies(lib)
    assert c1[0] == c0[0] + 1 and b1[0] == b0[0] + arr.nbytes  # one host-to-device copy of the bytes
    back = x.cpu()
    (c2, b2) = copies(lib)
    assert c2[1] == c1[1] + 1 and b2[1] == b1[1] + arr.nbytes
    assert back.place == "cpu" and back.dtype == host.dtype
    np.testing.assert_array_equal(back.numpy(), arr)
    np.testing.assert_array_equal(x.numpy(), arr)  # numpy() reads through a device-to-host copy
    # a view on the device is made dense there (the plugin's cast kernel), then copied
    np.testing.assert_array_equal(x.T.cpu().numpy(), arr.T)
    np.testing.assert_array_equal(x[1:, ::2].numpy(), arr[1:, ::2])


def test_moves_between_devices_go_through_the_host(lib):
    arr = RNG.standard_normal((4, 4)).astype("float32")
    x = on(arr, "custom_cpu:0")
    (c0, _) = copies(lib)
    y = x.to("custom_cpu:1")
    (c1, _) = copies(lib)
    assert y.place == "custom_cpu:1" and c1[1] == c0[1] + 1 and c1[0] == c0[0] + 1
    np.testing.assert_array_equal(y.numpy(), arr)
    assert x.to("custom_cpu:0") is x and x.to(oar.CustomPlace("custom_cpu", 0)) is x


def test_to_and_cpu_are_differentiable(lib):
    a_np = np.array([1.0, -2.0, 3.0], "float32")
    a = oar.to_tensor(a_np, stop_gradient=False)
    b = on([2.0, 5.0, -1.0])
    loss = (a.to("custom_cpu:0") * b).cpu().sum()
    loss.backward()
    assert a.grad.place == "cpu"
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 5.0, -1.0])
    # a leaf on the device gets its gradient there
    w = on(a_np, stop_gradient=False)
    (w * w).cpu().sum().backward()
    assert w.grad.place == "custom_cpu:0"
    np.testing.assert_array_equal(w.grad.numpy(), 2 * a_np)


# ---------------------------------------------------------------- ops

@pytest.mark.parametrize("name, ref", [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
                                       ("divide", np.divide)])
def test_elementwise_ops_match_numpy_with_broadcasting(lib, name, ref):
    a = RNG.standard_normal((3, 1, 4)).astype("float32")
    b = RNG.standard_normal((2, 4)).astype("float32") + 3.0
    out = getattr(oar, name)(on(a), on(b))
    assert out.place == "custom_cpu:0" and out.shape == [3, 2, 4]
    np.testing.assert_allclose(out.numpy(), ref(a, b), rtol=1e-6)
    # a non-contiguous operand (a transposed view) and a Python scalar (made on the tensor's device)
    c = RNG.standard_normal((4, 3)).astype("float32")
    np.testing.assert_allclose(getattr(oar, name)(on(c).T, 2.0).numpy(), ref(c.T, np.float32(2.0)), rtol=1e-6)


@pytest.mark.parametrize("tx, ty", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_matches_numpy(lib, tx, ty):
    x = RNG.standard_normal((2, 1, 5, 3) if tx else (2, 1, 3, 5)).astype("float32")
    y = RNG.standard_normal((4, 6, 5) if ty else (4, 5, 6)).astype("float32")
    out = oar.matmul(on(x), on(y), transpose_x=tx, transpose_y=ty)
    ref = np.matmul(np.swapaxes(x, -1, -2) if tx else x, np.swapaxes(y, -1, -2) if ty else y)
    assert out.place == "custom_cpu:0" and out.shape == list(ref.shape)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)
    cpu = oar.matmul(oar.to_tensor(x), oar.to_tensor(y), transpose_x=tx, transpose_y=ty)
    np.testing.assert_allclose(out.numpy(), cpu.numpy(), rtol=1e-5, atol=1e-5)


def test_a_missing_kernel_names_the_op_the_device_and_the_dtype(lib):
    x = on(np.ones((2, 2), "float32"))
    with pytest.raises(NotImplementedError, match=r"^\[oar\.lgamma\] has no kernel for device custom_cpu:0 "
                                                  r"\(dtype float32\)"):
        oar.lgamma(x)
    z = on(np.ones(3, "complex128"))
    with pytest.raises(NotImplementedError, match=r"^\[oar\.add\] does not support dtype complex128 on "
                                                  r"custom_cpu:0"):
        z + z
    # the same message names the dtype on the CPU
    assert "float32" in oar.device.kernel_signature("lgamma")["kernels"]["cpu"]
    sig = oar.device.kernel_signature("matmul")
    assert sig["attrs"] == ["transpose_x", "transpose_y"] and sig["kernels"]["custom_cpu"] == ["float32"]
    with pytest.raises(ValueError, match=r"^\[oar\.device\.kernel_signature\] no op is named 'matmull'"):
        oar.device.kernel_signature("matmull")


def test_mixed_devices_are_refused_naming_both(lib):
    x, y = on([1.0, 2.0]), oar.to_tensor([1.0, 2.0])
    with pytest.raises(ValueError, match=r"^\[oar\.add\] expected all tensors on one device, got custom_cpu:0 "
                                         r"\(input 0\) and cpu \(input 1\)"):
        x + y
    with pytest.raises(ValueError, match=r"^\[oar\.multiply\] expected all tensors on one device, got "
                                         r"custom_cpu:0 \(input 0\) and custom_cpu:1 \(input 1\)"):
        x * on([1.0, 2.0], "custom_cpu:1")
    with pytest.raises(ValueError, match=r"^\[oar\.add_\] the tensor modified in place is on custom_cpu:0, an "
                                         r"input is on cpu"):
        x.add_(y)


def test_a_failing_plugin_kernel_raises_its_message(lib):
    # custom_cpu's cast converts between bool, int32, int64, float32 and float64 only
    x = on(np.ones(3, "float32"))
    with pytest.raises(NotImplementedError, match=r"^\[oar\.cast\] the custom_cpu kernel failed on custom_cpu:0: "
                                                  r"casting to this dtype is not supported on custom_cpu"):
        oar.cast(x, "float16")
    np.testing.assert_array_equal(x.astype("int64").numpy(), [1, 1, 1])


# ---------------------------------------------------------------- streams and events

def test_streams_queue_work_and_events_mark_it(lib, delay):
    arr = RNG.standard_normal((64,)).astype("float32")
    host = oar.to_tensor(arr)
    s = oar.device.Stream("custom_cpu:0")
    assert s.device == "custom_cpu:0" and s.query() and s != oar.device.current_stream("custom_cpu:0")
    delay(200_000)  # each queued task waits 0.2 s first
    with oar.device.stream_guard(s):
        assert oar.device.current_stream("custom_cpu:0") is s
        y = host.to("custom_cpu:0", blocking=False)  # queued on s
        e = s.record_event()
    assert oar.device.current_stream("custom_cpu:0") is not s
    assert not s.query() and not e.query()  # still queued: a query can say "not yet"
    s.synchronize()
    assert s.query() and e.query()
    np.testing.assert_array_equal(y.numpy(), arr)


def test_work_is_ordered_by_streams_events_and_synchronous_copies(lib, delay):
    arr = RNG.standard_normal((16,)).astype("float32")
    s1, s2 = oar.device.Stream("custom_cpu:0"), oar.device.Stream("custom_cpu:0")
    delay(100_000)
    with oar.device.stream_guard(s1):
        y = oar.to_tensor(arr).to("custom_cpu:0", blocking=False)
        # a kernel on s1 runs after the copy queued before it
        z = y + y
    np.testing.assert_array_equal(z.numpy(), 2 * arr)
    with oar.device.stream_guard(s1):
        y2 = oar.to_tensor(arr).to("custom_cpu:0", blocking=False)
    # a synchronous copy back waits for the device's queued work
    np.testing.assert_array_equal(y2.cpu().numpy(), arr)
    with oar.device.stream_guard(s1):
        oar.to_tensor(arr).to("custom_cpu:0", blocking=False)
    e1 = s1.record_event()
    s2.wait_event(e1)  # s2's later work waits for s1's
    e2 = s2.record_event()
    assert not e2.query()
    e2.synchronize()
    assert e1.query() and e2.query()
    # wait_stream and the device-wide synchronize
    with oar.device.stream_guard(s1):
        oar.to_tensor(arr).to("custom_cpu:0", blocking=False)
    s2.wait_stream(s1)
    assert not s2.query()
    oar.device.synchronize("custom_cpu:0")
    assert s1.query() and s2.query()


def test_event_times_measure_the_queued_work(lib, delay):
    s = oar.device.Stream("custom_cpu:1")
    start, end = oar.device.Event(enable_timing=True), oar.device.Event("custom_cpu:1", enable_timing=True)
    start.record(s)
    delay(50_000)
    with oar.device.stream_guard(s):
        oar.to_tensor([1.0]).to("custom_cpu:1", blocking=False)
    end.record(s)
    end.synchronize()
    assert 40.0 <= start.elapsed_time(end) < 5000.0
    with pytest.raises(ValueError, match=r"^\[oar\.device\.Event\.record\] the event belongs to custom_cpu:1, the "
                                         r"stream to custom_cpu:0"):
        end.record(oar.device.Stream("custom_cpu:0"))
    with pytest.raises(ValueError, match=r"^\[oar\.device\.Event\.elapsed_time\] this event was created with "
                                         r"enable_timing=False"):
        oar.device.Event().elapsed_time(end)


def test_set_stream_returns_the_previous_stream(lib):
    default = oar.device.current_stream("custom_cpu:1")
    assert default is oar.device.current_stream("custom_cpu:1") and default.query()
    s = oar.device.Stream("custom_cpu:1")
    assert oar.device.set_stream(s) is default and oar.device.current_stream("custom_cpu:1") is s
    assert oar.device.set_stream(default) is s and oar.device.current_stream("custom_cpu:1") is default


# ---------------------------------------------------------------- memory

def test_memory_stats_follow_allocations(lib, on_cpu_after):
    dev = "custom_cpu:1"
    oar.device.empty_cache()
    base_alloc, base_res = oar.device.memory_allocated(dev), oar.device.memory_reserved(dev)
    base_plugin = lib.custom_cpu_bytes_in_use(1)
    x = on(np.zeros(1 << 18, "float32"), dev)  # 1 MiB
    assert oar.device.memory_allocated(dev) == base_alloc + (1 << 20)
    assert oar.device.memory_reserved(dev) == base_res + (1 << 20)
    assert oar.device.max_memory_allocated(dev) >= base_alloc + (1 << 20)
    assert lib.custom_cpu_bytes_in_use(1) == base_plugin + (1 << 20)  # taken from the plugin's allocator
    del x
    assert oar.device.memory_allocated(dev) == base_alloc
    assert oar.device.memory_reserved(dev) == base_res + (1 << 20)  # cached for reuse
    oar.device.reset_max_memory_allocated(dev)
    assert oar.device.max_memory_allocated(dev) == base_alloc
    oar.device.empty_cache()
    assert oar.device.memory_reserved(dev) == base_res and lib.custom_cpu_bytes_in_use(1) == base_plugin
    # None means the current device
    oar.set_device(dev)
    y = oar.zeros([1 << 18])
    assert oar.device.memory_allocated() == oar.device.memory_allocated(dev) >= base_alloc + (1 << 20)
    del y


# ---------------------------------------------------------------- profiler

def test_the_profiler_collects_what_the_plugin_records(lib):
    import oar.profiler as profiler

    x = on(np.ones((8, 8), "float32"))
    with profiler.Profiler() as prof:
        y = oar.matmul(x, x)
        host = y.cpu()
    z = x + x  # after the profiler stopped: not recorded
    names = [(n, d) for n, a, b, d in prof.device_events()]
    assert ("matmul", "custom_cpu:0") in names and ("memcpy_d2h", "custom_cpu:0") in names
    assert ("add", "custom_cpu:0") not in names
    assert all(a <= b for _, a, b, _ in prof.device_events())
    np.testing.assert_array_equal(host.numpy(), np.full((8, 8), 8.0, "float32"))
    del z


def test_concat_on_custom_cpu_equals_numpy():
    a, b = RNG.standard_normal((2, 3)).astype("float32"), RNG.standard_normal((4, 3)).astype("float32")
    out = oar.concat([on(a), on(b)], axis=0)
    assert out.place == "custom_cpu:0"
    np.testing.assert_array_equal(out.numpy(), np.concatenate([a, b]))
    # along the last axis, with a strided (transposed) input
    np.testing.assert_array_equal(oar.concat([on(a), on(b[:2].T.copy()).T], axis=1).numpy(),
                                  np.concatenate([a, b[:2]], axis=1))
    i = np.arange(4, dtype="int64")
    np.testing.assert_array_equal(oar.concat([on(i), on(i)]).numpy(), np.concatenate([i, i]))
