"""The per-rank wrapper that ``python -m oar.distributed.launch`` starts under ``mpirun``.

``mpirun`` starts one wrapper per rank::

    mpirun -np 2 python .../oar/distributed/_rank.py train.py --lr 0.1
    mpirun -np 2 python -m oar.distributed._rank train.py --lr 0.1   # same, slower start

The wrapper

* maps OpenMPI's rank variables (``OMPI_COMM_WORLD_RANK``, ``..._SIZE``,
  ``..._LOCAL_RANK``, ``..._LOCAL_SIZE``) to the names Paddle's launcher sets
  (``PADDLE_TRAINER_ID``, ``PADDLE_TRAINERS_NUM``, ``PADDLE_RANK_IN_NODE``,
  ``PADDLE_LOCAL_RANK``, ``PADDLE_LOCAL_SIZE``, ``PADDLE_GLOBAL_RANK``,
  ``PADDLE_GLOBAL_SIZE``, ``PADDLE_NNODES``);
* sets ``OMP_NUM_THREADS`` to ``max(1, cpus // local_size)`` unless it is set, so that
  the ranks of one machine do not oversubscribe its cores;
* runs the script in a child process (so that the variables above are in place
  before any OpenMP runtime starts, and so that a death by signal can be reported);
  the child says how the script ended as soon as it ends, before the process shuts
  down (see Note [early exit report]);
* sends each line the script prints, whole, and finally the script's exit status to
  the launcher over a TCP connection (see Note [launcher channel]); without a
  launcher it prints the lines itself, prefixed with ``[rank R] ``;
* exits with the script's exit code, or ``128 + S`` when the script was killed by
  signal ``S``.

Only the standard library is imported here: starting the wrapper must not cost a
second import of oar (the script imports it).

Note [early exit report]: a rank that leaves the job early (``sys.exit(3)``, an
exception) stays alive in its shutdown: ``MPI_Finalize`` waits for the other ranks,
which wait in a collective for it until they notice it left and fail themselves.
Reporting the exit only when the process ends would blame the rank that failed
second. The child therefore runs the script with ``runpy`` and reports the exit code
through an inherited pipe the moment the script's code has finished, before the
interpreter's shutdown (atexit handlers) starts.

Note [launcher channel]: ``mpirun`` forwards a rank's output in chunks of at most
4 KiB and tags chunks, not lines, so lines of two ranks can interleave and an exit
report on stderr could be split or forged by the script's own output. The wrapper
therefore connects back to the launcher: the launcher listens on all IPv4
interfaces of the machine ``mpirun`` runs on, and ``mpirun`` tells every rank the
addresses under which that machine is reachable (``OMPI_MCA_orte_hnp_uri``), so the
same address list works on one machine and across machines. A random token passed
in the environment makes sure the wrapper talks to its own launcher.
"""
import os
import sys

if __name__ == "__main__" and sys.path and sys.path[0] and \
        os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    # Started by file name: this folder is not a place to import modules from.
    del sys.path[0]

import ctypes  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402

__all__ = []

_TAG = "[oar.distributed._rank]"
_MAX_LINE = 1 << 16  # longer lines are passed on in pieces of this size
_PR_SET_PDEATHSIG = 1
_CHILD = "--oar-run-script"  # argv[1] of the child that runs the script
_KILL_AFTER = 3.0  # seconds from SIGTERM to SIGKILL for a script asked to stop


def _int_env(env, names, default):
    for name in names:
        value = env.get(name)
        if value is not None and value.strip().lstrip("-").isdigit():
            return int(value)
    return default


def rank_env(env=None, cpus=None):
    """Environment of one rank: OpenMPI's rank variables mapped to Paddle's names.

    Args:
        env (dict, optional): The environment to start from (default ``os.environ``);
            it is not modified.
        cpus (int, optional): CPUs this machine gives the job (default: the CPUs this
            process may run on).

    Returns:
        dict: A new environment with the ``PADDLE_*`` variables and ``OMP_NUM_THREADS``.

    Examples:
        >>> from oar.distributed._rank import rank_env
        >>> e = rank_env({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4",
        ...               "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"},
        ...              cpus=8)
        >>> e["PADDLE_TRAINER_ID"], e["PADDLE_TRAINERS_NUM"], e["PADDLE_RANK_IN_NODE"]
        ('3', '4', '1')
        >>> e["OMP_NUM_THREADS"]
        '4'
    """
    env = dict(os.environ if env is None else env)
    rank = _int_env(env, ("OMPI_COMM_WORLD_RANK", "PMIX_RANK"), 0)
    size = _int_env(env, ("OMPI_COMM_WORLD_SIZE",), 1)
    local_rank = _int_env(env, ("OMPI_COMM_WORLD_LOCAL_RANK",), 0)
    local_size = max(1, _int_env(env, ("OMPI_COMM_WORLD_LOCAL_SIZE",), 1))
    nnodes = _int_env(env, ("OMPI_MCA_orte_num_nodes",), 1)
    for name, value in (("PADDLE_TRAINER_ID", rank), ("PADDLE_GLOBAL_RANK", rank),
                        ("PADDLE_TRAINERS_NUM", size), ("PADDLE_GLOBAL_SIZE", size),
                        ("PADDLE_RANK_IN_NODE", local_rank), ("PADDLE_LOCAL_RANK", local_rank),
                        ("PADDLE_LOCAL_SIZE", local_size), ("PADDLE_NNODES", nnodes)):
        env[name] = str(value)
    if not env.get("OMP_NUM_THREADS"):
        if cpus is None:
            cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        env["OMP_NUM_THREADS"] = str(max(1, (cpus or 1) // local_size))
    # Lines reach the launcher as they are printed, not when a block buffer fills.
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _launcher_addresses(env):
    """IPv4 addresses of the machine mpirun (and so the launcher) runs on."""
    found = []
    for hosts in re.findall(r"tcp4?://([^;]*):\d+", env.get("OMPI_MCA_orte_hnp_uri", "")):
        found += [h for h in hosts.split(",") if h and h not in found]
    return found + ["127.0.0.1"]


def _connect(env, rank):
    """Connects to the launcher named in the environment; None when there is none."""
    port, token = env.get("OAR_LAUNCH_PORT"), env.get("OAR_LAUNCH_TOKEN")
    if not port or not token:
        return None
    for host in _launcher_addresses(env):
        try:
            sock = socket.create_connection((host, int(port)), timeout=3)
            sock.sendall(f"oar-rank {token} {rank}\n".encode())
            if sock.makefile("rb").readline() == b"ok\n":  # anything else is not our launcher
                sock.settimeout(None)
                return sock
            sock.close()
        except (OSError, ValueError):
            continue
    return None


class _Sink:
    """Where the script's lines go: the launcher's socket, else this process's own output."""

    def __init__(self, sock, rank):
        self.sock, self.prefix, self.lock = sock, f"[rank {rank}] ".encode(), threading.Lock()
        self.closed = threading.Event()  # the launcher closed its side

    def listen(self, on_stop):
        """Reads the launcher's requests (only "stop") until it closes the connection."""
        try:
            for request in self.sock.makefile("rb"):
                if request == b"stop\n":
                    on_stop()
        except OSError:
            pass
        self.closed.set()

    def line(self, stream, data):
        if not data.endswith(b"\n"):
            data += b"\n"
        with self.lock:
            if self.sock is not None:
                try:
                    self.sock.sendall(stream + data)
                    return
                except OSError:  # the launcher went away: keep the lines on this rank's output
                    self.sock = None
            out = sys.stdout.buffer if stream == b"o" else sys.stderr.buffer
            out.write(self.prefix + data)
            out.flush()

    def early(self, code):
        """The script finished with `code`; the process is still shutting down."""
        with self.lock:
            if self.sock is not None:
                try:
                    self.sock.sendall(f"r{code}\n".encode())
                except OSError:
                    self.sock = None

    def exit(self, code, sig):
        with self.lock:
            if self.sock is not None:
                try:
                    self.sock.sendall(f"x{code} {sig}\n".encode())
                    self.sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                self.closed.wait(5)  # the launcher closes once it has read everything
                self.sock.close()
                self.sock = None
                return
        if code != 0:
            what = f" (killed by {signal.Signals(sig).name})" if sig else ""
            self.line(b"e", f"{_TAG} the script exited with code {code}{what}".encode())


def _pump(pipe, stream, sink):
    with pipe:
        for data in iter(lambda: pipe.readline(_MAX_LINE), b""):
            sink.line(stream, data)


def _watch_report(fd, sink):
    with os.fdopen(fd, "rb") as f:
        data = f.readline().strip()
    if data.isdigit() and int(data) != 0:
        sink.early(int(data))


def _exit_code(exc):
    """The process exit status that an uncaught SystemExit `exc` gives."""
    if exc.code is None:
        return 0
    return exc.code % 256 if isinstance(exc.code, int) else 1


def _run_script(report_fd, argv):
    """Child side: runs the script as ``python script args`` would, reporting its exit code
    on `report_fd` before the interpreter shuts down (Note [early exit report])."""
    import runpy

    script = os.path.abspath(argv[0])
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
    report = os.fdopen(report_fd, "w")

    def tell(code):
        try:
            report.write(f"{code}\n")
            report.close()
        except OSError:
            pass

    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        tell(_exit_code(e))
        raise
    except KeyboardInterrupt:
        raise  # Python ends by SIGINT then; the final report says so
    except BaseException as e:  # noqa: B036 - any exception ends the script with status 1
        tb = e.__traceback__
        # The user's traceback starts at their script, not at this wrapper and runpy.
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
            tb = tb.tb_next
        if tb is not None:
            e.__traceback__ = tb  # the default hook prints the exception's own traceback
        sys.excepthook(type(e), e, e.__traceback__)
        tell(1)
        sys.exit(1)
    tell(0)


def _die_with_parent(sig):
    """Asks Linux to send `sig` to this process when its parent ends (no effect elsewhere)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main(argv=None):
    """Runs ``argv[0]`` (a Python script) with ``argv[1:]`` as one rank; returns its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        sys.stderr.write(f"{_TAG} usage: python -m oar.distributed._rank SCRIPT [ARGS...]\n")
        return 2
    # mpirun stopped with SIGKILL cannot stop its ranks: they stop themselves.
    parent = os.getppid()
    _die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:
        return 1
    env = rank_env()
    rank = int(env["PADDLE_TRAINER_ID"])
    sink = _Sink(_connect(env, rank), rank)
    for name in ("OAR_LAUNCH_PORT", "OAR_LAUNCH_TOKEN"):
        env.pop(name, None)  # the script and its children have no business with the channel
    report_r, report_w = os.pipe()
    try:
        child = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), _CHILD, str(report_w), *argv], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(report_w,),
            preexec_fn=lambda: _die_with_parent(signal.SIGKILL))
    except OSError as e:
        sink.line(b"e", f"{_TAG} cannot start {sys.executable}: {e}".encode())
        sink.exit(1, 0)
        return 1
    finally:
        os.close(report_w)

    def forward(signum, _frame=None):
        # The launcher (over the channel) and mpirun stop ranks with SIGTERM: pass it
        # on, and make sure a script that ignores it still ends. SIGUSR1/2 are only
        # passed on.
        if child.poll() is None:
            child.send_signal(signum)
            if signum in (signal.SIGUSR1, signal.SIGUSR2):
                return
            timer = threading.Timer(_KILL_AFTER, lambda: child.poll() is None and child.kill())
            timer.daemon = True
            timer.start()

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(s, forward)
    if sink.sock is not None:
        threading.Thread(target=sink.listen, args=(lambda: forward(signal.SIGTERM),),
                         daemon=True).start()
    pumps = [threading.Thread(target=_pump, args=(child.stdout, b"o", sink), daemon=True),
             threading.Thread(target=_pump, args=(child.stderr, b"e", sink), daemon=True),
             threading.Thread(target=_watch_report, args=(report_r, sink), daemon=True)]
    for t in pumps:
        t.start()
    rc = child.wait()
    for t in pumps:
        t.join(timeout=5)  # a grandchild may still hold the pipes open
    code, sig = (rc, 0) if rc >= 0 else (128 - rc, -rc)
    sink.exit(code, sig)
    return code


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == _CHILD:
        _run_script(int(sys.argv[2]), sys.argv[3:])
    else:
        sys.exit(main())
