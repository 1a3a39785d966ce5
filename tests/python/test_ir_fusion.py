"""Fused ops and the fusion passes.

The fused kernels (fused_attention, fused_linear_act, fused_elementwise) are
checked against NumPy for float32, float64 and bfloat16, on non-contiguous,
0-D and zero-size inputs; their gradients against central differences in
float64 (and once more for the second order); their error inputs. The
passes are checked on traced programs (rewritten when they should be, left
alone when an intermediate is read elsewhere), and each pass alone and all
of them together must keep the results of every model of the zoo.
"""
import math

import numpy as np
import pytest

import oar
import oar.models as LM
from oar import _C, _ir
from oar.static.build_strategy import BuildStrategy
from oar.vision import models as VM
from oar.vision.models.vgg import VGG, make_layers

from opdb import bf16_round, to_oar
from opdb_fused import np_attention_probs

RNG = np.random.default_rng(11)
DTYPES = ["float32", "float64", "bfloat16"]
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-12, 1e-13), "bfloat16": (3e-2, 3e-2)}  # rtol, atol

PASSES = ("fold_conv_bn", "fuse_softmax_layer_norm", "fuse_linear_act", "fuse_conv_act", "fuse_attention",
          "fuse_elementwise")


def rounded(a, dtype):
    """The values a holds once stored as `dtype`, in float64."""
    a = np.asarray(a, dtype=np.float64)
    if dtype == "bfloat16":
        return bf16_round(a.astype(np.float32)).astype(np.float64)
    if dtype == "float32":
        return a.astype(np.float32).astype(np.float64)
    return a


def as_f64(t):
    return t.astype("float64").numpy()


def numeric_grad(f, arrays, w, eps=1e-6):
    out = []
    for i, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            hi = [b.copy() for b in arrays]
            lo = [b.copy() for b in arrays]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            g[idx] = ((f(*hi) * w).sum() - (f(*lo) * w).sum()) / (2 * eps)
        out.append(g)
    return out


def check_grad(fn, np_fn, arrays, rtol=1e-6, atol=1e-8):
    """Autograd through fn against central differences of np_fn (float64)."""
    ts = [oar.to_tensor(a, stop_gradient=False) for a in arrays]
    out = fn(*ts)
    w = RNG.standard_normal(out.shape)
    grads = oar.grad([(out * oar.to_tensor(w)).sum()], ts)
    for g, num in zip(grads, numeric_grad(np_fn, arrays, w)):
        np.testing.assert_allclose(g.numpy(), num, rtol=rtol, atol=atol)


# ------------------------------------------------------------------------------ fused_attention

def np_attention(q, k, v, mask=None, scale=1.0, causal=False):
    return np_attention_probs(q, k, mask, scale, causal) @ v


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_forward(dtype, mask, causal):
    # 70 query rows with 300 keys: two row blocks, the second partial
    q = RNG.standard_normal((2, 3, 70, 8))
    k = RNG.standard_normal((2, 3, 300, 8))
    v = RNG.standard_normal((2, 3, 300, 5))
    m = RNG.standard_normal((3, 1, 300)) if mask else None
    ts = [to_oar(a, dtype) for a in (q, k, v)]
    out = _C.fused_attention(*ts, to_oar(m, dtype) if mask else None, 0.3, causal)
    assert out.dtype == ts[0].dtype and out.shape == [2, 3, 70, 5]
    ref = np_attention(*(rounded(a, dtype) for a in (q, k, v)), rounded(m, dtype) if mask else None, 0.3, causal)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(as_f64(out), ref, rtol=rtol, atol=atol)


def test_attention_noncontiguous_broadcast_mask_and_empty():
    # [b, l, h, d] data read as [b, h, l, d] views (what sdpa passes), a 2-D mask
    q = RNG.standard_normal((2, 9, 3, 4))
    k = RNG.standard_normal((2, 11, 3, 4))
    v = RNG.standard_normal((2, 11, 3, 6))
    m = RNG.standard_normal((9, 11))
    tv = [oar.to_tensor(a).transpose([0, 2, 1, 3]) for a in (q, k, v)]
    out = _C.fused_attention(*tv, oar.to_tensor(m), 0.5, True)
    ref = np_attention(*(a.transpose(0, 2, 1, 3) for a in (q, k, v)), m, 0.5, True)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-13)
    # no keys: zeros; no queries: empty
    z = _C.fused_attention(oar.ones([2, 3, 4]), oar.ones([2, 0, 4]), oar.ones([2, 0, 5]), None, 1.0, False)
    assert z.shape == [2, 3, 5] and not z.numpy().any()
    assert _C.fused_attention(oar.ones([2, 0, 4]), oar.ones([2, 3, 4]), oar.ones([2, 3, 5])).shape == [2, 0, 5]
    # a fully masked row gives NaN, as softmax over -inf does
    neg = oar.to_tensor(np.full((1, 2), -np.inf, dtype=np.float32))
    out = _C.fused_attention(oar.ones([1, 1, 2]), oar.ones([1, 2, 2]), oar.ones([1, 2, 2]), neg, 1.0, False)
    assert np.isnan(out.numpy()).all()


def test_attention_grad_and_double_grad():
    q = RNG.standard_normal((2, 3, 2))
    k = RNG.standard_normal((2, 4, 2))
    v = RNG.standard_normal((2, 4, 3))
    m = RNG.standard_normal((3, 4))
    check_grad(lambda a, b, c, d: _C.fused_attention(a, b, c, d, 0.7, True),
               lambda a, b, c, d: np_attention(a, b, c, d, 0.7, True), [q, k, v, m])
    check_grad(lambda a, b, c: _C.fused_attention(a, b, c, None, 0.5, False),
               lambda a, b, c: np_attention(a, b, c, None, 0.5, False), [q, k, v])
    # second order: d/dq of <dL/dv, w> against central differences of the first-order gradient
    w = RNG.standard_normal((2, 4, 3))

    def first(qa):
        tq = oar.to_tensor(qa, stop_gradient=False)
        tv = oar.to_tensor(v, stop_gradient=False)
        out = _C.fused_attention(tq, oar.to_tensor(k), tv, None, 0.5, False)
        gv, = oar.grad([out.sum()], [tv], create_graph=True)
        return tq, gv

    tq, gv = first(q)
    gq, = oar.grad([(gv * oar.to_tensor(w)).sum()], [tq])
    num = numeric_grad(lambda qa: first(qa)[1].numpy(), [q], w)[0]
    np.testing.assert_allclose(gq.numpy(), num, rtol=1e-6, atol=1e-8)


def test_attention_errors():
    x = oar.ones([2, 3, 4])
    with pytest.raises(ValueError, match=r"^\[oar.fused_attention\]"):
        _C.fused_attention(x, oar.ones([2, 3, 5]), x)  # head dims differ
    with pytest.raises(ValueError, match=r"^\[oar.fused_attention\]"):
        _C.fused_attention(x, oar.ones([3, 3, 4]), oar.ones([3, 3, 4]))  # leading dims differ
    with pytest.raises(ValueError, match=r"^\[oar.fused_attention\]"):
        _C.fused_attention(x, x, oar.ones([2, 4, 4]))  # v rows != k rows
    with pytest.raises(ValueError, match=r"^\[oar.fused_attention\]"):
        _C.fused_attention(x, x, x, oar.ones([4, 3]))  # mask does not broadcast
    with pytest.raises(TypeError, match=r"^\[oar.fused_attention\]"):
        _C.fused_attention(x, x.astype("float64"), x)
    with pytest.raises(TypeError, match=r"^\[oar.fused_attention\]"):
        _C.fused_attention(x.astype("int32"), x.astype("int32"), x.astype("int32"))
    with pytest.raises(ValueError, match=r"^\[oar.fused_attention\]"):
        _C.fused_attention(oar.ones([4]), oar.ones([4]), oar.ones([4]))


def test_sdpa_uses_the_fused_op_and_matches_the_composite():
    q, k, v = (RNG.standard_normal((2, 6, 2, 4)) for _ in range(3))
    ts = [oar.to_tensor(a) for a in (q, k, v)]
    prog, out = _ir.trace(lambda a, b, c: oar.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True),
                          ts)
    assert "fused_attention" in str(prog)
    ref = np_attention(*(a.transpose(0, 2, 1, 3) for a in (q, k, v)), None, 0.5, True).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-13)


# ------------------------------------------------------------------------------ fused_linear_act

def np_act(name, h):
    from math import erf
    if name == "relu":
        return np.maximum(h, 0)
    if name == "gelu":
        return 0.5 * h * (1 + np.vectorize(erf)(h / math.sqrt(2)))
    if name == "gelu_tanh":
        return 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h ** 3)))
    if name == "silu":
        return h / (1 + np.exp(-h))
    if name == "sigmoid":
        return 1 / (1 + np.exp(-h))
    return np.tanh(h)


ACTS = ["relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("act", ACTS)
def test_linear_act_forward(dtype, act):
    x = RNG.standard_normal((3, 5, 7))
    w = RNG.standard_normal((7, 4)) * 0.5
    b = RNG.standard_normal(4)
    out = _C.fused_linear_act(to_oar(x, dtype, noncontig=True), to_oar(w, dtype), to_oar(b, dtype), act)
    assert out.shape == [3, 5, 4] and out.dtype == to_oar(b, dtype).dtype
    h = rounded(x, dtype) @ rounded(w, dtype) + rounded(b, dtype)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(as_f64(out), np_act(act, h), rtol=rtol, atol=atol)


@pytest.mark.parametrize("act", ACTS + [""])
@pytest.mark.parametrize("w_transposed", [False, True])
def test_linear_act_float32_through_onednn_matmul(act, w_transposed):
    # Products of 32^3 and more run as one oneDNN matmul with the bias and the
    # activation inside; weights may be a transposed view.
    x = RNG.standard_normal((3, 40, 64)).astype(np.float32)
    w = (RNG.standard_normal((64, 48)) * 0.2).astype(np.float32)
    b = RNG.standard_normal(48).astype(np.float32)
    tx = oar.to_tensor(np.ascontiguousarray(x.transpose(1, 0, 2))).transpose([1, 0, 2])  # not dense
    tw = oar.to_tensor(np.ascontiguousarray(w.T)).t() if w_transposed else oar.to_tensor(w)
    tb = oar.to_tensor(b)
    out = _C.fused_linear_act(tx, tw, tb, act) if act else oar.nn.functional.linear(tx, tw, tb)
    h = x.astype(np.float64) @ w.astype(np.float64) + b
    np.testing.assert_allclose(out.numpy(), np_act(act, h) if act else h, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("act", ACTS)
def test_linear_act_grad(act):
    x = RNG.standard_normal((2, 3))
    w = RNG.standard_normal((3, 4))
    b = RNG.standard_normal(4) + (0.5 if act == "relu" else 0.0)
    check_grad(lambda a, c, d: _C.fused_linear_act(a, c, d, act), lambda a, c, d: np_act(act, a @ c + d), [x, w, b],
               rtol=1e-5, atol=1e-7)


def test_linear_act_zero_size_and_errors():
    assert _C.fused_linear_act(oar.ones([0, 3]), oar.ones([3, 2]), oar.ones([2]), "relu").shape == [0, 2]
    out = _C.fused_linear_act(oar.ones([2, 0]), oar.ones([0, 2]), oar.to_tensor([1.0, -1.0]), "relu")
    np.testing.assert_array_equal(out.numpy(), [[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match=r"^\[oar.fused_linear_act\]"):
        _C.fused_linear_act(oar.ones([2, 3]), oar.ones([3, 2]), oar.ones([2]), "softmax")
    with pytest.raises(ValueError, match=r"^\[oar.fused_linear_act\]"):
        _C.fused_linear_act(oar.ones([2, 3]), oar.ones([4, 2]), oar.ones([2]), "relu")
    with pytest.raises(ValueError, match=r"^\[oar.fused_linear_act\]"):
        _C.fused_linear_act(oar.ones([2, 3]), oar.ones([3, 2]), oar.ones([3]), "relu")
    with pytest.raises(TypeError, match=r"^\[oar.fused_linear_act\]"):
        _C.fused_linear_act(oar.ones([2, 3]), oar.ones([3, 2], dtype="float64"), oar.ones([2]), "relu")


# ------------------------------------------------------------------------------ fused_elementwise

def code(op, approximate=False):
    c = _C._fused_elementwise_code(op, approximate)
    assert c >= 0, op
    return c


# (program over registers, NumPy of the same); inputs: x, y (full shape), c (0-D)
CHAINS = {
    "exp_mul_add": ([("exp", 0, -1), ("multiply", 3, 2), ("add", 4, 1)], lambda x, y, c: np.exp(x) * c + y),
    "tanh_sigmoid_div": ([("tanh", 0, -1), ("sigmoid", 1, -1), ("divide", 3, 4), ("neg", 5, -1)],
                         lambda x, y, c: -(np.tanh(x) / (1 / (1 + np.exp(-y))))),
    "square_sqrt_max": ([("square", 0, -1), ("add", 3, 2), ("sqrt", 4, -1), ("maximum", 5, 1), ("relu", 6, -1)],
                        lambda x, y, c: np.maximum(np.maximum(np.sqrt(x * x + c), y), 0)),
    "reused": ([("subtract", 0, 1), ("multiply", 3, 3), ("silu", 4, -1), ("minimum", 5, 3)],
               lambda x, y, c: np.minimum((x - y) ** 2 / (1 + np.exp(-(x - y) ** 2)), x - y)),
    "erf_abs_log": ([("abs", 0, -1), ("log1p", 3, -1), ("erf", 4, -1), ("pow", 5, 2), ("rsqrt", 1, -1),
                     ("multiply", 6, 7)],
                    lambda x, y, c: np.vectorize(math.erf)(np.log1p(np.abs(x))) ** c / np.sqrt(y)),
}


def program(instrs):
    p = []
    for op, a, b in instrs:
        p += [code(op), a, b]
    return p


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CHAINS))
def test_elementwise_forward(dtype, name):
    instrs, ref = CHAINS[name]
    # 40,000 elements: several blocks, and threads where there are several cores
    x = RNG.uniform(-2, 2, (200, 200))
    y = RNG.uniform(0.5, 2, (200, 200))
    c = 1.5
    ins = [to_oar(x, dtype, noncontig=True), to_oar(y, dtype), to_oar(np.array(c), dtype)]
    out = _C.fused_elementwise(ins, program(instrs))
    assert out.shape == [200, 200] and out.dtype == ins[0].dtype
    want = ref(rounded(x, dtype), rounded(y, dtype), rounded(c, dtype))
    rtol, atol = TOL[dtype]
    if dtype == "bfloat16":  # one rounding of the result, not of every intermediate
        np.testing.assert_allclose(as_f64(out), rounded(want, dtype), rtol=rtol, atol=atol)
    else:
        np.testing.assert_allclose(as_f64(out), want, rtol=rtol * 10, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_broadcast_and_strided_inputs(dtype):
    x = RNG.standard_normal((4, 1, 5))
    y = RNG.standard_normal((3, 1))
    z = RNG.standard_normal((6, 4, 3, 5))[::2, :, :, ::1]  # strided along the first dim
    p = program([("exp", 0, -1), ("multiply", 3, 1), ("add", 4, 2), ("tanh", 5, -1)])
    out = _C.fused_elementwise([to_oar(x, dtype, noncontig=True), to_oar(y, dtype), oar.to_tensor(z).astype(dtype)],
                               p)
    assert out.shape == [3, 4, 3, 5]
    want = np.tanh(np.exp(rounded(x, dtype)) * rounded(y, dtype) + rounded(z, dtype))
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(as_f64(out), rounded(want, dtype) if dtype == "bfloat16" else want,
                               rtol=rtol * 10, atol=atol)
    # gradients reduce back over the broadcast dims, also for an input that only widens the output
    xs, ys, zs = RNG.standard_normal((4, 1)), RNG.standard_normal((1, 3)), RNG.standard_normal((2, 4, 3))
    check_grad(lambda a, b, c: _C.fused_elementwise([a, b, c], program([("sin", 0, -1), ("multiply", 3, 1)])),
               lambda a, b, c: np.broadcast_to(np.sin(a) * b, (2, 4, 3)), [xs, ys, zs])


def test_elementwise_0d_and_zero_size():
    p = program([("exp", 0, -1), ("add", 2, 1)])
    out = _C.fused_elementwise([oar.to_tensor(1.0), oar.to_tensor(2.0)], p)
    assert out.shape == [] and abs(out.item() - (math.e + 2)) < 1e-6
    out = _C.fused_elementwise([oar.ones([1, 1]), oar.to_tensor(2.0)], p)
    assert out.shape == [1, 1]
    assert _C.fused_elementwise([oar.ones([0, 3]), oar.to_tensor(2.0)], p).shape == [0, 3]


def test_elementwise_grad_and_double_grad():
    instrs, ref = CHAINS["reused"]
    p = program(instrs)
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    c = np.array(0.7)
    check_grad(lambda a, b, d: _C.fused_elementwise([a, b, d], p), lambda a, b, d: ref(a, b, d), [x, y, c])
    instrs, ref = CHAINS["exp_mul_add"]
    p = program(instrs)
    # second order through the rebuilt chain: d/dx of <d(out)/dx, w>
    w = RNG.standard_normal((3, 4))
    tx = oar.to_tensor(x, stop_gradient=False)
    out = _C.fused_elementwise([tx, oar.to_tensor(y), oar.to_tensor(c)], p)
    gx, = oar.grad([out.sum()], [tx], create_graph=True)
    ggx, = oar.grad([(gx * oar.to_tensor(w)).sum()], [tx])
    np.testing.assert_allclose(ggx.numpy(), np.exp(x) * c * w, rtol=1e-12)


def test_elementwise_errors():
    x = oar.ones([2, 3])
    with pytest.raises(ValueError, match=r"^\[oar.fused_elementwise\]"):
        _C.fused_elementwise([x], [code("exp"), 1, -1])  # reads a register not yet written
    with pytest.raises(ValueError, match=r"^\[oar.fused_elementwise\]"):
        _C.fused_elementwise([x], [code("add"), 0, -1])  # binary op without its second operand
    with pytest.raises(ValueError, match=r"^\[oar.fused_elementwise\]"):
        _C.fused_elementwise([x], [999, 0, -1])
    with pytest.raises(ValueError, match=r"^\[oar.fused_elementwise\]"):
        _C.fused_elementwise([x], [code("exp"), 0])
    with pytest.raises(ValueError, match=r"^\[oar.fused_elementwise\]"):
        _C.fused_elementwise([x, oar.ones([4])], [code("add"), 0, 1])  # shapes that do not broadcast
    with pytest.raises(TypeError, match=r"^\[oar.fused_elementwise\]"):
        _C.fused_elementwise([x, x.astype("float64")], [code("add"), 0, 1])
    with pytest.raises(TypeError, match=r"^\[oar.fused_elementwise\]"):
        _C.fused_elementwise([x.astype("int32")], [code("neg"), 0, -1])


# ------------------------------------------------------------------------------ passes on traced programs

def ops_of(prog):
    import re
    return re.findall(r"= ([a-z_0-9.]+)\(", str(prog))


def test_passes_rewrite_and_keep_gradients():
    lin = oar.nn.Linear(4, 3)
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    q = RNG.standard_normal((2, 5, 4)).astype(np.float32)

    def f(a, b):
        h = oar.nn.functional.gelu(lin(a))
        s = oar.nn.functional.softmax(oar.matmul(b, b, transpose_y=True) / 2.0, axis=-1)
        return oar.tanh(h * 2.0 + 1.0), oar.matmul(s, b)

    prog, outs = _ir.trace(f, [oar.to_tensor(x), oar.to_tensor(q)], parameters=lin.named_parameters())
    changed = prog.optimize(fuse_linear_act=True, fuse_attention=True, fuse_elementwise=True)
    assert changed["fuse_linear_act"] and changed["fuse_attention"] and changed["fuse_elementwise"]
    ops = ops_of(prog)
    assert {"fused_linear_act", "fused_attention", "fused_elementwise"} <= set(ops)
    assert "softmax" not in ops and "gelu" not in ops and "tanh" not in ops
    ta = oar.to_tensor(x, stop_gradient=False)
    res = prog.run(ta, oar.to_tensor(q))
    for a, b in zip(res, outs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    # the fused program trains: gradients equal the eager ones
    res[0].sum().backward()
    ga, gw = ta.grad.numpy(), lin.weight.grad.numpy()
    lin.clear_gradients()
    te = oar.to_tensor(x, stop_gradient=False)
    f(te, oar.to_tensor(q))[0].sum().backward()
    np.testing.assert_allclose(ga, te.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw, lin.weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_passes_skip_intermediates_read_elsewhere():
    lin = oar.nn.Linear(4, 3)

    def f(a):
        h = lin(a)
        e = oar.exp(a)
        return oar.nn.functional.relu(h), h, oar.sin(e) * 2.0, e

    prog, _ = _ir.trace(f, [oar.ones([2, 4])], parameters=lin.named_parameters())
    changed = prog.optimize(fuse_linear_act=True, fuse_elementwise=True)
    ops = ops_of(prog)
    assert not changed["fuse_linear_act"] and "linear" in ops and "relu" in ops
    # exp is an output: only sin and the multiply fuse
    assert "exp" in ops and "sin" not in ops and ops.count("fused_elementwise") == 1


def test_decomposed_softmax_and_layer_norm():
    w = oar.to_tensor(RNG.standard_normal(8))
    b = oar.to_tensor(RNG.standard_normal(8))

    def f(a):
        a = oar.tanh(a)
        e = oar.exp(a - oar.max(a, axis=-1, keepdim=True))
        sm = e / oar.sum(e, axis=-1, keepdim=True)
        z = oar.sin(a)
        zc = z - z.mean(-1, keepdim=True)
        ln = zc / oar.sqrt((zc * zc).mean(-1, keepdim=True) + 1e-5) * w + b
        return sm, ln

    x = RNG.standard_normal((3, 4, 8))
    prog, outs = _ir.trace(f, [oar.to_tensor(x)])
    assert prog.optimize(fuse_softmax_layer_norm=True)["fuse_softmax_layer_norm"]
    ops = ops_of(prog)
    assert "softmax" in ops and "layer_norm" in ops and "mean" not in ops and "amax" not in ops
    a = np.tanh(x)
    e = np.exp(a - a.max(-1, keepdims=True))
    z = np.sin(a)
    zc = z - z.mean(-1, keepdims=True)
    want = [e / e.sum(-1, keepdims=True), zc / np.sqrt((zc ** 2).mean(-1, keepdims=True) + 1e-5) * w.numpy() + b.numpy()]
    tx = oar.to_tensor(x, stop_gradient=False)
    res = prog.run(tx)
    for got, ref in zip(res, want):
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10, atol=1e-12)
    # gradients through the fused ops equal the eager ones
    gx, = oar.grad([(res[0] * 3.0).sum() + (res[1] * res[1]).sum()], [tx])
    te = oar.to_tensor(x, stop_gradient=False)
    eo = f(te)
    ge, = oar.grad([(eo[0] * 3.0).sum() + (eo[1] * eo[1]).sum()], [te])
    np.testing.assert_allclose(gx.numpy(), ge.numpy(), rtol=1e-9, atol=1e-11)


def test_fold_conv_bn_uses_current_weights():
    net = oar.nn.Sequential(oar.nn.Conv2D(3, 4, 3, padding=1), oar.nn.BatchNorm2D(4), oar.nn.ReLU())
    bn = net[1]
    bn._mean.set_value(RNG.standard_normal(4).astype(np.float32))
    bn._variance.set_value(RNG.uniform(0.5, 2, 4).astype(np.float32))
    net.eval()
    x = oar.to_tensor(RNG.standard_normal((2, 3, 6, 6)).astype(np.float32))
    prog, y = _ir.trace(net, [x], parameters=net.named_parameters())
    assert prog.optimize(fold_conv_bn=True)["fold_conv_bn"]
    assert "batch_norm" not in ops_of(prog)
    np.testing.assert_allclose(prog.run(x).numpy(), y.numpy(), rtol=1e-5, atol=1e-5)


def test_build_strategy_flags():
    bs = BuildStrategy()
    assert bs.pass_flags() == {"dce": True, "cse": True, "fold": True, "fold_conv_bn": False,
                               "fuse_softmax_layer_norm": True, "fuse_linear_act": True, "fuse_conv_act": True,
                               "fuse_attention": True, "fuse_elementwise": True}
    assert bs.pass_flags(inference=True)["fold_conv_bn"] is True
    bs.fused_attention = False
    bs.fuse_elewise_add_act_ops = False
    bs.fold_conv_bn = False
    bs.enable_inplace = True  # kept for the runtime, no pass here
    flags = bs.pass_flags(inference=True)
    assert not flags["fuse_attention"] and not flags["fuse_elementwise"] and not flags["fold_conv_bn"]
    assert bs.enable_inplace is True and bs.fuse_gemm_epilogue is True
    with pytest.raises(AttributeError, match=r"^\[oar.static.BuildStrategy\]"):
        bs.no_such_pass = True
    with pytest.raises(TypeError, match=r"^\[oar.static.BuildStrategy\]"):
        bs.fuse_linear_act = "yes"
    prog, _ = _ir.trace(lambda a: oar.tanh(oar.exp(a) + 1.0), [oar.ones([3])])
    changed = prog.optimize(build_strategy=bs)
    assert "fuse_elementwise" not in changed and "fuse_linear_act" in changed  # off, so it did not run
    assert "fused_elementwise" not in ops_of(prog)
    with pytest.raises(TypeError, match=r"^\[oar.ir.optimize\]"):
        prog.optimize(build_strategy=object())


def test_fused_program_serialises():
    prog, y = _ir.trace(lambda a: oar.tanh(oar.exp(a) * 2.0 + a), [oar.to_tensor([0.5, -1.0])])
    prog.optimize(fuse_elementwise=True)
    text = _C._ir_to_json(prog._prog)
    assert "fused_elementwise" in text
    again = _ir.Program(_C._ir_from_json(text, "test.json"), prog._bindings, None)
    np.testing.assert_allclose(again.run(oar.to_tensor([0.5, -1.0])).numpy(), y.numpy(), rtol=1e-6)
    # the attention's scale and causal flag survive the file exactly
    q = oar.to_tensor(RNG.standard_normal((2, 3, 4)))
    prog, y = _ir.trace(lambda a: _C.fused_attention(a, a, a, None, 1 / math.sqrt(3), True), [q])
    again = _ir.Program(_C._ir_from_json(_C._ir_to_json(prog._prog), "test.json"), prog._bindings, None)
    np.testing.assert_array_equal(again.run(q).numpy(), y.numpy())


# ------------------------------------------------------------------------------ the model zoo

def tiny_gpt():
    cfg = dict(vocab_size=37, max_position_embeddings=12, hidden_size=16, num_hidden_layers=2,
               num_attention_heads=4, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return LM.GPTForCausalLM(LM.GPTConfig(**cfg))


def tiny_bert():
    cfg = dict(vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=24,
               max_position_embeddings=10, type_vocab_size=2, hidden_dropout_prob=0.0,
               attention_probs_dropout_prob=0.0)
    return LM.BertModel(LM.BertConfig(**cfg))


def ids():
    return oar.to_tensor(np.random.default_rng(0).integers(0, 37, (2, 7)))


def randomise_bn(model):
    """Running statistics away from (0, 1), so that folding has something to fold."""
    rng = np.random.default_rng(3)
    for layer in model.sublayers():
        if isinstance(layer, oar.nn.BatchNorm2D):
            layer._mean.set_value(rng.standard_normal(layer._mean.shape).astype(np.float32) * 0.1)
            layer._variance.set_value(rng.uniform(0.5, 1.5, layer._variance.shape).astype(np.float32))


MODELS = {
    "lenet": (lambda: VM.LeNet(), lambda: [oar.randn([2, 1, 28, 28])], ()),
    "resnet18": (lambda: VM.resnet18(num_classes=10), lambda: [oar.randn([1, 3, 32, 32])],
                 ("fold_conv_bn", "fuse_elementwise")),
    "mobilenet_v2": (lambda: VM.mobilenet_v2(num_classes=10), lambda: [oar.randn([1, 3, 32, 32])],
                     ("fold_conv_bn",)),
    "vgg": (lambda: VGG(make_layers([8, "M", 16, "M"], batch_norm=True), num_classes=0),
            lambda: [oar.randn([1, 3, 16, 16])], ("fold_conv_bn",)),
    "lenet_relu": (lambda: VM.LeNet(), lambda: [oar.randn([2, 1, 28, 28])], ("fuse_conv_act",)),
    "bert": (tiny_bert, lambda: [ids()], ("fuse_linear_act", "fuse_attention")),
    "gpt": (tiny_gpt, lambda: [ids()], ("fuse_linear_act",)),
}


@pytest.mark.parametrize("only", list(PASSES) + ["all"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_pass_preserves_zoo_results(name, only):
    make, inputs, expected = MODELS[name]
    oar.seed(0)
    model = make()
    randomise_bn(model)
    model.eval()
    ins = inputs()
    prog, out = _ir.trace(model, ins, parameters=model.named_parameters())
    flags = {p: only in (p, "all") for p in PASSES}
    changed = prog.optimize(**flags)
    for p in expected:
        if only == p:  # (with all passes on, an earlier pass may take the pattern: conv + add)
            assert changed[p], (name, p)
    if only == "all":
        assert any(changed.values()), name
    res = prog.run(*ins)
    outs = out if isinstance(out, (list, tuple)) else [out]
    res = res if isinstance(res, (list, tuple)) else [res]
    for a, b in zip(res, outs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- fused_conv


def np_conv2d(x, w, stride, pad, groups):
    """Direct NCHW cross-correlation in float64."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                y[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return y


@pytest.mark.parametrize("groups,cin,cout", [(1, 6, 16), (8, 8, 8), (2, 6, 4)])
@pytest.mark.parametrize("act", ["", "relu", "clip", "gelu", "silu", "sigmoid", "tanh"])
def test_fused_conv_forward(groups, cin, cout, act):
    x = RNG.standard_normal((2, cin, 9, 7)).astype(np.float32)
    w = (RNG.standard_normal((cout, cin // groups, 3, 3)) * 0.3).astype(np.float32)
    b = RNG.standard_normal((1, cout, 1, 1)).astype(np.float32)
    for stride in (1, 2):
        ref = np_conv2d(x, w, stride, 1, groups)
        r = RNG.standard_normal(ref.shape).astype(np.float32)
        for bias, res in [(None, None), (b, None), (None, r), (b, r)]:
            z = ref + (0 if bias is None else bias) + (0 if res is None else r)
            want = np_act(act, z) if act not in ("", "clip") else (np.clip(z, 0.0, 6.0) if act == "clip" else z)
            got = _C.fused_conv(oar.to_tensor(x), oar.to_tensor(w), None if bias is None else oar.to_tensor(bias),
                                None if res is None else oar.to_tensor(res), [stride] * 2, [1, 1], [1, 1], groups,
                                act, 0.0 if act == "clip" else -math.inf, 6.0 if act == "clip" else math.inf)
            np.testing.assert_allclose(got.numpy(), want, rtol=2e-4, atol=2e-4)


def test_fused_conv_bfloat16_and_one_sided_clip():
    x = RNG.standard_normal((1, 4, 6, 6)).astype(np.float32)
    w = (RNG.standard_normal((8, 4, 1, 1)) * 0.5).astype(np.float32)
    b = RNG.standard_normal(8).astype(np.float32)
    want = np.maximum(np_conv2d(bf16_round(x), bf16_round(w), 1, 0, 1) + bf16_round(b).reshape(1, -1, 1, 1), -0.5)
    got = _C.fused_conv(oar.to_tensor(x).astype("bfloat16"), oar.to_tensor(w).astype("bfloat16"),
                        oar.to_tensor(b).astype("bfloat16"), None, [1, 1], [0, 0], [1, 1], 1, "clip", -0.5, math.inf)
    assert str(got.dtype).endswith("bfloat16")
    np.testing.assert_allclose(got.astype("float32").numpy(), want, rtol=2e-2, atol=2e-2)


def test_fused_conv_grad_against_central_differences():
    # float32 only (oneDNN): a coarse step and a loose tolerance, on a smooth activation.
    x = RNG.standard_normal((1, 2, 5, 5))
    w = RNG.standard_normal((3, 2, 3, 3)) * 0.3
    b = RNG.standard_normal((1, 3, 1, 1))
    r = RNG.standard_normal((1, 3, 5, 5))
    gout = RNG.standard_normal((1, 3, 5, 5))

    def f(xa, wa, ba, ra):
        z = np_conv2d(xa, wa, 1, 1, 1) + ba + ra
        return float((np.tanh(z) * gout).sum())

    ts = [oar.to_tensor(a.astype(np.float32), stop_gradient=False) for a in (x, w, b, r)]
    y = _C.fused_conv(*ts, [1, 1], [1, 1], [1, 1], 1, "tanh", -math.inf, math.inf)
    (y * oar.to_tensor(gout.astype(np.float32))).sum().backward()
    arrays = [x, w, b, r]
    for k, t in enumerate(ts):
        num = np.zeros_like(arrays[k])
        it = np.nditer(arrays[k], flags=["multi_index"])
        for _ in it:
            i = it.multi_index
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[k][i] += 1e-3
            minus[k][i] -= 1e-3
            num[i] = (f(*plus) - f(*minus)) / 2e-3
        np.testing.assert_allclose(t.grad.numpy(), num, rtol=2e-3, atol=2e-3)


def test_fused_conv_errors():
    x, w = oar.ones([1, 2, 4, 4]), oar.ones([3, 2, 3, 3])
    with pytest.raises(TypeError, match=r"^\[oar.fused_conv\] supports float32 and bfloat16"):
        _C.fused_conv(x.astype("float64"), w.astype("float64"))
    with pytest.raises(ValueError, match=r"^\[oar.fused_conv\] bias must hold one value per output channel"):
        _C.fused_conv(x, w, oar.ones([2]))
    with pytest.raises(ValueError, match=r"^\[oar.fused_conv\] residual must have the output's shape"):
        _C.fused_conv(x, w, None, oar.ones([1, 3, 4, 4]))
    with pytest.raises(ValueError, match=r"^\[oar.fused_conv\] act must be"):
        _C.fused_conv(x, w, act="relu7")
    with pytest.raises(ValueError, match=r"^\[oar.fused_conv\] clip bounds must be ordered"):
        _C.fused_conv(x, w, act="clip", lo=1.0, hi=0.0)
    assert _C.fused_conv(oar.ones([0, 2, 4, 4]), w).shape == [0, 3, 2, 2]


def test_conv_fusion_pass_takes_bias_residual_and_relu6():
    conv1 = oar.nn.Conv2D(4, 4, 3, padding=1)
    conv2 = oar.nn.Conv2D(4, 4, 3, padding=1, bias_attr=False)

    def block(x):
        h = oar.nn.functional.relu6(conv1(x))
        return oar.nn.functional.relu(conv2(h) + x), h

    x = oar.randn([2, 4, 6, 6])
    params = dict(conv1.named_parameters(prefix="c1"))
    params.update(conv2.named_parameters(prefix="c2"))
    prog, (y, h) = _ir.trace(block, [x], dynamic_dims=[[0]], parameters=params)
    changed = prog.optimize(fuse_conv_act=True)
    assert changed["fuse_conv_act"]
    ops = ops_of(prog)
    # h is an output, so the first conv keeps its result: bias + relu6 fuse (h is the fused op's own result)
    assert ops.count("fused_conv") == 2 and "clip" not in ops and "relu" not in ops and "add" not in ops, ops
    x2 = oar.randn([3, 4, 6, 6])
    ry, rh = prog.run(x2)
    ey, eh = block(x2)
    np.testing.assert_allclose(ry.numpy(), ey.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rh.numpy(), eh.numpy(), rtol=1e-5, atol=1e-5)


def test_conv_fusion_pass_leaves_shared_intermediates():
    conv = oar.nn.Conv2D(3, 4, 3)

    def f(x):
        c = conv(x)
        return oar.nn.functional.relu(c), c

    prog, _ = _ir.trace(f, [oar.randn([1, 3, 5, 5])], parameters=conv.named_parameters())
    prog.optimize(fuse_conv_act=True)
    ops = ops_of(prog)
    # conv + bias fuse (the sum is the shared result); the relu reading it stays
    assert "relu" in ops and ops.count("fused_conv") == 1 and "add" not in ops, ops


def test_inference_passes_leave_only_fused_convolutions_in_resnet18():
    model = VM.resnet18(num_classes=10)
    randomise_bn(model)
    model.eval()
    x = oar.randn([2, 3, 32, 32])
    prog, out = _ir.trace(model, [x], dynamic_dims=[[0]], parameters=model.named_parameters())
    prog.optimize(**BuildStrategy().pass_flags(inference=True))
    ops = ops_of(prog)
    assert ops.count("fused_conv") == 20 and not {"conv", "batch_norm", "add", "relu"} & set(ops), ops
    x3 = oar.randn([3, 3, 32, 32])
    np.testing.assert_allclose(prog.run(x3).numpy(), model(x3).numpy(), rtol=1e-4, atol=1e-5)
