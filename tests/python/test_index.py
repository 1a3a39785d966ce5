"""Indexing, gathering, scattering and sorting ops against NumPy, gradients
against central finite differences (float64), and error inputs."""
import numpy as np
import pytest

import oar

RNG = np.random.default_rng(0)
DTYPES = [np.float32, np.float64, np.int64]


def t(a, grad=False):
    x = oar.to_tensor(np.asarray(a))
    x.stop_gradient = not grad
    return x


def rand(shape, dtype=np.float64):
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-5, 5, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def numgrad(f, x, eps=1e-6):
    """d sum(f(x) * w) / dx by central differences, with a fixed random weight w."""
    w = None
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        fp, fm = f(xp), f(xm)
        if w is None:
            w = np.random.default_rng(1).standard_normal(fp.shape)
        g[i] = ((fp * w).sum() - (fm * w).sum()) / (2 * eps)
    return g, w


def check_grad(fn, x_np):
    """fn maps an oar tensor to an oar tensor; compares autograd with finite differences."""
    ng, w = numgrad(lambda a: fn(t(a)).numpy(), x_np)
    x = t(x_np, grad=True)
    y = fn(x)
    (g,) = oar.grad([y], [x], [t(w.reshape(y.shape))])
    np.testing.assert_allclose(g.numpy(), ng, rtol=1e-5, atol=1e-6)


# ---- forward vs NumPy

@pytest.mark.parametrize("dt", DTYPES)
def test_gather_index_select(dt):
    x = rand((4, 5, 3), dt)
    idx = np.array([3, 0, 0, -1])
    for axis in (0, 1, 2, -1):
        i = idx % x.shape[axis]
        np.testing.assert_array_equal(oar.gather(t(x), t(i), axis=axis).numpy(), np.take(x, i, axis=axis))
        np.testing.assert_array_equal(oar.index_select(t(x), t(i.astype(np.int32)), axis=axis).numpy(),
                                      np.take(x, i, axis=axis))
    np.testing.assert_array_equal(oar.gather(t(x), t(np.int64(2)), axis=1).numpy(), x[:, 2])
    np.testing.assert_array_equal(oar.index_select(t(x), t(np.array([-1])), axis=0).numpy(), x[[-1]])
    # empty index
    assert oar.gather(t(x), t(np.zeros([0], np.int64)), axis=1).shape == [4, 0, 3]
    # non-contiguous input
    xt = t(x).transpose([2, 0, 1])
    np.testing.assert_array_equal(oar.index_select(xt, t(np.array([1, 0])), axis=2).numpy(),
                                  np.take(x.transpose(2, 0, 1), [1, 0], axis=2))


@pytest.mark.parametrize("dt", DTYPES)
def test_gather_nd_scatter(dt):
    x = rand((3, 4, 2), dt)
    idx = np.array([[0, 1], [2, 3], [0, 1]])
    np.testing.assert_array_equal(oar.gather_nd(t(x), t(idx)).numpy(), x[idx[:, 0], idx[:, 1]])
    idx3 = np.array([[[1, 2, 1]]])
    np.testing.assert_array_equal(oar.gather_nd(t(x), t(idx3)).numpy(), x[1, 2, 1].reshape(1, 1))
    upd = rand((3, 2), dt)
    ref = x.copy()
    np.add.at(ref, (idx[:, 0], idx[:, 1]), upd)
    np.testing.assert_allclose(oar.scatter_nd_add(t(x), t(idx), t(upd)).numpy(), ref, rtol=1e-6)
    # scatter along axis 0
    u = rand((2, 4, 2), dt)
    ref = x.copy()
    ref[[2, 0]] = u
    np.testing.assert_array_equal(oar.scatter(t(x), t(np.array([2, 0])), t(u)).numpy(), ref)
    ref = x.copy()
    ref[1] = 0
    ref[1] += u[0] + u[1]
    np.testing.assert_allclose(oar.scatter(t(x), t(np.array([1, 1])), t(u), overwrite=False).numpy(), ref, rtol=1e-6)
    # empty index
    assert oar.gather_nd(t(x), t(np.zeros([0, 2], np.int64))).shape == [0, 2]
    np.testing.assert_array_equal(oar.scatter_nd_add(t(x), t(np.zeros([0, 1], np.int64)),
                                                     t(np.zeros([0, 4, 2], dt))).numpy(), x)


@pytest.mark.parametrize("dt", DTYPES)
def test_index_add(dt):
    x = rand((3, 4), dt)
    v = rand((3, 3), dt)
    idx = np.array([1, 3, 1])
    ref = x.copy()
    np.add.at(ref, (slice(None), idx), v)
    np.testing.assert_allclose(oar.index_add(t(x), t(idx), 1, t(v)).numpy(), ref, rtol=1e-6)


@pytest.mark.parametrize("dt", DTYPES)
def test_take_put_along_axis(dt):
    x = rand((3, 5), dt)
    idx = RNG.integers(0, 5, size=(3, 4))
    np.testing.assert_array_equal(oar.take_along_axis(t(x), t(idx), axis=1).numpy(),
                                  np.take_along_axis(x, idx, axis=1))
    idx0 = RNG.integers(0, 3, size=(2, 5))
    np.testing.assert_array_equal(oar.take_along_axis(t(x), t(idx0), axis=0).numpy(),
                                  np.take_along_axis(x, idx0, axis=0))
    # broadcasting of the indices
    ib = np.array([[4, 0]])
    np.testing.assert_array_equal(oar.take_along_axis(t(x), t(ib), axis=1).numpy(),
                                  np.take_along_axis(x, np.broadcast_to(ib, (3, 2)), axis=1))
    vals = rand((3, 2), dt)
    pidx = np.array([[0, 2], [1, 4], [3, 3]])
    ref = x.copy()
    np.put_along_axis(ref, pidx[:, :1], vals[:, :1], axis=1)
    np.testing.assert_array_equal(oar.put_along_axis(t(x), t(pidx[:, :1]), t(vals[:, :1]), axis=1).numpy(), ref)
    ref = x.copy()
    for r in range(3):
        for c in range(2):
            ref[r, pidx[r, c]] += vals[r, c]
    np.testing.assert_allclose(oar.put_along_axis(t(x), t(pidx), t(vals), axis=1, reduce="add").numpy(), ref,
                               rtol=1e-6)
    # a scalar value broadcasts
    ref = x.copy()
    np.put_along_axis(ref, pidx, 7, axis=1)
    np.testing.assert_array_equal(oar.put_along_axis(t(x), t(pidx), 7, axis=1).numpy(), ref)


@pytest.mark.parametrize("dt", DTYPES)
def test_masked(dt):
    x = rand((3, 4), dt)
    m = RNG.random((3, 4)) > 0.5
    np.testing.assert_array_equal(oar.masked_select(t(x), t(m)).numpy(), x[m])
    np.testing.assert_array_equal(oar.masked_fill(t(x), t(m), 2).numpy(), np.where(m, dt(2), x))
    # broadcast mask
    mb = np.array([True, False, False, True])
    np.testing.assert_array_equal(oar.masked_select(t(x), t(mb)).numpy(), x[np.broadcast_to(mb, x.shape)])
    np.testing.assert_array_equal(oar.masked_fill(t(x), t(mb), t(np.array(3, dt))).numpy(), np.where(mb, dt(3), x))
    assert oar.masked_select(t(x), t(np.zeros((3, 4), bool))).shape == [0]


@pytest.mark.parametrize("dt", DTYPES + [np.bool_])
def test_nonzero(dt):
    x = (RNG.random((3, 4, 2)) > 0.6).astype(dt)
    np.testing.assert_array_equal(oar.nonzero(t(x)).numpy(), np.stack(np.nonzero(x), axis=1))
    tup = oar.nonzero(t(x), as_tuple=True)
    assert len(tup) == 3
    for a, b in zip(tup, np.nonzero(x)):
        np.testing.assert_array_equal(a.numpy().reshape(-1), b)
    assert oar.nonzero(t(np.zeros((2, 3), dt))).shape == [0, 2]
    assert oar.nonzero(t(np.zeros((0,), dt))).shape == [0, 1]


@pytest.mark.parametrize("dt", DTYPES)
def test_sort_argsort(dt):
    x = RNG.integers(0, 4, size=(4, 6)).astype(dt)  # many ties: checks stability
    for axis in (0, 1, -1):
        np.testing.assert_array_equal(oar.sort(t(x), axis=axis).numpy(), np.sort(x, axis=axis))
        np.testing.assert_array_equal(oar.argsort(t(x), axis=axis, stable=True).numpy(),
                                      np.argsort(x, axis=axis, kind="stable"))
        np.testing.assert_array_equal(oar.sort(t(x), axis=axis, descending=True).numpy(),
                                      -np.sort(-x, axis=axis))
        np.testing.assert_array_equal(oar.argsort(t(x), axis=axis, descending=True, stable=True).numpy(),
                                      np.argsort(-x, axis=axis, kind="stable"))
    assert oar.sort(t(np.zeros((0, 3), dt))).shape == [0, 3]
    assert oar.argsort(t(np.array(5, dt))).numpy() == 0


def test_sort_nan_last():
    x = np.array([3.0, np.nan, 1.0, 2.0])
    np.testing.assert_array_equal(oar.sort(t(x)).numpy(), np.sort(x))
    np.testing.assert_array_equal(oar.argsort(t(x)).numpy(), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("dt", DTYPES)
def test_topk(dt):
    x = rand((4, 7), dt)
    for axis in (0, 1):
        for k in (0, 1, 3):
            v, i = oar.topk(t(x), k, axis=axis)
            ref_i = np.argsort(-x, axis=axis, kind="stable").take(range(k), axis=axis)
            np.testing.assert_array_equal(i.numpy(), ref_i)
            np.testing.assert_array_equal(v.numpy(), np.take_along_axis(x, ref_i, axis=axis))
            v, i = oar.topk(t(x), k, axis=axis, largest=False)
            ref_i = np.argsort(x, axis=axis, kind="stable").take(range(k), axis=axis)
            np.testing.assert_array_equal(v.numpy(), np.take_along_axis(x, ref_i, axis=axis))
    v, i = oar.topk(t(x), 2)  # default axis -1
    np.testing.assert_array_equal(v.numpy(), -np.sort(-x, axis=1)[:, :2])


@pytest.mark.parametrize("dt", DTYPES)
def test_unique(dt):
    x = RNG.integers(0, 5, size=(4, 5)).astype(dt)
    out, idx, inv, cnt = oar.unique(t(x), return_index=True, return_inverse=True, return_counts=True)
    r_out, r_idx, r_inv, r_cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(out.numpy(), r_out)
    np.testing.assert_array_equal(idx.numpy(), r_idx)
    np.testing.assert_array_equal(inv.numpy(), r_inv.reshape(-1))
    np.testing.assert_array_equal(cnt.numpy(), r_cnt)
    xr = np.array([[1, 2], [0, 1], [1, 2], [0, 0]]).astype(dt)
    for axis in (0, 1):
        out, inv, cnt = oar.unique(t(xr), return_inverse=True, return_counts=True, axis=axis)
        r_out, r_inv, r_cnt = np.unique(xr, return_inverse=True, return_counts=True, axis=axis)
        np.testing.assert_array_equal(out.numpy(), r_out)
        np.testing.assert_array_equal(inv.numpy(), r_inv.reshape(-1))
        np.testing.assert_array_equal(cnt.numpy(), r_cnt)
    assert oar.unique(t(np.zeros([0], dt))).shape == [0]
    assert oar.unique(t(x), return_index=True, dtype="int32")[1].dtype == oar.int32


@pytest.mark.parametrize("dt", DTYPES)
def test_searchsorted(dt):
    s = np.sort(rand((10,), dt))
    v = rand((3, 4), dt)
    for right in (False, True):
        side = "right" if right else "left"
        np.testing.assert_array_equal(oar.searchsorted(t(s), t(v), right=right).numpy(),
                                      np.searchsorted(s, v, side=side))
    sb = np.sort(rand((3, 6), dt), axis=1)
    vb = rand((3, 2), dt)
    ref = np.stack([np.searchsorted(sb[i], vb[i]) for i in range(3)])
    np.testing.assert_array_equal(oar.searchsorted(t(sb), t(vb)).numpy(), ref)
    assert oar.searchsorted(t(s), t(v), out_int32=True).dtype == oar.int32


# ---- advanced indexing

@pytest.mark.parametrize("dt", DTYPES)
def test_getitem_advanced(dt):
    x = rand((4, 5, 3), dt)
    xt = t(x)
    m = x > 0 if dt != np.int64 else x > 1
    idx = np.array([[3, 0], [1, 1]])
    cases = [
        (t(m), m),
        (t(m[:, :, 0]), m[:, :, 0]),
        (t(idx), idx),
        ([2, 0, 2], [2, 0, 2]),
        ((slice(None), t(np.array([4, 0]))), (slice(None), np.array([4, 0]))),
        ((t(np.array([0, 2])), slice(1, 3), t(np.array([1, 2]))), (np.array([0, 2]), slice(1, 3), np.array([1, 2]))),
        ((slice(None), t(np.array([[0], [4]])), t(np.array([1, 2]))),
         (slice(None), np.array([[0], [4]]), np.array([1, 2]))),
        ((1, t(np.array([0, 3]))), (1, np.array([0, 3]))),
        ((Ellipsis, [2, 0]), (Ellipsis, [2, 0])),
        ((t(np.array([0, 1])), slice(None, None, -1)), (np.array([0, 1]), slice(None, None, -1))),
        (t(np.zeros([0], np.int64)), np.zeros([0], np.int64)),
    ]
    for oi, ni in cases:
        got = xt[oi].numpy()
        want = x[ni]
        assert got.shape == want.shape, (ni, got.shape, want.shape)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", DTYPES)
def test_setitem_advanced(dt):
    x = rand((4, 5), dt)
    cases = [
        (lambda a: a > 0, 0),
        (lambda a: [1, 3], rand((2, 5), dt)),
        (lambda a: (slice(None), [0, 4]), 9),
        (lambda a: ([0, 2], [1, 3]), rand((2,), dt)),
        (lambda a: np.array([True, False, True, False]), rand((5,), dt)),
    ]
    for make_idx, val in cases:
        ref = x.copy()
        idx = make_idx(x)
        ref[idx] = val
        xt = t(x)
        before = xt
        oi = tuple(t(i) if isinstance(i, np.ndarray) else i for i in idx) if isinstance(idx, tuple) else \
            (t(idx) if isinstance(idx, np.ndarray) else idx)
        xt[oi] = t(val) if isinstance(val, np.ndarray) else val
        assert xt is before
        np.testing.assert_array_equal(xt.numpy(), ref)


def test_setitem_writes_into_storage_of_views():
    x = t(np.zeros((3, 4)))
    v = x.transpose([1, 0])  # non-contiguous view sharing x's storage
    v[t(np.array([1, 3]))] = 5.0
    ref = np.zeros((3, 4))
    ref[:, [1, 3]] = 5.0
    np.testing.assert_array_equal(x.numpy(), ref)


# ---- gradients vs finite differences (float64)

def test_grad_gather_index_select():
    x = rand((4, 3))
    idx = t(np.array([2, 0, 2]))
    check_grad(lambda a: oar.gather(a, idx, axis=0), x)
    check_grad(lambda a: oar.index_select(a, idx, axis=1), x)
    check_grad(lambda a: oar.gather_nd(a, t(np.array([[0, 1], [3, 2], [0, 1]]))), x)


def test_grad_scatter_index_add():
    x = rand((4, 3))
    u = rand((2, 3))
    check_grad(lambda a: oar.scatter(a, t(np.array([1, 3])), t(u)), x)
    check_grad(lambda b: oar.scatter(t(x), t(np.array([1, 1])), b, overwrite=False), u)
    check_grad(lambda b: oar.index_add(t(x), t(np.array([0, 0])), 0, b), u)
    check_grad(lambda b: oar.scatter_nd_add(t(x), t(np.array([[1], [1]])), b), u)


def test_grad_along_axis():
    x = rand((3, 5))
    idx = t(RNG.integers(0, 5, size=(3, 4)))
    check_grad(lambda a: oar.take_along_axis(a, idx, axis=1), x)
    v = rand((3, 2))
    pidx = t(np.array([[0, 2], [1, 4], [3, 0]]))
    check_grad(lambda b: oar.put_along_axis(t(x), pidx, b, axis=1), v)
    check_grad(lambda a: oar.put_along_axis(a, pidx, t(v), axis=1), x)
    check_grad(lambda a: oar.put_along_axis(a, pidx, t(v), axis=1, reduce="add"), x)


def test_grad_masked_sort_topk():
    x = rand((3, 4))
    m = t(RNG.random((3, 4)) > 0.5)
    check_grad(lambda a: oar.masked_fill(a, m, 0.5), x)
    check_grad(lambda a: oar.masked_select(a, m), x)
    check_grad(lambda a: oar.sort(a, axis=0), x)
    check_grad(lambda a: oar.sort(a, axis=1, descending=True), x)
    check_grad(lambda a: oar.topk(a, 2, axis=1)[0], x)
    check_grad(lambda a: oar.unique(a), np.array([1.0, 3.0, 2.0]))


def test_grad_getitem_setitem():
    x = rand((4, 3))
    check_grad(lambda a: a[t(np.array([3, 1, 3]))], x)
    check_grad(lambda a: a[:, t(np.array([2, 0]))], x)
    check_grad(lambda a: a[a.detach() > 0], x)
    check_grad(lambda a: a[t(np.array([0, 2])), t(np.array([1, 1]))], x)

    def set_rows(v):
        base = t(x) * 1.0
        base[t(np.array([2, 0]))] = v
        return base
    check_grad(set_rows, rand((2, 3)))

    def set_mask(a):
        b = a * 2.0
        b[t(x > 0)] = 0.0
        return b
    check_grad(set_mask, x)


# ---- errors

def test_errors():
    x = t(np.arange(5.0))
    with pytest.raises(IndexError, match=r"^\[oar.gather\] index 7 is out of bounds for axis 0 with size 5"):
        oar.gather(x, t(np.array([1, 7])))
    with pytest.raises(IndexError, match=r"^\[oar.index_select\] index -6 is out of bounds"):
        oar.index_select(x, t(np.array([-6])))
    with pytest.raises(IndexError, match=r"^\[oar.gather_nd\] index 5 is out of bounds for axis 0 with size 5"):
        oar.gather_nd(x, t(np.array([[5]])))
    with pytest.raises(IndexError, match=r"^\[oar.scatter_nd_add\] scatter_nd: index 9 is out of bounds"):
        oar.scatter_nd_add(x, t(np.array([[9]])), t(np.array([1.0])))
    with pytest.raises(IndexError, match=r"^\[oar.take_along_axis\] index 5 is out of bounds"):
        oar.take_along_axis(x, t(np.array([5])), 0)
    with pytest.raises(IndexError, match=r"^\[oar.put_along_axis\] index 8 is out of bounds"):
        oar.put_along_axis(x, t(np.array([8])), 1.0, 0)
    with pytest.raises(IndexError, match=r"^\[oar.index_add\] index 5 is out of bounds"):
        oar.index_add(x, t(np.array([5])), 0, t(np.array([1.0])))
    with pytest.raises(TypeError, match=r"^\[oar.gather\] index must be an int32 or int64 tensor"):
        oar.gather(x, t(np.array([1.0])))
    with pytest.raises(TypeError, match=r"^\[oar.take_along_axis\] indices must be"):
        oar.take_along_axis(x, t(np.array([True])), 0)
    with pytest.raises(IndexError, match=r"^\[oar.gather\] axis 3 is out of range"):
        oar.gather(x, t(np.array([0])), axis=3)
    with pytest.raises(ValueError, match=r"^\[oar.topk\] k must be in"):
        oar.topk(x, 6)
    with pytest.raises(ValueError, match=r"^\[oar.gather_nd\]"):
        oar.gather_nd(x, t(np.array([[0, 0]])))
    with pytest.raises(TypeError, match=r"^\[oar.masked_select\] mask must be a bool tensor"):
        oar.masked_select(x, x)
    with pytest.raises(ValueError, match=r"^\[oar.masked_select\]"):
        oar.masked_select(x, t(np.array([True, False])))
    with pytest.raises(TypeError, match=r"^\[oar.argsort\] complex"):
        oar.argsort(oar.to_tensor([1 + 1j]))
    with pytest.raises(ValueError, match=r"^\[oar.searchsorted\]"):
        oar.searchsorted(t(np.zeros((2, 3))), t(np.zeros((3, 1))))
    with pytest.raises(ValueError, match=r"^\[oar.put_along_axis\] reduce must be one of .* got 'median'"):
        oar.put_along_axis(x, t(np.array([0])), 1.0, 0, reduce="median")
    with pytest.raises(ValueError, match=r"^\[oar.put_along_axis\] reduce must be one of"):
        oar.put_along_axis_(x, t(np.array([0])), 1.0, 0, reduce="sum")
    with pytest.raises(TypeError, match=r"^\[oar.put_along_axis\] reduce='amin'/'amax' needs a real dtype"):
        oar.put_along_axis(oar.to_tensor([1 + 1j]), t(np.array([0])), oar.to_tensor([2j]), 0, reduce="amax")
    with pytest.raises(ValueError, match=r"^\[oar.put_along_axis\] indices shape \[3, 1\] must not exceed"):
        oar.put_along_axis(t(np.zeros((2, 3))), t(np.zeros((3, 1), np.int64)), 1.0, 1, broadcast=False)
    with pytest.raises(ValueError, match=r"^\[oar.put_along_axis\] indices must have as many dims"):
        oar.put_along_axis(t(np.zeros((2, 3))), t(np.array([0])), 1.0, 1, broadcast=False)
    with pytest.raises(ValueError, match=r"^\[oar.put_along_axis\]"):
        oar.put_along_axis(t(np.zeros((2, 3))), t(np.zeros((2, 1), np.int64)), t(np.zeros((2, 4))), 1)
    with pytest.raises(IndexError, match=r"^\[Tensor.__getitem__\] index 7 is out of bounds for axis 0 with size 5"):
        x[t(np.array([7]))]
    with pytest.raises(IndexError, match=r"^\[Tensor.__getitem__\]"):
        x[[1, 9]]
    with pytest.raises(IndexError, match=r"^\[Tensor.__getitem__\]"):
        x[t(np.array([True, False]))]
    with pytest.raises(IndexError, match=r"^\[Tensor.__getitem__\] tensor indices must be integer or bool"):
        x[t(np.array([1.0]))]
    with pytest.raises(IndexError, match=r"^\[Tensor.__setitem__\]"):
        x[[5]] = 1.0
    with pytest.raises(ValueError, match=r"^\[Tensor.__setitem__\]"):
        x[[0, 1]] = t(np.zeros(3))


# ---- put_along_axis: every reduce mode against a NumPy reference loop

PUT_MODES = ["assign", "add", "mul", "multiply", "mean", "amin", "amax"]


def put_ref(arr, idx, vals, axis, reduce="assign", include_self=True):
    """Paddle put_along_axis, one index entry at a time (idx may cover a corner of arr)."""
    out = arr.copy()
    axis %= arr.ndim
    contrib = {}
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[axis] = int(idx[pos]) % arr.shape[axis]
        contrib.setdefault(tuple(tgt), []).append(vals[pos])
    for tgt, vs in contrib.items():
        if reduce == "assign":
            out[tgt] = vs[-1]
            continue
        vs = ([arr[tgt]] if include_self else []) + vs
        if reduce == "add":
            r = sum(vs[1:], vs[0])
        elif reduce in ("mul", "multiply"):
            r = vs[0]
            for v in vs[1:]:
                r = r * v
        elif reduce == "mean":
            s = sum(int(v) for v in vs) if arr.dtype.kind == "i" else sum(vs[1:], vs[0])
            if arr.dtype.kind == "i":  # truncation toward zero
                r = abs(s) // len(vs) * (1 if s >= 0 else -1)
            else:
                r = s / len(vs)
        elif reduce == "amin":
            r = min(vs)
        else:
            r = max(vs)
        out[tgt] = r
    return out


def assert_put(got, ref):
    if ref.dtype.kind == "f":
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("reduce", PUT_MODES)
@pytest.mark.parametrize("include_self", [True, False])
def test_put_along_axis_modes(dt, reduce, include_self):
    x = rand((3, 4, 5), dt)
    for axis in (1, -1, 0):
        n = x.shape[axis]
        ishape = list(x.shape)
        ishape[axis] = 7  # more entries than the axis: duplicates guaranteed
        idx = RNG.integers(-n, n, size=ishape)  # negative entries too
        vals = rand(ishape, dt)
        got = oar.put_along_axis(t(x), t(idx), t(vals), axis, reduce=reduce, include_self=include_self)
        assert got.dtype == t(x).dtype
        assert_put(got.numpy(), put_ref(x, idx, vals, axis, reduce, include_self))
        # int32 indices, and a scalar value
        got = oar.put_along_axis(t(x), t(idx.astype(np.int32)), 2, axis, reduce, include_self)
        assert_put(got.numpy(), put_ref(x, idx, np.full(ishape, 2, dt), axis, reduce, include_self))


def test_put_along_axis_integer_mean_truncates():
    x = np.array([[-7, 0, 7]], np.int64)
    idx = np.array([[0, 2, 1]])
    got = oar.put_along_axis(t(x), t(idx), t(np.array([[0, 0, -1]])), 1, "mean").numpy()
    np.testing.assert_array_equal(got, [[-3, 0, 3]])  # -7/2 -> -3, -1/2 -> 0, 7/2 -> 3


def test_put_along_axis_broadcast():
    x = rand((4, 5))
    # broadcast=True: a single row of indices and a scalar/row of values serve every row
    ib = np.array([[4, 0, 4]])
    vb = rand((1, 3))
    for reduce in PUT_MODES:
        got = oar.put_along_axis(t(x), t(ib), t(vb), 1, reduce)
        assert_put(got.numpy(), put_ref(x, np.broadcast_to(ib, (4, 3)), np.broadcast_to(vb, (4, 3)), 1, reduce))
    # broadcast=False: indices cover a corner of arr, values larger than indices are cut to their shape
    idx = np.array([[1, 1, 3], [0, 4, 4]])
    vals = rand((3, 4))
    for reduce in PUT_MODES:
        for inc in (True, False):
            got = oar.put_along_axis(t(x), t(idx), t(vals), 1, reduce, inc, broadcast=False)
            assert_put(got.numpy(), put_ref(x, idx, vals[:2, :3], 1, reduce, inc))
    idx0 = np.array([[3, 0], [3, 3]])  # along axis 0, covering columns 0..1
    got = oar.put_along_axis(t(x), t(idx0), 1.5, 0, "add", broadcast=False)
    assert_put(got.numpy(), put_ref(x, idx0, np.full((2, 2), 1.5), 0, "add"))


def test_put_along_axis_zero_size_and_noncontiguous():
    x = np.zeros((0, 3))
    got = oar.put_along_axis(t(x), t(np.zeros((0, 2), np.int64)), t(np.zeros((0, 2))), 1, "mean")
    assert got.shape == [0, 3]
    y = rand((3, 4))
    for reduce in PUT_MODES:
        got = oar.put_along_axis(t(y), t(np.zeros((3, 0), np.int64)), 1.0, 1, reduce, include_self=False)
        np.testing.assert_array_equal(got.numpy(), y)
    base = rand((5, 3))
    xt = oar.transpose(t(base), [1, 0])  # a non-contiguous [3, 5] view
    idx = np.array([[0, 0, 4], [2, 1, 2], [3, 3, 3]])
    vals_base = rand((3, 3))
    vt = oar.transpose(t(vals_base), [1, 0])
    for reduce in PUT_MODES:
        got = oar.put_along_axis(xt, t(idx), vt, 1, reduce, include_self=False)
        assert_put(got.numpy(), put_ref(base.T.copy(), idx, vals_base.T.copy(), 1, reduce, False))


def test_put_along_axis_method_and_inplace():
    x = rand((3, 4))
    idx = np.array([[1, 1], [0, 3], [2, 2]])
    vals = rand((3, 2))
    ref = put_ref(x, idx, vals, 1, "amin", False)
    assert_put(t(x).put_along_axis(t(idx), t(vals), 1, "amin", False).numpy(), ref)
    a = t(x.copy())
    r = oar.put_along_axis_(a, t(idx), t(vals), 1, reduce="amin", include_self=False)
    assert r is a
    assert_put(a.numpy(), ref)
    b = t(x.copy())
    b.put_along_axis_(t(idx), t(vals), 1, "mul")
    assert_put(b.numpy(), put_ref(x, idx, vals, 1, "mul"))


def test_put_along_axis_inplace_on_a_strided_view():
    idx = np.array([[0, 0], [1, 3], [2, 2]])
    vals = rand((3, 2))
    for reduce in PUT_MODES:
        base = rand((4, 3))
        view = oar.transpose(t(base), [1, 0])  # a non-contiguous [3, 4] view of base's storage
        oar.put_along_axis_(view, t(idx), t(vals), 1, reduce, include_self=False)
        assert_put(view.numpy(), put_ref(base.T.copy(), idx, vals, 1, reduce, False))


# gradients: a fixed index with duplicates (3 writes to one position, 2 to
# another) and an unwritten position in every row
GRAD_IDX = np.array([[0, 2, 0, 0], [1, 4, 1, 3], [3, 0, 3, 3]])


@pytest.mark.parametrize("reduce", ["assign", "add", "mul", "mean", "amin", "amax"])
@pytest.mark.parametrize("include_self", [True, False])
def test_grad_put_along_axis_modes(reduce, include_self):
    x = rand((3, 5))
    v = rand((3, 4))  # continuous random values: no ties, so amin/amax are smooth here
    pidx = t(GRAD_IDX)
    check_grad(lambda a: oar.put_along_axis(a, pidx, t(v), 1, reduce, include_self), x)
    check_grad(lambda b: oar.put_along_axis(t(x), pidx, b, 1, reduce, include_self), v)
    # along axis 0, with broadcast=False indices covering a corner
    i0 = t(np.array([[2, 2], [0, 2]]))
    check_grad(lambda a: oar.put_along_axis(a, i0, t(v[:2, :2]), 0, reduce, include_self, False), x)
    check_grad(lambda b: oar.put_along_axis(t(x), i0, b, 0, reduce, include_self, False), v[:2, :2])


def test_grad_put_along_axis_mul_zeros():
    x = rand((3, 5))
    x[0, 0] = 0.0
    v = rand((3, 4))
    v[0, 0] = 0.0  # one zero among the three factors written to [0, 0] (plus arr's zero)
    v[1, 0] = 0.0  # a single zero factor at [1, 1]
    v[2, 0] = v[2, 2] = 0.0  # two zero factors at [2, 3]
    pidx = t(GRAD_IDX)
    for inc in (True, False):
        check_grad(lambda b: oar.put_along_axis(t(x), pidx, b, 1, "mul", inc), v)
        check_grad(lambda a: oar.put_along_axis(a, pidx, t(v), 1, "mul", inc), x)


def test_grad_put_along_axis_ties():
    x = np.array([[1.0, 5.0, 2.0, 0.0]])
    idx = np.array([[1, 1, 0, 3, 3]])
    v = np.array([[5.0, 3.0, 1.0, 4.0, 4.0]])
    w = np.array([[1.0, 2.0, 3.0, 4.0]])
    for reduce, inc in (("amax", True), ("amax", False), ("amin", True), ("amin", False)):
        # hand reference: each position's gradient is split evenly among the
        # contributors equal to the result
        out = put_ref(x, idx, v, 1, reduce, inc)
        gx_ref = w.copy()
        gv_ref = np.zeros_like(v)
        for p in set(idx[0]):
            js = [j for j in range(idx.shape[1]) if idx[0, j] == p]
            ties = [j for j in js if v[0, j] == out[0, p]]
            self_tie = inc and x[0, p] == out[0, p]
            share = w[0, p] / (len(ties) + self_tie)
            gx_ref[0, p] = share if self_tie else 0.0
            for j in ties:
                gv_ref[0, j] = share
        a, b = t(x, grad=True), t(v, grad=True)
        y = oar.put_along_axis(a, t(idx), b, 1, reduce, inc)
        ga, gb = oar.grad([y], [a, b], [t(w)])
        np.testing.assert_allclose(ga.numpy(), gx_ref, err_msg=f"{reduce} {inc}")
        np.testing.assert_allclose(gb.numpy(), gv_ref, err_msg=f"{reduce} {inc}")
    # amax with include_self, by hand: [0] ties arr's 1 with v 1 (w=1 halved), [1] ties arr's 5
    # with v 5 (w=2 halved), [2] is not written (w=3 to arr), [3] ties the two 4s (w=4 halved)
    a, b = t(x, grad=True), t(v, grad=True)
    y = oar.put_along_axis(a, t(idx), b, 1, "amax")
    ga, gb = oar.grad([y], [a, b], [t(w)])
    np.testing.assert_allclose(ga.numpy(), [[0.5, 1.0, 3.0, 0.0]])
    np.testing.assert_allclose(gb.numpy(), [[1.0, 0.0, 0.5, 2.0, 2.0]])


def test_grad_put_along_axis_inplace_and_second_order():
    x = rand((3, 5))
    v = rand((3, 4))
    pidx = t(GRAD_IDX)

    def inplace(b):
        base = t(x) * 1.0
        oar.put_along_axis_(base, pidx, b, 1, "mean", include_self=False)
        return base
    check_grad(inplace, v)
    # mul's gradient rule is built from differentiable ops: d/dv of (d out / d arr)
    check_grad(lambda b: oar.grad([oar.put_along_axis(ta := t(x, grad=True), pidx, b, 1, "mul")], [ta],
                                  [t(np.ones((3, 5)))], create_graph=True)[0], v)
