"""Converting functions, methods and layers that converted code calls, with a cache per code object.

A call ``f(x)`` in converted code runs ``_jst.Call(f, x)``. ``convert_callable``
returns the converted version of user code (functions, bound methods, the
forward of user layers) and the callable itself for everything else: builtins
(``print``, ``len``, ``range`` and ``enumerate`` map to their converting helpers), classes,
the oar package, the standard library and installed packages (numpy...),
modules passed to ``oar.jit.ignore_module``, and functions marked
``oar.jit.not_to_static``. A function whose source cannot be read or parsed
runs as it is (tracing then still captures its tensor ops).
"""
import ast
import builtins
import os
import sysconfig
import types
import weakref

from ... import _C
from .._guard import Dy2StaticError
from . import convert_ops, origin, transformer

Tensor = _C.Tensor

# code object -> (converted code, source), or None when it cannot be converted.
_cache = weakref.WeakKeyDictionary()
# code object -> why it could not be converted: a Dy2StaticError to raise, or
# the OSError / SyntaxError that made its source unreadable.
_failures = weakref.WeakKeyDictionary()

_CO_GENERATOR, _CO_COROUTINE, _CO_ASYNC_GENERATOR = 0x20, 0x80, 0x200

_OAR_DIR = origin._OAR_DIR
_LIBRARY_DIRS = tuple(os.path.abspath(p) + os.sep for p in {sysconfig.get_paths()[k] for k in ("stdlib", "purelib",
                                                                                              "platlib")} if p)


def _is_library_file(filename):
    path = os.path.abspath(filename)
    return path.startswith(_OAR_DIR) or path.startswith(_LIBRARY_DIRS)


def _ignored(fn):
    if getattr(fn, "_oar_not_to_static", False):
        return True
    from ..api import _ignored_modules

    mod = getattr(fn, "__module__", None)
    if mod is not None and any(mod == m.__name__ or mod.startswith(m.__name__ + ".") for m in _ignored_modules):
        return True
    return False


def _class_name(fn):
    """The class a function was defined in (from its qualified name), or None."""
    parts = fn.__qualname__.split(".")
    if len(parts) >= 2 and parts[-2] != "<locals>":
        return parts[-2]
    return None


def _convertible(fn):
    if not isinstance(fn, types.FunctionType) or _ignored(fn):
        return False
    code = fn.__code__
    if fn.__name__ == "<lambda>" or code.co_flags & (_CO_GENERATOR | _CO_COROUTINE | _CO_ASYNC_GENERATOR):
        return False
    return not _is_library_file(code.co_filename)


def convertible_entry(fn):
    """Whether the function given to to_static is converted: user code, generators included (they are
    reported), not the oar package, the standard library or lambdas."""
    if isinstance(fn, types.FunctionType) and fn in _containers():
        return True
    return (isinstance(fn, types.FunctionType) and fn.__name__ != "<lambda>" and not _ignored(fn)
            and not _is_library_file(fn.__code__.co_filename))


def _converted_code(fn, strict):
    code = fn.__code__
    hit = _cache.get(code, False)
    if hit is not False:
        if hit is None and strict and isinstance(_failures.get(code), Dy2StaticError):
            raise _failures[code]
        return hit
    try:
        module, name, freevars = transformer.transform(fn, _class_name(fn))
        compiled = compile(module, code.co_filename, "exec")
        namespace = {}
        exec(compiled, fn.__globals__, namespace)
        made = namespace[f"{transformer._PREFIX}factory"](convert_ops, *([None] * len(freevars)))
        inner = made[name] if isinstance(made, types.MappingProxyType) else made
        if isinstance(inner, (staticmethod, classmethod)):
            inner = inner.__func__
        result = (inner.__code__.replace(co_name=code.co_name, co_qualname=code.co_qualname), ast.unparse(module))
    except transformer.Unconvertible as e:
        err = origin.error(origin.Location(code.co_filename, e.lineno, fn.__name__),
                           f"cannot convert {fn.__qualname__}: {e.reason}", e.advice)
        _failures[code] = err
        result = None
    except (OSError, TypeError, SyntaxError) as e:
        # No source (REPL, exec'd code, builtins) or source that does not parse alone.
        _failures[code] = e
        result = None
    _cache[code] = result
    if result is None and strict and isinstance(_failures.get(code), Dy2StaticError):
        raise _failures[code]
    return result


def why_not_converted(fn):
    """Why ``fn`` runs unconverted (its source could not be read or parsed), or None."""
    code = getattr(fn, "__code__", None)
    err = _failures.get(code) if code is not None else None
    return None if err is None or isinstance(err, Dy2StaticError) else f"{type(err).__name__}: {err}"


def convert_function(fn, strict=False):
    """The converted version of the plain function ``fn`` (``fn`` itself when it cannot be converted).

    With ``strict``, source that cannot be converted for a reason worth telling
    (a generator) raises Dy2StaticError instead.
    """
    hit = _converted_code(fn, strict)
    if hit is None:
        return fn
    code = hit[0]
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = []
    for name in code.co_freevars:
        if name == transformer.JST:
            closure.append(types.CellType(convert_ops))
        elif name in cells:
            closure.append(cells[name])
        else:  # pragma: no cover - the factory takes exactly the original free variables
            return fn
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, tuple(closure) or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    new.__doc__ = fn.__doc__
    new.__dict__.update(fn.__dict__)
    new.__wrapped__ = fn
    new._oar_converted = True
    return new


def source_of(fn):
    """The rewritten source of ``fn`` (ast.unparse of the converted module), or None."""
    hit = _converted_code(fn, True)
    return None if hit is None else hit[1]


def _containers():
    """oar layers whose forward calls sublayers: converted, so that user sublayers are converted too."""
    from ...nn import Sequential

    return (Sequential.forward,)


def _layer_call(layer):
    """Calls ``layer`` (hooks included) with its forward converted, for a user layer class."""
    from ..api import StaticFunction

    fwd = type(layer).forward
    if "forward" in layer.__dict__ or isinstance(fwd, StaticFunction):
        return layer
    if not _convertible(fwd) and fwd not in _containers():
        return layer
    converted = convert_function(fwd)
    if converted is fwd:
        return layer

    def call(*args, **kwargs):
        layer.__dict__["forward"] = types.MethodType(converted, layer)
        try:
            return type(layer).__call__(layer, *args, **kwargs)
        finally:
            layer.__dict__.pop("forward", None)

    return call


def _special():
    import oar

    return {
        builtins.print: convert_ops.Print,
        builtins.len: convert_ops.Len,
        builtins.range: convert_ops.Range,
        builtins.enumerate: convert_ops.Enumerate,
        builtins.str: convert_ops._formatting(builtins.str),
        builtins.repr: convert_ops._formatting(builtins.repr),
        builtins.format: convert_ops._formatting(builtins.format),
        oar.stack: convert_ops._stack(oar.stack),
        oar.concat: convert_ops._concat(oar.concat),
    }


_specials = []


def convert_callable(fn):
    """What converted code calls for ``fn``: its converted version, or ``fn`` itself."""
    if isinstance(fn, types.FunctionType):
        return convert_function(fn) if _convertible(fn) else fn
    if isinstance(fn, types.MethodType):
        func = fn.__func__
        if isinstance(func, types.FunctionType) and _convertible(func):
            new = convert_function(func)
            return fn if new is func else types.MethodType(new, fn.__self__)
        return fn
    if not _specials:
        _specials.append(_special())
    try:
        special = _specials[0].get(fn)
    except TypeError:  # unhashable callables
        special = None
    if special is not None:
        return special
    from ...nn import Layer

    if isinstance(fn, Layer):
        return _layer_call(fn)
    return fn
