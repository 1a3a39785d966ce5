"""Detection post-processing: score thresholding, top-k, NMS written with loops,
box decoding, IoU, multi-class post-processing.

Boxes are [x1, y1, x2, y2]. The input sets differ in how many boxes pass the
thresholds and how many NMS suppresses, so outputs have data-dependent sizes.
"""
import numpy as np

import oar
import oar.nn.functional as F
from oar.vision.ops import nms

from .registry import add, arr, kw, rand, randn

DET = ("detection",)


def _boxes(n, seed_shift=0.0):
    xy = rand(n, 2, lo=0.0, hi=20.0) + seed_shift
    wh = rand(n, 2, lo=2.0, hi=10.0)
    return np.concatenate([xy, xy + wh], axis=1).astype("float32")


B1, S1 = _boxes(8), rand(8)
B2, S2 = _boxes(5), rand(5)
B3 = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [2, 2, 12, 12], [30, 30, 40, 40]], "float32")
S3 = arr([0.9, 0.8, 0.7, 0.6])
# As many boxes as B3, none overlapping: a program that kept B3's suppression pattern is wrong here.
B4 = np.array([[0, 0, 5, 5], [10, 10, 15, 15], [20, 0, 25, 5], [0, 20, 5, 25]], "float32")


def iou_matrix(a, b):
    """Pairwise IoU of boxes a [n, 4] and b [m, 4]."""
    lt = oar.maximum(a[:, None, :2], b[None, :, :2])
    rb = oar.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = oar.clip(rb - lt, min=0.0)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / (area_a[:, None] + area_b[None, :] - inter)


add("iou_matrix", iou_matrix, [(B1, B2), (B2, B3)], DET)


def score_threshold(boxes, scores):
    keep = scores > 0.5
    return oar.masked_select(scores, keep), boxes[keep]


add("score_threshold_masked_select", score_threshold, [(B1, S1), (B2, S2), (B3, S3), (B4, S3[::-1] * 0.6)], DET)


def topk_boxes(boxes, scores):
    k = min(3, scores.shape[0])
    vals, idx = oar.topk(scores, k)
    return vals, oar.gather(boxes, idx)


add("topk_boxes", topk_boxes, [(B1, S1), (B2, S2)], DET)


def nms_while_loop(boxes, scores):
    """Greedy NMS with a while loop over the remaining candidates (shrinking shapes)."""
    order = oar.argsort(scores, descending=True)
    keep = []
    while order.shape[0] > 0:
        i = order[0]
        keep.append(i)
        if order.shape[0] == 1:
            break
        ious = iou_matrix(boxes[i].unsqueeze(0), oar.gather(boxes, order[1:]))[0]
        order = oar.masked_select(order[1:], ious <= 0.3)
    return oar.stack(keep)


add("nms_python_while", nms_while_loop, [(B1, S1), (B3, S3), (B4, S3)], DET, expect_full_graph=False,
    reason="keeps a data-dependent number of indices in a Python list")


def nms_fixed_loop(boxes, scores):
    """NMS as a Python for loop over boxes in score order, with a suppression mask."""
    order = oar.argsort(scores, descending=True)
    b = oar.gather(boxes, order)
    ious = iou_matrix(b, b)
    n = b.shape[0]
    suppressed = oar.zeros([n], "bool")
    for i in range(n):
        if suppressed[i]:
            continue
        later = oar.arange(n) > i
        suppressed = suppressed | ((ious[i] > 0.3) & later)
    return oar.masked_select(order, ~suppressed)


add("nms_python_for_mask", nms_fixed_loop, [(B1, S1), (B3, S3), (B4, S3)], DET)


def nms_vectorised(boxes, scores):
    """NMS without Python control flow on values: a fixed-count loop of tensor ops."""
    order = oar.argsort(scores, descending=True)
    b = oar.gather(boxes, order)
    ious = iou_matrix(b, b)
    n = b.shape[0]
    keep = oar.ones([n], "float32")
    upper = oar.triu(oar.ones([n, n]), diagonal=1)
    for i in range(n):
        row = (ious[i] > 0.3).astype("float32") * upper[i] * keep[i]
        keep = keep * (1.0 - row)
    return keep, order


add("nms_vectorised_fixed_count", nms_vectorised, [(B1, S1), (B3, S3), (B4, S3)], DET)


def nms_library(boxes, scores):
    return nms(boxes, 0.3, scores)


add("nms_vision_ops", nms_library, [(B1, S1), (B3, S3), (B4, S3)], DET)


def decode_boxes(anchors, deltas):
    """Anchor-relative deltas (dx, dy, log dw, log dh) to corner boxes, clipped to the image."""
    wa = anchors[:, 2] - anchors[:, 0]
    ha = anchors[:, 3] - anchors[:, 1]
    cx = anchors[:, 0] + 0.5 * wa + deltas[:, 0] * wa
    cy = anchors[:, 1] + 0.5 * ha + deltas[:, 1] * ha
    w = wa * oar.exp(oar.clip(deltas[:, 2], max=4.0))
    h = ha * oar.exp(oar.clip(deltas[:, 3], max=4.0))
    out = oar.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    return oar.clip(out, 0.0, 32.0)


add("box_decode_clip", decode_boxes, [(B1, randn(8, 4, scale=0.2)), (B2, randn(5, 4, scale=2.0))], DET)


def filter_small_boxes(boxes, min_size=4.0):
    w = boxes[:, 2] - boxes[:, 0]
    h = boxes[:, 3] - boxes[:, 1]
    idx = oar.nonzero((w >= min_size) & (h >= min_size)).flatten()
    return oar.gather(boxes, idx)


add("filter_small_boxes_nonzero", filter_small_boxes, [B1, B2, kw(B3, min_size=10.5)], DET)


def multiclass_postprocess(boxes, class_scores):
    """Per class: threshold, skip classes with no box, NMS; concatenate the kept (class, score)."""
    results = []
    for c in range(class_scores.shape[1]):
        s = class_scores[:, c]
        mask = s > 0.4
        if mask.sum() == 0:
            continue
        cb, cs = boxes[mask], s[mask]
        kept = nms(cb, 0.3, cs)
        results.append(oar.stack([oar.full([kept.shape[0]], float(c)), oar.gather(cs, kept)], axis=1))
    if not results:
        return oar.zeros([0, 2])
    return oar.concat(results, axis=0)


add("multiclass_nms_loop", multiclass_postprocess,
    [(B1, rand(8, 3)), (B2, rand(5, 3, hi=0.45)), (B3, arr([[0.9, 0.1], [0.8, 0.2], [0.1, 0.3], [0.5, 0.95]]))], DET,
    expect_full_graph=False, reason="appends a data-dependent number of results to a Python list")


def soft_nms(boxes, scores, sigma=0.5, steps=3):
    """Gaussian soft-NMS: a fixed number of rounds that decay overlapping scores."""
    scores = scores * 1.0
    taken = oar.zeros_like(scores)
    ious = iou_matrix(boxes, boxes)
    for _ in range(steps):
        best = (scores - taken * 1e9).argmax()
        taken = taken + F.one_hot(best, scores.shape[0]).astype("float32")
        decay = oar.exp(-(ious[best] ** 2) / sigma)
        scores = oar.where(taken > 0, scores, scores * decay)
    return scores


add("soft_nms_rounds", soft_nms, [(B1, S1), (B3, S3)], DET)


def yolo_style_decode(pred, anchors_wh, stride=8.0):
    """Grid decode of [h, w, a, 5] predictions (tx, ty, tw, th, obj) into boxes and objectness."""
    h, w = pred.shape[0], pred.shape[1]
    gy, gx = oar.meshgrid(oar.arange(h, dtype="float32"), oar.arange(w, dtype="float32"))
    cx = (F.sigmoid(pred[..., 0]) + gx.unsqueeze(-1)) * stride
    cy = (F.sigmoid(pred[..., 1]) + gy.unsqueeze(-1)) * stride
    bw = oar.exp(pred[..., 2]) * anchors_wh[:, 0]
    bh = oar.exp(pred[..., 3]) * anchors_wh[:, 1]
    boxes = oar.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=-1).reshape([-1, 4])
    return boxes, F.sigmoid(pred[..., 4]).reshape([-1])


ANCH = arr([[4.0, 6.0], [8.0, 5.0]])
add("yolo_grid_decode", yolo_style_decode, [(randn(2, 3, 2, 5), ANCH), (randn(4, 4, 2, 5), ANCH)], DET)


def detections_per_image(boxes, scores, image_ids, n_images=2):
    """Splits detections by image id in a Python loop; empty images give empty tensors."""
    out = []
    for i in range(n_images):
        sel = image_ids == i
        out.append(oar.masked_select(scores, sel))
    return out


add("split_detections_per_image", detections_per_image,
    [(B1, S1, arr([0, 1, 0, 0, 1, 1, 1, 0], "int64")), (B2, S2, arr([0, 0, 0, 0, 0], "int64"))], DET)


def anchors_for_feature(feat, sizes=(8.0, 16.0)):
    """Anchors for every cell of a feature map (shape-dependent Python loops)."""
    h, w = feat.shape[-2], feat.shape[-1]
    out = []
    for s in sizes:
        ys, xs = oar.meshgrid(oar.arange(h, dtype="float32") * 4.0, oar.arange(w, dtype="float32") * 4.0)
        out.append(oar.stack([xs - s / 2, ys - s / 2, xs + s / 2, ys + s / 2], axis=-1).reshape([-1, 4]))
    return oar.concat(out, axis=0) + feat.mean() * 0.0


add("anchor_generation_from_shape", anchors_for_feature, [randn(1, 2, 3, 4), randn(1, 2, 2, 2)], DET)


def keep_top_per_class_python_list(scores):
    """The best index per class, appended to a Python list only when its score is high."""
    best = []
    for c in range(scores.shape[1]):
        v, i = scores[:, c].max(), scores[:, c].argmax()
        if v > 0.5:
            best.append(i)
    return oar.stack(best) if best else oar.zeros([0], "int64")


add("top_per_class_conditional_append", keep_top_per_class_python_list,
    [rand(4, 3), rand(4, 3, hi=0.4), arr([[0.9, 0.1], [0.2, 0.3]])], DET, expect_full_graph=False,
    reason="appends to a Python list under a tensor condition: the list length depends on the data")
