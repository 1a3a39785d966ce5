"""DenseNet as in Paddle's model zoo (paddle.vision.models.densenet)."""
import oar
from oar import _C, nn
from ._utils import check_choice, check_num_classes, check_pretrained, fan_in_uniform_attr

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201", "densenet264"]

# layers -> (stem channels, growth rate, dense layers per block)
_CONFIGS = {
    121: (64, 32, [6, 12, 24, 16]), 161: (96, 48, [6, 12, 36, 24]), 169: (64, 32, [6, 12, 32, 32]),
    201: (64, 32, [6, 12, 48, 32]), 264: (64, 32, [6, 12, 64, 48]),
}


class _BNACConv(nn.Layer):
    """Pre-activation unit: BatchNorm with ReLU, then a bias-free convolution."""

    def __init__(self, in_channels, out_channels, kernel_size, padding=0):
        super().__init__()
        self._batch_norm = nn.BatchNorm(in_channels, act="relu")
        self._conv = nn.Conv2D(in_channels, out_channels, kernel_size, padding=padding, bias_attr=False)

    def forward(self, x):
        return self._conv(self._batch_norm(x))


class _DenseLayer(nn.Layer):
    """BN-ReLU-1x1 conv to bn_size * growth_rate channels, BN-ReLU-3x3 conv to growth_rate channels,
    optional dropout; the result is concatenated to the input."""

    def __init__(self, in_channels, growth_rate, bn_size, dropout):
        super().__init__()
        self.dropout = dropout
        self.bn_ac_func1 = _BNACConv(in_channels, bn_size * growth_rate, 1)
        self.bn_ac_func2 = _BNACConv(bn_size * growth_rate, growth_rate, 3, padding=1)
        if dropout:
            self.dropout_func = nn.Dropout(p=dropout, mode="downscale_in_infer")

    def forward(self, x):
        y = self.bn_ac_func2(self.bn_ac_func1(x))
        if self.dropout:
            y = self.dropout_func(y)
        return oar.concat([x, y], axis=1)


class _DenseBlock(nn.Layer):
    """num_layers dense layers named {name}_1 ... {name}_{num_layers}."""

    def __init__(self, in_channels, num_layers, bn_size, growth_rate, dropout, name):
        super().__init__()
        self._layer_names = [f"{name}_{i + 1}" for i in range(num_layers)]
        for i, layer_name in enumerate(self._layer_names):
            self.add_sublayer(layer_name, _DenseLayer(in_channels + i * growth_rate, growth_rate, bn_size, dropout))

    def forward(self, x):
        for name in self._layer_names:
            x = getattr(self, name)(x)
        return x


class _Transition(nn.Layer):
    """BN-ReLU-1x1 conv then 2x2 average pooling, between dense blocks."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv_ac_func = _BNACConv(in_channels, out_channels, 1)
        self.pool2d_avg = nn.AvgPool2D(kernel_size=2, stride=2, padding=0)

    def forward(self, x):
        return self.pool2d_avg(self.conv_ac_func(x))


class _ConvBN(nn.Layer):
    """Bias-free convolution then BatchNorm with ReLU (the stem)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self._conv = nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding, bias_attr=False)
        self._batch_norm = nn.BatchNorm(out_channels, act="relu")

    def forward(self, x):
        return self._batch_norm(self._conv(x))


class DenseNet(nn.Layer):
    """Densely connected network; layers is 121, 161, 169, 201 or 264 (DenseNet-121 has 7,978,856
    trainable parameters with num_classes=1000).

    A 7x7 stride-2 conv-BN-ReLU stem and 3x3 max pool, four dense blocks (sublayers db_conv_2 ...
    db_conv_5) joined by transitions that halve the channels and the resolution, and a final
    BN-ReLU. Each dense layer has a bn_size * growth_rate bottleneck; dropout > 0 adds dropout after
    each dense layer (Paddle's 'downscale_in_infer' mode). with_pool adds a global average pool;
    num_classes <= 0 leaves out the Linear head and forward returns the feature map.

    >>> import oar
    >>> from oar.vision.models import DenseNet
    >>> model = DenseNet(layers=121, num_classes=10)
    >>> model(oar.rand([2, 3, 32, 32])).shape
    [2, 10]
    >>> sum(p.size for p in model.parameters() if not p.stop_gradient)
    6964106
    """

    def __init__(self, layers=121, bn_size=4, dropout=0.0, num_classes=1000, with_pool=True):
        super().__init__()
        check_choice(layers, tuple(_CONFIGS), "layers", "DenseNet")
        self.num_classes = check_num_classes(num_classes, "DenseNet")
        self.with_pool = with_pool
        channels, growth_rate, block_config = _CONFIGS[layers]
        self.conv1_func = _ConvBN(3, channels, 7, 2, 3)
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self._stage_names = []
        for i, num_layers in enumerate(block_config):
            block = _DenseBlock(channels, num_layers, bn_size, growth_rate, dropout, f"conv{i + 2}")
            self._stage_names.append(f"db_conv_{i + 2}")
            self.add_sublayer(self._stage_names[-1], block)
            channels += num_layers * growth_rate
            if i != len(block_config) - 1:
                self._stage_names.append(f"tr_conv{i + 2}_blk")
                self.add_sublayer(self._stage_names[-1], _Transition(channels, channels // 2))
                channels //= 2
        self.batch_norm = nn.BatchNorm(channels, act="relu")
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            attr = fan_in_uniform_attr(channels)
            self.out = nn.Linear(channels, num_classes, weight_attr=attr)

    def forward(self, x):
        x = self.pool2d_max(self.conv1_func(x))
        for name in self._stage_names:
            x = getattr(self, name)(x)
        x = self.batch_norm(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.out(_C.flatten(x, 1))
        return x


def _densenet(arch, layers, pretrained, **kwargs):
    check_pretrained(pretrained, arch)
    return DenseNet(layers=layers, **kwargs)


def densenet121(pretrained=False, **kwargs):
    """DenseNet-121; kwargs (bn_size, dropout, num_classes, with_pool) go to DenseNet.

    >>> from oar.vision.models import densenet121
    >>> densenet121(num_classes=10).out.weight.shape
    [1024, 10]
    """
    return _densenet("densenet121", 121, pretrained, **kwargs)


def densenet161(pretrained=False, **kwargs):
    """DenseNet-161 (growth rate 48, 96 stem channels); kwargs go to DenseNet.

    >>> from oar.vision.models import densenet161
    >>> densenet161(num_classes=10).out.weight.shape
    [2208, 10]
    """
    return _densenet("densenet161", 161, pretrained, **kwargs)


def densenet169(pretrained=False, **kwargs):
    """DenseNet-169; kwargs go to DenseNet.

    >>> from oar.vision.models import densenet169
    >>> densenet169(num_classes=10).out.weight.shape
    [1664, 10]
    """
    return _densenet("densenet169", 169, pretrained, **kwargs)


def densenet201(pretrained=False, **kwargs):
    """DenseNet-201; kwargs go to DenseNet.

    >>> from oar.vision.models import densenet201
    >>> densenet201(num_classes=10).out.weight.shape
    [1920, 10]
    """
    return _densenet("densenet201", 201, pretrained, **kwargs)


def densenet264(pretrained=False, **kwargs):
    """DenseNet-264; kwargs go to DenseNet.

    >>> from oar.vision.models import densenet264
    >>> densenet264(num_classes=10).out.weight.shape
    [2688, 10]
    """
    return _densenet("densenet264", 264, pretrained, **kwargs)
