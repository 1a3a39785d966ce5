"""DataLoader(persistent_workers=True): workers survive epochs and are reused."""
import gc
import os
import signal
import time

import numpy as np
import pytest

import oar
from oar.io import DataLoader, Dataset, IterableDataset, get_worker_info


class PidDataset(Dataset):
    def __init__(self, n=23):
        self.n = n

    def __getitem__(self, i):
        return np.array([i, os.getpid()], dtype=np.int64)

    def __len__(self):
        return self.n


class SlowPidDataset(PidDataset):
    def __getitem__(self, i):
        time.sleep(0.01)
        return super().__getitem__(i)


class PidStream(IterableDataset):
    """Each worker yields its share of range(n) with its pid."""

    def __init__(self, n=14):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(wid, self.n, nw):
            yield np.array([i, os.getpid()], dtype=np.int64)


def _epoch(loader, limit=None):
    idx, pids = [], set()
    for k, b in enumerate(loader):
        if limit is not None and k == limit:
            break
        a = b.numpy().reshape(-1, 2)
        idx.extend(a[:, 0].tolist())
        pids.update(a[:, 1].tolist())
    return idx, pids


@pytest.mark.parametrize("shuffle", [False, True])
def test_workers_reused_across_epochs(shuffle):
    oar.seed(3)
    ds = PidDataset()
    loader = DataLoader(ds, batch_size=4, shuffle=shuffle, num_workers=2, persistent_workers=True)
    assert len(loader) == 6
    orders, pid_sets = [], []
    for _ in range(3):
        idx, pids = _epoch(loader)
        assert sorted(idx) == list(range(len(ds)))  # every sample exactly once per epoch
        orders.append(idx)
        pid_sets.append(pids)
        assert len(loader) == 6
    assert os.getpid() not in pid_sets[0] and len(pid_sets[0]) == 2
    assert pid_sets[0] == pid_sets[1] == pid_sets[2]
    if shuffle:
        assert orders[0] != orders[1] or orders[1] != orders[2]
    else:
        assert orders[0] == orders[1] == list(range(len(ds)))


def test_workers_restarted_without_persistence():
    ds = PidDataset()
    loader = DataLoader(ds, batch_size=4, num_workers=2)
    idx1, pids1 = _epoch(loader)
    idx2, pids2 = _epoch(loader)
    assert sorted(idx1) == sorted(idx2) == list(range(len(ds)))
    assert len(pids1) == 2 and not pids1 & pids2


def test_shuffle_order_matches_single_process():
    # persistent workers deliver batches in sampler order: the same seed gives the same epochs
    ds = PidDataset()
    oar.seed(5)
    single = [_epoch(DataLoader(ds, batch_size=3, shuffle=True))[0] for _ in range(1)]
    oar.seed(5)
    loader = DataLoader(ds, batch_size=3, shuffle=True, num_workers=2, persistent_workers=True)
    multi = [_epoch(loader)[0]]
    assert single == multi


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_break_early_then_new_epoch(limit):
    ds = SlowPidDataset(30)
    loader = DataLoader(ds, batch_size=2, num_workers=3, persistent_workers=True, prefetch_factor=3)
    idx, pids0 = _epoch(loader, limit=limit)
    assert idx == list(range(2 * limit))
    for _ in range(2):
        idx, pids = _epoch(loader)
        assert idx == list(range(30))  # nothing stale from the abandoned epoch
        assert len(pids) == 3 and pids0 <= pids


def test_iterator_object_and_stop():
    loader = DataLoader(PidDataset(5), batch_size=2, num_workers=2, persistent_workers=True)
    it = iter(loader)
    assert len(list(it)) == 3
    with pytest.raises(StopIteration):
        next(it)  # an ended epoch stays ended until iter(loader) is called again
    assert len(list(iter(loader))) == 3


def test_iterable_dataset_epochs():
    loader = DataLoader(PidStream(14), batch_size=3, num_workers=2, persistent_workers=True)
    pid_sets = []
    for _ in range(3):
        idx, pids = _epoch(loader)
        assert sorted(idx) == list(range(14))
        pid_sets.append(pids)
    assert pid_sets[0] == pid_sets[1] == pid_sets[2] and len(pid_sets[0]) == 2
    idx, _ = _epoch(loader, limit=1)
    assert len(idx) == 3
    idx, _ = _epoch(loader)
    assert sorted(idx) == list(range(14))


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped) counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pids, seconds=10.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def test_workers_stop_when_loader_is_collected():
    loader = DataLoader(PidDataset(8), batch_size=2, num_workers=2, persistent_workers=True)
    _, pids = _epoch(loader)
    assert all(_alive(p) for p in pids)  # still running between epochs
    del loader
    gc.collect()
    assert _wait_gone(pids)


def test_crashed_worker_raises_and_next_epoch_restarts():
    ds = SlowPidDataset(40)
    loader = DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True, timeout=30)
    _, pids = _epoch(loader)
    victim = sorted(pids)[0]
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(RuntimeError, match=r"^\[oar.io.DataLoader\] worker \d \(pid \d+\) was killed by signal 9"):
        _epoch(loader)
    assert _wait_gone(pids)
    idx, new_pids = _epoch(loader)  # a fresh set of workers
    assert idx == list(range(40)) and not new_pids & pids


def test_worker_exception_keeps_workers():
    class Flaky(PidDataset):
        def __getitem__(self, i):
            if i == 5:
                raise KeyError("bad five")
            return super().__getitem__(i)

    loader = DataLoader(Flaky(12), batch_size=2, num_workers=2, persistent_workers=True)
    for _ in range(2):
        with pytest.raises(KeyError, match="bad five"):
            _epoch(loader)
    idx, _ = _epoch(loader, limit=1)  # the batch after the limit is fetched too, so stop before index 5
    assert idx == [0, 1]


def test_persistent_without_workers_is_single_process():
    loader = DataLoader(PidDataset(5), batch_size=2, persistent_workers=True)
    idx, pids = _epoch(loader)
    assert idx == list(range(5)) and pids == {os.getpid()}


def test_workers_stop_at_interpreter_exit(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "run.py"
    script.write_text(
        "import os, numpy as np\n"
        "from oar.io import DataLoader, Dataset\n"
        "class D(Dataset):\n"
        "    def __getitem__(self, i):\n"
        "        return np.array([os.getpid()])\n"
        "    def __len__(self):\n"
        "        return 6\n"
        "LOADER = DataLoader(D(), batch_size=2, num_workers=2, persistent_workers=True)\n"
        "pids = {int(p) for b in LOADER for p in b.numpy().reshape(-1)}\n"
        "print(' '.join(map(str, sorted(pids))), flush=True)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert res.returncode == 0, res.stderr
    pids = [int(p) for p in res.stdout.split()]
    assert len(pids) == 2
    assert _wait_gone(pids)
