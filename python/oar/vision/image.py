"""The image backend setting shared by the datasets ('pil' gives PIL images, 'cv2' NumPy arrays)."""
import numpy as np
from ._pil import Image, require as _require_pil

__all__ = ["get_image_backend", "set_image_backend", "image_load"]

_backend = "pil"


def set_image_backend(backend):
    """Chooses what datasets return by default: 'pil' (PIL images) or 'cv2' (HWC NumPy arrays).

    >>> import oar.vision
    >>> oar.vision.set_image_backend("cv2"); oar.vision.get_image_backend()
    'cv2'
    >>> oar.vision.set_image_backend("pil")
    """
    global _backend
    if backend not in ("pil", "cv2"):
        raise ValueError(f"[oar.vision.set_image_backend] backend must be 'pil' or 'cv2', got {backend!r}")
    _backend = backend


def get_image_backend():
    """The current image backend, 'pil' or 'cv2'.

    >>> import oar.vision
    >>> oar.vision.get_image_backend() in ("pil", "cv2")
    True
    """
    return _backend


def image_load(path, backend=None):
    """Loads an image file as a PIL image ('pil') or an RGB HWC uint8 NumPy array ('cv2').

    >>> import os, tempfile
    >>> import numpy as np
    >>> from PIL import Image
    >>> import oar.vision
    >>> p = os.path.join(tempfile.mkdtemp(), "a.png")
    >>> Image.fromarray(np.zeros((2, 3, 3), np.uint8)).save(p)
    >>> oar.vision.image_load(p, backend="cv2").shape
    (2, 3, 3)
    """
    backend = backend or _backend
    if backend not in ("pil", "cv2"):
        raise ValueError(f"[oar.vision.image_load] backend must be 'pil' or 'cv2', got {backend!r}")
    _require_pil("oar.vision.image_load")
    if backend == "pil":
        return Image.open(path)
    with Image.open(path) as img:
        return np.asarray(img.convert("RGB"))
