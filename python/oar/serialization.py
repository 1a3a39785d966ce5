"""oar.save / oar.load: tensors, state dicts and nested containers of them in
safetensors files.

Format: an 8-byte little-endian header length, a JSON header naming each
tensor's dtype, shape and byte range, then the raw little-endian data. A flat
``{name: Tensor}`` dict is stored under its own names, so other safetensors
readers see an ordinary file; any other structure (nested dicts and lists,
Python numbers and strings, NumPy arrays) is recorded as JSON in the header's
``__metadata__`` under ``oar.structure``.

Loading never executes code. The reader checks the header length, the JSON,
every dtype against an allow-list, shapes, and that the byte ranges are in
bounds, do not overlap and match the element counts, before it allocates.
Saving writes a temporary file in the same folder, flushes it to disk and
renames it over the target, so an interrupted save leaves the previous file
intact.

Paddle ``.pdparams``/``.pdopt`` files (pickles of dicts of NumPy arrays) are
read with an unpickler that accepts only arrays, dtypes and plain containers.
"""
import json
import os
import pickle
import struct
import tempfile

import numpy as np

from . import _C

__all__ = ["save", "load"]

_MAX_HEADER = 100 << 20  # bytes of JSON header accepted
_STRUCT_KEY = "oar.structure"
_FORMAT_KEY = "oar.format"
_FORMAT_VERSION = "1"

# safetensors dtype name <-> (oar dtype name, NumPy storage dtype, itemsize)
_DTYPES = {
    "BOOL": ("bool", np.bool_, 1),
    "U8": ("uint8", np.uint8, 1),
    "I8": ("int8", np.int8, 1),
    "I16": ("int16", np.int16, 2),
    "I32": ("int32", np.int32, 4),
    "I64": ("int64", np.int64, 8),
    "F16": ("float16", np.float16, 2),
    "BF16": ("bfloat16", np.uint16, 2),  # raw bits; widened to float32 on the way in
    "F32": ("float32", np.float32, 4),
    "F64": ("float64", np.float64, 8),
    "C64": ("complex64", np.complex64, 8),
}
_FROM_OAR = {v[0]: k for k, v in _DTYPES.items()}
_FROM_OAR["complex128"] = "F64"  # stored as float64 pairs, see _COMPLEX128


def _err(path, what, exc=ValueError):
    return exc(f"[oar.load] {path}: {what}")


# ---------------------------------------------------------------- saving

def _dtype_name(t):
    return str(t.dtype).replace("paddle.", "")


def _tensor_bytes(t):
    """(safetensors dtype, shape, bytes) of an oar Tensor."""
    name = _dtype_name(t)
    shape = list(t.shape)
    if name == "bfloat16":
        bits = np.ascontiguousarray(t.astype("float32").numpy()).view(np.uint32)
        return "BF16", shape, (bits >> 16).astype("<u2").tobytes()
    if name == "complex128":
        arr = np.ascontiguousarray(t.numpy())
        return "F64", shape + [2], arr.view(np.float64).astype("<f8").tobytes()
    arr = np.ascontiguousarray(t.numpy())
    st = _FROM_OAR[name]
    return st, shape, arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()


def _array_bytes(a):
    a = np.ascontiguousarray(a)
    for st, (_, npd, _) in _DTYPES.items():
        if st != "BF16" and a.dtype == npd:
            return st, list(a.shape), a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    if a.dtype == np.complex128:
        return "F64", list(a.shape) + [2], a.view(np.float64).astype("<f8").tobytes()
    raise TypeError(f"[oar.save] cannot store a NumPy array of dtype {a.dtype}")


class _Writer:
    def __init__(self):
        self.entries = {}  # key -> (dtype, shape, bytes)
        self.complex128 = []

    def add(self, key, value):
        base, n = key, 1
        while key in self.entries:  # keep keys unique whatever the user's names
            key = f"{base}~{n}"
            n += 1
        if isinstance(value, _C.Tensor):
            st, shape, data = _tensor_bytes(value)
            if _dtype_name(value) == "complex128":
                self.complex128.append(key)
        else:
            st, shape, data = _array_bytes(value)
            if value.dtype == np.complex128:
                self.complex128.append(key)
        self.entries[key] = (st, shape, data)
        return key

    def encode(self, path_key, obj):
        """The JSON description of obj; tensors and arrays go to entries."""
        if isinstance(obj, _C.Tensor):
            return {"__tensor__": self.add(path_key, obj)}
        if isinstance(obj, np.ndarray):
            return {"__ndarray__": self.add(path_key, obj)}
        if isinstance(obj, np.generic):
            obj = obj.item()
        if obj is None or isinstance(obj, (bool, int, str)):
            return obj
        if isinstance(obj, float):
            return obj if np.isfinite(obj) else {"__float__": repr(obj)}
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if not isinstance(k, (str, int)) or isinstance(k, bool):
                    raise TypeError(f"[oar.save] dict keys must be str or int, got {type(k).__name__}")
                items.append([k, self.encode(f"{path_key}.{k}" if path_key else str(k), v)])
            return {"__dict__": items}
        if isinstance(obj, (list, tuple)):
            enc = [self.encode(f"{path_key}.{i}" if path_key else str(i), v) for i, v in enumerate(obj)]
            return {"__tuple__": enc} if isinstance(obj, tuple) else enc
        raise TypeError(f"[oar.save] cannot store an object of type {type(obj).__name__}; expected Tensors, "
                        "NumPy arrays, numbers, strings, None, and dicts/lists/tuples of them")



def _atomic_write(path, write):
    """Calls write(f) on a temporary file in path's folder, syncs it and renames
    it over path, so a crash leaves either the old file or the new one."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".oar-save-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:  # make the rename itself durable
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass

def save(obj, path, protocol=4, **configs):
    """Saves ``obj`` (a Tensor, a state dict, or nested dicts/lists of tensors,
    arrays and Python scalars) to ``path`` as a safetensors file.

    The write is atomic: the file appears complete or not at all.

    >>> import oar, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "w.pdparams")
    >>> oar.save({"w": oar.ones([2, 2]), "step": 3}, path)
    >>> state = oar.load(path)
    >>> state["w"].numpy().tolist(), state["step"]
    ([[1.0, 1.0], [1.0, 1.0]], 3)
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"[oar.save] path must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    if path.endswith(os.sep) or os.path.isdir(path):
        raise ValueError(f"[oar.save] path must name a file, got the folder {path!r}")
    w = _Writer()
    flat = isinstance(obj, dict) and obj and all(isinstance(k, str) and isinstance(v, _C.Tensor)
                                                 for k, v in obj.items())
    if flat:
        for k, v in obj.items():
            w.add(k, v)
        structure = None
    else:
        structure = w.encode("" if isinstance(obj, (dict, list, tuple)) else "value", obj)
    header, offset = {}, 0
    for key, (st, shape, data) in w.entries.items():
        header[key] = {"dtype": st, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    meta = {_FORMAT_KEY: _FORMAT_VERSION}
    if structure is not None:
        meta[_STRUCT_KEY] = json.dumps(structure)
    if w.complex128:
        meta["oar.complex128"] = json.dumps(w.complex128)
    header["__metadata__"] = meta
    hbytes = json.dumps(header, separators=(",", ":")).encode()
    hbytes += b" " * (-len(hbytes) % 8)  # data starts 8-byte aligned
    def write(f):
        f.write(struct.pack("<Q", len(hbytes)))
        f.write(hbytes)
        for _, _, data in w.entries.values():
            f.write(data)
    _atomic_write(path, write)


# ---------------------------------------------------------------- loading

def _read_header(path, f, size):
    if size < 8:
        raise _err(path, f"file is {size} bytes; a safetensors file has at least an 8-byte header length")
    (n,) = struct.unpack("<Q", f.read(8))
    if n > _MAX_HEADER:
        raise _err(path, f"header length {n} exceeds the {_MAX_HEADER}-byte limit")
    if n > size - 8:
        raise _err(path, f"header length {n} runs past the end of the {size}-byte file (truncated?)")
    raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _err(path, f"header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise _err(path, "header must be a JSON object")
    return header, 8 + n


def _check_entries(path, header, data_size):
    meta = header.pop("__metadata__", {}) or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise _err(path, "__metadata__ must map strings to strings")
    version = meta.get(_FORMAT_KEY, _FORMAT_VERSION)
    if not version.isdigit() or int(version) > int(_FORMAT_VERSION):
        raise _err(path, f"format version {version!r} is newer than this oar reads ({_FORMAT_VERSION}); "
                   "upgrade oar")
    spans = []
    for key, e in header.items():
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            raise _err(path, f"entry {key!r} must have exactly dtype, shape and data_offsets")
        if e["dtype"] not in _DTYPES:
            raise _err(path, f"entry {key!r} has dtype {e['dtype']!r}; allowed: {', '.join(_DTYPES)}")
        shape = e["shape"]
        if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                  for d in shape):
            raise _err(path, f"entry {key!r} has shape {shape!r}; expected a list of non-negative ints")
        offs = e["data_offsets"]
        if (not isinstance(offs, list) or len(offs) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool) for o in offs)):
            raise _err(path, f"entry {key!r} has data_offsets {offs!r}; expected [begin, end]")
        begin, end = offs
        if not 0 <= begin <= end <= data_size:
            raise _err(path, f"entry {key!r} has bytes [{begin}, {end}) outside the {data_size}-byte data "
                       "section (truncated?)")
        numel = 1
        for d in shape:
            numel *= d
        if numel * _DTYPES[e["dtype"]][2] != end - begin:
            raise _err(path, f"entry {key!r} has {end - begin} bytes but shape {shape} of "
                       f"{e['dtype']} needs {numel * _DTYPES[e['dtype']][2]}")
        spans.append((begin, end, key))
    spans.sort()
    for (b0, e0, k0), (b1, e1, k1) in zip(spans, spans[1:]):
        if b1 < e0:
            raise _err(path, f"entries {k0!r} and {k1!r} overlap")
    return meta


def _to_value(path, key, e, buf, as_array, complex128):
    st = e["dtype"]
    name, npd, _ = _DTYPES[st]
    begin, end = e["data_offsets"]
    arr = np.frombuffer(buf, dtype=np.dtype(npd).newbyteorder("<"), count=(end - begin) // _DTYPES[st][2],
                        offset=begin).reshape(e["shape"]).astype(npd)
    if key in complex128:
        if not arr.shape or arr.shape[-1] != 2 or st != "F64":
            raise _err(path, f"entry {key!r} is marked complex128 but is not float64 pairs")
        arr = arr.view(np.complex128)[..., 0]
        name = "complex128"
    if as_array:
        if st == "BF16":
            return (arr.astype(np.uint32) << 16).view(np.float32)
        return arr
    from .creation import to_tensor
    if st == "BF16":  # widening the bits to float32 is exact; the cast back too
        return to_tensor((arr.astype(np.uint32) << 16).view(np.float32)).astype("bfloat16")
    return to_tensor(arr, dtype=name)


def _decode(path, node, values):
    if isinstance(node, list):
        return [_decode(path, v, values) for v in node]
    if isinstance(node, dict):
        if len(node) == 1:
            (tag, val), = node.items()
            if tag in ("__tensor__", "__ndarray__"):
                if val not in values:
                    raise _err(path, f"structure refers to a missing entry {val!r}")
                return values[val]
            if tag == "__float__" and val in ("inf", "-inf", "nan"):
                return float(val)
            if tag == "__tuple__" and isinstance(val, list):
                return tuple(_decode(path, v, values) for v in val)
            if tag == "__dict__" and isinstance(val, list):
                out = {}
                for item in val:
                    if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], (str, int))):
                        raise _err(path, "malformed dict in the stored structure")
                    out[item[0]] = _decode(path, item[1], values)
                return out
        raise _err(path, f"unknown node in the stored structure: {str(node)[:80]}")
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    raise _err(path, "malformed stored structure")


def _load_safetensors(path, return_numpy):
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        header, data_start = _read_header(path, f, size)
        meta = _check_entries(path, header, size - data_start)
        buf = f.read()  # the data section, validated above
    structure = meta.get(_STRUCT_KEY)
    try:
        complex128 = set(json.loads(meta.get("oar.complex128", "[]")))
        tree = json.loads(structure) if structure is not None else None
    except (json.JSONDecodeError, TypeError):
        raise _err(path, "metadata is not valid JSON") from None
    arrays_wanted = set()
    if tree is not None:
        def mark(n):
            if isinstance(n, dict):
                if set(n) == {"__ndarray__"}:
                    arrays_wanted.add(n["__ndarray__"])
                for v in n.values():
                    mark(v)
            elif isinstance(n, list):
                for v in n:
                    mark(v)
        mark(tree)
    values = {k: _to_value(path, k, e, buf, return_numpy or k in arrays_wanted, complex128)
              for k, e in header.items()}
    if tree is None:
        return values
    return _decode(path, tree, values)


class _ArrayOnlyUnpickler(pickle.Unpickler):
    """Accepts NumPy arrays, dtypes and plain containers; refuses every other global."""

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"), ("collections", "OrderedDict"), ("_codecs", "encode"),
    }

    def __init__(self, f, path):
        super().__init__(f)
        self._path = path

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise _err(self._path, f"refusing to load {module}.{name}: only arrays and containers are accepted",
                   pickle.UnpicklingError)


def _load_pickle(path, return_numpy):
    with open(path, "rb") as f:
        try:
            obj = _ArrayOnlyUnpickler(f, path).load()
        except pickle.UnpicklingError:
            raise
        except Exception as e:  # truncated or corrupt pickles
            raise _err(path, f"not a readable Paddle checkpoint ({type(e).__name__}: {e})") from None
    if return_numpy:
        return obj
    from .creation import to_tensor

    def conv(o):
        if isinstance(o, np.ndarray):
            return to_tensor(o)
        if isinstance(o, dict):
            return {k: conv(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return type(o)(conv(v) for v in o)
        return o
    return conv(obj)


def load(path, return_numpy=False, **configs):
    """Loads what :func:`save` stored (or a Paddle ``.pdparams``/``.pdopt``
    pickle of arrays). Tensors come back as oar Tensors, or as NumPy arrays
    with ``return_numpy=True``.

    >>> import oar, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.pdtensor")
    >>> oar.save(oar.to_tensor([1, 2, 3]), path)
    >>> oar.load(path).numpy().tolist()
    [1, 2, 3]
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"[oar.load] path must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"[oar.load] {path}: no such file")
    with open(path, "rb") as f:
        head = f.read(2)
    if head[:1] == b"\x80":  # a pickle protocol marker: Paddle's own format
        return _load_pickle(path, return_numpy)
    return _load_safetensors(path, return_numpy)
