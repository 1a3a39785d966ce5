"""Training throughput (steps per second) of three models in float32 and
bfloat16 autocast: the demo CNN on 1x8x8 digits (batch 64), ResNet18 on
3x32x32 images (batch 32, 10 classes) and a small GPT (4 layers, width 256,
4 heads, sequence 128, batch 16, vocabulary 1024). One step = forward, loss,
backward, Adam update, clearing the gradients. oar and paddle share the
model code (the same Paddle API); torch gets the same architectures written
with torch.nn.

Frameworks: oar (eager), oar-static (the model's forward under
oar.jit.to_static: captured forward and backward programs whose fused groups
run as generated kernels; traced during set-up), torch (eager),
torch-compile, paddle. torch-compile runs the
torch cases with the model wrapped by torch.compile (default mode, inductor,
CPU), as users do: the forward and, through AOTAutograd, its backward are
compiled; the loss, the Adam update and clearing the gradients stay eager.
Its set-up runs WARMUP_STEPS steps per case, so compiling (and any recompile
on the second step) is never part of steps/s; the first step's time, compile
included, is printed under the table ("measured once"). The compile is cold:
each worker gives inductor an empty cache directory (the worker's first case
also pays for importing the compiler stack). The ratio column compares oar
with the fastest of torch, torch-compile and paddle on each row.
"""
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import paddle_models  # noqa: E402
import torch_models  # noqa: E402

GPT = dict(vocab=1024, width=256, layers=4, heads=4, seq=128, batch=16)
FRAMEWORKS = ("oar", "oar-static", "torch", "torch-compile", "paddle")
common.PYTHONS.setdefault("oar-static", common.PYTHONS["oar"])
common.BASE_FRAMEWORK.setdefault("oar-static", "oar")
PEERS = ("torch", "torch-compile", "paddle")
GOAL = 0.9  # oar step time / the fastest peer's
WARMUP_STEPS = 3  # torch-compile: the compile, then steps that could still recompile


def batches():
    """One batch per model, the same for every framework."""
    rng = np.random.default_rng(0)
    return {
        "cnn": (rng.standard_normal((64, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, (64,))),
        "resnet18": (rng.standard_normal((32, 3, 32, 32)).astype(np.float32), rng.integers(0, 10, (32,))),
        "gpt": (rng.integers(0, GPT["vocab"], (GPT["batch"], GPT["seq"])),
                rng.integers(0, GPT["vocab"], (GPT["batch"], GPT["seq"]))),
    }


# ---------------------------------------------------------------- oar / paddle models

def paddle_like_models(fw):
    nn = fw.nn

    def cnn():
        return nn.Sequential(
            nn.Conv2D(1, 32, 3, padding=1), nn.BatchNorm2D(32), nn.ReLU(),
            nn.Conv2D(32, 64, 3, padding=1), nn.BatchNorm2D(64), nn.ReLU(),
            nn.MaxPool2D(2), nn.Flatten(), nn.Linear(64 * 16, 128), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(128, 10))

    def resnet18():
        return fw.vision.models.resnet18(num_classes=10)

    return cnn, resnet18, lambda: paddle_models.gpt(fw, GPT)


def paddle_like_cases(fw, name):
    static = name == "oar-static"
    cnn, resnet18, gpt = paddle_like_models(fw)
    F = fw.nn.functional
    data = batches()
    builders = {"cnn": cnn, "resnet18": resnet18, "gpt": gpt}
    for dtype in ("float32", "bfloat16"):
        for model_name, build in builders.items():
            fw.seed(0)
            net = build()
            net.train()
            opt = fw.optimizer.Adam(learning_rate=1e-3, parameters=net.parameters())
            x = fw.to_tensor(data[model_name][0])
            y = fw.to_tensor(data[model_name][1].astype(np.int64))
            fwd = fw.jit.to_static(net) if static else net

            def step(fwd=fwd, opt=opt, x=x, y=y, dtype=dtype):
                with fw.amp.auto_cast(enable=dtype == "bfloat16", dtype="bfloat16"):
                    out = fwd(x)
                out = out.astype("float32")
                loss = F.cross_entropy(out.reshape([-1, out.shape[-1]]), y.reshape([-1]))
                loss.backward()
                opt.step()
                opt.clear_grad()
            for _ in range(WARMUP_STEPS if static else 0):  # trace and compile outside the timing
                step()
            yield f"{model_name} {dtype}", step, 1, "steps/s"


# ---------------------------------------------------------------- torch models

def torch_cases(torch, compiled=False):
    """The torch twins' steps; with `compiled`, each model runs through
    torch.compile and is warmed up here (see the module docstring)."""
    nn, F = torch.nn, torch.nn.functional
    data = batches()

    def cnn():
        return nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 16, 128), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(128, 10))

    twins = torch_models.build(torch)
    builders = {"cnn": cnn, "resnet18": lambda: twins.ResNet18(num_classes=10), "gpt": lambda: twins.Gpt(GPT)}
    for dtype in ("float32", "bfloat16"):
        for model_name, build in builders.items():
            torch.manual_seed(0)
            net = build()
            net.train()
            opt = torch.optim.Adam(net.parameters(), lr=1e-3)
            x = torch.from_numpy(data[model_name][0])
            y = torch.from_numpy(data[model_name][1].astype(np.int64))
            model = torch.compile(net) if compiled else net

            def step(net=model, opt=opt, x=x, y=y, dtype=dtype):
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == "bfloat16"):
                    out = net(x)
                out = out.float()
                loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
                loss.backward()
                opt.step()
                opt.zero_grad()
            case = f"{model_name} {dtype}"
            if compiled:
                try:
                    start = time.perf_counter()
                    step()
                    first = time.perf_counter() - start
                    for _ in range(WARMUP_STEPS - 1):
                        step()
                except Exception as e:  # one model failing to compile leaves the others' rows
                    common.note(case, f"compile failed: {type(e).__name__}: {e}")
                    continue
                common.note(case, f"first step {first:.1f} s (compile included)")
            yield case, step, 1, "steps/s"


def compiled_torch_cases(torch):
    """torch_cases with torch.compile, compiling cold into a fresh inductor
    cache that is removed once every case is warmed up (their kernels are
    loaded by then)."""
    cache = tempfile.mkdtemp(prefix="oar-bench-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    try:
        yield from torch_cases(torch, compiled=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def cases(fw, name, quick):
    if name == "torch":
        yield from torch_cases(fw)
    elif name == "torch-compile":
        yield from compiled_torch_cases(fw)
    else:
        if name in ("oar", "oar-static"):
            import oar.vision.models  # noqa: F401
        yield from paddle_like_cases(fw, name)


def main():
    args = common.parse_args(__doc__.splitlines()[0], default_threads="2", frameworks=FRAMEWORKS)
    info = common.machine_info()
    runs = common.run_all(__file__, args, interleave=True)
    common.print_header(info, runs)
    common.table(runs, ratio_peers="best", peers=PEERS)
    seconds = {}
    for r in runs:
        for case, res in r.get("results", {}).items():
            seconds.setdefault((case, r["threads"]), {})[r["framework"]] = res["seconds"]
    rows = [(s["oar"], min(s[p] for p in PEERS if p in s)) for s in seconds.values()
            if "oar" in s and any(p in s for p in PEERS)]
    if rows:
        met = sum(t <= GOAL * best for t, best in rows)
        print(f"goal oar <= {GOAL}x the fastest peer's step time: met on {met}/{len(rows)} rows")
    common.save_json(args.json, "training", info, runs, {"goal_vs_best_peer": GOAL})


if __name__ == "__main__":
    if "--worker" in sys.argv:
        common.worker_main(cases)
    else:
        main()
