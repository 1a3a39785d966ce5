"""What the op database cannot express for python/oar/_shape_ext.py and _shape_index.py:
functions returning lists, tuples, shapes or Python values, conversions, memory sharing,
in-place identity and autograd, shape-changing in-place forms, Tensor-only methods and
the dtype aliases. References are NumPy or closed forms written here; facts about
Paddle's behaviour (dtype names, defaults) are those of PaddlePaddle 3.3.1.
"""
import numpy as np
import pytest

import oar
from oar import _ir

rng = np.random.default_rng(0)


def T(a, dtype=None, grad=False):
    return oar.to_tensor(np.asarray(a), dtype=dtype, stop_gradient=not grad)


def vals(shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- lists, shapes and Python values

def test_atleast_returns_one_tensor_or_a_list():
    assert oar.atleast_1d(T(1.0)).shape == [1]
    outs = oar.atleast_2d(T(1.0), T([1.0, 2.0]), T(vals((2, 3))))
    assert [t.shape for t in outs] == [[1, 1], [1, 2], [2, 3]]
    assert [t.shape for t in oar.atleast_3d([T(1.0), T([1.0, 2.0])])] == [[1, 1, 1], [1, 2, 1]]
    n = oar.atleast_1d(3)
    assert n.shape == [1] and n.dtype == oar.int64


def test_broadcast_shapes():
    assert oar.broadcast_shape([2, 1, 3], [4, 1]) == list(np.broadcast_shapes((2, 1, 3), (4, 1)))
    assert oar.broadcast_shapes([5, 1], [3], [1, 1, 1]) == list(np.broadcast_shapes((5, 1), (3,), (1, 1, 1)))
    assert oar.broadcast_shapes() == []
    with pytest.raises(ValueError, match=r"^\[oar.broadcast_shape\]"):
        oar.broadcast_shape([2, 3], [4])
    with pytest.raises(TypeError, match=r"^\[oar.broadcast_shapes\]"):
        oar.broadcast_shapes([2.5])


def _np_unique_consecutive(a, axis=None):
    a = a.reshape(-1) if axis is None else np.moveaxis(a, axis, 0)
    flat = a.reshape(a.shape[0], -1)
    change = np.r_[True, np.any(flat[1:] != flat[:-1], axis=1)]
    out = a[change]
    return (out if axis is None else np.moveaxis(out, 0, axis)), np.cumsum(change) - 1, \
        np.diff(np.r_[np.flatnonzero(change), len(change)])


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_unique_consecutive(axis):
    a = rng.integers(0, 2, size=(5, 4))
    a[1] = a[0]
    out, inv, counts = oar.unique_consecutive(T(a), True, True, axis=axis)
    ref = _np_unique_consecutive(a, axis)
    np.testing.assert_array_equal(out.numpy(), ref[0])
    np.testing.assert_array_equal(inv.numpy(), ref[1])
    np.testing.assert_array_equal(counts.numpy(), ref[2])
    assert inv.dtype == oar.int64
    only = oar.unique_consecutive(T([1, 1, 2]), return_counts=True, dtype="int32")
    assert only[1].dtype == oar.int32 and only[1].numpy().tolist() == [2, 1]
    with pytest.raises(TypeError, match=r"^\[oar.unique_consecutive\]"):
        oar.unique_consecutive(T([1]), dtype="float32")


def test_splits_return_views_of_the_parts():
    x = T(vals((4, 6)))
    parts = oar.hsplit(x, [2, 5])
    assert [p.shape for p in parts] == [[4, 2], [4, 3], [4, 1]]
    for p, ref in zip(parts, np.hsplit(x.numpy(), [2, 5])):
        np.testing.assert_array_equal(p.numpy(), ref)
    assert [p.shape for p in oar.tensor_split(oar.arange(5), 3)] == [[2], [2], [1]]  # Paddle: 2, 2, 1
    assert [p.shape for p in x.split_with_sizes([1, 5], 1)] == [[4, 1], [4, 5]]
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.split_with_sizes\]"):
        x.split_with_sizes([1, 1], 1)


def test_tolist_and_check_shape():
    assert oar.tolist(T([[1, 2], [3, 4]])) == [[1, 2], [3, 4]]
    assert oar.check_shape([2, T(3)], "reshape") is None
    assert oar.check_shape(T([2, 3]), "reshape") is None
    with pytest.raises(TypeError, match=r"^\[oar.check_shape\] reshape: shape must be"):
        oar.check_shape(3, "reshape")
    with pytest.raises(TypeError, match=r"^\[oar.check_shape\] reshape: shape\[0\]"):
        oar.check_shape([True], "reshape")
    with pytest.raises(TypeError, match=r"^\[oar.check_shape\] reshape: shape must be a Tensor of dtype"):
        oar.check_shape(T([2.0]), "reshape")


# ---------------------------------------------------------------- conversions and memory

def test_as_tensor_asarray_from_numpy_assign():
    t = T([1.0, 2.0])
    assert oar.as_tensor(t) is t
    assert oar.as_tensor(t, "float64").dtype == oar.float64
    assert oar.as_tensor([1, 2]).dtype == oar.int64 and oar.as_tensor([1.5]).dtype == oar.float32
    assert oar.as_tensor([1.0], requires_grad=True).stop_gradient is False
    c = oar.asarray(t, copy=True)
    assert c is not t and c.numpy().tolist() == [1.0, 2.0]
    assert oar.asarray(t, copy=False) is t
    with pytest.raises(ValueError, match=r"^\[oar.asarray\]"):
        oar.asarray([1.0], copy=False)
    a = np.array([1.5, 2.5])
    f = oar.from_numpy(a)
    a[0] = 9.0
    assert f.dtype == oar.float64 and f.numpy().tolist() == [1.5, 2.5]  # a copy, as in Paddle
    with pytest.raises(TypeError, match=r"^\[oar.from_numpy\]"):
        oar.from_numpy([1.0])
    # Paddle 3.3.1: assign keeps NumPy's float64 for Python floats and gives a number shape [1].
    s = oar.assign(3.0)
    assert s.shape == [1] and s.dtype == oar.float64
    out = oar.zeros([2])
    assert oar.assign(T([3.0, 4.0]), out) is out and out.numpy().tolist() == [3.0, 4.0]
    out2 = oar.zeros([3])
    oar.assign(T([[1.0]]), out2)  # another shape: out takes the new one
    assert out2.shape == [1, 1]


def test_assign_is_differentiable():
    x = T([1.0, 2.0], grad=True)
    (oar.assign(x) * T([3.0, 4.0])).sum().backward()
    assert x.grad.numpy().tolist() == [3.0, 4.0]


def test_view_shares_memory_as_documented():
    x = T(vals((2, 3)))
    v = oar.view(x, [3, 2])
    v[0, 0] = 100.0
    assert x.numpy()[0, 0] == 100.0
    w = x.view_as(oar.ones([6]))
    assert w._storage_ptr() == x._storage_ptr()
    # A dtype view reinterprets the bytes (the last dim scales), into a new tensor.
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(oar.view(T(a), "int32").numpy(), a.view(np.int32))
    np.testing.assert_array_equal(oar.view(T(a), "float16").numpy(), a.view(np.float16))
    np.testing.assert_array_equal(oar.view(T(a.reshape(3, 2)), "float64").numpy(), a.reshape(3, 2).view(np.float64))
    # as_strided copies: writing the result leaves x alone.
    s = oar.as_strided(x, [2], [1])
    s[0] = -5.0
    assert x.numpy()[0, 0] == 100.0


# ---------------------------------------------------------------- in place

INPLACE = [
    (lambda y: y.clip_(0.0, 2.5), lambda a: np.clip(a, 0.0, 2.5)),
    (lambda y: oar.tril_(y), np.tril),
    (lambda y: y.fill_diagonal_(9.0), lambda a: np.where(np.eye(2, dtype=bool), 9.0, a)),
    (lambda y: oar.masked_fill_(y, y > 5, 0.0), lambda a: np.where(a > 5, 0.0, a)),
    (lambda y: y.scale_(3.0, 1.0), lambda a: 3 * a + 1),
    (lambda y: oar.where_(y > 5, y, oar.zeros([2, 2], "float64")), lambda a: np.where(a > 5, a, 0.0)),
    (lambda y: oar.index_put_(y, (T([0]),), T(5.0)), lambda a: np.r_[[[5.0, 5.0]], a[1:]]),
    (lambda y: y.zero_(), np.zeros_like),
    (lambda y: y.fill_(2.0), lambda a: np.full_like(a, 2.0)),
]


@pytest.mark.parametrize("k", range(len(INPLACE)))
def test_in_place_writes_the_tensor_and_autograd_sees_it(k):
    op, ref = INPLACE[k]
    a = np.array([[-1.0, 2.0], [3.0, -4.0]])
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = T(a, grad=True)
    y = x * x
    assert op(y) is y
    expected = ref(a * a)
    np.testing.assert_allclose(y.numpy(), expected)
    (y * T(w)).sum().backward()
    # d/dx of sum(w * f(x^2)) by central differences of the reference
    eps, g = 1e-6, np.zeros_like(a)
    for i in np.ndindex(*a.shape):
        p, m = a.copy(), a.copy()
        p[i] += eps
        m[i] -= eps
        g[i] = (np.sum(w * ref(p * p)) - np.sum(w * ref(m * m))) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), g, atol=1e-5)


def test_in_place_refuses_a_leaf_that_requires_grad():
    x = T([1.0, 2.0], grad=True)
    for fn, name in [(lambda: x.fill_(1.0), "oar.Tensor.fill_"), (lambda: oar.tril_(x), "oar.tril_"),
                     (lambda: oar.reshape_(x, [2, 1]), "oar.reshape_")]:
        with pytest.raises(ValueError, match=rf"^\[{name}\] a leaf Tensor that requires grad"):
            fn()
    with oar.no_grad():
        x.fill_(3.0)
    assert x.numpy().tolist() == [3.0, 3.0]


SHAPE_INPLACE = [
    (lambda x: oar.reshape_(x, [3, 2]), lambda a: a.reshape(3, 2)),
    (lambda x: x.reshape_([-1]), lambda a: a.reshape(-1)),
    (lambda x: oar.flatten_(x), lambda a: a.reshape(-1)),
    (lambda x: oar.unsqueeze_(x, [0, 3]), lambda a: a[None, :, :, None]),
    (lambda x: oar.squeeze_(oar.unsqueeze_(x, 0)), lambda a: a),
    (lambda x: oar.transpose_(x, [1, 0]), lambda a: a.T),
    (lambda x: x.t_(), lambda a: a.T),
    (lambda x: oar.cast_(x, "int32"), lambda a: a.astype(np.int32)),
]


@pytest.mark.parametrize("k", range(len(SHAPE_INPLACE)))
def test_shape_changing_in_place(k):
    op, ref = SHAPE_INPLACE[k]
    a = np.arange(6, dtype=np.float32).reshape(2, 3) + 0.5
    x = T(a)
    ptr = x._storage_ptr()
    assert op(x) is x
    expected = ref(a)
    assert x.shape == list(expected.shape) and x.numpy().dtype == expected.dtype
    np.testing.assert_array_equal(x.numpy(), expected)
    if x.dtype == oar.float32:  # a view: the storage is x's own
        assert x._storage_ptr() == ptr


def test_shape_changing_in_place_limits():
    y = T([1.0, 2.0], grad=True) * 2
    with pytest.raises(NotImplementedError, match=r"^\[oar.reshape_\] cannot change in place"):
        oar.reshape_(y, [2, 1])
    with pytest.raises(NotImplementedError, match=r"^\[oar.squeeze_\]"):
        y.squeeze_()
    with pytest.raises(ValueError, match=r"^\[oar.t_\]"):
        oar.t_(oar.ones([1, 2, 3]))

    def f(t):
        oar.unsqueeze_(t, 0)
        return t

    with pytest.raises(NotImplementedError, match=r"^\[oar.unsqueeze_\] a graph being traced"):
        _ir.trace(f, [oar.ones([2])])


def test_value_dependent_ops_trace_with_their_values_as_inputs():
    # masked_scatter, take and index_fill are ops over their index/mask tensors, so a traced
    # program gives right answers for other masks and indices.
    prog, _ = _ir.trace(lambda x, m, v: oar.masked_scatter(x, m, v),
                        [oar.zeros([4]), T([True, False, False, False]), T([1.0, 2.0, 3.0, 4.0], "float32")])
    got = prog.run(oar.zeros([4]), T([False, True, False, True]), T([5.0, 6.0, 7.0, 8.0], "float32"))
    assert got.numpy().tolist() == [0.0, 5.0, 0.0, 6.0]
    prog, _ = _ir.trace(lambda x, i: oar.take(x, i), [T([1.0, 2.0, 3.0], "float32"), T([0])])
    assert prog.run(T([1.0, 2.0, 3.0], "float32"), T([-1])).numpy().tolist() == [3.0]
    prog, _ = _ir.trace(lambda x, i: oar.index_fill(x, i, 0, 0.0), [oar.ones([3]), T([0])])
    assert prog.run(oar.ones([3]), T([2])).numpy().tolist() == [1.0, 1.0, 0.0]


# ---------------------------------------------------------------- Tensor-only methods

# PaddlePaddle 3.3.1's Tensor conversion methods and the dtypes they give.
CONVERSIONS = {"bool": "bool", "byte": "uint8", "char": "int8", "short": "int16", "int": "int32", "long": "int64",
               "half": "float16", "float": "float32", "double": "float64", "bfloat16": "bfloat16",
               "float16": "float16", "float32": "float32", "float64": "float64", "int8": "int8", "int16": "int16",
               "int32": "int32", "int64": "int64", "uint8": "uint8", "complex64": "complex64",
               "complex128": "complex128"}


@pytest.mark.parametrize("method", sorted(CONVERSIONS))
def test_dtype_conversion_methods(method):
    x = T([0.0, 1.5, 2.0], "float32")
    out = getattr(x, method)()
    assert out.dtype == getattr(oar, CONVERSIONS[method])
    # The values are exact in every target dtype (bfloat16 compared through float32).
    target = np.float32 if method == "bfloat16" else CONVERSIONS[method]
    expected = np.array([0.0, 1.5, 2.0], np.float32).astype(target)
    np.testing.assert_array_equal(out.numpy().astype(expected.dtype), expected)


def test_tensor_metadata_methods():
    x = oar.ones([2, 3], "int16")
    assert x.ndimension() == 2 and x.itemsize == 2 and x.element_size() == 2
    assert x.is_same_shape(oar.zeros([2, 3])) and not x.is_same_shape(oar.zeros([3, 2]))
    assert x.type == "DENSE_TENSOR"
    assert x.type_as(T([1.0], "float64")).dtype == oar.float64
    assert x.requires_grad_() is x and x.stop_gradient is False
    x.requires_grad_(False)
    assert x.stop_gradient is True


def test_new_tensor_methods():
    x = T([1.0], "float64")
    z = x.new_zeros(2, 3)
    assert z.shape == [2, 3] and z.dtype == oar.float64 and not z.numpy().any()
    assert x.new_ones([2], dtype="int32").numpy().tolist() == [1, 1]
    assert x.new_full([2], 7).numpy().tolist() == [7.0, 7.0]
    assert x.new_full([1], T(2.5)).numpy().tolist() == [2.5]
    assert x.new_empty((2,)).shape == [2]
    assert x.new_ones([1], requires_grad=True).stop_gradient is False


def test_tensor_repeat_stack_concat_slice_methods():
    a = vals((2, 3))
    x = T(a)
    np.testing.assert_array_equal(x.repeat(2, 1).numpy(), np.tile(a, (2, 1)))
    np.testing.assert_array_equal(x.repeat(2).numpy(), np.tile(a, 2))  # fewer repeats: the last dims
    np.testing.assert_array_equal(x.repeat(T([1, 2])).numpy(), np.tile(a, (1, 2)))
    assert oar.Tensor.stack([x, x], axis=1).shape == [2, 2, 3]
    with pytest.raises(TypeError, match=r"^\[oar.stack\]"):
        x.stack()  # Paddle's Tensor.stack also wants a list as its first argument
    with pytest.raises(TypeError, match=r"^\[oar.concat\]"):
        x.concat()
    np.testing.assert_array_equal(x.slice([1], [1], [3]).numpy(), a[:, 1:3])
    np.testing.assert_array_equal(x.strided_slice([1], [0], [3], [2]).numpy(), a[:, 0:3:2])
    assert x.add_n() is x
    np.testing.assert_allclose(x.scale(2.0, 1.0).numpy(), 2 * a + 1)
    np.testing.assert_allclose(x.clamp(-0.5, 0.5).numpy(), np.clip(a, -0.5, 0.5))
    y = T(a)
    assert y.clamp_(max=0.0) is y and (y.numpy() <= 0).all()
    assert x.permute(1, 0).shape == [3, 2] and oar.permute(x, dims=[1, 0]).shape == [3, 2]


def test_paddle_specific_semantics():
    # paddle.range includes the end and gives the default float dtype.
    r = oar.range(3)
    assert r.numpy().tolist() == [0.0, 1.0, 2.0, 3.0] and r.dtype == oar.float32
    # swapaxes also takes a whole permutation.
    assert oar.swapaxes(oar.ones([2, 3, 4]), [0, 2, 1]).shape == [2, 4, 3]
    # as_strided's offset counts bytes.
    x = oar.arange(6).astype("float32")
    assert oar.as_strided(x, [2], [1], 4).numpy().tolist() == [1.0, 2.0]
    # fill_diagonal_ on a tall matrix wraps only when asked.
    assert oar.zeros([5, 2]).fill_diagonal_(1.0, wrap=True).numpy().sum() == 4.0
    assert oar.zeros([5, 2]).fill_diagonal_(1.0).numpy().sum() == 2.0


# ---------------------------------------------------------------- dtype aliases

def test_dtype_aliases():
    # PaddlePaddle 3.3.1: float, double, half, cfloat, cdouble, long, int, short.
    assert (oar.float, oar.double, oar.half, oar.cfloat, oar.cdouble) == \
        (oar.float32, oar.float64, oar.float16, oar.complex64, oar.complex128)
    assert (oar.long, oar.int, oar.short) == (oar.int64, oar.int32, oar.int16)
    assert oar.ones([1], dtype=oar.double).dtype == oar.float64
    for name in ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"):
        assert not hasattr(oar, name)  # no such oar dtype
