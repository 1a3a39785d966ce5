"""pocketfft through numpy.fft and scipy.fft (one worker): the reference rows of
the FFT library table that benchmarks/fft_libs.cpp prints for oneMKL and KissFFT;
and the FFTs of oar, torch and paddle on the same cases, for those that import
(oar from .venv, torch and paddle from .venv-peers).

Run: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/fft_pocketfft.py
     OMP_NUM_THREADS=1 .venv-peers/bin/python benchmarks/fft_pocketfft.py

Times are medians of one call in microseconds and include the Python call
(about 1-3 us), which matters only for the smallest cases.
"""
import importlib
import time
import warnings

import numpy as np

CASES = [("1024", (1024,)), ("4096", (4096,)), ("1009 (prime)", (1009,)), ("4099 (prime)", (4099,)),
         ("1000", (1000,)), ("1536", (1536,)), ("256 x 1024 batch", (256, 1024)), ("512x512 (2-D)", (512, 512)),
         ("64^3 (3-D)", (64, 64, 64))]


def median_us(f):
    f()
    t0 = time.perf_counter()
    f()
    once = time.perf_counter() - t0
    reps = min(20000, max(5, int(0.2 / max(once, 1e-7))))
    ts = []
    for _ in range(reps):
        a = time.perf_counter()
        f()
        ts.append(time.perf_counter() - a)
    ts.sort()
    return ts[len(ts) // 2] * 1e6


def _frameworks():
    """(column, to_tensor, fftn, rfftn) for each framework that imports."""
    out = [("numpy.fft", lambda a: a, lambda x, ax: np.fft.fftn(x, axes=ax), lambda x, ax: np.fft.rfftn(x, axes=ax))]
    try:
        import scipy.fft
        out.append(("scipy.fft", lambda a: a, lambda x, ax: scipy.fft.fftn(x, axes=ax, workers=1),
                    lambda x, ax: scipy.fft.rfftn(x, axes=ax, workers=1)))
    except ImportError:
        pass
    for name in ("oar", "torch", "paddle"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = importlib.import_module(name)
        except ImportError:
            continue
        if name == "torch":
            m.set_num_threads(1)
            out.append(("torch.fft", m.from_numpy, lambda x, ax, m=m: m.fft.fftn(x, dim=ax),
                        lambda x, ax, m=m: m.fft.rfftn(x, dim=ax)))
        else:
            if name == "paddle":
                m.set_device("cpu")
            out.append((f"{name}.fft", m.to_tensor, lambda x, ax, m=m: m.fft.fftn(x, axes=ax),
                        lambda x, ax, m=m: m.fft.rfftn(x, axes=ax)))
    return out


def main():
    rng = np.random.default_rng(0)
    fws = _frameworks()
    print("| case | kind | dtype | " + " | ".join(f"{f[0]} us" for f in fws) + " |")
    print("|---|---|---|" + "---|" * len(fws))
    for name, shape in CASES:
        # the batch case transforms the last axis only; the others every axis
        axes = [-1] if "batch" in name else list(range(len(shape)))
        for kind in ("c2c", "r2c"):
            for dt in (np.float32, np.float64):
                x = rng.standard_normal(shape).astype(dt)
                if kind == "c2c":
                    x = (x + 1j * rng.standard_normal(shape)).astype(np.result_type(dt, np.complex64))
                cells = []
                for _, to_t, fftn, rfftn in fws:
                    t = to_t(x)
                    fn = fftn if kind == "c2c" else rfftn
                    cells.append(f"{median_us(lambda: fn(t, axes)):.2f}")
                print(f"| {name} | {kind} | {np.dtype(dt).name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
