"""Unique names: ``generate(key)`` gives ``key_0``, ``key_1``, ... (paddle.utils.unique_name).

Layers and parameters without a given name take one from here.
"""
import contextlib
import threading

__all__ = ["generate", "switch", "guard"]


class UniqueNameGenerator:
    """Counts the names given per key; `prefix` is put before every name."""

    def __init__(self, prefix=None):
        self.prefix = "" if prefix is None else str(prefix)
        self.ids = {}
        self._lock = threading.Lock()

    def __call__(self, key):
        with self._lock:
            n = self.ids.get(key, 0)
            self.ids[key] = n + 1
        return f"{self.prefix}{key}_{n}"


_generator = UniqueNameGenerator()


def generate(key):
    """The next unique name for `key`: ``key_0``, then ``key_1``, ...

    >>> from oar.utils import unique_name
    >>> with unique_name.guard():
    ...     unique_name.generate("fc"), unique_name.generate("fc"), unique_name.generate("conv")
    ('fc_0', 'fc_1', 'conv_0')
    """
    if not isinstance(key, str):
        raise TypeError(f"[oar.utils.unique_name.generate] key must be a str, got {type(key).__name__}")
    return _generator(key)


def switch(new_generator=None, new_para_name_checker=None):
    """Makes `new_generator` (a fresh one when None) the current generator and returns the
    previous one, which can be passed back to restore it.

    >>> from oar.utils import unique_name
    >>> old = unique_name.switch()
    >>> unique_name.generate("w")
    'w_0'
    >>> _ = unique_name.switch(old)
    """
    global _generator
    if new_generator is None:
        new_generator = UniqueNameGenerator()
    elif not isinstance(new_generator, UniqueNameGenerator):
        raise TypeError(f"[oar.utils.unique_name.switch] new_generator must be a UniqueNameGenerator (as switch "
                        f"returns) or None, got {type(new_generator).__name__}")
    old, _generator = _generator, new_generator
    return old


@contextlib.contextmanager
def guard(new_generator=None):
    """A ``with`` block with its own name counts. `new_generator` may be a
    prefix (str or bytes) or a generator returned by switch.

    Layer and parameter names come from here too, so a model built inside a
    fresh guard gets the names a new process would give it (the names that
    optimizer checkpoints are keyed by).

    >>> from oar.utils import unique_name
    >>> with unique_name.guard("A_"):
    ...     unique_name.generate("fc")
    'A_fc_0'
    >>> import oar
    >>> with unique_name.guard():
    ...     fc = oar.nn.Linear(2, 2)
    >>> fc.full_name(), fc.weight.name, fc.bias.name
    ('linear_0', 'linear_0.w_0', 'linear_0.b_0')
    """
    if isinstance(new_generator, (str, bytes)):
        prefix = new_generator.decode() if isinstance(new_generator, bytes) else new_generator
        new_generator = UniqueNameGenerator(prefix)
    old = switch(new_generator)
    try:
        yield
    finally:
        switch(old)
