"""Control flow on tensor values (Paddle's ``paddle.static.nn.cond``,
``while_loop`` and ``switch_case``).

Outside a captured program these run eagerly: the predicate's value picks the
branch, and a loop runs while its condition holds, as Python ``if`` and
``while`` would. While a program is being captured (``oar.jit.to_static``,
``oar._ir.trace``) they are recorded as control-flow ops whose regions hold
every branch (or the loop's condition and body), so the captured program
decides at run time, for each input, which branch runs or how many times the
loop body runs. ``oar.jit.to_static`` converts ``if tensor:`` and
``while tensor:`` in the functions it captures into these ops
(oar/jit/dy2static).

Capture runs every branch once on the example inputs (each branch must be
valid for them), and a loop body at least once; the example results are
those of the branch or iterations the example selects.
"""
from .. import _C, _pytree

from ._nn_common import *  # noqa: F401,F403
from ._nn_common import __all__ as _layers
from .py_func import py_func  # noqa: F401

__all__ = ["cond", "while_loop", "switch_case", "case", "set_max_loop_iterations", "py_func"] + _layers

Tensor = _C.Tensor


# ---- nested structures of tensors (oar/_pytree.py) -----------------------------
# Python values (None, numbers, strings) are part of a layout: every branch
# must give the same ones.
_flatten, _same_layout, _describe = _pytree.flatten, _pytree.same, _pytree.describe


def _rebuild(layout, leaves):
    return _pytree.unflatten(layout, leaves)


def _capturing():
    return _C._ir_is_tracing()


def _check_selector(x, api, what, index):
    if not isinstance(x, Tensor):
        raise TypeError(f"[{api}] {what} must be a Tensor, got {type(x).__name__}")
    if x.size != 1:
        raise ValueError(f"[{api}] {what} must hold exactly one element (shape [] or [1]), got shape {list(x.shape)}")
    name = str(x.dtype).replace("paddle.", "")
    if index and name not in ("int32", "int64", "uint8", "int8", "int16"):
        raise TypeError(f"[{api}] {what} must have dtype int32, int64 or uint8, got {name}")
    if not index and name != "bool":
        raise TypeError(f"[{api}] {what} must have dtype bool, got {name}")


def _value(x):
    """The Python value of a one-element tensor (eager mode)."""
    return x.item()


# ---- cond -------------------------------------------------------------------

def cond(pred, true_fn=None, false_fn=None, name=None, return_names=None):
    """Returns ``true_fn()`` if ``pred`` is true, else ``false_fn()``.

    ``pred`` is a bool Tensor with one element (shape [] or [1]). Both
    functions take no argument and return the same nested structure (a
    Tensor, or lists / tuples / dicts of them, or None); the tensors may
    differ in shape but not in dtype or rank. A function left as None returns
    None. In a captured program both branches are recorded and the predicate
    is evaluated at run time; a result dim on which the branches differ is
    dynamic (-1). ``name`` and ``return_names`` are accepted for Paddle
    compatibility and not used.

    >>> import oar
    >>> from oar.static import nn
    >>> x = oar.to_tensor([1.0, -2.0])
    >>> nn.cond(x.sum() > 0, lambda: x * 2.0, lambda: x - 1.0).numpy().tolist()
    [0.0, -3.0]
    >>> from oar import _ir
    >>> f = lambda x: nn.cond(x.sum() > 0, lambda: x * 2.0, lambda: x - 1.0)
    >>> prog, _ = _ir.trace(f, [oar.to_tensor([1.0, 2.0])])
    >>> prog.run(oar.to_tensor([1.0, 2.0])).numpy().tolist(), prog.run(x).numpy().tolist()
    ([2.0, 4.0], [0.0, -3.0])
    """
    api = "oar.static.nn.cond"
    for fn, which in ((true_fn, "true_fn"), (false_fn, "false_fn")):
        if fn is not None and not callable(fn):
            raise TypeError(f"[{api}] {which} must be callable or None, got {type(fn).__name__}")
    if isinstance(pred, bool) or not _capturing():
        if not isinstance(pred, bool):
            _check_selector(pred, api, "pred", False)
            pred = bool(_value(pred))
        fn = true_fn if pred else false_fn
        return fn() if fn is not None else None
    _check_selector(pred, api, "pred", False)
    layouts = {}

    def branch(fn, which):
        def run():
            leaves = []
            layout = _flatten(fn() if fn is not None else None, leaves)
            if "true_fn" in layouts and not _same_layout(layouts["true_fn"], layout):
                raise ValueError(f"[{api}] true_fn and false_fn must return the same nested structure "
                                 f"(the same lists, tuples, dicts and Python values, with Tensors in the same "
                                 f"places); true_fn gives {_describe(layouts['true_fn'])}, false_fn gives "
                                 f"{_describe(layout)}")
            layouts[which] = layout
            return leaves
        return run

    outs = _C._ir_cond(pred, branch(true_fn, "true_fn"), branch(false_fn, "false_fn"))
    return _rebuild(layouts["true_fn"], list(outs))


# ---- while_loop -------------------------------------------------------------

def while_loop(cond, body, loop_vars, is_test=False, name=None):
    """Runs ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` is true; returns the loop values.

    ``loop_vars`` is a non-empty list or tuple of Tensors (nested lists,
    tuples and dicts of Tensors are allowed too). ``cond`` returns a bool
    Tensor with one element; ``body`` returns the next values in the same
    structure (a single Tensor when there is one loop value), with the same
    dtypes and ranks. In a captured program the loop runs at run time until
    the condition is false; a dim that the body changes (a growing sequence)
    becomes dynamic (-1). Returns a list. ``is_test`` and ``name`` are
    accepted for Paddle compatibility and not used.

    >>> import oar
    >>> from oar.static import nn
    >>> i, s = oar.to_tensor(0), oar.to_tensor(0.0)
    >>> out = nn.while_loop(lambda i, s: i < 4, lambda i, s: [i + 1, s + i.astype("float32")], [i, s])
    >>> [t.item() for t in out]
    [4, 6.0]
    >>> from oar import _ir
    >>> def count(n):
    ...     return nn.while_loop(lambda k: k < n, lambda k: k + 1, [oar.zeros_like(n)])[0]
    >>> prog, _ = _ir.trace(count, [oar.to_tensor(3)])
    >>> prog.run(oar.to_tensor(5)).item(), prog.run(oar.to_tensor(0)).item()
    (5, 0)
    """
    api = "oar.static.nn.while_loop"
    if not callable(cond):
        raise TypeError(f"[{api}] cond must be callable, got {type(cond).__name__}")
    if not callable(body):
        raise TypeError(f"[{api}] body must be callable, got {type(body).__name__}")
    if not isinstance(loop_vars, (list, tuple)):
        raise TypeError(f"[{api}] loop_vars must be a list or tuple, got {type(loop_vars).__name__}")
    if len(loop_vars) == 0:
        raise ValueError(f"[{api}] loop_vars must not be empty")
    loop_vars = list(loop_vars)

    def next_vars(vs):
        out = body(*vs)
        if not isinstance(out, (list, tuple)):
            out = [out]
        out = list(out)
        if len(out) != len(vs):
            raise ValueError(f"[{api}] body must return {len(vs)} loop value(s) (as many as loop_vars), "
                             f"got {len(out)}")
        return out

    if not _capturing():
        pred = cond(*loop_vars)
        while _truth(pred, api):
            loop_vars = next_vars(loop_vars)
            pred = cond(*loop_vars)
        return loop_vars

    leaves = []
    layout = _flatten(loop_vars, leaves)
    _require_tensors(layout, api)

    def run_cond(vals):
        return cond(*_rebuild(layout, list(vals)))

    def run_body(vals):
        out = next_vars(_rebuild(layout, list(vals)))
        got = []
        out_layout = _flatten(out, got)
        if not _same_layout(layout, out_layout):
            raise ValueError(f"[{api}] body must return the structure of loop_vars ({_describe(layout)}), "
                             f"got {_describe(out_layout)}")
        return got

    outs = _C._ir_while_loop(run_cond, run_body, leaves)
    return _rebuild(layout, list(outs))


def _truth(pred, api):
    if isinstance(pred, bool):
        return pred
    _check_selector(pred, api, "the value cond returns", False)
    return bool(_value(pred))


def _require_tensors(layout, api):
    kind = layout[0]
    if kind == "const":
        raise TypeError(f"[{api}] loop_vars of a captured loop must be Tensors, got {type(layout[1]).__name__} "
                        f"({layout[1]!r}); make it a Tensor (e.g. oar.full([], value))")
    if kind == "tensor":
        return
    for sub in layout[-1]:
        _require_tensors(sub, api)


# ---- switch_case ------------------------------------------------------------

def switch_case(branch_index, branch_fns, default=None, name=None):
    """Runs the function of ``branch_fns`` whose key equals ``branch_index``, like a C++ switch.

    ``branch_index`` is an int32, int64 or uint8 Tensor with one element.
    ``branch_fns`` is a dict {int: callable}, a list/tuple of (int, callable)
    pairs, or a list/tuple of callables (keyed by position). With no matching
    key ``default`` runs, or, when ``default`` is None, the function with the
    largest key. All functions return the same nested structure of Tensors.
    ``name`` is accepted for Paddle compatibility and not used.

    >>> import oar
    >>> from oar.static import nn
    >>> fns = {1: lambda: oar.full([2], 1.0), 2: lambda: oar.full([2], 2.0)}
    >>> nn.switch_case(oar.to_tensor(2), fns, default=lambda: oar.zeros([2])).numpy().tolist()
    [2.0, 2.0]
    >>> from oar import _ir
    >>> prog, _ = _ir.trace(lambda i: nn.switch_case(i, fns, default=lambda: oar.zeros([2])),
    ...                     [oar.to_tensor(1)])
    >>> [prog.run(oar.to_tensor(k)).numpy().tolist() for k in (1, 2, 7)]
    [[1.0, 1.0], [2.0, 2.0], [0.0, 0.0]]
    """
    api = "oar.static.nn.switch_case"
    pairs = _branch_pairs(branch_fns, api)
    if default is not None and not callable(default):
        raise TypeError(f"[{api}] default must be callable or None, got {type(default).__name__}")
    if default is None:
        # Paddle: with no default, the function with the largest key serves as one.
        key, default = max(pairs, key=lambda kv: kv[0])
        pairs = [kv for kv in pairs if kv[0] != key]
    _check_selector(branch_index, api, "branch_index", True)
    if not _capturing():
        idx = int(_value(branch_index))
        for k, fn in pairs:
            if k == idx:
                return fn()
        return default()
    fns = [fn for _, fn in pairs] + [default]
    layouts = []

    def branch(fn, label):
        def run():
            leaves = []
            layout = _flatten(fn(), leaves)
            if layouts and not _same_layout(layouts[0][1], layout):
                raise ValueError(f"[{api}] every branch must return the same nested structure; "
                                 f"{layouts[0][0]} gives {_describe(layouts[0][1])}, {label} gives "
                                 f"{_describe(layout)}")
            layouts.append((label, layout))
            return leaves
        return run

    labels = [f"branch {k}" for k, _ in pairs] + ["default"]
    outs = _C._ir_switch_case(branch_index, [k for k, _ in pairs],
                              [branch(fn, label) for fn, label in zip(fns, labels)])
    return _rebuild(layouts[0][1], list(outs))


def case(pred_fn_pairs, default=None, name=None):
    """Runs the function of the first (pred, fn) pair whose pred is true, else ``default``.

    Each pred is a bool Tensor with one element; the functions take no
    argument and return the same nested structure. Without ``default`` the
    last pair's function serves as one, as in Paddle. Built from ``cond``, so
    a captured program decides at run time.

    >>> import oar
    >>> from oar.static import nn
    >>> x = oar.to_tensor(3.0)
    >>> pairs = [(x < 1.0, lambda: x * 0.0), (x < 5.0, lambda: x * 10.0)]
    >>> float(nn.case(pairs, default=lambda: x))
    30.0
    """
    api = "oar.static.nn.case"
    if not isinstance(pred_fn_pairs, (list, tuple)) or not pred_fn_pairs:
        raise TypeError(f"[{api}] pred_fn_pairs must be a non-empty list or tuple of (pred, fn) pairs, "
                        f"got {pred_fn_pairs!r}")
    pairs = []
    for i, pair in enumerate(pred_fn_pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(f"[{api}] pred_fn_pairs[{i}] must be a (pred, fn) pair, got {pair!r}")
        pred, fn = pair
        _check_selector(pred, api, f"pred_fn_pairs[{i}][0]", False)
        if not callable(fn):
            raise TypeError(f"[{api}] pred_fn_pairs[{i}][1] must be callable, got {type(fn).__name__}")
        pairs.append((pred, fn))
    if default is not None and not callable(default):
        raise TypeError(f"[{api}] default must be callable or None, got {type(default).__name__}")
    if default is None:
        pairs, default = pairs[:-1], pairs[-1][1]

    def chain(i):
        if i == len(pairs):
            return default()
        pred, fn = pairs[i]
        return cond(pred, fn, lambda: chain(i + 1))

    return chain(0)


def _branch_pairs(branch_fns, api):
    if isinstance(branch_fns, dict):
        items = list(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)):
        items = []
        for i, item in enumerate(branch_fns):
            if callable(item):
                items.append((i, item))
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                items.append(tuple(item))
            else:
                raise TypeError(f"[{api}] each element of branch_fns must be a callable or an (int, callable) pair, "
                                f"element {i} is {type(item).__name__}")
    else:
        raise TypeError(f"[{api}] branch_fns must be a dict, list or tuple, got {type(branch_fns).__name__}")
    if not items:
        raise ValueError(f"[{api}] branch_fns must not be empty")
    seen = set()
    pairs = []
    for key, fn in items:
        if isinstance(key, bool) or not isinstance(key, int):
            raise TypeError(f"[{api}] branch keys must be ints, got {type(key).__name__}")
        if not callable(fn):
            raise TypeError(f"[{api}] the function of key {key} must be callable, got {type(fn).__name__}")
        if key in seen:
            raise ValueError(f"[{api}] the key {key} appears more than once in branch_fns")
        seen.add(key)
        pairs.append((key, fn))
    return pairs


def set_max_loop_iterations(n):
    """Sets how many iterations one captured while_loop may run before it stops with an error (default 1000000).

    A guard against loops whose condition never becomes false; an oar
    extension (Paddle has no such limit). The limit is process-wide: it holds
    for programs run by ``oar.jit.load``'s layers and by the inference
    runtime (``oar.inference``) too. Returns the previous limit.

    >>> from oar.static import nn
    >>> old = nn.set_max_loop_iterations(10)
    >>> nn.set_max_loop_iterations(old)
    10
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"[oar.static.nn.set_max_loop_iterations] n must be an int, got {type(n).__name__}")
    old = _C._ir_max_loop_iterations()
    _C._ir_set_max_loop_iterations(n)
    return old
