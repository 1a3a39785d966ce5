"""Sharded optimizers and data loading for distributed tensors (Paddle 3.x
``shard_optimizer``, ``ShardingStage1/2/3``, ``shard_dataloader``).

Sharding splits what data parallelism replicates along one mesh dim (the
"sharding" dim, usually the data-parallel one):

- stage 1: each rank keeps and updates the optimizer state of only its slice
  of every parameter; the updated slices are all-gathered into the parameter.
- stage 2: as stage 1, and the gradient arrives already reduce-scattered to the
  slice (Partial -> Shard) instead of all-reduced.
- stage 3: the parameters themselves are stored sharded (an extra ``Shard`` on
  the sharding dim); ops all-gather them as their SPMD rules need, gradients
  come back reduce-scattered, and the update runs on the pieces.

All of it is expressed with placements: the slice a rank owns is the
parameter's placements with the sharding dim's ``Replicate`` turned into
``Shard(d)``, and resharding between the two is the communication.
"""

from .. import _C
from ..autograd import no_grad
from .auto_parallel import ProcessMesh, Replicate, Shard, _keep_param, dtensor_from_local, reshard, shard_tensor

__all__ = ["shard_optimizer", "ShardingStage1", "ShardingStage2", "ShardingStage3", "shard_dataloader",
           "ShardDataloader"]


class _ShardingStage:
    """Base of the shard_fn objects given to shard_optimizer.

    ``mesh_dim`` (name or index) is the mesh dim to shard along; ``mesh``
    defaults to each parameter's own mesh. Paddle's older form
    ``ShardingStageN(mesh)`` (a 1-D mesh) is accepted too.
    """

    stage = 0

    def __init__(self, mesh_dim=0, mesh=None):
        api = f"[oar.distributed.{type(self).__name__}]"
        if isinstance(mesh_dim, ProcessMesh) and mesh is None:
            mesh_dim, mesh = 0, mesh_dim
        if isinstance(mesh_dim, bool) or not isinstance(mesh_dim, (int, str)):
            raise TypeError(f"{api} mesh_dim must be a mesh dim name or index, got {mesh_dim!r}")
        if mesh is not None and not isinstance(mesh, ProcessMesh):
            raise TypeError(f"{api} mesh must be a ProcessMesh or None, got {type(mesh).__name__}")
        if mesh is not None and not (mesh_dim in mesh.dim_names if isinstance(mesh_dim, str)
                                     else 0 <= mesh_dim < mesh.ndim):
            raise ValueError(f"{api} mesh_dim {mesh_dim!r} is not a dim of the mesh (dims {mesh.dim_names})")
        self._mesh_dim = mesh_dim
        self._mesh = mesh

    def __repr__(self):
        return f"{type(self).__name__}(mesh_dim={self._mesh_dim!r}, mesh={self._mesh!r})"

    def _target(self, p):
        """(mesh, placements of the slice this rank owns) for parameter p, or
        None when p is not sharded by this stage (not distributed, on another
        mesh, already split along the sharding dim, or too small to split)."""
        if _C._dist_attr(p) is None:
            return None
        mesh = p.process_mesh
        if self._mesh is not None and self._mesh != mesh:
            return None
        if isinstance(self._mesh_dim, str) and self._mesh_dim not in mesh.dim_names:
            return None
        k = mesh._dim(self._mesh_dim)
        if not 0 <= k < mesh.ndim:
            return None
        pl = list(p.placements)
        if not isinstance(pl[k], Replicate):
            return None  # already sharded there; a Partial parameter is left alone
        n = mesh.shape[k]
        if n == 1:
            return None
        taken = {q.dim for q in pl if isinstance(q, Shard)}
        free = [d for d in range(len(p.shape)) if d not in taken and p.shape[d] >= n]
        if not free:
            return None
        # an even split first: every rank then owns the same number of elements
        even = [d for d in free if p.shape[d] % n == 0]
        pl[k] = Shard((even or free)[0])
        return mesh, pl


class ShardingStage1(_ShardingStage):
    """Optimizer state sharded along ``mesh_dim``.

    >>> import oar.distributed as dist
    >>> dist.ShardingStage1("dp", dist.ProcessMesh([0], dim_names=["dp"]))
    ShardingStage1(mesh_dim='dp', mesh=ProcessMesh(shape=[1], process_ids=[0], dim_names=['dp']))
    """

    stage = 1


class ShardingStage2(_ShardingStage):
    """Optimizer state and gradients sharded along ``mesh_dim``.

    >>> import oar.distributed as dist
    >>> dist.ShardingStage2(0).stage
    2
    """

    stage = 2


class ShardingStage3(_ShardingStage):
    """Optimizer state, gradients and parameters sharded along ``mesh_dim``.

    >>> import oar.distributed as dist
    >>> dist.ShardingStage3("dp").stage
    3
    """

    stage = 3


class _ShardOptimizer:
    """An optimizer over distributed parameters; see the module docstring for
    what each sharding stage keeps where. Without a shard_fn every gradient is
    brought to its parameter's placements (a Partial gradient is all-reduced)
    and each rank updates its piece."""

    def __init__(self, optimizer, shard_fn=None):
        if not hasattr(optimizer, "_parameter_list") or not hasattr(optimizer, "_update"):
            raise TypeError(f"[oar.distributed.shard_optimizer] expected an oar.optimizer.Optimizer, "
                            f"got {type(optimizer).__name__}")
        if shard_fn is not None and not isinstance(shard_fn, _ShardingStage):
            raise TypeError("[oar.distributed.shard_optimizer] shard_fn must be None or a ShardingStage1/2/3, "
                            f"got {type(shard_fn).__name__}")
        self._inner = optimizer
        self._shard_fn = shard_fn
        self._slices = {}  # id(param) -> (mesh, slice placements), stages 1 and 2
        if isinstance(shard_fn, ShardingStage3):
            self._shard_parameters()
        elif isinstance(shard_fn, _ShardingStage):
            for p in optimizer._parameter_list:
                t = shard_fn._target(p)
                if t is not None:
                    self._slices[id(p)] = t
                    acc = optimizer._accumulators.get(id(p))
                    if acc:  # state made by earlier steps: keep this rank's slice of it
                        with no_grad():
                            optimizer._accumulators[id(p)] = {k: reshard(v, *t) for k, v in acc.items()}

    def __getattr__(self, name):
        return getattr(self._inner, name)

    # ---- stage 3: parameters stored sharded
    def _shard_parameters(self):
        opt = self._inner
        for p in list(opt._parameter_list):
            t = self._shard_fn._target(p)
            if t is None:
                continue
            mesh, pl = t
            with no_grad():
                piece = reshard(p, mesh, pl)._local_value().clone()
            # the global shape is given, so uneven pieces are fine
            new = _C._dist_from_local(piece, *mesh._c(), [q._c() for q in pl], list(p.shape))
            if id(p) in opt._accumulators:  # state made by earlier steps: keep this rank's slice of it
                with no_grad():
                    opt._accumulators[id(p)] = {k: reshard(v, mesh, pl) for k, v in opt._accumulators[id(p)].items()}
            # The parameter object stays (layers and the optimizer hold it); its
            # data becomes this rank's piece under the new placements.
            _C._dist_set_(p, new)

    # ---- the step
    def _sync_grads(self):
        """Brings each gradient to the placements its update needs: the
        parameter's (all-reduce of a Partial gradient; a reduce-scatter for
        stage 3, whose parameters are sharded), or stage 1's slice (all-reduce,
        then keep the slice) or stage 2's (reduce-scatter straight to the slice)."""
        opt = self._inner
        for p in opt._parameter_list:
            g = p.grad
            if g is None or not p.is_dist():
                continue
            mesh, pl = p.process_mesh, p.placements
            if not g.is_dist():
                g = shard_tensor(g, mesh, [Replicate()] * mesh.ndim)
            sl = self._slices.get(id(p))
            if sl is not None and self._shard_fn.stage == 2:
                g = reshard(g, *sl)
            elif sl is not None:
                g = reshard(reshard(g, mesh, pl), *sl)
            elif g.placements != pl or g.process_mesh != mesh:
                g = reshard(g, mesh, pl)
            if sl is None:
                p.grad = g
            else:  # p.grad keeps its value; the update reads the slice
                self._grad_slices[id(p)] = g

    def step(self):
        opt = self._inner
        self._grad_slices = {}
        with no_grad():
            self._sync_grads()
        if not self._slices:
            opt.step()
            return
        with no_grad():
            pgs = opt._collect()
            plain = [(p, g) for p, g in pgs if id(p) not in self._grad_slices or opt._master_of(p) is not None]
            sliced = [(p, self._grad_slices[id(p)]) for p, g in pgs
                      if id(p) in self._grad_slices and opt._master_of(p) is None]
            if opt._grad_clip is not None:
                # one clip over all gradients: a global norm must see every piece
                clipped = opt._grad_clip(plain + sliced)
                plain, sliced = clipped[:len(plain)], clipped[len(plain):]
            for p, g in plain:
                if id(p) in self._grad_slices:
                    g = reshard(g, p.process_mesh, p.placements)
                self._update_one(p, g, p)
            for p, g in sliced:
                mesh, pl = self._slices[id(p)]
                part = reshard(p, mesh, pl)
                _keep_param(p, part)
                self._update_one(p, g, part)
                whole = reshard(part, p.process_mesh, p.placements)  # all-gather the updated slices
                p._local_value().copy_(whole._local_value(), False)

    def _update_one(self, p, g, target):
        """One update of `target` (p itself or this rank's slice of it); the
        state is p's, created on first use with target's placements."""
        opt = self._inner
        group = opt._group_of.get(id(p))
        if group is None:
            raise ValueError("[oar.distributed.shard_optimizer] a parameter being updated was not given to "
                             "this optimizer")
        state = opt._accumulators.get(id(p))
        if state is None:
            state = opt._accumulators[id(p)] = opt._init_state(target, group)
            opt._scalars[id(p)] = opt._init_scalars(target, group)
        scalars = opt._scalars[id(p)]
        scalars["step"] += 1
        lr = opt._param_lr(p, group)
        master = opt._master_of(p)
        if master is None:
            opt._update(target, g, state, scalars, group, lr, *opt._coupled_decay(p, group))
        else:
            opt._update(master, _C.cast(g, master.dtype), state, scalars, group, lr, *opt._coupled_decay(p, group))
            _C._set_data_(p, _C.cast(master, p.dtype))

    def minimize(self, loss, *args, **kwargs):
        loss.backward()
        self.step()
        return None, [(p, p.grad) for p in self._inner._parameter_list if p.grad is not None]

    def clear_grad(self, *args, **kwargs):
        return self._inner.clear_grad(*args, **kwargs)

    clear_gradients = clear_grad

    def state_dict(self):
        return self._inner.state_dict()

    def set_state_dict(self, state):
        return self._inner.set_state_dict(state)


def shard_optimizer(optimizer, shard_fn=None):
    """Wraps ``optimizer`` for distributed parameters.

    ``shard_fn`` is None (each rank updates its piece of each parameter, with
    the gradient brought to the parameter's placements first), or
    ``ShardingStage1/2/3(mesh_dim, mesh)`` to also shard optimizer state,
    gradients and parameters along that mesh dim (see the module docstring).
    Stage 3 replaces the parameters, in the optimizer and in the layers that
    hold them, by sharded ones.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> w = dist.shard_tensor(oar.ones([4, 2]), mesh, [dist.Replicate()], stop_gradient=False)
    >>> opt = dist.shard_optimizer(oar.optimizer.SGD(0.5, parameters=[w]), dist.ShardingStage1("dp", mesh))
    >>> (w * 2.0).sum().backward()
    >>> opt.step()
    >>> w.numpy().tolist()
    [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
    >>> dist.destroy_process_group()
    """
    return _ShardOptimizer(optimizer, shard_fn)


# ---------------------------------------------------------------- data loading
class ShardDataloader:
    """Iterates ``dataloader`` and places each batch's tensors on the mesh:
    ``Shard(0)`` (the batch dim) along the sharding mesh dim, Replicate on the
    others. See :func:`shard_dataloader`, which builds it.

    >>> import oar, oar.distributed as dist
    >>> from oar.io import DataLoader, TensorDataset
    >>> ds = TensorDataset([oar.arange(8.0).reshape([4, 2]), oar.arange(4)])
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> loader = dist.ShardDataloader(DataLoader(ds, batch_size=2), mesh, shard_dims="dp")
    >>> len(loader), [(x.shape, y.placements) for x, y in loader]
    (2, [([2, 2], [Shard(dim=0)]), ([2, 2], [Shard(dim=0)])])
    >>> dist.destroy_process_group()
    """

    def __init__(self, dataloader, meshes, input_keys=None, shard_dims=None, is_dataset_splitted=False):
        api = "[oar.distributed.shard_dataloader]"
        ms = list(meshes) if isinstance(meshes, (list, tuple)) else [meshes]
        if not ms or not all(isinstance(m, ProcessMesh) for m in ms):
            raise TypeError(f"{api} meshes must be a ProcessMesh or a non-empty list of them, got {meshes!r}")
        dims = list(shard_dims) if isinstance(shard_dims, (list, tuple)) else [shard_dims] * len(ms)
        if len(dims) != len(ms):
            raise ValueError(f"{api} shard_dims needs one entry per mesh ({len(ms)}), got {len(dims)}")
        for m, d in zip(ms, dims):
            if d is not None and (isinstance(d, bool) or not isinstance(d, (int, str))):
                raise TypeError(f"{api} a shard dim must be None, a mesh dim name or index, got {d!r}")
            if d is not None and not (d in m.dim_names if isinstance(d, str) else 0 <= d < m.ndim):
                raise ValueError(f"{api} shard dim {d!r} is not a dim of the mesh (dims {m.dim_names})")
        self._loader = dataloader
        self._meshes = ms
        self._dims = dims
        self._input_keys = None if input_keys is None else list(input_keys)
        self._splitted = bool(is_dataset_splitted)

    def __len__(self):
        return len(self._loader)

    def _place(self, x, k):
        from ..creation import to_tensor

        mesh, d = self._meshes[k], self._dims[k]
        if not isinstance(x, _C.Tensor):
            x = to_tensor(x)
        pl = [Replicate()] * mesh.ndim
        if d is not None and len(x.shape) > 0:
            pl[mesh._dim(d)] = Shard(0)
        if self._splitted:
            return dtensor_from_local(x, mesh, pl)
        return shard_tensor(x, mesh, pl)

    def _mesh_index(self, i, n, key=None):
        """Which mesh item i (of n) goes to: inputs to the first, labels (the
        last item, or keys not in input_keys) to the last; with one mesh per
        item, item i to mesh i."""
        if len(self._meshes) == 1:
            return 0
        if key is not None and self._input_keys is not None:
            return 0 if key in self._input_keys else len(self._meshes) - 1
        if n == len(self._meshes):
            return i
        return len(self._meshes) - 1 if i == n - 1 else 0

    def _convert(self, batch):
        import numpy as np

        def leaf(v):
            return isinstance(v, (_C.Tensor, np.ndarray))

        if isinstance(batch, dict):
            keys = list(batch)
            return {k: self._place(v, self._mesh_index(i, len(keys), k)) if leaf(v) else v
                    for i, (k, v) in enumerate(batch.items())}
        if isinstance(batch, (list, tuple)):
            out = [self._place(v, self._mesh_index(i, len(batch))) if leaf(v) else v for i, v in enumerate(batch)]
            return type(batch)(out) if isinstance(batch, tuple) else out
        return self._place(batch, 0) if leaf(batch) else batch

    def __iter__(self):
        for batch in self._loader:
            yield self._convert(batch)

    def __call__(self):
        return iter(self)


def shard_dataloader(dataloader, meshes, input_keys=None, shard_dims=None, is_dataset_splitted=False):
    """Batches of ``dataloader`` as distributed tensors.

    Every tensor of a batch (a tensor, a list/tuple of them or a dict) is
    placed on ``meshes`` (one mesh, or a list: inputs on the first, labels on
    the last) as ``Shard(0)`` along the mesh dim ``shard_dims`` (a name or
    index, or one per mesh; None replicates). The loader yields the whole
    batch on every rank, or with ``is_dataset_splitted`` this rank's piece.

    >>> import oar, oar.distributed as dist
    >>> from oar.io import DataLoader, TensorDataset
    >>> ds = TensorDataset([oar.arange(8.0).reshape([4, 2])])
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> loader = dist.shard_dataloader(DataLoader(ds, batch_size=2), mesh, shard_dims="dp")
    >>> [(b[0].shape, b[0].placements) for b in loader]
    [([2, 2], [Shard(dim=0)]), ([2, 2], [Shard(dim=0)])]
    >>> dist.destroy_process_group()
    """
    return ShardDataloader(dataloader, meshes, input_keys, shard_dims, is_dataset_splitted)
