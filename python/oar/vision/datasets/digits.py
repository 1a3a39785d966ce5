"""The 8x8 handwritten digits that scikit-learn ships with its package (no download needed)."""
import numpy as np

from ...io.dataset import Dataset

__all__ = ["Digits"]


class Digits(Dataset):
    """The 1,797 8x8 handwritten digits of ``sklearn.datasets.load_digits``, split into train and test.

    The split is a fixed random permutation (``numpy.random.RandomState(seed)``): the first
    ``round(1797 * test_ratio)`` images are the test set, the rest the training set, so the
    two never overlap. A sample is ``(image, label)``: a float32 [1, 8, 8] image with values
    ``pixel / 16`` in [0, 1] (passed through `transform` if given) and an int64 label of
    shape [1], like MNIST's.

    >>> from oar.vision.datasets import Digits
    >>> train, test = Digits(mode="train"), Digits(mode="test")
    >>> len(train), len(test)
    (1438, 359)
    >>> img, label = train[0]
    >>> img.shape, img.dtype, label.dtype
    ((1, 8, 8), dtype('float32'), dtype('int64'))
    """

    def __init__(self, mode="train", transform=None, test_ratio=0.2, seed=0):
        api = "oar.vision.datasets.Digits"
        mode = str(mode).lower()
        if mode not in ("train", "test"):
            raise ValueError(f"[{api}] mode must be 'train' or 'test', got {mode!r}")
        if not 0.0 < float(test_ratio) < 1.0:
            raise ValueError(f"[{api}] test_ratio must be in (0, 1), got {test_ratio!r}")
        try:
            from sklearn.datasets import load_digits
        except ImportError as e:
            raise ImportError(f"[{api}] needs scikit-learn, which ships the digits data (pip install "
                              "scikit-learn)") from e
        data = load_digits()
        n = len(data.target)
        perm = np.random.RandomState(seed).permutation(n)
        n_test = int(round(n * float(test_ratio)))
        self.indices = np.sort(perm[:n_test] if mode == "test" else perm[n_test:])
        self.images = (data.images[self.indices] / 16.0).astype(np.float32)[:, None, :, :]
        self.labels = data.target[self.indices].astype(np.int64)
        self.mode, self.transform = mode, transform

    def __getitem__(self, idx):
        image = self.images[idx]
        if self.transform is not None:
            image = self.transform(image)
        return image, np.array([self.labels[idx]], dtype=np.int64)

    def __len__(self):
        return len(self.labels)
