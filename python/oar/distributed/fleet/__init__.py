"""``paddle.distributed.fleet`` for collective training: ``fleet.init``, the
hybrid-parallel layout (``DistributedStrategy.hybrid_configs``,
``CommunicateTopology``, ``HybridCommunicateGroup``), ``distributed_model`` /
``distributed_optimizer`` / ``distributed_scaler``, role makers,
``fleet.util``, the MultiSlot data generators, ``fleet.meta_parallel`` (the
tensor- and pipeline-parallel layers and wrappers) and ``fleet.utils``
(``recompute``, ``fused_allreduce_gradients``). The functions below are the
methods of one :class:`Fleet`.

>>> import oar
>>> from oar.distributed import fleet
>>> strategy = fleet.DistributedStrategy()
>>> strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
>>> _ = fleet.init(is_collective=True, strategy=strategy)
>>> model = fleet.distributed_model(oar.nn.Linear(4, 1))
>>> opt = fleet.distributed_optimizer(oar.optimizer.SGD(0.1, parameters=model.parameters()))
>>> model(oar.ones([2, 4])).mean().backward()
>>> opt.step(); opt.clear_grad()
>>> fleet.worker_index(), fleet.worker_num()
(0, 1)
>>> oar.distributed.destroy_process_group()
"""
from . import meta_parallel  # noqa: F401
from . import utils  # noqa: F401
from .base.distributed_strategy import DistributedStrategy
from .base.role_maker import PaddleCloudRoleMaker, Role, UserDefinedRoleMaker
from .base.topology import CommunicateTopology, HybridCommunicateGroup, ParallelMode  # noqa: F401
from .base.util_factory import UtilBase
from .data_generator import MultiSlotDataGenerator, MultiSlotStringDataGenerator
from .fleet import _FLEET, Fleet
from .model import distributed_model
from .optimizer import HybridParallelOptimizer, distributed_optimizer  # noqa: F401
from .scaler import distributed_scaler  # noqa: F401

__all__ = ["CommunicateTopology", "UtilBase", "HybridCommunicateGroup", "MultiSlotStringDataGenerator",
           "UserDefinedRoleMaker", "DistributedStrategy", "Role", "MultiSlotDataGenerator", "PaddleCloudRoleMaker",
           "Fleet"]

fleet = _FLEET
util = _FLEET.util


def _forget_layout():
    """Drops the hybrid layout (its process groups were destroyed)."""
    from .base import topology

    topology._HYBRID_PARALLEL_GROUP = None
    _FLEET._hcg = _FLEET._topology = None



init = _FLEET.init
is_first_worker = _FLEET.is_first_worker
worker_index = _FLEET.worker_index
worker_num = _FLEET.worker_num
node_num = _FLEET.node_num
rank = _FLEET.worker_index
nranks = _FLEET.worker_num
world_size = _FLEET.worker_num
local_rank = _FLEET.local_rank
rank_in_node = local_rank
local_device_ids = _FLEET.local_device_ids
world_device_ids = _FLEET.world_device_ids
is_worker = _FLEET.is_worker
is_server = _FLEET.is_server
is_coordinator = _FLEET.is_coordinator
worker_endpoints = _FLEET.worker_endpoints
server_num = _FLEET.server_num
server_endpoints = _FLEET.server_endpoints
barrier_worker = _FLEET.barrier_worker
all_reduce = _FLEET.all_reduce
minimize = _FLEET.minimize
save_persistables = _FLEET.save_persistables
get_hybrid_communicate_group = _FLEET.get_hybrid_communicate_group
get_hybrid_parallel_topology = _FLEET.get_hybrid_parallel_topology
