"""oar.nn.functional: activations with Paddle signatures.

relu, gelu, silu, log_sigmoid, softmax and log_softmax run dedicated kernels;
the others are composites of elementwise ops. Those whose work is one C++ call
are declared in src/ops/activation.toml and come from the generated _ops_gen. All are differentiable to any
order. The in-place forms (``elu_``, ``softmax_``, ...) write the result into x
and stay differentiable (see Note [in-place composites]).
"""
import numbers

from ... import _C
from ..._inplace import inplace_source
from . import _nn_args as A
from . import _ops_gen
from ._ops_gen import *  # noqa: F401,F403  the declared activations (src/ops/activation.toml)

__all__ = list(_ops_gen.__all__) + [  # and those written here
    "relu_", "leaky_relu_", "elu_", "celu", "hardtanh", "hardtanh_", "hardshrink", "softshrink", "thresholded_relu",
    "thresholded_relu_", "tanh_", "tanhshrink", "softmax_", "glu", "swiglu", "prelu", "rrelu", "maxout",
    "gumbel_softmax",
]

_API = "oar.nn.functional."


def _check_float(x, name):
    A.check_tensor(x, _API + name)
    if not x.dtype.is_floating_point:
        raise TypeError(f"[{_API}{name}] x must be a floating-point tensor, got {x.dtype}")


def _scalar(v, like):
    return _C.full([], float(v), like.dtype)


# In-place activations without a kernel of their own (Note [in-place composites]).
def _write_into(x, fn, name):
    A.check_tensor(x, _API + name)
    return x.copy_(fn(inplace_source(x)))


def relu_(x, name=None):
    """relu in place.

    >>> import oar
    >>> x = oar.to_tensor([-1.0, 3.0])
    >>> _ = oar.nn.functional.relu_(x)
    >>> x.numpy().tolist()
    [0.0, 3.0]
    """
    return _C.relu_(x)


def hardtanh(x, min=-1.0, max=1.0, name=None):  # noqa: A002 - Paddle's names
    """x clipped to [min, max].

    >>> import oar
    >>> oar.nn.functional.hardtanh(oar.to_tensor([-2.0, 0.5, 2.0])).numpy().tolist()
    [-1.0, 0.5, 1.0]
    """
    if min <= max:
        return _C.clip(x, float(min), float(max))
    return _C.minimum(_C.maximum(x, _scalar(min, x)), _scalar(max, x))  # Paddle's order when min > max


def tanhshrink(x, name=None):
    """x - tanh(x).

    >>> import oar
    >>> oar.nn.functional.tanhshrink(oar.to_tensor([0.0])).numpy().tolist()
    [0.0]
    """
    return x - _C.tanh(x)


def leaky_relu_(x, negative_slope=0.01, name=None):
    """leaky_relu in place.

    >>> import oar
    >>> x = oar.to_tensor([-2.0, 1.0])
    >>> _ = oar.nn.functional.leaky_relu_(x, 0.5)
    >>> x.numpy().tolist()
    [-1.0, 1.0]
    """
    return _write_into(x, lambda t: leaky_relu(t, negative_slope), "leaky_relu_")


def elu_(x, alpha=1.0, name=None):
    """elu in place; alpha must be >= 0.

    >>> import oar
    >>> x = oar.to_tensor([0.0, 2.0])
    >>> _ = oar.nn.functional.elu_(x)
    >>> x.numpy().tolist()
    [0.0, 2.0]
    """
    if alpha < 0:
        raise ValueError(f"[{_API}elu_] alpha must be >= 0 (use elu for a negative alpha), got {alpha}")
    return _write_into(x, lambda t: elu(t, alpha), "elu_")


def celu(x, alpha=1.0, name=None):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha must not be 0.

    >>> import oar
    >>> y = oar.nn.functional.celu(oar.to_tensor([-1.0, 2.0]), alpha=0.5)
    >>> [round(v, 4) for v in y.numpy().tolist()]
    [-0.4323, 2.0]
    """
    return _celu(x, alpha, _API + "celu")


def _celu(x, alpha, api):
    A.check_tensor(x, api)
    if not x.dtype.is_floating_point:
        raise TypeError(f"[{api}] x must be a floating-point tensor, got {x.dtype}")
    if alpha == 0:
        raise ValueError(f"[{api}] alpha must not be 0")
    zero = _scalar(0.0, x)
    return _C.maximum(x, zero) + _C.minimum(zero, _C.expm1(x / float(alpha)) * float(alpha))


def hardtanh_(x, min=-1.0, max=1.0, name=None):  # noqa: A002 - Paddle's names
    """hardtanh in place.

    >>> import oar
    >>> x = oar.to_tensor([-2.0, 0.5, 2.0])
    >>> _ = oar.nn.functional.hardtanh_(x)
    >>> x.numpy().tolist()
    [-1.0, 0.5, 1.0]
    """
    return _write_into(x, lambda t: hardtanh(t, min, max), "hardtanh_")


def hardshrink(x, threshold=0.5, name=None):
    """x where |x| >= threshold, 0 elsewhere (Paddle keeps the values at +-threshold).

    >>> import oar
    >>> oar.nn.functional.hardshrink(oar.to_tensor([-1.0, 0.3, 0.5])).numpy().tolist()
    [-1.0, 0.0, 0.5]
    """
    A.check_tensor(x, _API + "hardshrink")
    return _C.where(_C.abs(x) >= _scalar(threshold, x), x, _scalar(0.0, x))


def softshrink(x, threshold=0.5, name=None):
    """x - threshold above threshold, x + threshold below -threshold, 0 between; threshold >= 0.

    >>> import oar
    >>> oar.nn.functional.softshrink(oar.to_tensor([-1.0, 0.2, 1.0])).numpy().tolist()
    [-0.5, 0.0, 0.5]
    """
    A.check_tensor(x, _API + "softshrink")
    if threshold < 0:
        raise ValueError(f"[{_API}softshrink] threshold must be >= 0, got {threshold}")
    t = _scalar(threshold, x)
    zero = _scalar(0.0, x)
    return _C.where(x > t, x - t, _C.where(x < -t, x + t, zero))


def thresholded_relu(x, threshold=1.0, value=0.0, name=None):
    """x where x > threshold, value elsewhere.

    >>> import oar
    >>> oar.nn.functional.thresholded_relu(oar.to_tensor([0.5, 1.0, 2.0])).numpy().tolist()
    [0.0, 0.0, 2.0]
    """
    A.check_tensor(x, _API + "thresholded_relu")
    return _C.where(x > _scalar(threshold, x), x, _scalar(value, x))


def thresholded_relu_(x, threshold=1.0, value=0.0, name=None):
    """thresholded_relu in place.

    >>> import oar
    >>> x = oar.to_tensor([0.5, 2.0])
    >>> _ = oar.nn.functional.thresholded_relu_(x, 1.0, 9.0)
    >>> x.numpy().tolist()
    [9.0, 2.0]
    """
    return _write_into(x, lambda t: thresholded_relu(t, threshold, value), "thresholded_relu_")


def tanh_(x, name=None):
    """tanh in place.

    >>> import oar
    >>> x = oar.to_tensor([0.0])
    >>> _ = oar.nn.functional.tanh_(x)
    >>> x.numpy().tolist()
    [0.0]
    """
    A.check_tensor(x, _API + "tanh_")
    return _C.tanh_(x)


def softmax_(x, axis=-1, dtype=None, name=None):
    """softmax in place; with `dtype`, x is cast first and the result (of that dtype) is returned.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 1.0])
    >>> _ = oar.nn.functional.softmax_(x)
    >>> x.numpy().tolist()
    [0.5, 0.5]
    """
    if dtype is not None:
        A.check_tensor(x, _API + "softmax_")
        return softmax(x, axis, dtype)
    return _write_into(x, lambda t: softmax(t, axis), "softmax_")


def _split_halves(x, axis, api):
    n = x.ndim
    if not isinstance(axis, numbers.Integral) or not -n <= axis < n:
        raise ValueError(f"[{api}] axis must be in [{-n}, {n}), got {axis!r}")
    axis = int(axis) % n
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"[{api}] the size of axis {axis} must be even, got shape {list(x.shape)}")
    h = size // 2
    return _C.strided_slice(x, [axis], [0], [h], [1]), _C.strided_slice(x, [axis], [h], [size], [1])


def glu(x, axis=-1, name=None):
    """Gated linear unit: a * sigmoid(b), where a and b are the halves of x along axis.

    >>> import oar
    >>> oar.nn.functional.glu(oar.to_tensor([[2.0, 0.0]])).numpy().tolist()
    [[1.0]]
    """
    return _glu(x, axis, _API + "glu")


def _glu(x, axis, api):
    A.check_tensor(x, api)
    if not x.dtype.is_floating_point:
        raise TypeError(f"[{api}] x must be a floating-point tensor, got {x.dtype}")
    a, b = _split_halves(x, axis, api)
    return a * _C.sigmoid(b)


def swiglu(x, y=None, name=None):
    """silu(x) * y; without y, x is split in halves along its last axis.

    >>> import oar
    >>> y = oar.nn.functional.swiglu(oar.to_tensor([[1.0, 2.0]]))
    >>> round(y.item(), 4)
    1.4621
    """
    _check_float(x, "swiglu")
    if y is None:
        x, y = _split_halves(x, -1, _API + "swiglu")
    else:
        A.check_tensor(y, _API + "swiglu", "y")
        if list(x.shape) != list(y.shape):
            raise ValueError(f"[{_API}swiglu] x and y must have the same shape, got {list(x.shape)} and "
                             f"{list(y.shape)}")
    return _C._nn_functional.silu(x) * y


_PRELU_FORMATS = ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")


def prelu(x, weight, data_format="NCHW", name=None):
    """x where x > 0, weight * x elsewhere; weight holds 1 value or one per channel.

    >>> import oar
    >>> x = oar.to_tensor([[-1.0, 2.0], [-3.0, 4.0]])
    >>> oar.nn.functional.prelu(x, oar.to_tensor([0.5, 0.1])).numpy().tolist()
    [[-0.5, 2.0], [-1.5, 4.0]]
    """
    return _prelu(x, weight, data_format, _API + "prelu")


def _prelu(x, weight, data_format, api):
    A.check_tensor(x, api)
    A.check_tensor(weight, api, "weight")
    if data_format not in _PRELU_FORMATS:
        raise ValueError(f"[{api}] data_format must be one of {_PRELU_FORMATS}, got {data_format!r}")
    if weight.ndim > 1:
        raise ValueError(f"[{api}] weight must be 0-D or 1-D, got shape {list(weight.shape)}")
    n = weight.size
    if n != 1:
        if x.ndim < 2:
            raise ValueError(f"[{api}] x must have at least 2 dims when weight has {n} entries, got shape "
                             f"{list(x.shape)}")
        axis = x.ndim - 1 if data_format in ("NLC", "NHWC", "NDHWC") else 1
        if x.shape[axis] != n:
            raise ValueError(f"[{api}] weight has {n} entries but the channel axis {axis} of x {list(x.shape)} "
                             f"has {x.shape[axis]}")
        shape = [1] * x.ndim
        shape[axis] = n
        weight = _C.reshape(weight, shape)
    elif weight.ndim:
        weight = _C.reshape(weight, [])
    return _C.where(x > _scalar(0.0, x), x, x * weight)


def rrelu(x, lower=1.0 / 8.0, upper=1.0 / 3.0, training=True, name=None):
    """Randomised leaky ReLU: negative entries are scaled by a slope drawn uniformly from
    [lower, upper] per element in training, and by (lower + upper) / 2 otherwise.

    >>> import oar
    >>> y = oar.nn.functional.rrelu(oar.to_tensor([-1.0, 2.0]), 0.1, 0.3, training=False)
    >>> [round(v, 4) for v in y.numpy().tolist()]
    [-0.2, 2.0]
    """
    return _rrelu(x, lower, upper, training, _API + "rrelu")


def _rrelu(x, lower, upper, training, api):
    A.check_tensor(x, api)
    if not x.dtype.is_floating_point:
        raise TypeError(f"[{api}] x must be a floating-point tensor, got {x.dtype}")
    for what, v in (("lower", lower), ("upper", upper)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 <= v <= 1:
            raise ValueError(f"[{api}] {what} must be a number in [0, 1], got {v!r}")
    if upper < lower:
        raise ValueError(f"[{api}] upper must be >= lower, got lower={lower}, upper={upper}")
    zero = _scalar(0.0, x)
    if not training:
        return _C.where(x >= zero, x, x * ((float(lower) + float(upper)) / 2))
    work = _C.dtype.float64 if x.dtype == _C.dtype.float64 else _C.dtype.float32
    slope = _C.cast(_C.uniform(list(x.shape), work, float(lower), float(upper), 0), x.dtype)
    return _C.where(x >= zero, x, x * slope)


def maxout(x, groups, axis=1, name=None):
    """Splits the channel axis of x into groups of `groups` consecutive channels and keeps each
    group's max; axis is the channel axis (1 for NCHW, -1 for NHWC).

    >>> import oar
    >>> x = oar.arange(8, dtype="float32").reshape([1, 4, 1, 2])
    >>> oar.nn.functional.maxout(x, 2).numpy().tolist()
    [[[[2.0, 3.0]], [[6.0, 7.0]]]]
    """
    return _maxout(x, groups, axis, _API + "maxout")


def _maxout(x, groups, axis, api):
    A.check_tensor(x, api)
    if x.ndim < 2:
        raise ValueError(f"[{api}] x must have at least 2 dims, got shape {list(x.shape)}")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"[{api}] axis must be in [{-x.ndim}, {x.ndim}), got {axis!r}")
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups <= 0:
        raise ValueError(f"[{api}] groups must be a positive int, got {groups!r}")
    axis = int(axis) % x.ndim
    if x.shape[axis] % groups:
        raise ValueError(f"[{api}] the channel count {x.shape[axis]} must be divisible by groups ({groups})")
    shape = list(x.shape[:axis]) + [x.shape[axis] // groups, int(groups)] + list(x.shape[axis + 1:])
    return _C.max(_C.reshape(x, shape), [axis + 1])


def gumbel_softmax(x, temperature=1.0, hard=False, axis=-1, name=None):
    """softmax((x + g) / temperature) with Gumbel noise g = -log(-log(u)), u ~ U(0, 1).

    With hard=True the result is the one-hot of its argmax in the forward pass while
    the gradient is that of the soft sample (straight-through).

    >>> import oar
    >>> y = oar.nn.functional.gumbel_softmax(oar.to_tensor([[1.0, 2.0, 3.0]]), hard=True)
    >>> sorted(y.numpy().reshape(-1).tolist())
    [0.0, 0.0, 1.0]
    """
    api = _API + "gumbel_softmax"
    _check_float(x, "gumbel_softmax")
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) or temperature <= 0:
        raise ValueError(f"[{api}] temperature must be > 0, got {temperature!r}")
    n = max(x.ndim, 1)
    if not isinstance(axis, numbers.Integral) or not -n <= axis < n:
        raise ValueError(f"[{api}] axis must be in [{-n}, {n}), got {axis!r}")
    work = _C.dtype.float64 if x.dtype == _C.dtype.float64 else _C.dtype.float32
    tiny = 1e-20
    u = _C.uniform(list(x.shape), work, tiny, 1.0, 0)
    g = _C.cast(-_C.log(-_C.log(u) + tiny), x.dtype)
    y = _C._nn_functional.softmax((x + g) / float(temperature), int(axis), None)
    if not hard:
        return y
    if x.ndim == 0:
        return y - y.detach() + _C.full([], 1.0, y.dtype)
    idx = _C.argmax(y, int(axis), True, _C.dtype.int64)
    y_hard = _C._put_along_axis(_C.full(list(y.shape), 0.0, y.dtype), idx, _C.full(list(idx.shape), 1.0, y.dtype),
                                int(axis), "assign", True, True)
    return y_hard - y.detach() + y
