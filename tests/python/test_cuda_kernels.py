"""CUDA kernels whose results the op database does not compare across devices, against the CPU:
the in-place optimizer updates (exempt from the op database: they have no outputs) and the
random draws (the op database samples them only where their distribution is one point).

The random kernels run the CPU's Philox streams (Note [CUDA random numbers] in
src/kernels/cuda/random.cu), so one seed must give the CPU's numbers: exactly where the draw uses
exact arithmetic only, and up to the rounding of log and cos where it does not.
Skipped where no GPU is visible.
"""
import math

import numpy as np
import pytest

import oar
from oar import _C

GPU = "gpu:0"
pytestmark = pytest.mark.skipif(oar.device.cuda.device_count() == 0, reason="no GPU visible")

FLOATS = ("float16", "bfloat16", "float32", "float64")
# (atol, rtol) between the devices: the update rules round differently only where nvcc fuses a
# multiply and an add (and lamb's norms add in another order); half precision by one rounding.
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-6, 1e-5), "float64": (1e-13, 1e-12)}


def _tensor(a, dtype, device=None):
    t = oar.to_tensor(np.asarray(a, dtype=np.float32 if dtype in ("float16", "bfloat16") else np.float64))
    t = t.astype(dtype)
    return t.to(device) if device else t


def _numpy(t):
    return t.cpu().astype("float32").numpy() if str(t.dtype).endswith("16") else t.cpu().numpy()


# ---------------------------------------------------------------- optimizer updates

# case -> (number of states, keyword hyperparameters); the op is the case's name up to its first "_".
# "step0" offsets the steps (radam rectifies from its 5th-or-so step on).
UPDATES = {
    "sgd_": (0, dict(lr=0.1, l1=0.01, l2=0.02)),
    "momentum_": (1, dict(lr=0.1, mu=0.9, use_nesterov=False, l2=0.01)),
    "momentum_nesterov": (1, dict(lr=0.1, mu=0.9, use_nesterov=True)),
    "adam_": (2, dict(lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8, coeff=0.0, l2=0.01)),
    "adam_decoupled": (2, dict(lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8, coeff=0.05)),
    "adam_amsgrad": (3, dict(lr=0.01, beta1=0.9, beta2=0.99, epsilon=1e-8)),
    "adamax_": (2, dict(lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8, l1=0.01)),
    "adagrad_": (1, dict(lr=0.05, epsilon=1e-6)),
    "adadelta_": (2, dict(lr=1.0, rho=0.9, epsilon=1e-6)),
    "rmsprop_": (2, dict(lr=0.01, rho=0.9, epsilon=1e-6, momentum=0.5)),
    "rmsprop_centered": (3, dict(lr=0.01, rho=0.9, epsilon=1e-6, momentum=0.5)),
    "lamb_": (2, dict(lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-6, lamb_weight_decay=0.01)),
    "lamb_plain": (2, dict(lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-6, lamb_weight_decay=0.0)),
    "nadam_": (2, dict(lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8, mu_t=0.9, mu_next=0.91, mu_product=0.9)),
    "radam_": (2, dict(lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8)),
    "radam_rectified": (2, dict(lr=0.01, beta1=0.9, beta2=0.9, epsilon=1e-8, step0=10)),
}


def _step(case, p, g, states, t):
    n, kw = UPDATES[case]
    op = getattr(_C._optimizer, case.split("_")[0] + "_")
    kw = dict(kw)
    step0 = kw.pop("step0", 0)
    if "beta1" in kw:
        kw["step"] = step0 + t
    if op.__name__ in ("adam_", "rmsprop_"):  # the optional third state comes third, None when absent
        op(p, g, states[0], states[1], states[2] if n == 3 else None, **kw)
    else:
        op(p, g, *states, **kw)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", sorted(UPDATES))
def test_update_matches_cpu(case, dtype):
    rng = np.random.default_rng(3)
    shape = (37, 129)  # several blocks, a partial last one
    p0, st0 = rng.uniform(-1, 1, shape), [rng.uniform(0.1, 1, shape) for _ in range(UPDATES[case][0])]
    if case == "rmsprop_centered":
        st0[2] *= 0.1  # a mean gradient whose square stays below the mean square
    grads = [rng.uniform(-1, 1, shape) for _ in range(3)]
    sdt = "float32" if dtype in ("float16", "bfloat16") else dtype
    results = []
    for device in (None, GPU):
        p = _tensor(p0, dtype, device)
        states = [_tensor(s, sdt, device) for s in st0]
        for t, g in enumerate(grads, 1):
            _step(case, p, _tensor(g, dtype, device), states, t)
        results.append([p] + states)
    atol, rtol = TOL[dtype]
    for want, got in zip(*results):
        assert "gpu" in str(got.place).lower()
        np.testing.assert_allclose(_numpy(got), _numpy(want), atol=atol, rtol=rtol, err_msg=case)


@pytest.mark.parametrize("case", sorted(c for c in UPDATES if not c.startswith("lamb")))
def test_merged_update_matches_single_updates(case):
    # The merged op over three parameters (one of them empty) against the op run on each.
    rng = np.random.default_rng(5)
    n, kw = UPDATES[case]
    kw = {k: v for k, v in kw.items() if k != "step0"}
    if "beta1" in kw:
        kw["step"] = 1 + UPDATES[case][1].get("step0", 0)
    shapes = [(37, 129), (0,), (5,)]
    init = [(rng.uniform(-1, 1, s), rng.uniform(-1, 1, s), [rng.uniform(0.1, 1, s) for _ in range(n)])
            for s in shapes]
    if case == "rmsprop_centered":
        for _, _, st in init:
            st[2] *= 0.1  # a mean gradient whose square stays below the mean square
    single = [[_tensor(a, "float32", GPU) for a in [p, g, *st]] for p, g, st in init]
    merged = [[_tensor(a, "float32", GPU) for a in [p, g, *st]] for p, g, st in init]
    for p, g, *states in single:
        _step(case, p, g, states, kw.get("step", 1) - UPDATES[case][1].get("step0", 0))
    name = case.split("_")[0] + "_"
    lists = [[t[k] for t in merged] for k in range(2 + n)]
    if name in ("adam_", "rmsprop_"):
        lists = lists[:4] + [lists[4] if n == 3 else None]
    getattr(_C._optimizer, "merged_" + name)(*lists, **kw)
    for want, got in zip(single, merged):
        for a, b in zip(want, got):
            assert np.array_equal(_numpy(a), _numpy(b)), case


def test_zero_size_update():
    p, g = _tensor(np.zeros((0, 3)), "float32", GPU), _tensor(np.zeros((0, 3)), "float32", GPU)
    m, v = _tensor(np.zeros((0, 3)), "float32", GPU), _tensor(np.zeros((0, 3)), "float32", GPU)
    _C._optimizer.lamb_(p, g, m, v, 0.01, 0.9, 0.999, 1e-6, 1, 0.01)
    _C._optimizer.adam_(p, g, m, v, None, 0.01, 0.9, 0.999, 1e-8, 1)
    assert p.shape == [0, 3]


# ---------------------------------------------------------------- random draws

def _both(fn, x, seed=1234):
    """fn(x) on the CPU and on the GPU, each after seeding the generator alike."""
    out = []
    for device in (None, GPU):
        oar.seed(seed)
        out.append(fn(x.to(device) if device else x))
    assert "gpu" in str(out[1].place).lower()
    return out


@pytest.mark.parametrize("dtype", FLOATS)
def test_bernoulli_same_numbers(dtype):
    p = _tensor(np.random.default_rng(0).uniform(0, 1, (33, 65)), dtype)
    cpu, gpu = _both(oar.bernoulli, p)
    np.testing.assert_array_equal(_numpy(gpu), _numpy(cpu))
    assert 0.3 < _numpy(gpu).mean() < 0.7


def test_bernoulli_errors_as_on_cpu():
    for bad in ([0.5, 1.5, -1.0], [0.25, float("nan")]):
        msgs = []
        for device in (None, GPU):
            with pytest.raises(ValueError) as e:
                oar.bernoulli(_tensor(bad, "float32", device))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("replacement,shape,n", [(True, (5, 17), 40), (False, (5, 17), 9), (True, (300,), 7),
                                                  (False, (1, 300), 290)])
def test_multinomial_same_numbers(dtype, replacement, shape, n):
    w = np.random.default_rng(1).uniform(0, 1, shape)
    w[..., 3] = 0.0  # a category never drawn
    cpu, gpu = _both(lambda x: oar.multinomial(x, n, replacement), _tensor(w, dtype))
    np.testing.assert_array_equal(gpu.cpu().numpy(), cpu.cpu().numpy())


def test_multinomial_errors_as_on_cpu():
    cases = [([[0.5, 0.5], [1.0, -1.0]], 1, True), ([[0.5, 0.5], [0.0, 0.0]], 1, True),
             ([[0.5, 0.5], [1.0, 0.0]], 2, False), ([[0.5, float("inf")]], 1, True)]
    for w, n, repl in cases:
        msgs = []
        for device in (None, GPU):
            with pytest.raises(ValueError) as e:
                oar.multinomial(_tensor(w, "float32", device), n, repl)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1], (w, n, repl)


def _on_gpu(fn):
    """fn() with the GPU as the current device, or a skip where creation ops do not run there."""
    try:
        with oar.device.device_guard(GPU):
            out = fn()
    except (NotImplementedError, ValueError) as e:
        pytest.skip(f"creation ops do not run on the GPU in this build: {e}")
    if "gpu" not in str(out.place).lower():
        pytest.skip("creation ops under device_guard('gpu:0') still run on the CPU")
    return out


@pytest.mark.parametrize("dtype", FLOATS)
def test_creation_draws_same_numbers(dtype):
    draws = [(lambda: oar.uniform([1000], dtype=dtype, min=-2.0, max=3.0, seed=11), True),
             (lambda: oar.uniform([1001], dtype=dtype), True),
             (lambda: oar.randn([1003], dtype=dtype), False)]
    for fn, exact in draws:
        oar.seed(99)
        want = fn()
        oar.seed(99)
        got = _on_gpu(fn)
        if exact:
            np.testing.assert_array_equal(_numpy(got), _numpy(want))
        else:
            np.testing.assert_allclose(_numpy(got), _numpy(want), rtol=1e-5, atol=1e-5)


def test_randint_and_randperm_same_numbers():
    for fn in (lambda: oar.randint(-5, 1 << 40, [999]), lambda: oar.randint(0, 7, [64], dtype="int32"),
               lambda: oar.randperm(1000), lambda: oar.randperm(300, dtype="float16")):
        oar.seed(5)
        want = fn()
        oar.seed(5)
        got = _on_gpu(fn)
        np.testing.assert_array_equal(_numpy(got), _numpy(want))


def test_gaussian_float64_moments():
    oar.seed(3)
    x = _numpy(_on_gpu(lambda: oar.randn([200000], dtype="float64")))
    assert abs(x.mean()) < 0.02 and abs(x.var() - 1.0) < 0.02 and math.isfinite(x.max())
