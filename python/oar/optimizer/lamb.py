"""LAMB: layer-wise adaptive moments."""
from .optimizer import Optimizer, _as_float, _ops

__all__ = ["Lamb"]


class Lamb(Optimizer):
    r"""``r = m_hat / (sqrt(v_hat) + epsilon) + lamb_weight_decay * param``;
    ``param -= lr * (||param|| / ||r||) * r`` (the trust ratio is 1 when a norm is 0).

    ``exclude_from_weight_decay_fn(param)`` returning True drops the decay for
    that parameter (and, unless ``always_adapt``, the trust ratio too).

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([3.0, 4.0], stop_gradient=False)
    >>> opt = oar.optimizer.Lamb(learning_rate=0.1, lamb_weight_decay=0.0, parameters=[w], always_adapt=True)
    >>> (w * 1.0).sum().backward(); opt.step()
    >>> [round(v, 4) for v in w.numpy().tolist()]
    [2.6464, 3.6464]
    """

    _step_pows = (("beta1_pow_acc", "beta1", 1, False), ("beta2_pow_acc", "beta2", 1, False))

    def __init__(self, learning_rate=0.001, lamb_weight_decay=0.01, beta1=0.9, beta2=0.999, epsilon=1e-06,
                 parameters=None, grad_clip=None, exclude_from_weight_decay_fn=None, multi_precision=False,
                 always_adapt=False, name=None):
        super().__init__(learning_rate, parameters, None, grad_clip, name)
        self._set_betas(beta1, beta2, epsilon)
        self._lamb_weight_decay = self._check_positive("lamb_weight_decay", lamb_weight_decay)
        if exclude_from_weight_decay_fn is not None and not callable(exclude_from_weight_decay_fn):
            raise TypeError("[oar.optimizer.Lamb] exclude_from_weight_decay_fn must be callable")
        self._exclude_fn = exclude_from_weight_decay_fn
        self._always_adapt = bool(always_adapt)
        self._multi_precision = multi_precision
        self._default_dict = {"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon,
                              "lamb_weight_decay": self._lamb_weight_decay}

    def _coupled_decay(self, p, group):
        return self._reg_terms(getattr(p, "regularizer", None))

    def _init_state(self, p, group):
        return {"moment1": self._state_zeros(p), "moment2": self._state_zeros(p)}

    def _update(self, p, g, state, scalars, group, lr, l1, l2):
        wd = _as_float(self._hp(group, "lamb_weight_decay"))
        if self._exclude_fn is not None and self._exclude_fn(p):
            wd = 0.0
        _ops.lamb_(p, g, state["moment1"], state["moment2"], lr, *self._betas(group), scalars["step"], wd,
                   self._always_adapt, l1, l2)
