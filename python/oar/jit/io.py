"""``oar.jit.save`` / ``oar.jit.load``: a captured program and its weights on disk.

``save(layer, path, input_spec)`` writes two files:

- ``path + ".json"``: the program in the versioned model format (see
  src/ir/serialize.h): inputs, parameters, ops with typed attributes, outputs.
  A ``"meta"`` entry records what only the Python side needs (the output
  structure and which parameters are trainable).
- ``path + ".safetensors"``: the tensors bound to the program's parameters,
  under their program names, written by ``oar.save``.

Both writes are atomic. ``load(path)`` validates both files (the program is
parsed by a strict reader and verified; the weights must match the program's
parameter types) and returns a :class:`TranslatedLayer`. Every problem is a
ValueError naming the file.
"""
import json
import os
import tempfile
import warnings

from .. import _C, _ir, _pytree
from .. import serialization as _ser
from ..framework_param import _mark_parameter
from ..nn import Layer
from ..static import InputSpec
from ..static.build_strategy import _no_passes
from .api import StaticFunction

__all__ = ["save", "load", "TranslatedLayer"]

Tensor = _C.Tensor

_MAX_PROGRAM_BYTES = 1 << 30  # a program file larger than this is not a program
_OUT_KINDS = {"list": list, "tuple": tuple}


def _simple_kind(layout):
    """"tensor", "list" or "tuple" for a Tensor or a flat list/tuple of Tensors (the first format's
    kinds, which older readers know); None for any other layout."""
    if layout == _pytree.TENSOR:
        return "tensor"
    if layout[0] in (list, tuple) and all(c == _pytree.TENSOR for c in layout[1]):
        return "list" if layout[0] is list else "tuple"
    return None


def _err(path, what):
    return ValueError(f"[oar.jit.load] {path}: {what}")


def _atomic_write_text(path, text):
    _ser._atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def _concrete_program(layer, input_spec):
    """The program to save: traced from input_spec, or the converted function's last one."""
    if isinstance(layer, Layer):
        fwd = layer.__dict__.get("forward")
        if not isinstance(fwd, StaticFunction):
            fwd = layer.forward  # a class-level StaticFunction binds itself to the instance here
        static = fwd if isinstance(fwd, StaticFunction) else None
        function, owner = (static.dygraph_function, layer) if static else (type(layer).forward, layer)
    elif isinstance(layer, StaticFunction):
        static, function, owner = layer, layer.dygraph_function, layer._layer
    else:
        raise TypeError(f"[oar.jit.save] expects a Layer or a to_static function, got {type(layer).__name__}")
    if input_spec is not None:
        if isinstance(input_spec, InputSpec):
            input_spec = [input_spec]
        if not isinstance(input_spec, (list, tuple)):
            raise TypeError(f"[oar.jit.save] input_spec must be a list of InputSpec, got {type(input_spec).__name__}")
        for i, s in enumerate(input_spec):
            if not isinstance(s, (InputSpec, Tensor)):
                raise TypeError(f"[oar.jit.save] input_spec[{i}] must be an InputSpec, got {type(s).__name__}")
        input_spec = [InputSpec.from_tensor(s) if isinstance(s, Tensor) else s for s in input_spec]
        # A fresh conversion: the user's layer and its cache are left as they are.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a specialised trace is reported by save itself
            # Saved as traced: the runtime that loads it runs the passes for its target.
            return StaticFunction(function, input_spec, build_strategy=_no_passes(),
                                  layer=owner).get_concrete_program(), owner
    if static is not None and (static._last_program is not None or static.input_spec is not None
                               or static._last_call_specs is not None):
        return static.concrete_program, owner
    raise ValueError("[oar.jit.save] needs input_spec, or a to_static layer/function that has been called once")


def save(layer, path, input_spec=None, **configs):
    """Saves a Layer (or a to_static function) as ``path.json`` + ``path.safetensors``.

    The forward is traced with ``input_spec`` (``None``/-1 dims stay dynamic);
    without it, a to_static layer's last traced program is saved. The program
    runs the way it was traced: call ``layer.eval()`` first to save inference
    behaviour (dropout off, batch-norm running statistics).

    >>> import oar, os, tempfile
    >>> from oar.static import InputSpec
    >>> net = oar.nn.Linear(3, 2)
    >>> path = os.path.join(tempfile.mkdtemp(), "linear")
    >>> oar.jit.save(net, path, input_spec=[InputSpec([None, 3], "float32")])
    >>> loaded = oar.jit.load(path)
    >>> x = oar.ones([5, 3])
    >>> bool((loaded(x) - net(x)).abs().max() < 1e-6)
    True
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"[oar.jit.save] path must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    if not path or path.endswith(os.sep) or os.path.isdir(path):
        raise ValueError(f"[oar.jit.save] path must be a file prefix, got {path!r}")
    program, owner = _concrete_program(layer, input_spec)
    if (program.notes or getattr(program, "_reads_dynamic_size", False)) and \
            any(-1 in shape for _, shape in program.input_types):
        # The program holds the example's size where the spec says "any": it
        # would fail on other sizes, so it is not worth saving.
        raise ValueError(f"[oar.jit.save] the forward fixes a dynamic input dim while tracing "
                         f"({'; '.join(program.notes) or 'Python reads x.shape'}); give those dims a size in input_spec, or compute "
                         f"shapes without the input's size (e.g. reshape([-1, n]) or oar.flatten)")
    named = dict(owner.named_parameters()) if isinstance(owner, Layer) else {}
    weights, kinds = {}, {}
    for name, t in program.bound_parameters():
        weights[name] = t
        if any(t is p for p in named.values()) or hasattr(t, "trainable"):
            kinds[name] = "parameter" if not t.stop_gradient else "frozen"
        else:
            kinds[name] = "buffer"
    layout = program._out_kind
    kind = _simple_kind(layout)
    meta = {"output_kind": kind or "nested", "parameter_kinds": kinds,
            "input_names": [getattr(s, "name", None) for s in (input_spec or [])]}
    if kind is None:
        meta["output_tree"] = _pytree.to_json(layout, "oar.jit.save")
    text = _C._ir_to_json(program._prog).rstrip()
    text = text[:-1] + ',\n "meta": ' + json.dumps(meta) + "}\n"  # the document's last "}" closes it
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    # Weights first: a program file never points at weights that are not there yet.
    _ser.save(weights, path + ".safetensors")
    _atomic_write_text(path + ".json", text)


def _read_program(jpath):
    if not os.path.isfile(jpath):
        raise _err(jpath, "no such file (oar.jit.load expects the prefix given to oar.jit.save)")
    size = os.path.getsize(jpath)
    if size > _MAX_PROGRAM_BYTES:
        raise _err(jpath, f"{size} bytes is too large for a program file")
    with open(jpath, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _err(jpath, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    prog = _C._ir_from_json(text, jpath)  # strict: raises ValueError naming the file
    meta = json.loads(text).get("meta", {})  # already validated as JSON above
    if not isinstance(meta, dict):
        raise _err(jpath, "\"meta\" must be an object")
    n = len(prog.output_names)
    kind = meta.get("output_kind", "tuple" if n > 1 else "tensor")
    if kind == "nested":
        layout = _pytree.from_json(meta.get("output_tree"), f"[oar.jit.load] {jpath}: \"meta\" \"output_tree\"")
        if _pytree.count(layout) != n:
            raise _err(jpath, f"\"output_tree\" places {_pytree.count(layout)} tensors but the program has "
                              f"{n} outputs")
    elif kind == "tensor" or kind in _OUT_KINDS:
        if kind == "tensor" and n != 1:
            raise _err(jpath, f"\"output_kind\" is tensor but the program has {n} outputs")
        layout = _pytree.TENSOR if kind == "tensor" else (_OUT_KINDS[kind], (_pytree.TENSOR,) * n)
    else:
        raise _err(jpath, f"unknown \"output_kind\" {kind!r} in \"meta\"")
    kinds = meta.get("parameter_kinds", {})
    if not isinstance(kinds, dict) or not all(v in ("parameter", "frozen", "buffer") for v in kinds.values()):
        raise _err(jpath, "\"parameter_kinds\" in \"meta\" must map names to parameter, frozen or buffer")
    return prog, layout, kinds


def _read_weights(wpath, prog):
    if not os.path.isfile(wpath):
        raise _err(wpath, "no such file: the weights saved with the program are missing")
    try:
        state = _ser._load_safetensors(wpath, False, "oar.jit.load")
    except (OSError, TypeError, KeyError, OverflowError) as e:
        raise _err(wpath, f"cannot be read: {e}") from None
    if state is None:
        state = {}
    if not isinstance(state, dict):
        raise _err(wpath, "expected a flat dict of tensors")
    names = list(prog.parameter_names)
    missing = [n for n in names if n not in state]
    if missing:
        raise _err(wpath, f"has no tensor for the program parameter(s) {missing}")
    extra = sorted(set(state) - set(names))
    if extra:
        raise _err(wpath, f"holds tensors that the program does not use: {extra}")
    out = []
    for name, (dt, shape) in zip(names, _C._ir_parameter_types(prog)):
        t = state[name]
        if not isinstance(t, Tensor):
            raise _err(wpath, f"'{name}' is not a tensor")
        got = str(t.dtype).split(".")[-1]
        if got != dt or len(t.shape) != len(shape) or any(d != -1 and d != s for d, s in zip(shape, t.shape)):
            raise _err(wpath, f"'{name}' has type {got}{list(t.shape)} but the program expects {dt}{list(shape)}")
        out.append(t)
    return out


class TranslatedLayer(Layer):
    """A Layer loaded by :func:`load`: its forward runs the saved program.

    The loaded weights are its parameters (trainable as they were saved) and
    buffers, under their saved names (e.g. ``fc1.weight``), so ``state_dict``,
    ``set_state_dict`` and optimizers work as for any layer, and it can be
    fine-tuned. ``eval()``/``train()`` set the flags; the program itself runs
    the way it was traced.

    >>> import oar, os, tempfile
    >>> from oar.static import InputSpec
    >>> path = os.path.join(tempfile.mkdtemp(), "m")
    >>> oar.jit.save(oar.nn.Linear(2, 2), path, [InputSpec([None, 2])])
    >>> layer = oar.jit.load(path)
    >>> sorted(layer.state_dict().keys())
    ['bias', 'weight']
    """

    def __init__(self, prog, tensors, out_kind, kinds=None):
        super().__init__()
        kinds = kinds or {}
        self._names = list(prog.parameter_names)
        self._slots = []  # (owning layer, attribute name) per program parameter
        for name, t in zip(self._names, tensors):
            owner, attr = self._slot_for(name)
            kind = kinds.get(name, "parameter")
            if kind == "buffer":
                owner.register_buffer(attr, t)
            else:
                _mark_parameter(t, name, trainable=kind == "parameter")
                owner.add_parameter(attr, t)
            self._slots.append((owner, attr))
        self.__dict__["_program"] = _ir.Program(prog, tensors, out_kind)

    def _taken(self, layer, name):
        return name in layer._parameters or name in layer._buffers or name in layer._sub_layers

    def _slot_for(self, name):
        """(layer, attribute) for a saved name: "fc1.weight" becomes sublayer fc1's "weight"."""
        parts = name.split(".")
        if len(parts) > 1 and all(parts):
            owner = self
            for p in parts[:-1]:
                sub = owner._sub_layers.get(p)
                if sub is None:
                    if self._taken(owner, p):
                        break
                    sub = owner.add_sublayer(p, Layer())
                owner = sub
            else:
                if not self._taken(owner, parts[-1]):
                    return owner, parts[-1]
        # Names that do not nest cleanly are kept flat, made unique.
        base = name.replace(".", "_") or "_param"
        attr, n = base, 1
        while self._taken(self, attr):
            attr, n = f"{base}_{n}", n + 1
        return self, attr

    def program(self, method_name="forward"):
        """The loaded program (an oar._ir.Program)."""
        if method_name != "forward":
            raise ValueError(f"[oar.jit.TranslatedLayer] only 'forward' is saved, got {method_name!r}")
        return self._program

    def forward(self, *inputs):
        prog = self._program
        if len(inputs) != len(prog.inputs):
            raise TypeError(f"[oar.jit.TranslatedLayer] forward takes {len(prog.inputs)} input(s), got {len(inputs)}")
        # The current tensors, so that a replaced parameter or buffer is used.
        bound = [getattr(owner, attr) for owner, attr in self._slots]
        prog._bindings = bound
        return prog.run(*inputs)


def load(path, **configs):
    """Loads what :func:`save` wrote at ``path`` as a :class:`TranslatedLayer`.

    >>> import oar, os, tempfile
    >>> from oar.static import InputSpec
    >>> path = os.path.join(tempfile.mkdtemp(), "m")
    >>> oar.jit.save(oar.nn.Linear(4, 3), path, [InputSpec([None, 4])])
    >>> oar.jit.load(path)(oar.ones([2, 4])).shape
    [2, 3]
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"[oar.jit.load] path must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    prog, out_kind, kinds = _read_program(path + ".json")
    tensors = _read_weights(path + ".safetensors", prog)
    return TranslatedLayer(prog, tensors, out_kind, kinds)
