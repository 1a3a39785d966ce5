"""Shape, manipulation and creation functions of the paddle namespace written over the core ops:
dimensions and conversions, broadcasting, joining and splitting, axes, ranges, dtype aliases.
Diagonals, scatters, in-place forms and Tensor-only methods are in _shape_index; this
module exports both (and names both modules' Tensor methods, Note [Tensor methods]).
"""
import builtins
import itertools

import numpy as np

from . import _C
from . import _shape_index
from ._manip import _int, _ints, _tensors, concat, flip, split, unbind
from ._shape_index import *  # noqa: F401,F403
from ._shape_index import _assign_out, _axis, _broadcast, _gather_flat, _slice, _tensor
from .creation import _from_host, to_tensor
from .framework import _dtype

Tensor = _C.Tensor

__all__ = [
    # dimensions, views and conversions
    "atleast_1d", "atleast_2d", "atleast_3d", "as_complex", "as_real", "view_as_complex", "view_as_real",
    "as_strided", "as_tensor", "asarray", "from_numpy", "assign", "view", "view_as", "tolist", "check_shape",
    # broadcasting
    "broadcast_shape", "broadcast_shapes", "broadcast_tensors", "expand_as",
    # joining and splitting
    "cat", "concatenate", "column_stack", "row_stack", "hstack", "vstack", "dstack", "hsplit", "vsplit",
    "dsplit", "tensor_split", "unstack", "block_diag", "cartesian_prod", "combinations",
    # axes
    "matrix_transpose", "moveaxis", "swapaxes", "swapdims", "permute", "narrow", "ravel", "reverse", "rot90",
    "unflatten", "unfold", "crop",
    # creation
    "range", "tril_indices", "triu_indices",
    # dtype aliases (Note [dtype aliases])
    "float", "double", "half", "cfloat", "cdouble", "long", "int", "short",
] + _shape_index.__all__


# ---------------------------------------------------------------- dimensions and conversions

def _atleast(inputs, nd, api):
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    if not inputs:
        raise ValueError(f"[{api}] expects at least one input")
    outs = []
    for t in inputs:
        t = t if isinstance(t, Tensor) else to_tensor(t)
        shape = list(t.shape)
        if len(shape) < nd:
            if nd == 3 and len(shape) == 2:
                shape = shape + [1]
            elif nd == 3 and len(shape) == 1:
                shape = [1] + shape + [1]
            else:
                shape = [1] * (nd - len(shape)) + shape
            t = _C.reshape(t, shape)
        outs.append(t)
    return outs[0] if len(outs) == 1 else outs


def atleast_1d(*inputs, name=None):
    """Each input as a tensor with at least one dim (0-D becomes [1]); one input gives one tensor,
    several give a list.

    >>> import oar
    >>> oar.atleast_1d(oar.to_tensor(3.0)).shape
    [1]
    >>> [t.shape for t in oar.atleast_1d(oar.to_tensor(1), oar.ones([2, 2]))]
    [[1], [2, 2]]
    """
    return _atleast(inputs, 1, "oar.atleast_1d")


def atleast_2d(*inputs, name=None):
    """Each input with at least two dims (new axes in front).

    >>> import oar
    >>> oar.atleast_2d(oar.to_tensor([1, 2])).shape
    [1, 2]
    """
    return _atleast(inputs, 2, "oar.atleast_2d")


def atleast_3d(*inputs, name=None):
    """Each input with at least three dims: [n] becomes [1, n, 1] and [m, n] becomes [m, n, 1].

    >>> import oar
    >>> oar.atleast_3d(oar.to_tensor([1, 2])).shape
    [1, 2, 1]
    >>> oar.atleast_3d(oar.ones([2, 3])).shape
    [2, 3, 1]
    """
    return _atleast(inputs, 3, "oar.atleast_3d")


def as_complex(x, name=None):
    """The complex tensor whose real and imaginary parts are x[..., 0] and x[..., 1]
    (float32 gives complex64, float64 complex128). A new tensor: no memory is shared.

    >>> import oar
    >>> oar.as_complex(oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()
    [(1+2j), (3+4j)]
    """
    api = "oar.as_complex"
    _tensor(x, api)
    if x.dtype not in (_C.dtype.float32, _C.dtype.float64):
        raise TypeError(f"[{api}] x must be float32 or float64, got {str(x.dtype).split('.')[-1]}")
    if x.ndim == 0 or x.shape[-1] != 2:
        raise ValueError(f"[{api}] the last dim of x must have size 2, got shape {x.shape}")
    last = x.ndim - 1
    return _C.complex(_C.squeeze(_slice(x, last, 0, 1), [last]), _C.squeeze(_slice(x, last, 1, 2), [last]))


def as_real(x, name=None):
    """The real tensor [..., 2] holding the real and imaginary parts of complex x.
    A new tensor: no memory is shared.

    >>> import oar
    >>> oar.as_real(oar.to_tensor([1 + 2j])).numpy().tolist()
    [[1.0, 2.0]]
    """
    api = "oar.as_real"
    _tensor(x, api)
    if not x.dtype.is_complex:
        raise TypeError(f"[{api}] x must be complex64 or complex128, got {str(x.dtype).split('.')[-1]}")
    return _C._stack([_C.real(x), _C.imag(x)], -1)


def view_as_complex(input):  # noqa: A002 - Paddle's argument name
    """as_complex under its view_ name (the result does not share memory with input).

    >>> import oar
    >>> oar.view_as_complex(oar.to_tensor([0.0, 1.0])).numpy().tolist()
    1j
    """
    return as_complex(input)


def view_as_real(input):  # noqa: A002
    """as_real under its view_ name (the result does not share memory with input).

    >>> import oar
    >>> oar.view_as_real(oar.to_tensor(2j)).numpy().tolist()
    [0.0, 2.0]
    """
    return as_real(input)


def as_strided(x, shape, stride, offset=0, name=None):
    """The tensor of `shape` whose element [i, j, ...] is element offset/itemsize + i*stride[0] +
    j*stride[1] + ... of x's row-major data. As in Paddle, `offset` counts bytes and `stride`
    elements. The result is a new tensor (it does not share memory with x) and is
    differentiable: repeated positions accumulate their gradients.

    >>> import oar
    >>> x = oar.arange(6).astype("float32")
    >>> oar.as_strided(x, [2, 2], [1, 2]).numpy().tolist()
    [[0.0, 2.0], [1.0, 3.0]]
    >>> oar.as_strided(x, [2], [3], offset=4).numpy().tolist()
    [1.0, 4.0]
    """
    api = "oar.as_strided"
    _tensor(x, api)
    shape = _ints(shape, api, "shape")
    stride = _ints(stride, api, "stride")
    offset = _int(offset, api, "offset")
    if len(shape) != len(stride):
        raise ValueError(f"[{api}] shape and stride must have the same length, got {shape} and {stride}")
    if builtins.any(s < 0 for s in shape) or builtins.any(s < 0 for s in stride):
        raise ValueError(f"[{api}] shape and stride must be non-negative, got {shape} and {stride}")
    item = x.element_size()
    if offset < 0 or offset % item:
        raise ValueError(f"[{api}] offset counts bytes and must be a non-negative multiple of the element size "
                         f"{item}, got {offset}")
    pos = np.full(shape, offset // item, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, stride)):
        view = [1] * len(shape)
        view[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(view)
    if pos.size and pos.max() >= x.size:
        raise ValueError(f"[{api}] shape {shape}, stride {stride} and offset {offset} reach element {pos.max()} "
                         f"but x has {x.size} elements")
    return _gather_flat(x, pos)


def as_tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """data as a Tensor: a Tensor already of that dtype and device is returned itself, anything
    else is converted as by ``oar.to_tensor``.

    >>> import oar
    >>> t = oar.to_tensor([1.0, 2.0])
    >>> oar.as_tensor(t) is t
    True
    >>> oar.as_tensor([1, 2], dtype="float64").numpy().tolist()
    [1.0, 2.0]
    """
    dt = _dtype(dtype)
    if isinstance(data, Tensor):
        out = data if dt is None or data.dtype == dt else _C.cast(data, dt)
        if device is not None:
            out = out.to(device)
        if requires_grad:
            out.stop_gradient = False
        return out
    return to_tensor(data, dt, place=device, stop_gradient=not requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """obj as a Tensor, as ``as_tensor``; copy=True always copies, copy=False refuses to
    (and so accepts only a Tensor that needs no conversion).

    >>> import oar
    >>> oar.asarray([[1, 2]], dtype="float32").numpy().tolist()
    [[1.0, 2.0]]
    """
    api = "oar.asarray"
    if copy is False:
        dt = _dtype(dtype)
        if not isinstance(obj, Tensor) or (dt is not None and obj.dtype != dt):
            raise ValueError(f"[{api}] copy=False but converting {type(obj).__name__} needs a copy")
    out = as_tensor(obj, dtype, device, requires_grad)
    if copy and out is obj:
        out = _C.clone(obj)
        out.stop_gradient = not requires_grad
    return out


def from_numpy(ndarray):
    """A Tensor holding a copy of the NumPy array (same dtype and shape).

    >>> import numpy as np, oar
    >>> oar.from_numpy(np.array([1.5, 2.5])).dtype == oar.float64
    True
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"[oar.from_numpy] expected a numpy.ndarray, got {type(ndarray).__name__}")
    return to_tensor(ndarray)


def assign(x, output=None):
    """A copy of x (a Tensor, NumPy array, list or number); with `output`, the copy is written into
    it and output is returned. Lists and numbers keep NumPy's dtype (float64 for Python
    floats) and a number gives shape [1], as in Paddle. Differentiable for Tensor x.

    >>> import oar
    >>> oar.assign([1.0, 2.0]).dtype == oar.float64
    True
    >>> out = oar.zeros([2])
    >>> _ = oar.assign(oar.to_tensor([3.0, 4.0]), out)
    >>> out.numpy().tolist()
    [3.0, 4.0]
    """
    api = "oar.assign"
    if isinstance(x, Tensor):
        res = _C.clone(x)
    else:
        arr = np.asarray(x)
        if arr.dtype == object or arr.dtype.kind in "USV":
            raise TypeError(f"[{api}] x must be a Tensor, a NumPy array, a list or a number, got {type(x).__name__}")
        if arr.ndim == 0:
            arr = arr.reshape([1])
        res = to_tensor(arr)
    return _assign_out(output, res, api)


def view(x, shape_or_dtype, name=None):
    """x with another shape (a view sharing x's memory when x is contiguous, as reshape), or
    x's bytes reinterpreted as another dtype: the last dim scales by the ratio of item sizes.
    The dtype form returns a new tensor (no memory is shared) and has no gradient.

    >>> import oar
    >>> x = oar.arange(6)
    >>> oar.view(x, [2, 3]).shape
    [2, 3]
    >>> oar.view(oar.to_tensor([1.0]), "int32").numpy().tolist()
    [1065353216]
    """
    api = "oar.view"
    _tensor(x, api)
    if isinstance(shape_or_dtype, (list, tuple, Tensor)):
        return _C.reshape(x, _ints(shape_or_dtype, api, "shape"))
    dt = _dtype(shape_or_dtype)
    if dt == x.dtype:
        return x
    if _C.dtype.bfloat16 in (dt, x.dtype):
        raise TypeError(f"[{api}] reinterpreting bfloat16 bytes is not supported")
    src_np = x.numpy()
    target = np.dtype(str(dt).split(".")[-1])
    if x.ndim == 0 and target.itemsize != src_np.itemsize:
        raise ValueError(f"[{api}] a 0-D tensor cannot be viewed as a dtype of another size")
    if x.ndim and (x.shape[-1] * src_np.itemsize) % target.itemsize:
        raise ValueError(f"[{api}] x.shape[-1] ({x.shape[-1]}) times the item size {src_np.itemsize} must be a "
                         f"multiple of {target.itemsize} to view {str(x.dtype).split('.')[-1]} as "
                         f"{str(dt).split('.')[-1]}")
    return to_tensor(np.ascontiguousarray(src_np).view(target))


def view_as(x, other, name=None):
    """x reshaped to other's shape (a view of x when x is contiguous).

    >>> import oar
    >>> oar.view_as(oar.arange(6), oar.ones([3, 2])).shape
    [3, 2]
    """
    return _C.reshape(_tensor(x, "oar.view_as"), list(_tensor(other, "oar.view_as", "other").shape))


def tolist(x):
    """x's values as nested Python lists.

    >>> import oar
    >>> oar.tolist(oar.to_tensor([[1, 2], [3, 4]]))
    [[1, 2], [3, 4]]
    """
    return _tensor(x, "oar.tolist").numpy().tolist()


def check_shape(shape, op_name, expected_shape_type=(list, tuple, Tensor), expected_element_type=(builtins.int, Tensor),
                expected_tensor_dtype=("int32", "int64")):
    """Checks that `shape` is a valid shape argument of op `op_name`: of expected_shape_type,
    its elements of expected_element_type (bools refused), a Tensor of expected_tensor_dtype.
    Raises TypeError otherwise. Paddle checks only static-graph values; oar checks in eager
    mode too.

    >>> import oar
    >>> oar.check_shape([2, 3], "reshape")
    >>> oar.check_shape([2.0], "reshape")
    Traceback (most recent call last):
    ...
    TypeError: [oar.check_shape] reshape: shape[0] must be of type int or Tensor, got float
    """
    api = "oar.check_shape"

    def names(types):
        types = types if isinstance(types, tuple) else (types,)
        return " or ".join(t.__name__ for t in types)

    def check_tensor(t, what):
        dt = str(t.dtype).split(".")[-1]
        if dt not in expected_tensor_dtype:
            raise TypeError(f"[{api}] {op_name}: {what} must be a Tensor of dtype {' or '.join(expected_tensor_dtype)}"
                            f", got {dt}")

    if not isinstance(shape, expected_shape_type):
        raise TypeError(f"[{api}] {op_name}: shape must be of type {names(expected_shape_type)}, "
                        f"got {type(shape).__name__}")
    if isinstance(shape, Tensor):
        check_tensor(shape, "shape")
        return
    for i, s in enumerate(shape):
        if isinstance(s, builtins.bool) or not isinstance(s, expected_element_type):
            raise TypeError(f"[{api}] {op_name}: shape[{i}] must be of type {names(expected_element_type)}, "
                            f"got {type(s).__name__}")
        if isinstance(s, Tensor):
            check_tensor(s, f"shape[{i}]")


def broadcast_shape(x_shape, y_shape):
    """The shape that x_shape and y_shape broadcast to.

    >>> import oar
    >>> oar.broadcast_shape([2, 1, 3], [4, 1])
    [2, 4, 3]
    """
    return _broadcast([x_shape, y_shape], "oar.broadcast_shape")


def broadcast_shapes(*shapes):
    """The shape that all `shapes` broadcast to.

    >>> import oar
    >>> oar.broadcast_shapes([2, 1], [3], [1, 1, 1])
    [1, 2, 3]
    """
    return _broadcast(shapes, "oar.broadcast_shapes")


def broadcast_tensors(input, name=None):  # noqa: A002
    """The tensors of `input` broadcast to their common shape (views).

    >>> import oar
    >>> [t.shape for t in oar.broadcast_tensors([oar.ones([2, 1]), oar.ones([3])])]
    [[2, 3], [2, 3]]
    """
    api = "oar.broadcast_tensors"
    xs = _tensors(input, api)
    shape = _broadcast([list(t.shape) for t in xs], api)
    return [t if list(t.shape) == shape else _C.expand(t, shape) for t in xs]


def expand_as(x, y, name=None):
    """x broadcast to y's shape (a view).

    >>> import oar
    >>> oar.expand_as(oar.to_tensor([1, 2]), oar.ones([2, 2])).numpy().tolist()
    [[1, 2], [1, 2]]
    """
    return _C.expand(_tensor(x, "oar.expand_as"), list(_tensor(y, "oar.expand_as", "y").shape))


# ---------------------------------------------------------------- joining and splitting

def cat(x, axis=0, name=None, *, out=None):
    """concat under its short name; `out` receives the result.

    >>> import oar
    >>> oar.cat([oar.to_tensor([1]), oar.to_tensor([2, 3])]).numpy().tolist()
    [1, 2, 3]
    """
    return _assign_out(out, concat(x, axis), "oar.cat")


def concatenate(x, axis=0, name=None, *, out=None):
    """concat under NumPy's name; `out` receives the result.

    >>> import oar
    >>> oar.concatenate([oar.ones([1, 2]), oar.zeros([1, 2])], axis=1).shape
    [1, 4]
    """
    return _assign_out(out, concat(x, axis), "oar.concatenate")


def _joined(x, nd, axis, api):
    xs = _tensors(x, api)
    if not xs:
        raise ValueError(f"[{api}] x must hold at least one tensor")
    parts = _atleast(xs, nd, api)
    return _C._concat(parts if isinstance(parts, list) else [parts], axis)


def column_stack(x, name=None):
    """Joins tensors as columns: 0-D and 1-D tensors become columns [n, 1], the rest join along axis 1.

    >>> import oar
    >>> oar.column_stack([oar.to_tensor([1, 2]), oar.to_tensor([[3], [4]])]).numpy().tolist()
    [[1, 3], [2, 4]]
    """
    api = "oar.column_stack"
    xs = _tensors(x, api)
    if not xs:
        raise ValueError(f"[{api}] x must hold at least one tensor")
    cols = [_C.reshape(t, [-1, 1]) if t.ndim < 2 else t for t in xs]
    return _C._concat(cols, 1)


def vstack(x, name=None):
    """Joins tensors along axis 0 after making them at least 2-D.

    >>> import oar
    >>> oar.vstack([oar.to_tensor([1, 2]), oar.to_tensor([3, 4])]).numpy().tolist()
    [[1, 2], [3, 4]]
    """
    return _joined(x, 2, 0, "oar.vstack")


def row_stack(x, name=None):
    """vstack under its other name.

    >>> import oar
    >>> oar.row_stack([oar.to_tensor([1]), oar.to_tensor([2])]).shape
    [2, 1]
    """
    return _joined(x, 2, 0, "oar.row_stack")


def hstack(x, name=None):
    """Joins tensors along axis 1, or axis 0 when they are (at most) 1-D.

    >>> import oar
    >>> oar.hstack([oar.to_tensor([1, 2]), oar.to_tensor([3])]).numpy().tolist()
    [1, 2, 3]
    """
    api = "oar.hstack"
    xs = _tensors(x, api)
    nd1 = builtins.all(t.ndim <= 1 for t in xs)
    return _joined(xs, 1, 0 if nd1 else 1, api)


def dstack(x, name=None):
    """Joins tensors along axis 2 after making them at least 3-D.

    >>> import oar
    >>> oar.dstack([oar.to_tensor([1, 2]), oar.to_tensor([3, 4])]).numpy().tolist()
    [[[1, 3], [2, 4]]]
    """
    return _joined(x, 3, 2, "oar.dstack")


def tensor_split(x, num_or_indices, axis=0, name=None):
    """Splits x along axis into num_or_indices parts (an int: the first size % n parts are one
    longer) or at the given indices (a list: negative ones count from the end; parts past
    the end are empty). The parts are views of x.

    >>> import oar
    >>> [t.numpy().tolist() for t in oar.tensor_split(oar.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    >>> [t.numpy().tolist() for t in oar.tensor_split(oar.arange(5), [1, -1])]
    [[0], [1, 2, 3], [4]]
    """
    return _tensor_split(x, num_or_indices, axis, "oar.tensor_split")


def _tensor_split(x, num_or_indices, axis, api):
    _tensor(x, api)
    if x.ndim == 0:
        raise ValueError(f"[{api}] x must have at least one dim, got a 0-D tensor")
    ax = _axis(axis, x.ndim, api)
    n = x.shape[ax]
    if isinstance(num_or_indices, (builtins.int, np.integer)) and not isinstance(num_or_indices, builtins.bool):
        k = builtins.int(num_or_indices)
        if k <= 0:
            raise ValueError(f"[{api}] num_or_indices must be positive, got {k}")
        if k > builtins.max(n, _MAX_EMPTY_PARTS):
            raise ValueError(f"[{api}] num_or_indices ({k}) must not exceed max(size of axis {ax} ({n}), "
                             f"{_MAX_EMPTY_PARTS}): more parts are all empty")
        sizes = [n // k + (1 if i < n % k else 0) for i in builtins.range(k)]
        bounds = list(itertools.accumulate([0] + sizes))
    else:
        idx = _ints(num_or_indices, api, "num_or_indices")
        cuts = [builtins.min(builtins.max(i + n if i < 0 else i, 0), n) for i in idx]
        bounds = [0] + cuts + [n]
    out = []
    for s, e in zip(bounds[:-1], bounds[1:]):
        out.append(_slice(x, ax, s, builtins.max(s, e)))
    return out


# Splitting n entries into k > n parts gives empty parts; past this many the
# request is taken for a mistake rather than building millions of tensors.
_MAX_EMPTY_PARTS = 4096


def _split_min(x, nd, axis, num_or_indices, api):
    _tensor(x, api)
    if x.ndim < nd:
        raise ValueError(f"[{api}] x must have at least {nd} dims, got shape {x.shape}")
    return _tensor_split(x, num_or_indices, axis, api)


def hsplit(x, num_or_indices, name=None):
    """tensor_split along axis 1 (axis 0 for 1-D x).

    >>> import oar
    >>> [t.shape for t in oar.hsplit(oar.ones([2, 4]), 2)]
    [[2, 2], [2, 2]]
    """
    _tensor(x, "oar.hsplit")
    return _split_min(x, 1, 1 if x.ndim > 1 else 0, num_or_indices, "oar.hsplit")


def vsplit(x, num_or_indices, name=None):
    """tensor_split along axis 0 of an at least 2-D x.

    >>> import oar
    >>> [t.shape for t in oar.vsplit(oar.ones([3, 2]), [1])]
    [[1, 2], [2, 2]]
    """
    return _split_min(x, 2, 0, num_or_indices, "oar.vsplit")


def dsplit(x, num_or_indices, name=None):
    """tensor_split along axis 2 of an at least 3-D x.

    >>> import oar
    >>> [t.shape for t in oar.dsplit(oar.ones([1, 1, 4]), 2)]
    [[1, 1, 2], [1, 1, 2]]
    """
    return _split_min(x, 3, 2, num_or_indices, "oar.dsplit")


def unstack(x, axis=0, num=None):
    """The slices of x along axis (the axis removed); num, when given, must equal that dim.

    >>> import oar
    >>> [t.numpy().tolist() for t in oar.unstack(oar.to_tensor([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    api = "oar.unstack"
    _tensor(x, api)
    ax = _axis(axis, x.ndim, api)
    if num is not None and _int(num, api, "num") != x.shape[ax]:
        raise ValueError(f"[{api}] num ({num}) must equal the size of axis {ax} ({x.shape[ax]})")
    return unbind(x, ax)


def split_with_sizes(self, split_sizes, dim=0):
    """Splits along dim into parts of the given sizes, which must add up to the dim's size.

    >>> import oar
    >>> [t.shape for t in oar.arange(5).split_with_sizes([2, 3])]
    [[2], [3]]
    """
    api = "oar.Tensor.split_with_sizes"
    _tensor(self, api)
    sizes = _ints(split_sizes, api, "split_sizes")
    ax = _axis(dim, self.ndim, api, "dim")
    if builtins.sum(sizes) != self.shape[ax] or builtins.any(s < 0 for s in sizes):
        raise ValueError(f"[{api}] split_sizes {sizes} must be non-negative and add up to the size "
                         f"{self.shape[ax]} of dim {ax}")
    return split(self, sizes, ax)


def block_diag(inputs, name=None):
    """The block-diagonal matrix with the given blocks (0-D, 1-D or 2-D tensors of one dtype).

    >>> import oar
    >>> oar.block_diag([oar.to_tensor([[1, 2]]), oar.to_tensor(3)]).numpy().tolist()
    [[1, 2, 0], [0, 0, 3]]
    """
    api = "oar.block_diag"
    xs = _tensors(inputs, api)
    if not xs:
        raise ValueError(f"[{api}] inputs must hold at least one tensor")
    for i, t in enumerate(xs):
        if t.ndim > 2:
            raise ValueError(f"[{api}] inputs[{i}] must be at most 2-D, got shape {t.shape}")
        if t.dtype != xs[0].dtype:
            raise TypeError(f"[{api}] all inputs must have one dtype: inputs[0] is "
                            f"{str(xs[0].dtype).split('.')[-1]}, inputs[{i}] is {str(t.dtype).split('.')[-1]}")
    blocks = [_C.reshape(t, [1, -1] if t.ndim == 1 else [1, 1]) if t.ndim < 2 else t for t in xs]
    total = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        row = _C._pad(b, [1], [left], [total - left - c], "constant", 0.0) if total != c else b
        rows.append(row)
        left += c
    return _C._concat(rows, 0)


def cartesian_prod(x, name=None):
    """The cartesian product of 1-D tensors, one combination per row: [prod(len), len(x)];
    a single tensor is returned as is.

    >>> import oar
    >>> oar.cartesian_prod([oar.to_tensor([1, 2]), oar.to_tensor([3, 4])]).numpy().tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    api = "oar.cartesian_prod"
    xs = _tensors(x, api)
    if not xs:
        raise ValueError(f"[{api}] x must hold at least one tensor")
    for i, t in enumerate(xs):
        if t.ndim != 1:
            raise ValueError(f"[{api}] x[{i}] must be 1-D, got shape {t.shape}")
    if len(xs) == 1:
        return xs[0]
    grids = _C._meshgrid(xs)
    return _C._stack([_C.reshape(g, [-1]) for g in grids], 1)


def combinations(x, r=2, with_replacement=False, name=None):
    """All length-r combinations of the elements of 1-D x, in order, one per row [count, r]
    (itertools.combinations, or combinations_with_replacement).

    >>> import oar
    >>> oar.combinations(oar.to_tensor([1, 2, 3])).numpy().tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    api = "oar.combinations"
    _tensor(x, api)
    if x.ndim != 1:
        raise ValueError(f"[{api}] x must be 1-D, got shape {x.shape}")
    r = _int(r, api, "r")
    if r < 0:
        raise ValueError(f"[{api}] r must be non-negative, got {r}")
    if r == 0:
        return _C._gather(x, _C.full([0], 0, _C.dtype.int64), 0)
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(builtins.range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return _gather_flat(x, idx)


# ---------------------------------------------------------------- axes

def _perm_swap(ndim, a, b):
    perm = list(builtins.range(ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return perm


def matrix_transpose(x, name=None):
    """x with its last two dims swapped (a view).

    >>> import oar
    >>> oar.matrix_transpose(oar.ones([4, 2, 3])).shape
    [4, 3, 2]
    """
    api = "oar.matrix_transpose"
    _tensor(x, api)
    if x.ndim < 2:
        raise ValueError(f"[{api}] x must have at least 2 dims, got shape {x.shape}")
    return _C.transpose(x, _perm_swap(x.ndim, x.ndim - 2, x.ndim - 1))


def moveaxis(x, source, destination, name=None):
    """x with the axes `source` moved to positions `destination` (the others keep their order).

    >>> import oar
    >>> oar.moveaxis(oar.ones([2, 3, 4]), [0, 1], [2, 0]).shape
    [3, 4, 2]
    """
    api = "oar.moveaxis"
    _tensor(x, api)
    src = [_axis(a, x.ndim, api, "source") for a in _ints(source, api, "source")]
    dst = [_axis(a, x.ndim, api, "destination") for a in _ints(destination, api, "destination")]
    if len(src) != len(dst):
        raise ValueError(f"[{api}] source and destination must have the same length, got {len(src)} and {len(dst)}")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"[{api}] source and destination must not repeat axes, got {src} and {dst}")
    rest = [a for a in builtins.range(x.ndim) if a not in src]
    perm = [None] * x.ndim
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return _C.transpose(x, perm)


def _swap(x, perm, axis1, api):
    _tensor(x, api)
    if isinstance(perm, (list, tuple, Tensor)):
        return _C.transpose(x, _ints(perm, api, "perm"))
    a = _axis(perm, x.ndim, api, "axis0")
    b = _axis(axis1, x.ndim, api, "axis1")
    return _C.transpose(x, _perm_swap(builtins.max(x.ndim, 1), a, b)) if x.ndim else x


def swapaxes(x, perm, axis1=None, name=None):
    """Swaps two axes: swapaxes(x, axis0, axis1); given a permutation list, it permutes as transpose.

    >>> import oar
    >>> oar.swapaxes(oar.ones([2, 3, 4]), 0, 2).shape
    [4, 3, 2]
    """
    return _swap(x, perm, axis1, "oar.swapaxes")


def swapdims(x, perm, axis1=None, name=None):
    """swapaxes under its other name.

    >>> import oar
    >>> oar.swapdims(oar.ones([2, 3]), 0, 1).shape
    [3, 2]
    """
    return _swap(x, perm, axis1, "oar.swapdims")


def permute(input, *dims, **kwargs):  # noqa: A002
    """transpose with the permutation given as one list or as separate ints: ``x.permute(2, 0, 1)``.

    >>> import oar
    >>> oar.permute(oar.ones([2, 3, 4]), [2, 0, 1]).shape
    [4, 2, 3]
    >>> oar.ones([2, 3, 4]).permute(1, 0, 2).shape
    [3, 2, 4]
    """
    api = "oar.permute"
    _tensor(input, api)
    if "dims" in kwargs:
        dims = (kwargs.pop("dims"),)
    if kwargs:
        raise TypeError(f"[{api}] unexpected keyword arguments {sorted(kwargs)}")
    if len(dims) == 1 and isinstance(dims[0], (list, tuple, Tensor)):
        dims = dims[0]
    return _C.transpose(input, _ints(list(dims) if isinstance(dims, tuple) else dims, api, "dims"))


def narrow(input, dim, start, length):  # noqa: A002
    """The `length` entries of input from `start` along `dim` (a view); a negative start
    counts from the end.

    >>> import oar
    >>> oar.narrow(oar.arange(6).reshape([2, 3]), 1, 1, 2).numpy().tolist()
    [[1, 2], [4, 5]]
    """
    api = "oar.narrow"
    _tensor(input, api)
    if input.ndim == 0:
        raise ValueError(f"[{api}] input must have at least one dim, got a 0-D tensor")
    ax = _axis(dim, input.ndim, api, "dim")
    n = input.shape[ax]
    s = _int(start, api, "start")
    length = _int(length, api, "length")
    if s < 0:
        s += n
    if not 0 <= s <= n or length < 0 or s + length > n:
        raise ValueError(f"[{api}] start ({start}) + length ({length}) must lie within dim {ax} of size {n}")
    return _slice(input, ax, s, s + length)


def ravel(input):  # noqa: A002
    """input flattened to 1-D (a view when input is contiguous).

    >>> import oar
    >>> oar.ravel(oar.ones([2, 3])).shape
    [6]
    """
    return _C.flatten(_tensor(input, "oar.ravel"), 0, -1)


def reverse(x, axis, name=None):
    """flip under its older name: x with the order of the given axes reversed.

    >>> import oar
    >>> oar.reverse(oar.to_tensor([1, 2, 3]), 0).numpy().tolist()
    [3, 2, 1]
    """
    return flip(x, axis)


def rot90(x, k=1, axes=[0, 1], name=None):  # noqa: B006 - Paddle's default
    """x rotated by 90 degrees k times in the plane of `axes`, from the first axis toward the
    second (NumPy's rot90).

    >>> import oar
    >>> oar.rot90(oar.to_tensor([[1, 2], [3, 4]])).numpy().tolist()
    [[2, 4], [1, 3]]
    """
    api = "oar.rot90"
    _tensor(x, api)
    ax = _ints(axes, api, "axes")
    if len(ax) != 2:
        raise ValueError(f"[{api}] axes must hold 2 axes, got {ax}")
    if x.ndim < 2:
        raise ValueError(f"[{api}] x must have at least 2 dims, got shape {x.shape}")
    a, b = (_axis(v, x.ndim, api, "axes") for v in ax)
    if a == b:
        raise ValueError(f"[{api}] the two axes must differ, got {ax}")
    k = _int(k, api, "k") % 4
    if k == 0:
        return x
    if k == 2:
        return flip(x, [a, b])
    perm = _perm_swap(x.ndim, a, b)
    if k == 1:
        return _C.transpose(flip(x, [b]), perm)
    return flip(_C.transpose(x, perm), [b])


def unflatten(x, axis, shape, name=None):
    """x with dim `axis` split into `shape` (one entry may be -1).

    >>> import oar
    >>> oar.unflatten(oar.ones([2, 6]), 1, [3, -1]).shape
    [2, 3, 2]
    """
    api = "oar.unflatten"
    _tensor(x, api)
    if x.ndim == 0:
        raise ValueError(f"[{api}] x must have at least one dim, got a 0-D tensor")
    ax = _axis(axis, x.ndim, api)
    sh = _ints(shape, api, "shape")
    if not sh:
        raise ValueError(f"[{api}] shape must not be empty")
    n = x.shape[ax]
    known = [s for s in sh if s != -1]
    if len(sh) - len(known) > 1 or builtins.any(s < 0 for s in known):
        raise ValueError(f"[{api}] shape may hold one -1 and otherwise non-negative sizes, got {sh}")
    prod = int(np.prod(known)) if known else 1
    if (-1 in sh and (prod == 0 or n % prod)) or (-1 not in sh and prod != n):
        raise ValueError(f"[{api}] shape {sh} does not fit dim {ax} of size {n}")
    sh = [n // prod if s == -1 else s for s in sh]
    return _C.reshape(x, list(x.shape[:ax]) + sh + list(x.shape[ax + 1:]))


def unfold(x, axis, size, step, name=None):
    """The windows of `size` entries along `axis`, `step` apart: that dim becomes the window
    count and a last dim of `size` is appended (Tensor.unfold).

    >>> import oar
    >>> oar.arange(7).unfold(0, 3, 2).numpy().tolist()
    [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    """
    api = "oar.unfold"
    _tensor(x, api)
    ax = _axis(axis, x.ndim, api)
    size = _int(size, api, "size")
    step = _int(step, api, "step")
    n = x.shape[ax] if x.ndim else 1
    if step <= 0:
        raise ValueError(f"[{api}] step must be positive, got {step}")
    if size < 0 or size > n:
        raise ValueError(f"[{api}] size must lie in [0, {n}] (the size of axis {ax}), got {size}")
    if x.ndim == 0:
        return _C.reshape(x, [1])
    count = (n - size) // step + 1
    idx = (np.arange(count, dtype=np.int64)[:, None] * step + np.arange(size, dtype=np.int64)[None, :]).reshape(-1)
    g = _C._index_select(x, _from_host(idx), ax)
    g = _C.reshape(g, list(x.shape[:ax]) + [count, size] + list(x.shape[ax + 1:]))
    perm = [d for d in builtins.range(g.ndim) if d != ax + 1] + [ax + 1]
    return _C.transpose(g, perm)


def crop(x, shape=None, offsets=None, name=None):
    """The block of x of `shape` starting at `offsets` (default: x's shape, zeros); a -1 in shape
    takes the rest of that dim.

    >>> import oar
    >>> oar.crop(oar.arange(6).reshape([2, 3]), [1, 2], [1, 1]).numpy().tolist()
    [[4, 5]]
    """
    api = "oar.crop"
    _tensor(x, api)
    sh = list(x.shape) if shape is None else _ints(shape, api, "shape")
    off = [0] * x.ndim if offsets is None else _ints(offsets, api, "offsets")
    if len(sh) != x.ndim or len(off) != x.ndim:
        raise ValueError(f"[{api}] shape and offsets must have one entry per dim of x (shape {x.shape}), "
                         f"got {sh} and {off}")
    starts, ends = [], []
    for d, (n, s, o) in enumerate(zip(x.shape, sh, off)):
        s = n - o if s == -1 else s
        if o < 0 or s < 0 or o + s > n:
            raise ValueError(f"[{api}] offsets[{d}] ({o}) + shape[{d}] ({s}) must lie within dim {d} of size {n}")
        starts.append(o)
        ends.append(o + s)
    if not x.ndim:
        return x
    return _C.strided_slice(x, list(builtins.range(x.ndim)), starts, ends, [1] * x.ndim)


# ---------------------------------------------------------------- creation

def range(start=0, end=None, step=1, dtype=None, *, out=None, device=None, requires_grad=False,  # noqa: A001
          name=None):
    """Values from start to end *inclusive* by step (Paddle's deprecated range; arange excludes
    end). With one argument it is the end and start is 0. dtype defaults to the default float
    dtype.

    >>> import oar
    >>> oar.range(3).numpy().tolist()
    [0.0, 1.0, 2.0, 3.0]
    >>> oar.range(0, 1, 0.5, dtype="float64").numpy().tolist()
    [0.0, 0.5, 1.0]
    """
    api = "oar.range"
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if end is None:
        start, end = 0, start
    for what, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, builtins.bool) or not isinstance(v, (builtins.int, builtins.float, np.integer, np.floating)):
            raise TypeError(f"[{api}] {what} must be a number, got {type(v).__name__}")
    if step == 0:
        raise ValueError(f"[{api}] step must not be zero")
    count = builtins.int(np.floor((end - start) / step + 1e-9)) + 1
    if count < 0:
        count = 0
    dt = _dtype(dtype) or _C.get_default_dtype()
    res = to_tensor(start + step * np.arange(count, dtype=np.float64), dtype=dt, place=device,
                    stop_gradient=not requires_grad)
    return _assign_out(out, res, api)


def _tri_indices(row, col, offset, dtype, api, upper):
    row = _int(row, api, "row")
    col = row if col is None else _int(col, api, "col")
    offset = _int(offset, api, "offset")
    if row < 0 or col < 0:
        raise ValueError(f"[{api}] row and col must be non-negative, got {row} and {col}")
    dt = _dtype(dtype)
    if dt not in (_C.dtype.int32, _C.dtype.int64):
        raise TypeError(f"[{api}] dtype must be int32 or int64, got {dtype}")
    r, c = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    return _C.cast(_from_host(np.stack([r, c]).astype(np.int64).reshape(2, -1)), dt)


def tril_indices(row, col, offset=0, dtype="int64"):
    """The coordinates [2, count] of the lower triangle (on and below diagonal `offset`) of a
    row x col matrix, row by row.

    >>> import oar
    >>> oar.tril_indices(3, 3).numpy().tolist()
    [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    """
    return _tri_indices(row, col, offset, dtype, "oar.tril_indices", False)


def triu_indices(row, col=None, offset=0, dtype="int64"):
    """The coordinates [2, count] of the upper triangle (on and above diagonal `offset`) of a
    row x col matrix (col defaults to row).

    >>> import oar
    >>> oar.triu_indices(3, offset=1).numpy().tolist()
    [[0, 0, 1], [1, 2, 2]]
    """
    return _tri_indices(row, col, offset, dtype, "oar.triu_indices", True)


# Note [dtype aliases]: Paddle's other names for dtypes. uint16, uint32,
# uint64, float8_e4m3fn and float8_e5m2 have no oar dtype and are not provided.
# Served through __getattr__ so that these names do not shadow the builtins
# int and float inside this module.
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "cfloat": "complex64",
                  "cdouble": "complex128", "long": "int64", "int": "int32", "short": "int16"}


def __getattr__(name):
    if name in _DTYPE_ALIASES:
        return _C.dtype_from_name(_DTYPE_ALIASES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Note [Tensor methods]: the functions above that are also Tensor methods.
__tensor_methods__ = (
    "atleast_1d", "atleast_2d", "atleast_3d", "as_complex", "as_real", "view_as_complex", "view_as_real",
    "as_strided", "block_diag", "broadcast_shape", "broadcast_shapes", "broadcast_tensors", "hsplit", "vsplit",
    "dsplit", "tensor_split", "expand_as", "matrix_transpose", "moveaxis", "swapaxes", "swapdims", "permute",
    "narrow", "ravel", "reverse", "rot90", "unflatten", "unfold", "unstack", "view", "view_as", "combinations",
    "tolist", "split_with_sizes",
) + _shape_index.__tensor_methods__
