"""Op-database entries for the samplers of oar._random, on the parameter values where
their distribution is a single point (p in {0, 1}, std 0, a one-integer range), so
that the harness can check values, dtypes, zero-size and non-contiguous inputs and
error messages. Their distributions are checked in test_random_ext.py."""
import numpy as np

import oar
from opdb import FLOATS, ErrorInput, OpInfo, Sample, register

DT = ("float32", "float64")


def _rng():
    return np.random.default_rng(31)


def _shapes():
    return [(3, 4), (5,), (), (0, 3)]


def _point_p(shape):
    return (_rng().random(shape) > 0.5).astype(np.float64)


register(OpInfo(
    "bernoulli_", lambda x, p: x.bernoulli_(p), lambda x, p: np.broadcast_to(p, x.shape).astype(np.float64),
    FLOATS, lambda dtype: [Sample((np.zeros(s), _point_p(s))) for s in _shapes()] +
    [Sample((np.zeros((3, 4)), _point_p((3, 4))), noncontig=True),
     Sample((np.zeros((2, 3)), _point_p((3,))))],
    errors=lambda: [ErrorInput(lambda: oar.zeros([2]).bernoulli_(1.5), ValueError, "[oar.bernoulli_]"),
                    ErrorInput(lambda: oar.bernoulli_([0.0], 0.5), TypeError, "[oar.bernoulli_]")]))


register(OpInfo(
    "geometric_", lambda x: x.geometric_(1.0), lambda x: np.ones_like(x), FLOATS,
    lambda dtype: [Sample((np.zeros(s),)) for s in _shapes()] + [Sample((np.zeros((3, 4)),), noncontig=True)],
    errors=lambda: [ErrorInput(lambda: oar.zeros([2]).geometric_(0.0), ValueError, "[oar.geometric_]"),
                    ErrorInput(lambda: oar.zeros([2], dtype="int32").geometric_(0.5), TypeError,
                               "[oar.geometric_]")]))


register(OpInfo(
    "log_normal_", lambda x, mean: x.log_normal_(mean, 0.0), lambda x, mean: np.full(x.shape, np.exp(mean)), FLOATS,
    lambda dtype: [Sample((np.zeros(s), 0.5)) for s in _shapes()] + [Sample((np.zeros((3, 4)), -1.0), noncontig=True)],
    errors=lambda: [ErrorInput(lambda: oar.zeros([2]).log_normal_(0.0, -1.0), ValueError, "[oar.log_normal_]")]))


register(OpInfo(
    "random_", lambda x, lo: x.random_(lo, lo + 1), lambda x, lo: np.full(x.shape, lo), DT + ("int32", "int64"),
    lambda dtype: [Sample((np.zeros(s), 7)) for s in _shapes()] + [Sample((np.zeros((3, 4)), -2), noncontig=True)],
    errors=lambda: [ErrorInput(lambda: oar.zeros([2], dtype="int8").random_(0, 1000), ValueError,
                               "[oar.Tensor.random_]"),
                    ErrorInput(lambda: oar.zeros([2]).random_(1.5), TypeError, "[oar.Tensor.random_]")]))


def _binomial_samples(dtype):
    r = _rng()
    return [Sample((r.integers(0, 9, (3, 4)).astype(np.float64), _point_p((3, 4))), check_dtype=True),
            Sample((r.integers(0, 9, (2, 1)).astype(np.float64), _point_p((3,)))),
            Sample((np.zeros((0, 2)), np.zeros((0, 2)))),
            Sample((r.integers(0, 9, (3, 4)).astype(np.float64), _point_p((3, 4))), noncontig=True)]


register(OpInfo(
    "binomial", oar.binomial, lambda n, p: np.broadcast_to(n * p, np.broadcast_shapes(n.shape, p.shape)).astype(
        np.int64), DT, _binomial_samples, out_dtype=lambda d: "int64",
    errors=lambda: [ErrorInput(lambda: oar.binomial(oar.to_tensor([1.5]), oar.to_tensor([0.5])), ValueError,
                               "[oar.binomial]"),
                    ErrorInput(lambda: oar.binomial([2], oar.to_tensor([0.5])), TypeError, "[oar.binomial]")]))


register(OpInfo(
    "poisson", oar.poisson, lambda x: np.zeros_like(x), DT,
    lambda dtype: [Sample((np.zeros(s),)) for s in _shapes()] + [Sample((np.zeros((3, 4)),), noncontig=True)],
    errors=lambda: [ErrorInput(lambda: oar.poisson(oar.to_tensor([-0.5])), ValueError, "[oar.poisson]"),
                    ErrorInput(lambda: oar.poisson(oar.to_tensor([1])), TypeError, "[oar.poisson]")]))
