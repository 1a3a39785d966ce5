"""Learning-rate schedulers against their closed forms at several epochs."""
import math

import pytest

import oar.optimizer.lr as lr


def trace(sched, n):
    out = []
    for _ in range(n):
        out.append(sched())
        sched.step()
    return out


def close(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15), (a, b)


def test_step_multistep_piecewise():
    close(trace(lr.StepDecay(0.5, step_size=3, gamma=0.2), 8), [0.5 * 0.2 ** (e // 3) for e in range(8)])
    close(trace(lr.MultiStepDecay(1.0, milestones=[2, 5], gamma=0.5), 7),
          [1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25])
    close(trace(lr.PiecewiseDecay(boundaries=[2, 4], values=[1.0, 0.5, 0.1]), 6), [1.0, 1.0, 0.5, 0.5, 0.1, 0.1])


def test_exponential_family():
    close(trace(lr.ExponentialDecay(0.5, 0.9), 6), [0.5 * 0.9 ** e for e in range(6)])
    close(trace(lr.NaturalExpDecay(0.5, 0.3), 6), [0.5 * math.exp(-0.3 * e) for e in range(6)])
    close(trace(lr.InverseTimeDecay(0.5, 0.3), 6), [0.5 / (1 + 0.3 * e) for e in range(6)])


def test_polynomial_decay():
    def ref(e, cycle, base=1.0, end=0.1, steps=4, power=2.0):
        if cycle:
            steps = steps * (1 if e == 0 else math.ceil(e / steps))
        else:
            e = min(e, steps)
        return (base - end) * (1 - e / steps) ** power + end

    close(trace(lr.PolynomialDecay(1.0, 4, end_lr=0.1, power=2.0), 9), [ref(e, False) for e in range(9)])
    close(trace(lr.PolynomialDecay(1.0, 4, end_lr=0.1, power=2.0, cycle=True), 9), [ref(e, True) for e in range(9)])


def test_noam():
    def ref(e):
        a = 1.0 if e == 0 else e ** -0.5
        return 2.0 * 16 ** -0.5 * min(a, e * 3 ** -1.5)

    close(trace(lr.NoamDecay(d_model=16, warmup_steps=3, learning_rate=2.0), 8), [ref(e) for e in range(8)])


def test_linear_warmup_float_and_scheduler():
    close(trace(lr.LinearWarmup(0.5, warmup_steps=4, start_lr=0.1, end_lr=0.5), 7),
          [0.1 + 0.4 * e / 4 for e in range(4)] + [0.5] * 3)
    inner = lr.StepDecay(0.5, step_size=2, gamma=0.5)
    close(trace(lr.LinearWarmup(inner, warmup_steps=2, start_lr=0.0, end_lr=0.5), 7),
          [0.0, 0.25] + [0.5 * 0.5 ** ((e - 2) // 2) for e in range(2, 7)])


def test_lambda_multiplicative():
    close(trace(lr.LambdaDecay(0.5, lambda e: 0.95 ** e), 5), [0.5 * 0.95 ** e for e in range(5)])
    close(trace(lr.MultiplicativeDecay(0.5, lambda e: 0.9), 5), [0.5 * 0.9 ** e for e in range(5)])


def test_cosine_annealing_matches_closed_form():
    s = lr.CosineAnnealingDecay(1.0, T_max=5, eta_min=0.1)
    got = trace(s, 11)
    want = [0.1 + 0.9 * (1 + math.cos(math.pi * e / 5)) / 2 for e in range(11)]
    for x, y in zip(got, want):
        assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
    s.step(3)
    assert math.isclose(s(), want[3], rel_tol=1e-12)


def test_cosine_warm_restarts():
    def ref(e, t0=2, mult=2):
        t_i, t_cur = t0, e
        while t_cur >= t_i:
            t_cur -= t_i
            t_i *= mult
        return 0.1 + 0.9 * (1 + math.cos(math.pi * t_cur / t_i)) / 2

    close(trace(lr.CosineAnnealingWarmRestarts(1.0, T_0=2, T_mult=2, eta_min=0.1), 14), [ref(e) for e in range(14)])


def test_one_cycle():
    def ref(step, total=10, max_lr=1.0, div=25.0, end=1e-4, pct=0.3):
        init = max_lr / div
        up_end = pct * total - 1
        if step <= up_end:
            p = step / up_end
            return max_lr + (init - max_lr) / 2 * (math.cos(math.pi * p) + 1)
        p = (step - up_end) / (total - 1 - up_end)
        return end + (max_lr - end) / 2 * (math.cos(math.pi * p) + 1)

    close(trace(lr.OneCycleLR(1.0, total_steps=10), 10), [ref(e) for e in range(10)])
    lin = trace(lr.OneCycleLR(1.0, total_steps=10, anneal_strategy="linear", three_phase=True), 10)
    assert math.isclose(lin[0], 0.04) and math.isclose(lin[2], 1.0) and math.isclose(lin[4], 0.04)
    assert math.isclose(lin[9], 1e-4)


@pytest.mark.parametrize("mode", ["triangular", "triangular2", "exp_range"])
def test_cyclic(mode):
    def ref(it, base=0.1, mx=1.0, up=2, down=3, gamma=0.9):
        size = up + down
        cycle = 1 + it // size
        pct = 1 + it / size - cycle
        ratio = up / size
        f = pct / ratio if pct <= ratio else (1 - pct) / (1 - ratio)
        scale = {"triangular": 1.0, "triangular2": 1 / 2 ** (cycle - 1), "exp_range": gamma ** it}[mode]
        return base + (mx - base) * f * scale

    close(trace(lr.CyclicLR(0.1, 1.0, 2, 3, mode=mode, exp_gamma=0.9), 12), [ref(e) for e in range(12)])


def test_linear_lr():
    close(trace(lr.LinearLR(1.0, total_steps=4, start_factor=0.2, end_factor=0.8), 7),
          [0.2 + 0.6 * min(e, 4) / 4 for e in range(7)])


def test_reduce_on_plateau():
    s = lr.ReduceOnPlateau(1.0, mode="min", factor=0.5, patience=1, cooldown=1, min_lr=0.2)
    seen = []
    for m in [5.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]:
        s.step(m)
        seen.append(s())
    # Two epochs without improvement reduce; the cooldown skips one; floor at min_lr.
    assert seen == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25]
    s2 = lr.ReduceOnPlateau(1.0, mode="max", factor=0.1, patience=0, threshold=0.1, threshold_mode="abs")
    s2.step(1.0)
    s2.step(1.05)  # not better by the absolute threshold
    assert math.isclose(s2(), 0.1)


def test_state_dict_round_trip():
    a = lr.CosineAnnealingWarmRestarts(1.0, T_0=3, T_mult=2)
    for _ in range(5):
        a.step()
    b = lr.CosineAnnealingWarmRestarts(1.0, T_0=3, T_mult=2)
    b.set_state_dict(a.state_dict())
    assert trace(a, 6) == trace(b, 6)
    w = lr.LinearWarmup(lr.ExponentialDecay(1.0, 0.5), warmup_steps=2, start_lr=0.0, end_lr=1.0)
    for _ in range(4):
        w.step()
    w2 = lr.LinearWarmup(lr.ExponentialDecay(1.0, 0.5), warmup_steps=2, start_lr=0.0, end_lr=1.0)
    w2.set_state_dict(w.state_dict())
    assert trace(w, 3) == trace(w2, 3)


def test_step_with_explicit_epoch():
    s = lr.ExponentialDecay(1.0, 0.5)
    s.step(3)
    assert s.last_epoch == 3 and s() == 0.125


@pytest.mark.parametrize("make", [
    lambda: lr.StepDecay(0.1, step_size=0),
    lambda: lr.StepDecay(0.1, step_size=2, gamma=1.5),
    lambda: lr.MultiStepDecay(0.1, milestones=[3, 2]),
    lambda: lr.PiecewiseDecay([1, 2], [0.1]),
    lambda: lr.PolynomialDecay(0.1, decay_steps=0),
    lambda: lr.CosineAnnealingDecay(0.1, T_max=0),
    lambda: lr.OneCycleLR(1.0, total_steps=0),
    lambda: lr.OneCycleLR(1.0, total_steps=10, anneal_strategy="exp"),
    lambda: lr.CyclicLR(0.1, 1.0, 0),
    lambda: lr.LinearLR(0.1, total_steps=2, start_factor=0.0),
    lambda: lr.ReduceOnPlateau(0.1, factor=2.0),
    lambda: lr.LinearWarmup(0.1, warmup_steps=0, start_lr=0, end_lr=0.1),
])
def test_bad_arguments(make):
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.lr\."):
        make()


def test_one_cycle_past_total_steps():
    s = lr.OneCycleLR(1.0, total_steps=2)
    s.step()
    s.step()
    with pytest.raises(ValueError, match=r"^\[oar.optimizer.lr.OneCycleLR\]"):
        s.step()
