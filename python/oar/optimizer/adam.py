"""Adam."""
from .optimizer import Optimizer

__all__ = ["Adam"]


class Adam(Optimizer):
    r"""Adam with Paddle's epsilon placement:

    .. math::
        m = \beta_1 m + (1-\beta_1) g,\quad v = \beta_2 v + (1-\beta_2) g^2 \\
        lr_t = lr \sqrt{1-\beta_2^t} / (1-\beta_1^t) \\
        p \mathrel{-}= lr_t\, m / (\sqrt{v} + \epsilon \sqrt{1-\beta_2^t})

    ``weight_decay`` is coupled (added to the gradient); with ``amsgrad`` the
    running maximum of ``v`` replaces ``v`` in the denominator.

    On the CPU the parameters that share dtype and hyperparameters are updated
    together, by one merged op per step, with the results of one update per
    parameter to the bit; ``use_multi_tensor`` is accepted for Paddle
    compatibility and changes nothing.

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0, -1.0], stop_gradient=False)
    >>> opt = oar.optimizer.Adam(learning_rate=0.1, parameters=[w])
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> [round(v, 4) for v in w.numpy().tolist()]
    [0.9, -0.9]
    """

    # Saved as Paddle's beta1 ** (step + 1) and beta2 ** (step + 1) (Note [optimizer state layout]).
    _step_pows = (("beta1_pow_acc", "beta1", 1, False), ("beta2_pow_acc", "beta2", 1, False))

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, parameters=None,
                 weight_decay=None, grad_clip=None, lazy_mode=False, multi_precision=False, use_multi_tensor=False,
                 amsgrad=False, name=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._set_betas(beta1, beta2, epsilon)
        self._amsgrad = bool(amsgrad)
        self._lazy_mode = lazy_mode
        self._multi_precision = multi_precision
        self._default_dict = {"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon,
                              "amsgrad": self._amsgrad}

    def _init_state(self, p, group):
        st = {"moment1": self._state_zeros(p), "moment2": self._state_zeros(p)}
        if self._hp(group, "amsgrad"):
            st["moment2_max"] = self._state_zeros(p)
        return st

    _op, _n_states = "adam_", 3

    def _decoupled(self, group):
        """(the group's decoupled decay coefficient, a function (param, lr, coeff) -> (lr, coeff) for
        per-parameter changes or None); Adam has no decoupled decay."""
        return 0.0, None

    def _update_plan(self, group):
        b1, b2, eps = self._betas(group)
        coeff0, per_param = self._decoupled(group)

        def plan(p, g, state, scalars, lr, l1, l2):
            coeff = coeff0
            if per_param is not None:
                lr, coeff = per_param(p, lr, coeff)
            vmax = state.get("moment2_max")
            states = (state["moment1"], state["moment2"]) if vmax is None else \
                (state["moment1"], state["moment2"], vmax)
            return g, states, (lr, b1, b2, eps, scalars["step"], coeff, l1, l2)
        return plan
