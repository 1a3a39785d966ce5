"""oar.sparse.nn layers: the activations of oar.sparse.nn.functional as Layers."""
from ...nn import BatchNorm1D as _BatchNorm1D
from ...nn import SyncBatchNorm as _SyncBatchNorm
from ...nn.layer.layers import Layer
from . import functional as F

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "Softmax", "BatchNorm", "SyncBatchNorm"]


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


class BatchNorm(_BatchNorm1D):
    """Batch normalisation of a channels-last sparse tensor (e.g. COO [N, D, H, W, C] with values [nnz, C]):
    the statistics are taken over the stored entries only, per channel, and the pattern is kept.

    Parameters, running statistics and train/eval behaviour are those of oar.nn.BatchNorm1D on the values.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 1, 3]], [[1.0, 2.0], [3.0, 2.0], [5.0, 8.0]], [4, 2])
    >>> y = oar.sparse.nn.BatchNorm(2)(x)
    >>> [round(v, 3) for v in y.values()[:, 0].numpy().tolist()]
    [-1.225, 0.0, 1.225]
    """

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NDHWC", use_global_stats=None, name=None):
        if data_format not in ("NDHWC", "NHWC", "NLC", "NC"):
            raise ValueError(f"[oar.sparse.nn.BatchNorm] data_format must put channels last (NDHWC, NHWC, NLC "
                             f"or NC), got {data_format!r}")
        super().__init__(num_features, momentum=momentum, epsilon=epsilon, weight_attr=weight_attr,
                         bias_attr=bias_attr, use_global_stats=use_global_stats, name=name)

    def forward(self, x):
        return _norm_values(self, x, super().forward, "oar.sparse.nn.BatchNorm")


def _norm_values(layer, x, norm, api):
    """x with norm applied to its values [nnz, C]: the statistics come from the stored entries only."""
    from ..unary import check_sparse
    check_sparse(x, api)
    vals = x.values()
    if vals.ndim != 2 or vals.shape[1] != layer.weight.shape[0]:
        raise ValueError(f"[{api}] x must store one vector of {layer.weight.shape[0]} channels per entry "
                         f"(values [nnz, C], all dims but the last sparse), got values of shape {vals.shape}")
    return x._with_values(norm(vals))


class SyncBatchNorm(_SyncBatchNorm):
    """BatchNorm over the stored entries of a channels-last sparse tensor, with the statistics reduced over
    the processes of the data-parallel group (oar.nn.SyncBatchNorm on the values [nnz, C]).

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 1, 3]], [[1.0, 2.0], [3.0, 2.0], [5.0, 8.0]], [4, 2])
    >>> y = oar.sparse.nn.SyncBatchNorm(2)(x)
    >>> [round(v, 3) for v in y.values()[:, 0].numpy().tolist()]
    [-1.225, 0.0, 1.225]
    """

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCHW", name=None):
        # the values are [nnz, C] whatever data_format says: channels are the dense last dim
        super().__init__(num_features, momentum=momentum, epsilon=epsilon, weight_attr=weight_attr,
                         bias_attr=bias_attr, name=name)

    def forward(self, x):
        return _norm_values(self, x, super().forward, "oar.sparse.nn.SyncBatchNorm")
