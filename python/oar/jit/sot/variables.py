"""What the symbolic executor knows about the Python values of a frame.

The executor runs on real objects: tensors are the tracer's tensors (their
ops are recorded) and Python values are the values themselves. What it adds
is, per value, where it came from (its SOURCE: a slot of the frame state, a
global, an attribute of a guarded object), so that a captured segment can be
guarded, and how to REBUILD the frame state at the segment's end from the
program's outputs when the segment is replayed (a template).

Note [guard policy]
Values in the frame state at a segment's start, and values the segment reads
through a source, are guarded by kind: tensors by dtype/shape/stop_gradient
(frame values become program inputs; tensors read through attributes or
globals are bound to the program and guarded by identity, stop_gradient and
shape); numbers, strings, None and tuples of them by type and value (floats
by sign too, NaN matching NaN); lists, tuples, dicts, deques and their
standard subclasses (namedtuple, OrderedDict, defaultdict) by type, length
and keys, then item by item; sets by a snapshot of their contents;
functions, classes, modules, layers and enums by identity (an inlined
function also by its code and defaults); any other object by type only, its
attributes being guarded when the segment reads them (lazily, so a per-call
object does not force a recapture on every call). One object reached by two
paths is guarded to stay one object. What reads more than attributes widens
the guard or breaks: reading an object's identity (``is``, default ``==``,
``in``, a dict key, id()) guards it by identity; builtins and operators that
would run a user class's special methods (``len``, ``bool``, ``__radd__``,
...) or a key function are graph breaks, since that Python would run
uninterpreted. Iterators among the other objects are OPAQUE: the segment may
pass them on, but advancing one is a graph break, since replaying the
segment would not advance it.
"""
import enum
import functools
import os
import types

import numpy as np

from ... import _C
from ...nn import Layer
from .._guard import _OAR_DIR

Tensor = _C.Tensor


class _Null:
    """The interpreter's NULL stack entry (pushed before a callable in CALL sequences)."""

    __slots__ = ()

    def __repr__(self):
        return "<NULL>"


NULL = _Null()

SIMPLE_TYPES = frozenset([type(None), bool, int, float, complex, str, bytes, type(Ellipsis),
                          type(NotImplemented)])
NB_TYPES = (type(_C._ir_is_tracing),)  # nanobind functions
STABLE_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type, enum.Enum, Layer,
                types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType,
                types.GetSetDescriptorType, types.MemberDescriptorType, staticmethod, classmethod, property,
                functools.partial) + NB_TYPES


def is_simple(v):
    """Immutable values compared by value (guards) and baked as constants (templates)."""
    t = type(v)
    if t in SIMPLE_TYPES:
        return True
    if t is tuple or t is frozenset:
        return all(is_simple(x) for x in v)
    if t is slice:
        return is_simple(v.start) and is_simple(v.stop) and is_simple(v.step)
    return t is range or isinstance(v, np.generic)


def bound_builtin(v):
    """The object a builtin method is bound to (``lst.append``, ``tensor.sum``), or None."""
    if isinstance(v, types.BuiltinMethodType) or type(v).__name__ in ("nb_bound_method", "method-wrapper"):
        self_obj = getattr(v, "__self__", None)
        if self_obj is not None and not isinstance(self_obj, types.ModuleType):
            return self_obj
    return None


def is_stable(v):
    """Long-lived objects guarded by identity."""
    if isinstance(v, STABLE_TYPES):
        return bound_builtin(v) is None
    return type(v).__name__ == "StaticFunction" and type(v).__module__.startswith("oar.jit")


_oar_code = {}


def is_oar_code(code):
    r = _oar_code.get(code)
    if r is None:
        r = _oar_code[code] = os.path.abspath(code.co_filename).startswith(_OAR_DIR)
    return r


def is_oar_callable(f):
    """Functions of the oar package (Python or bound C++): run directly on tracer tensors."""
    if isinstance(f, types.FunctionType):
        return is_oar_code(f.__code__)
    if isinstance(f, types.MethodType):
        return is_oar_callable(f.__func__)
    mod = getattr(f, "__module__", None) or ""
    return mod == "oar" or mod.startswith("oar.")


# Special methods through which builtins and operators read an object's value.
_VALUE_DUNDERS = ("__bool__", "__len__", "__iter__", "__next__", "__getitem__", "__contains__", "__str__",
                  "__repr__", "__format__", "__int__", "__float__", "__index__", "__complex__", "__hash__",
                  "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__abs__", "__neg__", "__pos__",
                  "__invert__", "__round__", "__trunc__", "__floor__", "__ceil__", "__reversed__")
_ARITH = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
          "rshift", "divmod")
_NUMBER_DUNDERS = tuple(f"__{p}{n}__" for n in _ARITH for p in ("", "r", "i"))


def user_dunder(v):
    """The name of a special method of v's class written in user Python (``__len__``,
    ``__bool__``, ``__radd__``, ...), or None. Builtins and operators call it without going
    through the interpreter, so what it reads is not guarded: such a use is a graph break."""
    t = type(v)
    if t in SIMPLE_TYPES or isinstance(v, (Tensor, np.ndarray)) or is_stable(v):
        return None
    for name in _VALUE_DUNDERS + _NUMBER_DUNDERS:
        fn = getattr(t, name, None)
        if isinstance(fn, types.FunctionType) and not is_oar_code(fn.__code__):
            return name
    return None


def _iterator_types():
    samples = [[], (), range(0), {}, {}.values(), {}.items(), "", set(), b""]
    ts = {type(iter(s)) for s in samples}
    ts.update({enumerate, zip, reversed, type(iter(reversed([])))})
    return frozenset(ts)


# Builtin iterators a template can rebuild through __reduce__ (their position included).
REDUCIBLE_ITERATORS = _iterator_types()


def describe(f):
    """A readable name for a callable in break reasons: ``numpy.sin``, ``Net.forward``."""
    mod = getattr(f, "__module__", None)
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__
    if isinstance(f, types.MethodType):
        return describe(f.__func__)
    if mod and mod != "builtins":
        return f"{mod}.{name}"
    return name


# ---------------------------------------------------------------- templates

class Unrebuildable(Exception):
    """A live value at a segment's end that a replay could not recreate."""

    def __init__(self, value, origin):
        super().__init__(type(value).__name__)
        self.value = value
        self.origin = origin


class TemplateBuilder:
    """Describes the frame state at a segment's end as nodes over the program's
    outputs, the segment's initial state (by expression) and constants.

    Nodes: ("o", k) output k; ("p", j) initial-state path j; ("k", obj) a
    constant; ("b", self, name) a builtin method bound to self; ("l"|"t"|"s",
    [nodes]); ("d", [(key, node)]); ("c", node|None) a new cell; ("f", ...) a function made in the segment; ("m", f, self) a
    bound method; ("r", fn, args, state) an iterator by __reduce__; ("a", n,
    node) / ("A", n) the first and later uses of one mutable object, so that
    aliasing survives the replay.
    """

    def __init__(self, cap):
        self.cap = cap
        self.outputs = []  # tensors, in output order
        self._out_index = {}
        self.paths = []  # expressions of initial-state objects passed through
        self._path_index = {}
        self._alias = {}  # id -> alias number
        self._origin = None

    def _path(self, expr):
        j = self._path_index.get(expr)
        if j is None:
            j = self._path_index[expr] = len(self.paths)
            self.paths.append(expr)
        return ("p", j)

    def node(self, v):
        cap = self.cap
        origin = cap.origin.get(id(v))
        if origin is not None:
            saved, self._origin = self._origin, origin[1]
            try:
                return self._node(v)
            finally:
                self._origin = saved
        return self._node(v)

    def _node(self, v):
        cap = self.cap
        if isinstance(v, Tensor):
            k = cap.input_index.get(id(v))
            if k is not None:
                return self._path(cap.input_exprs[k])
            src = cap.src.get(id(v))
            if src is not None:  # a frame tensor passed on without being an input
                return self._path(src[1])
            if id(v) in cap.outside:
                # A parameter or buffer read from outside (guarded by identity): the frame holds
                # that object, which the program's state updates write, not a copy of its value.
                return ("k", v)
            if _C._ir_traced_shape(v) is None:
                return ("k", v)  # never read by the trace: the same tensor object
            k = self._out_index.get(id(v))
            if k is None:
                k = self._out_index[id(v)] = len(self.outputs)
                self.outputs.append(v)
            return ("o", k)
        if v is NULL or is_simple(v):
            return ("k", v)
        src = cap.src.get(id(v))
        if src is not None:
            return self._path(src[1])
        if is_stable(v) and not (type(v) is types.FunctionType and id(v) in cap.made):
            # (A function made in the segment closes over this call's cells: it is rebuilt.)
            return ("k", v)
        bound = bound_builtin(v)
        if bound is not None and getattr(bound, v.__name__, None) is not None:
            return ("b", self.node(bound), v.__name__)
        n = self._alias.get(id(v))
        if n is not None:
            return ("A", n)
        t = type(v)
        if t in (list, tuple, dict, set, types.CellType, types.FunctionType, types.MethodType) \
                or t in REDUCIBLE_ITERATORS:
            if t is tuple:  # immutable: no identity to keep
                return ("t", [self.node(x) for x in v])
            n = self._alias[id(v)] = len(self._alias)
            cap.keep.append(v)
            return ("a", n, self._compound(v, t))
        raise Unrebuildable(v, self._origin)

    def _compound(self, v, t):
        if t is list:
            return ("l", [self.node(x) for x in v])
        if t is set:
            return ("s", [self.node(x) for x in v])
        if t is dict:
            return ("d", [(self.node(k), self.node(x)) for k, x in v.items()])
        if t is types.CellType:
            try:
                return ("c", self.node(v.cell_contents))
            except ValueError:  # empty cell
                return ("c", None)
        if t is types.FunctionType:
            closure = None if v.__closure__ is None else self.node(tuple(v.__closure__))
            return ("f", v.__code__, v.__globals__, v.__name__, v.__qualname__, self.node(v.__defaults__),
                    self.node(v.__kwdefaults__), closure)
        if t is types.MethodType:
            return ("m", self.node(v.__func__), self.node(v.__self__))
        red = v.__reduce__()
        state = red[2] if len(red) > 2 else None
        return ("r", red[0], self.node(tuple(red[1])), self.node(state))


def rebuild(node, outs, paths, memo):
    """The value a template node stands for, given program outputs and initial-state paths."""
    kind = node[0]
    if kind == "k":
        return node[1]
    if kind == "o":
        return outs[node[1]]
    if kind == "p":
        return paths[node[1]]
    if kind == "t":
        return tuple(rebuild(x, outs, paths, memo) for x in node[1])
    if kind == "A":
        return memo[node[1]]
    if kind == "b":
        return getattr(rebuild(node[1], outs, paths, memo), node[2])
    if kind == "a":
        n, inner = node[1], node[2]
        k = inner[0]
        if k == "l":
            memo[n] = v = []
            v.extend(rebuild(x, outs, paths, memo) for x in inner[1])
        elif k == "s":
            memo[n] = v = set()
            v.update(rebuild(x, outs, paths, memo) for x in inner[1])
        elif k == "d":
            memo[n] = v = {}
            for kn, xn in inner[1]:
                v[rebuild(kn, outs, paths, memo)] = rebuild(xn, outs, paths, memo)
        elif k == "c":
            memo[n] = v = types.CellType()
            if inner[1] is not None:
                v.cell_contents = rebuild(inner[1], outs, paths, memo)
        elif k == "f":
            _, code, glb, name, qualname, defaults, kwdefaults, closure = inner
            v = types.FunctionType(code, glb, name, rebuild(defaults, outs, paths, memo),
                                   None if closure is None else rebuild(closure, outs, paths, memo))
            v.__kwdefaults__ = rebuild(kwdefaults, outs, paths, memo)
            v.__qualname__ = qualname
            memo[n] = v
        elif k == "m":
            memo[n] = v = types.MethodType(rebuild(inner[1], outs, paths, memo), rebuild(inner[2], outs, paths, memo))
        else:  # "r": an iterator, recreated at the same position
            v = inner[1](*rebuild(inner[2], outs, paths, memo))
            state = rebuild(inner[3], outs, paths, memo)
            if state is not None:
                v.__setstate__(state)
            memo[n] = v
        return v
    raise AssertionError(f"unknown template node {kind}")
