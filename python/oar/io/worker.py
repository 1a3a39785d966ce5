"""DataLoader worker processes.

Note [worker data]: workers are forked. GNU OpenMP's thread pool does not survive fork, so
a child that runs a multi-threaded oar kernel would hang; every worker therefore sets
oar's thread count to 1 before touching the dataset. Tensors are not picklable, so workers
send NumPy data: samples are converted to NumPy before collation and the main process turns
the collated arrays back into Tensors.

Protocol: each worker has its own index queue and all share one result queue. The main
process sends ``(task_idx, indices)`` round-robin, keeps ``prefetch_factor`` tasks per
worker in flight, and re-orders results by ``task_idx``. ``None`` on an index queue asks
the worker to exit. While waiting, the main process checks that the workers are alive, so
a crashed worker raises instead of hanging.

Persistent workers (``persistent_workers=True``): the loader keeps one iterator and calls
``_reset`` at the start of each later epoch instead of starting new workers. Task indices keep
counting up across epochs, so a result left over from an epoch that was abandoned early has
an index below the new epoch's first one and is dropped. For an IterableDataset, ``_reset``
also puts a ``_ResumeIteration`` on every index queue (after any stale tasks), which makes the
worker start a fresh iterator over its copy of the dataset. The workers stop when the
iterator is garbage-collected (with its loader) or at interpreter exit.
"""
import atexit
import itertools
import multiprocessing as mp
import os
import pickle
import queue
import random
import sys
import time
import traceback
import weakref

import numpy as np

from .collate import default_collate_fn, to_numpy, to_tensors

__all__ = ["get_worker_info", "WorkerInfo"]

_worker_info = None
_POLL_S = 0.1  # how often the main process checks worker liveness while waiting


class WorkerInfo:
    """What a worker process knows about itself: ``id``, ``num_workers``, ``seed`` and ``dataset``.

    >>> from oar.io import WorkerInfo
    >>> WorkerInfo(id=0, num_workers=2, seed=5, dataset=None).num_workers
    2
    """

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


def get_worker_info():
    """Inside a DataLoader worker, its :class:`WorkerInfo`; in the main process, None.

    >>> from oar.io import get_worker_info
    >>> get_worker_info() is None
    True
    """
    return _worker_info


class _IterableEnd:
    """Sent by a worker whose copy of an IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to a persistent worker at a new epoch: restart the IterableDataset iterator."""


class _PlainMessage(str):
    def __repr__(self):
        return str(self)


class _WorkerError:
    """An exception raised in a worker, carried to the main process with its traceback text."""

    def __init__(self, worker_id, exc, where):
        self.worker_id = worker_id
        self.text = traceback.format_exc()
        self.where = where
        try:
            pickle.dumps(type(exc))
            self.exc_type = type(exc)
        except Exception:
            self.exc_type = RuntimeError

    def reraise(self):
        msg = (f"[oar.io.DataLoader] {self.exc_type.__name__} raised in DataLoader worker {self.worker_id} "
               f"({self.where}).\nOriginal traceback:\n{self.text}")
        if issubclass(self.exc_type, KeyError):
            msg = _PlainMessage(msg)  # KeyError's str() is the repr of its argument
        try:
            err = self.exc_type(msg)
        except Exception:
            err = None
        if not isinstance(err, BaseException) or str(err) != msg:  # types whose constructor changes the message
            err = RuntimeError(msg)
        raise err


def _seed_worker(seed):
    from .. import _C

    random.seed(seed)
    np.random.seed(seed % (2 ** 32))
    _C.seed(seed & 0xFFFFFFFFFFFFFFFF)


def _fetch(dataset, indices, iterable_it, auto_collate, batch_size, drop_last, collate_fn):
    if iterable_it is not None:
        if not auto_collate:
            sample = next(iterable_it)
            return to_numpy(sample if collate_fn is None else collate_fn(sample))
        samples = list(itertools.islice(iterable_it, batch_size))
        if not samples or (drop_last and len(samples) < batch_size):
            raise StopIteration
    elif auto_collate:
        samples = [dataset[i] for i in indices]
    else:
        samples = dataset[indices]
        return to_numpy(samples if collate_fn is None else collate_fn(samples))
    if collate_fn is None:
        return default_collate_fn(to_numpy(samples))
    return to_numpy(collate_fn(samples))


def _worker_loop(dataset, is_iterable, index_queue, result_queue, done_event, auto_collate, batch_size,
                 drop_last, collate_fn, worker_init_fn, worker_id, num_workers, seed, parent_pid):
    global _worker_info
    from .. import _C

    _C.set_num_threads(1)  # see Note [worker data]
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    init_error = None
    iterable_it = None
    try:
        _seed_worker(seed)
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
        if is_iterable:
            iterable_it = iter(dataset)
    except Exception as e:
        init_error = _WorkerError(worker_id, e, "worker_init_fn" if worker_init_fn is not None else "start-up")
    exhausted = False
    while not done_event.is_set():
        try:
            task = index_queue.get(timeout=_POLL_S)
        except queue.Empty:
            if os.getppid() != parent_pid:  # the main process died; do not linger as an orphan
                result_queue.cancel_join_thread()
                return
            continue
        if task is None:
            break
        if isinstance(task, _ResumeIteration):
            exhausted = False
            if is_iterable and init_error is None:
                try:
                    iterable_it = iter(dataset)
                except Exception as e:
                    init_error = _WorkerError(worker_id, e, "restarting the IterableDataset iterator")
            continue
        task_idx, indices = task
        if init_error is not None:
            data = init_error
        elif exhausted:
            data = _IterableEnd(worker_id)
        else:
            try:
                data = _fetch(dataset, indices, iterable_it, auto_collate, batch_size, drop_last, collate_fn)
            except StopIteration:
                exhausted = True
                data = _IterableEnd(worker_id)
            except Exception as e:
                data = _WorkerError(worker_id, e, f"fetching task {task_idx}")
        try:
            result_queue.put((task_idx, data))
        except Exception as e:  # e.g. unpicklable batch data
            result_queue.put((task_idx, _WorkerError(worker_id, e, "sending the batch")))
    # Flush before exiting: the result queue's write lock is shared by all workers, and a
    # feeder thread killed mid-write would keep it held and starve the others. If the main
    # process has stopped reading and the pipe is full, it terminates this worker instead.
    result_queue.close()
    result_queue.join_thread()
    sys.stdout.flush()


def _mp_context():
    methods = mp.get_all_start_methods()
    return mp.get_context("fork" if "fork" in methods else methods[0])


class _MultiProcessIter:
    """Iterator over a DataLoader's batches produced by worker processes, delivered in order."""

    def __init__(self, loader):
        from .. import _C

        # No reference to the loader is kept: a persistent loader holds this iterator, and
        # without a cycle both go (and the workers stop) as soon as the loader is dropped.
        self._is_iterable = loader._is_iterable
        self._persistent = bool(loader.persistent_workers)
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._prefetch = loader.prefetch_factor * self._num_workers
        # The task source is created before worker seeds are drawn so the sample order equals
        # the single-process order for the same oar.seed.
        tasks = loader._task_source()
        base_seed = int(_C.randint(0, 2 ** 62, [1], _C.dtype.int64).numpy()[0])
        ctx = _mp_context()
        self._result_queue = ctx.Queue()
        # Shutdown is signalled by this event as well as by None on the index queues: when the
        # iterator dies in a garbage cycle, the queues' feeder threads may be finalised first.
        self._done_event = ctx.Event()
        self._index_queues, self._workers = [], []
        self._shutdown = False
        for wid in range(self._num_workers):
            iq = ctx.Queue()
            iq.cancel_join_thread()
            w = ctx.Process(
                target=_worker_loop,
                args=(loader.dataset, self._is_iterable, iq, self._result_queue, self._done_event,
                      loader._auto_collate,
                      loader.batch_size, loader.drop_last, loader.collate_fn, loader.worker_init_fn, wid,
                      self._num_workers, base_seed + wid, os.getpid()),
                daemon=True,
            )
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._send_idx = 0
        if self._persistent:
            _live_persistent.add(self)
        self._reset(tasks, resume=False)

    def _reset(self, tasks, resume=True):
        """Starts an epoch over `tasks` (a new one, for persistent workers, when resume is True)."""
        self._tasks = tasks
        self._epoch_start = self._send_idx  # results with a smaller index belong to an earlier epoch
        self._rcvd_idx = self._send_idx
        self._task_info = {}  # task_idx -> [worker_id] or [worker_id, data] once it arrived early
        self._active = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        self._epoch_done = False
        if resume and self._is_iterable:
            for iq in self._index_queues:
                iq.put(_ResumeIteration())
        for _ in range(self._prefetch):
            if not self._put_task():
                break

    def __iter__(self):
        return self

    def _put_task(self):
        if not any(self._active):
            return False
        try:
            indices = next(self._tasks)
        except StopIteration:
            return False
        for _ in range(self._num_workers):
            wid = next(self._worker_cycle)
            if self._active[wid]:
                break
        self._index_queues[wid].put((self._send_idx, indices))
        self._task_info[self._send_idx] = [wid]
        self._send_idx += 1
        return True

    def _check_workers(self):
        for wid, w in enumerate(self._workers):
            if self._active[wid] and not w.is_alive():
                code = w.exitcode
                self._do_shutdown(grace_s=0.2)
                how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
                raise RuntimeError(f"[oar.io.DataLoader] worker {wid} (pid {w.pid}) {how} unexpectedly; "
                                   "if it ran out of memory, try fewer workers or a smaller batch")

    def _get_result(self):
        start = time.monotonic()
        while True:
            try:
                return self._result_queue.get(timeout=_POLL_S)
            except queue.Empty:
                pass
            self._check_workers()
            if self._timeout > 0 and time.monotonic() - start > self._timeout:
                self._do_shutdown(grace_s=0.2)  # the workers are stuck; don't wait for them
                raise RuntimeError(f"[oar.io.DataLoader] no batch arrived from the workers within "
                                   f"timeout={self._timeout} seconds")

    def __next__(self):
        while True:
            if self._shutdown or self._epoch_done:
                raise StopIteration
            # Skip tasks that went to a worker whose iterable dataset has ended.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._active[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if self._persistent:
                    self._epoch_done = True  # the workers wait for the next epoch
                else:
                    self._do_shutdown()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            idx, data = self._get_result()
            if idx < self._epoch_start:
                continue  # left over from an epoch that was abandoned early
            if isinstance(data, _IterableEnd):
                # The worker's earlier batches arrived before this (one queue, sent in order),
                # so its remaining tasks carry nothing and the skip loop above drops them.
                if self._active[data.worker_id]:
                    self._active[data.worker_id] = False
                    if not self._persistent:  # a persistent worker restarts at the next epoch
                        self._index_queues[data.worker_id].put(None)
                continue
            if idx != self._rcvd_idx:
                if idx in self._task_info:
                    self._task_info[idx].append(data)
                continue
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process(data)

    def _process(self, data):
        self._put_task()
        if isinstance(data, _WorkerError):
            data.reraise()
        return to_tensors(data)

    def _do_shutdown(self, grace_s=2.0):
        if self._shutdown:
            return
        self._shutdown = True
        self._done_event.set()
        for iq in self._index_queues:
            try:
                iq.put(None)
            except Exception:
                pass
        deadline = time.monotonic() + grace_s
        for w in self._workers:
            w.join(timeout=max(0.0, deadline - time.monotonic()))
        for w in self._workers:
            if w.is_alive():
                w.terminate()
                w.join(timeout=1.0)
        self._result_queue.cancel_join_thread()
        self._result_queue.close()
        for iq in self._index_queues:
            iq.close()

    def __del__(self):
        try:
            self._do_shutdown()
        except Exception:
            pass


# Persistent iterators still running; stopped at exit before multiprocessing's own exit
# handler (atexit runs in reverse order of registration) terminates daemonic children.
_live_persistent = weakref.WeakSet()


@atexit.register
def _shutdown_persistent_workers():
    for it in list(_live_persistent):
        try:
            it._do_shutdown(grace_s=0.5)
        except Exception:
            pass
