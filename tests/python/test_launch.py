"""`python -m oar.distributed.launch` with real ranks (2 and 4 processes under mpirun).

The rank scripts here use only the standard library, so the tests check the launcher
itself: environment, output, logs, exit codes, stopping ranks, bad command lines.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from dist_util import child_env

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None,
                                reason="mpirun is not installed (Debian: openmpi-bin)")

PYDIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                     "python")
TAG = "[oar.distributed.launch]"


def _env(**extra):
    env = child_env()
    env.pop("OMP_NUM_THREADS", None)
    env.update(extra)
    return env


def launch(args, timeout=60, env=None):
    """Runs the launcher; returns (exit code, stdout, stderr, wall seconds)."""
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "oar.distributed.launch", *args], env=env or _env(),
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def script(tmp_path, body, name="job.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose (its parent may not have reaped it yet).
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pids, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(_alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


ENV_SCRIPT = """
    import json, os, sys
    keys = [k for k in os.environ if k.startswith(("PADDLE_", "OMPI_COMM_WORLD_"))]
    print("ENV " + json.dumps({k: os.environ[k] for k in keys + ["OMP_NUM_THREADS"]}))
    print("ARGS " + json.dumps(sys.argv[1:]))
    print("to stderr", os.environ["PADDLE_TRAINER_ID"], file=sys.stderr)
"""


def _per_rank(out, marker):
    found = {}
    for line in out.splitlines():
        if marker in line:
            prefix, payload = line.split(marker, 1)
            assert prefix.startswith("[rank ") and prefix.endswith("] "), line
            found[int(prefix[6:-2])] = json.loads(payload)
    return found


@pytest.mark.parametrize("n", [2, 4])
def test_env_and_prefixes(tmp_path, n):
    path = script(tmp_path, ENV_SCRIPT)
    # Arguments that look like the launcher's own options belong to the script.
    rc, out, err, _ = launch(["--nproc_per_node", str(n), path, "--grace", "x y", "--nproc_per_node"])
    assert rc == 0, err
    envs, args = _per_rank(out, "ENV "), _per_rank(out, "ARGS ")
    assert sorted(envs) == list(range(n)) and sorted(args) == list(range(n))
    cpus = len(os.sched_getaffinity(0))
    for r, e in envs.items():
        assert e["OMPI_COMM_WORLD_RANK"] == str(r)
        assert e["PADDLE_TRAINER_ID"] == e["PADDLE_GLOBAL_RANK"] == str(r)
        assert e["PADDLE_TRAINERS_NUM"] == e["PADDLE_GLOBAL_SIZE"] == str(n)
        assert e["PADDLE_RANK_IN_NODE"] == e["PADDLE_LOCAL_RANK"] == str(r)  # one machine
        assert e["PADDLE_LOCAL_SIZE"] == str(n)
        assert e["PADDLE_NNODES"] == "1"
        assert e["OMP_NUM_THREADS"] == str(max(1, cpus // n))
        assert args[r] == ["--grace", "x y", "--nproc_per_node"]
    assert sorted(ln for ln in err.splitlines() if "to stderr" in ln) == \
        [f"[rank {r}] to stderr {r}" for r in range(n)]


@pytest.mark.parametrize("hosts", ["ips", "hostfile"])
def test_host_list_naming_this_machine(tmp_path, hosts):
    path = script(tmp_path, ENV_SCRIPT)
    if hosts == "ips":
        opts = ["--ips", "127.0.0.1"]
    else:
        (tmp_path / "hosts").write_text("# this machine only\nlocalhost slots=4\n")
        opts = ["--hostfile", str(tmp_path / "hosts")]
    rc, out, err, _ = launch(["--nproc_per_node", "3", *opts, path])
    assert rc == 0, err
    envs = _per_rank(out, "ENV ")
    assert sorted(envs) == [0, 1, 2]
    assert all(e["PADDLE_TRAINERS_NUM"] == "3" and e["PADDLE_RANK_IN_NODE"] == str(r)
               for r, e in envs.items())


def test_user_omp_num_threads_kept(tmp_path):
    path = script(tmp_path, ENV_SCRIPT)
    rc, out, err, _ = launch(["--nproc_per_node", "2", path], env=_env(OMP_NUM_THREADS="3"))
    assert rc == 0, err
    assert [e["OMP_NUM_THREADS"] for e in _per_rank(out, "ENV ").values()] == ["3", "3"]


def test_lines_whole_and_logs(tmp_path):
    # Many long lines at once from 4 ranks: mpirun's own forwarding would cut them
    # into 4 KiB chunks and interleave ranks; every line must arrive whole.
    path = script(tmp_path, """
        import os, sys
        r = os.environ["PADDLE_TRAINER_ID"]
        for i in range(200):
            line = f"L {r} {i} " + r * (3000 + 37 * i) + " E"
            print(line, file=sys.stderr if i % 2 else sys.stdout)
        sys.stdout.write("no newline at the end " + r)
    """)
    logs = tmp_path / "logs"
    rc, out, err, _ = launch(["--nproc_per_node", "4", "--log_dir", str(logs), path])
    assert rc == 0, err[-2000:]
    for r in range(4):
        mine = [ln for ln in (out + err).splitlines() if ln.startswith(f"[rank {r}] ")]
        assert len(mine) == 201
        expected = [f"L {r} {i} " + str(r) * (3000 + 37 * i) + " E" for i in range(200)]
        body = [ln[len(f"[rank {r}] "):] for ln in mine if " E" in ln]
        # stdout and stderr are two streams: only the order within each is kept.
        assert sorted(body, key=lambda s: int(s.split()[2])) == expected
        assert f"[rank {r}] no newline at the end {r}" in out.splitlines()
        log = (logs / f"workerlog.{r}").read_text().splitlines()
        assert sorted(ln for ln in log if " E" in ln) == sorted(expected)
        assert f"no newline at the end {r}" in log and len(log) == 201
    assert "Traceback" not in err


FAIL_SCRIPT = """
    import os, signal, sys, time
    r = int(os.environ["PADDLE_TRAINER_ID"])
    with open(os.path.join(sys.argv[1], f"pid.{r}"), "w") as f:
        f.write(str(os.getpid()))
    if r == 1:
        time.sleep(0.5)
        print("rank one fails", file=sys.stderr, flush=True)
        with open(os.path.join(sys.argv[1], "failed_at"), "w") as f:
            f.write(repr(time.time()))
        {how}
    if r == 0 and {stubborn}:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # stopped only by SIGKILL
    time.sleep(60)
"""


def _pids(d, n):
    return [int((d / f"pid.{r}").read_text()) for r in range(n)]


@pytest.mark.parametrize("how,code,what,stubborn", [
    ("sys.exit(3)", 3, "exited with code 3;", False),
    ("os.kill(os.getpid(), signal.SIGKILL)", 137, "exited with code 137 (killed by SIGKILL);", True),
])
def test_failing_rank_stops_the_others(tmp_path, how, code, what, stubborn):
    path = script(tmp_path, FAIL_SCRIPT.replace("{how}", how).replace("{stubborn}", str(stubborn)))
    grace = 1.0
    rc, out, err, _ = launch(["--nproc_per_node", "4", "--grace", str(grace), path, str(tmp_path)])
    took = time.time() - float((tmp_path / "failed_at").read_text())
    assert rc == code, err
    assert f"{TAG} rank 1 {what} stopping ranks 0, 2, 3" in err
    assert "[rank 1] rank one fails" in err
    # After the failure: the grace period, then SIGTERM to the scripts, and SIGKILL
    # 3 s later to one that ignores SIGTERM; a few seconds of slack for a busy machine.
    assert took < grace + (3 if stubborn else 0) + 4, took
    assert _wait_gone(_pids(tmp_path, 4), 2.0) == []
    assert "Traceback" not in err


def test_exception_reported_before_shutdown(tmp_path):
    # Rank 1 raises, then lingers in its shutdown (as a rank in MPI_Finalize waits for
    # the others): the launcher blames it at once, not when its process ends, and its
    # traceback is the one `python job.py` prints.
    path = script(tmp_path, """
        import atexit, os, sys, time
        if os.environ["PADDLE_TRAINER_ID"] == "1":
            atexit.register(time.sleep, 60)
            with open(os.path.join(sys.argv[1], "failed_at"), "w") as f:
                f.write(repr(time.time()))
            def step():
                raise ValueError("bad batch")
            step()
        time.sleep(60)
    """)
    rc, out, err, _ = launch(["--nproc_per_node", "2", "--grace", "1", path, str(tmp_path)])
    took = time.time() - float((tmp_path / "failed_at").read_text())
    assert rc == 1, err
    assert f"{TAG} rank 1 exited with code 1; stopping ranks 0 " in err
    lines = err.splitlines()
    i = lines.index("[rank 1] Traceback (most recent call last):")
    assert lines[i + 1] == f'[rank 1]   File "{path}", line 9, in <module>'
    assert "[rank 1] ValueError: bad batch" in lines and "runpy" not in err
    assert took < 1 + 4, took


def test_sigterm_to_launcher_stops_all(tmp_path):
    path = script(tmp_path, """
        import os, sys, time
        print("ready", flush=True)
        with open(os.path.join(sys.argv[1], "pid." + os.environ["PADDLE_TRAINER_ID"]), "w") as f:
            f.write(str(os.getpid()))
        time.sleep(60)
    """)
    p = subprocess.Popen([sys.executable, "-m", "oar.distributed.launch", "--nproc_per_node", "2",
                          path, str(tmp_path)], env=_env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end and len(list(tmp_path.glob("pid.*"))) < 2:
            time.sleep(0.05)
        time.sleep(0.1)  # both pid files written in full
        pids = _pids(tmp_path, 2)
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=20)
        assert time.monotonic() - t0 < 8
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 128 + signal.SIGTERM
    assert f"{TAG} received SIGTERM; stopping all ranks" in err
    assert _wait_gone(pids, 2.0) == []


@pytest.mark.parametrize("args,message", [
    (["--nproc_per_node", "2", "/nonexistent/job.py"],
     "the training script '/nonexistent/job.py' does not exist"),
    (["--nproc_per_node", "0", "{script}"], "--nproc_per_node must be at least 1, got 0"),
    (["--nproc_per_node", "two", "{script}"], "argument --nproc_per_node: invalid int value: 'two'"),
    (["--grace", "-1", "{script}"], "--grace must be a number of seconds >= 0, got -1.0"),
    (["--ips", "a", "--hostfile", "h", "{script}"], "argument --hostfile: not allowed with argument --ips"),
    (["--hostfile", "/nonexistent/hosts", "{script}"], "cannot read --hostfile '/nonexistent/hosts'"),
    (["--mpi_args", "'unclosed", "{script}"], "--mpi_args \"'unclosed\" is not a valid shell string"),
    (["--no_such_option", "{script}"], "unrecognized arguments: --no_such_option"),
    ([], "the following arguments are required: training_script"),
])
def test_bad_arguments(tmp_path, capsys, args, message):
    # In this process (starting one per case would cost a second each): main() is
    # what `python -m oar.distributed.launch` runs.
    if PYDIR not in sys.path:
        sys.path.insert(0, PYDIR)
    from oar.distributed.launch import main

    path = script(tmp_path, "print('never runs')\n")
    assert main([a.replace("{script}", path) for a in args]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"{TAG} {message}"), err
    assert "Traceback" not in err and "never runs" not in out


def test_bad_arguments_exit_code(tmp_path):
    rc, out, err, _ = launch(["--nproc_per_node", "2", str(tmp_path / "missing.py")])
    assert rc == 2
    assert err.startswith(f"{TAG} the training script ") and "does not exist" in err
    assert "Traceback" not in err and out == ""


def test_mpirun_missing(tmp_path):
    path = script(tmp_path, "print('never runs')\n")
    rc, out, err, _ = launch(["--nproc_per_node", "2", path], env=_env(PATH="/nonexistent"))
    assert rc == 2
    assert err.startswith(f"{TAG} mpirun was not found on PATH") and "openmpi-bin" in err
    assert "Traceback" not in err


def test_rank_wrapper_under_plain_mpirun(tmp_path):
    # `mpirun -np 2 python -m oar.distributed._rank script.py` works without the launcher:
    # the wrapper then prefixes the lines itself and says how the script ended.
    path = script(tmp_path, ENV_SCRIPT + "    sys.exit(4 if os.environ['PADDLE_TRAINER_ID'] == '1' else 0)\n")
    cmd = ["mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none",
           "--mca", "orte_abort_on_non_zero_status", "0"]  # else mpirun spends ~2 s aborting
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    p = subprocess.run([*cmd, sys.executable, "-m", "oar.distributed._rank", path, "a b"], env=_env(),
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    envs, args = _per_rank(p.stdout, "ENV "), _per_rank(p.stdout, "ARGS ")
    assert sorted(envs) == [0, 1] and args == {0: ["a b"], 1: ["a b"]}
    assert envs[1]["PADDLE_TRAINER_ID"] == "1" and envs[1]["PADDLE_TRAINERS_NUM"] == "2"
    assert "[rank 1] [oar.distributed._rank] the script exited with code 4" in p.stderr


def test_help():
    rc, out, err, _ = launch(["--help"])
    assert rc == 0
    assert "--nproc_per_node" in out and "PADDLE_TRAINER_ID" in out and "--grace" in out
