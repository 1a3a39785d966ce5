"""oar.vmap and the oar.func transforms, checked against Python loops, closed
forms and finite differences (NumPy)."""
import numpy as np
import pytest

import oar
import oar.nn.functional as F
from oar.func import functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp, vmap, vmap_stats

rng = np.random.default_rng(0)


def T(a, dtype="float64"):
    return oar.to_tensor(np.asarray(a, dtype=dtype))


def R(*shape, dtype="float64"):
    return T(rng.standard_normal(shape), dtype)


def loop(f, args, in_dims):
    """The reference: f per example, stacked."""
    size = next(a.shape[d] for a, d in zip(args, in_dims) if d is not None)
    outs = []
    for i in range(size):
        ex = [a if d is None else np.take(a.numpy(), i, axis=d) for a, d in zip(args, in_dims)]
        ex = [e if isinstance(e, oar.Tensor) else oar.to_tensor(e) for e in ex]
        outs.append(f(*ex).numpy())
    return np.stack(outs)


W = R(4, 3)
V3 = R(3)
CASES = {
    "elementwise_broadcast": (lambda x, y: oar.exp(x) * y + oar.tanh(x), [R(5, 2, 3), R(3)], [0, None]),
    "both_batched_ranks": (lambda x, y: x - y, [R(5, 2, 3), R(5, 3)], [0, 0]),
    "sum_axis": (lambda x: x.sum(axis=-1), [R(5, 2, 3)], [0]),
    "mean_keepdim": (lambda x: x.mean(axis=0, keepdim=True), [R(5, 2, 3)], [0]),
    "sum_all": (lambda x: (x * x).sum(), [R(5, 2, 3)], [0]),
    "amax": (lambda x: x.max(axis=1), [R(5, 2, 3)], [0]),
    "argmax": (lambda x: oar.argmax(x, axis=-1).astype("float64"), [R(5, 2, 3)], [0]),
    "softmax": (lambda x: F.softmax(x, axis=0), [R(5, 2, 3)], [0]),
    "log_softmax": (lambda x: F.log_softmax(x, axis=-1), [R(5, 2, 3)], [0]),
    "cumsum": (lambda x: oar.cumsum(x, axis=1), [R(5, 2, 3)], [0]),
    "reshape": (lambda x: x.reshape([3, -1]), [R(5, 2, 3)], [0]),
    "transpose": (lambda x: x.transpose([1, 0]), [R(5, 2, 3)], [0]),
    "squeeze_unsqueeze": (lambda x: x.unsqueeze(-1).squeeze(0), [R(5, 1, 3)], [0]),
    "expand": (lambda x: x.expand([4, 3]), [R(5, 3)], [0]),
    "concat_unbatched": (lambda x: oar.concat([x, V3.reshape([1, 3])], axis=0), [R(5, 2, 3)], [0]),
    "stack": (lambda x: oar.stack([x, x * 2], axis=-1), [R(5, 2, 3)], [0]),
    "slice": (lambda x: x[1:, ::2], [R(5, 3, 4)], [0]),
    "index_int": (lambda x: x[:, 0] + x[1], [R(5, 2, 2)], [0]),
    "matmul_vec_mat": (lambda x: oar.matmul(x, W.t()), [R(5, 3)], [0]),
    "matmul_mat_vec": (lambda x: oar.matmul(W, x), [R(5, 3)], [0]),
    "matmul_both": (lambda x, y: oar.matmul(x, y), [R(5, 2, 3), R(5, 3, 4)], [0, 0]),
    "matmul_batched_right": (lambda y: oar.matmul(W, y), [R(5, 3, 2)], [0]),
    "matmul_vec_vec": (lambda x, y: oar.matmul(x, y), [R(5, 3), R(5, 3)], [0, 0]),
    "matmul_transpose": (lambda x: oar.matmul(x, W, transpose_y=True), [R(5, 2, 3)], [0]),
    "linear": (lambda x: F.linear(x, W, V3), [R(5, 2, 4)], [0]),
    "linear_batched_weight": (lambda w: F.linear(V3, w), [R(5, 3, 2)], [0]),
    "layer_norm": (lambda x: F.layer_norm(x, [3]), [R(5, 2, 3)], [0]),
    "index_select": (lambda x: oar.index_select(x, oar.to_tensor([2, 0]), axis=1), [R(5, 2, 3)], [0]),
    "in_dim_1": (lambda x: x * 2 + 1, [R(2, 5, 3)], [1]),
    "in_dim_neg": (lambda x: x.sum(axis=0), [R(2, 3, 5)], [-1]),
    "where": (lambda x: oar.where(x > 0, x, x * 0.1), [R(5, 4)], [0]),
    "gather_nd_batched_x": (lambda x: oar.gather_nd(x, oar.to_tensor([[1], [0]])), [R(5, 2, 3)], [0]),
    "gather_nd_batched_index": (lambda i: oar.gather_nd(W, i), [T(rng.integers(0, 4, (5, 3, 1)), "int64")], [0]),
    "searchsorted": (lambda v: oar.searchsorted(T([0.0, 1.0, 2.0]), v).astype("float64"), [R(5, 4)], [0]),
    "inv": (lambda m: oar.linalg.inv(m), [R(5, 3, 3)], [0]),
    "det_slogdet": (lambda m: oar.linalg.det(m) + oar.linalg.slogdet(m)[1], [R(5, 3, 3)], [0]),
    "solve_unbatched_rhs": (lambda m: oar.linalg.solve(m, W[:3]), [R(5, 3, 3)], [0]),
    "cholesky": (lambda m: oar.linalg.cholesky(m @ m.t() + 3 * oar.eye(3, dtype="float64")), [R(5, 3, 3)], [0]),
    "svd_values": (lambda m: oar.linalg.svd(m)[1], [R(5, 3, 4)], [0]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_matches_loop(name):
    f, args, dims = CASES[name]
    got = vmap(f, in_dims=tuple(dims))(*args)
    assert vmap_stats()["fallbacks"] == 0, vmap_stats()
    np.testing.assert_allclose(got.numpy(), loop(f, args, dims), rtol=1e-10, atol=1e-12)


def conv_net(x, w, b):
    h = F.relu(F.conv2d(x, w, b, padding=1))
    return F.avg_pool2d(F.max_pool2d(h, 2), 1).sum(axis=[2, 3])


@pytest.mark.parametrize("dims", [(0, None, None), (0, 0, None), (None, 0, 0)])
def test_vmap_conv_and_pool(dims):
    x, w, b = R(4, 2, 3, 6, 6), R(5, 3, 3, 3), R(5)
    args = [x if dims[0] is not None else x[0], w if dims[1] is None else R(4, 5, 3, 3, 3),
            b if dims[2] is None else R(4, 5)]
    got = vmap(conv_net, in_dims=dims)(*args)
    assert vmap_stats()["fallbacks"] == 0
    np.testing.assert_allclose(got.numpy(), loop(conv_net, args, dims), rtol=1e-9, atol=1e-10)


def test_vmap_out_dims_pytrees_kwargs_and_chunks():
    x = R(6, 3)
    f = lambda d, scale=1.0: {"a": d["x"] * scale, "b": (d["x"].sum(), d["y"])}
    out = vmap(f, in_dims=({"x": 0, "y": None} and 0,), chunk_size=4)({"x": x, "y": R(6, 2)}, scale=3.0)
    np.testing.assert_allclose(out["a"].numpy(), x.numpy() * 3)
    np.testing.assert_allclose(out["b"][0].numpy(), x.numpy().sum(1))
    moved = vmap(lambda v: v * 2, out_dims=1)(R(6, 3))
    assert moved.shape == [3, 6]
    const = vmap(lambda v: V3, in_dims=0)(x)  # an unbatched result is broadcast over the batch
    assert const.shape == [6, 3]


def test_vmap_nested():
    x = R(3, 4, 5)
    got = vmap(vmap(lambda r: (r * r).sum()))(x)
    np.testing.assert_allclose(got.numpy(), (x.numpy() ** 2).sum(-1))
    outer = vmap(vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(R(4), R(3, 5))
    assert outer.shape == [3, 4, 5]


def test_vmap_fallback_is_correct():
    # scatter_nd has no batching rule: it runs per example, and says so.
    f = lambda x: oar.scatter(x, oar.to_tensor([1]), x[:1] * 2)
    x = R(4, 2, 3)
    got = vmap(f)(x)
    assert vmap_stats()["fallbacks"] >= 1 and "scatter_nd" in vmap_stats()["fallback_ops"]
    np.testing.assert_allclose(got.numpy(), loop(f, [x], [0]))


def test_vmap_randomness():
    x = oar.ones([4, 1000], dtype="float32")
    with pytest.raises(ValueError, match=r"\[oar.vmap\] random op"):
        vmap(lambda v: F.dropout(v, 0.5))(x)
    d = vmap(lambda v: F.dropout(v, 0.5), randomness="different")(x).numpy()
    assert not np.array_equal(d[0], d[1])
    s = vmap(lambda v: v + oar.rand([1000]), randomness="same")(x).numpy()
    np.testing.assert_array_equal(s[0], s[3])
    dd = vmap(lambda v: v + oar.rand([1000]), randomness="different")(x).numpy()
    assert not np.array_equal(dd[0], dd[3])


def test_vmap_errors():
    with pytest.raises(ValueError, match=r"^\[oar.vmap\] the mapped axes have different sizes"):
        vmap(lambda a, b: a + b)(R(3, 2), R(4, 2))
    with pytest.raises(ValueError, match=r"^\[oar.vmap\] no input is mapped"):
        vmap(lambda a: a, in_dims=None)(R(3))
    with pytest.raises(ValueError, match=r"^\[oar.vmap\] in_dims\[0\] 2 is out of range"):
        vmap(lambda a: a, in_dims=2)(R(3, 2))
    with pytest.raises(ValueError, match=r"^\[oar.vmap\] in_dims has 2 entries"):
        vmap(lambda a: a, in_dims=(0, 0))(R(3, 2))
    with pytest.raises(ValueError, match=r"^\[oar.vmap\] argument 0 holds a 0-D Tensor"):
        vmap(lambda a: a)(oar.to_tensor(1.0))
    with pytest.raises(TypeError, match=r"^\[oar.vmap\] func must be callable"):
        vmap(3)
    with pytest.raises(ValueError, match=r"^\[oar.vmap\] randomness must be one of"):
        vmap(lambda a: a, randomness="maybe")
    with pytest.raises(ValueError, match=r"^\[oar.vmap\] chunk_size"):
        vmap(lambda a: a, chunk_size=0)(R(3))


def test_per_sample_gradients_of_a_cnn_match_a_loop():
    oar.seed(1)
    net = oar.nn.Sequential(oar.nn.Conv2D(1, 4, 3), oar.nn.ReLU(), oar.nn.MaxPool2D(2), oar.nn.Flatten(),
                            oar.nn.Linear(4 * 3 * 3, 5))
    params = {k: v.detach() for k, v in net.named_parameters()}

    def loss(p, x, y):
        return F.cross_entropy(functional_call(net, p, (x.unsqueeze(0),)), y.unsqueeze(0))

    x, y = oar.randn([6, 1, 8, 8]), oar.randint(0, 5, [6])
    per = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    assert vmap_stats()["fallbacks"] == 0
    for i in range(6):
        one = grad(loss)(params, x[i], y[i])
        for k in params:
            np.testing.assert_allclose(per[k].numpy()[i], one[k].numpy(), rtol=1e-4, atol=1e-6)
    # The mean of per-example gradients is the batch gradient.
    full = grad(lambda p: F.cross_entropy(functional_call(net, p, (x,)), y))(params)
    for k in params:
        np.testing.assert_allclose(per[k].numpy().mean(0), full[k].numpy(), rtol=1e-4, atol=1e-6)


def test_grad_flows_through_vmap_to_captured_tensors():
    w = R(3)
    w.stop_gradient = False
    x = R(5, 3)
    out = vmap(lambda r: (oar.tanh(r * w)).sum())(x).sum()
    (g,) = oar.grad(out, [w])
    ref = (x.numpy() * (1 - np.tanh(x.numpy() * w.numpy()) ** 2)).sum(0)
    np.testing.assert_allclose(g.numpy(), ref, rtol=1e-10)


# ------------------------------------------------------------------ grad, vjp, jvp

def fd_jacobian(f, x, eps=1e-6):
    x0 = x.numpy().astype(np.float64)
    y0 = f(T(x0)).numpy()
    J = np.zeros(y0.shape + x0.shape)
    for idx in np.ndindex(*x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[idx] += eps
        xm[idx] -= eps
        J[(...,) + idx] = (f(T(xp)).numpy() - f(T(xm)).numpy()) / (2 * eps)
    return J


FUNCS = {
    "poly": lambda x: x ** 3 - 2 * x,
    "trig": lambda x: oar.sin(x) * oar.cos(x * 2),
    "softmax": lambda x: F.softmax(x.reshape([2, 3]), axis=-1).reshape([6]),
    "matmul": lambda x: oar.matmul(x.reshape([2, 3]), W.t()).flatten(),
    "reduce": lambda x: oar.stack([x.sum(), (x * x).mean(), oar.logsumexp(x, axis=0)]),
    "divide_pow": lambda x: x / (1 + x * x) + oar.pow(oar.abs(x) + 1, 1.5),
    "norm_ops": lambda x: F.layer_norm(x.reshape([2, 3]), [3]).flatten(),
    "cumprod": lambda x: oar.cumprod(x, dim=0),
    "max": lambda x: oar.maximum(x, x.flip([0])),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_jacrev_jacfwd_jvp_match_finite_differences(name):
    f = FUNCS[name]
    x = R(6)
    ref = fd_jacobian(f, x)
    np.testing.assert_allclose(jacrev(f)(x).numpy(), ref, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jacfwd(f)(x).numpy(), ref, rtol=1e-6, atol=1e-7)
    t = R(6)
    out, tang = jvp(f, (x,), (t,))
    np.testing.assert_allclose(out.numpy(), f(x).numpy())
    np.testing.assert_allclose(tang.numpy(), ref @ t.numpy(), rtol=1e-6, atol=1e-7)
    ct = R(*out.shape)
    _, vjp_fn = vjp(f, x)
    np.testing.assert_allclose(vjp_fn(ct)[0].numpy(), ct.numpy().reshape(-1) @ ref.reshape(-1, 6), rtol=1e-6,
                               atol=1e-7)


def test_jvp_complex_holomorphic():
    z = oar.to_tensor(np.array([1 + 2j, -0.5 + 0.3j]))
    t = oar.to_tensor(np.array([0.3 - 1j, 2 + 0.5j]))
    _, tang = jvp(lambda z: z * z * z + oar.exp(z), (z,), (t,))
    zn, tn = z.numpy(), t.numpy()
    np.testing.assert_allclose(tang.numpy(), (3 * zn ** 2 + np.exp(zn)) * tn, rtol=1e-12)


def test_grad_variants():
    x, y = R(3), R(3)
    f = lambda a, b: (a * a * b).sum()
    np.testing.assert_allclose(grad(f)(x, y).numpy(), 2 * x.numpy() * y.numpy())
    ga, gb = grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gb.numpy(), x.numpy() ** 2)
    g, aux = grad(lambda a: ((a * a).sum(), a.shape[0]), has_aux=True)(x)
    assert aux == 3
    g, (v, aux) = grad_and_value(lambda a: ((a * a).sum(), "tag"), has_aux=True)(x)
    np.testing.assert_allclose(float(v), (x.numpy() ** 2).sum())
    pd = grad(lambda p: (p["w"] * p["b"]).sum())({"w": x, "b": y})
    np.testing.assert_allclose(pd["w"].numpy(), y.numpy())
    unused = grad(lambda a, b: (a * 2).sum(), argnums=1)(x, y)
    np.testing.assert_array_equal(unused.numpy(), np.zeros(3))
    assert x.stop_gradient  # the caller's tensors are untouched


def test_higher_order_grads_closed_form():
    x = R(4)
    f = lambda a: (oar.sin(a) * a).sum()
    d1 = grad(f)
    d2 = grad(lambda a: d1(a).sum())
    d3 = grad(lambda a: d2(a).sum())
    xn = x.numpy()
    np.testing.assert_allclose(d1(x).numpy(), np.sin(xn) + xn * np.cos(xn), rtol=1e-12)
    np.testing.assert_allclose(d2(x).numpy(), 2 * np.cos(xn) - xn * np.sin(xn), rtol=1e-12)
    np.testing.assert_allclose(d3(x).numpy(), -3 * np.sin(xn) - xn * np.cos(xn), rtol=1e-12)


def test_hessian_quadratic_and_mlp():
    A = R(4, 4)
    H = hessian(lambda x: oar.dot(x, oar.matmul(A, x)))(R(4))
    np.testing.assert_allclose(H.numpy(), A.numpy() + A.numpy().T, rtol=1e-12)
    xs, ts = R(8, 3), R(8, 2)

    def mlp(theta):
        a, b = theta[:12].reshape([3, 4]), theta[12:].reshape([4, 2])
        return ((oar.tanh(xs @ a) @ b - ts) ** 2).mean()

    theta = R(20) * 0.5
    H1 = hessian(mlp)(theta).numpy()
    H2 = jacrev(jacrev(mlp))(theta).numpy()
    np.testing.assert_allclose(H1, H2, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(H1, fd_jacobian(lambda t: grad(mlp)(t), theta), rtol=1e-5, atol=1e-7)
    # Hessian-vector product by forward over reverse.
    v = R(20)
    _, hv = jvp(grad(mlp), (theta,), (v,))
    np.testing.assert_allclose(hv.numpy(), H1 @ v.numpy(), rtol=1e-9, atol=1e-12)


def test_batched_jacobians():
    xs = R(5, 3)
    J = vmap(jacrev(lambda x: oar.sin(x) * x.sum()))(xs)
    assert J.shape == [5, 3, 3]
    for i in range(5):
        np.testing.assert_allclose(J.numpy()[i], fd_jacobian(lambda x: oar.sin(x) * x.sum(), xs[i]), rtol=1e-6,
                                   atol=1e-8)


def test_transform_errors():
    with pytest.raises(ValueError, match=r"^\[oar.func.grad\] the function must return a Tensor with one element"):
        grad(lambda a: a * 2)(R(3))
    with pytest.raises(TypeError, match=r"^\[oar.func.grad\] can only differentiate"):
        grad(lambda a: a.sum())(oar.to_tensor([1, 2]))
    with pytest.raises(ValueError, match=r"^\[oar.func.grad\] argnums 3 is out of range"):
        grad(lambda a: a.sum(), argnums=3)(R(3))
    with pytest.raises(ValueError, match=r"^\[oar.func.jvp\] a tangent of primals\[0\] has shape"):
        jvp(lambda a: a, (R(3),), (R(4),))
    with pytest.raises(ValueError, match=r"^\[oar.func.vjp\] cotangent 0 has shape"):
        vjp(lambda a: a * 2, R(3))[1](R(2))
    with pytest.raises(TypeError, match=r"^\[oar.func.jacrev\] func must be callable"):
        jacrev(None)
    with pytest.raises(KeyError, match=r"oar.func.functional_call"):
        functional_call(oar.nn.Linear(2, 2), {"nope": R(2)}, (R(1, 2),))


def test_transforms_compose_with_to_static():
    x = R(4, 3)
    xn = x.numpy()
    per_row = lambda m: vmap(lambda r: (r * r).sum())(m)
    np.testing.assert_allclose(oar.jit.to_static(per_row, full_graph=True)(x).numpy(), (xn ** 2).sum(1))
    np.testing.assert_allclose(oar.jit.to_static(per_row)(x).numpy(), (xn ** 2).sum(1))
    captured = oar.jit.to_static(lambda r: oar.sin(r).sum(), full_graph=True)
    np.testing.assert_allclose(vmap(captured)(x).numpy(), np.sin(xn).sum(1))


def test_grad_of_vmap_of_jvp():
    x, w = R(4, 3), R(3)
    w.stop_gradient = False
    ones = oar.ones([3], dtype="float64")
    out = vmap(lambda r: jvp(lambda z: oar.tanh(z * w), (r,), (ones,))[1].sum())(x).sum()
    (gw,) = oar.grad(out, [w])
    xn, wn = x.numpy(), w.numpy()
    t = np.tanh(xn * wn)
    np.testing.assert_allclose(gw.numpy(), ((1 - t ** 2) - 2 * wn * xn * t * (1 - t ** 2)).sum(0), rtol=1e-10)
