"""oar.io: datasets, samplers, collation and the DataLoader (single process and workers).

Worker tests guard against hangs: every loader that can fail uses a short timeout or
relies on the liveness check, and pytest runs each test under a wall-clock alarm.
"""
import os
import signal
import time

import numpy as np
import pytest

import oar
import oar.io as io


@pytest.fixture(autouse=True)
def _alarm():
    # A hang in the worker protocol fails the test instead of freezing the suite.
    def on_alarm(signum, frame):
        raise TimeoutError("test exceeded 60 s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


class Range(io.Dataset):
    """Sample i is (float32 vector [i, i], int i)."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return np.full(2, i, dtype=np.float32), i

    def __len__(self):
        return self.n


def batches_np(loader):
    return [[f.numpy() for f in b] for b in loader]


# ---------------------------------------------------------------- datasets
def test_tensor_dataset():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = np.array([3, 1, 4, 1])
    ds = io.TensorDataset([oar.to_tensor(x), oar.to_tensor(y)])
    assert len(ds) == 4
    a, b = ds[2]
    np.testing.assert_array_equal(a.numpy(), x[2])
    assert int(b) == 4
    with pytest.raises(ValueError, match=r"^\[oar.io.TensorDataset\]"):
        io.TensorDataset([oar.zeros([3]), oar.zeros([4])])
    with pytest.raises(ValueError, match=r"^\[oar.io.TensorDataset\]"):
        io.TensorDataset([oar.to_tensor(1.0)])
    with pytest.raises(TypeError, match=r"^\[oar.io.TensorDataset\]"):
        io.TensorDataset([[1, 2]])


def test_concat_subset_compose_chain():
    c = io.ConcatDataset([list(range(3)), [], list(range(10, 12))])
    assert len(c) == 5 and [c[i] for i in range(5)] == [0, 1, 2, 10, 11] and c[-1] == 11
    with pytest.raises(IndexError):
        c[5]
    s = io.Subset(list("abcdef"), [5, 1, 1])
    assert [s[i] for i in range(len(s))] == ["f", "b", "b"]
    comp = io.ComposeDataset([Range(3), [("x",), ("y",), ("z",)]])
    img, lab, ch = comp[1]
    np.testing.assert_array_equal(img, [1, 1])
    assert (lab, ch) == (1, "y")
    with pytest.raises(ValueError, match=r"^\[oar.io.ComposeDataset\]"):
        io.ComposeDataset([Range(3), Range(4)])

    class It(io.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

    assert list(io.ChainDataset([It(2), It(3)])) == [0, 1, 0, 1, 2]
    assert list(It(2) + It(1)) == [0, 1, 0]
    with pytest.raises(TypeError):
        len(It(2))


def test_random_split():
    oar.seed(11)
    parts = io.random_split(range(10), [3, 7])
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    oar.seed(11)
    again = io.random_split(range(10), [3, 7])
    assert list(again[0]) == list(parts[0])
    f = io.random_split(range(11), [0.5, 0.5])
    assert [len(p) for p in f] == [6, 5]
    with pytest.raises(ValueError, match=r"^\[oar.io.random_split\]"):
        io.random_split(range(10), [3, 3])


# ---------------------------------------------------------------- samplers
def test_sequence_and_random_sampler():
    assert list(io.SequenceSampler(range(4))) == [0, 1, 2, 3]
    oar.seed(5)
    a = list(io.RandomSampler(range(50)))
    oar.seed(5)
    b = list(io.RandomSampler(range(50)))
    assert a == b and sorted(a) == list(range(50)) and a != list(range(50))
    r = list(io.RandomSampler(range(3), replacement=True, num_samples=200))
    assert len(r) == 200 and set(r) == {0, 1, 2}
    r = list(io.RandomSampler(range(3), num_samples=7))
    assert len(r) == 7 and sorted(r[:3]) == [0, 1, 2]
    assert list(io.RandomSampler(range(5), generator=iter([4, 2, 0]))) == [4, 2, 0]
    g = np.random.default_rng(0)
    assert sorted(io.RandomSampler(range(6), generator=g)) == list(range(6))
    with pytest.raises(ValueError, match=r"^\[oar.io.RandomSampler\]"):
        io.RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match=r"^\[oar.io.RandomSampler\]"):
        io.RandomSampler(range(3), replacement=1)


def test_weighted_and_subset_sampler():
    oar.seed(0)
    w = np.array([1.0, 0.0, 3.0])
    draws = np.array(list(io.WeightedRandomSampler(w, 4000)))
    freq = np.bincount(draws, minlength=3) / 4000
    np.testing.assert_allclose(freq, w / w.sum(), atol=0.04)
    nr = list(io.WeightedRandomSampler([1.0, 1.0, 1.0, 0.5], 4, replacement=False))
    assert sorted(nr) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match=r"^\[oar.io.WeightedRandomSampler\]"):
        io.WeightedRandomSampler([1.0, -1.0], 2)
    with pytest.raises(ValueError, match=r"^\[oar.io.WeightedRandomSampler\]"):
        io.WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    s = io.SubsetRandomSampler([10, 20, 30, 40])
    assert sorted(s) == [10, 20, 30, 40] and len(s) == 4


def test_batch_sampler():
    assert list(io.BatchSampler(range(7), batch_size=3)) == [[0, 1, 2], [3, 4, 5], [6]]
    bs = io.BatchSampler(range(7), batch_size=3, drop_last=True)
    assert list(bs) == [[0, 1, 2], [3, 4, 5]] and len(bs) == 2
    assert len(io.BatchSampler(sampler=io.SequenceSampler(range(7)), batch_size=3)) == 3
    with pytest.raises(ValueError, match=r"^\[oar.io.BatchSampler\]"):
        io.BatchSampler(range(3), batch_size=0)
    with pytest.raises(ValueError, match=r"^\[oar.io.BatchSampler\]"):
        io.BatchSampler()
    with pytest.raises(ValueError, match=r"^\[oar.io.BatchSampler\]"):
        io.BatchSampler(sampler=io.SequenceSampler(range(3)), shuffle=True)


@pytest.mark.parametrize("n,bs,nranks", [(10, 2, 2), (11, 3, 3), (5, 4, 4), (2, 1, 3), (17, 4, 2)])
def test_distributed_batch_sampler(n, bs, nranks):
    per_rank = -(-n // nranks)
    got = []
    for r in range(nranks):
        s = io.DistributedBatchSampler(range(n), bs, num_replicas=nranks, rank=r)
        batches = list(s)
        flat = [i for b in batches for i in b]
        assert len(flat) == per_rank  # equal share per rank, padded
        assert len(batches) == len(s) == -(-per_rank // bs)
        assert all(len(b) == bs for b in batches[:-1])
        got += flat
    assert set(got) == set(range(n)) and len(got) == per_rank * nranks
    # the padding repeats the start of the index list
    assert sorted(got) == sorted(list(range(n)) + [i % n for i in range(per_rank * nranks - n)])
    s = io.DistributedBatchSampler(range(n), bs, num_replicas=nranks, rank=0, drop_last=True)
    assert len(list(s)) == len(s) == per_rank // bs


def test_distributed_batch_sampler_shuffle_and_defaults():
    shards = []
    for r in range(2):
        s = io.DistributedBatchSampler(range(20), 5, num_replicas=2, rank=r, shuffle=True)
        s.set_epoch(3)
        shards.append([i for b in s for i in b])
    assert sorted(shards[0] + shards[1]) == list(range(20))  # ranks agree on the permutation
    s = io.DistributedBatchSampler(range(20), 5, num_replicas=1, rank=0, shuffle=True)
    e0, e1 = list(s), list(s)  # each iteration advances the epoch
    assert e0 != e1
    s = io.DistributedBatchSampler(range(6), 4)
    assert s.nranks == 1 and s.local_rank == 0 and list(s) == [[0, 1, 2, 3], [4, 5]]
    with pytest.raises(ValueError, match=r"^\[oar.io.DistributedBatchSampler\]"):
        io.DistributedBatchSampler(range(6), 2, num_replicas=2, rank=2)
    with pytest.raises(ValueError, match=r"^\[oar.io.DistributedBatchSampler\]"):
        io.DistributedBatchSampler(range(6), -1)


# ---------------------------------------------------------------- collation
def test_default_collate_structures():
    batch = [{"a": np.ones((2, 3), np.float32) * i, "b": (i, float(i), "s%d" % i)} for i in range(4)]
    out = io.default_collate_fn(batch)
    np.testing.assert_array_equal(out["a"], np.stack([np.ones((2, 3)) * i for i in range(4)]))
    ints, floats, strs = out["b"]
    assert ints.dtype == np.int64 and floats.dtype == np.float64 and strs == ["s0", "s1", "s2", "s3"]
    t = io.default_collate_fn([oar.to_tensor([1.0, 2.0]), oar.to_tensor([3.0, 4.0])])
    assert isinstance(t, oar.Tensor)
    np.testing.assert_array_equal(t.numpy(), [[1, 2], [3, 4]])
    with pytest.raises(RuntimeError, match=r"^\[oar.io.default_collate_fn\]"):
        io.default_collate_fn([(1, 2), (1,)])
    with pytest.raises(TypeError, match=r"^\[oar.io.default_collate_fn\]"):
        io.default_collate_fn([object()])


def test_loader_outputs_tensors_and_lists():
    batches = list(io.DataLoader(Range(5), batch_size=2))
    assert len(batches) == 3
    x, y = batches[0]
    assert isinstance(batches[0], list) and isinstance(x, oar.Tensor) and x.dtype == oar.float32
    assert y.dtype == oar.int64
    np.testing.assert_array_equal(x.numpy(), [[0, 0], [1, 1]])
    np.testing.assert_array_equal(batches[2][1].numpy(), [4])
    d = list(io.DataLoader([{"k": np.float64(i)} for i in range(3)], batch_size=3))
    assert d[0]["k"].dtype == oar.float64 and d[0]["k"].numpy().tolist() == [0.0, 1.0, 2.0]
    single = list(io.DataLoader(Range(2), batch_size=None))
    assert len(single) == 2 and single[1][1] == 1 and single[1][0].shape == [2]


def test_loader_drop_last_len_and_batch_sampler():
    ld = io.DataLoader(Range(7), batch_size=3, drop_last=True)
    assert len(ld) == 2 and len(list(ld)) == 2
    assert len(io.DataLoader(Range(7), batch_size=3)) == 3
    bs = io.BatchSampler(sampler=io.SequenceSampler(range(7)), batch_size=4)
    got = [b[1].numpy().tolist() for b in io.DataLoader(Range(7), batch_sampler=bs)]
    assert got == [[0, 1, 2, 3], [4, 5, 6]]
    custom = io.DataLoader(Range(4), batch_size=2, collate_fn=lambda s: np.array([v for _, v in s]) * 10)
    assert [b.numpy().tolist() for b in custom] == [[0, 10], [20, 30]]


def test_loader_bad_arguments():
    for kw in [dict(batch_size=0), dict(batch_size=-2), dict(num_workers=-1), dict(prefetch_factor=0),
               dict(timeout=-1), dict(batch_sampler=io.BatchSampler(range(3)), batch_size=2),
               dict(batch_sampler=io.BatchSampler(range(3)), shuffle=True), dict(collate_fn=3)]:
        with pytest.raises(ValueError, match=r"^\[oar.io.DataLoader\]"):
            io.DataLoader(Range(3), **kw)


def test_shuffle_reproducible_with_seed():
    def epoch():
        return [b[1].numpy().tolist() for b in io.DataLoader(Range(20), batch_size=4, shuffle=True)]

    oar.seed(123)
    a = epoch()
    oar.seed(123)
    b = epoch()
    c = epoch()
    assert a == b and a != c
    assert sorted(i for bt in a for i in bt) == list(range(20))


# ---------------------------------------------------------------- workers
def test_workers_same_order_as_single_process():
    for shuffle in (False, True):
        oar.seed(7)
        ref = batches_np(io.DataLoader(Range(23), batch_size=4, shuffle=shuffle))
        oar.seed(7)
        got = batches_np(io.DataLoader(Range(23), batch_size=4, shuffle=shuffle, num_workers=2))
        assert len(ref) == len(got) == 6
        for r, g in zip(ref, got):
            for a, b in zip(r, g):
                np.testing.assert_array_equal(a, b)


def test_workers_drop_last_and_prefetch():
    ld = io.DataLoader(Range(10), batch_size=3, drop_last=True, num_workers=3, prefetch_factor=1)
    got = [b[1].numpy().tolist() for b in ld]
    assert got == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    single = [b[1] for b in io.DataLoader(Range(3), batch_size=None, num_workers=2)]
    assert [int(v) for v in single] == [0, 1, 2]


class TensorOps(io.Dataset):
    """Builds samples with multi-threaded oar kernels inside the worker."""

    def __getitem__(self, i):
        a = oar.full([300, 300], float(i))
        return (a.matmul(a) / 300.0).sum(axis=0)[:2], oar.to_tensor(i)

    def __len__(self):
        return 4


def test_workers_with_oar_tensors_after_parent_used_threads():
    x = oar.rand([1000, 1000])
    (x.matmul(x) + 1).sum()  # warm the parent's OpenMP pool before forking
    got = [(a.numpy(), b.numpy()) for a, b in io.DataLoader(TensorOps(), batch_size=2, num_workers=2)]
    np.testing.assert_allclose(got[1][0], [[4 * 300.0, 4 * 300.0], [9 * 300.0, 9 * 300.0]], rtol=1e-5)
    np.testing.assert_array_equal(got[1][1], [2, 3])


class Failing(io.Dataset):
    def __getitem__(self, i):
        if i == 5:
            raise KeyError("bad sample five")
        return np.float32(i)

    def __len__(self):
        return 8


def test_worker_exception_reraised_with_traceback():
    with pytest.raises(KeyError) as ei:
        list(io.DataLoader(Failing(), batch_size=2, num_workers=2))
    msg = str(ei.value)
    assert "worker 0" in msg and "bad sample five" in msg and "Traceback" in msg and "__getitem__" in msg


class Dying(io.Dataset):
    def __init__(self, how):
        self.how = how

    def __getitem__(self, i):
        if i == 3:
            if self.how == "exit":
                os._exit(3)
            os.kill(os.getpid(), signal.SIGKILL)
        return np.float32(i)

    def __len__(self):
        return 8


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_dead_worker_raises_quickly(how):
    t0 = time.monotonic()
    it = iter(io.DataLoader(Dying(how), batch_size=1, num_workers=2))
    with pytest.raises(RuntimeError, match=r"^\[oar.io.DataLoader\] worker 1"):
        for _ in it:
            pass
    assert time.monotonic() - t0 < 10
    assert all(not w.is_alive() for w in it._workers)


class Slow(io.Dataset):
    def __getitem__(self, i):
        if i >= 2:
            time.sleep(30)
        return np.float32(i)

    def __len__(self):
        return 4


def test_timeout():
    t0 = time.monotonic()
    it = iter(io.DataLoader(Slow(), batch_size=1, num_workers=2, timeout=1))
    assert float(next(it)) == 0.0
    assert float(next(it)) == 1.0
    with pytest.raises(RuntimeError, match=r"^\[oar.io.DataLoader\] no batch arrived"):
        next(it)
    assert time.monotonic() - t0 < 10
    assert all(not w.is_alive() for w in it._workers)


class Sharded(io.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = io.get_worker_info()
        wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(wid, self.n, nw):
            yield np.int64(i)


def test_iterable_dataset_with_workers():
    assert [b.numpy().tolist() for b in io.DataLoader(Sharded(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    got = [b.numpy().tolist() for b in io.DataLoader(Sharded(11), batch_size=2, num_workers=3)]
    flat = sorted(i for b in got for i in b)
    assert flat == list(range(11))
    # each batch comes from one worker's shard
    assert all(len({v % 3 for v in b}) == 1 for b in got)
    got = [b.numpy().tolist() for b in io.DataLoader(Sharded(11), batch_size=2, num_workers=3, drop_last=True)]
    assert all(len(b) == 2 for b in got) and len(got) == 5  # shards of 4, 4, 3 samples
    one = sorted(int(v) for v in io.DataLoader(Sharded(5), batch_size=None, num_workers=2))
    assert one == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match=r"^\[oar.io.DataLoader\]"):
        io.DataLoader(Sharded(3), shuffle=True)
    with pytest.raises(TypeError, match=r"^\[oar.io.DataLoader\]"):
        len(io.DataLoader(Sharded(3)))


class Info(io.Dataset):
    def __getitem__(self, i):
        info = io.get_worker_info()
        return np.array([info.id, info.num_workers, info.seed % 1000003, np.random.randint(1 << 30),
                         int(oar.randint(0, 1 << 30, [1]).numpy()[0]), _init_marks.get(info.id, -1)])

    def __len__(self):
        return 6


_init_marks = {}


def _init(worker_id):
    _init_marks[worker_id] = 100 + worker_id


def test_worker_info_seeds_and_init_fn():
    assert io.get_worker_info() is None
    rows = np.concatenate([b.numpy() for b in io.DataLoader(Info(), batch_size=1, num_workers=2,
                                                             worker_init_fn=_init)])
    assert rows[:, 0].tolist() == [0, 1, 0, 1, 0, 1]  # round-robin task assignment
    assert (rows[:, 1] == 2).all()
    assert (rows[:, 5] == 100 + rows[:, 0]).all()
    for col in (2, 3, 4):  # seeds and seeded draws differ between workers
        assert rows[0, col] != rows[1, col]
    assert _init_marks == {}  # ran in the workers only


def test_worker_init_fn_error():
    def bad(worker_id):
        raise ValueError("init broke")

    with pytest.raises(ValueError, match="worker_init_fn") as ei:
        list(io.DataLoader(Range(4), batch_size=2, num_workers=1, worker_init_fn=bad))
    assert "init broke" in str(ei.value)


def test_workers_shut_down_after_exhaustion_and_delete():
    it = iter(io.DataLoader(Range(6), batch_size=2, num_workers=2))
    workers = list(it._workers)
    assert len(list(it)) == 3
    assert all(not w.is_alive() for w in workers)
    it = iter(io.DataLoader(Range(100), batch_size=2, num_workers=2))
    next(it)
    workers = list(it._workers)
    del it
    t0 = time.monotonic()
    while any(w.is_alive() for w in workers) and time.monotonic() - t0 < 5:
        time.sleep(0.05)
    assert all(not w.is_alive() for w in workers)
