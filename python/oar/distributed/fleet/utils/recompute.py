"""Activation recomputation (Paddle's ``fleet.utils.recompute``).

Note [recompute]: ``recompute(fn, *args)`` runs ``fn`` without keeping its
intermediate activations: only the inputs are saved. When the backward pass
reaches the call, ``fn`` runs again on the saved inputs with gradients on,
under the random-number state and autocast setting of the first run (so
dropout masks and dtypes repeat), and the gradients flow back through that
second run into the inputs and into the parameters ``fn`` uses. Memory of
the activations inside ``fn`` is traded for one more forward pass. It is an
``oar.autograd.PyLayer`` whose backward runs a nested backward pass.
"""
from .... import _C
from ...._random import get_rng_state, set_rng_state
from ....autograd import PyLayer, backward, enable_grad, is_grad_enabled
from ....nn import Layer

__all__ = ["recompute"]

_API = "oar.distributed.fleet.utils.recompute"


def _tensors(out):
    items = out if isinstance(out, (tuple, list)) else (out,)
    return [t for t in items if isinstance(t, _C.Tensor)]


class _Recompute(PyLayer):
    @staticmethod
    def forward(ctx, run, preserve, kwargs, n_params, *args):
        # The last n_params inputs are the parameters of a Layer `run`: inputs
        # only so that the output needs a gradient when no argument does.
        args = args[:len(args) - n_params]
        ctx.n_params = n_params
        ctx.run, ctx.kwargs = run, kwargs
        ctx.rng = get_rng_state() if preserve else None
        ctx.autocast = _C._get_autocast()
        ctx.layout = [isinstance(a, _C.Tensor) for a in args]
        ctx.others = [None if t else a for a, t in zip(args, ctx.layout)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, _C.Tensor)])
        return run(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        saved = list(ctx.saved_tensor())
        inputs = []
        for t in saved:
            d = t.detach()
            d.stop_gradient = t.stop_gradient
            inputs.append(d)
        it = iter(inputs)
        args = [next(it) if is_t else other for is_t, other in zip(ctx.layout, ctx.others)]
        outer_rng, outer_cast = get_rng_state(), _C._get_autocast()
        try:
            if ctx.rng is not None:
                set_rng_state(ctx.rng)
            _C._set_autocast(*ctx.autocast)
            with enable_grad():
                out = ctx.run(*args, **ctx.kwargs)
        finally:
            set_rng_state(outer_rng)
            _C._set_autocast(*outer_cast)
        pairs = [(o, g) for o, g in zip(_tensors(out), grads) if g is not None and not o.stop_gradient]
        if pairs:
            backward([o for o, _ in pairs], [g for _, g in pairs])
        # (The parameters got their gradients from the nested pass itself.)
        return tuple(None if d.stop_gradient else d.grad for d in inputs) + (None,) * ctx.n_params


def recompute(function, *args, **kwargs):
    """``function(*args, **kwargs)`` without keeping its activations for the
    backward pass: they are recomputed when needed (Note [recompute]).

    ``preserve_rng_state`` (default True) replays the random draws of the
    first run; ``use_reentrant`` is accepted (both forms behave the same
    here). Other keyword arguments go to ``function``. Without gradients
    (``no_grad``) it is a plain call.

    >>> import oar
    >>> from oar.distributed.fleet.utils import recompute
    >>> block = oar.nn.Sequential(oar.nn.Linear(3, 8), oar.nn.ReLU(), oar.nn.Linear(8, 2))
    >>> x = oar.ones([4, 3])
    >>> recompute(block, x).sum().backward()
    >>> block[0].weight.grad.shape
    [3, 8]
    """
    if not callable(function):
        raise TypeError(f"[{_API}] function must be callable, got {type(function).__name__}")
    preserve = kwargs.pop("preserve_rng_state", True)
    kwargs.pop("use_reentrant", None)
    offload = kwargs.pop("offload_indices", None)
    if offload:
        raise NotImplementedError(f"[{_API}] offload_indices is not supported: activations stay in memory")
    if not is_grad_enabled():
        return function(*args, **kwargs)
    params = []
    if not any(isinstance(a, _C.Tensor) and not a.stop_gradient for a in args):
        # No argument needs a gradient: the block's own parameters must carry
        # the output's. They are known for a Layer; for another callable the
        # block runs plainly (its activations are kept).
        if isinstance(function, Layer):
            params = [p for p in function.parameters() if not p.stop_gradient]
        if not params:
            return function(*args, **kwargs)
    return _Recompute.apply(function, bool(preserve), kwargs, len(params), *args, *params)
