"""The argument forms of the declared indexing functions (src/ops/index.toml):
index arguments (the Index type) and value arguments (the Values type) are
normalised in C++ by the same readers as Tensor.__getitem__ and __setitem__."""
import numpy as np
import pytest

import oar


def test_index_forms():
    x = oar.to_tensor([[1, 2], [3, 4], [5, 6]])
    want = [[5, 6], [1, 2]]
    for index in ([2, 0], (2, 0), np.array([2, 0]), np.array([2, 0], np.int32), np.array([2, 0], np.uint8),
                  np.array([2, 0], np.uint64), oar.to_tensor([2, 0]), oar.to_tensor([2, 0]).astype("int32")):
        assert oar.gather(x, index).numpy().tolist() == want, index
        assert x.index_select(index).numpy().tolist() == want, index
    assert oar.gather(x, 1).numpy().tolist() == [3, 4]  # an int: a 0-D index drops the axis
    assert oar.gather(x, np.int64(1)).numpy().tolist() == [3, 4]
    assert oar.gather(x, []).shape == [0, 2]  # an empty list reads as an empty int64 index
    assert oar.gather_nd(x, [[1, 0], [2, 1]]).numpy().tolist() == [3, 6]
    assert oar.take_along_axis(x, [[1], [0], [1]], 1).numpy().tolist() == [[2], [3], [6]]


def test_a_numpy_index_is_copied():
    x = oar.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    idx = np.array([0, 2])
    y = oar.gather(x, idx)
    idx[:] = 1  # the array is not shared with the saved index
    y.sum().backward()
    assert x.grad.numpy().tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("index,got", [
    ([1.5], "float64"), ([True], "bool"), (np.array([1.0], np.float32), "float32"), (oar.ones([1]), "float32"),
    (oar.to_tensor([1], dtype="int16"), "int16"), (1.0, "float64"),
])
def test_index_dtypes_are_checked(index, got):
    with pytest.raises(TypeError, match=rf"^\[oar.gather\] index must be an int32 or int64 tensor, got {got}$"):
        oar.gather(oar.ones([3]), index)
    with pytest.raises(TypeError, match=r"^\[oar.take_along_axis\] indices must be an int32 or int64 tensor"):
        oar.take_along_axis(oar.ones([3]), index, 0)


@pytest.mark.parametrize("index", ["a", None, [[0], [1, 2]], {0: 1}])
def test_index_objects_are_checked(index):
    with pytest.raises(TypeError, match=r"^\[oar.index_select\] index must be an int32 or int64 tensor"):
        oar.index_select(oar.ones([3]), index)


def test_value_forms_are_cast_to_x_dtype():
    x = oar.zeros([3, 2])
    for u in ([[1.5, 2.5]], np.array([[1.5, 2.5]]), oar.to_tensor([[1.5, 2.5]], dtype="float64")):
        out = oar.scatter(x, [1], u)
        assert out.dtype == oar.float32 and out.numpy().tolist() == [[0.0, 0.0], [1.5, 2.5], [0.0, 0.0]]
    xi = oar.zeros([3], dtype="int32")
    assert oar.masked_fill(xi, xi == 0, 2.7).dtype == oar.int32
    assert oar.masked_fill(xi, xi == 0, np.float64(2.0)).numpy().tolist() == [2, 2, 2]
    assert oar.index_add(xi, [0, 0], 0, [1, 2]).numpy().tolist() == [3, 0, 0]
    assert oar.put_along_axis(xi, [2], 7, 0).numpy().tolist() == [0, 0, 7]
    assert oar.scatter_nd_add(xi, [[1]], [True]).numpy().tolist() == [0, 1, 0]
    with pytest.raises(TypeError, match=r"^\[oar.masked_fill\] value must be a Tensor, a number"):
        oar.masked_fill(x, x == 0, "a")
    with pytest.raises(TypeError, match=r"^\[oar.put_along_axis\] values must be"):
        oar.put_along_axis(x, [[0, 1]], None, 0)


def test_searchsorted_values():
    s32 = oar.to_tensor([0.1, 0.5], dtype="float32")
    # Python floats are read in the default float dtype (float32 here): 0.1 equals the stored 0.1
    assert oar.searchsorted(s32, [0.1], right=True).numpy().tolist() == [1]
    assert oar.searchsorted(s32, 0.1, right=True).item() == 1
    s64 = oar.to_tensor([0.1, 0.5], dtype="float64")
    assert oar.searchsorted(s64, np.array([0.1, 0.3]), right=True).numpy().tolist() == [1, 1]
    assert oar.searchsorted(oar.to_tensor([1, 3]), [2, 3]).numpy().tolist() == [1, 1]
    assert not hasattr(oar.Tensor, "searchsorted")


def test_functions_and_methods():
    x = oar.to_tensor([[0, 3], [2, 0]])
    rows, cols = oar.nonzero(x, as_tuple=True)
    assert rows.shape == [2, 1] and rows.numpy().ravel().tolist() == [0, 1] and cols.numpy().ravel().tolist() == [1, 0]
    assert x.nonzero().numpy().tolist() == [[0, 1], [1, 0]]
    out, index, inverse, counts = x.unique(True, True, True)
    assert out.numpy().tolist() == [0, 2, 3] and counts.numpy().tolist() == [2, 1, 1]
    assert index.dtype == oar.int64 and oar.unique(x, return_inverse=True, dtype="int32")[1].dtype == oar.int32
    v, i = x.topk(oar.to_tensor(1), axis=oar.to_tensor(0))
    assert v.numpy().tolist() == [[2, 3]] and i.numpy().tolist() == [[1, 0]]
    assert x.sort(axis=0, descending=True).numpy().tolist() == [[2, 3], [0, 0]]
    assert x.argsort(0).numpy().tolist() == [[0, 1], [1, 0]]
    y = oar.zeros([2, 2])
    assert y.put_along_axis_([[1, 0]], 1.0, 0) is y and y.numpy().tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert x.masked_select(x > 0).numpy().tolist() == [3, 2]
    with pytest.raises(TypeError, match=r"^\[oar.topk\] k must be an int"):
        oar.topk(x, 1.5)
    with pytest.raises(TypeError, match=r"^\[oar.gather\] axis must be"):
        oar.gather(x, [0], axis=True)
