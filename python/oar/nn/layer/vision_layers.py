"""Layer forms of the resampling and patch ops in oar.nn.functional.extension."""
from .. import functional as F
from .layers import Layer

__all__ = ["Upsample", "UpsamplingNearest2D", "UpsamplingBilinear2D", "PixelShuffle", "PixelUnshuffle", "Unfold",
           "Fold", "ChannelShuffle", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Layer):
    """Resizes the spatial axes (see ``oar.nn.functional.interpolate``).

    >>> import oar
    >>> oar.nn.Upsample(scale_factor=2, mode="bilinear")(oar.ones([1, 1, 2, 2])).shape
    [1, 1, 4, 4]
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=False, align_mode=0,
                 data_format=None, name=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode.lower()
        self.align_corners, self.align_mode, self.data_format = align_corners, align_mode, data_format

    def forward(self, x):
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners, self.align_mode,
                             self.data_format)

    def extra_repr(self):
        what = f"size={self.size}" if self.size is not None else f"scale_factor={self.scale_factor}"
        return f"{what}, mode={self.mode}, align_corners={self.align_corners}"


class UpsamplingNearest2D(Upsample):
    """Nearest-neighbour upsampling of 4-D inputs.

    >>> import oar
    >>> oar.nn.UpsamplingNearest2D(scale_factor=2)(oar.ones([1, 1, 1, 2])).shape
    [1, 1, 2, 4]
    """

    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None):
        super().__init__(size, scale_factor, "nearest", False, 0, data_format)


class UpsamplingBilinear2D(Upsample):
    """Bilinear upsampling of 4-D inputs with align_corners=True (as in Paddle).

    >>> import oar
    >>> oar.nn.UpsamplingBilinear2D(size=[3, 3])(oar.ones([1, 1, 2, 2])).shape
    [1, 1, 3, 3]
    """

    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None):
        super().__init__(size, scale_factor, "bilinear", True, 0, data_format)


class PixelShuffle(Layer):
    """[N, C*r*r, H, W] -> [N, C, H*r, W*r].

    >>> import oar
    >>> oar.nn.PixelShuffle(2)(oar.ones([1, 8, 2, 2])).shape
    [1, 2, 4, 4]
    """

    def __init__(self, upscale_factor, data_format="NCHW", name=None):
        super().__init__()
        self.upscale_factor, self.data_format = upscale_factor, data_format

    def forward(self, x):
        return F.pixel_shuffle(x, self.upscale_factor, self.data_format)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Layer):
    """[N, C, H*r, W*r] -> [N, C*r*r, H, W].

    >>> import oar
    >>> oar.nn.PixelUnshuffle(2)(oar.ones([1, 2, 4, 4])).shape
    [1, 8, 2, 2]
    """

    def __init__(self, downscale_factor, data_format="NCHW", name=None):
        super().__init__()
        self.downscale_factor, self.data_format = downscale_factor, data_format

    def forward(self, x):
        return F.pixel_unshuffle(x, self.downscale_factor, self.data_format)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class Unfold(Layer):
    """im2col (see ``oar.nn.functional.unfold``).

    >>> import oar
    >>> oar.nn.Unfold(kernel_sizes=2)(oar.ones([1, 3, 4, 4])).shape
    [1, 12, 9]
    """

    def __init__(self, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
        super().__init__()
        self.kernel_sizes, self.strides, self.paddings, self.dilations = kernel_sizes, strides, paddings, dilations

    def forward(self, x):
        return F.unfold(x, self.kernel_sizes, self.strides, self.paddings, self.dilations)

    def extra_repr(self):
        return f"kernel_sizes={self.kernel_sizes}, strides={self.strides}, paddings={self.paddings}"


class Fold(Layer):
    """col2im (see ``oar.nn.functional.fold``).

    >>> import oar
    >>> oar.nn.Fold([3, 3], kernel_sizes=2)(oar.ones([1, 4, 4])).shape
    [1, 1, 3, 3]
    """

    def __init__(self, output_sizes, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
        super().__init__()
        self.output_sizes, self.kernel_sizes = output_sizes, kernel_sizes
        self.strides, self.paddings, self.dilations = strides, paddings, dilations

    def forward(self, x):
        return F.fold(x, self.output_sizes, self.kernel_sizes, self.strides, self.paddings, self.dilations)

    def extra_repr(self):
        return f"output_sizes={self.output_sizes}, kernel_sizes={self.kernel_sizes}"


class ChannelShuffle(Layer):
    """Interleaves the channel groups of a 4-D input (see ``oar.nn.functional.channel_shuffle``).

    >>> import oar
    >>> x = oar.arange(4, dtype="float32").reshape([1, 4, 1, 1])
    >>> oar.nn.ChannelShuffle(2)(x).numpy().reshape(-1).tolist()
    [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups, data_format="NCHW", name=None):
        super().__init__()
        if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"[oar.nn.ChannelShuffle] groups must be a positive int, got {groups!r}")
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"[oar.nn.ChannelShuffle] data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
        self._groups, self._data_format = groups, data_format

    def forward(self, x):
        return F.channel_shuffle(x, self._groups, self._data_format)

    def extra_repr(self):
        return f"groups={self._groups}" + (f", data_format={self._data_format}" if self._data_format != "NCHW" else "")


# Paddle also exports these spellings.
UpsamplingNearest2d, UpsamplingBilinear2d = UpsamplingNearest2D, UpsamplingBilinear2D
