"""Generates the op front end from the op declarations (src/ops/*.toml).

Note [op declarations]
An op's front-end facts are declared once, in a TOML table beside its C++
family file (src/ops/elementwise.toml beside unary.cpp and elementwise.cpp):
the dtype rule, the CPU dtypes, the scalar function, the gradient, what the
gradient saves, the AMP category, the docstring and its runnable example.
This script turns the declarations into

  gen/ops/api.inc              the C++ API declarations (ops::exp(x), ops::add(x, y))
  gen/ops/unary_defs.inc       infer_meta, gradient and registration per unary op,
                               and its C++ API function
  gen/ops/binary_defs.inc      the same for binary ops, their promotion table
                               entries and their C++ API functions
  gen/kernels/scalar_fns.inc   one functor per scalar function, called by the
                               CPU kernels and the fused interpreter alike
  gen/kernels/unary.inc        CPU kernels from the scalar functions
  gen/kernels/binary.inc
  gen/bind/elementwise.inc     the names and docstrings the bindings define
                               (function, Tensor method, and the in-place
                               `_` form of each)
  gen/bind/functions_<stem>.inc  the bindings of the functions declared in
                               src/ops/<stem>.toml (Note [function declarations])
  python/oar/_ops_gen.py       the exports, and the examples as doctests

which the hand-written family files include at the one place each list
belongs. Adding a unary or binary op is one table here, plus a helper in the
family file only when the gradient needs more than an expression. The op
database must have an entry for every declared op and every declaration an
example (tests/python/test_op_declarations.py), so neither can be forgotten;
`tools/gen_ops.py --skeleton NAME src/ops/*.toml` prints an entry to start
from (its TODOs fail until the reference and error inputs are written).

Fields, unary ([unary.NAME]):
  kind     Float | Same | Real | Bool | ToReal | Int | RealSame: how the input
           dtype maps (integers promoted to float for Float/Real, bool output,
           RealSame: integer or float kept as is, ...)
  meta     the output rule when it differs from kind (angle: ToReal)
  dtypes   numeric | inexact | float | real | all | complex | int | int_bool | bool
  scalar   C++ expression in x (compute type C): the scalar function
  out      C++ output element type when it is not the input's (bool, real_t<T>)
  vec      vmath::Fn with a dense vectorised path (exp, log, ...)
  grad     the gradient as one C++ expression of G (output grad), X (input),
           Y (output); or grad_fn, a function in the family file
  saves    inputs | outputs | none: what the gradient reads
  cpp_api  "custom" when the family file defines the C++ API function by hand
           (real, imag and conj return real inputs unchanged)
Binary ([binary.NAME]):
  promote  Arith | TrueDiv | Float | Compare | Logical | Bitwise
  dtypes, scalar (in a and b), kernel = "custom" for a hand-written kernel
  grad     two expressions [for x, for y] of G, X, Y (broadcast-reduced by
           the generator), or grad_fn
Both: amp = "float32" (default: follows its inputs), public = false (no
Python name), aliases (other names of exactly this function, Paddle's and
the PyTorch-style ones Paddle accepts: mul, greater, ...), doc, example.
In-place forms (NAME_, function and Tensor method) are generated for every
op but those with inplace = false; their example is the op's example with
its call made in place on the first argument, or inplace_example.

Note [function declarations]
Functions whose work is one call of the C++ op API ([function.NAME], e.g.
src/ops/reduce.toml) declare their Paddle signature and that call:
  args     the Python signature, "x: Tensor, axis: Axes = None, keepdim: bool
           = False, name = None"; each argument's type says how the binding
           normalises it, in C++ (python/bind/args.h), once for the function
           and its Tensor method:
             Tensor, bool, float, str, Scalar, Scalar?  as given
             int     an int (not a bool) or a one-element integer Tensor
             Tensor? a Tensor or None (std::optional); Tensors a list/tuple of
                     Tensors
             Axes    None (every axis), an int, a list/tuple or an int Tensor
             Axis    an int or a one-element int Tensor; Axis? also None
             Shape   a list/tuple of ints (or one-element Tensors), an int Tensor;
                     Ints the same for lists that are not shapes (axes, starts)
             DType   a dtype, its name, a NumPy dtype or a Python type; DType?
                     also None
             Index   an int32 or int64 Tensor, or an int, a list or a NumPy
                     array of ints (read as int64)
             Values  a Tensor, or a number, a list or a NumPy array (read as
                     NumPy would; the call casts it where it must)
             object  the Python object, for the call to look at
           an argument without a type (Paddle's `name`) is accepted and unused
  call     the C++ expression, of the converted arguments and `api` (the
           function's name for messages), that the binding returns
  method   false when the function is not also a Tensor method (its first
           argument is then not a Tensor's self)
  method_aliases  other names of the Tensor method only (astype)
  module   the public module when it is not oar itself ("nn.functional"):
           the function is bound in the extension's submodule of that name
           (_C._nn_functional) and exported by the module's generated
           _ops_gen.py (python/oar/nn/functional/_ops_gen.py; beside a module
           file, _linalg_ops_gen.py), which the module star-imports; such a
           function is not a Tensor method unless method = true
and doc, example, aliases, public as the elementwise ops. For each
declaration file src/ops/<stem>.toml the generator writes
gen/bind/functions_<stem>.inc, a bind_<stem>_functions(module, Tensor class)
defining each function, alias and method with its docstring, which
python/bind/<stem>.cpp includes after the glue that some calls use.
"""
import argparse
import math
import os
import re
import sys
import tomllib

DTYPE_SETS = {  # name -> (visitor, dtype list macro), as in kernels/cpu/dtype_lists.h
    "numeric": ("visit_numeric", "OAR_NUMERIC_DTYPES"),
    "inexact": ("visit_inexact", "OAR_INEXACT_DTYPES"),
    "float": ("visit_float", "OAR_FLOAT_DTYPES"),
    "real": ("visit_real", "OAR_REAL_DTYPES"),
    "all": ("visit_dtype", "OAR_ALL_DTYPES"),
    "complex": ("visit_inexact", "OAR_COMPLEX_DTYPES"),
    "int": ("visit_int", "OAR_INT_DTYPES"),
    "int_bool": ("visit_int", "OAR_INT_BOOL_DTYPES"),
    "bool": ("visit_int", "{DType::Bool}"),
}
UNARY_KINDS = {"Float", "Same", "Real", "Bool", "ToReal", "Int", "RealSame"}
PROMOTIONS = {"Arith", "TrueDiv", "Float", "Compare", "Logical", "Bitwise"}
SAVES = {"inputs": ("true", "false"), "outputs": ("false", "true"), "none": ("false", "false")}
UNARY_FIELDS = {"kind", "meta", "dtypes", "scalar", "out", "vec", "grad", "grad_fn", "saves", "amp", "public", "doc",
                "cpp_api",
                "example", "inplace_example", "inplace", "kernel", "aliases"}
FUNCTION_FIELDS = {"args", "call", "method", "method_aliases", "module", "public", "doc", "example", "aliases"}
# argument type -> (C++ parameter type, conversion of the parameter `{p}` or None)
ARG_TYPES = {
    "Tensor": ("const Tensor&", None),
    "Tensor?": ("std::optional<Tensor>", None),
    "Tensors": ("const std::vector<Tensor>&", None),
    "bool": ("bool", None),
    "int": ("nb::handle", 'arg_axis({p}, api, "{n}")'),
    "float": ("double", None),
    "str": ("const std::string&", None),
    "Scalar": ("const Scalar&", None),
    "Scalar?": ("std::optional<Scalar>", None),
    "object": ("nb::handle", None),
    "Axes": ("nb::handle", 'arg_axes({p}, api, "{n}")'),
    "Axis": ("nb::handle", 'arg_axis({p}, api, "{n}")'),
    "Axis?": ("nb::handle", 'arg_opt_axis({p}, api, "{n}")'),
    "Shape": ("nb::handle", 'arg_shape({p}, api, "{n}")'),
    "Ints": ("nb::handle", 'arg_shape({p}, api, "{n}")'),
    "DType": ("nb::handle", "to_dtype({p}, api)"),
    "DType?": ("nb::handle", "opt_dtype({p}, api)"),
    "Index": ("nb::handle", 'arg_index({p}, api, "{n}")'),
    "Values": ("nb::handle", 'arg_values({p}, api, "{n}")'),
}
BINARY_FIELDS = {"promote", "dtypes", "scalar", "kernel", "grad", "grad_fn", "amp", "public", "doc", "example",
                 "inplace_example", "inplace", "aliases"}
PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "oar")
HEADER = "// Generated by tools/gen_ops.py from {src}; edit the declarations, not this file.\n"


class DeclError(Exception):
    pass


def _check(cond, where, what):
    if not cond:
        raise DeclError(f"{where}: {what}")


def load(paths):
    """{"unary": {name: decl}, "binary": {...}, "function": {...}} from every declaration file, validated."""
    ops = {"unary": {}, "binary": {}, "function": {}}
    names = set()  # op names and aliases
    for path in paths:
        with open(path, "rb") as f:
            data = tomllib.load(f)
        for family, table in data.items():
            _check(family in ops, path, f"unknown family [{family}]; expected unary, binary or function")
            fields = {"unary": UNARY_FIELDS, "binary": BINARY_FIELDS, "function": FUNCTION_FIELDS}[family]
            _check(isinstance(table, dict) and all(isinstance(d, dict) for d in table.values()), path,
                   f"[{family}] must hold tables, one per op: [{family}.NAME]")
            for name, d in table.items():
                where = f"{path}: [{family}.{name}]"
                module = d.get("module", "") if family == "function" else ""
                _check(isinstance(module, str) and (not module or all(p.isidentifier() for p in module.split("."))),
                       where, "module must be a dotted module path such as 'nn.functional'")
                _check(not module or module_export_path(PACKAGE, module), where,
                       f"module {module!r} must be a package or a module of python/oar")
                qual = lambda n: f"{module}.{n}" if module else n  # noqa: E731
                _check(name.isidentifier() and qual(name) not in names, where,
                       "names must be identifiers declared once")
                names.add(qual(name))
                _check(not set(d) - fields, where, f"unknown fields {sorted(set(d) - fields)}")
                if d.get("public", True):
                    _check(isinstance(d.get("doc"), str) and d["doc"].strip(), where, "needs a doc")
                    ex = d.get("example", "")
                    _check(isinstance(ex, str) and ">>> " in ex, where, "needs a runnable example (>>> lines)")
                    try:
                        _inplace_doc(d, name)
                    except DeclError as e:
                        raise DeclError(f"{path}: {e}") from None
                aliases = d.get("aliases", [])
                _check(isinstance(aliases, list) and all(isinstance(a, str) and a.isidentifier() for a in aliases),
                       where, "aliases must be a list of names")
                for a in aliases:
                    _check(qual(a) not in names, where, f"the name {a} is declared twice")
                    names.add(qual(a))
                if family == "function":
                    _check(isinstance(d.get("call"), str) and d["call"].strip(), where, "needs a call")
                    d.setdefault("method", not module)
                    d["_module"], d["_name"] = module, name
                    _check(d["method"] in (True, False), where, "method must be true or false")
                    _check("method_aliases" not in d or (isinstance(d["method_aliases"], list) and d["method"]
                                                          and all(str(a).isidentifier() for a in d["method_aliases"])),
                           where, "method_aliases must be a list of names, of a function that is a Tensor method")
                    d["_args"] = parse_args(d.get("args", ""), where)
                    d["_file"] = os.path.splitext(os.path.basename(path))[0]
                    _check(not d["method"] or (d["_args"] and d["_args"][0][1] == "Tensor"), where,
                           "a Tensor method's first argument must be a Tensor (or give method = false)")
                    ops[family][qual(name)] = d
                    continue
                if d.get("kernel") != "custom":
                    _check(d.get("dtypes") in DTYPE_SETS, where, f"dtypes must be one of {sorted(DTYPE_SETS)}")
                    _check(isinstance(d.get("scalar"), str), where, "needs a scalar expression or kernel = 'custom'")
                _check(not ("grad" in d and "grad_fn" in d), where, "give grad or grad_fn, not both")
                _check(d.get("amp", "float32") == "float32", where, "amp must be 'float32' when given")
                _check(d.get("inplace", True) in (True, False), where, "inplace must be true or false")
                if family == "unary":
                    _check(d.get("kind") in UNARY_KINDS, where, f"kind must be one of {sorted(UNARY_KINDS)}")
                    _check(d.get("meta", d["kind"]) in UNARY_KINDS, where, "meta must be a kind")
                    _check(d.get("saves", "none") in SAVES, where, f"saves must be one of {sorted(SAVES)}")
                    _check("grad" not in d or isinstance(d["grad"], str), where, "grad must be one expression")
                    _check(d.get("cpp_api", "custom") == "custom", where, "cpp_api must be 'custom' when given")
                else:
                    _check(d.get("promote") in PROMOTIONS, where, f"promote must be one of {sorted(PROMOTIONS)}")
                    _check("grad" not in d or (isinstance(d["grad"], list) and len(d["grad"]) == 2), where,
                           "grad must be two expressions, [for x, for y]")
                ops[family][name] = d
    return ops


# Names the generated C++ uses itself, and C++ keywords an argument may not take.
RESERVED = {"api", "f", "self", "m", "cls", "doc", "class", "default", "new", "delete", "template", "typename",
            "operator", "this", "namespace", "register", "union", "auto", "char", "int", "float", "double", "bool",
            "long", "short", "signed", "unsigned", "void", "const", "static", "struct", "switch", "case", "do",
            "goto", "friend", "private", "public", "protected", "virtual", "explicit", "inline", "volatile", "try",
            "catch", "throw", "enum", "export", "extern", "mutable", "using", "true", "false", "nullptr", "sizeof"}
# Types whose C++ parameter takes None (an optional or a Python object).
NONE_OK = {t for t, (ctype, conv) in ARG_TYPES.items()
           if t in ("object", "Axes") or t.endswith("?") or (ctype.startswith("std::optional") and t != "int")}


def parse_args(text, where):
    """[(name, type or None, default literal or None)] of a declared signature."""
    out, seen_default = [], False
    _check(isinstance(text, str), where, "args must be a string")
    for part in _split_args(text):
        head, _, default = (x.strip() for x in part.partition("="))
        name, _, typ = (x.strip() for x in head.partition(":"))
        _check(name.isidentifier() and name not in [a[0] for a in out] and name not in RESERVED
               and not name.endswith("_"), where,
               f"argument {name!r} must be a new identifier, not a C++ keyword or a name the binding uses, "
               "and not end in '_'")
        _check(not typ or typ in ARG_TYPES, where, f"argument {name}: type must be one of {sorted(ARG_TYPES)}")
        _check(typ or default == "None", where, f"argument {name}: an argument without a type must default to None")
        _check(default or not seen_default, where, f"argument {name}: a required argument follows a default")
        if default:
            _check(default != "None" or not typ or typ in NONE_OK, where,
                   f"argument {name}: a {typ} cannot default to None (give the type a '?' or use object)")
            try:
                _default(typ, default)
            except DeclError as e:
                raise DeclError(f"{where}: argument {name}: {e}") from None
        seen_default |= bool(default)
        out.append((name, typ or None, default or None))
    return out


def _default(typ, lit):
    """The nanobind default of a declared Python default literal."""
    if lit == "None":
        return "nb::none()"
    if lit in ("True", "False"):
        return lit.lower()
    if len(lit) >= 2 and lit[0] in "'\"" and lit[-1] == lit[0]:
        return _cstr(lit[1:-1])
    try:
        v = float(lit)
    except ValueError:
        raise DeclError(f"unsupported default {lit!r}: give None, True, False, a number or a quoted string") from None
    if not math.isfinite(v):
        raise DeclError(f"unsupported default {lit!r}: numbers must be finite")
    return f"int64_t({lit})" if typ == "int" else (f"double({lit})" if typ == "float" else lit)


def _py_args(args):
    """The nanobind argument list; arguments taken as Python objects or optionals accept None."""
    out = []
    for n, t, v in args:
        ctype = ARG_TYPES[t][0] if t else "nb::handle"
        a = f'nb::arg("{n}")' + (".none()" if ctype == "nb::handle" or ctype.startswith("std::optional") else "")
        out.append(a + (f" = {_default(t, v)}" if v else ""))
    return ", ".join(out)


def functions(ops, stem):
    """gen/bind/functions_<stem>.inc: the bindings of the functions declared in
    src/ops/<stem>.toml (Note [function declarations])."""
    out = [f"void bind_{stem}_functions(nb::module_& m, nb::class_<TensorImpl> cls) {{"]
    for qual, d in ops.items():
        if d["_file"] != stem:
            continue
        name, module = d["_name"], d["_module"]
        target = f"submodule(m, \"{_submodule(module)}\")" if module else "m"
        args = d["_args"]
        params, convs, passed = [], [], []  # lambda parameters, conversions, what the method passes on
        for n, t, _ in args:
            ctype, conv = ARG_TYPES[t] if t else ("nb::handle", None)
            pname = f"{n}_" if conv else (n if t else "")
            params.append(f"{ctype} {pname}".rstrip())
            passed.append(pname or "nb::handle()")
            if conv:
                convs.append(f"      const auto {n} = {conv.format(p=pname, n=n)};")
        doc = _doc(d) if d.get("public", True) else None
        out += ["  {", f"    auto f = []({', '.join(params)}) {{",
                f'      [[maybe_unused]] constexpr const char* api = "oar.{qual}";']
        out += convs + [f"      return {d['call'].strip()};", "    };"]
        out.append(f"    constexpr const char* doc = {_cstr(doc)};")
        names = [(name, "doc")] + [(a, _cstr(doc and f"Another name of oar.{qual}.\n\n" + doc))
                                   for a in d.get("aliases", [])]
        for py, pdoc in names:
            out.append(f'    {target}.def("{py}", f, {_py_args(args)}, {pdoc});')
        if d.get("method", True):
            rparams = ", ".join(["TensorImpl* self"] + params[1:])
            lam = f"[f]({rparams}) {{ return f({', '.join(['Tensor(self)'] + passed[1:])}); }}"
            rest = _py_args(args[1:])
            for py, pdoc in names + [(a, _cstr(doc and f"Another name of Tensor.{name}.\n\n" + doc))
                                     for a in d.get("method_aliases", [])]:
                out.append(f'    cls.def("{py}", {lam}' + (f", {rest}" if rest else "") + f", {pdoc});")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def _doc(d):
    """The docstring: the description, then the example."""
    return d["doc"].strip() + "\n\n" + d["example"].strip("\n") + "\n"


def _cstr(s):
    if s is None:
        return "nullptr"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _amp(d):
    return "CastPolicy::Float32" if d.get("amp") == "float32" else "CastPolicy::Promote"


def api_decls(ops):
    """The C++ API of the declared ops, for ops.h."""
    out = [f"Tensor {n}(const Tensor& x);" for n in ops["unary"]]
    out += [f"Tensor {n}(const Tensor& x, const Tensor& y);" for n in ops["binary"]]
    return "\n".join(out) + "\n"


def unary_defs(ops):
    out, apis = [], []
    for name, d in ops.items():
        meta = d.get("meta", d["kind"])
        save_in, save_out = SAVES[d.get("saves", "none")]
        out.append(f"Metas {name}_meta(std::span<const Tensor> in, const Attrs& a) {{\n"
                   f"  return unary_meta(in, a, UKind::{meta}, \"{name}\");\n}}")
        grad = "nullptr"
        if "grad" in d:
            out.append(f"Tensors {name}_grad(const GradCtx& c) {{ return {{{d['grad']}}}; }}")
            grad = f"{name}_grad"
        elif "grad_fn" in d:
            grad = d["grad_fn"]
        out.append(f"UnaryReg {name}_reg(\"{name}\", UKind::{d['kind']}, {name}_meta, {grad}, {save_in}, {save_out}, "
                   f"{_amp(d)});")
        if d.get("cpp_api") != "custom":
            apis.append(f"Tensor {name}(const Tensor& x) {{ return unary(\"{name}\", x); }}")
    return ("#ifdef OAR_GEN_UNARY_DEFS\n" + "\n".join(out) + "\n#endif\n"
            "#ifdef OAR_GEN_UNARY_API\n" + "\n".join(apis) + "\n#endif\n")


def binary_defs(ops):
    metas, defs, table, apis = [], [], [], []
    for name, d in ops.items():
        kind = "Bool" if d["promote"] in ("Compare", "Logical") else "Same"
        metas.append(f"OAR_BINARY_META({name}, OutKind::{kind})")
        grad = "nullptr"
        if "grad" in d:
            gx, gy = d["grad"]
            defs.append(f"Tensors {name}_grad(const GradCtx& c) {{\n"
                        f"  const Tensor &X = c.in(0), &Y = c.in(1);\n  const Tensor G = c.grad();\n"
                        f"  return {{c.needs_grad(0) ? reduce_grad({gx}, X) : Tensor(),\n"
                        f"          c.needs_grad(1) ? reduce_grad({gy}, Y) : Tensor()}};\n}}")
            grad = f"{name}_grad"
        elif "grad_fn" in d:
            grad = d["grad_fn"]
        defs.append(f"OAR_DEF_BINARY({name}, {grad}, {_amp(d)})")
        table.append(f"{{\"{name}\", {{&k_{name}, Promote::{d['promote']}}}}},")
        apis.append(f"OAR_BINARY_API({name})")
    return ("#ifdef OAR_GEN_BINARY_DEFS\n" + "\n".join(metas + defs) + "\n#endif\n"
            "#ifdef OAR_GEN_BINARY_TABLE\n" + "\n".join(table) + "\n#endif\n"
            "#ifdef OAR_GEN_BINARY_API\n" + "\n".join(apis) + "\n#endif\n")


_STD_CALL = re.compile(r"\bstd::([a-z_][a-z0-9_]*)\(")


def _unqualified(expr):
    """expr with its std:: function calls made unqualified, and the using-declarations that
    bring the std overloads in: so a complex type of another namespace (CUDA's complex in the
    device kernels) finds its own overloads by argument-dependent lookup."""
    names = sorted(set(_STD_CALL.findall(expr)))
    return "".join(f"using std::{n}; " for n in names), _STD_CALL.sub(r"\1(", expr)


def scalar_fns(ops):
    """One functor per declared op with a scalar function: what kernels and the fused interpreter call."""
    out = []
    for family, args in (("unary", "C x"), ("binary", "C a, C b")):
        for name, d in ops[family].items():
            if d.get("kernel") != "custom":
                using, expr = _unqualified(d["scalar"])
                out.append(f"struct op_{name} {{\n  template <typename C> OAR_HD static auto apply({args}) {{ "
                           f"{using}return {expr}; }}\n}};")
    return "\n".join(out) + "\n"


def kernels(ops, family):
    out = []
    for name, d in ops.items():
        if d.get("kernel") == "custom":
            continue
        visit, dtypes = DTYPE_SETS[d["dtypes"]]
        if family == "unary":
            call = f"scalar::op_{name}::apply(x)"
            if "out" in d:
                out.append(f"OAR_UNARY_TO({name}, {visit}, {dtypes}, {d['out']}, {call})")
            else:
                vec = f"vmath::Fn::{d['vec']}" if "vec" in d else "kNoVec"
                out.append(f"OAR_UNARY_KERNEL({name}, {visit}, {dtypes}, {vec}, {call})")
        else:
            o = "bool" if d["promote"] in ("Compare", "Logical") else "T"
            out.append(f"OAR_BINARY_KERNEL({name}, {visit}, {dtypes}, {o}, scalar::op_{name}::apply(a, b))")
    return "\n".join(out) + "\n"


def _split_args(text):
    """The top-level comma-separated parts of an argument list."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "([{" and 1 or c in ")]}" and -1 or 0
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _inplace_example(d, name):
    """The example of oar.<name>_: the declared `inplace_example`, or the
    op's example with its first call of oar.<name>(...) made in place on its
    first argument (the printed result is then the argument's)."""
    if "inplace_example" in d:
        return d["inplace_example"].strip("\n").replace("oar.{name}_", f"oar.{name}_")
    lines = d["example"].strip("\n").splitlines()
    for k, line in enumerate(lines):
        for call in (f">>> oar.{name}(",) + tuple(f">>> oar.{a}(" for a in d.get("aliases", [])):
            if not line.startswith(call):
                continue
            depth, i = 1, len(call)
            while depth and i < len(line):
                depth += {"(": 1, ")": -1}.get(line[i], 0)
                i += 1
            args = _split_args(line[len(call):i - 1])
            rest = ", ".join([""] + args[1:])
            return "\n".join(lines[:k] + [f">>> x = {args[0]}", f">>> _ = oar.{name}_(x{rest})", f">>> x{line[i:]}"]
                             + lines[k + 1:])
    raise DeclError(f"[{name}]: the example does not call oar.{name}(...) on a line of its own; "
                    "give an inplace_example")


def has_inplace(d):
    """Whether the op has an in-place form (`inplace = false` for ops whose
    result cannot be written into their input, a bool or real result of a
    float or complex one, and that Paddle has no in-place form of)."""
    return "call" not in d and d.get("inplace", True)


def _inplace_doc(d, name):
    if not has_inplace(d):
        return None
    return (f"oar.{name} in place: the result is written into x (which keeps its dtype and shape) and x is "
            f"returned.\n\n{_inplace_example(d, name)}\n")


def _names(d, name):
    """(Python name, docstring, in-place docstring) of an op and each of its aliases."""
    ip = _inplace_doc(d, name)
    yield name, _doc(d), ip
    for a in d.get("aliases", []):
        yield a, f"Another name of oar.{name}.\n\n" + _doc(d), ip and f"Another name of oar.{name}_.\n\n" + ip


def bindings(ops):
    out = []
    for family in ("unary", "binary"):
        out.append(f"constexpr DeclaredOp kDeclared{family.capitalize()}[] = {{")
        for name, d in ops[family].items():
            if d.get("public", True):
                out += [f"    {{\"{py}\", \"{name}\", {_cstr(doc)}, {_cstr(ip)}}},"
                        for py, doc, ip in _names(d, name)]
        out.append("};")
    return "\n".join(out) + "\n"


def _submodule(module):
    """The extension's submodule of a public module: "nn.functional" -> "_nn_functional"."""
    return "_" + module.replace(".", "_")


def modules_of(ops):
    """The public modules other than oar itself that declared functions go to."""
    return sorted({d["_module"] for d in ops["function"].values() if d["_module"]})


def module_export_path(package, module):
    """Where the generated exports of oar.<module> go: <package>/_ops_gen.py for
    a package (nn.functional), _<name>_ops_gen.py beside a module file (linalg);
    None when oar.<module> is neither."""
    parts = module.split(".")
    if os.path.isfile(os.path.join(package, *parts, "__init__.py")):
        return os.path.join(package, *parts, "_ops_gen.py")
    if os.path.isfile(os.path.join(package, *parts[:-1], parts[-1] + ".py")):
        return os.path.join(package, *parts[:-1], f"_{parts[-1]}_ops_gen.py")
    return None


def submodule_python(ops, module):
    """The names oar.<module>'s declared functions export (module_export_path)."""
    fns = [d for d in ops["function"].values() if d["_module"] == module and d.get("public", True)]
    names = [n for d in fns for n in [d["_name"]] + d.get("aliases", [])]
    is_package = module_export_path(PACKAGE, module).endswith(os.sep + "_ops_gen.py")
    dots = "." * (module.count(".") + (2 if is_package else 1))
    lines = [f'"""The declared functions of oar.{module} (generated by tools/gen_ops.py from src/ops/*.toml).',
             "", "Their examples run as doctests through __test__.", '"""',
             f"from {dots}_C import {_submodule(module)} as _m", ""]
    lines += [f"{n} = _m.{n}" for n in names]
    lines += ["", "__all__ = ["] + [f"    \"{n}\"," for n in names] + ["]", "", "__test__ = {"]
    lines += [f"    \"{d['_name']}\": {_doc(d)!r}," for d in fns]
    lines += ["}", ""]
    return "\n".join(lines)


def python_module(ops):
    public = [(n, d) for fam in ops.values() for n, d in fam.items() if d.get("public", True) and not d.get("_module")]
    lines = ['"""The declared ops\' Python names (generated by tools/gen_ops.py from src/ops/*.toml).',
             "", "Their examples run as doctests through __test__.", '"""',
             "from ._C import (  # noqa: F401"]
    # each op, its aliases, and the in-place form of each
    names = [m for n, d in public for py, _, ip in _names(d, n) for m in ((py, py + "_") if ip else (py,))]
    lines += [f"    {n}," for n in names]
    lines += [")", "", "__all__ = ["] + [f"    \"{n}\"," for n in names] + ["]", "", "__test__ = {"]
    lines += [f"    \"{n}\": {_doc(d)!r}," for n, d in public]
    lines += [f"    \"{n}_\": {_inplace_doc(d, n)!r}," for n, d in public if has_inplace(d)]
    lines += ["}", ""]
    return "\n".join(lines)


OPDB_DTYPES = {"numeric": "NUMERIC", "inexact": "INEXACT", "float": "FLOATS", "real": "REAL", "all": "ALL",
               "complex": "COMPLEX", "int": "INTS", "int_bool": '("bool",) + INTS', "bool": '("bool",)'}


def skeleton(ops, name):
    """An op-database entry to start from (tests/python/opdb*.py): the family's
    helper for unary and binary ops, a full OpInfo for functions. What only a
    person can write (the NumPy reference, error inputs) is left as TODO, which
    fails until it is filled in."""
    for family, table in ops.items():
        if name not in table:
            continue
        d = table[name]
        if family in ("unary", "binary"):
            grad = "grad" in d or "grad_fn" in d
            try:
                import numpy
                ref = f"np.{name}" if hasattr(numpy, name) else "TODO_numpy_reference"
            except ImportError:
                ref = "TODO_numpy_reference"
            dts = OPDB_DTYPES.get(d.get("dtypes"), "FLOATS")
            return f'_{family}("{name}", {ref}, {dts}' + (", grad=True, gradgrad=True" if grad else ", grad=False") + ")\n"
        args = [a for a in d["_args"] if a[1]]
        tensors = [n for n, t, v in args if t == "Tensor" and not v]
        rest = [f"{n}={v or 'None'}" for n, t, v in args if n not in tensors]
        sample = ", ".join("np.ones((3, 4))" for _ in tensors) + ("," if len(tensors) == 1 else "")
        return (f"register(OpInfo(\n    \"{name}\", oar.{name},\n"
                f"    lambda {', '.join(tensors + rest)}: TODO_numpy_reference,\n"
                f"    FLOATS, lambda dtype: [Sample(({sample}), {{}})],  # TODO: samples of each argument form\n"
                f"    grad=True, gradgrad=True,\n"
                f"    errors=lambda: [_err(lambda: oar.{name}(TODO_bad_input), TypeError, \"{name}\")]))\n")
    raise DeclError(f"no declaration named {name}")


def write(path, text):
    """Writes only when the content changed, so that unchanged outputs rebuild nothing."""
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def outputs(ops, out, python, decls):
    """[(path, function making its text)]: every file the declarations generate."""
    h = HEADER.format(src=", ".join(os.path.relpath(p) for p in decls))
    py_h = "# " + h[3:]
    files = [
        ("ops/api.inc", lambda: h + api_decls(ops)),
        ("ops/unary_defs.inc", lambda: h + unary_defs(ops["unary"])),
        ("ops/binary_defs.inc", lambda: h + binary_defs(ops["binary"])),
        ("kernels/scalar_fns.inc", lambda: h + scalar_fns(ops)),
        ("kernels/unary.inc", lambda: h + kernels(ops["unary"], "unary")),
        ("kernels/binary.inc", lambda: h + kernels(ops["binary"], "binary")),
        ("bind/elementwise.inc", lambda: h + bindings(ops)),
    ]
    out_files = [(os.path.join(out, p), f) for p, f in files]
    for path in decls:
        stem = os.path.splitext(os.path.basename(path))[0]
        out_files.append((os.path.join(out, f"bind/functions_{stem}.inc"),
                          lambda stem=stem: h + functions(ops["function"], stem)))
    out_files.append((python, lambda: py_h + python_module(ops)))
    for module in modules_of(ops):
        out_files.append((module_export_path(os.path.dirname(python), module),
                          lambda module=module: py_h + submodule_python(ops, module)))
    return out_files


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="folder of the generated C++ (gen/)")
    ap.add_argument("--python", help="path of the generated Python module")
    ap.add_argument("--skeleton", metavar="NAME", help="print an op-database entry for NAME to start from")
    ap.add_argument("--list-outputs", action="store_true", help="print the generated files' paths, ';'-separated")
    ap.add_argument("decls", nargs="+", help="declaration files (src/ops/*.toml)")
    args = ap.parse_args(argv)
    try:
        ops = load(args.decls)
        if args.skeleton:
            sys.stdout.write(skeleton(ops, args.skeleton))
            return
        if not (args.out and args.python):
            ap.error("--out and --python are required unless --skeleton is given")
        files = outputs(ops, args.out, args.python, args.decls)
        if args.list_outputs:
            sys.stdout.write(";".join(path for path, _ in files))
            return
        for path, text in files:
            write(path, text())
    except DeclError as e:
        sys.exit(f"gen_ops: {e}")


if __name__ == "__main__":
    main()
