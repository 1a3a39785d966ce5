"""oar.nn.initializer: how parameters are filled when they are created.

An initializer is a callable ``init(param)`` that fills ``param`` in place
(and returns it). Fans follow Paddle: for a 2-D weight [in, out] fan_in is
shape[0] and fan_out shape[1] (Linear stores [in_features, out_features]);
for a conv weight [out_c, in_c, *k] fan_in is in_c * prod(k) and fan_out
out_c * prod(k).
"""
import math
import numbers

import numpy as np

from ... import _C
from ...autograd import no_grad

__all__ = [
    "Initializer", "Constant", "Normal", "TruncatedNormal", "Uniform", "XavierNormal", "XavierUniform",
    "KaimingNormal", "KaimingUniform", "Orthogonal", "Assign", "Dirac", "calculate_gain", "set_global_initializer",
]

_global_weight_init = None
_global_bias_init = None


def set_global_initializer(weight_init, bias_init=None):
    """Sets the initializers used when a parameter has none of its own (None restores the defaults).

    >>> import oar
    >>> oar.nn.initializer.set_global_initializer(oar.nn.initializer.Constant(1.0))
    >>> oar.nn.Linear(2, 2).weight.numpy().tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    >>> oar.nn.initializer.set_global_initializer(None)
    """
    global _global_weight_init, _global_bias_init
    _global_weight_init, _global_bias_init = weight_init, bias_init


def _compute_fans(shape):
    shape = list(shape)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[2:]))
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for an activation (as Paddle's calculate_gain).

    >>> import oar
    >>> round(oar.nn.initializer.calculate_gain("relu"), 4)
    1.4142
    """
    linear = ("sigmoid", "linear", "conv1d", "conv2d", "conv3d", "conv1d_transpose", "conv2d_transpose",
              "conv3d_transpose")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4.0
    raise ValueError(f"[oar.nn.initializer.calculate_gain] unsupported nonlinearity {nonlinearity!r}")


class Initializer:
    """Base class: subclasses implement ``_compute(shape, dtype)`` returning a new tensor.

    >>> import oar
    >>> class Twos(oar.nn.initializer.Initializer):
    ...     def _compute(self, shape, dtype):
    ...         return oar.full(shape, 2.0, dtype=dtype)
    >>> w = oar.create_parameter([2], "float32", default_initializer=Twos())
    >>> w.numpy().tolist()
    [2.0, 2.0]
    """

    def __call__(self, param, block=None):
        with no_grad():
            value = self._compute(list(param.shape), param.dtype)
            param.copy_(value)
        return param

    def _compute(self, shape, dtype):
        raise NotImplementedError

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


def _float_work_dtype(dtype):
    # Sample in float32/float64, then cast: low-precision dtypes have no RNG kernels of their own.
    return _C.dtype.float64 if dtype == _C.dtype.float64 else _C.dtype.float32


class Constant(Initializer):
    """Fills with a constant.

    >>> import oar
    >>> w = oar.zeros([2]); _ = oar.nn.initializer.Constant(0.5)(w); w.numpy().tolist()
    [0.5, 0.5]
    """

    def __init__(self, value=0.0):
        self.value = value

    def _compute(self, shape, dtype):
        return _C.full(shape, self.value, dtype)


class Uniform(Initializer):
    """Uniform samples in [low, high).

    >>> import oar
    >>> w = oar.zeros([100]); _ = oar.nn.initializer.Uniform(-0.1, 0.1)(w)
    >>> bool((w.abs() <= 0.1).all())
    True
    """

    def __init__(self, low=-1.0, high=1.0, seed=0, name=None):
        if low > high:
            raise ValueError(f"[oar.nn.initializer.Uniform] low ({low}) must be <= high ({high})")
        self.low, self.high, self.seed = float(low), float(high), int(seed)

    def _compute(self, shape, dtype):
        u = _C.uniform(shape, _float_work_dtype(dtype), self.low, self.high, self.seed)
        return _C.cast(u, dtype)


class Normal(Initializer):
    """Normal samples with the given mean and std.

    >>> import oar
    >>> _ = oar.seed(1)
    >>> w = oar.zeros([4000]); _ = oar.nn.initializer.Normal(0.0, 2.0)(w)
    >>> abs(float(w.std()) - 2.0) < 0.1
    True
    """

    def __init__(self, mean=0.0, std=1.0, seed=0, name=None):
        if std < 0:
            raise ValueError(f"[oar.nn.initializer.Normal] std must be >= 0, got {std}")
        self.mean, self.std, self.seed = float(mean), float(std), int(seed)

    def _compute(self, shape, dtype):
        g = _C.gaussian(shape, _float_work_dtype(dtype), self.mean, self.std, self.seed)
        return _C.cast(g, dtype)


class TruncatedNormal(Initializer):
    """Normal samples N(mean, std) conditioned on [a, b] (absolute bounds, as Paddle), by inverting the CDF.

    >>> import oar
    >>> w = oar.zeros([1000]); _ = oar.nn.initializer.TruncatedNormal(0.0, 1.0, -2.0, 2.0)(w)
    >>> bool((w.abs() <= 2.0).all())
    True
    """

    def __init__(self, mean=0.0, std=1.0, a=-2.0, b=2.0, seed=0, name=None):
        if std < 0 or a >= b:
            raise ValueError(f"[oar.nn.initializer.TruncatedNormal] need std >= 0 and a < b, "
                             f"got std={std}, a={a}, b={b}")
        self.mean, self.std, self.a, self.b, self.seed = float(mean), float(std), float(a), float(b), int(seed)

    def _compute(self, shape, dtype):
        if self.std == 0:
            return _C.full(shape, min(max(self.mean, self.a), self.b), dtype)
        lo = 0.5 * (1 + math.erf((self.a - self.mean) / (self.std * math.sqrt(2))))
        hi = 0.5 * (1 + math.erf((self.b - self.mean) / (self.std * math.sqrt(2))))
        u = _C.uniform(shape, _C.dtype.float64, 2 * lo - 1, 2 * hi - 1, self.seed)
        u = _C.clip(u, -1 + 1e-15, 1 - 1e-15)
        x = _C.erfinv(u) * (self.std * math.sqrt(2.0)) + self.mean
        return _C.cast(_C.clip(x, self.a, self.b), dtype)


class XavierUniform(Initializer):
    """Uniform in [-limit, limit], limit = gain * sqrt(6 / (fan_in + fan_out)).

    >>> import oar
    >>> w = oar.zeros([3, 5]); _ = oar.nn.initializer.XavierUniform()(w)
    >>> bool((w.abs() <= (6 / 8) ** 0.5).all())
    True
    """

    def __init__(self, fan_in=None, fan_out=None, gain=1.0, name=None):
        self.fan_in, self.fan_out, self.gain = fan_in, fan_out, float(gain)

    def _compute(self, shape, dtype):
        fi, fo = _compute_fans(shape)
        fi = self.fan_in if self.fan_in is not None else fi
        fo = self.fan_out if self.fan_out is not None else fo
        limit = self.gain * math.sqrt(6.0 / max(fi + fo, 1))
        return _C.cast(_C.uniform(shape, _float_work_dtype(dtype), -limit, limit, 0), dtype)


class XavierNormal(Initializer):
    """Normal with std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> import oar
    >>> w = oar.zeros([3, 5]); _ = oar.nn.initializer.XavierNormal()(w); w.shape
    [3, 5]
    """

    def __init__(self, fan_in=None, fan_out=None, gain=1.0, name=None):
        self.fan_in, self.fan_out, self.gain = fan_in, fan_out, float(gain)

    def _compute(self, shape, dtype):
        fi, fo = _compute_fans(shape)
        fi = self.fan_in if self.fan_in is not None else fi
        fo = self.fan_out if self.fan_out is not None else fo
        std = self.gain * math.sqrt(2.0 / max(fi + fo, 1))
        return _C.cast(_C.gaussian(shape, _float_work_dtype(dtype), 0.0, std, 0), dtype)


class KaimingNormal(Initializer):
    """Normal with std = gain / sqrt(fan_in) (He initialisation).

    >>> import oar
    >>> w = oar.zeros([4, 3, 3, 3]); _ = oar.nn.initializer.KaimingNormal()(w); w.shape
    [4, 3, 3, 3]
    """

    def __init__(self, fan_in=None, negative_slope=0.0, nonlinearity="relu"):
        self.fan_in, self.negative_slope, self.nonlinearity = fan_in, float(negative_slope), nonlinearity

    def _compute(self, shape, dtype):
        fi = self.fan_in if self.fan_in is not None else _compute_fans(shape)[0]
        std = calculate_gain(self.nonlinearity, self.negative_slope) / math.sqrt(max(fi, 1))
        return _C.cast(_C.gaussian(shape, _float_work_dtype(dtype), 0.0, std, 0), dtype)


class KaimingUniform(Initializer):
    """Uniform in [-limit, limit], limit = gain * sqrt(3 / fan_in).

    >>> import oar
    >>> w = oar.zeros([6, 3]); _ = oar.nn.initializer.KaimingUniform()(w)
    >>> bool((w.abs() <= (2 * 3 / 6) ** 0.5).all())
    True
    """

    def __init__(self, fan_in=None, negative_slope=0.0, nonlinearity="relu"):
        self.fan_in, self.negative_slope, self.nonlinearity = fan_in, float(negative_slope), nonlinearity

    def _compute(self, shape, dtype):
        fi = self.fan_in if self.fan_in is not None else _compute_fans(shape)[0]
        limit = calculate_gain(self.nonlinearity, self.negative_slope) * math.sqrt(3.0 / max(fi, 1))
        return _C.cast(_C.uniform(shape, _float_work_dtype(dtype), -limit, limit, 0), dtype)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times gain; dims after the first are flattened.

    >>> import oar, numpy as np
    >>> w = oar.zeros([4, 4]); _ = oar.nn.initializer.Orthogonal()(w)
    >>> bool(np.allclose(w.numpy() @ w.numpy().T, np.eye(4), atol=1e-5))
    True
    """

    def __init__(self, gain=1.0, name=None):
        self.gain = float(gain)

    def _compute(self, shape, dtype):
        if len(shape) < 2:
            raise ValueError(f"[oar.nn.initializer.Orthogonal] the parameter must be at least 2-D, got {shape}")
        rows, cols = shape[0], int(np.prod(shape[1:]))
        # The random matrix comes from oar's generator so oar.seed makes it reproducible.
        a = _C.gaussian([max(rows, cols), min(rows, cols)], _C.dtype.float64, 0.0, 1.0, 0).numpy()
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return _C.cast(_C.from_numpy(np.ascontiguousarray(self.gain * q.reshape(shape))), dtype)


class Assign(Initializer):
    """Fills with a given value (NumPy array, list, number or Tensor) of the parameter's shape.

    >>> import oar
    >>> w = oar.zeros([2]); _ = oar.nn.initializer.Assign([1.0, 2.0])(w); w.numpy().tolist()
    [1.0, 2.0]
    """

    def __init__(self, value, name=None):
        self.value = value

    def _compute(self, shape, dtype):
        v = self.value
        arr = v.numpy() if isinstance(v, _C.Tensor) else np.asarray(v)
        if list(arr.shape) != list(shape):
            if arr.size == 1:
                arr = np.full(shape, arr.reshape(-1)[0])
            else:
                raise ValueError(f"[oar.nn.initializer.Assign] value shape {list(arr.shape)} does not match "
                                 f"the parameter shape {list(shape)}")
        return _C.cast(_C.from_numpy(np.ascontiguousarray(arr)), dtype)


class Dirac(Initializer):
    """The identity convolution: a conv weight [out_c, in_c, *k] (3-D to 5-D) is zero except
    weight[g * out_c / groups + i, i, centre of k] = 1 for each group g and i < min(out_c / groups, in_c),
    so that with enough channels the convolution passes its input channels through unchanged.

    >>> import oar
    >>> conv = oar.nn.Conv1D(2, 2, 3, padding=1, weight_attr=oar.nn.initializer.Dirac(), bias_attr=False)
    >>> conv(oar.to_tensor([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]])).numpy().tolist()
    [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]
    """

    def __init__(self, groups=1, name=None):
        if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 1:
            raise ValueError(f"[oar.nn.initializer.Dirac] groups must be a positive int, got {groups!r}")
        self.groups = int(groups)

    def _compute(self, shape, dtype):
        api = "[oar.nn.initializer.Dirac]"
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"{api} only 3-D, 4-D and 5-D weights [out_c, in_c, *kernel] can be initialised, "
                             f"got shape {shape}")
        if shape[0] % self.groups:
            raise ValueError(f"{api} out_c (shape[0] = {shape[0]}) must be divisible by groups ({self.groups})")
        per_group = shape[0] // self.groups
        arr = np.zeros(shape, np.float64 if dtype == _C.dtype.float64 else np.float32)
        centre = tuple(k // 2 for k in shape[2:])
        for g in range(self.groups):
            for i in range(min(per_group, shape[1])):
                arr[(g * per_group + i, i) + centre] = 1.0
        return _C.cast(_C.from_numpy(arr), dtype)
