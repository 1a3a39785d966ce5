"""The kernel compiler (oar.compiler): generated kernels against op-by-op
execution on random fusion groups, the disk cache (warm loads, invalidation,
concurrent processes, a corrupt library), the fallbacks (no compiler, a
failing compiler, OAR_COMPILER=0) and its use under to_static."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import oar
from oar import _C

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Each code's op-by-op form, with its arity.
UNARY = {
    "neg": oar.neg, "exp": oar.exp, "log": oar.log, "sqrt": oar.sqrt, "rsqrt": oar.rsqrt, "square": oar.square,
    "reciprocal": oar.reciprocal, "sin": oar.sin, "cos": oar.cos, "tanh": oar.tanh,
    "sigmoid": oar.nn.functional.sigmoid, "erf": oar.erf, "abs": oar.abs, "relu": oar.nn.functional.relu,
    "silu": oar.nn.functional.silu, "gelu": oar.nn.functional.gelu,
    "gelu_tanh": lambda x: oar.nn.functional.gelu(x, approximate=True), "expm1": oar.expm1, "log1p": oar.log1p,
}
BINARY = {"add": oar.add, "subtract": oar.subtract, "multiply": oar.multiply, "divide": oar.divide,
          "maximum": oar.maximum, "minimum": oar.minimum, "pow": oar.pow}


def code(name):
    if name == "gelu_tanh":
        return _C._fused_elementwise_code("gelu", True)
    return _C._fused_elementwise_code(name)


DIMS = (1, 2, 3, 5, 7, 16, 33, 64)


def random_inputs(rng, dtype, big):
    """Input tensors that broadcast to one output shape: dense, broadcast
    (size-1 or missing dims), strided views and single values."""
    if big:
        out = [int(rng.choice([130, 257])), int(rng.choice([129, 256]))]
    else:
        out = [int(rng.choice(DIMS)) for _ in range(int(rng.integers(1, 5)))]
    arrays, tensors = [], []
    for _ in range(int(rng.integers(1, 5))):
        kind = rng.choice(["dense", "broadcast", "strided", "scalar"], p=[0.4, 0.3, 0.2, 0.1])
        shape = list(out)
        if kind == "broadcast":
            shape = [1 if rng.random() < 0.5 else d for d in shape][int(rng.integers(0, len(shape))):]
        elif kind == "scalar":
            shape = [] if rng.random() < 0.5 else [1]
        a = rng.uniform(-2, 2, size=shape)
        if kind == "strided" and len(shape) >= 2:
            t = oar.to_tensor(np.ascontiguousarray(a.swapaxes(-1, -2)).astype(np.float64)).cast(dtype)
            t = t.transpose(list(range(len(shape) - 2)) + [len(shape) - 1, len(shape) - 2])
        else:
            t = oar.to_tensor(a.astype(np.float64)).cast(dtype)
        arrays.append(a)
        tensors.append(t)
    return tensors


def random_program(rng, n_in):
    """A random DAG: each instruction reads inputs or earlier results."""
    prog, names = [], []
    for k in range(int(rng.integers(1, 9))):
        regs = n_in + k
        # lean on the newest registers so that chains form, but let any be read
        pick = lambda: int(max(0, regs - rng.geometric(0.5))) if rng.random() < 0.7 else int(rng.integers(0, regs))
        if rng.random() < 0.5:
            name = str(rng.choice(list(BINARY)))
            prog += [code(name), pick(), pick()]
        else:
            name = str(rng.choice(list(UNARY)))
            prog += [code(name), pick(), -1]
        names.append(name)
    # the result depends on every input, as in the groups the fusion pass
    # makes (the output shape is the broadcast of all inputs)
    deps = [{j} for j in range(n_in)]
    for k in range(len(names)):
        deps.append(set().union(*(deps[r] for r in prog[3 * k + 1:3 * k + 3] if r >= 0)))
    for j in range(n_in):
        if j not in deps[-1]:
            prog += [code("add"), n_in + len(names) - 1, j]
            names.append("add")
    return prog, names


def op_by_op(inputs, prog, names):
    regs = list(inputs)
    for k, name in enumerate(names):
        a, b = prog[3 * k + 1], prog[3 * k + 2]
        regs.append(BINARY[name](regs[a], regs[b]) if name in BINARY else UNARY[name](regs[a]))
    return regs[-1]


TOL = {"float64": 1e-9, "float32": 2e-4, "bfloat16": 3e-2, "float16": 5e-3}


def assert_close(got, want, dtype):
    got = got.cast("float64").numpy()
    want = want.cast("float64").numpy()
    assert got.shape == want.shape
    both_big = (~np.isfinite(got) | (np.abs(got) > 1e15)) & (~np.isfinite(want) | (np.abs(want) > 1e15))
    same_nan = np.isnan(got) == np.isnan(want)
    tol = TOL[dtype]
    close = np.abs(got - want) <= tol * (1 + np.abs(want))
    ok = both_big | (same_nan & close)
    assert ok.all(), f"{dtype}: max error {np.nanmax(np.abs(got - want)[~ok])} at {np.argwhere(~ok)[:3].tolist()}"


HALF = ("bfloat16", "float16")


def random_group(rng, i):
    """A random dtype, inputs and program; the reference's inputs (float32
    for the 16-bit dtypes, whose fused kernels round once at the end)."""
    dtype = str(rng.choice(["float32", "float64", "bfloat16", "float16"], p=[0.5, 0.2, 0.15, 0.15]))
    inputs = random_inputs(rng, dtype, big=(i == 0))
    prog, names = random_program(rng, len(inputs))
    ref_in = [t.cast("float32") for t in inputs] if dtype in HALF else inputs
    return dtype, inputs, prog, names, ref_in


@pytest.mark.parametrize("seed", range(20))
def test_random_fusion_groups_match_op_by_op(seed):
    """25 random programs per seed, 500 in all: the generated kernel against
    the ops run one by one (in float32 for the 16-bit dtypes, whose fused
    kernels round once at the end)."""
    rng = np.random.default_rng(1000 + seed)
    before = oar.compiler.stats()
    for i in range(25):
        dtype, inputs, prog, names, ref_in = random_group(rng, i)
        got = _C.fused_elementwise(inputs, prog)
        want = op_by_op(ref_in, prog, names)
        want = want.cast(dtype) if dtype in HALF else want
        assert str(got.dtype).endswith(dtype)
        assert_close(got, want, dtype)
    after = oar.compiler.stats()
    assert after["failures"] == before["failures"], "every group must run as a generated kernel"
    assert after["compiled"] + after["disk_hits"] > before["compiled"] + before["disk_hits"]


REDUCTIONS = {0: ("sum", oar.sum), 1: ("mean", oar.mean), 2: ("amax", oar.amax), 3: ("amin", oar.amin)}


@pytest.mark.parametrize("seed", range(10))
def test_random_reduction_groups_match_op_by_op(seed):
    """25 random programs per seed, each reduced (sum, mean, amax or amin)
    over random axes of its broadcast shape, kept or not: the generated
    kernel (inner and outer reductions) against the program run op by op and
    then the reduction op."""
    rng = np.random.default_rng(2000 + seed)
    before = oar.compiler.stats()
    for i in range(25):
        dtype, inputs, prog, names, ref_in = random_group(rng, i)
        rank = max(t.ndim for t in inputs)
        axes = sorted(int(a) for a in rng.choice(rank, size=int(rng.integers(1, rank + 1)), replace=False)) \
            if rank else []
        kind, keep = int(rng.integers(0, 4)), bool(rng.random() < 0.5)
        got = _C.fused_reduce(inputs, prog, kind, axes, keep)
        values = op_by_op(ref_in, prog, names)
        name, reduce = REDUCTIONS[kind]
        want = reduce(values, axis=axes, keepdim=keep)
        want = want.cast(dtype) if dtype in HALF else want
        assert str(got.dtype).endswith(dtype)
        g, w = got.cast("float64").numpy(), want.cast("float64").numpy()
        assert g.shape == w.shape, (name, axes, keep)
        # a sum's rounding scales with the sum of the magnitudes it adds
        scale = 1 + (np.nan_to_num(oar.abs(values).cast("float64").sum(axis=axes, keepdim=keep).numpy(),
                                    posinf=0) if name in ("sum", "mean") else np.abs(np.nan_to_num(w)))
        if name == "mean":
            scale = scale / max(1, int(np.prod([values.shape[a] for a in axes])))
        both_big = (~np.isfinite(g) | (np.abs(g) > 1e15)) & (~np.isfinite(w) | (np.abs(w) > 1e15))
        ok = both_big | ((np.isnan(g) == np.isnan(w)) & (np.abs(g - w) <= TOL[dtype] * (1 + scale)))
        assert ok.all(), f"{dtype} {name} axes={axes} keepdim={keep}: {g[~ok][:3]} vs {w[~ok][:3]}"
    after = oar.compiler.stats()
    assert after["failures"] == before["failures"]


def test_to_static_fuses_reductions_and_their_gradients():
    def f(a, b):
        d = a - b
        return (d * d).mean() + oar.tanh(a).sum(axis=0).amax()

    rng = np.random.default_rng(8)
    a = oar.to_tensor(rng.standard_normal((40, 24)).astype(np.float64))
    b = oar.to_tensor(rng.standard_normal((40, 24)).astype(np.float64))
    a.stop_gradient = False
    static = oar.jit.to_static(f, full_graph=True)
    got = static(a, b)
    assert "fused_reduce" in str(static.concrete_program)
    an, bn = a.numpy(), b.numpy()
    want = ((an - bn) ** 2).mean() + np.tanh(an).sum(axis=0).max()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    (g,) = oar.grad(static(a, b), [a])
    col = np.tanh(an).sum(axis=0).argmax()
    want_g = 2 * (an - bn) / an.size
    want_g[:, col] += 1 - np.tanh(an[:, col]) ** 2
    np.testing.assert_allclose(g.numpy(), want_g, rtol=1e-10, atol=1e-12)


def test_one_kernel_serves_every_batch_size():
    """Sizes are arguments (Note [symbolic dims]): a new batch size with the
    same access pattern loads nothing new."""
    prog = [code("add"), 0, 1, code("tanh"), 2, -1]
    rng = np.random.default_rng(0)
    b = oar.to_tensor(rng.standard_normal(128).astype(np.float32))
    _C.fused_elementwise([oar.to_tensor(rng.standard_normal((3, 128)).astype(np.float32)), b], prog)
    loaded = oar.compiler.stats()
    for batch in (1, 7, 50, 333):
        x = rng.standard_normal((batch, 128)).astype(np.float32)
        got = _C.fused_elementwise([oar.to_tensor(x), b], prog).numpy()
        np.testing.assert_allclose(got, np.tanh(x + b.numpy()), rtol=1e-5, atol=1e-6)
    now = oar.compiler.stats()
    assert (now["compiled"], now["disk_hits"]) == (loaded["compiled"], loaded["disk_hits"])


# ---------------------------------------------------------------- the cache, in fresh processes

SCRIPT = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import oar
    from oar import _C
    add, mul, exp = (_C._fused_elementwise_code(n) for n in ("add", "multiply", "exp"))
    x = oar.to_tensor(np.linspace(-1, 1, 4096, dtype=np.float32).reshape(64, 64))
    errors = []
    for k in range(int(sys.argv[1])):
        # k distinct programs: x * exp(x + x) ... with k + 1 multiplies
        prog = [add, 0, 0, exp, 1, -1] + sum(([mul, 2 + j, 0] for j in range(k + 1)), [])
        t = time.perf_counter()
        y = _C.fused_elementwise([x], prog).numpy()
        seconds = time.perf_counter() - t
        xn = x.numpy().astype(np.float64)
        errors.append(float(np.abs(y - np.exp(2 * xn) * xn ** (k + 1)).max()))
    print(json.dumps({"stats": oar.compiler.stats(), "max_error": max(errors), "last_seconds": seconds}))
""")


def run_script(env, n=1, cache=None):
    full = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), **env)
    if cache is not None:
        full["OAR_COMPILER_CACHE"] = str(cache)
    return subprocess.run([sys.executable, "-c", SCRIPT, str(n)], env=full, capture_output=True, text=True,
                          timeout=300)


def result(proc):
    import json
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_warm_cache_loads_without_compiling(tmp_path):
    cold = result(run_script({}, 2, tmp_path))
    assert cold["stats"]["compiled"] == 2 and cold["max_error"] < 1e-4
    warm = result(run_script({}, 2, tmp_path))
    assert warm["stats"]["compiled"] == 0 and warm["stats"]["disk_hits"] == 2, warm
    assert warm["stats"]["load_seconds"] < 0.1  # milliseconds per library
    assert warm["max_error"] < 1e-4
    libs = sorted(p.name for p in tmp_path.iterdir())
    assert len([p for p in libs if p.endswith(".so")]) == 2 and len([p for p in libs if p.endswith(".cpp")]) == 2


def test_in_process_reset_reads_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OAR_COMPILER_CACHE", str(tmp_path))
    oar.compiler.reset_memory_cache()
    try:
        prog = [code("sin"), 0, -1, code("multiply"), 1, 0, code("cos"), 2, -1]
        x = oar.to_tensor(np.linspace(0, 3, 1000, dtype=np.float32))
        want = np.cos(np.sin(x.numpy()) * x.numpy())
        s0 = oar.compiler.stats()
        np.testing.assert_allclose(_C.fused_elementwise([x], prog).numpy(), want, rtol=1e-5, atol=1e-6)
        s1 = oar.compiler.stats()
        oar.compiler.reset_memory_cache()
        np.testing.assert_allclose(_C.fused_elementwise([x], prog).numpy(), want, rtol=1e-5, atol=1e-6)
        s2 = oar.compiler.stats()
        assert s1["compiled"] == s0["compiled"] + 1
        assert s2["compiled"] == s1["compiled"] and s2["disk_hits"] == s1["disk_hits"] + 1
    finally:
        monkeypatch.delenv("OAR_COMPILER_CACHE")
        oar.compiler.reset_memory_cache()


def test_a_new_compiler_invalidates_the_cache(tmp_path):
    """The compiler's identity is part of the key: a different compiler
    builds its own libraries instead of loading another's."""
    cache = tmp_path / "cache"
    wrapper = tmp_path / "cxx"
    wrapper.write_text("#!/bin/sh\nexec c++ \"$@\"\n")
    wrapper.chmod(0o755)
    first = result(run_script({}, 1, cache))
    second = result(run_script({"OAR_CXX": str(wrapper)}, 1, cache))
    assert first["stats"]["compiled"] == 1 and second["stats"]["compiled"] == 1
    assert len(list(cache.glob("*.so"))) == 2


def test_a_corrupt_library_is_rebuilt(tmp_path):
    result(run_script({}, 1, tmp_path))
    (lib,) = tmp_path.glob("*.so")
    lib.write_bytes(b"not a shared library")
    again = result(run_script({}, 1, tmp_path))
    assert again["stats"]["compiled"] == 1 and again["max_error"] < 1e-4
    assert lib.read_bytes()[:4] == b"\x7fELF"


def test_concurrent_processes_share_the_cache(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), OAR_COMPILER_CACHE=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT, "3"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "oar compiler" not in err
        r = __import__("json").loads(out.strip().splitlines()[-1])
        assert r["max_error"] < 1e-4 and r["stats"]["failures"] == 0
    names = [p.name for p in tmp_path.iterdir()]
    assert len([n for n in names if n.endswith(".so")]) == 3
    assert all(n.count(".") == 1 for n in names), f"left-over temporary files: {names}"


def test_missing_compiler_falls_back_with_one_warning(tmp_path):
    proc = run_script({"OAR_CXX": str(tmp_path / "no-such-compiler")}, 3, tmp_path / "cache")
    r = result(proc)
    assert r["max_error"] < 1e-4  # the interpreter ran the groups
    assert r["stats"]["compiled"] == 0 and r["stats"]["failures"] == 3
    assert proc.stderr.count("oar compiler: no C++ compiler found") == 1, proc.stderr


def test_failing_compiler_falls_back(tmp_path):
    bad = tmp_path / "cxx"
    bad.write_text("#!/bin/sh\necho 'internal error' >&2\nexit 1\n")
    bad.chmod(0o755)
    proc = run_script({"OAR_CXX": str(bad)}, 2, tmp_path / "cache")
    r = result(proc)
    assert r["max_error"] < 1e-4 and r["stats"]["failures"] == 2 and r["stats"]["compiled"] == 0
    assert "compiling a generated kernel failed" in proc.stderr
    (log, *_) = (tmp_path / "cache").glob("*.log")
    assert "internal error" in log.read_text()


def test_oar_compiler_0_turns_it_off(tmp_path):
    r = result(run_script({"OAR_COMPILER": "0"}, 2, tmp_path))
    assert r["max_error"] < 1e-4
    assert r["stats"]["compiled"] == 0 and r["stats"]["failures"] == 0 and r["stats"]["disk_hits"] == 0
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_set_enabled_checks_its_argument():
    with pytest.raises(TypeError, match=r"^\[oar.compiler.set_enabled\] flag must be a bool"):
        oar.compiler.set_enabled(1)


# ---------------------------------------------------------------- in captured programs

def test_to_static_runs_generated_kernels_and_matches_eager():
    def f(x, b):
        y = oar.nn.functional.gelu(x * 0.5 + b)
        return oar.tanh(y) * x - oar.exp(-x * x)

    rng = np.random.default_rng(3)
    x = oar.to_tensor(rng.standard_normal((8, 96)).astype(np.float32))
    b = oar.to_tensor(rng.standard_normal(96).astype(np.float32))
    want = f(x, b).numpy()
    before = oar.compiler.stats()
    got = oar.jit.to_static(f)(x, b).numpy()
    after = oar.compiler.stats()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    used = sum(after[k] - before[k] for k in ("compiled", "disk_hits", "memory_hits"))
    assert used >= 1


def test_static_training_step_matches_eager_with_generated_kernels():
    """Forward and the captured backward both hold fused groups."""
    def make():
        oar.seed(5)
        return oar.nn.Sequential(oar.nn.Linear(16, 32), oar.nn.GELU(), oar.nn.Linear(32, 1))

    rng = np.random.default_rng(4)
    x = oar.to_tensor(rng.standard_normal((20, 16)).astype(np.float32))
    t = oar.to_tensor(rng.standard_normal((20, 1)).astype(np.float32))

    def loss_fn(net, x, t):
        d = net(x) - t
        return (oar.tanh(d) * d + d * d * 0.5).mean()

    eager, static = make(), make()
    loss_e = loss_fn(eager, x, t)
    loss_e.backward()
    step = oar.jit.to_static(lambda x, t: loss_fn(static, x, t))
    loss_s = step(x, t)
    loss_s.backward()
    np.testing.assert_allclose(loss_s.numpy(), loss_e.numpy(), rtol=1e-5)
    for pe, ps in zip(eager.parameters(), static.parameters()):
        np.testing.assert_allclose(ps.grad.numpy(), pe.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_backend_cinn_is_accepted_and_build_strategy_turns_fusion_off():
    def f(x):
        return oar.tanh(x * x + 1.0) * x

    x = oar.to_tensor(np.linspace(-2, 2, 300, dtype=np.float32).reshape(3, 100))
    want = np.tanh(x.numpy() ** 2 + 1) * x.numpy()
    np.testing.assert_allclose(oar.jit.to_static(f, backend="CINN")(x).numpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"^\[oar.jit.to_static\] backend must be None or 'CINN'"):
        oar.jit.to_static(f, backend="tvm")
    off = oar.static.BuildStrategy()
    off.build_cinn_pass = False  # Paddle's switch: the fused groups, and so the compiler, off
    g = oar.jit.to_static(f, build_strategy=off)
    before = oar.compiler.stats()
    np.testing.assert_allclose(g(x).numpy(), want, rtol=1e-5, atol=1e-6)
    after = oar.compiler.stats()
    assert all(after[k] == before[k] for k in ("compiled", "disk_hits", "memory_hits", "failures"))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_a_full_reduction_splits_over_threads(dtype):
    """One output over 512 x 1024 elements: slices reduced on each thread and
    combined (sum, mean, amax, amin; a NaN still wins max and min)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((512, 1024))
    t = oar.to_tensor(x).cast(dtype)
    xr = t.cast("float64").numpy()
    prog = [code("multiply"), 0, 0, code("subtract"), 1, 0]  # x * x - x
    f = xr * xr - xr
    tol = {"float32": 1e-5, "float64": 1e-12, "bfloat16": 1e-2}[dtype]
    for kind, ref in enumerate((np.sum, np.mean, np.max, np.min)):
        got = _C.fused_reduce([t], prog, kind, [0, 1], False).cast("float64").numpy()
        want = ref(f)
        assert abs(got - want) <= tol * (1 + np.abs(f).sum() / (f.size if kind == 1 else 1) if kind < 2 else 1 + abs(want))
    xn = xr.copy()
    xn[300, 7] = np.nan
    tn = oar.to_tensor(xn).cast(dtype)
    for kind in (2, 3):
        assert np.isnan(_C.fused_reduce([tn], prog, kind, [0, 1], False).cast("float64").numpy())


@pytest.mark.skipif(not _C._compiler_nvrtc_available(), reason="NVRTC (the CUDA toolkit) is not installed")
def test_generated_cuda_kernels_compile_with_nvrtc():
    """The CUDA generator's sources for random programs of every dtype (every
    code used at least once) compile to PTX with NVRTC; no GPU needed."""
    rng = np.random.default_rng(77)
    seen = set()
    for i in range(40):
        n_in = int(rng.integers(1, 4))
        prog, names = random_program(rng, n_in)
        if i == 0:  # every code once, chained
            prog, names = [], []
            for k, name in enumerate(list(BINARY) + list(UNARY)):
                prog += [code(name), n_in + k - 1 if k else 0, 0 if name in BINARY else -1]
                names.append(name)
        seen.update(names)
        dtype = ["float32", "float64", "bfloat16", "float16"][i % 4]
        ok, log, ptx = _C._compiler_nvrtc_compile(_C._compiler_cuda_source(dtype, prog, n_in))
        assert ok, log
        assert ".entry oar_kernel" in ptx
    assert seen == set(BINARY) | set(UNARY)
    ok, log, _ = _C._compiler_nvrtc_compile("extern \"C\" __global__ void k() { undefined_name(); }")
    assert not ok and "undefined_name" in log


def test_a_cache_others_can_write_to_is_not_used(tmp_path):
    """A library planted in a shared directory would run in the process: a
    cache directory writable by others is refused, with one warning."""
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    proc = run_script({}, 2, cache)
    r = result(proc)
    assert r["max_error"] < 1e-4 and r["stats"]["compiled"] == 0 and r["stats"]["failures"] == 2
    assert proc.stderr.count("is not a directory of this user that only it can write to") == 1, proc.stderr
    assert not any(cache.iterdir())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_generated_kernels_round_as_eager_mode(dtype):
    """Over dense inputs, a generated kernel gives eager mode's results to the
    bit (no FMA contraction; the transcendental functions are eager's own
    vector math), pow aside (libm's vector form)."""
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(60):
        xs = [oar.to_tensor(rng.uniform(-2, 2, (37, 64))).cast(dtype) for _ in range(int(rng.integers(1, 4)))]
        prog, names = random_program(rng, len(xs))
        if "pow" in names:
            continue
        got = _C.fused_elementwise(xs, prog).numpy()
        want = op_by_op(xs, prog, names).numpy()
        assert np.array_equal(got, want, equal_nan=True), names
        checked += 1
    assert checked >= 30


@pytest.mark.parametrize("name", ["shufflenet_v2_x0_25", "squeezenet1_1", "mobilenet_v3_small", "densenet121",
                                  "bert"])
def test_zoo_models_train_under_to_static_as_in_eager_mode(name):
    """Three training steps of a zoo model (batch norm, dropout, hardswish,
    concatenations; attention, layer norm, gelu) eagerly and under to_static
    with generated kernels: the same losses."""
    import copy

    import oar.vision.models as models
    from oar.models import BertConfig, BertForSequenceClassification

    oar.seed(0)
    rng = np.random.default_rng(0)
    y = oar.to_tensor(np.array([1, 3, 0, 2]))
    if name == "bert":
        cfg = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64)
        base = BertForSequenceClassification(cfg, num_classes=4)
        x = oar.to_tensor(rng.integers(1, 64, (4, 12)))
        loss_of = lambda fwd: fwd(x, labels=y)[0]
    else:
        base = getattr(models, name)(num_classes=10)
        x = oar.to_tensor(rng.standard_normal((4, 3, 64, 64)).astype(np.float32))
        loss_of = lambda fwd: oar.nn.functional.cross_entropy(fwd(x), y)
    base.train()

    def losses(static):
        net = copy.deepcopy(base)
        oar.seed(123)  # the same dropout masks in both runs
        fwd = oar.jit.to_static(net) if static else net
        opt = oar.optimizer.Momentum(learning_rate=1e-3, parameters=net.parameters())
        out = []
        for _ in range(3):
            loss = loss_of(fwd)
            loss.backward()
            opt.step()
            opt.clear_grad()
            out.append(float(loss))
        return np.array(out)

    eager = losses(False)
    runs = oar.compiler.stats()["runs"]
    static = losses(True)
    assert oar.compiler.stats()["runs"] > runs
    np.testing.assert_allclose(static, eager, rtol=1e-5)
