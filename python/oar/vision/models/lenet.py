"""LeNet as in Paddle's model zoo (sized for 1x28x28 inputs)."""
from oar import nn
from oar import _C
from ._utils import check_num_classes

__all__ = ["LeNet"]


class LeNet(nn.Layer):
    """LeNet-5 style network for 1x28x28 images.

    features: Conv2D(1, 6, 3, padding=1), ReLU, MaxPool2D(2, 2), Conv2D(6, 16, 5), ReLU,
    MaxPool2D(2, 2); fc: Linear(400, 120), Linear(120, 84), Linear(84, num_classes). With
    num_classes <= 0 the fc head is left out and forward returns the [N, 16, 5, 5] features.

    >>> import oar
    >>> from oar.vision.models import LeNet
    >>> model = LeNet()
    >>> model(oar.rand([2, 1, 28, 28])).shape
    [2, 10]
    >>> sum(p.size for p in model.parameters())
    61610
    """

    def __init__(self, num_classes=10):
        super().__init__()
        self.num_classes = check_num_classes(num_classes, "LeNet")
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2))
        if num_classes > 0:
            self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, num_classes))

    def forward(self, inputs):
        x = self.features(inputs)
        if self.num_classes > 0:
            x = self.fc(_C.flatten(x, 1))
        return x
