"""oar.nn.initializer: distributions, fans, in-place filling, ParamAttr and create_parameter."""
import math

import numpy as np
import pytest

import oar
from oar.nn import initializer as I
from oar.framework_param import ParamAttr, create_parameter


def fill(init, shape, dtype="float32"):
    t = oar.zeros(shape, dtype=dtype)
    out = init(t)
    assert out is t
    return t.numpy().astype(np.float64)


def test_constant_and_assign():
    assert (fill(I.Constant(1.5), [3, 2]) == 1.5).all()
    v = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(fill(I.Assign(v), [2, 3]), v)
    np.testing.assert_array_equal(fill(I.Assign(oar.to_tensor(v)), [2, 3], "float64"), v)
    with pytest.raises(ValueError, match=r"^\[oar.nn.initializer.Assign\]"):
        fill(I.Assign(v), [3, 2])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_uniform_and_normal_moments(dtype):
    oar.seed(123)
    u = fill(I.Uniform(-2.0, 4.0), [20000], dtype)
    assert u.min() >= -2.0 and u.max() <= 4.0
    assert abs(u.mean() - 1.0) < 0.06 and abs(u.std() - 6 / math.sqrt(12)) < 0.06
    n = fill(I.Normal(1.0, 3.0), [20000], dtype)
    assert abs(n.mean() - 1.0) < 0.1 and abs(n.std() - 3.0) < 0.1


def test_truncated_normal():
    oar.seed(5)
    x = fill(I.TruncatedNormal(0.0, 1.0, -1.0, 1.0), [40000], "float64")
    assert x.min() >= -1.0 and x.max() <= 1.0
    # variance of N(0, 1) truncated to [-1, 1]
    phi = math.exp(-0.5) / math.sqrt(2 * math.pi)
    z = math.erf(1 / math.sqrt(2))
    var = 1 - 2 * phi / z
    assert abs(x.mean()) < 0.02 and abs(x.var() - var) < 0.01


@pytest.mark.parametrize("shape,fan_in,fan_out", [([30, 50], 30, 50), ([16, 8, 3, 3], 72, 144), ([40], 40, 40)])
def test_xavier_kaiming_scales(shape, fan_in, fan_out):
    oar.seed(9)
    n = int(np.prod(shape))
    reps = max(1, 20000 // n)
    def sample(init):
        return np.concatenate([fill(init, shape).ravel() for _ in range(reps)])
    xu = sample(I.XavierUniform())
    limit = math.sqrt(6 / (fan_in + fan_out))
    assert np.abs(xu).max() <= limit + 1e-6 and abs(xu.std() - limit / math.sqrt(3)) / xu.std() < 0.05
    xn = sample(I.XavierNormal())
    assert abs(xn.std() - math.sqrt(2 / (fan_in + fan_out))) / xn.std() < 0.05
    kn = sample(I.KaimingNormal())
    assert abs(kn.std() - math.sqrt(2 / fan_in)) / kn.std() < 0.05
    ku = sample(I.KaimingUniform(nonlinearity="leaky_relu", negative_slope=0.1))
    lim = math.sqrt(2 / 1.01) * math.sqrt(3 / fan_in)
    assert np.abs(ku).max() <= lim + 1e-6 and abs(ku.std() - lim / math.sqrt(3)) / ku.std() < 0.05


def test_orthogonal():
    w = fill(I.Orthogonal(gain=2.0), [3, 6])
    np.testing.assert_allclose(w @ w.T, 4 * np.eye(3), atol=1e-5)
    w = fill(I.Orthogonal(), [6, 2, 2], "float64").reshape(6, 4)
    np.testing.assert_allclose(w.T @ w, np.eye(4), atol=1e-10)
    with pytest.raises(ValueError, match=r"^\[oar.nn.initializer.Orthogonal\]"):
        fill(I.Orthogonal(), [4])


def test_calculate_gain_and_errors():
    assert I.calculate_gain("tanh") == 5 / 3
    assert I.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    with pytest.raises(ValueError, match=r"^\[oar.nn.initializer.calculate_gain\]"):
        I.calculate_gain("nope")
    with pytest.raises(ValueError, match=r"^\[oar.nn.initializer.Uniform\]"):
        I.Uniform(1.0, 0.0)


def test_seed_reproducible():
    oar.seed(42)
    a = fill(I.Normal(), [10])
    oar.seed(42)
    b = fill(I.Normal(), [10])
    np.testing.assert_array_equal(a, b)


def test_param_attr_and_create_parameter():
    p = create_parameter([2, 3], "float64", attr=ParamAttr(name="p0", initializer=I.Constant(2.0),
                                                        learning_rate=0.1, need_clip=False))
    assert p.name == "p0" and p.dtype == oar.float64 and (p.numpy() == 2.0).all()
    assert p.optimize_attr == {"learning_rate": 0.1} and p.need_clip is False and p.stop_gradient is False
    b = create_parameter([3], "float32", is_bias=True)
    assert (b.numpy() == 0).all() and b.persistable
    assert create_parameter([2], "float32", attr=False) is None
    fc = oar.nn.Linear(2, 2, weight_attr=I.Constant(0.5), bias_attr=ParamAttr(initializer=I.Constant(1.0)))
    assert (fc.weight.numpy() == 0.5).all() and (fc.bias.numpy() == 1.0).all()
    with pytest.raises(ValueError, match=r"^\[oar.create_parameter\]"):
        create_parameter([-1], "float32")
    with pytest.raises(TypeError, match=r"^\[oar.ParamAttr\]"):
        oar.nn.Linear(2, 2, weight_attr=3)
