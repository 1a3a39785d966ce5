"""Convolutions: forward against a NumPy reference (float32, float64 and
bfloat16), gradients and double gradients against central differences in
float64, Paddle's padding forms, layers, errors, and that float32 runs on
oneDNN."""
import os
import subprocess
import sys

import numpy as np
import pytest

import oar
import oar.nn.functional as F
from gradcheck import numeric_grad

RNG = np.random.default_rng(0)


def np_conv(x, w, stride, pl, pr, dil, groups):
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(pl, pr)))
    n, c = x.shape[:2]
    o, k = w.shape[0], w.shape[2:]
    out = [(xp.shape[2 + i] - (k[i] - 1) * dil[i] - 1) // stride[i] + 1 for i in range(nd)]
    y = np.zeros((n, o, *out), dtype=np.float64)
    cg, og = c // groups, o // groups
    for g in range(groups):
        xs, ws = xp[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og]
        for kid in np.ndindex(*k):
            sl = tuple(slice(kid[i] * dil[i], kid[i] * dil[i] + (out[i] - 1) * stride[i] + 1, stride[i])
                       for i in range(nd))
            patch = xs[(slice(None), slice(None)) + sl]
            y[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch, ws[(slice(None), slice(None)) + kid])
    return y


def np_conv_transpose(x, w, stride, pl, pr, dil, groups, out_sp):
    nd = x.ndim - 2
    n, cin = x.shape[:2]
    og, k = w.shape[1], w.shape[2:]
    cg = cin // groups
    full = [(x.shape[2 + i] - 1) * stride[i] + (k[i] - 1) * dil[i] + 1 for i in range(nd)]
    size = [max(full[i], out_sp[i] + pl[i]) for i in range(nd)]
    y = np.zeros((n, og * groups, *size))
    for g in range(groups):
        xs, ws = x[:, g * cg:(g + 1) * cg], w[g * cg:(g + 1) * cg]
        for kid in np.ndindex(*k):
            sl = tuple(slice(kid[i] * dil[i], kid[i] * dil[i] + (x.shape[2 + i] - 1) * stride[i] + 1, stride[i])
                       for i in range(nd))
            y[(slice(None), slice(g * og, (g + 1) * og)) + sl] += np.einsum(
                "nc...,co->no...", xs, ws[(slice(None), slice(None)) + kid])
    crop = tuple(slice(pl[i], pl[i] + out_sp[i]) for i in range(nd))
    return y[(slice(None), slice(None)) + crop]



FN = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
TFN = {1: F.conv1d_transpose, 2: F.conv2d_transpose, 3: F.conv3d_transpose}

# (nd, N, C, O, spatial, kernel, stride, padding (Paddle form), dilation, groups)
CASES = [
    (1, 2, 3, 4, [9], [3], 1, 0, 1, 1),
    (1, 2, 4, 6, [10], [3], 2, [1, 2], 2, 2),
    (2, 2, 3, 4, [7, 6], [3, 3], 1, 1, 1, 1),
    (2, 1, 4, 4, [8, 9], [3, 2], [2, 1], [1, 0, 2, 1], [1, 2], 4),
    (2, 2, 2, 3, [5, 5], [2, 3], 1, "same", 1, 1),
    (2, 2, 2, 3, [6, 7], [3, 3], 2, "same", 1, 1),
    (2, 2, 2, 3, [5, 6], [3, 2], 1, "valid", [2, 1], 1),
    (2, 1, 2, 2, [5, 5], [3, 3], 1, [[0, 0], [0, 0], [1, 2], [0, 1]], 1, 1),
    (3, 1, 2, 4, [4, 5, 4], [2, 3, 2], [1, 2, 1], 1, 1, 2),
]
IDS = [f"{c[0]}d-{i}" for i, c in enumerate(CASES)]


def pads_of(padding, nd, spatial, kernel, stride, dil):
    """NumPy-side reading of Paddle's padding forms."""
    stride = [stride] * nd if isinstance(stride, int) else stride
    dil = [dil] * nd if isinstance(dil, int) else dil
    if padding == "valid":
        return [0] * nd, [0] * nd, stride, dil
    if padding == "same":
        pl, pr = [], []
        for i, k, s in zip(spatial, kernel, stride):
            o = -(-i // s)
            t = max((o - 1) * s + k - i, 0)
            pl.append(t // 2)
            pr.append(t - t // 2)
        return pl, pr, stride, [1] * nd
    if isinstance(padding, int):
        return [padding] * nd, [padding] * nd, stride, dil
    if isinstance(padding[0], list):
        return [p[0] for p in padding[2:]], [p[1] for p in padding[2:]], stride, dil
    if len(padding) == nd:
        return list(padding), list(padding), stride, dil
    return list(padding[0::2]), list(padding[1::2]), stride, dil


def make(case, dtype):
    nd, n, c, o, sp, k, stride, padding, dil, groups = case
    x = RNG.standard_normal((n, c, *sp))
    w = RNG.standard_normal((o, c // groups, *k))
    b = RNG.standard_normal(o)
    pl, pr, st, dl = pads_of(padding, nd, sp, k, stride, dil)
    ref = np_conv(x, w, st, pl, pr, dl, groups) + b.reshape([1, o] + [1] * nd)
    return x.astype(dtype), w.astype(dtype), b.astype(dtype), ref


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("dtype,rtol,atol", [("float32", 1e-4, 1e-4), ("float64", 1e-10, 1e-10)])
def test_forward(case, dtype, rtol, atol):
    nd, _, _, _, _, _, stride, padding, dil, groups = case
    x, w, b, ref = make(case, dtype)
    y = FN[nd](oar.to_tensor(x), oar.to_tensor(w), oar.to_tensor(b), stride=stride, padding=padding, dilation=dil,
               groups=groups)
    assert str(y.dtype).endswith(dtype)
    np.testing.assert_allclose(y.numpy(), ref, rtol=rtol, atol=atol)


def test_forward_bfloat16():
    x, w, b, ref = make(CASES[2], "float32")
    y = F.conv2d(oar.to_tensor(x).astype("bfloat16"), oar.to_tensor(w).astype("bfloat16"), padding=1)
    assert str(y.dtype).endswith("bfloat16")
    ref = ref - b.reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y.astype("float32").numpy(), ref, rtol=0.05, atol=0.2)


def test_channel_last_and_noncontiguous():
    x, w, b, ref = make(CASES[2], "float64")
    xt = oar.to_tensor(x.transpose(0, 2, 3, 1).copy())
    y = F.conv2d(xt, oar.to_tensor(w), oar.to_tensor(b), padding=1, data_format="NHWC")
    np.testing.assert_allclose(y.numpy(), ref.transpose(0, 2, 3, 1), rtol=1e-10)
    # A transposed (non-contiguous) view as input.
    xv = oar.transpose(oar.to_tensor(x.transpose(0, 1, 3, 2).copy()), [0, 1, 3, 2])
    y2 = F.conv2d(xv, oar.to_tensor(w), oar.to_tensor(b), padding=1)
    np.testing.assert_allclose(y2.numpy(), ref, rtol=1e-10)
    x1 = RNG.standard_normal((2, 6, 3))
    w1 = RNG.standard_normal((4, 3, 2))
    y1 = F.conv1d(oar.to_tensor(x1), oar.to_tensor(w1), data_format="NLC")
    np.testing.assert_allclose(y1.numpy(), np_conv(x1.transpose(0, 2, 1), w1, [1], [0], [0], [1], 1).transpose(0, 2, 1))


@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[5], CASES[8]], ids=["1d", "2d-groups", "2d-same", "3d"])
def test_grad(case):
    nd, n, c, o, sp, k, stride, padding, dil, groups = case
    x, w, b, _ = make(case, "float64")
    pl, pr, st, dl = pads_of(padding, nd, sp, k, stride, dil)
    v = RNG.standard_normal(np_conv(x, w, st, pl, pr, dl, groups).shape)
    tx, tw, tb = (oar.to_tensor(a, stop_gradient=False) for a in (x, w, b))
    y = FN[nd](tx, tw, tb, stride=stride, padding=padding, dilation=dil, groups=groups)
    (y * oar.to_tensor(v)).sum().backward()
    np.testing.assert_allclose(tx.grad.numpy(), numeric_grad(lambda a: (np_conv(a, w, st, pl, pr, dl, groups) * v).sum(), x),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tw.grad.numpy(), numeric_grad(lambda a: (np_conv(x, a, st, pl, pr, dl, groups) * v).sum(), w),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tb.grad.numpy(), v.sum(axis=tuple(i for i in range(v.ndim) if i != 1)), rtol=1e-10)


def test_double_grad():
    # d/dw <d/dx <conv(x, w), v>, u> = d/dw <conv(u, w), v> (conv is bilinear).
    st, pl, pr, dl, g = [2, 1], [1, 0], [0, 1], [1, 2], 2
    x = RNG.standard_normal((2, 4, 6, 7))
    w = RNG.standard_normal((4, 2, 3, 2))
    v = RNG.standard_normal(np_conv(x, w, st, pl, pr, dl, g).shape)
    u = RNG.standard_normal(x.shape)
    tx, tw, tv = (oar.to_tensor(a, stop_gradient=False) for a in (x, w, v))
    y = F.conv2d(tx, tw, stride=st, padding=[pl[0], pr[0], pl[1], pr[1]], dilation=dl, groups=g)
    (gx,) = oar.grad([(y * tv).sum()], [tx], create_graph=True)
    gw, gv = oar.grad([(gx * oar.to_tensor(u)).sum()], [tw, tv])
    np.testing.assert_allclose(gw.numpy(), numeric_grad(lambda a: (np_conv(u, a, st, pl, pr, dl, g) * v).sum(), w),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gv.numpy(), np_conv(u, w, st, pl, pr, dl, g), rtol=1e-10, atol=1e-10)
    # Third order through conv_grad_weight: d/dx <d/dw <conv(x, w), v>, h>.
    (gw1,) = oar.grad([(y * tv).sum()], [tw], create_graph=True)
    h = RNG.standard_normal(w.shape)
    (gx2,) = oar.grad([(gw1 * oar.to_tensor(h)).sum()], [tx])
    np.testing.assert_allclose(gx2.numpy(), numeric_grad(lambda a: (np_conv(a, h, st, pl, pr, dl, g) * v).sum(), x),
                               rtol=1e-6, atol=1e-6)


# (nd, N, Cin, Cout, spatial, kernel, stride, padding, output_padding, dilation, groups)
TCASES = [
    (1, 2, 3, 2, [5], [3], 2, 1, 1, 1, 1),
    (2, 2, 4, 6, [3, 4], [3, 2], [2, 1], [1, 0], 0, [1, 2], 2),
    (2, 1, 2, 3, [4, 4], [3, 3], 2, [1, 2, 0, 1], [1, 0], 1, 1),
    (3, 1, 2, 2, [2, 3, 2], [2, 2, 3], [2, 1, 2], 0, 0, 1, 1),
]


@pytest.mark.parametrize("case", TCASES, ids=[f"{c[0]}d-{i}" for i, c in enumerate(TCASES)])
@pytest.mark.parametrize("dtype,tol", [("float32", 1e-4), ("float64", 1e-10)])
def test_transpose_forward(case, dtype, tol):
    nd, n, cin, cout, sp, k, stride, padding, opad, dil, groups = case
    x = RNG.standard_normal((n, cin, *sp))
    w = RNG.standard_normal((cin, cout // groups, *k))
    pl, pr, st, dl = pads_of(padding, nd, sp, k, stride, dil)
    op = [opad] * nd if isinstance(opad, int) else opad
    out = [(i - 1) * s - a - b_ + d * (kk - 1) + 1 + p for i, s, a, b_, d, kk, p in zip(sp, st, pl, pr, dl, k, op)]
    ref = np_conv_transpose(x, w, st, pl, pr, dl, groups, out)
    y = TFN[nd](oar.to_tensor(x.astype(dtype)), oar.to_tensor(w.astype(dtype)), stride=stride, padding=padding,
                output_padding=opad, dilation=dil, groups=groups)
    assert y.shape == list(ref.shape)
    np.testing.assert_allclose(y.numpy(), ref, rtol=tol, atol=tol)
    # The same result through output_size.
    y2 = TFN[nd](oar.to_tensor(x), oar.to_tensor(w), stride=stride, padding=padding, dilation=dil, groups=groups,
                 output_size=out)
    np.testing.assert_allclose(y2.numpy(), ref, rtol=1e-10, atol=1e-10)


def test_transpose_grad():
    x = RNG.standard_normal((1, 2, 3, 3))
    w = RNG.standard_normal((2, 3, 3, 2))
    out = [6, 7]
    ref = lambda a, b: np_conv_transpose(a, b, [2, 2], [1, 0], [1, 0], [1, 1], 1, out)  # noqa: E731
    v = RNG.standard_normal(ref(x, w).shape)
    tx, tw = oar.to_tensor(x, stop_gradient=False), oar.to_tensor(w, stop_gradient=False)
    (F.conv2d_transpose(tx, tw, stride=2, padding=[1, 0], output_padding=1) * oar.to_tensor(v)).sum().backward()
    np.testing.assert_allclose(tx.grad.numpy(), numeric_grad(lambda a: (ref(a, w) * v).sum(), x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tw.grad.numpy(), numeric_grad(lambda a: (ref(x, a) * v).sum(), w), rtol=1e-6, atol=1e-6)


def test_layers():
    oar.seed(1) if hasattr(oar, "seed") else None
    conv = oar.nn.Conv2D(3, 8, 3, padding=1)
    assert conv.weight.shape == [8, 3, 3, 3] and conv.bias.shape == [8]
    assert np.all(conv.bias.numpy() == 0)
    std = conv.weight.numpy().std()
    assert 0.5 * (2.0 / 27) ** 0.5 < std < 1.5 * (2.0 / 27) ** 0.5  # Paddle's Normal(0, sqrt(2 / fan_in))
    x = RNG.standard_normal((2, 3, 5, 5)).astype("float32")
    ref = np_conv(x, conv.weight.numpy(), [1, 1], [1, 1], [1, 1], [1, 1], 1)
    np.testing.assert_allclose(conv(oar.to_tensor(x)).numpy(), ref, rtol=1e-4, atol=1e-4)
    assert sorted(conv.state_dict().keys()) == ["bias", "weight"]
    assert oar.nn.Conv1D(2, 4, 3, bias_attr=False).bias is None
    assert oar.nn.Conv3D(2, 4, 3, groups=2).weight.shape == [4, 1, 3, 3, 3]
    up = oar.nn.Conv2DTranspose(4, 2, 3, stride=2)
    assert up.weight.shape == [4, 2, 3, 3]
    assert up(oar.ones([1, 4, 3, 3]), output_size=[8, 8]).shape == [1, 2, 8, 8]
    assert oar.nn.Conv1DTranspose(2, 2, 2, stride=2)(oar.ones([1, 2, 3])).shape == [1, 2, 6]
    refl = oar.nn.Conv2D(1, 1, 3, padding=1, padding_mode="reflect", bias_attr=False)
    xr = RNG.standard_normal((1, 1, 4, 4)).astype("float32")
    xp = np.pad(xr, [(0, 0), (0, 0), (1, 1), (1, 1)], mode="reflect")
    np.testing.assert_allclose(refl(oar.to_tensor(xr)).numpy(),
                               np_conv(xp, refl.weight.numpy(), [1, 1], [0, 0], [0, 0], [1, 1], 1), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match=r"^\[oar.nn.Conv2D\]"):
        oar.nn.Conv2D(3, 4, 3, groups=2)


def test_zero_size_batch():
    y = F.conv2d(oar.zeros([0, 3, 5, 5]), oar.ones([2, 3, 3, 3]))
    assert y.shape == [0, 2, 3, 3]


ERRORS = [
    (lambda: F.conv2d(oar.ones([1, 3, 5, 5]), oar.ones([2, 4, 3, 3])), "channels"),
    (lambda: F.conv2d(oar.ones([1, 4, 5, 5]), oar.ones([3, 2, 3, 3]), groups=2), "divisible"),
    (lambda: F.conv2d(oar.ones([1, 3, 5, 5]), oar.ones([4, 1, 3, 3]), groups=2), "divisible"),
    (lambda: F.conv2d(oar.ones([1, 1, 2, 2]), oar.ones([1, 1, 3, 3])), "larger than the padded input"),
    (lambda: F.conv2d(oar.ones([1, 1, 4, 4]), oar.ones([1, 1, 3, 3]), data_format="NCWH"), "data_format"),
    (lambda: F.conv2d(oar.ones([1, 1, 4]), oar.ones([1, 1, 3, 3])), "4-D input"),
    (lambda: F.conv2d(oar.ones([1, 1, 4, 4]), oar.ones([1, 1, 3])), "weight"),
    (lambda: F.conv2d(oar.ones([1, 1, 4, 4]), oar.ones([1, 1, 3, 3]), stride=0), "stride"),
    (lambda: F.conv2d(oar.ones([1, 1, 4, 4]), oar.ones([1, 1, 3, 3]), padding=-1), "padding"),
    (lambda: F.conv2d(oar.ones([1, 1, 4, 4]), oar.ones([1, 1, 3, 3]), padding="full"), "padding"),
    (lambda: F.conv2d(oar.ones([1, 1, 4, 4]), oar.ones([1, 1, 3, 3]), padding=[1, 2, 3]), "padding"),
    (lambda: F.conv2d(oar.ones([1, 1, 4, 4]), oar.ones([1, 1, 3, 3]), padding=[[1, 1], [0, 0], [0, 0], [0, 0]]),
     "batch and channel"),
    (lambda: F.conv2d(oar.ones([1, 2, 4, 4]), oar.ones([2, 2, 3, 3]), oar.ones([3])), "bias"),
    (lambda: F.conv2d_transpose(oar.ones([1, 2, 4, 4]), oar.ones([3, 2, 3, 3])), "channels"),
    (lambda: F.conv2d_transpose(oar.ones([1, 2, 4, 4]), oar.ones([2, 2, 3, 3]), output_padding=1), "output_padding"),
    (lambda: F.conv2d_transpose(oar.ones([1, 2, 4, 4]), oar.ones([2, 2, 3, 3]), output_size=[9, 9]), "output_size"),
]


@pytest.mark.parametrize("fn,msg", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(fn, msg):
    with pytest.raises(ValueError) as e:
        fn()
    text = str(e.value)
    assert text.startswith("[oar.nn.functional.conv2d") and msg in text, text


def test_dtype_errors():
    with pytest.raises(TypeError, match=r"^\[oar.nn.functional.conv2d\]"):
        F.conv2d(oar.ones([1, 1, 4, 4], dtype="int64"), oar.ones([1, 1, 3, 3], dtype="int64"))
    with pytest.raises(TypeError, match=r"^\[oar.nn.functional.conv2d\]"):
        F.conv2d(oar.ones([1, 1, 4, 4]), oar.ones([1, 1, 3, 3], dtype="float64"))


def test_float32_runs_on_onednn():
    # oneDNN reports each primitive it runs when DNNL_VERBOSE is set; a naive
    # loop would report nothing.
    code = ("import oar, oar.nn.functional as F\n"
            "F.conv2d(oar.rand([64, 3, 32, 32]), oar.rand([16, 3, 3, 3]), padding=1)\n")
    env = dict(os.environ, DNNL_VERBOSE="1", ONEDNN_VERBOSE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert any("exec" in line and "convolution" in line and "mb64" in line for line in out.splitlines()), out
