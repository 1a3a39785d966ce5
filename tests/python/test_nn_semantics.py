"""Paddle semantics of cross_entropy's 'mean', BatchNorm's running statistics and the nn containers.

References are NumPy forms of Paddle 3.3's definitions (checked side by side
with Paddle): hard-label 'mean' without weight divides by all N entries when
ignore_index < 0 and by the entries not ignored when ignore_index >= 0; with
weight it divides by the sum of the entries' weights; label smoothing weighs
an entry by sum(t * weight).
"""
import numpy as np
import pytest

import oar
import oar.nn.functional as F

RNG = np.random.default_rng(3)


def _log_softmax(x, axis=-1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def ce_ref(x, y, weight=None, ignore_index=-100, smoothing=0.0, logp=None):
    """Paddle's hard-label cross entropy with reduction='mean', classes on the last axis."""
    logp = _log_softmax(x) if logp is None else logp
    c = x.shape[-1]
    valid = y != ignore_index
    ys = np.where(valid, y, 0)
    t = np.eye(c)[ys] * (1 - smoothing) + smoothing / c
    loss = -(t * logp).sum(-1) * valid
    if weight is not None:
        wi = (t * weight).sum(-1) * valid
        return (loss * wi).sum() / (wi.sum() or 1.0)
    den = y.size if ignore_index < 0 else valid.sum()
    return loss.sum() / (den or 1.0)


def _grad_fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[i] += eps
        m[i] -= eps
        g[i] = (f(p) - f(m)) / (2 * eps)
    return g


CASES = [
    dict(y=[0, 2, -100, 1]),                                  # default ignore_index, ignored entry present
    dict(y=[0, 2, 1, 1]),                                     # nothing ignored
    dict(y=[0, 2, 1, 1], ignore_index=1),                     # non-negative ignore_index: divide by the valid count
    dict(y=[0, 2, -1, 1], ignore_index=-1),
    dict(y=[-100, -100, -100, -100]),                         # all ignored: 0
    dict(y=[0, 2, -100, 1], weight=True),
    dict(y=[0, 2, 1, 1], ignore_index=1, weight=True),
    dict(y=[0, 2, 1, 1], smoothing=0.1),
    dict(y=[0, 2, 1, 1], smoothing=0.1, weight=True),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
@pytest.mark.parametrize("use_softmax", [True, False])
def test_cross_entropy_mean_matches_paddle(case, use_softmax):
    x = RNG.standard_normal((4, 3))
    y = np.array(case["y"])
    w = np.array([0.5, 2.0, 1.25]) if case.get("weight") else None
    ii = case.get("ignore_index", -100)
    sm = case.get("smoothing", 0.0)
    inp = x if use_softmax else np.exp(_log_softmax(x))

    def run(a):
        t = oar.to_tensor(a, stop_gradient=False)
        out = F.cross_entropy(t, oar.to_tensor(y), weight=None if w is None else oar.to_tensor(w),
                              ignore_index=ii, label_smoothing=sm, use_softmax=use_softmax)
        return t, out

    def ref(a):
        return ce_ref(a, y, w, ii, sm, logp=None if use_softmax else np.log(a))

    t, out = run(inp)
    np.testing.assert_allclose(out.item(), ref(inp), rtol=1e-10, atol=1e-12)
    out.backward()
    np.testing.assert_allclose(t.grad.numpy(), _grad_fd(ref, inp), rtol=1e-5, atol=1e-7)


def test_cross_entropy_mean_paddle_numbers():
    # Values printed by Paddle 3.3.1 for this input (float64).
    x = np.random.RandomState(0).randn(4, 3)
    lab = np.array([0, 2, -100, 1])
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(lab))
    np.testing.assert_allclose(out.item(), 1.524173302189809, rtol=1e-9)
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(lab), weight=oar.to_tensor([0.5, 2.0, 1.25]))
    np.testing.assert_allclose(out.item(), 2.283508390568941, rtol=1e-9)
    layer = oar.nn.CrossEntropyLoss()
    np.testing.assert_allclose(layer(oar.to_tensor(x), oar.to_tensor(lab)).item(), 1.524173302189809, rtol=1e-9)


def test_cross_entropy_axis_and_soft_labels():
    x = RNG.standard_normal((2, 3, 4))
    y = RNG.integers(0, 3, (2, 1, 4))
    y[0, 0, 1] = -100
    logp = _log_softmax(x, 1)
    valid = y != -100
    nll = -np.take_along_axis(logp, np.where(valid, y, 0), 1) * valid
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(y), axis=1)
    np.testing.assert_allclose(out.item(), nll.sum() / y.size, rtol=1e-10)
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(y[:, 0]), axis=1, reduction="none")
    assert out.shape == [2, 4]  # the label's shape, as Paddle 3.3
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(y), axis=1, reduction="none")
    assert out.shape == [2, 1, 4]
    soft = RNG.random((2, 3, 4))
    soft /= soft.sum(1, keepdims=True)
    w = np.array([0.5, 2.0, 1.25])
    per = -(soft * logp).sum(1)
    ws = (soft * w[None, :, None]).sum(1)
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(soft), soft_label=True, axis=1)
    np.testing.assert_allclose(out.item(), per.mean(), rtol=1e-10)
    out = F.cross_entropy(oar.to_tensor(x), oar.to_tensor(soft), soft_label=True, axis=1, weight=oar.to_tensor(w))
    np.testing.assert_allclose(out.item(), (per * ws).sum() / ws.sum(), rtol=1e-10)


# ---------------------------------------------------------------- BatchNorm running statistics

@pytest.mark.parametrize("cls,shape", [(oar.nn.BatchNorm1D, [4, 3]), (oar.nn.BatchNorm2D, [2, 3, 2, 2]),
                                       (oar.nn.BatchNorm3D, [2, 3, 1, 2, 2]), (oar.nn.BatchNorm, [2, 3, 2]),
                                       (oar.nn.SyncBatchNorm, [2, 3, 2, 2])])
def test_batch_norm_statistics_are_frozen_parameters(cls, shape):
    bn = cls(3)
    # Paddle 3.3.1: 4 parameters, state_dict keys in this order, no buffers.
    names = [n for n, _ in bn.named_parameters()]
    assert names == ["weight", "bias", "_mean", "_variance"]
    assert list(bn.state_dict().keys()) == names
    assert bn.buffers() == []
    assert [p.stop_gradient for p in bn.parameters()] == [False, False, True, True]
    assert [p.trainable for p in bn.parameters()] == [True, True, False, False]
    x = RNG.standard_normal(shape).astype(np.float32)
    bn(oar.to_tensor(x))
    axes = tuple(i for i in range(len(shape)) if i != 1)
    np.testing.assert_allclose(bn._mean.numpy(), 0.1 * x.mean(axes), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn._variance.numpy(), 0.9 + 0.1 * x.var(axes), rtol=1e-5, atol=1e-6)


def test_batch_norm_without_affine_keeps_statistics():
    bn = oar.nn.BatchNorm2D(3, weight_attr=False, bias_attr=False)
    assert [n for n, _ in bn.named_parameters()] == ["_mean", "_variance"]


def test_optimizer_leaves_batch_norm_statistics_alone():
    net = oar.nn.Sequential(oar.nn.Conv2D(3, 3, 1), oar.nn.BatchNorm2D(3))
    opt = oar.optimizer.AdamW(parameters=net.parameters(), weight_decay=0.5, learning_rate=0.1)
    x = oar.to_tensor(RNG.standard_normal((2, 3, 4, 4)).astype(np.float32))
    net(x).sum().backward()
    assert net[1]._mean.grad is None
    mean, var = net[1]._mean.numpy().copy(), net[1]._variance.numpy().copy()
    w = net[1].weight.numpy().copy()
    opt.step()
    np.testing.assert_array_equal(net[1]._mean.numpy(), mean)
    np.testing.assert_array_equal(net[1]._variance.numpy(), var)
    assert not np.array_equal(net[1].weight.numpy(), w)


def test_batch_norm_state_dict_round_trip():
    a, b = oar.nn.BatchNorm1D(3), oar.nn.BatchNorm1D(3)
    a(oar.to_tensor(RNG.standard_normal((5, 3)).astype(np.float32)))
    missing, unexpected = b.set_state_dict(a.state_dict())
    assert missing == [] and unexpected == []
    np.testing.assert_array_equal(b._mean.numpy(), a._mean.numpy())
    np.testing.assert_array_equal(b._variance.numpy(), a._variance.numpy())


def test_convert_sync_batchnorm_shares_tensors():
    net = oar.nn.Sequential(oar.nn.Conv2D(3, 3, 1), oar.nn.BatchNorm2D(3))
    mean = net[1]._mean
    out = oar.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert type(out[1]) is oar.nn.SyncBatchNorm and out[1]._mean is mean
    assert len(out.parameters()) == 6


# ---------------------------------------------------------------- containers and aliases

def test_module_aliases_are_the_layer_classes():
    # In Paddle 3.3, Module / ModuleList / ModuleDict are Layer / LayerList / LayerDict.
    assert oar.nn.Module is oar.nn.Layer
    assert oar.nn.ModuleList is oar.nn.LayerList
    assert oar.nn.ModuleDict is oar.nn.LayerDict


def test_parameter_and_parameter_dict():
    p = oar.nn.Parameter([2, 3], "float32")
    assert p.shape == [2, 3] and not p.stop_gradient and p.trainable
    np.testing.assert_array_equal(p.numpy(), np.zeros((2, 3), np.float32))
    q = oar.nn.Parameter(oar.to_tensor([1.0, 2.0]))
    np.testing.assert_array_equal(q.numpy(), [1.0, 2.0])
    assert isinstance(q, oar.nn.Parameter) and isinstance(oar.nn.Linear(2, 2).weight, oar.nn.Parameter)
    assert not isinstance(oar.ones([1]), oar.nn.Parameter)
    d = oar.nn.ParameterDict({"a": p})
    d["b"] = oar.ones([2])
    assert [n for n, _ in d.named_parameters()] == ["a", "b"] and len(d) == 2 and "b" in d
    assert not d["b"].stop_gradient
    with pytest.raises(TypeError, match=r"^\[oar.nn.ParameterDict\]"):
        d["c"] = 3
    with pytest.raises(TypeError, match=r"^\[oar.nn.Parameter\]"):
        oar.nn.Parameter(3)
