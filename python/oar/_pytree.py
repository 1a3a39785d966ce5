"""Nested structures of tensors: flattened to a list of tensors and a layout, and rebuilt.

Captured programs take and give flat lists of tensors; user functions take and
return Tensors inside lists, tuples, named tuples, dicts and dataclasses, with
Python values (None, numbers, strings) among them. A layout records such a
structure with the tensors left out, so that the program's flat outputs can be
put back in place. Layouts are nested tuples, hashable when their Python
values are:

- ``("tensor",)``: a Tensor;
- ``("const", value)``: any other value, kept as it is;
- ``(list, children)`` / ``(tuple, children)`` / ``(NamedTupleClass, children)``;
- ``(dict, keys, children)`` (any dict type: the type is the first item);
- ``("dataclass", cls, field_names, children)``.

>>> import oar
>>> from oar import _pytree
>>> leaves = []
>>> layout = _pytree.flatten({"y": oar.ones([2]), "n": 3, "pair": (oar.zeros([1]), None)}, leaves)
>>> len(leaves), _pytree.describe(layout)
(2, "{'y': Tensor, 'n': 3, 'pair': (Tensor, None)}")
>>> _pytree.unflatten(layout, [oar.to_tensor([5.0]), oar.to_tensor([6.0])])["pair"][0].numpy().tolist()
[6.0]
"""
import dataclasses

from . import _C

Tensor = _C.Tensor

TENSOR = ("tensor",)


def _is_namedtuple(cls):
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def flatten(value, leaves):
    """Appends the tensors of ``value`` to ``leaves`` in order; returns the layout of the rest."""
    if isinstance(value, Tensor):
        leaves.append(value)
        return TENSOR
    cls = type(value)
    if cls is list or cls is tuple or (issubclass(cls, tuple) and _is_namedtuple(cls)):
        return (cls, tuple(flatten(v, leaves) for v in value))
    if isinstance(value, dict):
        keys = tuple(value.keys())
        return (cls, keys, tuple(flatten(value[k], leaves) for k in keys))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = tuple(f.name for f in dataclasses.fields(value))
        return ("dataclass", cls, names, tuple(flatten(getattr(value, n), leaves) for n in names))
    return ("const", value)


def unflatten(layout, leaves):
    """The structure of ``layout`` with its tensors taken from ``leaves`` in order."""
    it = iter(leaves)
    out = _build(layout, it)
    if next(it, None) is not None:
        raise ValueError("[oar.pytree] more tensors than the layout has places for")
    return out


def _build(layout, it):
    kind = layout[0]
    if kind == "tensor":
        try:
            return next(it)
        except StopIteration:
            raise ValueError("[oar.pytree] fewer tensors than the layout has places for") from None
    if kind == "const":
        return layout[1]
    if kind == "dataclass":
        _, cls, names, children = layout
        return make_record(cls, names, [_build(sub, it) for sub in children])
    if len(layout) == 3:  # a dict type
        cls = kind
        items = [(k, _build(sub, it)) for k, sub in zip(layout[1], layout[2])]
        return cls(items) if cls is dict else _make_dict(cls, items)
    values = [_build(sub, it) for sub in layout[1]]
    if kind is list:
        return values
    if kind is tuple:
        return tuple(values)
    return kind(*values)  # a named tuple


def make_record(cls, fields, values):
    """An instance of a named tuple or dataclass ``cls`` with these field values."""
    if issubclass(cls, tuple):
        return cls(*values)
    obj = cls.__new__(cls)
    for f, v in zip(fields, values):
        object.__setattr__(obj, f, v)  # frozen dataclasses and init=False fields too
    return obj


def _make_dict(cls, items):
    try:
        return cls(items)
    except TypeError:  # e.g. defaultdict: its first argument is the factory
        d = cls.__new__(cls)
        dict.__init__(d, items)
        return d


def count(layout):
    """The number of tensors in a layout."""
    kind = layout[0]
    if kind == "tensor":
        return 1
    if kind == "const":
        return 0
    return sum(count(sub) for sub in layout[-1])


def same(a, b):
    """Whether two layouts have the same containers, Python values (by type and value) and tensor places."""
    if a[0] != b[0] or len(a) != len(b):
        return False
    if a[0] == "tensor":
        return True
    if a[0] == "const":
        try:
            return bool(a[1] == b[1]) and type(a[1]) is type(b[1])
        except Exception:  # values whose == is not a bool (arrays): only the same object matches
            return a[1] is b[1]
    if a[:-1] != b[:-1]:  # the type, and the keys or field names
        return False
    return len(a[-1]) == len(b[-1]) and all(same(x, y) for x, y in zip(a[-1], b[-1]))


def describe(layout):
    """A short text for a layout, for error messages: ``[Tensor, (Tensor, None)]``."""
    kind = layout[0]
    if kind == "tensor":
        return "Tensor"
    if kind == "const":
        return repr(layout[1])
    if kind == "dataclass":
        return f"{layout[1].__name__}(" + ", ".join(f"{n}={describe(s)}" for n, s in zip(layout[2], layout[3])) + ")"
    if len(layout) == 3:
        return "{" + ", ".join(f"{k!r}: {describe(s)}" for k, s in zip(layout[1], layout[2])) + "}"
    inner = ", ".join(describe(s) for s in layout[1])
    if kind is list:
        return f"[{inner}]"
    if kind is tuple:
        return f"({inner}{',' if len(layout[1]) == 1 else ''})"
    return f"{kind.__name__}({inner})"


# ---- a JSON form for saved programs (oar.jit.save) ----------------------------

_JSON_SCALARS = (type(None), bool, int, float, str)


def to_json(layout, api):
    """The layout as JSON data. Named tuples save as tuples and dataclasses as dicts of their
    fields: loading a program never imports user classes."""
    kind = layout[0]
    if kind == "tensor":
        return "tensor"
    if kind == "const":
        v = layout[1]
        if not isinstance(v, _JSON_SCALARS):
            raise TypeError(f"[{api}] the function returns a {type(v).__name__} ({v!r:.60}) among its outputs; "
                            f"a saved program can return Tensors with None, bool, int, float or str values only")
        return {"const": v}
    if kind == "dataclass":
        return {"dict": [[n, to_json(s, api)] for n, s in zip(layout[2], layout[3])]}
    if len(layout) == 3:
        for k in layout[1]:
            if not isinstance(k, str):
                raise TypeError(f"[{api}] a saved program can return dicts with str keys only, got key {k!r}")
        return {"dict": [[k, to_json(s, api)] for k, s in zip(layout[1], layout[2])]}
    return {"list" if kind is list else "tuple": [to_json(s, api) for s in layout[1]]}


def from_json(doc, where, depth=0):
    """The layout of to_json's data; ValueError starting with ``where`` if malformed."""
    if depth > 64:
        raise ValueError(f"{where}: the output layout nests more than 64 levels")
    if doc == "tensor":
        return TENSOR
    if isinstance(doc, dict) and len(doc) == 1:
        (key, val), = doc.items()
        if key == "const" and isinstance(val, _JSON_SCALARS):
            return ("const", val)
        if key in ("list", "tuple") and isinstance(val, list):
            return (list if key == "list" else tuple, tuple(from_json(v, where, depth + 1) for v in val))
        if key == "dict" and isinstance(val, list) and all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in val):
            return (dict, tuple(p[0] for p in val), tuple(from_json(p[1], where, depth + 1) for p in val))
    raise ValueError(f"{where}: malformed output layout entry {str(doc)[:80]}")
