"""Rejects Python use of tensor values while ``to_static`` captures a program.

Tracing records ops, not Python. ``to_static`` converts the Python control
flow it can see in the source (``if``/``while``/``for`` on tensors, ``and``,
``or``, ``not``: oar/jit/dy2static) into control-flow ops, but a value read
out of a tensor into Python (``bool(t)``, ``t.item()``, ``t.numpy()``,
``float(t)``...) would be computed from the example input and baked into the
program, which would then give wrong results for other inputs without any
error. So inside a to_static trace the Tensor methods that turn data into
Python values raise Dy2StaticError naming the user's file and line; the
errors of the source conversion are Dy2StaticErrors too.

The guards are installed once by wrapping the existing Tensor methods. Outside
a to_static trace they only add a flag check; plain ``oar._ir.trace`` users
are not affected because the flag is set by to_static alone.
"""
import functools
import linecache
import os
import sys
import threading

from .. import _C

Tensor = _C.Tensor

# python/oar: frames under it are the framework's own, not the user's code.
_OAR_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class Dy2StaticError(TypeError):
    """Raised when code converted by ``oar.jit.to_static`` uses a tensor's value
    as a Python value (``bool(tensor)``, ``tensor.item()``, ``tensor.numpy()``...),
    or contains Python that cannot be converted (see oar.jit.dy2static). The
    message names the user's file and line and says what to write instead.

    >>> import oar
    >>> @oar.jit.to_static(full_graph=True)
    ... def f(x):
    ...     return x * 2.0 if x.sum().item() > 0 else x
    >>> try:
    ...     f(oar.ones([2]))
    ... except oar.jit.Dy2StaticError as e:
    ...     print(str(e).splitlines()[0])
    [oar.jit.to_static] Tensor.item() is not supported in a to_static function
    """


class _State(threading.local):
    # The C++ tracer stack is per thread, so the flag that marks a to_static
    # trace is too.
    converting = 0  # depth of to_static traces on this thread
    suspended = 0  # > 0 while printing a tensor: reading values for display is harmless
    dynamic_inputs = False  # the innermost to_static trace has dynamic input dims (an InputSpec's None)
    shape_read = False  # Python read the size of a dynamic dim in it (Note [reading dynamic sizes])


_state = _State()

_CONTROL_FLOW = ("Write the condition on the tensor itself (`if tensor:` and `while tensor:` are converted), or use "
                 "oar.static.nn.cond(pred, true_fn, false_fn) and "
                 "oar.static.nn.while_loop(cond, body, loop_vars) (oar.static.nn.switch_case(index, branch_fns) "
                 "for an if/elif chain over an integer): they are captured as control-flow ops, so the program "
                 "picks the branch or runs the loop for each input. Or select values with oar.where, or decorate "
                 "the function that needs the value with oar.jit.not_to_static and call it outside the to_static "
                 "function.")
_NUMBERS = ("Compute on tensors instead of Python numbers (tensor ops such as oar.where, oar.clip, "
            "x.sum() keep the data in the program); for control flow use oar.static.nn.cond / "
            "oar.static.nn.while_loop; or move this code out of the to_static function "
            "(oar.jit.enable_to_static(False) runs everything eagerly).")

_TRAINING = ("A captured program holds the forward computation; its gradients are captured with it, "
             "and the update belongs outside: convert the forward (the Layer or the loss function) with "
             "to_static and call loss.backward() and optimizer.step() on its result, or use "
             "to_static(..., full_graph=False), which runs them eagerly between captured graphs.")

_GUARDED = {
    "__bool__": ("bool() of a Tensor", _CONTROL_FLOW),
    "__int__": ("int() of a Tensor", _NUMBERS),
    "__float__": ("float() of a Tensor", _NUMBERS),
    "__complex__": ("complex() of a Tensor", _NUMBERS),
    "__index__": ("using a Tensor as a Python index", _NUMBERS),
    "item": ("Tensor.item()", _NUMBERS),
    "numpy": ("Tensor.numpy()", _NUMBERS),
    "tolist": ("Tensor.tolist()", _NUMBERS),
    "backward": ("Tensor.backward()", _TRAINING),
}


# Note [reading dynamic sizes]
# Python that reads x.shape in a to_static function gets ints, and what it
# computes from them (a loop count, a reshape target) is fixed in the program.
# For a dim that is dynamic because of an InputSpec's None, the program is
# then right only for the traced size: the StaticFunction traces again for
# each input shape (as it does when an op fixes such a dim). A dim that is
# dynamic because of the data (the count masked_select or nonzero returns)
# differs between calls with the same input shapes, so no cache key can
# tell the programs apart: reading it in Python is refused (len(x) and the
# converted `for` loops read it as a tensor instead).


def _capturing():
    """Whether to_static is capturing a program on this thread now (and not printing a tensor)."""
    s = _state
    return s.converting and not s.suspended and _C._ir_is_tracing()


def dynamic_size_read(what):
    """Called when Python reads the size of a dim that is dynamic (-1) in the innermost trace."""
    s = _state
    if not _capturing():
        return
    if s.dynamic_inputs:
        s.shape_read = True  # traced again per input shape, in which the data-dependent dims stay -1
        return
    raise Dy2StaticError(_message(
        f"reading {what}, whose size depends on tensor data (e.g. the count that masked_select or nonzero "
        f"returns),",
        "The program must work for every count. Use len(x) (a tensor in the program), compute with tensor ops "
        "(oar.where, masks) instead of Python numbers, or use to_static(..., full_graph=False), which runs that "
        "Python with the actual count."))


def refuse_while_converting(what, advice=_TRAINING):
    """Raises Dy2StaticError when called while to_static captures a program (for APIs that
    change Python state, such as an optimizer step, which a program cannot replay)."""
    if _capturing():
        raise Dy2StaticError(_message(what, advice))


def _user_frame():
    """The innermost frame outside python/oar: where the user's code did it."""
    f = sys._getframe(2)
    while f is not None:
        path = os.path.abspath(f.f_code.co_filename)
        if not path.startswith(_OAR_DIR):
            return f
        f = f.f_back
    return None


def _message(what, advice):
    f = _user_frame()
    where = "at an unknown location"
    if f is not None:
        filename, lineno = f.f_code.co_filename, f.f_lineno
        where = f'File "{filename}", line {lineno}, in {f.f_code.co_name}'
        src = linecache.getline(filename, lineno).strip()
        if src:
            where += f"\n    {src}"
    why = ("The program records tensor ops, not Python: a Python value read from a tensor while tracing "
           "would stay fixed at the value of the traced example for every later call." if advice is not _TRAINING
           else "The program records tensor ops, not Python: an update made while tracing would happen once, "
                "at trace time, and never when the program runs.")
    return f"[oar.jit.to_static] {what} is not supported in a to_static function\n  {where}\n{why} {advice}"


def _guarded(name, orig):
    what, advice = _GUARDED[name]

    @functools.wraps(orig)
    def method(self, *args, **kwargs):
        s = _state  # inline rather than _capturing(): these methods are hot in eager code
        if s.converting and not s.suspended and _C._ir_is_tracing():
            raise Dy2StaticError(_message(what, advice))
        return orig(self, *args, **kwargs)

    method._oar_dy2static_original = orig
    return method


def _suspending(orig):
    @functools.wraps(orig)
    def method(self, *args, **kwargs):
        _state.suspended += 1
        try:
            return orig(self, *args, **kwargs)
        finally:
            _state.suspended -= 1

    method._oar_dy2static_original = orig
    return method


def install():
    """Wraps the guarded Tensor methods (once; a second call changes nothing)."""
    for name in _GUARDED:
        orig = getattr(Tensor, name, None)
        if orig is None or hasattr(orig, "_oar_dy2static_original"):
            continue
        setattr(Tensor, name, _guarded(name, orig))
    for name in ("__repr__", "__str__"):
        orig = getattr(Tensor, name)
        if not hasattr(orig, "_oar_dy2static_original"):
            setattr(Tensor, name, _suspending(orig))
