"""Tensor attributes and methods of paddle.Tensor beyond the ops: storage facts, naming, conversions.

Storage facts follow Paddle's units: `strides` and `stride()` count elements,
`offset` counts bytes from the start of the storage, `inplace_version` is the
storage's write counter that autograd checks (views share it with their base).

Note [tensor names]: Paddle names every tensor (generated_tensor_N) and makes
every tensor answer `persistable` (False by default). Here both are set-only
for now: a tensor that was given none has no `name` / `persistable` attribute
(reading it raises AttributeError, as `trainable` does), because oar's
optimizers, static programs and layers tell parameters and user-named tensors
from the rest with getattr(t, "name", None) / hasattr(t, "persistable"); an
optimizer keyed by generated names would not resume in another process. Once
those sites read ``t.__dict__.get("name")`` / ``"persistable" in t.__dict__``,
`_name_get` and `_persistable_get` can return Paddle's defaults. Values that
are set are type-checked and live in the tensor's ``__dict__``.
"""
import builtins
import numbers

import numpy as np

from . import _C
from ._shape_index import _check_inplace, _source, _tensor, _write
from ._index import nonzero
from .creation import rank  # noqa: F401 - a Tensor method
from .framework import _dtype
from .framework_param import _unique_name, create_parameter  # noqa: F401 - a Tensor method

Tensor = _C.Tensor

__all__ = ["argwhere"]


# ---------------------------------------------------------------- where the tensor lives

class Device(str):
    """The device a tensor is on, as Paddle's ``Tensor.device``: a string ('cpu', 'cuda:0') with
    `type` and `index` (None on the CPU).

    >>> import oar
    >>> d = oar.to_tensor([1.0]).device
    >>> d, d.type, d.index
    ('cpu', 'cpu', None)
    """

    def __new__(cls, kind, index=None):
        obj = str.__new__(cls, "cpu" if kind == "cpu" else f"{kind}:{index}")
        obj._kind, obj._index = kind, (None if kind == "cpu" else int(index))
        return obj

    @property
    def type(self):
        return self._kind

    @property
    def index(self):
        return self._index


def _device(self):
    """The device this tensor is on ('cpu' or 'cuda:N'), a str with `type` and `index`.

    >>> import oar
    >>> oar.ones([2]).device
    'cpu'
    """
    kind, index = _C._device_index(self)
    if kind == 0:
        return Device("cpu")
    return Device("cuda" if kind == 1 else _C._device_type_name(kind), index)


def get_device(self):
    """The index of the GPU or plugin device this tensor is on, or -1 on the CPU.

    >>> import oar
    >>> oar.ones([2]).get_device()
    -1
    """
    kind, index = _C._device_index(self)
    return -1 if kind == 0 else int(index)


def _is_cuda(self):
    """Whether this tensor is on a GPU.

    >>> import oar
    >>> oar.ones([2]).is_cuda
    False
    """
    return _C._device_index(self)[0] == 1


def pin_memory(self, blocking=True):
    """This tensor in host memory: itself when it is on the CPU, a host copy of a GPU tensor.
    oar has no separate page-locked place; host tensors are what GPU copies read from.

    >>> import oar
    >>> x = oar.ones([2])
    >>> x.pin_memory() is x
    True
    """
    return self.cpu()


def is_dense(self):
    """Whether this is a dense (non-distributed) tensor, as all oar tensors outside oar.distributed are.

    >>> import oar
    >>> oar.ones([2]).is_dense()
    True
    """
    return not self.is_dist()


def _layout(self):
    """The data layout name of a dense tensor: 'NCHW', as Paddle reports for every dense tensor.

    >>> import oar
    >>> oar.ones([2, 3]).layout
    'NCHW'
    """
    return "NCHW"


# ---------------------------------------------------------------- storage facts

def get_strides(self):
    """The strides of this tensor, in elements (as ``Tensor.strides``).

    >>> import oar
    >>> oar.ones([2, 3]).get_strides()
    [3, 1]
    >>> oar.ones([2, 3]).t().get_strides()
    [1, 3]
    """
    return list(self.strides)


def stride(self, dim=None):
    """The strides in elements, or the stride of one dim when `dim` is given.

    >>> import oar
    >>> x = oar.ones([2, 3])
    >>> x.stride(), x.stride(0), x.stride(-1)
    ([3, 1], 3, 1)
    """
    strides = list(self.strides)
    if dim is None:
        return strides
    if isinstance(dim, builtins.bool) or not isinstance(dim, (numbers.Integral, np.integer)):
        raise TypeError(f"[oar.Tensor.stride] dim must be an int or None, got {type(dim).__name__}")
    n = len(strides)
    d = int(dim)
    if not -n <= d < n:
        raise ValueError(f"[oar.Tensor.stride] dim {d} is out of range for a {n}-D tensor "
                         f"(expected {-n} <= dim < {n})")
    return strides[d]


def _offset(self):
    """Where this tensor's first element is, in bytes from the start of its storage.

    >>> import oar
    >>> x = oar.ones([2, 3], dtype="float64")
    >>> x.offset, x[1].offset, x[:, 1:].offset
    (0, 24, 8)
    """
    return int(self._offset) * self.element_size()


def _inplace_version(self):
    """How many times the storage of this tensor was written in place (views share the count);
    autograd compares it to detect a saved tensor that was overwritten.

    >>> import oar
    >>> x = oar.ones([3])
    >>> x.inplace_version
    0
    >>> _ = x.add_(x); x[0] = 5.0
    >>> x.inplace_version
    2
    """
    return int(self._version)


# ---------------------------------------------------------------- names and flags (Note [tensor names])

def _name_get(self):
    """The tensor's name (a str), once one was set; parameters are named when created
    (Note [tensor names]).

    >>> import oar
    >>> x = oar.ones([2])
    >>> hasattr(x, "name")
    False
    >>> x.name = "weights"; x.name
    'weights'
    >>> oar.create_parameter([2], "float32", name="w").name
    'w'
    """
    name = self.__dict__.get("name")
    if name is None:
        raise AttributeError("'Tensor' object has no attribute 'name' (none was set)")
    return name


def _name_set(self, value):
    if not isinstance(value, str):
        raise TypeError(f"[oar.Tensor.name] a name must be a str, got {type(value).__name__}")
    self.__dict__["name"] = value


def _persistable_get(self):
    """Whether the tensor is kept with the model's state, once set; parameters set it to True
    (Note [tensor names]).

    >>> import oar
    >>> oar.create_parameter([2], "float32").persistable
    True
    >>> x = oar.ones([2])
    >>> x.persistable = False; x.persistable
    False
    """
    d = self.__dict__
    if "persistable" not in d:
        raise AttributeError("'Tensor' object has no attribute 'persistable' (none was set)")
    return d["persistable"]


def _persistable_set(self, value):
    if not isinstance(value, (builtins.bool, np.bool_)):
        raise TypeError(f"[oar.Tensor.persistable] expects a bool, got {type(value).__name__}")
    self.__dict__["persistable"] = builtins.bool(value)


# ---------------------------------------------------------------- data and rebinding

def _rebind(x, src, api):
    """Gives x the storage, shape, strides and dtype of src (Note [in-place shape change] in _shape_index)."""
    if _C._ir_is_tracing():
        raise NotImplementedError(f"[{api}] a graph being traced (oar.jit.to_static) cannot give a tensor "
                                  f"other data in place")
    if x.grad_fn is not None:
        raise ValueError(f"[{api}] the tensor is the result of an op recorded by autograd (it has a grad_fn) "
                         f"and cannot take other data; detach it first")
    _C._set_data_(x, src)
    return x


def _data_get(self):
    """The tensor's data outside autograd: a tensor sharing its memory with stop_gradient=True.
    Setting it makes the tensor share the data (storage, shape and dtype) of another tensor,
    keeping its own autograd flags and gradient.

    >>> import oar
    >>> w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> w.data.stop_gradient
    True
    >>> w.data = oar.to_tensor([5.0, 6.0, 7.0])
    >>> w.numpy().tolist(), w.stop_gradient
    ([5.0, 6.0, 7.0], False)
    """
    return self.detach()


def _data_set(self, value):
    api = "oar.Tensor.data"
    _tensor(value, api, "the value")
    grad = self.grad
    _rebind(self, value, api)
    if grad is not None and list(grad.shape) == list(self.shape):
        self.grad = grad


def reconstruct_from_(self, other):
    """Makes this tensor `other` again: its data (shared), stop_gradient and gradient.

    >>> import oar
    >>> t1 = oar.to_tensor([1.0], stop_gradient=False)
    >>> t2 = oar.to_tensor([2.0, 3.0])
    >>> t1.reconstruct_from_(t2)
    >>> t1.numpy().tolist(), t1.stop_gradient
    ([2.0, 3.0], True)
    """
    api = "oar.Tensor.reconstruct_from_"
    _tensor(other, api, "other")
    if other is self:
        return None
    grad = other.grad
    _rebind(self, other, api)
    self.stop_gradient = other.stop_gradient
    self.grad = grad
    return None


def _apply_check(self, func, api):
    if not callable(func):
        raise TypeError(f"[{api}] func must be callable, got {type(func).__name__}")
    if not self.stop_gradient:
        raise RuntimeError(f"[{api}] cannot apply a function to a tensor that requires grad "
                           f"(stop_gradient=False)")


def _apply_result(out, api):
    if not isinstance(out, Tensor):
        raise TypeError(f"[{api}] func must return a Tensor, got {type(out).__name__}")
    return out


def apply(self, func):
    """func(self) for a tensor outside autograd; the result must be a tensor.

    >>> import oar
    >>> x = oar.to_tensor([0.5, 1.5])
    >>> x.apply(lambda t: t * 2).numpy().tolist()
    [1.0, 3.0]
    """
    api = "oar.Tensor.apply"
    _apply_check(self, func, api)
    return _apply_result(func(self), api)


def apply_(self, func):
    """Replaces this tensor's data by func(self) (whose shape and dtype it takes) and returns it.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.apply_(lambda t: t.sum()) is x, x.numpy().tolist()
    (True, 10.0)
    """
    api = "oar.Tensor.apply_"
    _apply_check(self, func, api)
    out = _apply_result(func(self), api)
    return self if out is self else _rebind(self, out, api)


def gradient(self):
    """The gradient as a NumPy array, or None when there is none.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> (x * x).sum().backward()
    >>> x.gradient().tolist()
    [2.0, 4.0]
    """
    g = self.grad
    return None if g is None else g.numpy()


def _grad_get(self):
    """Another name of ``Tensor.grad`` (read and write).

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> (3 * x).sum().backward()
    >>> x.grad_.numpy().tolist()
    [3.0, 3.0]
    """
    return self.grad


def _grad_set(self, value):
    self.grad = value


# ---------------------------------------------------------------- set_ and resize_

def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= builtins.max(int(n), 1)
    return strides[::-1]


class _StorageWindow:
    """Part of a CPU tensor's storage described to NumPy (the array interface). It holds a
    detached handle of the storage, which nothing else can rebind, so the memory lives as
    long as any array or tensor made over the window."""

    def __init__(self, owner, interface):
        self.owner = owner
        self.__array_interface__ = interface


def _storage_window(source, shape, strides, start, api):
    """A tensor over `source`'s storage from element `start` with `strides` (elements), sharing
    its memory: NumPy reads the window and oar wraps the array without copying."""
    if _C._device_index(source)[0] != 0 or source.dtype == _C.dtype.bfloat16:
        raise NotImplementedError(f"[{api}] a view with a given shape, stride or offset is available for CPU "
                                  f"tensors of NumPy dtypes; got a {source.dtype.name} tensor on {source.place}")
    item = source.element_size()
    window = _StorageWindow(source.detach(), {
        "version": 3, "typestr": np.dtype(source.dtype.name).str, "shape": tuple(shape),
        "strides": tuple(s * item for s in strides), "data": (source._storage_ptr() + start * item, False)})
    return _C.from_numpy(np.asarray(window))


def _ints_arg(v, api, what):
    if isinstance(v, Tensor):
        v = v.numpy().tolist()
    if not isinstance(v, (list, tuple)) or not builtins.all(
            isinstance(i, (numbers.Integral, np.integer)) and not isinstance(i, builtins.bool) for i in v):
        raise TypeError(f"[{api}] {what} must be a list or tuple of ints, got {v!r}")
    return [int(i) for i in v]


def set_(self, source=None, shape=None, stride=None, offset=0, name=None):
    """Makes this tensor share `source`'s storage: as `source` itself, or with the given `shape`,
    `stride` (elements; row-major for `shape` by default) and `offset` (bytes from the
    start of the storage). Without `source` the tensor becomes empty (shape [0]). A view
    must stay within the part of the storage `source` covers.

    >>> import oar
    >>> src = oar.to_tensor([11.0, 22.0, 33.0, 44.0, 55.0, 66.0])
    >>> x = oar.to_tensor([1.0, 2.0])
    >>> x.set_(src, shape=[3], stride=[2]).numpy().tolist()
    [11.0, 33.0, 55.0]
    >>> x.set_(src, shape=[2, 2], offset=8).numpy().tolist()
    [[33.0, 44.0], [55.0, 66.0]]
    >>> src[2] = 0.0; x.numpy().tolist()
    [[0.0, 44.0], [55.0, 66.0]]
    """
    api = "oar.Tensor.set_"
    _check_inplace(self, api)
    if source is None:
        if shape is not None or stride is not None or offset:
            raise ValueError(f"[{api}] shape, stride and offset need a source tensor")
        return _rebind(self, _C.full([0], 0, self.dtype), api)
    _tensor(source, api, "source")
    if source.dtype != self.dtype:
        raise TypeError(f"[{api}] source must have the tensor's dtype {self.dtype.name}, got {source.dtype.name}")
    if shape is None and stride is None and not offset:
        return _rebind(self, source, api)
    shape = list(source.shape) if shape is None else _ints_arg(shape, api, "shape")
    stride = _contiguous_strides(shape) if stride is None else _ints_arg(stride, api, "stride")
    if len(stride) != len(shape):
        raise ValueError(f"[{api}] shape {shape} and stride {stride} must have the same length")
    if builtins.any(n < 0 for n in shape) or builtins.any(s < 0 for s in stride):
        raise ValueError(f"[{api}] shape and stride must be non-negative, got {shape} and {stride}")
    item = source.element_size()
    if isinstance(offset, builtins.bool) or not isinstance(offset, (numbers.Integral, np.integer)):
        raise TypeError(f"[{api}] offset must be an int (bytes), got {type(offset).__name__}")
    offset = int(offset)
    if offset < 0 or offset % item:
        raise ValueError(f"[{api}] offset counts bytes and must be a non-negative multiple of the element size "
                         f"{item}, got {offset}")
    start = offset // item
    if builtins.all(n > 0 for n in shape):
        last = start + builtins.sum((n - 1) * s for n, s in zip(shape, stride))
        covered = int(source._offset) + builtins.sum((n - 1) * s for n, s in zip(source.shape, source.strides)) \
            if source.size else -1
        if last > covered:
            raise ValueError(f"[{api}] the view reaches element {last} of the storage, but the source covers "
                             f"elements 0..{covered} only")
    return _rebind(self, _storage_window(source, shape, stride, start, api), api)


def resize_(self, shape, fill_zero=False, name=None):
    """Gives this tensor `shape` in place, keeping its first elements in row-major order; new
    elements are zeros (`fill_zero` is accepted for Paddle's signature; they are always zeroed).

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.resize_([3]).numpy().tolist()
    [1.0, 2.0, 3.0]
    >>> x.resize_([5]).numpy().tolist()
    [1.0, 2.0, 3.0, 0.0, 0.0]
    """
    api = "oar.Tensor.resize_"
    _check_inplace(self, api)
    shape = _ints_arg(shape, api, "shape")
    if builtins.any(n < 0 for n in shape):
        raise ValueError(f"[{api}] shape entries must be non-negative, got {shape}")
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    flat = _C.reshape(self.detach(), [-1])
    if n <= flat.size:
        out = _C.strided_slice(flat, [0], [0], [n], [1])
    else:
        out = _C._concat([flat, _C.full([n - flat.size], 0, self.dtype)], 0)
    return _rebind(self, _C.reshape(out, shape), api)


# ---------------------------------------------------------------- top-p sampling

def _row_vector(t, bs, api, what):
    _tensor(t, api, what)
    if list(t.shape) not in ([bs], [bs, 1]):
        raise ValueError(f"[{api}] {what} must have shape [{bs}] (one value per row of x), got {t.shape}")
    return _C.reshape(_C.cast(t, _C.dtype.float32) if t.dtype != _C.dtype.float32 else t, [bs, 1])


def _uniforms(shape, seed, topp_seed, like, api):
    """U(0, 1) samples: from per-row seeds, from one seed, or from oar's generator (seed=-1)."""
    from ._math_common import _from_numpy
    if topp_seed is not None:
        _tensor(topp_seed, api, "topp_seed")
        seeds = topp_seed.numpy().reshape(-1)
        if seeds.size != shape[0] or not np.issubdtype(seeds.dtype, np.integer):
            raise ValueError(f"[{api}] topp_seed must hold one integer seed per row ({shape[0]}), got "
                             f"{topp_seed.dtype.name} of shape {topp_seed.shape}")
        rows = [np.random.default_rng(int(s)).random(shape[1:], dtype=np.float32) for s in seeds]
        return _from_numpy(np.stack(rows).reshape(shape), like)
    if seed >= 0:
        return _from_numpy(np.random.default_rng(seed).random(shape, dtype=np.float32), like)
    from ._random import rand
    return _C._to_device(rand(shape, "float32"), *_C._device_index(like)) \
        if _C._device_index(like)[0] != 0 else rand(shape, "float32")


def top_p_sampling(x, ps, threshold=None, topp_seed=None, seed=-1, k=0, mode="truncated", return_top=False,
                   name=None):
    """Draws one token per row of the probabilities `x` [batch, vocab] from its top-p nucleus: the
    most probable tokens whose cumulative probability first reaches ps[i]. Returns the
    drawn (probability [batch, 1], id [batch, 1] int64); with `return_top` also the `k` largest
    probabilities and their ids ([batch, k]).

    mode 'truncated' draws u ~ U(0, ps[i]) and takes the first token (by decreasing
    probability) whose cumulative probability reaches u, so the last token of the nucleus
    counts only up to ps[i]; 'non-truncated' draws among the nucleus tokens in proportion to
    their whole probabilities. A drawn token below threshold[i] is replaced by the last token
    at or above it ('truncated') or not drawn ('non-truncated'); a row whose probabilities
    never reach the drawn u ('truncated') or ps[i] ('non-truncated') gives its most probable token. `topp_seed` (one seed per row) or a
    non-negative `seed` make the draw reproducible; by default oar's generator draws (oar.seed).
    Not differentiable.

    >>> import oar
    >>> probs = oar.to_tensor([[0.1, 0.6, 0.3], [0.05, 0.05, 0.9]])
    >>> value, index = oar.Tensor.top_p_sampling(probs, oar.to_tensor([0.5, 0.5]))
    >>> index.numpy().tolist(), value.numpy().tolist()
    ([[1], [2]], [[0.6000000238418579], [0.8999999761581421]])
    >>> _, _, top_scores, top_ids = probs.top_p_sampling(oar.to_tensor([0.9, 0.9]), k=2, return_top=True)
    >>> top_ids.numpy().tolist()
    [[1, 2], [2, 0]]
    """
    from ._index import topk
    from .autograd import no_grad
    api = "oar.top_p_sampling"
    _tensor(x, api)
    if x.ndim != 2 or not x.dtype.is_floating_point:
        raise ValueError(f"[{api}] x must be a 2-D floating-point tensor [batch, vocab], got "
                         f"{x.dtype.name} of shape {x.shape}")
    bs, vocab = x.shape
    if vocab == 0:
        raise ValueError(f"[{api}] x must have at least one token per row, got shape {x.shape}")
    if mode not in ("truncated", "non-truncated"):
        raise ValueError(f"[{api}] mode must be 'truncated' or 'non-truncated', got {mode!r}")
    if isinstance(seed, builtins.bool) or not isinstance(seed, (numbers.Integral, np.integer)):
        raise TypeError(f"[{api}] seed must be an int, got {type(seed).__name__}")
    if isinstance(k, builtins.bool) or not isinstance(k, (numbers.Integral, np.integer)) or not 0 <= k <= vocab:
        raise ValueError(f"[{api}] k must be an int in [0, {vocab}], got {k!r}")
    p = _row_vector(ps, bs, api, "ps")
    f32 = _C.dtype.float32
    with no_grad():
        vals, ids = topk(x.detach(), vocab, axis=-1)
        v32 = vals if vals.dtype == f32 else _C.cast(vals, f32)
        cum = _C.cumsum(v32, 1)
        thr = _C.full([bs, 1], 0.0, f32) if threshold is None else _row_vector(threshold, bs, api, "threshold")
        i64 = _C.dtype.int64
        zero = _C.full([], 0, i64)
        if mode == "truncated":
            target = _C.multiply(_uniforms([bs, 1], int(seed), topp_seed, x, api), p)
            pos = _C.sum(_C.cast(_C.less_than(cum, target), i64), [1], None, True)
            pos = _C.minimum(pos, _C.full([], vocab - 1, i64))
            # Below the threshold: the last token at or above it (the first token if none is).
            above = _C.sum(_C.cast(_C.greater_equal(v32, thr), i64), [1], None, True)
            low = _C.less_than(_C._take_along_axis(v32, pos, 1, False), thr)
            pos = _C.where(low, _C.maximum(_C.subtract(above, _C.full([], 1, i64)), zero), pos)
        else:
            # An exponential race: the argmax of w / E with E ~ Exp(1) draws in proportion to w.
            target = p
            race = _C.neg(_C.log1p(_C.neg(_uniforms([bs, vocab], int(seed), topp_seed, x, api))))
            inside = _C.less_than(_C.subtract(cum, v32), p)
            w = _C.where(_C.logical_and(inside, _C.greater_equal(v32, thr)), v32, _C.full([], 0.0, f32))
            score = _C.where(_C.greater_than(w, _C.full([], 0.0, f32)), _C.divide(w, race), _C.full([], 0.0, f32))
            pos = _C.argmax(score, 1, True)
        # A row whose probabilities never reach the target gives its most probable token.
        reached = _C.greater_equal(_C.strided_slice(cum, [1], [vocab - 1], [vocab], [1]), target)
        pos = _C.where(reached, pos, zero)
        out = (_C._take_along_axis(vals, pos, 1, False), _C._take_along_axis(ids, pos, 1, False))
        if not return_top:
            return out
        return out + (_C.strided_slice(vals, [1], [0], [k], [1]), _C.strided_slice(ids, [1], [0], [k], [1]))


# ---------------------------------------------------------------- small functions and methods

def argwhere(input):
    """The coordinates of the non-zero elements of `input`: an int64 tensor [count, input.ndim].

    >>> import oar
    >>> oar.argwhere(oar.to_tensor([[0, 1], [2, 0]])).numpy().tolist()
    [[0, 1], [1, 0]]
    """
    _tensor(input, "oar.argwhere", "input")
    if input.ndim == 0:
        raise ValueError("[oar.argwhere] input must have at least 1 dim, got a 0-D tensor")
    return nonzero(input)


def lerp_(x, y, weight, name=None):
    """oar.lerp in place: x becomes x + weight * (y - x) and is returned.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0])
    >>> x.lerp_(oar.to_tensor([3.0, 4.0]), 0.5).numpy().tolist()
    [2.0, 3.0]
    """
    from ._linalg_ext import lerp
    api = "oar.Tensor.lerp_"
    return _write(x, lerp(_source(x, api), y, weight), api)


def _cast_method(dtype, doc):
    def cast(self):
        return self if self.dtype == dtype else self.astype(dtype)
    cast.__doc__ = doc
    return cast


cfloat = _cast_method(_C.dtype.complex64, """This tensor as complex64 (itself if it is complex64 already).

    >>> import oar
    >>> oar.to_tensor([1.0, 2.0]).cfloat().dtype
    paddle.complex64
    """)
cdouble = _cast_method(_C.dtype.complex128, """This tensor as complex128 (itself if it is complex128 already).

    >>> import oar
    >>> oar.to_tensor([1, 2]).cdouble().dtype
    paddle.complex128
    """)


def _mT(self):
    """The tensor with its last two dims swapped (a batch of transposed matrices).

    >>> import oar
    >>> oar.ones([4, 2, 3]).mT.shape
    [4, 3, 2]
    """
    if self.ndim < 2:
        raise ValueError(f"[oar.Tensor.mT] needs a tensor of at least 2 dims, got {self.ndim}-D")
    perm = list(range(self.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return _C.transpose(self, perm)


def create_tensor(dtype, name=None, persistable=False):
    """An empty tensor (shape [0]) of `dtype` to be filled later (e.g. by oar.assign(x, output=t)).

    >>> import oar
    >>> t = oar.Tensor.create_tensor("int64", name="counter", persistable=True)
    >>> t.shape, t.dtype, t.name, t.persistable
    ([0], paddle.int64, 'counter', True)
    """
    api = "oar.create_tensor"
    if name is not None and not isinstance(name, str):
        raise TypeError(f"[{api}] name must be a str or None, got {type(name).__name__}")
    try:
        dt = _dtype(dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"[{api}] dtype must be an oar dtype or its name, got {dtype!r}") from e
    t = _C.full([0], 0, dt)
    t.name = name if name is not None else _unique_name("create_tensor")
    t.persistable = builtins.bool(persistable)
    return t


def _block(self):
    """The global block of the current main program (oar.static.default_main_program()).

    >>> import oar
    >>> oar.ones([1]).block is oar.static.default_main_program().global_block()
    True
    """
    from . import static
    return static.default_main_program().global_block()


def _shift_operand(self, y):
    return y if isinstance(y, Tensor) else _C.full([], y, self.dtype)


def _lshift(self, y):
    from ._math_ext import bitwise_left_shift
    return bitwise_left_shift(self, _shift_operand(self, y))


def _rshift(self, y):
    from ._math_ext import bitwise_right_shift
    return bitwise_right_shift(self, _shift_operand(self, y))


def _rlshift(self, y):
    from ._math_ext import bitwise_left_shift
    return bitwise_left_shift(_shift_operand(self, y), self)


def _rrshift(self, y):
    from ._math_ext import bitwise_right_shift
    return bitwise_right_shift(_shift_operand(self, y), self)


def _pos(self):
    from ._math_ext import positive
    return positive(self)


def _late(module, attr):
    """A method that calls `module.attr`, looked up when called (the module may load after this one)."""
    def method(self, *args, **kwargs):
        import importlib
        return getattr(importlib.import_module(f"{__package__}.{module}"), attr)(self, *args, **kwargs)
    method.__name__ = attr
    return method


# Note [Tensor methods]: the functions and properties here that are Tensor attributes.
__tensor_methods__ = (
    ("device", property(_device)), "get_device", ("is_cuda", property(_is_cuda)), "pin_memory", "is_dense",
    ("layout", property(_layout)),
    "get_strides", "stride", ("offset", property(_offset)), ("inplace_version", property(_inplace_version)),
    ("name", property(_name_get, _name_set)), ("persistable", property(_persistable_get, _persistable_set)),
    ("data", property(_data_get, _data_set)), "reconstruct_from_", "apply", "apply_", "gradient",
    ("grad_", property(_grad_get, _grad_set)), "set_", "resize_",
    "argwhere", "lerp_", "top_p_sampling", "cfloat", "cdouble", ("mT", property(_mT)), "rank", "create_parameter", "create_tensor",
    ("block", property(_block)),
    ("nan_to_num_", _late("_framework_ext", "nan_to_num_")),
    ("__pos__", _pos), ("__lshift__", _lshift), ("__rshift__", _rshift), ("__rlshift__", _rlshift),
    ("__rrshift__", _rrshift),
)
