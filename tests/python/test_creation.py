"""The argument forms of the declared creation functions (src/ops/creation.toml,
glue in python/bind/creation.cpp): shapes as ints, lists, tuples and Tensors,
numbers given as one-element Tensors, and the dtypes chosen without a dtype."""
import numpy as np
import pytest

import oar


@pytest.mark.parametrize("fn", [oar.zeros, oar.ones, oar.empty, lambda s, **k: oar.full(s, 2, **k)])
def test_shape_forms(fn):
    t = oar.to_tensor
    for shape, want in [(3, [3]), (np.int64(2), [2]), ([2, 3], [2, 3]), ((2, 3), [2, 3]), ([], []), ((), []),
                        ([np.int32(2), t(3)], [2, 3]), (t([2, 3]), [2, 3]), (t([4], dtype="int32"), [4]),
                        ([0, 2], [0, 2])]:
        assert fn(shape).shape == want, shape
    for bad in ["3", [2.0], True, np.array([2, 3]), t([2.0]), [t([1, 2])], None]:
        with pytest.raises(TypeError, match=r"^\[oar\.(zeros|ones|empty|full)\]"):
            fn(bad)
    for bad in [-1, [2, -1], t([2, -1])]:
        with pytest.raises(ValueError, match=r"^\[oar\.(zeros|ones|empty|full)\] shape dims must be non-negative"):
            fn(bad)


def test_full_dtype_follows_the_fill_value():
    assert oar.full([2], 7).dtype == oar.int64
    assert oar.full([2], True).dtype == oar.bool
    assert oar.full([2], 0.5).dtype == oar.float32
    assert oar.full([2], 1 + 2j).dtype == oar.complex64
    assert oar.full([2], np.float32(0.5)).dtype == oar.float32
    assert oar.full([2], 7, dtype="float64").dtype == oar.float64
    assert oar.full([2], oar.to_tensor(3)).numpy().tolist() == [3, 3]
    assert oar.full([2], oar.to_tensor([2.5])).dtype == oar.float32
    with pytest.raises(ValueError, match=r"^\[oar\.full\] fill_value"):
        oar.full([2], oar.ones([2]))
    with pytest.raises(TypeError, match=r"^\[oar\.full\] fill_value"):
        oar.full([2], "a")


def test_default_float_dtype_is_followed():
    before = oar.get_default_dtype()
    oar.set_default_dtype("float64")
    try:
        for t in [oar.zeros([2]), oar.ones(2), oar.empty([1]), oar.full([2], 0.5), oar.arange(0.5),
                  oar.linspace(0, 1, 3), oar.eye(2)]:
            assert t.dtype == oar.float64
        assert oar.arange(3).dtype == oar.int64 and oar.full([1], 1).dtype == oar.int64
    finally:
        oar.set_default_dtype(before)


def test_numbers_as_one_element_tensors():
    t = oar.to_tensor
    assert oar.arange(t(3)).numpy().tolist() == [0, 1, 2]
    assert oar.arange(t(1), t([7]), t(2)).numpy().tolist() == [1, 3, 5]
    assert oar.arange(end=3).numpy().tolist() == [0, 1, 2]
    assert oar.linspace(t(0.0), t(1.0), t(3)).numpy().tolist() == [0.0, 0.5, 1.0]
    assert oar.eye(t(2), t(3)).shape == [2, 3]
    assert oar.eye(np.int64(2), dtype="int32").numpy().tolist() == [[1, 0], [0, 1]]
    with pytest.raises(TypeError, match=r"^\[oar\.arange\] start"):
        oar.arange("a")
    with pytest.raises(ValueError, match=r"^\[oar\.arange\] end"):
        oar.arange(0, oar.ones([2]))
    with pytest.raises(TypeError, match=r"^\[oar\.eye\] num_rows"):
        oar.eye(2.0)
    with pytest.raises(TypeError, match=r"^\[oar\.linspace\] start must be a real number"):
        oar.linspace("x", 1, 3)
    with pytest.raises(TypeError, match=r"^\[oar\.linspace\] num must be an int"):
        oar.linspace(0, 1, 2.5)
    assert oar.linspace(0, 1, oar.to_tensor(3)).numpy().tolist() == [0.0, 0.5, 1.0]


def test_like_functions_keep_x_dtype_unless_given():
    x = oar.ones([2, 3], dtype="int32")
    assert oar.zeros_like(x).dtype == oar.int32 and oar.ones_like(x, dtype="float64").dtype == oar.float64
    assert oar.full_like(x, 7).numpy().tolist() == [[7] * 3] * 2
    assert oar.empty_like(x).shape == [2, 3]
    with pytest.raises(TypeError, match=r"^\[oar\.zeros_like\]"):
        oar.zeros_like([1, 2])


def test_creation_functions_are_not_tensor_methods():
    for name in ["full", "zeros", "ones", "empty", "zeros_like", "ones_like", "full_like", "empty_like", "arange",
                 "linspace", "eye"]:
        assert not hasattr(oar.Tensor, name)
