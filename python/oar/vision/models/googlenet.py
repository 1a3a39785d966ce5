"""GoogLeNet (Inception v1) as in Paddle's model zoo (paddle.vision.models.googlenet)."""
import math

import oar
from oar import _C, nn
from ._utils import check_num_classes, check_pretrained, uniform_attr

__all__ = ["GoogLeNet", "googlenet"]


class _Conv(nn.Layer):
    """A bias-free convolution with 'same' padding; Paddle's GoogLeNet has no norm layers and applies
    ReLU only to the concatenated output of each inception module."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1):
        super().__init__()
        self._conv = nn.Conv2D(in_channels, out_channels, kernel_size, stride, (kernel_size - 1) // 2,
                               bias_attr=False)

    def forward(self, x):
        return self._conv(x)


class _Inception(nn.Layer):
    """Four branches (1x1; 1x1 then 3x3; 1x1 then 5x5; 3x3 max pool then 1x1) concatenated, then ReLU."""

    def __init__(self, in_channels, c1, c3r, c3, c5r, c5, proj):
        super().__init__()
        self._conv1 = _Conv(in_channels, c1, 1)
        self._conv3r = _Conv(in_channels, c3r, 1)
        self._conv3 = _Conv(c3r, c3, 3)
        self._conv5r = _Conv(in_channels, c5r, 1)
        self._conv5 = _Conv(c5r, c5, 5)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=1, padding=1)
        self._convprj = _Conv(in_channels, proj, 1)

    def forward(self, x):
        branches = [self._conv1(x), self._conv3(self._conv3r(x)), self._conv5(self._conv5r(x)),
                    self._convprj(self._pool(x))]
        return _C._nn_functional.relu(oar.concat(branches, axis=1))


# (name, in, 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool projection)
_INCEPTIONS = [
    ("_ince3a", 192, 64, 96, 128, 16, 32, 32), ("_ince3b", 256, 128, 128, 192, 32, 96, 64),
    ("_ince4a", 480, 192, 96, 208, 16, 48, 64), ("_ince4b", 512, 160, 112, 224, 24, 64, 64),
    ("_ince4c", 512, 128, 128, 256, 24, 64, 64), ("_ince4d", 512, 112, 144, 288, 32, 64, 64),
    ("_ince4e", 528, 256, 160, 320, 32, 128, 128), ("_ince5a", 832, 256, 160, 320, 32, 128, 128),
    ("_ince5b", 832, 384, 192, 384, 48, 128, 128),
]


class GoogLeNet(nn.Layer):
    """GoogLeNet with its two auxiliary classifiers (11,535,736 parameters with num_classes=1000).

    forward returns [out, aux1, aux2]: the main logits and those of the auxiliary heads on the
    outputs of inception 4a and 4d. The heads' Linear layers take 128 x 3 x 3 features, which 189 to
    236 pixel inputs produce. with_pool average-pools the main branch globally and the auxiliary
    branches 5x5 with stride 3; num_classes <= 0 leaves out all three heads and forward returns the
    (pooled) feature maps. Dropout is Paddle's 'downscale_in_infer' mode (scaled in eval mode). As in
    Paddle, only the first auxiliary head has a ReLU after its hidden Linear layer.

    >>> import oar
    >>> from oar.vision.models import GoogLeNet
    >>> model = GoogLeNet(num_classes=0)
    >>> [t.shape for t in model(oar.rand([1, 3, 96, 96]))]
    [[1, 1024, 1, 1], [1, 512, 1, 1], [1, 528, 1, 1]]
    >>> sum(p.size for p in GoogLeNet(num_classes=10).parameters())
    8491486
    """

    def __init__(self, num_classes=1000, with_pool=True):
        super().__init__()
        self.num_classes = check_num_classes(num_classes, "GoogLeNet")
        self.with_pool = with_pool
        self._conv = _Conv(3, 64, 7, 2)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        self._conv_1 = _Conv(64, 64, 1)
        self._conv_2 = _Conv(64, 192, 3)
        for name, *channels in _INCEPTIONS:
            self.add_sublayer(name, _Inception(*channels))
        if with_pool:
            self._pool_5 = nn.AdaptiveAvgPool2D(1)
            self._pool_o1 = nn.AvgPool2D(kernel_size=5, stride=3)
            self._pool_o2 = nn.AvgPool2D(kernel_size=5, stride=3)
        if num_classes > 0:
            self._drop = nn.Dropout(p=0.4, mode="downscale_in_infer")
            self._fc_out = nn.Linear(1024, num_classes)
            # Paddle draws the auxiliary hidden layers from U(-b, b) with b = sqrt(3 / 2048)
            aux_attr = uniform_attr(math.sqrt(3.0 / 2048))
            self._conv_o1 = _Conv(512, 128, 1)
            self._fc_o1 = nn.Linear(1152, 1024, weight_attr=aux_attr)
            self._drop_o1 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out1 = nn.Linear(1024, num_classes)
            self._conv_o2 = _Conv(528, 128, 1)
            self._fc_o2 = nn.Linear(1152, 1024, weight_attr=aux_attr)
            self._drop_o2 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out2 = nn.Linear(1024, num_classes)

    def _aux(self, x, i):
        # auxiliary head i (1 or 2) on an intermediate feature map
        if self.with_pool:
            x = getattr(self, f"_pool_o{i}")(x)
        if self.num_classes > 0:
            x = getattr(self, f"_fc_o{i}")(_C.flatten(getattr(self, f"_conv_o{i}")(x), 1))
            if i == 1:
                # Paddle's GoogLeNet has a ReLU in the first auxiliary head only; kept so that
                # Paddle-trained weights give Paddle's outputs
                x = _C._nn_functional.relu(x)
            x = getattr(self, f"_out{i}")(getattr(self, f"_drop_o{i}")(x))
        return x

    def forward(self, inputs):
        x = self._pool(self._conv(inputs))
        x = self._pool(self._conv_2(self._conv_1(x)))
        x = self._pool(self._ince3b(self._ince3a(x)))
        ince4a = self._ince4a(x)
        ince4d = self._ince4d(self._ince4c(self._ince4b(ince4a)))
        x = self._pool(self._ince4e(ince4d))
        x = self._ince5b(self._ince5a(x))
        if self.with_pool:
            x = self._pool_5(x)
        if self.num_classes > 0:
            x = self._fc_out(self._drop(_C.flatten(x, 1)))
        return [x, self._aux(ince4a, 1), self._aux(ince4d, 2)]


def googlenet(pretrained=False, **kwargs):
    """GoogLeNet builder; kwargs (num_classes, with_pool) go to GoogLeNet.

    >>> from oar.vision.models import googlenet
    >>> googlenet(num_classes=10)._fc_out.weight.shape
    [1024, 10]
    """
    check_pretrained(pretrained, "googlenet")
    return GoogLeNet(**kwargs)
