"""Streams and events (paddle.device.Stream / Event).

Note [host streams]: oar runs every op on the CPU, synchronously, in the
calling thread, so a CPU stream never has queued work: it is always complete,
and an event recorded on it takes the host clock at once. A GPU stream is the
device's queue of copies and collectives; its `synchronize` waits for the
device, and events recorded on it wait for that queue first, then read the
host clock, so their times cover the queued work. Stream priorities are kept
for Paddle compatibility and change nothing.
"""
import time

from .. import _C
from . import cuda


def _place(device, api):
    from . import Place, _parse

    if device is None:
        from . import get_device

        device = get_device()
    kind, index = _parse(device, api)
    return Place("cpu") if kind == 0 else Place("gpu", index)


class Stream:
    """A queue of work on one device (paddle.device.Stream); see Note [host streams].

    >>> import oar
    >>> s = oar.device.Stream()
    >>> s.query(), s.device
    (True, Place(cpu))
    >>> e = s.record_event()
    >>> e.query()
    True
    """

    def __init__(self, device=None, priority=2, stream_base=None):
        api = "oar.device.Stream"
        if isinstance(priority, bool) or priority not in (1, 2):
            raise ValueError(f"[{api}] priority must be 1 (high) or 2 (normal), got {priority!r}")
        if stream_base is not None and not isinstance(stream_base, Stream):
            raise TypeError(f"[{api}] stream_base must be an oar.device.Stream, got {type(stream_base).__name__}")
        self.device = stream_base.device if stream_base is not None else _place(device, api)
        self.priority = priority

    def query(self):
        """Whether all work queued on the stream has finished (a GPU stream waits for it first).

        >>> import oar
        >>> oar.device.Stream().query()
        True
        """
        self.synchronize()
        return True

    def synchronize(self):
        """Waits until the work queued on the stream has finished.

        >>> import oar
        >>> oar.device.Stream().synchronize()
        """
        if self.device.is_gpu_place():
            _C._device_synchronize(cuda._CUDA, self.device.gpu_device_id())

    def record_event(self, event=None):
        """Records `event` (a new Event when None) on this stream and returns it.

        >>> import oar
        >>> ev = oar.device.Stream().record_event(oar.device.Event(enable_timing=True))
        >>> ev.query()
        True
        """
        if event is None:
            event = Event()
        if not isinstance(event, Event):
            raise TypeError(f"[oar.device.Stream.record_event] event must be an oar.device.Event, "
                            f"got {type(event).__name__}")
        event.record(self)
        return event

    def wait_event(self, event):
        """Makes later work on this stream wait for `event` (already true on the host).

        >>> import oar
        >>> s = oar.device.Stream(); s.wait_event(s.record_event())
        """
        if not isinstance(event, Event):
            raise TypeError(f"[oar.device.Stream.wait_event] event must be an oar.device.Event, "
                            f"got {type(event).__name__}")
        event.synchronize()

    def wait_stream(self, stream):
        """Makes later work on this stream wait for the work queued on `stream`.

        >>> import oar
        >>> oar.device.Stream().wait_stream(oar.device.current_stream())
        """
        if not isinstance(stream, Stream):
            raise TypeError(f"[oar.device.Stream.wait_stream] stream must be an oar.device.Stream, "
                            f"got {type(stream).__name__}")
        stream.synchronize()

    def __repr__(self):
        return f"oar.device.Stream(device={self.device}, priority={self.priority})"


class Event:
    """A point in a stream's work, with the host time it was reached (paddle.device.Event).

    >>> import oar
    >>> start, end = oar.device.Event(enable_timing=True), oar.device.Event(enable_timing=True)
    >>> start.record(); y = oar.ones([8, 8]).sum(); end.record()
    >>> start.elapsed_time(end) >= 0.0
    True
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise ValueError("[oar.device.Event] interprocess events are not supported: oar shares no device "
                             "memory between processes; expected interprocess=False")
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self._ns = None
        self._stream = None

    def record(self, stream=None):
        """Records the event on `stream` (the current stream when None).

        >>> import oar
        >>> ev = oar.device.Event(); ev.record(); ev.query()
        True
        """
        if stream is None:
            stream = current_stream()
        if not isinstance(stream, Stream):
            raise TypeError(f"[oar.device.Event.record] stream must be an oar.device.Stream, "
                            f"got {type(stream).__name__}")
        stream.synchronize()  # Note [host streams]: the time is taken once the queued work is done
        self._stream = stream
        self._ns = time.perf_counter_ns()

    def query(self):
        """Whether the work before the event has finished (True also when never recorded).

        >>> import oar
        >>> oar.device.Event().query()
        True
        """
        return True

    def synchronize(self):
        """Waits for the work before the event (done when it was recorded).

        >>> import oar
        >>> ev = oar.device.Event(); ev.record(); ev.synchronize()
        """

    def elapsed_time(self, end_event):
        """Milliseconds from this event to `end_event` (a float; both recorded, with enable_timing).

        >>> import oar
        >>> a, b = oar.device.Event(True), oar.device.Event(True)
        >>> a.record(); b.record()
        >>> a.elapsed_time(b) >= 0
        True
        """
        api = "oar.device.Event.elapsed_time"
        if not isinstance(end_event, Event):
            raise TypeError(f"[{api}] end_event must be an oar.device.Event, got {type(end_event).__name__}")
        for which, ev in (("this event", self), ("end_event", end_event)):
            if not ev.enable_timing:
                raise ValueError(f"[{api}] {which} was created with enable_timing=False; expected "
                                 "Event(enable_timing=True)")
            if ev._ns is None:
                raise ValueError(f"[{api}] {which} has not been recorded; call record() first")
        return (end_event._ns - self._ns) / 1e6

    def __repr__(self):
        return f"oar.device.Event(enable_timing={self.enable_timing}, recorded={self._ns is not None})"


_current = {}  # Place -> its current Stream


def current_stream(device=None):
    """The current stream of `device` (the current device when None).

    >>> import oar
    >>> oar.device.current_stream() is oar.device.current_stream("cpu")
    True
    """
    place = _place(device, "oar.device.current_stream")
    s = _current.get(place)
    if s is None:
        s = _current[place] = Stream(place)
    return s


def set_stream(stream):
    """Makes `stream` the current stream of its device; returns the previous one.

    >>> import oar
    >>> s = oar.device.Stream()
    >>> prev = oar.device.set_stream(s)
    >>> oar.device.current_stream() is s
    True
    >>> _ = oar.device.set_stream(prev)
    """
    if not isinstance(stream, Stream):
        raise TypeError(f"[oar.device.set_stream] stream must be an oar.device.Stream, got {type(stream).__name__}")
    prev = current_stream(stream.device)
    _current[stream.device] = stream
    return prev


class StreamContext:
    """Makes `stream` current inside a ``with`` block (nothing changes for None).

    >>> import oar
    >>> s = oar.device.Stream()
    >>> with oar.device.StreamContext(s):
    ...     oar.device.current_stream() is s
    True
    >>> oar.device.current_stream() is s
    False
    """

    def __init__(self, stream=None):
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"[oar.device.StreamContext] stream must be an oar.device.Stream or None, "
                            f"got {type(stream).__name__}")
        self.stream = stream
        self._prev = None

    def __enter__(self):
        if self.stream is not None:
            self._prev = set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            set_stream(self._prev)
        return False


def stream_guard(stream=None):
    """A ``with`` block in which `stream` is current (see StreamContext).

    >>> import oar
    >>> s = oar.device.Stream()
    >>> with oar.device.stream_guard(s):
    ...     oar.device.current_stream() is s
    True
    """
    return StreamContext(stream)
