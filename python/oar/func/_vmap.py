"""oar.vmap: a function over one example, run over a batch in one pass.

The function is traced once on one example (an ir Program), and the program
runs over the whole batch with a batching rule per op (Note [vmap] in
src/autograd/transforms.h). Each op runs once for the batch: no Python loop.
The batched run goes through dispatch like eager code, so reverse-mode
autograd, tracing and the other transforms apply to it.
"""
import functools

from .. import _C, _ir, _pytree

Tensor = _C.Tensor

_RANDOMNESS = ("error", "different", "same")


def _moveaxis(t, src, dst):
    if src == dst:
        return t
    perm = list(range(t.ndim))
    perm.insert(dst, perm.pop(src))
    return t.transpose(perm)


def _norm_dim(d, ndim, what):
    if not isinstance(d, int) or isinstance(d, bool):
        raise TypeError(f"[oar.vmap] {what} must be an int or None, got {type(d).__name__}")
    if not -ndim <= d < ndim:
        raise ValueError(f"[oar.vmap] {what} {d} is out of range for a tensor of rank {ndim}")
    return d % ndim


def _per_arg(spec, n, what):
    """in_dims / out_dims as one entry per argument (or output)."""
    if spec is None or isinstance(spec, int):
        return [spec] * n
    if isinstance(spec, (tuple, list)):
        if len(spec) != n:
            raise ValueError(f"[oar.vmap] {what} has {len(spec)} entries, expected one per "
                             f"{'positional argument' if what == 'in_dims' else 'output'} ({n})")
        return list(spec)
    raise TypeError(f"[oar.vmap] {what} must be an int, None or a tuple of them, got {type(spec).__name__}")


def unflatten_args(layouts, flat):
    """The positional arguments whose tensors were flattened with these layouts, rebuilt from ``flat``."""
    out, k = [], 0
    for lay in layouts:
        n = _pytree.count(lay)
        out.append(_pytree.unflatten(lay, flat[k:k + n]))
        k += n
    return out


def trace_flat(fn, example_leaves, rebuild):
    """Traces ``fn(*rebuild(example_leaves))``; returns (program, bindings, output layout).

    Dead ops are dropped: a trace of a transform also records the ops of the
    transform's own inner trace, which its result does not read."""
    prog, _ = _ir.trace(lambda *xs: fn(*rebuild(xs)), example_leaves)
    prog.optimize(dce=True, cse=False, fold=False)
    return prog._prog, prog._bindings, prog._out_kind


def _run(func, args, in_dims, out_dims, randomness, chunk_size):
    specs = _per_arg(in_dims, len(args), "in_dims")
    leaves, dims = [], []
    layouts = []
    for i, (a, d) in enumerate(zip(args, specs)):
        mine = []
        layouts.append(_pytree.flatten(a, mine))
        if d is not None and not mine:
            raise ValueError(f"[oar.vmap] in_dims[{i}] is {d} but argument {i} holds no Tensor; "
                             f"use None for arguments that are not mapped")
        for t in mine:
            if d is not None and t.ndim == 0:
                raise ValueError(f"[oar.vmap] argument {i} holds a 0-D Tensor, which has no axis to map over "
                                 f"(in_dims {d}); use None")
            leaves.append(t)
            dims.append(None if d is None else _norm_dim(d, t.ndim, f"in_dims[{i}]"))
    size = None
    for t, d in zip(leaves, dims):
        if d is not None:
            n = t.shape[d]
            if size is None:
                size = n
            elif n != size:
                raise ValueError(f"[oar.vmap] the mapped axes have different sizes: {size} and {n}; every "
                                 f"mapped input must have the same batch size")
    if size is None:
        raise ValueError("[oar.vmap] no input is mapped: give at least one Tensor argument an int in_dims")
    phys = [t if d is None else _moveaxis(t, d, 0) for t, d in zip(leaves, dims)]
    batched = [d is not None for d in dims]
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"[oar.vmap] chunk_size must be a positive int or None, got {chunk_size!r}")

    def rebuild(flat):
        return unflatten_args(layouts, flat)

    examples = [p[0] if b else p for p, b in zip(phys, batched)]
    prog, bindings, out_layout = trace_flat(func, examples, rebuild)
    chunks = [(0, size)] if chunk_size is None else [(s, min(size, s + chunk_size))
                                                     for s in range(0, size, chunk_size)]
    pieces = []
    for s, e in chunks:
        part = [p[s:e] if b and (s, e) != (0, size) else p for p, b in zip(phys, batched)]
        outs, flags, nops, nfall, names = _C._vmap_run(prog, part, batched, bindings, e - s, randomness)
        _STATS.update(ops=nops, fallbacks=nfall, fallback_ops=list(names))
        pieces.append([o if f else o.unsqueeze(0).expand([e - s] + list(o.shape))
                       for o, f in zip(outs, flags)])
    if len(pieces) == 1:
        flat = pieces[0]
    else:
        from .._manip import concat
        flat = [concat([p[k] for p in pieces], axis=0) for k in range(len(pieces[0]))]
    odims = _per_arg(out_dims, len(flat), "out_dims")
    res = []
    for k, (t, d) in enumerate(zip(flat, odims)):
        if d is None:
            raise ValueError(f"[oar.vmap] out_dims[{k}] is None, but output {k} varies over the batch")
        res.append(_moveaxis(t, 0, _norm_dim(d, t.ndim, f"out_dims[{k}]")))
    return _pytree.unflatten(out_layout, res)


_STATS = {"ops": 0, "fallbacks": 0, "fallback_ops": []}


def vmap_stats():
    """What the last vmap call ran: ``{"ops": n, "fallbacks": k, "fallback_ops": names}``,
    k being the ops that had no batching rule for their inputs and ran once
    per example (correct, but slower), and names the ops they were.

    >>> import oar
    >>> _ = oar.vmap(lambda x: (x * x).sum())(oar.ones([4, 3]))
    >>> oar.func.vmap_stats()["fallbacks"]
    0
    """
    return dict(_STATS)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorizes ``func`` over an axis of its inputs: ``vmap(f)(xs)`` equals
    stacking ``f(x)`` for each ``x`` in ``xs`` along axis 0, computed in one
    batched pass (each op runs once for the whole batch through its batching
    rule). Composes with itself and with grad, vjp, jvp, jacrev and jacfwd:
    ``vmap(grad(loss))`` gives per-example gradients.

    Args:
        func: a function of Tensors (in lists, tuples, dicts) returning
            Tensors. It is traced on one example, so its Python control flow
            must not depend on tensor values (use ``oar.where``).
        in_dims: the mapped axis of each positional argument (an int for all
            of them, or a tuple with an int or None per argument; None passes
            the argument unchanged to every example).
        out_dims: where the batch axis goes in each output (int or tuple).
        randomness: "error" (random ops raise), "different" (independent
            draws per example) or "same" (one draw shared by all examples).
        chunk_size: run the batch in chunks of this many examples, to bound memory.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> w = oar.to_tensor([[1.0, 0.0], [0.0, 2.0]])
    >>> oar.vmap(lambda v: oar.matmul(w, v))(x).numpy().tolist()
    [[1.0, 4.0], [3.0, 8.0], [5.0, 12.0]]
    >>> oar.vmap(oar.dot, in_dims=(0, None))(x, oar.to_tensor([1.0, 1.0])).numpy().tolist()
    [3.0, 7.0, 11.0]
    """
    if not callable(func):
        raise TypeError(f"[oar.vmap] func must be callable, got {type(func).__name__}")
    if randomness not in _RANDOMNESS:
        raise ValueError(f"[oar.vmap] randomness must be one of {_RANDOMNESS}, got {randomness!r}")

    @functools.wraps(func)
    def batched(*args, **kwargs):
        if kwargs:
            f = functools.partial(func, **kwargs)
        else:
            f = func
        return _run(f, args, in_dims, out_dims, randomness, chunk_size)

    return batched
