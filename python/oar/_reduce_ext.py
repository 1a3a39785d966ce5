"""Reductions and scans with Paddle signatures: max, min, argmax, argmin, all, any,
std, var, median, logsumexp, norm, cumsum, cumprod, cummax, cummin, count_nonzero.

The work is done by the C++ ops (src/ops/reduce_ext.cpp); these wrappers only
accept Paddle's argument forms (an axis given as an int, a list, a tuple or a
Tensor) and carry the documentation. Each is also a Tensor method.
"""
import builtins

import numpy as np

from . import _C

__all__ = [
    "max", "min", "argmax", "argmin", "all", "any", "std", "var", "median", "logsumexp", "norm",
    "cumsum", "cumprod", "cummax", "cummin", "count_nonzero",
]


def _axes(axis, api):
    """None, an int, a list/tuple of ints or an integer Tensor -> None or a list of ints."""
    if axis is None:
        return None
    if isinstance(axis, _C.Tensor):
        return [int(v) for v in axis.numpy().reshape(-1)]
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, builtins.bool):
        return [int(axis)]
    if isinstance(axis, (list, tuple)):
        out = []
        for a in axis:
            if isinstance(a, _C.Tensor):
                a = a.item()
            if not isinstance(a, (int, np.integer)) or isinstance(a, builtins.bool):
                raise TypeError(f"[{api}] axis entries must be ints, got {type(a).__name__}")
            out.append(int(a))
        return out
    raise TypeError(f"[{api}] axis must be None, an int, a list or a tuple of ints, got {type(axis).__name__}")


def _axis(axis, api):
    """None or a single int (an int, a one-element Tensor or a one-element list)."""
    if axis is None:
        return None
    if isinstance(axis, _C.Tensor):
        if axis.size != 1:
            raise TypeError(f"[{api}] axis must be a single int, got a Tensor of shape {axis.shape}")
        return int(axis.item())
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, builtins.bool):
        return int(axis)
    raise TypeError(f"[{api}] axis must be None or an int, got {type(axis).__name__}")


def max(x, axis=None, keepdim=False, name=None):  # noqa: A001 - Paddle's name
    """The maximum over `axis` (all axes when None). The gradient is shared
    evenly among the elements equal to the maximum.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    >>> oar.max(x).item()
    6.0
    >>> oar.max(x, axis=-1, keepdim=True).numpy().tolist()
    [[5.0], [6.0]]
    """
    return _C.max(x, _axes(axis, "oar.max"), keepdim)


def min(x, axis=None, keepdim=False, name=None):  # noqa: A001 - Paddle's name
    """The minimum over `axis` (all axes when None). The gradient is shared
    evenly among the elements equal to the minimum.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    >>> oar.min(x, axis=0).numpy().tolist()
    [1.0, 2.0, 3.0]
    """
    return _C.min(x, _axes(axis, "oar.min"), keepdim)


def argmax(x, axis=None, keepdim=False, dtype="int64", name=None):
    """Index of the maximum along `axis`; with axis None, into the flattened
    tensor. The first occurrence wins (a NaN counts as the maximum).

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    >>> oar.argmax(x).item()
    5
    >>> oar.argmax(x, axis=1).numpy().tolist()
    [1, 2]
    """
    return _C.argmax(x, _axis(axis, "oar.argmax"), keepdim, dtype)


def argmin(x, axis=None, keepdim=False, dtype="int64", name=None):
    """Index of the minimum along `axis`; with axis None, into the flattened tensor.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    >>> oar.argmin(x, axis=0, keepdim=True).numpy().tolist()
    [[0, 1, 0]]
    """
    return _C.argmin(x, _axis(axis, "oar.argmin"), keepdim, dtype)


def all(x, axis=None, keepdim=False, name=None):  # noqa: A001 - Paddle's name
    """Whether every element over `axis` is true (non-zero). True over an empty range.

    >>> import oar
    >>> x = oar.to_tensor([[True, False], [True, True]])
    >>> oar.all(x, axis=1).numpy().tolist()
    [False, True]
    """
    return _C.all(x, _axes(axis, "oar.all"), keepdim)


def any(x, axis=None, keepdim=False, name=None):  # noqa: A001 - Paddle's name
    """Whether some element over `axis` is true (non-zero). False over an empty range.

    >>> import oar
    >>> x = oar.to_tensor([[0, 0], [0, 3]])
    >>> oar.any(x, axis=1).numpy().tolist()
    [False, True]
    """
    return _C.any(x, _axes(axis, "oar.any"), keepdim)


def count_nonzero(x, axis=None, keepdim=False, name=None):
    """The number of non-zero elements over `axis`, as int64.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])
    >>> oar.count_nonzero(x, axis=1).numpy().tolist()
    [2, 1]
    """
    return _C.count_nonzero(x, _axes(axis, "oar.count_nonzero"), keepdim)


def var(x, axis=None, unbiased=True, keepdim=False, name=None):
    """Variance over `axis`; divides by N - 1 when `unbiased` (the default), else by N.
    Integer inputs are computed in the default float dtype.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0, 3.0, 4.0])
    >>> round(oar.var(x).item(), 6)
    1.666667
    >>> oar.var(x, unbiased=False).item()
    1.25
    """
    return _C.var(x, _axes(axis, "oar.var"), unbiased, keepdim)


def std(x, axis=None, unbiased=True, keepdim=False, name=None):
    """Standard deviation over `axis` (the square root of `var`).

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 3.0], [5.0, 7.0]])
    >>> oar.std(x, axis=0, unbiased=False).numpy().tolist()
    [2.0, 2.0]
    """
    return _C.std(x, _axes(axis, "oar.std"), unbiased, keepdim)


def median(x, axis=None, keepdim=False, mode="avg", name=None):
    """The median along `axis` (of all elements when None). For an even count,
    mode 'avg' gives the mean of the two middle values (float32, or float64 for
    float64 input) and mode 'min' the lower one in x's dtype; mode 'min' with an
    axis also returns its indices. A NaN in a slice makes its median NaN.

    >>> import oar
    >>> x = oar.arange(12).reshape([3, 4])
    >>> oar.median(x).item()
    5.5
    >>> oar.median(x, axis=1).numpy().tolist()
    [1.5, 5.5, 9.5]
    >>> values, indices = oar.median(x, axis=1, mode='min')
    >>> values.numpy().tolist(), indices.numpy().tolist()
    ([1, 5, 9], [1, 1, 1])
    """
    if not isinstance(mode, str):
        raise TypeError(f"[oar.median] mode must be 'avg' or 'min', got {type(mode).__name__}")
    return _C.median(x, _axis(axis, "oar.median"), keepdim, mode)


def logsumexp(x, axis=None, keepdim=False, name=None):
    """log(sum(exp(x))) over `axis`, computed without overflow by shifting by the maximum.

    >>> import oar
    >>> x = oar.to_tensor([1000.0, 1000.0])
    >>> round(oar.logsumexp(x).item(), 2)
    1000.69
    """
    return _C.logsumexp(x, _axes(axis, "oar.logsumexp"), keepdim)


def norm(x, p=None, axis=None, keepdim=False, name=None):
    """Vector or matrix norm.

    With axis None or one axis: the vector p-norm (p=None or 'fro' means 2;
    inf/-inf the largest/smallest magnitude; 0 the count of non-zeros). With
    two axes: the matrix norm, p in 'fro' (default), 'nuc' (the sum of the
    singular values), 2 / -2 (the largest / smallest singular value), 1, -1,
    inf, -inf; the singular-value norms differentiate through oar.linalg.svd.

    >>> import oar
    >>> x = oar.to_tensor([[3.0, -4.0], [0.0, 0.0]])
    >>> oar.norm(x).item()
    5.0
    >>> oar.norm(x, p=1, axis=1).numpy().tolist()
    [7.0, 0.0]
    >>> oar.norm(x, p=float('inf'), axis=[0, 1]).item()
    7.0
    >>> oar.norm(oar.to_tensor([[3.0, 0.0], [0.0, -4.0]]), p='nuc').item()
    7.0
    """
    if isinstance(p, (int, float, np.integer, np.floating)) and not isinstance(p, builtins.bool):
        p = float(p)
    if p == "nuc" and axis is None and isinstance(x, _C.Tensor) and x.ndim == 2:
        axis = [0, 1]  # a matrix's nuclear norm, as Paddle (other ranks need two axes)
    return _C.norm(x, p, _axes(axis, "oar.norm"), keepdim)


def cumsum(x, axis=None, dtype=None, name=None):
    """Running sum along `axis`; with axis None, over the flattened tensor.
    `dtype` casts x first. Integer dtypes are kept (bool becomes int64).

    >>> import oar
    >>> x = oar.to_tensor([[1, 2, 3], [4, 5, 6]])
    >>> oar.cumsum(x).numpy().tolist()
    [1, 3, 6, 10, 15, 21]
    >>> oar.cumsum(x, axis=0).numpy().tolist()
    [[1, 2, 3], [5, 7, 9]]
    """
    return _C.cumsum(x, _axis(axis, "oar.cumsum"), dtype)


def cumprod(x, dim=None, dtype=None, name=None):
    """Running product along `dim`; with dim None, over the flattened tensor.
    The gradient is exact also where x holds zeros.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> oar.cumprod(x, dim=1).numpy().tolist()
    [[1.0, 2.0, 6.0], [4.0, 20.0, 120.0]]
    """
    return _C.cumprod(x, _axis(dim, "oar.cumprod"), dtype)


def cummax(x, axis=None, dtype="int64", name=None):
    """Running maximum along `axis` and the index where it was found (the
    latest among ties); with axis None, over the flattened tensor.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 3.0, 2.0, 3.0, 5.0])
    >>> values, indices = oar.cummax(x)
    >>> values.numpy().tolist(), indices.numpy().tolist()
    ([1.0, 3.0, 3.0, 3.0, 5.0], [0, 1, 1, 3, 4])
    """
    return _C.cummax(x, _axis(axis, "oar.cummax"), dtype)


def cummin(x, axis=None, dtype="int64", name=None):
    """Running minimum along `axis` and the index where it was found (the
    latest among ties); with axis None, over the flattened tensor.

    >>> import oar
    >>> values, indices = oar.cummin(oar.to_tensor([3, 1, 2, 0]))
    >>> values.numpy().tolist(), indices.numpy().tolist()
    ([3, 1, 1, 0], [0, 1, 1, 3])
    """
    return _C.cummin(x, _axis(axis, "oar.cummin"), dtype)


__tensor_methods__ = __all__
