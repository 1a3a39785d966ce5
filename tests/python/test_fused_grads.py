"""First-order gradients that run fused kernels (gelu, relu, softmax along the last
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


def _op_names(fn):
    import oar.profiler as profiler
    with profiler.Profiler() as prof:
        fn()
    return {r.name for r in prof.op_stats()}


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_relu_gradient_is_one_op(dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 333))
    x[0, :5] = 0.0  # the kink: no gradient, as Paddle and PyTorch
    t = oar.to_tensor(x).astype(dtype)
    t.stop_gradient = False
    g = oar.to_tensor(rng.standard_normal((4, 333))).astype(dtype)
    y = F.relu(t)
    box = []
    names = _op_names(lambda: box.extend(oar.grad([y], [t], [g])))
    assert "relu_grad" in names and "where" not in names, names
    np.testing.assert_allclose(_stored(box[0]), _stored(g) * (_stored(t) > 0), rtol=0, atol=0)


def test_relu_gradient_of_gradient_and_broadcast_upstream():
    """relu_grad is linear in the upstream gradient: its own gradient is itself (any order); an
    upstream gradient of another dtype or an expanded one still gives the closed form."""
    x = oar.to_tensor([[0.5, -1.0, 2.0], [-0.1, 0.0, 3.0]], dtype="float64", stop_gradient=False)
    w = oar.to_tensor([1.5, -2.0, 0.25], dtype="float64", stop_gradient=False)
    (gx,) = oar.grad((F.relu(x) * w).sum(), x, create_graph=True)
    mask = (x.numpy() > 0).astype(float)
    np.testing.assert_allclose(gx.numpy(), mask * w.numpy(), rtol=0)
    (gw,) = oar.grad((gx * gx).sum(), w)  # d/dw sum((mask w)^2) = 2 w sum_rows(mask)
    np.testing.assert_allclose(gw.numpy(), 2 * w.numpy() * mask.sum(0), rtol=1e-12)
    y = F.relu(x)
    (g32,) = oar.grad([y], [x], [oar.ones([1, 3], dtype="float32").expand([2, 3])])
    np.testing.assert_allclose(g32.numpy(), mask, rtol=0)
    assert g32.dtype == x.dtype
