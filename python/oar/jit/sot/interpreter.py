"""The symbolic bytecode executor behind ``to_static(full_graph=False)``.

Note [segments and graph breaks]
A function's bytecode is interpreted in Python over an explicit frame state
(locals by slot, the value stack). Capture starts at an instruction index
with a frame state, inside one ``_ir.trace`` whose examples are the tensors
of that state: tensor ops dispatched while interpreting are recorded into a
Program, Python values are computed as they are and guarded by where they
came from. It stops at a RETURN or at an instruction it cannot capture (a
GRAPH BREAK: a tensor used as a Python bool, ``.item()``, a call to NumPy or
``print``, ``loss.backward()``, a write to an object from outside, ...). The
program's outputs are the live tensors of the frame, and a template says how
to rebuild the rest of the frame from them. The break instruction then runs
concretely (the same handlers, on real tensors, outside any trace), and the
next segment starts at the instruction after it: looked up by its guards in
the cache of that index, or captured. Since everything is interpreted,
execution can resume at any instruction, inside loops included.

Calls to user functions are inlined (interpreted as nested frames within the
segment). A break inside an inlined call aborts the capture, which is retried
with the outermost CALL marked as a break; that CALL then runs concretely by
interpreting the callee as its own sequence of segments (its own cache, keyed
by code object). An aborted capture touched no Python object from outside the
segment: writes to those are breaks themselves, found before they happen.

On a cache hit nothing is interpreted: the guards are checked, the program
runs (through api._run, so autograd flows across segments and breaks) and the
frame is rebuilt from the template.

Exceptions: code inside ``try`` and ``with`` is captured like any other. An
instruction that raises where the code's exception table covers it is retried
as a break; its concrete step routes the exception to the handler the table
names (unwinding the stack as CPython does), and the handler code, like
entering a ``with`` block, runs concretely.
"""
import functools
import json
import os
import sys
import types
import warnings

from ... import _C, _ir
from ...autograd import no_grad as _no_grad
from ...framework import get_default_dtype
from .. import _guard
from ..._C import Tensor
from . import opcodes
from .cache import Segment, code_info, dispatch_key
from .report import GraphBreak
from .state import Capture
from .variables import TemplateBuilder, Unrebuildable, rebuild

_SOT_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PY = sys.version_info[:2]

# Nested frames inlined in one segment; deeper calls run as their own frames.
MAX_INLINE_DEPTH = 12


class BreakHere(Exception):
    """Raised by a handler, before it changes the frame, when its instruction must not be captured."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason
        self.nested = False


class _Abort(Exception):
    """A capture must be retried with a break at instruction `idx` of the outermost frame."""

    def __init__(self, idx, reason):
        super().__init__(reason)
        self.idx = idx
        self.reason = reason


class _SkippedTensorRead(Exception):
    """A capture without some frame tensors as inputs read one of them after all."""


def _used_inputs(program):
    """Indices of the program inputs some op reads, or None when the program cannot tell."""
    try:
        doc = json.loads(_C._ir_to_json(program._prog))
    except Exception:  # a program the format cannot write (a py_layer op, ...): keep every input
        return None
    ids = {inp["id"]: k for k, inp in enumerate(doc.get("inputs", ()))}
    used = set()
    stack = [doc.get("ops", [])]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for v in node.get("operands", ()):
                if isinstance(v, int) and v in ids:
                    used.add(ids[v])
            stack.extend(v for k, v in node.items() if k != "operands" and isinstance(v, (list, dict)))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (list, dict)))
    for out in doc.get("outputs", ()):
        if out.get("id") in ids:
            used.add(ids[out["id"]])
    for upd in doc.get("state_updates", ()):
        for v in upd.values():
            if isinstance(v, int) and v in ids:
                used.add(ids[v])
    return used


class _Retry(Exception):
    """A capture must be retried as it is (with exact shapes)."""


class InternalError(RuntimeError):
    """The executor met something it cannot do; the safety net runs the function eagerly."""


RETURN = opcodes.RETURN  # a handler's result: the frame returned (value in frame.retval)


class Frame:
    """One interpreted function activation."""

    __slots__ = ("info", "L", "S", "globals", "builtins", "func", "closure", "kw_names", "depth", "ctx",
                 "retval", "exc_info")

    def __init__(self, info, L, S, func, ctx, depth):
        self.info = info
        self.L = L
        self.S = S
        self.func = func
        self.closure = func.__closure__ or ()
        self.globals = func.__globals__
        b = self.globals.get("__builtins__", __builtins__)
        self.builtins = b if isinstance(b, dict) else b.__dict__
        self.kw_names = None
        self.depth = depth
        self.ctx = ctx
        self.retval = None
        self.exc_info = None  # the exception being handled (PUSH_EXC_INFO / POP_EXCEPT)


class Ctx:
    """The mode the handlers run in: capturing a segment (tracing) or one concrete step."""

    def __init__(self, runner, cap=None):
        self.runner = runner
        self.cap = cap
        self.tracing = cap is not None
        self.outer_idx = 0

    def brk(self, reason):
        if self.tracing:
            raise BreakHere(reason)

    def mutate(self, obj, what):
        """A write to obj: a break if obj exists outside the segment."""
        if self.tracing and id(obj) in self.cap.outside:
            raise BreakHere(f"{what} of a Python object from outside the captured code")

    def made(self, v):
        """Notes the tensors a segment computed (in-place ops on them are captured)."""
        if self.tracing:
            if isinstance(v, Tensor):
                self._made(v)
            elif type(v) in (list, tuple):
                for x in v:
                    if isinstance(x, Tensor):
                        self._made(x)
        return v

    def _made(self, t):
        cap = self.cap
        # Inputs and tensors from outside (parameters, globals) may come back from a call:
        # they stay outside, so an in-place update of one remains a break.
        if id(t) in cap.input_index or id(t) in cap.outside or _C._ir_traced_shape(t) is None:
            return
        cap.made[id(t)] = t


def bind_arguments(func, args, kwargs):
    """The locals (slot -> value) of a call, as CPython binds them; TypeError as it would raise."""
    co = func.__code__
    nargs, nkw, npos = co.co_argcount, co.co_kwonlyargcount, co.co_posonlyargcount
    names = co.co_varnames
    has_var, has_kw = bool(co.co_flags & 0x04), bool(co.co_flags & 0x08)
    name = func.__qualname__
    if len(args) > nargs and not has_var:
        # (CPython's wording, so that errors read as they do eagerly.)
        low, given = nargs - len(func.__defaults__ or ()), len(args)
        takes = f"from {low} to {nargs}" if low < nargs else f"{nargs}"
        raise TypeError(f"{name}() takes {takes} positional argument{'' if nargs == 1 else 's'} but {given} "
                        f"{'was' if given == 1 else 'were'} given")
    L = {i: a for i, a in enumerate(args[:nargs])}
    i_var = nargs + nkw
    if has_var:
        L[i_var] = tuple(args[nargs:])
    extra = {}
    for k, v in kwargs.items():
        try:
            j = names.index(k, npos, nargs + nkw)
        except ValueError:
            j = -1
        if j >= 0:
            if j in L:
                raise TypeError(f"{name}() got multiple values for argument '{k}'")
            L[j] = v
        elif has_kw:
            extra[k] = v
        else:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
    if has_kw:
        L[i_var + has_var] = extra
    defaults = func.__defaults__ or ()
    first_default = nargs - len(defaults)
    missing = [names[j] for j in range(min(first_default, nargs)) if j not in L]
    if missing:
        raise TypeError(_missing(name, missing, "positional"))
    for j in range(nargs):
        if j not in L:
            L[j] = defaults[j - first_default]
    kwd = func.__kwdefaults__ or {}
    missing = [names[j] for j in range(nargs, nargs + nkw) if j not in L and names[j] not in kwd]
    if missing:
        raise TypeError(_missing(name, missing, "keyword-only"))
    for j in range(nargs, nargs + nkw):
        if j not in L:
            L[j] = kwd[names[j]]
    if _PY < (3, 11):
        # 3.10 keeps cells apart from the locals, made at frame entry (later versions: MAKE_CELL,
        # COPY_FREE_VARS): slot ("cell", i) over co_cellvars then co_freevars.
        for i, cname in enumerate(co.co_cellvars):
            L[("cell", i)] = types.CellType(L[names.index(cname)]) if cname in names[:len(L)] and \
                names.index(cname) in L else types.CellType()
        for j, c in enumerate(func.__closure__ or ()):
            L[("cell", len(co.co_cellvars) + j)] = c
    return L


def _missing(name, missing, kind):
    """CPython's message for missing arguments."""
    quoted = [f"'{m}'" for m in missing]
    if len(quoted) == 1:
        listed = quoted[0]
    elif len(quoted) == 2:
        listed = f"{quoted[0]} and {quoted[1]}"
    else:
        listed = ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
    n = len(missing)
    return f"{name}() missing {n} required {kind} argument{'' if n == 1 else 's'}: {listed}"


def _reason_of(e):
    """A short break reason from a Dy2StaticError: its first line without the API prefix."""
    first = str(e).splitlines()[0] if str(e) else type(e).__name__
    first = first.replace("[oar.jit.to_static] ", "")
    return first.replace(" is not supported in a to_static function", " reads a Tensor's value")


def _is_internal(exc):
    """True for an exception raised by the executor's own code (not by user code or an op)."""
    if isinstance(exc, InternalError):
        return True
    if getattr(exc, "_oar_sot_user", False):
        return False
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    return last is not None and os.path.abspath(last.tb_frame.f_code.co_filename).startswith(_SOT_DIR)


class Runner:
    """Runs functions for one StaticFunction call tree, recording into its stats."""

    def __init__(self, stats, named_state=None):
        self.stats = stats
        self._named_state = named_state  # () -> (name, tensor) pairs naming the program parameters
        self._named = None
        self.dynamic = None  # id(tensor) -> dynamic axes (from input_spec) of the top frame's arguments
        self.build_strategy = None
        self.trail = None  # the segments of the top-level frame, None for a concrete step

    def whole_program(self):
        """The program of the last call when it ran as one segment from start to return, else None."""
        t = self.trail
        if t and len(t) == 1 and t[0] is not None and t[0].start == 0 and t[0].returns:
            return t[0].program
        return None
        self.side_effects = False  # a program or a concrete step ran in the current top-level call

    # ---- entry

    def run_function(self, func, args, kwargs):
        while isinstance(func, functools.partial):
            args, kwargs = func.args + tuple(args), {**func.keywords, **kwargs}
            func = func.func
        if isinstance(func, types.MethodType):
            args = (func.__self__,) + tuple(args)
            func = func.__func__
        if not isinstance(func, types.FunctionType):
            if type(func).__name__ == "StaticFunction":
                return self.run_function(func._target, args, kwargs)
            code = getattr(type(func).__call__, "__code__", None)
            if code is None:  # a callable object without Python code: nothing to interpret
                self.stats.add_break(GraphBreak("<unknown>", 0, f"call to {type(func).__name__}: not Python code, "
                                                                f"runs eagerly"))
                return func(*args, **kwargs)
            return self.run_function(types.MethodType(type(func).__call__, func), args, kwargs)
        info = code_info(func.__code__)
        if info.unsupported:
            self.stats.add_break(GraphBreak(func.__code__.co_filename, func.__code__.co_firstlineno,
                                            info.unsupported))
            return func(*args, **kwargs)
        try:
            L = bind_arguments(func, args, kwargs)
        except TypeError as e:
            e._oar_sot_user = True
            raise
        frame = Frame(info, L, [], func, None, 0)
        return self.drive(frame)

    def run_top(self, func, args, kwargs):
        """The safety net: an internal error before anything ran runs the function eagerly."""
        self.side_effects = False
        self.trail = None
        try:
            return self.run_function(func, args, kwargs)
        except Exception as e:
            if not _is_internal(e) or self.side_effects:
                raise
            code = getattr(getattr(func, "__func__", func), "__code__", None)
            self.stats.add_break(GraphBreak(code.co_filename if code else "<unknown>",
                                            code.co_firstlineno if code else 0,
                                            f"internal error of the bytecode executor ({type(e).__name__}: {e}): "
                                            f"the call ran eagerly"))
            return func(*args, **kwargs)

    # ---- the loop over segments and breaks

    def drive(self, frame):
        info = frame.info
        trail = None
        if self.trail is None:  # the top-level frame of this call
            self.trail = trail = []
        i = 0
        while True:
            if i in info.forced:
                seg = None
                reason = info.forced[i]
            else:
                seg = info.lookup(i, frame)
                if seg is None:
                    seg = self.capture(frame, i)
                else:
                    self.replay(seg, frame)
                self.stats.add_break(seg.brk)
                if trail is not None:
                    trail.append(seg)
                if seg.returns:
                    return frame.retval
                i = seg.end
                reason = None
            if reason is not None:
                self.stats.add_break(GraphBreak(info.code.co_filename, info.lines[i], reason))
            if trail is not None:
                trail.append(None)  # a concrete step
            nxt = self.concrete_step(frame, i)
            if nxt is RETURN:
                return frame.retval
            i = nxt

    def concrete_step(self, frame, i):
        """Runs instruction i on real values, outside any trace; returns the next index or RETURN."""
        self.side_effects = True
        frame.ctx = Ctx(self)
        inst = frame.info.insts[i]
        handler = opcodes.HANDLERS.get(inst.opname)
        if handler is None:
            raise InternalError(f"bytecode {inst.opname} is not supported")
        try:
            nxt = handler(frame, inst)
        except BaseException as e:
            if isinstance(e, InternalError):
                raise
            entry = frame.info.handler_for(i)
            if entry is None:
                raise
            # The code's own handler takes it (an except clause, a with block's __exit__).
            _, _, target, depth, lasti = entry
            del frame.S[depth:]
            if lasti:
                frame.S.append(inst.offset)
            frame.S.append(e)
            frame.kw_names = None
            return frame.info.index[target]
        if nxt is RETURN:
            return RETURN
        return i + 1 if nxt is None else nxt

    def replay(self, seg, frame):
        from ..api import _run

        self.side_effects = True
        L, S, CL = frame.L, frame.S, frame.closure
        inputs = seg.get_inputs(L, S, CL)
        paths = seg.get_paths(L, S, CL)
        outs = _run(seg.program, inputs)
        kind = seg.program._out_kind
        if kind is None:
            outs = [outs]
        elif kind is not list:
            outs = _ir._flatten(outs)[0]
        for k in seg.no_grad_outs:
            if isinstance(outs[k], Tensor) and not outs[k].stop_gradient:
                outs[k].stop_gradient = True
        memo = {}
        if seg.returns:
            frame.retval = rebuild(seg.ret_node, outs, paths, memo)
            return
        frame.L = {k: rebuild(n, outs, paths, memo) for k, n in seg.l_nodes.items()}
        frame.S = [rebuild(n, outs, paths, memo) for n in seg.s_nodes]
        frame.kw_names = seg.kw_names

    # ---- capture

    def capture(self, frame, start):
        info = frame.info
        recompile = bool(info.segments.get(start))
        while True:
            try:
                seg, end_frame = self._capture_once(frame, start)
            except _Retry:
                continue
            except _Abort as a:
                if a.idx in info.forced:
                    raise InternalError(f"capture of {info.code.co_name} aborted twice at instruction {a.idx}")
                info.forced[a.idx] = a.reason
                if a.idx == start:
                    seg = Segment(start)
                    seg.returns, seg.end = False, start
                    seg.program = None
                    # nothing captured: the caller runs the break concretely
                    return self._empty(seg, frame, a.reason)
                continue
            break
        seg = self._without_unused_inputs(seg, frame, start)
        self.stats.compile_count += 1
        if recompile:
            self.stats.recompile_count += 1
        info.add(seg)
        # The call itself runs the program, as every later call does: under autocast the
        # executor casts at run time (the trace records no casts), and training gets the
        # captured backward from the first call. The trace's own effects were undone.
        self.replay(seg, frame)
        return seg

    def _without_unused_inputs(self, seg, frame, start):
        """The segment captured again without the frame tensors no op read, when there are a few.

        Every tensor of the frame state is an input of the first capture, but a segment often
        only passes most of them on (a list that grows in a loop with a break in its body).
        Those are better rebuilt from the frame by identity than run through the program,
        guarded and gathered on each call."""
        used = _used_inputs(seg.program)
        if used is None:
            return seg
        unused = {id(t) for k, t in enumerate(seg.inputs) if k not in used}
        if len(unused) < 2:
            return seg
        try:
            lean, _ = self._capture_once(frame, start, skip=unused)
        except (_Retry, _Abort, _SkippedTensorRead):
            return seg
        return lean

    def _empty(self, seg, frame, reason):
        info = frame.info
        seg.brk = GraphBreak(info.code.co_filename, info.lines[seg.start], reason)
        return seg

    def _capture_once(self, frame, start, skip=None):
        info = frame.info
        key = dispatch_key(frame)
        cap = Capture()
        if skip:
            cap.skip = skip
        if start == 0 and self.dynamic and self.trail is not None and not self.trail:
            cap.dyn = self.dynamic
        g = cap.guards
        g.add(f"L.keys() == {g.const(set(frame.L))}")
        g.add(f"len(S) == {len(frame.S)}")
        # Global modes that Python code and oar functions may read: grad mode, the default dtype.
        g.add(f"{g.const(_C.is_grad_enabled)}() is {bool(_C.is_grad_enabled())}")
        g.add(f"{g.const(get_default_dtype)}() == {g.const(get_default_dtype())}")
        for k, v in frame.L.items():
            cap.guard(f"L[{k}]", v, initial=True)
        for j, v in enumerate(frame.S):
            cap.guard(f"S[{j}]", v, initial=True)
        if start == 0:
            for j, c in enumerate(frame.closure):
                cap.guard(f"CL[{j}]", c, initial=True)
        if frame.kw_names is not None:
            raise InternalError("a segment cannot start between KW_NAMES and CALL")
        tf = Frame(info, dict(frame.L), list(frame.S), frame.func, Ctx(self, cap), 0)
        result = {}

        def thunk(*_):
            _guard._state.converting += 1
            try:
                end = self._run_traced(tf, start)
            finally:
                _guard._state.converting -= 1
            if skip and any(_C._ir_traced_shape(t) is not None for _, t, _ in cap.skipped):
                raise _SkippedTensorRead()
            tb = TemplateBuilder(cap)
            try:
                if end[0] == "return":
                    result["ret"] = tb.node(tf.retval)
                else:
                    result["L"] = {k: tb.node(v) for k, v in tf.L.items()}
                    result["S"] = [tb.node(v) for v in tf.S]
            except Unrebuildable as u:
                at = u.origin if u.origin is not None else end[1] if end[0] == "break" else start
                raise _Abort(at, f"a {type(u.value).__name__} object made here would live across a graph break "
                                 f"(it cannot be rebuilt when the segment is replayed)") from None
            result["end"] = end
            result["tb"] = tb
            result["sg"] = tuple(bool(t.stop_gradient) for t in tb.outputs)
            return list(tb.outputs)

        if self._named is None:
            self._named = (self._named_state() if self._named_state is not None else None) or []
        # The trace computes on the real tensors: its in-place buffer updates (batch-norm
        # statistics) are undone, since the program's run applies them (Note [state updates]
        # in ir/tracer.h), and an aborted attempt must not leave them behind either.
        buffers = [b for _, b in self._named if not getattr(b, "trainable", False)]
        with _no_grad():
            saved = [_C.clone(b) for b in buffers]
        dyn = [cap.dyn.get(id(t)) for t in cap.inputs]
        # The segment's program then runs: the random numbers the trace drew are given back.
        rng = _C.get_rng_state()
        try:
            program, _ = _ir.trace(thunk, cap.inputs, dyn if any(dyn) else None, parameters=self._named)
        except BaseException as e:
            if isinstance(e, (_Abort, _SkippedTensorRead)) or not isinstance(e, Exception):
                raise
            if _is_internal(e) and not isinstance(e, InternalError):
                raise _Abort(tf.ctx.outer_idx, f"internal error of the bytecode executor "
                                               f"({type(e).__name__}: {e}): runs concretely") from None
            e.add_note(f"[oar.jit.to_static] raised while capturing {info.code.co_name} "
                       f"(full_graph=False); oar.jit.enable_to_static(False) runs it eagerly")
            raise
        finally:
            _C.set_rng_state(*rng)
            with _no_grad():
                for b, v in zip(buffers, saved):
                    b.copy_(v)
            cap.restore_buffers()
        if any(dyn) and program.notes:
            # A dynamic dim was fixed by the code (a reshape from x.shape): exact shapes from now on.
            self.dynamic = None
            self.stats.exact_shapes = True
            warnings.warn(f"[oar.jit.to_static] {info.code.co_name}: the traced program keeps some dynamic "
                          f"input dims fixed ({'; '.join(program.notes)}), e.g. a reshape computed from "
                          f"x.shape; it is traced again for each new input shape", stacklevel=5)
            raise _Retry()
        if self.build_strategy is not None:
            program.optimize(build_strategy=self.build_strategy)
        tb, end = result["tb"], result["end"]
        seg = Segment(start)
        seg.key = key
        seg.inputs = list(cap.inputs)
        seg.program = program
        seg.guard = g.compile()
        seg.guard_count = len(g.checks)
        seg.get_inputs = g.compile_getter(cap.input_exprs)
        seg.get_paths = g.compile_getter(tb.paths)
        seg.returns = end[0] == "return"
        seg.kw_names = tf.kw_names
        # Outputs that do not depend on a tensor requiring grad (detach(), no_grad blocks): a
        # captured backward may hand them back with stop_gradient False; eager's say True.
        seg.no_grad_outs = tuple(k for k, sg in enumerate(result["sg"]) if sg)
        if seg.returns:
            seg.ret_node = ret = result["ret"]
            seg.end = None
            if start == 0:
                # A whole call as one program: let it return the function's own result structure
                # (a Tensor, a tuple of them), as a program of the whole-graph mode does.
                n = len(tb.outputs)
                if ret == ("o", 0) and n == 1:
                    program._out_kind = None
                elif ret == ("t", [("o", i) for i in range(n)]) and n:
                    program._out_kind = _ir._flatten(tuple(tb.outputs))[1]
        else:
            seg.l_nodes, seg.s_nodes = result["L"], result["S"]
            seg.end = end[1]
            seg.brk = GraphBreak(info.code.co_filename, info.lines[end[1]], end[2])
        cap.keep.clear()
        return seg, tf

    def _run_traced(self, tf, start):
        """Interprets the outermost frame from `start` until a return or a break."""
        info = tf.info
        insts, forced, handlers = info.insts, info.forced, opcodes.HANDLERS
        ctx = tf.ctx
        cap = ctx.cap
        i = start
        first = True
        while True:
            if not first and i in forced:
                return ("break", i, forced[i])
            first = False
            ctx.outer_idx = i
            inst = insts[i]
            handler = handlers.get(inst.opname)
            try:
                if handler is None:
                    raise BreakHere(f"bytecode {inst.opname} is not supported")
                nxt = handler(tf, inst)
            except BreakHere as b:
                if b.nested:
                    raise _Abort(i, b.reason) from None
                return ("break", i, b.reason)
            except _guard.Dy2StaticError as e:
                raise _Abort(i, _reason_of(e)) from None
            except NotImplementedError as e:
                # What the tracer refuses (a data-dependent output shape, a write into a
                # parameter through a view, ...) runs eagerly instead.
                msg = str(e)
                if "[oar.ir.trace]" in msg or "being traced" in msg:
                    raise _Abort(i, f"not capturable: {msg.splitlines()[0]}") from None
                if info.handler_for(i) is not None:
                    raise _Abort(i, "an exception inside a try or with block: handled eagerly") from None
                raise
            except Exception as e:
                # (An error of the executor itself would show again when the instruction runs
                # concretely, so a covered instruction is always retried that way.)
                if isinstance(e, (_Abort, InternalError)) or info.handler_for(i) is None:
                    raise
                # The code catches exceptions here: the instruction runs concretely, where the
                # exception table is followed.
                raise _Abort(i, "an exception inside a try or with block: handled eagerly") from None
            if nxt is RETURN:
                return ("return",)
            S = tf.S
            if S:
                top = S[-1]
                if not isinstance(top, Tensor) and id(top) not in cap.origin and type(top) not in (int, bool):
                    cap.origin[id(top)] = (top, i)
            i = i + 1 if nxt is None else nxt

    def run_nested(self, func, L, ctx, depth):
        """Interprets an inlined call within the current segment; returns its value."""
        info = code_info(func.__code__)
        fr = Frame(info, L, [], func, ctx, depth)
        insts, handlers = info.insts, opcodes.HANDLERS
        i = 0
        try:
            while True:
                inst = insts[i]
                handler = handlers.get(inst.opname)
                if handler is None:
                    raise BreakHere(f"bytecode {inst.opname} is not supported")
                try:
                    nxt = handler(fr, inst)
                except (BreakHere, InternalError):
                    raise
                except Exception as e:
                    if info.handler_for(i) is None:
                        raise
                    # Caught by the callee's own try/with: the call runs as its own frames.
                    raise BreakHere("an exception inside a try or with block: handled eagerly") from None
                if nxt is RETURN:
                    return fr.retval
                i = i + 1 if nxt is None else nxt
        except BreakHere as b:
            b.nested = True
            raise


def inlinable(func):
    """None if func's code can be interpreted, else the reason it cannot."""
    return code_info(func.__code__).unsupported


__all__ = ["Runner", "BreakHere"]
