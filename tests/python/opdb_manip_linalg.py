"""Op-database entries for the linear-algebra extras declared in
src/ops/linalg.toml (bmm, mm, dot, outer, t, kron, cross) and for lerp,
nan_to_num and logspace, declared there too.
"""
import numpy as np

import oar
from opdb import ErrorInput, OpInfo, Sample, _values, register

MATMUL = ("float32", "float64", "complex64", "complex128")
PRODUCT = ("int32", "int64", "float32", "float64", "complex128")
F32_64 = ("float32", "float64")


def _v(dtype, seed, lo=-2.0, hi=2.0):
    rng = np.random.default_rng(seed)
    return lambda *shape: _values(shape, dtype, lo, hi, rng)


def _err(fn, exc, api):
    return ErrorInput(fn, exc, f"[oar.{api}]")


register(OpInfo("bmm", oar.bmm, np.matmul, MATMUL,
                lambda d: [Sample((_v(d, 400)(2, 3, 4), _v(d, 401)(2, 4, 2))),
                           Sample((_v(d, 400)(3, 2, 2), _v(d, 401)(3, 2, 3)), noncontig=True),
                           Sample((_v(d, 400)(0, 2, 3), _v(d, 401)(0, 3, 1)))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.bmm(oar.ones([2, 3]), oar.ones([2, 3, 4])), ValueError, "bmm"),
                                _err(lambda: oar.bmm(oar.ones([2, 3, 4]), oar.ones([2, 3, 2])), ValueError, "bmm")]))

register(OpInfo("mm", oar.mm, np.matmul, MATMUL,
                lambda d: [Sample((_v(d, 410)(2, 3), _v(d, 411)(3, 4))),
                           Sample((_v(d, 410)(3, 3), _v(d, 411)(3, 2)), noncontig=True),
                           Sample((_v(d, 410)(2, 2, 3), _v(d, 411)(3, 2)))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.mm(oar.ones([2, 3]), oar.ones([2, 3])), ValueError, "mm")]))


def _np_dot(x, y):
    return np.sum(x * y, axis=-1)


register(OpInfo("dot", oar.dot, _np_dot, MATMUL,
                lambda d: [Sample((_v(d, 420)(3), _v(d, 421)(3))), Sample((_v(d, 420)(2, 3), _v(d, 421)(2, 3))),
                           Sample((_v(d, 420)(3, 2), _v(d, 421)(3, 2)), noncontig=True)],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.dot(oar.ones([2, 2, 2]), oar.ones([2, 2, 2])), ValueError, "dot"),
                                _err(lambda: oar.dot(oar.ones([3]), oar.ones([4])), ValueError, "dot")]))

register(OpInfo("outer", oar.outer, lambda x, y: np.outer(x, y), PRODUCT,
                lambda d: [Sample((_v(d, 430)(3), _v(d, 431)(4))), Sample((_v(d, 430)(2, 2), _v(d, 431)(3))),
                           Sample((_v(d, 430)(0), _v(d, 431)(3))), Sample((_v(d, 430)(2, 3), _v(d, 431)(2)),
                                                                          noncontig=True)],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.outer(oar.ones([2]), "x"), TypeError, "outer")]))


def _np_t(x):
    return x.T if x.ndim == 2 else x


register(OpInfo("t", oar.t, _np_t, ("bool", "int64", "float32", "float64", "complex128"),
                lambda d: [Sample((_v(d, 440)(2, 3),)), Sample((_v(d, 440)(3),)), Sample((_v(d, 440)(),)),
                           Sample((_v(d, 440)(3, 4),), noncontig=True), Sample((_v(d, 440)(0, 2),))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.t(oar.ones([2, 2, 2])), ValueError, "t")]))

register(OpInfo("kron", oar.kron, np.kron, PRODUCT,
                lambda d: [Sample((_v(d, 450)(2), _v(d, 451)(3))), Sample((_v(d, 450)(2, 2), _v(d, 451)(3, 1))),
                           Sample((_v(d, 450)(2, 3), _v(d, 451)(2)), noncontig=True),
                           Sample((_v(d, 450)(0, 2), _v(d, 451)(3, 1)))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.kron(oar.ones([2]), 2.0), TypeError, "kron")]))


def _np_cross(x, y, axis=9):
    if axis is None or axis == 9:
        axis = next(i for i, n in enumerate(x.shape) if n == 3)
    return np.cross(x, y, axis=axis)


register(OpInfo("cross", oar.cross, _np_cross, ("int64",) + F32_64 + ("complex128",),
                lambda d: [Sample((_v(d, 460)(3), _v(d, 461)(3))), Sample((_v(d, 460)(2, 3), _v(d, 461)(2, 3)), {
                    "axis": 1}), Sample((_v(d, 460)(3, 2), _v(d, 461)(3, 2)), noncontig=True),
                           Sample((_v(d, 460)(4, 3), _v(d, 461)(4, 3)), {"axis": None}),
                           Sample((_v(d, 460)(0, 3), _v(d, 461)(0, 3)))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.cross(oar.ones([2, 3]), oar.ones([2, 3]), axis=0), ValueError,
                                     "cross"),
                                _err(lambda: oar.cross(oar.ones([2, 3]), oar.ones([2, 3]), axis=5), IndexError,
                                     "cross"),
                                _err(lambda: oar.cross(oar.ones([3]), oar.ones([3]), axis=0.5), TypeError, "cross")]))


def _np_lerp(x, y, w):
    return x + w * (y - x)


register(OpInfo("lerp", oar.lerp, _np_lerp, F32_64,
                lambda d: [Sample((_v(d, 470)(2, 3), _v(d, 471)(2, 3), 0.25)),
                           Sample((_v(d, 470)(2, 3), _v(d, 471)(3), _v(d, 472, 0.0, 1.0)(2, 3))),
                           Sample((_v(d, 470)(3, 2), _v(d, 471)(3, 2), _v(d, 472, 0.0, 1.0)(3, 2)), noncontig=True),
                           Sample((_v(d, 470)(0, 2), _v(d, 471)(0, 2), 1))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.lerp(oar.ones([3]), oar.ones([2]), 0.5), ValueError, "lerp"),
                                _err(lambda: oar.lerp(oar.ones([3]), oar.ones([3]), "half"), TypeError, "lerp"),
                                _err(lambda: oar.lerp(oar.to_tensor([1, 2]), oar.to_tensor([3, 4]), 1), TypeError,
                                     "lerp")]))


def _specials(d, infs=True):
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -2.0] if infs else [np.nan, 1.5, -2.0])
    return a if d in F32_64 else np.array([1, -2, 3])


def _np_nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    # The samples with infinities give posinf and neginf: the defaults depend on
    # the dtype under test, which the widened reference input no longer tells.
    return x if x.dtype.kind in "iu" else np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


register(OpInfo("nan_to_num", oar.nan_to_num, _np_nan_to_num, F32_64 + ("int64",),
                lambda d: [Sample((_specials(d, infs=False),), grad=False),
                           Sample((_specials(d), 1.0, 2.0, -3.0), grad=False),
                           Sample((_specials(d),), {"posinf": oar.to_tensor(9.0), "neginf": -9}, grad=False),
                           Sample((_v(d, 480)(2, 3),), {"nan": 0.5}), Sample((_v(d, 480)(3, 2),), noncontig=True)],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.nan_to_num(oar.ones([2]), nan="x"), TypeError, "nan_to_num"),
                                _err(lambda: oar.nan_to_num(oar.ones([2]), posinf=oar.ones([2])), ValueError,
                                     "nan_to_num")]))


def _np_logspace(start, stop, num, base=10.0, dtype=None):
    return np.logspace(start, stop, int(num), base=base)


register(OpInfo("logspace", oar.logspace, _np_logspace, F32_64,
                lambda d: [Sample((0, 3, 4)), Sample((1, 4, 7), {"base": 2.0}), Sample((0, 1, 0)),
                           Sample((-1.0, 1.0, 3.0)), Sample((2, 2, 1))],
                creation=True,
                errors=lambda: [_err(lambda: oar.logspace(0, 1, -1), ValueError, "logspace"),
                                _err(lambda: oar.logspace(0, 1, 2.5), TypeError, "logspace"),
                                _err(lambda: oar.logspace(oar.ones([2]), 1, 2), ValueError, "logspace")]))
