"""Saving and loading static programs (Paddle's ``paddle.static`` io names).

Inference models use the format of ``oar.jit.save`` (oar/jit/io.py), so
one reader serves both and the C++ inference runtime (``oar.inference``)
runs them: ``save_inference_model(prefix, feed_vars, fetch_vars, exe)``
writes the program pruned to what ``fetch_vars`` need, with ``feed_vars``
as its inputs in that order (``prefix.json``), and the parameters it reads
(``prefix.safetensors``). ``serialize_program`` / ``serialize_persistables``
give the same two files' bytes.

Checkpoints of a training program (``save`` / ``load``) hold its parameters
(``.pdparams``) and its optimizers' state (``.pdopt``), as safetensors
files written by ``oar.save``.

A loaded (or normalised) program is an inference program: ``Executor.run``
feeds it by input name and fetches the targets ``load_inference_model``
returns, or its output names. It runs the way it was recorded (build it
with ``is_test=True`` layers, or after ``layer.eval()``).
"""
import json
import os
import tempfile

import numpy as np

from .. import _C
from .. import serialization as _ser
from ..framework import _dtype
from . import program as _program
from .program import Program, _api_error, _Plan, _recording_paused, default_main_program

__all__ = ["save_inference_model", "load_inference_model", "serialize_program", "deserialize_program",
           "serialize_persistables", "deserialize_persistables", "save_to_file", "load_from_file",
           "normalize_program", "save", "load", "load_program_state", "set_program_state"]

Tensor = _C.Tensor


def _tensors(x, api, what):
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (list, tuple)) and x and all(isinstance(t, Tensor) for t in x):
        return list(x)
    raise _api_error(api, f"{what} must be a Tensor or a non-empty list of Tensors, got {x!r}"[:300], TypeError)


def _path_prefix(path, api):
    if not isinstance(path, (str, os.PathLike)):
        raise _api_error(api, f"path_prefix must be a str or os.PathLike, got {type(path).__name__}", TypeError)
    path = os.fspath(path)
    if not path or path.endswith(os.sep) or os.path.isdir(path):
        raise _api_error(api, f"path_prefix must be a file prefix (e.g. 'model/net'), got {path!r}")
    return path


class _Inference:
    """An inference program: the IR program, the tensors bound to its parameters, and fetch targets."""

    def __init__(self, text, where, tensors, aliases=()):
        self.aliases = list(aliases)  # the recorded values the outputs were made from, fetchable too
        self.prog = _C._ir_from_json(text, where)
        self.names = list(self.prog.parameter_names)
        self.tensors = list(tensors)
        self.output_names = list(self.prog.output_names)
        self.text = text
        doc = json.loads(text)
        # The order feed_vars were given in (the program keeps its inputs in recording order).
        order = doc.get("meta", {}).get("input_names") if isinstance(doc.get("meta"), dict) else None
        names = list(self.prog.input_names)
        self.feed_names = list(order) if isinstance(order, list) and sorted(order) == sorted(names) else names
        types = {}
        for op in _walk(doc.get("ops", [])):
            for r in op.get("results", ()):
                types[r["id"]] = (r.get("dtype"), r.get("shape"))
        for a in doc.get("inputs", []) + doc.get("parameters", []):
            types[a["id"]] = (a["dtype"], a["shape"])
        self.fetch_targets = []
        with _recording_paused():
            for o in doc.get("outputs", []):
                dt, shape = types.get(o["id"], ("float32", []))
                t = _C.full([1 if d == -1 else d for d in shape], 0, _dtype(dt))
                t.name = o["name"]
                t._declared_shape = tuple(shape)  # Note [declared shapes]
                self.fetch_targets.append(t)

    def named_parameters(self):
        return list(zip(self.names, self.tensors))

    def set_tensors(self, state, where):
        missing = [n for n in self.names if n not in state]
        if missing:
            raise _api_error("deserialize_persistables", f"{where} has no tensor for the program parameter(s) "
                                                         f"{missing}")
        out = []
        for name, (dt, shape) in zip(self.names, _C._ir_parameter_types(self.prog)):
            t = state[name]
            got = str(t.dtype).split(".")[-1]
            if got != dt or list(t.shape) != list(shape):
                raise _api_error("deserialize_persistables", f"{where}: '{name}' is {got}{list(t.shape)} but the "
                                                             f"program expects {dt}{list(shape)}")
            out.append(t)
        self.tensors = out

    def run(self, feed, fetch_list, return_numpy):
        from .executor import _check_feed, _on_worker, _to_tensor

        api = "Executor.run"
        feed = {} if feed is None else feed
        if not isinstance(feed, dict):
            raise _api_error(api, f"feed must be a dict of input name to value, got {type(feed).__name__}", TypeError)
        for k in feed:
            if k not in self.feed_names:
                raise _api_error(api, f"feed names '{k}', which is not an input of the inference program; its "
                                      f"inputs are {self.feed_names}")
        if fetch_list is None:
            return []
        if not isinstance(fetch_list, (list, tuple)):
            fetch_list = [fetch_list]
        index = []
        for f in fetch_list:
            k = None
            if isinstance(f, str) and f in self.output_names:
                k = self.output_names.index(f)
            elif isinstance(f, Tensor):
                k = next((i for i, t in enumerate(self.fetch_targets) if t is f), None)
                if k is None:
                    k = next((i for i, t in enumerate(self.aliases) if t is f), None)
            if k is None:
                raise _api_error(api, f"fetch_list entries of an inference program must be its fetch targets or "
                                      f"output names {self.output_names}, got {f!r}"[:300])
            index.append(k)
        arrays = []
        for name, (dt, shape) in zip(self.prog.input_names, self.prog.input_types):
            if name not in feed:
                raise _api_error(api, f"feed has no value for the input '{name}'")
            arrays.append(_check_feed(name, feed[name], dt, list(shape)))

        def run():
            from .. import _ir
            from ..autograd import no_grad

            with no_grad():
                outs = _ir.Program(self.prog, self.tensors, list).run(*[_to_tensor(a) for a in arrays])
            return [outs[k] for k in index]

        results = _on_worker(run)
        return [r.numpy() for r in results] if return_numpy else results


def _walk(ops):
    for op in ops:
        yield op
        for region in op.get("regions", ()):
            yield from _walk(region.get("ops", ()))


def _inference_program(program, feed_vars, fetch_vars, api):
    """(program JSON text in oar.jit.save's format, {parameter name: tensor}) for feed_vars -> fetch_vars."""
    program = default_main_program() if program is None else getattr(program, "_compiled_program", program)
    if not isinstance(program, Program):
        raise _api_error(api, f"program must be an oar.static.Program, got {type(program).__name__}", TypeError)
    feeds = _tensors(feed_vars, api, "feed_vars")
    fetches = _tensors(fetch_vars, api, "fetch_vars")
    root = program._root()
    if root._inference is not None:
        inf = root._inference
        if [getattr(t, "name", None) for t in feeds] != inf.feed_names or \
                not all(any(f is t for t in inf.fetch_targets) for f in fetches):
            raise _api_error(api, "an inference program is saved with its own feed variables and fetch targets")
        return inf.text, dict(inf.named_parameters())
    names = []
    for i, t in enumerate(feeds):
        name = getattr(t, "name", None)
        entry = root._data.get(name) if isinstance(name, str) else None
        if entry is None or entry[0] is not t:
            raise _api_error(api, f"feed_vars[{i}] is not an input (oar.static.data) of the program")
        names.append(name)
    plan = _Plan(program, fetches, api, state_updates=False)
    for i, (kind, _) in enumerate(plan.kinds):
        if kind != "value":
            raise _api_error(api, f"fetch_vars[{i}] is a {'gradient' if kind == 'grad' else 'parameter'}; an "
                                  f"inference program fetches values the program computes")
    missing = [n for n in plan.inputs if n not in names]
    if missing:
        raise _api_error(api, f"fetch_vars need the input(s) {missing}, which feed_vars do not hold")
    doc = json.loads(json.dumps(plan.doc))
    doc["inputs"] = [a for a in plan.all_inputs if a["name"] in names]
    out_names = []
    for i, (t, o) in enumerate(zip(fetches, doc["outputs"])):
        name = getattr(t, "name", None)
        if not isinstance(name, str) or not name or name in out_names or name in names:
            name = f"fetch_{i}"
        o["name"] = name
        out_names.append(name)
    params = dict(zip(plan.param_names, plan.bindings))
    kinds = {}
    for n, t in params.items():
        if getattr(t, "persistable", False) and hasattr(t, "trainable"):
            kinds[n] = "parameter" if not t.stop_gradient else "frozen"
        else:
            kinds[n] = "buffer"
    doc["meta"] = {"output_kind": "tensor" if len(fetches) == 1 else "tuple", "parameter_kinds": kinds,
                   "input_names": names}
    return json.dumps(doc, indent=1) + "\n", params


def _state_bytes(tensors):
    """The bytes of a safetensors file holding tensors ({name: Tensor})."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "state.safetensors")
        _ser.save({n: t.detach() for n, t in tensors.items()}, path)
        with open(path, "rb") as f:
            return f.read()


def _state_from_bytes(data, api):
    if not isinstance(data, (bytes, bytearray)):
        raise _api_error(api, f"data must be bytes, got {type(data).__name__}", TypeError)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "state.safetensors")
        with open(path, "wb") as f:
            f.write(data)
        state = _ser._load_safetensors(path, False, f"oar.static.{api}")
    if not isinstance(state, dict) or not all(isinstance(v, Tensor) for v in state.values()):
        raise _api_error(api, "data does not hold a flat dict of tensors")
    return state


def serialize_program(feed_vars, fetch_vars, **kwargs):
    """The inference program from ``feed_vars`` to ``fetch_vars`` as bytes (oar.jit.save's program format).

    ``program=`` picks the program (default: the current main program).

    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.nn.fc(x, 1)
    >>> data = oar.static.serialize_program([x], [y])
    >>> data[:1], b'"oar.program"' in data
    (b'{', True)
    >>> oar.disable_static()
    """
    text, _ = _inference_program(kwargs.get("program"), feed_vars, fetch_vars, "serialize_program")
    return text.encode("utf-8")


def serialize_persistables(feed_vars, fetch_vars, executor, **kwargs):
    """The parameters the inference program from ``feed_vars`` to ``fetch_vars`` reads, as safetensors bytes.

    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.nn.fc(x, 1)
    >>> len(oar.static.serialize_persistables([x], [y], oar.static.Executor())) > 8
    True
    >>> oar.disable_static()
    """
    _, params = _inference_program(kwargs.get("program"), feed_vars, fetch_vars, "serialize_persistables")
    return _state_bytes(params)


def deserialize_program(data):
    """An inference Program from the bytes of ``serialize_program``; its parameters start as zeros.

    Give it values with ``deserialize_persistables``.

    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.nn.fc(x, 1)
    >>> prog = oar.static.deserialize_program(oar.static.serialize_program([x], [y]))
    >>> [p.shape for p in prog.all_parameters()]
    [[2, 1], [1]]
    >>> oar.disable_static()
    """
    if not isinstance(data, (bytes, bytearray)):
        raise _api_error("deserialize_program", f"data must be bytes, got {type(data).__name__}", TypeError)
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise _api_error("deserialize_program", f"data is not UTF-8 program text ({e.reason} at byte {e.start})") \
            from None
    return _new_inference_program(text, "<serialized program>", None)


def _new_inference_program(text, where, tensors, aliases=()):
    prog = _C._ir_from_json(text, where)  # strict: raises ValueError naming `where`
    if tensors is None:
        with _recording_paused():
            tensors = [_C.full(list(shape), 0, _dtype(dt)) for dt, shape in _C._ir_parameter_types(prog)]
    p = Program()
    p._inference = _Inference(text, where, tensors, aliases)
    return p


def deserialize_persistables(program, data, executor):
    """Sets the parameters of ``program`` from the bytes of ``serialize_persistables``.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.nn.fc(x, 1)
    >>> exe = oar.static.Executor()
    >>> prog = oar.static.deserialize_program(oar.static.serialize_program([x], [y]))
    >>> oar.static.deserialize_persistables(prog, oar.static.serialize_persistables([x], [y], exe), exe)
    >>> feed = {"x": np.ones((1, 2), np.float32)}
    >>> bool(np.allclose(exe.run(prog, feed, ["fetch_0"])[0], exe.run(feed=feed, fetch_list=[y])[0]))
    True
    >>> oar.disable_static()
    """
    if not isinstance(program, Program):
        raise _api_error("deserialize_persistables", f"program must be an oar.static.Program, "
                                                     f"got {type(program).__name__}", TypeError)
    state = _state_from_bytes(data, "deserialize_persistables")
    root = program._root()
    if root._inference is not None:
        root._inference.set_tensors(state, "the persistables")
    else:
        _program._assign_parameters(dict(_program._program_parameters(program)), state, "deserialize_persistables")


def save_to_file(path, content):
    """Writes ``content`` (bytes) to ``path``, atomically.

    >>> import os, tempfile
    >>> import oar
    >>> path = os.path.join(tempfile.mkdtemp(), "blob")
    >>> oar.static.save_to_file(path, b"abc")
    >>> oar.static.load_from_file(path)
    b'abc'
    """
    if not isinstance(content, (bytes, bytearray)):
        raise _api_error("save_to_file", f"content must be bytes, got {type(content).__name__}", TypeError)
    if not isinstance(path, (str, os.PathLike)):
        raise _api_error("save_to_file", f"path must be a str or os.PathLike, got {type(path).__name__}", TypeError)
    _ser._atomic_write(os.fspath(path), lambda f: f.write(bytes(content)))


def load_from_file(path):
    """The bytes of the file at ``path`` (see ``save_to_file``).

    >>> import os, tempfile
    >>> import oar
    >>> path = os.path.join(tempfile.mkdtemp(), "blob")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(b"xyz")
    >>> oar.static.load_from_file(path)
    b'xyz'
    """
    if not isinstance(path, (str, os.PathLike)):
        raise _api_error("load_from_file", f"path must be a str or os.PathLike, got {type(path).__name__}",
                         TypeError)
    if not os.path.isfile(path):
        raise _api_error("load_from_file", f"no such file: {os.fspath(path)!r}", FileNotFoundError)
    with open(path, "rb") as f:
        return f.read()


def normalize_program(program, feed_vars, fetch_vars, **kwargs):
    """The inference program of ``program`` from ``feed_vars`` to ``fetch_vars``, sharing its parameters.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.nn.fc(x, 1)
    >>> infer = oar.static.normalize_program(oar.static.default_main_program(), [x], [y])
    >>> exe = oar.static.Executor()
    >>> feed = {"x": np.ones((3, 2), np.float32)}
    >>> exe.run(infer, feed, [y])[0].shape
    (3, 1)
    >>> oar.disable_static()
    """
    if not isinstance(program, Program):
        raise _api_error("normalize_program", f"program must be an oar.static.Program, got "
                                              f"{type(program).__name__}", TypeError)
    text, params = _inference_program(program, feed_vars, fetch_vars, "normalize_program")
    prog = _C._ir_from_json(text, "<normalized program>")
    return _new_inference_program(text, "<normalized program>", [params[n] for n in prog.parameter_names],
                                  _tensors(fetch_vars, "normalize_program", "fetch_vars"))


def save_inference_model(path_prefix, feed_vars, fetch_vars, executor, **kwargs):
    """Saves the inference program from ``feed_vars`` to ``fetch_vars`` and its parameters.

    Writes ``path_prefix.json`` and ``path_prefix.safetensors`` in
    ``oar.jit.save``'s format: ``load_inference_model``, ``oar.jit.load``
    and the C++ inference runtime (``oar.inference``) read them. ``program=``
    picks the program (default: the current main program).

    >>> import os, tempfile
    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.nn.fc(x, 1)
    >>> exe = oar.static.Executor()
    >>> prefix = os.path.join(tempfile.mkdtemp(), "model")
    >>> oar.static.save_inference_model(prefix, [x], [y], exe)
    >>> prog, feed_names, fetch_targets = oar.static.load_inference_model(prefix, exe)
    >>> feed_names
    ['x']
    >>> feed = {"x": np.ones((4, 2), np.float32)}
    >>> bool(np.allclose(exe.run(prog, feed, fetch_targets)[0], exe.run(feed=feed, fetch_list=[y])[0]))
    True
    >>> oar.disable_static()
    """
    api = "save_inference_model"
    path = _path_prefix(path_prefix, api)
    text, params = _inference_program(kwargs.get("program"), feed_vars, fetch_vars, api)
    from ..jit.io import _atomic_write_text

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    # Weights first: a program file never points at weights that are not there yet.
    _ser.save({n: t.detach() for n, t in params.items()}, path + ".safetensors")
    _atomic_write_text(path + ".json", text)


def load_inference_model(path_prefix, executor, **kwargs):
    """Loads what ``save_inference_model`` (or ``oar.jit.save``) wrote; returns
    ``[program, feed_target_names, fetch_targets]``.

    Run it with ``executor.run(program, feed={name: value}, fetch_list=fetch_targets)``.

    >>> import os, tempfile
    >>> import numpy as np
    >>> import oar
    >>> net = oar.nn.Linear(2, 1)
    >>> prefix = os.path.join(tempfile.mkdtemp(), "lin")
    >>> oar.jit.save(net, prefix, input_spec=[oar.static.InputSpec([None, 2], "float32", "x")])
    >>> oar.enable_static()
    >>> exe = oar.static.Executor()
    >>> prog, feed_names, fetch_targets = oar.static.load_inference_model(prefix, exe)
    >>> x = np.ones((3, 2), np.float32)
    >>> out = exe.run(prog, feed={feed_names[0]: x}, fetch_list=fetch_targets)[0]
    >>> oar.disable_static()
    >>> bool(np.allclose(out, net(oar.to_tensor(x)).numpy()))
    True
    """
    api = "load_inference_model"
    path = _path_prefix(path_prefix, api)
    from ..jit import io as jit_io

    prog, _, _ = jit_io._read_program(path + ".json")
    tensors = jit_io._read_weights(path + ".safetensors", prog)
    with open(path + ".json", "rb") as f:
        text = f.read().decode("utf-8")
    p = _new_inference_program(text, path + ".json", tensors)
    inf = p._inference
    return [p, list(inf.feed_names), list(inf.fetch_targets)]


# ---------------------------------------------------------------- checkpoints of training programs


def _strip_suffix(model_path, api):
    if not isinstance(model_path, (str, os.PathLike)):
        raise _api_error(api, f"model_path must be a str or os.PathLike, got {type(model_path).__name__}", TypeError)
    model_path = os.fspath(model_path)
    for suffix in (".pdparams", ".pdopt", ".pdmodel"):
        if model_path.endswith(suffix):
            return model_path[:-len(suffix)]
    return model_path


def _optimizers(program):
    seen, out = set(), []
    for opt, _, _ in program._root()._minimize + program._minimize:
        if id(opt) not in seen:
            seen.add(id(opt))
            out.append(opt)
    return out


def save(program, model_path, protocol=4, **configs):
    """Saves the parameters of ``program`` (``model_path.pdparams``) and its optimizers' state
    (``model_path.pdopt``), as safetensors files.

    >>> import os, tempfile
    >>> import oar
    >>> oar.enable_static()
    >>> main = oar.static.Program()
    >>> with oar.static.program_guard(main):
    ...     x = oar.static.data("x", [None, 2], "float32")
    ...     y = oar.static.nn.fc(x, 1, name="lin")
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt")
    >>> oar.static.save(main, path)
    >>> sorted(oar.static.load_program_state(path))
    ['lin.b_0', 'lin.w_0']
    >>> oar.disable_static()
    """
    api = "save"
    if not isinstance(program, Program):
        raise _api_error(api, f"program must be an oar.static.Program, got {type(program).__name__}", TypeError)
    path = _strip_suffix(model_path, api)
    if not path or path.endswith(os.sep) or os.path.isdir(path):
        raise _api_error(api, f"model_path must be a file prefix, got {model_path!r}")
    params = {n: t.detach() for n, t in _program._program_parameters(program)}
    _ser.save(params, path + ".pdparams")
    opt_state = {}
    for opt in _optimizers(program):
        opt_state.update(opt.state_dict())
    if opt_state:
        _ser.save(opt_state, path + ".pdopt")


def load_program_state(model_path, var_list=None):
    """{name: NumPy array} of what ``save`` wrote at ``model_path`` (parameters and optimizer state).

    ``var_list`` (tensors or names) keeps only those names.

    >>> import os, tempfile
    >>> import oar
    >>> oar.enable_static()
    >>> main = oar.static.Program()
    >>> with oar.static.program_guard(main):
    ...     y = oar.static.nn.fc(oar.static.data("x", [None, 3], "float32"), 2, name="fc")
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt")
    >>> oar.static.save(main, path)
    >>> state = oar.static.load_program_state(path)
    >>> oar.disable_static()
    >>> {k: v.shape for k, v in sorted(state.items())}
    {'fc.b_0': (2,), 'fc.w_0': (3, 2)}
    """
    api = "load_program_state"
    path = _strip_suffix(model_path, api)
    if not os.path.isfile(path + ".pdparams"):
        raise _api_error(api, f"no such file: {path + '.pdparams'!r}", FileNotFoundError)
    state = {}
    for suffix in (".pdparams", ".pdopt"):
        if os.path.isfile(path + suffix):
            loaded = _ser.load(path + suffix)
            if not isinstance(loaded, dict):
                raise _api_error(api, f"{path + suffix}: expected a dict of tensors")
            state.update(_flatten_state(loaded))
    if var_list is not None:
        keep = {v if isinstance(v, str) else getattr(v, "name", None) for v in var_list}
        state = {k: v for k, v in state.items() if k in keep}
    return state


def _flatten_state(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten_state(v, key + "."))
        elif isinstance(v, Tensor):
            out[key] = v.numpy()
        elif isinstance(v, np.ndarray):
            out[key] = v
        else:
            out[key] = v
    return out


def set_program_state(program, state_dict):
    """Copies ``state_dict`` ({name: array}, e.g. from ``load_program_state``) into the program's parameters.

    Names the program does not have are left out.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> main = oar.static.Program()
    >>> with oar.static.program_guard(main):
    ...     y = oar.static.nn.fc(oar.static.data("x", [None, 2], "float32"), 1, name="fc")
    >>> oar.static.set_program_state(main, {"fc.w_0": np.full((2, 1), 3.0, np.float32), "other": np.zeros(1)})
    >>> out = oar.static.Executor().run(main, feed={"x": np.ones((1, 2), np.float32)}, fetch_list=[y])[0]
    >>> oar.disable_static()
    >>> out.tolist()
    [[6.0]]
    """
    api = "set_program_state"
    if not isinstance(program, Program):
        raise _api_error(api, f"program must be an oar.static.Program, got {type(program).__name__}", TypeError)
    if not isinstance(state_dict, dict):
        raise _api_error(api, f"state_dict must be a dict, got {type(state_dict).__name__}", TypeError)
    _program._assign_parameters(dict(_program._program_parameters(program)), state_dict, api)


def load(program, model_path, executor=None, var_list=None):
    """Loads what ``save`` wrote at ``model_path`` into the parameters (and optimizer state) of ``program``.

    >>> import os, tempfile
    >>> import oar
    >>> oar.enable_static()
    >>> main = oar.static.Program()
    >>> with oar.static.program_guard(main):
    ...     x = oar.static.data("x", [None, 2], "float32")
    ...     y = oar.static.nn.fc(x, 1, name="m", bias_attr=oar.nn.initializer.Constant(3.0))
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt")
    >>> oar.static.save(main, path)
    >>> main.set_state_dict({"m.b_0": [0.0]})
    >>> oar.static.load(main, path)
    >>> main.state_dict()["m.b_0"].tolist()
    [3.0]
    >>> oar.disable_static()
    """
    api = "load"
    if not isinstance(program, Program):
        raise _api_error(api, f"program must be an oar.static.Program, got {type(program).__name__}", TypeError)
    path = _strip_suffix(model_path, api)
    state = load_program_state(path, var_list)
    set_program_state(program, state)
    if os.path.isfile(path + ".pdopt"):
        opt_state = _ser.load(path + ".pdopt")
        for opt in _optimizers(program):
            opt.set_state_dict(opt_state)
