"""Autograd API: oar.grad, no_grad, enable_grad, set_grad_enabled."""
import functools

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
    """Runs backward from several tensors at once, accumulating into .grad."""
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
    """Context manager or decorator that turns gradient recording back on."""
    if callable(func):
        return _GradMode(True)(func)
    return _GradMode(True)


class set_grad_enabled(_GradMode):
    """Context manager that sets gradient recording on or off."""

    def __init__(self, mode):
        super().__init__(bool(mode))
        self.prev = _C.is_grad_enabled()
        _C.set_grad_enabled(bool(mode))

    def __enter__(self):
        return self


def is_grad_enabled():
    """True unless inside no_grad."""
    return _C.is_grad_enabled()
