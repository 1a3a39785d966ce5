"""ResNet, ResNeXt and wide ResNet as in Paddle's model zoo (paddle.vision.models.resnet)."""
from oar import _C, nn
from ._utils import check_num_classes, check_pretrained

__all__ = [
    "BasicBlock", "BottleneckBlock", "ResNet", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
    "resnext50_32x4d", "resnext50_64x4d", "resnext101_32x4d", "resnext101_64x4d", "resnext152_32x4d",
    "resnext152_64x4d", "wide_resnet50_2", "wide_resnet101_2",
]


class BasicBlock(nn.Layer):
    """Two 3x3 conv-BN layers with an identity (or downsample) shortcut; expansion 1.

    >>> import oar
    >>> from oar.vision.models import BasicBlock
    >>> BasicBlock(8, 8)(oar.rand([1, 8, 6, 6])).shape
    [1, 8, 6, 6]
    """

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2D
        if dilation > 1:
            raise NotImplementedError("[oar.vision.models.BasicBlock] dilation > 1 is not supported")
        self.conv1 = nn.Conv2D(inplanes, planes, 3, padding=1, stride=stride, bias_attr=False)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(planes, planes, 3, padding=1, bias_attr=False)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class BottleneckBlock(nn.Layer):
    """1x1 reduce, 3x3 (grouped) and 1x1 expand conv-BN layers with a shortcut; expansion 4.

    >>> import oar
    >>> from oar.vision.models import BottleneckBlock
    >>> BottleneckBlock(16, 4)(oar.rand([1, 16, 5, 5])).shape
    [1, 16, 5, 5]
    """

    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2D
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = nn.Conv2D(inplanes, width, 1, bias_attr=False)
        self.bn1 = norm_layer(width)
        self.conv2 = nn.Conv2D(width, width, 3, padding=dilation, stride=stride, groups=groups, dilation=dilation,
                               bias_attr=False)
        self.bn2 = norm_layer(width)
        self.conv3 = nn.Conv2D(width, planes * self.expansion, 1, bias_attr=False)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU()
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


_LAYER_CFG = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}


class ResNet(nn.Layer):
    """Residual network: a 7x7 stem, four stages of `block`, global average pool, Linear.

    depth picks the stage sizes (18, 34, 50, 101 or 152); width is the base width of the
    bottleneck (64; 128 for wide ResNets) and groups its cardinality (ResNeXt). With
    with_pool=False the global pool is left out; with num_classes <= 0 the fc head is left out
    and forward returns the feature map.

    >>> import oar
    >>> from oar.vision.models import ResNet, BasicBlock
    >>> model = ResNet(BasicBlock, 18, num_classes=10)
    >>> model(oar.rand([2, 3, 32, 32])).shape
    [2, 10]
    """

    def __init__(self, block, depth=50, width=64, num_classes=1000, with_pool=True, groups=1):
        super().__init__()
        if depth not in _LAYER_CFG:
            raise ValueError(f"[oar.vision.models.ResNet] depth must be one of {sorted(_LAYER_CFG)}, got {depth!r}")
        layers = _LAYER_CFG[depth]
        self.groups = groups
        self.base_width = width
        self.num_classes = check_num_classes(num_classes, "ResNet")
        self.with_pool = with_pool
        self._norm_layer = nn.BatchNorm2D
        self.inplanes = 64
        self.dilation = 1
        self.conv1 = nn.Conv2D(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias_attr=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
        if num_classes > 0:
            self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2D(self.inplanes, planes * block.expansion, 1, stride=stride, bias_attr=False),
                norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation,
                        norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.fc(_C.flatten(x, 1))
        return x


def _resnet(arch, block, depth, pretrained, **kwargs):
    check_pretrained(pretrained, arch)
    return ResNet(block, depth, **kwargs)


def resnet18(pretrained=False, **kwargs):
    """ResNet-18 (11,689,512 trainable parameters with num_classes=1000); kwargs go to ResNet.

    >>> import oar
    >>> from oar.vision.models import resnet18
    >>> resnet18(num_classes=10)(oar.rand([2, 3, 32, 32])).shape
    [2, 10]
    """
    return _resnet("resnet18", BasicBlock, 18, pretrained, **kwargs)


def resnet34(pretrained=False, **kwargs):
    """ResNet-34; kwargs go to ResNet.

    >>> from oar.vision.models import resnet34
    >>> resnet34(num_classes=10).fc.weight.shape
    [512, 10]
    """
    return _resnet("resnet34", BasicBlock, 34, pretrained, **kwargs)


def resnet50(pretrained=False, **kwargs):
    """ResNet-50; kwargs go to ResNet.

    >>> from oar.vision.models import resnet50
    >>> resnet50(num_classes=10).fc.weight.shape
    [2048, 10]
    """
    return _resnet("resnet50", BottleneckBlock, 50, pretrained, **kwargs)


def resnet101(pretrained=False, **kwargs):
    """ResNet-101; kwargs go to ResNet.

    >>> from oar.vision.models import resnet101
    >>> resnet101(pretrained=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotImplementedError: [oar.vision.models.resnet101] pretrained weights are not available ...
    """
    return _resnet("resnet101", BottleneckBlock, 101, pretrained, **kwargs)


def resnet152(pretrained=False, **kwargs):
    """ResNet-152; kwargs go to ResNet.

    >>> from oar.vision.models import resnet152
    >>> resnet152(pretrained=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotImplementedError: [oar.vision.models.resnet152] pretrained weights are not available ...
    """
    return _resnet("resnet152", BottleneckBlock, 152, pretrained, **kwargs)


def _resnext(arch, depth, groups, width, pretrained, kwargs):
    kwargs["groups"], kwargs["width"] = groups, width
    return _resnet(arch, BottleneckBlock, depth, pretrained, **kwargs)


def resnext50_32x4d(pretrained=False, **kwargs):
    """ResNeXt-50 with 32 groups of width 4.

    >>> from oar.vision.models import resnext50_32x4d
    >>> resnext50_32x4d(num_classes=10).layer1[0].conv2.weight.shape
    [128, 4, 3, 3]
    """
    return _resnext("resnext50_32x4d", 50, 32, 4, pretrained, kwargs)


def resnext50_64x4d(pretrained=False, **kwargs):
    """ResNeXt-50 with 64 groups of width 4.

    >>> from oar.vision.models import resnext50_64x4d
    >>> resnext50_64x4d(pretrained=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotImplementedError: [oar.vision.models.resnext50_64x4d] pretrained weights are not available ...
    """
    return _resnext("resnext50_64x4d", 50, 64, 4, pretrained, kwargs)


def resnext101_32x4d(pretrained=False, **kwargs):
    """ResNeXt-101 with 32 groups of width 4.

    >>> from oar.vision.models import resnext101_32x4d
    >>> resnext101_32x4d(pretrained=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotImplementedError: [oar.vision.models.resnext101_32x4d] pretrained weights are not available ...
    """
    return _resnext("resnext101_32x4d", 101, 32, 4, pretrained, kwargs)


def resnext101_64x4d(pretrained=False, **kwargs):
    """ResNeXt-101 with 64 groups of width 4.

    >>> from oar.vision.models import resnext101_64x4d
    >>> resnext101_64x4d(pretrained=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotImplementedError: [oar.vision.models.resnext101_64x4d] pretrained weights are not available ...
    """
    return _resnext("resnext101_64x4d", 101, 64, 4, pretrained, kwargs)


def resnext152_32x4d(pretrained=False, **kwargs):
    """ResNeXt-152 with 32 groups of width 4.

    >>> from oar.vision.models import resnext152_32x4d
    >>> resnext152_32x4d(pretrained=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotImplementedError: [oar.vision.models.resnext152_32x4d] pretrained weights are not available ...
    """
    return _resnext("resnext152_32x4d", 152, 32, 4, pretrained, kwargs)


def resnext152_64x4d(pretrained=False, **kwargs):
    """ResNeXt-152 with 64 groups of width 4.

    >>> from oar.vision.models import resnext152_64x4d
    >>> resnext152_64x4d(pretrained=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotImplementedError: [oar.vision.models.resnext152_64x4d] pretrained weights are not available ...
    """
    return _resnext("resnext152_64x4d", 152, 64, 4, pretrained, kwargs)


def wide_resnet50_2(pretrained=False, **kwargs):
    """Wide ResNet-50-2: bottleneck width doubled (base width 128).

    >>> from oar.vision.models import wide_resnet50_2
    >>> wide_resnet50_2(pretrained=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotImplementedError: [oar.vision.models.wide_resnet50_2] pretrained weights are not available ...
    """
    kwargs["width"] = 64 * 2
    return _resnet("wide_resnet50_2", BottleneckBlock, 50, pretrained, **kwargs)


def wide_resnet101_2(pretrained=False, **kwargs):
    """Wide ResNet-101-2: bottleneck width doubled (base width 128).

    >>> from oar.vision.models import wide_resnet101_2
    >>> wide_resnet101_2(pretrained=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotImplementedError: [oar.vision.models.wide_resnet101_2] pretrained weights are not available ...
    """
    kwargs["width"] = 64 * 2
    return _resnet("wide_resnet101_2", BottleneckBlock, 101, pretrained, **kwargs)
