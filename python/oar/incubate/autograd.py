"""Paddle's ``paddle.incubate.autograd``: vjp, jvp, Jacobian, Hessian, grad,
forward_grad and the prim switches.

Every gradient rule in oar is a composite of ops (what Paddle calls prim
mode), so ``enable_prim``/``disable_prim`` only record the setting, and
``grad``/``forward_grad`` work both in eager code and under to_static.

>>> import oar
>>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
>>> J = oar.incubate.autograd.Jacobian(lambda a, b: oar.matmul(a, b), [x, x])
>>> J.shape
[4, 8]
>>> J[0].numpy().tolist()
[1.0, 3.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0]
"""
from .. import _C
from ..autograd import Jacobian as _RowJacobian
from ..autograd import grad as _grad
from ..func._transforms import fresh, grads_or_zeros

__all__ = ["vjp", "jvp", "Jacobian", "Hessian", "grad", "forward_grad", "enable_prim", "disable_prim",
           "prim_enabled"]

Tensor = _C.Tensor
_prim = [False]


def enable_prim():
    """Records that prim mode is on (oar's gradient rules are always composites of ops).

    >>> import oar
    >>> oar.incubate.autograd.enable_prim(); oar.incubate.autograd.prim_enabled()
    True
    >>> oar.incubate.autograd.disable_prim()
    """
    _prim[0] = True


def disable_prim():
    """Records that prim mode is off; nothing else changes.

    >>> import oar
    >>> oar.incubate.autograd.disable_prim(); oar.incubate.autograd.prim_enabled()
    False
    """
    _prim[0] = False


def prim_enabled():
    """Whether enable_prim was called last (see enable_prim).

    >>> import oar
    >>> isinstance(oar.incubate.autograd.prim_enabled(), bool)
    True
    """
    return _prim[0]


def _seq(xs, api, what="xs"):
    many = isinstance(xs, (tuple, list))
    items = list(xs) if many else [xs]
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(f"[{api}] {what} must be a Tensor or a sequence of Tensors, got "
                            f"{type(t).__name__} at position {i}")
    return items, many


def _inputs(xs, api):
    """Stand-ins for xs that gradients are taken with respect to (oar.func's)."""
    items, many = _seq(xs, api)
    return [fresh(t, api) for t in items], many


def _call(func, stand_ins, api):
    if not callable(func):
        raise TypeError(f"[{api}] func must be callable, got {type(func).__name__}")
    from ..autograd import enable_grad
    with enable_grad():
        return func(*stand_ins)


def _match(vs, like, api, what):
    if vs is None:
        return [_C.full(t.shape, 1, t.dtype) for t in like]
    items, _ = _seq(vs, api, what)
    if len(items) != len(like):
        raise ValueError(f"[{api}] {what} must hold {len(like)} Tensor(s), got {len(items)}")
    for i, (v, t) in enumerate(zip(items, like)):
        if list(v.shape) != list(t.shape):
            raise ValueError(f"[{api}] {what}[{i}] has shape {list(v.shape)}, expected {list(t.shape)}")
    return items


def vjp(func, xs, v=None):
    """``(func(*xs), v^T J)``: the vector-Jacobian product at xs, v shaped like
    the outputs (ones by default). The result has xs's structure.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0])
    >>> out, g = oar.incubate.autograd.vjp(lambda a: a * a, x)
    >>> g.numpy().tolist()
    [2.0, 4.0]
    """
    api = "oar.incubate.autograd.vjp"
    stand_ins, many = _inputs(xs, api)
    out = _call(func, stand_ins, api)
    outs, _ = _seq(out, api, "the output of func")
    gs = grads_or_zeros(outs, stand_ins, _match(v, outs, api, "v"), create=True)
    return out, (gs if many else gs[0])


def jvp(func, xs, v=None):
    """``(func(*xs), J v)``: the Jacobian-vector product at xs, v shaped like
    xs (ones by default), by forward mode. The result has the outputs' structure.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0])
    >>> out, t = oar.incubate.autograd.jvp(lambda a: a * a, x, oar.to_tensor([1.0, 0.0]))
    >>> t.numpy().tolist()
    [2.0, 0.0]
    """
    from ..func import jvp as _jvp
    api = "oar.incubate.autograd.jvp"
    items, _ = _seq(xs, api)
    if not callable(func):
        raise TypeError(f"[{api}] func must be callable, got {type(func).__name__}")
    vs = _match(v, items, api, "v")
    return _jvp(func, tuple(items), tuple(vs))


def forward_grad(outputs, inputs, grad_inputs=None):
    """Forward-mode gradients of outputs already computed from inputs: J v for
    tangents ``grad_inputs`` shaped like inputs (ones by default), with the
    outputs' structure. The graph is already recorded, so J v is obtained from
    its gradient rules: since J^T u is linear in u, J v = d<J^T u, v>/du
    (two reverse sweeps, whatever the sizes).

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> y = x * x * x
    >>> oar.incubate.autograd.forward_grad(y, x).numpy().tolist()
    [3.0, 12.0]
    """
    api = "oar.incubate.autograd.forward_grad"
    outs, many_out = _seq(outputs, api, "outputs")
    ins, _ = _seq(inputs, api, "inputs")
    vs = _match(grad_inputs, ins, api, "grad_inputs")
    us = []
    for o in outs:
        u = _C.zeros(list(o.shape), o.dtype)
        u.stop_gradient = False
        us.append(u)
    from ..autograd import enable_grad
    with enable_grad():
        gs = _grad(outs, ins, grad_outputs=us, retain_graph=True, create_graph=True, allow_unused=True)
        pairs = [(g, v) for g, v in zip(gs, vs) if g is not None and not g.stop_gradient]
        if not pairs:
            res = [_C.zeros(list(o.shape), o.dtype) for o in outs]
        else:
            ts = _grad([g for g, _ in pairs], us, grad_outputs=[v for _, v in pairs], retain_graph=True,
                       create_graph=True, allow_unused=True)
            res = [t if t is not None else _C.zeros(list(o.shape), o.dtype) for t, o in zip(ts, outs)]
    return res if many_out else res[0]


def grad(outputs, inputs, grad_outputs=None):
    """Reverse-mode gradients of outputs with respect to inputs, differentiable
    again (higher order); the result has inputs' structure.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> oar.incubate.autograd.grad((x * x).sum(), x).numpy().tolist()
    [2.0, 4.0]
    """
    api = "oar.incubate.autograd.grad"
    outs, _ = _seq(outputs, api, "outputs")
    ins, many = _seq(inputs, api, "inputs")
    gs = grads_or_zeros(outs, ins, _match(grad_outputs, outs, api, "grad_outputs"), create=True)
    return gs if many else gs[0]


def _flat_cat(ts, batched):
    from .._manip import concat
    parts = [t.reshape([t.shape[0], -1]) if batched else t.reshape([-1]) for t in ts]
    return parts[0] if len(parts) == 1 else concat(parts, axis=-1)


class Jacobian(_RowJacobian):
    """The Jacobian of ``func`` at ``xs`` (Paddle's incubate semantics): inputs
    and outputs are each flattened and concatenated (after the batch axis
    with is_batched=True), giving shape [M, N] or [B, M, N]. Rows are
    evaluated when indexed and cached.

    >>> import oar
    >>> J = oar.incubate.autograd.Jacobian(lambda a: a * a, oar.to_tensor([1.0, 3.0]))
    >>> J[:].numpy().tolist()
    [[2.0, 0.0], [0.0, 6.0]]
    """

    _api = "oar.incubate.autograd.Jacobian"

    def __init__(self, func, xs, is_batched=False):
        items, _ = _seq(xs, self._api)
        if is_batched:
            for t in items:
                if t.ndim < 1 or t.shape[0] != items[0].shape[0]:
                    raise ValueError(f"[{self._api}] with is_batched=True every input needs the same batch "
                                     f"size on axis 0, got shapes {[list(t.shape) for t in items]}")
        xcat = _flat_cat([t.detach() for t in items], is_batched)
        xcat.stop_gradient = False
        pieces, k = [], 0
        for t in items:
            n = 1
            for d in (t.shape[1:] if is_batched else t.shape):
                n *= d
            part = xcat[:, k:k + n] if is_batched else xcat[k:k + n]
            pieces.append(part.reshape(t.shape))
            k += n
        out = _call(func, pieces, self._api)
        ys = self._outputs(out, xcat, is_batched)
        super().__init__(ys, xcat, is_batched, _api=self._api)

    def _outputs(self, out, xcat, is_batched):
        outs, _ = _seq(out, self._api, "the output of func")
        return _flat_cat(outs, is_batched)


class Hessian(Jacobian):
    """The Hessian of a scalar ``func`` (one value per example with
    is_batched=True) at ``xs``, inputs flattened and concatenated: shape
    [N, N] or [B, N, N], rows evaluated when indexed.

    >>> import oar
    >>> H = oar.incubate.autograd.Hessian(lambda a: (a * a * a).sum(), oar.to_tensor([1.0, 2.0]))
    >>> H[:].numpy().tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """

    _api = "oar.incubate.autograd.Hessian"

    def _outputs(self, out, xcat, is_batched):
        if not isinstance(out, Tensor):
            raise TypeError(f"[{self._api}] func must return a Tensor, got {type(out).__name__}")
        want = xcat.shape[0] if is_batched else 1
        if out.size != want:
            raise ValueError(f"[{self._api}] func must return one value{' per example' if is_batched else ''}, "
                             f"got shape {list(out.shape)}")
        g = _grad(out.sum(), xcat, create_graph=True, allow_unused=True)[0]
        return g if g is not None else _C.zeros(list(xcat.shape), xcat.dtype)
