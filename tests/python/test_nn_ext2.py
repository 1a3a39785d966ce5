"""oar.nn / oar.nn.functional: in-place and random activations, pooling layers, padding layers,
aliases and convolution keyword arguments. Fixed numbers marked "Paddle 3.3.1" were produced by
PaddlePaddle 3.3.1 on the same inputs."""
import numpy as np
import pytest

import oar
import oar.nn as nn
import oar.nn.functional as F


def t(v, dtype="float32"):
    return oar.to_tensor(np.asarray(v, dtype=dtype))


# ---------------------------------------------------------------- in-place activations

INPLACE = [
    (lambda y: F.elu_(y, 2.0), lambda x: np.where(x > 0, x, 2.0 * np.expm1(x)),
     lambda x: np.where(x > 0, 1.0, 2.0 * np.exp(x))),
    (lambda y: F.leaky_relu_(y, 0.1), lambda x: np.where(x > 0, x, 0.1 * x), lambda x: np.where(x > 0, 1.0, 0.1)),
    (lambda y: F.hardtanh_(y, -1.0, 1.5), lambda x: np.clip(x, -1.0, 1.5),
     lambda x: ((x > -1.0) & (x < 1.5)).astype(float)),
    (lambda y: F.thresholded_relu_(y, 0.5, 3.0), lambda x: np.where(x > 0.5, x, 3.0),
     lambda x: (x > 0.5).astype(float)),
    (lambda y: F.tanh_(y), np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    (lambda y: nn.SiLU(inplace=True)(y), lambda x: x / (1 + np.exp(-x)),
     lambda x: (1 + np.exp(-x) + x * np.exp(-x)) / (1 + np.exp(-x)) ** 2),
]


@pytest.mark.parametrize("k", range(len(INPLACE)))
def test_inplace_activation_value_and_gradient(k):
    fn, ref, dref = INPLACE[k]
    a_np = np.array([-1.3, 2.0, 0.25, -0.2], dtype=np.float64)
    a = oar.to_tensor(a_np)
    a.stop_gradient = False
    y = a * 2.0
    out = fn(y)
    assert out is y
    np.testing.assert_allclose(y.numpy(), ref(2 * a_np), rtol=1e-12)
    w = np.array([1.0, 3.0, 2.0, -1.0])
    (y * oar.to_tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * w * dref(2 * a_np), rtol=1e-10)


def test_softmax_inplace_and_gradient():
    a_np = np.array([[0.5, -1.0, 2.0]])
    a = oar.to_tensor(a_np)
    a.stop_gradient = False
    y = a * 1.0
    F.softmax_(y)
    s = np.exp(a_np) / np.exp(a_np).sum()
    np.testing.assert_allclose(y.numpy(), s, rtol=1e-12)
    w = np.array([[1.0, 2.0, -1.0]])
    (y * oar.to_tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), s * (w - (s * w).sum()), rtol=1e-10)


def test_inplace_without_gradient_and_errors():
    x = t([-1.0, 2.0])
    assert F.elu_(x) is x
    np.testing.assert_allclose(x.numpy(), [np.expm1(-1.0), 2.0], rtol=1e-6)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.elu_\]"):
        F.elu_(t([1.0]), -1.0)
    with pytest.raises(TypeError, match=r"^\[oar.nn.functional.leaky_relu_\]"):
        F.leaky_relu_([1.0])
    leaf = t([-1.0, 2.0])
    leaf.stop_gradient = False  # as in Paddle, a leaf that requires grad is not overwritten
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.elu_\]"):
        F.elu_(leaf)
    np.testing.assert_array_equal(leaf.numpy(), [-1.0, 2.0])


def test_hardtanh_min_above_max_follows_paddle():
    # Paddle 3.3.1: hardtanh(x, 2.0, -2.0) -> [-2, -2] (min(max(x, min), max)).
    np.testing.assert_array_equal(F.hardtanh(t([1.0, -2.0]), 2.0, -2.0).numpy(), [-2.0, -2.0])


def test_shrink_boundaries_follow_paddle():
    # Paddle 3.3.1: hardshrink keeps +-threshold, softshrink maps it to 0, thresholded_relu
    # sends x == threshold to value.
    x = t([-1.0, 1.0, 0.9999, 2.0])
    np.testing.assert_array_equal(F.hardshrink(x, 1.0).numpy(), [-1.0, 1.0, 0.0, 2.0])
    np.testing.assert_allclose(F.softshrink(x, 1.0).numpy(), [0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(F.thresholded_relu(x, 1.0, 5.0).numpy(), [5.0, 5.0, 5.0, 2.0])


# ---------------------------------------------------------------- random activations / dropouts

def test_rrelu_training_and_eval():
    x = oar.to_tensor(-np.ones(4000))
    y = F.rrelu(x, 0.1, 0.3).numpy()
    assert y.min() >= -0.3 and y.max() <= -0.1 and len(np.unique(y)) > 100
    assert abs(y.mean() + 0.2) < 0.01
    np.testing.assert_allclose(F.rrelu(t([-1.0, 2.0]), 0.1, 0.3, training=False).numpy(), [-0.2, 2.0], rtol=1e-6)
    for bad in [dict(lower=0.3, upper=0.1), dict(lower=-0.1, upper=0.1), dict(lower=0.1, upper=1.5)]:
        with pytest.raises(ValueError, match=r"^\[oar.nn.functional.rrelu\]"):
            F.rrelu(t([1.0]), **bad)
    with pytest.raises(TypeError, match=r"^\[oar.nn.functional.rrelu\]"):
        F.rrelu(oar.to_tensor([1, 2]))
    layer = nn.RReLU(0.1, 0.3)
    layer.eval()
    np.testing.assert_allclose(layer(t([-1.0])).numpy(), [-0.2], rtol=1e-6)


def test_gumbel_softmax_soft_hard_and_straight_through():
    x = oar.to_tensor(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]))
    soft = F.gumbel_softmax(x, temperature=0.5).numpy()
    np.testing.assert_allclose(soft.sum(-1), [1.0, 1.0], rtol=1e-12)
    assert (soft > 0).all()
    x.stop_gradient = False
    hard = F.gumbel_softmax(x, hard=True, axis=1)
    h = hard.numpy()
    assert sorted(h.reshape(-1).tolist()) == [0.0] * 4 + [1.0] * 2
    # The forward value is one-hot but the gradient is the soft sample's: softmax rows sum to
    # one, so the gradient of the row sums is zero.
    hard.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.zeros((2, 3)), atol=1e-12)
    # Large logit gaps make the argmax (almost) certain.
    big = F.gumbel_softmax(t([[0.0, 60.0, 0.0]]), hard=True).numpy()
    np.testing.assert_array_equal(big, [[0.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.gumbel_softmax\]"):
        F.gumbel_softmax(x, temperature=0)


def test_dropout1d_drops_whole_channels():
    y = F.dropout1d(oar.ones([8, 16, 5]), 0.5).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert (y.max(-1) == y.min(-1)).all()  # one decision per (batch, channel)
    y2 = F.dropout1d(oar.ones([40, 6]), 0.5).numpy()
    assert (y2.max(-1) == y2.min(-1)).all() and 0 < (y2[:, 0] == 0).sum() < 40
    np.testing.assert_array_equal(F.dropout1d(oar.ones([2, 3, 4]), 0.5, training=False).numpy(), np.ones((2, 3, 4)))
    x = oar.ones([2, 3, 4])
    assert F.dropout1d(x, 0.5, inplace=True) is x
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.dropout1d\]"):
        F.dropout1d(oar.ones([2, 3, 4, 5]))


def test_feature_alpha_dropout_values_and_channels():
    # For p = 0.5 the kept and dropped values are a + b and a * alpha' + b with
    # a = ((1 - p)(1 + p alpha'^2))^-1/2, b = -a alpha' p, alpha' = -1.7580993408473766;
    # Paddle 3.3.1 gives 1.6656 and -0.7792 on ones.
    p, al = 0.5, -1.7580993408473766
    a = ((1 - p) * (1 + p * al * al)) ** -0.5
    b = -a * al * p
    y = F.feature_alpha_dropout(oar.ones([6, 10, 3]), p).numpy()
    assert np.allclose(np.unique(y.round(4)), sorted({round(a + b, 4), round(a * al + b, 4)}))
    assert (y.max(-1) == y.min(-1)).all()
    np.testing.assert_allclose([a + b, a * al + b], [1.6656, -0.7792], atol=1e-4)
    layer = nn.FeatureAlphaDropout(0.5)
    layer.eval()
    np.testing.assert_array_equal(layer(oar.ones([2, 3])).numpy(), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.feature_alpha_dropout\]"):
        F.feature_alpha_dropout(oar.ones([3]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.feature_alpha_dropout\]"):
        F.feature_alpha_dropout(oar.ones([2, 3]), 1.5)


# ---------------------------------------------------------------- pooling against Paddle's numbers

def test_lp_pool_matches_paddle():
    x = t([[[1.0, -2.0, 3.0, 4.0, -1.0]]])
    # Paddle 3.3.1 outputs.
    np.testing.assert_allclose(F.lp_pool1d(x, 2, 2).numpy(), [[[2.2361, 5.0]]], atol=1e-4)
    np.testing.assert_allclose(F.lp_pool1d(x, 1, 2).numpy(), [[[-1.0, 7.0]]], atol=1e-4)
    np.testing.assert_allclose(F.lp_pool1d(x, 2, 2, padding=1).numpy(), [[[1.0, 3.6056, 4.1231]]], atol=1e-4)
    np.testing.assert_allclose(F.lp_pool1d(x, 2, 2, ceil_mode=True).numpy(), [[[2.2361, 5.0, 1.0]]], atol=1e-4)
    np.testing.assert_allclose(F.lp_pool1d(x, float("inf"), 2).numpy(), [[[1.0, 4.0]]])
    np.testing.assert_allclose(F.lp_pool1d(x, -1, 2).numpy(), [[[2.0, 1.7143]]], atol=1e-4)
    x2 = oar.arange(16, dtype="float32").reshape([1, 1, 4, 4])
    np.testing.assert_allclose(F.lp_pool2d(x2, 2, 2).numpy(), [[[[6.4807, 9.8995], [21.4009, 25.3377]]]], atol=1e-3)
    y = F.lp_pool2d(x2, 2, 3, stride=1, padding=1, ceil_mode=True).numpy()
    np.testing.assert_allclose(y[0, 0, 1], [13.6748, 18.0831, 20.6398, 17.8606], atol=1e-3)
    np.testing.assert_allclose(nn.LPPool2D(2, 2)(x2).numpy(), F.lp_pool2d(x2, 2, 2).numpy())
    assert nn.LPPool1d is nn.LPPool1D and nn.LPPool2d is nn.LPPool2D


def test_fractional_max_pool_matches_paddle():
    x = oar.arange(49, dtype="float32").reshape([1, 1, 7, 7])
    # Paddle 3.3.1 outputs.
    assert F.fractional_max_pool2d(x, 3, random_u=0.3).numpy()[0, 0].tolist() == \
        [[8, 11, 13], [29, 32, 34], [43, 46, 48]]
    assert F.fractional_max_pool2d(x, 3, random_u=0.7).numpy()[0, 0].tolist() == \
        [[16, 18, 20], [30, 32, 34], [44, 46, 48]]
    assert F.fractional_max_pool2d(x, 3, kernel_size=2, random_u=0.99).numpy()[0, 0].tolist() == \
        [[8, 10, 13], [22, 24, 27], [43, 45, 48]]
    assert F.fractional_max_pool2d(x, 3, kernel_size=5, random_u=0.5).numpy()[0, 0].tolist() == \
        [[32, 33, 34], [39, 40, 41], [46, 47, 48]]
    x1 = oar.to_tensor(np.random.RandomState(0).rand(1, 1, 1, 10).astype("float32"))
    expected = {(0.1, 6, None): [0, 1, 3, 5, 7, 8], (0.5, 4, None): [1, 3, 7, 8], (0.5, 6, None): [1, 2, 4, 5, 8, 9],
                (0.1, 6, 3): [1, 1, 2, 5, 7, 8], (0.5, 6, 3): [1, 2, 5, 5, 8, 8], (0.9, 6, 3): [1, 1, 5, 5, 7, 8]}
    for (u, o, k), mask in expected.items():
        y, m = F.fractional_max_pool2d(x1, [1, o], kernel_size=None if k is None else [1, k], random_u=u,
                                       return_mask=True)
        assert m.numpy().reshape(-1).tolist() == mask, (u, o, k)
        assert m.dtype == oar.int32
        np.testing.assert_array_equal(y.numpy().reshape(-1), x1.numpy().reshape(-1)[mask])
    y3 = F.fractional_max_pool3d(oar.arange(27, dtype="float32").reshape([1, 1, 3, 3, 3]), 2, random_u=0.5)
    assert y3.numpy().reshape(-1).tolist() == [13, 14, 16, 17, 22, 23, 25, 26]
    assert F.fractional_max_pool2d(x, [3, None], random_u=0.5).shape == [1, 1, 3, 7]
    assert F.fractional_max_pool2d(x, 3).shape == [1, 1, 3, 3]  # random u
    layer = nn.FractionalMaxPool2D(3, random_u=0.3, return_mask=True)
    y, m = layer(x)
    assert y.numpy()[0, 0, 0].tolist() == [8, 11, 13] and m.numpy()[0, 0, 0].tolist() == [8, 11, 13]
    assert nn.FractionalMaxPool3D(2, random_u=0.5)(oar.ones([1, 1, 3, 3, 3])).shape == [1, 1, 2, 2, 2]


def test_max_unpool_round_trip_and_sizes():
    x = t([[[1.0, 5.0, 3.0, 2.0, 7.0, 0.0]]])
    y, m = F.max_pool1d(x, 2, return_mask=True)
    np.testing.assert_array_equal(F.max_unpool1d(y, m, 2).numpy(), [[[0, 5, 3, 0, 7, 0]]])
    np.testing.assert_array_equal(F.max_unpool1d(y, m, 2, output_size=[1, 1, 7]).numpy(), [[[0, 5, 3, 0, 7, 0, 0]]])
    x2 = oar.arange(16, dtype="float32").reshape([1, 1, 4, 4])
    y2, m2 = F.max_pool2d(x2, 2, return_mask=True)
    # Paddle 3.3.1: the flat indices keep their values in the larger output.
    got = F.max_unpool2d(y2, m2, kernel_size=2, output_size=[5, 5]).numpy()[0, 0]
    assert np.argwhere(got).tolist() == [[1, 0], [1, 2], [2, 3], [3, 0]]
    layer = nn.MaxUnPool2D(2)
    np.testing.assert_array_equal(layer(y2, m2).numpy()[0, 0, 1], [0, 5, 0, 7])
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.max_unpool2d\]"):
        F.max_unpool2d(y2, m2, 2, data_format="NHWC")
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.max_unpool2d\]"):
        F.max_unpool2d(y2, m2, 2, padding=1)  # output 2x2 cannot hold index 15
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.max_unpool2d\]"):
        F.max_unpool2d(y2, m2[:, :, :1], 2)


def test_adaptive_max_pool_aliases():
    assert nn.AdaptiveMaxPool1d is nn.AdaptiveMaxPool1D and nn.AdaptiveMaxPool2d is nn.AdaptiveMaxPool2D
    assert nn.AdaptiveMaxPool3d is nn.AdaptiveMaxPool3D and nn.AdaptiveAvgPool2d is nn.AdaptiveAvgPool2D
    assert nn.UpsamplingNearest2d is nn.UpsamplingNearest2D and nn.SiLU is nn.Silu


# ---------------------------------------------------------------- padding layers

PADS = [
    (nn.ZeroPad1D, ([1, 2],), "constant", 3), (nn.ZeroPad3D, (1,), "constant", 5),
    (nn.ConstantPad1D, ([2, 0], 3.5), "constant", 3), (nn.ConstantPad2D, ([1, 0, 2, 1], -1.0), "constant", 4),
    (nn.ConstantPad3D, (1, 2.0), "constant", 5), (nn.ReflectionPad1D, ([2, 1],), "reflect", 3),
    (nn.ReflectionPad2D, ([1, 1, 0, 2],), "reflect", 4), (nn.ReflectionPad3D, (1,), "reflect", 5),
    (nn.ReplicationPad1D, ([0, 3],), "edge", 3), (nn.ReplicationPad2D, (1,), "edge", 4),
    (nn.ReplicationPad3D, ([1, 0, 0, 0, 0, 1],), "edge", 5), (nn.CircularPad1D, ([1, 2],), "wrap", 3),
    (nn.CircularPad2D, ([1, 0, 0, 1],), "wrap", 4), (nn.CircularPad3D, (1,), "wrap", 5),
]


@pytest.mark.parametrize("k", range(len(PADS)))
def test_padding_layers_against_numpy(k):
    cls, args, np_mode, ndim = PADS[k]
    x = np.random.default_rng(k).standard_normal((1, 2) + (3,) * (ndim - 2))
    pad = args[0]
    nd = ndim - 2
    pad = [pad] * (2 * nd) if isinstance(pad, int) else pad
    widths = [(0, 0), (0, 0)] + [(pad[2 * (nd - 1 - d)], pad[2 * (nd - 1 - d) + 1]) for d in range(nd)]
    kw = {"constant_values": args[1]} if len(args) > 1 else {}
    expected = np.pad(x, widths, mode=np_mode, **kw)
    got = cls(*args)(oar.to_tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_padding_aliases_and_channel_last():
    for name in ("ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad", "CircularPad"):
        for d in (1, 2, 3):
            assert getattr(nn, f"{name}{d}d") is getattr(nn, f"{name}{d}D")
    x = np.arange(6.0).reshape(1, 3, 2)  # NLC
    got = nn.ReplicationPad1D([1, 0], data_format="NLC")(oar.to_tensor(x)).numpy()
    np.testing.assert_array_equal(got, np.pad(x, [(0, 0), (1, 0), (0, 0)], mode="edge"))
    with pytest.raises(ValueError, match=r"^\[oar.nn.ConstantPad2D\]"):
        nn.ConstantPad2D([1, 2, 3], 0.0)


# ---------------------------------------------------------------- convolutions

def test_conv_aliases_bias_keyword_and_dtype():
    assert nn.Conv1d is nn.Conv1D and nn.Conv2d is nn.Conv2D and nn.Conv3d is nn.Conv3D
    c = nn.Conv2d(2, 4, 3, bias=False)
    assert c.bias is None and len(c.parameters()) == 1  # Paddle 3.3.1: 1 parameter
    c = nn.Conv2D(2, 4, 3, dtype="float64")
    assert c.weight.dtype == oar.float64 and c.bias.dtype == oar.float64
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5))
    y = c(oar.to_tensor(x)).numpy()
    w, b = c.weight.numpy(), c.bias.numpy()
    ref = np.zeros((1, 4, 3, 3))
    for o in range(4):
        for i in range(3):
            for j in range(3):
                ref[0, o, i, j] = (x[0, :, i:i + 3, j:j + 3] * w[o]).sum() + b[o]
    np.testing.assert_allclose(y, ref, rtol=1e-10)
    # Earlier Paddle releases took padding_mode positionally; that still works.
    assert nn.Conv1D(1, 1, 3, 1, 1, 1, 1, "circular")(oar.ones([1, 1, 4])).shape == [1, 1, 4]


# ---------------------------------------------------------------- layers over the functional forms

def test_activation_layers_use_functional_semantics():
    x = t([[-2.0, -0.5, 0.3, 1.5]])
    np.testing.assert_allclose(nn.CELU(-1.0)(x).numpy(), [[-6.3891, -0.6487, 0.3, 1.5]], atol=1e-4)  # Paddle 3.3.1
    np.testing.assert_array_equal(nn.Hardshrink(0.5)(x).numpy(), [[-2.0, -0.5, 0.0, 1.5]])  # Paddle 3.3.1
    assert nn.Maxout(2)(oar.arange(8, dtype="float32").reshape([1, 4, 1, 2])).numpy().tolist() == \
        [[[[2.0, 3.0]], [[6.0, 7.0]]]]
    with pytest.raises(ValueError, match=r"^\[oar.nn.CELU\]"):
        nn.CELU(0.0)(x)
    shuffle = nn.ChannelShuffle(2, "NHWC")
    assert shuffle(oar.arange(8, dtype="float32").reshape([1, 1, 2, 4])).numpy().tolist() == \
        [[[[0.0, 2.0, 1.0, 3.0], [4.0, 6.0, 5.0, 7.0]]]]
    with pytest.raises(ValueError, match=r"^\[oar.nn.ChannelShuffle\]"):
        nn.ChannelShuffle(0)


# ---------------------------------------------------------------- attention reference forms

def _np_attention(q, k, v, keep=None, scale=None, softcap=0.0):
    h, hk = q.shape[-2], k.shape[-2]
    k, v = np.repeat(k, h // hk, axis=-2), np.repeat(v, h // hk, axis=-2)
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if softcap:
        s = softcap * np.tanh(s / softcap)
    keep = np.ones(s.shape, bool) if keep is None else np.broadcast_to(keep, s.shape)
    mx = np.where(keep, s, -np.inf).max(-1, keepdims=True)
    e = np.where(keep, np.exp(s - np.where(np.isfinite(mx), mx, 0.0)), 0.0)
    den = e.sum(-1, keepdims=True)
    p = np.where(den > 0, e / np.where(den > 0, den, 1), 0.0)
    lse = np.log(den[..., 0]) + np.where(keep, s, -np.inf).max(-1)
    return np.einsum("bhqk,bkhd->bqhd", p, v), p, lse


def test_flash_attention_function_softmax_and_dropout():
    from oar.nn.functional.flash_attention import flash_attention

    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 4, 4, 3)) for _ in range(3))
    kk, vv = k[:, :, :2], v[:, :, :2]  # grouped-query attention: 4 query heads, 2 key heads
    out, p = flash_attention(*(oar.to_tensor(a) for a in (q, kk, vv)), causal=True, return_softmax=True)
    keep = np.tril(np.ones((4, 4), bool))
    ref, ref_p, _ = _np_attention(q, kk, vv, keep)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(p.numpy(), ref_p, rtol=1e-10)
    # Dropout only in training: the eval output is the plain one, the training one differs.
    ev, _ = flash_attention(*(oar.to_tensor(a) for a in (q, k, v)), dropout=0.5, training=False)
    np.testing.assert_allclose(ev.numpy(), _np_attention(q, k, v)[0], rtol=1e-10)
    tr, _ = flash_attention(*(oar.to_tensor(a) for a in (q, k, v)), dropout=0.5)
    assert not np.allclose(tr.numpy(), ev.numpy())
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.flash_attention.flash_attention\]"):
        flash_attention(oar.ones([1, 2, 3, 4]), oar.ones([1, 2, 2, 4]), oar.ones([1, 2, 2, 4]))
    with pytest.raises(ValueError, match=r"fixed_seed_offset"):
        flash_attention(oar.ones([1, 2, 1, 4]), oar.ones([1, 2, 1, 4]), oar.ones([1, 2, 1, 4]),
                        fixed_seed_offset=oar.zeros([2], dtype="int64"))


def test_flash_attn_qkvpacked_low_precision_and_causal_alignment():
    rng = np.random.default_rng(1)
    qkv = rng.standard_normal((1, 3, 3, 2, 8)).astype(np.float32)
    out, none = F.flash_attn_qkvpacked(oar.to_tensor(qkv).astype("bfloat16"), causal=True)
    assert none is None and out.dtype == oar.bfloat16
    ref = _np_attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], np.tril(np.ones((3, 3), bool)))[0]
    np.testing.assert_allclose(out.astype("float32").numpy(), ref, atol=3e-2, rtol=3e-2)
    # seq_len_q < seq_len_k: the causal mask is aligned to the bottom-right corner.
    from oar.nn.functional.flash_attention import flash_attention

    q, k = rng.standard_normal((1, 2, 1, 4)), rng.standard_normal((1, 5, 1, 4))
    got, _ = flash_attention(oar.to_tensor(q), oar.to_tensor(k), oar.to_tensor(k), causal=True)
    keep = np.arange(5)[None, :] <= np.arange(2)[:, None] + 3
    np.testing.assert_allclose(got.numpy(), _np_attention(q, k, k, keep)[0], rtol=1e-10)


def test_flashmask_lse_block_mask_and_errors():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((1, 6, 2, 4)) for _ in range(3))
    se = np.array([3, 6, 6, 5, 6, 6]).reshape(1, 1, 6, 1)
    out, lse = F.flashmask_attention(*(oar.to_tensor(a) for a in (q, k, v)), oar.to_tensor(se.astype(np.int32)),
                                     causal=True, return_softmax_lse=True)
    keep = (np.arange(6)[:, None] < se[0, 0, :, 0][None, :]) & np.tril(np.ones((6, 6), bool))
    ref, _, ref_lse = _np_attention(q, k, v, keep)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
    assert lse.dtype == oar.float32 and lse.shape == [1, 2, 6]
    np.testing.assert_allclose(lse.numpy(), ref_lse, rtol=1e-5)
    # block_mask: one 128 x 128 block covers everything here; 0 hides it all -> zeros.
    zero = F.flashmask_attention(*(oar.to_tensor(a) for a in (q, k, v)),
                                 block_mask=oar.zeros([1, 2, 1, 1], dtype="int32"))
    np.testing.assert_array_equal(zero.numpy(), np.zeros_like(q))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.flashmask_attention\]"):
        F.flashmask_attention(oar.ones([1, 4, 1, 2]), oar.ones([1, 4, 1, 2]), oar.ones([1, 4, 1, 2]),
                              return_seed_offset=True)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.flashmask_attention\]"):
        F.flashmask_attention(oar.ones([1, 4, 1, 2]), oar.ones([1, 4, 1, 2]), oar.ones([1, 4, 1, 2]),
                              oar.ones([1, 1, 3, 1], dtype="int32"), causal=True)


def test_varlen_functions_match_per_sequence_attention():
    from oar.nn.functional.flash_attention import flash_attn_unpadded

    rng = np.random.default_rng(3)
    cu = np.array([0, 2, 5, 6])
    q, k, v = (rng.standard_normal((6, 2, 4)) for _ in range(3))
    cu_t = oar.to_tensor(cu.astype(np.int32))
    out, _ = flash_attn_unpadded(*(oar.to_tensor(a) for a in (q, k, v)), cu_t, cu_t, 3, 3, 0.4, causal=True)
    out3, lse3 = F.flash_attention_v3_varlen(*(oar.to_tensor(a) for a in (q, k, v)), cu_t, cu_t, 3, 3,
                                             softmax_scale=0.4, causal=True, softcap=2.0, window_size=(1, -1))
    for lo, hi in zip(cu[:-1], cu[1:]):
        n = hi - lo
        seq = [a[lo:hi][None] for a in (q, k, v)]
        ref = _np_attention(*seq, keep=np.tril(np.ones((n, n), bool)), scale=0.4)[0][0]
        np.testing.assert_allclose(out.numpy()[lo:hi], ref, rtol=1e-10)
        win = np.tril(np.ones((n, n), bool)) & (np.arange(n)[None, :] >= np.arange(n)[:, None] - 1)
        ref3, _, ref_lse = _np_attention(*seq, keep=win, scale=0.4, softcap=2.0)
        np.testing.assert_allclose(out3.numpy()[lo:hi], ref3[0], rtol=1e-10)
        np.testing.assert_allclose(lse3.numpy()[:, lo:hi], ref_lse[0], rtol=1e-6)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.flash_attention_v3_varlen\]"):
        F.flash_attention_v3_varlen(*(oar.to_tensor(a) for a in (q, k, v)), cu_t, cu_t, 3, 3, qv=oar.ones([6, 2, 4]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.flash_attention_v3_varlen\]"):
        F.flash_attention_v3_varlen(*(oar.to_tensor(a) for a in (q, k, v)), cu_t, cu_t, 2, 3)


def test_sparse_attention_matches_paddle_documented_output():
    # The example in Paddle's sparse_attention documentation, with its printed results.
    x = t([[[[0.0, 1.0], [2.0, 3.0], [0.0, 1.0], [2.0, 3.0]]]])
    offset = oar.to_tensor(np.array([[[0, 2, 4, 6, 8]]], np.int32))
    columns = oar.to_tensor(np.array([[[0, 1, 0, 1, 2, 3, 2, 3]]], np.int32))
    kpm = t([[1, 1, 1, 0]])
    am = t([[1, 0, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]])
    got = F.sparse_attention(x, x, x, offset, columns, key_padding_mask=kpm, attn_mask=am).numpy()
    np.testing.assert_allclose(got[0, 0], [[0, 1], [1.9983027, 2.9983027], [0, 1], [0, 1]], rtol=1e-6)
    got = F.sparse_attention(x, x, x, offset, columns).numpy()
    np.testing.assert_allclose(got[0, 0], [[1.6088594, 2.6088595], [1.9983027, 2.9983027]] * 2, rtol=1e-6)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.sparse_attention\]"):
        F.sparse_attention(x, x, x, offset, columns, key_padding_mask=t([[1, 1]]))
