"""Scientific-computing workloads, oar against torch and paddle in the same run.

Sections (run one with `--only NAME`; all by default):

- pinn: one training step of the physics-informed network of
  examples/science/pinn_poisson.py (its full-run network 2-32-32-32-1 with
  tanh, its 2000 interior and 400 boundary points, float32): the loss with
  the Laplacian through two nested gradient calls (create_graph), its
  backward (third derivatives of the network), one Adam update, clearing the
  gradients. Every framework starts from the same weights (a NumPy draw) and
  the same points. "eager" runs the loss eagerly everywhere; "captured" runs
  it as each framework captures functions: oar.jit.to_static(full_graph=True)
  (the example's default), paddle.jit.to_static(full_graph=True),
  torch.compile (inductor). A row shows "-" where a framework cannot run it.
- hessian: the 1024 x 1024 Hessian of a 16-32-16 tanh MLP's mean squared
  error (64 examples) with respect to its 1024 weights: oar.func.hessian and
  torch.func.hessian (both forward over reverse, batched by vmap), paddle's
  paddle.autograd.hessian. Rows are checked against finite differences of the
  exact gradient in NumPy.
- fft: forward FFTs in single precision, c2c and r2c, 1-D (a power of two,
  primes, composites near 1000), batched, 2-D and 3-D: oar.fft, torch.fft,
  paddle.fft, numpy.fft and scipy.fft (workers = the thread count), each
  checked against numpy.fft in float64 first. Microseconds per transform.
- per_sample_grads: per-example gradients of a small CNN (conv 1-8-16,
  max-pooling, linear to 10 classes; 64 MNIST-sized examples) by vmap over
  grad: oar.vmap and torch.func.vmap (paddle has no vmap). Example 0's
  last-layer gradient is checked against the forward written in NumPy.

Milliseconds per step; lower is better. A section is a function
`(fw, name, quick) -> iterator of (case, fn, amount, unit)` (see
common.worker_main) registered in SECTIONS; the driver passes the chosen
sections to the workers through the environment (OAR_SCIENCE_SECTIONS).
"""
import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "science"))
import common  # noqa: E402
import pinn_poisson  # noqa: E402  (its problem definition is NumPy only)

_SECTIONS_VAR = "OAR_SCIENCE_SECTIONS"


# ---------------------------------------------------------------- pinn

def _pinn_data(quick):
    """The network weights ([in, out] matrices and biases, Xavier-uniform as Paddle's
    Linear draws them) and the points, the same for every framework."""
    cfg = pinn_poisson.QUICK if quick else pinn_poisson.FULL
    rng = np.random.default_rng(0)
    sizes = [2] + [cfg["width"]] * cfg["depth"] + [1]
    weights = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        weights.append((rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32),
                        np.zeros(fan_out, np.float32)))
    inner, edge = pinn_poisson.collocation_points(cfg["interior"], cfg["boundary"], seed=0)
    return cfg, weights, inner, pinn_poisson.source(inner).astype(np.float32), edge


def _pinn_reference_loss(weights, inner, f, edge):
    """The loss at these weights in NumPy float64, the Laplacian carried forward through the
    layers exactly (h' = s z', h'' = s z'' - 2 t s z'^2 with t = tanh z, s = 1 - t^2): every
    framework's loss must match it before it is timed, so all of them run the same math."""
    h = inner.astype(np.float64)
    dx, dy = np.zeros_like(h), np.zeros_like(h)
    dx[:, 0], dy[:, 1] = 1.0, 1.0
    dxx, dyy = np.zeros_like(h), np.zeros_like(h)
    for i, (w, b) in enumerate(weights):
        w = w.astype(np.float64)
        h, dx, dy, dxx, dyy = h @ w + b, dx @ w, dy @ w, dxx @ w, dyy @ w
        if i < len(weights) - 1:
            t = np.tanh(h)
            s = 1.0 - t * t
            h, dxx, dyy = t, s * dxx - 2.0 * t * s * dx * dx, s * dyy - 2.0 * t * s * dy * dy
            dx, dy = s * dx, s * dy
    residual = dxx + dyy + f
    u_b = edge.astype(np.float64)
    for i, (w, b) in enumerate(weights):
        u_b = u_b @ w + b
        if i < len(weights) - 1:
            u_b = np.tanh(u_b)
    return float((residual ** 2).mean() + pinn_poisson.BOUNDARY_WEIGHT * (u_b ** 2).mean())


def _pinn_check(name, mode, value, weights, inner, f, edge):
    want = _pinn_reference_loss(weights, inner, f, edge)
    if not abs(value - want) <= 1e-4 * abs(want):
        raise AssertionError(f"{name} {mode}: PINN loss {value} differs from the NumPy reference {want}")


def _pinn_paddle_like(fw, name, quick):
    """oar and paddle: the example's loss (make_loss), written once against the Paddle API."""
    cfg, weights, inner, f, edge = _pinn_data(quick)
    nn = fw.nn
    layers = []
    for i, (w, b) in enumerate(weights):
        lin = nn.Linear(*w.shape)
        lin.weight.set_value(w)
        lin.bias.set_value(b)
        layers += [lin] + ([nn.Tanh()] if i < len(weights) - 1 else [])
    net = nn.Sequential(*layers)
    x = fw.to_tensor(inner[:, :1], stop_gradient=False)
    y = fw.to_tensor(inner[:, 1:], stop_gradient=False)
    f_t, edge_t = fw.to_tensor(f), fw.to_tensor(edge)
    w_b = pinn_poisson.BOUNDARY_WEIGHT

    # The same function as pinn_poisson.make_loss, with `fw` for `oar`, so that paddle runs it too.
    def loss(x, y, f, xy_boundary):
        u = net(fw.concat([x, y], axis=1))
        u_x, u_y = fw.grad(u.sum(), [x, y], create_graph=True)
        (u_xx,) = fw.grad(u_x.sum(), x, create_graph=True)
        (u_yy,) = fw.grad(u_y.sum(), y, create_graph=True)
        residual = u_xx + u_yy + f
        u_b = net(xy_boundary)
        return (residual * residual).mean() + w_b * (u_b * u_b).mean()

    if name == "oar":  # the example's own function must be the one timed for oar
        loss = pinn_poisson.make_loss(net, w_b)
    for mode in ("eager", "captured"):
        fn = loss if mode == "eager" else fw.jit.to_static(loss, full_graph=True)
        _pinn_check(name, mode, float(fn(x, y, f_t, edge_t)), weights, inner, f, edge)
        opt = fw.optimizer.Adam(learning_rate=cfg["adam_lr"], parameters=net.parameters())

        def step(fn=fn, opt=opt):
            value = fn(x, y, f_t, edge_t)
            value.backward()
            opt.step()
            opt.clear_grad()

        yield f"pinn adam step, {mode}", step, None, "ms"


def _pinn_torch(torch, name, quick):
    cfg, weights, inner, f, edge = _pinn_data(quick)
    nn = torch.nn
    layers = []
    for i, (w, b) in enumerate(weights):
        lin = nn.Linear(*w.shape)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w.T.copy()))
            lin.bias.copy_(torch.from_numpy(b))
        layers += [lin] + ([nn.Tanh()] if i < len(weights) - 1 else [])
    net = nn.Sequential(*layers)
    x = torch.from_numpy(inner[:, :1].copy()).requires_grad_()
    y = torch.from_numpy(inner[:, 1:].copy()).requires_grad_()
    f_t, edge_t = torch.from_numpy(f), torch.from_numpy(edge)
    w_b = pinn_poisson.BOUNDARY_WEIGHT

    def loss(x, y, f, xy_boundary):
        u = net(torch.cat([x, y], dim=1))
        u_x, u_y = torch.autograd.grad(u.sum(), [x, y], create_graph=True)
        (u_xx,) = torch.autograd.grad(u_x.sum(), x, create_graph=True)
        (u_yy,) = torch.autograd.grad(u_y.sum(), y, create_graph=True)
        residual = u_xx + u_yy + f
        u_b = net(xy_boundary)
        return (residual * residual).mean() + w_b * (u_b * u_b).mean()

    # torch.compile cannot capture autograd.grad(create_graph=True) (it fails: "The differentiated
    # Tensor ... appears to not have been used in the graph"); its way to a captured Laplacian is
    # torch.func, the Hessian of the one-point network mapped over the points.
    from torch.func import hessian, vmap

    xy_t = torch.cat([x, y], dim=1).detach()

    def loss_func(xy, f, xy_boundary):
        h = vmap(hessian(lambda p: net(p.unsqueeze(0)).squeeze()))(xy)
        residual = (h[:, 0, 0] + h[:, 1, 1]).unsqueeze(1) + f
        u_b = net(xy_boundary)
        return (residual * residual).mean() + w_b * (u_b * u_b).mean()

    compiled = torch.compile(loss_func)
    variants = {"eager": lambda: loss(x, y, f_t, edge_t), "captured": lambda: compiled(xy_t, f_t, edge_t)}
    for mode, fn in variants.items():
        _pinn_check(name, mode, float(fn()), weights, inner, f, edge)
        opt = torch.optim.Adam(net.parameters(), lr=cfg["adam_lr"])

        def step(fn=fn, opt=opt):
            value = fn()
            value.backward()
            opt.step()
            opt.zero_grad()

        yield f"pinn adam step, {mode}", step, None, "ms"


def pinn(fw, name, quick):
    if name == "torch":
        yield from _pinn_torch(fw, name, quick)
    else:
        yield from _pinn_paddle_like(fw, name, quick)


# ---------------------------------------------------------------- function transforms

def _mlp_data():
    """A 16-32-16 tanh network without biases (1024 parameters) and 64 examples."""
    rng = np.random.default_rng(1)
    theta = (rng.standard_normal(1024) * 0.2).astype(np.float32)
    xs = rng.standard_normal((64, 16)).astype(np.float32)
    ts = rng.standard_normal((64, 16)).astype(np.float32)
    return theta, xs, ts


def _mlp_reference_hessian(theta, xs, ts, rows=4):
    """A few rows of the Hessian by central differences of the exact gradient (NumPy float64)."""
    def gradient(t):
        a, b = t[:512].reshape(16, 32), t[512:].reshape(32, 16)
        h = np.tanh(xs @ a)
        r = h @ b - ts
        g_out = 2.0 * r / r.size
        gb = h.T @ g_out
        ga = xs.T @ ((g_out @ b.T) * (1 - h * h))
        return np.concatenate([ga.ravel(), gb.ravel()])
    t0 = theta.astype(np.float64)
    out = []
    for i in range(rows):
        e = np.zeros_like(t0)
        e[i * 257] = 1e-5
        out.append((gradient(t0 + e) - gradient(t0 - e)) / 2e-5)
    return np.array(out)


def hessian(fw, name, quick):
    """The Hessian of an MLP loss with respect to its 1024 parameters (section `hessian`)."""
    theta_np, xs_np, ts_np = _mlp_data()
    ref = _mlp_reference_hessian(theta_np, xs_np.astype(np.float64), ts_np.astype(np.float64))
    rows = [i * 257 for i in range(len(ref))]
    if name == "torch":
        import torch.func as tf
        t = fw.from_numpy
        xs, ts, theta = t(xs_np), t(ts_np), t(theta_np)

        def loss(th):
            a, b = th[:512].reshape(16, 32), th[512:].reshape(32, 16)
            return ((fw.tanh(xs @ a) @ b - ts) ** 2).mean()

        variants = {"torch.func.hessian": lambda: tf.hessian(loss)(theta)}
    else:
        xs, ts, theta = fw.to_tensor(xs_np), fw.to_tensor(ts_np), fw.to_tensor(theta_np)

        def loss(th):
            a, b = th[:512].reshape([16, 32]), th[512:].reshape([32, 16])
            return ((fw.tanh(xs @ a) @ b - ts) ** 2).mean()

        if name == "oar":
            variants = {"oar.func.hessian": lambda: fw.func.hessian(loss)(theta)}
        else:
            def paddle_hessian():
                th = theta.detach()
                th.stop_gradient = False
                return fw.autograd.hessian(loss(th), th)[:]
            variants = {"paddle.autograd.hessian": paddle_hessian}
    for label, fn in variants.items():
        got = np.asarray(fn().numpy())[rows]
        if not np.allclose(got, ref, rtol=1e-2, atol=1e-4):
            raise AssertionError(f"{name} {label}: Hessian rows differ from the NumPy reference")
        yield "hessian 1k-param mlp", fn, None, "ms"


def _cnn_data(batch):
    rng = np.random.default_rng(2)
    shapes = {"c1.weight": (8, 1, 3, 3), "c1.bias": (8,), "c2.weight": (16, 8, 3, 3), "c2.bias": (16,),
              "fc.weight": (400, 10), "fc.bias": (10,)}
    params = {k: (rng.standard_normal(s) * 0.2).astype(np.float32) for k, s in shapes.items()}
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    return params, x, y


def per_sample_grads(fw, name, quick):
    """Per-example gradients of a small CNN's loss (batch 64 of 28x28), vmap over grad."""
    batch = 16 if quick else 64
    params_np, x_np, y_np = _cnn_data(batch)
    if name == "paddle":
        return  # paddle has no vmap
    if name == "torch":
        import torch.func as tf
        F = fw.nn.functional
        params = {k: fw.from_numpy(v.T.copy() if k == "fc.weight" else v) for k, v in params_np.items()}
        x, y = fw.from_numpy(x_np), fw.from_numpy(y_np)

        def loss(p, xi, yi):
            h = F.max_pool2d(F.relu(F.conv2d(xi.unsqueeze(0), p["c1.weight"], p["c1.bias"])), 2)
            h = F.max_pool2d(F.relu(F.conv2d(h, p["c2.weight"], p["c2.bias"])), 2)
            out = F.linear(h.flatten(1), p["fc.weight"], p["fc.bias"])
            return F.cross_entropy(out, yi.unsqueeze(0))

        fn = lambda: tf.vmap(tf.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        got = fn()["fc.weight"].numpy().transpose(0, 2, 1)
    else:
        F = fw.nn.functional
        params = {k: fw.to_tensor(v) for k, v in params_np.items()}
        x, y = fw.to_tensor(x_np), fw.to_tensor(y_np)

        def loss(p, xi, yi):
            h = F.max_pool2d(F.relu(F.conv2d(xi.unsqueeze(0), p["c1.weight"], p["c1.bias"])), 2)
            h = F.max_pool2d(F.relu(F.conv2d(h, p["c2.weight"], p["c2.bias"])), 2)
            out = F.linear(h.flatten(1), p["fc.weight"], p["fc.bias"])
            return F.cross_entropy(out, yi.unsqueeze(0))

        fn = lambda: fw.vmap(fw.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        got = fn()["fc.weight"].numpy()
    # Example 0's gradient of the last layer against the forward written in NumPy.
    ref = _cnn_fc_grad_numpy(params_np, x_np[:1], y_np[:1])
    if not np.allclose(got[0], ref, rtol=1e-3, atol=1e-5):
        raise AssertionError(f"{name}: per-example gradient differs from the NumPy reference")
    yield f"per-example grads cnn batch {batch}", fn, None, "ms"


def _cnn_fc_grad_numpy(p, x, y):
    """d loss / d fc.weight for one example, the forward written in NumPy."""
    def conv(inp, w, b):
        n, c, hh, ww = inp.shape
        o, _, k, _ = w.shape
        out = np.zeros((n, o, hh - k + 1, ww - k + 1))
        for i in range(k):
            for j in range(k):
                out += np.einsum("nchw,oc->nohw", inp[:, :, i:i + hh - k + 1, j:j + ww - k + 1], w[:, :, i, j])
        return out + b[None, :, None, None]

    def pool(a):
        n, c, hh, ww = a.shape
        return a[:, :, :hh // 2 * 2, :ww // 2 * 2].reshape(n, c, hh // 2, 2, ww // 2, 2).max(axis=(3, 5))

    h = pool(np.maximum(conv(x.astype(np.float64), p["c1.weight"], p["c1.bias"]), 0))
    h = pool(np.maximum(conv(h, p["c2.weight"], p["c2.bias"]), 0)).reshape(1, -1)
    logits = h @ p["fc.weight"] + p["fc.bias"]
    s = np.exp(logits - logits.max())
    s /= s.sum()
    s[0, y[0]] -= 1.0
    return h.T @ s


# ---------------------------------------------------------------- fft

FFT_CASES = [  # (case, shape, axes, kind)
    ("fft 1-D 4096 c2c", (4096,), (0,), "c2c"),
    ("fft 1-D 4099 (prime) c2c", (4099,), (0,), "c2c"),
    ("fft 1-D 1000 r2c", (1000,), (0,), "r2c"),
    ("fft 1-D 1009 (prime) r2c", (1009,), (0,), "r2c"),
    ("fft batched 256 x 1024 r2c", (256, 1024), (1,), "r2c"),
    ("fft batched 64 x 1000 c2c", (64, 1000), (1,), "c2c"),
    ("fft 2-D 512 x 512 c2c", (512, 512), (0, 1), "c2c"),
    ("fft 2-D 500 x 500 r2c", (500, 500), (0, 1), "r2c"),
    ("fft 3-D 64^3 r2c", (64, 64, 64), (0, 1, 2), "r2c"),
]


def fft(fw, name, quick):
    """Forward FFTs in single precision (complex64 in for c2c, float32 for r2c), checked against numpy.fft."""
    threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    rng = np.random.default_rng(3)
    for case, shape, axes, kind in FFT_CASES:
        if quick and np.prod(shape) > 300000:
            continue
        a = rng.standard_normal(shape).astype(np.float32)
        if kind == "c2c":
            a = (a + 1j * rng.standard_normal(shape).astype(np.float32)).astype(np.complex64)
        ref = np.fft.fftn(a.astype(np.complex128), axes=axes) if kind == "c2c" else \
            np.fft.rfftn(a.astype(np.float64), axes=axes)
        f = fw.fft.fftn if kind == "c2c" else fw.fft.rfftn  # every library has this pair
        # (each run binds its own arrays and axes: the cases are all collected before any is timed)
        if name == "numpy":
            run = lambda f=f, x=a, axes=axes: f(x, axes=axes)
        elif name == "scipy":
            run = lambda f=f, x=a, axes=axes: f(x, axes=axes, workers=threads)
        elif name == "torch":
            run = lambda f=f, x=fw.from_numpy(a), axes=axes: f(x, dim=axes)
        else:  # oar and paddle share the API
            run = lambda f=f, x=fw.to_tensor(a), axes=axes: f(x, axes=axes)
        got = np.asarray(run()) if name in ("numpy", "scipy") else run().numpy()
        if not np.allclose(got, ref, rtol=1e-3, atol=1e-3 * np.abs(ref).max()):
            raise AssertionError(f"{name} {case}: differs from numpy.fft in float64")
        yield case, run, None, "us"


# ---------------------------------------------------------------- driver

SECTIONS = {"pinn": pinn, "hessian": hessian, "per_sample_grads": per_sample_grads, "fft": fft}
# The FFT section compares with NumPy and SciPy as well; other sections give them no cases.
PEERS = common.PEERS + ("numpy", "scipy")


def cases(fw, name, quick):
    chosen = os.environ.get(_SECTIONS_VAR, ",".join(SECTIONS)).split(",")
    for section in chosen:
        if name in ("numpy", "scipy") and section != "fft":
            continue  # NumPy and SciPy take part in the FFT section only
        yield from SECTIONS[section](fw, name, quick)


def best_modes(runs, prefix, threads):
    """For the cases whose names start with `prefix`, run on `threads` threads: each
    framework's fastest case (any mode), as {framework: (seconds, case)}."""
    best = {}
    for r in runs:
        found = [(res["seconds"], case) for case, res in r.get("results", {}).items() if case.startswith(prefix)]
        if found and r["threads"] == threads:
            best[r["framework"]] = min(found)
    return best


def print_fastest_modes(runs, threads, prefix, goal):
    """One line per thread count: oar's fastest mode against the fastest peer's fastest mode."""
    for t in threads:
        best = best_modes(runs, prefix, t)
        peers = {k: v for k, v in best.items() if k in common.PEERS}
        if "oar" not in best or not peers:
            continue
        peer = min(peers, key=lambda k: peers[k][0])
        ratio = best["oar"][0] / peers[peer][0]
        print(f"{prefix.strip()}, {t} thread(s), each framework's fastest mode: oar ({best['oar'][1]}) "
              f"{best['oar'][0] * 1e3:.3f} ms, fastest peer {peer} ({peers[peer][1]}) {peers[peer][0] * 1e3:.3f} ms: "
              f"oar/peer {ratio:.2f}x (goal <= {goal:.2f}x: {'met' if ratio <= goal else 'not met'})")


def main():
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--only", choices=sorted(SECTIONS), action="append",
                     help="run only this section (repeatable); default: all")
    known, rest = pre.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    if "-h" in rest or "--help" in rest:
        print(f"sections (--only NAME, repeatable): {', '.join(SECTIONS)}\n")
    args = common.parse_args(__doc__.splitlines()[0], default_threads="2",
                             frameworks=common.FRAMEWORKS + ("numpy", "scipy"))
    os.environ[_SECTIONS_VAR] = ",".join(known.only or SECTIONS)  # the workers inherit it
    info = common.machine_info()
    runs = common.run_all(__file__, args, interleave=True)
    common.print_header(info, runs)
    common.table(runs, ratio_peers="best", peers=PEERS)
    if "pinn" in (known.only or SECTIONS):
        print()
        print_fastest_modes(runs, args.threads, "pinn ", goal=1 / 1.2)  # goal: oar 1.2x faster
    common.save_json(args.json, "science", info, runs, {"sections": known.only or list(SECTIONS)})


if __name__ == "__main__":
    if "--worker" in sys.argv:
        common.worker_main(cases)
    else:
        main()
