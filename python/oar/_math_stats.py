"""Reductions, scans, order statistics, histograms and assembling functions of
the paddle namespace: nanmean, nansum, nanmedian, quantile, nanquantile,
kthvalue, mode, msort, logcumsumexp, cumsum_, cumprod_, reduce_as, diff,
trapezoid, cumulative_trapezoid, softmax, bincount, bucketize, histogram,
histogram_bin_edges, histogramdd, multiplex and vander.

Values are gathered from the input with differentiable ops (sort,
take_along_axis), so order statistics have gradients; only integer-valued
results (counts, bucket and mode indices) are computed on NumPy.
"""
import builtins
import math

import numpy as np

from . import _C
from ._math_common import (Tensor, _DT, _INTS, _check_rank, _float_input, _from_numpy, _inplace,
                           _int_scalar, _like, _no_grad, _norm_axis, _number, _tensor)

# Axis arguments are normalised as the declared functions' are (python/bind/args.h).
_axes = _C._arg_axes
_axis = _C._arg_opt_axis

__all__ = [
    "nanmean", "nansum", "nanmedian", "quantile", "nanquantile", "kthvalue", "mode", "msort", "logcumsumexp",
    "cumsum_", "cumprod_", "reduce_as", "diff", "trapezoid", "cumulative_trapezoid", "softmax",
    "bincount", "bucketize", "histogram", "histogram_bin_edges", "histogramdd", "multiplex", "vander",
]


def _not_nan(x):
    return _C.logical_not(_C.isnan(x))


# ---------------------------------------------------------------- NaN-ignoring reductions

def nansum(x, axis=None, dtype=None, keepdim=False, name=None):
    """Sum over `axis` treating NaN as zero (all axes when None). Integer and
    bool inputs sum to int64 unless `dtype` says otherwise.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, float('nan')], [float('nan'), float('nan')]])
    >>> oar.nansum(x, axis=1).numpy().tolist()
    [1.0, 0.0]
    """
    api = "oar.nansum"
    _tensor(x, api)
    ax = _axes(axis, api)
    if x.dtype.is_floating_point or x.dtype.is_complex:
        x = _C.where(_C.isnan(x), _like(0, x), x)
    return _C.sum(x, ax, dtype, builtins.bool(keepdim))


def nanmean(x, axis=None, keepdim=False, name=None):
    """Mean over `axis` of the non-NaN elements (NaN where all are NaN).
    Integer inputs are averaged in the default float dtype.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, float('nan'), 3.0], [float('nan')] * 3])
    >>> oar.nanmean(x, axis=1).numpy().tolist()
    [2.0, nan]
    """
    api = "oar.nanmean"
    x = _float_input(x, api, complex_ok=True)
    ax = _axes(axis, api)
    keep = _not_nan(x)
    total = _C.sum(_C.where(keep, x, _like(0, x)), ax, None, builtins.bool(keepdim))
    count = _C.sum(_C.cast(keep, x.dtype), ax, None, builtins.bool(keepdim))
    return _C.divide(total, count)


# ---------------------------------------------------------------- order statistics

def _to_last(x, axes, api):
    """x with `axes` moved to the end and flattened into one: (x2, kept_shape_with_ones, kept_shape)."""
    nd = x.ndim
    axes = sorted({_norm_axis(a, nd, api) for a in axes}) if nd else []
    rest = [i for i in range(nd) if i not in axes]
    moved = _C.transpose(x, rest + axes) if nd else _C.reshape(x, [1])
    n = int(np.prod([x.shape[a] for a in axes])) if nd else 1
    kept = [x.shape[i] for i in rest]
    kept_ones = [1 if i in axes else x.shape[i] for i in range(nd)]
    return _C.reshape(moved, kept + [n]), kept_ones, kept


def _check_axes(x, axis, api):
    axes = _axes(axis, api)
    if axes is None:
        return list(range(x.ndim))
    for a in axes:
        _norm_axis(a, x.ndim, api)
    norm = [a % builtins.max(x.ndim, 1) for a in axes]
    if len(set(norm)) != len(norm):
        raise ValueError(f"[{api}] axis has repeated entries: {axes}")
    return axes


def _q_list(q, api):
    """(list of floats, whether the result has a q axis)."""
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise ValueError(f"[{api}] q must be a number or a 1-D Tensor, got shape {list(q.shape)}")
        vals, multi = [float(v) for v in q.numpy().reshape(-1)], q.ndim == 1 and q.size > 1
    elif isinstance(q, (list, tuple)):
        vals = [float(_number(v, api, "q")) for v in q]
        multi = len(vals) > 1
    else:
        vals, multi = [float(_number(q, api, "q"))], False
    if not vals:
        raise ValueError(f"[{api}] q must not be empty")
    for v in vals:
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"[{api}] q must be in [0, 1], got {v}")
    return vals, multi


def _round_half_even(v):
    fl = _C.floor(v)
    fr = _C.subtract(v, fl)
    half = _C.full([], 0.5, v.dtype)
    up = _C.add(fl, _C.full([], 1.0, v.dtype))
    even = _C.add(fl, _C.remainder(fl, _C.full([], 2.0, v.dtype)))
    return _C.where(_C.greater_than(fr, half), up, _C.where(_C.less_than(fr, half), fl, even))


_INTERPOLATIONS = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantile(x, q, axis, keepdim, interpolation, ignore_nan, api):
    _tensor(x, api)
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"[{api}] interpolation must be one of {list(_INTERPOLATIONS)}, got {interpolation!r}")
    x = _float_input(x, api)
    qs, multi = _q_list(q, api)
    axes = _check_axes(x, axis, api)
    rows, kept_ones, kept = _to_last(x, axes, api)
    n = rows.shape[-1]
    srt = _C._sort(rows, -1, False, False)  # NaN sorts last
    nan_mask = _C.isnan(rows)
    with _no_grad():
        if ignore_nan:
            count = _C.sum(_C.cast(_C.logical_not(nan_mask), _DT.float64), [-1], None, True)
        else:
            count = _C.full(kept + [1], float(n), _DT.float64)
        last = _C.maximum(_C.subtract(count, _C.full([], 1.0, _DT.float64)), _C.full([], 0.0, _DT.float64))
    outs = []
    for qv in qs:
        with _no_grad():
            pos = _C.multiply(last, _C.full([], qv, _DT.float64))
            lo, hi = _C.floor(pos), _C.ceil(pos)
            if interpolation == "nearest":
                lo = hi = _round_half_even(pos)  # as NumPy's and Paddle's 'nearest'
            elif interpolation == "lower":
                hi = lo
            elif interpolation == "higher":
                lo = hi
            frac = _C.cast(_C.subtract(pos, lo), x.dtype)
            cap = _C.full([], float(builtins.max(n - 1, 0)), _DT.float64)
            ilo = _C.cast(_C.minimum(lo, cap), _DT.int64)
            ihi = _C.cast(_C.minimum(hi, cap), _DT.int64)
        if n == 0:
            outs.append(_C.full(kept, math.nan, x.dtype))
            continue
        vlo = _C.squeeze(_C._take_along_axis(srt, ilo, -1, True), [-1])
        vhi = _C.squeeze(_C._take_along_axis(srt, ihi, -1, True), [-1])
        if interpolation == "linear":
            val = _C.add(vlo, _C.multiply(_C.subtract(vhi, vlo), _C.squeeze(frac, [-1])))
        elif interpolation == "midpoint":
            val = _C.multiply(_C.add(vlo, vhi), _like(0.5, vlo))
        else:
            val = vlo
        bad = _C.any(nan_mask, [-1], False) if not ignore_nan else _C.equal(_C.squeeze(count, [-1]), _C.full(
            [], 0.0, _DT.float64))
        outs.append(_C.where(bad, _like(math.nan, val), val))
    shape = kept_ones if keepdim else kept
    outs = [_C.reshape(o, shape) for o in outs]
    return _C._stack(outs, 0) if multi else outs[0]


def quantile(x, q, axis=None, keepdim=False, interpolation="linear", name=None, *, out=None):
    """The q-th quantiles of x over `axis` (an int, a list of ints, or None for
    all elements). q is a number, a list or a 1-D Tensor in [0, 1]; several q
    put a leading axis on the result. interpolation: 'linear', 'lower',
    'higher', 'nearest' or 'midpoint'. A NaN in a slice makes its quantile NaN.
    Differentiable through the sort.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    >>> oar.quantile(x, 0.5, axis=1).numpy().tolist()
    [2.5, 6.5]
    >>> oar.quantile(x, [0.25, 0.5]).numpy().tolist()
    [2.75, 4.5]
    """
    res = _quantile(x, q, axis, keepdim, interpolation, False, "oar.quantile")
    if out is not None:
        _tensor(out, "oar.quantile", "out").copy_(res)
        return out
    return res


def nanquantile(x, q, axis=None, keepdim=False, interpolation="linear"):
    """quantile over the non-NaN elements of each slice (NaN where all are NaN).

    >>> import oar
    >>> x = oar.to_tensor([[1.0, float('nan'), 3.0, 4.0]])
    >>> oar.nanquantile(x, 0.5, axis=1).numpy().tolist()
    [3.0]
    """
    return _quantile(x, q, axis, keepdim, interpolation, True, "oar.nanquantile")


def nanmedian(x, axis=None, keepdim=False, mode="avg", name=None):
    """The median of the non-NaN elements over `axis` (all elements when None;
    NaN where all are NaN). mode 'avg' averages the two middle values of an
    even count; mode 'min' takes the lower one and, with an axis, also returns
    its index (-1 where all are NaN). Integer inputs keep their dtype (an
    average is truncated), as in Paddle.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, float('nan'), 3.0, 4.0], [2.0, 5.0, float('nan'), float('nan')]])
    >>> oar.nanmedian(x, axis=1).numpy().tolist()
    [3.0, 3.5]
    >>> values, indices = oar.nanmedian(x, axis=1, mode='min')
    >>> values.numpy().tolist(), indices.numpy().tolist()
    ([3.0, 2.0], [2, 0])
    """
    api = "oar.nanmedian"
    _tensor(x, api)
    if mode not in ("avg", "min"):
        raise ValueError(f"[{api}] mode must be 'avg' or 'min', got {mode!r}")
    axes = _check_axes(x, axis, api)
    orig = x.dtype
    xf = x if x.dtype.is_floating_point else _C.cast(x, _DT.float64)
    rows, kept_ones, kept = _to_last(xf, axes, api)
    n = rows.shape[-1]
    if n == 0:
        raise ValueError(f"[{api}] the reduced axes are empty")
    order = _C._argsort(rows, -1, False, True)
    srt = _C._take_along_axis(rows, order, -1, True)
    with _no_grad():
        count = _C.sum(_C.cast(_not_nan(rows), _DT.int64), [-1], None, True)
        none = _C.equal(count, _C.full([], 0, _DT.int64))
        c1 = _C.maximum(_C.subtract(count, _C.full([], 1, _DT.int64)), _C.full([], 0, _DT.int64))
        ilo = _C.floor_divide(c1, _C.full([], 2, _DT.int64))
        ihi = _C.subtract(c1, ilo)
    vlo = _C._take_along_axis(srt, ilo, -1, True)
    if mode == "min":
        val = vlo
    else:
        val = _C.multiply(_C.add(vlo, _C._take_along_axis(srt, ihi, -1, True)), _like(0.5, vlo))
    val = _C.where(none, _like(math.nan, val), val)
    shape = kept_ones if keepdim else kept
    val = _C.reshape(val, shape)
    if orig != xf.dtype:
        val = _C.cast(val, orig)
    if mode == "min" and axis is not None:
        with _no_grad():
            idx = _C._take_along_axis(order, ilo, -1, True)
            idx = _C.where(none, _C.full([], -1, _DT.int64), idx)
        return val, _C.reshape(idx, shape)
    return val


def kthvalue(x, k, axis=None, keepdim=False, name=None):
    """The k-th smallest value along `axis` (the last axis when None) and its
    index; among equal values the earlier index comes first, NaN is largest.

    >>> import oar
    >>> x = oar.to_tensor([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 5.0, 4.0]])
    >>> values, indices = oar.kthvalue(x, 2)
    >>> values.numpy().tolist(), indices.numpy().tolist()
    ([1.0, 4.0], [3, 3])
    """
    api = "oar.kthvalue"
    _tensor(x, api)
    k = _int_scalar(k, api, "k")
    ax = -1 if axis is None else _axis(axis, api)
    ax = _norm_axis(ax, x.ndim, api)
    xv = x if x.ndim else _C.reshape(x, [1])
    n = xv.shape[ax]
    if k < 1 or k > n:
        raise ValueError(f"[{api}] k must be in [1, {n}] (the size of axis {ax}), got {k}")
    order = _C._argsort(xv, ax, False, True)
    idx = _C.strided_slice(order, [ax], [k - 1], [k], [1])
    val = _C._take_along_axis(xv, idx, ax, True)
    if not keepdim or x.ndim == 0:
        val, idx = _C.squeeze(val, [ax]), _C.squeeze(idx, [ax])
    return val, idx


def mode(x, axis=-1, keepdim=False, name=None):
    """The most frequent value along `axis` and the index of its last
    occurrence; among equally frequent values the smallest wins. The indices
    are found on NumPy; the values are gathered differentiably.

    >>> import oar
    >>> values, indices = oar.mode(oar.to_tensor([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 5.0, 4.0]]))
    >>> values.numpy().tolist(), indices.numpy().tolist()
    ([1.0, 5.0], [3, 2])
    """
    api = "oar.mode"
    _tensor(x, api)
    ax = _norm_axis(_axis(axis, api), x.ndim, api)
    xv = x if x.ndim else _C.reshape(x, [1])
    if xv.shape[ax] == 0:
        raise ValueError(f"[{api}] axis {ax} is empty")
    a = np.moveaxis(xv.numpy(), ax, -1)
    lead = a.shape[:-1]
    rows = a.reshape(-1, a.shape[-1])
    order = np.argsort(rows, axis=-1, kind="stable")
    s = np.take_along_axis(rows, order, -1)
    m = s.shape[-1]
    pos = np.broadcast_to(np.arange(m), s.shape)
    starts = np.concatenate([np.ones((s.shape[0], 1), bool), s[:, 1:] != s[:, :-1]], axis=1)
    ends = np.concatenate([s[:, 1:] != s[:, :-1], np.ones((s.shape[0], 1), bool)], axis=1)
    run_start = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)
    length = np.where(ends, pos - run_start + 1, 0)
    best = np.argmax(length, axis=1)  # the first (smallest) of the most frequent values
    index = order[np.arange(s.shape[0]), best].reshape(lead + (1,))
    idx = _from_numpy(np.moveaxis(index.astype(np.int64), -1, ax), x)
    val = _C._take_along_axis(xv, idx, ax, True)
    if not keepdim or x.ndim == 0:
        val, idx = _C.squeeze(val, [ax]), _C.squeeze(idx, [ax])
    return val, idx


def msort(input, *, out=None):  # noqa: A002 - Paddle's argument name
    """Sorts along the first axis (ascending).

    >>> import oar
    >>> oar.msort(oar.to_tensor([[3, 1], [0, 5]])).numpy().tolist()
    [[0, 1], [3, 5]]
    """
    _tensor(input, "oar.msort", "input")
    res = input if input.ndim == 0 else _C._sort(input, 0, False, False)
    if out is not None:
        _tensor(out, "oar.msort", "out").copy_(res)
        return out
    return res


# ---------------------------------------------------------------- scans

def logcumsumexp(x, axis=None, dtype=None, name=None):
    """log(cumsum(exp(x))) along `axis` (over the flattened tensor when None),
    computed without overflow as a scan of logaddexp (log2(n) steps).
    Integer inputs become the default float dtype; `dtype` casts x first.

    >>> import oar
    >>> x = oar.to_tensor([1000.0, 1000.0, 1000.0])
    >>> [round(v, 3) for v in oar.logcumsumexp(x).numpy().tolist()]
    [1000.0, 1000.693, 1001.099]
    """
    api = "oar.logcumsumexp"
    _tensor(x, api)
    if dtype is not None:
        x = _C.cast(x, dtype)
    x = _float_input(x, api)
    ax = _axis(axis, api)
    if ax is None:
        x, ax = _C.reshape(x, [-1]), 0
    ax = _norm_axis(ax, x.ndim, api)
    if x.ndim == 0:
        return x
    n = x.shape[ax]
    step = 1
    while step < n:
        head = _C.strided_slice(x, [ax], [0], [step], [1])
        tail = _C.logaddexp(_C.strided_slice(x, [ax], [step], [n], [1]),
                            _C.strided_slice(x, [ax], [0], [n - step], [1]))
        x = _C._concat([head, tail], ax)
        step *= 2
    return x


def cumsum_(x, axis=None, dtype=None, name=None):
    """In-place cumsum (over the flattened tensor when axis is None, keeping x's shape).

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0, 3.0])
    >>> oar.cumsum_(x).numpy().tolist()
    [1.0, 3.0, 6.0]
    """
    api = "oar.cumsum_"
    ax = _axis(axis, api)
    return _inplace(x, lambda v: _C.reshape(_C.cumsum(v, ax, dtype), list(v.shape)), api)


def cumprod_(x, dim=None, dtype=None, name=None):
    """In-place cumprod (over the flattened tensor when dim is None, keeping x's shape).

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0, 3.0])
    >>> oar.cumprod_(x, dim=0).numpy().tolist()
    [1.0, 2.0, 6.0]
    """
    api = "oar.cumprod_"
    ax = _axis(dim, api)
    return _inplace(x, lambda v: _C.reshape(_C.cumprod(v, ax, dtype), list(v.shape)), api)


def reduce_as(x, target, name=None):
    """Sums x over the axes that broadcasting target to x's shape would add or
    stretch, giving target's shape (the gradient of a broadcast). Integer and
    bool inputs sum to int64.

    >>> import oar
    >>> oar.reduce_as(oar.ones([2, 3, 4]), oar.ones([3, 1])).numpy().tolist()
    [[8.0], [8.0], [8.0]]
    """
    api = "oar.reduce_as"
    _tensor(x, api)
    _tensor(target, api, "target")
    xs, ts = list(x.shape), list(target.shape)
    lead = len(xs) - len(ts)
    if lead < 0 or builtins.any(t != 1 and t != s for t, s in zip(ts, xs[lead:])):
        raise ValueError(f"[{api}] target of shape {ts} does not broadcast to x's shape {xs}")
    axes = list(range(lead)) + [lead + i for i, t in enumerate(ts) if t == 1 and xs[lead + i] != 1]
    if axes:
        out = _C.sum(x, axes, None, False)
    else:  # nothing to reduce; integer and bool inputs still become int64 as sum gives
        out = x if x.dtype.is_floating_point or x.dtype.is_complex else _C.cast(x, _DT.int64)
    return _C.reshape(out, ts)


def diff(x, n=1, axis=-1, prepend=None, append=None, name=None, *, out=None):
    """The n-th forward difference along `axis`: out[i] = x[i+1] - x[i]
    (applied n times), after joining `prepend` and `append` to x along axis.
    For bool tensors the difference is x[i+1] != x[i].

    >>> import oar
    >>> oar.diff(oar.to_tensor([1, 4, 9, 16])).numpy().tolist()
    [3, 5, 7]
    >>> oar.diff(oar.to_tensor([1.0, 4.0, 9.0, 16.0]), n=2).numpy().tolist()
    [2.0, 2.0]
    """
    api = "oar.diff"
    _tensor(x, api)
    if x.ndim == 0:
        raise ValueError(f"[{api}] x must be at least 1-D, got a 0-D tensor")
    n = _int_scalar(n, api, "n")
    if n < 1:
        raise ValueError(f"[{api}] n must be a positive int, got {n}")
    ax = _norm_axis(_int_scalar(axis, api, "axis"), x.ndim, api)
    parts = []
    for v, what in ((prepend, "prepend"), (x, "x"), (append, "append")):
        if v is None:
            continue
        _tensor(v, api, what)
        if v.ndim != x.ndim:
            raise ValueError(f"[{api}] {what} must have x's rank {x.ndim}, got shape {list(v.shape)}")
        parts.append(v if v.dtype == x.dtype else _C.cast(v, x.dtype))
    y = _C._concat(parts, ax) if len(parts) > 1 else x
    for _ in range(n):
        m = y.shape[ax]
        if m == 0:
            break
        hi, lo = _C.strided_slice(y, [ax], [1], [m], [1]), _C.strided_slice(y, [ax], [0], [m - 1], [1])
        y = _C.not_equal(hi, lo) if y.dtype == _DT.bool else _C.subtract(hi, lo)
    if out is not None:
        _tensor(out, api, "out").copy_(y)
        return out
    return y


def _trapezoid_terms(y, x, dx, axis, api):
    """The per-interval areas (y[i] + y[i+1]) / 2 * dx_i along axis, and the axis."""
    _tensor(y, api, "y")
    if not y.dtype.is_floating_point:
        raise TypeError(f"[{api}] y must be a floating-point tensor, got {y.dtype.name}")
    if x is not None and dx is not None:
        raise ValueError(f"[{api}] give x or dx, not both")
    if y.ndim == 0:
        raise ValueError(f"[{api}] y must be at least 1-D, got a 0-D tensor")
    ax = _norm_axis(_int_scalar(axis, api, "axis"), y.ndim, api)
    n = y.shape[ax]
    lo = _C.strided_slice(y, [ax], [0], [builtins.max(n - 1, 0)], [1])
    hi = _C.strided_slice(y, [ax], [1], [builtins.max(n, 1)], [1])
    mid = _C.multiply(_C.add(lo, hi), _like(0.5, y))
    if x is None:
        step = 1.0 if dx is None else float(_number(dx, api, "dx"))
        return _C.multiply(mid, _like(step, y)), ax
    _tensor(x, api, "x")
    if not x.dtype.is_floating_point:
        raise TypeError(f"[{api}] x must be a floating-point tensor, got {x.dtype.name}")
    x = x if x.dtype == y.dtype else _C.cast(x, y.dtype)
    if x.ndim == 1:
        if x.shape[0] != n:
            raise ValueError(f"[{api}] a 1-D x must have y.shape[axis] = {n} elements, got {x.shape[0]}")
        d = _C.subtract(_C.strided_slice(x, [0], [1], [builtins.max(n, 1)], [1]),
                        _C.strided_slice(x, [0], [0], [builtins.max(n - 1, 0)], [1]))
        shape = [1] * y.ndim
        shape[ax] = builtins.max(n - 1, 0)
        d = _C.reshape(d, shape)
    else:
        if x.ndim != y.ndim or x.shape[ax] != n:
            raise ValueError(f"[{api}] x must be 1-D or have y's rank and y.shape[axis]; got shapes "
                             f"{list(x.shape)} and {list(y.shape)}")
        d = _C.subtract(_C.strided_slice(x, [ax], [1], [builtins.max(n, 1)], [1]),
                        _C.strided_slice(x, [ax], [0], [builtins.max(n - 1, 0)], [1]))
    return _C.multiply(mid, d), ax


def trapezoid(y, x=None, dx=None, axis=-1, name=None):
    """The integral of y along `axis` by the trapezoidal rule, with sample
    points x (1-D or y's shape) or a constant spacing dx (1 by default).

    >>> import oar
    >>> oar.trapezoid(oar.to_tensor([1.0, 2.0, 3.0])).item()
    4.0
    >>> oar.trapezoid(oar.to_tensor([1.0, 2.0, 3.0]), x=oar.to_tensor([0.0, 1.0, 3.0])).item()
    6.5
    """
    terms, ax = _trapezoid_terms(y, x, dx, axis, "oar.trapezoid")
    return _C.sum(terms, [ax], None, False)


def cumulative_trapezoid(y, x=None, dx=None, axis=-1, name=None):
    """The running trapezoidal integral of y along `axis` (one element fewer than y there).

    >>> import oar
    >>> oar.cumulative_trapezoid(oar.to_tensor([1.0, 2.0, 3.0])).numpy().tolist()
    [1.5, 4.0]
    """
    terms, ax = _trapezoid_terms(y, x, dx, axis, "oar.cumulative_trapezoid")
    return _C.cumsum(terms, ax, None)


def softmax(input, dim=None, dtype=None, *, out=None):  # noqa: A002 - Paddle's argument name
    """Softmax along `dim`; `dtype` casts the input first. With dim None the
    axis is chosen as in Paddle (and PyTorch's legacy rule): 0 for 0-, 1- and
    3-D inputs, else 1. oar.nn.functional.softmax takes `axis` (default -1).

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 1.0], [2.0, 2.0]])
    >>> oar.softmax(x).numpy().tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    >>> [round(v, 4) for v in oar.softmax(x, dim=0).numpy()[:, 0].tolist()]
    [0.2689, 0.7311]
    """
    from .nn.functional import softmax as _softmax
    _tensor(input, "oar.softmax", "input")
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    dim = _norm_axis(_int_scalar(dim, "oar.softmax", "dim"), input.ndim, "oar.softmax")
    res = _softmax(input, axis=dim, dtype=dtype)
    if out is not None:
        _tensor(out, "oar.softmax", "out").copy_(res)
        return out
    return res


# ---------------------------------------------------------------- counting (NumPy: integer-valued results)

def bincount(x, weights=None, minlength=0, name=None):
    """Counts of each value 0, 1, ..., max(x) in a 1-D non-negative integer x
    (at least `minlength` bins); with `weights`, their sums instead (float
    weights keep their dtype, integer ones give float64). Computed on NumPy.

    >>> import oar
    >>> oar.bincount(oar.to_tensor([1, 1, 3])).numpy().tolist()
    [0, 2, 0, 1]
    >>> oar.bincount(oar.to_tensor([1, 1, 3]), weights=oar.to_tensor([0.5, 1.0, 2.0]), minlength=5).numpy().tolist()
    [0.0, 1.5, 0.0, 2.0, 0.0]
    """
    api = "oar.bincount"
    _tensor(x, api)
    if x.dtype not in _INTS:
        raise TypeError(f"[{api}] x must be an integer tensor, got {x.dtype.name}")
    _check_rank(x, 1, api, "x")
    minlength = _int_scalar(minlength, api, "minlength")
    if minlength < 0:
        raise ValueError(f"[{api}] minlength must be non-negative, got {minlength}")
    a = x.numpy().astype(np.int64)
    if a.size and a.min() < 0:
        raise ValueError(f"[{api}] x must be non-negative, got the value {int(a.min())}")
    if weights is None:
        return _from_numpy(np.bincount(a, minlength=minlength).astype(np.int64), x)
    _tensor(weights, api, "weights")
    if list(weights.shape) != list(x.shape):
        raise ValueError(f"[{api}] weights must have x's shape {list(x.shape)}, got {list(weights.shape)}")
    w = weights.numpy()
    out = np.bincount(a, weights=w.astype(np.float64), minlength=minlength)
    dt = w.dtype if weights.dtype in (_DT.float32, _DT.float64) else np.float64
    return _from_numpy(out.astype(dt), x)


def bucketize(x, sorted_sequence, out_int32=False, right=False, name=None, *, out=None):
    """For each element of x, the index of the bucket of the 1-D ascending
    sorted_sequence it falls into (searchsorted: with `right`, the first index
    whose value is greater than the element, else greater or equal).

    >>> import oar
    >>> seq = oar.to_tensor([1.0, 3.0, 5.0])
    >>> oar.bucketize(oar.to_tensor([[1.0, 5.0, 3.0]]), seq).numpy().tolist()
    [[0, 2, 1]]
    >>> oar.bucketize(oar.to_tensor([[1.0, 5.0, 3.0]]), seq, right=True).numpy().tolist()
    [[1, 3, 2]]
    """
    api = "oar.bucketize"
    _tensor(x, api)
    _tensor(sorted_sequence, api, "sorted_sequence")
    _check_rank(sorted_sequence, 1, api, "sorted_sequence")
    if sorted_sequence.dtype != x.dtype:
        sorted_sequence = _C.cast(sorted_sequence, _C.promote_types(x.dtype, sorted_sequence.dtype))
        x = _C.cast(x, sorted_sequence.dtype)
    res = _C._searchsorted(sorted_sequence, x, builtins.bool(right), builtins.bool(out_int32))
    if out is not None:
        _tensor(out, api, "out").copy_(res)
        return out
    return res


def _hist_range(a, bins, lo, hi, api):
    if isinstance(bins, builtins.bool) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"[{api}] bins must be an int, got {type(bins).__name__}")
    if bins < 1:
        raise ValueError(f"[{api}] bins must be at least 1, got {bins}")
    lo, hi = float(_number(lo, api, "min")), float(_number(hi, api, "max"))
    if hi < lo:
        raise ValueError(f"[{api}] max must be at least min, got min={lo}, max={hi}")
    if lo == hi:  # the range of the data
        if a.size:
            lo, hi = float(a.min()), float(a.max())
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"[{api}] the range [{lo}, {hi}] is not finite")
    return int(bins), lo, hi


def histogram(input, bins=100, min=0.0, max=0.0, weight=None, density=False, name=None):  # noqa: A002
    """Counts of input's elements (flattened) in `bins` equal-width bins over
    [min, max] (the data's range when min == max); elements outside are not
    counted and the last bin includes max. Gives int64 counts, or float32 with
    `weight` (summed weights) or `density` (normalised to integrate to 1), as
    in Paddle. Computed on NumPy.

    >>> import oar
    >>> oar.histogram(oar.to_tensor([1, 2, 1]), bins=4, min=0, max=3).numpy().tolist()
    [0, 2, 1, 0]
    """
    api = "oar.histogram"
    _tensor(input, api, "input")
    if input.dtype.is_complex or input.dtype == _DT.bool:
        raise TypeError(f"[{api}] input must be a real numeric tensor, got {input.dtype.name}")
    a = input.numpy().reshape(-1).astype(np.float64)
    bins, lo, hi = _hist_range(a, bins, min, max, api)
    w = None
    if weight is not None:
        _tensor(weight, api, "weight")
        if list(weight.shape) != list(input.shape):
            raise ValueError(f"[{api}] weight must have input's shape {list(input.shape)}, got {list(weight.shape)}")
        w = weight.numpy().reshape(-1).astype(np.float64)
    counts, _ = np.histogram(a, bins=bins, range=(lo, hi), weights=w, density=builtins.bool(density))
    dt = np.float32 if (w is not None or density) else np.int64
    return _from_numpy(counts.astype(dt), input)


def histogram_bin_edges(input, bins=100, min=0.0, max=0.0, name=None):  # noqa: A002
    """The bins + 1 edges histogram uses for these arguments, as float32 (as in Paddle).

    >>> import oar
    >>> oar.histogram_bin_edges(oar.to_tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).numpy().tolist()
    [0.0, 0.75, 1.5, 2.25, 3.0]
    """
    api = "oar.histogram_bin_edges"
    _tensor(input, api, "input")
    a = input.numpy().reshape(-1).astype(np.float64)
    bins, lo, hi = _hist_range(a, bins, min, max, api)
    return _from_numpy(np.linspace(lo, hi, bins + 1).astype(np.float32), input)


def histogramdd(x, bins=10, ranges=None, density=False, weights=None, name=None):
    """The D-dimensional histogram of the points x [..., D] (all leading axes
    are points). bins: an int for every dimension, a list of D ints, or a list
    of D 1-D edge tensors; ranges: [lo_0, hi_0, lo_1, hi_1, ...] (the data's
    range by default). Returns (hist, [edges per dimension]) in x's dtype.
    Computed on NumPy.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]])
    >>> hist, edges = oar.histogramdd(x, bins=[3, 3], weights=oar.to_tensor([1.0, 2.0, 4.0, 8.0]))
    >>> hist.numpy().tolist()
    [[0.0, 1.0, 0.0], [2.0, 0.0, 0.0], [4.0, 0.0, 8.0]]
    >>> [round(v, 4) for v in edges[0].numpy().tolist()]
    [0.0, 0.6667, 1.3333, 2.0]
    """
    api = "oar.histogramdd"
    _tensor(x, api)
    if not x.dtype.is_floating_point:
        raise TypeError(f"[{api}] x must be a floating-point tensor, got {x.dtype.name}")
    if x.ndim < 2:
        raise ValueError(f"[{api}] x must be at least 2-D ([N, D] points), got shape {list(x.shape)}")
    dim = x.shape[-1]
    pts = x.numpy().reshape(-1, dim).astype(np.float64)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, builtins.bool):
        b = [int(bins)] * dim
    elif isinstance(bins, (list, tuple)) and len(bins) == dim:
        b = [v.numpy().astype(np.float64) if isinstance(v, Tensor) else _int_scalar(v, api, "bins")
             for v in bins]
    else:
        raise ValueError(f"[{api}] bins must be an int or a list of {dim} ints or edge tensors, got {bins!r}")
    for v in b:
        if isinstance(v, int) and v < 1:
            raise ValueError(f"[{api}] every bin count must be at least 1, got {v}")
    rng = None
    if ranges is not None:
        r = [float(_number(v, api, "ranges")) for v in ranges]
        if len(r) != 2 * dim:
            raise ValueError(f"[{api}] ranges must hold 2 * D = {2 * dim} numbers, got {len(r)}")
        rng = [(r[2 * i], r[2 * i + 1]) for i in range(dim)]
        for lo, hi in rng:
            if hi < lo:
                raise ValueError(f"[{api}] a range must have lo <= hi, got ({lo}, {hi})")
    w = None
    if weights is not None:
        _tensor(weights, api, "weights")
        if list(weights.shape) != list(x.shape[:-1]):
            raise ValueError(f"[{api}] weights must have shape {list(x.shape[:-1])}, got {list(weights.shape)}")
        w = weights.numpy().reshape(-1).astype(np.float64)
    hist, edges = np.histogramdd(pts, bins=b, range=rng, density=builtins.bool(density), weights=w)
    dt = x.numpy().dtype if x.dtype != _DT.bfloat16 else np.float32
    out = _from_numpy(hist.astype(dt), x)
    edges = [_from_numpy(np.asarray(e).astype(dt), x) for e in edges]
    if x.dtype == _DT.bfloat16:
        out, edges = _C.cast(out, x.dtype), [_C.cast(e, x.dtype) for e in edges]
    return out, edges


# ---------------------------------------------------------------- assembling

def multiplex(inputs, index, name=None):
    """Row i of the result is row i of inputs[index[i]]: inputs are tensors of
    one shape [B, ...], index is an integer tensor of shape [B, 1] (or [B]).
    Differentiable in the inputs.

    >>> import oar
    >>> a = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> b = oar.to_tensor([[5.0, 6.0], [7.0, 8.0]])
    >>> oar.multiplex([a, b], oar.to_tensor([[1], [0]], dtype='int32')).numpy().tolist()
    [[5.0, 6.0], [3.0, 4.0]]
    """
    api = "oar.multiplex"
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(f"[{api}] inputs must be a non-empty list of Tensors, got {type(inputs).__name__}")
    for i, t in enumerate(inputs):
        _tensor(t, api, f"inputs[{i}]")
        if list(t.shape) != list(inputs[0].shape) or t.dtype != inputs[0].dtype:
            raise ValueError(f"[{api}] every input must have the shape and dtype of inputs[0] "
                             f"({list(inputs[0].shape)}, {inputs[0].dtype.name}); inputs[{i}] has "
                             f"{list(t.shape)}, {t.dtype.name}")
    _tensor(index, api, "index")
    if index.dtype not in (_DT.int32, _DT.int64):
        raise TypeError(f"[{api}] index must be int32 or int64, got {index.dtype.name}")
    first = inputs[0]
    if first.ndim == 0:
        raise ValueError(f"[{api}] the inputs must be at least 1-D")
    rows = first.shape[0]
    if index.size != rows or index.ndim > 2 or (index.ndim == 2 and index.shape[1] != 1):
        raise ValueError(f"[{api}] index must have shape [{rows}, 1], got {list(index.shape)}")
    with _no_grad():
        idx = _C.cast(_C.reshape(index, [1, rows] + [1] * (first.ndim - 1)), _DT.int64)
        if rows and not _C._ir_is_tracing():
            lo = int(_C.amin(idx, None, False).item())
            hi = int(_C.amax(idx, None, False).item())
            if lo < 0 or hi >= len(inputs):
                raise IndexError(f"[{api}] index values must be in [0, {len(inputs)}), got a value "
                                 f"{lo if lo < 0 else hi}")
        idx = _C.expand(idx, [1] + list(first.shape))
    stacked = _C._stack(list(inputs), 0)
    return _C.squeeze(_C._take_along_axis(stacked, idx, 0, True), [0])


def vander(x, n=None, increasing=False, name=None):
    """The Vandermonde matrix of a 1-D x: column j is x ** (n - 1 - j), or
    x ** j with `increasing`; n defaults to len(x). Built by products (log2(n)
    doubling steps), so it is differentiable to any order also at x = 0.

    >>> import oar
    >>> oar.vander(oar.to_tensor([1, 2, 3])).numpy().tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    >>> oar.vander(oar.to_tensor([2.0, 3.0]), n=3, increasing=True).numpy().tolist()
    [[1.0, 2.0, 4.0], [1.0, 3.0, 9.0]]
    """
    api = "oar.vander"
    _tensor(x, api)
    _check_rank(x, 1, api, "x")
    if x.dtype == _DT.bool:
        raise TypeError(f"[{api}] x must be a numeric tensor, got bool")
    m = x.shape[0]
    n = m if n is None else _int_scalar(n, api, "n")
    if n < 0:
        raise ValueError(f"[{api}] n must be non-negative, got {n}")
    if n == 0:
        return _C.full([m, 0], 0, x.dtype)
    if m * n > 1 << 24:
        # A large result is allocated once first, so that one which cannot be
        # is refused at once rather than after the doubling steps filled memory.
        _C.full([m, n], 0, x.dtype)
    # Columns x^0 .. x^(w-1) doubled to x^0 .. x^(2w-1) by multiplying with x^w: log2(n) steps.
    out = _C.full([m, 1], 1, x.dtype)
    power = _C.unsqueeze(x, [1])  # x^w
    while out.shape[1] < n:
        out = _C._concat([out, _C.multiply(out, power)], 1)
        if out.shape[1] < n:
            power = _C.multiply(power, power)
    if out.shape[1] > n:
        out = _C.strided_slice(out, [1], [0], [n], [1])
    return out if increasing else _C._flip(out, [1])
