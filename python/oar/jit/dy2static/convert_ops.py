"""The runtime helpers that converted code calls (imported there as ``_jst``).

Each helper decides at run time, from the values it receives, what the
statement it replaces means:

- outside a trace, or on Python values, it runs the plain Python semantics
  (``if``/``while``/``for``/``and``/``not``/``assert`` as written);
- on a tensor while a program is being captured, it records a control-flow op
  (``oar.static.nn.cond`` / ``while_loop``) so that the program decides for
  each input, or a logical op for ``and``/``or``/``not``.

Converted branches and loop bodies are nested functions that read and write
the enclosing function's variables through ``nonlocal`` (see transformer.py);
``get_args()`` returns the current values of the variables a statement
assigns and ``set_args(values)`` stores them, so the helpers can run a branch
on the values from before the ``if``, collect what it assigned, and store the
results of the control-flow op back.

Note [merging branch values]
A cond op's branches must yield the same tensors (dtype and rank; dims may
differ and become dynamic). Per variable the helper compares what the two
branches left:
- tensors (or nested lists/tuples/dicts of them) in both: op results;
- equal Python values: kept as they are;
- a tensor in one branch and no value in the other (a variable first
  assigned in one branch): the other branch yields zeros of the same type.
  This is safe: a correct program reads the variable after the ``if`` only
  when the branch that assigned it ran. Early ``return`` relies on this;
- a tensor in one branch and a Python number (or bools that differ) in the
  other: the number becomes a tensor, as the return and break flags do;
- anything else (different strings, None against a tensor): an error naming
  the line when the variable is read later, else the variable is left
  undefined (reading it raises, naming the line).
The true branch is recorded first, so when it is the one that must change (it
left a number or nothing, the false branch a tensor) the op is recorded again
with that fix (a retry); branches may therefore run more than twice while
tracing.
"""
import builtins
import sys

from ... import _C
from ...static import nn as _nn
from . import origin

Tensor = _C.Tensor

__all__ = ["IfElse", "While", "For", "Range", "Len", "And", "Or", "Not", "Compare", "IfExp", "Assert", "Print",
           "FormatValue", "Raised", "Call", "UndefinedVar", "TensorList", "ReturnValue"]

_CF_ADVICE = ("Tensor-dependent control flow is converted to cond/while ops, whose branches and loop bodies "
              "must produce tensors of the same dtype and rank for each variable they assign.")


def _tracing():
    return _C._ir_is_tracing()


def _paused():
    """In a to_static trace with recording paused: a while_loop running the example's remaining iterations."""
    from .._guard import _state

    return _state.converting > 0 and not _tracing()


def _oar():
    import oar

    return oar


class _Retry(Exception):
    """Records a control-flow op again with fixes learned from the first attempt (Note [merging branch values])."""

    def __init__(self, hints, loop=False):
        super().__init__(hints)
        self.hints = hints
        self.loop = loop  # for the enclosing loop (a tensor list's first append): an `if` passes it on


# ---------------------------------------------------------------- undefined variables


class UndefinedVar:
    """The value of a variable that has none on this path; using it raises Dy2StaticError naming it.

    >>> from oar.jit.dy2static.convert_ops import UndefinedVar
    >>> v = UndefinedVar("y")
    >>> try:
    ...     v + 1
    ... except Exception as e:
    ...     print(type(e).__name__, str(e).splitlines()[0])
    Dy2StaticError [oar.jit.to_static] variable 'y' is used but has no value here
    """

    __slots__ = ("_oar_name", "_oar_reason")

    def __init__(self, name, reason=None):
        object.__setattr__(self, "_oar_name", name)
        object.__setattr__(self, "_oar_reason", reason)

    def _oar_fail(self, *args, **kwargs):
        reason = self._oar_reason or (
            "It is assigned only on some paths before this use (e.g. in one branch of an `if`), or not at all. "
            "Give it a value on every path before it is read.")
        raise origin.error(origin.here(2), f"variable '{self._oar_name}' is used but has no value here", reason)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        self._oar_fail()

    def __repr__(self):
        return f"UndefinedVar({self._oar_name!r})"


for _name in ("__bool__", "__len__", "__iter__", "__getitem__", "__setitem__", "__call__", "__add__", "__radd__",
              "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__",
              "__mod__", "__pow__", "__matmul__", "__rmatmul__", "__neg__", "__lt__", "__le__", "__gt__", "__ge__",
              "__int__", "__float__", "__index__", "__and__", "__or__", "__invert__", "__contains__"):
    setattr(UndefinedVar, _name, UndefinedVar._oar_fail)


def GetAttr(obj, attr, label=None):
    """``obj.attr`` carried through a converted statement (Note [carried attributes] in transformer.py):
    an UndefinedVar named ``label`` where it has no value.

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> class Box: pass
    >>> b = Box()
    >>> _jst.GetAttr(b, "v", "b.v")
    UndefinedVar('b.v')
    >>> _jst.SetAttr(b, "v", 3); _jst.GetAttr(b, "v")
    3
    """
    if isinstance(obj, UndefinedVar):
        return UndefinedVar(label or attr)
    try:
        return getattr(obj, attr)
    except AttributeError:
        return UndefinedVar(label or attr)


def SetAttr(obj, attr, value):
    """Stores a carried ``obj.attr`` (see GetAttr); an UndefinedVar removes the attribute again."""
    if isinstance(obj, UndefinedVar):
        return
    if isinstance(value, UndefinedVar):
        if attr in getattr(obj, "__dict__", {}):
            delattr(obj, attr)
        return
    if _same(getattr(obj, attr, UndefinedVar(attr)), value):
        return  # unchanged: no write (a Layer's parameter stays registered as it is)
    setattr(obj, attr, value)


def GetState(obj):
    """The tensor attributes of a plain object whose method a converted statement calls (Note [carried
    attributes] in transformer.py), as a dict; empty for other values (lists, tensors, Layers, modules).

    >>> import oar
    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> class Box: pass
    >>> b = Box(); b.t = oar.ones([2]); b.n = 3
    >>> list(_jst.GetState(b)), _jst.GetState([1])
    (['t'], {})
    """
    from ...nn import Layer

    d = getattr(obj, "__dict__", None)
    if type(d) is not dict or isinstance(obj, (Layer, type, Tensor, TensorList, UndefinedVar)) or callable(obj):
        return {}
    return {k: v for k, v in d.items() if isinstance(v, Tensor)}


def SetState(obj, state):
    """Stores the attributes GetState returned (those whose value changed)."""
    if not isinstance(state, dict):
        return
    for k, v in state.items():
        if not isinstance(v, UndefinedVar) and obj.__dict__.get(k) is not v:
            setattr(obj, k, v)


def ReturnValue(value):
    """The value a converted function returns: None where no ``return`` ran."""
    return None if isinstance(value, UndefinedVar) else value


# ---------------------------------------------------------------- tensors from Python values


def _is_num(v):
    return type(v) in (bool, int, float)


def _num_dtype(v):
    if type(v) is bool:
        return "bool"
    if type(v) is int:
        return "int64"
    return _oar().get_default_dtype()


def _full(value, dtype=None, shape=()):
    return _oar().full(list(shape), value, dtype or _num_dtype(value))


def _bool_tensor(v):
    if isinstance(v, Tensor):
        return v if v.dtype == _C.dtype.bool else v.astype("bool")
    if isinstance(v, TensorList):
        v = v.data
        return v if v.dtype == _C.dtype.bool else v.astype("bool")
    return _full(bool(v), "bool")


def _check_pred(pred, where, what):
    if pred.size != 1:
        raise origin.error(where, f"the condition of {what} is a Tensor of shape {list(pred.shape)}",
                           "A tensor condition must hold exactly one element (shape [] or [1]); reduce it first, "
                           "e.g. `(x > 0).all()` or `x.sum() > 0`.")
    return _bool_tensor(pred)


def _truth(v):
    return bool(v)


def _spec(value):
    """The structure of ``value`` with each tensor replaced by its dtype and traced shape."""
    leaves = []
    layout = _nn._flatten(value, leaves)
    return layout, [(t.dtype, _static_shape(t)) for t in leaves]


def _static_shape(t):
    return [d if d >= 0 else 1 for d in t.shape]


def _placeholder(spec):
    layout, metas = spec
    return _nn._rebuild(layout, [_oar().zeros(shape, dtype) for dtype, shape in metas])


def _kind(value, leaves):
    if leaves:
        return "T"
    if isinstance(value, UndefinedVar):
        return "U"
    if _is_num(value):
        return "N"
    return "C"


def _dtype_name(dtype):
    return str(dtype).replace("paddle.", "")


def _same(a, b):
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


# ---------------------------------------------------------------- if / else


def _refuse_in_try(in_try, what):
    if in_try:
        raise origin.error(origin.here(2), f"{what} on a tensor inside a try block with except clauses",
                           "The condition is decided when the program runs, where a failure is not a Python "
                           "exception of one branch that `except` could catch: while tracing, every branch runs "
                           "once on the example. Move the `try` out of the to_static function, or compute the "
                           "condition outside the `try`.")


def IfElse(pred, true_fn, false_fn, get_args, set_args, names, live=(), in_try=False):
    """Runs an ``if`` statement: Python semantics, or a cond op for a tensor predicate in a trace.

    >>> import oar
    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> x = oar.to_tensor(3.0)
    >>> def true_fn():
    ...     global y
    ...     y = x * 2.0
    >>> def false_fn():
    ...     global y
    ...     y = x
    >>> _jst.IfElse(x > 0, true_fn, false_fn, lambda: (), lambda v: None, ())
    >>> float(y)
    6.0
    """
    if isinstance(pred, Tensor) and _tracing():
        _refuse_in_try(in_try, "an `if`")
    _if(pred, true_fn, false_fn, get_args, set_args, names, live, False)


def _if(pred, true_fn, false_fn, get_args, set_args, names, live, promote):
    """IfElse; ``promote`` turns Python numbers that differ between the branches into tensors."""
    if not (isinstance(pred, Tensor) and _tracing()):
        if _truth(pred):
            true_fn()
        else:
            false_fn()
        return
    where = origin.here(2)
    pred = _check_pred(pred, where, "an `if`")
    init = tuple(get_args())
    hints = {}
    for _ in range(len(names) + 2):
        try:
            result = _traced_if(pred, true_fn, false_fn, get_args, set_args, names, live, init, hints, where,
                                promote)
        except _Retry as r:
            if r.loop:
                raise
            hints.update(r.hints)
            continue
        set_args(result)
        return
    raise origin.error(where, "could not convert this `if`", _CF_ADVICE)  # pragma: no cover (hints converge)


def _fresh(value):
    """A copy of the lists and dicts in ``value`` (nested ones too); tensors and other objects are shared."""
    if type(value) is list:
        return [_fresh(v) for v in value]
    if type(value) is dict:
        return {k: _fresh(v) for k, v in value.items()}
    if type(value) is tuple:
        return tuple(_fresh(v) for v in value)
    if type(value) is TensorList:
        return TensorList(value.name, value.data)  # append replaces .data: one branch's must not reach the other
    return value


def _apply_hint(value, hint):
    if hint is None:
        return value
    if hint[0] == "placeholder" and isinstance(value, UndefinedVar):
        return _placeholder(hint[1])
    if hint[0] == "promote" and _is_num(value):
        return _full(value, hint[1], hint[2])
    return value


def _traced_if(pred, true_fn, false_fn, get_args, set_args, names, live, init, hints, where, promote):
    side = {}
    lists = set()

    def collect(fn):
        # Each branch gets its own copy of the lists and dicts, so that one
        # branch's in-place changes (append, d[k] = v) do not reach the other.
        set_args(tuple(_fresh(v) for v in init))
        try:
            fn()
        except NotImplementedError as e:
            _explain_in_place(e)
            raise
        except Exception as e:
            if getattr(e, "_oar_raised", None) is None:
                raise
            # Note [raise in a branch]
            _raise_when_run(e, pred)
            set_args(tuple(_fresh(v) for v in init))
        out = []
        for n, v in zip(names, get_args()):
            v = _apply_hint(v, hints.get(n))
            if isinstance(v, TensorList) and v.data is not None:
                # A tensor list (of a loop around the `if`): its data is the value; the branches may differ
                # in its length.
                lists.add(n)
                v = v.data
            leaves = []
            layout = _nn._flatten(v, leaves)
            out.append((v, layout, leaves))
        return out

    def run_true():
        side["true"] = collect(true_fn)
        return [t for _, _, leaves in side["true"] for t in leaves]

    def run_false():
        got = collect(false_fn)
        plans, emitted = [], []
        for n, (tv, tl, tleaves), (fv, fl, fleaves) in zip(names, side["true"], got):
            plan, leaves = _merge(n, n in live, tv, tl, tleaves, fv, fl, fleaves, where, promote)
            plans.append(plan)
            emitted.extend(leaves)
        side["plans"] = plans
        return emitted

    outs = list(_C._ir_cond(pred, run_true, run_false))
    result, pos = [], 0
    for n, (tv, tl, tleaves), plan in zip(names, side["true"], side["plans"]):
        part = outs[pos:pos + len(tleaves)]
        pos += len(tleaves)
        if plan[0] == "undef":
            result.append(UndefinedVar(n, plan[1]))
        elif n in lists:
            result.append(TensorList(n, _nn._rebuild(tl, part)))
        else:
            result.append(_nn._rebuild(tl, part))
    return tuple(result)


def _explain_in_place(exc):
    """Raises a Dy2StaticError naming the user's line for the trace's refusal of an in-place write, inside a
    branch or loop body, to a tensor from outside it (``y[i] = v``, ``y.add_(v)``); returns otherwise."""
    if "writes in place, inside a control-flow region" not in str(exc):
        return
    tb, frame = exc.__traceback__, None
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(origin._OAR_DIR):
            frame = tb
        tb = tb.tb_next
    if frame is None:
        return
    where = origin.Location(frame.tb_frame.f_code.co_filename, frame.tb_lineno,
                            origin.user_function_name(frame.tb_frame))
    raise origin.error(where, "an in-place write, in a branch or loop body on a tensor, to a tensor from before it",
                       f"{exc} The branch or body becomes a function of the program, which may not change its "
                       "inputs in place. Write to a copy made inside it (`y = y.clone()` before `y[i] = v`), or "
                       "compute the new value out of place (`y = y + v`, `y = oar.where(mask, v, y)`).") from exc


# Note [raise in a branch]
# Both branches of a tensor `if` run while tracing, so a `raise` in one would
# stop the trace whichever branch the input takes. A converted `raise` marks
# its exception (``Raised``); a branch that raises it records an op that
# raises it when the program runs that branch, and yields the values from
# before the `if` (never used: the program stops there). Other exceptions
# propagate: they are failures of the trace itself.


def Raised(exc):
    """The exception of a converted ``raise`` statement, marked with where it was raised (Note [raise in
    a branch]).

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> type(_jst.Raised(ValueError)).__name__
    'ValueError'
    """
    if isinstance(exc, type) and issubclass(exc, BaseException):
        exc = exc()
    if isinstance(exc, Exception):
        try:
            exc._oar_raised = origin.here()
        except AttributeError:  # pragma: no cover (exceptions with __slots__)
            pass
    return exc


def _raise_when_run(exc, pred):
    where = exc._oar_raised

    note = f"(raised in a to_static function when its program ran: {where.filename}, line {where.lineno})"

    def fail(value):
        if note not in getattr(exc, "__notes__", ()):
            exc.add_note(note)
        raise exc.with_traceback(None)

    _observe(fail, [pred])


def _merge(name, live, tv, tl, tleaves, fv, fl, fleaves, where, promote):
    """What the false branch yields for one variable, and how the result is built (Note [merging branch values])."""
    if _nn._same_layout(tl, fl):
        _check_types(name, tleaves, fleaves, where, "the true branch", "the false branch")
        return ("layout",), fleaves
    tk, fk = _kind(tv, tleaves), _kind(fv, fleaves)
    if tk == "T" and fk == "U":
        return ("layout",), _flat(_placeholder((tl, [(t.dtype, _static_shape(t)) for t in tleaves])))
    if tk == "T" and fk == "N" and len(tleaves) == 1 and tl == ("tensor",):
        t = tleaves[0]
        return ("layout",), [_full(fv, t.dtype, _static_shape(t))]
    if fk == "T" and tk in ("U", "N") and live:
        if tk == "U":
            raise _Retry({name: ("placeholder", _spec(fv))})
        if fl == ("tensor",):
            f = fleaves[0]
            raise _Retry({name: ("promote", f.dtype, _static_shape(f))})
    if tk == "N" and fk == "N" and live and ((type(tv) is bool and type(fv) is bool) or promote):
        dtype = "bool" if type(tv) is bool and type(fv) is bool else (
            _num_dtype(0.0) if float in (type(tv), type(fv)) else "int64")
        raise _Retry({name: ("promote", dtype, [])})
    reason = (f"{_label(name)} is {_show(tv, tk, tl)} after the true branch of a tensor-dependent `if` but "
              f"{_show(fv, fk, fl)} after the false branch ({where.filename}, line {where.lineno}); a converted "
              f"`if` must leave each variable it assigns as tensors in both branches or as the same Python value.")
    if live and not (tk == "U" or fk == "U"):
        raise origin.error(where, f"{_label(name)} differs between the branches of an `if` on a tensor",
                           reason[0].upper() + reason[1:] + " Make both branches assign a tensor (e.g. "
                           "oar.full([], value)), or compute the value outside the `if`.")
    # Not read later (or missing on one side): the result is undefined; placeholders keep the op well formed.
    pads = _flat(_placeholder((tl, [(t.dtype, _static_shape(t)) for t in tleaves]))) if tleaves else []
    return ("undef", reason[0].upper() + reason[1:]), pads


def _label(name):
    """How messages name a variable (the generated return value by what it is)."""
    return "the return value" if name == "_oar_return_value" else f"variable '{name}'"


def _show(v, kind, layout=None):
    if kind == "T":
        return "a Tensor" if isinstance(v, Tensor) else _nn._describe(layout)
    if kind == "U":
        return "unassigned"
    r = repr(v)
    return f"the Python value {r if len(r) < 40 else r[:37] + '...'}"


def _flat(value):
    leaves = []
    _nn._flatten(value, leaves)
    return leaves


def _check_types(name, a, b, where, a_name, b_name):
    for x, y in zip(a, b):
        if x.dtype != y.dtype or len(x.shape) != len(y.shape):
            raise origin.error(
                where, f"{_label(name)} has different types in the two branches of an `if` on a tensor",
                f"It is {_dtype_name(x.dtype)} of rank {len(x.shape)} in {a_name} and {_dtype_name(y.dtype)} of "
                f"rank {len(y.shape)} in {b_name}. " + _CF_ADVICE + " Cast one of them (x.astype(...)).")


# ---------------------------------------------------------------- loops


def While(test_fn, body_fn, get_args, set_args, names, live=(), lists=(), in_try=False):
    """Runs a ``while`` loop: a Python loop, or a while_loop op once its condition is a tensor in a trace.

    >>> import oar
    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> state = {"i": 0}
    >>> _jst.While(lambda: state["i"] < 3, lambda: state.update(i=state["i"] + 1), lambda: (), lambda v: None, ())
    >>> state["i"]
    3
    """
    while True:
        pred = test_fn()
        if isinstance(pred, Tensor) and _tracing():
            _refuse_in_try(in_try, "a `while` loop")
            _traced_loop(test_fn, body_fn, get_args, set_args, names, live, lists, origin.here(), "a `while` loop")
            return
        if not _truth(pred):
            return
        body_fn()


def For(iterable, set_target, body_fn, get_args, set_args, names, live=(), lists=(), keep=None, in_try=False):
    """Runs a ``for`` loop: over Python values as Python does, over a tensor or a tensor range as a while_loop op.

    ``keep`` (or None) returns whether to go on after an iteration (the loop's
    break and return flags).

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> seen = []
    >>> _jst.For(_jst.Range(3), seen.append, lambda: None, lambda: (), lambda v: None, ())
    >>> seen
    [0, 1, 2]
    """
    if isinstance(iterable, _TensorRange) and not _tracing():
        iterable = iterable.python_range()
    if isinstance(iterable, TensorList):
        iterable = iterable.data
    if isinstance(iterable, (Tensor, _TensorEnumerate)) and _tracing():
        # Over the rows of a tensor whose dim 0 is static: unrolled, as a loop
        # over range(n) of a Python n is, so the index stays a Python int.
        x = iterable.x if isinstance(iterable, _TensorEnumerate) else iterable
        traced = _C._ir_traced_shape(x)
        if x.ndim > 0 and (traced is None or traced[0] >= 0):
            rows = [x[i] for i in range(x.shape[0])]
            iterable = rows if isinstance(iterable, Tensor) else builtins.enumerate(rows, iterable.start)
    if isinstance(iterable, (Tensor, _TensorRange, _TensorEnumerate)) and _tracing():
        _refuse_in_try(in_try, "a `for` loop")
        _traced_for(iterable, set_target, body_fn, get_args, set_args, names, live, lists, keep, origin.here())
        return
    it = iter(iterable)
    for v in it:
        set_target(v)
        body_fn()
        if keep is None:
            continue
        k = keep()
        if isinstance(k, Tensor) and _tracing():
            # A tensor-dependent break in a loop over Python values: each
            # remaining iteration runs under a cond on the flags.
            for v in it:
                def step(v=v):
                    set_target(v)
                    body_fn()
                _if(k, step, lambda: None, get_args, set_args, names, live, True)
                k = keep()
            return
        if not _truth(k):
            return


class _TensorRange:
    """``range(...)`` with a tensor bound, iterated by a converted ``for``."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def python_range(self):
        return range(*(int(v) if isinstance(v, Tensor) else v for v in (self.start, self.stop, self.step)))

    def count(self):
        """The number of iterations as an int64 tensor (0 when the range is empty)."""
        oar = _oar()
        start, stop, step = (v if isinstance(v, Tensor) else _full(v, "int64") for v in (self.start, self.stop,
                                                                                       self.step))
        start, stop, step = (v.astype("int64") for v in (start, stop, step))
        up = (stop - start + step - 1) // step
        down = (start - stop - step - 1) // (-step)
        n = oar.where(step > 0, up, down) if isinstance(self.step, Tensor) else (up if self.step > 0 else down)
        return oar.maximum(n, oar.zeros([], "int64"))

    def item(self, i):
        start = self.start.astype("int64") if isinstance(self.start, Tensor) else self.start
        step = self.step.astype("int64") if isinstance(self.step, Tensor) else self.step
        return start + i * step


class _TensorEnumerate:
    """``enumerate(tensor)`` in a trace: a converted ``for`` loops over dim 0; Python iteration still works."""

    def __init__(self, x, start):
        self.x, self.start = x, start

    def __iter__(self):
        return iter(builtins.enumerate(self.x, self.start))


def Enumerate(iterable, start=0):
    """``enumerate`` whose loops over a tensor in a trace become while_loop ops (the index is a tensor).

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> list(_jst.Enumerate("ab", 1))
    [(1, 'a'), (2, 'b')]
    """
    if isinstance(iterable, Tensor) and _tracing():
        return _TensorEnumerate(iterable, start)
    return builtins.enumerate(iterable, start)


def Range(*args):
    """``range`` that accepts tensors: a Python range of ints otherwise.

    >>> import oar
    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> list(_jst.Range(oar.to_tensor(3)))
    [0, 1, 2]
    """
    if not any(isinstance(a, Tensor) for a in args):
        return builtins.range(*args)
    if not _tracing():
        return builtins.range(*(int(a) if isinstance(a, Tensor) else a for a in args))
    if len(args) == 1:
        return _TensorRange(0, args[0], 1)
    if len(args) == 2:
        return _TensorRange(args[0], args[1], 1)
    if len(args) == 3:
        return _TensorRange(*args)
    raise TypeError(f"[oar.jit.to_static] range expected at most 3 arguments, got {len(args)}")


def _dim0(x):
    """dim 0 of ``x``: an int when static, else an int64 tensor computed in the program."""
    shape = _C._ir_traced_shape(x) if _tracing() else None
    if shape is None or shape[0] >= 0:
        return x.shape[0]
    oar = _oar()
    # The shape is not a value of the program: count the rows of a one-column slice.
    col = x
    for axis in range(1, x.ndim):
        col = oar.slice(col, [axis], [0], [1])
    return oar.ones_like(col, dtype="int64").sum()


def _row(x, i):
    return _oar().index_select(x, i.reshape([1]), axis=0).squeeze(0)


def _traced_for(iterable, set_target, body_fn, get_args, set_args, names, live, lists, keep, where):
    oar = _oar()
    if isinstance(iterable, _TensorRange):
        n = iterable.count()
        item = iterable.item
    elif isinstance(iterable, _TensorEnumerate):
        x, start = iterable.x, iterable.start
        n = _dim0(x)
        item = lambda i: (i + start, _row(x, i))  # noqa: E731
    else:
        if iterable.ndim == 0:
            raise origin.error(where, "a `for` loop over a 0-D Tensor", "Iterate over a tensor with at least "
                               "one dim; a 0-D tensor has no rows.")
        n = _dim0(iterable)
        x = iterable
        item = lambda i: _row(x, i)  # noqa: E731
    if not isinstance(n, Tensor):
        n = _full(n, "int64")
    box = [oar.zeros([], "int64")]

    def test():
        more = box[0] < n
        if keep is None:
            return more
        return oar.logical_and(more, _bool_tensor(keep()))

    def body():
        i = box[0]
        set_target(item(i))
        body_fn()
        box[0] = i + 1

    def get2():
        return tuple(get_args()) + (box[0],)

    def set2(values):
        set_args(tuple(values[:-1]))
        box[0] = values[-1]

    _traced_loop(test, body, get2, set2, tuple(names) + ("<for index>",), live, lists, where, "a `for` loop")


def _traced_loop(test_fn, body_fn, get_args, set_args, names, live, lists, where, what):
    hints = {}
    init = list(get_args())
    for _ in range(2 * len(names) + 2):
        set_args(tuple(init))  # an aborted attempt may have left its values
        try:
            result = _traced_loop_once(test_fn, body_fn, get_args, set_args, names, live, lists, where, what,
                                       hints, init)
        except _Retry as r:
            if all(hints.get(k) == v for k, v in r.hints.items()):
                raise origin.error(where, f"could not convert {what}", _CF_ADVICE) from None
            hints.update(r.hints)
            continue
        set_args(result)
        return
    raise origin.error(where, f"could not convert {what}", _CF_ADVICE)


def _empty_list_data(hint, pool):
    """The [0, *element] start of a tensor list. Element dims that are dynamic are taken from a tensor of
    the same traced shape among ``pool`` (the loop's values), so that they stay dynamic in the program."""
    _, dtype, shape, traced = hint
    oar = _oar()
    if traced is not None and -1 in traced:
        for t in pool:
            if isinstance(t, Tensor) and _C._ir_traced_shape(t) == list(traced):
                return oar.zeros_like(t, dtype=dtype).unsqueeze(0)[0:0]
    return oar.zeros([0] + list(shape), dtype)


def _carry(name, value, hint, lists, pool=()):
    """The loop value for one variable and its kind ("tensor", "number", "nested", "list"; None: not carried)."""
    if name in lists and type(value) is list:
        value = TensorList.from_list(name, value)
    if hint is not None:
        if hint[0] == "placeholder" and isinstance(value, UndefinedVar):
            value = _placeholder(hint[1])
        elif hint[0] == "dtype" and (isinstance(value, Tensor) or _is_num(value)):
            value = value.astype(hint[1]) if isinstance(value, Tensor) else _full(value, hint[1])
        elif hint[0] == "list" and isinstance(value, TensorList) and value.data is None:
            value = TensorList(name, _empty_list_data(hint, pool))
    if isinstance(value, TensorList):
        # An empty list's element type is unknown until the body appends: its
        # first append asks for a retry that starts it with that type.
        return value, ("list" if value.data is not None else None)
    if isinstance(value, Tensor):
        return value, "tensor"
    if _is_num(value):
        return _full(value), "number"
    if isinstance(value, (list, tuple, dict)):
        leaves = []
        layout = _nn._flatten(value, leaves)
        if leaves and _all_tensors(layout):
            return value, "nested"
    return value, None


def _all_tensors(layout):
    kind = layout[0]
    if kind == "tensor":
        return True
    if kind == "const":
        return False
    return all(_all_tensors(s) for s in (layout[2] if kind is dict else layout[1]))


def _traced_loop_once(test_fn, body_fn, get_args, set_args, names, live, lists, where, what, hints, init):
    values, kinds = [], []
    pool = [v for v in init if isinstance(v, Tensor)]
    for n, v in zip(names, init):
        v, kind = _carry(n, v, hints.get(n), lists, pool)
        values.append(v)
        kinds.append(kind)
    carried = [k for k, kind in enumerate(kinds) if kind is not None]
    start = [values[k].data if kinds[k] == "list" else values[k] for k in carried]

    def assign(cv):
        cur = list(values)
        for k, v in zip(carried, cv):
            cur[k] = TensorList(names[k], v) if kinds[k] == "list" else v
        set_args(tuple(cur))

    def run_cond(*cv):
        assign(cv)
        pred = test_fn()
        if isinstance(pred, Tensor):
            return _check_pred(pred, where, what)
        return _full(bool(pred), "bool")

    def run_body(*cv):
        assign(cv)
        try:
            body_fn()
        except NotImplementedError as e:
            _explain_in_place(e)
            raise
        after = list(get_args())
        outs = []
        for j, k in enumerate(carried):
            outs.append(_body_out(names[k], after[k], kinds[k], start[j], hints, where, what))
        for k, n in enumerate(names):
            if kinds[k] is not None:
                continue
            v = after[k]
            if isinstance(values[k], UndefinedVar) and n in live and not isinstance(v, UndefinedVar):
                leaves = []
                _nn._flatten(v, leaves)
                if leaves:
                    raise _Retry({n: ("placeholder", _spec(v))}, loop=True)
        side["after"] = after
        return outs

    side = {}
    outs = _nn.while_loop(run_cond, run_body, start) if carried else None
    if outs is None:
        raise origin.error(where, f"{what} on a tensor assigns no tensor variable",
                           "The loop's condition depends on a tensor but its body changes no tensor variable, so "
                           "it would never end; assign the variables the condition reads in the body.")
    final = list(values)
    for k, v in zip(carried, outs):
        final[k] = TensorList(names[k], v) if kinds[k] == "list" else v
    after = side.get("after", init)
    for k, n in enumerate(names):
        if kinds[k] is None and not _same(after[k], values[k]):
            before = _show(values[k], _kind(values[k], []))
            final[k] = UndefinedVar(n, f"'{n}' is assigned in {what} on a tensor ({where.filename}, line "
                                       f"{where.lineno}) but is not a tensor before the loop ({before}), so it "
                                       f"has no value after the loop. Give it a value before the loop: a tensor, "
                                       f"or a Python value that the loop leaves unchanged.")
    return tuple(final)


def _body_out(name, v, kind, start, hints, where, what):
    if kind == "list":
        if not isinstance(v, TensorList):
            raise origin.error(where, f"list '{name}' is replaced inside {what} on a tensor",
                               "A list appended to in a converted loop becomes a tensor list; append to it or pop "
                               "from it, but do not assign the name another value in the loop.")
        v = v.data
    elif _is_num(v) and isinstance(start, Tensor):
        # A flag or counter set to a Python value (also in the example's
        # remaining iterations, which run eagerly): a tensor of the loop's type.
        v = _full(v, start.dtype, list(start.shape) if not _tracing() else _static_shape(start))
    if kind == "nested":
        leaves, sleaves = [], []
        layout, slayout = _nn._flatten(v, leaves), _nn._flatten(start, sleaves)
        if not _nn._same_layout(layout, slayout):
            raise origin.error(where, f"variable '{name}' changes structure in {what} on a tensor",
                               f"It is {_nn._describe(slayout)} before the loop and {_nn._describe(layout)} after "
                               f"its body. A loop value must keep its structure (the same keys, items and nesting "
                               f"of tensors); create every key or item before the loop.")
        for a, b in zip(leaves, sleaves):
            _check_loop_type(name, a, b, kind, where, what)
        return v
    if not isinstance(v, Tensor):
        raise origin.error(where, f"variable '{name}' is a tensor before {what} on a tensor but "
                           f"{type(v).__name__} after its body", _CF_ADVICE)
    if v.dtype != start.dtype and kind == "number":
        raise _Retry({name: ("dtype", v.dtype)}, loop=True)
    _check_loop_type(name, v, start, kind, where, what)
    return v


def _check_loop_type(name, v, start, kind, where, what):
    if v.dtype != start.dtype or len(v.shape) != len(start.shape):
        raise origin.error(where, f"variable '{name}' changes type in {what} on a tensor",
                           f"It is {_dtype_name(start.dtype)} of rank {len(start.shape)} before the loop and "
                           f"{_dtype_name(v.dtype)} of rank {len(v.shape)} after its body. A loop value must keep "
                           f"its dtype and rank (its dims may change); cast it (x.astype(...)) or give it the "
                           f"loop's dtype and rank before the loop.")


# ---------------------------------------------------------------- tensor lists


class TensorList:
    """A Python list appended to in a loop on a tensor: one tensor that grows along a new leading axis.

    ``append``, ``pop()``, ``lst[i]``, ``len(lst)`` (converted), ``oar.stack(lst)``
    and ``oar.concat(lst)`` work; the number of elements is dynamic.

    >>> import oar
    >>> from oar.jit.dy2static.convert_ops import TensorList
    >>> lst = TensorList("lst", oar.zeros([0, 2]))
    >>> lst.append(oar.ones([2])); lst.append(oar.full([2], 2.0))
    >>> lst.data.shape, lst[1].numpy().tolist(), lst.pop().numpy().tolist(), lst.data.shape
    ([2, 2], [2.0, 2.0], [2.0, 2.0], [1, 2])
    """

    def __init__(self, name, data):
        self.name = name
        self.data = data

    @classmethod
    def from_list(cls, name, items):
        if not items:
            return cls(name, None)
        if not all(isinstance(t, Tensor) for t in items):
            return items
        return cls(name, _oar().stack(items))

    def append(self, value):
        if not isinstance(value, Tensor):
            value = _full(value)
        if self.data is None:
            traced = _C._ir_traced_shape(value) if _tracing() else None
            raise _Retry({self.name: ("list", value.dtype, _static_shape(value), traced)}, loop=True)
        self.data = _oar().concat([self.data, value.unsqueeze(0).astype(self.data.dtype)], axis=0)

    def pop(self, index=-1):
        if index != -1:
            raise TypeError(f"[oar.jit.to_static] a tensor list supports only pop() of the last element, "
                            f"got pop({index!r})")
        if self.data is None or (self.data.shape[0] == 0 and _C._ir_traced_shape(self.data) in (None, [0] + list(
                self.data.shape[1:]))):
            raise IndexError("pop from empty list")
        if _tracing():
            # The length is decided when the program runs: an empty list raises there, as Python's pop does.
            def check(n):
                if int(n) == 0:
                    raise IndexError("pop from empty list (a list built in a loop of a to_static function)")

            _observe(check, [_dim0(self.data) if isinstance(_dim0(self.data), Tensor) else
                             _full(self.data.shape[0], "int64")])
        last = self.data[-1]
        self.data = self.data[:-1]
        return last

    def __getitem__(self, index):
        if isinstance(index, Tensor):
            return _row(self.data, index.astype("int64"))
        return self.data[index]

    def __len__(self):
        raise TypeError("[oar.jit.to_static] the length of a list built in a loop on a tensor is a tensor; "
                        "len(lst) in a converted function gives it, or use lst.data.shape[0]")

    def __iter__(self):
        raise TypeError("[oar.jit.to_static] a list built in a loop on a tensor cannot be iterated in Python; use "
                        "oar.stack(lst) or lst[i]")

    def __repr__(self):
        return f"TensorList({self.name!r}, {self.data!r})"


def _stack(fn, axis_default=0):
    def call(x, axis=axis_default, name=None):
        if isinstance(x, TensorList):
            data = x.data
            return data if axis == 0 else _oar().moveaxis(data, 0, axis)
        return fn(x, axis=axis)
    return call


def _concat(fn):
    def call(x, axis=0, name=None):
        if isinstance(x, TensorList):
            data = x.data
            rank = data.ndim - 1
            axis = axis + rank if axis < 0 else axis
            moved = _oar().moveaxis(data, 0, axis)
            return _oar().flatten(moved, axis, axis + 1)
        return fn(x, axis=axis)
    return call


# ast operator name -> (in-place, out-of-place) functions of the operator module.
_AUG = {"Add": ("iadd", "add"), "Sub": ("isub", "sub"), "Mult": ("imul", "mul"), "Div": ("itruediv", "truediv"),
        "FloorDiv": ("ifloordiv", "floordiv"), "Mod": ("imod", "mod"), "Pow": ("ipow", "pow"),
        "MatMult": ("imatmul", "matmul"), "BitAnd": ("iand", "and_"), "BitOr": ("ior", "or_"),
        "BitXor": ("ixor", "xor"), "LShift": ("ilshift", "lshift"), "RShift": ("irshift", "rshift")}


def AugAssign(op, target, value):
    """``target op= value`` for a local name: Python's in-place operator, except on a tensor in a
    trace, where the out-of-place form gives the new value (a branch or loop body of a converted
    control-flow op may not write in place to a tensor from outside it).

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.AugAssign("Add", [1], [2])
    [1, 2]
    """
    import operator

    inplace, outplace = _AUG[op]
    return getattr(operator, outplace if isinstance(target, Tensor) and _tracing() else inplace)(target, value)


def AugItem(op, container, index, value):
    """``container[index] op= value``: the item is updated with AugAssign (out of place on a traced
    tensor) and stored back, so that it works on a list or dict of tensors inside a branch or loop body.

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> a = [1, 2]
    >>> _jst.AugItem("Add", a, 0, 5); a
    [6, 2]
    """
    container[index] = AugAssign(op, container[index], value)


def Shape(x):
    """``x.shape``: Python's value, with reads of dynamic dims reported while tracing
    (Note [reading dynamic sizes] in oar/jit/_guard.py).

    >>> import oar
    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.Shape(oar.ones([3, 2]))
    [3, 2]
    """
    shape = x.shape
    if isinstance(x, Tensor) and _tracing():
        traced = _C._ir_traced_shape(x)
        if traced is not None and -1 in traced:
            return _TracedShape(shape, traced)
    return shape


class _TracedShape(list):
    """x.shape of a traced tensor with dynamic dims: reading one of those (an index, a slice,
    unpacking) is reported; the static dims read as usual."""

    def __init__(self, shape, traced):
        super().__init__(shape)
        self._traced = list(traced)

    def _read(self, dims):
        if -1 in dims:
            from .._guard import dynamic_size_read

            dynamic_size_read(f"x.shape of a tensor of shape {self._traced} (-1: dynamic)")

    def __getitem__(self, i):
        self._read(self._traced[i] if isinstance(i, slice) else [self._traced[i]])
        return super().__getitem__(i)

    def __iter__(self):
        self._read(self._traced)
        return super().__iter__()


def Len(x):
    """``len`` that gives a tensor for a dynamic dim 0 (or a tensor list) in a trace, else Python's len.

    >>> import oar
    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.Len(oar.ones([3, 2])), _jst.Len([1, 2])
    (3, 2)
    """
    if isinstance(x, TensorList):
        return _dim0(x.data) if _tracing() else x.data.shape[0]
    if isinstance(x, Tensor) and _tracing():
        return _dim0(x)
    return builtins.len(x)


# ---------------------------------------------------------------- expressions


def And(x_fn, y_fn):
    """``x and y``: logical_and of bool tensors in a trace, Python's short circuit otherwise.

    >>> import oar
    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.And(lambda: 1, lambda: 2), _jst.And(lambda: 0, lambda: 1 / 0)
    (2, 0)
    """
    x = x_fn()
    if isinstance(x, Tensor) and _tracing():
        return _oar().logical_and(_bool_tensor(x), _bool_tensor(y_fn()))
    if not x:
        return x
    return y_fn()


def Or(x_fn, y_fn):
    """``x or y``: logical_or of bool tensors in a trace, Python's short circuit otherwise.

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.Or(lambda: 0, lambda: 2), _jst.Or(lambda: 1, lambda: 1 / 0)
    (2, 1)
    """
    x = x_fn()
    if isinstance(x, Tensor) and _tracing():
        return _oar().logical_or(_bool_tensor(x), _bool_tensor(y_fn()))
    if x:
        return x
    return y_fn()


_COMPARE = {"Eq": "eq", "NotEq": "ne", "Lt": "lt", "LtE": "le", "Gt": "gt", "GtE": "ge", "Is": "is_",
            "IsNot": "is_not"}


def Compare(left, ops, rights):
    """A comparison chain ``a < b < c``: each operand evaluated once, as Python does, the links joined
    with ``And`` (a logical_and of tensors in a trace, Python's short circuit otherwise).

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.Compare(1, ("Lt", "Lt"), (lambda: 2, lambda: 3))
    True
    >>> _jst.Compare(3, ("Lt", "Lt"), (lambda: 2, lambda: 1 / 0))  # the chain is decided: 1 / 0 never runs
    False
    """
    import operator

    right = rights[0]()
    op = ops[0]
    if op == "In":
        first = left in right
    elif op == "NotIn":
        first = left not in right
    else:
        first = getattr(operator, _COMPARE[op])(left, right)
    if len(ops) == 1:
        return first
    return And(lambda: first, lambda: Compare(right, ops[1:], rights[1:]))


def Not(x):
    """``not x``: logical_not of a tensor in a trace, Python's ``not`` otherwise.

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.Not(0)
    True
    """
    if isinstance(x, Tensor) and _tracing():
        return _oar().logical_not(_bool_tensor(x))
    return not x


def IfExp(pred, true_fn, false_fn):
    """``a if pred else b``: a cond op for a tensor predicate in a trace, Python otherwise.

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.IfExp(False, lambda: "a", lambda: "b")
    'b'
    """
    if not (isinstance(pred, Tensor) and _tracing()):
        return true_fn() if _truth(pred) else false_fn()
    where = origin.here()
    pred = _check_pred(pred, where, "a conditional expression")
    box = {}

    def get():
        return (box.get("v", UndefinedVar("<value>")),)

    def put(values):
        box["v"] = values[0]

    def branch(fn):
        def run():
            box["v"] = fn()
        return run

    IfElse(pred, branch(true_fn), branch(false_fn), get, put, ("<value>",), ("<value>",))
    return box["v"]


def _observe(func, tensors):
    """Records ``func(*numpy values)`` as a py_func op that runs on each run of the program.

    The op's output (the first input, unchanged) is not used; the op is kept
    because py_func ops run Python and are not removed as dead code.
    """
    from ...static import InputSpec
    from ...static.py_func import py_func

    first = tensors[0]
    shape = _C._ir_traced_shape(first) or list(first.shape)

    def run(*arrays):
        func(*arrays)
        return arrays[0]

    py_func(run, list(tensors), InputSpec(list(shape), first.dtype))


def Assert(test, msg_fn=None):
    """``assert test, msg``: checked in Python on Python values and eager tensors; for a tensor in a trace
    the check is an op of the program, run on the test's value each time the program runs.

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.Assert(True)
    >>> try:
    ...     _jst.Assert(False, lambda: "bad")
    ... except AssertionError as e:
    ...     print(e)
    bad
    """
    if isinstance(test, Tensor) and _tracing():
        where = origin.here()
        try:
            msg = msg_fn() if msg_fn is not None else None
        except origin.dy2static_error():
            msg = None  # f"{tensor}": the example's values would be misleading; the line is named below
        if isinstance(msg, Tensor):
            msg = None

        def check(value):
            import numpy as np

            if not np.all(value):
                text = f"{msg} " if msg is not None else ""
                raise AssertionError(f"{text}(an assert of a to_static function failed when its program ran: "
                                     f"{where.filename}, line {where.lineno})")

        _observe(check, [test])
        return
    if isinstance(test, Tensor) and _paused():
        return  # the example's remaining loop iterations: the program checks them when it runs
    if not _truth(test):
        if msg_fn is None:
            raise AssertionError
        raise AssertionError(msg_fn())


_STATE_ADVICE = ("A program cannot replay changes to Python state: the value would change once, at trace time, "
                 "and every later call would reuse it. Keep such state in a tensor (a buffer registered with "
                 "register_buffer, updated in place), move the update out of the to_static function, or use "
                 "to_static(..., full_graph=False), which runs it in Python on every call.")


def StateWrite(what, value):
    """Checks a write to Python state outside the function (``self.n += 1``, ``global`` names):
    a Python number or string written while a program is captured raises Dy2StaticError;
    returns ``value``.

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.StateWrite("self.calls", 3)  # outside a capture: allowed
    3
    """
    if _tracing() and isinstance(value, (bool, int, float, complex, str)):
        raise origin.error(origin.here(), f"changing the Python value of {what}", _STATE_ADVICE)
    return value


def _refuse_format(value):
    if type(value) in (tuple, list) and _tracing():  # "%s %s" % (a, b)
        for v in value:
            _refuse_format(v)
    if type(value) is dict and _tracing():  # "%(a)s" % {"a": t}
        for v in value.values():
            _refuse_format(v)
    if isinstance(value, Tensor) and _tracing():
        raise origin.error(origin.here(), "formatting a Tensor into a Python string (an f-string, str(), repr(), "
                           "format(), %)",
                           "The string would hold the values of the example the program was traced with, and "
                           "every later call would reuse it. print(tensor) inside the function prints the values "
                           "each time the program runs; or return the tensor and format it outside the "
                           "to_static function (f\"{t.shape}\" and f\"{t.dtype}\" are fine).")


def FormatValue(value):
    """A value of an f-string (``f"{value}"``): refused for a tensor while a program is captured.

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> f"{_jst.FormatValue(2):>3}"
    '  2'
    """
    _refuse_format(value)
    return value


def _formatting(fn):
    def call(*args, **kwargs):
        for a in args:
            _refuse_format(a)
        for a in kwargs.values():
            _refuse_format(a)
        return fn(*args, **kwargs)
    return call


def Print(*args, **kwargs):
    """``print``: prints when it runs; with tensor arguments in a trace it becomes an op of the program
    that prints their values each time the program runs (and not while tracing).

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.Print("hi", 1)
    hi 1
    """
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if positions and _paused():
        return  # the example's remaining loop iterations: the program prints them when it runs
    if not positions or not _tracing():
        builtins.print(*args, **kwargs)
        return

    def show(*arrays):
        items = list(args)
        for i, a in zip(positions, arrays):
            items[i] = _oar().to_tensor(a)
        builtins.print(*items, **kwargs)

    _observe(show, [args[i] for i in positions])


def Call(fn, /, *args, **kwargs):
    """``fn(*args, **kwargs)`` in converted code: user functions and layers are converted first, and an
    argument without a value (UndefinedVar) is reported by name.

    >>> from oar.jit.dy2static import convert_ops as _jst
    >>> _jst.Call(len, [1, 2])
    2
    """
    from .convert_call import convert_callable

    for a in args:
        if type(a) is UndefinedVar:
            a._oar_fail()
    for a in kwargs.values():
        if type(a) is UndefinedVar:
            a._oar_fail()
    if getattr(fn, "__name__", None) == "format" and type(getattr(fn, "__self__", None)) is str:
        fn = _formatting(fn)  # "{}".format(tensor)
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None or not _tracing():
        return convert_callable(fn)(*args, **kwargs)
    depth = _active.get(code, 0)
    if depth >= 16 and _frame_depth() > sys.getrecursionlimit() * 3 // 4:
        raise origin.error(origin.here(), f"{fn.__qualname__} calls itself {depth} levels deep while the program "
                           f"is traced", "A recursion that ends on a tensor condition cannot be captured: both "
                           "branches of a tensor `if` are traced, so the recursive call is traced again at every "
                           "level, without end. Write it as a `while` loop on the tensor condition, or bound the "
                           "depth with a Python int argument.")
    _active[code] = depth + 1
    try:
        return convert_callable(fn)(*args, **kwargs)
    finally:
        _active[code] = depth


# code object -> how many calls of it are running in converted code being traced (recursion depth).
_active = {}


def _frame_depth():
    f, n = sys._getframe(), 0
    while f is not None:
        f, n = f.f_back, n + 1
    return n

