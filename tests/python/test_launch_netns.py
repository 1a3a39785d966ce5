"""Ranks on different hosts talk over the network: two hosts are two network namespaces.

Each "host" is a network namespace on this machine with one interface (a veth pair
joins the two, 10.77.0.1 and 10.77.0.2) and its own hostname. The launcher runs in the
first one with a host file naming both addresses; mpirun starts the second host's
ranks through tests/dist/netns_agent.sh (its stand-in for ssh), and MPI may use TCP
over those interfaces only (no shared-memory shortcut between the hosts).
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from dist_util import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AGENT = os.path.join(ROOT, "tests", "dist", "netns_agent.sh")
SUBNET = "10.77.0.0/24"
IPS = ("10.77.0.1", "10.77.0.2")
TAG = "[oar.distributed.launch]"

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None,
                                reason="mpirun is not installed (Debian: openmpi-bin)")


def _ip(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture(scope="module")
def hosts():
    """Two namespaces joined by a veth pair; removed afterwards even when a test fails."""
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            pytest.skip(f"'{tool}' is not installed (Debian: iproute2 / util-linux)")
    tag = str(os.getpid() % 100000)  # unique per test worker; names stay under 15 chars
    names = [f"oarns{tag}{c}" for c in "ab"]
    veths = [f"oarv{tag}{c}" for c in "ab"]
    made = []
    for ns in names:  # left over by a killed run that had the same process id
        _ip("netns", "del", ns)
    _ip("link", "del", veths[0])
    try:
        for ns in names:
            r = _ip("netns", "add", ns)
            if r.returncode != 0:
                pytest.skip(f"cannot create network namespaces here (needs root or CAP_NET_ADMIN): "
                            f"'ip netns add' said: {r.stderr.strip()}")
            made.append(ns)
        steps = [["link", "add", veths[0], "type", "veth", "peer", "name", veths[1]]]
        for ns, veth, ip in zip(names, veths, IPS):
            steps += [["link", "set", veth, "netns", ns],
                      ["-n", ns, "link", "set", veth, "name", "eth0"],
                      ["-n", ns, "addr", "add", f"{ip}/24", "dev", "eth0"],
                      ["-n", ns, "link", "set", "eth0", "up"],
                      ["-n", ns, "link", "set", "lo", "up"]]
        for step in steps:
            r = _ip(*step)
            assert r.returncode == 0, f"ip {' '.join(step)}: {r.stderr}"
        yield list(zip(IPS, names, [f"oarhost{tag}{c}" for c in "ab"]))
    finally:
        for ns in made:
            _ip("netns", "del", ns)  # takes the veth ends inside with it
        _ip("link", "del", veths[0])  # only there when a step above failed


def launch_on(hosts, tmp_path, script_body, extra=(), timeout=120):
    """Runs the launcher on the first host with 2 ranks per host; returns (rc, stdout, stderr)."""
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"{ip} slots=2\n" for ip, _, _ in hosts))
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(script_body))
    mpi_args = (f"--mca plm_rsh_agent 'sh {AGENT}' --mca pml ob1 --mca btl tcp,self "
                f"--mca btl_tcp_if_include {SUBNET} --mca oob_tcp_if_include {SUBNET}")
    env = dict(os.environ, OAR_NETNS_HOSTS=" ".join("=".join(h) for h in hosts),
               PYTHONPATH=child_env()["PYTHONPATH"])
    env.pop("OMP_NUM_THREADS", None)
    ip, ns, name = hosts[0]
    cmd = ["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', name,
           sys.executable, "-m", "oar.distributed.launch", "--nproc_per_node", "2",
           "--hostfile", str(hostfile), "--mpi_args", mpi_args, *extra, str(script)]
    p = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def _per_rank(out, marker):
    found = {}
    for line in out.splitlines():
        if marker in line:
            prefix, payload = line.split(marker, 1)
            found[int(prefix[len("[rank "):-2])] = json.loads(payload)
    return found


WHERE = """
    import json, os, socket
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("10.77.0.1", 9))  # no packet is sent: this only picks the outgoing address
    print("WHERE " + json.dumps({"ip": s.getsockname()[0], "host": socket.gethostname(),
                                 "netns": os.readlink("/proc/self/ns/net"),
                                 "env": {k: v for k, v in os.environ.items() if k.startswith("PADDLE_")}}))
"""


def test_ranks_on_two_hosts(hosts, tmp_path):
    rc, out, err = launch_on(hosts, tmp_path, WHERE)
    assert rc == 0, err
    where = _per_rank(out, "WHERE ")
    assert sorted(where) == [0, 1, 2, 3]
    for r, w in where.items():
        ip, _, name = hosts[r // 2]  # ranks fill the first host, then the second
        assert w["ip"] == ip and w["host"] == name
        assert w["env"]["PADDLE_TRAINER_ID"] == str(r) and w["env"]["PADDLE_TRAINERS_NUM"] == "4"
        assert w["env"]["PADDLE_RANK_IN_NODE"] == str(r % 2) and w["env"]["PADDLE_LOCAL_SIZE"] == "2"
        assert w["env"]["PADDLE_NNODES"] == "2"
    assert where[0]["netns"] == where[1]["netns"] != where[2]["netns"] == where[3]["netns"]


def test_failure_on_the_remote_host(hosts, tmp_path):
    rc, out, err = launch_on(hosts, tmp_path, """
        import os, sys, time
        if os.environ["PADDLE_TRAINER_ID"] == "3":
            sys.exit(5)
        time.sleep(60)
    """, extra=["--grace", "1"], timeout=60)
    assert rc == 5, err
    assert f"{TAG} rank 3 exited with code 5; stopping ranks 0, 1, 2" in err


def test_all_reduce_across_hosts(hosts, tmp_path):
    rc, out, err = launch_on(hosts, tmp_path, """
        import json, socket
        import numpy as np
        import oar
        import oar.distributed as dist

        dist.init_parallel_env()
        rank, world = dist.get_rank(), dist.get_world_size()
        x = oar.to_tensor(np.arange(4, dtype="float64") + 10 * rank)
        dist.all_reduce(x)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect(("10.77.0.1", 9))
        ips = []
        dist.all_gather_object(ips, s.getsockname()[0])
        dist.barrier()
        print("RESULT " + json.dumps({"rank": rank, "world": world, "sum": x.numpy().tolist(),
                                      "ips": ips}))
    """)
    assert rc == 0, err
    results = _per_rank(out, "RESULT ")
    assert sorted(results) == [0, 1, 2, 3]
    expected = (4 * np.arange(4) + 10 * sum(range(4))).tolist()
    for r, res in results.items():
        assert res["rank"] == r and res["world"] == 4
        np.testing.assert_allclose(res["sum"], expected, rtol=0, atol=0)
        # Every rank learnt every rank's address: two ranks on each host.
        assert res["ips"] == [IPS[0], IPS[0], IPS[1], IPS[1]]
