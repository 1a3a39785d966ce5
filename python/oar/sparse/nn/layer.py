"""oar.sparse.nn layers: the activations of oar.sparse.nn.functional as Layers."""
from ...nn.layer.layers import Layer
from . import functional as F

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "Softmax"]


class ReLU(Layer):
    """max(x, 0) on the stored entries of a sparse tensor.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 2.0], [3])
    >>> oar.sparse.nn.ReLU()(x).values().numpy().tolist()
    [0.0, 2.0]
    """

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.relu(x)


class ReLU6(Layer):
    """min(max(x, 0), 6) on the stored entries of a sparse tensor.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 2]], [-1.0, 7.0], [3])
    >>> oar.sparse.nn.ReLU6()(x).values().numpy().tolist()
    [0.0, 6.0]
    """

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.relu6(x)


class LeakyReLU(Layer):
    """x where x >= 0 and negative_slope * x elsewhere, on the stored entries of a sparse tensor.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 2]], [-2.0, 2.0], [3])
    >>> oar.sparse.nn.LeakyReLU(0.25)(x).values().numpy().tolist()
    [-0.5, 2.0]
    """

    def __init__(self, negative_slope=0.01, name=None):
        super().__init__()
        self._negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self._negative_slope)


class Softmax(Layer):
    """Softmax over the stored entries of each row (last axis) of a sparse tensor.

    >>> import oar
    >>> x = oar.sparse.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1.0, 1.0, 5.0], [2, 3])
    >>> oar.sparse.nn.Softmax()(x).values().numpy().tolist()
    [0.5, 0.5, 1.0]
    """

    def __init__(self, axis=-1, name=None):
        super().__init__()
        self._axis = axis

    def forward(self, x):
        return F.softmax(x, self._axis)
