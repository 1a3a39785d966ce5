"""First-order gradients that run fused kernels (gelu, softmax along the last
axis) against closed forms in NumPy, for each float dtype; higher orders use
the composite rules and are checked against finite differences elsewhere
(test_activation.py)."""
import math

import numpy as np
import pytest

import oar
import oar.nn.functional as F

_erf = np.vectorize(math.erf)
TOL = {"float32": 3e-6, "float64": 1e-12, "bfloat16": 2e-2, "float16": 3e-3}


def _stored(t):
    return t.astype("float64").numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_gradient(dtype, approximate):
    rng = np.random.default_rng(0)
    t = oar.to_tensor(rng.standard_normal((3, 777)) * 3).astype(dtype)
    t.stop_gradient = False
    g = oar.to_tensor(rng.standard_normal((3, 777))).astype(dtype)
    (F.gelu(t, approximate=approximate) * g).sum().backward()
    x = _stored(t)
    if approximate:
        k = math.sqrt(2 / math.pi)
        th = np.tanh(k * (x + 0.044715 * x ** 3))
        d = 0.5 * (1 + th) + 0.5 * x * (1 - th ** 2) * k * (1 + 3 * 0.044715 * x ** 2)
    else:
        d = 0.5 * (1 + _erf(x / math.sqrt(2))) + x * np.exp(-x ** 2 / 2) / math.sqrt(2 * math.pi)
    want = d * _stored(g)
    np.testing.assert_allclose(_stored(t.grad), want, rtol=TOL[dtype], atol=TOL[dtype] * np.abs(want).max())


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape", [(5, 7), (2, 3, 129), (1, 1)])
def test_softmax_gradient_last_axis(dtype, shape):
    rng = np.random.default_rng(1)
    t = oar.to_tensor(rng.standard_normal(shape)).astype(dtype)
    t.stop_gradient = False
    g = oar.to_tensor(rng.standard_normal(shape)).astype(dtype)
    y = F.softmax(t, axis=-1)
    (y * g).sum().backward()
    ys, gs = _stored(y), _stored(g)
    want = ys * (gs - (gs * ys).sum(-1, keepdims=True))
    np.testing.assert_allclose(_stored(t.grad), want, rtol=TOL[dtype], atol=TOL[dtype] * max(np.abs(want).max(), 1e-3))


def test_double_backward_still_uses_composites():
    x = oar.to_tensor([0.3, -1.2, 2.0], dtype="float64", stop_gradient=False)
    (g1,) = oar.grad(F.gelu(x).sum(), x, create_graph=True)
    (g2,) = oar.grad(g1.sum(), x)
    xs = x.numpy()
    pdf = np.exp(-xs ** 2 / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(g2.numpy(), pdf * (2 - xs ** 2), rtol=1e-12)
