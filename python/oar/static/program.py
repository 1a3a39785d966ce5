"""Static-graph programs (Paddle's ``paddle.static`` mode) on oar's IR.

Note [static mode]
``oar.enable_static()`` makes the current main Program record: it holds a
tracer (src/ir/tracer.h) that stays open across Python statements, so every
op that user code dispatches is appended to the program while it also runs
eagerly on example values. ``data(name, shape, dtype)`` adds a program input
whose example is zeros (a ``None``/-1 dim is dynamic; its example size is 2).
The tensors user code gets back are these example values: they have shapes
and dtypes, and they are the handles that ``fetch_list`` names; their data
means nothing.

Parameters are not part of the program. Layers initialise them when they are
created (parameter creation is not recorded, so the startup program has
nothing to run), the program binds the parameter tensors, and optimizers keep
their state outside it: a run sees the current weights.

Gradients (``append_backward``, ``gradients``, ``Optimizer.minimize``) are
taken when the program is run: for each feed signature (the feeds' dtypes and
shapes) the executor traces, once, a joint program that runs the recorded
forward program and then the gradient rules of its ops (``oar.grad`` inside a
trace records the backward as program ops, from the same rules eager autograd
uses), with the fetched values and the gradients as outputs. Gradient rules
read concrete shapes, which is why the backward is specialised per feed shape
rather than recorded once at the example's shape. ``minimize`` then applies
the optimizer's update to the parameters after each run, outside the program.

Run hooks (``Program._hooks``: ``Print``, the statistics of ``auc``) name
recorded values that each run also computes and hand them to Python after
the run; ``Program._after_run`` steps (``ExponentialMovingAverage``) run
after the optimizers' updates.

The executor runs on its own thread, so nothing it dispatches (programs,
traces of joint programs, optimizer updates) is recorded into the programs
being built on the user's thread: the tracer stack is per thread.

Every live recording program records every op dispatched on its thread (the
tracer records into all open traces), so each Program remembers the spans of
ops recorded while it was the current one, and fetching a value that another
program made is an error.

In-place writes to parameters and buffers that the recorded code makes
(batch-norm running statistics) are state updates of the program (Note [state
updates] in ir/tracer.h), applied by each run; the write that the recording's
own example run made is undone before the first run. Ops may be recorded
after training runs: a parameter that a run (or an optimizer step) has since
updated is read through its binding, so the new ops see its current value.
The tracer still refuses a parameter or buffer whose storage the program
itself updates in place (a pending state update), whose recorded value the
write made stale.

Note [declared shapes]
As in Paddle, ``data("x", [None, 4]).shape`` is ``[-1, 4]``: while static
mode is on, ``Tensor.shape`` of a data variable reports the declared dims to
user code, and so does every value computed from one: its recorded type has
-1 where a dim follows a dynamic one (Note [dynamic dims] in ir/ir.h), so
``reshape(h, [h.shape[0], -1])`` asks for two unknown dims and raises, as in
Paddle, instead of baking the example's batch size in. oar's own Python code
(layers, functionals) still sees the example's sizes, which are what it is
recorded with: the property tells the two apart by the file of its caller.
Static mode installs the property and its end (or the interpreter's exit)
puts the built-in one back, so eager code never pays for it.
"""
import atexit
import contextlib
import json
import os
import sys
import threading
import weakref

import numpy as np

from .. import _C
from ..autograd import no_grad as _no_grad
from ..framework import _dtype

__all__ = ["Program", "program_guard", "default_main_program", "default_startup_program", "data",
           "append_backward", "gradients", "name_scope"]

Tensor = _C.Tensor

# Example size of a dynamic (None / -1) dim of data(): not 1, so that a dynamic
# dim is never mistaken for a broadcast dim (as oar.jit.to_static does).
_EXAMPLE_DIM = 2


class _State(threading.local):
    static = False
    main = None
    startup = None
    guard = None  # [(main, startup)] pushed by program_guard


_state = _State()
# Programs whose recording is open: all end when static mode ends.
_recording = weakref.WeakSet()
# id(buffer) -> (buffer, its value before recording first ran its layer).
_pristine = {}


def _restore_buffers():
    """Puts back the buffers that recording changed (see _keep_pristine_buffers)."""
    if not _pristine:
        return
    prev = _C._static_set_recording(False)
    try:
        with _no_grad():
            for b, v in _pristine.values():
                b.copy_(v)
    finally:
        _C._static_set_recording(prev)
        _pristine.clear()


def _api_error(api, msg, kind=ValueError):
    return kind(f"[oar.static.{api}] {msg}")


def _require_static(api):
    if not _state.static:
        raise _api_error(api, "is only available in static mode; call oar.enable_static() first", RuntimeError)


class _GradSpec:
    """A gradient the user holds a handle for: d(sum of targets · target_gradients)/d(wrt)."""

    __slots__ = ("targets", "target_gradients", "wrt")

    def __init__(self, targets, target_gradients, wrt):
        self.targets = targets
        self.target_gradients = target_gradients
        self.wrt = wrt


class Program:
    """A static program: the ops recorded in static mode, its inputs (``data``) and what it trains.

    Printing shows the recorded IR. ``Executor.run`` runs it. Parameters and
    optimizer state live outside the program (see Note [static mode]).

    >>> import oar
    >>> oar.enable_static()
    >>> main = oar.static.Program()
    >>> with oar.static.program_guard(main):
    ...     x = oar.static.data("x", [None, 2], "float32")
    ...     y = oar.nn.functional.relu(x) * 3.0
    >>> "relu" in str(main)
    True
    >>> exe = oar.static.Executor()
    >>> exe.run(main, feed={"x": [[1.0, -1.0]]}, fetch_list=[y])[0].tolist()
    [[3.0, 0.0]]
    >>> oar.disable_static()
    """

    def __init__(self):
        self._rec = None
        self._data = {}         # name -> (example tensor, declared shape with -1, dtype)
        self._spans = []        # [start, end) op index ranges recorded while this program was current
        self._open = None       # start of the open span while current
        self._outputs = {}      # id(tensor) -> (output name, tensor)
        self._grads = {}        # id(handle) -> (handle, _GradSpec, index in wrt)
        self._minimize = []     # (optimizer, loss, [params] or None, no_grad ids)
        self._after_run = []    # callables run after each training run (ExponentialMovingAverage.update)
        self._hooks = []        # (tensor, fn): fn(value) after each run (oar.static.Print, auc statistics)
        self._inference = None  # a loaded or normalised inference program (oar/static/io.py)
        self._named = {}        # name -> parameter created while this program was current
        self._cache = {}
        self._for_test = False
        self._base = None       # the program a clone shares its recording with
        self.random_seed = 0

    # ---- recording
    def _root(self):
        return self._base if self._base is not None else self

    def _recorder(self, api="Program"):
        root = self._root()
        if root._rec is None:
            raise _api_error(api, "the program has recorded nothing yet: build it in static mode "
                                  "(oar.enable_static(), optionally inside oar.static.program_guard)")
        if root._rec.closed:
            raise _api_error(api, "the program's recording ended with oar.disable_static(); build and run "
                                  "static programs while static mode is on", RuntimeError)
        return root._rec

    def _enter(self):
        root = self._root()
        if root._rec is None or root._rec.closed:
            root._rec = _C._StaticRecorder()
            _recording.add(root)
        root._open = root._rec.num_ops

    def _leave(self):
        root = self._root()
        if root._open is not None and root._rec is not None and not root._rec.closed:
            root._spans.append((root._open, root._rec.num_ops))
        root._open = None

    def _close(self):
        self._leave()
        if self._rec is not None:
            self._rec.close()

    def _owned_spans(self):
        root = self._root()
        spans = list(root._spans)
        if root._open is not None:
            spans.append((root._open, root._rec.num_ops))
        return spans

    @property
    def _version(self):
        """Changes whenever ops, inputs or training steps are added."""
        root = self._root()
        n = root._rec.num_ops if root._rec is not None and not root._rec.closed else -1
        return (n, len(root._data), len(self._minimize), len(root._grads), len(root._hooks),
                len(root._after_run))

    # ---- Paddle's Program API
    def __str__(self):
        root = self._root()
        if root._rec is None:
            return "program {\n}"
        return str(root._rec)

    __repr__ = __str__

    def global_block(self):
        """The program itself: oar programs have one top-level block."""
        return self

    def num_blocks(self):
        return 1

    def list_vars(self):
        """The data variables, in the order they were declared."""
        return [t for t, _, _ in self._root()._data.values()]

    def all_parameters(self):
        """The parameters the program's ops read (trainable ones and persistable statistics), in order.

        >>> import oar
        >>> oar.enable_static()
        >>> main = oar.static.Program()
        >>> with oar.static.program_guard(main):
        ...     x = oar.static.data("x", [None, 2])
        ...     y = oar.static.nn.fc(x, 3, name="dense")
        >>> [(p.name, p.shape) for p in main.all_parameters()]
        [('dense.w_0', [2, 3]), ('dense.b_0', [3])]
        >>> oar.disable_static()
        """
        return [t for _, t in _program_parameters(self)]

    def state_dict(self, mode="all", scope=None):
        """{name: tensor} of the program's parameters; mode "param" keeps trainable ones, "opt" none
        (optimizer state lives in the optimizers), "all" every persistable one.

        >>> import oar
        >>> oar.enable_static()
        >>> main = oar.static.Program()
        >>> with oar.static.program_guard(main):
        ...     x = oar.static.data("x", [None, 2])
        ...     y = oar.static.nn.fc(x, 1, name="d")
        >>> sorted(main.state_dict())
        ['d.b_0', 'd.w_0']
        >>> oar.disable_static()
        """
        if mode not in ("all", "param", "opt"):
            raise _api_error("Program.state_dict", f"mode must be 'all', 'param' or 'opt', got {mode!r}")
        if mode == "opt":
            return {}
        return {n: t for n, t in _program_parameters(self) if mode == "all" or _trainable(t)}

    def set_state_dict(self, state_dict, scope=None):
        """Copies the values of ``state_dict`` ({name: Tensor or array}) into the program's parameters.

        >>> import oar
        >>> oar.enable_static()
        >>> main = oar.static.Program()
        >>> with oar.static.program_guard(main):
        ...     x = oar.static.data("x", [None, 2])
        ...     y = oar.static.nn.fc(x, 1, name="s")
        >>> main.set_state_dict({"s.b_0": [5.0]})
        >>> main.state_dict()["s.b_0"].tolist()
        [5.0]
        >>> oar.disable_static()
        """
        if not isinstance(state_dict, dict):
            raise _api_error("Program.set_state_dict", f"state_dict must be a dict, got {type(state_dict).__name__}",
                             TypeError)
        _assign_parameters(dict(_program_parameters(self)), state_dict, "Program.set_state_dict")

    def clone(self, for_test=False):
        """A program sharing this one's recording; ``for_test=True`` drops the training steps.

        >>> import oar
        >>> oar.enable_static()
        >>> main = oar.static.Program()
        >>> with oar.static.program_guard(main):
        ...     x = oar.static.data("x", [None, 1])
        ...     y = x * 2.0
        >>> test = main.clone(for_test=True)
        >>> oar.static.Executor().run(test, feed={"x": [[1.0]]}, fetch_list=[y])[0].tolist()
        [[2.0]]
        >>> oar.disable_static()
        """
        p = Program()
        p._base = self._root()
        p._for_test = bool(for_test)
        p._minimize = [] if for_test else list(self._minimize)
        p.random_seed = self.random_seed
        return p


def _current():
    if _state.guard:
        return _state.guard[-1]
    return _state.main, _state.startup


def default_main_program():
    """The program that static-mode ops are recorded into when no program_guard is active.

    >>> import oar
    >>> isinstance(oar.static.default_main_program(), oar.static.Program)
    True
    """
    if _state.main is None:
        _state.main = Program()
    return _current()[0] or _state.main


def default_startup_program():
    """The startup program. Parameters are initialised when layers are created, so running it does nothing.

    >>> import oar
    >>> oar.enable_static()
    >>> oar.static.Executor().run(oar.static.default_startup_program())
    []
    >>> oar.disable_static()
    """
    if _state.startup is None:
        _state.startup = Program()
    return _current()[1] or _state.startup


def _switch(old, new):
    if old is new:
        return
    if old is not None:
        old._leave()
    if new is not None and _state.static:
        new._enter()


class program_guard:
    """Makes ``main_program`` (and ``startup_program``) the current programs inside a ``with`` block.

    >>> import oar
    >>> oar.enable_static()
    >>> main, startup = oar.static.Program(), oar.static.Program()
    >>> with oar.static.program_guard(main, startup):
    ...     oar.static.default_main_program() is main
    True
    >>> oar.disable_static()
    """

    def __init__(self, main_program, startup_program=None):
        if not isinstance(main_program, Program):
            raise _api_error("program_guard", f"main_program must be an oar.static.Program, "
                                              f"got {type(main_program).__name__}", TypeError)
        if startup_program is not None and not isinstance(startup_program, Program):
            raise _api_error("program_guard", f"startup_program must be an oar.static.Program, "
                                              f"got {type(startup_program).__name__}", TypeError)
        self._main = main_program._root()
        self._startup = startup_program

    def __enter__(self):
        old = default_main_program()._root() if _state.static else None
        if _state.guard is None:
            _state.guard = []
        _state.guard.append((self._main, self._startup or default_startup_program()))
        _switch(old, self._main if _state.static else None)
        return self

    def __exit__(self, *exc):
        _state.guard.pop()
        if _state.static:
            _switch(self._main, default_main_program()._root())
        return False


class name_scope:
    """Accepted for Paddle compatibility: op names carry no scope in oar programs.

    >>> import oar
    >>> with oar.static.name_scope("block1"):
    ...     pass
    """

    def __init__(self, prefix=None):
        self.prefix = prefix

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# ---------------------------------------------------------------- mode switches (called by oar.framework)


# ---------------------------------------------------------------- declared shapes (Note [declared shapes])

_BUILTIN_SHAPE = Tensor.__dict__["shape"]
_OAR_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _shape(self):
    if not sys._getframe(1).f_code.co_filename.startswith(_OAR_DIR):
        declared = self.__dict__.get("_declared_shape")
        if declared is not None:
            return list(declared)
        traced = _C._ir_traced_shape(self)  # a recorded value: its dims, -1 where dynamic
        if traced is not None:
            return list(traced)
    return _BUILTIN_SHAPE.__get__(self)


_SHAPE = property(_shape, doc=_BUILTIN_SHAPE.__doc__)


def _declare_shapes(on):
    Tensor.shape = _SHAPE if on else _BUILTIN_SHAPE


atexit.register(_declare_shapes, False)


def _enable():
    if _state.static:
        return
    _state.static = True
    _install_hooks()
    _declare_shapes(True)
    default_main_program()._root()._enter()


def _disable():
    if not _state.static:
        return
    _restore_buffers()
    _state.static = False
    _declare_shapes(False)
    # Recording programs would record every op that eager code dispatches on
    # this thread, so they end here, and the defaults start afresh next time.
    for p in list(_recording):
        p._close()
    _recording.clear()
    _state.main = None
    _state.startup = None


def _in_static():
    return _state.static


# ---------------------------------------------------------------- data


def data(name, shape, dtype=None, lod_level=0):
    """Declares an input of the current main program, fed by name in ``Executor.run``.

    ``None`` or -1 dims are dynamic: runs may feed any size there, and
    ``shape`` reports them as -1 (Note [declared shapes]). The returned tensor
    is the example value the program is recorded with (zeros, size 2 in
    dynamic dims).

    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 3], "float32")
    >>> x.shape, x.name
    ([-1, 3], 'x')
    >>> oar.disable_static()
    """
    _require_static("data")
    if not isinstance(name, str) or not name:
        raise _api_error("data", f"name must be a non-empty str, got {name!r}", TypeError)
    if isinstance(shape, int):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        raise _api_error("data", f"shape must be a list or tuple, got {type(shape).__name__}", TypeError)
    dims = []
    for i, d in enumerate(shape):
        if d is None:
            d = -1
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < -1:
            raise _api_error("data", f"shape[{i}] must be an int >= 0, None or -1, got {d!r}")
        dims.append(int(d))
    try:
        dt = _dtype(dtype) if dtype is not None else _C.get_default_dtype()
    except (TypeError, ValueError) as e:
        raise _api_error("data", f"dtype must be an oar dtype or its name, got {dtype!r}", TypeError) from e
    prog = default_main_program()._root()
    if name in prog._data:
        raise _api_error("data", f"the program already has an input named '{name}'")
    rec = prog._recorder("data")
    prev = _C._static_set_recording(False)
    try:
        example = _C.full([_EXAMPLE_DIM if d == -1 else d for d in dims], 0, dt)
    finally:
        _C._static_set_recording(prev)
    example.stop_gradient = True
    example.name = name
    example._declared_shape = tuple(dims)
    rec.add_input(name, example, [i for i, d in enumerate(dims) if d == -1])
    prog._data[name] = (example, dims, dt)
    return example


# ---------------------------------------------------------------- gradients


def _tensor_list(x, api, what):
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (list, tuple)) and all(isinstance(t, Tensor) for t in x):
        return list(x)
    raise _api_error(api, f"{what} must be a Tensor or a list of Tensors, got {type(x).__name__}", TypeError)


def _handles(api, targets, target_gradients, wrt):
    """Gradient handles for wrt, registered with the current program.

    Where the example values allow it, the gradient is also taken now, so the
    handle is a recorded value that later ops may use; otherwise (a wrt that
    does not require grad, such as a data input) it is a placeholder of the
    right shape that only a fetch gives a value to.
    """
    prog = default_main_program()._root()
    spec = _GradSpec(targets, target_gradients, wrt)
    live = [i for i, w in enumerate(wrt) if not w.stop_gradient]
    eager = [None] * len(wrt)
    if live:
        got = _C._grad(targets, [wrt[i] for i in live], target_gradients or [None] * len(targets), True, False, True)
        for i, g in zip(live, got):
            eager[i] = g
    out = []
    prev = _C._static_set_recording(False)
    try:
        for i, (w, g) in enumerate(zip(wrt, eager)):
            h = g if g is not None else _C.full(w.shape, 0, w.dtype)
            prog._grads[id(h)] = (h, spec, i)
            out.append(h)
    finally:
        _C._static_set_recording(prev)
    return out


def gradients(targets, inputs, target_gradients=None, no_grad_set=None):
    """Gradients of the sum of ``targets`` with respect to ``inputs``, as values to fetch.

    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [3], "float32")
    >>> (g,) = oar.static.gradients([(x * x).sum()], [x])
    >>> oar.static.Executor().run(feed={"x": [1.0, 2.0, 3.0]}, fetch_list=[g])[0].tolist()
    [2.0, 4.0, 6.0]
    >>> oar.disable_static()
    """
    _require_static("gradients")
    targets = _tensor_list(targets, "gradients", "targets")
    inputs = _tensor_list(inputs, "gradients", "inputs")
    tg = None
    if target_gradients is not None:
        tg = [None if t is None else t for t in (target_gradients if isinstance(target_gradients, (list, tuple))
                                                 else [target_gradients])]
        if len(tg) != len(targets):
            raise _api_error("gradients", f"target_gradients has {len(tg)} entries but targets has {len(targets)}")
    skip = {id(t) for t in (no_grad_set or ()) if isinstance(t, Tensor)}
    hs = _handles("gradients", targets, tg, [t for t in inputs if id(t) not in skip])
    it = iter(hs)
    return [None if id(t) in skip else next(it) for t in inputs]


def _trainable(p):
    return isinstance(p, Tensor) and not p.stop_gradient and getattr(p, "trainable", True)


def _parameters_of(loss, parameter_list, no_grad_set, api):
    """The trainable parameters the recorded loss reads (or the given list)."""
    skip_ids = {id(t) for t in (no_grad_set or ()) if isinstance(t, Tensor)}
    skip_names = {t for t in (no_grad_set or ()) if isinstance(t, str)}
    if parameter_list is not None:
        params = []
        for p in parameter_list:
            if isinstance(p, str):
                raise _api_error(api, "parameter_list takes parameter tensors, not names", TypeError)
            params.append(p)
    else:
        prog = default_main_program()._root()
        params = [t for _, t in _bound_parameters(prog, loss) if _trainable(t)]
    return [p for p in params if id(p) not in skip_ids and getattr(p, "name", None) not in skip_names]


def append_backward(loss, parameter_list=None, no_grad_set=None, callbacks=None, checkpoints=None,
                    distop_context=None):
    """Adds the gradients of ``loss`` to the program; returns ``[(param, grad)]``.

    ``grad`` values can be fetched by ``Executor.run``; they are computed
    from the gradient rules of the recorded ops (see Note [static mode]).

    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> lin = oar.nn.Linear(2, 1, bias_attr=False)
    >>> loss = lin(x).sum()
    >>> (p, g), = oar.static.append_backward(loss)
    >>> oar.static.Executor().run(feed={"x": [[1.0, 2.0], [3.0, 4.0]]}, fetch_list=[g])[0].tolist()
    [[4.0], [6.0]]
    >>> oar.disable_static()
    """
    _require_static("append_backward")
    if not isinstance(loss, Tensor):
        raise _api_error("append_backward", f"loss must be a Tensor, got {type(loss).__name__}", TypeError)
    if loss.size != 1:
        raise _api_error("append_backward", f"loss must hold one value, got shape {loss.shape}")
    params = _parameters_of(loss, parameter_list, no_grad_set, "append_backward")
    return list(zip(params, _handles("append_backward", [loss], None, params)))


def _minimize(opt, loss, startup_program=None, parameters=None, no_grad_set=None):
    """Optimizer.minimize in static mode: every run of the program also applies one update."""
    if not isinstance(loss, Tensor):
        raise _api_error("Optimizer.minimize", f"loss must be a Tensor, got {type(loss).__name__}", TypeError)
    if loss.size != 1:
        raise _api_error("Optimizer.minimize", f"loss must hold one value, got shape {loss.shape}")
    if parameters is None and opt._parameter_list:
        parameters = list(opt._parameter_list)
    params = _parameters_of(loss, parameters, no_grad_set, "Optimizer.minimize")
    if not params:
        raise _api_error("Optimizer.minimize", "the loss reads no trainable parameter")
    # An optimizer made in static mode without parameters updates those the loss reads.
    group = opt._param_groups[0]
    for p in params:
        if id(p) not in opt._group_of:
            group["params"].append(p)
            opt._group_of[id(p)] = group
            opt._parameter_list.append(p)
    pairs = append_backward(loss, params)
    prog = default_main_program()._root()
    prog._minimize.append((opt, loss, params))
    return None, pairs


def _program_parameters(prog):
    """(name, tensor) of the parameters (not captured constants) bound by the program's recording."""
    root = prog._root()
    if root._inference is not None:
        return root._inference.named_parameters()
    if root._rec is None or root._rec.closed:
        return []
    text, bindings = root._rec.snapshot()
    doc = json.loads(text)
    out = []
    for a, t in zip(doc["parameters"], bindings):
        # A snapshot may hand back another handle of a parameter that the program updates in place.
        t = t if hasattr(t, "persistable") else root._named.get(a["name"], t)
        if not a.get("constant", False) and getattr(t, "persistable", False):
            out.append((a["name"], t))
    return out


def _assign_parameters(params, state, api):
    """Copies state[name] into params[name] for the names both have; shapes must match."""
    from ..creation import to_tensor

    with _recording_paused(), _no_grad():
        for name, value in state.items():
            p = params.get(name)
            if p is None:
                continue
            v = value if isinstance(value, Tensor) else to_tensor(np.asarray(value))
            if list(v.shape) != list(p.shape):
                raise _api_error(api, f"'{name}' has shape {list(v.shape)} but the parameter is {list(p.shape)}")
            p.copy_(v.astype(p.dtype) if v.dtype != p.dtype else v)


def _bound_parameters(prog, tensor):
    """(name, tensor) of the parameters the recorded value `tensor` reads."""
    plan = _Plan(prog, [tensor], "append_backward")
    return plan.params_of_forward()


# ---------------------------------------------------------------- static-mode behaviour of layers and optimizers
#
# Layer.create_parameter, Layer.register_buffer, Layer.set_state_dict,
# Layer.__call__, Optimizer.__init__ and Optimizer.minimize check static mode
# themselves and call the helpers below: parameter creation and weight loading
# run with recording paused (a parameter is initialised once, outside the
# program), buffers are copied out of the recording when registered, an
# optimizer made without parameters in static mode takes them from the loss
# that minimize is given, and minimize of a recorded loss adds a training step
# to the program instead of applying one.


@contextlib.contextmanager
def _recording_paused():
    """Runs its body eagerly without recording it into the open programs."""
    prev = _C._static_set_recording(False)
    try:
        yield
    finally:
        _C._static_set_recording(prev)


def _name_parameter(p):
    """Tells the recording the name a new parameter is bound under."""
    if p is not None and isinstance(getattr(p, "name", None), str):
        default_main_program()._root()._named[p.name] = p
    rec = default_main_program()._root()._rec
    if p is not None and rec is not None and not rec.closed and isinstance(getattr(p, "name", None), str):
        rec.name_parameter(p.name, p)


def _keep_pristine_buffers(layer):
    """Keeps the values of a layer's buffers from before recording first runs it.

    Recording runs a layer once on the example values; its in-place writes to
    buffers (batch-norm statistics) become state updates that each run
    applies, so the earlier values are put back when a program first runs
    (restoring them at once would be a write that the recording could not
    follow into later reads of the buffer).
    """
    # Batch-norm statistics are non-trainable parameters, as in Paddle.
    _keep_pristine([b for _, b in layer.named_buffers()] +
                   [p for _, p in layer.named_parameters() if not getattr(p, "trainable", True)])


def _keep_pristine(tensors):
    """_keep_pristine_buffers for tensors that no layer owns (oar.static.nn.batch_norm's statistics)."""
    fresh = [b for b in tensors if isinstance(b, Tensor) and id(b) not in _pristine]
    if fresh:
        with _recording_paused():
            for b in fresh:
                _pristine[id(b)] = (b, _C.clone(b))


_hooks_installed = [False]


def _install_hooks():
    """Makes ``oar.framework_param.create_parameter`` (and its export
    ``oar.create_parameter``) create parameters outside the recording in
    static mode, as Layer.create_parameter does: a parameter recorded with
    its initialiser would be a computed value of the program, not a parameter
    that append_backward and optimizers train."""
    if _hooks_installed[0]:
        return
    _hooks_installed[0] = True
    import oar
    from .. import framework_param

    make = framework_param.create_parameter

    def create_parameter(*args, **kwargs):
        if not _state.static:
            return make(*args, **kwargs)
        with _recording_paused():
            p = make(*args, **kwargs)
        _name_parameter(p)
        return p

    create_parameter.__doc__ = make.__doc__
    create_parameter.__wrapped__ = make
    framework_param.create_parameter = create_parameter
    exported = getattr(oar, "create_parameter", None)
    if exported is make or getattr(exported, "__wrapped__", None) is make:
        oar.create_parameter = create_parameter


# ---------------------------------------------------------------- run plans (used by the executor)


class _Plan:
    """What a run of `prog` fetching `fetches` needs: the pruned forward program and its gradients."""

    def __init__(self, prog, fetches, api, state_updates=True):
        self.prog = prog
        root = prog._root()
        rec = root._recorder(api)
        self.kinds = []   # per fetch: ("value", output index) | ("grad", grad index) | ("param", tensor)
        forward = []      # tensors the forward program must output
        fidx = {}

        def want(t):
            if id(t) not in fidx:
                fidx[id(t)] = len(forward)
                forward.append(t)
            return fidx[id(t)]

        self.grad_groups = []  # (_GradSpec, [fetch grad slots]) in first-use order
        gslot = {}
        self.grad_fetch = []   # (group index, wrt index)
        for i, t in enumerate(fetches):
            g = root._grads.get(id(t))
            if g is not None and g[0] is t:
                spec, k = g[1], g[2]
                if id(spec) not in gslot:
                    gslot[id(spec)] = len(self.grad_groups)
                    self.grad_groups.append(spec)
                self.kinds.append(("grad", len(self.grad_fetch)))
                self.grad_fetch.append((gslot[id(spec)], k))
                continue
            if getattr(t, "trainable", None) is not None and getattr(t, "persistable", False):
                self.kinds.append(("param", t))  # a parameter: its current value, from outside the program
                continue
            self.kinds.append(("value", want(t)))
        # Values that run hooks (oar.static.Print, auc statistics) get after each run.
        self.hooks = [] if not state_updates else [(fn, want(t)) for t, fn in root._hooks]
        # Training steps and gradient targets are forward outputs too.
        self.steps = [] if prog._for_test or not state_updates else list(prog._minimize)
        self.after_run = [] if prog._for_test or not state_updates else list(root._after_run)
        self.step_specs = []
        for opt, loss, params in self.steps:
            spec = _GradSpec([loss], None, params)
            self.step_specs.append(spec)
        for spec in self.grad_groups + self.step_specs:
            for t in spec.targets:
                want(t)
            if spec.target_gradients:
                for t in spec.target_gradients:
                    if t is not None:
                        want(t)
        self.forward = forward
        self.fidx = fidx
        self.forward_program = None  # made on the executor's thread when first run
        self.joint = {}              # feed signature -> forward and gradient program
        self._build(root, rec, api, state_updates)

    def _build(self, root, rec, api, state_updates):
        names = []
        for t in self.forward:
            entry = root._outputs.get(id(t))
            if entry is None or entry[1] is not t:
                name = f"fetch_{len(root._outputs)}"
                rec.add_output(name, t)
                root._outputs[id(t)] = (name, t)
                entry = root._outputs[id(t)]
            names.append(entry[0])
        text, bindings = rec.snapshot()
        doc = json.loads(text)
        spans = root._owned_spans()
        out_id = {o["name"]: o["id"] for o in doc["outputs"]}
        input_ids = {a["id"]: a["name"] for a in doc["inputs"]}
        param_ids = {a["id"]: (i, a) for i, a in enumerate(doc["parameters"])}
        op_of = {}
        for k, op in enumerate(doc["ops"]):
            for r in op["results"]:
                op_of[r["id"]] = k
        for t, name in zip(self.forward, names):
            vid = out_id[name]
            if vid in input_ids or (vid in param_ids and not param_ids[vid][1].get("constant", False)):
                continue
            k = op_of.get(vid)
            if k is None or not any(a <= k < b for a, b in spans):
                raise _api_error(api, f"fetch value {_describe(t)} is not a value of this program (it was "
                                      f"made by another program, or outside static mode)")
        # Keep only what the outputs and the state updates (in-place writes to
        # parameters, e.g. batch-norm statistics; Note [state updates] in
        # ir/tracer.h) need.
        updates = doc.get("state_updates", []) if state_updates else []
        doc["state_updates"] = updates
        self.all_inputs = list(doc["inputs"])
        need = {out_id[n] for n in names} | {u["id"] for u in updates}
        kept_ops = []
        for op in reversed(doc["ops"]):
            if any(r["id"] in need for r in op["results"]):
                kept_ops.append(op)
                _reads(op, need)
        kept_ops.reverse()
        self.inputs = [a["name"] for a in doc["inputs"] if a["id"] in need]
        params = [(a, b) for a, b in zip(doc["parameters"], bindings) if a["id"] in need]
        self.bindings = [b for _, b in params]
        self.param_names = [a["name"] for a, _ in params]
        self.updated = {u["parameter"] for u in updates}
        doc["inputs"] = [a for a in doc["inputs"] if a["id"] in need]
        doc["parameters"] = [a for a, _ in params]
        doc["ops"] = kept_ops
        doc["outputs"] = [{"name": f"out{i}", "id": out_id[n]} for i, n in enumerate(names)]
        doc["notes"] = []
        self.doc = doc

    def params_of_forward(self):
        return list(zip(self.param_names, self.bindings))

    def program(self):
        from .. import _ir

        prog = _C._ir_from_json(json.dumps(self.doc), "<static program>")
        return _ir.Program(prog, self.bindings, list)


def _reads(op, need):
    """Adds the ids `op` reads, in its regions too (they may read enclosing values), to `need`."""
    need.update(v for v in op["operands"] if v is not None)
    for region in op.get("regions", ()):
        need.update(v for v in region.get("yields", ()) if v is not None)
        for inner in region.get("ops", ()):
            _reads(inner, need)


def _describe(t):
    name = getattr(t, "name", None)
    return f"'{name}' (shape {t.shape})" if isinstance(name, str) and name else f"of shape {t.shape}"
