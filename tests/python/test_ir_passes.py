"""Graph passes on traced programs: dead code elimination, common
subexpression elimination and constant folding (Program.optimize).

The optimized program is checked against NumPy, and the printed program
against which ops must be gone or kept.
"""
import re

import numpy as np
import pytest

import oar
from oar import _ir

RNG = np.random.default_rng(5)
C = np.array([1.0, 2.0, -0.5], dtype=np.float32)


def ops_of(prog):
    """Op names in the printed program, in order."""
    return re.findall(r"= ([a-z_0-9.]+)\(", str(prog))


def np_ref(x):
    c = C.astype(x.dtype)
    return 2 * (np.exp(x) * 2.0) + (c * 3.0 + 1.0) * np.sin(c)


def build(dtype="float32"):
    c = oar.to_tensor(C.astype(dtype))

    def f(x):
        a = oar.exp(x) * 2.0
        b = oar.exp(x) * 2.0           # same as a
        dead = oar.tanh(x) + 1.0  # noqa: F841  (read by nothing)
        k = (c * 3.0 + 1.0) * oar.sin(c)  # constants only
        return a + b + k

    x = RNG.standard_normal(3).astype(dtype)
    prog, y = _ir.trace(f, [oar.to_tensor(x)])
    return prog, y, x


def test_optimize_removes_dead_duplicate_and_constant_ops():
    prog, y, x = build()
    before = ops_of(prog)
    assert before.count("exp") == 2 and "tanh" in before and "sin" in before
    changed = prog.optimize()
    assert changed == {"dce": True, "cse": True, "fold": True}
    after = ops_of(prog)
    assert after.count("exp") == 1
    assert "tanh" not in after and "sin" not in after
    # exp, the scalar 2.0, its multiply, a + b, + k
    assert len(after) == 5, str(prog)
    # The folded constant replaced the captured one.
    assert len(prog.parameters) == 1
    (name, k), = prog.bound_parameters()
    np.testing.assert_allclose(k.numpy(), (C * 3.0 + 1.0) * np.sin(C), rtol=1e-6)
    prog.verify()
    np.testing.assert_allclose(prog.run(oar.to_tensor(x)).numpy(), y.numpy(), rtol=1e-6)
    np.testing.assert_allclose(prog.run(oar.to_tensor(x)).numpy(), np_ref(x), rtol=1e-5)
    x2 = RNG.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(prog.run(oar.to_tensor(x2)).numpy(), np_ref(x2), rtol=1e-5)
    # A fixed point: nothing is left to do.
    assert prog.optimize() == {"dce": False, "cse": False, "fold": False}


def test_float64_and_gradients_after_optimize():
    prog, _, x = build("float64")
    prog.optimize()
    xt = oar.to_tensor(x, stop_gradient=False)
    out = prog.run(xt)
    assert out.dtype == oar.float64
    np.testing.assert_allclose(out.numpy(), np_ref(x), rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), 4.0 * np.exp(x), rtol=1e-12)


def test_all_passes_off_do_nothing():
    prog, _, _ = build()
    text = str(prog)
    assert prog.optimize(dce=False, cse=False, fold=False) == {}  # one entry per pass that ran
    assert str(prog) == text


@pytest.mark.parametrize("only", ["dce", "cse", "fold"])
def test_each_pass_alone(only):
    prog, y, x = build()
    before = ops_of(prog)
    changed = prog.optimize(**{p: p == only for p in ("dce", "cse", "fold")})
    assert changed == {only: True}
    after = ops_of(prog)
    # Only the chosen pass's effect shows.
    assert (after.count("exp") == 1) == (only == "cse")
    assert ("tanh" in after) == (only != "dce")
    assert ("sin" in after) == (only != "fold")
    assert len(after) < len(before)
    prog.verify()
    np.testing.assert_allclose(prog.run(oar.to_tensor(x)).numpy(), np_ref(x), rtol=1e-5)


def test_named_parameters_are_not_folded_and_stay_live():
    w = oar.to_tensor(RNG.standard_normal((3, 2)).astype(np.float32))
    prog, _ = _ir.trace(lambda x: oar.matmul(x, w * 2.0), [oar.ones([4, 3])], parameters={"w": w})
    assert prog.optimize()["fold"] is False
    assert "multiply" in ops_of(prog)
    assert prog.parameters == ["w"]
    # The program still reads the weight's current value.
    w.set_value(RNG.standard_normal((3, 2)).astype(np.float32))
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(prog.run(oar.to_tensor(x)).numpy(), x @ (w.numpy() * 2.0), rtol=1e-5)


def test_random_ops_are_kept_and_not_folded():
    probs = oar.to_tensor(np.array([0.0, 1.0, 1.0], dtype=np.float32))

    def f(x):
        unused = oar.bernoulli(probs)  # noqa: F841  advances the generator
        d1 = oar.bernoulli(probs)
        d2 = oar.bernoulli(probs)      # a second draw, not the same value
        return x + d1 + d2

    prog, _ = _ir.trace(f, [oar.zeros([3])])
    prog.optimize()
    assert ops_of(prog).count("bernoulli") == 3
    # Probabilities 0 and 1 make the draws deterministic.
    np.testing.assert_allclose(prog.run(oar.ones([3])).numpy(), [1.0, 3.0, 3.0])


def test_outputs_and_zero_size_and_0d():
    c = oar.to_tensor(np.float32(2.5))

    def f(x):
        return x.sum() + c * c, c * c, x * 1.0

    x = np.zeros((0, 3), dtype=np.float32)
    prog, _ = _ir.trace(f, [oar.to_tensor(x)])
    assert prog.optimize()["fold"] is True
    prog.verify()
    s, cc, same = prog.run(oar.to_tensor(x))
    assert cc.shape == [] and float(cc.numpy()) == 6.25
    assert float(s.numpy()) == 6.25
    assert same.shape == [0, 3]
    # An output that is itself a folded constant is still an output.
    assert prog.outputs == ["out0", "out1", "out2"]


def test_folding_leaves_large_results_as_ops():
    # A 40 GB constant must not be computed at load time (the runtime folds programs it loads).
    import json
    doc = {"format": "oar.program", "version": 2,
           "inputs": [{"name": "x", "id": 0, "dtype": "float32", "shape": [2]}], "parameters": [],
           "ops": [{"op": "full", "operands": [], "results": [{"id": 1, "dtype": "float32", "shape": [100000, 100000]}],
                    "attrs": [{"ints": [100000, 100000]}, {"float": 1.0}, {"dtype": "float32"}]},
                   {"op": "exp", "operands": [1], "results": [{"id": 2, "dtype": "float32", "shape": [100000, 100000]}],
                    "attrs": []}],
           "outputs": [{"name": "y", "id": 2}], "notes": []}
    prog = _ir.Program(oar._C._ir_from_json(json.dumps(doc), "big.json"), [], "tensor")
    assert prog.optimize(dce=False, cse=False) == {"fold": False}
    assert "exp(" in str(prog)


def test_folding_keeps_captured_tensors_that_require_grad():
    # A weight read through a closure is an auto-named constant of the
    # captured program; folding ops over it would cut its gradient.
    lin = oar.nn.Linear(1, 2)
    f = lambda x: (oar.matmul(oar.full([1, 1], 2.0).expand([3, 1]), lin.weight) * x).sum()
    g = oar.jit.to_static(f, full_graph=True, build_strategy=oar.static.BuildStrategy())
    x = oar.ones([3, 2])
    x.stop_gradient = False
    g(x).backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), [[6.0, 6.0]])
    np.testing.assert_allclose(x.grad.numpy(), np.tile(2.0 * lin.weight.numpy(), (3, 1)), rtol=1e-6)
