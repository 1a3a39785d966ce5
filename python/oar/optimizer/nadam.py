"""NAdam: Adam with Nesterov momentum and momentum decay."""
import math

from .optimizer import Optimizer, _as_float

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""With ``mu_t = beta1 (1 - 0.5 * 0.96^(t * momentum_decay))`` and their running product:

    .. math::
        m = \beta_1 m + (1-\beta_1) g,\quad v = \beta_2 v + (1-\beta_2) g^2 \\
        \hat m = \mu_{t+1} m / (1 - \prod_{i \le t+1} \mu_i) + (1 - \mu_t) g / (1 - \prod_{i \le t} \mu_i) \\
        p \mathrel{-}= lr\, \hat m / (\sqrt{v / (1-\beta_2^t)} + \epsilon)

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0], stop_gradient=False)
    >>> opt = oar.optimizer.NAdam(learning_rate=0.1, parameters=[w])
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.8944
    """

    # Saved as Paddle's per-element 0.96 ** step, beta2 ** step and mu_product (Note [optimizer state layout]).
    _step_pows = (("momentum_decay_pow", 0.96, 0, True), ("beta2_pow", "beta2", 0, True))

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, epsilon=1e-08, momentum_decay=0.004,
                 parameters=None, weight_decay=None, grad_clip=None, name=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._set_betas(beta1, beta2, epsilon)
        self._momentum_decay = self._check_positive("momentum_decay", momentum_decay)
        self._default_dict = {"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon,
                              "momentum_decay": self._momentum_decay}

    def _init_state(self, p, group):
        return {"moment1": self._state_zeros(p), "moment2": self._state_zeros(p)}

    def _init_scalars(self, p, group):
        return {"step": 0, "mu_product": 1.0}

    def _extra_accs(self, group):
        return super()._extra_accs(group) + ("mu_product",)

    def _saved_extras(self, p, group, scalars):
        out = super()._saved_extras(p, group, scalars)
        out["mu_product"] = self._saved_like(p, scalars["mu_product"], True)
        return out

    def _loaded_scalars(self, p, group, found):
        scal, used = super()._loaded_scalars(p, group, found)
        if scal is not None:
            # mu_1 ... mu_step follow from the step count; their product is recomputed
            # in double precision rather than read back from float32
            b1, psi = _as_float(self._hp(group, "beta1")), _as_float(self._hp(group, "momentum_decay"))
            scal["mu_product"] = math.prod(b1 * (1.0 - 0.5 * 0.96 ** (t * psi)) for t in range(1, scal["step"] + 1))
            used.update({"mu_product"} & set(found))
        return scal, used

    _op, _n_states = "nadam_", 2

    def _update_plan(self, group):
        b1, b2, eps = self._betas(group)
        psi = _as_float(self._hp(group, "momentum_decay"))

        def plan(p, g, state, scalars, lr, l1, l2):
            t = scalars["step"]
            mu_t = b1 * (1.0 - 0.5 * 0.96 ** (t * psi))
            mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
            scalars["mu_product"] *= mu_t
            return g, (state["moment1"], state["moment2"]), \
                (lr, b1, b2, eps, t, mu_t, mu_next, scalars["mu_product"], l1, l2)
        return plan
