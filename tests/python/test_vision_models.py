"""Vision model zoo: parameter counts of the published architectures, forward shapes, NumPy
reference forwards for LeNet and the residual blocks, and short training runs."""
import importlib

import numpy as np
import pytest

import oar
import oar.nn.functional as F

M = importlib.import_module("oar.vision.models")


def n_params(model):
    """Trainable parameters (batch-norm running statistics are non-trainable parameters, as in Paddle)."""
    return sum(int(np.prod(p.shape)) for p in model.parameters() if p.trainable)


# ---------------------------------------------------------------------------------------------
# NumPy references


def np_conv2d(x, w, b=None, stride=1, padding=0, groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    ho = (h + 2 * padding - kh) // stride + 1
    wo = (wd + 2 * padding - kw) // stride + 1
    out = np.zeros((n, o, ho, wo))
    og = o // groups
    for g in range(groups):
        xg = x[:, g * cg:(g + 1) * cg]
        wg = w[g * og:(g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xg[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, wg[:, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out


def np_maxpool2(x):
    n, c, h, w = x.shape
    return x[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def np_bn_eval(x, bn):
    mean, var = bn._mean.numpy(), bn._variance.numpy()
    g, b = bn.weight.numpy(), bn.bias.numpy()
    return (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5) * g[None, :, None, None] \
        + b[None, :, None, None]


def relu(x):
    return np.maximum(x, 0)


def randomise_bn_stats(model, rng):
    # non-trivial running statistics so that eval-mode batch norm is actually exercised
    for layer in model.sublayers():
        if isinstance(layer, oar.nn.BatchNorm2D):
            c = layer._mean.shape[0]
            layer._mean.set_value(oar.to_tensor(rng.normal(size=c).astype("float32")))
            layer._variance.set_value(oar.to_tensor(rng.uniform(0.5, 2.0, size=c).astype("float32")))
            layer.weight.set_value(oar.to_tensor(rng.uniform(0.5, 1.5, size=c).astype("float32")))
            layer.bias.set_value(oar.to_tensor(rng.normal(size=c).astype("float32")))


def train_losses(model, x, y, steps, opt):
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


def assert_decreases(losses):
    assert all(np.isfinite(losses)), losses
    assert losses[-1] < losses[0], losses
    assert min(losses[1:]) < 0.8 * losses[0], losses


# ---------------------------------------------------------------------------------------------
# LeNet


def test_lenet_param_count_from_layer_shapes():
    # conv 1->6 3x3, conv 6->16 5x5, fc 400->120->84->10, each with a bias
    expected = (6 * 1 * 9 + 6) + (16 * 6 * 25 + 16) + (400 * 120 + 120) + (120 * 84 + 84) + (84 * 10 + 10)
    assert expected == 61610
    model = M.LeNet()
    assert n_params(model) == expected
    shapes = {k: v.shape for k, v in model.state_dict().items()}
    assert shapes["features.0.weight"] == [6, 1, 3, 3]
    assert shapes["features.3.weight"] == [16, 6, 5, 5]
    assert shapes["fc.0.weight"] == [400, 120] and shapes["fc.2.weight"] == [84, 10]


def test_lenet_forward_matches_numpy():
    oar.seed(3)
    model = M.LeNet(num_classes=7)
    model.eval()
    x = np.random.default_rng(0).normal(size=(2, 1, 28, 28)).astype("float32")
    out = model(oar.to_tensor(x)).numpy()
    p = {k: v.numpy().astype(np.float64) for k, v in model.state_dict().items()}
    h = np_maxpool2(relu(np_conv2d(x, p["features.0.weight"], p["features.0.bias"], padding=1)))
    h = np_maxpool2(relu(np_conv2d(h, p["features.3.weight"], p["features.3.bias"])))
    h = h.reshape(2, -1)
    for i in range(3):  # Paddle's LeNet has no activation between the fc layers
        h = h @ p[f"fc.{i}.weight"] + p[f"fc.{i}.bias"]
    assert out.shape == (2, 7)
    np.testing.assert_allclose(out, h, rtol=1e-4, atol=1e-4)


def test_lenet_without_head_returns_features():
    model = M.LeNet(num_classes=0)
    assert not hasattr(model, "fc") or model.fc is None
    assert model(oar.rand([3, 1, 28, 28])).shape == [3, 16, 5, 5]


def test_lenet_training_reduces_loss():
    oar.seed(0)
    model = M.LeNet()
    x = oar.randn([8, 1, 28, 28])
    y = oar.to_tensor(np.arange(8) % 10)
    opt = oar.optimizer.Adam(learning_rate=1e-2, parameters=model.parameters())
    assert_decreases(train_losses(model, x, y, 8, opt))


# ---------------------------------------------------------------------------------------------
# ResNet


@pytest.mark.parametrize("builder, expected, with_statistics", [
    ("resnet18", 11_689_512, 11_699_112), ("resnet34", 21_797_672, 21_814_696), ("resnet50", 25_557_032, 25_610_152),
])
def test_resnet_param_counts(builder, expected, with_statistics):
    # Paddle 3.3's counts: trainable parameters, and all parameters (the batch-norm running
    # statistics are non-trainable parameters, as in Paddle).
    model = getattr(M, builder)()
    assert n_params(model) == expected
    assert sum(int(np.prod(p.shape)) for p in model.parameters()) == with_statistics
    keys = model.state_dict().keys()
    assert "bn1._mean" in keys and "bn1._variance" in keys and "fc.weight" in keys
    assert "layer1.0.conv1.weight" in keys


def test_resnext_and_wide_param_counts_from_block_shapes():
    # ResNeXt-50 32x4d: grouped 3x3 conv; count the stages' parameters by hand
    def bottleneck_stage(inplanes, planes, blocks, width_of):
        total = 0
        for i in range(blocks):
            cin = inplanes if i == 0 else planes * 4
            w, groups = width_of(planes)
            total += cin * w + 2 * w  # conv1 1x1 + bn1
            total += w * (w // groups) * 9 + 2 * w  # grouped conv2 + bn2
            total += w * planes * 4 + 2 * planes * 4  # conv3 + bn3
            if i == 0:
                total += cin * planes * 4 + 2 * planes * 4  # downsample conv + bn
        return total

    def resnet50_like(width_of):
        total = 3 * 64 * 49 + 2 * 64
        inplanes = 64
        for planes, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):
            total += bottleneck_stage(inplanes, planes, blocks, width_of)
            inplanes = planes * 4
        return total + 2048 * 1000 + 1000

    assert resnet50_like(lambda p: (p, 1)) == 25_557_032  # the hand count agrees with ResNet-50
    model = M.resnext50_32x4d()
    assert n_params(model) == resnet50_like(lambda p: (int(p * 4 / 64) * 32, 32)) == 25_028_904


def test_resnet18_forward_shapes():
    model = M.resnet18(num_classes=10)
    assert model(oar.rand([2, 3, 32, 32])).shape == [2, 10]
    feats = M.resnet18(num_classes=0)
    assert feats(oar.rand([2, 3, 32, 32])).shape == [2, 512, 1, 1]
    no_pool = M.resnet18(num_classes=0, with_pool=False)
    assert no_pool(oar.rand([2, 3, 64, 64])).shape == [2, 512, 2, 2]


def test_basic_and_bottleneck_blocks_match_numpy_in_eval_mode():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 8, 6, 6)).astype("float32")
    down = oar.nn.Sequential(oar.nn.Conv2D(8, 16, 1, stride=2, bias_attr=False), oar.nn.BatchNorm2D(16))
    block = M.BasicBlock(8, 16, stride=2, downsample=down)
    randomise_bn_stats(block, rng)
    block.eval()
    w = {k: v.numpy().astype(np.float64) for k, v in block.state_dict().items()}
    h = relu(np_bn_eval(np_conv2d(x, w["conv1.weight"], stride=2, padding=1), block.bn1))
    h = np_bn_eval(np_conv2d(h, w["conv2.weight"], padding=1), block.bn2)
    sc = np_bn_eval(np_conv2d(x, w["downsample.0.weight"], stride=2), block.downsample[1])
    np.testing.assert_allclose(block(oar.to_tensor(x)).numpy(), relu(h + sc), rtol=1e-4, atol=1e-4)

    block = M.BottleneckBlock(16, 4, groups=2, base_width=64)
    randomise_bn_stats(block, rng)
    block.eval()
    x = rng.normal(size=(2, 16, 5, 5)).astype("float32")
    w = {k: v.numpy().astype(np.float64) for k, v in block.state_dict().items()}
    assert w["conv2.weight"].shape == (8, 4, 3, 3)  # width = 4 * 2 groups
    h = relu(np_bn_eval(np_conv2d(x, w["conv1.weight"]), block.bn1))
    h = relu(np_bn_eval(np_conv2d(h, w["conv2.weight"], padding=1, groups=2), block.bn2))
    h = np_bn_eval(np_conv2d(h, w["conv3.weight"]), block.bn3)
    np.testing.assert_allclose(block(oar.to_tensor(x)).numpy(), relu(h + x), rtol=1e-4, atol=1e-4)


def test_resnet18_training_reduces_loss_and_updates_bn_stats():
    oar.seed(0)
    model = M.resnet18(num_classes=10)
    x = oar.randn([4, 3, 32, 32])
    y = oar.to_tensor([0, 3, 5, 7])
    opt = oar.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    before = model.bn1._mean.numpy().copy()
    assert_decreases(train_losses(model, x, y, 5, opt))
    assert not np.allclose(model.bn1._mean.numpy(), before)


def test_resnet_bad_arguments():
    with pytest.raises(ValueError, match=r"^\[oar.vision.models.ResNet\] depth"):
        M.ResNet(M.BasicBlock, depth=20)
    with pytest.raises(NotImplementedError, match=r"^\[oar.vision.models.resnet18\] pretrained"):
        M.resnet18(pretrained=True)
    with pytest.raises(NotImplementedError, match=r"^\[oar.vision.models.BasicBlock\]"):
        M.BasicBlock(4, 4, dilation=2)
    with pytest.raises(TypeError, match=r"^\[oar.vision.models.ResNet\] num_classes"):
        M.ResNet(M.BasicBlock, 18, num_classes=10.0)


# ---------------------------------------------------------------------------------------------
# MobileNetV2


def test_mobilenet_v2_param_count_and_shapes():
    model = M.mobilenet_v2()
    assert n_params(model) == 3_504_872
    assert model.last_channel == 1280
    small = M.MobileNetV2(num_classes=10)
    assert small(oar.rand([2, 3, 32, 32])).shape == [2, 10]
    feats = M.MobileNetV2(num_classes=0, with_pool=False)
    assert feats(oar.rand([2, 3, 32, 32])).shape == [2, 1280, 1, 1]
    # channel counts round to multiples of 8; the last layer never shrinks below 1280
    half = M.MobileNetV2(scale=0.5, num_classes=0)
    assert half.features[0][0].weight.shape == [16, 3, 3, 3]
    assert half.last_channel == 1280
    assert M.MobileNetV2(scale=1.4, num_classes=0).last_channel == 1792


def test_mobilenet_v2_training_reduces_loss():
    oar.seed(0)
    model = M.MobileNetV2(scale=0.25, num_classes=5)
    x = oar.randn([8, 3, 16, 16])
    y = oar.to_tensor([0, 1, 2, 3, 4, 0, 1, 2])
    opt = oar.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    assert_decreases(train_losses(model, x, y, 10, opt))


def test_mobilenet_v2_errors():
    with pytest.raises(NotImplementedError, match=r"^\[oar.vision.models.mobilenet_v2\]"):
        M.mobilenet_v2(pretrained=True)
    with pytest.raises(ValueError, match=r"^\[oar.vision.models.MobileNetV2\] scale"):
        M.MobileNetV2(scale=0)


# ---------------------------------------------------------------------------------------------
# VGG


@pytest.mark.parametrize("builder, expected", [("vgg11", 132_863_336), ("vgg16", 138_357_544)])
def test_vgg_param_counts(builder, expected):
    assert n_params(getattr(M, builder)()) == expected


def test_vgg_batch_norm_variant_and_shapes():
    model = M.vgg11(batch_norm=True, num_classes=0)
    # 8 convs, each followed by BatchNorm2D: 2 extra parameters per channel
    conv_params = n_params(M.vgg11(num_classes=0))
    assert n_params(model) == conv_params + 2 * (64 + 128 + 256 * 2 + 512 * 4)
    # the adaptive pool maps any spatial size to 7x7
    assert model(oar.rand([2, 3, 32, 32])).shape == [2, 512, 7, 7]
    assert M.vgg11(num_classes=0, with_pool=False)(oar.rand([2, 3, 32, 32])).shape == [2, 512, 1, 1]


def test_vgg_training_reduces_loss():
    from oar.vision.models.vgg import VGG, make_layers

    oar.seed(0)
    model = VGG(make_layers([8, "M", 512], batch_norm=True), num_classes=4)
    x = oar.randn([4, 3, 8, 8])
    y = oar.to_tensor([0, 1, 2, 3])
    opt = oar.optimizer.SGD(learning_rate=1e-3, parameters=model.parameters())
    out = model(x)
    assert out.shape == [4, 4]
    assert_decreases(train_losses(model, x, y, 4, opt))


def test_vgg_pretrained_error():
    with pytest.raises(NotImplementedError, match=r"^\[oar.vision.models.vgg16\] pretrained"):
        M.vgg16(pretrained=True)
