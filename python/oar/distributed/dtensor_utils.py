"""Helpers around distributed tensors (Paddle 3.x names): ``DistAttr``,
``dtensor_from_fn``, ``local_map``, ``LocalLayer``, ``shard_scaler``, and the
process-group controls ``create_nccl_config``, ``shutdown_process_group`` and
``restart_process_group``."""
from .. import _C
from . import collective as C
from .auto_parallel import Placement, ProcessMesh, dtensor_from_local, dtensor_to_local, reshard, shard_tensor

__all__ = ["DistAttr", "dtensor_from_fn", "local_map", "LocalLayer", "shard_scaler", "create_nccl_config",
           "shutdown_process_group", "restart_process_group"]


class DistAttr:
    """A mesh and, per tensor dim, the mesh dim name it is split along (None:
    not split) — the older form of placements.

    >>> import oar.distributed as dist
    >>> a = dist.DistAttr(dist.ProcessMesh([0, 1], dim_names=["x"]), ["x", None])
    >>> a.sharding_specs, a.placements
    (['x', None], [Shard(dim=0)])
    """

    def __init__(self, mesh, sharding_specs):
        api = "oar.distributed.DistAttr"
        if not isinstance(mesh, ProcessMesh):
            raise TypeError(f"[{api}] mesh must be a ProcessMesh, got {type(mesh).__name__}")
        if not isinstance(sharding_specs, (list, tuple)) or not all(
                s is None or isinstance(s, str) for s in sharding_specs):
            raise TypeError(f"[{api}] sharding_specs must be a list of mesh dim names or None, "
                            f"got {sharding_specs!r}")
        for s in sharding_specs:
            if s is not None and s not in mesh.dim_names:
                raise ValueError(f"[{api}] {s!r} is not a dim of the mesh (dims {mesh.dim_names})")
        named = [s for s in sharding_specs if s is not None]
        if len(set(named)) != len(named):
            raise ValueError(f"[{api}] a mesh dim may split only one tensor dim, got {list(sharding_specs)}")
        self.process_mesh = mesh
        self.sharding_specs = list(sharding_specs)

    @property
    def placements(self):
        from .auto_parallel import Replicate, Shard

        pl = [Replicate()] * self.process_mesh.ndim
        for d, s in enumerate(self.sharding_specs):
            if s is not None:
                pl[self.process_mesh.dim_names.index(s)] = Shard(d)
        return pl

    def __repr__(self):
        return f"DistAttr(mesh={self.process_mesh!r}, sharding_specs={self.sharding_specs})"


def dtensor_from_fn(fn, mesh, placements, *args, **kwargs):
    """``fn(*args, **kwargs)`` (e.g. ``oar.ones``) placed on ``mesh``.

    >>> import oar, oar.distributed as dist
    >>> t = dist.dtensor_from_fn(oar.ones, dist.ProcessMesh([0]), [dist.Shard(0)], shape=[2, 3])
    >>> t.shape, t.placements
    ([2, 3], [Shard(dim=0)])
    >>> dist.destroy_process_group()
    """
    if not callable(fn):
        raise TypeError(f"[oar.distributed.dtensor_from_fn] fn must be callable, got {type(fn).__name__}")
    return shard_tensor(fn(*args, **kwargs), mesh, placements)


def _placement_list(pl, api, what):
    if not isinstance(pl, (list, tuple)) or not all(
            p is None or (isinstance(p, (list, tuple)) and all(isinstance(q, Placement) for q in p)) for p in pl):
        raise TypeError(f"[{api}] {what} must be a list with one list of placements (or None) per tensor, got {pl!r}")
    return list(pl)


def local_map(func, out_placements, in_placements=None, process_mesh=None, reshard_inputs=False):
    """Wraps ``func`` (written for local tensors) for distributed ones: each
    distributed argument is replaced by this rank's piece (after checking
    it has ``in_placements[i]``, or resharding to them with
    ``reshard_inputs``), and each tensor output becomes the distributed
    tensor whose piece it is, with ``out_placements[i]`` (None: the output
    is returned as it is). Without distributed arguments ``func`` runs as
    it is.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> local_sum = dist.local_map(lambda x: x.sum(0, keepdim=True), [[dist.Partial()]])
    >>> y = local_sum(dist.shard_tensor(oar.arange(6.0).reshape([3, 2]), mesh, [dist.Shard(0)]))
    >>> y.placements, dist.unshard_dtensor(y).numpy().tolist()
    ([Partial(reduce_type=sum)], [[6.0, 9.0]])
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.local_map"
    if not callable(func):
        raise TypeError(f"[{api}] func must be callable, got {type(func).__name__}")
    outs = _placement_list(out_placements, api, "out_placements")
    ins = None if in_placements is None else _placement_list(in_placements, api, "in_placements")
    if process_mesh is not None and not isinstance(process_mesh, ProcessMesh):
        raise TypeError(f"[{api}] process_mesh must be a ProcessMesh or None, got {type(process_mesh).__name__}")

    def wrapped(*args, **kwargs):
        mesh = process_mesh
        tensors = [a for a in args if isinstance(a, _C.Tensor)]
        if not any(t.is_dist() for t in tensors):
            return func(*args, **kwargs)
        if ins is not None and len(ins) != len(tensors):
            raise ValueError(f"[{api}] in_placements has {len(ins)} entries for {len(tensors)} tensor arguments")
        local, k = [], 0
        for a in args:
            if isinstance(a, _C.Tensor):
                want = ins[k] if ins is not None else None
                k += 1
                if a.is_dist():
                    mesh = mesh or a.process_mesh
                    if want is not None and list(a.placements) != list(want):
                        if not reshard_inputs:
                            raise ValueError(f"[{api}] argument {k - 1} has placements {a.placements}, "
                                             f"in_placements says {list(want)} (pass reshard_inputs=True)")
                        a = reshard(a, a.process_mesh, list(want))
                    a = dtensor_to_local(a)
            local.append(a)
        result = func(*local, **kwargs)
        single = not isinstance(result, (list, tuple))
        items = [result] if single else list(result)
        if len(items) != len(outs):
            raise ValueError(f"[{api}] func returned {len(items)} outputs, out_placements has {len(outs)}")
        wrapped_out = [dtensor_from_local(r, mesh, list(p)) if isinstance(r, _C.Tensor) and p is not None else r
                       for r, p in zip(items, outs)]
        return wrapped_out[0] if single else type(result)(wrapped_out)

    return wrapped


def _layer_base():
    from ..nn import Layer

    return Layer


class LocalLayer(_layer_base()):
    """A Layer whose ``forward`` works on local pieces: distributed inputs
    reach it as this rank's pieces, and output ``i`` becomes the distributed
    tensor with ``out_dist_attrs[i] = (mesh, placements)``.
    ``grad_dist_attrs`` (one per input, or None) is accepted; gradients of
    the pieces flow back to the distributed inputs.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> class LocalMean(dist.LocalLayer):
    ...     def forward(self, x):
    ...         return x.mean(0, keepdim=True)
    >>> layer = LocalMean([(mesh, [dist.Partial(dist.ReduceType.kRedAvg)])], [None])
    >>> y = layer(dist.shard_tensor(oar.arange(4.0).reshape([2, 2]), mesh, [dist.Shard(0)]))
    >>> y.placements, dist.unshard_dtensor(y).numpy().tolist()
    ([Partial(reduce_type=avg)], [[1.0, 2.0]])
    >>> dist.destroy_process_group()
    """

    def __init__(self, out_dist_attrs, grad_dist_attrs):
        super().__init__()
        api = "oar.distributed.LocalLayer"
        if not isinstance(out_dist_attrs, (list, tuple)) or not all(
                isinstance(a, (list, tuple)) and len(a) == 2 and isinstance(a[0], ProcessMesh)
                for a in out_dist_attrs):
            raise TypeError(f"[{api}] out_dist_attrs must be a list of (ProcessMesh, placements), "
                            f"got {out_dist_attrs!r}")
        self.out_dist_attrs = list(out_dist_attrs)
        self.grad_dist_attrs = grad_dist_attrs

    def __call__(self, *inputs, **kwargs):
        local = [dtensor_to_local(x) if isinstance(x, _C.Tensor) and x.is_dist() else x for x in inputs]
        out = super().__call__(*local, **kwargs)
        single = not isinstance(out, (list, tuple))
        items = [out] if single else list(out)
        if len(items) != len(self.out_dist_attrs):
            raise ValueError(f"[oar.distributed.LocalLayer] forward returned {len(items)} outputs, "
                             f"out_dist_attrs has {len(self.out_dist_attrs)}")
        res = [dtensor_from_local(o, m, list(p)) if isinstance(o, _C.Tensor) else o
               for o, (m, p) in zip(items, self.out_dist_attrs)]
        return res[0] if single else type(out)(res)


def shard_scaler(scaler):
    """Makes ``scaler`` (an ``oar.amp.GradScaler``) work with distributed
    gradients: each rank unscales and checks its own pieces, and whether any
    piece overflowed is combined over the job, so every rank skips or takes
    the step together. Returns ``scaler`` (changed in place).

    >>> import oar, oar.distributed as dist
    >>> scaler = dist.shard_scaler(oar.amp.GradScaler(init_loss_scaling=8.0))
    >>> mesh = dist.ProcessMesh([0])
    >>> w = dist.shard_tensor(oar.ones([2]), mesh, [dist.Shard(0)], stop_gradient=False)
    >>> opt = oar.optimizer.SGD(1.0, parameters=[w])
    >>> scaler.scale((w * 3.0).sum()).backward()
    >>> scaler.step(opt); scaler.update()
    >>> w.numpy().tolist()
    [-2.0, -2.0]
    >>> dist.destroy_process_group()
    """
    from ..amp.grad_scaler import AmpScaler, _params
    from ..autograd import no_grad
    from ..creation import to_tensor

    if not isinstance(scaler, AmpScaler):
        raise TypeError(f"[oar.distributed.shard_scaler] expected an oar.amp.GradScaler, got {type(scaler).__name__}")
    if getattr(scaler, "_sharded", False):
        return scaler

    def unscale_(optimizer):
        if not scaler._enable or id(optimizer) in scaler._unscaled:
            return
        inv = 1.0 / scaler._scale
        found = False
        with no_grad():
            for p in _params(optimizer):
                g = p.grad
                if g is None:
                    continue
                piece = g._local_value() if g.is_dist() else g
                piece.copy_(piece * inv, False)
                if piece.size and not bool(_C.isfinite(piece).all()):
                    found = True
        if C.is_initialized() and C.get_world_size() > 1:
            flag = to_tensor([int(found)], dtype="int32")
            C.all_reduce(flag, C.ReduceOp.MAX)
            found = bool(flag.numpy()[0])
        scaler._found_inf = scaler._found_inf or found
        scaler._unscaled.add(id(optimizer))

    scaler.unscale_ = unscale_
    scaler._sharded = True
    return scaler


_NCCL_KEYS = {"commName": str, "ll_buffsize": int, "ll128_buffsize": int, "simple_buffsize": int,
              "buffsize_align": int, "nchannels": int, "algoStr": str, "protoStr": str}


def create_nccl_config(nccl_config=None):
    """A validated copy of ``nccl_config`` (keys ``commName``,
    ``ll_buffsize``, ``ll128_buffsize``, ``simple_buffsize``,
    ``buffsize_align``, ``nchannels``, ``algoStr``, ``protoStr``), or None.
    oar's NCCL groups use NCCL's defaults; the config is kept for
    compatibility and not applied.

    >>> import oar.distributed as dist
    >>> dist.create_nccl_config({"commName": "tp", "nchannels": 4})
    {'commName': 'tp', 'nchannels': 4}
    >>> dist.create_nccl_config() is None
    True
    """
    api = "oar.distributed.create_nccl_config"
    if nccl_config is None:
        return None
    if not isinstance(nccl_config, dict):
        raise TypeError(f"[{api}] nccl_config must be a dict or None, got {type(nccl_config).__name__}")
    for k, v in nccl_config.items():
        if k not in _NCCL_KEYS:
            raise ValueError(f"[{api}] unknown key {k!r}; keys: {sorted(_NCCL_KEYS)}")
        if not isinstance(v, _NCCL_KEYS[k]) or isinstance(v, bool):
            raise TypeError(f"[{api}] {k} must be a {_NCCL_KEYS[k].__name__}, got {v!r}")
    return dict(nccl_config)


_shut = {}  # group id -> Group, shut down by shutdown_process_group


def shutdown_process_group(group=None):
    """Shuts down ``group``'s communicator (oar: ``destroy_process_group``)
    until ``restart_process_group``; without ``group``, every group except
    the world one. Shutting down the world group shuts the parallel
    environment down.

    >>> import oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> g = dist.new_group([0])
    >>> dist.shutdown_process_group(g)
    >>> dist.get_group(g.id) is None
    True
    >>> dist.restart_process_group(g)
    >>> dist.get_group(g.id) is g
    True
    >>> dist.destroy_process_group()
    """
    if group is not None and not isinstance(group, C.Group):
        raise TypeError(f"[oar.distributed.shutdown_process_group] group must be a Group or None, "
                        f"got {type(group).__name__}")
    groups = [group] if group is not None else [g for gid, g in C._state["groups"].items() if gid != 0]
    for g in groups:
        _shut[g.id] = g
        C.destroy_process_group(g if g.id != 0 else None)


def restart_process_group(group=None):
    """Re-creates the communicator of ``group`` (or of every group shut down
    by ``shutdown_process_group``): the world group through
    ``init_parallel_env``, the others over the same ranks. Every rank must
    call it, as for ``new_group``.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> g = dist.new_group([0])
    >>> dist.shutdown_process_group()          # every group but the world one
    >>> dist.restart_process_group()
    >>> x = oar.to_tensor([1.0, 2.0])
    >>> dist.all_reduce(x, group=g)
    >>> dist.get_group(g.id) is g, x.numpy().tolist()
    (True, [1.0, 2.0])
    >>> dist.destroy_process_group()
    """
    if group is not None and not isinstance(group, C.Group):
        raise TypeError(f"[oar.distributed.restart_process_group] group must be a Group or None, "
                        f"got {type(group).__name__}")
    groups = [group] if group is not None else sorted(_shut.values(), key=lambda g: g.id)
    for g in groups:
        if g.id == 0:
            C.init_parallel_env()
        elif g.id not in C._state["groups"]:
            g.process_group = _C._dist_new_group(list(g.ranks), C._seconds(None, "oar.distributed.new_group"))
            g._device_groups = {}
            C._state["groups"][g.id] = g
        _shut.pop(g.id, None)
