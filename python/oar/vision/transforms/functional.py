"""Image transforms as functions (``paddle.vision.transforms.functional``).

Each function accepts a PIL image, a NumPy array in HWC (or HW) layout, or an oar Tensor
in CHW (or HW) layout, and returns the same kind. NumPy geometry follows pixel-centre
conventions (a pixel covers [i, i + 1)); resizing with 'nearest'/'bilinear' uses
half-pixel centres like OpenCV's, rotation matches PIL's.
"""
import math
import numbers

import numpy as np
from .._pil import Image, require as _require_pil

from ... import _C

__all__ = [
    "to_tensor", "hflip", "vflip", "crop", "center_crop", "resize", "pad", "rotate", "to_grayscale",
    "normalize", "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue", "erase",
]

_PIL_FILTERS = {} if Image is None else {
    "nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "box": Image.BOX,
    "area": Image.BOX, "lanczos": Image.LANCZOS, "hamming": Image.HAMMING,
}


def _is_pil(img):
    return Image is not None and isinstance(img, Image.Image)


def _is_tensor(img):
    return isinstance(img, _C.Tensor)


def _check_img(img, api):
    if _is_pil(img) or _is_tensor(img):
        return
    if isinstance(img, np.ndarray):
        if img.ndim not in (2, 3):
            raise ValueError(f"[{api}] a NumPy image must be HW or HWC, got shape {img.shape}")
        return
    raise TypeError(f"[{api}] img must be a PIL image, a NumPy array or an oar Tensor, got {type(img).__name__}")


def _via_numpy(img, fn):
    """Applies fn (HWC NumPy -> HWC NumPy) to a PIL image, NumPy array or CHW Tensor."""
    if _is_pil(img):
        arr = np.asarray(img)
        out = fn(arr)
        mode = img.mode if out.ndim == arr.ndim and out.shape[-1:] == arr.shape[-1:] else None
        return Image.fromarray(np.ascontiguousarray(out), mode=mode)
    if _is_tensor(img):
        arr = img.numpy()
        chw = arr.ndim == 3
        out = fn(arr.transpose(1, 2, 0) if chw else arr)
        out = out.transpose(2, 0, 1) if chw and out.ndim == 3 else out
        return _C.clone(_C.from_numpy(np.ascontiguousarray(out)))
    return fn(img)


def _cast_like(x, dtype):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.rint(x), info.min, info.max).astype(dtype)
    return x.astype(dtype)


def _size_hw(img):
    if _is_pil(img):
        return img.size[1], img.size[0]
    if _is_tensor(img):
        return int(img.shape[-2]), int(img.shape[-1])
    return img.shape[0], img.shape[1]


def to_tensor(pic, data_format="CHW"):
    """A PIL image or HWC NumPy array as a Tensor; uint8 data becomes float32 in [0, 1].

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> t = F.to_tensor(np.full((2, 3, 1), 255, np.uint8))
    >>> t.shape, float(t.numpy().max())
    ([1, 2, 3], 1.0)
    """
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"[oar.vision.transforms.to_tensor] data_format must be 'CHW' or 'HWC', got {data_format!r}")
    if _is_tensor(pic):
        return pic
    if _is_pil(pic):
        arr = np.array(pic)
        if pic.mode == "1":
            arr = arr.astype(np.uint8) * 255
    elif isinstance(pic, np.ndarray):
        arr = pic
    else:
        raise TypeError(f"[oar.vision.transforms.to_tensor] pic must be a PIL image or a NumPy array, "
                        f"got {type(pic).__name__}")
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3:
        raise ValueError(f"[oar.vision.transforms.to_tensor] expects an HW or HWC image, got shape {arr.shape}")
    if data_format == "CHW":
        arr = arr.transpose(2, 0, 1)
    arr = arr.astype(np.float32) / 255.0 if arr.dtype == np.uint8 else arr
    return _C.clone(_C.from_numpy(np.ascontiguousarray(arr)))


def hflip(img):
    """Mirrors the image left to right.

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.hflip(np.array([[1, 2, 3]])).tolist()
    [[3, 2, 1]]
    """
    _check_img(img, "oar.vision.transforms.hflip")
    if _is_pil(img):
        return img.transpose(Image.FLIP_LEFT_RIGHT)
    return _via_numpy(img, lambda a: a[:, ::-1].copy())


def vflip(img):
    """Flips the image upside down.

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.vflip(np.array([[1], [2]])).tolist()
    [[2], [1]]
    """
    _check_img(img, "oar.vision.transforms.vflip")
    if _is_pil(img):
        return img.transpose(Image.FLIP_TOP_BOTTOM)
    return _via_numpy(img, lambda a: a[::-1].copy())


def crop(img, top, left, height, width):
    """The region of `height` x `width` pixels whose top-left corner is (top, left).

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.crop(np.arange(16).reshape(4, 4), 1, 2, 2, 2).tolist()
    [[6, 7], [10, 11]]
    """
    _check_img(img, "oar.vision.transforms.crop")
    if height <= 0 or width <= 0:
        raise ValueError(f"[oar.vision.transforms.crop] height and width must be positive, got {height}, {width}")
    h, w = _size_hw(img)
    if top < 0 or left < 0 or top + height > h or left + width > w:
        raise ValueError(f"[oar.vision.transforms.crop] region (top={top}, left={left}, height={height}, "
                         f"width={width}) exceeds the image size {h}x{w}")
    if _is_pil(img):
        return img.crop((left, top, left + width, top + height))
    return _via_numpy(img, lambda a: a[top:top + height, left:left + width].copy())


def _pair(size, api):
    if isinstance(size, numbers.Integral):
        return int(size), int(size)
    if isinstance(size, (list, tuple)) and len(size) in (1, 2):
        return (int(size[0]), int(size[0])) if len(size) == 1 else (int(size[0]), int(size[1]))
    raise ValueError(f"[{api}] size must be an int or a (height, width) pair, got {size!r}")


def center_crop(img, output_size):
    """The central `output_size` (int, or (height, width)) region.

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.center_crop(np.arange(16).reshape(4, 4), 2).tolist()
    [[5, 6], [9, 10]]
    """
    th, tw = _pair(output_size, "oar.vision.transforms.center_crop")
    h, w = _size_hw(img)
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def _resize_axis_linear(n_in, n_out):
    src = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    src = np.clip(src, 0, n_in - 1)
    i0 = np.floor(src).astype(np.int64)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, (src - i0).astype(np.float64)


def _resize_np(a, oh, ow, interpolation):
    h, w = a.shape[:2]
    if interpolation == "nearest":
        ys = np.minimum((np.arange(oh) * (h / oh)).astype(np.int64), h - 1)
        xs = np.minimum((np.arange(ow) * (w / ow)).astype(np.int64), w - 1)
        return a[ys][:, xs].copy()
    if interpolation == "bilinear":
        y0, y1, wy = _resize_axis_linear(h, oh)
        x0, x1, wx = _resize_axis_linear(w, ow)
        f = a.astype(np.float64)
        shape = (-1, 1) + (1,) * (a.ndim - 2)
        wy = wy.reshape(shape)
        wx = wx.reshape((1, -1) + (1,) * (a.ndim - 2))
        rows = f[y0] * (1 - wy) + f[y1] * wy
        out = rows[:, x0] * (1 - wx) + rows[:, x1] * wx
        return _cast_like(out, a.dtype)
    _require_pil("oar.vision.transforms.resize")  # the other filters come from Pillow
    if interpolation not in _PIL_FILTERS:
        raise ValueError(f"[oar.vision.transforms.resize] unknown interpolation {interpolation!r}; expected one of "
                         f"{sorted(_PIL_FILTERS)}")
    chans = a[:, :, None] if a.ndim == 2 else a
    planes = [np.asarray(Image.fromarray(chans[:, :, c].astype(np.float32), mode="F")
                         .resize((ow, oh), _PIL_FILTERS[interpolation])) for c in range(chans.shape[2])]
    out = np.stack(planes, axis=2)
    return _cast_like(out if a.ndim == 3 else out[:, :, 0], a.dtype)


def resize(img, size, interpolation="bilinear"):
    """Resizes to `size`: (height, width), or an int for the shorter side (keeping the aspect ratio).

    `interpolation` is 'nearest', 'bilinear', 'bicubic', 'box'/'area', 'lanczos' or 'hamming'.

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.resize(np.zeros((4, 8, 3), np.uint8), 2).shape
    (2, 4, 3)
    """
    _check_img(img, "oar.vision.transforms.resize")
    h, w = _size_hw(img)
    if isinstance(size, numbers.Integral):
        if size <= 0:
            raise ValueError(f"[oar.vision.transforms.resize] size must be positive, got {size}")
        if (w <= h and w == size) or (h <= w and h == size):
            return img
        oh, ow = (int(size * h / w), size) if w < h else (size, int(size * w / h))
    else:
        oh, ow = _pair(size, "oar.vision.transforms.resize")
        if oh <= 0 or ow <= 0:
            raise ValueError(f"[oar.vision.transforms.resize] size must be positive, got {size}")
    if _is_pil(img):
        if interpolation not in _PIL_FILTERS:
            raise ValueError(f"[oar.vision.transforms.resize] unknown interpolation {interpolation!r}")
        return img.resize((ow, oh), _PIL_FILTERS[interpolation])
    return _via_numpy(img, lambda a: _resize_np(a, oh, ow, interpolation))


def _padding4(padding, api):
    if isinstance(padding, numbers.Integral):
        return (int(padding),) * 4
    if isinstance(padding, (list, tuple)):
        if len(padding) == 2:
            return int(padding[0]), int(padding[1]), int(padding[0]), int(padding[1])
        if len(padding) == 4:
            return tuple(int(p) for p in padding)
    raise ValueError(f"[{api}] padding must be an int or a sequence of 2 or 4 ints, got {padding!r}")


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pads the borders: `padding` is an int, (left/right, top/bottom) or (left, top, right, bottom).

    `padding_mode` is 'constant' (with `fill`, a number or one value per channel), 'edge',
    'reflect' or 'symmetric'.

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.pad(np.array([[1, 2]]), (1, 0), padding_mode="edge").tolist()
    [[1, 1, 2, 2]]
    """
    api = "oar.vision.transforms.pad"
    _check_img(img, api)
    left, top, right, bottom = _padding4(padding, api)
    if min(left, top, right, bottom) < 0:
        raise ValueError(f"[{api}] padding must be non-negative, got {padding!r}")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError(f"[{api}] padding_mode must be constant, edge, reflect or symmetric, got {padding_mode!r}")

    def fn(a):
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (a.ndim - 2)
        if padding_mode != "constant":
            return np.pad(a, widths, mode=padding_mode)
        if a.ndim == 3 and isinstance(fill, (list, tuple)):
            if len(fill) != a.shape[2]:
                raise ValueError(f"[{api}] fill has {len(fill)} values for {a.shape[2]} channels")
            return np.stack([np.pad(a[:, :, c], widths[:2], constant_values=fill[c]) for c in range(a.shape[2])], 2)
        return np.pad(a, widths, constant_values=fill)

    return _via_numpy(img, fn)


def _rotate_np(a, angle, interpolation, expand, center, fill):
    h, w = a.shape[:2]
    cx, cy = (w / 2.0, h / 2.0) if center is None else (float(center[0]), float(center[1]))
    th = math.radians(angle)
    c, s = math.cos(th), math.sin(th)
    oh, ow, ocx, ocy = h, w, cx, cy
    if expand:
        # Forward-map the corners (counter-clockwise on screen) and take their bounding box.
        xs, ys = [], []
        for x, y in ((0, 0), (w, 0), (0, h), (w, h)):
            dx, dy = x - cx, y - cy
            xs.append(c * dx + s * dy)
            ys.append(-s * dx + c * dy)
        ow = int(math.ceil(max(xs) - min(xs) - 1e-9))
        oh = int(math.ceil(max(ys) - min(ys) - 1e-9))
        ocx, ocy = ow / 2.0, oh / 2.0
    yo, xo = np.meshgrid(np.arange(oh) + 0.5, np.arange(ow) + 0.5, indexing="ij")
    dx, dy = xo - ocx, yo - ocy
    xs = cx + c * dx - s * dy
    ys = cy + s * dx + c * dy
    chans = a[:, :, None] if a.ndim == 2 else a
    fillv = np.broadcast_to(np.asarray(fill, dtype=np.float64), (chans.shape[2],))
    if interpolation == "nearest":
        xi, yi = np.floor(xs).astype(np.int64), np.floor(ys).astype(np.int64)
        ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
        out = np.empty((oh, ow, chans.shape[2]), np.float64)
        out[:] = fillv
        out[ok] = chans[yi[ok], xi[ok]]
    elif interpolation == "bilinear":
        fx, fy = xs - 0.5, ys - 0.5
        x0, y0 = np.floor(fx).astype(np.int64), np.floor(fy).astype(np.int64)
        out = np.zeros((oh, ow, chans.shape[2]), np.float64)
        for ddy in (0, 1):
            for ddx in (0, 1):
                xi, yi = x0 + ddx, y0 + ddy
                wgt = (1 - np.abs(fx - xi)) * (1 - np.abs(fy - yi))
                ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
                vals = np.empty_like(out)
                vals[:] = fillv
                vals[ok] = chans[yi[ok], xi[ok]]
                out += wgt[..., None] * vals
    else:
        raise ValueError(f"[oar.vision.transforms.rotate] interpolation must be 'nearest' or 'bilinear' for "
                         f"arrays and tensors, got {interpolation!r}")
    out = _cast_like(out, a.dtype)
    return out if a.ndim == 3 else out[:, :, 0]


def rotate(img, angle, interpolation="nearest", expand=False, center=None, fill=0):
    """Rotates counter-clockwise by `angle` degrees about `center` (default: the image centre).

    With `expand`, the output grows to hold the whole rotated image; uncovered pixels get `fill`.

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.rotate(np.array([[1, 2], [3, 4]]), 90).tolist()
    [[2, 4], [1, 3]]
    """
    _check_img(img, "oar.vision.transforms.rotate")
    if _is_pil(img):
        if interpolation not in ("nearest", "bilinear", "bicubic"):
            raise ValueError(f"[oar.vision.transforms.rotate] unknown interpolation {interpolation!r}")
        fillcolor = tuple(fill) if isinstance(fill, (list, tuple)) else fill
        return img.rotate(angle, _PIL_FILTERS[interpolation], expand, center, fillcolor=fillcolor)
    return _via_numpy(img, lambda a: _rotate_np(a, angle, interpolation, expand, center, fill))


_GRAY = np.array([0.299, 0.587, 0.114])
# Paddle's tensor path weighs red 0.2989 (PIL and cv2 images: 0.299).
_GRAY_TENSOR = np.array([0.2989, 0.587, 0.114])


def _gray_np(a, weights=_GRAY):
    if a.ndim == 2 or a.shape[2] == 1:
        return (a if a.ndim == 2 else a[:, :, 0]).astype(np.float64)
    return a[:, :, :3].astype(np.float64) @ weights


def to_grayscale(img, num_output_channels=1):
    """Luma (0.299 R + 0.587 G + 0.114 B; for a Tensor 0.2989 R, as Paddle), with 1 or 3 equal output channels.

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.to_grayscale(np.full((1, 1, 3), [100, 200, 50], np.uint8)).tolist()
    [[[153]]]
    """
    api = "oar.vision.transforms.to_grayscale"
    _check_img(img, api)
    if num_output_channels not in (1, 3):
        raise ValueError(f"[{api}] num_output_channels must be 1 or 3, got {num_output_channels}")
    if _is_pil(img):
        g = img.convert("L")
        return g if num_output_channels == 1 else g.convert("RGB")

    weights = _GRAY_TENSOR if isinstance(img, _C.Tensor) else _GRAY

    def fn(a):
        g = _cast_like(_gray_np(a, weights), a.dtype)[:, :, None]
        return np.repeat(g, num_output_channels, axis=2)

    return _via_numpy(img, fn)


def normalize(img, mean, std, data_format="CHW", to_rgb=False):
    """(img - mean) / std per channel; a PIL image or integer array is converted to float32 first.

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.normalize(np.ones((2, 1, 1), np.float32), [1.0, 0.0], [1.0, 2.0]).ravel().tolist()
    [0.0, 0.5]
    """
    api = "oar.vision.transforms.normalize"
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"[{api}] data_format must be 'CHW' or 'HWC', got {data_format!r}")
    if _is_pil(img):
        img = np.asarray(img).astype(np.float32)
    shape = (-1, 1, 1) if data_format == "CHW" else (1, 1, -1)
    m = np.asarray(mean, np.float64).reshape(shape)
    s = np.asarray(std, np.float64).reshape(shape)
    if (s == 0).any():
        raise ValueError(f"[{api}] std must be non-zero, got {std!r}")
    caxis = 0 if data_format == "CHW" else -1
    if _is_tensor(img):
        from ..._manip import flip
        x = img if img.dtype in (_C.dtype.float32, _C.dtype.float64) else _C.cast(img, _C.dtype.float32)
        if to_rgb:
            x = flip(x, [caxis])
        mt = _C.from_numpy(np.ascontiguousarray(m.astype(np.float32 if x.dtype == _C.dtype.float32 else np.float64)))
        st = _C.from_numpy(np.ascontiguousarray(s.astype(np.float32 if x.dtype == _C.dtype.float32 else np.float64)))
        return (x - mt) / st
    if not isinstance(img, np.ndarray):
        raise TypeError(f"[{api}] img must be a PIL image, a NumPy array or an oar Tensor, got {type(img).__name__}")
    x = img.astype(np.float32) if img.dtype != np.float64 else img
    if to_rgb:
        x = np.flip(x, axis=caxis)
    return ((x - m) / s).astype(x.dtype)


def _blend(a, degenerate, factor):
    """degenerate + factor * (a - degenerate), clipped to the dtype's range ([0, 1] for floats)."""
    out = degenerate + factor * (a.astype(np.float64) - degenerate)
    hi = 255.0 if a.dtype == np.uint8 else (1.0 if np.issubdtype(a.dtype, np.floating) else np.iinfo(a.dtype).max)
    return _cast_like(np.clip(out, 0.0, hi), a.dtype)


def _check_factor(f, api, name):
    if not isinstance(f, numbers.Real) or f < 0:
        raise ValueError(f"[{api}] {name} must be a non-negative number, got {f!r}")


def adjust_brightness(img, brightness_factor):
    """img * factor, clipped (0 gives black, 1 the original).

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.adjust_brightness(np.array([[[100]]], np.uint8), 1.5).tolist()
    [[[150]]]
    """
    _check_factor(brightness_factor, "oar.vision.transforms.adjust_brightness", "brightness_factor")
    _check_img(img, "oar.vision.transforms.adjust_brightness")
    return _via_numpy(img, lambda a: _blend(a, 0.0, brightness_factor))


def adjust_contrast(img, contrast_factor):
    """Blends with the mean luma: mean + factor * (img - mean), clipped.

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.adjust_contrast(np.array([[[0], [100]]], np.uint8), 0.0).ravel().tolist()
    [50, 50]
    """
    _check_factor(contrast_factor, "oar.vision.transforms.adjust_contrast", "contrast_factor")
    _check_img(img, "oar.vision.transforms.adjust_contrast")
    return _via_numpy(img, lambda a: _blend(a, _gray_np(a).mean(), contrast_factor))


def adjust_saturation(img, saturation_factor):
    """Blends each pixel with its luma: gray + factor * (img - gray), clipped (0 gives grayscale).

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.adjust_saturation(np.full((1, 1, 3), [100, 200, 50], np.uint8), 0.0).tolist()
    [[[153, 153, 153]]]
    """
    _check_factor(saturation_factor, "oar.vision.transforms.adjust_saturation", "saturation_factor")
    _check_img(img, "oar.vision.transforms.adjust_saturation")

    def fn(a):
        if a.ndim == 2 or a.shape[2] == 1:
            return a.copy()
        return _blend(a, _gray_np(a)[:, :, None], saturation_factor)

    return _via_numpy(img, fn)


def _rgb_to_hsv(rgb):
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    maxc, minc = rgb.max(-1), rgb.min(-1)
    v = maxc
    delta = maxc - minc
    s = np.where(maxc > 0, delta / np.where(maxc > 0, maxc, 1), 0.0)
    d = np.where(delta > 0, delta, 1)
    rc, gc, bc = (maxc - r) / d, (maxc - g) / d, (maxc - b) / d
    h = np.where(r == maxc, bc - gc, np.where(g == maxc, 2.0 + rc - bc, 4.0 + gc - rc))
    h = np.where(delta > 0, (h / 6.0) % 1.0, 0.0)
    return h, s, v


def _hsv_to_rgb(h, s, v):
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    i = i.astype(np.int64) % 6
    r = np.choose(i, [v, q, p, p, t, v])
    g = np.choose(i, [t, v, v, q, p, p])
    b = np.choose(i, [p, p, t, v, v, q])
    return np.stack([r, g, b], axis=-1)


def adjust_hue(img, hue_factor):
    """Shifts the hue by `hue_factor` turns (in [-0.5, 0.5]) in HSV space.

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.adjust_hue(np.array([[[255, 0, 0]]], np.uint8), 1 / 3).tolist()
    [[[0, 255, 0]]]
    """
    api = "oar.vision.transforms.adjust_hue"
    if not isinstance(hue_factor, numbers.Real) or not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"[{api}] hue_factor must be in [-0.5, 0.5], got {hue_factor!r}")
    _check_img(img, api)

    def fn(a):
        if a.ndim == 2 or a.shape[2] == 1:
            return a.copy()
        scale = 255.0 if a.dtype == np.uint8 else 1.0
        h, s, v = _rgb_to_hsv(a[:, :, :3].astype(np.float64) / scale)
        rgb = _hsv_to_rgb((h + hue_factor) % 1.0, s, v) * scale
        out = np.concatenate([rgb, a[:, :, 3:].astype(np.float64)], axis=2)
        return _cast_like(out, a.dtype)

    return _via_numpy(img, fn)


def erase(img, i, j, h, w, v, inplace=False):
    """Sets the h x w region at (i, j) to `v` (a value or an array broadcastable to the region).

    >>> import numpy as np
    >>> from oar.vision.transforms import functional as F
    >>> F.erase(np.ones((2, 2), np.int64), 0, 1, 2, 1, 0).tolist()
    [[1, 0], [1, 0]]
    """
    _check_img(img, "oar.vision.transforms.erase")
    if isinstance(img, np.ndarray):
        out = img if inplace else img.copy()
        out[i:i + h, j:j + w] = v
        return out

    def fn(a):
        out = a.copy()
        out[i:i + h, j:j + w] = v if not _is_tensor(v) else np.moveaxis(v.numpy(), 0, -1)
        return out

    return _via_numpy(img, fn)
