"""oar.distributed on a plugin device: custom_cpu's collectives (plugins/custom_cpu/collective.cpp)
across real processes, through the plugin process group (src/dist/plugin_group.cpp)."""
import os
import re
import subprocess
import sys

import pytest

import oar
from conftest import CUSTOM_CPU, REPO
from dist_util import SCRIPTS, child_env, ranks_ok, run_ranks

pytestmark = pytest.mark.skipif(not oar.distributed.is_available(), reason="oar was built without MPI")

MINIMAL = os.path.join(os.path.dirname(CUSTOM_CPU), "testing", "liboar_minimal_c.so")


def test_collectives_on_two_ranks_equal_numpy(tmp_path):
    p = run_ranks(2, "custom_device.py", "collectives", env={"CUSTOM_CPU_COMM_DIR": str(tmp_path)})
    found = ranks_ok(p, 2, r"rank (\d+): (\d+) custom_cpu checks passed")
    assert sorted(int(r) for r, _ in found) == [0, 1]
    assert all(int(c) >= 20 for _, c in found)
    assert os.listdir(tmp_path) == []  # comm_destroy removed the communicator's folder


def test_data_parallel_on_two_ranks_matches_one_process():
    ranks_ok(run_ranks(2, "custom_device.py", "dp"), 2, r"custom_cpu dp parity ok")


def test_a_missing_rank_fails_the_collective_by_its_timeout():
    p = run_ranks(2, "custom_device.py", "timeout", timeout=60, env={"CUSTOM_CPU_COMM_TIMEOUT": "2"})
    m = re.search(r"rank 0: RuntimeError after ([\d.]+)s: (.*)", p.stdout)
    assert m, (p.stdout + p.stderr)[-3000:]
    assert 1.5 < float(m.group(1)) < 10, m.group(0)
    assert m.group(2).startswith("[oar.distributed.all_reduce] all_reduce of custom_cpu:0 on the ranks [0, 1] failed: "
                                 "custom_cpu all_reduce #3 (rank 0 of 2): rank 1 did not join within 2 s"), m.group(2)


def test_single_process_job():
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "custom_device.py"), "collectives"],
                       capture_output=True, text=True, timeout=120, env=child_env())
    ranks_ok(p, 1, r"rank 0: \d+ custom_cpu checks passed")


def test_a_plugin_without_collectives_is_named():
    code = """
import numpy as np, oar, oar.distributed as dist
dist.init_parallel_env()
x = oar.to_tensor(np.ones(3, "float32"), place="minimal_c")
try:
    dist.all_reduce(x)
except NotImplementedError as e:
    print(e)
"""
    env = child_env(OAR_PLUGIN_PATH=os.pathsep.join([CUSTOM_CPU, MINIMAL]))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("[oar.distributed] collectives on minimal_c:0 tensors need the collective entries "
                               "of its plugin"), p.stdout
