"""DataLoader: batches from a dataset, in the main process or in worker processes."""
import itertools
import numbers

from .collate import default_collate_fn, to_tensors
from .dataset import IterableDataset
from .sampler import BatchSampler
from .worker import _MultiProcessIter

__all__ = ["DataLoader"]

_API = "oar.io.DataLoader"


class _SingleProcessIter:
    def __init__(self, loader):
        self._loader = loader
        if loader._is_iterable:
            self._it = iter(loader.dataset)
        else:
            self._tasks = iter(loader._index_source())

    def __iter__(self):
        return self

    def __next__(self):
        ld = self._loader
        if ld._is_iterable:
            if not ld._auto_collate:
                sample = next(self._it)
                return to_tensors(sample if ld.collate_fn is None else ld.collate_fn(sample))
            samples = []
            for s in self._it:
                samples.append(s)
                if len(samples) == ld.batch_size:
                    break
            if not samples or (ld.drop_last and len(samples) < ld.batch_size):
                raise StopIteration
        else:
            indices = next(self._tasks)
            if not ld._auto_collate:
                s = ld.dataset[indices]
                return to_tensors(s if ld.collate_fn is None else ld.collate_fn(s))
            samples = [ld.dataset[i] for i in indices]
        return to_tensors((ld.collate_fn or default_collate_fn)(samples))


class DataLoader:
    """Iterates over a dataset in batches (``paddle.io.DataLoader``).

    Map-style datasets are read through a batch sampler (built from `batch_size`,
    `shuffle` and `drop_last` unless `batch_sampler` is given); iterable datasets are read
    in order and cut into batches of `batch_size`. ``batch_size=None`` returns samples
    one by one. Batches are collated by `collate_fn` (default: :func:`default_collate_fn`)
    and NumPy arrays in them become Tensors; tuple samples give lists.

    With ``num_workers > 0``, batches are produced by that many worker processes, each
    keeping `prefetch_factor` batches in flight, and delivered in sampler order. Each worker
    runs ``worker_init_fn(worker_id)`` after seeding ``random``, ``numpy.random`` and oar
    with ``seed`` (see :func:`get_worker_info`). An exception in a worker is re-raised here
    with the worker id and its traceback; a worker that dies raises RuntimeError; `timeout`
    > 0 bounds the wait for one batch in seconds. Workers are started at each ``iter(loader)``
    and stopped at the end of the epoch, unless ``persistent_workers=True``: then they keep
    running and serve every later epoch (each epoch still draws a new sampler order), and stop
    when the loader is garbage-collected or the interpreter exits; after a worker crash or a
    timeout, the next epoch starts new ones. `feed_list`, `places`, `return_list`,
    `use_buffer_reader` and `use_shared_memory` are accepted for compatibility.

    >>> import numpy as np
    >>> from oar.io import DataLoader, TensorDataset
    >>> ds = TensorDataset([np.arange(10, dtype="float32").reshape(5, 2), np.arange(5)])
    >>> loader = DataLoader(ds, batch_size=2)
    >>> [(x.shape, y.numpy().tolist()) for x, y in loader]
    [([2, 2], [0, 1]), ([2, 2], [2, 3]), ([1, 2], [4])]
    >>> len(loader)
    3
    """

    def __init__(self, dataset, feed_list=None, places=None, return_list=True, batch_sampler=None, batch_size=1,
                 shuffle=False, drop_last=False, collate_fn=None, num_workers=0, use_buffer_reader=True,
                 prefetch_factor=2, use_shared_memory=True, timeout=0, worker_init_fn=None,
                 persistent_workers=False):
        if isinstance(num_workers, bool) or not isinstance(num_workers, numbers.Integral) or num_workers < 0:
            raise ValueError(f"[{_API}] num_workers must be a non-negative integer, got {num_workers!r}")
        if isinstance(prefetch_factor, bool) or not isinstance(prefetch_factor, numbers.Integral) \
                or prefetch_factor <= 0:
            raise ValueError(f"[{_API}] prefetch_factor must be a positive integer, got {prefetch_factor!r}")
        if not isinstance(timeout, numbers.Real) or timeout < 0:
            raise ValueError(f"[{_API}] timeout must be a non-negative number of seconds, got {timeout!r}")
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral)
                                       or batch_size <= 0):
            raise ValueError(f"[{_API}] batch_size must be a positive integer or None, got {batch_size!r}")
        if not isinstance(shuffle, bool) or not isinstance(drop_last, bool):
            raise ValueError(f"[{_API}] shuffle and drop_last must be bools, got {shuffle!r} and {drop_last!r}")
        if collate_fn is not None and not callable(collate_fn):
            raise ValueError(f"[{_API}] collate_fn must be callable, got {type(collate_fn).__name__}")
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise ValueError(f"[{_API}] worker_init_fn must be callable, got {type(worker_init_fn).__name__}")
        self.dataset = dataset
        self.return_list = return_list
        self.feed_list, self.places = feed_list, places
        self.num_workers = int(num_workers)
        self.prefetch_factor = int(prefetch_factor)
        self.use_shared_memory = use_shared_memory
        self.use_buffer_reader = use_buffer_reader
        self.persistent_workers = bool(persistent_workers)
        self._iterator = None  # the persistent workers' iterator, reused across epochs
        self.timeout = float(timeout)
        self.worker_init_fn = worker_init_fn
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if batch_sampler is not None:
                raise ValueError(f"[{_API}] batch_sampler cannot be used with an IterableDataset")
            if shuffle:
                raise ValueError(f"[{_API}] shuffle cannot be used with an IterableDataset")
            self.batch_sampler = None
            self.batch_size = batch_size
        elif batch_sampler is not None:
            if batch_size != 1 or shuffle or drop_last:
                raise ValueError(f"[{_API}] batch_size, shuffle and drop_last must keep their defaults when "
                                 "batch_sampler is given (the batch sampler decides them)")
            self.batch_sampler = batch_sampler
            self.batch_size = getattr(batch_sampler, "batch_size", None)
        elif batch_size is None:
            if shuffle or drop_last:
                raise ValueError(f"[{_API}] shuffle and drop_last need a batch_size")
            self.batch_sampler = None
            self.batch_size = None
        else:
            self.batch_sampler = BatchSampler(dataset=dataset, shuffle=shuffle, batch_size=batch_size,
                                              drop_last=drop_last)
            self.batch_size = int(batch_size)
        self._auto_collate = self.batch_sampler is not None or (self._is_iterable and self.batch_size is not None)

    def _index_source(self):
        if self.batch_sampler is not None:
            return iter(self.batch_sampler)
        return iter(range(len(self.dataset)))

    def _task_source(self):
        """What the workers are sent, one item per batch: index lists, or None for an IterableDataset."""
        return itertools.repeat(None) if self._is_iterable else iter(self._index_source())

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if not self.persistent_workers:
            return _MultiProcessIter(self)
        it = self._iterator
        if it is None or it._shutdown:  # first epoch, or the last one ended in a crash or timeout
            it = self._iterator = _MultiProcessIter(self)
        else:
            it._reset(self._task_source())
        return it

    def __call__(self):
        return self.__iter__()

    def __len__(self):
        if self._is_iterable:
            raise TypeError(f"[{_API}] the length of a loader over an IterableDataset is unknown")
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.dataset)
