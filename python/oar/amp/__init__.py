"""oar.amp: automatic mixed precision.

``auto_cast`` switches on the dispatcher's autocast stage for the current
thread: matrix products run in float16/bfloat16, numerically sensitive ops
(exp, log, softmax, reductions, normalisations) in float32, and at level O2
everything else in the low dtype too. ``decorate`` prepares models (and their
optimizers) for O2: parameters are stored in the low dtype and the optimizer
keeps float32 master weights. ``GradScaler`` scales the loss so that float16
gradients do not underflow, and skips steps whose gradients overflowed.
"""
import contextlib
import warnings

from .. import _C
from .grad_scaler import AmpScaler, GradScaler

__all__ = ["auto_cast", "amp_guard", "decorate", "GradScaler", "AmpScaler", "is_float16_supported",
           "is_bfloat16_supported", "white_list", "black_list", "autocast", "is_autocast_enabled", "get_autocast_dtype",
           "get_autocast_cpu_dtype", "get_autocast_gpu_dtype"]

_DTYPES = {"float16": "float16", "bfloat16": "bfloat16"}


def _dtype_str(dtype, api):
    name = str(dtype).replace("paddle.", "")
    if name not in _DTYPES:
        raise ValueError(f"[{api}] dtype must be 'float16' or 'bfloat16', got {dtype!r}")
    return name


def _level(level, api):
    if level not in ("O0", "O1", "O2", "OD"):
        raise ValueError(f"[{api}] level must be 'O0', 'O1', 'O2' or 'OD', got {level!r}")
    return level


# Paddle's operator names (as its AMP lists and programs use them) for the
# oar ops that do the same work.
_PADDLE_OP_NAMES = {
    "matmul_v2": ("matmul",), "mul": ("matmul",), "linear_v2": ("linear", "fused_linear_act"),
    "fused_gemm_epilogue": ("fused_linear_act",), "conv2d": ("conv", "fused_conv"), "conv3d": ("conv", "fused_conv"),
    "depthwise_conv2d": ("conv", "fused_conv"), "conv2d_transpose": ("conv_transpose",),
    "conv3d_transpose": ("conv_transpose",), "elementwise_add": ("add",), "elementwise_sub": ("subtract",),
    "elementwise_mul": ("multiply",), "elementwise_div": ("divide",), "elementwise_pow": ("pow",),
    "reduce_sum": ("sum",), "reduce_mean": ("mean",), "reduce_prod": ("prod",), "reduce_max": ("amax",),
    "reduce_min": ("amin",), "softmax_with_cross_entropy": ("softmax_cross_entropy",),
    "cross_entropy": ("softmax_cross_entropy",), "cross_entropy2": ("softmax_cross_entropy",),
    "c_softmax_with_cross_entropy": ("softmax_cross_entropy",), "pool2d": ("max_pool", "avg_pool"),
    "pool3d": ("max_pool", "avg_pool"), "fused_attention": ("fused_attention",), "flash_attn": ("fused_attention",),
    "lookup_table": ("index_select",), "lookup_table_v2": ("index_select",), "sigmoid_cross_entropy_with_logits": (),
}


def _op_names(names, api):
    """oar op names for a custom list that may use Paddle's operator names.
    Names of ops oar does not have are ignored with a warning, as Paddle
    ignores names it does not know."""
    registered = set(_C._registered_ops())
    out = []
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"[{api}] op names must be strings, got {type(n).__name__}")
        if n in registered:
            out.append(n)
        elif n in _PADDLE_OP_NAMES:
            out.extend(m for m in _PADDLE_OP_NAMES[n] if m in registered)
        else:
            warnings.warn(f"[{api}] '{n}' is not an op oar runs; it is ignored", stacklevel=4)
    return out


@contextlib.contextmanager
def auto_cast(enable=True, custom_white_list=None, custom_black_list=None, level="O1", dtype="float16",
              use_promote=True):
    """Runs the enclosed ops in mixed precision.

    ``custom_white_list`` ops run in the low dtype, ``custom_black_list`` ops in
    float32: names of oar ops (``"matmul"``, ``"exp"``) or Paddle's operator
    names for them (``"matmul_v2"``, ``"reduce_sum"``). Level ``O0``
    (or ``enable=False``) turns autocast off inside the block.

    >>> import oar
    >>> a, b = oar.ones([2, 3]), oar.ones([3, 2])
    >>> with oar.amp.auto_cast(dtype="bfloat16"):
    ...     c = oar.matmul(a, b)
    ...     d = oar.exp(c)
    >>> c.dtype, d.dtype
    (paddle.bfloat16, paddle.float32)
    """
    level = _level(level, "oar.amp.auto_cast")
    dtype = _dtype_str(dtype, "oar.amp.auto_cast")
    white, black = set(custom_white_list or ()), set(custom_black_list or ())
    both = white & black
    if both:
        raise ValueError(f"[oar.amp.auto_cast] ops in both custom_white_list and custom_black_list: {sorted(both)}")
    changed = []
    white = _op_names(sorted(white), "oar.amp.auto_cast")
    black = _op_names(sorted(black), "oar.amp.auto_cast")
    for name, pol in [(n, "low") for n in white] + [(n, "float32") for n in black]:
        changed.append((name, _C._amp_op_policy(name)))
        _C._set_amp_op_policy(name, pol)
    prev = _C._get_autocast()
    on = bool(enable) and level in ("O1", "O2")
    try:
        _C._set_autocast(on, dtype if on else prev[1], 2 if level == "O2" else 1)
        yield
    finally:
        _C._set_autocast(*prev)
        for name, pol in reversed(changed):
            _C._set_amp_op_policy(name, pol)


amp_guard = auto_cast


def autocast(device_type=None, dtype="float16", enabled=True, cache_enabled=True):
    """``auto_cast`` with the argument names of ``paddle.autocast`` (level O1).

    >>> import oar
    >>> with oar.autocast(dtype="bfloat16"):
    ...     oar.amp.is_autocast_enabled(), oar.amp.get_autocast_dtype()
    (True, 'bfloat16')
    """
    return auto_cast(enable=enabled, dtype=dtype, level="O1")


def is_autocast_enabled(device_type=None):
    """Whether ops on this thread run under autocast now.

    >>> import oar
    >>> oar.amp.is_autocast_enabled()
    False
    """
    return bool(_C._get_autocast()[0])


def get_autocast_dtype(device_type=None):
    """The low dtype autocast uses on this thread, as a string (``'float16'``
    unless an ``auto_cast`` block chose another).

    >>> import oar
    >>> oar.amp.get_autocast_dtype()
    'float16'
    """
    return str(_C._get_autocast()[1]).replace("paddle.", "")


def get_autocast_cpu_dtype():
    """``get_autocast_dtype`` for the CPU (oar's autocast state is per thread, not per device).

    >>> import oar
    >>> with oar.amp.auto_cast(dtype="bfloat16"):
    ...     oar.amp.get_autocast_cpu_dtype()
    'bfloat16'
    """
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    """``get_autocast_dtype`` for the GPU (oar's autocast state is per thread, not per device).

    >>> import oar
    >>> oar.amp.get_autocast_gpu_dtype()
    'float16'
    """
    return get_autocast_dtype("gpu")


def white_list():
    """Names of the ops that autocast runs in the low dtype.

    >>> import oar
    >>> "matmul" in oar.amp.white_list(), "exp" in oar.amp.white_list()
    (True, False)
    """
    from .. import _C as C
    return sorted(n for n in C._registered_ops() if C._amp_op_policy(n) == "low")


def black_list():
    """Names of the ops that autocast runs in float32.

    >>> import oar
    >>> "exp" in oar.amp.black_list(), "matmul" in oar.amp.black_list()
    (True, False)
    """
    from .. import _C as C
    return sorted(n for n in C._registered_ops() if C._amp_op_policy(n) == "float32")


# Layers whose parameters stay float32 under O2 (their kernels take low-precision
# activations with float32 scale and shift).
_KEEP_FP32 = ("BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D", "LayerNorm", "GroupNorm",
              "InstanceNorm1D", "InstanceNorm2D", "InstanceNorm3D", "RMSNorm")


def decorate(models, optimizers=None, level="O1", dtype="float16", master_weight=None, save_dtype=None,
             master_grad=False, excluded_layers=None):
    """Prepares models and optimizers for mixed-precision training.

    At ``O2`` the models' floating parameters are cast to ``dtype`` (norm
    layers and ``excluded_layers`` excepted) and the optimizers keep float32
    master weights (``master_weight`` defaults to True). ``O1`` leaves them as
    they are. Returns what was given: ``models`` or ``(models, optimizers)``.

    >>> import oar
    >>> net = oar.nn.Linear(4, 2)
    >>> opt = oar.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    >>> net, opt = oar.amp.decorate(net, opt, level="O2", dtype="bfloat16")
    >>> net.weight.dtype
    paddle.bfloat16
    """
    level = _level(level, "oar.amp.decorate")
    dtype = _dtype_str(dtype, "oar.amp.decorate")
    single_model = not isinstance(models, (list, tuple))
    model_list = [models] if single_model else list(models)
    single_opt = optimizers is not None and not isinstance(optimizers, (list, tuple))
    opt_list = [] if optimizers is None else ([optimizers] if single_opt else list(optimizers))
    if level == "O2":
        excluded = tuple(excluded_layers or ())
        excluded_types = tuple(e for e in excluded if isinstance(e, type))
        excluded_objs = [e for e in excluded if not isinstance(e, type)]
        for model in model_list:
            for layer in [model] + list(model.sublayers()):
                if (type(layer).__name__ in _KEEP_FP32 or isinstance(layer, excluded_types)
                        or any(layer is e for e in excluded_objs)):
                    continue
                for name, p in list(layer._parameters.items()):
                    if p is not None and str(p.dtype) == "paddle.float32":
                        _cast_param_(p, dtype)
            if save_dtype is not None:
                model._amp_save_dtype = _dtype_str(save_dtype, "oar.amp.decorate") if save_dtype != "float32" \
                    else "float32"
        for opt in opt_list:
            opt._multi_precision = True if master_weight is None else bool(master_weight)
    if optimizers is None:
        return models
    return models, optimizers


def _cast_param_(p, dtype):
    """Changes a parameter's dtype in place, keeping the Python object (and so
    every reference optimizers and layers hold)."""
    _C._set_data_(p, p.detach().astype(dtype))


def is_float16_supported(device=None):
    """float16 compute is available on every device oar runs on (CPU: through float32).

    >>> import oar
    >>> oar.amp.is_float16_supported()
    True
    """
    return True


def is_bfloat16_supported(device=None):
    """bfloat16 compute is available (CPU: native where the CPU has AVX-512 BF16/AMX).

    >>> import oar
    >>> oar.amp.is_bfloat16_supported()
    True
    """
    return True
