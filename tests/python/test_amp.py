"""oar.amp: autocast policies, decorate with master weights, GradScaler."""
import numpy as np
import pytest

import oar
import oar.amp as amp


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_o1_casts_by_policy(dtype):
    a, b = _rand(4, 8), _rand(8, 3, seed=1)
    ta, tb = oar.to_tensor(a), oar.to_tensor(b)
    with amp.auto_cast(dtype=dtype):
        c = oar.matmul(ta, tb)  # low-precision op
        d = oar.exp(c)  # float32 op
        e = c + ta.sum()  # mixed inputs meet at float32
        f = c * c  # same-dtype inputs stay as they are
    assert str(c.dtype) == f"paddle.{dtype}"
    assert str(d.dtype) == "paddle.float32" and str(e.dtype) == "paddle.float32"
    assert str(f.dtype) == f"paddle.{dtype}"
    tol = 2e-2 if dtype == "bfloat16" else 3e-3
    np.testing.assert_allclose(c.astype("float32").numpy(), a @ b, rtol=tol, atol=tol * 4)
    # outside the block nothing is cast
    assert str(oar.matmul(ta, tb).dtype) == "paddle.float32"


def test_o2_runs_gray_ops_low_and_black_ops_float32():
    x = oar.to_tensor(_rand(3, 3))
    with amp.auto_cast(level="O2", dtype="bfloat16"):
        assert str((x + x).dtype) == "paddle.bfloat16"
        assert str(oar.exp(x).dtype) == "paddle.float32"
        assert str(oar.matmul(x, x).dtype) == "paddle.bfloat16"


def test_custom_lists_apply_inside_and_are_restored():
    x = oar.to_tensor(_rand(3, 3))
    with amp.auto_cast(dtype="bfloat16", custom_white_list=["exp"], custom_black_list=["matmul"]):
        assert str(oar.exp(x).dtype) == "paddle.bfloat16"
        assert str(oar.matmul(x, x).dtype) == "paddle.float32"
    assert "matmul" in amp.white_list() and "exp" in amp.black_list()
    with amp.auto_cast(dtype="bfloat16"):
        assert str(oar.exp(x).dtype) == "paddle.float32"


def test_nested_disable_and_restore():
    x = oar.to_tensor(_rand(2, 2))
    with amp.auto_cast(dtype="bfloat16"):
        with amp.auto_cast(enable=False):
            assert str(oar.matmul(x, x).dtype) == "paddle.float32"
        assert str(oar.matmul(x, x).dtype) == "paddle.bfloat16"
    assert str(oar.matmul(x, x).dtype) == "paddle.float32"


def test_gradients_reach_float32_leaves():
    a = _rand(4, 5)
    w = _rand(5, 2, seed=3)
    ta = oar.to_tensor(a, stop_gradient=False)
    tw = oar.to_tensor(w, stop_gradient=False)
    with amp.auto_cast(dtype="bfloat16"):
        loss = oar.matmul(ta, tw).astype("float32").sum()
    loss.backward()
    assert str(tw.grad.dtype) == "paddle.float32"
    # d/dw sum(a @ w) = a^T @ ones
    np.testing.assert_allclose(tw.grad.numpy(), a.T @ np.ones((4, 2), np.float32), rtol=2e-2, atol=5e-2)


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"^\[oar.amp.auto_cast\] level"):
        with amp.auto_cast(level="O3"):
            pass
    with pytest.raises(ValueError, match=r"^\[oar.amp.auto_cast\] dtype"):
        with amp.auto_cast(dtype="float64"):
            pass
    with pytest.warns(UserWarning, match=r"^\[oar.amp.auto_cast\] 'no_such_op' is not an op"):
        with amp.auto_cast(custom_white_list=["no_such_op"]):
            pass
    with pytest.raises(TypeError, match=r"^\[oar.amp.auto_cast\] op names must be strings"):
        with amp.auto_cast(custom_white_list=[3]):
            pass
    with pytest.raises(ValueError, match="both"):
        with amp.auto_cast(custom_white_list=["exp"], custom_black_list=["exp"]):
            pass


def test_decorate_o2_keeps_norm_layers_float32():
    net = oar.nn.Sequential(oar.nn.Linear(4, 4), oar.nn.LayerNorm(4))
    opt = oar.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    net2, opt2 = amp.decorate(net, opt, level="O2", dtype="bfloat16")
    assert net2 is net and opt2 is opt
    assert str(net[0].weight.dtype) == "paddle.bfloat16"
    assert str(net[1].weight.dtype) == "paddle.float32"
    assert opt._multi_precision
    # the optimizer still holds the same (now bfloat16) parameter objects
    assert any(p is net[0].weight for p in opt._parameter_list)


@pytest.mark.parametrize("master", [True, False])
def test_master_weights_keep_small_updates(master):
    # Each step moves w by 1e-4, far below bfloat16's spacing at 1.0 (2^-7):
    # only a float32 master copy accumulates them.
    w = oar.to_tensor(np.ones(4, np.float32), stop_gradient=False)
    w.name = "w"
    opt = oar.optimizer.SGD(learning_rate=1e-4, parameters=[w])
    amp.decorate(oar.nn.Layer(), opt, level="O2", dtype="bfloat16", master_weight=master)
    oar.amp._cast_param_(w, "bfloat16")
    for _ in range(100):
        (w.astype("float32").sum()).backward()
        opt.step()
        opt.clear_grad()
    got = w.astype("float32").numpy()
    if master:
        np.testing.assert_allclose(got, 0.99, atol=2 ** -8)
        assert list(opt.state_dict()["master_weights"]) == ["w"]  # Paddle keeps master copies by parameter name
    else:
        np.testing.assert_array_equal(got, np.ones(4, np.float32))


def _setup_scaler_case(scale):
    w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    opt = oar.optimizer.SGD(learning_rate=0.5, parameters=[w])
    scaler = amp.GradScaler(init_loss_scaling=scale, incr_every_n_steps=2)
    return w, opt, scaler


def test_grad_scaler_unscales_before_the_step():
    w, opt, scaler = _setup_scaler_case(1024.0)
    loss = (w * w).sum()
    scaled = scaler.scale(loss)
    np.testing.assert_allclose(scaled.item(), 1024.0 * 5.0)
    scaled.backward()
    scaler.step(opt)
    scaler.update()
    # grad 2w unscaled: w - 0.5 * 2w = 0
    np.testing.assert_allclose(w.numpy(), [0.0, 0.0], atol=1e-6)


def test_grad_scaler_skips_overflow_and_adapts_scale():
    w, opt, scaler = _setup_scaler_case(8.0)
    (w * np.float32(np.inf)).sum().backward()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])  # step skipped
    assert scaler.get_loss_scaling() == 4.0
    for _ in range(2):
        opt.clear_grad()
        scaler.scale((w * w).sum()).backward()
        scaler.step(opt)
        scaler.update()
    assert scaler.get_loss_scaling() == 8.0  # doubled after 2 good steps
    state = scaler.state_dict()
    other = amp.GradScaler()
    other.load_state_dict(state)
    assert other.get_loss_scaling() == 8.0 and other.state_dict() == state


def test_grad_scaler_arguments():
    with pytest.raises(ValueError, match=r"^\[oar.amp.GradScaler\] init_loss_scaling"):
        amp.GradScaler(init_loss_scaling=0)
    with pytest.raises(ValueError, match=r"^\[oar.amp.GradScaler\] decr_ratio"):
        amp.GradScaler(decr_ratio=1.5)
    disabled = amp.GradScaler(enable=False)
    x = oar.to_tensor([3.0])
    assert disabled.scale(x) is x


def test_bf16_training_tracks_float32():
    """A small regression trained under O1 bfloat16 ends within 2% of the float32 loss."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((256, 16)).astype(np.float32)
    Y = (X @ rng.standard_normal((16, 1)) + 0.1 * rng.standard_normal((256, 1))).astype(np.float32)
    losses = {}
    for mode in ("float32", "bfloat16"):
        oar.seed(0)
        net = oar.nn.Sequential(oar.nn.Linear(16, 32), oar.nn.ReLU(), oar.nn.Linear(32, 1))
        opt = oar.optimizer.Adam(learning_rate=1e-2, parameters=net.parameters())
        x, y = oar.to_tensor(X), oar.to_tensor(Y)
        for _ in range(200):
            with amp.auto_cast(enable=mode == "bfloat16", dtype="bfloat16"):
                pred = net(x)
            loss = ((pred.astype("float32") - y) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
        losses[mode] = float(loss.item())
    assert losses["float32"] < 0.05
    assert abs(losses["bfloat16"] - losses["float32"]) <= 0.02 * losses["float32"] + 2e-3


@pytest.mark.parametrize("level", ["O1", "O2"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reductions_of_low_precision_inputs_run_in_float32(level, dtype):
    x = _rand(4, 6)
    t = oar.to_tensor(x).astype(dtype)
    with amp.auto_cast(level=level, dtype=dtype):
        s = oar.sum(t, axis=1)
        m = t.mean()
    assert str(s.dtype) == "paddle.float32" and str(m.dtype) == "paddle.float32"
    ref = t.astype("float64").numpy()
    np.testing.assert_allclose(s.numpy(), ref.sum(axis=1), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(m.numpy(), ref.mean(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_norm_layers_take_low_precision_input_with_float32_parameters(dtype):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    xt = oar.to_tensor(x).astype(dtype)
    xs = xt.astype("float64").numpy()
    for layer, axes in ((oar.nn.BatchNorm2D(3), (0, 2, 3)), (oar.nn.GroupNorm(3, 3), (2, 3)),
                        (oar.nn.LayerNorm([5, 5]), (2, 3))):
        out = layer(xt)
        assert str(out.dtype) == f"paddle.{dtype}"
        want = (xs - xs.mean(axis=axes, keepdims=True)) / np.sqrt(xs.var(axis=axes, keepdims=True) + 1e-5)
        np.testing.assert_allclose(out.astype("float64").numpy(), want, rtol=2e-2, atol=2e-2)
    out = oar.nn.RMSNorm(5)(xt) if hasattr(oar.nn, "RMSNorm") else None
    if out is not None:
        want = xs / np.sqrt((xs ** 2).mean(axis=-1, keepdims=True) + 1e-6)
        np.testing.assert_allclose(out.astype("float64").numpy(), want, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_resnet_trains_under_autocast(dtype):
    oar.seed(0)
    net = oar.vision.models.resnet18(num_classes=4)
    opt = oar.optimizer.Adam(learning_rate=1e-3, parameters=net.parameters())
    x = oar.randn([8, 3, 16, 16])
    y = oar.to_tensor([0, 1, 2, 3, 0, 1, 2, 3])
    losses = []
    for _ in range(6):
        with amp.auto_cast(dtype=dtype):
            out = net(x)
        loss = oar.nn.functional.cross_entropy(out.astype("float32"), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    assert np.all(np.isfinite(losses)) and min(losses[1:]) < losses[0]


def test_float16_conv_matches_float32():
    rng = np.random.default_rng(7)
    x = oar.to_tensor(rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
    w = oar.to_tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    ref = oar.nn.functional.conv2d(x.astype("float16").astype("float32"), w.astype("float16").astype("float32"),
                                   padding=1).numpy()
    with amp.auto_cast(dtype="float16"):
        got = oar.nn.functional.conv2d(x, w, padding=1)
    assert str(got.dtype) == "paddle.float16"
    np.testing.assert_allclose(got.astype("float32").numpy(), ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())


def test_custom_lists_take_paddle_op_names():
    # Paddle programs name ops as Paddle's operators do: matmul_v2 is oar's matmul, reduce_sum its sum.
    a, b = oar.ones([2, 3]), oar.ones([3, 2])
    with amp.auto_cast(custom_black_list={"matmul_v2"}):
        assert oar.matmul(a, b).dtype == oar.float32
    with amp.auto_cast():
        assert oar.matmul(a, b).dtype == oar.float16
    with amp.auto_cast(custom_white_list={"reduce_sum"}, dtype="bfloat16"):
        assert oar.sum(a).dtype == oar.bfloat16
    # The policies are restored after the block.
    assert "matmul" in amp.white_list() and "sum" not in amp.white_list()


def test_autocast_state_queries():
    assert not oar.is_autocast_enabled() and oar.get_autocast_dtype() == "float16"
    with oar.autocast(dtype="bfloat16"):
        assert oar.amp.is_autocast_enabled()
        assert oar.amp.get_autocast_dtype() == oar.amp.get_autocast_cpu_dtype() == "bfloat16"
    with oar.autocast(enabled=False):
        assert not oar.amp.is_autocast_enabled()
    assert not oar.amp.is_autocast_enabled()


def test_grad_scaler_getters_and_setters():
    s = amp.GradScaler(init_loss_scaling=8.0, incr_ratio=3.0, decr_ratio=0.25, incr_every_n_steps=2,
                       decr_every_n_nan_or_inf=1)
    assert (s.get_init_loss_scaling(), s.get_incr_ratio(), s.get_decr_ratio(), s.get_incr_every_n_steps(),
            s.get_decr_every_n_nan_or_inf()) == (8.0, 3.0, 0.25, 2, 1)
    s.set_incr_ratio(4.0)
    s.set_incr_every_n_steps(1)
    net = oar.nn.Linear(2, 1)
    opt = oar.optimizer.SGD(learning_rate=0.0, parameters=net.parameters())
    s.scale(net(oar.ones([1, 2])).sum()).backward()
    s.step(opt)
    s.update()
    assert s.get_loss_scaling() == 32.0  # one good step, incr_every_n_steps=1: times the new incr_ratio
    with pytest.raises(ValueError, match=r"^\[oar.amp.GradScaler.set_decr_ratio\] decr_ratio must be in \(0, 1\)"):
        s.set_decr_ratio(1.5)
    with pytest.raises(ValueError, match=r"^\[oar.amp.GradScaler.set_incr_every_n_steps\]"):
        s.set_incr_every_n_steps(0)
