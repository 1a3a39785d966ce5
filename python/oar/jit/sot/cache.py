"""Per-code-object caches of captured segments.

Each code object the executor runs has one CodeInfo: its decoded
instructions, the instruction indices where a graph break is known to be
needed (learned while capturing), and, per start index, the segments captured
there, each with its guard function. A lookup tries the segments at an index
in order (most recent first) and takes the first whose guards pass.
"""
import dis
import sys

__all__ = []

_CO_GENERATOR_LIKE = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator

# Segments kept per start index; beyond it the least recently captured is dropped.
MAX_SEGMENTS_PER_PC = 256


class CodeInfo:
    """Decoded bytecode and the segment cache of one code object."""

    def __init__(self, code):
        self.code = code
        self.insts = list(dis.get_instructions(code))
        self.index = {inst.offset: i for i, inst in enumerate(self.insts)}
        lines, line = [], code.co_firstlineno
        for inst in self.insts:
            pos = getattr(inst, "positions", None)
            if pos is not None and pos.lineno is not None:
                line = pos.lineno
            elif inst.starts_line:
                line = inst.starts_line
            lines.append(line)
        self.lines = lines
        ncell = len([c for c in code.co_cellvars if c not in code.co_varnames])
        self.nlocalsplus = code.co_nlocals + ncell + len(code.co_freevars)
        self.handlers = _exception_table(code)  # [(start, end, target, depth, lasti)] by offset
        self.segments = {}  # start index -> {dispatch key -> [Segment]}
        self.forced = {}  # index -> reason: instructions that always end a segment
        self.unsupported = self._unsupported()

    def _unsupported(self):
        code = self.code
        if not (3, 10) <= sys.version_info[:2] <= (3, 13):
            return f"Python {sys.version_info[0]}.{sys.version_info[1]} bytecode is not supported"
        if code.co_flags & _CO_GENERATOR_LIKE:
            return "generator or coroutine function: runs eagerly"
        if getattr(code, "co_exceptiontable", b"") and self.handlers is None:
            return "try/except/finally or with block: the function runs eagerly"
        if any(i.opname in ("SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH") for i in self.insts):
            return "try/except/finally or with block: the function runs eagerly"
        from .opcodes import HANDLERS

        missing = sorted({i.opname for i in self.insts if i.opname not in HANDLERS})
        if missing:
            return f"bytecode {', '.join(missing)} is not supported: the function runs eagerly"
        return None

    def handler_for(self, i):
        """The exception-table entry covering instruction i, or None."""
        if not self.handlers:
            return None
        off = self.insts[i].offset
        for entry in self.handlers:
            if entry[0] <= off < entry[1]:
                return entry
        return None

    def lookup(self, i, frame):
        by_key = self.segments.get(i)
        if not by_key:
            return None
        segs = by_key.get(dispatch_key(frame))
        if not segs:
            return None
        closure = frame.closure
        for n in range(len(segs) - 1, -1, -1):
            seg = segs[n]
            if seg.guard(frame.L, frame.S, closure):
                return seg
        return None

    def add(self, seg):
        by_key = self.segments.setdefault(seg.start, {})
        segs = by_key.setdefault(seg.key, [])
        segs.append(seg)
        if len(segs) > MAX_SEGMENTS_PER_PC:
            del segs[0]

    def all_segments(self):
        """Every cached segment, by start index then capture order."""
        return [seg for i in sorted(self.segments) for segs in self.segments[i].values() for seg in segs]


def _exception_table(code):
    """The code's exception table as (start, end, target, depth, lasti) offsets (end exclusive);
    [] when there is none, None when this Python cannot decode it."""
    if not getattr(code, "co_exceptiontable", b""):
        return []
    parse = getattr(dis, "_parse_exception_table", None)
    if parse is None:
        return None
    try:
        return [(e.start, e.end, e.target, e.depth, e.lasti) for e in parse(code)]
    except Exception:  # a private helper of dis: its form may change
        return None


_KEY_TYPES = (int, bool, str, type(None))


def dispatch_key(frame):
    """The plain values (ints, bools, strings, None) of a frame state: segments are filed under
    it, so that a loop counter's many segments (one per iteration around a break) are found by
    one dict lookup instead of trying every guard. Guards check these values anyway."""
    return tuple((k, v) for k, v in frame.L.items() if type(v) in _KEY_TYPES) + \
        tuple((j, v) for j, v in enumerate(frame.S) if type(v) in _KEY_TYPES)


_infos = {}


def code_info(code):
    info = _infos.get(code)
    if info is None:
        info = _infos[code] = CodeInfo(code)
    return info


class Segment:
    """A captured stretch of bytecode from `start` to a graph break or a return.

    guard(L, S, CL) says whether it applies to a frame state; get_inputs
    gathers the program's inputs from it and get_paths the initial-state
    objects the end state keeps; the templates rebuild the end state from the
    program's outputs (variables.rebuild).
    """

    __slots__ = ("start", "key", "inputs", "guard", "get_inputs", "get_paths", "program", "returns", "ret_node", "l_nodes",
                 "s_nodes", "kw_names", "end", "brk", "guard_count", "no_grad_outs")

    def __init__(self, start):
        self.start = start
        self.brk = None
        self.no_grad_outs = ()
