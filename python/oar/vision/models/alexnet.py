"""AlexNet as in Paddle's model zoo (paddle.vision.models.alexnet)."""
from oar import _C, nn
from ._utils import check_num_classes, check_pretrained, fan_in_uniform_attr

__all__ = ["AlexNet", "alexnet"]


def _conv(in_channels, out_channels, kernel_size, stride, padding):
    # weights and biases from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as Paddle initialises AlexNet
    attr = fan_in_uniform_attr(in_channels * kernel_size * kernel_size)
    return nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding, weight_attr=attr, bias_attr=attr)


class _ConvPool(nn.Layer):
    """Conv2D, ReLU, then a 3x3 stride-2 max pool."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.relu = nn.ReLU()
        self._conv = _conv(in_channels, out_channels, kernel_size, stride, padding)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)

    def forward(self, x):
        return self._pool(self.relu(self._conv(x)))


class AlexNet(nn.Layer):
    """AlexNet (61,100,840 parameters with num_classes=1000) for 224x224 images.

    Five convolutions (the 1st, 2nd and 5th followed by max pooling) and three Linear layers with
    dropout before the first two. The classifier takes 256 x 6 x 6 features, which 223 to 254 pixel
    inputs produce; with num_classes <= 0 it is left out and forward returns that feature map.
    Dropout works in Paddle's 'downscale_in_infer' mode: outputs are scaled by 0.5 in eval mode.

    >>> import oar
    >>> from oar.vision.models import AlexNet
    >>> model = AlexNet(num_classes=0)
    >>> model(oar.rand([1, 3, 224, 224])).shape
    [1, 256, 6, 6]
    >>> sum(p.size for p in AlexNet().parameters())
    61100840
    """

    def __init__(self, num_classes=1000):
        super().__init__()
        self.num_classes = check_num_classes(num_classes, "AlexNet")
        self._conv1 = _ConvPool(3, 64, 11, 4, 2)
        self._conv2 = _ConvPool(64, 192, 5, 1, 2)
        self._conv3 = _conv(192, 384, 3, 1, 1)
        self._conv4 = _conv(384, 256, 3, 1, 1)
        self._conv5 = _ConvPool(256, 256, 3, 1, 1)
        if num_classes > 0:
            # all three Linear layers draw from U(-1/sqrt(9216), 1/sqrt(9216)) in Paddle
            attr = fan_in_uniform_attr(256 * 6 * 6)
            self._drop1 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc6 = nn.Linear(256 * 6 * 6, 4096, weight_attr=attr, bias_attr=attr)
            self._drop2 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc7 = nn.Linear(4096, 4096, weight_attr=attr, bias_attr=attr)
            self._fc8 = nn.Linear(4096, num_classes, weight_attr=attr, bias_attr=attr)

    def forward(self, inputs):
        x = self._conv2(self._conv1(inputs))
        x = _C._nn_functional.relu(self._conv4(_C._nn_functional.relu(self._conv3(x))))
        x = self._conv5(x)
        if self.num_classes > 0:
            x = self._drop1(_C.flatten(x, 1))
            x = self._drop2(_C._nn_functional.relu(self._fc6(x)))
            x = self._fc8(_C._nn_functional.relu(self._fc7(x)))
        return x


def alexnet(pretrained=False, **kwargs):
    """AlexNet builder; kwargs (num_classes) go to AlexNet.

    >>> from oar.vision.models import alexnet
    >>> alexnet(num_classes=10)._fc8.weight.shape
    [4096, 10]
    >>> alexnet(pretrained=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotImplementedError: [oar.vision.models.alexnet] pretrained weights are not available ...
    """
    check_pretrained(pretrained, "alexnet")
    return AlexNet(**kwargs)
