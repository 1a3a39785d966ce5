"""A TensorBoard event-file writer for scalars, with no TensorFlow or
TensorBoard dependency.

An event file is a sequence of records; each record is::

    uint64 length (little endian)
    uint32 masked CRC32C of those 8 length bytes
    bytes  data (length bytes): one serialized ``Event`` protobuf
    uint32 masked CRC32C of the data

The ``Event`` messages are encoded by hand. The fields written are
``wall_time`` (double, field 1), ``step`` (int64, field 2), ``file_version``
(string, field 3; only in the first record, ``"brain.Event:2"``) and
``summary`` (field 5), a ``Summary`` whose repeated ``value`` (field 1) holds
``Value{tag: string = 1, simple_value: float = 2}``. TensorBoard and VisualDL's
TensorBoard importer read these files.
"""
import itertools
import os
import socket
import struct
import time

__all__ = ["SummaryWriter", "crc32c", "masked_crc32c"]


def _make_table():
    poly = 0x82F63B78  # Castagnoli polynomial, bit-reversed
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _make_table()


def crc32c(data):
    """CRC-32C (Castagnoli) of bytes.

    >>> hex(crc32c(b"123456789"))
    '0xe3069283'
    """
    crc = 0xFFFFFFFF
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """The masked CRC that TFRecord files store (rotate right by 15, add a constant).

    >>> masked_crc32c(b"")
    2726488792
    """
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(n):
    n &= 0xFFFFFFFFFFFFFFFF  # negative int64 values are sent as their 64-bit two's complement
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field, wire_type):
    return _varint((field << 3) | wire_type)


def _length_delimited(field, payload):
    return _key(field, 2) + _varint(len(payload)) + payload


def _event(wall_time, step, file_version=None, scalars=()):
    """Serialized Event{wall_time, step, file_version | summary{value{tag, simple_value}...}}."""
    msg = _key(1, 1) + struct.pack("<d", wall_time)
    if step:
        msg += _key(2, 0) + _varint(int(step))
    if file_version is not None:
        msg += _length_delimited(3, file_version.encode("utf-8"))
    if scalars:
        summary = b"".join(
            _length_delimited(1, _length_delimited(1, tag.encode("utf-8")) + _key(2, 5) + struct.pack("<f", value))
            for tag, value in scalars)
        msg += _length_delimited(5, summary)
    return msg


def _record(data):
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


_counter = itertools.count()


class SummaryWriter:
    """Writes scalar summaries to ``<logdir>/events.out.tfevents.<time>.<host>.<pid>.<n>``.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> w = SummaryWriter(d)
    >>> w.add_scalar("train/loss", 0.5, step=1)
    >>> w.close()
    >>> os.path.basename(w.file_name).startswith("events.out.tfevents.")
    True
    """

    def __init__(self, logdir, filename_suffix="", flush_secs=10):
        if not isinstance(logdir, (str, os.PathLike)) or not str(logdir):
            raise ValueError(f"[oar.hapi.SummaryWriter] logdir must be a non-empty path, got {logdir!r}")
        self.logdir = str(logdir)
        os.makedirs(self.logdir, exist_ok=True)
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}."
                f"{next(_counter)}{filename_suffix}")
        self.file_name = os.path.join(self.logdir, name)
        self._flush_secs = float(flush_secs)
        self._last_flush = time.time()
        self._file = open(self.file_name, "wb")
        self._file.write(_record(_event(time.time(), 0, file_version="brain.Event:2")))
        self._file.flush()

    def add_scalar(self, tag, value, step, walltime=None):
        """Appends one scalar ``value`` under ``tag`` at ``step``."""
        if self._file is None:
            raise RuntimeError("[oar.hapi.SummaryWriter.add_scalar] the writer is closed")
        if not isinstance(tag, str) or not tag:
            raise ValueError(f"[oar.hapi.SummaryWriter.add_scalar] tag must be a non-empty str, got {tag!r}")
        wall = time.time() if walltime is None else float(walltime)
        self._file.write(_record(_event(wall, int(step), scalars=[(tag, float(value))])))
        if wall - self._last_flush >= self._flush_secs:
            self.flush()

    def flush(self):
        if self._file is not None:
            self._file.flush()
            self._last_flush = time.time()

    def close(self):
        if self._file is not None:
            self._file.flush()
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
