"""The multi-tensor optimizer step (Note [multi-tensor optimizer step]): the
optimizers with an elementwise update change many parameters with one merged
op, to the bit what the per-parameter ops give, and against NumPy."""
import math

import numpy as np
import pytest

import oar
import oar.optimizer as optim
import oar.regularizer as reg
from oar._C import _optimizer as ops
from oar.optimizer import optimizer as base

# 0-size, 1, 7, 1000 (2-D) and 100000 elements: the last one spans several
# threads' shares of the merged walk, the small ones fall inside one share.
SHAPES = [(0,), (1,), (7,), (10, 100), (100000,)]


def _bits(t):
    a = t.astype("float32").numpy() if t.dtype == oar.bfloat16 else t.numpy()
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def _params(dtype, seed=0):
    rng = np.random.default_rng(seed)
    ps = []
    for shape in SHAPES:
        p = oar.to_tensor(rng.standard_normal(shape).astype(np.float32), stop_gradient=False)
        ps.append(p.astype(dtype).detach() if dtype != "float32" else p)
        ps[-1].stop_gradient = False
    return ps


def _grads(ps, step):
    rng = np.random.default_rng(100 + step)
    return [oar.to_tensor(rng.standard_normal(p.shape).astype(np.float32)).astype(p.dtype) for p in ps]


CASES = {
    "sgd": lambda groups, **kw: optim.SGD(0.1, parameters=groups, weight_decay=0.01, **kw),
    "momentum": lambda groups, **kw: optim.Momentum(0.05, 0.9, parameters=groups, weight_decay=0.02, **kw),
    "nesterov": lambda groups, **kw: optim.Momentum(0.05, 0.9, parameters=groups, use_nesterov=True, **kw),
    "adam": lambda groups, **kw: optim.Adam(0.01, parameters=groups, weight_decay=0.01, **kw),
    "amsgrad": lambda groups, **kw: optim.Adam(0.01, parameters=groups, amsgrad=True, **kw),
    "adamw": lambda groups, **kw: optim.AdamW(0.01, parameters=groups, weight_decay=0.1, **kw),
    "adamw_lr_ratio": lambda groups, **kw: optim.AdamW(0.01, parameters=groups, weight_decay=0.1,
                                                       lr_ratio=lambda p: 0.5 if p.size > 500 else 1.0,
                                                       apply_decay_param_fun=lambda n: n != "param_1", **kw),
    "adamax": lambda groups, **kw: optim.Adamax(0.01, parameters=groups, weight_decay=0.01, **kw),
    "adagrad": lambda groups, **kw: optim.Adagrad(0.05, parameters=groups, weight_decay=0.01, **kw),
    "adadelta": lambda groups, **kw: optim.Adadelta(1.0, parameters=groups, weight_decay=0.01, **kw),
    "rmsprop": lambda groups, **kw: optim.RMSProp(0.01, momentum=0.5, parameters=groups, **kw),
    "rmsprop_centered": lambda groups, **kw: optim.RMSProp(0.01, centered=True, parameters=groups,
                                                           weight_decay=reg.L1Decay(0.01), **kw),
    "nadam": lambda groups, **kw: optim.NAdam(0.01, parameters=groups, weight_decay=0.01, **kw),
    "radam": lambda groups, **kw: optim.RAdam(0.01, parameters=groups, weight_decay=0.01, **kw),
}


def _train(case, dtype, multi_tensor, threads, steps=4, multi_precision=False):
    """Parameters and optimizer state after `steps` steps, with the merged or the per-parameter path."""
    ps = _params(dtype)
    # Two groups with their own rate multiplier and decay, the large tensor in each.
    groups = [{"params": ps[:3] + ps[4:]},
              {"params": ps[3:4], "learning_rate": 0.5, "weight_decay": 0.05}]
    kw = {"multi_precision": True} if multi_precision else {}
    opt = CASES[case](groups, **kw)
    prev_mt, prev_threads = base._MULTI_TENSOR, oar.get_num_threads()
    base._MULTI_TENSOR = multi_tensor
    oar.set_num_threads(threads)
    try:
        for t in range(steps):
            for p, g in zip(ps, _grads(ps, t)):
                p.grad = g
            opt.step()
    finally:
        base._MULTI_TENSOR = prev_mt
        oar.set_num_threads(prev_threads)
    return ps, opt


def _same(a_ps, a_opt, b_ps, b_opt):
    for p, q in zip(a_ps, b_ps):
        assert np.array_equal(_bits(p), _bits(q))
    sa, sb = a_opt.state_dict(), b_opt.state_dict()
    assert sorted(sa) == sorted(sb)
    for k in sa:
        if k == "master_weights":
            for n in sa[k]:
                assert np.array_equal(_bits(sa[k][n]), _bits(sb[k][n])), n
        else:
            assert np.array_equal(_bits(sa[k]), _bits(sb[k])), k


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_merged_step_equals_per_parameter_step_to_the_bit(case, threads):
    _same(*_train(case, "float32", False, threads), *_train(case, "float32", True, threads))


# (the optimizers that keep float32 master weights take multi_precision)
@pytest.mark.parametrize("case,multi_precision",
                         [(c, False) for c in sorted(CASES)] +
                         [(c, True) for c in ("sgd", "momentum", "nesterov", "adam", "amsgrad", "adamw")])
def test_bfloat16_merged_step_equals_per_parameter_step(case, multi_precision):
    a = _train(case, "bfloat16", False, 2, multi_precision=multi_precision)
    b = _train(case, "bfloat16", True, 2, multi_precision=multi_precision)
    _same(*a, *b)
    assert all(p.dtype == oar.bfloat16 for p in b[0])
    assert ("master_weights" in b[1].state_dict()) == multi_precision


class _Counting:
    """Stands in for oar._C._optimizer and records (op, number of parameters) of each update call."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        fn = getattr(ops, name)
        if not name.endswith("_"):  # not an update (state_dtype)
            return fn

        def call(*a, **k):
            self.calls.append((name, len(a[0]) if name.startswith("merged_") else 1))
            return fn(*a, **k)
        return call


@pytest.mark.parametrize("case", sorted(CASES))
def test_merged_ops_are_used_once_per_group(case, monkeypatch):
    counting = _Counting()
    monkeypatch.setattr(base, "_ops", counting)
    _train(case, "float32", True, 1, steps=1)
    # every parameter by a merged op: one per group (their rates differ), and
    # for adamw_lr_ratio one per (rate, decay) its per-parameter functions give
    names = {name for name, _ in counting.calls}
    assert names == {"merged_" + CASES[case](_params("float32"))._op}
    sizes = sorted(n for _, n in counting.calls)
    assert sizes == ([1, 1, 1, 2] if case == "adamw_lr_ratio" else [1, 4])


def test_merged_adam_against_numpy():
    rng = np.random.default_rng(3)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    ps = [oar.to_tensor(a, stop_gradient=False) for a in init]
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.99, 1e-6, 0.02
    opt = optim.Adam(lr, b1, b2, eps, parameters=ps, weight_decay=wd)
    ref = [a.astype(np.float64) for a in init]
    m = [np.zeros_like(a) for a in ref]
    v = [np.zeros_like(a) for a in ref]
    for t in range(1, 4):
        gs = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
        for p, g in zip(ps, gs):
            p.grad = oar.to_tensor(g)
        opt.step()
        for i, g in enumerate(gs):
            g = g + wd * ref[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            lr_t = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            ref[i] = ref[i] - lr_t * m[i] / (np.sqrt(v[i]) + eps * math.sqrt(1 - b2 ** t))
    for p, r in zip(ps, ref):
        np.testing.assert_allclose(p.numpy(), r, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("case", ["momentum", "adam"])
def test_state_dict_round_trip_resumes_bit_exactly(case):
    ps, opt = _train(case, "float32", True, 2, steps=2)
    saved = {k: (v.clone() if isinstance(v, oar.Tensor) else v) for k, v in opt.state_dict().items()}
    params_saved = [p.clone() for p in ps]
    twin = [p.clone().detach() for p in params_saved]
    for q in twin:
        q.stop_gradient = False
    groups = [{"params": twin[:3] + twin[4:]}, {"params": twin[3:4], "learning_rate": 0.5, "weight_decay": 0.05}]
    opt2 = CASES[case](groups)
    opt2.set_state_dict(saved)
    for a, b in ((ps, opt), (twin, opt2)):
        for p, g in zip(a, _grads(a, 7)):
            p.grad = g
        b.step()
    for p, q in zip(ps, twin):
        assert np.array_equal(_bits(p), _bits(q))


def test_grad_clip_and_versions_with_merged_step():
    ps = _params("float32")
    clip = oar.nn.ClipGradByGlobalNorm(0.5)
    opts = []
    for multi in (False, True):
        qs = [p.clone().detach() for p in ps]
        opt = optim.Momentum(0.1, 0.9, parameters=qs, grad_clip=clip)
        for q, g in zip(qs, _grads(qs, 0)):
            q.stop_gradient = False
            q.grad = g
        before = [q._version for q in qs]
        base._MULTI_TENSOR, prev = multi, base._MULTI_TENSOR
        try:
            opt.step()
        finally:
            base._MULTI_TENSOR = prev
        # the in-place write is visible to autograd's version check
        assert all(q._version > v for q, v in zip(qs, before) if q.size > 0)
        opts.append(qs)
    for a, b in zip(*opts):
        assert np.array_equal(_bits(a), _bits(b))


def test_non_contiguous_state_is_updated_in_place_by_merged_op():
    base_t = oar.to_tensor(np.arange(6.0).reshape(2, 3))
    vel = base_t.transpose([1, 0])
    assert not vel.is_contiguous()
    p, q = oar.ones([3, 2], dtype="float64"), oar.ones([4], dtype="float64")
    ops.merged_momentum_([p, q], [oar.ones([3, 2], dtype="float64"), oar.ones([4], dtype="float64")],
                         [vel, oar.zeros([4], dtype="float64")], 0.1, 1.0)
    np.testing.assert_allclose(base_t.numpy(), np.arange(6.0).reshape(2, 3) + 1)
    np.testing.assert_allclose(q.numpy(), np.full(4, 0.9))


def test_merged_op_validation():
    f32 = [oar.ones([2]), oar.ones([3])]
    with pytest.raises(TypeError, match=r"^\[oar\.optimizer\.SGD\] parameter 1 is float64 but parameter 0 is "
                                        r"float32"):
        ops.merged_sgd_([oar.ones([2]), oar.ones([2], dtype="float64")],
                        [oar.ones([2]), oar.ones([2], dtype="float64")], 0.1)
    with pytest.raises(ValueError, match=r"^\[oar\.optimizer\] merged_sgd_ got 2 parameters but 1 gradients"):
        ops.merged_sgd_(f32, f32[:1], 0.1)
    with pytest.raises(ValueError, match=r"^\[oar\.optimizer\] merged_momentum_ got 2 parameters but 1 tensors"):
        ops.merged_momentum_(f32, f32, [oar.zeros([2])], 0.1, 0.9)
    with pytest.raises(ValueError, match=r"^\[oar\.optimizer\.Adam\] operand 2 has shape \[2\] but the "
                                         r"parameter has shape \[3\]"):
        ops.merged_adam_(f32, f32, [oar.zeros([2]), oar.zeros([2])], [oar.zeros([2]), oar.zeros([3])], None,
                         0.1, 0.9, 0.99, 1e-8, 1)
    with pytest.raises(ValueError, match=r"^\[oar\.optimizer\.Adam\] step must be >= 1, got 0"):
        ops.merged_adam_(f32, f32, f32, f32, None, 0.1, 0.9, 0.99, 1e-8, 0)
    ops.merged_sgd_([], [], 0.1)  # nothing to update


def test_parameter_listed_twice_is_refused():
    w = oar.ones([2])
    with pytest.raises(ValueError, match=r"^\[oar\.optimizer\.Adam\] a parameter appears more than once"):
        optim.Adam(parameters=[w, w])


def test_use_multi_tensor_is_accepted():
    w = oar.to_tensor([1.0, -1.0], stop_gradient=False)
    for opt in (optim.Adam(0.1, parameters=[w], use_multi_tensor=True),
                optim.Momentum(0.1, parameters=[w], use_multi_tensor=True)):
        w.grad = oar.to_tensor([1.0, 1.0])
        opt.step()
    assert w.numpy().tolist() != [1.0, -1.0]
