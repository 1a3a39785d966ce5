"""Control flow (oar.static.nn.cond / while_loop / switch_case), eager and
captured in programs, and state updates (in-place writes to parameters and
buffers) captured by the tracer."""
import copy
import json
import warnings

import numpy as np
import pytest

import oar
from oar import _C, _ir
from oar.static import nn
from gradcheck import numeric_grad

RNG = np.random.RandomState(7)


def t(a, dtype=None):
    # Python numbers and lists follow Paddle's defaults (float32, int64); arrays keep their dtype.
    return oar.to_tensor(a if isinstance(a, (list, int, float, bool)) else np.asarray(a), dtype=dtype)



def program_of(prog):
    """Rebuilds an _ir.Program around an IrProgram loaded from JSON, with the bindings of `prog`."""
    loaded = _C._ir_from_json(_C._ir_to_json(prog._prog), "prog.json")
    return _ir.Program(loaded, [b for _, b in prog.bound_parameters()], None)


# ---- cond ---------------------------------------------------------------------

def cond_ref(x):
    return x * 2 if x.sum() > 0 else x - 1


def cond_fn(x):
    return nn.cond(x.sum() > 0, lambda: x * 2, lambda: x - 1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_cond_eager_and_captured_both_branches(dtype):
    pos, neg = np.array([1, 2, 3]).astype(dtype), np.array([-4, 1, 0]).astype(dtype)
    for x in (pos, neg):
        np.testing.assert_allclose(cond_fn(t(x)).numpy(), cond_ref(x))
    prog, y = _ir.trace(cond_fn, [t(pos)])
    np.testing.assert_allclose(y.numpy(), cond_ref(pos))
    prog.verify()
    for x in (pos, neg):
        out = prog.run(t(x))
        assert str(out.dtype).endswith(dtype)
        np.testing.assert_allclose(out.numpy(), cond_ref(x))


def test_cond_nested_structures_none_and_python_pred():
    x = t([1.0, -2.0])

    def f(x):
        return nn.cond(x[0] > 0, lambda: {"a": x + 1.0, "b": (x * 2.0, 5)}, lambda: {"a": x - 1.0, "b": (-x, 5)})

    out = f(x)
    assert set(out) == {"a", "b"} and out["b"][1] == 5

    def flat(x):
        out = f(x)
        assert set(out) == {"a", "b"} and out["b"][1] == 5
        return [out["a"], out["b"][0]]

    prog, _ = _ir.trace(flat, [x])
    got = prog.run(t([-1.0, 3.0]))
    np.testing.assert_allclose(got[0].numpy(), [-2.0, 2.0])
    np.testing.assert_allclose(got[1].numpy(), [1.0, -3.0])
    # None branches return None; a Python bool picks the branch directly.
    assert nn.cond(x[0] > 0) is None
    assert nn.cond(True, lambda: 1, lambda: 2) == 1
    prog, y = _ir.trace(lambda x: nn.cond(False, lambda: x, lambda: x * 3.0), [x])
    assert "cond" not in str(prog)
    np.testing.assert_allclose(prog.run(t([1.0, 1.0])).numpy(), [3.0, 3.0])


def test_cond_branch_shapes_differ_make_a_dynamic_dim():
    c = t([7.0, 8.0])
    prog, y = _ir.trace(lambda x: nn.cond(x.sum() > 0, lambda: x, lambda: c), [t([1.0, 2.0, 3.0])])
    assert "float32[-1] = cond(" in str(prog)
    np.testing.assert_allclose(prog.run(t([-1.0, 0.0, 0.0])).numpy(), [7.0, 8.0])
    np.testing.assert_allclose(prog.run(t([1.0, 0.0, 0.0])).numpy(), [1.0, 0.0, 0.0])


def test_cond_zero_size_noncontiguous_and_zero_d():
    prog, _ = _ir.trace(lambda x: nn.cond(x.sum() >= 0, lambda: x * 2.0, lambda: x), [oar.zeros([0, 3])])
    assert prog.run(oar.zeros([0, 3])).shape == [0, 3]
    a = RNG.randn(3, 2).astype("float32")
    prog, _ = _ir.trace(cond_fn, [t(a).T])
    xt = t(-np.abs(a)).T  # a transposed (non-contiguous) input
    np.testing.assert_allclose(prog.run(xt).numpy(), cond_ref(-np.abs(a).T))
    prog, _ = _ir.trace(lambda s: nn.cond(s > 1.0, lambda: s * s, lambda: -s), [t(3.0)])
    assert prog.run(t(4.0)).item() == 16.0 and prog.run(t(0.5)).item() == -0.5


def test_cond_errors():
    x = t([1.0, 2.0])
    with pytest.raises(TypeError, match=r"\[oar.static.nn.cond\] pred must have dtype bool"):
        nn.cond(x.sum(), lambda: x, lambda: x)
    with pytest.raises(ValueError, match=r"\[oar.static.nn.cond\] pred must hold exactly one element"):
        nn.cond(x > 0, lambda: x, lambda: x)
    with pytest.raises(TypeError, match=r"\[oar.static.nn.cond\] true_fn must be callable"):
        nn.cond(x.sum() > 0, 3, None)
    with pytest.raises(ValueError, match=r"\[oar.static.nn.cond\] true_fn and false_fn must return the same nested"):
        _ir.trace(lambda x: nn.cond(x.sum() > 0, lambda: (x, x), lambda: x), [x])
    with pytest.raises(ValueError, match=r"output 0 is float32\[2\] in true_fn but float64\[2\] in false_fn"):
        _ir.trace(lambda x: nn.cond(x.sum() > 0, lambda: x, lambda: x.astype("float64")), [x])
    inner = []

    def leak(x):
        nn.cond(x.sum() > 0, lambda: inner.append(x * 2.0) or x, lambda: x)
        return inner[0] + 1.0

    with pytest.raises(NotImplementedError, match=r"inside a control-flow region"):
        _ir.trace(leak, [x])
    assert not _C._ir_is_tracing()


def test_gradient_through_captured_cond():
    def ref(x):
        return (np.sin(x) * x).sum() if x.sum() > 0 else np.exp(x).sum()

    prog, _ = _ir.trace(lambda x: nn.cond(x.sum() > 0, lambda: oar.sin(x) * x, lambda: oar.exp(x)).sum(),
                        [t([0.5, 1.0], "float64")])
    for a in (np.array([0.3, 1.2]), np.array([-0.7, 0.2])):
        x = oar.to_tensor(a, stop_gradient=False)
        prog.run(x).backward()
        np.testing.assert_allclose(x.grad.numpy(), numeric_grad(ref, a), rtol=1e-6, atol=1e-8)


def test_backward_through_a_captured_cond_inside_the_trace_is_refused():
    def f(x):
        y = nn.cond(x.sum() > 0, lambda: x * x, lambda: x)
        return oar.grad(y.sum(), x)[0]

    with pytest.raises(NotImplementedError, match=r"cannot be taken while tracing"):
        _ir.trace(f, [oar.to_tensor([1.0, 2.0], stop_gradient=False)])


# ---- while_loop -----------------------------------------------------------------

def loop_fn(x, n):
    def body(i, acc):
        return [i + 1, acc * 0.5 + x]

    return nn.while_loop(lambda i, acc: i < n, body, [oar.zeros_like(n), x])[1]


def loop_ref(x, n):
    acc = x.copy()
    for _ in range(n):
        acc = acc * 0.5 + x
    return acc


def test_while_loop_eager_and_captured_several_iteration_counts():
    x = RNG.randn(3).astype("float32")
    for n in (0, 1, 4):
        np.testing.assert_allclose(loop_fn(t(x), t(n)).numpy(), loop_ref(x, n), rtol=1e-6)
    prog, y = _ir.trace(loop_fn, [t(x), t(2)])
    np.testing.assert_allclose(y.numpy(), loop_ref(x, 2), rtol=1e-6)
    prog.verify()
    for n in (0, 1, 3, 9):
        np.testing.assert_allclose(prog.run(t(x), t(n)).numpy(), loop_ref(x, n), rtol=1e-6)
    s = str(prog)
    assert "while_loop(" in s and "region 1 (%" in s and "yield %" in s


def test_while_loop_single_var_and_growing_shape():
    i, = nn.while_loop(lambda i: i < 5, lambda i: i + 2, [t(0)])
    assert i.item() == 6
    prog, y = _ir.trace(lambda a: nn.while_loop(lambda a: a.sum() < 50.0,
                                                lambda a: oar.concat([a, a * 2.0]), [a])[0],
                        [t([1.0, 2.0])], dynamic_dims=[[0]])
    assert "float32[-1] = while_loop(" in str(prog)
    want = np.array([1.0, 2.0])
    while want.sum() < 50:
        want = np.concatenate([want, want * 2])
    np.testing.assert_allclose(y.numpy(), want)
    np.testing.assert_allclose(prog.run(t([30.0])).numpy(), [30.0, 60.0])
    np.testing.assert_allclose(prog.run(t([60.0])).numpy(), [60.0])


def test_nested_cond_inside_while_loop():
    def f(x, n):
        def body(i, acc):
            acc2 = nn.cond(acc.sum() > 10.0, lambda: acc * 0.5, lambda: acc + x)
            return [i + 1, acc2]

        return nn.while_loop(lambda i, acc: i < n, body, [oar.zeros_like(n), x])[1]

    def ref(x, n):
        acc = x.copy()
        for _ in range(n):
            acc = acc * 0.5 if acc.sum() > 10 else acc + x
        return acc

    x = np.array([1.0, 2.0], "float32")
    prog, y = _ir.trace(f, [t(x), t(3)])
    np.testing.assert_allclose(y.numpy(), ref(x, 3))
    for n in (0, 2, 5, 8):
        np.testing.assert_allclose(prog.run(t(x), t(n)).numpy(), ref(x, n))
    s = str(prog)
    assert s.index("while_loop(") < s.index("= cond(")


def test_gradient_through_captured_while_loop():
    def ref_loss(v, n):
        x, a = v[:2], v[2:]
        acc = x.copy()
        for _ in range(n):
            acc = np.sin(acc) * a
        return acc.sum()

    prog, _ = _ir.trace(lambda x, a, n: nn.while_loop(lambda i, acc: i < n,
                                                      lambda i, acc: [i + 1, oar.sin(acc) * a],
                                                      [oar.zeros_like(n), x])[1].sum(),
                        [t([0.5, 1.0], "float64"), t([1.5, 0.7], "float64"), t(2)])
    for n in (1, 3):
        xv, av = np.array([0.3, -0.8]), np.array([1.1, 0.9])
        x, a = oar.to_tensor(xv, stop_gradient=False), oar.to_tensor(av, stop_gradient=False)
        prog.run(x, a, t(n)).backward()
        g = numeric_grad(lambda v: ref_loss(v, n), np.concatenate([xv, av]))
        np.testing.assert_allclose(x.grad.numpy(), g[:2], rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(a.grad.numpy(), g[2:], rtol=1e-6, atol=1e-8)


def test_while_loop_errors_and_guard():
    with pytest.raises(TypeError, match=r"\[oar.static.nn.while_loop\] loop_vars must be a list or tuple"):
        nn.while_loop(lambda i: i < 3, lambda i: i + 1, t(0))
    with pytest.raises(ValueError, match=r"\[oar.static.nn.while_loop\] loop_vars must not be empty"):
        nn.while_loop(lambda: True, lambda: [], [])
    with pytest.raises(ValueError, match=r"body must return 1 loop value"):
        nn.while_loop(lambda i: i < 3, lambda i: [i, i], [t(0)])
    with pytest.raises(ValueError, match=r"body must keep the dtype and rank"):
        _ir.trace(lambda x: nn.while_loop(lambda x: x.sum() < 3.0, lambda x: x.astype("float64"), [x])[0],
                  [t([1.0])])
    with pytest.raises(TypeError, match=r"loop_vars of a captured loop must be Tensors"):
        _ir.trace(lambda x: nn.while_loop(lambda i, x: x.sum() < 3.0, lambda i, x: [i + 1, x + 1.0], [0, x])[1],
                  [t([1.0])])
    prog, _ = _ir.trace(loop_fn, [t([1.0]), t(2)])
    old = nn.set_max_loop_iterations(4)
    try:
        prog.run(t([1.0]), t(4))
        with pytest.raises(RuntimeError, match=r"\[oar.ir.run\] while_loop ran 4 iterations"):
            prog.run(t([1.0]), t(5))
    finally:
        nn.set_max_loop_iterations(old)
    with pytest.raises(ValueError, match=r"must be positive"):
        nn.set_max_loop_iterations(0)


# ---- switch_case ------------------------------------------------------------------

@pytest.mark.parametrize("form", ["dict", "pairs", "list"])
def test_switch_case_eager_and_captured(form):
    x = t([1.0, 2.0])
    fns = [lambda: x * 10.0, lambda: x * 20.0, lambda: x * 30.0]
    if form == "dict":
        branch_fns = {0: fns[0], 1: fns[1], 2: fns[2]}
    elif form == "pairs":
        branch_fns = [(0, fns[0]), (1, fns[1]), (2, fns[2])]
    else:
        branch_fns = fns
    ref = {0: 10.0, 1: 20.0, 2: 30.0}
    for k in (0, 1, 2, 5):  # 5: no default, so the largest key runs
        np.testing.assert_allclose(nn.switch_case(t(k), branch_fns).numpy(), np.array([1.0, 2.0]) * ref.get(k, 30.0))
    prog, _ = _ir.trace(lambda i: nn.switch_case(i, branch_fns, default=lambda: -x), [t(1, "int32")])
    prog.verify()
    for k in (0, 1, 2, 5, -3):
        np.testing.assert_allclose(prog.run(t(k, "int32")).numpy(), np.array([1.0, 2.0]) * ref.get(k, -1.0))


def test_switch_case_errors():
    f = lambda: t([1.0])  # noqa: E731
    with pytest.raises(TypeError, match=r"\[oar.static.nn.switch_case\] branch_index must have dtype int32"):
        nn.switch_case(t(1.0), [f])
    with pytest.raises(ValueError, match=r"the key 1 appears more than once"):
        nn.switch_case(t(1), [(1, f), (1, f)])
    with pytest.raises(TypeError, match=r"branch_fns must be a dict, list or tuple"):
        nn.switch_case(t(1), f)
    with pytest.raises(ValueError, match=r"every branch must return the same nested structure"):
        _ir.trace(lambda i: nn.switch_case(i, [lambda: t([1.0]), lambda: (t([1.0]), t([2.0]))]), [t(0)])


# ---- the model format -------------------------------------------------------------

def test_json_round_trip_with_regions():
    prog, _ = _ir.trace(loop_fn, [t([1.0, 2.0]), t(2)])
    doc = json.loads(_C._ir_to_json(prog._prog))
    assert doc["version"] == 2 and _C._ir_format_version == 2
    loaded = program_of(prog)
    assert str(loaded) == str(prog)
    for n in (0, 3):
        np.testing.assert_allclose(loaded.run(t([1.0, 2.0]), t(n)).numpy(), prog.run(t([1.0, 2.0]), t(n)).numpy())


def test_version_one_documents_still_load():
    prog, _ = _ir.trace(lambda x: oar.nn.functional.relu(x * 2.0), [t([1.0, -1.0])])
    doc = json.loads(_C._ir_to_json(prog._prog))
    doc["version"] = 1
    del doc["state_updates"]
    loaded = _C._ir_from_json(json.dumps(doc), "v1.json")
    np.testing.assert_allclose(_ir.Program(loaded, [], None).run(t([3.0, -3.0])).numpy(), [6.0, 0.0])


def _cond_doc():
    prog, _ = _ir.trace(cond_fn, [t([1.0, 2.0])])
    return json.loads(_C._ir_to_json(prog._prog))


def _cond_op(doc):
    return next(o for o in doc["ops"] if o["op"] == "cond")


def _load(doc):
    return _C._ir_from_json(json.dumps(doc), "bad.json")


def test_verifier_errors_through_the_loader():
    doc = _cond_doc()
    _cond_op(doc)["regions"][0]["yields"].append(0)  # wrong yield count
    with pytest.raises(ValueError, match=r"\[oar.jit.load\] bad.json: .*region 0 yields 2 value\(s\) but the op has 1"):
        _load(doc)
    doc = _cond_doc()
    _cond_op(doc)["results"][0]["dtype"] = "float64"  # dtype mismatch
    with pytest.raises(ValueError, match=r"region 0 yields float32\[2\] .* which has type float64\[2\]"):
        _load(doc)
    doc = _cond_doc()
    inner = _cond_op(doc)["regions"][0]["yields"][0]
    doc["outputs"][0]["id"] = inner  # a value of a region used outside it
    with pytest.raises(ValueError, match=r"refers to the id %d, which is not defined before it is used" % inner):
        _load(doc)
    doc = _cond_doc()
    op = _cond_op(doc)
    op["regions"][1]["yields"] = list(op["regions"][0]["yields"])  # ... or by a sibling region
    with pytest.raises(ValueError, match=r"not defined before it is used \(or is defined inside a region"):
        _load(doc)


def test_malformed_region_json_is_rejected():
    cases = [
        (lambda op: op["regions"].append(3), r"must be an object"),
        (lambda op: op["regions"][0].pop("ops"), r"has no \"ops\""),
        (lambda op: op["regions"][0].update(extra=1), r"unknown key \"extra\""),
        (lambda op: op["regions"][0]["arguments"].append({"id": 999, "dtype": "float32"}), r"needs \"dtype\" and"),
        (lambda op: op.update(regions={}), r"\"regions\" must be an array"),
    ]
    for edit, msg in cases:
        doc = _cond_doc()
        edit(_cond_op(doc))
        with pytest.raises(ValueError, match=r"\[oar.jit.load\] bad.json: .*" + msg):
            _load(doc)
    doc = _cond_doc()
    doc["version"] = 1
    with pytest.raises(ValueError, match=r"need format version 2"):
        _load(doc)
    doc = _cond_doc()
    next(o for o in doc["ops"] if o["op"] == "sum")["regions"] = []
    with pytest.raises(ValueError, match=r"takes no regions"):
        _load(doc)


# ---- to_static ------------------------------------------------------------------------

def test_to_static_converts_if_and_while_on_tensors():
    def f(x):
        if x.sum() > 0:
            return x * 2.0
        return x

    def g(x):
        while x.sum() < 10.0:
            x = x * 2.0
        return x

    for fn in (f, g):
        s = oar.jit.to_static(fn, full_graph=True)
        for v in ([1.0, 2.0], [-1.0, 0.5], [30.0, 1.0]):
            np.testing.assert_allclose(s(t(v)).numpy(), fn(t(v)).numpy())
        assert len(s.program_cache) == 1


def test_to_static_value_feeding_python_control_flow_names_the_line_and_the_advice():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        if x.sum().item() > 0:  # the line the error names
            return x * 2.0
        return x

    with pytest.raises(oar.jit.Dy2StaticError) as e:
        f(t([1.0, 2.0]))
    msg = str(e.value)
    assert "test_control_flow.py" in msg and "if x.sum().item() > 0:" in msg
    assert "Tensor.item()" in msg


def test_to_static_captures_cond_and_while_loop():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        y = nn.cond(x.sum() > 0, lambda: x * 2.0, lambda: x - 1.0)
        return nn.while_loop(lambda v: v.abs().sum() < 100.0, lambda v: v * 3.0, [y])[0]

    def ref(x):
        y = x * 2.0 if x.sum() > 0 else x - 1.0
        while np.abs(y).sum() < 100:
            y = y * 3.0
        return y

    for x in ([1.0, 2.0], [-1.0, -5.0], [4.0, 50.0]):
        x = np.array(x, "float32")
        np.testing.assert_allclose(f(t(x)).numpy(), ref(x))
    assert len(f.program_cache) == 1


# ---- state updates -------------------------------------------------------------------

def test_batch_norm_statistics_are_state_updates():
    bn = oar.nn.BatchNorm1D(3, momentum=0.8)
    bn.train()
    x0 = RNG.randn(5, 3).astype("float32")
    named = list(bn.named_parameters()) + list(bn.named_buffers())
    prog, _ = _ir.trace(bn, [t(x0)], parameters=named)
    assert _C._ir_state_updates(prog._prog) == ["_mean", "_variance"]
    assert 'update "_mean" = %' in str(prog)
    # The trace's eager run updated the statistics once; the program run updates them again.
    mean, var = bn._mean.numpy().copy(), bn._variance.numpy().copy()
    np.testing.assert_allclose(mean, 0.2 * x0.mean(0), rtol=1e-5, atol=1e-6)
    x = RNG.randn(5, 3).astype("float32")
    y = prog.run(t(x)).numpy()
    np.testing.assert_allclose(y, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn._mean.numpy(), 0.8 * mean + 0.2 * x.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn._variance.numpy(), 0.8 * var + 0.2 * x.var(0), rtol=1e-5, atol=1e-6)
    # The model format keeps the updates.
    loaded = program_of(prog)
    assert _C._ir_state_updates(loaded._prog) == ["_mean", "_variance"]
    mean = bn._mean.numpy().copy()
    loaded.run(t(x0))
    np.testing.assert_allclose(bn._mean.numpy(), 0.8 * mean + 0.2 * x0.mean(0), rtol=1e-5, atol=1e-6)


def test_to_static_batch_norm_statistics_follow_eager():
    bn = oar.nn.BatchNorm1D(2, momentum=0.5)
    sbn = oar.jit.to_static(copy.deepcopy(bn), full_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            x = t(RNG.randn(4, 2).astype("float32"))
            np.testing.assert_allclose(sbn(x).numpy(), bn(x).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sbn._mean.numpy(), bn._mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sbn._variance.numpy(), bn._variance.numpy(), rtol=1e-5, atol=1e-6)


def test_state_update_inside_a_branch_is_refused():
    buf = oar.zeros([2])

    def f(x):
        def branch():
            buf.copy_(x)
            return x
        return nn.cond(x.sum() > 0, branch, lambda: x)

    with pytest.raises(NotImplementedError, match=r"state updates are captured only outside control flow"):
        _ir.trace(f, [t([1.0, 2.0])])


def test_running_a_program_inside_a_trace_keeps_its_control_flow():
    inner, _ = _ir.trace(cond_fn, [t([1.0, 2.0])])
    loop, _ = _ir.trace(loop_fn, [t([1.0, 2.0]), t(2)])
    outer, _ = _ir.trace(lambda x, n: loop.run(inner.run(x), n) + 1.0, [t([1.0, 2.0]), t(1)])
    s = str(outer)
    assert "= cond(" in s and "while_loop(" in s
    for x in ([1.0, 2.0], [-3.0, 1.0]):
        for n in (0, 3):
            want = loop_ref(cond_ref(np.array(x, "float32")), n) + 1.0
            np.testing.assert_allclose(outer.run(t(x), t(n)).numpy(), want, rtol=1e-6)
