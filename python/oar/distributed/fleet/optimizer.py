"""``fleet.distributed_optimizer``: the optimizer of a hybrid-parallel job.

Note [hybrid gradient reduction]: in pure data parallelism the model is a
``DataParallel`` and gradients arrive averaged. In every other layout
(tensor, pipeline or sharding parallel, possibly with data parallelism) the
model only keeps its own axis consistent, and the optimizer averages each
gradient over the data-parallel group and the sharding group before the
update, in one fused all-reduce per group and dtype (a small all-reduce of
a "has a gradient" mask first, so a parameter no rank used keeps no
gradient). With sharding, each rank of the sharding group owns whole
parameters (assigned greedily by size, in parameter order), keeps optimizer
state only for those, updates them, and broadcasts them to its peers; a
global-norm clip is applied to all gradients first, since every rank holds
all of them after the reduction.

Note [hybrid global-norm clip]: with tensor or pipeline parallelism no rank
holds every gradient, so ``ClipGradByGlobalNorm`` cannot see the global
norm. The optimizer sums the squares itself: the pieces of split
(model-parallel) gradients over the model-parallel group, replicated
gradients once, then the stages' totals over the pipeline group (a weight
shared by several stages counted once); every gradient is then scaled by
``clip_norm / max(norm, clip_norm)``.
"""
import numpy as np

from ...autograd import no_grad
from .. import collective as _coll
from ...nn import ClipGradByGlobalNorm
from ...nn.clip import _needs_clip
from .base.topology import ParallelMode
from .utils.hybrid_parallel_util import fused_allreduce_gradients_with_group

__all__ = ["HybridParallelOptimizer", "distributed_optimizer"]

_API = "oar.distributed.fleet.HybridParallelOptimizer"


def _local(t):
    """The tensor that holds this rank's values of ``t`` (its piece when distributed)."""
    return t._local_value() if t.is_dist() else t


class HybridParallelOptimizer:
    """Wraps ``optimizer`` for a hybrid-parallel job (see Note [hybrid
    gradient reduction]). ``step``, ``minimize``, ``clear_grad``,
    ``state_dict`` and ``set_state_dict`` behave as the wrapped optimizer's;
    other attributes are the wrapped optimizer's.

    >>> import oar
    >>> from oar.distributed import fleet
    >>> _ = fleet.init(is_collective=True)
    >>> w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> opt = fleet.HybridParallelOptimizer(oar.optimizer.SGD(0.5, parameters=[w]),
    ...                                     fleet.get_hybrid_communicate_group(), fleet.DistributedStrategy())
    >>> (w * w).sum().backward()
    >>> opt.step(); opt.clear_grad()
    >>> w.numpy().tolist()
    [0.0, 0.0]
    >>> oar.distributed.destroy_process_group()
    """

    def __init__(self, optimizer, hcg, strategy):
        if not hasattr(optimizer, "_parameter_list") or not hasattr(optimizer, "_apply_optimize"):
            raise TypeError(f"[{_API}] expected an oar.optimizer.Optimizer, got {type(optimizer).__name__}")
        self.__dict__["_inner_opt"] = optimizer
        self.__dict__["_hcg"] = hcg
        self.__dict__["_strategy"] = strategy
        dp_mode = hcg.get_parallel_mode() == ParallelMode.DATA_PARALLEL
        groups = []
        if not dp_mode and hcg.get_data_parallel_world_size() > 1:
            groups.append(hcg.get_data_parallel_group())
        sharding = hcg.get_sharding_parallel_world_size() > 1
        if sharding:
            groups.append(hcg.get_sharding_parallel_group())
        self.__dict__["_groups"] = groups
        self.__dict__["_sharding"] = sharding
        self.__dict__["_owner"] = None
        self.__dict__["_synced"] = False
        # ids of parameters a global norm leaves out (copies of a weight that
        # an earlier pipeline stage holds too; set by PipelineParallel)
        self.__dict__["_clip_skip"] = set()

    # PipelineParallel leaves the global-norm clip to this optimizer.
    _clips_across_pipeline = True

    # The clip is the wrapped optimizer's.
    @property
    def _grad_clip(self):
        return self._inner_opt._grad_clip

    @_grad_clip.setter
    def _grad_clip(self, value):
        self._inner_opt._grad_clip = value

    def __getattr__(self, name):
        return getattr(self.__dict__["_inner_opt"], name)

    def __setattr__(self, name, value):
        if name in type(self).__dict__ or name in self.__dict__:
            object.__setattr__(self, name, value)
        else:
            setattr(self._inner_opt, name, value)

    def _params(self):
        return [p for p in self._inner_opt._parameter_list
                if not p.stop_gradient and getattr(p, "trainable", True)]

    def _sync_gradients(self):
        """Averages the gradients over the data-parallel and sharding groups
        (once per backward pass: PipelineParallel calls it before its step)."""
        if self._synced or not self._groups:
            return
        from ...creation import to_tensor, zeros

        params = self._params()
        for g in self._groups:
            mask = to_tensor(np.array([int(p.grad is not None) for p in params], dtype=np.int32))
            _coll.all_reduce(mask, _coll.ReduceOp.MAX, group=g)
            used = [p for p, m in zip(params, mask.numpy().tolist()) if m]
            for p in used:
                if p.grad is None:  # unused here, used by a peer: contributes zeros
                    if p.is_dist():
                        raise RuntimeError(f"[{_API}] distributed parameter {p.name} got no gradient on this rank "
                                           "but did on a peer")
                    p.grad = zeros(list(p.shape), dtype=p.dtype)
            fused_allreduce_gradients_with_group(used, g)
        self.__dict__["_synced"] = True

    def _owners(self):
        if self._owner is None:
            n = self._hcg.get_sharding_parallel_world_size()
            sizes, owner = [0] * n, {}
            for p in self._params():
                r = int(np.argmin(sizes))
                owner[id(p)] = r
                sizes[r] += _local(p).size
            self.__dict__["_owner"] = owner
        return self._owner

    def _global_clip(self, pairs, clip):
        """``pairs`` scaled as Note [hybrid global-norm clip] says."""
        from ..auto_parallel import Shard, reshard

        hcg, skip = self._hcg, self._clip_skip
        split, replicated = 0.0, 0.0
        for p, g in pairs:
            if not _needs_clip(p, g) or id(p) in skip:
                continue
            is_split = False
            if g.is_dist():
                if list(g.placements) != list(p.placements):
                    g = reshard(g, p.process_mesh, p.placements)
                is_split = any(isinstance(q, Shard) for q in p.placements)
            sq = float((_local(g).astype("float64") ** 2).sum())
            if is_split:
                split += sq
            else:
                replicated += sq
        total = np.array([split], dtype=np.float64)
        if hcg.get_model_parallel_world_size() > 1:
            total = self._sum(total, hcg.get_model_parallel_group())
        total = total + replicated
        if hcg.get_pipe_parallel_world_size() > 1:
            total = self._sum(total, hcg.get_pipe_parallel_group())
        norm = float(np.sqrt(total[0]))
        scale = clip.clip_norm / max(norm, clip.clip_norm)
        if clip.auto_skip_clip and scale >= 1.0:
            return pairs
        return [(p, g * scale) if _needs_clip(p, g) else (p, g) for p, g in pairs]

    @staticmethod
    def _sum(values, group):
        from ...creation import to_tensor

        t = to_tensor(values)
        _coll.all_reduce(t, group=group)
        return t.numpy()

    def _hybrid_update(self, parameters=None):
        """The update after the gradient reduction: the hybrid clip when
        needed, then this rank's parameters (its own with sharding), then the
        broadcast of the sharded parameters. Returns the (param, grad) pairs."""
        inner, hcg = self._inner_opt, self._hcg
        clip = inner._grad_clip
        split_model = hcg.get_model_parallel_world_size() > 1 or hcg.get_pipe_parallel_world_size() > 1
        hybrid_clip = isinstance(clip, ClipGradByGlobalNorm) and split_model
        pairs = inner._collect(parameters)
        with no_grad():
            if hybrid_clip:
                pairs = self._global_clip(pairs, clip)
            elif clip is not None:
                pairs = clip(pairs)
        mine = pairs
        if self._sharding:
            me, owner = hcg.get_sharding_parallel_rank(), self._owners()
            mine = [(p, g) for p, g in pairs if owner.get(id(p)) == me]
        inner._grad_clip = None
        try:
            inner._apply_optimize(mine)
        finally:
            inner._grad_clip = clip
        if self._sharding:
            group = hcg.get_sharding_parallel_group()
            for p in self._params():
                _coll.broadcast(_local(p), group.ranks[owner[id(p)]], group=group)
        return pairs

    def _plain(self):
        """True when the wrapped optimizer's own step is right after the reduction."""
        split_model = self._hcg.get_model_parallel_world_size() > 1 or self._hcg.get_pipe_parallel_world_size() > 1
        return not self._sharding and not (split_model and isinstance(self._inner_opt._grad_clip,
                                                                          ClipGradByGlobalNorm))

    def step(self):
        """Averages the gradients (Note [hybrid gradient reduction]), clips
        them (Note [hybrid global-norm clip]) and updates the parameters."""
        self._sync_gradients()
        try:
            if self._plain():
                self._inner_opt.step()
            else:
                self._hybrid_update()
        finally:
            self.__dict__["_synced"] = False

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """As ``step``; returns ``(None, [(param, grad), ...])`` as the wrapped optimizer does."""
        self._sync_gradients()
        try:
            if self._plain():
                return self._inner_opt.minimize(loss, startup_program, parameters, no_grad_set)
            return None, self._hybrid_update(parameters)
        finally:
            self.__dict__["_synced"] = False

    def clear_grad(self, set_to_zero=True):
        self.__dict__["_synced"] = False
        self._inner_opt.clear_grad(set_to_zero)

    clear_gradients = clear_grad

    def state_dict(self):
        """The wrapped optimizer's state (with sharding: of the parameters this rank owns)."""
        return self._inner_opt.state_dict()

    def set_state_dict(self, state_dict):
        return self._inner_opt.set_state_dict(state_dict)

    set_dict = set_state_dict


def distributed_optimizer(optimizer, strategy=None):
    """The optimizer to train with under fleet: ``optimizer`` itself in a
    job of one worker, else a :class:`HybridParallelOptimizer` around it.
    ``strategy``, when given, replaces the one passed to ``fleet.init``.

    >>> import oar
    >>> from oar.distributed import fleet
    >>> _ = fleet.init(is_collective=True)
    >>> opt = oar.optimizer.SGD(0.1, parameters=oar.nn.Linear(2, 2).parameters())
    >>> fleet.distributed_optimizer(opt) is opt
    True
    >>> oar.distributed.destroy_process_group()
    """
    from .fleet import _FLEET

    return _FLEET.distributed_optimizer(optimizer, strategy)
