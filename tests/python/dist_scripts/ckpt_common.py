"""Shared by the checkpoint rank scripts: the reference values (NumPy) of the
state dict that is saved and loaded on different meshes, and the NumPy piece
rule the loaded pieces are checked against."""
import numpy as np

import oar
import oar.distributed as dist
from oar.distributed import Partial, Replicate, Shard


def reference():
    """{key: NumPy array} with uneven sizes and several dtypes; the values are
    exact in every dtype used (bf16 included)."""
    r = {}
    r["a"] = (np.arange(7 * 5, dtype=np.float32).reshape(7, 5) - 11) / 4
    r["b"] = np.linspace(-3, 5, 30).reshape(5, 6)  # float64
    r["c"] = np.arange(9, dtype=np.int64) * 1000003
    r["d"] = np.arange(12, dtype=np.float32).reshape(3, 4) / 8
    r["e"] = np.arange(24, dtype=np.float32).reshape(6, 4) - 7
    r["f"] = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5) / 2  # stored as bfloat16
    r["g"] = np.array([[1.5, -2.0, 3.25], [0.5, 8.0, -1.0]], dtype=np.float32)
    r["h"] = np.array(2.75, dtype=np.float32)  # 0-D
    r["z"] = np.zeros((0, 3), dtype=np.float32)  # zero-size
    r["cplx"] = (np.arange(8) + 1j * np.arange(8, 0, -1)).reshape(4, 2)  # complex128
    r["nested.k"] = np.array([[3, 1], [4, 1], [5, 9]], dtype=np.int32)
    return r


DTYPE = {"f": "bfloat16"}

# Placements on the 2x2 mesh the checkpoint is saved from (uneven pieces everywhere).
SAVE_2X2 = {"a": [Shard(0), Shard(1)], "b": [Replicate(), Shard(0)], "c": [Shard(0), Replicate()],
            "d": [Replicate(), Replicate()], "e": [Partial(), Shard(1)], "f": [Shard(1), Shard(0)],
            "g": None, "h": [Replicate(), Replicate()], "z": [Shard(0), Replicate()],
            "cplx": [Shard(0), Replicate()], "nested.k": [Shard(1), Shard(0)]}
# ... and the other placements it is loaded with.
LOAD_2X2 = {"a": [Shard(1), Shard(0)], "b": [Shard(0), Shard(1)], "c": [Replicate(), Shard(0)],
            "d": [Shard(1), Replicate()], "e": [Replicate(), Partial()], "f": [Replicate(), Replicate()],
            "g": [Shard(0), Shard(1)], "h": [Replicate(), Partial()], "z": [Replicate(), Shard(1)],
            "cplx": [Shard(1), Shard(0)], "nested.k": None}
LOAD_1D = {"a": [Shard(1)], "b": [Shard(0)], "c": [Replicate()], "d": [Shard(0)], "e": [Partial()],
           "f": [Replicate()], "g": [Shard(0)], "h": [Replicate()], "z": [Shard(1)], "cplx": [Shard(1)],
           "nested.k": [Shard(0)]}
VALUES = {"nested.step": 5, "nested.lr": 0.125, "nested.name": "adam", "nested.milestones": [3, 6]}


def to_oar(a, key):
    t = oar.to_tensor(a)
    return t.astype(DTYPE[key]) if key in DTYPE else t


def build(mesh, placements, scale=1):
    """The state dict (nested like a model's + optimizer's) with the values
    reference() * scale placed by ``placements`` (None: a plain tensor)."""
    ref = reference()
    sd = {"nested": {}}
    for key, a in ref.items():
        t = to_oar(a * scale, key)
        p = placements[key]
        if p is not None:
            t = dist.shard_tensor(t, mesh, p)
        if key.startswith("nested."):
            sd["nested"][key.split(".", 1)[1]] = t
        else:
            sd[key] = t
    for key, v in VALUES.items():
        sd["nested"][key.split(".", 1)[1]] = v
    return sd


def zeros_like_target(mesh, placements):
    """A target state dict of zeros (and wrong plain values) with the given placements."""
    sd = build(mesh, placements, scale=0)
    for key in VALUES:
        sd["nested"][key.split(".", 1)[1]] = None
    return sd


def piece(x, mesh, placements, rank):
    """NumPy: rank's piece of x (np.array_split pieces, mesh dims in order)."""
    coord = list(zip(*np.nonzero(mesh.mesh == rank)))[0]
    out = x
    for m, p in enumerate(placements):
        if isinstance(p, Shard):
            out = np.array_split(out, mesh.shape[m], axis=p.dim)[coord[m]]
    return out, coord


def check(sd, mesh, placements, rank, what, scale=1):
    """Compares every loaded tensor (its piece on this rank, and its whole
    value) and plain value with the reference; returns the number of checks."""
    n = 0
    ref = reference()
    for key, a in ref.items():
        want = a * scale
        t = sd["nested"][key.split(".", 1)[1]] if key.startswith("nested.") else sd[key]
        p = placements[key]
        if p is None:
            got = t.astype("float32").numpy() if key in DTYPE else t.numpy()
            assert not t.is_dist(), key
        else:
            assert t.placements == p, (key, t.placements, p)
            local = t._local_value()
            got = local.astype("float32").numpy() if key in DTYPE else local.numpy()
            want, coord = piece(want, mesh, p, rank)
            for m, q in enumerate(p):  # a sum-Partial target: the value at coordinate 0, zeros elsewhere
                if isinstance(q, Partial) and coord[m] != 0:
                    want = np.zeros_like(want)
        assert got.dtype == want.dtype or key in DTYPE, (key, got.dtype, want.dtype)
        assert got.shape == want.shape, f"rank {rank} {what} {key}: shape {got.shape} != {want.shape}"
        assert np.array_equal(got, want), f"rank {rank} {what} {key}: {got} != {want}"
        n += 1
    for key, v in VALUES.items():
        got = sd["nested"][key.split(".", 1)[1]]
        assert got == v and type(got) is type(v), f"rank {rank} {what} {key}: {got!r} != {v!r}"
        n += 1
    return n
