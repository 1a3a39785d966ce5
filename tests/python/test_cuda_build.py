"""The CUDA library of this build, checked without a GPU: it loads where no GPU is visible,
and it registers a kernel for every op and dtype that has a CPU kernel."""
import pytest

import oar
from oar import _C

pytestmark = pytest.mark.skipif(not oar.device.cuda.is_compiled(),
                                reason="this build has no CUDA library (the CUDA toolkit was not found)")

CPU, CUDA = 0, 1

def _dtypes(op, device):
    return set(_C._kernel_dtypes(op, device))


def test_every_cpu_kernel_has_a_cuda_kernel():
    oar.device.cuda._load("test")
    missing = {}
    for op in _C._registered_ops():
        gap = _dtypes(op, CPU) - _dtypes(op, CUDA)
        if gap:
            missing[op] = sorted(gap)
    assert not missing, f"ops with CPU kernels but no CUDA kernel for these dtypes: {missing}"


def test_tf32_is_opt_in():
    assert oar.device.cuda.get_allow_tf32() is False
    oar.device.cuda.set_allow_tf32(True)
    try:
        assert oar.device.cuda.get_allow_tf32() is True
    finally:
        oar.device.cuda.set_allow_tf32(False)
    assert oar.device.cuda.get_allow_tf32() is False
