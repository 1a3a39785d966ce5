"""Winograd 3x3 convolutions in the inference runtime (Note [winograd convolution]).

The runtime runs float32 3x3 stride-1 convolutions of 32 channels and more as
oneDNN's Winograd kernels where the CPU has them (AVX-512), unless
Config.switch_winograd_conv(False). Checked here: which convolutions take it
(oneDNN's verbose log of a child process names the kernel that ran), accuracy
against a float64 NumPy reference next to the direct algorithm's, and
predictors running one Winograd primitive from several threads at once.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import oar
from oar.inference import Config, create_predictor
from oar.static import InputSpec
from dist_util import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _has_avx512_core():
    """oneDNN's Winograd kernels need AVX-512 F, BW, VL and DQ ("avx512_core")."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((ln.split() for ln in f if ln.startswith("flags")), [])
    except OSError:
        return False
    return {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags)


AVX512 = _has_avx512_core()


class Stack(oar.nn.Layer):
    """3x3 convolutions with biases and ReLUs; `ch` channels in and out."""

    def __init__(self, ch, depth=3):
        super().__init__()
        self.convs = oar.nn.LayerList([oar.nn.Conv2D(ch, ch, 3, padding=1) for _ in range(depth)])

    def forward(self, x):
        for k, c in enumerate(self.convs):
            x = c(x)
            if k + 1 < len(self.convs):
                x = oar.nn.functional.relu(x)
        return x


def _reference(net, x):
    """The stack in float64 NumPy: padded windows times the weights."""
    y = x.astype("float64")
    for k, c in enumerate(net.convs):
        w, b = c.weight.numpy().astype("float64"), c.bias.numpy().astype("float64")
        p = np.pad(y, ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = np.lib.stride_tricks.sliding_window_view(p, (3, 3), axis=(2, 3))  # N, C, H, W, 3, 3
        y = np.einsum("nchwij,ocij->nohw", win, w) + b[None, :, None, None]
        if k + 1 < len(net.convs):
            y = np.maximum(y, 0)
    return y


def _save(tmp_path, ch, hw):
    oar.seed(3)
    net = Stack(ch)
    net.eval()
    prefix = str(tmp_path / f"stack{ch}")
    oar.jit.save(net, prefix, input_spec=[InputSpec([None, ch, hw, hw], "float32", "x")])
    return net, prefix


def _predictor(prefix, winograd=True, threads=0):
    c = Config(prefix)
    c.switch_winograd_conv(winograd)
    if threads:
        c.set_cpu_math_library_num_threads(threads)
    return create_predictor(c)


def _rel_err(got, ref):
    return float(np.abs(got.astype("float64") - ref).max() / np.abs(ref).max())


def _kernels(prefix, batch, ch, hw, winograd):
    """The oneDNN convolution kernels one run of the saved stack executes (child process, verbose log)."""
    code = textwrap.dedent(f"""
        import numpy as np
        from oar.inference import Config, create_predictor
        c = Config({prefix!r})
        c.switch_winograd_conv({winograd!r})
        p = create_predictor(c)
        p.run([np.ones(({batch}, {ch}, {hw}, {hw}), "float32")])
    """)
    env = child_env(DNNL_VERBOSE="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return [ln.split(",")[4] for ln in r.stdout.splitlines() if ln.startswith("onednn_verbose,exec,cpu,convolution")]


def test_config_switch_and_summary():
    c = Config("m")
    assert c.winograd_conv() is True
    c.switch_winograd_conv(False)
    assert c.winograd_conv() is False and "winograd_conv: False" in c.summary()


@pytest.mark.parametrize("batch", [1, 16])
def test_winograd_runs_where_it_fits(tmp_path, batch):
    _, prefix = _save(tmp_path, 32, 16)
    on = _kernels(prefix, batch, 32, 16, True)
    off = _kernels(prefix, batch, 32, 16, False)
    assert len(on) == len(off) == 3, (on, off)
    assert not any("wino" in k for k in off), off
    if AVX512:
        assert all("wino" in k for k in on), on
    else:  # no Winograd kernel: the direct one, silently
        assert on == off
    # Too few channels, or too few output pixels (a 7x7 output at batch 1): the direct kernels.
    _, small = _save(tmp_path, 16, 16)
    assert not any("wino" in k for k in _kernels(small, batch, 16, 16, True))
    if batch == 1:
        _, tiny = _save(tmp_path, 32, 7)
        assert not any("wino" in k for k in _kernels(tiny, 1, 32, 7, True))


@pytest.mark.parametrize("batch", [1, 16])
def test_winograd_as_accurate_as_direct(tmp_path, batch):
    net, prefix = _save(tmp_path, 64, 14)
    x = np.random.default_rng(batch).standard_normal((batch, 64, 14, 14)).astype("float32")
    ref = _reference(net, x)
    [wino] = _predictor(prefix, winograd=True).run([x])
    [direct] = _predictor(prefix, winograd=False).run([x])
    e_wino, e_direct = _rel_err(wino, ref), _rel_err(direct, ref)
    # float32's tolerance against the exact result, and no worse than a few times the direct algorithm.
    assert e_direct <= 1e-5, e_direct
    assert e_wino <= 1e-5 and e_wino <= 4 * e_direct + 1e-6, (e_wino, e_direct)


def test_winograd_predictors_in_threads(tmp_path):
    # Several threads run clones of one predictor (one Winograd primitive) at once;
    # oneDNN's own scratchpad crashed the process here.
    net, prefix = _save(tmp_path, 32, 16)
    x = np.random.default_rng(5).standard_normal((16, 32, 16, 16)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "ref.npy", _reference(net, x))
    code = textwrap.dedent(f"""
        import threading
        import numpy as np
        from oar.inference import Config, create_predictor
        x, ref = np.load({str(tmp_path / "x.npy")!r}), np.load({str(tmp_path / "ref.npy")!r})
        c = Config({prefix!r})
        c.set_cpu_math_library_num_threads(2)
        p = create_predictor(c)
        errors = []

        def work(pred, batch):
            for _ in range(150):
                [y] = pred.run([x[:batch]])
                err = np.abs(y - ref[:batch]).max() / np.abs(ref[:batch]).max()
                if not err <= 1e-5:
                    errors.append(err)

        ts = [threading.Thread(target=work, args=(p.clone(), b)) for b in (16, 16, 2, 2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        print("errors", errors)
        assert not errors
    """)
    env = child_env()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
