"""GPU benchmarks: oar against torch on the same GPU in the same run.

    python benchmarks/gpu.py                      # every case, both frameworks, a table of ratios
    python benchmarks/gpu.py --only matmul        # cases whose name contains "matmul"

Each framework runs in its own process (oar with this interpreter, torch with --torch-python,
default `python3`), one case at a time, alternating; each case reports the best of several timed
runs after warm-up, every run ending in a device synchronisation. Every figure is a time per unit
of work, and ratios are oar time / torch time (below 1: oar is faster).

Cases:
- matmul bf16 N: an N x N x N bfloat16 product (TFLOP/s printed);
- launch add: the time per eager `a + b` on 1-element tensors, synchronised at the end (the
  framework's per-op launch overhead).
"""
import argparse
import json
import os
import subprocess
import sys
import time

MATMUL_SIZES = (4096, 8192)


def _cases():
    cases = [f"matmul bf16 {n}" for n in MATMUL_SIZES]
    cases += ["launch add"]
    return cases


# ---------------------------------------------------------------- workers

def _best(fn, sync, reps, runs=5, warm=3):
    for _ in range(warm):
        fn()
    sync()
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def _run_case(fw, case):
    if fw == "torch":
        import torch
        dev = "cuda"
        sync = torch.cuda.synchronize

        def randn(shape, dtype):
            return torch.randn(*shape, device=dev).to(getattr(torch, dtype))
        mm = torch.matmul
    else:
        import numpy as np

        import oar
        sync = oar.device.cuda.synchronize

        def randn(shape, dtype):
            return oar.to_tensor(np.random.default_rng(0).standard_normal(shape).astype("float32")).cuda().astype(dtype)
        mm = oar.matmul
    if case.startswith("matmul"):
        n = int(case.split()[-1])
        a, b = randn((n, n), "bfloat16"), randn((n, n), "bfloat16")
        reps = 20 if n <= 4096 else 5
        t = _best(lambda: mm(a, b), sync, reps)
        return {"s": t, "extra": f"{2 * n ** 3 / t / 1e12:.0f} TFLOP/s"}
    if case == "launch add":
        a, b = randn((1,), "float32"), randn((1,), "float32")
        t = _best(lambda: a + b, sync, 2000)
        return {"s": t, "extra": ""}
    raise ValueError(case)


def worker(fw, cases):
    for case in cases:
        try:
            r = _run_case(fw, case)
        except Exception as e:  # noqa: BLE001 - reported in the table
            r = {"error": f"{type(e).__name__}: {str(e)[:160]}"}
        print(json.dumps({"case": case, **r}), flush=True)


# ---------------------------------------------------------------- driver

def _spawn(python, fw, cases, env=None):
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", fw, "--cases", json.dumps(cases)],
                         capture_output=True, text=True, env=env)
    rows = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            rows[r["case"]] = r
    if out.returncode != 0 and not rows:
        print(out.stderr[-2000:], file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--cases")
    ap.add_argument("--only", default="")
    ap.add_argument("--torch-python", default="python3")
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, json.loads(args.cases))
        return
    cases = [c for c in _cases() if args.only in c]
    # torch runs in its own interpreter: oar's environment may not hold it.
    tenv = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH")}
    print("| case | oar | torch | oar/torch | oar | torch |")
    print("|---|---|---|---|---|---|")
    for case in cases:
        o = _spawn(sys.executable, "oar", [case]).get(case, {"error": "no result"})
        t = _spawn(args.torch_python, "torch", [case], env=tenv).get(case, {"error": "no result"})

        def fmt(r):
            return f"{r['s'] * 1e6:.1f} us" if "s" in r else r["error"]
        ratio = f"{o['s'] / t['s']:.2f}x" if "s" in o and "s" in t else "-"
        print(f"| {case} | {fmt(o)} | {fmt(t)} | {ratio} | {o.get('extra', '')} | {t.get('extra', '')} |", flush=True)


if __name__ == "__main__":
    main()
