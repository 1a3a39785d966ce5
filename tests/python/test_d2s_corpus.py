"""The to_static corpus (tests/python/d2s_corpus): invariants that must always hold.

- the corpus has at least 150 programs, each with 2-4 input sets and a theme;
- every program runs eagerly, and its input sets do not all give the same output;
- in every conversion mode, a program that runs gives the eager outputs (a wrong
  result is a failure; the only exceptions are listed in KNOWN_WRONG_RESULTS);
- a program with expect_full_graph=True converts with full_graph=True, and every
  program runs in default mode (full_graph=False), except the programs listed in
  KNOWN_FULL_GRAPH_FAILURES / KNOWN_DEFAULT_FAILURES.

The KNOWN_* dicts (d2s_corpus/known_failures.py) are checked both ways: a
listed program that starts passing fails its test until it is removed from the
list, so the lists only shrink. ``tools/d2s_report.py --known-failures FILE``
rewrites them from a run (review the diff).
"""
import numpy as np
import pytest

from d2s_corpus import BY_NAME, PROGRAMS
from d2s_corpus.known_failures import KNOWN_DEFAULT_FAILURES, KNOWN_FULL_GRAPH_FAILURES, KNOWN_WRONG_RESULTS
from d2s_corpus.registry import THEMES
from d2s_corpus.runner import compare, run_mode, run_program

NAMES = [p.name for p in PROGRAMS]
_results = {}


def result(name):
    """The program's results in every mode, computed once per test session."""
    if name not in _results:
        _results[name] = run_program(BY_NAME[name])
    return _results[name]


def test_corpus_size_and_shape():
    assert len(PROGRAMS) >= 150
    assert len(set(NAMES)) == len(NAMES)
    for p in PROGRAMS:
        assert 2 <= len(p.inputs) <= 4, p.name
        assert any(t in THEMES for t in p.tags), p.name
        assert p.expect_full_graph or p.reason, p.name
    for theme in THEMES:
        assert sum(theme in p.tags for p in PROGRAMS) >= 10, theme


def test_known_lists_name_corpus_programs():
    for name in KNOWN_FULL_GRAPH_FAILURES:
        assert name in BY_NAME, f"{name} is not a corpus program"
        assert BY_NAME[name].expect_full_graph, f"{name}: expect_full_graph=False needs no KNOWN entry"
    for name in KNOWN_DEFAULT_FAILURES:
        assert name in BY_NAME, f"{name} is not a corpus program"
    for name, mode in KNOWN_WRONG_RESULTS:
        assert name in BY_NAME and mode in ("full_graph", "default"), (name, mode)


@pytest.mark.parametrize("name", NAMES)
def test_runs_eagerly_and_inputs_differ(name):
    eager = result(name)["eager"]
    assert eager.ran, f"{name} fails eagerly: {eager.error} [{eager.where}]"
    # Input sets that all give one output could not tell a converted program
    # that fixed a branch or an iteration count from a correct one.
    _, outs = run_mode(BY_NAME[name], "eager")
    assert any(compare(outs[0], o) for o in outs[1:]), f"{name}: every input set gives the same output"


@pytest.mark.parametrize("mode", ["full_graph", "default"])
@pytest.mark.parametrize("name", NAMES)
def test_outputs_equal_eager(name, mode):
    m = result(name)[mode]
    known = KNOWN_WRONG_RESULTS.get((name, mode))
    if known is not None:
        assert m.ran and m.equal is False, (f"{name} ({mode}) is listed in KNOWN_WRONG_RESULTS but now "
                                            f"{'gives the eager outputs' if m.ran else 'raises'}: remove it")
        return
    if m.ran:
        assert m.equal, f"{name} ({mode}) differs from eager: {m.mismatch}"


@pytest.mark.parametrize("name", NAMES)
def test_full_graph_expectation(name):
    r = result(name)
    m = r["full_graph"]
    if not r.expect_full_graph:
        return  # may convert or raise; if it runs, test_outputs_equal_eager checks its outputs
    if name in KNOWN_FULL_GRAPH_FAILURES:
        assert not m.ran, f"{name} now converts with full_graph=True: remove it from KNOWN_FULL_GRAPH_FAILURES"
    else:
        assert m.ran, f"{name} must convert with full_graph=True: input set {m.failed_input}: {m.error} [{m.where}]"


@pytest.mark.parametrize("name", NAMES)
def test_default_mode_runs(name):
    m = result(name)["default"]
    if name in KNOWN_DEFAULT_FAILURES:
        assert not m.ran, f"{name} now runs in default mode: remove it from KNOWN_DEFAULT_FAILURES"
    else:
        assert m.ran, f"{name} must run in default mode: input set {m.failed_input}: {m.error} [{m.where}]"


@pytest.mark.parametrize("name", NAMES)
def test_counters_follow_contract(name):
    """Where the StaticFunction reports graph breaks and compile counts, they have the documented form."""
    for mode in ("full_graph", "default"):
        m = result(name)[mode]
        if m.graph_breaks is not None:
            for b in m.graph_breaks:
                assert len(b) == 3 and isinstance(b[1], int) and isinstance(b[2], str), (name, mode, b)
                assert (b.filename, b.lineno, b.reason) == tuple(b), (name, mode, b)
        for counter in (m.compile_count, m.recompile_count):
            assert counter is None or (isinstance(counter, int) and counter >= 0), (name, mode, counter)
    fg = result(name)["full_graph"]
    if fg.ran and fg.graph_breaks is not None:
        assert not fg.graph_breaks, f"{name}: full_graph=True ran with graph breaks {fg.graph_breaks}"


def test_compare_is_strict():
    """The comparison that every other test relies on catches what it must."""
    a = np.array([1.0, 2.0], "float32")
    assert compare(a, a + 1e-7) is None
    assert compare(a, a + 1e-3)
    assert compare(np.array([1, 2]), np.array([1, 3]))
    assert compare(a, a.astype("float64"))
    assert compare(a, a[:1])
    from d2s_corpus.runner import to_tree

    assert compare(to_tree((1, 2)), to_tree([1, 2]))
    assert compare(to_tree({"a": 1}), to_tree({"b": 1}))
    assert compare(to_tree(3), to_tree(3.0))
