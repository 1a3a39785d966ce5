"""Sharded optimizers for distributed parameters (Paddle 3.x ``shard_optimizer``)."""
from .auto_parallel import Replicate, reshard, shard_tensor

__all__ = ["shard_optimizer"]


class _ShardOptimizer:
    """An optimizer whose step first brings every gradient to its parameter's
    placements (a Partial gradient is reduced), so each rank updates its piece."""

    def __init__(self, optimizer, shard_fn=None):
        self._inner = optimizer
        self._shard_fn = shard_fn

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def _sync_grads(self):
        for p in self._inner._parameter_list if hasattr(self._inner, "_parameter_list") else []:
            g = p.grad
            if g is None or not p.is_dist():
                continue
            if not g.is_dist() or g.placements != p.placements or g.process_mesh != p.process_mesh:
                src = g if g.is_dist() else shard_tensor(g, p.process_mesh, [Replicate()] * p.process_mesh.ndim)
                p.grad = reshard(src, p.process_mesh, p.placements)

    def step(self):
        self._sync_grads()
        self._inner.step()

    def minimize(self, loss, *args, **kwargs):
        loss.backward()
        self.step()

    def clear_grad(self, *args, **kwargs):
        return self._inner.clear_grad(*args, **kwargs)

    def state_dict(self):
        return self._inner.state_dict()

    def set_state_dict(self, state):
        return self._inner.set_state_dict(state)


def shard_optimizer(optimizer, shard_fn=None):
    """Wraps ``optimizer`` for distributed parameters (see _ShardOptimizer)."""
    return _ShardOptimizer(optimizer, shard_fn)
