"""oar.nn.functional: activations with Paddle signatures.

relu, gelu, silu, log_sigmoid, softmax and log_softmax run dedicated kernels;
the others are composites of elementwise ops. All are differentiable to any
order.
"""
from ... import _C

__all__ = [
    "relu", "relu_", "relu6", "leaky_relu", "elu", "selu", "gelu", "silu", "swish", "softplus", "softsign",
    "sigmoid", "log_sigmoid", "hardswish", "hardsigmoid", "hardtanh", "mish", "tanh", "tanhshrink", "softmax",
    "log_softmax",
]


def relu(x, name=None):
    """max(x, 0).

    >>> import oar
    >>> oar.nn.functional.relu(oar.to_tensor([-1.0, 0.0, 2.0])).numpy().tolist()
    [0.0, 0.0, 2.0]
    """
    return _C.relu(x)


def relu_(x, name=None):
    """relu in place.

    >>> import oar
    >>> x = oar.to_tensor([-1.0, 3.0])
    >>> _ = oar.nn.functional.relu_(x)
    >>> x.numpy().tolist()
    [0.0, 3.0]
    """
    return _C.relu_(x)


def relu6(x, name=None):
    """min(max(x, 0), 6).

    >>> import oar
    >>> oar.nn.functional.relu6(oar.to_tensor([-1.0, 3.0, 8.0])).numpy().tolist()
    [0.0, 3.0, 6.0]
    """
    return _C.relu6(x)


def leaky_relu(x, negative_slope=0.01, name=None):
    """x where x > 0, negative_slope * x elsewhere.

    >>> import oar
    >>> oar.nn.functional.leaky_relu(oar.to_tensor([-2.0, 1.0]), 0.5).numpy().tolist()
    [-1.0, 1.0]
    """
    return _C.leaky_relu(x, float(negative_slope))


def elu(x, alpha=1.0, name=None):
    """x where x > 0, alpha * (exp(x) - 1) elsewhere.

    >>> import oar
    >>> oar.nn.functional.elu(oar.to_tensor([0.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
    """
    return _C.elu(x, float(alpha))


def selu(x, scale=1.0507009873554804934193349852946, alpha=1.6732632423543772848170429916717, name=None):
    """scale * elu(x, alpha).

    >>> import oar
    >>> round(oar.nn.functional.selu(oar.to_tensor([1.0])).item(), 4)
    1.0507
    """
    return _C.selu(x, float(scale), float(alpha))


def gelu(x, approximate=False, name=None):
    """x * Phi(x); approximate=True (or 'tanh') uses the tanh form.

    >>> import oar
    >>> round(oar.nn.functional.gelu(oar.to_tensor([1.0])).item(), 4)
    0.8413
    >>> round(oar.nn.functional.gelu(oar.to_tensor([1.0]), approximate=True).item(), 4)
    0.8412
    """
    if isinstance(approximate, str):
        if approximate not in ("tanh", "none"):
            raise ValueError(f"[oar.nn.functional.gelu] approximate must be 'tanh' or 'none', got {approximate!r}")
        approximate = approximate == "tanh"
    return _C.gelu(x, bool(approximate))


def silu(x, name=None):
    """x * sigmoid(x).

    >>> import oar
    >>> round(oar.nn.functional.silu(oar.to_tensor([1.0])).item(), 4)
    0.7311
    """
    return _C.silu(x)


def swish(x, name=None):
    """Same as silu.

    >>> import oar
    >>> oar.nn.functional.swish(oar.to_tensor([0.0])).numpy().tolist()
    [0.0]
    """
    return _C.silu(x)


def softplus(x, beta=1, threshold=20, name=None):
    """log(1 + exp(beta * x)) / beta, and x where beta * x > threshold.

    >>> import oar
    >>> round(oar.nn.functional.softplus(oar.to_tensor([0.0])).item(), 4)
    0.6931
    """
    return _C.softplus(x, float(beta), float(threshold))


def softsign(x, name=None):
    """x / (1 + |x|).

    >>> import oar
    >>> oar.nn.functional.softsign(oar.to_tensor([1.0, -3.0])).numpy().tolist()
    [0.5, -0.75]
    """
    return _C.softsign(x)


def sigmoid(x, name=None):
    """1 / (1 + exp(-x)).

    >>> import oar
    >>> oar.nn.functional.sigmoid(oar.to_tensor([0.0])).numpy().tolist()
    [0.5]
    """
    return _C.sigmoid(x)


def log_sigmoid(x, name=None):
    """log(sigmoid(x)), stable for large |x|.

    >>> import oar
    >>> round(oar.nn.functional.log_sigmoid(oar.to_tensor([-100.0])).item(), 1)
    -100.0
    """
    return _C.log_sigmoid(x)


def hardswish(x, name=None):
    """x * min(max(x + 3, 0), 6) / 6.

    >>> import oar
    >>> oar.nn.functional.hardswish(oar.to_tensor([-4.0, 0.0, 4.0])).numpy().tolist()
    [-0.0, 0.0, 4.0]
    """
    return _C.hardswish(x)


def hardsigmoid(x, slope=0.1666667, offset=0.5, name=None):
    """min(max(slope * x + offset, 0), 1).

    >>> import oar
    >>> oar.nn.functional.hardsigmoid(oar.to_tensor([-5.0, 0.0, 5.0])).numpy().tolist()
    [0.0, 0.5, 1.0]
    """
    return _C.hardsigmoid(x, float(slope), float(offset))


def hardtanh(x, min=-1.0, max=1.0, name=None):  # noqa: A002 - Paddle's names
    """x clipped to [min, max].

    >>> import oar
    >>> oar.nn.functional.hardtanh(oar.to_tensor([-2.0, 0.5, 2.0])).numpy().tolist()
    [-1.0, 0.5, 1.0]
    """
    return _C.clip(x, float(min), float(max))


def mish(x, name=None):
    """x * tanh(softplus(x)).

    >>> import oar
    >>> round(oar.nn.functional.mish(oar.to_tensor([1.0])).item(), 4)
    0.8651
    """
    return _C.mish(x)


def tanh(x, name=None):
    """Hyperbolic tangent.

    >>> import oar
    >>> oar.nn.functional.tanh(oar.to_tensor([0.0])).numpy().tolist()
    [0.0]
    """
    return _C.tanh(x)


def tanhshrink(x, name=None):
    """x - tanh(x).

    >>> import oar
    >>> oar.nn.functional.tanhshrink(oar.to_tensor([0.0])).numpy().tolist()
    [0.0]
    """
    return x - _C.tanh(x)


def softmax(x, axis=-1, dtype=None, name=None):
    """exp(x) / sum(exp(x)) along `axis`, computed stably; x is cast to `dtype` first when given.

    >>> import oar
    >>> y = oar.nn.functional.softmax(oar.to_tensor([[1.0, 1.0], [0.0, 1e4]]))
    >>> y.numpy().tolist()
    [[0.5, 0.5], [0.0, 1.0]]
    """
    return _C.softmax(x, int(axis), dtype)


def log_softmax(x, axis=-1, dtype=None, name=None):
    """log(softmax(x)) along `axis`, computed stably.

    >>> import oar
    >>> y = oar.nn.functional.log_softmax(oar.to_tensor([0.0, 0.0]))
    >>> [round(v, 4) for v in y.numpy().tolist()]
    [-0.6931, -0.6931]
    """
    return _C.log_softmax(x, int(axis), dtype)
