import os
import sys

# Lets the op tests `import opdb` (the op database lives next to them).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Kernels the compiler generates during the tests go to a cache of their own
# (oar.compiler; the workers of one run share it, as processes may).
os.environ.setdefault("OAR_COMPILER_CACHE", os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build", "kernel-cache"))

# The suite checks the CPU; the device tests (test_opdb_device.py, test_gpu_*.py)
# choose their devices themselves.
import oar  # noqa: E402

oar.set_device("cpu")

# Scripts that run on the ranks of a distributed job (started by the tests).
collect_ignore = ["dist_scripts"]

# The example device plugin (plugins/custom_cpu, built by `make build`) is
# found through OAR_PLUGIN_PATH, as a vendor's would be; oar loads it on the
# first use of a custom device.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CUSTOM_CPU_BUILD = os.path.join(REPO, "build", "custom_cpu")
CUSTOM_CPU = os.path.join(CUSTOM_CPU_BUILD, "liboar_custom_cpu.so")
os.environ["OAR_PLUGIN_PATH"] = os.pathsep.join(p for p in (CUSTOM_CPU, os.environ.get("OAR_PLUGIN_PATH")) if p)
