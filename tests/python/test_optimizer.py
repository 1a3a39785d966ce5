"""Optimizers against NumPy implementations of their published update rules,
parameter groups, decay, clipping hooks, state save/restore and errors."""
import math

import numpy as np
import pytest

import oar
import oar.optimizer as optim
import oar.regularizer as reg

SHAPES = [(3, 4), (5,), ()]


# ---- NumPy references: step(p, g, state, t, hp) -> new p (state updated in place)
def decay_grad(p, g, hp):
    return g + hp.get("l2", 0.0) * p + hp.get("l1", 0.0) * np.sign(p)


def ref_sgd(p, g, st, t, hp):
    return p - hp["lr"] * decay_grad(p, g, hp)


def ref_momentum(p, g, st, t, hp):
    g = decay_grad(p, g, hp)
    v = hp["mu"] * st.get("v", 0.0) + g
    st["v"] = v
    if hp.get("nesterov"):
        return p - hp["lr"] * (g + hp["mu"] * v)
    return p - hp["lr"] * v


def ref_adam(p, g, st, t, hp):
    b1, b2, eps, lr = hp["b1"], hp["b2"], hp["eps"], hp["lr"]
    g = decay_grad(p, g, hp)
    p = p * (1 - lr * hp.get("coeff", 0.0))
    m = b1 * st.get("m", 0.0) + (1 - b1) * g
    v = b2 * st.get("v", 0.0) + (1 - b2) * g * g
    st["m"], st["v"] = m, v
    if hp.get("amsgrad"):
        v = np.maximum(st.get("vmax", 0.0), v)
        st["vmax"] = v
    lr_t = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    return p - lr_t * m / (np.sqrt(v) + eps * math.sqrt(1 - b2 ** t))


def ref_adamax(p, g, st, t, hp):
    b1, b2, eps = hp["b1"], hp["b2"], hp["eps"]
    g = decay_grad(p, g, hp)
    m = b1 * st.get("m", 0.0) + (1 - b1) * g
    u = np.maximum(b2 * st.get("u", 0.0) + eps, np.abs(g))
    st["m"], st["u"] = m, u
    return p - hp["lr"] / (1 - b1 ** t) * m / u


def ref_adagrad(p, g, st, t, hp):
    g = decay_grad(p, g, hp)
    h = st.get("h", hp.get("init", 0.0)) + g * g
    st["h"] = h
    return p - hp["lr"] * g / (np.sqrt(h) + hp["eps"])


def ref_adadelta(p, g, st, t, hp):
    rho, eps = hp["rho"], hp["eps"]
    g = decay_grad(p, g, hp)
    eg = rho * st.get("eg", 0.0) + (1 - rho) * g * g
    u = -np.sqrt((st.get("ex", 0.0) + eps) / (eg + eps)) * g
    st["eg"], st["ex"] = eg, rho * st.get("ex", 0.0) + (1 - rho) * u * u
    return p + hp["lr"] * u


def ref_rmsprop(p, g, st, t, hp):
    rho, eps = hp["rho"], hp["eps"]
    g = decay_grad(p, g, hp)
    ms = rho * st.get("ms", 0.0) + (1 - rho) * g * g
    st["ms"] = ms
    if hp.get("centered"):
        mg = rho * st.get("mg", 0.0) + (1 - rho) * g
        st["mg"] = mg
        denom = np.sqrt(ms - mg * mg + eps)
    else:
        denom = np.sqrt(ms + eps)
    mom = hp["momentum"] * st.get("mom", 0.0) + hp["lr"] * g / denom
    st["mom"] = mom
    return p - mom


def ref_lamb(p, g, st, t, hp):
    b1, b2, eps, wd = hp["b1"], hp["b2"], hp["eps"], hp["wd"]
    m = b1 * st.get("m", 0.0) + (1 - b1) * g
    v = b2 * st.get("v", 0.0) + (1 - b2) * g * g
    st["m"], st["v"] = m, v
    r = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + wd * p
    pn, rn = np.linalg.norm(p), np.linalg.norm(r)
    trust = pn / rn if pn > 0 and rn > 0 else 1.0
    return p - hp["lr"] * trust * r


def ref_nadam(p, g, st, t, hp):
    b1, b2, eps, psi = hp["b1"], hp["b2"], hp["eps"], hp["psi"]
    g = decay_grad(p, g, hp)
    mu_t = b1 * (1 - 0.5 * 0.96 ** (t * psi))
    mu_n = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * psi))
    prod = st.get("prod", 1.0) * mu_t
    st["prod"] = prod
    m = b1 * st.get("m", 0.0) + (1 - b1) * g
    v = b2 * st.get("v", 0.0) + (1 - b2) * g * g
    st["m"], st["v"] = m, v
    m_hat = mu_n * m / (1 - prod * mu_n) + (1 - mu_t) * g / (1 - prod)
    return p - hp["lr"] * m_hat / (np.sqrt(v / (1 - b2 ** t)) + eps)


def ref_radam(p, g, st, t, hp):
    b1, b2, eps = hp["b1"], hp["b2"], hp["eps"]
    g = decay_grad(p, g, hp)
    m = b1 * st.get("m", 0.0) + (1 - b1) * g
    v = b2 * st.get("v", 0.0) + (1 - b2) * g * g
    st["m"], st["v"] = m, v
    m_hat = m / (1 - b1 ** t)
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
    if rho_t > 5:
        l_t = math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
        r_t = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        return p - hp["lr"] * m_hat * r_t * l_t
    return p - hp["lr"] * m_hat


def wd_kwargs(kind, c):
    if kind is None:
        return {}, {}
    if kind == "float":
        return {"weight_decay": c}, {"l2": c}
    if kind == "l2":
        return {"weight_decay": reg.L2Decay(c)}, {"l2": c}
    return {"weight_decay": reg.L1Decay(c)}, {"l1": c}


# (id, factory(params, extra kwargs), reference, hp, supports coupled weight_decay)
CASES = [
    ("sgd", lambda ps, kw: optim.SGD(0.1, parameters=ps, **kw), ref_sgd, {"lr": 0.1}, True),
    ("momentum", lambda ps, kw: optim.Momentum(0.05, 0.9, parameters=ps, **kw), ref_momentum,
     {"lr": 0.05, "mu": 0.9}, True),
    ("nesterov", lambda ps, kw: optim.Momentum(0.05, 0.8, parameters=ps, use_nesterov=True, **kw), ref_momentum,
     {"lr": 0.05, "mu": 0.8, "nesterov": True}, True),
    ("adam", lambda ps, kw: optim.Adam(0.01, 0.8, 0.9, 1e-3, parameters=ps, **kw), ref_adam,
     {"lr": 0.01, "b1": 0.8, "b2": 0.9, "eps": 1e-3}, True),
    ("amsgrad", lambda ps, kw: optim.Adam(0.01, 0.8, 0.9, 1e-3, parameters=ps, amsgrad=True, **kw), ref_adam,
     {"lr": 0.01, "b1": 0.8, "b2": 0.9, "eps": 1e-3, "amsgrad": True}, True),
    ("adamw", lambda ps, kw: optim.AdamW(0.01, 0.8, 0.9, 1e-3, parameters=ps, weight_decay=0.3), ref_adam,
     {"lr": 0.01, "b1": 0.8, "b2": 0.9, "eps": 1e-3, "coeff": 0.3}, False),
    ("adamax", lambda ps, kw: optim.Adamax(0.02, 0.8, 0.9, 1e-3, parameters=ps, **kw), ref_adamax,
     {"lr": 0.02, "b1": 0.8, "b2": 0.9, "eps": 1e-3}, True),
    ("adagrad", lambda ps, kw: optim.Adagrad(0.1, 1e-4, parameters=ps, initial_accumulator_value=0.5, **kw),
     ref_adagrad, {"lr": 0.1, "eps": 1e-4, "init": 0.5}, True),
    ("adadelta", lambda ps, kw: optim.Adadelta(0.5, 1e-3, 0.9, parameters=ps, **kw), ref_adadelta,
     {"lr": 0.5, "eps": 1e-3, "rho": 0.9}, True),
    ("rmsprop", lambda ps, kw: optim.RMSProp(0.01, 0.9, 1e-3, 0.5, parameters=ps, **kw), ref_rmsprop,
     {"lr": 0.01, "rho": 0.9, "eps": 1e-3, "momentum": 0.5}, True),
    ("rmsprop_centered", lambda ps, kw: optim.RMSProp(0.01, 0.9, 1e-2, 0.5, centered=True, parameters=ps, **kw),
     ref_rmsprop, {"lr": 0.01, "rho": 0.9, "eps": 1e-2, "momentum": 0.5, "centered": True}, True),
    ("lamb", lambda ps, kw: optim.Lamb(0.01, 0.05, 0.8, 0.9, 1e-4, parameters=ps), ref_lamb,
     {"lr": 0.01, "wd": 0.05, "b1": 0.8, "b2": 0.9, "eps": 1e-4}, False),
    ("nadam", lambda ps, kw: optim.NAdam(0.01, 0.8, 0.9, 1e-3, 0.004, parameters=ps, **kw), ref_nadam,
     {"lr": 0.01, "b1": 0.8, "b2": 0.9, "eps": 1e-3, "psi": 0.004}, True),
    # beta2 = 0.5 makes rho_t cross 5 within the steps, so both branches run.
    ("radam", lambda ps, kw: optim.RAdam(0.01, 0.8, 0.5, 1e-3, parameters=ps, **kw), ref_radam,
     {"lr": 0.01, "b1": 0.8, "b2": 0.5, "eps": 1e-3}, True),
]
CASE_IDS = [c[0] for c in CASES]


def make_params(dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s) for s in SHAPES]
    return arrs, [oar.to_tensor(a, dtype=dtype, stop_gradient=False) for a in arrs]


def run_against_reference(case, dtype, wd_kind=None, steps=6):
    _, factory, ref, hp, coupled = case
    kw, hp_extra = wd_kwargs(wd_kind, 0.05) if coupled else ({}, {})
    hp = dict(hp, **hp_extra)
    arrs, params = make_params(dtype)
    opt = factory(params, kw)
    states = [{} for _ in arrs]
    rng = np.random.default_rng(1)
    for t in range(1, steps + 1):
        for i, p in enumerate(params):
            g = rng.standard_normal(SHAPES[i])
            p.grad = oar.to_tensor(g, dtype=dtype)
            arrs[i] = ref(arrs[i], g, states[i], t, hp)
        opt.step()
        opt.clear_grad()
    return arrs, params


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_update_matches_reference(case, dtype):
    arrs, params = run_against_reference(case, dtype)
    tol = 1e-10 if dtype == "float64" else 2e-5
    for a, p in zip(arrs, params):
        assert p.numpy().dtype == np.dtype(dtype)
        np.testing.assert_allclose(p.numpy(), a, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", [c for c in CASES if c[4]], ids=[c[0] for c in CASES if c[4]])
@pytest.mark.parametrize("wd_kind", ["float", "l2", "l1"])
def test_update_with_weight_decay(case, wd_kind):
    arrs, params = run_against_reference(case, "float64", wd_kind)
    for a, p in zip(arrs, params):
        np.testing.assert_allclose(p.numpy(), a, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_params_keep_float32_state(dtype):
    arrs, params = run_against_reference(CASES[3], dtype, steps=3)  # adam
    for a, p in zip(arrs, params):
        np.testing.assert_allclose(p.astype("float32").numpy(), a, rtol=3e-2, atol=3e-2)


def test_backward_driven_training_decreases_loss():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((16, 3)).astype("float32")
    x = oar.to_tensor(xs)
    y = oar.to_tensor(xs @ np.array([[1.0], [-2.0], [0.5]], dtype="float32"))
    w = oar.to_tensor(np.zeros((3, 1)), dtype="float32", stop_gradient=False)
    opt = optim.Adam(0.1, parameters=[w])
    losses = []
    for _ in range(30):
        loss = ((oar.matmul(x, w) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(loss.item())
    assert losses[-1] < 0.05 * losses[0]


def test_skips_stop_gradient_and_missing_grad():
    a = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    b = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    c = oar.to_tensor([1.0, 2.0])
    c.grad = oar.to_tensor([1.0, 1.0])
    a.grad = oar.to_tensor([1.0, 1.0])
    opt = optim.SGD(1.0, parameters=[a, b, c])
    opt.step()
    assert a.numpy().tolist() == [0.0, 1.0]
    assert b.numpy().tolist() == [1.0, 2.0]
    assert c.numpy().tolist() == [1.0, 2.0]


def test_param_groups_and_lr_multipliers():
    a = oar.to_tensor([1.0], dtype="float64", stop_gradient=False)
    b = oar.to_tensor([1.0], dtype="float64", stop_gradient=False)
    c = oar.to_tensor([1.0], dtype="float64", stop_gradient=False)
    c.optimize_attr = {"learning_rate": 3.0}
    opt = optim.Momentum(0.1, momentum=0.0, parameters=[
        {"params": [a]},
        {"params": [b], "learning_rate": 0.5, "weight_decay": 1.0},
        {"params": [c], "momentum": 0.9},
    ], weight_decay=reg.L1Decay(0.0))
    for _ in range(2):
        for p in (a, b, c):
            p.grad = oar.to_tensor([1.0], dtype="float64")
        opt.step()
    # a: plain SGD; b: half the rate with L2 decay 1.0; c: 3x rate with momentum 0.9.
    np.testing.assert_allclose(a.numpy(), [0.8])
    b_ref = 1.0
    for _ in range(2):
        b_ref -= 0.05 * (1.0 + b_ref)
    np.testing.assert_allclose(b.numpy(), [b_ref])
    np.testing.assert_allclose(c.numpy(), [1.0 - 0.3 * 1.0 - 0.3 * 1.9])


def test_param_regularizer_wins_over_optimizer_decay():
    a = oar.to_tensor([2.0], dtype="float64", stop_gradient=False)
    a.regularizer = reg.L1Decay(0.5)
    b = oar.to_tensor([2.0], dtype="float64", stop_gradient=False)
    opt = optim.SGD(1.0, parameters=[a, b], weight_decay=0.25)
    a.grad = oar.to_tensor([0.0], dtype="float64")
    b.grad = oar.to_tensor([0.0], dtype="float64")
    opt.step()
    np.testing.assert_allclose(a.numpy(), [1.5])
    np.testing.assert_allclose(b.numpy(), [1.5])


def test_adamw_lr_ratio_and_apply_decay_param_fun():
    a = oar.to_tensor([1.0], dtype="float64", stop_gradient=False)
    a.name = "w_decay"
    b = oar.to_tensor([1.0], dtype="float64", stop_gradient=False)
    b.name = "bias"
    opt = optim.AdamW(0.1, parameters=[a, b], weight_decay=0.5, lr_ratio=lambda p: 0.5,
                      apply_decay_param_fun=lambda n: n != "bias")
    a.grad = oar.to_tensor([0.0], dtype="float64")
    b.grad = oar.to_tensor([0.0], dtype="float64")
    opt.step()
    np.testing.assert_allclose(a.numpy(), [1 - 0.05 * 0.5])
    np.testing.assert_allclose(b.numpy(), [1.0])


def test_lamb_exclude_from_weight_decay():
    a = oar.to_tensor([3.0, 4.0], dtype="float64", stop_gradient=False)
    opt = optim.Lamb(0.1, lamb_weight_decay=0.5, parameters=[a], exclude_from_weight_decay_fn=lambda p: True)
    a.grad = oar.to_tensor([1.0, -1.0], dtype="float64")
    opt.step()
    # No decay and no trust ratio: plain bias-corrected Adam direction ~ sign(g).
    np.testing.assert_allclose(a.numpy(), [3.0 - 0.1 / (1 + 1e-6), 4.0 + 0.1 / (1 + 1e-6)], rtol=1e-9)


def test_grad_clip_callable_is_applied():
    seen = []

    def clip(params_grads):
        seen.append(len(params_grads))
        return [(p, g * 0.0) for p, g in params_grads]

    a = oar.to_tensor([1.0], stop_gradient=False)
    a.grad = oar.to_tensor([5.0])
    opt = optim.SGD(1.0, parameters=[a], grad_clip=clip)
    opt.step()
    assert seen == [1]
    assert a.numpy().tolist() == [1.0]


def test_lr_scheduler_drives_rate():
    a = oar.to_tensor([0.0], dtype="float64", stop_gradient=False)
    sched = optim.lr.StepDecay(1.0, step_size=1, gamma=0.5)
    opt = optim.SGD(sched, parameters=[a])
    total = 0.0
    for _ in range(3):
        a.grad = oar.to_tensor([1.0], dtype="float64")
        total += opt.get_lr()
        opt.step()
        sched.step()
    np.testing.assert_allclose(a.numpy(), [-total])
    assert total == 1.75
    with pytest.raises(RuntimeError):
        opt.set_lr(0.1)


def test_set_lr_and_get_lr():
    opt = optim.Adam(0.1, parameters=[oar.ones([1])])
    opt.set_lr(0.25)
    assert opt.get_lr() == 0.25
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.Adam\]"):
        opt.set_lr(-1.0)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_state_dict_resumes_bit_exactly(case):
    _, factory, _, _, _ = case
    rng = np.random.default_rng(5)
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(6)]

    def run(params, opt, gs):
        for step in gs:
            for p, g in zip(params, step):
                p.grad = oar.to_tensor(g, dtype="float32")
            opt.step()

    _, p_full = make_params("float32")
    sched_full = optim.lr.ExponentialDecay(0.01, 0.9)
    opt_full = factory(p_full, {})
    opt_full.set_lr_scheduler(sched_full)
    for i in range(6):
        run(p_full, opt_full, grads[i:i + 1])
        sched_full.step()

    _, p_a = make_params("float32")
    sched_a = optim.lr.ExponentialDecay(0.01, 0.9)
    opt_a = factory(p_a, {})
    opt_a.set_lr_scheduler(sched_a)
    for i in range(3):
        run(p_a, opt_a, grads[i:i + 1])
        sched_a.step()
    saved = {k: (v.numpy().copy() if hasattr(v, "numpy") else v) for k, v in opt_a.state_dict().items()}
    params_saved = [p.numpy().copy() for p in p_a]

    p_b = [oar.to_tensor(a, stop_gradient=False) for a in params_saved]
    sched_b = optim.lr.ExponentialDecay(0.5, 0.3)
    opt_b = factory(p_b, {})
    opt_b.set_lr_scheduler(sched_b)
    opt_b.set_state_dict(saved)
    assert sched_b.last_epoch == 3
    for i in range(3, 6):
        run(p_b, opt_b, grads[i:i + 1])
        sched_b.step()
    for x, y in zip(p_full, p_b):
        assert np.array_equal(x.numpy(), y.numpy())


def test_state_dict_keys_use_parameter_names():
    w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    w.name = "linear_0.w_0"
    opt = optim.Momentum(0.1, parameters=[w])
    w.grad = oar.to_tensor([1.0, 1.0])
    opt.step()
    sd = opt.state_dict()
    assert "linear_0.w_0_velocity_0" in sd
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.Momentum\]"):
        opt.set_state_dict({"linear_0.w_0_velocity_0": oar.zeros([3])})


def test_clear_grad():
    w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    opt = optim.SGD(0.1, parameters=[w])
    (w * w).sum().backward()
    opt.clear_grad()
    assert w.grad is None or w.grad.numpy().tolist() == [0.0, 0.0]
    (w * w).sum().backward()
    opt.clear_grad(set_to_zero=False)
    assert w.grad is None


def test_minimize_returns_params_grads():
    w = oar.to_tensor([1.0], stop_gradient=False)
    opt = optim.SGD(0.5, parameters=[w])
    loss = (w * 4.0).sum()
    loss.backward()
    _, pg = opt.minimize(loss)
    assert len(pg) == 1 and pg[0][0] is w
    assert w.numpy().tolist() == [-1.0]


def test_non_contiguous_state_is_updated_in_place():
    base = oar.to_tensor(np.arange(6.0).reshape(2, 3), stop_gradient=False)
    from oar._C import _optimizer as ops
    p = oar.to_tensor(np.ones((3, 2)))
    g = oar.to_tensor(np.ones((3, 2)))
    vel = base.detach().transpose([1, 0])
    assert not vel.is_contiguous()
    ops.momentum_(p, g, vel, 0.1, 1.0)
    np.testing.assert_allclose(base.numpy(), np.arange(6.0).reshape(2, 3) + 1)


# ---- LBFGS
def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_quadratic(line_search):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4))
    h = a @ a.T + 4 * np.eye(4)
    b = rng.standard_normal(4)
    x = oar.to_tensor(np.zeros(4), stop_gradient=False)
    H, B = oar.to_tensor(h), oar.to_tensor(b)
    opt = optim.LBFGS(learning_rate=1.0, max_iter=50, parameters=[x], line_search_fn=line_search,
                      history_size=10, tolerance_change=1e-14)

    def closure():
        opt.clear_grad()
        loss = 0.5 * (x * oar.matmul(H, x)).sum() - (B * x).sum()
        loss.backward()
        return loss

    for _ in range(5):
        opt.step(closure)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(h, b), atol=1e-6)


def test_lbfgs_rosenbrock_strong_wolfe():
    x = oar.to_tensor([-1.5, 2.0], dtype="float64", stop_gradient=False)
    opt = optim.LBFGS(learning_rate=1.0, max_iter=100, parameters=[x], line_search_fn="strong_wolfe")

    def closure():
        opt.clear_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    for _ in range(5):
        opt.step(closure)
    np.testing.assert_allclose(x.numpy(), [1.0, 1.0], atol=1e-5)


# ---- errors
@pytest.mark.parametrize("cls,kwargs", [
    (optim.SGD, {"learning_rate": -0.1}),
    (optim.Adam, {"learning_rate": -1.0}),
    (optim.Adam, {"beta1": 1.0}),
    (optim.Adam, {"beta2": -0.1}),
    (optim.AdamW, {"beta1": 1.5}),
    (optim.AdamW, {"weight_decay": -1.0}),
    (optim.Adamax, {"beta2": 1.0}),
    (optim.Lamb, {"beta1": 2.0}),
    (optim.NAdam, {"beta1": 1.0}),
    (optim.RAdam, {"beta2": 1.0}),
    (optim.Momentum, {"momentum": -0.5}),
    (optim.RMSProp, {"learning_rate": 0.1, "epsilon": -1.0}),
    (optim.Adagrad, {"learning_rate": float("nan")}),
    (optim.Adadelta, {"rho": 2.0}),
    (optim.LBFGS, {"line_search_fn": "armijo"}),
])
def test_bad_hyperparameters_raise(cls, kwargs):
    name = cls.__name__
    with pytest.raises(ValueError, match=rf"^\[oar.optimizer.{name}\]"):
        cls(parameters=[oar.ones([1])], **kwargs)


def test_missing_parameters_and_bad_types():
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.SGD\]"):
        optim.SGD(0.1)
    with pytest.raises(TypeError, match=r"^\[oar.optimizer.SGD\]"):
        optim.SGD("0.1", parameters=[oar.ones([1])])
    with pytest.raises(TypeError, match=r"^\[oar.optimizer.Adam\]"):
        optim.Adam(0.1, parameters=[oar.ones([1])], weight_decay="x")
    p = oar.ones([1])
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.SGD\]"):
        optim.SGD(0.1, parameters=[{"params": [p]}, {"params": [p]}])


def test_update_op_validation():
    from oar._C import _optimizer as ops
    p = oar.ones([3])
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.Adam\]"):
        ops.adam_(p, oar.ones([3]), oar.zeros([2]), oar.zeros([3]), None, 0.1, 0.9, 0.999, 1e-8, 1)
    with pytest.raises(TypeError, match=r"^\[oar.optimizer.Adam\]"):
        ops.adam_(p, oar.ones([3]), oar.zeros([3], dtype="float64"), oar.zeros([3]), None, 0.1, 0.9, 0.999, 1e-8, 1)
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.Adam\]"):
        ops.adam_(p, oar.ones([3]), oar.zeros([3]), oar.zeros([3]), None, 0.1, 0.9, 0.999, 1e-8, 0)
    with pytest.raises(TypeError, match=r"^\[oar.optimizer.SGD\]"):
        ops.sgd_(oar.ones([3], dtype="int64"), oar.ones([3], dtype="int64"), 0.1)
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.SGD\]"):
        ops.sgd_(p, oar.ones([3]), float("inf"))


def test_zero_size_parameter():
    p = oar.to_tensor(np.zeros((0, 3)), stop_gradient=False)
    p.grad = oar.to_tensor(np.zeros((0, 3)))
    for opt in (optim.Adam(0.1, parameters=[p]), optim.Lamb(0.1, parameters=[p])):
        opt.step()
    assert p.shape == [0, 3]


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_step_inside_auto_cast_updates_in_place(level):
    amp = pytest.importorskip("oar.amp")
    arrs, params = make_params("float16")
    opt = optim.Adam(0.1, parameters=params)
    for p in params:
        p.grad = oar.ones(p.shape, dtype="float16")
    with amp.auto_cast(level=level, dtype="float16"):
        opt.step()
    for a, p in zip(arrs, params):
        np.testing.assert_allclose(p.astype("float32").numpy(), a - 0.1, atol=2e-3)


def test_with_linear_layer_and_global_norm_clip():
    nn = pytest.importorskip("oar.nn")
    if not hasattr(nn, "Linear") or not hasattr(nn, "ClipGradByGlobalNorm"):
        pytest.skip("oar.nn.Linear / ClipGradByGlobalNorm not available")
    layer = nn.Linear(3, 2)
    w0, b0 = layer.weight.numpy().copy(), layer.bias.numpy().copy()
    opt = optim.SGD(0.1, parameters=layer.parameters(), grad_clip=nn.ClipGradByGlobalNorm(1.0))
    x = np.arange(12, dtype="float32").reshape(4, 3)
    layer(oar.to_tensor(x)).sum().backward()
    opt.step()
    gw = x.sum(0)[:, None] * np.ones((1, 2), dtype="float32")
    gb = np.full(2, 4.0, dtype="float32")
    scale = 1.0 / max(1.0, math.sqrt((gw ** 2).sum() + (gb ** 2).sum()))
    np.testing.assert_allclose(layer.weight.numpy(), w0 - 0.1 * gw * scale, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.bias.numpy(), b0 - 0.1 * gb * scale, rtol=1e-5, atol=1e-6)
