"""Tensor attributes and methods of python/oar/_tensor_ext.py: storage facts, names and
flags, data rebinding (data, set_, apply_, reconstruct_from_), gradients, top_p_sampling.

References are NumPy or closed forms written here; the set_ examples repeat the
outputs printed in Paddle's documentation of Tensor.set_.
"""
import numpy as np
import pytest

import oar


def _shares(a, b):
    """Whether writing into b is seen through a (same memory)."""
    before = a.numpy().copy()
    b.fill_(123.0)
    return not np.array_equal(before, a.numpy())


# ---------------------------------------------------------------- where the tensor lives

def test_device_queries_agree_with_place():
    x = oar.ones([2])
    assert x.device == "cpu" and x.device.type == "cpu" and x.device.index is None
    assert x.get_device() == -1 and x.is_cuda is False and x.place.is_cpu_place()
    assert x.pin_memory() is x and x.is_dense() and x.layout == "NCHW"


@pytest.mark.skipif(not oar.device.cuda.device_count(), reason="needs a GPU")
def test_device_queries_on_gpu():
    x = oar.ones([2]).cuda()
    assert x.device == "cuda:0" and x.device.index == 0 and x.get_device() == 0 and x.is_cuda
    h = x.pin_memory()
    assert h.get_device() == -1 and h.numpy().tolist() == [1.0, 1.0]


# ---------------------------------------------------------------- storage facts

@pytest.mark.parametrize("dtype", ["float64", "float32", "int8"])
def test_strides_and_offset_match_numpy_views(dtype):
    a = np.arange(24).reshape(4, 6).astype(dtype)
    x = oar.to_tensor(a)
    item = a.itemsize
    for view, np_view in [(x, a), (x[1], a[1]), (x[:, 2:], a[:, 2:]), (x[1:, ::2], a[1:, ::2]), (x.t(), a.T)]:
        want = [s // item for s in np_view.strides]
        assert view.get_strides() == want and view.stride() == want
        assert [view.stride(d) for d in range(view.ndim)] == want
        # bytes from the start of the buffer to the view's first element
        want_off = np_view.__array_interface__["data"][0] - a.__array_interface__["data"][0]
        assert view.offset == want_off
    assert x.stride(-1) == 1
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.stride\]"):
        x.stride(2)
    with pytest.raises(TypeError, match=r"^\[oar.Tensor.stride\]"):
        x.stride(1.0)


def test_inplace_version_counts_writes_and_views_share_it():
    x = oar.zeros([2, 3])
    v = x[0]
    assert x.inplace_version == 0
    x.add_(oar.ones([2, 3]))
    x[1, 1] = 4.0
    assert x.inplace_version == 2 and v.inplace_version == 2
    v.zero_()
    assert x.inplace_version == 3
    with pytest.raises(AttributeError):
        x.inplace_version = 0


def test_mT_swaps_the_last_two_dims():
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(oar.to_tensor(a).mT.numpy(), np.swapaxes(a, 1, 2))
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.mT\]"):
        oar.ones([3]).mT


# ---------------------------------------------------------------- names and flags

def test_name_is_settable_and_checked():
    x = oar.ones([2])
    assert not hasattr(x, "name")  # Note [tensor names]
    x.name = "x0"
    assert x.name == "x0"
    with pytest.raises(TypeError, match=r"^\[oar.Tensor.name\]"):
        x.name = 3
    assert oar.create_parameter([2], "float32", name="w").name == "w"


def test_persistable_is_a_checked_bool():
    x = oar.ones([2])
    assert not hasattr(x, "persistable")
    x.persistable = True
    assert x.persistable is True
    x.persistable = np.bool_(False)
    assert x.persistable is False
    with pytest.raises(TypeError, match=r"^\[oar.Tensor.persistable\]"):
        x.persistable = "yes"
    assert oar.create_parameter([2], "float32").persistable is True


def test_create_tensor():
    t = oar.Tensor.create_tensor("float64")
    assert t.shape == [0] and t.dtype == oar.float64 and t.name.startswith("create_tensor_") and not t.persistable
    with pytest.raises(TypeError, match=r"^\[oar.create_tensor\]"):
        oar.Tensor.create_tensor("float32", name=5)


def test_block_is_the_main_programs_global_block():
    assert oar.ones([1]).block is oar.static.default_main_program().global_block()


# ---------------------------------------------------------------- data and rebinding

def test_data_getter_shares_memory_outside_autograd():
    x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    d = x.data
    assert d.stop_gradient and x.stop_gradient is False
    assert _shares(x, d)


def test_data_setter_takes_the_value_and_keeps_flags_and_grad():
    w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    (w * w).sum().backward()
    w.data = oar.to_tensor([5.0, 6.0])
    assert w.numpy().tolist() == [5.0, 6.0] and w.stop_gradient is False
    assert w.grad.numpy().tolist() == [2.0, 4.0]
    w.clear_grad()
    (w * w).sum().backward()  # autograd sees the new values
    assert w.grad.numpy().tolist() == [10.0, 12.0]
    v = oar.to_tensor([[1, 2, 3]], dtype="int32")
    w.data = v
    assert w.shape == [1, 3] and w.dtype == oar.int32 and _shares(w, v)
    with pytest.raises(TypeError, match=r"^\[oar.Tensor.data\]"):
        w.data = [1.0]
    y = oar.to_tensor([1.0], stop_gradient=False) * 2
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.data\]"):
        y.data = oar.ones([1])


def test_reconstruct_from_copies_data_flags_and_grad():
    t2 = oar.to_tensor([2.0, 3.0], stop_gradient=False)
    (t2 * t2).sum().backward()
    t1 = oar.to_tensor([1.0])
    assert t1.reconstruct_from_(t2) is None
    assert t1.numpy().tolist() == [2.0, 3.0] and t1.stop_gradient is False
    assert t1.grad.numpy().tolist() == [4.0, 6.0]
    assert _shares(t2, t1.data)
    t3 = oar.to_tensor([1.0], stop_gradient=False)
    (t3 * 2).sum().backward()
    t3.reconstruct_from_(oar.to_tensor([7.0]))
    assert t3.grad is None and t3.stop_gradient


def test_apply_and_apply_():
    x = oar.to_tensor([[0.5, 1.5], [2.0, 3.0]])
    np.testing.assert_allclose(x.apply(lambda t: t * 2).numpy(), [[1.0, 3.0], [4.0, 6.0]])
    assert x.numpy().tolist() == [[0.5, 1.5], [2.0, 3.0]]
    assert x.apply_(lambda t: t.sum(axis=0)) is x
    assert x.shape == [2] and x.numpy().tolist() == [2.5, 4.5]
    assert x.apply_(lambda t: t) is x
    with pytest.raises(TypeError, match=r"^\[oar.Tensor.apply\]"):
        x.apply(3)
    with pytest.raises(TypeError, match=r"^\[oar.Tensor.apply\]"):
        x.apply(lambda t: 3)
    with pytest.raises(RuntimeError, match=r"^\[oar.Tensor.apply_\]"):
        oar.to_tensor([1.0], stop_gradient=False).apply_(lambda t: t)


def test_gradient_and_grad_():
    x = oar.to_tensor([1.0, -2.0, 3.0], stop_gradient=False)
    assert x.gradient() is None and x.grad_ is None
    (x * x * x).sum().backward()
    g = x.gradient()
    assert isinstance(g, np.ndarray)
    np.testing.assert_allclose(g, 3 * np.array([1.0, -2.0, 3.0]) ** 2)
    x.grad_ = oar.zeros([3])
    assert x.grad.numpy().tolist() == [0.0, 0.0, 0.0]


def test_set_follows_paddles_documented_examples():
    src = oar.to_tensor([[11.0, 22.0, 33.0]])
    src2 = oar.to_tensor([11.0, 22.0, 33.0, 44.0, 55.0, 66.0])
    x = oar.to_tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    assert x.set_() is x and x.shape == [0] and x.dtype == oar.float32
    x = oar.to_tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    assert x.set_(src).numpy().tolist() == [[11.0, 22.0, 33.0]] and _shares(src, x)
    x = oar.to_tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    src = oar.to_tensor([[11.0, 22.0, 33.0]])
    assert x.set_(src, shape=[2, 1]).numpy().tolist() == [[11.0], [22.0]]
    x = oar.to_tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    assert x.set_(src2, shape=[3], stride=[2]).numpy().tolist() == [11.0, 33.0, 55.0]
    assert x.get_strides() == [2]
    x = oar.to_tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    assert x.set_(src2, shape=[5], offset=4).numpy().tolist() == [22.0, 33.0, 44.0, 55.0, 66.0]
    src2[3] = -1.0
    assert x.numpy().tolist() == [22.0, 33.0, -1.0, 55.0, 66.0]


def test_set_view_of_a_view_and_overlap():
    base = oar.to_tensor(np.arange(12.0))
    part = base[2:]  # storage offset 2; the source covers storage elements 0..11
    x = oar.zeros([1], dtype="float64")
    x.set_(part, shape=[3, 2], stride=[1, 1])  # overlapping windows from storage element 0
    np.testing.assert_array_equal(x.numpy(), np.lib.stride_tricks.sliding_window_view(np.arange(12.0), 2)[:3])
    del part  # x keeps the storage alive, also when the base tensor takes other data
    base.data = oar.zeros([1], dtype="float64")
    del base
    import gc
    gc.collect()
    assert x.numpy()[2].tolist() == [2.0, 3.0]
    y = oar.to_tensor([1.0, 2.0, 3.0, 4.0])
    assert y.set_(y, shape=[2], stride=[2]).numpy().tolist() == [1.0, 3.0]  # a view of itself


def test_set_errors():
    src = oar.to_tensor([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"^\[oar.Tensor.set_\]"):
        oar.to_tensor([1, 2]).set_(src)
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.set_\]"):
        oar.zeros([1]).set_(src, shape=[4])
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.set_\]"):
        oar.zeros([1]).set_(src, shape=[1], offset=2)
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.set_\]"):
        oar.zeros([1]).set_(src, shape=[2], stride=[1, 1])
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.set_\]"):
        oar.to_tensor([1.0], stop_gradient=False).set_(src)
    with pytest.raises(TypeError, match=r"^\[oar.Tensor.set_\]"):
        oar.zeros([1]).set_([1.0])


def _resize_ref(x, shape):
    flat = x.ravel()
    n = int(np.prod(shape))
    out = np.zeros(n, dtype=flat.dtype)
    out[:min(n, flat.size)] = flat[:n]
    return out.reshape(shape)


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64", "bool"])
@pytest.mark.parametrize("shape", [[4], [3, 3], [], [0, 5], [7]])
def test_resize_keeps_leading_elements_and_zero_fills(dtype, shape):
    a = np.random.default_rng(0).uniform(-3, 3, size=(3, 2)).astype(dtype)
    for x in (oar.to_tensor(a), oar.to_tensor(np.ascontiguousarray(a.T)).t()):  # contiguous and not
        assert x.resize_(shape) is x
        assert x.shape == shape and x.dtype == oar.to_tensor(a).dtype
        np.testing.assert_array_equal(x.numpy(), _resize_ref(a, shape))


def test_resize_errors():
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.resize_\]"):
        oar.ones([2]).resize_([-1])
    with pytest.raises(TypeError, match=r"^\[oar.Tensor.resize_\]"):
        oar.ones([2]).resize_(3)
    with pytest.raises(ValueError, match=r"^\[oar.Tensor.resize_\]"):
        oar.to_tensor([1.0], stop_gradient=False).resize_([2])


# ---------------------------------------------------------------- small methods

def test_casts_and_aliases():
    c = oar.to_tensor([1.0 + 2.0j], dtype="complex64")
    assert c.cfloat() is c and c.cdouble().dtype == oar.complex128
    assert oar.Tensor.create_parameter is not None and oar.argwhere is not None
    y = oar.to_tensor([float("nan"), float("inf"), 1.0])
    assert y.nan_to_num_(posinf=5.0) is y and y.numpy().tolist() == [0.0, 5.0, 1.0]
    probs = oar.to_tensor([0.0, 0.0, 1.0])
    assert probs.multinomial(2, replacement=True).numpy().tolist() == [2, 2]
    s = oar.zeros([3, 3]).slice_scatter(oar.ones([1, 3]), axes=[0], starts=[1], ends=[2], strides=[1])
    np.testing.assert_array_equal(s.numpy(), [[0, 0, 0], [1, 1, 1], [0, 0, 0]])


# ---------------------------------------------------------------- top_p_sampling

def _rows(p, n):
    return oar.to_tensor(np.tile(np.asarray(p, np.float32), (n, 1)))


def _freq(ids, k):
    return np.bincount(ids.numpy().ravel(), minlength=k) / ids.shape[0]


@pytest.mark.parametrize("mode,want", [
    # sorted probabilities 0.5, 0.3, 0.2 and p = 0.6: truncated draws u ~ U(0, 0.6) and takes
    # token 0 when u <= 0.5 (5/6); non-truncated draws among tokens 0 and 1 by 0.5 : 0.3.
    ("truncated", [5 / 6, 0.0, 1 / 6]),
    ("non-truncated", [5 / 8, 0.0, 3 / 8]),
])
def test_top_p_sampling_frequencies(mode, want):
    n = 6000
    oar.seed(7)
    vals, ids = oar.Tensor.top_p_sampling(_rows([0.5, 0.2, 0.3], n), oar.full([n], 0.6), mode=mode)
    assert vals.shape == [n, 1] and ids.shape == [n, 1] and ids.dtype == oar.int64
    f = _freq(ids, 3)
    np.testing.assert_allclose(f, want, atol=4 * np.sqrt(0.25 / n))
    np.testing.assert_allclose(vals.numpy().ravel(), np.array([0.5, 0.2, 0.3], np.float32)[ids.numpy().ravel()])


@pytest.mark.parametrize("mode", ["truncated", "non-truncated"])
def test_top_p_sampling_threshold_and_unreached_rows(mode):
    n = 200
    # token 2 (0.3) is below the threshold 0.4: only token 0 (0.5) can be drawn
    _, ids = oar.Tensor.top_p_sampling(_rows([0.5, 0.2, 0.3], n), oar.full([n], 0.7),
                                       threshold=oar.full([n], 0.4), mode=mode)
    assert set(ids.numpy().ravel().tolist()) == {0}


def test_top_p_sampling_rows_that_do_not_reach_p():
    # Probabilities 0.05, 0.15, 0.1 sum to 0.3 < p = 0.9. non-truncated: the most probable
    # token (1) always. truncated: u ~ U(0, 0.9) picks token 1 for u <= 0.15, 2 for u in
    # (0.15, 0.25], 0 for u in (0.25, 0.3], and the most probable token (1) for u > 0.3.
    n = 6000
    _, ids = oar.Tensor.top_p_sampling(_rows([0.05, 0.15, 0.1], n), oar.full([n], 0.9), mode="non-truncated")
    assert set(ids.numpy().ravel().tolist()) == {1}
    oar.seed(11)
    _, ids = oar.Tensor.top_p_sampling(_rows([0.05, 0.15, 0.1], n), oar.full([n], 0.9))
    np.testing.assert_allclose(_freq(ids, 3), [0.05 / 0.9, 0.75 / 0.9, 0.1 / 0.9], atol=4 * np.sqrt(0.25 / n))


def test_top_p_sampling_seeds_and_top_k():
    x = oar.to_tensor(np.random.default_rng(0).dirichlet(np.ones(6), size=8).astype(np.float32))
    ps = oar.full([8], 0.8)
    a = oar.Tensor.top_p_sampling(x, ps, seed=3)[1].numpy()
    b = oar.Tensor.top_p_sampling(x, ps, seed=3)[1].numpy()
    np.testing.assert_array_equal(a, b)
    seeds = oar.to_tensor(np.arange(8, dtype=np.int64))
    c = oar.Tensor.top_p_sampling(x, ps, topp_seed=seeds)[1].numpy()
    np.testing.assert_array_equal(c, oar.Tensor.top_p_sampling(x, ps, topp_seed=seeds)[1].numpy())
    out = oar.Tensor.top_p_sampling(x, ps, k=3, return_top=True)
    assert len(out) == 4
    xs = x.numpy()
    order = np.argsort(-xs, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(out[3].numpy(), order)
    np.testing.assert_allclose(out[2].numpy(), np.take_along_axis(xs, order, 1))
    # every drawn id is in its row's nucleus
    srt = -np.sort(-xs, axis=1)
    before = np.cumsum(srt, axis=1) - srt
    for row, i in enumerate(c.ravel()):
        rank = np.argsort(-xs[row], kind="stable").tolist().index(i)
        assert before[row, rank] < 0.8


def test_top_p_sampling_errors():
    x = oar.to_tensor([[0.5, 0.5]])
    cases = [(lambda: oar.Tensor.top_p_sampling(oar.ones([3]), oar.ones([1])), ValueError),
             (lambda: oar.Tensor.top_p_sampling(x, oar.ones([2])), ValueError),
             (lambda: oar.Tensor.top_p_sampling(x, oar.ones([1]), mode="greedy"), ValueError),
             (lambda: oar.Tensor.top_p_sampling(x, oar.ones([1]), k=3), ValueError),
             (lambda: oar.Tensor.top_p_sampling(x, [0.5]), TypeError)]
    for fn, exc in cases:
        with pytest.raises(exc, match=r"^\[oar.(Tensor.)?top_p_sampling\]"):
            fn()
