"""The op fuzzer's short deterministic pass (tests/fuzz/fuzz_ops.py --quick):
every public function and Tensor method, each argument replaced in turn by
each quick argument class, in a child process. Fails on any crash, hang,
memory blow-up or error message that does not name the API."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FUZZER = os.path.join(HERE, "..", "fuzz", "fuzz_ops.py")


def test_op_fuzzer_quick_pass_is_clean():
    p = subprocess.run([sys.executable, FUZZER, "--quick", "--timeout", "20"], capture_output=True, text=True,
                       timeout=1500)
    print(p.stdout[-20000:])
    assert "targets x" in p.stdout, p.stderr[-4000:]
    assert p.returncode == 0, "\n".join(line for line in p.stdout.splitlines() if line.startswith("FAIL"))[:20000]


def test_op_fuzzer_reports_a_failure():
    # The harness itself must be able to fail: a target that raises an
    # unnamed error is reported (oar.Tensor.item on a 2-element tensor is
    # fine; a deliberately broken target is injected through --selftest).
    p = subprocess.run([sys.executable, FUZZER, "--selftest"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 1, p.stdout[-4000:] + p.stderr[-4000:]
    for what in ("message does not start with [oar.<api>]", "crash: killed by SIGSEGV", "hang: no answer",
                 "memory blow-up"):
        assert what in p.stdout, (what, p.stdout[-4000:])


def test_loader_fuzzer_quick_pass_is_clean():
    fuzzer = os.path.join(HERE, "..", "fuzz", "fuzz_loaders.py")
    p = subprocess.run([sys.executable, fuzzer, "--quick", "--timeout", "20"], capture_output=True, text=True,
                       timeout=1500)
    print(p.stdout[-20000:])
    assert "cases over" in p.stdout, p.stderr[-4000:]
    # both outcomes occur: mutated files are refused, and some still load and run
    counts = p.stdout.split("cases over")[1]
    assert " 0 loaded" not in counts and " 0 refused" not in counts, p.stdout[:2000]
    assert p.returncode == 0, "\n".join(line for line in p.stdout.splitlines() if line.startswith("FAIL"))[:20000]
