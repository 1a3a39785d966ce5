"""The op declarations (Note [op declarations], tools/gen_ops.py): every
declared op is bound with its docstring, exported, has Tensor methods and an
op-database entry; malformed declarations are refused by the generator."""
import glob
import os
import sys

import numpy as np
import pytest

import oar
from oar import _ops_gen

from opdb import OP_DB

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gen_ops  # noqa: E402

DECLS = sorted(glob.glob(os.path.join(ROOT, "src", "ops", "*.toml")))
OPS = gen_ops.load(DECLS)
PUBLIC = [(fam, n) for fam in OPS for n, d in OPS[fam].items() if d.get("public", True)]
TOP = [(f, n) for f, n in PUBLIC if not OPS[f][n].get("_module")]  # exported by oar itself


def test_declarations_exist_and_are_generated():
    assert DECLS and len(PUBLIC) > 60
    names = [m for f, n in TOP for a in [n] + OPS[f][n].get("aliases", [])
             for m in ((a, a + "_") if gen_ops.has_inplace(OPS[f][n]) else (a,))]
    assert sorted(_ops_gen.__all__) == sorted(names)
    # Every public function, and its in-place form where it has one, has an example run as a doctest.
    assert set(_ops_gen.__test__) == {n for _, n in TOP} | {n + "_" for f, n in TOP
                                                            if gen_ops.has_inplace(OPS[f][n])}


def _resolve(qualified):
    """oar.<qualified>: "exp" -> oar.exp, "nn.functional.relu" -> oar.nn.functional.relu."""
    obj = oar
    for part in qualified.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("family,name", PUBLIC)
def test_declared_op_is_bound_documented_and_in_the_op_database(family, name):
    d = OPS[family][name]
    fn = _resolve(name)
    doc = d["doc"].strip()
    assert doc in fn.__doc__ and ">>> " in fn.__doc__
    short = d.get("_name", name)
    if d.get("method", True):
        assert doc in getattr(oar.Tensor, short).__doc__
    if gen_ops.has_inplace(d):
        assert callable(getattr(oar.Tensor, name + "_")) and callable(getattr(oar, name + "_"))
        assert ">>> " in getattr(oar, name + "_").__doc__ and ">>> " in getattr(oar.Tensor, name + "_").__doc__
    elif family != "function":  # a bool or real result cannot be written into a float or complex input
        assert not hasattr(oar, name + "_") and not hasattr(oar.Tensor, name + "_")
    assert name in {info.name for info in OP_DB}, f"{name} has no op-database entry (tests/python/opdb.py)"
    if family != "function":  # a declared function calls ops; unary and binary declarations register one
        assert name in oar._C._registered_ops()
    for alias in d.get("aliases", []):
        assert _resolve(name.rsplit(".", 1)[0] + "." + alias if "." in name else alias) is not None


def test_module_functions_are_exported_by_their_module():
    import oar.nn.functional as F
    from oar.nn.functional import _ops_gen as nnf
    assert F.relu is nnf.relu and "relu" in nnf.__all__ and "relu" in nnf.__test__
    assert F.swish(oar.to_tensor([1.0])).item() == F.silu(oar.to_tensor([1.0])).item()
    assert not hasattr(oar, "relu6") and not hasattr(oar.Tensor, "relu6")  # not in the oar namespace
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.gelu\] approximate"):
        F.gelu(oar.ones([2]), approximate="fast")
    assert F.gelu(oar.to_tensor([1.0]), approximate="tanh").item() == F.gelu(oar.to_tensor([1.0]), True).item()


def test_aliases_are_the_same_function():
    x, y = oar.to_tensor([1.0, 5.0]), oar.to_tensor([3.0, 2.0])
    for alias, name in [("mul", "multiply"), ("sub", "subtract"), ("true_divide", "divide"), ("gt", "greater_than"),
                        ("less", "less_than"), ("ne", "not_equal"), ("floor_mod", "remainder")]:
        assert getattr(oar, alias)(x, y).numpy().tolist() == getattr(oar, name)(x, y).numpy().tolist()
        assert getattr(x, alias)(y).numpy().tolist() == getattr(oar, name)(x, y).numpy().tolist()
        assert f"oar.{name}" in getattr(oar, alias).__doc__
    assert oar.negative(x).numpy().tolist() == [-1.0, -5.0]
    assert oar.bitwise_invert(oar.to_tensor([0, 5])).numpy().tolist() == [-1, -6]


def test_in_place_forms_write_into_their_input():
    x = oar.to_tensor([1.0, 4.0])
    assert oar.sqrt_(x) is x and x.numpy().tolist() == [1.0, 2.0]
    assert oar.add_(x, 1.0) is x and x.numpy().tolist() == [2.0, 3.0]
    assert oar.multiply_(x, oar.to_tensor([2.0, 0.5])) is x and x.numpy().tolist() == [4.0, 1.5]
    with pytest.raises(TypeError, match=r"^\[oar.sqrt_\]"):
        oar.sqrt_(oar.to_tensor([4]))  # an int tensor cannot hold the float result


def test_amp_float32_ops_run_in_float32():
    x = oar.to_tensor([0.5, 1.0])
    with oar.amp.auto_cast(dtype="bfloat16"):
        assert oar.logaddexp(x.astype("bfloat16"), x.astype("bfloat16")).dtype == oar.float32
        assert oar.exp(x.astype("bfloat16")).dtype == oar.float32
        assert oar.sin(x).dtype == oar.float32  # follows its input


def _decl(tmp_path, text):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    return [str(p)]


GOOD = '''
[binary.f]
promote = "Float"
dtypes = "float"
scalar = "a + b"
doc = "A doc."
example = """
>>> oar.f(oar.ones([1]), 1).tolist()
[2.0]
"""
'''


@pytest.mark.parametrize("edit,match", [
    (lambda s: s.replace('example = """\n>>> oar.f(oar.ones([1]), 1).tolist()\n[2.0]\n"""', ""),
     "needs a runnable example"),
    (lambda s: s.replace(">>> oar.f(oar.ones([1]), 1).tolist()", ">>> g = oar.f\n>>> g(oar.ones([1]), 1).tolist()"),
     "give an inplace_example"),
    (lambda s: s.replace('doc = "A doc."', ""), "needs a doc"),
    (lambda s: s.replace('dtypes = "float"', 'dtypes = "floaty"'), "dtypes must be one of"),
    (lambda s: s.replace('promote = "Float"', 'promote = "Up"'), "promote must be one of"),
    (lambda s: s + 'grad = ["G"]\n', "grad must be two expressions"),
    (lambda s: s + 'colour = "red"\n', "unknown fields"),
    (lambda s: s.replace("[binary.f]", "[ternary.f]"), "unknown family"),
    (lambda s: s + 'aliases = ["f"]\n', "declared twice"),
    (lambda s: s + 'aliases = "g"\n', "aliases must be a list"),
    (lambda s: s + s.replace("[binary.f]", "[unary.f]\nkind = \"Same\""), "declared once"),
])
def test_the_generator_refuses_malformed_declarations(tmp_path, edit, match):
    assert gen_ops.load(_decl(tmp_path, GOOD))["binary"]["f"]["scalar"] == "a + b"
    with pytest.raises(gen_ops.DeclError, match=match):
        gen_ops.load(_decl(tmp_path, edit(GOOD)))


def test_the_generator_rewrites_only_changed_outputs(tmp_path):
    out, py = tmp_path / "gen", tmp_path / "ops.py"
    gen_ops.main(["--out", str(out), "--python", str(py)] + _decl(tmp_path, GOOD))
    inc = out / "kernels" / "binary.inc"
    assert "OAR_BINARY_KERNEL(f, visit_float, OAR_FLOAT_DTYPES, T, scalar::op_f::apply(a, b))" in inc.read_text()
    assert "return a + b;" in (out / "kernels" / "scalar_fns.inc").read_text()
    before = inc.stat().st_mtime_ns
    os.utime(inc, ns=(before - 10**9, before - 10**9))
    gen_ops.main(["--out", str(out), "--python", str(py)] + _decl(tmp_path, GOOD))
    assert inc.stat().st_mtime_ns == before - 10**9  # unchanged content: not rewritten


FUNCTION = '''
[function.g]
args = "x: Tensor, axis: Axes = None, keepdim: bool = False, name = None"
call = "ops::sum(x, axis, keepdim)"
doc = "A doc."
example = """
>>> oar.g(oar.ones([2])).item()
2.0
"""
'''


@pytest.mark.parametrize("edit,match", [
    (lambda s: s.replace('call = "ops::sum(x, axis, keepdim)"', ""), "needs a call"),
    (lambda s: s.replace("axis: Axes", "axis: Axles"), "type must be one of"),
    (lambda s: s.replace("keepdim: bool = False", "keepdim: bool"), "a required argument follows a default"),
    (lambda s: s.replace("name = None", "name"), "without a type must default to None"),
    (lambda s: s.replace("x: Tensor", "x: int"), "first argument must be a Tensor"),
    (lambda s: s.replace("keepdim: bool", "axis: bool"), "must be a new identifier"),
    (lambda s: s.replace("keepdim: bool = False", "keepdim: bool = [1, 2]"), "unsupported default"),
    (lambda s: s.replace("keepdim: bool = False", "keepdim: float = inf"), "must be finite"),
    (lambda s: s.replace("keepdim: bool = False", "keepdim: bool = None"), "cannot default to None"),
    (lambda s: s.replace("keepdim: bool = False", "keepdim: int = None"), "cannot default to None"),
    (lambda s: s.replace("keepdim: bool", "api: bool"), "must be a new identifier"),
    (lambda s: s.replace("keepdim: bool", "class: bool"), "must be a new identifier"),
    (lambda s: s.replace("keepdim: bool", "axis_: bool"), "must be a new identifier"),
    (lambda s: s.replace('call =', 'module = "no.such"\ncall ='), "must be a package"),
    (lambda s: s.replace('call =', 'module = false\ncall ='), "dotted module path"),
    (lambda s: s.replace('call =', 'method_aliases = [1]\ncall ='), "method_aliases must be a list of names"),
])
def test_function_declarations_are_checked(tmp_path, edit, match):
    fn = gen_ops.load(_decl(tmp_path, FUNCTION))["function"]["g"]
    assert [a[:2] for a in fn["_args"]] == [("x", "Tensor"), ("axis", "Axes"), ("keepdim", "bool"), ("name", None)]
    with pytest.raises(gen_ops.DeclError, match=match):
        gen_ops.load(_decl(tmp_path, edit(FUNCTION)))


def test_function_bindings_normalise_in_cpp(tmp_path):
    ints = gen_ops.functions(gen_ops.load(_decl(tmp_path, FUNCTION.replace("keepdim: bool = False", "k: int = 2")))
                             ["function"], "bad")
    assert 'const auto k = arg_axis(k_, api, "k");' in ints and 'nb::arg("k").none() = int64_t(2)' in ints
    out = gen_ops.functions(gen_ops.load(_decl(tmp_path, FUNCTION))["function"], "bad")
    assert 'const auto axis = arg_axes(axis_, api, "axis");' in out
    assert 'm.def("g", f, nb::arg("x"), nb::arg("axis").none() = nb::none()' in out
    assert 'cls.def("g", [f](TensorImpl* self, nb::handle axis_, bool keepdim, nb::handle)' in out


def test_axis_forms_are_normalised_once():
    x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    for axis in (1, -1, [1], (1,), oar.to_tensor([1]), oar.to_tensor(1), np.int64(1)):
        assert oar.sum(x, axis=axis).numpy().tolist() == [3.0, 7.0]
        assert x.max(axis).numpy().tolist() == [2.0, 4.0]
    for bad, exc in (("a", TypeError), (1.5, TypeError), ([0, "a"], TypeError), (True, TypeError),
                     (oar.to_tensor([1.0]), TypeError)):
        with pytest.raises(exc, match=r"^\[oar.sum\] axis"):
            oar.sum(x, axis=bad)
    assert oar.reshape(oar.arange(6), oar.to_tensor([2, 3])).shape == [2, 3]
    assert oar.arange(6).reshape(2, 3).shape == [2, 3]
    with pytest.raises(TypeError, match=r"^\[oar.reshape\] shape"):
        oar.reshape(oar.arange(6), "23")


def test_skeletons_start_an_op_database_entry():
    exp = gen_ops.skeleton(OPS, "exp")
    assert exp.startswith('_unary("exp", np.exp, INEXACT, grad=True')
    fn = gen_ops.skeleton(OPS, "sum")
    compile(fn, "<skeleton>", "exec")  # valid Python; its TODO names fail until filled in
    assert 'register(OpInfo(\n    "sum", oar.sum,' in fn and "TODO_numpy_reference" in fn
    with pytest.raises(gen_ops.DeclError, match="no declaration named"):
        gen_ops.skeleton(OPS, "no_such_op")


def test_every_declaration_file_with_functions_has_its_bind_file():
    for path in DECLS:
        stem = os.path.splitext(os.path.basename(path))[0]
        if any(d["_file"] == stem for d in OPS["function"].values()):
            bind = os.path.join(ROOT, "python", "bind", f"{stem}.cpp")
            assert os.path.isfile(bind), f"{path} declares functions but python/bind/{stem}.cpp does not exist"
            with open(bind) as f:
                text = f.read()
            assert f'#include "gen/bind/functions_{stem}.inc"' in text and f"bind_{stem}_functions(" in text


def test_generator_lists_what_it_writes(tmp_path):
    out = gen_ops.outputs(OPS, "gen", "python/oar/_ops_gen.py", DECLS)
    paths = [p for p, _ in out]
    assert "python/oar/nn/functional/_ops_gen.py".replace("/", os.sep) in [os.path.normpath(p) for p in paths]
    assert all(os.path.join("gen", "bind", f"functions_{os.path.splitext(os.path.basename(d))[0]}.inc") in paths
               for d in DECLS)


def test_python_objects_are_read_safely():
    class Grows:  # changes the list while it is read
        def __float__(self):
            self.lst.extend([0.0] * 1000)
            return 1.0
    g = Grows()
    v = [g, 2.0, 3.0, 4.0]
    g.lst = v
    x = oar.ones([3, 4])
    x[0] = v  # reads a snapshot of the list
    assert x.numpy()[0].tolist() == [1.0, 2.0, 3.0, 4.0]
    # a NumPy index is copied: changing it later does not change the gradient
    x = oar.ones([3, 2])
    x.stop_gradient = False
    idx = np.array([0, 1])
    y = x[idx]
    idx[:] = 2
    y.sum().backward()
    assert x.grad.numpy().tolist() == [[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]
    with pytest.raises(IndexError, match=r"^\[Tensor.__getitem__\] uint64 values beyond int64"):
        x[np.array([2**64 - 1], dtype=np.uint64)]
    with pytest.raises(TypeError, match=r"^\[oar.sum\] axis must be an int, got ndarray"):
        oar.sum(x, axis=np.array([0, 1]))
    for bad in (float("nan"), float("inf"), 1e30, 2.5):
        with pytest.raises(TypeError, match=r"^\[oar.linspace\] num must be an int"):
            oar.linspace(0, 1, bad)


def test_axis_arguments_refuse_bools_and_take_one_element_tensors():
    import oar.nn.functional as F
    with pytest.raises(TypeError, match=r"^\[oar.nn.functional.softmax\] axis must be an int, got bool"):
        F.softmax(oar.ones([2, 3]), axis=True)
    with pytest.raises(TypeError, match=r"^\[oar.flatten\] start_axis must be an int"):
        oar.flatten(oar.ones([2, 3]), True)
    assert oar.flatten(oar.ones([2, 3, 4]), oar.to_tensor(1)).shape == [2, 12]
    assert [t.shape for t in oar.split(oar.ones([2, 6]), oar.to_tensor(3), axis=1)] == [[2, 2]] * 3


def test_non_native_byte_order_arrays_are_read():
    x = oar.arange(6).reshape([3, 2])
    assert x[np.array([2, 0], ">i8")].numpy().tolist() == [[4, 5], [0, 1]]
    assert oar.gather(x, np.array([1], ">i4")).numpy().tolist() == [[2, 3]]
    y = oar.zeros([3])
    y[np.array([0, 2], ">i8")] = np.array([5.0, 6.0], ">f8")
    assert y.numpy().tolist() == [5.0, 0.0, 6.0]


def test_errors_of_module_functions_name_their_module():
    for fn, api in ((oar.linalg.cholesky, "oar.linalg.cholesky"), (oar.nn.functional.relu, "oar.nn.functional.relu"),
                    (oar.sum, "oar.sum")):
        with pytest.raises(TypeError, match=rf"^\[{api}\]"):
            fn("a")
