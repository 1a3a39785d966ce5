"""Every public function and class of oar's Paddle-facing modules has a
runnable example in its docstring (`>>>` lines); the doctest run over
python/oar (make test) runs them all, so each is checked."""
import importlib
import types

import pytest

import oar

MODULES = ["", "nn", "nn.functional", "nn.initializer", "linalg", "static", "static.nn", "autograd", "device",
           "distributed", "distributed.fleet", "vision.models", "vision.ops", "vision.transforms", "text", "utils",
           "amp", "inference", "profiler", "io", "optimizer", "optimizer.lr", "metric", "jit", "hapi",
           "distribution", "func", "incubate.autograd", "incubate.nn.functional", "sparse", "sparse.nn", "sparse.nn.functional", "fft",
           "signal", "audio.features", "audio.functional"]


def _public(modname):
    mod = importlib.import_module("oar" + ("." + modname if modname else ""))
    names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
    for n in sorted(set(names)):
        obj = getattr(mod, n, None)
        if obj is None or isinstance(obj, (types.ModuleType, oar.dtype)) or not callable(obj):
            continue
        yield n, obj


@pytest.mark.parametrize("modname", MODULES)
def test_every_public_callable_has_an_example(modname):
    missing = [n for n, obj in _public(modname) if ">>>" not in (getattr(obj, "__doc__", None) or "")]
    assert not missing, f"oar{'.' + modname if modname else ''}: no runnable example in the docstring of {missing}"
