"""The CPU check that runs before the native libraries load."""
import pytest

from oar import _cpu


def test_missing_instructions_raise_import_error(monkeypatch):
    monkeypatch.setattr(_cpu, "_cpu_flags", lambda: {"sse4_1", "sse4_2", "ssse3", "popcnt", "cx16", "lahf_lm"})
    with pytest.raises(ImportError, match=r"^\[oar\] this build of oar needs an x86-64-v3 CPU; this CPU lacks .*avx2"):
        _cpu.check_cpu("x86-64-v3")
    _cpu.check_cpu("x86-64-v2")  # enough for that level
    _cpu.check_cpu("")  # a build for another architecture: nothing to check


def test_unknown_flags_are_not_an_error(monkeypatch):
    monkeypatch.setattr(_cpu, "_cpu_flags", lambda: set())  # no /proc/cpuinfo: cannot tell
    _cpu.check_cpu("x86-64-v4")


def test_this_machine_passes_its_own_build():
    import oar
    _cpu.check_cpu(oar._X86_LEVEL)
