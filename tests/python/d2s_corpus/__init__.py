"""A corpus of dynamic programs for ``oar.jit.to_static``.

Each theme module registers its programs in ``registry.PROGRAMS`` when
imported; ``runner.py`` runs them in eager mode and in both conversion modes
and compares the results, ``tests/python/test_d2s_corpus.py`` asserts the
invariants, and ``tools/d2s_report.py`` writes REPORT.md.
"""
from . import registry
from . import zoo, train_steps, control_flow, decoding, adaptive, detection, structures, state, edge  # noqa: F401
from .registry import PROGRAMS, Program

BY_NAME = {p.name: p for p in PROGRAMS}

__all__ = ["PROGRAMS", "BY_NAME", "Program"]
