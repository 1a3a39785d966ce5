"""Global framework state: default dtype, mode queries."""
from . import _C


def set_default_dtype(d):
    """Sets the default floating dtype used for Python floats.

    >>> import oar
    >>> oar.set_default_dtype("float64")
    >>> oar.to_tensor(1.5).dtype == oar.float64
    True
    >>> oar.set_default_dtype("float32")
    """
    _C.set_default_dtype(_C.dtype_from_name(d) if isinstance(d, str) else _dtype(d))


def get_default_dtype():
    """Returns the default floating dtype as a string, e.g. 'float32'.

    >>> import oar
    >>> oar.get_default_dtype()
    'float32'
    """
    return str(_C.get_default_dtype()).split(".")[-1]


def is_tensor(x):
    """True if x is an oar Tensor.

    >>> import oar
    >>> oar.is_tensor(oar.ones([1])), oar.is_tensor([1.0])
    (True, False)
    """
    return isinstance(x, _C.Tensor)


def in_dynamic_mode():
    """True unless static mode is on (``oar.enable_static()``).

    >>> import oar
    >>> oar.in_dynamic_mode()
    True
    """
    from .static import program

    return not program._in_static()


def enable_static():
    """Turns static mode on: ops are recorded into the current ``oar.static`` program (see Note [static mode]
    in oar/static/program.py) and run by ``oar.static.Executor``.

    >>> import oar
    >>> oar.enable_static()
    >>> oar.in_dynamic_mode()
    False
    >>> oar.disable_static()
    >>> oar.in_dynamic_mode()
    True
    """
    from .static import program

    program._enable()


def disable_static(place=None):
    """Turns static mode off and returns to eager execution; programs recorded so far stop recording.

    >>> import oar
    >>> oar.disable_static()
    >>> oar.in_dynamic_mode()
    True
    """
    from .static import program

    program._disable()


def _dtype(d):
    """Normalises a dtype given as a dtype, a name, a NumPy dtype or a Python type."""
    import numpy as np

    if d is None or isinstance(d, _C.dtype):
        return d
    if isinstance(d, str):
        return _C.dtype_from_name(d)
    if d is float:
        return _C.get_default_dtype()
    if d is int:
        return _C.dtype.int64
    if d is bool:
        return _C.dtype.bool
    if d is complex:
        return _C.dtype.complex128 if _C.get_default_dtype() == _C.dtype.float64 else _C.dtype.complex64
    try:
        return _C.dtype_from_name(np.dtype(d).name)
    except TypeError as e:
        raise TypeError(f"[oar] dtype must be a dtype or its name, got {d!r}") from e
