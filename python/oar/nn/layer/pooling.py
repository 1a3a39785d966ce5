"""Pooling layers with Paddle signatures; each forwards to oar.nn.functional."""
from .. import functional as F
from .layers import Layer

__all__ = [
    "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D",
    "AdaptiveAvgPool1D", "AdaptiveAvgPool2D", "AdaptiveAvgPool3D",
    "AdaptiveMaxPool1D", "AdaptiveMaxPool2D", "AdaptiveMaxPool3D", "LPPool1D", "LPPool2D",
    "MaxUnPool1D", "MaxUnPool2D", "MaxUnPool3D", "FractionalMaxPool2D", "FractionalMaxPool3D",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d",
]


class MaxPool1D(Layer):
    """Max pooling over [N, C, L].

    >>> import oar
    >>> oar.nn.MaxPool1D(2)(oar.to_tensor([[[1.0, 3.0, 2.0, 0.0]]])).numpy().tolist()
    [[[3.0, 2.0]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, name=None):
        super().__init__()
        self._args = dict(kernel_size=kernel_size, stride=stride, padding=padding, return_mask=return_mask,
                          ceil_mode=ceil_mode)

    def forward(self, x):
        return F.max_pool1d(x, **self._args)

    def extra_repr(self):
        return ", ".join(f"{k}={v}" for k, v in self._args.items())


class MaxPool2D(MaxPool1D):
    """Max pooling over [N, C, H, W] (or NHWC).

    >>> import oar
    >>> oar.nn.MaxPool2D(2, 2)(oar.ones([1, 3, 4, 4])).shape
    [1, 3, 2, 2]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NCHW", name=None):
        Layer.__init__(self)
        self._args = dict(kernel_size=kernel_size, stride=stride, padding=padding, return_mask=return_mask,
                          ceil_mode=ceil_mode, data_format=data_format)

    def forward(self, x):
        return F.max_pool2d(x, **self._args)


class MaxPool3D(MaxPool1D):
    """Max pooling over [N, C, D, H, W] (or NDHWC).

    >>> import oar
    >>> oar.nn.MaxPool3D(2)(oar.ones([1, 1, 4, 4, 4])).shape
    [1, 1, 2, 2, 2]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NCDHW", name=None):
        Layer.__init__(self)
        self._args = dict(kernel_size=kernel_size, stride=stride, padding=padding, return_mask=return_mask,
                          ceil_mode=ceil_mode, data_format=data_format)

    def forward(self, x):
        return F.max_pool3d(x, **self._args)


class AvgPool1D(MaxPool1D):
    """Average pooling over [N, C, L].

    >>> import oar
    >>> oar.nn.AvgPool1D(2)(oar.to_tensor([[[1.0, 3.0, 2.0, 0.0]]])).numpy().tolist()
    [[[2.0, 1.0]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False, name=None):
        Layer.__init__(self)
        self._args = dict(kernel_size=kernel_size, stride=stride, padding=padding, exclusive=exclusive,
                          ceil_mode=ceil_mode)

    def forward(self, x):
        return F.avg_pool1d(x, **self._args)


class AvgPool2D(MaxPool1D):
    """Average pooling over [N, C, H, W] (or NHWC).

    >>> import oar
    >>> oar.nn.AvgPool2D(2)(oar.ones([1, 3, 4, 4])).shape
    [1, 3, 2, 2]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
                 data_format="NCHW", name=None):
        Layer.__init__(self)
        self._args = dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                          exclusive=exclusive, divisor_override=divisor_override, data_format=data_format)

    def forward(self, x):
        return F.avg_pool2d(x, **self._args)


class AvgPool3D(MaxPool1D):
    """Average pooling over [N, C, D, H, W] (or NDHWC).

    >>> import oar
    >>> oar.nn.AvgPool3D(2)(oar.ones([1, 1, 4, 4, 4])).shape
    [1, 1, 2, 2, 2]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
                 data_format="NCDHW", name=None):
        Layer.__init__(self)
        self._args = dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                          exclusive=exclusive, divisor_override=divisor_override, data_format=data_format)

    def forward(self, x):
        return F.avg_pool3d(x, **self._args)


class AdaptiveAvgPool1D(MaxPool1D):
    """Adaptive average pooling of [N, C, L] to output_size.

    >>> import oar
    >>> oar.nn.AdaptiveAvgPool1D(1)(oar.to_tensor([[[1.0, 3.0]]])).numpy().tolist()
    [[[2.0]]]
    """

    def __init__(self, output_size, name=None):
        Layer.__init__(self)
        self._args = dict(output_size=output_size)

    def forward(self, x):
        return F.adaptive_avg_pool1d(x, **self._args)


class AdaptiveAvgPool2D(MaxPool1D):
    """Adaptive average pooling of [N, C, H, W] to output_size (entries may be None).

    >>> import oar
    >>> oar.nn.AdaptiveAvgPool2D([1, None])(oar.ones([1, 2, 4, 3])).shape
    [1, 2, 1, 3]
    """

    def __init__(self, output_size, data_format="NCHW", name=None):
        Layer.__init__(self)
        self._args = dict(output_size=output_size, data_format=data_format)

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, **self._args)


class AdaptiveAvgPool3D(MaxPool1D):
    """Adaptive average pooling of [N, C, D, H, W] to output_size.

    >>> import oar
    >>> oar.nn.AdaptiveAvgPool3D(1)(oar.ones([1, 2, 3, 3, 3])).shape
    [1, 2, 1, 1, 1]
    """

    def __init__(self, output_size, data_format="NCDHW", name=None):
        Layer.__init__(self)
        self._args = dict(output_size=output_size, data_format=data_format)

    def forward(self, x):
        return F.adaptive_avg_pool3d(x, **self._args)


class AdaptiveMaxPool1D(MaxPool1D):
    """Adaptive max pooling of [N, C, L] to output_size.

    >>> import oar
    >>> oar.nn.AdaptiveMaxPool1D(1)(oar.to_tensor([[[1.0, 3.0]]])).numpy().tolist()
    [[[3.0]]]
    """

    def __init__(self, output_size, return_mask=False, name=None):
        Layer.__init__(self)
        self._args = dict(output_size=output_size, return_mask=return_mask)

    def forward(self, x):
        return F.adaptive_max_pool1d(x, **self._args)


class AdaptiveMaxPool2D(AdaptiveMaxPool1D):
    """Adaptive max pooling of [N, C, H, W] to output_size.

    >>> import oar
    >>> oar.nn.AdaptiveMaxPool2D(2)(oar.ones([1, 2, 5, 5])).shape
    [1, 2, 2, 2]
    """

    def forward(self, x):
        return F.adaptive_max_pool2d(x, **self._args)


class AdaptiveMaxPool3D(AdaptiveMaxPool1D):
    """Adaptive max pooling of [N, C, D, H, W] to output_size.

    >>> import oar
    >>> oar.nn.AdaptiveMaxPool3D(1)(oar.ones([1, 2, 3, 3, 3])).shape
    [1, 2, 1, 1, 1]
    """

    def forward(self, x):
        return F.adaptive_max_pool3d(x, **self._args)


class LPPool1D(MaxPool1D):
    """Power-average pooling over [N, C, L] (see ``oar.nn.functional.lp_pool1d``).

    >>> import oar
    >>> oar.nn.LPPool1D(2, 2)(oar.to_tensor([[[3.0, 4.0, 0.0, 1.0]]])).numpy().tolist()
    [[[5.0, 1.0]]]
    """

    def __init__(self, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False, data_format="NCL",
                 name=None):
        Layer.__init__(self)
        self._args = dict(norm_type=norm_type, kernel_size=kernel_size, stride=stride, padding=padding,
                          ceil_mode=ceil_mode, data_format=data_format)

    def forward(self, x):
        return F.lp_pool1d(x, **self._args)


class LPPool2D(LPPool1D):
    """Power-average pooling over [N, C, H, W] (or NHWC).

    >>> import oar
    >>> oar.nn.LPPool2D(1, 2)(oar.ones([1, 1, 4, 4])).numpy().tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """

    def __init__(self, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False, data_format="NCHW",
                 name=None):
        super().__init__(norm_type, kernel_size, stride, padding, ceil_mode, data_format)

    def forward(self, x):
        return F.lp_pool2d(x, **self._args)


class MaxUnPool1D(MaxPool1D):
    """Inverse of MaxPool1D: forward(x, indices) scatters x to the mask's flat indices.

    >>> import oar
    >>> x = oar.to_tensor([[[1.0, 5.0, 3.0, 2.0]]])
    >>> y, m = oar.nn.MaxPool1D(2, return_mask=True)(x)
    >>> oar.nn.MaxUnPool1D(2)(y, m).numpy().tolist()
    [[[0.0, 5.0, 3.0, 0.0]]]
    """
    _fn = staticmethod(F.max_unpool1d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format="NCL", output_size=None, name=None):
        Layer.__init__(self)
        self._args = dict(kernel_size=kernel_size, stride=stride, padding=padding, data_format=data_format,
                          output_size=output_size)

    def forward(self, x, indices):
        return type(self)._fn(x, indices, **self._args)


class MaxUnPool2D(MaxUnPool1D):
    """Inverse of MaxPool2D over [N, C, H, W].

    >>> import oar
    >>> y, m = oar.nn.MaxPool2D(2, return_mask=True)(oar.ones([1, 1, 4, 4]))
    >>> oar.nn.MaxUnPool2D(2)(y, m).shape
    [1, 1, 4, 4]
    """
    _fn = staticmethod(F.max_unpool2d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format="NCHW", output_size=None, name=None):
        super().__init__(kernel_size, stride, padding, data_format, output_size)


class MaxUnPool3D(MaxUnPool1D):
    """Inverse of MaxPool3D over [N, C, D, H, W].

    >>> import oar
    >>> y, m = oar.nn.MaxPool3D(2, return_mask=True)(oar.ones([1, 1, 2, 2, 2]))
    >>> oar.nn.MaxUnPool3D(2)(y, m).shape
    [1, 1, 2, 2, 2]
    """
    _fn = staticmethod(F.max_unpool3d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format="NCDHW", output_size=None, name=None):
        super().__init__(kernel_size, stride, padding, data_format, output_size)


class FractionalMaxPool2D(MaxPool1D):
    """Fractional max pooling of [N, C, H, W] (see ``oar.nn.functional.fractional_max_pool2d``).

    >>> import oar
    >>> oar.nn.FractionalMaxPool2D(3, random_u=0.3)(oar.ones([1, 2, 7, 7])).shape
    [1, 2, 3, 3]
    """
    _fn = staticmethod(F.fractional_max_pool2d)

    def __init__(self, output_size, kernel_size=None, random_u=None, return_mask=False, name=None):
        Layer.__init__(self)
        self._args = dict(output_size=output_size, kernel_size=kernel_size, random_u=random_u,
                          return_mask=return_mask)

    def forward(self, x):
        return type(self)._fn(x, **self._args)


class FractionalMaxPool3D(FractionalMaxPool2D):
    """Fractional max pooling of [N, C, D, H, W].

    >>> import oar
    >>> oar.nn.FractionalMaxPool3D(2, random_u=0.5)(oar.ones([1, 1, 3, 3, 3])).shape
    [1, 1, 2, 2, 2]
    """
    _fn = staticmethod(F.fractional_max_pool3d)


# Paddle also exports these spellings.
AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d = AdaptiveAvgPool1D, AdaptiveAvgPool2D, AdaptiveAvgPool3D
AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d = AdaptiveMaxPool1D, AdaptiveMaxPool2D, AdaptiveMaxPool3D
LPPool1d, LPPool2d = LPPool1D, LPPool2D
