"""Turning raw records into Paddle's MultiSlot text format (Paddle's
``fleet.MultiSlotDataGenerator`` / ``fleet.MultiSlotStringDataGenerator``).

A user subclass overrides ``generate_sample(line)`` to return a function
that yields samples, each a list of ``(slot_name, [values...])`` pairs, and
optionally ``generate_batch(samples)``. Each sample becomes one text line:
for every slot, the number of values followed by the values, all separated
by single spaces::

    [("words", [1926, 8, 17]), ("label", [1])]   ->   "3 1926 8 17 1 1\\n"

``run_from_stdin()`` reads lines from standard input and writes the result
to standard output (the pipe command of a dataset); ``run_from_memory()``
does the same with ``generate_sample(None)``.
"""
import sys

__all__ = ["DataGenerator", "MultiSlotDataGenerator", "MultiSlotStringDataGenerator"]


class DataGenerator:
    """The base of data generators: batching and the stdin/stdout loop.
    Subclass ``MultiSlotDataGenerator`` (numbers) or
    ``MultiSlotStringDataGenerator`` (strings) and override ``generate_sample``.

    >>> from oar.distributed.fleet import MultiSlotDataGenerator
    >>> class Pairs(MultiSlotDataGenerator):
    ...     def generate_sample(self, line):
    ...         def reader():
    ...             for i in range(2):
    ...                 yield [("x", [i, i + 1]), ("label", [i])]
    ...         return reader
    >>> g = Pairs()
    >>> g.set_batch(2)
    >>> g.run_from_memory()
    2 0 1 1 0
    2 1 2 1 1
    """

    _API = "oar.distributed.fleet.DataGenerator"

    def __init__(self):
        self._proto_info = None
        self.batch_size_ = 32

    def set_batch(self, batch_size):
        """Samples handed to ``generate_batch`` at a time (default 32)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"[{self._API}.set_batch] batch_size must be a positive int, got {batch_size!r}")
        self.batch_size_ = batch_size

    def _flush(self, batch, out):
        for sample in self.generate_batch(batch)():
            out.write(self._gen_str(sample))

    def _run(self, lines, out):
        batch = []
        for line in lines:
            for sample in self.generate_sample(line)():
                if sample is None:
                    continue
                batch.append(sample)
                if len(batch) == self.batch_size_:
                    self._flush(batch, out)
                    batch = []
        if batch:
            self._flush(batch, out)

    def run_from_memory(self):
        """Writes the samples of ``generate_sample(None)`` to standard output."""
        self._run([None], sys.stdout)

    def run_from_stdin(self):
        """Writes the samples of ``generate_sample(line)`` for every line of
        standard input to standard output."""
        self._run(sys.stdin, sys.stdout)

    def generate_sample(self, line):
        """Override: return a function yielding the samples of ``line``, each
        a list of ``(name, [values...])``."""
        raise NotImplementedError(f"[{self._API}.generate_sample] override generate_sample(line) to return a "
                                  "function that yields [(name, [value, ...]), ...] samples")

    def generate_batch(self, samples):
        """Override to transform a batch of samples (e.g. padding); by
        default it yields them unchanged."""
        def local_iter():
            yield from samples

        return local_iter

    def _gen_str(self, line):
        raise NotImplementedError(f"[{self._API}] use MultiSlotDataGenerator or MultiSlotStringDataGenerator")

    def _slots(self, line):
        if isinstance(line, zip):
            line = list(line)
        if not isinstance(line, (list, tuple)):
            raise TypeError(f"[{self._API}] a sample must be a list or tuple of (name, [values...]) pairs, "
                            f"got {type(line).__name__}")
        for item in line:
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise TypeError(f"[{self._API}] a sample must be (name, [values...]) pairs, got item {item!r}")
            name, values = item
            if not isinstance(name, str):
                raise TypeError(f"[{self._API}] slot names must be str, got {type(name).__name__} ({name!r})")
            if not isinstance(values, list):
                raise TypeError(f"[{self._API}] the values of slot {name!r} must be a list, "
                                f"got {type(values).__name__}")
            if not values:
                raise ValueError(f"[{self._API}] slot {name!r} has no values; pad it in generate_sample")
        return line


class MultiSlotStringDataGenerator(DataGenerator):
    """Writes samples whose values are strings, unchanged.

    >>> from oar.distributed.fleet import MultiSlotStringDataGenerator
    >>> class Words(MultiSlotStringDataGenerator):
    ...     def generate_sample(self, line):
    ...         def reader():
    ...             words = line.split()
    ...             yield [("words", words[1:]), ("label", words[:1])]
    ...         return reader
    >>> g = Words()
    >>> g._gen_str([("words", ["hello", "world"]), ("label", ["1"])])
    '2 hello world 1 1\\n'
    """

    _API = "oar.distributed.fleet.MultiSlotStringDataGenerator"

    def _gen_str(self, line):
        parts = []
        for name, values in self._slots(line):
            bad = [v for v in values if not isinstance(v, str)]
            if bad:
                raise TypeError(f"[{self._API}] the values of slot {name!r} must be str, got {bad[0]!r}")
            parts.append(" ".join([str(len(values))] + values))
        return " ".join(parts) + "\n"


class MultiSlotDataGenerator(DataGenerator):
    """Writes samples whose values are ints or floats. The first sample fixes
    the slots (names and order); a slot is "uint64" until a float value
    appears in it, then "float" (``_proto_info`` records them).

    >>> from oar.distributed.fleet import MultiSlotDataGenerator
    >>> g = MultiSlotDataGenerator()
    >>> g._gen_str([("words", [1926, 8, 17]), ("label", [1])])
    '3 1926 8 17 1 1\\n'
    >>> g._gen_str([("words", [0.5]), ("label", [0])])
    '1 0.5 1 0\\n'
    >>> g._proto_info
    [('words', 'float'), ('label', 'uint64')]
    """

    _API = "oar.distributed.fleet.MultiSlotDataGenerator"

    def _gen_str(self, line):
        line = self._slots(line)
        # Checked in full before _proto_info changes, so a bad sample leaves it as it was.
        info = [(name, "uint64") for name, _ in line] if self._proto_info is None else list(self._proto_info)
        if len(line) != len(info):
            raise ValueError(f"[{self._API}] a sample has {len(line)} slots, the first had "
                             f"{len(info)}")
        parts = []
        for i, (name, values) in enumerate(line):
            if name != info[i][0]:
                raise ValueError(f"[{self._API}] slot {i} is named {name!r}, the first sample named it "
                                 f"{info[i][0]!r}")
            for v in values:
                if isinstance(v, float):
                    info[i] = (name, "float")
                elif not isinstance(v, int):
                    raise TypeError(f"[{self._API}] the values of slot {name!r} must be int or float, "
                                    f"got {type(v).__name__} ({v!r})")
            parts.append(" ".join([str(len(values))] + [str(v) for v in values]))
        self._proto_info = info
        return " ".join(parts) + "\n"
