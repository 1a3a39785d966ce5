"""MobileNetV3 small and large as in Paddle's model zoo (paddle.vision.models.mobilenetv3)."""
import functools

from oar import _C, nn
from ._utils import ConvNormActivation, check_num_classes, check_pretrained, check_scale, make_divisible

__all__ = ["MobileNetV3Small", "MobileNetV3Large", "mobilenet_v3_small", "mobilenet_v3_large"]

# MobileNetV3's batch norm: momentum 0.99 (Paddle's convention: weight of the running statistic), eps 1e-3
_norm = functools.partial(nn.BatchNorm2D, epsilon=0.001, momentum=0.99)
_ACTIVATIONS = {"relu": nn.ReLU, "hardswish": nn.Hardswish}


class _SqueezeExcitation(nn.Layer):
    """Channel attention: global average pool, 1x1 conv, ReLU, 1x1 conv, hard sigmoid, rescale."""

    def __init__(self, channels, squeeze_channels):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2D(1)
        self.fc1 = nn.Conv2D(channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2D(squeeze_channels, channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Hardsigmoid()

    def forward(self, x):
        s = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return x * s


class _InvertedResidual(nn.Layer):
    """1x1 expansion (left out when it would not change the width), k x k depthwise conv,
    optional squeeze-excitation, 1x1 linear projection; residual when stride is 1 and widths match."""

    def __init__(self, in_channels, expanded_channels, out_channels, kernel_size, stride, use_se, activation):
        super().__init__()
        self.use_res_connect = stride == 1 and in_channels == out_channels
        self.use_se = use_se
        self.expand = in_channels != expanded_channels
        act = _ACTIVATIONS[activation]
        if self.expand:
            self.expand_conv = ConvNormActivation(in_channels, expanded_channels, kernel_size=1, norm_layer=_norm,
                                                  activation_layer=act)
        self.bottleneck_conv = ConvNormActivation(expanded_channels, expanded_channels, kernel_size=kernel_size,
                                                  stride=stride, groups=expanded_channels, norm_layer=_norm,
                                                  activation_layer=act)
        if use_se:
            self.mid_se = _SqueezeExcitation(expanded_channels, make_divisible(expanded_channels // 4))
        self.linear_conv = ConvNormActivation(expanded_channels, out_channels, kernel_size=1, norm_layer=_norm,
                                              activation_layer=None)

    def forward(self, x):
        y = self.expand_conv(x) if self.expand else x
        y = self.bottleneck_conv(y)
        if self.use_se:
            y = self.mid_se(y)
        y = self.linear_conv(y)
        return x + y if self.use_res_connect else y


# (kernel, expanded channels, output channels, squeeze-excitation, activation, stride) before scaling
_SMALL = [
    (3, 16, 16, True, "relu", 2), (3, 72, 24, False, "relu", 2), (3, 88, 24, False, "relu", 1),
    (5, 96, 40, True, "hardswish", 2), (5, 240, 40, True, "hardswish", 1), (5, 240, 40, True, "hardswish", 1),
    (5, 120, 48, True, "hardswish", 1), (5, 144, 48, True, "hardswish", 1), (5, 288, 96, True, "hardswish", 2),
    (5, 576, 96, True, "hardswish", 1), (5, 576, 96, True, "hardswish", 1),
]
_LARGE = [
    (3, 16, 16, False, "relu", 1), (3, 64, 24, False, "relu", 2), (3, 72, 24, False, "relu", 1),
    (5, 72, 40, True, "relu", 2), (5, 120, 40, True, "relu", 1), (5, 120, 40, True, "relu", 1),
    (3, 240, 80, False, "hardswish", 2), (3, 200, 80, False, "hardswish", 1), (3, 184, 80, False, "hardswish", 1),
    (3, 184, 80, False, "hardswish", 1), (3, 480, 112, True, "hardswish", 1), (3, 672, 112, True, "hardswish", 1),
    (5, 672, 160, True, "hardswish", 2), (5, 960, 160, True, "hardswish", 1), (5, 960, 160, True, "hardswish", 1),
]


class _MobileNetV3(nn.Layer):
    """The network shared by the small and large variants, built from a block table."""

    def __init__(self, config, last_channel, scale, num_classes, with_pool, api):
        super().__init__()
        self.scale = check_scale(scale, api)
        self.num_classes = check_num_classes(num_classes, api)
        self.with_pool = with_pool
        in_channels = make_divisible(16 * scale)
        self.conv = ConvNormActivation(3, in_channels, kernel_size=3, stride=2, padding=1, norm_layer=_norm,
                                       activation_layer=nn.Hardswish)
        blocks = []
        for k, exp, out, se, act, s in config:
            out = make_divisible(out * scale)
            blocks.append(_InvertedResidual(in_channels, make_divisible(exp * scale), out, k, s, se, act))
            in_channels = out
        self.blocks = nn.Sequential(*blocks)
        self.lastconv_out_channels = 6 * in_channels
        self.lastconv = ConvNormActivation(in_channels, self.lastconv_out_channels, kernel_size=1, norm_layer=_norm,
                                           activation_layer=nn.Hardswish)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            hidden = make_divisible(last_channel * scale)
            self.classifier = nn.Sequential(nn.Linear(self.lastconv_out_channels, hidden), nn.Hardswish(),
                                            nn.Dropout(p=0.2), nn.Linear(hidden, num_classes))

    def forward(self, x):
        x = self.lastconv(self.blocks(self.conv(x)))
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.classifier(_C.flatten(x, 1))
        return x


class MobileNetV3Small(_MobileNetV3):
    """MobileNetV3-Small (2,542,856 trainable parameters at scale 1.0 with num_classes=1000).

    Hard-swish stem, 11 inverted-residual blocks (some with squeeze-excitation), a 1x1 conv to
    6x the last width, then a Linear-Hardswish-Dropout-Linear classifier with a 1024 * scale hidden
    layer. Channel counts are scaled and rounded to multiples of 8. with_pool adds a global average
    pool; num_classes <= 0 leaves out the classifier and forward returns the feature map.

    >>> import oar
    >>> from oar.vision.models import MobileNetV3Small
    >>> model = MobileNetV3Small(scale=0.5, num_classes=10)
    >>> model(oar.rand([2, 3, 32, 32])).shape
    [2, 10]
    """

    def __init__(self, scale=1.0, num_classes=1000, with_pool=True):
        super().__init__(_SMALL, 1024, scale, num_classes, with_pool, "MobileNetV3Small")


class MobileNetV3Large(_MobileNetV3):
    """MobileNetV3-Large (5,483,032 trainable parameters at scale 1.0 with num_classes=1000).

    Like MobileNetV3Small with 15 blocks and a 1280 * scale classifier hidden layer.

    >>> import oar
    >>> from oar.vision.models import MobileNetV3Large
    >>> model = MobileNetV3Large(scale=0.35, num_classes=0)
    >>> model(oar.rand([2, 3, 32, 32])).shape
    [2, 336, 1, 1]
    """

    def __init__(self, scale=1.0, num_classes=1000, with_pool=True):
        super().__init__(_LARGE, 1280, scale, num_classes, with_pool, "MobileNetV3Large")


def mobilenet_v3_small(pretrained=False, scale=1.0, **kwargs):
    """MobileNetV3-Small builder; kwargs (num_classes, with_pool) go to MobileNetV3Small.

    >>> from oar.vision.models import mobilenet_v3_small
    >>> mobilenet_v3_small(num_classes=10).classifier[3].weight.shape
    [1024, 10]
    """
    check_pretrained(pretrained, "mobilenet_v3_small")
    return MobileNetV3Small(scale=scale, **kwargs)


def mobilenet_v3_large(pretrained=False, scale=1.0, **kwargs):
    """MobileNetV3-Large builder; kwargs (num_classes, with_pool) go to MobileNetV3Large.

    >>> from oar.vision.models import mobilenet_v3_large
    >>> mobilenet_v3_large(num_classes=10).classifier[3].weight.shape
    [1280, 10]
    """
    check_pretrained(pretrained, "mobilenet_v3_large")
    return MobileNetV3Large(scale=scale, **kwargs)
