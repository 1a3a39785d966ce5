"""Autograd API: oar.grad, backward, no_grad, enable_grad, set_grad_enabled, PyLayer, saved_tensors_hooks."""
import atexit
import functools
import itertools
import os

from . import _C


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, _C.Tensor):
        return [x]
    return list(x)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, no_grad_vars=None):
    """Gradients of outputs with respect to inputs, without touching .grad.

    With create_graph=True the result is itself differentiable (higher order).
    As in Paddle, the graph stays in place afterwards whatever retain_graph
    says (it is freed with the tensors that hold it), so grad can be taken
    over the same graph again, and Tensor.backward can still run through it.

    >>> import oar
    >>> x = oar.to_tensor(3.0, stop_gradient=False)
    >>> (g,) = oar.grad(x * x * x, x, create_graph=True)
    >>> float(g)
    27.0
    >>> (g2,) = oar.grad(g, x)
    >>> float(g2)
    18.0
    """
    single = isinstance(inputs, _C.Tensor)
    outs, ins = _as_list(outputs), _as_list(inputs)
    gos = _as_list(grad_outputs)
    if gos and len(gos) != len(outs):
        raise ValueError(f"[oar.grad] grad_outputs has {len(gos)} entries but outputs has {len(outs)}")
    gos = gos or [None] * len(outs)
    res = _C._grad(outs, ins, gos, True, bool(create_graph), bool(allow_unused))
    return res if not single else res


def backward(tensors, grad_tensors=None, retain_graph=False):
    """Runs backward from several tensors at once, accumulating into .grad.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> oar.autograd.backward([(x * x).sum(), x.sum()])
    >>> x.grad.numpy().tolist()
    [3.0, 5.0]
    """
    ts = _as_list(tensors)
    gs = _as_list(grad_tensors) or [None] * len(ts)
    _C._backward(ts, gs, bool(retain_graph))


class _GradMode:
    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C.set_grad_enabled(self.mode)
        return self

    def __exit__(self, *exc):
        _C.set_grad_enabled(self.prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _GradMode(self.mode):
                return fn(*args, **kwargs)
        return wrapper


def no_grad(func=None):
    """Context manager or decorator that turns off gradient recording.

    >>> import oar
    >>> x = oar.ones([2], dtype='float32')
    >>> x.stop_gradient = False
    >>> with oar.no_grad():
    ...     y = x * 2
    >>> y.stop_gradient
    True
    """
    if callable(func):
        return _GradMode(False)(func)
    return _GradMode(False)


def enable_grad(func=None):
    """Context manager or decorator that turns gradient recording back on.

    >>> import oar
    >>> x = oar.ones([2])
    >>> x.stop_gradient = False
    >>> with oar.no_grad():
    ...     with oar.enable_grad():
    ...         y = x * 2
    >>> y.stop_gradient
    False
    """
    if callable(func):
        return _GradMode(True)(func)
    return _GradMode(True)


class set_grad_enabled(_GradMode):
    """Context manager (or a plain call) that sets gradient recording on or off.

    >>> import oar
    >>> with oar.set_grad_enabled(False):
    ...     oar.is_grad_enabled()
    False
    >>> oar.is_grad_enabled()
    True
    """

    def __init__(self, mode):
        super().__init__(bool(mode))
        self.prev = _C.is_grad_enabled()
        _C.set_grad_enabled(bool(mode))

    def __enter__(self):
        return self


def is_grad_enabled():
    """True unless inside no_grad (or set_grad_enabled(False)).

    >>> import oar
    >>> oar.is_grad_enabled()
    True
    """
    return _C.is_grad_enabled()


# ---------------------------------------------------------------- PyLayer (Note [PyLayer], python/bind/pylayer.cpp)

class PyLayerContext:
    """What a PyLayer's forward hands to its backward: tensors saved with
    ``save_for_backward`` and any attributes set on it.

    >>> import oar
    >>> class Scale(oar.autograd.PyLayer):
    ...     @staticmethod
    ...     def forward(ctx, x, k):
    ...         ctx.k = k  # any attribute
    ...         return x * k
    ...     @staticmethod
    ...     def backward(ctx, dy):
    ...         return dy * ctx.k
    >>> x = oar.to_tensor([1.0], stop_gradient=False)
    >>> Scale.apply(x, 3.0).backward()
    >>> x.grad.numpy().tolist()
    [3.0]
    """

    def __init__(self):
        self._to_save = None
        self._saved = None
        self._non_differentiable = ()
        self._not_inplace = ()
        self._materialize = True

    def save_for_backward(self, *tensors):
        """Saves tensors (or None) for backward; read them with ``saved_tensor()``."""
        for t in tensors:
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError(f"[oar.autograd.PyLayerContext.save_for_backward] expected Tensors or None, "
                                f"got a {type(t).__name__}")
        self._to_save = tensors

    def saved_tensor(self):
        """The tensors saved in forward, in order (inside backward)."""
        if self._saved is None:
            raise RuntimeError("[oar.autograd.PyLayerContext.saved_tensor] saved tensors are available inside "
                               "backward only (and only if forward called save_for_backward)")
        return list(self._saved)

    def mark_non_differentiable(self, *tensors):
        """Marks outputs of forward that have no gradient (they stop gradient)."""
        self._non_differentiable = tensors

    def mark_not_inplace(self, *tensors):
        """Marks inputs that forward returns unchanged: the output is a new
        tensor aliasing the input (oar always does this, so it is accepted
        for compatibility)."""
        self._not_inplace = tensors

    def set_materialize_grads(self, value):
        """Whether backward gets zeros (True, the default) or None for outputs
        that received no gradient."""
        self._materialize = bool(value)

    def set_grad_in_dtype_consistent(self, flag):
        """Accepted for compatibility: gradients always have their input's dtype
        when backward returns it so."""


class PyLayer:
    """A differentiable function with a forward and backward written in Python.

    Subclass it with two static methods, ``forward(ctx, *args, **kwargs)``
    and ``backward(ctx, *grads)`` (one gradient per tensor output; it returns
    one gradient, or None, per tensor input of forward), and call
    ``apply``. Forward runs without recording; backward runs as any
    gradient rule does, so if it is made of differentiable ops, gradients of
    gradients work (``oar.grad(..., create_graph=True)``).

    >>> import oar
    >>> class Cube(oar.autograd.PyLayer):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x * x
    ...     @staticmethod
    ...     def backward(ctx, dy):
    ...         (x,) = ctx.saved_tensor()
    ...         return dy * 3 * x * x
    >>> x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> Cube.apply(x).sum().backward()
    >>> x.grad.numpy().tolist()
    [3.0, 12.0]
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(f"[oar.autograd.PyLayer.forward] a PyLayer subclass must define forward")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError(f"[oar.autograd.PyLayer.backward] a PyLayer subclass must define backward")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs forward and records the call for backward."""
        if cls.forward is PyLayer.forward or cls.backward is PyLayer.backward:
            raise NotImplementedError(f"[{cls.__name__}.apply] a PyLayer subclass must define both forward and "
                                      "backward as static methods")
        return _apply(cls, args, kwargs, None)[0]


def _slots(args, kwargs):
    """Where the tensor arguments are: ("a", position) or ("k", name), in order."""
    return [("a", i) for i, a in enumerate(args) if isinstance(a, _C.Tensor)] + \
        [("k", k) for k, v in kwargs.items() if isinstance(v, _C.Tensor)]


def _fill(args, kwargs, slots, tensors):
    args, kwargs = list(args), dict(kwargs)
    for (kind, key), t in zip(slots, tensors):
        if kind == "a":
            args[key] = t
        else:
            kwargs[key] = t
    return args, kwargs


def _forward(cls, args, kwargs, inputs):
    """Runs the user's forward without recording: (ctx, its result, the
    result's tensors and their positions, the tensors it saved, the saved
    intermediates, i.e. the saved tensors that are neither inputs nor outputs)."""
    ctx = PyLayerContext()
    with _GradMode(False):
        out = cls.forward(ctx, *args, **kwargs)
    outs = [out] if isinstance(out, _C.Tensor) else list(out) if isinstance(out, (tuple, list)) else [out]
    pos = [i for i, o in enumerate(outs) if isinstance(o, _C.Tensor)]
    tensors = [outs[i] for i in pos]
    saved = list(ctx._to_save or ())
    ctx._to_save = None
    known = {id(t) for t in list(inputs) + tensors}
    hidden = []
    for t in saved:
        if t is not None and id(t) not in known:
            known.add(id(t))
            hidden.append(t)
    return ctx, out, outs, pos, tensors, saved, hidden


# Note [PyLayer in programs]: the calls traced into programs, by token.
_TRACED_CALLS = {}
_tokens = itertools.count(int.from_bytes(os.urandom(6), "little") << 15)


def _apply(cls, args, kwargs, token):
    """PyLayer.apply: (the forward's result with recorded outputs, those
    output tensors, the saved intermediates). While tracing, the call is
    recorded as a py_layer op whose region holds the forward's ops."""
    slots = _slots(args, kwargs)
    inputs = [args[k] if kind == "a" else kwargs[k] for kind, k in slots]
    if _C._ir_is_tracing():
        if token is None:
            token = next(_tokens)
            blank = [None] * len(slots)
            _TRACED_CALLS[token] = (cls, *_fill(args, kwargs, slots, blank), slots)
        run = {}

        def traced_forward(xs):
            a, k = _fill(args, kwargs, slots, xs)
            run["xs"] = xs
            run["r"] = _forward(cls, a, k, xs)
            _, _, _, _, tensors, _, hidden = run["r"]
            return tensors + hidden

        results = _C._trace_py_layer(token, inputs, traced_forward)
        ctx, out, outs, pos, tensors, saved, hidden = run["r"]
        n = len(tensors)
        # The region's tensors are closed: everything the caller and the
        # backward see is the op's results or the call's own inputs.
        rename = {id(x): t for x, t in zip(run["xs"], inputs)}
        rename.update({id(x): t for x, t in zip(tensors + hidden, results)})
        nondiff = {id(rename.get(id(t), t)) for t in ctx._non_differentiable}
        tensors, hidden = results[:n], results[n:]
        saved = [None if t is None else rename.get(id(t), t) for t in saved]
    else:
        ctx, out, outs, pos, tensors, saved, hidden = _forward(cls, args, kwargs, inputs)
        nondiff = {id(t) for t in ctx._non_differentiable}
    if _C.is_grad_enabled() and any(not t.stop_gradient for t in inputs):
        differentiable = [id(t) not in nondiff and (t.dtype.is_floating_point or t.dtype.is_complex)
                          for t in tensors]

        def run_backward(saved_tensors, grads):
            ctx._saved = saved_tensors
            try:
                return cls.backward(ctx, *grads)
            finally:
                ctx._saved = None

        tensors = _C._pylayer_record(cls.__name__, inputs, tensors, differentiable, saved, run_backward,
                                     ctx._materialize)
    for i, t in zip(pos, tensors):
        outs[i] = t
    if isinstance(out, _C.Tensor):
        result = outs[0]
    elif isinstance(out, (tuple, list)):
        result = type(out)(outs)
    else:
        result = out
    return result, list(tensors), list(hidden)


def _run_traced_call(token, inputs):
    """The executor's runner for py_layer ops (Note [PyLayer in programs]):
    every result of the op, or None for a token this process did not trace."""
    entry = _TRACED_CALLS.get(token)
    if entry is None:
        return None
    cls, args, kwargs, slots = entry
    args, kwargs = _fill(args, kwargs, slots, inputs)
    _, tensors, hidden = _apply(cls, args, kwargs, token)
    return tensors + hidden


_C._set_py_layer_runner(_run_traced_call)


Function = PyLayer
# Graphs and programs alive at exit hold Python callables (Note [PyLayer]).
atexit.register(_C._pylayer_release_all)
atexit.register(_C._set_py_layer_runner, None)
atexit.register(_TRACED_CALLS.clear)


class saved_tensors_hooks:
    """Context manager: inside it, every tensor an op saves for backward goes
    through ``pack_hook(tensor)`` and the op keeps only what it returns;
    backward gets the tensor back from ``unpack_hook(packed)``
    (Note [saved tensors hooks]). Use it to move saved activations elsewhere
    (host memory, disk, a compressed form) between forward and backward.

    >>> import oar
    >>> packed = []
    >>> def pack(t):
    ...     packed.append(t.shape)
    ...     return t.numpy()
    >>> def unpack(a):
    ...     return oar.to_tensor(a)
    >>> x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> with oar.autograd.saved_tensors_hooks(pack, unpack):
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> x.grad.numpy().tolist(), len(packed) > 0
    ([2.0, 4.0], True)
    """

    def __init__(self, pack_hook, unpack_hook):
        for name, h in (("pack_hook", pack_hook), ("unpack_hook", unpack_hook)):
            if not callable(h):
                raise TypeError(f"[oar.autograd.saved_tensors_hooks] {name} must be callable, got "
                                f"{type(h).__name__}")
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        _C._push_saved_tensor_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _C._pop_saved_tensor_hooks()
        return False


# ---------------------------------------------------------------- jacobian, hessian

class Jacobian:
    """The Jacobian of ``ys`` with respect to ``xs``, evaluated when indexed
    (``J[:]``, ``J[i]``, ``J[i, j:k]``): shape [M, N] for ys of M elements
    and xs of N (a 0-D side drops its axis), or [B, M, N] with a batch axis
    0. Entries are differentiable (computed with create_graph=True).

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> J = oar.autograd.Jacobian(x * x, x)
    >>> J[0].numpy().tolist(), J.shape
    ([2.0, 0.0], [2, 2])
    """

    def __init__(self, ys, xs, is_batched=False, _api="oar.autograd.jacobian"):
        for name, t in (("ys", ys), ("xs", xs)):
            if not isinstance(t, _C.Tensor):
                raise TypeError(f"[{_api}] {name} must be a Tensor or a tuple of Tensors, got {type(t).__name__}")
            want = (2,) if is_batched else (0, 1)
            if t.ndim not in want:
                raise ValueError(f"[{_api}] {name}.ndim must be {' or '.join(map(str, want))} "
                                 f"{'with batch_axis=0' if is_batched else 'when batch_axis is None'}, "
                                 f"got {t.ndim}")
        if is_batched and ys.shape[0] != xs.shape[0]:
            raise ValueError(f"[{_api}] ys and xs must have the same batch size, got {ys.shape[0]} and {xs.shape[0]}")
        self._ys, self._xs, self._batched = ys, xs, bool(is_batched)
        self._rows = {}
        if is_batched:
            self.shape = [ys.shape[0], ys.shape[1], xs.shape[1]]
        else:
            self.shape = [d for t in (ys, xs) for d in t.shape]

    def _row(self, i):
        """Row i of the Jacobian (the gradient of output element i), computed once."""
        cached = self._rows.get(i)
        if cached is not None:
            return cached
        from .creation import zeros

        ys, xs = self._ys, self._xs
        yi = ys if ys.ndim == 0 else ys[:, i] if self._batched else ys[i]
        (g,) = grad(yi, xs, grad_outputs=None if yi.ndim == 0 else _C.full(yi.shape, 1, yi.dtype),
                    retain_graph=True, create_graph=True, allow_unused=True)
        g = g if g is not None else zeros(xs.shape, dtype=xs.dtype)
        self._rows[i] = g
        return g

    def __getitem__(self, index):
        """Evaluates only the rows the index selects (rows are cached)."""
        from ._manip import stack

        api = "oar.autograd.Jacobian"
        if self._ys.ndim == 0:
            return self._row(0)[index]
        idx = index if isinstance(index, tuple) else (index,)
        if any(i is Ellipsis for i in idx):
            raise IndexError(f"[{api}] Ellipsis indexing is not supported; index each axis with ints or slices")
        pos = 1 if self._batched else 0  # the row axis
        m = self.shape[pos]
        idx = idx + (slice(None),) * (pos + 1 - len(idx)) if len(idx) <= pos else idx
        sel = idx[pos]
        if isinstance(sel, bool) or not isinstance(sel, (int, slice)):
            raise IndexError(f"[{api}] the row index must be an int or a slice, got {type(sel).__name__}")
        if isinstance(sel, int):
            if not -m <= sel < m:
                raise IndexError(f"[{api}] row {sel} is out of range for {m} rows")
            row = self._row(sel % m)  # [N] or [B, N]
            rest = idx[:pos] + idx[pos + 1:]
            return row[rest] if rest else row
        rows = [self._row(r) for r in range(m)[sel]]
        if not rows:
            raise IndexError(f"[{api}] the row slice {sel} selects no rows")
        mat = stack(rows, axis=pos)
        return mat[idx[:pos] + (slice(None),) + idx[pos + 1:]]


class Hessian(Jacobian):
    """The Hessian of a scalar ``ys`` (one per sample with a batch axis 0)
    with respect to ``xs``, evaluated when indexed: shape [N, N] or [B, N, N].

    >>> import oar
    >>> x = oar.to_tensor([1.0, 3.0], stop_gradient=False)
    >>> oar.autograd.Hessian((x * x).sum(), x)[:].numpy().tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """

    def __init__(self, ys, xs, is_batched=False, _api="oar.autograd.hessian", _gx=None):
        if _gx is None:
            _gx = _first_derivative(ys, (xs,), is_batched, _api)[0]
        super().__init__(_gx, xs, is_batched, _api)


def _check_batch_axis(batch_axis, api):
    if batch_axis not in (None, 0):
        raise ValueError(f"[{api}] batch_axis must be None or 0, got {batch_axis!r}")
    return batch_axis == 0


def _first_derivative(ys, xs, batched, api):
    if not isinstance(ys, _C.Tensor):
        raise TypeError(f"[{api}] ys must be a Tensor, got {type(ys).__name__}")
    want = ys.shape[0] if batched and ys.ndim else 1
    if (ys.size != want) or (batched and ys.ndim != 1):
        raise ValueError(f"[{api}] ys must hold one value{' per sample (shape [B])' if batched else ''}, "
                         f"got shape {ys.shape}")
    total = ys.sum() if batched else ys.reshape([])
    gs = grad(total, list(xs), create_graph=True, allow_unused=True)
    from .creation import zeros
    return [g if g is not None else zeros(x.shape, dtype=x.dtype) for g, x in zip(gs, xs)]


def jacobian(ys, xs, batch_axis=None):
    """The Jacobian of ys with respect to xs, as Paddle's paddle.autograd.jacobian:
    a Jacobian (evaluated when indexed) for a Tensor ys and xs, a tuple of
    them when one is a tuple, and a tuple of tuples (one per y) when both are.
    Without a batch axis, ys and xs are 0-D or 1-D; with batch_axis=0 they are
    [B, M] and [B, N] and the Jacobian is [B, M, N].

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    >>> J = oar.autograd.jacobian(x * x, x)
    >>> J.shape, J[:].numpy().tolist()
    ([3, 3], [[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 6.0]])
    """
    api = "oar.autograd.jacobian"
    batched = _check_batch_axis(batch_axis, api)
    y_many, x_many = isinstance(ys, (tuple, list)), isinstance(xs, (tuple, list))
    ys_, xs_ = (list(ys) if y_many else [ys]), (list(xs) if x_many else [xs])
    out = [tuple(Jacobian(y, x, batched, api) for x in xs_) if x_many else Jacobian(y, xs_[0], batched, api)
           for y in ys_]
    return tuple(out) if y_many else out[0]


def hessian(ys, xs, batch_axis=None):
    """The Hessian of a scalar ys (one value per sample with batch_axis=0)
    with respect to xs, as Paddle's paddle.autograd.hessian: a Hessian
    (evaluated when indexed) for a Tensor xs, a tuple of tuples of them (the
    blocks d2y/dxi dxj) for a tuple xs.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> H = oar.autograd.hessian((x * x * x).sum(), x)
    >>> H[:].numpy().tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    api = "oar.autograd.hessian"
    batched = _check_batch_axis(batch_axis, api)
    many = isinstance(xs, (tuple, list))
    xs_ = list(xs) if many else [xs]
    gs = _first_derivative(ys, xs_, batched, api)
    if not many:
        return Hessian(ys, xs_[0], batched, api, _gx=gs[0])
    return tuple(tuple(Jacobian(g, x, batched, api) for x in xs_) for g in gs)
