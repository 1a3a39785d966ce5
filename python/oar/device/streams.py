"""Streams and events (paddle.device.Stream / Event) over any device.

Note [device streams]: a stream is a device's queue of work and an event a
point in one; both go through the device's DeviceInterface (src/tensor/
device.h). The current stream of a device (set_stream, stream_guard) is
where that device's kernels and copies go. The CPU runs every op
synchronously in the calling thread, so its streams are always complete and
its events take the host clock when recorded. A GPU's streams are CUDA
streams; a plugin device's are the plugin's (a plugin without streams has one
implicit stream, which every Stream object of the device stands for; one
without events records host times once the stream is done). Stream
priorities are kept for Paddle compatibility and change nothing.
"""
from .. import _C


def _place(device, api):
    from . import _parse, _place_from

    if device is None:
        return _place_from(*_C._default_device())
    return _place_from(*_parse(device, api))


def _kind_index(place, api):
    from . import _parse

    return _parse(place, api)


class Stream:
    """A queue of work on one device (paddle.device.Stream); see Note [device streams].

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
        self.priority = priority
        if stream_base is not None:
            self.device, self._base = stream_base.device, stream_base._base
        else:
            self.device = _place(device, api)
            self._base = _C._Stream(*_kind_index(self.device, api), True)

    @classmethod
    def _default(cls, place):
        """The device's default stream (not created: it exists with the device)."""
        s = cls.__new__(cls)
        s.device, s.priority = place, 2
        s._base = _C._Stream(*_kind_index(place, "oar.device.current_stream"), False)
        return s

    def query(self):
        """Whether all work queued on the stream has finished.

        >>> import oar
        >>> oar.device.Stream().query()
        True
        """
        return self._base.query()

    def synchronize(self):
        """Waits until the work queued on the stream has finished.

        >>> import oar
        >>> oar.device.Stream().synchronize()
        """
        self._base.synchronize()

    def record_event(self, event=None):
        """Records `event` (a new Event when None) on this stream and returns it.

        >>> import oar
        >>> ev = oar.device.Stream().record_event(oar.device.Event(enable_timing=True))
        >>> ev.query()
        True
        """
        if event is None:
            event = Event(self.device)
        if not isinstance(event, Event):
            raise TypeError(f"[oar.device.Stream.record_event] event must be an oar.device.Event, "
                            f"got {type(event).__name__}")
        event.record(self)
        return event

    def wait_event(self, event):
        """Makes the work queued on this stream from now on wait for `event`.

        >>> import oar
        >>> s = oar.device.Stream(); s.wait_event(s.record_event())
        """
        if not isinstance(event, Event):
            raise TypeError(f"[oar.device.Stream.wait_event] event must be an oar.device.Event, "
                            f"got {type(event).__name__}")
        if event._base is not None:  # an event never recorded is complete
            event._base.wait_on(self._base)

    def wait_stream(self, stream):
        """Makes the work queued on this stream from now on wait for the work queued on `stream` so far.

        >>> import oar
        >>> oar.device.Stream().wait_stream(oar.device.current_stream())
        """
        if not isinstance(stream, Stream):
            raise TypeError(f"[oar.device.Stream.wait_stream] stream must be an oar.device.Stream, "
                            f"got {type(stream).__name__}")
        self.wait_event(stream.record_event())

    def __eq__(self, other):
        return isinstance(other, Stream) and self.device == other.device and \
            self._base.handle == other._base.handle

    def __hash__(self):
        return hash((self.device, self._base.handle))

    def __repr__(self):
        return f"oar.device.Stream(device={self.device}, priority={self.priority})"


class Event:
    """A point in a stream's work (paddle.device.Event): `device` is where it will be recorded (the
    current device when None; a bool there is taken as enable_timing, as in paddle.device.cuda.Event).

    >>> import oar
    >>> start, end = oar.device.Event(enable_timing=True), oar.device.Event(enable_timing=True)
    >>> start.record(); y = oar.ones([8, 8]).sum(); end.record()
    >>> start.elapsed_time(end) >= 0.0
    True
    """

    def __init__(self, device=None, enable_timing=False, blocking=False, interprocess=False):
        if isinstance(device, bool):
            device, enable_timing = None, device
        if interprocess:
            raise ValueError("[oar.device.Event] interprocess events are not supported: oar shares no device "
                             "memory between processes; expected interprocess=False")
        self.device = None if device is None else _place(device, "oar.device.Event")
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self._base = None  # made on the first record, on the stream's device

    def record(self, stream=None):
        """Records the event on `stream` (the current stream of the event's device when None).

        >>> import oar
        >>> ev = oar.device.Event(); ev.record(); ev.query()
        True
        """
        api = "oar.device.Event.record"
        if stream is None:
            stream = current_stream(self.device)
        if not isinstance(stream, Stream):
            raise TypeError(f"[{api}] stream must be an oar.device.Stream, got {type(stream).__name__}")
        if self.device is not None and self.device != stream.device:
            raise ValueError(f"[{api}] the event belongs to {self.device._device}, the stream to "
                             f"{stream.device._device}; expected a stream of {self.device._device}")
        if self._base is None:
            self.device = stream.device
            self._base = _C._Event(*_kind_index(stream.device, api), self.enable_timing)
        self._base.record(stream._base)

    def query(self):
        """Whether the work before the event has finished (True also when never recorded).

        >>> import oar
        >>> oar.device.Event().query()
        True
        """
        return True if self._base is None else self._base.query()

    def synchronize(self):
        """Waits for the work before the event.

        >>> import oar
        >>> ev = oar.device.Event(); ev.record(); ev.synchronize()
        """
        if self._base is not None:
            self._base.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds from this event to `end_event` (a float; both recorded, with enable_timing).

        >>> import oar
        >>> a, b = oar.device.Event(enable_timing=True), oar.device.Event(enable_timing=True)
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
            if ev._base is None:
                raise ValueError(f"[{api}] {which} has not been recorded; call record() first")
        return self._base.elapsed_ms(end_event._base)

    def __repr__(self):
        return f"oar.device.Event(enable_timing={self.enable_timing}, recorded={self._base is not None})"


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
        s = _current[place] = Stream._default(place)
    return s


def set_stream(stream):
    """Makes `stream` the current stream of its device, where its kernels and copies go; returns the
    previous one.

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
    _C._set_current_stream(*_kind_index(stream.device, "oar.device.set_stream"), stream._base)
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
