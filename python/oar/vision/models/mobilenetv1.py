"""MobileNetV1 as in Paddle's model zoo (paddle.vision.models.mobilenetv1)."""
from oar import _C, nn
from ._utils import ConvNormActivation, check_num_classes, check_pretrained, check_scale

__all__ = ["MobileNetV1", "mobilenet_v1"]


class _DepthwiseSeparable(nn.Layer):
    """3x3 depthwise conv-BN-ReLU, then 1x1 pointwise conv-BN-ReLU; channel counts times scale."""

    def __init__(self, in_channels, out_channels1, out_channels2, num_groups, stride, scale):
        super().__init__()
        self._depthwise_conv = ConvNormActivation(in_channels, int(out_channels1 * scale), kernel_size=3,
                                                  stride=stride, padding=1, groups=int(num_groups * scale))
        self._pointwise_conv = ConvNormActivation(int(out_channels1 * scale), int(out_channels2 * scale),
                                                  kernel_size=1, stride=1, padding=0)

    def forward(self, x):
        return self._pointwise_conv(self._depthwise_conv(x))


# (name, depthwise channels, pointwise output channels, stride)
_BLOCKS = [("conv2_1", 32, 64, 1), ("conv2_2", 64, 128, 2), ("conv3_1", 128, 128, 1), ("conv3_2", 128, 256, 2),
           ("conv4_1", 256, 256, 1), ("conv4_2", 256, 512, 2)] + \
          [(f"conv5_{i}", 512, 512, 1) for i in range(1, 6)] + [("conv5_6", 512, 1024, 2), ("conv6", 1024, 1024, 1)]


class MobileNetV1(nn.Layer):
    """MobileNetV1 (4,231,976 trainable parameters at scale 1.0 with num_classes=1000).

    A 3x3 stride-2 conv-BN-ReLU stem and 13 depthwise-separable blocks; every channel count is
    int(c * scale). with_pool adds a global average pool; num_classes <= 0 leaves out the Linear
    head and forward returns the feature map.

    >>> import oar
    >>> from oar.vision.models import MobileNetV1
    >>> model = MobileNetV1(scale=0.25, num_classes=10)
    >>> model(oar.rand([2, 3, 32, 32])).shape
    [2, 10]
    >>> MobileNetV1(scale=0.25, num_classes=0)(oar.rand([2, 3, 32, 32])).shape
    [2, 256, 1, 1]
    """

    def __init__(self, scale=1.0, num_classes=1000, with_pool=True):
        super().__init__()
        self.scale = check_scale(scale, "MobileNetV1")
        self.num_classes = check_num_classes(num_classes, "MobileNetV1")
        self.with_pool = with_pool
        self.conv1 = ConvNormActivation(3, int(32 * scale), kernel_size=3, stride=2, padding=1)
        in_channels = int(32 * scale)
        for name, channels, out_channels, stride in _BLOCKS:
            self.add_sublayer(name, _DepthwiseSeparable(in_channels, channels, out_channels, channels, stride, scale))
            in_channels = int(out_channels * scale)
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.fc = nn.Linear(int(1024 * scale), num_classes)

    def forward(self, x):
        x = self.conv1(x)
        for name, *_ in _BLOCKS:
            x = getattr(self, name)(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.fc(_C.flatten(x, 1))
        return x


def mobilenet_v1(pretrained=False, scale=1.0, **kwargs):
    """MobileNetV1 builder; kwargs (num_classes, with_pool) go to MobileNetV1.

    >>> from oar.vision.models import mobilenet_v1
    >>> mobilenet_v1(scale=0.5, num_classes=10).fc.weight.shape
    [512, 10]
    """
    check_pretrained(pretrained, "mobilenet_v1")
    return MobileNetV1(scale=scale, **kwargs)
