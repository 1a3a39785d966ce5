"""A Fourier neural operator for the 1-D viscous Burgers equation.

    u_t + u u_x = nu u_xx   on the periodic interval [0, 1),  nu = 0.01,

learned as the operator u(., 0) -> u(., 1). The training data come from a
pseudo-spectral solver written here in NumPy: initial conditions drawn from a
Gaussian random field (spectrum (tau^2 + 4 pi^2 k^2)^-alpha, the usual
benchmark setting), the diffusion integrated exactly in Fourier space and the
nonlinear term with classical Runge-Kutta (integrating-factor RK4), on a fine
grid then sampled at the model's resolution.

The model lifts (u0(x), x) to `width` channels, applies Fourier layers
(a linear map on the lowest `modes` Fourier coefficients, by oar.fft.rfft and
oar.fft.irfft, plus a pointwise linear map, then GELU) and projects back.
Training minimises the relative L2 error with Adam and a step decay; the
relative L2 error on held-out initial conditions is reported.

    python examples/science/fno_burgers.py            # full run
    python examples/science/fno_burgers.py --quick    # a short run (the tests use it)
"""
import argparse
import math
import time

import numpy as np

import oar
import oar.nn.functional as F

NU = 0.01
FULL = dict(n_train=512, n_test=100, grid=128, solver_grid=512, modes=16, width=48, layers=4, epochs=100,
            batch=32, lr=3e-3)
QUICK = dict(n_train=96, n_test=32, grid=64, solver_grid=256, modes=8, width=16, layers=2, epochs=20, batch=16,
             lr=5e-3)


# ---------------------------------------------------------------- data (NumPy)

def random_fields(n, grid, rng, alpha=2.5, tau=7.0, sigma=98.0):
    """n periodic Gaussian random fields on `grid` points with covariance
    sigma^2 (tau^2 - Laplacian)^-alpha (zero mean; amplitudes of about 2)."""
    k = np.fft.rfftfreq(grid, d=1.0 / grid)
    amp = sigma * (4 * math.pi ** 2 * k ** 2 + tau ** 2) ** (-alpha / 2)
    amp[0] = 0.0
    coef = (rng.standard_normal((n, k.size)) + 1j * rng.standard_normal((n, k.size))) * amp * grid / math.sqrt(2)
    return np.fft.irfft(coef, n=grid, axis=-1)


def solve_burgers(u0, t_end=1.0, nu=NU, dt=1e-3):
    """u(., t_end) for each row of u0 by integrating-factor RK4 on the Fourier coefficients."""
    n = u0.shape[-1]
    k = 2 * math.pi * np.fft.rfftfreq(n, d=1.0 / n)
    dealias = np.abs(np.fft.rfftfreq(n, d=1.0 / n)) < n / 3  # the 2/3 rule
    steps = int(round(t_end / dt))
    lin = -nu * k ** 2
    e_half, e_full = np.exp(lin * dt / 2), np.exp(lin * dt)

    def nonlinear(v_hat):
        u = np.fft.irfft(v_hat, n=n, axis=-1)
        return -0.5j * k * np.fft.rfft(u * u, axis=-1) * dealias

    v = np.fft.rfft(u0, axis=-1)
    for _ in range(steps):
        a = nonlinear(v)
        b = nonlinear(e_half * (v + dt / 2 * a))
        c = nonlinear(e_half * v + dt / 2 * b)
        d = nonlinear(e_full * v + dt * e_half * c)
        v = e_full * v + dt / 6 * (e_full * a + 2 * e_half * (b + c) + d)
    return np.fft.irfft(v, n=n, axis=-1)


def make_data(cfg, seed=0):
    """(u0, u1) pairs at the model's grid: train and test splits, float32."""
    rng = np.random.default_rng(seed)
    n = cfg["n_train"] + cfg["n_test"]
    u0 = random_fields(n, cfg["solver_grid"], rng)
    u1 = solve_burgers(u0)
    step = cfg["solver_grid"] // cfg["grid"]
    u0, u1 = u0[:, ::step].astype(np.float32), u1[:, ::step].astype(np.float32)
    s = cfg["n_train"]
    return (u0[:s], u1[:s]), (u0[s:], u1[s:])


# ---------------------------------------------------------------- model

class SpectralConv1d(oar.nn.Layer):
    """A linear map of the lowest `modes` Fourier coefficients, channels in to out."""

    def __init__(self, channels, modes):
        super().__init__()
        self.modes = modes
        scale = 1.0 / (channels * channels)
        init = oar.nn.initializer.Uniform(0.0, scale)
        self.w_re = self.create_parameter([channels, channels, modes], default_initializer=init)
        self.w_im = self.create_parameter([channels, channels, modes], default_initializer=init)

    def forward(self, x):  # x: [batch, channels, n]
        n = x.shape[-1]
        x_ft = oar.fft.rfft(x, axis=-1)[:, :, :self.modes]
        w = oar.complex(self.w_re, self.w_im)
        out_ft = oar.einsum("bix,iox->box", x_ft, w)
        return oar.fft.irfft(out_ft, n=n, axis=-1)  # the higher modes are zero


class FNO1d(oar.nn.Layer):
    def __init__(self, modes, width, layers):
        super().__init__()
        self.lift = oar.nn.Linear(2, width)
        self.spectral = oar.nn.LayerList([SpectralConv1d(width, modes) for _ in range(layers)])
        self.pointwise = oar.nn.LayerList([oar.nn.Conv1D(width, width, 1) for _ in range(layers)])
        self.proj1 = oar.nn.Linear(width, 128)
        self.proj2 = oar.nn.Linear(128, 1)

    def forward(self, u0):  # u0: [batch, n]
        n = u0.shape[-1]
        grid = oar.linspace(0.0, 1.0 - 1.0 / n, n).reshape([1, n]).expand([u0.shape[0], n])
        h = self.lift(oar.stack([u0, grid], axis=-1)).transpose([0, 2, 1])  # [batch, width, n]
        for k, (spec, point) in enumerate(zip(self.spectral, self.pointwise)):
            h = spec(h) + point(h)
            if k < len(self.spectral) - 1:
                h = F.gelu(h)
        h = F.gelu(self.proj1(h.transpose([0, 2, 1])))
        return self.proj2(h).squeeze(-1)


def relative_l2(pred, target):
    """The mean over examples of ||pred - target|| / ||target||."""
    diff = ((pred - target) ** 2).sum(axis=-1).sqrt()
    return (diff / (target ** 2).sum(axis=-1).sqrt()).mean()


def train(cfg, seed=0, log=print):
    (x_tr, y_tr), (x_te, y_te) = make_data(cfg, seed)
    oar.seed(seed)
    model = FNO1d(cfg["modes"], cfg["width"], cfg["layers"])
    steps_per_epoch = math.ceil(cfg["n_train"] / cfg["batch"])
    sched = oar.optimizer.lr.StepDecay(cfg["lr"], step_size=max(1, cfg["epochs"] // 4) * steps_per_epoch,
                                       gamma=0.5)
    opt = oar.optimizer.Adam(learning_rate=sched, parameters=model.parameters(), weight_decay=1e-4)
    rng = np.random.default_rng(seed + 1)
    xt, yt = oar.to_tensor(x_te), oar.to_tensor(y_te)
    start = time.perf_counter()
    for epoch in range(cfg["epochs"]):
        order = rng.permutation(cfg["n_train"])
        total = 0.0
        for s in range(0, cfg["n_train"], cfg["batch"]):
            idx = order[s:s + cfg["batch"]]
            loss = relative_l2(model(oar.to_tensor(x_tr[idx])), oar.to_tensor(y_tr[idx]))
            loss.backward()
            opt.step()
            opt.clear_grad()
            sched.step()
            total += float(loss) * len(idx)
        if epoch % max(1, cfg["epochs"] // 10) == 0 or epoch == cfg["epochs"] - 1:
            with oar.no_grad():
                test = float(relative_l2(model(xt), yt))
            log(f"epoch {epoch:4d}  train rel. L2 {total / cfg['n_train']:.4f}  test rel. L2 {test:.4f}  "
                f"({time.perf_counter() - start:.1f} s)")
    with oar.no_grad():
        test = float(relative_l2(model(xt), yt))
    baseline = float(relative_l2(oar.to_tensor(x_te), yt))  # predicting u(., 1) = u(., 0)
    return test, baseline, time.perf_counter() - start


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small, short run")
    ap.add_argument("--epochs", type=int, help="override the number of epochs")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    cfg = dict(QUICK if args.quick else FULL)
    if args.epochs:
        cfg["epochs"] = args.epochs
    test, baseline, seconds = train(cfg, args.seed)
    print(f"relative L2 test error {test:.4f} (identity map: {baseline:.4f}), training {seconds:.1f} s")
    return test, baseline


if __name__ == "__main__":
    main()
