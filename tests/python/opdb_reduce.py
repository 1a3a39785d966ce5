"""Op-database entries for the reductions of src/ops/reduce.toml beyond sum, mean, prod,
amax and amin (those are in opdb.py; argmax, argmin, cummax, cummin, cumsum, cumprod
and median have their main entries in opdb_core.py).

Every reduction here is checked on the axis forms oar accepts: None, an int, a
negative int, a list, a tuple and a one-element integer Tensor, with keepdim both
ways, on 0-D and, where the reduction is defined there, zero-size inputs. The
references are NumPy's reductions; a Tensor axis is turned into a list for them.
Gradient samples keep the maxima and minima apart and the norms away from zero, where
these reductions have kinks. The `*_forms` entries add to opdb_core.py's argmax,
argmin, cummax and cummin entries the axis forms, dtypes and errors those do not cover.
"""
import warnings

import numpy as np

import oar
from opdb import (ALL, COMPLEX, FLOATS, INTS, REAL, OpInfo, Sample, _err, _np_reduce, _reduce_errors,
                  _reduce_samples, _rng, _values, _zero_size_samples, register)
from opdb_core import _distinct, _np_arg, _np_cumext

LOW_TOL = {"float16": (3e-2, 2e-2), "bfloat16": (1e-1, 3e-2)}
INT_AS_F32 = {d: (1e-5, 1e-5) for d in INTS}  # integer inputs computed in float32


def _plain_axis(axis):
    """The axis as NumPy takes it: a Tensor becomes a list of ints."""
    return axis.numpy().reshape(-1).tolist() if isinstance(axis, oar.Tensor) else axis


def _np_axes(f):
    """A NumPy reduction f(x, axis=, keepdims=) taking the reduction's axis forms (any axis of a 0-D x is all)."""
    ref = _np_reduce(f)
    return lambda x, axis=None, keepdim=False: ref(x, None if np.ndim(x) == 0 else _plain_axis(axis), keepdim)


def _axis_form_samples(lo, hi, seed=20):
    """Tuple, one-element Tensor, single-axis list and out-of-order list forms of axis."""
    def gen(dtype):
        rng = _rng(seed)
        v = lambda s: _values(s, dtype, lo, hi, rng)  # noqa: E731
        return [Sample((v((3, 4, 5)),), {"axis": (0, 2)}), Sample((v((3, 4, 5)),), {"axis": (-1,), "keepdim": True}),
                Sample((v((3, 4, 5)),), {"axis": oar.to_tensor([1])}),
                Sample((v((3, 4)),), {"axis": oar.to_tensor([-1]), "keepdim": True}),
                Sample((v((3, 4)),), {"axis": [1, 0]}), Sample((v(()),), {"axis": 0}),
                Sample((v(()),), {"axis": -1, "keepdim": True}), Sample((v((2, 3)),), {"axis": [-2]}, noncontig=True)]
    return gen


def _type_errors(name, fn):
    """An axis of a wrong type: a str, a float, a list holding a str, a float Tensor."""
    x = lambda: oar.ones([2, 3])  # noqa: E731
    return [_err(lambda: fn(x(), axis="a"), TypeError, name), _err(lambda: fn(x(), axis=1.5), TypeError, name),
            _err(lambda: fn(x(), axis=[0, "a"]), TypeError, name),
            _err(lambda: fn(x(), axis=oar.to_tensor([1.0])), TypeError, name)]


def _reduction(name, ref, dtypes, samples, out=None, grad=False, gradgrad=False, errors=lambda: [], tol=None):
    """An entry for a reduction over `Axes`: its samples plus the axis forms, the shared axis errors."""
    fn = getattr(oar, name)
    errs = _reduce_errors(name, fn)
    register(OpInfo(name, fn, ref, dtypes, samples, out_dtype=out, grad=grad, gradgrad=gradgrad,
                    errors=lambda: errs() + _type_errors(name, fn) + errors(), tol=tol or {}))


def _complex_error(name):
    return lambda: [_err(lambda: getattr(oar, name)(oar.to_tensor(np.array([1 + 1j, 2]))), TypeError, name)]


def _bool_error(name):
    return lambda: [_err(lambda: getattr(oar, name)(oar.ones([2, 3], "bool")), TypeError, name)]


def _errors(*gens):
    return lambda: [e for g in gens for e in g()]


# ---------------------------------------------------------------- max, min

def _extreme_samples(dtype):
    return _reduce_samples(-2, 2)(dtype) + _axis_form_samples(-2, 2)(dtype)


for _n, _f in (("max", np.max), ("min", np.min)):
    _reduction(_n, _np_axes(_f), REAL, _extreme_samples, grad=True, gradgrad=True, tol=LOW_TOL,
               errors=(lambda n: _errors(
                   lambda: [_err(lambda: getattr(oar, n)(oar.zeros([0, 3]), axis=0), ValueError, n),
                            _err(lambda: getattr(oar, n)(oar.zeros([0, 3])), ValueError, n)],
                   _complex_error(n), _bool_error(n)))(_n))


# ---------------------------------------------------------------- all, any, count_nonzero

def _with_zeros(gen, frac=0.15, seed=21):
    """gen's samples with about `frac` of each input's elements made zero (False for bool)."""
    def out(dtype):
        rng = _rng(seed)
        samples = []
        for s in gen(dtype):
            args = tuple(np.where(rng.random(a.shape) < frac, np.zeros((), a.dtype), a if a.dtype != np.bool_ else True)
                         if isinstance(a, np.ndarray) else a for a in s.args)
            samples.append(Sample(args, s.kwargs, noncontig=s.noncontig, grad=False))
        return samples
    return out


def _truth_samples(dtype):
    base = _with_zeros(lambda d: _reduce_samples(-2, 2)(d) + _axis_form_samples(-2, 2)(d))(dtype)
    out = base + _zero_size_samples(dtype) + [Sample((np.zeros((2, 3)),), {"axis": 1}),
                                               Sample((np.ones((2, 3)),), {"keepdim": True})]
    if dtype in FLOATS + COMPLEX:  # NaN and inf are non-zero, -0.0 is zero
        out.append(Sample((np.array([[np.nan, 0.0, 1.0], [-0.0, np.inf, 0.0]]),), {"axis": 1}))
        out.append(Sample((np.array([[np.nan, 2.0], [-np.inf, -0.0]]),), {"axis": 0}))
    return out


def _np_count_nonzero(x, axis=None, keepdims=False):
    return np.asarray(np.count_nonzero(x, axis=axis, keepdims=keepdims), dtype=np.int64)


_reduction("all", _np_axes(np.all), ALL, _truth_samples, out=lambda d: "bool")
_reduction("any", _np_axes(np.any), ALL, _truth_samples, out=lambda d: "bool")
_reduction("count_nonzero", _np_axes(_np_count_nonzero), ALL, _truth_samples, out=lambda d: "int64")


# ---------------------------------------------------------------- var, std

def _reduced_count(shape, axis):
    axis = _plain_axis(axis)
    if axis is None:
        return int(np.prod(shape))
    axes = [axis] if isinstance(axis, int) else list(axis)
    return int(np.prod([shape[a] for a in axes])) if shape else 1


def _moment_samples(dtype):
    rng = _rng(22)
    v = lambda s: _values(s, dtype, -2, 2, rng)  # noqa: E731
    out = _reduce_samples(-2, 2)(dtype) + _axis_form_samples(-2, 2)(dtype)
    out += [Sample((v((3, 4, 5)),), {"axis": a, "unbiased": False, "keepdim": k})
            for a, k in ((None, False), (1, True), ([0, 2], False), (oar.to_tensor([-1]), False))]
    out += [Sample((v((4,)),), {"unbiased": False}), Sample((v((1, 3)),), {"axis": 0, "unbiased": False})]
    out += [Sample((np.zeros((0, 3)),), {"axis": 0}), Sample((np.zeros((0, 3)),), {"axis": 1, "keepdim": True}),
            Sample((v((1, 3)),), {"axis": 0})]  # N - 1 = 0: NaN, as in NumPy and Paddle
    # Reductions over one element have zero spread, where std has no derivative; (N - 1) = 0 gives NaN.
    for s in out:
        if _reduced_count(s.args[0].shape, s.kwargs.get("axis")) <= 1:
            s.grad = False
    return out


def _np_moment(f):
    def ref(x, axis=None, unbiased=True, keepdim=False):
        with warnings.catch_warnings():  # NumPy warns where N - ddof <= 0
            warnings.simplefilter("ignore", RuntimeWarning)
            return _np_axes(lambda a, axis, keepdims: f(a, axis=axis, keepdims=keepdims, ddof=int(unbiased)))(
                x, axis, keepdim)
    return ref


for _n, _f in (("var", np.var), ("std", np.std)):
    _reduction(_n, _np_moment(_f), INTS + FLOATS, _moment_samples,
               out=lambda d: "float32" if d in INTS else d, grad=True, gradgrad=True,
               tol={**LOW_TOL, **INT_AS_F32}, errors=_bool_error(_n))


# ---------------------------------------------------------------- logsumexp

def _np_logsumexp(x, axis=None, keepdims=False):
    if x.size == 0:
        return np.full(np.sum(x, axis=axis, keepdims=keepdims).shape, -np.inf)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis if axis is not None else tuple(range(x.ndim)))


def _logsumexp_samples(dtype):
    out = _reduce_samples(-3, 3)(dtype) + _axis_form_samples(-3, 3)(dtype) + _zero_size_samples(dtype)
    if dtype in FLOATS:
        inf = np.inf
        out.append(Sample((np.array([[-inf, -inf, -inf], [-inf, 0.0, 1.0]]),), {"axis": 1}, grad=False))
        out.append(Sample((np.array([[inf, 1.0], [2.0, 3.0]]),), {"axis": 1}, grad=False))
    if dtype in ("float32", "float64"):  # shifting by the maximum keeps exp from overflowing
        out.append(Sample((np.array([[1000.0, 1000.0, 999.0], [-1000.0, -1001.0, -1000.5]]),), {"axis": -1}))
    return out


_reduction("logsumexp", _np_axes(_np_logsumexp), INTS + FLOATS, _logsumexp_samples,
           out=lambda d: "float32" if d in INTS else d, grad=True, gradgrad=True,
           tol={**LOW_TOL, **INT_AS_F32}, errors=_errors(_complex_error("logsumexp"), _bool_error("logsumexp")))


# ---------------------------------------------------------------- norm

INF = float("inf")
SVD_FLOATS = ("float32", "float64")  # the singular-value norms go through oar.linalg.svd


def _np_vector_norm(x, p, axis, keepdim):
    p = 2 if p in (None, "fro") else p
    if axis is None:
        out = np.linalg.norm(x.reshape(-1), ord=p)
        return np.reshape(out, [1] * x.ndim) if keepdim else out
    return np.linalg.norm(x, ord=p, axis=axis, keepdims=keepdim)


def _np_norm(x, p=None, axis=None, keepdim=False):
    axis = _plain_axis(axis)
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    if p == "nuc" and axis is None:
        axis = (0, 1)
    if isinstance(axis, (list, tuple)):
        return np.linalg.norm(x, ord="fro" if p is None else p, axis=tuple(axis), keepdims=keepdim)
    return _np_vector_norm(x, p, axis, keepdim)


def _norm_samples(dtype):
    rng = _rng(23)
    # Magnitudes in [0.5, 2] with random signs: no zeros (kinks of |x|) and, almost surely, no ties of max or svd.
    v = lambda *s: np.asarray(rng.uniform(0.5, 2.0, s) * rng.choice([-1.0, 1.0], s))  # noqa: E731
    # First the samples that the double-backward check (which takes the first four) should see.
    out = [Sample((v(3, 4),), {"p": 3, "axis": 1}), Sample((v(3, 4),), {"p": INF, "axis": [0, 1]})]
    if dtype in SVD_FLOATS:
        out += [Sample((v(3, 4),), {"p": "nuc"}), Sample((v(3, 4),), {"p": -2, "axis": [1, 0]})]
    for p in (None, 1, 2, INF, -INF, 0, 3, "fro"):
        for axis, keepdim in ((None, False), (None, True), (1, False), (-1, True), ([0], False)):
            out.append(Sample((v(3, 4),), {"p": p, "axis": axis, "keepdim": keepdim}))
        out.append(Sample((v(2, 3, 4),), {"p": p, "axis": oar.to_tensor([1])}, noncontig=True))
    matrix_ps = (None, "fro", 1, -1, INF, -INF) + (("nuc", 2, -2) if dtype in SVD_FLOATS else ())
    for p in matrix_ps:
        out.append(Sample((v(3, 4),), {"p": p, "axis": [0, 1]}))
        out.append(Sample((v(2, 3, 4),), {"p": p, "axis": (2, 0), "keepdim": True}))
        out.append(Sample((v(2, 4, 3),), {"p": p, "axis": [-1, -2]}, noncontig=True))
    for s in out:  # the count of non-zeros: oar gives it no gradient (stop_gradient output)
        s.grad = s.kwargs["p"] != 0
    if dtype in SVD_FLOATS:
        out.append(Sample((v(4, 3),), {"p": "nuc", "keepdim": True}))
    out += [Sample((v(),), {}), Sample((v(),), {"p": 1}), Sample((v(5),), {"p": INF, "axis": 0}),
            Sample((np.zeros((0, 3)),), {"axis": 0}), Sample((np.zeros((0, 3)),), {"p": 1}),
            Sample((np.array([[0.0, 1.5, 0.0], [-2.0, 0.0, 0.0]]),), {"p": 0, "axis": 1}, grad=False)]
    return out


def _norm_errors():
    x = oar.ones([2, 3])
    return [_err(lambda: oar.norm(x, p="nuc", axis=0), ValueError, "norm"),
            _err(lambda: oar.norm(x, p=3, axis=[0, 1]), ValueError, "norm"),
            _err(lambda: oar.norm(x, p="a"), ValueError, "norm"),
            _err(lambda: oar.norm(oar.ones([2, 3, 4]), axis=[0, 1, 2]), ValueError, "norm"),
            _err(lambda: oar.norm(oar.ones([2, 3, 4]), p="nuc"), ValueError, "norm")]


_reduction("norm", _np_norm, FLOATS, _norm_samples, grad=True, gradgrad=True, tol=LOW_TOL, errors=_norm_errors)


# ---------------------------------------------------------------- argmax, argmin: axis forms, dtype, errors

def _distinct_of(dtype, shape, seed):
    """Tie-free values centred on zero; for uint8 the negative ones wrap past 100, still distinct."""
    v = _distinct(shape, seed)
    return np.asarray(v.astype(np.int64) % 100 if dtype == "uint8" else v)


def _np_arg_forms(f):
    ref = _np_arg(f)

    def g(x, axis=None, keepdim=False, dtype="int64"):
        axis = _plain_axis(axis)
        axis = axis[0] if isinstance(axis, list) else axis
        if x.ndim == 0:
            return np.zeros((), np.int64)
        return ref(x, axis, keepdim)
    return g


def _arg_form_samples(dtype):
    d = lambda s, seed: _distinct_of(dtype, s, seed)  # noqa: E731
    return [Sample((d((3, 4, 5), 410),), {"axis": oar.to_tensor([1]), "dtype": "int32"}),
            Sample((d((3, 4, 5), 411),), {"axis": oar.to_tensor(-1), "keepdim": True, "dtype": "int32"}),
            Sample((d((3, 4), 412),), {"axis": None, "keepdim": True, "dtype": "int32"}),
            Sample((d((3, 4), 413),), {"axis": -2, "dtype": "int32"}, noncontig=True),
            Sample((d((), 414),), {"axis": 0, "dtype": "int32"}),
            Sample((d((), 415),), {"keepdim": True, "dtype": "int32"})]


def _arg_errors(n):
    fn = getattr(oar, n)
    return lambda: _type_errors(n, fn) + [
        _err(lambda: fn(oar.ones([2, 3]), axis=[0]), TypeError, n),
        _err(lambda: fn(oar.ones([2, 3]), dtype="float32"), TypeError, n),
        _err(lambda: fn(oar.ones([2, 3]), dtype="int16"), TypeError, n),
        _err(lambda: fn(oar.ones([0, 3])), ValueError, n)] + _complex_error(n)() + _bool_error(n)()


for _n, _f in (("argmax", np.argmax), ("argmin", np.argmin)):
    register(OpInfo(f"{_n}_forms", getattr(oar, _n), _np_arg_forms(_f), REAL, _arg_form_samples,
                    out_dtype=lambda d: "int32", errors=_arg_errors(_n)))


# ---------------------------------------------------------------- cummax, cummin: axis forms, dtypes, errors

def _np_cum_forms(f, which):
    ref = _np_cumext(f, which)
    return lambda x, axis=None, dtype="int64": ref(x, _plain_axis(axis))


def _cum_form_samples(dtype):
    d = lambda s, seed: _distinct_of(dtype, s, seed)  # noqa: E731
    return [Sample((d((3, 4), 420),), {"axis": oar.to_tensor([1]), "dtype": "int32"}),
            Sample((d((2, 3, 4), 421),), {"axis": oar.to_tensor(-3), "dtype": "int32"}),
            Sample((d((2, 3, 4), 422),), {"axis": -2, "dtype": "int32"}, noncontig=True),
            Sample((d((), 423),), {"axis": 0, "dtype": "int32"}), Sample((d((), 424),), {"dtype": "int32"}),
            Sample((d((3, 4), 425),), {"dtype": "int32"}), Sample((np.zeros((2, 0)),), {"axis": 1, "dtype": "int32"}),
            Sample((np.array([[1, 3, 3, 2, 3], [2, 2, 0, 0, 5]]),), {"axis": -1, "dtype": "int32"}, grad=False)]  # ties


def _cum_errors(n):
    fn = getattr(oar, n)
    return lambda: _type_errors(n, fn)[:2] + [
        _err(lambda: fn(oar.ones([2, 3]), axis=[0]), TypeError, n),
        _err(lambda: fn(oar.ones([2, 3]), axis=-3), IndexError, n),
        _err(lambda: fn(oar.ones([2, 3]), dtype="float32"), TypeError, n)] + _complex_error(n)() + _bool_error(n)()


for _n, _f in (("cummax", np.maximum), ("cummin", np.minimum)):
    _op = getattr(oar, _n)
    register(OpInfo(f"{_n}_forms", (lambda op: lambda *a, **k: op(*a, **k)[0])(_op), _np_cum_forms(_f, 0), REAL,
                    _cum_form_samples, grad=True, gradgrad=True, errors=_cum_errors(_n)))
    register(OpInfo(f"{_n}_forms_indices", (lambda op: lambda *a, **k: op(*a, **k)[1])(_op), _np_cum_forms(_f, 1),
                    REAL, _cum_form_samples, out_dtype=lambda d: "int32"))
