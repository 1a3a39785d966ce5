"""Datasets read from folders of image files (``paddle.vision.datasets.DatasetFolder`` / ``ImageFolder``)."""
import os

import numpy as np
from .._pil import Image, require as _require_pil

from ...io.dataset import Dataset
from ..image import get_image_backend

__all__ = ["DatasetFolder", "ImageFolder", "IMG_EXTENSIONS", "has_valid_extension", "default_loader"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_valid_extension(filename, extensions):
    """Whether `filename` ends with one of `extensions` (case-insensitive).

    >>> from oar.vision.datasets import has_valid_extension
    >>> has_valid_extension("a/B.PNG", (".png",)), has_valid_extension("x.txt", (".png",))
    (True, False)
    """
    return filename.lower().endswith(tuple(e.lower() for e in extensions))


def default_loader(path):
    """Opens an image as RGB: a PIL image, or an HWC uint8 array with the 'cv2' backend.

    >>> import os, tempfile
    >>> import numpy as np
    >>> from PIL import Image
    >>> from oar.vision.datasets import default_loader
    >>> p = os.path.join(tempfile.mkdtemp(), "g.png")
    >>> Image.fromarray(np.zeros((2, 2), np.uint8)).save(p)
    >>> default_loader(p).mode
    'RGB'
    """
    _require_pil("oar.vision.datasets.folder")
    with open(path, "rb") as f:
        img = Image.open(f).convert("RGB")
    return np.asarray(img) if get_image_backend() == "cv2" else img


def _validator(api, extensions, is_valid_file):
    if extensions is not None and is_valid_file is not None:
        raise ValueError(f"[{api}] give at most one of extensions and is_valid_file")
    if is_valid_file is not None:
        return is_valid_file
    exts = IMG_EXTENSIONS if extensions is None else tuple(extensions)
    return lambda p: has_valid_extension(p, exts)


def _walk(root):
    for dirpath, dirnames, fnames in sorted(os.walk(root, followlinks=True)):
        dirnames.sort()
        for name in sorted(fnames):
            yield os.path.join(dirpath, name)


class DatasetFolder(Dataset):
    """Samples from ``root/<class>/**/<file>``: class names are the sorted sub-folders of root.

    A sample is ``(loader(path) after transform, class_index)``. Files are kept when they
    have one of `extensions` (default: common image types) or pass `is_valid_file`.
    Attributes ``classes``, ``class_to_idx``, ``samples`` (path, index) and ``targets``.

    >>> import os, tempfile
    >>> from oar.vision.datasets import DatasetFolder
    >>> root = tempfile.mkdtemp()
    >>> for c in ("cat", "dog"):
    ...     os.mkdir(os.path.join(root, c))
    ...     with open(os.path.join(root, c, "x.txt"), "w") as f:
    ...         _ = f.write(c)
    >>> ds = DatasetFolder(root, loader=lambda p: open(p).read(), extensions=(".txt",))
    >>> ds.classes, ds[1]
    (['cat', 'dog'], ('dog', 1))
    """

    def __init__(self, root, loader=None, extensions=None, transform=None, is_valid_file=None):
        api = f"oar.vision.datasets.{type(self).__name__}"
        if not os.path.isdir(root):
            raise FileNotFoundError(f"[{api}] root folder not found: {root}")
        valid = _validator(api, extensions, is_valid_file)
        classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
        class_to_idx = {c: i for i, c in enumerate(classes)}
        samples = [(p, class_to_idx[c]) for c in classes for p in _walk(os.path.join(root, c)) if valid(p)]
        if not samples:
            raise RuntimeError(f"[{api}] found no valid files in the sub-folders of {root} (extensions: "
                               f"{', '.join(extensions or IMG_EXTENSIONS) if is_valid_file is None else 'custom'})")
        self.root, self.transform = root, transform
        self.loader = default_loader if loader is None else loader
        self.extensions = IMG_EXTENSIONS if extensions is None else tuple(extensions)
        self.classes, self.class_to_idx = classes, class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        return sample, target

    def __len__(self):
        return len(self.samples)


class ImageFolder(Dataset):
    """Every valid file under `root` (recursively, sorted), without labels; a sample is ``[image]``.

    This is Paddle's ImageFolder (e.g. for inference over a folder); use
    :class:`DatasetFolder` for one class per sub-folder.

    >>> import os, tempfile
    >>> import numpy as np
    >>> from PIL import Image
    >>> from oar.vision.datasets import ImageFolder
    >>> root = tempfile.mkdtemp()
    >>> Image.fromarray(np.zeros((3, 2, 3), np.uint8)).save(os.path.join(root, "a.png"))
    >>> ds = ImageFolder(root)
    >>> len(ds), ds[0][0].size
    (1, (2, 3))
    """

    def __init__(self, root, loader=None, extensions=None, transform=None, is_valid_file=None):
        api = "oar.vision.datasets.ImageFolder"
        if not os.path.isdir(root):
            raise FileNotFoundError(f"[{api}] root folder not found: {root}")
        valid = _validator(api, extensions, is_valid_file)
        samples = [p for p in _walk(root) if valid(p)]
        if not samples:
            raise RuntimeError(f"[{api}] found no valid files under {root}")
        self.root, self.transform = root, transform
        self.loader = default_loader if loader is None else loader
        self.extensions = IMG_EXTENSIONS if extensions is None else tuple(extensions)
        self.samples = samples

    def __getitem__(self, index):
        sample = self.loader(self.samples[index])
        if self.transform is not None:
            sample = self.transform(sample)
        return [sample]

    def __len__(self):
        return len(self.samples)
