"""oar.sparse products (matmul, masked_matmul, addmm, mv), shape functions (transpose, reshape, slice, sum)
and oar.sparse.nn, against dense NumPy references, with float64 finite-difference gradients."""
import numpy as np
import pytest

import oar
from test_sparse_util import TOL, check_grad, make, rand_dense, weights, with_values

DTYPES = ["float32", "float64"]
LAYOUTS = ["coo", "csr"]
BATCH = [[], [3]]


def _np_softmax_stored(d):
    """Softmax along the last axis over the nonzero entries only (zeros stay out and stay zero)."""
    mask = d != 0
    e = np.where(mask, np.exp(np.where(mask, d, -np.inf) - np.max(np.where(mask, d, -np.inf), axis=-1,
                                                                     keepdims=True, initial=-1e300)), 0.0)
    s = e.sum(axis=-1, keepdims=True)
    return np.where(mask, e / np.where(s == 0, 1, s), 0.0)


# ---- products ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("batch", BATCH)
def test_matmul_sparse_dense(dtype, layout, batch):
    a = rand_dense(batch + [5, 4], dtype=dtype, seed=1)
    b = np.random.default_rng(2).normal(size=batch + [4, 3]).astype(dtype)
    out = oar.sparse.matmul(make(a, layout), oar.to_tensor(b))
    assert isinstance(out, oar.Tensor) and out.shape == batch + [5, 3] and out.dtype == oar.to_tensor(b).dtype
    np.testing.assert_allclose(out.numpy(), a @ b, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("batch", BATCH)
def test_matmul_sparse_sparse(dtype, layout, batch):
    a = rand_dense(batch + [5, 4], dtype=dtype, seed=3)
    b = rand_dense(batch + [4, 6], dtype=dtype, seed=4)
    out = oar.sparse.matmul(make(a, layout), make(b, layout))
    assert type(out) is type(make(a, layout)) and out.shape == batch + [5, 6]
    np.testing.assert_allclose(out.to_dense().numpy(), a @ b, **TOL[dtype])


def test_matmul_with_duplicates_and_no_pairs():
    x = oar.sparse.sparse_coo_tensor([[0, 0, 1], [1, 1, 0]], [1.0, 2.0, 4.0], [2, 2])  # (0, 1) twice
    y = oar.sparse.sparse_coo_tensor([[1, 0], [0, 1]], [5.0, 7.0], [2, 2])
    ref = x.to_dense().numpy() @ y.to_dense().numpy()
    np.testing.assert_allclose(oar.sparse.matmul(x, y).to_dense().numpy(), ref)
    np.testing.assert_allclose(oar.sparse.matmul(x, y.to_dense()).numpy(), ref)
    z = oar.sparse.sparse_coo_tensor([[0], [1]], [3.0], [2, 2])  # x's columns meet no row of z
    w = oar.sparse.sparse_coo_tensor([[0], [0]], [3.0], [2, 2])
    assert oar.sparse.matmul(w, z).nnz() == 1 and oar.sparse.matmul(z, z).nnz() == 0


def test_matmul_grads():
    x0 = make(rand_dense([4, 3], seed=5), "csr")
    y0 = np.random.default_rng(6).normal(size=[3, 2])
    w = weights([4, 2])
    check_grad(lambda v, y: (oar.sparse.matmul(with_values(x0, v), y) * w).sum(), x0.values().numpy(), y0)
    xb = make(rand_dense([2, 4, 3], seed=7), "coo")
    yb = np.random.default_rng(8).normal(size=[2, 3, 2])
    check_grad(lambda v, y: (oar.sparse.matmul(with_values(xb, v), y) * weights([2, 4, 2])).sum(),
               xb.values().numpy(), yb)
    s0 = make(rand_dense([3, 4], seed=9), "coo")
    check_grad(lambda u, v: (oar.sparse.matmul(with_values(x0.to_sparse_coo(), u), with_values(s0, v)).to_dense()
                             * weights([4, 4])).sum(), x0.values().numpy(), s0.values().numpy())


def test_mv():
    for layout in LAYOUTS:
        a = rand_dense([5, 4], seed=10)
        v = np.random.default_rng(11).normal(size=4)
        np.testing.assert_allclose(oar.sparse.mv(make(a, layout), oar.to_tensor(v)).numpy(), a @ v, rtol=1e-12)
    x0 = make(a, "csr")
    check_grad(lambda u, vec: (oar.sparse.mv(with_values(x0, u), vec) * weights([5])).sum(), x0.values().numpy(), v)
    with pytest.raises(ValueError, match=r"^\[oar.sparse.mv\] vec must have"):
        oar.sparse.mv(x0, oar.ones([5], dtype="float64"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("batch", BATCH)
def test_masked_matmul(dtype, layout, batch):
    rng = np.random.default_rng(12)
    x, y = rng.normal(size=batch + [5, 4]).astype(dtype), rng.normal(size=batch + [4, 6]).astype(dtype)
    mask_d = rand_dense(batch + [5, 6], seed=13)
    mask = make(mask_d, layout)
    out = oar.sparse.masked_matmul(oar.to_tensor(x), oar.to_tensor(y), mask)
    assert type(out) is type(mask) and out.nnz() == mask.nnz()
    np.testing.assert_allclose(out.to_dense().numpy(), np.where(mask_d != 0, x @ y, 0.0), **TOL[dtype])


def test_masked_matmul_grads_and_errors():
    rng = np.random.default_rng(14)
    mask = make(rand_dense([3, 4], seed=15), "csr")
    check_grad(lambda x, y: (oar.sparse.masked_matmul(x, y, mask).to_dense() * weights([3, 4])).sum(),
               rng.normal(size=[3, 2]), rng.normal(size=[2, 4]))
    with pytest.raises(ValueError, match=r"^\[oar.sparse.masked_matmul\] mask must have the shape of x @ y"):
        oar.sparse.masked_matmul(oar.ones([3, 2]), oar.ones([2, 5]), make(rand_dense([3, 4]), "csr"))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_addmm(layout):
    rng = np.random.default_rng(16)
    inp, a, b = rng.normal(size=[4, 3]), rand_dense([4, 5], seed=17), rng.normal(size=[5, 3])
    out = oar.sparse.addmm(oar.to_tensor(inp), make(a, layout), oar.to_tensor(b), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(out.numpy(), 0.5 * inp + 2.0 * a @ b, rtol=1e-12)
    si, sb = rand_dense([4, 3], seed=18), rand_dense([5, 3], seed=19)
    sout = oar.sparse.addmm(make(si, layout), make(a, layout), make(sb, layout), beta=3.0, alpha=-1.0)
    assert type(sout) is type(make(a, layout))
    np.testing.assert_allclose(sout.to_dense().numpy(), 3.0 * si - a @ sb, rtol=1e-12, atol=1e-12)
    x0 = make(a, layout)
    check_grad(lambda i, v, y: (oar.sparse.addmm(i, with_values(x0, v), y, 0.5, 2.0) * weights([4, 3])).sum(),
               inp, x0.values().numpy(), b)


def test_product_errors():
    x = make(rand_dense([3, 4]), "coo")
    with pytest.raises(ValueError, match=r"^\[oar.sparse.matmul\] x \[\*, M, K\] and y \[\*, K, N\]"):
        oar.sparse.matmul(x, oar.ones([3, 2], dtype="float64"))
    with pytest.raises(TypeError, match=r"^\[oar.sparse.matmul\] x and y must have the same dtype"):
        oar.sparse.matmul(x, oar.ones([4, 2], dtype="float32"))
    with pytest.raises(TypeError, match=r"^\[oar.sparse.matmul\] a sparse y must have x's layout"):
        oar.sparse.matmul(x, make(rand_dense([4, 2]), "csr"))
    with pytest.raises(ValueError, match=r"^\[oar.sparse.matmul\] x must have all its dims sparse"):
        oar.sparse.matmul(oar.to_tensor(rand_dense([3, 4])).to_sparse_coo(1), oar.ones([4, 2], dtype="float64"))
    with pytest.raises(ValueError, match=r"^\[oar.sparse.addmm\] input must have the shape of x @ y"):
        oar.sparse.addmm(oar.ones([2, 2], dtype="float64"), x, oar.ones([4, 2], dtype="float64"))
    with pytest.raises(TypeError, match=r"^\[oar.sparse.matmul\] x must be a sparse tensor"):
        oar.sparse.matmul(oar.ones([2, 2]), oar.ones([2, 2]))


# ---- shape functions ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("layout,shape,perm", [("coo", [3, 4, 5], [2, 0, 1]), ("coo", [3, 4], [1, 0]),
                                               ("csr", [3, 4], [1, 0]), ("csr", [2, 3, 4], [0, 2, 1]),
                                               ("csr", [2, 3, 4], [1, 2, 0])])
def test_transpose(layout, shape, perm):
    d = rand_dense(shape, seed=20)
    out = oar.sparse.transpose(make(d, layout), perm)
    assert type(out) is type(make(d, layout))
    np.testing.assert_array_equal(out.to_dense().numpy(), np.transpose(d, perm))


def test_transpose_dense_dims_and_grad():
    d = rand_dense([3, 4, 2], seed=21)
    x = oar.to_tensor(d).to_sparse_coo(2)
    np.testing.assert_array_equal(oar.sparse.transpose(x, [1, 0, 2]).to_dense().numpy(), d.transpose(1, 0, 2))
    with pytest.raises(ValueError, match=r"^\[oar.sparse.transpose\] perm must keep the 2 sparse dims first"):
        oar.sparse.transpose(x, [2, 0, 1])
    x0 = make(rand_dense([3, 4], seed=22), "csr")
    check_grad(lambda v: (oar.sparse.transpose(with_values(x0, v), [1, 0]).to_dense() * weights([4, 3])).sum(),
               x0.values().numpy())


@pytest.mark.parametrize("layout,shape,new", [("coo", [3, 4], [2, 6]), ("coo", [2, 3, 4], [4, -1]),
                                              ("csr", [3, 4], [6, 2]), ("csr", [2, 3, 4], [3, 2, 4])])
def test_reshape(layout, shape, new):
    d = rand_dense(shape, seed=23)
    out = oar.sparse.reshape(make(d, layout), new)
    np.testing.assert_array_equal(out.to_dense().numpy(), d.reshape(new))


def test_reshape_keeps_dense_dims_and_errors():
    d = rand_dense([4, 3, 2], seed=24)
    x = oar.to_tensor(d).to_sparse_coo(2)
    np.testing.assert_array_equal(oar.sparse.reshape(x, [2, 6, 2]).to_dense().numpy(), d.reshape(2, 6, 2))
    with pytest.raises(ValueError, match=r"^\[oar.sparse.reshape\] the dense dims \[2\] must end"):
        oar.sparse.reshape(x, [12, 2, 1])
    with pytest.raises(ValueError, match=r"^\[oar.sparse.reshape\] cannot reshape"):
        oar.sparse.reshape(make(d, "coo"), [5, -1])


@pytest.mark.parametrize("layout,shape,axes,starts,ends", [
    ("coo", [4, 5], [0, 1], [1, -3], [3, 10]), ("coo", [3, 4, 5], [2], [2], [4]),
    ("csr", [4, 5], [1], [0], [2]), ("csr", [2, 4, 5], [0, 1], [1, 1], [2, 3])])
def test_slice(layout, shape, axes, starts, ends):
    d = rand_dense(shape, seed=25)
    out = oar.sparse.slice(make(d, layout), axes, starts, ends)
    idx = [slice(None)] * len(shape)
    for a, s, e in zip(axes, starts, ends):
        idx[a] = slice(s, e)
    np.testing.assert_array_equal(out.to_dense().numpy(), d[tuple(idx)])


def test_slice_dense_dims_and_grad():
    d = rand_dense([4, 5], seed=26)
    x = oar.to_tensor(d).to_sparse_coo(1)
    np.testing.assert_array_equal(oar.sparse.slice(x, [0, 1], [1, 1], [3, 4]).to_dense().numpy(), d[1:3, 1:4])
    x0 = make(d, "coo")
    check_grad(lambda v: (oar.sparse.slice(with_values(x0, v), [1], [1], [4]).to_dense() * weights([4, 3])).sum(),
               x0.values().numpy())


@pytest.mark.parametrize("axis,keepdim", [(None, False), (None, True), (0, False), (1, True), (-1, False),
                                          ([0, 2], False), ([1, 2], True)])
@pytest.mark.parametrize("sparse_dim", [3, 2, 1])
def test_sum_coo(axis, keepdim, sparse_dim):
    d = rand_dense([3, 4, 2], seed=27)
    out = oar.sparse.sum(oar.to_tensor(d).to_sparse_coo(sparse_dim), axis=axis, keepdim=keepdim)
    ref = np.sum(d, axis=None if axis is None else tuple(axis) if isinstance(axis, list) else axis,
                 keepdims=keepdim)
    got = out.to_dense().numpy()
    if ref.ndim == 0 or got.shape != ref.shape:  # no sparse dim left: one of size 1 is kept in front
        ref = ref.reshape((1,) + ref.shape)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_sum_csr_dtype_and_grad():
    d = rand_dense([2, 3, 4], seed=28)
    x = make(d, "csr")
    out = oar.sparse.sum(x, axis=-1, keepdim=True)
    assert out.is_sparse_csr()
    np.testing.assert_allclose(out.to_dense().numpy(), d.sum(axis=-1, keepdims=True), rtol=1e-12)
    full = oar.sparse.sum(x)  # a CSR input keeps its rank
    assert full.is_sparse_csr() and full.shape == [1, 1, 1]
    np.testing.assert_allclose(full.to_dense().numpy(), d.sum(keepdims=True), rtol=1e-12)
    rows = oar.sparse.sum(make(d[0], "csr"), axis=0)
    assert rows.is_sparse_csr() and rows.shape == [1, 4]
    np.testing.assert_allclose(rows.to_dense().numpy(), d[0].sum(axis=0, keepdims=True), rtol=1e-12)
    assert oar.sparse.sum(x, dtype="float32").dtype == oar.float32
    i = oar.sparse.sparse_coo_tensor([[0, 1]], oar.to_tensor([1, 2], dtype="int32"), [2])
    assert oar.sparse.sum(i).dtype == oar.int64
    x0 = make(d, "coo")
    check_grad(lambda v: (oar.sparse.sum(with_values(x0, v), axis=1).to_dense() * weights([2, 4])).sum(),
               x0.values().numpy())
    with pytest.raises(ValueError, match=r"^\[oar.sparse.sum\] axis must hold ints in \[-3, 3\)"):
        oar.sparse.sum(x, axis=3)


# ---- nn ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_activations(dtype, layout):
    d = rand_dense([3, 5], dtype=dtype, seed=29, low=-8, high=8)
    x = make(d, layout)
    F = oar.sparse.nn.functional
    cases = [(F.relu(x), np.maximum(d, 0)), (F.relu6(x), np.clip(d, 0, 6)),
             (F.leaky_relu(x, 0.2), np.where(d >= 0, d, 0.2 * d)), (oar.sparse.nn.ReLU()(x), np.maximum(d, 0)),
             (oar.sparse.nn.ReLU6()(x), np.clip(d, 0, 6)),
             (oar.sparse.nn.LeakyReLU(0.1)(x), np.where(d >= 0, d, 0.1 * d))]
    for out, ref in cases:
        assert type(out) is type(x) and out.nnz() == x.nnz()
        np.testing.assert_allclose(out.to_dense().numpy(), ref, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout,shape", [("csr", [4, 6]), ("csr", [2, 4, 6]), ("coo", [4, 6]),
                                          ("coo", [2, 3, 5])])
def test_softmax_over_stored_entries(dtype, layout, shape):
    d = rand_dense(shape, dtype=dtype, seed=30, low=-30, high=30)
    d[..., 1, :] = 0.0  # an empty row
    x = make(d, layout)
    out = oar.sparse.nn.functional.softmax(x)
    assert type(out) is type(x) and out.nnz() == x.nnz()
    np.testing.assert_allclose(out.to_dense().numpy(), _np_softmax_stored(d.astype(np.float64)), **TOL[dtype])
    np.testing.assert_allclose(oar.sparse.nn.Softmax()(x).to_dense().numpy(), out.to_dense().numpy())


def test_softmax_dense_last_dim_grad_and_errors():
    d = rand_dense([3, 4], seed=31)
    x = oar.to_tensor(d).to_sparse_coo(1)
    blocks = np.abs(d).sum(axis=1) > 0
    e = np.exp(d - d.max(axis=1, keepdims=True))
    ref = np.where(blocks[:, None], e / e.sum(axis=1, keepdims=True), 0.0)
    np.testing.assert_allclose(oar.sparse.nn.functional.softmax(x).to_dense().numpy(), ref, rtol=1e-12)
    x0 = make(rand_dense([3, 5], seed=32), "csr")
    check_grad(lambda v: (oar.sparse.nn.functional.softmax(with_values(x0, v)).to_dense() * weights([3, 5])).sum(),
               x0.values().numpy())
    x1 = make(rand_dense([2, 3, 4], seed=33), "coo")
    check_grad(lambda v: (oar.sparse.nn.functional.softmax(with_values(x1, v)).values() ** 2).sum(),
               x1.values().numpy())
    with pytest.raises(ValueError, match=r"^\[oar.sparse.nn.functional.softmax\] only the last axis"):
        oar.sparse.nn.functional.softmax(x0, axis=0)


def test_activation_grads():
    x0 = make(rand_dense([3, 5], seed=34, low=-8, high=8), "coo")
    F = oar.sparse.nn.functional
    for fn in (F.relu, F.relu6, lambda t: F.leaky_relu(t, 0.3)):
        check_grad(lambda v: (fn(with_values(x0, v)).to_dense() * weights([3, 5])).sum(), x0.values().numpy())


def test_sparse_by_dense_is_not_densified():
    # a 20000 x 20000 matrix with 50 entries: a dense copy would need 3.2 GB
    rng = np.random.default_rng(35)
    ind = rng.integers(0, 20000, size=[2, 50])
    x = oar.sparse.sparse_coo_tensor(ind, rng.normal(size=50), [20000, 20000])
    y = rng.normal(size=[20000, 2])
    out = oar.sparse.matmul(x, oar.to_tensor(y)).numpy()
    ref = np.zeros([20000, 2])
    np.add.at(ref, ind[0], x.values().numpy()[:, None] * y[ind[1]])
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    t = oar.sparse.transpose(x.to_sparse_csr(), [1, 0])
    assert t.nnz() == oar.sparse.coalesce(x).nnz()


def _np_attention(q, k, v, keep):
    """Dense reference: softmax over the kept scores of each row (rows with none give 0), times v."""
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    s = np.where(keep, s, -np.inf)
    top = np.max(s, axis=-1, keepdims=True)
    e = np.where(keep, np.exp(s - np.where(np.isfinite(top), top, 0)), 0.0)
    tot = e.sum(axis=-1, keepdims=True)
    return (e / np.where(tot > 0, tot, 1)) @ v


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("masks", [False, True])
def test_attention(dtype, masks):
    rng = np.random.default_rng(36)
    b, h, s, d = 2, 2, 5, 3
    q, k, v = (rng.normal(size=[b, h, s, d]).astype(dtype) for _ in range(3))
    layout = rand_dense([b * h, s, s], density=0.5, seed=37) != 0
    layout[:, :, 0] = True
    mask = make(layout.astype(dtype), "csr")
    keep = layout.reshape(b, h, s, s).copy()
    kw = {}
    if masks:
        kp = (rng.random([b, s]) > 0.3).astype(dtype)
        am = np.tril(np.ones([s, s], dtype))
        kw = dict(key_padding_mask=oar.to_tensor(kp), attn_mask=oar.to_tensor(am))
        keep &= (kp[:, None, None, :] != 0) & (am[None, None] != 0)
    out = oar.sparse.nn.functional.attention(oar.to_tensor(q), oar.to_tensor(k), oar.to_tensor(v), mask, **kw)
    assert out.shape == [b, h, s, d]
    np.testing.assert_allclose(out.numpy(), _np_attention(q.astype(np.float64), k.astype(np.float64),
                                                          v.astype(np.float64), keep), **TOL[dtype])


def test_attention_grads_and_errors():
    rng = np.random.default_rng(38)
    b, h, s, d = 1, 2, 4, 2
    mask = make((rand_dense([b * h, s, s], density=0.6, seed=39) != 0).astype(np.float64), "csr")
    kp = oar.to_tensor(np.array([[1.0, 1.0, 0.0, 1.0]]))
    w = weights([b, h, s, d])
    check_grad(lambda q, k, v: (oar.sparse.nn.functional.attention(q, k, v, mask, key_padding_mask=kp) * w).sum(),
               *(rng.normal(size=[b, h, s, d]) for _ in range(3)))
    x = oar.ones([b, h, s, d], dtype="float64")
    with pytest.raises(ValueError, match=r"^\[oar.sparse.nn.functional.attention\] sparse_mask must be"):
        oar.sparse.nn.functional.attention(x, x, x, make(np.ones([2, 4]), "csr"))
    with pytest.raises(ValueError, match=r"^\[oar.sparse.nn.functional.attention\] attn_mask must be"):
        oar.sparse.nn.functional.attention(x, x, x, mask, attn_mask=oar.ones([3, 3]))


def test_batch_norm_over_stored_entries():
    d = rand_dense([2, 3, 4, 3], density=0.5, seed=40).astype(np.float32)
    x = oar.to_tensor(d).to_sparse_coo(3)  # values [nnz, 3]: channels last
    bn = oar.sparse.nn.BatchNorm(3)
    out = bn(x)
    vals = x.values().numpy().astype(np.float64)
    mean, var = vals.mean(axis=0), vals.var(axis=0)
    assert out.is_sparse_coo() and out.nnz() == x.nnz()
    np.testing.assert_array_equal(out.indices().numpy(), x.indices().numpy())
    np.testing.assert_allclose(out.values().numpy(), (vals - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    bn.eval()
    run_mean, run_var = 0.1 * mean, 0.9 + 0.1 * var  # running stats: momentum 0.9, biased variance
    np.testing.assert_allclose(bn(x).values().numpy(), (vals - run_mean) / np.sqrt(run_var + 1e-5), rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(ValueError, match=r"^\[oar.sparse.nn.BatchNorm\] x must store one vector of 3 channels"):
        bn(make(d[..., 0], "coo"))
    with pytest.raises(ValueError, match=r"^\[oar.sparse.nn.BatchNorm\] data_format must put channels last"):
        oar.sparse.nn.BatchNorm(3, data_format="NCDHW")
    sync = oar.sparse.nn.SyncBatchNorm(3)(x)  # one process: the statistics of this batch
    np.testing.assert_allclose(sync.values().numpy(), (vals - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("center", [True, False])
def test_pca_lowrank_full_rank_is_exact(dtype, layout, center):
    oar.seed(41)
    d = rand_dense([8, 5], density=0.5, seed=42).astype(dtype)
    u, s, v = oar.sparse.pca_lowrank(make(d, layout), q=5, center=center, niter=2)
    assert u.shape == [8, 5] and s.shape == [5] and v.shape == [5, 5]
    a = d.astype(np.float64) - (d.mean(axis=0, keepdims=True) if center else 0.0)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False), **tol)
    np.testing.assert_allclose(u.numpy() @ np.diag(s.numpy()) @ v.numpy().T, a, **tol)
    np.testing.assert_allclose(v.numpy().T @ v.numpy(), np.eye(5), **tol)


def test_pca_lowrank_top_components_and_errors():
    oar.seed(43)
    rng = np.random.default_rng(44)
    low = rng.normal(size=[30, 2]) @ rng.normal(size=[2, 20])  # rank 2, then sparsified by a fixed mask
    d = np.where(rng.random([30, 20]) < 0.9, low, 0.0)
    u, s, v = oar.sparse.pca_lowrank(make(d, "csr"), q=6, center=False, niter=4)
    np.testing.assert_allclose(s.numpy()[:2], np.linalg.svd(d, compute_uv=False)[:2], rtol=1e-6)
    with pytest.raises(ValueError, match=r"^\[oar.sparse.pca_lowrank\] q must be an int in \[1, min\(M, N\) = 20\]"):
        oar.sparse.pca_lowrank(make(d, "coo"), q=21)
    with pytest.raises(ValueError, match=r"^\[oar.sparse.pca_lowrank\] x must be a 2-D sparse matrix"):
        oar.sparse.pca_lowrank(make(rand_dense([2, 3, 4]), "coo"))


def test_second_order_gradients():
    # the composites are differentiable twice: the gradient of a gradient matches finite differences
    x0 = make(rand_dense([3, 4], seed=45), "csr")
    y0 = np.random.default_rng(46).normal(size=[4, 2])

    def grad_norm(v, y):
        if v.stop_gradient:  # the finite-difference evaluations pass plain tensors
            v = v.detach()
            v.stop_gradient = False
        x = with_values(x0, v)
        out = oar.sparse.matmul(oar.sparse.nn.functional.softmax(x), y)
        (g,) = oar.grad((out * out).sum(), [v], create_graph=True)
        return (g * g).sum()

    check_grad(grad_norm, x0.values().numpy(), y0, atol=1e-6)
