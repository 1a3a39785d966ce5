"""Op-database entries for the math, statistics and special functions of the
paddle namespace (python/oar/_math_ext.py, _math_special.py, _math_stats.py).

References are written here in NumPy, independently of oar's algorithms:
the Bessel functions by the trapezoidal rule on their integral representation
(spectrally accurate for periodic integrands), the incomplete gamma functions
by their closed forms at integer and half-integer shapes, polygamma by direct
summation of its series.
"""
import math

import numpy as np

import oar
from opdb import (COMPLEX, FLOATS, INTS, REAL, ErrorInput, OpInfo, Sample, _np_digamma, _np_lgamma, _values,
                  register)

F32_64 = ("float32", "float64")


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.{name}]")


def _rng(seed):
    return np.random.default_rng(seed)


def _v(dtype, seed, lo=-2.0, hi=2.0):
    rng = _rng(seed)
    return lambda *shape: _values(shape, dtype, lo, hi, rng)  # noqa: E731


def _float_out(d):
    return d if d in FLOATS else "float32"


# Integer inputs computed in float32 are compared with float32's tolerance.
_INT_IN = {"int32": (1e-5, 1e-5), "int64": (1e-5, 1e-5)}


# ---------------------------------------------------------------- products and distances

def _addmm_ref(inp, x, y, beta=1.0, alpha=1.0):
    return beta * inp + alpha * (x @ y)


def _addmm_samples(dtype):
    v = _v(dtype, 100)
    return [Sample((v(2, 3), v(2, 4), v(4, 3))), Sample((v(3), v(2, 4), v(4, 3)), {"beta": 0.5, "alpha": 2.0}),
            Sample((v(2, 3), v(2, 4), v(4, 3)), {"beta": -1.0}, noncontig=True),
            Sample((v(1, 1), v(0, 4), v(4, 3))), Sample((v(2, 3), v(2, 0), v(0, 3)), {"alpha": 3.0})]


register(OpInfo("addmm", oar.addmm, _addmm_ref, FLOATS, _addmm_samples, grad=True, gradgrad=True,
                tol={"float16": (5e-2, 2e-2), "bfloat16": (2e-1, 5e-2)},
                errors=lambda: [_err(lambda: oar.addmm(oar.ones([1, 3]), oar.ones([2, 2]), oar.ones([2, 2])),
                                     ValueError, "addmm"),
                                _err(lambda: oar.addmm(oar.ones([2, 2]), oar.ones([2, 2]), oar.ones([3, 2])),
                                     ValueError, "addmm"),
                                _err(lambda: oar.addmm(oar.ones([2, 2]), oar.ones([2]), oar.ones([2, 2])),
                                     ValueError, "addmm")]))


def _baddbmm_samples(dtype):
    v = _v(dtype, 101)
    return [Sample((v(2, 2, 3), v(2, 2, 4), v(2, 4, 3))), Sample((v(3), v(2, 2, 4), v(2, 4, 3)), {"beta": 0.0}),
            Sample((v(2, 2, 3), v(2, 2, 4), v(2, 4, 3)), {"beta": 0.5, "alpha": -2.0}, noncontig=True)]


register(OpInfo("baddbmm", oar.baddbmm, _addmm_ref, FLOATS, _baddbmm_samples, grad=True,
                tol={"float16": (5e-2, 2e-2), "bfloat16": (2e-1, 5e-2)},
                errors=lambda: [_err(lambda: oar.baddbmm(oar.ones([2, 2, 2]), oar.ones([2, 2, 3]),
                                                         oar.ones([3, 3, 2])), ValueError, "baddbmm"),
                                _err(lambda: oar.baddbmm(oar.ones([2, 2]), oar.ones([2, 2]), oar.ones([2, 2])),
                                     ValueError, "baddbmm")]))


def _inner_ref(x, y):
    return np.inner(x, y)


register(OpInfo("inner", oar.inner, _inner_ref, ("int32", "int64") + FLOATS,
                lambda d: [Sample((_v(d, 102)(2, 3), _v(d, 103)(4, 3))), Sample((_v(d, 102)(3), _v(d, 103)(3))),
                           Sample((_v(d, 102)(2, 2, 3), _v(d, 103)(5, 3)), noncontig=True),
                           Sample((_v(d, 102)(), _v(d, 103)(2, 3))), Sample((_v(d, 102)(0, 3), _v(d, 103)(2, 3)))],
                grad=True, gradgrad=True, tol={"float16": (5e-2, 2e-2), "bfloat16": (2e-1, 5e-2)},
                errors=lambda: [_err(lambda: oar.inner(oar.ones([2, 3]), oar.ones([3, 2])), ValueError, "inner")]))

register(OpInfo("mv", oar.mv, lambda x, v: x @ v, FLOATS,
                lambda d: [Sample((_v(d, 104)(3, 4), _v(d, 105)(4))), Sample((_v(d, 104)(3, 4), _v(d, 105)(4)),
                                                                            noncontig=True),
                           Sample((_v(d, 104)(0, 4), _v(d, 105)(4)))],
                grad=True, tol={"float16": (5e-2, 2e-2), "bfloat16": (2e-1, 5e-2)},
                errors=lambda: [_err(lambda: oar.mv(oar.ones([2, 3]), oar.ones([2])), ValueError, "mv"),
                                _err(lambda: oar.mv(oar.ones([3]), oar.ones([3])), ValueError, "mv")]))

register(OpInfo("vecdot", oar.vecdot, lambda x, y, axis=-1: np.sum(np.conj(x) * y, axis=axis),
                F32_64 + COMPLEX,
                lambda d: [Sample((_v(d, 106)(3, 4), _v(d, 107)(4))),
                           Sample((_v(d, 106)(3, 4), _v(d, 107)(3, 1)), {"axis": 0})],
                grad=True, complex_grad=True,
                errors=lambda: [_err(lambda: oar.vecdot(oar.ones([2, 3]), oar.ones([4])), ValueError, "vecdot")]))


def _tensordot_ref(x, y, axes=2):
    if isinstance(axes, list) and axes and all(isinstance(a, int) for a in axes):
        axes = (axes, axes)
    return np.tensordot(x, y, axes=axes)


def _tensordot_samples(dtype):
    v = _v(dtype, 108)
    return [Sample((v(2, 3, 4), v(3, 4, 5))), Sample((v(2, 3), v(3, 2)), {"axes": 1}),
            Sample((v(2, 3), v(4,)), {"axes": 0}), Sample((v(2, 3, 4), v(4, 3, 2)), {"axes": [[1, 2], [1, 0]]}),
            Sample((v(3, 3), v(3, 3)), {"axes": [1]}), Sample((v(2, 3, 4), v(3, 4, 5)), noncontig=True)]


register(OpInfo("tensordot", oar.tensordot, _tensordot_ref, ("int64",) + FLOATS, _tensordot_samples, grad=True,
                gradgrad=True, tol={"float16": (5e-2, 2e-2), "bfloat16": (2e-1, 5e-2)},
                errors=lambda: [_err(lambda: oar.tensordot(oar.ones([2, 3]), oar.ones([4, 3]), axes=1), ValueError,
                                     "tensordot"),
                                _err(lambda: oar.tensordot(oar.ones([2, 3]), oar.ones([3]), axes=3), ValueError,
                                     "tensordot"),
                                _err(lambda: oar.tensordot(oar.ones([2, 3]), oar.ones([3]), axes="x"), TypeError,
                                     "tensordot")]))


def _trace_ref(x, offset=0, axis1=0, axis2=1):
    return np.trace(x, offset, axis1, axis2).astype(x.dtype)


register(OpInfo("trace", oar.trace, _trace_ref, ("int32", "int64") + FLOATS,
                lambda d: [Sample((_v(d, 109)(3, 3),)), Sample((_v(d, 109)(3, 4),), {"offset": 1}),
                           Sample((_v(d, 109)(2, 3, 4),), {"offset": -1, "axis1": 1, "axis2": 2}),
                           Sample((_v(d, 109)(3, 3),), {"offset": 5}), Sample((_v(d, 109)(3, 4),), noncontig=True)],
                grad=True, gradgrad=True, tol={"float16": (3e-2, 2e-2), "bfloat16": (1e-1, 3e-2)},
                errors=lambda: [_err(lambda: oar.trace(oar.ones([3])), ValueError, "trace"),
                                _err(lambda: oar.trace(oar.ones([3, 3]) > 0), TypeError, "trace")]))


def _np_pnorm(d, p, axis=None):
    a = np.abs(d)
    if p == 0:
        return np.sum(d != 0, axis=axis).astype(d.dtype)
    if p == np.inf:
        return np.max(a, axis=axis)
    if p == -np.inf:
        return np.min(a, axis=axis)
    return np.sum(a ** p, axis=axis) ** (1.0 / p)


def _dist_ref(x, y, p=2):
    return _np_pnorm((x - y).reshape(-1), p)


def _dist_samples(dtype):
    v = _v(dtype, 110)
    out = [Sample((v(3, 4), v(3, 4)), {"p": p}) for p in (2, 1, 3.5)]
    out += [Sample((v(3, 4), v(4)), {"p": p}, grad=False) for p in (0, np.inf, -np.inf)]
    out.append(Sample((v(2, 3), v(2, 3)), noncontig=True))
    return out


register(OpInfo("dist", oar.dist, _dist_ref, FLOATS, _dist_samples, grad=True,
                tol={"float16": (5e-2, 2e-2), "bfloat16": (2e-1, 5e-2)},
                errors=lambda: [_err(lambda: oar.dist(oar.ones([2]), oar.ones([3])), ValueError, "dist"),
                                _err(lambda: oar.dist(oar.ones([2]), oar.ones([2]), p=-1), ValueError, "dist")]))


def _cdist_ref(x, y, p=2.0):
    return _np_pnorm(x[..., :, None, :] - y[..., None, :, :], p, axis=-1)


def _cdist_samples(dtype):
    v = _v(dtype, 111)
    return [Sample((v(3, 4), v(5, 4))), Sample((v(3, 4), v(5, 4)), {"p": 1.0}),
            Sample((v(2, 3, 4), v(5, 4)), {"p": 3.0}), Sample((v(3, 4), v(2, 4)), {"p": 0.0}, grad=False),
            Sample((v(3, 4), v(2, 4)), {"p": float("inf")}, grad=False), Sample((v(3, 4), v(5, 4)), noncontig=True)]


register(OpInfo("cdist", oar.cdist, _cdist_ref, F32_64, _cdist_samples, grad=True,
                errors=lambda: [_err(lambda: oar.cdist(oar.ones([2, 3]), oar.ones([2, 4])), ValueError, "cdist"),
                                _err(lambda: oar.cdist(oar.ones([3]), oar.ones([2, 3])), ValueError, "cdist"),
                                _err(lambda: oar.cdist(oar.ones([2, 3]), oar.ones([2, 3]), compute_mode="x"),
                                     ValueError, "cdist")]))


def _pdist_ref(x, p=2.0):
    i, j = np.triu_indices(x.shape[0], 1)
    return _np_pnorm(x[i] - x[j], p, axis=-1)


register(OpInfo("pdist", oar.pdist, _pdist_ref, F32_64,
                lambda d: [Sample((_v(d, 112)(4, 3),)), Sample((_v(d, 112)(4, 3),), {"p": 1.0}),
                           Sample((_v(d, 112)(1, 3),)), Sample((_v(d, 112)(4, 3),), noncontig=True)],
                grad=True, errors=lambda: [_err(lambda: oar.pdist(oar.ones([3])), ValueError, "pdist")]))


def _renorm_ref(x, p, axis, max_norm):
    moved = np.moveaxis(x, axis, 0)
    norms = _np_pnorm(moved.reshape(moved.shape[0], -1), p, axis=1)
    factor = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    return x * factor.reshape(shape)


register(OpInfo("renorm", oar.renorm, _renorm_ref, FLOATS,
                lambda d: [Sample((_v(d, 113)(3, 4), 2.0, 0, 1.5)), Sample((_v(d, 113)(3, 4), 1.0, 1, 2.0)),
                           Sample((_v(d, 113)(2, 3, 4), 3.0, -1, 1.0), noncontig=True)],
                grad=True, tol={"float16": (5e-2, 2e-2), "bfloat16": (1e-1, 3e-2)},
                errors=lambda: [_err(lambda: oar.renorm(oar.ones([2, 2]), 2, 3, 1.0), IndexError, "renorm"),
                                _err(lambda: oar.renorm(oar.ones([2, 2]), -1, 0, 1.0), ValueError, "renorm")]))


# ---------------------------------------------------------------- elementwise

def _div_samples(dtype):
    v = _v(dtype, 114, -20, 20)
    y = v(3, 4)
    y = np.where(y == 0, 3, y) if dtype in INTS else _v(dtype, 115, 0.5, 4)(3, 4)
    out = [Sample((v(3, 4), y), {"rounding_mode": m}, grad=m is None) for m in (None, "trunc", "floor")]
    out.append(Sample((v(2, 3, 4), y[0]), {"rounding_mode": "trunc"}, grad=False))
    return out


def _div_ref(x, y, rounding_mode=None):
    if rounding_mode is None:
        return x / y
    if x.dtype.kind in "iu":
        q = np.floor_divide(x, y)
        return q if rounding_mode == "floor" else np.trunc(x / y).astype(x.dtype)
    return np.floor(x / y) if rounding_mode == "floor" else np.trunc(x / y)


register(OpInfo("div", oar.div, _div_ref, ("int32", "int64", "float32", "float64"), _div_samples, grad=True,
                out_dtype=None, tol=_INT_IN,
                errors=lambda: [_err(lambda: oar.div(oar.ones([2]), oar.ones([2]), rounding_mode="round"),
                                     ValueError, "div"),
                                _err(lambda: oar.div(oar.to_tensor([1]), oar.to_tensor([0]), rounding_mode="floor"),
                                     ValueError, "div")]))


def _np_frexp_mantissa(x):
    return np.frexp(x)[0]


_SPECIAL = [0.0, -0.0, 1.0, -3.0, 8.0, 0.1, np.inf, -np.inf, np.nan, 1e-30]
register(OpInfo("frexp_mantissa", lambda x: oar.frexp(x)[0], _np_frexp_mantissa, F32_64,
                lambda d: [Sample((_v(d, 116, -50, 50)(3, 4),)), Sample((_v(d, 116, -1e-3, 1e-3)(2, 3),),
                                                                      noncontig=True, grad=False),
                           Sample((np.array(_SPECIAL),), grad=False)], grad=True,
                errors=lambda: [_err(lambda: oar.frexp(oar.to_tensor([1, 2])), TypeError, "frexp")]))
register(OpInfo("frexp_exponent", lambda x: oar.frexp(x)[1], lambda x: np.frexp(x)[1].astype(x.dtype), F32_64,
                lambda d: [Sample((_v(d, 117, -50, 50)(3, 4),)),
                           Sample((np.array(_SPECIAL),))]))


def _ldexp_samples(dtype):
    rng = _rng(118)
    x = _v(dtype, 119, -3, 3)
    # Exponents as lists: they stay integers (the gradient check perturbs arrays only).
    return [Sample((x(3, 4), rng.integers(-5, 6, (3, 4)).tolist())),
            Sample((x(2, 3, 4), rng.integers(-5, 6, (4,)).tolist())),
            Sample((x(3, 4), rng.integers(-5, 6, (3, 4)).tolist()), noncontig=True)]


def _ldexp_op(x, y):
    return oar.ldexp(x, oar.to_tensor(y, dtype="int32"))


register(OpInfo("ldexp", _ldexp_op, lambda x, y: x * 2.0 ** np.asarray(y), ("int64",) + FLOATS, _ldexp_samples,
                grad=True, out_dtype=_float_out, tol=_INT_IN,
                errors=lambda: [_err(lambda: oar.ldexp(oar.ones([2]), oar.ones([2])), TypeError, "ldexp")]))


def _logit_ref(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (1 - x))


register(OpInfo("logit", oar.logit, _logit_ref, FLOATS,
                lambda d: [Sample((_v(d, 120, 0.05, 0.95)(3, 4),)),
                           Sample((_v(d, 120, 0.05, 0.95)(2, 3, 4),), noncontig=True),
                           Sample((_v(d, 121, -0.5, 1.5)(3, 4),), {"eps": 0.1}, grad=False),
                           Sample((np.array([0.0, 1.0, 1.5, -0.2, 0.5]),), grad=False)],
                grad=True, gradgrad=True, tol={"float16": (3e-2, 2e-2), "bfloat16": (1e-1, 3e-2)},
                errors=lambda: [_err(lambda: oar.logit(oar.ones([2]), eps=0.7), ValueError, "logit")]))

register(OpInfo("stanh", oar.stanh, lambda x, scale_a=0.67, scale_b=1.7159: scale_b * np.tanh(scale_a * x),
                FLOATS, lambda d: [Sample((_v(d, 122)(3, 4),)), Sample((_v(d, 122)(3, 4),),
                                                                       {"scale_a": 1.5, "scale_b": -2.0},
                                                                       noncontig=True)],
                grad=True, gradgrad=True))


def _nextafter_samples(dtype):
    v = _v(dtype, 123, -3, 3)
    special = np.array([0.0, 0.0, 1.0, -1.0, np.inf, np.nan, 2.0, 1e-38])
    toward = np.array([1.0, -1.0, 1.0, -np.inf, 0.0, 1.0, 2.0, 0.0])
    return [Sample((v(3, 4), v(3, 4))), Sample((v(2, 1, 4), v(3, 1))), Sample((special, toward))]


def _nextafter_ref(x, y):
    return np.nextafter(x, y)


def _nextafter_op(x, y):
    # Compare in the tensor's own precision: the reference gets float64 copies of float32 inputs.
    return oar.nextafter(x, y)


register(OpInfo("nextafter", _nextafter_op, _nextafter_ref, ("float64",), _nextafter_samples,
                tol={"float64": (0, 0)},
                errors=lambda: [_err(lambda: oar.nextafter(oar.to_tensor([1]), oar.to_tensor([2])), TypeError,
                                     "nextafter")]))

register(OpInfo("polar", oar.polar, lambda r, t: r * np.exp(1j * t), F32_64,
                lambda d: [Sample((_v(d, 124, 0, 3)(3, 4), _v(d, 125, -3, 3)(3, 4))),
                           Sample((_v(d, 124, 0, 3)(2, 3), _v(d, 125, -3, 3)(3,))),
                           Sample((_v(d, 124, 0, 3)(2, 3), _v(d, 125, -3, 3)(2, 3)), noncontig=True)],
                out_dtype=lambda d: {"float32": "complex64", "float64": "complex128"}[d], grad=True,
                errors=lambda: [_err(lambda: oar.polar(oar.to_tensor([1]), oar.to_tensor([1])), TypeError, "polar")]))


def _shift_np(x, y, is_arithmetic=True, left=True):
    bits = x.dtype.itemsize * 8
    u = x.view(np.dtype(f"uint{bits}"))
    big = (y < 0) | (y >= bits)
    s = np.where(big, 0, y)
    if left:
        r = np.left_shift(u, s.astype(u.dtype)).view(x.dtype)
        return np.where(big, 0, r).astype(x.dtype)
    if is_arithmetic or x.dtype == np.uint8:
        r = np.right_shift(x, s.astype(x.dtype))
        return np.where(big, np.where(x < 0, -1, 0), r).astype(x.dtype)
    r = np.right_shift(u, s.astype(u.dtype)).view(x.dtype)
    return np.where(big, 0, r).astype(x.dtype)


def _shift_samples(dtype):
    rng = _rng(126)
    bits = np.dtype(dtype).itemsize * 8
    lo = 0 if dtype == "uint8" else -100
    x = lambda *s: rng.integers(lo, 100, s).astype(np.int64)  # noqa: E731
    y = lambda *s: rng.integers(-2 if dtype != "uint8" else 0, bits + 2, s).astype(np.int64)  # noqa: E731
    return [Sample((x(3, 4), y(3, 4))), Sample((x(2, 3), y(3))), Sample((x(3, 4), y(3, 4)), {"is_arithmetic": False}),
            Sample((x(3, 4), y(3, 4)), noncontig=True)]


for _name, _left in (("bitwise_left_shift", True), ("bitwise_right_shift", False)):
    register(OpInfo(_name, getattr(oar, _name),
                    (lambda left: lambda x, y, is_arithmetic=True: _shift_np(x, y, is_arithmetic, left))(_left),
                    INTS, _shift_samples,
                    errors=(lambda n: lambda: [_err(lambda: getattr(oar, n)(oar.ones([2]), oar.ones([2])), TypeError,
                                                    n)])(_name)))


# ---------------------------------------------------------------- special functions

def _bessel_ref(order, scaled):
    def ref(x):
        x = np.asarray(x, dtype=np.float64)
        t = (np.arange(400) + 0.5) * (2 * np.pi / 400)  # midpoints on a full period
        shift = np.abs(x)[..., None] if scaled else 0.0
        vals = np.exp(x[..., None] * np.cos(t) - shift) * np.cos(order * t)
        return vals.mean(axis=-1)
    return ref


def _bessel_samples(dtype):
    v = _v(dtype, 127, -6, 6)
    out = [Sample((v(3, 4),)), Sample((v(2, 3, 4),), noncontig=True), Sample((v(),))]
    if dtype in ("float32", "float64"):
        out.append(Sample((np.array([0.0, 19.5, -20.0, 20.5, 25.0, -30.0, 1e-3]),), grad=False))
    return out


for _name, _order, _scaled in (("i0", 0, False), ("i0e", 0, True), ("i1", 1, False), ("i1e", 1, True)):
    register(OpInfo(_name, getattr(oar, _name), _bessel_ref(_order, _scaled), ("int64",) + FLOATS,
                    _bessel_samples, out_dtype=_float_out, grad=True, gradgrad=True,
                    tol={"float64": (1e-12, 1e-12), "float16": (2e-2, 2e-2), "bfloat16": (1e-1, 3e-2), **_INT_IN}))


def _np_gammainc_closed(a, y):
    """P(a, y) for a in {0.5, 1, 1.5, 2, ...}: erf / Poisson sums and P(a+1, y) = P(a, y) - y^a e^-y / Gamma(a+1)."""
    a = np.asarray(a, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    a, y = np.broadcast_arrays(a, y)
    out = np.empty(a.shape)
    for idx in np.ndindex(a.shape):
        av, yv = float(a[idx]), float(y[idx])
        k = av - math.floor(av)
        p = math.erf(math.sqrt(yv)) if k == 0.5 else 1.0 - math.exp(-yv)
        s = 0.5 if k == 0.5 else 1.0
        while s < av - 1e-12:
            p -= math.exp(s * math.log(yv) - yv - math.lgamma(s + 1)) if yv > 0 else 0.0
            s += 1.0
        out[idx] = p
    return out


def _gammainc_samples(dtype):
    rng = _rng(128)
    a = lambda *s: rng.integers(1, 12, s) * 0.5  # noqa: E731 - 0.5, 1, ..., 5.5
    y = lambda *s: rng.uniform(0.1, 9.0, s)  # noqa: E731
    return [Sample((a(3, 4), y(3, 4))), Sample((a(3, 1), y(4))), Sample((a(2, 3), y(2, 3)), noncontig=True),
            Sample((np.array([2.5, 3.0, 1.0]), np.array([0.0, 40.0, 1e-4])), grad=False)]


register(OpInfo("gammainc", oar.gammainc, _np_gammainc_closed, FLOATS, _gammainc_samples, grad=True,
                tol={"float64": (1e-12, 1e-11), "float16": (2e-2, 2e-2), "bfloat16": (3e-2, 3e-2)},
                errors=lambda: [_err(lambda: oar.gammainc(oar.to_tensor([-0.5]), oar.to_tensor([1.0])), ValueError,
                                     "gammainc"),
                                _err(lambda: oar.gammainc(oar.to_tensor([1]), oar.to_tensor([1])), TypeError,
                                     "gammainc")]))
register(OpInfo("gammaincc", oar.gammaincc, lambda a, y: 1.0 - _np_gammainc_closed(a, y), FLOATS, _gammainc_samples,
                grad=True, tol={"float64": (1e-12, 1e-11), "float16": (2e-2, 2e-2), "bfloat16": (3e-2, 3e-2)},
                errors=lambda: [_err(lambda: oar.gammaincc(oar.to_tensor([0.5]), oar.to_tensor([-1.0])), ValueError,
                                     "gammaincc")]))


def _np_polygamma(x, n):
    if n == 0:
        return _np_digamma(x)
    x = np.asarray(x, dtype=np.float64)
    k = np.arange(200000, dtype=np.float64)
    flat = x.reshape(-1)
    sums = np.array([np.sum(1.0 / (v + k) ** (n + 1)) for v in flat]).reshape(x.shape)
    tail = x + k.size  # Euler-Maclaurin for the rest of the series
    sums = sums + 1.0 / (n * tail ** n) + 0.5 / tail ** (n + 1)
    return (-1) ** (n + 1) * math.factorial(n) * sums


def _polygamma_samples(dtype):
    v = _v(dtype, 129, 1.0 if dtype in INTS else 0.3, 6.0)
    out = [Sample((v(3, 4), n)) for n in (0, 1, 2, 4)]
    out.append(Sample((v(2, 3), 1), noncontig=True))
    if dtype in FLOATS:  # negative arguments between the poles
        out.append(Sample((np.array([-1.5, -0.3, -4.7]), 2), grad=False))
    return out


register(OpInfo("polygamma", oar.polygamma, _np_polygamma, ("int64",) + FLOATS, _polygamma_samples,
                out_dtype=_float_out, grad=True, tol={"float64": (1e-9, 1e-9), "float16": (5e-2, 2e-2),
                                                      "bfloat16": (2e-1, 3e-2), **_INT_IN},
                errors=lambda: [_err(lambda: oar.polygamma(oar.ones([2]), -1), ValueError, "polygamma"),
                                _err(lambda: oar.polygamma(oar.ones([2]), 1.5), TypeError, "polygamma")]))


def _np_multigammaln(x, p):
    return sum(_np_lgamma(x - j / 2.0) for j in range(p)) + p * (p - 1) / 4.0 * math.log(math.pi)


register(OpInfo("multigammaln", oar.multigammaln, _np_multigammaln, FLOATS,
                lambda d: [Sample((_v(d, 130, 2.0, 5.0)(3, 4), 3)), Sample((_v(d, 130, 0.6, 5.0)(2, 3), 1),
                                                                           noncontig=True)],
                grad=True, tol={"float64": (1e-9, 1e-9), "float16": (5e-2, 2e-2), "bfloat16": (2e-1, 3e-2)},
                errors=lambda: [_err(lambda: oar.multigammaln(oar.ones([2]), 0), ValueError, "multigammaln")]))


# ---------------------------------------------------------------- reductions and statistics

def _np_axes(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _nan_samples(dtype, seed=131):
    rng = _rng(seed)
    x = _values((3, 4, 5), dtype, -2, 2, rng)
    if dtype in FLOATS:
        x[rng.random(x.shape) < 0.3] = np.nan
        x[0, 0, :] = np.nan
    out = [Sample((x,), {"axis": a, "keepdim": k}, grad=False) for a in (None, 0, -1, [0, 2]) for k in (False, True)]
    out.append(Sample((_values((2, 3), dtype, -2, 2, rng),), {"axis": 1}))
    return out


register(OpInfo("nansum", oar.nansum,
                lambda x, axis=None, keepdim=False: np.nansum(x, axis=_np_axes(axis), keepdims=keepdim),
                ("int32", "int64") + FLOATS, _nan_samples, grad=True,
                out_dtype=lambda d: "int64" if d in INTS else d,
                tol={"float16": (3e-2, 2e-2), "bfloat16": (1e-1, 3e-2)},
                errors=lambda: [_err(lambda: oar.nansum(oar.ones([2, 3]), axis=2), IndexError, "nansum")]))


def _np_nanmean(x, axis=None, keepdim=False):
    with np.errstate(invalid="ignore", divide="ignore"):
        keep = ~np.isnan(x)
        return np.sum(np.where(keep, x, 0), axis=_np_axes(axis), keepdims=keepdim) / \
            np.sum(keep, axis=_np_axes(axis), keepdims=keepdim)


register(OpInfo("nanmean", oar.nanmean, _np_nanmean, ("int64",) + FLOATS, _nan_samples, grad=True,
                out_dtype=_float_out, tol={"float16": (3e-2, 2e-2), "bfloat16": (1e-1, 3e-2), **_INT_IN},
                errors=lambda: [_err(lambda: oar.nanmean(oar.ones([2, 3]), axis=[0, 0]), ValueError, "nanmean")]))


def _quantile_samples(dtype, nan=False):
    rng = _rng(132)
    x = _values((3, 4, 5), dtype, -3, 3, rng)
    if nan:
        x[rng.random(x.shape) < 0.25] = np.nan
        x[1, 2, :] = np.nan
    out = [Sample((x, q), {"axis": a, "keepdim": k}, grad=not nan)
           for q, a, k in [(0.5, None, False), (0.3, 1, False), ([0.1, 0.9], -1, True), (0.75, [0, 2], False),
                           ([0.0, 1.0], [1, 2], True), (0.5, None, True)]]
    out += [Sample((x, 0.37), {"axis": 2, "interpolation": m}, grad=not nan)
            for m in ("lower", "higher", "nearest", "midpoint")]
    out.append(Sample((_values((2, 6), dtype, -3, 3, rng), 0.5), {"axis": 1}, noncontig=True))
    return out


def _np_quantile(fn):
    def ref(x, q, axis=None, keepdim=False, interpolation="linear"):
        with np.errstate(invalid="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return fn(x, q, axis=_np_axes(axis), keepdims=keepdim, method=interpolation)
    return ref


register(OpInfo("quantile", oar.quantile, _np_quantile(np.quantile), F32_64, _quantile_samples, grad=True,
                errors=lambda: [_err(lambda: oar.quantile(oar.ones([4]), 1.5), ValueError, "quantile"),
                                _err(lambda: oar.quantile(oar.ones([4]), 0.5, axis=1), IndexError, "quantile"),
                                _err(lambda: oar.quantile(oar.ones([4]), 0.5, interpolation="cubic"), ValueError,
                                     "quantile")]))
register(OpInfo("nanquantile", oar.nanquantile, _np_quantile(np.nanquantile), F32_64,
                lambda d: _quantile_samples(d, nan=True),
                errors=lambda: [_err(lambda: oar.nanquantile(oar.ones([4]), [0.5, -0.1]), ValueError,
                                     "nanquantile")]))


def _np_nanmedian(x, axis=None, keepdim=False, mode="avg"):
    ax = _np_axes(axis)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if mode == "avg":
            return np.nanmedian(x, axis=ax, keepdims=keepdim)
        return np.nanquantile(x, 0.5, axis=ax, keepdims=keepdim, method="lower")


register(OpInfo("nanmedian", oar.nanmedian, _np_nanmedian, F32_64,
                lambda d: [Sample(s.args, {"axis": s.kwargs["axis"], "keepdim": s.kwargs["keepdim"]}, grad=False)
                           for s in _nan_samples(d, 133)[:8] if s.kwargs["axis"] is None or
                           isinstance(s.kwargs["axis"], list)] +
                [Sample((_values((3, 6), d, -2, 2, _rng(134)),), {"axis": 1}),
                 Sample((_values((4, 5), d, -2, 2, _rng(135)),), {"axis": 0}, noncontig=True)],
                grad=True,
                errors=lambda: [_err(lambda: oar.nanmedian(oar.ones([4]), mode="max"), ValueError, "nanmedian")]))
register(OpInfo("nanmedian_min", lambda x, **k: oar.nanmedian(x, mode="min", **k)[0],
                lambda x, axis, keepdim=False: _np_nanmedian(x, axis, keepdim, "min"), F32_64,
                lambda d: [Sample((_nan_samples(d, 136)[2].args[0],), {"axis": 0}, grad=False),
                           Sample((_values((3, 6), d, -2, 2, _rng(137)),), {"axis": -1, "keepdim": True})],
                grad=True))


def _kth_ref(x, k, axis=-1, keepdim=False):
    v = np.take(np.sort(x, axis=axis, kind="stable"), [k - 1], axis=axis)
    return v if keepdim else np.squeeze(v, axis)


def _kth_samples(dtype):
    v = _v(dtype, 138, -5, 5)
    return [Sample((v(3, 5), 2)), Sample((v(3, 5), 1), {"axis": 0, "keepdim": True}), Sample((v(4,), 4)),
            Sample((v(2, 3, 4), 3), {"axis": -1}, noncontig=True)]


register(OpInfo("kthvalue", lambda *a, **k: oar.kthvalue(*a, **k)[0], _kth_ref, ("int32", "int64") + FLOATS,
                _kth_samples, grad=True,
                errors=lambda: [_err(lambda: oar.kthvalue(oar.ones([2, 3]), 4), ValueError, "kthvalue"),
                                _err(lambda: oar.kthvalue(oar.ones([2, 3]), 0), ValueError, "kthvalue"),
                                _err(lambda: oar.kthvalue(oar.ones([2, 3]), 1, axis=2), IndexError, "kthvalue")]))


def _kth_index_ref(x, k, axis=-1, keepdim=False):
    i = np.take(np.argsort(x, axis=axis, kind="stable"), [k - 1], axis=axis)
    return i if keepdim else np.squeeze(i, axis)


register(OpInfo("kthvalue_index", lambda *a, **k: oar.kthvalue(*a, **k)[1], _kth_index_ref, ("int64", "float32"),
                lambda d: [Sample((_v(d, 139, -3, 3)(3, 6), 2)), Sample((_v(d, 139, -3, 3)(4, 3), 3), {"axis": 0})],
                out_dtype=lambda d: "int64"))


def _mode_np(x, axis=-1, keepdim=False):
    a = np.moveaxis(x, axis, -1)
    vals = np.empty(a.shape[:-1], x.dtype)
    for idx in np.ndindex(a.shape[:-1]):
        u, c = np.unique(a[idx], return_counts=True)
        vals[idx] = u[np.argmax(c)]  # the smallest among the most frequent
    return np.expand_dims(vals, axis) if keepdim else vals


def _mode_samples(dtype):
    rng = _rng(140)
    ints = lambda *s: rng.integers(-3, 4, s).astype(np.float64)  # noqa: E731 - many repeats
    return [Sample((ints(3, 8),)), Sample((ints(8, 3),), {"axis": 0, "keepdim": True}),
            Sample((ints(2, 3, 6),), noncontig=True)]


# No finite-difference check: perturbing one of tied values changes the mode
# (test_math_ext checks that the gradient reaches the chosen element).
register(OpInfo("mode", lambda *a, **k: oar.mode(*a, **k)[0], _mode_np, ("int32", "int64", "float32", "float64"),
                _mode_samples,
                errors=lambda: [_err(lambda: oar.mode(oar.ones([2]), axis=1), IndexError, "mode")]))

register(OpInfo("msort", oar.msort, lambda x: np.sort(x, axis=0), REAL,
                lambda d: [Sample((_v(d, 141)(4, 3),)), Sample((_v(d, 141)(5,),)),
                           Sample((_v(d, 141)(4, 3, 2),), noncontig=True)], grad=True))


def _np_logcumsumexp(x, axis=None):
    if axis is None:
        x, axis = x.reshape(-1), 0
    m = np.max(x, axis=axis, keepdims=True) if x.size else 0
    with np.errstate(divide="ignore"):
        return np.log(np.cumsum(np.exp(x - m), axis=axis)) + m


register(OpInfo("logcumsumexp", oar.logcumsumexp, _np_logcumsumexp, ("int64",) + FLOATS,
                lambda d: [Sample((_v(d, 142, -5, 5)(3, 7),)), Sample((_v(d, 142, -5, 5)(3, 7),), {"axis": 1}),
                           Sample((_v(d, 142, -5, 5)(5, 3),), {"axis": 0}, noncontig=True),
                           Sample((_v(d, 142, -5, 5)(0, 3),), {"axis": 0})],
                out_dtype=_float_out, grad=True, gradgrad=True,
                tol={"float16": (3e-2, 2e-2), "bfloat16": (1e-1, 3e-2), **_INT_IN},
                errors=lambda: [_err(lambda: oar.logcumsumexp(oar.ones([2, 3]), axis=2), IndexError,
                                     "logcumsumexp")]))


def _reduce_as_ref(x, target):
    lead = x.ndim - target.ndim
    out = x.sum(axis=tuple(range(lead))) if lead else x
    axes = tuple(i for i, t in enumerate(target.shape) if t == 1 and out.shape[i] != 1)
    return out.sum(axis=axes, keepdims=True).reshape(target.shape) if axes else out.reshape(target.shape)


register(OpInfo("reduce_as", oar.reduce_as, _reduce_as_ref, ("int32", "int64") + FLOATS,
                lambda d: [Sample((_v(d, 143)(2, 3, 4), _v(d, 144)(3, 1))), Sample((_v(d, 143)(2, 3), _v(d, 144)()),
                                                                                  grad=False),
                           Sample((_v(d, 143)(2, 3), _v(d, 144)(2, 3))),
                           Sample((_v(d, 143)(4, 3), _v(d, 144)(1, 3)), noncontig=True)],
                out_dtype=lambda d: "int64" if d in INTS else d, grad=True,
                tol={"float16": (3e-2, 2e-2), "bfloat16": (1e-1, 3e-2)},
                errors=lambda: [_err(lambda: oar.reduce_as(oar.ones([2, 3]), oar.ones([4])), ValueError,
                                     "reduce_as")]))


def _diff_ref(x, n=1, axis=-1, prepend=None, append=None):
    if x.dtype == np.bool_:
        parts = [p for p in (prepend, x, append) if p is not None]
        y = np.concatenate(parts, axis=axis)
        for _ in range(n):
            y = np.not_equal(np.take(y, range(1, y.shape[axis]), axis), np.take(y, range(0, y.shape[axis] - 1), axis))
        return y
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(x, n=n, axis=axis, **kw)


def _diff_samples(dtype):
    v = _v(dtype, 145, -5, 5)
    return [Sample((v(3, 5),)), Sample((v(3, 5), 2, 0)), Sample((v(4,), 3)),
            Sample((v(3, 4), 1, 1, v(3, 2), v(3, 1))), Sample((v(3, 4),), {"n": 6}),
            Sample((v(2, 3, 4), 1, 1), noncontig=True)]


register(OpInfo("diff", oar.diff, _diff_ref, ("bool", "int32", "int64") + FLOATS, _diff_samples, grad=True,
                gradgrad=True, tol={"float16": (3e-2, 2e-2), "bfloat16": (1e-1, 3e-2)},
                errors=lambda: [_err(lambda: oar.diff(oar.ones([])), ValueError, "diff"),
                                _err(lambda: oar.diff(oar.ones([3]), n=0), ValueError, "diff"),
                                _err(lambda: oar.diff(oar.ones([3]), prepend=oar.ones([1, 1])), ValueError, "diff")]))


def _trap_ref(cumulative):
    def ref(y, x=None, dx=None, axis=-1):
        n = y.shape[axis]
        mid = (np.take(y, range(1, n), axis) + np.take(y, range(0, n - 1), axis)) / 2
        if x is None:
            d = 1.0 if dx is None else dx
        elif x.ndim == 1:
            shape = [1] * y.ndim
            shape[axis] = n - 1
            d = np.diff(x).reshape(shape)
        else:
            d = np.diff(x, axis=axis)
        terms = mid * d
        return np.cumsum(terms, axis=axis) if cumulative else np.sum(terms, axis=axis)
    return ref


def _trap_samples(dtype):
    v = _v(dtype, 146, -3, 3)
    xs = np.sort(_v(dtype, 147, 0, 5)(5))
    return [Sample((v(3, 5),)), Sample((v(3, 5),), {"dx": 0.5, "axis": 0}), Sample((v(3, 5), xs)),
            Sample((v(3, 5), np.sort(_v(dtype, 148, 0, 5)(3, 5), axis=0)), {"axis": 0}),
            Sample((v(4, 5),), {"axis": 1}, noncontig=True), Sample((v(1,),))]


for _name, _cum in (("trapezoid", False), ("cumulative_trapezoid", True)):
    register(OpInfo(_name, getattr(oar, _name), _trap_ref(_cum), FLOATS, _trap_samples, grad=True, gradgrad=True,
                    tol={"float16": (3e-2, 2e-2), "bfloat16": (1e-1, 3e-2)},
                    errors=(lambda n: lambda: [
                        _err(lambda: getattr(oar, n)(oar.ones([3]), x=oar.ones([3]), dx=1.0), ValueError, n),
                        _err(lambda: getattr(oar, n)(oar.to_tensor([1, 2])), TypeError, n),
                        _err(lambda: getattr(oar, n)(oar.ones([3]), x=oar.ones([2])), ValueError, n)])(_name)))


def _np_softmax(x, dim=None, dtype=None):
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


register(OpInfo("softmax", oar.softmax, _np_softmax, FLOATS,
                lambda d: [Sample((_v(d, 149)(3, 4),)), Sample((_v(d, 149)(2, 3, 4),)), Sample((_v(d, 149)(5,),)),
                           Sample((_v(d, 149)(2, 3, 4, 2),)), Sample((_v(d, 149)(3, 4),), {"dim": 0}, noncontig=True)],
                grad=True, tol={"float16": (1e-2, 1e-2), "bfloat16": (3e-2, 3e-2)},
                errors=lambda: [_err(lambda: oar.softmax(oar.ones([2]), dim=3), IndexError, "softmax")]))


# ---------------------------------------------------------------- assembling

def _multiplex_op(a, b, c, index):
    return oar.multiplex([a, b, c], oar.to_tensor(index, dtype="int32"))


def _multiplex_ref(a, b, c, index):
    stacked = np.stack([a, b, c])
    idx = np.asarray(index).reshape(-1)
    return stacked[idx, np.arange(idx.size)]


def _multiplex_samples(dtype):
    v = _v(dtype, 150)
    idx = _rng(151).integers(0, 3, (4, 1)).tolist()  # a list: not perturbed by the gradient check
    return [Sample((v(4, 3), v(4, 3), v(4, 3), idx)), Sample((v(4, 3, 2), v(4, 3, 2), v(4, 3, 2), idx),
                                                               noncontig=True)]


register(OpInfo("multiplex", _multiplex_op, _multiplex_ref, ("int32", "int64") + F32_64, _multiplex_samples, grad=True,
                errors=lambda: [_err(lambda: oar.multiplex([oar.ones([2, 2]), oar.ones([2, 2])],
                                                           oar.to_tensor([[2], [0]])), IndexError, "multiplex"),
                                _err(lambda: oar.multiplex([oar.ones([2, 2]), oar.ones([1, 2])],
                                                           oar.to_tensor([[1], [0]])), ValueError, "multiplex"),
                                _err(lambda: oar.multiplex([oar.ones([2, 2])], oar.ones([2, 1])), TypeError,
                                     "multiplex")]))

register(OpInfo("vander", oar.vander, lambda x, n=None, increasing=False: np.vander(x, n, increasing),
                ("int32", "int64") + FLOATS,
                lambda d: [Sample((_v(d, 152, -2, 2)(4),)), Sample((_v(d, 152, -2, 2)(3),), {"n": 5}),
                           Sample((np.array([0.0, 1.5, -1.0]),), {"n": 4, "increasing": True}),
                           Sample((_v(d, 152, -2, 2)(3),), {"n": 0}, grad=False),
                           Sample((_v(d, 152, -2, 2)(4),), noncontig=True)],
                grad=True, gradgrad=True, tol={"float16": (5e-2, 2e-2), "bfloat16": (2e-1, 3e-2)},
                errors=lambda: [_err(lambda: oar.vander(oar.ones([2, 2])), ValueError, "vander"),
                                _err(lambda: oar.vander(oar.ones([2]), n=-1), ValueError, "vander")]))


# ---------------------------------------------------------------- comparisons

def _close_samples(dtype):
    rng = _rng(153)
    x = _values((3, 4), dtype, -5, 5, rng)
    if dtype in INTS:
        y = x + rng.integers(0, 2, x.shape)
        return [Sample((x, y)), Sample((x, y[0]))]
    y = x + rng.choice([0.0, 1e-9, 1e-3, -0.5], size=x.shape)
    special_x = np.array([1.0, np.nan, np.inf, -np.inf, np.inf, 0.0])
    special_y = np.array([1.0, np.nan, np.inf, np.inf, 1e300, 1e-9])
    return [Sample((x, y)), Sample((x, y), {"rtol": 1e-2, "atol": 0.0}), Sample((x, y[1:2]), noncontig=True),
            Sample((special_x, special_y)), Sample((special_x, special_y), {"equal_nan": True})]


register(OpInfo("isclose", oar.isclose, lambda x, y, **k: np.isclose(x, y, **k), ("int32", "int64") + F32_64,
                _close_samples, out_dtype=lambda d: "bool",
                errors=lambda: [_err(lambda: oar.isclose(oar.ones([2]), oar.ones([2]), rtol=-1.0), ValueError,
                                     "isclose"),
                                _err(lambda: oar.isclose(oar.ones([2]), oar.ones([3])), ValueError, "isclose")]))
register(OpInfo("allclose", oar.allclose, lambda x, y, **k: np.allclose(x, y, **k), ("int64",) + F32_64,
                lambda d: _close_samples(d) + [Sample((np.ones((2, 3)), np.ones((2, 3))))],
                out_dtype=lambda d: "bool"))
register(OpInfo("equal_all", oar.equal_all, lambda x, y: np.array_equal(x, y), ("bool", "int32", "int64") + F32_64,
                lambda d: [Sample((_v(d, 154)(3, 4), _v(d, 154)(3, 4))), Sample((_v(d, 154)(3, 4), _v(d, 155)(3, 4))),
                           Sample((_v(d, 154)(3, 4), _v(d, 154)(4,)))], out_dtype=lambda d: "bool"))


def _isin_samples(dtype):
    rng = _rng(156)
    x = _values((3, 5), dtype, -6, 6, rng)
    out = [Sample((x, _values((4,), dtype, -6, 6, rng))), Sample((x, _values((2, 3), dtype, -6, 6, rng)),
                                                                 {"invert": True}, noncontig=True),
           Sample((x, _values((0,), dtype, -6, 6, rng)))]
    if dtype in FLOATS:
        out.append(Sample((np.array([np.nan, 1.0, np.inf]), np.array([np.nan, np.inf]))))
    return out


register(OpInfo("isin", oar.isin, lambda x, t, invert=False: np.isin(x, t, invert=invert), ("int32", "int64") + F32_64,
                _isin_samples, out_dtype=lambda d: "bool",
                errors=lambda: [_err(lambda: oar.isin(oar.to_tensor([1j]), oar.to_tensor([1j])), TypeError,
                                     "isin")]))
register(OpInfo("isreal", oar.isreal, np.isreal, ("int64", "float32") + COMPLEX,
                lambda d: [Sample((_v(d, 157)(3, 4),)),
                           Sample((np.array([1.0, 2.0, 0.0]) + (1j * np.array([0.0, 1.0, -0.0]) if d in COMPLEX
                                                                 else 0),))],
                out_dtype=lambda d: "bool"))


# ---------------------------------------------------------------- counting

def _bincount_samples(dtype):
    rng = _rng(158)
    x = rng.integers(0, 9, (12,))
    return [Sample((x,)), Sample((x,), {"minlength": 15}), Sample((np.zeros((0,), np.int64),)),
            Sample((x[::2].copy(),), noncontig=True)]


register(OpInfo("bincount", oar.bincount, lambda x, minlength=0: np.bincount(x.astype(np.int64), minlength=minlength),
                INTS, _bincount_samples, out_dtype=lambda d: "int64",
                errors=lambda: [_err(lambda: oar.bincount(oar.to_tensor([-1, 2])), ValueError, "bincount"),
                                _err(lambda: oar.bincount(oar.to_tensor([[1, 2]])), ValueError, "bincount"),
                                _err(lambda: oar.bincount(oar.to_tensor([1, 2]), minlength=-1), ValueError,
                                     "bincount")]))


def _bucketize_samples(dtype):
    rng = _rng(159)
    seq = np.unique(_values((6,), dtype, -5, 5, rng))
    x = _values((3, 4), dtype, -6, 6, rng)
    x.flat[:2] = seq[:2]  # values on the boundaries
    return [Sample((x, seq)), Sample((x, seq), {"right": True}), Sample((x, seq), {"out_int32": True}),
            Sample((x, seq), noncontig=True)]


register(OpInfo("bucketize", oar.bucketize,
                lambda x, s, right=False, out_int32=False: np.searchsorted(s, x, side="right" if right else "left"),
                ("int32", "int64", "float32", "float64"), _bucketize_samples, out_dtype=None,
                errors=lambda: [_err(lambda: oar.bucketize(oar.ones([2]), oar.ones([2, 2])), ValueError,
                                     "bucketize")]))
