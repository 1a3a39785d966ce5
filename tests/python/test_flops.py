"""oar.flops: Paddle's counting rules, checked against hand-computed counts."""
import pytest

import oar


def test_lenet_counts(capsys):
    # Paddle's documented LeNet table: 47040 + 241600 + 48000 + 10080 + 840 FLOPs, 61610 parameters.
    n = oar.flops(oar.vision.models.LeNet(), [1, 1, 28, 28], print_detail=True)
    assert n == 347560
    out = capsys.readouterr().out
    assert "Total Flops: 347560     Total Params: 61610" in out
    assert "Layer Name" in out and "[1, 16, 10, 10]" in out


def test_rules_for_conv_groups_bn_pools_and_leaky_relu(capsys):
    net = oar.nn.Sequential(oar.nn.Conv2D(3, 8, 3, bias_attr=False), oar.nn.BatchNorm2D(8), oar.nn.LeakyReLU(),
                            oar.nn.AdaptiveAvgPool2D(2), oar.nn.Conv2D(8, 8, 1, groups=4),
                            oar.nn.AvgPool2D(2))
    conv1 = 2 * 8 * 7 * 7 * (3 * 9)      # output elements x in_channels x kernel, no bias
    bn = 2 * (2 * 8 * 7 * 7)             # eval mode: 2 per element
    leaky = 2 * 8 * 7 * 7                # 1 per input element
    adaptive = (3 * 3 + 1) * (2 * 8 * 2 * 2)  # kernel 7 // 2 = 3 per side, plus one division
    conv2 = (2 * 8 * 2 * 2) * (8 // 4 * 1 + 1)
    avg = 2 * 8 * 1 * 1
    assert oar.flops(net, [2, 3, 9, 9]) == conv1 + bn + leaky + adaptive + conv2 + avg
    assert net.training  # the mode is restored


def test_custom_ops_and_errors():
    class Square(oar.nn.Layer):
        def forward(self, x):
            return x * x

    net = oar.nn.Sequential(oar.nn.Linear(4, 3), Square())
    assert oar.flops(net, [5, 4]) == 4 * 15
    assert oar.flops(net, [5, 4], custom_ops={Square: lambda m, x, y: y.size}) == 4 * 15 + 15
    with pytest.raises(TypeError, match=r"^\[oar.flops\] net must be an oar.nn.Layer"):
        oar.flops(lambda x: x, [1])
    with pytest.raises(TypeError, match=r"^\[oar.flops\] custom_ops must map"):
        oar.flops(net, [5, 4], custom_ops={"Square": 1})
