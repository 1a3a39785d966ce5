"""Composable function transforms: grad, vjp, jvp, jacrev, jacfwd, hessian.

Each takes a function and returns a function. Reverse mode (grad, vjp,
jacrev) runs the function under the tape of oar.autograd; forward mode (jvp,
jacfwd) traces it and carries tangents through the program
(Note [forward mode] in src/autograd/transforms.h); Jacobians batch their
basis vectors with vmap instead of looping. All of them compose, to any
depth: ``hessian(f) = jacfwd(jacrev(f))``, ``vmap(grad(f))`` gives per-example
gradients.
"""
import contextlib
import functools

from .. import _C, _pytree
from ._vmap import trace_flat, unflatten_args, vmap

Tensor = _C.Tensor

_depth = [0]


@contextlib.contextmanager
def _level():
    """Marks a transform in progress: nested transforms keep their graphs differentiable."""
    _depth[0] += 1
    try:
        yield
    finally:
        _depth[0] -= 1


def _nested(leaves):
    return _depth[0] > 1 or _C._ir_is_tracing() or any(not t.stop_gradient for t in leaves)


def _argnums(argnums, nargs, api):
    many = isinstance(argnums, (tuple, list))
    nums = list(argnums) if many else [argnums]
    if not nums:
        raise ValueError(f"[{api}] argnums must not be empty")
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool):
            raise TypeError(f"[{api}] argnums must be an int or a tuple of ints, got {argnums!r}")
        if not -nargs <= a < nargs:
            raise ValueError(f"[{api}] argnums {a} is out of range for a function called with {nargs} "
                             f"positional argument(s)")
    return [a % nargs for a in nums], many


def fresh(t, api):
    """A stand-in for ``t`` that gradients are taken with respect to, still
    connected to ``t``'s own history when an enclosing transform tracks it."""
    if not isinstance(t, Tensor):
        raise TypeError(f"[{api}] the differentiated arguments must hold Tensors, got {type(t).__name__}")
    if not (t.is_floating_point() or t.is_complex()):
        raise TypeError(f"[{api}] can only differentiate with respect to floating or complex Tensors, "
                        f"got {t.dtype}")
    if t.stop_gradient:
        d = t.detach()
        d.stop_gradient = False
        return d
    return t.clone()


def grads_or_zeros(outs, ins, cots, create, retain=True):
    """The gradients of ``outs`` (cotangents ``cots``, or None for one-element
    outputs) with respect to ``ins``, zeros for inputs they do not reach and
    for outputs that track no gradient at all."""
    live = [k for k, o in enumerate(outs) if not o.stop_gradient]
    gs = [None] * len(ins)
    if live:
        from ..autograd import grad as _grad
        gs = _grad([outs[k] for k in live], ins, grad_outputs=None if cots is None else [cots[k] for k in live],
                   retain_graph=retain, create_graph=create, allow_unused=True)
    return [_zeros_for(g, x) for g, x in zip(gs, ins)]


def _flat(value):
    leaves = []
    return leaves, _pytree.flatten(value, leaves)


def _zeros_for(g, x):
    return g if g is not None else _C.zeros(list(x.shape), x.dtype)


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise ValueError(f"[{api}] with has_aux=True the function must return (output, aux), "
                         f"got {type(out).__name__}")
    return out[0], out[1]


def grad_and_value(func, argnums=0, has_aux=False):
    """Like :func:`grad`, returning ``(gradient, value)``, or
    ``(gradient, (value, aux))`` with has_aux=True.

    >>> import oar
    >>> g, v = oar.func.grad_and_value(lambda x: (x ** 3).sum())(oar.to_tensor([1.0, 2.0]))
    >>> g.numpy().tolist(), float(v)
    ([3.0, 12.0], 9.0)
    """
    api = "oar.func.grad"
    if not callable(func):
        raise TypeError(f"[{api}] func must be callable, got {type(func).__name__}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, many = _argnums(argnums, len(args), api)
        args = list(args)
        originals, stand_ins, layouts = [], [], {}
        with _level(), _grad_on():
            for a in nums:
                leaves, layout = _flat(args[a])
                if not leaves:
                    raise TypeError(f"[{api}] argument {a} holds no Tensor to differentiate")
                new = [fresh(t, api) for t in leaves]
                originals.append(leaves)
                stand_ins.append(new)
                layouts[a] = layout
                args[a] = _pytree.unflatten(layout, new)
            out = func(*args, **kwargs)
            value, aux = _split_aux(out, has_aux, api)
            if not isinstance(value, Tensor) or value.size != 1:
                raise ValueError(f"[{api}] the function must return a Tensor with one element, got "
                                 f"{type(value).__name__ if not isinstance(value, Tensor) else value.shape}")
            flat_in = [t for grp in stand_ins for t in grp]
            create = _nested([t for grp in originals for t in grp])
            gs = grads_or_zeros([value.reshape([])], flat_in, None, create, retain=create)
        res, k = [], 0
        for a, grp in zip(nums, stand_ins):
            res.append(_pytree.unflatten(layouts[a], gs[k:k + len(grp)]))
            k += len(grp)
        g = tuple(res) if many else res[0]
        return (g, (value, aux)) if has_aux else (g, value)

    return wrapper


@contextlib.contextmanager
def _grad_on():
    from ..autograd import enable_grad
    with enable_grad():
        yield


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function: ``grad(f)(x)`` is df/dx, shaped like
    x. argnums picks the differentiated positional argument(s) (a tuple gives
    a tuple of gradients); with has_aux=True, f returns (value, aux) and the
    result is (gradient, aux). Nests: ``grad(grad(f))`` is the second derivative.

    >>> import oar
    >>> f = lambda x: (x ** 3).sum()
    >>> oar.func.grad(f)(oar.to_tensor([1.0, 2.0])).numpy().tolist()
    [3.0, 12.0]
    >>> oar.func.grad(lambda x: oar.func.grad(f)(x).sum())(oar.to_tensor([1.0, 2.0])).numpy().tolist()
    [6.0, 12.0]
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, v = gv(*args, **kwargs)
        return (g, v[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """Runs ``func(*primals)`` and returns ``(output, vjp_fn)`` (and aux with
    has_aux=True); ``vjp_fn(cotangents)`` gives the vector-Jacobian products,
    one per primal, for cotangents shaped like the output. vjp_fn can be
    called many times (and batched with vmap).

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0, 3.0])
    >>> out, vjp_fn = oar.func.vjp(lambda x: x * x, x)
    >>> vjp_fn(oar.ones([3]))[0].numpy().tolist()
    [2.0, 4.0, 6.0]
    """
    api = "oar.func.vjp"
    if not callable(func):
        raise TypeError(f"[{api}] func must be callable, got {type(func).__name__}")
    originals, stand_ins, layouts = [], [], []
    with _level(), _grad_on():
        args = []
        for p in primals:
            leaves, layout = _flat(p)
            new = [fresh(t, api) for t in leaves]
            originals.extend(leaves)
            stand_ins.append(new)
            layouts.append(layout)
            args.append(_pytree.unflatten(layout, new))
        out = func(*args)
        value, aux = _split_aux(out, has_aux, api)
    out_leaves, out_layout = _flat(value)
    flat_in = [t for grp in stand_ins for t in grp]
    create = _nested(originals)

    def vjp_fn(cotangents):
        cts, ct_layout = _flat(cotangents)
        if len(cts) != len(out_leaves):
            raise ValueError(f"[{api}] vjp_fn expects {len(out_leaves)} cotangent Tensor(s) shaped like the "
                             f"output, got {len(cts)}")
        for k, (c, o) in enumerate(zip(cts, out_leaves)):
            if list(c.shape) != list(o.shape):
                raise ValueError(f"[{api}] cotangent {k} has shape {list(c.shape)}, the output has shape "
                                 f"{list(o.shape)}")
        with _level(), _grad_on():
            gs = grads_or_zeros(out_leaves, flat_in, cts, create or _nested(cts))
        res, k = [], 0
        for grp, layout in zip(stand_ins, layouts):
            res.append(_pytree.unflatten(layout, gs[k:k + len(grp)]))
            k += len(grp)
        return tuple(res)

    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jvp(func, primals, tangents, has_aux=False):
    """Forward mode: ``jvp(f, (x,), (t,))`` returns ``(f(x), J t)``, the
    Jacobian-vector product computed in one forward pass that carries a
    tangent beside each value (no reverse pass over the function). primals
    and tangents are tuples with one entry per positional argument, tangents
    shaped like their primals.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0])
    >>> out, t = oar.func.jvp(lambda x: oar.sin(x) * x, (x,), (oar.ones([2]),))
    >>> [round(v, 4) for v in t.numpy().tolist()]
    [1.3818, 0.077]
    """
    api = "oar.func.jvp"
    if not callable(func):
        raise TypeError(f"[{api}] func must be callable, got {type(func).__name__}")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(f"[{api}] primals and tangents must be tuples (one entry per argument), got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    if len(primals) != len(tangents):
        raise ValueError(f"[{api}] primals and tangents must have the same length, got {len(primals)} and "
                         f"{len(tangents)}")
    leaves, layouts, tans = [], [], []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        pl, layout = _flat(p)
        tl, tlayout = _flat(t)
        if len(pl) != len(tl) or not _pytree.same(layout, tlayout):
            raise ValueError(f"[{api}] tangents[{i}] must have the structure of primals[{i}]")
        for a, b in zip(pl, tl):
            if list(a.shape) != list(b.shape):
                raise ValueError(f"[{api}] a tangent of primals[{i}] has shape {list(b.shape)}, its primal has "
                                 f"shape {list(a.shape)}")
        leaves.extend(pl)
        tans.extend(tl)
        layouts.append(layout)

    with _level():
        prog, bindings, out_layout = trace_flat(func, leaves, lambda flat: unflatten_args(layouts, flat))
        res = _C._jvp_run(prog, leaves, tans, bindings)
    n = len(res) // 2
    out = _pytree.unflatten(out_layout, res[:n])
    tout = _pytree.unflatten(out_layout, res[n:])
    if has_aux:
        value, aux = _split_aux(out, True, api)
        return value, _split_aux(tout, True, api)[0], aux
    return out, tout


def _basis(n, shape, dtype):
    """The n standard basis vectors, each shaped ``shape``: a Tensor [n, *shape]."""
    from ..creation import eye
    return eye(n, dtype=dtype).reshape([n] + list(shape))


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def jacrev(func, argnums=0, has_aux=False):
    """The Jacobian by reverse mode: ``jacrev(f)(x)`` has shape
    ``f(x).shape + x.shape``; one vjp per output element, batched with vmap.

    >>> import oar
    >>> J = oar.func.jacrev(lambda x: x ** 2)(oar.to_tensor([1.0, 2.0]))
    >>> J.numpy().tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    api = "oar.func.jacrev"
    if not callable(func):
        raise TypeError(f"[{api}] func must be callable, got {type(func).__name__}")

    @functools.wraps(func)
    def wrapper(*args):
        nums, many = _argnums(argnums, len(args), api)

        def sub(*xs):
            full = list(args)
            for a, x in zip(nums, xs):
                full[a] = x
            return func(*full)

        res = vjp(sub, *[args[a] for a in nums], has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        if not isinstance(out, Tensor):
            raise TypeError(f"[{api}] the function must return a Tensor, got {type(out).__name__}")
        m = _numel(out.shape)
        rows = vmap(vjp_fn)(_basis(m, out.shape, out.dtype))
        jac = []
        for a, r in zip(nums, rows):
            if not isinstance(args[a], Tensor):
                raise TypeError(f"[{api}] argument {a} must be a Tensor, got {type(args[a]).__name__}")
            jac.append(r.reshape(list(out.shape) + list(args[a].shape)))
        j = tuple(jac) if many else jac[0]
        return (j, res[2]) if has_aux else j

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, randomness="error"):
    """The Jacobian by forward mode: ``jacfwd(f)(x)`` has shape
    ``f(x).shape + x.shape``; one jvp per input element, batched with vmap.
    Preferable to jacrev when the input is smaller than the output.

    >>> import oar
    >>> J = oar.func.jacfwd(lambda x: oar.stack([x[0] * x[1], x[0]]))(oar.to_tensor([2.0, 3.0]))
    >>> J.numpy().tolist()
    [[3.0, 2.0], [1.0, 0.0]]
    """
    api = "oar.func.jacfwd"
    if not callable(func):
        raise TypeError(f"[{api}] func must be callable, got {type(func).__name__}")

    @functools.wraps(func)
    def wrapper(*args):
        nums, many = _argnums(argnums, len(args), api)
        for a in nums:
            if not isinstance(args[a], Tensor):
                raise TypeError(f"[{api}] argument {a} must be a Tensor, got {type(args[a]).__name__}")
        jac, aux = [], None
        for a in nums:
            x = args[a]
            n = _numel(x.shape)

            def push(t, a=a):
                tangents = [_C.zeros(list(p.shape), p.dtype) if isinstance(p, Tensor) else p for p in args]
                tangents[a] = t
                res = jvp(func, tuple(args), tuple(tangents), has_aux=has_aux)
                return res[1]

            cols = vmap(push, randomness=randomness)(_basis(n, x.shape, x.dtype))  # [n, *out]
            out_shape = list(cols.shape[1:])
            m = _numel(out_shape)
            jac.append(cols.reshape([n, m]).t().reshape(out_shape + list(x.shape)))
        if has_aux:
            aux = jvp(func, tuple(args), tuple(_C.zeros(list(p.shape), p.dtype) for p in args), has_aux=True)[2]
        j = tuple(jac) if many else jac[0]
        return (j, aux) if has_aux else j

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar function, ``jacfwd(jacrev(f))``: shape
    ``x.shape + x.shape``.

    >>> import oar
    >>> H = oar.func.hessian(lambda x: (x ** 3).sum())(oar.to_tensor([1.0, 2.0]))
    >>> H.numpy().tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    if not callable(func):
        raise TypeError(f"[oar.func.hessian] func must be callable, got {type(func).__name__}")
    return jacfwd(jacrev(func, argnums), argnums)


def functional_call(module, parameters_and_buffers, args=(), kwargs=None):
    """Calls ``module(*args, **kwargs)`` with some parameters and buffers
    replaced by the given tensors (a dict from the names of
    ``named_parameters()`` / ``named_buffers()`` to Tensors, or a tuple of such
    dicts), restoring the module afterwards. With grad and vmap this
    differentiates and batches a Layer with respect to its weights.

    >>> import oar
    >>> lin = oar.nn.Linear(2, 1)
    >>> w = {"weight": oar.ones([2, 1]), "bias": oar.zeros([1])}
    >>> oar.func.functional_call(lin, w, (oar.to_tensor([[1.0, 2.0]]),)).numpy().tolist()
    [[3.0]]
    """
    api = "oar.func.functional_call"
    dicts = parameters_and_buffers if isinstance(parameters_and_buffers, (tuple, list)) else [parameters_and_buffers]
    merged = {}
    for d in dicts:
        if not isinstance(d, dict):
            raise TypeError(f"[{api}] parameters_and_buffers must be a dict or a tuple of dicts, got "
                            f"{type(d).__name__}")
        merged.update(d)
    if not isinstance(args, (tuple, list)):
        args = (args,)
    saved = []
    try:
        for name, t in merged.items():
            *path, leaf = name.split(".")
            owner = module
            for p in path:
                owner = owner._sub_layers.get(p) if hasattr(owner, "_sub_layers") else None
                if owner is None:
                    raise KeyError(f"[{api}] the module has no sublayer on the path of '{name}'")
            store = owner._parameters if leaf in owner._parameters else \
                owner._buffers if leaf in getattr(owner, "_buffers", {}) else None
            if store is None:
                raise KeyError(f"[{api}] the module has no parameter or buffer named '{name}'")
            saved.append((store, leaf, store[leaf]))
            store[leaf] = t
        return module(*args, **(kwargs or {}))
    finally:
        for store, leaf, old in reversed(saved):
            store[leaf] = old
