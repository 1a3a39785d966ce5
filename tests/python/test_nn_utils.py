"""oar.nn.utils (gradient clipping in place, parameter vectors, weight_norm, spectral_norm) and
oar.nn.initializer.Dirac, against NumPy, closed forms and finite differences."""
import math

import numpy as np
import pytest

import oar
from oar.nn import initializer as I
from oar.nn import utils as U

from gradcheck import numeric_grad


def param_with_grad(grad, dtype="float32"):
    """A parameter whose .grad is `grad` (through d/dp sum(p * grad))."""
    grad = np.asarray(grad, dtype)
    p = oar.create_parameter(list(grad.shape), dtype)
    (p * oar.to_tensor(grad)).sum().backward()
    return p


def np_total_norm(grads, p):
    norms = [np.linalg.norm(g.ravel().astype(np.float64), p) for g in grads]
    return np.linalg.norm(np.array(norms), p)


# ---- clip_grad_norm_ / clip_grad_value_

@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 0.0, 3.0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_grad_norm_matches_numpy(norm_type, dtype):
    rng = np.random.RandomState(0)
    grads = [rng.randn(3, 4) * 5, rng.randn(5), np.array([0.0, 0.0])]
    params = [param_with_grad(g, dtype) for g in grads]
    params.append(oar.create_parameter([2], dtype))  # no grad: skipped
    total = U.clip_grad_norm_(params, max_norm=1.5, norm_type=norm_type)
    # p = 0 is the 0-"norm" of the per-gradient 0-norms: the number of gradients with a nonzero entry (2).
    expected = 2.0 if norm_type == 0 else np_total_norm(grads, norm_type)
    assert total.dtype == params[0].dtype and total.shape == []
    np.testing.assert_allclose(float(total), expected, rtol=1e-6)
    coef = min(1.5 / (expected + 1e-6), 1.0)
    assert coef < 1.0
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g * coef, rtol=1e-5, atol=1e-7)
    assert params[-1].grad is None


def test_clip_grad_norm_leaves_small_grads_and_accepts_one_tensor():
    p = param_with_grad([3.0, -4.0])
    g_before = p.grad
    total = U.clip_grad_norm_(p, max_norm=oar.to_tensor(10.0))
    assert float(total) == 5.0
    np.testing.assert_allclose(p.grad.numpy(), [3.0, -4.0], rtol=1e-6)  # coef 10 / 5 clamped at 1
    assert p.grad is g_before  # scaled in place
    p = param_with_grad([3.0, -4.0])
    p.need_clip = False  # ignored by clip_grad_norm_ (as Paddle)
    U.clip_grad_norm_(p, 1.0)
    np.testing.assert_allclose(p.grad.numpy(), [3.0 / (5 + 1e-6), -4.0 / (5 + 1e-6)], rtol=1e-6)


def test_clip_grad_norm_without_grads_returns_zero():
    for params in ([], [oar.create_parameter([2], "float32")]):
        total = U.clip_grad_norm_(params, 1.0)
        assert float(total) == 0.0 and total.shape == [] and total.dtype == oar.float32


def test_clip_grad_norm_nonfinite():
    p = param_with_grad([np.inf, 1.0])
    with pytest.raises(RuntimeError, match=r"^\[oar.nn.utils.clip_grad_norm_\] .*non|inf"):
        U.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    np.testing.assert_array_equal(p.grad.numpy(), [np.inf, 1.0])  # untouched
    p = param_with_grad([np.nan, 1.0])
    total = U.clip_grad_norm_([p], 1.0)
    assert math.isnan(float(total)) and np.isnan(p.grad.numpy()).all()


def test_clip_grad_norm_errors():
    p = param_with_grad([1.0])
    with pytest.raises(ValueError, match=r"^\[oar.nn.utils.clip_grad_norm_\] max_norm"):
        U.clip_grad_norm_([p], -1.0)
    with pytest.raises(ValueError, match=r"^\[oar.nn.utils.clip_grad_norm_\] norm_type"):
        U.clip_grad_norm_([p], 1.0, norm_type=-2)
    with pytest.raises(TypeError, match=r"^\[oar.nn.utils.clip_grad_norm_\] norm_type"):
        U.clip_grad_norm_([p], 1.0, norm_type="fro")
    with pytest.raises(TypeError, match=r"^\[oar.nn.utils.clip_grad_norm_\] parameters"):
        U.clip_grad_norm_([p, 3.0], 1.0)
    with pytest.raises(TypeError, match=r"^\[oar.nn.utils.clip_grad_norm_\] parameters"):
        U.clip_grad_norm_(5, 1.0)


def test_clip_grad_value():
    rng = np.random.RandomState(1)
    grads = [rng.randn(4, 3) * 2, rng.randn(6)]
    params = [param_with_grad(g) for g in grads] + [oar.create_parameter([2], "float32")]
    assert U.clip_grad_value_(params, 0.5) is None
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), np.clip(g, -0.5, 0.5).astype(np.float32))
    with pytest.raises(ValueError, match=r"^\[oar.nn.utils.clip_grad_value_\] clip_value must be >= 0"):
        U.clip_grad_value_(params, -1.0)


# ---- parameters_to_vector / vector_to_parameters

def test_parameters_to_vector_is_flat_concat_and_differentiable():
    rng = np.random.RandomState(2)
    vals = [rng.randn(2, 3), rng.randn(4), rng.randn(1, 1, 2)]
    params = [oar.create_parameter(list(v.shape), "float64", default_initializer=I.Assign(v)) for v in vals]
    vec = U.parameters_to_vector(params)
    np.testing.assert_array_equal(vec.numpy(), np.concatenate([v.ravel() for v in vals]))
    c = rng.randn(vec.shape[0])
    (vec * oar.to_tensor(c)).sum().backward()
    start = 0
    for p, v in zip(params, vals):
        np.testing.assert_array_equal(p.grad.numpy(), c[start:start + v.size].reshape(v.shape))
        start += v.size
    with pytest.raises(ValueError, match=r"^\[oar.nn.utils.parameters_to_vector\] expected at least one"):
        U.parameters_to_vector([])


def test_vector_to_parameters_copies_in_place():
    a = oar.create_parameter([2, 3], "float32")
    b = oar.create_parameter([4], "float64")
    vec = np.arange(12, dtype=np.float64) / 4  # longer than needed: the tail is ignored
    U.vector_to_parameters(oar.to_tensor(vec), [a, b])
    np.testing.assert_array_equal(a.numpy(), vec[:6].reshape(2, 3))
    np.testing.assert_array_equal(b.numpy(), vec[6:10])
    assert a.dtype == oar.float32 and b.dtype == oar.float64 and not a.stop_gradient
    U.vector_to_parameters(U.parameters_to_vector([a]) * 2, [a])  # round trip through the vector
    np.testing.assert_array_equal(a.numpy(), 2 * vec[:6].reshape(2, 3))
    with pytest.raises(ValueError, match=r"^\[oar.nn.utils.vector_to_parameters\] the parameters hold 10"):
        U.vector_to_parameters(oar.zeros([9]), [a, b])
    with pytest.raises(ValueError, match=r"^\[oar.nn.utils.vector_to_parameters\] vec must be 1-D"):
        U.vector_to_parameters(oar.zeros([2, 5]), [a, b])
    with pytest.raises(TypeError, match=r"^\[oar.nn.utils.vector_to_parameters\] vec must be a Tensor"):
        U.vector_to_parameters(np.zeros(10), [a, b])


# ---- weight_norm

def np_weight_norm(g, v, dim):
    """g * v / max(||v||, 1e-12), the norm over all axes but dim (dim None: the whole tensor)."""
    if dim is None:
        return g * v / max(np.sqrt((v ** 2).sum()), 1e-12)
    axes = tuple(i for i in range(v.ndim) if i != dim)
    norm = np.maximum(np.sqrt((v ** 2).sum(axis=axes, keepdims=True)), 1e-12)
    shape = [1] * v.ndim
    shape[dim] = -1
    return g.reshape(shape) * v / norm


@pytest.mark.parametrize("dim, norm_dim, g_shape", [(0, 0, [4]), (1, 1, [2]), (-2, 2, [3]), (3, 3, [3]),
                                                    (None, None, []), (-1, None, [])])
def test_weight_norm_conv_dims(dim, norm_dim, g_shape):
    conv = oar.nn.Conv2D(2, 4, 3)
    w0 = conv.weight.numpy().astype(np.float64)
    x = oar.rand([1, 2, 5, 5])
    y0 = conv(x).numpy()
    U.weight_norm(conv, dim=dim)
    assert [(n, p.shape) for n, p in conv.named_parameters()] == [
        ("bias", [4]), ("weight_v", [4, 2, 3, 3]), ("weight_g", g_shape)]
    assert list(conv.state_dict()) == ["bias", "weight_v", "weight_g"]
    # g starts at sqrt(||w||^2 + 1e-12) per slice, v at w, so the weight and output are unchanged.
    axes = tuple(i for i in range(4) if i != norm_dim) if norm_dim is not None else None
    np.testing.assert_allclose(conv.weight_g.numpy(), np.sqrt((w0 ** 2).sum(axis=axes) + 1e-12), rtol=1e-6)
    np.testing.assert_array_equal(conv.weight_v.numpy(), w0.astype(np.float32))
    np.testing.assert_allclose(conv(x).numpy(), y0, rtol=1e-5, atol=1e-6)
    # New g and v: the weight follows the reparametrisation at the next forward.
    rng = np.random.RandomState(3)
    g, v = np.asarray(rng.rand(*g_shape) + 0.5), rng.randn(4, 2, 3, 3)
    conv.weight_g.set_value(oar.to_tensor(g.astype(np.float32)))
    conv.weight_v.set_value(oar.to_tensor(v.astype(np.float32)))
    conv(x)
    np.testing.assert_allclose(conv.weight.numpy(), np_weight_norm(g, v, norm_dim), rtol=1e-5, atol=1e-7)


def test_weight_norm_gradients_match_finite_differences():
    rng = np.random.RandomState(4)
    lin = oar.nn.Linear(3, 2).to(dtype="float64")
    U.weight_norm(lin, dim=1)
    x, c = rng.randn(5, 3), rng.randn(5, 2)
    g0, v0, b0 = lin.weight_g.numpy(), lin.weight_v.numpy(), lin.bias.numpy()

    def loss(g, v):
        return float(((x @ np_weight_norm(g, v, 1) + b0) * c).sum())

    (lin(oar.to_tensor(x)) * oar.to_tensor(c)).sum().backward()
    np.testing.assert_allclose(lin.weight_g.grad.numpy(), numeric_grad(lambda g: loss(g, v0), g0), rtol=1e-6)
    np.testing.assert_allclose(lin.weight_v.grad.numpy(), numeric_grad(lambda v: loss(g0, v), v0), rtol=1e-6,
                               atol=1e-9)


def test_weight_norm_trains_and_removes():
    rng = np.random.RandomState(5)
    lin = oar.nn.Linear(4, 3)
    U.weight_norm(lin)
    x = oar.to_tensor(rng.randn(16, 4).astype(np.float32))
    t = oar.to_tensor(rng.randn(16, 3).astype(np.float32))
    opt = oar.optimizer.SGD(learning_rate=0.1, parameters=lin.parameters())
    losses = []
    for _ in range(20):
        loss = oar.nn.functional.mse_loss(lin(x), t)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < 0.9 * losses[0]
    w = np_weight_norm(lin.weight_g.numpy(), lin.weight_v.numpy(), 0)
    y = lin(x).numpy()
    U.remove_weight_norm(lin)
    assert [n for n, _ in lin.named_parameters()] == ["bias", "weight"]
    assert list(lin.state_dict()) == ["bias", "weight"] and not lin._forward_pre_hooks
    np.testing.assert_allclose(lin.weight.numpy(), w, rtol=1e-5, atol=1e-7)
    assert not lin.weight.stop_gradient
    np.testing.assert_allclose(lin(x).numpy(), y, rtol=1e-5, atol=1e-6)


def test_weight_norm_zero_weight_and_state_dict():
    lin = oar.nn.Linear(2, 2)
    lin.weight.set_value(np.zeros((2, 2), np.float32))
    U.weight_norm(lin)
    np.testing.assert_allclose(lin.weight_g.numpy(), [1e-6, 1e-6], rtol=1e-5)
    assert np.isfinite(lin.weight.numpy()).all()
    src = U.weight_norm(oar.nn.Linear(2, 2))
    lin.set_state_dict(src.state_dict())
    x = oar.rand([3, 2])
    np.testing.assert_allclose(lin(x).numpy(), src(x).numpy(), rtol=1e-6)


def test_weight_norm_errors():
    lin = U.weight_norm(oar.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match=r"^\[oar.nn.utils.weight_norm\] cannot register two weight_norm"):
        U.weight_norm(lin)
    with pytest.raises(KeyError, match=r"\[oar.nn.utils.weight_norm\] Linear has no parameter 'foo'"):
        U.weight_norm(oar.nn.Linear(2, 2), name="foo")
    fresh = oar.nn.Linear(2, 2)
    with pytest.raises(ValueError, match=r"^\[oar.nn.utils.weight_norm\] dim must be in \[-2, 2\)"):
        U.weight_norm(fresh, dim=2)
    assert [n for n, _ in fresh.named_parameters()] == ["weight", "bias"]  # left as it was
    with pytest.raises(TypeError, match=r"^\[oar.nn.utils.weight_norm\] layer must be an oar.nn.Layer"):
        U.weight_norm(3)
    with pytest.raises(ValueError, match=r"^\[oar.nn.utils.remove_weight_norm\] weight_norm of 'weight'"):
        U.remove_weight_norm(oar.nn.Linear(2, 2))


# ---- spectral_norm

def np_power_step(u, v, m, eps=1e-12):
    v = m.T @ u
    v = v / max(np.linalg.norm(v), eps)
    u = m @ v
    return u / max(np.linalg.norm(u), eps), v


def test_spectral_norm_linear_power_iteration_and_modes():
    rng = np.random.RandomState(6)
    lin = oar.nn.Linear(3, 2).to(dtype="float64")
    w = rng.randn(3, 2)
    lin.weight.set_value(w)
    U.spectral_norm(lin, n_power_iterations=2)
    assert [n for n, _ in lin.named_parameters()] == ["bias", "weight_orig"]
    assert [(n, b.shape) for n, b in lin.named_buffers()] == [("weight", [3, 2]), ("weight_u", [2]),
                                                             ("weight_v", [3])]
    assert list(lin.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    u, v = lin.weight_u.numpy().copy(), lin.weight_v.numpy().copy()  # numpy() may share memory
    np.testing.assert_allclose([np.linalg.norm(u), np.linalg.norm(v)], [1.0, 1.0], rtol=1e-12)
    m = w.T  # Linear's default dim is 1, its output axis
    lin(oar.ones([1, 3]))
    for _ in range(2):
        u, v = np_power_step(u, v, m)
    np.testing.assert_allclose(lin.weight_u.numpy(), u, rtol=1e-10)
    np.testing.assert_allclose(lin.weight_v.numpy(), v, rtol=1e-10)
    np.testing.assert_allclose(lin.weight.numpy(), w / (u @ m @ v), rtol=1e-10)
    lin.eval()  # no power iteration: u and v stay
    u_before = lin.weight_u.numpy().copy()
    lin(oar.ones([1, 3]))
    np.testing.assert_array_equal(lin.weight_u.numpy(), u_before)
    np.testing.assert_allclose(lin.weight.numpy(), w / (u @ m @ v), rtol=1e-10)
    lin.train()
    for _ in range(20):
        lin(oar.ones([1, 3]))
    sigma = np.linalg.svd(w, compute_uv=False)[0]
    np.testing.assert_allclose(lin.weight.numpy(), w / sigma, rtol=1e-8)


def test_spectral_norm_conv_dims_and_gradient():
    assert U.spectral_norm(oar.nn.Conv2D(2, 4, 3)).weight_u.shape == [4]
    tr = U.spectral_norm(oar.nn.Conv2DTranspose(2, 4, 3))
    assert [tr.weight_u.shape, tr.weight_v.shape] == [[4], [18]]
    rng = np.random.RandomState(7)
    conv = oar.nn.Conv1D(2, 3, 2).to(dtype="float64")
    U.spectral_norm(conv, dim=2)
    conv.eval()  # u, v fixed: sigma = u^T W v with W viewed as [k, out * in]
    u, v = conv.weight_u.numpy().copy(), conv.weight_v.numpy().copy()
    w0 = conv.weight_orig.numpy().copy()
    c = rng.randn(3, 2, 2)

    def loss(w):
        m = np.transpose(w, (2, 0, 1)).reshape(2, -1)
        return float(((w / (u @ m @ v)) * c).sum())

    conv(oar.ones([1, 2, 4], dtype="float64"))
    (conv.weight * oar.to_tensor(c)).sum().backward()
    np.testing.assert_allclose(conv.weight_orig.grad.numpy(), numeric_grad(loss, w0), rtol=1e-6, atol=1e-9)


def test_spectral_norm_errors():
    lin = U.spectral_norm(oar.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match=r"^\[oar.nn.utils.spectral_norm\] cannot register two spectral_norm"):
        U.spectral_norm(lin)
    with pytest.raises(ValueError, match=r"^\[oar.nn.utils.spectral_norm\] n_power_iterations must be a positive"):
        U.spectral_norm(oar.nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match=r"^\[oar.nn.utils.spectral_norm\] dim must be an int in \[-2, 2\)"):
        U.spectral_norm(oar.nn.Linear(2, 2), dim=5)
    with pytest.raises(KeyError, match=r"\[oar.nn.utils.spectral_norm\] Linear has no parameter 'foo'"):
        U.spectral_norm(oar.nn.Linear(2, 2), name="foo")


# ---- Dirac

@pytest.mark.parametrize("shape, groups", [([4, 2, 3], 1), ([2, 4, 3], 1), ([6, 4, 2, 2], 2),
                                           ([2, 2, 3, 3, 3], 1), ([3, 3, 4], 1)])
def test_dirac_entries(shape, groups):
    w = oar.create_parameter(shape, "float32", default_initializer=I.Dirac(groups)).numpy()
    expected = np.zeros(shape)
    per_group = shape[0] // groups
    centre = tuple(k // 2 for k in shape[2:])
    for g in range(groups):
        for i in range(min(per_group, shape[1])):
            expected[(g * per_group + i, i) + centre] = 1
    np.testing.assert_array_equal(w, expected)


@pytest.mark.parametrize("groups", [1, 2])
def test_dirac_is_identity_convolution(groups):
    x = oar.rand([2, 4, 5, 5])
    conv = oar.nn.Conv2D(4, 4, 3, padding=1, groups=groups, weight_attr=I.Dirac(groups), bias_attr=False)
    np.testing.assert_allclose(conv(x).numpy(), x.numpy(), rtol=1e-6)


def test_dirac_errors():
    with pytest.raises(ValueError, match=r"^\[oar.nn.initializer.Dirac\] groups must be a positive int"):
        I.Dirac(0)
    with pytest.raises(ValueError, match=r"^\[oar.nn.initializer.Dirac\] only 3-D, 4-D and 5-D"):
        I.Dirac()(oar.zeros([2, 2]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.initializer.Dirac\] out_c \(shape\[0\] = 5\) must be divisible"):
        I.Dirac(2)(oar.zeros([5, 2, 3]))
