"""``fleet.distributed_model``: the model wrapper the strategy asks for."""
from ...nn import Layer
from .. import collective as _coll
from .base.topology import ParallelMode

__all__ = ["distributed_model"]

_API = "oar.distributed.fleet.distributed_model"


def _broadcast_params(model, group, only_replicated=False):
    """Copies the parameters and buffers of ``group``'s first rank to the
    others (distributed tensors: their pieces; with ``only_replicated``,
    distributed tensors are skipped)."""
    if group is None or group.nranks <= 1:
        return
    for t in list(model.parameters()) + list(model.buffers()):
        if t is None or not t.size:
            continue
        if t.is_dist():
            if only_replicated:
                continue
            t = t._local_value()
        _coll.broadcast(t, src=group.ranks[0], group=group)


def _sync_hybrid_params(model, hcg):
    """Makes the replicas of every parameter equal at the start, as Paddle's
    hybrid wrappers do: over the data-parallel and sharding groups, and the
    non-split parameters over the model-parallel group."""
    _broadcast_params(model, hcg.get_model_parallel_group(), only_replicated=True)
    _broadcast_params(model, hcg.get_data_parallel_group())
    _broadcast_params(model, hcg.get_sharding_parallel_group())


def distributed_model(model):
    """Wraps ``model`` for the strategy given to ``fleet.init``:

    - one worker: ``model`` itself (a ``PipelineLayer`` becomes a one-stage
      ``PipelineParallel``, so ``train_batch`` works);
    - ``pp_degree > 1``: ``PipelineParallel`` over the pipeline group with the
      strategy's ``pipeline_configs`` (``accumulate_steps`` micro-batches of
      ``micro_batch_size``); ``model`` must be a ``PipelineLayer``;
    - ``mp_degree > 1``: ``TensorParallel`` (parameters made equal across the
      groups; inputs broadcast over the model-parallel group);
    - ``sharding_degree > 1``: ``ShardingParallel`` (parameters made equal
      over the groups; the optimizer shards the state, see
      ``fleet.distributed_optimizer``);
    - pure data parallelism: ``DataParallel`` over the data-parallel group,
      with the strategy's ``fuse_grad_size_in_MB``,
      ``last_comm_group_size_MB`` and ``find_unused_parameters``.

    With ``amp`` and ``amp_configs['use_pure_fp16']`` (or ``use_pure_bf16``)
    the model is first decorated for O2 (float16 / bfloat16 parameters).

    >>> import oar
    >>> from oar.distributed import fleet
    >>> _ = fleet.init(is_collective=True)
    >>> layer = oar.nn.Linear(4, 2)
    >>> fleet.distributed_model(layer) is layer
    True
    >>> oar.distributed.destroy_process_group()
    """
    from ..pipeline import PipelineLayer, PipelineParallel
    from .fleet import _FLEET
    from .meta_parallel import ShardingParallel, TensorParallel

    hcg = _FLEET._hcg
    if hcg is None:
        raise RuntimeError(f"[{_API}] call fleet.init() first")
    if not isinstance(model, Layer):
        raise TypeError(f"[{_API}] model must be an oar.nn.Layer, got {type(model).__name__}")
    strategy = _FLEET._user_defined_strategy
    if strategy.amp:
        cfg = strategy.amp_configs
        if cfg["use_pure_fp16"] or cfg["use_pure_bf16"]:
            from ... import amp

            model = amp.decorate(models=model, level="O2",
                                 dtype="float16" if cfg["use_pure_fp16"] else "bfloat16")
    mode = hcg.get_parallel_mode()
    if _coll.get_world_size() <= 1 or mode == ParallelMode.PIPELINE_PARALLEL:
        if isinstance(model, PipelineLayer):
            if mode == ParallelMode.PIPELINE_PARALLEL:
                _sync_hybrid_params(model, hcg)
            return PipelineParallel(model, hcg, strategy=strategy)
        if mode == ParallelMode.PIPELINE_PARALLEL:
            raise TypeError(f"[{_API}] with pp_degree > 1 the model must be a PipelineLayer, "
                            f"got {type(model).__name__}")
        return model
    if mode == ParallelMode.TENSOR_PARALLEL:
        return TensorParallel(model, hcg, strategy=strategy)
    if mode == ParallelMode.SHARDING_PARALLEL:
        return ShardingParallel(model, hcg, strategy=strategy)
    from ..parallel import DataParallel

    return DataParallel(model, comm_buffer_size=strategy.fuse_grad_size_in_MB,
                        last_comm_buffer_size=strategy.last_comm_group_size_MB,
                        find_unused_parameters=strategy.find_unused_parameters,
                        group=hcg.get_data_parallel_group())
