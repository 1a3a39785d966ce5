"""The op fuzzer: every public function and Tensor method, called with
adversarial arguments in a child process (`make fuzz-ops`; a short
deterministic run is part of `make test`, tests/python/test_fuzz_ops.py).

A target is a public function of oar, oar.nn.functional or oar.linalg, or a
public Tensor method. For each target the fuzzer builds a plausible base call
(the op database's first sample where it has the op, else arguments chosen by
parameter name) and then replaces one argument at a time, or several at random
in the long run, by a value of each argument class below: empty and 0-d
tensors, every dtype, NaN/Inf, non-contiguous views, ranks up to 64 (through
reshape, tile, unsqueeze, ... since creation itself refuses ranks above the
limit), huge and negative integers, None, wrong types and mismatched shapes.

A call passes when it returns, or when it raises a Python exception whose
message starts with the API's name in brackets ("[oar.tile]", "[oar.Tensor.tile]",
"[oar.nn.functional.max_pool2d]": the last dotted part equal to the target's
name) and carries no C++ standard-library text. It fails on a crash (the child
dies), a hang (no answer within --timeout seconds), a memory blow-up (the child's
address space is capped at its size after start-up plus --mem-mb; a MemoryError
counts as one unless the arguments asked for a huge size), or an error that
does not name the API.

Usage:
  python tests/fuzz/fuzz_ops.py [--seconds S] [--seed N] [--quick] [--only NAME,...]

--quick: one pass of single-argument replacements with a fixed seed over a
fixed subset of classes (what `make test` runs). Without it, the full single
replacement pass runs first, then random multi-argument calls until --seconds.
The coverage table (targets x argument classes called) and every failure are
printed; the exit status is 1 if anything failed.
"""
import argparse
import inspect
import json
import os
import random
import re
import resource
import select
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Functions that change process-wide state or the file system, with why they
# are left to their own tests; everything else public is fuzzed.
SKIP = {
    "set_num_threads": "changes the process's thread pool (tested in test_tensor.py)",
    "set_default_dtype": "process-wide default (tested in test_tensor.py)",
    "enable_static": "switches the process to static-graph mode",
    "disable_static": "switches the process back to dynamic mode",
    "set_device": "process-wide device choice (tests/python/test_device.py)",
    "seed": "process-wide random state",
    "set_grad_enabled": "a context manager; process-wide grad mode",
    "no_grad": "a context manager", "enable_grad": "a context manager",
    "save": "writes files; covered by the loader fuzz tests",
    "load": "reads files; covered by the loader fuzz tests",
    "summary": "prints a model summary of a Layer (not an op)",
    "set_printoptions": "process-wide printing options",
    "get_rng_state": "process-wide random state", "set_rng_state": "process-wide random state",
    "set_cuda_rng_state": "process-wide random state", "get_cuda_rng_state": "process-wide random state",
    "register_hook": "keeps a Python callable on the tensor",
    "backward": "runs autograd over the fuzzer's own tensors (test_autograd.py)",
    "Model": "a class", "DataParallel": "a class",
}
MODULES = ("oar", "oar.nn.functional", "oar.linalg", "oar.fft", "oar.signal")


# ---------------------------------------------------------------- argument classes

def _classes():
    """name -> (maker, huge): maker() builds the value in the child; huge says
    the value asks for a huge size, so a clean MemoryError is a fair answer."""
    import numpy as np
    import oar

    def t(shape=(2, 3), dtype="float32"):
        a = np.random.default_rng(0).standard_normal(shape)
        if dtype == "bool":
            return oar.to_tensor(a > 0)
        if dtype == "bfloat16":
            return oar.to_tensor(a.astype("float32")).astype("bfloat16")
        if dtype.startswith("complex"):
            return oar.to_tensor((a + 1j * a).astype(dtype))
        if dtype.startswith(("int", "uint")):
            return oar.to_tensor((a * 3).astype(dtype))
        return oar.to_tensor(a.astype(dtype))

    def high_rank(r):
        return lambda: oar.reshape(oar.ones([1]), [1] * r)

    c = {
        "tensor": (lambda: t(), False),
        "tensor_0d": (lambda: oar.to_tensor(1.5), False),
        "tensor_empty": (lambda: oar.zeros([0, 3]), False),
        "tensor_empty_3d": (lambda: oar.zeros([2, 0, 4]), False),
        "tensor_nan_inf": (lambda: oar.to_tensor([[float("nan"), float("inf")], [-float("inf"), 0.0]]), False),
        "tensor_noncontig": (lambda: oar.transpose(t((3, 2)), [1, 0]), False),
        "tensor_mismatch": (lambda: t((4, 5)), False),
        "tensor_4d": (lambda: t((1, 2, 5, 5)), False),
        "tensor_1d": (lambda: t((6,)), False),
        "tensor_int_index": (lambda: oar.to_tensor([0, 1]), False),
        "tensor_bad_index": (lambda: oar.to_tensor([2 ** 40, -2 ** 40]), True),  # as sizes: huge
        "tensor_rank8": (lambda: oar.ones([1] * 8), False),
        "tensor_rank_max": (high_rank(16), False),
        "tensor_requires_grad": (lambda: _rg(t()), False),
        "int_0": (lambda: 0, False),
        "int_neg1": (lambda: -1, False),
        "int_neg": (lambda: -7, False),
        "int_2": (lambda: 2, False),
        "int_17": (lambda: 17, False),
        "int_64": (lambda: 64, False),
        "int_2p30": (lambda: 2 ** 30, True),
        "int_2p31": (lambda: 2 ** 31, True),
        "int_max64": (lambda: 2 ** 63 - 1, True),
        # huge in magnitude: arange(-2**63, 1) asks for 2**63 elements. A
        # negative size wrapping to a huge unsigned one is still caught by
        # int_neg and int_neg1, which are small.
        "int_min64": (lambda: -2 ** 63, True),
        "int_2p64": (lambda: 2 ** 64, True),
        "bool_true": (lambda: True, False),
        "float_1p5": (lambda: 1.5, False),
        "float_nan": (lambda: float("nan"), False),
        "float_inf": (lambda: float("inf"), True),
        "float_neg": (lambda: -2.5, False),
        "complex": (lambda: 1 + 2j, False),
        "none": (lambda: None, False),
        "str": (lambda: "abc", False),
        "str_dtype": (lambda: "float64", False),
        "dtype_int32": (lambda: oar.int32, False),
        "object": (lambda: object(), False),
        "dict": (lambda: {"a": 1}, False),
        "list_empty": (lambda: [], False),
        "list_ints": (lambda: [2, 3], False),
        "list_neg": (lambda: [-1, -5], False),
        "list_huge": (lambda: [2 ** 40, 2 ** 40], True),
        "list_rank64": (lambda: [1] * 64, False),
        "list_rank17": (lambda: [2] * 17, False),
        "list_mixed": (lambda: [1, "a"], False),
        "list_floats": (lambda: [1.5, 2.5], False),
        "list_tensors": (lambda: [t(), t()], False),
        "list_tensors_mismatch": (lambda: [t(), t((4, 5))], False),
        "tuple_nested": (lambda: ((1, 2), (3,)), False),
        "ndarray": (lambda: np.ones((2, 3), "float32"), False),
        "float_tensor_as_int": (lambda: oar.to_tensor(2.7), False),
    }
    for dt in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float64",
               "complex64", "complex128"):
        c[f"tensor_{dt}"] = ((lambda d: lambda: t((2, 3), d))(dt), False)
    return c


def _rg(x):
    x.stop_gradient = False
    return x


# Classes for the quick run: one of each kind.
QUICK = ("tensor_0d", "tensor_empty", "tensor_nan_inf", "tensor_noncontig", "tensor_mismatch", "tensor_rank_max",
         "tensor_int64", "tensor_bool", "tensor_float16", "tensor_complex64", "tensor_bad_index",
         "int_neg1", "int_17", "int_64", "int_2p31", "int_max64", "int_min64", "int_2p64", "float_nan", "none",
         "str", "object", "list_empty", "list_neg", "list_huge", "list_rank64", "list_rank17", "list_mixed",
         "list_tensors_mismatch", "float_tensor_as_int")


# ---------------------------------------------------------------- targets

def _targets():
    """{qualified name: callable} of every public function and Tensor method."""
    import oar
    import importlib
    out = {}
    for modname in MODULES:
        mod = importlib.import_module(modname)
        names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        for n in names:
            f = getattr(mod, n, None)
            if n in SKIP or n.startswith("_") or not callable(f) or inspect.isclass(f) or inspect.ismodule(f):
                continue
            if type(f).__name__ not in ("function", "nb_func", "builtin_function_or_method", "cython_function"):
                continue
            if getattr(f, "__module__", "") and not str(getattr(f, "__module__", "oar")).startswith("oar"):
                continue
            out[f"{modname}.{n}"] = f
    for n in dir(oar.Tensor):
        if n.startswith("_") or n in SKIP:
            continue
        try:
            f = getattr(oar.Tensor, n)
        except Exception:
            continue
        if callable(f) and not isinstance(inspect.getattr_static(oar.Tensor, n), property):
            out[f"oar.Tensor.{n}"] = f
    return out


def _selftest_targets():
    """Deliberately broken targets: each must be reported (--selftest)."""
    import ctypes

    def unnamed(x):
        raise ValueError("something went wrong")

    def segv(x):
        ctypes.string_at(0)

    def hang(x):
        time.sleep(3600)

    def mem(x):
        return bytearray(3 << 30)

    return {f"selftest.{f.__name__}": f for f in (unnamed, segv, hang, mem)}


def _params(f):
    """[(name, has_default, default)] of f's parameters (first overload for bound functions)."""
    try:
        sig = inspect.signature(f)
        ps = []
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            ps.append((p.name, p.default is not p.empty, None if p.default is p.empty else p.default))
        return ps
    except (TypeError, ValueError):
        pass
    doc = (getattr(f, "__doc__", None) or "").strip().split("\n")[0]
    m = re.match(r"[\w.]+\((.*)\)(\s*->.*)?$", doc)
    if not m:
        return [("x", False, None)]
    ps, depth, cur = [], 0, ""
    for ch in m.group(1) + ",":
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            cur = cur.strip()
            if cur and cur not in ("*", "/") and not cur.startswith("*"):
                name = cur.split(":")[0].split("=")[0].strip()
                ps.append((name, "=" in cur, None))
            cur = ""
        else:
            cur += ch
    return ps


_TENSOR_NAMES = {"x", "y", "input", "other", "label", "weight", "bias", "logit", "logits", "index", "mask",
                 "condition", "a", "b", "q", "k", "v", "query", "key", "value", "values", "updates", "target",
                 "self", "tensor", "grid", "theta", "indices", "src", "alpha_t", "vec", "mat", "x1", "x2",
                 "tensors", "inputs", "arr", "data", "running_mean", "running_var", "repeats", "lhs", "rhs"}


def _base_value(name, make):
    import oar
    if name in ("tensors", "inputs", "x_list"):
        return [make["tensor"][0](), make["tensor"][0]()]
    if name in ("index", "indices", "label") :
        return oar.to_tensor([0, 1])
    if name in _TENSOR_NAMES or name.startswith("x"):
        return make["tensor"][0]()
    if name in ("axis", "dim", "start_axis"):
        return 0
    if name in ("shape", "repeat_times", "perm", "axes", "sizes", "output_size", "kernel_size", "size"):
        return [2, 3] if name != "perm" else [1, 0]
    if name in ("dtype",):
        return "float32"
    return None


def _base_call(qname, f, make, opdb):
    """(args, kwargs) of a plausible call of f."""
    import numpy as np
    import oar
    short = qname.rsplit(".", 1)[1]
    info = opdb.get(short)
    if info is not None and not qname.startswith("oar.Tensor."):
        try:
            dt = "float32" if "float32" in info.dtypes else info.dtypes[0]
            s = info.samples(dt)[0]
            args = tuple(oar.to_tensor(np.asarray(a).astype("float32" if np.asarray(a).dtype.kind == "f" else
                                                              np.asarray(a).dtype))
                         if isinstance(a, np.ndarray) else a for a in s.args)
            return list(args), dict(s.kwargs)
        except Exception:
            pass
    params = _params(f)
    if qname.startswith("oar.Tensor.") and params and params[0][0] in ("self",):
        params = params[1:]
    args = []
    for name, has_default, _ in params:
        if has_default:
            break
        args.append(_base_value(name, make))
    if qname.startswith("oar.Tensor."):
        args.insert(0, make["tensor"][0]())
    return args, {}


# ---------------------------------------------------------------- the child

_STD_TEXT = re.compile(r"std::|vector::|basic_string|bad_alloc|bad_variant|stoll|stoi\b|out_of_range|"
                       r"incompatible function arguments|Invoked with|nanobind|_C\.|NoneType' object")


def _judge(qname, exc, huge, aliases=()):
    """None if exc is an acceptable error for target qname (or one of the
    names of the same function, `aliases`), else why not."""
    msg = str(exc)
    if isinstance(exc, MemoryError) and not huge:
        return f"memory blow-up on small arguments: {msg[:300]}"
    short = qname.rsplit(".", 1)[1].rstrip("_")
    m = re.match(r"\[oar\.([\w.]+)\]", msg)
    if not m:
        return f"message does not start with [oar.<api>]: {type(exc).__name__}: {msg[:300]}"
    named = m.group(1).rsplit(".", 1)[-1].rstrip("_")
    if named != short and named not in aliases:
        return f"message names [oar.{m.group(1)}], not {qname}: {type(exc).__name__}: {msg[:300]}"
    if _STD_TEXT.search(msg):
        return f"message shows internal text: {type(exc).__name__}: {msg[:300]}"
    if not isinstance(exc, (TypeError, ValueError, IndexError, NotImplementedError, RuntimeError, MemoryError,
                            OverflowError, KeyError, TimeoutError)):
        return f"untyped error {type(exc).__name__}: {msg[:300]}"
    return None


def _child(mem_mb):
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    import numpy as np  # noqa: F401
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import oar  # noqa: F401
    import opdb
    import warnings
    warnings.simplefilter("ignore")
    make = _classes()
    targets = _selftest_targets() if os.environ.get("OAR_FUZZ_SELFTEST") else _targets()
    # An alias (oar.floor_mod is oar.mod) may report under the function's other public names.
    by_obj = {}
    for q, f in targets.items():
        by_obj.setdefault(id(inspect.unwrap(f)), set()).add(q.rsplit(".", 1)[1].rstrip("_"))
    aliases = {q: by_obj[id(inspect.unwrap(f))] for q, f in targets.items()}
    db = {}
    for info in opdb.OP_DB:
        db.setdefault(info.name, info)
    limit_memory(mem_mb)
    out = sys.stdout
    sys.stdout = open(os.devnull, "w")  # targets that print must not garble the protocol
    out.write(json.dumps({"ready": sorted(targets)}) + "\n")
    out.flush()
    for line in sys.stdin:
        case = json.loads(line)
        qname, subs, seed = case["target"], case["subs"], case["seed"]
        random.seed(seed)
        f = targets[qname]
        res = {"status": "ok"}
        try:
            args, kwargs = _base_call(qname, f, make, db)
            huge = False
            for pos, cls in subs:
                val = make[cls][0]()
                huge = huge or make[cls][1]
                if isinstance(pos, int):
                    while len(args) <= pos:
                        args.append(None)
                    args[pos] = val
                else:
                    kwargs[pos] = val
        except Exception as e:  # building the arguments (not the target) failed
            res = {"status": "setup", "why": f"{type(e).__name__}: {e}"[:300]}
        else:
            try:
                r = f(*args, **kwargs)
                if inspect.isgenerator(r):
                    list(r)
            except Exception as e:  # noqa: B902 - every error is judged
                why = _judge(qname, e, huge, aliases[qname])
                res = {"status": "error" if why is None else "fail", "why": why}
        out.write(json.dumps(res) + "\n")
        out.flush()


# ---------------------------------------------------------------- the parent

def limit_memory(mem_mb):
    """Caps this process's address space at its size now plus mem_mb."""
    with open("/proc/self/status") as fs:
        vm = int(re.search(r"VmSize:\s+(\d+)", fs.read()).group(1)) * 1024
    limit = vm + (mem_mb << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class Worker:
    """A child process answering one JSON case per line (the fuzzers' protocol:
    it prints {"ready": [...]} once, then one verdict per case)."""

    def __init__(self, mem_mb, script=__file__):
        # an oar already on PYTHONPATH (a sanitizer build's) comes first
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (os.environ.get("PYTHONPATH"), os.path.join(HERE, "..", "..", "python")) if p),
            OMP_WAIT_POLICY="PASSIVE")
        self.p = subprocess.Popen([sys.executable, script, "--child", "--mem-mb", str(mem_mb)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  env=env, cwd=os.path.join(HERE, "..", "python"), text=True, bufsize=1)
        line = self._read(120)
        if line is None:
            raise RuntimeError(f"fuzz worker did not start (exit {self.p.poll()})")
        self.targets = json.loads(line)["ready"]

    def _read(self, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return None
        line = self.p.stdout.readline()
        return line or None

    def call(self, case, timeout):
        """The child's verdict, or ('crash'|'hang', detail) after which the worker is dead."""
        try:
            self.p.stdin.write(json.dumps(case) + "\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            pass
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        line = self.p.stdout.readline() if r else None
        if line:
            return json.loads(line)
        if line is None:  # no answer in time
            self.kill()
            return {"status": "fail", "why": f"hang: no answer within {timeout} s"}
        try:  # end of output: the child died; wait for its exit status
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        rc = self.p.returncode
        sig = -rc if rc < 0 else None
        what = f"crash: killed by {signal.Signals(sig).name}" if sig else f"crash: the process exited with {rc}"
        return {"status": "fail", "why": what}

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


class Campaign:
    """Cases run through a Worker (restarted after a crash or a hang), with the
    verdicts counted and the failures kept once per (target, kind of failure)."""

    def __init__(self, mem_mb, timeout, script=__file__):
        self.mem_mb, self.timeout, self.script = mem_mb, timeout, script
        self.worker = Worker(mem_mb, script)
        self.counts = {"ok": 0, "error": 0, "fail": 0, "setup": 0}
        self.failures = {}  # (target, normalised why) -> (case, why)

    def run(self, case):
        if self.worker is None:
            self.worker = Worker(self.mem_mb, self.script)
        res = self.worker.call(case, self.timeout)
        self.counts[res["status"]] += 1
        if res["status"] == "fail":
            key = (case["target"], re.sub(r"0x[0-9a-f]+|\d+", "N", res["why"])[:120])
            self.failures.setdefault(key, (case, res["why"]))
            if res["why"].startswith(("crash", "hang")):
                self.worker = None
        return res

    def close(self):
        if self.worker is not None:
            self.worker.kill()

    def report(self, fmt):
        """Prints each failure with fmt(case); the exit status."""
        for (q, _), (case, why) in sorted(self.failures.items()):
            print(f"FAIL {q} {fmt(case)}: {why}")
        return 1 if self.failures else 0


def _cases_single(targets, classes, nparams):
    for q in targets:
        for pos in range(nparams[q]):
            for c in classes:
                yield {"target": q, "subs": [[pos, c]], "seed": 0}


def campaign_args(doc, quick_help=None):
    """The options every fuzzer here takes: duration, seed, per-call limits, --quick, --child."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=1800)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--mem-mb", type=int, default=2048)
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--child", action="store_true")
    return ap


def main():
    ap = campaign_args(__doc__)
    ap.add_argument("--only", default="")
    ap.add_argument("--max-params", type=int, default=4)
    ap.add_argument("--selftest", action="store_true", help="fuzz deliberately broken targets; must fail")
    a = ap.parse_args()
    if a.child:
        _child(a.mem_mb)
        return 0
    if a.selftest:
        os.environ["OAR_FUZZ_SELFTEST"] = "1"
        a.quick, a.timeout = True, 5
    t0 = time.time()
    camp = Campaign(a.mem_mb, a.timeout)
    targets = camp.worker.targets
    if a.only:
        wanted = set(a.only.split(","))
        targets = [q for q in targets if q in wanted or q.rsplit(".", 1)[1] in wanted]
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import oar
    import importlib
    fns = {}
    for q in targets:
        mod, n = q.rsplit(".", 1)
        if mod == "selftest":
            fns[q] = lambda x: None
        else:
            fns[q] = getattr(oar.Tensor, n) if mod == "oar.Tensor" else getattr(importlib.import_module(mod), n)
    nparams = {q: max(1, min(a.max_params, len(_params(fns[q])))) for q in targets}
    all_classes = sorted(_classes())
    classes = ["tensor"] if a.selftest else list(QUICK) if a.quick else all_classes
    coverage = {}  # target -> set of classes
    rng = random.Random(a.seed)

    def run(case):
        if camp.run(case)["status"] != "setup":
            for _, c in case["subs"]:
                coverage.setdefault(case["target"], set()).add(c)

    for case in _cases_single(targets, classes, nparams):
        run(case)
        if not a.quick and time.time() - t0 > a.seconds:
            break
    random_calls = 0
    while not a.quick and time.time() - t0 < a.seconds:
        q = rng.choice(targets)
        k = rng.randint(1, min(3, nparams[q]))
        subs = [[p, rng.choice(all_classes)] for p in rng.sample(range(nparams[q]), k)]
        run({"target": q, "subs": subs, "seed": rng.randrange(1 << 30)})
        random_calls += 1
    camp.close()
    counts = camp.counts
    pairs = sum(len(v) for v in coverage.values())
    print(f"fuzz-ops: {len(targets)} targets x {len(classes)} argument classes; {pairs} (target, class) pairs "
          f"called; calls: {counts['ok']} returned, {counts['error']} typed errors, {counts['fail']} failures, "
          f"{counts['setup']} not built; {random_calls} random multi-argument calls; "
          f"{time.time() - t0:.0f} s")
    by_class = {c: sum(c in v for v in coverage.values()) for c in classes}
    print("coverage (targets called per class): " + ", ".join(f"{c} {n}" for c, n in sorted(by_class.items())))
    return camp.report(lambda case: f"{json.dumps(case['subs'])} seed={case['seed']}")


if __name__ == "__main__":
    sys.exit(main())
