"""CPU feature detection done before the native libraries load."""
import os


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def select_blas_kernels():
    """Picks OpenBLAS's kernel family from the CPU flags.

    Under some hypervisors OpenBLAS's own CPUID probe falls back to its generic
    x86 kernels (about 5x slower for sgemm); the flags in /proc/cpuinfo are
    reliable, so they decide unless the user set OPENBLAS_CORETYPE.
    """
    if "OPENBLAS_CORETYPE" in os.environ:
        return
    flags = _cpu_flags()
    if {"amx_bf16", "avx512_bf16", "avx512f"} <= flags:
        core = "SapphireRapids"
    elif {"avx512_bf16", "avx512f"} <= flags:
        core = "Cooperlake"
    elif {"avx512f", "avx512vl", "avx512bw"} <= flags:
        core = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        core = "Haswell"
    else:
        return
    os.environ["OPENBLAS_CORETYPE"] = core
