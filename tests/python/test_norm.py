"""Normalisation: forward against NumPy formulas, running-statistics updates
and eval mode, gradients and double gradients against central differences in
float64, layers (Paddle parameter and buffer names) and errors."""
import numpy as np
import pytest

import oar
import oar.nn.functional as F
from gradcheck import numeric_grad

RNG = np.random.default_rng(0)


def np_norm(x, axes, eps):
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    return (x - mu) / np.sqrt(var + eps)


def np_bn(x, w, b, eps=1e-5, axis=1):
    axes = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    shape = [1] * x.ndim
    shape[axis] = -1
    return np_norm(x, axes, eps) * w.reshape(shape) + b.reshape(shape)


def np_ln(x, w, b, nd, eps=1e-5):
    y = np_norm(x, tuple(range(x.ndim - nd, x.ndim)), eps)
    return y * w + b if w is not None else y


def np_gn(x, g, w, b, eps=1e-5):
    n, c = x.shape[:2]
    y = np_norm(x.reshape(n, g, -1), (2,), eps).reshape(x.shape)
    shape = [1, c] + [1] * (x.ndim - 2)
    return y * w.reshape(shape) + b.reshape(shape)


def np_rms(x, w, nd, eps=1e-5):
    axes = tuple(range(x.ndim - nd, x.ndim))
    return x / np.sqrt((x ** 2).mean(axis=axes, keepdims=True) + eps) * w



T = oar.to_tensor


@pytest.mark.parametrize("shape,fmt,axis", [((4, 3), "NC", 1), ((2, 3, 5), "NCL", 1), ((2, 3, 4, 5), "NCHW", 1),
                                            ((2, 4, 5, 3), "NHWC", -1), ((2, 3, 2, 3, 2), "NCDHW", 1)])
@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float64", 1e-10)])
def test_batch_norm_train_and_running_stats(shape, fmt, axis, dtype, tol):
    x = RNG.standard_normal(shape) * 2 + 1
    c = shape[axis]
    w, b = RNG.standard_normal(c), RNG.standard_normal(c)
    rm0, rv0 = RNG.standard_normal(c), RNG.random(c) + 0.5
    rm, rv = T(rm0.astype(dtype)), T(rv0.astype(dtype))
    y = F.batch_norm(T(x.astype(dtype)), rm, rv, T(w.astype(dtype)), T(b.astype(dtype)), training=True,
                     momentum=0.8, data_format=fmt)
    np.testing.assert_allclose(y.numpy(), np_bn(x, w, b, axis=axis), rtol=tol, atol=tol)
    axes = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    np.testing.assert_allclose(rm.numpy(), 0.8 * rm0 + 0.2 * x.mean(axis=axes), rtol=tol, atol=tol)
    np.testing.assert_allclose(rv.numpy(), 0.8 * rv0 + 0.2 * x.var(axis=axes), rtol=tol, atol=tol)


def test_batch_norm_eval_and_global_stats():
    x = RNG.standard_normal((3, 2, 4))
    rm, rv = np.array([0.5, -1.0]), np.array([2.0, 0.5])
    w, b = np.array([1.5, -0.5]), np.array([0.1, 0.2])
    ref = (x - rm.reshape(1, 2, 1)) / np.sqrt(rv.reshape(1, 2, 1) + 1e-5) * w.reshape(1, 2, 1) + b.reshape(1, 2, 1)
    trm, trv = T(rm), T(rv)
    y = F.batch_norm(T(x), trm, trv, T(w), T(b), training=False)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-10)
    y = F.batch_norm(T(x), trm, trv, T(w), T(b), training=True, use_global_stats=True)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-10)
    np.testing.assert_array_equal(trm.numpy(), rm)  # untouched
    y = F.batch_norm(T(x), trm, trv, T(w), T(b), training=False, use_global_stats=False)
    np.testing.assert_allclose(y.numpy(), np_bn(x, w, b), rtol=1e-10)
    np.testing.assert_array_equal(trm.numpy(), rm)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_grad(training):
    x = RNG.standard_normal((3, 2, 4))
    w, b = RNG.standard_normal(2), RNG.standard_normal(2)
    rm, rv = RNG.standard_normal(2), RNG.random(2) + 0.5
    v = RNG.standard_normal(x.shape)

    def ref(x_, w_, b_):
        if training:
            return np_bn(x_, w_, b_)
        return (x_ - rm.reshape(1, 2, 1)) / np.sqrt(rv.reshape(1, 2, 1) + 1e-5) * w_.reshape(1, 2, 1) + b_.reshape(1, 2, 1)

    tx, tw, tb = (T(a, stop_gradient=False) for a in (x, w, b))
    y = F.batch_norm(tx, T(rm), T(rv), tw, tb, training=training)
    (y * T(v)).sum().backward()
    np.testing.assert_allclose(tx.grad.numpy(), numeric_grad(lambda a: (ref(a, w, b) * v).sum(), x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tw.grad.numpy(), numeric_grad(lambda a: (ref(x, a, b) * v).sum(), w), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tb.grad.numpy(), numeric_grad(lambda a: (ref(x, w, a) * v).sum(), b), rtol=1e-6, atol=1e-7)


def double_grad_check(fn, ref, x, v, u):
    """Checks d/dx <d/dx <fn(x), v>, u> against nested central differences."""
    tx = T(x, stop_gradient=False)
    (gx,) = oar.grad([(fn(tx) * T(v)).sum()], [tx], create_graph=True)
    np.testing.assert_allclose(gx.numpy(), numeric_grad(lambda a: (ref(a) * v).sum(), x), rtol=1e-6, atol=1e-7)
    (ggx,) = oar.grad([(gx * T(u)).sum()], [tx])
    first = lambda a: (numeric_grad(lambda c: (ref(c) * v).sum(), a, 1e-4) * u).sum()  # noqa: E731
    np.testing.assert_allclose(ggx.numpy(), numeric_grad(first, x, 1e-4), rtol=1e-4, atol=1e-5)


def test_double_grad():
    x = RNG.standard_normal((3, 2, 2))
    v, u = RNG.standard_normal(x.shape), RNG.standard_normal(x.shape)
    w, b = RNG.standard_normal(2), RNG.standard_normal(2)
    double_grad_check(lambda t: F.batch_norm(t, None, None, T(w), T(b), training=True),
                      lambda a: np_bn(a, w, b), x, v, u)
    double_grad_check(lambda t: F.layer_norm(t, [2, 2], T(np.ones((2, 2)) * 1.5)),
                      lambda a: np_ln(a, np.ones((2, 2)) * 1.5, 0.0, 2), x, v, u)
    double_grad_check(lambda t: F.rms_norm(t, 2), lambda a: np_rms(a, 1.0, 1), x, v, u)


@pytest.mark.parametrize("shape,nd", [((4, 6), 1), ((2, 3, 4), 2), ((2, 3, 4), 1), ((5,), 1)])
@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float64", 1e-10)])
def test_layer_norm(shape, nd, dtype, tol):
    x = RNG.standard_normal(shape) * 3 + 2
    ns = list(shape[len(shape) - nd:])
    w, b = RNG.standard_normal(ns), RNG.standard_normal(ns)
    y = F.layer_norm(T(x.astype(dtype)), ns, T(w.astype(dtype)), T(b.astype(dtype)))
    np.testing.assert_allclose(y.numpy(), np_ln(x, w, b, nd), rtol=tol, atol=tol)
    y = F.layer_norm(T(x.astype(dtype)), ns, epsilon=1e-3)
    np.testing.assert_allclose(y.numpy(), np_ln(x, None, None, nd, 1e-3), rtol=tol, atol=tol)


def test_layer_norm_grad():
    x = RNG.standard_normal((3, 4))
    w, b, v = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal((3, 4))
    tx, tw, tb = (T(a, stop_gradient=False) for a in (x, w, b))
    (F.layer_norm(tx, 4, tw, tb) * T(v)).sum().backward()
    np.testing.assert_allclose(tx.grad.numpy(), numeric_grad(lambda a: (np_ln(a, w, b, 1) * v).sum(), x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tw.grad.numpy(), numeric_grad(lambda a: (np_ln(x, a, b, 1) * v).sum(), w), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tb.grad.numpy(), v.sum(0), rtol=1e-10)


def test_group_and_instance_norm():
    x = RNG.standard_normal((2, 6, 3, 2))
    w, b = RNG.standard_normal(6), RNG.standard_normal(6)
    np.testing.assert_allclose(F.group_norm(T(x), 3, weight=T(w), bias=T(b)).numpy(), np_gn(x, 3, w, b), rtol=1e-10)
    np.testing.assert_allclose(F.group_norm(T(x.transpose(0, 2, 3, 1).copy()), 2, weight=T(w), bias=T(b),
                                            data_format="NHWC").numpy(),
                               np_gn(x, 2, w, b).transpose(0, 2, 3, 1), rtol=1e-10)
    np.testing.assert_allclose(F.instance_norm(T(x), weight=T(w), bias=T(b)).numpy(), np_gn(x, 6, w, b), rtol=1e-10)
    tx, tw = T(x, stop_gradient=False), T(w, stop_gradient=False)
    v = RNG.standard_normal(x.shape)
    (F.group_norm(tx, 2, weight=tw, bias=T(b)) * T(v)).sum().backward()
    np.testing.assert_allclose(tx.grad.numpy(), numeric_grad(lambda a: (np_gn(a, 2, w, b) * v).sum(), x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tw.grad.numpy(), numeric_grad(lambda a: (np_gn(x, 2, a, b) * v).sum(), w), rtol=1e-6, atol=1e-7)


def test_rms_norm_and_lrn():
    x = RNG.standard_normal((2, 3, 4)).astype("float32")
    w = RNG.standard_normal(4).astype("float32")
    np.testing.assert_allclose(F.rms_norm(T(x), 4, T(w)).numpy(), np_rms(x, w, 1), rtol=1e-5, atol=1e-6)
    xl = RNG.standard_normal((1, 5, 2, 2))
    sq = np.pad(xl ** 2, [(0, 0), (1, 1), (0, 0), (0, 0)])
    ref = xl / (1.0 + 1e-2 * (sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:]) / 3) ** 0.75
    np.testing.assert_allclose(F.local_response_norm(T(xl), 3, alpha=1e-2).numpy(), ref, rtol=1e-10)


def test_layers():
    bn = oar.nn.BatchNorm2D(3, momentum=0.5)
    assert sorted(bn.state_dict().keys()) == ["_mean", "_variance", "bias", "weight"]
    assert bn.weight.numpy().tolist() == [1.0, 1.0, 1.0] and bn._variance.numpy().tolist() == [1.0, 1.0, 1.0]
    assert bn._mean.stop_gradient and not bn.weight.stop_gradient
    x = RNG.standard_normal((4, 3, 2, 2)).astype("float32")
    y = bn(T(x))
    np.testing.assert_allclose(y.numpy(), np_bn(x, np.ones(3), np.zeros(3)), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn._mean.numpy(), 0.5 * x.mean(axis=(0, 2, 3)), rtol=1e-5, atol=1e-6)
    bn.eval()
    mean, var = bn._mean.numpy().copy(), bn._variance.numpy().copy()
    y = bn(T(x))
    ref = (x - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(bn._mean.numpy(), mean)
    with pytest.raises(ValueError, match=r"^\[oar.nn.BatchNorm2D\]"):
        bn(T(x[0]))
    assert oar.nn.BatchNorm1D(3)(T(x[:, :, 0, 0])).shape == [4, 3]
    ln = oar.nn.LayerNorm([2, 2])
    np.testing.assert_allclose(ln(T(x)).numpy(), np_ln(x, None, None, 2), rtol=1e-4, atol=1e-5)
    assert sorted(oar.nn.InstanceNorm2D(3).state_dict().keys()) == ["bias", "scale"]
    assert oar.nn.GroupNorm(3, 3)(T(x)).shape == [4, 3, 2, 2]
    assert oar.nn.RMSNorm(2).weight.numpy().tolist() == [1.0, 1.0]


def test_zero_size_and_noncontiguous():
    assert F.layer_norm(oar.zeros([0, 4]), 4).shape == [0, 4]
    x = RNG.standard_normal((3, 4))
    xv = oar.transpose(T(x.T.copy()), [1, 0])
    np.testing.assert_allclose(F.layer_norm(xv, 4).numpy(), np_ln(x, None, None, 1), rtol=1e-10)
    np.testing.assert_allclose(F.batch_norm(xv, None, None, None, None, training=True, data_format="NC").numpy(),
                               np_bn(x, np.ones(4), np.zeros(4)), rtol=1e-10)


ERRORS = [
    (lambda: F.batch_norm(oar.ones([2, 3, 4]), oar.zeros([4]), oar.ones([4]), None, None), ValueError,
     "oar.nn.functional.batch_norm", "running_mean"),
    (lambda: F.batch_norm(oar.ones([2, 3]), oar.zeros([3]), oar.ones([3]), None, None, data_format="CHWN"),
     ValueError, "oar.nn.functional.batch_norm", "data_format"),
    (lambda: F.batch_norm(oar.ones([1, 3]), None, None, None, None, training=True, data_format="NC"), ValueError,
     "oar.nn.functional.batch_norm", "more than one value"),
    (lambda: F.layer_norm(oar.ones([2, 3]), [4]), ValueError, "oar.nn.functional.layer_norm", "normalized_shape"),
    (lambda: F.layer_norm(oar.ones([2, 3]), 3, oar.ones([4])), ValueError, "oar.nn.functional.layer_norm", "weight"),
    (lambda: F.group_norm(oar.ones([2, 3, 4]), 2), ValueError, "oar.nn.functional.group_norm", "divisible"),
    (lambda: F.instance_norm(oar.ones([2, 3])), ValueError, "oar.nn.functional.instance_norm", "3 dims"),
    (lambda: F.rms_norm(oar.ones([2, 3]), [2, 3, 4]), ValueError, "oar.nn.functional.rms_norm", "normalized_shape"),
    (lambda: F.layer_norm(oar.ones([2, 3], dtype="int64"), 3), TypeError, "oar.nn.functional.layer_norm", "floating"),
]


@pytest.mark.parametrize("fn,exc,api,msg", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(fn, exc, api, msg):
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value).startswith(f"[{api}]") and msg in str(e.value), str(e.value)
