"""Shape manipulation with Paddle signatures: joining, splitting, repeating,
flipping, rolling, padding, diagonals and triangles.

The ops are in C++ (src/ops/manip.cpp); this module turns Paddle's flexible
arguments (ints, lists, Tensors holding counts) into plain ints.
"""
import builtins

import numpy as np

from . import _C

__all__ = [
    "concat", "stack", "split", "chunk", "unbind", "tile", "repeat_interleave", "flip", "roll", "pad",
    "diagonal", "tril", "triu", "diag", "diagflat", "meshgrid",
]

Tensor = _C.Tensor


def _int_tensor(v, api, what):
    # A float tensor is not silently truncated into counts or axes.
    if v.dtype not in (_C.dtype.int64, _C.dtype.int32, _C.dtype.int16, _C.dtype.int8, _C.dtype.uint8):
        raise TypeError(f"[{api}] {what} must be an integer Tensor, got a {str(v.dtype).replace('paddle.', '')} Tensor")
    return v


def _int(v, api, what):
    if isinstance(v, Tensor):
        if v.size != 1:
            raise ValueError(f"[{api}] {what} must hold one value, got shape {v.shape}")
        v = _int_tensor(v, api, what).item()
    if isinstance(v, builtins.bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"[{api}] {what} must be an int, got {type(v).__name__}")
    return int(v)


def _ints(v, api, what):
    if isinstance(v, Tensor):
        return [int(i) for i in _int_tensor(v, api, what).numpy().reshape(-1)]
    if isinstance(v, (int, np.integer)) and not isinstance(v, builtins.bool):
        return [int(v)]
    if isinstance(v, (list, tuple)):
        return [_int(i, api, what) for i in v]
    raise TypeError(f"[{api}] {what} must be an int, a list of ints or a Tensor, got {type(v).__name__}")


def _tensors(xs, api):
    if isinstance(xs, Tensor) or not isinstance(xs, (list, tuple)):
        raise TypeError(f"[{api}] x must be a list or tuple of Tensors, got {type(xs).__name__}")
    for i, t in enumerate(xs):
        if not isinstance(t, Tensor):
            raise TypeError(f"[{api}] x[{i}] must be a Tensor, got {type(t).__name__}")
    return list(xs)


def concat(x, axis=0, name=None):
    """Joins tensors along an existing axis.

    >>> import oar
    >>> a = oar.to_tensor([[1, 2]])
    >>> b = oar.to_tensor([[3, 4], [5, 6]])
    >>> oar.concat([a, b], axis=0).numpy().tolist()
    [[1, 2], [3, 4], [5, 6]]
    """
    return _C._concat(_tensors(x, "oar.concat"), _int(axis, "oar.concat", "axis"))


def stack(x, axis=0, name=None):
    """Joins same-shaped tensors along a new axis.

    >>> import oar
    >>> oar.stack([oar.to_tensor([1, 2]), oar.to_tensor([3, 4])], axis=1).numpy().tolist()
    [[1, 3], [2, 4]]
    """
    return _C._stack(_tensors(x, "oar.stack"), _int(axis, "oar.stack", "axis"))


def split(x, num_or_sections, axis=0, name=None):
    """Splits x along axis into `num_or_sections` equal parts (an int) or parts of the given
    sizes (a list; one size may be -1). The parts are views of x.

    >>> import oar
    >>> x = oar.arange(6)
    >>> [p.numpy().tolist() for p in oar.split(x, [1, -1, 2])]
    [[0], [1, 2, 3], [4, 5]]
    >>> [p.shape for p in oar.split(x, 3)]
    [[2], [2], [2]]
    """
    axis = _int(axis, "oar.split", "axis")
    if isinstance(num_or_sections, (int, np.integer)) and not isinstance(num_or_sections, builtins.bool):
        return _C._split_equal(x, int(num_or_sections), axis)
    return _C._split(x, _ints(num_or_sections, "oar.split", "num_or_sections"), axis)


def chunk(x, chunks, axis=0, name=None):
    """Splits x into `chunks` equal parts along axis.

    >>> import oar
    >>> [p.numpy().tolist() for p in oar.chunk(oar.arange(4), 2)]
    [[0, 1], [2, 3]]
    """
    return _C._chunk(x, _int(chunks, "oar.chunk", "chunks"), _int(axis, "oar.chunk", "axis"))


def unbind(input, axis=0):  # noqa: A002 - Paddle's argument name
    """Removes `axis`, returning the slices along it.

    >>> import oar
    >>> [t.numpy().tolist() for t in oar.unbind(oar.to_tensor([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    return _C._unbind(input, _int(axis, "oar.unbind", "axis"))


def tile(x, repeat_times, name=None):
    """Repeats the whole tensor `repeat_times[i]` times along each axis.

    >>> import oar
    >>> oar.tile(oar.to_tensor([1, 2]), [2, 2]).numpy().tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    return _C._tile(x, _ints(repeat_times, "oar.tile", "repeat_times"))


def repeat_interleave(x, repeats, axis=None, name=None):
    """Repeats each element `repeats` times (an int, or one count per element as a list or
    Tensor) along axis; with axis None, x is flattened first.

    >>> import oar
    >>> oar.repeat_interleave(oar.to_tensor([1, 2, 3]), 2).numpy().tolist()
    [1, 1, 2, 2, 3, 3]
    >>> oar.repeat_interleave(oar.to_tensor([1, 2, 3]), oar.to_tensor([1, 0, 2])).numpy().tolist()
    [1, 3, 3]
    """
    reps = _ints(repeats, "oar.repeat_interleave", "repeats")
    if axis is None:
        return _C._repeat_interleave(x, reps, 0, True)
    return _C._repeat_interleave(x, reps, _int(axis, "oar.repeat_interleave", "axis"), False)


def flip(x, axis, name=None):
    """Reverses the order of elements along the given axes.

    >>> import oar
    >>> oar.flip(oar.to_tensor([[1, 2], [3, 4]]), [0, 1]).numpy().tolist()
    [[4, 3], [2, 1]]
    """
    return _C._flip(x, _ints(axis, "oar.flip", "axis"))


def roll(x, shifts, axis=None, name=None):
    """Rolls elements along axes (elements leaving one end come back at the other); with axis
    None, the flattened tensor is rolled and the shape restored.

    >>> import oar
    >>> oar.roll(oar.to_tensor([1, 2, 3, 4]), 1).numpy().tolist()
    [4, 1, 2, 3]
    """
    sh = _ints(shifts, "oar.roll", "shifts")
    ax = [] if axis is None else _ints(axis, "oar.roll", "axis")
    return _C._roll(x, sh, ax)


_CHANNEL_LAST = ("NLC", "NHWC", "NDHWC")


def pad(x, pad, mode="constant", value=0.0, data_format=None, pad_from_left_axis=True, name=None):  # noqa: A002
    """Pads x (``paddle.nn.functional.pad`` semantics).

    With mode 'constant' and ``len(pad) == 2 * x.ndim``, pad holds (before, after) pairs from
    the first axis to the last. Otherwise pairs apply from the last (spatial) axis backwards:
    (left, right, top, bottom, front, back). Modes: 'constant' (negative pads crop),
    'reflect', 'replicate', 'circular'. data_format 'NLC'/'NHWC'/'NDHWC' keeps the last axis
    (channels) unpadded.

    >>> import oar
    >>> oar.pad(oar.to_tensor([[1, 2]]), [1, 0], value=9).numpy().tolist()
    [[9, 1, 2]]
    >>> oar.pad(oar.to_tensor([[[1.0, 2.0, 3.0]]]), [2, 1], mode="reflect").numpy().tolist()
    [[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]]
    """
    p = _ints(pad, "oar.pad", "pad")
    if len(p) % 2:
        raise ValueError(f"[oar.pad] pad must have an even length, got {len(p)}")
    nd = x.ndim
    if isinstance(value, Tensor):
        value = value.item()
    if mode == "constant" and len(p) == 2 * nd and pad_from_left_axis:
        axes = list(range(nd))
        before, after = p[0::2], p[1::2]
    else:
        last = nd - 2 if data_format in _CHANNEL_LAST else nd - 1
        k = len(p) // 2
        if k > last + 1:
            raise ValueError(f"[oar.pad] pad has {k} (before, after) pairs but x of shape {x.shape} "
                             f"has only {last + 1} axes to pad")
        axes = [last - i for i in range(k)]
        before, after = p[0::2], p[1::2]
    return _C._pad(x, axes, before, after, mode, float(value.real if isinstance(value, complex) else value))


def diagonal(x, offset=0, axis1=0, axis2=1, name=None):
    """The `offset` diagonal of the (axis1, axis2) planes, as the last axis (a view).

    >>> import oar
    >>> oar.diagonal(oar.to_tensor([[1, 2], [3, 4]])).numpy().tolist()
    [1, 4]
    """
    return _C._diagonal(x, _int(offset, "oar.diagonal", "offset"), _int(axis1, "oar.diagonal", "axis1"),
                        _int(axis2, "oar.diagonal", "axis2"))


def tril(x, diagonal=0, name=None):
    """Lower triangle of the last two axes; elements above the `diagonal` are zeroed.

    >>> import oar
    >>> oar.tril(oar.to_tensor([[1, 2], [3, 4]])).numpy().tolist()
    [[1, 0], [3, 4]]
    """
    return _C._tril(x, _int(diagonal, "oar.tril", "diagonal"))


def triu(x, diagonal=0, name=None):
    """Upper triangle of the last two axes; elements below the `diagonal` are zeroed.

    >>> import oar
    >>> oar.triu(oar.to_tensor([[1, 2], [3, 4]])).numpy().tolist()
    [[1, 2], [0, 4]]
    """
    return _C._triu(x, _int(diagonal, "oar.triu", "diagonal"))


def diag(x, offset=0, padding_value=0, name=None):
    """1-D x: a square matrix with x on the `offset` diagonal and `padding_value` elsewhere.
    2-D x: its `offset` diagonal.

    >>> import oar
    >>> oar.diag(oar.to_tensor([1, 2])).numpy().tolist()
    [[1, 0], [0, 2]]
    >>> oar.diag(oar.to_tensor([[1, 2], [3, 4]]), offset=1).numpy().tolist()
    [2]
    """
    return _C._diag(x, _int(offset, "oar.diag", "offset"), float(padding_value))


def diagflat(x, offset=0, name=None):
    """A square matrix with the flattened x on the `offset` diagonal.

    >>> import oar
    >>> oar.diagflat(oar.to_tensor([[1, 2]]), offset=-1).numpy().tolist()
    [[0, 0, 0], [1, 0, 0], [0, 2, 0]]
    """
    return _C._diagflat(x, _int(offset, "oar.diagflat", "offset"))


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors ('ij' indexing: output i varies along axis i).

    >>> import oar
    >>> a, b = oar.meshgrid(oar.to_tensor([1, 2]), oar.to_tensor([3, 4, 5]))
    >>> a.shape, b.numpy().tolist()
    ([2, 3], [[3, 4, 5], [3, 4, 5]])
    """
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"[oar.meshgrid] unexpected keyword arguments {sorted(kwargs)}")
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    return _C._meshgrid(_tensors(list(args), "oar.meshgrid"))


__tensor_methods__ = ("tile", "flip", "split", "chunk", "unbind", "diagonal", "tril", "triu", "repeat_interleave", "roll",
                      "diag", "diagflat")
