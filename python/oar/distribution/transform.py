"""Transforms of random variables: differentiable maps with their inverses and the log
absolute determinants of their Jacobians, used by TransformedDistribution.

Every transform knows the event rank of its domain and codomain (``_domain_rank``,
``_codomain_rank``): 0 for elementwise maps, 1 for maps of vectors (softmax, stick
breaking), more for reshapes. ``forward_log_det_jacobian(x)`` has x's shape with the
domain's event axes removed.
"""
import enum
import math

import numpy as np

import oar

from .. import _C
from . import _params
from ._boundary import guard_class
from ._ops import log_softmax, softplus, tiny


class Type(enum.Enum):
    """How a transform maps its domain: a bijection, an injection, a surjection or other."""

    BIJECTION = "bijection"
    INJECTION = "injection"
    SURJECTION = "surjection"
    OTHER = "other"

    @classmethod
    def is_injective(cls, t):
        return t in (cls.BIJECTION, cls.INJECTION)


def _sum_rightmost(t, n):
    return t.sum(axis=list(range(len(t.shape) - n, len(t.shape)))) if n > 0 else t


class Transform:
    """Base class of transforms y = f(x).

    A subclass gives ``_forward``, ``_inverse`` and ``_forward_log_det_jacobian`` (or
    ``_inverse_log_det_jacobian``) and, when it changes shapes, ``_forward_shape`` and
    ``_inverse_shape``. Calling a transform on a tensor applies it; on a Distribution it
    gives a TransformedDistribution; on another transform, ``ChainTransform([self, other])``.

    >>> import oar
    >>> from oar.distribution import ExpTransform, Normal
    >>> t = ExpTransform()
    >>> t.forward(oar.to_tensor([0.0])).numpy().tolist()
    [1.0]
    >>> t.inverse_log_det_jacobian(oar.to_tensor([1.0])).numpy().tolist()
    [-0.0]
    >>> type(t(Normal(0.0, 1.0))).__name__
    'TransformedDistribution'
    """

    _type = Type.INJECTION
    _domain_rank = 0
    _codomain_rank = 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        guard_class(cls)

    def __init__(self):
        pass

    @classmethod
    def _is_injective(cls):
        return Type.is_injective(cls._type)

    def _api(self, method=None):
        name = f"oar.distribution.{type(self).__name__}"
        return f"{name}.{method}" if method else name

    def __call__(self, input):  # noqa: A002 - Paddle's argument name
        from .distribution import Distribution
        from .transformed_distribution import TransformedDistribution

        if isinstance(input, Distribution):
            return TransformedDistribution(input, [self])
        if isinstance(input, Transform):
            return ChainTransform([self, input])
        return self.forward(input)

    def _tensor(self, x, method):
        if not isinstance(x, _C.Tensor):
            raise TypeError(f"[{self._api(method)}] expects a Tensor, got {type(x).__name__}")
        rank = self._domain_rank if method.startswith("forward") else self._codomain_rank
        if len(x.shape) < rank:
            raise ValueError(f"[{self._api(method)}] the input needs at least {rank} dimension(s), "
                             f"got shape {list(x.shape)}")
        return x

    def forward(self, x):
        """y = f(x)."""
        return self._forward(self._tensor(x, "forward"))

    def inverse(self, y):
        """x = f^-1(y)."""
        return self._inverse(self._tensor(y, "inverse"))

    def forward_log_det_jacobian(self, x):
        """log |det J_f(x)|."""
        x = self._tensor(x, "forward_log_det_jacobian")
        if type(self)._forward_log_det_jacobian is not Transform._forward_log_det_jacobian:
            return self._forward_log_det_jacobian(x)
        if type(self)._inverse_log_det_jacobian is not Transform._inverse_log_det_jacobian:
            return -self._inverse_log_det_jacobian(self._forward(x))
        raise NotImplementedError(f"[{self._api('forward_log_det_jacobian')}] is not defined for "
                                  f"{type(self).__name__}")

    def inverse_log_det_jacobian(self, y):
        """log |det J_{f^-1}(y)| = -log |det J_f(f^-1(y))|."""
        y = self._tensor(y, "inverse_log_det_jacobian")
        if type(self)._inverse_log_det_jacobian is not Transform._inverse_log_det_jacobian:
            return self._inverse_log_det_jacobian(y)
        if type(self)._forward_log_det_jacobian is not Transform._forward_log_det_jacobian:
            return -self._forward_log_det_jacobian(self._inverse(y))
        raise NotImplementedError(f"[{self._api('inverse_log_det_jacobian')}] is not defined for "
                                  f"{type(self).__name__}")

    def forward_shape(self, shape):
        """The shape of f(x) for x of ``shape``."""
        return tuple(self._forward_shape(tuple(_params.sample_shape(self._api("forward_shape"), shape))))

    def inverse_shape(self, shape):
        """The shape of f^-1(y) for y of ``shape``."""
        return tuple(self._inverse_shape(tuple(_params.sample_shape(self._api("inverse_shape"), shape))))

    def _forward(self, x):
        raise NotImplementedError(f"[{self._api('forward')}] is not defined for {type(self).__name__}")

    def _inverse(self, y):
        raise NotImplementedError(f"[{self._api('inverse')}] is not defined for {type(self).__name__}")

    def _forward_log_det_jacobian(self, x):
        raise NotImplementedError

    def _inverse_log_det_jacobian(self, y):
        raise NotImplementedError

    def _forward_shape(self, shape):
        return shape

    def _inverse_shape(self, shape):
        return shape


guard_class(Transform)


class AbsTransform(Transform):
    """y = |x|. Not injective: ``inverse(y)`` returns both preimages ``(-y, y)`` and
    ``inverse_log_det_jacobian`` returns ``(0, 0)``.

    >>> import oar
    >>> from oar.distribution import AbsTransform
    >>> t = AbsTransform()
    >>> t.forward(oar.to_tensor([-1.0, 2.0])).numpy().tolist()
    [1.0, 2.0]
    >>> [v.numpy().tolist() for v in t.inverse(oar.to_tensor([1.0]))]
    [[-1.0], [1.0]]
    """

    _type = Type.SURJECTION

    def _forward(self, x):
        return x.abs()

    def _inverse(self, y):
        return -y, y

    def _inverse_log_det_jacobian(self, y):
        zero = _C.zeros_like(y)
        return zero, zero

    def forward_log_det_jacobian(self, x):
        """Not defined: |x| is not injective."""
        raise NotImplementedError(f"[{self._api('forward_log_det_jacobian')}] |x| is not injective")


class AffineTransform(Transform):
    """y = loc + scale * x (elementwise; loc and scale broadcast with x).

    >>> import oar
    >>> from oar.distribution import AffineTransform
    >>> t = AffineTransform(oar.to_tensor(1.0), oar.to_tensor(2.0))
    >>> t.forward(oar.to_tensor([0.0, 1.0])).numpy().tolist()
    [1.0, 3.0]
    >>> round(float(t.forward_log_det_jacobian(oar.to_tensor(0.0))), 4)
    0.6931
    """

    _type = Type.BIJECTION

    def __init__(self, loc, scale):
        api = self._api()
        self.loc, self.scale = _params.as_tensors(api, ("loc", "scale"), (loc, scale))
        v = _params.numpy_values(self.scale)
        if v is not None and v.size and np.any(v == 0):
            raise ValueError(f"[{api}] scale must be non-zero")
        super().__init__()

    def _forward(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def _forward_log_det_jacobian(self, x):
        shape = list(np.broadcast_shapes(tuple(x.shape), tuple(self.scale.shape), tuple(self.loc.shape)))
        return self.scale.abs().log().expand(shape)

    def _forward_shape(self, shape):
        return np.broadcast_shapes(shape, tuple(self.loc.shape), tuple(self.scale.shape))

    def _inverse_shape(self, shape):
        return np.broadcast_shapes(shape, tuple(self.loc.shape), tuple(self.scale.shape))


class ChainTransform(Transform):
    """The composition of ``transforms``, applied in order (transforms[0] first).

    >>> import oar
    >>> from oar.distribution import AffineTransform, ChainTransform, ExpTransform
    >>> t = ChainTransform([AffineTransform(0.0, 2.0), ExpTransform()])
    >>> round(float(t.forward(oar.to_tensor(1.0))), 4)
    7.3891
    >>> round(float(t.inverse(t.forward(oar.to_tensor(1.0)))), 4)
    1.0
    """

    def __init__(self, transforms):
        api = self._api()
        if not isinstance(transforms, (list, tuple)) or not all(isinstance(t, Transform) for t in transforms):
            raise TypeError(f"[{api}] transforms must be a list or tuple of Transform, got {transforms!r}")
        self.transforms = list(transforms)
        super().__init__()

    @property
    def _type(self):
        return Type.BIJECTION if all(t._type == Type.BIJECTION for t in self.transforms) else (
            Type.INJECTION if all(Type.is_injective(t._type) for t in self.transforms) else Type.OTHER)

    def _is_injective(self):
        return Type.is_injective(self._type)

    @property
    def _domain_rank(self):
        rank = self.transforms[-1]._codomain_rank if self.transforms else 0
        for t in reversed(self.transforms):
            rank = max(rank + t._domain_rank - t._codomain_rank, t._domain_rank)
        return rank

    @property
    def _codomain_rank(self):
        rank = self.transforms[0]._domain_rank if self.transforms else 0
        for t in self.transforms:
            rank = max(rank + t._codomain_rank - t._domain_rank, t._codomain_rank)
        return rank

    def _forward(self, x):
        for t in self.transforms:
            x = t.forward(x)
        return x

    def _inverse(self, y):
        for t in reversed(self.transforms):
            y = t.inverse(y)
        return y

    def _forward_log_det_jacobian(self, x):
        rank = self._domain_rank
        total = 0.0
        for t in self.transforms:
            total = total + _sum_rightmost(t.forward_log_det_jacobian(x), rank - t._domain_rank)
            x = t.forward(x)
            rank += t._codomain_rank - t._domain_rank
        return total if isinstance(total, _C.Tensor) else _C.zeros(list(x.shape)[:len(x.shape) - rank], x.dtype)

    def _forward_shape(self, shape):
        for t in self.transforms:
            shape = t.forward_shape(shape)
        return shape

    def _inverse_shape(self, shape):
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        return shape


class ExpTransform(Transform):
    """y = exp(x).

    >>> import oar
    >>> from oar.distribution import ExpTransform
    >>> ExpTransform().forward_log_det_jacobian(oar.to_tensor([2.0])).numpy().tolist()
    [2.0]
    """

    _type = Type.BIJECTION

    def _forward(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def _forward_log_det_jacobian(self, x):
        return x


class IndependentTransform(Transform):
    """Treats the rightmost ``reinterpreted_batch_rank`` axes of ``base``'s input as event
    axes: the log-determinants are summed over them.

    >>> import oar
    >>> from oar.distribution import ExpTransform, IndependentTransform
    >>> t = IndependentTransform(ExpTransform(), 1)
    >>> t.forward_log_det_jacobian(oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()
    [3.0, 7.0]
    """

    def __init__(self, base, reinterpreted_batch_rank):
        api = self._api()
        if not isinstance(base, Transform):
            raise TypeError(f"[{api}] base must be a Transform, got {type(base).__name__}")
        if not isinstance(reinterpreted_batch_rank, int) or reinterpreted_batch_rank < 1:
            raise ValueError(f"[{api}] reinterpreted_batch_rank must be a positive int, "
                             f"got {reinterpreted_batch_rank!r}")
        self._base = base
        self._reinterpreted_batch_rank = reinterpreted_batch_rank
        super().__init__()

    @property
    def _type(self):
        return self._base._type

    def _is_injective(self):
        return self._base._is_injective()

    @property
    def _domain_rank(self):
        return self._base._domain_rank + self._reinterpreted_batch_rank

    @property
    def _codomain_rank(self):
        return self._base._codomain_rank + self._reinterpreted_batch_rank

    def _forward(self, x):
        return self._base.forward(x)

    def _inverse(self, y):
        return self._base.inverse(y)

    def _forward_log_det_jacobian(self, x):
        return _sum_rightmost(self._base.forward_log_det_jacobian(x), self._reinterpreted_batch_rank)

    def _forward_shape(self, shape):
        return self._base.forward_shape(shape)

    def _inverse_shape(self, shape):
        return self._base.inverse_shape(shape)


class PowerTransform(Transform):
    """y = x ** power on positive x.

    >>> import oar
    >>> from oar.distribution import PowerTransform
    >>> t = PowerTransform(oar.to_tensor(2.0))
    >>> t.forward(oar.to_tensor([3.0])).numpy().tolist()
    [9.0]
    >>> t.inverse(oar.to_tensor([9.0])).numpy().tolist()
    [3.0]
    """

    _type = Type.BIJECTION

    def __init__(self, power):
        api = self._api()
        (self.power,) = _params.as_tensors(api, ("power",), (power,))
        v = _params.numpy_values(self.power)
        if v is not None and v.size and np.any(v == 0):
            raise ValueError(f"[{api}] power must be non-zero")
        super().__init__()

    def _forward(self, x):
        return x.pow(self.power)

    def _inverse(self, y):
        return y.pow(1 / self.power)

    def _forward_log_det_jacobian(self, x):
        return (self.power * x.pow(self.power - 1)).abs().log()

    def _forward_shape(self, shape):
        return np.broadcast_shapes(shape, tuple(self.power.shape))

    def _inverse_shape(self, shape):
        return np.broadcast_shapes(shape, tuple(self.power.shape))


class ReshapeTransform(Transform):
    """Reshapes the event part of x from ``in_event_shape`` to ``out_event_shape`` (same
    number of elements); the log-determinant is 0.

    >>> import oar
    >>> from oar.distribution import ReshapeTransform
    >>> t = ReshapeTransform((2, 3), (3, 2))
    >>> t.forward(oar.ones([4, 2, 3])).shape
    [4, 3, 2]
    >>> t.forward_log_det_jacobian(oar.ones([4, 2, 3])).shape
    [4]
    """

    _type = Type.BIJECTION

    def __init__(self, in_event_shape, out_event_shape):
        api = self._api()
        self._in = tuple(_params.sample_shape(api, in_event_shape))
        self._out = tuple(_params.sample_shape(api, out_event_shape))
        if _params.shape_numel(self._in) != _params.shape_numel(self._out):
            raise ValueError(f"[{api}] in_event_shape {list(self._in)} and out_event_shape {list(self._out)} "
                             "must have the same number of elements")
        super().__init__()

    @property
    def in_event_shape(self):
        return self._in

    @property
    def out_event_shape(self):
        return self._out

    @property
    def _domain_rank(self):
        return len(self._in)

    @property
    def _codomain_rank(self):
        return len(self._out)

    def _check_tail(self, shape, tail, method):
        n = len(tail)
        if tuple(shape[len(shape) - n:]) != tail or len(shape) < n:
            raise ValueError(f"[{self._api(method)}] the trailing shape must be {list(tail)}, got {list(shape)}")
        return list(shape[:len(shape) - n])

    def _forward(self, x):
        batch = self._check_tail(tuple(x.shape), self._in, "forward")
        return x.reshape(batch + list(self._out))

    def _inverse(self, y):
        batch = self._check_tail(tuple(y.shape), self._out, "inverse")
        return y.reshape(batch + list(self._in))

    def _forward_log_det_jacobian(self, x):
        batch = self._check_tail(tuple(x.shape), self._in, "forward_log_det_jacobian")
        return _C.zeros(batch, x.dtype)

    def _forward_shape(self, shape):
        return tuple(self._check_tail(shape, self._in, "forward_shape")) + self._out

    def _inverse_shape(self, shape):
        return tuple(self._check_tail(shape, self._out, "inverse_shape")) + self._in


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x)).

    >>> import oar
    >>> from oar.distribution import SigmoidTransform
    >>> SigmoidTransform().forward(oar.to_tensor([0.0])).numpy().tolist()
    [0.5]
    """

    _type = Type.BIJECTION

    def _forward(self, x):
        return _C.sigmoid(x)

    def _inverse(self, y):
        return y.log() - (-y).log1p()

    def _forward_log_det_jacobian(self, x):
        return -softplus(-x) - softplus(x)


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last axis. Not injective (adding a constant to x gives the
    same y); ``inverse`` returns ``log(y)``, one preimage, and the Jacobian is not defined.

    >>> import oar
    >>> from oar.distribution import SoftmaxTransform
    >>> SoftmaxTransform().forward(oar.to_tensor([0.0, 0.0])).numpy().tolist()
    [0.5, 0.5]
    """

    _type = Type.OTHER
    _domain_rank = 1
    _codomain_rank = 1

    def _forward(self, x):
        return log_softmax(x).exp()

    def _inverse(self, y):
        return y.log()

    def _forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"[{self._api('forward_shape')}] needs at least one dimension, got {list(shape)}")
        return shape

    _inverse_shape = _forward_shape


class StackTransform(Transform):
    """Applies ``transforms[i]`` to the i-th slice of x along ``axis``.

    >>> import oar
    >>> from oar.distribution import AffineTransform, ExpTransform, StackTransform
    >>> t = StackTransform([ExpTransform(), AffineTransform(1.0, 2.0)], axis=1)
    >>> t.forward(oar.to_tensor([[0.0, 1.0]])).numpy().tolist()
    [[1.0, 3.0]]
    """

    def __init__(self, transforms, axis=0):
        api = self._api()
        if not isinstance(transforms, (list, tuple)) or not transforms or \
                not all(isinstance(t, Transform) for t in transforms):
            raise TypeError(f"[{api}] transforms must be a non-empty list or tuple of Transform, got {transforms!r}")
        if any(t._domain_rank or t._codomain_rank for t in transforms):
            raise ValueError(f"[{api}] only elementwise transforms can be stacked")
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"[{api}] axis must be an int, got {axis!r}")
        self._transforms = list(transforms)
        self._axis = axis
        super().__init__()

    @property
    def transforms(self):
        return self._transforms

    @property
    def axis(self):
        return self._axis

    @property
    def _type(self):
        return Type.BIJECTION if all(t._type == Type.BIJECTION for t in self._transforms) else Type.OTHER

    def _is_injective(self):
        return all(t._is_injective() for t in self._transforms)

    def _map(self, x, method, fn):
        rank = len(x.shape)
        if not -rank <= self._axis < rank or x.shape[self._axis] != len(self._transforms):
            raise ValueError(f"[{self._api(method)}] the input needs {len(self._transforms)} slices along axis "
                             f"{self._axis}, got shape {list(x.shape)}")
        parts = oar.unbind(x, self._axis)
        return _C.stack([fn(t, p) for t, p in zip(self._transforms, parts)], self._axis)

    def _forward(self, x):
        return self._map(x, "forward", lambda t, p: t.forward(p))

    def _inverse(self, y):
        return self._map(y, "inverse", lambda t, p: t.inverse(p))

    def _forward_log_det_jacobian(self, x):
        return self._map(x, "forward_log_det_jacobian", lambda t, p: t.forward_log_det_jacobian(p))


class StickBreakingTransform(Transform):
    """Maps x in R^K to a point of the simplex in R^(K+1) by stick breaking:
    z_i = sigmoid(x_i - log(K - i)), y_i = z_i prod_{j<i} (1 - z_j), y_K = prod (1 - z_j).

    >>> import oar
    >>> from oar.distribution import StickBreakingTransform
    >>> t = StickBreakingTransform()
    >>> y = t.forward(oar.to_tensor([0.0, 0.0]))
    >>> [round(v, 4) for v in y.numpy().tolist()]
    [0.3333, 0.3333, 0.3333]
    >>> [round(v, 4) + 0.0 for v in t.inverse(y).numpy().tolist()]
    [0.0, 0.0]
    """

    _type = Type.BIJECTION
    _domain_rank = 1
    _codomain_rank = 1

    def _offset(self, k, dtype):
        return _C.arange(k, 0, -1, dtype)  # K, K-1, ..., 1 so that x = 0 maps to the centre

    def _forward(self, x):
        k = x.shape[-1]
        z = _C.sigmoid(x - self._offset(k, x.dtype).log())
        rest = _C.cumprod(1 - z, -1)
        ones = _C.ones(list(x.shape[:-1]) + [1], x.dtype)
        return _C.concat([z, ones], -1) * _C.concat([ones, rest], -1)

    def _inverse(self, y):
        head = y[..., :-1]
        k = head.shape[-1]
        remaining = (1 - _C.cumsum(head, -1)).clip(min=tiny(y.dtype))
        return head.log() - remaining.log() + self._offset(k, y.dtype).log()

    def _forward_log_det_jacobian(self, x):
        k = x.shape[-1]
        t = x - self._offset(k, x.dtype).log()
        y = self._forward(x)
        # J is triangular with diagonal dy_i/dx_i = (1 - z_i) y_i, and log(1 - z_i) = -softplus(t_i)
        return (-softplus(t) + y[..., :-1].log()).sum(axis=-1)

    def _forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"[{self._api('forward_shape')}] needs at least one dimension, got {list(shape)}")
        return shape[:-1] + (shape[-1] + 1,)

    def _inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"[{self._api('inverse_shape')}] needs at least one dimension, got {list(shape)}")
        return shape[:-1] + (shape[-1] - 1,)


class TanhTransform(Transform):
    """y = tanh(x).

    >>> import oar
    >>> from oar.distribution import TanhTransform
    >>> t = TanhTransform()
    >>> round(float(t.inverse(t.forward(oar.to_tensor(0.5)))), 4)
    0.5
    >>> round(float(t.forward_log_det_jacobian(oar.to_tensor(0.0))), 4)
    0.0
    """

    _type = Type.BIJECTION

    def _forward(self, x):
        return x.tanh()

    def _inverse(self, y):
        return _C.atanh(y)

    def _forward_log_det_jacobian(self, x):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)), stable for large |x|
        return 2 * (math.log(2.0) - x - softplus(-2 * x))
