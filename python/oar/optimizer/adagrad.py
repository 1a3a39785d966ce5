"""Adagrad."""
from .optimizer import Optimizer, _as_float

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""``moment += g^2``; ``param -= lr * g / (sqrt(moment) + epsilon)``; the
    moment starts at ``initial_accumulator_value``.

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0], stop_gradient=False)
    >>> opt = oar.optimizer.Adagrad(learning_rate=0.1, parameters=[w])
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 5)
    0.9
    """

    def __init__(self, learning_rate, epsilon=1e-06, parameters=None, weight_decay=None, grad_clip=None, name=None,
                 initial_accumulator_value=0.0):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._epsilon = self._check_positive("epsilon", epsilon)
        self._initial = self._check_positive("initial_accumulator_value", initial_accumulator_value)
        self._default_dict = {"epsilon": self._epsilon, "initial_accumulator_value": self._initial}

    def _init_state(self, p, group):
        return {"moment": self._state_zeros(p, _as_float(self._hp(group, "initial_accumulator_value")))}

    _op, _n_states = "adagrad_", 1

    def _update_plan(self, group):
        eps = _as_float(self._hp(group, "epsilon"))
        return lambda p, g, state, scalars, lr, l1, l2: (g, (state["moment"],), (lr, eps, l1, l2))
