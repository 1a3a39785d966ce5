"""The framework utilities of the paddle namespace (oar/_framework_ext.py)."""
import numpy as np
import pytest

import oar


def test_clamp_ger_nan_to_num_():
    x = oar.to_tensor([-3.0, 0.25, 7.0])
    np.testing.assert_array_equal(oar.clamp(x, -1.0, 1.0).numpy(), np.clip(x.numpy(), -1, 1))
    a, b = np.array([1.0, -2.0]), np.array([0.5, 3.0, 4.0])
    np.testing.assert_allclose(oar.ger(oar.to_tensor(a), oar.to_tensor(b)).numpy(), np.outer(a, b))
    y = oar.to_tensor([np.nan, -np.inf, 2.0])
    assert oar.nan_to_num_(y, nan=1.0, neginf=-5.0) is y
    np.testing.assert_array_equal(y.numpy(), [1.0, -5.0, 2.0])


def test_normal_fills_in_place_with_the_right_moments():
    oar.seed(3)
    x = oar.zeros([20000], dtype="float64")
    oar.normal_(x, mean=-1.0, std=2.0)
    a = x.numpy()
    assert abs(a.mean() + 1.0) < 0.05 and abs(a.std() - 2.0) < 0.05
    with pytest.raises(TypeError, match=r"^\[oar.normal_\] x must be a Tensor"):
        oar.normal_([1.0])


def test_printoptions_change_the_repr():
    t = oar.to_tensor([1.23456789, 100.0])
    try:
        oar.set_printoptions(precision=3)
        assert "1.235" in repr(t) and "1.2346" not in repr(t)
        oar.set_printoptions(sci_mode=True)
        assert "1.235e+00" in repr(t)
        oar.set_printoptions(threshold=4, edgeitems=1, sci_mode=False)
        assert "..." in repr(oar.arange(10))
    finally:
        oar.set_printoptions(precision=8, threshold=1000, edgeitems=3)
        from oar._framework_ext import PRINT_OPTIONS
        PRINT_OPTIONS["sci_mode"] = None
    with pytest.raises(ValueError, match=r"^\[oar.set_printoptions\] precision must be a non-negative int"):
        oar.set_printoptions(precision=-1)


def test_flags():
    assert oar.get_flags(["cudnn_deterministic"]) == {"cudnn_deterministic": False}
    oar.set_flags({"FLAGS_cudnn_deterministic": True})
    try:
        assert oar.get_flags("FLAGS_cudnn_deterministic") == {"FLAGS_cudnn_deterministic": True}
    finally:
        oar.set_flags({"FLAGS_cudnn_deterministic": False})
    with pytest.raises(ValueError, match=r"^\[oar.get_flags\] unknown flag 'FLAGS_nope'"):
        oar.get_flags("FLAGS_nope")
    with pytest.raises(NotImplementedError, match=r"^\[oar.set_flags\] FLAGS_check_nan_inf"):
        oar.set_flags({"FLAGS_check_nan_inf": True})
    with pytest.raises(TypeError, match=r"^\[oar.set_flags\] flags must be a dict"):
        oar.set_flags(["FLAGS_cudnn_deterministic"])


def test_batch_reader_and_size():
    reader = oar.batch(lambda: iter(range(7)), batch_size=3, drop_last=True)
    assert list(reader()) == [[0, 1, 2], [3, 4, 5]]
    assert list(oar.batch(lambda: iter(range(7)), 3)()) == [[0, 1, 2], [3, 4, 5], [6]]
    with pytest.raises(ValueError, match=r"^\[oar.batch\] batch_size must be a positive int"):
        oar.batch(lambda: iter([]), 0)
    s = oar.Size([2, 3, 4])
    assert isinstance(s, list) and s.numel() == 24 and repr(s) == "oar.Size([2, 3, 4])"
    with pytest.raises(TypeError, match=r"^\[oar.Size\] dims must be ints"):
        oar.Size([2.5])


def test_top_level_names_are_the_submodule_functions():
    assert oar.conv2d is oar.nn.functional.conv2d and oar.layer_norm is oar.nn.functional.layer_norm
    t = oar.FloatTensor([1, 2])
    assert t.dtype == oar.float32 and t.numpy().tolist() == [1.0, 2.0]
    with oar.LazyGuard():
        layer = oar.nn.Linear(2, 2)
    assert layer.weight.shape == [2, 2]
    with pytest.raises(ValueError, match=r"^\[oar.XPUPinnedPlace\]"):
        oar.XPUPinnedPlace()
