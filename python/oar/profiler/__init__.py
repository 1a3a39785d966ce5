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
import time
from dataclasses import dataclass

from .. import _C

__all__ = ["Profiler", "ProfilerTarget", "ProfilerState", "SortedKeys", "OpStat", "make_scheduler"]


class ProfilerTarget(enum.Enum):
    CPU = 0
    GPU = 1
    CUSTOM_DEVICE = 2


class ProfilerState(enum.Enum):
    CLOSED = 0
    READY = 1
    RECORD = 2
    RECORD_AND_RETURN = 3


class SortedKeys(enum.Enum):
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
    `inputs` is the input signature when the Profiler records shapes."""
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
    cycles, 0 for no limit)."""
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

    # recording state
    def _collect(self):
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
        if recording and not was:
            _C._profiler_take()  # drop anything recorded outside the window
        self._state = state

    def start(self):
        self._step_start = time.perf_counter()
        self._enter(self._schedule(self._step))

    def step(self, num_samples=None):
        now = time.perf_counter()
        if self._step_start is not None:
            self._step_times.append(now - self._step_start)
        self._step_start = now
        if self._state == ProfilerState.RECORD_AND_RETURN:
            self._enter(ProfilerState.CLOSED)
        self._step += 1
        self._enter(self._schedule(self._step))

    def stop(self):
        self._enter(ProfilerState.CLOSED)
        _C._profiler_enable(False)

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

    def summary(self, sorted_by=SortedKeys.CPUTotal, op_detail=True, thread_sep=False, time_unit="ms",
                views=None):
        """Prints the per-op table: calls, total, average, share of the total."""
        if time_unit not in _UNITS:
            raise ValueError(f"[oar.profiler.Profiler.summary] time_unit must be one of {list(_UNITS)}, "
                             f"got {time_unit!r}")
        rows = self.op_stats()
        if sorted_by == SortedKeys.CPUAvg:
            rows.sort(key=lambda r: r.avg_seconds, reverse=True)
        total = sum(r.seconds for r in rows) or 1.0
        scale = _UNITS[time_unit]
        label = (lambda r: f"{r.name}({r.inputs})") if self._record_shapes else (lambda r: r.name)
        width = max([len(label(r)) for r in rows] + [2])
        lines = [f"{'op':<{width}}  {'calls':>7}  {'total ' + time_unit:>12}  {'avg ' + time_unit:>12}  "
                 f"{'share':>6}  {'GB/s':>7}"]
        for r in rows:
            gbs = r.bytes / r.seconds / 1e9 if r.seconds else 0.0
            lines.append(f"{label(r):<{width}}  {r.calls:>7}  {r.seconds * scale:>12.3f}  "
                         f"{r.avg_seconds * scale:>12.4f}  {100 * r.seconds / total:>5.1f}%  {gbs:>7.2f}")
        lines.append(f"total op time: {total * scale:.3f} {time_unit}; {self.step_info()}")
        text = "\n".join(lines)
        print(text)
        return text
