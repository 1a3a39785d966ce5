"""``oar.distributed.spawn``: runs a function on N ranks of a new job.

oar's ranks form a job only when OpenMPI starts them, so ``spawn`` starts
the job with the launcher (``python -m oar.distributed.launch``) in a child
process: each rank gets the launcher's environment (``PADDLE_TRAINER_ID``,
``PADDLE_TRAINERS_NUM``, ...) and its output lines prefixed with
``[rank R]``, and the first failing rank stops the job. The function and
its arguments reach the ranks pickled, so the function must be importable by
name: defined at the top level of a module, or of the main script (which
each rank then imports as ``__mp_main__``, as Python's ``multiprocessing``
does; guard the script's own work with ``if __name__ == "__main__":``).
"""
import os
import pickle
import subprocess
import sys
import tempfile

__all__ = ["spawn", "MultiprocessContext"]

_API = "oar.distributed.spawn"
_ENTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_spawn_entry.py")
_OPTIONS = ("ips", "log_dir", "grace", "backend", "gpus", "xpus", "print_config")


class MultiprocessContext:
    """The job ``spawn`` started; with ``join=False``, ``join()`` waits for it.
    ``exit_code`` is the launcher's exit code once the job has ended.

    >>> import oar.distributed as dist
    >>> ctx = dist.spawn(int, args=("3",), nprocs=1, join=False)
    >>> ctx.join(timeout=120), ctx.exit_code
    (True, 0)
    """

    def __init__(self, proc, workdir, nprocs):
        self._proc, self._workdir, self.nprocs = proc, workdir, nprocs
        self.exit_code = None

    def join(self, timeout=None):
        """Waits up to ``timeout`` seconds (forever by default) for the job;
        True once every rank has ended successfully, False while it runs.
        Raises ``RuntimeError`` when a rank failed."""
        try:
            rc = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        if self.exit_code is None:
            self.exit_code = rc
            self._workdir.cleanup()
        if rc != 0:
            raise RuntimeError(f"[{_API}] the job of {self.nprocs} ranks failed with exit code {rc} (the failing "
                               "rank's output is above)")
        return True


def _main_path():
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return os.path.abspath(path) if path and path.endswith(".py") and os.path.isfile(path) else None


def spawn(func, args=(), nprocs=-1, join=True, daemon=False, **options):
    """Runs ``func(*args)`` on ``nprocs`` ranks of a new job (-1: one per
    CPU this process may use), each a process with the launcher's
    environment, so ``init_parallel_env()`` inside ``func`` joins them.
    With ``join`` (default) it waits and raises ``RuntimeError`` if a rank
    fails; otherwise it returns at once. Returns a ``MultiprocessContext``.
    Options: ``ips`` (machines, as the launcher's ``--ips``), ``log_dir``,
    ``grace``; ``backend`` may only be 'auto', 'gloo' or 'mpi' (CPU).

    >>> import oar.distributed as dist
    >>> dist.spawn(print, args=("hello",), nprocs=0)
    Traceback (most recent call last):
        ...
    ValueError: [oar.distributed.spawn] nprocs must be a positive int or -1, got 0
    """
    if not callable(func):
        raise TypeError(f"[{_API}] func must be callable, got {type(func).__name__}")
    if nprocs == -1:
        nprocs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"[{_API}] nprocs must be a positive int or -1, got {nprocs!r}")
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise ValueError(f"[{_API}] unknown option(s) {unknown}; oar's spawn takes {list(_OPTIONS)}")
    if options.get("backend", "auto") not in ("auto", "gloo", "mpi"):
        raise ValueError(f"[{_API}] backend must be 'auto', 'gloo' or 'mpi' (CPU), got {options['backend']!r}")
    if options.get("gpus") or options.get("xpus"):
        raise ValueError(f"[{_API}] gpus / xpus selection is not supported: ranks are CPU processes")
    workdir = tempfile.TemporaryDirectory(prefix="oar-spawn-")
    payload = os.path.join(workdir.name, "payload.pkl")
    with open(payload, "wb") as f:
        # Header first: the rank imports the main script before unpickling func.
        pickle.dump({"main": _main_path(), "sys_path": [p for p in sys.path if p]}, f)
        try:
            pickle.dump((func, tuple(args)), f)
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            workdir.cleanup()
            raise TypeError(f"[{_API}] func and args must be picklable (func defined at the top level of a "
                            f"module or of the main script): {e}") from None
    cmd = [sys.executable, "-m", "oar.distributed.launch", "--nproc_per_node", str(nprocs)]
    for key in ("ips", "log_dir", "grace"):
        if options.get(key) is not None:
            cmd += [f"--{key}", str(options[key])]
    cmd += [_ENTRY, payload]
    env = dict(os.environ)
    oar_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([oar_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.Popen(cmd, env=env)
    ctx = MultiprocessContext(proc, workdir, nprocs)
    if join:
        ctx.join()
    return ctx
