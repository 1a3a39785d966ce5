"""Samplers (which indices, in which order) and batch samplers (how indices are grouped).

Random choices draw from oar's global generator, so ``oar.seed(n)`` makes shuffling
reproducible. A sampler draws its whole order when iteration starts, so the order does
not depend on anything drawn while the epoch is running (e.g. DataLoader worker seeds).
"""
import math
import numbers

import numpy as np

from .. import _C

__all__ = [
    "Sampler", "SequenceSampler", "RandomSampler", "WeightedRandomSampler", "SubsetRandomSampler",
    "BatchSampler", "DistributedBatchSampler",
]


def _randperm(n):
    return _C.randperm(int(n), _C.dtype.int64).numpy().tolist() if n > 0 else []


class Sampler:
    """Base class: subclasses yield dataset indices from ``__iter__`` (and may define ``__len__``).

    >>> from oar.io import Sampler
    >>> class Evens(Sampler):
    ...     def __iter__(self):
    ...         return iter(range(0, len(self.data_source), 2))
    >>> list(Evens(range(5)))
    [0, 2, 4]
    """

    def __init__(self, data_source=None):
        self.data_source = data_source

    def __iter__(self):
        raise NotImplementedError(f"[oar.io.Sampler] {type(self).__name__} must implement __iter__")


class SequenceSampler(Sampler):
    """Indices 0, 1, ..., len(data_source) - 1 in order.

    >>> from oar.io import SequenceSampler
    >>> list(SequenceSampler(["a", "b", "c"]))
    [0, 1, 2]
    """

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices in random order.

    Without replacement: a permutation (repeated and cut when `num_samples` exceeds the
    dataset length). With replacement: `num_samples` independent uniform draws.
    `generator`, when given, is an iterator of indices (Paddle's convention) or a
    ``numpy.random.Generator``.

    >>> import oar
    >>> from oar.io import RandomSampler
    >>> _ = oar.seed(3); a = list(RandomSampler(range(5)))
    >>> _ = oar.seed(3); b = list(RandomSampler(range(5)))
    >>> a == b, sorted(a)
    (True, [0, 1, 2, 3, 4])
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        super().__init__(data_source)
        if not isinstance(replacement, bool):
            raise TypeError(f"[oar.io.RandomSampler] replacement must be a bool, got {replacement!r}")
        if num_samples is not None and (isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral)
                                        or num_samples <= 0):
            raise ValueError(f"[oar.io.RandomSampler] num_samples must be a positive integer, got {num_samples!r}")
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else int(self._num_samples)

    def __iter__(self):
        n, m = len(self.data_source), self.num_samples
        g = self.generator
        if g is not None and hasattr(g, "integers"):  # numpy Generator
            idx = g.integers(0, n, m) if self.replacement else np.concatenate(
                [g.permutation(n) for _ in range(-(-m // max(n, 1)))] or [np.zeros(0, np.int64)])[:m]
            return iter(np.asarray(idx).tolist())
        if g is not None:
            return _take(g, m)
        if n == 0:
            return iter([])
        if self.replacement:
            return iter(_C.randint(0, n, [m], _C.dtype.int64).numpy().tolist())
        out = []
        while len(out) < m:
            out.extend(_randperm(n))
        return iter(out[:m])

    def __len__(self):
        return self.num_samples


def _take(it, m):
    for _ in range(m):
        try:
            yield int(next(it))
        except StopIteration:
            return


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probability proportional to `weights`.

    >>> import oar
    >>> from oar.io import WeightedRandomSampler
    >>> list(WeightedRandomSampler([0.0, 0.0, 1.0], 3))
    [2, 2, 2]
    """

    def __init__(self, weights, num_samples, replacement=True):
        if isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral) or num_samples <= 0:
            raise ValueError(f"[oar.io.WeightedRandomSampler] num_samples must be a positive integer, got {num_samples!r}")
        if not isinstance(replacement, bool):
            raise TypeError(f"[oar.io.WeightedRandomSampler] replacement must be a bool, got {replacement!r}")
        w = weights.numpy() if isinstance(weights, _C.Tensor) else np.asarray(weights)
        w = w.astype(np.float64)
        if w.ndim != 1 or w.size == 0:
            raise ValueError(f"[oar.io.WeightedRandomSampler] weights must be a non-empty 1-D sequence, got shape {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise ValueError("[oar.io.WeightedRandomSampler] weights must be finite, non-negative and not all zero")
        if not replacement and num_samples > int((w > 0).sum()):
            raise ValueError(f"[oar.io.WeightedRandomSampler] num_samples ({num_samples}) exceeds the number of "
                             f"non-zero weights ({int((w > 0).sum())}) while replacement is False")
        super().__init__(None)
        self.weights = w
        self.num_samples = int(num_samples)
        self.replacement = replacement

    def __iter__(self):
        t = _C.from_numpy(np.ascontiguousarray(self.weights))
        return iter(_C.multinomial(t, self.num_samples, self.replacement).numpy().tolist())

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in random order.

    >>> from oar.io import SubsetRandomSampler
    >>> sorted(SubsetRandomSampler([4, 7, 9]))
    [4, 7, 9]
    """

    def __init__(self, indices, generator=None):
        super().__init__(None)
        self.indices = list(indices)
        if len(self.indices) == 0:
            raise ValueError("[oar.io.SubsetRandomSampler] indices must not be empty")
        self.generator = generator

    def __iter__(self):
        if self.generator is not None and hasattr(self.generator, "permutation"):
            order = np.asarray(self.generator.permutation(len(self.indices))).tolist()
        else:
            order = _randperm(len(self.indices))
        return iter([self.indices[i] for i in order])

    def __len__(self):
        return len(self.indices)


def _check_batch_args(api, batch_size, drop_last, shuffle=False):
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size <= 0:
        raise ValueError(f"[{api}] batch_size must be a positive integer, got {batch_size!r}")
    if not isinstance(drop_last, bool):
        raise TypeError(f"[{api}] drop_last must be a bool, got {drop_last!r}")
    if not isinstance(shuffle, bool):
        raise TypeError(f"[{api}] shuffle must be a bool, got {shuffle!r}")


class BatchSampler(Sampler):
    """Groups the indices of a sampler into lists of `batch_size`.

    Give either `dataset` (a SequenceSampler, or a RandomSampler when `shuffle`) or `sampler`.

    >>> from oar.io import BatchSampler
    >>> list(BatchSampler(range(5), batch_size=2))
    [[0, 1], [2, 3], [4]]
    >>> len(BatchSampler(range(5), batch_size=2, drop_last=True))
    2
    """

    def __init__(self, dataset=None, sampler=None, shuffle=False, batch_size=1, drop_last=False):
        api = "oar.io.BatchSampler"
        if (dataset is None) == (sampler is None):
            raise ValueError(f"[{api}] give exactly one of dataset and sampler")
        _check_batch_args(api, batch_size, drop_last, shuffle)
        if sampler is not None and shuffle:
            raise ValueError(f"[{api}] shuffle must be False when a sampler is given (the sampler sets the order)")
        if sampler is None:
            sampler = RandomSampler(dataset) if shuffle else SequenceSampler(dataset)
        self.sampler = sampler
        self.shuffle = shuffle
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self):
        # iter() runs now, not at the first next(), so a random order is drawn immediately.
        return self._batches(iter(self.sampler))

    def _batches(self, indices):
        batch = []
        for idx in indices:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class DistributedBatchSampler(BatchSampler):
    """The batches one rank reads in data-parallel training.

    The index list is padded (by repeating its start) to a multiple of `num_replicas`, so
    every rank gets ``ceil(len(dataset) / num_replicas)`` samples; each rank takes its
    `batch_size` slice of every group of ``batch_size * num_replicas`` indices. With
    `shuffle`, the order is a permutation seeded by the epoch (see :meth:`set_epoch`), the
    same on every rank. `num_replicas` and `rank` default to the launcher's environment
    (PADDLE_TRAINERS_NUM / PADDLE_TRAINER_ID), or 1 and 0.

    >>> from oar.io import DistributedBatchSampler
    >>> list(DistributedBatchSampler(range(10), batch_size=2, num_replicas=2, rank=0))
    [[0, 1], [4, 5], [8]]
    >>> list(DistributedBatchSampler(range(10), batch_size=2, num_replicas=2, rank=1))
    [[2, 3], [6, 7], [9]]
    """

    def __init__(self, dataset, batch_size, num_replicas=None, rank=None, shuffle=False, drop_last=False):
        api = "oar.io.DistributedBatchSampler"
        _check_batch_args(api, batch_size, drop_last, shuffle)
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.drop_last = drop_last
        # The job's layout (launcher or mpirun environment, or the initialised group).
        from .. import distributed

        if num_replicas is None:
            num_replicas = distributed.get_world_size()
        if rank is None:
            rank = distributed.get_rank()
        if isinstance(num_replicas, bool) or not isinstance(num_replicas, numbers.Integral) or num_replicas <= 0:
            raise ValueError(f"[{api}] num_replicas must be a positive integer, got {num_replicas!r}")
        if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or not 0 <= rank < num_replicas:
            raise ValueError(f"[{api}] rank must be in [0, num_replicas={num_replicas}), got {rank!r}")
        self.nranks = int(num_replicas)
        self.local_rank = int(rank)
        self.epoch = 0
        self.num_samples = int(math.ceil(len(dataset) / self.nranks))
        self.total_size = self.num_samples * self.nranks

    def __iter__(self):
        n = len(self.dataset)
        indices = list(range(n))
        while len(indices) < self.total_size:  # pad by repeating the start (several times for tiny datasets)
            indices += indices[: self.total_size - len(indices)]
        if self.shuffle:
            np.random.RandomState(self.epoch).shuffle(indices)
            self.epoch += 1
        if self.nranks > 1:
            step = self.batch_size * self.nranks
            last = self.total_size % step
            local = []
            for i in range(self.local_rank * self.batch_size, len(indices) - last, step):
                local.extend(indices[i:i + self.batch_size])
            tail = indices[len(indices) - last:]
            per = last // self.nranks
            local.extend(tail[self.local_rank * per:(self.local_rank + 1) * per])
            indices = local
        batch = []
        for idx in indices:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = self.num_samples + (0 if self.drop_last else self.batch_size - 1)
        return n // self.batch_size

    def set_epoch(self, epoch):
        """Sets the epoch that seeds the shuffle; call it before each epoch so ranks agree.

        >>> from oar.io import DistributedBatchSampler
        >>> s = DistributedBatchSampler(range(8), 4, num_replicas=1, rank=0, shuffle=True)
        >>> s.set_epoch(5); a = list(s); s.set_epoch(5); b = list(s)
        >>> a == b
        True
        """
        self.epoch = int(epoch)
