"""The programs in examples/ that `make demo` runs, end to end."""
import os
import subprocess
import sys
from dist_util import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(script, *args):
    env = child_env()
    return subprocess.run([sys.executable, os.path.join(ROOT, "examples", script), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def test_digits_demo_trains_reloads_and_serves(tmp_path):
    r = _run("train_digits.py", "--out", str(tmp_path))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    acc = [float(line.rsplit(" ", 1)[1]) for line in r.stdout.splitlines() if line.startswith("held-out accuracy")]
    assert acc and acc[0] >= 0.97
    assert "logits equal to eager" in r.stdout
    assert (tmp_path / "digits_cnn.json").exists() and (tmp_path / "digits_cnn.pdparams").exists()


def test_eager_demo_matches_its_closed_forms():
    r = _run("eager_demo.py")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    line = next(x for x in r.stdout.splitlines() if x.startswith("third derivative of tanh"))
    got, closed = float(line.split(":")[1].split()[0]), float(line.rsplit(" ", 1)[1].rstrip(")"))
    assert abs(got - closed) < 1e-8
