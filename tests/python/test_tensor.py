"""Tensor basics: creation from Python/NumPy, interop, printing, views, setitem, memory, dtypes."""
import gc

import numpy as np
import pytest

import oar
from opdb import bf16_round


def test_to_tensor_dtype_rules():
    assert oar.to_tensor(1.5).dtype == oar.float32
    assert oar.to_tensor(3).dtype == oar.int64
    assert oar.to_tensor(True).dtype == oar.bool
    assert oar.to_tensor([[1.0, 2.0], [3.0, 4.0]]).dtype == oar.float32
    assert oar.to_tensor([[1, 2], [3, 4]]).dtype == oar.int64
    assert oar.to_tensor([1 + 2j]).dtype == oar.complex64
    for npdt, dt in [(np.float64, oar.float64), (np.float16, oar.float16), (np.int32, oar.int32),
                     (np.uint8, oar.uint8), (np.int8, oar.int8), (np.complex128, oar.complex128), (np.bool_, oar.bool)]:
        a = np.arange(6).reshape(2, 3).astype(npdt)
        t = oar.to_tensor(a)
        assert t.dtype == dt and t.shape == [2, 3]
        np.testing.assert_array_equal(t.numpy(), a)
    t = oar.to_tensor(2.5)
    assert t.shape == [] and t.item() == 2.5
    assert oar.to_tensor([[1, 2]], dtype="float64").dtype == oar.float64
    with pytest.raises(ValueError, match=r"^\[oar.to_tensor\]"):
        oar.to_tensor([[1, 2], [3]])


def test_to_tensor_copies_numpy_input():
    a = np.zeros(3)
    t = oar.to_tensor(a)
    a[0] = 5
    assert t.numpy()[0] == 0


def test_numpy_is_zero_copy():
    t = oar.to_tensor(np.arange(6.0).reshape(2, 3))
    a = t.numpy()
    t.add_(oar.ones([2, 3], dtype="float64"))
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3) + 1)
    t[0, 1] = 100.0
    assert a[0, 1] == 100.0


def test_dlpack_round_trip():
    t = oar.to_tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    a = np.from_dlpack(t)
    assert a.dtype == np.float32 and a.shape == (3, 4)
    np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4))
    t.add_(oar.ones([3, 4]))
    assert a[0, 0] == 1.0  # shares memory
    from_dlpack = getattr(oar, "from_dlpack", oar._C.from_dlpack)
    src = np.arange(10, dtype=np.int32)[::2]
    u = from_dlpack(src)
    assert u.dtype == oar.int32 and u.shape == [5]
    np.testing.assert_array_equal(u.numpy(), [0, 2, 4, 6, 8])
    src_base = np.arange(10, dtype=np.int32)
    w = from_dlpack(src_base)
    src_base[3] = -1
    assert w.numpy()[3] == -1  # zero-copy import
    del a, u, w
    gc.collect()


def test_repr_format():
    t = oar.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    r = repr(t)
    assert r.startswith("Tensor(shape=[2, 3], dtype=float32, place=Place(cpu), stop_gradient=True,\n"), r
    assert "[[1., 2., 3.]," in r and r.endswith(")")
    s = repr(oar.to_tensor(3, dtype="int64"))
    assert s.startswith("Tensor(shape=[], dtype=int64, place=Place(cpu), stop_gradient=True,"), s
    x = oar.to_tensor([1.0], stop_gradient=False)
    assert "stop_gradient=False" in repr(x)


@pytest.mark.parametrize("index", [
    (slice(None, None, 2),), (slice(None, None, -1),), (slice(-1, 0, -2), slice(1, 3)), (None, Ellipsis, 1),
    (Ellipsis, slice(None, None, -3)), (1,), (-1, None, slice(2, None)), (slice(1, 2), Ellipsis, None),
    (0, 1, 2), (slice(5, 10),), (slice(None), slice(None, None, -1), 0),
])
def test_basic_indexing_is_a_view(index):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    t = oar.to_tensor(a)
    v = t[index]
    np.testing.assert_array_equal(v.numpy(), a[index])
    assert v.shape == list(a[index].shape)
    assert v._storage_ptr() == t._storage_ptr()


def test_indexing_errors():
    t = oar.ones([2, 3])
    with pytest.raises(IndexError, match=r"^\[Tensor.__getitem__\]"):
        t[2]
    with pytest.raises(IndexError):
        t[0, 0, 0]
    with pytest.raises(ValueError):
        t[::0]


@pytest.mark.parametrize("index,value", [
    ((slice(None), 1), 7.0), ((0,), np.arange(5.0)), ((slice(None, None, 2), slice(1, 4)), -1.0),
    ((Ellipsis, slice(None, None, -2)), np.arange(4.0).reshape(4, 1)), ((1, 2, 3), 9.5), ((-1,), [[1.0], [2], [3], [4]]),
])
def test_setitem_matches_numpy(index, value):
    a = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    t = oar.to_tensor(a.copy())
    ptr = t._storage_ptr()
    t[index] = value if not isinstance(value, np.ndarray) else oar.to_tensor(value)
    a[index] = value
    np.testing.assert_array_equal(t.numpy(), a)
    assert t._storage_ptr() == ptr


def test_setitem_on_non_contiguous_view():
    a = np.arange(12.0).reshape(3, 4)
    t = oar.to_tensor(a.copy())
    v = t.T
    v[1:3, 0] = oar.to_tensor([-1.0, -2.0], dtype="float64")
    a.T[1:3, 0] = [-1.0, -2.0]
    np.testing.assert_array_equal(t.numpy(), a)


def test_memory_stats():
    gc.collect()
    base = oar.device.memory_allocated()
    oar._C.reset_max_memory_allocated()
    big = oar.zeros([1024, 1024], dtype="float64")  # 8 MiB
    grown = oar.device.memory_allocated()
    assert grown - base >= 8 * 1024 * 1024
    assert oar.device.max_memory_allocated() >= grown
    del big
    gc.collect()
    assert oar.device.memory_allocated() <= base + 1024
    assert oar.device.max_memory_allocated() >= grown


def test_set_default_dtype():
    try:
        oar.set_default_dtype("float64")
        assert oar.get_default_dtype() == "float64"
        assert oar.to_tensor(1.5).dtype == oar.float64
        assert oar.zeros([2]).dtype == oar.float64
        assert oar.to_tensor(2).dtype == oar.int64
        oar.set_default_dtype("float16")
        assert oar.to_tensor([0.1]).dtype == oar.float16
        with pytest.raises(TypeError, match=r"^\[oar.set_default_dtype\]"):
            oar.set_default_dtype("int32")
    finally:
        oar.set_default_dtype("float32")
    assert oar.to_tensor(1.5).dtype == oar.float32


def test_float16_rounding_matches_numpy():
    vals = np.array([0.1, 1 / 3, 65504.0, 1e-7, -2.7182818, 70000.0, 1.0009765625, 6.1e-5], dtype=np.float32)
    t = oar.to_tensor(vals).astype("float16")
    np.testing.assert_array_equal(t.numpy(), vals.astype(np.float16))
    t2 = oar.to_tensor(vals.astype(np.float64), dtype="float16")
    np.testing.assert_array_equal(t2.numpy(), vals.astype(np.float64).astype(np.float16))
    back = t.astype("float32").numpy()
    np.testing.assert_array_equal(back, vals.astype(np.float16).astype(np.float32))


def test_bfloat16_rounding_matches_reference():
    rng = np.random.default_rng(0)
    vals = np.concatenate([rng.standard_normal(200).astype(np.float32) * 100,
                           np.array([1.00390625, 1.01171875, -3.0e38, 1e-40, 0.0], dtype=np.float32)])
    t = oar.to_tensor(vals).astype("bfloat16")
    assert t.dtype == oar.bfloat16
    np.testing.assert_array_equal(t.numpy(), bf16_round(vals))
    t2 = oar.to_tensor(vals.astype(np.float64), dtype="bfloat16")
    np.testing.assert_array_equal(t2.numpy(), bf16_round(vals))
    # Ties go to even: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7.
    assert oar.to_tensor(np.float32(1.00390625)).astype("bfloat16").item() == 1.0


@pytest.mark.parametrize("a,b,expected", [
    ("float16", "bfloat16", "float32"), ("int64", "float32", "float32"), ("float32", "complex64", "complex64"),
    ("float64", "complex64", "complex128"), ("int32", "int64", "int64"), ("uint8", "int8", "int16"),
    ("bool", "int32", "int32"), ("float16", "float32", "float32"), ("bool", "float16", "float16"),
])
def test_binary_type_promotion(a, b, expected):
    x = oar.ones([2], dtype=a)
    y = oar.ones([2], dtype=b)
    assert str((x + y).dtype).split(".")[-1] == expected
    assert str(oar.multiply(y, x).dtype).split(".")[-1] == expected


def test_scalar_type_promotion():
    i = oar.to_tensor([1, 2])
    assert (i + 2.5).dtype == oar.float32
    np.testing.assert_allclose((i + 2.5).numpy(), [3.5, 4.5])
    assert (i * 2).dtype == oar.int64
    h = oar.ones([2], dtype="float16")
    assert (h + 1.5).dtype == oar.float16
    assert (2.0 * h).dtype == oar.float16
    assert (oar.ones([2], dtype="float32") + 1j).dtype == oar.complex64
    assert (oar.to_tensor([True]) + 1).dtype == oar.int64
