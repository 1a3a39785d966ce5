"""SqueezeNet 1.0 and 1.1 as in Paddle's model zoo (paddle.vision.models.squeezenet)."""
import oar
from oar import _C, nn
from ._utils import check_choice, check_num_classes, check_pretrained

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"]


class _FireConv(nn.Layer):
    """Conv2D (with bias) followed by ReLU."""

    def __init__(self, in_channels, out_channels, kernel_size, padding=0):
        super().__init__()
        self._conv = nn.Conv2D(in_channels, out_channels, kernel_size, padding=padding)

    def forward(self, x):
        return _C._nn_functional.relu(self._conv(x))


class _Fire(nn.Layer):
    """Fire module: a 1x1 squeeze, then 1x1 and 3x3 expands concatenated along channels."""

    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super().__init__()
        self._conv = _FireConv(in_channels, squeeze_channels, 1)
        self._conv_path1 = _FireConv(squeeze_channels, expand1x1_channels, 1)
        self._conv_path2 = _FireConv(squeeze_channels, expand3x3_channels, 3, padding=1)

    def forward(self, x):
        x = self._conv(x)
        return oar.concat([self._conv_path1(x), self._conv_path2(x)], axis=1)


# fire modules (squeeze, expand 1x1, expand 3x3) of both versions
_FIRES = [(16, 64, 64), (16, 64, 64), (32, 128, 128), (32, 128, 128), (48, 192, 192), (48, 192, 192),
          (64, 256, 256), (64, 256, 256)]
# how many fire modules run before each of the 2nd and 3rd max pools
_POOL_AFTER = {"1.0": (3, 7), "1.1": (2, 4)}


class SqueezeNet(nn.Layer):
    """SqueezeNet version '1.0' (1,248,424 parameters) or '1.1' (1,235,496; 2.4x less compute).

    A stem convolution and max pool, eight Fire modules with two more max pools between them, and a
    classifier of dropout and a 1x1 convolution to num_classes. with_pool applies ReLU and averages
    the map to [N, C] (the classifier's output, or the 512 features when num_classes <= 0 leaves it
    out); with_pool=False returns the map without that ReLU, as Paddle does. Dropout is Paddle's
    'downscale_in_infer' mode (x0.5 in eval). Unlike Paddle, num_classes <= 0 creates no zero-sized
    _conv9 parameters.

    >>> import oar
    >>> from oar.vision.models import SqueezeNet
    >>> model = SqueezeNet("1.1", num_classes=10)
    >>> model(oar.rand([2, 3, 64, 64])).shape
    [2, 10]
    >>> SqueezeNet("1.1", num_classes=10, with_pool=False)(oar.rand([2, 3, 64, 64])).shape
    [2, 10, 3, 3]
    """

    def __init__(self, version, num_classes=1000, with_pool=True):
        super().__init__()
        self.version = check_choice(version, ("1.0", "1.1"), "version", "SqueezeNet")
        self.num_classes = check_num_classes(num_classes, "SqueezeNet")
        self.with_pool = with_pool
        if version == "1.0":
            self._conv = nn.Conv2D(3, 96, 7, stride=2)
        else:
            self._conv = nn.Conv2D(3, 64, 3, stride=2, padding=1)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        in_channels = self._conv.weight.shape[0]
        for i, (s, e1, e3) in enumerate(_FIRES):
            self.add_sublayer(f"_conv{i + 1}", _Fire(in_channels, s, e1, e3))
            in_channels = e1 + e3
        if num_classes > 0:
            self._drop = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._conv9 = nn.Conv2D(512, num_classes, 1)
        if with_pool:
            self._avg_pool = nn.AdaptiveAvgPool2D(1)

    def forward(self, inputs):
        x = self._pool(_C._nn_functional.relu(self._conv(inputs)))
        pools = _POOL_AFTER[self.version]
        for i in range(len(_FIRES)):
            x = getattr(self, f"_conv{i + 1}")(x)
            if i + 1 in pools:
                x = self._pool(x)
        if self.num_classes > 0:
            x = self._conv9(self._drop(x))
        if self.with_pool:
            # Paddle applies the classifier's ReLU only together with the pool; kept so that
            # Paddle-trained weights give Paddle's outputs
            x = _C.flatten(self._avg_pool(_C._nn_functional.relu(x)), 1)
        return x


def squeezenet1_0(pretrained=False, **kwargs):
    """SqueezeNet 1.0; kwargs (num_classes, with_pool) go to SqueezeNet.

    >>> from oar.vision.models import squeezenet1_0
    >>> squeezenet1_0(num_classes=10)._conv.weight.shape
    [96, 3, 7, 7]
    """
    check_pretrained(pretrained, "squeezenet1_0")
    return SqueezeNet("1.0", **kwargs)


def squeezenet1_1(pretrained=False, **kwargs):
    """SqueezeNet 1.1; kwargs (num_classes, with_pool) go to SqueezeNet.

    >>> from oar.vision.models import squeezenet1_1
    >>> squeezenet1_1(num_classes=10)._conv.weight.shape
    [64, 3, 3, 3]
    """
    check_pretrained(pretrained, "squeezenet1_1")
    return SqueezeNet("1.1", **kwargs)
