"""The losses, norms and containers added to oar.nn for Paddle 3.x: forward vs NumPy forms of Paddle's
definitions (checked side by side with Paddle 3.3.1), gradients vs finite differences, and errors."""
import numpy as np
import pytest

import oar
import oar.nn.functional as F

T = oar.to_tensor

def red(l, reduction):
    return l.mean() if reduction == 'mean' else l.sum() if reduction == 'sum' else l

def gaussian_nll(x, y, var, full=False, eps=1e-6, reduction='mean'):
    if var.ndim == x.ndim - 1 or (var.shape != x.shape and var.shape[-1] == 1 and var.ndim == x.ndim):
        var = var.reshape(var.shape[:x.ndim - 1] + (1,)) if var.ndim == x.ndim - 1 else var
    var = np.maximum(var, eps)
    l = 0.5 * (np.log(var) + (x - y) ** 2 / var)
    if full:
        l = l + 0.5 * np.log(2 * np.pi)
    return red(l, reduction)

def poisson_nll(x, y, log_input=True, full=False, eps=1e-8, reduction='mean'):
    l = np.exp(x) - y * x if log_input else x - y * np.log(x + eps)
    if full:
        st = y * np.log(np.where(y > 1, y, 1)) - y + 0.5 * np.log(2 * np.pi * np.where(y > 1, y, 1))
        l = l + np.where(y > 1, st, 0)
    return red(l, reduction)

def logsig(z):
    return -np.logaddexp(0, -z)

def mlsm(x, y, w=None, reduction='mean'):
    l = -(y * logsig(x) + (1 - y) * logsig(-x))
    if w is not None:
        l = l * w
    return red(l.mean(-1), reduction)

def multi_margin(x, y, p=1, margin=1.0, w=None, reduction='mean'):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j == y[i]:
                continue
            v = max(0.0, margin - x[i, y[i]] + x[i, j]) ** p
            if w is not None:
                v *= w[y[i]]
            out[i] += v
    return red(out / c, reduction)

def multi_label_margin(x, y, reduction='mean'):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        tg = []
        for k in range(c):
            if y[i, k] < 0:
                break
            tg.append(y[i, k])
        for j in tg:
            for k in range(c):
                if k in tg:
                    continue
                out[i] += max(0.0, 1 - (x[i, j] - x[i, k]))
    return red(out / c, reduction)

def pdist(a, b, p=2, eps=1e-6):
    return (np.abs(a - b + eps) ** p).sum(-1) ** (1 / p)

def triplet_dist(a, pos, neg, fn=None, margin=1.0, swap=False, reduction='mean'):
    fn = fn or pdist
    dp, dn = fn(a, pos), fn(a, neg)
    if swap:
        dn = np.minimum(dn, fn(pos, neg))
    return red(np.maximum(dp - dn + margin, 0), reduction)

def dice(x, lab, eps=1e-5):
    c = x.shape[-1]
    oh = np.eye(c)[lab[..., 0]]
    axes = tuple(range(1, x.ndim))
    inse = (x * oh).sum(axes)
    den = x.sum(axes) + oh.sum(axes)
    return (1 - 2 * inse / (den + eps)).mean()

def npair(a, p, labels, l2_reg=0.002):
    lab = (labels[:, None] == labels[None, :]).astype(float)
    lab = lab / lab.sum(1, keepdims=True)
    l2 = ((a ** 2).sum(1).mean() + (p ** 2).sum(1).mean()) * 0.25 * l2_reg
    s = a @ p.T
    lp = s - np.log(np.exp(s - s.max(1, keepdims=True)).sum(1, keepdims=True)) - s.max(1, keepdims=True)
    ce = (-(lab * lp).sum(1)).mean()
    return ce + l2

def margin_ce(logits, label, m1=1.0, m2=0.5, m3=0.0, s=64.0, reduction='mean'):
    n, c = logits.shape
    z = logits.copy()
    th = np.arccos(np.clip(z[np.arange(n), label], -1, 1))
    z[np.arange(n), label] = np.cos(m1 * th + m2) - m3
    z = z * s
    lp = z - z.max(1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(1, keepdims=True))
    l = -lp[np.arange(n), label][:, None]
    return red(l, reduction), np.exp(lp)

def hsigmoid(x, label, num_classes, w, b=None):
    n = x.shape[0]
    out = np.zeros((n, 1))
    for i in range(n):
        c = int(label[i]) + num_classes
        length = int(np.floor(np.log2(c)))
        for j in range(length):
            idx = (c >> (j + 1)) - 1
            bit = (c >> j) & 1
            pre = x[i] @ w[idx] + (b[idx] if b is not None else 0)
            pre = np.clip(pre, -40, 40)
            out[i, 0] += np.logaddexp(0, pre) - bit * pre
    return out

def hsigmoid_custom(x, w, b, table, code):
    n = x.shape[0]
    out = np.zeros((n, 1))
    for i in range(n):
        for j in range(table.shape[1]):
            idx = table[i, j]
            if idx < 0:
                break
            pre = np.clip(x[i] @ w[idx] + (b[idx] if b is not None else 0), -40, 40)
            out[i, 0] += np.logaddexp(0, pre) - code[i, j] * pre
    return out


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[i] += eps
        m[i] -= eps
        g[i] = (f(p) - f(m)) / (2 * eps)
    return g


R = np.random.default_rng(0)
X = R.standard_normal((3, 4))
Y = R.standard_normal((3, 4))


@pytest.mark.parametrize("kw", [{}, {"full": True}, {"reduction": "none"}, {"reduction": "sum"}])
def test_gaussian_nll(kw):
    v = R.random((3, 4)) + 0.1
    np.testing.assert_allclose(F.gaussian_nll_loss(T(X), T(Y), T(v), **kw).numpy(), gaussian_nll(X, Y, v, **kw),
                               rtol=1e-10)
    v1 = R.random((3, 1)) + 0.1
    np.testing.assert_allclose(F.gaussian_nll_loss(T(X), T(Y), T(v1[:, 0]), **kw).numpy(),
                               gaussian_nll(X, Y, v1, **kw), rtol=1e-10)
    vt = T(v, stop_gradient=False)
    F.gaussian_nll_loss(T(X), T(Y), vt, reduction="sum").backward()
    np.testing.assert_allclose(vt.grad.numpy(), _fd(lambda a: gaussian_nll(X, Y, a, reduction="sum"), v), rtol=1e-5)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.gaussian_nll_loss\]"):
        F.gaussian_nll_loss(T(X), T(Y), T(v[:, :2]))


@pytest.mark.parametrize("kw", [{}, {"full": True}, {"log_input": False}, {"log_input": False, "full": True},
                                {"reduction": "none"}])
def test_poisson_nll(kw):
    y = R.integers(0, 5, (3, 4)).astype(float)
    x = np.abs(X) if kw.get("log_input") is False else X
    np.testing.assert_allclose(F.poisson_nll_loss(T(x), T(y), **kw).numpy(), poisson_nll(x, y, **kw), rtol=1e-10)
    assert oar.nn.PoissonNLLLoss(**kw)(T(x), T(y)).shape == list(np.shape(poisson_nll(x, y, **kw)))


def test_multi_label_soft_margin():
    y = (R.random((3, 4)) > 0.5).astype(float)
    w = R.random(4)
    for kw in ({}, {"reduction": "none"}, {"reduction": "sum"}):
        np.testing.assert_allclose(F.multi_label_soft_margin_loss(T(X), T(y), **kw).numpy(), mlsm(X, y, **kw),
                                   rtol=1e-10)
    np.testing.assert_allclose(oar.nn.MultiLabelSoftMarginLoss(weight=T(w))(T(X), T(y)).item(), mlsm(X, y, w),
                               rtol=1e-10)
    xt = T(X, stop_gradient=False)
    F.multi_label_soft_margin_loss(xt, T(y)).backward()
    np.testing.assert_allclose(xt.grad.numpy(), _fd(lambda a: mlsm(a, y), X), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("kw", [{}, {"p": 2}, {"margin": 0.5}, {"reduction": "none"}, {"weight": True}])
def test_multi_margin(kw):
    y = np.array([0, 3, 1])
    w = R.random(4)
    ref_kw = {k: v for k, v in kw.items() if k != "weight"}
    call_kw = dict(ref_kw)
    if "weight" in kw:
        ref_kw["w"], call_kw["weight"] = w, T(w)
    np.testing.assert_allclose(F.multi_margin_loss(T(X), T(y), **call_kw).numpy(), multi_margin(X, y, **ref_kw),
                               rtol=1e-10)
    xt = T(X, stop_gradient=False)
    F.multi_margin_loss(xt, T(y), **call_kw).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), _fd(lambda a: multi_margin(a, y, **ref_kw).sum(), X), rtol=1e-5,
                               atol=1e-8)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.multi_margin_loss\]"):
        F.multi_margin_loss(T(X), T(np.array([0, 4, 1])))


def test_multi_label_margin():
    y = np.array([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])
    for kw in ({}, {"reduction": "none"}, {"reduction": "sum"}):
        np.testing.assert_allclose(F.multi_label_margin_loss(T(X), T(y), **kw).numpy(),
                                   multi_label_margin(X, y, **kw), rtol=1e-10)
    np.testing.assert_allclose(oar.nn.MultiLabelMarginLoss()(T(X[0]), T(y[0])).item(),
                               multi_label_margin(X[:1], y[:1]), rtol=1e-10)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.multi_label_margin_loss\]"):
        F.multi_label_margin_loss(T(X), T(y[:2]))


@pytest.mark.parametrize("kw", [{}, {"swap": True}, {"margin": 0.3, "reduction": "none"}])
def test_triplet_margin_with_distance(kw):
    a, p, n = R.standard_normal((3, 4, 5))
    np.testing.assert_allclose(F.triplet_margin_with_distance_loss(T(a), T(p), T(n), **kw).numpy(),
                               triplet_dist(a, p, n, **kw), rtol=1e-9)
    l1 = lambda u, v: (u - v).abs().sum(-1)  # noqa: E731
    l1n = lambda u, v: np.abs(u - v).sum(-1)  # noqa: E731
    got = oar.nn.TripletMarginWithDistanceLoss(distance_function=l1, **kw)(T(a), T(p), T(n)).numpy()
    np.testing.assert_allclose(got, triplet_dist(a, p, n, fn=l1n, **kw), rtol=1e-10)


def test_dice_and_npair():
    xs = R.random((2, 3, 4))
    xs /= xs.sum(-1, keepdims=True)
    lab = R.integers(0, 4, (2, 3, 1))
    np.testing.assert_allclose(F.dice_loss(T(xs), T(lab)).item(), dice(xs, lab), rtol=1e-10)
    a, p = R.standard_normal((2, 4, 5))
    lb = np.array([1, 2, 1, 2])
    np.testing.assert_allclose(F.npair_loss(T(a), T(p), T(lb)).item(), npair(a, p, lb), rtol=1e-10)
    at = T(a, stop_gradient=False)
    F.npair_loss(at, T(p), T(lb)).backward()
    np.testing.assert_allclose(at.grad.numpy(), _fd(lambda z: npair(z, p, lb), a), rtol=1e-5, atol=1e-9)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.dice_loss\]"):
        F.dice_loss(T(xs), T(lab[..., 0]))


@pytest.mark.parametrize("kw", [{}, {"reduction": "none"}, {"reduction": "sum"},
                                {"margin1": 1.2, "margin2": 0.1, "margin3": 0.05, "scale": 8.0}])
def test_margin_cross_entropy(kw):
    # Paddle has no CPU kernel for it; the reference is its documented formula.
    lg = np.tanh(R.standard_normal((3, 5)))
    y = np.array([0, 3, 1])
    names = {"margin1": "m1", "margin2": "m2", "margin3": "m3", "scale": "s", "reduction": "reduction"}
    rk = {names[k]: v for k, v in kw.items()}
    loss, sm = F.margin_cross_entropy(T(lg), T(y), return_softmax=True, **kw)
    rl, rs = margin_ce(lg, y, **rk)
    np.testing.assert_allclose(loss.numpy(), rl, rtol=1e-9)
    np.testing.assert_allclose(sm.numpy(), rs, rtol=1e-9, atol=1e-15)


def test_class_center_sample():
    remapped, centers = F.class_center_sample(T(np.array([3, 7, 3, 1])), 10, 6)
    c = centers.numpy()
    assert c[:3].tolist() == [1, 3, 7] and len(set(c.tolist())) == 6 and c.max() < 10
    assert remapped.numpy().tolist() == [1, 2, 1, 0]
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.class_center_sample\]"):
        F.class_center_sample(T(np.array([3])), 10, 11)


def test_hsigmoid_default_and_custom_tree():
    x = R.standard_normal((4, 3))
    c = 5
    w = R.standard_normal((c - 1, 3))
    b = R.standard_normal((c - 1, 1))
    lab = np.array([0, 4, 2, 3])
    # Paddle adds log(2) per step that a path is shorter than the longest one (3 steps for 5 classes).
    pad = np.log(2) * np.array([[1], [0], [1], [0]])
    np.testing.assert_allclose(F.hsigmoid_loss(T(x), T(lab), c, T(w), T(b)).numpy(),
                               hsigmoid(x, lab, c, w, b[:, 0]) + pad, rtol=1e-10)
    table = np.array([[0, 1, -1], [0, 2, 3], [1, -1, -1], [0, 1, 3]])
    code = np.array([[1, 0, 0], [0, 1, 1], [1, 0, 0], [0, 0, 1]])
    pad = np.log(2) * (table < 0).sum(1, keepdims=True)
    np.testing.assert_allclose(
        F.hsigmoid_loss(T(x), T(lab), c, T(w), T(b), path_table=T(table), path_code=T(code)).numpy(),
        hsigmoid_custom(x, w, b[:, 0], table, code) + pad, rtol=1e-10)
    wt = T(w, stop_gradient=False)
    F.hsigmoid_loss(T(x), T(lab), c, wt, T(b)).sum().backward()
    np.testing.assert_allclose(wt.grad.numpy(), _fd(lambda a: hsigmoid(x, lab, c, a, b[:, 0]).sum(), w), rtol=1e-5,
                               atol=1e-9)
    layer = oar.nn.HSigmoidLoss(3, 5)
    assert layer.weight.shape == [4, 3] and layer.bias.shape == [4, 1]


def test_rnnt_forward_backward_and_fastemit():
    lg = _log_softmax_4d(R.standard_normal((2, 4, 3, 5)))
    labels = np.array([[1, 2], [3, 0]])
    tl, ul = np.array([4, 3]), np.array([2, 1])
    args = (T(labels.astype(np.int32)), T(tl.astype(np.int32)), T(ul.astype(np.int32)))
    np.testing.assert_allclose(F.rnnt_loss(T(lg), *args, reduction="none").numpy(), rnnt_raw(lg, labels, tl, ul),
                               rtol=1e-9)
    np.testing.assert_allclose(oar.nn.RNNTLoss()(T(lg), *args).item(), rnnt_raw(lg, labels, tl, ul).mean(),
                               rtol=1e-9)
    lt = T(lg, stop_gradient=False)
    F.rnnt_loss(lt, *args, fastemit_lambda=0.0, reduction="sum").backward()
    fd = _fd(lambda a: rnnt_raw(a, labels, tl, ul).sum(), lg)
    np.testing.assert_allclose(lt.grad.numpy(), fd, rtol=1e-5, atol=1e-8)
    # FastEmit: same value, label-emission gradients scaled by 1 + lambda (blank ones unchanged).
    lt2 = T(lg, stop_gradient=False)
    out = F.rnnt_loss(lt2, *args, fastemit_lambda=0.5, reduction="sum")
    np.testing.assert_allclose(out.item(), rnnt_raw(lg, labels, tl, ul).sum(), rtol=1e-9)
    out.backward()
    g0, g1 = lt.grad.numpy(), lt2.grad.numpy()
    np.testing.assert_allclose(g1[..., 0], g0[..., 0], atol=1e-12)
    np.testing.assert_allclose(g1[..., 1:], 1.5 * g0[..., 1:], rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.rnnt_loss\]"):
        F.rnnt_loss(T(lg), T(labels.astype(np.int32)), T(np.array([5, 3], np.int32)), args[2])


def _log_softmax_4d(z):
    m = z.max(-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(-1, keepdims=True))


def rnnt_raw(lp, labels, tl, ul, blank=0):
    out = np.zeros(lp.shape[0])
    for bi in range(lp.shape[0]):
        t_, u_ = int(tl[bi]), int(ul[bi])
        a = np.full((t_, u_ + 1), -np.inf)
        a[0, 0] = 0
        for t in range(t_):
            for u in range(u_ + 1):
                if t == 0 and u == 0:
                    continue
                v = -np.inf
                if t > 0:
                    v = np.logaddexp(v, a[t - 1, u] + lp[bi, t - 1, u, blank])
                if u > 0:
                    v = np.logaddexp(v, a[t, u - 1] + lp[bi, t, u - 1, labels[bi, u - 1]])
                a[t, u] = v
        out[bi] = -(a[t_ - 1, u_] + lp[bi, t_ - 1, u_, blank])
    return out


def test_adaptive_log_softmax():
    layer = oar.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True)
    assert [p.shape for p in layer.parameters()] == [[8, 5], [5], [8, 4], [4, 3], [8, 2], [2, 4]]
    x = R.standard_normal((5, 8)).astype(np.float32)
    y = np.array([0, 4, 9, 2, 7])
    out, loss = layer(T(x), T(y))
    hw, hb = layer.head_weight.numpy(), layer.head_bias.numpy()
    tw = [[w.numpy() for w in pair] for pair in layer.tail_weights]
    head = _log_softmax(x @ hw + hb)
    cut = [3, 6, 10]
    ref = np.zeros(5)
    for i, t in enumerate(y):
        if t < cut[0]:
            ref[i] = head[i, t]
        else:
            k = 1 if t < cut[1] else 2
            ref[i] = head[i, cut[0] + k - 1] + _log_softmax(x[i] @ tw[k - 1][0] @ tw[k - 1][1])[t - cut[k - 1]]
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss.item(), -ref.mean(), rtol=1e-5)
    lp = layer.log_prob(T(x)).numpy()
    np.testing.assert_allclose(np.exp(lp).sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(lp[np.arange(5), y], ref, rtol=1e-5, atol=1e-6)
    assert layer.predict(T(x)).numpy().tolist() == lp.argmax(-1).tolist()
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.adaptive_log_softmax_with_loss\]"):
        layer(T(x), T(np.array([0, 4, 10, 2, 7])))


def _log_softmax(z):
    m = z.max(-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(-1, keepdims=True))


def test_spectral_norm():
    sn = oar.nn.SpectralNorm([3, 4, 2], dim=1, power_iters=2)
    # Paddle 3.3.1: weight_u [4] and weight_v [6], non-trainable parameters, unchanged by forward.
    assert [(n, p.shape, p.stop_gradient) for n, p in sn.named_parameters()] == [
        ("weight_u", [4], True), ("weight_v", [6], True)]
    u0, v0 = sn.weight_u.numpy().copy(), sn.weight_v.numpy().copy()
    w = R.standard_normal((3, 4, 2)).astype(np.float32)
    out = sn(T(w)).numpy()
    mat = np.moveaxis(w, 1, 0).reshape(4, -1)
    u, v = u0, v0
    for _ in range(2):
        v = mat.T @ u
        v /= np.linalg.norm(v) + 1e-12
        u = mat @ v
        u /= np.linalg.norm(u) + 1e-12
    np.testing.assert_allclose(out, w / (u @ mat @ v), rtol=1e-5)
    np.testing.assert_array_equal(sn.weight_u.numpy(), u0)
    with pytest.raises(ValueError, match=r"^\[oar.nn.SpectralNorm\]"):
        sn(T(w[:2]))
