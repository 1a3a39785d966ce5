"""Activations: forward against NumPy formulas, gradients against central
differences in float64, softmax stability and axes, dtypes, error inputs."""
import math

import numpy as np
import pytest

import oar
import oar.nn.functional as F

RNG = np.random.default_rng(0)
erf = np.vectorize(math.erf)


def np_softplus(x, beta=1.0, threshold=20.0):
    bx = beta * x
    return np.where(bx > threshold, x, np.log1p(np.exp(np.minimum(bx, threshold))) / beta)


def np_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


SELU_SCALE, SELU_ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717

# (name, oar function, NumPy reference)
CASES = [
    ("relu", F.relu, lambda x: np.maximum(x, 0)),
    ("relu6", F.relu6, lambda x: np.clip(x, 0, 6)),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    ("elu", lambda x: F.elu(x, 0.7), lambda x: np_elu(x, 0.7)),
    ("selu", F.selu, lambda x: SELU_SCALE * np_elu(x, SELU_ALPHA)),
    ("gelu", F.gelu, lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
    ("gelu_tanh", lambda x: F.gelu(x, approximate=True),
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    ("silu", F.silu, lambda x: x / (1 + np.exp(-x))),
    ("softplus", lambda x: F.softplus(x, 2.0, 5.0), lambda x: np_softplus(x, 2.0, 5.0)),
    ("softsign", F.softsign, lambda x: x / (1 + np.abs(x))),
    ("sigmoid", F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    ("log_sigmoid", F.log_sigmoid, lambda x: -np.log1p(np.exp(-x))),
    ("hardswish", F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("hardsigmoid", F.hardsigmoid, lambda x: np.clip(x * 0.1666667 + 0.5, 0, 1)),
    ("hardtanh", F.hardtanh, lambda x: np.clip(x, -1, 1)),
    ("mish", F.mish, lambda x: x * np.tanh(np_softplus(x))),
    ("tanh", F.tanh, np.tanh),
    ("tanhshrink", F.tanhshrink, lambda x: x - np.tanh(x)),
    ("softmax", F.softmax, np_softmax),
    ("softmax_axis0", lambda x: F.softmax(x, axis=0), lambda x: np_softmax(x, 0)),
    ("log_softmax", F.log_softmax, lambda x: np.log(np_softmax(x))),
    ("log_softmax_axis1", lambda x: F.log_softmax(x, 1), lambda x: np.log(np_softmax(x, 1))),
]
IDS = [c[0] for c in CASES]


def sample(shape=(3, 4, 5)):
    # Away from the kinks at 0, +-3, +-6 so finite differences are valid.
    x = RNG.uniform(-7, 7, shape)
    for k in (0.0, 3.0, -3.0, 6.0, -6.0, 1.0, -1.0):
        x = np.where(np.abs(x - k) < 0.05, k + 0.1, x)
    return x


@pytest.mark.parametrize("name,fn,ref", CASES, ids=IDS)
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 2e-6)])
def test_forward(name, fn, ref, dtype, tol):
    x = sample().astype(dtype)
    y = fn(oar.to_tensor(x))
    assert y.dtype == getattr(oar, dtype) and y.shape == list(x.shape)
    np.testing.assert_allclose(y.numpy(), ref(x.astype(np.float64)), rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("name,fn,ref", CASES, ids=IDS)
@pytest.mark.parametrize("dtype,tol", [("float16", 1e-2), ("bfloat16", 5e-2)])
def test_forward_half(name, fn, ref, dtype, tol):
    x = sample((4, 6)).astype(np.float32)
    t = oar.to_tensor(x).astype(dtype)
    xr = t.astype("float32").numpy().astype(np.float64)
    y = fn(t)
    assert y.dtype == getattr(oar, dtype)
    np.testing.assert_allclose(y.astype("float32").numpy(), ref(xr), rtol=tol, atol=tol * 4)


def numeric_grad(f, x, w, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = ((f(xp) * w).sum() - (f(xm) * w).sum()) / (2 * eps)
    return g


@pytest.mark.parametrize("name,fn,ref", CASES, ids=IDS)
def test_grad(name, fn, ref):
    x = sample((2, 3, 4))
    w = RNG.standard_normal(x.shape)
    t = oar.to_tensor(x, stop_gradient=False)
    (fn(t) * oar.to_tensor(w)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), numeric_grad(ref, x, w), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu", "log_sigmoid", "softmax", "log_softmax",
                                  "elu", "mish", "softplus"])
def test_double_grad(name):
    fn, ref = {c[0]: (c[1], c[2]) for c in CASES}[name]
    x = sample((2, 5))
    w = RNG.standard_normal(x.shape)
    v = RNG.standard_normal(x.shape)
    t = oar.to_tensor(x, stop_gradient=False)
    (g,) = oar.grad((fn(t) * oar.to_tensor(w)).sum(), [t], create_graph=True)
    (g * oar.to_tensor(v)).sum().backward()

    def grad_np(xx):
        return numeric_grad(ref, xx, w, eps=1e-5)

    expected = numeric_grad(lambda xx: grad_np(xx), x, v, eps=1e-4)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-3, atol=1e-4)


def test_softmax_rows_sum_to_one_and_stable():
    x = np.array([[1e4, 1e4 - 1, -1e4], [-1e4, -1e4, -1e4], [0.0, 1e4, 1e4]], dtype=np.float32)
    y = F.softmax(oar.to_tensor(x)).numpy()
    assert np.isfinite(y).all()
    np.testing.assert_allclose(y.sum(-1), 1, rtol=1e-6)
    np.testing.assert_allclose(y, np_softmax(x.astype(np.float64)), atol=1e-6)
    ly = F.log_softmax(oar.to_tensor(x)).numpy()
    assert np.isfinite(ly).all()
    np.testing.assert_allclose(ly, np_log_softmax(x.astype(np.float64)), rtol=1e-6, atol=1e-3)
    big = RNG.standard_normal((64, 1000)).astype(np.float32) * 50
    np.testing.assert_allclose(F.softmax(oar.to_tensor(big)).numpy().sum(-1), 1, rtol=1e-5)


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_softmax_any_axis(axis):
    x = RNG.standard_normal((3, 4, 300, 2))  # inner sizes above and below a column block
    np.testing.assert_allclose(F.softmax(oar.to_tensor(x), axis).numpy(), np_softmax(x, axis), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(F.log_softmax(oar.to_tensor(x), axis).numpy(), np.log(np_softmax(x, axis)),
                               rtol=1e-10, atol=1e-12)


def test_softmax_large_threaded():
    x = RNG.standard_normal((512, 513)).astype(np.float32)
    np.testing.assert_allclose(F.softmax(oar.to_tensor(x)).numpy(), np_softmax(x.astype(np.float64)), atol=1e-6)
    np.testing.assert_allclose(F.softmax(oar.to_tensor(x), 0).numpy(), np_softmax(x.astype(np.float64), 0),
                               atol=1e-6)


def test_softmax_dtype_and_int_input():
    x = oar.to_tensor([[1, 2, 3]])
    y = F.softmax(x)
    assert y.dtype == oar.float32
    np.testing.assert_allclose(y.numpy(), np_softmax(np.array([[1.0, 2.0, 3.0]])), rtol=1e-6)
    y64 = F.softmax(oar.to_tensor([[1.0, 2.0]]), dtype="float64")
    assert y64.dtype == oar.float64
    assert F.relu(oar.to_tensor([-1, 2])).dtype == oar.float32


def test_non_contiguous_zero_size_and_0d():
    x = RNG.standard_normal((4, 5))
    t = oar.to_tensor(x).transpose([1, 0])
    np.testing.assert_allclose(F.softmax(t).numpy(), np_softmax(x.T), rtol=1e-12)
    np.testing.assert_allclose(F.gelu(t).numpy(), 0.5 * x.T * (1 + erf(x.T / math.sqrt(2))), rtol=1e-12)
    np.testing.assert_allclose(F.relu(t).numpy(), np.maximum(x.T, 0))
    z = oar.zeros([0, 3])
    for f in (F.relu, F.gelu, F.silu, F.softmax, F.log_softmax, F.elu, F.mish):
        assert f(z).shape == [0, 3]
    assert F.softmax(oar.zeros([3, 0]), axis=0).shape == [3, 0]
    s = oar.to_tensor(2.0)
    assert F.softmax(s).item() == 1.0 and F.log_softmax(s).item() == 0.0
    assert F.relu(oar.to_tensor(-2.0)).item() == 0.0


def test_relu_inplace():
    x = oar.to_tensor([-1.0, 2.0, -3.0])
    y = F.relu_(x)
    assert y is x
    np.testing.assert_array_equal(x.numpy(), [0.0, 2.0, 0.0])


def test_large_inputs_no_overflow():
    x = oar.to_tensor(np.array([-1000.0, 1000.0]), stop_gradient=False)
    for f in (F.elu, F.selu, F.softplus, F.log_sigmoid, F.mish, F.silu, F.sigmoid):
        y = f(x)
        assert np.isfinite(y.numpy()).all(), f.__name__
        (g,) = oar.grad(y.sum(), [x])
        assert np.isfinite(g.numpy()).all(), f.__name__


def test_errors():
    c = oar.to_tensor(np.array([1 + 1j]))
    for f in (F.relu, F.gelu, F.silu, F.softmax, F.elu, F.log_sigmoid):
        with pytest.raises(TypeError, match=r"^\[oar.nn.functional\."):
            f(c)
    with pytest.raises(IndexError, match=r"^\[oar.nn.functional.softmax\]"):
        F.softmax(oar.zeros([2, 3]), axis=2)
    with pytest.raises(IndexError, match=r"^\[oar.nn.functional.log_softmax\]"):
        F.log_softmax(oar.zeros([2, 3]), axis=-3)
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.gelu\]"):
        F.gelu(oar.zeros([2]), approximate="fast")
    with pytest.raises(TypeError, match=r"^\[oar.nn.functional.relu_\]"):
        F.relu_(oar.to_tensor([1, 2]))


def test_top_level_relu():
    x = oar.to_tensor([-1.0, 2.0])
    np.testing.assert_array_equal(oar.relu(x).numpy(), [0.0, 2.0])
    assert x.numpy().tolist() == [-1.0, 2.0]
    oar.relu(x, inplace=True)
    assert x.numpy().tolist() == [0.0, 2.0]
