"""RMSProp (optionally centered, with momentum)."""
import numpy as np

from .optimizer import Optimizer, _as_float, _to_numpy

__all__ = ["RMSProp"]


class RMSProp(Optimizer):
    r"""``ms = rho ms + (1-rho) g^2``; centered: ``mg = rho mg + (1-rho) g`` and
    ``denom = sqrt(ms - mg^2 + epsilon)``, else ``denom = sqrt(ms + epsilon)``;
    ``mom = momentum * mom + lr * g / denom``; ``param -= mom``.

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0], stop_gradient=False)
    >>> opt = oar.optimizer.RMSProp(learning_rate=0.1, parameters=[w])
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.5528
    """

    def __init__(self, learning_rate, rho=0.95, epsilon=1e-06, momentum=0.0, centered=False, parameters=None,
                 weight_decay=None, grad_clip=None, name=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._rho = self._check_positive("rho", rho)
        self._epsilon = self._check_positive("epsilon", epsilon)
        self._momentum = self._check_positive("momentum", momentum)
        self._centered = bool(centered)
        self._default_dict = {"rho": self._rho, "epsilon": self._epsilon, "momentum": self._momentum,
                              "centered": self._centered}

    def _init_state(self, p, group):
        st = {"mean_square": self._state_zeros(p), "momentum": self._state_zeros(p)}
        if self._hp(group, "centered"):
            st["mean_grad"] = self._state_zeros(p)
        return st

    # Paddle saves mean_grad (zeros) also when not centered (Note [optimizer state layout]).
    def _extra_accs(self, group):
        return () if self._hp(group, "centered") else ("mean_grad",)

    def _saved_extras(self, p, group, scalars):
        return {} if self._hp(group, "centered") else {"mean_grad": self._state_zeros(p)}

    def _loaded_scalars(self, p, group, found):
        # Zeros are what this optimizer has; a centered run's mean_grad is reported as unused.
        if "mean_grad" in found and not np.any(_to_numpy(found["mean_grad"])):
            return None, {"mean_grad"}
        return None, set()

    _op, _n_states = "rmsprop_", 3

    def _update_plan(self, group):
        rho, eps = _as_float(self._hp(group, "rho")), _as_float(self._hp(group, "epsilon"))
        momentum = _as_float(self._hp(group, "momentum"))

        def plan(p, g, state, scalars, lr, l1, l2):
            mg = state.get("mean_grad")
            states = (state["mean_square"], state["momentum"]) if mg is None else \
                (state["mean_square"], state["momentum"], mg)
            return g, states, (lr, rho, eps, momentum, l1, l2)
        return plan
