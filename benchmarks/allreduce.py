"""all_reduce bus bandwidth: oar (OpenMPI process group) against PyTorch's gloo.

    .venv/bin/python benchmarks/allreduce.py                  # 2 and 4 ranks, 1 KiB .. 64 MiB
    .venv/bin/python benchmarks/allreduce.py --ranks 2 --quick

The driver starts, for each rank count N, N oar ranks (this file in worker
mode under ``python -m oar.distributed.launch``, or plain ``mpirun`` with
``--launcher mpirun``) and N torch ranks (this file in worker mode under
.venv-peers/bin/python, joined over TCP with ``init_process_group("gloo")``),
alternately for ``--rounds`` rounds, and keeps each framework's best round per
size (interference from other tenants of a shared machine only adds time).

Per size (float32, 1 KiB to ``--max-size`` in steps of x4) every rank:
checks once that the all-reduced values are right (a wrong fast result is
worthless), warms up, agrees with the others on an iteration count that
makes one timed run last about 0.25 s, then does ``repeats`` timed runs, each
starting after a barrier. A run's time is the slowest rank's mean time per
all_reduce; the figure is the median run. Bus bandwidth follows the
nccl-tests convention: ``bytes * 2 * (N - 1) / N / time``.

Every rank runs with OMP_NUM_THREADS=1 (torch.set_num_threads(1) too).

Experiments: ``--mpi-args "--mca ..."`` passes OpenMPI parameters to oar's
ranks; ``--oar-chunk 1M`` makes oar's side split each larger message into
1 MiB all_reduces on views, ``--oar-window`` (default 4) of them in flight.
"""
import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402

MARK = "ALLREDUCE_RESULT "
KIB = 1024


def sizes_up_to(max_bytes, quick):
    sizes, s = [], KIB
    while s <= max_bytes:
        sizes.append(s)
        s *= 16 if quick else 4
    return sizes


def parse_size(text):
    t = text.strip().upper().rstrip("B").rstrip("I")
    mult = {"K": KIB, "M": KIB ** 2, "G": KIB ** 3}.get(t[-1:], 1)
    return int(float(t[:-1] if t[-1:] in "KMG" else t) * mult)


def human(nbytes):
    for unit, m in (("MiB", KIB ** 2), ("KiB", KIB)):
        if nbytes >= m:
            return f"{nbytes // m} {unit}"
    return f"{nbytes} B"


# ---------------------------------------------------------------- workers

class OarComm:
    name = "oar"

    def __init__(self, chunk=0, window=4):
        # chunk > 0: split larger messages into all_reduces of `chunk` bytes
        # with at most `window` in flight (an experiment, see --oar-chunk).
        self.chunk, self.window = chunk, window
        try:
            import oar
        except ImportError:
            sys.path.insert(0, str(common.ROOT / "python"))
            import oar
        import oar.distributed as dist
        self.oar, self.dist = oar, dist
        if hasattr(oar, "set_num_threads"):
            oar.set_num_threads(1)
        dist.init_parallel_env()
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.version = str(getattr(oar, "__version__", "unknown"))

    def tensor(self, array):
        return self.oar.to_tensor(array)

    def zeros(self, n):
        return self.oar.zeros([n], dtype="float32")

    def all_reduce(self, t):
        n = t.size
        c = self.chunk // 4
        if not c or n <= c:
            self.dist.all_reduce(t)
            return
        pending = []
        for off in range(0, n, c):
            if len(pending) == self.window:
                pending.pop(0).wait()
            pending.append(self.dist.all_reduce(t[off:off + c], sync_op=False))
        for task in pending:
            task.wait()

    def numpy(self, t):
        return t.numpy()

    def barrier(self):
        self.dist.barrier()

    def max_over_ranks(self, value):
        import numpy as np
        t = self.oar.to_tensor(np.array([value], dtype=np.float64))
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return float(t.numpy()[0])

    def close(self):
        self.dist.destroy_process_group()


class GlooComm:
    name = "gloo"

    def __init__(self, rank, world, port):
        import torch
        import torch.distributed as dist
        torch.set_num_threads(1)
        self.torch, self.dist = torch, dist
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
        self.rank, self.world = rank, world
        self.version = torch.__version__

    def tensor(self, array):
        return self.torch.from_numpy(array.copy())

    def zeros(self, n):
        return self.torch.zeros(n, dtype=self.torch.float32)

    def all_reduce(self, t):
        self.dist.all_reduce(t)

    def numpy(self, t):
        return t.numpy()

    def barrier(self):
        self.dist.barrier()

    def max_over_ranks(self, value):
        t = self.torch.tensor([value], dtype=self.torch.float64)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return float(t[0])

    def close(self):
        self.dist.destroy_process_group()


def check(comm, nelem):
    """One all_reduce of small integers (exact in float32) against the closed form."""
    import numpy as np
    base = (np.arange(nelem) % 13).astype(np.float32)
    t = comm.tensor(base * np.float32(comm.rank + 1))
    comm.all_reduce(t)
    got = comm.numpy(t)
    want = base * np.float32(comm.world * (comm.world + 1) // 2)
    if not np.array_equal(got, want):
        bad = int(np.flatnonzero(got != want)[0])
        raise AssertionError(f"{comm.name}: all_reduce of {nelem} floats is wrong at [{bad}]: "
                             f"got {got[bad]}, want {want[bad]}")


def timed_run(comm, t, iters):
    comm.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        comm.all_reduce(t)
    mean = (time.perf_counter() - start) / iters
    return comm.max_over_ranks(mean)  # the slowest rank decides


def measure(comm, nbytes, quick):
    nelem = nbytes // 4
    check(comm, nelem)
    t = comm.zeros(nelem)  # zeros: the sums stay finite however often they run
    target, repeats = (0.05, 3) if quick else (0.25, 5)
    for _ in range(3):
        comm.all_reduce(t)
    probe = timed_run(comm, t, 3)
    iters = int(min(max(target / max(probe, 1e-7), 3), 200000))
    runs = [timed_run(comm, t, iters) for _ in range(repeats)]
    return {"seconds": statistics.median(runs), "runs": runs, "iters": iters}


def worker(args):
    if args.worker == "oar":
        comm = OarComm(args.oar_chunk, args.oar_window)
    else:
        comm = GlooComm(args.rank, args.world, args.port)
    out = {"framework": comm.name, "version": comm.version, "ranks": comm.world, "results": {}}
    try:
        for nbytes in sizes_up_to(args.max_size, args.quick):
            out["results"][str(nbytes)] = measure(comm, nbytes, args.quick)
    except Exception as e:  # report what finished, and why the rest did not
        out["error"] = f"{type(e).__name__}: {e}"
        if comm.rank == 0:
            print(MARK + json.dumps(out), flush=True)
        raise
    if comm.rank == 0:
        print(MARK + json.dumps(out), flush=True)
    comm.close()


# ---------------------------------------------------------------- driver

def launcher_works(python):
    try:
        r = subprocess.run([str(python), "-m", "oar.distributed.launch", "--help"], capture_output=True,
                           timeout=60, env=common.rank_env(), cwd=common.ROOT)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def worker_args(args):
    extra = ["--max-size", str(args.max_size), "--oar-chunk", str(args.oar_chunk),
             "--oar-window", str(args.oar_window)]
    return extra + (["--quick"] if args.quick else [])


def run_oar(n, args):
    python = common.PYTHONS["oar"]
    script = str(Path(__file__).resolve())
    if args.launcher == "launch":
        cmd = [str(python), "-m", "oar.distributed.launch", "--nproc_per_node", str(n)]
        if args.mpi_args:
            cmd += ["--mpi_args", args.mpi_args]
        cmd += [script, "--worker", "oar"] + worker_args(args)
    else:
        cmd = common.mpirun_cmd(n) + shlex.split(args.mpi_args) + [str(python), script, "--worker", "oar"]
        cmd += worker_args(args)
    return common.collect_ranks([common.start_rank(cmd)], args.timeout, MARK, strict=True)


def run_gloo(n, args):
    python = common.PYTHONS["torch"]
    if not python.exists():
        return {"skipped": f"{python} not found (run benchmarks/setup_peers.sh)"}
    port = common.free_port()
    procs = []
    for r in range(n):
        cmd = [str(python), str(Path(__file__).resolve()), "--worker", "gloo", "--rank", str(r), "--world", str(n),
               "--port", str(port)] + worker_args(args)
        procs.append(common.start_rank(cmd))
    return common.collect_ranks(procs, args.timeout, MARK, strict=True)


def busbw(nbytes, n, seconds):
    return nbytes * 2 * (n - 1) / n / seconds / 1e9


def print_table(n, sizes, oar, gloo):
    head = ["size", "oar us", "gloo us", "oar GB/s", "gloo GB/s", "oar/gloo"]
    rows, ratios = [], []
    for s in sizes:
        o = (oar.get("results") or {}).get(str(s))
        g = (gloo.get("results") or {}).get(str(s))
        row = [human(s)]
        row += [f"{r['seconds'] * 1e6:.1f}" if r else "-" for r in (o, g)]
        row += [f"{busbw(s, n, r['seconds']):.3f}" if r else "-" for r in (o, g)]
        if o and g:
            ratio = g["seconds"] / o["seconds"]  # = oar bus bandwidth / gloo bus bandwidth
            ratios.append(ratio)
            row.append(f"{ratio:.2f}x")
        else:
            row.append("-")
        rows.append(row)
    widths = [max(len(c) for c in col) for col in zip(head, *rows)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths)))
    print(f"\n{n} ranks (time per all_reduce: slowest rank's mean, median of runs; "
          f"bus bandwidth = bytes * 2 * (N-1) / N / time)")
    print(fmt(head))
    print(fmt(["-" * w for w in widths]))
    for row in rows:
        print(fmt(row))
    if ratios:
        met = sum(r >= 1.0 for r in ratios)
        print(f"oar/gloo = oar bus bandwidth / gloo bus bandwidth (>= 1: oar faster); "
              f"goal >= 1.0x met on {met} of {len(ratios)} sizes, min {min(ratios):.2f}x")
    return ratios


def driver(args):
    if args.launcher == "auto":
        args.launcher = "launch" if launcher_works(common.PYTHONS["oar"]) else "mpirun"
    info = common.machine_info()
    print(f"machine: {info['cpu']}, {info['cores']} cores ({info['machine']}); "
          f"every rank OMP_NUM_THREADS=1; oar ranks started with {args.launcher}"
          + (f" (mpirun args: {args.mpi_args})" if args.mpi_args else "")
          + (f"; oar all_reduce split into {human(args.oar_chunk)} chunks, {args.oar_window} in flight"
             if args.oar_chunk else ""))
    sizes = sizes_up_to(args.max_size, args.quick)
    report = {"machine": info, "launcher": args.launcher, "mpi_args": args.mpi_args,
              "oar_chunk": args.oar_chunk, "oar_window": args.oar_window, "ranks": {}}
    for n in args.ranks:
        best = {"oar": None, "gloo": None}
        for _ in range(args.rounds):
            for name, run in (("oar", run_oar), ("gloo", run_gloo)):
                if name not in args.frameworks:
                    continue
                res = run(n, args)
                for msg in filter(None, (res.get("skipped"), res.get("error"))):
                    print(f"{name} on {n} ranks: {msg}")
                best[name] = common.keep_fastest(best[name], res)
        oar, gloo = best["oar"] or {}, best["gloo"] or {}
        versions = ", ".join(f"{r['framework']} {r['version']}" for r in (oar, gloo) if "version" in r)
        if versions:
            print(f"\n({versions})", end="")
        print_table(n, sizes, oar, gloo)
        report["ranks"][str(n)] = {"oar": oar, "gloo": gloo}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.json}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4], help="rank counts (default: 2 4)")
    p.add_argument("--max-size", type=parse_size, default=64 * KIB ** 2,
                   help="largest message, e.g. 64M (default), 1M")
    p.add_argument("--quick", action="store_true", help="x16 size steps and short runs: a smoke test")
    p.add_argument("--rounds", type=int, default=2,
                   help="oar and gloo take turns this many times; each keeps its best round per size")
    p.add_argument("--frameworks", default="oar,gloo", help="comma list out of oar,gloo")
    p.add_argument("--launcher", choices=("auto", "launch", "mpirun"), default="auto",
                   help="how oar's ranks start: oar.distributed.launch (auto: when it works) or mpirun")
    p.add_argument("--mpi-args", default="", help="further mpirun options for oar, one shell-quoted string")
    p.add_argument("--oar-chunk", type=parse_size, default=0,
                   help="experiment: oar splits messages above this size (e.g. 1M) into all_reduces of this "
                        "size, --oar-window of them in flight (default 0: one all_reduce per message)")
    p.add_argument("--oar-window", type=int, default=4, help="chunks in flight with --oar-chunk (default 4)")
    p.add_argument("--timeout", type=float, default=900, help="seconds per framework and rank count")
    p.add_argument("--json", metavar="PATH", help="also write the raw results here")
    # worker mode
    p.add_argument("--worker", choices=("oar", "gloo"), help=argparse.SUPPRESS)
    p.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--world", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args()
    args.frameworks = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    if args.worker:
        worker(args)
    else:
        if any(n < 2 for n in args.ranks):
            p.error("--ranks must be at least 2")
        driver(args)


if __name__ == "__main__":
    main()
