"""Adamax: Adam with the infinity norm."""
from .optimizer import Optimizer

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""``m = b1 m + (1-b1) g``; ``u = max(b2 u + epsilon, |g|)``;
    ``param -= lr / (1 - b1^t) * m / u``.

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0], stop_gradient=False)
    >>> opt = oar.optimizer.Adamax(learning_rate=0.1, parameters=[w])
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 6)
    0.9
    """

    _step_pows = (("beta1_pow_acc", "beta1", 1, False),)

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, parameters=None,
                 weight_decay=None, grad_clip=None, name=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._set_betas(beta1, beta2, epsilon)
        self._default_dict = {"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon}

    def _init_state(self, p, group):
        return {"moment": self._state_zeros(p), "inf_norm": self._state_zeros(p)}

    _op, _n_states = "adamax_", 2

    def _update_plan(self, group):
        b1, b2, eps = self._betas(group)
        return lambda p, g, state, scalars, lr, l1, l2: (
            g, (state["moment"], state["inf_norm"]), (lr, b1, b2, eps, scalars["step"], l1, l2))
