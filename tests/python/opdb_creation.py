"""Op-database entries for the declared creation functions (src/ops/creation.toml)
that tests/python/opdb.py does not cover: empty and the *_like functions. empty
and empty_like are zero-filled, so their values are checked too."""
import numpy as np

import oar
from opdb import ALL, REAL, ErrorInput, OpInfo, Sample, np_dtype, register


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.{name}]")


def _dims(shape):
    return [int(shape)] if np.ndim(shape) == 0 else [int(s) for s in shape]


register(OpInfo(
    "empty", oar.empty, lambda shape, dtype: np.zeros(_dims(shape), np_dtype(dtype)), ALL,
    # each shape form: a list, a tuple, a bare int, NumPy ints, empty and zero-size shapes
    lambda d: [Sample(([2, 3],)), Sample(((4, 1),)), Sample((3,)), Sample(([np.int64(2), np.int32(2)],)),
               Sample(([],)), Sample(([0, 5],))],
    creation=True,
    errors=lambda: [_err(lambda: oar.empty([2, -1]), ValueError, "empty"),
                    _err(lambda: oar.empty(-3), ValueError, "empty"),
                    _err(lambda: oar.empty("3"), TypeError, "empty"),
                    _err(lambda: oar.empty([2.0]), TypeError, "empty"),
                    _err(lambda: oar.empty([2], dtype="float17"), TypeError, "empty")]))


def _like(name, value):
    register(OpInfo(
        name, getattr(oar, name), lambda x, dtype: np.full(x.shape, value, np_dtype(dtype)), ("bool",) + REAL,
        lambda d: [Sample((np.ones((2, 3)),)), Sample((np.ones(()),)), Sample((np.ones((0, 4)),)),
                   Sample((np.ones((3, 4)),), noncontig=True)],
        creation=True,
        errors=lambda: [_err(lambda: getattr(oar, name)([1, 2]), TypeError, name),
                        _err(lambda: getattr(oar, name)(oar.ones([2]), dtype="float17"), TypeError, name)]))


_like("zeros_like", 0)
_like("ones_like", 1)
_like("empty_like", 0)
