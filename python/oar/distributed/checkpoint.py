"""Distributed checkpoints (Paddle 3.x ``paddle.distributed.save_state_dict`` /
``load_state_dict``): every rank writes the pieces it holds, and a checkpoint
saved on one mesh loads onto another mesh, another number of ranks, or one
process, by cutting the pieces it needs out of the saved ones.

Layout of a checkpoint folder ``path`` (see Note [checkpoint commit]):

- ``path/gen-<g>/<rank>.safetensors``: the pieces rank ``<rank>`` wrote in save
  number ``g``, one entry per state_dict key, under the key's name (an ordinary
  safetensors file that ``oar.load`` also reads);
- ``path/gen-<g>/<rank>.json``: that rank's description of its pieces;
- ``path/manifest.json``: written last. For each key: dtype, global shape and
  the pieces (file, offsets and shape in the global tensor); non-tensor values
  (counters, learning-rate scheduler state) as JSON.

Note [checkpoint commit]
A save picks a fresh generation ``g`` (one more than any generation in the
folder, committed or not) and writes only below ``gen-<g>/``, so nothing the
current manifest refers to is touched. When every rank reports its files are
on disk (an all-gather of statuses, which is also the barrier), the
coordinator reads the per-rank descriptions, checks that each tensor's pieces
tile it exactly, and writes ``manifest.json`` atomically (temporary file,
fsync, rename): that rename is the commit. Only then are the other generations
removed. A crash before the rename leaves the previous checkpoint whole (or, in
a fresh folder, no manifest, which load refuses); a crash after it leaves the
new one. Readers never see a mix of two saves. All ranks must see the same
folder (one machine, or a shared file system).

Loading needs no communication: each rank reads the manifest, works out the
piece of each target tensor it holds (oar's piece rule: a sharded dim splits
like ``numpy.array_split``, the first pieces one larger, mesh dims in order),
and reads only the rows of saved pieces that overlap it. Nothing is unpickled;
every file and the manifest are validated before use.
"""
import json
import os
import re
import shutil

import numpy as np

from .. import _C
from .. import serialization as _ser
from . import collective as C
from .auto_parallel import Replicate, reshard

__all__ = ["save_state_dict", "load_state_dict"]

_SAVE = "oar.distributed.save_state_dict"
_LOAD = "oar.distributed.load_state_dict"
_FORMAT = "oar.distributed.checkpoint"
_VERSION = 1
_MANIFEST = "manifest.json"
_MAX_MANIFEST = 256 << 20  # bytes of manifest JSON accepted
_GEN_DIR = re.compile(r"^gen-(\d+)$")
_DTYPES = {v[0] for v in _ser._DTYPES.values()} | {"complex128"}


# ---------------------------------------------------------------- helpers

def _is_dist(t):
    return _C._dist_attr(t) is not None


def _dtype_name(t):
    return str(t.dtype).replace("paddle.", "")


def _piece(shape, mesh_shape, placements, coord):
    """(offsets, shape) of the piece at mesh coordinate ``coord``: each Shard
    splits the (already split) dim like numpy.array_split, mesh dims in order
    (the rule of local_piece in src/tensor/dist_attr.cpp)."""
    off, shp = [0] * len(shape), list(shape)
    for m, p in enumerate(placements):
        if p.is_shard():
            d, parts, i = p.dim, mesh_shape[m], coord[m]
            base, extra = divmod(shp[d], parts)
            off[d] += i * base + min(i, extra)
            shp[d] = base + (1 if i < extra else 0)
    return off, shp


def _coord(mesh, rank):
    hits = np.argwhere(mesh.mesh == rank)
    return None if len(hits) == 0 else [int(c) for c in hits[0]]


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _flatten(state_dict, api):
    """[(flat key, container, key in container, value)] of a possibly nested
    dict; nested keys are joined with '.'."""
    if not isinstance(state_dict, dict):
        raise TypeError(f"[{api}] state_dict must be a dict, got {type(state_dict).__name__}")
    out, seen = [], set()

    def walk(d, prefix):
        for k, v in d.items():
            if not isinstance(k, str):
                raise TypeError(f"[{api}] state_dict keys must be str, got {k!r} ({type(k).__name__})")
            key = f"{prefix}.{k}" if prefix else k
            if isinstance(v, dict):
                walk(v, key)
                continue
            if key in seen:
                raise ValueError(f"[{api}] the nested key {key!r} occurs twice once nested keys are joined with '.'")
            seen.add(key)
            out.append((key, d, k, v))

    walk(state_dict, "")
    return out


def _json_value(key, v, api):
    """A non-tensor state_dict value as JSON (numbers, strings, None, lists)."""
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_json_value(key, x, api) for x in v]
    raise TypeError(f"[{api}] {key!r}: cannot store a value of type {type(v).__name__}; expected Tensors, "
                    "numbers, strings, None, lists of them, and dicts of all these")


def _group(process_group, api):
    if process_group is None:
        if C._state["world"] is None:
            C.init_parallel_env()
        return C._state["world"]
    if not isinstance(process_group, C.Group):
        raise TypeError(f"[{api}] process_group must be an oar.distributed Group or None, "
                        f"got {type(process_group).__name__}")
    if not process_group.is_member():
        raise ValueError(f"[{api}] this rank is not a member of the process_group {process_group.ranks}")
    return process_group


def _gather_json(obj, group):
    """obj of every rank of group, in group-rank order (JSON over all_gather:
    no pickle)."""
    from ..creation import to_tensor

    data = np.frombuffer(json.dumps(obj).encode(), dtype=np.uint8)
    sizes = []
    C.all_gather(sizes, to_tensor(np.array([data.size], dtype=np.int64)), group=group)
    sizes = [int(s.numpy()[0]) for s in sizes]
    blocks = []
    C.all_gather(blocks, to_tensor(np.pad(data, (0, max(sizes) - data.size))), group=group)
    return [json.loads(b.numpy()[:s].tobytes()) for s, b in zip(sizes, blocks)]


def _together(group, api, fn):
    """Runs fn on every rank and returns every rank's (JSON) result, in
    group-rank order, once all succeeded: a rank that failed re-raises its own
    error, the others raise one naming it. The exchange is also the barrier."""
    err, result = None, None
    try:
        result = fn()
    except Exception as e:  # reported to the peers, then re-raised below
        err = e
    mine = {"result": result} if err is None else {"error": f"{type(err).__name__}: {err}"}
    try:
        everyone = _gather_json(mine, group)
    except (RuntimeError, TimeoutError) as e:  # a peer died or hung
        if err is not None:
            raise err from None
        raise type(e)(f"[{api}] nothing was committed: {e}") from None
    if err is not None:
        raise err
    for r, s in zip(group.ranks, everyone):
        if "error" in s:
            raise RuntimeError(f"[{api}] rank {r} failed, so nothing was committed: {s['error']}")
    return [s["result"] for s in everyone]


def _write_json(path, obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    _ser._atomic_write(path, lambda f: f.write(data))


def _generations(path):
    return [int(m.group(1)) for n in os.listdir(path) if (m := _GEN_DIR.match(n))]


# ---------------------------------------------------------------- saving

def _reduce_partials(flat):
    """flat with every Partial tensor resharded to Replicate on its mesh dims
    (collectives: every rank runs them, in the same order)."""
    out = []
    for key, d, k, v in flat:
        if isinstance(v, _C.Tensor) and _is_dist(v) and any(p.is_partial() for p in v.placements):
            v = reshard(v, v.process_mesh, [Replicate() if p.is_partial() else p for p in v.placements])
        out.append((key, d, k, v))
    return out


def _collect(flat, rank, coordinator):
    """This rank's part of a save (no communication): tensor metadata, the
    pieces it writes (one replica of each distinct piece), and (coordinator)
    the non-tensor values."""
    from .sharded_state import ShardedWeight

    tensors, pieces, values = {}, {}, {}
    for key, _, _, v in flat:
        if isinstance(v, ShardedWeight):  # a piece with its place in the whole
            tensors[key] = {"dtype": _dtype_name(v.local_tensor), "shape": list(v.global_shape)}
            pieces[key] = (v.local_tensor, list(v.global_offset), list(v.local_shape))
            continue
        if not isinstance(v, _C.Tensor):
            jv = _json_value(key, v, _SAVE)
            if rank == coordinator:
                values[key] = jv
            continue
        shape = list(v.shape)
        tensors[key] = {"dtype": _dtype_name(v), "shape": shape}
        if not _is_dist(v):
            if rank == coordinator:
                pieces[key] = (v, [0] * len(shape), shape)
            continue
        mesh, pl = v.process_mesh, v.placements
        coord = _coord(mesh, rank)
        if coord is None:
            continue
        # Of the ranks holding the same piece (they differ only along
        # Replicate mesh dims), the one at coordinate 0 writes it.
        if any(p.is_replicated() and coord[m] != 0 for m, p in enumerate(pl)):
            continue
        off, shp = _piece(shape, mesh.shape, pl, coord)
        local = v._local_value()
        if list(local.shape) != shp:
            raise RuntimeError(f"[{_SAVE}] {key!r}: this rank's piece has shape {list(local.shape)}, but its "
                               f"placements {pl} on {mesh} give {shp}")
        pieces[key] = (local, off, shp)
    return tensors, pieces, values


def _merge(path, gen, ranks, coordinator):
    """The manifest from the per-rank descriptions; checks that the pieces of
    every tensor tile it exactly."""
    tensors, values = {}, {}
    for r in ranks:
        meta_path = os.path.join(path, f"gen-{gen}", f"{r}.json")
        with open(meta_path, "rb") as f:
            meta = json.loads(f.read().decode())
        if meta.get("generation") != gen or meta.get("rank") != r:
            raise ValueError(f"[{_SAVE}] {meta_path}: describes rank {meta.get('rank')} of save "
                             f"{meta.get('generation')}, expected rank {r} of save {gen}")
        for key, t in meta["tensors"].items():
            rec = tensors.setdefault(key, {"dtype": t["dtype"], "shape": t["shape"], "pieces": []})
            if (rec["dtype"], rec["shape"]) != (t["dtype"], t["shape"]):
                raise ValueError(f"[{_SAVE}] {key!r} is {rec['dtype']} of shape {rec['shape']} on one rank but "
                                 f"{t['dtype']} of shape {t['shape']} on rank {r}")
        for key, p in meta["pieces"].items():
            if any(q["offsets"] == p["offsets"] and q["shape"] == p["shape"] for q in tensors[key]["pieces"]):
                continue  # the same piece from another replica (ShardedWeight replicas)
            tensors[key]["pieces"].append({"file": meta["file"], "offsets": p["offsets"], "shape": p["shape"]})
        if r == coordinator:
            values = meta["values"]
    for key in values:
        if key in tensors:
            raise ValueError(f"[{_SAVE}] {key!r} is a tensor on some ranks and a plain value on rank {coordinator}")
    for key, rec in tensors.items():
        problem = _tiling_problem(rec["shape"], rec["pieces"])
        if problem:
            raise ValueError(f"[{_SAVE}] {key!r}: {problem} (do all ranks pass the same keys with the same "
                             "placements?)")
    return {"format": _FORMAT, "version": _VERSION, "generation": gen, "world_size": len(ranks),
            "tensors": tensors, "values": values}


_MAX_GRID = 1 << 22  # cells of the overlap-count grid; beyond it, pairwise checks


def _overlap(boxes, i, j):
    (o0, s0, _), (o1, s1, _) = boxes[i], boxes[j]
    return all(max(a, b) < min(a + m, b + n) for a, m, b, n in zip(o0, s0, o1, s1))


def _tiling_problem(shape, pieces):
    """Why the pieces do not tile a tensor of this shape exactly, or None.

    The overlap test counts, on the grid cut by every piece boundary, how many
    pieces cover each cell: linear in the pieces for the grid-like layouts of
    real meshes (thousands of ranks), where comparing all pairs is not."""
    boxes = []
    for p in pieces:
        off, shp = p["offsets"], p["shape"]
        if len(off) != len(shape) or len(shp) != len(shape):
            return f"a piece in {p['file']} has offsets {off} and shape {shp} for a {len(shape)}-D tensor"
        if any(o < 0 or o + s > d for o, s, d in zip(off, shp, shape)):
            return f"the piece at offsets {off} of shape {shp} in {p['file']} lies outside the shape {shape}"
        if _numel(shp):
            boxes.append((off, shp, p["file"]))
    cuts = [sorted({0, n, *(b[0][d] for b in boxes), *(b[0][d] + b[1][d] for b in boxes)})
            for d, n in enumerate(shape)]
    pair = None
    if _numel([len(c) - 1 for c in cuts]) <= _MAX_GRID:
        count = np.zeros([len(c) - 1 for c in cuts], dtype=np.int32)
        index = [{v: i for i, v in enumerate(c)} for c in cuts]
        for off, shp, _ in boxes:
            count[tuple(slice(ix[o], ix[o + s]) for ix, o, s in zip(index, off, shp))] += 1
        if boxes and count.max() > 1:
            cell = np.unravel_index(int(np.argmax(count)), count.shape)
            point = [c[i] for c, i in zip(cuts, cell)]
            pair = [k for k, (o, s, _) in enumerate(boxes) if all(a <= x < a + m for a, m, x in zip(o, s, point))][:2]
    else:
        pair = next(([i, j] for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if _overlap(boxes, i, j)),
                    None)
    if pair:
        (o0, _, f0), (o1, _, f1) = boxes[pair[0]], boxes[pair[1]]
        return f"the pieces at offsets {o0} ({f0}) and {o1} ({f1}) overlap"
    covered = sum(_numel(s) for _, s, _ in boxes)
    if covered != _numel(shape):
        return f"the pieces cover {covered} of its {_numel(shape)} elements"
    return None


def save_state_dict(state_dict, path, process_group=None, coordinator_rank=0, unique_id=None, async_save=False):
    """Saves a state dict of (distributed or plain) tensors to the folder
    ``path``: every rank writes the pieces it holds, and the coordinator
    commits the checkpoint by writing ``manifest.json`` last. Every rank of
    ``process_group`` (all ranks by default) must call it with the same keys.

    Nested dicts are stored under keys joined with '.'; numbers, strings,
    None and lists of them are stored as JSON (the coordinator's values). A
    Partial tensor is reduced before it is written. The folder keeps only its
    latest checkpoint; ``unique_id`` may name the save (it must exceed every
    earlier one in the folder). ``async_save`` is accepted; the save is
    synchronous.

    >>> import oar, tempfile
    >>> import oar.distributed as dist
    >>> from oar.distributed.checkpoint import save_state_dict, load_state_dict
    >>> mesh = dist.ProcessMesh([0])
    >>> w = dist.shard_tensor(oar.arange(6.0).reshape([2, 3]), mesh, [dist.Shard(0)])
    >>> path = tempfile.mkdtemp()
    >>> save_state_dict({"w": w, "step": 7}, path)
    >>> target = {"w": dist.shard_tensor(oar.zeros([2, 3]), mesh, [dist.Replicate()]), "step": 0}
    >>> load_state_dict(target, path)
    >>> target["w"].numpy().tolist(), target["step"]
    ([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], 7)
    >>> dist.destroy_process_group()
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"[{_SAVE}] path must be a str or os.PathLike, got {type(path).__name__}")
    path = os.path.abspath(os.fspath(path))
    flat = _flatten(state_dict, _SAVE)
    from .sharded_state import ShardedWeight

    for key, _, _, v in flat:  # refuse what cannot be stored before anything is written
        if not isinstance(v, (_C.Tensor, ShardedWeight)):
            _json_value(key, v, _SAVE)
    if unique_id is not None and (not isinstance(unique_id, int) or isinstance(unique_id, bool)):
        raise TypeError(f"[{_SAVE}] unique_id must be None or an int, got {unique_id!r}")
    if unique_id is not None and unique_id < 0:
        raise ValueError(f"[{_SAVE}] unique_id must be non-negative, got {unique_id}")
    group = _group(process_group, _SAVE)
    rank = C.get_rank()
    if coordinator_rank not in group.ranks:
        raise ValueError(f"[{_SAVE}] coordinator_rank {coordinator_rank} is not a rank of the group {group.ranks}")

    def choose_generation():  # coordinator: a generation no earlier save used
        if os.path.exists(path) and not os.path.isdir(path):
            raise NotADirectoryError(f"[{_SAVE}] {path}: exists and is not a folder")
        os.makedirs(path, exist_ok=True)
        gens = _generations(path)
        if unique_id is None:
            return max(gens, default=-1) + 1
        if gens and unique_id <= max(gens):
            raise ValueError(f"[{_SAVE}] unique_id {unique_id} must exceed the ids already in {path} "
                             f"({max(gens)}): a folder keeps only its latest checkpoint")
        return unique_id

    gens = _together(group, _SAVE, lambda: choose_generation() if rank == coordinator_rank else None)
    gen = gens[group.get_group_rank(coordinator_rank)]

    # The collectives run outside _together, so that a failure there cannot
    # leave the ranks waiting in different collectives.
    flat = _reduce_partials(flat)

    def write_pieces():
        tensors, pieces, values = _collect(flat, rank, coordinator_rank)
        folder = os.path.join(path, f"gen-{gen}")
        os.makedirs(folder, exist_ok=True)
        rel = f"gen-{gen}/{rank}.safetensors"
        live = {k: t for k, (t, _, shp) in pieces.items() if _numel(shp)}
        if live:
            _ser.save(live, os.path.join(path, rel))
        _write_json(os.path.join(folder, f"{rank}.json"), {
            "format": _FORMAT, "version": _VERSION, "rank": rank, "generation": gen,
            "file": rel if live else None, "tensors": tensors, "values": values,
            "pieces": {k: {"offsets": off, "shape": shp} for k, (_, off, shp) in pieces.items() if k in live}})

    _together(group, _SAVE, write_pieces)

    def commit():
        if rank != coordinator_rank:
            return
        manifest = _merge(path, gen, group.ranks, coordinator_rank)
        _write_json(os.path.join(path, _MANIFEST), manifest)
        for n in os.listdir(path):  # the commit is durable: older saves and crashed ones can go
            m = _GEN_DIR.match(n)
            if m and int(m.group(1)) != gen:
                shutil.rmtree(os.path.join(path, n), ignore_errors=True)

    _together(group, _SAVE, commit)


# ---------------------------------------------------------------- loading

def _bad(where, what, exc=ValueError):
    return exc(f"[{_LOAD}] {where}: {what}")


def _is_int_list(x, nonneg=True):
    return isinstance(x, list) and all(isinstance(d, int) and not isinstance(d, bool) and (d >= 0 or not nonneg)
                                       for d in x)


def _read_manifest(path):
    if not os.path.isdir(path):
        raise _bad(path, "no such checkpoint folder", FileNotFoundError)
    mpath = os.path.join(path, _MANIFEST)
    if not os.path.isfile(mpath):
        gens = sorted(_generations(path))
        seen = f" (it holds pieces of unfinished saves: gen-{gens[-1]}/)" if gens else ""
        raise _bad(path, f"no {_MANIFEST}, so this is not a complete checkpoint: a save that did not finish, or "
                   f"not a checkpoint folder{seen}", FileNotFoundError)
    size = os.path.getsize(mpath)
    if size > _MAX_MANIFEST:
        raise _bad(mpath, f"is {size} bytes; the limit is {_MAX_MANIFEST}")
    with open(mpath, "rb") as f:
        raw = f.read()
    try:
        m = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _bad(mpath, f"is not valid JSON ({e}); truncated or corrupt?") from None
    if not isinstance(m, dict) or m.get("format") != _FORMAT:
        raise _bad(mpath, f"is not an oar distributed checkpoint manifest (no \"format\": \"{_FORMAT}\")")
    version = m.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _bad(mpath, f"has version {version!r}; expected a positive int")
    if version > _VERSION:
        raise _bad(mpath, f"has version {version}, newer than this oar reads ({_VERSION}); upgrade oar")
    gen = m.get("generation")
    if not isinstance(gen, int) or isinstance(gen, bool) or gen < 0:
        raise _bad(mpath, f"has generation {gen!r}; expected a non-negative int")
    tensors, values = m.get("tensors"), m.get("values")
    if not isinstance(tensors, dict) or not isinstance(values, dict):
        raise _bad(mpath, "must have \"tensors\" and \"values\" objects")
    file_re = re.compile(rf"^gen-{gen}/\d+\.safetensors$")  # inside this save's folder, nowhere else
    for key, rec in tensors.items():
        if not isinstance(rec, dict) or set(rec) != {"dtype", "shape", "pieces"}:
            raise _bad(mpath, f"entry {key!r} must have exactly dtype, shape and pieces")
        if rec["dtype"] not in _DTYPES:
            raise _bad(mpath, f"entry {key!r} has dtype {rec['dtype']!r}; allowed: {', '.join(sorted(_DTYPES))}")
        if not _is_int_list(rec["shape"]):
            raise _bad(mpath, f"entry {key!r} has shape {rec['shape']!r}; expected a list of non-negative ints")
        if not isinstance(rec["pieces"], list):
            raise _bad(mpath, f"entry {key!r} has pieces {rec['pieces']!r}; expected a list")
        for p in rec["pieces"]:
            if (not isinstance(p, dict) or set(p) != {"file", "offsets", "shape"} or not isinstance(p["file"], str)
                    or not file_re.match(p["file"]) or not _is_int_list(p["offsets"]) or not _is_int_list(p["shape"])):
                raise _bad(mpath, f"entry {key!r} has a malformed piece {str(p)[:200]}; expected "
                           f"{{\"file\": \"gen-{gen}/<rank>.safetensors\", \"offsets\": [...], \"shape\": [...]}}")
        problem = _tiling_problem(rec["shape"], rec["pieces"])
        if problem:
            raise _bad(mpath, f"entry {key!r}: {problem}")
    for key in values:
        if key in tensors:
            raise _bad(mpath, f"{key!r} is both a tensor and a value")
    return mpath, m


class _Files:
    """Validated headers of the checkpoint's safetensors files, read once each
    by the one safetensors reader (src/io/safetensors.h), which checks the
    whole layout without reading the data."""

    def __init__(self, path):
        self.path = path
        self.headers = {}

    def header(self, rel):
        if rel not in self.headers:
            fpath = os.path.join(self.path, rel)
            if not os.path.isfile(fpath):
                raise _bad(fpath, "is missing (the manifest lists it)", FileNotFoundError)
            entries, start, _ = _C._read_safetensors_header(fpath, _LOAD)
            self.headers[rel] = (fpath, {e[0]: e[1:] for e in entries}, start)
        return self.headers[rel]

    def rows(self, rel, key, dtype, shape, lo, hi):
        """Rows [lo, hi) along dim 0 of the stored piece ``key`` (of the given
        oar dtype and shape), as a NumPy array; bf16 comes back as float32."""
        fpath, header, start = self.header(rel)
        e = header.get(key)
        if e is None:
            raise _bad(fpath, f"has no entry {key!r} (the manifest says it holds a piece of it)")
        st_dtype, st_shape, begin, _ = e
        if st_dtype != dtype or list(st_shape) != list(shape):
            raise _bad(fpath, f"entry {key!r} is {st_dtype} of shape {list(st_shape)}, but the manifest records "
                       f"a {dtype} piece of shape {shape}")
        stored = np.uint16 if dtype == "bfloat16" else np.dtype(dtype)
        itemsize = np.dtype(stored).itemsize
        if shape:  # a contiguous range of rows: read only those bytes
            row = _numel(shape[1:]) * itemsize
            begin, n = begin + lo * row, (hi - lo) * row
            out_shape = [hi - lo] + list(shape[1:])
        else:
            n, out_shape = itemsize, []
        with open(fpath, "rb") as f:
            f.seek(start + begin)
            buf = f.read(n)
        if len(buf) != n:
            raise _bad(fpath, f"ends inside entry {key!r} (the file changed while it was read?)")
        arr = np.frombuffer(buf, dtype=np.dtype(stored).newbyteorder("<")).astype(stored).reshape(out_shape)
        if dtype == "bfloat16":  # widening the bits to float32 is exact
            return (arr.astype(np.uint32) << 16).view(np.float32)
        return arr


def _assemble(files, key, rec, off, shp):
    """The region [off, off + shp) of the saved tensor ``key``, from the saved
    pieces that overlap it."""
    dtype = rec["dtype"]
    out = np.empty(shp, dtype=np.float32 if dtype == "bfloat16" else np.dtype(dtype))
    covered = 0
    for p in rec["pieces"]:
        po, ps = p["offsets"], p["shape"]
        lo = [max(a, b) for a, b in zip(off, po)]
        hi = [min(a + m, b + n) for a, m, b, n in zip(off, shp, po, ps)]
        if any(h <= l for l, h in zip(lo, hi)) and shp:
            continue
        if not shp:  # 0-D: the one piece holds it
            out[()] = files.rows(p["file"], key, dtype, ps, 0, 0)
            covered = 1
            continue
        rows = files.rows(p["file"], key, dtype, ps, lo[0] - po[0], hi[0] - po[0])
        src = tuple([slice(None)] + [slice(l - b, h - b) for l, h, b in zip(lo[1:], hi[1:], po[1:])])
        dst = tuple(slice(l - a, h - a) for l, h, a in zip(lo, hi, off))
        out[dst] = rows[src]
        covered += _numel([h - l for l, h in zip(lo, hi)])
    if covered != _numel(shp):  # the manifest's tiling was checked; this guards the reads
        raise _bad(files.path, f"the pieces of {key!r} cover {covered} of the {_numel(shp)} elements needed")
    return out


def load_state_dict(state_dict, path, process_group=None, coordinator_rank=0, unique_id=None, offload=False,
                    mw_name_compatibility=True):
    """Loads the checkpoint in the folder ``path`` into ``state_dict`` in
    place: every tensor keeps its own mesh and placements (which may differ
    from those it was saved with, or be a plain tensor) and receives its piece
    of the saved value; non-tensor values are replaced by the saved ones. Keys
    of the checkpoint that ``state_dict`` lacks are ignored.

    A Partial target gets the value on the ranks at coordinate 0 of its
    Partial mesh dims and the reduction's identity elsewhere (0 for sum, 1 for
    prod); avg/max/min targets get the value on every rank. ``unique_id``, if
    given, must name the folder's checkpoint; ``offload`` and
    ``mw_name_compatibility`` are accepted for compatibility (CPU tensors,
    no static-graph names).

    >>> import oar, tempfile
    >>> from oar.distributed.checkpoint import save_state_dict, load_state_dict
    >>> path = tempfile.mkdtemp()
    >>> save_state_dict({"b": oar.to_tensor([1.5, 2.5])}, path)
    >>> target = {"b": oar.zeros([2])}
    >>> load_state_dict(target, path)
    >>> target["b"].numpy().tolist()
    [1.5, 2.5]
    >>> oar.distributed.destroy_process_group()
    """
    from ..autograd import no_grad
    from ..creation import to_tensor

    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"[{_LOAD}] path must be a str or os.PathLike, got {type(path).__name__}")
    path = os.path.abspath(os.fspath(path))
    flat = _flatten(state_dict, _LOAD)
    if process_group is not None and not isinstance(process_group, C.Group):
        raise TypeError(f"[{_LOAD}] process_group must be an oar.distributed Group or None, "
                        f"got {type(process_group).__name__}")
    mpath, m = _read_manifest(path)
    if unique_id is not None and unique_id != m["generation"]:
        raise _bad(mpath, f"holds checkpoint {m['generation']}, not unique_id {unique_id} (a folder keeps only its "
                   "latest checkpoint)")
    tensors, values = m["tensors"], m["values"]
    from .sharded_state import ShardedWeight

    rank = C.get_rank()
    files = _Files(path)
    for key, container, k, v in flat:
        piece = None
        if isinstance(v, ShardedWeight):  # receives its region of the saved tensor
            piece, v = v, v.local_tensor
        if not isinstance(v, _C.Tensor):
            if key not in values:
                what = "a tensor" if key in tensors else "no such key"
                raise _bad(mpath, f"{key!r} is a plain value in state_dict, but the checkpoint has {what}",
                           TypeError if key in tensors else ValueError)
            container[k] = values[key]
            continue
        rec = tensors.get(key)
        if rec is None:
            if key in values:
                raise _bad(mpath, f"{key!r} is a tensor in state_dict but a plain value in the checkpoint", TypeError)
            raise _bad(mpath, f"the checkpoint has no key {key!r} ({len(tensors)} tensors saved, e.g. "
                       f"{sorted(tensors)[:5]})")
        shape = list(v.shape) if piece is None else list(piece.global_shape)
        if rec["shape"] != shape:
            raise _bad(mpath, f"{key!r} was saved with shape {rec['shape']}, the target has shape {shape}")
        if rec["dtype"] != _dtype_name(v):
            raise _bad(mpath, f"{key!r} was saved as {rec['dtype']}, the target is {_dtype_name(v)}", TypeError)
        fill = None
        if piece is not None:
            off, shp, target = list(piece.global_offset), list(piece.local_shape), v
        elif _is_dist(v):
            mesh, pl = v.process_mesh, v.placements
            coord = _coord(mesh, rank)
            if coord is None:
                continue  # this rank holds no piece of it
            off, shp = _piece(shape, mesh.shape, pl, coord)
            for dim, p in enumerate(pl):
                if p.is_partial() and p.reduce_type in ("sum", "prod") and coord[dim] != 0:
                    fill = 0 if p.reduce_type == "sum" else 1
            target = v._local_value()
        else:
            off, shp, target = [0] * len(shape), shape, v
        if fill is not None:
            arr = np.full(shp, fill, dtype=np.float32 if rec["dtype"] == "bfloat16" else np.dtype(rec["dtype"]))
        else:
            arr = _assemble(files, key, rec, off, shp)
        src = to_tensor(arr).astype("bfloat16") if rec["dtype"] == "bfloat16" else to_tensor(arr, dtype=rec["dtype"])
        with no_grad():
            target.copy_(src, False)
