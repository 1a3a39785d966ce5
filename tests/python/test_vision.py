"""oar.vision: transforms against NumPy / PIL / colorsys references, and the local datasets."""
import colorsys
import gzip
import os
import random
import struct
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import oar
import oar.io
import oar.vision
from oar.vision import transforms as T
from oar.vision.datasets import MNIST, DatasetFolder, Digits, FashionMNIST, ImageFolder
from oar.vision.transforms import functional as F

RNG = np.random.default_rng(0)


def img_u8(h=5, w=7, c=3):
    return RNG.integers(0, 256, (h, w, c), dtype=np.uint8)


# ---------------------------------------------------------------- functional
def test_to_tensor():
    a = img_u8()
    t = F.to_tensor(a)
    assert isinstance(t, oar.Tensor) and t.dtype == oar.float32 and t.shape == [3, 5, 7]
    np.testing.assert_allclose(t.numpy(), a.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    np.testing.assert_allclose(F.to_tensor(Image.fromarray(a)).numpy(), a.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    g = Image.fromarray(a[:, :, 0], mode="L")
    assert F.to_tensor(g, data_format="HWC").shape == [5, 7, 1]
    f = RNG.random((4, 3, 2)).astype(np.float64)
    out = F.to_tensor(f)
    assert out.dtype == oar.float64
    np.testing.assert_array_equal(out.numpy(), f.transpose(2, 0, 1))
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.to_tensor\]"):
        F.to_tensor(a, data_format="NCHW")
    with pytest.raises(TypeError, match=r"^\[oar.vision.transforms.to_tensor\]"):
        F.to_tensor([1, 2])


@pytest.mark.parametrize("kind", ["numpy", "pil", "tensor"])
def test_flips_and_crops(kind):
    a = img_u8(6, 8)

    def wrap(x):
        return {"numpy": lambda: x, "pil": lambda: Image.fromarray(x),
                "tensor": lambda: oar.to_tensor(x.transpose(2, 0, 1))}[kind]()

    def unwrap(x):
        if kind == "pil":
            return np.asarray(x)
        if kind == "tensor":
            return x.numpy().transpose(1, 2, 0)
        return x

    np.testing.assert_array_equal(unwrap(F.hflip(wrap(a))), a[:, ::-1])
    np.testing.assert_array_equal(unwrap(F.vflip(wrap(a))), a[::-1])
    np.testing.assert_array_equal(unwrap(F.crop(wrap(a), 1, 2, 3, 4)), a[1:4, 2:6])
    np.testing.assert_array_equal(unwrap(F.center_crop(wrap(a), (2, 4))), a[2:4, 2:6])
    np.testing.assert_array_equal(unwrap(F.rotate(wrap(a[:6, :6]), 90)), np.rot90(a[:6, :6]))
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.crop\]"):
        F.crop(wrap(a), 4, 0, 3, 2)


def ref_bilinear(a, oh, ow):
    """Per-pixel bilinear with half-pixel centres, clamped at the border (OpenCV's INTER_LINEAR)."""
    h, w = a.shape[:2]
    out = np.zeros((oh, ow) + a.shape[2:])
    for y in range(oh):
        sy = min(max((y + 0.5) * h / oh - 0.5, 0), h - 1)
        y0 = int(np.floor(sy))
        y1, fy = min(y0 + 1, h - 1), sy - int(np.floor(sy))
        for x in range(ow):
            sx = min(max((x + 0.5) * w / ow - 0.5, 0), w - 1)
            x0 = int(np.floor(sx))
            x1, fx = min(x0 + 1, w - 1), sx - x0
            out[y, x] = ((1 - fy) * ((1 - fx) * a[y0, x0] + fx * a[y0, x1])
                         + fy * ((1 - fx) * a[y1, x0] + fx * a[y1, x1]))
    return out


def test_resize():
    a = RNG.random((5, 7, 2))
    np.testing.assert_allclose(F.resize(a, (9, 4)), ref_bilinear(a, 9, 4), rtol=1e-12)
    np.testing.assert_allclose(F.resize(a, (3, 11)), ref_bilinear(a, 3, 11), rtol=1e-12)
    u = img_u8(5, 7)
    np.testing.assert_array_equal(F.resize(u, (9, 4)), np.clip(np.rint(ref_bilinear(u, 9, 4)), 0, 255))
    nn = F.resize(u, (10, 14), interpolation="nearest")
    np.testing.assert_array_equal(nn, u.repeat(2, 0).repeat(2, 1))
    assert F.resize(img_u8(10, 20), 5).shape == (5, 10, 3)  # int size: shorter side, aspect kept
    assert F.resize(img_u8(20, 10), 5).shape == (10, 5, 3)
    assert F.resize(Image.fromarray(img_u8(10, 20)), 5).size == (10, 5)
    t = F.resize(oar.to_tensor(a.transpose(2, 0, 1)), (9, 4))
    np.testing.assert_allclose(t.numpy().transpose(1, 2, 0), ref_bilinear(a, 9, 4), rtol=1e-12)
    const = np.full((6, 6, 3), 77, np.uint8)
    for mode in ("bicubic", "lanczos", "area"):
        np.testing.assert_array_equal(F.resize(const, (4, 9), interpolation=mode), np.full((4, 9, 3), 77))
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.resize\]"):
        F.resize(u, (4, 4), interpolation="cubicish")
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.resize\]"):
        F.resize(u, 0)


def test_pad():
    a = img_u8(3, 4)
    for mode in ("edge", "reflect", "symmetric"):
        np.testing.assert_array_equal(F.pad(a, (1, 2, 3, 1), padding_mode=mode),
                                      np.pad(a, ((2, 1), (1, 3), (0, 0)), mode=mode))
    np.testing.assert_array_equal(F.pad(a, 2, fill=9), np.pad(a, ((2, 2), (2, 2), (0, 0)), constant_values=9))
    np.testing.assert_array_equal(F.pad(a, (1, 0)), np.pad(a, ((0, 0), (1, 1), (0, 0))))
    p = F.pad(a, 1, fill=(1, 2, 3))
    assert p[0, 0].tolist() == [1, 2, 3] and p.shape == (5, 6, 3)
    pil = F.pad(Image.fromarray(a), 1, padding_mode="reflect")
    np.testing.assert_array_equal(np.asarray(pil), np.pad(a, ((1, 1), (1, 1), (0, 0)), mode="reflect"))
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.pad\]"):
        F.pad(a, (1, 2, 3))
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.pad\]"):
        F.pad(a, 1, padding_mode="wrap")


def test_rotate():
    a = img_u8(6, 6)
    for k in range(4):
        np.testing.assert_array_equal(F.rotate(a, 90 * k), np.rot90(a, k))
    r = F.rotate(img_u8(4, 6), 90, expand=True)
    assert r.shape == (6, 4, 3)
    b = img_u8(4, 6)
    np.testing.assert_array_equal(F.rotate(b, 90, expand=True), np.rot90(b))
    # An arbitrary angle agrees with PIL's nearest-neighbour rotation up to boundary rounding.
    c = img_u8(20, 20)
    ours = F.rotate(c, 30, fill=0)
    theirs = np.asarray(Image.fromarray(c).rotate(30, Image.NEAREST))
    assert (ours != theirs).any(axis=2).mean() < 0.03
    const = np.full((8, 8), 5.0)
    rb = F.rotate(const, 17, interpolation="bilinear")
    np.testing.assert_allclose(rb[3:5, 3:5], 5.0)  # interior of a constant image stays constant
    assert F.rotate(a, 45)[0, 0].tolist() == [0, 0, 0]  # corners leave the frame, filled with 0


def test_grayscale_and_normalize():
    a = img_u8()
    gray = np.rint(a.astype(np.float64) @ [0.299, 0.587, 0.114])
    np.testing.assert_array_equal(F.to_grayscale(a)[:, :, 0], gray)
    assert F.to_grayscale(a, 3).shape == (5, 7, 3)
    pil = np.asarray(F.to_grayscale(Image.fromarray(a))).astype(int)
    assert np.abs(pil - gray).max() <= 1  # PIL rounds in fixed point
    x = RNG.random((3, 4, 5)).astype(np.float32)
    m, s = [0.1, 0.2, 0.3], [0.5, 2.0, 1.0]
    want = (x - np.array(m).reshape(3, 1, 1)) / np.array(s).reshape(3, 1, 1)
    np.testing.assert_allclose(F.normalize(x, m, s), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(F.normalize(oar.to_tensor(x), m, s).numpy(), want, rtol=1e-6, atol=1e-7)
    hwc = x.transpose(1, 2, 0)
    np.testing.assert_allclose(F.normalize(hwc, m, s, data_format="HWC"), want.transpose(1, 2, 0), rtol=1e-6)
    np.testing.assert_allclose(F.normalize(hwc, m, s, data_format="HWC", to_rgb=True),
                               ((hwc[:, :, ::-1] - m) / s), rtol=1e-6)
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.normalize\]"):
        F.normalize(x, m, [1.0, 0.0, 1.0])


def test_color_adjustments():
    a = img_u8(4, 5)
    f = a.astype(np.float64)
    np.testing.assert_array_equal(F.adjust_brightness(a, 1.3), np.clip(np.rint(f * 1.3), 0, 255))
    mean = (f @ [0.299, 0.587, 0.114]).mean()
    np.testing.assert_array_equal(F.adjust_contrast(a, 0.6), np.clip(np.rint(mean + 0.6 * (f - mean)), 0, 255))
    g = (f @ [0.299, 0.587, 0.114])[:, :, None]
    np.testing.assert_array_equal(F.adjust_saturation(a, 1.7), np.clip(np.rint(g + 1.7 * (f - g)), 0, 255))
    x = RNG.random((3, 4, 3))
    np.testing.assert_allclose(F.adjust_brightness(x, 0.5), x * 0.5)
    np.testing.assert_allclose(F.adjust_brightness(x, 3.0), np.clip(x * 3, 0, 1))
    for hf in (-0.3, 0.1, 0.5):
        out = F.adjust_hue(x, hf)
        for i in range(3):
            for j in range(4):
                h, s, v = colorsys.rgb_to_hsv(*x[i, j])
                np.testing.assert_allclose(out[i, j], colorsys.hsv_to_rgb((h + hf) % 1.0, s, v), atol=1e-12)
    np.testing.assert_array_equal(F.adjust_hue(a, 0.0).astype(int), a.astype(int))
    t = F.adjust_brightness(oar.to_tensor(x.transpose(2, 0, 1)), 0.5)
    np.testing.assert_allclose(t.numpy(), x.transpose(2, 0, 1) * 0.5)
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.adjust_hue\]"):
        F.adjust_hue(a, 0.7)
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.adjust_brightness\]"):
        F.adjust_brightness(a, -1)
    with pytest.raises(TypeError, match=r"^\[oar.vision.transforms.hflip\]"):
        F.hflip([[1]])


def test_erase():
    a = img_u8(4, 4)
    out = F.erase(a, 1, 1, 2, 2, 0)
    want = a.copy()
    want[1:3, 1:3] = 0
    np.testing.assert_array_equal(out, want)
    b = a.copy()
    F.erase(b, 0, 0, 1, 1, 7, inplace=True)
    assert b[0, 0].tolist() == [7, 7, 7]
    t = F.erase(oar.to_tensor(a.transpose(2, 0, 1)), 1, 1, 2, 2, 0)
    np.testing.assert_array_equal(t.numpy().transpose(1, 2, 0), want)


# ---------------------------------------------------------------- transform classes
def test_compose_totensor_normalize_pipeline():
    a = img_u8(8, 8)
    t = T.Compose([T.CenterCrop(4), T.ToTensor(), T.Normalize(mean=[0.5] * 3, std=[0.5] * 3)])
    out = t(a)
    want = (a[2:6, 2:6].transpose(2, 0, 1) / 255.0 - 0.5) / 0.5
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    assert T.Transpose()(a).shape == (3, 8, 8)
    assert T.Transpose()(Image.fromarray(a[:, :, 0])).shape == (1, 8, 8)
    assert T.Transpose((1, 0, 2))(oar.to_tensor(a)).shape == [8, 8, 3]
    np.testing.assert_array_equal(T.Pad(1, fill=3)(a), np.pad(a, ((1, 1), (1, 1), (0, 0)), constant_values=3))
    np.testing.assert_array_equal(T.Resize((4, 4))(a), F.resize(a, (4, 4)))
    np.testing.assert_array_equal(T.Grayscale()(a), F.to_grayscale(a))


def test_random_transforms():
    a = img_u8(6, 9)
    random.seed(0)
    c1 = T.RandomCrop((3, 4))(a)
    random.seed(0)
    c2 = T.RandomCrop((3, 4))(a)
    np.testing.assert_array_equal(c1, c2)
    found = [(i, j) for i in range(4) for j in range(6) if np.array_equal(a[i:i + 3, j:j + 4], c1)]
    assert found
    assert T.RandomCrop(8, pad_if_needed=True)(a).shape == (8, 8, 3)
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.RandomCrop\]"):
        T.RandomCrop(8)(a)
    np.testing.assert_array_equal(T.RandomHorizontalFlip(1.0)(a), a[:, ::-1])
    np.testing.assert_array_equal(T.RandomHorizontalFlip(0.0)(a), a)
    np.testing.assert_array_equal(T.RandomVerticalFlip(1.0)(a), a[::-1])
    flips = [np.array_equal(T.RandomHorizontalFlip(0.5)(a), a) for _ in range(200)]
    assert 60 < sum(flips) < 140
    full = T.RandomResizedCrop((3, 3), scale=(1.0, 1.0), ratio=(9 / 6, 9 / 6))(a)
    np.testing.assert_array_equal(full, F.resize(a, (3, 3)))
    assert T.RandomResizedCrop(5)(Image.fromarray(a)).size == (5, 5)
    np.testing.assert_array_equal(T.RandomRotation((180, 180))(a[:6, :6]), np.rot90(a[:6, :6], 2))
    j = T.ColorJitter(0.5, 0.5, 0.5, 0.2)(a)
    assert j.shape == a.shape and j.dtype == np.uint8
    np.testing.assert_array_equal(T.BrightnessTransform(0)(a), a)
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.HueTransform\]"):
        T.HueTransform(0.8)
    with pytest.raises(ValueError, match=r"^\[oar.vision.transforms.RandomRotation\]"):
        T.RandomRotation(-3)


def test_base_transform_keys():
    a = img_u8(4, 4)
    img, label = T.RandomHorizontalFlip(1.0)((a, 5))
    np.testing.assert_array_equal(img, a[:, ::-1])
    assert label == 5
    img, mask = T.Resize((2, 2), keys=("image", "image"))((a, a))
    np.testing.assert_array_equal(img, mask)


# ---------------------------------------------------------------- datasets
def write_idx(path, arr, gz):
    arr = np.asarray(arr, np.uint8)
    head = struct.pack(">I", 0x800 + arr.ndim) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
    data = head + arr.tobytes()
    with open(path, "wb") as f:
        f.write(gzip.compress(data) if gz else data)


@pytest.mark.parametrize("gz", [True, False])
def test_mnist_idx(tmp_path, gz):
    images = RNG.integers(0, 256, (5, 4, 3), dtype=np.uint8)
    labels = np.array([3, 1, 4, 1, 5], np.uint8)
    ip, lp = str(tmp_path / "img"), str(tmp_path / "lab")
    write_idx(ip, images, gz)
    write_idx(lp, labels, gz)
    ds = MNIST(image_path=ip, label_path=lp, mode="test", backend="cv2")
    assert len(ds) == 5
    for i in range(5):
        img, lab = ds[i]
        assert img.dtype == np.float32 and lab.dtype == np.int64 and lab.shape == (1,)
        np.testing.assert_array_equal(img, images[i])
        assert lab[0] == labels[i]
    pil = MNIST(image_path=ip, label_path=lp, backend="pil")[2][0]
    assert isinstance(pil, Image.Image) and pil.mode == "L"
    np.testing.assert_array_equal(np.asarray(pil), images[2])
    tr = MNIST(image_path=ip, label_path=lp, transform=T.ToTensor(), backend="pil")
    np.testing.assert_allclose(tr[0][0].numpy(), images[0][None] / 255.0, rtol=1e-6)
    batches = list(oar.io.DataLoader(tr, batch_size=2, num_workers=2))
    assert batches[0][0].shape == [2, 1, 4, 3] and batches[2][1].numpy().tolist() == [[5]]
    fm = FashionMNIST(image_path=ip, label_path=lp, backend="cv2")
    assert len(fm) == 5


def test_mnist_errors(tmp_path):
    ip, lp = str(tmp_path / "img"), str(tmp_path / "lab")
    write_idx(ip, np.zeros((2, 2, 2)), False)
    write_idx(lp, np.zeros(3), False)
    missing = str(tmp_path / "nope.gz")
    with pytest.raises(FileNotFoundError, match="nope.gz"):
        MNIST(image_path=missing, label_path=lp)
    with pytest.raises(ValueError, match=r"^\[oar.vision.datasets.MNIST\].*2 images but .* 3 labels"):
        MNIST(image_path=ip, label_path=lp)
    with pytest.raises(ValueError, match=r"^\[oar.vision.datasets.MNIST\].*magic"):
        MNIST(image_path=lp, label_path=lp)
    with open(ip, "ab") as f:
        f.write(b"\x00")
    with pytest.raises(ValueError, match=r"^\[oar.vision.datasets.MNIST\].*holds 9"):
        MNIST(image_path=ip, label_path=lp)
    with pytest.raises(ValueError, match=r"^\[oar.vision.datasets.MNIST\]"):
        MNIST(image_path=ip, label_path=lp, mode="val")


def test_dataset_folder_and_image_folder(tmp_path):
    imgs = {}
    for c, n in (("b_dog", 2), ("a_cat", 3)):
        (tmp_path / c / "sub").mkdir(parents=True)
        for k in range(n):
            arr = img_u8(3 + k, 4)
            rel = f"{c}/{k}.png" if k < 2 else f"{c}/sub/{k}.png"
            Image.fromarray(arr).save(tmp_path / rel)
            imgs[rel] = arr
    (tmp_path / "a_cat" / "notes.txt").write_text("skip me")
    ds = DatasetFolder(str(tmp_path))
    assert ds.classes == ["a_cat", "b_dog"] and ds.class_to_idx == {"a_cat": 0, "b_dog": 1}
    assert len(ds) == 5 and ds.targets == [0, 0, 0, 1, 1]
    for (path, target), i in zip(ds.samples, range(len(ds))):
        rel = os.path.relpath(path, tmp_path)
        img, t = ds[i]
        assert t == target and img.mode == "RGB"
        np.testing.assert_array_equal(np.asarray(img), imgs[rel])
    tds = DatasetFolder(str(tmp_path), transform=T.ToTensor())
    assert tds[0][0].shape == [3, 3, 4]
    only_txt = DatasetFolder(str(tmp_path), extensions=(".txt",), loader=lambda p: open(p).read())
    assert len(only_txt) == 1 and only_txt[0] == ("skip me", 0)
    with pytest.raises(ValueError, match=r"^\[oar.vision.datasets.DatasetFolder\]"):
        DatasetFolder(str(tmp_path), extensions=(".png",), is_valid_file=lambda p: True)
    with pytest.raises(RuntimeError, match=r"^\[oar.vision.datasets.DatasetFolder\]"):
        DatasetFolder(str(tmp_path), extensions=(".jpg",))
    with pytest.raises(FileNotFoundError, match=r"^\[oar.vision.datasets.DatasetFolder\]"):
        DatasetFolder(str(tmp_path / "missing"))
    flat = ImageFolder(str(tmp_path))
    assert len(flat) == 5
    sample = flat[4]
    assert isinstance(sample, list) and len(sample) == 1
    np.testing.assert_array_equal(np.asarray(sample[0]), imgs[os.path.relpath(flat.samples[4], tmp_path)])
    oar.vision.set_image_backend("cv2")
    try:
        arr = ImageFolder(str(tmp_path))[0][0]
        assert isinstance(arr, np.ndarray) and arr.shape[2] == 3
    finally:
        oar.vision.set_image_backend("pil")


def test_digits():
    from sklearn.datasets import load_digits

    ref = load_digits()
    train, test = Digits(mode="train"), Digits(mode="test")
    assert len(train) == 1438 and len(test) == 359
    assert set(train.indices.tolist()).isdisjoint(test.indices.tolist())
    assert sorted(train.indices.tolist() + test.indices.tolist()) == list(range(1797))
    for ds in (train, test):
        for k in (0, 7, len(ds) - 1):
            img, lab = ds[k]
            assert img.shape == (1, 8, 8) and img.dtype == np.float32 and lab.dtype == np.int64
            src = ds.indices[k]
            np.testing.assert_array_equal(img[0], (ref.data[src] / 16.0).reshape(8, 8).astype(np.float32))
            assert lab.tolist() == [ref.target[src]]
        assert ds.images.min() >= 0.0 and ds.images.max() <= 1.0
    assert Digits(mode="test").indices.tolist() == test.indices.tolist()  # deterministic
    assert Digits(mode="test", seed=1).indices.tolist() != test.indices.tolist()
    assert len(Digits(mode="test", test_ratio=0.1)) == 180
    with pytest.raises(ValueError, match=r"^\[oar.vision.datasets.Digits\]"):
        Digits(mode="val")
    with pytest.raises(ValueError, match=r"^\[oar.vision.datasets.Digits\]"):
        Digits(test_ratio=1.5)
    loader = oar.io.DataLoader(train, batch_size=64, shuffle=True, num_workers=2)
    n = 0
    for x, y in loader:
        assert x.dtype == oar.float32 and y.dtype == oar.int64 and x.shape[1:] == [1, 8, 8]
        n += x.shape[0]
    assert n == 1438


def test_oar_imports_without_pillow(tmp_path):
    (tmp_path / "PIL.py").write_text('raise ImportError("Pillow is not installed")\n')
    code = ("import numpy as np, oar\n"
            "from oar.vision import transforms as T\n"
            "assert T.resize(np.zeros((4, 4, 3), np.float32), (2, 2)).shape == (2, 2, 3)\n"
            "try:\n"
            "    oar.vision.image_load('missing.png')\n"
            "except ImportError as e:\n"
            "    assert str(e).startswith('[oar.vision.image_load] needs Pillow'), e\n"
            "else:\n"
            "    raise SystemExit('no error')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
