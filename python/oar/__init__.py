"""oar: a deep-learning framework with a C++ core and a Paddle-compatible Python API.

>>> import oar
>>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
>>> y = (x * x).sum()
>>> y.backward()
>>> x.grad.numpy().tolist()
[[2.0, 4.0], [6.0, 8.0]]
"""
from ._cpu import check_cpu as _check_cpu, select_blas_kernels as _select_blas_kernels

try:
    from ._build_config import X86_LEVEL as _X86_LEVEL
except ImportError:  # a build without the generated file: nothing to check
    _X86_LEVEL = ""
_check_cpu(_X86_LEVEL)
_select_blas_kernels()  # before the BLAS library loads with _C

from . import _C  # noqa: E402
from ._C import Tensor, dtype  # noqa: E402


def _register_function_copies():
    """oar's functions implemented in C++ (oar.exp, nn.functional.gelu, ...)
    are copied by reference, as Python functions are: copy.deepcopy of a
    Layer that holds one (an activation chosen by name) works."""
    import copy
    kind = type(_C.fused_elementwise)
    copy._deepcopy_dispatch.setdefault(kind, copy._deepcopy_atomic)
    copy._copy_dispatch.setdefault(kind, copy._copy_immutable)


_register_function_copies()

# dtypes, as paddle.float32 etc.
bool = dtype.bool  # noqa: A001 - the framework's dtype names shadow builtins on purpose
uint8 = dtype.uint8
int8 = dtype.int8
int16 = dtype.int16
int32 = dtype.int32
int64 = dtype.int64
float16 = dtype.float16
bfloat16 = dtype.bfloat16
float32 = dtype.float32
float64 = dtype.float64
complex64 = dtype.complex64
complex128 = dtype.complex128

from ._ops_gen import *  # noqa: E402,F401,F403  the declared ops (src/ops/*.toml)
from ._C import (  # noqa: E402  runtime functions bound in C++
    set_num_threads, get_num_threads, set_default_dtype as _set_default_dtype,
    get_default_dtype as _get_default_dtype,
)
from .framework import set_default_dtype, get_default_dtype, is_tensor, in_dynamic_mode  # noqa: E402
from .framework import enable_static, disable_static  # noqa: E402
from .creation import (  # noqa: E402
    to_tensor, zeros, ones, full, empty, zeros_like, ones_like, full_like, empty_like, arange, linspace,
    eye, broadcast_to, slice, scale, add_n, numel, shape, rank,
)
from .autograd import grad, no_grad, enable_grad, set_grad_enabled, is_grad_enabled  # noqa: E402
from ._manip import *  # noqa: E402,F401,F403
from ._index import *  # noqa: E402,F401,F403
from ._random import *  # noqa: E402,F401,F403
from ._linalg_ext import *  # noqa: E402,F401,F403
from ._math_ext import *  # noqa: E402,F401,F403
from ._shape_ext import *  # noqa: E402,F401,F403
from ._tensor_ext import *  # noqa: E402,F401,F403
from ._framework_ext import *  # noqa: E402,F401,F403
from .framework_param import ParamAttr, create_parameter  # noqa: E402
from . import autograd, compiler, device, framework, nn, utils  # noqa: E402
from .device import CPUPlace, CUDAPlace, CustomPlace, get_device, set_device  # noqa: E402,F401
from .device import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor,  # noqa: E402,F401
                     HalfTensor, IntTensor, LongTensor, ShortTensor)
from .nn.functional import (adaptive_avg_pool1d, conv1d, conv2d, conv3d, group_norm,  # noqa: E402,F401
                            layer_norm)


def _select_default_device():
    """As in Paddle, a build with CUDA makes new tensors on the first GPU when one is
    visible (CUDA_VISIBLE_DEVICES="" keeps a process on the CPU)."""
    if device.cuda.is_compiled() and device.cuda.device_count() > 0:
        set_device("gpu:0")


_select_default_device()


def is_compiled_with_cuda():
    """Whether this build of oar has CUDA support (devices, NCCL collectives).

    >>> import oar
    >>> oar.is_compiled_with_cuda() == oar.device.cuda.is_compiled()
    True
    """
    return device.cuda.is_compiled()

from . import amp, optimizer, regularizer  # noqa: E402
from .amp import (autocast, is_autocast_enabled, get_autocast_dtype, get_autocast_cpu_dtype,  # noqa: E402,F401
                  get_autocast_gpu_dtype)
from . import callbacks, hapi, metric  # noqa: E402
from .hapi import Model, summary, flops  # noqa: E402
from . import io, models, text, vision  # noqa: E402
from . import linalg  # noqa: E402
from . import fft  # noqa: E402
from . import signal  # noqa: E402
from . import audio  # noqa: E402,F401
from . import profiler  # noqa: E402,F401
from . import func  # noqa: E402,F401
from . import incubate  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401
from . import jit, static  # noqa: E402,F401
from . import inference  # noqa: E402,F401
from . import distributed  # noqa: E402,F401
from . import distribution  # noqa: E402,F401
from .distributed import DataParallel  # noqa: E402,F401
from .linalg import cholesky, eigvalsh, inv as inverse  # noqa: E402,F401
from .utils.dlpack import from_dlpack, to_dlpack  # noqa: E402
from .serialization import save, load  # noqa: E402
from . import _tensor_methods  # noqa: E402
_tensor_methods._attach_module_methods()  # Note [Tensor methods]
from . import _api  # noqa: E402

# Note [API error boundary]: every public function's errors name it.
# The creation functions read their tensor arguments as shapes and values:
# they make their results on the current device, not their arguments'
# (Note [device scope]).
_C._install_error_boundary(_api.relabel_bound, ["full", "zeros", "ones", "empty", "arange", "linspace", "logspace",
                                                "eye", "rand", "randn", "randint", "randperm", "uniform",
                                                "standard_normal", "gaussian"])
for _m in (nn.functional, linalg, fft, signal):
    _api.guard_module(_m)
_api.guard_module(__import__(__name__), "oar")
_api.guard_methods(Tensor, "oar.Tensor")
del _m

__version__ = "0.1.0"
from . import sparse  # noqa: E402,F401
