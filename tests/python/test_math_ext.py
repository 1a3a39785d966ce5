"""Math, statistics and special functions of the paddle namespace: what the op
database cannot express (tuples, in-place forms, histograms, constants, dtype
information, gradients against closed forms)."""
import math

import numpy as np
import pytest

import oar


def _t(v, dtype="float64", grad=False):
    t = oar.to_tensor(np.asarray(v, dtype=np.float64)).astype(dtype)
    t.stop_gradient = not grad
    return t


# ---------------------------------------------------------------- constants and dtype information

def test_constants():
    assert oar.pi == math.pi and oar.e == math.e
    assert oar.inf == float("inf") and math.isnan(oar.nan)
    x = oar.ones([2, 3])
    assert x[oar.newaxis].shape == [1, 2, 3]


# Values from IEEE 754 (binary16/32/64) and bfloat16's layout (8 exponent, 7 mantissa bits).
@pytest.mark.parametrize("dtype,bits,eps,mx,tiny,res", [
    ("float16", 16, 2.0 ** -10, 65504.0, 2.0 ** -14, 1e-3),
    ("bfloat16", 16, 2.0 ** -7, 3.3895313892515355e38, 2.0 ** -126, 1e-2),
    ("float32", 32, 2.0 ** -23, 3.4028234663852886e38, 2.0 ** -126, 1e-6),
    ("float64", 64, 2.0 ** -52, 1.7976931348623157e308, 2.0 ** -1022, 1e-15),
    ("complex64", 32, 2.0 ** -23, 3.4028234663852886e38, 2.0 ** -126, 1e-6),
])
def test_finfo(dtype, bits, eps, mx, tiny, res):
    for d in (dtype, getattr(oar, dtype)):
        f = oar.finfo(d)
        assert (f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution) == \
            (bits, eps, mx, -mx, tiny, tiny, res)
        assert f.dtype == ("float32" if dtype == "complex64" else dtype)


def test_iinfo():
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        i = oar.iinfo(getattr(oar, name))
        ref = np.iinfo(name)
        assert (i.bits, i.min, i.max, i.dtype) == (ref.bits, int(ref.min), int(ref.max), name)
    with pytest.raises(ValueError, match=r"^\[oar.iinfo\]"):
        oar.iinfo(oar.float32)
    with pytest.raises(ValueError, match=r"^\[oar.finfo\]"):
        oar.finfo("int32")
    with pytest.raises(TypeError, match=r"^\[oar.finfo\]"):
        oar.finfo("float128")
    assert oar.finfo(float).dtype == "float32" and oar.iinfo(np.int16).bits == 16


def test_dtype_predicates():
    cases = {"bool": (False, False, False), "uint8": (False, False, True), "int64": (False, False, True),
             "float16": (False, True, False), "bfloat16": (False, True, False), "float64": (False, True, False),
             "complex64": (True, False, False)}
    for name, (cpx, flt, integer) in cases.items():
        x = oar.zeros([2]).astype(name)
        assert (oar.is_complex(x), oar.is_floating_point(x), oar.is_integer(x)) == (cpx, flt, integer), name
        assert (x.is_complex(), x.is_floating_point(), x.is_integer()) == (cpx, flt, integer), name
    with pytest.raises(TypeError, match=r"^\[oar.is_complex\]"):
        oar.is_complex([1.0])
    e = oar.is_empty(oar.zeros([0, 3]))
    assert e.dtype == oar.bool and e.shape == [] and e.item() is True
    assert oar.is_empty(oar.zeros([])).item() is False


# ---------------------------------------------------------------- tuples

def test_frexp_tuple():
    x = np.array([0.0, 1.0, -3.0, 8.0, 0.1, 1e-300, 3e300, -np.inf, np.nan])
    m, e = oar.frexp(_t(x))
    rm, re = np.frexp(x)
    assert m.dtype == oar.float64 and e.dtype == oar.float64
    np.testing.assert_array_equal(m.numpy(), rm)
    np.testing.assert_array_equal(e.numpy(), re.astype(np.float64))
    x32 = np.array([1e-40, 3e38, 0.75, -1.0], dtype=np.float32)  # a float32 subnormal and a large value
    m, e = oar.frexp(oar.to_tensor(x32))
    rm, re = np.frexp(x32)
    np.testing.assert_array_equal(m.numpy(), rm)
    np.testing.assert_array_equal(e.numpy(), re.astype(np.float32))


def test_kthvalue_and_mode_indices():
    x = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 5.0, 4.0]])
    v, i = oar.kthvalue(_t(x), 2)
    assert v.numpy().tolist() == [1.0, 4.0] and i.numpy().tolist() == [3, 3] and i.dtype == oar.int64
    v, i = oar.kthvalue(_t(x), 1, axis=0, keepdim=True)
    assert v.shape == [1, 4] and i.numpy().tolist() == [[1, 0, 0, 0]]
    v, i = oar.mode(_t(x))
    assert v.numpy().tolist() == [1.0, 5.0] and i.numpy().tolist() == [3, 2]
    v, i = oar.mode(oar.to_tensor([1, 2, 2, 1, 3]))  # a tie: the smaller value, its last index
    assert (v.item(), i.item()) == (1, 3)
    v, i = oar.mode(_t(3.0))
    assert v.shape == [] and (v.item(), i.item()) == (3.0, 0)


def test_mode_gradient_reaches_the_chosen_element():
    x = _t([[2.0, 7.0, 2.0, 5.0]], grad=True)
    v, i = oar.mode(x)
    (g,) = oar.grad([v.sum()], [x])
    expected = np.zeros((1, 4))
    expected[0, i.item()] = 1.0
    np.testing.assert_array_equal(g.numpy(), expected)


def test_nanmedian_min_returns_indices():
    x = np.array([[1.0, np.nan, 3.0, 4.0], [np.nan] * 4, [2.0, 5.0, np.nan, 0.0]])
    v, i = oar.nanmedian(_t(x), axis=1, mode="min")
    np.testing.assert_array_equal(v.numpy(), [3.0, np.nan, 2.0])
    assert i.numpy().tolist() == [2, -1, 0]
    # Without an axis only the value.
    assert oar.nanmedian(_t(x), mode="min").item() == 2.0


def test_quantile_shapes():
    x = _t(np.arange(24).reshape(2, 3, 4))
    assert oar.quantile(x, 0.5).shape == []
    assert oar.quantile(x, [0.5]).shape == []  # a one-element list has no q axis, as in Paddle
    assert oar.quantile(x, [0.2, 0.5], axis=1).shape == [2, 2, 4]
    assert oar.quantile(x, [0.2, 0.5], axis=[0, 2], keepdim=True).shape == [2, 1, 3, 1]
    assert oar.quantile(x, oar.to_tensor([0.1, 0.2, 0.9]), axis=-1).shape == [3, 2, 3]


def test_histogramdd_tuple():
    x = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.5, 0.5]])
    w = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    hist, edges = oar.histogramdd(_t(x, "float32"), bins=[3, 2], weights=_t(w, "float32"))
    rh, re = np.histogramdd(x, bins=[3, 2], weights=w)
    assert hist.dtype == oar.float32 and len(edges) == 2
    np.testing.assert_allclose(hist.numpy(), rh)
    for e, r in zip(edges, re):
        np.testing.assert_allclose(e.numpy(), r, rtol=1e-6)
    hist, edges = oar.histogramdd(_t(x), bins=2, ranges=[0.0, 1.0, 0.0, 1.0], density=True)
    rh, _ = np.histogramdd(x, bins=2, range=[(0, 1), (0, 1)], density=True)
    assert hist.dtype == oar.float64
    np.testing.assert_allclose(hist.numpy(), rh)
    edges_in = [_t([0.0, 1.0, 3.0]), _t([0.0, 0.5, 2.0])]
    hist, edges = oar.histogramdd(_t(x), bins=edges_in)
    rh, _ = np.histogramdd(x, bins=[[0.0, 1.0, 3.0], [0.0, 0.5, 2.0]])
    np.testing.assert_allclose(hist.numpy(), rh)
    with pytest.raises(ValueError, match=r"^\[oar.histogramdd\]"):
        oar.histogramdd(_t(x), bins=[2, 2, 2])


# ---------------------------------------------------------------- counting

def test_bincount():
    x = oar.to_tensor([1, 1, 3])
    out = oar.bincount(x)
    assert out.dtype == oar.int64 and out.numpy().tolist() == [0, 2, 0, 1]
    out = oar.bincount(x, weights=_t([0.5, 1.0, 2.0], "float32"), minlength=6)
    assert out.dtype == oar.float32 and out.numpy().tolist() == [0.0, 1.5, 0.0, 2.0, 0.0, 0.0]
    assert oar.bincount(x, weights=oar.to_tensor([5, 1, 2])).dtype == oar.float64
    assert oar.bincount(oar.zeros([0], "int64")).shape == [0]
    with pytest.raises(ValueError, match=r"^\[oar.bincount\]"):
        oar.bincount(oar.to_tensor([-1, 2]))
    with pytest.raises(TypeError, match=r"^\[oar.bincount\]"):
        oar.bincount(oar.to_tensor([1.0]))
    with pytest.raises(ValueError, match=r"^\[oar.bincount\]"):
        oar.bincount(x, weights=oar.ones([2]))


def test_bucketize():
    seq = _t([1.0, 3.0, 5.0], "float32")
    x = _t([[0.0, 1.0, 2.0, 5.0, 6.0]], "float32")
    np.testing.assert_array_equal(oar.bucketize(x, seq).numpy(), np.searchsorted([1, 3, 5], x.numpy()))
    out = oar.bucketize(x, seq, out_int32=True, right=True)
    assert out.dtype == oar.int32
    np.testing.assert_array_equal(out.numpy(), np.searchsorted([1, 3, 5], x.numpy(), side="right"))
    with pytest.raises(ValueError, match=r"^\[oar.bucketize\]"):
        oar.bucketize(x, _t([[1.0, 2.0]]))


def test_histogram():
    rng = np.random.default_rng(0)
    a = rng.normal(size=50)
    out = oar.histogram(_t(a, "float32"), bins=7, min=-1.0, max=1.5)
    assert out.dtype == oar.int64
    np.testing.assert_array_equal(out.numpy(), np.histogram(a.astype(np.float32), bins=7, range=(-1.0, 1.5))[0])
    # min == max: the data's range.
    np.testing.assert_array_equal(oar.histogram(_t(a), bins=5).numpy(), np.histogram(a, bins=5)[0])
    w = rng.random(50)
    out = oar.histogram(_t(a), bins=4, min=-2, max=2, weight=_t(w))
    assert out.dtype == oar.float32
    np.testing.assert_allclose(out.numpy(), np.histogram(a, 4, (-2, 2), weights=w)[0], rtol=1e-6)
    out = oar.histogram(_t(a), bins=4, min=-2, max=2, density=True)
    np.testing.assert_allclose(out.numpy(), np.histogram(a, 4, (-2, 2), density=True)[0], rtol=1e-6)
    # All equal values: a unit-wide range around them, as NumPy.
    np.testing.assert_array_equal(oar.histogram(_t([1.0, 1.0, 1.0]), bins=4).numpy(), [0, 0, 3, 0])
    with pytest.raises(ValueError, match=r"^\[oar.histogram\]"):
        oar.histogram(_t(a), bins=4, min=3, max=1)
    with pytest.raises(ValueError, match=r"^\[oar.histogram\]"):
        oar.histogram(_t(a), bins=0)


def test_histogram_bin_edges():
    out = oar.histogram_bin_edges(_t([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    assert out.dtype == oar.float32
    np.testing.assert_allclose(out.numpy(), np.linspace(0, 3, 5))
    np.testing.assert_allclose(oar.histogram_bin_edges(oar.to_tensor([4, 2, 1]), bins=3).numpy(),
                               np.histogram_bin_edges([4, 2, 1], bins=3))


# ---------------------------------------------------------------- in-place forms

_INPLACE = [
    ("addmm_", lambda x: (x, _t(np.ones((2, 3))), _t(np.ones((3, 2)))), lambda a: a + 3.0, {}),
    ("baddbmm_", lambda x: (x[None], _t(np.ones((1, 2, 3))), _t(np.ones((1, 3, 2)))), lambda a: a + 3.0, {}),
    ("renorm_", lambda x: (x, 2, 0, 1.0), None, {}),
    ("ldexp_", lambda x: (x, oar.to_tensor([[1, 2], [0, -1]])), lambda a: a * np.array([[2.0, 4.0], [1.0, 0.5]]),
     {}),
    ("logit_", lambda x: (x * 0.1,), None, {}),
    ("i0_", lambda x: (x,), np.i0, {}),
    ("gammainc_", lambda x: (x, _t(np.ones((2, 2)))), None, {}),
    ("gammaincc_", lambda x: (x, _t(np.ones((2, 2)))), None, {}),
    ("polygamma_", lambda x: (x, 1), None, {}),
    ("multigammaln_", lambda x: (x, 2), None, {}),
    ("cumsum_", lambda x: (x,), lambda a: np.cumsum(a).reshape(a.shape), {}),
    ("cumprod_", lambda x: (x,), lambda a: np.cumprod(a, axis=1), {"dim": 1}),
    ("div_", lambda x: (x, _t([[2.0, 4.0], [8.0, 2.0]])), lambda a: np.floor(a / [[2.0, 4.0], [8.0, 2.0]]),
     {"rounding_mode": "floor"}),
]


@pytest.mark.parametrize("name,args,ref,kw", _INPLACE, ids=[c[0] for c in _INPLACE])
def test_inplace_writes_into_its_input(name, args, ref, kw):
    base = np.array([[1.5, 2.5], [3.5, 4.5]])
    x = _t(base)
    a = args(x)
    target = a[0]
    expected = getattr(oar, name[:-1])(*[v.clone() if isinstance(v, oar.Tensor) else v for v in a], **kw).numpy()
    out = getattr(oar, name)(*a, **kw)
    assert out is target
    np.testing.assert_allclose(target.numpy(), expected.reshape(target.shape), rtol=1e-12)  # cumsum_ keeps the shape
    if ref is not None:
        np.testing.assert_allclose(expected, ref(base).reshape(expected.shape), rtol=1e-12)


def test_inplace_is_differentiable_through_a_non_leaf():
    x = _t([0.5, 1.0, 2.0], grad=True)
    z = x * 1.0
    oar.i0_(z)
    (g,) = oar.grad([z.sum()], [x])
    # d/dx i0(x) = i1(x); the reference is the integral form of i1.
    t = (np.arange(400) + 0.5) * (2 * np.pi / 400)
    i1 = np.array([np.mean(np.exp(v * np.cos(t)) * np.cos(t)) for v in [0.5, 1.0, 2.0]])
    np.testing.assert_allclose(g.numpy(), i1, rtol=1e-12)
    with pytest.raises(ValueError, match=r"^\[oar.i0_\]"):
        oar.i0_(x)  # a leaf that requires grad


def test_inplace_keeps_dtype():
    with pytest.raises(TypeError, match=r"^\[oar.div_\]"):
        oar.div_(oar.to_tensor([1, 2]), oar.to_tensor([2, 2]))  # an exact quotient is a float
    x = oar.to_tensor([1, 2])
    assert oar.div_(x, oar.to_tensor([2, 2]), rounding_mode="trunc") is x
    assert x.numpy().tolist() == [0, 1]


def test_increment():
    x = oar.to_tensor([1.0])
    assert oar.increment(x) is x and x.item() == 2.0
    y = oar.to_tensor([1])
    oar.increment(y, 2.5)
    assert y.dtype == oar.int64 and y.item() == 3
    with pytest.raises(ValueError, match=r"^\[oar.increment\]"):
        oar.increment(oar.ones([2]))


def test_shift_inplace_and_out():
    x = oar.to_tensor([1, -4], dtype="int16")
    oar.bitwise_left_shift_(x, oar.to_tensor([3, 1], dtype="int16"))
    assert x.numpy().tolist() == [8, -8]
    out = oar.zeros([2], "int16")
    res = oar.bitwise_right_shift(x, oar.to_tensor([1, 1], dtype="int16"), is_arithmetic=False, out=out)
    assert res is out and out.numpy().tolist() == [4, (2 ** 16 - 8) >> 1]


# ---------------------------------------------------------------- gradients against closed forms

def test_gammainc_gradient_in_y():
    a, y = _t([0.5, 2.0, 4.5]), _t([0.7, 3.0, 9.0], grad=True)
    (g,) = oar.grad([oar.gammainc(a, y).sum()], [y])
    av, yv = a.numpy(), y.numpy()
    density = np.exp((av - 1) * np.log(yv) - yv - np.array([math.lgamma(v) for v in av]))
    np.testing.assert_allclose(g.numpy(), density, rtol=1e-9)
    (g,) = oar.grad([oar.gammaincc(a, y).sum()], [y])
    np.testing.assert_allclose(g.numpy(), -density, rtol=1e-9)


def test_polygamma_gradient_is_the_next_order():
    x = _t([0.5, 1.0, 3.0], grad=True)
    (g,) = oar.grad([oar.polygamma(x, 1).sum()], [x])
    # psi''(1) = -2 zeta(3), psi''(1/2) = -14 zeta(3), psi''(3) = psi''(1) + 2 (1 + 1/8)
    z3 = 1.2020569031595942
    np.testing.assert_allclose(g.numpy(), [-14 * z3, -2 * z3, -2 * z3 + 2 * (1 + 1 / 8)], rtol=1e-10)


def test_polygamma_closed_forms():
    # psi'(1) = pi^2 / 6, psi'(1/2) = pi^2 / 2, psi^(3)(1) = pi^4 / 15
    x = _t([1.0, 0.5])
    np.testing.assert_allclose(oar.polygamma(x, 1).numpy(), [math.pi ** 2 / 6, math.pi ** 2 / 2], rtol=1e-13)
    np.testing.assert_allclose(oar.polygamma(_t([1.0]), 3).numpy(), [math.pi ** 4 / 15], rtol=1e-13)


def test_distances_have_finite_gradients_at_zero():
    x = _t([[1.0, 2.0], [3.0, 4.0]], grad=True)
    d = oar.cdist(x, x)
    (g,) = oar.grad([d.sum()], [x])
    assert np.all(np.isfinite(g.numpy()))
    x = _t([[1.0, 2.0], [1.0, 2.0]], grad=True)
    (g,) = oar.grad([oar.pdist(x).sum() + oar.dist(x[0], x[1])], [x])
    np.testing.assert_array_equal(g.numpy(), np.zeros((2, 2)))


def test_special_function_dtypes():
    for name in ("i0", "i0e", "i1", "i1e"):
        assert getattr(oar, name)(oar.to_tensor([1, 2])).dtype == oar.float32
        assert getattr(oar, name)(oar.ones([2], "float16")).dtype == oar.float16
        assert getattr(oar, name)(oar.ones([2], "float64")).dtype == oar.float64
    assert oar.polygamma(oar.to_tensor([1, 2]), 1).dtype == oar.float32
    assert oar.gammainc(oar.ones([2], "float32"), oar.ones([2], "float64")).dtype == oar.float64


def test_bessel_at_infinity():
    x = _t([np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(oar.i0(x).numpy(), [np.inf, np.inf, np.nan])
    np.testing.assert_array_equal(oar.i1(x).numpy(), [np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(oar.i0e(x).numpy(), [0.0, 0.0, np.nan])
    np.testing.assert_array_equal(oar.i1e(x).numpy(), [0.0, 0.0, np.nan])


def test_gammainc_edges():
    p = oar.gammainc(_t([0.0, 2.0, 2.0, 3.0]), _t([1.0, 0.0, np.inf, np.nan]))
    np.testing.assert_array_equal(p.numpy(), [0.0, 0.0, 1.0, np.nan])
    q = oar.gammaincc(_t([0.0, 2.0, 2.0]), _t([1.0, 0.0, np.inf]))
    np.testing.assert_array_equal(q.numpy(), [1.0, 1.0, 0.0])


# ---------------------------------------------------------------- other

def test_softmax_default_dim():
    x = np.random.default_rng(1).normal(size=(2, 3, 4))
    for shape, dim in (((4,), 0), ((3, 4), 1), ((2, 3, 4), 0), ((2, 3, 4, 1), 1)):
        a = x.reshape(-1)[:int(np.prod(shape))].reshape(shape)
        e = np.exp(a - a.max(axis=dim, keepdims=True))
        np.testing.assert_allclose(oar.softmax(_t(a)).numpy(), e / e.sum(axis=dim, keepdims=True), rtol=1e-12)
    assert oar.softmax(_t([1.0, 2.0], "float32"), dtype="float64").dtype == oar.float64


def test_tensor_methods():
    x = _t([[1.0, 2.0], [3.0, 4.0]])
    assert x.trace().item() == 5.0
    assert x.nansum().item() == 10.0
    assert x.logit(eps=0.1).shape == [2, 2]
    assert x.div(x, rounding_mode="trunc").numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    v, i = x.kthvalue(2, axis=0)
    assert v.numpy().tolist() == [3.0, 4.0] and i.numpy().tolist() == [1, 1]
    for name in ("pdist", "vecdot", "positive", "finfo"):
        assert not hasattr(oar.Tensor, name), name


def test_positive():
    x = oar.to_tensor([1, -2])
    assert oar.positive(x).numpy().tolist() == [1, -2]
    with pytest.raises(TypeError, match=r"^\[oar.positive\]"):
        oar.positive(oar.to_tensor([True]))


def test_multiplex_gradient():
    a, b = _t(np.ones((3, 2)), grad=True), _t(np.ones((3, 2)), grad=True)
    out = oar.multiplex([a, b], oar.to_tensor([[1], [0], [1]]))
    ga, gb = oar.grad([out.sum()], [a, b])
    np.testing.assert_array_equal(ga.numpy(), [[0, 0], [1, 1], [0, 0]])
    np.testing.assert_array_equal(gb.numpy(), [[1, 1], [0, 0], [1, 1]])


def test_quantile_gradient_splits_between_neighbours():
    x = _t([4.0, 1.0, 3.0, 2.0], grad=True)
    (g,) = oar.grad([oar.quantile(x, 0.4)], [x])  # position 1.2 between the sorted values 2 and 3
    np.testing.assert_allclose(g.numpy(), [0.0, 0.0, 0.2, 0.8])
