"""LBFGS state_dict / set_state_dict: a resumed run continues bit-exactly."""
import numpy as np
import pytest

import oar
import oar.optimizer as optim


def _data(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 4)).astype(dtype)
    y = (np.sin(x).sum(1, keepdims=True) * 0.5).astype(dtype)
    return oar.to_tensor(x), oar.to_tensor(y)


def _model(dtype, seed=1):
    oar.seed(seed)
    m = oar.nn.Sequential(oar.nn.Linear(4, 5), oar.nn.Tanh(), oar.nn.Linear(5, 1))
    return m.to(dtype=dtype) if dtype != "float32" else m


def _opt(model, line_search, sched):
    lr = optim.lr.StepDecay(0.5, step_size=2, gamma=0.5) if sched else 0.5
    return optim.LBFGS(learning_rate=lr, max_iter=4, history_size=3, line_search_fn=line_search,
                       parameters=model.parameters())


def _run(model, opt, x, y, steps):
    def closure():
        opt.clear_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
        if isinstance(opt._learning_rate, optim.lr.LRScheduler):
            opt._learning_rate.step()


def _params(model):
    return [p.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
@pytest.mark.parametrize("sched", [False, True])
@pytest.mark.parametrize("through_file", [False, True])
def test_resume_bit_exact(tmp_path, dtype, line_search, sched, through_file):
    x, y = _data(dtype)
    m1 = _model(dtype)
    o1 = _opt(m1, line_search, sched)
    _run(m1, o1, x, y, 3)
    state = o1.state_dict()
    weights = m1.state_dict()
    # the history must have been filled (history_size 3 after 12 iterations) for the test to mean anything
    assert len(state["state"]["old_yk"]) == 3
    if through_file:
        oar.save(state, str(tmp_path / "opt.pdopt"))
        oar.save(weights, str(tmp_path / "m.pdparams"))
        state = oar.load(str(tmp_path / "opt.pdopt"))
        weights = oar.load(str(tmp_path / "m.pdparams"))
    m2 = _model(dtype, seed=7)  # different initial weights, overwritten below
    m2.set_state_dict(weights)
    o2 = _opt(m2, line_search, sched)
    o2.set_state_dict(state)
    for a, b in zip(_params(m1), _params(m2)):
        np.testing.assert_array_equal(a, b)
    _run(m1, o1, x, y, 3)
    _run(m2, o2, x, y, 3)
    for a, b in zip(_params(m1), _params(m2)):
        np.testing.assert_array_equal(a, b)
    s1, s2 = o1.state_dict()["state"], o2.state_dict()["state"]
    assert s1["n_iter"] == s2["n_iter"] and s1["func_evals"] == s2["func_evals"]
    if sched:
        assert o1.get_lr() == o2.get_lr()


def test_fresh_optimizer_differs_from_resumed():
    # Without the state, the continuation takes a different path: the test above can fail.
    x, y = _data("float64")
    m1 = _model("float64")
    o1 = _opt(m1, None, False)
    _run(m1, o1, x, y, 3)
    m2 = _model("float64", seed=7)
    m2.set_state_dict(m1.state_dict())
    o2 = _opt(m2, None, False)
    _run(m1, o1, x, y, 1)
    _run(m2, o2, x, y, 1)
    assert any(not np.array_equal(a, b) for a, b in zip(_params(m1), _params(m2)))


def test_state_is_copied():
    x, y = _data("float64")
    m1 = _model("float64")
    o1 = _opt(m1, None, False)
    _run(m1, o1, x, y, 2)
    state = o1.state_dict()
    o2 = _opt(_model("float64"), None, False)
    o2.set_state_dict(state)
    before = o2.state["prev_flat_grad"].numpy().copy()
    g = state["state"]["prev_flat_grad"]
    g.add_(oar.ones_like(g))
    assert not np.array_equal(g.numpy(), before)
    np.testing.assert_array_equal(o2.state["prev_flat_grad"].numpy(), before)


def test_empty_state_round_trip():
    w = oar.to_tensor([1.0, 2.0], dtype="float64", stop_gradient=False)
    opt = optim.LBFGS(parameters=[w])
    sd = opt.state_dict()
    assert sd == {"state": {"func_evals": 0, "n_iter": 0}}
    opt.set_state_dict(sd)
    assert opt.state_dict() == sd


def test_bad_state_dicts():
    w = oar.to_tensor([1.0, 2.0], dtype="float64", stop_gradient=False)
    opt = optim.LBFGS(parameters=[w])
    with pytest.raises(TypeError, match=r"^\[oar.optimizer.LBFGS\]"):
        opt.set_state_dict([1])
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.LBFGS\]"):
        opt.set_state_dict({"n_iter": 1})
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.LBFGS\]"):
        opt.set_state_dict({"state": {"bogus": 1}})
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.LBFGS\]"):
        opt.set_state_dict({"state": {"d": oar.zeros([3], dtype="float64")}})
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.LBFGS\]"):
        opt.set_state_dict({"state": {"old_yk": [oar.zeros([2], dtype="float64")], "old_sk": [], "ro": []}})
    with pytest.raises(TypeError, match=r"^\[oar.optimizer.LBFGS\]"):
        opt.set_state_dict({"state": {"d": [1.0, 2.0]}})
