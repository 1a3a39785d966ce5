"""MobileNetV2 as in Paddle's model zoo (paddle.vision.models.mobilenetv2)."""
from oar import _C, nn
from ._utils import check_num_classes, check_pretrained

__all__ = ["MobileNetV2", "mobilenet_v2"]


def _make_divisible(v, divisor=8, min_value=None):
    # channel counts rounded to a multiple of 8, never more than 10% below the scaled value
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class _ConvNormActivation(nn.Sequential):
    """Conv2D ('same' padding for odd kernels, no bias) + BatchNorm2D + activation."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, groups=1, activation_layer=nn.ReLU6):
        padding = (kernel_size - 1) // 2
        super().__init__(
            nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding, groups=groups, bias_attr=False),
            nn.BatchNorm2D(out_channels), activation_layer())


class InvertedResidual(nn.Layer):
    """1x1 expansion, 3x3 depthwise, 1x1 linear projection; residual when shapes allow."""

    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(_ConvNormActivation(inp, hidden_dim, kernel_size=1))
        layers += [_ConvNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
                   nn.Conv2D(hidden_dim, oup, 1, 1, 0, bias_attr=False), nn.BatchNorm2D(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Layer):
    """MobileNetV2 (3,504,872 parameters at scale 1.0 with num_classes=1000).

    scale multiplies every channel count (rounded to multiples of 8). With with_pool=False the
    global average pool is left out; with num_classes <= 0 the classifier is left out and forward
    returns the feature map.

    >>> import oar
    >>> from oar.vision.models import MobileNetV2
    >>> model = MobileNetV2(scale=0.5, num_classes=10)
    >>> model(oar.rand([2, 3, 32, 32])).shape
    [2, 10]
    """

    def __init__(self, scale=1.0, num_classes=1000, with_pool=True):
        super().__init__()
        if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not scale > 0:
            raise ValueError(f"[oar.vision.models.MobileNetV2] scale must be a positive number, got {scale!r}")
        self.scale = scale
        self.num_classes = check_num_classes(num_classes, "MobileNetV2")
        self.with_pool = with_pool
        round_nearest = 8
        settings = [  # expansion t, channels c, repeats n, first stride s
            [1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1],
        ]
        input_channel = _make_divisible(32 * scale, round_nearest)
        self.last_channel = _make_divisible(1280 * max(1.0, scale), round_nearest)
        features = [_ConvNormActivation(3, input_channel, stride=2)]
        for t, c, n, s in settings:
            output_channel = _make_divisible(c * scale, round_nearest)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel, s if i == 0 else 1, expand_ratio=t))
                input_channel = output_channel
        features.append(_ConvNormActivation(input_channel, self.last_channel, kernel_size=1))
        self.features = nn.Sequential(*features)
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(self.last_channel, num_classes))

    def forward(self, x):
        x = self.features(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.classifier(_C.flatten(x, 1))
        return x


def mobilenet_v2(pretrained=False, scale=1.0, **kwargs):
    """MobileNetV2 builder; kwargs (num_classes, with_pool) go to MobileNetV2.

    >>> from oar.vision.models import mobilenet_v2
    >>> mobilenet_v2(num_classes=10).classifier[1].weight.shape
    [1280, 10]
    """
    check_pretrained(pretrained, "mobilenet_v2")
    return MobileNetV2(scale=scale, **kwargs)
