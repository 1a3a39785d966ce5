"""Runs the Paddle scripts of examples/paddle_compat under PaddlePaddle and under oar, and compares them.

Each script runs twice, unchanged: under the peers' environment with the real PaddlePaddle, and under
oar's environment with a temporary ``paddle`` package on PYTHONPATH that makes ``import paddle`` (and
every ``paddle.x.y`` submodule) resolve to oar's module of the same path. The printed result lines
(``name: v1 v2 ... [| rtol=R atol=A]``, see examples/paddle_compat/_common.py) are compared value by
value: numbers within the tolerance (default rtol 1e-4, atol 1e-6), everything else exactly. The table
goes to docs/paddle_side_by_side.md.

    python tools/paddle_side_by_side.py [--peers .venv-peers/bin/python] [--oar .venv/bin/python]
                                        [--out docs/paddle_side_by_side.md] [script ...]

Paddle is needed only by this tool, never by the tests.
"""
import argparse
import glob
import math
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "examples", "paddle_compat")
DEFAULT_RTOL, DEFAULT_ATOL = 1e-4, 1e-6

# The stand-in ``paddle`` package: a finder placed first on sys.meta_path answers every ``paddle.*``
# import with oar's module of the same path, so each module exists once under both names.
_SHIM = r'''
import importlib
import importlib.abc
import importlib.util
import sys


class _OarAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.startswith("paddle."):
            # An ImportError propagates: no other finder may load oar's files a second time as paddle.*.
            importlib.import_module("oar" + name[len("paddle"):])
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return sys.modules["oar" + spec.name[len("paddle"):]]

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _OarAlias())
import oar  # noqa: E402

for _name, _mod in list(sys.modules.items()):
    if _name.startswith("oar."):
        sys.modules.setdefault("paddle" + _name[len("oar"):], _mod)
sys.modules["paddle"] = oar
'''

# Diagnosed causes of the differences, written into the report only for scripts that still differ
# or fail in oar (a fixed cause drops out of the report by itself).
CAUSES = {
    "amp_bf16.py": "By design: oar's auto_cast and GradScaler work on CPU (bfloat16 ops, is_enable() True), where "
                   "Paddle's make no effect and warn; losses agree within the bfloat16 tolerance.",
    "grad_clip.py": "ClipGradByGlobalNorm scales the gradients it gives the optimizer out of place (param.grad keeps "
                    "the unclipped values); Paddle scales param.grad in place, so gradients accumulated afterwards "
                    "differ (docs/paddle_compat.md).",
    "static_graph.py": "In static mode only data() variables report -1 for dynamic dims; values computed from "
                       "them report the example size 2 (Note [declared shapes], python/oar/static/program.py), "
                       "so code that reads .shape bakes 2 into the program (reshape(h, [h.shape[0], -1]) then "
                       "silently gives a [2, 15] result for a batch of 5).",
    "to_static_control_flow.py": "oar.jit.to_static traces and does not convert Python control flow: `if tensor:` "
                                 "and `while tensor < n:` raise Dy2StaticError (python/oar/jit/_guard.py), where "
                                 "Paddle's dy2static turns them into cond / while_loop.",
}

_LINE = re.compile(r"^([A-Za-z0-9_.\-]+): (.*?)(?: \| ((?:[a-z]+=[^ ]+ ?)+))?$")


def parse(text):
    """Result lines as an ordered list of (name, tokens, tolerances)."""
    out = []
    for line in text.splitlines():
        m = _LINE.match(line.rstrip())
        if not m:
            continue
        tol = {}
        for kv in (m.group(3) or "").split():
            k, v = kv.split("=", 1)
            tol[k] = float(v)
        out.append((m.group(1), m.group(2).split(" "), tol))
    return out


def _num(tok):
    try:
        return float(tok)
    except ValueError:
        return None


def compare_line(want, got, tol):
    """None when the token lists agree, else a short description of the first difference."""
    rtol, atol = tol.get("rtol", DEFAULT_RTOL), tol.get("atol", DEFAULT_ATOL)
    if len(want) != len(got):
        return f"{len(want)} values in Paddle, {len(got)} in oar"
    for i, (w, g) in enumerate(zip(want, got)):
        fw, fg = _num(w), _num(g)
        if fw is not None and fg is not None:
            if math.isnan(fw) and math.isnan(fg):
                continue
            if not abs(fw - fg) <= atol + rtol * abs(fw):
                return f"value {i}: Paddle {w}, oar {g}"
        elif w != g:
            return f"value {i}: Paddle {w!r}, oar {g!r}"
    return None


def compare(paddle_lines, oar_lines):
    """(number of Paddle's lines, how many of them oar matched, the differences as one-line strings)."""
    got = {}
    for name, toks, _ in oar_lines:
        got.setdefault(name, []).append(toks)
    seen = {}
    diffs, missing = [], []
    agreed = 0
    for name, toks, tol in paddle_lines:
        k = seen.get(name, 0)
        seen[name] = k + 1
        mine = got.get(name, [])
        if k >= len(mine):
            missing.append(name)
            continue
        d = compare_line(toks, mine[k], tol)
        if d:
            diffs.append(f"`{name}`: {d}")
        else:
            agreed += 1
    if missing:
        diffs.append(f"{len(missing)} line(s) not printed by oar, from `{missing[0]}`")
    extra = [n for n in got if n not in seen]
    diffs += [f"`{n}` printed only by oar" for n in extra]
    return len(paddle_lines), agreed, diffs


def run(python, script, env, timeout):
    t0 = time.time()
    try:
        r = subprocess.run([python, os.path.basename(script)], cwd=os.path.dirname(script), env=env,
                           capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr, time.time() - t0
    except subprocess.TimeoutExpired as e:
        return -1, e.stdout or "", f"timed out after {timeout} s", time.time() - t0


def last_error(stderr):
    """The exception line of a traceback (or the last line), for the table."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b", ln):
            return ln.strip()
    return lines[-1].strip() if lines else "(no message)"


def _cell(text, limit=300):
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peers", default=os.path.join(ROOT, ".venv-peers", "bin", "python"))
    ap.add_argument("--oar", default=os.path.join(ROOT, ".venv", "bin", "python"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "paddle_side_by_side.md"))
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("scripts", nargs="*", help="script names (default: every script in examples/paddle_compat)")
    args = ap.parse_args()

    scripts = sorted(p for p in glob.glob(os.path.join(SCRIPTS, "*.py")) if not os.path.basename(p).startswith("_"))
    if args.scripts:
        wanted = {s if s.endswith(".py") else s + ".py" for s in args.scripts}
        scripts = [p for p in scripts if os.path.basename(p) in wanted]

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        shim = os.path.join(tmp, "shim", "paddle")
        os.makedirs(shim)
        with open(os.path.join(shim, "__init__.py"), "w") as f:
            f.write(_SHIM)
        shared = os.path.join(tmp, "shared")
        os.makedirs(shared)
        base = dict(os.environ, PADDLE_COMPAT_SHARED=shared, PYTHONHASHSEED="0", OMP_NUM_THREADS="1",
                    GLOG_minloglevel="2", PYTHONWARNINGS="ignore")
        base.pop("PYTHONPATH", None)
        env_paddle = dict(base)
        env_oar = dict(base, PYTHONPATH=os.pathsep.join([os.path.join(tmp, "shim"), os.path.join(ROOT, "python")]))
        for script in scripts:
            name = os.path.basename(script)
            # Paddle runs first: scripts that exchange files read what Paddle wrote.
            rc_p, out_p, err_p, t_p = run(args.peers, script, env_paddle, args.timeout)
            rc_o, out_o, err_o, t_o = run(args.oar, script, env_oar, args.timeout)
            lines_p, lines_o = parse(out_p), parse(out_o)
            n, agreed, diffs = compare(lines_p, lines_o)
            if rc_p != 0:
                status, detail = "fails in Paddle", last_error(err_p)
            elif rc_o != 0:
                status = "fails in oar"
                detail = last_error(err_o)
                if diffs and lines_o:
                    first = next((d for d in diffs if "not printed" not in d), None)
                    if first:
                        detail = f"{first}; then {detail}"
                detail += f" ({agreed}/{n} lines agreed)"
            elif diffs:
                status, detail = "differs", f"{len(diffs)}/{n} lines differ; first: {diffs[0]}"
            else:
                status, detail = "same", f"{n} lines agree"
            rows.append((name, status, detail, t_p, t_o, diffs))
            print(f"{name:28s} {status:16s} {detail}", flush=True)
            if os.environ.get("SIDE_BY_SIDE_VERBOSE"):
                for d in diffs:
                    print("    " + d)
                if rc_o != 0:
                    print(err_o[-3000:])

    version = subprocess.run([args.peers, "-c", "import paddle; print(paddle.__version__)"], capture_output=True,
                             text=True).stdout.strip() or "?"
    counts = {}
    for r in rows:
        counts[r[1]] = counts.get(r[1], 0) + 1
    with open(args.out, "w") as f:
        f.write("# Paddle scripts side by side: PaddlePaddle and oar\n\n")
        f.write(f"Written by `tools/paddle_side_by_side.py`: each script of `examples/paddle_compat/` runs unchanged "
                f"under PaddlePaddle {version} and under oar (`import paddle` resolved to oar), and the printed "
                f"numbers are compared (rtol {DEFAULT_RTOL:g}, atol {DEFAULT_ATOL:g} unless a line says "
                f"otherwise).\n\n")
        summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        f.write(f"Summary: {summary} of {len(rows)} scripts.\n\n")
        f.write("| script | status | first difference or error | Paddle s | oar s |\n|---|---|---|---|---|\n")
        for name, status, detail, t_p, t_o, _ in rows:
            f.write(f"| {name} | {status} | {_cell(detail)} | {t_p:.1f} | {t_o:.1f} |\n")
        causes = [(r[0], CAUSES[r[0]]) for r in rows if r[1] in ("differs", "fails in oar") and r[0] in CAUSES]
        if causes:
            f.write("\n## Causes\n\n" + "".join(f"- **{name}**: {text}\n" for name, text in causes))
        details = [(r[0], r[5]) for r in rows if len(r[5]) > 1]
        if details:
            f.write("\n## All differing lines\n")
            for name, diffs in details:
                f.write(f"\n{name}:\n\n" + "".join(f"- {_cell(d)}\n" for d in diffs))
    print(f"wrote {os.path.relpath(args.out, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
