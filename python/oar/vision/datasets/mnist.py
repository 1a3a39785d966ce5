"""MNIST and Fashion-MNIST read from local IDX files (gzip-compressed or raw); nothing is downloaded."""
import gzip
import os
import struct

import numpy as np
from .._pil import Image, require as _require_pil

from ...io.dataset import Dataset
from ..image import get_image_backend

__all__ = ["MNIST", "FashionMNIST"]

_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


def _read(path, api):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise ValueError(f"[{api}] {path}: corrupt gzip data ({e})") from e
    return data


def _parse_idx(path, ndim, api):
    """The uint8 array in an IDX file with `ndim` dimensions (magic 0x0000 08 ndim)."""
    data = _read(path, api)
    header = 4 + 4 * ndim
    magic = struct.unpack(">I", data[:4])[0] if len(data) >= 4 else None
    if magic != 0x800 + ndim:
        raise ValueError(f"[{api}] {path}: bad IDX magic number {'(none)' if magic is None else hex(magic)}, expected {0x800 + ndim:#010x} "
                         f"(an unsigned-byte {'image' if ndim == 3 else 'label'} file)")
    if len(data) < header:
        raise ValueError(f"[{api}] {path}: file too short for an IDX header ({len(data)} bytes)")
    dims = struct.unpack(">" + "I" * ndim, data[4:header])
    count = int(np.prod(dims, dtype=np.int64))
    if len(data) - header != count:
        raise ValueError(f"[{api}] {path}: header says {dims} ({count} bytes of data) but the file holds "
                         f"{len(data) - header}")
    return np.frombuffer(data, np.uint8, count, header).reshape(dims)


class MNIST(Dataset):
    """The MNIST handwritten digits (``paddle.vision.datasets.MNIST``), from local IDX files.

    `image_path` and `label_path` default to the standard file names under
    ``~/.cache/oar/dataset/mnist`` (e.g. ``train-images-idx3-ubyte.gz``); files may be gzip
    or raw. A sample is ``(image, label)``: the image is a mode 'L' PIL image with the
    'pil' backend or a float32 HxW array with 'cv2' (before `transform`), the label an
    int64 array of shape [1]. oar never downloads: a missing file raises FileNotFoundError
    naming it.

    >>> import os, struct, tempfile
    >>> import numpy as np
    >>> from oar.vision.datasets import MNIST
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "img"), "wb") as f:
    ...     _ = f.write(struct.pack(">IIII", 2051, 1, 2, 2) + bytes([0, 1, 2, 3]))
    >>> with open(os.path.join(d, "lab"), "wb") as f:
    ...     _ = f.write(struct.pack(">II", 2049, 1) + bytes([7]))
    >>> ds = MNIST(os.path.join(d, "img"), os.path.join(d, "lab"), backend="cv2")
    >>> img, label = ds[0]
    >>> img.tolist(), label.tolist(), len(ds)
    ([[0.0, 1.0], [2.0, 3.0]], [7], 1)
    """

    NAME = "mnist"

    def __init__(self, image_path=None, label_path=None, mode="train", transform=None, download=True, backend=None):
        api = f"oar.vision.datasets.{type(self).__name__}"
        mode = str(mode).lower()
        if mode not in _FILES:
            raise ValueError(f"[{api}] mode must be 'train' or 'test', got {mode!r}")
        backend = get_image_backend() if backend is None else backend
        if backend not in ("pil", "cv2"):
            raise ValueError(f"[{api}] backend must be 'pil' or 'cv2', got {backend!r}")
        root = os.path.join(os.path.expanduser("~"), ".cache", "oar", "dataset", self.NAME)
        image_path = image_path or os.path.join(root, _FILES[mode][0])
        label_path = label_path or os.path.join(root, _FILES[mode][1])
        for p in (image_path, label_path):
            if not os.path.isfile(p):
                raise FileNotFoundError(f"[{api}] file not found: {p}. oar does not download data sets; place the "
                                        f"{self.NAME} IDX files there or pass image_path and label_path")
        self.mode, self.backend, self.transform = mode, backend, transform
        self.image_path, self.label_path = image_path, label_path
        self.images = _parse_idx(image_path, 3, api)
        self.labels = _parse_idx(label_path, 1, api)
        if len(self.images) != len(self.labels):
            raise ValueError(f"[{api}] {image_path} holds {len(self.images)} images but {label_path} holds "
                             f"{len(self.labels)} labels")
        self.dtype = "float32"

    def __getitem__(self, idx):
        image = self.images[idx]
        label = np.array([self.labels[idx]], dtype=np.int64)
        if self.backend == "pil":
            image = _require_pil("oar.vision.datasets.MNIST").fromarray(image, mode="L")
        else:
            image = image.astype(np.float32)
        if self.transform is not None:
            image = self.transform(image)
        return image, label

    def __len__(self):
        return len(self.labels)


class FashionMNIST(MNIST):
    """Fashion-MNIST (same IDX format and arguments as :class:`MNIST`; default folder ``fashion-mnist``).

    >>> from oar.vision.datasets import FashionMNIST
    >>> try:
    ...     FashionMNIST(image_path="/nonexistent/images.gz", label_path="/nonexistent/labels.gz")
    ... except FileNotFoundError as e:
    ...     print("/nonexistent/images.gz" in str(e))
    True
    """

    NAME = "fashion-mnist"
