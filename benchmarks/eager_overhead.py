"""Eager dispatch overhead: microseconds per call on tiny 4x4 float32 tensors.

At this size the arithmetic is negligible, so the figure is the fixed cost of
one op going from Python through the framework and back (and, for the
backward case, of recording and replaying the autograd graph).

Goal: oar <= 0.5x torch on every row.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


def cases(fw, name, quick):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 4), dtype=np.float32)
    y = rng.standard_normal((4, 4), dtype=np.float32)
    a, b = common.to_tensor(fw, name, x), common.to_tensor(fw, name, y)
    yield "add a+b", lambda: a + b, None, "us"
    yield "matmul(a, b)", lambda: fw.matmul(a, b), None, "us"
    # Declared functions: arguments normalised by the generated bindings.
    yield "a.sum(axis=1)", lambda: a.sum(axis=1), None, "us"
    yield "relu(a)", lambda: fw.nn.functional.relu(a), None, "us"
    yield "reshape(a, [2, 8])", lambda: fw.reshape(a, [2, 8]), None, "us"

    ga, gb = common.to_tensor(fw, name, x), common.to_tensor(fw, name, y)
    for t in (ga, gb):
        if name == "torch":
            t.requires_grad_(True)
        else:
            t.stop_gradient = False

    def fwd_bwd():
        (ga * gb).sum().backward()

    yield "(a*b).sum().backward()", fwd_bwd, None, "us"

    # Indexing: the index object is parsed on every call.
    idx = common.to_tensor(fw, name, np.array([2, 0, 3]))
    mask = a > 0
    c = common.to_tensor(fw, name, x)
    yield "a[0]", lambda: a[0], None, "us"
    yield "a[:, 1:3]", lambda: a[:, 1:3], None, "us"
    yield "a[..., None]", lambda: a[..., None], None, "us"
    yield "a[idx]", lambda: a[idx], None, "us"
    yield "a[mask]", lambda: a[mask], None, "us"

    def set_row():
        c[0] = 1.0

    yield "c[0] = 1.0", set_row, None, "us"


GOAL = 0.5  # oar time / torch time


def main():
    args = common.parse_args(__doc__.splitlines()[0], default_threads="1")
    info = common.machine_info()
    runs = common.run_all(__file__, args)
    common.print_header(info, runs)
    common.table(runs, ratio_peers=[p for p in common.PEERS if p in args.frameworks])
    oar = {(c, r["threads"]): v["seconds"] for r in runs if r["framework"] == "oar"
           for c, v in r.get("results", {}).items()}
    torch = {(c, r["threads"]): v["seconds"] for r in runs if r["framework"] == "torch"
             for c, v in r.get("results", {}).items()}
    both = [k for k in oar if k in torch]
    if both:
        met = sum(oar[k] <= GOAL * torch[k] for k in both)
        print(f"goal oar <= {GOAL}x torch: met on {met}/{len(both)} rows")
    common.save_json(args.json, "eager_overhead", info, runs, {"goal_vs_torch": GOAL})


if __name__ == "__main__":
    if "--worker" in sys.argv:
        common.worker_main(cases)
    else:
        main()
