"""Fused elementwise groups: oar's generated kernels against its own group interpreter, eager op by op, torch eager and torch.compile.

Each case is a small function of memory-bound elementwise ops, the kind the
graph passes fuse into one group (bias + gelu, a gated unit, a residual
scale-and-shift, a gate of an LSTM cell), or such a group reduced (a mean
squared error, row sums of squares, column sums: a bias gradient), run as a
captured function:
oar.jit.to_static for oar (its fused group runs as a generated kernel),
oar-interp (the same with the compiler off: OAR_COMPILER=0, the block
interpreter runs the group), oar-eager (op by op), torch (eager) and
torch-compile (inductor). Microseconds per call, medians; float32 and
bfloat16. Also reported, once, under the table: the first call of the oar
worker's first case with the kernel cache cold (trace + passes + compile) and
warm (trace + passes + load from the disk cache), each in a fresh process.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

FRAMEWORKS = ("oar", "oar-interp", "oar-eager", "torch", "torch-compile")
PEERS = ("oar-interp", "oar-eager", "torch", "torch-compile")
common.PYTHONS.setdefault("oar-interp", common.PYTHONS["oar"])
common.BASE_FRAMEWORK.setdefault("oar-interp", "oar")


def functions(fw, name):
    F = fw.nn.functional
    torch = name.startswith("torch")
    sig = fw.sigmoid if torch else F.sigmoid
    ax = "dim" if torch else "axis"
    return {
        "bias + gelu": lambda x, b, y: F.gelu(x + b),
        "gated silu": lambda x, b, y: F.silu(x) * y,
        "residual scale-shift": lambda x, b, y: (x + y) * 0.5 + b,
        "lstm-style gate": lambda x, b, y: fw.tanh(x) * sig(y + b) + x * sig(y),
        # reductions of a group
        "mse loss (full mean)": lambda x, b, y: ((x - y) * (x - y)).mean(),
        "row sum of squares": lambda x, b, y: (x * x).sum(**{ax: -1}),
        "column sum of gelu(x + b) * y": lambda x, b, y: (F.gelu(x + b) * y).sum(**{ax: 0}),
    }


SHAPE = (256, 4096)


def cases(fw, name, quick):
    rng = np.random.default_rng(0)
    rows = 64 if quick else SHAPE[0]
    if name == "oar-interp":
        fw.compiler.set_enabled(False)
    for dtype in ("float32", "bfloat16"):
        def tensor(*shape):
            t = common.to_tensor(fw, common.BASE_FRAMEWORK.get(name, name),
                                 rng.standard_normal(shape, dtype=np.float32))
            return t.to(fw.bfloat16) if dtype == "bfloat16" and name.startswith("torch") else \
                (t.cast("bfloat16") if dtype == "bfloat16" else t)
        x, y, b = tensor(rows, SHAPE[1]), tensor(rows, SHAPE[1]), tensor(SHAPE[1])
        for label, f in functions(fw, name).items():
            if name == "torch-compile":
                g = fw.compile(f)
            elif name in ("oar", "oar-interp"):
                g = fw.jit.to_static(f)
            else:
                g = f
            for _ in range(3):  # trace / compile outside the timing
                g(x, b, y)
            yield f"{label} {dtype}", (lambda g=g, x=x, b=b, y=y: g(x, b, y)), 1, "us"


FIRST_CALL = r"""
import time, numpy as np, oar
x = oar.to_tensor(np.ones((256, 4096), np.float32)); b = oar.to_tensor(np.ones(4096, np.float32))
f = oar.jit.to_static(lambda x, b: oar.nn.functional.gelu(x + b) * x - oar.tanh(b))
t = time.perf_counter(); f(x, b); first = time.perf_counter() - t
t = time.perf_counter(); f(x, b); second = time.perf_counter() - t
print(__import__("json").dumps({"first": first, "second": second, "stats": oar.compiler.stats()}))
"""


def first_call_times():
    """Seconds of the first call in a fresh process, cold and warm cache."""
    env = dict(os.environ, PYTHONPATH=str(common.ROOT / "python"))
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env["OAR_COMPILER_CACHE"] = cache
        for kind in ("cold", "warm"):
            p = subprocess.run([str(common.PYTHONS["oar"]), "-c", FIRST_CALL], env=env, capture_output=True,
                               text=True, check=True)
            out[kind] = json.loads(p.stdout.strip().splitlines()[-1])
    return out


def main():
    args = common.parse_args(__doc__.splitlines()[0], default_threads="1,2", frameworks=FRAMEWORKS)
    info = common.machine_info()
    runs = common.run_all(__file__, args, interleave=True)
    common.print_header(info, runs)
    common.table(runs, ratio_peers="best", peers=PEERS)
    first = first_call_times()
    for kind, r in first.items():
        s = r["stats"]
        print(f"first call, {kind} kernel cache: {1e3 * r['first']:.1f} ms (second call {1e3 * r['second']:.2f} ms; "
              f"compiled {s['compiled']} in {1e3 * s['compile_seconds']:.1f} ms, loaded {s['disk_hits']} in "
              f"{1e3 * s['load_seconds']:.2f} ms)")
    common.save_json(args.json, "compiler", info, runs, {"first_call": first})


if __name__ == "__main__":
    if "--worker" in sys.argv:
        common.worker_main(cases)
    else:
        main()
