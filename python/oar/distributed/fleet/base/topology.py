"""The hybrid-parallel rank layout (Paddle's ``fleet.CommunicateTopology``,
``fleet.HybridCommunicateGroup`` and ``paddle.distributed.ParallelMode``).

Ranks are laid out on a grid with one axis per kind of parallelism, in the
order of the axis names (``data, pipe, sharding, sep, context, model`` by
default): rank = row-major index of its coordinate, so the last axis (model
parallel) varies fastest and model-parallel peers are neighbouring ranks.
"""
import collections

import numpy as np

from ... import collective as _coll

__all__ = ["ParallelMode", "CommunicateTopology", "HybridCommunicateGroup"]

_TOPO_API = "oar.distributed.fleet.CommunicateTopology"
_HCG_API = "oar.distributed.fleet.HybridCommunicateGroup"

# The HybridCommunicateGroup that fleet.init built last; layers and wrappers
# that are given no group use its groups.
_HYBRID_PARALLEL_GROUP = None


def _current_hcg():
    """The hybrid group of this process (None before fleet.init)."""
    return _HYBRID_PARALLEL_GROUP


class ParallelMode:
    """The kind of parallelism a hybrid configuration amounts to
    (``HybridCommunicateGroup.get_parallel_mode()``).

    >>> import oar.distributed as dist
    >>> dist.ParallelMode.DATA_PARALLEL, dist.ParallelMode.PIPELINE_PARALLEL
    (0, 2)
    """

    DATA_PARALLEL = 0
    TENSOR_PARALLEL = 1
    PIPELINE_PARALLEL = 2
    SHARDING_PARALLEL = 3
    SEGMENT_PARALLEL = 4


class CommunicateTopology:
    """A grid of ``prod(dims)`` ranks with one named axis per entry of
    ``hybrid_group_names``; rank r sits at the row-major coordinate of r.

    >>> from oar.distributed.fleet import CommunicateTopology
    >>> topo = CommunicateTopology(["data", "pipe", "model"], [2, 1, 2])
    >>> topo.world_size(), topo.get_rank(data=1, pipe=0, model=0)
    (4, 2)
    >>> topo.get_coord(3)
    Coordinate(data=1, pipe=0, model=1)
    >>> topo.get_comm_list("model"), topo.get_comm_list("data")
    ([[0, 1], [2, 3]], [[0, 2], [1, 3]])
    >>> topo.get_axis_list("data", 1)
    [2, 3]
    """

    def __init__(self, hybrid_group_names=("data", "pipe", "sharding", "sep", "context", "model"),
                 dims=(1, 1, 1, 1, 1, 1)):
        names, dims = list(hybrid_group_names), list(dims)
        if not names or any(not isinstance(n, str) or not n.isidentifier() for n in names) \
                or len(set(names)) != len(names):
            raise ValueError(f"[{_TOPO_API}] hybrid_group_names must be distinct identifiers, got {names}")
        if len(dims) != len(names):
            raise ValueError(f"[{_TOPO_API}] expected {len(names)} dims (one per name in {names}), got {dims}")
        if any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1 for d in dims):
            raise ValueError(f"[{_TOPO_API}] dims must be positive ints, got {dims}")
        self._parallel_names = names
        self._dims = [int(d) for d in dims]
        self.coordinate = collections.namedtuple("Coordinate", names)
        self._world_size = int(np.prod(self._dims))
        self._grid = np.arange(self._world_size).reshape(self._dims)

    def _axis(self, axis_name):
        if axis_name not in self._parallel_names:
            raise ValueError(f"[{_TOPO_API}] no axis named {axis_name!r}; axes are {self._parallel_names}")
        return self._parallel_names.index(axis_name)

    def get_hybrid_group_names(self):
        """The axis names, in layout order."""
        return list(self._parallel_names)

    def get_dim(self, axis_name):
        """The size of axis ``axis_name``."""
        return self._dims[self._axis(axis_name)]

    get_dim_size = get_dim

    def world_size(self):
        """The number of ranks of the grid."""
        return self._world_size

    def get_rank(self, **args):
        """The rank at the coordinate given by one keyword per axis."""
        if sorted(args) != sorted(self._parallel_names):
            raise ValueError(f"[{_TOPO_API}.get_rank] expected one coordinate per axis "
                             f"{self._parallel_names}, got {sorted(args)}")
        idx = []
        for i, name in enumerate(self._parallel_names):
            v = args[name]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < self._dims[i]:
                raise IndexError(f"[{_TOPO_API}.get_rank] coordinate {name}={v!r} is out of range "
                                 f"[0, {self._dims[i]})")
            idx.append(int(v))
        return int(self._grid[tuple(idx)])

    def get_coord(self, rank):
        """The coordinate (a namedtuple with one field per axis) of ``rank``."""
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 0 <= rank < self._world_size:
            raise IndexError(f"[{_TOPO_API}.get_coord] rank {rank!r} is out of range [0, {self._world_size})")
        return self.coordinate(*(int(c) for c in np.unravel_index(int(rank), self._dims)))

    def get_axis_list(self, axis_name, index):
        """The ranks whose coordinate on ``axis_name`` is ``index``, sorted."""
        a = self._axis(axis_name)
        if not 0 <= index < self._dims[a]:
            raise IndexError(f"[{_TOPO_API}.get_axis_list] index {index} is out of range [0, {self._dims[a]})")
        return sorted(int(r) for r in np.take(self._grid, index, axis=a).reshape(-1))

    def get_comm_list(self, axis_name):
        """The communication groups along ``axis_name``: one list per
        coordinate of the other axes (in layout order), each holding the
        ranks that differ only on ``axis_name``."""
        a = self._axis(axis_name)
        return np.moveaxis(self._grid, a, -1).reshape(-1, self._dims[a]).tolist()

    def get_fused_ranks(self, fused_axis):
        """The groups of ranks that differ only on the axes ``fused_axis``
        (one group per coordinate of the other axes, in layout order)."""
        axes = [self._axis(n) for n in fused_axis]
        rest = [i for i in range(len(self._dims)) if i not in axes]
        size = int(np.prod([self._dims[i] for i in axes]))
        return np.transpose(self._grid, rest + axes).reshape(-1, size).tolist()

    def get_rank_from_stage(self, global_rank, **kwargs):
        """The rank at ``global_rank``'s coordinate with the axes in ``kwargs`` replaced."""
        return self.get_rank(**self.get_coord(global_rank)._replace(**kwargs)._asdict())

    def __repr__(self):
        return f"CommunicateTopology(names={self._parallel_names}, dims={self._dims})"


class HybridCommunicateGroup:
    """The process groups of a hybrid-parallel job laid out by ``topology``.

    Every rank creates the groups of every axis, in the same order (pipe,
    data, model, sharding, then sep and context when their degree is above 1,
    then the check groups), so that ``new_group`` matches on all ranks; each
    rank keeps the group it belongs to per axis. Built by ``fleet.init``; in
    a single process every axis has size 1.

    >>> from oar.distributed import fleet
    >>> _ = fleet.init(is_collective=True)
    >>> hcg = fleet.get_hybrid_communicate_group()
    >>> hcg.get_data_parallel_world_size(), hcg.get_model_parallel_rank(), hcg.get_stage_id()
    (1, 0, 0)
    >>> hcg.get_model_parallel_group().ranks
    [0]
    >>> import oar.distributed as dist
    >>> dist.destroy_process_group()
    """

    def __init__(self, topology, hybrid_configs=None):
        global _HYBRID_PARALLEL_GROUP
        if not isinstance(topology, CommunicateTopology):
            raise TypeError(f"[{_HCG_API}] topology must be a CommunicateTopology, got {type(topology).__name__}")
        _coll.init_parallel_env()
        self.nranks = _coll.get_world_size()
        self.global_rank = _coll.get_rank()
        self._topo = topology
        names = topology.get_hybrid_group_names()
        for need in ("data", "pipe", "model", "sharding"):
            if need not in names:
                raise ValueError(f"[{_HCG_API}] the topology needs an axis named {need!r}, got {names}")
        deg = {n: topology.get_dim(n) for n in names}
        self._dp_degree, self._mp_degree, self._pp_degree = deg["data"], deg["model"], deg["pipe"]
        self._sharding_degree = deg["sharding"]
        self._sep_degree = deg.get("sep", 1)
        self._cp_degree = deg.get("context", 1)
        if topology.world_size() != self.nranks:
            raise ValueError(f"[{_HCG_API}] the degrees {deg} make {topology.world_size()} ranks, but the job "
                             f"has {self.nranks}")
        coord = topology.get_coord(self.global_rank)
        self._data_parallel_id = coord.data
        self._model_parallel_id = coord.model
        self._sharding_parallel_id = coord.sharding
        self._sep_parallel_id = getattr(coord, "sep", 0)
        self.stage_id = coord.pipe

        self._pp_group, self._pp_comm_group = self._set_comm_group("pipe")
        self._dp_group, self._dp_comm_group = self._set_comm_group("data")
        self._mp_group, self._mp_comm_group = self._set_comm_group("model")
        self._sharding_group, self._sharding_comm_group = self._set_comm_group("sharding")
        self._sep_group = self._sep_comm_group = None
        if self._sep_degree > 1:
            self._sep_group, self._sep_comm_group = self._set_comm_group("sep")
        self._cp_group = self._cp_comm_group = None
        if self._cp_degree > 1:
            self._cp_group, self._cp_comm_group = self._set_comm_group("context")
        # The ranks sharing a data-parallel index (all but the dp axis): the
        # group over which a global gradient norm or an inf/nan check runs.
        self._check_group, self._check_comm_group = self._set_check_group("data")
        self.sharding_check_group = self.sharding_check_comm_group = None
        if self._sharding_degree > 1:
            self.sharding_check_group, self.sharding_check_comm_group = self._set_check_group("sharding")

        self.is_first_stage = self.stage_id == 0
        self.is_last_stage = self.stage_id == self._pp_degree - 1
        pipe = self._pp_group
        i = pipe.index(self.global_rank)
        self.next_rank = pipe[(i + 1) % len(pipe)]
        self.prev_rank = pipe[(i - 1) % len(pipe)]
        _HYBRID_PARALLEL_GROUP = self

    def _set_comm_group(self, axis):
        mine = None
        for ranks in self._topo.get_comm_list(axis):
            g = _coll.new_group(ranks)
            if self.global_rank in ranks:
                mine = (ranks, g)
        return mine

    def _set_check_group(self, axis):
        mine = None
        for idx in range(self._topo.get_dim(axis)):
            ranks = self._topo.get_axis_list(axis, idx)
            g = _coll.new_group(ranks)
            if self.global_rank in ranks:
                mine = (ranks, g)
        return mine

    def get_parallel_mode(self):
        """The ``ParallelMode`` of the degrees: pipeline when pp > 1, else
        tensor parallel when mp > 1, else segment (sep), sharding, data."""
        if self._pp_degree > 1:
            return ParallelMode.PIPELINE_PARALLEL
        if self._mp_degree > 1:
            return ParallelMode.TENSOR_PARALLEL
        if self._sep_degree > 1:
            return ParallelMode.SEGMENT_PARALLEL
        if self._sharding_degree > 1:
            return ParallelMode.SHARDING_PARALLEL
        return ParallelMode.DATA_PARALLEL

    def topology(self):
        return self._topo

    def get_global_rank(self):
        return self.global_rank

    # data parallel
    def get_data_parallel_rank(self):
        return self._data_parallel_id

    def get_data_parallel_world_size(self):
        return self._dp_degree

    def get_data_parallel_group(self):
        return self._dp_comm_group

    def get_data_parallel_group_src_rank(self):
        return self._dp_comm_group.ranks[0]

    # model (tensor) parallel
    def get_model_parallel_rank(self):
        return self._model_parallel_id

    def get_model_parallel_world_size(self):
        return self._mp_degree

    def get_model_parallel_group(self):
        return self._mp_comm_group

    def get_model_parallel_group_src_rank(self):
        return self._mp_comm_group.ranks[0]

    # pipeline parallel
    def get_stage_id(self):
        return self.stage_id

    def get_pipe_parallel_rank(self):
        return self.stage_id

    def get_pipe_parallel_world_size(self):
        return self._pp_degree

    def get_pipe_parallel_group(self):
        return self._pp_comm_group

    def get_rank_from_stage(self, stage_id, **kwargs):
        """The global rank of pipeline stage ``stage_id`` with this rank's other coordinates."""
        return self._topo.get_rank_from_stage(self.global_rank, pipe=stage_id, **kwargs)

    # sharding parallel
    def get_sharding_parallel_rank(self):
        return self._sharding_parallel_id

    def get_sharding_parallel_world_size(self):
        return self._sharding_degree

    def get_sharding_parallel_group(self):
        return self._sharding_comm_group

    def get_sharding_parallel_group_src_rank(self):
        return self._sharding_comm_group.ranks[0]

    # segment parallel
    def get_sep_parallel_rank(self):
        return self._sep_parallel_id

    def get_sep_parallel_world_size(self):
        return self._sep_degree

    def get_sep_parallel_group(self):
        if self._sep_comm_group is None:
            raise ValueError(f"[{_HCG_API}.get_sep_parallel_group] sep_degree is 1: there is no sep group")
        return self._sep_comm_group

    def get_sep_parallel_group_src_rank(self):
        return self.get_sep_parallel_group().ranks[0]

    def get_check_parallel_group(self, sharding=False):
        """The group over which global checks (gradient norm, inf/nan) run:
        every rank with this rank's data-parallel index (with ``sharding``:
        its sharding index)."""
        if sharding:
            if self.sharding_check_comm_group is None:
                raise ValueError(f"[{_HCG_API}.get_check_parallel_group] sharding_degree is 1: there is no "
                                 "sharding check group")
            return self.sharding_check_comm_group
        return self._check_comm_group

    def __repr__(self):
        return (f"HybridCommunicateGroup(rank={self.global_rank}, dp={self._dp_degree}, pp={self._pp_degree}, "
                f"sharding={self._sharding_degree}, mp={self._mp_degree}, dp_group={self._dp_group}, "
                f"pp_group={self._pp_group}, sharding_group={self._sharding_group}, mp_group={self._mp_group})")
