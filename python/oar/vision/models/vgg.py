"""VGG as in Paddle's model zoo (paddle.vision.models.vgg)."""
from oar import _C, nn
from ._utils import check_num_classes, check_pretrained

__all__ = ["VGG", "vgg11", "vgg13", "vgg16", "vgg19"]


class VGG(nn.Layer):
    """VGG: a `features` layer (see make_layers), a 7x7 adaptive average pool and a
    4096-4096-num_classes classifier with ReLU and dropout.

    The classifier expects 512 x 7 x 7 features, which the pool provides for any input size;
    with with_pool=False the features must already have that shape. With num_classes <= 0 the
    classifier is left out and forward returns the feature map.

    >>> import oar
    >>> from oar.vision.models.vgg import VGG, make_layers
    >>> model = VGG(make_layers([8, "M", 512, "M"]), num_classes=0, with_pool=True)
    >>> model(oar.rand([1, 3, 16, 16])).shape
    [1, 512, 7, 7]
    """

    def __init__(self, features, num_classes=1000, with_pool=True):
        super().__init__()
        self.features = features
        self.num_classes = check_num_classes(num_classes, "VGG")
        self.with_pool = with_pool
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((7, 7))
        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Linear(512 * 7 * 7, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, num_classes))

    def forward(self, x):
        x = self.features(x)
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.classifier(_C.flatten(x, 1))
        return x


def make_layers(cfg, batch_norm=False):
    """VGG feature extractor from a config: ints are 3x3 conv widths, "M" a 2x2 max pool.

    >>> from oar.vision.models.vgg import make_layers
    >>> len(make_layers([8, "M", 16], batch_norm=True))
    7
    """
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2D(kernel_size=2, stride=2))
        else:
            layers.append(nn.Conv2D(in_channels, v, kernel_size=3, padding=1))
            if batch_norm:
                layers.append(nn.BatchNorm2D(v))
            layers.append(nn.ReLU())
            in_channels = v
    return nn.Sequential(*layers)


_CFGS = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


def _vgg(arch, cfg, batch_norm, pretrained, **kwargs):
    check_pretrained(pretrained, arch)
    return VGG(make_layers(_CFGS[cfg], batch_norm=batch_norm), **kwargs)


def vgg11(pretrained=False, batch_norm=False, **kwargs):
    """VGG-11 (configuration A; 132,863,336 parameters with num_classes=1000).

    >>> from oar.vision.models import vgg11
    >>> len(vgg11(num_classes=0).features)
    21
    """
    return _vgg("vgg11", "A", batch_norm, pretrained, **kwargs)


def vgg13(pretrained=False, batch_norm=False, **kwargs):
    """VGG-13 (configuration B).

    >>> from oar.vision.models import vgg13
    >>> len(vgg13(num_classes=0).features)
    25
    """
    return _vgg("vgg13", "B", batch_norm, pretrained, **kwargs)


def vgg16(pretrained=False, batch_norm=False, **kwargs):
    """VGG-16 (configuration D; 138,357,544 parameters with num_classes=1000).

    >>> from oar.vision.models import vgg16
    >>> len(vgg16(num_classes=0, batch_norm=True).features)
    44
    """
    return _vgg("vgg16", "D", batch_norm, pretrained, **kwargs)


def vgg19(pretrained=False, batch_norm=False, **kwargs):
    """VGG-19 (configuration E).

    >>> from oar.vision.models import vgg19
    >>> len(vgg19(num_classes=0).features)
    37
    """
    return _vgg("vgg19", "E", batch_norm, pretrained, **kwargs)
