"""The optimizer base class: parameter groups, learning rate and schedulers,
gradient clipping, weight decay, and state save/restore. Subclasses only say
which state a parameter needs and which fused update op (``oar._C._optimizer``)
applies a step.
"""
import math
import numbers
import re
import warnings

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

# Note [multi-tensor optimizer step]
# The optimizers with an elementwise update (all but Lamb and LBFGS) update
# the parameters that share dtype and hyperparameters (rate after
# per-parameter scaling, decay, step count) with one merged op per step
# (Note [multi-tensor updates] in the CPU kernels). It gives the results of
# one op per parameter to the bit, so it is always on for CPU tensors;
# `use_multi_tensor` is accepted for Paddle compatibility and changes
# nothing. Parameters on other devices and distributed parameters are
# updated one by one. What is common to a parameter group (its rate, decay
# and hyperparameters) is worked out once per step, which is most of the
# saving: the per-parameter Python work costs more than the ops it saves.
# Tests set this to False to compare with the per-parameter path.
_MULTI_TENSOR = True


def _mergeable(t):
    """Whether `t` can join a merged update: a CPU tensor that is not distributed."""
    return _C._device_index(t)[0] == 0 and _C._dist_attr(t) is None


def _api(obj):
    return f"[oar.optimizer.{type(obj).__name__}]"


def _as_float(v):
    """A hyperparameter given as a number or a one-element tensor."""
    if isinstance(v, _C.Tensor):
        return float(v.numpy().reshape(-1)[0])
    return float(v)


def _refuse_in_capture(opt, method):
    # An update inside oar.jit.to_static's capture would run once, at trace time.
    from ..jit import _guard
    _guard.refuse_while_converting(f"{type(opt).__name__}.{method}()")


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

    def _betas(self, group):
        """The Adam family's (beta1, beta2, epsilon) for a parameter group, as floats."""
        return tuple(_as_float(self._hp(group, k)) for k in ("beta1", "beta2", "epsilon"))

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
        seen = set()
        for p in params:
            if not isinstance(p, _C.Tensor):
                raise TypeError(f"{_api(self)} parameters must be tensors, got {type(p).__name__}")
            if id(p) in self._group_of:
                raise ValueError(f"{_api(self)} a parameter appears in more than one parameter group")
            if id(p) in seen:  # it would be updated twice per step
                raise ValueError(f"{_api(self)} a parameter appears more than once in the parameter list")
            seen.add(id(p))
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
        """(l1, l2) coefficients added to the gradient for `p`: its own regularizer's, else its group's."""
        reg = getattr(p, "regularizer", None)
        return self._group_decay(group) if reg is None else self._reg_terms(reg)

    def _group_decay(self, group):
        """(l1, l2) of the parameters of `group` that have no regularizer of their own."""
        return self._reg_terms(self._to_regularizer(group["weight_decay"]) if "weight_decay" in group
                               else self.regularization)

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
        return _C.full_like(p, float(value), _ops.state_dtype(p.dtype))  # on p's device

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
            rest = self._apply_merged(params_grads) if self._can_merge() else params_grads
            # each group's update plan, made once for this step's per-parameter updates
            self._step_plans = {}
            try:
                for p, g in rest:
                    if g is None:
                        continue
                    group = self._group_of.get(id(p))
                    if group is None:
                        raise ValueError(f"{_api(self)} a parameter being updated was not given to this optimizer")
                    state = self._state_of(p, group)
                    scalars = self._scalars[id(p)]
                    scalars["step"] += 1
                    master = self._master_of(p)
                    lr, (l1, l2) = self._param_lr(p, group), self._coupled_decay(p, group)
                    if master is None:
                        self._update(p, g, state, scalars, group, lr, l1, l2)
                    else:  # update the float32 copy, then round it into the low-precision parameter
                        self._update(master, _C.cast(g, master.dtype), state, scalars, group, lr, l1, l2)
                        _C._set_data_(p, _C.cast(master, p.dtype))
            finally:
                self._step_plans = None
        return params_grads

    def _can_merge(self):
        # Subclasses that change how a parameter's rate, decay or update are
        # found keep the per-parameter path, which asks them.
        cls = type(self)
        return (_MULTI_TENSOR and self._op is not None and cls._update is Optimizer._update
                and cls._param_lr is Optimizer._param_lr and cls._coupled_decay is Optimizer._coupled_decay)

    def _apply_merged(self, params_grads):
        """Applies the updates of the CPU parameters in `params_grads` with merged ops
        (Note [multi-tensor optimizer step]); returns the pairs left to the per-parameter path.

        Computes what _apply_optimize's per-parameter path computes, in the same
        float operations, with what is common to a group worked out once per step."""
        lr0 = self.get_lr()
        multi_precision = getattr(self, "_multi_precision", False)
        accumulators, scalars_of, group_of = self._accumulators, self._scalars, self._group_of
        groups = {}   # id(group) -> (update plan, group rate or None, group decay)
        buckets = {}  # (args, dtype, number of states) -> (params, grads, [state lists], [(param, master)])
        rest = []
        for p, g in params_grads:
            if g is None:
                continue
            pid = id(p)
            group = group_of.get(pid)
            if group is None or not _mergeable(p):
                rest.append((p, g))
                continue
            ctx = groups.get(id(group))
            if ctx is None:
                mult = group.get("learning_rate")
                ctx = groups[id(group)] = (self._update_plan(group), None if mult is None else lr0 * _as_float(mult),
                                           self._group_decay(group))
            plan, lr, decay = ctx
            if lr is None:  # as _param_lr (x * 1.0 is x)
                attr = getattr(p, "optimize_attr", None)
                if attr is not None:
                    lr = lr0 * _as_float(attr.get("learning_rate", 1.0) if isinstance(attr, dict) else 1.0)
                else:
                    lr = lr0
            reg = getattr(p, "regularizer", None)
            l1, l2 = decay if reg is None else self._reg_terms(reg)
            state = accumulators.get(pid)
            if state is None:
                state = self._state_of(p, group)
            scalars = scalars_of[pid]
            scalars["step"] += 1
            master = self._master_of(p) if multi_precision else None
            target = p
            if master is not None:
                target, g = master, _C.cast(g, master.dtype)
            g, states, args = plan(target, g, state, scalars, lr, l1, l2)
            key = (args, id(target.dtype), len(states))  # (dtypes are singletons, hashed in Python)
            entry = buckets.get(key)
            if entry is None:
                entry = buckets[key] = ([], [], [[] for _ in states], [])
            entry[0].append(target)
            entry[1].append(g)
            for lst, st in zip(entry[2], states):
                lst.append(st)
            if master is not None:
                entry[3].append((p, master))
        if buckets:
            run, pad = getattr(_ops, "merged_" + self._op), [None] * self._n_states
            for (args, _, n), (params, grads, states, masters) in buckets.items():
                run(params, grads, *states, *pad[n:], *args)
                for p, master in masters:
                    _C._set_data_(p, _C.cast(master, p.dtype))
        return rest

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

    # The fused update op of a subclass whose update has a merged form (all
    # but Lamb's), and the number of its state operands (trailing ones may be
    # None); _update_plan gives the operands.
    _op = None
    _n_states = 0
    _step_plans = None  # {id(group): plan} while a step runs

    def _update_plan(self, group):
        """A function ``(param, grad, state, scalars, lr, l1, l2) -> (grad, state tensors, scalar arguments)``
        giving the ``_op`` update's operands for a parameter of `group` (`scalars`: its counters, the step
        count already advanced); what depends only on the group is worked out once, here."""
        raise NotImplementedError(f"{_api(self)} has no update rule")

    def _update(self, p, g, state, scalars, group, lr, l1, l2):
        if self._op is None:
            raise NotImplementedError(f"{_api(self)} has no update rule")
        plans = self._step_plans
        plan = None if plans is None else plans.get(id(group))
        if plan is None:
            plan = self._update_plan(group)
            if plans is not None:
                plans[id(group)] = plan
        g, states, args = plan(p, g, state, scalars, lr, l1, l2)
        if len(states) < self._n_states:  # absent optional states
            states += (None,) * (self._n_states - len(states))
        getattr(_ops, self._op)(p, g, *states, *args)

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
        _refuse_in_capture(self, "step")
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
        _refuse_in_capture(self, "minimize")
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
    # Note [optimizer state layout]: state dicts use Paddle's keys, so that a
    # .pdopt file moves between Paddle and oar in both directions. A
    # parameter's state tensor is '<param>_<accumulator>_0' (for a float32
    # master copy '<param>_fp32_master_0_<accumulator>_0'; with a named
    # optimizer '<param>_<name>_<accumulator>_0'); the step count oar keeps per
    # parameter is saved as Paddle's running powers of the betas and recovered
    # from them on load; master copies go under 'master_weights' and the
    # scheduler under 'LR_Scheduler'. oar's own earlier keys ('<param>_step',
    # '<param>_fp32_master_0', ...) are still read.
    _saved_names = {}  # internal state name -> Paddle's accumulator name, where they differ
    # (accumulator, base, exponent offset, per element): the accumulator holds
    # base ** (step + offset), one value or one per element of the parameter;
    # a str base names a hyperparameter.
    _step_pows = ()

    def _pow_base(self, group, base):
        return _as_float(self._hp(group, base)) if isinstance(base, str) else float(base)

    def _saved_like(self, p, value, per_element):
        """A state tensor holding `value`: shaped like `p`, or of shape [1]."""
        if per_element:
            return self._state_zeros(p, value)
        t = _C.full([1], float(value), _ops.state_dtype(p.dtype))
        kind, index = _C._device_index(p)
        return t if kind == 0 else _C._to_device(t, kind, index)

    def _extra_accs(self, group):
        """Names of the saved accumulators that are not state tensors (the step count as powers, ...)."""
        return tuple(acc for acc, *_ in self._step_pows)

    def _saved_extras(self, p, group, scalars):
        """{accumulator: Tensor} saved besides the state tensors, from the counters in `scalars`."""
        step = scalars.get("step", 0)
        return {acc: self._saved_like(p, self._pow_base(group, base) ** (step + offset), per_element)
                for acc, base, offset, per_element in self._step_pows}

    def _loaded_scalars(self, p, group, found):
        """(counters or None, accumulators consumed) from the saved accumulators in `found`
        ({name: saved value}), the inverse of _saved_extras."""
        pows = [(_first_value(found[acc]), self._pow_base(group, base), offset)
                for acc, base, offset, _ in self._step_pows if acc in found]
        step = _step_from_pows(pows)
        used = {acc for acc, *_ in self._step_pows if acc in found}
        return (None if step is None else {"step": step}), used

    def _key_prefix(self, name, master):
        return name + ("_fp32_master_0" if master else "") + (f"_{self._name}" if self._name else "")

    def state_dict(self):
        """The optimizer state in Paddle's layout: each parameter's state under
        ``'<param name>_<accumulator>_0'`` (Adam's step count as
        ``'_beta1_pow_acc_0'`` / ``'_beta2_pow_acc_0'``), float32 master copies
        under ``'master_weights'``, and ``'LR_Scheduler'``. Unnamed parameters
        are keyed by position (``param_<i>``).

        >>> import oar
        >>> import oar.optimizer
        >>> w = oar.to_tensor([1.0], stop_gradient=False)
        >>> w.name = 'w'
        >>> opt = oar.optimizer.Adam(parameters=[w])
        >>> (w * w).sum().backward(); opt.step()
        >>> sorted(opt.state_dict())
        ['w_beta1_pow_acc_0', 'w_beta2_pow_acc_0', 'w_moment1_0', 'w_moment2_0']
        >>> round(opt.state_dict()['w_beta1_pow_acc_0'].item(), 6)  # beta1 ** (steps + 1)
        0.81
        """
        by_acc = {}  # Paddle orders the entries by accumulator, then by parameter
        masters = {}
        for i, p in enumerate(self._parameter_list):
            acc = self._accumulators.get(id(p))
            if acc is None:
                continue
            name = self._param_name(p, i)
            group = self._group_of[id(p)]
            master = getattr(self, "_master_weights", {}).get(id(p))
            prefix = self._key_prefix(name, master is not None)
            entries = {self._saved_names.get(n, n): t for n, t in acc.items()}
            entries.update(self._saved_extras(p if master is None else master, group, self._scalars[id(p)]))
            for n, t in entries.items():
                by_acc.setdefault(n, {})[f"{prefix}_{n}_0"] = t
            if master is not None:
                masters[name] = master
        out = {k: t for entries in by_acc.values() for k, t in entries.items()}
        if masters:
            out["master_weights"] = masters
        if isinstance(self._learning_rate, LRScheduler):
            out["LR_Scheduler"] = self._learning_rate.state_dict()
        return out

    def _index_keys(self, state_dict, names, accs):
        """{(param name, accumulator): key} for the keys of `state_dict` in Paddle's layout
        ('<param>[_fp32_master_N][_<optimizer name>]_<accumulator>_N')."""
        accs = sorted(set(accs), key=len, reverse=True)
        index = {}
        for key in state_dict:
            m = _COUNTER.search(key) if isinstance(key, str) else None
            if m is None:
                continue
            stem = key[:m.start()]
            for acc in accs:
                if not stem.endswith("_" + acc):
                    continue
                heads = [stem[:-len(acc) - 1]]
                if self._name and heads[0].endswith(f"_{self._name}"):
                    heads.append(heads[0][:-len(self._name) - 1])
                heads += [_MASTER.sub("", h) for h in heads if _MASTER.search(h)]
                head = next((h for h in heads if h in names), None)
                if head is not None:
                    index.setdefault((head, acc), key)
                    break
        return index

    def set_state_dict(self, state_dict):
        """Restores a state dict written by ``state_dict()``, by Paddle, or by
        earlier oar versions (tensors are copied, so training resumes exactly
        where it stopped). Entries this optimizer has no use for (other
        parameters' names, other optimizers' state) are reported in a warning.

        >>> import oar
        >>> import oar.optimizer
        >>> w = oar.to_tensor([1.0], stop_gradient=False)
        >>> opt = oar.optimizer.Adam(parameters=[w])
        >>> (w * w).sum().backward(); opt.step()
        >>> opt2 = oar.optimizer.Adam(parameters=[w])
        >>> opt2.set_state_dict(opt.state_dict())
        >>> round(opt2.state_dict()['param_0_beta1_pow_acc_0'].item(), 6)
        0.81
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"{_api(self)} state_dict must be a dict, got {type(state_dict).__name__}")
        used = set()
        sched = state_dict.get("LR_Scheduler")
        if sched is not None and isinstance(self._learning_rate, LRScheduler):
            self._learning_rate.set_state_dict(sched)
            used.add("LR_Scheduler")
        masters = state_dict.get("master_weights")
        masters = dict(masters) if isinstance(masters, dict) else {}
        if "master_weights" in state_dict:
            used.add("master_weights")
        names = [self._param_name(p, i) for i, p in enumerate(self._parameter_list)]
        inits = [self._init_state(p, self._group_of[id(p)]) for p in self._parameter_list]
        accs = set()
        for p, init in zip(self._parameter_list, inits):
            accs.update(self._extra_accs(self._group_of[id(p)]))
            for n in init:
                accs.update((n, self._saved_names.get(n, n)))
        index = self._index_keys(state_dict, set(names), accs)
        no_step = []
        with no_grad():
            for i, p in enumerate(self._parameter_list):
                key = names[i]
                group = self._group_of[id(p)]
                m, mkey = masters.pop(key, None), None
                if m is None and f"{key}_fp32_master_0" in state_dict:
                    mkey = f"{key}_fp32_master_0"
                    m = state_dict[mkey]
                if m is not None:
                    m = m if isinstance(m, _C.Tensor) else _to_tensor(np.asarray(m))
                    if list(m.shape) != list(p.shape):
                        raise ValueError(f"{_api(self)} master weight of '{key}' has shape {list(m.shape)} but the "
                                         f"parameter has {list(p.shape)}")
                    self.__dict__.setdefault("_master_weights", {})[id(p)] = _C.clone(_C.cast(m, _C.dtype.float32))
                    if mkey is not None:
                        used.add(mkey)
                init = inits[i]
                found = False
                for n, t0 in init.items():
                    k = index.get((key, self._saved_names.get(n, n))) or index.get((key, n))
                    if k is None:
                        continue
                    found = True
                    used.add(k)
                    v = state_dict[k]
                    v = v if isinstance(v, _C.Tensor) else _to_tensor(np.asarray(v))
                    if list(v.shape) != list(t0.shape):
                        raise ValueError(f"{_api(self)} state '{k}' has shape {list(v.shape)} but the "
                                         f"parameter needs {list(t0.shape)}")
                    init[n] = _C.clone(_C.cast(v, t0.dtype)) if v.dtype != t0.dtype else _C.clone(v)
                extras = {}
                for acc in self._extra_accs(group):
                    k = index.get((key, acc))
                    if k is not None:
                        extras[acc] = (k, state_dict[k])
                scal, consumed = self._loaded_scalars(p, group, {a: v for a, (_, v) in extras.items()})
                used.update(extras[a][0] for a in consumed)
                found = found or bool(consumed)
                # oar's earlier layout: the counters as '<param>_<counter>' (a step count for every optimizer)
                legacy = {"step": 0, **self._init_scalars(p, group)}
                for n, v0 in legacy.items():
                    v = state_dict.get(f"{key}_{n}")
                    if v is None:
                        continue
                    found = True
                    used.add(f"{key}_{n}")
                    x = _first_value(v)
                    scal = dict(legacy) if scal is None else scal
                    scal[n] = int(round(x)) if isinstance(v0, int) else float(x)
                if found:
                    if scal is None:
                        scal = self._init_scalars(p, group)
                        if self._step_pows:
                            no_step.append(key)
                    else:
                        scal = {**self._init_scalars(p, group), **scal}
                    self._accumulators[id(p)] = init
                    self._scalars[id(p)] = scal
        unused = [k for k in state_dict if k not in used] + [f"master_weights[{k!r}]" for k in masters]
        if unused:
            shown = ", ".join(map(repr, unused[:8])) + (f" and {len(unused) - 8} more" if len(unused) > 8 else "")
            warnings.warn(f"{_api(self)} set_state_dict: {len(unused)} entries of the state dict match none of this "
                          f"optimizer's parameters and state and are not used: {shown}", UserWarning, stacklevel=2)
        if no_step:
            warnings.warn(f"{_api(self)} set_state_dict: no step count saved for {no_step[:8]}; their bias "
                          f"correction starts again from step 0", UserWarning, stacklevel=2)

    set_dict = set_state_dict


_COUNTER = re.compile(r"_\d+$")
_MASTER = re.compile(r"_fp32_master_\d+$")


def _to_numpy(v):
    return v.numpy() if isinstance(v, _C.Tensor) else np.asarray(v)


def _first_value(v):
    """The first element of a saved tensor, array or number, as a Python number."""
    return _to_numpy(v).reshape(-1)[0].item()


def _step_from_pows(pows):
    """The step count t from saved powers ``base ** (t + offset)`` (``[(value, base, offset)]``),
    or None when none of them can tell (a base outside (0, 1), a power that underflowed to 0).

    A float32 power far below 1e-30 has lost digits (beta1 = 0.9 gets there after
    about 650 steps), so one still in the normal range is preferred.
    """
    usable = [(v, b, o) for v, b, o in pows if 0.0 < b < 1.0 and 0.0 < v <= 1.0]
    if not usable:
        return None
    value, base, offset = max(usable, key=lambda e: e[0] >= 1e-30)
    return max(0, int(round(math.log(value) / math.log(base) - offset)))


_LOW_DTYPES = ("paddle.float16", "paddle.bfloat16")


def _to_tensor(arr):
    from ..creation import to_tensor
    return to_tensor(arr)
