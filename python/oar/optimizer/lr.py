"""Learning-rate schedulers (Paddle's ``paddle.optimizer.lr``).

A scheduler holds ``last_epoch`` and ``last_lr``; ``step()`` advances the
epoch (or step) counter and recomputes the rate. Pass a scheduler as an
optimizer's ``learning_rate`` and call ``scheduler.step()`` yourself, as in
Paddle.

>>> import oar
>>> sched = oar.optimizer.lr.StepDecay(learning_rate=0.5, step_size=2, gamma=0.1)
>>> lrs = []
>>> for epoch in range(4):
...     lrs.append(round(sched(), 6))
...     sched.step()
>>> lrs
[0.5, 0.5, 0.05, 0.05]
"""
import math
import numbers

__all__ = [
    "LRScheduler", "NoamDecay", "PiecewiseDecay", "NaturalExpDecay", "InverseTimeDecay", "PolynomialDecay",
    "LinearWarmup", "ExponentialDecay", "MultiStepDecay", "StepDecay", "LambdaDecay", "MultiplicativeDecay",
    "ReduceOnPlateau", "CosineAnnealingDecay", "CosineAnnealingWarmRestarts", "OneCycleLR", "CyclicLR",
    "LinearLR",
]


def _check_number(api, name, v, minimum=None, strict=False):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"[oar.optimizer.lr.{api}] {name} must be a number, got {type(v).__name__}")
    if minimum is not None and (v < minimum or (strict and v == minimum)):
        op = ">" if strict else ">="
        raise ValueError(f"[oar.optimizer.lr.{api}] {name} must be {op} {minimum}, got {v}")
    return v


class LRScheduler:
    """Base class of the schedulers: subclasses implement ``get_lr()`` from
    ``self.base_lr`` and ``self.last_epoch``.

    Args:
        learning_rate (float): the initial rate. Default 0.1.
        last_epoch (int): the epoch to resume from; -1 starts fresh.
        verbose (bool): print the rate at each step.

    >>> import oar
    >>> class Halve(oar.optimizer.lr.LRScheduler):
    ...     def get_lr(self):
    ...         return self.base_lr * 0.5 ** self.last_epoch
    >>> s = Halve(learning_rate=1.0)
    >>> s.step(); s.step(); s()
    0.25
    """

    def __init__(self, learning_rate=0.1, last_epoch=-1, verbose=False):
        _check_number(type(self).__name__, "learning_rate", learning_rate)
        self.base_lr = float(learning_rate)
        self.last_lr = float(learning_rate)
        self.last_epoch = last_epoch
        self.verbose = verbose
        self._var_name = None
        self.step()

    def __call__(self):
        """The current learning rate."""
        return self.last_lr

    def step(self, epoch=None):
        """Advances to ``epoch`` (default: the next one) and updates ``last_lr``."""
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = self.get_lr()
        else:
            self.last_epoch = epoch
            if hasattr(self, "_get_closed_form_lr"):
                self.last_lr = self._get_closed_form_lr()
            else:
                self.last_lr = self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to {self.last_lr}.")

    def get_lr(self):
        """The rate at ``self.last_epoch``; implemented by each scheduler."""
        raise NotImplementedError(f"[oar.optimizer.lr.{type(self).__name__}] get_lr is not implemented")

    def state_keys(self):
        """Names of the attributes saved by ``state_dict``."""
        self.keys = ["last_epoch", "last_lr"]

    def _state_names(self):
        self.state_keys()
        names = list(self.keys)
        for k, v in self.__dict__.items():
            # Counters and scalars that the recurrence carries between steps.
            if k not in names and k not in ("keys", "verbose", "_var_name") and (
                    v is None or isinstance(v, (numbers.Number, str, list, tuple))):
                names.append(k)
        return names

    def state_dict(self):
        """The scheduler's state as a dict of plain Python values."""
        out = {}
        for k in self._state_names():
            v = getattr(self, k)
            out[k] = list(v) if isinstance(v, tuple) else v
        return out

    def set_state_dict(self, state_dict):
        """Restores a state from ``state_dict()``."""
        for k, v in state_dict.items():
            if k in self.__dict__ or k in ("last_epoch", "last_lr"):
                setattr(self, k, v)

    set_dict = set_state_dict


class NoamDecay(LRScheduler):
    """``lr * d_model**-0.5 * min(epoch**-0.5, epoch * warmup_steps**-1.5)`` (epoch 0 uses 1 for the first term).

    >>> import oar
    >>> s = oar.optimizer.lr.NoamDecay(d_model=4, warmup_steps=10, learning_rate=1.0)
    >>> s.step(); round(s(), 6)
    0.015811
    """

    def __init__(self, d_model, warmup_steps, learning_rate=1.0, last_epoch=-1, verbose=False):
        if d_model <= 0:
            raise ValueError(f"[oar.optimizer.lr.NoamDecay] d_model must be > 0, got {d_model}")
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        a = 1.0 if self.last_epoch == 0 else self.last_epoch ** -0.5
        b = self.warmup_steps ** -1.5 * self.last_epoch
        return self.base_lr * self.d_model ** -0.5 * min(a, b)


class PiecewiseDecay(LRScheduler):
    """``values[i]`` while ``epoch < boundaries[i]``, then the last value.

    >>> import oar
    >>> s = oar.optimizer.lr.PiecewiseDecay(boundaries=[2], values=[1.0, 0.5])
    >>> s.step(); s.step(); s()
    0.5
    """

    def __init__(self, boundaries, values, last_epoch=-1, verbose=False):
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"[oar.optimizer.lr.PiecewiseDecay] len(values) ({len(values)}) must be "
                             f"len(boundaries) + 1 ({len(boundaries) + 1})")
        self.boundaries = list(boundaries)
        self.values = list(values)
        super().__init__(values[0], last_epoch, verbose)

    def get_lr(self):
        for i, b in enumerate(self.boundaries):
            if self.last_epoch < b:
                return self.values[i]
        return self.values[-1]


class NaturalExpDecay(LRScheduler):
    """``lr * exp(-gamma * epoch)``.

    >>> import oar
    >>> s = oar.optimizer.lr.NaturalExpDecay(learning_rate=1.0, gamma=0.5)
    >>> s.step(); round(s(), 6)
    0.606531
    """

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        _check_number("NaturalExpDecay", "gamma", gamma, 0.0)
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * math.exp(-self.gamma * self.last_epoch)


class InverseTimeDecay(LRScheduler):
    """``lr / (1 + gamma * epoch)``.

    >>> import oar
    >>> s = oar.optimizer.lr.InverseTimeDecay(learning_rate=1.0, gamma=1.0)
    >>> s.step(); s()
    0.5
    """

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr / (1 + self.gamma * self.last_epoch)


class PolynomialDecay(LRScheduler):
    """``(lr - end_lr) * (1 - epoch / decay_steps) ** power + end_lr``; with ``cycle`` the
    horizon grows to the next multiple of ``decay_steps`` instead of stopping.

    >>> import oar
    >>> s = oar.optimizer.lr.PolynomialDecay(learning_rate=1.0, decay_steps=4, end_lr=0.0)
    >>> s.step(); s()
    0.75
    """

    def __init__(self, learning_rate, decay_steps, end_lr=0.0001, power=1.0, cycle=False, last_epoch=-1,
                 verbose=False):
        if not isinstance(decay_steps, int) or decay_steps <= 0:
            raise ValueError(f"[oar.optimizer.lr.PolynomialDecay] decay_steps must be a positive int, "
                             f"got {decay_steps}")
        self.decay_steps = decay_steps
        self.end_lr = end_lr
        self.power = power
        self.cycle = cycle
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        epoch = self.last_epoch
        steps = self.decay_steps
        if self.cycle:
            div = math.ceil(float(epoch) / float(steps))
            steps = steps * (1 if epoch == 0 else div)
        else:
            epoch = min(epoch, steps)
        return (self.base_lr - self.end_lr) * (1 - float(epoch) / float(steps)) ** self.power + self.end_lr


class LinearWarmup(LRScheduler):
    """Linear warmup from ``start_lr`` to ``end_lr`` over ``warmup_steps``, then
    ``learning_rate`` (a float, or a scheduler stepped from 0).

    >>> import oar
    >>> s = oar.optimizer.lr.LinearWarmup(learning_rate=0.5, warmup_steps=4, start_lr=0.0, end_lr=0.5)
    >>> s.step(); s()
    0.125
    """

    def __init__(self, learning_rate, warmup_steps, start_lr, end_lr, last_epoch=-1, verbose=False):
        if not isinstance(learning_rate, (numbers.Real, LRScheduler)) or isinstance(learning_rate, bool):
            raise TypeError(f"[oar.optimizer.lr.LinearWarmup] learning_rate must be a float or an LRScheduler, "
                            f"got {type(learning_rate).__name__}")
        if not isinstance(warmup_steps, int) or warmup_steps <= 0:
            raise ValueError(f"[oar.optimizer.lr.LinearWarmup] warmup_steps must be a positive int, "
                             f"got {warmup_steps}")
        self.learning_rate = learning_rate
        self.warmup_steps = warmup_steps
        self.start_lr = start_lr
        self.end_lr = end_lr
        super().__init__(start_lr, last_epoch, verbose)

    def state_dict(self):
        out = super().state_dict()
        if isinstance(self.learning_rate, LRScheduler):
            out["LinearWarmup_LR"] = self.learning_rate.state_dict()
        return out

    def set_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        inner = state_dict.pop("LinearWarmup_LR", None)
        super().set_state_dict(state_dict)
        if inner is not None and isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.set_state_dict(inner)

    set_dict = set_state_dict

    def get_lr(self):
        if self.last_epoch < self.warmup_steps:
            return (self.end_lr - self.start_lr) * float(self.last_epoch) / float(self.warmup_steps) + self.start_lr
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(self.last_epoch - self.warmup_steps)
            return self.learning_rate()
        return float(self.learning_rate)


class ExponentialDecay(LRScheduler):
    """``lr * gamma ** epoch``.

    >>> import oar
    >>> s = oar.optimizer.lr.ExponentialDecay(learning_rate=1.0, gamma=0.5)
    >>> s.step(); s.step(); s()
    0.25
    """

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        _check_number("ExponentialDecay", "gamma", gamma, 0.0, strict=True)
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.gamma ** self.last_epoch


class MultiStepDecay(LRScheduler):
    """``lr * gamma ** (number of milestones <= epoch)``.

    >>> import oar
    >>> s = oar.optimizer.lr.MultiStepDecay(learning_rate=1.0, milestones=[1, 3], gamma=0.5)
    >>> s.step(); s()
    0.5
    """

    def __init__(self, learning_rate, milestones, gamma=0.1, last_epoch=-1, verbose=False):
        milestones = list(milestones)
        if any(milestones[i] >= milestones[i + 1] for i in range(len(milestones) - 1)):
            raise ValueError("[oar.optimizer.lr.MultiStepDecay] milestones must be increasing")
        if gamma >= 1.0:
            raise ValueError(f"[oar.optimizer.lr.MultiStepDecay] gamma must be < 1.0, got {gamma}")
        self.milestones = milestones
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        for i, m in enumerate(self.milestones):
            if self.last_epoch < m:
                return self.base_lr * self.gamma ** i
        return self.base_lr * self.gamma ** len(self.milestones)


class StepDecay(LRScheduler):
    """``lr * gamma ** (epoch // step_size)``.

    >>> import oar
    >>> s = oar.optimizer.lr.StepDecay(learning_rate=1.0, step_size=2, gamma=0.5)
    >>> s.step(); s.step(); s()
    0.5
    """

    def __init__(self, learning_rate, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        if not isinstance(step_size, int) or step_size <= 0:
            raise ValueError(f"[oar.optimizer.lr.StepDecay] step_size must be a positive int, got {step_size}")
        if gamma >= 1.0:
            raise ValueError(f"[oar.optimizer.lr.StepDecay] gamma must be < 1.0, got {gamma}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.gamma ** (self.last_epoch // self.step_size)


class LambdaDecay(LRScheduler):
    """``lr * lr_lambda(epoch)``.

    >>> import oar
    >>> s = oar.optimizer.lr.LambdaDecay(learning_rate=1.0, lr_lambda=lambda e: 0.9 ** e)
    >>> s.step(); s()
    0.9
    """

    def __init__(self, learning_rate, lr_lambda, last_epoch=-1, verbose=False):
        if not callable(lr_lambda):
            raise TypeError("[oar.optimizer.lr.LambdaDecay] lr_lambda must be callable")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.lr_lambda(self.last_epoch)


class MultiplicativeDecay(LRScheduler):
    """``lr * prod(lr_lambda(e) for e in 1..epoch)``.

    >>> import oar
    >>> s = oar.optimizer.lr.MultiplicativeDecay(learning_rate=1.0, lr_lambda=lambda e: 0.5)
    >>> s.step(); s.step(); s()
    0.25
    """

    def __init__(self, learning_rate, lr_lambda, last_epoch=-1, verbose=False):
        if not callable(lr_lambda):
            raise TypeError("[oar.optimizer.lr.MultiplicativeDecay] lr_lambda must be callable")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        cur = self.base_lr
        for epoch in range(1, self.last_epoch + 1):
            cur = cur * self.lr_lambda(epoch)
        return cur


class CosineAnnealingDecay(LRScheduler):
    """Cosine annealing from ``lr`` to ``eta_min`` over ``T_max`` epochs (the
    recursive form, as in Paddle; ``step(epoch)`` uses the closed form).

    >>> import oar
    >>> s = oar.optimizer.lr.CosineAnnealingDecay(learning_rate=1.0, T_max=2)
    >>> s.step(); round(s(), 6)
    0.5
    """

    def __init__(self, learning_rate, T_max, eta_min=0, last_epoch=-1, verbose=False):
        if not isinstance(T_max, int) or T_max <= 0:
            raise ValueError(f"[oar.optimizer.lr.CosineAnnealingDecay] T_max must be a positive int, got {T_max}")
        self.T_max = T_max
        self.eta_min = float(eta_min)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        e, t = self.last_epoch, self.T_max
        if e == 0:
            return self.base_lr
        if (e - 1 - t) % (2 * t) == 0:
            return self.last_lr + (self.base_lr - self.eta_min) * (1 - math.cos(math.pi / t)) / 2
        return ((1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t))
                * (self.last_lr - self.eta_min) + self.eta_min)

    def _get_closed_form_lr(self):
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every ``T_0 * T_mult**k`` epochs.

    >>> import oar
    >>> s = oar.optimizer.lr.CosineAnnealingWarmRestarts(learning_rate=1.0, T_0=2)
    >>> s.step(); s.step(); s()
    1.0
    """

    def __init__(self, learning_rate, T_0, T_mult=1, eta_min=0, last_epoch=-1, verbose=False):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"[oar.optimizer.lr.CosineAnnealingWarmRestarts] T_0 must be a positive int, got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"[oar.optimizer.lr.CosineAnnealingWarmRestarts] T_mult must be an int >= 1, "
                             f"got {T_mult}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = float(eta_min)
        self.T_cur = last_epoch
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2

    def step(self, epoch=None):
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur - self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"[oar.optimizer.lr.CosineAnnealingWarmRestarts] epoch must be >= 0, got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self.last_lr = self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: CosineAnnealingWarmRestarts set learning rate to {self.last_lr}.")


class OneCycleLR(LRScheduler):
    """The one-cycle policy: warm up from ``max_learning_rate / divide_factor`` to
    ``max_learning_rate`` over ``phase_pct`` of ``total_steps``, then anneal to
    ``end_learning_rate`` (``three_phase`` first returns to the initial rate).

    >>> import oar
    >>> s = oar.optimizer.lr.OneCycleLR(max_learning_rate=1.0, total_steps=10, anneal_strategy='linear')
    >>> s()
    0.04
    """

    def __init__(self, max_learning_rate, total_steps, divide_factor=25.0, end_learning_rate=0.0001,
                 phase_pct=0.3, anneal_strategy="cos", three_phase=False, last_epoch=-1, verbose=False):
        api = "[oar.optimizer.lr.OneCycleLR]"
        _check_number("OneCycleLR", "max_learning_rate", max_learning_rate, 0.0)
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"{api} total_steps must be a positive int, got {total_steps}")
        if not 0 <= phase_pct <= 1:
            raise ValueError(f"{api} phase_pct must be in [0, 1], got {phase_pct}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{api} anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.total_steps = total_steps
        initial_lr = max_learning_rate / float(divide_factor)
        min_lr = float(end_learning_rate)
        if three_phase:
            if phase_pct >= 0.5:
                raise ValueError(f"{api} phase_pct must be < 0.5 with three_phase, got {phase_pct}")
            self._end_steps = [float(phase_pct * total_steps) - 1, float(2 * phase_pct * total_steps) - 2,
                               total_steps - 1]
            self._lrs = [initial_lr, max_learning_rate, initial_lr, min_lr]
        else:
            self._end_steps = [float(phase_pct * total_steps) - 1, total_steps - 1]
            self._lrs = [initial_lr, max_learning_rate, min_lr]
        self.anneal_strategy = anneal_strategy
        super().__init__(initial_lr, last_epoch, verbose)

    @staticmethod
    def _anneal(strategy, start, end, pct):
        if strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"[oar.optimizer.lr.OneCycleLR] stepped {step} times, more than total_steps "
                             f"({self.total_steps})")
        start = 0
        for i, end in enumerate(self._end_steps):
            if step <= end or i == len(self._end_steps) - 1:
                pct = (step - start) / (end - start) if end != start else 1.0
                return self._anneal(self.anneal_strategy, self._lrs[i], self._lrs[i + 1], pct)
            start = end
        return self._lrs[-1]


class CyclicLR(LRScheduler):
    """Cycles between ``base_learning_rate`` and ``max_learning_rate`` (modes
    'triangular', 'triangular2', 'exp_range', or a custom ``scale_fn``).

    >>> import oar
    >>> s = oar.optimizer.lr.CyclicLR(base_learning_rate=0.1, max_learning_rate=1.0, step_size_up=2)
    >>> s.step(); round(s(), 6)
    0.55
    """

    def __init__(self, base_learning_rate, max_learning_rate, step_size_up, step_size_down=None,
                 mode="triangular", exp_gamma=1.0, scale_fn=None, scale_mode="cycle", last_epoch=-1,
                 verbose=False):
        api = "[oar.optimizer.lr.CyclicLR]"
        if not isinstance(step_size_up, int) or step_size_up <= 0:
            raise ValueError(f"{api} step_size_up must be a positive int, got {step_size_up}")
        if step_size_down is not None and (not isinstance(step_size_down, int) or step_size_down <= 0):
            raise ValueError(f"{api} step_size_down must be a positive int, got {step_size_down}")
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"{api} mode must be 'triangular', 'triangular2' or 'exp_range', got {mode!r}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"{api} scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}")
        if max_learning_rate < base_learning_rate:
            raise ValueError(f"{api} max_learning_rate must be >= base_learning_rate")
        down = step_size_up if step_size_down is None else step_size_down
        self.cycle_size = step_size_up + down
        self.step_up_size_ratio = step_size_up / self.cycle_size
        self.max_lr = float(max_learning_rate)
        self.amplitude = self.max_lr - base_learning_rate
        self.mode = mode
        self.gamma = exp_gamma
        if scale_fn is None:
            if mode == "triangular":
                self.scale_fn, self.scale_mode = (lambda x: 1.0), "cycle"
            elif mode == "triangular2":
                self.scale_fn, self.scale_mode = (lambda x: 1 / (2.0 ** (x - 1))), "cycle"
            else:
                self.scale_fn, self.scale_mode = (lambda x: self.gamma ** x), "iterations"
        else:
            self.scale_fn, self.scale_mode = scale_fn, scale_mode
        super().__init__(base_learning_rate, last_epoch, verbose)

    def get_lr(self):
        it = self.last_epoch
        cycle = 1 + it // self.cycle_size
        pct = 1.0 + it / self.cycle_size - cycle
        if pct <= self.step_up_size_ratio:
            factor = pct / self.step_up_size_ratio
        else:
            factor = (1 - pct) / (1 - self.step_up_size_ratio)
        height = self.amplitude * factor
        x = cycle if self.scale_mode == "cycle" else it
        return self.base_lr + height * self.scale_fn(x)


class LinearLR(LRScheduler):
    """Scales ``lr`` linearly from ``start_factor`` to ``end_factor`` over ``total_steps``.

    >>> import oar
    >>> s = oar.optimizer.lr.LinearLR(learning_rate=1.0, total_steps=2, start_factor=0.5)
    >>> s.step(); s()
    0.75
    """

    def __init__(self, learning_rate, total_steps, start_factor=1.0 / 3, end_factor=1.0, last_epoch=-1,
                 verbose=False):
        api = "[oar.optimizer.lr.LinearLR]"
        if not 0 < start_factor <= 1:
            raise ValueError(f"{api} start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"{api} end_factor must be in [0, 1], got {end_factor}")
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"{api} total_steps must be a positive int, got {total_steps}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_steps = total_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        e = min(self.last_epoch, self.total_steps)
        return self.base_lr * (self.start_factor + (self.end_factor - self.start_factor) * e / self.total_steps)


class ReduceOnPlateau(LRScheduler):
    """Multiplies the rate by ``factor`` once ``metrics`` stopped improving for
    ``patience`` epochs; ``step(metrics)`` takes the metric.

    >>> import oar
    >>> s = oar.optimizer.lr.ReduceOnPlateau(learning_rate=1.0, patience=0, factor=0.5)
    >>> s.step(1.0); s.step(2.0); s()
    0.5
    """

    def __init__(self, learning_rate, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, epsilon=1e-8, verbose=False):
        api = "[oar.optimizer.lr.ReduceOnPlateau]"
        if mode not in ("min", "max"):
            raise ValueError(f"{api} mode must be 'min' or 'max', got {mode!r}")
        if factor >= 1.0:
            raise ValueError(f"{api} factor must be < 1.0, got {factor}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"{api} threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        _check_number("ReduceOnPlateau", "learning_rate", learning_rate)
        self.mode = mode
        self.factor = factor
        self.patience = patience
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.cooldown = cooldown
        self.min_lr = min_lr
        self.epsilon = epsilon
        self.cooldown_counter = 0
        self.best = None
        self.num_bad_epochs = 0
        self.base_lr = float(learning_rate)
        self.last_lr = float(learning_rate)
        self.last_epoch = 0
        self.verbose = verbose
        self._var_name = None

    def state_keys(self):
        self.keys = ["cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"]

    def step(self, metrics, epoch=None):
        """Records ``metrics`` (a number or a one-element tensor) for this epoch."""
        if hasattr(metrics, "numpy"):
            if metrics.size != 1:
                raise ValueError(f"[oar.optimizer.lr.ReduceOnPlateau] metrics must hold one element, "
                                 f"got shape {metrics.shape}")
            metrics = float(metrics.numpy().reshape(-1)[0])
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
        else:
            if self.best is None or self._is_better(metrics, self.best):
                self.best = metrics
                self.num_bad_epochs = 0
            else:
                self.num_bad_epochs += 1
            if self.num_bad_epochs > self.patience:
                self.cooldown_counter = self.cooldown
                self.num_bad_epochs = 0
                new_lr = max(self.last_lr * self.factor, self.min_lr)
                if self.last_lr - new_lr > self.epsilon:
                    self.last_lr = new_lr
                    if self.verbose:
                        print(f"Epoch {self.last_epoch}: ReduceOnPlateau set learning rate to {self.last_lr}.")

    def _is_better(self, current, best):
        if self.mode == "min":
            return current < (best - best * self.threshold if self.threshold_mode == "rel" else best - self.threshold)
        return current > (best + best * self.threshold if self.threshold_mode == "rel" else best + self.threshold)
