"""Op-level profiling of eager execution and of the inference runtime, with
Paddle's `paddle.profiler` names.

While a Profiler records, every kernel the eager stage runs (forward and
backward) and every step a predictor runs (fused ops under their own names)
adds its wall time to its op's row; `summary()` prints the table,
`op_stats()` returns it. The time of an eager op includes allocating its
outputs.

>>> import oar, oar.profiler as profiler
>>> x = oar.ones([64, 64])
>>> with profiler.Profiler() as prof:
...     y = oar.matmul(x, x) + 1.0
>>> sorted(s.name for s in prof.op_stats())
['add', 'full', 'matmul']
"""
import enum
import json
import os
import socket
import threading
import time
from dataclasses import dataclass

from .. import _C

__all__ = ["Profiler", "ProfilerTarget", "ProfilerState", "SortedKeys", "OpStat", "make_scheduler", "RecordEvent",
           "SummaryView", "export_chrome_tracing", "export_protobuf", "load_profiler_result"]


class ProfilerTarget(enum.Enum):
    """What a Profiler records: oar records CPU op times (GPU ops run on streams it times from the host).

    >>> import oar
    >>> oar.profiler.ProfilerTarget.CPU.name
    'CPU'
    """
    CPU = 0
    GPU = 1
    CUSTOM_DEVICE = 2


class ProfilerState(enum.Enum):
    """A step's state in a recording schedule (see make_scheduler).

    >>> import oar
    >>> oar.profiler.ProfilerState.RECORD.value
    2
    """
    CLOSED = 0
    READY = 1
    RECORD = 2
    RECORD_AND_RETURN = 3


class SummaryView(enum.Enum):
    """Sections of Profiler.summary; oar prints OperatorView (the op table),
    UDFView (RecordEvent ranges) and OverView (step times).

    >>> import oar
    >>> oar.profiler.SummaryView.OperatorView in list(oar.profiler.SummaryView)
    True
    """
    DeviceView = 0
    OverView = 1
    ModelView = 2
    DistributedView = 3
    KernelView = 4
    OperatorView = 5
    MemoryView = 6
    MemoryManipulationView = 7
    UDFView = 8


class SortedKeys(enum.Enum):
    """The column Profiler.summary sorts the op table by.

    >>> import oar
    >>> oar.profiler.SortedKeys.CPUTotal.name
    'CPUTotal'
    """
    CPUTotal = 0
    CPUAvg = 1
    CPUMax = 2
    CPUMin = 3
    GPUTotal = 4
    GPUAvg = 5
    GPUMax = 6
    GPUMin = 7


@dataclass
class OpStat:
    """One op's row: calls, total seconds and bytes of output written;
    `inputs` is the input signature when the Profiler records shapes.

    >>> import oar
    >>> with oar.profiler.Profiler() as prof:
    ...     _ = oar.exp(oar.ones([8]))
    >>> [(s.name, s.calls) for s in prof.op_stats() if s.name == "exp"]
    [('exp', 1)]
    """
    name: str
    calls: int
    seconds: float
    bytes: int
    inputs: str = ""

    @property
    def avg_seconds(self):
        return self.seconds / self.calls if self.calls else 0.0


def make_scheduler(*, closed, ready, record, repeat=0, skip_first=0):
    """A step -> ProfilerState function as in Paddle: skip `skip_first`
    steps, then cycles of `closed` + `ready` + `record` steps (`repeat`
    cycles, 0 for no limit).

    >>> import oar
    >>> sched = oar.profiler.make_scheduler(closed=1, ready=1, record=2, repeat=1)
    >>> [sched(s).name for s in range(5)]
    ['CLOSED', 'READY', 'RECORD', 'RECORD_AND_RETURN', 'CLOSED']
    """
    for name, v in (("closed", closed), ("ready", ready), ("record", record), ("repeat", repeat),
                    ("skip_first", skip_first)):
        if not isinstance(v, int) or v < 0:
            raise ValueError(f"[oar.profiler.make_scheduler] {name} must be a non-negative int, got {v!r}")
    if record < 1:
        raise ValueError(f"[oar.profiler.make_scheduler] record must be at least 1, got {record}")
    period = closed + ready + record

    def schedule(step):
        if step < skip_first:
            return ProfilerState.CLOSED
        step -= skip_first
        if repeat and step >= period * repeat:
            return ProfilerState.CLOSED
        pos = step % period
        if pos < closed:
            return ProfilerState.CLOSED
        if pos < closed + ready:
            return ProfilerState.READY
        return ProfilerState.RECORD_AND_RETURN if pos == period - 1 else ProfilerState.RECORD
    return schedule


def _range_scheduler(start, end):
    def schedule(step):
        return ProfilerState.RECORD if start <= step < end else ProfilerState.CLOSED
    return schedule


_UNITS = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}


class Profiler:
    """Records per-op CPU time between `start()` and `stop()`.

    `scheduler` is None (record every step), a (start, end) pair of step
    numbers, or a function from the step number to a ProfilerState (see
    make_scheduler). `step()` marks the end of a training step.
    `on_trace_ready(prof)` runs when a recording window closes. With
    `record_shapes`, rows are kept per op and input dtypes/shapes.

    >>> import oar
    >>> prof = oar.profiler.Profiler(scheduler=(1, 2))
    >>> prof.start()
    >>> for step in range(3):
    ...     _ = oar.matmul(oar.ones([4, 4]), oar.ones([4, 4]))
    ...     prof.step()
    >>> prof.stop()
    >>> [s.calls for s in prof.op_stats() if s.name == "matmul"]
    [1]
    """

    def __init__(self, *, targets=None, scheduler=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, timer_only=False, emit_nvtx=False, custom_device_types=None,
                 with_flops=False):
        for t in targets or [ProfilerTarget.CPU]:
            if not isinstance(t, ProfilerTarget):
                raise TypeError(f"[oar.profiler.Profiler] targets must be ProfilerTarget values, got {t!r}")
        if scheduler is None:
            self._schedule = lambda step: ProfilerState.RECORD
        elif isinstance(scheduler, (tuple, list)):
            if len(scheduler) != 2 or not all(isinstance(v, int) for v in scheduler) or scheduler[0] > scheduler[1]:
                raise ValueError("[oar.profiler.Profiler] scheduler must be a (start, end) pair of step numbers "
                                 f"with start <= end, got {scheduler!r}")
            self._schedule = _range_scheduler(*scheduler)
        elif callable(scheduler):
            self._schedule = scheduler
        else:
            raise TypeError(f"[oar.profiler.Profiler] scheduler must be None, a (start, end) pair or a "
                            f"callable, got {type(scheduler).__name__}")
        self._on_trace_ready = on_trace_ready
        self._record_shapes = bool(record_shapes)
        self._timer_only = timer_only
        self._step = 0
        self._state = ProfilerState.CLOSED
        self._rows = {}
        self._step_times = []
        self._step_start = None
        self._events = []  # (name, start_ns, end_ns, thread id) of RecordEvent ranges
        self._device_events = []  # (name, start_ns, end_ns, device) of plugin devices' profilers
        self._step_spans = []  # (step number, start_ns, end_ns) of recorded steps
        self._step_start_ns = None

    # recording state
    def _collect(self):
        self._device_events += _C._plugin_profiler_take()
        for name, inputs, calls, ns, nbytes in _C._profiler_take():
            row = self._rows.get((name, inputs))
            if row is None:
                self._rows[(name, inputs)] = OpStat(name, calls, ns * 1e-9, nbytes, inputs)
            else:
                row.calls += calls
                row.seconds += ns * 1e-9
                row.bytes += nbytes

    def _enter(self, state):
        recording = state in (ProfilerState.RECORD, ProfilerState.RECORD_AND_RETURN)
        was = self._state in (ProfilerState.RECORD, ProfilerState.RECORD_AND_RETURN)
        if was:
            self._collect()
        if was and not recording and self._on_trace_ready is not None:
            self._on_trace_ready(self)
        _C._profiler_enable(recording and not self._timer_only, self._record_shapes)
        _C._plugin_profilers(recording and not self._timer_only)  # (a plugin device's own, if it has one)
        if recording and not was:
            _C._profiler_take()  # drop anything recorded outside the window
            _C._plugin_profiler_take()
        with _recorders_lock:
            (_recorders.add if recording else _recorders.discard)(self)
        self._state = state

    def start(self):
        self._step_start = time.perf_counter()
        self._step_start_ns = time.perf_counter_ns()
        self._enter(self._schedule(self._step))

    def step(self, num_samples=None):
        now = time.perf_counter()
        now_ns = time.perf_counter_ns()
        if self._step_start is not None:
            self._step_times.append(now - self._step_start)
        if self._step_start_ns is not None and self._state in (ProfilerState.RECORD,
                                                               ProfilerState.RECORD_AND_RETURN):
            self._step_spans.append((self._step, self._step_start_ns, now_ns))
        self._step_start = now
        self._step_start_ns = now_ns
        if self._state == ProfilerState.RECORD_AND_RETURN:
            self._enter(ProfilerState.CLOSED)
        self._step += 1
        self._enter(self._schedule(self._step))

    def stop(self):
        self._enter(ProfilerState.CLOSED)
        _C._profiler_enable(False)
        _C._plugin_profilers(False)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def step_info(self, unit=None):
        """Average time per step so far, as a string."""
        if not self._step_times:
            return "no completed steps"
        avg = sum(self._step_times) / len(self._step_times)
        return f"steps: {len(self._step_times)}, avg step time: {avg * 1e3:.3f} ms"

    def op_stats(self):
        """The recorded rows (OpStat), slowest total first."""
        self._collect()
        return sorted(self._rows.values(), key=lambda r: r.seconds, reverse=True)

    def device_events(self):
        """What the profilers of plugin devices recorded (kernels, copies): (name, start_ns, end_ns,
        device) each, timed on the clock of time.perf_counter_ns; [] without such devices.

        >>> import oar, oar.profiler as profiler
        >>> with profiler.Profiler() as prof:
        ...     y = oar.ones([2]) + 1.0
        >>> prof.device_events()   # the CPU has no profiler of its own
        []
        """
        self._collect()
        return list(self._device_events)

    def event_stats(self):
        """The RecordEvent ranges per name, as OpStat rows (bytes 0), slowest total first.

        >>> import oar, oar.profiler as profiler
        >>> with profiler.Profiler() as prof:
        ...     with profiler.RecordEvent("load"):
        ...         x = oar.ones([4])
        >>> [(r.name, r.calls) for r in prof.event_stats()]
        [('load', 1)]
        """
        rows = {}
        for name, start, end, _ in self._events:
            r = rows.setdefault(name, OpStat(name, 0, 0.0, 0))
            r.calls += 1
            r.seconds += (end - start) * 1e-9
        return sorted(rows.values(), key=lambda r: r.seconds, reverse=True)

    def export(self, path="", format="json"):
        """Writes what was recorded: format 'json' a Chrome trace (see
        export_chrome_tracing), 'pb' oar's own profile file (see export_protobuf).

        >>> import os, tempfile, oar, oar.profiler as profiler
        >>> with profiler.Profiler() as prof:
        ...     y = oar.ones([2]) + 1.0
        >>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
        >>> prof.export(path)
        >>> "add" in [op.name for op in profiler.load_profiler_result(path).op_stats()]
        True
        """
        if format not in ("json", "pb"):
            raise ValueError(f"[oar.profiler.Profiler.export] format must be 'json' or 'pb', got {format!r}")
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise ValueError(f"[oar.profiler.Profiler.export] path must be a non-empty file path, got {path!r}")
        data = self._profile_data()
        if format == "json":
            data = _chrome_trace(data)
        folder = os.path.dirname(os.path.abspath(os.fspath(path)))
        os.makedirs(folder, exist_ok=True)
        tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)

    def _profile_data(self):
        return {
            "format": _PROFILE_FORMAT, "version": 1, "pid": os.getpid(),
            "ops": [{"name": r.name, "inputs": r.inputs, "calls": r.calls, "seconds": r.seconds, "bytes": r.bytes}
                    for r in self.op_stats()],
            "events": [{"name": n, "start_ns": a, "end_ns": b, "tid": t} for n, a, b, t in self._events],
            "steps": [{"step": k, "start_ns": a, "end_ns": b} for k, a, b in self._step_spans],
            "device_events": [{"name": n, "start_ns": a, "end_ns": b, "device": d}
                              for n, a, b, d in self._device_events],
        }

    def summary(self, sorted_by=SortedKeys.CPUTotal, op_detail=True, thread_sep=False, time_unit="ms",
                views=None):
        """Prints the per-op table (calls, total, average, share of the total), then the
        RecordEvent ranges when there are any; `views` limits what is printed to
        SummaryView.OperatorView / UDFView / OverView. Returns the text."""
        if time_unit not in _UNITS:
            raise ValueError(f"[oar.profiler.Profiler.summary] time_unit must be one of {list(_UNITS)}, "
                             f"got {time_unit!r}")
        if views is None:
            views = [SummaryView.OverView, SummaryView.OperatorView, SummaryView.UDFView]
        elif isinstance(views, SummaryView):
            views = [views]
        if not all(isinstance(v, SummaryView) for v in views):
            raise TypeError(f"[oar.profiler.Profiler.summary] views must be SummaryView values, got {views!r}")
        parts = []
        if SummaryView.OperatorView in views or SummaryView.OverView in views:
            parts.append(self._op_table(sorted_by, time_unit, SummaryView.OperatorView in views))
        events = self.event_stats()
        if SummaryView.UDFView in views and events:
            scale = _UNITS[time_unit]
            width = max([len(r.name) for r in events] + [5])
            lines = [f"{'range':<{width}}  {'calls':>7}  {'total ' + time_unit:>12}  {'avg ' + time_unit:>12}"]
            for r in events:
                lines.append(f"{r.name:<{width}}  {r.calls:>7}  {r.seconds * scale:>12.3f}  "
                             f"{r.avg_seconds * scale:>12.4f}")
            parts.append("\n".join(lines))
        text = "\n\n".join(parts)
        print(text)
        return text

    def _op_table(self, sorted_by, time_unit, op_rows):
        """The op table (header and rows only when `op_rows`) and the totals line."""
        all_rows = self.op_stats()
        total = sum(r.seconds for r in all_rows) or 1.0
        rows = all_rows if op_rows else []
        if sorted_by == SortedKeys.CPUAvg:
            rows.sort(key=lambda r: r.avg_seconds, reverse=True)
        scale = _UNITS[time_unit]
        label = (lambda r: f"{r.name}({r.inputs})") if self._record_shapes else (lambda r: r.name)
        width = max([len(label(r)) for r in rows] + [2])
        lines = [f"{'op':<{width}}  {'calls':>7}  {'total ' + time_unit:>12}  {'avg ' + time_unit:>12}  "
                 f"{'share':>6}  {'GB/s':>7}"] if op_rows else []
        for r in rows:
            gbs = r.bytes / r.seconds / 1e9 if r.seconds else 0.0
            lines.append(f"{label(r):<{width}}  {r.calls:>7}  {r.seconds * scale:>12.3f}  "
                         f"{r.avg_seconds * scale:>12.4f}  {100 * r.seconds / total:>5.1f}%  {gbs:>7.2f}")
        lines.append(f"total op time: {total * scale:.3f} {time_unit}; {self.step_info()}")
        return "\n".join(lines)


# Note [user ranges]: RecordEvent ranges are timed in Python with the host
# clock and kept by every Profiler recording when the range ends; ranges
# outside a recording window cost two clock reads and are dropped.
_recorders = set()
_recorders_lock = threading.Lock()
_PROFILE_FORMAT = "oar-profile"


class RecordEvent:
    """Times a user range for the Profilers recording: a ``with`` block or ``begin()``/``end()``.

    >>> import oar, oar.profiler as profiler
    >>> with profiler.Profiler() as prof:
    ...     ev = profiler.RecordEvent("matmul_block"); ev.begin()
    ...     y = oar.matmul(oar.ones([8, 8]), oar.ones([8, 8]))
    ...     ev.end()
    >>> [r.name for r in prof.event_stats()]
    ['matmul_block']
    """

    def __init__(self, name, event_type=None):
        if not isinstance(name, str):
            raise TypeError(f"[oar.profiler.RecordEvent] name must be a str, got {type(name).__name__}")
        self.name = name
        self.event_type = event_type
        self._start = None

    def begin(self):
        """Starts the range."""
        self._start = time.perf_counter_ns()

    def end(self):
        """Ends the range and hands it to the Profilers recording now (Note [user ranges])."""
        if self._start is None:
            raise RuntimeError(f"[oar.profiler.RecordEvent.end] the range {self.name!r} was not begun; "
                               "call begin() first")
        end, start, self._start = time.perf_counter_ns(), self._start, None
        with _recorders_lock:
            recorders = list(_recorders)
        for prof in recorders:
            prof._events.append((self.name, start, end, threading.get_ident()))

    def __enter__(self):
        self.begin()
        return self

    def __exit__(self, *exc):
        self.end()
        return False


def _chrome_trace(data):
    """A Chrome trace (chrome://tracing, Perfetto) of the profile data: RecordEvent
    ranges and steps on the timeline. The C++ profiler keeps per-op totals, not
    per-call times, so ops appear as one span each in an "ops (totals)" row,
    laid end to end, and in full under the "oarProfile" key."""
    pid = data["pid"]
    events = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": f"oar (pid {pid})"}}]
    t0 = min([e["start_ns"] for e in data["events"] + data.get("device_events", [])] +
             [s["start_ns"] for s in data["steps"]] + [0])
    for e in data["events"]:
        events.append({"name": e["name"], "ph": "X", "cat": "user", "pid": pid, "tid": e["tid"],
                       "ts": (e["start_ns"] - t0) / 1e3, "dur": (e["end_ns"] - e["start_ns"]) / 1e3})
    for e in data.get("device_events", []):  # what a plugin device's profiler recorded, one row per device
        events.append({"name": e["name"], "ph": "X", "cat": "device", "pid": pid, "tid": e["device"],
                       "ts": (e["start_ns"] - t0) / 1e3, "dur": (e["end_ns"] - e["start_ns"]) / 1e3})
    for st in data["steps"]:
        events.append({"name": f"ProfileStep#{st['step']}", "ph": "X", "cat": "step", "pid": pid, "tid": "steps",
                       "ts": (st["start_ns"] - t0) / 1e3, "dur": (st["end_ns"] - st["start_ns"]) / 1e3})
    ts = 0.0
    for op in data["ops"]:
        dur = op["seconds"] * 1e6
        events.append({"name": op["name"], "ph": "X", "cat": "op totals", "pid": pid, "tid": "ops (totals)",
                       "ts": ts, "dur": dur, "args": {"calls": op["calls"], "bytes": op["bytes"],
                                                      "inputs": op["inputs"]}})
        ts += dur
    return {"traceEvents": events, "displayTimeUnit": "ms", "oarProfile": data}


def _exporter(dir_name, worker_name, fmt, suffix, api):
    if not isinstance(dir_name, (str, os.PathLike)):
        raise TypeError(f"[{api}] dir_name must be a str or os.PathLike, got {type(dir_name).__name__}")
    if worker_name is not None and not isinstance(worker_name, str):
        raise TypeError(f"[{api}] worker_name must be a str or None, got {type(worker_name).__name__}")

    def handle(prof):
        name = worker_name or f"host_{socket.gethostname()}pid_{os.getpid()}"
        stamp = time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime())
        path = os.path.join(os.fspath(dir_name), f"{name}_time_{stamp}_{time.time_ns() % 10**6}.{suffix}")
        prof.export(path, fmt)
    return handle


def export_chrome_tracing(dir_name, worker_name=None):
    """An `on_trace_ready` callback writing each recording window to
    ``dir_name/<worker>_time_<stamp>.paddle_trace.json``, a Chrome trace (open in
    chrome://tracing or Perfetto; see Profiler.export).

    >>> import os, tempfile, oar, oar.profiler as profiler
    >>> d = tempfile.mkdtemp()
    >>> with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing(d)) as prof:
    ...     y = oar.ones([2]) * 2.0
    >>> [f.endswith(".paddle_trace.json") for f in os.listdir(d)]
    [True]
    """
    return _exporter(dir_name, worker_name, "json", "paddle_trace.json", "oar.profiler.export_chrome_tracing")


def export_protobuf(dir_name, worker_name=None):
    """An `on_trace_ready` callback writing each recording window to
    ``dir_name/<worker>_time_<stamp>.oar_profile.json``: not Paddle's protobuf but
    oar's own profile, JSON ``{"format": "oar-profile", "version": 1, "ops": [...],
    "events": [...], "steps": [...]}``, which load_profiler_result reads.

    >>> import os, tempfile, oar, oar.profiler as profiler
    >>> d = tempfile.mkdtemp()
    >>> with profiler.Profiler(on_trace_ready=profiler.export_protobuf(d)) as prof:
    ...     y = oar.ones([2]) * 2.0
    >>> r = profiler.load_profiler_result(os.path.join(d, os.listdir(d)[0]))
    >>> sorted(op.name for op in r.op_stats())
    ['full', 'multiply']
    """
    return _exporter(dir_name, worker_name, "pb", "oar_profile.json", "oar.profiler.export_protobuf")


class ProfilerResult:
    """A profile read back by load_profiler_result."""

    def __init__(self, data):
        self._data = data

    def op_stats(self):
        """The op rows (OpStat), as the Profiler's op_stats returned them."""
        return [OpStat(o["name"], o["calls"], o["seconds"], o["bytes"], o.get("inputs", "")) for o in self._data["ops"]]

    def events(self):
        """The RecordEvent ranges: (name, start_ns, end_ns, thread id)."""
        return [(e["name"], e["start_ns"], e["end_ns"], e["tid"]) for e in self._data["events"]]

    def steps(self):
        """The recorded steps: (step number, start_ns, end_ns)."""
        return [(s["step"], s["start_ns"], s["end_ns"]) for s in self._data["steps"]]

    def get_data(self):
        """The whole profile as a dict."""
        return self._data


def load_profiler_result(filename):
    """Reads a file written by export_protobuf or export_chrome_tracing (Profiler.export).

    >>> import os, tempfile, oar, oar.profiler as profiler
    >>> path = os.path.join(tempfile.mkdtemp(), "p.json")
    >>> with profiler.Profiler() as prof:
    ...     with profiler.RecordEvent("step"):
    ...         y = oar.ones([2])
    >>> prof.export(path, "pb")
    >>> [e[0] for e in profiler.load_profiler_result(path).events()]
    ['step']
    """
    api = "oar.profiler.load_profiler_result"
    if not isinstance(filename, (str, os.PathLike)):
        raise TypeError(f"[{api}] filename must be a str or os.PathLike, got {type(filename).__name__}")
    try:
        with open(filename) as f:
            data = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"[{api}] {filename} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"[{api}] {filename} is not a profile written by oar: {e}") from None
    if isinstance(data, dict) and "oarProfile" in data:
        data = data["oarProfile"]
    ok = (isinstance(data, dict) and data.get("format") == _PROFILE_FORMAT
          and all(isinstance(data.get(k), list) for k in ("ops", "events", "steps")))
    if not ok:
        raise ValueError(f"[{api}] {filename} is not a profile written by oar (expected format "
                         f"{_PROFILE_FORMAT!r} with ops, events and steps)")
    if data.get("version", 0) > 1:
        raise ValueError(f"[{api}] {filename} has profile version {data['version']}; this oar reads version 1")
    return ProfilerResult(data)
