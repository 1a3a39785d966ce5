"""Process groups and collective communication (Paddle 3.x ``paddle.distributed`` names).

Every collective runs on the process group's communication thread (see
src/dist/process_group.h); ``sync_op=False`` returns a task whose ``wait()``
blocks until the result is in place. Each collective has a deadline (the
group's ``timeout``, 10 minutes unless set); a peer that dies or hangs makes
the waiting ranks raise an error naming the collective and the ranks involved.
"""
import atexit
import datetime
import os
import pickle

import numpy as np

from .. import _C
from ..creation import empty, to_tensor

__all__ = [
    "ReduceOp", "Group", "init_parallel_env", "is_initialized", "is_available", "get_rank", "get_world_size",
    "get_backend", "new_group", "get_group", "destroy_process_group", "ParallelEnv", "all_reduce", "all_gather",
    "all_gather_object", "reduce", "reduce_scatter", "broadcast", "broadcast_object_list", "scatter",
    "scatter_object_list", "gather", "alltoall", "alltoall_single", "send", "recv", "isend", "irecv", "barrier",
    "wait", "send_object_list", "recv_object_list",
]

_DEFAULT_TIMEOUT = 600.0


class ReduceOp:
    """Reduction of all_reduce, reduce and reduce_scatter: SUM, MAX, MIN,
    PROD and AVG.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> x = oar.to_tensor([3.0, 1.0])
    >>> dist.all_reduce(x, op=dist.ReduceOp.MAX)   # one rank: its own maximum
    >>> x.numpy().tolist()
    [3.0, 1.0]
    >>> dist.destroy_process_group()
    """

    SUM = _C._ReduceOp.SUM
    MAX = _C._ReduceOp.MAX
    MIN = _C._ReduceOp.MIN
    PROD = _C._ReduceOp.PROD
    AVG = _C._ReduceOp.AVG


class Group:
    """A communicator over a subset of the ranks (``new_group``).

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> g = dist.new_group([0])
    >>> g.rank, g.nranks, g.ranks, g.is_member(), g.get_group_rank(0)
    (0, 1, [0], True, 0)
    >>> dist.destroy_process_group()
    """

    def __init__(self, pg, ranks, gid, name=None):
        self.process_group = pg
        self._device_groups = {}
        self.ranks = list(ranks)
        self.id = gid
        self.name = name or ("_default_pg" if gid == 0 else f"_pg_{gid}")

    @property
    def rank(self):
        """This process's rank within the group (-1 when not a member)."""
        return self.process_group.rank

    @property
    def nranks(self):
        return len(self.ranks)

    world_size = nranks

    def is_member(self):
        return self.rank >= 0

    def get_group_rank(self, rank):
        """The group rank of global rank ``rank`` (-1 when not a member)."""
        return self.ranks.index(rank) if rank in self.ranks else -1

    def _backend(self, tensor):
        """The process group for ``tensor``'s device: MPI for CPU tensors, the
        group's twin for the device (made on first use) for others: NCCL's for
        GPU tensors, the plugin's collectives for plugin devices."""
        kind, index = _C._device_index(tensor)
        if kind == 0:
            return self.process_group
        pg = self._device_groups.get((kind, index))
        if pg is None:
            pg = self._device_groups[(kind, index)] = _C._dist_device_group(self.process_group, kind, index)
        return pg

    def __repr__(self):
        return f"Group(id={self.id}, rank={self.rank}, nranks={self.nranks}, ranks={self.ranks})"


_state = {"world": None, "groups": {}, "info": (0, 1, 0, 1)}


def _seconds(timeout, api):
    if timeout is None:
        return float(os.environ.get("OAR_DIST_TIMEOUT", _DEFAULT_TIMEOUT))
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f"[{api}] timeout must be a positive number of seconds or a timedelta, got {timeout!r}")
    return float(timeout)


def init_parallel_env(timeout=None):
    """Joins the job's ranks (started by ``python -m oar.distributed.launch`` or
    ``mpirun``) and returns the group of all of them. Calling it again is harmless.

    Without a launcher this process is a job of one rank;
    ``destroy_process_group`` shuts the environment down again.

    >>> import oar.distributed as dist
    >>> world = dist.init_parallel_env()
    >>> world.nranks, dist.get_rank(), dist.init_parallel_env() is world
    (1, 0, True)
    >>> dist.destroy_process_group()
    """
    if _state["world"] is not None:
        return _state["world"]
    secs = _seconds(timeout, "oar.distributed.init_parallel_env")
    _state["info"] = _C._dist_init(secs)
    pg = _C._dist_world_group()
    world = Group(pg, range(pg.size), 0)
    _state["world"] = world
    _state["groups"][0] = world
    atexit.register(_C._dist_shutdown)
    return world


def is_initialized():
    """True between ``init_parallel_env`` and ``destroy_process_group``.

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> dist.is_initialized()
    True
    >>> dist.destroy_process_group()
    >>> dist.is_initialized()
    False
    """
    return _state["world"] is not None


def is_available():
    """True when this build has a process-group backend (OpenMPI). Without
    one, only jobs of one process run (``init_parallel_env`` still works).

    >>> import oar.distributed as dist
    >>> isinstance(dist.is_available(), bool)
    True
    """
    return bool(_C._dist_has_mpi())


def get_backend(group=None):
    """The name of the communication backend: ``"MPI"`` (GPU tensors travel
    over NCCL inside the same groups).

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> dist.get_backend()
    'MPI'
    >>> dist.destroy_process_group()
    """
    return "MPI"


def _env_int(*names, default):
    for n in names:
        if n in os.environ:
            return int(os.environ[n])
    return default


def get_rank(group=None):
    """Rank of this process in ``group`` (the world by default); before
    init_parallel_env, the rank the launcher assigned.

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> dist.get_rank(), dist.get_rank(dist.new_group([0]))
    (0, 0)
    >>> dist.destroy_process_group()
    """
    if group is not None:
        return group.rank
    if _state["world"] is not None:
        return _state["info"][0]
    return _env_int("PADDLE_TRAINER_ID", "OMPI_COMM_WORLD_RANK", default=0)


def get_world_size(group=None):
    """Number of ranks in ``group`` (the world by default); before
    init_parallel_env, the number the launcher started.

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> dist.get_world_size(), dist.get_world_size(dist.new_group([0]))
    (1, 1)
    >>> dist.destroy_process_group()
    """
    if group is not None:
        return group.nranks
    if _state["world"] is not None:
        return _state["info"][1]
    return _env_int("PADDLE_TRAINERS_NUM", "OMPI_COMM_WORLD_SIZE", default=1)


class ParallelEnv:
    """The rank layout of this job (Paddle's ``paddle.distributed.ParallelEnv``).

    >>> import oar.distributed as dist
    >>> env = dist.ParallelEnv()
    >>> env.rank, env.world_size, env.local_rank
    (0, 1, 0)
    """

    @property
    def rank(self):
        return get_rank()

    @property
    def world_size(self):
        return get_world_size()

    nranks = world_size
    local_rank = property(lambda self: _state["info"][2] if _state["world"] is not None
                          else _env_int("PADDLE_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", default=0))
    device_id = 0


def _world(api):
    if _state["world"] is None:
        raise RuntimeError(f"[{api}] the parallel environment is not initialised: call "
                           "oar.distributed.init_parallel_env() first")
    return _state["world"]


def _group(group, api):
    return group if group is not None else _world(api)


def new_group(ranks=None, backend=None, timeout=None):
    """A group over ``ranks`` (all ranks by default). Every rank of the job
    must call it, in the same order; non-members get a group with rank -1.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> g = dist.new_group(ranks=[0])
    >>> x = oar.to_tensor([1.0, 2.0])
    >>> dist.all_reduce(x, group=g)
    >>> g.nranks, x.numpy().tolist()
    (1, [1.0, 2.0])
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.new_group"
    world = _world(api)
    if backend not in (None, "mpi", "MPI", "gloo"):
        raise ValueError(f"[{api}] backend must be None or 'mpi' on CPU, got {backend!r}")
    ranks = sorted(int(r) for r in (range(world.nranks) if ranks is None else ranks))
    pg = _C._dist_new_group(ranks, _seconds(timeout, api))
    gid = max(_state["groups"]) + 1
    g = Group(pg, ranks, gid)
    _state["groups"][gid] = g
    return g


def get_group(id=0):
    """The group with ``id`` (0: the world group), or None.

    >>> import oar.distributed as dist
    >>> world = dist.init_parallel_env()
    >>> g = dist.new_group([0])
    >>> dist.get_group() is world, dist.get_group(g.id) is g, dist.get_group(99)
    (True, True, None)
    >>> dist.destroy_process_group()
    """
    return _state["groups"].get(id)


def destroy_process_group(group=None):
    """Forgets ``group``; without an argument, shuts the parallel environment
    down (``init_parallel_env`` may start it again).

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> g = dist.new_group([0])
    >>> dist.destroy_process_group(g)
    >>> dist.get_group(g.id) is None, dist.is_initialized()
    (True, True)
    >>> dist.destroy_process_group()
    >>> dist.is_initialized()
    False
    """
    if group is not None and group.id != 0:
        _state["groups"].pop(group.id, None)
        return
    if _state["world"] is not None:
        _C._dist_shutdown()
        _state["world"] = None
        _state["groups"].clear()
        from .fleet import _forget_layout

        _forget_layout()  # its groups are gone


class _Task:
    """The handle of an asynchronous collective (``sync_op=False``)."""

    def __init__(self, work, after=None):
        self._work = work
        self._after = after

    def wait(self):
        self._work.wait()
        if self._after is not None:
            after, self._after = self._after, None
            after()
        return True

    def is_completed(self):
        return self._work.is_completed()


def _check_tensor(t, api, name="tensor"):
    if not isinstance(t, _C.Tensor):
        raise TypeError(f"[{api}] {name} must be an oar Tensor, got {type(t).__name__}")


def _buffer(t):
    """A contiguous tensor sharing or copying t's data, and the write-back."""
    if t.is_contiguous():
        return t, None
    buf = t.contiguous()
    return buf, (lambda: t.copy_(buf, False))


def _finish(work, sync_op, after=None):
    task = _Task(work, after)
    if sync_op:
        task.wait()
        return None
    return task


def all_reduce(tensor, op=ReduceOp.SUM, group=None, sync_op=True):
    """Reduces ``tensor`` over the ranks of ``group`` in place.

    >>> import oar
    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()      # a job of one rank without a launcher
    >>> x = oar.to_tensor([1.0, 2.0])
    >>> dist.all_reduce(x)
    >>> x.numpy().tolist()
    [1.0, 2.0]
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.all_reduce"
    _check_tensor(tensor, api)
    g = _group(group, api)
    buf, back = _buffer(tensor)
    return _finish(g._backend(buf).all_reduce(buf, op), sync_op, back)


def _flat_blocks(n, like):
    """A flat buffer of n blocks of ``like``, on its device."""
    out = empty([n * like.size], dtype=like.dtype)
    return out if like.place.is_cpu_place() else out.to(like.place)


def _flat_concat(tensors):
    """The tensors flattened and concatenated, on the first one's device (GPU
    tensors through the host: this build has no GPU concat kernel)."""
    from .._manip import concat

    place = tensors[0].place
    if place.is_cpu_place():
        return concat([t.reshape([-1]) for t in tensors])
    return concat([t.cpu().reshape([-1]) for t in tensors]).to(place)


def all_gather(tensor_list, tensor, group=None, sync_op=True):
    """Gathers ``tensor`` from every rank: into ``tensor_list`` (a list, filled
    in rank order) or, when it is a Tensor, concatenated along axis 0.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> parts = []
    >>> dist.all_gather(parts, oar.to_tensor([1, 2]))
    >>> [p.numpy().tolist() for p in parts]       # one tensor per rank
    [[1, 2]]
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.all_gather"
    _check_tensor(tensor, api)
    g = _group(group, api)
    src = tensor.contiguous()
    out = _flat_blocks(g.nranks, src)
    shape = list(src.shape)

    def after():
        blocks = out.reshape([g.nranks] + shape)
        if isinstance(tensor_list, list):
            tensor_list.clear()
            tensor_list.extend(blocks[i] for i in range(g.nranks))
        else:
            tensor_list.copy_(blocks.reshape(list(tensor_list.shape)), False)

    if not isinstance(tensor_list, list):
        _check_tensor(tensor_list, api, "tensor_list")
        if tensor_list.size != out.size:
            raise ValueError(f"[{api}] the output tensor must hold {g.nranks} x {src.size} elements, "
                             f"got shape {list(tensor_list.shape)}")
    return _finish(g._backend(src).all_gather(out, src), sync_op, after)


def _to_bytes_tensor(obj):
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8)
    return to_tensor(data.copy())


def all_gather_object(object_list, obj, group=None):
    """Gathers a picklable object from every rank into ``object_list``.

    Objects are pickled: only use it with peers you trust, as with Paddle.

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> objs = []
    >>> dist.all_gather_object(objs, {"rank": dist.get_rank()})
    >>> objs
    [{'rank': 0}]
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.all_gather_object"
    if not isinstance(object_list, list):
        raise TypeError(f"[{api}] object_list must be a list, got {type(object_list).__name__}")
    g = _group(group, api)
    data = _to_bytes_tensor(obj)
    size = to_tensor(np.array([data.size], dtype=np.int64))
    sizes = []
    all_gather(sizes, size, group=g)
    longest = max(int(s.numpy()[0]) for s in sizes)
    padded = to_tensor(np.pad(data.numpy(), (0, longest - data.size)))
    blocks = []
    all_gather(blocks, padded, group=g)
    object_list.clear()
    for s, b in zip(sizes, blocks):
        object_list.append(pickle.loads(b.numpy()[: int(s.numpy()[0])].tobytes()))


def _group_rank(g, rank, api, what):
    r = g.get_group_rank(int(rank))
    if r < 0:
        raise ValueError(f"[{api}] {what} must be a rank of the group {g.ranks}, got {rank}")
    return r


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, sync_op=True):
    """Reduces ``tensor`` from every rank into rank ``dst`` (a global rank).

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> x = oar.to_tensor([2.0, 3.0])
    >>> dist.reduce(x, dst=0, op=dist.ReduceOp.PROD)
    >>> x.numpy().tolist()
    [2.0, 3.0]
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.reduce"
    _check_tensor(tensor, api)
    g = _group(group, api)
    buf, back = _buffer(tensor)
    return _finish(g._backend(buf).reduce(buf, _group_rank(g, dst, api, "dst"), op), sync_op, back)


def reduce_scatter(tensor, tensor_list, op=ReduceOp.SUM, group=None, sync_op=True):
    """Reduces ``tensor_list`` (one tensor per rank, or one tensor split along
    axis 0) over the ranks; rank r receives the reduction of block r in ``tensor``.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> out = oar.zeros([2])
    >>> dist.reduce_scatter(out, [oar.to_tensor([1.0, 2.0])])   # one block per rank
    >>> out.numpy().tolist()
    [1.0, 2.0]
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.reduce_scatter"
    _check_tensor(tensor, api)
    g = _group(group, api)
    if isinstance(tensor_list, (list, tuple)):
        if len(tensor_list) != g.nranks:
            raise ValueError(f"[{api}] expected {g.nranks} tensors in tensor_list, got {len(tensor_list)}")
        for t in tensor_list:
            _check_tensor(t, api, "tensor_list item")
        src = _flat_concat(tensor_list)
    else:
        _check_tensor(tensor_list, api, "tensor_list")
        src = tensor_list.contiguous().reshape([-1])
    buf, back = _buffer(tensor)
    return _finish(g._backend(buf).reduce_scatter(buf, src, op), sync_op, back)


def broadcast(tensor, src=0, group=None, sync_op=True):
    """Copies ``tensor`` of rank ``src`` (a global rank) to every rank of the group.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> x = oar.to_tensor([4, 5])
    >>> dist.broadcast(x, src=0)
    >>> x.numpy().tolist()
    [4, 5]
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.broadcast"
    _check_tensor(tensor, api)
    g = _group(group, api)
    buf, back = _buffer(tensor)
    return _finish(g._backend(buf).broadcast(buf, _group_rank(g, src, api, "src")), sync_op, back)


def broadcast_object_list(object_list, src=0, group=None):
    """Replaces ``object_list`` on every rank with rank ``src``'s (pickled:
    only use it with peers you trust, as with Paddle).

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> objs = [{"lr": 0.1}, "tag"] if dist.get_rank() == 0 else [None, None]
    >>> dist.broadcast_object_list(objs, src=0)
    >>> objs
    [{'lr': 0.1}, 'tag']
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.broadcast_object_list"
    g = _group(group, api)
    me = g.rank == _group_rank(g, src, api, "src")
    data = _to_bytes_tensor(list(object_list)) if me else None
    size = to_tensor(np.array([data.size if me else 0], dtype=np.int64))
    broadcast(size, src, g)
    buf = data if me else empty([int(size.numpy()[0])], dtype="uint8")
    broadcast(buf, src, g)
    object_list[:] = pickle.loads(buf.numpy().tobytes())


def scatter(tensor, tensor_list=None, src=0, group=None, sync_op=True):
    """Rank ``src`` sends block r of ``tensor_list`` to rank r, into ``tensor``.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> out = oar.zeros([2])
    >>> dist.scatter(out, [oar.to_tensor([3.0, 4.0])], src=0)   # one block per rank
    >>> out.numpy().tolist()
    [3.0, 4.0]
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.scatter"
    _check_tensor(tensor, api)
    g = _group(group, api)
    root = _group_rank(g, src, api, "src")
    inp = None
    if g.rank == root:
        if tensor_list is None or len(tensor_list) != g.nranks:
            raise ValueError(f"[{api}] rank {src} must pass {g.nranks} tensors in tensor_list")
        inp = _flat_concat(tensor_list)
    buf, back = _buffer(tensor)
    return _finish(g._backend(buf).scatter(buf, inp, root), sync_op, back)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0, group=None):
    """Rank ``src`` sends object r of ``scatter_object_input_list`` (one per
    rank) to rank r, which gets it as ``scatter_object_output_list[0]``.
    Objects are pickled: only use it with peers you trust, as with Paddle.

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> out = []
    >>> dist.scatter_object_list(out, [{"shard": 0}], src=0)
    >>> out
    [{'shard': 0}]
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.scatter_object_list"
    g = _group(group, api)
    objs = [None]
    if g.rank == _group_rank(g, src, api, "src"):
        objs = [list(scatter_object_input_list)]
    broadcast_object_list(objs, src, g)
    scatter_object_output_list[:] = [objs[0][g.rank]]


def gather(tensor, gather_list=None, dst=0, group=None, sync_op=True):
    """Rank ``dst`` receives ``tensor`` of every rank into ``gather_list``.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> parts = []
    >>> dist.gather(oar.to_tensor([7, 8]), parts, dst=0)
    >>> [p.numpy().tolist() for p in parts]       # one tensor per rank, on rank dst
    [[7, 8]]
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.gather"
    _check_tensor(tensor, api)
    g = _group(group, api)
    root = _group_rank(g, dst, api, "dst")
    src = tensor.contiguous()
    out = _flat_blocks(g.nranks, src) if g.rank == root else None
    shape = list(src.shape)

    def after():
        if out is not None and gather_list is not None:
            blocks = out.reshape([g.nranks] + shape)
            gather_list.clear()
            gather_list.extend(blocks[i] for i in range(g.nranks))

    return _finish(g._backend(src).gather(out, src, root), sync_op, after)


def alltoall(out_tensor_list, in_tensor_list, group=None, sync_op=True):
    """Rank r sends ``in_tensor_list[j]`` to rank j and receives into
    ``out_tensor_list[j]`` what rank j sent it (equal shapes).

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> out = []
    >>> dist.alltoall(out, [oar.to_tensor([1, 2])])   # one tensor per rank
    >>> [t.numpy().tolist() for t in out]
    [[1, 2]]
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.alltoall"
    g = _group(group, api)
    if not isinstance(in_tensor_list, (list, tuple)) or len(in_tensor_list) != g.nranks:
        raise ValueError(f"[{api}] in_tensor_list must be a list of {g.nranks} tensors")
    first = in_tensor_list[0]
    src = _flat_concat(in_tensor_list)
    out = _flat_blocks(1, src)
    shape = list(first.shape)

    def after():
        blocks = out.reshape([g.nranks] + shape)
        out_tensor_list.clear()
        out_tensor_list.extend(blocks[i] for i in range(g.nranks))

    return _finish(g._backend(src).alltoall(out, src, [], []), sync_op, after)


def alltoall_single(out_tensor, in_tensor, out_split_sizes=None, in_split_sizes=None, group=None, sync_op=True):
    """All-to-all on axis 0 of one tensor, with optional per-rank split sizes (rows).

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> out = oar.zeros([3])
    >>> dist.alltoall_single(out, oar.to_tensor([1.0, 2.0, 3.0]), [3], [3])
    >>> out.numpy().tolist()
    [1.0, 2.0, 3.0]
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.alltoall_single"
    _check_tensor(out_tensor, api, "out_tensor")
    _check_tensor(in_tensor, api, "in_tensor")
    g = _group(group, api)
    src = in_tensor.contiguous()
    row_in = src.size // src.shape[0] if src.ndim and src.shape[0] else 1
    row_out = out_tensor.size // out_tensor.shape[0] if out_tensor.ndim and out_tensor.shape[0] else 1
    ic = [int(s) * row_in for s in in_split_sizes] if in_split_sizes else []
    oc = [int(s) * row_out for s in out_split_sizes] if out_split_sizes else []
    buf, back = _buffer(out_tensor)
    return _finish(g._backend(src).alltoall(buf, src, oc, ic), sync_op, back)


def send(tensor, dst=0, group=None, sync_op=True):
    """Sends ``tensor`` to rank ``dst`` (a global rank), which receives it
    with ``recv``. A job of one process has no peer to send to.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> x = oar.to_tensor([1.0, 2.0])
    >>> if dist.get_world_size() > 1 and dist.get_rank() == 0:
    ...     dist.send(x, dst=1)
    >>> dist.send(x, dst=0)
    Traceback (most recent call last):
        ...
    ValueError: [oar.distributed.send] a job of one process has no peer to send to
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.send"
    _check_tensor(tensor, api)
    g = _group(group, api)
    buf = tensor.contiguous()
    return _finish(g._backend(buf).send(buf, _group_rank(g, dst, api, "dst")), sync_op)


def recv(tensor, src=0, group=None, sync_op=True):
    """Receives into ``tensor`` what rank ``src`` sent with ``send``.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> x = oar.zeros([2])
    >>> if dist.get_world_size() > 1 and dist.get_rank() == 1:
    ...     dist.recv(x, src=0)
    >>> dist.get_world_size()       # a job of one process: nothing to receive
    1
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.recv"
    _check_tensor(tensor, api)
    g = _group(group, api)
    buf, back = _buffer(tensor)
    return _finish(g._backend(buf).recv(buf, _group_rank(g, src, api, "src")), sync_op, back)


def _peer(rank, rank_in_group, g, api, what):
    """The global rank named by ``rank`` (global) or ``rank_in_group`` (exactly one)."""
    if (rank is None) == (rank_in_group is None):
        raise ValueError(f"[{api}] give exactly one of {what} and {what}_in_group")
    if rank_in_group is not None:
        if not 0 <= int(rank_in_group) < g.nranks:
            raise ValueError(f"[{api}] {what}_in_group must be in [0, {g.nranks}), got {rank_in_group}")
        return g.ranks[int(rank_in_group)]
    _group_rank(g, rank, api, what)
    return int(rank)


def send_object_list(object_list, dst=None, group=None, dst_in_group=None):
    """Sends the picklable objects of ``object_list`` to rank ``dst`` (a
    global rank; or ``dst_in_group``, a rank of ``group``), which receives
    them with ``recv_object_list``. Objects are pickled: only use it with
    peers you trust, as with Paddle.

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> if dist.get_rank() == 0 and dist.get_world_size() > 1:
    ...     dist.send_object_list([{"lr": 0.1}, "tag"], dst=1)
    >>> dist.send_object_list([1], dst=0, dst_in_group=0)
    Traceback (most recent call last):
        ...
    ValueError: [oar.distributed.send_object_list] give exactly one of dst and dst_in_group
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.send_object_list"
    if not isinstance(object_list, list):
        raise TypeError(f"[{api}] object_list must be a list, got {type(object_list).__name__}")
    g = _group(group, api)
    peer = _peer(dst, dst_in_group, g, api, "dst")
    data = _to_bytes_tensor(list(object_list))
    send(to_tensor(np.array([data.size], dtype=np.int64)), peer, g)
    send(data, peer, g)


def recv_object_list(object_list, src=None, group=None, src_in_group=None):
    """Receives into ``object_list`` (in place, one object per slot) the
    objects rank ``src`` (a global rank; or ``src_in_group``) sent with
    ``send_object_list``.

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> got = [None, None]
    >>> if dist.get_rank() == 1:
    ...     dist.recv_object_list(got, src=0)
    >>> dist.recv_object_list(got, src=5)
    Traceback (most recent call last):
        ...
    ValueError: [oar.distributed.recv_object_list] src must be a rank of the group [0], got 5
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.recv_object_list"
    if not isinstance(object_list, list):
        raise TypeError(f"[{api}] object_list must be a list, got {type(object_list).__name__}")
    g = _group(group, api)
    peer = _peer(src, src_in_group, g, api, "src")
    size = empty([1], dtype="int64")
    recv(size, peer, g)
    buf = empty([int(size.numpy()[0])], dtype="uint8")
    recv(buf, peer, g)
    objs = pickle.loads(buf.numpy().tobytes())
    if len(objs) != len(object_list):
        raise ValueError(f"[{api}] rank {peer} sent {len(objs)} objects, object_list has {len(object_list)} slots")
    object_list[:] = objs


def isend(tensor, dst, group=None):
    """``send`` without waiting: returns a task whose ``wait()`` blocks until
    ``tensor`` has been sent.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> x = oar.to_tensor([1.0, 2.0])
    >>> if dist.get_world_size() > 1 and dist.get_rank() == 0:
    ...     task = dist.isend(x, dst=1)
    ...     _ = task.wait()
    >>> dist.get_world_size()       # a job of one process: no peer
    1
    >>> dist.destroy_process_group()
    """
    return send(tensor, dst, group, sync_op=False)


def irecv(tensor, src=None, group=None):
    """``recv`` without waiting: returns a task whose ``wait()`` blocks until
    ``tensor`` holds what rank ``src`` sent.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> x = oar.zeros([2])
    >>> if dist.get_world_size() > 1 and dist.get_rank() == 1:
    ...     task = dist.irecv(x, src=0)
    ...     _ = task.wait()
    >>> dist.get_world_size()       # a job of one process: no peer
    1
    >>> dist.destroy_process_group()
    """
    return recv(tensor, 0 if src is None else src, group, sync_op=False)


def barrier(group=None):
    """Blocks until every rank of the group has reached it.

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> dist.barrier()
    >>> dist.destroy_process_group()
    """
    g = _group(group, "oar.distributed.barrier")
    _finish(g.process_group.barrier(), True)


def wait(tensor, group=None, use_calc_stream=True):
    """Waits for the communication on ``tensor``. oar's collectives are
    complete when their call (or their task's ``wait()``) returns, so there
    is nothing left to wait for.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> x = oar.to_tensor([1.0])
    >>> task = dist.all_reduce(x, sync_op=False)
    >>> task.wait(), dist.wait(x)
    (True, None)
    >>> dist.destroy_process_group()
    """
    return None
