"""AdamW: Adam with decoupled weight decay."""
from .adam import Adam
from .optimizer import _as_float

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""Adam with decoupled weight decay: before each Adam update
    ``param *= 1 - lr * weight_decay``.

    ``lr_ratio(param)`` scales the rate per parameter (decay included);
    ``apply_decay_param_fun(name)`` returning False exempts a parameter from the
    decay. A parameter's own ``regularizer`` still adds coupled decay.

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0], stop_gradient=False)
    >>> opt = oar.optimizer.AdamW(learning_rate=0.1, parameters=[w], weight_decay=0.5)
    >>> w.grad = oar.to_tensor([0.0])
    >>> opt.step()
    >>> round(w.item(), 6)
    0.95
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, parameters=None,
                 weight_decay=0.01, lr_ratio=None, apply_decay_param_fun=None, grad_clip=None, lazy_mode=False,
                 multi_precision=False, amsgrad=False, name=None):
        super().__init__(learning_rate, beta1, beta2, epsilon, parameters, None, grad_clip, lazy_mode,
                         multi_precision, False, amsgrad, name)
        if weight_decay is None:
            weight_decay = 0.0
        if isinstance(weight_decay, bool) or not isinstance(_as_float(weight_decay), float):
            raise TypeError(f"[oar.optimizer.AdamW] weight_decay must be a float, got {type(weight_decay).__name__}")
        self._coeff = self._check_positive("weight_decay", weight_decay)
        if lr_ratio is not None and not callable(lr_ratio):
            raise TypeError("[oar.optimizer.AdamW] lr_ratio must be callable")
        if apply_decay_param_fun is not None and not callable(apply_decay_param_fun):
            raise TypeError("[oar.optimizer.AdamW] apply_decay_param_fun must be callable")
        self._lr_ratio = lr_ratio
        self._apply_decay_param_fun = apply_decay_param_fun
        self._default_dict["weight_decay"] = self._coeff

    def _group_decay(self, group):
        # The group's weight_decay is the decoupled coefficient here; only a
        # parameter's own regularizer adds coupled decay.
        return 0.0, 0.0

    def _decoupled(self, group):
        coeff = _as_float(self._hp(group, "weight_decay"))
        if self._lr_ratio is None and self._apply_decay_param_fun is None:
            return coeff, None
        lr_ratio, decay_fun = self._lr_ratio, self._apply_decay_param_fun

        def per_param(p, lr, coeff):
            if lr_ratio is not None:
                lr = lr * float(lr_ratio(p))
            if decay_fun is not None and not decay_fun(self._param_name(p)):
                coeff = 0.0
            return lr, coeff
        return coeff, per_param
