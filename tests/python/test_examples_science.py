"""The scientific-computing programs in examples/science/: their short forms end to end,
and the pieces they are built from against independent references (NumPy, eager runs)."""
import importlib.util
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import oar
from dist_util import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCIENCE = os.path.join(ROOT, "examples", "science")


def _run(script, *args):
    return subprocess.run([sys.executable, os.path.join(SCIENCE, script), *args], cwd=ROOT, env=child_env(),
                          capture_output=True, text=True, timeout=600)


def _load(script):
    return _load_path(os.path.join(SCIENCE, script))


def _load_path(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _errors(stdout):
    m = re.search(r"relative L2 error: initial (\S+), after Adam (\S+), final (\S+)", stdout)
    assert m, stdout[-3000:]
    return tuple(float(v) for v in m.groups())


# ---------------------------------------------------------------- pinn_poisson.py

@pytest.fixture(scope="module")
def pinn():
    return _load("pinn_poisson.py")


def test_pinn_quick_run_trains_the_same_eager_and_captured():
    runs = {}
    for mode in ("to_static", "eager"):
        r = _run("pinn_poisson.py", "--quick", *(["--eager"] if mode == "eager" else []))
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        assert ("loss eager" in r.stdout) == (mode == "eager")
        initial, after_adam, final = runs[mode] = _errors(r.stdout)
        # An untrained net is off by about 100%; a few hundred Adam steps and L-BFGS iterations
        # must cut that at least tenfold (a wrong Laplacian or a broken optimizer does not).
        assert final <= initial / 10 and final < 0.1, (mode, runs[mode])
        assert after_adam < initial
    # The captured loss is the eager one: the same start and the same Adam phase (to rounding);
    # L-BFGS's line searches may amplify rounding differences, hence the looser final bound.
    (i_s, a_s, f_s), (i_e, a_e, f_e) = runs["to_static"], runs["eager"]
    assert i_s == pytest.approx(i_e, rel=1e-6) and a_s == pytest.approx(a_e, rel=1e-2)
    assert f_s == pytest.approx(f_e, rel=0.25)


def _numpy_loss(net, inner, f, edge, boundary_weight):
    """The PINN loss in NumPy (float64): the network's forward pass from its weights, and
    the Laplacian by central differences (error O(h^2), about 1e-7 here)."""
    weights = [(p.numpy(), q.numpy()) for p, q in zip(net.parameters()[::2], net.parameters()[1::2])]

    def u(xy):
        h = xy
        for i, (w, b) in enumerate(weights):
            h = h @ w + b
            if i < len(weights) - 1:
                h = np.tanh(h)
        return h

    step = 1e-3
    laplacian = sum((u(inner + step * e) - 2 * u(inner) + u(inner - step * e)) / step ** 2
                    for e in (np.array([1.0, 0.0]), np.array([0.0, 1.0])))
    residual = laplacian + f
    return float((residual ** 2).mean() + boundary_weight * (u(edge) ** 2).mean())


def _net_and_points(pinn, width=8, depth=2):
    oar.seed(3)
    oar.set_default_dtype("float64")
    try:
        net = pinn.make_net(width, depth)
    finally:
        oar.set_default_dtype("float32")
    inner, edge = pinn.collocation_points(50, 16, seed=1, dtype="float64")
    return net, inner, pinn.source(inner), edge


def _loss(pinn, net, inner, f, edge, capture):
    fn = pinn.make_loss(net)
    if capture:
        fn = oar.jit.to_static(fn, full_graph=True)
    x = oar.to_tensor(inner[:, :1], stop_gradient=False)
    y = oar.to_tensor(inner[:, 1:], stop_gradient=False)
    return fn(x, y, oar.to_tensor(f), oar.to_tensor(edge))


def test_pinn_loss_matches_numpy_finite_differences(pinn):
    net, inner, f, edge = _net_and_points(pinn)
    got = float(_loss(pinn, net, inner, f, edge, capture=False))
    want = _numpy_loss(net, inner, f, edge, pinn.BOUNDARY_WEIGHT)
    assert got == pytest.approx(want, rel=1e-5)


def test_pinn_loss_and_weight_gradients_captured_equal_eager(pinn):
    net, inner, f, edge = _net_and_points(pinn)
    results = []
    for capture in (False, True):
        net.clear_gradients()
        loss = _loss(pinn, net, inner, f, edge, capture)
        loss.backward()
        results.append((float(loss), [p.grad.numpy().copy() for p in net.parameters()]))
    (loss_e, grads_e), (loss_s, grads_s) = results
    assert loss_s == pytest.approx(loss_e, rel=1e-12)
    assert any(np.abs(g).max() > 1e-3 for g in grads_e)
    for g_s, g_e in zip(grads_s, grads_e):
        np.testing.assert_allclose(g_s, g_e, rtol=1e-9, atol=1e-12)


def test_pinn_problem_definition(pinn):
    inner, edge = pinn.collocation_points(100, 40)
    assert inner.shape == (100, 2) and edge.shape == (40, 2) and inner.dtype == np.float32
    assert ((inner > 0) & (inner < 1)).all()
    # Every boundary point lies on a side of the square, and all four sides are covered.
    on_side = np.isclose(edge, 0) | np.isclose(edge, 1)
    assert on_side.any(axis=1).all()
    assert {(s, v) for s in (0, 1) for v in (0, 1) if np.isclose(edge[:, s], v).any()} == \
        {(0, 0), (0, 1), (1, 0), (1, 1)}
    # The source is -Laplacian of the exact solution (central differences).
    xy, h = inner.astype(np.float64), 1e-4
    lap = sum((pinn.exact_solution(xy + h * e) - 2 * pinn.exact_solution(xy) + pinn.exact_solution(xy - h * e))
              / h ** 2 for e in (np.array([1.0, 0.0]), np.array([0.0, 1.0])))
    np.testing.assert_allclose(-lap, pinn.source(xy), rtol=1e-5, atol=1e-6)


def test_pinn_rejects_bad_flags():
    r = _run("pinn_poisson.py", "--quick", "--width", "0")
    assert r.returncode == 2
    assert "--width must be positive, got 0" in r.stderr


def _load_science():
    """benchmarks/science.py as a module. It puts benchmarks/ and examples/science/ on sys.path to
    import its helpers; keep those generic module names ("common") out of the rest of the session."""
    path, modules = list(sys.path), set(sys.modules)
    try:
        return _load_path(os.path.join(ROOT, "benchmarks", "science.py"))
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            if name in ("common", "pinn_poisson"):
                del sys.modules[name]


def test_science_benchmark_pinn_cases_check_against_numpy_and_run():
    # benchmarks/science.py checks each framework's loss against its NumPy reference (the
    # Laplacian carried through the layers exactly) before timing; here for oar, quick sizes.
    science = _load_science()
    cases = list(science.SECTIONS["pinn"](oar, "oar", True))
    assert [c[0] for c in cases] == ["pinn adam step, eager", "pinn adam step, captured"]
    for _, step, _, unit in cases:
        assert unit == "ms"
        step()
    # The reference is not vacuous: other weights give another loss, and the check says so.
    cfg, weights, inner, f, edge = science._pinn_data(quick=True)
    want = science._pinn_reference_loss(weights, inner, f, edge)
    with pytest.raises(AssertionError, match="differs from the NumPy reference"):
        science._pinn_check("oar", "eager", want * (1 + 1e-3), weights, inner, f, edge)


def test_science_benchmark_function_transform_sections_check_and_run():
    # The Hessian rows are checked against finite differences of the exact NumPy gradient and the
    # per-example gradients against a NumPy forward before anything is timed.
    science = _load_science()
    for section in ("hessian", "per_sample_grads"):
        cases = list(science.SECTIONS[section](oar, "oar", True))
        assert len(cases) == 1
        cases[0][1]()
    theta, xs, ts = science._mlp_data()
    ref = science._mlp_reference_hessian(theta, xs.astype(np.float64), ts.astype(np.float64), rows=1)
    assert np.abs(ref).max() > 1e-3  # the reference is not vacuous


# ---------------------------------------------------------------- fno_burgers.py

def fb():
    return _load("fno_burgers.py")


def test_fno_solver_matches_cole_hopf():
    # phi = 1 + a exp(-4 pi^2 nu t) cos(2 pi x) solves the heat equation, so
    # u = -2 nu phi_x / phi solves Burgers' equation.
    nu, a, n = fb().NU, 0.5, 256
    x = np.arange(n) / n

    def exact(t):
        e = a * math.exp(-4 * math.pi ** 2 * nu * t)
        return 4 * math.pi * nu * e * np.sin(2 * math.pi * x) / (1 + e * np.cos(2 * math.pi * x))

    got = fb().solve_burgers(exact(0.0)[None], t_end=1.0)[0]
    np.testing.assert_allclose(got, exact(1.0), atol=1e-9)


def test_fno_spectral_layer_matches_numpy():
    oar.seed(0)
    layer = fb().SpectralConv1d(3, 4)
    x = np.random.default_rng(0).standard_normal((2, 3, 16)).astype(np.float32)
    w = layer.w_re.numpy() + 1j * layer.w_im.numpy()
    ref = np.fft.irfft(np.einsum("bix,iox->box", np.fft.rfft(x, axis=-1)[:, :, :4], w), n=16, axis=-1)
    np.testing.assert_allclose(layer(oar.to_tensor(x)).numpy(), ref, rtol=1e-4, atol=1e-5)


def test_fno_short_training_learns_the_operator():
    test, baseline, _ = fb().train(fb().QUICK, seed=0, log=lambda *a: None)
    # Untrained models and the identity map are above 0.7; the short run gets below 0.35.
    assert test < 0.35 and baseline > 1.0, (test, baseline)
