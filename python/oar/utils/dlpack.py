"""DLPack interop: to_dlpack / from_dlpack (zero-copy)."""
from .. import _C


def to_dlpack(x):
    """A DLPack capsule sharing x's memory.

    >>> import oar, numpy as np
    >>> a = np.from_dlpack(oar.to_tensor([1.0, 2.0]))
    >>> a.tolist()
    [1.0, 2.0]
    """
    return x.__dlpack__()


def from_dlpack(dlpack):
    """A Tensor sharing the memory of an object with __dlpack__ (or a capsule).

    >>> import oar, numpy as np
    >>> oar.from_dlpack(np.arange(3.0)).numpy().tolist()
    [0.0, 1.0, 2.0]
    """
    return _C.from_dlpack(dlpack)
