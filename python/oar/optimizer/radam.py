"""RAdam: rectified Adam."""
import math

from .optimizer import Optimizer, _as_float

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""Adam with the variance rectification of Liu et al.: with
    ``rho_inf = 2 / (1 - beta2) - 1`` and ``rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)``,
    the step is ``lr * r_t * m_hat * sqrt(1 - beta2^t) / (sqrt(v) + epsilon)`` while
    ``rho_t > 5`` and ``lr * m_hat`` before.

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0], stop_gradient=False)
    >>> opt = oar.optimizer.RAdam(learning_rate=0.1, parameters=[w])
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.8
    """

    # Saved as Paddle's per-element beta1 ** step, beta2 ** step and
    # rho = step beta2^step / (1 - beta2^step) (Note [optimizer state layout]).
    _step_pows = (("beta1_pow", "beta1", 0, True), ("beta2_pow", "beta2", 0, True))

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, parameters=None,
                 weight_decay=None, grad_clip=None, name=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._set_betas(beta1, beta2, epsilon)
        self._default_dict = {"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon}

    def _init_state(self, p, group):
        return {"moment1": self._state_zeros(p), "moment2": self._state_zeros(p)}

    def _extra_accs(self, group):
        return super()._extra_accs(group) + ("rho",)

    def _saved_extras(self, p, group, scalars):
        out = super()._saved_extras(p, group, scalars)
        b2, t = _as_float(self._hp(group, "beta2")), scalars["step"]
        # at step 0 the limit of t b2^t / (1 - b2^t), 1 / -ln(b2)
        rho = t * b2 ** t / (1.0 - b2 ** t) if t > 0 and 0 < b2 < 1 else (1.0 / -math.log(b2) if 0 < b2 < 1 else 0.0)
        out["rho"] = self._saved_like(p, rho, True)
        return out

    def _loaded_scalars(self, p, group, found):
        scal, used = super()._loaded_scalars(p, group, found)
        if scal is not None and "rho" in found:
            used.add("rho")  # follows from the step count
        return scal, used

    _op, _n_states = "radam_", 2

    def _update_plan(self, group):
        b1, b2, eps = self._betas(group)
        return lambda p, g, state, scalars, lr, l1, l2: (
            g, (state["moment1"], state["moment2"]), (lr, b1, b2, eps, scalars["step"], l1, l2))
