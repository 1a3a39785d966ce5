"""pocketfft through numpy.fft and scipy.fft (one worker): the reference rows of
the FFT library table that benchmarks/fft_libs.cpp prints for oneMKL and KissFFT;
and oar.fft (oneMKL behind the op dispatch) on the same cases.

Run: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/fft_pocketfft.py

Times are medians of one call in microseconds and include the Python call
(about 1-3 us), which matters only for the smallest cases.
"""
import time

import numpy as np
import scipy.fft

import oar

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


def main():
    rng = np.random.default_rng(0)
    print("| case | kind | dtype | numpy.fft us | scipy.fft us | oar.fft us |\n|---|---|---|---|---|---|")
    for name, shape in CASES:
        # the batch case transforms the last axis only; the others every axis
        axes = (-1,) if "batch" in name else tuple(range(len(shape)))
        for kind in ("c2c", "r2c"):
            for dt in (np.float32, np.float64):
                x = rng.standard_normal(shape).astype(dt)
                if kind == "c2c":
                    x = (x + 1j * rng.standard_normal(shape)).astype(np.result_type(dt, np.complex64))
                    fn, sfn, ofn = np.fft.fftn, scipy.fft.fftn, oar.fft.fftn
                else:
                    fn, sfn, ofn = np.fft.rfftn, scipy.fft.rfftn, oar.fft.rfftn
                t = oar.to_tensor(x)
                tn = median_us(lambda: fn(x, axes=axes))
                ts = median_us(lambda: sfn(x, axes=axes, workers=1))
                to = median_us(lambda: ofn(t, axes=list(axes)))
                print(f"| {name} | {kind} | {np.dtype(dt).name} | {tn:.2f} | {ts:.2f} | {to:.2f} |", flush=True)


if __name__ == "__main__":
    main()
