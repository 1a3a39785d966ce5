"""``fleet.Fleet``: the entry of collective training with fleet (Paddle 3.x names).

``fleet.init(is_collective=True, strategy=s)`` joins the job's ranks
(``init_parallel_env``; without a launcher this process is a job of one
rank) and lays them out as the strategy's ``hybrid_configs`` says, building
a :class:`HybridCommunicateGroup`. ``fleet.distributed_model`` and
``fleet.distributed_optimizer`` then wrap the model and optimizer for that
layout. The module-level functions of ``oar.distributed.fleet`` are the
methods of one ``Fleet`` object.
"""
import copy

import numpy as np

from .. import collective as _coll
from .base import topology as _topology
from .base.distributed_strategy import DistributedStrategy
from .base.role_maker import PaddleCloudRoleMaker, RoleMakerBase
from .base.util_factory import UtilBase

__all__ = ["Fleet"]

_API = "oar.distributed.fleet"
# hybrid_parallel_order's short names -> axis names of the topology
_AXES = {"dp": "data", "pp": "pipe", "sharding": "sharding", "sep": "sep", "cp": "context", "mp": "model"}


class Fleet:
    """One fleet job's state; ``oar.distributed.fleet`` holds the instance
    that its functions (``fleet.init``, ``fleet.worker_index``, ...) use.

    >>> from oar.distributed import fleet
    >>> f = fleet.Fleet()
    >>> _ = f.init(is_collective=True)
    >>> f.worker_index(), f.worker_num(), f.is_first_worker()
    (0, 1, True)
    >>> import oar.distributed as dist
    >>> dist.destroy_process_group()
    """

    def __init__(self):
        self._role_maker = None
        self._is_collective = False
        self._user_defined_strategy = DistributedStrategy()
        self._hcg = None
        self._topology = None
        self.user_defined_optimizer = None
        self._dist_optimizer = None
        self.util = UtilBase()

    def init(self, role_maker=None, is_collective=False, strategy=None, log_level="INFO"):
        """Joins the job and builds the hybrid communicate group of ``strategy``
        (``DistributedStrategy()`` by default: pure data parallelism over
        all ranks). ``role_maker`` defaults to a ``PaddleCloudRoleMaker``
        reading the launcher's environment. Returns this Fleet.

        A second call with the same degrees keeps the groups; with other
        degrees it builds new ones (every rank must make the same calls).
        """
        if strategy is None:
            strategy = DistributedStrategy()
        if not isinstance(strategy, DistributedStrategy):
            raise TypeError(f"[{_API}.init] strategy must be a fleet.DistributedStrategy, "
                            f"got {type(strategy).__name__}")
        if role_maker is None:
            if not isinstance(is_collective, bool):
                raise TypeError(f"[{_API}.init] is_collective must be a bool, got {type(is_collective).__name__}")
            role_maker = PaddleCloudRoleMaker(is_collective=is_collective)
        elif not isinstance(role_maker, RoleMakerBase):
            raise TypeError(f"[{_API}.init] role_maker must be a fleet role maker (PaddleCloudRoleMaker, "
                            f"UserDefinedRoleMaker), got {type(role_maker).__name__}")
        self._user_defined_strategy = copy.deepcopy(strategy)
        self._is_collective = role_maker._is_collective
        _coll.init_parallel_env()
        role_maker._generate_role()
        self._role_maker = role_maker
        self.util._set_role_maker(role_maker)
        self._init_hybrid_parallel_env()
        return self

    def _init_hybrid_parallel_env(self):
        h = self._user_defined_strategy.hybrid_configs
        n = _coll.get_world_size()
        deg = {"dp": h["dp_degree"], "pp": max(h["pp_degree"], 1), "sharding": max(h["sharding_degree"], 1),
               "sep": max(h["sep_degree"], 1), "cp": max(h["cp_degree"], 1), "mp": max(h["mp_degree"], 1)}
        others = int(np.prod([v for k, v in deg.items() if k != "dp"]))
        if deg["dp"] < 0:
            if n % others:
                raise ValueError(f"[{_API}.init] the job's {n} ranks are not divisible by mp x pp x sharding "
                                 f"= {others}: set hybrid_configs so that the degrees multiply to {n}")
            deg["dp"] = n // others
        deg["dp"] = max(deg["dp"], 1)
        if deg["dp"] * others != n:
            raise ValueError(f"[{_API}.init] hybrid_configs degrees dp={deg['dp']} x pp={deg['pp']} x "
                             f"sharding={deg['sharding']} x mp={deg['mp']} make {deg['dp'] * others} ranks, but "
                             f"the job has {n}")
        order = self._user_defined_strategy.hybrid_parallel_order
        names = [_AXES[k] for k in order]
        dims = [deg[k] for k in order]
        cur = _topology._current_hcg()
        if cur is not None and cur.topology().get_hybrid_group_names() == names \
                and [cur.topology().get_dim(a) for a in names] == dims and cur.nranks == n:
            self._hcg, self._topology = cur, cur.topology()
            return
        self._topology = _topology.CommunicateTopology(names, dims)
        self._hcg = _topology.HybridCommunicateGroup(self._topology, h)
        tp_seed = self._user_defined_strategy.tensor_parallel_configs["tensor_init_seed"]
        if deg["mp"] > 1 and tp_seed != -1:
            # A random seed (Paddle's -1) is not drawn here: the split layers
            # build their whole weights alike on every rank from the user's seed.
            from .mp_random import model_parallel_random_seed

            model_parallel_random_seed(tp_seed)

    def _rm(self, api):
        if self._role_maker is None:
            raise RuntimeError(f"[{_API}.{api}] call fleet.init() first")
        return self._role_maker

    def get_hybrid_communicate_group(self):
        """The :class:`HybridCommunicateGroup` of the job (after ``init``)."""
        if self._hcg is None:
            raise RuntimeError(f"[{_API}.get_hybrid_communicate_group] call fleet.init() first")
        return self._hcg

    def get_hybrid_parallel_topology(self):
        """The :class:`CommunicateTopology` of the job (after ``init``)."""
        if self._topology is None:
            raise RuntimeError(f"[{_API}.get_hybrid_parallel_topology] call fleet.init() first")
        return self._topology

    def is_first_worker(self):
        """True on worker 0."""
        return self._rm("is_first_worker")._is_first_worker()

    def worker_index(self):
        """This worker's index (its rank in the job)."""
        return self._rm("worker_index")._worker_index()

    def worker_num(self):
        """The number of workers."""
        return self._rm("worker_num")._worker_num()

    def node_num(self):
        """The number of machines of the job."""
        return self._rm("node_num")._node_num()

    def local_rank(self):
        """This worker's rank on its machine (from the launcher's environment)."""
        return self._rm("local_rank")._get_local_rank()

    def local_device_ids(self):
        return self._rm("local_device_ids")._get_local_device_ids()

    def world_device_ids(self):
        return self._rm("world_device_ids")._get_world_device_ids()

    def is_worker(self):
        """True: every process of an oar job is a worker."""
        return self._rm("is_worker")._is_worker()

    def is_server(self):
        """False: oar has no parameter servers."""
        return self._rm("is_server")._is_server()

    def is_coordinator(self):
        return self._rm("is_coordinator")._is_coordinator()

    def worker_endpoints(self, to_string=False):
        """The workers' ``ip:port`` endpoints known from the environment or the role maker."""
        eps = self._rm("worker_endpoints")._get_trainer_endpoints()
        return ",".join(eps) if to_string else eps

    def server_num(self):
        return self._rm("server_num")._server_num()

    def server_endpoints(self, to_string=False):
        eps = self._rm("server_endpoints")._get_pserver_endpoints()
        return ",".join(eps) if to_string else eps

    def barrier_worker(self):
        """Blocks until every worker has reached it."""
        self._rm("barrier_worker")._barrier("worker")

    def all_reduce(self, input, mode="sum"):  # noqa: A002 - Paddle's name
        """Reduces numbers (a NumPy array or list) over the workers; returns a NumPy array."""
        return self._rm("all_reduce")._all_reduce(input, mode, "worker")

    def distributed_optimizer(self, optimizer, strategy=None):
        """See :func:`oar.distributed.fleet.distributed_optimizer`."""
        from .optimizer import HybridParallelOptimizer

        self._rm("distributed_optimizer")
        if strategy is not None:
            if not isinstance(strategy, DistributedStrategy):
                raise TypeError(f"[{_API}.distributed_optimizer] strategy must be a fleet.DistributedStrategy, "
                                f"got {type(strategy).__name__}")
            self._user_defined_strategy = copy.deepcopy(strategy)
        if not hasattr(optimizer, "_parameter_list"):
            raise TypeError(f"[{_API}.distributed_optimizer] expected an oar.optimizer.Optimizer, "
                            f"got {type(optimizer).__name__}")
        self.user_defined_optimizer = optimizer
        self._dist_optimizer = optimizer
        if self.worker_num() > 1:
            self._dist_optimizer = HybridParallelOptimizer(optimizer, self._hcg, self._user_defined_strategy)
        return self._dist_optimizer

    def distributed_model(self, model):
        """See :func:`oar.distributed.fleet.distributed_model`."""
        from .model import distributed_model

        return distributed_model(model)

    def save_persistables(self, executor, dirname, main_program=None, mode=0):
        """Saves the persistable variables of a static program under
        ``dirname`` (see :func:`oar.distributed.io.save_persistables`;
        ``mode`` is the parameter-server table mode and must be 0)."""
        from .. import io as _io

        if mode != 0:
            raise ValueError(f"[{_API}.save_persistables] mode selects parameter-server tables and must be 0, "
                             f"got {mode!r}")
        _io.save_persistables(executor, dirname, main_program)

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        """Applies the optimizer given to ``distributed_optimizer`` with the
        gradients of ``loss.backward()`` (as its ``minimize``)."""
        if self._dist_optimizer is None:
            raise RuntimeError(f"[{_API}.minimize] call fleet.distributed_optimizer(optimizer) first")
        return self._dist_optimizer.minimize(loss, startup_program, parameter_list, no_grad_set)


_FLEET = Fleet()
