"""MobileNetV2 as in Paddle's model zoo (paddle.vision.models.mobilenetv2)."""
from oar import _C, nn
from ._utils import ConvNormActivation, check_num_classes, check_pretrained, check_scale, make_divisible

__all__ = ["MobileNetV2", "mobilenet_v2"]


class InvertedResidual(nn.Layer):
    """1x1 expansion, 3x3 depthwise, 1x1 linear projection; residual when shapes allow."""

    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvNormActivation(inp, hidden_dim, kernel_size=1, activation_layer=nn.ReLU6))
        layers += [ConvNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                                      activation_layer=nn.ReLU6),
                   nn.Conv2D(hidden_dim, oup, 1, 1, 0, bias_attr=False), nn.BatchNorm2D(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Layer):
    """MobileNetV2 (3,504,872 trainable parameters at scale 1.0 with num_classes=1000).

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
        self.scale = check_scale(scale, "MobileNetV2")
        self.num_classes = check_num_classes(num_classes, "MobileNetV2")
        self.with_pool = with_pool
        round_nearest = 8
        settings = [  # expansion t, channels c, repeats n, first stride s
            [1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1],
        ]
        input_channel = make_divisible(32 * scale, round_nearest)
        self.last_channel = make_divisible(1280 * max(1.0, scale), round_nearest)
        features = [ConvNormActivation(3, input_channel, stride=2, activation_layer=nn.ReLU6)]
        for t, c, n, s in settings:
            output_channel = make_divisible(c * scale, round_nearest)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel, s if i == 0 else 1, expand_ratio=t))
                input_channel = output_channel
        features.append(ConvNormActivation(input_channel, self.last_channel, kernel_size=1,
                                           activation_layer=nn.ReLU6))
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
