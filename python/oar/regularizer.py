"""Weight-decay regularizers (Paddle's ``paddle.regularizer``).

An optimizer adds the regularizer's term to each gradient before its update:
``L2Decay(c)`` adds ``c * param`` and ``L1Decay(c)`` adds ``c * sign(param)``.
A parameter's own ``regularizer`` attribute wins over the optimizer's
``weight_decay``.

>>> import oar
>>> import oar.regularizer
>>> oar.regularizer.L2Decay(0.01)
L2Decay(coeff=0.01)
"""
import numbers

__all__ = ["L1Decay", "L2Decay", "WeightDecayRegularizer"]


class WeightDecayRegularizer:
    """Base class of the regularizers: ``coeff`` scales the decay term."""

    _kind = ""

    def __init__(self, coeff=0.0):
        if isinstance(coeff, bool) or not isinstance(coeff, numbers.Real):
            raise TypeError(f"[oar.regularizer.{type(self).__name__}] coeff must be a number, "
                            f"got {type(coeff).__name__}")
        self._coeff = float(coeff)

    @property
    def coeff(self):
        return self._coeff

    def __repr__(self):
        return f"{type(self).__name__}(coeff={self._coeff})"


class L1Decay(WeightDecayRegularizer):
    """L1 weight decay: the gradient gains ``coeff * sign(param)``.

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0, -2.0], stop_gradient=False)
    >>> w.grad = oar.to_tensor([0.0, 0.0])
    >>> opt = oar.optimizer.SGD(learning_rate=1.0, parameters=[w], weight_decay=oar.regularizer.L1Decay(0.5))
    >>> opt.step()
    >>> w.numpy().tolist()
    [0.5, -1.5]
    """

    _kind = "l1"


class L2Decay(WeightDecayRegularizer):
    """L2 weight decay: the gradient gains ``coeff * param``.

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0, -2.0], stop_gradient=False)
    >>> w.grad = oar.to_tensor([0.0, 0.0])
    >>> opt = oar.optimizer.SGD(learning_rate=1.0, parameters=[w], weight_decay=oar.regularizer.L2Decay(0.5))
    >>> opt.step()
    >>> w.numpy().tolist()
    [0.5, -1.0]
    """

    _kind = "l2"
