"""rms_norm as one op: the fused forward kernel against NumPy for every float dtype, the fused
first-order gradient kernel against finite differences and against the composite rule (the rule a
create_graph backward runs), double backward, mixed precision, strided inputs, empty rows, the
capture and vmap paths, incubate's fused_rms_norm and errors."""
import numpy as np
import pytest

import oar
import oar.nn.functional as F
from gradcheck import numeric_grad

T = oar.to_tensor
TOL = {"float64": (1e-12, 1e-12), "float32": (2e-6, 2e-6), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2)}
# The fused kernel accumulates 16-bit inputs in float32 and rounds once; the gradient of a 16-bit
# input also rounds g and x once each, so its error is a few units of the last place of the result.
GRAD_TOL = {"float64": (1e-10, 1e-10), "float32": (2e-5, 2e-5), "float16": (1e-2, 1e-2), "bfloat16": (8e-2, 8e-2)}
DTYPES = list(TOL)


def _rng(seed):
    return np.random.default_rng(seed)


def np_rms(x, w, nd, eps=1e-5):
    axes = tuple(range(x.ndim - nd, x.ndim))
    y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return y if w is None else y * w


def np_rms_grads(x, w, g, nd, eps=1e-5):
    """Note [rms_norm gradients] in float64."""
    axes = tuple(range(x.ndim - nd, x.ndim))
    r = 1 / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    xhat = x * r
    gw = g if w is None else g * w
    dx = r * (gw - xhat * (gw * xhat).mean(axis=axes, keepdims=True))
    dw = (g * xhat).sum(axis=tuple(range(x.ndim - nd)))
    return dx, dw


def _as(a, dtype):
    """The float64 values a 16-bit tensor made from `a` holds, and that tensor."""
    t = T(a).astype(dtype)
    return t.astype("float64").numpy(), t


SHAPES = [((4, 6), 1), ((3, 4, 5), 1), ((3, 4, 5), 2), ((2, 3, 4, 5), 3), ((7,), 1), ((2, 1500), 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,nd", SHAPES)
@pytest.mark.parametrize("weighted", [True, False])
def test_forward_against_numpy(dtype, shape, nd, weighted):
    xv, x = _as(_rng(1).standard_normal(shape) * 3, dtype)
    wv, w = _as(_rng(2).uniform(0.5, 2.0, shape[len(shape) - nd:]), dtype) if weighted else (None, None)
    y = F.rms_norm(x, list(shape[len(shape) - nd:]), w)
    assert y.dtype == x.dtype and y.shape == list(shape)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(y.astype("float64").numpy(), np_rms(xv, wv, nd), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_strided_input(dtype):
    a = _rng(3).standard_normal((6, 5))
    xv, x = _as(a, dtype)
    wv, w = _as(_rng(4).uniform(0.5, 2.0, 6), dtype)
    xt = x.t()  # [5, 6], a transposed view
    assert not xt.is_contiguous()
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(F.rms_norm(xt, 6, w).astype("float64").numpy(), np_rms(xv.T, wv, 1),
                               rtol=rtol, atol=atol)
    # the gradient kernel reads a strided upstream gradient too
    xt = T(a.T.copy()).astype(dtype)
    xt.stop_gradient = False
    g = T(_rng(5).standard_normal((6, 5))).astype(dtype).t()
    (dx,) = oar.grad([F.rms_norm(xt, 6, w)], [xt], grad_outputs=[g])
    ref, _ = np_rms_grads(xt.astype("float64").numpy(), wv, g.astype("float64").numpy(), 1)
    np.testing.assert_allclose(dx.astype("float64").numpy(), ref, rtol=GRAD_TOL[dtype][0], atol=GRAD_TOL[dtype][1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_rows(dtype):
    x = T(np.zeros((0, 4))).astype(dtype)
    x.stop_gradient = False
    w = T(np.ones(4)).astype(dtype)
    w.stop_gradient = False
    y = F.rms_norm(x, 4, w)
    assert y.shape == [0, 4] and y.dtype == x.dtype
    dx, dw = oar.grad([y], [x, w], grad_outputs=[T(np.zeros((0, 4))).astype(dtype)])
    assert dx.shape == [0, 4]
    assert dw.numpy().astype(np.float64).tolist() == [0.0] * 4
    # zero-size normalised dims: nothing to normalise
    assert F.rms_norm(T(np.zeros((3, 0))).astype(dtype), [0]).shape == [3, 0]


@pytest.mark.parametrize("shape,nd", [((3, 4), 1), ((2, 3, 4), 2), ((2, 2, 3), 1)])
@pytest.mark.parametrize("weighted", [True, False])
def test_gradients_against_finite_differences(shape, nd, weighted):
    x = _rng(6).standard_normal(shape)
    ns = shape[len(shape) - nd:]
    w = _rng(7).uniform(0.5, 2.0, ns) if weighted else None
    g = _rng(8).standard_normal(shape)
    tx = T(x, stop_gradient=False)
    tw = T(w, stop_gradient=False) if weighted else None
    grads = oar.grad([F.rms_norm(tx, list(ns), tw)], [tx] + ([tw] if weighted else []), grad_outputs=[T(g)])
    np.testing.assert_allclose(grads[0].numpy(), numeric_grad(lambda a: (np_rms(a, w, nd) * g).sum(), x),
                               rtol=1e-6, atol=1e-7)
    if weighted:
        np.testing.assert_allclose(grads[1].numpy(), numeric_grad(lambda c: (np_rms(x, c, nd) * g).sum(), w),
                                   rtol=1e-6, atol=1e-7)


def _both_rules(x, w, g, ns, wrt):
    """The gradients from the fused kernel (first-order backward) and from the composite rule
    (create_graph), for the tensors `wrt` selects."""
    out = []
    for create_graph in (False, True):
        tx = x.detach()
        tx.stop_gradient = False
        tw = None if w is None else w.detach()
        if tw is not None:
            tw.stop_gradient = "w" not in wrt
        inputs = ([tx] if "x" in wrt else []) + ([tw] if "w" in wrt else [])
        out.append(oar.grad([F.rms_norm(tx, ns, tw)], inputs, grad_outputs=[g], create_graph=create_graph))
    return out


@pytest.mark.parametrize("create_graph,expected,absent", [(False, "rms_norm_grad", "rsqrt"),
                                                           (True, "rsqrt", "rms_norm_grad")])
def test_backward_runs_fused_kernel_or_composite_rule(create_graph, expected, absent):
    """The comparison below is between two different computations: a first-order backward runs
    the fused gradient op, a create_graph backward the composite rule."""
    x = T(_rng(40).standard_normal((4, 8)), stop_gradient=False)
    w = T(_rng(41).uniform(0.5, 2.0, 8), stop_gradient=False)
    with oar.profiler.Profiler() as prof:
        oar.grad([F.rms_norm(x, 8, w)], [x, w], create_graph=create_graph)
    ran = {s.name for s in prof.op_stats()}
    assert "rms_norm" in ran and expected in ran and absent not in ran, ran


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,nd", [((5, 8), 1), ((2, 3, 4), 2), ((64, 700), 1)])
@pytest.mark.parametrize("wrt", ["xw", "x", "w"])
def test_fused_gradient_matches_composite_rule(dtype, shape, nd, wrt):
    ns = list(shape[len(shape) - nd:])
    xv, x = _as(_rng(9).standard_normal(shape), dtype)
    wv, w = _as(_rng(10).uniform(0.5, 2.0, ns), dtype)
    gv, g = _as(_rng(11).standard_normal(shape), dtype)
    fused, composite = _both_rules(x, w, g, ns, wrt)
    ref = dict(zip("xw", np_rms_grads(xv, wv, gv, nd)))
    rtol, atol = GRAD_TOL[dtype]
    for k, a, b in zip(wrt, fused, composite):
        assert a.dtype == b.dtype == x.dtype and a.shape == b.shape
        # both against float64 (the composite rule rounds at every op for 16-bit inputs)
        scale = 1 + np.abs(ref[k]).max() if k == "w" else 1
        np.testing.assert_allclose(a.astype("float64").numpy(), ref[k], rtol=rtol, atol=atol * scale)
        np.testing.assert_allclose(b.astype("float64").numpy(), ref[k], rtol=4 * rtol, atol=4 * atol * scale)
        if dtype in ("float32", "float64"):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol * scale)


def test_unweighted_gradient_matches_composite_rule():
    x = T(_rng(12).standard_normal((6, 10)))
    g = T(_rng(13).standard_normal((6, 10)))
    (a,), (b,) = _both_rules(x, None, g, [10], "x")
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def test_weight_gradient_is_deterministic_across_threads():
    """dweight adds per-part partials in part order: repeated runs give the same bits, and dx (one
    row at a time) is the same with 1 and 2 threads."""
    x = T(_rng(14).standard_normal((512, 256)).astype(np.float32), stop_gradient=False)
    w = T(_rng(15).uniform(0.5, 2.0, 256).astype(np.float32), stop_gradient=False)
    g = T(_rng(16).standard_normal((512, 256)).astype(np.float32))
    threads = oar.get_num_threads()
    try:
        runs = []
        for n in (1, 2, 2):
            oar.set_num_threads(n)
            runs.append([t.numpy() for t in oar.grad([F.rms_norm(x, 256, w)], [x, w], grad_outputs=[g])])
    finally:
        oar.set_num_threads(threads)
    np.testing.assert_array_equal(runs[1][1], runs[2][1])
    np.testing.assert_allclose(runs[0][1], runs[1][1], rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(runs[0][0], runs[1][0])


@pytest.mark.parametrize("weighted", [True, False])
def test_double_backward_against_finite_differences(weighted):
    x = _rng(17).standard_normal((3, 2, 2))
    w = _rng(18).uniform(0.5, 2.0, (2, 2)) if weighted else None
    v, u = _rng(19).standard_normal(x.shape), _rng(20).standard_normal(x.shape)
    tx = T(x, stop_gradient=False)
    (gx,) = oar.grad([(F.rms_norm(tx, [2, 2], None if w is None else T(w)) * T(v)).sum()], [tx], create_graph=True)
    np.testing.assert_allclose(gx.numpy(), numeric_grad(lambda a: (np_rms(a, w, 2) * v).sum(), x),
                               rtol=1e-6, atol=1e-7)
    (ggx,) = oar.grad([(gx * T(u)).sum()], [tx])
    first = lambda a: (numeric_grad(lambda c: (np_rms(c, w, 2) * v).sum(), a, 1e-4) * u).sum()  # noqa: E731
    np.testing.assert_allclose(ggx.numpy(), numeric_grad(first, x, 1e-4), rtol=1e-4, atol=1e-5)


def test_double_backward_through_weight():
    """d/dw of <dL/dx, u>: the composite rule's weight path."""
    x = _rng(21).standard_normal((3, 4))
    w = _rng(22).uniform(0.5, 2.0, 4)
    v, u = _rng(23).standard_normal(x.shape), _rng(24).standard_normal(x.shape)
    tx, tw = T(x, stop_gradient=False), T(w, stop_gradient=False)
    (gx,) = oar.grad([(F.rms_norm(tx, 4, tw) * T(v)).sum()], [tx], create_graph=True)
    (gw,) = oar.grad([(gx * T(u)).sum()], [tw])
    ref = lambda c: (np_rms_grads(x, c, v, 1)[0] * u).sum()  # noqa: E731
    np.testing.assert_allclose(gw.numpy(), numeric_grad(ref, w, 1e-5), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_mixed_precision_weight(dtype):
    """16-bit activations with a float32 weight normalise in float32 and keep the input's dtype."""
    xv, x = _as(_rng(25).standard_normal((4, 16)), dtype)
    w = _rng(26).uniform(0.5, 2.0, 16).astype(np.float32)
    x.stop_gradient = False
    tw = T(w, stop_gradient=False)
    y = F.rms_norm(x, 16, tw)
    assert y.dtype == x.dtype
    np.testing.assert_allclose(y.astype("float64").numpy(), np_rms(xv, w, 1), rtol=TOL[dtype][0],
                               atol=TOL[dtype][1])
    dx, dw = oar.grad([y], [x, tw], grad_outputs=[oar.ones_like(y)])
    assert dx.dtype == x.dtype and dw.dtype == oar.float32
    ref_dx, ref_dw = np_rms_grads(xv, w, np.ones_like(xv), 1)
    np.testing.assert_allclose(dw.numpy(), ref_dw, rtol=GRAD_TOL[dtype][0], atol=GRAD_TOL[dtype][1])
    np.testing.assert_allclose(dx.astype("float64").numpy(), ref_dx, rtol=GRAD_TOL[dtype][0],
                               atol=GRAD_TOL[dtype][1])


def test_auto_cast_runs_in_float32():
    x = T(_rng(27).standard_normal((2, 8)).astype(np.float32))
    with oar.amp.auto_cast(dtype="bfloat16"):
        y = F.rms_norm(x.astype("bfloat16"), 8)
    assert y.dtype == oar.float32
    np.testing.assert_allclose(y.numpy(), np_rms(x.astype("bfloat16").astype("float64").numpy(), None, 1),
                               rtol=1e-6, atol=1e-6)


def test_layer_and_to_static_match_eager():
    layer = oar.nn.RMSNorm([3, 4], epsilon=1e-6)
    with oar.no_grad():
        layer.weight.set_value(T(_rng(28).uniform(0.5, 2.0, (3, 4)).astype(np.float32)))
    x = T(_rng(29).standard_normal((2, 3, 4)).astype(np.float32))
    eager = layer(x)
    np.testing.assert_allclose(eager.numpy(), np_rms(x.numpy().astype(np.float64), layer.weight.numpy(), 2, 1e-6),
                               rtol=1e-5, atol=1e-6)
    static = oar.jit.to_static(lambda t: layer(t) * 2.0)
    np.testing.assert_allclose(static(x).numpy(), eager.numpy() * 2.0, rtol=1e-6, atol=1e-6)


def test_vmap_over_rows():
    x = _rng(30).standard_normal((5, 3, 4))
    w = _rng(31).uniform(0.5, 2.0, 4)
    y = oar.vmap(lambda t: F.rms_norm(t, 4, T(w)))(T(x))
    np.testing.assert_allclose(y.numpy(), np_rms(x, w, 1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: F.rms_norm(oar.ones([2, 3]), [2, 3, 4]), ValueError, "normalized_shape"),
    (lambda: F.rms_norm(oar.ones([2, 3]), 4), ValueError, "normalized_shape"),
    (lambda: F.rms_norm(oar.ones([2, 3]), 3, oar.ones([4])), ValueError, "weight must have shape"),
    (lambda: F.rms_norm(oar.ones([2, 3]), 3, oar.ones([3], dtype="float64")), TypeError, "weight dtype"),
    (lambda: F.rms_norm(oar.ones([2, 3], dtype="int64"), 3), TypeError, "floating-point"),
])
def test_errors(call, exc, msg):
    with pytest.raises(exc, match=r"^\[oar.nn.functional.rms_norm\] .*" + msg):
        call()


# ---------------------------------------------------------------- incubate.nn.functional.fused_rms_norm

fused_rms_norm = oar.incubate.nn.functional.fused_rms_norm


def test_fused_rms_norm_with_residual_and_biases():
    x, res = _rng(32).standard_normal((2, 3, 8)), _rng(33).standard_normal((2, 3, 8))
    w, nb, b = _rng(34).uniform(0.5, 2, 8), _rng(35).standard_normal(8), _rng(36).standard_normal(8)
    out, res_out = fused_rms_norm(T(x), T(w), T(nb), 1e-6, 2, bias=T(b), residual=T(res))
    h = x + b + res
    np.testing.assert_allclose(res_out.numpy(), h, rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), np_rms(h, w, 1, 1e-6) + nb, rtol=1e-12, atol=1e-12)
    out, res_out = fused_rms_norm(T(x), T(w), None, 1e-6, -1)
    assert res_out is None
    np.testing.assert_allclose(out.numpy(), np_rms(x, w, 1, 1e-6), rtol=1e-12, atol=1e-12)
    out, _ = fused_rms_norm(T(x), None, None, 1e-6, 1)
    np.testing.assert_allclose(out.numpy(), np_rms(x, None, 2, 1e-6), rtol=1e-12, atol=1e-12)


def test_fused_rms_norm_is_differentiable():
    x, w = _rng(37).standard_normal((3, 4)), _rng(38).uniform(0.5, 2, 4)
    tx, tw = T(x, stop_gradient=False), T(w, stop_gradient=False)
    out, _ = fused_rms_norm(tx, tw, T(np.ones(4)), 1e-5, 1)
    dx, dw = oar.grad([out], [tx, tw], grad_outputs=[oar.ones_like(out)])
    ref_dx, ref_dw = np_rms_grads(x, w, np.ones_like(x), 1)
    np.testing.assert_allclose(dx.numpy(), ref_dx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dw.numpy(), ref_dw, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("round_type", [0, 1])
def test_fused_rms_norm_quantised_output(round_type):
    # rows whose scaled values hit exact ties: y = x / rms(x) with rms 1 for rows (±1, ±1)
    x = np.array([[1.0, -1.0], [1.0, 1.0], [3.0, 4.0]])
    out, _ = fused_rms_norm(T(x), None, None, 0.0, 1, quant_scale=0.5, quant_round_type=round_type,
                            quant_max_bound=5.0, quant_min_bound=-5.0)
    assert out.dtype == oar.int8
    q = 5.0 * 0.5 * np_rms(x, None, 1, 0.0)  # ties at ±2.5
    ref = np.rint(q) if round_type == 0 else np.sign(q) * np.floor(np.abs(q) + 0.5)
    np.testing.assert_array_equal(out.numpy(), np.clip(ref, -5, 5).astype(np.int8))


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: fused_rms_norm([1.0], None, None, 1e-5, 0), TypeError, "x must be a Tensor"),
    (lambda: fused_rms_norm(oar.ones([2, 3]), [1.0], None, 1e-5, 1), TypeError, "norm_weight must be a Tensor"),
    (lambda: fused_rms_norm(oar.ones([2, 3]), None, None, 1e-5, 2), ValueError, "begin_norm_axis must be in"),
    (lambda: fused_rms_norm(oar.ones([2, 3]), None, None, 1e-5, 1.0), TypeError, "begin_norm_axis must be an int"),
    (lambda: fused_rms_norm(oar.ones([2, 3]), oar.ones([2]), None, 1e-5, 1), ValueError, "norm_weight must have"),
    (lambda: fused_rms_norm(oar.ones([2, 3]), None, None, 1e-5, 1, residual=oar.ones([3])), ValueError,
     "residual must have"),
])
def test_fused_rms_norm_errors(call, exc, msg):
    with pytest.raises(exc, match=r"^\[oar.incubate.nn.functional.fused_rms_norm\] " + msg):
        call()
