"""Op-database entries for the Tensor methods of python/oar/_tensor_ext.py that compute
values: mT, lerp_, argwhere, cfloat / cdouble, rank, __pos__ and the shift operators (resize_,
which changes the shape in place and so cannot be traced, is tested in test_tensor_ext.py).

References are NumPy, written here; gradients are checked in float64 against finite
differences by test_opdb.py (in-place forms write into a non-leaf copy of the input).
"""
import numpy as np

import oar
from opdb import ALL, FLOATS, INTS, NUMERIC, ErrorInput, OpInfo, Sample, register


def _v(shape, seed=0, lo=-3.0, hi=3.0):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape)


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.{name}]")


def _entry(name, op, ref, dtypes, samples, grad=False, errors=None, **kw):
    register(OpInfo(name, op, ref, dtypes, samples, grad=grad, errors=errors or (lambda: []), **kw))


_entry("Tensor.mT", lambda x: x.mT, lambda x: np.swapaxes(x, -1, -2), ALL,
       lambda d: [Sample((_v((2, 3)),)), Sample((_v((2, 3, 4)),)), Sample((_v((0, 2)),)),
                  Sample((_v((3, 2, 2)),), noncontig=True)],
       grad=True, errors=lambda: [_err(lambda: oar.ones([3]).mT, ValueError, "Tensor.mT")])


def _lerp_ref(x, y, w):
    return x + w * (y - x)


_entry("Tensor.lerp_", lambda x, y, w: (x + 0).lerp_(y, w), _lerp_ref, FLOATS,
       lambda d: [Sample((_v((2, 3)), _v((2, 3), 1), 0.25)), Sample((_v((2, 3)), _v((3,), 2), 0.75)),
                  Sample((_v((2, 3)), _v((2, 3), 3), _v((2, 3), 4, 0.0, 1.0))),
                  Sample((_v((3, 2)), _v((3, 2), 5), 0.5), noncontig=True)],
       grad=True,
       errors=lambda: [_err(lambda: oar.ones([3]).lerp_(oar.ones([2, 3]), 0.5), ValueError, "Tensor.lerp_"),
                       # the check is oar.lerp's, and the error boundary keeps its name
                       _err(lambda: oar.ones([3]).lerp_(oar.ones([3]), "half"), TypeError, "lerp"),
                       _err(lambda: oar.to_tensor([1.0], stop_gradient=False).lerp_(oar.ones([1]), 0.5),
                            ValueError, "Tensor.lerp_")])


def _argwhere_ref(x):
    return np.argwhere(x).astype(np.int64)


def _sparse(shape, seed):
    v = _v(shape, seed)
    return np.where(np.abs(v) > 1.5, v, 0.0)


_entry("argwhere", oar.argwhere, _argwhere_ref, ALL,
       lambda d: [Sample((_sparse((3, 4), 0),)), Sample((_sparse((5,), 1),)), Sample((np.zeros((2, 3)),)),
                  Sample((_sparse((2, 2, 3), 2),)), Sample((_sparse((4, 3), 3),), noncontig=True)],
       out_dtype=lambda d: "int64",
       errors=lambda: [_err(lambda: oar.argwhere(oar.to_tensor(3.0)), ValueError, "argwhere"),
                       _err(lambda: oar.argwhere([1, 0]), TypeError, "argwhere")])

_entry("Tensor.cfloat", lambda x: x.cfloat(), lambda x: x.astype(np.complex64), ("float32", "float64", "int64"),
       lambda d: [Sample((_v((2, 3)),)), Sample((_v(()),))], out_dtype=lambda d: "complex64")
_entry("Tensor.cdouble", lambda x: x.cdouble(), lambda x: x.astype(np.complex128), ("float32", "int32", "float64"),
       lambda d: [Sample((_v((2, 3)),)), Sample((_v((0, 2)),))], out_dtype=lambda d: "complex128")


_entry("Tensor.rank", lambda x: x.rank(), lambda x: np.asarray(x.ndim, dtype=np.int32), ALL,
       lambda d: [Sample((_v(()),)), Sample((_v((2, 3, 1)),))], out_dtype=lambda d: "int32")

_entry("Tensor.__pos__", lambda x: +x, lambda x: x, NUMERIC,
       lambda d: [Sample((_v((2, 3)),)), Sample((_v((3, 2)),), noncontig=True)], grad=True)


def _ints(shape, seed, lo, hi):
    return np.random.default_rng(seed).integers(lo, hi, size=shape)


_entry("Tensor.__lshift__", lambda x, y: x << y, lambda x, y: np.left_shift(x, y), ("int32", "int64"),
       lambda d: [Sample((_ints((2, 3), 0, -50, 50), _ints((2, 3), 1, 0, 8))),
                  Sample((_ints((4,), 2, 0, 100), 2))])
_entry("Tensor.__rshift__", lambda x, y: x >> y, lambda x, y: np.right_shift(x, y), INTS,
       lambda d: [Sample((_ints((2, 3), 3, 0, 100), _ints((2, 3), 4, 0, 6))),
                  Sample((_ints((4,), 5, 0, 100), 1))])
_entry("Tensor.__rlshift__", lambda x, y: y << x, lambda x, y: np.left_shift(y, x), ("int32", "int64"),
       lambda d: [Sample((_ints((2, 3), 6, 0, 8), 3))])
_entry("Tensor.__rrshift__", lambda x, y: y >> x, lambda x, y: np.right_shift(y, x), ("int32", "int64"),
       lambda d: [Sample((_ints((2, 3), 7, 0, 6), 100))])
