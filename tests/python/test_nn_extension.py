"""nn.functional extension ops: attention, interpolate, pixel shuffle, unfold/fold,
sequence_mask, diag_embed, affine_grid. Forward against NumPy references,
gradients against central differences in float64, error inputs."""
import math

import numpy as np
import pytest

import oar
import oar.nn as nn
import oar.nn.functional as F
from grid_ref import numeric_grad, unnormalize
from opdb_fused import np_attention_grads

RNG = np.random.default_rng(7)


def check_grad(fn, arrays, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Compares d(sum(fn(*x) * w))/dx from autograd with central differences."""
    ts = [oar.to_tensor(a, stop_gradient=False) for a in arrays]
    out = fn(*ts)
    w = RNG.standard_normal(out.shape)
    (out * oar.to_tensor(w)).sum().backward()
    for t, num in zip(ts, numeric_grad(fn, arrays, w, eps)):
        np.testing.assert_allclose(t.grad.numpy(), num, rtol=rtol, atol=atol)


# ------------------------------------------------------------------------------------------ attention

def np_sdpa(q, k, v, mask=None, causal=False, scale=None):
    q, k, v = (a.transpose(0, 2, 1, 3) for a in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    if causal:
        s = s + np.where(np.tril(np.ones(s.shape[-2:], bool)), 0.0, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3)


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float64", 1e-12)])
def test_sdpa_forward(dtype, tol):
    q, k, v = (RNG.standard_normal((2, 5, 3, 4)).astype(dtype) for _ in range(3))
    out = F.scaled_dot_product_attention(oar.to_tensor(q), oar.to_tensor(k), oar.to_tensor(v))
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v), rtol=tol * 10, atol=tol)
    assert out.dtype == oar.to_tensor(q).dtype


def test_sdpa_masks_and_causal():
    q = RNG.standard_normal((2, 4, 2, 3))
    k = RNG.standard_normal((2, 6, 2, 3))
    v = RNG.standard_normal((2, 6, 2, 3))
    bmask = RNG.random((2, 1, 4, 6)) > 0.3
    bmask[..., 0] = True
    fmask = RNG.standard_normal((4, 6))
    T = oar.to_tensor
    out = F.scaled_dot_product_attention(T(q), T(k), T(v), attn_mask=T(bmask))
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v, bmask), rtol=1e-10)
    out = F.scaled_dot_product_attention(T(q), T(k), T(v), attn_mask=T(fmask))
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v, fmask), rtol=1e-10)
    out = F.scaled_dot_product_attention(T(q), T(k), T(v), is_causal=True)
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v, causal=True), rtol=1e-10)
    # causal: output at position 0 depends only on key/value 0
    v2 = v.copy()
    v2[:, 1:] += 5.0
    out2 = F.scaled_dot_product_attention(T(q), T(k), T(v2), is_causal=True)
    np.testing.assert_allclose(out2.numpy()[:, 0], out.numpy()[:, 0], rtol=1e-12)
    assert not np.allclose(out2.numpy()[:, 1], out.numpy()[:, 1])


def test_sdpa_gqa_scale_dropout():
    q = RNG.standard_normal((1, 3, 4, 2))
    k = RNG.standard_normal((1, 3, 2, 2))
    v = RNG.standard_normal((1, 3, 2, 2))
    out = F.scaled_dot_product_attention(oar.to_tensor(q), oar.to_tensor(k), oar.to_tensor(v), scale=0.3)
    ref = np_sdpa(q, np.repeat(k, 2, axis=2), np.repeat(v, 2, axis=2), scale=0.3)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
    # dropout is off outside training and with p=0
    t = oar.to_tensor(q)
    a = F.scaled_dot_product_attention(t, t, t, dropout_p=0.9, training=False).numpy()
    np.testing.assert_allclose(a, np_sdpa(q, q, q), rtol=1e-10)
    oar.seed(1)
    b = F.scaled_dot_product_attention(t, t, t, dropout_p=0.5, training=True).numpy()
    assert b.shape == a.shape and not np.allclose(a, b)


def test_sdpa_grad():
    q, k, v = (RNG.standard_normal((1, 3, 2, 2)) for _ in range(3))
    mask = RNG.standard_normal((3, 3))
    check_grad(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=oar.to_tensor(mask),
                                                              is_causal=True), [q, k, v])


def attention_op_names(fn):
    import oar.profiler as profiler
    with profiler.Profiler() as prof:
        fn()
    return {r.name for r in prof.op_stats()}


# (q's [batch..., Lq, D], Lk, Dv, mask shape or None, causal): several query blocks per batch entry,
# one batch entry split over threads, cross attention, broadcast masks.
ATTN_CASES = [((2, 3, 70, 16), 50, 8, None, False),
              ((2, 3, 70, 16), 90, 8, (70, 90), True),
              ((1, 300, 8), 300, 4, (1, 300), True),
              ((3, 1, 5, 4), 7, 3, (3, 1, 5, 7), False)]


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 2e-5), ("bfloat16", 6e-2)])
@pytest.mark.parametrize("case", ATTN_CASES)
def test_fused_attention_backward_kernel(dtype, tol, case):
    """The first-order gradient runs the fused backward (no [Lq, Lk] tensor between ops), the
    gradient with create_graph=True the composite; both match the closed form."""
    qs, lk, dv, mshape, causal = case
    q, k, v = (RNG.standard_normal(s) for s in (qs, qs[:-2] + (lk, qs[-1]), qs[:-2] + (lk, dv)))
    g = RNG.standard_normal(qs[:-1] + (dv,))
    mask = RNG.standard_normal(mshape) if mshape else None
    T = lambda a: oar.to_tensor(a).astype(dtype)  # noqa: E731
    ref = np_attention_grads(*(T(a).astype("float64").numpy() for a in (q, k, v, g)),
                             None if mask is None else T(mask).astype("float64").numpy(), 0.3, causal)
    for create_graph in (False, True):
        ts = [T(a) for a in (q, k, v)]
        for t in ts:
            t.stop_gradient = False
        out = oar._C.fused_attention(*ts, None if mask is None else T(mask), 0.3, causal)
        box = []
        names = attention_op_names(lambda: box.extend(oar.grad([out], ts, [T(g)], create_graph=create_graph)))
        assert ("fused_attention_grad" in names) == (not create_graph), names
        for got, want in zip(box, ref):
            assert got.dtype == ts[0].dtype
            np.testing.assert_allclose(got.astype("float64").numpy(), want, rtol=tol, atol=tol * np.abs(want).max())


def test_fused_attention_backward_mask_grad_and_strided_inputs():
    """A mask that needs a gradient takes the composite path; transposed (strided) q/k/v and an
    expanded output gradient reach the fused kernel as views."""
    q, k, v = (RNG.standard_normal((2, 9, 3, 4)) for _ in range(3))
    mask = RNG.standard_normal((3, 9, 9))
    ts = [oar.to_tensor(a, stop_gradient=False) for a in (q, k, v, mask)]
    qt, kt, vt = (t.transpose([0, 2, 1, 3]) for t in ts[:3])
    out = oar._C.fused_attention(qt, kt, vt, ts[3], 0.5, False)
    g = oar.ones([1, 1, 1, 4]).expand(out.shape)
    tr = lambda a: a.transpose(0, 2, 1, 3)  # noqa: E731
    want = np_attention_grads(tr(q), tr(k), tr(v), np.ones(out.shape), mask, 0.5, False)
    gq, gk, gv, gm = oar.grad([out], ts, [g])
    for got, w in zip((gq, gk, gv), want):
        np.testing.assert_allclose(got.numpy(), tr(w), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gm.numpy(), want[3].sum(0), rtol=1e-10, atol=1e-12)
    out = oar._C.fused_attention(qt, kt, vt, ts[3].detach(), 0.5, False)
    box = []
    assert "fused_attention_grad" in attention_op_names(lambda: box.extend(oar.grad([out], ts[:3], [g])))
    for got, w in zip(box, want):
        np.testing.assert_allclose(got.numpy(), tr(w), rtol=1e-10, atol=1e-12)


def test_fused_attention_backward_empty():
    for qs, lk in (((2, 0, 4), 3), ((2, 3, 4), 0), ((0, 3, 4), 3)):
        ts = [oar.to_tensor(RNG.standard_normal(s), stop_gradient=False)
              for s in (qs, qs[:-2] + (lk, 4), qs[:-2] + (lk, 2))]
        out = oar._C.fused_attention(*ts, None, 1.0, False)
        grads = oar.grad([out], ts, [oar.ones(out.shape, dtype="float64")])
        for got, t in zip(grads, ts):
            assert got.shape == t.shape and not np.any(got.numpy())


def test_sdpa_errors():
    x = oar.ones([2, 3, 4])
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.scaled_dot_product_attention\]"):
        F.scaled_dot_product_attention(x, x, x)
    q = oar.ones([1, 2, 3, 4])
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.scaled_dot_product_attention\]"):
        F.scaled_dot_product_attention(q, oar.ones([1, 2, 2, 4]), oar.ones([1, 2, 2, 4]))
    with pytest.raises(TypeError, match=r"^\[oar.nn.functional.scaled_dot_product_attention\]"):
        F.scaled_dot_product_attention(q.astype("int32"), q, q)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.scaled_dot_product_attention\]"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)


# ------------------------------------------------------------------------------------------ interpolate

def np_linear_axis(x, axis, n_out, align_corners, align_mode=0):
    n_in = x.shape[axis]
    out = []
    for k in range(n_out):
        if align_corners:
            src = k * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        elif align_mode == 0:
            src = max((k + 0.5) * n_in / n_out - 0.5, 0.0)
        else:
            src = k * n_in / n_out
        lo = min(int(math.floor(src)), n_in - 1)
        hi = min(lo + 1, n_in - 1)
        f = src - lo
        out.append(np.take(x, lo, axis) * (1 - f) + np.take(x, hi, axis) * f)
    return np.stack(out, axis)


def np_nearest_axis(x, axis, n_out):
    n_in = x.shape[axis]
    idx = [min(int(math.floor(k * n_in / n_out)), n_in - 1) for k in range(n_out)]
    return np.take(x, idx, axis)


def np_cubic_axis(x, axis, n_out, align_corners):
    a = -0.75
    n_in = x.shape[axis]

    def w(d):
        d = abs(d)
        if d <= 1:
            return ((a + 2) * d - (a + 3)) * d * d + 1
        if d < 2:
            return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
        return 0.0

    out = []
    for k in range(n_out):
        src = k * (n_in - 1) / (n_out - 1) if align_corners else (k + 0.5) * n_in / n_out - 0.5
        f = math.floor(src)
        acc = 0
        for t in range(-1, 3):
            acc = acc + np.take(x, min(max(f + t, 0), n_in - 1), axis) * w(src - (f + t))
        out.append(acc)
    return np.stack(out, axis)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float64", 1e-12)])
def test_bilinear(align_corners, dtype, tol):
    x = RNG.standard_normal((2, 3, 4, 5)).astype(dtype)
    out = F.interpolate(oar.to_tensor(x), size=[7, 3], mode="bilinear", align_corners=align_corners)
    ref = np_linear_axis(np_linear_axis(x, 2, 7, align_corners), 3, 3, align_corners)
    np.testing.assert_allclose(out.numpy(), ref, rtol=tol * 10, atol=tol)
    # channel-last gives the same numbers
    out = F.interpolate(oar.to_tensor(x.transpose(0, 2, 3, 1)), size=[7, 3], mode="bilinear",
                        align_corners=align_corners, data_format="NHWC")
    np.testing.assert_allclose(out.numpy(), ref.transpose(0, 2, 3, 1), rtol=tol * 10, atol=tol)


def test_linear_align_mode1_and_scale():
    x = RNG.standard_normal((1, 2, 5))
    out = F.interpolate(oar.to_tensor(x), scale_factor=2, mode="linear", align_mode=1)
    np.testing.assert_allclose(out.numpy(), np_linear_axis(x, 2, 10, False, 1), rtol=1e-12)
    out = F.upsample(oar.to_tensor(x), size=3, mode="linear")
    np.testing.assert_allclose(out.numpy(), np_linear_axis(x, 2, 3, False), rtol=1e-12)


def test_nearest_trilinear_bicubic():
    x = RNG.standard_normal((1, 2, 3, 4))
    out = F.interpolate(oar.to_tensor(x), size=[6, 3])
    np.testing.assert_allclose(out.numpy(), np_nearest_axis(np_nearest_axis(x, 2, 6), 3, 3))
    xi = oar.to_tensor(np.arange(6).reshape(1, 1, 2, 3))
    assert F.interpolate(xi, scale_factor=2).numpy()[0, 0, :, 0].tolist() == [0, 0, 3, 3]
    x5 = RNG.standard_normal((1, 1, 2, 3, 2))
    out = F.interpolate(oar.to_tensor(x5), size=[3, 4, 5], mode="trilinear", align_corners=True)
    ref = np_linear_axis(np_linear_axis(np_linear_axis(x5, 2, 3, True), 3, 4, True), 4, 5, True)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    for ac in (False, True):
        out = F.interpolate(oar.to_tensor(x), size=[5, 7], mode="bicubic", align_corners=ac)
        ref = np_cubic_axis(np_cubic_axis(x, 2, 5, ac), 3, 7, ac)
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)
    out = F.interpolate(oar.to_tensor(np.arange(4.0).reshape(1, 1, 4)), size=2, mode="area")
    np.testing.assert_allclose(out.numpy(), [[[0.5, 2.5]]])


@pytest.mark.parametrize("mode,shape,size", [("bilinear", (1, 2, 3, 3), [4, 5]), ("linear", (1, 1, 4), [3]),
                                             ("bicubic", (1, 1, 3, 3), [4, 2])])
def test_interpolate_grad(mode, shape, size):
    x = RNG.standard_normal(shape)
    check_grad(lambda t: F.interpolate(t, size=size, mode=mode), [x])
    check_grad(lambda t: F.interpolate(t, size=size, mode=mode, align_corners=True), [x])


def test_interpolate_errors():
    x = oar.ones([1, 1, 4, 4])
    pat = r"^\[oar.nn.functional.interpolate\]"
    with pytest.raises(ValueError, match=pat):
        F.interpolate(x, size=[2, 2], mode="linear")
    with pytest.raises(ValueError, match=pat):
        F.interpolate(x, size=[2, 2], scale_factor=2)
    with pytest.raises(ValueError, match=pat):
        F.interpolate(x)
    with pytest.raises(ValueError, match=pat):
        F.interpolate(x, size=[2], mode="bilinear")
    with pytest.raises(ValueError, match=pat):
        F.interpolate(x, size=[2, 2], mode="foo")
    with pytest.raises(ValueError, match=pat):
        F.interpolate(x, size=[2, 2], align_corners=True)
    with pytest.raises(TypeError, match=pat):
        F.interpolate([1.0], size=[2])


# ------------------------------------------------------------------------------------------ pixel / unfold

def test_pixel_shuffle_roundtrip():
    x = RNG.standard_normal((2, 8, 3, 2))
    y = F.pixel_shuffle(oar.to_tensor(x), 2)
    n, c, h, w = x.shape
    ref = x.reshape(n, 2, 2, 2, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, 2, h * 2, w * 2)
    np.testing.assert_allclose(y.numpy(), ref)
    np.testing.assert_allclose(F.pixel_unshuffle(y, 2).numpy(), x)
    xl = x.transpose(0, 2, 3, 1)
    yl = F.pixel_shuffle(oar.to_tensor(xl), 2, data_format="NHWC")
    np.testing.assert_allclose(yl.numpy(), ref.transpose(0, 2, 3, 1))
    np.testing.assert_allclose(F.pixel_unshuffle(yl, 2, "NHWC").numpy(), xl)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.pixel_shuffle\]"):
        F.pixel_shuffle(oar.ones([1, 3, 2, 2]), 2)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.pixel_unshuffle\]"):
        F.pixel_unshuffle(oar.ones([1, 1, 3, 2]), 2)
    assert nn.PixelShuffle(2)(oar.to_tensor(x)).shape == [2, 2, 6, 4]
    assert nn.PixelUnshuffle(2)(y).shape == [2, 8, 3, 2]


def np_unfold(x, k, s, p, d):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    oh = (xp.shape[2] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (xp.shape[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((n, c * k[0] * k[1], oh * ow))
    for ci in range(c):
        for i in range(k[0]):
            for j in range(k[1]):
                row = ci * k[0] * k[1] + i * k[1] + j
                for a in range(oh):
                    for b in range(ow):
                        out[:, row, a * ow + b] = xp[:, ci, a * s[0] + i * d[0], b * s[1] + j * d[1]]
    return out


def np_fold(cols, hw, k, s, p, d):
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    hp, wp = hw[0] + p[0] + p[2], hw[1] + p[1] + p[3]
    oh = (hp - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (wp - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((n, c, hp, wp))
    for ci in range(c):
        for i in range(k[0]):
            for j in range(k[1]):
                row = ci * k[0] * k[1] + i * k[1] + j
                for a in range(oh):
                    for b in range(ow):
                        out[:, ci, a * s[0] + i * d[0], b * s[1] + j * d[1]] += cols[:, row, a * ow + b]
    return out[:, :, p[0]:hp - p[2], p[1]:wp - p[3]]


@pytest.mark.parametrize("k,s,p,d", [([2, 2], [1, 1], [0, 0, 0, 0], [1, 1]), ([3, 2], [2, 1], [1, 0, 2, 1], [1, 2])])
def test_unfold_fold(k, s, p, d):
    x = RNG.standard_normal((2, 3, 6, 5))
    cols = F.unfold(oar.to_tensor(x), k, s, p, d)
    ref = np_unfold(x, k, s, p, d)
    np.testing.assert_allclose(cols.numpy(), ref)
    back = F.fold(oar.to_tensor(ref), [6, 5], k, s, p, d)
    np.testing.assert_allclose(back.numpy(), np_fold(ref, [6, 5], k, s, p, d), rtol=1e-12)
    assert nn.Unfold(k, s, p, d)(oar.to_tensor(x)).shape == list(ref.shape)
    assert nn.Fold([6, 5], k, s, p, d)(oar.to_tensor(ref)).shape == [2, 3, 6, 5]
    xf = x.astype("float32")
    np.testing.assert_allclose(F.unfold(oar.to_tensor(xf), k, s, p, d).numpy(), ref, rtol=1e-6)


def test_unfold_fold_grad_and_errors():
    x = RNG.standard_normal((1, 2, 4, 3))
    check_grad(lambda t: F.unfold(t, [2, 2], 1, 1, 1), [x])
    cols = RNG.standard_normal((1, 8, 4))
    check_grad(lambda t: F.fold(t, [3, 3], [2, 2]), [cols])
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.unfold\]"):
        F.unfold(oar.ones([1, 1, 2, 2]), 3)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.unfold\]"):
        F.unfold(oar.ones([1, 2, 2]), 1)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.fold\]"):
        F.fold(oar.ones([1, 8, 5]), [3, 3], 2)


# ------------------------------------------------------------------------------------------ misc

def test_sequence_mask():
    lengths = np.array([[0, 2], [3, 1]])
    out = F.sequence_mask(oar.to_tensor(lengths), 4, dtype="float32")
    np.testing.assert_array_equal(out.numpy(), (np.arange(4) < lengths[..., None]).astype("float32"))
    assert F.sequence_mask(oar.to_tensor([2, 3])).shape == [2, 3]
    assert F.sequence_mask(oar.to_tensor([2]), dtype="bool").dtype == oar.bool
    with pytest.raises(TypeError, match=r"^\[oar.nn.functional.sequence_mask\]"):
        F.sequence_mask(oar.to_tensor([1.0]))


@pytest.mark.parametrize("offset,dim1,dim2", [(0, -2, -1), (1, 0, 2), (-2, 2, 0)])
def test_diag_embed(offset, dim1, dim2):
    x = RNG.standard_normal((2, 3))
    out = F.diag_embed(oar.to_tensor(x), offset, dim1, dim2).numpy()
    n = 3 + abs(offset)
    ref = np.zeros((2, n, n))
    for b in range(2):
        ref[b] = np.diag(x[b], offset)
    # ref has axes (batch, dim1, dim2); move them to the requested positions
    nd = 3
    d1, d2 = dim1 % nd, dim2 % nd
    rest = [a for a in range(nd) if a not in (d1, d2)]
    order = [0] * nd
    order[rest[0]], order[d1], order[d2] = 0, 1, 2
    np.testing.assert_allclose(out, ref.transpose(order))
    check_grad(lambda t: F.diag_embed(t, offset, dim1, dim2), [x])
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.diag_embed\]"):
        F.diag_embed(oar.to_tensor(x), 0, 1, 1)


def test_affine_grid():
    theta = RNG.standard_normal((2, 2, 3))
    for ac in (True, False):
        g = F.affine_grid(oar.to_tensor(theta), [2, 1, 3, 4], align_corners=ac).numpy()
        xs = np.linspace(-1, 1, 4) * (1 if ac else 3 / 4)
        ys = np.linspace(-1, 1, 3) * (1 if ac else 2 / 3)
        for b in range(2):
            for i in range(3):
                for j in range(4):
                    np.testing.assert_allclose(g[b, i, j], theta[b] @ np.array([xs[j], ys[i], 1.0]), rtol=1e-12)


def test_upsample_layers():
    x = oar.to_tensor(RNG.standard_normal((1, 2, 3, 3)))
    assert nn.Upsample(scale_factor=2, mode="bilinear")(x).shape == [1, 2, 6, 6]
    a = nn.UpsamplingBilinear2D(size=[5, 4])(x).numpy()
    np.testing.assert_allclose(a, np_linear_axis(np_linear_axis(x.numpy(), 2, 5, True), 3, 4, True), rtol=1e-12)
    b = nn.UpsamplingNearest2D(scale_factor=2)(x).numpy()
    np.testing.assert_allclose(b, x.numpy().repeat(2, 2).repeat(2, 3))


def test_zero_size_noncontiguous_half():
    x0 = oar.zeros([0, 2, 3, 3])
    assert F.interpolate(x0, size=[5, 5], mode="bilinear").shape == [0, 2, 5, 5]
    assert F.unfold(x0, 2).shape == [0, 8, 4]
    q0 = oar.zeros([0, 3, 2, 4])
    assert F.scaled_dot_product_attention(q0, q0, q0).shape == [0, 3, 2, 4]
    # a transposed (non-contiguous) view gives the same numbers as its contiguous copy
    base = RNG.standard_normal((1, 3, 4, 2))
    view = oar.to_tensor(base).transpose([0, 3, 1, 2])
    dense = base.transpose(0, 3, 1, 2).copy()
    np.testing.assert_allclose(F.interpolate(view, size=[5, 3], mode="bilinear").numpy(),
                               np_linear_axis(np_linear_axis(dense, 2, 5, False), 3, 3, False), rtol=1e-12)
    np.testing.assert_allclose(F.unfold(view, 2).numpy(), np_unfold(dense, [2, 2], [1, 1], [0, 0, 0, 0], [1, 1]))
    for dt in ("float16", "bfloat16"):
        xh = oar.to_tensor(RNG.standard_normal((1, 1, 2, 3)).astype("float32")).astype(dt)
        ref = np_linear_axis(np_linear_axis(xh.astype("float32").numpy().astype(np.float64), 2, 4, True), 3, 5, True)
        out = F.interpolate(xh, size=[4, 5], mode="bilinear", align_corners=True)
        assert out.dtype == xh.dtype
        np.testing.assert_allclose(out.astype("float32").numpy(), ref, rtol=3e-2, atol=3e-2)
        qh = oar.to_tensor(RNG.standard_normal((1, 3, 2, 4)).astype("float32")).astype(dt)
        qf = qh.astype("float32").numpy().astype(np.float64)
        out = F.scaled_dot_product_attention(qh, qh, qh)
        np.testing.assert_allclose(out.astype("float32").numpy(), np_sdpa(qf, qf, qf), rtol=3e-2, atol=3e-2)


def np_grid_sample(x, grid, mode, padding, ac):
    n, c, h, w = x.shape
    _, ho, wo, _ = grid.shape

    def unnorm(g, size):
        return unnormalize(g, size, padding, ac)

    def at(b, xi, yi):
        if 0 <= xi < w and 0 <= yi < h:
            return x[b, :, yi, xi]
        return np.zeros(c)

    out = np.zeros((n, c, ho, wo))
    for b in range(n):
        for i in range(ho):
            for j in range(wo):
                px, py = unnorm(grid[b, i, j, 0], w), unnorm(grid[b, i, j, 1], h)
                if mode == "nearest":
                    out[b, :, i, j] = at(b, int(np.floor(px + 0.5)), int(np.floor(py + 0.5)))
                else:
                    x0, y0 = math.floor(px), math.floor(py)
                    fx, fy = px - x0, py - y0
                    out[b, :, i, j] = (at(b, x0, y0) * (1 - fx) * (1 - fy) + at(b, x0 + 1, y0) * fx * (1 - fy)
                                       + at(b, x0, y0 + 1) * (1 - fx) * fy + at(b, x0 + 1, y0 + 1) * fx * fy)
    return out


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("ac", [True, False])
def test_grid_sample(mode, padding, ac):
    x = RNG.standard_normal((2, 3, 4, 5))
    grid = RNG.uniform(-1.6, 1.6, (2, 3, 2, 2))
    out = F.grid_sample(oar.to_tensor(x), oar.to_tensor(grid), mode, padding, ac)
    np.testing.assert_allclose(out.numpy(), np_grid_sample(x, grid, mode, padding, ac), rtol=1e-10, atol=1e-12)


def test_grid_sample_grad_and_errors():
    x = RNG.standard_normal((1, 2, 3, 3))
    grid = RNG.uniform(-0.9, 0.9, (1, 2, 2, 2))
    check_grad(lambda a, g: F.grid_sample(a, g, align_corners=False), [x, grid])
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.grid_sample\]"):
        F.grid_sample(oar.ones([1, 1, 2, 2]), oar.ones([1, 2, 2, 3]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.grid_sample\]"):
        F.grid_sample(oar.ones([1, 1, 2, 2]), oar.ones([1, 2, 2, 2]), mode="bicubic")
