"""Layers of ``oar.static.nn`` (Paddle's ``paddle.static.nn``): functions that
create their parameters and apply them.

Each call makes new parameters, named as Paddle names them (``fc_0.w_0``,
``fc_0.b_0``, ...), outside the recording (Note [static mode] in
program.py), so programs bind them and ``append_backward`` and
``Optimizer.minimize`` train them. The computation is the one the eager
functionals (``oar.nn.functional``) record, so gradients come from the same
rules. Outside static mode the layers run eagerly on new parameters, as
Paddle's do.
"""
import math

from .. import _C
from ..framework_param import ParamAttr, _unique_name
from ..nn import functional as F
from ..nn import initializer as init
from . import program as _program

__all__ = ["fc", "conv2d", "conv2d_transpose", "conv3d", "conv3d_transpose", "batch_norm", "embedding",
           "sparse_embedding", "layer_norm", "group_norm", "instance_norm", "prelu", "bilinear_tensor_product",
           "spectral_norm", "row_conv", "nce", "static_pylayer", "deform_conv2d"]

Tensor = _C.Tensor


def _err(api, msg, kind=ValueError):
    return kind(f"[oar.static.nn.{api}] {msg}")


def _check_tensor(api, x, what="input"):
    if not isinstance(x, Tensor):
        raise _err(api, f"{what} must be a Tensor, got {type(x).__name__}", TypeError)


def _dims(x):
    """The sizes oar records with (a data variable's example sizes; Note [declared shapes])."""
    return list(_program._BUILTIN_SHAPE.__get__(x))


def _make_parameter(shape, dtype, name, attr, is_bias, default_initializer):
    from .. import framework_param

    make = getattr(framework_param.create_parameter, "__wrapped__", framework_param.create_parameter)
    if not _program._state.static:
        return make(shape, dtype, name=name, attr=attr, is_bias=is_bias, default_initializer=default_initializer)
    with _program._recording_paused():
        p = make(shape, dtype, name=name, attr=attr, is_bias=is_bias, default_initializer=default_initializer)
    _program._name_parameter(p)
    return p


class _Params:
    """Creates the parameters of one layer call: ``<prefix>_<k>.w_<i>`` and ``.b_<i>``."""

    def __init__(self, prefix, name=None):
        self.base = name if isinstance(name, str) and name else _unique_name(prefix)
        self.count = {"w": 0, "b": 0}

    def make(self, shape, attr, dtype, is_bias=False, default_initializer=None, trainable=None):
        attr = ParamAttr._to_attr(attr)
        if attr is False:
            return None
        kind = "b" if is_bias else "w"
        pname = attr.name or f"{self.base}.{kind}_{self.count[kind]}"
        self.count[kind] += 1
        from .misc import WeightNormParamAttr

        if isinstance(attr, WeightNormParamAttr):
            return self._weight_norm([int(s) for s in shape], attr, dtype, pname, default_initializer)
        if trainable is not None:
            attr = ParamAttr(name=attr.name, initializer=attr.initializer, learning_rate=attr.learning_rate,
                             regularizer=attr.regularizer, trainable=trainable and attr.trainable,
                             need_clip=attr.need_clip)
        return _make_parameter([int(s) for s in shape], dtype, pname, attr, is_bias, default_initializer)


    @staticmethod
    def _weight_norm(shape, attr, dtype, pname, default_initializer):
        """w = g * v / ||v|| (norm over every dim but attr.dim) from new parameters v and g."""
        dim = attr.dim
        if dim is not None and not -len(shape) <= dim < len(shape):
            raise _err("WeightNormParamAttr", f"dim {dim} is out of range for a weight of shape {shape}")
        dim = None if dim is None else dim % len(shape)
        v_attr = ParamAttr(name=f"{pname}_v", initializer=attr.initializer, learning_rate=attr.learning_rate,
                           regularizer=attr.regularizer, trainable=attr.trainable, need_clip=attr.need_clip)
        v = _make_parameter(shape, dtype, v_attr.name, v_attr, False, default_initializer)
        gshape = [1] * len(shape)
        if dim is not None:
            gshape[dim] = shape[dim]
        axes = [i for i in range(len(shape)) if i != dim]

        def norm(t):
            return (t * t).sum(axis=axes, keepdim=True).sqrt() if axes else t.abs()

        g_attr = ParamAttr(name=f"{pname}_g", learning_rate=attr.learning_rate, regularizer=attr.regularizer,
                           trainable=attr.trainable, need_clip=attr.need_clip)
        g = _make_parameter([shape[dim]] if dim is not None else [1], dtype, g_attr.name, g_attr, False,
                            init.Constant(0.0))
        from ..autograd import no_grad

        with _program._recording_paused(), no_grad():
            g.copy_(norm(v.detach()).reshape(g.shape))
        return g.reshape(gshape) * v / norm(v)


def _activate(api, x, act):
    if act is None:
        return x
    if not isinstance(act, str):
        raise _err(api, f"act must be the name of an activation (e.g. 'relu') or None, got {act!r}", TypeError)
    fn = getattr(F, act, None)
    if fn is None or not callable(fn):
        raise _err(api, f"unknown activation {act!r}: expected the name of a function of oar.nn.functional")
    return fn(x)


def _float_dtype(x):
    return x.dtype if (x.dtype.is_floating_point or x.dtype.is_complex) else _C.get_default_dtype()


def fc(x, size, num_flatten_dims=1, weight_attr=None, bias_attr=None, activation=None, name=None):
    """A fully connected layer: ``activation(flatten(x) @ W + b)``, with new parameters W and b.

    ``x`` (a Tensor or a list of Tensors, whose products are summed) is read
    as a matrix: its first ``num_flatten_dims`` dims are rows, the rest is
    one feature dim of size K; W is [K, size]. The result keeps the row dims
    and ends in ``size``. Without ``weight_attr`` W is XavierUniform and b
    zeros; ``bias_attr=False`` leaves b out.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 4], "float32")
    >>> y = oar.static.nn.fc(x, 3, weight_attr=oar.nn.initializer.Constant(0.5), activation="relu")
    >>> oar.static.Executor().run(feed={"x": np.ones((5, 4), np.float32)}, fetch_list=[y])[0].tolist()[0]
    [2.0, 2.0, 2.0]
    >>> oar.disable_static()
    """
    api = "fc"
    xs = list(x) if isinstance(x, (list, tuple)) else [x]
    if not xs:
        raise _err(api, "x must be a Tensor or a non-empty list of Tensors")
    for t in xs:
        _check_tensor(api, t, "x")
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise _err(api, f"size must be a positive int, got {size!r}")
    params = _Params("fc", name)
    out = None
    for t in xs:
        shape = _dims(t)
        if isinstance(num_flatten_dims, bool) or not isinstance(num_flatten_dims, int):
            raise _err(api, f"num_flatten_dims must be an int, got {num_flatten_dims!r}", TypeError)
        nfd = num_flatten_dims + len(shape) if num_flatten_dims < 0 else num_flatten_dims
        if not 1 <= nfd < max(len(shape), 2):
            raise _err(api, f"num_flatten_dims must be in [1, {len(shape) - 1}] for an input of rank "
                            f"{len(shape)}, got {num_flatten_dims}")
        k = math.prod(shape[nfd:])
        w = params.make([k, size], weight_attr, _float_dtype(t))
        # Flattening the feature dims keeps the row dims as they are, dynamic ones included.
        flat = t if nfd == len(shape) - 1 else t.flatten(start_axis=nfd, stop_axis=-1)
        y = _C.matmul(flat, w, False, False)
        out = y if out is None else out + y
    b = params.make([size], bias_attr, out.dtype, is_bias=True)
    if b is not None:
        out = out + b
    return _activate(api, out, activation)


# ---------------------------------------------------------------- convolutions


def _ntuple(api, v, n, what):
    if isinstance(v, int) and not isinstance(v, bool):
        return [v] * n
    if isinstance(v, (list, tuple)) and len(v) == n and all(isinstance(e, int) and not isinstance(e, bool)
                                                            for e in v):
        return list(v)
    raise _err(api, f"{what} must be an int or a list of {n} ints, got {v!r}", TypeError)


def _conv_channels(api, x, nd, data_format):
    formats = ("NCHW", "NHWC") if nd == 2 else ("NCDHW", "NDHWC")
    if data_format not in formats:
        raise _err(api, f"data_format must be one of {formats}, got {data_format!r}")
    shape = _dims(x)
    if len(shape) != nd + 2:
        raise _err(api, f"input must be {nd + 2}-D ({data_format}), got shape {shape}")
    return shape[1] if data_format[1] == "C" else shape[-1], shape


def _groups(api, groups, channels, num_filters):
    groups = 1 if groups is None else groups
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise _err(api, f"groups must be a positive int, got {groups!r}")
    if channels % groups or num_filters % groups:
        raise _err(api, f"the input channels ({channels}) and num_filters ({num_filters}) must be divisible by "
                        f"groups ({groups})")
    return groups


def _conv(api, nd, input, num_filters, filter_size, stride, padding, dilation, groups, param_attr, bias_attr,
          act, name, data_format):
    _check_tensor(api, input)
    if isinstance(num_filters, bool) or not isinstance(num_filters, int) or num_filters <= 0:
        raise _err(api, f"num_filters must be a positive int, got {num_filters!r}")
    channels, _ = _conv_channels(api, input, nd, data_format)
    groups = _groups(api, groups, channels, num_filters)
    ks = _ntuple(api, filter_size, nd, "filter_size")
    params = _Params(f"conv{nd}d", name)
    # He initialisation over the filter's fan-in, as Paddle's static conv layers.
    std = (2.0 / (math.prod(ks) * channels)) ** 0.5
    w = params.make([num_filters, channels // groups] + ks, param_attr, _float_dtype(input),
                    default_initializer=init.Normal(0.0, std))
    b = params.make([num_filters], bias_attr, _float_dtype(input), is_bias=True)
    fn = F.conv2d if nd == 2 else F.conv3d
    out = fn(input, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups, data_format=data_format)
    return _activate(api, out, act)


def _conv_transpose(api, nd, input, num_filters, output_size, filter_size, padding, stride, dilation, groups,
                    param_attr, bias_attr, act, name, data_format):
    _check_tensor(api, input)
    if isinstance(num_filters, bool) or not isinstance(num_filters, int) or num_filters <= 0:
        raise _err(api, f"num_filters must be a positive int, got {num_filters!r}")
    channels, shape = _conv_channels(api, input, nd, data_format)
    groups = _groups(api, groups, channels, num_filters)
    st = _ntuple(api, stride, nd, "stride")
    dl = _ntuple(api, dilation, nd, "dilation")
    if filter_size is None:
        if output_size is None:
            raise _err(api, "give filter_size or output_size")
        if isinstance(padding, str):
            raise _err(api, "filter_size must be given when padding is a string")
        out = _ntuple(api, output_size, nd, "output_size")
        pad = _ntuple(api, padding, nd, "padding")
        spatial = shape[2:] if data_format[1] == "C" else shape[1:-1]
        # The filter that maps the input size to output_size (Paddle's rule).
        filter_size = [(o - (i - 1) * s + 2 * p - 1) // d + 1 for o, i, s, p, d in zip(out, spatial, st, pad, dl)]
        if any(k <= 0 for k in filter_size):
            raise _err(api, f"output_size {out} is too small for the input size {spatial}")
    ks = _ntuple(api, filter_size, nd, "filter_size")
    params = _Params(f"conv{nd}d_transpose", name)
    std = (2.0 / (math.prod(ks) * channels)) ** 0.5
    w = params.make([channels, num_filters // groups] + ks, param_attr, _float_dtype(input),
                    default_initializer=init.Normal(0.0, std))
    b = params.make([num_filters], bias_attr, _float_dtype(input), is_bias=True)
    fn = F.conv2d_transpose if nd == 2 else F.conv3d_transpose
    out = fn(input, w, b, stride=st, padding=padding, dilation=dl, groups=groups, output_size=output_size,
             data_format=data_format)
    return _activate(api, out, act)


def conv2d(input, num_filters, filter_size, stride=1, padding=0, dilation=1, groups=None, param_attr=None,
           bias_attr=None, use_cudnn=True, act=None, name=None, data_format="NCHW"):
    """A 2-D convolution layer with a new filter [num_filters, C/groups, kh, kw] and bias [num_filters].

    The filter starts as Normal(0, sqrt(2 / (kh * kw * C))) unless ``param_attr``
    says otherwise. ``use_cudnn`` is accepted for Paddle compatibility.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> img = oar.static.data("img", [None, 3, 8, 8], "float32")
    >>> y = oar.static.nn.conv2d(img, 6, 3, groups=3)
    >>> oar.static.Executor().run(feed={"img": np.ones((1, 3, 8, 8), np.float32)}, fetch_list=[y])[0].shape
    (1, 6, 6, 6)
    >>> oar.disable_static()
    """
    return _conv("conv2d", 2, input, num_filters, filter_size, stride, padding, dilation, groups, param_attr,
                 bias_attr, act, name, data_format)


def conv3d(input, num_filters, filter_size, stride=1, padding=0, dilation=1, groups=None, param_attr=None,
           bias_attr=None, use_cudnn=True, act=None, name=None, data_format="NCDHW"):
    """A 3-D convolution layer with a new filter [num_filters, C/groups, kd, kh, kw] and bias [num_filters].

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> v = oar.static.data("v", [None, 2, 4, 4, 4], "float32")
    >>> y = oar.static.nn.conv3d(v, 4, 3)
    >>> oar.static.Executor().run(feed={"v": np.ones((1, 2, 4, 4, 4), np.float32)}, fetch_list=[y])[0].shape
    (1, 4, 2, 2, 2)
    >>> oar.disable_static()
    """
    return _conv("conv3d", 3, input, num_filters, filter_size, stride, padding, dilation, groups, param_attr,
                 bias_attr, act, name, data_format)


def conv2d_transpose(input, num_filters, output_size=None, filter_size=None, padding=0, stride=1, dilation=1,
                     groups=None, param_attr=None, bias_attr=None, use_cudnn=True, act=None, name=None,
                     data_format="NCHW"):
    """A 2-D transposed convolution layer with a new filter [C, num_filters/groups, kh, kw] and bias.

    Without ``filter_size`` the filter is sized so that the output has
    ``output_size``.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> img = oar.static.data("img", [None, 3, 8, 8], "float32")
    >>> y = oar.static.nn.conv2d_transpose(img, 4, filter_size=3)
    >>> oar.static.Executor().run(feed={"img": np.ones((1, 3, 8, 8), np.float32)}, fetch_list=[y])[0].shape
    (1, 4, 10, 10)
    >>> oar.disable_static()
    """
    return _conv_transpose("conv2d_transpose", 2, input, num_filters, output_size, filter_size, padding, stride,
                           dilation, groups, param_attr, bias_attr, act, name, data_format)


def conv3d_transpose(input, num_filters, output_size=None, filter_size=None, padding=0, stride=1, dilation=1,
                     groups=None, param_attr=None, bias_attr=None, use_cudnn=True, act=None, name=None,
                     data_format="NCDHW"):
    """A 3-D transposed convolution layer with a new filter [C, num_filters/groups, kd, kh, kw] and bias.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> v = oar.static.data("v", [None, 2, 4, 4, 4], "float32")
    >>> y = oar.static.nn.conv3d_transpose(v, 4, filter_size=3)
    >>> oar.static.Executor().run(feed={"v": np.ones((1, 2, 4, 4, 4), np.float32)}, fetch_list=[y])[0].shape
    (1, 4, 6, 6, 6)
    >>> oar.disable_static()
    """
    return _conv_transpose("conv3d_transpose", 3, input, num_filters, output_size, filter_size, padding, stride,
                           dilation, groups, param_attr, bias_attr, act, name, data_format)


def deform_conv2d(x, offset, mask, num_filters, filter_size, stride=1, padding=0, dilation=1, groups=1,
                  deformable_groups=1, im2col_step=1, weight_attr=None, bias_attr=None, name=None):
    """A deformable 2-D convolution layer (v2 with ``mask``, v1 when ``mask`` is None) with a new
    filter [num_filters, C/groups, kh, kw] and bias [num_filters]; see ``oar.vision.ops.deform_conv2d``.

    ``offset`` is [N, 2 * deformable_groups * kh * kw, H_out, W_out] and
    ``mask`` [N, deformable_groups * kh * kw, H_out, W_out]. ``im2col_step``
    is accepted for Paddle compatibility. The batch size must be declared:
    ``oar.vision.ops.deform_conv2d`` records it into the program.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [1, 1, 3, 3], "float32")
    >>> off = oar.static.data("off", [1, 8, 2, 2], "float32")
    >>> y = oar.static.nn.deform_conv2d(x, off, None, 1, 2, weight_attr=oar.nn.initializer.Constant(1.0))
    >>> feed = {"x": np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3), "off": np.zeros((1, 8, 2, 2), np.float32)}
    >>> oar.static.Executor().run(feed=feed, fetch_list=[y])[0].reshape(-1).tolist()
    [8.0, 12.0, 20.0, 24.0]
    >>> oar.disable_static()
    """
    from ..vision import ops

    api = "deform_conv2d"
    _check_tensor(api, x, "x")
    _check_tensor(api, offset, "offset")
    if mask is not None:
        _check_tensor(api, mask, "mask")
    if isinstance(num_filters, bool) or not isinstance(num_filters, int) or num_filters <= 0:
        raise _err(api, f"num_filters must be a positive int, got {num_filters!r}")
    channels, _ = _conv_channels(api, x, 2, "NCHW")
    groups = _groups(api, groups, channels, num_filters)
    ks = _ntuple(api, filter_size, 2, "filter_size")
    params = _Params("deformable_conv", name)
    std = (2.0 / (math.prod(ks) * channels)) ** 0.5
    w = params.make([num_filters, channels // groups] + ks, weight_attr, _float_dtype(x),
                    default_initializer=init.Normal(0.0, std))
    b = params.make([num_filters], bias_attr, _float_dtype(x), is_bias=True)
    return ops.deform_conv2d(x, offset, w, b, stride=stride, padding=padding, dilation=dilation,
                             deformable_groups=deformable_groups, groups=groups, mask=mask)


# ---------------------------------------------------------------- normalisation


def _channel_axis(api, x, data_layout):
    shape = _dims(x)
    if len(shape) < 2:
        raise _err(api, f"input must have at least 2 dims, got shape {shape}")
    if data_layout not in ("NCHW", "NHWC", "NCL", "NLC", "NC", "NCDHW", "NDHWC"):
        raise _err(api, f"data_layout must be NCHW or NHWC (or their 1-D/3-D forms), got {data_layout!r}")
    return (shape[1], 1) if data_layout[1] == "C" else (shape[-1], len(shape) - 1)


def batch_norm(input, act=None, is_test=False, momentum=0.9, epsilon=1e-05, param_attr=None, bias_attr=None,
               data_layout="NCHW", in_place=False, name=None, moving_mean_name=None, moving_variance_name=None,
               do_model_average_for_mean_and_var=True, use_global_stats=False):
    """Batch normalisation with a new scale (ones), bias (zeros) and running mean/variance.

    Training programs (``is_test=False``) normalise with the batch's
    statistics and each run updates the running ones:
    ``running = momentum * running + (1 - momentum) * batch``. ``is_test``
    or ``use_global_stats`` normalise with the running statistics.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.nn.batch_norm(x)
    >>> out = oar.static.Executor().run(feed={"x": np.array([[1, 2], [3, 6]], np.float32)}, fetch_list=[y])[0]
    >>> np.round(out, 3).tolist()
    [[-1.0, -1.0], [1.0, 1.0]]
    >>> oar.disable_static()
    """
    api = "batch_norm"
    _check_tensor(api, input)
    c, _ = _channel_axis(api, input, data_layout)
    dt = _float_dtype(input)
    params = _Params("batch_norm", name)
    scale = params.make([c], param_attr, dt, default_initializer=init.Constant(1.0))
    bias = params.make([c], bias_attr, dt, is_bias=True)
    mean = params.make([c], ParamAttr(name=moving_mean_name, initializer=init.Constant(0.0)), dt, trainable=False)
    var = params.make([c], ParamAttr(name=moving_variance_name, initializer=init.Constant(1.0)), dt, trainable=False)
    for t in (mean, var):
        t.stop_gradient = True
    if _program._state.static:
        _program._keep_pristine([mean, var])
    fmt = {"NCHW": "NCHW", "NHWC": "NHWC"}.get(data_layout, data_layout)
    if len(_dims(input)) == 2:
        fmt = "NC"
    elif len(_dims(input)) == 3:
        fmt = "NCL" if data_layout[1] == "C" else "NLC"
    elif len(_dims(input)) == 5:
        fmt = "NCDHW" if data_layout[1] == "C" else "NDHWC"
    out = F.batch_norm(input, mean, var, scale, bias, training=not is_test, momentum=momentum, epsilon=epsilon,
                       data_format=fmt, use_global_stats=bool(use_global_stats) or None)
    return _activate(api, out, act)


def layer_norm(input, scale=True, shift=True, begin_norm_axis=1, epsilon=1e-05, param_attr=None, bias_attr=None,
               act=None, name=None):
    """Layer normalisation over the dims from ``begin_norm_axis`` on, with a new flat scale and bias.

    The scale (ones) and bias (zeros) have ``prod(shape[begin_norm_axis:])``
    elements, as in Paddle; ``scale=False``/``shift=False`` leave them out.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.nn.layer_norm(x)
    >>> oar.static.Executor().run(feed={"x": np.array([[1, 3]], np.float32)}, fetch_list=[y])[0].round(3).tolist()
    [[-1.0, 1.0]]
    >>> oar.disable_static()
    """
    api = "layer_norm"
    _check_tensor(api, input)
    shape = _dims(input)
    if isinstance(begin_norm_axis, bool) or not isinstance(begin_norm_axis, int) \
            or not 1 <= begin_norm_axis < len(shape):
        raise _err(api, f"begin_norm_axis must be an int in [1, {len(shape) - 1}], got {begin_norm_axis!r}")
    norm_shape = shape[begin_norm_axis:]
    n = math.prod(norm_shape)
    dt = _float_dtype(input)
    params = _Params("layer_norm", name)
    w = params.make([n], param_attr, dt, default_initializer=init.Constant(1.0)) if scale else None
    b = params.make([n], bias_attr, dt, is_bias=True) if shift else None
    out = F.layer_norm(input, norm_shape, None if w is None else w.reshape(norm_shape),
                       None if b is None else b.reshape(norm_shape), epsilon)
    return _activate(api, out, act)


def group_norm(input, groups, epsilon=1e-05, param_attr=None, bias_attr=None, act=None, data_layout="NCHW",
               name=None):
    """Group normalisation: channels split into ``groups``, each normalised; new scale and bias [C].

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 4, 1, 1], "float32")
    >>> y = oar.static.nn.group_norm(x, 2)
    >>> feed = {"x": np.array([1, 3, 5, 9], np.float32).reshape(1, 4, 1, 1)}
    >>> oar.static.Executor().run(feed=feed, fetch_list=[y])[0].reshape(-1).round(3).tolist()
    [-1.0, 1.0, -1.0, 1.0]
    >>> oar.disable_static()
    """
    api = "group_norm"
    _check_tensor(api, input)
    if data_layout not in ("NCHW", "NHWC"):
        raise _err(api, f"data_layout must be NCHW or NHWC, got {data_layout!r}")
    c, _ = _channel_axis(api, input, data_layout)
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0 or c % groups:
        raise _err(api, f"groups must be a positive int dividing the channels ({c}), got {groups!r}")
    dt = _float_dtype(input)
    params = _Params("group_norm", name)
    w = params.make([c], param_attr, dt, default_initializer=init.Constant(1.0))
    b = params.make([c], bias_attr, dt, is_bias=True)
    out = _grouped_norm(input, groups, epsilon, w, b, data_layout != "NCHW")
    return _activate(api, out, act)


def _grouped_norm(input, groups, epsilon, w, b, channels_last):
    """Normalises each group of channels of each sample; scale w and shift b per channel."""
    shape = _dims(input)
    x = _C.transpose(input, [0, len(shape) - 1] + list(range(1, len(shape) - 1))) if channels_last else input
    inner = _dims(x)[1:]
    # The batch dim is left as -1 so that it stays dynamic.
    g = x.reshape([-1, groups, math.prod(inner) // groups])
    mean = g.mean(axis=-1, keepdim=True)
    centred = g - mean
    var = (centred * centred).mean(axis=-1, keepdim=True)
    out = (centred / (var + epsilon).sqrt()).reshape([-1] + inner)
    bshape = [1, inner[0]] + [1] * (len(inner) - 1)
    if w is not None:
        out = out * w.reshape(bshape)
    if b is not None:
        out = out + b.reshape(bshape)
    if channels_last:
        out = _C.transpose(out, [0] + list(range(2, len(shape))) + [1])
    return out


def instance_norm(input, epsilon=1e-05, param_attr=None, bias_attr=None, name=None):
    """Instance normalisation (each sample and channel over its spatial dims); new scale and bias [C].

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 1, 2, 1], "float32")
    >>> y = oar.static.nn.instance_norm(x)
    >>> feed = {"x": np.array([1, 3], np.float32).reshape(1, 1, 2, 1)}
    >>> oar.static.Executor().run(feed=feed, fetch_list=[y])[0].reshape(-1).round(3).tolist()
    [-1.0, 1.0]
    >>> oar.disable_static()
    """
    api = "instance_norm"
    _check_tensor(api, input)
    shape = _dims(input)
    if len(shape) < 3:
        raise _err(api, f"input must have at least 3 dims [N, C, ...], got shape {shape}")
    dt = _float_dtype(input)
    params = _Params("instance_norm", name)
    w = params.make([shape[1]], param_attr, dt, default_initializer=init.Constant(1.0))
    b = params.make([shape[1]], bias_attr, dt, is_bias=True)
    return _grouped_norm(input, shape[1], epsilon, w, b, False)


# ---------------------------------------------------------------- embeddings


def embedding(input, size, is_sparse=False, is_distributed=False, padding_idx=None, param_attr=None,
              dtype="float32"):
    """Looks up rows of a new table of shape ``size`` ([vocabulary, dim]); the result is input.shape + [dim].

    Rows at ``padding_idx`` (negative counts from the end) read as zeros
    and get no gradient. ``is_sparse``/``is_distributed`` are accepted for
    Paddle compatibility: gradients are dense.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> ids = oar.static.data("ids", [None, 1], "int64")
    >>> e = oar.static.nn.embedding(ids, [10, 4], param_attr=oar.nn.initializer.Constant(1.0))
    >>> oar.static.Executor().run(feed={"ids": np.array([[3], [5]])}, fetch_list=[e])[0].shape
    (2, 1, 4)
    >>> oar.disable_static()
    """
    return _embedding("embedding", input, size, padding_idx, param_attr, dtype)


def sparse_embedding(input, size, padding_idx=None, is_test=False, entry=None, table_class="MemorySparseTable",
                     param_attr=None, dtype="float32", slot=None):
    """``embedding`` for parameter-server tables in Paddle; in oar the table is an ordinary parameter.

    ``entry``, ``table_class`` and ``slot`` configure Paddle's parameter
    server and are accepted without effect.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> ids = oar.static.data("ids", [None, 1], "int64")
    >>> e = oar.static.nn.sparse_embedding(ids, [10, 2], param_attr=oar.nn.initializer.Constant(0.5))
    >>> oar.static.Executor().run(feed={"ids": np.array([[1]])}, fetch_list=[e])[0].tolist()
    [[[0.5, 0.5]]]
    >>> oar.disable_static()
    """
    return _embedding("sparse_embedding", input, size, padding_idx, param_attr, dtype)


def _embedding(api, input, size, padding_idx, param_attr, dtype):
    _check_tensor(api, input)
    if not (isinstance(size, (list, tuple)) and len(size) == 2 and all(isinstance(s, int) and s > 0 for s in size)):
        raise _err(api, f"size must be [vocabulary size, embedding dim] (two positive ints), got {size!r}")
    if padding_idx is not None:
        if not isinstance(padding_idx, int) or not -size[0] <= padding_idx < size[0]:
            raise _err(api, f"padding_idx must be an int in [{-size[0]}, {size[0]}), got {padding_idx!r}")
        padding_idx = padding_idx % size[0]
    params = _Params("embedding")
    w = params.make(list(size), param_attr, dtype)
    return F.embedding(input, w, padding_idx=padding_idx)


# ---------------------------------------------------------------- other layers with parameters


def prelu(x, mode, param_attr=None, data_format="NCHW", name=None):
    """Parametric ReLU ``max(x, 0) + alpha * min(x, 0)`` with a new alpha (0.25).

    ``mode`` picks alpha's shape: ``"all"`` one value, ``"channel"`` one per
    channel, ``"element"`` one per element of a sample.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.nn.prelu(x, "all")
    >>> oar.static.Executor().run(feed={"x": np.array([[-4, 2]], np.float32)}, fetch_list=[y])[0].tolist()
    [[-1.0, 2.0]]
    >>> oar.disable_static()
    """
    api = "prelu"
    _check_tensor(api, x, "x")
    if data_format not in ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"):
        raise _err(api, f"data_format must be one of NC, NCL, NCHW, NCDHW, NLC, NHWC, NDHWC, got {data_format!r}")
    shape = _dims(x)
    if mode == "all":
        alpha_shape = [1]
    elif mode == "channel":
        if len(shape) < 2:
            raise _err(api, f"mode 'channel' needs an input with a channel dim, got shape {shape}")
        last = data_format[1] != "C"
        alpha_shape = [1] * len(shape)
        alpha_shape[-1 if last else 1] = shape[-1 if last else 1]
    elif mode == "element":
        if len(shape) < 1:
            raise _err(api, "mode 'element' needs an input with a batch dim")
        alpha_shape = [1] + shape[1:]
    else:
        raise _err(api, f"mode must be 'all', 'channel' or 'element', got {mode!r}")
    params = _Params("prelu", name)
    alpha = params.make(alpha_shape, param_attr, _float_dtype(x), default_initializer=init.Constant(0.25))
    return F.relu(x) - alpha * F.relu(-x)


def bilinear_tensor_product(x, y, size, act=None, name=None, param_attr=None, bias_attr=None):
    """``out[:, i] = x @ W[i] @ y^T + b[i]`` with new W [size, M, N] and b [1, size].

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.data("y", [None, 3], "float32")
    >>> out = oar.static.nn.bilinear_tensor_product(x, y, 4, param_attr=oar.nn.initializer.Constant(1.0))
    >>> feed = {"x": np.ones((1, 2), np.float32), "y": np.ones((1, 3), np.float32)}
    >>> oar.static.Executor().run(feed=feed, fetch_list=[out])[0].tolist()
    [[6.0, 6.0, 6.0, 6.0]]
    >>> oar.disable_static()
    """
    api = "bilinear_tensor_product"
    _check_tensor(api, x, "x")
    _check_tensor(api, y, "y")
    sx, sy = _dims(x), _dims(y)
    if len(sx) != 2 or len(sy) != 2:
        raise _err(api, f"x and y must be 2-D [batch, features], got shapes {sx} and {sy}")
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise _err(api, f"size must be a positive int, got {size!r}")
    params = _Params("bilinear_tensor_product", name)
    dt = _float_dtype(x)
    w = params.make([size, sx[1], sy[1]], param_attr, dt)
    b = params.make([1, size], bias_attr, dt, is_bias=True)
    # x W_i y^T for every i at once, with the batch dim left as -1 so it stays dynamic.
    xw = _C.matmul(x, _C.transpose(w, [1, 0, 2]).reshape([sx[1], size * sy[1]]), False, False)
    out = (xw.reshape([-1, size, sy[1]]) * y.unsqueeze(1)).sum(axis=-1)
    if b is not None:
        out = out + b
    return _activate(api, out, act)


def spectral_norm(weight, dim=0, power_iters=1, eps=1e-12, name=None):
    """``weight / sigma``, sigma its largest singular value estimated by power iteration.

    ``weight`` is read as a matrix [shape[dim], rest]; the vectors u
    ([shape[dim]]) and v ([rest]) start as new Normal(0, 1) parameters
    (not trained) and each run refines them ``power_iters`` times; the
    gradient treats them as constants, as Paddle's does.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> w = oar.static.data("w", [2, 2], "float32")
    >>> out = oar.static.nn.spectral_norm(w, power_iters=20)
    >>> feed = {"w": np.array([[3, 0], [0, 1]], np.float32)}
    >>> oar.static.Executor().run(feed=feed, fetch_list=[out])[0].astype("float64").round(4).tolist()
    [[1.0, 0.0], [0.0, 0.3333]]
    >>> oar.disable_static()
    """
    api = "spectral_norm"
    _check_tensor(api, weight, "weight")
    shape = _dims(weight)
    if len(shape) < 2:
        raise _err(api, f"weight must have at least 2 dims, got shape {shape}")
    if isinstance(dim, bool) or not isinstance(dim, int) or not -len(shape) <= dim < len(shape):
        raise _err(api, f"dim must be an int in [{-len(shape)}, {len(shape)}), got {dim!r}")
    if isinstance(power_iters, bool) or not isinstance(power_iters, int) or power_iters < 0:
        raise _err(api, f"power_iters must be an int >= 0, got {power_iters!r}")
    dim %= len(shape)
    h = shape[dim]
    wd = math.prod(shape) // h
    params = _Params("spectral_norm", name)
    dt = _float_dtype(weight)
    u = params.make([h], None, dt, default_initializer=init.Normal(0.0, 1.0), trainable=False)
    v = params.make([wd], None, dt, default_initializer=init.Normal(0.0, 1.0), trainable=False)
    perm = [dim] + [i for i in range(len(shape)) if i != dim]
    mat = _C.transpose(weight, perm).reshape([h, wd])
    fixed = mat.detach()
    uu, vv = u, v  # not trained: they get no gradient
    for _ in range(power_iters):
        vv = _C.matmul(fixed, uu.reshape([h, 1]), True, False).reshape([wd])
        vv = vv / ((vv * vv).sum().sqrt() + eps)
        uu = _C.matmul(fixed, vv.reshape([wd, 1]), False, False).reshape([h])
        uu = uu / ((uu * uu).sum().sqrt() + eps)
    sigma = (uu.reshape([1, h]).matmul(mat).matmul(vv.reshape([wd, 1]))).reshape([])
    return weight / sigma


def row_conv(input, future_context_size, param_attr=None, act=None):
    """Lookahead convolution over time: ``out[b, t] = sum_j W[j] * input[b, t + j]`` for j in 0..k.

    ``input`` is [batch, time, dim] (padded sequences; LoD tensors do not
    exist in oar); steps past the end read zeros. The new filter W is
    [future_context_size + 1, dim].

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 3, 1], "float32")
    >>> y = oar.static.nn.row_conv(x, 1, param_attr=oar.nn.initializer.Constant(1.0))
    >>> feed = {"x": np.array([1, 2, 3], np.float32).reshape(1, 3, 1)}
    >>> oar.static.Executor().run(feed=feed, fetch_list=[y])[0].reshape(-1).tolist()
    [3.0, 5.0, 3.0]
    >>> oar.disable_static()
    """
    api = "row_conv"
    _check_tensor(api, input)
    shape = _dims(input)
    if len(shape) != 3:
        raise _err(api, f"input must be 3-D [batch, time, dim], got shape {shape}")
    k = future_context_size
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise _err(api, f"future_context_size must be an int >= 0, got {k!r}")
    params = _Params("row_conv")
    w = params.make([k + 1, shape[2]], param_attr, _float_dtype(input))
    t = shape[1]
    from .. import concat, zeros_like

    # Zeros past the end, built from the input so that the batch dim stays dynamic.
    padded = concat([input] + [zeros_like(input[:, :1])] * k, 1) if k else input
    out = None
    for j in range(k + 1):
        term = padded[:, j:j + t, :] * w[j]
        out = term if out is None else out + term
    return _activate(api, out, act)


def nce(input, label, num_total_classes, sample_weight=None, param_attr=None, bias_attr=None, num_neg_samples=None,
        name=None, sampler="uniform", custom_dist=None, seed=0, is_sparse=False):
    """Noise-contrastive estimation loss, one value per sample ([batch, 1]).

    For each true class c of a sample and each of ``num_neg_samples``
    (default 10) classes drawn from ``sampler`` ("uniform",
    "log_uniform" or "custom_dist" with probabilities ``custom_dist``), with
    ``o = sigmoid(x . W[c] + b[c])`` and ``q = k * P(c)``, the loss adds
    ``-log(o / (o + q))`` for true classes and ``-log(q / (o + q))`` for
    drawn ones, as Paddle's nce. New W [num_total_classes, dim] and b
    [num_total_classes, 1]. Each run draws new negatives; unlike Paddle,
    the rows of a batch share them.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 4], "float32")
    >>> label = oar.static.data("label", [None, 1], "int64")
    >>> cost = oar.static.nn.nce(x, label, 10, num_neg_samples=3)
    >>> feed = {"x": np.ones((2, 4), np.float32), "label": np.array([[1], [2]])}
    >>> oar.static.Executor().run(feed=feed, fetch_list=[cost])[0].shape
    (2, 1)
    >>> oar.disable_static()
    """
    api = "nce"
    _check_tensor(api, input)
    _check_tensor(api, label, "label")
    sx, sl = _dims(input), _dims(label)
    if len(sx) != 2 or len(sl) != 2:
        raise _err(api, f"input must be [batch, dim] and label [batch, num_true], got shapes {sx} and {sl}")
    n = num_total_classes
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise _err(api, f"num_total_classes must be a positive int, got {n!r}")
    k = 10 if num_neg_samples is None else num_neg_samples
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise _err(api, f"num_neg_samples must be a positive int, got {k!r}")
    from .. import creation

    if sampler == "uniform":
        probs = [1.0 / n] * n
    elif sampler == "log_uniform":
        probs = [math.log((c + 2.0) / (c + 1.0)) / math.log(n + 1.0) for c in range(n)]
    elif sampler == "custom_dist":
        if custom_dist is None or len(custom_dist) != n:
            raise _err(api, f"sampler 'custom_dist' needs custom_dist with {n} probabilities, got "
                            f"{None if custom_dist is None else len(custom_dist)}")
        probs = [float(p) for p in custom_dist]
    else:
        raise _err(api, f"sampler must be 'uniform', 'log_uniform' or 'custom_dist', got {sampler!r}")
    dt = _float_dtype(input)
    params = _Params("nce", name)
    w = params.make([n, sx[1]], param_attr, dt)
    b = params.make([n, 1], bias_attr, dt, is_bias=True)
    if _program._state.static:
        with _program._recording_paused():
            prob = creation.to_tensor(probs, dtype=dt)
            cdf = creation.to_tensor([sum(probs[:i + 1]) for i in range(n)], dtype=dt)
    else:
        prob = creation.to_tensor(probs, dtype=dt)
        cdf = creation.to_tensor([sum(probs[:i + 1]) for i in range(n)], dtype=dt)
    # Negatives by inverse CDF of uniform draws; [batch, k] follows a dynamic batch dim.
    from .. import concat, rand, zeros_like

    # k negatives by inverse CDF of uniform draws, drawn by each run and
    # shared by the batch's rows (a broadcast keeps the batch dim dynamic).
    neg = _search(cdf, rand([k], dtype=dt) * cdf[n - 1]).clip(max=n - 1)
    rows = zeros_like(label[:, :1]).astype("int64")
    classes = concat([label.astype("int64"), rows + neg.unsqueeze(0)], 1)   # [batch, num_true + k]
    logits = (input.unsqueeze(1) * F.embedding(classes, w)).sum(axis=-1) + F.embedding(classes, b).squeeze(-1)
    o = F.sigmoid(logits)
    q = F.embedding(classes, prob.unsqueeze(-1)).squeeze(-1) * float(k)
    num_true = sl[1]
    true_cost = -(o[:, :num_true] / (o[:, :num_true] + q[:, :num_true])).log()
    neg_cost = -(q[:, num_true:] / (o[:, num_true:] + q[:, num_true:])).log()
    cost = true_cost.sum(axis=1, keepdim=True) + neg_cost.sum(axis=1, keepdim=True)
    if sample_weight is not None:
        _check_tensor(api, sample_weight, "sample_weight")
        cost = cost * sample_weight.reshape([-1, 1])
    return cost


def _search(cdf, values):
    from .. import searchsorted

    return searchsorted(cdf, values, right=True)


def static_pylayer(forward_fn, inputs, backward_fn=None, name=None):
    """Returns ``forward_fn(*inputs)``, whose gradient is ``backward_fn`` instead of the forward's own.

    ``backward_fn`` takes one gradient per tensor output of ``forward_fn``
    (in the order of its flattened outputs) and returns one gradient (or
    None) per input. Without it the inputs get no gradient from the
    outputs. Built on ``oar.autograd.PyLayer`` (Note [PyLayer in programs]).

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> x.stop_gradient = False
    >>> y = oar.static.nn.static_pylayer(lambda t: oar.exp(t), [x], lambda dy: 2 * oar.exp(dy))
    >>> (g,) = oar.static.gradients([y], [x])
    >>> out, grad = oar.static.Executor().run(feed={"x": np.zeros((1, 2), np.float32)}, fetch_list=[y, g])
    >>> out.tolist(), [round(v, 4) for v in grad[0].tolist()]
    ([[1.0, 1.0]], [5.4366, 5.4366])
    >>> oar.disable_static()
    """
    from ..autograd import PyLayer
    from .nn import _flatten, _rebuild

    api = "static_pylayer"
    if not callable(forward_fn):
        raise _err(api, f"forward_fn must be callable, got {type(forward_fn).__name__}", TypeError)
    if backward_fn is not None and not callable(backward_fn):
        raise _err(api, f"backward_fn must be callable or None, got {type(backward_fn).__name__}", TypeError)
    if not isinstance(inputs, (list, tuple)) or not all(isinstance(t, Tensor) for t in inputs):
        raise _err(api, f"inputs must be a list of Tensors, got {inputs!r}"[:200], TypeError)
    layout = []

    def forward(ctx, *xs):
        leaves = []
        layout.append(_flatten(forward_fn(*xs), leaves))
        return tuple(leaves)

    def backward(ctx, *grads):
        if backward_fn is None:
            return tuple(None for _ in inputs)
        got = backward_fn(*grads)
        got = list(got) if isinstance(got, (list, tuple)) else [got]
        if len(got) != len(inputs):
            raise _err(api, f"backward_fn returned {len(got)} gradient(s) for {len(inputs)} input(s)")
        return tuple(got)

    cls = type(name if isinstance(name, str) and name.isidentifier() else "static_pylayer", (PyLayer,),
               {"forward": staticmethod(forward), "backward": staticmethod(backward)})
    outs = cls.apply(*inputs)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return _rebuild(layout[-1], outs)
