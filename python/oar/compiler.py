"""The kernel compiler: fused groups of captured programs run as C++ kernels
generated for this machine's CPU, compiled at run time by the system compiler
and cached on disk.

It is on by default wherever graph passes fuse ops (``oar.jit.to_static``,
static-graph training, the inference runtime); eager mode runs op by op.
``OAR_COMPILER=0`` in the environment, :func:`set_enabled` (``False``), or a
``BuildStrategy`` with ``fuse_elementwise=False`` turn it off. Settings read
from the environment:

- ``OAR_COMPILER_CACHE``: the cache directory (default
  ``$XDG_CACHE_HOME/oar/kernels`` or ``~/.cache/oar/kernels``).
- ``OAR_CXX``: the C++ compiler (default ``c++`` on ``PATH``). Without one,
  fused groups run on oar's interpreter for them, after one warning.

Example:
    >>> import oar
    >>> oar.compiler.enabled() in (True, False)
    True
    >>> sorted(oar.compiler.stats())[:2]
    ['compile_seconds', 'compiled']
"""
from . import _C

__all__ = ["enabled", "set_enabled", "stats", "cache_dir", "compiler_path", "reset_memory_cache"]


def enabled():
    """Whether fused groups run as generated kernels.

    Example:
        >>> import oar
        >>> isinstance(oar.compiler.enabled(), bool)
        True
    """
    return _C._compiler_enabled()


def set_enabled(flag):
    """Turns generated kernels on or off for this process (``OAR_COMPILER=0``
    sets the start-up value); returns the previous setting.

    Example:
        >>> import oar
        >>> before = oar.compiler.set_enabled(False)
        >>> oar.compiler.enabled()
        False
        >>> _ = oar.compiler.set_enabled(before)
    """
    if not isinstance(flag, bool):
        raise TypeError(f"[oar.compiler.set_enabled] flag must be a bool, got {type(flag).__name__}")
    before = _C._compiler_enabled()
    _C._compiler_set_enabled(flag)
    return before


def stats():
    """Counters of this process: ``compiled`` (libraries built),
    ``disk_hits`` (found in the disk cache), ``memory_hits``, ``failures``
    (groups left to the interpreter), ``compile_seconds``, ``load_seconds``
    and ``runs`` (calls of generated kernels).

    Example:
        >>> import oar
        >>> oar.compiler.stats()["failures"] >= 0
        True
    """
    return dict(_C._compiler_stats())


def cache_dir():
    """The directory of the kernel cache.

    Example:
        >>> import oar
        >>> len(oar.compiler.cache_dir()) > 0
        True
    """
    return _C._compiler_cache_dir()


def compiler_path():
    """The C++ compiler that builds kernels, or ``""`` when none was found.

    Example:
        >>> import oar
        >>> isinstance(oar.compiler.compiler_path(), str)
        True
    """
    return _C._compiler_path()


def reset_memory_cache():
    """Forgets the kernels loaded by this process, so that the next run reads
    the disk cache again, and re-reads ``OAR_CXX`` and
    ``OAR_COMPILER_CACHE``. Kernels already handed out stay valid.

    Example:
        >>> import oar
        >>> oar.compiler.reset_memory_cache()
    """
    _C._compiler_reset_memory_cache()
