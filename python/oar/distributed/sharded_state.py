"""Per-rank pieces of a state dict (Paddle 3.x ``ShardedWeight``,
``ShardedStateDict``, ``build_sharded_state_dict``) and merging a saved
distributed checkpoint back into whole tensors (``load_merged_state_dict``).

A ``ShardedWeight`` is this rank's piece of a tensor with where it lies in
the whole (offset, global shape). ``save_state_dict`` / ``load_state_dict``
(oar.distributed.checkpoint) take them like distributed tensors.
"""
import os
from collections import OrderedDict
from typing import Dict, Union

from .. import _C
from . import collective as C

__all__ = ["ShardedWeight", "ShardedStateDict", "shard_weight", "build_sharded_state_dict", "load_merged_state_dict"]


class ShardedWeight:
    """This rank's piece ``local_tensor`` (of shape ``local_shape``) of the
    tensor ``key`` of shape ``global_shape``, starting at ``global_offset``.
    A distributed tensor given as ``local_tensor`` contributes its piece.
    Flattened pieces (``is_flattened``) are not supported.

    >>> import oar, oar.distributed as dist
    >>> w = dist.ShardedWeight("w", oar.ones([2, 3]), (2, 3), (4, 3), (2, 0))
    >>> w.local_shape, w.global_shape, w.global_offset
    ((2, 3), (4, 3), (2, 0))
    """

    def __init__(self, key, local_tensor, local_shape, global_shape, global_offset, is_flattened=False,
                 flattened_range=None):
        api = "oar.distributed.ShardedWeight"
        if not isinstance(local_tensor, _C.Tensor):
            raise TypeError(f"[{api}] local_tensor must be a Tensor, got {type(local_tensor).__name__}")
        if is_flattened:
            raise NotImplementedError(f"[{api}] flattened pieces (is_flattened=True) are not supported")
        if local_tensor.is_dist():
            local_tensor = local_tensor._local_value()
            local_shape = tuple(local_tensor.shape)
        local_shape, global_shape, global_offset = tuple(local_shape), tuple(global_shape), tuple(global_offset)
        if tuple(local_tensor.shape) != local_shape:
            raise ValueError(f"[{api}] {key!r}: local_tensor has shape {list(local_tensor.shape)}, local_shape "
                             f"says {list(local_shape)}")
        if not (len(local_shape) == len(global_shape) == len(global_offset)) or any(
                o < 0 or o + s > g for o, s, g in zip(global_offset, local_shape, global_shape)):
            raise ValueError(f"[{api}] {key!r}: the piece of shape {list(local_shape)} at offset "
                             f"{list(global_offset)} does not lie inside the global shape {list(global_shape)}")
        self.key = key
        self.local_tensor = local_tensor
        self.local_shape = local_shape
        self.global_shape = global_shape
        self.global_offset = global_offset
        self.is_flattened = False
        self.flattened_range = flattened_range

    def __repr__(self):
        return (f"ShardedWeight(key={self.key!r}, local_shape={self.local_shape}, global_shape={self.global_shape}, "
                f"global_offset={self.global_offset})")


# Paddle's type alias: for annotations only (it cannot be instantiated or
# used with isinstance), as in Paddle.
ShardedStateDict = Union[Dict[str, ShardedWeight], OrderedDict[str, ShardedWeight]]
ShardedStateDict.__doc__ = """The type of a sharded state dict: key -> ShardedWeight (a dict or an
OrderedDict), as ``build_sharded_state_dict`` returns it. Use it in annotations.

>>> import oar, oar.distributed as dist
>>> sd: dist.ShardedStateDict = {"w": dist.ShardedWeight("w", oar.ones([2, 3]), (2, 3), (4, 3), (2, 0))}
>>> sd["w"].global_shape, sd["w"].global_offset
((4, 3), (2, 0))
"""
__test__ = {"ShardedStateDict": ShardedStateDict.__doc__}  # a typing alias: doctest would not find it


def shard_weight(key, weight, axis, group):
    """The ShardedWeight of ``weight``, this rank's piece of a tensor split
    evenly along ``axis`` over ``group`` (its global shape is ``group.nranks``
    times larger there, its offset ``group.rank`` pieces in).

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> w = dist.shard_weight("w", oar.ones([2, 3]), 1, dist.new_group([0]))
    >>> w.global_shape, w.global_offset
    ((2, 3), (0, 0))
    >>> dist.destroy_process_group()
    """
    return _shard_of(key, weight, axis, group, "oar.distributed.shard_weight")


def _shard_of(key, tensor, axis, group, api="oar.distributed.build_sharded_state_dict"):
    if not isinstance(tensor, _C.Tensor):
        raise TypeError(f"[{api}] {key!r}: expected a Tensor, got {type(tensor).__name__}")
    if not isinstance(group, C.Group):
        raise TypeError(f"[{api}] group must be an oar.distributed Group, got {type(group).__name__}")
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"[{api}] axis must be an int, got {axis!r}")
    n, r = group.nranks, group.rank
    if not -tensor.ndim <= axis < tensor.ndim:
        raise ValueError(f"[{api}] axis {axis} is out of range for {key!r} of shape {list(tensor.shape)}")
    axis %= tensor.ndim
    shape = list(tensor.shape)
    gshape, off = list(shape), [0] * len(shape)
    gshape[axis] *= n
    off[axis] = r * shape[axis]
    return ShardedWeight(key, tensor, shape, gshape, off)


def build_sharded_state_dict(state_dict, shard_rules=None, prefix=""):
    """A ShardedWeight per tensor of ``state_dict`` (keys prefixed by
    ``prefix``): a distributed tensor contributes its piece; a local tensor
    named in ``shard_rules`` (key -> axis) is this rank's even piece along
    that axis over the model-parallel group (fleet's, else all ranks);
    other tensors are whole (replicated).

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0])
    >>> sd = {"w": dist.shard_tensor(oar.ones([4, 2]), mesh, [dist.Shard(0)]), "b": oar.zeros([2])}
    >>> out = dist.build_sharded_state_dict(sd, {"b": 0}, prefix="m.")
    >>> sorted(out), out["m.w"].global_shape, out["m.b"].global_offset
    (['m.b', 'm.w'], (4, 2), (0,))
    >>> dist.destroy_process_group()
    """
    from .checkpoint import _coord, _piece

    api = "oar.distributed.build_sharded_state_dict"
    if not isinstance(state_dict, dict):
        raise TypeError(f"[{api}] state_dict must be a dict, got {type(state_dict).__name__}")
    rules = shard_rules or {}
    if not isinstance(rules, dict):
        raise TypeError(f"[{api}] shard_rules must be a dict of key -> axis, got {type(rules).__name__}")
    group = None
    out = {}
    for key, t in state_dict.items():
        full = f"{prefix}{key}"
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"[{api}] {key!r}: expected a Tensor, got {type(t).__name__}")
        if t.is_dist():
            mesh = t.process_mesh
            coord = _coord(mesh, C.get_rank())
            if coord is None:
                continue
            off, shp = _piece(list(t.shape), mesh.shape, t.placements, coord)
            out[full] = ShardedWeight(full, t._local_value(), shp, list(t.shape), off)
        elif key in rules:
            if group is None:
                from .fleet.base.topology import _current_hcg

                hcg = _current_hcg()
                group = hcg.get_model_parallel_group() if hcg is not None else C.init_parallel_env()
            out[full] = _shard_of(full, t, rules[key], group)
        else:
            out[full] = ShardedWeight(full, t, t.shape, t.shape, [0] * t.ndim)
    return out


def load_merged_state_dict(path, prefix=None, unique_id=None, offload=False, aoa_config=None, safetensors=False):
    """The checkpoint saved by ``save_state_dict`` in the folder ``path`` as
    whole tensors (its pieces merged; no communication), optionally only the
    keys starting with ``prefix``. ``unique_id``, if given, must name the
    folder's checkpoint. ``offload`` is accepted (tensors are on the CPU);
    ``aoa_config`` and ``safetensors`` are not supported.

    >>> import oar, tempfile, oar.distributed as dist
    >>> path = tempfile.mkdtemp()
    >>> w = dist.shard_tensor(oar.arange(6.0).reshape([3, 2]), dist.ProcessMesh([0]), [dist.Shard(0)])
    >>> dist.save_state_dict({"w": w}, path)
    >>> dist.load_merged_state_dict(path)["w"].numpy().tolist()
    [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    >>> dist.destroy_process_group()
    """
    from ..creation import to_tensor
    from .checkpoint import _assemble, _bad, _Files, _read_manifest

    api = "oar.distributed.load_merged_state_dict"
    if aoa_config is not None or safetensors:
        raise NotImplementedError(f"[{api}] aoa_config and safetensors= are not supported")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"[{api}] path must be a str or os.PathLike, got {type(path).__name__}")
    if prefix is not None and not isinstance(prefix, str):
        raise TypeError(f"[{api}] prefix must be a str or None, got {type(prefix).__name__}")
    path = os.path.abspath(os.fspath(path))
    mpath, m = _read_manifest(path)
    if unique_id is not None and unique_id != m["generation"]:
        raise _bad(mpath, f"holds checkpoint {m['generation']}, not unique_id {unique_id}")
    files = _Files(path)
    out = {}
    for key, rec in m["tensors"].items():
        if prefix is not None and not key.startswith(prefix):
            continue
        arr = _assemble(files, key, rec, [0] * len(rec["shape"]), list(rec["shape"]))
        t = to_tensor(arr)
        out[key] = t.astype("bfloat16") if rec["dtype"] == "bfloat16" else t
    return out
