"""Devices: places, the current device and memory statistics.

Ops run on the CPU. Where oar was built with CUDA (``oar.device.cuda``),
tensors can also live on a GPU, for the collectives of oar.distributed.
"""
from .. import _C
from . import cuda


class Place:
    """Where a tensor lives (Paddle's CPUPlace / CUDAPlace)."""

    def __init__(self, kind, index=0):
        self._kind, self._index = kind, int(index)

    @property
    def _device(self):
        return "cpu" if self._kind == "cpu" else f"gpu:{self._index}"

    def is_cpu_place(self):
        return self._kind == "cpu"

    def is_gpu_place(self):
        return self._kind == "gpu"

    def gpu_device_id(self):
        return self._index

    def __eq__(self, other):
        if isinstance(other, Place):
            return self._device == other._device
        if isinstance(other, str):
            return other in (self._device, repr(self))
        return NotImplemented

    def __hash__(self):
        return hash(self._device)

    def __repr__(self):
        return f"Place({self._device})"


def CPUPlace():
    return Place("cpu")


def CUDAPlace(id=0):
    return Place("gpu", id)


def _parse(device, api):
    """(type, index) for 'cpu', 'gpu', 'gpu:N', a Place or a device index."""
    if isinstance(device, Place):
        return (0, 0) if device.is_cpu_place() else (1, cuda._index(device.gpu_device_id(), api))
    if isinstance(device, int):
        return 1, cuda._index(device, api)
    s = str(device).lower()
    if s in ("cpu", "place(cpu)", "cpuplace()"):
        return 0, 0
    if s.startswith(("gpu", "cuda", "place(gpu")):
        s = s.replace("place(", "").rstrip(")")
        return 1, cuda._index(s, api)
    raise ValueError(f"[{api}] expected 'cpu', 'gpu', 'gpu:N' or a Place, got {device!r}")


def get_device():
    """The device new tensors are made on: 'cpu'."""
    return "cpu"


def set_device(device):
    """Selects the device ops run on. Only 'cpu' runs ops in this build."""
    api = "oar.device.set_device"
    kind = str(device).split(":")[0].lower()
    if kind == "cpu":
        return "cpu"
    if kind in ("gpu", "cuda") and cuda.is_available():
        raise NotImplementedError(f"[{api}] running ops on '{device}' is not supported: this build has no CUDA "
                                  "kernels; move tensors to a GPU with Tensor.cuda() for oar.distributed "
                                  "collectives (NCCL), and compute on the CPU")
    if kind in ("gpu", "cuda") and cuda.is_compiled():
        raise ValueError(f"[{api}] device '{device}' is not available: no CUDA device is visible; expected 'cpu'")
    raise ValueError(f"[{api}] device '{device}' is not available in this build; expected 'cpu'")


def memory_allocated(device=None):
    """Bytes held by live tensors.

    >>> import oar
    >>> oar.device.memory_allocated() >= 0
    True
    """
    return _C.memory_allocated()


def max_memory_allocated(device=None):
    """Peak of memory_allocated since start or the last reset."""
    return _C.max_memory_allocated()


def memory_reserved(device=None):
    """Bytes held from the system, including cached free blocks."""
    return _C.memory_reserved()


def reset_max_memory_allocated(device=None):
    """Resets the peak statistic to the current allocation."""
    _C.reset_max_memory_allocated()


def empty_cache():
    """Returns cached free blocks to the system."""
    _C.empty_cache()
