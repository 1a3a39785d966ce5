"""Inception v3 as in Paddle's model zoo (paddle.vision.models.inceptionv3)."""
import oar
from oar import _C, nn
from ._utils import ConvNormActivation, check_num_classes, check_pretrained, fan_in_uniform_attr

__all__ = ["InceptionV3", "inception_v3"]


def _cba(in_channels, out_channels, kernel_size, stride=1, padding=0):
    # conv (no bias) - BatchNorm2D - ReLU; kernel_size and padding may be (h, w) pairs
    return ConvNormActivation(in_channels, out_channels, kernel_size, stride=stride, padding=padding)


class _InceptionStem(nn.Layer):
    """Five conv-BN-ReLU layers with two 3x3 stride-2 max pools: 3 -> 192 channels, 1/8 resolution."""

    def __init__(self):
        super().__init__()
        self.conv_1a_3x3 = _cba(3, 32, 3, stride=2)
        self.conv_2a_3x3 = _cba(32, 32, 3)
        self.conv_2b_3x3 = _cba(32, 64, 3, padding=1)
        self.max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        self.conv_3b_1x1 = _cba(64, 80, 1)
        self.conv_4a_3x3 = _cba(80, 192, 3)

    def forward(self, x):
        x = self.max_pool(self.conv_2b_3x3(self.conv_2a_3x3(self.conv_1a_3x3(x))))
        return self.max_pool(self.conv_4a_3x3(self.conv_3b_1x1(x)))


class _InceptionA(nn.Layer):
    """35x35 module: 1x1 | 1x1-5x5 | 1x1-3x3-3x3 | avg pool-1x1; 224 + pool_features channels."""

    def __init__(self, num_channels, pool_features):
        super().__init__()
        self.branch1x1 = _cba(num_channels, 64, 1)
        self.branch5x5_1 = _cba(num_channels, 48, 1)
        self.branch5x5_2 = _cba(48, 64, 5, padding=2)
        self.branch3x3dbl_1 = _cba(num_channels, 64, 1)
        self.branch3x3dbl_2 = _cba(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _cba(96, 96, 3, padding=1)
        self.branch_pool = nn.AvgPool2D(kernel_size=3, stride=1, padding=1, exclusive=False)
        self.branch_pool_conv = _cba(num_channels, pool_features, 1)

    def forward(self, x):
        return oar.concat([
            self.branch1x1(x),
            self.branch5x5_2(self.branch5x5_1(x)),
            self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
            self.branch_pool_conv(self.branch_pool(x)),
        ], axis=1)


class _InceptionB(nn.Layer):
    """Grid reduction 35 -> 17: 3x3 stride 2 | 1x1-3x3-3x3 stride 2 | max pool; 480 + input channels."""

    def __init__(self, num_channels):
        super().__init__()
        self.branch3x3 = _cba(num_channels, 384, 3, stride=2)
        self.branch3x3dbl_1 = _cba(num_channels, 64, 1)
        self.branch3x3dbl_2 = _cba(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _cba(96, 96, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x):
        return oar.concat([
            self.branch3x3(x),
            self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
            self.branch_pool(x),
        ], axis=1)


class _InceptionC(nn.Layer):
    """17x17 module with factorised 7x7 convolutions (1x7 and 7x1); 768 channels."""

    def __init__(self, num_channels, channels_7x7):
        super().__init__()
        c7 = channels_7x7
        self.branch1x1 = _cba(num_channels, 192, 1)
        self.branch7x7_1 = _cba(num_channels, c7, 1)
        self.branch7x7_2 = _cba(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7_3 = _cba(c7, 192, (7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = _cba(num_channels, c7, 1)
        self.branch7x7dbl_2 = _cba(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = _cba(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = _cba(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = _cba(c7, 192, (1, 7), padding=(0, 3))
        self.branch_pool = nn.AvgPool2D(kernel_size=3, stride=1, padding=1, exclusive=False)
        self.branch_pool_conv = _cba(num_channels, 192, 1)

    def forward(self, x):
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        b7d = self.branch7x7dbl_1(x)
        for layer in (self.branch7x7dbl_2, self.branch7x7dbl_3, self.branch7x7dbl_4, self.branch7x7dbl_5):
            b7d = layer(b7d)
        return oar.concat([self.branch1x1(x), b7, b7d, self.branch_pool_conv(self.branch_pool(x))], axis=1)


class _InceptionD(nn.Layer):
    """Grid reduction 17 -> 8: 1x1-3x3 stride 2 | 1x1-1x7-7x1-3x3 stride 2 | max pool; 1280 channels."""

    def __init__(self, num_channels):
        super().__init__()
        self.branch3x3_1 = _cba(num_channels, 192, 1)
        self.branch3x3_2 = _cba(192, 320, 3, stride=2)
        self.branch7x7x3_1 = _cba(num_channels, 192, 1)
        self.branch7x7x3_2 = _cba(192, 192, (1, 7), padding=(0, 3))
        self.branch7x7x3_3 = _cba(192, 192, (7, 1), padding=(3, 0))
        self.branch7x7x3_4 = _cba(192, 192, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3_2(self.branch3x3_1(x))
        b7 = self.branch7x7x3_1(x)
        for layer in (self.branch7x7x3_2, self.branch7x7x3_3, self.branch7x7x3_4):
            b7 = layer(b7)
        return oar.concat([b3, b7, self.branch_pool(x)], axis=1)


class _InceptionE(nn.Layer):
    """8x8 module whose 3x3 branches end in parallel 1x3 and 3x1 convolutions; 2048 channels."""

    def __init__(self, num_channels):
        super().__init__()
        self.branch1x1 = _cba(num_channels, 320, 1)
        self.branch3x3_1 = _cba(num_channels, 384, 1)
        self.branch3x3_2a = _cba(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3_2b = _cba(384, 384, (3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = _cba(num_channels, 448, 1)
        self.branch3x3dbl_2 = _cba(448, 384, 3, padding=1)
        self.branch3x3dbl_3a = _cba(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = _cba(384, 384, (3, 1), padding=(1, 0))
        self.branch_pool = nn.AvgPool2D(kernel_size=3, stride=1, padding=1, exclusive=False)
        self.branch_pool_conv = _cba(num_channels, 192, 1)

    def forward(self, x):
        b3 = self.branch3x3_1(x)
        b3d = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        return oar.concat([
            self.branch1x1(x),
            self.branch3x3_2a(b3), self.branch3x3_2b(b3),
            self.branch3x3dbl_3a(b3d), self.branch3x3dbl_3b(b3d),
            self.branch_pool_conv(self.branch_pool(x)),
        ], axis=1)


class InceptionV3(nn.Layer):
    """Inception v3 (23,834,568 trainable parameters with num_classes=1000) for 299x299 images;
    inputs of at least 75x75 work.

    A stem, three InceptionA, one InceptionB, four InceptionC, one InceptionD and two InceptionE
    modules (in the LayerList inception_block_list), then global average pooling (with_pool),
    dropout (Paddle's 'downscale_in_infer' mode) and a Linear head. num_classes <= 0 leaves out the
    head and forward returns the feature map. No auxiliary classifier is built.

    >>> import oar
    >>> from oar.vision.models import InceptionV3
    >>> model = InceptionV3(num_classes=10)
    >>> model(oar.rand([2, 3, 75, 75])).shape
    [2, 10]
    >>> len(model.inception_block_list)
    11
    """

    def __init__(self, num_classes=1000, with_pool=True):
        super().__init__()
        self.num_classes = check_num_classes(num_classes, "InceptionV3")
        self.with_pool = with_pool
        self.inception_stem = _InceptionStem()
        self.inception_block_list = nn.LayerList([
            _InceptionA(192, 32), _InceptionA(256, 64), _InceptionA(288, 64), _InceptionB(288),
            _InceptionC(768, 128), _InceptionC(768, 160), _InceptionC(768, 160), _InceptionC(768, 192),
            _InceptionD(768), _InceptionE(1280), _InceptionE(2048),
        ])
        if with_pool:
            self.avg_pool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.dropout = nn.Dropout(p=0.2, mode="downscale_in_infer")
            attr = fan_in_uniform_attr(2048)
            self.fc = nn.Linear(2048, num_classes, weight_attr=attr)

    def forward(self, x):
        x = self.inception_stem(x)
        for block in self.inception_block_list:
            x = block(x)
        if self.with_pool:
            x = self.avg_pool(x)
        if self.num_classes > 0:
            x = self.fc(self.dropout(_C.flatten(x, 1)))
        return x


def inception_v3(pretrained=False, **kwargs):
    """Inception v3 builder; kwargs (num_classes, with_pool) go to InceptionV3.

    >>> from oar.vision.models import inception_v3
    >>> inception_v3(num_classes=10).fc.weight.shape
    [2048, 10]
    """
    check_pretrained(pretrained, "inception_v3")
    return InceptionV3(**kwargs)
