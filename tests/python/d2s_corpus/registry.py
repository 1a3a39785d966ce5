"""The corpus registry: one entry per dynamic program.

A program is a callable (a function, or a Layer built under a fixed seed), the
input sets it runs on, tags, and whether it SHOULD convert whole with
``full_graph=True``. Input sets hold NumPy arrays, Python values and nested
lists/tuples/dicts of them; the runner turns every ndarray into a fresh oar
tensor for each run, so no run sees another's in-place writes.

Programs whose state lives outside a Layer's parameters (a model and its
optimizer in a train step) give a ``factory`` instead of a callable: the runner
calls it once per mode, under the same seed, so every mode starts from
identical weights and optimizer state.
"""
import dataclasses

import numpy as np

import oar

SEED = 2024

# Tags (a program has one theme tag and any number of the others).
THEMES = ("zoo", "train_step", "control_flow", "decoding", "adaptive", "detection", "structure", "state", "edge")


@dataclasses.dataclass
class Program:
    name: str
    fn: object  # a function or Layer; None when factory is given
    inputs: list  # 2-4 input sets; each a tuple of positional args, or (args_tuple, kwargs_dict) via kw()
    tags: tuple
    expect_full_graph: bool = True
    reason: str = ""  # why expect_full_graph is False
    factory: object = None  # zero-argument builder of a fresh callable (state outside parameters)
    input_spec: object = None  # passed to to_static

    def fresh(self):
        """A callable with the program's initial state, independent of earlier runs."""
        import copy

        if self.factory is not None:
            oar.seed(SEED)
            return self.factory()
        if isinstance(self.fn, oar.nn.Layer):
            return copy.deepcopy(self.fn, _shared_functions(self.fn))
        return self.fn


def _shared_functions(layer):
    """A deepcopy memo that shares the bound C++ functions a layer keeps as attributes.

    Some layers keep their activation as a bound C++ function (SimpleRNN's cell,
    Transformer layers), which copy.deepcopy cannot copy; functions hold no
    state, so the copy may share them.
    """
    memo = {}
    for sub in layer.sublayers(include_self=True):
        for v in vars(sub).values():
            if callable(v) and not isinstance(v, (oar.nn.Layer, oar.Tensor)) and type(v).__module__ == "nanobind":
                memo[id(v)] = v
    return memo


PROGRAMS = []
_NAMES = set()


class KwInputs:
    """An input set that passes keyword arguments as well."""

    def __init__(self, args, kwargs):
        self.args, self.kwargs = tuple(args), dict(kwargs)


def kw(*args, **kwargs):
    return KwInputs(args, kwargs)


def add(name, fn=None, inputs=(), tags=(), expect_full_graph=True, reason="", factory=None, input_spec=None):
    """Registers a program; Layers are built by the caller under seeded(); returns fn for decorator use."""
    if name in _NAMES:
        raise ValueError(f"duplicate corpus program {name!r}")
    if (fn is None) == (factory is None):
        raise ValueError(f"{name}: give exactly one of fn and factory")
    if not 2 <= len(inputs) <= 4:
        raise ValueError(f"{name}: needs 2-4 input sets, got {len(inputs)}")
    if not any(t in THEMES for t in tags):
        raise ValueError(f"{name}: needs a theme tag among {THEMES}, got {tags}")
    if not expect_full_graph and not reason:
        raise ValueError(f"{name}: expect_full_graph=False needs a reason")
    inputs = [s if isinstance(s, KwInputs) else KwInputs(s if isinstance(s, tuple) else (s,), {}) for s in inputs]
    _NAMES.add(name)
    PROGRAMS.append(Program(name, fn, inputs, tuple(tags), expect_full_graph, reason, factory, input_spec))
    return fn


def program(name, inputs, tags, **kwargs):
    """Decorator form of add() for plain functions."""

    def deco(fn):
        return add(name, fn, inputs, tags, **kwargs)

    return deco


def seeded(build):
    """Builds a Layer (or anything random) under the corpus seed, so its weights are fixed."""
    oar.seed(SEED)
    return build()


_rng = np.random.default_rng(SEED)


def randn(*shape, scale=1.0, dtype="float32"):
    """Seeded NumPy normal data for input sets (drawn at import, so fixed per corpus version)."""
    return (_rng.standard_normal(shape) * scale).astype(dtype)


def rand(*shape, lo=0.0, hi=1.0, dtype="float32"):
    return _rng.uniform(lo, hi, shape).astype(dtype)


def ints(*shape, lo=0, hi=10, dtype="int64"):
    return _rng.integers(lo, hi, shape).astype(dtype)


def arr(value, dtype="float32"):
    return np.asarray(value, dtype=dtype)
