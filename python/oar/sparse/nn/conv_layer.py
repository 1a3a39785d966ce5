"""oar.sparse.nn convolution and pooling layers over channels-last sparse COO tensors."""
import math

from ...nn.initializer import Normal
from ...nn.layer.layers import Layer
from . import conv as F

__all__ = ["Conv2D", "Conv3D", "SubmConv2D", "SubmConv3D", "MaxPool3D"]


class _SubmConv:
    """The submanifold layers' constructor: Paddle's order puts key after padding_mode and adds backend."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 padding_mode="zeros", key=None, weight_attr=None, bias_attr=None, data_format=None, backend=None):
        # key names a rule-book cache and backend a kernel choice in Paddle; neither changes the result here
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, padding_mode,
                         weight_attr, bias_attr, data_format)


class _SparseConv(Layer):
    _dims, _subm, _fn = 3, False, None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 padding_mode="zeros", weight_attr=None, bias_attr=None, data_format=None):
        super().__init__()
        api = f"oar.sparse.nn.{type(self).__name__}"
        s = self._dims
        if padding_mode != "zeros":
            raise ValueError(f"[{api}] padding_mode must be 'zeros', got {padding_mode!r}")
        for nm, v in (("in_channels", in_channels), ("out_channels", out_channels)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"[{api}] {nm} must be a positive int, got {v!r}")
        kernel = F._tuple(kernel_size, s, api, "kernel_size", allow_zero=False)
        self._stride, self._padding, self._dilation, self._groups = stride, padding, dilation, groups
        self._data_format = data_format or F._FORMATS[s]
        # He-normal over the fan-in of one output: kernel cells times input channels
        std = math.sqrt(2.0 / (math.prod(kernel) * in_channels))
        self.weight = self.create_parameter(kernel + [in_channels, out_channels], attr=weight_attr,
                                            default_initializer=Normal(0.0, std))
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def forward(self, x):
        args = (x, self.weight, self.bias, self._stride, self._padding, self._dilation, self._groups,
                self._data_format)
        return type(self)._fn(*args)


class Conv3D(_SparseConv):
    """Sparse 3-D convolution layer (oar.sparse.nn.functional.conv3d) with weight [kD, kH, kW, C, M] and bias [M].

    >>> import oar
    >>> conv = oar.sparse.nn.Conv3D(2, 4, kernel_size=3, padding=1)
    >>> x = oar.sparse.sparse_coo_tensor([[0], [1], [1], [1]], [[1.0, 2.0]], [1, 3, 3, 3, 2])
    >>> conv(x).shape, conv(x).nnz()
    ([1, 3, 3, 3, 4], 27)
    """
    _dims, _subm, _fn = 3, False, F.conv3d


class SubmConv3D(_SubmConv, _SparseConv):
    """Submanifold sparse 3-D convolution layer: the output keeps the input's pattern.

    >>> import oar
    >>> conv = oar.sparse.nn.SubmConv3D(2, 4, kernel_size=3, padding=1)
    >>> x = oar.sparse.sparse_coo_tensor([[0], [1], [1], [1]], [[1.0, 2.0]], [1, 3, 3, 3, 2])
    >>> conv(x).shape, conv(x).nnz()
    ([1, 3, 3, 3, 4], 1)
    """
    _dims, _subm, _fn = 3, True, F.subm_conv3d


class Conv2D(_SparseConv):
    """Sparse 2-D convolution layer (oar.sparse.nn.functional.conv2d) with weight [kH, kW, C, M] and bias [M].

    >>> import oar
    >>> conv = oar.sparse.nn.Conv2D(1, 3, kernel_size=2)
    >>> x = oar.sparse.sparse_coo_tensor([[0], [1], [1]], [[1.0]], [1, 3, 3, 1])
    >>> conv(x).shape, conv(x).nnz()
    ([1, 2, 2, 3], 4)
    """
    _dims, _subm, _fn = 2, False, F.conv2d


class SubmConv2D(_SubmConv, _SparseConv):
    """Submanifold sparse 2-D convolution layer: the output keeps the input's pattern.

    >>> import oar
    >>> conv = oar.sparse.nn.SubmConv2D(1, 3, kernel_size=3, padding=1)
    >>> x = oar.sparse.sparse_coo_tensor([[0], [1], [1]], [[1.0]], [1, 3, 3, 1])
    >>> conv(x).shape, conv(x).nnz()
    ([1, 3, 3, 3], 1)
    """
    _dims, _subm, _fn = 2, True, F.subm_conv2d


class MaxPool3D(Layer):
    """Sparse 3-D max pooling layer (oar.sparse.nn.functional.max_pool3d).

    >>> import oar
    >>> pool = oar.sparse.nn.MaxPool3D(kernel_size=2)
    >>> x = oar.sparse.sparse_coo_tensor([[0, 0], [0, 1], [0, 1], [0, 1]], [[1.0], [5.0]], [1, 2, 2, 2, 1])
    >>> pool(x).values().numpy().tolist()
    [[5.0]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NDHWC", name=None):
        super().__init__()
        if return_mask:
            raise ValueError("[oar.sparse.nn.MaxPool3D] return_mask=True is not supported")
        self._args = (kernel_size, stride, padding, ceil_mode, data_format)

    def forward(self, x):
        return F.max_pool3d(x, *self._args)
