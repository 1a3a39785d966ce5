"""Stochastic gradient descent."""
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""``param -= learning_rate * grad`` (with ``weight_decay`` folded into ``grad``).

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> opt = oar.optimizer.SGD(learning_rate=0.1, parameters=[w], weight_decay=0.5)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> [round(v, 6) for v in w.numpy().tolist()]
    [0.75, 1.5]
    """

    def __init__(self, learning_rate=0.001, parameters=None, weight_decay=None, grad_clip=None,
                 multi_precision=False, name=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._multi_precision = multi_precision

    def _init_scalars(self, p, group):
        return {}

    def _state_of(self, p, group):
        self._scalars.setdefault(id(p), {"step": 0})
        return self._accumulators.setdefault(id(p), {})

    _op = "sgd_"

    def _update_plan(self, group):
        return lambda p, g, state, scalars, lr, l1, l2: (g, (), (lr, l1, l2))
