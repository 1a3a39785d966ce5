"""oar.vision.ops against loop-by-loop NumPy references written here and hand-made cases.

The references follow the published definitions box by box and sample by sample, so they
share no code with the vectorised implementation. opdb_vision.py uses the region-op and
box_coder references for its op-database entries (forward per dtype, float64 gradients).
"""
import io
import math

import numpy as np
import pytest

import oar
from oar.vision import ops

RNG = np.random.default_rng(7)


def t(a, dtype="float32"):
    return oar.to_tensor(np.asarray(a, dtype=dtype))


def c_round(v):
    """Rounds halves away from zero (C's round)."""
    return math.copysign(math.floor(abs(v) + 0.5), v)


def random_boxes(n, lo=0.0, hi=10.0, smin=0.5, smax=6.0, rng=RNG):
    xy = rng.uniform(lo, hi, (n, 2))
    return np.concatenate([xy, xy + rng.uniform(smin, smax, (n, 2))], axis=1)


def iou(a, b, offset=0.0):
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return 0.0
    iw = min(a[2], b[2]) - max(a[0], b[0]) + offset
    ih = min(a[3], b[3]) - max(a[1], b[1]) + offset
    inter = max(iw, 0.0) * max(ih, 0.0)
    union = (a[2] - a[0] + offset) * (a[3] - a[1] + offset) + (b[2] - b[0] + offset) * (b[3] - b[1] + offset) - inter
    return inter / union if union > 0 else 0.0


# ---------------------------------------------------------------- references

def _image_of(boxes_num):
    return [b for b, k in enumerate(boxes_num) for _ in range(int(k))]


def _roi_bilinear(img, y, x):
    """RoIAlign's bilinear sample of img [C, H, W]: zero beyond one pixel outside, edges clamped."""
    h, w = img.shape[1:]
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return np.zeros(img.shape[0])
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[:, y0, x0] + (1 - ly) * lx * img[:, y0, x1] + ly * (1 - lx) * img[:, y1, x0]
            + ly * lx * img[:, y1, x1])


def ref_roi_align(x, boxes, boxes_num, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=True):
    ph, pw = (output_size, output_size) if isinstance(output_size, int) else output_size
    out = np.zeros((len(boxes), x.shape[1], ph, pw))
    shift = 0.5 if aligned else 0.0
    for r, (box, b) in enumerate(zip(boxes, _image_of(boxes_num))):
        x1, y1, x2, y2 = [v * spatial_scale - shift for v in box]
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = sampling_ratio if sampling_ratio > 0 else math.ceil(rh / ph)
        gw = sampling_ratio if sampling_ratio > 0 else math.ceil(rw / pw)
        for i in range(ph):
            for j in range(pw):
                acc = np.zeros(x.shape[1])
                for iy in range(gh):
                    for ix in range(gw):
                        y = y1 + i * bh + (iy + 0.5) * bh / gh
                        acc += _roi_bilinear(x[b], y, x1 + j * bw + (ix + 0.5) * bw / gw)
                out[r, :, i, j] = acc / max(gh * gw, 1)
    return out


def ref_roi_pool(x, boxes, boxes_num, output_size, spatial_scale=1.0):
    ph, pw = (output_size, output_size) if isinstance(output_size, int) else output_size
    h, w = x.shape[2:]
    out = np.zeros((len(boxes), x.shape[1], ph, pw))
    for r, (box, b) in enumerate(zip(boxes, _image_of(boxes_num))):
        x1, y1, x2, y2 = [c_round(v * spatial_scale) for v in box]
        bh, bw = max(y2 - y1 + 1, 1) / ph, max(x2 - x1 + 1, 1) / pw
        for i in range(ph):
            hs = min(max(math.floor(i * bh) + y1, 0), h)
            he = min(max(math.ceil((i + 1) * bh) + y1, 0), h)
            for j in range(pw):
                ws = min(max(math.floor(j * bw) + x1, 0), w)
                we = min(max(math.ceil((j + 1) * bw) + x1, 0), w)
                if he > hs and we > ws:
                    out[r, :, i, j] = x[b, :, int(hs):int(he), int(ws):int(we)].max(axis=(1, 2))
    return out


def ref_psroi_pool(x, boxes, boxes_num, output_size, spatial_scale=1.0):
    ph, pw = (output_size, output_size) if isinstance(output_size, int) else output_size
    h, w = x.shape[2:]
    cout = x.shape[1] // (ph * pw)
    out = np.zeros((len(boxes), cout, ph, pw))
    for r, (box, b) in enumerate(zip(boxes, _image_of(boxes_num))):
        x1, y1 = c_round(box[0]) * spatial_scale, c_round(box[1]) * spatial_scale
        x2, y2 = (c_round(box[2]) + 1) * spatial_scale, (c_round(box[3]) + 1) * spatial_scale
        bh, bw = max(y2 - y1, 0.1) / ph, max(x2 - x1, 0.1) / pw
        for c in range(cout):
            for i in range(ph):
                hs = min(max(math.floor(i * bh + y1), 0), h)
                he = min(max(math.ceil((i + 1) * bh + y1), 0), h)
                for j in range(pw):
                    ws = min(max(math.floor(j * bw + x1), 0), w)
                    we = min(max(math.ceil((j + 1) * bw + x1), 0), w)
                    area = (he - hs) * (we - ws)
                    if area > 0:
                        out[r, c, i, j] = x[b, (c * ph + i) * pw + j, hs:he, ws:we].sum() / area
    return out


def _dcn_sample(img, y, x):
    """Bilinear sample of img [H, W] with zeros outside (deformable convolution's)."""
    h, w = img.shape
    if y <= -1 or y >= h or x <= -1 or x >= w:
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    total = 0.0
    for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if 0 <= yy < h and 0 <= xx < w:
                total += wy * wx * img[yy, xx]
    return total


def _two(v):
    return list(v) if isinstance(v, (list, tuple)) else [v, v]


def ref_deform_conv2d(x, offset, weight, bias=None, stride=1, padding=0, dilation=1, deformable_groups=1, groups=1,
                      mask=None):
    n, cin, h, w = x.shape
    cout, cin_g, kh, kw = weight.shape
    (sh, sw), (pt, pl), (dh, dw) = _two(stride), _two(padding), _two(dilation)
    ho, wo = offset.shape[2:]
    k = kh * kw
    per_dg = cin // deformable_groups
    out = np.zeros((n, cout, ho, wo))
    for b in range(n):
        for oh in range(ho):
            for ow in range(wo):
                col = np.zeros((cin, kh, kw))
                for ci in range(cin):
                    g = ci // per_dg
                    for ki in range(kh):
                        for kj in range(kw):
                            kk = ki * kw + kj
                            y = oh * sh - pt + ki * dh + offset[b, g * 2 * k + 2 * kk, oh, ow]
                            xx = ow * sw - pl + kj * dw + offset[b, g * 2 * k + 2 * kk + 1, oh, ow]
                            v = _dcn_sample(x[b, ci], y, xx)
                            if mask is not None:
                                v *= mask[b, g * k + kk, oh, ow]
                            col[ci, ki, kj] = v
                for co in range(cout):
                    grp = co // (cout // groups)
                    out[b, co, oh, ow] = (weight[co] * col[grp * cin_g:(grp + 1) * cin_g]).sum()
                    if bias is not None:
                        out[b, co, oh, ow] += bias[co]
    return out


def ref_box_coder(prior, var, target, code_type="encode_center_size", box_normalized=True, axis=0):
    off = 0.0 if box_normalized else 1.0
    prior = np.asarray(prior, dtype=np.float64)
    var = np.ones((len(prior), 4)) if var is None else np.broadcast_to(np.asarray(var, dtype=np.float64),
                                                                       (len(prior), 4))

    def geometry(p):
        pw, ph = p[2] - p[0] + off, p[3] - p[1] + off
        return p[0] + pw / 2, p[1] + ph / 2, pw, ph

    if code_type == "encode_center_size":
        out = np.zeros((len(target), len(prior), 4))
        for i, tb in enumerate(target):
            tw, th = tb[2] - tb[0] + off, tb[3] - tb[1] + off
            tcx, tcy = (tb[0] + tb[2]) / 2, (tb[1] + tb[3]) / 2
            for j, p in enumerate(prior):
                pcx, pcy, pw, ph = geometry(p)
                out[i, j] = np.array([(tcx - pcx) / pw, (tcy - pcy) / ph, math.log(abs(tw / pw)),
                                      math.log(abs(th / ph))]) / var[j]
        return out
    out = np.zeros(target.shape)
    for i in range(target.shape[0]):
        for j in range(target.shape[1]):
            pj = j if axis == 0 else i
            pcx, pcy, pw, ph = geometry(prior[pj])
            d = target[i, j] * var[pj]
            cx, cy = d[0] * pw + pcx, d[1] * ph + pcy
            bw, bh = math.exp(d[2]) * pw, math.exp(d[3]) * ph
            out[i, j] = [cx - bw / 2, cy - bh / 2, cx + bw / 2 - off, cy + bh / 2 - off]
    return out


def ref_nms(boxes, thr, scores=None, cats=None, categories=None, top_k=None):
    order = list(range(len(boxes))) if scores is None else sorted(range(len(boxes)), key=lambda i: -scores[i])
    kept = []
    for i in order:
        if all(iou(boxes[i], boxes[k]) <= thr for k in kept if cats is None or cats[k] == cats[i]):
            kept.append(i)
    if cats is not None:
        kept = [i for i in kept if cats[i] in categories]
    if scores is not None and top_k is not None:
        kept = kept[:top_k]
    return kept


def ref_matrix_nms(bboxes, scores, score_threshold, post_threshold, nms_top_k, keep_top_k, use_gaussian=False,
                   gaussian_sigma=2.0, background_label=0, normalized=True):
    off = 0.0 if normalized else 1.0
    rows, counts, index = [], [], []
    for b in range(bboxes.shape[0]):
        img = []
        for c in range(scores.shape[1]):
            if c == background_label:
                continue
            cand = sorted([i for i in range(bboxes.shape[1]) if scores[b, c, i] > score_threshold],
                          key=lambda i: -scores[b, c, i])
            if nms_top_k > -1:
                cand = cand[:nms_top_k]
            ious = [[iou(bboxes[b, cand[i]], bboxes[b, cand[j]], off) for j in range(len(cand))]
                    for i in range(len(cand))]
            worst = [max([ious[i][j] for j in range(i)], default=0.0) for i in range(len(cand))]
            for i, bi in enumerate(cand):
                decay = 1.0
                for j in range(i):
                    if use_gaussian:
                        d = math.exp((worst[j] ** 2 - ious[i][j] ** 2) * gaussian_sigma)
                    else:
                        d = (1 - ious[i][j]) / (1 - worst[j])
                    decay = min(decay, d)
                s = scores[b, c, bi] * decay
                if s >= post_threshold:
                    img.append((s, [c, s] + list(bboxes[b, bi]), b * bboxes.shape[1] + bi))
        img.sort(key=lambda e: -e[0])
        if keep_top_k > -1:
            img = img[:keep_top_k]
        rows += [e[1] for e in img]
        index += [e[2] for e in img]
        counts.append(len(img))
    return np.asarray(rows).reshape(-1, 6), np.asarray(counts), np.asarray(index).reshape(-1, 1)


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def ref_yolo_box(x, img_size, anchors, class_num, conf_thresh, downsample_ratio, clip_bbox=True, scale_x_y=1.0,
                 iou_aware=False, iou_aware_factor=0.5):
    na = len(anchors) // 2
    n, _, h, w = x.shape
    boxes = np.zeros((n, na * h * w, 4))
    scores = np.zeros((n, na * h * w, class_num))
    start = na if iou_aware else 0
    for b in range(n):
        ih, iw = img_size[b]
        for a in range(na):
            ch = start + a * (5 + class_num)
            for i in range(h):
                for j in range(w):
                    k = (a * h + i) * w + j
                    conf = sigmoid(x[b, ch + 4, i, j])
                    if iou_aware:
                        conf = conf ** (1 - iou_aware_factor) * sigmoid(x[b, a, i, j]) ** iou_aware_factor
                    if conf < conf_thresh:
                        continue
                    bias = -0.5 * (scale_x_y - 1)
                    cx = (j + sigmoid(x[b, ch, i, j]) * scale_x_y + bias) * iw / w
                    cy = (i + sigmoid(x[b, ch + 1, i, j]) * scale_x_y + bias) * ih / h
                    bw = math.exp(x[b, ch + 2, i, j]) * anchors[2 * a] * iw / (downsample_ratio * w)
                    bh = math.exp(x[b, ch + 3, i, j]) * anchors[2 * a + 1] * ih / (downsample_ratio * h)
                    box = [cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2]
                    if clip_bbox:
                        box = [max(box[0], 0), max(box[1], 0), min(box[2], iw - 1), min(box[3], ih - 1)]
                    boxes[b, k] = box
                    scores[b, k] = conf * sigmoid(x[b, ch + 5:ch + 5 + class_num, i, j])
    return boxes, scores


def _sce(v, target):
    return max(v, 0.0) - v * target + math.log1p(math.exp(-abs(v)))


def _center_iou(a, b):
    ow = min(a[0] + a[2] / 2, b[0] + b[2] / 2) - max(a[0] - a[2] / 2, b[0] - b[2] / 2)
    oh = min(a[1] + a[3] / 2, b[1] + b[3] / 2) - max(a[1] - a[3] / 2, b[1] - b[3] / 2)
    inter = ow * oh if ow > 0 and oh > 0 else 0.0
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def ref_yolo_loss(x, gt_box, gt_label, anchors, anchor_mask, class_num, ignore_thresh, downsample_ratio,
                  gt_score=None, use_label_smooth=True, scale_x_y=1.0):
    n, _, h, w = x.shape
    nm, nc = len(anchor_mask), 5 + class_num
    v = x.reshape(n, nm, nc, h, w)
    size = downsample_ratio * h
    smooth = min(1.0 / class_num, 1.0 / 40) if use_label_smooth else 0.0
    loss = np.zeros(n)
    for b in range(n):
        gts = [k for k in range(gt_box.shape[1]) if gt_box[b, k, 2] >= 1e-6 and gt_box[b, k, 3] >= 1e-6]
        obj = np.zeros((nm, h, w))
        for m, a in enumerate(anchor_mask):
            for i in range(h):
                for j in range(w):
                    bias = -0.5 * (scale_x_y - 1)
                    pred = [(j + sigmoid(v[b, m, 0, i, j]) * scale_x_y + bias) / h,
                            (i + sigmoid(v[b, m, 1, i, j]) * scale_x_y + bias) / h,
                            math.exp(v[b, m, 2, i, j]) * anchors[2 * a] / size,
                            math.exp(v[b, m, 3, i, j]) * anchors[2 * a + 1] / size]
                    if max([_center_iou(pred, gt_box[b, k]) for k in gts], default=0.0) > ignore_thresh:
                        obj[m, i, j] = -1.0
        for k in gts:
            g = gt_box[b, k]
            fits = [_center_iou([0, 0, g[2], g[3]], [0, 0, anchors[2 * a] / size, anchors[2 * a + 1] / size])
                    for a in range(len(anchors) // 2)]
            best = int(np.argmax(fits))
            if best not in anchor_mask:
                continue
            m = anchor_mask.index(best)
            gi, gj = int(g[0] * w), int(g[1] * h)
            s = 1.0 if gt_score is None else gt_score[b, k]
            p = v[b, m, :, gj, gi]
            weight = (2.0 - g[2] * g[3]) * s
            loss[b] += weight * (_sce(p[0], g[0] * h - gi) + _sce(p[1], g[1] * h - gj)
                                 + abs(p[2] - math.log(g[2] * size / anchors[2 * best]))
                                 + abs(p[3] - math.log(g[3] * size / anchors[2 * best + 1])))
            for c in range(class_num):
                loss[b] += s * _sce(p[5 + c], 1.0 - smooth if c == gt_label[b, k] else smooth)
            obj[m, gj, gi] = s
        for m in range(nm):
            for i in range(h):
                for j in range(w):
                    o = obj[m, i, j]
                    if o > 1e-5:
                        loss[b] += _sce(v[b, m, 4, i, j], 1.0) * o
                    elif o > -0.5:
                        loss[b] += _sce(v[b, m, 4, i, j], 0.0)
    return loss


def fd_grad(f, arr, eps=1e-6):
    g = np.zeros_like(arr)
    for k in range(arr.size):
        p, m = arr.copy(), arr.copy()
        p.flat[k] += eps
        m.flat[k] -= eps
        g.flat[k] = (f(p) - f(m)) / (2 * eps)
    return g


# ---------------------------------------------------------------- nms

def test_nms_closed_form_iou():
    # IoU([0,0,10,10], [1,1,11,11]) = 81 / 119 = 0.6807; [0,0,10,10.5] overlaps box 0 by 100 / 105.
    boxes = t([[0, 0, 10, 10], [1, 1, 11, 11], [0, 0, 10, 10.5], [20, 20, 30, 30]])
    assert ops.nms(boxes, 0.68).numpy().tolist() == [0, 3]
    assert ops.nms(boxes, 0.681).numpy().tolist() == [0, 1, 3]
    assert ops.nms(boxes, 0.96).numpy().tolist() == [0, 1, 2, 3]
    # IoU exactly at the threshold keeps the box (only larger overlaps suppress).
    assert ops.nms(t([[0, 0, 10, 10], [0, 0, 10, 5]]), 0.5).numpy().tolist() == [0, 1]
    out = ops.nms(t(np.zeros((0, 4))), 0.5)
    assert out.shape == [0] and out.dtype == oar.int64


def test_nms_scores_categories_top_k():
    boxes = t([[0, 0, 10, 10], [1, 1, 11, 11], [0, 0, 10, 10.5], [20, 20, 30, 30], [0, 0, 1, 1]])
    scores = t([0.1, 0.9, 0.5, 0.3, 0.8])
    cats = t([0, 0, 1, 1, 0], "int64")
    assert ops.nms(boxes, 0.5, scores).numpy().tolist() == [1, 4, 3]
    assert ops.nms(boxes, 0.5, scores, cats, [0, 1]).numpy().tolist() == [1, 4, 2, 3]
    assert ops.nms(boxes, 0.5, scores, cats, [0]).numpy().tolist() == [1, 4]
    assert ops.nms(boxes, 0.5, scores, cats, [0, 1], top_k=3).numpy().tolist() == [1, 4, 2]
    assert ops.nms(boxes, 0.5, scores, top_k=2).numpy().tolist() == [1, 4]


@pytest.mark.parametrize("thr", [0.2, 0.5, 0.8])
def test_nms_random_against_reference(thr):
    rng = np.random.default_rng(int(thr * 10))
    b = random_boxes(40, hi=15, rng=rng)
    s = rng.uniform(size=40)
    c = rng.integers(0, 3, 40)
    assert ops.nms(t(b, "float64"), thr).numpy().tolist() == ref_nms(b, thr)
    assert ops.nms(t(b, "float64"), thr, t(s, "float64")).numpy().tolist() == ref_nms(b, thr, s)
    got = ops.nms(t(b, "float64"), thr, t(s, "float64"), t(c, "int64"), [0, 2], top_k=7).numpy().tolist()
    assert got == ref_nms(b, thr, s, c, [0, 2], 7)


def test_nms_errors():
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.nms\] expected boxes of shape \[N, 4\], got \[3, 5\]"):
        ops.nms(oar.zeros([3, 5]))
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.nms\] categories"):
        ops.nms(oar.zeros([3, 4]), 0.5, oar.zeros([3]), oar.zeros([3], dtype="int64"))
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.nms\] expected scores"):
        ops.nms(oar.zeros([3, 4]), 0.5, oar.zeros([2]))
    with pytest.raises(TypeError, match=r"^\[oar.vision.ops.nms\]"):
        ops.nms([[0, 0, 1, 1]])


# ---------------------------------------------------------------- matrix_nms

@pytest.mark.parametrize("kw", [
    dict(score_threshold=0.3, post_threshold=0.2, nms_top_k=10, keep_top_k=8),
    dict(score_threshold=0.1, post_threshold=0.3, nms_top_k=-1, keep_top_k=-1, use_gaussian=True, normalized=False),
    dict(score_threshold=0.1, post_threshold=0.0, nms_top_k=-1, keep_top_k=100, background_label=-1),
])
def test_matrix_nms_against_reference(kw):
    rng = np.random.default_rng(3)
    b = np.stack([random_boxes(15, hi=10, rng=rng) / 20 for _ in range(2)])
    s = rng.uniform(size=(2, 3, 15))
    out, num, idx = ops.matrix_nms(t(b, "float64"), t(s, "float64"), return_index=True, **kw)
    rows, counts, index = ref_matrix_nms(b, s, **kw)
    np.testing.assert_allclose(out.numpy(), rows, rtol=1e-12, atol=1e-12)
    assert num.numpy().tolist() == counts.tolist() and num.dtype == oar.int32
    assert idx.numpy().tolist() == index.tolist() and idx.dtype == oar.int64


def test_matrix_nms_closed_form_and_outputs():
    # Second box overlaps the first with IoU 0.5, so its score decays by (1 - 0.5) / (1 - 0).
    boxes = t([[[0, 0, 1, 1], [0, 0, 1, 0.5]]], "float64")
    scores = t([[[0, 0], [0.9, 0.8]]], "float64")
    out, num, idx = ops.matrix_nms(boxes, scores, 0.1, 0.0, -1, -1)
    np.testing.assert_allclose(out.numpy()[:, 1], [0.9, 0.4])
    assert idx is None and num.numpy().tolist() == [2]
    out, num, idx = ops.matrix_nms(boxes, scores, 0.1, 0.0, -1, -1, use_gaussian=True, gaussian_sigma=2.0,
                                   return_rois_num=False)
    np.testing.assert_allclose(out.numpy()[:, 1], [0.9, 0.8 * math.exp(-2.0 * 0.25)])
    assert num is None
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.matrix_nms\]"):
        ops.matrix_nms(oar.zeros([1, 3, 4]), oar.zeros([1, 2, 4]), 0.1, 0.1, -1, -1)


# ---------------------------------------------------------------- region ops (more in opdb_vision.py)

def test_roi_align_closed_form():
    # A linear ramp is reproduced exactly by bilinear sampling: the bin mean is the ramp at its centre.
    x = np.add.outer(np.arange(6.0), 10 * np.arange(7.0))[None, None]  # value = y + 10 x
    out = ops.roi_align(t(x, "float64"), t([[1.5, 1.0, 5.5, 4.0]], "float64"), t([1], "int32"), (2, 2),
                        aligned=True).numpy()
    # aligned: box shifted by -0.5 -> x in [1, 5], y in [0.5, 3.5]; bin centres x 2, 4; y 1.25, 2.75
    np.testing.assert_allclose(out[0, 0], [[1.25 + 20, 1.25 + 40], [2.75 + 20, 2.75 + 40]], rtol=1e-12)


def test_region_ops_per_box_outputs_and_boxes_num():
    x = RNG.normal(size=(3, 8, 6, 6))
    b = random_boxes(4, hi=4, smax=2)
    num = [1, 0, 3]  # the second image owns no box
    for fn, ref in ((ops.roi_align, ref_roi_align), (ops.roi_pool, ref_roi_pool), (ops.psroi_pool, ref_psroi_pool)):
        out = fn(t(x, "float64"), t(b, "float64"), t(num, "int32"), 2)
        np.testing.assert_allclose(out.numpy(), ref(x, b, num, 2), rtol=1e-10, atol=1e-12)
    assert ops.roi_align(t(x), t(b), t(num, "int32"), (3, 2)).shape == [4, 8, 3, 2]
    assert ops.psroi_pool(t(x), t(b), t(num, "int32"), 2).shape == [4, 2, 2, 2]
    empty = ops.roi_align(t(x), t(np.zeros((0, 4))), t([0, 0, 0], "int32"), 2)
    assert empty.shape == [0, 8, 2, 2]


def test_region_ops_box_outside_the_image_gives_zeros():
    x = t(RNG.normal(size=(1, 4, 5, 5)), "float64")
    far = t([[20.0, 20.0, 30.0, 30.0], [0.0, 0.0, 2.0, 2.0]], "float64")
    num = t([2], "int32")
    for fn in (ops.roi_align, ops.roi_pool, ops.psroi_pool):
        out = fn(x, far, num, 2).numpy()
        assert not out[0].any() and out[1].any(), fn.__name__


def test_region_layers():
    x, b, num = t(RNG.normal(size=(1, 8, 5, 5))), t([[0, 0, 3, 3]]), t([1], "int32")
    np.testing.assert_allclose(ops.RoIAlign(2, 0.5)(x, b, num, aligned=False).numpy(),
                               ops.roi_align(x, b, num, 2, 0.5, aligned=False).numpy())
    np.testing.assert_allclose(ops.RoIPool(2)(x, b, num).numpy(), ops.roi_pool(x, b, num, 2).numpy())
    np.testing.assert_allclose(ops.PSRoIPool(2)(x, b, num).numpy(), ops.psroi_pool(x, b, num, 2).numpy())
    assert list(ops.RoIAlign(2).parameters()) == []


# ---------------------------------------------------------------- deform_conv2d

def test_deform_conv2d_zero_offset_is_conv2d():
    x = RNG.normal(size=(2, 4, 5, 6))
    w = RNG.normal(size=(6, 2, 3, 3))
    b = RNG.normal(size=6)
    out = ops.deform_conv2d(t(x, "float64"), oar.zeros([2, 18, 3, 3], dtype="float64"), t(w, "float64"),
                            t(b, "float64"), stride=(1, 2), padding=(0, 1), groups=2)
    ref = oar.nn.functional.conv2d(t(x, "float64"), t(w, "float64"), t(b, "float64"), stride=(1, 2),
                                   padding=(0, 1), groups=2)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)


def test_deform_conv2d_layer():
    layer = ops.DeformConv2D(4, 6, kernel_size=(3, 2), padding=1, deformable_groups=2, groups=2)
    # Paddle 3.3.1: DeformConv2D(4, 6, (3, 2), groups=2) has 6 * 2 * 3 * 2 + 6 = 78 parameters.
    assert sum(p.numel() for p in layer.parameters()) == 78
    assert layer.weight.shape == [6, 2, 3, 2] and layer.bias.shape == [6]
    x = RNG.normal(size=(1, 4, 4, 5))
    off = RNG.normal(size=(1, 24, 4, 6))
    mask = RNG.uniform(size=(1, 12, 4, 6))
    out = layer(t(x), t(off), t(mask))
    ref = ref_deform_conv2d(x, off, layer.weight.numpy().astype(np.float64), layer.bias.numpy(), padding=1,
                            deformable_groups=2, groups=2, mask=mask)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)
    assert ops.DeformConv2D(2, 3, 1, bias_attr=False).bias is None


# ---------------------------------------------------------------- box_coder, prior_box

def test_box_coder_closed_form_and_variance_tensor():
    prior = t([[0, 0, 2, 4]], "float64")
    target = t([[1, 1, 3, 3]], "float64")
    # not normalised: prior 3 x 5 centred (1.5, 2.5); target 3 x 3 centred (2, 2)
    enc = ops.box_coder(prior, [1.0, 1.0, 1.0, 1.0], target, box_normalized=False).numpy()
    np.testing.assert_allclose(enc, [[[0.5 / 3, -0.1, 0.0, math.log(3 / 5)]]], rtol=1e-12)
    var = t([[0.1, 0.2, 0.3, 0.4]], "float64")
    np.testing.assert_allclose(ops.box_coder(prior, var, target, box_normalized=False).numpy(),
                               enc / np.array([0.1, 0.2, 0.3, 0.4]), rtol=1e-12)
    dec = ops.box_coder(prior, var, t([[[2.0, 0.0, 0.0, 0.0]]], "float64"), "decode_center_size",
                        box_normalized=False)
    np.testing.assert_allclose(dec.numpy(), [[[0.6, 0.0, 2.6, 4.0]]], rtol=1e-12)


def test_box_coder_errors():
    p = oar.zeros([3, 4])
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.box_coder\] code_type"):
        ops.box_coder(p, [1.0] * 4, p, "center")
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.box_coder\] decode_center_size expects"):
        ops.box_coder(p, [1.0] * 4, oar.zeros([2, 4]), "decode_center_size")
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.box_coder\] prior_box_var"):
        ops.box_coder(p, oar.zeros([2, 4]), p)


def test_prior_box_closed_form():
    # One 2 x 2 map over an 8 x 8 image: step 4, centres at 2 and 6.
    boxes, var = ops.prior_box(oar.zeros([1, 3, 2, 2]), oar.zeros([1, 3, 8, 8]), min_sizes=[2.0], max_sizes=[8.0],
                               aspect_ratios=[4.0], flip=True, variance=[0.1, 0.2, 0.3, 0.4])
    assert boxes.shape == [2, 2, 4, 4] and var.shape == [2, 2, 4, 4]
    # priors at cell (0, 1), centre (6, 2): ratios 1, 4, 1/4 of size 2, then the square sqrt(2 * 8) = 4
    expected = [[5, 1, 7, 3], [4, 1.5, 8, 2.5], [5.5, 0, 6.5, 4], [4, 0, 8, 4]]
    np.testing.assert_allclose(boxes.numpy()[0, 1], np.asarray(expected) / 8, rtol=1e-6)
    np.testing.assert_allclose(var.numpy()[1, 0], [[0.1, 0.2, 0.3, 0.4]] * 4, rtol=1e-6)
    first, _ = ops.prior_box(oar.zeros([1, 3, 2, 2]), oar.zeros([1, 3, 8, 8]), min_sizes=[2.0], max_sizes=[8.0],
                             aspect_ratios=[4.0], flip=True, min_max_aspect_ratios_order=True, clip=True)
    np.testing.assert_allclose(first.numpy()[0, 1], np.clip(np.asarray(expected)[[0, 3, 1, 2]] / 8, 0, 1), rtol=1e-6)
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.prior_box\] max_sizes"):
        ops.prior_box(oar.zeros([1, 3, 2, 2]), oar.zeros([1, 3, 8, 8]), [2.0], [1.0, 3.0])


# ---------------------------------------------------------------- yolo

@pytest.mark.parametrize("kw", [dict(), dict(clip_bbox=False, scale_x_y=1.2), dict(iou_aware=True,
                                                                                 iou_aware_factor=0.4)])
def test_yolo_box_against_reference(kw):
    anchors = [10, 13, 16, 30]
    c = 2 * 8 + (2 if kw.get("iou_aware") else 0)
    x = RNG.normal(size=(2, c, 3, 4))
    size = np.array([[30, 40], [50, 20]])
    boxes, scores = ops.yolo_box(t(x, "float64"), t(size, "int32"), anchors, 3, 0.4, 8, **kw)
    rb, rs = ref_yolo_box(x, size, anchors, 3, 0.4, 8, **kw)
    np.testing.assert_allclose(boxes.numpy(), rb, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(scores.numpy(), rs, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.yolo_box\] x must have 16 channels"):
        ops.yolo_box(oar.zeros([1, 15, 2, 2]), t([[8, 8]], "int32"), anchors, 3, 0.1, 8)


def _yolo_case(seed, mask, with_score):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, len(mask) * 7, 3, 3))
    gt = np.concatenate([rng.uniform(0.05, 0.95, (2, 4, 2)), rng.uniform(0.1, 1.4, (2, 4, 2))], -1)
    gt[1, 2:] = 0.0  # padding rows
    gt[0, 1] = gt[0, 0] * [1, 1, 1.05, 1.05]  # two ground truths in one cell
    label = rng.integers(0, 2, (2, 4))
    score = rng.uniform(0.3, 1.0, (2, 4)) if with_score else None
    return x, gt, label, score


@pytest.mark.parametrize("mask,smooth,sxy,with_score,thr", [([0, 1, 2], True, 1.0, False, 0.7),
                                                          ([1, 2], False, 1.2, True, 0.3)])
def test_yolo_loss_forward_and_gradient(mask, smooth, sxy, with_score, thr):
    anchors = [10, 13, 16, 30, 33, 23]
    x, gt, label, score = _yolo_case(len(mask), mask, with_score)
    kw = dict(anchors=anchors, anchor_mask=mask, class_num=2, ignore_thresh=thr, downsample_ratio=8,
              use_label_smooth=smooth, scale_x_y=sxy)

    def run(arr, stop=True):
        xt = t(arr, "float64")
        xt.stop_gradient = stop
        return xt, ops.yolo_loss(xt, t(gt, "float64"), t(label, "int32"),
                                 gt_score=None if score is None else t(score, "float64"), **kw)

    xt, loss = run(x, stop=False)
    assert loss.shape == [2]
    np.testing.assert_allclose(loss.numpy(), ref_yolo_loss(x, gt, label, gt_score=score, **kw), rtol=1e-10)
    weights = np.array([0.7, -1.3])
    grad, = oar.grad([loss], [xt], grad_outputs=[t(weights, "float64")])
    expected = fd_grad(lambda a: float(run(a)[1].numpy() @ weights), x)
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_yolo_loss_errors():
    x = oar.zeros([1, 14, 2, 2])
    gt, label = oar.zeros([1, 2, 4]), oar.zeros([1, 2], dtype="int32")
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.yolo_loss\] anchor_mask"):
        ops.yolo_loss(x, gt, label, [10, 13, 16, 30], [0, 5], 2, 0.7, 8)
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.yolo_loss\] x must have a square"):
        ops.yolo_loss(oar.zeros([1, 14, 2, 3]), gt, label, [10, 13, 16, 30], [0, 1], 2, 0.7, 8)


# ---------------------------------------------------------------- proposals and FPN levels

def ref_generate_proposals(scores, deltas, img_size, anchors, variances, pre_nms_top_n, post_nms_top_n, nms_thresh,
                           min_size, pixel_offset):
    n, a, h, w = scores.shape
    off = 1.0 if pixel_offset else 0.0
    rois, probs, nums = [], [], []
    for b in range(n):
        cand = []
        for i in range(h):
            for j in range(w):
                for k in range(a):
                    cand.append((scores[b, k, i, j], deltas[b, 4 * k:4 * k + 4, i, j], anchors[i, j, k],
                                 variances[i, j, k]))
        cand.sort(key=lambda e: -e[0])
        cand = cand[:pre_nms_top_n]
        kept = []
        ih, iw = img_size[b]
        for s, d, an, v in cand:
            aw, ah = an[2] - an[0] + off, an[3] - an[1] + off
            cx, cy = v[0] * d[0] * aw + an[0] + aw / 2, v[1] * d[1] * ah + an[1] + ah / 2
            bw = math.exp(min(v[2] * d[2], math.log(1000 / 16))) * aw
            bh = math.exp(min(v[3] * d[3], math.log(1000 / 16))) * ah
            box = [min(max(cx - bw / 2, 0), iw - off), min(max(cy - bh / 2, 0), ih - off),
                   min(max(cx + bw / 2 - off, 0), iw - off), min(max(cy + bh / 2 - off, 0), ih - off)]
            if box[2] - box[0] + off >= max(min_size, 1) and box[3] - box[1] + off >= max(min_size, 1):
                if not any(iou(box, kb, off) > nms_thresh for _, kb in kept):
                    kept.append((s, box))
        kept = kept[:post_nms_top_n] or [(0.0, [0.0] * 4)]
        rois += [k[1] for k in kept]
        probs += [k[0] for k in kept]
        nums.append(len(kept))
    return np.asarray(rois), np.asarray(probs)[:, None], nums


def test_generate_proposals_against_reference():
    rng = np.random.default_rng(5)
    n, a, h, w = 2, 3, 3, 4
    sc = rng.uniform(size=(n, a, h, w))
    dl = rng.normal(scale=0.5, size=(n, 4 * a, h, w))
    cx = (np.arange(w)[None, :, None] * 8 + 4) * np.ones((h, w, a))
    cy = (np.arange(h)[:, None, None] * 8 + 4) * np.ones((h, w, a))
    half = np.array([4, 8, 12.0]) * np.ones((h, w, a))
    anchors = np.stack([cx - half, cy - half, cx + half, cy + half], -1)
    var = rng.uniform(0.5, 1.5, (h, w, a, 4))
    size = np.array([[30.0, 40.0], [25.0, 33.0]])
    for kw in (dict(pre_nms_top_n=20, post_nms_top_n=6, nms_thresh=0.5, min_size=0.1, pixel_offset=False),
               dict(pre_nms_top_n=6000, post_nms_top_n=1000, nms_thresh=0.7, min_size=3.0, pixel_offset=True)):
        rois, probs, num = ops.generate_proposals(t(sc, "float64"), t(dl, "float64"), t(size, "float64"),
                                                  t(anchors, "float64"), t(var, "float64"), return_rois_num=True,
                                                  **kw)
        r_rois, r_probs, r_num = ref_generate_proposals(sc, dl, size, anchors, var, **kw)
        np.testing.assert_allclose(rois.numpy(), r_rois, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(probs.numpy(), r_probs, rtol=1e-12)
        assert num.numpy().tolist() == r_num and num.dtype == oar.int32
    # Every box filtered out by min_size: each image reports one zero box with probability 0.
    rois, probs, num = ops.generate_proposals(t(sc), t(dl), t(size), t(anchors), t(var), min_size=100.0,
                                              return_rois_num=True)
    assert not rois.numpy().any() and not probs.numpy().any() and num.numpy().tolist() == [1, 1]
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.generate_proposals\] expected anchors"):
        ops.generate_proposals(t(sc), t(dl), t(size), t(anchors[:, :, :2]), t(var[:, :, :2]))


def test_distribute_fpn_proposals_closed_form():
    # sqrt(area) 10, 100, 300, 223, 224, 448 -> levels 2 (clipped), 2, 4, 3, 4, 5 (refer 224 at level 4)
    rois = t([[0, 0, 10, 10], [0, 0, 100, 100], [0, 0, 300, 300], [0, 0, 223, 223], [0, 0, 224, 224],
              [0, 0, 448, 448]])
    levels, restore, nums = ops.distribute_fpn_proposals(rois, 2, 5, 4, 224, rois_num=t([2, 4], "int32"))
    assert [lv.shape[0] for lv in levels] == [2, 1, 2, 1]
    np.testing.assert_array_equal(levels[2].numpy(), [[0, 0, 300, 300], [0, 0, 224, 224]])
    assert restore.numpy().ravel().tolist() == [0, 1, 3, 2, 4, 5] and restore.dtype == oar.int32
    assert [v.numpy().tolist() for v in nums] == [[2, 0], [0, 1], [0, 2], [0, 1]]
    # pixel_offset adds one pixel: 223 -> 224 moves up a level.
    levels, _, nums = ops.distribute_fpn_proposals(rois, 2, 5, 4, 224, pixel_offset=True)
    assert [lv.shape[0] for lv in levels] == [2, 0, 3, 1] and nums is None


# ---------------------------------------------------------------- files

def test_read_file_and_decode_jpeg(tmp_path):
    from PIL import Image

    rgb = np.zeros((6, 8, 3), dtype=np.uint8)
    rgb[:, :4] = (250, 10, 10)
    rgb[:, 4:] = (10, 10, 250)
    path = tmp_path / "a.jpg"
    Image.fromarray(rgb).save(path, quality=95)
    data = ops.read_file(str(path))
    assert data.dtype == oar.uint8 and data.numpy().tobytes() == path.read_bytes()
    img = ops.decode_jpeg(data)
    assert img.shape == [3, 6, 8] and img.dtype == oar.uint8
    # JPEG is lossy: columns away from the colour edge keep their colour; all pixels match Pillow's decode.
    assert np.abs(img.numpy()[:, :, [0, 1, 6, 7]].astype(int) - rgb.transpose(2, 0, 1)[:, :, [0, 1, 6, 7]]).max() < 8
    np.testing.assert_array_equal(img.numpy(), np.asarray(Image.open(path).convert("RGB")).transpose(2, 0, 1))
    gray = ops.decode_jpeg(data, mode="gray")
    assert gray.shape == [1, 6, 8]
    Image.fromarray(rgb[:, :, 0]).save(tmp_path / "g.jpg")
    assert ops.decode_jpeg(ops.read_file(str(tmp_path / "g.jpg"))).shape == [1, 6, 8]
    assert ops.decode_jpeg(ops.read_file(str(tmp_path / "g.jpg")), mode="rgb").shape == [3, 6, 8]
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG")
    png = oar.to_tensor(np.frombuffer(buf.getvalue(), dtype=np.uint8))
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.decode_jpeg\] x must hold a JPEG image, got PNG"):
        ops.decode_jpeg(png)
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.decode_jpeg\] x does not hold"):
        ops.decode_jpeg(oar.to_tensor(np.arange(10, dtype=np.uint8)))
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.decode_jpeg\] mode"):
        ops.decode_jpeg(data, mode="bgr")
    with pytest.raises(ValueError, match=r"^\[oar.vision.ops.read_file\] cannot read"):
        ops.read_file(str(tmp_path / "missing.jpg"))


def test_exports_match_paddle_names():
    # paddle.vision.ops.__all__ in Paddle 3.3.1
    names = ['yolo_loss', 'yolo_box', 'prior_box', 'box_coder', 'deform_conv2d', 'DeformConv2D',
             'distribute_fpn_proposals', 'generate_proposals', 'read_file', 'decode_jpeg', 'roi_pool', 'RoIPool',
             'psroi_pool', 'PSRoIPool', 'roi_align', 'RoIAlign', 'nms', 'matrix_nms']
    assert sorted(ops.__all__) == sorted(names)
    assert all(callable(getattr(oar.vision.ops, n)) for n in names)
