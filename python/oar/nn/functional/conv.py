"""Convolutions with Paddle signatures: conv1d/2d/3d and their transposes.

The C++ ops (src/ops/conv.cpp) work on channel-first tensors; these wrappers
turn Paddle's padding forms ('same', 'valid', ints, per-side lists, pairs)
and channel-last formats into that form. float32 and bfloat16 run on oneDNN.
"""
from ... import _C
from . import _nn_args as A

__all__ = ["conv1d", "conv2d", "conv3d", "conv1d_transpose", "conv2d_transpose", "conv3d_transpose"]


def _add_bias(y, bias, api):
    if bias is None:
        return y
    A.check_tensor(bias, api, "bias")
    if bias.ndim != 1 or bias.shape[0] != y.shape[1]:
        raise ValueError(f"[{api}] bias must have shape [{y.shape[1]}], got {list(bias.shape)}")
    return _C.add(y, _C.reshape(bias, [1, y.shape[1]] + [1] * (y.ndim - 2)))


def _conv(x, weight, bias, stride, padding, dilation, groups, data_format, nd, api):
    A.check_tensor(x, api)
    A.check_tensor(weight, api, "weight")
    last = A.channel_last(data_format, nd, api)
    A.check_rank(x, nd, api)
    if weight.ndim != nd + 2:
        raise ValueError(f"[{api}] weight must be {nd + 2}-D (out_channels, in_channels / groups, *kernel), "
                         f"got shape {list(weight.shape)}")
    if not A._is_int(groups) or groups <= 0:
        raise ValueError(f"[{api}] groups must be a positive int, got {groups!r}")
    strides = A.ntuple(stride, nd, "stride", api)
    dilations = A.ntuple(dilation, nd, "dilation", api)
    xc = A.to_channel_first(x, nd) if last else x
    alg, pl, pr = A.padding(padding, nd, last, api)
    kernel = list(weight.shape[2:])
    if alg == "same":
        dilations = [1] * nd  # Paddle's 'same' ignores dilation
        pl, pr = A.same_pads(list(xc.shape[2:]), kernel, strides)
    y = _C.nn_conv(xc, weight, strides, pl, pr, dilations, int(groups), api)
    y = _add_bias(y, bias, api)
    return A.to_channel_last(y, nd) if last else y


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCL", name=None):
    """1-D convolution (cross-correlation) of x [N, C, L] with weight [O, C / groups, K].

    >>> import oar
    >>> x = oar.ones([1, 1, 5]); w = oar.ones([1, 1, 3])
    >>> oar.nn.functional.conv1d(x, w, padding=1).numpy().tolist()
    [[[2.0, 3.0, 3.0, 3.0, 2.0]]]
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 1, "oar.nn.functional.conv1d")


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCHW", name=None):
    """2-D convolution of x [N, C, H, W] (or NHWC) with weight [O, C / groups, KH, KW].

    padding: an int, [ph, pw], [top, bottom, left, right], four [before, after]
    pairs including the batch and channel dims, 'same' or 'valid'.

    >>> import oar
    >>> x = oar.ones([1, 2, 4, 4]); w = oar.ones([3, 2, 3, 3])
    >>> y = oar.nn.functional.conv2d(x, w, padding="same")
    >>> y.shape, y[0, 0, 1, 1].item(), y[0, 0, 0, 0].item()
    ([1, 3, 4, 4], 18.0, 8.0)
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 2, "oar.nn.functional.conv2d")


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCDHW", name=None):
    """3-D convolution of x [N, C, D, H, W] (or NDHWC) with weight [O, C / groups, KD, KH, KW].

    >>> import oar
    >>> x = oar.ones([1, 1, 3, 3, 3]); w = oar.ones([2, 1, 3, 3, 3])
    >>> oar.nn.functional.conv3d(x, w).numpy().reshape(-1).tolist()
    [27.0, 27.0]
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 3, "oar.nn.functional.conv3d")


def _conv_transpose(x, weight, bias, stride, padding, output_padding, dilation, groups, output_size, data_format,
                    nd, api):
    A.check_tensor(x, api)
    A.check_tensor(weight, api, "weight")
    last = A.channel_last(data_format, nd, api)
    A.check_rank(x, nd, api)
    if weight.ndim != nd + 2:
        raise ValueError(f"[{api}] weight must be {nd + 2}-D (in_channels, out_channels / groups, *kernel), "
                         f"got shape {list(weight.shape)}")
    if not A._is_int(groups) or groups <= 0:
        raise ValueError(f"[{api}] groups must be a positive int, got {groups!r}")
    strides = A.ntuple(stride, nd, "stride", api)
    dilations = A.ntuple(dilation, nd, "dilation", api)
    out_pad = A.ntuple(output_padding, nd, "output_padding", api, allow_zero=True)
    xc = A.to_channel_first(x, nd) if last else x
    if xc.shape[1] != weight.shape[0]:
        raise ValueError(f"[{api}] input has {xc.shape[1]} channels but weight.shape[0] is {weight.shape[0]}")
    alg, pl, pr = A.padding(padding, nd, last, api)
    kernel = list(weight.shape[2:])
    in_sp = list(xc.shape[2:])
    if alg == "same":
        dilations = [1] * nd
        pl, pr = A.same_pads(in_sp, kernel, strides)
    for op, s, d in zip(out_pad, strides, dilations):
        if op >= max(s, d):
            raise ValueError(f"[{api}] output_padding must be smaller than stride or dilation, got "
                             f"output_padding={out_pad}, stride={strides}, dilation={dilations}")
    base = [(i - 1) * s - a - b + d * (k - 1) + 1 for i, s, a, b, d, k in zip(in_sp, strides, pl, pr, dilations, kernel)]
    if output_size is not None:
        if any(out_pad):
            raise ValueError(f"[{api}] give output_size or output_padding, not both")
        out_sp = A.ntuple(output_size, nd, "output_size", api)
        for o, b, s in zip(out_sp, base, strides):
            if not b <= o < b + s:
                raise ValueError(f"[{api}] output_size {out_sp} must lie in [{base}, {[b + s for b, s in zip(base, strides)]})")
    else:
        out_sp = [b + op for b, op in zip(base, out_pad)]
    if any(o <= 0 for o in out_sp):
        raise ValueError(f"[{api}] the output size {out_sp} must be positive")
    y = _C.nn_conv_transpose(xc, weight, out_sp, strides, pl, pr, dilations, int(groups), api)
    y = _add_bias(y, bias, api)
    return A.to_channel_last(y, nd) if last else y


def conv1d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1,
                     output_size=None, data_format="NCL", name=None):
    """1-D transposed convolution of x [N, C, L] with weight [C, O / groups, K].

    >>> import oar
    >>> x = oar.ones([1, 1, 3]); w = oar.ones([1, 1, 2])
    >>> oar.nn.functional.conv1d_transpose(x, w, stride=2).numpy().tolist()
    [[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]]
    """
    return _conv_transpose(x, weight, bias, stride, padding, output_padding, dilation, groups, output_size,
                           data_format, 1, "oar.nn.functional.conv1d_transpose")


def conv2d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1, groups=1,
                     output_size=None, data_format="NCHW", name=None):
    """2-D transposed convolution (the gradient of conv2d with respect to its
    input) of x [N, C, H, W] with weight [C, O / groups, KH, KW].

    >>> import oar
    >>> x = oar.ones([1, 1, 2, 2]); w = oar.ones([1, 2, 3, 3])
    >>> y = oar.nn.functional.conv2d_transpose(x, w, stride=2, padding=1, output_padding=1)
    >>> y.shape
    [1, 2, 4, 4]
    """
    return _conv_transpose(x, weight, bias, stride, padding, output_padding, dilation, groups, output_size,
                           data_format, 2, "oar.nn.functional.conv2d_transpose")


def conv3d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1,
                     output_size=None, data_format="NCDHW", name=None):
    """3-D transposed convolution of x [N, C, D, H, W] with weight [C, O / groups, KD, KH, KW].

    >>> import oar
    >>> x = oar.ones([1, 1, 1, 1, 1]); w = oar.ones([1, 1, 2, 2, 2])
    >>> oar.nn.functional.conv3d_transpose(x, w).shape
    [1, 1, 2, 2, 2]
    """
    return _conv_transpose(x, weight, bias, stride, padding, output_padding, dilation, groups, output_size,
                           data_format, 3, "oar.nn.functional.conv3d_transpose")
