"""Shared helpers for the benchmark scripts.

Each script runs as a driver that starts one worker subprocess per
(framework, thread count): oar with .venv/bin/python, the peers with
.venv-peers/bin/python. A worker imports only its own framework, pins the
thread count, times its cases and prints one JSON object on its last line.
The driver collects the objects, prints a table and optionally saves JSON.
With interleave=True (kernels, inference and training) every worker stays up and serves one case
at a time (--serve): the frameworks take turns case by case, so a shared
machine's slow drifts hit all of them alike.
"""
import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_PEERS_PY = Path(os.environ.get("PEERS_PYTHON", ROOT / ".venv-peers" / "bin" / "python"))
PYTHONS = {
    "oar": Path(os.environ.get("OAR_PYTHON", ROOT / ".venv" / "bin" / "python")),
    "torch": _PEERS_PY,
    "paddle": _PEERS_PY,
    # variants run by some benchmarks (inference.py): the same interpreters
    "oar-eager": Path(os.environ.get("OAR_PYTHON", ROOT / ".venv" / "bin" / "python")),
    "torch-compile": _PEERS_PY,
    "onnxruntime": _PEERS_PY,
    # libraries that some benchmarks (science.py's FFT section) compare too
    "numpy": _PEERS_PY,
    "scipy": Path(os.environ.get("OAR_PYTHON", ROOT / ".venv" / "bin" / "python")),  # a test dependency there
}
# The framework a variant imports (its thread settings apply).
BASE_FRAMEWORK = {"oar-eager": "oar", "torch-compile": "torch", "onnxruntime": "torch"}
FRAMEWORKS = ("oar", "torch", "paddle")
PEERS = ("torch", "paddle")
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
# Figures a worker's cases measured once during set-up (not timed by bench),
# by case; the driver prints them under the table (see note).
NOTES = {}


# ---------------------------------------------------------------- timing

def calibrate(fn, min_time):
    """The number of calls of fn() that takes about `min_time` seconds (after a warm-up call)."""
    fn()  # warm-up
    number = 1
    while True:
        t = _run(fn, number)
        if t >= min_time / 4 or number >= 1 << 24:
            break
        number *= 10
    return max(1, int(number * min_time / max(t, 1e-9)))


def bench(fn, repeats=7, min_time=0.2, stat=statistics.median):
    """Seconds per call of fn() over `repeats` runs of a calibrated number of
    calls, each run lasting about `min_time` seconds: the median run by
    default, or `stat` of the runs (min for throughput, where a shared
    machine's interference only ever adds time)."""
    number = calibrate(fn, min_time)
    return stat([_run(fn, number) / number for _ in range(repeats)])


def _run(fn, number):
    gc.disable()  # as timeit does
    try:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


# ---------------------------------------------------------------- frameworks

def pin_to_first_cpus(threads):
    """Run this process on the machine's first `threads` CPUs, so that every
    framework's worker uses the same ones (on a virtual machine the CPUs can
    differ in speed by several percent, with other guests' load)."""
    if hasattr(os, "sched_setaffinity") and threads < (os.cpu_count() or 1):
        os.sched_setaffinity(0, set(range(threads)))


def import_framework(name, threads):
    """Import `name` with its intra-op thread count set to `threads`."""
    name = BASE_FRAMEWORK.get(name, name)
    if name == "oar":
        try:
            import oar as fw
        except ImportError:  # not installed: try the in-tree package
            sys.path.insert(0, str(ROOT / "python"))
            import oar as fw
        if hasattr(fw, "set_num_threads"):
            fw.set_num_threads(threads)
    elif name == "torch":
        import torch as fw
        fw.set_num_threads(threads)
    elif name == "numpy":
        import numpy as fw  # numpy.fft is single-threaded
    elif name == "scipy":
        import scipy as fw
        import scipy.fft  # noqa: F401  (threads: its calls take workers=threads)
    elif name == "paddle":
        import paddle as fw
        fw.set_device("cpu")
        core = getattr(getattr(fw, "base", None), "core", None)
        if core is not None and hasattr(core, "set_num_threads"):
            core.set_num_threads(threads)
    else:
        raise ValueError(f"unknown framework {name!r}")
    return fw


def to_tensor(fw, name, array):
    import numpy as np
    array = np.ascontiguousarray(array)
    return fw.from_numpy(array.copy()) if name == "torch" else fw.to_tensor(array)


def thread_env(threads):
    env = dict(os.environ)
    for var in THREAD_VARS:
        env[var] = str(threads)
    return env


# ---------------------------------------------------------------- worker side

def note(case, text):
    """Attach a figure that a case measured once while it was set up (such as
    a compile included in the first call) to the worker's output; the driver
    prints it under the table and keeps it in the JSON."""
    NOTES.setdefault(case, []).append(text)


def _timed(fn, amount, unit, repeats, min_time, stat):
    return _value(bench(fn, repeats, min_time, stat), amount, unit)


def _value(s, amount, unit):
    if unit == "us":
        value = s * 1e6
    elif unit == "ms":
        value = s * 1e3
    elif unit == "steps/s":
        value = amount / s
    else:
        value = amount / s / 1e9
    return {"seconds": s, "value": value, "unit": unit}


def worker_main(cases, stat=statistics.median):
    """Entry point of a worker (`stat` as in bench). `cases(fw, name, quick)` yields
    (case, fn, amount, unit): unit "us" / "ms" reports micro/milliseconds per call,
    "steps/s" amount / seconds, any other unit amount / seconds / 1e9
    (GFLOP/s, GB/s).
    A case that raises is recorded under "errors" and the rest still run."""
    p = argparse.ArgumentParser()
    p.add_argument("--worker", required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--serve", action="store_true", help="read case numbers on stdin, answer one JSON line each")
    args, _ = p.parse_known_args()
    out = {"framework": args.worker, "threads": args.threads}
    pin_to_first_cpus(args.threads)
    try:
        fw = import_framework(args.worker, args.threads)
    except Exception as e:  # framework missing or broken: report and skip
        out["skipped"] = f"import failed: {type(e).__name__}: {e}"
        print(json.dumps(out))
        return
    out["version"] = str(getattr(fw, "__version__", "unknown"))
    if args.worker == "onnxruntime":
        import onnxruntime
        out["version"] = f"{onnxruntime.__version__} (export: torch {out['version']})"
    if BASE_FRAMEWORK.get(args.worker, args.worker) == "torch":
        out["threads_reported"] = fw.get_num_threads()
    repeats, min_time = (3, 0.05) if args.quick else (7, 0.2)
    results, errors = {}, {}
    items = []
    gen = cases(fw, args.worker, args.quick)
    while True:
        try:
            items.append(next(gen))
        except StopIteration:
            break
        except Exception as e:  # setup of the remaining cases failed
            errors["setup"] = f"{type(e).__name__}: {e}"
            break
    if NOTES:
        out["notes"] = NOTES
    if args.serve:
        # One timed run per request (calibrated on the first), so the driver
        # can alternate the frameworks run by run.
        print(json.dumps({**out, "cases": [it[0] for it in items], "repeats": repeats, "errors": errors}), flush=True)
        numbers = {}
        for line in sys.stdin:
            i = int(line)
            case, fn, amount, unit = items[i]
            try:
                if i not in numbers:
                    numbers[i] = calibrate(fn, min_time)
                sec = _run(fn, numbers[i]) / numbers[i]
                print(json.dumps({"case": case, **_value(sec, amount, unit)}), flush=True)
            except Exception as e:
                print(json.dumps({"case": case, "error": f"{type(e).__name__}: {e}"}), flush=True)
        return
    for case, fn, amount, unit in items:
        try:
            results[case] = _timed(fn, amount, unit, repeats, min_time, stat)
        except Exception as e:
            errors[case] = f"{type(e).__name__}: {e}"
    out["results"] = results
    if errors:
        out["errors"] = errors
    print(json.dumps(out))


# ---------------------------------------------------------------- driver side

def parse_args(description, default_threads, frameworks=FRAMEWORKS):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--frameworks", default=",".join(frameworks),
                   help="comma list out of " + ",".join(frameworks))
    p.add_argument("--threads", default=default_threads,
                   help="comma list of thread counts, e.g. 1,2")
    p.add_argument("--json", metavar="PATH", help="also write results here")
    p.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    p.add_argument("--rounds", type=int, default=2,
                   help="run the frameworks in turn this many times and keep each one's best round "
                        "(a shared machine's interference only ever adds time)")
    args = p.parse_args()
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    args.frameworks = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    bad = set(args.frameworks) - set(frameworks)
    if bad:
        p.error(f"unknown frameworks: {', '.join(sorted(bad))}")
    args.threads = [int(t) for t in str(args.threads).split(",")]
    return args


def run_worker(script, name, threads, quick=False, timeout=1800):
    """Run `script` as a worker for framework `name`; always returns a dict,
    with a "skipped" reason if the framework could not be run."""
    python = PYTHONS[name]
    base = {"framework": name, "threads": threads}
    if not python.exists():
        hint = "build oar into .venv" if name == "oar" else "run benchmarks/setup_peers.sh"
        return {**base, "skipped": f"{python} not found ({hint})"}
    cmd = [str(python), str(script), "--worker", name, "--threads", str(threads)]
    if quick:
        cmd.append("--quick")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=thread_env(threads), cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {**base, "skipped": f"timed out after {timeout}s"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode == 0 and lines:
        try:
            return json.loads(lines[-1])
        except json.JSONDecodeError:
            pass
    err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {**base, "skipped": f"exit code {proc.returncode}: {err}"}


def keep_fastest(best, res):
    """Merges run `res` into `best` (None at first), keeping each case's
    fastest result; a run without results (skipped) leaves `best` as it is."""
    if "results" not in res:
        return best or res
    if best is None or "results" not in best:
        return res
    for case, r in res["results"].items():
        if case not in best["results"] or r["seconds"] < best["results"][case]["seconds"]:
            best["results"][case] = r
    return best


def cpu_ticks(pid):
    """CPU time (user + system, in clock ticks) of process `pid` and all its threads; None without /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def wait_quiet(pid, window=0.05, limit=2.0):
    """Waits until process `pid` stops using the CPU: after a run, idle
    worker threads of some runtimes spin for a while (OpenMP's default block
    time is 200 ms), and the next framework's run should not pay for that.
    Gives up after `limit` seconds."""
    deadline = time.monotonic() + limit
    last = cpu_ticks(pid)
    while last is not None and time.monotonic() < deadline:
        time.sleep(window)
        now = cpu_ticks(pid)
        if now is None or now == last:
            return
        last = now


def _run_interleaved(script, args):
    """One serving worker per (framework, threads); every timed run of a case
    alternates between the frameworks (rounds x cases x repeats), each on a
    quiet machine (the previous worker's threads no longer spinning), and
    each keeps its fastest run."""
    workers, best, repeats = {}, {}, 7
    try:
        for threads in args.threads:
            for name in args.frameworks:
                base = {"framework": name, "threads": threads}
                if not PYTHONS[name].exists():
                    print(f"skipping {name} ({threads} thread(s)): {PYTHONS[name]} not found")
                    continue
                cmd = [str(PYTHONS[name]), str(script), "--worker", name, "--threads", str(threads), "--serve"]
                if args.quick:
                    cmd.append("--quick")
                proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True, env=thread_env(threads), cwd=ROOT)
                try:
                    head = json.loads(proc.stdout.readline())
                except json.JSONDecodeError:
                    head = {"skipped": "the worker did not start"}
                if "skipped" in head or "cases" not in head:
                    print(f"skipping {name} ({threads} thread(s)): {head.get('skipped')}")
                    proc.kill()
                    continue
                for case, err in head.get("errors", {}).items():
                    print(f"{name} ({threads} thread(s)) failed {case}: {err}")
                workers[(name, threads)] = (proc, head["cases"])
                repeats = head.get("repeats", 7)
                best[(name, threads)] = {**base, "version": head.get("version"), "results": {}}
                if head.get("notes"):
                    best[(name, threads)]["notes"] = head["notes"]
        for _ in range(args.rounds):
            for threads in args.threads:
                order = next((c for (n, t), (_, c) in workers.items() if t == threads), [])
                for case in order:
                    for name in args.frameworks * repeats:
                        if (name, threads) not in workers or case not in workers[(name, threads)][1]:
                            continue
                        proc, names = workers[(name, threads)]
                        proc.stdin.write(f"{names.index(case)}\n")
                        proc.stdin.flush()
                        line = proc.stdout.readline()
                        wait_quiet(proc.pid)
                        res = json.loads(line) if line else {"case": case, "error": "the worker exited"}
                        if "error" in res:
                            print(f"{name} ({threads} thread(s)) failed {case}: {res['error']}")
                            continue
                        res.pop("case")
                        best[(name, threads)] = keep_fastest(best[(name, threads)], {"results": {case: res}})
    finally:
        for proc, _ in workers.values():
            proc.kill()
    return list(best.values())


def run_all(script, args, interleave=False):
    """Run every (framework, threads) worker, `args.rounds` times with the
    frameworks taking turns (case by case with `interleave`), and keep per
    case the fastest round of each; reports skips as they happen."""
    if interleave:
        return _run_interleaved(script, args)
    best = {}
    for _ in range(getattr(args, "rounds", 1)):
        for threads in args.threads:
            for name in args.frameworks:
                r = run_worker(script, name, threads, args.quick)
                if "skipped" in r:
                    print(f"skipping {name} ({threads} thread(s)): {r['skipped']}")
                for case, err in r.get("errors", {}).items():
                    print(f"{name} ({threads} thread(s)) failed {case}: {err}")
                best[(name, threads)] = keep_fastest(best.get((name, threads)), r)
    return list(best.values())


def machine_info():
    import numpy as np
    cpu = platform.processor()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"python": platform.python_version(), "numpy": np.__version__,
            "cpu": cpu, "cores": os.cpu_count(), "machine": platform.machine()}


def print_header(info, runs):
    print(f"machine: {info['cpu']}, {info['cores']} cores ({info['machine']})")
    seen = set()
    for r in runs:
        if r["framework"] not in seen and "version" in r:
            seen.add(r["framework"])
            print(f"  {r['framework']:<14}{r['version']}")
    print()


def table(runs, ratio_peers, peers=PEERS):
    """Print one row per (case, threads) with each framework's value and the
    ratios oar time / peer time (< 1 means oar is faster).

    ratio_peers: peer names to compare with one by one, or "best" to compare
    with the fastest of the available `peers`."""
    frameworks = list(dict.fromkeys(r["framework"] for r in runs if "results" in r))
    by_key, pos = {}, {}
    for r in runs:
        for i, (case, res) in enumerate(r.get("results", {}).items()):
            by_key.setdefault((case, r["threads"]), {})[r["framework"]] = res
            pos[case] = max(pos.get(case, i), i)  # a run missing cases shifts others up
    if not by_key:
        print("no results")
        return
    if "oar" not in frameworks:
        ratio_cols = []
    elif ratio_peers == "best":
        ratio_cols = ["oar/best peer"]
    else:
        ratio_cols = [f"oar/{p}" for p in ratio_peers]
    head = ["case", "thr", "unit"] + frameworks + ratio_cols
    rows = []
    for (case, threads), res in sorted(by_key.items(), key=lambda kv: (kv[0][1], pos[kv[0][0]])):
        row = [case, str(threads), next(iter(res.values()))["unit"]]
        row += [f"{res[f]['value']:.4g}" if f in res else "-" for f in frameworks]
        if ratio_cols:
            if ratio_peers == "best":
                found = [res[p] for p in peers if p in res]
                best = min(found, key=lambda x: x["seconds"]) if found else None
                row.append(_ratio(res.get("oar"), best))
            else:
                row += [_ratio(res.get("oar"), res.get(p)) for p in ratio_peers]
        rows.append(row)
    widths = [max(len(c) for c in col) for col in zip(head, *rows)]

    def fmt(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))

    print(fmt(head))
    print(fmt(["-" * w for w in widths]))
    for row in rows:
        print(fmt(row))
    if ratio_cols:
        print("\nratio = oar time / peer time (< 1: oar faster)")
    notes = [(r, case, texts) for r in runs for case, texts in r.get("notes", {}).items()]
    if notes:
        print("\nmeasured once, not in the table:")
        for r, case, texts in notes:
            print(f"  {r['framework']} ({r['threads']} thr) {case}: {'; '.join(texts)}")


def _ratio(oar, peer):
    if not oar or not peer:
        return "-"
    return f"{oar['seconds'] / peer['seconds']:.2f}x"


def save_json(path, benchmark, info, runs, extra=None):
    if not path:
        return
    doc = {"benchmark": benchmark, "machine": info, "runs": runs, **(extra or {})}
    Path(path).write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {path}")


# ---------------------------------------------------------------- distributed benchmarks

def rank_env():
    """Environment of one rank of a distributed benchmark: one thread per rank,
    oar importable, gloo on loopback (the ranks share this machine)."""
    env = dict(os.environ)
    for var in THREAD_VARS:
        env[var] = "1"
    env["PYTHONPATH"] = str(ROOT / "python") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["GLOO_SOCKET_IFNAME"] = "lo"
    return env


def mpirun_cmd(n):
    """mpirun for n oar ranks on this machine; a failing rank does not take the others down at once."""
    cmd = ["mpirun", "-np", str(n), "--oversubscribe", "--bind-to", "none",
           "--mca", "orte_abort_on_non_zero_status", "0"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def start_rank(cmd):
    """Starts one process of a distributed benchmark (rank_env, output captured)."""
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=rank_env(), cwd=ROOT)


def collect_ranks(procs, timeout, mark, strict=False):
    """Waits for the processes (all killed at the deadline) and returns the
    JSON that the first one printed after `mark`, or {"skipped": why}. With
    `strict`, a process that failed without the result saying so also skips."""
    outs = []
    deadline = time.monotonic() + timeout
    try:
        for p in procs:
            outs.append(p.communicate(timeout=max(1, deadline - time.monotonic())))
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
            p.wait()
        return {"skipped": f"timed out after {timeout}s"}
    res = None
    for line in reversed(outs[0][0].splitlines()):
        if mark in line:
            res = json.loads(line.split(mark, 1)[1])
            break
    bad = [(p.returncode, o) for p, o in zip(procs, outs) if p.returncode]
    if res is None or strict and bad and "error" not in res:
        rc, (o, e) = bad[0] if bad else (procs[0].returncode, outs[0])
        lines = [ln for ln in (e + o).strip().splitlines() if ln.strip()]
        return {"skipped": f"exit code {rc}: " + (" | ".join(lines[-3:]) if lines else "no output")}
    return res


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
