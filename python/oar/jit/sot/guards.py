"""Guards: the checks that decide whether a captured segment may run for a
new frame state, compiled to one Python function per segment.

A guard is a Python expression over the frame state at the segment's start:
``L`` (the locals by slot), ``S`` (the value stack) and ``CL`` (the closure
cells of the function), plus constants ``K0, K1, ...`` the segment holds on
to. Tensors are checked by dtype, shape and stop_gradient; numbers, strings
and tuples of them by type and value; functions, classes, modules and layers
by identity; attributes, globals and closure contents the segment read, by
their expression (``K3.training == True``).
"""
import math
import types

from ... import _C

Tensor = _C.Tensor


def layer_state(layer):
    """What an oar layer called directly depends on besides its inputs: the training
    flags, settings and forward hooks of it and its sublayers, and which tensors are
    their parameters and buffers (with their stop_gradient)."""
    out, stack, seen = [], [layer], None
    while stack:
        sub = stack.pop()
        # Its settings (training, Dropout.p, LeakyReLU's slope, ...) are read by forward code that
        # is not interpreted: the plain values among its attributes are compared.
        out.extend([(k, v) for k, v in sub.__dict__.items() if type(v) in _PLAIN or _plain_tuple(v)])
        pre, post = sub._forward_pre_hooks, sub._forward_post_hooks
        if pre or post:  # hooks run inside the call (their keys are unique per registration)
            out.append((tuple(pre), tuple(post)))
        out.extend([(id(t), t is None or t.stop_gradient) for t in sub._parameters.values()])
        if sub._buffers:
            out.extend([(id(t), t is None or t.stop_gradient) for t in sub._buffers.values()])
        if sub._sub_layers:
            if seen is None:
                seen = {id(layer)}
            for v in sub._sub_layers.values():
                if v is not None and id(v) not in seen:
                    seen.add(id(v))
                    stack.append(v)
                elif v is None:
                    out.append(None)
    return tuple(out)


_PLAIN = (type(None), bool, int, float, str)


def _plain_tuple(v):
    return type(v) is tuple and all(type(x) in _PLAIN for x in v)


def layer_items(layer):
    """The sublayers and parameters of a container layer, as its __iter__, len and [] see them."""
    return tuple(layer._sub_layers.values()) + tuple(layer._parameters.values())


def super_attr(this, self_class, name):
    """What super(this, obj).name finds in the class dicts (obj of class self_class), or None."""
    mro = self_class.__mro__
    for c in mro[mro.index(this) + 1:]:
        if name in c.__dict__:
            return c.__dict__[name]
    return None


def same_items(a, b):
    """Whether two tuples hold the same objects (by identity)."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def same_float(a, b):
    """Float equality for guards: -0.0 is not 0.0, and NaN is NaN."""
    if a != a:
        return b != b
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


class GuardSet:
    """Collects guard expressions and the constants they name, then compiles them."""

    def __init__(self):
        self.checks = []
        self._seen = set()
        self.consts = []
        self._const_names = {}

    def const(self, obj):
        """The name under which guard code refers to obj (kept alive by the set)."""
        name = self._const_names.get(id(obj))
        if name is None:
            name = f"K{len(self.consts)}"
            self.consts.append(obj)
            self._const_names[id(obj)] = name
        return name

    def add(self, check):
        if check not in self._seen:
            self._seen.add(check)
            self.checks.append(check)

    def namespace(self):
        ns = {f"K{i}": c for i, c in enumerate(self.consts)}
        ns.update(Tensor=Tensor, CellType=types.CellType, layer_state=layer_state, same_float=same_float,
                  layer_items=layer_items, same_items=same_items, super_attr=super_attr)
        return ns

    def compile(self):
        """One function (L, S, CL) -> bool; an exception while checking is a miss."""
        body = "\n".join(f"        if not ({c}): return False" for c in self.checks)
        src = f"def _guard(L, S, CL):\n    try:\n{body or '        pass'}\n        return True\n" \
              f"    except Exception:\n        return False\n"
        ns = self.namespace()
        exec(compile(src, "<oar.jit.sot guard>", "exec"), ns)
        fn = ns["_guard"]
        fn.source = src
        return fn

    def compile_getter(self, exprs):
        """One function (L, S, CL) -> list of the values of exprs."""
        src = f"def _get(L, S, CL):\n    return [{', '.join(exprs)}]\n"
        ns = self.namespace()
        exec(compile(src, "<oar.jit.sot getter>", "exec"), ns)
        return ns["_get"]
