"""The source rewrite behind ``to_static``: Python control flow becomes calls of the runtime helpers.

``transform(fn)`` parses a function's source and rewrites it in passes:

1. expressions (``_Expressions``): ``a and b`` -> ``_jst.And(lambda: a, lambda: b)``,
   ``or``, ``not``, ``a if c else b``, comparison chains, ``assert``, ``raise``,
   f-string values, augmented assignment to names, attributes and items, and
   every call ``f(x)`` -> ``_jst.Call(f, x)`` so that called user code is
   converted too. An operand Python always evaluates keeps its ``:=`` in the
   function's scope (``_eager_lambda``); one it may skip may not hold one;
2. exits (``_Exits``): ``return`` inside an ``if`` or a loop, ``break`` and
   ``continue`` become flag variables; the statements after one that may set a
   flag run under ``if not flag:``, loop conditions test the flags, and the
   function ends in one ``return``. After this pass no statement jumps, so
   branches and loop bodies can become functions;
3. liveness (``_annotate_live``): for each ``if`` and loop, the names that may
   be read after it (a superset), which decides what a tensor ``if`` must
   merge strictly (Note [merging branch values] in convert_ops.py);
4. control flow (``_ControlFlow``): ``if``/``while``/``for`` become
   ``_jst.IfElse`` / ``_jst.While`` / ``_jst.For`` calls on nested functions
   (the branches, the condition, the body) that read and write the enclosing
   function's variables with ``nonlocal``, plus ``get``/``set`` functions for
   the variables (and ``obj.attr`` targets, Note [carried attributes]) the
   statement assigns. Every local of the function starts as
   ``_jst.UndefinedVar(name)`` so that ``nonlocal`` always has a binding.

Note [line numbers of converted code]
The parsed tree is shifted to the function's first line in its file, every
generated node takes the location of the statement it replaces, and the code
is compiled with the original file name. Tracebacks, and the errors that name
the user's line (Dy2StaticError), therefore point into the original source
without a separate line map.
"""
import ast
import copy
import inspect
import textwrap

JST = "_jst"
_PREFIX = "_oar_"

# Calls that must run in the caller's own frame, or that are never user code worth converting.
_DIRECT = {"super", "locals", "globals", "vars", "dir", "eval", "exec", "breakpoint", "isinstance", "issubclass",
           "type", "id", "hasattr", "getattr", "setattr"}


class Unconvertible(Exception):
    """The source cannot be converted: (line, reason, advice)."""

    def __init__(self, lineno, reason, advice):
        super().__init__(reason)
        self.lineno, self.reason, self.advice = lineno, reason, advice


def _load(name):
    return ast.Name(id=name, ctx=ast.Load())


def _store(name):
    return ast.Name(id=name, ctx=ast.Store())


def _jst(attr):
    return ast.Attribute(value=_load(JST), attr=attr, ctx=ast.Load())


def _jst_call(attr, args, keywords=()):
    return ast.Call(func=_jst(attr), args=list(args), keywords=list(keywords))


def _lambda(body):
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                      body=body)


def _eager_lambda(body):
    """``lambda _oar_v=body: _oar_v``: ``body`` is evaluated where the lambda is made, in the enclosing
    scope, so that a ``name := value`` in it binds the function's variable (for operands that Python
    always evaluates, such as the first of ``a and b``)."""
    if _walrus(body) is None:
        return _lambda(body)
    v = f"{_PREFIX}v"
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=v)], kwonlyargs=[], kw_defaults=[],
                                         defaults=[body]), body=_load(v))


def _lazy_lambda(body):
    """``lambda: body`` for an operand Python may skip; one with ``name := value`` is refused (in a lambda
    it would bind a name of the lambda, not of the function)."""
    w = _walrus(body)
    if w is not None:
        raise Unconvertible(w.lineno, f"the assignment expression to '{w.target.id}' (:=) is in an operand that is "
                            "evaluated only on some paths (after `and`/`or`, in a branch of `a if c else b`, or "
                            "after the second operand of a comparison chain)",
                            "Assign the variable in a statement before the expression, or move the `:=` to the "
                            "first operand.")
    return _lambda(body)


def _assign(name, value):
    return ast.Assign(targets=[_store(name)], value=value)


def _strs(names):
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _copy(new, src):
    """Gives ``new`` the first line of ``src`` (a one-line span: Python 3.11 reports some instructions of a
    multi-line node, e.g. attribute loads, at its last line)."""
    new.lineno = new.end_lineno = src.lineno
    new.col_offset = new.end_col_offset = src.col_offset
    return new


def _located(nodes, src):
    for n in nodes:
        _copy(n, src)
    return nodes


def _is_jst(node):
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == JST


# ---------------------------------------------------------------- scope analysis

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def _walk_scope(nodes):
    """The nodes of ``nodes`` without entering nested scopes (a nested def itself is yielded)."""
    stack = list(reversed(nodes))
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, _SCOPES):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.extend(reversed(n.decorator_list))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                stack.extend(reversed(n.args.defaults + [d for d in n.args.kw_defaults if d is not None]))
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(n))))


def _target_names(target, out):
    for n in ast.walk(target):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.append(n.id)


def assigned(nodes):
    """Names bound by the statements ``nodes`` in their own scope, in order of first binding."""
    out = []
    for n in _walk_scope(nodes):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.append(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.extend((a.asname or a.name).split(".")[0] for a in n.names if a.name != "*")
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.append(n.name)
        elif isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            # `[y := f(v) for v in xs]` binds y in the enclosing scope.
            out.extend(w.target.id for w in ast.walk(n) if isinstance(w, ast.NamedExpr))
    return list(dict.fromkeys(out))


def _walrus(node):
    """The first ``name := value`` in ``node``'s own scope, or None."""
    return next((n for n in _walk_scope([node]) if isinstance(n, ast.NamedExpr)), None)


def loaded(nodes):
    """Names read anywhere in ``nodes``, nested scopes included (closures read them too)."""
    out = set()
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                out.add(n.id)
    return out


def _appended_lists(nodes):
    """Names X with an ``X.append(...)`` or ``X.pop(...)`` call in ``nodes`` (before or after call wrapping)."""
    out = []
    for n in _walk_scope(nodes):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        if _is_jst(f) and f.attr == "Call" and n.args:
            f = n.args[0]
        if isinstance(f, ast.Attribute) and f.attr in ("append", "pop") and isinstance(f.value, ast.Name):
            out.append(f.value.id)
    return list(dict.fromkeys(out))


def _mutated(nodes):
    """Names X whose value is changed in place: ``X[k] = v``, ``X[k] += v`` (``_jst.AugItem``), ``X.append(v)``,
    ``X.pop()``."""
    out = []
    for n in _walk_scope(nodes):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name):
            out.append(n.value.id)
        elif (isinstance(n, ast.Call) and _is_jst(n.func) and n.func.attr == "AugItem"
              and isinstance(n.args[1], ast.Name)):
            out.append(n.args[1].id)  # X[k] += v after pass 1
    return list(dict.fromkeys(out + _appended_lists(nodes)))


def _declared(fn, kind):
    out = set()
    for n in _walk_scope(fn.body):
        if isinstance(n, kind):
            out.update(n.names)
    return out


def _params(fn):
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    if a.vararg:
        names.append(a.vararg.arg)
    if a.kwarg:
        names.append(a.kwarg.arg)
    return names


def _is_generator(fn):
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _walk_scope(fn.body))


# ---------------------------------------------------------------- pass 1: expressions


class _Expressions(ast.NodeTransformer):
    """and / or / not / conditional expressions / comparison chains / assert / calls -> _jst helpers;
    writes to Python state outside the function checked by _jst.StateWrite."""

    def __init__(self, tree):
        self.globals = {n for g in ast.walk(tree) if isinstance(g, ast.Global) for n in g.names}

    def _state_check(self, target, node):
        """``_jst.StateWrite("self.n", self.n)``, run before an augmented assignment changes it."""
        load = copy.deepcopy(target)
        for n in ast.walk(load):
            if hasattr(n, "ctx"):
                n.ctx = ast.Load()
        return _copy(ast.Expr(value=_jst_call("StateWrite", [ast.Constant(ast.unparse(target)), load])), node)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr == "shape" and isinstance(node.ctx, ast.Load):
            return _copy(_jst_call("Shape", [node.value]), node)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        t = node.target
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
            # obj.a += v -> obj.a = _jst.AugAssign("Add", obj.a, v): out of place on traced tensors, so that
            # it also works in a branch or loop body (Note [carried attributes]).
            load = ast.Attribute(value=_load(t.value.id), attr=t.attr, ctx=ast.Load())
            call = _jst_call("AugAssign", [ast.Constant(type(node.op).__name__), load, node.value])
            return [self._state_check(t, node), _copy(ast.Assign(targets=[t], value=_copy(call, node)), node)]
        if isinstance(t, ast.Subscript):
            # a[i] += v -> _jst.AugItem("Add", a, i, v): a and i evaluated once.
            call = _jst_call("AugItem", [ast.Constant(type(node.op).__name__), t.value, t.slice, node.value])
            return _copy(ast.Expr(value=_copy(call, node)), node)
        if isinstance(t, ast.Attribute) or (isinstance(t, ast.Name) and t.id in self.globals):
            return [self._state_check(t, node), node]
        if isinstance(t, ast.Name):
            # y += v -> y = _jst.AugAssign("Add", y, v): out of place on traced tensors.
            call = _jst_call("AugAssign", [ast.Constant(type(node.op).__name__), _load(t.id), node.value])
            return _copy(ast.Assign(targets=[_store(t.id)], value=_copy(call, node)), node)
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        names = [t.id for t in node.targets if isinstance(t, ast.Name) and t.id in self.globals]
        if names:
            node.value = _copy(_jst_call("StateWrite", [ast.Constant(f"global {names[0]}"), node.value]), node)
        return node

    def visit_FormattedValue(self, node):
        # f"{t}": a tensor's values formatted at trace time would be fixed in the program; refused.
        self.generic_visit(node)
        node.value = _copy(_jst_call("FormatValue", [node.value]), node.value)
        return node

    def visit_BinOp(self, node):
        # "%s" % t: formatted at trace time like f"{t}"; refused the same way.
        self.generic_visit(node)
        left = node.left
        if isinstance(node.op, ast.Mod) and (isinstance(left, ast.JoinedStr) or (
                isinstance(left, ast.Constant) and isinstance(left.value, str))):
            node.right = _copy(_jst_call("FormatValue", [node.right]), node.right)
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        helper = "And" if isinstance(node.op, ast.And) else "Or"
        result = node.values[-1]
        for k in range(len(node.values) - 2, -1, -1):
            value = node.values[k]
            first = _eager_lambda(value) if k == 0 else _lazy_lambda(value)
            result = _jst_call(helper, [first, _lazy_lambda(result) if k == len(node.values) - 2 else
                                        _lambda(result)])
        return _copy(result, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _copy(_jst_call("Not", [node.operand]), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return _copy(_jst_call("IfExp", [node.test, _lazy_lambda(node.body), _lazy_lambda(node.orelse)]), node)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        # a < b < c -> Compare(a, ("Lt", "Lt"), (lambda: b, lambda: c)): each operand is evaluated once,
        # and later ones only while the chain is not decided (Python's short circuit).
        ops = _strs([type(op).__name__ for op in node.ops])
        rights = ast.Tuple(elts=[_eager_lambda(c) if k == 0 else _lazy_lambda(c)
                                 for k, c in enumerate(node.comparators)], ctx=ast.Load())
        return _copy(_jst_call("Compare", [node.left, ops, rights]), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if _is_jst(f) or (isinstance(f, ast.Name) and f.id in _DIRECT):
            return node
        node.args = [f] + node.args
        node.func = _copy(_jst("Call"), f)
        return node

    def visit_Raise(self, node):
        # raise E -> raise _jst.Raised(E): marked, so that a branch of a tensor `if` that raises while
        # tracing becomes a check that raises when the program takes that branch.
        self.generic_visit(node)
        if node.exc is not None:
            node.exc = _copy(_jst_call("Raised", [node.exc]), node.exc)
        return node

    def visit_Assert(self, node):
        self.generic_visit(node)
        args = [node.test] + ([_lambda(node.msg)] if node.msg is not None else [])
        return _copy(ast.Expr(value=_jst_call("Assert", args)), node)


# ---------------------------------------------------------------- pass 2: return / break / continue


class _Loop:
    def __init__(self, k):
        self.brk, self.cnt = f"{_PREFIX}break_{k}", f"{_PREFIX}continue_{k}"
        self.used_brk = self.used_cnt = False


_RET_FLAG, _RET_VAL = f"{_PREFIX}return_flag", f"{_PREFIX}return_value"


def _not_any(flags):
    """``not (f1 or f2 ...)`` with the helpers, so that tensor flags work."""
    expr = _load(flags[-1])
    for f in reversed(flags[:-1]):
        expr = _jst_call("Or", [_lambda(_load(f)), _lambda(expr)])
    return _jst_call("Not", [expr])


def _always_exits(stmts):
    """Whether running ``stmts`` always ends in a return or raise (an if/else both of whose
    branches do counts), so that nothing after them runs."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return bool(last.orelse) and _always_exits(last.body) and _always_exits(last.orelse)
    return False


class _Exits:
    def __init__(self, counter):
        self.counter = counter

    def function(self, fn):
        returns = [n for n in _walk_scope(fn.body) if isinstance(n, ast.Return)]
        top = [s for s in fn.body if isinstance(s, ast.Return)]
        self.ret = len(returns) > len(top)
        if self.ret and not _always_exits(fn.body):
            # Falling off the end returns None: explicit, so that a path returning None and one returning a
            # tensor are merged (and refused) like any other two values.
            fn.body.append(_copy(ast.Return(value=None), fn.body[-1]))
        body, _ = self.block(fn.body, None)
        if self.ret:
            first = fn.body[0]
            init = _located([_assign(_RET_FLAG, ast.Constant(False)),
                             _assign(_RET_VAL, _jst_call("UndefinedVar", [ast.Constant("the return value")]))],
                            first)
            end = ast.Return(value=_jst_call("ReturnValue", [_load(_RET_VAL)]))
            _copy(end, fn.body[-1])
            body = init + body + [end]
        fn.body = body

    def block(self, stmts, loop):
        out, sets = [], set()
        for i, s in enumerate(stmts):
            new, got = self.stmt(s, loop)
            out.extend(new)
            sets |= got
            flags = [f for f in ((loop.brk, loop.cnt) if loop else ()) if f in got]
            if _RET_FLAG in got:
                flags.append(_RET_FLAG)
            if flags and i + 1 < len(stmts):
                rest, rest_sets = self.block(stmts[i + 1:], loop)
                guard = ast.If(test=_not_any(flags), body=rest, orelse=[])
                out.append(_copy(guard, stmts[i + 1]))
                sets |= rest_sets
                break
        return out, sets

    def stmt(self, s, loop):
        if isinstance(s, ast.Return) and self.ret:
            value = s.value if s.value is not None else ast.Constant(None)
            return _located([_assign(_RET_VAL, value), _assign(_RET_FLAG, ast.Constant(True))], s), {_RET_FLAG}
        if isinstance(s, ast.Break) and loop is not None:
            loop.used_brk = True
            return _located([_assign(loop.brk, ast.Constant(True))], s), {loop.brk}
        if isinstance(s, ast.Continue) and loop is not None:
            loop.used_cnt = True
            return _located([_assign(loop.cnt, ast.Constant(True))], s), {loop.cnt}
        if isinstance(s, ast.If):
            s.body, a = self.block(s.body, loop)
            s.orelse, b = self.block(s.orelse, loop)
            return [s], a | b
        if isinstance(s, ast.With):
            s.body, a = self.block(s.body, loop)
            return [s], a
        if isinstance(s, ast.Try):
            sets = set()
            for attr in ("body", "orelse", "finalbody"):
                new, got = self.block(getattr(s, attr), loop)
                setattr(s, attr, new)
                sets |= got
            for h in s.handlers:
                h.body, got = self.block(h.body, loop)
                sets |= got
            return [s], sets
        if isinstance(s, ast.While) and _walrus(s.test) is not None:
            self._walrus_while(s)
        if isinstance(s, (ast.While, ast.For)):
            return self.loop(s, loop)
        return [s], set()

    @staticmethod
    def _walrus_while(s):
        """``while (n := f()) > 0: body else: tail`` -> ``while True: if not (...): tail; break`` + ``body``:
        the condition's assignment then runs in the loop body, which carries it like any other variable."""
        if any(isinstance(n, (ast.Break, ast.Continue)) for b in s.orelse for n in ast.walk(b)):
            raise Unconvertible(s.lineno, "a `while` loop with `:=` in its condition has an `else` clause "
                                "containing break or continue", "Assign the variable inside the loop instead.")
        stop = ast.If(test=_jst_call("Not", [s.test]), body=s.orelse + [_copy(ast.Break(), s)], orelse=[])
        s.body = [_copy(stop, s)] + s.body
        s.test = _copy(ast.Constant(True), s.test)
        s.orelse = []

    def loop(self, s, outer):
        self.counter[0] += 1
        inner = _Loop(self.counter[0])
        s.body, sets = self.block(s.body, inner)
        if not s.body:
            s.body = [_copy(ast.Pass(), s)]
        pre, post = [], []
        if inner.used_brk or s.orelse:
            pre.append(_copy(_assign(inner.brk, ast.Constant(False)), s))
        if inner.used_cnt:
            s.body.insert(0, _copy(_assign(inner.cnt, ast.Constant(False)), s.body[0]))
        stops = ([inner.brk] if inner.used_brk else []) + ([_RET_FLAG] if _RET_FLAG in sets else [])
        if stops:
            keep = _not_any(stops)
            if isinstance(s, ast.While):
                s.test = _copy(_jst_call("And", [_lambda(keep), _lambda(s.test)]), s.test)
            else:
                s._oar_keep = keep
        out_sets = sets & {_RET_FLAG}
        if s.orelse:
            orelse, got = self.block(s.orelse, outer)
            out_sets |= got
            post.append(_copy(ast.If(test=_jst_call("Not", [_load(inner.brk)]), body=orelse, orelse=[]),
                                          s.orelse[0]))
            s.orelse = []
        return pre + [s] + post, out_sets


# ---------------------------------------------------------------- pass 3: liveness


def _annotate_live(stmts, after, in_loop):
    """Sets ``_oar_live`` on each if/while/for: the names that may be read after it."""
    suffix = [set() for _ in stmts]
    acc = set()
    for i in range(len(stmts) - 1, -1, -1):
        suffix[i] = set(acc)
        acc |= loaded([stmts[i]])
    for i, s in enumerate(stmts):
        live = suffix[i] | after | in_loop
        if isinstance(s, ast.If):
            s._oar_live = live
            _annotate_live(s.body, live, in_loop)
            _annotate_live(s.orelse, live, in_loop)
        elif isinstance(s, (ast.While, ast.For)):
            s._oar_live = live
            keep = [s._oar_keep] if hasattr(s, "_oar_keep") else []
            _annotate_live(s.body, live, in_loop | loaded([s] + keep))
        elif isinstance(s, ast.With):
            _annotate_live(s.body, live, in_loop)
        elif isinstance(s, ast.Try):
            for block in (s.body, s.orelse, s.finalbody):
                _annotate_live(block, live, in_loop)
            for h in s.handlers:
                _annotate_live(h.body, live, in_loop)


# ---------------------------------------------------------------- pass 4: control flow


def _calls_user_code(nodes):
    return any(isinstance(n, ast.Call) and (not _is_jst(n.func) or n.func.attr == "Call") for n in _walk_scope(nodes))


def _attr_targets(nodes):
    """``X.attr`` assigned in ``nodes`` where X is a name the statements do not rebind, and ``X.*`` for the
    objects whose methods they call (Note [carried attributes])."""
    rebound = set(assigned(nodes))
    out = []
    for n in _walk_scope(nodes):
        if (isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
                and n.value.id not in rebound):
            out.append(f"{n.value.id}.{n.attr}")
    return list(dict.fromkeys(out + [f"{o}.*" for o in _method_owners(nodes)]))


def _method_owners(nodes):
    """Names X with a method call ``X.m(...)`` in ``nodes`` (after call wrapping) that the statements do not
    rebind: the method may change X's attributes (Note [carried attributes])."""
    rebound = set(assigned(nodes))
    out = []
    for n in _walk_scope(nodes):
        if isinstance(n, ast.Call) and _is_jst(n.func) and n.func.attr == "Call" and n.args:
            f = n.args[0]
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id not in rebound:
                out.append(f.value.id)
    return list(dict.fromkeys(out))


def _indirect_writes(fn, own):
    """The variables of ``fn`` (names in ``own``) that its nested functions change: declared ``nonlocal`` there,
    or appended to / popped from there; and the latter alone. A call of such a function inside a converted
    statement changes them as an assignment in the statement would."""
    written, lists = [], []
    for inner in ast.walk(fn):
        if inner is fn or not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        body = inner.body if isinstance(inner.body, list) else [inner.body]
        if not isinstance(inner, ast.Lambda):
            written += [n for n in _declared(inner, ast.Nonlocal) if n in own]
        bound = set(assigned(body)) | set(_params(inner))
        lists += [n for n in _appended_lists(body) if n in own and n not in bound]
    return list(dict.fromkeys(written + lists)), list(dict.fromkeys(lists))


# Note [carried attributes]
# A branch or loop body that assigns ``obj.attr`` (obj a name it does not
# rebind: a local object, ``self``) changes state the statement's result must
# include: while tracing, a loop's body runs once symbolically and the
# example's remaining iterations run eagerly, so an attribute left as Python
# state would keep the example's final value for every later call (and a cond
# branch would leave a tensor of its region behind). Such attributes are
# carried like variables: ``get`` reads them (UndefinedVar where missing) and
# ``set`` writes them back (``_jst.GetAttr`` / ``_jst.SetAttr``). Variables a
# nested function changes (``nonlocal``, ``lst.append``) are carried by every
# statement that calls user code, for the same reason. So are the tensor
# attributes of a plain object (not a Layer) whose method the statement calls
# (``_jst.GetState`` / ``_jst.SetState``): the method may change them.


class _ControlFlow:
    def __init__(self, counter, globals_, indirect=(), indirect_lists=()):
        self.counter = counter
        self.globals = globals_
        self.indirect, self.indirect_lists = list(indirect), list(indirect_lists)
        self.in_try = 0  # depth of `try` bodies with except clauses around the statement

    def _guarded(self):
        """The keyword that tells a helper it runs inside try/except (a tensor condition is then refused)."""
        return [ast.keyword(arg="in_try", value=ast.Constant(True))] if self.in_try else []

    def next(self):
        self.counter[0] += 1
        return self.counter[0]

    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s):
        if isinstance(s, ast.If):
            return self.if_(s)
        if isinstance(s, ast.While):
            return self.while_(s)
        if isinstance(s, ast.For):
            return self.for_(s)
        if isinstance(s, ast.With):
            s.body = self.block(s.body)
        elif isinstance(s, ast.Try):
            self.in_try += bool(s.handlers)
            s.body = self.block(s.body)
            self.in_try -= bool(s.handlers)
            s.orelse, s.finalbody = self.block(s.orelse), self.block(s.finalbody)
            for h in s.handlers:
                h.body = self.block(h.body)
        return [s]

    def _names(self, nodes):
        """The variables a statement's blocks change: assigned, or changed in place (copied per branch), or
        changed by a nested function the blocks may call."""
        extra = self.indirect if _calls_user_code(nodes) else []
        return [n for n in dict.fromkeys(assigned(nodes) + _mutated(nodes) + extra) if n not in self.globals]

    def _lists(self, nodes):
        extra = self.indirect_lists if _calls_user_code(nodes) else []
        return [n for n in dict.fromkeys(_appended_lists(nodes) + extra) if n not in self.globals]

    def _def(self, name, body, names, src, args=()):
        decl = []
        if names:
            decl.append(ast.Nonlocal(names=list(names)))
        glob = [n for n in assigned(body) if n in self.globals]
        if glob:
            decl.append(ast.Global(names=glob))
        fn = ast.FunctionDef(
            name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in args], kwonlyargs=[],
                                          kw_defaults=[], defaults=[]),
            body=decl + (body or [ast.Pass()]), decorator_list=[], returns=None, type_params=[])
        return _copy(fn, src)

    def _get_set(self, k, names, src, attrs=()):
        """``get``/``set`` functions of the variables ``names`` and the attributes ``attrs`` ("obj.attr"; "obj.*":
        the tensor attributes of a plain object)."""
        split = [a.split(".", 1) for a in attrs]
        values = ast.Tuple(elts=[_load(n) for n in names] +
                           [_jst_call("GetState", [_load(o)]) if a == "*" else
                            _jst_call("GetAttr", [_load(o), ast.Constant(a), ast.Constant(f"{o}.{a}")])
                            for o, a in split], ctx=ast.Load())
        get = self._def(f"{_PREFIX}get_{k}", [ast.Return(value=values)], (), src)
        store = []
        if names:
            target = ast.Tuple(elts=[_store(n) for n in names], ctx=ast.Store())
            value = ast.Subscript(value=_load(f"{_PREFIX}values"), slice=ast.Slice(upper=ast.Constant(len(names))),
                                  ctx=ast.Load())
            store.append(ast.Assign(targets=[target], value=value))
        for j, (o, a) in enumerate(split):
            item = ast.Subscript(value=_load(f"{_PREFIX}values"), slice=ast.Constant(len(names) + j), ctx=ast.Load())
            store.append(ast.Expr(value=_jst_call("SetState", [_load(o), item]) if a == "*" else
                                  _jst_call("SetAttr", [_load(o), ast.Constant(a), item])))
        put = self._def(f"{_PREFIX}set_{k}", store, names, src, args=(f"{_PREFIX}values",))
        return [get, put], _load(f"{_PREFIX}get_{k}"), _load(f"{_PREFIX}set_{k}")

    def if_(self, s):
        k = self.next()
        names = self._names(s.body + s.orelse)
        attrs = _attr_targets(s.body + s.orelse)
        body, orelse = self.block(s.body), self.block(s.orelse)
        t = self._def(f"{_PREFIX}true_fn_{k}", body, names, s)
        f = self._def(f"{_PREFIX}false_fn_{k}", orelse, names, s)
        gs, get, put = self._get_set(k, names, s, attrs)
        live = [n for n in names if n in getattr(s, "_oar_live", names)] + attrs
        call = _jst_call("IfElse", [s.test, _load(t.name), _load(f.name), get, put, _strs(names + attrs),
                                    _strs(live)], self._guarded())
        return _located([t, f] + gs + [ast.Expr(value=call)], s)

    def while_(self, s):
        k = self.next()
        lists = self._lists(s.body)
        names = list(dict.fromkeys(self._names(s.body) + lists))
        attrs = _attr_targets(s.body)
        body = self.block(s.body)
        test = self._def(f"{_PREFIX}cond_{k}", [ast.Return(value=s.test)], (), s)
        fn = self._def(f"{_PREFIX}body_{k}", body, names, s)
        gs, get, put = self._get_set(k, names, s, attrs)
        live = [n for n in names if n in getattr(s, "_oar_live", names)] + attrs
        call = _jst_call("While", [_load(test.name), _load(fn.name), get, put, _strs(names + attrs), _strs(live),
                                   _strs(lists)], self._guarded())
        return _located([test, fn] + gs + [ast.Expr(value=call)], s)

    def for_(self, s):
        k = self.next()
        targets = []
        _target_names(s.target, targets)
        targets = [n for n in targets if n not in self.globals]
        lists = self._lists(s.body)
        names = list(dict.fromkeys(targets + self._names(s.body) + lists))
        attrs = _attr_targets(s.body)
        body = self.block(s.body)
        value = f"{_PREFIX}item"
        set_target = self._def(f"{_PREFIX}target_{k}", [ast.Assign(targets=[s.target], value=_load(value))],
                               targets, s, args=(value,))
        fn = self._def(f"{_PREFIX}body_{k}", body, names, s)
        gs, get, put = self._get_set(k, names, s, attrs)
        live = [n for n in names if n in getattr(s, "_oar_live", names)] + attrs
        keep = getattr(s, "_oar_keep", None)
        keywords = ([ast.keyword(arg="keep", value=_lambda(keep))] if keep is not None else []) + self._guarded()
        call = _jst_call("For", [s.iter, _load(set_target.name), _load(fn.name), get, put, _strs(names + attrs),
                                 _strs(live), _strs(lists)], keywords)
        return _located([set_target, fn] + gs + [ast.Expr(value=call)], s)


# ---------------------------------------------------------------- driver


def _user_functions(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]


def _convert_function(fn, counter):
    """Passes 2-4 on one function's own scope (its nested functions are converted separately)."""
    if _is_generator(fn):
        return False
    globals_ = _declared(fn, ast.Global)
    nonlocals = _declared(fn, ast.Nonlocal)
    _Exits(counter).function(fn)
    _annotate_live(fn.body, set(), set())
    params = set(_params(fn))
    local = [n for n in assigned(fn.body) if n not in params and n not in globals_ and n not in nonlocals]
    indirect, indirect_lists = _indirect_writes(fn, set(local) | params)
    fn.body = _ControlFlow(counter, globals_, indirect, indirect_lists).block(fn.body)
    # Every local starts bound, so the nonlocal declarations of the helpers always resolve.
    init = [_assign(n, _jst_call("UndefinedVar", [ast.Constant(n)])) for n in local]
    decls = [s for s in fn.body if isinstance(s, (ast.Global, ast.Nonlocal))]
    rest = [s for s in fn.body if not isinstance(s, (ast.Global, ast.Nonlocal))]
    fn.body = decls + _located(init, fn.body[0] if fn.body else fn) + rest
    return True


def parse_function(fn):
    """The FunctionDef of ``fn``'s source, shifted to its lines in the file (Note [line numbers of converted code])."""
    # The source of the code object: inspect.getsourcelines(fn) follows __wrapped__, so for a
    # functools.wraps wrapper it would give the wrapped function's source instead of the wrapper's.
    code = fn.__code__
    lines, first = inspect.getsourcelines(code)
    source = textwrap.dedent("".join(lines))
    tree = ast.parse(source)
    if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        # A lambda or generated code: nothing to convert, it runs as written.
        raise OSError("the source is not a def statement")
    node = tree.body[0]
    if node.name != code.co_name:
        raise OSError(f"the source found for {code.co_name!r} defines {node.name!r}")
    ast.increment_lineno(tree, first - 1)
    return node


def transform(fn, class_name=None):
    """Rewrites ``fn``; returns (module tree, name of the outer factory function).

    The module defines ``_oar_factory(_jst, <free variables of fn>)`` returning
    the converted function (inside ``class <class_name>`` when fn is a method, so
    that private names are mangled as in the original and ``super()`` works).
    """
    node = parse_function(fn)
    if isinstance(node, ast.AsyncFunctionDef):
        raise Unconvertible(node.lineno, "it is an async function", "")
    if _is_generator(node):
        raise Unconvertible(node.lineno, f"'{node.name}' is a generator (it contains yield)",
                            "A generator's values cannot be captured in a program; return a list or tuple of "
                            "tensors instead, or call it outside the to_static function.")
    node.decorator_list = []
    if class_name is None:
        # The factory must not bind the function's own name: a recursive call names the global (or the
        # enclosing function's variable), not the converted function. convert_call restores the code's name.
        node.name = f"{_PREFIX}converted_{node.name}"
    node = _Expressions(node).visit(node)
    counter = [0]
    for f in _user_functions(node):
        _convert_function(f, counter)
    freevars = [v for v in fn.__code__.co_freevars if v != "__class__" or class_name is None]
    inner = [node]
    if class_name is not None:
        cls = ast.ClassDef(name=class_name, bases=[], keywords=[], body=[node], decorator_list=[], type_params=[])
        inner = [_copy(cls, node),
                 _copy(ast.Return(value=ast.Attribute(value=_load(class_name), attr="__dict__",
                                                                  ctx=ast.Load())), node)]
        ret = None
    else:
        ret = _copy(ast.Return(value=_load(node.name)), node)
    factory = ast.FunctionDef(
        name=f"{_PREFIX}factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in [JST] + freevars], kwonlyargs=[],
                           kw_defaults=[], defaults=[]),
        body=inner + ([ret] if ret is not None else []), decorator_list=[], returns=None, type_params=[])
    _copy(factory, node)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    return module, node.name, freevars
