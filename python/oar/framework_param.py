"""Parameters: ParamAttr and create_parameter.

A parameter is an ordinary oar Tensor with stop_gradient=False that carries
Python attributes the optimizers and checkpoint code read: name, trainable,
persistable, need_clip, optimize_attr, regularizer, is_distributed.
"""
from . import _C
from .framework import _dtype
from .utils import unique_name

__all__ = ["ParamAttr", "create_parameter"]


def _unique_name(prefix):
    """prefix_0, prefix_1, ... from oar.utils.unique_name, so that
    ``unique_name.guard()`` restarts the numbering as it does in Paddle."""
    return unique_name.generate(prefix)


class ParamAttr:
    """How to create a parameter: its name, initializer, learning-rate factor, regularizer and flags.

    >>> import oar
    >>> attr = oar.framework_param.ParamAttr(name="w", initializer=oar.nn.initializer.Constant(2.0))
    >>> p = oar.framework_param.create_parameter([2], "float32", attr=attr)
    >>> p.name, p.numpy().tolist()
    ('w', [2.0, 2.0])
    """

    def __init__(self, name=None, initializer=None, learning_rate=1.0, regularizer=None, trainable=True,
                 do_model_average=True, need_clip=True):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"[oar.ParamAttr] name must be a str or None, got {type(name).__name__}")
        if not isinstance(learning_rate, (int, float)):
            raise TypeError(f"[oar.ParamAttr] learning_rate must be a number, got {type(learning_rate).__name__}")
        self.name = name
        self.initializer = initializer
        self.learning_rate = float(learning_rate)
        self.regularizer = regularizer
        self.trainable = bool(trainable)
        self.do_model_average = do_model_average
        self.need_clip = bool(need_clip)

    @staticmethod
    def _to_attr(arg):
        """Normalises the forms Paddle accepts: None, ParamAttr, a name, an initializer, False."""
        from .nn.initializer import Initializer

        if arg is None:
            return ParamAttr()
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        if arg is False:
            return False
        raise TypeError(f"[oar.ParamAttr] expected None, a ParamAttr, a name, an initializer or False, "
                        f"got {type(arg).__name__}")

    def __repr__(self):
        return (f"ParamAttr(name={self.name!r}, initializer={self.initializer!r}, "
                f"learning_rate={self.learning_rate}, trainable={self.trainable})")


def _mark_parameter(t, name, trainable=True, learning_rate=1.0, regularizer=None, need_clip=True):
    t.name = name
    t.trainable = bool(trainable)  # sets stop_gradient (Tensor.trainable)
    t.persistable = True
    t.need_clip = bool(need_clip)
    t.optimize_attr = {"learning_rate": float(learning_rate)}
    t.regularizer = regularizer
    t.is_distributed = False
    return t


def create_parameter(shape, dtype, name=None, attr=None, is_bias=False, default_initializer=None):
    """Creates a parameter tensor (stop_gradient=False) filled by its initializer.

    Without an initializer, weights use XavierUniform and biases (is_bias=True) zeros, as Paddle does.
    Unnamed parameters are named as in Paddle: 'create_parameter_0.w_0', 'create_parameter_1.b_0', ...

    >>> import oar
    >>> with oar.utils.unique_name.guard():
    ...     w = oar.framework_param.create_parameter([3, 4], "float32")
    >>> w.shape, w.stop_gradient, w.trainable, w.name
    ([3, 4], False, True, 'create_parameter_0.w_0')
    """
    from .nn import initializer as init

    try:
        shape = [int(s) for s in shape]
    except TypeError as e:
        raise TypeError(f"[oar.create_parameter] shape must be a sequence of ints, got {shape!r}") from e
    if any(s < 0 for s in shape):
        raise ValueError(f"[oar.create_parameter] shape entries must be >= 0, got {shape}")
    attr = ParamAttr._to_attr(attr)
    if attr is False:
        return None
    dt = _dtype(dtype) if dtype is not None else _C.get_default_dtype()
    initializer = attr.initializer or default_initializer
    if initializer is None:
        initializer = init.Constant(0.0) if is_bias else init.XavierUniform()
    pname = attr.name or name or _unique_name(f"{_unique_name('create_parameter')}.{'b' if is_bias else 'w'}")
    t = _C.full(shape, 0.0, dt) if dt not in (_C.dtype.bool,) else _C.full(shape, False, dt)
    _mark_parameter(t, pname, attr.trainable, attr.learning_rate, attr.regularizer, attr.need_clip)
    initializer(t)
    return t
