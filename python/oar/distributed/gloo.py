"""Paddle's CPU barrier API (``gloo_init_parallel_env``, ``gloo_barrier``,
``gloo_release``) on oar's CPU process group.

Paddle runs these over a separate Gloo context rendezvousing at
``server_endpoint``. oar's CPU collectives already run over OpenMPI, so
these functions use the job's world group: the processes must be ranks of
one job (started by ``python -m oar.distributed.launch`` or ``mpirun``;
without a launcher, a job of one rank), and ``server_endpoint`` is only
checked for its form.
"""
from . import collective as _coll

__all__ = ["gloo_init_parallel_env", "gloo_barrier", "gloo_release"]

_state = {"group": None}


def gloo_init_parallel_env(rank_id, rank_num, server_endpoint):
    """Starts the CPU barrier context for rank ``rank_id`` of ``rank_num``
    (which must be this process's rank and the job's size).

    >>> import oar.distributed as dist
    >>> dist.gloo_init_parallel_env(0, 1, "127.0.0.1:6170")
    >>> dist.gloo_barrier()
    >>> dist.gloo_release()
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.gloo_init_parallel_env"
    for name, v in (("rank_id", rank_id), ("rank_num", rank_num)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise TypeError(f"[{api}] {name} must be an int >= 0, got {v!r}")
    if not isinstance(server_endpoint, str) or server_endpoint.count(":") != 1 \
            or not server_endpoint.rsplit(":", 1)[1].isdigit():
        raise ValueError(f"[{api}] server_endpoint must be 'ip:port', got {server_endpoint!r}")
    world = _coll.init_parallel_env()
    if (rank_id, rank_num) != (_coll.get_rank(), world.nranks):
        raise ValueError(f"[{api}] this process is rank {_coll.get_rank()} of {world.nranks} in its job, but "
                         f"rank_id={rank_id}, rank_num={rank_num} were given")
    _state["group"] = world


def gloo_barrier():
    """Blocks until every rank has reached it (after ``gloo_init_parallel_env``).

    >>> import oar.distributed as dist
    >>> dist.gloo_init_parallel_env(0, 1, "127.0.0.1:6170")
    >>> dist.gloo_barrier()
    >>> dist.destroy_process_group()
    """
    if _state["group"] is None:
        raise RuntimeError("[oar.distributed.gloo_barrier] call gloo_init_parallel_env() first")
    _coll.barrier(_state["group"])


def gloo_release():
    """Ends the CPU barrier context (the job's process group stays up).

    >>> import oar.distributed as dist
    >>> dist.gloo_release()
    >>> dist.gloo_barrier()
    Traceback (most recent call last):
        ...
    RuntimeError: [oar.distributed.gloo_barrier] call gloo_init_parallel_env() first
    """
    _state["group"] = None
