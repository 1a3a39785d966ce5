"""oar.device.cuda's device API: memory statistics, streams, events and properties on a GPU;
clear errors naming the API where no GPU is visible."""
import numpy as np
import pytest

import oar

cuda = oar.device.cuda
GPU = cuda.is_compiled() and cuda.device_count() > 0
needs_gpu = pytest.mark.skipif(not GPU, reason="no CUDA GPU is visible")


@pytest.mark.skipif(GPU or not cuda.is_compiled(), reason="checks the errors of a build with CUDA on a machine "
                                                          "without a GPU")
@pytest.mark.parametrize("fn", ["memory_allocated", "max_memory_reserved", "reset_max_memory_allocated",
                                "reset_max_memory_reserved", "synchronize"])
def test_without_a_gpu_each_call_names_itself(fn):
    with pytest.raises(RuntimeError, match=rf"^\[oar\.device\.cuda\.{fn}\] no CUDA device is visible"):
        getattr(cuda, fn)()


@needs_gpu
def test_memory_statistics_follow_allocations():
    cuda.synchronize()
    base = cuda.memory_allocated()
    x = oar.to_tensor(np.ones((1024, 1024), dtype=np.float32), place="gpu:0")
    assert cuda.memory_allocated() >= base + 4 * 1024 * 1024
    assert cuda.max_memory_allocated() >= cuda.memory_allocated()
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    assert cuda.max_memory_reserved() >= cuda.memory_reserved()
    del x
    assert cuda.memory_allocated() <= base + 512
    cuda.reset_max_memory_allocated()
    assert cuda.max_memory_allocated() == cuda.memory_allocated()
    cuda.empty_cache()
    cuda.reset_max_memory_reserved()
    assert cuda.max_memory_reserved() == cuda.memory_reserved()


@needs_gpu
def test_streams_events_and_properties():
    props = cuda.get_device_properties()
    assert props.total_memory > 0 and props.multi_processor_count > 0 and "NVIDIA" in props.name
    s = cuda.Stream()
    e = cuda.Event()
    with cuda.stream_guard(s):
        y = oar.to_tensor(np.arange(6, dtype=np.float32), place="gpu:0") * 2
        e.record()
    e.synchronize()
    assert e.query()
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(6, dtype=np.float32) * 2)
