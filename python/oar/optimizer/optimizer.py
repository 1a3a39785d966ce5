"""The optimizer base class: parameter groups, learning rate and schedulers,
gradient clipping, weight decay, and state save/restore. Subclasses only say
which state a parameter needs and which fused update op (``oar._C._optimizer``)
applies a step.
"""
import math
import numbers

import numpy as np

from .. import _C
from ..autograd import no_grad
from ..regularizer import L1Decay, L2Decay, WeightDecayRegularizer
from .lr import LRScheduler

_static_program = []  # [oar.static.program], imported on first use: that package imports this one


def _static_mode():
    """The oar.static.program module while static mode is on, else None."""
    if not _static_program:
        from ..static import program

        _static_program.append(program)
    return _static_program[0] if _static_program[0]._state.static else None

__all__ = ["Optimizer"]

_ops = _C._optimizer


def _api(obj):
    return f"[oar.optimizer.{type(obj).__name__}]"


def _as_float(v):
    """A hyperparameter given as a number or a one-element tensor."""
    if isinstance(v, _C.Tensor):
        return float(v.numpy().reshape(-1)[0])
    return float(v)


class Optimizer:
    """Base class of the optimizers (Paddle's ``paddle.optimizer.Optimizer``).

    Args:
        learning_rate (float | LRScheduler): the global rate.
        parameters (list): tensors to update, or parameter groups: dicts with a
            ``'params'`` list and per-group overrides (``'learning_rate'`` is a
            multiplier of the global rate, ``'weight_decay'``, and the
            optimizer's own hyperparameters such as ``'beta1'``).
        weight_decay (float | L1Decay | L2Decay | None): coupled decay added to
            each gradient; a float means ``L2Decay(weight_decay)``. A
            parameter's own ``regularizer`` attribute wins.
        grad_clip: a callable taking and returning ``[(param, grad), ...]``
            (``oar.nn.ClipGradByGlobalNorm`` etc.), applied before decay.

    Parameters with ``stop_gradient=True`` or without a gradient are skipped.

    >>> import oar
    >>> import oar.optimizer
    >>> w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> opt = oar.optimizer.SGD(learning_rate=0.5, parameters=[w])
    >>> (w * w).sum().backward()
    >>> opt.step(); opt.clear_grad()
    >>> w.numpy().tolist()
    [0.0, 0.0]
    """

    _default_dict = {}

    def __init__(self, learning_rate, parameters=None, weight_decay=None, grad_clip=None, name=None):
        self._check_lr(learning_rate)
        if parameters is None and _static_mode() is not None:
            # Static mode: minimize() takes the parameters the loss reads.
            parameters = []
        if parameters is None:
            raise ValueError(f"{_api(self)} parameters must be given: the list of tensors (or parameter groups) "
                             f"to update")
        if isinstance(parameters, (_C.Tensor, dict)):
            raise TypeError(f"{_api(self)} parameters must be a list of tensors or of parameter-group dicts, "
                            f"got {type(parameters).__name__}")
        parameters = list(parameters)
        if grad_clip is not None and not callable(grad_clip):
            raise TypeError(f"{_api(self)} grad_clip must be callable (e.g. oar.nn.ClipGradByGlobalNorm), "
                            f"got {type(grad_clip).__name__}")
        self._learning_rate = learning_rate
        self.regularization = self._to_regularizer(weight_decay)
        self._grad_clip = grad_clip
        self._name = name
        self._param_groups = []
        self._parameter_list = []
        self._group_of = {}      # id(param) -> its group
        self._accumulators = {}  # id(param) -> {state name: Tensor}
        self._scalars = {}       # id(param) -> {name: int | float}, e.g. the step count
        if parameters and isinstance(parameters[0], dict):
            for g in parameters:
                self._add_param_group(g)
        else:
            self._add_param_group({"params": parameters})

    # ---- construction helpers
    def _check_lr(self, lr):
        if isinstance(lr, LRScheduler):
            return
        if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
            raise TypeError(f"{_api(self)} learning_rate must be a float or an LRScheduler, "
                            f"got {type(lr).__name__}")
        if not math.isfinite(lr) or lr < 0:
            raise ValueError(f"{_api(self)} learning_rate must be a finite number >= 0, got {lr}")

    def _check_beta(self, name, v):
        v = _as_float(v)
        if not 0 <= v < 1:
            raise ValueError(f"{_api(self)} {name} must be in [0, 1), got {v}")
        return v

    def _set_betas(self, beta1, beta2, epsilon):
        """Validates and stores the Adam family's beta1, beta2 and epsilon."""
        self._beta1 = self._check_beta("beta1", beta1)
        self._beta2 = self._check_beta("beta2", beta2)
        self._epsilon = self._check_positive("epsilon", epsilon)

    def _check_positive(self, name, v, strict=False):
        v = _as_float(v)
        if not math.isfinite(v) or v < 0 or (strict and v == 0):
            raise ValueError(f"{_api(self)} {name} must be {'>' if strict else '>='} 0, got {v}")
        return v

    def _to_regularizer(self, wd):
        if wd is None or isinstance(wd, WeightDecayRegularizer):
            return wd
        if isinstance(wd, bool) or not isinstance(wd, (numbers.Real, _C.Tensor)):
            raise TypeError(f"{_api(self)} weight_decay must be a float, L1Decay or L2Decay, "
                            f"got {type(wd).__name__}")
        return L2Decay(_as_float(wd))

    def _add_param_group(self, group):
        if not isinstance(group, dict) or "params" not in group:
            raise ValueError(f"{_api(self)} a parameter group must be a dict with a 'params' key")
        params = group["params"]
        params = [params] if isinstance(params, _C.Tensor) else list(params)
        for p in params:
            if not isinstance(p, _C.Tensor):
                raise TypeError(f"{_api(self)} parameters must be tensors, got {type(p).__name__}")
            if id(p) in self._group_of:
                raise ValueError(f"{_api(self)} a parameter appears in more than one parameter group")
        g = dict(group)
        g["params"] = params
        if "learning_rate" in g:
            self._check_positive("learning_rate of a parameter group", g["learning_rate"])
        for p in params:
            self._group_of[id(p)] = g
            self._parameter_list.append(p)
        self._param_groups.append(g)

    # ---- learning rate
    def get_lr(self):
        """The current global learning rate (the scheduler's value when one is set).

        >>> import oar
        >>> import oar.optimizer
        >>> oar.optimizer.SGD(0.1, parameters=[oar.ones([1])]).get_lr()
        0.1
        """
        if isinstance(self._learning_rate, LRScheduler):
            return float(self._learning_rate())
        return float(self._learning_rate)

    def set_lr(self, value):
        """Sets a float learning rate (not allowed while a scheduler is in use).

        >>> import oar
        >>> import oar.optimizer
        >>> opt = oar.optimizer.SGD(0.1, parameters=[oar.ones([1])])
        >>> opt.set_lr(0.5); opt.get_lr()
        0.5
        """
        if isinstance(self._learning_rate, LRScheduler):
            raise RuntimeError(f"{_api(self)} set_lr cannot be used while the learning rate is an LRScheduler; "
                               f"use set_lr_scheduler")
        self._check_lr(value)
        self._learning_rate = float(value)

    def set_lr_scheduler(self, scheduler):
        """Replaces the learning rate with an ``LRScheduler``.

        >>> import oar
        >>> import oar.optimizer
        >>> opt = oar.optimizer.SGD(0.1, parameters=[oar.ones([1])])
        >>> opt.set_lr_scheduler(oar.optimizer.lr.StepDecay(0.5, step_size=1)); opt.get_lr()
        0.5
        """
        if not isinstance(scheduler, LRScheduler):
            raise TypeError(f"{_api(self)} scheduler must be an LRScheduler, got {type(scheduler).__name__}")
        self._learning_rate = scheduler

    # ---- per-parameter settings
    def _hp(self, group, key):
        return group.get(key, self._default_dict[key])

    def _param_lr(self, p, group):
        mult = group.get("learning_rate")
        if mult is None:
            attr = getattr(p, "optimize_attr", None)
            mult = attr.get("learning_rate", 1.0) if isinstance(attr, dict) else 1.0
        return self.get_lr() * _as_float(mult)

    def _coupled_decay(self, p, group):
        """(l1, l2) coefficients added to the gradient for `p`."""
        reg = getattr(p, "regularizer", None)
        if reg is None:
            reg = self._to_regularizer(group["weight_decay"]) if "weight_decay" in group else self.regularization
        return self._reg_terms(reg)

    def _reg_terms(self, reg):
        if reg is None:
            return 0.0, 0.0
        if isinstance(reg, L1Decay):
            return reg.coeff, 0.0
        if isinstance(reg, L2Decay):
            return 0.0, reg.coeff
        raise TypeError(f"{_api(self)} unsupported regularizer {type(reg).__name__}")

    def _param_name(self, p, index=None):
        name = getattr(p, "name", None)
        if isinstance(name, str) and name:
            return name
        if index is None:
            index = next(i for i, q in enumerate(self._parameter_list) if q is p)
        return f"param_{index}"

    # ---- state
    def _init_state(self, p, group):
        """{name: initial Tensor} of the state `p` needs; overridden by subclasses."""
        return {}

    def _init_scalars(self, p, group):
        return {"step": 0}

    def _state_of(self, p, group):
        acc = self._accumulators.get(id(p))
        if acc is None:
            acc = self._init_state(p, group)
            self._accumulators[id(p)] = acc
            self._scalars[id(p)] = self._init_scalars(p, group)
        return acc

    def _state_zeros(self, p, value=0.0):
        if _C._dist_attr(p) is not None:
            # A distributed parameter's state is laid out like it: each rank
            # keeps (and updates) the state of its own piece.
            full = _C.full(list(p._local_value().shape), float(value), _ops.state_dtype(p.dtype))
            return _C._dist_from_local(full, *p.process_mesh._c(), [q._c() for q in p.placements], list(p.shape))
        return _C.full(p.shape, float(value), _ops.state_dtype(p.dtype))

    # ---- the step
    def _collect(self, parameters=None):
        params = self._parameter_list if parameters is None else list(parameters)
        out = []
        for p in params:
            if p.stop_gradient or not getattr(p, "trainable", True):
                continue
            g = p.grad
            if g is None:
                continue
            out.append((p, g))
        return out

    def _apply_optimize(self, params_grads):
        with no_grad():
            if self._grad_clip is not None:
                params_grads = self._grad_clip(params_grads)
            for p, g in params_grads:
                if g is None:
                    continue
                group = self._group_of.get(id(p))
                if group is None:
                    raise ValueError(f"{_api(self)} a parameter being updated was not given to this optimizer")
                state = self._state_of(p, group)
                scalars = self._scalars[id(p)]
                scalars["step"] += 1
                master = self._master_of(p)
                if master is None:
                    self._update(p, g, state, scalars, group, self._param_lr(p, group), *self._coupled_decay(p, group))
                else:  # update the float32 copy, then round it into the low-precision parameter
                    self._update(master, _C.cast(g, master.dtype), state, scalars, group, self._param_lr(p, group),
                                 *self._coupled_decay(p, group))
                    _C._set_data_(p, _C.cast(master, p.dtype))
        return params_grads

    def _master_of(self, p):
        """The float32 master weight of a float16/bfloat16 parameter when
        multi-precision is on (``multi_precision=True`` or ``oar.amp.decorate``
        at O2), else None."""
        if not getattr(self, "_multi_precision", False) or str(p.dtype) not in _LOW_DTYPES:
            return None
        masters = self.__dict__.setdefault("_master_weights", {})
        m = masters.get(id(p))
        if m is None:
            m = masters[id(p)] = _C.cast(p.detach(), _C.dtype.float32)
        return m

    def _update(self, p, g, state, scalars, group, lr, l1, l2):
        raise NotImplementedError(f"{_api(self)} has no update rule")

    def step(self):
        """Updates every parameter that has a gradient, once.

        >>> import oar
        >>> import oar.optimizer
        >>> w = oar.to_tensor([3.0], stop_gradient=False)
        >>> opt = oar.optimizer.SGD(learning_rate=0.1, parameters=[w])
        >>> (w * 2).sum().backward()
        >>> opt.step()
        >>> round(w.item(), 6)
        2.8
        """
        self._apply_optimize(self._collect())

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Applies one step with the gradients already computed by ``loss.backward()``.

        Returns ``(None, [(param, grad), ...])`` as Paddle's eager mode does.

        >>> import oar
        >>> import oar.optimizer
        >>> w = oar.to_tensor([1.0], stop_gradient=False)
        >>> opt = oar.optimizer.SGD(learning_rate=1.0, parameters=[w])
        >>> loss = (w * w).sum()
        >>> loss.backward()
        >>> _ = opt.minimize(loss)
        >>> w.item()
        -1.0
        """
        static = _static_mode()
        if static is not None:
            # A recorded loss: each run of the program applies one update.
            return static._minimize(self, loss, startup_program, parameters, no_grad_set)
        pg = self._collect(parameters)
        if no_grad_set:
            skip = {id(t) for t in no_grad_set if isinstance(t, _C.Tensor)}
            names = {t for t in no_grad_set if isinstance(t, str)}
            pg = [(p, g) for p, g in pg if id(p) not in skip and getattr(p, "name", None) not in names]
        return None, self._apply_optimize(pg)

    def clear_grad(self, set_to_zero=True):
        """Clears the gradients of the parameters (zeros them, or drops them with ``set_to_zero=False``).

        >>> import oar
        >>> import oar.optimizer
        >>> w = oar.to_tensor([1.0], stop_gradient=False)
        >>> opt = oar.optimizer.SGD(parameters=[w])
        >>> (w * 3).sum().backward()
        >>> opt.clear_grad(set_to_zero=False)
        >>> w.grad is None
        True
        """
        for p in self._parameter_list:
            if not p.stop_gradient and p.grad is not None:
                p.clear_grad(set_to_zero)

    clear_gradients = clear_grad

    # ---- save / restore
    def state_dict(self):
        """The optimizer state: each parameter's state tensors under
        ``'<param name>_<state>_0'``, its counters under ``'<param name>_<counter>'``
        (one-element tensors), and ``'LR_Scheduler'``. Unnamed parameters are
        keyed by position (``param_<i>``).

        >>> import oar
        >>> import oar.optimizer
        >>> w = oar.to_tensor([1.0], stop_gradient=False)
        >>> w.name = 'w'
        >>> opt = oar.optimizer.Adam(parameters=[w])
        >>> (w * w).sum().backward(); opt.step()
        >>> sorted(opt.state_dict())
        ['w_moment1_0', 'w_moment2_0', 'w_step']
        """
        out = {}
        for i, p in enumerate(self._parameter_list):
            acc = self._accumulators.get(id(p))
            if acc is None:
                continue
            key = self._param_name(p, i)
            for n, t in acc.items():
                out[f"{key}_{n}_0"] = t
            for n, v in self._scalars[id(p)].items():
                arr = np.array([v], dtype=np.int64 if isinstance(v, int) else np.float64)
                out[f"{key}_{n}"] = _to_tensor(arr)
            master = getattr(self, "_master_weights", {}).get(id(p))
            if master is not None:
                out[f"{key}_fp32_master_0"] = master
        if isinstance(self._learning_rate, LRScheduler):
            out["LR_Scheduler"] = self._learning_rate.state_dict()
        return out

    def set_state_dict(self, state_dict):
        """Restores ``state_dict()`` output (tensors are copied, so training
        resumes exactly where it stopped).

        >>> import oar
        >>> import oar.optimizer
        >>> w = oar.to_tensor([1.0], stop_gradient=False)
        >>> opt = oar.optimizer.Adam(parameters=[w])
        >>> (w * w).sum().backward(); opt.step()
        >>> opt2 = oar.optimizer.Adam(parameters=[w])
        >>> opt2.set_state_dict(opt.state_dict())
        >>> opt2.state_dict()['param_0_step'].numpy().tolist()
        [1]
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"{_api(self)} state_dict must be a dict, got {type(state_dict).__name__}")
        sched = state_dict.get("LR_Scheduler")
        if sched is not None and isinstance(self._learning_rate, LRScheduler):
            self._learning_rate.set_state_dict(sched)
        with no_grad():
            for i, p in enumerate(self._parameter_list):
                key = self._param_name(p, i)
                group = self._group_of[id(p)]
                init = self._init_state(p, group)
                scal = self._init_scalars(p, group)
                found = False
                for n, t0 in init.items():
                    v = state_dict.get(f"{key}_{n}_0")
                    if v is None:
                        continue
                    found = True
                    v = v if isinstance(v, _C.Tensor) else _to_tensor(np.asarray(v))
                    if list(v.shape) != list(t0.shape):
                        raise ValueError(f"{_api(self)} state '{key}_{n}_0' has shape {list(v.shape)} but the "
                                         f"parameter needs {list(t0.shape)}")
                    init[n] = _C.clone(_C.cast(v, t0.dtype)) if v.dtype != t0.dtype else _C.clone(v)
                for n, v0 in scal.items():
                    v = state_dict.get(f"{key}_{n}")
                    if v is None:
                        continue
                    found = True
                    arr = v.numpy() if isinstance(v, _C.Tensor) else np.asarray(v)
                    x = arr.reshape(-1)[0].item()
                    scal[n] = int(x) if isinstance(v0, int) else float(x)
                if found:
                    self._accumulators[id(p)] = init
                    self._scalars[id(p)] = scal
                m = state_dict.get(f"{key}_fp32_master_0")
                if m is not None:
                    m = m if isinstance(m, _C.Tensor) else _to_tensor(np.asarray(m))
                    if list(m.shape) != list(p.shape):
                        raise ValueError(f"{_api(self)} master weight '{key}_fp32_master_0' has shape "
                                         f"{list(m.shape)} but the parameter has {list(p.shape)}")
                    self.__dict__.setdefault("_master_weights", {})[id(p)] = _C.clone(_C.cast(m, _C.dtype.float32))

    set_dict = set_state_dict


_LOW_DTYPES = ("paddle.float16", "paddle.bfloat16")


def _to_tensor(arr):
    from ..creation import to_tensor
    return to_tensor(arr)
