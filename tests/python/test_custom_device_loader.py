"""The device plugin loader (src/device/plugin.cpp): where plugins are found, each reason a plugin
is refused, and the fallbacks for the optional entries a plugin leaves out. Each case runs in a
fresh process, since plugins load once per process; the broken plugins are built from
plugins/custom_cpu/testing/c_plugin.c by `make build`."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import CUSTOM_CPU, CUSTOM_CPU_BUILD, REPO

TESTING = os.path.join(CUSTOM_CPU_BUILD, "testing")
MINIMAL = os.path.join(TESTING, "liboar_minimal_c.so")


def refused(case):
    path = os.path.join(TESTING, f"liboar_refused_{case}.so")
    assert os.path.exists(path), f"{path} is missing: `make build` builds it"
    return path


def run(code, plugin_path, pythonpath=None, **env):
    """Runs `code` in a new process with OAR_PLUGIN_PATH; returns its stdout (it must exit 0)."""
    e = dict(os.environ, OAR_PLUGIN_PATH=plugin_path, PYTHONPATH=pythonpath or os.path.join(REPO, "python"), **env)
    p = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p.stdout


# The first use raises the refusal (a RuntimeError naming the API and the file); the process goes
# on, and later calls see the plugin types that were accepted.
FIRST_USE = """
import oar
try:
    oar.device.get_all_custom_device_type()
    print("NO ERROR")
except RuntimeError as e:
    print("ERROR", e)
print("TYPES", oar.device.get_all_custom_device_type())
"""


@pytest.mark.parametrize("case, reason", [
    ("no_entry_point", r"it does not export oar_plugin_init \(extern \"C\" OAR_Status "
                       r"oar_plugin_init\(OAR_PluginParams\*\)\)"),
    ("init_fails", "its oar_plugin_init failed: no minimal_c device is attached"),
    ("small_table", r"its device table is \d+ bytes, smaller than the \d+ of this oar's device_ext.h"),
    ("abi_major", "it was built for device ABI major version 2, this oar has 1"),
    ("required_null", "REQUIRED entries are null: memcpy_d2d"),
    ("device_init", "its init entry failed: status 1"),
    ("unknown_op", r"register_kernel\('no_such_op', 'minimal_c'\): oar has no op named 'no_such_op'"),
    ("partial_group", "an optional group is given in part: create_stream set but destroy_stream, query_stream, "
                      "synchronize_stream null"),
])
def test_each_broken_plugin_is_refused_naming_its_file_and_the_reason(case, reason):
    path = refused(case)
    out = run(FIRST_USE, path).splitlines()
    expected = (r"ERROR \[oar\.device\.get_all_custom_device_type\] a device plugin was refused: '"
                + re.escape(path) + "': " + reason)
    assert re.match(expected, out[0]), out
    assert out[1] == "TYPES []"


def test_a_taken_type_name_is_refused_and_the_first_plugin_stays():
    path = refused("name_taken")
    out = run(FIRST_USE, os.pathsep.join([CUSTOM_CPU, path])).splitlines()
    assert out[0] == (f"ERROR [oar.device.get_all_custom_device_type] a device plugin was refused: '{path}': its "
                      "device type 'custom_cpu' is already taken by another plugin"), out
    assert out[1] == "TYPES ['custom_cpu']"


def test_unloadable_files_and_missing_path_entries_are_refused(tmp_path):
    junk = tmp_path / "libjunk.so"
    junk.write_text("not a shared library")
    missing = tmp_path / "nowhere"
    out = run(FIRST_USE, os.pathsep.join([str(tmp_path), str(missing)])).splitlines()
    assert out[0].startswith("ERROR [oar.device.get_all_custom_device_type] device plugins were refused: "), out
    assert f"'{missing}' (named in OAR_PLUGIN_PATH): no such file or folder" in out[0]
    assert f"'{junk}': it could not be loaded: " in out[0]
    assert out[1] == "TYPES []"


def test_the_refusal_reaches_the_api_that_loads_and_later_errors_list_it():
    path = refused("abi_major")
    out = run("""
import oar
for attempt in range(2):
    try:
        oar.set_device("minimal_c")
    except (RuntimeError, ValueError) as e:
        print(type(e).__name__, e)
""", path).splitlines()
    assert out[0].startswith("RuntimeError [oar.device.set_device] a device plugin was refused: "), out
    assert out[1].startswith("ValueError [oar.device.set_device] no device type is named 'minimal_c': "), out
    assert f"refused: '{path}': it was built for device ABI major version 2" in out[1]


def test_a_plugin_with_the_required_entries_only_gets_the_fallbacks():
    out = run("""
import numpy as np, oar
print(oar.device.get_all_custom_device_type())
x = oar.to_tensor(np.arange(6, dtype="float32").reshape(2, 3), place="minimal_c")
print(x.place, x.numpy().tolist())
print(x.clone().cpu().numpy().tolist())          # a dense copy on the device: its memcpy_d2d
s1, s2 = oar.device.Stream("minimal_c"), oar.device.Stream("minimal_c")
print(s1 == s2, s1.query())                       # one implicit stream
a, b = oar.device.Event(enable_timing=True), oar.device.Event(enable_timing=True)
a.record(s1); b.record(s2)
print(a.query(), b.query(), a.elapsed_time(b) >= 0)   # host-timed events
try:
    x + x
except NotImplementedError as e:
    print(e)
try:
    x.T.clone()
except NotImplementedError as e:
    print(e)
oar.set_device("minimal_c")
print(oar.ones([2]).place, oar.ones([2]).numpy().tolist())   # made on the host, then moved
""", os.pathsep.join([CUSTOM_CPU, MINIMAL])).splitlines()
    assert out[0] == "['custom_cpu', 'minimal_c']"
    assert out[1] == "Place(minimal_c:0) [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]"
    assert out[2] == "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]"
    assert out[3] == "True True"
    assert out[4] == "True True True"
    assert out[5].startswith("[oar.add] has no kernel for device minimal_c:0 (dtype float32)")
    assert out[6] == ("[oar.Tensor.clone] cast: a copy of a non-contiguous float32 tensor on minimal_c:0 is not "
                      "supported: the minimal_c plugin registers no cast kernel for it")
    assert out[7] == "Place(minimal_c:0) [1.0, 1.0]"


def test_plugins_in_the_package_folder_are_found(tmp_path):
    # a copy of the package whose plugins/ folder holds custom_cpu, and no OAR_PLUGIN_PATH
    src = os.path.join(REPO, "python", "oar")
    pkg = tmp_path / "oar"
    pkg.mkdir()
    for name in os.listdir(src):
        if name.endswith(".so"):
            shutil.copy2(os.path.join(src, name), pkg / name)  # liboar.so's folder is where plugins/ is
        elif name != "plugins":
            os.symlink(os.path.join(src, name), pkg / name)
    (pkg / "plugins").mkdir()
    shutil.copy2(CUSTOM_CPU, pkg / "plugins" / "liboar_custom_cpu.so")
    out = run("import oar; print(oar.__file__); print(oar.device.get_available_custom_device())", "",
              pythonpath=str(tmp_path)).splitlines()
    assert out[0] == str(pkg / "__init__.py")
    assert out[1] == "['custom_cpu:0', 'custom_cpu:1']"


def test_custom_cpu_reads_its_settings():
    out = run("""
import numpy as np, oar
print(oar.device.get_available_custom_device())
try:
    oar.to_tensor(np.zeros(1 << 19, "float32"), place="custom_cpu")   # 2 MiB
except MemoryError as e:
    print(e)
""", CUSTOM_CPU, CUSTOM_CPU_DEVICE_COUNT="1", CUSTOM_CPU_MEMORY_MB="1").splitlines()
    assert out[0] == "['custom_cpu:0']"
    assert out[1] == ("[oar.to_tensor] Tensor.to: out of memory on custom_cpu:0 for a tensor of shape [524288] "
                      "(float32): [oar] out of memory: could not allocate 2097152 bytes on custom_cpu:0")
