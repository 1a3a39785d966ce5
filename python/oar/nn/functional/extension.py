"""oar.nn.functional: attention, resampling and patch ops with Paddle signatures.

All functions here are composites of existing differentiable ops (matmul,
index_select, strided_slice, slice_scatter, reshape/transpose), so they work to
any order of differentiation without dedicated kernels. Resampling is
separable: each spatial axis is resampled in turn by a few gathers weighted with
constants computed in NumPy (Paddle's index/weight formulas), which keeps the
work proportional to the output size.
"""
import math

import numpy as np

from .activation import softmax

__all__ = [
    "scaled_dot_product_attention", "interpolate", "upsample", "pixel_shuffle", "pixel_unshuffle", "unfold",
    "fold", "sequence_mask", "diag_embed", "affine_grid", "grid_sample", "channel_shuffle", "temporal_shift",
    "gather_tree",
]

_FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _is_float(t):
    return _dtype_name(t) in _FLOAT_NAMES


def _const(array, like):
    """A NumPy constant as a tensor with the dtype of `like` (no gradient)."""
    import oar

    return oar.to_tensor(np.asarray(array, dtype=np.float64)).astype(_dtype_name(like))


def _dropout(x, p, training, api):
    """Upscale-in-train dropout used inside attention (mask drawn from oar's RNG)."""
    import oar

    if not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"[oar.nn.functional.{api}] dropout_p must be a number in [0, 1], got {p!r}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = (oar.rand(x.shape, dtype=_dtype_name(x)) >= p).astype(_dtype_name(x))
    return x * keep * (1.0 / (1.0 - p))


def _mask_to_additive(mask, dtype_like, api, neg=-math.inf):
    """Bool masks keep the True entries; other masks are added to the scores as they are."""
    import oar

    if _dtype_name(mask) == "bool":
        zero = oar.zeros([1], dtype=_dtype_name(dtype_like))
        return oar.where(mask, zero, oar.full([1], neg, dtype=_dtype_name(dtype_like)))
    if not _is_float(mask):
        raise TypeError(f"[oar.nn.functional.{api}] attn_mask must be bool or floating point, got {mask.dtype}")
    if mask.dtype != dtype_like.dtype:
        mask = mask.astype(_dtype_name(dtype_like))
    return mask


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 training=True, name=None, scale=None):
    """softmax(q k^T * scale + mask) v with Paddle's layout [batch, seq_len, num_heads, head_dim].

    `attn_mask` broadcasts to [batch, num_heads, seq_q, seq_k]; a bool mask keeps the True
    entries, a floating mask is added to the scores. `is_causal` lets query i see keys j <= i.
    `scale` defaults to 1/sqrt(head_dim). Keys/values with fewer heads than the query (grouped
    query attention) are repeated to match when the query head count is a multiple.

    >>> import oar
    >>> q = oar.ones([1, 2, 1, 4])
    >>> out = oar.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    >>> out.shape
    [1, 2, 1, 4]
    """
    import oar

    api = "scaled_dot_product_attention"
    for nm, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, oar.Tensor):
            raise TypeError(f"[oar.nn.functional.{api}] {nm} must be a Tensor, got {type(t).__name__}")
        if t.ndim != 4:
            raise ValueError(f"[oar.nn.functional.{api}] {nm} must be 4-D [batch, seq_len, num_heads, head_dim], "
                             f"got shape {t.shape}")
        if not _is_float(t):
            raise TypeError(f"[oar.nn.functional.{api}] {nm} must be floating point, got {t.dtype}")
    b, lq, hq, d = query.shape
    bk, lk, hk, dk = key.shape
    if key.shape[:3] != value.shape[:3] or bk != b or dk != d:
        raise ValueError(f"[oar.nn.functional.{api}] incompatible shapes query {query.shape}, key {key.shape}, "
                         f"value {value.shape}")
    if hk != hq:
        if hk == 0 or hq % hk != 0:
            raise ValueError(f"[oar.nn.functional.{api}] query heads ({hq}) must be a multiple of key heads ({hk})")
        key = oar.repeat_interleave(key, hq // hk, axis=2)
        value = oar.repeat_interleave(value, hq // hk, axis=2)
    q = query.transpose([0, 2, 1, 3])
    k = key.transpose([0, 2, 1, 3])
    v = value.transpose([0, 2, 1, 3])
    s = (1.0 / math.sqrt(d)) if scale is None else float(scale)
    mask = None
    if attn_mask is not None:
        if attn_mask.ndim > 4:
            raise ValueError(f"[oar.nn.functional.{api}] attn_mask must have at most 4 dims, got {attn_mask.shape}")
        mask = _mask_to_additive(attn_mask, q, api)
    if not isinstance(dropout_p, (int, float)) or not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"[oar.nn.functional.{api}] dropout_p must be a number in [0, 1], got {dropout_p!r}")
    if (dropout_p == 0.0 or not training) and q.dtype == k.dtype == v.dtype:
        # One fused op (row blocks of scores kept in cache), and one fused op for its gradient.
        out = oar._C.fused_attention(q, k, v, mask, s, bool(is_causal))
        return out.transpose([0, 2, 1, 3])
    scores = oar.matmul(q, k, transpose_y=True) * s
    if mask is not None:
        scores = scores + mask
    if is_causal:
        causal = oar.to_tensor(np.tril(np.ones((lq, lk), dtype=bool)))
        scores = scores + _mask_to_additive(causal, scores, api)
    p = softmax(scores, axis=-1)
    p = _dropout(p, dropout_p, training, api)
    return oar.matmul(p, v).transpose([0, 2, 1, 3])


# ---------------------------------------------------------------------------------------------
# interpolate


_MODE_RANK = {"nearest": (3, 4, 5), "linear": (3,), "bilinear": (4,), "trilinear": (5,), "bicubic": (4,),
              "area": (3, 4, 5)}
_FORMATS = {3: ("NCW", "NWC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}


def _cubic_weights(t, a=-0.75):
    # Keys' cubic convolution kernel at the four taps around the source point (a = -0.75).
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


def _axis_taps(mode, n_in, n_out, scale, align_corners, align_mode):
    """(indices, weights) pairs along one axis: out[k] = sum_t w_t[k] * in[idx_t[k]]."""
    k = np.arange(n_out, dtype=np.float64)
    if align_corners:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale else n_in / n_out
    if mode == "nearest":
        idx = np.floor(ratio * k + 0.5) if align_corners else np.floor(ratio * k)
        return [(np.minimum(idx, n_in - 1).astype(np.int64), None)]
    if mode == "linear":
        half_pixel = align_mode == 0 and not align_corners
        src = ratio * (k + 0.5) - 0.5 if half_pixel else ratio * k
        src = np.maximum(src, 0.0)
        lo = np.minimum(np.floor(src), n_in - 1)
        hi = np.minimum(lo + 1, n_in - 1)
        frac = src - lo
        return [(lo.astype(np.int64), 1.0 - frac), (hi.astype(np.int64), frac)]
    if mode == "cubic":
        src = ratio * k if align_corners else ratio * (k + 0.5) - 0.5
        base = np.floor(src)
        weights = _cubic_weights(src - base)
        return [(np.clip(base - 1 + i, 0, n_in - 1).astype(np.int64), weights[i]) for i in range(4)]
    # area: adaptive average pooling, as a dense [n_out, n_in] averaging matrix
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        lo, hi = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return m


def _resample_axis(x, axis, taps):
    import oar

    if isinstance(taps, np.ndarray):  # dense matrix (area mode)
        perm = list(range(x.ndim))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        y = oar.matmul(x.transpose(perm), _const(taps, x), transpose_y=True)
        return y.transpose(perm)
    out = None
    wshape = [1] * x.ndim
    for idx, w in taps:
        g = oar.index_select(x, oar.to_tensor(idx), axis=axis)
        if w is not None:
            wshape[axis] = len(w)
            g = g * _const(w.reshape(wshape), x)
        out = g if out is None else out + g
    return out


def interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=False, align_mode=0,
                data_format=None, recompute_scale_factor=None, name=None):
    """Resizes the spatial axes of x (Paddle's ``nn.functional.interpolate``).

    Modes: 'nearest' (3-/4-/5-D), 'linear' (3-D), 'bilinear' (4-D), 'trilinear' (5-D),
    'bicubic' (4-D), 'area' (adaptive average). Give exactly one of `size` and `scale_factor`.
    align_corners aligns the corner pixels; otherwise align_mode 0 uses half-pixel centres and
    align_mode 1 maps dst*ratio. data_format is NCW/NWC, NCHW/NHWC or NCDHW/NDHWC (default
    channel-first).

    >>> import oar
    >>> x = oar.to_tensor([[[1.0, 2.0]]])
    >>> oar.nn.functional.interpolate(x, scale_factor=2, mode="nearest").numpy().tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    >>> oar.nn.functional.interpolate(x, size=[3], mode="linear", align_corners=True).numpy().tolist()
    [[[1.0, 1.5, 2.0]]]
    """
    import oar

    api = "interpolate"
    if not isinstance(x, oar.Tensor):
        raise TypeError(f"[oar.nn.functional.{api}] x must be a Tensor, got {type(x).__name__}")
    mode = str(mode).lower()
    if mode not in _MODE_RANK:
        raise ValueError(f"[oar.nn.functional.{api}] mode must be one of {sorted(_MODE_RANK)}, got {mode!r}")
    if x.ndim not in _MODE_RANK[mode]:
        raise ValueError(f"[oar.nn.functional.{api}] mode {mode!r} needs a {_MODE_RANK[mode]}-D input, "
                         f"got {x.ndim}-D")
    if data_format is None:
        data_format = _FORMATS[x.ndim][0]
    channel_last = data_format in ("NWC", "NHWC", "NDHWC")
    if data_format not in ("NCW", "NWC", "NCHW", "NHWC", "NCDHW", "NDHWC"):
        raise ValueError(f"[oar.nn.functional.{api}] unknown data_format {data_format!r}")
    if align_mode not in (0, 1):
        raise ValueError(f"[oar.nn.functional.{api}] align_mode must be 0 or 1, got {align_mode!r}")
    if align_corners and mode in ("nearest", "area"):
        raise ValueError(f"[oar.nn.functional.{api}] align_corners must be False for mode {mode!r}")
    nsp = x.ndim - 2
    axes = list(range(1, 1 + nsp)) if channel_last else list(range(2, 2 + nsp))
    in_sizes = [x.shape[a] for a in axes]
    if (size is None) == (scale_factor is None):
        raise ValueError(f"[oar.nn.functional.{api}] give exactly one of size and scale_factor")
    scales = [None] * nsp
    if size is not None:
        if isinstance(size, oar.Tensor):
            size = size.numpy().reshape(-1).tolist()
        size = [size] * nsp if isinstance(size, (int, np.integer)) else list(size)
        size = [int(s.item()) if isinstance(s, oar.Tensor) else int(s) for s in size]
        if len(size) != nsp or any(s <= 0 for s in size):
            raise ValueError(f"[oar.nn.functional.{api}] size must hold {nsp} positive ints, got {size}")
        out_sizes = size
    else:
        if isinstance(scale_factor, oar.Tensor):
            scale_factor = scale_factor.numpy().reshape(-1).tolist()
        sf = [scale_factor] * nsp if isinstance(scale_factor, (int, float)) else list(scale_factor)
        if len(sf) != nsp or any(float(s) <= 0 for s in sf):
            raise ValueError(f"[oar.nn.functional.{api}] scale_factor must hold {nsp} positive numbers, "
                             f"got {scale_factor}")
        out_sizes = [int(math.floor(n * float(s))) for n, s in zip(in_sizes, sf)]
        if any(s <= 0 for s in out_sizes):
            raise ValueError(f"[oar.nn.functional.{api}] scale_factor {scale_factor} gives an empty output "
                             f"for input size {in_sizes}")
        if not recompute_scale_factor:
            scales = [float(s) for s in sf]
    if any(n == 0 for n in in_sizes):
        raise ValueError(f"[oar.nn.functional.{api}] spatial sizes must be positive, got {in_sizes}")
    if mode != "nearest" and not _is_float(x):
        raise TypeError(f"[oar.nn.functional.{api}] mode {mode!r} needs a floating point input, got {x.dtype}")
    axis_mode = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    out = x
    for a, n_in, n_out, s in zip(axes, in_sizes, out_sizes, scales):
        if n_in == n_out and axis_mode != "cubic" and (s is None or s == 1.0):
            continue  # identity along this axis for every mode
        out = _resample_axis(out, a, _axis_taps(axis_mode, n_in, n_out, s, align_corners, align_mode))
    return out if out is not x else x.clone()


def upsample(x, size=None, scale_factor=None, mode="nearest", align_corners=False, align_mode=0,
             data_format=None, name=None):
    """Alias of :func:`interpolate`.

    >>> import oar
    >>> oar.nn.functional.upsample(oar.ones([1, 1, 2, 2]), scale_factor=2).shape
    [1, 1, 4, 4]
    """
    return interpolate(x, size, scale_factor, mode, align_corners, align_mode, data_format, name=name)


# ---------------------------------------------------------------------------------------------
# pixel shuffle, unfold / fold


def _check_4d(x, api, data_format):
    import oar

    if not isinstance(x, oar.Tensor):
        raise TypeError(f"[oar.nn.functional.{api}] x must be a Tensor, got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"[oar.nn.functional.{api}] x must be 4-D, got shape {x.shape}")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"[oar.nn.functional.{api}] data_format must be 'NCHW' or 'NHWC', got {data_format!r}")


def pixel_shuffle(x, upscale_factor, data_format="NCHW", name=None):
    """[N, C*r*r, H, W] -> [N, C, H*r, W*r] (channel-last: [N, H, W, C*r*r] -> [N, H*r, W*r, C]).

    >>> import oar
    >>> x = oar.arange(4, dtype="float32").reshape([1, 4, 1, 1])
    >>> oar.nn.functional.pixel_shuffle(x, 2).numpy().tolist()
    [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    api = "pixel_shuffle"
    _check_4d(x, api, data_format)
    r = upscale_factor
    if not isinstance(r, int) or r <= 0:
        raise ValueError(f"[oar.nn.functional.{api}] upscale_factor must be a positive int, got {r!r}")
    if data_format == "NCHW":
        n, c, h, w = x.shape
    else:
        n, h, w, c = x.shape
    if c % (r * r) != 0:
        raise ValueError(f"[oar.nn.functional.{api}] channels ({c}) must be divisible by upscale_factor**2 "
                         f"({r * r})")
    oc = c // (r * r)
    if data_format == "NCHW":
        y = x.reshape([n, oc, r, r, h, w]).transpose([0, 1, 4, 2, 5, 3])
        return y.reshape([n, oc, h * r, w * r])
    y = x.reshape([n, h, w, oc, r, r]).transpose([0, 1, 4, 2, 5, 3])
    return y.reshape([n, h * r, w * r, oc])


def pixel_unshuffle(x, downscale_factor, data_format="NCHW", name=None):
    """Inverse of pixel_shuffle: [N, C, H*r, W*r] -> [N, C*r*r, H, W].

    >>> import oar
    >>> x = oar.arange(4, dtype="float32").reshape([1, 1, 2, 2])
    >>> oar.nn.functional.pixel_unshuffle(x, 2).reshape([-1]).numpy().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    api = "pixel_unshuffle"
    _check_4d(x, api, data_format)
    r = downscale_factor
    if not isinstance(r, int) or r <= 0:
        raise ValueError(f"[oar.nn.functional.{api}] downscale_factor must be a positive int, got {r!r}")
    if data_format == "NCHW":
        n, c, h, w = x.shape
    else:
        n, h, w, c = x.shape
    if h % r or w % r:
        raise ValueError(f"[oar.nn.functional.{api}] height ({h}) and width ({w}) must be divisible by "
                         f"downscale_factor ({r})")
    oh, ow = h // r, w // r
    if data_format == "NCHW":
        y = x.reshape([n, c, oh, r, ow, r]).transpose([0, 1, 3, 5, 2, 4])
        return y.reshape([n, c * r * r, oh, ow])
    y = x.reshape([n, oh, r, ow, r, c]).transpose([0, 1, 3, 5, 2, 4])
    return y.reshape([n, oh, ow, c * r * r])


def _pair(v, api, what, n=2):
    if isinstance(v, int):
        v = [v] * n
    v = [int(e) for e in v]
    if len(v) != n:
        raise ValueError(f"[oar.nn.functional.{api}] {what} must be an int or {n} ints, got {v}")
    return v


def _paddings(p, api):
    # Paddle accepts an int, [ph, pw] or [top, left, bottom, right].
    if isinstance(p, int):
        p = [p, p, p, p]
    p = [int(e) for e in p]
    if len(p) == 2:
        p = [p[0], p[1], p[0], p[1]]
    if len(p) != 4 or any(e < 0 for e in p):
        raise ValueError(f"[oar.nn.functional.{api}] paddings must be an int, 2 or 4 non-negative ints, got {p}")
    return p


def _patch_geometry(api, spatial, kernel_sizes, strides, paddings, dilations):
    k = _pair(kernel_sizes, api, "kernel_sizes")
    s = _pair(strides, api, "strides")
    d = _pair(dilations, api, "dilations")
    p = _paddings(paddings, api)
    if min(k) <= 0 or min(s) <= 0 or min(d) <= 0:
        raise ValueError(f"[oar.nn.functional.{api}] kernel_sizes, strides and dilations must be positive, "
                         f"got {k}, {s}, {d}")
    padded = [spatial[0] + p[0] + p[2], spatial[1] + p[1] + p[3]]
    span = [d[i] * (k[i] - 1) + 1 for i in range(2)]
    out = [(padded[i] - span[i]) // s[i] + 1 for i in range(2)]
    if min(out) <= 0:
        raise ValueError(f"[oar.nn.functional.{api}] the kernel (extent {span}) does not fit the padded input "
                         f"{padded}")
    return k, s, p, d, padded, out


def unfold(x, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """im2col: sliding blocks of x [N, C, H, W] as columns [N, C*kh*kw, L].

    >>> import oar
    >>> x = oar.arange(9, dtype="float32").reshape([1, 1, 3, 3])
    >>> oar.nn.functional.unfold(x, 2).numpy()[0, :, 0].tolist()
    [0.0, 1.0, 3.0, 4.0]
    """
    import oar

    api = "unfold"
    _check_4d(x, api, "NCHW")
    n, c, h, w = x.shape
    k, s, p, d, _, (oh, ow) = _patch_geometry(api, [h, w], kernel_sizes, strides, paddings, dilations)
    xp = oar.pad(x, [0, 0, 0, 0, p[0], p[2], p[1], p[3]]) if any(p) else x
    blocks = []
    for i in range(k[0]):
        for j in range(k[1]):
            r0, c0 = i * d[0], j * d[1]
            blocks.append(oar.strided_slice(xp, [2, 3], [r0, c0], [r0 + s[0] * (oh - 1) + 1, c0 + s[1] * (ow - 1) + 1],
                                            s))
    return oar.stack(blocks, axis=2).reshape([n, c * k[0] * k[1], oh * ow])


def fold(x, output_sizes, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """col2im: sums the columns [N, C*kh*kw, L] back into an image [N, C, H, W] (inverse layout of unfold).

    >>> import oar
    >>> cols = oar.ones([1, 4, 4])
    >>> oar.nn.functional.fold(cols, [3, 3], 2).numpy()[0, 0].tolist()
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    import oar

    api = "fold"
    if not isinstance(x, oar.Tensor):
        raise TypeError(f"[oar.nn.functional.{api}] x must be a Tensor, got {type(x).__name__}")
    if x.ndim != 3:
        raise ValueError(f"[oar.nn.functional.{api}] x must be 3-D [N, C*kh*kw, L], got shape {x.shape}")
    hw = _pair(output_sizes, api, "output_sizes")
    k, s, p, d, (hp, wp), (oh, ow) = _patch_geometry(api, hw, kernel_sizes, strides, paddings, dilations)
    n, ckk, length = x.shape
    if ckk % (k[0] * k[1]) != 0:
        raise ValueError(f"[oar.nn.functional.{api}] x.shape[1] ({ckk}) must be divisible by kh*kw "
                         f"({k[0] * k[1]})")
    if length != oh * ow:
        raise ValueError(f"[oar.nn.functional.{api}] x.shape[2] ({length}) must equal the number of blocks "
                         f"({oh}*{ow}={oh * ow})")
    c = ckk // (k[0] * k[1])
    cols = x.reshape([n, c, k[0] * k[1], oh, ow])
    out = oar.zeros([n, c, hp, wp], dtype=_dtype_name(x))
    for i in range(k[0]):
        for j in range(k[1]):
            r0, c0 = i * d[0], j * d[1]
            starts, ends = [r0, c0], [r0 + s[0] * (oh - 1) + 1, c0 + s[1] * (ow - 1) + 1]
            cur = oar.strided_slice(out, [2, 3], starts, ends, s)
            out = oar.slice_scatter(out, cur + cols[:, :, i * k[1] + j], [2, 3], starts, ends, s)
    if any(p):
        out = out[:, :, p[0]:hp - p[2], p[1]:wp - p[3]]
    return out


# ---------------------------------------------------------------------------------------------
# masks and diagonals


def sequence_mask(x, maxlen=None, dtype="int64", name=None):
    """out[..., j] = j < x[...] for j in [0, maxlen) (maxlen defaults to max(x)).

    >>> import oar
    >>> oar.nn.functional.sequence_mask(oar.to_tensor([1, 3]), 4).numpy().tolist()
    [[1, 0, 0, 0], [1, 1, 1, 0]]
    """
    import oar

    api = "sequence_mask"
    if not isinstance(x, oar.Tensor):
        raise TypeError(f"[oar.nn.functional.{api}] x must be a Tensor, got {type(x).__name__}")
    if _dtype_name(x) not in ("int8", "int16", "int32", "int64", "uint8"):
        raise TypeError(f"[oar.nn.functional.{api}] x must hold integer lengths, got {x.dtype}")
    if maxlen is None:
        maxlen = int(x.max().item()) if x.size > 0 else 0
    elif isinstance(maxlen, oar.Tensor):
        maxlen = int(maxlen.item())
    if maxlen < 0:
        raise ValueError(f"[oar.nn.functional.{api}] maxlen must be non-negative, got {maxlen}")
    steps = oar.arange(maxlen, dtype="int64")
    mask = oar.less_than(steps, x.astype("int64").unsqueeze(-1))
    return mask.astype(dtype)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002 - Paddle's argument name
    """Places the last axis of `input` on the diagonal `offset` of the planes (dim1, dim2) of a new tensor.

    >>> import oar
    >>> oar.nn.functional.diag_embed(oar.to_tensor([1, 2])).numpy().tolist()
    [[1, 0], [0, 2]]
    """
    import oar

    api = "diag_embed"
    if not isinstance(input, oar.Tensor):
        raise TypeError(f"[oar.nn.functional.{api}] input must be a Tensor, got {type(input).__name__}")
    if input.ndim < 1:
        raise ValueError(f"[oar.nn.functional.{api}] input must have at least 1 dim, got 0-D")
    nd = input.ndim + 1
    d1, d2 = dim1 + nd if dim1 < 0 else dim1, dim2 + nd if dim2 < 0 else dim2
    if not (0 <= d1 < nd and 0 <= d2 < nd) or d1 == d2:
        raise ValueError(f"[oar.nn.functional.{api}] dim1 ({dim1}) and dim2 ({dim2}) must be distinct axes of "
                         f"a {nd}-D output")
    m = input.shape[-1]
    size = m + abs(offset)
    # gather from input padded with one zero: index m selects the zero off the diagonal
    idx = np.full((size, size), m, dtype=np.int64)
    rows = np.arange(m) + max(-offset, 0)
    idx[rows, rows + offset] = np.arange(m)
    padded = oar.concat([input, oar.zeros(list(input.shape[:-1]) + [1], dtype=_dtype_name(input))], axis=-1)
    out = oar.index_select(padded, oar.to_tensor(idx.reshape(-1)), axis=-1)
    out = out.reshape(list(input.shape[:-1]) + [size, size])
    # the new axes are last; move them to (d1, d2)
    rest = list(range(nd - 2))
    perm = [0] * nd
    others = iter(rest)
    for a in range(nd):
        if a == d1:
            perm[a] = nd - 2
        elif a == d2:
            perm[a] = nd - 1
        else:
            perm[a] = next(others)
    return out.transpose(perm)


def affine_grid(theta, out_shape, align_corners=True, name=None):
    """Sampling grid [N, H, W, 2] of (x, y) points for the affine maps theta [N, 2, 3].

    >>> import oar
    >>> theta = oar.to_tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> oar.nn.functional.affine_grid(theta, [1, 1, 2, 2]).numpy()[0].tolist()
    [[[-1.0, -1.0], [1.0, -1.0]], [[-1.0, 1.0], [1.0, 1.0]]]
    """
    import oar

    api = "affine_grid"
    if not isinstance(theta, oar.Tensor) or theta.ndim != 3 or theta.shape[1:] != [2, 3]:
        raise ValueError(f"[oar.nn.functional.{api}] theta must be a Tensor of shape [N, 2, 3], got "
                         f"{getattr(theta, 'shape', type(theta).__name__)}")
    if isinstance(out_shape, oar.Tensor):
        out_shape = out_shape.numpy().tolist()
    out_shape = [int(v) for v in out_shape]
    if len(out_shape) != 4 or out_shape[0] != theta.shape[0] or min(out_shape[2:]) <= 0:
        raise ValueError(f"[oar.nn.functional.{api}] out_shape must be [N, C, H, W] with N = {theta.shape[0]}, "
                         f"got {out_shape}")
    n, _, h, w = out_shape

    def coords(size):
        if size == 1:
            return np.zeros(1)
        c = np.linspace(-1.0, 1.0, size)
        return c if align_corners else c * (size - 1) / size

    gx, gy = np.meshgrid(coords(w), coords(h))
    base = np.stack([gx, gy, np.ones_like(gx)], axis=-1).reshape(1, h * w, 3)
    grid = oar.matmul(_const(base, theta).expand([n, h * w, 3]), theta, transpose_y=True)
    return grid.reshape([n, h, w, 2])


def _reflect(coord, lo2, hi2):
    """Reflects coordinates into [lo2/2, hi2/2] (bounds given doubled so half-pixel ends stay exact)."""
    import oar

    if lo2 == hi2:
        return coord * 0.0
    low, span = lo2 / 2.0, (hi2 - lo2) / 2.0
    c = (coord - low).abs()
    flips = oar.floor(c / span)
    extra = c - flips * span
    even = oar.equal(flips - oar.floor(flips / 2.0) * 2.0, oar.zeros_like(flips))
    return oar.where(even, extra + low, span - extra + low)


def grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=True, name=None):
    """Samples x at the normalised points of grid (-1..1 spans the input).

    4-D: x [N, C, H, W] with grid [N, Ho, Wo, 2] of (x, y) points gives [N, C, Ho, Wo].
    5-D: x [N, C, D, H, W] with grid [N, Do, Ho, Wo, 3] of (x, y, z) points gives
    [N, C, Do, Ho, Wo] (x indexes W, y H, z D).

    mode 'bilinear' (trilinear for 5-D) or 'nearest'; padding_mode 'zeros', 'border' or
    'reflection'. Differentiable with respect to x and (for bilinear) grid.

    >>> import oar
    >>> x = oar.arange(4, dtype="float32").reshape([1, 1, 2, 2])
    >>> grid = oar.to_tensor([[[[0.0, 0.0]]]])
    >>> oar.nn.functional.grid_sample(x, grid).numpy().tolist()
    [[[[1.5]]]]
    >>> v = oar.arange(8, dtype="float32").reshape([1, 1, 2, 2, 2])
    >>> oar.nn.functional.grid_sample(v, oar.to_tensor([[[[[0.0, 0.0, 0.0]]]]])).numpy().tolist()
    [[[[[3.5]]]]]
    """
    import oar

    api = "grid_sample"
    if not isinstance(x, oar.Tensor) or not isinstance(grid, oar.Tensor):
        raise TypeError(f"[oar.nn.functional.{api}] x and grid must be Tensors")
    if x.ndim not in (4, 5) or grid.ndim != x.ndim or grid.shape[-1] != x.ndim - 2 or grid.shape[0] != x.shape[0]:
        raise ValueError(f"[oar.nn.functional.{api}] x must be [N, C, H, W] with grid [N, Ho, Wo, 2], or x "
                         f"[N, C, D, H, W] with grid [N, Do, Ho, Wo, 3], with the same N; got {x.shape} and "
                         f"{grid.shape}")
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"[oar.nn.functional.{api}] mode must be 'bilinear' or 'nearest', got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"[oar.nn.functional.{api}] padding_mode must be 'zeros', 'border' or 'reflection', "
                         f"got {padding_mode!r}")
    if not _is_float(x) or grid.dtype != x.dtype:
        raise TypeError(f"[oar.nn.functional.{api}] x and grid must share a floating dtype, got {x.dtype} and "
                        f"{grid.dtype}")
    n, c = x.shape[:2]
    sizes = list(x.shape[2:])       # spatial sizes, outermost first: [H, W] or [D, H, W]
    out_sizes = list(grid.shape[1:-1])
    if min(sizes) == 0:
        raise ValueError(f"[oar.nn.functional.{api}] x must have non-empty spatial axes, got {x.shape}")
    npts = int(np.prod(out_sizes))
    nsp = len(sizes)

    def unnormalise(g, size):
        pix = (g + 1.0) * ((size - 1) / 2.0) if align_corners else ((g + 1.0) * size - 1.0) / 2.0
        if padding_mode == "border":
            pix = oar.clip(pix, 0.0, float(size - 1))
        elif padding_mode == "reflection":
            pix = _reflect(pix, 0, 2 * (size - 1)) if align_corners else _reflect(pix, -1, 2 * size - 1)
            pix = oar.clip(pix, 0.0, float(size - 1))
        return pix

    # coords[k] indexes spatial axis k; grid's last axis lists them innermost (W) first.
    coords = [unnormalise(grid[..., nsp - 1 - k], sizes[k]).reshape([n, npts]) for k in range(nsp)]
    flat = x.reshape([n, c, int(np.prod(sizes))])
    strides = [int(np.prod(sizes[k + 1:])) for k in range(nsp)]

    def tap(pos):
        # value of x at the integer point pos (one tensor per spatial axis), zero outside
        inside = None
        idx = None
        for k, p in enumerate(pos):
            ok = oar.logical_and(p >= 0, p <= sizes[k] - 1)
            inside = ok if inside is None else oar.logical_and(inside, ok)
            term = oar.clip(p, 0, sizes[k] - 1) * strides[k]
            idx = term if idx is None else idx + term
        vals = oar.take_along_axis(flat, idx.astype("int64").unsqueeze(1).expand([n, c, npts]), axis=2)
        return vals * inside.astype(_dtype_name(x)).unsqueeze(1)

    if mode == "nearest":
        with oar.no_grad():
            pos = [oar.round(p) for p in coords]
        out = tap(pos)
    else:
        with oar.no_grad():
            lows = [oar.floor(p) for p in coords]
        fracs = [(p - lo).unsqueeze(1) for p, lo in zip(coords, lows)]
        out = None
        # corners in the order x fastest, then y, then z; weights multiplied x first
        for corner in range(2 ** nsp):
            bits = [(corner >> (nsp - 1 - k)) & 1 for k in range(nsp)]  # bit of axis k; W is bit 0
            pos = [lo + 1 if b else lo for lo, b in zip(lows, bits)]
            term = tap(pos)
            for k in range(nsp - 1, -1, -1):
                term = term * (fracs[k] if bits[k] else 1.0 - fracs[k])
            out = term if out is None else out + term
    return out.reshape([n, c] + out_sizes)


# ---------------------------------------------------------------------------------------------
# channel shuffle, temporal shift, beam-search backtrace


def channel_shuffle(x, groups, data_format="NCHW", name=None):
    """Splits the C channels of a 4-D x into `groups` groups and interleaves them:
    channel g * (C / groups) + i moves to i * groups + g.

    >>> import oar
    >>> x = oar.arange(4, dtype="float32").reshape([1, 4, 1, 1])
    >>> oar.nn.functional.channel_shuffle(x, 2).numpy().reshape(-1).tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    import oar

    api = "oar.nn.functional.channel_shuffle"
    if not isinstance(x, oar.Tensor):
        raise TypeError(f"[{api}] x must be a Tensor, got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"[{api}] x must be 4-D, got shape {x.shape}")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"[{api}] data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise ValueError(f"[{api}] groups must be a positive int, got {groups!r}")
    n, a, b, c = x.shape
    if data_format == "NCHW":
        ch = a
        if ch % groups:
            raise ValueError(f"[{api}] groups ({groups}) must divide the channel count ({ch})")
        y = x.reshape([n, groups, ch // groups, b, c]).transpose([0, 2, 1, 3, 4])
        return y.reshape([n, ch, b, c])
    if c % groups:
        raise ValueError(f"[{api}] groups ({groups}) must divide the channel count ({c})")
    y = x.reshape([n, a, b, groups, c // groups]).transpose([0, 1, 2, 4, 3])
    return y.reshape([n, a, b, c])


def temporal_shift(x, seg_num, shift_ratio=0.25, name=None, data_format="NCHW"):
    """Shifts channels along time for x of shape [N * seg_num, C, H, W] (or NHWC): the first
    int(C * shift_ratio) channels take the previous frame's values, the next ones up to
    int(2 * C * shift_ratio) take the next frame's, the rest stay; frames past the ends are zeros.

    >>> import oar
    >>> x = oar.arange(8, dtype="float32").reshape([2, 4, 1, 1])
    >>> oar.nn.functional.temporal_shift(x, 2).numpy().reshape(2, 4).tolist()
    [[0.0, 5.0, 2.0, 3.0], [0.0, 0.0, 6.0, 7.0]]
    """
    import oar

    api = "oar.nn.functional.temporal_shift"
    if not isinstance(x, oar.Tensor):
        raise TypeError(f"[{api}] x must be a Tensor, got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"[{api}] x must be 4-D [N * seg_num, C, H, W], got shape {x.shape}")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"[{api}] data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    if isinstance(seg_num, bool) or not isinstance(seg_num, int) or seg_num <= 0:
        raise ValueError(f"[{api}] seg_num must be a positive int, got {seg_num!r}")
    if x.shape[0] % seg_num:
        raise ValueError(f"[{api}] x.shape[0] ({x.shape[0]}) must be divisible by seg_num ({seg_num})")
    if not isinstance(shift_ratio, (int, float)) or not 0 <= shift_ratio < 0.5:
        raise ValueError(f"[{api}] shift_ratio must be in [0, 0.5), got {shift_ratio!r}")
    cax = 2 if data_format == "NCHW" else 4  # channel axis after splitting N * T into [N, T]
    rest = list(x.shape[1:])
    ch = rest[cax - 2]
    c1, c2 = int(ch * shift_ratio), int(ch * 2 * shift_ratio)
    x5 = x.reshape([x.shape[0] // seg_num, seg_num] + rest)
    zeros = oar.zeros([x5.shape[0], 1] + rest, dtype=_dtype_name(x))
    padded = oar.concat([zeros, x5, zeros], axis=1)  # frame t of x5 is frame t + 1 of padded

    def part(lo, hi, t0):
        return oar.strided_slice(padded, [1, cax], [t0, lo], [t0 + seg_num, hi], [1, 1])

    y = oar.concat([part(0, c1, 0), part(c1, c2, 2), part(c2, ch, 1)], axis=cax)
    return y.reshape(list(x.shape))


def gather_tree(ids, parents):
    """Backtraces beam search: ids and parents are [max_time, batch, beam]; the result holds, for
    each final beam, the token ids along its path of parents (walked from the last step back).

    >>> import oar
    >>> ids = oar.to_tensor([[[2, 2], [6, 1]], [[3, 9], [6, 1]], [[0, 1], [9, 0]]])
    >>> parents = oar.to_tensor([[[0, 0], [1, 1]], [[1, 0], [1, 0]], [[0, 0], [0, 1]]])
    >>> oar.nn.functional.gather_tree(ids, parents).numpy().tolist()
    [[[2, 2], [1, 6]], [[3, 3], [6, 1]], [[0, 1], [9, 0]]]
    """
    import oar

    api = "oar.nn.functional.gather_tree"
    for nm, t in (("ids", ids), ("parents", parents)):
        if not isinstance(t, oar.Tensor):
            raise TypeError(f"[{api}] {nm} must be a Tensor, got {type(t).__name__}")
        if _dtype_name(t) not in ("int32", "int64"):
            raise TypeError(f"[{api}] {nm} must be int32 or int64, got {t.dtype}")
    if ids.ndim != 3:
        raise ValueError(f"[{api}] ids must be 3-D [max_time, batch, beam], got shape {ids.shape}")
    if list(parents.shape) != list(ids.shape):
        raise ValueError(f"[{api}] parents must have the shape of ids {ids.shape}, got {parents.shape}")
    steps, beam = ids.shape[0], ids.shape[2]
    if parents.size and not oar._C._ir_is_tracing():
        lo, hi = int(parents.min()), int(parents.max())
        if lo < 0 or hi >= beam:
            raise ValueError(f"[{api}] parents must be in [0, {beam}), got values in [{lo}, {hi}]")
    if steps == 0:
        return ids
    parents = parents.astype("int64")
    out = [ids[steps - 1]]
    parent = parents[steps - 1]
    for t in range(steps - 2, -1, -1):
        out.append(oar.take_along_axis(ids[t], parent, axis=1))
        parent = oar.take_along_axis(parents[t], parent, axis=1)
    return oar.stack(out[::-1], axis=0)
