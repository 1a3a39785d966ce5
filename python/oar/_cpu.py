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


# The flags /proc/cpuinfo shows for each x86-64 micro-architecture level.
_X86_LEVELS = {
    "x86-64": set(),
    "x86-64-v2": {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"},
}
_X86_LEVELS["x86-64-v3"] = _X86_LEVELS["x86-64-v2"] | {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm",
                                                       "movbe", "xsave"}
_X86_LEVELS["x86-64-v4"] = _X86_LEVELS["x86-64-v3"] | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}


def check_cpu(level):
    """Raises ImportError, before any native code runs, when this CPU lacks the
    instructions the libraries were compiled for (they would crash with an
    illegal instruction instead)."""
    flags = _cpu_flags()
    if not level or not flags or level not in _X86_LEVELS:
        return
    missing = sorted(_X86_LEVELS[level] - flags)
    if missing:
        raise ImportError(f"[oar] this build of oar needs an {level} CPU; this CPU lacks {', '.join(missing)}. "
                          f"Rebuild with `cmake -DOAR_X86_LEVEL=x86-64` (or pip install with "
                          f"CMAKE_ARGS=-DOAR_X86_LEVEL=x86-64) for older CPUs.")


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
