"""Common layers: Linear, Bilinear, Embedding, dropouts, Flatten/Unflatten, Identity, padding, distances."""
from ... import _C
from ...autograd import no_grad
from .. import functional as F
from .layers import Layer

__all__ = [
    "Linear", "Bilinear", "Embedding", "Dropout", "Dropout2D", "Dropout3D", "AlphaDropout", "FeatureAlphaDropout",
    "Flatten", "Unflatten", "Identity", "Pad1D", "Pad2D", "Pad3D", "ZeroPad1D", "ZeroPad2D", "ZeroPad3D",
    "ConstantPad1D", "ConstantPad2D", "ConstantPad3D", "ReflectionPad1D", "ReflectionPad2D", "ReflectionPad3D",
    "ReplicationPad1D", "ReplicationPad2D", "ReplicationPad3D", "CircularPad1D", "CircularPad2D", "CircularPad3D",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
    "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "CosineSimilarity", "PairwiseDistance",
]


def _positive_int(v, api, what):
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"[oar.nn.{api}] {what} must be a positive int, got {v!r}")
    return v


class Linear(Layer):
    """y = x @ weight + bias with weight [in_features, out_features] (XavierUniform) and bias zeros.

    >>> import oar
    >>> fc = oar.nn.Linear(4, 2)
    >>> fc.weight.shape, fc.bias.shape, fc(oar.ones([3, 4])).shape
    ([4, 2], [2], [3, 2])
    """

    def __init__(self, in_features, out_features, weight_attr=None, bias_attr=None, name=None):
        super().__init__()
        self.in_features = _positive_int(in_features, "Linear", "in_features")
        self.out_features = _positive_int(out_features, "Linear", "out_features")
        self.weight = self.create_parameter([in_features, out_features], attr=weight_attr)
        self.bias = self.create_parameter([out_features], attr=bias_attr, is_bias=True)

    def forward(self, input):  # noqa: A002 - Paddle's name
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, dtype={self._dtype}"


class Bilinear(Layer):
    """out[b, o] = x1[b] @ weight[o] @ x2[b] + bias[o].

    >>> import oar
    >>> layer = oar.nn.Bilinear(3, 4, 2)
    >>> layer(oar.ones([5, 3]), oar.ones([5, 4])).shape
    [5, 2]
    """

    def __init__(self, in1_features, in2_features, out_features, weight_attr=None, bias_attr=None, name=None):
        super().__init__()
        self.in1_features = _positive_int(in1_features, "Bilinear", "in1_features")
        self.in2_features = _positive_int(in2_features, "Bilinear", "in2_features")
        self.out_features = _positive_int(out_features, "Bilinear", "out_features")
        self.weight = self.create_parameter([out_features, in1_features, in2_features], attr=weight_attr)
        self.bias = self.create_parameter([1, out_features], attr=bias_attr, is_bias=True)

    def forward(self, x1, x2):
        return F.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, dtype={self._dtype}")


class Embedding(Layer):
    """A lookup table of num_embeddings rows of size embedding_dim; the padding_idx row is zeros.

    ``sparse`` is accepted for compatibility; gradients are always dense.

    >>> import oar
    >>> emb = oar.nn.Embedding(10, 3, padding_idx=0)
    >>> out = emb(oar.to_tensor([[0, 4]]))
    >>> out.shape, out[0, 0].numpy().tolist()
    ([1, 2, 3], [0.0, 0.0, 0.0])
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, sparse=False,
                 weight_attr=None, scale_grad_by_freq=False, name=None):
        super().__init__()
        self._num_embeddings = _positive_int(num_embeddings, "Embedding", "num_embeddings")
        self._embedding_dim = _positive_int(embedding_dim, "Embedding", "embedding_dim")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"[oar.nn.Embedding] padding_idx must be in [-{num_embeddings}, {num_embeddings}), "
                                 f"got {padding_idx}")
            padding_idx = padding_idx + num_embeddings if padding_idx < 0 else padding_idx
        self._padding_idx = padding_idx
        self._max_norm, self._norm_type, self._sparse = max_norm, norm_type, sparse
        self.weight = self.create_parameter([num_embeddings, embedding_dim], attr=weight_attr)
        if padding_idx is not None:
            with no_grad():
                self.weight[padding_idx] = 0.0

    def forward(self, x):
        return F.embedding(x, self.weight, self._padding_idx, self._max_norm, self._norm_type, self._sparse)

    def extra_repr(self):
        s = f"{self._num_embeddings}, {self._embedding_dim}"
        if self._padding_idx is not None:
            s += f", padding_idx={self._padding_idx}"
        return s + (", sparse=True" if self._sparse else "")


class Dropout(Layer):
    """Dropout (see oar.nn.functional.dropout); active only in training mode.

    >>> import oar
    >>> d = oar.nn.Dropout(0.5); _ = d.eval()
    >>> d(oar.ones([2])).numpy().tolist()
    [1.0, 1.0]
    """

    def __init__(self, p=0.5, axis=None, mode="upscale_in_train", name=None):
        super().__init__()
        F.common._check_p(p, "dropout")
        if mode not in ("upscale_in_train", "downscale_in_infer"):
            raise ValueError(f"[oar.nn.Dropout] mode must be 'upscale_in_train' or 'downscale_in_infer', got {mode!r}")
        self.p, self.axis, self.mode = p, axis, mode

    def forward(self, input):  # noqa: A002
        return F.dropout(input, self.p, self.axis, self.training, self.mode)

    def extra_repr(self):
        return f"p={self.p}, axis={self.axis}, mode={self.mode}"


class Dropout2D(Layer):
    """Drops whole channels of NCHW/NHWC input in training mode.

    >>> import oar
    >>> oar.nn.Dropout2D(0.2)(oar.ones([2, 3, 4, 4])).shape
    [2, 3, 4, 4]
    """

    def __init__(self, p=0.5, data_format="NCHW", name=None):
        super().__init__()
        F.common._check_p(p, "dropout2d")
        self.p, self.data_format = p, data_format

    def forward(self, input):  # noqa: A002
        return F.dropout2d(input, self.p, self.training, self.data_format)

    def extra_repr(self):
        return f"p={self.p}, data_format={self.data_format}"


class Dropout3D(Layer):
    """Drops whole channels of NCDHW/NDHWC input in training mode.

    >>> import oar
    >>> oar.nn.Dropout3D(0.2)(oar.ones([1, 2, 2, 2, 2])).shape
    [1, 2, 2, 2, 2]
    """

    def __init__(self, p=0.5, data_format="NCDHW", name=None):
        super().__init__()
        F.common._check_p(p, "dropout3d")
        self.p, self.data_format = p, data_format

    def forward(self, input):  # noqa: A002
        return F.dropout3d(input, self.p, self.training, self.data_format)

    def extra_repr(self):
        return f"p={self.p}, data_format={self.data_format}"


class AlphaDropout(Layer):
    """Alpha dropout for SELU networks, active only in training mode.

    >>> import oar
    >>> oar.nn.AlphaDropout(0.2)(oar.ones([4])).shape
    [4]
    """

    def __init__(self, p=0.5, name=None):
        super().__init__()
        F.common._check_p(p, "alpha_dropout")
        self.p = p

    def forward(self, input):  # noqa: A002
        return F.alpha_dropout(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class FeatureAlphaDropout(AlphaDropout):
    """Alpha dropout of whole channels (see ``oar.nn.functional.feature_alpha_dropout``), active in training.

    >>> import oar
    >>> oar.nn.FeatureAlphaDropout(0.2)(oar.ones([2, 3, 4])).shape
    [2, 3, 4]
    """

    def forward(self, input):  # noqa: A002
        return F.feature_alpha_dropout(input, self.p, self.training)


class Flatten(Layer):
    """Flattens axes start_axis..stop_axis into one.

    >>> import oar
    >>> oar.nn.Flatten()(oar.ones([2, 3, 4])).shape
    [2, 12]
    """

    def __init__(self, start_axis=1, stop_axis=-1):
        super().__init__()
        self.start_axis, self.stop_axis = start_axis, stop_axis

    def forward(self, input):  # noqa: A002
        return _C.flatten(input, self.start_axis, self.stop_axis)

    def extra_repr(self):
        return f"start_axis={self.start_axis}, stop_axis={self.stop_axis}"


class Unflatten(Layer):
    """Splits axis into the given shape.

    >>> import oar
    >>> oar.nn.Unflatten(1, [2, 3])(oar.ones([4, 6])).shape
    [4, 2, 3]
    """

    def __init__(self, axis, shape, name=None):
        super().__init__()
        self.axis, self.shape = int(axis), [int(s) for s in shape]

    def forward(self, input):  # noqa: A002
        axis = self.axis + input.ndim if self.axis < 0 else self.axis
        if not 0 <= axis < input.ndim:
            raise ValueError(f"[oar.nn.Unflatten] axis {self.axis} is out of range for a {input.ndim}-D input")
        new = list(input.shape[:axis]) + self.shape + list(input.shape[axis + 1:])
        return _C.reshape(input, new)

    def extra_repr(self):
        return f"axis={self.axis}, shape={self.shape}"


class Identity(Layer):
    """Returns its input; accepts and ignores any constructor arguments.

    >>> import oar
    >>> oar.nn.Identity(54, unused="x")(oar.to_tensor([1.0])).numpy().tolist()
    [1.0]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002
        return input


class _PadNd(Layer):
    _n = 1
    _default_format = "NCL"

    def __init__(self, padding, mode="constant", value=0.0, data_format=None, name=None):
        super().__init__()
        if isinstance(padding, int):
            padding = [padding] * (2 * self._n)
        padding = list(padding) if not isinstance(padding, _C.Tensor) else padding.numpy().tolist()
        if len(padding) != 2 * self._n:
            raise ValueError(f"[oar.nn.{type(self).__name__}] padding must be an int or {2 * self._n} ints, "
                             f"got {padding}")
        if mode not in ("constant", "reflect", "replicate", "circular"):
            raise ValueError(f"[oar.nn.{type(self).__name__}] mode must be 'constant', 'reflect', 'replicate' or "
                             f"'circular', got {mode!r}")
        self._pad, self._mode, self._value = padding, mode, value
        self._data_format = data_format or self._default_format

    def forward(self, x):
        return F.pad(x, self._pad, mode=self._mode, value=self._value, data_format=self._data_format)

    def extra_repr(self):
        return f"padding={self._pad}, mode={self._mode}, value={self._value}, data_format={self._data_format}"


class Pad1D(_PadNd):
    """Pads the last axis of NCL input by [left, right].

    >>> import oar
    >>> oar.nn.Pad1D([1, 2])(oar.ones([1, 1, 3])).shape
    [1, 1, 6]
    """
    _n, _default_format = 1, "NCL"


class Pad2D(_PadNd):
    """Pads H and W of NCHW input by [left, right, top, bottom].

    >>> import oar
    >>> oar.nn.Pad2D(1, mode="replicate")(oar.ones([1, 1, 2, 2])).shape
    [1, 1, 4, 4]
    """
    _n, _default_format = 2, "NCHW"


class Pad3D(_PadNd):
    """Pads D, H and W of NCDHW input by [left, right, top, bottom, front, back].

    >>> import oar
    >>> oar.nn.Pad3D(1)(oar.ones([1, 1, 1, 1, 1])).shape
    [1, 1, 3, 3, 3]
    """
    _n, _default_format = 3, "NCDHW"


class ZeroPad2D(_PadNd):
    """Zero padding of H and W by [left, right, top, bottom].

    >>> import oar
    >>> oar.nn.ZeroPad2D([1, 0, 0, 0])(oar.ones([1, 1, 2, 2])).shape
    [1, 1, 2, 3]
    """
    _n, _default_format = 2, "NCHW"

    def __init__(self, padding, data_format="NCHW", name=None):
        super().__init__(padding, "constant", 0.0, data_format)


def _fixed_mode_pad(base, mode, doc_name):
    """A padding layer of `base`'s rank with a fixed mode: __init__(padding, data_format, name)."""

    class _Pad(base):
        def __init__(self, padding, data_format=base._default_format, name=None):
            super().__init__(padding, mode, 0.0, data_format)

    _Pad.__name__ = _Pad.__qualname__ = doc_name
    return _Pad


def _constant_pad(base, doc_name):
    class _Pad(base):
        def __init__(self, padding, value, data_format=base._default_format, name=None):
            super().__init__(padding, "constant", value, data_format)

    _Pad.__name__ = _Pad.__qualname__ = doc_name
    return _Pad


ZeroPad1D = _fixed_mode_pad(Pad1D, "constant", "ZeroPad1D")
ZeroPad1D.__doc__ = """Zero padding of L by [left, right] (an int pads both sides).

    >>> import oar
    >>> oar.nn.ZeroPad1D([1, 0])(oar.ones([1, 1, 2])).numpy().tolist()
    [[[0.0, 1.0, 1.0]]]
    """
ZeroPad3D = _fixed_mode_pad(Pad3D, "constant", "ZeroPad3D")
ZeroPad3D.__doc__ = """Zero padding of D, H, W by [left, right, top, bottom, front, back].

    >>> import oar
    >>> oar.nn.ZeroPad3D(1)(oar.ones([1, 1, 1, 1, 1])).shape
    [1, 1, 3, 3, 3]
    """
ConstantPad1D = _constant_pad(Pad1D, "ConstantPad1D")
ConstantPad1D.__doc__ = """Pads L with `value` by [left, right].

    >>> import oar
    >>> oar.nn.ConstantPad1D(1, 3.0)(oar.ones([1, 1, 2])).numpy().tolist()
    [[[3.0, 1.0, 1.0, 3.0]]]
    """
ConstantPad2D = _constant_pad(Pad2D, "ConstantPad2D")
ConstantPad2D.__doc__ = """Pads H, W with `value` by [left, right, top, bottom].

    >>> import oar
    >>> oar.nn.ConstantPad2D([1, 0, 0, 0], 2.0)(oar.ones([1, 1, 1, 1])).numpy().tolist()
    [[[[2.0, 1.0]]]]
    """
ConstantPad3D = _constant_pad(Pad3D, "ConstantPad3D")
ConstantPad3D.__doc__ = """Pads D, H, W with `value` by [left, right, top, bottom, front, back].

    >>> import oar
    >>> oar.nn.ConstantPad3D(1, 0.5)(oar.ones([1, 1, 1, 1, 1])).shape
    [1, 1, 3, 3, 3]
    """
ReflectionPad1D = _fixed_mode_pad(Pad1D, "reflect", "ReflectionPad1D")
ReflectionPad1D.__doc__ = """Reflection padding of L by [left, right].

    >>> import oar
    >>> x = oar.to_tensor([[[0.0, 1.0, 2.0]]])
    >>> oar.nn.ReflectionPad1D([1, 0])(x).numpy().tolist()
    [[[1.0, 0.0, 1.0, 2.0]]]
    """
ReflectionPad2D = _fixed_mode_pad(Pad2D, "reflect", "ReflectionPad2D")
ReflectionPad2D.__doc__ = """Reflection padding of H, W by [left, right, top, bottom].

    >>> import oar
    >>> oar.nn.ReflectionPad2D(1)(oar.ones([1, 1, 2, 2])).shape
    [1, 1, 4, 4]
    """
ReflectionPad3D = _fixed_mode_pad(Pad3D, "reflect", "ReflectionPad3D")
ReflectionPad3D.__doc__ = """Reflection padding of D, H, W by [left, right, top, bottom, front, back].

    >>> import oar
    >>> oar.nn.ReflectionPad3D(1)(oar.ones([1, 1, 2, 2, 2])).shape
    [1, 1, 4, 4, 4]
    """
ReplicationPad1D = _fixed_mode_pad(Pad1D, "replicate", "ReplicationPad1D")
ReplicationPad1D.__doc__ = """Edge-replicating padding of L by [left, right].

    >>> import oar
    >>> oar.nn.ReplicationPad1D([0, 2])(oar.to_tensor([[[1.0, 2.0]]])).numpy().tolist()
    [[[1.0, 2.0, 2.0, 2.0]]]
    """
ReplicationPad2D = _fixed_mode_pad(Pad2D, "replicate", "ReplicationPad2D")
ReplicationPad2D.__doc__ = """Edge-replicating padding of H, W by [left, right, top, bottom].

    >>> import oar
    >>> oar.nn.ReplicationPad2D(1)(oar.ones([1, 1, 1, 1])).numpy().reshape(-1).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
ReplicationPad3D = _fixed_mode_pad(Pad3D, "replicate", "ReplicationPad3D")
ReplicationPad3D.__doc__ = """Edge-replicating padding of D, H, W by [left, right, top, bottom, front, back].

    >>> import oar
    >>> oar.nn.ReplicationPad3D([1, 0, 0, 0, 0, 0])(oar.to_tensor([[[[[0.0, 1.0]]]]])).numpy().reshape(-1).tolist()
    [0.0, 0.0, 1.0]
    """
CircularPad1D = _fixed_mode_pad(Pad1D, "circular", "CircularPad1D")
CircularPad1D.__doc__ = """Circular (wrap-around) padding of L by [left, right].

    >>> import oar
    >>> oar.nn.CircularPad1D([1, 1])(oar.to_tensor([[[1.0, 2.0, 3.0]]])).numpy().tolist()
    [[[3.0, 1.0, 2.0, 3.0, 1.0]]]
    """
CircularPad2D = _fixed_mode_pad(Pad2D, "circular", "CircularPad2D")
CircularPad2D.__doc__ = """Circular padding of H, W by [left, right, top, bottom].

    >>> import oar
    >>> x = oar.arange(4, dtype="float32").reshape([1, 1, 2, 2])
    >>> oar.nn.CircularPad2D([1, 0, 0, 1])(x)[0, 0].numpy().tolist()
    [[1.0, 0.0, 1.0], [3.0, 2.0, 3.0], [1.0, 0.0, 1.0]]
    """
CircularPad3D = _fixed_mode_pad(Pad3D, "circular", "CircularPad3D")
CircularPad3D.__doc__ = """Circular padding of D, H, W by [left, right, top, bottom, front, back].

    >>> import oar
    >>> oar.nn.CircularPad3D(1)(oar.ones([1, 1, 2, 2, 2])).shape
    [1, 1, 4, 4, 4]
    """

# Paddle also exports these spellings.
ZeroPad1d, ZeroPad2d, ZeroPad3d = ZeroPad1D, ZeroPad2D, ZeroPad3D
ConstantPad1d, ConstantPad2d, ConstantPad3d = ConstantPad1D, ConstantPad2D, ConstantPad3D
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = ReflectionPad1D, ReflectionPad2D, ReflectionPad3D
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = ReplicationPad1D, ReplicationPad2D, ReplicationPad3D
CircularPad1d, CircularPad2d, CircularPad3d = CircularPad1D, CircularPad2D, CircularPad3D


class CosineSimilarity(Layer):
    """Cosine similarity along axis.

    >>> import oar
    >>> oar.nn.CosineSimilarity(axis=1)(oar.ones([2, 3]), oar.ones([2, 3])).shape
    [2]
    """

    def __init__(self, axis=1, eps=1e-8):
        super().__init__()
        self._axis, self._eps = axis, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self._axis, self._eps)

    def extra_repr(self):
        return f"axis={self._axis}, eps={self._eps}"


class PairwiseDistance(Layer):
    """p-norm distance between rows of x and y.

    >>> import oar
    >>> oar.nn.PairwiseDistance()(oar.ones([2, 3]), oar.zeros([2, 3])).shape
    [2]
    """

    def __init__(self, p=2.0, epsilon=1e-6, keepdim=False, name=None):
        super().__init__()
        self.p, self.epsilon, self.keepdim = p, epsilon, keepdim

    def forward(self, x, y):
        return F.pairwise_distance(x, y, self.p, self.epsilon, self.keepdim)

    def extra_repr(self):
        return f"p={self.p}, epsilon={self.epsilon}, keepdim={self.keepdim}"
