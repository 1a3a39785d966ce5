"""Bytecode handlers of the symbolic executor (CPython 3.10 to 3.13 opcodes).

Each handler takes (frame, instruction) and returns None to go on with the
next instruction, an instruction index to jump to, or RETURN. A handler that
cannot capture its instruction calls ``ctx.brk(reason)`` (or ``ctx.mutate``)
BEFORE changing the frame, so that the frame at the break is the state before
the instruction; in a concrete step those calls do nothing and the handler
simply performs the instruction on real values.
"""
import keyword
import operator
import sys
import types

import numpy as np

from ... import _C
from ...nn import Layer
from . import calls
from .variables import NULL, is_simple, user_dunder

Tensor = _C.Tensor
_PY = sys.version_info[:2]

RETURN = object()

HANDLERS = {}


def handler(*names):
    def deco(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn
    return deco


def _user_error(e):
    e._oar_sot_user = True
    return e


def _jump(frame, inst):
    return frame.info.index[inst.argval]


# ---------------------------------------------------------------- no-ops and stack

@handler("NOP", "RESUME", "PRECALL", "EXTENDED_ARG", "CACHE", "NOT_TAKEN")
def op_nop(frame, inst):
    return None


@handler("POP_TOP")
def op_pop_top(frame, inst):
    frame.S.pop()


@handler("PUSH_NULL")
def op_push_null(frame, inst):
    frame.S.append(NULL)


@handler("COPY")
def op_copy(frame, inst):
    frame.S.append(frame.S[-inst.arg])


@handler("SWAP")
def op_swap(frame, inst):
    S = frame.S
    S[-1], S[-inst.arg] = S[-inst.arg], S[-1]


@handler("ROT_TWO")
def op_rot_two(frame, inst):
    S = frame.S
    S[-1], S[-2] = S[-2], S[-1]


@handler("ROT_THREE")
def op_rot_three(frame, inst):
    S = frame.S
    S[-3:] = [S[-1], S[-3], S[-2]]


@handler("ROT_N")
def op_rot_n(frame, inst):
    S = frame.S
    n = inst.arg
    S[-n:] = [S[-1]] + S[-n:-1]


@handler("DUP_TOP")
def op_dup_top(frame, inst):
    frame.S.append(frame.S[-1])


@handler("END_FOR")
def op_end_for(frame, inst):
    frame.S.pop()
    if _PY == (3, 12):
        frame.S.pop()


# ---------------------------------------------------------------- loads and stores

@handler("LOAD_CONST")
def op_load_const(frame, inst):
    frame.S.append(inst.argval)


@handler("RETURN_CONST")
def op_return_const(frame, inst):
    frame.retval = inst.argval
    return RETURN


@handler("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW")
def op_load_fast(frame, inst):
    try:
        frame.S.append(frame.L[inst.arg])
    except KeyError:
        raise _user_error(UnboundLocalError(
            f"cannot access local variable '{inst.argval}' where it is not associated with a value")) from None


@handler("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW")
def op_load_fast_pair(frame, inst):
    frame.S.append(frame.L[inst.arg >> 4])
    frame.S.append(frame.L[inst.arg & 15])


@handler("LOAD_FAST_AND_CLEAR")
def op_load_fast_and_clear(frame, inst):
    frame.S.append(frame.L.pop(inst.arg, NULL))


@handler("STORE_FAST")
def op_store_fast(frame, inst):
    v = frame.S.pop()
    if v is NULL:
        frame.L.pop(inst.arg, None)
    else:
        frame.L[inst.arg] = v


@handler("STORE_FAST_STORE_FAST")
def op_store_fast_pair(frame, inst):
    frame.L[inst.arg >> 4] = frame.S.pop()
    frame.L[inst.arg & 15] = frame.S.pop()


@handler("STORE_FAST_LOAD_FAST")
def op_store_load_fast(frame, inst):
    frame.L[inst.arg >> 4] = frame.S.pop()
    frame.S.append(frame.L[inst.arg & 15])


@handler("DELETE_FAST")
def op_delete_fast(frame, inst):
    frame.L.pop(inst.arg, None)


def load_global(frame, name):
    ctx = frame.ctx
    g = frame.globals
    if name in g:
        v = g[name]
        if ctx.tracing:
            ctx.cap.loaded(ctx.cap.guards.const(g), f"[{name!r}]", v)
        return v
    b = frame.builtins
    if name in b:
        v = b[name]
        if ctx.tracing:
            cap = ctx.cap
            cap.guards.add(f"{name!r} not in {cap.guards.const(g)}")
            cap.loaded(cap.guards.const(b), f"[{name!r}]", v)
        return v
    raise _user_error(NameError(f"name '{name}' is not defined"))


@handler("LOAD_GLOBAL")
def op_load_global(frame, inst):
    name = inst.argval
    v = load_global(frame, name)
    push_null = _PY >= (3, 11) and inst.arg & 1
    if push_null and _PY < (3, 13):
        frame.S.append(NULL)
    frame.S.append(v)
    if push_null and _PY >= (3, 13):
        frame.S.append(NULL)


@handler("STORE_GLOBAL", "DELETE_GLOBAL")
def op_store_global(frame, inst):
    frame.ctx.brk(f"assignment to the global '{inst.argval}'")
    if inst.opname == "STORE_GLOBAL":
        frame.globals[inst.argval] = frame.S.pop()
    else:
        del frame.globals[inst.argval]


def attr_expr(base, name):
    """The guard expression of attribute `name` of `base` (any name getattr accepts)."""
    if name.isidentifier() and not keyword.iskeyword(name):
        return f"{base}.{name}"
    return f"getattr({base}, {name!r})"


def data_dependent_size(t):
    """Whether t's size is unknown until the program runs (a masked selection, a dynamic input dim)."""
    shape = _C._ir_traced_shape(t)
    return shape is not None and -1 in shape


def load_attr(frame, obj, name):
    """getattr with the guard the read needs (Note [guard policy])."""
    ctx = frame.ctx
    if isinstance(obj, Tensor):
        if name == "grad" or name == "gradient":
            ctx.brk(f"Tensor.{name}: reads a gradient, which is set outside the program")
        if name in ("shape", "size") and ctx.tracing and data_dependent_size(obj):
            ctx.brk(f"Tensor.{name} of a tensor whose size depends on the data: read when the program runs")
        v = getattr(obj, name)
        return ctx.made(v) if isinstance(v, Tensor) else v
    v = getattr(obj, name)
    if ctx.tracing and type(obj) is super and isinstance(obj.__self_class__, type):
        # A super object is made in the segment, but what it finds lives in the classes: a
        # method replaced on a base class must be seen.
        from .guards import super_attr

        g = ctx.cap.guards
        this, self_class = obj.__thisclass__, obj.__self_class__
        found = super_attr(this, self_class, name)
        g.add(f"super_attr({g.const(this)}, {g.const(self_class)}, {name!r}) is {g.const(found)}")
    if ctx.tracing and not is_simple(obj):
        cap = ctx.cap
        base = cap.expr_of(obj)
        if base is not None:
            if getattr(v, "__self__", None) is obj and not isinstance(obj, types.ModuleType):
                # A method looked up on an object whose type is guarded.
                d = getattr(obj, "__dict__", None)
                if d is not None and name in d:
                    cap.guard(attr_expr(base, name), v, initial=False)
                elif isinstance(v, types.MethodType):
                    # The type being guarded does not fix its methods: one may be replaced on the
                    # class, or shadowed by an instance attribute, between calls.
                    g = cap.guards
                    g.add(f"type({attr_expr(base, name)}) is {g.const(types.MethodType)} and "
                          f"{attr_expr(base, name)}.__func__ is {g.const(v.__func__)}")
            else:
                cap.guard(attr_expr(base, name), v, initial=False)
    return v


@handler("LOAD_ATTR")
def op_load_attr(frame, inst):
    S = frame.S
    obj = S[-1]
    name = inst.argval
    method = _PY >= (3, 12) and inst.arg & 1
    v = load_attr(frame, obj, name)
    S.pop()
    if method and _PY < (3, 13):
        S.append(NULL)
    S.append(v)
    if method and _PY >= (3, 13):
        S.append(NULL)


@handler("LOAD_SUPER_ATTR")
def op_load_super_attr(frame, inst):
    # 3.12+: `super().name` (or super(cls, self).name); the stack holds super, the class, self.
    S = frame.S
    sup, cls, obj = S[-3], S[-2], S[-1]
    v = load_attr(frame, sup(cls, obj), inst.argval)
    del S[-3:]
    method = inst.arg & 1
    if method and _PY < (3, 13):
        S.append(NULL)
    S.append(v)
    if method and _PY >= (3, 13):
        S.append(NULL)


@handler("LOAD_METHOD")
def op_load_method(frame, inst):
    S = frame.S
    v = load_attr(frame, S[-1], inst.argval)
    S.pop()
    S.append(NULL)
    S.append(v)


@handler("STORE_ATTR")
def op_store_attr(frame, inst):
    S = frame.S
    obj = S[-1]
    frame.ctx.brk(f"assignment to the attribute '{inst.argval}' of a {type(obj).__name__} object")
    setattr(obj, inst.argval, S[-2])
    del S[-2:]


@handler("DELETE_ATTR")
def op_delete_attr(frame, inst):
    frame.ctx.brk(f"deleting the attribute '{inst.argval}'")
    delattr(frame.S.pop(), inst.argval)


def _deref_index(frame, inst):
    if _PY >= (3, 11):
        return inst.arg
    return ("cell", inst.arg)


@handler("LOAD_DEREF", "LOAD_CLASSDEREF")
def op_load_deref(frame, inst):
    cell = frame.L.get(_deref_index(frame, inst))
    try:
        v = cell.cell_contents
    except (ValueError, AttributeError):
        raise _user_error(NameError(f"free variable '{inst.argval}' referenced before assignment")) from None
    ctx = frame.ctx
    if ctx.tracing:
        cap = ctx.cap
        base = cap.expr_of(cell)
        if base is not None:
            cap.loaded(base, ".cell_contents", v)
    frame.S.append(v)


@handler("STORE_DEREF")
def op_store_deref(frame, inst):
    cell = frame.L[_deref_index(frame, inst)]
    frame.ctx.mutate(cell, f"assignment to the closure variable '{inst.argval}'")
    cell.cell_contents = frame.S.pop()


@handler("DELETE_DEREF")
def op_delete_deref(frame, inst):
    cell = frame.L[_deref_index(frame, inst)]
    frame.ctx.mutate(cell, f"deleting the closure variable '{inst.argval}'")
    del cell.cell_contents


@handler("LOAD_CLOSURE")
def op_load_closure(frame, inst):
    frame.S.append(frame.L[_deref_index(frame, inst)])


@handler("MAKE_CELL")
def op_make_cell(frame, inst):
    L = frame.L
    if inst.arg in L:
        L[inst.arg] = types.CellType(L[inst.arg])
    else:
        L[inst.arg] = types.CellType()


@handler("COPY_FREE_VARS")
def op_copy_free_vars(frame, inst):
    closure = frame.closure
    base = frame.info.nlocalsplus - inst.arg
    for j in range(inst.arg):
        frame.L[base + j] = closure[j]


# ---------------------------------------------------------------- operators

_BINARY = [operator.add, operator.and_, operator.floordiv, operator.lshift, operator.matmul, operator.mul,
           operator.mod, operator.or_, operator.pow, operator.rshift, operator.sub, operator.truediv,
           operator.xor, operator.iadd, operator.iand, operator.ifloordiv, operator.ilshift, operator.imatmul,
           operator.imul, operator.imod, operator.ior, operator.ipow, operator.irshift, operator.isub,
           operator.itruediv, operator.ixor]
_INPLACE_DUNDER = {operator.iadd: "__iadd__", operator.iand: "__iand__", operator.ifloordiv: "__ifloordiv__",
                   operator.ilshift: "__ilshift__", operator.imatmul: "__imatmul__", operator.imul: "__imul__",
                   operator.imod: "__imod__", operator.ior: "__ior__", operator.ipow: "__ipow__",
                   operator.irshift: "__irshift__", operator.isub: "__isub__", operator.itruediv: "__itruediv__",
                   operator.ixor: "__ixor__"}


def _no_numpy(frame, *values):
    """NumPy arrays stay out of programs: their values are not guarded (they may be large)."""
    for v in values:
        if isinstance(v, np.ndarray):
            frame.ctx.brk("NumPy array arithmetic or indexing: runs eagerly")


def _no_user_dunder(frame, *values):
    """Operators on an object whose class implements them in Python: they run eagerly, since
    what the method reads (its attributes) is neither interpreted nor guarded."""
    ctx = frame.ctx
    if ctx.tracing:
        for v in values:
            name = user_dunder(v)
            if name is not None:
                ctx.brk(f"an operator on a {type(v).__name__} object (its {name} is Python code): runs eagerly")


def _binary(frame, fn):
    S = frame.S
    a, b = S[-2], S[-1]
    ctx = frame.ctx
    _no_numpy(frame, a, b)
    _no_user_dunder(frame, a, b)
    dunder = _INPLACE_DUNDER.get(fn)
    if dunder is not None and ctx.tracing:
        if isinstance(a, Tensor) and hasattr(Tensor, dunder) and id(a) not in ctx.cap.made:
            ctx.brk(f"'{dunder}' updates a tensor from outside the captured code in place")
        if isinstance(a, (list, dict, set)):
            ctx.mutate(a, f"'{dunder}'")
    r = fn(a, b)
    del S[-2:]
    S.append(ctx.made(r))


@handler("BINARY_OP")
def op_binary_op(frame, inst):
    if inst.arg == 26:  # 3.14 NB_SUBSCR
        return op_binary_subscr(frame, inst)
    _binary(frame, _BINARY[inst.arg])


_OLD_BINARY = {"BINARY_ADD": operator.add, "BINARY_SUBTRACT": operator.sub, "BINARY_MULTIPLY": operator.mul,
               "BINARY_TRUE_DIVIDE": operator.truediv, "BINARY_FLOOR_DIVIDE": operator.floordiv,
               "BINARY_MODULO": operator.mod, "BINARY_POWER": operator.pow, "BINARY_MATRIX_MULTIPLY": operator.matmul,
               "BINARY_AND": operator.and_, "BINARY_OR": operator.or_, "BINARY_XOR": operator.xor,
               "BINARY_LSHIFT": operator.lshift, "BINARY_RSHIFT": operator.rshift,
               "INPLACE_ADD": operator.iadd, "INPLACE_SUBTRACT": operator.isub, "INPLACE_MULTIPLY": operator.imul,
               "INPLACE_TRUE_DIVIDE": operator.itruediv, "INPLACE_FLOOR_DIVIDE": operator.ifloordiv,
               "INPLACE_MODULO": operator.imod, "INPLACE_POWER": operator.ipow,
               "INPLACE_MATRIX_MULTIPLY": operator.imatmul, "INPLACE_AND": operator.iand,
               "INPLACE_OR": operator.ior, "INPLACE_XOR": operator.ixor, "INPLACE_LSHIFT": operator.ilshift,
               "INPLACE_RSHIFT": operator.irshift}
for _name, _fn in _OLD_BINARY.items():
    HANDLERS[_name] = (lambda fn: lambda frame, inst: _binary(frame, fn))(_fn)


def _unary(fn):
    def op(frame, inst):
        S = frame.S
        _no_numpy(frame, S[-1])
        _no_user_dunder(frame, S[-1])
        S[-1] = frame.ctx.made(fn(S[-1]))
    return op


HANDLERS["UNARY_NEGATIVE"] = _unary(operator.neg)
HANDLERS["UNARY_POSITIVE"] = _unary(operator.pos)
HANDLERS["UNARY_INVERT"] = _unary(operator.invert)


def _truth(frame, v, what):
    if isinstance(v, Tensor):
        frame.ctx.brk(f"Tensor used as a Python bool ({what})")
    _no_user_dunder(frame, v)
    return bool(v)


@handler("UNARY_NOT")
def op_unary_not(frame, inst):
    S = frame.S
    S[-1] = not _truth(frame, S[-1], "`not tensor`")


@handler("TO_BOOL")
def op_to_bool(frame, inst):
    S = frame.S
    S[-1] = _truth(frame, S[-1], "data-dependent control flow")


_COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
            ">=": operator.ge}


@handler("COMPARE_OP")
def op_compare_op(frame, inst):
    name = inst.argval
    fn = _COMPARE[name.replace("bool(", "").replace(")", "")] if isinstance(name, str) else \
        _COMPARE[["<", "<=", "==", "!=", ">", ">="][inst.arg]]
    S = frame.S
    _no_numpy(frame, S[-2], S[-1])
    _no_user_dunder(frame, S[-2], S[-1])
    if frame.ctx.tracing and fn in (operator.eq, operator.ne):  # object's == is identity
        frame.ctx.cap.identity_read(S[-2])
        frame.ctx.cap.identity_read(S[-1])
    r = fn(S[-2], S[-1])
    del S[-2:]
    S.append(frame.ctx.made(r))


@handler("IS_OP")
def op_is_op(frame, inst):
    S = frame.S
    if frame.ctx.tracing:
        frame.ctx.cap.identity_read(S[-2])
        frame.ctx.cap.identity_read(S[-1])
    r = (S[-2] is S[-1]) != bool(inst.arg)
    del S[-2:]
    S.append(r)


@handler("CONTAINS_OP")
def op_contains_op(frame, inst):
    S = frame.S
    item, container = S[-2], S[-1]
    if isinstance(container, Tensor):
        frame.ctx.brk("`in` on a Tensor reads its values")
    _no_user_dunder(frame, item, container)
    if frame.ctx.tracing:
        frame.ctx.cap.identity_read(item)
        frame.ctx.cap.identity_read(container)
    r = (item in container) != bool(inst.arg)
    del S[-2:]
    S.append(r)


# ---------------------------------------------------------------- subscripts and slices

@handler("BINARY_SUBSCR")
def op_binary_subscr(frame, inst):
    S = frame.S
    obj, key = S[-2], S[-1]
    ctx = frame.ctx
    _no_numpy(frame, obj, key)
    v = obj[key]
    if ctx.tracing and isinstance(obj, dict):
        ctx.cap.identity_read(key)
    if ctx.tracing and not isinstance(obj, Tensor) and not is_simple(obj) and type(key) in (int, str):
        cap = ctx.cap
        base = cap.expr_of(obj)
        if base is not None and type(obj) not in (list, tuple, dict):
            cap.loaded(base, f"[{key!r}]", v)
    del S[-2:]
    S.append(ctx.made(v))


@handler("BINARY_SLICE")
def op_binary_slice(frame, inst):
    S = frame.S
    obj, start, stop = S[-3], S[-2], S[-1]
    _no_numpy(frame, obj)
    v = obj[start:stop]
    del S[-3:]
    S.append(frame.ctx.made(v))


def _setitem_check(frame, obj, what):
    ctx = frame.ctx
    if not ctx.tracing:
        return
    if isinstance(obj, Tensor):
        if id(obj) not in ctx.cap.made:
            ctx.brk(f"{what} of a tensor from outside the captured code (an in-place update)")
    else:
        ctx.mutate(obj, what)
        if type(obj) not in (list, dict):
            ctx.brk(f"{what} of a {type(obj).__name__} object")


@handler("STORE_SUBSCR")
def op_store_subscr(frame, inst):
    S = frame.S
    v, obj, key = S[-3], S[-2], S[-1]
    _setitem_check(frame, obj, "item assignment")
    obj[key] = v
    del S[-3:]


@handler("STORE_SLICE")
def op_store_slice(frame, inst):
    S = frame.S
    v, obj, start, stop = S[-4], S[-3], S[-2], S[-1]
    _setitem_check(frame, obj, "slice assignment")
    obj[start:stop] = v
    del S[-4:]


@handler("DELETE_SUBSCR")
def op_delete_subscr(frame, inst):
    S = frame.S
    obj, key = S[-2], S[-1]
    _setitem_check(frame, obj, "item deletion")
    del obj[key]
    del S[-2:]


def _pop_n(S, n):
    """The top n stack items, in order, taken off the stack (none when n is 0)."""
    v = S[len(S) - n:]
    del S[len(S) - n:]
    return v


@handler("BUILD_SLICE")
def op_build_slice(frame, inst):
    frame.S.append(slice(*_pop_n(frame.S, inst.arg)))


# ---------------------------------------------------------------- building containers

@handler("BUILD_TUPLE")
def op_build_tuple(frame, inst):
    frame.S.append(tuple(_pop_n(frame.S, inst.arg)))


@handler("BUILD_LIST")
def op_build_list(frame, inst):
    frame.S.append(_pop_n(frame.S, inst.arg))


@handler("BUILD_SET")
def op_build_set(frame, inst):
    frame.S.append(set(_pop_n(frame.S, inst.arg)))


@handler("BUILD_MAP")
def op_build_map(frame, inst):
    n = inst.arg
    items = _pop_n(frame.S, 2 * n)
    frame.S.append({items[2 * i]: items[2 * i + 1] for i in range(n)})


@handler("BUILD_CONST_KEY_MAP")
def op_build_const_key_map(frame, inst):
    S = frame.S
    n = inst.arg
    keys = S[-1]
    vals = S[-1 - n:-1]
    del S[-1 - n:]
    S.append(dict(zip(keys, vals)))


@handler("BUILD_STRING")
def op_build_string(frame, inst):
    frame.S.append("".join(_pop_n(frame.S, inst.arg)))


@handler("FORMAT_VALUE")
def op_format_value(frame, inst):
    S = frame.S
    flags = inst.arg
    spec = S.pop() if flags & 0x04 else ""
    v = S[-1]
    if isinstance(v, Tensor):
        frame.ctx.brk("formatting a Tensor as text reads its values")
    conv = flags & 0x03
    if conv == 1:
        v = str(v)
    elif conv == 2:
        v = repr(v)
    elif conv == 3:
        v = ascii(v)
    S[-1] = format(v, spec)


@handler("FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE")
def op_format_new(frame, inst):
    S = frame.S
    if inst.opname == "CONVERT_VALUE":
        S[-1] = (str, repr, ascii)[inst.arg - 1](S[-1])
        return
    spec = S.pop() if inst.opname == "FORMAT_WITH_SPEC" else ""
    if isinstance(S[-1], Tensor):
        frame.ctx.brk("formatting a Tensor as text reads its values")
    S[-1] = format(S[-1], spec)


@handler("LIST_APPEND")
def op_list_append(frame, inst):
    S = frame.S
    frame.ctx.mutate(S[-1 - inst.arg], "list.append()")
    S[-1 - inst.arg].append(S.pop())


@handler("SET_ADD")
def op_set_add(frame, inst):
    S = frame.S
    frame.ctx.mutate(S[-1 - inst.arg], "set.add()")
    S[-1 - inst.arg].add(S.pop())


@handler("MAP_ADD")
def op_map_add(frame, inst):
    S = frame.S
    frame.ctx.mutate(S[-2 - inst.arg], "item assignment")
    v = S.pop()
    k = S.pop()
    S[-inst.arg][k] = v


@handler("LIST_EXTEND")
def op_list_extend(frame, inst):
    S = frame.S
    seq = S[-1]
    if frame.ctx.tracing and id(seq) in frame.ctx.cap.opaque:
        frame.ctx.brk("unpacking an iterator from outside the captured code")
    frame.ctx.mutate(S[-1 - inst.arg], "list.extend()")
    S[-1 - inst.arg].extend(seq)
    S.pop()


@handler("SET_UPDATE")
def op_set_update(frame, inst):
    S = frame.S
    frame.ctx.mutate(S[-1 - inst.arg], "set.update()")
    S[-1 - inst.arg].update(S[-1])
    S.pop()


@handler("DICT_UPDATE", "DICT_MERGE")
def op_dict_update(frame, inst):
    S = frame.S
    d, other = S[-1 - inst.arg], S[-1]
    frame.ctx.mutate(d, "dict.update()")
    if inst.opname == "DICT_MERGE":
        for k in other:
            if k in d:
                raise _user_error(TypeError(f"got multiple values for keyword argument '{k}'"))
    d.update(other)
    S.pop()


@handler("LIST_TO_TUPLE")
def op_list_to_tuple(frame, inst):
    frame.S[-1] = tuple(frame.S[-1])


@handler("CALL_INTRINSIC_1")
def op_call_intrinsic_1(frame, inst):
    S = frame.S
    if inst.argrepr == "INTRINSIC_LIST_TO_TUPLE":
        S[-1] = tuple(S[-1])
    elif inst.argrepr == "INTRINSIC_UNARY_POSITIVE":
        S[-1] = frame.ctx.made(+S[-1])
    else:
        frame.ctx.brk(f"bytecode CALL_INTRINSIC_1 {inst.argrepr} is not supported")
        raise NotImplementedError(inst.argrepr)


@handler("UNPACK_SEQUENCE")
def op_unpack_sequence(frame, inst):
    S = frame.S
    seq = S[-1]
    ctx = frame.ctx
    if ctx.tracing and id(seq) in ctx.cap.opaque:
        ctx.brk("unpacking an iterator from outside the captured code")
    items = list(seq)
    if len(items) != inst.arg:
        raise _user_error(ValueError(f"expected {inst.arg} values to unpack, got {len(items)}"))
    S.pop()
    S.extend(reversed([ctx.made(x) for x in items]))


@handler("UNPACK_EX")
def op_unpack_ex(frame, inst):
    S = frame.S
    seq = S[-1]
    ctx = frame.ctx
    if ctx.tracing and id(seq) in ctx.cap.opaque:
        ctx.brk("unpacking an iterator from outside the captured code")
    before, after = inst.arg & 0xFF, inst.arg >> 8
    items = list(seq)
    if len(items) < before + after:
        raise _user_error(ValueError(f"not enough values to unpack (expected at least {before + after}, "
                                     f"got {len(items)})"))
    mid = items[before:len(items) - after]
    out = items[:before] + [mid] + items[len(items) - after:]
    S.pop()
    S.extend(reversed(out))


# ---------------------------------------------------------------- control flow

@handler("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
         "JUMP_NO_INTERRUPT")
def op_jump(frame, inst):
    return _jump(frame, inst)


def _pop_jump(cond_fn, what):
    def op(frame, inst):
        S = frame.S
        v = S[-1]
        take = cond_fn(frame, v)
        S.pop()
        return _jump(frame, inst) if take else None
    return op


_if_true = _pop_jump(lambda f, v: _truth(f, v, "data-dependent control flow"), "if")
_if_false = _pop_jump(lambda f, v: not _truth(f, v, "data-dependent control flow"), "if")
_if_none = _pop_jump(lambda f, v: v is None, "is None")
_if_not_none = _pop_jump(lambda f, v: v is not None, "is not None")
for _d in ("", "FORWARD_", "BACKWARD_"):
    HANDLERS[f"POP_JUMP_{_d}IF_TRUE"] = _if_true
    HANDLERS[f"POP_JUMP_{_d}IF_FALSE"] = _if_false
    HANDLERS[f"POP_JUMP_{_d}IF_NONE"] = _if_none
    HANDLERS[f"POP_JUMP_{_d}IF_NOT_NONE"] = _if_not_none


@handler("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP")
def op_jump_or_pop(frame, inst):
    S = frame.S
    v = _truth(frame, S[-1], "data-dependent control flow (`and`/`or`)")
    if v == (inst.opname == "JUMP_IF_TRUE_OR_POP"):
        return _jump(frame, inst)
    S.pop()


@handler("GET_ITER")
def op_get_iter(frame, inst):
    S = frame.S
    v = S[-1]
    ctx = frame.ctx
    if ctx.tracing and isinstance(v, Tensor) and data_dependent_size(v):
        ctx.brk("iterating a tensor whose size depends on the data")
    if ctx.tracing and not isinstance(v, (list, tuple, dict, range, str, set, frozenset, Tensor, bytes)):
        t = type(v)
        if not (t.__module__ == "builtins" or t.__module__.startswith("oar")):
            ctx.brk(f"iterating a {t.__name__} object: runs eagerly")
    if ctx.tracing and isinstance(v, Layer):
        ctx.cap.guard_layer_items(v)
    S[-1] = iter(v)


@handler("FOR_ITER")
def op_for_iter(frame, inst):
    S = frame.S
    it = S[-1]
    ctx = frame.ctx
    if ctx.tracing and (id(it) in ctx.cap.opaque or id(it) in ctx.cap.outside):
        ctx.brk("a loop over an iterator from outside the captured code (the loop body after a graph break "
                "runs one iteration per segment)")
    try:
        v = next(it)
    except StopIteration:
        S.pop()
        target = _jump(frame, inst)
        if _PY >= (3, 12):
            # 3.12+: the target is the END_FOR that would pop the iterator, done here.
            target += 1
            if _PY >= (3, 13) and frame.info.insts[target].opname == "POP_TOP":
                target += 1
        return target
    S.append(ctx.made(v))


@handler("RETURN_VALUE")
def op_return_value(frame, inst):
    frame.retval = frame.S.pop()
    return RETURN


@handler("LOAD_ASSERTION_ERROR")
def op_load_assertion_error(frame, inst):
    frame.S.append(AssertionError)


@handler("RAISE_VARARGS")
def op_raise_varargs(frame, inst):
    frame.ctx.brk("raise statement: runs eagerly")
    S = frame.S
    if inst.arg == 0:
        if frame.exc_info is None:
            raise _user_error(RuntimeError("No active exception to reraise"))
        raise frame.exc_info
    if inst.arg == 2:
        cause = S.pop()
        exc = S.pop()
        raise _user_error(exc if isinstance(exc, BaseException) else exc()) from cause
    exc = S.pop()
    raise _user_error(exc if isinstance(exc, BaseException) else exc())


@handler("IMPORT_NAME")
def op_import_name(frame, inst):
    frame.ctx.brk("import statement: runs eagerly")
    S = frame.S
    fromlist = S.pop()
    level = S.pop()
    S.append(__import__(inst.argval, frame.globals, None, fromlist, level))


@handler("IMPORT_FROM")
def op_import_from(frame, inst):
    frame.ctx.brk("import statement: runs eagerly")
    frame.S.append(getattr(frame.S[-1], inst.argval))


# ---------------------------------------------------------------- functions and calls

@handler("MAKE_FUNCTION")
def op_make_function(frame, inst):
    S = frame.S
    code = S.pop()
    if _PY < (3, 11):
        qualname = code
        code = S.pop()
    else:
        qualname = code.co_qualname if _PY >= (3, 11) else code.co_name
    flags = inst.arg if _PY < (3, 13) else 0
    closure = S.pop() if flags & 0x08 else None
    annotations = S.pop() if flags & 0x04 else None
    kwdefaults = S.pop() if flags & 0x02 else None
    defaults = S.pop() if flags & 0x01 else None
    if closure is None and code.co_freevars:
        # 3.13: SET_FUNCTION_ATTRIBUTE gives the closure next; cells stand in until then.
        closure = tuple(types.CellType() for _ in code.co_freevars)
    fn = types.FunctionType(code, frame.globals, code.co_name, defaults, closure)
    fn.__qualname__ = qualname
    if kwdefaults:
        fn.__kwdefaults__ = kwdefaults
    if annotations:
        fn.__annotations__ = dict(zip(annotations[::2], annotations[1::2])) if isinstance(annotations, tuple) \
            else annotations
    ctx = frame.ctx
    if ctx.tracing:
        ctx.cap.made[id(fn)] = fn  # made in the segment: its closure cells are the frame's
    S.append(fn)


@handler("SET_FUNCTION_ATTRIBUTE")
def op_set_function_attribute(frame, inst):
    S = frame.S
    fn = S.pop()
    v = S.pop()
    flag = inst.arg
    if flag == 0x08:
        new = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, v)
        new.__qualname__, new.__kwdefaults__ = fn.__qualname__, fn.__kwdefaults__
        fn = new
        if frame.ctx.tracing:
            frame.ctx.cap.made[id(fn)] = fn
    elif flag == 0x01:
        fn.__defaults__ = v
    elif flag == 0x02:
        fn.__kwdefaults__ = v
    elif flag == 0x04:
        fn.__annotations__ = dict(zip(v[::2], v[1::2])) if isinstance(v, tuple) else v
    S.append(fn)


@handler("KW_NAMES")
def op_kw_names(frame, inst):
    frame.kw_names = frame.info.code.co_consts[inst.arg]


def _do_call(frame, S, n_pop, f, args, kwnames):
    if kwnames:
        k = len(kwnames)
        kwargs = dict(zip(kwnames, args[len(args) - k:]))
        args = args[:len(args) - k]
    else:
        kwargs = {}
    r = calls.call(frame, f, args, kwargs)
    del S[len(S) - n_pop:]
    S.append(r)
    frame.kw_names = None


@handler("CALL")
def op_call(frame, inst):
    S = frame.S
    argc = inst.arg
    args = S[len(S) - argc:]
    if _PY >= (3, 13):
        f, self_or_null = S[-argc - 2], S[-argc - 1]
        if self_or_null is not NULL:
            args = [self_or_null] + args
    else:
        a, b = S[-argc - 2], S[-argc - 1]
        if a is NULL:
            f = b
        else:
            f, args = a, [b] + args
    _do_call(frame, S, argc + 2, f, args, frame.kw_names)


@handler("CALL_KW")
def op_call_kw(frame, inst):
    S = frame.S
    kwnames = S[-1]
    argc = inst.arg
    args = S[len(S) - 1 - argc:len(S) - 1]
    f, self_or_null = S[-argc - 3], S[-argc - 2]
    if self_or_null is not NULL:
        args = [self_or_null] + args
    _do_call(frame, S, argc + 3, f, args, kwnames)


@handler("CALL_FUNCTION", "CALL_METHOD")
def op_call_function(frame, inst):
    S = frame.S
    argc = inst.arg
    args = S[len(S) - argc:]
    if inst.opname == "CALL_METHOD" and S[-argc - 2] is not NULL:
        f, args, n = S[-argc - 2], [S[-argc - 1]] + args, argc + 2
    elif inst.opname == "CALL_METHOD":
        f, n = S[-argc - 1], argc + 2
    else:
        f, n = S[-argc - 1], argc + 1
    _do_call(frame, S, n, f, args, None)


@handler("CALL_FUNCTION_KW")
def op_call_function_kw(frame, inst):
    S = frame.S
    kwnames = S[-1]
    argc = inst.arg
    args = S[len(S) - 1 - argc:len(S) - 1]
    _do_call(frame, S, argc + 2, S[-argc - 2], args, kwnames)


@handler("CALL_FUNCTION_EX")
def op_call_function_ex(frame, inst):
    S = frame.S
    has_kw = (inst.arg & 1) if _PY < (3, 14) else True
    kwargs = S[-1] if has_kw else None
    args = S[-2] if has_kw else S[-1]
    n = 2 if has_kw else 1
    ctx = frame.ctx
    if ctx.tracing and id(args) in ctx.cap.opaque:
        ctx.brk("unpacking an iterator from outside the captured code")
    if _PY >= (3, 13):
        f, null = S[-n - 2], S[-n - 1]
        n += 2
        if null is not NULL:
            args = (null,) + tuple(args)
    else:
        f = S[-n - 1]
        n += 1
        if _PY >= (3, 11) and len(S) > n and S[-n - 1] is NULL:
            n += 1
    r = calls.call(frame, f, tuple(args), dict(kwargs) if kwargs else {})
    del S[len(S) - n:]
    S.append(r)


# ---------------------------------------------------------------- with blocks and exception handlers
# Entering a context and the handler code run concretely (they are breaks when capturing): the
# handlers are reached only through an exception, which a concrete step routes by the code's
# exception table (Runner.concrete_step).

@handler("BEFORE_WITH")
def op_before_with(frame, inst):
    S = frame.S
    mgr = S[-1]
    frame.ctx.brk(f"entering a with block ({type(mgr).__name__}): runs eagerly")
    cls = type(mgr)
    exit_fn = types.MethodType(cls.__exit__, mgr)
    result = cls.__enter__(mgr)
    S.pop()
    S.append(exit_fn)
    S.append(result)


@handler("PUSH_EXC_INFO")
def op_push_exc_info(frame, inst):
    frame.ctx.brk("exception handler: runs eagerly")
    S = frame.S
    v = S.pop()
    S.append(frame.exc_info)
    S.append(v)
    frame.exc_info = v


@handler("POP_EXCEPT")
def op_pop_except(frame, inst):
    frame.ctx.brk("exception handler: runs eagerly")
    frame.exc_info = frame.S.pop()


@handler("CHECK_EXC_MATCH")
def op_check_exc_match(frame, inst):
    frame.ctx.brk("exception handler: runs eagerly")
    S = frame.S
    S[-1] = isinstance(S[-2], S[-1])


@handler("RERAISE")
def op_reraise(frame, inst):
    frame.ctx.brk("exception handler: runs eagerly")
    exc = frame.S.pop()
    raise exc


@handler("WITH_EXCEPT_START")
def op_with_except_start(frame, inst):
    frame.ctx.brk("leaving a with block by an exception: runs eagerly")
    S = frame.S
    val = S[-1]
    S.append(S[-4](type(val), val, val.__traceback__))
