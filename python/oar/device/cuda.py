"""CUDA devices, as ``paddle.device.cuda``.

They exist when oar was built with the CUDA toolkit and NCCL found (the library
``liboar_cuda.so`` beside the package); it is loaded on first use, so the same build runs
where no GPU or CUDA driver is present. Every op with a CPU kernel has a CUDA kernel for its
real dtypes (cuBLAS products, cuDNN convolutions, CUB sorts, Philox random numbers, a host
round trip for the LAPACK factorisations); of the complex dtypes, the reductions and scans
(sum, mean, prod, cumsum, cumprod) have no GPU kernel yet. A build with CUDA makes new tensors on the first GPU when
one is visible, as Paddle does.
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


def max_memory_reserved(device=None):
    """The peak of memory_reserved since the start or the last reset_max_memory_reserved."""
    return _C._device_memory(_CUDA, _index(device, "oar.device.cuda.max_memory_reserved"))[3]


def reset_max_memory_allocated(device=None):
    """Starts max_memory_allocated again from the bytes allocated now."""
    _C._device_reset_peak(_CUDA, _index(device, "oar.device.cuda.reset_max_memory_allocated"), False)


def reset_max_memory_reserved(device=None):
    """Starts max_memory_reserved again from the bytes reserved now."""
    _C._device_reset_peak(_CUDA, _index(device, "oar.device.cuda.reset_max_memory_reserved"), True)


def empty_cache():
    if _state["loaded"] and _C._device_count(_CUDA) > 0:
        _C._device_empty_cache(_CUDA, _state["current"])


class _DeviceProperties:
    """What get_device_properties returns: name, major, minor, total_memory (bytes), multi_processor_count."""

    __slots__ = ("name", "major", "minor", "total_memory", "multi_processor_count")

    def __init__(self, name, major, minor, total_memory, multi_processor_count):
        self.name, self.major, self.minor = name, major, minor
        self.total_memory, self.multi_processor_count = total_memory, multi_processor_count

    def __repr__(self):
        return (f"_gpuDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


# CUdevice_attribute values of the CUDA driver API (stable across versions).
_ATTR_MULTIPROCESSOR_COUNT, _ATTR_MAJOR, _ATTR_MINOR = 16, 75, 76
_props_cache = {}


def _properties(index, api):
    """The properties of GPU `index`, read through the CUDA driver library (libcuda)."""
    if index in _props_cache:
        return _props_cache[index]
    import ctypes

    try:
        drv = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        raise RuntimeError(f"[{api}] the CUDA driver library libcuda.so.1 could not be loaded: {e}") from None

    def check(rc, what):
        if rc != 0:
            raise RuntimeError(f"[{api}] the CUDA driver call {what} failed with error {rc}")

    check(drv.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(drv.cuDeviceGet(ctypes.byref(dev), index), "cuDeviceGet")
    name = ctypes.create_string_buffer(256)
    check(drv.cuDeviceGetName(name, 256, dev), "cuDeviceGetName")
    attrs = []
    for attr in (_ATTR_MAJOR, _ATTR_MINOR, _ATTR_MULTIPROCESSOR_COUNT):
        v = ctypes.c_int()
        check(drv.cuDeviceGetAttribute(ctypes.byref(v), attr, dev), "cuDeviceGetAttribute")
        attrs.append(v.value)
    total = ctypes.c_size_t()
    check(drv.cuDeviceTotalMem_v2(ctypes.byref(total), dev), "cuDeviceTotalMem_v2")
    props = _DeviceProperties(name.value.decode(errors="replace"), attrs[0], attrs[1], total.value, attrs[2])
    _props_cache[index] = props
    return props


def get_device_properties(device=None):
    """The properties of a GPU (the current one when None); see oar.device.get_device_properties.

    >>> import oar
    >>> oar.device.cuda.device_count() == 0 or oar.device.cuda.get_device_properties(0).major > 0
    True
    """
    api = "oar.device.cuda.get_device_properties"
    return _properties(_index(device, api), api)


def get_device_name(device=None):
    """The name of a GPU (the current one when None).

    >>> import oar
    >>> oar.device.cuda.device_count() == 0 or bool(oar.device.cuda.get_device_name(0))
    True
    """
    api = "oar.device.cuda.get_device_name"
    return _properties(_index(device, api), api).name


def get_device_capability(device=None):
    """The (major, minor) compute capability of a GPU (the current one when None).

    >>> import oar
    >>> oar.device.cuda.device_count() == 0 or len(oar.device.cuda.get_device_capability(0)) == 2
    True
    """
    api = "oar.device.cuda.get_device_capability"
    p = _properties(_index(device, api), api)
    return p.major, p.minor


def Stream(device=None, priority=2):
    """A stream of a GPU (the current one when None); see oar.device.Stream.

    >>> import oar
    >>> oar.device.cuda.device_count() == 0 or oar.device.cuda.Stream().query()
    True
    """
    from .streams import Stream as _Stream

    return _Stream(f"gpu:{_index(device, 'oar.device.cuda.Stream')}", priority)


def current_stream(device=None):
    """The current stream of a GPU (the current one when None).

    >>> import oar
    >>> oar.device.cuda.device_count() == 0 or oar.device.cuda.current_stream().device.is_gpu_place()
    True
    """
    from .streams import current_stream as _current

    return _current(f"gpu:{_index(device, 'oar.device.cuda.current_stream')}")


from .streams import Event, stream_guard  # noqa: E402,F401  (the same objects as oar.device's)


def set_allow_tf32(enabled):
    """Lets float32 matrix products on CUDA use TF32 tensor cores (10-bit mantissas: faster,
    less precise). Off by default, so float32 keeps its precision.

    >>> import oar
    >>> oar.device.cuda.is_compiled() is False or oar.device.cuda.get_allow_tf32() in (True, False)
    True
    """
    _tf32_lib("oar.device.cuda.set_allow_tf32").oar_cuda_set_allow_tf32(1 if enabled else 0)


def get_allow_tf32():
    """Whether float32 matrix products on CUDA may use TF32 (set_allow_tf32)."""
    return bool(_tf32_lib("oar.device.cuda.get_allow_tf32").oar_cuda_get_allow_tf32())


def _tf32_lib(api):
    import ctypes
    _load(api)
    return ctypes.CDLL(_LIB)
