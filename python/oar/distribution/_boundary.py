"""The error boundary of oar.distribution (Note [API error boundary] in oar/_api.py):
every error escaping a public method or constructor of a distribution or transform
starts with the name the user called, ``[oar.distribution.<Class>.<method>]``, named
after the class of the object, not the class that defines the method."""
import functools
import types

from .. import _api


def _wrap(f, method):
    relabel = _api.relabel

    def guarded(self, *args, **kwargs):
        try:
            return f(self, *args, **kwargs)
        except Exception as e:  # noqa: B902 - relabelled, never swallowed
            new = relabel(e, self._api(method))
            if new is None:
                raise
            raise new.with_traceback(e.__traceback__) from None

    # built over the method's own globals so that doctest still finds it in its module
    g = types.FunctionType(guarded.__code__, f.__globals__, f.__name__, None, guarded.__closure__)
    functools.update_wrapper(g, f)
    g.__oar_guarded__ = True
    return g


def guard_class(cls):
    """Wraps the public methods and the constructor that `cls` itself defines."""
    for name, f in list(vars(cls).items()):
        if not isinstance(f, types.FunctionType) or getattr(f, "__oar_guarded__", False):
            continue
        if name == "__init__":
            setattr(cls, name, _wrap(f, None))
        elif not name.startswith("_"):
            setattr(cls, name, _wrap(f, name))
    return cls
