"""oar.nn.Layer, containers, common and activation layers, functional common ops, gradient clipping."""
import collections

import numpy as np
import pytest

import oar
import oar.nn.functional as F
from oar import nn

RNG = np.random.default_rng(3)


def numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (np.sum(f(xp)) - np.sum(f(xm))) / (2 * eps)
    return g


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2, bias_attr=False)
        self.register_buffer("steps", oar.zeros([1]))
        self.register_buffer("cache", oar.zeros([2]), persistable=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


# ---- Layer

def test_registration_and_state_dict():
    net = MLP()
    assert list(net.state_dict().keys()) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in net.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "cache"]
    assert [n for n, _ in net.named_sublayers()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert net.fc2.bias is None
    p = net.fc1.weight
    assert p.stop_gradient is False and p.trainable and p.persistable and p.need_clip
    assert p.optimize_attr == {"learning_rate": 1.0} and p.regularizer is None
    names = [q.name for q in net.parameters()]
    assert len(set(names)) == 3 and all(isinstance(n, str) for n in names)
    assert net.full_name() != MLP().full_name()


def test_set_state_dict_roundtrip_and_errors():
    a, b = MLP(), MLP()
    missing, unexpected = b.set_state_dict(a.state_dict())
    assert missing == [] and unexpected == []
    for k, v in a.state_dict().items():
        np.testing.assert_array_equal(b.state_dict()[k].numpy(), v.numpy())
    sd = {k: v.numpy() for k, v in a.state_dict().items()}
    del sd["fc2.weight"]
    sd["extra"] = np.zeros(1)
    missing, unexpected = b.set_state_dict(sd)
    assert missing == ["fc2.weight"] and unexpected == ["extra"]
    with pytest.raises(ValueError, match=r"^\[oar.nn.Layer.set_state_dict\] 'fc1.weight'"):
        b.set_state_dict({"fc1.weight": oar.zeros([4, 3])})
    with pytest.raises(ValueError, match=r"^\[oar.nn.Layer.set_state_dict\]"):
        b.set_state_dict({"fc1.bias": oar.zeros([4], dtype="int64")})


def test_setattr_replacement_and_delete():
    net = MLP()
    net.fc1 = nn.Linear(3, 4)  # replaces the sublayer
    assert len(net.parameters()) == 3
    net.extra = 5
    assert "extra" not in net.state_dict()
    with pytest.raises(TypeError):
        net.fc1 = 3
    del net.act
    assert [n for n, _ in net.named_children()] == ["fc1", "fc2"]
    with pytest.raises(AttributeError):
        net.nothing  # noqa: B018


def test_train_eval_hooks_apply_and_clear_gradients():
    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    net.eval()
    assert not net.training and not net[1].training
    net.train()
    assert net[1].training
    calls = []
    h1 = net.register_forward_pre_hook(lambda layer, inp: calls.append("pre"))
    h2 = net.register_forward_post_hook(lambda layer, inp, out: out * 0)
    out = net(oar.ones([1, 2]))
    assert calls == ["pre"] and out.numpy().tolist() == [[0.0, 0.0]]
    h1.remove()
    h2.remove()
    net.eval()
    out = net(oar.ones([1, 2]))
    out.sum().backward()
    assert net[0].weight.grad is not None
    net.clear_gradients()
    assert float(net[0].weight.grad.abs().sum()) == 0.0
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "Dropout", "Sequential"]


def test_to_and_astype():
    net = MLP()
    net.to(dtype="float64")
    assert all(p.dtype == oar.float64 for p in net.parameters())
    assert net.steps.dtype == oar.float64
    assert net.fc1.weight.trainable and net.fc1.weight.stop_gradient is False
    out = net(oar.ones([2, 3], dtype="float64"))
    assert out.dtype == oar.float64
    net.astype("float32")
    assert net.fc1.weight.dtype == oar.float32


def test_deepcopy():
    import copy

    net = MLP()
    twin = copy.deepcopy(net)
    assert twin.fc1.weight is not net.fc1.weight
    np.testing.assert_array_equal(twin.fc1.weight.numpy(), net.fc1.weight.numpy())
    assert twin.fc1.weight.name == net.fc1.weight.name and twin.fc1.weight.stop_gradient is False
    with oar.no_grad():
        twin.fc1.weight.set_value(np.zeros([3, 4], dtype=np.float32))
    assert float(net.fc1.weight.abs().sum()) > 0


def test_repr():
    text = repr(MLP())
    assert "(fc1): Linear(in_features=3, out_features=4" in text and "(act): ReLU()" in text


def test_create_parameter_attr():
    layer = nn.Layer()
    w = layer.create_parameter([2, 2], attr=oar.framework_param.ParamAttr(
        name="my_w", initializer=nn.initializer.Constant(3.0), learning_rate=0.5, trainable=False))
    assert w.name == "my_w" and w.optimize_attr["learning_rate"] == 0.5 and not w.trainable
    assert w.stop_gradient and w.numpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert layer.create_parameter([2], attr=False) is None
    b = layer.create_parameter([3], is_bias=True)
    assert b.numpy().tolist() == [0.0, 0.0, 0.0]


# ---- containers

def test_sequential_forms():
    layers = [nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)]
    s = nn.Sequential(*layers)
    assert len(s) == 3 and s[0] is layers[0] and s[-1] is layers[2]
    assert isinstance(s[1:], nn.Sequential) and len(s[1:]) == 2
    named = nn.Sequential(collections.OrderedDict([("a", layers[0]), ("b", layers[1])]))
    assert [n for n, _ in named.named_children()] == ["a", "b"] and named["a"] is layers[0]
    pairs = nn.Sequential(("x", nn.Linear(2, 2)), ("y", nn.Tanh()))
    assert list(pairs.state_dict()) == ["x.weight", "x.bias"]
    with pytest.raises(IndexError):
        s[5]  # noqa: B018


def test_layer_list_dict_parameter_list():
    ll = nn.LayerList([nn.Linear(2, 2), nn.Linear(2, 2)])
    ll.append(nn.Linear(2, 2))
    ll.insert(0, nn.ReLU())
    assert len(ll) == 4 and isinstance(ll[0], nn.ReLU)
    assert list(ll.state_dict())[:2] == ["1.weight", "1.bias"]
    del ll[0]
    assert len(ll) == 3 and list(ll.state_dict())[0] == "0.weight"
    ld = nn.LayerDict({"a": nn.Linear(2, 2)})
    ld["b"] = nn.ReLU()
    assert list(ld.keys()) == ["a", "b"] and len(ld.parameters()) == 2
    pl = nn.ParameterList([oar.zeros([2]), oar.ones([3])])
    assert len(pl) == 2 and pl[1].shape == [3] and pl[0].stop_gradient is False
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]


# ---- common layers and functional forms

def test_linear_matches_numpy_and_grad():
    fc = nn.Linear(3, 2)
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    out = fc(oar.to_tensor(x))
    np.testing.assert_allclose(out.numpy(), x @ fc.weight.numpy() + fc.bias.numpy(), rtol=1e-5, atol=1e-6)
    limit = np.sqrt(6 / 5)
    assert np.all(np.abs(fc.weight.numpy()) <= limit) and np.all(fc.bias.numpy() == 0)
    w = RNG.standard_normal((3, 2))
    xt = oar.to_tensor(x.astype(np.float64), stop_gradient=False)
    F.linear(xt, oar.to_tensor(w)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), np.ones((4, 2)) @ w.T, rtol=1e-12)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.linear\]"):
        F.linear(oar.ones([2, 4]), oar.ones([3, 2]))


def test_bilinear():
    x1, x2 = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 5))
    w, b = RNG.standard_normal((2, 3, 5)), RNG.standard_normal((1, 2))
    ref = lambda a: np.einsum("bi,oij,bj->bo", a, w, x2) + b  # noqa: E731
    fn = lambda t: F.bilinear(t, oar.to_tensor(x2), oar.to_tensor(w), oar.to_tensor(b))  # noqa: E731
    np.testing.assert_allclose(fn(oar.to_tensor(x1)).numpy(), ref(x1), rtol=1e-10)
    t = oar.to_tensor(x1, stop_gradient=False)
    fn(t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), numeric_grad(ref, x1), rtol=1e-6)
    assert nn.Bilinear(3, 5, 2)(oar.to_tensor(x1, dtype="float32"), oar.to_tensor(x2, dtype="float32")).shape == [4, 2]


def test_embedding_padding_idx_and_grad():
    emb = nn.Embedding(5, 3, padding_idx=-1, sparse=True)
    assert emb.weight.numpy()[4].tolist() == [0.0, 0.0, 0.0]
    ids = np.array([[1, 4, 1], [0, 2, 4]])
    out = emb(oar.to_tensor(ids))
    ref = emb.weight.numpy()[ids]
    ref[ids == 4] = 0
    np.testing.assert_allclose(out.numpy(), ref)
    out.sum().backward()
    g = emb.weight.grad.numpy()
    np.testing.assert_allclose(g[:, 0], [1, 2, 1, 0, 0])
    with pytest.raises(IndexError, match=r"^\[oar.nn.functional.embedding\]"):
        emb(oar.to_tensor([5]))


def test_dropout_modes():
    x = oar.ones([200, 50])
    y = F.dropout(x, 0.3).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((y == 0).mean() - 0.3) < 0.03
    y = F.dropout(x, 0.3, mode="downscale_in_infer").numpy()
    assert set(np.unique(y)) <= {0.0, 1.0}
    np.testing.assert_allclose(F.dropout(x, 0.3, training=False, mode="downscale_in_infer").numpy(), 0.7)
    y = F.dropout(x, 0.5, axis=1).numpy()
    assert (y == y[0:1]).all()  # the mask only varies along axis 1
    y = F.dropout2d(oar.ones([2, 8, 3, 3]), 0.5).numpy()
    assert (y == y[:, :, :1, :1]).all()
    assert F.dropout(x, 1.0).numpy().max() == 0.0
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.dropout\]"):
        F.dropout(x, 1.5)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.dropout\]"):
        F.dropout(x, 0.5, mode="bad")
    d = nn.Dropout(0.5)
    d.eval()
    assert d(x) is x
    a = F.alpha_dropout(oar.to_tensor(RNG.standard_normal((400, 400))), 0.2).numpy()
    assert abs(a.mean()) < 0.05 and abs(a.std() - 1) < 0.05


def test_flatten_unflatten_identity_pad():
    x = oar.ones([2, 3, 4])
    assert nn.Flatten()(x).shape == [2, 12]
    assert nn.Flatten(0, 1)(x).shape == [6, 4]
    assert nn.Unflatten(-1, [2, 2])(x).shape == [2, 3, 2, 2]
    assert nn.Identity()(x) is x
    a = RNG.standard_normal((1, 2, 3, 3))
    out = nn.Pad2D([1, 0, 2, 1], mode="reflect")(oar.to_tensor(a))
    np.testing.assert_allclose(out.numpy(), np.pad(a, [(0, 0), (0, 0), (2, 1), (1, 0)], mode="reflect"))
    out = nn.Pad1D(2, value=5.0)(oar.to_tensor(a[0]))
    np.testing.assert_allclose(out.numpy(), np.pad(a[0], [(0, 0), (0, 0), (2, 2)], constant_values=5.0))
    with pytest.raises(ValueError, match=r"^\[oar.nn.Pad3D\]"):
        nn.Pad3D([1, 2])


def test_cosine_similarity_pairwise_distance_normalize():
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(F.cosine_similarity(oar.to_tensor(a), oar.to_tensor(b)).numpy(), cos, rtol=1e-10)
    np.testing.assert_allclose(nn.CosineSimilarity(axis=0)(oar.to_tensor(a), oar.to_tensor(b)).numpy(),
                               (a * b).sum(0) / np.linalg.norm(a, axis=0) / np.linalg.norm(b, axis=0), rtol=1e-10)
    d = np.linalg.norm(a - b + 1e-6, axis=-1)
    np.testing.assert_allclose(nn.PairwiseDistance()(oar.to_tensor(a), oar.to_tensor(b)).numpy(), d, rtol=1e-10)
    d1 = np.abs(a - b + 1e-6).sum(-1, keepdims=True)
    np.testing.assert_allclose(F.pairwise_distance(oar.to_tensor(a), oar.to_tensor(b), p=1, keepdim=True).numpy(),
                               d1, rtol=1e-10)
    ref = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    np.testing.assert_allclose(F.normalize(oar.to_tensor(a)).numpy(), ref(a), rtol=1e-10)
    t = oar.to_tensor(a, stop_gradient=False)
    w = RNG.standard_normal(a.shape)
    (F.normalize(t) * oar.to_tensor(w)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), numeric_grad(lambda x: ref(x) * w, a), rtol=1e-6, atol=1e-9)
    assert F.normalize(oar.zeros([2, 3])).numpy().tolist() == [[0.0] * 3] * 2


def test_one_hot_label_smooth():
    out = F.one_hot(oar.to_tensor([[1, 0], [2, 2]]), 3)
    assert out.dtype == oar.float32 and out.shape == [2, 2, 3]
    np.testing.assert_array_equal(out.numpy(), np.eye(3)[[[1, 0], [2, 2]]])
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.one_hot\]"):
        F.one_hot(oar.to_tensor([3]), 3)
    lab = np.eye(4)[[0, 3]]
    np.testing.assert_allclose(F.label_smooth(oar.to_tensor(lab), epsilon=0.1).numpy(), lab * 0.9 + 0.025)
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(F.label_smooth(oar.to_tensor(lab), oar.to_tensor(prior), 0.2).numpy(),
                               lab * 0.8 + 0.2 * prior)


# ---- activations

ACTS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    (nn.CELU(0.5), lambda x: np.maximum(x, 0) + np.minimum(0, 0.5 * (np.exp(x / 0.5) - 1))),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.LogSigmoid(), lambda x: -np.log1p(np.exp(-x))),
    (nn.Silu(), lambda x: x / (1 + np.exp(-x))),
    (nn.Swish(), lambda x: x / (1 + np.exp(-x))),
    (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (nn.Softplus(), lambda x: np.log1p(np.exp(x))),
    (nn.Tanh(), np.tanh),
    (nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    (nn.Hardtanh(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5)),
    (nn.Hardsigmoid(), lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    (nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.Hardshrink(0.5), lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    (nn.Softshrink(0.5), lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0))),
    (nn.ThresholdedReLU(0.5), lambda x: np.where(x > 0.5, x, 0)),
    (nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (nn.Softmax(), lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    (nn.LogSoftmax(), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    (nn.PReLU(init=0.3), lambda x: np.where(x > 0, x, 0.3 * x)),
    (nn.GLU(), lambda x: x[..., :2] / (1 + np.exp(-x[..., 2:]))),
]


@pytest.mark.parametrize("layer,ref", ACTS, ids=[type(a[0]).__name__ for a in ACTS])
def test_activation_layers(layer, ref):
    x = RNG.standard_normal((3, 4)) * 2
    x[np.abs(np.abs(x) - 0.5) < 1e-3] = 0.3  # keep away from kinks for the finite differences
    layer.to(dtype="float64")
    np.testing.assert_allclose(layer(oar.to_tensor(x)).numpy(), ref(x), rtol=1e-6, atol=1e-12)
    t = oar.to_tensor(x, stop_gradient=False)
    layer(t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), numeric_grad(ref, x), rtol=1e-5, atol=1e-7)
    assert isinstance(repr(layer), str)


def test_prelu_channels_and_params():
    act = nn.PReLU(num_parameters=3, init=0.1)
    assert [n for n, _ in act.named_parameters()] == ["_weight"] and act.weight.shape == [3]
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    w = np.array([0.1, 0.1, 0.1], dtype=np.float32)[None, :, None]
    np.testing.assert_allclose(act(oar.to_tensor(x)).numpy(), np.where(x > 0, x, w * x), rtol=1e-6)
    with pytest.raises(ValueError, match=r"^\[oar.nn.PReLU\]"):
        act(oar.ones([2, 4, 3]))
    out = nn.Maxout(groups=2)(oar.to_tensor(x[:, :2]))
    np.testing.assert_allclose(out.numpy(), x[:, :2].reshape(2, 1, 2, 4).max(2))
    r = nn.RReLU(0.1, 0.3)
    y = r(oar.to_tensor(-np.ones(1000, dtype=np.float32))).numpy()
    assert (y <= -0.1 + 1e-6).all() and (y >= -0.3 - 1e-6).all()


# ---- gradient clipping

def _pairs():
    ps = [oar.ones([2]), oar.ones([3]), oar.ones([1])]
    gs = [RNG.standard_normal(2), RNG.standard_normal(3) * 5, RNG.standard_normal(1)]
    ps[2].need_clip = False
    return ps, gs, [(p, oar.to_tensor(g)) for p, g in zip(ps, gs)]


def test_clip_by_global_norm():
    ps, gs, pairs = _pairs()
    out = nn.ClipGradByGlobalNorm(1.0)(pairs + [(oar.ones([1]), None)])
    norm = np.sqrt(sum((g ** 2).sum() for g in gs[:2]))
    scale = 1.0 / max(norm, 1.0)
    for (p, g), ref in zip(out[:2], gs[:2]):
        np.testing.assert_allclose(g.numpy(), ref * scale, rtol=1e-10)
    np.testing.assert_allclose(out[2][1].numpy(), gs[2])  # need_clip=False is untouched
    assert out[3][1] is None
    with pytest.raises(ValueError, match=r"^\[oar.nn.ClipGradByGlobalNorm\]"):
        nn.ClipGradByGlobalNorm(0.0)


def test_clip_by_norm_and_value():
    ps, gs, pairs = _pairs()
    out = nn.ClipGradByNorm(1.0)(pairs)
    for (p, g), ref in zip(out[:2], gs[:2]):
        n = np.linalg.norm(ref)
        np.testing.assert_allclose(g.numpy(), ref * (1.0 / max(n, 1.0)), rtol=1e-10)
    out = nn.ClipGradByValue(0.5)(pairs)
    np.testing.assert_allclose(out[1][1].numpy(), np.clip(gs[1], -0.5, 0.5))
    np.testing.assert_allclose(out[2][1].numpy(), gs[2])
    out = nn.ClipGradByValue(0.5, min=0.0)(pairs)
    np.testing.assert_allclose(out[0][1].numpy(), np.clip(gs[0], 0.0, 0.5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_with_bias_is_one_product_with_numpy_gradients(dtype):
    rng = np.random.default_rng(3)
    x, w, b = rng.standard_normal((3, 5, 4)), rng.standard_normal((4, 6)), rng.standard_normal(6)
    g = rng.standard_normal((3, 5, 6))
    X, W, B = (oar.to_tensor(a.astype(dtype), stop_gradient=False) for a in (x, w, b))
    y = F.linear(X, W, B)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(y.numpy(), x @ w + b, rtol=tol, atol=tol)
    y.backward(oar.to_tensor(g.astype(dtype)))
    np.testing.assert_allclose(X.grad.numpy(), g @ w.T, rtol=tol, atol=tol)
    np.testing.assert_allclose(W.grad.numpy(), x.reshape(-1, 4).T @ g.reshape(-1, 6), rtol=tol, atol=tol)
    np.testing.assert_allclose(B.grad.numpy(), g.reshape(-1, 6).sum(0), rtol=tol, atol=tol)
    # non-contiguous x and a transposed weight view take the same path
    Xt = oar.to_tensor(x.transpose(1, 0, 2).copy().astype(dtype)).transpose([1, 0, 2])
    Wt = oar.to_tensor(w.T.copy().astype(dtype)).t()
    np.testing.assert_allclose(F.linear(Xt, Wt, B).numpy(), x @ w + b, rtol=tol, atol=tol)


def test_linear_bias_second_order_and_bfloat16():
    rng = np.random.default_rng(4)
    x = oar.to_tensor(rng.standard_normal((2, 3)), stop_gradient=False)
    w = oar.to_tensor(rng.standard_normal((3, 2)))
    b = oar.to_tensor(rng.standard_normal(2))
    y = (F.linear(x, w, b) ** 2).sum()
    (gx,) = oar.grad(y, x, create_graph=True)
    (hx,) = oar.grad(gx.sum(), x)
    # d/dx sum_j 2 (x w + b)_j w_kj = 2 sum_j w_ij w_kj summed over rows' k
    np.testing.assert_allclose(hx.numpy(), np.tile(2 * (w.numpy() @ w.numpy().T).sum(1), (2, 1)), rtol=1e-10)
    xs, ws, bs = (rng.standard_normal(s).astype(np.float32) for s in ((8, 16), (16, 4), (4,)))
    with oar.amp.auto_cast(dtype="bfloat16"):
        out = F.linear(oar.to_tensor(xs), oar.to_tensor(ws), oar.to_tensor(bs))
    assert out.dtype == oar.bfloat16
    np.testing.assert_allclose(out.astype("float32").numpy(), xs @ ws + bs, rtol=3e-2, atol=3e-2)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.linear\]"):
        oar._C._linear(oar.ones([2, 3]), oar.ones([3, 4]), oar.ones([5]))


def test_deepcopy_of_a_layer_holding_an_oar_function():
    """A Layer that keeps an oar function (an activation chosen by name)
    deep-copies: the function is shared, as Python functions are; the
    parameters are copied."""
    import copy

    class Block(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = oar.nn.Linear(3, 3)
            self.act = oar.nn.functional.gelu

        def forward(self, x):
            return self.act(self.fc(x))

    b = Block()
    c = copy.deepcopy(b)
    assert c.act is b.act and c.fc.weight is not b.fc.weight
    x = oar.ones([2, 3])
    np.testing.assert_array_equal(c(x).numpy(), b(x).numpy())
    assert copy.copy(oar.exp) is oar.exp
