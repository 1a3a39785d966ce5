"""Pooling: forward against direct-loop NumPy references with Paddle's window
rules (padding, ceil_mode, exclusive, adaptive), masks, gradients and double
gradients against central differences, layers and errors."""
import numpy as np
import pytest

import oar
import oar.nn.functional as F
from gradcheck import numeric_grad

RNG = np.random.default_rng(0)


def np_pool(x, kernel, stride, pl, pr, ceil_mode=False, mode="max", exclusive=True, adaptive=False):
    """Returns (out, flat spatial argmax) with Paddle's windows."""
    nd = x.ndim - 2
    sp = x.shape[2:]
    if adaptive:
        out = list(kernel)
    else:
        out = [(i - k + a + b + (s - 1 if ceil_mode else 0)) // s + 1
               for i, k, s, a, b in zip(sp, kernel, stride, pl, pr)]
    y = np.zeros(x.shape[:2] + tuple(out))
    m = np.zeros(x.shape[:2] + tuple(out), dtype=np.int64)
    for o in np.ndindex(*out):
        sl, cnt = [], 1
        for j in range(nd):
            if adaptive:
                st, en = o[j] * sp[j] // out[j], -(-(o[j] + 1) * sp[j] // out[j])
            else:
                st = o[j] * stride[j] - pl[j]
                en = min(st + kernel[j], sp[j])
                st = max(st, 0)
            sl.append(slice(st, en))
            cnt *= en - st
        win = x[(slice(None), slice(None)) + tuple(sl)].reshape(x.shape[0], x.shape[1], -1)
        idx = (slice(None), slice(None)) + o
        if mode == "max":
            a = win.argmax(-1)
            y[idx] = win.max(-1)
            coords = np.unravel_index(a, [s.stop - s.start for s in sl])
            flat = np.zeros_like(a)
            for j in range(nd):
                flat = flat * sp[j] + coords[j] + sl[j].start
            m[idx] = flat
        else:
            div = cnt if (exclusive or adaptive) else int(np.prod(kernel))
            y[idx] = win.sum(-1) / div
    return y, m



MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
AVG = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
AAVG = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}
AMAX = {1: F.adaptive_max_pool1d, 2: F.adaptive_max_pool2d, 3: F.adaptive_max_pool3d}

# (nd, spatial, kernel, stride, padding (Paddle form), ceil_mode)
CASES = [
    (1, [9], 3, None, 0, False),
    (1, [10], 3, 2, 1, True),
    (2, [6, 7], 2, None, 0, False),
    (2, [7, 6], 2, None, 0, True),  # ceil_mode clips the last row of windows
    (2, [7, 8], [3, 2], [2, 1], [1, 0], False),
    (2, [7, 7], 3, 2, [1, 0, 1, 1], True),
    (2, [5, 6], 3, 2, "same", False),
    (3, [4, 5, 6], 2, [2, 1, 2], 0, True),
]


def expand(case):
    nd, sp, k, s, p, ceil = case
    k = [k] * nd if isinstance(k, int) else k
    s = k if s is None else ([s] * nd if isinstance(s, int) else s)
    if p == "same":
        pl, pr = [], []
        for i, kk, ss in zip(sp, k, s):
            t = max((-(-i // ss) - 1) * ss + kk - i, 0)
            pl.append(t // 2)
            pr.append(t - t // 2)
    elif isinstance(p, int):
        pl = pr = [p] * nd
    elif len(p) == nd:
        pl = pr = list(p)
    else:
        pl, pr = list(p[0::2]), list(p[1::2])
    return k, s, pl, pr


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool(case, dtype):
    nd, sp, k, s, p, ceil = case
    x = RNG.standard_normal((2, 3, *sp))
    kk, ss, pl, pr = expand(case)
    ref, mask = np_pool(x, kk, ss, pl, pr, ceil)
    y, m = MAX[nd](oar.to_tensor(x.astype(dtype)), k, stride=s, padding=p, return_mask=True, ceil_mode=ceil)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-6)
    np.testing.assert_array_equal(m.numpy(), mask)


# The 2x2 stride-2 kernel: rows without an odd last column (one pass over many rows), and planes
# in several chunks ([64, 64]: two planes per chunk).
TIE_CASES = CASES + [(2, [13, 12], 3, 2, 1, False), (2, [9, 11], [2, 4], [1, 3], [1, 2], True),
                     (1, [12], 4, 3, 2, True), (2, [8, 8], 2, 2, 0, False), (2, [64, 64], 2, None, 0, False)]


@pytest.mark.parametrize("case", TIE_CASES, ids=[str(i) for i in range(len(TIE_CASES))])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_max_pool_ties_and_nans_take_the_first_in_window_order(case, dtype):
    nd, sp, k, s, p, ceil = case
    x = RNG.integers(-2, 3, (2, 3, *sp)).astype("float64")  # many equal maxima per window
    x[RNG.random(x.shape) < 0.05] = np.nan
    kk, ss, pl, pr = expand(case)
    ref, mask = np_pool(x, kk, ss, pl, pr, ceil)
    y, m = MAX[nd](oar.to_tensor(x.astype("float32")).astype(dtype), k, stride=s, padding=p, return_mask=True,
                   ceil_mode=ceil)
    np.testing.assert_array_equal(y.astype("float32").numpy(), ref.astype("float32"))
    np.testing.assert_array_equal(m.numpy(), mask)


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
@pytest.mark.parametrize("exclusive", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_avg_pool(case, exclusive, dtype):
    nd, sp, k, s, p, ceil = case
    x = RNG.standard_normal((2, 3, *sp))
    kk, ss, pl, pr = expand(case)
    ref, _ = np_pool(x, kk, ss, pl, pr, ceil, mode="avg", exclusive=exclusive)
    y = AVG[nd](oar.to_tensor(x.astype(dtype)), k, stride=s, padding=p, ceil_mode=ceil, exclusive=exclusive)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("nd,sp,out", [(1, [7], [3]), (2, [7, 5], [3, 2]), (2, [4, 4], [4, 4]), (3, [5, 4, 3], [2, 3, 2])])
def test_adaptive(nd, sp, out):
    x = RNG.standard_normal((2, 2, *sp))
    ref_a, _ = np_pool(x, out, None, None, None, mode="avg", adaptive=True)
    ref_m, mask = np_pool(x, out, None, None, None, adaptive=True)
    np.testing.assert_allclose(AAVG[nd](oar.to_tensor(x), out).numpy(), ref_a, rtol=1e-10)
    y, m = AMAX[nd](oar.to_tensor(x), out, return_mask=True)
    np.testing.assert_allclose(y.numpy(), ref_m, rtol=1e-10)
    np.testing.assert_array_equal(m.numpy(), mask)


def test_channel_last_and_divisor():
    x = RNG.standard_normal((2, 3, 6, 6))
    ref, _ = np_pool(x, [2, 2], [2, 2], [0, 0], [0, 0])
    y = F.max_pool2d(oar.to_tensor(x.transpose(0, 2, 3, 1).copy()), 2, data_format="NHWC")
    np.testing.assert_allclose(y.numpy(), ref.transpose(0, 2, 3, 1))
    ref_a, _ = np_pool(x, [3, 3], [3, 3], [0, 0], [0, 0], mode="avg")
    y = F.avg_pool2d(oar.to_tensor(x), 3, divisor_override=4)
    np.testing.assert_allclose(y.numpy(), ref_a * 9 / 4, rtol=1e-10)
    ref_n, _ = np_pool(x, [3, 2], [3, 2], [0, 0], [0, 0], mode="avg", adaptive=True)
    y = F.adaptive_avg_pool2d(oar.to_tensor(x.transpose(0, 2, 3, 1).copy()), [3, 2], data_format="NHWC")
    np.testing.assert_allclose(y.numpy(), ref_n.transpose(0, 2, 3, 1), rtol=1e-10)


@pytest.mark.parametrize("kind", ["max", "avg", "avg_incl", "amax", "aavg"])
def test_grad_and_double_grad(kind):
    x = RNG.standard_normal((1, 2, 5, 6))
    if kind == "max":
        fn = lambda t: F.max_pool2d(t, 3, stride=2, padding=1, ceil_mode=True)  # noqa: E731
        ref = lambda a: np_pool(a, [3, 3], [2, 2], [1, 1], [1, 1], True)[0]  # noqa: E731
    elif kind == "avg":
        fn = lambda t: F.avg_pool2d(t, [3, 2], stride=[2, 1], padding=1)  # noqa: E731
        ref = lambda a: np_pool(a, [3, 2], [2, 1], [1, 1], [1, 1], mode="avg")[0]  # noqa: E731
    elif kind == "avg_incl":
        fn = lambda t: F.avg_pool2d(t, 2, padding=1, exclusive=False, ceil_mode=True)  # noqa: E731
        ref = lambda a: np_pool(a, [2, 2], [2, 2], [1, 1], [1, 1], True, mode="avg", exclusive=False)[0]  # noqa: E731
    elif kind == "amax":
        fn = lambda t: F.adaptive_max_pool2d(t, [2, 4])  # noqa: E731
        ref = lambda a: np_pool(a, [2, 4], None, None, None, adaptive=True)[0]  # noqa: E731
    else:
        fn = lambda t: F.adaptive_avg_pool2d(t, [3, 4])  # noqa: E731
        ref = lambda a: np_pool(a, [3, 4], None, None, None, mode="avg", adaptive=True)[0]  # noqa: E731
    v = RNG.standard_normal(ref(x).shape)
    tx = oar.to_tensor(x, stop_gradient=False)
    tv = oar.to_tensor(v, stop_gradient=False)
    (gx,) = oar.grad([(fn(tx) * tv).sum()], [tx], create_graph=True)
    np.testing.assert_allclose(gx.numpy(), numeric_grad(lambda a: (ref(a) * v).sum(), x), rtol=1e-6, atol=1e-7)
    # The first gradient is linear in v: d/dv <gx(v), u> = pool applied to u at the same windows.
    u = RNG.standard_normal(x.shape)
    (gv,) = oar.grad([(gx * oar.to_tensor(u)).sum()], [tv])
    expect = np.zeros_like(v)
    for i in np.ndindex(v.shape):
        e = np.zeros_like(v)
        e[i] = 1.0
        expect[i] = (numeric_grad(lambda a: (ref(a) * e).sum(), x) * u).sum()
    np.testing.assert_allclose(gv.numpy(), expect, rtol=1e-6, atol=1e-7)


def test_layers():
    x = oar.to_tensor(RNG.standard_normal((1, 2, 4, 4)))
    y, m = oar.nn.MaxPool2D(2, return_mask=True)(x)
    assert y.shape == [1, 2, 2, 2] and str(m.dtype).endswith("int32")
    assert oar.nn.AvgPool1D(2, 1)(oar.ones([1, 1, 4])).shape == [1, 1, 3]
    assert oar.nn.AdaptiveAvgPool2D(1)(x).shape == [1, 2, 1, 1]
    assert oar.nn.AdaptiveMaxPool3D([1, 2, 2])(oar.ones([1, 1, 2, 4, 4])).shape == [1, 1, 1, 2, 2]
    assert oar.nn.MaxPool3D(2, ceil_mode=True)(oar.ones([1, 1, 3, 3, 3])).shape == [1, 1, 2, 2, 2]


def test_zero_size_and_noncontiguous():
    assert F.max_pool2d(oar.zeros([0, 2, 4, 4]), 2).shape == [0, 2, 2, 2]
    x = RNG.standard_normal((1, 2, 4, 6))
    xv = oar.transpose(oar.to_tensor(x.transpose(0, 1, 3, 2).copy()), [0, 1, 3, 2])
    np.testing.assert_allclose(F.avg_pool2d(xv, 2).numpy(), np_pool(x, [2, 2], [2, 2], [0, 0], [0, 0], mode="avg")[0])


ERRORS = [
    (lambda: F.max_pool2d(oar.ones([1, 1, 2, 2]), 3), ValueError, "oar.nn.functional.max_pool2d", "larger"),
    (lambda: F.max_pool2d(oar.ones([1, 1, 4, 4]), 0), ValueError, "oar.nn.functional.max_pool2d", "kernel_size"),
    (lambda: F.max_pool2d(oar.ones([1, 4, 4]), 2), ValueError, "oar.nn.functional.max_pool2d", "4-D"),
    (lambda: F.avg_pool2d(oar.ones([1, 1, 4, 4]), 2, data_format="HWNC"), ValueError, "oar.nn.functional.avg_pool2d",
     "data_format"),
    (lambda: F.avg_pool2d(oar.ones([1, 1, 4, 4]), 2, stride=-1), ValueError, "oar.nn.functional.avg_pool2d", "stride"),
    (lambda: F.avg_pool1d(oar.ones([1, 1, 4]), 2, padding=[1, 2, 3]), ValueError, "oar.nn.functional.avg_pool1d",
     "padding"),
    (lambda: F.adaptive_avg_pool2d(oar.ones([1, 1, 4, 4]), 0), ValueError, "oar.nn.functional.adaptive_avg_pool2d",
     "output_size"),
    (lambda: F.adaptive_max_pool1d(oar.ones([1, 1, 4]), [1, 2]), ValueError, "oar.nn.functional.adaptive_max_pool1d",
     "output_size"),
    (lambda: F.max_pool2d(oar.ones([1, 1, 4, 4], dtype="int64"), 2), TypeError, "oar.nn.functional.max_pool2d",
     "floating"),
]


@pytest.mark.parametrize("fn,exc,api,msg", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(fn, exc, api, msg):
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value).startswith(f"[{api}]") and msg in str(e.value), str(e.value)
