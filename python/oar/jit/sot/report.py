"""Graph-break bookkeeping for ``to_static(full_graph=False)``: per-function
counters and ``oar.jit.sot_report()``.

A break is recorded where the user's code made capture stop (file, line, and
why), once per distinct location and reason for each StaticFunction, whether
it happened in the function itself or in a function it called.
"""
import os
import weakref
from collections import namedtuple

__all__ = ["GraphBreak", "SotReport", "sot_report"]

GraphBreak = namedtuple("GraphBreak", ["filename", "lineno", "reason"])
GraphBreak.__doc__ = """Where and why capture stopped in a ``full_graph=False`` function.

>>> from oar.jit import GraphBreak
>>> b = GraphBreak("model.py", 12, "call to print: prints a value")
>>> f"{b.filename}:{b.lineno} {b.reason}"
'model.py:12 call to print: prints a value'
"""


class SotStats:
    """Counters of one StaticFunction in the default (graph-breaking) mode."""

    __slots__ = ("name", "breaks", "compile_count", "recompile_count", "calls", "exact_shapes", "__weakref__")

    def __init__(self, name):
        self.name = name
        self.breaks = {}  # GraphBreak -> None: an ordered set
        self.compile_count = 0
        self.recompile_count = 0
        self.calls = 0
        self.exact_shapes = False  # a capture fixed an input_spec dynamic dim: shapes are exact from now on

    def add_break(self, brk):
        if brk is not None and brk not in self.breaks:
            self.breaks[brk] = None


# Stats of every StaticFunction that ran with full_graph=False, for sot_report().
_all_stats = weakref.WeakSet()


def register(stats):
    _all_stats.add(stats)


class SotReport:
    """What ``oar.jit.sot_report()`` returns: one row per function that ran in
    the graph-breaking mode (full_graph=False), with its breaks and segment counts.

    ``functions`` holds (name, compile_count, recompile_count, breaks) rows and
    ``breaks`` every GraphBreak of every function; ``str()`` is a table.

    >>> import oar
    >>> @oar.jit.to_static(full_graph=False)
    ... def f(x):
    ...     print("x has", x.shape[0], "rows")
    ...     return x * 2.0
    >>> _ = f(oar.ones([2]))
    x has 2 rows
    >>> rep = oar.jit.sot_report()
    >>> any(b.reason.startswith("call to print") for b in rep.breaks)
    True
    """

    FunctionRow = namedtuple("FunctionRow", ["name", "compile_count", "recompile_count", "calls", "breaks"])

    def __init__(self, stats):
        self.functions = [self.FunctionRow(s.name, s.compile_count, s.recompile_count, s.calls, list(s.breaks))
                          for s in stats]
        self.breaks = [b for row in self.functions for b in row.breaks]

    def __str__(self):
        lines = [f"{'function':<32} {'calls':>6} {'segments':>9} {'recompiles':>11}  graph breaks"]
        for row in self.functions:
            head = f"{row.name[:32]:<32} {row.calls:>6} {row.compile_count:>9} {row.recompile_count:>11}  "
            if not row.breaks:
                lines.append(head + "none")
                continue
            for i, b in enumerate(row.breaks):
                lines.append((head if i == 0 else " " * len(head)) + f"{_short(b.filename)}:{b.lineno} {b.reason}")
        return "\n".join(lines)

    __repr__ = __str__


def _short(filename):
    """A file name relative to the working directory when it is under it (for the table only)."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive
        return filename
    return filename if rel.startswith("..") else rel


def sot_report():
    """A report of every ``to_static`` function run with ``full_graph=False``:
    its graph breaks (file:line and reason), the
    number of segments captured and how many of them were recompilations.

    >>> import oar
    >>> rep = oar.jit.sot_report()
    >>> str(rep).splitlines()[0].split()[:2]
    ['function', 'calls']
    """
    stats = sorted(_all_stats, key=lambda s: s.name)
    return SotReport(stats)
