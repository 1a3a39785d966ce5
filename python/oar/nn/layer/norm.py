"""Normalisation layers with Paddle signatures and state_dict names: BatchNorm
keeps `weight`, `bias` and the running statistics `_mean` / `_variance`,
InstanceNorm its affine as `scale` and `bias`.

As in Paddle, the running statistics are parameters that are not trainable
(stop_gradient=True, trainable=False): they count in `parameters()` and come
after weight and bias in `state_dict()`, and optimizers skip them.
"""
import numbers

import numpy as np

from ... import _C
from ...autograd import no_grad
from ...framework_param import ParamAttr
from .. import functional as F
from .. import initializer as init
from .layers import Layer

__all__ = [
    "BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D", "LayerNorm", "GroupNorm",
    "InstanceNorm1D", "InstanceNorm2D", "InstanceNorm3D", "RMSNorm", "LocalResponseNorm", "SyncBatchNorm",
    "SpectralNorm",
]


class _BatchNormBase(Layer):
    _ranks = (2, 3, 4, 5)
    _formats = ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCHW", use_global_stats=None, name=None, moving_mean_name=None,
                 moving_variance_name=None):
        super().__init__()
        api = f"oar.nn.{type(self).__name__}"
        if data_format not in self._formats:
            raise ValueError(f"[{api}] data_format must be one of {self._formats}, got {data_format!r}")
        self._num_features, self._momentum, self._epsilon = num_features, momentum, epsilon
        self._data_format, self._use_global_stats = data_format, use_global_stats
        self.weight = self.create_parameter([num_features], attr=weight_attr,
                                            default_initializer=init.Constant(1.0))
        self.bias = self.create_parameter([num_features], attr=bias_attr, is_bias=True)
        self._mean = self._running_stat(num_features, moving_mean_name, 0.0)
        self._variance = self._running_stat(num_features, moving_variance_name, 1.0)

    def _running_stat(self, num_features, name, value):
        attr = ParamAttr(name=name, initializer=init.Constant(value), trainable=False)
        return self.create_parameter([num_features], attr=attr)

    def forward(self, x):
        api = f"oar.nn.{type(self).__name__}"
        if x.ndim not in self._ranks:
            raise ValueError(f"[{api}] expects an input of rank {' or '.join(map(str, self._ranks))}, "
                             f"got shape {list(x.shape)}")
        fmt = self._data_format
        if fmt in ("NC", "NCL", "NCHW", "NCDHW"):
            fmt = "NCHW"  # the channel axis is all that matters
        elif fmt in ("NLC", "NHWC", "NDHWC"):
            fmt = "NHWC"
        return F.batch_norm(x, self._mean, self._variance, self.weight, self.bias, training=self.training,
                            momentum=self._momentum, epsilon=self._epsilon, data_format=fmt,
                            use_global_stats=self._use_global_stats)

    def extra_repr(self):
        return f"num_features={self._num_features}, momentum={self._momentum}, epsilon={self._epsilon}, " \
               f"data_format={self._data_format}"


class BatchNorm1D(_BatchNormBase):
    """Batch normalisation of [N, C] or [N, C, L] inputs.

    >>> import oar
    >>> bn = oar.nn.BatchNorm1D(3)
    >>> bn(oar.rand([4, 3])).shape, list(bn.state_dict().keys())
    ([4, 3], ['weight', 'bias', '_mean', '_variance'])
    >>> [p.stop_gradient for p in bn.parameters()]
    [False, False, True, True]
    """
    _ranks = (2, 3)

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCL", use_global_stats=None, name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, use_global_stats)


class BatchNorm2D(_BatchNormBase):
    """Batch normalisation of [N, C, H, W] (or NHWC) inputs.

    >>> import oar
    >>> bn = oar.nn.BatchNorm2D(2)
    >>> _ = bn(oar.ones([2, 2, 3, 3]))
    >>> [round(v, 3) for v in bn._mean.numpy().tolist()]
    [0.1, 0.1]
    """
    _ranks = (4,)


class BatchNorm3D(_BatchNormBase):
    """Batch normalisation of [N, C, D, H, W] (or NDHWC) inputs.

    >>> import oar
    >>> oar.nn.BatchNorm3D(2)(oar.rand([2, 2, 2, 2, 2])).shape
    [2, 2, 2, 2, 2]
    """
    _ranks = (5,)

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCDHW", use_global_stats=None, name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, use_global_stats)


class BatchNorm(_BatchNormBase):
    """Paddle's rank-agnostic BatchNorm(num_channels, act=None, is_test=False, ...).

    >>> import oar
    >>> oar.nn.BatchNorm(3, act="relu")(oar.rand([2, 3, 4])).shape
    [2, 3, 4]
    """

    def __init__(self, num_channels, act=None, is_test=False, momentum=0.9, epsilon=1e-05, param_attr=None,
                 bias_attr=None, dtype="float32", data_layout="NCHW", in_place=False, moving_mean_name=None,
                 moving_variance_name=None, do_model_average_for_mean_and_var=True, use_global_stats=False,
                 trainable_statistics=False):
        super().__init__(num_channels, momentum, epsilon, param_attr, bias_attr, data_layout,
                         True if use_global_stats else None, moving_mean_name=moving_mean_name,
                         moving_variance_name=moving_variance_name)
        self._act = act
        self._is_test = is_test

    def forward(self, x):
        if self._is_test:
            self.training = False
        y = super().forward(x)
        return getattr(F, self._act)(y) if self._act else y


class LayerNorm(Layer):
    """Layer normalisation over the trailing dims normalized_shape.

    >>> import oar
    >>> ln = oar.nn.LayerNorm(4)
    >>> ln(oar.rand([2, 4])).shape, ln.weight.numpy().tolist()
    ([2, 4], [1.0, 1.0, 1.0, 1.0])
    """

    def __init__(self, normalized_shape, epsilon=1e-05, weight_attr=None, bias_attr=None, name=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = [normalized_shape]
        self._normalized_shape = [int(v) for v in normalized_shape]
        self._epsilon = epsilon
        self.weight = self.create_parameter(self._normalized_shape, attr=weight_attr,
                                            default_initializer=init.Constant(1.0))
        self.bias = self.create_parameter(self._normalized_shape, attr=bias_attr, is_bias=True)

    def forward(self, x):
        return F.layer_norm(x, self._normalized_shape, self.weight, self.bias, self._epsilon)

    def extra_repr(self):
        return f"normalized_shape={self._normalized_shape}, epsilon={self._epsilon}"


class GroupNorm(Layer):
    """Group normalisation: num_channels split into num_groups groups.

    >>> import oar
    >>> oar.nn.GroupNorm(2, 4)(oar.rand([2, 4, 3, 3])).shape
    [2, 4, 3, 3]
    """

    def __init__(self, num_groups, num_channels, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCHW", name=None):
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"[oar.nn.GroupNorm] num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self._num_groups, self._num_channels, self._epsilon = num_groups, num_channels, epsilon
        self._data_format = data_format
        self.weight = self.create_parameter([num_channels], attr=weight_attr, default_initializer=init.Constant(1.0))
        self.bias = self.create_parameter([num_channels], attr=bias_attr, is_bias=True)

    def forward(self, x):
        return F.group_norm(x, self._num_groups, self._epsilon, self.weight, self.bias, self._data_format)

    def extra_repr(self):
        return f"num_groups={self._num_groups}, num_channels={self._num_channels}, epsilon={self._epsilon}"


class _InstanceNormBase(Layer):
    _rank = 4

    def __init__(self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None, bias_attr=None,
                 data_format="NCHW", name=None):
        super().__init__()
        self._num_features, self._epsilon, self._data_format = num_features, epsilon, data_format
        if weight_attr is False or bias_attr is False:
            self.scale, self.bias = None, None
        else:
            self.scale = self.create_parameter([num_features], attr=weight_attr,
                                               default_initializer=init.Constant(1.0))
            self.bias = self.create_parameter([num_features], attr=bias_attr, is_bias=True)

    def forward(self, x):
        if x.ndim != self._rank:
            raise ValueError(f"[oar.nn.{type(self).__name__}] expects a {self._rank}-D input, "
                             f"got shape {list(x.shape)}")
        return F.instance_norm(x, weight=self.scale, bias=self.bias, eps=self._epsilon, data_format=self._data_format)

    def extra_repr(self):
        return f"num_features={self._num_features}, epsilon={self._epsilon}"


class InstanceNorm1D(_InstanceNormBase):
    """Instance normalisation of [N, C, L] inputs.

    >>> import oar
    >>> oar.nn.InstanceNorm1D(2)(oar.rand([2, 2, 5])).shape
    [2, 2, 5]
    """
    _rank = 3

    def __init__(self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None, bias_attr=None,
                 data_format="NCL", name=None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format)


class InstanceNorm2D(_InstanceNormBase):
    """Instance normalisation of [N, C, H, W] inputs.

    >>> import oar
    >>> sorted(oar.nn.InstanceNorm2D(2).state_dict().keys())
    ['bias', 'scale']
    """
    _rank = 4


class InstanceNorm3D(_InstanceNormBase):
    """Instance normalisation of [N, C, D, H, W] inputs.

    >>> import oar
    >>> oar.nn.InstanceNorm3D(2)(oar.rand([1, 2, 2, 2, 2])).shape
    [1, 2, 2, 2, 2]
    """
    _rank = 5

    def __init__(self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None, bias_attr=None,
                 data_format="NCDHW", name=None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format)


class RMSNorm(Layer):
    """Root-mean-square normalisation over the trailing dims normalized_shape, times `weight`.

    >>> import oar
    >>> oar.nn.RMSNorm(4)(oar.rand([2, 4])).shape
    [2, 4]
    """

    def __init__(self, normalized_shape, epsilon=1e-05, weight_attr=None, name=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = [normalized_shape]
        self._normalized_shape = [int(v) for v in normalized_shape]
        self._epsilon = epsilon
        self.weight = self.create_parameter(self._normalized_shape, attr=weight_attr,
                                            default_initializer=init.Constant(1.0))

    def forward(self, x):
        return F.rms_norm(x, self._normalized_shape, self.weight, self._epsilon)

    def extra_repr(self):
        return f"normalized_shape={self._normalized_shape}, epsilon={self._epsilon}"


class LocalResponseNorm(Layer):
    """Local response normalisation across channels.

    >>> import oar
    >>> oar.nn.LocalResponseNorm(3)(oar.rand([1, 4, 2, 2])).shape
    [1, 4, 2, 2]
    """

    def __init__(self, size, alpha=0.0001, beta=0.75, k=1.0, data_format="NCHW", name=None):
        super().__init__()
        self._args = dict(size=size, alpha=alpha, beta=beta, k=k, data_format=data_format)

    def forward(self, x):
        return F.local_response_norm(x, **self._args)


class SyncBatchNorm(_BatchNormBase):
    """Batch normalisation whose statistics span all data-parallel processes; on one process it is BatchNorm.

    Accepts inputs of rank 2 to 5 with the channel axis given by data_format.
    convert_sync_batchnorm(layer) replaces every BatchNorm in a model by a
    SyncBatchNorm holding the same parameters.

    >>> import oar
    >>> net = oar.nn.SyncBatchNorm.convert_sync_batchnorm(oar.nn.Sequential(oar.nn.Conv2D(3, 3, 1), oar.nn.BatchNorm2D(3)))
    >>> type(net[1]).__name__, net(oar.rand([2, 3, 4, 4])).shape
    ('SyncBatchNorm', [2, 3, 4, 4])
    """

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCHW", name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format)

    @classmethod
    def convert_sync_batchnorm(cls, layer):
        """Returns layer with each BatchNorm (recursively) replaced by a SyncBatchNorm sharing its tensors."""
        if isinstance(layer, _BatchNormBase) and not isinstance(layer, SyncBatchNorm):
            new = cls(layer._num_features, layer._momentum, layer._epsilon,
                      False if layer.weight is None else None, False if layer.bias is None else None,
                      layer._data_format)
            for key in ("weight", "bias", "_mean", "_variance"):
                if getattr(layer, key) is not None:
                    new._parameters[key] = getattr(layer, key)
            new._use_global_stats = layer._use_global_stats
            new.training = layer.training
            return new
        for key, sub in list(layer._sub_layers.items()):
            if sub is not None:
                layer._sub_layers[key] = cls.convert_sync_batchnorm(sub)
        return layer


class SpectralNorm(Layer):
    """Divides a weight by its largest singular value, estimated by power iteration.

    The weight is viewed as a matrix [weight_shape[dim], rest]; weight_u and
    weight_v (non-trainable parameters, as in Paddle) start each call's
    power_iters iterations, which run without gradient, and
    sigma = u^T W v is differentiated through W.

    >>> import oar
    >>> sn = oar.nn.SpectralNorm([2, 3], power_iters=20)
    >>> w = oar.to_tensor([[3.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    >>> [round(v, 4) for v in sn(w).numpy().reshape(-1).tolist()]
    [1.0, 0.0, 0.0, 0.0, 0.3333, 0.0]
    """

    def __init__(self, weight_shape, dim=0, power_iters=1, eps=1e-12, dtype="float32"):
        super().__init__(dtype=dtype)
        shape = [int(d) for d in weight_shape]
        if not -len(shape) <= dim < len(shape):
            raise ValueError(f"[oar.nn.SpectralNorm] dim {dim} is out of range for weight_shape {shape}")
        if power_iters < 0:
            raise ValueError(f"[oar.nn.SpectralNorm] power_iters must be >= 0, got {power_iters}")
        self._shape, self._dim = shape, dim % len(shape)
        self._power_iters, self._eps = power_iters, eps
        h = shape[self._dim]
        w = int(np.prod(shape)) // h if h else 0
        normal = init.Normal(0.0, 1.0)
        self.weight_u = self.create_parameter([h], attr=ParamAttr(initializer=normal, trainable=False))
        self.weight_v = self.create_parameter([w], attr=ParamAttr(initializer=normal, trainable=False))

    def forward(self, weight):
        api = "[oar.nn.SpectralNorm]"
        if list(weight.shape) != self._shape:
            raise ValueError(f"{api} expected a weight of shape {self._shape}, got {list(weight.shape)}")
        perm = [self._dim] + [i for i in range(weight.ndim) if i != self._dim]
        mat = _C.reshape(_C.transpose(weight, perm), [self._shape[self._dim], -1])
        u, v = self.weight_u.detach(), self.weight_v.detach()
        with no_grad():
            m = mat.detach()
            for _ in range(self._power_iters):
                v = _C.matmul(m, u, True, False)
                v = v / (_C.norm(v) + self._eps)
                u = _C.matmul(m, v, False, False)
                u = u / (_C.norm(u) + self._eps)
        sigma = _C.sum(u * _C.matmul(mat, v, False, False))
        return weight / sigma

    def extra_repr(self):
        return f"weight_shape={self._shape}, dim={self._dim}, power_iters={self._power_iters}"
