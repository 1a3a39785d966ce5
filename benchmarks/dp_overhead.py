"""Data-parallel step overhead: 2 ranks under oar.DataParallel against 1 plain process.

    .venv/bin/python benchmarks/dp_overhead.py
    .venv/bin/python benchmarks/dp_overhead.py --quick --models mlp

One step = forward, cross-entropy loss, backward, Adam update, clearing the
gradients, with the same batch per rank in both setups (weak scaling): with
perfect data parallelism the 2-rank step takes as long as the 1-rank step and
processes twice the samples, so overhead = t(2 ranks) / t(1 rank) - 1 is
what gradient averaging (and sharing the machine) costs.

Every process runs with OMP_NUM_THREADS=1: this machine may have only 2 cores,
so 2 ranks x 1 thread against 1 process x 1 thread is the comparison that
gives each rank a core of its own. The same is measured for torch
(DistributedDataParallel over gloo, from .venv-peers) for reference.

A step's time is the slowest rank's; the figure is the median over the timed
steps after warm-up. A third setup, 2 ranks training independently (no
gradient sync), splits the overhead into what sharing the machine costs and
what the gradient all-reduces add. At the end the ranks check that their parameters are
still identical (data parallelism that lets replicas drift is broken).
"""
import argparse
import json
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402
import paddle_models  # noqa: E402
import torch_models  # noqa: E402

MARK = "DP_RESULT "
# MLP: 784 -> 2048 -> 1024 -> 10 (3.7 M parameters), batch 32 per rank.
MLP = dict(sizes=(784, 2048, 1024, 10), batch=32)
CNN_BATCH = 64
# A small GPT (the training benchmark's, with a shorter sequence): 3.7 M parameters.
GPT = dict(vocab=1024, width=256, layers=4, heads=4, seq=64, batch=8)
MODELS = ("mlp", "cnn", "gpt")


def data(model, rank):
    rng = np.random.default_rng(1000 + rank)  # each rank its own shard
    if model == "mlp":
        return (rng.standard_normal((MLP["batch"], MLP["sizes"][0])).astype(np.float32),
                rng.integers(0, MLP["sizes"][-1], (MLP["batch"],)))
    if model == "cnn":
        return (rng.standard_normal((CNN_BATCH, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, (CNN_BATCH,)))
    return (rng.integers(0, GPT["vocab"], (GPT["batch"], GPT["seq"])),
            rng.integers(0, GPT["vocab"], (GPT["batch"], GPT["seq"])))


# ---------------------------------------------------------------- oar

def oar_model(fw, model):
    nn = fw.nn
    if model == "mlp":
        s = MLP["sizes"]
        return nn.Sequential(nn.Linear(s[0], s[1]), nn.ReLU(), nn.Linear(s[1], s[2]), nn.ReLU(),
                             nn.Linear(s[2], s[3]))
    if model == "cnn":
        return nn.Sequential(
            nn.Conv2D(1, 32, 3, padding=1), nn.BatchNorm2D(32), nn.ReLU(),
            nn.Conv2D(32, 64, 3, padding=1), nn.BatchNorm2D(64), nn.ReLU(),
            nn.MaxPool2D(2), nn.Flatten(), nn.Linear(64 * 16, 128), nn.ReLU(), nn.Linear(128, 10))

    return paddle_models.gpt(fw, GPT)


class OarRunner:
    def __init__(self, distributed, sync=True):
        self.sync = sync
        try:
            import oar as fw
        except ImportError:
            sys.path.insert(0, str(common.ROOT / "python"))
            import oar as fw
        if hasattr(fw, "set_num_threads"):
            fw.set_num_threads(1)
        self.fw = fw
        self.version = str(getattr(fw, "__version__", "unknown"))
        self.rank, self.world = 0, 1
        if distributed:
            import oar.distributed as dist
            self.dist = dist
            dist.init_parallel_env()
            self.rank, self.world = dist.get_rank(), dist.get_world_size()

    def setup(self, model):
        fw = self.fw
        fw.seed(0)
        net = oar_model(fw, model)
        net.train()
        nparams = sum(int(p.size) for p in net.parameters())
        if self.world > 1 and self.sync:
            net = fw.DataParallel(net)
        opt = fw.optimizer.Adam(learning_rate=1e-4, parameters=net.parameters())
        x, y = data(model, self.rank)
        x, y = fw.to_tensor(x), fw.to_tensor(y.astype(np.int64))
        F = fw.nn.functional

        def step():
            out = net(x)
            loss = F.cross_entropy(out.reshape([-1, out.shape[-1]]), y.reshape([-1]))
            loss.backward()
            opt.step()
            opt.clear_grad()
        return step, net, nparams

    def max_vec(self, values):
        if self.world == 1:
            return list(values)
        t = self.fw.to_tensor(np.asarray(values, dtype=np.float64))
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return t.numpy().tolist()

    def barrier(self):
        if self.world > 1:
            self.dist.barrier()

    def params_checksum(self, net):
        return float(sum(np.abs(p.numpy().astype(np.float64)).sum() for p in net.parameters()))

    def close(self):
        if self.world > 1:
            self.dist.destroy_process_group()


# ---------------------------------------------------------------- torch

def torch_model(torch, model):
    nn = torch.nn
    if model == "mlp":
        s = MLP["sizes"]
        return nn.Sequential(nn.Linear(s[0], s[1]), nn.ReLU(), nn.Linear(s[1], s[2]), nn.ReLU(),
                             nn.Linear(s[2], s[3]))
    if model == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 16, 128), nn.ReLU(), nn.Linear(128, 10))

    return torch_models.build(torch).Gpt(GPT)


class TorchRunner:
    def __init__(self, rank, world, port, sync=True):
        self.sync = sync
        import torch
        torch.set_num_threads(1)
        self.torch = torch
        self.version = torch.__version__
        self.rank, self.world = rank, world
        if world > 1:
            import torch.distributed as dist
            self.dist = dist
            dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)

    def setup(self, model):
        torch = self.torch
        torch.manual_seed(0)
        net = torch_model(torch, model)
        net.train()
        nparams = sum(p.numel() for p in net.parameters())
        if self.world > 1 and self.sync:
            net = torch.nn.parallel.DistributedDataParallel(net)
        opt = torch.optim.Adam(net.parameters(), lr=1e-4)
        x, y = data(model, self.rank)
        x, y = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))
        F = torch.nn.functional

        def step():
            out = net(x)
            loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad()
        return step, net, nparams

    def max_vec(self, values):
        if self.world == 1:
            return list(values)
        t = self.torch.tensor(values, dtype=self.torch.float64)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return t.tolist()

    def barrier(self):
        if self.world > 1:
            self.dist.barrier()

    def params_checksum(self, net):
        return float(sum(p.detach().double().abs().sum() for p in net.parameters()))

    def close(self):
        if self.world > 1:
            self.dist.destroy_process_group()


# ---------------------------------------------------------------- worker

def time_model(runner, model, quick):
    step, net, nparams = runner.setup(model)
    for _ in range(2 if quick else 3):
        step()
    start = time.perf_counter()
    step()
    probe = runner.max_vec([time.perf_counter() - start])[0]
    target = 1.0 if quick else 4.0
    steps = int(min(max(target / max(probe, 1e-6), 5), 300))
    times = []
    runner.barrier()
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    times = runner.max_vec(times)  # a step lasts until its slowest rank is done
    res = {"seconds": statistics.median(times), "steps": steps, "params": nparams}
    if runner.world > 1 and runner.sync:
        c = runner.params_checksum(net)
        lo, hi = runner.max_vec([-c, c])
        res["replicas_identical"] = -lo == hi
    return res


def worker(args):
    if args.worker == "oar":
        runner = OarRunner(args.world > 1, not args.no_sync)
    else:
        runner = TorchRunner(args.rank, args.world, args.port, not args.no_sync)
    out = {"framework": args.worker, "version": runner.version, "ranks": runner.world, "results": {}}
    for model in args.models:
        try:
            out["results"][model] = time_model(runner, model, args.quick)
        except Exception as e:  # the other models still run
            out.setdefault("errors", {})[model] = f"{type(e).__name__}: {e}"
    if runner.rank == 0:
        print(MARK + json.dumps(out), flush=True)
    runner.close()


# ---------------------------------------------------------------- driver

def worker_cmd(python, framework, args):
    cmd = [str(python), str(Path(__file__).resolve()), "--worker", framework, "--models", *args.models]
    return cmd + (["--quick"] if args.quick else [])


def run_oar(ranks, args, sync=True):
    python = common.PYTHONS["oar"]
    cmd = worker_cmd(python, "oar", args) + ["--world", str(ranks)] + ([] if sync else ["--no-sync"])
    if ranks > 1:
        cmd = common.mpirun_cmd(ranks) + shlex.split(args.mpi_args) + cmd
    return common.collect_ranks([common.start_rank(cmd)], args.timeout, MARK)


def run_torch(ranks, args, sync=True):
    python = common.PYTHONS["torch"]
    if not python.exists():
        return {"skipped": f"{python} not found (run benchmarks/setup_peers.sh)"}
    port = common.free_port()
    extra = [] if sync else ["--no-sync"]
    procs = [common.start_rank(worker_cmd(python, "torch", args) + ["--rank", str(r), "--world", str(ranks), "--port", str(port)]
                   + extra) for r in range(ranks)]
    return common.collect_ranks(procs, args.timeout, MARK)


def driver(args):
    info = common.machine_info()
    print(f"machine: {info['cpu']}, {info['cores']} cores ({info['machine']})")
    print("every process OMP_NUM_THREADS=1: 2 ranks x 1 thread against 1 process x 1 thread "
          "(on a 2-core machine each rank has a core of its own); same batch per rank")
    best = {}
    runners = {"oar": run_oar, "torch": run_torch}
    for _ in range(args.rounds):
        for fw in args.frameworks:
            for setup, ranks, sync in (("1", 1, True), ("2 no comm", 2, False), ("2", 2, True)):
                res = runners[fw](ranks, args, sync)
                if "skipped" in res:
                    print(f"{fw} on {setup} rank(s): {res['skipped']}")
                for model, err in res.get("errors", {}).items():
                    print(f"{fw} on {setup} rank(s) failed {model}: {err}")
                best[(fw, setup)] = common.keep_fastest(best.get((fw, setup)), res)
    head = ["model", "params", "framework", "1 rank ms", "2 ranks no comm ms", "2 ranks DP ms", "overhead",
            "sharing", "sync"]
    rows = []
    for model in args.models:
        for fw in args.frameworks:
            one, free, two = ((best.get((fw, k)) or {}).get("results", {}).get(model) for k in ("1", "2 no comm", "2"))
            params = (one or two or {}).get("params")
            row = [model, f"{params / 1e6:.2f} M" if params else "-", fw]
            row += [f"{r['seconds'] * 1e3:.1f}" if r else "-" for r in (one, free, two)]
            row += [f"{b['seconds'] / a['seconds']:.2f}x" if a and b else "-" for a, b in ((one, two), (one, free),
                                                                                            (free, two))]
            if two and two.get("replicas_identical") is False:
                row[-1] += " (REPLICAS DIFFER)"
            rows.append(row)
    widths = [max(len(c) for c in col) for col in zip(head, *rows)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i < 3 else c.rjust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths)))
    versions = {fw: r.get("version") for (fw, _), r in best.items() if r.get("version")}
    print()
    print("(" + ", ".join(f"{k} {v}" for k, v in versions.items()) + ")")
    print(fmt(head))
    print(fmt(["-" * w for w in widths]))
    for row in rows:
        print(fmt(row))
    print("overhead = 2 ranks DP / 1 rank (1.00x: data parallelism is free) = sharing x sync, where\n"
          "  sharing = 2 independent ranks (same model and batch, no gradient sync) / 1 rank: the cost of two\n"
          "            processes sharing the machine (memory bandwidth, caches, other tenants)\n"
          "  sync    = 2 ranks DP / 2 ranks no comm: what gradient averaging adds\n"
          "step time = slowest rank's, median over timed steps")
    if args.json:
        doc = {"machine": info, "runs": {f"{fw}/{n}": r for (fw, n), r in best.items()}}
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n")
        print(f"\nwrote {args.json}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    p.add_argument("--frameworks", default="oar,torch", help="comma list out of oar,torch")
    p.add_argument("--quick", action="store_true", help="short runs: a smoke test")
    p.add_argument("--rounds", type=int, default=2, help="runs of each setup; each keeps its best per model")
    p.add_argument("--mpi-args", default="", help="further mpirun options for oar, one shell-quoted string")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--worker", choices=("oar", "torch"), help=argparse.SUPPRESS)
    p.add_argument("--no-sync", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--world", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args()
    args.frameworks = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    if args.worker:
        worker(args)
    else:
        driver(args)


if __name__ == "__main__":
    main()
