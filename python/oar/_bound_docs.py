"""The examples in the docstrings of what oar binds in C++ (functions,
Tensor, dtype), collected as doctests: doctest finds the examples of Python
functions by itself but does not look inside an extension module.

The generated elementwise ops collect theirs in _ops_gen.__test__."""
import oar
from oar import _C


def _bound_examples():
    tests = {}
    for modname, mod in (("oar", oar), ("oar.nn.functional", oar.nn.functional), ("oar.linalg", oar.linalg)):
        for name in dir(mod):
            obj = getattr(mod, name)
            doc = getattr(obj, "__doc__", None) or ""
            if name.startswith("_") or ">>>" not in doc or getattr(obj, "__module__", None) != "oar._C":
                continue
            if name in oar._ops_gen.__all__:
                continue  # a declared op or alias: _ops_gen.__test__ runs the example
            tests.setdefault(f"{modname}.{name}", doc)
    for cls in (_C.Tensor, _C.dtype):
        tests[f"oar.{cls.__name__}"] = cls.__doc__
    return tests


__test__ = _bound_examples()
