"""Adadelta."""
from .optimizer import Optimizer, _as_float

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""``E[g^2] = rho E[g^2] + (1-rho) g^2``;
    ``u = -sqrt((E[dx^2] + eps) / (E[g^2] + eps)) * g``;
    ``E[dx^2] = rho E[dx^2] + (1-rho) u^2``; ``param += lr * u``.

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0], stop_gradient=False)
    >>> opt = oar.optimizer.Adadelta(learning_rate=1.0, parameters=[w])
    >>> (w * 2).sum().backward(); opt.step()
    >>> w.item() < 1.0
    True
    """

    _saved_names = {"avg_squared_grad": "_avg_squared_grad", "avg_squared_update": "_avg_squared_update"}

    def __init__(self, learning_rate=0.001, epsilon=1e-06, rho=0.95, parameters=None, weight_decay=None,
                 grad_clip=None, name=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._epsilon = self._check_positive("epsilon", epsilon)
        self._rho = _as_float(rho)
        if not 0 <= self._rho <= 1:
            raise ValueError(f"[oar.optimizer.Adadelta] rho must be in [0, 1], got {self._rho}")
        self._default_dict = {"epsilon": self._epsilon, "rho": self._rho}

    def _init_state(self, p, group):
        return {"avg_squared_grad": self._state_zeros(p), "avg_squared_update": self._state_zeros(p)}

    _op, _n_states = "adadelta_", 2

    def _update_plan(self, group):
        rho, eps = _as_float(self._hp(group, "rho")), _as_float(self._hp(group, "epsilon"))
        return lambda p, g, state, scalars, lr, l1, l2: (
            g, (state["avg_squared_grad"], state["avg_squared_update"]), (lr, rho, eps, l1, l2))
