"""Per-segment capture state: which frame values are program inputs, which
objects came from outside the segment, and the guards collected so far
(Note [guard policy] in variables.py)."""
import collections
import types

from ... import _C
from .guards import GuardSet
from .variables import NULL, REDUCIBLE_ITERATORS, bound_builtin, is_simple, is_stable

Tensor = _C.Tensor

# Attributes of these modules are taken as fixed: no guard per read.
_FIXED_MODULE_ROOTS = ("oar", "numpy", "math", "builtins", "operator", "functools", "itertools", "collections",
                       "typing", "dataclasses", "enum", "types")


def _fixed_module(m):
    name = getattr(m, "__name__", "") or ""
    return name.split(".", 1)[0] in _FIXED_MODULE_ROOTS


def _plain_subclass(t, bases):
    """A subclass of one of bases from the standard library or a namedtuple: its items are
    what matters (a user subclass may compute them in Python, read like any object)."""
    if not issubclass(t, bases):
        return False
    if hasattr(t, "_fields") and issubclass(t, tuple):
        return True
    return getattr(t, "__module__", "") == "collections"


class Capture:
    """What one segment capture knows about the values it touches."""

    def __init__(self):
        self.guards = GuardSet()
        self.inputs = []  # tensors of the initial state: the program's inputs
        self.input_exprs = []
        self.input_index = {}  # id -> input number
        self.src = {}  # id -> (obj, expr): objects re-read by expression (paths, lazily guarded objects)
        self.outside = {}  # id -> obj: objects that exist outside the segment (mutating one is a break)
        self.opaque = {}  # id -> obj: outside iterators (advancing one is a break)
        self.made = {}  # id -> tensor: tensors computed in the segment (in-place ops allowed)
        self.origin = {}  # id -> (obj, instruction index) of values made in the segment
        self.keep = []
        self.dyn = {}  # id(tensor) -> axes traced as dynamic dims (input_spec -1)
        self.skip = ()  # ids of frame tensors that are not inputs: no op reads them, they are passed on
        self.skipped = []  # (id, tensor, expr) of those met
        self.saved_buffers = {}  # id -> (buffer, copy, stop_gradient) of layers called directly

    # ---- guards (Note [guard policy])

    def guard(self, expr, v, initial, depth=0):
        g = self.guards
        if v is NULL:
            g.add(f"{expr} is {g.const(NULL)}")
            return
        if isinstance(v, Tensor):
            if initial and id(v) in self.skip:
                if id(v) not in self.src:
                    self.src[id(v)] = (v, expr)
                    self.outside[id(v)] = v
                    self.skipped.append((id(v), v, expr))
                elif self.src[id(v)][1] != expr:
                    # One tensor in two slots: the template rebuilds both from the first
                    # slot's path, so the aliasing must hold on replay too.
                    g.add(f"{expr} is {self.src[id(v)][1]}")
                    return
                # Python may still read its dtype and shape: those stay guarded.
                g.add(f"isinstance({expr}, Tensor) and {expr}.dtype == {g.const(v.dtype)} and "
                      f"{expr}.shape == {list(v.shape)!r} and {expr}.stop_gradient is {bool(v.stop_gradient)}")
                return
            if initial:
                k = self.input_index.get(id(v))
                if k is not None:  # one tensor in two slots: one input, aliasing guarded
                    g.add(f"{expr} is {self.input_exprs[k]}")
                    return
                self.input_index[id(v)] = len(self.inputs)
                self.inputs.append(v)
                self.input_exprs.append(expr)
                axes = self.dyn.get(id(v))
                shape = list(v.shape)
                if axes:
                    shape_check = f"len({expr}.shape) == {len(shape)}" + "".join(
                        f" and {expr}.shape[{i}] == {d}" for i, d in enumerate(shape) if i not in axes)
                else:
                    shape_check = f"{expr}.shape == {shape!r}"
                g.add(f"isinstance({expr}, Tensor) and {expr}.dtype == {g.const(v.dtype)} and "
                      f"{shape_check} and {expr}.stop_gradient is {bool(v.stop_gradient)}")
            elif id(v) not in self.input_index:
                # Bound to the program by identity; its stop_gradient decides which outputs need
                # gradients, and an in-place reshape_ would not fit the program.
                k = g.const(v)
                g.add(f"{expr} is {k} and {k}.stop_gradient is {bool(v.stop_gradient)} and "
                      f"{k}.shape == {list(v.shape)!r}")
                self.outside[id(v)] = v
            return
        t = type(v)
        if v is None or t is bool:
            g.add(f"{expr} is {v!r}")
            return
        if t is float:
            # By value and sign: 0.0 == -0.0, but 1 / x and copysign tell them apart; and a NaN
            # matches a NaN (== alone would recapture on every call).
            if v == v and v != 0 and v not in (float("inf"), -float("inf")):
                g.add(f"type({expr}) is float and {expr} == {v!r}")
            else:
                g.add(f"type({expr}) is float and same_float({expr}, {g.const(v)})")
            return
        if is_simple(v):
            g.add(f"type({expr}) is {g.const(t)} and {expr} == {g.const(v)}")
            return
        if id(v) in self.src:
            first = self.src[id(v)][1]
            if first != expr:
                # One object reached by two paths: later reads are guarded through the first
                # path, so the two must stay one object.
                g.add(f"{expr} is {first}")
            return
        if is_stable(v):
            g.add(f"{expr} is {g.const(v)}")
            self.outside[id(v)] = v
            return
        self.outside[id(v)] = v
        self.src.setdefault(id(v), (v, expr))
        if depth > 8:  # deeply nested data: by identity
            g.add(f"{expr} is {g.const(v)}")
            return
        if (t is list or t is tuple) and len(v) > 8 and all(type(x) in (int, float, str, bool) for x in v):
            # A long list of plain values: one comparison (list(v) is a snapshot, not the live list).
            g.add(f"type({expr}) is {t.__name__} and {expr} == {g.const(t(v))}")
            g.add(f"[type(x) for x in {expr}] == {g.const([type(x) for x in v])}")
            return
        if t is list or t is tuple or t is collections.deque or _plain_subclass(t, (list, tuple)):
            # (Subclasses too: a namedtuple, whose fields builtins and oar functions read directly.)
            g.add(f"type({expr}) is {g.const(t)} and len({expr}) == {len(v)}")
            for i, x in enumerate(v):
                self.guard(f"{expr}[{i}]", x, initial, depth + 1)
            return
        if t is dict or _plain_subclass(t, (dict,)):
            # (An OrderedDict or defaultdict is read by builtins without any code to interpret:
            # its contents are guarded like a dict's.)
            keys = list(v)
            g.add(f"type({expr}) is {g.const(t)} and list({expr}) == {g.const(keys)}")
            for k in keys:
                key = repr(k) if is_simple(k) and type(k) in (int, str) else g.const(k)
                self.guard(f"{expr}[{key}]", v[k], initial, depth + 1)
            return
        if t is set or t is frozenset:
            # sorted(s), len(s), `in` read a set's contents directly: compare them with a snapshot
            # (by identity for elements that are not plain values).
            if all(is_simple(x) for x in v):
                g.add(f"type({expr}) is {t.__name__} and {expr} == {g.const(frozenset(v))}")
            else:
                g.add(f"type({expr}) is {t.__name__} and len({expr}) == {len(v)} and "
                      f"{{id(x) for x in {expr}}} == {{id(x) for x in {g.const(tuple(v))}}}")
            return
        if t is types.CellType:
            g.add(f"type({expr}) is CellType")
            try:
                contents = v.cell_contents
            except ValueError:
                g.add(f"not hasattr({expr}, 'cell_contents')")
                return
            self.guard(f"{expr}.cell_contents", contents, initial, depth + 1)
            return
        if t is types.MethodType:
            g.add(f"type({expr}) is {g.const(t)} and {expr}.__func__ is {g.const(v.__func__)}")
            self.guard(f"{expr}.__self__", v.__self__, initial, depth + 1)
            return
        g.add(f"type({expr}) is {g.const(t)}")
        bound = bound_builtin(v)
        if bound is not None:
            g.add(f"{expr}.__name__ == {v.__name__!r}")
            self.guard(f"{expr}.__self__", bound, initial, depth + 1)
            return
        if t in REDUCIBLE_ITERATORS or hasattr(t, "__next__"):
            self.opaque[id(v)] = v

    def identity_read(self, v, depth=0):
        """An operation reads v's identity (``is``, default ``==`` and hash, ``in``, a dict key,
        id()): an object from outside, guarded by type only so far, is now guarded by identity;
        in an outside container, so are its items."""
        if depth > 2 or v is None or isinstance(v, Tensor) or is_simple(v) or is_stable(v):
            return
        s = self.src.get(id(v))
        if s is None:
            return
        t = type(v)
        if t in (list, tuple, set, frozenset, collections.deque) or _plain_subclass(t, (list, tuple)):
            for x in v:
                self.identity_read(x, depth + 1)
        elif t is dict or _plain_subclass(t, (dict,)):
            for k in v:
                self.identity_read(k, depth + 1)
        else:
            self.guards.add(f"{s[1]} is {self.guards.const(v)}")

    def save_buffers(self, layer):
        """Keeps a copy of the buffers of layer and its sublayers, restored after the trace."""
        from ...autograd import no_grad

        for sub in layer.sublayers(include_self=True):
            for b in (*sub._buffers.values(), *sub._parameters.values()):
                # (Statistics may be non-trainable parameters, as batch norm's are.)
                if b is not None and not getattr(b, "trainable", False) and id(b) not in self.saved_buffers:
                    with no_grad():
                        self.saved_buffers[id(b)] = (b, _C.clone(b), b.stop_gradient)

    def restore_buffers(self):
        from ...autograd import no_grad

        with no_grad():
            for b, v, sg in self.saved_buffers.values():
                b.copy_(v)
                b.stop_gradient = sg

    def guard_layer_items(self, layer):
        """Iterating, indexing or len() of a layer (a LayerList) runs its oar code directly:
        which sublayers and parameters it holds is guarded."""
        from .guards import layer_items

        g = self.guards
        g.add(f"same_items(layer_items({g.const(layer)}), {g.const(layer_items(layer))})")

    def expr_of(self, obj):
        """The guard expression that reaches obj, or None for values made in the segment."""
        s = self.src.get(id(obj))
        if s is not None:
            return s[1]
        if is_stable(obj) and (id(obj) in self.outside or not isinstance(obj, types.FunctionType)):
            if isinstance(obj, types.ModuleType) and _fixed_module(obj):
                return None
            return self.guards.const(obj)
        return None

    def loaded(self, base_expr, suffix, v):
        """Guards a value read through a source (attribute, global, closure cell)."""
        if base_expr is None:
            return
        self.guard(base_expr + suffix, v, initial=False)
