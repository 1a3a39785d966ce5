"""Starts a distributed job: ``python -m oar.distributed.launch [options] script.py [args]``.

oar's CPU process groups run on OpenMPI, and OpenMPI processes form one job only
when OpenMPI's runtime starts them, so this launcher is a front end over ``mpirun``::

    python -m oar.distributed.launch --nproc_per_node 4 train.py --epochs 2
    python -m oar.distributed.launch --nproc_per_node 2 --ips 10.0.0.1,10.0.0.2 train.py
    python -m oar.distributed.launch --nproc_per_node 2 --hostfile hosts train.py

Every rank runs ``script.py`` with the environment Paddle's launcher gives it
(``PADDLE_TRAINER_ID``, ``PADDLE_TRAINERS_NUM``, ``PADDLE_RANK_IN_NODE``,
``PADDLE_LOCAL_RANK``, ``PADDLE_LOCAL_SIZE``, ``PADDLE_GLOBAL_RANK``,
``PADDLE_GLOBAL_SIZE``, ``PADDLE_NNODES``) and ``OMP_NUM_THREADS`` set to the
machine's CPUs divided by the ranks on it, unless already set. Each line a rank
prints is printed whole, prefixed with ``[rank R] ``, and with ``--log_dir`` also
written to ``DIR/workerlog.R``.

When a rank fails (a nonzero exit code, or death by signal ``S``, counted as
``128 + S``), the launcher says so, gives the other ranks ``--grace`` seconds to end
or print their own errors, then stops them and exits with the first failing rank's
code. Ctrl-C or SIGTERM stops all ranks. A job whose ranks all succeed exits 0.
Across machines, ``--ips`` or ``--hostfile`` are passed to ``mpirun``, which starts
the remote ranks (over ssh by default; ``--mpi_args`` passes further ``mpirun``
options, e.g. ``"--mca plm_rsh_agent ..."``). The script and Python must be at the
same paths on every machine.
"""
import argparse
import os
import secrets
import shlex
import shutil
import signal
import socket
import sys
import threading
import time

__all__ = ["main", "mpirun_command"]

_TAG = "[oar.distributed.launch]"
_RANK_PY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_rank.py")
# Variables passed on to ranks on other machines (local ranks inherit everything).
_EXPORT = ("PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "VIRTUAL_ENV")
_EXPORT_PREFIXES = ("OAR_", "PADDLE_", "FLAGS_", "OMP_", "KMP_", "MKL_", "OPENBLAS_", "GLOG_")
# Stopping a job: ask the ranks (they SIGTERM their scripts, SIGKILL 3 s later); if
# mpirun still runs after _STOP_WAIT s, SIGTERM to mpirun; after another _STOP_WAIT s,
# SIGKILL to mpirun and everything it started here.
_STOP_WAIT = 5.0


class UsageError(Exception):
    """A bad command line: reported in one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _parser():
    p = _Parser(prog="python -m oar.distributed.launch", description=__doc__.split("\n\n")[0],
                formatter_class=argparse.RawDescriptionHelpFormatter,
                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--nproc_per_node", type=int, default=1, metavar="N",
                   help="ranks per machine (default 1)")
    hosts = p.add_mutually_exclusive_group()
    hosts.add_argument("--ips", default=None, metavar="A,B,...",
                       help="comma-separated machine addresses; ranks 0..N-1 run on the first")
    hosts.add_argument("--hostfile", default=None, metavar="FILE",
                       help="an OpenMPI host file (one machine per line)")
    p.add_argument("--log_dir", default=None, metavar="DIR",
                   help="also write each rank's output to DIR/workerlog.RANK")
    p.add_argument("--grace", type=float, default=10.0, metavar="S",
                   help="seconds the other ranks get to end after one fails (default 10)")
    p.add_argument("--mpi_args", default="", metavar="'ARGS'",
                   help="further mpirun options, as one shell-quoted string")
    p.add_argument("training_script", help="the Python script every rank runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER,
                   help="arguments for the script")
    return p


def _hostfile_hosts(path):
    """Number of machines an OpenMPI host file names (comments and blank lines skipped)."""
    try:
        with open(path) as f:
            hosts = [ln.split("#", 1)[0].split()[0] for ln in f if ln.split("#", 1)[0].strip()]
    except OSError as e:
        raise UsageError(f"cannot read --hostfile {path!r}: {e.strerror}") from None
    if not hosts:
        raise UsageError(f"--hostfile {path!r} names no machine")
    return len(set(hosts))


def _check(args):
    if args.nproc_per_node < 1:
        raise UsageError(f"--nproc_per_node must be at least 1, got {args.nproc_per_node}")
    if not args.grace >= 0:
        raise UsageError(f"--grace must be a number of seconds >= 0, got {args.grace}")
    if not os.path.isfile(args.training_script):
        raise UsageError(f"the training script {args.training_script!r} does not exist")
    if args.ips is not None and not [h for h in args.ips.split(",") if h.strip()]:
        raise UsageError(f"--ips must list at least one address, got {args.ips!r}")
    try:
        shlex.split(args.mpi_args)
    except ValueError as e:
        raise UsageError(f"--mpi_args {args.mpi_args!r} is not a valid shell string: {e}") from None


def mpirun_command(args, mpirun="mpirun", env=None):
    """The ``mpirun`` command line that starts the job described by parsed arguments.

    Args:
        args (list[str] | argparse.Namespace): The launcher's arguments (without the
            program name), or what its parser made of them.
        mpirun (str, optional): The ``mpirun`` executable. Default: ``"mpirun"``.
        env (dict, optional): The environment the job starts from (default
            ``os.environ``); decides ``--allow-run-as-root`` and the ``-x`` exports.

    Returns:
        list[str]: The command, ready for ``subprocess``.

    Examples:
        >>> import tempfile
        >>> from oar.distributed.launch import mpirun_command
        >>> script = tempfile.NamedTemporaryFile(suffix=".py")
        >>> cmd = mpirun_command(["--nproc_per_node", "2", "--ips", "10.0.0.1,10.0.0.2",
        ...                       script.name, "--lr", "0.1"], env={})
        >>> cmd[:5]
        ['mpirun', '-np', '4', '--host', '10.0.0.1:2,10.0.0.2:2']
        >>> cmd[cmd.index("orte_abort_on_non_zero_status") + 1]
        '0'
        >>> cmd[-3:] == [script.name, "--lr", "0.1"]
        True
    """
    if not isinstance(args, argparse.Namespace):
        args = _parser().parse_args(list(args))
    _check(args)
    env = os.environ if env is None else env
    n = args.nproc_per_node
    cmd = [mpirun]
    if args.ips is not None:
        ips = [h.strip() for h in args.ips.split(",") if h.strip()]
        cmd += ["-np", str(n * len(ips)), "--host", ",".join(f"{h}:{n}" for h in ips)]
    elif args.hostfile is not None:
        cmd += ["-np", str(n * _hostfile_hosts(args.hostfile)), "--hostfile", args.hostfile,
                "--map-by", f"ppr:{n}:node"]
    else:
        cmd += ["-np", str(n)]
    cmd += ["--oversubscribe", "--bind-to", "none",
            # A failing rank must not take the others down at once: they get --grace
            # seconds to print their own errors, then the launcher stops them.
            "--mca", "orte_abort_on_non_zero_status", "0"]
    if os.geteuid() == 0 and not (env.get("OMPI_ALLOW_RUN_AS_ROOT")
                                   and env.get("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")):
        cmd.append("--allow-run-as-root")
    for name in sorted(env):
        if name in _EXPORT or name.startswith(_EXPORT_PREFIXES):
            cmd += ["-x", name]
    cmd += shlex.split(args.mpi_args)
    cmd += [sys.executable, _RANK_PY, os.path.abspath(args.training_script),
            *args.training_script_args]
    return cmd


class _Job:
    """Collects the ranks' lines and exit reports from the channel of Note [launcher channel]
    (in ``oar/distributed/_rank.py``)."""

    def __init__(self, world_size, log_dir):
        self.world_size, self.log_dir = world_size, log_dir
        self.token = secrets.token_hex(16)
        self.server = socket.create_server(("", 0), backlog=max(64, world_size))
        self.port = self.server.getsockname()[1]
        self.lock = threading.Lock()  # one line at a time on stdout, stderr and the logs
        # (rank, code, signal, ended): ended False when the script finished but its process
        # is still shutting down (Note [early exit report]); code None: the rank's process
        # vanished without a report.
        self.events = []
        self.cond = threading.Condition(self.lock)
        self.readers = []
        self.conns = {}  # rank -> its connection, to ask it to stop
        self.stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:  # closed at the end of the job
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self.readers.append(t)

    def _serve(self, conn):
        with conn:
            f = conn.makefile("rb")
            conn.settimeout(10)
            try:
                parts = f.readline().split()
                if len(parts) != 3 or parts[0] != b"oar-rank" or parts[1] != self.token.encode() \
                        or not parts[2].isdigit() or int(parts[2]) >= self.world_size:
                    return
                rank = int(parts[2])
                conn.settimeout(None)
                conn.sendall(b"ok\n")
                with self.lock:
                    self.conns[rank] = conn
                    stopping = self.stopping
                if stopping:
                    conn.sendall(b"stop\n")
            except OSError:
                return
            log = None
            if self.log_dir is not None:
                path = os.path.join(self.log_dir, f"workerlog.{rank}")
                try:
                    log = open(path, "wb")
                except OSError as e:
                    _say(f"cannot write {path}: {e.strerror}; rank {rank}'s output is not logged")
            prefix, reported = f"[rank {rank}] ".encode(), False
            try:
                for data in f:
                    kind, body = data[:1], data[1:]
                    if kind in (b"x", b"r"):
                        code, sig = (int(v) for v in (body.split() + [b"0"])[:2])
                        with self.cond:
                            self.events.append((rank, code, sig, kind == b"x"))
                            self.cond.notify_all()
                        if kind == b"x":
                            reported = True
                            break
                        continue
                    out = sys.stdout.buffer if kind == b"o" else sys.stderr.buffer
                    with self.lock:
                        try:
                            out.write(prefix + body)
                            out.flush()
                        except OSError:  # e.g. piped into `head`: the job goes on regardless
                            pass
                        if log is not None:
                            log.write(body)
                            log.flush()
            except (OSError, ValueError):
                pass
            finally:
                if log is not None:
                    log.close()
            if not reported:
                with self.cond:
                    self.events.append((rank, None, 0, True))
                    self.cond.notify_all()

    def stop(self):
        """Asks every rank (now or when it connects) to stop its script: SIGTERM, then SIGKILL.

        Ranks stopped this way end one by one and mpirun then exits by itself; mpirun
        told to stop with SIGTERM while ranks sit in MPI_Finalize has been seen to crash
        or hang (OpenMPI 4.1), so signalling mpirun is only the fallback.
        """
        with self.lock:
            self.stopping = True
            conns = list(self.conns.values())
        for conn in conns:
            try:
                conn.sendall(b"stop\n")
            except OSError:
                pass

    def close(self, timeout):
        """Stops accepting and waits up to `timeout` s for the ranks' last lines."""
        self.server.close()
        end = time.monotonic() + timeout
        for t in list(self.readers):
            t.join(timeout=max(0.0, end - time.monotonic()))


def _say(msg):
    sys.stderr.write(f"{_TAG} {msg}\n")
    sys.stderr.flush()


def _start_mpirun(cmd, env):
    import ctypes
    import subprocess

    def die_with_launcher():
        # The launcher killed with SIGKILL cannot stop the job: mpirun stops it then.
        try:
            ctypes.CDLL(None).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    # A session of its own: Ctrl-C reaches the launcher only, which then stops the
    # ranks in order instead of every process dying at once.
    return subprocess.Popen(cmd, env=env, start_new_session=True, preexec_fn=die_with_launcher)


def _kill_group(proc):
    """SIGKILL to mpirun and everything it started on this machine.

    mpirun leads a session of its own (see _start_mpirun), but puts helpers such as
    ssh into process groups of their own, so the session is what finds them all.
    """
    if proc.poll() is None:
        proc.kill()
    try:
        names = os.listdir("/proc")
    except OSError:  # not Linux: mpirun itself is all we can reach
        return
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()  # state ppid pgrp session ...
            if int(fields[3]) == proc.pid:
                os.kill(int(name), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            continue


def _describe(code, sig):
    if sig:
        try:
            return f"code {code} (killed by {signal.Signals(sig).name})"
        except ValueError:
            return f"code {code} (killed by signal {sig})"
    return f"code {code}"


def launch(args):
    """Runs the job described by parsed arguments and returns the launcher's exit code."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise UsageError("mpirun was not found on PATH; it comes with OpenMPI "
                         "(Debian/Ubuntu: apt-get install openmpi-bin libopenmpi-dev)")
    cmd = mpirun_command(args, mpirun)
    world_size = int(cmd[cmd.index("-np") + 1])
    if args.log_dir is not None:
        try:
            os.makedirs(args.log_dir, exist_ok=True)
        except OSError as e:
            raise UsageError(f"cannot create --log_dir {args.log_dir!r}: {e.strerror}") from None
    job = _Job(world_size, args.log_dir)
    env = dict(os.environ, OAR_LAUNCH_PORT=str(job.port), OAR_LAUNCH_TOKEN=job.token)
    cmd[1:1] = ["-x", "OAR_LAUNCH_PORT", "-x", "OAR_LAUNCH_TOKEN"]

    stop = []  # the signal that asked the launcher to stop, if any
    # Only noted here (the loop below looks every 50 ms): a handler that took the
    # job's lock could deadlock with the code it interrupts.
    old = {s: signal.signal(s, lambda signum, _frame: stop.append(signum))
           for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        proc = _start_mpirun(cmd, env)
    except OSError as e:
        for s, h in old.items():
            signal.signal(s, h)
        job.close(timeout=0)
        raise UsageError(f"cannot start {mpirun}: {e.strerror}") from None
    failure, seen, deadline, ended = None, 0, None, set()
    stage, next_at = 0, None  # see _STOP_WAIT

    def note(events, now):
        nonlocal failure, deadline
        for rank, code, sig, end in events:
            if end:
                ended.add(rank)
            if (code is None or code != 0) and failure is None and not stop:
                failure = (rank, code)
                running = sorted(set(range(world_size)) - ended - {rank})
                what = ("ended without reporting an exit status (its wrapper process died)"
                        if code is None else f"exited with {_describe(code, sig)}")
                rest = (f"; stopping ranks {', '.join(map(str, running))} "
                        f"(they get {args.grace:g} s to end)") if running else ""
                _say(f"rank {rank} {what}{rest}")
                deadline = now + args.grace

    try:
        while True:
            rc = proc.poll()
            now = time.monotonic()
            with job.cond:
                new, seen = job.events[seen:], len(job.events)
            note(new, now)
            if rc is not None:
                break
            if stage == 0 and (stop or (deadline is not None and now >= deadline)):
                if stop:
                    _say(f"received {signal.Signals(stop[0]).name}; stopping all ranks")
                job.stop()
                stage, next_at = 1, now + _STOP_WAIT
            elif stage == 1 and now >= next_at:
                proc.terminate()
                stage, next_at = 2, now + _STOP_WAIT
            elif stage == 2 and now >= next_at:
                _kill_group(proc)
                stage = 3
            with job.cond:
                if len(job.events) == seen:
                    job.cond.wait(0.05)
    finally:
        if proc.poll() is None:  # an exception above: never leave ranks behind
            _kill_group(proc)
            proc.wait()
        # mpirun stopped while it was starting ranks can leave helpers (ssh) behind.
        _kill_group(proc)
        for s, h in old.items():
            signal.signal(s, h)
    job.close(timeout=2.0)
    with job.cond:
        note(job.events[seen:], time.monotonic())
        reported = {r for r, c, _, end in job.events if end and c is not None}
    rc = rc if rc >= 0 else 128 - rc  # mpirun itself killed by a signal
    if stop:
        return 128 + stop[0]
    if failure is not None:
        return failure[1] if failure[1] is not None else (rc or 1)
    if rc != 0:
        return rc
    missing = sorted(set(range(world_size)) - reported)
    if missing:
        # mpirun exits 0 even when a rank failed, so a rank that never reported is a failure.
        _say(f"rank(s) {', '.join(map(str, missing))} ended without reporting an exit status")
        return 1
    return 0


def main(argv=None):
    """Command-line entry: ``python -m oar.distributed.launch --help`` lists the options.

    Args:
        argv (list[str], optional): The arguments (default ``sys.argv[1:]``).

    Returns:
        int: The exit code: 0 when every rank succeeded, the first failing rank's code,
        ``128 + S`` when stopped by signal ``S``, 2 for a bad command line.

    Examples:
        >>> from oar.distributed.launch import main
        >>> main(["--nproc_per_node", "0", "train.py"])  # the reason is printed on stderr
        2
    """
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else list(argv))
        _check(args)
        return launch(args)
    except UsageError as e:
        sys.stderr.write(f"{_TAG} {e}\n{_TAG} usage: python -m oar.distributed.launch "
                         "[--nproc_per_node N] [--ips A,B | --hostfile F] [--log_dir DIR] "
                         "[--grace S] [--mpi_args 'ARGS'] script.py [args...]  (--help: details)\n")
        return 2


class _LaunchModule(type(sys)):
    """This module, callable: ``oar.distributed.launch()`` runs the launcher
    on ``sys.argv[1:]``, as Paddle's ``paddle.distributed.launch()`` does."""

    def __call__(self):
        """Runs the launcher on ``sys.argv[1:]``; returns its exit code (see :func:`main`)."""
        return main()


sys.modules[__name__].__class__ = _LaunchModule
