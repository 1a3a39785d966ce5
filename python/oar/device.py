"""Device queries and CPU memory statistics."""
from . import _C


def get_device():
    """The current device ('cpu' in this build)."""
    return "cpu"


def set_device(device):
    """Selects the device; this build runs on the CPU."""
    if str(device).split(":")[0] not in ("cpu",):
        raise ValueError(f"[oar.device.set_device] device '{device}' is not available in this build; expected 'cpu'")
    return "cpu"


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
