"""Op-database entries of the indexing functions declared in src/ops/index.toml
that opdb_core does not cover (gather, scatter, scatter_nd_add, put_along_axis_,
masked_fill, masked_select, sort). Index arguments are given as lists and
NumPy int arrays (the harness turns float and int sample arrays into tensors of
the dtype under test, so index tensors are made in the op's lambda)."""
import numpy as np

import oar
from opdb import FLOATS, REAL, OpInfo, Sample, register
from opdb_core import _distinct, _err, _np_argsort, _np_put_along_axis, _v


def _np_gather(x, index, axis=None):
    return np.take(x, np.asarray(index, dtype=np.int64), axis=0 if axis is None else axis)


register(OpInfo("gather", oar.gather, _np_gather, ("bool",) + REAL,
                lambda d: [Sample((_v(d, 300)(4, 3), [2, 0, 2])), Sample((_v(d, 300)(2, 3, 4), [3, 0], 2)),
                           Sample((_v(d, 300)(4, 3), [1, -1]), {"axis": 1}, noncontig=True),
                           Sample((_v(d, 300)(4, 3), 1)),  # a 0-D index drops the axis
                           Sample((_v(d, 300)(4, 3), [])), Sample((_v(d, 300)(5,), (4, 0)))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.gather(oar.ones([3, 4]), [0, 3]), IndexError, "gather"),
                                _err(lambda: oar.gather(oar.ones([3, 4]), [0.5]), TypeError, "gather"),
                                _err(lambda: oar.gather(oar.ones([3, 4]), oar.ones([1])), TypeError, "gather"),
                                _err(lambda: oar.gather(oar.ones([3, 4]), [True]), TypeError, "gather"),
                                _err(lambda: oar.gather(oar.ones([3, 4]), [0], axis=1.0), TypeError, "gather")]))


def _scatter(x, index, updates, **kw):
    return oar.scatter(x, np.asarray(index, dtype=np.int32), updates, **kw)


def _np_scatter(x, index, updates, overwrite=True):
    out = x.copy()
    index = np.asarray(index, dtype=np.int64)
    if not overwrite:
        out[index] = 0
    for i, row in zip(index, updates):
        out[i] = row if overwrite else out[i] + row
    return out


register(OpInfo("scatter", _scatter, _np_scatter, REAL,
                lambda d: [Sample((_v(d, 310)(4, 3), [1, 3], _v(d, 311)(2, 3))),
                           Sample((_v(d, 310)(4, 3), [2, 2, 0], _v(d, 311)(3, 3)), {"overwrite": False}),
                           Sample((_v(d, 310)(4, 3), [0], _v(d, 311)(1, 3)), noncontig=True),
                           Sample((_v(d, 310)(4, 3), [3, 0], _v(d, 311)(2, 3).tolist()), grad=False),
                           Sample((_v(d, 310)(4, 3), [1, 3, 1], _v(d, 311)(3, 3)), grad=False)],  # the last write wins
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.scatter(oar.ones([3, 2]), [5], oar.ones([1, 2])), IndexError,
                                     "scatter"),
                                _err(lambda: oar.scatter(oar.ones([3, 2]), [0], "a"), TypeError, "scatter")]))


def _np_scatter_nd_add(x, index, updates):
    out = x.copy()
    index = np.asarray(index, dtype=np.int64)
    np.add.at(out, tuple(np.moveaxis(index, -1, 0)), updates)
    return out


register(OpInfo("scatter_nd_add", oar.scatter_nd_add, _np_scatter_nd_add, REAL,
                lambda d: [Sample((_v(d, 320)(3, 4), [[1], [1], [2]], _v(d, 321)(3, 4))),
                           Sample((_v(d, 320)(3, 4), [[0, 1], [2, 3], [0, 1]], _v(d, 321)(3,))),
                           Sample((_v(d, 320)(3, 4), [[2, 0]], _v(d, 321)(1,)), noncontig=True),
                           Sample((_v(d, 320)(3, 4), [[0, 0]], [1.0]), grad=False)],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.scatter_nd_add(oar.ones([3]), [[9]], [1.0]), IndexError,
                                     "scatter_nd_add"),
                                _err(lambda: oar.scatter_nd_add(oar.ones([3]), [[True]], [1.0]), TypeError,
                                     "scatter_nd_add")]))


def _put_along_axis_(arr, indices, values, axis, **kw):
    x = arr.clone()  # the sample's input stays as it was
    out = oar.put_along_axis_(x, indices, values, axis, **kw)
    assert out is x
    return out


register(OpInfo("put_along_axis_", _put_along_axis_, _np_put_along_axis, REAL,
                lambda d: [Sample((_v(d, 330)(3, 4), [[0, 3], [1, 2], [2, 0]], _v(d, 331)(3, 2), 1)),
                           Sample((_v(d, 330)(3, 4), [[2, 0, 1, 1]], _v(d, 331)(1, 4), 0), noncontig=True),
                           Sample((_v(d, 330)(3, 4), [[0, 0], [1, 3], [2, 2]], _v(d, 331)(3, 2), 1),
                                  {"reduce": "add", "include_self": False}),
                           Sample((_v(d, 330)(3, 4), [[1], [1], [3]], 2, 1), grad=False)],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.put_along_axis_(oar.ones([3, 4]), [[0, 5]], 1.0, 1), IndexError,
                                     "put_along_axis"),
                                _err(lambda: oar.put_along_axis_(oar.ones([3, 4]), [[0]], 1.0, 1, reduce="sum"),
                                     ValueError, "put_along_axis")]))


def _np_masked_fill(x, mask, value):
    return np.where(mask, np.asarray(value).astype(x.dtype), x)


register(OpInfo("masked_fill", oar.masked_fill, _np_masked_fill, ("bool",) + REAL,
                lambda d: [Sample((_v(d, 340)(3, 4), _distinct((3, 4), 341) > 0, 1)),
                           Sample((_v(d, 340)(3, 4), np.array([True, False, False, True]), 0)),
                           Sample((_v(d, 340)(2, 3, 4), _distinct((2, 3, 4), 342) > 0, 1), noncontig=True),
                           Sample((_v(d, 340)(0, 4), np.zeros((0, 4), bool), 1)),
                           Sample((_v(d, 340)(3, 4), np.array([True, False, True, False]), [1]),
                                  grad=False)],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.masked_fill(oar.ones([3]), oar.ones([3]), 1.0), TypeError,
                                     "masked_fill"),
                                _err(lambda: oar.masked_fill(oar.ones([3]), oar.ones([3]) > 0, "a"), TypeError,
                                     "masked_fill")]))


def _np_masked_select(x, mask):
    return x[np.broadcast_to(mask, x.shape)]


register(OpInfo("masked_select", oar.masked_select, _np_masked_select, ("bool",) + REAL,
                lambda d: [Sample((_v(d, 350)(3, 4), _distinct((3, 4), 351) > 0)),
                           Sample((_v(d, 350)(3, 4), np.array([True, False, False, True]))),
                           Sample((_v(d, 350)(2, 3, 4), _distinct((2, 3, 4), 352) > 0), noncontig=True),
                           Sample((_v(d, 350)(3, 4), np.zeros((3, 4), bool)))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.masked_select(oar.ones([3]), oar.ones([3])), TypeError,
                                     "masked_select"),
                                _err(lambda: oar.masked_select(oar.ones([3]), oar.ones([2]) > 0), ValueError,
                                     "masked_select")]))


def _np_sort(x, axis=-1, descending=False, stable=False):
    return np.take_along_axis(x, _np_argsort(x, axis, descending), axis)


def _sort_values(dtype):
    return [Sample((_distinct((3, 5), 360),)), Sample((_distinct((3, 5), 361),), {"axis": 0}),
            Sample((_distinct((2, 3, 4), 362),), {"descending": True}, noncontig=True),
            Sample((_distinct((6,), 363),), {"axis": -1, "descending": True}),
            Sample((np.zeros((0, 3)),)), Sample((np.array([[3, 1, 3, 1, 2]]),), {"stable": True}, grad=False)]


register(OpInfo("sort", oar.sort, _np_sort, ("int32", "int64") + FLOATS, _sort_values, grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.sort(oar.ones([3, 4]), axis=2), IndexError, "sort"),
                                _err(lambda: oar.sort(oar.ones([3, 4]), axis="a"), TypeError, "sort"),
                                _err(lambda: oar.sort(oar.to_tensor([1 + 1j])), TypeError, "sort")]))
