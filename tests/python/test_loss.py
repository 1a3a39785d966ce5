"""Losses of oar.nn.functional / oar.nn against NumPy references (values and float64 gradients)."""
import numpy as np
import pytest

import oar
import oar.nn.functional as F

RNG = np.random.default_rng(7)


def log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def reduce_np(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


def numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (np.sum(f(xp)) - np.sum(f(xm))) / (2 * eps)
    return g


def check_grad(oar_fn, np_fn, x, rtol=1e-5, atol=1e-7):
    """Gradient of sum(oar_fn(x)) against central differences of sum(np_fn(x)), float64."""
    t = oar.to_tensor(x, stop_gradient=False)
    oar_fn(t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), numeric_grad(np_fn, x), rtol=rtol, atol=atol)


# ---- cross entropy

def ce_np(x, y, weight=None, ignore_index=-100, reduction="mean", smoothing=0.0):
    logp = log_softmax(x)
    c = x.shape[-1]
    valid = y != ignore_index
    ys = np.where(valid, y, 0)
    nll = -np.take_along_axis(logp, ys[..., None], -1)[..., 0]
    if smoothing:
        nll = (1 - smoothing) * nll - smoothing * logp.mean(-1)
    w = np.ones(c) if weight is None else weight
    # Paddle's rules (Note [cross entropy mean]): a smoothed target weighs
    # sum(t * w); without a weight, 'mean' divides by every entry when
    # ignore_index < 0 (ignored ones count as 0), by the kept ones otherwise.
    wi = ((1 - smoothing) * w[ys] + smoothing * w.mean()) * valid
    loss = nll * wi if weight is not None else nll * valid
    if reduction == "mean":
        den = wi.sum() if weight is not None else (y.size if ignore_index < 0 else valid.sum())
        return loss.sum() / (den if den != 0 else 1)
    if reduction == "sum":
        return loss.sum()
    return loss  # 'none': the label's shape


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("use_weight", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
def test_cross_entropy_hard(reduction, use_weight, ignore):
    x = RNG.standard_normal((6, 4))
    y = RNG.integers(0, 4, 6)
    if ignore:
        y[1] = -100
    w = RNG.uniform(0.5, 2.0, 4) if use_weight else None
    wt = oar.to_tensor(w) if use_weight else None
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(y), weight=wt, reduction=reduction)
    np.testing.assert_allclose(out.numpy(), ce_np(x, y, w, reduction=reduction), rtol=1e-10)
    check_grad(lambda t: F.cross_entropy(t, oar.to_tensor(y), weight=wt, reduction=reduction),
               lambda a: ce_np(a, y, w, reduction=reduction), x)


def test_cross_entropy_float32_and_label_with_class_axis():
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    y = RNG.integers(0, 3, (5, 1))
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(y))
    assert out.dtype == oar.float32
    np.testing.assert_allclose(out.item(), ce_np(x.astype(np.float64), y[:, 0]), rtol=1e-5)


def test_cross_entropy_all_ignored_is_zero():
    x = RNG.standard_normal((3, 4))
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor([-100, -100, -100]))
    assert out.item() == 0.0


def test_cross_entropy_label_smoothing():
    x = RNG.standard_normal((5, 4))
    y = RNG.integers(0, 4, 5)
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(y), label_smoothing=0.2)
    np.testing.assert_allclose(out.item(), ce_np(x, y, smoothing=0.2), rtol=1e-10)
    check_grad(lambda t: F.cross_entropy(t, oar.to_tensor(y), label_smoothing=0.2),
               lambda a: ce_np(a, y, smoothing=0.2), x)


def test_cross_entropy_soft_and_weighted_soft():
    x = RNG.standard_normal((4, 3))
    p = RNG.uniform(size=(4, 3))
    p /= p.sum(-1, keepdims=True)
    w = np.array([0.5, 1.0, 2.0])
    ref = lambda a: (-(p * log_softmax(a)).sum(-1)).mean()  # noqa: E731
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(p), soft_label=True)
    np.testing.assert_allclose(out.item(), ref(x), rtol=1e-10)
    check_grad(lambda t: F.cross_entropy(t, oar.to_tensor(p), soft_label=True), ref, x)
    pw = p @ w
    refw = lambda a: (-(p * log_softmax(a)).sum(-1) * pw).sum() / pw.sum()  # noqa: E731
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(p), weight=oar.to_tensor(w), soft_label=True)
    np.testing.assert_allclose(out.item(), refw(x), rtol=1e-10)


def test_cross_entropy_axis_and_no_softmax():
    x = RNG.standard_normal((2, 3, 4))  # classes on axis 1
    y = RNG.integers(0, 3, (2, 4))
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(y), axis=1, reduction="none")
    ref = -np.take_along_axis(log_softmax(x, 1), y[:, None, :], 1)[:, 0]
    assert out.shape == [2, 4]  # the label's shape, as Paddle 3.3
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
    probs = np.exp(log_softmax(x[:, :, 0]))
    out = F.cross_entropy(oar.to_tensor(probs), oar.to_tensor(y[:, 0]), use_softmax=False)
    np.testing.assert_allclose(out.item(), -np.log(probs[np.arange(2), y[:, 0]]).mean(), rtol=1e-10)


def test_cross_entropy_layer_and_large_logits():
    x = np.array([[1000.0, 0.0], [0.0, -1000.0]])
    out = oar.nn.CrossEntropyLoss(reduction="sum")(oar.to_tensor(x), oar.to_tensor([0, 1]))
    np.testing.assert_allclose(out.item(), 1000.0, rtol=1e-12)


def test_cross_entropy_errors():
    x = oar.zeros([3, 4])
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.cross_entropy\]"):
        F.cross_entropy(x, oar.to_tensor([0, 1, 2]), reduction="avg")
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.cross_entropy\]"):
        F.cross_entropy(x, oar.to_tensor([0, 1]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.cross_entropy\]"):
        F.cross_entropy(x, oar.to_tensor([0, 1, 4]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.cross_entropy\]"):
        F.cross_entropy(x, oar.to_tensor([0, 1, 2]), weight=oar.ones([3]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.cross_entropy\]"):
        oar.nn.CrossEntropyLoss(reduction="bad")


# ---- nll

@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss(reduction):
    x = log_softmax(RNG.standard_normal((5, 3, 2)), 1)
    y = RNG.integers(0, 3, (5, 2))
    y[0, 0] = -100
    w = np.array([1.0, 2.0, 0.5])

    def ref(a):
        valid = y != -100
        ys = np.where(valid, y, 0)
        picked = np.take_along_axis(a, ys[:, None, :], 1)[:, 0]
        wi = w[ys] * valid
        loss = -picked * wi
        return loss.sum() / wi.sum() if reduction == "mean" else reduce_np(loss, reduction)

    fn = lambda t: F.nll_loss(t, oar.to_tensor(y), weight=oar.to_tensor(w), reduction=reduction)  # noqa: E731
    np.testing.assert_allclose(fn(oar.to_tensor(x)).numpy(), ref(x), rtol=1e-10)
    check_grad(fn, ref, x)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.nll_loss\]"):
        F.nll_loss(oar.to_tensor(x), oar.to_tensor(y[:, 0]))


# ---- elementwise losses

def _pair(shape=(3, 4)):
    return RNG.standard_normal(shape), RNG.standard_normal(shape)


ELEMENTWISE = [
    ("mse_loss", lambda a, b: (a - b) ** 2),
    ("l1_loss", lambda a, b: np.abs(a - b)),
    ("smooth_l1_loss", lambda a, b: np.where(np.abs(a - b) < 1.0, 0.5 * (a - b) ** 2, np.abs(a - b) - 0.5)),
    ("soft_margin_loss", lambda a, b: np.log1p(np.exp(-np.sign(b) * a))),
]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name,ref", ELEMENTWISE, ids=[c[0] for c in ELEMENTWISE])
def test_elementwise_losses(name, ref, reduction):
    a, b = _pair()
    if name == "soft_margin_loss":
        b = np.sign(b)
    fn = getattr(F, name)
    out = fn(oar.to_tensor(a), oar.to_tensor(b), reduction=reduction)
    np.testing.assert_allclose(out.numpy(), reduce_np(ref(a, b), reduction), rtol=1e-10)
    check_grad(lambda t: fn(t, oar.to_tensor(b), reduction=reduction), lambda x: reduce_np(ref(x, b), reduction), a)
    with pytest.raises(ValueError, match=rf"^\[oar.nn.functional.{name}\]"):
        fn(oar.to_tensor(a), oar.to_tensor(b), reduction="avg")
    with pytest.raises(ValueError, match=rf"^\[oar.nn.functional.{name}\]"):
        fn(oar.to_tensor(a), oar.to_tensor(b[:, :2]))


def test_smooth_l1_delta_and_huber_layer():
    a, b = _pair()
    d = a - b
    ref = np.where(np.abs(d) < 0.5, 0.5 * d * d, 0.5 * (np.abs(d) - 0.25))
    out = F.smooth_l1_loss(oar.to_tensor(a), oar.to_tensor(b), reduction="none", delta=0.5)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
    out = oar.nn.HuberLoss(delta=0.5)(oar.to_tensor(a), oar.to_tensor(b))
    np.testing.assert_allclose(out.item(), ref.mean(), rtol=1e-10)
    out = oar.nn.MSELoss("sum")(oar.to_tensor(a), oar.to_tensor(b))
    np.testing.assert_allclose(out.item(), (d ** 2).sum(), rtol=1e-10)
    out = oar.nn.L1Loss()(oar.to_tensor(a), oar.to_tensor(b))
    np.testing.assert_allclose(out.item(), np.abs(d).mean(), rtol=1e-10)


@pytest.mark.parametrize("use_weight", [False, True])
def test_binary_cross_entropy(use_weight):
    p = RNG.uniform(0.05, 0.95, (3, 4))
    y = RNG.integers(0, 2, (3, 4)).astype(np.float64)
    w = RNG.uniform(0.5, 2.0, (3, 4)) if use_weight else 1.0
    wt = oar.to_tensor(w) if use_weight else None
    ref = lambda x: (-(y * np.log(x) + (1 - y) * np.log(1 - x)) * w).mean()  # noqa: E731
    out = F.binary_cross_entropy(oar.to_tensor(p), oar.to_tensor(y), weight=wt)
    np.testing.assert_allclose(out.item(), ref(p), rtol=1e-10)
    check_grad(lambda t: F.binary_cross_entropy(t, oar.to_tensor(y), weight=wt), ref, p, rtol=1e-5)
    out = oar.nn.BCELoss(reduction="sum")(oar.to_tensor([0.0, 1.0]), oar.to_tensor([1.0, 0.0]))
    assert out.item() == 200.0  # logs clipped at -100


@pytest.mark.parametrize("use_pos_weight", [False, True])
def test_bce_with_logits(use_pos_weight):
    x = RNG.standard_normal((3, 4)) * 3
    y = RNG.uniform(size=(3, 4))
    pw = RNG.uniform(0.5, 3.0, 4) if use_pos_weight else None

    def ref(a):
        s = 1 / (1 + np.exp(-a))
        pos = y * np.log(s) * (pw if pw is not None else 1.0)
        return (-(pos + (1 - y) * np.log(1 - s))).mean()

    pwt = oar.to_tensor(pw) if use_pos_weight else None
    fn = lambda t: F.binary_cross_entropy_with_logits(t, oar.to_tensor(y), pos_weight=pwt)  # noqa: E731
    np.testing.assert_allclose(fn(oar.to_tensor(x)).item(), ref(x), rtol=1e-10)
    check_grad(fn, ref, x)
    big = F.binary_cross_entropy_with_logits(oar.to_tensor([1000.0]), oar.to_tensor([0.0]))
    np.testing.assert_allclose(big.item(), 1000.0)
    layer = oar.nn.BCEWithLogitsLoss(pos_weight=pwt)
    np.testing.assert_allclose(layer(oar.to_tensor(x), oar.to_tensor(y)).item(), ref(x), rtol=1e-10)


@pytest.mark.parametrize("reduction", ["none", "mean", "batchmean", "sum"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x = log_softmax(RNG.standard_normal((3, 4)))
    q = np.exp(log_softmax(RNG.standard_normal((3, 4))))
    q[0, 0] = 0.0
    target = np.log(q + 1e-300) if log_target else q

    def ref(a):
        if log_target:
            loss = np.exp(target) * (target - a)
        else:
            loss = np.where(q > 0, q * (np.log(np.where(q > 0, q, 1)) - a), 0.0)
        if reduction == "batchmean":
            return loss.sum() / a.shape[0]
        return reduce_np(loss, reduction)

    fn = lambda t: F.kl_div(t, oar.to_tensor(target), reduction=reduction, log_target=log_target)  # noqa: E731
    np.testing.assert_allclose(fn(oar.to_tensor(x)).numpy(), ref(x), rtol=1e-9, atol=1e-12)
    if not log_target:
        check_grad(fn, ref, x)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.kl_div\]"):
        F.kl_div(oar.to_tensor(x), oar.to_tensor(q), reduction="avg")


def test_margin_ranking_and_hinge():
    a, b = _pair((6,))
    y = np.sign(RNG.standard_normal(6))
    ref = lambda x: np.maximum(0, -y * (x - b) + 0.3).mean()  # noqa: E731
    fn = lambda t: F.margin_ranking_loss(t, oar.to_tensor(b), oar.to_tensor(y), margin=0.3)  # noqa: E731
    np.testing.assert_allclose(fn(oar.to_tensor(a)).item(), ref(a), rtol=1e-10)
    check_grad(fn, ref, a)
    out = oar.nn.MarginRankingLoss(0.3, "none")(oar.to_tensor(a), oar.to_tensor(b), oar.to_tensor(y))
    np.testing.assert_allclose(out.numpy(), np.maximum(0, -y * (a - b) + 0.3), rtol=1e-10)
    href = lambda x: np.where(y > 0, x, np.maximum(0, 1.0 - x)).mean()  # noqa: E731
    hfn = lambda t: F.hinge_embedding_loss(t, oar.to_tensor(y))  # noqa: E731
    np.testing.assert_allclose(hfn(oar.to_tensor(a)).item(), href(a), rtol=1e-10)
    check_grad(hfn, href, a)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.margin_ranking_loss\]"):
        F.margin_ranking_loss(oar.to_tensor(a), oar.to_tensor(b[:3]), oar.to_tensor(y))


def test_cosine_embedding_loss():
    a, b = _pair((4, 5))
    y = np.array([1, -1, 1, -1])

    def ref(x):
        cos = (x * b).sum(-1) / np.sqrt(((x * x).sum(-1) + 1e-11) * ((b * b).sum(-1) + 1e-11))
        return np.where(y > 0, 1 - cos, np.maximum(0, cos - 0.1)).mean()

    fn = lambda t: F.cosine_embedding_loss(t, oar.to_tensor(b), oar.to_tensor(y), margin=0.1)  # noqa: E731
    np.testing.assert_allclose(fn(oar.to_tensor(a)).item(), ref(a), rtol=1e-10)
    check_grad(fn, ref, a)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.cosine_embedding_loss\]"):
        F.cosine_embedding_loss(oar.to_tensor(a), oar.to_tensor(b[:, :2]), oar.to_tensor(y))


@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_loss(swap):
    a, p = _pair((4, 3))
    n = RNG.standard_normal((4, 3))
    eps = 1e-6

    def dist(u, v):
        return np.sqrt(((u - v + eps) ** 2).sum(-1))

    def ref(x):
        dn = dist(x, n)
        if swap:
            dn = np.minimum(dn, dist(p, n))
        return np.maximum(dist(x, p) - dn + 1.0, 0).mean()

    fn = lambda t: F.triplet_margin_loss(t, oar.to_tensor(p), oar.to_tensor(n), swap=swap)  # noqa: E731
    np.testing.assert_allclose(fn(oar.to_tensor(a)).item(), ref(a), rtol=1e-10)
    check_grad(fn, ref, a)
    layer = oar.nn.TripletMarginLoss(swap=swap)
    np.testing.assert_allclose(layer(oar.to_tensor(a), oar.to_tensor(p), oar.to_tensor(n)).item(), ref(a), rtol=1e-10)


# ---- CTC

def ctc_np(logits, labels, in_len, lab_len, blank=0):
    """Per-sample CTC negative log likelihood, standard forward recursion in log space."""
    lp = log_softmax(logits, -1)
    out = []
    for b in range(logits.shape[1]):
        lab = list(labels[b, :lab_len[b]])
        ext = [blank]
        for c in lab:
            ext += [c, blank]
        S, T = len(ext), in_len[b]
        alpha = np.full(S, -np.inf)
        alpha[0] = lp[0, b, ext[0]]
        if S > 1:
            alpha[1] = lp[0, b, ext[1]]
        for t in range(1, T):
            new = np.full(S, -np.inf)
            for s in range(S):
                terms = [alpha[s]]
                if s >= 1:
                    terms.append(alpha[s - 1])
                if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                    terms.append(alpha[s - 2])
                new[s] = np.logaddexp.reduce(terms) + lp[t, b, ext[s]]
            alpha = new
        ll = np.logaddexp(alpha[-1], alpha[-2]) if S > 1 else alpha[-1]
        out.append(-ll)
    return np.array(out)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss(reduction):
    T, B, C, L = 6, 3, 4, 3
    x = RNG.standard_normal((T, B, C))
    labels = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]], dtype=np.int32)
    in_len = np.array([6, 5, 3])
    lab_len = np.array([3, 2, 0])

    def ref(a):
        per = ctc_np(a, labels, in_len, lab_len)
        if reduction == "mean":
            return (per / np.maximum(lab_len, 1)).mean()
        return reduce_np(per, reduction)

    def fn(t):
        return F.ctc_loss(t, oar.to_tensor(labels), oar.to_tensor(in_len), oar.to_tensor(lab_len),
                          reduction=reduction)

    np.testing.assert_allclose(fn(oar.to_tensor(x)).numpy(), ref(x), rtol=1e-9)
    check_grad(fn, ref, x, rtol=1e-5, atol=1e-8)


def test_ctc_loss_float32_blank_and_norm_by_times():
    T, B, C = 5, 2, 3
    x = RNG.standard_normal((T, B, C))
    labels = np.array([[0, 1], [1, 1]])
    in_len, lab_len = np.array([5, 5]), np.array([2, 2])
    per = ctc_np(x, labels, in_len, lab_len, blank=2)
    out = oar.nn.CTCLoss(blank=2, reduction="sum")(oar.to_tensor(x.astype(np.float32)), oar.to_tensor(labels),
                                                  oar.to_tensor(in_len), oar.to_tensor(lab_len))
    np.testing.assert_allclose(out.item(), per.sum(), rtol=1e-5)
    t = oar.to_tensor(x, stop_gradient=False)
    loss = F.ctc_loss(t, oar.to_tensor(labels), oar.to_tensor(in_len), oar.to_tensor(lab_len), blank=2,
                      reduction="sum", norm_by_times=True)
    np.testing.assert_allclose(loss.item(), per.sum(), rtol=1e-9)
    loss.backward()
    g = numeric_grad(lambda a: ctc_np(a, labels, in_len, lab_len, blank=2).sum(), x) / 5.0
    np.testing.assert_allclose(t.grad.numpy(), g, rtol=1e-5, atol=1e-8)


def test_ctc_loss_errors():
    x = oar.zeros([4, 2, 3])
    lab = oar.to_tensor([[1, 2], [1, 1]])
    ok = dict(input_lengths=oar.to_tensor([4, 4]), label_lengths=oar.to_tensor([2, 2]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.ctc_loss\]"):
        F.ctc_loss(x, lab, **ok, reduction="avg")
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.ctc_loss\]"):
        F.ctc_loss(x, lab, oar.to_tensor([5, 4]), oar.to_tensor([2, 2]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.ctc_loss\]"):
        F.ctc_loss(x, oar.to_tensor([[0, 1], [1, 1]]), **ok)  # label equals blank
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.ctc_loss\]"):
        F.ctc_loss(oar.zeros([4, 3]), lab, **ok)


def test_zero_size_and_0d_inputs():
    z = oar.zeros([0, 3])
    assert F.mse_loss(z, z, reduction="sum").item() == 0.0
    assert F.mse_loss(z, z, reduction="none").shape == [0, 3]
    s = F.l1_loss(oar.to_tensor(2.0), oar.to_tensor(0.5))
    assert s.shape == [] and s.item() == 1.5


def test_non_contiguous_inputs_and_default_dtype():
    x = RNG.standard_normal((4, 3))
    y = RNG.integers(0, 4, 3)
    xt = oar.to_tensor(x).transpose([1, 0])  # a strided view
    np.testing.assert_allclose(F.cross_entropy(xt, oar.to_tensor(y)).item(), ce_np(x.T, y), rtol=1e-10)
    np.testing.assert_allclose(F.mse_loss(xt, oar.zeros([3, 4], dtype="float64")).item(), (x ** 2).mean(),
                               rtol=1e-10)
    oar.set_default_dtype("float64")
    try:
        assert oar.nn.Linear(2, 2).weight.dtype == oar.float64
    finally:
        oar.set_default_dtype("float32")


def test_fused_cross_entropy_second_order_and_label_checks():
    rng = np.random.default_rng(7)
    x0 = rng.standard_normal((5, 4))
    lab = np.array([1, 3, -100, 0, 2])
    x = oar.to_tensor(x0, stop_gradient=False)
    loss = F.cross_entropy(x, oar.to_tensor(lab))
    (g,) = oar.grad(loss, x, create_graph=True)
    p = np.exp(x0 - x0.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    onehot = np.zeros_like(x0)
    valid = lab != -100
    onehot[np.arange(5)[valid], lab[valid]] = 1.0
    # 'mean' with the default ignore_index divides by every label, ignored ones included (as Paddle)
    np.testing.assert_allclose(g.numpy(), (p - onehot) * valid[:, None] / lab.size, rtol=1e-10)
    # d/dx of sum(g * w) = Hessian-vector product: (diag(p) - p p^T) w per valid row / count
    w = rng.standard_normal((5, 4))
    (h,) = oar.grad((g * oar.to_tensor(w)).sum(), x)
    pw = (p * w).sum(1, keepdims=True)
    np.testing.assert_allclose(h.numpy(), p * (w - pw) * valid[:, None] / lab.size, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.cross_entropy\] labels must be in \[0, 4\)"):
        oar._C._softmax_cross_entropy(oar.to_tensor(x0), oar.to_tensor(np.array([[0], [4], [1], [1], [1]])), -100)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.cross_entropy\] label shape"):
        oar._C._softmax_cross_entropy(oar.to_tensor(x0), oar.to_tensor(lab), -100)
