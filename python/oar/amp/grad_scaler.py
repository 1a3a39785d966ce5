"""Dynamic loss scaling for float16 training (Paddle's AmpScaler/GradScaler)."""
from .. import _C

__all__ = ["AmpScaler", "GradScaler"]


def _params(optimizer):
    params = getattr(optimizer, "_parameter_list", None)
    if params is None:
        raise TypeError(f"[oar.amp.GradScaler] expected an oar optimizer, got {type(optimizer).__name__}")
    return params


def _positive(value, what, cls, above=0.0):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > above:
        raise ValueError(f"[oar.amp.{cls}.set_{what}] {what} must be a number above {above:g}, got {value!r}")
    return float(value)


def _count(value, what, cls):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"[oar.amp.{cls}.set_{what}] {what} must be a positive int, got {value!r}")
    return int(value)


class AmpScaler:
    """Multiplies the loss by a scale, divides the gradients by it before the
    optimizer step, skips steps whose gradients hold inf/NaN, and adapts the
    scale: times ``incr_ratio`` after ``incr_every_n_steps`` good steps, times
    ``decr_ratio`` after ``decr_every_n_nan_or_inf`` bad ones.

    >>> import oar
    >>> net = oar.nn.Linear(2, 1)
    >>> opt = oar.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    >>> scaler = oar.amp.GradScaler(init_loss_scaling=1024)
    >>> loss = net(oar.ones([4, 2])).mean()
    >>> scaler.scale(loss).backward()
    >>> scaler.step(opt); scaler.update(); opt.clear_grad()
    >>> scaler.get_loss_scaling()
    1024.0
    """

    def __init__(self, enable=True, init_loss_scaling=2.0**16, incr_ratio=2.0, decr_ratio=0.5,
                 incr_every_n_steps=2000, decr_every_n_nan_or_inf=1, use_dynamic_loss_scaling=True):
        api = f"oar.amp.{type(self).__name__}"
        if init_loss_scaling <= 0:
            raise ValueError(f"[{api}] init_loss_scaling must be positive, got {init_loss_scaling}")
        if incr_ratio <= 1.0:
            raise ValueError(f"[{api}] incr_ratio must be greater than 1, got {incr_ratio}")
        if not 0.0 < decr_ratio < 1.0:
            raise ValueError(f"[{api}] decr_ratio must be in (0, 1), got {decr_ratio}")
        if incr_every_n_steps < 1 or decr_every_n_nan_or_inf < 1:
            raise ValueError(f"[{api}] incr_every_n_steps and decr_every_n_nan_or_inf must be at least 1")
        self._enable = bool(enable)
        self._scale = float(init_loss_scaling)
        self._incr_ratio = float(incr_ratio)
        self._decr_ratio = float(decr_ratio)
        self._incr_every_n_steps = int(incr_every_n_steps)
        self._decr_every_n_nan_or_inf = int(decr_every_n_nan_or_inf)
        self._dynamic = bool(use_dynamic_loss_scaling)
        self._good_steps = 0
        self._bad_steps = 0
        self._found_inf = False
        self._unscaled = set()  # ids of optimizers unscaled since the last update

    def is_enable(self):
        return self._enable

    def is_use_dynamic_loss_scaling(self):
        return self._dynamic

    def get_loss_scaling(self):
        """The current loss scale."""
        return self._scale

    def get_init_loss_scaling(self):
        """The loss scale now (Paddle's name: it is the scale the next step starts from)."""
        return self._scale

    def set_init_loss_scaling(self, value):
        self._scale = _positive(value, "init_loss_scaling", type(self).__name__)

    def get_incr_ratio(self):
        return self._incr_ratio

    def set_incr_ratio(self, value):
        self._incr_ratio = _positive(value, "incr_ratio", type(self).__name__, above=1.0)

    def get_decr_ratio(self):
        return self._decr_ratio

    def set_decr_ratio(self, value):
        v = _positive(value, "decr_ratio", type(self).__name__)
        if v >= 1.0:
            raise ValueError(f"[oar.amp.{type(self).__name__}.set_decr_ratio] decr_ratio must be in (0, 1), got {v}")
        self._decr_ratio = v

    def get_incr_every_n_steps(self):
        return self._incr_every_n_steps

    def set_incr_every_n_steps(self, value):
        self._incr_every_n_steps = _count(value, "incr_every_n_steps", type(self).__name__)

    def get_decr_every_n_nan_or_inf(self):
        return self._decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, value):
        self._decr_every_n_nan_or_inf = _count(value, "decr_every_n_nan_or_inf", type(self).__name__)

    def scale(self, var):
        """The loss times the current scale (unchanged when disabled)."""
        if not self._enable:
            return var
        return var * self._scale

    def unscale_(self, optimizer):
        """Divides the gradients of the optimizer's parameters by the scale and
        records whether any is inf/NaN. Called by ``step`` if not before."""
        if not self._enable or id(optimizer) in self._unscaled:
            return
        inv = 1.0 / self._scale
        found = False
        for p in _params(optimizer):
            g = p.grad
            if g is None:
                continue
            _C._set_data_(g, g * inv)  # in place: the optimizer reads p.grad
            if not bool(_C.isfinite(g).all()):
                found = True
        self._found_inf = self._found_inf or found
        self._unscaled.add(id(optimizer))

    def step(self, optimizer):
        """Unscales and runs ``optimizer.step()`` unless a gradient overflowed."""
        if not self._enable:
            return optimizer.step()
        self.unscale_(optimizer)
        if not self._found_inf:
            optimizer.step()

    def minimize(self, optimizer, *args, **kwargs):
        """``step`` then ``update`` (Paddle's one-call form)."""
        self.step(optimizer)
        self.update()

    def update(self):
        """Adapts the scale after a step and resets the overflow flag."""
        if not self._enable:
            return
        if self._dynamic:
            if self._found_inf:
                self._good_steps = 0
                self._bad_steps += 1
                if self._bad_steps >= self._decr_every_n_nan_or_inf:
                    self._scale = max(self._scale * self._decr_ratio, 1.0)
                    self._bad_steps = 0
            else:
                self._bad_steps = 0
                self._good_steps += 1
                if self._good_steps >= self._incr_every_n_steps:
                    self._scale *= self._incr_ratio
                    self._good_steps = 0
        self._found_inf = False
        self._unscaled.clear()

    def state_dict(self):
        return {"scale": self._scale, "incr_ratio": self._incr_ratio, "decr_ratio": self._decr_ratio,
                "incr_every_n_steps": self._incr_every_n_steps,
                "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf, "incr_count": self._good_steps,
                "decr_count": self._bad_steps, "use_dynamic_loss_scaling": self._dynamic}

    def load_state_dict(self, state):
        if not isinstance(state, dict) or "scale" not in state:
            raise ValueError(f"[oar.amp.{type(self).__name__}.load_state_dict] expected a dict from state_dict()")
        self._scale = float(state["scale"])
        self._incr_ratio = float(state.get("incr_ratio", self._incr_ratio))
        self._decr_ratio = float(state.get("decr_ratio", self._decr_ratio))
        self._incr_every_n_steps = int(state.get("incr_every_n_steps", self._incr_every_n_steps))
        self._decr_every_n_nan_or_inf = int(state.get("decr_every_n_nan_or_inf", self._decr_every_n_nan_or_inf))
        self._good_steps = int(state.get("incr_count", 0))
        self._bad_steps = int(state.get("decr_count", 0))
        self._dynamic = bool(state.get("use_dynamic_loss_scaling", self._dynamic))

    set_state_dict = load_state_dict


class GradScaler(AmpScaler):
    """Paddle's ``paddle.amp.GradScaler`` (same as :class:`AmpScaler`).

    >>> import oar
    >>> model = oar.nn.Linear(2, 1)
    >>> opt = oar.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    >>> scaler = oar.amp.GradScaler(init_loss_scaling=1024.0)
    >>> with oar.amp.auto_cast(dtype="bfloat16"):
    ...     loss = model(oar.ones([4, 2])).astype("float32").mean()
    >>> scaler.scale(loss).backward()
    >>> scaler.step(opt)
    >>> scaler.update()
    >>> float(scaler.get_loss_scaling()) >= 1024.0
    True
    """

