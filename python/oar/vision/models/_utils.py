"""Helpers shared by the vision model builders."""
import math

from oar import nn, ParamAttr
from oar.nn.initializer import Uniform

__all__ = []


def check_pretrained(pretrained, api):
    """Rejects pretrained=True: oar ships no weights and never downloads."""
    if pretrained:
        raise NotImplementedError(
            f"[oar.vision.models.{api}] pretrained weights are not available (oar does not download files); "
            f"build the model with pretrained=False and load a saved state dict with set_state_dict")


def check_num_classes(num_classes, api):
    if isinstance(num_classes, bool) or not isinstance(num_classes, int):
        raise TypeError(f"[oar.vision.models.{api}] num_classes must be an int, got {type(num_classes).__name__}")
    return num_classes


def check_scale(scale, api):
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"[oar.vision.models.{api}] scale must be a number, got {type(scale).__name__}")
    if not scale > 0:
        raise ValueError(f"[oar.vision.models.{api}] scale must be a positive number, got {scale!r}")
    return scale


def check_choice(value, choices, what, api):
    if value not in choices:
        raise ValueError(f"[oar.vision.models.{api}] {what} must be one of {list(choices)}, got {value!r}")
    return value


def make_divisible(v, divisor=8, min_value=None):
    """Rounds a scaled channel count to a multiple of divisor, never more than 10% below v.

    >>> from oar.vision.models._utils import make_divisible
    >>> make_divisible(32 * 0.75), make_divisible(16 * 0.35), make_divisible(91)
    (24, 8, 88)
    """
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def uniform_attr(bound):
    """ParamAttr drawing a parameter from U(-bound, bound)."""
    return ParamAttr(initializer=Uniform(-bound, bound))


def fan_in_uniform_attr(fan_in):
    """ParamAttr drawing from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the classifier init several zoo models use."""
    return uniform_attr(1.0 / math.sqrt(fan_in))


class ConvNormActivation(nn.Sequential):
    """Conv2D, then a norm layer, then an activation, as one Sequential (sublayers 0, 1, 2).

    padding=None pads 'same' for odd kernels ((kernel_size - 1) // 2 * dilation per side); bias=None
    gives the convolution a bias only when there is no norm layer. norm_layer or activation_layer None
    leaves that stage out. The arguments are those of Paddle's paddle.vision.ops.ConvNormActivation.

    >>> import oar
    >>> from oar.vision.models._utils import ConvNormActivation
    >>> block = ConvNormActivation(3, 8, kernel_size=3, stride=2)
    >>> block(oar.rand([1, 3, 9, 9])).shape, [k for k in block.state_dict()][:2]
    ([1, 8, 5, 5], ['0.weight', '1.weight'])
    """

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm2D, activation_layer=nn.ReLU, dilation=1, bias=None):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation, groups=groups,
                            bias_attr=None if bias else False)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(*layers)
