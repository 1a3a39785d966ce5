"""Places, moving tensors between devices, and the CUDA device with its NCCL
backend. Tests that need a GPU run where one is visible (device_count() > 0);
everywhere else the same calls must fail with a clear, typed error."""
import os

import numpy as np
import pytest

import oar
from oar import _C
from oar.device import cuda

from dist_util import run_ranks

PKG = os.path.dirname(oar.__file__)
GPUS = cuda.device_count()
needs_gpu = pytest.mark.skipif(GPUS == 0, reason="no CUDA device is visible")


def test_build_reports_cuda_support_consistently():
    from oar import _build_config

    built = bool(getattr(_build_config, "CUDA", False))
    assert oar.is_compiled_with_cuda() == (built and os.path.exists(os.path.join(PKG, "liboar_cuda.so")))
    assert GPUS >= 0
    if not oar.is_compiled_with_cuda():
        assert GPUS == 0


def test_places_compare_and_print_like_paddle():
    x = oar.to_tensor([1.0, 2.0])
    assert x.place == oar.CPUPlace() and x.place.is_cpu_place() and not x.place.is_gpu_place()
    assert repr(x.place) == "Place(cpu)" and x.place == "Place(cpu)"
    assert "place=Place(cpu)" in repr(x)
    g = oar.CUDAPlace(1)
    assert repr(g) == "Place(gpu:1)" and g.is_gpu_place() and g.gpu_device_id() == 1
    assert g != oar.CPUPlace() and g == oar.CUDAPlace(1) and len({g, oar.CUDAPlace(1)}) == 1


def test_to_and_cpu_on_the_cpu():
    x = oar.to_tensor([[1.5, -2.0]], stop_gradient=False)
    assert x.cpu() is x and x.to("cpu") is x and x.to(oar.CPUPlace()) is x
    y = x.to("float64")
    assert y.dtype == oar.float64 and np.array_equal(y.numpy(), [[1.5, -2.0]])
    z = x.to(oar.to_tensor([1], dtype="int32"))  # a tensor gives its dtype and place
    assert z.dtype == oar.int32 and z.numpy().tolist() == [[1, -2]]
    assert x.to(device="cpu", dtype="float16").dtype == oar.float16
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.to\] no device type is named 'tpu': expected 'cpu', 'gpu'"):
        x.to(device="tpu")
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.to\] expected 'cpu', 'gpu', 'gpu:N', a plugin device"):
        x.to(device="tpu:x")
    with pytest.raises(TypeError, match=r"^\[oar.Tensor.to\] unexpected keyword"):
        x.to(devcie="cpu")


@pytest.mark.skipif(GPUS > 0, reason="checks the errors of a machine without a GPU")
def test_without_a_gpu_moves_fail_clearly():
    x = oar.to_tensor([1.0])
    if oar.is_compiled_with_cuda():
        want = RuntimeError, r"no CUDA device is visible"
    else:
        want = RuntimeError, r"has no CUDA support"
    with pytest.raises(want[0], match=r"^\[oar.Tensor.cuda\] .*" + want[1]):
        x.cuda()
    with pytest.raises(want[0], match=r"^\[oar.to_tensor\] .*" + want[1]):
        oar.to_tensor([1.0], place=oar.CUDAPlace(0))
    with pytest.raises(want[0], match=r"^\[oar.Tensor.to\] .*" + want[1]):
        x.to("gpu:0")
    with pytest.raises(ValueError, match=r"^\[oar.device.set_device\] device 'gpu:0' is not available"):
        oar.set_device("gpu:0")
    assert oar.set_device("cpu") == "cpu" and oar.get_device() == "cpu"


def test_collectives_without_a_device_backend_fail_clearly():
    import oar.distributed as dist

    dist.init_parallel_env()
    pg = dist.collective._world("test").process_group
    # Without liboar_cuda the factory is missing (NotImplementedError); with it but no GPU,
    # creating the NCCL communicator fails (RuntimeError). Never a crash.
    with pytest.raises((NotImplementedError, RuntimeError), match=r"^\[oar"):
        if GPUS == 0:
            _C._dist_device_group(pg, 1, 0)
        else:
            _C._dist_device_group(pg, 1, GPUS)  # no such device


@needs_gpu
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                                   "float32", "float64", "complex64", "complex128"])
def test_round_trip_to_the_gpu_is_exact(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 5)) * 10).astype("float64")
    x = oar.to_tensor(a).astype(dtype)
    g = x.cuda()
    assert g.place == oar.CUDAPlace(0) and g.dtype == x.dtype and g.shape == [3, 5]
    back = g.cpu()
    assert back.place == oar.CPUPlace()
    np.testing.assert_array_equal(back.astype("float64").numpy() if dtype == "bfloat16" else back.numpy(),
                                  x.astype("float64").numpy() if dtype == "bfloat16" else x.numpy())
    # numpy() of a GPU tensor copies to the host; clone stays on the GPU.
    np.testing.assert_array_equal(g.numpy(), x.numpy())
    c = g.clone()
    assert c.place == g.place
    np.testing.assert_array_equal(c.numpy(), x.numpy())


@needs_gpu
def test_gpu_memory_is_counted_and_ops_without_kernels_refuse():
    before = cuda.memory_allocated()
    g = oar.to_tensor(np.ones(1 << 20, dtype="float32"), place="gpu:0")
    assert cuda.memory_allocated() - before >= 4 << 20
    with pytest.raises(NotImplementedError, match=r"^\[oar.add\] has no kernel for device gpu:0"):
        g + g
    with pytest.raises(ValueError, match=r"expected all tensors on one device, got gpu:0 .* and cpu"):
        oar.add(g, oar.ones([1 << 20]))
    cuda.synchronize()


@needs_gpu
def test_nccl_collectives_on_one_rank():
    r = run_ranks(1, "collectives.py", env={"OAR_TEST_PLACE": "gpu"}, timeout=300)
    assert r.returncode == 0 and "rank 0:" in r.stdout, r.stdout[-2000:] + r.stderr[-3000:]


@pytest.mark.skipif(GPUS < 2, reason="needs two CUDA devices (NCCL takes one GPU per rank)")
def test_nccl_collectives_on_two_ranks():
    r = run_ranks(2, "collectives.py", env={"OAR_TEST_PLACE": "gpu"}, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "rank 0:" in r.stdout and "rank 1:" in r.stdout
