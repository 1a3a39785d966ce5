"""Detection operators (``paddle.vision.ops``): box coding, non-maximum suppression,
region pooling, deformable convolution, YOLO heads and JPEG decoding.

Boxes are ``[x1, y1, x2, y2]`` corners. Region ops take ``boxes`` of shape
``[num_boxes, 4]`` for the whole batch and ``boxes_num`` of shape ``[N]``: image
``i`` owns the next ``boxes_num[i]`` boxes, and outputs are per box.

The differentiable ops (roi_align, roi_pool, psroi_pool, deform_conv2d, box_coder,
yolo_loss) are composites of oar ops: sampling positions and weights depend only on
the boxes, which carry no gradient (as in Paddle), so they are computed in NumPy and
applied to the features with matmul / gather, whose gradients oar already has.
Selection ops (nms, matrix_nms, generate_proposals, distribute_fpn_proposals,
prior_box, yolo_box) are not differentiable and compute in NumPy.

>>> import oar
>>> from oar.vision import ops
>>> boxes = oar.to_tensor([[0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 11.0, 11.0], [20.0, 20.0, 30.0, 30.0]])
>>> ops.nms(boxes, iou_threshold=0.5).numpy().tolist()
[0, 2]
"""
import io
import math
import numbers

import numpy as np

import oar
from .. import _C
from ..nn import initializer as _init
from ..nn.layer.layers import Layer
from ._pil import require as _require_pil

__all__ = ["yolo_loss", "yolo_box", "prior_box", "box_coder", "deform_conv2d", "DeformConv2D",
           "distribute_fpn_proposals", "generate_proposals", "read_file", "decode_jpeg", "roi_pool", "RoIPool",
           "psroi_pool", "PSRoIPool", "roi_align", "RoIAlign", "nms", "matrix_nms"]

_FLOATS = ("float16", "bfloat16", "float32", "float64")


# ---------------------------------------------------------------- argument helpers

def _api(name):
    return f"oar.vision.ops.{name}"


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _tensor(x, api, what, ndim=None, last=None, floating=False):
    """Checks that x is a Tensor (of rank ndim, last dim `last`, floating dtype) and returns it."""
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{api}] {what} must be a Tensor, got {type(x).__name__}")
    if ndim is not None and x.ndim != ndim:
        shape = "[" + ", ".join(["N"] * (ndim - 1) + [str(last) if last else "M"]) + "]"
        raise ValueError(f"[{api}] expected {what} of rank {ndim} ({shape}), got shape {list(x.shape)}")
    if last is not None and x.shape[-1] != last:
        raise ValueError(f"[{api}] expected {what} with last dim {last}, got shape {list(x.shape)}")
    if floating and _dtype_name(x) not in _FLOATS:
        raise TypeError(f"[{api}] {what} must have a floating dtype, got {_dtype_name(x)}")
    return x


def _numpy(x):
    """x as a float64/int NumPy array (low precision widened)."""
    if isinstance(x, _C.Tensor):
        if _dtype_name(x) in ("float16", "bfloat16"):
            x = x.astype("float32")
        return x.numpy()
    return np.asarray(x)


def _const(array, like):
    """A NumPy array as a constant tensor with the dtype of `like`."""
    name = _dtype_name(like)
    t = oar.to_tensor(np.asarray(array, dtype=np.float64 if name == "float64" else np.float32))
    return t if name in ("float32", "float64") else t.astype(name)


def _index(array):
    return oar.to_tensor(np.asarray(array, dtype=np.int64))


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _pair(v, api, what):
    if isinstance(v, _C.Tensor):
        v = v.numpy().reshape(-1).tolist()
    if _is_int(v):
        v = [v, v]
    if not isinstance(v, (list, tuple)) or len(v) != 2 or not all(_is_int(e) and e > 0 for e in v):
        raise ValueError(f"[{api}] {what} must be a positive int or two positive ints, got {v!r}")
    return [int(e) for e in v]


def _roi_args(x, boxes, boxes_num, output_size, api):
    """Validates a region op's inputs; returns (pooled h, w, NumPy boxes, image index per box)."""
    _tensor(x, api, "x", floating=True)
    if x.ndim != 4:
        raise ValueError(f"[{api}] expected x of shape [N, C, H, W], got {list(x.shape)}")
    _tensor(boxes, api, "boxes")
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(f"[{api}] expected boxes of shape [num_boxes, 4], got {list(boxes.shape)}")
    ph, pw = _pair(output_size, api, "output_size")
    if boxes_num is None:
        raise ValueError(f"[{api}] boxes_num is required: a Tensor of shape [N] with the box count per image")
    counts = _numpy(boxes_num).reshape(-1)
    if counts.dtype.kind not in "iu":
        raise TypeError(f"[{api}] boxes_num must hold integers, got {counts.dtype}")
    if counts.shape[0] != x.shape[0] or (counts < 0).any() or int(counts.sum()) != boxes.shape[0]:
        raise ValueError(f"[{api}] boxes_num must hold {x.shape[0]} non-negative counts (one per image) summing "
                         f"to the {boxes.shape[0]} boxes, got {counts.tolist()}")
    return ph, pw, _numpy(boxes).astype(np.float64), np.repeat(np.arange(x.shape[0]), counts)


def _per_image(x, batch, fn, empty_shape):
    """Concatenates fn(image index, box indices) over the images that own boxes (box order is kept)."""
    parts = [fn(b, np.nonzero(batch == b)[0]) for b in range(x.shape[0]) if (batch == b).any()]
    if not parts:
        return oar.zeros(empty_shape, dtype=_dtype_name(x))
    return parts[0] if len(parts) == 1 else oar.concat(parts, axis=0)


def _separable_pool(x, b, wy, wx):
    """out[r, c, i, j] = sum_{h, w} wy[r, i, h] * x[b, c, h, w] * wx[r, j, w] as two matmuls."""
    r, ph, h = wy.shape
    pw, w = wx.shape[1:]
    c = x.shape[1]
    rows = oar.matmul(_const(wy.reshape(r * ph, h), x), x[b].transpose([1, 0, 2]).reshape([h, c * w]))
    out = oar.matmul(rows.reshape([r, ph * c, w]), _const(wx, x), transpose_y=True)
    return out.reshape([r, ph, c, pw]).transpose([0, 2, 1, 3])


# ---------------------------------------------------------------- IoU and NMS

def _iou(a, b, offset=0.0):
    """IoU matrix [len(a), len(b)] of corner boxes; `offset` 1 counts pixels (width = x2 - x1 + 1)."""
    area_a = (a[:, 2] - a[:, 0] + offset) * (a[:, 3] - a[:, 1] + offset)
    area_b = (b[:, 2] - b[:, 0] + offset) * (b[:, 3] - b[:, 1] + offset)
    iw = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]) + offset
    ih = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]) + offset
    # Boxes apart in corner coordinates do not overlap, even when `offset` would widen them.
    apart = ((b[None, :, 0] > a[:, None, 2]) | (b[None, :, 2] < a[:, None, 0]) | (b[None, :, 1] > a[:, None, 3])
             | (b[None, :, 3] < a[:, None, 1]))
    inter = np.where(apart, 0.0, np.clip(iw, 0, None) * np.clip(ih, 0, None))
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def _greedy_nms(boxes, threshold, offset=0.0, eta=1.0, limit=None):
    """Positions kept by greedy NMS over boxes in the given order (a box is dropped when its IoU with
    a kept one exceeds the threshold; eta < 1 shrinks the threshold after each kept box while above 0.5).
    Stops after `limit` kept boxes: later ones could only be appended after them."""
    n = boxes.shape[0]
    alive = np.ones(n, dtype=bool)
    keep = []
    for i in range(n):  # one IoU row per kept box: O(kept * n) time, O(n) memory
        if not alive[i]:
            continue
        keep.append(i)
        if limit is not None and len(keep) >= limit:
            break
        rest = np.nonzero(alive[i + 1:])[0] + i + 1
        if rest.size:
            alive[rest[_iou(boxes[i:i + 1], boxes[rest], offset)[0] > threshold]] = False
        if eta < 1.0 and threshold > 0.5:
            threshold *= eta
    return np.asarray(keep, dtype=np.int64)


def nms(boxes, iou_threshold=0.3, scores=None, category_idxs=None, categories=None, top_k=None):
    """Non-maximum suppression: indices (int64) of the boxes kept.

    Without scores, boxes are visited in the given order. With scores, they are visited by
    decreasing score and the result is sorted by score; with category_idxs (and the list of
    categories to keep), suppression only happens between boxes of the same category. IoU uses
    width x2 - x1; a box is dropped when its IoU with a kept box exceeds iou_threshold. top_k
    keeps the best top_k results whenever scores are given (Paddle applies it only together
    with category_idxs).

    >>> import oar
    >>> from oar.vision.ops import nms
    >>> boxes = oar.to_tensor([[0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 11.0, 11.0], [20.0, 20.0, 30.0, 30.0]])
    >>> nms(boxes, 0.5, scores=oar.to_tensor([0.2, 0.9, 0.5])).numpy().tolist()
    [1, 2]
    >>> nms(boxes, 0.5, oar.to_tensor([0.2, 0.9, 0.5]), oar.to_tensor([0, 1, 1]), [0, 1]).numpy().tolist()
    [1, 2, 0]
    """
    api = _api("nms")
    _tensor(boxes, api, "boxes")
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(f"[{api}] expected boxes of shape [N, 4], got {list(boxes.shape)}")
    if not isinstance(iou_threshold, numbers.Real):
        raise TypeError(f"[{api}] iou_threshold must be a number, got {type(iou_threshold).__name__}")
    b = _numpy(boxes).astype(np.float64)
    n = b.shape[0]
    if top_k is not None and (not _is_int(top_k) or top_k < 0):
        raise ValueError(f"[{api}] top_k must be a non-negative int or None, got {top_k!r}")
    if scores is None:
        if category_idxs is not None:
            raise ValueError(f"[{api}] category_idxs needs scores")
        return _index(_greedy_nms(b, float(iou_threshold)))
    _tensor(scores, api, "scores")
    s = _numpy(scores).astype(np.float64).reshape(-1)
    if list(scores.shape) != [n]:
        raise ValueError(f"[{api}] expected scores of shape [{n}], got {list(scores.shape)}")
    order = np.argsort(-s, kind="stable")
    if category_idxs is None:
        keep = order[_greedy_nms(b[order], float(iou_threshold), limit=top_k)]
    else:
        _tensor(category_idxs, api, "category_idxs")
        if list(category_idxs.shape) != [n]:
            raise ValueError(f"[{api}] expected category_idxs of shape [{n}], got {list(category_idxs.shape)}")
        if categories is None:
            raise ValueError(f"[{api}] categories (the category ids to keep) is required with category_idxs")
        cats = _numpy(category_idxs).reshape(-1)
        kept = []
        for c in (_numpy(categories).reshape(-1).tolist()):
            members = order[cats[order] == c]
            kept.append(members[_greedy_nms(b[members], float(iou_threshold), limit=top_k)])
        keep = np.concatenate(kept) if kept else np.zeros(0, dtype=np.int64)
        keep = keep[np.argsort(-s[keep], kind="stable")]
    if top_k is not None:
        keep = keep[:top_k]
    return _index(keep)


def matrix_nms(bboxes, scores, score_threshold, post_threshold, nms_top_k, keep_top_k, use_gaussian=False,
               gaussian_sigma=2.0, background_label=0, normalized=True, return_index=False, return_rois_num=True,
               name=None):
    """Matrix NMS (SOLOv2): scores decay with the overlap of higher-scored boxes of the same class.

    bboxes [N, M, 4], scores [N, C, M]. Per image and class (except background_label), boxes
    scoring above score_threshold are ranked (best nms_top_k, all when -1); each box's score is
    multiplied by min over better boxes j of decay(iou_ij) / decay(max iou of j with boxes
    better than j), with decay(v) = 1 - v, or exp(-gaussian_sigma * v^2) when use_gaussian.
    Boxes whose decayed score is at least post_threshold are kept, best keep_top_k per image
    (all when -1). Returns (out, rois_num, index): out [K, 6] rows (label, score, x1, y1, x2, y2),
    rois_num [N] (int32) if return_rois_num else None, index [K, 1] (int64, into the N * M boxes)
    if return_index else None.

    >>> import oar
    >>> from oar.vision.ops import matrix_nms
    >>> boxes = oar.to_tensor([[[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.5]]])
    >>> scores = oar.to_tensor([[[0.0, 0.0], [0.9, 0.8]]])
    >>> out, num, _ = matrix_nms(boxes, scores, 0.1, 0.0, -1, -1)
    >>> out.numpy().astype("float64").round(3).tolist(), num.numpy().tolist()
    ([[1.0, 0.9, 0.0, 0.0, 1.0, 1.0], [1.0, 0.4, 0.0, 0.0, 1.0, 0.5]], [2])
    """
    api = _api("matrix_nms")
    _tensor(bboxes, api, "bboxes", ndim=3, last=4)
    _tensor(scores, api, "scores", ndim=3)
    if scores.shape[0] != bboxes.shape[0] or scores.shape[2] != bboxes.shape[1]:
        raise ValueError(f"[{api}] expected scores of shape [N, C, M] = [{bboxes.shape[0]}, C, {bboxes.shape[1]}] "
                         f"to match bboxes {list(bboxes.shape)}, got {list(scores.shape)}")
    b_all = _numpy(bboxes).astype(np.float64)
    s_all = _numpy(scores).astype(np.float64)
    offset = 0.0 if normalized else 1.0
    n, m = b_all.shape[:2]
    rows, index, counts = [], [], []
    for i in range(n):
        img_rows, img_index = [], []
        for c in range(s_all.shape[1]):
            if c == background_label:
                continue
            sc = s_all[i, c]
            cand = np.nonzero(sc > score_threshold)[0]
            cand = cand[np.argsort(-sc[cand], kind="stable")]
            if nms_top_k > -1:
                cand = cand[:nms_top_k]
            if cand.size == 0:
                continue
            iou = np.triu(_iou(b_all[i, cand], b_all[i, cand], offset), k=1)  # iou[j, k] for j better than k
            worst = iou.max(axis=0)  # each box's largest overlap with a better box
            if use_gaussian:
                decay = np.exp((worst[:, None] ** 2 - iou ** 2) * gaussian_sigma)
            else:
                decay = (1.0 - iou) / (1.0 - worst[:, None])
            decay = np.where(np.triu(np.ones_like(iou, dtype=bool), k=1), decay, np.inf).min(axis=0)
            ds = sc[cand] * np.minimum(decay, 1.0)
            ok = ds >= post_threshold
            for k in np.nonzero(ok)[0]:
                img_rows.append([c, ds[k], *b_all[i, cand[k]]])
                img_index.append(i * m + cand[k])
        order = np.argsort(-np.asarray([r[1] for r in img_rows]), kind="stable") if img_rows else []
        if keep_top_k > -1:
            order = order[:keep_top_k]
        rows += [img_rows[k] for k in order]
        index += [img_index[k] for k in order]
        counts.append(len(order))
    out = _const(np.asarray(rows, dtype=np.float64).reshape(-1, 6), bboxes)
    num = oar.to_tensor(np.asarray(counts, dtype=np.int32)) if return_rois_num else None
    idx = _index(np.asarray(index, dtype=np.int64).reshape(-1, 1)) if return_index else None
    return out, num, idx


# ---------------------------------------------------------------- region pooling

def _align_weights(start, size, grid, pooled, extent):
    """Separable RoIAlign weights [R, pooled, extent] along one axis: the mean over `grid` samples per
    bin of the bilinear weights of each sample (samples outside [-1, extent] contribute nothing)."""
    r = start.shape[0]
    bins = size / pooled
    gmax = max(int(grid.max()) if r else 0, 1)
    g = np.maximum(grid, 1)[:, None, None]
    pos = (start[:, None, None] + np.arange(pooled)[None, :, None] * bins[:, None, None]
           + (np.arange(gmax)[None, None, :] + 0.5) * bins[:, None, None] / g)
    use = ((np.arange(gmax)[None, None, :] < grid[:, None, None]) & (pos >= -1.0) & (pos <= extent))
    pos = np.clip(pos, 0.0, None)
    low = np.floor(pos).astype(np.int64)
    at_end = low >= extent - 1
    low = np.where(at_end, extent - 1, low)
    high = np.where(at_end, extent - 1, low + 1)
    frac = np.where(at_end, 0.0, pos - low)
    w = np.zeros((r, pooled, extent))
    ri, pi = np.meshgrid(np.arange(r), np.arange(pooled), indexing="ij")
    ri, pi = ri[..., None].repeat(gmax, -1), pi[..., None].repeat(gmax, -1)
    np.add.at(w, (ri, pi, low), np.where(use, 1.0 - frac, 0.0) / g)
    np.add.at(w, (ri, pi, high), np.where(use, frac, 0.0) / g)
    return w


def roi_align(x, boxes, boxes_num, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=True, name=None):
    """RoIAlign: average of bilinear samples in each of output_size bins of every box.

    x [N, C, H, W]; boxes [num_boxes, 4] in input coordinates (scaled by spatial_scale);
    boxes_num [N] boxes per image. Returns [num_boxes, C, ph, pw]. Each bin averages
    sampling_ratio^2 samples (ceil(bin size) per axis when -1); aligned shifts boxes by -0.5
    pixel. Differentiable with respect to x.

    >>> import oar
    >>> from oar.vision.ops import roi_align
    >>> x = oar.arange(16, dtype="float32").reshape([1, 1, 4, 4])
    >>> boxes = oar.to_tensor([[0.0, 0.0, 4.0, 4.0]])
    >>> roi_align(x, boxes, oar.to_tensor([1]), output_size=2).numpy().tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """
    api = _api("roi_align")
    ph, pw, bx, batch = _roi_args(x, boxes, boxes_num, output_size, api)
    if not _is_int(sampling_ratio):
        raise TypeError(f"[{api}] sampling_ratio must be an int, got {type(sampling_ratio).__name__}")
    h, w = x.shape[2:]
    shift = 0.5 if aligned else 0.0
    bx = bx * float(spatial_scale) - shift
    rw, rh = bx[:, 2] - bx[:, 0], bx[:, 3] - bx[:, 1]
    if not aligned:
        rw, rh = np.maximum(rw, 1.0), np.maximum(rh, 1.0)

    def grid(size, pooled):
        if sampling_ratio > 0:
            return np.full(size.shape, sampling_ratio, dtype=np.int64)
        return np.maximum(np.ceil(size / pooled), 0).astype(np.int64)

    def one_image(b, sel):
        wy = _align_weights(bx[sel, 1], rh[sel], grid(rh[sel], ph), ph, h)
        wx = _align_weights(bx[sel, 0], rw[sel], grid(rw[sel], pw), pw, w)
        return _separable_pool(x, b, wy, wx)

    return _per_image(x, batch, one_image, [0, x.shape[1], ph, pw])


def _round_half_away(v):
    """Rounds halves away from zero (as C's round), unlike NumPy's half-to-even."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _bin_edges(start, size, pooled, extent):
    """Integer bin limits [R, pooled] (floor of the start, ceil of the end), clipped to [0, extent]."""
    bins = size / pooled
    p = np.arange(pooled)[None, :]
    lo = np.floor(p * bins[:, None] + start[:, None])
    hi = np.ceil((p + 1) * bins[:, None] + start[:, None])
    return np.clip(lo, 0, extent).astype(np.int64), np.clip(hi, 0, extent).astype(np.int64)


def roi_pool(x, boxes, boxes_num, output_size, spatial_scale=1.0, name=None):
    """RoIPool: maximum over each of output_size bins of every box (rounded to whole pixels).

    x [N, C, H, W]; boxes [num_boxes, 4]; boxes_num [N]. Returns [num_boxes, C, ph, pw]
    (0 for empty bins). Differentiable with respect to x (the gradient goes to each bin's maximum).

    >>> import oar
    >>> from oar.vision.ops import roi_pool
    >>> x = oar.arange(16, dtype="float32").reshape([1, 1, 4, 4])
    >>> roi_pool(x, oar.to_tensor([[0.0, 0.0, 3.0, 3.0]]), oar.to_tensor([1]), 2).numpy().tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    api = _api("roi_pool")
    ph, pw, bx, batch = _roi_args(x, boxes, boxes_num, output_size, api)
    n, c, h, w = x.shape
    start = _round_half_away(bx * float(spatial_scale))
    rh = np.maximum(start[:, 3] - start[:, 1] + 1, 1.0)
    rw = np.maximum(start[:, 2] - start[:, 0] + 1, 1.0)
    hs, he = _bin_edges(start[:, 1], rh, ph, h)
    ws, we = _bin_edges(start[:, 0], rw, pw, w)
    xs = _numpy(x)
    r = bx.shape[0]
    flat = np.zeros((r, c, ph, pw), dtype=np.int64)
    empty = (he <= hs)[:, :, None] | (we <= ws)[:, None, :]  # [R, ph, pw]
    # Each bin's argmax, separably: per box, the maximum over each column bin's (at most lw) pixels in
    # every row the box spans, then over each row bin's (at most lh) rows. Vectorised over channels and
    # bins; the loop over boxes measured faster than chunks of boxes, whose windows must fit the largest.
    lh, lw = max(int((he - hs).max(initial=1)), 1), max(int((we - ws).max(initial=1)), 1)
    chan, col_bin = np.arange(c)[:, None, None], np.arange(pw)[None, None, :]
    for k in np.nonzero(~empty.all(axis=(1, 2)))[0]:
        top, bottom = hs[k].min(), he[k].max()
        col_pos = ws[k][:, None] + np.arange(lw)  # [pw, lw]
        vals = xs[batch[k], :, top:bottom][:, :, np.minimum(col_pos, w - 1)]  # [C, rows, pw, lw]
        vals = np.where(col_pos < we[k][:, None], vals, -np.inf)
        col_arg = vals.argmax(-1)  # [C, rows, pw]
        col_max = np.take_along_axis(vals, col_arg[..., None], -1)[..., 0]
        row_pos = hs[k][:, None] + np.arange(lh)  # [ph, lh]
        rel = np.minimum(row_pos - top, bottom - top - 1)
        cand = np.where((row_pos < he[k][:, None])[None, :, None, :], col_max[:, rel].transpose(0, 1, 3, 2), -np.inf)
        row = np.take_along_axis(np.broadcast_to(rel[None, :, None, :], cand.shape), cand.argmax(-1)[..., None],
                                 -1)[..., 0]  # [C, ph, pw], relative to top
        flat[k] = (top + row) * w + np.minimum(col_pos[col_bin, col_arg[chan, row, col_bin]], w - 1)
    base = (batch[:, None] * c + np.arange(c)[None, :]) * (h * w)  # [R, C]
    index = np.where(empty[:, None], 0, flat + base[:, :, None, None])
    out = oar.gather(x.reshape([-1]), _index(index.reshape(-1))).reshape([r, c, ph, pw])
    if empty.any():
        out = out * _const(~empty[:, None], x)
    return out


def psroi_pool(x, boxes, boxes_num, output_size, spatial_scale=1.0, name=None):
    """Position-sensitive RoI pooling (R-FCN): bin (i, j) of output channel c averages input
    channel (c * ph + i) * pw + j over the bin.

    x [N, C * ph * pw, H, W]; boxes [num_boxes, 4]; boxes_num [N]. Returns [num_boxes, C, ph, pw]
    (0 for empty bins). Differentiable with respect to x.

    >>> import oar
    >>> from oar.vision.ops import psroi_pool
    >>> x = oar.ones([1, 4, 4, 4]) * oar.arange(4, dtype="float32").reshape([1, 4, 1, 1])
    >>> psroi_pool(x, oar.to_tensor([[0.0, 0.0, 3.0, 3.0]]), oar.to_tensor([1]), 2).numpy().tolist()
    [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    api = _api("psroi_pool")
    ph, pw, bx, batch = _roi_args(x, boxes, boxes_num, output_size, api)
    n, cin, h, w = x.shape
    if cin % (ph * pw):
        raise ValueError(f"[{api}] x's channels ({cin}) must be a multiple of output_size's ph * pw "
                         f"({ph} * {pw})")
    cout, k = cin // (ph * pw), ph * pw
    scale = float(spatial_scale)
    rounded = _round_half_away(bx)
    start = rounded[:, :2] * scale
    end = (rounded[:, 2:] + 1.0) * scale
    rw, rh = np.maximum(end[:, 0] - start[:, 0], 0.1), np.maximum(end[:, 1] - start[:, 1], 0.1)
    hs, he = _bin_edges(start[:, 1], rh, ph, h)
    ws, we = _bin_edges(start[:, 0], rw, pw, w)
    area = (he - hs)[:, None, :, None] * (we - ws)[:, None, None, :]  # [R, 1, ph, pw]

    # Bin sums from a summed-area table: S[h, w] = sum of x[:h, :w] (per-channel mean removed first,
    # and added back, to keep the table's rounding small).
    work = "float64" if _dtype_name(x) == "float64" else "float32"
    xw = x.astype(work)
    with oar.no_grad():
        mean = xw.mean(axis=[2, 3], keepdim=True)
    table = oar.cumsum(oar.cumsum(xw - mean, axis=2), axis=3)
    table = oar.nn.functional.pad(table, [1, 0, 1, 0]).reshape([-1])
    chan = ((np.arange(cout)[:, None, None] * ph + np.arange(ph)[None, :, None]) * pw
            + np.arange(pw)[None, None, :])  # [cout, ph, pw]: the input channel of each output bin
    plane = batch[:, None, None, None] * cin + chan[None]  # [R, cout, ph, pw]: its (image, channel) plane

    def corner(rows, cols):
        return oar.gather(table, _index(((plane * (h + 1) + rows) * (w + 1) + cols).reshape(-1)))

    total = (corner(he[:, None, :, None], we[:, None, None, :]) - corner(hs[:, None, :, None], we[:, None, None, :])
             - corner(he[:, None, :, None], ws[:, None, None, :]) + corner(hs[:, None, :, None], ws[:, None, None, :]))
    inv_area = np.broadcast_to(np.where(area > 0, 1.0 / np.maximum(area, 1), 0.0), plane.shape).reshape(-1)
    means = oar.gather(mean.reshape([-1]), _index(plane.reshape(-1)))
    out = total * _const(inv_area, xw) + means * _const(inv_area > 0, xw)
    return out.reshape(list(plane.shape)).astype(_dtype_name(x))


class RoIAlign(Layer):
    """Layer form of :func:`roi_align`: ``RoIAlign(output_size, spatial_scale)(x, boxes, boxes_num, aligned=True)``.

    >>> import oar
    >>> from oar.vision.ops import RoIAlign
    >>> layer = RoIAlign(output_size=1)
    >>> layer(oar.ones([1, 2, 4, 4]), oar.to_tensor([[0.0, 0.0, 2.0, 2.0]]), oar.to_tensor([1])).shape
    [1, 2, 1, 1]
    """

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self._output_size, self._spatial_scale = output_size, spatial_scale

    def forward(self, x, boxes, boxes_num, aligned=True):
        return roi_align(x, boxes, boxes_num, self._output_size, self._spatial_scale, aligned=aligned)

    def extra_repr(self):
        return f"output_size={self._output_size}, spatial_scale={self._spatial_scale}"


class RoIPool(Layer):
    """Layer form of :func:`roi_pool`: ``RoIPool(output_size, spatial_scale)(x, boxes, boxes_num)``.

    >>> import oar
    >>> from oar.vision.ops import RoIPool
    >>> RoIPool(2)(oar.ones([1, 3, 4, 4]), oar.to_tensor([[0.0, 0.0, 3.0, 3.0]]), oar.to_tensor([1])).shape
    [1, 3, 2, 2]
    """

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self._output_size, self._spatial_scale = output_size, spatial_scale

    def forward(self, x, boxes, boxes_num):
        return roi_pool(x, boxes, boxes_num, self._output_size, self._spatial_scale)

    def extra_repr(self):
        return f"output_size={self._output_size}, spatial_scale={self._spatial_scale}"


class PSRoIPool(Layer):
    """Layer form of :func:`psroi_pool`: ``PSRoIPool(output_size, spatial_scale)(x, boxes, boxes_num)``.

    >>> import oar
    >>> from oar.vision.ops import PSRoIPool
    >>> PSRoIPool(2)(oar.ones([1, 8, 4, 4]), oar.to_tensor([[0.0, 0.0, 3.0, 3.0]]), oar.to_tensor([1])).shape
    [1, 2, 2, 2]
    """

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self._output_size, self._spatial_scale = output_size, spatial_scale

    def forward(self, x, boxes, boxes_num):
        return psroi_pool(x, boxes, boxes_num, self._output_size, self._spatial_scale)

    def extra_repr(self):
        return f"output_size={self._output_size}, spatial_scale={self._spatial_scale}"


# ---------------------------------------------------------------- box coding and priors

def box_coder(prior_box, prior_box_var, target_box, code_type="encode_center_size", box_normalized=True, axis=0,
              name=None):
    """Encodes target boxes as offsets from prior boxes, or decodes offsets back to boxes.

    Centres and sizes use width x2 - x1 (plus 1 when box_normalized is False). Encoding takes
    prior_box [M, 4] and target_box [N, 4] and gives [N, M, 4] rows
    ((tcx - pcx) / pw, (tcy - pcy) / ph, log(tw / pw), log(th / ph)) divided by the variance.
    Decoding takes target_box [N, M, 4] of such offsets and gives boxes [N, M, 4]; the priors
    are [M, 4] paired along axis 1 (axis=0) or [N, 4] paired along axis 0 (axis=1).
    prior_box_var is a list of 4 floats, a Tensor shaped like prior_box, or None (1).
    Differentiable with respect to prior_box and target_box.

    >>> import oar
    >>> from oar.vision.ops import box_coder
    >>> prior = oar.to_tensor([[0.0, 0.0, 2.0, 2.0]])
    >>> box_coder(prior, [1.0, 1.0, 1.0, 1.0], oar.to_tensor([[1.0, 0.0, 3.0, 2.0]])).numpy().tolist()
    [[[0.5, 0.0, 0.0, 0.0]]]
    >>> deltas = oar.to_tensor([[[0.5, 0.0, 0.0, 0.0]]])
    >>> box_coder(prior, [1.0, 1.0, 1.0, 1.0], deltas, "decode_center_size").numpy().tolist()
    [[[1.0, 0.0, 3.0, 2.0]]]
    """
    api = _api("box_coder")
    _tensor(prior_box, api, "prior_box", ndim=2, last=4, floating=True)
    _tensor(target_box, api, "target_box", floating=True)
    if code_type not in ("encode_center_size", "decode_center_size"):
        raise ValueError(f"[{api}] code_type must be 'encode_center_size' or 'decode_center_size', got {code_type!r}")
    if axis not in (0, 1):
        raise ValueError(f"[{api}] axis must be 0 or 1, got {axis!r}")
    if target_box.dtype != prior_box.dtype:
        raise TypeError(f"[{api}] prior_box and target_box must share a dtype, got {_dtype_name(prior_box)} and "
                        f"{_dtype_name(target_box)}")
    if isinstance(prior_box_var, _C.Tensor):
        if list(prior_box_var.shape) != list(prior_box.shape):
            raise ValueError(f"[{api}] prior_box_var must have prior_box's shape {list(prior_box.shape)}, got "
                             f"{list(prior_box_var.shape)}")
        var = prior_box_var.astype(_dtype_name(prior_box))
    elif prior_box_var is None:
        var = None
    elif isinstance(prior_box_var, (list, tuple)) and len(prior_box_var) == 4:
        var = _const(np.asarray(prior_box_var, dtype=np.float64), prior_box)
    else:
        raise TypeError(f"[{api}] prior_box_var must be a Tensor, a list of 4 floats or None, got {prior_box_var!r}")
    off = 0.0 if box_normalized else 1.0
    pw = prior_box[:, 2] - prior_box[:, 0] + off
    ph = prior_box[:, 3] - prior_box[:, 1] + off
    pcx, pcy = prior_box[:, 0] + pw * 0.5, prior_box[:, 1] + ph * 0.5
    m = prior_box.shape[0]
    if code_type == "encode_center_size":
        if target_box.ndim != 2 or target_box.shape[1] != 4:
            raise ValueError(f"[{api}] encode_center_size expects target_box of shape [N, 4], got "
                             f"{list(target_box.shape)}")
        tw = (target_box[:, 2] - target_box[:, 0] + off).unsqueeze(1)
        th = (target_box[:, 3] - target_box[:, 1] + off).unsqueeze(1)
        tcx = ((target_box[:, 0] + target_box[:, 2]) * 0.5).unsqueeze(1)
        tcy = ((target_box[:, 1] + target_box[:, 3]) * 0.5).unsqueeze(1)
        out = oar.stack([(tcx - pcx) / pw, (tcy - pcy) / ph, oar.log(oar.abs(tw / pw)), oar.log(oar.abs(th / ph))],
                        axis=-1)
        return out if var is None else out / var
    if target_box.ndim != 3 or target_box.shape[2] != 4 or target_box.shape[1 - axis] != m:
        want = "[N, M, 4]" if axis == 0 else "[M, N, 4]"
        raise ValueError(f"[{api}] decode_center_size expects target_box of shape {want} with {m} priors along "
                         f"axis {1 - axis}, got {list(target_box.shape)}")

    def along(t):  # priors [M] pair with target axis 1 (axis=0) or axis 0 (axis=1)
        return t.unsqueeze(0) if axis == 0 else t.unsqueeze(1)

    d = target_box if var is None else target_box * (along(var) if var.ndim == 2 else var)
    cx = d[..., 0] * along(pw) + along(pcx)
    cy = d[..., 1] * along(ph) + along(pcy)
    half_w = oar.exp(d[..., 2]) * along(pw) * 0.5
    half_h = oar.exp(d[..., 3]) * along(ph) * 0.5
    return oar.stack([cx - half_w, cy - half_h, cx + half_w - off, cy + half_h - off], axis=-1)


def _floats(v, api, what):
    if isinstance(v, numbers.Real):
        return [float(v)]
    if isinstance(v, (list, tuple)) and all(isinstance(e, numbers.Real) for e in v):
        return [float(e) for e in v]
    raise TypeError(f"[{api}] {what} must be a number or a list of numbers, got {v!r}")


def prior_box(input, image, min_sizes, max_sizes=None, aspect_ratios=[1.0], variance=[0.1, 0.1, 0.2, 0.2],
              flip=False, clip=False, steps=[0.0, 0.0], offset=0.5, min_max_aspect_ratios_order=False, name=None):
    """SSD prior (anchor) boxes for every cell of a feature map, normalised by the image size.

    input [N, C, H, W] is the feature map, image [N, C, IH, IW] the image. Returns
    (boxes, variances), both [H, W, num_priors, 4]. Aspect ratios start with 1, add each given
    ratio (and its inverse when flip); each min size gives one box per ratio, and each max size
    one square box of side sqrt(min * max). steps [step_w, step_h] default to the image / map ratio.

    >>> import oar
    >>> from oar.vision.ops import prior_box
    >>> boxes, var = prior_box(oar.ones([1, 2, 2, 2]), oar.ones([1, 3, 8, 8]), min_sizes=[4.0])
    >>> boxes.shape, boxes[0, 0, 0].numpy().tolist()
    ([2, 2, 1, 4], [0.0, 0.0, 0.5, 0.5])
    """
    api = _api("prior_box")
    _tensor(input, api, "input", ndim=4, floating=True)
    _tensor(image, api, "image", ndim=4)
    mins = _floats(min_sizes, api, "min_sizes")
    maxs = [] if max_sizes is None else _floats(max_sizes, api, "max_sizes")
    if maxs and len(maxs) != len(mins):
        raise ValueError(f"[{api}] max_sizes must have one entry per min size ({len(mins)}), got {maxs}")
    if any(v <= 0 for v in mins) or any(mx < mn for mn, mx in zip(mins, maxs)):
        raise ValueError(f"[{api}] min_sizes must be positive and max_sizes at least min_sizes, got {mins} and "
                         f"{maxs}")
    var = _floats(variance, api, "variance")
    if len(var) != 4:
        raise ValueError(f"[{api}] variance must have 4 values, got {var}")
    steps = _floats(steps, api, "steps")
    if len(steps) != 2:
        raise ValueError(f"[{api}] steps must be [step_w, step_h], got {steps}")
    ratios = [1.0]
    for ar in _floats(aspect_ratios, api, "aspect_ratios"):
        if ar <= 0:
            raise ValueError(f"[{api}] aspect_ratios must be positive, got {aspect_ratios}")
        if all(abs(ar - r) >= 1e-6 for r in ratios):
            ratios.append(ar)
            if flip:
                ratios.append(1.0 / ar)
    fh, fw = input.shape[2:]
    ih, iw = image.shape[2:]
    step_w = steps[0] if steps[0] else iw / fw
    step_h = steps[1] if steps[1] else ih / fh
    half = []  # (half width, half height) of each prior at a cell
    for s, mn in enumerate(mins):
        square = [(math.sqrt(mn * maxs[s]) / 2,) * 2] if maxs else []
        shaped = [(mn * math.sqrt(ar) / 2, mn / math.sqrt(ar) / 2) for ar in ratios
                  if not (min_max_aspect_ratios_order and abs(ar - 1.0) < 1e-6)]
        half += ([(mn / 2, mn / 2)] + square + shaped) if min_max_aspect_ratios_order else (shaped + square)
    half = np.asarray(half)
    cx = (np.arange(fw) + offset) * step_w
    cy = (np.arange(fh) + offset) * step_h
    cx = np.broadcast_to(cx[None, :, None], (fh, fw, len(half)))
    cy = np.broadcast_to(cy[:, None, None], (fh, fw, len(half)))
    boxes = np.stack([(cx - half[:, 0]) / iw, (cy - half[:, 1]) / ih, (cx + half[:, 0]) / iw,
                      (cy + half[:, 1]) / ih], axis=-1)
    if clip:
        boxes = np.clip(boxes, 0.0, 1.0)
    variances = np.broadcast_to(np.asarray(var), boxes.shape)
    return _const(boxes, input), _const(variances, input)


def _sigmoid(v):
    return 0.5 * (1.0 + np.tanh(0.5 * v))


def _anchor_pairs(anchors, api):
    a = list(anchors) if isinstance(anchors, (list, tuple)) else None
    if not a or len(a) % 2 or not all(isinstance(v, numbers.Real) for v in a):
        raise ValueError(f"[{api}] anchors must be a non-empty list of (width, height) pairs, got {anchors!r}")
    return np.asarray(a, dtype=np.float64).reshape(-1, 2)


def yolo_box(x, img_size, anchors, class_num, conf_thresh, downsample_ratio, clip_bbox=True, name=None,
             scale_x_y=1.0, iou_aware=False, iou_aware_factor=0.5):
    """Decodes a YOLOv3 head into boxes and class scores.

    x [N, A * (5 + class_num), H, W] (with A more IoU channels in front when iou_aware) holds,
    per anchor, (tx, ty, tw, th, objectness, class logits); img_size [N, 2] is (height, width).
    Returns boxes [N, A * H * W, 4] in image pixels and scores [N, A * H * W, class_num]
    (objectness times class probability); predictions with objectness below conf_thresh are 0.

    >>> import oar
    >>> from oar.vision.ops import yolo_box
    >>> x = oar.zeros([1, 7, 1, 1])
    >>> boxes, scores = yolo_box(x, oar.to_tensor([[32, 32]]), [16, 16], 2, 0.1, 32)
    >>> boxes.numpy().tolist(), scores.numpy().tolist()
    ([[[8.0, 8.0, 24.0, 24.0]]], [[[0.25, 0.25]]])
    """
    api = _api("yolo_box")
    _tensor(x, api, "x", ndim=4, floating=True)
    _tensor(img_size, api, "img_size", ndim=2, last=2)
    pairs = _anchor_pairs(anchors, api)
    if not _is_int(class_num) or class_num <= 0:
        raise ValueError(f"[{api}] class_num must be a positive int, got {class_num!r}")
    na = pairs.shape[0]
    n, c, h, w = x.shape
    want = na * (5 + class_num) + (na if iou_aware else 0)
    if c != want:
        raise ValueError(f"[{api}] x must have {want} channels for {na} anchors and {class_num} classes"
                         f"{' with iou_aware' if iou_aware else ''}, got {c}")
    if img_size.shape[0] != n:
        raise ValueError(f"[{api}] img_size must be [{n}, 2], got {list(img_size.shape)}")
    v = _numpy(x).astype(np.float64)
    size = _numpy(img_size).astype(np.float64)
    img_h, img_w = size[:, 0][:, None, None, None], size[:, 1][:, None, None, None]
    iou = v[:, :na] if iou_aware else None
    p = v[:, c - na * (5 + class_num):].reshape(n, na, 5 + class_num, h, w)
    bias = -0.5 * (scale_x_y - 1.0)
    gx = np.arange(w)[None, None, None, :]
    gy = np.arange(h)[None, None, :, None]
    cx = (gx + _sigmoid(p[:, :, 0]) * scale_x_y + bias) * img_w / w
    cy = (gy + _sigmoid(p[:, :, 1]) * scale_x_y + bias) * img_h / h
    bw = np.exp(p[:, :, 2]) * pairs[:, 0][None, :, None, None] * img_w / (downsample_ratio * w)
    bh = np.exp(p[:, :, 3]) * pairs[:, 1][None, :, None, None] * img_h / (downsample_ratio * h)
    conf = _sigmoid(p[:, :, 4])
    if iou_aware:
        conf = conf ** (1.0 - iou_aware_factor) * _sigmoid(iou) ** iou_aware_factor
    keep = conf >= conf_thresh
    boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=-1)
    if clip_bbox:
        lim = np.stack([img_w - 1, img_h - 1] * 2, axis=-1)
        boxes = np.clip(boxes, 0.0, None)
        boxes[..., 2:] = np.minimum(boxes[..., 2:], lim[..., 2:])
    boxes = np.where(keep[..., None], boxes, 0.0)
    scores = np.where(keep[..., None], conf[..., None] * _sigmoid(np.moveaxis(p[:, :, 5:], 2, -1)), 0.0)
    return (_const(boxes.reshape(n, na * h * w, 4), x), _const(scores.reshape(n, na * h * w, class_num), x))


# ---------------------------------------------------------------- deformable convolution

def _bilinear_zeros(flat, ys, xs, h, w):
    """Bilinear samples of flat [B, C, h * w] at pixel points (ys, xs) [B, Q], zero outside the image.
    Differentiable with respect to flat and the points."""
    b, c = flat.shape[:2]
    q = ys.shape[1]
    with oar.no_grad():
        y0, x0 = oar.floor(ys), oar.floor(xs)
    fy, fx = ys - y0, xs - x0
    out = None
    for dy in (0, 1):
        for dx in (0, 1):
            yy, xx = y0 + dy, x0 + dx
            inside = oar.logical_and(oar.logical_and(yy >= 0, yy <= h - 1), oar.logical_and(xx >= 0, xx <= w - 1))
            idx = (oar.clip(yy, 0, h - 1) * w + oar.clip(xx, 0, w - 1)).astype("int64")
            vals = oar.take_along_axis(flat, idx.unsqueeze(1).expand([b, c, q]), axis=2)
            weight = (fy if dy else 1.0 - fy) * (fx if dx else 1.0 - fx) * inside.astype(_dtype_name(flat))
            term = vals * weight.unsqueeze(1)
            out = term if out is None else out + term
    return out


def deform_conv2d(x, offset, weight, bias=None, stride=1, padding=0, dilation=1, deformable_groups=1, groups=1,
                  mask=None, name=None):
    """Deformable convolution: v1, or v2 when a modulation mask is given.

    x [N, Cin, H, W]; weight [Cout, Cin / groups, kh, kw]; offset [N, 2 * deformable_groups * kh * kw,
    Ho, Wo] holds (dy, dx) per kernel point added to its sampling position (sampled bilinearly, zero
    outside); mask [N, deformable_groups * kh * kw, Ho, Wo] scales each sample. Returns
    [N, Cout, Ho, Wo]. Differentiable with respect to x, offset, weight, bias and mask.

    >>> import oar
    >>> from oar.vision.ops import deform_conv2d
    >>> x = oar.arange(9, dtype="float32").reshape([1, 1, 3, 3])
    >>> offset = oar.zeros([1, 2, 3, 3]) + 0.5   # shift every sample half a pixel down and right
    >>> deform_conv2d(x, offset, oar.ones([1, 1, 1, 1]))[0, 0].numpy().tolist()
    [[2.0, 3.0, 1.75], [5.0, 6.0, 3.25], [3.25, 3.75, 2.0]]
    """
    api = _api("deform_conv2d")
    for t, what in ((x, "x"), (offset, "offset"), (weight, "weight")):
        _tensor(t, api, what, ndim=4, floating=True)
    n, cin, h, w = x.shape
    cout, cin_g, kh, kw = weight.shape
    (sh, sw), (dh, dw) = _pair(stride, api, "stride"), _pair(dilation, api, "dilation")
    pads = [padding, padding] if _is_int(padding) else list(padding) if isinstance(padding, (list, tuple)) else None
    if pads is None or len(pads) != 2 or not all(_is_int(p) and p >= 0 for p in pads):
        raise ValueError(f"[{api}] padding must be a non-negative int or two of them, got {padding!r}")
    for v, what in ((groups, "groups"), (deformable_groups, "deformable_groups")):
        if not _is_int(v) or v <= 0:
            raise ValueError(f"[{api}] {what} must be a positive int, got {v!r}")
    if cin_g * groups != cin or cout % groups:
        raise ValueError(f"[{api}] weight {list(weight.shape)} does not fit x's {cin} channels in {groups} groups "
                         f"(expected [Cout, {cin // groups if cin % groups == 0 else '?'}, kh, kw] with Cout "
                         f"divisible by groups)")
    if cin % deformable_groups:
        raise ValueError(f"[{api}] x's channels ({cin}) must be divisible by deformable_groups ({deformable_groups})")
    ho = (h + 2 * pads[0] - (dh * (kh - 1) + 1)) // sh + 1
    wo = (w + 2 * pads[1] - (dw * (kw - 1) + 1)) // sw + 1
    if ho <= 0 or wo <= 0:
        raise ValueError(f"[{api}] the output would be empty ({ho} x {wo}) for x {list(x.shape)} and kernel "
                         f"{[kh, kw]}")
    k, p, dg = kh * kw, ho * wo, deformable_groups
    if list(offset.shape) != [n, 2 * dg * k, ho, wo]:
        raise ValueError(f"[{api}] expected offset of shape {[n, 2 * dg * k, ho, wo]}, got {list(offset.shape)}")
    if mask is not None:
        _tensor(mask, api, "mask", ndim=4, floating=True)
        if list(mask.shape) != [n, dg * k, ho, wo]:
            raise ValueError(f"[{api}] expected mask of shape {[n, dg * k, ho, wo]}, got {list(mask.shape)}")
    # sampling grid without offsets: [K, P] rows (kernel point) by output position
    ki, kj = np.divmod(np.arange(k), kw)
    oi, oj = np.divmod(np.arange(p), wo)
    base_y = oi[None, :] * sh - pads[0] + ki[:, None] * dh
    base_x = oj[None, :] * sw - pads[1] + kj[:, None] * dw
    off = offset.reshape([n * dg, k, 2, p])
    ys = (off[:, :, 0] + _const(base_y, x)).reshape([n * dg, k * p])
    xs = (off[:, :, 1] + _const(base_x, x)).reshape([n * dg, k * p])
    cols = _bilinear_zeros(x.reshape([n * dg, cin // dg, h * w]), ys, xs, h, w)  # [N*dg, Cin/dg, K*P]
    if mask is not None:
        cols = cols * mask.reshape([n * dg, 1, k * p])
    cols = cols.reshape([n, groups, cin_g * k, p])
    out = oar.matmul(weight.reshape([1, groups, cout // groups, cin_g * k]), cols).reshape([n, cout, ho, wo])
    if bias is not None:
        _tensor(bias, api, "bias", ndim=1, floating=True)
        if bias.shape[0] != cout:
            raise ValueError(f"[{api}] expected bias of shape [{cout}], got {list(bias.shape)}")
        out = out + bias.reshape([1, cout, 1, 1])
    return out


class DeformConv2D(Layer):
    """Layer form of :func:`deform_conv2d` with a learned weight [Cout, Cin / groups, kh, kw] (Normal(0,
    sqrt(2 / (Cin * kh * kw))) by default) and bias; called as ``layer(x, offset, mask=None)``.

    >>> import oar
    >>> from oar.vision.ops import DeformConv2D
    >>> layer = DeformConv2D(2, 4, kernel_size=3, padding=1)
    >>> sum(p.numel() for p in layer.parameters()) == 4 * 2 * 9 + 4
    True
    >>> layer(oar.ones([1, 2, 5, 5]), oar.zeros([1, 18, 5, 5])).shape
    [1, 4, 5, 5]
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, deformable_groups=1,
                 groups=1, weight_attr=None, bias_attr=None):
        super().__init__()
        api = "oar.vision.ops.DeformConv2D"
        if not _is_int(groups) or groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError(f"[{api}] in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                             f"divisible by groups ({groups})")
        self._kernel_size = _pair(kernel_size, api, "kernel_size")
        self._in_channels, self._out_channels = in_channels, out_channels
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._deformable_groups, self._groups = deformable_groups, groups
        fan = in_channels * self._kernel_size[0] * self._kernel_size[1]
        self.weight = self.create_parameter([out_channels, in_channels // groups] + self._kernel_size,
                                            attr=weight_attr, default_initializer=_init.Normal(0.0, (2.0 / fan) ** 0.5))
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def forward(self, x, offset, mask=None):
        return deform_conv2d(x, offset, self.weight, self.bias, self._stride, self._padding, self._dilation,
                             self._deformable_groups, self._groups, mask)

    def extra_repr(self):
        return (f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}, "
                f"stride={self._stride}, padding={self._padding}, deformable_groups={self._deformable_groups}")


# ---------------------------------------------------------------- image files

def read_file(filename, name=None):
    """The bytes of a file as a 1-D uint8 Tensor.

    >>> import os, tempfile, oar
    >>> from oar.vision.ops import read_file
    >>> path = os.path.join(tempfile.mkdtemp(), "a.bin")
    >>> _ = open(path, "wb").write(bytes([1, 2, 255]))
    >>> read_file(path).numpy().tolist()
    [1, 2, 255]
    """
    api = _api("read_file")
    if not isinstance(filename, (str, bytes)) and not hasattr(filename, "__fspath__"):
        raise TypeError(f"[{api}] filename must be a path, got {type(filename).__name__}")
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ValueError(f"[{api}] cannot read {filename!r}: {e.strerror or e}") from e
    return oar.to_tensor(np.frombuffer(data, dtype=np.uint8).copy())


def decode_jpeg(x, mode="unchanged", name=None):
    """Decodes JPEG bytes (a 1-D uint8 Tensor, e.g. from :func:`read_file`) to a [C, H, W] uint8 Tensor.

    mode 'unchanged' keeps the file's channels (1 for grayscale, 3 otherwise), 'gray' gives 1
    channel and 'rgb' 3. Decoding uses Pillow.

    >>> import io, numpy as np, oar
    >>> from PIL import Image
    >>> from oar.vision.ops import decode_jpeg
    >>> buf = io.BytesIO(); Image.new("RGB", (4, 2), (200, 10, 10)).save(buf, format="JPEG")
    >>> img = decode_jpeg(oar.to_tensor(np.frombuffer(buf.getvalue(), dtype=np.uint8)))
    >>> img.shape, img.dtype == oar.uint8
    ([3, 2, 4], True)
    >>> decode_jpeg(oar.to_tensor(np.frombuffer(buf.getvalue(), dtype=np.uint8)), mode="gray").shape
    [1, 2, 4]
    """
    api = _api("decode_jpeg")
    _tensor(x, api, "x")
    if x.ndim != 1 or _dtype_name(x) != "uint8":
        raise ValueError(f"[{api}] x must be a 1-D uint8 Tensor of file bytes, got {_dtype_name(x)} of shape "
                         f"{list(x.shape)}")
    if mode not in ("unchanged", "gray", "rgb"):
        raise ValueError(f"[{api}] mode must be 'unchanged', 'gray' or 'rgb', got {mode!r}")
    image_mod = _require_pil(api)
    try:
        img = image_mod.open(io.BytesIO(x.numpy().tobytes()))
        img.load()
    except Exception as e:  # Pillow raises several types for corrupt data
        raise ValueError(f"[{api}] x does not hold a decodable image: {e}") from e
    if img.format != "JPEG":
        raise ValueError(f"[{api}] x must hold a JPEG image, got {img.format or 'unknown'} data")
    target = {"gray": "L", "rgb": "RGB"}.get(mode, "L" if img.mode in ("L", "1") else "RGB")
    arr = np.asarray(img.convert(target), dtype=np.uint8)
    arr = arr[None] if arr.ndim == 2 else arr.transpose(2, 0, 1)
    return oar.to_tensor(np.ascontiguousarray(arr))


# ---------------------------------------------------------------- two-stage detector plumbing

_BBOX_CLIP = math.log(1000.0 / 16.0)  # largest log-scale a proposal delta may apply


def generate_proposals(scores, bbox_deltas, img_size, anchors, variances, pre_nms_top_n=6000, post_nms_top_n=1000,
                       nms_thresh=0.5, min_size=0.1, eta=1.0, pixel_offset=False, return_rois_num=False, name=None):
    """Region proposals (Faster R-CNN RPN): decode anchors, clip, drop small boxes, NMS.

    scores [N, A, H, W] objectness; bbox_deltas [N, 4 * A, H, W]; img_size [N, 2] (height, width);
    anchors and variances [H, W, A, 4]. Per image the pre_nms_top_n best anchors are decoded
    (log-scale deltas capped at log(1000 / 16)), clipped to the image, boxes smaller than
    min_size dropped, NMS applied with nms_thresh (shrunk by eta while above 0.5) and the best
    post_nms_top_n kept. Returns (rpn_rois [K, 4], rpn_roi_probs [K, 1], rpn_rois_num): the last is
    [N] (int32) when return_rois_num, else None. An image left with no box contributes one zero box.

    >>> import oar
    >>> from oar.vision.ops import generate_proposals
    >>> anchors = oar.to_tensor([[[[0.0, 0.0, 4.0, 4.0], [1.0, 1.0, 5.0, 5.0]]]])
    >>> rois, probs, num = generate_proposals(oar.to_tensor([[[[0.9]], [[0.8]]]]), oar.zeros([1, 8, 1, 1]),
    ...     oar.to_tensor([[8.0, 8.0]]), anchors, oar.ones([1, 1, 2, 4]), nms_thresh=0.3, return_rois_num=True)
    >>> rois.numpy().tolist(), probs.numpy().astype("float64").round(2).tolist(), num.numpy().tolist()
    ([[0.0, 0.0, 4.0, 4.0]], [[0.9]], [1])
    """
    api = _api("generate_proposals")
    _tensor(scores, api, "scores", ndim=4, floating=True)
    _tensor(bbox_deltas, api, "bbox_deltas", ndim=4, floating=True)
    _tensor(img_size, api, "img_size", ndim=2, last=2)
    _tensor(anchors, api, "anchors", ndim=4, last=4)
    _tensor(variances, api, "variances", ndim=4, last=4)
    n, a, h, w = scores.shape
    if list(bbox_deltas.shape) != [n, 4 * a, h, w]:
        raise ValueError(f"[{api}] expected bbox_deltas of shape {[n, 4 * a, h, w]}, got {list(bbox_deltas.shape)}")
    if list(anchors.shape) != [h, w, a, 4] or list(variances.shape) != [h, w, a, 4]:
        raise ValueError(f"[{api}] expected anchors and variances of shape {[h, w, a, 4]}, got "
                         f"{list(anchors.shape)} and {list(variances.shape)}")
    if img_size.shape[0] != n:
        raise ValueError(f"[{api}] expected img_size of shape [{n}, 2], got {list(img_size.shape)}")
    sc = _numpy(scores).astype(np.float64).transpose(0, 2, 3, 1).reshape(n, -1)
    dl = _numpy(bbox_deltas).astype(np.float64).reshape(n, a, 4, h, w).transpose(0, 3, 4, 1, 2).reshape(n, -1, 4)
    anc = _numpy(anchors).astype(np.float64).reshape(-1, 4)
    var = _numpy(variances).astype(np.float64).reshape(-1, 4)
    size = _numpy(img_size).astype(np.float64)
    off = 1.0 if pixel_offset else 0.0
    rois, probs, counts = [], [], []
    for i in range(n):
        order = np.argsort(-sc[i], kind="stable")
        if 0 < pre_nms_top_n < order.size:
            order = order[:pre_nms_top_n]
        an, d, v = anc[order], dl[i, order], var[order]
        aw, ah = an[:, 2] - an[:, 0] + off, an[:, 3] - an[:, 1] + off
        cx = v[:, 0] * d[:, 0] * aw + an[:, 0] + 0.5 * aw
        cy = v[:, 1] * d[:, 1] * ah + an[:, 1] + 0.5 * ah
        bw = np.exp(np.minimum(v[:, 2] * d[:, 2], _BBOX_CLIP)) * aw
        bh = np.exp(np.minimum(v[:, 3] * d[:, 3], _BBOX_CLIP)) * ah
        box = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2 - off, cy + bh / 2 - off], axis=1)
        im_h, im_w = size[i]
        box[:, 0::2] = np.clip(box[:, 0::2], 0.0, im_w - off)
        box[:, 1::2] = np.clip(box[:, 1::2], 0.0, im_h - off)
        bw, bh = box[:, 2] - box[:, 0] + off, box[:, 3] - box[:, 1] + off
        ok = (bw >= max(min_size, 1.0)) & (bh >= max(min_size, 1.0))
        if pixel_offset:
            ok &= (box[:, 0] + bw / 2 <= im_w) & (box[:, 1] + bh / 2 <= im_h)
        box, s = box[ok], sc[i, order][ok]
        if box.shape[0] == 0:
            box, s = np.zeros((1, 4)), np.zeros(1)
        else:
            keep = _greedy_nms(box, nms_thresh, off, eta, limit=post_nms_top_n if post_nms_top_n > 0 else None)
            box, s = box[keep], s[keep]
        rois.append(box)
        probs.append(s)
        counts.append(box.shape[0])
    out = (_const(np.concatenate(rois), scores), _const(np.concatenate(probs)[:, None], scores))
    return out + (oar.to_tensor(np.asarray(counts, dtype=np.int32)),) if return_rois_num else out + (None,)


def distribute_fpn_proposals(fpn_rois, min_level, max_level, refer_level, refer_scale, pixel_offset=False,
                             rois_num=None, name=None):
    """Assigns each RoI to an FPN level by its scale: floor(refer_level + log2(sqrt(area) / refer_scale)),
    clipped to [min_level, max_level].

    Returns (multi_rois, restore_ind, rois_num_per_level): the RoIs of each level (in input
    order), restore_ind [R, 1] (int32) giving each input RoI's row in the levels concatenated,
    and with rois_num [N] the per-image counts of each level (int32; None without rois_num).

    >>> import oar
    >>> from oar.vision.ops import distribute_fpn_proposals
    >>> rois = oar.to_tensor([[0.0, 0.0, 300.0, 300.0], [0.0, 0.0, 50.0, 50.0]])
    >>> levels, restore, nums = distribute_fpn_proposals(rois, 2, 5, 4, 224, rois_num=oar.to_tensor([2]))
    >>> [l.shape[0] for l in levels], restore.numpy().ravel().tolist(), [v.numpy().tolist() for v in nums]
    ([1, 0, 1, 0], [1, 0], [[1], [0], [1], [0]])
    """
    api = _api("distribute_fpn_proposals")
    _tensor(fpn_rois, api, "fpn_rois", ndim=2, last=4)
    if not all(_is_int(v) for v in (min_level, max_level, refer_level)) or min_level > max_level:
        raise ValueError(f"[{api}] min_level, max_level and refer_level must be ints with min_level <= max_level, "
                         f"got {min_level}, {max_level}, {refer_level}")
    r = _numpy(fpn_rois).astype(np.float64)
    if rois_num is not None:
        counts = _numpy(rois_num).reshape(-1).astype(np.int64)
        if (counts < 0).any() or counts.sum() != r.shape[0]:
            raise ValueError(f"[{api}] rois_num must hold non-negative counts summing to the {r.shape[0]} RoIs, "
                             f"got {counts.tolist()}")
        image = np.repeat(np.arange(counts.size), counts)
    off = 1.0 if pixel_offset else 0.0
    w, h = r[:, 2] - r[:, 0] + off, r[:, 3] - r[:, 1] + off
    area = np.where((w > 0) & (h > 0), w * h, 0.0)
    level = np.floor(np.log2(np.sqrt(area) / refer_scale + 1e-6) + refer_level)
    level = np.clip(level, min_level, max_level).astype(np.int64)
    order = np.argsort(level, kind="stable")
    restore = np.empty(r.shape[0], dtype=np.int32)
    restore[order] = np.arange(r.shape[0], dtype=np.int32)
    multi, per_level = [], []
    for lv in range(min_level, max_level + 1):
        sel = np.nonzero(level == lv)[0]
        multi.append(_const(r[sel].reshape(-1, 4), fpn_rois))
        if rois_num is not None:
            per_level.append(oar.to_tensor(np.bincount(image[sel], minlength=counts.size).astype(np.int32)))
    return multi, oar.to_tensor(restore[:, None]), (per_level if rois_num is not None else None)


# ---------------------------------------------------------------- YOLOv3 loss

def _center_iou(a, b):
    """IoU of (cx, cy, w, h) boxes, broadcasting a [..., 4] against b [..., 4]."""
    def overlap(c1, w1, c2, w2):
        return np.minimum(c1 + w1 / 2, c2 + w2 / 2) - np.maximum(c1 - w1 / 2, c2 - w2 / 2)
    ow = overlap(a[..., 0], a[..., 2], b[..., 0], b[..., 2])
    oh = overlap(a[..., 1], a[..., 3], b[..., 1], b[..., 3])
    inter = np.where((ow > 0) & (oh > 0), ow * oh, 0.0)
    return inter / (a[..., 2] * a[..., 3] + b[..., 2] * b[..., 3] - inter)


def _sigmoid_ce(logits, target):
    """Binary cross-entropy with logits, elementwise and stable: max(x, 0) - x * t + log(1 + exp(-|x|))."""
    return oar.maximum(logits, oar.zeros_like(logits)) - logits * target + oar.log1p(oar.exp(-oar.abs(logits)))


def yolo_loss(x, gt_box, gt_label, anchors, anchor_mask, class_num, ignore_thresh, downsample_ratio, gt_score=None,
              use_label_smooth=True, name=None, scale_x_y=1.0):
    """YOLOv3 loss of one detection head, per image.

    x [N, len(anchor_mask) * (5 + class_num), H, W] as in :func:`yolo_box`; gt_box [N, B, 4] ground
    truth (cx, cy, w, h) relative to the image (boxes with zero width or height are padding);
    gt_label [N, B] class ids; gt_score [N, B] mixup weights (default 1). Each ground truth is
    assigned to its best-fitting anchor (by shape) among all anchors; when that anchor is in
    anchor_mask the cell holding its centre gets sigmoid cross-entropy on (tx, ty), L1 on (tw, th)
    (weighted by (2 - w * h) * score) and sigmoid cross-entropy on the classes (targets 1 - e and
    e, e = min(1 / class_num, 1 / 40), with label smoothing, else 1 and 0). Objectness is trained towards the score
    there and towards 0 elsewhere, except where a prediction overlaps a ground truth by more
    than ignore_thresh. Returns the loss [N]; differentiable with respect to x. When several
    ground truths share a cell and anchor, their terms add up in the loss and in its gradient
    (Paddle's gradient keeps only the last one's).

    >>> import oar
    >>> from oar.vision.ops import yolo_loss
    >>> x = oar.zeros([1, 7, 2, 2])
    >>> gt_box = oar.to_tensor([[[0.25, 0.25, 0.5, 0.5]]])
    >>> loss = yolo_loss(x, gt_box, oar.to_tensor([[1]]), [16, 16], [0], 2, 0.7, 16)
    >>> round(float(loss[0]), 4)
    6.5849
    """
    api = _api("yolo_loss")
    _tensor(x, api, "x", ndim=4, floating=True)
    _tensor(gt_box, api, "gt_box", ndim=3, last=4)
    _tensor(gt_label, api, "gt_label", ndim=2)
    pairs = _anchor_pairs(anchors, api)
    mask = list(anchor_mask) if isinstance(anchor_mask, (list, tuple)) else None
    if not mask or not all(_is_int(m) and 0 <= m < pairs.shape[0] for m in mask):
        raise ValueError(f"[{api}] anchor_mask must list indices into the {pairs.shape[0]} anchors, "
                         f"got {anchor_mask!r}")
    if not _is_int(class_num) or class_num <= 0:
        raise ValueError(f"[{api}] class_num must be a positive int, got {class_num!r}")
    n, c, h, w = x.shape
    if h != w:
        raise ValueError(f"[{api}] x must have a square feature map, got {h} x {w}")
    nm, nc = len(mask), 5 + class_num
    if c != nm * nc:
        raise ValueError(f"[{api}] x must have {nm * nc} channels for {nm} masked anchors and {class_num} classes, "
                         f"got {c}")
    nb = gt_box.shape[1]
    if gt_box.shape[0] != n or list(gt_label.shape) != [n, nb]:
        raise ValueError(f"[{api}] expected gt_box [{n}, B, 4] and gt_label [{n}, B], got {list(gt_box.shape)} and "
                         f"{list(gt_label.shape)}")
    gt = _numpy(gt_box).astype(np.float64)
    label = _numpy(gt_label).astype(np.int64)
    if gt_score is None:
        score = np.ones((n, nb))
    else:
        _tensor(gt_score, api, "gt_score")
        if list(gt_score.shape) != [n, nb]:
            raise ValueError(f"[{api}] expected gt_score of shape [{n}, {nb}], got {list(gt_score.shape)}")
        score = _numpy(gt_score).astype(np.float64)
    valid = (gt[..., 2] >= 1e-6) & (gt[..., 3] >= 1e-6)
    if ((label < 0) | (label >= class_num))[valid].any():
        raise ValueError(f"[{api}] gt_label must lie in [0, {class_num}), got {label[valid].tolist()}")
    input_size = downsample_ratio * h
    anchor_wh = pairs / input_size

    # Predictions that overlap a ground truth by more than ignore_thresh get no objectness loss.
    v = _numpy(x).astype(np.float64).reshape(n, nm, nc, h, w)
    bias = -0.5 * (scale_x_y - 1.0)
    pred = np.stack([(np.arange(w)[None, None, None, :] + _sigmoid(v[:, :, 0]) * scale_x_y + bias) / h,
                     (np.arange(h)[None, None, :, None] + _sigmoid(v[:, :, 1]) * scale_x_y + bias) / h,
                     np.exp(v[:, :, 2]) * anchor_wh[mask, 0][None, :, None, None],
                     np.exp(v[:, :, 3]) * anchor_wh[mask, 1][None, :, None, None]], axis=-1)
    iou = _center_iou(pred[:, :, :, :, None, :], gt[:, None, None, None, :, :])  # [N, nm, H, W, B]
    best = np.where(valid[:, None, None, None, :], iou, 0.0).max(axis=-1, initial=0.0)
    obj = np.where(best > ignore_thresh, -1.0, 0.0)

    # Each valid ground truth picks the anchor (of all anchors) whose shape fits it best.
    shape_iou = _center_iou(np.concatenate([np.zeros(gt.shape[:2] + (2,)), gt[..., 2:]], -1)[:, :, None, :],
                            np.concatenate([np.zeros((pairs.shape[0], 2)), anchor_wh], -1)[None, None])
    best_anchor = shape_iou.argmax(-1)
    slot = np.full(pairs.shape[0], -1)
    slot[mask] = np.arange(nm)
    img, box = np.nonzero(valid & (slot[best_anchor] >= 0))
    m = slot[best_anchor[img, box]]
    g = gt[img, box]
    gi = np.clip((g[:, 0] * w).astype(np.int64), 0, w - 1)
    gj = np.clip((g[:, 1] * h).astype(np.int64), 0, h - 1)
    s = score[img, box]
    obj[img, m, gj, gi] = s  # in ground-truth order, so the last one assigned to a cell wins

    xs = x.reshape([n, nm, nc, h, w])
    logit = xs[:, :, 4]
    pos = _const(np.where(obj > 1e-5, obj, 0.0), x)
    neg = _const(((obj <= 1e-5) & (obj > -0.5)).astype(np.float64), x)
    loss = (_sigmoid_ce(logit, 1.0) * pos + _sigmoid_ce(logit, 0.0) * neg).reshape([n, nm * h * w]).sum(axis=1)
    if img.size == 0:
        return loss
    # Per assigned ground truth: gather its cell's channels [P, nc].
    cell = (((img * nm + m)[:, None] * nc + np.arange(nc)[None]) * h + gj[:, None]) * w + gi[:, None]
    p = oar.gather(x.reshape([-1]), _index(cell.reshape(-1))).reshape([img.size, nc])
    a = best_anchor[img, box]
    weight = (2.0 - g[:, 2] * g[:, 3]) * s
    tx, ty = g[:, 0] * h - gi, g[:, 1] * h - gj
    tw, th = np.log(g[:, 2] * input_size / pairs[a, 0]), np.log(g[:, 3] * input_size / pairs[a, 1])
    loc = (_sigmoid_ce(p[:, 0], _const(tx, x)) + _sigmoid_ce(p[:, 1], _const(ty, x))
           + oar.abs(p[:, 2] - _const(tw, x)) + oar.abs(p[:, 3] - _const(th, x))) * _const(weight, x)
    smooth = min(1.0 / class_num, 1.0 / 40) if use_label_smooth else 0.0
    on, off = 1.0 - smooth, smooth
    target = np.where(np.arange(class_num)[None] == label[img, box][:, None], on, off)
    cls = _sigmoid_ce(p[:, 5:], _const(target, x)).sum(axis=1) * _const(s, x)
    owner = (img[None, :] == np.arange(n)[:, None]).astype(np.float64)  # [N, P]: which image each term is for
    return loss + oar.matmul(_const(owner, x), (loc + cls).unsqueeze(1)).reshape([n])
