"""Activation layers over oar.nn.functional's activations (plus PReLU with its parameter)."""
from .. import functional as F
from ..functional import activation as _act
from .layers import Layer

__all__ = [
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "CELU", "SELU", "GELU", "Silu", "SiLU", "Swish", "Softplus", "Softsign",
    "Sigmoid", "LogSigmoid", "Hardswish", "Hardsigmoid", "Hardtanh", "Hardshrink", "Softshrink", "ThresholdedReLU",
    "Mish", "Tanh", "Tanhshrink", "Softmax", "Softmax2D", "LogSoftmax", "PReLU", "RReLU", "Maxout", "GLU",
]


class _Activation(Layer):
    """An activation without parameters: forward calls ``_fn(x, **self._kw)``."""

    _fn = None

    def __init__(self, **kw):
        super().__init__()
        self._kw = kw

    def forward(self, x):
        return type(self)._fn(x, **self._kw)

    def extra_repr(self):
        return ", ".join(f"{k}={v}" for k, v in self._kw.items())


class ReLU(_Activation):
    """max(x, 0).

    >>> import oar
    >>> oar.nn.ReLU()(oar.to_tensor([-1.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
    """
    _fn = staticmethod(F.relu)

    def __init__(self, name=None):
        super().__init__()


class ReLU6(_Activation):
    """min(max(x, 0), 6).

    >>> import oar
    >>> oar.nn.ReLU6()(oar.to_tensor([-1.0, 7.0])).numpy().tolist()
    [0.0, 6.0]
    """
    _fn = staticmethod(F.relu6)

    def __init__(self, name=None):
        super().__init__()


class LeakyReLU(_Activation):
    """x for x > 0, negative_slope * x otherwise.

    >>> import oar
    >>> oar.nn.LeakyReLU(0.5)(oar.to_tensor([-2.0, 2.0])).numpy().tolist()
    [-1.0, 2.0]
    """
    _fn = staticmethod(F.leaky_relu)

    def __init__(self, negative_slope=0.01, name=None):
        super().__init__(negative_slope=negative_slope)


class ELU(_Activation):
    """x for x > 0, alpha * (exp(x) - 1) otherwise.

    >>> import oar
    >>> oar.nn.ELU()(oar.to_tensor([1.0])).numpy().tolist()
    [1.0]
    """
    _fn = staticmethod(F.elu)

    def __init__(self, alpha=1.0, name=None):
        super().__init__(alpha=alpha)


class CELU(_Activation):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> import oar
    >>> oar.nn.CELU()(oar.to_tensor([2.0])).numpy().tolist()
    [2.0]
    """
    _fn = staticmethod(lambda x, alpha: _act._celu(x, alpha, "oar.nn.CELU"))

    def __init__(self, alpha=1.0, name=None):
        super().__init__(alpha=alpha)


class SELU(_Activation):
    """scale * elu(x, alpha) with the self-normalising constants.

    >>> import oar
    >>> round(oar.nn.SELU()(oar.to_tensor([1.0])).item(), 4)
    1.0507
    """
    _fn = staticmethod(F.selu)

    def __init__(self, scale=1.0507009873554804934193349852946, alpha=1.6732632423543772848170429916717, name=None):
        super().__init__(scale=scale, alpha=alpha)


class GELU(_Activation):
    """x * Phi(x) (approximate=True: the tanh form).

    >>> import oar
    >>> round(oar.nn.GELU()(oar.to_tensor([1.0])).item(), 4)
    0.8413
    """
    _fn = staticmethod(F.gelu)

    def __init__(self, approximate=False, name=None):
        super().__init__(approximate=approximate)


class Silu(_Activation):
    """x * sigmoid(x).

    >>> import oar
    >>> round(oar.nn.Silu()(oar.to_tensor([1.0])).item(), 4)
    0.7311
    """
    _fn = staticmethod(F.silu)

    def __init__(self, inplace=False, name=None):
        super().__init__()
        self._inplace = bool(inplace)

    def forward(self, x):
        if self._inplace:
            return _act._write_into(x, F.silu, "silu")
        return F.silu(x)

    def extra_repr(self):
        return "inplace=True" if self._inplace else ""


SiLU = Silu


class Swish(_Activation):
    """x * sigmoid(x).

    >>> import oar
    >>> round(oar.nn.Swish()(oar.to_tensor([1.0])).item(), 4)
    0.7311
    """
    _fn = staticmethod(F.swish)

    def __init__(self, name=None):
        super().__init__()


class Softplus(_Activation):
    """log(1 + exp(beta * x)) / beta, linear above threshold.

    >>> import oar
    >>> round(oar.nn.Softplus()(oar.to_tensor([0.0])).item(), 4)
    0.6931
    """
    _fn = staticmethod(F.softplus)

    def __init__(self, beta=1, threshold=20, name=None):
        super().__init__(beta=beta, threshold=threshold)


class Softsign(_Activation):
    """x / (1 + |x|).

    >>> import oar
    >>> oar.nn.Softsign()(oar.to_tensor([1.0])).numpy().tolist()
    [0.5]
    """
    _fn = staticmethod(F.softsign)

    def __init__(self, name=None):
        super().__init__()


class Sigmoid(_Activation):
    """1 / (1 + exp(-x)).

    >>> import oar
    >>> oar.nn.Sigmoid()(oar.to_tensor([0.0])).numpy().tolist()
    [0.5]
    """
    _fn = staticmethod(F.sigmoid)

    def __init__(self, name=None):
        super().__init__()


class LogSigmoid(_Activation):
    """log(sigmoid(x)).

    >>> import oar
    >>> round(oar.nn.LogSigmoid()(oar.to_tensor([0.0])).item(), 4)
    -0.6931
    """
    _fn = staticmethod(F.log_sigmoid)

    def __init__(self, name=None):
        super().__init__()


class Hardswish(_Activation):
    """x * relu6(x + 3) / 6.

    >>> import oar
    >>> oar.nn.Hardswish()(oar.to_tensor([3.0])).numpy().tolist()
    [3.0]
    """
    _fn = staticmethod(F.hardswish)

    def __init__(self, name=None):
        super().__init__()


class Hardsigmoid(_Activation):
    """clip(x / 6 + 0.5, 0, 1).

    >>> import oar
    >>> oar.nn.Hardsigmoid()(oar.to_tensor([0.0])).numpy().tolist()
    [0.5]
    """
    _fn = staticmethod(F.hardsigmoid)

    def __init__(self, name=None):
        super().__init__()


class Hardtanh(_Activation):
    """clip(x, min, max).

    >>> import oar
    >>> oar.nn.Hardtanh()(oar.to_tensor([-3.0, 0.5, 3.0])).numpy().tolist()
    [-1.0, 0.5, 1.0]
    """
    _fn = staticmethod(F.hardtanh)

    def __init__(self, min=-1.0, max=1.0, name=None):  # noqa: A002 - Paddle's names
        super().__init__(min=min, max=max)


class Hardshrink(_Activation):
    """x where |x| >= threshold, else 0.

    >>> import oar
    >>> oar.nn.Hardshrink()(oar.to_tensor([-1.0, 0.2, 1.0])).numpy().tolist()
    [-1.0, 0.0, 1.0]
    """
    _fn = staticmethod(F.hardshrink)

    def __init__(self, threshold=0.5, name=None):
        super().__init__(threshold=threshold)


class Softshrink(_Activation):
    """x - threshold above threshold, x + threshold below -threshold, else 0.

    >>> import oar
    >>> oar.nn.Softshrink()(oar.to_tensor([-1.0, 0.2, 1.0])).numpy().tolist()
    [-0.5, 0.0, 0.5]
    """
    _fn = staticmethod(F.softshrink)

    def __init__(self, threshold=0.5, name=None):
        if threshold < 0:
            raise ValueError(f"[oar.nn.Softshrink] threshold must be >= 0, got {threshold}")
        super().__init__(threshold=threshold)


class ThresholdedReLU(_Activation):
    """x where x > threshold, else value.

    >>> import oar
    >>> oar.nn.ThresholdedReLU(1.0)(oar.to_tensor([0.5, 2.0])).numpy().tolist()
    [0.0, 2.0]
    """
    _fn = staticmethod(F.thresholded_relu)

    def __init__(self, threshold=1.0, value=0.0, name=None):
        super().__init__(threshold=threshold, value=value)


class Mish(_Activation):
    """x * tanh(softplus(x)).

    >>> import oar
    >>> oar.nn.Mish()(oar.to_tensor([0.0])).numpy().tolist()
    [0.0]
    """
    _fn = staticmethod(F.mish)

    def __init__(self, name=None):
        super().__init__()


class Tanh(_Activation):
    """tanh(x).

    >>> import oar
    >>> oar.nn.Tanh()(oar.to_tensor([0.0])).numpy().tolist()
    [0.0]
    """
    _fn = staticmethod(F.tanh)

    def __init__(self, name=None):
        super().__init__()


class Tanhshrink(_Activation):
    """x - tanh(x).

    >>> import oar
    >>> oar.nn.Tanhshrink()(oar.to_tensor([0.0])).numpy().tolist()
    [0.0]
    """
    _fn = staticmethod(F.tanhshrink)

    def __init__(self, name=None):
        super().__init__()


class Softmax(_Activation):
    """softmax along axis.

    >>> import oar
    >>> oar.nn.Softmax()(oar.to_tensor([1.0, 1.0])).numpy().tolist()
    [0.5, 0.5]
    """
    _fn = staticmethod(F.softmax)

    def __init__(self, axis=-1, name=None):
        super().__init__(axis=axis)


class Softmax2D(_Activation):
    """softmax over the channel axis of [C, H, W] or [N, C, H, W] input.

    >>> import oar
    >>> oar.nn.Softmax2D()(oar.ones([1, 2, 1, 1])).numpy().reshape(-1).tolist()
    [0.5, 0.5]
    """
    _fn = staticmethod(lambda x: F.softmax(x, axis=-3))

    def forward(self, x):
        if x.ndim not in (3, 4):
            raise ValueError(f"[oar.nn.Softmax2D] input must be 3-D or 4-D, got shape {x.shape}")
        return F.softmax(x, axis=-3)


class LogSoftmax(_Activation):
    """log(softmax(x)) along axis, computed stably.

    >>> import oar
    >>> round(oar.nn.LogSoftmax()(oar.to_tensor([1.0, 1.0]))[0].item(), 4)
    -0.6931
    """
    _fn = staticmethod(F.log_softmax)

    def __init__(self, axis=-1, name=None):
        super().__init__(axis=axis)


class PReLU(Layer):
    """x for x > 0, weight * x otherwise; weight has num_parameters entries (1, or one per channel).

    >>> import oar
    >>> act = oar.nn.PReLU(init=0.25)
    >>> act(oar.to_tensor([-4.0, 2.0])).numpy().tolist()
    [-1.0, 2.0]
    """

    def __init__(self, num_parameters=1, init=0.25, weight_attr=None, data_format="NCHW", name=None):
        super().__init__()
        from ..initializer import Constant

        if isinstance(num_parameters, bool) or not isinstance(num_parameters, int) or num_parameters < 1:
            raise ValueError(f"[oar.nn.PReLU] num_parameters must be a positive int, got {num_parameters!r}")
        if data_format not in ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"):
            raise ValueError(f"[oar.nn.PReLU] unsupported data_format {data_format!r}")
        self._num_parameters, self._init, self._data_format = num_parameters, init, data_format
        # Paddle names the parameter `_weight`; state dicts use that key.
        self._weight = self.create_parameter([num_parameters], attr=weight_attr,
                                             default_initializer=Constant(float(init)))

    @property
    def weight(self):
        return self._weight

    def forward(self, x):
        return _act._prelu(x, self._weight, self._data_format, "oar.nn.PReLU")

    def extra_repr(self):
        return f"num_parameters={self._num_parameters}, data_format={self._data_format}, init={self._init}"


class RReLU(Layer):
    """Randomised leaky ReLU: the negative slope is uniform in [lower, upper] in training and
    (lower + upper) / 2 in evaluation.

    >>> import oar
    >>> act = oar.nn.RReLU(0.1, 0.3); _ = act.eval()
    >>> [round(v, 4) for v in act(oar.to_tensor([-1.0, 1.0])).numpy().tolist()]
    [-0.2, 1.0]
    """

    def __init__(self, lower=1.0 / 8.0, upper=1.0 / 3.0, name=None):
        super().__init__()
        if not 0 <= lower <= upper <= 1:
            raise ValueError(f"[oar.nn.RReLU] need 0 <= lower <= upper <= 1, got lower={lower}, upper={upper}")
        self.lower, self.upper = float(lower), float(upper)

    def forward(self, x):
        return _act._rrelu(x, self.lower, self.upper, self.training, "oar.nn.RReLU")

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}"


class Maxout(Layer):
    """Splits the channel axis into groups and takes the max within each group.

    >>> import oar
    >>> oar.nn.Maxout(groups=2)(oar.ones([1, 4, 3, 3])).shape
    [1, 2, 3, 3]
    """

    def __init__(self, groups, axis=1, name=None):
        super().__init__()
        self.groups, self.axis = int(groups), int(axis)

    def forward(self, x):
        return _act._maxout(x, self.groups, self.axis, "oar.nn.Maxout")

    def extra_repr(self):
        return f"groups={self.groups}, axis={self.axis}"


class GLU(Layer):
    """Gated linear unit: a * sigmoid(b) where a, b are the halves of x along axis.

    >>> import oar
    >>> oar.nn.GLU()(oar.ones([2, 4])).shape
    [2, 2]
    """

    def __init__(self, axis=-1, name=None):
        super().__init__()
        self.axis = axis

    def forward(self, x):
        return _act._glu(x, self.axis, "oar.nn.GLU")
