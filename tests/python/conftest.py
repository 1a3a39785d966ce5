import os
import sys

# Lets the op tests `import opdb` (the op database lives next to them).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# The suite checks the CPU; the device tests (test_opdb_device.py, test_gpu_*.py)
# choose their devices themselves.
import oar  # noqa: E402

oar.set_device("cpu")

# Scripts that run on the ranks of a distributed job (started by the tests).
collect_ignore = ["dist_scripts"]
