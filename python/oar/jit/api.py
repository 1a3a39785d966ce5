"""``to_static``: capture a function or a Layer's forward as cached programs.

By default (``full_graph=False``) a call runs through oar.jit.sot, which
interprets the bytecode and captures the stretches between graph breaks as
guarded programs. With ``full_graph=True`` each call is matched against a
cache of whole programs by its input signature (see StaticFunction). A miss
traces the Python code once with the call's own tensors as examples
(oar._ir.trace), the function's source converted (oar.jit.dy2static) so that
Python control flow on tensors is recorded as cond / while_loop ops; a hit
runs the cached program op by op through the same op definitions as eager
code, with autocast.

Training: a call that needs gradients (grad mode on, and a parameter or an
input that requires grad) runs a captured forward program, and its backward
runs a captured backward program, as Paddle's to_static does. Both come from
one joint program traced per input shape: the forward program followed by
``oar.grad`` of its outputs, so the backward ops are the gradient rules of the
forward ops, the same rules eager autograd runs (Note [captured backward] in
oar/static/_split.py). ``loss.backward()`` then fills ``param.grad`` and the
optimizer steps outside the programs: parameters and optimizer state never
live in a program, and the loss curves of eager and to_static training agree
(tests/python/test_static_training.py). In-place writes to the layer's buffers
(batch-norm running statistics) are state updates of the forward program,
applied once per call as in eager mode. A gradient that must itself be
differentiable (``create_graph=True``) is taken by rerunning the forward
program with autograd, so gradients of any order still work. A program the
split cannot handle (control flow, an output that is an input), and calls
under ``oar.amp.auto_cast``, train with eager autograd over the program's ops
instead.
"""
import copy
import dataclasses
import functools
import json
import inspect
import types
import warnings
from collections import OrderedDict

import numpy as np

from .. import _C, _ir, _pytree
from ..autograd import no_grad
from ..creation import zeros
from ..framework import get_default_dtype
from ..nn import Layer
from ..static import BuildStrategy, InputSpec, _split
from . import _guard

Tensor = _C.Tensor

__all__ = ["to_static", "not_to_static", "enable_to_static", "ignore_module", "StaticFunction"]

_enabled = [True]
_ignored_modules = []

# Size of a dynamic dim in the example tensors made from an InputSpec; not 1, so
# that a dynamic dim is never mistaken for a broadcast dim.
_SPEC_EXAMPLE_DIM = 2


def enable_to_static(enable_to_static_bool):
    """Switches conversion on or off globally; when off, to_static functions run eagerly.

    >>> import oar
    >>> @oar.jit.to_static
    ... def f(x):
    ...     return x + 1.0
    >>> oar.jit.enable_to_static(False)
    >>> f(oar.to_tensor([1.0])).numpy().tolist(), len(f.program_cache)
    ([2.0], 0)
    >>> oar.jit.enable_to_static(True)
    """
    if not isinstance(enable_to_static_bool, bool):
        raise TypeError(f"[oar.jit.enable_to_static] expects a bool, got {type(enable_to_static_bool).__name__}")
    _enabled[0] = enable_to_static_bool


def not_to_static(function=None):
    """Marks a function to be called as plain Python, never converted.

    ``to_static`` applied to a marked function returns a StaticFunction that
    always runs it eagerly. Called from inside a to_static function its source
    is not converted: its Python control flow runs once, at trace time, while
    the ops it dispatches are still recorded into the enclosing program (the
    function is not a graph break), and reading tensor values in it still
    raises Dy2StaticError.

    >>> import oar
    >>> @oar.jit.not_to_static
    ... def double(x):
    ...     return x * 2.0
    >>> @oar.jit.to_static
    ... def f(x):
    ...     return double(x) + 1.0
    >>> f(oar.to_tensor([1.0, 2.0])).numpy().tolist()
    [3.0, 5.0]
    """
    if function is None:
        return not_to_static
    if isinstance(function, StaticFunction):
        function = function.dygraph_function
    try:
        function._oar_not_to_static = True
    except AttributeError:  # bound methods and builtins take no attributes
        target = function

        @functools.wraps(target)
        def function(*args, **kwargs):
            return target(*args, **kwargs)

        function._oar_not_to_static = True
    return function


def ignore_module(modules):
    """Calls into functions of these modules are not converted by ``to_static``.

    Their source is not rewritten (oar.jit.dy2static), so their Python control
    flow runs at trace time; their tensor ops are still recorded. The oar
    package, the standard library and installed packages are never converted.

    >>> import math
    >>> import oar
    >>> oar.jit.ignore_module([math])
    """
    if isinstance(modules, types.ModuleType):
        modules = [modules]
    if not isinstance(modules, (list, tuple)) or not all(isinstance(m, types.ModuleType) for m in modules):
        raise TypeError("[oar.jit.ignore_module] expects a list of modules")
    _ignored_modules.extend(modules)


# ---------------------------------------------------------------- argument structure


class _Leaf:
    """Where a tensor argument sits in the argument structure."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _arg_error(name, msg):
    return ValueError(f"[oar.jit.to_static] argument '{name}' {msg}")


def _flatten(value, spec, name, leaves, specs, names):
    """Replaces the tensors in value (nested list/tuple/dict) by _Leaf markers, collecting them."""
    if isinstance(value, Tensor):
        if spec is not None and not isinstance(spec, InputSpec):
            raise _arg_error(name, f"is a Tensor but its input_spec entry is {spec!r}")
        for i, t in enumerate(leaves):
            # One tensor passed twice is one program input; the key records the aliasing.
            if t is value:
                if spec is not None:
                    _spec_check(value, spec, name)
                return _Leaf(i)
        leaves.append(value)
        specs.append(spec)
        names.append(name)
        return _Leaf(len(leaves) - 1)
    if isinstance(spec, InputSpec):
        raise _arg_error(name, f"expects a Tensor for {spec!r}, got {type(value).__name__}")
    if type(value) in (list, tuple):
        sub = spec if isinstance(spec, (list, tuple)) else None
        if sub is not None and len(sub) != len(value):
            raise _arg_error(name, f"has {len(value)} items but its input_spec entry has {len(sub)}")
        return type(value)(_flatten(v, sub[i] if sub is not None else None, f"{name}[{i}]", leaves, specs, names)
                           for i, v in enumerate(value))
    if type(value) is dict:
        sub = spec if isinstance(spec, dict) else None
        return {k: _flatten(v, sub.get(k) if sub is not None else None, f"{name}[{k!r}]", leaves, specs, names)
                for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(type(value), "_fields") or \
            dataclasses.is_dataclass(value) and not isinstance(value, type):
        # A named tuple or a dataclass instance: its fields, by name.
        fields = value._fields if isinstance(value, tuple) else [f.name for f in dataclasses.fields(value)]
        sub = spec if isinstance(spec, (list, tuple)) and len(spec) == len(fields) else None
        return _Record(type(value), tuple(fields), tuple(
            _flatten(getattr(value, f), sub[i] if sub is not None else None, f"{name}.{f}", leaves, specs, names)
            for i, f in enumerate(fields)))
    return value


class _Record:
    """A named tuple or dataclass argument with markers in place of its tensors."""

    __slots__ = ("cls", "fields", "values")

    def __init__(self, cls, fields, values):
        self.cls, self.fields, self.values = cls, fields, values

    def build(self, values):
        return _pytree.make_record(self.cls, self.fields, values)


def _fill(template, tensors):
    if isinstance(template, _Leaf):
        return tensors[template.index]
    if type(template) in (list, tuple):
        return type(template)(_fill(v, tensors) for v in template)
    if type(template) is dict:
        return {k: _fill(v, tensors) for k, v in template.items()}
    if isinstance(template, _Record):
        return template.build([_fill(v, tensors) for v in template.values])
    return template


def _freeze(template):
    """A hashable description of the non-tensor part of the arguments (their values)."""
    if isinstance(template, _Leaf):
        return ("T", template.index)
    if type(template) in (list, tuple):
        return (type(template).__name__,) + tuple(_freeze(v) for v in template)
    if type(template) is dict:
        return ("dict",) + tuple((k, _freeze(v)) for k, v in template.items())
    if isinstance(template, _Record):
        return (template.cls, template.fields) + tuple(_freeze(v) for v in template.values)
    if isinstance(template, np.ndarray):
        return ("ndarray", template.dtype.str, template.shape, template.tobytes())
    try:
        hash(template)
    except TypeError:
        return ("value", type(template).__qualname__, repr(template))
    # The type too: 1, 1.0 and True are equal in Python but trace differently.
    return (type(template), template)


def _spec_check(t, spec, name):
    shape = t.shape
    if len(spec.shape) != len(shape) or any(d != -1 and d != s for d, s in zip(spec.shape, shape)):
        raise _arg_error(name, f"expects shape {list(spec.shape)} (from {spec!r}), got shape {list(shape)}")


# ---------------------------------------------------------------- the cache


class ProgramCache:
    """The programs of one StaticFunction, one per input signature (most recent last).

    >>> import oar
    >>> f = oar.jit.to_static(lambda x: x * 2.0)
    >>> _ = f(oar.ones([2])); _ = f(oar.ones([3]))
    >>> len(f.program_cache)
    2
    """

    def __init__(self):
        self._programs = OrderedDict()

    def __len__(self):
        return len(self._programs)

    def __contains__(self, key):
        return key in self._programs

    def __iter__(self):
        return iter(self._programs)

    def get(self, key):
        return self._programs.get(key)

    def _put(self, key, program):
        self._programs[key] = program

    def concrete_programs(self):
        """The cached programs, oldest first."""
        return list(self._programs.values())

    def clear(self):
        self._programs.clear()


# ---------------------------------------------------------------- StaticFunction


class StaticFunction:
    """A function or Layer forward converted by ``to_static``; calls run cached programs.

    With ``full_graph=True`` the cache key of a call is, per tensor argument, its dtype and its shape
    with the dims the input_spec marks dynamic replaced by -1; plus the values
    of the non-tensor arguments, the ``training`` flags of the layer and its
    sublayers, the identity of the layer's parameters and buffers, and the
    default dtype. A call with a new key traces the Python code once; calls
    with a known key run the cached program. With ``full_graph=False`` (the
    default) calls run through oar.jit.sot's guarded segments instead.

    >>> import oar
    >>> from oar.static import InputSpec
    >>> net = oar.nn.Linear(4, 2)
    >>> net = oar.jit.to_static(net, input_spec=[InputSpec([None, 4])], full_graph=True)
    >>> net(oar.ones([3, 4])).shape, net(oar.ones([5, 4])).shape
    ([3, 2], [5, 2])
    >>> len(net.forward.program_cache)
    1
    >>> net.forward.concrete_program.input_types
    [('float32', [-1, 4])]
    """

    def __init__(self, function, input_spec=None, build_strategy=None, full_graph=False, backend=None, layer=None):
        if isinstance(function, types.MethodType) and layer is None:
            layer, function = function.__self__, function.__func__
        if not callable(function):
            raise TypeError(f"[oar.jit.to_static] expects a function or a Layer, got {type(function).__name__}")
        if input_spec is not None:
            if isinstance(input_spec, InputSpec):
                input_spec = [input_spec]
            if not isinstance(input_spec, (list, tuple)):
                raise TypeError(f"[oar.jit.to_static] input_spec must be a list of InputSpec, "
                                f"got {type(input_spec).__name__}")
            input_spec = list(input_spec)
        self._function = function
        self._layer = layer
        self._input_spec = input_spec
        if backend is not None and (not isinstance(backend, str) or backend.upper() != "CINN"):
            raise ValueError(f"[oar.jit.to_static] backend must be None or 'CINN' (both run oar's compiler), "
                             f"got {backend!r}")
        # Graph passes and the kernel compiler (oar.compiler) are on unless a
        # BuildStrategy turns them off (Note [default passes of to_static]).
        self._build_strategy = build_strategy if build_strategy is not None else _training_strategy()
        self._full_graph = full_graph
        self._backend = backend
        self._target = function.__get__(layer, type(layer)) if layer is not None else function
        self._name = getattr(function, "__qualname__", getattr(function, "__name__", repr(function)))
        try:
            self._sig = inspect.signature(self._target)
        except (TypeError, ValueError):  # builtins without a signature: arguments are taken as given
            self._sig = None
        self._positional_names = self._make_positional_names()
        # Calls that pass exactly these positional arguments need no signature binding.
        plain = self._sig is not None and all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in self._sig.parameters.values())
        self._plain_arity = len(self._sig.parameters) if plain else -1
        self._cache = ProgramCache()
        self._specialized = set()  # keys whose programs fixed a dynamic dim: cached per concrete shape
        self._last_program = None
        self._read_dynamic_size = False  # the last trace read a dynamic dim's size in Python
        self._last_call_specs = None  # full_graph=False: (args, kwargs) of the last capturing call, as InputSpecs
        self._converted = None  # the converted target, see _converted_target
        self._sot_stats = None  # counters of the graph-breaking mode (full_graph=False), made on its first call
        functools.update_wrapper(self, function, updated=())

    def _make_positional_names(self):
        names, var = [], None
        if self._sig is not None:
            for p in self._sig.parameters.values():
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                    names.append(p.name)
                elif p.kind == p.VAR_POSITIONAL:
                    var = p.name
        return names, var

    def _positional_name(self, i):
        names, var = self._positional_names
        if i < len(names):
            return names[i]
        return f"{var}[{i - len(names)}]" if var else f"args[{i}]"

    # ---- descriptor: `@to_static` on a method binds one StaticFunction per instance

    def __get__(self, instance, owner=None):
        if instance is None or self._layer is not None:
            return self
        bound = StaticFunction(self._function, self._input_spec, self._build_strategy, self._full_graph,
                               self._backend, layer=instance)
        # Kept in the instance's __dict__, which shadows this non-data descriptor
        # on later lookups, so each instance keeps its own cache.
        instance.__dict__[self._function.__name__] = bound
        return bound

    def __deepcopy__(self, memo):
        # Cached programs are bound to the original's tensors: a copy starts empty.
        layer = copy.deepcopy(self._layer, memo) if self._layer is not None else None
        return StaticFunction(self._function, copy.deepcopy(self._input_spec, memo), self._build_strategy,
                              self._full_graph, self._backend, layer=layer)

    # ---- public API (Paddle's StaticFunction)

    @property
    def dygraph_function(self):
        """The original Python function (unbound for a method)."""
        return self._function

    @property
    def input_spec(self):
        return self._input_spec

    @property
    def program_cache(self):
        return self._cache

    @property
    def concrete_program(self):
        """The Program of the last call, or one traced from a full input_spec before any call."""
        if not self._full_graph and self._last_call_specs is not None and self._input_spec is None:
            # Graph-breaking mode: the whole function traced (its source converted) for the last
            # capturing call's argument shapes, as Paddle's concrete_program is.
            args, kwargs = self._last_call_specs
            return self.get_concrete_program(*args, **kwargs)
        if self._last_program is not None:
            return self._last_program
        return self.get_concrete_program()

    def get_concrete_program(self, *args, **kwargs):
        """The Program for these arguments (InputSpecs stand for tensors), tracing it if needed.

        >>> import oar
        >>> from oar.static import InputSpec
        >>> f = oar.jit.to_static(lambda x: oar.exp(x), input_spec=[InputSpec([None, 3])])
        >>> f.get_concrete_program().input_types
        [('float32', [-1, 3])]
        """
        if not args and not kwargs:
            if self._input_spec is None:
                raise ValueError(f"[oar.jit.to_static] {self._name}: concrete_program needs a call first "
                                 f"or an input_spec")
            args = tuple(self._input_spec)
        leaves = []
        template = _spec_template((list(args), dict(kwargs)), leaves)
        tensors = []
        for spec in leaves:
            shape = [_SPEC_EXAMPLE_DIM if d == -1 else d for d in spec.shape]
            t = zeros(shape, spec.dtype)
            t.stop_gradient = spec.stop_gradient
            tensors.append(t)
        call_args, call_kwargs = _fill(template, tensors)
        program, _ = self._lookup_or_trace(tuple(call_args), call_kwargs, run=False)
        return program

    def rollback(self):
        """Undoes the conversion: a converted Layer gets its eager forward back. Returns the original.

        >>> import oar
        >>> lin = oar.jit.to_static(oar.nn.Linear(2, 2))
        >>> fwd = lin.forward.rollback()
        >>> isinstance(lin.forward, oar.jit.StaticFunction)
        False
        """
        if self._layer is None:
            return self._function
        name = self._function.__name__
        d = self._layer.__dict__
        if isinstance(getattr(type(self._layer), name, None), StaticFunction):
            d[name] = self._target  # the class attribute is converted: shadow it with the eager method
        else:
            d.pop(name, None)
        return getattr(self._layer, name)

    def __repr__(self):
        return f"<StaticFunction {self._name} ({len(self._cache)} cached programs)>"

    # ---- calls

    def _call_python(self, args, kwargs):
        # Inside a trace the source is converted in both modes: the trace is a
        # whole program (concrete_program, jit.save, an enclosing capture).
        if _C._ir_is_tracing() and not getattr(self._function, "_oar_not_to_static", False):
            target = self._converted_target()
            try:
                return target(*args, **kwargs)
            except _guard.Dy2StaticError:
                from .dy2static import convert_call

                why = convert_call.why_not_converted(self._function)
                if why is not None:
                    warnings.warn(f"[oar.jit.to_static] {self._name} ran without source conversion, so its Python "
                                  f"control flow on tensors is not converted: its source could not be read "
                                  f"({why})", stacklevel=3)
                raise
        return self._target(*args, **kwargs)

    def _converted_target(self):
        """The target with its source converted (dy2static), built on first use."""
        if self._converted is None:
            from .dy2static import convert_call

            fn = self._function
            if convert_call.convertible_entry(fn):
                fn = convert_call.convert_function(fn, strict=True)
            self._converted = fn.__get__(self._layer, type(self._layer)) if self._layer is not None else fn
        return self._converted

    def __call__(self, *args, **kwargs):
        # Already inside a trace (a converted layer called by a converted
        # function): run as Python so its ops join the enclosing program.
        if not _enabled[0] or getattr(self._function, "_oar_not_to_static", False) or _C._ir_is_tracing():
            return self._call_python(args, kwargs)
        if not self._full_graph:
            # Graph-breaking mode: the bytecode is interpreted and captured in segments between breaks.
            from . import sot

            if self._sot_stats is None:
                self._sot_stats = sot.SotStats(self._name)
                sot.register(self._sot_stats)
            compiles = self._sot_stats.compile_count
            out = sot.run(self, self._sot_stats, args, kwargs)
            if self._sot_stats.compile_count != compiles:
                # The arguments of a call that captured something, as InputSpecs: what
                # concrete_program and jit.save trace the whole program from.
                self._last_call_specs = _spec_of((list(args), dict(kwargs)))
            return out
        _, out = self._lookup_or_trace(args, kwargs, run=True)
        return out

    @property
    def graph_breaks(self):
        """The graph breaks met so far with ``full_graph=False``, one
        ``oar.jit.GraphBreak(filename, lineno, reason)`` per distinct location and reason,
        those inside functions it called included.

        >>> import oar
        >>> @oar.jit.to_static(full_graph=False)
        ... def f(x):
        ...     if x.sum() > 0:
        ...         return x + 1.0
        ...     return x - 1.0
        >>> f(oar.to_tensor([1.0, 2.0])).numpy().tolist()
        [2.0, 3.0]
        >>> [b.reason for b in f.graph_breaks]
        ['Tensor used as a Python bool (data-dependent control flow)']
        """
        return list(self._sot_stats.breaks) if self._sot_stats is not None else []

    @property
    def compile_count(self):
        """Segments captured so far with ``full_graph=False`` (first captures and recompilations)."""
        return self._sot_stats.compile_count if self._sot_stats is not None else 0

    @property
    def recompile_count(self):
        """Captures with ``full_graph=False`` caused by a guard miss where a segment already existed."""
        return self._sot_stats.recompile_count if self._sot_stats is not None else 0

    def _bind(self, args, kwargs):
        if self._sig is None or (not kwargs and len(args) == self._plain_arity):
            return list(args), dict(kwargs)
        try:
            b = self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"[oar.jit.to_static] {self._name}(): {e}") from None
        b.apply_defaults()
        return list(b.args), dict(b.kwargs)

    def _named_state(self):
        if not isinstance(self._layer, Layer):
            return None
        named = list(self._layer.named_parameters())
        return named + [(n, b) for n, b in self._layer.named_buffers() if b is not None]

    def _layer_key(self):
        """The layer state a program depends on: training flags and which tensors are its parameters."""
        if not isinstance(self._layer, Layer):
            return None
        # One walk over the sublayers, without Layer.sublayers' generators: this runs on every call.
        training, ids = [], []
        stack, seen = [self._layer], set()
        while stack:
            sub = stack.pop()
            if id(sub) in seen:
                continue
            seen.add(id(sub))
            training.append(bool(sub.training))
            # Programs are bound to tensor objects: a replaced parameter
            # (layer.to(dtype), set to None) needs a new trace.
            ids.extend(map(id, sub._parameters.values()))
            ids.extend(map(id, sub._buffers.values()))
            stack.extend(v for v in reversed(sub._sub_layers.values()) if v is not None)
        return tuple(training), tuple(ids)

    def _lookup_or_trace(self, args, kwargs, run):
        pos, kw = self._bind(args, kwargs)
        specs = self._input_spec or []
        if len(specs) > len(pos):
            raise ValueError(f"[oar.jit.to_static] {self._name}: input_spec has {len(specs)} entries but the call "
                             f"has {len(pos)} positional arguments")
        leaves, leaf_specs, names = [], [], []
        pos_t = [_flatten(v, specs[i] if i < len(specs) else None, self._positional_name(i), leaves, leaf_specs,
                          names) for i, v in enumerate(pos)]
        kw_t = {k: _flatten(v, None, k, leaves, leaf_specs, names) for k, v in kw.items()}
        dyn, sig, concrete = [], [], []
        for t, spec, name in zip(leaves, leaf_specs, names):
            shape = t.shape
            if spec is not None:
                _spec_check(t, spec, name)
                axes = [i for i, d in enumerate(spec.shape) if d == -1]
            else:
                axes = []
            dyn.append(axes)
            dt = str(t.dtype)
            sig.append((dt, tuple(-1 if i in axes else s for i, s in enumerate(shape))))
            concrete.append((dt, tuple(shape)))
        rest = (_freeze(pos_t), _freeze(kw_t), self._layer_key(), get_default_dtype())
        key = (tuple(sig),) + rest
        if key in self._specialized:
            key, dyn = (tuple(concrete),) + rest, [[] for _ in leaves]
        program = self._cache.get(key)
        out = None
        if program is None:
            program, out = self._trace(pos_t, kw_t, leaves, dyn, self._named_state())
            if (program.notes or self._read_dynamic_size) and any(dyn):
                why = "; ".join(program.notes) or "Python read the size of a dynamic dim (x.shape)"
                warnings.warn(f"[oar.jit.to_static] {self._name}: the traced program keeps some dynamic input dims "
                              f"fixed ({why}), e.g. a reshape computed from x.shape; it is "
                              f"traced again for each new input shape", stacklevel=4)
                self._specialized.add(key)
                key = (tuple(concrete),) + rest
            self._cache._put(key, program)
        self._last_program = program
        if run:
            out = _run(program, leaves)
        return program, out

    def _trace(self, pos_t, kw_t, leaves, dyn, named):
        def thunk(*tensors):
            return self._call_python(_fill(pos_t, tensors), _fill(kw_t, tensors))

        # The trace runs the ops once on the examples; the call then runs the
        # program. In-place writes to the layer's buffers (batch-norm running
        # statistics) are captured as state updates that each run of the
        # program applies (Note [state updates] in ir/tracer.h), so the trace's
        # own write is undone: the call that follows applies it once. A write
        # the program does not capture (through a view of a buffer, or inside
        # a control-flow region) is undone too, with a warning. Parameters
        # written in place (a hand-written update under no_grad) are treated
        # the same way.
        buffers = list(named or ())
        with no_grad():
            saved = [_C.clone(b) for _, b in buffers]
        # The trace runs the ops on the examples and the call then runs the program: the random
        # numbers the trace draws are given back, so that the program draws those eager code would.
        rng = _C.get_rng_state()
        state = _guard._state
        outer = state.dynamic_inputs, state.shape_read
        state.converting += 1
        state.dynamic_inputs, state.shape_read = any(dyn), False
        try:
            program, out = _ir.trace(thunk, leaves, dyn, parameters=named)
            self._read_dynamic_size = program._reads_dynamic_size = state.shape_read
        except Exception as e:
            if not isinstance(e, _guard.Dy2StaticError):
                e.add_note(f"[oar.jit.to_static] raised while tracing {self._name}; oar.jit.enable_to_static(False) "
                           f"runs it eagerly")
            raise
        finally:
            state.converting -= 1
            state.dynamic_inputs, state.shape_read = outer
            _C.set_rng_state(*rng)
            changed = []
            with no_grad():
                for (n, b), s in zip(buffers, saved):
                    if not np.array_equal(b.numpy(), s.numpy(), equal_nan=True):
                        changed.append(n)
                        b.copy_(s)
        lost = [n for n in changed if n not in _state_updates(program)]
        if lost:
            warnings.warn(f"[oar.jit.to_static] {self._name}: tracing updated the buffers {lost} in place in a way "
                          f"the program does not capture (through a view, or inside a control-flow region), so "
                          f"calls leave these buffers unchanged", stacklevel=4)
        if self._build_strategy is not None:
            program.optimize(build_strategy=self._build_strategy)
        return program, out


def _training_strategy():
    """Note [default passes of to_static]
    A captured program may be trained, and a pattern fusion (linear +
    activation, attention, softmax and layer norm, conv + activation) takes
    its pattern's composite gradient, so the captured backward computes the
    pattern's forward a second time to get its intermediates: GPT training
    steps measured 10% slower with them. By default to_static runs the
    cleanup passes and the elementwise fusion, whose groups are generated
    kernels (a group's backward re-evaluates only elementwise ops). The
    inference runtime runs every fusion (PassOptions::inference); a
    BuildStrategy given to to_static turns on what it names."""
    bs = BuildStrategy()
    for name in ("fuse_softmax_layer_norm", "fuse_linear_act", "fuse_conv_act", "fuse_attention"):
        setattr(bs, name, False)
    return bs


def _run(program, leaves):
    """Runs a cached program for one call; with a captured backward when gradients are needed.

    See Note [captured backward] in oar/static/_split.py. Calls that need no
    gradient run the program as it is; a program the split cannot handle
    runs with eager autograd over its ops (the same gradient rules).
    """
    # Under autocast the executor casts per op at run time, which a backward
    # program traced without casts would not match: autograd follows the casts.
    if not _C.is_grad_enabled() or _C._get_autocast()[0]:
        return program.run(*leaves)
    cache = program.__dict__.setdefault("_oar_split", {})
    key = (tuple((str(t.dtype), tuple(t.shape), t.stop_gradient) for t in leaves),
           tuple(t.stop_gradient for _, t in program.bound_parameters()))
    if key not in cache:
        try:
            cache[key] = _split.build(program, leaves)
        except _split.CannotSplit:
            cache[key] = None
    split = cache[key]
    if split is None:
        return program.run(*leaves)
    return _ir._rebuild(split(leaves), program._out_kind)


def _state_updates(program):
    """Names of the parameters and buffers the program writes on each run."""
    try:
        doc = json.loads(_C._ir_to_json(program._prog))
    except NotImplementedError:  # a program the format cannot write holds no update this can name
        return set()
    return {u["parameter"] for u in doc.get("state_updates", ())}


def _spec_of(value):
    """``value`` (nested arguments) with each Tensor replaced by the InputSpec of its shape and dtype."""
    leaves = []
    template = _flatten(value, None, "", leaves, [], [])
    return _fill(template, [InputSpec.from_tensor(t) for t in leaves])


def _spec_template(value, leaves):
    """Replaces InputSpecs in value by _Leaf markers, collecting the specs."""
    if isinstance(value, InputSpec):
        leaves.append(value)
        return _Leaf(len(leaves) - 1)
    if type(value) in (list, tuple):
        return type(value)(_spec_template(v, leaves) for v in value)
    if type(value) is dict:
        return {k: _spec_template(v, leaves) for k, v in value.items()}
    return value


def to_static(function=None, input_spec=None, build_strategy=None, full_graph=False, backend=None, **kwargs):
    """Converts a function or a Layer so that calls run a captured program.

    Use it as ``@to_static``, ``@to_static(input_spec=[...])``, or
    ``to_static(fn_or_layer, input_spec)``. For a Layer, its forward is
    replaced by a StaticFunction and the layer is returned; its parameters and
    buffers are bound to the program, so weight updates (an optimizer step) are
    seen by later calls without a new trace. ``input_spec`` lists one
    ``oar.static.InputSpec`` per positional argument (nested lists for list
    arguments); ``None`` or ``-1`` dims are dynamic, so calls that differ only
    there share one program, and calls are checked against the spec's rank and
    static dims. Captured programs are optimised by oar's graph passes, and
    their fused groups run as kernels generated for the CPU (oar.compiler);
    ``build_strategy`` (an ``oar.static.BuildStrategy``) turns passes off,
    ``OAR_COMPILER=0`` the generated kernels. ``backend`` may be None or
    ``"CINN"``, as Paddle spells it: both mean oar's compiler.

    Two modes, as in Paddle 3.x:

    ``full_graph=False`` (the default) interprets the function's bytecode
    (oar.jit.sot): stretches of it are captured as programs, guarded by the
    Python values they read (globals, attributes such as ``self.training``,
    closure contents, arguments, tensor dtypes and shapes) and cached per
    instruction; what cannot be captured (a graph break: a tensor used as a
    Python bool, ``x.item()``, NumPy, ``print``, ``loss.backward()``, an
    optimizer step, writes to objects from outside the function) runs eagerly
    and capture resumes after it, so the results are those of eager
    execution. ``graph_breaks``, ``compile_count``, ``recompile_count`` and
    ``oar.jit.sot_report()`` say where and why.

    ``full_graph=True`` captures the whole function as one program, whose
    first call per input signature traces a converted copy of the function
    (oar.jit.dy2static, as Paddle's dy2static): ``if``/``elif``, ``while``,
    ``for ... in range(tensor)`` and ``for row in tensor``,
    ``break``/``continue``/``return`` inside them, ``and``/``or``/``not`` and
    ``a if c else b`` on tensors become cond / while_loop / logical ops, so the
    program decides for each input; functions, methods and user layers it
    calls are converted too. Other Python runs once, at trace time: loops over
    Python lists are unrolled, and what a program cannot replay raises
    ``oar.jit.Dy2StaticError`` naming the file and line: reading a tensor's
    value into Python (``x.item()``, ``x.numpy()``, ``float(x)``), changing
    Python state (``self.n += 1``), ``loss.backward()`` and optimizer steps.
    Python reads of a dynamic dim's size (``x.shape[0]`` with an InputSpec's
    None) make the function traced again per input shape, with a warning
    (write ``x.reshape([-1, n])`` or ``oar.flatten`` to keep it dynamic).
    In-place ops on tensors created in the function are recorded as their
    out-of-place forms, and in-place writes to the layer's buffers as state
    updates applied on each call. Values read from Python objects other than
    the layer (a global constant) are fixed at trace time. Calls that need
    gradients run a captured backward program (see the module docstring).

    ``concrete_program``, ``get_concrete_program`` and ``oar.jit.save`` always
    trace the whole function (converted), in both modes.

    >>> import oar
    >>> from oar.static import InputSpec
    >>> @oar.jit.to_static(input_spec=[InputSpec([None, 2], "float32")])
    ... def f(x, scale=2.0):
    ...     return oar.nn.functional.relu(x) * scale
    >>> f(oar.to_tensor([[1.0, -1.0]])).numpy().tolist()
    [[2.0, 0.0]]
    >>> f(oar.to_tensor([[3.0, 4.0], [-5.0, 6.0]]), scale=1.0).numpy().tolist()
    [[3.0, 4.0], [0.0, 6.0]]
    >>> f.graph_breaks
    []
    >>> @oar.jit.to_static(full_graph=True)
    ... def g(x):
    ...     if x.sum() > 0:
    ...         return x * 2.0
    ...     return -x
    >>> g(oar.to_tensor([1.0])).numpy().tolist(), g(oar.to_tensor([-3.0])).numpy().tolist(), len(g.program_cache)
    ([2.0], [3.0], 1)
    """
    if kwargs:
        unknown = sorted(set(kwargs) - {"property"})
        if unknown:
            raise TypeError(f"[oar.jit.to_static] unexpected keyword arguments {unknown}")

    def convert(fn):
        if isinstance(fn, StaticFunction):
            return fn
        if isinstance(fn, Layer):
            layer = fn
            if isinstance(layer.__dict__.get("forward"), StaticFunction) or \
                    isinstance(getattr(type(layer), "forward", None), StaticFunction):
                return layer
            layer.__dict__["forward"] = StaticFunction(type(layer).forward, input_spec, build_strategy, full_graph,
                                                       backend, layer=layer)
            return layer
        return StaticFunction(fn, input_spec, build_strategy, full_graph, backend)

    if function is None:
        return convert
    return convert(function)
