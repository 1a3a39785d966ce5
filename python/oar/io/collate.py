"""Batch collation and the conversions between worker-side NumPy data and oar Tensors."""
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from .. import _C

__all__ = ["default_collate_fn", "default_convert_fn"]


def default_collate_fn(batch):
    """Stacks a list of samples into a batch, field by field (Paddle's rules).

    NumPy arrays and numbers are stacked into a NumPy array (the DataLoader turns it into a
    Tensor), oar Tensors are stacked with ``oar.stack``, strings are kept as a list, dicts
    are collated per key and tuples/lists per position (a tuple sample gives a list).

    >>> import numpy as np
    >>> from oar.io import default_collate_fn
    >>> out = default_collate_fn([(np.zeros(2), 1), (np.ones(2), 0)])
    >>> out[0].shape, out[1].tolist()
    ((2, 2), [1, 0])
    """
    if len(batch) == 0:
        raise ValueError("[oar.io.default_collate_fn] cannot collate an empty batch")
    sample = batch[0]
    if isinstance(sample, np.ndarray):
        return np.stack(batch, axis=0)
    if isinstance(sample, _C.Tensor):
        from .._manip import stack
        return stack(list(batch), axis=0)
    if isinstance(sample, (str, bytes)):
        return list(batch)
    if isinstance(sample, (numbers.Number, np.generic)):
        return np.array(batch)
    if isinstance(sample, Mapping):
        return {key: default_collate_fn([d[key] for d in batch]) for key in sample}
    if isinstance(sample, Sequence):
        n = len(sample)
        if not all(isinstance(s, Sequence) and len(s) == n for s in batch):
            raise RuntimeError("[oar.io.default_collate_fn] samples in a batch have different numbers of fields")
        return [default_collate_fn(list(fields)) for fields in zip(*batch)]
    raise TypeError("[oar.io.default_collate_fn] batch data must be NumPy arrays, Tensors, numbers, strings, "
                    f"dicts or lists/tuples of those, got {type(sample).__name__}")


def default_convert_fn(data):
    """Converts the NumPy arrays in (nested) data to Tensors; used when a loader does not batch.

    >>> import numpy as np
    >>> from oar.io import default_convert_fn
    >>> out = default_convert_fn({"x": np.arange(3)})
    >>> type(out["x"]).__name__, out["x"].numpy().tolist()
    ('Tensor', [0, 1, 2])
    """
    return to_tensors(data)


def _numeric(arr):
    return arr.dtype.kind in "biufc"


def to_tensors(data):
    """NumPy arrays (and NumPy scalars) in nested data become oar Tensors; the rest is kept."""
    if isinstance(data, np.ndarray):
        if not _numeric(data):
            return data
        if data.dtype.kind == "u" and data.dtype != np.uint8:
            data = data.astype(np.int64)
        return _C.clone(_C.from_numpy(np.ascontiguousarray(data)))
    if isinstance(data, _C.Tensor):
        return data
    if isinstance(data, Mapping):
        return {k: to_tensors(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(to_tensors(v) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(to_tensors(v) for v in data)
    return data


def to_numpy(data):
    """oar Tensors in nested data become NumPy arrays, so they can cross a process boundary."""
    if isinstance(data, _C.Tensor):
        return np.asarray(data.numpy())
    if isinstance(data, Mapping):
        return {k: to_numpy(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(to_numpy(v) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(to_numpy(v) for v in data)
    return data
