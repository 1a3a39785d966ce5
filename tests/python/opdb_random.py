"""Op-database entries for the samplers of oar._random, on the parameter values where
their distribution is a single point (p in {0, 1}, std 0, a one-integer range), so
that the harness can check values, dtypes, zero-size and non-contiguous inputs and
error messages. Their distributions are checked in test_random_ext.py. The declared
draws (src/ops/random.toml) follow: their supports and moments."""
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


# ---------------------------------------------------------------- the declared draws (src/ops/random.toml)
#
# Each entry's op draws and returns, with the draw's shape and dtype, 1 where the
# value lies in the distribution's support (0 outside, NaN for a value that is not
# finite): the harness then checks shapes, dtypes and supports for every shape
# form. A sample with `moments` instead returns the draw's [mean, variance],
# compared with the distribution's within the entry's tolerance.

MOMENT_TOL = {d: (0.05, 0.05) for d in FLOATS}  # 40000 draws: about 7 standard errors
N = 40000


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.{name}]")


def _dims(shape):
    if isinstance(shape, oar.Tensor):
        return [int(s) for s in shape.numpy().reshape(-1)]
    return [int(shape)] if np.ndim(shape) == 0 else [int(s) for s in shape]


def _in_support(x, inside, moments):
    if moments is not None:
        v = x.astype("float64").numpy()
        return oar.to_tensor([v.mean(), v.var()], dtype="float64").astype(x.dtype)
    return (x - x) + inside(x).astype(x.dtype)


def _ones_or_moments(dims, moments):
    return np.array(moments, dtype=np.float64) if moments is not None else np.ones(dims)


def _shape_samples(moments):
    """Each shape form: a list, a tuple, a bare int, NumPy ints, an integer Tensor, empty and zero-size
    shapes; then a large draw whose moments are checked."""
    return [Sample(([2, 3],)), Sample(((4, 1),)), Sample((3,)), Sample(([np.int64(2), np.int32(2)],)),
            Sample((oar.to_tensor([2, 2]),)), Sample(([],)), Sample(([0, 5],)),
            Sample(([N],), {"moments": moments})]


def _shape_entry(name, inside, moments):
    fn = getattr(oar, name)
    register(OpInfo(
        name, lambda shape, dtype, moments=None, **kw: _in_support(fn(shape, dtype=dtype, **kw), inside, moments),
        lambda shape, dtype, moments=None, **kw: _ones_or_moments(_dims(shape), moments), FLOATS,
        lambda d: _shape_samples(moments), creation=True, tol=MOMENT_TOL,
        errors=lambda: [_err(lambda: fn([2, -1]), ValueError, name), _err(lambda: fn(-3), ValueError, name),
                        _err(lambda: fn("3"), TypeError, name), _err(lambda: fn([2.0]), TypeError, name),
                        _err(lambda: fn([2], dtype="int32"), TypeError, name),
                        _err(lambda: fn([2], dtype="float17"), TypeError, name)]))


_shape_entry("rand", lambda x: (x >= 0) & (x < 1), (0.5, 1 / 12))
_shape_entry("randn", oar.isfinite, (0.0, 1.0))
_shape_entry("standard_normal", oar.isfinite, (0.0, 1.0))


def _uniform(shape, dtype, moments=None, **kw):
    lo, hi = kw.get("min", -1.0), kw.get("max", 1.0)
    # [lo, hi); the single point lo when they are equal
    return _in_support(oar.uniform(shape, dtype=dtype, **kw), lambda x: (x >= lo) & ((x < hi) | (x == lo)), moments)


register(OpInfo(
    "uniform", _uniform, lambda shape, dtype, moments=None, **kw: _ones_or_moments(_dims(shape), moments), FLOATS,
    lambda d: _shape_samples((0.0, 1 / 3)) + [
        Sample(([2, 3],), {"min": 2.0, "max": 3.0}), Sample((4,), {"min": -1.5, "max": -1.5}),
        Sample(([3],), {"min": oar.to_tensor(0.0), "max": oar.to_tensor([0.5])}),
        Sample(([5],), {"seed": 77}), Sample(([N],), {"min": 2.0, "max": 4.0, "moments": (3.0, 1 / 3)})],
    creation=True, tol=MOMENT_TOL,
    errors=lambda: [_err(lambda: oar.uniform([2], min=1.0, max=0.0), ValueError, "uniform"),
                    _err(lambda: oar.uniform([2, -1]), ValueError, "uniform"),
                    _err(lambda: oar.uniform([2], dtype="int64"), TypeError, "uniform"),
                    _err(lambda: oar.uniform([2], min="a"), TypeError, "uniform"),
                    _err(lambda: oar.uniform([2], seed="a"), TypeError, "uniform")]))


def _randint(*args, dtype, **kw):
    low, high = (0, args[0]) if len(args) < 2 or args[1] is None else args[:2]
    return _in_support(oar.randint(*args, dtype=dtype, **kw), lambda x: (x >= low) & (x < high), None)


def _randint_ref(low=0, high=None, shape=(1,), dtype=None):
    return np.ones(_dims(shape), np.int64)


register(OpInfo(
    "randint", _randint, _randint_ref, ("int32", "int64"),
    lambda d: [Sample((0, 5, [3, 4])), Sample((5,)), Sample((-3, -2, (2,))), Sample((2, 9, 4)),
               Sample((np.int64(1), oar.to_tensor(6), oar.to_tensor([3, 2]))), Sample((0, 3, [0, 2])),
               Sample((-(2 ** 31), 2 ** 31 - 1, [50]))] +
    ([Sample((-(2 ** 62), 2 ** 62, [50]))] if d == "int64" else []),
    creation=True,
    errors=lambda: [_err(lambda: oar.randint(5, 5, [2]), ValueError, "randint"),
                    _err(lambda: oar.randint(0, 5, [-2]), ValueError, "randint"),
                    _err(lambda: oar.randint(0, 3, [2], dtype="float32"), TypeError, "randint"),
                    _err(lambda: oar.randint(0, 2 ** 40, [2], dtype="int32"), ValueError, "randint"),
                    _err(lambda: oar.randint(0, 2 ** 70, [2]), ValueError, "randint"),
                    _err(lambda: oar.randint("a", 3), TypeError, "randint")]))


register(OpInfo(
    "randint_like", oar.randint_like,
    lambda x, low, high=None, dtype=None: np.full(x.shape, 0 if high is None else low),
    ("float32", "float64", "int32", "int64"),
    lambda d: [Sample((np.zeros((2, 3)), 3, 4)), Sample((np.zeros(()), -2, -1)), Sample((np.zeros((0, 4)), 0, 1)),
               Sample((np.zeros((3,)), 1)), Sample((np.zeros((3, 4)), 7, 8), noncontig=True)],
    creation=True,
    errors=lambda: [_err(lambda: oar.randint_like(oar.zeros([2]), 4, 4), ValueError, "randint_like"),
                    _err(lambda: oar.randint_like([1, 2], 3), TypeError, "randint_like")]))


def _like_entry(name, inside, moments):
    fn = getattr(oar, name)
    register(OpInfo(
        name, lambda x, dtype, moments=None: _in_support(fn(x, dtype=dtype), inside, moments),
        lambda x, dtype, moments=None: _ones_or_moments(x.shape, moments), FLOATS,
        lambda d: [Sample((np.zeros((2, 3)),)), Sample((np.zeros(()),)), Sample((np.zeros((0, 4)),)),
                   Sample((np.zeros((3, 4)),), noncontig=True), Sample((np.zeros(N),), {"moments": moments})],
        creation=True, tol=MOMENT_TOL,
        errors=lambda: [_err(lambda: fn([1.0, 2.0]), TypeError, name),
                        _err(lambda: fn(oar.zeros([2], dtype="int32")), TypeError, name),
                        _err(lambda: fn(oar.zeros([2]), dtype="int64"), TypeError, name)]))


_like_entry("rand_like", lambda x: (x >= 0) & (x < 1), (0.5, 1 / 12))
_like_entry("randn_like", oar.isfinite, (0.0, 1.0))


register(OpInfo(
    "bernoulli", oar.bernoulli, lambda x: x, FLOATS,
    lambda dtype: [Sample((np.asarray(_point_p(s)),)) for s in _shapes()] +
    [Sample((_point_p((3, 4)),), noncontig=True)],
    errors=lambda: [_err(lambda: oar.bernoulli(oar.to_tensor([0.5, 1.5])), ValueError, "bernoulli"),
                    _err(lambda: oar.bernoulli(oar.to_tensor([float("nan")])), ValueError, "bernoulli"),
                    _err(lambda: oar.bernoulli([0.5]), TypeError, "bernoulli")]))


def _one_hot(shape):
    """Rows holding one 1 (the only category a draw can pick) at random places."""
    x = np.zeros(shape)
    np.put_along_axis(x, _rng().integers(0, shape[-1], shape[:-1] + (1,)), 1.0, -1)
    return x


register(OpInfo(
    "multinomial", oar.multinomial,
    lambda x, num_samples=1, replacement=False: np.repeat(np.argmax(x, -1)[..., None], num_samples, -1), FLOATS,
    lambda dtype: [Sample((_one_hot((3, 4)), 5, True)), Sample((_one_hot((4,)),)),
                   Sample((_one_hot((2, 3)),), {"num_samples": np.int64(2), "replacement": 1}),
                   Sample((_one_hot((5, 3)), 1, False)), Sample((_one_hot((4, 3)), 2, True), noncontig=True)],
    out_dtype=lambda d: "int64",
    errors=lambda: [_err(lambda: oar.multinomial(oar.to_tensor([0.5, 0.5]), 3), ValueError, "multinomial"),
                    _err(lambda: oar.multinomial(oar.to_tensor([1.0, -1.0]), 1), ValueError, "multinomial"),
                    _err(lambda: oar.multinomial(oar.zeros([2, 2, 2]), 1), ValueError, "multinomial"),
                    _err(lambda: oar.multinomial(oar.ones([2]), "a"), TypeError, "multinomial"),
                    _err(lambda: oar.multinomial([0.5, 0.5]), TypeError, "multinomial")]))


register(OpInfo(
    # sorted, a permutation of 0 .. n-1 is arange(n)
    "randperm", lambda n, dtype: oar.sort(oar.randperm(n, dtype=dtype)), lambda n, dtype: np.arange(int(n)),
    ("int32", "int64", "float32", "float64"),
    lambda d: [Sample((0,)), Sample((1,)), Sample((7,)), Sample((np.int64(5),)), Sample((oar.to_tensor(4),)),
               Sample((1000,))],
    creation=True,
    errors=lambda: [_err(lambda: oar.randperm(-1), ValueError, "randperm"),
                    _err(lambda: oar.randperm("3"), TypeError, "randperm"),
                    _err(lambda: oar.randperm(3, dtype="float17"), TypeError, "randperm")]))
