"""The error boundary of the public API (Note [API error boundary]).

Every error a user sees starts with the name of the API they called, in
brackets, and has a typed exception. Functions check their own arguments and
say what was expected and what was given; this boundary is what guarantees
the name when an error comes from deeper down: an internal op
("[oar.expand] ..." raised inside oar.broadcast_to), a Python conversion
(``int(None)`` inside a function) or a helper with no name ("[oar] dtype ...").
Such a message is re-labelled "[oar.broadcast_to] expand: ..." and keeps its
traceback.

Two halves share one rule (`relabel`): Python functions of the public modules
are wrapped once at import (`guard_module`); functions bound in C++ get the
same treatment from the extension module itself, on the error path only
(python/bind/module.cpp), so the hot path pays nothing.
"""
import functools
import re
import types

_TAG = re.compile(r"^\[([^\]\s]*)\]\s?")
_NO_ATTR = re.compile(r"^'(?P<type>[\w.]+)' object has no attribute '(?P<attr>\w+)'$")
_NOT_SEQ = re.compile(r"^(?:'(?P<type>[\w.]+)' object (?:is not iterable|is not subscriptable)|"
                      r"object of type '(?P<type2>[\w.]+)' has no len\(\))$")
_NB_SIGNATURE = re.compile(r"(?P<fn>[\w.]*)\(\): incompatible function arguments\. The following argument types "
                           r"are supported:\s*(?P<sigs>.*?)\s*Invoked with types: (?P<got>.*)$", re.S)

# Python exceptions that describe bad arguments but are the wrong type for a
# user error: the boundary re-raises them as the type users can catch.
_RETYPE = {AttributeError: TypeError, ZeroDivisionError: ValueError, StopIteration: ValueError,
           KeyError: ValueError, UnicodeError: ValueError}
_KEEP = (TypeError, ValueError, IndexError, NotImplementedError, RuntimeError, MemoryError, OverflowError,
         TimeoutError, FileNotFoundError)


# Errors that speak for a context the user set up (a to_static trace, a
# static program, a distributed job) keep their own tag wherever they surface.
_CONTEXTS = ("oar.jit.", "oar.static.", "oar.distributed.")
# Entry points that run other code (gradient rules, hooks, user callbacks):
# errors from inside keep the tag of whatever raised them.
_PASS_THROUGH = {"oar.Tensor.backward", "oar.grad", "oar.autograd.backward", "oar.autograd.grad", "oar.Tensor.apply",
                 "oar.Tensor.apply_"}


def _given(type_name):
    return "None" if type_name == "NoneType" else f"a {type_name}"


def _short(name):
    return name.rsplit(".", 1)[-1].lstrip("_").rstrip("_")


def relabel(exc, api):
    """The exception to raise for `exc` escaping public function `api`
    ("oar.tile"), or None when exc already names it."""
    tagged = _TAG.match(str(exc))
    if api in _PASS_THROUGH and tagged and tagged.group(1).startswith("oar.") \
            and tagged.group(1) not in ("oar.autograd.backward", "oar.autograd.grad"):  # the engine's own are relabelled
        return None
    msg = str(exc.args[0]) if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)
    nb = _NB_SIGNATURE.search(msg)
    if nb:  # nanobind's overload report, in our words
        sigs = "; ".join(re.sub(r"^\s*\d+\.\s*", "", s).strip() for s in nb["sigs"].strip().splitlines() if s.strip())
        sigs = sigs.replace("oar._C.", "oar.").replace("collections.abc.", "")
        got = nb["got"].strip().replace("oar._C.", "oar.")
        return TypeError(f"[{api}] got arguments of types ({got}); expected {sigs}")
    attr = _NO_ATTR.match(msg) if isinstance(exc, AttributeError) else None
    if attr:  # an argument of the wrong type met an attribute lookup
        return TypeError(f"[{api}] got {_given(attr['type'])} where a Tensor (or an object with "
                         f".{attr['attr']}) was expected")
    seq = _NOT_SEQ.match(msg) if isinstance(exc, TypeError) else None
    if seq:  # an argument of the wrong type was iterated, indexed or measured
        return TypeError(f"[{api}] got {_given(seq['type'] or seq['type2'])} where a list or tuple was expected")
    m = _TAG.match(msg)
    if m and m.group(1).startswith("oar.") and (_short(m.group(1)) == _short(api) or
                                               m.group(1).startswith(_CONTEXTS)):
        return None
    if m:
        inner = m.group(1)
        rest = msg[m.end():]
        if _short(inner) == _short(api):
            pass  # the same API under another spelling ("[Tensor.x]"): the tag is replaced
        elif inner.startswith("oar.") and inner != "oar":
            rest = f"{inner[4:]}: {rest}"
        elif inner not in ("oar", ""):
            rest = f"{inner}: {rest}"
    else:
        rest = msg if msg else type(exc).__name__
        if isinstance(exc, KeyError) and exc.args:
            rest = f"no entry {exc.args[0]!r}"
    cls = next((t for t in _KEEP if type(exc) is t), None)
    if cls is None:
        cls = next((v for k, v in _RETYPE.items() if isinstance(exc, k)), None)
    if cls is None:
        cls = next((t for t in _KEEP if isinstance(exc, t) and t is not RuntimeError), RuntimeError)
        if cls is FileNotFoundError:
            cls = ValueError
    return cls(f"[{api}] {rest}")


def _guard(f, api):
    relabel_ = relabel
    from . import _C
    enter, leave = _C._enter_device_scope, _C._exit_device_scope

    def guarded(*args, **kwargs):
        # Tensors the function makes follow its arguments' device (Note [device scope]).
        scope = enter(*args, **kwargs)
        try:
            return f(*args, **kwargs)
        except Exception as e:  # noqa: B902 - relabelled, never swallowed
            new = relabel_(e, api)
            if new is None:
                raise
            raise new.with_traceback(e.__traceback__) from None
        finally:
            if scope >= 0:
                leave(scope)

    # Built over the wrapped function's globals, so doctest still finds the
    # function in its module and runs its examples.
    g = types.FunctionType(guarded.__code__, f.__globals__, f.__name__, None, guarded.__closure__)
    functools.update_wrapper(g, f)
    g.__oar_guarded__ = True
    return g


_GUARDED = {}  # id(original) -> its wrapper: a function exported twice is one object


def guard_module(mod, prefix=None):
    """Wraps the public Python functions of module `mod` (its __all__, or its
    public names) in the error boundary, named prefix + "." + name."""
    prefix = prefix or mod.__name__
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    for n in names:
        f = getattr(mod, n, None)
        if isinstance(f, types.FunctionType) and not getattr(f, "__oar_guarded__", False) \
                and getattr(f, "__module__", "").startswith("oar"):
            if id(f) not in _GUARDED:
                _GUARDED[id(f)] = (f, _guard(f, f"{prefix}.{n}"))
            setattr(mod, n, _GUARDED[id(f)][1])


def guard_methods(cls, prefix):
    """The same for the methods of class `cls` written in Python."""
    for n, f in list(vars(cls).items()):
        if n.startswith("_") or not isinstance(f, types.FunctionType) or getattr(f, "__oar_guarded__", False):
            continue
        setattr(cls, n, _guard(f, f"{prefix}.{n}"))


_BOUND_NAMES = {}  # id(function) -> (api name, public)


def _bound_api(func):
    import oar
    key = id(func)
    if key not in _BOUND_NAMES:
        name = getattr(func, "__name__", "?")
        api, public = f"oar.{name.lstrip('_')}", False
        if getattr(oar.Tensor, name, None) is func:
            api, public = f"oar.Tensor.{name if name.startswith('__') else name.lstrip('_')}", \
                not name.startswith("_")
        else:
            # A declared function of another module is bound in the extension's
            # submodule for it (oar._C._linalg -> oar.linalg), also when oar
            # exports it too.
            home = getattr(func, "__module__", "") or ""
            mods = (oar, oar.nn.functional, oar.linalg)
            if home.startswith("oar._C._"):
                mods = tuple(m for m in mods if m.__name__ == "oar." + home[len("oar._C._"):].replace("_", ".")) \
                    + mods
            for mod in mods:
                if getattr(mod, name, None) is func:
                    api, public = f"{mod.__name__}.{name}", True
                    break
        _BOUND_NAMES[key] = (api, public)
    return _BOUND_NAMES[key]




def relabel_bound(func, exc):
    """The error boundary for a function bound in C++ (called by the extension
    module only when one fails): the exception to raise instead, or None."""
    api, public = _bound_api(func)
    msg = str(exc)
    tag = _TAG.match(msg)
    if not public and not _NB_SIGNATURE.search(msg) and not (tag and tag.group(1) == "oar"):
        # An internal function: its errors name the API it serves, or come
        # from code it called back (a traced user function); the public
        # function around it relabels what needs it.
        return None
    return relabel(exc, api)
