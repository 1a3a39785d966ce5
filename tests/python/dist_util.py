"""Runs a script on N real ranks (OpenMPI's mpirun), for the distributed tests."""
import os
import re
import shutil
import subprocess
import sys

import oar

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The folder the oar under test came from (python/ in the tree; the sanitizer
# build's package under `make test-asan`): child processes import the same.
OAR_PATH = os.path.dirname(os.path.dirname(os.path.abspath(oar.__file__)))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist_scripts")


def child_env(**extra):
    """os.environ for a child process that imports the same oar as this one."""
    e = dict(os.environ)
    e["PYTHONPATH"] = OAR_PATH + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e.update(extra)
    return e


def mpirun_cmd(n):
    cmd = ["mpirun", "-np", str(n), "--oversubscribe", "--bind-to", "none",
           # A failing rank must not take the others down before they report.
           "--mca", "orte_abort_on_non_zero_status", "0"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def run_ranks(n, script, *args, timeout=120, env=None):
    """Runs dist_scripts/<script> on n ranks; returns the CompletedProcess."""
    assert shutil.which("mpirun"), "mpirun is missing: `make test` installs openmpi-bin"
    e = child_env()
    e.setdefault("OMP_NUM_THREADS", "1")
    e.update(env or {})
    cmd = mpirun_cmd(n) + [sys.executable, os.path.join(SCRIPTS, script), *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)


def ranks_ok(p, n, pattern):
    """Asserts that the job succeeded and printed `pattern` n times; returns the matches."""
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    found = re.findall(pattern, p.stdout)
    assert len(found) == n, out[-4000:]
    return found
