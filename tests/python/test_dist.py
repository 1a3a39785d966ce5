"""oar.distributed on real ranks (OpenMPI processes on this machine)."""
import os
import re
import subprocess
import sys

import pytest

import oar
from dist_util import ROOT, SCRIPTS, child_env, ranks_ok, run_ranks

pytestmark = pytest.mark.skipif(not oar.distributed.is_available(), reason="oar was built without MPI")


@pytest.mark.parametrize("n", [2, 4])
def test_collectives(n):
    found = ranks_ok(run_ranks(n, "collectives.py"), n, r"rank (\d+): (\d+) checks passed")
    assert sorted(int(r) for r, _ in found) == list(range(n))
    assert all(int(c) > 50 for _, c in found)


def test_timeout_names_the_collective_and_ranks():
    p = run_ranks(2, "failures.py", "timeout", timeout=60)
    out = p.stdout + p.stderr
    m = re.search(r"rank 0: TimeoutError after ([\d.]+)s: (.*)", p.stdout)
    assert m, out[-3000:]
    assert 1.5 < float(m.group(1)) < 10, m.group(0)
    msg = m.group(2)
    assert msg.startswith("[oar.distributed.all_reduce] timed out after 2 s") and "[0, 1]" in msg, msg
    assert "collective #2" in msg, msg


def test_dead_peer_is_reported_not_hung():
    p = run_ranks(3, "failures.py", "dead", timeout=60)
    out = p.stdout + p.stderr
    for r in (0, 2):
        m = re.search(rf"rank {r}: RuntimeError after ([\d.]+)s: (.*)", p.stdout)
        assert m, out[-3000:]
        assert float(m.group(1)) < 10, m.group(0)
        assert "[oar.distributed.all_reduce] rank 1 died" in m.group(2) and "[0, 1, 2]" in m.group(2), m.group(2)
    # (mpirun itself exits 0 here: the launcher reports the failing rank's code)


@pytest.mark.parametrize("n", [2, 4])
def test_data_parallel_matches_one_process(n):
    ranks_ok(run_ranks(n, "dp_parity.py", "plain"), 2 * n, r"parity ok")


@pytest.mark.parametrize("mode", ["no_sync", "unused"])
def test_data_parallel_no_sync_and_unused_parameters(mode):
    ranks_ok(run_ranks(2, "dp_parity.py", mode), 2, r"parity ok")


def test_single_process_job():
    # Under mpirun with one rank, and without any launcher (no MPI at all).
    ranks_ok(run_ranks(1, "collectives.py"), 1, r"rank 0: \d+ checks passed")
    env = child_env()
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "collectives.py")], capture_output=True, text=True,
                       timeout=120, env=env)
    ranks_ok(p, 1, r"rank 0: \d+ checks passed")


@pytest.mark.parametrize("n", [2, 4])
def test_semi_auto_parallel(n):
    # Every reshard conversion (1-d mesh; 2x2 mesh on 4 ranks), ops on
    # distributed tensors, and an MLP under dp, mp and dp x mp against one process.
    found = ranks_ok(run_ranks(n, "auto_parallel.py"), n, r"rank (\d+): (\d+) auto-parallel checks passed")
    assert all(int(c) > (40 if n == 2 else 300) for _, c in found)


@pytest.mark.parametrize("n", [2, 4])
def test_manual_tensor_parallel_layers(n):
    # VocabParallelEmbedding, Column/RowParallelLinear and ParallelCrossEntropy:
    # loss and every weight gradient equal a plain model over 4 SGD steps.
    ranks_ok(run_ranks(n, "mp_layers.py"), n, r"rank \d+: 28 mp-layer checks passed")
