"""A dataset-free image pipeline with paddle.vision.transforms on seeded images."""
import numpy as np
import paddle
import paddle.vision.transforms as T
import paddle.vision.transforms.functional as TF

from _common import show

rng = np.random.RandomState(0)
img = rng.randint(0, 256, size=(12, 10, 3)).astype("uint8")  # HWC, as images are read
pipeline = T.Compose([
    T.ToTensor(),
    T.Resize((8, 6)),
    T.CenterCrop(6),
    T.Normalize(mean=[0.5, 0.5, 0.5], std=[0.25, 0.25, 0.25]),
])
out = pipeline(img)
show("pipeline_shape", list(out.shape))
show("pipeline_dtype", str(out.dtype).split(".")[-1])
show("pipeline_ch0_row0", out[0, 0], rtol=1e-4, atol=1e-5)
show("pipeline_mean", out.mean(), rtol=1e-4, atol=1e-6)

t = TF.to_tensor(img)
show("to_tensor", [str(list(t.shape)), f"{float(t.max()):.6f}"])
show("hflip", TF.hflip(t)[0, 0, :4], rtol=1e-6)
show("vflip", TF.vflip(t)[1, 0, :4], rtol=1e-6)
show("crop", TF.crop(t, 2, 3, 4, 5).shape)
show("pad", TF.pad(t, [1, 2], fill=0.5)[0, :2, :3], rtol=1e-6)
show("pad_reflect", TF.pad(t, 1, padding_mode="reflect")[0, 0, :4], rtol=1e-6)
show("gray", TF.to_grayscale(t)[0, 0, :4], rtol=1e-4)
show("brightness", TF.adjust_brightness(t, 1.5)[2, 1, :4], rtol=1e-5)
show("contrast", TF.adjust_contrast(t, 0.5)[0, 1, :4], rtol=1e-4)
show("resize_bilinear", TF.resize(t, (5, 4))[1, 2], rtol=1e-4)
show("resize_nearest", TF.resize(t, (5, 4), interpolation="nearest")[1, 2], rtol=1e-6)
show("resize_short_side", list(TF.resize(t, 6).shape))

batch = paddle.stack([pipeline(rng.randint(0, 256, size=(12, 10, 3)).astype("uint8")) for _ in range(4)])
show("batch_shape", list(batch.shape))
show("batch_std", batch.std(), rtol=1e-4)
