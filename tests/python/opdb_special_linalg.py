"""Op-database entries for xlogy and the paddle.linalg functions pinv, cond,
matrix_rank and multi_dot. References are NumPy's (np.linalg) and the
definition of xlogy written out with NumPy."""
import numpy as np

import oar
from opdb import ErrorInput, OpInfo, Sample, register

LA = oar.linalg
FL = ("float32", "float64")


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.{name}]")


def _r(seed, *shape, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def _np_xlogy(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x == 0, 0.0, x * np.log(np.where(x == 0, 1.0, y)))
    return np.where(np.isnan(y), y, out)


def _xlogy_samples(dtype):
    x = _r(1, 3, 4)
    x[0, :2] = 0.0
    y = _r(2, 3, 4, lo=0.2, hi=3.0)
    y[0, 0] = 0.0  # 0 * log(0) is 0
    return [Sample((x, y), grad=False), Sample((_r(3, 3, 4), _r(4, 4, lo=0.3, hi=3.0))),
            Sample((_r(5, 2, 1), _r(6, 1, 3, lo=0.3, hi=3.0)), noncontig=True),
            Sample((np.array([0.0, 1.0]), np.array([np.nan, np.nan])), grad=False)]


register(OpInfo("xlogy", oar.xlogy, _np_xlogy, FL, _xlogy_samples, grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.xlogy(1.0, 2.0), TypeError, "xlogy")]))


def _well(seed, *shape):
    """Full-rank matrices with well separated singular values."""
    a = _r(seed, *shape)
    k = min(shape[-2:])
    idx = np.arange(k)
    a[..., idx, idx] += 3.0 * (1 + idx)
    return a


register(OpInfo("linalg.pinv", LA.pinv, np.linalg.pinv, FL,
                lambda d: [Sample((_well(7, 3, 4),)), Sample((_well(8, 4, 3),)), Sample((_well(9, 2, 3, 3),)),
                           Sample((_well(10, 3, 4),), noncontig=True)],
                grad=True, gradgrad=True, tol={"float32": (1e-4, 1e-4)},
                errors=lambda: [_err(lambda: LA.pinv(oar.ones([3])), ValueError, "linalg.pinv")]))


def _cond_samples(dtype):
    return [Sample((_well(11, 3, 3),), {"p": p}) for p in (None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf)] + \
        [Sample((_well(12, 2, 3, 3),)), Sample((_well(13, 3, 4),), grad=False)]


def _np_cond(x, p=None):
    return np.linalg.cond(x, p)


register(OpInfo("linalg.cond", LA.cond, _np_cond, FL, _cond_samples, grad=True, tol={"float32": (1e-4, 1e-4)},
                errors=lambda: [_err(lambda: LA.cond(oar.ones([3])), ValueError, "linalg.cond")]))


def _rank_samples(dtype):
    # Rank 2, with small integers so that the product is exact in float32 too.
    low = np.round(_r(14, 4, 2) * 2) @ np.round(_r(15, 2, 5) * 2)
    return [Sample((low,)), Sample((_well(16, 3, 3),)), Sample((np.zeros((3, 3)),)),
            Sample((np.stack([low[:3, :3], _well(17, 3, 3)]),))]


register(OpInfo("linalg.matrix_rank", LA.matrix_rank, lambda x: np.asarray(np.linalg.matrix_rank(x), np.int64), FL,
                _rank_samples, out_dtype=lambda d: "int64",
                errors=lambda: [_err(lambda: LA.matrix_rank(oar.ones([3])), ValueError, "linalg.matrix_rank")]))


def _multi_dot(*ms):
    return LA.multi_dot(list(ms))


def _np_multi_dot(*ms):
    return np.linalg.multi_dot(list(ms))


register(OpInfo("linalg.multi_dot", _multi_dot, _np_multi_dot, FL,
                lambda d: [Sample((_r(18, 3, 4), _r(19, 4, 2), _r(20, 2, 5))), Sample((_r(21, 4), _r(22, 4, 3))),
                           Sample((_r(23, 2, 4), _r(24, 4, 3), _r(25, 3, 2), _r(26, 2)), noncontig=True)],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: LA.multi_dot([oar.ones([2, 3]), oar.ones([2, 3])]), ValueError,
                                     "linalg.multi_dot")]))
