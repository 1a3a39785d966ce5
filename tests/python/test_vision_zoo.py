"""The vision model zoo beyond ResNet, VGG and MobileNetV2: AlexNet, SqueezeNet, MobileNetV1/V3,
ShuffleNetV2, DenseNet, GoogLeNet and InceptionV3.

State dicts (keys, shapes, counts) and whole-network outputs are checked against reference
numbers computed once with PaddlePaddle 3.3.1's paddle.vision.models; the building blocks
against NumPy; gradients against finite differences."""
import hashlib
import importlib

import numpy as np
import pytest

import oar
import oar.nn.functional as F

M = importlib.import_module("oar.vision.models")


# ---------------------------------------------------------------------------------------------
# Reference numbers from PaddlePaddle 3.3.1 (computed once with paddle.vision.models, CPU).
# For each constructor call: (number of state_dict entries, their total element count, the element
# count of the trainable parameters, the first 16 hex digits of the SHA-256 of the sorted
# "key:shape" lines of the state dict; see state_digest below). Batch-norm running statistics are
# in the state dict but, having stop_gradient=True, not among the trainable parameters.

PADDLE_COUNTS = {
    'alexnet()': (16, 61100840, 61100840, 'db760301f3606cfa'),
    'squeezenet1_0()': (52, 1248424, 1248424, 'b4ebf99d9a0e01a2'),
    'squeezenet1_1()': (52, 1235496, 1235496, '80eb527c58200cf7'),
    'mobilenet_v1()': (137, 4253864, 4231976, '67d9c481eacfd1f1'),
    'mobilenet_v3_small()': (210, 2554968, 2542856, 'cf7fe3df0768c119'),
    'mobilenet_v3_large()': (266, 5507432, 5483032, '784660a03ca572ad'),
    'shufflenet_v2_x0_25()': (282, 607712, 603688, 'aa52acded9d44afa'),
    'shufflenet_v2_x0_33()': (282, 652264, 647272, '03f4765d6d606b64'),
    'shufflenet_v2_x0_5()': (282, 1374744, 1366792, '8af33144727e87a0'),
    'shufflenet_v2_x1_0()': (282, 2294784, 2278604, 'db71b6735a0e0eae'),
    'shufflenet_v2_x1_5()': (282, 3527064, 3503624, '7dca271152d24cb9'),
    'shufflenet_v2_x2_0()': (282, 7399952, 7366536, '51c64be7542f7fef'),
    'shufflenet_v2_swish()': (282, 2294784, 2278604, 'db71b6735a0e0eae'),
    'densenet121()': (606, 8062504, 7978856, '0122101cc1076633'),
    'densenet161()': (806, 28900936, 28681000, 'c7486b0d7ef88206'),
    'densenet169()': (846, 14307880, 14149480, '9fcef2aa012727f0'),
    'densenet201()': (1006, 20242984, 20013928, 'b31191363ecbfc1b'),
    'densenet264()': (1326, 33736232, 33337704, '001b2ac0f26b4c93'),
    'googlenet()': (69, 11535736, 11535736, '6100eb81517360f2'),
    'inception_v3()': (472, 23869000, 23834568, '90cadbcaaa2fb78b'),
    'MobileNetV1(scale=0.25, num_classes=10)': (137, 221114, 215642, '4a796c8ae0906bc6'),
    'MobileNetV3Small(scale=0.5, num_classes=10)': (210, 415538, 409394, 'd7836bff443b0bae'),
    'MobileNetV3Large(scale=0.75, num_classes=10)': (266, 2444602, 2426186, '342e6ed475a8074a'),
    'MobileNetV3Small(scale=1.25, with_pool=False)': (210, 3660144, 3644912, '6ed0accc2c8f1b7c'),
    'ShuffleNetV2(scale=0.5, act=None, num_classes=10)': (282, 359994, 352042, 'db9613d2cd14358a'),
    'DenseNet(161, bn_size=2, num_classes=10)': (806, 14864554, 14659594, 'b6e7fb7242a6be50'),
    'GoogLeNet(num_classes=0)': (57, 5966272, 5966272, '83ea044f78087cec'),
    'InceptionV3(num_classes=0)': (470, 21820000, 21785568, '5199f19cbf467552'),
    'AlexNet(num_classes=0)': (10, 2469696, 2469696, '079589ab5dc5e4aa'),
    "SqueezeNet('1.1', num_classes=10, with_pool=False)": (52, 727626, 727626, '5d74e28a4350221a'),
    # the families that were already in oar, for comparison
    'mobilenet_v2()': (262, 3538984, 3504872, '4340bfebeeebd375'),
    'MobileNetV2(scale=0.5, num_classes=10)': (262, 719034, 700490, '30e21b1d37f0f775'),
    'resnext50_32x4d()': (267, 25097128, 25028904, '9af6c33491290d11'),
    'wide_resnet50_2()': (267, 68951464, 68883240, 'a4ae65ad4c0c6681'),
}


def state_digest(state_dict):
    text = "\n".join(f"{k}:{list(v.shape)}" for k, v in sorted(state_dict.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def build(expr):
    return eval("M." + expr)  # the expressions above, e.g. "densenet121()"


# a few entries spelled out, so that a digest mismatch can be read against Paddle's names
SPOT_CHECKS = {
    "shufflenet_v2_x1_0()": {"2_1._conv_dw_1.0.weight": [24, 1, 3, 3], "2_1._conv_linear_1.0.weight": [58, 24, 1, 1],
                             "3_2._conv_pw.1._variance": [116], "_fc.weight": [1024, 1000]},
    "mobilenet_v3_small()": {"blocks.0.mid_se.fc1.weight": [8, 16, 1, 1],
                             "blocks.1.expand_conv.0.weight": [72, 16, 1, 1],
                             "lastconv.0.weight": [576, 96, 1, 1], "classifier.0.weight": [576, 1024]},
    "squeezenet1_0()": {"_conv8._conv_path2._conv.weight": [256, 64, 3, 3], "_conv9.bias": [1000]},
    "inception_v3()": {"inception_block_list.4.branch7x7_2.0.weight": [128, 128, 1, 7],
                       "inception_block_list.10.branch3x3dbl_3b.1._mean": [384], "fc.weight": [2048, 1000]},
    # Paddle's GoogLeNet convolutions have no bias
    "googlenet()": {"_ince4a._conv5._conv.weight": [48, 16, 5, 5], "_fc_o2.weight": [1152, 1024],
                    "_ince4a._conv5._conv.bias": None},
    "densenet121()": {"db_conv_5.conv5_16.bn_ac_func1._conv.weight": [128, 992, 1, 1],
                      "tr_conv4_blk.conv_ac_func._batch_norm.weight": [1024], "batch_norm._variance": [1024]},
}


@pytest.mark.parametrize("expr", list(PADDLE_COUNTS))
def test_state_dict_keys_shapes_and_counts_match_paddle(expr):
    model = build(expr)
    sd = model.state_dict()
    for key, shape in SPOT_CHECKS.get(expr, {}).items():
        assert (sd[key].shape if key in sd else None) == shape, key
    total = sum(int(np.prod(v.shape)) for v in sd.values())
    trainable = sum(int(np.prod(p.shape)) for p in model.parameters() if not p.stop_gradient)
    assert (len(sd), total, trainable, state_digest(sd)) == PADDLE_COUNTS[expr]


# ---------------------------------------------------------------------------------------------
# Whole networks against Paddle: weights and inputs come from an integer hash (no RNG), the
# models run in eval mode, and PADDLE_OUTPUTS holds Paddle 3.3.1's outputs for the same values.


def hashed_uniform(shape, seed):
    """Values in [-1, 1) from an integer hash of (index, seed): exact and the same on every machine."""
    n = int(np.prod(shape))
    with np.errstate(over="ignore"):
        # hash a block of at most 65521 (a prime) indices and repeat it: cheap for 10^7-element weights
        x = np.arange(min(n, 65521), dtype=np.uint64) + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return np.resize((x >> np.uint64(11)).astype(np.float64) / 2.0 ** 52 - 1.0, n).reshape(shape)


def deterministic_state(shapes):
    """A state dict {name: shape} filled without an RNG: He-scaled uniform conv/Linear weights,
    norm scales and variances near 1, small biases and means."""
    out = {}
    for i, name in enumerate(sorted(shapes)):
        shape = list(shapes[name])
        u = hashed_uniform(shape, i + 1)
        if name.endswith("_variance"):
            a = 1.0 + 0.5 * u * u
        elif name.endswith("_mean") or name.endswith("bias"):
            a = 0.1 * u
        elif len(shape) == 1:  # norm scale
            a = 1.0 + 0.2 * u
        else:  # conv [out, in, kh, kw] or Linear [in, out]
            fan_in = int(np.prod(shape[1:])) if len(shape) == 4 else shape[0]
            a = u * np.sqrt(6.0 / fan_in)
        out[name] = a.astype("float32")
    return out


PADDLE_OUTPUTS = {
    ('alexnet(num_classes=4)', (1, 3, 224, 224)): [
        [[-0.546467, 0.685183, -0.821315, -0.314737]],
    ],
    ('squeezenet1_0(num_classes=4)', (1, 3, 67, 67)): [
        [[0.247507, 0.0350162, 0.0145223, 0.0]],
    ],
    ("SqueezeNet('1.1', num_classes=4, with_pool=False)", (1, 3, 51, 51)): [
        [[0.0475052, 0.104039, 0.0401957, 0.126968, -0.0862959, -0.081208, -0.115147, -0.0968745, -0.175881,
         -0.0379396, -0.198935, -0.159838, -0.112928, -0.0293861, 0.0706028, 0.0737992]],
    ],
    ('MobileNetV1(scale=0.25, num_classes=4)', (2, 3, 32, 32)): [
        [[0.156163, -0.0838784, -0.155814, -0.0889516], [0.156387, -0.0835729, -0.155951, -0.0886869]],
    ],
    ('MobileNetV3Small(scale=0.5, num_classes=4)', (2, 3, 32, 32)): [
        [[0.087702, -0.0697543, 0.174127, -0.0410886], [0.07917, -0.0780114, 0.175945, -0.0333486]],
    ],
    ('MobileNetV3Large(scale=0.35, num_classes=4)', (1, 3, 32, 32)): [
        [[-0.0538005, 0.0785398, -0.124286, 0.293714]],
    ],
    ('ShuffleNetV2(scale=0.25, num_classes=4)', (2, 3, 32, 32)): [
        [[0.320382, -0.271942, 0.195205, 0.0302368], [0.386058, -0.281725, 0.266699, 0.0194017]],
    ],
    ("ShuffleNetV2(scale=0.33, act='swish', num_classes=4)", (1, 3, 32, 32)): [
        [[0.171808, -0.180128, -0.0783163, -0.0902449]],
    ],
    ('DenseNet(121, bn_size=1, dropout=0.2, num_classes=4)', (1, 3, 32, 32)): [
        [[0.162559, 0.237684, -0.702538, -0.0166645]],
    ],
    ('GoogLeNet(num_classes=4)', (1, 3, 224, 224)): [
        [[-9.32751, 25.8728, -20.7838, -15.4433]],
        [[-4.90738, 8.09496, 2.27649, -2.65594]],
        [[-2.50681, -1.67732, 4.29833, 0.374073]],
    ],
    ('InceptionV3(num_classes=4)', (1, 3, 75, 75)): [
        [[0.197643, 0.0973079, 0.0165942, -0.0796048]],
    ],
}


@pytest.mark.parametrize("expr, shape", list(PADDLE_OUTPUTS))
def test_forward_matches_paddle(expr, shape):
    model = build(expr)
    values = deterministic_state({k: v.shape for k, v in model.state_dict().items()})
    missing, unexpected = model.set_state_dict({k: oar.to_tensor(v) for k, v in values.items()})
    assert not missing and not unexpected
    model.eval()
    with oar.no_grad():
        out = model(oar.to_tensor(hashed_uniform(list(shape), 0).astype("float32")))
    outs = out if isinstance(out, (list, tuple)) else [out]
    expected = PADDLE_OUTPUTS[(expr, shape)]
    assert len(outs) == len(expected)
    for got, ref in zip(outs, expected):
        ref = np.array(ref)
        got = got.numpy().reshape(got.shape[0], -1)
        assert got.shape == ref.shape
        # float32 results agree to ~4e-6 of the largest output; the references carry 6 digits
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=5e-5 * np.abs(ref).max())


# ---------------------------------------------------------------------------------------------
# Forward shapes in train mode (random init, batch statistics, dropout on)


@pytest.mark.parametrize("expr, shape, expected", [
    ("AlexNet(num_classes=0)", [1, 3, 224, 224], [[1, 256, 6, 6]]),
    ("squeezenet1_1(num_classes=5)", [2, 3, 48, 48], [[2, 5]]),
    ("squeezenet1_0(num_classes=0)", [2, 3, 48, 48], [[2, 512]]),
    ("mobilenet_v1(scale=0.25, num_classes=5, with_pool=False)", [2, 3, 32, 32], [[2, 5]]),
    ("mobilenet_v3_small(scale=0.5, num_classes=0, with_pool=False)", [2, 3, 64, 64], [[2, 288, 2, 2]]),
    ("mobilenet_v3_large(scale=0.5, num_classes=5)", [2, 3, 32, 32], [[2, 5]]),
    ("shufflenet_v2_x0_33(num_classes=0)", [2, 3, 32, 32], [[2, 512, 1, 1]]),
    ("shufflenet_v2_swish(num_classes=0, with_pool=False)", [2, 3, 64, 64], [[2, 1024, 2, 2]]),
    ("DenseNet(121, bn_size=1, dropout=0.5, num_classes=0, with_pool=False)", [2, 3, 32, 32], [[2, 1024, 1, 1]]),
    ("GoogLeNet(num_classes=0, with_pool=False)", [1, 3, 96, 96], [[1, 1024, 2, 2], [1, 512, 5, 5], [1, 528, 5, 5]]),
    ("InceptionV3(num_classes=0, with_pool=False)", [1, 3, 107, 107], [[1, 2048, 2, 2]]),
])
def test_train_mode_forward_shapes_are_finite(expr, shape, expected):
    oar.seed(0)
    model = build(expr)
    model.train()
    out = model(oar.randn(shape))
    outs = out if isinstance(out, (list, tuple)) else [out]
    assert [t.shape for t in outs] == expected
    assert all(np.isfinite(t.numpy()).all() for t in outs)


# ---------------------------------------------------------------------------------------------
# Gradients


def test_backward_reaches_first_conv_and_every_parameter():
    oar.seed(0)
    model = M.ShuffleNetV2(scale=0.25, num_classes=3)
    model.train()
    loss = F.cross_entropy(model(oar.randn([4, 3, 32, 32])), oar.to_tensor([0, 1, 2, 0]))
    loss.backward()
    first = model._conv1[0].weight.grad
    assert first is not None and first.shape == [24, 3, 3, 3]
    assert np.isfinite(first.numpy()).all() and np.abs(first.numpy()).max() > 0
    for name, p in model.named_parameters():
        if not p.stop_gradient:
            assert p.grad is not None and np.isfinite(p.grad.numpy()).all(), name


def test_gradient_of_first_conv_matches_finite_differences():
    # float64, eval mode (running statistics), so that the loss is a smooth deterministic function
    oar.seed(1)
    model = M.MobileNetV3Small(scale=0.5, num_classes=3)
    model.to(dtype="float64")
    model.eval()
    x = oar.to_tensor(hashed_uniform([1, 3, 32, 32], 7))
    proj = oar.to_tensor(hashed_uniform([1, 3], 8))

    def loss():
        return (model(x) * proj).sum()

    loss().backward()
    w = model.conv[0].weight
    grad = w.grad.numpy()
    base = w.numpy().copy()
    eps = 1e-5
    for idx in [(0, 0, 0, 0), (3, 1, 2, 1), (7, 2, 1, 2)]:
        plus, minus = base.copy(), base.copy()
        plus[idx] += eps
        minus[idx] -= eps
        with oar.no_grad():
            w.set_value(oar.to_tensor(plus))
            lp = float(loss())
            w.set_value(oar.to_tensor(minus))
            lm = float(loss())
        w.set_value(oar.to_tensor(base))
        np.testing.assert_allclose(grad[idx], (lp - lm) / (2 * eps), rtol=1e-4, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# Building blocks against NumPy


def test_shufflenet_unit_matches_numpy():
    from oar.vision.models.shufflenetv2 import _InvertedResidual

    unit = _InvertedResidual(8, 8, oar.nn.ReLU)
    unit.eval()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 8, 5, 5)).astype("float32")
    w = {k: v.numpy().astype(np.float64) for k, v in unit.state_dict().items()}

    def cbr(h, prefix, groups=1, relu=True):
        k = w[prefix + ".0.weight"]
        o, cg, kh, _ = k.shape
        pad = kh // 2
        hp = np.pad(h, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        out = np.zeros((h.shape[0], o, h.shape[2], h.shape[3]))
        og = o // groups
        for g in range(groups):
            for i in range(kh):
                for j in range(kh):
                    patch = hp[:, g * cg:(g + 1) * cg, i:i + h.shape[2], j:j + h.shape[3]]
                    out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, k[g * og:(g + 1) * og, :, i, j])
        bn = lambda n: w[f"{prefix}.1.{n}"][None, :, None, None]  # noqa: E731
        out = (out - bn("_mean")) / np.sqrt(bn("_variance") + 1e-5) * bn("weight") + bn("bias")
        return np.maximum(out, 0) if relu else out

    x1, x2 = x[:, :4], x[:, 4:]
    y = cbr(cbr(cbr(x2, "_conv_pw"), "_conv_dw", groups=4, relu=False), "_conv_linear")
    cat = np.concatenate([x1, y], axis=1)
    expected = cat.reshape(2, 2, 4, 5, 5).transpose(0, 2, 1, 3, 4).reshape(2, 8, 5, 5)  # channel shuffle
    assert list(expected[0, :4, 0, 0]) == [x1[0, 0, 0, 0], y[0, 0, 0, 0], x1[0, 1, 0, 0], y[0, 1, 0, 0]]
    np.testing.assert_allclose(unit(oar.to_tensor(x)).numpy(), expected, rtol=1e-4, atol=1e-5)


def test_squeeze_excitation_matches_numpy():
    from oar.vision.models.mobilenetv3 import _SqueezeExcitation

    se = _SqueezeExcitation(6, 8)
    x = np.random.default_rng(1).normal(size=(2, 6, 4, 3)).astype("float32")
    w = {k: v.numpy().astype(np.float64) for k, v in se.state_dict().items()}
    s = x.mean(axis=(2, 3))
    s = np.maximum(s @ w["fc1.weight"][:, :, 0, 0].T + w["fc1.bias"], 0)
    s = s @ w["fc2.weight"][:, :, 0, 0].T + w["fc2.bias"]
    s = np.clip(s / 6 + 0.5, 0, 1)  # Paddle's hardsigmoid: slope 1/6, offset 0.5
    np.testing.assert_allclose(se(oar.to_tensor(x)).numpy(), x * s[:, :, None, None], rtol=1e-5, atol=1e-6)


def test_mobilenet_v3_batch_norm_momentum_and_epsilon():
    # Paddle's MobileNetV3 normalises with epsilon 1e-3 and keeps 0.99 of the running mean per step
    bn = M.MobileNetV3Small(scale=0.5).conv[1]
    bn.train()
    x = (np.random.default_rng(2).normal(size=(4, 8, 3, 3)) * 0.05).astype("float32")
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    expected = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-3)
    np.testing.assert_allclose(bn(oar.to_tensor(x)).numpy(), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn._mean.numpy(), 0.01 * mean, rtol=1e-4, atol=1e-8)


def test_dense_layer_concatenates_and_transition_halves():
    from oar.vision.models.densenet import _DenseLayer, _Transition

    layer = _DenseLayer(5, growth_rate=3, bn_size=2, dropout=0.0)
    layer.eval()
    x = oar.randn([2, 5, 4, 4])
    y = layer(x)
    assert y.shape == [2, 8, 4, 4]
    np.testing.assert_array_equal(y.numpy()[:, :5], x.numpy())  # the input passes through unchanged
    t = _Transition(8, 4)
    t.eval()
    assert t(y).shape == [2, 4, 2, 2]


# ---------------------------------------------------------------------------------------------
# Names and errors

# paddle.vision.models.__all__ in Paddle 3.3.1
PADDLE_ALL = [
    "ResNet", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d", "resnext50_64x4d",
    "resnext101_32x4d", "resnext101_64x4d", "resnext152_32x4d", "resnext152_64x4d", "wide_resnet50_2",
    "wide_resnet101_2", "VGG", "vgg11", "vgg13", "vgg16", "vgg19", "MobileNetV1", "mobilenet_v1", "MobileNetV2",
    "mobilenet_v2", "MobileNetV3Small", "MobileNetV3Large", "mobilenet_v3_small", "mobilenet_v3_large", "LeNet",
    "DenseNet", "densenet121", "densenet161", "densenet169", "densenet201", "densenet264", "AlexNet", "alexnet",
    "InceptionV3", "inception_v3", "SqueezeNet", "squeezenet1_0", "squeezenet1_1", "GoogLeNet", "googlenet",
    "ShuffleNetV2", "shufflenet_v2_x0_25", "shufflenet_v2_x0_33", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0",
    "shufflenet_v2_x1_5", "shufflenet_v2_x2_0", "shufflenet_v2_swish",
]


def test_every_paddle_model_name_is_exported():
    assert [n for n in PADDLE_ALL if n not in M.__all__ or not hasattr(M, n)] == []


@pytest.mark.parametrize("name", [n for n in PADDLE_ALL if n[0].islower()])
def test_pretrained_raises_a_clear_error(name):
    with pytest.raises(NotImplementedError, match=rf"^\[oar.vision.models.{name}\] pretrained weights are not "
                                                  r"available .* set_state_dict"):
        getattr(M, name)(pretrained=True)


@pytest.mark.parametrize("call, error, message", [
    (lambda: M.SqueezeNet("1.2"), ValueError, r"^\[oar.vision.models.SqueezeNet\] version must be one of"),
    (lambda: M.SqueezeNet(1.0), ValueError, r"^\[oar.vision.models.SqueezeNet\] version .* got 1.0"),
    (lambda: M.DenseNet(layers=122), ValueError, r"^\[oar.vision.models.DenseNet\] layers must be one of"),
    (lambda: M.ShuffleNetV2(scale=0.7), ValueError, r"^\[oar.vision.models.ShuffleNetV2\] scale must be one of"),
    (lambda: M.ShuffleNetV2(act="gelu"), ValueError, r"^\[oar.vision.models.ShuffleNetV2\] act must be one of"),
    (lambda: M.shufflenet_v2_swish(act="relu"), TypeError, r"^\[oar.vision.models.shufflenet_v2_swish\] act"),
    (lambda: M.MobileNetV1(scale=0), ValueError, r"^\[oar.vision.models.MobileNetV1\] scale must be a positive "
                                                 r"number, got 0"),
    (lambda: M.MobileNetV3Small(scale=-1.0), ValueError, r"^\[oar.vision.models.MobileNetV3Small\] scale"),
    (lambda: M.MobileNetV3Large(scale="1"), TypeError, r"^\[oar.vision.models.MobileNetV3Large\] scale must be a "
                                                        r"number, got str"),
    (lambda: M.AlexNet(num_classes=10.0), TypeError, r"^\[oar.vision.models.AlexNet\] num_classes must be an int"),
    (lambda: M.GoogLeNet(num_classes="10"), TypeError, r"^\[oar.vision.models.GoogLeNet\] num_classes"),
    (lambda: M.InceptionV3(num_classes=None), TypeError, r"^\[oar.vision.models.InceptionV3\] num_classes"),
    (lambda: M.DenseNet(num_classes=True), TypeError, r"^\[oar.vision.models.DenseNet\] num_classes"),
])
def test_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()
