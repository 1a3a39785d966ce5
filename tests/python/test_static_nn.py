"""oar.static.nn layers, data's declared shapes and static parameters.

Every layer is run through a static program and checked against NumPy
written here, from the values of the parameters the layer created; the
programs are run with more than one batch size. Parameter names and shapes
follow Paddle 3.3's static layers (printed by Paddle with
FLAGS_enable_pir_api=0: fc_0.w_0 [4, 3], conv2d_0.w_0 [6, 1, 3, 3],
conv2d_transpose_0.w_0 [3, 4, 3, 3], prelu 'channel' [1, 3, 1, 1],
bilinear_tensor_product_0.w_0 [6, 4, 5] with bias [1, 6], row_conv_0.w_0
[3, 4], nce_0.w_0 [10, 4] with bias [10, 1], layer_norm_0.w_0 [192] for a
[N, 3, 8, 8] input).
"""
import re

import numpy as np
import pytest

import oar
from oar import static
from oar.static import nn

RNG = np.random.default_rng(11)


@pytest.fixture
def program():
    oar.enable_static()
    try:
        main = static.Program()
        with static.program_guard(main, static.Program()):
            yield main
    finally:
        oar.disable_static()


def run(feed, fetch, program=None):
    return static.Executor().run(program, feed=feed, fetch_list=fetch)


def params(prog):
    return {p.name: p.numpy() for p in prog.all_parameters()}


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- data, create_parameter


def test_data_reports_declared_shape_and_runs_any_batch(program):
    x = static.data("x", [None, 4], "float32")
    assert x.shape == [-1, 4]
    assert static.InputSpec.from_tensor(x).shape == (-1, 4)
    y = static.data("y", [-1, 2, 3], "float32")
    assert y.shape == [-1, 2, 3] and len(y.shape) == 3
    out = (x * 2.0).sum(axis=1)
    for n in (1, 3, 7):
        v = rand(n, 4)
        np.testing.assert_allclose(run({"x": v}, [out])[0], (v * 2).sum(1), rtol=1e-5)


def test_declared_shape_ends_with_static_mode():
    oar.enable_static()
    try:
        x = static.data("x", [None, 4], "float32")
        assert x.shape == [-1, 4]
    finally:
        oar.disable_static()
    assert x.shape == [2, 4]  # the example value it is, outside static mode


@pytest.mark.parametrize("make", ["oar", "static"])
def test_create_parameter_is_trained(program, make):
    create = oar.create_parameter if make == "oar" else static.create_parameter
    x = static.data("x", [None, 3], "float32")
    w = create([3, 1], "float32", default_initializer=oar.nn.initializer.Constant(0.5))
    loss = oar.matmul(x, w).sum()
    pairs = static.append_backward(loss)
    assert len(pairs) == 1 and pairs[0][0] is w
    v = rand(5, 3)
    (g,) = run({"x": v}, [pairs[0][1]])
    np.testing.assert_allclose(g, v.sum(0).reshape(3, 1), rtol=1e-5)
    assert any(p is w for p in program.all_parameters())


# ---------------------------------------------------------------- fc, training


def test_fc_numerics_names_and_gradients(program):
    x = static.data("x", [None, 4], "float32")
    y = nn.fc(x, 3, activation="relu")
    p = params(program)
    # Paddle's names: <layer>_<k>.w_0 and .b_0, k counting the layers of that kind made so far.
    (wname,), (bname,) = [k for k in p if k.endswith(".w_0")], [k for k in p if k.endswith(".b_0")]
    assert re.fullmatch(r"fc_\d+\.w_0", wname) and bname == wname[:-3] + "b_0"
    w, b = p[wname], p[bname]
    assert w.shape == (4, 3) and b.shape == (3,)
    v = rand(5, 4)
    np.testing.assert_allclose(run({"x": v}, [y])[0], np.maximum(v @ w + b, 0), rtol=1e-5, atol=1e-6)
    loss = (nn.fc(x, 2, bias_attr=False, name="head") ** 2).sum()
    pairs = dict((q.name, g) for q, g in static.append_backward(loss))
    wh = params(program)["head.w_0"]
    (g,) = run({"x": v}, [pairs["head.w_0"]])
    np.testing.assert_allclose(g, v.T @ (2 * (v @ wh)), rtol=1e-4, atol=1e-5)


def test_fc_flattens_and_sums_inputs(program):
    a = static.data("a", [None, 2, 3], "float32")
    b = static.data("b", [None, 5], "float32")
    y = nn.fc([a, b], 4, num_flatten_dims=1, name="multi")
    p = params(program)
    assert p["multi.w_0"].shape == (6, 4) and p["multi.w_1"].shape == (5, 4)
    va, vb = rand(3, 2, 3), rand(3, 5)
    want = va.reshape(3, 6) @ p["multi.w_0"] + vb @ p["multi.w_1"] + p["multi.b_0"]
    np.testing.assert_allclose(run({"a": va, "b": vb}, [y])[0], want, rtol=1e-5, atol=1e-5)
    z = nn.fc(a, 2, num_flatten_dims=2, name="rows")
    w = params(program)["rows.w_0"]
    np.testing.assert_allclose(run({"a": va}, [z])[0], va @ w, rtol=1e-5, atol=1e-5)


def test_regression_trained_with_fc_converges(program):
    x = static.data("x", [None, 3], "float32")
    t = static.data("t", [None, 1], "float32")
    pred = nn.fc(nn.fc(x, 8, activation="tanh"), 1)
    loss = ((pred - t) ** 2).mean()
    oar.optimizer.Adam(learning_rate=0.05).minimize(loss)
    xs = rand(64, 3)
    ts = (xs @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    exe = static.Executor()
    losses = [float(exe.run(program, feed={"x": xs, "t": ts}, fetch_list=[loss])[0]) for _ in range(150)]
    assert losses[-1] < 0.02 * losses[0], (losses[0], losses[-1])


# ---------------------------------------------------------------- convolutions


def conv2d_ref(x, w, b, stride=1, pad=0, groups=1):
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, f, oh, ow), np.float64)
    per = f // groups
    for o in range(f):
        g = o // per
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + kh, j * stride:j * stride + kw]
                out[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    return out + b.reshape(1, -1, 1, 1)


def conv2d_transpose_ref(x, w, b, stride=1):
    n, c, h, wd = x.shape
    _, f, kh, kw = w.shape
    out = np.zeros((n, f, (h - 1) * stride + kh, (wd - 1) * stride + kw), np.float64)
    for i in range(h):
        for j in range(wd):
            out[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += \
                np.einsum("nc,cfab->nfab", x[:, :, i, j], w)
    return out + b.reshape(1, -1, 1, 1)


def test_conv2d(program):
    img = static.data("img", [None, 3, 6, 6], "float32")
    y = nn.conv2d(img, 6, 3, stride=2, padding=1, groups=3, act="relu")
    p = params(program)
    (wname,) = [k for k in p if k.endswith(".w_0")]
    assert re.fullmatch(r"conv2d_\d+\.w_0", wname)
    w, b = p[wname], p[wname[:-3] + "b_0"]
    assert w.shape == (6, 1, 3, 3) and b.shape == (6,)
    for n in (1, 2):
        v = rand(n, 3, 6, 6)
        want = np.maximum(conv2d_ref(v, w, b, stride=2, pad=1, groups=3), 0)
        np.testing.assert_allclose(run({"img": v}, [y])[0], want, rtol=1e-4, atol=1e-5)


def test_conv2d_transpose_and_output_size(program):
    img = static.data("img", [None, 3, 4, 4], "float32")
    y = nn.conv2d_transpose(img, 2, filter_size=3, stride=2, name="up")
    z = nn.conv2d_transpose(img, 2, output_size=[6, 6], name="sized")
    p = params(program)
    assert p["up.w_0"].shape == (3, 2, 3, 3)
    assert p["sized.w_0"].shape == (3, 2, 3, 3)  # (6 - (4 - 1) * 1 + 0 - 1) // 1 + 1 = 3
    v = rand(2, 3, 4, 4)
    got_y, got_z = run({"img": v}, [y, z])
    np.testing.assert_allclose(got_y, conv2d_transpose_ref(v, p["up.w_0"], p["up.b_0"], 2), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_z, conv2d_transpose_ref(v, p["sized.w_0"], p["sized.b_0"]), rtol=1e-4, atol=1e-5)


def test_conv3d_and_transpose(program):
    vol = static.data("vol", [None, 2, 3, 3, 3], "float32")
    y = nn.conv3d(vol, 4, 2, name="c3")
    z = nn.conv3d_transpose(vol, 1, filter_size=2, name="t3", bias_attr=False)
    p = params(program)
    assert p["c3.w_0"].shape == (4, 2, 2, 2, 2) and p["t3.w_0"].shape == (2, 1, 2, 2, 2)
    v = rand(2, 2, 3, 3, 3)
    got_y, got_z = run({"vol": v}, [y, z])
    w, b = p["c3.w_0"], p["c3.b_0"]
    want = np.zeros((2, 4, 2, 2, 2))
    for i in range(2):
        for j in range(2):
            for k in range(2):
                want[:, :, i, j, k] = np.einsum("ncabd,fcabd->nf", v[:, :, i:i + 2, j:j + 2, k:k + 2], w)
    np.testing.assert_allclose(got_y, want + b.reshape(1, -1, 1, 1, 1), rtol=1e-4, atol=1e-5)
    wt = p["t3.w_0"]
    want_t = np.zeros((2, 1, 4, 4, 4))
    for i in range(3):
        for j in range(3):
            for k in range(3):
                want_t[:, :, i:i + 2, j:j + 2, k:k + 2] += np.einsum("nc,cfabd->nfabd", v[:, :, i, j, k], wt)
    np.testing.assert_allclose(got_z, want_t, rtol=1e-4, atol=1e-5)


def test_deform_conv2d_with_zero_offsets_is_a_convolution(program):
    x = static.data("x", [2, 4, 5, 5], "float32")
    off = static.data("off", [2, 2 * 9, 3, 3], "float32")
    mask = static.data("mask", [2, 9, 3, 3], "float32")
    y1 = nn.deform_conv2d(x, off, None, 6, 3, groups=2, name="dcn1")
    y2 = nn.deform_conv2d(x, off, mask, 6, 3, groups=2, name="dcn2")
    p = params(program)
    assert p["dcn1.w_0"].shape == (6, 2, 3, 3) and p["dcn1.b_0"].shape == (6,)
    v = rand(2, 4, 5, 5)
    feed = {"x": v, "off": np.zeros((2, 18, 3, 3), np.float32), "mask": np.full((2, 9, 3, 3), 0.5, np.float32)}
    got1, got2 = run(feed, [y1, y2])
    np.testing.assert_allclose(got1, conv2d_ref(v, p["dcn1.w_0"], p["dcn1.b_0"], groups=2), rtol=1e-4, atol=1e-5)
    want2 = 0.5 * conv2d_ref(v, p["dcn2.w_0"], np.zeros(6), groups=2) + p["dcn2.b_0"].reshape(1, -1, 1, 1)
    np.testing.assert_allclose(got2, want2, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- normalisation


def test_batch_norm_train_and_test(program):
    x = static.data("x", [None, 3, 2, 2], "float32")
    train = nn.batch_norm(x, name="bn")
    test = nn.batch_norm(x, is_test=True, name="bn_test")
    v = rand(4, 3, 2, 2) * 2 + 1
    got_train, got_test = run({"x": v}, [train, test])
    mean, var = v.mean(axis=(0, 2, 3), keepdims=True), v.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(got_train, (v - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-4)
    # Inference uses the running statistics, which start at mean 0 and variance 1.
    np.testing.assert_allclose(got_test, v / np.sqrt(1 + 1e-5), rtol=1e-5, atol=1e-5)
    p = params(program)
    assert {k for k in p if k.startswith("bn.")} == {"bn.w_0", "bn.b_0", "bn.w_1", "bn.w_2"}
    trainable = {q.name for q in program.all_parameters() if q.trainable}
    assert "bn.w_0" in trainable and "bn.w_1" not in trainable and "bn.w_2" not in trainable
    # Each training run moves the running statistics: running = 0.9 * running + 0.1 * batch.
    p = params(program)
    np.testing.assert_allclose(p["bn.w_1"], 0.1 * mean.reshape(-1), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(p["bn.w_2"], 0.9 + 0.1 * var.reshape(-1), rtol=1e-4, atol=1e-6)


def test_layer_norm(program):
    x = static.data("x", [None, 3, 2, 2], "float32")
    y = nn.layer_norm(x, begin_norm_axis=1, param_attr=oar.nn.initializer.Constant(2.0),
                      bias_attr=oar.nn.initializer.Constant(0.5))
    assert [q.shape for q in program.all_parameters()] == [[12], [12]]
    v = rand(3, 3, 2, 2)
    flat = v.reshape(3, -1)
    want = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-5) * 2.0 + 0.5
    np.testing.assert_allclose(run({"x": v}, [y])[0], want.reshape(v.shape), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_group_norm(program, layout):
    shape = [None, 4, 3, 2] if layout == "NCHW" else [None, 3, 2, 4]
    x = static.data("x", shape, "float32")
    y = nn.group_norm(x, 2, data_layout=layout, bias_attr=oar.nn.initializer.Constant(1.0))
    v = rand(2, *shape[1:])
    nchw = v if layout == "NCHW" else v.transpose(0, 3, 1, 2)
    g = nchw.reshape(2, 2, -1)
    want = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(nchw.shape) + 1.0
    if layout == "NHWC":
        want = want.transpose(0, 2, 3, 1)
    for n in (2, 1):
        np.testing.assert_allclose(run({"x": v[:n]}, [y])[0], want[:n], rtol=1e-4, atol=1e-4)


def test_instance_norm(program):
    x = static.data("x", [None, 3, 4], "float32")
    y = nn.instance_norm(x)
    v = rand(2, 3, 4)
    want = (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(run({"x": v}, [y])[0], want, rtol=1e-4, atol=1e-4)
    assert [q.shape for q in program.all_parameters()] == [[3], [3]]


# ---------------------------------------------------------------- embeddings and other layers


@pytest.mark.parametrize("layer", ["embedding", "sparse_embedding"])
def test_embedding(program, layer):
    ids = static.data("ids", [None, 2], "int64")
    fn = getattr(nn, layer)
    e = fn(ids, [7, 3], padding_idx=-1)
    (table,) = params(program).values()
    assert table.shape == (7, 3)
    v = np.array([[1, 6], [0, 2], [6, 6]])
    want = table[v] * (v != 6)[..., None]
    np.testing.assert_allclose(run({"ids": v}, [e])[0], want, rtol=1e-6)


@pytest.mark.parametrize("mode,alpha_shape", [("all", (1,)), ("channel", (1, 3, 1, 1)), ("element", (1, 3, 2, 2))])
def test_prelu(program, mode, alpha_shape):
    x = static.data("x", [None, 3, 2, 2], "float32")
    y = nn.prelu(x, mode)
    (alpha,) = params(program).values()
    assert alpha.shape == alpha_shape and np.all(alpha == 0.25)
    v = rand(2, 3, 2, 2)
    np.testing.assert_allclose(run({"x": v}, [y])[0], np.where(v > 0, v, 0.25 * v), rtol=1e-6)


def test_bilinear_tensor_product(program):
    x = static.data("x", [None, 4], "float32")
    z = static.data("z", [None, 5], "float32")
    out = nn.bilinear_tensor_product(x, z, 6, act="tanh")
    p = params(program)
    w = next(v for k, v in p.items() if k.endswith("w_0"))
    b = next(v for k, v in p.items() if k.endswith("b_0"))
    assert w.shape == (6, 4, 5) and b.shape == (1, 6)
    for n in (3, 1):
        vx, vz = rand(n, 4), rand(n, 5)
        want = np.tanh(np.einsum("ni,kij,nj->nk", vx, w, vz) + b)
        np.testing.assert_allclose(run({"x": vx, "z": vz}, [out])[0], want, rtol=1e-4, atol=1e-5)


def test_spectral_norm(program):
    w = static.data("w", [3, 2, 2], "float32")
    out = nn.spectral_norm(w, dim=1, power_iters=50)
    v = rand(3, 2, 2)
    mat = v.transpose(1, 0, 2).reshape(2, 6)
    sigma = np.linalg.svd(mat, compute_uv=False)[0]
    np.testing.assert_allclose(run({"w": v}, [out])[0], v / sigma, rtol=1e-4, atol=1e-5)
    # u ([2]) is read; v ([6]) is recomputed from u by the first power iteration.
    assert [2] in [q.shape for q in program.all_parameters()]


def test_row_conv(program):
    x = static.data("x", [None, 5, 3], "float32")
    y = nn.row_conv(x, 2)
    (w,) = params(program).values()
    assert w.shape == (3, 3)
    for n in (2, 3):
        v = rand(n, 5, 3)
        padded = np.concatenate([v, np.zeros((n, 2, 3), np.float32)], axis=1)
        want = sum(padded[:, j:j + 5] * w[j] for j in range(3))
        np.testing.assert_allclose(run({"x": v}, [y])[0], want, rtol=1e-5, atol=1e-6)


def test_nce_loss_and_training(program):
    x = static.data("x", [None, 4], "float32")
    label = static.data("label", [None, 1], "int64")
    cost = nn.nce(x, label, 10, num_neg_samples=3, name="nce")
    p = params(program)
    assert p["nce.w_0"].shape == (10, 4) and p["nce.b_0"].shape == (10, 1)
    v = rand(6, 4)
    lab = RNG.integers(0, 10, (6, 1))
    assert run({"x": v[:3], "label": lab[:3]}, [cost])[0].shape == (3, 1)
    (c,) = run({"x": v, "label": lab}, [cost])
    assert c.shape == (6, 1)
    # The true-class term alone bounds the loss from below: -log(o / (o + k q)) with q = 1/10, k = 3.
    o = 1 / (1 + np.exp(-(np.einsum("nd,nd->n", v, p["nce.w_0"][lab[:, 0]]) + p["nce.b_0"][lab[:, 0], 0])))
    assert np.all(c[:, 0] >= -np.log(o / (o + 0.3)) - 1e-5)
    loss = cost.mean()
    oar.optimizer.SGD(learning_rate=0.5).minimize(loss)
    first = float(run({"x": v, "label": lab}, [loss])[0])
    for _ in range(60):
        last = float(run({"x": v, "label": lab}, [loss])[0])
    assert last < first


def test_case(program):
    x = static.data("x", [1], "float32")
    out = nn.case([(x < 0.0, lambda: x * 0.0), (x < 10.0, lambda: x * 2.0)], default=lambda: x + 100.0)
    no_default = nn.case([(x < 0.0, lambda: x - 1.0), (x < 10.0, lambda: x * 3.0)])
    for v, want, want2 in ((-1.0, 0.0, -2.0), (2.0, 4.0, 6.0), (20.0, 120.0, 60.0)):
        got = run({"x": np.array([v], np.float32)}, [out, no_default])
        assert float(got[0][0]) == want and float(got[1][0]) == want2


def test_weight_norm_param_attr(program):
    x = static.data("x", [None, 3], "float32")
    attr = static.WeightNormParamAttr(dim=1, name="wn")
    y = nn.fc(x, 2, weight_attr=attr, bias_attr=False)
    p = params(program)
    assert p["wn_v"].shape == (3, 2) and p["wn_g"].shape == (2,)
    np.testing.assert_allclose(p["wn_g"], np.linalg.norm(p["wn_v"], axis=0), rtol=1e-5)
    v = rand(4, 3)
    np.testing.assert_allclose(run({"x": v}, [y])[0], v @ p["wn_v"], rtol=1e-4, atol=1e-5)
    loss = y.sum()
    grads = {q.name: g for q, g in static.append_backward(loss)}
    assert set(grads) == {"wn_v", "wn_g"}
    # d sum(x w)/d g_j = sum_n (x v)_nj / ||v_j||
    (gg,) = run({"x": v}, [grads["wn_g"]])
    np.testing.assert_allclose(gg, (v @ p["wn_v"]).sum(0) / np.linalg.norm(p["wn_v"], axis=0), rtol=1e-4)


def test_static_pylayer_uses_backward_fn(program):
    x = static.data("x", [None, 3], "float32")
    x.stop_gradient = False
    a, b = nn.static_pylayer(lambda t: (t * t, oar.exp(t)), [x], lambda da, db: 10.0 * da + db)
    (g,) = static.gradients([a.sum() + b.sum()], [x])
    plain = nn.static_pylayer(lambda t: t * 3.0, [x])
    (g_plain,) = static.gradients([plain.sum()], [x])
    for n in (1, 4):
        v = rand(n, 3)
        got_a, got_b, got_g, got_plain, got_gp = static.Executor().run(
            feed={"x": v}, fetch_list=[a, b, g, plain, g_plain])
        np.testing.assert_allclose(got_a, v * v, rtol=1e-6)
        np.testing.assert_allclose(got_b, np.exp(v), rtol=1e-6)
        np.testing.assert_allclose(got_g, np.full((n, 3), 11.0), rtol=1e-6)  # backward_fn(1, 1), not 2x + e^x
        np.testing.assert_allclose(got_plain, 3 * v, rtol=1e-6)
        np.testing.assert_allclose(got_gp, np.zeros((n, 3)))  # no backward_fn: no gradient


# ---------------------------------------------------------------- errors


def test_bad_input_raises_typed_errors(program):
    x = static.data("x", [None, 4], "float32")
    with pytest.raises(ValueError, match=r"^\[oar.static.nn.fc\] size"):
        nn.fc(x, 0)
    with pytest.raises(TypeError, match=r"^\[oar.static.nn.fc\] x must be a Tensor"):
        nn.fc("x", 3)
    with pytest.raises(ValueError, match=r"^\[oar.static.nn.conv2d\] input must be 4-D"):
        nn.conv2d(x, 2, 3)
    with pytest.raises(ValueError, match=r"^\[oar.static.nn.prelu\] mode"):
        nn.prelu(x, "rows")
    with pytest.raises(ValueError, match=r"^\[oar.static.nn.embedding\] size"):
        nn.embedding(x, [3])
    with pytest.raises(ValueError, match=r"^\[oar.static.nn.fc\] unknown activation"):
        nn.fc(x, 2, activation="no_such_act")
    with pytest.raises(ValueError, match=r"^\[oar.static.nn.nce\] sampler"):
        nn.nce(x, static.data("l", [None, 1], "int64"), 5, sampler="zipf")
    with pytest.raises(TypeError, match=r"^\[oar.static.nn.case\] pred_fn_pairs"):
        nn.case([])
