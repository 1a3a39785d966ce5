"""Tensor.__getitem__ / __setitem__ against NumPy on random mixed indices.

Each index mixes ints (negative too), slices with steps, None, Ellipsis, int
arrays (oar tensors, lists, NumPy arrays), bool masks and Python bools, in
every position, so advanced indices come both adjacent and separated.
"""
import numpy as np
import pytest

import oar

SEED = 20240611


def _as_kind(arr, kind):
    """The index array `arr` as an oar tensor, a NumPy array or a list."""
    if kind == "tensor":
        return oar.to_tensor(arr)
    if kind == "tensor32" and arr.dtype != np.bool_:
        return oar.to_tensor(arr.astype(np.int32))
    if kind == "list":
        return arr.tolist()
    return arr


def _np_item(item):
    if isinstance(item, oar.Tensor):
        return item.numpy()
    if isinstance(item, list):
        return np.asarray(item) if item else np.zeros(0, np.int64)
    return item


def _items(rng, shape, lo, hi, bshape, allow_advanced):
    """Random items consuming the dims [lo, hi) of `shape`, with None and bools between them."""
    items = []
    dim = lo
    while dim < hi or rng.random() < 0.15:
        r = rng.random()
        if dim == hi or r < 0.08:
            items.append(None if not allow_advanced or rng.random() < 0.7 else bool(rng.random() < 0.7))
            continue
        n = shape[dim]
        if r < 0.3:
            items.append(int(rng.integers(-n, n)))
            dim += 1
        elif r < 0.6 or not allow_advanced:
            def bound():
                return None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))
            step = [None, 1, 2, -1, -2, 3][int(rng.integers(0, 6))]
            items.append(slice(bound(), bound(), step))
            dim += 1
        elif r < 0.85:
            s = tuple(d if rng.random() < 0.7 else 1 for d in bshape[int(rng.integers(0, len(bshape))):])
            arr = rng.integers(-n, n, size=s)
            items.append(_as_kind(arr, ["tensor", "tensor32", "list", "numpy"][int(rng.integers(0, 4))]))
            dim += 1
        else:
            k = int(rng.integers(1, min(hi - dim, 2) + 1))
            m = rng.random(shape[dim:dim + k]) < 0.5
            items.append(_as_kind(m, ["tensor", "list", "numpy"][int(rng.integers(0, 3))]))
            dim += k
    return items


def random_index(rng, shape, allow_advanced=True):
    """A random index tuple for a tensor of `shape`."""
    ndim = len(shape)
    bshape = tuple(int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 3))))  # int arrays broadcast to it
    if rng.random() < 0.35:  # an Ellipsis over dims [p, q)
        p = int(rng.integers(0, ndim + 1))
        q = int(rng.integers(p, ndim + 1))
        items = _items(rng, shape, 0, p, bshape, allow_advanced) + [Ellipsis] + \
            _items(rng, shape, q, ndim, bshape, allow_advanced)
    else:  # the trailing dims left whole
        items = _items(rng, shape, 0, int(rng.integers(0, ndim + 1)), bshape, allow_advanced)
    return tuple(items)


def _shape(rng):
    return tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 5))))


def _numpy_get(a, index):
    try:
        return a[tuple(_np_item(i) for i in index)], None
    except IndexError as e:
        return None, e


@pytest.mark.parametrize("trial", range(400))
def test_getitem_random(trial):
    rng = np.random.default_rng(SEED + trial)
    shape = _shape(rng)
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = oar.to_tensor(a)
    index = random_index(rng, shape, allow_advanced=trial % 4 != 0)
    want, err = _numpy_get(a, index)
    if err is not None:
        with pytest.raises(IndexError, match=r"^\[Tensor.__getitem__\]"):
            x[index]
        return
    got = x[index]
    assert got.shape == list(want.shape), (index, got.shape, want.shape)
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("trial", range(300))
def test_setitem_random(trial):
    rng = np.random.default_rng(SEED + 10_000 + trial)
    shape = _shape(rng)
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    x = oar.to_tensor(a.copy())
    ptr = x._storage_ptr()
    index = random_index(rng, shape, allow_advanced=trial % 4 != 0)
    sel, err = _numpy_get(a, index)
    if err is not None:
        with pytest.raises(IndexError, match=r"^\[Tensor.__setitem__\]"):
            x[index] = 1.0
        return
    # A value that depends only on the position written, so repeated indices agree.
    full = -sel - 1000.0
    pos = np.arange(a.size).reshape(shape)[tuple(_np_item(i) for i in index)]
    kind = trial % 5
    if kind == 0:
        value, ref = 7.5, 7.5
    elif kind == 1 and sel.ndim >= 1 and len(np.unique(pos)) == pos.size:
        ref = np.arange(sel.shape[-1]) - 50.0  # broadcast along the leading dims
        value = oar.to_tensor(ref)
    elif kind == 2 and sel.size:
        value, ref = full.tolist(), full
    elif kind == 3:
        value, ref = full.astype(np.float32), full.astype(np.float32)
    else:
        value, ref = oar.to_tensor(full.astype(np.int64)), full.astype(np.int64)
    want = a.copy()
    want[tuple(_np_item(i) for i in index)] = ref
    x[index] = value
    np.testing.assert_array_equal(x.numpy(), want)
    assert x._storage_ptr() == ptr


@pytest.mark.parametrize("trial", range(80))
def test_getitem_grad_random(trial):
    rng = np.random.default_rng(SEED + 20_000 + trial)
    shape = _shape(rng)
    a = rng.standard_normal(shape)
    index = random_index(rng, shape)
    sel, err = _numpy_get(a, index)
    if err is not None:
        return
    x = oar.to_tensor(a, stop_gradient=False)
    g = rng.standard_normal(sel.shape)
    (x[index] * oar.to_tensor(g)).sum().backward()
    # The NumPy scatter-add of the upstream gradient onto the positions read.
    pos = np.arange(a.size).reshape(shape)[tuple(_np_item(i) for i in index)]
    want = np.zeros(a.size)
    np.add.at(want, pos.reshape(-1), g.reshape(-1))
    np.testing.assert_allclose(x.grad.numpy(), want.reshape(shape), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("index", [
    (np.array([0, 2]), slice(None), np.array([1, 0])),   # separated: broadcast dims first
    (slice(None), np.array([0, 2]), np.array([1, 0])),   # adjacent: in place
    (0, slice(None), [1, 2]),                             # an int counts as advanced
    (slice(None), [0], 0),
    ([0], Ellipsis, [0]),
    ([0], None, [1]),
    (Ellipsis, True),
    (False,),
    (0, True),
    (np.array([[True, False, True, True], [False, True, False, True], [True, True, True, False]]),),
    (slice(None, None, -1), np.array([[0], [2]]), slice(1, None)),
    (np.array([], dtype=np.int64),),
    ([],),
    (np.int64(1), [0, -1]),
    (oar.to_tensor(1), slice(None), oar.to_tensor([3, -4])),
])
def test_placement_rules(index):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    want = a[tuple(_np_item(i) for i in index)]
    got = oar.to_tensor(a)[index]
    assert got.shape == list(want.shape)
    np.testing.assert_array_equal(got.numpy(), want)


def test_fast_paths_and_views():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = oar.to_tensor(a)
    idx = oar.to_tensor([[3, 0], [-1, 1]])
    np.testing.assert_array_equal(x[idx].numpy(), a[idx.numpy()])
    m = x > 10
    np.testing.assert_array_equal(x[m].numpy(), a[a > 10])
    np.testing.assert_array_equal(x[m[:, 0]].numpy(), a[a[:, 0] > 10])
    assert x[1:3, ::2]._storage_ptr() == x._storage_ptr()
    assert x[oar.to_tensor(1), oar.to_tensor([2]):]._storage_ptr() == x._storage_ptr()
    np.testing.assert_array_equal(x[oar.to_tensor(1), oar.to_tensor([2]):].numpy(), a[1, 2:])
    np.testing.assert_array_equal(x[1:2**70].numpy(), a[1:])
    np.testing.assert_array_equal(x[-2**70:2].numpy(), a[:2])
    np.testing.assert_array_equal(x[np.int32(2), np.int64(-1)].numpy(), a[2, -1])
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16):
        np.testing.assert_array_equal(x[np.array([3, 1], dt)].numpy(), a[[3, 1]])
    np.testing.assert_array_equal(x[oar.to_tensor(np.array([3, 1], np.uint8))].numpy(), a[[3, 1]])
    np.testing.assert_array_equal(x[np.True_].numpy(), a[None])
    np.testing.assert_array_equal(x[True:3].numpy(), a[1:3])


def test_setitem_values():
    a = np.zeros((3, 4))
    x = oar.to_tensor(a)
    x[0] = [1, 2, 3, 4]
    x[1] = np.arange(4, dtype=np.int32)
    x[2, 1:3] = oar.to_tensor([True, True])
    x[:, 0] = np.float32(-1.5)
    x[[0, 2], -1] = [[9.0], [8.0]][0]
    x[x > 2.5] = 0
    x[None, 1, 3] = np.array([[5]])  # leading size-1 dims are dropped, as NumPy does
    x[1] = oar.ones([1, 1, 4]) * 6
    a[0] = [1, 2, 3, 4]
    a[1] = np.arange(4)
    a[2, 1:3] = True
    a[:, 0] = -1.5
    a[[0, 2], -1] = 9.0
    a[a > 2.5] = 0
    a[None, 1, 3] = np.array([[5]])
    a[1] = np.ones((1, 1, 4)) * 6
    np.testing.assert_array_equal(x.numpy(), a)
    y = oar.zeros([2, 2], dtype="int32")
    y[...] = 3.7
    assert y.numpy().tolist() == [[3, 3], [3, 3]]
    z = oar.zeros([2], dtype="complex64")
    z[1] = [1 + 2j][0]
    z[[0]] = [3j]
    assert z.numpy().tolist() == [3j, 1 + 2j]


def test_setitem_grad_flows_to_value():
    v = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    base = oar.zeros([3, 2])
    base[[0, 2]] = v * 3.0
    base.sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), [6.0, 6.0])


def test_index_errors():
    x = oar.to_tensor(np.arange(12.0).reshape(3, 4))
    get = r"^\[Tensor.__getitem__\] "
    with pytest.raises(IndexError, match=get + r"index 3 is out of bounds for axis 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match=get + r"index -5 is out of bounds for axis 1 with size 4"):
        x[0, -5]
    with pytest.raises(IndexError, match=get + r"index 4 is out of bounds for axis 1 with size 4"):
        x[:, [0, 4]]
    with pytest.raises(IndexError, match=get + r"index 7 is out of bounds for axis 1 with size 4"):
        x[[0], None, [7]]
    with pytest.raises(IndexError, match=get + r"index 99999999999999999999 is out of bounds"):
        x[99999999999999999999]
    with pytest.raises(IndexError, match=get + r"too many indices: the tensor is 2-D but 3 were given"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match=get + r"too many indices"):
        x[oar.to_tensor([[True]]), 0, 0]
    with pytest.raises(IndexError, match=get + r"an index can only have a single ellipsis"):
        x[..., ...]
    with pytest.raises(ValueError, match=get + r"slice step cannot be zero"):
        x[::0]
    with pytest.raises(ValueError, match=get + r"slice step cannot be zero"):
        x[:, ::oar.to_tensor(0)]
    with pytest.raises(TypeError, match=get + r"slice bounds must be ints"):
        x[1.5:]
    with pytest.raises(TypeError, match=get + r"a tensor slice bound must have an integer dtype"):
        x[oar.to_tensor(1.0):]
    with pytest.raises(ValueError, match=get + r"a tensor slice bound must have one element"):
        x[oar.to_tensor([1, 2]):]
    with pytest.raises(IndexError, match=get + r"only integers, slices .* got float"):
        x[1.0]
    with pytest.raises(IndexError, match=get + r"only integers, slices .* got str"):
        x["a"]
    with pytest.raises(IndexError, match=get + r"tensor indices must be integer or bool tensors, got float32"):
        x[oar.to_tensor([1.0])]
    with pytest.raises(IndexError, match=get + r"list indices must be rectangular nests of ints or bools"):
        x[[1.0, 2.0]]
    with pytest.raises(IndexError, match=get + r"list indices must be rectangular"):
        x[[[0, 1], [2]]]
    with pytest.raises(IndexError, match=get + r"array indices must hold ints or bools, got float64"):
        x[np.array([1.0])]
    with pytest.raises(IndexError, match=get + r"boolean index did not match indexed tensor along axis 0; "
                                              r"size of axis is 3 but size of corresponding boolean axis is 2"):
        x[oar.to_tensor([True, False])]
    with pytest.raises(IndexError, match=get + r"boolean index did not match indexed tensor along axis 1"):
        x[:, [True, False]]
    with pytest.raises(IndexError, match=get + r"shape mismatch: indexing arrays could not be broadcast together "
                                              r"with shapes \[2\] \[3\]"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match=get + r"a 0-D tensor cannot be indexed with tensors or lists"):
        oar.to_tensor(1.0)[True]

    st = r"^\[Tensor.__setitem__\] "
    with pytest.raises(IndexError, match=st + r"index 3 is out of bounds for axis 0 with size 3"):
        x[3] = 1.0
    with pytest.raises(IndexError, match=st + r"index 5 is out of bounds for axis 0 with size 3"):
        x[[0, 5]] = 1.0
    with pytest.raises(IndexError, match=st + r"index 6 is out of bounds for axis 1 with size 4"):
        x[0, [6]] = 1.0
    with pytest.raises(ValueError, match=st + r"slice step cannot be zero"):
        x[::0] = 1.0
    with pytest.raises(ValueError, match=st + r"the value of shape \[3\] cannot be broadcast to the indexed "
                                             r"shape \[4\]"):
        x[0] = oar.to_tensor([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=st + r"the value of shape \[2, 2\] cannot be broadcast to the indexed "
                                             r"shape \[2, 4\]"):
        x[[0, 1]] = np.zeros((2, 2))
    with pytest.raises(TypeError, match=st + r"the value must be a tensor, a number or a .*list of numbers, got str"):
        x[0] = "abc"
    with pytest.raises(TypeError, match=st + r"the value must be a tensor, a number or a rectangular"):
        x[0] = [[1.0], [2.0, 3.0]]
    np.testing.assert_array_equal(x.numpy(), np.arange(12.0).reshape(3, 4))  # nothing was written
