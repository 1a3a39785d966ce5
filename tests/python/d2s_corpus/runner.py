"""Runs the corpus in each mode and compares every converted run with eager.

Modes: ``eager`` (the reference: the Python code as written), ``full_graph``
(``to_static(..., full_graph=True)``: the whole function must become one
program) and ``default`` (``to_static(..., full_graph=False)``, Paddle 3.x's
default: graph breaks fall back to Python).

Per program and mode the runner builds a fresh callable (Program.fresh: a deep
copy of a Layer, or a new model and optimizer from the program's factory), so
every mode starts from identical state, then runs every input set in order
through ONE converted wrapper: later input sets hit the wrapper's caches, which
is what checks that a cached program still picks the right branch or
iteration count for new data.

Recorded per mode: whether every input set ran, whether the outputs equal
eager (float: np.allclose rtol 1e-5 / atol 1e-6; ints, bools, strings: exact;
nested structures leaf by leaf, with their container types), the graph-break
and compile counters of the StaticFunction where it has them (None where the
converter does not provide them), the compile time (first converted call's
wall time minus a warm eager call's), and the exception on failure.

Run it directly for a one-line-per-program summary:
``PYTHONPATH=python .venv/bin/python tests/python/d2s_corpus/runner.py [name ...]``
"""
import contextlib
import dataclasses
import io
import os
import signal
import sys
import threading
import time
import traceback
import warnings

import numpy as np

import oar

if __package__ in (None, ""):  # run as a script: make the package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from d2s_corpus import PROGRAMS, registry  # noqa: E402
else:
    from . import PROGRAMS, registry

MODES = ("eager", "full_graph", "default")
RTOL, ATOL = 1e-5, 1e-6
TIMEOUT_S = 60  # per program and mode: a converted loop that never ends is a failure, not a hang
_CORPUS_DIR = os.path.dirname(os.path.abspath(__file__))


@dataclasses.dataclass
class ModeResult:
    mode: str
    ran: bool = False
    equal: object = None  # True/False once compared with eager; None when it did not run (or is eager)
    mismatch: str = ""  # the first leaf that differs
    error: str = ""  # "ExceptionType: first line of the message"
    where: str = ""  # the corpus line the exception came from, when it came from corpus code
    failed_input: int = -1  # index of the input set that raised
    graph_breaks: object = None  # list of (filename, lineno, reason), or None where not provided
    compile_count: object = None
    recompile_count: object = None
    first_call_s: float = 0.0
    total_s: float = 0.0
    compile_s: object = None  # first converted call minus a warm eager call

    @property
    def n_graph_breaks(self):
        return None if self.graph_breaks is None else len(self.graph_breaks)


@dataclasses.dataclass
class ProgramResult:
    name: str
    tags: tuple
    expect_full_graph: bool
    reason: str
    modes: dict  # mode -> ModeResult

    def __getitem__(self, mode):
        return self.modes[mode]


# ---------------------------------------------------------------- inputs and outputs


def materialize(value):
    """A fresh copy of an input set's value with every ndarray turned into an oar tensor."""
    if isinstance(value, np.ndarray):
        return oar.to_tensor(value.copy())
    if isinstance(value, tuple):
        return tuple(materialize(v) for v in value)
    if isinstance(value, list):
        return [materialize(v) for v in value]
    if isinstance(value, dict):
        return {k: materialize(v) for k, v in value.items()}
    return value


class Node:
    """A container in an output tree: its kind (list, tuple, dict, a dataclass's name) and items."""

    __slots__ = ("kind", "items")

    def __init__(self, kind, items):
        self.kind, self.items = kind, items


def to_tree(out):
    """The output with NumPy arrays for tensors and Nodes for containers (dataclasses by name)."""
    if isinstance(out, oar.Tensor):
        return out.numpy().copy()
    if dataclasses.is_dataclass(out) and not isinstance(out, type):
        return Node(f"dataclass {type(out).__name__}",
                    {f.name: to_tree(getattr(out, f.name)) for f in dataclasses.fields(out)})
    if isinstance(out, (list, tuple)):
        return Node(type(out).__name__, [to_tree(v) for v in out])
    if isinstance(out, dict):
        return Node("dict", {k: to_tree(v) for k, v in out.items()})
    if isinstance(out, (np.generic, np.ndarray)):
        return np.asarray(out).copy()
    return out


def compare(ref, got, path="out"):
    """None when got equals ref, else a description of the first difference."""
    if isinstance(ref, np.ndarray):
        if not isinstance(got, np.ndarray):
            return f"{path}: expected an array, got {type(got).__name__}"
        if ref.shape != got.shape:
            return f"{path}: shape {list(got.shape)} != {list(ref.shape)}"
        if ref.dtype != got.dtype:
            return f"{path}: dtype {got.dtype} != {ref.dtype}"
        if ref.dtype.kind in "fc":
            if not np.allclose(got, ref, rtol=RTOL, atol=ATOL, equal_nan=True):
                err = np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64))) if ref.size else 0.0
                return f"{path}: values differ (max abs err {err:.3g})"
        elif not np.array_equal(got, ref):
            return f"{path}: values differ"
        return None
    if isinstance(ref, Node):
        if not isinstance(got, Node) or got.kind != ref.kind:
            return f"{path}: expected a {ref.kind}, got {got.kind if isinstance(got, Node) else type(got).__name__}"
        if isinstance(ref.items, dict):
            if list(got.items) != list(ref.items):
                return f"{path}: keys {list(got.items)} != {list(ref.items)}"
            pairs = [(f"{path}[{k!r}]", ref.items[k], got.items[k]) for k in ref.items]
        else:
            if len(got.items) != len(ref.items):
                return f"{path}: length {len(got.items)} != {len(ref.items)}"
            pairs = [(f"{path}[{i}]", r, g) for i, (r, g) in enumerate(zip(ref.items, got.items))]
        for p, r, g in pairs:
            d = compare(r, g, p)
            if d:
                return d
        return None
    if isinstance(ref, float) and isinstance(got, float):
        return None if np.isclose(got, ref, rtol=RTOL, atol=ATOL, equal_nan=True) else f"{path}: {got} != {ref}"
    if type(ref) is not type(got) or ref != got:
        return f"{path}: {got!r} ({type(got).__name__}) != {ref!r} ({type(ref).__name__})"
    return None


# ---------------------------------------------------------------- running


def _describe_error(e):
    lines = str(e).strip().splitlines()
    first = lines[0] if lines else ""
    where = ""
    for frame in reversed(traceback.extract_tb(e.__traceback__)):
        if os.path.abspath(frame.filename).startswith(_CORPUS_DIR) and not frame.filename.endswith(
                ("runner.py", "registry.py")):
            where = f"{os.path.basename(frame.filename)}:{frame.lineno}"
            break
    return f"{type(e).__name__}: {first}"[:300], where


class _Deadline:
    """Raises TimeoutError in the block after `seconds` (main thread with SIGALRM only; else no limit)."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.armed = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()

    def _fire(self, signum, frame):
        raise TimeoutError(f"did not finish within {self.seconds} s")

    def __enter__(self):
        if self.armed:
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False


def _convert(fn, prog, full_graph):
    """The to_static wrapper of a fresh callable, and the StaticFunction holding its counters."""
    kwargs = {"full_graph": full_graph}
    if prog.input_spec is not None:
        kwargs["input_spec"] = prog.input_spec
    converted = oar.jit.to_static(fn, **kwargs)
    sf = converted.forward if isinstance(converted, oar.nn.Layer) else converted
    return converted, sf


def run_mode(prog, mode, reference=None, eager_first_s=None):
    """Runs every input set of prog in one mode; returns (ModeResult, the output trees)."""
    res = ModeResult(mode)
    outs = []
    sf = None
    # Programs may print; their output is not part of the comparison.
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), _Deadline(TIMEOUT_S):
        warnings.simplefilter("ignore")
        try:
            fn = prog.fresh()
            if mode != "eager":
                fn, sf = _convert(fn, prog, full_graph=(mode == "full_graph"))
        except Exception as e:  # a conversion that refuses the callable itself
            res.error, res.where = _describe_error(e)
            res.failed_input = 0
            return res, outs
        oar.seed(registry.SEED)
        start = time.perf_counter()
        for i, inp in enumerate(prog.inputs):
            args, kwargs = materialize(inp.args), materialize(inp.kwargs)
            t0 = time.perf_counter()
            try:
                out = fn(*args, **kwargs)
                tree = to_tree(out)
            except Exception as e:
                res.error, res.where = _describe_error(e)
                res.failed_input = i
                break
            if i == 0:
                res.first_call_s = time.perf_counter() - t0
            outs.append(tree)
        else:
            res.ran = True
        res.total_s = time.perf_counter() - start
    if sf is not None:
        gb = getattr(sf, "graph_breaks", None)
        res.graph_breaks = list(gb) if gb is not None else None
        res.compile_count = getattr(sf, "compile_count", None)
        res.recompile_count = getattr(sf, "recompile_count", None)
    if mode != "eager" and res.ran and reference is not None:
        diffs = [compare(r, g, f"input set {i}: out") for i, (r, g) in enumerate(zip(reference, outs))]
        diffs = [d for d in diffs if d]
        res.equal = not diffs
        res.mismatch = diffs[0] if diffs else ""
        if eager_first_s is not None:
            res.compile_s = res.first_call_s - eager_first_s
    return res, outs


def run_program(prog, modes=MODES):
    """All modes of one program; converted modes are compared with the eager outputs."""
    results = {}
    eager, ref = run_mode(prog, "eager")
    results["eager"] = eager
    # The first eager run pays one-time costs (first use of kernels and
    # allocator pools); compile time is measured against a warm eager call.
    warm, _ = run_mode(prog, "eager")
    eager_s = min(eager.first_call_s, warm.first_call_s) if warm.ran else eager.first_call_s
    for mode in modes:
        if mode == "eager":
            continue
        results[mode], _ = run_mode(prog, mode, ref if eager.ran else None, eager_s)
    return ProgramResult(prog.name, prog.tags, prog.expect_full_graph, prog.reason, results)


def run_all(programs=None, modes=MODES, progress=None):
    out = []
    for prog in programs if programs is not None else PROGRAMS:
        r = run_program(prog, modes)
        if progress:
            progress(prog, r)
        out.append(r)
    return out


def _status(m):
    if not m.ran:
        return "FAIL"
    if m.equal is False:
        return "WRONG"
    return "ok"


def main(argv):
    names = set(argv)
    progs = [p for p in PROGRAMS if not names or p.name in names]

    def progress(p, r):
        cells = " ".join(f"{m}={_status(r[m]):5s}" for m in MODES)
        err = next((f"{r[m].error} [{r[m].where}] {r[m].mismatch}" for m in MODES
                    if not r[m].ran or r[m].equal is False), "")
        print(f"{p.name:40s} {cells} {err[:150]}", flush=True)

    t0 = time.perf_counter()
    run_all(progs, progress=progress)
    print(f"{len(progs)} programs in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
