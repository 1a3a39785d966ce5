"""ShuffleNetV2 as in Paddle's model zoo (paddle.vision.models.shufflenetv2)."""
import oar
from oar import _C, nn
from ._utils import ConvNormActivation, check_choice, check_num_classes, check_pretrained

__all__ = [
    "ShuffleNetV2", "shufflenet_v2_x0_25", "shufflenet_v2_x0_33", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0",
    "shufflenet_v2_x1_5", "shufflenet_v2_x2_0", "shufflenet_v2_swish",
]

_ACTIVATIONS = {"relu": nn.ReLU, "swish": nn.Swish, None: None}
# output channels of the stem and the three stages, and of the last 1x1 conv, per scale
_STAGE_OUT = {
    0.25: [24, 24, 48, 96, 512], 0.33: [24, 32, 64, 128, 512], 0.5: [24, 48, 96, 192, 1024],
    1.0: [24, 116, 232, 464, 1024], 1.5: [24, 176, 352, 704, 1024], 2.0: [24, 224, 488, 976, 2048],
}
_STAGE_REPEATS = [4, 8, 4]


def _channel_shuffle(x, groups):
    # [N, g * c, H, W] -> [N, c * g, H, W]: interleave the channels of the g groups
    _, c, h, w = x.shape
    x = _C.reshape(x, [-1, groups, c // groups, h, w])
    return _C.reshape(_C.transpose(x, [0, 2, 1, 3, 4]), [-1, c, h, w])


def _conv_bn(in_channels, out_channels, kernel_size, stride=1, groups=1, act=None):
    return ConvNormActivation(in_channels, out_channels, kernel_size, stride=stride, groups=groups,
                              activation_layer=act)


class _InvertedResidual(nn.Layer):
    """Stride-1 unit: half the channels pass through, the other half go through 1x1, 3x3 depthwise
    and 1x1 convolutions; the halves are concatenated and the channels shuffled."""

    def __init__(self, in_channels, out_channels, act):
        super().__init__()
        half = out_channels // 2
        self._conv_pw = _conv_bn(in_channels // 2, half, 1, act=act)
        self._conv_dw = _conv_bn(half, half, 3, groups=half)
        self._conv_linear = _conv_bn(half, half, 1, act=act)

    def forward(self, x):
        c = x.shape[1]
        x1, x2 = x[:, :c // 2], x[:, c // 2:]
        x2 = self._conv_linear(self._conv_dw(self._conv_pw(x2)))
        return _channel_shuffle(oar.concat([x1, x2], axis=1), 2)


class _InvertedResidualDS(nn.Layer):
    """Stride-2 unit: both branches downsample (3x3 depthwise with stride 2) and each yields half the
    output channels; they are concatenated and the channels shuffled."""

    def __init__(self, in_channels, out_channels, act):
        super().__init__()
        half = out_channels // 2
        self._conv_dw_1 = _conv_bn(in_channels, in_channels, 3, stride=2, groups=in_channels)
        self._conv_linear_1 = _conv_bn(in_channels, half, 1, act=act)
        self._conv_pw_2 = _conv_bn(in_channels, half, 1, act=act)
        self._conv_dw_2 = _conv_bn(half, half, 3, stride=2, groups=half)
        self._conv_linear_2 = _conv_bn(half, half, 1, act=act)

    def forward(self, x):
        x1 = self._conv_linear_1(self._conv_dw_1(x))
        x2 = self._conv_linear_2(self._conv_dw_2(self._conv_pw_2(x)))
        return _channel_shuffle(oar.concat([x1, x2], axis=1), 2)


class ShuffleNetV2(nn.Layer):
    """ShuffleNetV2 (2,278,604 trainable parameters at scale 1.0 with num_classes=1000).

    scale (0.25, 0.33, 0.5, 1.0, 1.5 or 2.0) picks the stage widths; act is "relu", "swish" or None
    (no activation). A 3x3 stride-2 stem and max pool, three stages of 4, 8 and 4 units whose first
    unit downsamples (sublayers named "2_1" ... "4_4"), and a 1x1 conv. with_pool adds a global
    average pool; num_classes <= 0 leaves out the Linear head and forward returns the feature map.

    >>> import oar
    >>> from oar.vision.models import ShuffleNetV2
    >>> model = ShuffleNetV2(scale=0.25, num_classes=10)
    >>> model(oar.rand([2, 3, 32, 32])).shape
    [2, 10]
    >>> ShuffleNetV2(scale=0.25, num_classes=0)(oar.rand([2, 3, 32, 32])).shape
    [2, 512, 1, 1]
    """

    def __init__(self, scale=1.0, act="relu", num_classes=1000, with_pool=True):
        super().__init__()
        self.scale = check_choice(scale, tuple(_STAGE_OUT), "scale", "ShuffleNetV2")
        check_choice(act, tuple(_ACTIVATIONS), "act", "ShuffleNetV2")
        self.num_classes = check_num_classes(num_classes, "ShuffleNetV2")
        self.with_pool = with_pool
        activation = _ACTIVATIONS[act]
        channels = _STAGE_OUT[scale]
        self._conv1 = _conv_bn(3, channels[0], 3, stride=2, act=activation)
        self._max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self._unit_names = []
        in_channels = channels[0]
        for stage, repeats in enumerate(_STAGE_REPEATS):
            out_channels = channels[stage + 1]
            for i in range(repeats):
                unit = (_InvertedResidualDS if i == 0 else _InvertedResidual)(in_channels, out_channels, activation)
                self._unit_names.append(f"{stage + 2}_{i + 1}")
                self.add_sublayer(self._unit_names[-1], unit)
                in_channels = out_channels
        self._last_conv = _conv_bn(in_channels, channels[-1], 1, act=activation)
        if with_pool:
            self._pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self._fc = nn.Linear(channels[-1], num_classes)

    def forward(self, inputs):
        x = self._max_pool(self._conv1(inputs))
        for name in self._unit_names:
            x = getattr(self, name)(x)
        x = self._last_conv(x)
        if self.with_pool:
            x = self._pool2d_avg(x)
        if self.num_classes > 0:
            x = self._fc(_C.flatten(x, 1))
        return x


def _shufflenet_v2(arch, scale, pretrained, **kwargs):
    check_pretrained(pretrained, arch)
    return ShuffleNetV2(scale=scale, **kwargs)


def shufflenet_v2_x0_25(pretrained=False, **kwargs):
    """ShuffleNetV2 with scale 0.25; kwargs (act, num_classes, with_pool) go to ShuffleNetV2.

    >>> from oar.vision.models import shufflenet_v2_x0_25
    >>> sum(p.size for p in shufflenet_v2_x0_25().parameters() if not p.stop_gradient)
    603688
    """
    return _shufflenet_v2("shufflenet_v2_x0_25", 0.25, pretrained, **kwargs)


def shufflenet_v2_x0_33(pretrained=False, **kwargs):
    """ShuffleNetV2 with scale 0.33; kwargs (act, num_classes, with_pool) go to ShuffleNetV2.

    >>> from oar.vision.models import shufflenet_v2_x0_33
    >>> shufflenet_v2_x0_33(num_classes=10)._fc.weight.shape
    [512, 10]
    """
    return _shufflenet_v2("shufflenet_v2_x0_33", 0.33, pretrained, **kwargs)


def shufflenet_v2_x0_5(pretrained=False, **kwargs):
    """ShuffleNetV2 with scale 0.5; kwargs (act, num_classes, with_pool) go to ShuffleNetV2.

    >>> from oar.vision.models import shufflenet_v2_x0_5
    >>> shufflenet_v2_x0_5(num_classes=10)._fc.weight.shape
    [1024, 10]
    """
    return _shufflenet_v2("shufflenet_v2_x0_5", 0.5, pretrained, **kwargs)


def shufflenet_v2_x1_0(pretrained=False, **kwargs):
    """ShuffleNetV2 with scale 1.0; kwargs (act, num_classes, with_pool) go to ShuffleNetV2.

    >>> from oar.vision.models import shufflenet_v2_x1_0
    >>> shufflenet_v2_x1_0(num_classes=10)._last_conv[0].weight.shape
    [1024, 464, 1, 1]
    """
    return _shufflenet_v2("shufflenet_v2_x1_0", 1.0, pretrained, **kwargs)


def shufflenet_v2_x1_5(pretrained=False, **kwargs):
    """ShuffleNetV2 with scale 1.5; kwargs (act, num_classes, with_pool) go to ShuffleNetV2.

    >>> from oar.vision.models import shufflenet_v2_x1_5
    >>> shufflenet_v2_x1_5(num_classes=10)._last_conv[0].weight.shape
    [1024, 704, 1, 1]
    """
    return _shufflenet_v2("shufflenet_v2_x1_5", 1.5, pretrained, **kwargs)


def shufflenet_v2_x2_0(pretrained=False, **kwargs):
    """ShuffleNetV2 with scale 2.0; kwargs (act, num_classes, with_pool) go to ShuffleNetV2.

    >>> from oar.vision.models import shufflenet_v2_x2_0
    >>> shufflenet_v2_x2_0(num_classes=10)._fc.weight.shape
    [2048, 10]
    """
    return _shufflenet_v2("shufflenet_v2_x2_0", 2.0, pretrained, **kwargs)


def shufflenet_v2_swish(pretrained=False, **kwargs):
    """ShuffleNetV2 with scale 1.0 and swish activations; kwargs (num_classes, with_pool) go to ShuffleNetV2.

    >>> from oar.vision.models import shufflenet_v2_swish
    >>> shufflenet_v2_swish(num_classes=10)._conv1[2]
    Swish()
    """
    if "act" in kwargs:
        raise TypeError("[oar.vision.models.shufflenet_v2_swish] act is fixed to 'swish'; "
                        "use ShuffleNetV2(act=...) for another activation")
    return _shufflenet_v2("shufflenet_v2_swish", 1.0, pretrained, act="swish", **kwargs)
