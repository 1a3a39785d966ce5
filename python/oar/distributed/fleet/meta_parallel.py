"""``paddle.distributed.fleet.meta_parallel``: manual tensor- and pipeline-parallel layers."""
from ...nn import Layer
from ..parallel import WrappedLayer
from .. import collective as _coll
from ..mp_layers import ColumnParallelLinear, ParallelCrossEntropy, RowParallelLinear, VocabParallelEmbedding
from ..pipeline import LayerDesc, PipelineLayer, PipelineParallel, SharedLayerDesc
from .base.topology import _current_hcg
from .mp_random import RNGStatesTracker, get_rng_state_tracker, model_parallel_random_seed  # noqa: F401

__all__ = ["ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding", "ParallelCrossEntropy",
           "LayerDesc", "SharedLayerDesc", "PipelineLayer", "PipelineParallel", "TensorParallel",
           "ShardingParallel", "get_rng_state_tracker", "model_parallel_random_seed"]


class _HybridWrapper(WrappedLayer):
    """Runs ``layers`` on a hybrid-parallel job; at construction the
    replicated parameters are made equal over the model-parallel group and
    every parameter over the data-parallel and sharding groups."""

    _API = "oar.distributed.fleet.meta_parallel"

    def __init__(self, layers, hcg=None, strategy=None, **kwargs):
        super().__init__()
        api = f"{self._API}.{type(self).__name__}"
        if not isinstance(layers, Layer):
            raise TypeError(f"[{api}] layers must be an oar.nn.Layer, got {type(layers).__name__}")
        hcg = hcg if hcg is not None else _current_hcg()
        if hcg is None:
            raise RuntimeError(f"[{api}] no hybrid communicate group: call fleet.init() first or pass hcg")
        from .model import _sync_hybrid_params

        self._layers = layers
        self._hcg = hcg
        self._strategy = strategy
        _sync_hybrid_params(layers, hcg)


class TensorParallel(_HybridWrapper):
    """Runs ``layers`` (built from the tensor-parallel layers) on a
    hybrid-parallel job: at construction the replicated parameters are made
    equal over the model-parallel group and every parameter over the
    data-parallel and sharding groups; in each forward pass the tensor
    inputs of the model-parallel group's first rank are broadcast to the
    group (unless ``hybrid_configs['mp_configs'].need_broadcast_data`` is
    False), so every rank of the group computes on the same data. Gradients
    are averaged over the data-parallel group by the fleet optimizer.
    ``fleet.distributed_model`` builds it when ``mp_degree > 1``.

    >>> import oar
    >>> from oar.distributed import fleet
    >>> _ = fleet.init(is_collective=True)
    >>> tp = fleet.meta_parallel.TensorParallel(oar.nn.Linear(4, 2), fleet.get_hybrid_communicate_group())
    >>> tp(oar.ones([3, 4])).shape
    [3, 2]
    >>> oar.distributed.destroy_process_group()
    """

    def __init__(self, layers, hcg=None, strategy=None, **kwargs):
        super().__init__(layers, hcg, strategy, **kwargs)
        self._broadcast_data = True
        if strategy is not None:
            self._broadcast_data = bool(strategy.hybrid_configs["mp_configs"].need_broadcast_data)

    def _broadcast_inputs(self, values):
        group = self._hcg.get_model_parallel_group()
        for v in values:
            if isinstance(v, (list, tuple)):
                self._broadcast_inputs(v)
            elif isinstance(v, dict):
                self._broadcast_inputs(list(v.values()))
            elif hasattr(v, "is_dist") and not v.is_dist():
                _coll.broadcast(v, src=group.ranks[0], group=group)

    def forward(self, *inputs, **kwargs):
        if self._broadcast_data and self._hcg.get_model_parallel_world_size() > 1:
            self._broadcast_inputs(list(inputs) + list(kwargs.values()))
        return self._layers(*inputs, **kwargs)


class ShardingParallel(_HybridWrapper):
    """Runs ``layers`` when the optimizer state is sharded
    (``sharding_degree > 1``): the parameters are made equal over the groups
    at construction; the fleet optimizer averages the gradients over the
    sharding group and updates each parameter on the rank that owns it.
    ``fleet.distributed_model`` builds it.

    >>> import oar
    >>> from oar.distributed import fleet
    >>> _ = fleet.init(is_collective=True)
    >>> sp = fleet.meta_parallel.ShardingParallel(oar.nn.Linear(4, 2), fleet.get_hybrid_communicate_group())
    >>> sp(oar.ones([3, 4])).shape
    [3, 2]
    >>> oar.distributed.destroy_process_group()
    """
