"""Convolution layers with Paddle signatures: Conv1D/2D/3D and their transposes.

Default initialisation follows Paddle: a convolution's weight is drawn from
Normal(0, sqrt(2 / (in_channels * prod(kernel_size)))), a transposed one's
from the global default (Xavier), and biases start at zero.
"""
import math

from .. import functional as F
from .. import initializer as init
from ..functional import _nn_args as A
from .layers import Layer

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose", "Conv1d", "Conv2d",
           "Conv3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Layer):
    _nd = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 padding_mode="zeros", weight_attr=None, bias_attr=None, data_format="NCHW", output_padding=0,
                 dtype=None):
        super().__init__()
        api = f"oar.nn.{type(self).__name__}"
        nd = self._nd
        A.channel_last(data_format, nd, api)
        if not A._is_int(groups) or groups <= 0:
            raise ValueError(f"[{api}] groups must be a positive int, got {groups!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"[{api}] in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                             f"divisible by groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"[{api}] padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}")
        if padding_mode != "zeros" and self._transposed:
            raise ValueError(f"[{api}] only padding_mode='zeros' is supported by transposed convolutions")
        self._in_channels, self._out_channels = in_channels, out_channels
        self._kernel_size = A.ntuple(kernel_size, nd, "kernel_size", api)
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._groups, self._padding_mode, self._data_format = groups, padding_mode, data_format
        self._output_padding = output_padding
        if self._transposed:
            shape = [in_channels, out_channels // groups] + self._kernel_size
            default = None
        else:
            shape = [out_channels, in_channels // groups] + self._kernel_size
            fan = in_channels * math.prod(self._kernel_size)
            default = init.Normal(0.0, (2.0 / fan) ** 0.5)
        self.weight = self.create_parameter(shape, attr=weight_attr, dtype=dtype, default_initializer=default)
        self.bias = self.create_parameter([out_channels], attr=bias_attr, dtype=dtype, is_bias=True)
        # Non-zero padding modes pad explicitly, then convolve without padding.
        self._explicit_pad = None
        if padding_mode != "zeros":
            last = A.channel_last(data_format, nd, api)
            alg, pl, pr = A.padding(padding, nd, last, api)
            if alg is not None:
                raise ValueError(f"[{api}] padding_mode {padding_mode!r} needs numeric padding, got {padding!r}")
            # F.pad lists pads from the last spatial dim backwards: [left, right, top, bottom, ...].
            pads = []
            for a, b in reversed(list(zip(pl, pr))):
                pads += [a, b]
            self._explicit_pad = pads

    def extra_repr(self):
        s = f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}"
        if self._stride != 1:
            s += f", stride={self._stride}"
        if self._padding != 0:
            s += f", padding={self._padding}"
        if self._dilation != 1:
            s += f", dilation={self._dilation}"
        if self._groups != 1:
            s += f", groups={self._groups}"
        return s + f", data_format={self._data_format}"


class _Conv(_ConvNd):
    """Paddle 3.x signature: the positional arguments end at groups; bias=False (like bias_attr=False)
    drops the bias, dtype sets the parameters' dtype. padding_mode, weight_attr, bias_attr and
    data_format are also accepted positionally, as in earlier Paddle releases."""
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 padding_mode="zeros", weight_attr=None, bias_attr=None, data_format=None, *, bias=True,
                 device=None, dtype=None):
        if bias is False:
            bias_attr = False
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, padding_mode,
                         weight_attr, bias_attr, data_format or self._default_format, dtype=dtype)
        if device is not None:
            self.to(device=device)

    def forward(self, x):
        padding = self._padding
        if self._explicit_pad is not None:
            x = F.pad(x, self._explicit_pad, mode=self._padding_mode, data_format=self._data_format)
            padding = 0
        return type(self)._fn(x, self.weight, self.bias, stride=self._stride, padding=padding,
                              dilation=self._dilation, groups=self._groups, data_format=self._data_format)


class Conv1D(_Conv):
    """1-D convolution layer over [N, C, L] inputs.

    >>> import oar
    >>> conv = oar.nn.Conv1D(2, 4, 3, padding=1)
    >>> conv(oar.ones([1, 2, 5])).shape, conv.weight.shape
    ([1, 4, 5], [4, 2, 3])
    >>> conv = oar.nn.Conv1d(2, 4, 3, bias=False, dtype="float64")
    >>> conv.bias is None, conv.weight.dtype == oar.float64
    (True, True)
    """
    _nd, _default_format, _fn = 1, "NCL", staticmethod(F.conv1d)


class Conv2D(_Conv):
    """2-D convolution layer over [N, C, H, W] (or NHWC) inputs.

    >>> import oar
    >>> conv = oar.nn.Conv2D(3, 8, 3, stride=2, padding=1)
    >>> conv(oar.ones([2, 3, 8, 8])).shape
    [2, 8, 4, 4]
    """
    _nd, _default_format, _fn = 2, "NCHW", staticmethod(F.conv2d)


class Conv3D(_Conv):
    """3-D convolution layer over [N, C, D, H, W] (or NDHWC) inputs.

    >>> import oar
    >>> oar.nn.Conv3D(1, 2, 3)(oar.ones([1, 1, 4, 4, 4])).shape
    [1, 2, 2, 2, 2]
    """
    _nd, _default_format, _fn = 3, "NCDHW", staticmethod(F.conv3d)


class _ConvTranspose(_ConvNd):
    _transposed = True
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 dilation=1, weight_attr=None, bias_attr=None, data_format=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, "zeros",
                         weight_attr, bias_attr, data_format or self._default_format, output_padding)

    def forward(self, x, output_size=None):
        return type(self)._fn(x, self.weight, self.bias, stride=self._stride, padding=self._padding,
                              output_padding=0 if output_size is not None else self._output_padding,
                              dilation=self._dilation, groups=self._groups, output_size=output_size,
                              data_format=self._data_format)


class Conv1DTranspose(_ConvTranspose):
    """1-D transposed convolution layer; forward(x, output_size=None).

    >>> import oar
    >>> oar.nn.Conv1DTranspose(2, 3, 2, stride=2)(oar.ones([1, 2, 4])).shape
    [1, 3, 8]
    """
    _nd, _default_format, _fn = 1, "NCL", staticmethod(F.conv1d_transpose)


class Conv2DTranspose(_ConvTranspose):
    """2-D transposed convolution layer; forward(x, output_size=None).

    >>> import oar
    >>> up = oar.nn.Conv2DTranspose(4, 2, 3, stride=2, padding=1, output_padding=1)
    >>> up(oar.ones([1, 4, 5, 5])).shape, up.weight.shape
    ([1, 2, 10, 10], [4, 2, 3, 3])
    """
    _nd, _default_format, _fn = 2, "NCHW", staticmethod(F.conv2d_transpose)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, dilation=1,
                 groups=1, weight_attr=None, bias_attr=None, data_format=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, dilation,
                         weight_attr, bias_attr, data_format)


class Conv3DTranspose(_ConvTranspose):
    """3-D transposed convolution layer; forward(x, output_size=None).

    >>> import oar
    >>> oar.nn.Conv3DTranspose(1, 1, 2, stride=2)(oar.ones([1, 1, 2, 2, 2])).shape
    [1, 1, 4, 4, 4]
    """
    _nd, _default_format, _fn = 3, "NCDHW", staticmethod(F.conv3d_transpose)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, dilation=1,
                 groups=1, weight_attr=None, bias_attr=None, data_format=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, dilation,
                         weight_attr, bias_attr, data_format)


# Paddle also exports these spellings.
Conv1d, Conv2d, Conv3d = Conv1D, Conv2D, Conv3D
