"""Source conversion for ``to_static``: Python control flow on tensors becomes control-flow ops.

``to_static`` captures a program by tracing the function; with
``full_graph=True`` (the default) the function traced is a converted copy of
the user's code in which ``if``/``while``/``for`` on tensors, ``and``/``or``/
``not``, conditional expressions and ``assert`` call the helpers of
``convert_ops`` (``_jst``), which record ``cond`` / ``while_loop`` ops when
their condition is a tensor (see transformer.py for the passes and
convert_ops.py for the run-time rules). Functions, methods and layers the
converted code calls are converted the same way (convert_call.py).

What converts (decided at run time when the condition is a tensor, plain
Python otherwise):
- ``if``/``elif``/``else``; variables assigned in the branches become the
  cond's results (tensors, nested lists/tuples/dicts of them, equal Python
  values; bools that differ become bool tensors; a variable assigned in one
  branch only is filled with zeros in the other);
- ``while``; ``for i in range(...)`` with tensor bounds; ``for row in tensor``
  (over dim 0, also when it is dynamic); loop variables that are Python
  numbers before the loop become tensors; ``for ... else``;
- ``break``, ``continue`` and ``return`` anywhere in them (flag variables);
- ``and``, ``or``, ``not``, ``a if c else b``, comparison chains;
- ``assert`` and ``print`` on tensors (ops that run with the program);
- lists appended to (or popped) in a loop on a tensor (TensorList), with
  ``oar.stack``, ``oar.concat``, ``lst[i]`` and ``len(lst)`` after the loop;
- nested functions, called user functions, methods (``super()`` and private
  names included), user layers' forward; closures and globals.

What does not (Dy2StaticError naming the line, or plain Python semantics):
- a tensor's value read into Python (``bool(t)``, ``t.item()``,
  ``t.numpy()``, ``float(t)``) - the tracing guard refuses it;
- generators (``yield``), and tensor control flow inside ``try`` with
  ``except`` clauses;
- variables that differ in kind between branches (a string in one, another
  string or None in the other) and are read later; loop variables whose
  dtype or rank changes;
- attributes set in a branch or loop body (``self.x = ...``) and containers
  reached other than by a local name: their changes are not merged;
- loops over Python values (lists, dicts, ``range`` of ints, ``zip``,
  ``enumerate``) are unrolled, as are comprehensions; code in the oar
  package, the standard library, installed packages, lambdas passed to
  ``to_static`` and functions whose source cannot be read is not converted.

>>> import oar
>>> def f(x):
...     if x.sum() > 0:
...         return x * 2.0
...     return -x
>>> g = oar.jit.dy2static.convert_to_static(f)
>>> g(oar.to_tensor([1.0, 2.0])).numpy().tolist(), g(oar.to_tensor([-3.0])).numpy().tolist()
([2.0, 4.0], [3.0])
"""
import types

from . import convert_call, convert_ops, origin, transformer

__all__ = ["convert_to_static", "transformed_source"]


def _function_of(fn, api):
    from ..api import StaticFunction

    if isinstance(fn, StaticFunction):
        fn = fn.dygraph_function
    if isinstance(fn, types.MethodType):
        return fn.__func__, fn.__self__
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"[{api}] expects a Python function, a method or a StaticFunction, got {type(fn).__name__}")
    return fn, None


def convert_to_static(fn):
    """Returns the converted version of ``fn`` (a function, a bound method or a StaticFunction's function).

    Outside a trace the converted function behaves like ``fn``; while a program
    is captured its tensor control flow is recorded as cond / while ops. A
    function whose source cannot be read is returned unchanged; a generator
    raises ``oar.jit.Dy2StaticError``.

    >>> import oar
    >>> def clip_sum(x):
    ...     while x.sum() > 10.0:
    ...         x = x / 2.0
    ...     return x
    >>> oar.jit.dy2static.convert_to_static(clip_sum)(oar.to_tensor([8.0, 8.0])).numpy().tolist()
    [4.0, 4.0]
    """
    func, owner = _function_of(fn, "oar.jit.dy2static.convert_to_static")
    new = convert_call.convert_function(func, strict=True)
    return types.MethodType(new, owner) if owner is not None else new


def transformed_source(fn):
    """The rewritten source of ``fn`` as a string (for debugging), or None when it cannot be converted.

    >>> import oar
    >>> def f(x):
    ...     return x if x.sum() > 0 else -x
    >>> "_jst.IfExp" in oar.jit.dy2static.transformed_source(f)
    True
    """
    func, _ = _function_of(fn, "oar.jit.dy2static.transformed_source")
    return convert_call.source_of(func)
