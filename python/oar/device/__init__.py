"""Devices: places, the current device, streams, build queries and memory statistics.

Ops run on the CPU. Where oar was built with CUDA (``oar.device.cuda``),
tensors can also live on a GPU, for the collectives of oar.distributed.
"""
import contextlib
import os

from .. import _C
from . import cuda
from .streams import Event, Stream, StreamContext, current_stream, set_stream, stream_guard

__all__ = [
    "get_cudnn_version", "set_device", "get_device", "XPUPlace", "IPUPlace", "is_compiled_with_xpu",
    "is_compiled_with_ipu", "is_compiled_with_cinn", "is_compiled_with_cuda", "is_compiled_with_rocm",
    "is_compiled_with_distribute", "is_compiled_with_custom_device", "get_all_device_type",
    "get_all_custom_device_type", "get_available_device", "get_available_custom_device", "get_device_properties",
    "Stream", "Event", "current_stream", "set_stream", "stream_guard", "device_guard", "synchronize",
    "device_count", "empty_cache", "max_memory_allocated", "reset_max_memory_allocated", "memory_allocated",
    "memory_reserved", "max_memory_reserved", "reset_max_memory_reserved", "is_available", "is_current_stream_capturing", "get_device_name", "get_device_capability",
    "get_rng_state", "set_rng_state", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
    "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor", "device", "is_bf16_supported",
    "manual_seed", "reset_peak_memory_stats", "ipc_collect", "StreamContext", "CPUPlace", "CUDAPlace",
]


class Place:
    """Where a tensor lives (Paddle's CPUPlace / CUDAPlace).

    >>> import oar
    >>> oar.CUDAPlace(1), oar.CPUPlace() == "cpu"
    (Place(gpu:1), True)
    """

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
    """The CPU.

    >>> import oar
    >>> oar.CPUPlace().is_cpu_place()
    True
    """
    return Place("cpu")


def CUDAPlace(id=0):
    """GPU number `id` (made without checking that it exists; using it checks).

    >>> import oar
    >>> oar.CUDAPlace(0).gpu_device_id()
    0
    """
    return Place("gpu", id)


def XPUPlace(dev_id):
    """Kunlun XPU places: oar has no XPU support, so this raises ValueError (as Paddle builds without XPU do).

    >>> import oar
    >>> try:
    ...     oar.device.XPUPlace(0)
    ... except ValueError as e:
    ...     print(str(e)[:29])
    [oar.device.XPUPlace] oar has
    """
    raise ValueError("[oar.device.XPUPlace] oar has no XPU support; expected CPUPlace() or CUDAPlace(id)")


def IPUPlace():
    """Graphcore IPU places: oar has no IPU support, so this raises ValueError (as Paddle builds without IPU do).

    >>> import oar
    >>> try:
    ...     oar.device.IPUPlace()
    ... except ValueError as e:
    ...     print(str(e)[:29])
    [oar.device.IPUPlace] oar has
    """
    raise ValueError("[oar.device.IPUPlace] oar has no IPU support; expected CPUPlace() or CUDAPlace(id)")


def _parse(device, api):
    """(type, index) for 'cpu', 'gpu', 'gpu:N', a Place or a device index."""
    if isinstance(device, Place):
        return (0, 0) if device.is_cpu_place() else (1, cuda._index(device.gpu_device_id(), api))
    if isinstance(device, int) and not isinstance(device, bool):
        return 1, cuda._index(device, api)
    s = str(device).lower()
    if s in ("cpu", "place(cpu)", "cpuplace()"):
        return 0, 0
    if s.startswith(("gpu", "cuda", "place(gpu")):
        s = s.replace("place(", "").rstrip(")")
        return 1, cuda._index(s, api)
    raise ValueError(f"[{api}] expected 'cpu', 'gpu', 'gpu:N' or a Place, got {device!r}")


def get_device():
    """The device new tensors are made on: 'cpu' or 'gpu:N' (set with set_device).

    >>> import oar
    >>> oar.device.get_device()
    'cpu'
    """
    kind, index = _C._default_device()
    return "cpu" if kind == 0 else f"gpu:{index}"


def set_device(device):
    """Selects the device that new tensors are made on and ops without tensor inputs run on:
    'cpu', 'gpu', 'gpu:N' or a Place. Returns the device's name.

    >>> import oar
    >>> oar.device.set_device("cpu")
    'cpu'
    """
    api = "oar.device.set_device"
    name = str(getattr(device, "_device", device)).split(":")[0].lower()
    if name in ("gpu", "cuda") and not cuda.is_available():
        why = "no CUDA device is visible" if cuda.is_compiled() else "this build has no CUDA support"
        raise ValueError(f"[{api}] device '{device}' is not available: {why}; expected 'cpu'")
    kind, index = _parse(device, api)
    _C._set_default_device(kind, index)
    if kind == 1:
        cuda._state["current"] = index
    return get_device()


class device:
    """A ``with`` block run with `device` as the current device (None: no change).

    >>> import oar
    >>> with oar.device.device("cpu"):
    ...     oar.device.get_device()
    'cpu'
    """

    def __init__(self, device=None):
        self._device = device
        self._prev = None

    def __enter__(self):
        if self._device is not None:
            self._prev = get_device()
            set_device(self._device)
        return self

    def __exit__(self, *exc):
        if self._prev is not None:
            set_device(self._prev)
        return False


_device_context = device  # device_guard's parameter hides the class's name


@contextlib.contextmanager
def device_guard(device):
    """A ``with`` block run with `device` as the current device.

    >>> import oar
    >>> with oar.device.device_guard("cpu"):
    ...     oar.ones([2]).place
    Place(cpu)
    """
    with _device_context(device):
        yield


# Build and hardware queries.

def is_compiled_with_cuda():
    """Whether this build has CUDA support (copies to and from GPUs, NCCL collectives).

    >>> import oar
    >>> oar.device.is_compiled_with_cuda() == oar.device.cuda.is_compiled()
    True
    """
    return cuda.is_compiled()


def _false_query(what):
    def query():
        return False
    query.__name__ = f"is_compiled_with_{what}"
    query.__qualname__ = query.__name__
    query.__doc__ = f"""False: oar has no {what.upper()} support.

    >>> import oar
    >>> oar.device.is_compiled_with_{what}()
    False
    """
    return query


is_compiled_with_rocm = _false_query("rocm")
is_compiled_with_xpu = _false_query("xpu")
is_compiled_with_ipu = _false_query("ipu")
is_compiled_with_cinn = _false_query("cinn")


def is_compiled_with_distribute():
    """Whether the distributed library (process groups, collectives) was built.

    >>> import oar
    >>> oar.device.is_compiled_with_distribute()
    True
    """
    return os.path.exists(os.path.join(os.path.dirname(cuda._LIB), "liboar_dist.so"))


def get_all_custom_device_type():
    """The custom (plugin) device types registered: oar registers none from Python, so [].

    >>> import oar
    >>> oar.device.get_all_custom_device_type()
    []
    """
    return ["custom"] if _C._has_device(2) else []


def get_available_custom_device():
    """The custom (plugin) devices available, as 'type:N': [] without a registered plugin.

    >>> import oar
    >>> oar.device.get_available_custom_device()
    []
    """
    return [f"custom:{i}" for i in range(_C._device_count(2))] if _C._has_device(2) else []


def is_compiled_with_custom_device(device_type):
    """Whether a custom (plugin) device of this type is registered.

    >>> import oar
    >>> oar.device.is_compiled_with_custom_device("npu")
    False
    """
    if not isinstance(device_type, str):
        raise TypeError(f"[oar.device.is_compiled_with_custom_device] device_type must be a str, "
                        f"got {type(device_type).__name__}")
    return device_type in get_all_custom_device_type()


def get_all_device_type():
    """The device types with devices present: 'cpu', plus 'gpu' when a GPU is visible.

    >>> import oar
    >>> oar.device.get_all_device_type()[0]
    'cpu'
    """
    return ["cpu"] + (["gpu"] if cuda.is_available() else []) + get_all_custom_device_type()


def get_available_device():
    """The devices present: 'cpu', then 'gpu:0', 'gpu:1', ... for the visible GPUs.

    >>> import oar
    >>> oar.device.get_available_device()[0]
    'cpu'
    """
    return ["cpu"] + [f"gpu:{i}" for i in range(cuda.device_count())] + get_available_custom_device()


def device_count():
    """The number of GPUs visible (0 without CUDA support, a driver or a GPU).

    >>> import oar
    >>> oar.device.device_count() == oar.device.cuda.device_count()
    True
    """
    return cuda.device_count()


def is_available():
    """Whether a GPU is visible.

    >>> import oar
    >>> oar.device.is_available() == (oar.device.device_count() > 0)
    True
    """
    return cuda.is_available()


def get_cudnn_version():
    """The cuDNN version as an int, or None: oar's CUDA support does not use cuDNN.

    >>> import oar
    >>> oar.device.get_cudnn_version() is None
    True
    """
    return None


def is_bf16_supported(including_emulation=True):
    """Whether bfloat16 tensors can be computed with: True (the CPU kernels cover bfloat16).

    >>> import oar
    >>> oar.device.is_bf16_supported()
    True
    """
    return True


def is_current_stream_capturing():
    """Whether a CUDA graph is being captured on the current stream: never in oar.

    >>> import oar
    >>> oar.device.is_current_stream_capturing()
    False
    """
    return False


def _gpu_index(device, api):
    if device is not None and _parse(device, api)[0] == 0:
        raise ValueError(f"[{api}] expected a GPU device such as 'gpu:0', got {device!r}")
    return cuda._index(getattr(device, "_device", device), api)


def get_device_properties(device=None):
    """The properties of a GPU (the current one when None): name, major, minor,
    total_memory and multi_processor_count; a ValueError for the CPU.

    >>> import oar
    >>> try:
    ...     oar.device.get_device_properties("cpu")
    ... except ValueError as e:
    ...     print(str(e)[:49])
    [oar.device.get_device_properties] expected a GPU
    """
    api = "oar.device.get_device_properties"
    return cuda._properties(_gpu_index(device, api), api)


def get_device_name(device=None):
    """The name of a GPU (the current one when None).

    >>> import oar
    >>> oar.device.device_count() == 0 or isinstance(oar.device.get_device_name(0), str)
    True
    """
    api = "oar.device.get_device_name"
    return cuda._properties(_gpu_index(device, api), api).name


def get_device_capability(device=None):
    """The (major, minor) compute capability of a GPU (the current one when None).

    >>> import oar
    >>> oar.device.device_count() == 0 or len(oar.device.get_device_capability(0)) == 2
    True
    """
    api = "oar.device.get_device_capability"
    p = cuda._properties(_gpu_index(device, api), api)
    return p.major, p.minor


def synchronize(device=None):
    """Waits for the work queued on `device` (the current device when None); see Note [host streams].

    >>> import oar
    >>> oar.device.synchronize()
    """
    current_stream(device).synchronize()


# Random state (the process-wide generator; see oar.Generator).

def get_rng_state(device=None):
    """The state of the generator (oar draws every random number with the CPU generator).

    >>> import oar
    >>> st = oar.device.get_rng_state()
    >>> a = oar.rand([2]); oar.device.set_rng_state(st); b = oar.rand([2])
    >>> bool((a.numpy() == b.numpy()).all())
    True
    """
    from .._random import get_rng_state as _get

    return _get(device)[0]


def set_rng_state(new_state, device=None):
    """Restores a state returned by get_rng_state.

    >>> import oar
    >>> oar.device.set_rng_state(oar.device.get_rng_state())
    """
    from .._random import _default_generator

    _default_generator.set_state(new_state)


def manual_seed(seed):
    """Seeds the generator, as oar.seed.

    >>> import oar
    >>> oar.device.manual_seed(4); a = oar.rand([2])
    >>> oar.device.manual_seed(4); b = oar.rand([2])
    >>> bool((a.numpy() == b.numpy()).all())
    True
    """
    from .._random import manual_seed as _seed

    _seed(seed)


# Memory statistics, of the CPU allocator or of one GPU's.

def _memory(device, api):
    """(allocated, max_allocated, reserved, max_reserved) bytes of the device."""
    if device is None or _parse(device, api)[0] == 0:
        return _C._device_memory(0, 0)
    return _C._device_memory(cuda._CUDA, _gpu_index(device, api))


def max_memory_reserved(device=None):
    """Peak of memory_reserved since start or the last reset_max_memory_reserved.

    >>> import oar
    >>> oar.device.max_memory_reserved() >= oar.device.memory_reserved()
    True
    """
    return _memory(device, "oar.device.max_memory_reserved")[3]


def reset_max_memory_reserved(device=None):
    """Resets the peak of memory_reserved to what is reserved now.

    >>> import oar
    >>> oar.device.reset_max_memory_reserved()
    >>> oar.device.max_memory_reserved() == oar.device.memory_reserved()
    True
    """
    api = "oar.device.reset_max_memory_reserved"
    if device is None or _parse(device, api)[0] == 0:
        _C._device_reset_peak(0, 0, True)
    else:
        _C._device_reset_peak(cuda._CUDA, _gpu_index(device, api), True)


def memory_allocated(device=None):
    """Bytes held by live tensors (on the CPU unless a GPU is named).

    >>> import oar
    >>> x = oar.zeros([1024])
    >>> oar.device.memory_allocated() >= 4096
    True
    """
    return _memory(device, "oar.device.memory_allocated")[0]


def max_memory_allocated(device=None):
    """Peak of memory_allocated since start or the last reset.

    >>> import oar
    >>> oar.device.max_memory_allocated() >= oar.device.memory_allocated()
    True
    """
    return _memory(device, "oar.device.max_memory_allocated")[1]


def memory_reserved(device=None):
    """Bytes held from the system, including cached free blocks.

    >>> import oar
    >>> oar.device.memory_reserved() >= oar.device.memory_allocated()
    True
    """
    return _memory(device, "oar.device.memory_reserved")[2]


def reset_max_memory_allocated(device=None):
    """Resets the peak statistic to the current allocation (CPU allocator).

    >>> import oar
    >>> oar.device.reset_max_memory_allocated()
    >>> oar.device.max_memory_allocated() == oar.device.memory_allocated()
    True
    """
    api = "oar.device.reset_max_memory_allocated"
    if device is not None and _parse(device, api)[0] != 0:
        raise NotImplementedError(f"[{api}] resetting a GPU's peak statistic is not supported; "
                                  "expected device=None or 'cpu'")
    _C.reset_max_memory_allocated()


def reset_peak_memory_stats(device=None):
    """Resets the peak statistics: max_memory_allocated and max_memory_reserved.

    >>> import oar
    >>> oar.device.reset_peak_memory_stats()
    >>> oar.device.max_memory_allocated() == oar.device.memory_allocated()
    True
    """
    reset_max_memory_allocated(device)
    reset_max_memory_reserved(device)


def empty_cache():
    """Returns cached free blocks to the system.

    >>> import oar
    >>> oar.device.empty_cache()
    """
    _C.empty_cache()
    cuda.empty_cache()


def ipc_collect():
    """Frees memory kept for tensors shared with other processes: oar shares none, so nothing to do.

    >>> import oar
    >>> oar.device.ipc_collect()
    """


# Paddle's legacy typed constructors (FloatTensor, LongTensor, ...).

def _typed_constructor(type_name, dtype):
    def make(*args, device=None, requires_grad=False):
        from ..creation import empty, to_tensor

        api = f"oar.device.{type_name}"
        place = None if device is None else _place_of(device, api)
        if not args:
            out = empty([0], dtype)
        elif all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            if any(a < 0 for a in args):
                raise ValueError(f"[{api}] sizes must be non-negative, got {list(args)}")
            out = empty(list(args), dtype)
        elif len(args) == 1:
            out = to_tensor(args[0], dtype=dtype)  # a copy, also of a Tensor
        else:
            raise TypeError(f"[{api}] expected sizes (ints) or one data argument (list, array, Tensor), "
                            f"got {len(args)} arguments of types {[type(a).__name__ for a in args]}")
        if place is not None and place.is_gpu_place():
            out = out.cuda(place.gpu_device_id())
        out.stop_gradient = not requires_grad
        return out

    make.__name__ = make.__qualname__ = type_name
    make.__doc__ = f"""A {dtype} tensor: ``{type_name}(*sizes)`` is uninitialised of that shape,
    ``{type_name}(data)`` holds data (a list, array or Tensor, converted to {dtype}),
    ``{type_name}()`` is empty. Paddle returns a Tensor argument unchanged; oar converts it.

    >>> import oar
    >>> oar.device.{type_name}([1, 0]).dtype == oar.{dtype}
    True
    >>> oar.device.{type_name}(2, 3).shape
    [2, 3]
    """
    return make


def _place_of(device, api):
    from .streams import _place

    return _place(device, api)


FloatTensor = _typed_constructor("FloatTensor", "float32")
DoubleTensor = _typed_constructor("DoubleTensor", "float64")
HalfTensor = _typed_constructor("HalfTensor", "float16")
BFloat16Tensor = _typed_constructor("BFloat16Tensor", "bfloat16")
ByteTensor = _typed_constructor("ByteTensor", "uint8")
CharTensor = _typed_constructor("CharTensor", "int8")
ShortTensor = _typed_constructor("ShortTensor", "int16")
IntTensor = _typed_constructor("IntTensor", "int32")
LongTensor = _typed_constructor("LongTensor", "int64")
BoolTensor = _typed_constructor("BoolTensor", "bool")
