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


# ---------------------------------------------------------------- driver

SECTIONS = {"pinn": pinn}


def cases(fw, name, quick):
    chosen = os.environ.get(_SECTIONS_VAR, ",".join(SECTIONS)).split(",")
    for section in chosen:
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
    args = common.parse_args(__doc__.splitlines()[0], default_threads="2")
    os.environ[_SECTIONS_VAR] = ",".join(known.only or SECTIONS)  # the workers inherit it
    info = common.machine_info()
    runs = common.run_all(__file__, args, interleave=True)
    common.print_header(info, runs)
    common.table(runs, ratio_peers="best")
    if "pinn" in (known.only or SECTIONS):
        print()
        print_fastest_modes(runs, args.threads, "pinn ", goal=1 / 1.2)  # goal: oar 1.2x faster
    common.save_json(args.json, "science", info, runs, {"sections": known.only or list(SECTIONS)})


if __name__ == "__main__":
    if "--worker" in sys.argv:
        common.worker_main(cases)
    else:
        main()
