"""Dataset containers with Paddle's names: map-style and iterable datasets and their combinators."""
import bisect
import math
import numbers

import numpy as np

from .. import _C

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "ComposeDataset", "ChainDataset", "ConcatDataset",
    "Subset", "random_split",
]


class Dataset:
    """Base class of map-style datasets: subclasses define ``__getitem__`` and ``__len__``.

    >>> import numpy as np
    >>> from oar.io import Dataset
    >>> class Squares(Dataset):
    ...     def __getitem__(self, i):
    ...         return np.float32(i * i)
    ...     def __len__(self):
    ...         return 4
    >>> [float(v) for v in Squares()]
    [0.0, 1.0, 4.0, 9.0]
    """

    def __getitem__(self, idx):
        raise NotImplementedError(f"[oar.io.Dataset] {type(self).__name__} must implement __getitem__")

    def __len__(self):
        raise NotImplementedError(f"[oar.io.Dataset] {type(self).__name__} must implement __len__")

    def __iter__(self):
        # Plain iteration stops at len() rather than relying on IndexError from __getitem__.
        for i in range(len(self)):
            yield self[i]

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base class of datasets read as a stream: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker iterates its own copy; use
    :func:`oar.io.get_worker_info` inside ``__iter__`` to give each worker its shard.

    >>> from oar.io import IterableDataset
    >>> class Count(IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(3))
    >>> list(Count())
    [0, 1, 2]
    """

    def __iter__(self):
        raise NotImplementedError(f"[oar.io.IterableDataset] {type(self).__name__} must implement __iter__")

    def __getitem__(self, idx):
        raise TypeError(f"[oar.io.IterableDataset] {type(self).__name__} cannot be indexed; iterate it")

    def __len__(self):
        raise TypeError(f"[oar.io.IterableDataset] {type(self).__name__} has no length")

    def __add__(self, other):
        return ChainDataset([self, other])


def _first_dim(t):
    return int(t.shape[0]) if len(t.shape) > 0 else None


class TensorDataset(Dataset):
    """Samples are the i-th rows of equally long tensors (or NumPy arrays).

    >>> import oar
    >>> from oar.io import TensorDataset
    >>> ds = TensorDataset([oar.arange(6).reshape([3, 2]), oar.to_tensor([0, 1, 0])])
    >>> x, y = ds[1]
    >>> x.numpy().tolist(), int(y), len(ds)
    ([2, 3], 1, 3)
    """

    def __init__(self, tensors):
        tensors = list(tensors)
        if not tensors:
            raise ValueError("[oar.io.TensorDataset] expects at least one tensor")
        lengths = []
        for t in tensors:
            if not isinstance(t, (_C.Tensor, np.ndarray)):
                raise TypeError(f"[oar.io.TensorDataset] expects Tensors or NumPy arrays, got {type(t).__name__}")
            n = _first_dim(t)
            if n is None:
                raise ValueError("[oar.io.TensorDataset] tensors must have at least one dimension")
            lengths.append(n)
        if len(set(lengths)) != 1:
            raise ValueError(f"[oar.io.TensorDataset] all tensors must have the same first dimension, got {lengths}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return _first_dim(self.tensors[0])


class ComposeDataset(Dataset):
    """Zips equally long map-style datasets: sample i is the fields of every dataset's sample i, flattened.

    >>> from oar.io import ComposeDataset
    >>> ds = ComposeDataset([[(1, 2), (3, 4)], [(5,), (6,)]])
    >>> ds[1]
    (3, 4, 6)
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("[oar.io.ComposeDataset] expects at least one dataset")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("[oar.io.ComposeDataset] does not accept IterableDataset")
        lengths = [len(d) for d in self.datasets]
        if len(set(lengths)) != 1:
            raise ValueError(f"[oar.io.ComposeDataset] all datasets must have the same length, got {lengths}")

    def __len__(self):
        return len(self.datasets[0])

    def __getitem__(self, idx):
        sample = []
        for d in self.datasets:
            s = d[idx]
            sample.extend(s if isinstance(s, (list, tuple)) else [s])
        return tuple(sample)


class ChainDataset(IterableDataset):
    """Iterates several iterable datasets one after another.

    >>> from oar.io import ChainDataset
    >>> list(ChainDataset([range(2), range(3)]))
    [0, 1, 0, 1, 2]
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)

    def __iter__(self):
        for d in self.datasets:
            yield from d


class ConcatDataset(Dataset):
    """Concatenates map-style datasets; index i runs through the first, then the second, ...

    >>> from oar.io import ConcatDataset
    >>> ds = ConcatDataset([[10, 11], [20, 21, 22]])
    >>> len(ds), ds[1], ds[2], ds[-1]
    (5, 11, 20, 22)
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("[oar.io.ConcatDataset] expects at least one dataset")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("[oar.io.ConcatDataset] does not accept IterableDataset")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]).tolist())

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        n = len(self)
        if idx < 0:
            idx += n
        if not 0 <= idx < n:
            raise IndexError(f"[oar.io.ConcatDataset] index {idx} out of range for length {n}")
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[d - 1] if d > 0 else 0
        return self.datasets[d][idx - start]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order.

    >>> from oar.io import Subset
    >>> s = Subset(["a", "b", "c", "d"], [3, 0])
    >>> len(s), s[0], s[1]
    (2, 'd', 'a')
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = [int(i) for i in indices]

    def __getitem__(self, idx):
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Splits a dataset into non-overlapping random subsets of the given lengths.

    `lengths` are counts summing to ``len(dataset)``, or fractions summing to 1 (the
    remainder of the rounding goes round-robin to the first subsets). The permutation is
    drawn from oar's global generator, so ``oar.seed`` makes it reproducible.

    >>> import oar
    >>> from oar.io import random_split
    >>> _ = oar.seed(0)
    >>> a, b = random_split(range(10), [0.7, 0.3])
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (7, 3, True)
    """
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral) for v in lengths) \
            and math.isclose(sum(lengths), 1.0) and sum(lengths) <= 1.0 + 1e-9:
        for f in lengths:
            if f < 0 or f > 1:
                raise ValueError(f"[oar.io.random_split] fractions must lie in [0, 1], got {lengths}")
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if any(int(v) != v or v < 0 for v in lengths):
        raise ValueError(f"[oar.io.random_split] lengths must be non-negative integers or fractions, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(f"[oar.io.random_split] sum of lengths ({sum(lengths)}) must equal the dataset length ({n})")
    if generator is not None and hasattr(generator, "permutation"):
        perm = np.asarray(generator.permutation(n)).tolist()
    else:
        perm = _C.randperm(n, _C.dtype.int64).numpy().tolist() if n > 0 else []
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + int(length)]))
        offset += int(length)
    return out
