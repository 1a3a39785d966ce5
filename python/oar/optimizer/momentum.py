"""Momentum SGD (heavy-ball or Nesterov)."""
from .optimizer import Optimizer

__all__ = ["Momentum"]


class Momentum(Optimizer):
    r"""``velocity = momentum * velocity + grad``; ``param -= lr * velocity``, or
    with ``use_nesterov`` ``param -= lr * (grad + momentum * velocity)``.

    ``weight_decay`` (float or L2Decay) is added to the gradient first, and
    ``rescale_grad`` scales the gradient before anything else.

    On the CPU the parameters that share dtype and hyperparameters are updated
    together, by one merged op per step, with the results of one update per
    parameter to the bit; ``use_multi_tensor`` is accepted for Paddle
    compatibility and changes nothing.

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0], stop_gradient=False)
    >>> opt = oar.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=[w])
    >>> for _ in range(2):
    ...     (w * 1.0).sum().backward(); opt.step(); opt.clear_grad()
    >>> round(w.item(), 6)
    0.71
    """

    def __init__(self, learning_rate=0.001, momentum=0.9, parameters=None, use_nesterov=False, weight_decay=None,
                 grad_clip=None, multi_precision=False, rescale_grad=1.0, use_multi_tensor=False, name=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._momentum = self._check_positive("momentum", momentum)
        self._use_nesterov = bool(use_nesterov)
        self._rescale_grad = float(rescale_grad)
        self._multi_precision = multi_precision
        self._default_dict = {"momentum": self._momentum, "use_nesterov": self._use_nesterov,
                              "rescale_grad": self._rescale_grad}

    def _init_state(self, p, group):
        return {"velocity": self._state_zeros(p)}

    _op, _n_states = "momentum_", 1

    def _update_plan(self, group):
        rescale = float(self._hp(group, "rescale_grad"))
        mu, nesterov = float(self._hp(group, "momentum")), bool(self._hp(group, "use_nesterov"))

        def plan(p, g, state, scalars, lr, l1, l2):
            if rescale != 1.0:
                g = g * rescale
            return g, (state["velocity"],), (lr, mu, nesterov, l1, l2)
        return plan
