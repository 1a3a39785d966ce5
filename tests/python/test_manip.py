"""Shape manipulation ops against NumPy; gradients against central differences."""
import numpy as np
import pytest

import oar

DTYPES = ["float32", "float64", "int64"]
rng = np.random.default_rng(0)


def arr(shape, dtype="float64"):
    if dtype == "int64":
        return rng.integers(-9, 9, size=shape).astype(np.int64)
    return rng.standard_normal(shape).astype(dtype)


def T(a, grad=False):
    return oar.to_tensor(a, stop_gradient=not grad)


def noncontig(a):
    """A tensor equal to `a` (2-D or more) whose memory is not row-major."""
    t = oar.to_tensor(np.ascontiguousarray(np.swapaxes(a, 0, 1)))
    perm = list(range(a.ndim))
    perm[0], perm[1] = 1, 0
    return oar.transpose(t, perm)


def close(t, ref):
    got = t.numpy()
    assert got.shape == np.asarray(ref).shape, (got.shape, np.asarray(ref).shape)
    assert got.dtype == np.asarray(ref).dtype, (got.dtype, np.asarray(ref).dtype)
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=0)


def check_grad(fn, *arrays, eps=1e-6):
    """fn maps Tensors to one Tensor (or a list); checks d sum(w * out) / d inputs."""
    def run(*xs):
        out = fn(*xs)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    ts = [T(a, grad=True) for a in arrays]
    outs = run(*ts)
    ws = [rng.standard_normal(o.shape) for o in outs]
    loss = None
    for o, w in zip(outs, ws):
        term = (o * T(w)).sum()
        loss = term if loss is None else loss + term
    grads = oar.grad([loss], ts, allow_unused=True)

    def f(vals):
        res = run(*[T(v) for v in vals])
        return sum(float((o.numpy() * w).sum()) for o, w in zip(res, ws))

    for k, a in enumerate(arrays):
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            vals = [v.copy() for v in arrays]
            vals[k][idx] += eps
            fp = f(vals)
            vals[k][idx] -= 2 * eps
            fm = f(vals)
            num[idx] = (fp - fm) / (2 * eps)
        g = grads[k].numpy() if grads[k] is not None else np.zeros_like(a)
        np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- concat / stack


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_forward(dtype, axis):
    a, b, c = arr((2, 3, 4), dtype), arr((2, 3, 4), dtype), arr((2, 3, 4), dtype)
    close(oar.concat([T(a), T(b), T(c)], axis=axis), np.concatenate([a, b, c], axis=axis))
    sizes = [1, 0, 3]
    xs = [arr(tuple(s if d == axis % 3 else 3 for d in range(3)), dtype) for s in sizes]
    close(oar.concat([T(x) for x in xs], axis=axis), np.concatenate(xs, axis=axis))


def test_concat_noncontiguous_and_promotion():
    a = arr((3, 4))
    b = arr((4, 3))
    close(oar.concat([noncontig(a), T(a)], axis=1), np.concatenate([a, a], axis=1))
    close(oar.concat([T(a), noncontig(b.T.copy())], axis=0), np.concatenate([a, b.T], axis=0))
    x = oar.concat([T(np.ones((1, 2), np.int64)), T(np.ones((1, 2), np.float32))])
    assert x.dtype == oar.float32
    big = arr((200, 300), "float32")
    close(oar.concat([T(big), T(big)], axis=1), np.concatenate([big, big], axis=1))
    close(oar.concat([T(big), T(big)], axis=0), np.concatenate([big, big], axis=0))


def test_concat_axis_tensor_and_zero_size():
    a = arr((0, 3))
    close(oar.concat([T(a), T(a)], axis=oar.to_tensor(0)), np.concatenate([a, a]))


def test_concat_errors():
    with pytest.raises(ValueError, match=r"^\[oar.concat\]"):
        oar.concat([T(arr((2, 3))), T(arr((3, 3)))], axis=1)
    with pytest.raises(ValueError, match=r"^\[oar.concat\]"):
        oar.concat([T(arr((2, 3))), T(arr((2, 3, 1)))])
    with pytest.raises(ValueError, match=r"^\[oar.concat\]"):
        oar.concat([])
    with pytest.raises(ValueError, match=r"^\[oar.concat\]"):
        oar.concat([T(np.float64(1.0)), T(np.float64(2.0))])
    with pytest.raises(IndexError, match=r"^\[oar.concat\]"):
        oar.concat([T(arr((2, 3)))], axis=2)
    with pytest.raises(TypeError, match=r"^\[oar.concat\]"):
        oar.concat(T(arr((2, 3))))


def test_concat_grad():
    check_grad(lambda a, b: oar.concat([a, b], axis=1), arr((2, 3)), arr((2, 2)))
    check_grad(lambda a, b: oar.concat([a, b], axis=0), arr((2, 3)), arr((1, 3)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack_forward(dtype, axis):
    xs = [arr((2, 3), dtype) for _ in range(3)]
    close(oar.stack([T(x) for x in xs], axis=axis), np.stack(xs, axis=axis))


def test_stack_0d_noncontig_errors_grad():
    close(oar.stack([T(np.float64(1)), T(np.float64(2))]), np.array([1.0, 2.0]))
    a = arr((3, 4))
    close(oar.stack([noncontig(a), T(a)], axis=1), np.stack([a, a], axis=1))
    with pytest.raises(ValueError, match=r"^\[oar.stack\]"):
        oar.stack([T(arr((2, 3))), T(arr((3, 2)))])
    with pytest.raises(IndexError, match=r"^\[oar.stack\]"):
        oar.stack([T(arr((2, 3)))], axis=3)
    check_grad(lambda a, b: oar.stack([a, b], axis=1), arr((2, 3)), arr((2, 3)))


# ---------------------------------------------------------------- split / chunk / unbind


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_forward(dtype):
    a = arr((6, 4), dtype)
    for got, ref in zip(oar.split(T(a), 3), np.split(a, 3)):
        close(got, ref)
    for got, ref in zip(oar.split(T(a), [1, -1, 2], axis=0), np.split(a, [1, 4])):
        close(got, ref)
    for got, ref in zip(T(a).split([2, 2], axis=-1), np.split(a, 2, axis=1)):
        close(got, ref)
    for got, ref in zip(oar.split(noncontig(a.T.copy()), [3, 3], axis=1), np.split(a.T, 2, axis=1)):
        close(got, ref)
    parts = oar.split(T(a), [0, 6])
    assert parts[0].shape == [0, 4]


def test_split_errors_and_grad():
    a = arr((6, 4))
    with pytest.raises(ValueError, match=r"^\[oar.split\]"):
        oar.split(T(a), 4)
    with pytest.raises(ValueError, match=r"^\[oar.split\]"):
        oar.split(T(a), [2, 2])
    with pytest.raises(ValueError, match=r"^\[oar.split\]"):
        oar.split(T(a), [-1, -1])
    with pytest.raises(ValueError, match=r"^\[oar.split\]"):
        oar.split(T(a), [7, -1])
    with pytest.raises(IndexError, match=r"^\[oar.split\]"):
        oar.split(T(a), 2, axis=2)
    check_grad(lambda x: oar.split(x, [1, -1], axis=1), arr((2, 3)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_chunk_unbind(dtype):
    a = arr((4, 3, 2), dtype)
    for got, ref in zip(oar.chunk(T(a), 2, axis=0), np.split(a, 2, axis=0)):
        close(got, ref)
    for got, ref in zip(T(a).chunk(3, axis=1), np.split(a, 3, axis=1)):
        close(got, ref)
    us = oar.unbind(T(a), axis=1)
    assert len(us) == 3
    for i, u in enumerate(us):
        close(u, a[:, i])
    for i, u in enumerate(T(a).unbind(-1)):
        close(u, a[..., i])
    assert oar.unbind(T(arr((0, 2))), axis=0) == []
    with pytest.raises(ValueError, match=r"^\[oar.chunk\]"):
        oar.chunk(T(a), 3, axis=0)
    with pytest.raises(IndexError, match=r"^\[oar.unbind\]"):
        oar.unbind(T(a), axis=3)
    with pytest.raises(ValueError, match=r"^\[oar.unbind\]"):
        oar.unbind(T(np.float64(1.0)))


def test_chunk_unbind_grad():
    check_grad(lambda x: oar.unbind(x, axis=1), arr((2, 3)))
    check_grad(lambda x: oar.chunk(x, 2, axis=0), arr((4, 2)))


# ---------------------------------------------------------------- tile / repeat_interleave


@pytest.mark.parametrize("dtype", DTYPES)
def test_tile(dtype):
    a = arr((2, 3), dtype)
    for reps in ([2, 1], [1, 3], [2, 2, 2], [3], [1, 1], [0, 2]):
        close(oar.tile(T(a), reps), np.tile(a, reps))
    close(T(a).tile([2, 3]), np.tile(a, [2, 3]))
    close(oar.tile(noncontig(a.T.copy()), [2, 2]), np.tile(a.T, [2, 2]))
    close(oar.tile(T(np.float64(3.0)), [2, 2]), np.tile(np.float64(3.0), [2, 2]))
    close(oar.tile(T(a), oar.to_tensor([2, 1])), np.tile(a, [2, 1]))
    with pytest.raises(ValueError, match=r"^\[oar.tile\]"):
        oar.tile(T(a), [-1, 2])


def test_tile_grad():
    check_grad(lambda x: oar.tile(x, [2, 3]), arr((2, 2)))
    check_grad(lambda x: oar.tile(x, [2, 1, 2]), arr((3, 2)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat_interleave(dtype):
    a = arr((2, 3), dtype)
    close(oar.repeat_interleave(T(a), 2), np.repeat(a, 2))
    close(oar.repeat_interleave(T(a), 2, axis=1), np.repeat(a, 2, axis=1))
    close(T(a).repeat_interleave(3, axis=0), np.repeat(a, 3, axis=0))
    close(oar.repeat_interleave(T(a), [1, 0, 2], axis=1), np.repeat(a, [1, 0, 2], axis=1))
    close(oar.repeat_interleave(T(a), oar.to_tensor([2, 2, 1]), axis=-1), np.repeat(a, [2, 2, 1], axis=-1))
    close(oar.repeat_interleave(T(a), [0, 0], axis=0), np.repeat(a, [0, 0], axis=0))
    close(oar.repeat_interleave(noncontig(a.T.copy()), 2, axis=0), np.repeat(a.T, 2, axis=0))
    close(oar.repeat_interleave(T(a), 0, axis=0), np.repeat(a, 0, axis=0))
    with pytest.raises(ValueError, match=r"^\[oar.repeat_interleave\]"):
        oar.repeat_interleave(T(a), [1, 2], axis=1)
    with pytest.raises(ValueError, match=r"^\[oar.repeat_interleave\]"):
        oar.repeat_interleave(T(a), -1, axis=1)
    with pytest.raises(IndexError, match=r"^\[oar.repeat_interleave\]"):
        oar.repeat_interleave(T(a), 2, axis=2)


def test_repeat_interleave_grad():
    check_grad(lambda x: oar.repeat_interleave(x, 2, axis=1), arr((2, 3)))
    check_grad(lambda x: oar.repeat_interleave(x, [3, 0, 1], axis=1), arr((2, 3)))


# ---------------------------------------------------------------- flip / roll


@pytest.mark.parametrize("dtype", DTYPES)
def test_flip_roll(dtype):
    a = arr((3, 4, 2), dtype)
    close(oar.flip(T(a), [0]), np.flip(a, 0))
    close(oar.flip(T(a), [0, -1]), np.flip(a, (0, 2)))
    close(T(a).flip(1), np.flip(a, 1))
    close(oar.flip(noncontig(a), [1]), np.flip(a, 1))
    close(oar.flip(T(arr((0, 3), dtype)), [0, 1]), np.zeros((0, 3), dtype))
    close(oar.roll(T(a), 1), np.roll(a, 1))
    close(oar.roll(T(a), -5, axis=1), np.roll(a, -5, axis=1))
    close(T(a).roll([1, 7], [0, 1]), np.roll(a, (1, 7), axis=(0, 1)))
    close(oar.roll(noncontig(a), 2, axis=0), np.roll(a, 2, axis=0))
    close(oar.roll(T(arr((0, 3), dtype)), 1, axis=0), np.zeros((0, 3), dtype))
    with pytest.raises(IndexError, match=r"^\[oar.flip\]"):
        oar.flip(T(a), [3])
    with pytest.raises(IndexError, match=r"^\[oar.roll\]"):
        oar.roll(T(a), 1, axis=3)
    with pytest.raises(ValueError, match=r"^\[oar.roll\]"):
        oar.roll(T(a), [1, 2], axis=[0])


def test_flip_roll_grad():
    check_grad(lambda x: oar.flip(x, [0, 1]), arr((2, 3)))
    check_grad(lambda x: oar.roll(x, [1, -1], [0, 1]), arr((3, 3)))
    check_grad(lambda x: oar.roll(x, 2), arr((2, 3)))


def test_flip_returns_copy():
    t = T(np.arange(3.0))
    f = oar.flip(t, [0])
    f[0] = 100.0
    assert t.numpy().tolist() == [0.0, 1.0, 2.0]


# ---------------------------------------------------------------- pad


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_constant(dtype):
    a = arr((2, 3, 4), dtype)
    close(oar.pad(T(a), [1, 2, 0, 1, 3, 0], value=5), np.pad(a, [(1, 2), (0, 1), (3, 0)], constant_values=5))
    close(oar.pad(T(a), [1, 2]), np.pad(a, [(0, 0), (0, 0), (1, 2)]))
    close(oar.pad(T(a), [1, 2, 3, 0]), np.pad(a, [(0, 0), (3, 0), (1, 2)]))
    close(oar.pad(noncontig(a), [1, 1]), np.pad(a, [(0, 0), (0, 0), (1, 1)]))
    close(oar.pad(T(a), [-1, 1]), np.pad(a[..., 1:], [(0, 0), (0, 0), (0, 1)]))
    close(oar.pad(T(arr((0, 2), dtype)), [1, 1, 0, 0]), np.pad(arr((0, 2), dtype), [(1, 1), (0, 0)]))
    x4 = arr((1, 2, 3, 3), dtype)
    close(oar.pad(T(x4), [1, 0, 0, 2], data_format="NHWC"), np.pad(x4, [(0, 0), (0, 2), (1, 0), (0, 0)]))


@pytest.mark.parametrize("mode,npmode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_pad_modes(mode, npmode):
    a = arr((1, 2, 4, 5))
    close(oar.pad(T(a), [2, 1, 1, 3], mode=mode), np.pad(a, [(0, 0), (0, 0), (1, 3), (2, 1)], mode=npmode))
    check_grad(lambda x: oar.pad(x, [2, 1], mode=mode), arr((1, 2, 4)))


def test_pad_errors_and_grad():
    a = arr((1, 2, 3))
    with pytest.raises(ValueError, match=r"^\[oar.pad\]"):
        oar.pad(T(a), [3, 0], mode="reflect")
    with pytest.raises(ValueError, match=r"^\[oar.pad\]"):
        oar.pad(T(a), [1], mode="constant")
    with pytest.raises(ValueError, match=r"^\[oar.pad\]"):
        oar.pad(T(a), [1, 1], mode="bogus")
    with pytest.raises(ValueError, match=r"^\[oar.pad\]"):
        oar.pad(T(a), [1, 1, 1, 1, 1, 1, 1, 1])
    check_grad(lambda x: oar.pad(x, [1, 2, 0, 1], value=3.0), arr((2, 3)))


# ---------------------------------------------------------------- diagonal / tril / triu / diag


@pytest.mark.parametrize("dtype", DTYPES)
def test_diagonal(dtype):
    a = arr((3, 4, 5), dtype)
    for off, a1, a2 in [(0, 0, 1), (1, 0, 1), (-2, 0, 1), (2, 1, 2), (0, 2, 0), (-1, -1, 0), (9, 0, 1)]:
        close(oar.diagonal(T(a), off, a1, a2), np.diagonal(a, off, a1, a2))
    close(T(a).diagonal(1, 1, 2), np.diagonal(a, 1, 1, 2))
    close(oar.diagonal(noncontig(a), 1, 0, 2), np.diagonal(a, 1, 0, 2))
    with pytest.raises(ValueError, match=r"^\[oar.diagonal\]"):
        oar.diagonal(T(a), 0, 1, 1)
    with pytest.raises(ValueError, match=r"^\[oar.diagonal\]"):
        oar.diagonal(T(arr((3,), dtype)))
    with pytest.raises(IndexError, match=r"^\[oar.diagonal\]"):
        oar.diagonal(T(a), 0, 0, 3)


def test_diagonal_is_view_and_grad():
    t = T(np.zeros((3, 3)))
    d = oar.diagonal(t)
    t[1, 1] = 7.0
    assert d.numpy().tolist() == [0.0, 7.0, 0.0]
    check_grad(lambda x: oar.diagonal(x, 1, 0, 1), arr((3, 4)))
    check_grad(lambda x: oar.diagonal(x, -1, 2, 0), arr((3, 2, 4)))
    check_grad(lambda x: oar.diagonal(x, 5), arr((2, 3)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tril_triu(dtype):
    a = arr((2, 3, 4), dtype)
    for k in (-4, -1, 0, 1, 2, 5):
        close(oar.tril(T(a), k), np.tril(a, k))
        close(oar.triu(T(a), k), np.triu(a, k))
    close(T(a).tril(), np.tril(a))
    close(T(a).triu(1), np.triu(a, 1))
    close(oar.tril(noncontig(a.swapaxes(0, 1).copy())), np.tril(a.swapaxes(0, 1)))
    close(oar.triu(T(arr((0, 3), dtype))), np.zeros((0, 3), dtype))
    with pytest.raises(ValueError, match=r"^\[oar.tril\]"):
        oar.tril(T(arr((3,), dtype)))
    with pytest.raises(ValueError, match=r"^\[oar.triu\]"):
        oar.triu(T(arr((3,), dtype)))


def test_tril_triu_grad():
    check_grad(lambda x: oar.tril(x, -1), arr((3, 3)))
    check_grad(lambda x: oar.triu(x, 1), arr((2, 3, 4)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_diag_diagflat(dtype):
    v = arr((3,), dtype)
    m = arr((3, 4), dtype)
    for k in (-2, 0, 1, 3):
        close(oar.diag(T(v), k), np.diag(v, k))
        close(oar.diag(T(m), k), np.diag(m, k))
        close(oar.diagflat(T(m), k), np.diagflat(m, k))
    ref = np.diag(v, 1)
    ref[ref == 0] = 9
    ref[0, 1] = v[0]
    ref[1, 2] = v[1]
    ref[2, 3] = v[2]
    close(oar.diag(T(v), 1, padding_value=9), ref)
    close(oar.diag(T(np.zeros((0,), dtype))), np.zeros((0, 0), dtype))
    with pytest.raises(ValueError, match=r"^\[oar.diag\]"):
        oar.diag(T(arr((2, 2, 2), dtype)))


def test_diag_grad():
    check_grad(lambda x: oar.diag(x, -1), arr((3,)))
    check_grad(lambda x: oar.diag(x, 1), arr((3, 3)))
    check_grad(lambda x: oar.diagflat(x, 1), arr((2, 2)))


# ---------------------------------------------------------------- meshgrid


@pytest.mark.parametrize("dtype", DTYPES)
def test_meshgrid(dtype):
    a, b, c = arr((2,), dtype), arr((3,), dtype), arr((0,), dtype)
    for got, ref in zip(oar.meshgrid(T(a), T(b)), np.meshgrid(a, b, indexing="ij")):
        close(got, ref)
    for got, ref in zip(oar.meshgrid([T(a), T(b), T(c)]), np.meshgrid(a, b, c, indexing="ij")):
        close(got, ref)
    with pytest.raises(ValueError, match=r"^\[oar.meshgrid\]"):
        oar.meshgrid(T(arr((2, 2), dtype)), T(a))
    ta = T(a)
    grid = oar.meshgrid(ta, T(b))[0]
    grid[0, 0] = 1  # the grids are copies, not broadcast views of the input
    close(ta, a)


def test_meshgrid_grad():
    check_grad(lambda a, b: oar.meshgrid(a, b), arr((2,)), arr((3,)))


def test_higher_order_through_concat():
    x = T(np.array([1.0, 2.0]), grad=True)
    y = (oar.concat([x * x, x], axis=0) ** 2).sum()
    (g,) = oar.grad([y], [x], create_graph=True)
    (gg,) = oar.grad([g.sum()], [x])
    np.testing.assert_allclose(g.numpy(), 4 * np.array([1.0, 8.0]) + 2 * np.array([1.0, 2.0]))
    np.testing.assert_allclose(gg.numpy(), 12 * np.array([1.0, 4.0]) + 2)


def test_split_parts_are_views_and_gradient_is_their_concat():
    x0 = np.arange(30.0).reshape(3, 10)
    x = oar.to_tensor(x0, stop_gradient=False)
    a, b, c = oar.split(x, [2, -1, 3], axis=1)
    assert [p.shape for p in (a, b, c)] == [[3, 2], [3, 5], [3, 3]]
    np.testing.assert_array_equal(b.numpy(), x0[:, 2:7])
    (a.sum() + 3 * c.sum()).backward()  # b gets no gradient: zeros there
    want = np.zeros_like(x0)
    want[:, :2], want[:, 7:] = 1.0, 3.0
    np.testing.assert_array_equal(x.grad.numpy(), want)
    # a strided input (a transpose) splits along either axis
    t = oar.to_tensor(x0).transpose([1, 0])
    parts = oar.split(t, 2, axis=0)
    np.testing.assert_array_equal(parts[1].numpy(), x0.T[5:])
    # second order through the concat rule
    y = oar.to_tensor(np.array([1.0, 2.0, 3.0, 4.0]), stop_gradient=False)
    p, q = oar.split(y, 2)
    (g,) = oar.grad((p ** 3).sum() + (q ** 2).sum(), y, create_graph=True)
    (h,) = oar.grad(g.sum(), y)
    np.testing.assert_allclose(h.numpy(), [6.0, 12.0, 2.0, 2.0])


@pytest.mark.parametrize("make, shape", [
    (lambda x: oar.split(x, [4, 8], axis=2)[1], [2, 6, 2, 4]),    # split the last dim of a column slice: a view
    (lambda x: x.transpose([0, 2, 1]), [2, 72]),                     # merge across a transpose: a copy
    (lambda x: x[:, ::2], [6, 12]),                                  # stepped rows merge with the batch dim
    (lambda x: x[:, :, ::3], [12, 4]),
    (lambda x: x[:, 1:3], [2, 1, 2, 12, 1]),                         # size-1 dims anywhere
])
def test_reshape_of_strided_tensors_matches_numpy(make, shape):
    a = np.arange(2 * 6 * 12, dtype=np.float64).reshape(2, 6, 12)
    x = oar.to_tensor(a, stop_gradient=False)
    v = make(x)
    r = v.reshape(shape)
    np.testing.assert_array_equal(r.numpy(), v.numpy().reshape(shape))
    w = np.random.default_rng(0).standard_normal(r.shape)
    (r * oar.to_tensor(w)).sum().backward()
    want = np.zeros_like(a)
    idx = make(oar.to_tensor(np.arange(a.size, dtype=np.float64).reshape(a.shape))).numpy().astype(int)
    np.add.at(want.reshape(-1), idx.reshape(-1), w.reshape(-1))
    np.testing.assert_allclose(x.grad.numpy(), want)
