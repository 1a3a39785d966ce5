"""Devices: places, the current device, streams, build queries and memory statistics.

Ops run where their tensors are: on the CPU, on a GPU where oar was built
with CUDA (``oar.device.cuda``), or on a plugin device (a custom device such
as ``custom_cpu``, loaded from ``oar/plugins/`` or ``OAR_PLUGIN_PATH`` on
first use; docs/devices.md).
"""
import contextlib
import os
import re

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
    "CustomPlace", "kernel_signature",
]


class Place:
    """Where a tensor lives (Paddle's CPUPlace / CUDAPlace / CustomPlace).

    >>> import oar
    >>> oar.CUDAPlace(1), oar.CPUPlace() == "cpu", oar.CustomPlace("npu", 2)
    (Place(gpu:1), True, Place(npu:2))
    """

    def __init__(self, kind, index=0):
        self._kind, self._index = kind, int(index)

    @property
    def _device(self):
        return "cpu" if self._kind == "cpu" else f"{self._kind}:{self._index}"

    def is_cpu_place(self):
        return self._kind == "cpu"

    def is_gpu_place(self):
        return self._kind == "gpu"

    def is_custom_place(self):
        return self._kind not in ("cpu", "gpu")

    def gpu_device_id(self):
        return self._index

    def custom_device_id(self):
        return self._index

    def custom_device_type(self):
        return self._kind if self.is_custom_place() else ""

    def get_device_id(self):
        return self._index

    def get_device_type(self):
        return self._kind

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


def _place_from(kind, index):
    """The Place of a device given as (device type number, index)."""
    if kind == 0:
        return Place("cpu")
    return Place("gpu" if kind == 1 else _C._device_type_name(kind), index)


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


_TYPE_NAME = re.compile(r"[a-z][a-z0-9_]*")


def CustomPlace(device_type, device_id=0):
    """Device number `device_id` of the plugin device type `device_type` (made
    without checking that it exists; using it loads the plugins and checks).

    >>> import oar
    >>> p = oar.CustomPlace("custom_cpu", 1)
    >>> p, p.is_custom_place(), p.custom_device_type(), p.custom_device_id()
    (Place(custom_cpu:1), True, 'custom_cpu', 1)
    """
    api = "oar.CustomPlace"
    if not isinstance(device_type, str) or not _TYPE_NAME.fullmatch(device_type) or device_type in ("cpu", "gpu"):
        raise ValueError(f"[{api}] device_type must be a plugin device type name such as 'custom_cpu', "
                         f"got {device_type!r}")
    if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < 0:
        raise ValueError(f"[{api}] device_id must be a non-negative int, got {device_id!r}")
    return Place(device_type, device_id)


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


def _custom(kind, num, api):
    """(type, index) of plugin device `kind` number `num` (None: the current
    device's index when it is of that type, else 0), loading plugins first."""
    t = _C._custom_device_type(kind, api)
    if num is None:
        cur_kind, cur_index = _C._default_device()
        num = cur_index if cur_kind == t else 0
    n = _C._device_count(t)
    if not 0 <= num < n:
        raise ValueError(f"[{api}] {kind}:{num} does not exist: {n} {kind} device(s) are present")
    return t, num


def _parse(device, api):
    """(type, index) for 'cpu', 'gpu', 'gpu:N', '<plugin type>[:N]', a Place or a device index."""
    if isinstance(device, Place):
        if device.is_cpu_place():
            return 0, 0
        if device.is_gpu_place():
            return 1, cuda._index(device.gpu_device_id(), api)
        return _custom(device.custom_device_type(), device.custom_device_id(), api)
    if isinstance(device, int) and not isinstance(device, bool):
        return 1, cuda._index(device, api)
    s = str(device).lower()
    if s in ("cpu", "place(cpu)", "cpuplace()"):
        return 0, 0
    if s.startswith(("gpu", "cuda", "place(gpu")):
        s = s.replace("place(", "").rstrip(")")
        return 1, cuda._index(s, api)
    if isinstance(device, str):
        kind, sep, num = s.partition(":")
        if _TYPE_NAME.fullmatch(kind) and (not sep or num.isdigit()):
            return _custom(kind, int(num) if sep else None, api)
    raise ValueError(f"[{api}] expected 'cpu', 'gpu', 'gpu:N', a plugin device such as 'custom_cpu:N', or a "
                     f"Place, got {device!r}")


def get_device():
    """The device new tensors are made on: 'cpu', 'gpu:N' or a plugin device such as 'custom_cpu:0'
    (set with set_device).

    >>> import oar
    >>> oar.device.get_device()
    'cpu'
    """
    kind, index = _C._default_device()
    return _place_from(kind, index)._device


def set_device(device):
    """Selects the device that new tensors are made on and ops without tensor inputs run on:
    'cpu', 'gpu', 'gpu:N', a plugin device ('custom_cpu', 'custom_cpu:1') or a Place. Returns its
    Place (which compares equal to the device's name).

    >>> import oar
    >>> oar.device.set_device("cpu")
    Place(cpu)
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
    return _place_from(kind, index)


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
    """The plugin device types that are loaded (loading the plugins on first use).

    >>> import oar
    >>> isinstance(oar.device.get_all_custom_device_type(), list)
    True
    """
    return _C._custom_device_types("oar.device.get_all_custom_device_type")


def get_available_custom_device():
    """The plugin devices present, as 'type:N' (loading the plugins on first use).

    >>> import oar
    >>> all(":" in d for d in oar.device.get_available_custom_device())
    True
    """
    out = []
    for name in _C._custom_device_types("oar.device.get_available_custom_device"):
        t = _C._custom_device_type(name, "oar.device.get_available_custom_device")
        out += [f"{name}:{i}" for i in range(_C._device_count(t))]
    return out


def is_compiled_with_custom_device(device_type):
    """Whether a plugin device of this type is loaded (loading the plugins on first use).

    >>> import oar
    >>> oar.device.is_compiled_with_custom_device("npu")
    False
    """
    if not isinstance(device_type, str):
        raise TypeError(f"[oar.device.is_compiled_with_custom_device] device_type must be a str, "
                        f"got {type(device_type).__name__}")
    return device_type in _C._custom_device_types("oar.device.is_compiled_with_custom_device")


def get_all_device_type():
    """The device types with devices present: 'cpu', 'gpu' when a GPU is visible, then the plugin types.

    >>> import oar
    >>> oar.device.get_all_device_type()[0]
    'cpu'
    """
    return ["cpu"] + (["gpu"] if cuda.is_available() else []) + get_all_custom_device_type()


def get_available_device():
    """The devices present: 'cpu', then 'gpu:0', 'gpu:1', ... for the visible GPUs, then the plugin devices.

    >>> import oar
    >>> oar.device.get_available_device()[0]
    'cpu'
    """
    return ["cpu"] + [f"gpu:{i}" for i in range(cuda.device_count())] + get_available_custom_device()


def kernel_signature(op):
    """What a device plugin needs to implement op `op` (a registered op name): the names of its
    attributes, in the order a kernel reads them, and the dtypes each device type has a kernel for.

    >>> import oar
    >>> sig = oar.device.kernel_signature("matmul")
    >>> sig["attrs"], "float32" in sig["kernels"]["cpu"]
    (['transpose_x', 'transpose_y'], True)
    """
    if not isinstance(op, str):
        raise TypeError(f"[oar.device.kernel_signature] op must be a str, got {type(op).__name__}")
    attrs, kernels = _C._op_kernels(op)
    return {"attrs": attrs, "kernels": kernels}


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
    """The name of a GPU (the current one when None) or of a plugin device ('custom_cpu:0').

    >>> import oar
    >>> oar.device.device_count() == 0 or isinstance(oar.device.get_device_name(0), str)
    True
    """
    api = "oar.device.get_device_name"
    if device is not None and _parse(device, api)[0] >= 2:
        return _C._device_name(*_parse(device, api))
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
    """Waits for the work queued on every stream of `device` (the current device when None); see
    Note [device streams] in oar.device.streams.

    >>> import oar
    >>> oar.device.synchronize()
    """
    kind, index = _stats_device(device, "oar.device.synchronize")
    if kind != 0:
        _C._device_synchronize(kind, index)


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


# Memory statistics of a device's caching allocator: the CPU's, a GPU's or a plugin device's.

def _stats_device(device, api):
    """(type, index) of `device`, the current device (oar.set_device) when None."""
    return _C._default_device() if device is None else _parse(device, api)


def _memory(device, api):
    """(allocated, max_allocated, reserved, max_reserved) bytes of the device."""
    return _C._device_memory(*_stats_device(device, api))


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
    _C._device_reset_peak(*_stats_device(device, "oar.device.reset_max_memory_reserved"), True)


def memory_allocated(device=None):
    """Bytes held by live tensors on `device` (the current device when None).

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
    """Bytes held from the device, including cached free blocks.

    >>> import oar
    >>> oar.device.memory_reserved() >= oar.device.memory_allocated()
    True
    """
    return _memory(device, "oar.device.memory_reserved")[2]


def reset_max_memory_allocated(device=None):
    """Resets the peak statistic to the current allocation.

    >>> import oar
    >>> oar.device.reset_max_memory_allocated()
    >>> oar.device.max_memory_allocated() == oar.device.memory_allocated()
    True
    """
    _C._device_reset_peak(*_stats_device(device, "oar.device.reset_max_memory_allocated"), False)


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
    """Returns the cached free blocks of the CPU, the current GPU and every loaded plugin device.

    >>> import oar
    >>> oar.device.empty_cache()
    """
    _C.empty_cache()
    cuda.empty_cache()
    for t in range(2, _C._num_device_types):  # the plugin slots; nothing is loaded here
        for i in range(_C._device_count(t)):
            _C._device_empty_cache(t, i)


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
        if place is not None and not place.is_cpu_place():
            out = out.to(place)
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
