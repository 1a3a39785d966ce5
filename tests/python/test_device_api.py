"""oar.device: streams, events, build and device queries, memory statistics, typed constructors."""
import time

import numpy as np
import pytest

import oar
import oar.device as device

# Every name of paddle.device.__all__ (Paddle 3.3.1) that oar provides.
PADDLE_DEVICE_NAMES = [
    "get_cudnn_version", "set_device", "get_device", "XPUPlace", "IPUPlace", "is_compiled_with_xpu",
    "is_compiled_with_ipu", "is_compiled_with_cinn", "is_compiled_with_cuda", "is_compiled_with_rocm",
    "is_compiled_with_distribute", "is_compiled_with_custom_device", "get_all_device_type",
    "get_all_custom_device_type", "get_available_device", "get_available_custom_device", "get_device_properties",
    "Stream", "Event", "current_stream", "set_stream", "stream_guard", "device_guard", "synchronize",
    "device_count", "empty_cache", "max_memory_allocated", "reset_max_memory_allocated", "memory_allocated",
    "memory_reserved", "is_available", "is_current_stream_capturing", "get_device_name", "get_device_capability",
    "get_rng_state", "set_rng_state", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
    "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor", "device", "is_bf16_supported",
    "manual_seed", "reset_peak_memory_stats", "ipc_collect", "StreamContext",
]


def test_names_exist():
    missing = [n for n in PADDLE_DEVICE_NAMES if not hasattr(device, n)]
    assert missing == []
    assert set(PADDLE_DEVICE_NAMES) <= set(device.__all__)


# ---- streams and events ------------------------------------------------------------------

def test_cpu_stream_is_always_complete():
    s = device.Stream()
    assert s.device == "cpu" and s.query()
    s.synchronize()
    ev = s.record_event()
    assert isinstance(ev, device.Event) and ev.query()
    s.wait_event(ev)
    s.wait_stream(device.current_stream())


def test_event_elapsed_time_measures_host_time():
    start, end = device.Event(enable_timing=True), device.Event(enable_timing=True)
    start.record()
    time.sleep(0.05)
    end.record()
    ms = start.elapsed_time(end)
    assert 45.0 <= ms < 2000.0


def test_event_elapsed_time_errors():
    a, b = device.Event(enable_timing=True), device.Event()
    a.record()
    b.record()
    with pytest.raises(ValueError, match=r"^\[oar\.device\.Event\.elapsed_time\].*enable_timing"):
        a.elapsed_time(b)
    with pytest.raises(ValueError, match=r"^\[oar\.device\.Event\.elapsed_time\].*not been recorded"):
        a.elapsed_time(device.Event(enable_timing=True))
    with pytest.raises(TypeError, match=r"^\[oar\.device\.Event\.elapsed_time\]"):
        a.elapsed_time(3)
    with pytest.raises(ValueError, match=r"^\[oar\.device\.Event\]"):
        device.Event(interprocess=True)


def test_current_stream_set_stream_and_guards():
    default = device.current_stream()
    assert device.current_stream("cpu") is default
    s = device.Stream("cpu", priority=1)
    prev = device.set_stream(s)
    try:
        assert prev is default and device.current_stream() is s
    finally:
        device.set_stream(prev)
    t = device.Stream()
    with device.stream_guard(t):
        assert device.current_stream() is t
        with device.StreamContext(None):
            assert device.current_stream() is t
    assert device.current_stream() is default


def test_stream_errors():
    with pytest.raises(ValueError, match=r"^\[oar\.device\.Stream\]"):
        device.Stream(priority=5)
    with pytest.raises(ValueError, match=r"^\[oar\.device\.Stream\]"):
        device.Stream("tpu")
    with pytest.raises(TypeError, match=r"^\[oar\.device\.set_stream\]"):
        device.set_stream("cpu")
    with pytest.raises(TypeError, match=r"^\[oar\.device\.Stream\.record_event\]"):
        device.Stream().record_event("e")


# ---- queries -----------------------------------------------------------------------------

def test_build_queries():
    assert device.is_compiled_with_cuda() == device.cuda.is_compiled()
    for q in (device.is_compiled_with_rocm, device.is_compiled_with_xpu, device.is_compiled_with_ipu,
              device.is_compiled_with_cinn, device.is_current_stream_capturing):
        assert q() is False
    assert device.is_compiled_with_distribute() is True
    assert device.is_compiled_with_custom_device("npu") is False
    assert device.get_cudnn_version() is None
    assert device.is_bf16_supported() is True


def test_device_lists_agree_with_count():
    n = device.device_count()
    assert n == device.cuda.device_count() and device.is_available() == (n > 0)
    # the plugin devices: custom_cpu (tests/python/conftest.py puts it on OAR_PLUGIN_PATH) with 2 devices
    types, custom = device.get_all_custom_device_type(), device.get_available_custom_device()
    assert types == ["custom_cpu"] and custom == ["custom_cpu:0", "custom_cpu:1"]
    assert device.get_available_device() == ["cpu"] + [f"gpu:{i}" for i in range(n)] + custom
    assert device.get_all_device_type() == ["cpu"] + (["gpu"] if n else []) + types


def test_cpu_is_not_a_gpu_for_properties():
    for fn in (device.get_device_properties, device.get_device_name, device.get_device_capability):
        with pytest.raises(ValueError, match=r"^\[oar\.device\.get_device_"):
            fn("cpu")


@pytest.mark.skipif(oar.device.device_count() == 0, reason="needs a visible GPU")
def test_gpu_properties():
    p = device.get_device_properties(0)
    assert p.name and p.major >= 3 and p.total_memory > 2 ** 30 and p.multi_processor_count > 0
    assert device.get_device_capability(0) == (p.major, p.minor)
    assert device.get_device_name("gpu:0") == p.name
    s = device.Stream("gpu:0")
    x = oar.ones([1024]).cuda(0)
    ev = s.record_event(device.Event(enable_timing=True))
    assert s.query() and ev.query()
    device.synchronize("gpu:0")
    assert float(x.cpu().sum()) == 1024.0


def test_xpu_ipu_places_raise():
    with pytest.raises(ValueError, match=r"^\[oar\.device\.XPUPlace\]"):
        device.XPUPlace(0)
    with pytest.raises(ValueError, match=r"^\[oar\.device\.IPUPlace\]"):
        device.IPUPlace()


def test_device_context_and_guard():
    with device.device("cpu"):
        assert device.get_device() == "cpu"
    with device.device_guard("cpu"):
        assert oar.ones([1]).place == "cpu"
    with pytest.raises(ValueError, match=r"^\[oar\.device\.set_device\]"):
        with device.device_guard("tpu:0"):
            pass


def test_synchronize_cpu():
    device.synchronize()
    device.synchronize("cpu")


# ---- random state ------------------------------------------------------------------------

def test_rng_state_roundtrip_and_manual_seed():
    st = device.get_rng_state()
    a = oar.rand([4]).numpy()
    device.set_rng_state(st)
    assert np.array_equal(a, oar.rand([4]).numpy())
    assert device.manual_seed(9) is None
    b = oar.rand([3]).numpy()
    device.manual_seed(9)
    assert np.array_equal(b, oar.rand([3]).numpy())


# ---- memory ------------------------------------------------------------------------------

def test_memory_statistics_follow_allocations():
    device.reset_peak_memory_stats()
    base = device.memory_allocated()
    assert device.max_memory_allocated() == base
    x = oar.zeros([1 << 18])  # 1 MiB of float32
    assert device.memory_allocated() - base >= 4 * (1 << 18)
    assert device.max_memory_allocated() >= device.memory_allocated()
    assert device.memory_reserved() >= device.memory_allocated()
    del x
    peak = device.max_memory_allocated()
    assert peak - base >= 4 * (1 << 18)
    device.reset_max_memory_allocated()
    assert device.max_memory_allocated() == device.memory_allocated() < peak
    device.empty_cache()
    device.ipc_collect()
    assert device.memory_allocated("cpu") == device.memory_allocated()


# ---- typed constructors ------------------------------------------------------------------

@pytest.mark.parametrize("name, dtype", [
    ("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"),
    ("BFloat16Tensor", "bfloat16"), ("ByteTensor", "uint8"), ("CharTensor", "int8"), ("ShortTensor", "int16"),
    ("IntTensor", "int32"), ("LongTensor", "int64"), ("BoolTensor", "bool"),
])
def test_typed_constructors(name, dtype):
    make = getattr(device, name)
    t = make([1, 0, 1])
    assert t.dtype.name == dtype
    assert t.numpy().astype(np.float64).tolist() == [1.0, 0.0, 1.0]
    assert make(2, 3).shape == [2, 3] and make(2, 3).dtype.name == dtype
    assert make().shape == [0]
    assert make(np.array([[1, 1]])).shape == [1, 2]
    src = oar.to_tensor([1.0, 0.0])
    made = make(src, requires_grad=True) if dtype in ("float32", "float64") else make(src)
    assert made.dtype.name == dtype and made is not src and src.stop_gradient  # a copy; src untouched
    assert make([1.0], requires_grad=dtype in ("float32", "float64")).stop_gradient == (
        dtype not in ("float32", "float64"))


def test_typed_constructor_values_and_errors():
    assert device.LongTensor([1.7, -2.2]).numpy().tolist() == [1, -2]
    with pytest.raises(ValueError, match=r"^\[oar\.device\.FloatTensor\]"):
        device.FloatTensor(-1, 2)
    with pytest.raises(TypeError, match=r"^\[oar\.device\.IntTensor\]"):
        device.IntTensor([1], [2])


def test_reserved_memory_peak_follows_the_allocator():
    oar.device.empty_cache()
    oar.device.reset_max_memory_reserved()
    base = oar.device.memory_reserved()
    assert oar.device.max_memory_reserved() == base
    x = oar.zeros([1 << 20])  # 4 MiB more than is cached
    peak = oar.device.max_memory_reserved()
    assert peak >= base + 4 * (1 << 20)
    del x
    oar.device.empty_cache()  # the block goes back to the system; the peak stays
    assert oar.device.memory_reserved() < peak and oar.device.max_memory_reserved() == peak
    oar.device.reset_peak_memory_stats()
    assert oar.device.max_memory_reserved() == oar.device.memory_reserved()
