"""Framework utilities of the paddle namespace: printing options, flags,
reader batching, lazy construction, pinned places, and short names for
functions that live in submodules."""
import numbers

from . import _C
from ._linalg_ext import nan_to_num, outer
from ._math_common import _inplace

__all__ = ["clamp", "ger", "nan_to_num_", "normal_", "set_printoptions", "get_flags", "set_flags", "batch",
           "LazyGuard", "Size", "disable_signal_handler", "CUDAPinnedPlace", "XPUPinnedPlace"]


def clamp(x, min=None, max=None, name=None):  # noqa: A002 - Paddle's names
    """Another name of oar.clip: limits x to [min, max].

    >>> import oar
    >>> oar.clamp(oar.to_tensor([-2.0, 0.5, 3.0]), min=-1.0, max=1.0).numpy().tolist()
    [-1.0, 0.5, 1.0]
    """
    return _C.clip(x, min, max)


def ger(x, y, name=None):
    """The outer product of two 1-D tensors (another name of oar.outer).

    >>> import oar
    >>> oar.ger(oar.to_tensor([1.0, 2.0]), oar.to_tensor([3.0, 4.0, 5.0])).numpy().tolist()
    [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]
    """
    return outer(x, y)


def nan_to_num_(x, nan=0.0, posinf=None, neginf=None, name=None):
    """oar.nan_to_num in place: x takes the result and is returned.

    >>> import oar
    >>> x = oar.to_tensor([float("nan"), 1.0, float("inf")])
    >>> _ = oar.nan_to_num_(x, posinf=9.0)
    >>> x.numpy().tolist()
    [0.0, 1.0, 9.0]
    """
    return _inplace(x, lambda v: nan_to_num(v, nan, posinf, neginf), "oar.nan_to_num_")


def normal_(x, mean=0.0, std=1.0, name=None):
    """Fills x in place with samples of N(mean, std**2) (Tensor.normal_ as a function).

    >>> import oar
    >>> _ = oar.seed(1)
    >>> x = oar.zeros([1000])
    >>> _ = oar.normal_(x, mean=3.0, std=0.5)
    >>> abs(float(x.mean()) - 3.0) < 0.1
    True
    """
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[oar.normal_] x must be a Tensor, got {type(x).__name__}")
    return x.normal_(mean, std)


# ---------------------------------------------------------------- printing

# What Tensor's repr uses (Note: read by _tensor_methods._repr).
PRINT_OPTIONS = {"precision": 8, "threshold": 1000, "edgeitems": 3, "sci_mode": None, "linewidth": 80}


def set_printoptions(precision=None, threshold=None, edgeitems=None, sci_mode=None, linewidth=None):
    """Sets how tensors print: digits after the point, the element count
    above which they are summarised, the items shown at each edge when
    summarised, scientific notation (True, False, or None: automatic) and
    the line width. Unset arguments keep their value.

    >>> import oar
    >>> oar.set_printoptions(precision=2)
    >>> print(oar.to_tensor([1.23456, 2.0]))
    Tensor(shape=[2], dtype=float32, place=Place(cpu), stop_gradient=True,
           [1.23, 2.  ])
    >>> oar.set_printoptions(precision=8)
    """
    api = "oar.set_printoptions"
    for key, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                   ("linewidth", linewidth)):
        if v is None:
            continue
        if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 0:
            raise ValueError(f"[{api}] {key} must be a non-negative int, got {v!r}")
        PRINT_OPTIONS[key] = int(v)
    if sci_mode is not None:
        if not isinstance(sci_mode, bool):
            raise TypeError(f"[{api}] sci_mode must be a bool or None, got {type(sci_mode).__name__}")
        PRINT_OPTIONS["sci_mode"] = sci_mode


# ---------------------------------------------------------------- flags

# Paddle's global flags that programs commonly set, with their defaults.
# oar's CPU kernels are deterministic and it has no cuDNN or allocator
# strategies to choose, so setting these is accepted and recorded; flags
# that would ask for behaviour oar does not have raise instead.
_FLAGS = {
    "FLAGS_cudnn_deterministic": False, "FLAGS_embedding_deterministic": 0, "FLAGS_cudnn_exhaustive_search": False,
    "FLAGS_conv_workspace_size_limit": 512, "FLAGS_cudnn_batchnorm_spatial_persistent": False,
    "FLAGS_allocator_strategy": "auto_growth", "FLAGS_fraction_of_gpu_memory_to_use": 0.92,
    "FLAGS_eager_delete_tensor_gb": 0.0, "FLAGS_use_mkldnn": False, "FLAGS_use_cuda_managed_memory": False,
    "FLAGS_enable_pir_api": True, "FLAGS_check_nan_inf": False, "FLAGS_benchmark": False,
    "FLAGS_call_stack_level": 1, "FLAGS_max_inplace_grad_add": 0, "FLAGS_set_to_1d": False,
}
# Flags whose non-default value oar cannot honour.
_UNSUPPORTED = {"FLAGS_check_nan_inf": "oar does not check every op's output for NaN/Inf; use oar.isfinite on the "
                                       "values you want to check"}


def _flag_name(name, api):
    if not isinstance(name, str):
        raise TypeError(f"[{api}] flag names must be strings, got {type(name).__name__}")
    key = name if name.startswith("FLAGS_") else "FLAGS_" + name
    if key not in _FLAGS:
        raise ValueError(f"[{api}] unknown flag {name!r}; oar knows {sorted(_FLAGS)}")
    return key


def get_flags(flags):
    """The values of Paddle global flags, as {name: value}.

    >>> import oar
    >>> oar.get_flags("FLAGS_cudnn_deterministic")
    {'FLAGS_cudnn_deterministic': False}
    """
    names = [flags] if isinstance(flags, str) else list(flags)
    return {n: _FLAGS[_flag_name(n, "oar.get_flags")] for n in names}


def set_flags(flags):
    """Sets Paddle global flags from {name: value} (see _FLAGS for what oar
    records; a flag whose behaviour oar lacks raises when switched on).

    >>> import oar
    >>> oar.set_flags({"FLAGS_cudnn_deterministic": True})
    >>> oar.get_flags(["FLAGS_cudnn_deterministic"])
    {'FLAGS_cudnn_deterministic': True}
    >>> oar.set_flags({"FLAGS_cudnn_deterministic": False})
    """
    api = "oar.set_flags"
    if not isinstance(flags, dict):
        raise TypeError(f"[{api}] flags must be a dict of name -> value, got {type(flags).__name__}")
    for name, value in flags.items():
        key = _flag_name(name, api)
        default = _FLAGS[key]
        if key in _UNSUPPORTED and value and value != default:
            raise NotImplementedError(f"[{api}] {key}: {_UNSUPPORTED[key]}")
        if isinstance(default, bool) and not isinstance(value, bool):
            raise TypeError(f"[{api}] {key} takes a bool, got {value!r}")
        _FLAGS[key] = value


def disable_signal_handler():
    """Paddle removes the signal handlers it installed; oar installs none, so
    there is nothing to remove.

    >>> import oar
    >>> oar.disable_signal_handler()
    """


# ---------------------------------------------------------------- readers and construction

def batch(reader, batch_size, drop_last=False):
    """A reader (a function returning an iterable of samples) whose items are
    lists of batch_size samples; the last, shorter batch is dropped with
    drop_last.

    >>> import oar
    >>> batched = oar.batch(lambda: iter(range(5)), batch_size=2)
    >>> list(batched())
    [[0, 1], [2, 3], [4]]
    """
    api = "oar.batch"
    if not callable(reader):
        raise TypeError(f"[{api}] reader must be a function returning an iterable, got {type(reader).__name__}")
    if not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool) or batch_size <= 0:
        raise ValueError(f"[{api}] batch_size must be a positive int, got {batch_size!r}")

    def batched():
        group = []
        for sample in reader():
            group.append(sample)
            if len(group) == batch_size:
                yield group
                group = []
        if group and not drop_last:
            yield group
    return batched


class LazyGuard:
    """Paddle builds layers inside LazyGuard without initialising their
    parameters until first use, to save memory for huge models; oar builds
    and initialises them at once, so the layer behaves the same afterwards.

    >>> import oar
    >>> with oar.LazyGuard():
    ...     layer = oar.nn.Linear(2, 3)
    >>> layer.weight.shape
    [2, 3]
    """

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Size(list):
    """A shape: a list of ints that prints as a shape.

    >>> import oar
    >>> s = oar.Size([2, 3])
    >>> s, s[1], list(s) == [2, 3]
    (oar.Size([2, 3]), 3, True)
    """

    def __init__(self, iterable=()):
        dims = list(iterable)
        for d in dims:
            if not isinstance(d, numbers.Integral) or isinstance(d, bool):
                raise TypeError(f"[oar.Size] dims must be ints, got {d!r}")
        super().__init__(int(d) for d in dims)

    def numel(self):
        n = 1
        for d in self:
            n *= d
        return n

    def __repr__(self):
        return f"oar.Size({list(self)})"


def CUDAPinnedPlace():
    """Page-locked host memory for fast GPU copies. oar allocates host memory
    one way, so on a CUDA build this is the CPU place; without CUDA it raises,
    as Paddle does.

    >>> import oar
    >>> oar.is_compiled_with_cuda() or oar.CUDAPinnedPlace is not None
    True
    """
    from .device import CPUPlace, cuda
    if not cuda.is_compiled():
        raise ValueError("[oar.CUDAPinnedPlace] needs a build of oar with CUDA; expected CPUPlace()")
    return CPUPlace()


def XPUPinnedPlace():
    """Kunlun XPU pinned memory: oar has no XPU support, so this raises.

    >>> import oar
    >>> try:
    ...     oar.XPUPinnedPlace()
    ... except ValueError as e:
    ...     print(str(e)[:35])
    [oar.XPUPinnedPlace] oar has no XPU
    """
    raise ValueError("[oar.XPUPinnedPlace] oar has no XPU support; expected CPUPlace() or CUDAPlace(id)")
