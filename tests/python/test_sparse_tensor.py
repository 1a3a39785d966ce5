"""oar.sparse tensors: construction and its checks, conversions, coalesce, elementwise and arithmetic
functions, against dense NumPy / scipy.sparse references."""
import numpy as np
import pytest
import scipy.sparse as sp

import oar
from test_sparse_util import TOL, check_grad, make, rand_dense, weights, with_values

DTYPES = ["float32", "float64"]
LAYOUTS = ["coo", "csr"]


# ---- construction ------------------------------------------------------------------------------------------

def test_coo_construction_and_accessors():
    ind = [[0, 1, 2, 2], [3, 0, 1, 3]]
    x = oar.sparse.sparse_coo_tensor(ind, [1.0, 2.0, 3.0, 4.0], [3, 4])
    ref = sp.coo_matrix(([1.0, 2.0, 3.0, 4.0], ind), shape=(3, 4)).toarray()
    np.testing.assert_array_equal(x.to_dense().numpy(), ref)
    assert x.shape == [3, 4] and x.ndim == 2 and x.nnz() == 4 and x.dtype == oar.float32
    assert x.is_sparse() and x.is_sparse_coo() and not x.is_sparse_csr()
    assert x.sparse_dim() == 2 and x.dense_dim() == 0
    assert x.indices().numpy().tolist() == ind and x.stop_gradient


def test_coo_shape_inferred_and_dtype_and_dense_dims():
    x = oar.sparse.sparse_coo_tensor(np.array([[0, 2]]), np.array([[1, 2], [3, 4]]), dtype="float64")
    assert x.shape == [3, 2] and x.dtype == oar.float64 and x.sparse_dim() == 1
    np.testing.assert_array_equal(x.to_dense().numpy(), [[1, 2], [0, 0], [3, 4]])


def test_csr_construction_matches_scipy():
    d = rand_dense([5, 6], seed=1)
    s = sp.csr_matrix(d)
    x = oar.sparse.sparse_csr_tensor(s.indptr, s.indices, s.data, [5, 6])
    assert x.is_sparse_csr() and x.nnz() == s.nnz and x.sparse_dim() == 2 and x.dense_dim() == 0
    np.testing.assert_array_equal(x.to_dense().numpy(), d)
    np.testing.assert_array_equal(x.crows().numpy(), s.indptr)
    np.testing.assert_array_equal(x.cols().numpy(), s.indices)


def test_batched_csr_crows_restart_per_batch():
    d = rand_dense([3, 4, 5], seed=2)
    d[1] = 0.0  # an empty batch
    x = oar.to_tensor(d).to_sparse_csr()
    crows = x.crows().numpy().reshape(3, 5)
    for b in range(3):
        s = sp.csr_matrix(d[b])
        np.testing.assert_array_equal(crows[b], s.indptr)
    np.testing.assert_array_equal(x.to_dense().numpy(), d)
    y = oar.sparse.sparse_csr_tensor(x.crows(), x.cols(), x.values(), [3, 4, 5])
    np.testing.assert_array_equal(y.to_dense().numpy(), d)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_empty_tensor(layout):
    if layout == "coo":
        x = oar.sparse.sparse_coo_tensor(np.zeros([2, 0], np.int64), np.zeros([0], np.float32), [3, 4])
    else:
        x = oar.sparse.sparse_csr_tensor([0, 0, 0, 0], np.zeros([0], np.int64), np.zeros([0], np.float32), [3, 4])
    assert x.nnz() == 0
    np.testing.assert_array_equal(x.to_dense().numpy(), np.zeros([3, 4]))
    np.testing.assert_array_equal(oar.sparse.sin(x).to_dense().numpy(), np.zeros([3, 4]))
    np.testing.assert_array_equal(oar.sparse.add(x, x).to_dense().numpy(), np.zeros([3, 4]))
    np.testing.assert_array_equal(oar.sparse.matmul(x, oar.ones([4, 2])).numpy(), np.zeros([3, 2]))
    assert oar.zeros([3, 4]).to_sparse_coo(2).nnz() == 0 and oar.zeros([3, 4]).to_sparse_csr().nnz() == 0


CONSTRUCTION_ERRORS = [
    # (function, args, error type, message fragment)
    ("coo", ([[0, -1]], [1.0, 2.0], [3]), ValueError, "non-negative"),
    ("coo", ([[0, 3]], [1.0, 2.0], [3]), ValueError, "less than shape[0]"),
    ("coo", ([0, 1], [1.0, 2.0], [3]), ValueError, "2-D"),
    ("coo", ([[0, 1]], [1.0, 2.0, 3.0], [3]), ValueError, "values.shape[0]"),
    ("coo", ([[0, 1]], [1.0, 2.0], [3, 3]), ValueError, "len(shape)"),
    ("coo", ([[0, 1]], [[1.0], [2.0]], [3, 2]), ValueError, "values.shape[1:]"),
    ("coo", ([[0.0, 1.0]], [1.0, 2.0], [3]), TypeError, "int32 or int64"),
    ("coo", ([[0, 1]], [1.0, 2.0], [-3]), ValueError, "negative"),
    ("coo", (np.zeros([1, 0], np.int64), np.zeros([0]), None), ValueError, "cannot be inferred"),
    ("csr", ([0, 2, 1, 3], [0, 1, 2], [1.0, 2.0, 3.0], [3, 3]), ValueError, "non-decreasing"),
    ("csr", ([1, 2, 3, 3], [0, 1, 2], [1.0, 2.0, 3.0], [3, 3]), ValueError, "start at 0"),
    ("csr", ([0, 1, 2], [0, 1, 2], [1.0, 2.0, 3.0], [3, 3]), ValueError, "rows + 1"),
    ("csr", ([0, 1, 2, 3], [0, 1], [1.0, 2.0, 3.0], [3, 3]), ValueError, "same length"),
    ("csr", ([0, 1, 2, 2], [0, 1, 2], [1.0, 2.0, 3.0], [3, 3]), ValueError, "2 entries in all"),
    ("csr", ([0, 1, 2, 3], [0, 3, 2], [1.0, 2.0, 3.0], [3, 3]), ValueError, "cols must be in [0, 3)"),
    ("csr", ([0, 1, 2, 3], [0, -1, 2], [1.0, 2.0, 3.0], [3, 3]), ValueError, "cols must be in"),
    ("csr", ([0, 1], [0], [1.0], [3]), ValueError, "2-D [rows, cols] or 3-D"),
    ("csr", ([0, 1, 0, 1], [0, 0], [1.0, 2.0], [2, 1, 1]), None, None),  # batched: valid
]


@pytest.mark.parametrize("kind,args,err,frag", CONSTRUCTION_ERRORS)
def test_construction_errors(kind, args, err, frag):
    fn = oar.sparse.sparse_coo_tensor if kind == "coo" else oar.sparse.sparse_csr_tensor
    if err is None:
        fn(*args)
        return
    with pytest.raises(err) as info:
        fn(*args)
    api = "[oar.sparse.sparse_coo_tensor]" if kind == "coo" else "[oar.sparse.sparse_csr_tensor]"
    assert str(info.value).startswith(api) and frag in str(info.value), str(info.value)


def test_conversion_errors():
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.to_sparse_coo\] sparse_dim"):
        oar.ones([2, 2]).to_sparse_coo(3)
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.to_sparse_csr\] CSR holds"):
        oar.ones([2]).to_sparse_csr()
    with pytest.raises(ValueError, match=r"^\[oar.sparse.SparseCooTensor.to_sparse_csr\]"):
        oar.ones([2, 2, 2, 2]).to_sparse_coo(4).to_sparse_csr()


# ---- conversions and coalesce ------------------------------------------------------------------------------

def test_dense_tensor_methods():
    t = oar.ones([2])
    assert not t.is_sparse() and not t.is_sparse_coo() and not t.is_sparse_csr()


@pytest.mark.parametrize("sparse_dim", [1, 2, 3])
def test_to_sparse_coo_sparse_dims(sparse_dim):
    d = rand_dense([4, 3, 2], density=0.3, seed=3)
    x = oar.to_tensor(d).to_sparse_coo(sparse_dim)
    assert x.sparse_dim() == sparse_dim and x.values().shape == [x.nnz()] + [4, 3, 2][sparse_dim:]
    blocks = np.abs(d).reshape(int(np.prod(d.shape[:sparse_dim])), -1).sum(axis=1) > 0
    assert x.nnz() == int(blocks.sum())
    np.testing.assert_array_equal(x.to_dense().numpy(), d)
    for other in (1, 2, 3):  # changing sparse_dim keeps the tensor
        np.testing.assert_array_equal(x.to_sparse_coo(other).to_dense().numpy(), d)
        assert x.to_sparse_coo(other).sparse_dim() == other


@pytest.mark.parametrize("shape", [[4, 5], [2, 4, 5]])
def test_coo_csr_round_trip(shape):
    d = rand_dense(shape, seed=4)
    coo = oar.to_tensor(d).to_sparse_coo(len(shape))
    csr = coo.to_sparse_csr()
    np.testing.assert_array_equal(csr.to_dense().numpy(), d)
    back = csr.to_sparse_coo(len(shape))
    np.testing.assert_array_equal(back.indices().numpy(), coo.indices().numpy())
    np.testing.assert_array_equal(back.values().numpy(), coo.values().numpy())


def test_coalesce_sums_duplicates_like_scipy():
    rng = np.random.default_rng(5)
    rows, cols = rng.integers(0, 4, 30), rng.integers(0, 5, 30)
    vals = rng.normal(size=30)
    x = oar.sparse.sparse_coo_tensor([rows, cols], vals, [4, 5])
    ref = sp.coo_matrix((vals, (rows, cols)), shape=(4, 5))
    ref.sum_duplicates()
    y = oar.sparse.coalesce(x)
    assert y.is_coalesced() and y.nnz() == ref.nnz
    np.testing.assert_array_equal(y.indices().numpy(), np.stack([ref.row, ref.col]))  # row-major sorted
    np.testing.assert_allclose(y.values().numpy(), ref.data, rtol=1e-12)
    np.testing.assert_allclose(x.to_dense().numpy(), ref.toarray(), rtol=1e-12)
    # duplicates survive the CSR conversion as sums
    np.testing.assert_allclose(x.to_sparse_csr().to_dense().numpy(), ref.toarray(), rtol=1e-12)


def test_csr_with_unsorted_columns_coalesces():
    x = oar.sparse.sparse_csr_tensor([0, 3, 4], [2, 0, 2, 1], [1.0, 2.0, 3.0, 4.0], [2, 3])
    np.testing.assert_array_equal(x.to_dense().numpy(), [[2.0, 0.0, 4.0], [0.0, 4.0, 0.0]])
    y = x.coalesce()
    assert y.cols().numpy().tolist() == [0, 2, 1] and y.values().numpy().tolist() == [2.0, 4.0, 4.0]


def test_gradient_through_construction_and_to_dense():
    ind = np.array([[0, 1, 1, 0], [2, 0, 2, 2]])  # a repeated coordinate
    w = weights([2, 3])
    check_grad(lambda v: (oar.sparse.sparse_coo_tensor(ind, v, [2, 3], stop_gradient=False).to_dense() * w).sum(),
               np.array([1.0, 2.0, 3.0, 4.0]))
    check_grad(lambda d: (d.to_sparse_coo(2).values() ** 2).sum() + (d.to_sparse_csr().to_dense() * w).sum(),
               rand_dense([2, 3], density=1.0, seed=6))  # no zeros: a perturbation must not change the pattern
    check_grad(lambda v: (oar.sparse.coalesce(oar.sparse.sparse_coo_tensor(ind, v, [2, 3], stop_gradient=False))
                          .values() * oar.to_tensor([1.0, 2.0, 3.0], dtype="float64")).sum(),
               np.array([1.0, 2.0, 3.0, 4.0]))


def test_stop_gradient_policy():
    v = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    assert oar.sparse.sparse_coo_tensor([[0, 1]], v, [2]).stop_gradient  # default cuts the graph
    x = oar.sparse.sparse_coo_tensor([[0, 1]], v, [2], stop_gradient=False)
    (x.to_dense() * oar.to_tensor([3.0, 4.0])).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [3.0, 4.0])
    leaf = oar.to_tensor([1.0, 2.0])
    y = oar.sparse.sparse_coo_tensor([[0, 1]], leaf, [2], stop_gradient=False)
    y.to_dense().sum().backward()
    assert leaf.stop_gradient and y.grad.values().numpy().tolist() == [1.0, 1.0]


# ---- elementwise -------------------------------------------------------------------------------------------

UNARY = {
    "abs": np.abs, "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan, "atanh": np.arctanh,
    "sin": np.sin, "sinh": np.sinh, "tan": np.tan, "tanh": np.tanh, "sqrt": np.sqrt, "square": np.square,
    "log1p": np.log1p, "expm1": np.expm1, "neg": np.negative, "deg2rad": np.deg2rad, "rad2deg": np.rad2deg,
}
POSITIVE = {"sqrt"}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_unary(name, dtype, layout):
    low = 0.1 if name in POSITIVE else -0.9
    d = rand_dense([2, 3, 4] if layout == "coo" else [3, 4], dtype=dtype, seed=8, low=low, high=0.9)
    x = make(d, layout)
    y = getattr(oar.sparse, name)(x)
    assert type(y) is type(x) and y.dtype == x.dtype and y.nnz() == x.nnz()
    ref = np.where(d != 0, UNARY[name](d), 0.0)
    np.testing.assert_allclose(y.to_dense().numpy(), ref, **TOL[dtype])


@pytest.mark.parametrize("name", ["sin", "sqrt", "atanh", "square", "expm1"])
def test_unary_grad(name):
    x0 = make(rand_dense([3, 4], seed=9, low=0.1, high=0.9), "csr")
    w = weights([3, 4])
    check_grad(lambda v: (getattr(oar.sparse, name)(with_values(x0, v)).to_dense() * w).sum(),
               x0.values().numpy().astype(np.float64))


def test_pow_cast_isnan():
    d = rand_dense([4, 5], seed=10, low=0.1, high=2.0)
    x = make(d, "coo")
    np.testing.assert_allclose(oar.sparse.pow(x, 3).to_dense().numpy(), d ** 3, rtol=1e-12)
    np.testing.assert_allclose(oar.sparse.pow(x, 0.5).to_dense().numpy(), np.sqrt(d), rtol=1e-12)
    c = oar.sparse.cast(make(d, "csr"), "int32", "float32")
    assert c.crows().dtype == oar.int32 and c.cols().dtype == oar.int32 and c.dtype == oar.float32
    np.testing.assert_allclose(c.to_dense().numpy(), d, rtol=1e-6)
    n = oar.sparse.sparse_coo_tensor([[0, 2]], [float("nan"), 1.0], [3])
    assert oar.sparse.isnan(n).to_dense().numpy().tolist() == [True, False, False]
    with pytest.raises(TypeError, match=r"^\[oar.sparse.pow\] factor"):
        oar.sparse.pow(x, "2")
    with pytest.raises(TypeError, match=r"^\[oar.sparse.sin\] x must be a sparse tensor"):
        oar.sparse.sin(oar.ones([2]))


# ---- arithmetic --------------------------------------------------------------------------------------------

BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout,shape", [("coo", [4, 5]), ("coo", [2, 3, 4]), ("csr", [4, 5]),
                                          ("csr", [2, 3, 4])])
def test_binary_sparse_sparse(name, dtype, layout, shape):
    a = rand_dense(shape, dtype=dtype, seed=11)
    b = rand_dense(shape, dtype=dtype, seed=12)
    out = getattr(oar.sparse, name)(make(a, layout), make(b, layout))
    assert type(out) is type(make(a, layout)) and out.dtype == oar.to_tensor(a).dtype
    union = (a != 0) | (b != 0)
    got = out.to_dense().numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = BINARY[name](a, b)
    assert out.nnz() == int(union.sum())
    np.testing.assert_allclose(got[union], ref[union], equal_nan=True, **TOL[dtype])
    assert (got[~union] == 0).all()


def test_binary_with_duplicates_and_dense_dims():
    x = oar.sparse.sparse_coo_tensor([[0, 2, 0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [3, 2])
    y = oar.sparse.sparse_coo_tensor([[2, 1]], [[1.0, 1.0], [2.0, 2.0]], [3, 2])
    np.testing.assert_array_equal(oar.sparse.add(x, y).to_dense().numpy(), x.to_dense().numpy() + y.to_dense().numpy())
    np.testing.assert_array_equal(oar.sparse.multiply(x, y).to_dense().numpy(),
                                  x.to_dense().numpy() * y.to_dense().numpy())


def test_binary_with_dense_and_scalars_and_operators():
    a, b = rand_dense([3, 4], seed=13), rand_dense([3, 4], density=1.0, seed=14, low=0.5, high=1.0)
    x = make(a, "csr")
    np.testing.assert_allclose(oar.sparse.add(x, oar.to_tensor(b)).numpy(), a + b, rtol=1e-12)
    np.testing.assert_allclose(oar.sparse.subtract(x, oar.to_tensor(b)).numpy(), a - b, rtol=1e-12)
    m = oar.sparse.multiply(x, oar.to_tensor(b))
    assert m.is_sparse_csr() and m.nnz() == x.nnz()
    np.testing.assert_allclose(m.to_dense().numpy(), a * b, rtol=1e-12)
    np.testing.assert_allclose(oar.sparse.divide(x, 4.0).to_dense().numpy(), a / 4, rtol=1e-12)
    np.testing.assert_allclose((x * 2.0 + x - x / 2.0).to_dense().numpy(), 2.5 * a, rtol=1e-12)
    np.testing.assert_allclose((-x).to_dense().numpy(), -a, rtol=1e-12)
    np.testing.assert_allclose((x @ oar.to_tensor(b.T)).numpy(), a @ b.T, rtol=1e-12)
    mask = make(rand_dense([3, 4], seed=15), "coo")
    got = oar.sparse.mask_as(oar.to_tensor(b), mask)
    np.testing.assert_allclose(got.to_dense().numpy(), np.where(mask.to_dense().numpy() != 0, b, 0), rtol=1e-12)


def test_binary_grads():
    a0, b0 = make(rand_dense([3, 4], seed=16), "coo"), make(rand_dense([3, 4], seed=17), "coo")
    w = weights([3, 4])
    for name in ("add", "subtract", "multiply"):
        check_grad(lambda u, v: (getattr(oar.sparse, name)(with_values(a0, u), with_values(b0, v)).to_dense()
                                 * w).sum(), a0.values().numpy(), b0.values().numpy())
    full = make(rand_dense([3, 4], density=1.0, seed=18, low=1.0, high=2.0), "csr")
    c0 = make(rand_dense([3, 4], seed=19), "csr")
    check_grad(lambda u, v: (oar.sparse.divide(with_values(c0, u), with_values(full, v)).to_dense() * w).sum(),
               c0.values().numpy(), full.values().numpy())
    check_grad(lambda d: (oar.sparse.mask_as(d, c0).values() ** 2).sum(), rand_dense([3, 4], density=1.0))


def test_binary_errors():
    x, y = make(rand_dense([3, 4]), "coo"), make(rand_dense([3, 4]), "csr")
    with pytest.raises(TypeError, match=r"^\[oar.sparse.add\] x and y must have the same layout"):
        oar.sparse.add(x, y)
    with pytest.raises(ValueError, match=r"^\[oar.sparse.multiply\] x and y must have the same shape"):
        oar.sparse.multiply(x, make(rand_dense([4, 3]), "coo"))
    with pytest.raises(ValueError, match=r"^\[oar.sparse.add\] the dense y must have x's shape"):
        oar.sparse.add(x, oar.ones([2, 2], dtype="float64"))
    with pytest.raises(ValueError, match=r"^\[oar.sparse.subtract\] x and y must have the same sparse_dim"):
        oar.sparse.subtract(oar.to_tensor(rand_dense([3, 4])).to_sparse_coo(1), x)
    with pytest.raises(TypeError, match=r"^\[oar.sparse.divide\] y must be a sparse tensor"):
        oar.sparse.divide(x, "a")


@pytest.mark.parametrize("mod", [oar.sparse, oar.sparse.nn, oar.sparse.nn.functional])
def test_every_public_sparse_callable_has_an_example(mod):
    missing = [n for n in mod.__all__ if callable(getattr(mod, n)) and not isinstance(getattr(mod, n), type(oar))
               and ">>>" not in (getattr(mod, n).__doc__ or "")]
    assert not missing, f"{mod.__name__}: no runnable example in the docstring of {missing}"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_zero_size_dims(layout):
    d = np.zeros([0, 5])
    x = make(d, layout)
    assert x.shape == [0, 5] and x.nnz() == 0 and x.to_dense().shape == [0, 5]
    assert oar.sparse.matmul(x, oar.ones([5, 2], dtype="float64")).shape == [0, 2]
    assert oar.sparse.add(x, x).to_dense().shape == [0, 5]
    y = make(np.zeros([2, 0]), layout)
    np.testing.assert_array_equal(oar.sparse.matmul(y, oar.ones([0, 3], dtype="float64")).numpy(), np.zeros([2, 3]))
    out = oar.sparse.masked_matmul(oar.ones([2, 0]), oar.ones([0, 3]), make(np.ones([2, 3], np.float32), layout))
    np.testing.assert_array_equal(out.to_dense().numpy(), np.zeros([2, 3]))


def test_results_follow_the_sparse_data_not_the_current_device():
    # Note [device scope]: with another current device (the example plugin device), the tensors the
    # functions make internally must still land beside the sparse data, here on the CPU
    import os
    from conftest import CUSTOM_CPU
    assert os.path.exists(CUSTOM_CPU), f"{CUSTOM_CPU} is missing: `make build` builds it"
    d = rand_dense([3, 4], seed=20)
    x, y = make(d, "csr"), oar.ones([4, 2], dtype="float64")
    oar.set_device("custom_cpu:0")
    try:
        outs = [oar.sparse.add(x, x).to_dense(), oar.sparse.matmul(x, y), x.to_dense(),
                oar.sparse.nn.functional.softmax(x).values(), x.to_sparse_coo().coalesce().values(),
                oar.sparse.sum(x).values(), oar.sparse.transpose(x, [1, 0]).values()]
    finally:
        oar.set_device("cpu")
    assert all(str(o.place) == "Place(cpu)" for o in outs)
    np.testing.assert_allclose(outs[0].numpy(), 2 * d, rtol=1e-12)
    np.testing.assert_allclose(outs[1].numpy(), d @ np.ones([4, 2]), rtol=1e-12)
