"""Semi-automatic parallelism (Paddle 3.x ``paddle.distributed`` auto-parallel API).

A tensor is placed on a :class:`ProcessMesh` with one placement per mesh dim:
``Shard(d)`` splits tensor dim ``d`` along that mesh dim, ``Replicate()``
copies it, ``Partial(reduce_type)`` holds pieces whose reduction is the value.
Ops on distributed tensors follow their SPMD rules (src/ops/spmd.h): inputs
are resharded as the rule asks, each rank computes its piece, and gradients
come out distributed too (Note [distributed tensor] in src/dist/dist_tensor.h).
"""
import enum

import numpy as np

from .. import _C
from ..framework_param import _mark_parameter
from . import collective as C

__all__ = [
    "ProcessMesh", "Placement", "Replicate", "Shard", "Partial", "shard_tensor", "dtensor_from_local",
    "reshard", "shard_layer", "get_mesh", "set_mesh", "unshard_dtensor", "dtensor_to_local", "ReduceType",
]

_REDUCE = {"sum": 0, "avg": 1, "mean": 1, "max": 2, "min": 3, "prod": 4}
_REDUCE_NAMES = ["sum", "avg", "max", "min", "prod"]


class ProcessMesh:
    """An n-d grid of ranks with named dims.

    >>> import oar.distributed as dist
    >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    >>> mesh.shape, mesh.process_ids, mesh.get_dim_size("mp")
    ([2, 2], [0, 1, 2, 3], 2)
    """

    def __init__(self, mesh=None, dim_names=None, shape=None, process_ids=None):
        api = "oar.distributed.ProcessMesh"
        if mesh is not None:
            arr = np.asarray(mesh)
        elif shape is not None and process_ids is not None:
            arr = np.asarray(process_ids).reshape(shape)
        else:
            raise ValueError(f"[{api}] pass mesh (a nested list of ranks) or shape and process_ids")
        if arr.dtype.kind not in "iu" or arr.size == 0:
            raise TypeError(f"[{api}] the mesh must be a non-empty nested list of integer ranks, got {mesh!r}")
        self._shape = [int(s) for s in arr.shape]
        self._ids = [int(i) for i in arr.reshape(-1)]
        if len(set(self._ids)) != len(self._ids) or min(self._ids) < 0:
            raise ValueError(f"[{api}] ranks must be distinct and non-negative, got {self._ids}")
        names = list(dim_names) if dim_names is not None else [f"d{i}" for i in range(arr.ndim)]
        if len(names) != arr.ndim:
            raise ValueError(f"[{api}] expected {arr.ndim} dim_names, got {len(names)}")
        self._names = [str(n) for n in names]
        self._array = arr

    shape = property(lambda self: list(self._shape))
    process_ids = property(lambda self: list(self._ids))
    dim_names = property(lambda self: list(self._names))
    ndim = property(lambda self: len(self._shape))
    mesh = property(lambda self: self._array.copy())

    def get_dim_size(self, dim):
        return self._shape[self._dim(dim)]

    def _dim(self, dim):
        if isinstance(dim, str):
            if dim not in self._names:
                raise ValueError(f"[oar.distributed.ProcessMesh] no mesh dim named {dim!r}; dims are {self._names}")
            return self._names.index(dim)
        return int(dim)

    def get_mesh_with_dim(self, dim_name, index=None):
        """The mesh with ``dim_name`` moved first (and, with ``index``, that slice of it)."""
        d = self._dim(dim_name)
        order = [d] + [i for i in range(self.ndim) if i != d]
        arr = np.transpose(self._array, order)
        names = [self._names[i] for i in order]
        if index is not None:
            return ProcessMesh(arr[index], names[1:])
        return ProcessMesh(arr, names)

    def __contains__(self, rank):
        return int(rank) in self._ids

    def __eq__(self, other):
        return isinstance(other, ProcessMesh) and (self._shape, self._ids, self._names) == (
            other._shape, other._ids, other._names)

    def __hash__(self):
        return hash((tuple(self._shape), tuple(self._ids), tuple(self._names)))

    def __repr__(self):
        return f"ProcessMesh(shape={self._shape}, process_ids={self._ids}, dim_names={self._names})"

    def _c(self):
        return self._shape, self._ids, self._names


class Placement:
    """How a tensor lies along one mesh dim: the base of ``Shard``,
    ``Replicate`` and ``Partial``.

    >>> import oar.distributed as dist
    >>> placements = [dist.Shard(0), dist.Replicate(), dist.Partial()]
    >>> [isinstance(p, dist.Placement) for p in placements]
    [True, True, True]
    >>> [(p.is_shard(), p.is_replicated(), p.is_partial()) for p in placements]
    [(True, False, False), (False, True, False), (False, False, True)]
    """

    def is_shard(self, dim=None):
        return False

    def is_replicated(self):
        return False

    def is_partial(self):
        return False


class Replicate(Placement):
    """Every rank along the mesh dim holds the whole tensor.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> x = dist.shard_tensor(oar.ones([2, 3]), mesh, [dist.Replicate()])
    >>> x.placements, x._local_value().shape
    ([Replicate()], [2, 3])
    >>> dist.destroy_process_group()
    """

    def is_replicated(self):
        return True

    def _c(self):
        return (0, 0)

    def __eq__(self, o):
        return isinstance(o, Replicate)

    def __hash__(self):
        return hash("R")

    def __repr__(self):
        return "Replicate()"


class Shard(Placement):
    """Tensor dim ``dim`` is split evenly over the ranks along the mesh dim.

    >>> import oar, oar.distributed as dist
    >>> s = dist.Shard(1)
    >>> s.get_dim(), s.is_shard(), s.is_shard(dim=0)
    (1, True, False)
    >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
    >>> dist.shard_tensor(oar.ones([2, 4]), mesh, [s]).placements
    [Shard(dim=1)]
    >>> dist.destroy_process_group()
    """

    def __init__(self, dim):
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"[oar.distributed.Shard] dim must be an int, got {dim!r}")
        self.dim = dim

    def get_dim(self):
        return self.dim

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    def _c(self):
        return (1, self.dim)

    def __eq__(self, o):
        return isinstance(o, Shard) and o.dim == self.dim

    def __hash__(self):
        return hash(("S", self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"


class ReduceType(enum.IntEnum):
    """How the pieces of a ``Partial`` tensor combine (Paddle's
    ``paddle.distributed.ReduceType``). oar's ``Partial`` takes the first
    five; kRedAny and kRedAll (boolean any / all) are not supported.

    >>> import oar.distributed as dist
    >>> dist.Partial(dist.ReduceType.kRedMax), int(dist.ReduceType.kRedAvg)
    (Partial(reduce_type=max), 4)
    """

    kRedSum = 0
    kRedMax = 1
    kRedMin = 2
    kRedProd = 3
    kRedAvg = 4
    kRedAny = 5
    kRedAll = 6


_REDUCE_TYPE_NAMES = {ReduceType.kRedSum: "sum", ReduceType.kRedMax: "max", ReduceType.kRedMin: "min",
                      ReduceType.kRedProd: "prod", ReduceType.kRedAvg: "avg"}


class Partial(Placement):
    """Each rank along the mesh dim holds a piece; the tensor is their
    reduction (``reduce_type``: sum by default, or a ``ReduceType``,
    ``ReduceOp`` or one of "sum", "avg", "max", "min", "prod").

    >>> import oar, oar.distributed as dist
    >>> dist.Partial(), dist.Partial(dist.ReduceOp.AVG)
    (Partial(reduce_type=sum), Partial(reduce_type=avg))
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> x = dist.shard_tensor(oar.to_tensor([1.0, 2.0]), mesh, [dist.Replicate()])
    >>> p = dist.reshard(x, mesh, [dist.Partial()])
    >>> p.placements, dist.unshard_dtensor(p).numpy().tolist()
    ([Partial(reduce_type=sum)], [1.0, 2.0])
    >>> dist.destroy_process_group()
    """

    def __init__(self, reduce_type=None):
        r = "sum" if reduce_type is None else reduce_type
        if isinstance(r, ReduceType):
            r = _REDUCE_TYPE_NAMES.get(r, r)
        elif not isinstance(r, str):  # oar.distributed.ReduceOp values
            r = {C.ReduceOp.SUM: "sum", C.ReduceOp.AVG: "avg", C.ReduceOp.MAX: "max", C.ReduceOp.MIN: "min",
                 C.ReduceOp.PROD: "prod"}.get(r, r)
        if r not in _REDUCE:
            raise ValueError(f"[oar.distributed.Partial] reduce_type must be one of sum, avg, max, min, prod, "
                             f"got {reduce_type!r}")
        self.reduce_type = "avg" if r == "mean" else r

    def is_partial(self):
        return True

    def _c(self):
        return (2, _REDUCE[self.reduce_type])

    def __eq__(self, o):
        return isinstance(o, Partial) and o.reduce_type == self.reduce_type

    def __hash__(self):
        return hash(("P", self.reduce_type))

    def __repr__(self):
        return f"Partial(reduce_type={self.reduce_type})"


def _from_c(kind, arg):
    return Replicate() if kind == 0 else Shard(arg) if kind == 1 else Partial(_REDUCE_NAMES[arg])


def _check(api, mesh, placements, x=None):
    if not isinstance(mesh, ProcessMesh):
        raise TypeError(f"[{api}] mesh must be a ProcessMesh, got {type(mesh).__name__}")
    if not isinstance(placements, (list, tuple)) or not all(isinstance(p, Placement) for p in placements):
        raise TypeError(f"[{api}] placements must be a list of Shard/Replicate/Partial, got {placements!r}")
    if len(placements) != mesh.ndim:
        raise ValueError(f"[{api}] expected one placement per mesh dim ({mesh.ndim}), got {len(placements)}")
    if x is not None and not isinstance(x, _C.Tensor):
        raise TypeError(f"[{api}] expected an oar Tensor, got {type(x).__name__}")
    if C._state["world"] is None:
        C.init_parallel_env()
    return [p._c() for p in placements]


def _keep_param(src, dst):
    """A sharded parameter stays a parameter (name, trainable, optimizer attributes)."""
    dst.stop_gradient = src.stop_gradient
    if hasattr(src, "optimize_attr"):
        _mark_parameter(dst, getattr(src, "name", None), getattr(src, "trainable", True),
                        src.optimize_attr.get("learning_rate", 1.0), getattr(src, "regularizer", None),
                        getattr(src, "need_clip", True))
        dst.is_distributed = True
    return dst


def shard_tensor(data, mesh, placements, dtype=None, place=None, stop_gradient=None):
    """Places ``data`` (the same whole value on every rank) on ``mesh``: each
    rank keeps its piece.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0])
    >>> x = dist.shard_tensor(oar.arange(6.0).reshape([2, 3]), mesh, [dist.Shard(0)])
    >>> x.shape, x.placements, x._local_value().shape
    ([2, 3], [Shard(dim=0)], [2, 3])
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.shard_tensor"
    from ..creation import to_tensor

    x = data if isinstance(data, _C.Tensor) else to_tensor(data, dtype=dtype)
    if dtype is not None and isinstance(data, _C.Tensor):
        x = x.astype(dtype)
    pl = _check(api, mesh, placements, x)
    out = _C._dist_shard(x, *mesh._c(), pl)
    _keep_param(x, out)
    if stop_gradient is not None:
        out.stop_gradient = stop_gradient
    return out


def dtensor_from_local(local_tensor, mesh, placements):
    """The distributed tensor whose piece on this rank is ``local_tensor``
    (differentiable: gradients reach the piece). Along a ``Shard(d)`` mesh
    dim the whole tensor is that many pieces long in dim ``d``.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> x = dist.dtensor_from_local(oar.ones([2, 3]), mesh, [dist.Shard(0)])
    >>> x.is_dist(), x.shape, x.placements
    (True, [2, 3], [Shard(dim=0)])
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.dtensor_from_local"
    pl = _check(api, mesh, placements, local_tensor)
    shape = list(local_tensor.shape)
    for m, p in enumerate(placements):  # even pieces, as Paddle assumes here
        if isinstance(p, Shard):
            shape[p.dim] *= mesh.shape[m]
    return _C._dist_from_local(local_tensor, *mesh._c(), pl, shape)


def dtensor_to_local(dist_tensor, mesh=None, placements=None):
    """This rank's piece of ``dist_tensor`` as a local tensor (differentiable:
    the piece's gradient flows back into the distributed tensor).

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> x = dist.shard_tensor(oar.arange(4.0).reshape([2, 2]), mesh, [dist.Shard(0)])
    >>> local = dist.dtensor_to_local(x)
    >>> local.is_dist(), local.numpy().tolist()
    (False, [[0.0, 1.0], [2.0, 3.0]])
    >>> dist.destroy_process_group()
    """
    if not isinstance(dist_tensor, _C.Tensor) or not dist_tensor.is_dist():
        raise TypeError("[oar.distributed.dtensor_to_local] expected a distributed tensor")
    return _C._dist_to_local(dist_tensor)


def reshard(dist_tensor, mesh, placements):
    """The same value placed on ``mesh`` by ``placements`` (differentiable);
    the communication this needs is inserted for you.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> x = dist.shard_tensor(oar.arange(6.0).reshape([2, 3]), mesh, [dist.Shard(0)])
    >>> y = dist.reshard(x, mesh, [dist.Replicate()])
    >>> y.placements, y.numpy().tolist()
    ([Replicate()], [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    >>> dist.destroy_process_group()
    """
    pl = _check("oar.distributed.reshard", mesh, placements, dist_tensor)
    return _C._dist_reshard(dist_tensor, *mesh._c(), pl)


def unshard_dtensor(dist_tensor):
    """The whole value as a local tensor on every rank of its mesh.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> x = dist.shard_tensor(oar.to_tensor([[1.0, 2.0], [3.0, 4.0]]), mesh, [dist.Shard(1)])
    >>> full = dist.unshard_dtensor(x)
    >>> full.is_dist(), full.numpy().tolist()
    (False, [[1.0, 2.0], [3.0, 4.0]])
    >>> dist.destroy_process_group()
    """
    mesh = dist_tensor.process_mesh
    full = reshard(dist_tensor, mesh, [Replicate()] * mesh.ndim)
    return _C._dist_local(full)


_global_mesh = [None]


def set_mesh(mesh):
    """Sets the job's global mesh, which ``get_mesh`` returns.

    >>> import oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> dist.set_mesh(mesh)
    >>> dist.get_mesh() is mesh
    True
    >>> dist.set_mesh(None)
    """
    _global_mesh[0] = mesh


def get_mesh():
    """The mesh given to ``set_mesh`` (None until then).

    >>> import oar.distributed as dist
    >>> dist.set_mesh(dist.ProcessMesh([0], dim_names=["dp"]))
    >>> dist.get_mesh()
    ProcessMesh(shape=[1], process_ids=[0], dim_names=['dp'])
    >>> dist.set_mesh(None)
    """
    return _global_mesh[0]


def _placements(self):
    a = _C._dist_attr(self)
    return None if a is None else [_from_c(k, v) for k, v in a[3]]


def _process_mesh(self):
    a = _C._dist_attr(self)
    return None if a is None else ProcessMesh(shape=a[0], process_ids=a[1], dim_names=a[2])


def _is_dist(self):
    return _C._dist_attr(self) is not None


def _local_value(self):
    return _C._dist_local(self)


__tensor_methods__ = (("placements", property(_placements)), ("process_mesh", property(_process_mesh)),
                      ("is_dist", "_is_dist"), ("_local_value", "_local_value"))


def shard_layer(layer, process_mesh, shard_fn=None, input_fn=None, output_fn=None):
    """Makes every parameter and buffer of ``layer`` distributed on ``process_mesh``.

    ``shard_fn(name, sublayer, process_mesh)`` places a sublayer's parameters
    (assign ``sublayer.weight = shard_tensor(sublayer.weight, mesh, [...])``);
    whatever it leaves local is replicated. ``input_fn(inputs, mesh)`` and
    ``output_fn(outputs, mesh)`` become forward pre/post hooks.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
    >>> def shard_fn(name, sublayer, mesh):
    ...     if isinstance(sublayer, oar.nn.Linear):
    ...         sublayer.weight = dist.shard_tensor(sublayer.weight, mesh, [dist.Shard(1)])
    >>> net = dist.shard_layer(oar.nn.Linear(4, 2), mesh, shard_fn)
    >>> net.weight.placements, net.bias.placements, net(oar.ones([3, 4])).shape
    ([Shard(dim=1)], [Replicate()], [3, 2])
    >>> dist.destroy_process_group()
    """
    api = "oar.distributed.shard_layer"
    if not isinstance(process_mesh, ProcessMesh):
        raise TypeError(f"[{api}] process_mesh must be a ProcessMesh, got {type(process_mesh).__name__}")
    for name, sub in layer.named_sublayers(include_self=True):
        if shard_fn is not None:
            shard_fn(name, sub, process_mesh)
        for pname, p in list(sub._parameters.items()):
            if p is not None and not p.is_dist():
                setattr(sub, pname, shard_tensor(p, process_mesh, [Replicate()] * process_mesh.ndim))
        for bname, b in list(sub._buffers.items()):
            if b is not None and not b.is_dist():
                sub._buffers[bname] = shard_tensor(b, process_mesh, [Replicate()] * process_mesh.ndim)
    if input_fn is not None:
        layer.register_forward_pre_hook(lambda _layer, inputs: input_fn(inputs, process_mesh))
    if output_fn is not None:
        layer.register_forward_post_hook(lambda _layer, inputs, outputs: output_fn(outputs, process_mesh))
    return layer
