"""The CUDA library of this build, checked without a GPU: it loads where no GPU is visible,
and it registers a kernel for every op and dtype that has a CPU kernel, except the complex
dtypes listed in COMPLEX_GAPS (the list may only shrink: an entry that gains its kernels fails
until it is removed)."""
import pytest

import oar
from oar import _C

pytestmark = pytest.mark.skipif(not oar.device.cuda.is_compiled(),
                                reason="this build has no CUDA library (the CUDA toolkit was not found)")

CPU, CUDA = 0, 1

# Ops whose complex dtypes have no CUDA kernel yet (their real dtypes do): the complex reductions and scans.
COMPLEX_GAPS = {"sum", "mean", "prod", "cumsum", "cumprod"}


def _dtypes(op, device):
    return set(_C._kernel_dtypes(op, device))


def test_every_cpu_kernel_has_a_cuda_kernel():
    oar.device.cuda._load("test")
    missing = {}
    for op in _C._registered_ops():
        gap = _dtypes(op, CPU) - _dtypes(op, CUDA)
        if op in COMPLEX_GAPS:
            gap -= {"complex64", "complex128"}
        if gap:
            missing[op] = sorted(gap)
    assert not missing, f"ops with CPU kernels but no CUDA kernel for these dtypes: {missing}"


def test_the_complex_gap_list_is_current():
    oar.device.cuda._load("test")
    stale = [op for op in COMPLEX_GAPS
             if not ({"complex64", "complex128"} & (_dtypes(op, CPU) - _dtypes(op, CUDA)))]
    assert not stale, f"these ops have their complex CUDA kernels now (or no complex CPU kernel): remove {stale}"


def test_tf32_is_opt_in():
    assert oar.device.cuda.get_allow_tf32() is False
    oar.device.cuda.set_allow_tf32(True)
    try:
        assert oar.device.cuda.get_allow_tf32() is True
    finally:
        oar.device.cuda.set_allow_tf32(False)
    assert oar.device.cuda.get_allow_tf32() is False
