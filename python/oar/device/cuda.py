"""CUDA devices, as ``paddle.device.cuda``.

They exist when oar was built with the CUDA toolkit and NCCL found (the
library ``liboar_cuda.so`` beside the package); it is loaded on first use.
This build has no CUDA kernels beyond copies: tensors move to and from the
GPU (``Tensor.cuda()``, ``Tensor.cpu()``, ``to_tensor(place=...)``) and the
collectives of ``oar.distributed`` run on them through NCCL.
"""
import os

from .. import _C

_CUDA = 1  # DeviceType::CUDA
_LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "liboar_cuda.so")
_state = {"loaded": False, "current": 0}


def is_compiled():
    """Whether this build has CUDA support (the toolkit was found when it was built)."""
    try:
        from .._build_config import CUDA
    except ImportError:
        return False
    return bool(CUDA) and os.path.exists(_LIB)


def _load(api):
    if _state["loaded"]:
        return
    if not is_compiled():
        raise RuntimeError(f"[{api}] this build of oar has no CUDA support: the CUDA toolkit and NCCL were not "
                           "found when it was built")
    _C._load_library(_LIB)
    _state["loaded"] = True


def device_count():
    """The number of CUDA devices visible (0 without a build with CUDA, a driver or a GPU).

    >>> import oar
    >>> oar.device.cuda.device_count() >= 0
    True
    """
    if not is_compiled():
        return 0
    _load("oar.device.cuda.device_count")
    return _C._device_count(_CUDA)


def is_available():
    return device_count() > 0


def _index(device, api):
    """The device index named by None (the current one), an int, 'gpu:N' or a CUDAPlace."""
    _load(api)
    n = _C._device_count(_CUDA)
    if n == 0:
        raise RuntimeError(f"[{api}] no CUDA device is visible (no GPU, no driver, or CUDA_VISIBLE_DEVICES hides "
                           "them); keep the tensor on the CPU")
    if device is None:
        i = _state["current"]
    elif isinstance(device, int):
        i = device
    else:
        s = str(getattr(device, "_device", device))
        kind, _, num = s.partition(":")
        if kind not in ("gpu", "cuda"):
            raise ValueError(f"[{api}] expected a GPU device such as 'gpu:0', got {device!r}")
        i = int(num) if num else _state["current"]
    if not 0 <= i < n:
        raise ValueError(f"[{api}] gpu:{i} does not exist: {n} CUDA device(s) are visible")
    return i


def current_device():
    return _state["current"]


def set_device(index):
    _state["current"] = _index(index, "oar.device.set_device")


def synchronize(device=None):
    """Waits for the work queued on a CUDA device."""
    _C._device_synchronize(_CUDA, _index(device, "oar.device.cuda.synchronize"))


def memory_allocated(device=None):
    return _C._device_memory(_CUDA, _index(device, "oar.device.cuda.memory_allocated"))[0]


def max_memory_allocated(device=None):
    return _C._device_memory(_CUDA, _index(device, "oar.device.cuda.max_memory_allocated"))[1]


def memory_reserved(device=None):
    return _C._device_memory(_CUDA, _index(device, "oar.device.cuda.memory_reserved"))[2]


def empty_cache():
    if _state["loaded"] and _C._device_count(_CUDA) > 0:
        _C._device_empty_cache(_CUDA, _state["current"])
