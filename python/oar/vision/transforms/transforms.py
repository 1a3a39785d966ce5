"""Image transform classes (``paddle.vision.transforms``).

Random transforms draw from Python's ``random`` module, as Paddle's do; DataLoader
workers seed it per worker.
"""
import math
import numbers
import random
from collections.abc import Sequence

import numpy as np

from . import functional as F

__all__ = [
    "BaseTransform", "Compose", "ToTensor", "Normalize", "Resize", "CenterCrop", "RandomCrop",
    "RandomHorizontalFlip", "RandomVerticalFlip", "RandomResizedCrop", "Pad", "Transpose", "Grayscale",
    "BrightnessTransform", "ContrastTransform", "SaturationTransform", "HueTransform", "ColorJitter",
    "RandomRotation",
]


class Compose:
    """Applies transforms one after another.

    >>> import numpy as np
    >>> from oar.vision import transforms as T
    >>> t = T.Compose([T.CenterCrop(2), T.ToTensor()])
    >>> t(np.zeros((4, 4, 3), np.uint8)).shape
    [3, 2, 2]
    """

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, data):
        for t in self.transforms:
            data = t(data)
        return data

    def __repr__(self):
        return "Compose(" + ", ".join(type(t).__name__ for t in self.transforms) + ")"


class BaseTransform:
    """Base class: subclasses define ``_apply_image`` (and optionally ``_apply_<key>``).

    Called on one input, the transform applies to it as an 'image'. Called on a tuple,
    input i is handled as ``keys[i]`` (default ``('image',)``); inputs past ``keys`` and
    keys without an ``_apply_<key>`` method pass through unchanged.

    >>> import numpy as np
    >>> from oar.vision.transforms import BaseTransform
    >>> class AddOne(BaseTransform):
    ...     def _apply_image(self, img):
    ...         return img + 1
    >>> AddOne()((np.zeros(1), "label"))
    (array([1.]), 'label')
    """

    def __init__(self, keys=None):
        if keys is None:
            keys = ("image",)
        elif not isinstance(keys, Sequence) or isinstance(keys, str):
            raise ValueError(f"[oar.vision.transforms.BaseTransform] keys must be a sequence of names, got {keys!r}")
        self.keys = tuple(keys)
        self.params = None

    def _get_params(self, inputs):
        return None

    def __call__(self, inputs):
        single = not isinstance(inputs, tuple)
        if single:
            inputs = (inputs,)
        self.params = self._get_params(inputs)
        outputs = []
        for i, x in enumerate(inputs):
            fn = getattr(self, f"_apply_{self.keys[i]}", None) if i < len(self.keys) else None
            outputs.append(x if fn is None else fn(x))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _apply_image(self, img):
        raise NotImplementedError(f"[oar.vision.transforms] {type(self).__name__} must implement _apply_image")


class ToTensor(BaseTransform):
    """PIL image or HWC array -> Tensor (CHW by default); uint8 becomes float32 in [0, 1].

    >>> import numpy as np
    >>> from oar.vision.transforms import ToTensor
    >>> ToTensor()(np.zeros((2, 3), np.uint8)).shape
    [1, 2, 3]
    """

    def __init__(self, data_format="CHW", keys=None):
        super().__init__(keys)
        self.data_format = data_format

    def _apply_image(self, img):
        return F.to_tensor(img, self.data_format)


class Normalize(BaseTransform):
    """(img - mean) / std per channel.

    >>> import numpy as np
    >>> from oar.vision.transforms import Normalize
    >>> Normalize(mean=0.5, std=0.5)(np.ones((1, 1, 1), np.float32)).ravel().tolist()
    [1.0]
    """

    def __init__(self, mean=0.0, std=1.0, data_format="CHW", to_rgb=False, keys=None):
        super().__init__(keys)
        self.mean = [mean] if isinstance(mean, numbers.Number) else list(mean)
        self.std = [std] if isinstance(std, numbers.Number) else list(std)
        self.data_format = data_format
        self.to_rgb = to_rgb

    def _apply_image(self, img):
        return F.normalize(img, self.mean, self.std, self.data_format, self.to_rgb)


class Resize(BaseTransform):
    """Resizes to (height, width), or the shorter side to an int size.

    >>> import numpy as np
    >>> from oar.vision.transforms import Resize
    >>> Resize((2, 3))(np.zeros((4, 4), np.uint8)).shape
    (2, 3)
    """

    def __init__(self, size, interpolation="bilinear", keys=None):
        super().__init__(keys)
        self.size = size
        self.interpolation = interpolation

    def _apply_image(self, img):
        return F.resize(img, self.size, self.interpolation)


class CenterCrop(BaseTransform):
    """Crops the centre to `size` (int or (height, width)).

    >>> import numpy as np
    >>> from oar.vision.transforms import CenterCrop
    >>> CenterCrop(1)(np.arange(9).reshape(3, 3)).tolist()
    [[4]]
    """

    def __init__(self, size, keys=None):
        super().__init__(keys)
        self.size = size

    def _apply_image(self, img):
        return F.center_crop(img, self.size)


class RandomCrop(BaseTransform):
    """Crops a random `size` region, after optional `padding` (and padding small images if `pad_if_needed`).

    >>> import numpy as np
    >>> from oar.vision.transforms import RandomCrop
    >>> RandomCrop(2, padding=1)(np.ones((3, 3), np.uint8)).shape
    (2, 2)
    """

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant", keys=None):
        super().__init__(keys)
        self.size = F._pair(size, "oar.vision.transforms.RandomCrop")
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def _apply_image(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        h, w = F._size_hw(img)
        th, tw = self.size
        if self.pad_if_needed and w < tw:
            img = F.pad(img, (tw - w, 0), self.fill, self.padding_mode)
        if self.pad_if_needed and h < th:
            img = F.pad(img, (0, th - h), self.fill, self.padding_mode)
        h, w = F._size_hw(img)
        if h < th or w < tw:
            raise ValueError(f"[oar.vision.transforms.RandomCrop] crop size {(th, tw)} exceeds the image size "
                             f"{(h, w)}; pass padding or pad_if_needed=True")
        i = random.randint(0, h - th)
        j = random.randint(0, w - tw)
        return F.crop(img, i, j, th, tw)


class RandomHorizontalFlip(BaseTransform):
    """Mirrors left-right with probability `prob`.

    >>> import numpy as np
    >>> from oar.vision.transforms import RandomHorizontalFlip
    >>> RandomHorizontalFlip(prob=1.0)(np.array([[1, 2]])).tolist()
    [[2, 1]]
    """

    def __init__(self, prob=0.5, keys=None):
        super().__init__(keys)
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"[oar.vision.transforms.RandomHorizontalFlip] prob must be in [0, 1], got {prob}")
        self.prob = prob

    def _apply_image(self, img):
        return F.hflip(img) if random.random() < self.prob else img


class RandomVerticalFlip(BaseTransform):
    """Flips upside down with probability `prob`.

    >>> import numpy as np
    >>> from oar.vision.transforms import RandomVerticalFlip
    >>> RandomVerticalFlip(prob=1.0)(np.array([[1], [2]])).tolist()
    [[2], [1]]
    """

    def __init__(self, prob=0.5, keys=None):
        super().__init__(keys)
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"[oar.vision.transforms.RandomVerticalFlip] prob must be in [0, 1], got {prob}")
        self.prob = prob

    def _apply_image(self, img):
        return F.vflip(img) if random.random() < self.prob else img


class RandomResizedCrop(BaseTransform):
    """Crops a random area fraction (`scale`) with a random aspect ratio (`ratio`), resized to `size`.

    >>> import numpy as np
    >>> from oar.vision.transforms import RandomResizedCrop
    >>> RandomResizedCrop(4)(np.zeros((10, 12, 3), np.uint8)).shape
    (4, 4, 3)
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4, 4.0 / 3), interpolation="bilinear", keys=None):
        super().__init__(keys)
        self.size = F._pair(size, "oar.vision.transforms.RandomResizedCrop")
        if scale[0] > scale[1] or ratio[0] > ratio[1] or scale[0] < 0 or ratio[0] <= 0:
            raise ValueError(f"[oar.vision.transforms.RandomResizedCrop] scale and ratio must be increasing "
                             f"positive ranges, got scale={scale} ratio={ratio}")
        self.scale = scale
        self.ratio = ratio
        self.interpolation = interpolation

    def _get_param(self, img, attempts=10):
        h, w = F._size_hw(img)
        area = h * w
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(attempts):
            target = random.uniform(*self.scale) * area
            aspect = math.exp(random.uniform(*log_ratio))
            cw = int(round(math.sqrt(target * aspect)))
            ch = int(round(math.sqrt(target / aspect)))
            if 0 < cw <= w and 0 < ch <= h:
                return random.randint(0, h - ch), random.randint(0, w - cw), ch, cw
        # Fall back to a central crop with the ratio clamped to the allowed range.
        in_ratio = w / h
        if in_ratio < min(self.ratio):
            cw, ch = w, int(round(w / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            ch, cw = h, int(round(h * max(self.ratio)))
        else:
            cw, ch = w, h
        return (h - ch) // 2, (w - cw) // 2, ch, cw

    def _apply_image(self, img):
        i, j, h, w = self._get_param(img)
        return F.resize(F.crop(img, i, j, h, w), self.size, self.interpolation)


class Pad(BaseTransform):
    """Pads the borders (see :func:`functional.pad`).

    >>> import numpy as np
    >>> from oar.vision.transforms import Pad
    >>> Pad(1)(np.ones((1, 1), np.uint8)).tolist()
    [[0, 0, 0], [0, 1, 0], [0, 0, 0]]
    """

    def __init__(self, padding, fill=0, padding_mode="constant", keys=None):
        super().__init__(keys)
        F._padding4(padding, "oar.vision.transforms.Pad")
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def _apply_image(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


class Transpose(BaseTransform):
    """Permutes the axes of an array (default HWC -> CHW); PIL images become arrays first.

    >>> import numpy as np
    >>> from oar.vision.transforms import Transpose
    >>> Transpose()(np.zeros((2, 3, 4))).shape
    (4, 2, 3)
    """

    def __init__(self, order=(2, 0, 1), keys=None):
        super().__init__(keys)
        self.order = tuple(order)

    def _apply_image(self, img):
        if F._is_tensor(img):
            return img.transpose(list(self.order))
        arr = np.asarray(img)
        if arr.ndim == 2:
            arr = arr[:, :, None]
        return arr.transpose(self.order)


class Grayscale(BaseTransform):
    """Converts to grayscale with 1 or 3 output channels.

    >>> import numpy as np
    >>> from oar.vision.transforms import Grayscale
    >>> Grayscale(3)(np.zeros((2, 2, 3), np.uint8)).shape
    (2, 2, 3)
    """

    def __init__(self, num_output_channels=1, keys=None):
        super().__init__(keys)
        self.num_output_channels = num_output_channels

    def _apply_image(self, img):
        return F.to_grayscale(img, self.num_output_channels)


def _factor_range(value, api, name, center=1.0, bound=(0.0, float("inf"))):
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"[{api}] {name} must be non-negative, got {value}")
        lo, hi = center - value, center + value
        return (max(lo, bound[0]), min(hi, bound[1]))
    if isinstance(value, (list, tuple)) and len(value) == 2 and bound[0] <= value[0] <= value[1] <= bound[1]:
        return (float(value[0]), float(value[1]))
    raise ValueError(f"[{api}] {name} must be a non-negative number or an increasing pair within {bound}, got {value!r}")


class BrightnessTransform(BaseTransform):
    """Scales brightness by a random factor in [max(0, 1 - value), 1 + value].

    >>> import numpy as np
    >>> from oar.vision.transforms import BrightnessTransform
    >>> BrightnessTransform(0.0)(np.full((1, 1, 3), 7, np.uint8)).ravel().tolist()
    [7, 7, 7]
    """

    def __init__(self, value, keys=None):
        super().__init__(keys)
        self.value = _factor_range(value, "oar.vision.transforms.BrightnessTransform", "value")

    def _apply_image(self, img):
        return F.adjust_brightness(img, random.uniform(*self.value))


class ContrastTransform(BaseTransform):
    """Scales contrast by a random factor in [max(0, 1 - value), 1 + value].

    >>> import numpy as np
    >>> from oar.vision.transforms import ContrastTransform
    >>> ContrastTransform(0.5)(np.zeros((2, 2, 3), np.uint8)).shape
    (2, 2, 3)
    """

    def __init__(self, value, keys=None):
        super().__init__(keys)
        self.value = _factor_range(value, "oar.vision.transforms.ContrastTransform", "value")

    def _apply_image(self, img):
        return F.adjust_contrast(img, random.uniform(*self.value))


class SaturationTransform(BaseTransform):
    """Scales saturation by a random factor in [max(0, 1 - value), 1 + value].

    >>> import numpy as np
    >>> from oar.vision.transforms import SaturationTransform
    >>> SaturationTransform(0.5)(np.zeros((2, 2, 3), np.uint8)).shape
    (2, 2, 3)
    """

    def __init__(self, value, keys=None):
        super().__init__(keys)
        self.value = _factor_range(value, "oar.vision.transforms.SaturationTransform", "value")

    def _apply_image(self, img):
        return F.adjust_saturation(img, random.uniform(*self.value))


class HueTransform(BaseTransform):
    """Shifts hue by a random amount in [-value, value] (value <= 0.5).

    >>> import numpy as np
    >>> from oar.vision.transforms import HueTransform
    >>> HueTransform(0.1)(np.zeros((2, 2, 3), np.uint8)).shape
    (2, 2, 3)
    """

    def __init__(self, value, keys=None):
        super().__init__(keys)
        if isinstance(value, numbers.Number) and value > 0.5:
            raise ValueError(f"[oar.vision.transforms.HueTransform] value must be in [0, 0.5], got {value}")
        self.value = _factor_range(value, "oar.vision.transforms.HueTransform", "value", 0.0, (-0.5, 0.5))

    def _apply_image(self, img):
        return F.adjust_hue(img, random.uniform(*self.value))


class ColorJitter(BaseTransform):
    """Random brightness, contrast, saturation and hue changes, applied in random order.

    >>> import numpy as np
    >>> from oar.vision.transforms import ColorJitter
    >>> ColorJitter(0.4, 0.4, 0.4, 0.1)(np.zeros((4, 4, 3), np.uint8)).shape
    (4, 4, 3)
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0, keys=None):
        super().__init__(keys)
        self.brightness, self.contrast, self.saturation, self.hue = brightness, contrast, saturation, hue
        self._parts = []
        if brightness:
            self._parts.append(BrightnessTransform(brightness))
        if contrast:
            self._parts.append(ContrastTransform(contrast))
        if saturation:
            self._parts.append(SaturationTransform(saturation))
        if hue:
            self._parts.append(HueTransform(hue))

    def _apply_image(self, img):
        parts = list(self._parts)
        random.shuffle(parts)
        for t in parts:
            img = t._apply_image(img)
        return img


class RandomRotation(BaseTransform):
    """Rotates by a random angle in [-degrees, degrees] (or the given (min, max) range).

    >>> import numpy as np
    >>> from oar.vision.transforms import RandomRotation
    >>> RandomRotation((90, 90))(np.array([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """

    def __init__(self, degrees, interpolation="nearest", expand=False, center=None, fill=0, keys=None):
        super().__init__(keys)
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError(f"[oar.vision.transforms.RandomRotation] degrees must be non-negative, got {degrees}")
            degrees = (-degrees, degrees)
        elif not (isinstance(degrees, (list, tuple)) and len(degrees) == 2 and degrees[0] <= degrees[1]):
            raise ValueError(f"[oar.vision.transforms.RandomRotation] degrees must be a number or an increasing pair, "
                             f"got {degrees!r}")
        self.degrees = tuple(degrees)
        self.interpolation, self.expand, self.center, self.fill = interpolation, expand, center, fill

    def _apply_image(self, img):
        angle = random.uniform(*self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)
