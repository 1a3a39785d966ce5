"""``Executor(place).run(program, feed, fetch_list)``: runs static programs (see Note [static mode]).

A run prunes the recorded program to what its fetches (and the program's
training steps) need, checks the feeds against the ``data`` declarations,
and caches what it built per (program version, feed dtypes and shapes,
fetch list). Runs that need gradients trace once per such key a joint
program: the forward program followed by the gradient rules of its ops, whose
outputs are the fetched values and the gradients. After the run, each
``minimize`` of the program applies its optimizer's update to the parameters,
which live outside the program.
"""
import concurrent.futures

import numpy as np

from .. import _C
from .program import Program, _api_error, _Plan, _restore_buffers, _state, default_main_program

__all__ = ["Executor", "global_scope", "scope_guard", "Scope"]

Tensor = _C.Tensor

_worker = []


def _on_worker(fn, *args):
    """Runs fn on the executor's thread, where no static program records (the tracer stack is per thread)."""
    if not _worker:
        _worker.append(concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="oar-static"))
    return _worker[0].submit(fn, *args).result()


class Scope:
    """Paddle's variable scope. oar keeps parameters in the layers that own them, so it holds nothing.

    >>> import oar
    >>> isinstance(oar.static.global_scope(), oar.static.Scope)
    True
    """

    def find_var(self, name):
        return None


_global_scope = Scope()


def global_scope():
    """The global Scope (empty: parameters live in their layers; see Scope).

    >>> import oar
    >>> oar.static.global_scope() is oar.static.global_scope()
    True
    """
    return _global_scope


class scope_guard:
    """Accepted for Paddle compatibility (see Scope).

    >>> import oar
    >>> with oar.static.scope_guard(oar.static.Scope()):
    ...     pass
    """

    def __init__(self, scope):
        self.scope = scope

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _dtype_name(dt):
    return str(dt).split(".")[-1]


class Executor:
    """Runs static programs: ``exe.run(program, feed={name: array}, fetch_list=[values])``.

    ``place`` is accepted for Paddle compatibility; programs run on the
    device of their parameters and feeds.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = (x * x).sum(axis=1)
    >>> exe = oar.static.Executor()
    >>> exe.run(oar.static.default_startup_program())
    []
    >>> exe.run(feed={"x": np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)}, fetch_list=[y])[0].tolist()
    [5.0, 25.0]
    >>> oar.disable_static()
    """

    def __init__(self, place=None):
        self.place = place

    def close(self):
        """Nothing to release: compiled programs are cached by their Program."""

    def run(self, program=None, feed=None, fetch_list=None, feed_var_name="feed", fetch_var_name="fetch",
            scope=None, return_numpy=True, use_program_cache=True):
        if not _state.static:
            raise _api_error("Executor.run", "is only available in static mode; call oar.enable_static() first",
                             RuntimeError)
        if program is None:
            program = default_main_program()
        strategy = getattr(program, "_build_strategy", None)
        program = getattr(program, "_compiled_program", program)  # a CompiledProgram runs its program
        if not isinstance(program, Program):
            raise _api_error("Executor.run", f"program must be an oar.static.Program, got {type(program).__name__}",
                             TypeError)
        feed = {} if feed is None else feed
        if not isinstance(feed, dict):
            raise _api_error("Executor.run", f"feed must be a dict of data name to value, got {type(feed).__name__}",
                             TypeError)
        root = program._root()
        if root._inference is not None:
            return root._inference.run(feed, fetch_list, return_numpy)
        fetches = self._fetches(program, fetch_list)
        for k in feed:
            if k not in root._data:
                raise _api_error("Executor.run", f"feed names '{k}', which is not an input (oar.static.data) of the "
                                                 f"program; its inputs are {sorted(root._data)}")
        if not fetches and not program._minimize and not root._hooks:
            # Nothing to compute (a startup program: parameters were initialised when their layers were made).
            return []
        plan_key = (program._version, tuple(id(t) for t in fetches), id(strategy))
        plan = program._cache.get(plan_key)
        if plan is None:
            plan = _Plan(program, fetches, "Executor.run")
            plan.build_strategy = strategy
            program._cache = {k: v for k, v in program._cache.items() if k[0] == program._version}
            program._cache[plan_key] = plan
        arrays = [self._feed_value(root, name, feed) for name in plan.inputs]
        _restore_buffers()
        results = _on_worker(_run_plan, plan, arrays)
        if return_numpy:
            return [r.numpy() for r in results]
        return results

    @staticmethod
    def _fetches(program, fetch_list):
        if fetch_list is None:
            return []
        if not isinstance(fetch_list, (list, tuple)):
            fetch_list = [fetch_list]
        root = program._root()
        out = []
        for f in fetch_list:
            if isinstance(f, str):
                if f in root._data:
                    out.append(root._data[f][0])
                    continue
                raise _api_error("Executor.run", f"fetch_list names '{f}', which is not an input of the program; "
                                                 f"fetch values by the tensors the program code returned")
            if not isinstance(f, Tensor):
                raise _api_error("Executor.run", f"fetch_list entries must be Tensors or data names, "
                                                 f"got {type(f).__name__}", TypeError)
            out.append(f)
        return out

    @staticmethod
    def _feed_value(root, name, feed):
        if name not in feed:
            raise _api_error("Executor.run", f"feed has no value for the input '{name}', which the fetched values "
                                             f"need")
        _, dims, dt = root._data[name]
        return _check_feed(name, feed[name], _dtype_name(dt), dims)


def _check_feed(name, v, want, dims):
    """The feed value `v` of input `name`, checked against its dtype name and dims (-1: any size)."""
    if isinstance(v, Tensor):
        got, shape = _dtype_name(v.dtype), list(v.shape)
    else:
        if not isinstance(v, np.ndarray):
            v = np.asarray(v, dtype=want if want != "bfloat16" else None)  # Python lists take the input's dtype
        got, shape = v.dtype.name, list(v.shape)
    if got != want:
        raise _api_error("Executor.run", f"feed '{name}' has dtype {got}, but the input was declared "
                                         f"{want}", TypeError)
    if len(shape) != len(dims) or any(d != -1 and d != s for d, s in zip(dims, shape)):
        raise _api_error("Executor.run", f"feed '{name}' has shape {shape}, but the input was declared "
                                         f"{[None if d == -1 else d for d in dims]}")
    return v


# ---------------------------------------------------------------- on the executor's thread


def _to_tensor(v):
    if isinstance(v, Tensor):
        return v
    from ..creation import to_tensor

    return to_tensor(v)


def _run_plan(plan, arrays):
    from ..autograd import no_grad

    feeds = [_to_tensor(a) for a in arrays]
    specs = plan.grad_groups + plan.step_specs
    if not specs:
        if plan.forward_program is None:
            plan.forward_program = plan.program()
            if getattr(plan, "build_strategy", None) is not None and not plan.updated:
                plan.forward_program.optimize(build_strategy=plan.build_strategy)
        with no_grad():
            outs = plan.forward_program.run(*feeds) if plan.forward else []
        grads = []
    else:
        key = tuple((str(t.dtype), tuple(t.shape)) for t in feeds)
        joint = plan.joint.get(key)
        if joint is None:
            joint = _trace_joint(plan, feeds)
            plan.joint[key] = joint
        with no_grad():
            flat = joint.run(*feeds)
        outs, grads = flat[:len(plan.forward)], flat[len(plan.forward):]
    # Training steps: each optimizer updates its parameters with this run's gradients.
    offset = len(plan.grad_fetch)
    for opt, _, params in plan.steps:
        gs = grads[offset:offset + len(params)]
        offset += len(params)
        opt._apply_optimize([(p, g) for p, g in zip(params, gs) if g is not None])
    for step in plan.after_run:
        step()
    for fn, k in plan.hooks:
        fn(outs[k])
    # A fetched parameter is read at the end of the run, after the updates, as in Paddle.
    results = []
    for kind, k in plan.kinds:
        if kind == "value":
            results.append(outs[k])
        elif kind == "grad":
            results.append(grads[k])
        else:
            results.append(k.detach().clone())
    return results


def _trace_joint(plan, feeds):
    """The forward program plus the gradients it needs, traced on this run's feeds."""
    from .. import _ir, zeros_like

    if plan.forward_program is None:
        plan.forward_program = plan.program()
    forward = plan.forward_program
    data_index = {}
    root = plan.prog._root()
    for i, name in enumerate(plan.inputs):
        data_index[id(root._data[name][0])] = i
    # The gradient outputs, in order: one per fetched gradient, then each training step's parameters.
    wanted = [(plan.grad_groups[gi], k) for gi, k in plan.grad_fetch]
    wanted += [(spec, k) for spec in plan.step_specs for k in range(len(spec.wrt))]

    def joint(*ts):
        outs = forward.run(*ts) if plan.forward else []
        cache = {}
        grads = []
        for spec, k in wanted:
            got = cache.get(id(spec))
            if got is None:
                targets = [outs[plan.fidx[id(t)]] for t in spec.targets]
                tg = None
                if spec.target_gradients:
                    tg = [None if t is None else outs[plan.fidx[id(t)]] for t in spec.target_gradients]
                wrt = [ts[data_index[id(w)]] if id(w) in data_index else w for w in spec.wrt]
                got = (_C._grad(targets, wrt, tg or [None] * len(targets), True, False, True), wrt)
                cache[id(spec)] = got
            g = got[0][k]
            # A value the targets do not read gets a zero gradient, as in Paddle, of the
            # value's own shape (a data input's follows the feed).
            grads.append(g if g is not None else zeros_like(got[1][k]))
        return list(outs) + grads

    # Inputs a gradient is taken with respect to must require grad in the trace.
    needs_grad = {data_index[id(w)] for spec, _ in wanted for w in spec.wrt if id(w) in data_index}
    ex = []
    for i, t in enumerate(feeds):
        e = t.detach()
        if i in needs_grad:
            e.stop_gradient = False
        ex.append(e)
    # Tracing runs the forward once, with its state updates (batch-norm
    # statistics); each run applies them, so the trace's are undone.
    from ..autograd import no_grad

    updated = [t for n, t in plan.params_of_forward() if n in plan.updated]
    with no_grad():
        saved = [_C.clone(t) for t in updated]
    try:
        prog, _ = _ir.trace(joint, ex, parameters=plan.params_of_forward())
    finally:
        with no_grad():
            for t, s in zip(updated, saved):
                t.copy_(s)
    return prog
