"""The CUDA kernels of the indexing, sorting and scan ops against the CPU's.

The op database runs every op on the GPU with its small samples
(test_opdb_device.py); these tests add what those samples do not reach: sizes
that choose the other launch shapes (a block per line, segmented and
device-wide sorts, scatters by atomics), NaN and signed zeros in sorts and
scans, ties in long lines, repeated indices under every reduce mode, the
gradients that run the scatter kernels, and index errors raised as on the CPU.
"""
import numpy as np
import pytest

import oar
from oar.device import cuda

pytestmark = pytest.mark.skipif(cuda.device_count() == 0, reason="no CUDA device is visible")
GPU = "gpu:0"
rng = np.random.default_rng(7)


def _tensor(a, device=None, dtype=None):
    t = a if isinstance(a, oar.Tensor) else oar.to_tensor(np.asarray(a))
    if dtype is not None and np.asarray(a).dtype.kind == "f":
        t = t.astype(dtype)
    return t.to(device) if device else t


def _arrays(out):
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in _arrays(o)]
    return [out.cpu().numpy()]


def same(fn, *args, dtype=None, tol=0.0):
    """fn on CPU tensors and on GPU tensors made from args (NumPy arrays; floating ones cast to dtype)
    gives the same results: exactly for integers and bool, within tol for floats."""
    want = _arrays(fn(*[_tensor(a, None, dtype) for a in args]))
    got = _arrays(fn(*[_tensor(a, GPU, dtype) for a in args]))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if g.dtype.kind in "biu" or tol == 0:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)


def _awkward(shape, dtype=np.float32):
    """Values with many ties, NaN, +-0 and +-inf."""
    v = rng.integers(-4, 5, shape).astype(dtype)
    flat = v.reshape(-1)
    n = flat.size
    for special in (np.nan, -0.0, 0.0, np.inf, -np.inf):
        flat[rng.integers(0, n, max(n // 50, 1))] = special
    return v


SORT_SHAPES = [((100000,), 0), ((3, 50000), 1), ((1000, 37), 1), ((37, 1000), 0), ((5, 700, 3), 1), ((2, 1), 1)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("shape,axis", SORT_SHAPES)
def test_argsort_nan_zero_ties(shape, axis, dtype):
    x = _awkward(shape)
    for desc in (False, True):
        same(lambda t: oar.argsort(t, axis=axis, descending=desc), x, dtype=dtype)
    same(lambda t: oar.topk(t, min(3, shape[axis]), axis=axis, largest=True), x, dtype=dtype)
    same(lambda t: oar.topk(t, 1, axis=axis, largest=False), x, dtype=dtype)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "bool"])
def test_argsort_integers(dtype):
    x = rng.integers(-128 if dtype[0] == "i" else 0, 128 if dtype != "bool" else 2, (7, 3000)).astype(dtype)
    for desc in (False, True):
        same(lambda t: oar.argsort(t, axis=1, descending=desc), x)
        same(lambda t: oar.argsort(t, axis=0, descending=desc), x)


@pytest.mark.parametrize("shape,axis", SORT_SHAPES)
def test_median(shape, axis):
    x = _awkward(shape)
    x[0] = np.arange(x[0].size, dtype=np.float32).reshape(x[0].shape)  # a line or slab without NaN
    for mode in ("min", "avg"):
        same(lambda t: oar.median(t, axis=axis, mode=mode), x)


def test_unique_nan_zero_rows():
    x = _awkward((5000,))
    same(lambda t: oar.unique(t, return_index=True, return_inverse=True, return_counts=True), x)
    rows = rng.integers(0, 3, (3000, 4)).astype(np.float32)
    rows[::7, 1] = np.nan
    rows[::11, 2] = -0.0
    same(lambda t: oar.unique(t, return_index=True, return_inverse=True, return_counts=True, axis=0), rows)
    same(lambda t: oar.unique(t, return_inverse=True, return_counts=True, axis=1), rows.T.copy())


def test_nonzero_masked_select():
    x = rng.random((37, 53, 11)) > 0.7
    same(oar.nonzero, x)
    same(oar.nonzero, np.zeros((4, 5), bool))
    v = rng.standard_normal((37, 53, 11)).astype(np.float32)
    same(oar.masked_select, v, x)


def test_searchsorted():
    seq = np.sort(_awkward((4, 1000)), axis=-1)  # NaN last, as the CPU sorts
    vals = _awkward((4, 300))
    for right in (False, True):
        same(lambda s, v: oar.searchsorted(s, v, right=right), seq, vals)
        same(lambda s, v: oar.searchsorted(s, v, right=right), seq[0].copy(), vals)


SCAN_SHAPES = [((3, 5000), 1), ((5000, 3), 0), ((4096, 9), 1), ((9, 4096), 0), ((2, 300, 5), 1), ((100000,), 0)]


@pytest.mark.parametrize("shape,axis", SCAN_SHAPES)
def test_scans(shape, axis):
    x = rng.uniform(0.5, 1.5, shape).astype(np.float32)
    same(lambda t: oar.cumsum(t, axis=axis), x, tol=1e-4)
    same(lambda t: oar.cumprod(t, dim=axis), x, tol=1e-4)
    ints = rng.integers(-100, 100, shape)
    same(lambda t: oar.cumsum(t, axis=axis), ints)
    same(lambda t: oar.cumsum(t.astype("int8"), axis=axis), ints)  # wraps around as on the CPU
    a = _awkward(shape)
    for f in (oar.cummax, oar.cummin, oar.argmax, oar.argmin):
        same(lambda t: f(t, axis=axis), a)
        same(lambda t: f(t, axis=axis), rng.integers(0, 5, shape))
    same(lambda t: oar.argmax(t, axis=axis, dtype="int32"), a, dtype="float16")


def test_scan_gradients():
    """Reversed scans (cumsum's gradient), put_add_along_axis (cummax's and median's) and pick_along_axis."""
    x = rng.standard_normal((6, 700)).astype(np.float32)
    g = rng.standard_normal((6, 700)).astype(np.float32)

    def grad_of(f):
        def run(t, w):
            t.stop_gradient = False
            y = f(t)
            return oar.grad([y], [t], grad_outputs=[w])[0]
        return run

    same(grad_of(lambda t: oar.cumsum(t, axis=1)), x, g, tol=1e-4)
    same(grad_of(lambda t: oar.cumprod(t, dim=1)), rng.uniform(0.9, 1.1, (6, 700)).astype(np.float32), g, tol=1e-3)
    same(grad_of(lambda t: oar.cummax(t, axis=1)[0]), x, g, tol=1e-4)  # atomic sums: any order
    same(grad_of(lambda t: oar.cummin(t, axis=0)[0]), x, g, tol=1e-4)
    same(grad_of(lambda t: oar.median(t, axis=1)), x, g[:, :1].reshape(6).copy(), tol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "int8"])
def test_index_ops(dtype):
    x = rng.integers(-5, 5, (300, 130)).astype(dtype)
    idx = rng.integers(-300, 300, 1000)
    same(lambda t, i: oar.index_select(t, i, axis=0), x, idx)
    same(lambda t, i: oar.index_select(t, i[:50] % 130, axis=1), x, idx)
    v = rng.integers(-3, 3, (1000, 130)).astype(dtype)
    tol = 2e-2 if dtype == "float16" else 1e-5
    same(lambda t, i, u: oar.index_add(t, i, 0, u), x, idx, v, tol=tol)
    ti = rng.integers(-130, 130, (300, 400))
    same(lambda t, i: oar.take_along_axis(t, i, 1), x, ti)
    same(lambda t, i: oar.take_along_axis(t, i, 0), x, rng.integers(0, 300, (50, 130)))
    nd = np.stack([rng.integers(0, 300, 2000), rng.integers(0, 130, 2000)], axis=-1)
    same(lambda t, i: oar.gather_nd(t, i), x, nd)
    same(lambda t, i: oar.gather_nd(t, i), x, nd[:, :1].copy())
    same(lambda t, i, u: oar.scatter_nd_add(t, i, u), x, nd, rng.integers(-3, 3, 2000).astype(dtype), tol=tol)
    same(lambda t, i, u: oar.scatter(t, i, u, overwrite=True), x, idx % 300, v)  # repeated rows: the last wins
    same(lambda t, i, u: oar.scatter(t, i, u, overwrite=False), x, idx % 300, v, tol=tol)


@pytest.mark.parametrize("reduce", ["assign", "add", "mul", "mean", "amin", "amax"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("lines,n", [(3, 2000), (5000, 3), (5000, 1), (2, 6)])
def test_put_along_axis(reduce, include_self, lines, n):
    x = rng.uniform(-2, 2, (lines, 40)).astype(np.float32)
    idx = rng.integers(-40, 40, (lines, n))
    v = rng.uniform(0.5, 1.5, (lines, n)).astype(np.float32)
    tol = 1e-3 if reduce in ("add", "mean", "mul") else 0
    same(lambda t, i, u: oar.put_along_axis(t, i, u, 1, reduce=reduce, include_self=include_self), x, idx, v,
         tol=tol)
    xi = rng.integers(-9, 9, (lines, 40)).astype(np.int32)
    vi = rng.integers(1, 3, (lines, n)).astype(np.int32)
    if reduce != "mul":  # products of thousands of integers overflow
        same(lambda t, i, u: oar.put_along_axis(t, i, u, 1, reduce=reduce, include_self=include_self), xi, idx, vi)
    xt = np.ascontiguousarray(x.T)  # along axis 0 of a transposed view, in place
    same(lambda t, i, u: oar.put_along_axis_(t.t().clone().t(), i, u, 0, reduce=reduce, include_self=include_self),
         xt, np.ascontiguousarray(idx.T), np.ascontiguousarray(v.T), tol=tol)


def test_take_along_axis_gradient():
    """The gradient of a cross-entropy's pick: put_along_axis adding into zeros."""
    logits = rng.standard_normal((4096, 1000)).astype(np.float32)
    labels = rng.integers(0, 1000, (4096, 1))
    g = rng.standard_normal((4096, 1)).astype(np.float32)

    def run(t, i, w):
        t.stop_gradient = False
        return oar.grad([oar.take_along_axis(t, i, 1)], [t], grad_outputs=[w])[0]

    same(run, logits, labels, g)
    same(run, logits[:8].copy(), rng.integers(0, 1000, (8, 500)), rng.standard_normal((8, 500)).astype(np.float32),
         tol=1e-4)


def test_embedding_gradient():
    w = rng.standard_normal((500, 64)).astype(np.float32)
    ids = rng.integers(0, 500, (8, 256))
    g = rng.standard_normal((8, 256, 64)).astype(np.float32)

    def run(t, i, dy):
        t.stop_gradient = False
        return oar.grad([oar.nn.functional.embedding(i, t)], [t], grad_outputs=[dy])[0]

    same(run, w, ids, g, tol=1e-4)


def test_concat_and_slice_scatter():
    parts = [rng.standard_normal((3, k, 5)).astype(np.float32) for k in (1, 4, 0, 7)]
    same(lambda *ts: oar.concat(list(ts), axis=1), *parts)
    same(lambda *ts: oar.concat([ts[0].transpose([0, 2, 1]), ts[1].transpose([0, 2, 1])], axis=2), *parts[:2])
    same(lambda *ts: oar.concat(list(ts), axis=0), *[rng.standard_normal((k, 3)).astype(np.float16) for k in (2, 5)])

    def assign(t, v):
        t = t.clone()
        t[1:3, ::2] = v
        return t

    same(assign, rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32))
    same(assign, rng.standard_normal((4, 6)).astype(np.float32), np.float32(2.5))


def test_index_errors_match_the_cpu():
    for device in ("cpu", GPU):
        with oar.device.device_guard(device):
            x = oar.zeros([3, 4])
            with pytest.raises(IndexError, match=r"^\[oar.index_select\] index 5 is out of bounds for axis 0"):
                oar.index_select(x, [0, 5, 7])
            with pytest.raises(IndexError, match=r"^\[oar.take_along_axis\] index -5 is out of bounds for axis 1"):
                oar.take_along_axis(x, oar.to_tensor([[0, -5]], dtype="int32"), 1)
            with pytest.raises(IndexError, match=r"^\[oar.gather_nd\] index 4 is out of bounds for axis 1 with size 4"):
                oar.gather_nd(x, [[0, 1], [2, 4]])
            y = oar.zeros([3, 4])
            with pytest.raises(IndexError, match=r"^\[oar.put_along_axis\] index 9 is out of bounds"):
                oar.put_along_axis_(y, [[0, 9]], 1.0, 1)
            assert not y.numpy().any()  # an in-place op leaves the tensor as it was
            assert device.split(":")[0] in str(y.place).lower()
