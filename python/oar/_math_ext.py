"""Math, statistics and special functions of the paddle namespace written over the core ops.

Everything here is a composite of differentiable oar ops, so gradients (and
higher-order gradients) come from the ops' own rules. The few functions whose
result is integer-valued or piecewise constant (histograms, bincount, bit
shifts, nextafter, the indices of mode) compute on NumPy, which their
docstrings say.

Special functions without a closed composite (i0, i1, gammainc, polygamma) use
power series, asymptotic expansions and continued fractions with fixed term
counts chosen for float64 accuracy (Note [series evaluation]).

This module holds the constants, dtype information, comparisons, products and
elementwise functions, and exports all the names; the special functions are in
_math_special, the statistics, scans and histograms in _math_stats, the shared
argument helpers in _math_common.
"""
import builtins
import math

import numpy as np

from . import _C
from ._math_common import (Tensor, _DT, _INTS, _check_rank, _common, _dtype_name, _float_input, _from_numpy,
                           _inplace, _int_scalar, _like, _no_grad, _norm_axis, _number, _tensor)

__all__ = [
    # constants and dtype information
    "e", "pi", "inf", "nan", "newaxis", "finfo", "iinfo",
    # predicates and comparisons
    "allclose", "isclose", "equal_all", "isin", "isreal", "is_complex", "is_floating_point", "is_integer",
    "is_empty",
    # products and distances
    "addmm", "addmm_", "baddbmm", "baddbmm_", "inner", "mv", "vecdot", "tensordot", "trace", "dist", "cdist",
    "pdist", "renorm", "renorm_",
    # elementwise
    "div", "div_", "frexp", "ldexp", "ldexp_", "logit", "logit_", "stanh", "nextafter", "positive", "polar",
    "increment", "bitwise_left_shift", "bitwise_left_shift_", "bitwise_right_shift", "bitwise_right_shift_",
    # special functions
    "i0", "i0_", "i0e", "i1", "i1e", "gammainc", "gammainc_", "gammaincc", "gammaincc_", "polygamma", "polygamma_",
    "multigammaln", "multigammaln_", "xlogy",
    # reductions, scans and statistics
    "nanmean", "nansum", "nanmedian", "quantile", "nanquantile", "kthvalue", "mode", "msort", "logcumsumexp",
    "cumsum_", "cumprod_", "reduce_as", "diff", "trapezoid", "cumulative_trapezoid", "softmax",
    # counting
    "bincount", "bucketize", "histogram", "histogram_bin_edges", "histogramdd",
    # assembling
    "multiplex", "vander",
]

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None  # x[oar.newaxis] adds an axis, as NumPy's newaxis


# ---------------------------------------------------------------- dtype information

class finfo:  # noqa: N801 - Paddle's name
    """Machine limits of a floating-point (or complex, by its real part) dtype:
    bits, eps, min, max, tiny, smallest_normal, resolution and dtype (its name).

    >>> import oar
    >>> oar.finfo(oar.float32).eps
    1.1920928955078125e-07
    >>> oar.finfo('bfloat16').bits, oar.finfo(oar.float16).max
    (16, 65504.0)
    """

    _TABLE = {  # bits, mantissa bits (with the implicit one), largest exponent, decimal resolution
        "float16": (16, 11, 16, 1e-3), "bfloat16": (16, 8, 128, 1e-2),
        "float32": (32, 24, 128, 1e-6), "float64": (64, 53, 1024, 1e-15),
    }

    def __init__(self, dtype):
        name = _dtype_name(dtype, "oar.finfo")
        name = {"complex64": "float32", "complex128": "float64"}.get(name, name)
        if name not in self._TABLE:
            raise ValueError(f"[oar.finfo] expected a floating-point or complex dtype, got {name}")
        bits, mant, emax, res = self._TABLE[name]
        self.dtype = name
        self.bits = bits
        self.eps = 2.0 ** (1 - mant)
        self.max = (2.0 - 2.0 ** (1 - mant)) * 2.0 ** (emax - 1)
        self.min = -self.max
        self.smallest_normal = 2.0 ** (2 - emax)
        self.tiny = self.smallest_normal
        self.resolution = res

    def __repr__(self):
        return (f"oar.finfo(min={self.min:g}, max={self.max:g}, eps={self.eps:g}, resolution={self.resolution:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, bits={self.bits}, "
                f"dtype={self.dtype})")


class iinfo:  # noqa: N801 - Paddle's name
    """Limits of an integer dtype: bits, min, max and dtype (its name).

    >>> import oar
    >>> oar.iinfo(oar.int8).min, oar.iinfo('uint8').max
    (-128, 255)
    """

    def __init__(self, dtype):
        name = _dtype_name(dtype, "oar.iinfo")
        if name not in ("uint8", "int8", "int16", "int32", "int64"):
            raise ValueError(f"[oar.iinfo] expected an integer dtype (uint8, int8, int16, int32, int64), got {name}")
        info = np.iinfo(name)
        self.dtype, self.bits, self.min, self.max = name, info.bits, int(info.min), int(info.max)

    def __repr__(self):
        return f"oar.iinfo(min={self.min}, max={self.max}, bits={self.bits}, dtype={self.dtype})"


# ---------------------------------------------------------------- predicates and comparisons

def is_complex(x):
    """Whether x has a complex dtype.

    >>> import oar
    >>> oar.is_complex(oar.to_tensor([1 + 2j])), oar.is_complex(oar.ones([2]))
    (True, False)
    """
    return _tensor(x, "oar.is_complex").dtype.is_complex


def is_floating_point(x):
    """Whether x has a real floating-point dtype (float16, bfloat16, float32, float64).

    >>> import oar
    >>> oar.is_floating_point(oar.ones([2])), oar.is_floating_point(oar.to_tensor([1]))
    (True, False)
    """
    return _tensor(x, "oar.is_floating_point").dtype.is_floating_point


def is_integer(x):
    """Whether x has an integer dtype (bool is not one).

    >>> import oar
    >>> oar.is_integer(oar.to_tensor([1])), oar.is_integer(oar.to_tensor([True]))
    (True, False)
    """
    return _tensor(x, "oar.is_integer").dtype in _INTS


def is_empty(x, name=None):
    """Whether x has no elements, as a 0-D bool tensor.

    >>> import oar
    >>> oar.is_empty(oar.zeros([0, 3])).item()
    True
    """
    return _C.full([], _tensor(x, "oar.is_empty").size == 0, _DT.bool)


def isreal(x, name=None):
    """Elementwise whether x is real: a zero imaginary part for complex x, always true otherwise.

    >>> import oar
    >>> oar.isreal(oar.to_tensor([1 + 0j, 1 + 1j])).numpy().tolist()
    [True, False]
    """
    _tensor(x, "oar.isreal")
    if x.dtype.is_complex:
        return _C.equal(_C.imag(x), _C.full([], 0, _C.imag(x).dtype))
    return _C.full(list(x.shape), True, _DT.bool)


def isclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    """Elementwise |x - y| <= atol + rtol * |y| (broadcasting). Equal infinities
    are close; NaNs are close to each other only with `equal_nan`.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0, float('nan')])
    >>> y = oar.to_tensor([1.0, 2.000001, float('nan')])
    >>> oar.isclose(x, y).numpy().tolist()
    [True, True, False]
    >>> oar.isclose(x, y, equal_nan=True).numpy().tolist()
    [True, True, True]
    """
    api = "oar.isclose"
    rtol, atol = _number(rtol, api, "rtol"), _number(atol, api, "atol")
    if rtol < 0 or atol < 0:
        raise ValueError(f"[{api}] rtol and atol must be non-negative, got rtol={rtol}, atol={atol}")
    x, y = _common(x, y, api)
    if x.dtype == _DT.bool or x.dtype in _INTS:
        x, y = _C.cast(x, _DT.float64), _C.cast(y, _DT.float64)
    with _no_grad():
        exact = _C.equal(x, y)
        diff = _C.abs(_C.subtract(x, y))
        tol = _C.add(_C.full([], atol, diff.dtype), _C.multiply(_C.full([], rtol, diff.dtype), _C.abs(y)))
        finite = _C.logical_and(_C.isfinite(x), _C.isfinite(y))
        out = _C.logical_or(exact, _C.logical_and(finite, _C.less_equal(diff, tol)))
        if equal_nan:
            out = _C.logical_or(out, _C.logical_and(_C.isnan(x), _C.isnan(y)))
    return out


def allclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    """Whether every element of x is close to y (see isclose), as a 0-D bool tensor.

    >>> import oar
    >>> oar.allclose(oar.to_tensor([1.0, 2.0]), oar.to_tensor([1.0, 2.000001])).item()
    True
    """
    return _C.all(isclose(x, y, rtol, atol, equal_nan), None, False)


def equal_all(x, y, name=None):
    """Whether x and y have the same shape and equal elements, as a 0-D bool tensor.

    >>> import oar
    >>> oar.equal_all(oar.to_tensor([1, 2]), oar.to_tensor([1, 2])).item()
    True
    >>> oar.equal_all(oar.to_tensor([1, 2]), oar.to_tensor([[1, 2]])).item()
    False
    """
    x, y = _common(x, y, "oar.equal_all")
    if list(x.shape) != list(y.shape):
        return _C.full([], False, _DT.bool)
    return _C.all(_C.equal(x, y), None, False)


def isin(x, test_x, assume_unique=False, invert=False, name=None):
    """Elementwise whether x's elements occur in test_x (by sorting test_x and
    searching it); with `invert`, whether they do not. NaN occurs nowhere.

    >>> import oar
    >>> oar.isin(oar.to_tensor([[1, 2], [3, 4]]), oar.to_tensor([2, 3])).numpy().tolist()
    [[False, True], [True, False]]
    """
    api = "oar.isin"
    x, test_x = _common(x, test_x, api)
    if x.dtype.is_complex:
        raise TypeError(f"[{api}] complex tensors are not ordered, got {x.dtype.name}")
    if test_x.size == 0:
        return _C.full(list(x.shape), builtins.bool(invert), _DT.bool)
    seq = _C.reshape(test_x, [-1])
    seq = _C._sort(seq, -1, False, False)  # assume_unique changes nothing here
    flat = _C.reshape(x, [-1])
    pos = _C.clip(_C._searchsorted(seq, flat, False, False), 0, seq.size - 1)
    found = _C.equal(_C._gather(seq, pos, 0), flat)
    found = _C.reshape(found, list(x.shape))
    return _C.logical_not(found) if invert else found


# ---------------------------------------------------------------- products and distances

def _addmm(input, x, y, beta, alpha, api, batched, inplace=False):  # noqa: A002 - Paddle's argument name
    """beta * input + alpha * (x @ y), checked; beta == 0 ignores input (NaN or Inf there do not leak in)."""
    for v, w in ((input, "input"), (x, "x"), (y, "y")):
        _tensor(v, api, w)
    beta, alpha = _number(beta, api, "beta"), _number(alpha, api, "alpha")
    n = 3 if batched else 2
    _check_rank(x, n, api, "x")
    _check_rank(y, n, api, "y")
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(f"[{api}] x.shape[-1] ({x.shape[-1]}) must equal y.shape[-2] ({y.shape[-2]})")
    if batched and x.shape[0] != y.shape[0]:
        raise ValueError(f"[{api}] x and y must have the same batch size, got {x.shape[0]} and {y.shape[0]}")
    out_shape = list(x.shape[:-1]) + [y.shape[-1]]
    try:
        ok = list(np.broadcast_shapes(tuple(input.shape), tuple(out_shape))) == out_shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"[{api}] input of shape {list(input.shape)} cannot be broadcast to the product's shape "
                         f"{out_shape}")

    def compute(inp):
        prod = _C.matmul(x, y)
        out = prod if alpha == 1 else _C.multiply(prod, _like(alpha, prod))
        if beta == 0:
            return out
        return _C.add(inp if beta == 1 else _C.multiply(inp, _like(beta, inp)), out)
    return _inplace(input, compute, api) if inplace else compute(input)


def addmm(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002 - Paddle's argument name
    """beta * input + alpha * (x @ y) for 2-D x and y; input broadcasts to the
    product's shape. With beta == 0, input is not read (its NaNs do not propagate).

    >>> import oar
    >>> input = oar.ones([2, 2])
    >>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> oar.addmm(input, x, oar.eye(2), beta=0.5, alpha=2.0).numpy().tolist()
    [[2.5, 4.5], [6.5, 8.5]]
    """
    return _addmm(input, x, y, beta, alpha, "oar.addmm", False)


def addmm_(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002
    """In-place addmm: writes beta * input + alpha * (x @ y) into input.

    >>> import oar
    >>> input = oar.zeros([1, 2])
    >>> _ = oar.addmm_(input, oar.ones([1, 3]), oar.ones([3, 2]))
    >>> input.numpy().tolist()
    [[3.0, 3.0]]
    """
    return _addmm(input, x, y, beta, alpha, "oar.addmm_", False, inplace=True)


def baddbmm(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002
    """beta * input + alpha * bmm(x, y) for 3-D x [B, M, K] and y [B, K, N];
    input broadcasts to [B, M, N].

    >>> import oar
    >>> oar.baddbmm(oar.ones([2, 1, 2]), oar.ones([2, 1, 3]), oar.ones([2, 3, 2]), alpha=2.0).numpy().tolist()
    [[[7.0, 7.0]], [[7.0, 7.0]]]
    """
    return _addmm(input, x, y, beta, alpha, "oar.baddbmm", True)


def baddbmm_(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002
    """In-place baddbmm: writes beta * input + alpha * bmm(x, y) into input.

    >>> import oar
    >>> input = oar.ones([1, 1, 1])
    >>> oar.baddbmm_(input, oar.ones([1, 1, 2]), oar.ones([1, 2, 1]), beta=-1.0).numpy().tolist()
    [[[1.0]]]
    """
    return _addmm(input, x, y, beta, alpha, "oar.baddbmm_", True, inplace=True)


def inner(x, y, name=None):
    """Inner product over the last axes: the result has shape
    x.shape[:-1] + y.shape[:-1]; a 0-D operand multiplies elementwise.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> y = oar.to_tensor([[1.0, 1.0], [0.0, 1.0], [2.0, 2.0]])
    >>> oar.inner(x, y).numpy().tolist()
    [[3.0, 2.0, 6.0], [7.0, 4.0, 14.0]]
    """
    api = "oar.inner"
    x, y = _common(x, y, api)
    if x.ndim == 0 or y.ndim == 0:
        return _C.multiply(x, y)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"[{api}] the last dimensions must match, got shapes {list(x.shape)} and {list(y.shape)}")
    k = x.shape[-1]
    out = _C.matmul(_C.reshape(x, [-1, k]), _C.reshape(y, [-1, k]), False, True)
    return _C.reshape(out, list(x.shape[:-1]) + list(y.shape[:-1]))


def mv(x, vec, name=None):
    """Matrix-vector product of a 2-D x [M, N] and a 1-D vec [N].

    >>> import oar
    >>> oar.mv(oar.to_tensor([[1.0, 2.0], [3.0, 4.0]]), oar.to_tensor([1.0, 1.0])).numpy().tolist()
    [3.0, 7.0]
    """
    api = "oar.mv"
    _tensor(x, api)
    _tensor(vec, api, "vec")
    _check_rank(x, 2, api, "x")
    _check_rank(vec, 1, api, "vec")
    if x.shape[1] != vec.shape[0]:
        raise ValueError(f"[{api}] x.shape[1] ({x.shape[1]}) must equal vec.shape[0] ({vec.shape[0]})")
    return _C.matmul(x, vec)


def vecdot(x, y, axis=-1, name=None):
    """Dot product of vectors along `axis` (x conjugated for complex inputs); broadcasts.
    The same as oar.linalg.vecdot.

    >>> import oar
    >>> oar.vecdot(oar.to_tensor([[1.0, 2.0], [3.0, 4.0]]), oar.to_tensor([1.0, 1.0])).numpy().tolist()
    [3.0, 7.0]
    """
    api = "oar.vecdot"
    x, y = _common(x, y, api)
    return _C.sum(_C.multiply(_C.conj(x), y), [_int_scalar(axis, api, "axis")], None, False)


def _tensordot_axes(axes, nx, ny, api):
    if isinstance(axes, Tensor):
        axes = axes.numpy().tolist()
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, builtins.bool):
        n = int(axes)
        if n < 0 or n > nx or n > ny:
            raise ValueError(f"[{api}] axes={n} must be in [0, min(x.ndim, y.ndim)] = [0, {builtins.min(nx, ny)}]")
        return list(range(nx - n, nx)), list(range(n))
    if not isinstance(axes, (list, tuple)):
        raise TypeError(f"[{api}] axes must be an int, a list or a Tensor, got {type(axes).__name__}")
    axes = list(axes)
    if axes and all(isinstance(a, (int, np.integer)) for a in axes):
        ax, ay = axes, axes  # the same axes of both
    elif len(axes) in (1, 2) and all(isinstance(a, (list, tuple)) for a in axes):
        ax = list(axes[0])
        ay = list(axes[1]) if len(axes) == 2 else ax
    elif not axes:
        ax, ay = [], []
    else:
        raise TypeError(f"[{api}] axes must be an int, a list of ints or a pair of lists, got {axes}")
    # A shorter list is completed with the other list's remaining axes, as in Paddle.
    if len(ax) < len(ay):
        ax = ax + ay[len(ax):]
    elif len(ay) < len(ax):
        ay = ay + ax[len(ay):]
    ax = [_norm_axis(int(a), nx, api) for a in ax]
    ay = [_norm_axis(int(a), ny, api) for a in ay]
    if len(set(ax)) != len(ax) or len(set(ay)) != len(ay):
        raise ValueError(f"[{api}] an axis is contracted twice: {ax} of x, {ay} of y")
    return ax, ay


def tensordot(x, y, axes=2, name=None):
    """Sums the products of x's and y's elements over the given axes: an int n
    contracts the last n axes of x with the first n of y; a list of ints names
    the same axes of both; a pair of lists names x's and y's axes (a shorter
    list is completed from the other). A contracted axis of size 1 on one side
    broadcasts against the other.

    >>> import oar
    >>> x = oar.arange(6, dtype='float32').reshape([2, 3])
    >>> y = oar.arange(6, dtype='float32').reshape([3, 2])
    >>> oar.tensordot(x, y, axes=1).numpy().tolist()
    [[10.0, 13.0], [28.0, 40.0]]
    >>> oar.tensordot(x, x, axes=[[0, 1], [0, 1]]).item()
    55.0
    """
    api = "oar.tensordot"
    x, y = _common(x, y, api)
    ax, ay = _tensordot_axes(axes, x.ndim, y.ndim, api)
    for a, b in zip(ax, ay):
        sa, sb = x.shape[a], y.shape[b]
        if sa != sb and sa != 1 and sb != 1:
            raise ValueError(f"[{api}] contracted dims differ: x.shape[{a}] = {sa}, y.shape[{b}] = {sb}")
    # Size-1 contracted dims broadcast: sum the other side over them first.
    for a, b in zip(ax, ay):
        if x.shape[a] == 1 and y.shape[b] != 1:
            y = _C.sum(y, [b], None, True)
        elif y.shape[b] == 1 and x.shape[a] != 1:
            x = _C.sum(x, [a], None, True)
    fx = [i for i in range(x.ndim) if i not in ax]
    fy = [i for i in range(y.ndim) if i not in ay]
    k = int(np.prod([x.shape[a] for a in ax])) if ax else 1
    xm = _C.reshape(_C.transpose(x, fx + ax), [int(np.prod([x.shape[i] for i in fx])) if fx else 1, k])
    ym = _C.reshape(_C.transpose(y, ay + fy), [k, int(np.prod([y.shape[i] for i in fy])) if fy else 1])
    return _C.reshape(_C.matmul(xm, ym), [x.shape[i] for i in fx] + [y.shape[i] for i in fy])


def trace(x, offset=0, axis1=0, axis2=1, name=None):
    """Sum of the diagonal given by offset, axis1 and axis2 (0 when the offset
    leaves the matrix); the other axes stay. Integer dtypes are kept.

    >>> import oar
    >>> x = oar.arange(9, dtype='float32').reshape([3, 3])
    >>> oar.trace(x).item(), oar.trace(x, offset=1).item()
    (12.0, 6.0)
    """
    api = "oar.trace"
    _tensor(x, api)
    if x.ndim < 2:
        raise ValueError(f"[{api}] x must be at least 2-D, got shape {list(x.shape)}")
    if x.dtype == _DT.bool:
        raise TypeError(f"[{api}] x must be a numeric tensor, got bool")
    d = _C._diagonal(x, _int_scalar(offset, api, "offset"), _int_scalar(axis1, api, "axis1"),
                     _int_scalar(axis2, api, "axis2"))
    out = _C.sum(d, [-1], None, False)
    return _C.cast(out, x.dtype) if out.dtype != x.dtype else out


def _pnorm(d, p, axis, api):
    """The p-norm of d over `axis` (None: all): p=0 counts non-zeros, +-inf the largest/smallest |d|."""
    p = float(_number(p, api, "p"))
    if math.isnan(p):
        raise ValueError(f"[{api}] p must be a number, got nan")
    ax = None if axis is None else [axis]
    a = _C.abs(d)
    if p == 0:
        return _C.cast(_C.sum(_C.cast(_C.not_equal(d, _like(0, d)), _DT.int64), ax, None, False), d.dtype)
    if p == math.inf:
        return _C.amax(a, ax, False)
    if p == -math.inf:
        return _C.amin(a, ax, False)
    if p == 2:
        # sqrt(sum(d^2)) with a zero gradient at d = 0.
        s = _C.sum(_C.square(d), ax, None, False)
        zero = _C.equal(s, _like(0, s))
        safe = _C.where(zero, _like(1, s), s)
        return _C.where(zero, _like(0, s), _C.sqrt(safe))
    if p < 0:
        raise ValueError(f"[{api}] p must be non-negative (or -inf), got {p}")
    s = _C.sum(_C.pow(a, _like(p, a)), ax, None, False)
    zero = _C.equal(s, _like(0, s))
    safe = _C.where(zero, _like(1, s), s)
    return _C.where(zero, _like(0, s), _C.pow(safe, _like(1.0 / p, s)))


def dist(x, y, p=2, name=None):
    """The p-norm of x - y (broadcast, then flattened): p=0 counts the non-zero
    differences, inf/-inf give the largest/smallest |x - y|.

    >>> import oar
    >>> x = oar.to_tensor([[3.0, 3.0]])
    >>> oar.dist(x, oar.to_tensor([0.0, -1.0])).item()
    5.0
    >>> oar.dist(x, oar.to_tensor([0.0, -1.0]), p=float('inf')).item()
    4.0
    """
    api = "oar.dist"
    x, y = _common(x, y, api)
    x = _float_input(x, api)
    y = _C.cast(y, x.dtype) if y.dtype != x.dtype else y
    d = _C.subtract(x, y)
    return _pnorm(_C.reshape(d, [-1]), p, None, api)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def cdist(x, y, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary", name=None):
    """p-norm distances between the rows of x [..., P, M] and y [..., R, M]:
    a [..., P, R] tensor (batch dims broadcast). Every mode computes the exact
    differences, so the Euclidean distance is also accurate for near points.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 0.0], [3.0, 4.0]])
    >>> oar.cdist(x, x).numpy().tolist()
    [[0.0, 5.0], [5.0, 0.0]]
    >>> oar.cdist(x, x, p=1.0).numpy().tolist()
    [[0.0, 7.0], [7.0, 0.0]]
    """
    api = "oar.cdist"
    _tensor(x, api)
    _tensor(y, api, "y")
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"[{api}] compute_mode must be one of {list(_CDIST_MODES)}, got {compute_mode!r}")
    if not x.dtype.is_floating_point or not y.dtype.is_floating_point:
        raise TypeError(f"[{api}] x and y must be floating-point tensors, got {x.dtype.name} and {y.dtype.name}")
    if x.ndim < 2 or y.ndim < 2:
        raise ValueError(f"[{api}] x and y must be at least 2-D, got shapes {list(x.shape)} and {list(y.shape)}")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"[{api}] x and y must have the same number of columns, got {x.shape[-1]} and "
                         f"{y.shape[-1]}")
    x, y = _common(x, y, api)
    d = _C.subtract(_C.unsqueeze(x, [-2]), _C.unsqueeze(y, [-3]))
    return _pnorm(d, p, -1, api)


def pdist(x, p=2.0, name=None):
    """p-norm distances between every pair of rows i < j of a 2-D x [N, M], in
    row-major order of the pairs: a 1-D tensor of N * (N - 1) / 2.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    >>> oar.pdist(x).numpy().tolist()
    [5.0, 10.0, 5.0]
    """
    api = "oar.pdist"
    _tensor(x, api)
    _check_rank(x, 2, api, "x")
    if not x.dtype.is_floating_point:
        raise TypeError(f"[{api}] x must be a floating-point tensor, got {x.dtype.name}")
    i, j = np.triu_indices(x.shape[0], 1)
    d = _C.subtract(_C._index_select(x, _from_numpy(i.astype(np.int64), x), 0),
                    _C._index_select(x, _from_numpy(j.astype(np.int64), x), 0))
    return _pnorm(d, p, -1, api)


def _renorm(x, p, axis, max_norm, api):
    _tensor(x, api)
    if not x.dtype.is_floating_point:
        raise TypeError(f"[{api}] x must be a floating-point tensor, got {x.dtype.name}")
    p = float(_number(p, api, "p"))
    max_norm = float(_number(max_norm, api, "max_norm"))
    if p <= 0:
        raise ValueError(f"[{api}] p must be positive, got {p}")
    if max_norm < 0:
        raise ValueError(f"[{api}] max_norm must be non-negative, got {max_norm}")
    axis = _norm_axis(_int_scalar(axis, api, "axis"), x.ndim, api)
    others = [i for i in range(x.ndim) if i != axis]
    perm = [axis] + others
    rows = _C.reshape(_C.transpose(x, perm), [x.shape[axis], -1]) if x.ndim else _C.reshape(x, [1, 1])
    norms = _pnorm(rows, p, -1, api)
    factor = _C.where(_C.greater_than(norms, _like(max_norm, norms)),
                      _C.divide(_like(max_norm, norms), _C.add(norms, _like(1e-7, norms))), _like(1, norms))
    shape = [1] * x.ndim
    if x.ndim:
        shape[axis] = x.shape[axis]
    return _C.multiply(x, _C.reshape(factor, shape))


def renorm(x, p, axis, max_norm):
    """Scales each slice of x along `axis` whose p-norm exceeds max_norm down
    to norm max_norm (by max_norm / (norm + 1e-7)); other slices are kept.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> [round(v, 4) for v in oar.renorm(x, 2, 0, 3.0).numpy().reshape(-1).tolist()]
    [1.0, 2.0, 1.8, 2.4]
    """
    return _renorm(x, p, axis, max_norm, "oar.renorm")


def renorm_(x, p, axis, max_norm):
    """In-place renorm.

    >>> import oar
    >>> x = oar.to_tensor([[3.0, 4.0]])
    >>> _ = oar.renorm_(x, 2, 0, 1.0)
    >>> [round(v, 4) for v in x.numpy().reshape(-1).tolist()]
    [0.6, 0.8]
    """
    return _inplace(x, lambda v: _renorm(v, p, axis, max_norm, "oar.renorm_"), "oar.renorm_")



# ---------------------------------------------------------------- elementwise

_ROUNDING = (None, "trunc", "floor")


def _div(x, y, rounding_mode, api):
    if rounding_mode not in _ROUNDING:
        raise ValueError(f"[{api}] rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    _tensor(x, api)
    if not isinstance(y, Tensor):
        y = _number(y, api, "y")
        # A float scalar divides an integer tensor in the default float dtype.
        y = _C.full([], y, _C.get_default_dtype()) if isinstance(y, float) and x.dtype in _INTS else _like(y, x)
    if rounding_mode is None:
        return _C.divide(x, y)
    d = _C.promote_types(x.dtype, y.dtype)
    x, y = (_C.cast(x, d) if x.dtype != d else x), (_C.cast(y, d) if y.dtype != d else y)
    if d == _DT.bool or d.is_complex:
        raise TypeError(f"[{api}] rounding_mode={rounding_mode!r} needs real numeric tensors, got {d.name}")
    if d in _INTS:
        q = _C.floor_divide(x, y)
        if rounding_mode == "floor":
            return q
        # Truncation differs from flooring where the quotient is negative and inexact.
        inexact = _C.not_equal(_C.multiply(q, y), x)
        neg = _C.not_equal(_C.less_than(x, _like(0, x)), _C.less_than(y, _like(0, y)))
        return _C.add(q, _C.cast(_C.logical_and(inexact, neg), d))
    q = _C.divide(x, y)
    return _C.floor(q) if rounding_mode == "floor" else _C.trunc(q)


def div(x, y, name=None, *, rounding_mode=None, out=None):
    """x / y with optional rounding: None divides exactly (integers give floats),
    'trunc' rounds toward zero and 'floor' toward minus infinity (integers stay
    integers; integer division by zero is an error).

    >>> import oar
    >>> x, y = oar.to_tensor([7, -7]), oar.to_tensor([2, 2])
    >>> oar.div(x, y).numpy().tolist()
    [3.5, -3.5]
    >>> oar.div(x, y, rounding_mode='trunc').numpy().tolist()
    [3, -3]
    >>> oar.div(x, y, rounding_mode='floor').numpy().tolist()
    [3, -4]
    """
    res = _div(x, y, rounding_mode, "oar.div")
    if out is not None:
        _tensor(out, "oar.div", "out").copy_(_C.cast(res, out.dtype) if res.dtype != out.dtype else res)
        return out
    return res


def div_(x, y, name=None, *, rounding_mode=None):
    """In-place div; the result must keep x's dtype (exact division of integers does not).

    >>> import oar
    >>> x = oar.to_tensor([7.0, -7.0])
    >>> oar.div_(x, oar.to_tensor([2.0, 2.0]), rounding_mode='floor').numpy().tolist()
    [3.0, -4.0]
    """
    return _inplace(x, lambda v: _div(v, y, rounding_mode, "oar.div_"), "oar.div_")


def frexp(x, name=None):
    """Splits x into a mantissa in [0.5, 1) (with x's sign) and a power of two:
    x == mantissa * 2 ** exponent. Both have x's dtype; 0 gives (0, 0), and
    inf/nan give (x, 0) as NumPy's frexp. The mantissa is differentiable.

    >>> import oar
    >>> m, p = oar.frexp(oar.to_tensor([8.0, -3.0, 0.0]))
    >>> m.numpy().tolist(), p.numpy().tolist()
    ([0.5, -0.75, 0.0], [4.0, 2.0, 0.0])
    """
    api = "oar.frexp"
    _tensor(x, api)
    if x.dtype not in (_DT.float32, _DT.float64):
        raise TypeError(f"[{api}] x must be float32 or float64, got {x.dtype.name}")
    with _no_grad():
        a = _C.abs(x)
        usable = _C.logical_and(_C.isfinite(a), _C.greater_than(a, _like(0, a)))
        safe = _C.where(usable, a, _like(1, a))
        ex = _C.add(_C.floor(_C.log2(safe)), _like(1, a))
        # log2 can be off by one next to a power of two: fix m into [0.5, 1).
        m = _pow2_scale(safe, _C.neg(ex))
        ex = _C.where(_C.greater_equal(m, _like(1, m)), _C.add(ex, _like(1, ex)), ex)
        ex = _C.where(_C.less_than(m, _like(0.5, m)), _C.subtract(ex, _like(1, ex)), ex)
        ex = _C.where(usable, ex, _like(0, ex))
    mant = _C.where(usable, _pow2_scale(x, _C.neg(ex)), x)
    return mant, ex


def _pow2_scale(x, k):
    """x * 2**k for integer-valued float k, in two steps so that neither power
    over- or underflows where the product is representable."""
    half = _C.trunc(_C.multiply(k, _like(0.5, k)))
    two = _like(2, k)
    return _C.multiply(_C.multiply(x, _C.pow(two, half)), _C.pow(two, _C.subtract(k, half)))


def _ldexp(x, y, api):
    _tensor(x, api)
    _tensor(y, api, "y")
    if y.dtype not in _INTS:
        raise TypeError(f"[{api}] y must be an integer tensor, got {y.dtype.name}")
    x = _float_input(x, api)
    return _pow2_scale(x, _C.cast(y, x.dtype))


def ldexp(x, y, name=None):
    """x * 2 ** y for integer y (broadcasting); integer x becomes the default float dtype.

    >>> import oar
    >>> oar.ldexp(oar.to_tensor([1.0, 2.0]), oar.to_tensor([2, -3])).numpy().tolist()
    [4.0, 0.25]
    """
    return _ldexp(x, y, "oar.ldexp")


def ldexp_(x, y, name=None):
    """In-place ldexp (x must be floating point).

    >>> import oar
    >>> x = oar.to_tensor([3.0])
    >>> oar.ldexp_(x, oar.to_tensor([1])).numpy().tolist()
    [6.0]
    """
    return _inplace(x, lambda v: _ldexp(v, y, "oar.ldexp_"), "oar.ldexp_")


def _logit(x, eps, api):
    x = _float_input(_tensor(x, api), api)
    if eps is not None:
        eps = float(_number(eps, api, "eps"))
        if eps < 0 or eps > 0.5:
            raise ValueError(f"[{api}] eps must be in [0, 0.5], got {eps}")
        x = _C.clip(x, eps, 1.0 - eps)
    return _C.log(_C.divide(x, _C.subtract(_like(1, x), x)))


def logit(x, eps=None, name=None):
    """log(x / (1 - x)); with `eps`, x is first clipped to [eps, 1 - eps] (and
    the gradient is zero outside). Outside [0, 1] without eps the result is NaN.

    >>> import oar
    >>> [round(v, 4) for v in oar.logit(oar.to_tensor([0.2, 0.5, 0.9])).numpy().tolist()]
    [-1.3863, 0.0, 2.1972]
    >>> oar.logit(oar.to_tensor([0.0, 1.0])).numpy().tolist()
    [-inf, inf]
    """
    return _logit(x, eps, "oar.logit")


def logit_(x, eps=None, name=None):
    """In-place logit.

    >>> import oar
    >>> x = oar.to_tensor([0.5])
    >>> oar.logit_(x).numpy().tolist()
    [0.0]
    """
    return _inplace(x, lambda v: _logit(v, eps, "oar.logit_"), "oar.logit_")


def stanh(x, scale_a=0.67, scale_b=1.7159, name=None):
    """The scaled tanh scale_b * tanh(scale_a * x).

    >>> import oar
    >>> round(oar.stanh(oar.to_tensor([1.0])).item(), 5)
    1.00377
    """
    api = "oar.stanh"
    x = _float_input(x, api)
    a, b = float(_number(scale_a, api, "scale_a")), float(_number(scale_b, api, "scale_b"))
    return _C.multiply(_C.tanh(_C.multiply(x, _like(a, x))), _like(b, x))


def nextafter(x, y, name=None):
    """The next representable value after x in the direction of y (broadcasting),
    for float32 and float64. Piecewise constant, so computed on NumPy and not
    differentiable.

    >>> import oar
    >>> oar.nextafter(oar.to_tensor([1.0], dtype='float64'), oar.to_tensor([2.0], dtype='float64')).item()
    1.0000000000000002
    """
    api = "oar.nextafter"
    x, y = _common(x, y, api)
    if x.dtype not in (_DT.float32, _DT.float64):
        raise TypeError(f"[{api}] x and y must be float32 or float64, got {x.dtype.name}")
    out = np.nextafter(x.numpy(), y.numpy())
    return _from_numpy(np.asarray(out, dtype=x.numpy().dtype), x)


def positive(x, name=None):
    """x itself (the unary plus); bool tensors are refused as in Paddle.

    >>> import oar
    >>> oar.positive(oar.to_tensor([1, -2])).numpy().tolist()
    [1, -2]
    """
    _tensor(x, "oar.positive")
    if x.dtype == _DT.bool:
        raise TypeError("[oar.positive] the unary plus is not defined for bool tensors")
    return x


def polar(abs, angle, name=None, *, out=None):  # noqa: A002 - Paddle's argument name
    """The complex tensor abs * (cos(angle) + i sin(angle)) (float32 gives
    complex64, float64 complex128); differentiable in both inputs.

    >>> import oar
    >>> z = oar.polar(oar.to_tensor([2.0], dtype='float64'), oar.to_tensor([0.0], dtype='float64'))
    >>> z.dtype == oar.complex128, z.numpy().tolist()
    (True, [(2+0j)])
    """
    api = "oar.polar"
    abs, angle = _common(abs, angle, api)
    if abs.dtype not in (_DT.float32, _DT.float64):
        raise TypeError(f"[{api}] abs and angle must be float32 or float64, got {abs.dtype.name}")
    res = _C.complex(_C.multiply(abs, _C.cos(angle)), _C.multiply(abs, _C.sin(angle)))
    if out is not None:
        _tensor(out, api, "out").copy_(res)
        return out
    return res


def increment(x, value=1.0, name=None):
    """Adds `value` to a one-element tensor x in place and returns x (x keeps its dtype).

    >>> import oar
    >>> x = oar.to_tensor([1.0])
    >>> _ = oar.increment(x, 2.0)
    >>> x.numpy().tolist()
    [3.0]
    """
    api = "oar.increment"
    _tensor(x, api)
    if x.size != 1:
        raise ValueError(f"[{api}] x must have exactly one element, got shape {list(x.shape)}")
    v = _number(value, api, "value")
    return _inplace(x, lambda t: _C.add(t, _like(v, t)), api)


def _shift(x, y, is_arithmetic, left, api):
    x, y = _common(x, y, api)
    if x.dtype not in _INTS:
        raise TypeError(f"[{api}] x and y must be integer tensors, got {x.dtype.name}")
    a, s = np.broadcast_arrays(x.numpy(), y.numpy())
    bits = a.dtype.itemsize * 8
    unsigned = np.dtype(f"uint{bits}")
    big = (s < 0) | (s >= bits)
    sh = np.where(big, 0, s).astype(unsigned)
    u = a.view(unsigned) if a.flags.c_contiguous else np.ascontiguousarray(a).view(unsigned)
    if left:
        r = np.left_shift(u, sh).view(a.dtype)
        r = np.where(big, 0, r)
    elif is_arithmetic or a.dtype == np.uint8:
        r = np.right_shift(a, sh.astype(a.dtype))
        r = np.where(big, np.where(a < 0, -1, 0), r)
    else:
        r = np.right_shift(u, sh).view(a.dtype)
        r = np.where(big, 0, r)
    return _from_numpy(np.asarray(r, dtype=a.dtype), x)


def bitwise_left_shift(x, y, is_arithmetic=True, out=None, name=None):
    """x << y elementwise (broadcasting) for integer tensors, wrapping at the
    dtype's width; a shift below 0 or by the width or more gives 0. Integer
    valued, so computed on NumPy.

    >>> import oar
    >>> x = oar.to_tensor([1, -3, 64], dtype='int8')
    >>> oar.bitwise_left_shift(x, oar.to_tensor([2, 1, 1], dtype='int8')).numpy().tolist()
    [4, -6, -128]
    """
    res = _shift(x, y, is_arithmetic, True, "oar.bitwise_left_shift")
    if out is not None:
        _tensor(out, "oar.bitwise_left_shift", "out").copy_(res)
        return out
    return res


def bitwise_left_shift_(x, y, is_arithmetic=True, out=None, name=None):
    """In-place bitwise_left_shift.

    >>> import oar
    >>> x = oar.to_tensor([1, 2])
    >>> oar.bitwise_left_shift_(x, oar.to_tensor([3, 3])).numpy().tolist()
    [8, 16]
    """
    return _inplace(x, lambda v: _shift(v, y, is_arithmetic, True, "oar.bitwise_left_shift_"),
                    "oar.bitwise_left_shift_")


def bitwise_right_shift(x, y, is_arithmetic=True, out=None, name=None):
    """x >> y elementwise (broadcasting) for integer tensors: with
    `is_arithmetic` the sign bit is copied in (a shift below 0 or by the width
    or more gives -1 for negative x, else 0); otherwise zeros are shifted in
    (the bits read as unsigned). Integer valued, so computed on NumPy.

    >>> import oar
    >>> x = oar.to_tensor([-8, -3, 64], dtype='int8')
    >>> y = oar.to_tensor([2, 1, 1], dtype='int8')
    >>> oar.bitwise_right_shift(x, y).numpy().tolist()
    [-2, -2, 32]
    >>> oar.bitwise_right_shift(x, y, is_arithmetic=False).numpy().tolist()
    [62, 126, 32]
    """
    res = _shift(x, y, is_arithmetic, False, "oar.bitwise_right_shift")
    if out is not None:
        _tensor(out, "oar.bitwise_right_shift", "out").copy_(res)
        return out
    return res


def bitwise_right_shift_(x, y, is_arithmetic=True, out=None, name=None):
    """In-place bitwise_right_shift.

    >>> import oar
    >>> x = oar.to_tensor([16, -16])
    >>> oar.bitwise_right_shift_(x, oar.to_tensor([2, 2])).numpy().tolist()
    [4, -4]
    """
    return _inplace(x, lambda v: _shift(v, y, is_arithmetic, False, "oar.bitwise_right_shift_"),
                    "oar.bitwise_right_shift_")


from ._math_special import *  # noqa: E402,F401,F403
from ._math_stats import *  # noqa: E402,F401,F403


# Note [Tensor methods]: Paddle has all of these as Tensor methods except the
# constants, finfo/iinfo, pdist, vecdot and positive.
_NOT_METHODS = {"e", "pi", "inf", "nan", "newaxis", "finfo", "iinfo", "pdist", "vecdot", "positive"}
__tensor_methods__ = tuple(n for n in __all__ if n not in _NOT_METHODS)
