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
import collections
import json
import os
import pickle
import re
import socket
import struct
import tempfile
import time

import numpy as np

from . import _C

__all__ = ["save", "load"]

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


_PARAM_NAMES_KEY = "StructuredToParameterName@@"


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



_TMP_PREFIX = ".oar-save-"
_TMP_RE = re.compile(r"^\.oar-save-(?:(?P<host>[A-Za-z0-9_.]+)-(?P<pid>\d+)-)?[A-Za-z0-9_]+\.tmp$")
_STALE_FOREIGN_S = 24 * 3600  # temp files of other hosts (shared folders) older than this are stale


def _host():
    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname())


def _remove_stale_temps(folder):
    """Removes temporary files that earlier saves into `folder` left behind
    when they were killed: ours are named .oar-save-<host>-<pid>-<random>.tmp,
    and one is stale when that process on this host is gone (or, from another
    host or an older oar, when it is a day old). Files of other names are
    never touched."""
    host = _host()
    try:
        names = [n for n in os.listdir(folder) if n.startswith(_TMP_PREFIX)]
    except OSError:
        return
    for name in names:
        m = _TMP_RE.match(name)
        if not m:
            continue
        full = os.path.join(folder, name)
        try:
            if m["pid"] is not None and m["host"] == host:
                pid = int(m["pid"])
                if pid == os.getpid():
                    continue  # our own save in progress (another thread)
                try:
                    os.kill(pid, 0)
                    continue  # the saving process is alive
                except ProcessLookupError:
                    pass
                except PermissionError:
                    continue  # alive, another user's
            elif time.time() - os.path.getmtime(full) < _STALE_FOREIGN_S:
                continue
            os.unlink(full)
        except OSError:
            pass  # removed by someone else meanwhile, or not ours to remove


def _atomic_write(path, write):
    """Calls write(f) on a temporary file in path's folder, syncs it and renames
    it over path, so a crash leaves either the old file or the new one. Temp
    files that killed saves left in that folder are removed first."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    _remove_stale_temps(folder)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{_TMP_PREFIX}{_host()}-{os.getpid()}-", suffix=".tmp")
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

def _decode(path, node, values):
    if isinstance(node, list):
        return [_decode(path, v, values) for v in node]
    if isinstance(node, dict):
        if len(node) == 1:
            (tag, val), = node.items()
            if tag in ("__tensor__", "__ndarray__"):
                if not isinstance(val, str) or val not in values:
                    raise _err(path, f"structure refers to a missing entry {str(val)[:80]!r}")
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


def _as_array(t):
    # bfloat16 comes back as float32 (exact), as NumPy has no bfloat16
    return (t.astype("float32") if t.dtype == _C.dtype.bfloat16 else t).numpy()


def _load_safetensors(path, return_numpy, api="oar.load"):
    """Reads a safetensors file through the one validating reader
    (src/io/safetensors.h) and rebuilds the stored structure."""
    pairs, meta = _C._read_safetensors(path, api)
    meta = dict(meta)
    structure = meta.get(_STRUCT_KEY)
    try:
        tree = json.loads(structure) if structure is not None else None
    except (json.JSONDecodeError, RecursionError):
        raise _err(path, "metadata oar.structure is not valid JSON") from None
    arrays_wanted = set()
    if tree is not None:
        stack = [tree]
        while stack:
            n = stack.pop()
            if isinstance(n, dict):
                if set(n) == {"__ndarray__"} and isinstance(n["__ndarray__"], str):
                    arrays_wanted.add(n["__ndarray__"])
                stack.extend(n.values())
            elif isinstance(n, list):
                stack.extend(n)
    values = {k: _as_array(t) if return_numpy or k in arrays_wanted else t for k, t in pairs}
    if tree is None:
        return values
    try:
        return _decode(path, tree, values)
    except RecursionError:
        raise _err(path, "the stored structure is nested too deeply") from None


# Note [pickled arrays]
# NumPy rebuilds a pickled array by handing whatever state the file holds to
# ndarray.__setstate__ and dtype.__setstate__, and some malformed states crash
# the process there. So no file content ever reaches NumPy's pickle hooks: the
# globals an array pickle names resolve to the stand-ins below, which check
# every field (numeric dtype, shape of non-negative ints, raw bytes of exactly
# the right length) and build the array with np.frombuffer. The walk in
# _load_pickle swaps each stand-in for the array it built.

_PICKLE_DTYPES = frozenset("b1 i1 i2 i4 i8 u1 u2 u4 u8 f2 f4 f8 c8 c16".split())


def _refuse(what):
    return pickle.UnpicklingError(what)


class _PickledDtype:
    """What ``numpy.dtype`` names in a pickle: a numeric dtype and its byte order."""

    def __init__(self, name, align=False, copy=True):
        if not isinstance(name, str) or name not in _PICKLE_DTYPES:
            raise _refuse(f"dtype {str(name)[:40]!r} is not a numeric dtype")
        self.dtype = np.dtype(name)

    def __setstate__(self, state):
        if not (isinstance(state, tuple) and len(state) == 8 and state[0] in (3, 4)
                and state[1] in ("<", ">", "|", "=") and state[2:5] == (None, None, None)):
            raise _refuse("malformed dtype state")
        if state[1] in ("<", ">"):
            self.dtype = self.dtype.newbyteorder(state[1])


class _PickledNdarrayClass:
    """What ``numpy.ndarray`` names in a pickle: only an argument of _reconstruct."""

    def __new__(cls, *args, **kwargs):
        raise _refuse("numpy.ndarray may only be rebuilt through _reconstruct")


class _PickledArray:
    """The array _reconstruct makes; its __setstate__ receives the data."""

    array = None

    def __setstate__(self, state):
        if not (isinstance(state, tuple) and len(state) == 5 and state[0] == 1 and isinstance(state[3], bool)):
            raise _refuse("malformed array state")
        _, shape, dtype, fortran, raw = state
        self.array = _array_from(raw, dtype, shape, "F" if fortran else "C")


def _array_from(raw, dtype, shape, order):
    if not isinstance(dtype, _PickledDtype):
        raise _refuse(f"expected a dtype, got {type(dtype).__name__}")
    dtype = dtype.dtype
    if not (isinstance(shape, tuple) and len(shape) <= 16 and all(type(n) is int and n >= 0 for n in shape)):
        raise _refuse(f"array shape must be a tuple of at most 16 non-negative ints, got {str(shape)[:80]}")
    if order not in ("C", "F"):
        raise _refuse(f"array order must be 'C' or 'F', got {str(order)[:20]!r}")
    if not isinstance(raw, (bytes, bytearray)):
        raise _refuse(f"array data must be bytes, got {type(raw).__name__}")
    numel = 1
    for n in shape:
        numel *= n
    if numel * dtype.itemsize != len(raw):
        raise _refuse(f"array of shape {shape} and dtype {dtype} needs {numel * dtype.itemsize} bytes, "
                      f"the file holds {len(raw)}")
    return np.frombuffer(raw, dtype, count=numel).reshape(shape, order=order).copy(order="K")


def _pickled_reconstruct(cls, shape, typecode):
    if cls is not _PickledNdarrayClass:
        raise _refuse("_reconstruct may only rebuild numpy.ndarray")
    return _PickledArray()


def _pickled_frombuffer(buf, dtype, shape, order):
    return _array_from(buf, dtype, shape, order)


def _pickled_scalar(dtype, raw=None):
    return _array_from(raw, dtype, (), "C")[()]


def _pickled_encode(text, encoding="utf-8"):
    # protocol 2 spells bytes as _codecs.encode(text, "latin1")
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise _refuse("_codecs.encode is accepted only for latin1 text")
    return text.encode("latin1")


def _pickled_tuple(items=()):
    if not isinstance(items, (tuple, list)):
        raise _refuse(f"tuple() is accepted only of a tuple or list, got {type(items).__name__}")
    if len(items) == 2 and isinstance(items[0], str) and isinstance(items[1], _PickledArray):
        return items[1]  # Paddle pickles a tensor as tuple((name, array)); it loads as the array
    return tuple(items)


def _pickled_bytes(*args):
    # protocol 2 spells b"" as bytes()
    if args:
        raise _refuse("bytes() is accepted only without arguments")
    return b""


class _ArrayOnlyUnpickler(pickle.Unpickler):
    """Accepts NumPy arrays, dtypes and plain containers; refuses every other global."""

    _ALLOWED = {("numpy", "ndarray"): _PickledNdarrayClass, ("numpy", "dtype"): _PickledDtype,
                ("collections", "OrderedDict"): collections.OrderedDict, ("_codecs", "encode"): _pickled_encode,
                ("__builtin__", "bytes"): _pickled_bytes, ("builtins", "bytes"): _pickled_bytes,
                ("__builtin__", "tuple"): _pickled_tuple, ("builtins", "tuple"): _pickled_tuple}
    for _core in ("numpy.core", "numpy._core"):
        _ALLOWED[(_core + ".multiarray", "_reconstruct")] = _pickled_reconstruct
        _ALLOWED[(_core + ".multiarray", "scalar")] = _pickled_scalar
        # protocol 5 pickles rebuild arrays from their raw bytes
        _ALLOWED[(_core + ".numeric", "_frombuffer")] = _pickled_frombuffer
    del _core

    def __init__(self, f, path):
        super().__init__(f)
        self._path = path

    def find_class(self, module, name):
        found = self._ALLOWED.get((module, name))
        if found is not None:
            return found
        raise _err(self._path, f"refusing to load {module}.{name}: only arrays and containers are accepted",
                   pickle.UnpicklingError)


_PICKLE_LEAVES = (int, float, complex, bool, str, bytes, type(None), np.generic)


def _load_pickle(path, return_numpy):
    with open(path, "rb") as f:
        try:
            obj = _ArrayOnlyUnpickler(f, path).load()
        except pickle.UnpicklingError as e:
            if str(e).startswith("[oar.load]"):
                raise
            raise _err(path, f"not a readable Paddle checkpoint ({e})", pickle.UnpicklingError) from None
        except Exception as e:  # truncated or corrupt pickles
            raise _err(path, f"not a readable Paddle checkpoint ({type(e).__name__}: {str(e)[:200]})") from None
    from .creation import to_tensor

    # Note [bounded pickle loading]
    # A pickle may refer to one object many times (memo references), so a
    # tree walk that copies what it visits can do work exponential in the
    # file's size (nested lists of shared lists). The walk below visits each
    # distinct object once and keeps sharing, so its work is linear in the
    # number of objects the unpickler made, itself bounded by the file size.
    # It is iterative: nesting depth costs no Python stack. Every object seen
    # stays reachable from `obj` meanwhile, so ids are stable keys.
    done = {}  # id -> converted object
    open_ = set()  # ids whose children are being converted
    pending = [(obj, False)]
    while pending:
        o, children_done = pending.pop()
        if id(o) in done:
            continue
        if isinstance(o, (_PickledArray, np.ndarray)):
            a = o.array if isinstance(o, _PickledArray) else o
            if a is None:
                raise _err(path, "holds an array whose data never came", pickle.UnpicklingError)
            done[id(o)] = a if return_numpy else to_tensor(a)
        elif isinstance(o, _PickledDtype):
            done[id(o)] = o.dtype
        elif isinstance(o, (dict, list, tuple)):
            items = list(o.values()) if isinstance(o, dict) else list(o)
            if not children_done:
                if id(o) in open_:
                    raise _err(path, "holds a container that contains itself", pickle.UnpicklingError)
                open_.add(id(o))
                pending.append((o, True))
                pending.extend((v, False) for v in items if id(v) not in done)
                continue
            open_.discard(id(o))
            conv = [done.get(id(v), v) for v in items]
            done[id(o)] = type(o)(zip(o.keys(), conv) if isinstance(o, dict) else conv)
        elif isinstance(o, _PICKLE_LEAVES):
            done[id(o)] = o
        else:
            raise _err(path, f"holds a {type(o).__name__} where arrays, containers and numbers were expected",
                       pickle.UnpicklingError)
    return done[id(obj)]


def load(path, return_numpy=False, **configs):
    """Loads what :func:`save` stored (or a Paddle ``.pdparams``/``.pdopt``
    pickle of arrays). Tensors come back as oar Tensors, or as NumPy arrays
    with ``return_numpy=True``. A Paddle pickle's parameter-name table
    (``"StructuredToParameterName@@"``) is dropped unless ``keep_name_table=True``.

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
    if _is_pickle(path):
        obj = _load_pickle(path, return_numpy)
        if isinstance(obj, dict) and not configs.get("keep_name_table", False):
            obj.pop(_PARAM_NAMES_KEY, None)  # Paddle's structured-name -> parameter-name table
        return obj
    return _load_safetensors(path, return_numpy)


def _is_pickle(path):
    """Whether path holds a pickle (Paddle's own format) rather than safetensors.

    A safetensors file is recognised by its layout, not one byte: the 8-byte
    length n fits in the file and the header right after it starts with '{'.
    A pickle starts with the PROTO opcode (0x80, protocol 2-5); read as a
    length, its first 8 bytes are at least 0x0280 + further non-zero opcode
    bytes, far beyond any file that also has '{' at offset 8, so the two
    tests cannot both pass. Anything else goes to the safetensors reader,
    whose error says what is wrong.
    """
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(9)
    if len(head) == 9:
        (n,) = struct.unpack("<Q", head[:8])
        if 0 < n <= size - 8 and head[8:9] == b"{":
            return False
    return head[:1] == b"\x80" and len(head) > 1 and 2 <= head[1] <= 5
