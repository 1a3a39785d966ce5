"""What a CALL does in the symbolic executor: inline, call directly, or break.

- User Python functions (not in the oar package) are inlined: interpreted as
  nested frames of the segment, so their Python reads are guarded too.
- oar functions and Tensor methods run directly on the tracer's tensors: the
  ops they dispatch are recorded. The exceptions are those with effects a
  program cannot replay (``loss.backward()``, optimizer steps, reading a
  tensor's value, in-place updates of tensors from outside the segment).
- A Layer without hooks whose forward is user code has its forward inlined;
  a layer with hooks has Layer.__call__ inlined (so are the hooks); other
  layers are called directly.
- Pure builtins (len, isinstance, range, zip, min, math.*, str methods...)
  run directly; writes to containers from outside the segment, ``print``,
  NumPy and any other library are breaks.
In a concrete step (the break itself), user functions run as their own
frames (their own segments), everything else is simply called.
"""
import builtins
import functools
import types

import numpy as np

from ... import _C
from ...nn import Layer
from .variables import NULL, describe, is_oar_callable, is_oar_code, user_dunder

Tensor = _C.Tensor

_PURE_BUILTINS = {getattr(builtins, n) for n in (
    "len", "isinstance", "issubclass", "abs", "min", "max", "sum", "round", "divmod", "pow", "callable", "hash",
    "id", "iter", "repr", "ascii", "format", "chr", "ord", "sorted", "any", "all", "hex", "oct", "bin")}
_PURE_TYPES = {list, tuple, dict, set, frozenset, range, zip, enumerate, reversed, int, float, bool, str, bytes,
               complex, slice, object, type}
# Builtins that call a function they are given (key=, iter(callable, sentinel)).
_CALLS_BACK = {builtins.sorted, builtins.min, builtins.max, builtins.iter}
_PURE_MODULES = {"math", "operator", "_operator", "cmath"}
_CONTAINERS = (list, dict, set)
_READ_METHODS = {"copy", "index", "count", "get", "items", "keys", "values", "__getitem__", "__contains__",
                 "__len__", "__iter__", "union", "intersection", "difference", "issubset", "issuperset",
                 "isdisjoint", "symmetric_difference", "__reversed__", "fromkeys"}
# Tensor methods whose effect is not an op a program could replay.
_TENSOR_BREAKS = {
    "backward": "Tensor.backward(): the backward pass runs eagerly",
    "register_hook": "Tensor.register_hook(): hooks run eagerly",
    "clear_grad": "Tensor.clear_grad(): gradients are updated eagerly",
    "clear_gradient": "Tensor.clear_gradient(): gradients are updated eagerly",
    "set_value": "Tensor.set_value(): writes a tensor from outside",
    "numpy": "Tensor.numpy() reads a Tensor's value",
    "item": "Tensor.item() reads a Tensor's value",
    "tolist": "Tensor.tolist() reads a Tensor's value",
}
_OAR_FUNCTION_BREAKS = {"save", "load", "seed", "set_device", "set_flags", "backward", "set_default_dtype",
                        "set_grad_enabled", "set_printoptions",
                        # generator state: a program draws from the generator when it runs
                        "get_rng_state", "set_rng_state", "get_cuda_rng_state", "set_cuda_rng_state",
                        "manual_seed",
                        # they change parameters or layers
                        "vector_to_parameters", "weight_norm", "remove_weight_norm", "spectral_norm"}


def _oar_inplace_break(ctx, name, args):
    """An oar function named like an in-place op (``clip_grad_norm_``, ``relu_``) updates what it
    is given: captured only when that is a tensor the segment computed."""
    if not name.endswith("_") or name.startswith("_"):
        return None
    if ctx.tracing and args and isinstance(args[0], Tensor) and id(args[0]) in ctx.cap.made:
        return None
    return f"call to {name}: updates its arguments in place (runs eagerly)"


def _oar_method_break(self_obj, name):
    """The break reason for calling method `name` of an oar object that is not a Tensor, or None."""
    if isinstance(self_obj, Layer):
        if name in ("train", "eval", "to", "apply", "set_state_dict", "load_dict", "register_forward_pre_hook",
                    "register_forward_post_hook", "register_buffer", "add_parameter", "add_sublayer",
                    "clear_gradients", "astype", "float", "half", "bfloat16", "double"):
            return f"Layer.{name}(): changes the layer, runs eagerly"
        return None
    cls = type(self_obj).__name__
    return f"call to {cls}.{name}: a method of an oar object with effects outside the program (runs eagerly)"


def classify(ctx, f, args):
    """(kind, target, extra, reason): kind is 'inline', 'direct', 'layer' or 'break'."""
    # A StaticFunction (a converted layer or function called from converted code): its Python code.
    if type(f).__name__ == "StaticFunction" and hasattr(f, "_target"):
        f = f._target
    if isinstance(f, types.MethodType):
        func, self_obj = f.__func__, f.__self__
        if isinstance(func, types.FunctionType) and not is_oar_code(func.__code__):
            return _user_function(func, (self_obj,))
        if isinstance(self_obj, Tensor):
            return _tensor_method(ctx, self_obj, getattr(func, "__name__", ""), f)
        if is_oar_callable(func):
            if isinstance(self_obj, Layer) or isinstance(self_obj, type):
                reason = _oar_method_break(self_obj, func.__name__) if isinstance(self_obj, Layer) else None
                return ("break", f, None, reason) if reason else ("direct", f, None, None)
            return "break", f, None, _oar_method_break(self_obj, func.__name__)
        return "break", f, None, f"call to {describe(f)}: not an oar function"
    if isinstance(f, types.FunctionType):
        if is_oar_code(f.__code__):
            if _user_callable(getattr(f, "__wrapped__", None)):
                # An oar decorator (no_grad()) around user code, which would run uninterpreted.
                return "break", f, None, f"call to {describe(f)}: an oar decorator around Python code " \
                                         f"(runs eagerly)"
            if getattr(f, "__name__", "") in _OAR_FUNCTION_BREAKS:
                return "break", f, None, f"call to {describe(f)}: has effects outside the program (runs eagerly)"
            reason = _oar_inplace_break(ctx, f.__name__, args)
            if reason is not None:
                return "break", f, None, reason
            return "direct", f, None, None
        return _user_function(f, ())
    if isinstance(f, Layer):
        if f._forward_pre_hooks or f._forward_post_hooks:
            # Layer.__call__ itself is interpreted, so that the hooks (user code) are inlined
            # and their Python effects are breaks, run on every call.
            return "inline", type(f).__call__, (f,), None
        fwd = f.forward
        if type(fwd).__name__ == "StaticFunction" and hasattr(fwd, "_target"):
            fwd = fwd._target
        if isinstance(fwd, types.MethodType) and isinstance(fwd.__func__, types.FunctionType) and \
                not is_oar_code(fwd.__func__.__code__):
            return _user_function(fwd.__func__, (fwd.__self__,))
        if type(f).__name__ == "Sequential" and is_oar_callable(type(f).forward):
            return "inline", type(f).forward, (f,), None
        return "direct", f, None, None
    if f is NULL:
        return "break", f, None, "internal: call of NULL"
    if f is super:
        return "super", f, None, None
    if isinstance(f, type):
        if f in _PURE_TYPES or issubclass(f, BaseException):
            return "direct", f, None, None
        if is_oar_callable(f) and issubclass(f, Tensor):
            return "direct", f, None, None
        return "break", f, None, f"constructing a {describe(f)} object: runs eagerly"
    if isinstance(f, (types.BuiltinFunctionType, types.BuiltinMethodType)) or type(f).__name__ in (
            "method-wrapper", "nb_func", "nb_bound_method"):
        return _builtin(ctx, f, args)
    if is_oar_callable(f):
        return "direct", f, None, None
    call = getattr(type(f), "__call__", None)
    if isinstance(call, types.FunctionType) and not is_oar_code(call.__code__):
        return _user_function(call, (f,))
    return "break", f, None, f"call to {describe(f)}: not an oar function"


def _user_callable(v):
    """A Python function or method outside the oar package (or a partial of one)."""
    if isinstance(v, functools.partial):
        v = v.func
    if isinstance(v, types.MethodType):
        v = v.__func__
    return isinstance(v, types.FunctionType) and not is_oar_code(v.__code__)


def _user_function(func, bound):
    if getattr(func, "_oar_not_to_static", False):
        return "break", func, bound, f"call to {func.__qualname__}: marked not_to_static (runs eagerly)"
    from .interpreter import inlinable

    reason = inlinable(func)
    if reason is not None:
        return "break", func, bound, f"call to {func.__qualname__}: {reason}"
    return "inline", func, bound, None


def _tensor_method(ctx, t, name, f):
    if name.startswith("_") and not name.startswith("__"):
        name = name[1:]  # Tensor methods written in Python are named _backward, _item, ...
    reason = _TENSOR_BREAKS.get(name)
    if reason is not None:
        return "break", f, None, reason
    if name in ("numel", "__len__") and ctx.tracing:
        from .opcodes import data_dependent_size

        if data_dependent_size(t):  # a Python int from a size known only when the program runs
            return "break", f, None, f"Tensor.{name}() of a tensor whose size depends on the data"
    if name.endswith("_") and not name.startswith("_") and ctx.tracing and id(t) not in ctx.cap.made:
        return "break", f, None, f"Tensor.{name}(): an in-place update of a tensor from outside the captured code"
    return "direct", f, None, None


def _builtin(ctx, f, args):
    name = getattr(f, "__name__", "")
    self_obj = getattr(f, "__self__", None)
    if isinstance(self_obj, Tensor):
        return _tensor_method(ctx, self_obj, name, f)
    if f is print:
        return "break", f, None, "call to print: prints a value (runs eagerly)"
    if f is getattr or f is hasattr:
        return "getattr", f, None, None
    if f is next:
        return "next", f, None, None
    if f is super:
        return "super", f, None, None
    if f in _PURE_BUILTINS:
        return "direct", f, None, None
    if self_obj is not None and not isinstance(self_obj, types.ModuleType):
        if isinstance(self_obj, _CONTAINERS) or type(self_obj) in (str, bytes, tuple, frozenset):
            if isinstance(self_obj, _CONTAINERS) and name not in _READ_METHODS:
                ctx.mutate(self_obj, f"{type(self_obj).__name__}.{name}()")
            return "direct", f, None, None
        if is_oar_callable(f) or type(self_obj).__module__.startswith("oar"):
            if isinstance(self_obj, Layer) or isinstance(self_obj, Tensor):
                return "direct", f, None, None
            return "break", f, None, _oar_method_break(self_obj, name)
        return "break", f, None, f"call to {describe(f)}: not an oar function"
    mod = getattr(f, "__module__", None) or ""
    if mod in _PURE_MODULES:
        return "direct", f, None, None
    if mod == "oar" or mod.startswith("oar."):
        if name in _OAR_FUNCTION_BREAKS:
            return "break", f, None, f"call to {describe(f)}: has effects outside the program (runs eagerly)"
        reason = _oar_inplace_break(ctx, name, args)
        if reason is not None:
            return "break", f, None, reason
        return "direct", f, None, None
    return "break", f, None, f"call to {describe(f)}: not an oar function"


def call(frame, f, args, kwargs):
    """Performs a call from interpreted code, in the frame's mode."""
    ctx = frame.ctx
    if (f is builtins.globals or f is builtins.locals or f is builtins.vars or f is builtins.dir) and \
            not args and not kwargs:
        # They read the calling frame: called from here they would see the interpreter's own.
        # The frame's namespace is read concretely (a dict from outside, unguarded otherwise).
        ctx.brk(f"call to {f.__name__}(): reads the frame's namespace (runs eagerly)")
        if f is builtins.globals:
            return frame.globals
        names = _frame_locals(frame)
        return sorted(names) if f is builtins.dir else names
    kind, target, bound, reason = classify(ctx, f, args)
    if ctx.tracing:
        cap = ctx.cap
        for a in args:
            if id(a) in cap.opaque:
                raise_break(ctx, f"passing an iterator from outside the captured code to {describe(f)}")
        for a in kwargs.values():
            if id(a) in cap.opaque:
                raise_break(ctx, f"passing an iterator from outside the captured code to {describe(f)}")
    if kind == "getattr":
        return _getattr(frame, f, args, kwargs)
    if kind == "next":
        if ctx.tracing and args and (id(args[0]) in ctx.cap.opaque or id(args[0]) in ctx.cap.outside):
            ctx.brk("next() of an iterator from outside the captured code")
        return next(*args)
    if kind == "super":
        if not args:
            args = _implicit_super_args(frame)
        return super(*args)
    if kind == "inline":
        full = tuple(bound) + tuple(args) if bound else tuple(args)
        if ctx.tracing and isinstance(f, Layer) and target is not type(f).__call__:
            # Its forward is inlined because it has no hooks (classify): one registered later
            # must lead to a new capture, where Layer.__call__ runs them.
            g = ctx.cap.guards
            g.add(f"not {g.const(f)}._forward_pre_hooks and not {g.const(f)}._forward_post_hooks")
        if ctx.tracing:
            if frame.depth + 1 > _max_depth():
                ctx.brk(f"call to {target.__qualname__}: nested too deeply to inline")
            from .interpreter import bind_arguments

            try:
                L = bind_arguments(target, full, kwargs)
            except TypeError as e:
                e._oar_sot_user = True
                raise
            if id(target) not in cap.made:
                # A function from outside is guarded by identity, but its code and defaults can
                # be replaced: what the inlined body came from is guarded too.
                k = cap.guards.const(target)
                cap.guards.add(f"{k}.__code__ is {cap.guards.const(target.__code__)}")
                cap.guard(f"{k}.__defaults__", target.__defaults__, initial=False)
                cap.guard(f"{k}.__kwdefaults__", target.__kwdefaults__, initial=False)
            if target.__closure__ and id(target) not in cap.made:
                # The cells of a function from outside are fixed objects: their contents are guarded.
                for c in target.__closure__:
                    cap.src.setdefault(id(c), (c, cap.guards.const(c)))
                    cap.outside[id(c)] = c
            return ctx.made(ctx.runner.run_nested(target, L, ctx, frame.depth + 1))
        return ctx.runner.run_function(target, full, kwargs)
    if kind == "direct" and ctx.tracing:
        layer = f if isinstance(f, Layer) else getattr(f, "__self__", None)
        if isinstance(layer, Layer):
            # Its Python code is not interpreted: guard what it reads (training flags, parameters).
            from .guards import layer_state

            g = ctx.cap.guards
            g.add(f"layer_state({g.const(layer)}) == {g.const(layer_state(layer))}")
            # The trace updates its buffers (batch-norm statistics) in place on the real tensors;
            # the program's run applies the update again, so the capture restores them after.
            ctx.cap.save_buffers(layer)
    if kind == "direct" and ctx.tracing and (f in _CALLS_BACK or getattr(f, "__name__", "") == "sort" and
                                             isinstance(getattr(f, "__self__", None), list)):
        # sorted(key=...), max(key=...), list.sort(key=...) call Python from C: the key function
        # is not interpreted, so what it reads would not be guarded.
        for a in (*args, *kwargs.values()):
            if (isinstance(a, (types.FunctionType, types.MethodType)) and not is_oar_callable(a)) or \
                    (user_dunder(a) is None and isinstance(getattr(type(a), "__call__", None), types.FunctionType)
                     and not is_oar_callable(a) and not isinstance(a, Layer)):
                ctx.brk(f"call to {describe(f)} with a Python function it calls: runs eagerly")
    if kind == "direct" and ctx.tracing and (f is id or f is hash or (
            isinstance(getattr(f, "__self__", None), dict) and getattr(f, "__name__", "") in (
                "get", "pop", "setdefault", "__getitem__", "__contains__"))):
        # What they return depends on which object an argument is (a default hash is its id).
        for a in args:
            ctx.cap.identity_read(a)
    if kind == "direct" and ctx.tracing and f is len and args and isinstance(args[0], Layer):
        ctx.cap.guard_layer_items(args[0])
    if kind == "direct" and ctx.tracing and f is len and args and isinstance(args[0], Tensor):
        from .opcodes import data_dependent_size

        if data_dependent_size(args[0]):
            ctx.brk("len() of a tensor whose size depends on the data: read when the program runs")
    if kind == "direct" and ctx.tracing and ((isinstance(f, types.BuiltinFunctionType) and f in _PURE_BUILTINS)
                                             or (isinstance(f, type) and f in _PURE_TYPES)):
        # len(obj), str(obj), sorted(obj)... call a user class's special methods directly:
        # what they read is not guarded, so the call runs eagerly.
        for a in (*args, *kwargs.values()):
            name = user_dunder(a)
            if name is not None:
                ctx.brk(f"call to {describe(f)} on a {type(a).__name__} object (its {name} is Python code): "
                        f"runs eagerly")
    if kind == "direct" and ctx.tracing and not isinstance(f, (Layer, type)) and is_oar_callable(f) and \
            not isinstance(getattr(f, "__self__", None), (Tensor, Layer)):
        # An oar function given a Python callback (recompute(fn, x), a cond's branches) would
        # run it uninterpreted: what it reads would not be guarded.
        for a in (*args, *kwargs.values()):
            if _user_callable(a):
                ctx.brk(f"call to {describe(f)} with a Python function it calls: runs eagerly")
    if kind == "direct" and ctx.tracing and _has_ndarray(args, kwargs):
        ctx.brk(f"call to {describe(f)} with a NumPy array: runs eagerly (the tensor it makes is an input "
                f"of the next segment)")
    if kind == "break":
        if ctx.tracing:
            ctx.brk(reason)
        if bound is not None and isinstance(target, types.FunctionType):
            if reason and reason.endswith("(runs eagerly)"):
                return target(*bound, *args, **kwargs)
            return ctx.runner.run_function(target, tuple(bound) + tuple(args), kwargs)
        return f(*args, **kwargs)
    return ctx.made(f(*args, **kwargs))


def _frame_locals(frame):
    """The locals() of an interpreted frame: its bound variables by name, cells by contents."""
    code = frame.info.code
    names = code.co_varnames + tuple(c for c in code.co_cellvars if c not in code.co_varnames) + code.co_freevars
    out = {}
    for k, v in frame.L.items():
        if isinstance(k, tuple):  # 3.10 cells: ("cell", i) over co_cellvars then co_freevars
            name = (code.co_cellvars + code.co_freevars)[k[1]]
        elif k < len(names):
            name = names[k]
        else:
            continue
        if isinstance(v, types.CellType):
            try:
                v = v.cell_contents
            except ValueError:
                continue
        out[name] = v
    return out


def _has_ndarray(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, np.ndarray):
            return True
        if type(a) in (list, tuple) and any(isinstance(x, np.ndarray) for x in a):
            return True
    return False


def raise_break(ctx, reason):
    ctx.brk(reason)


def _max_depth():
    from .interpreter import MAX_INLINE_DEPTH

    return MAX_INLINE_DEPTH


def _getattr(frame, f, args, kwargs):
    from .opcodes import load_attr

    if kwargs or len(args) not in (2, 3) or type(args[1]) is not str:
        return f(*args, **kwargs)
    obj, name = args[0], args[1]
    try:
        v = load_attr(frame, obj, name)
    except AttributeError:
        ctx = frame.ctx
        if ctx.tracing:
            base = ctx.cap.expr_of(obj)
            if base is not None:
                ctx.cap.guards.add(f"not hasattr({base}, {name!r})")
        if len(args) == 3:
            return args[2]
        if f is hasattr:
            return False
        raise
    return True if f is hasattr else v


def _implicit_super_args(frame):
    code = frame.info.code
    if "__class__" not in code.co_freevars or code.co_argcount == 0:
        raise RuntimeError("super(): no arguments")
    j = code.co_freevars.index("__class__")
    cell = frame.L[frame.info.nlocalsplus - len(code.co_freevars) + j]
    first = frame.L.get(0)
    if isinstance(first, types.CellType):
        first = first.cell_contents
    return (cell.cell_contents, first)


__all__ = ["call", "classify"]
