"""Op-database entries for the differentiable oar.vision.ops: roi_align, roi_pool, psroi_pool,
deform_conv2d and box_coder.

The NumPy references are the loop-by-loop ones in test_vision_ops.py. Boxes and boxes_num are
passed as lists (constants: the region ops carry no gradient to boxes, as in Paddle), so the
harness checks float64 gradients with respect to the feature map, offsets, mask, weight and bias,
and box_coder's with respect to both box sets and a variance tensor.
"""
import numpy as np

import oar
from oar.vision import ops
from opdb import FLOATS, ErrorInput, OpInfo, Sample, register
from test_vision_ops import (ref_box_coder, ref_deform_conv2d, ref_psroi_pool, ref_roi_align, ref_roi_pool,
                             random_boxes)


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.vision.ops.{name}]")


def _rng(seed):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------- region ops

def _region_op(fn):
    def op(x, boxes, boxes_num, output_size, **kw):
        return fn(x, oar.to_tensor(np.asarray(boxes, dtype=np.float64).reshape(-1, 4)),
                  oar.to_tensor(np.asarray(boxes_num, dtype=np.int32)), output_size, **kw)
    return op


def _region_ref(ref):
    def run(x, boxes, boxes_num, output_size, **kw):
        return ref(x, np.asarray(boxes, dtype=np.float64).reshape(-1, 4), boxes_num, output_size, **kw)
    return run


def _boxes(n, seed, hi=4.0, smax=3.0):
    return random_boxes(n, lo=-0.5, hi=hi, smin=0.3, smax=smax, rng=_rng(seed)).tolist()


def _region_samples(channels, variants, hw=(5, 6)):
    """Samples over [N, channels, *hw] feature maps; `variants` are (output_size, kwargs)."""
    h, w = hw

    def gen(dtype):
        out = []
        for k, (size, kw) in enumerate(variants):
            rng = _rng(20 + k)
            # one image (small enough for the gradient check), then two images with a boxless one
            out.append(Sample((rng.normal(size=(1, channels, h, w)), _boxes(2, k), [2], size), dict(kw)))
            out.append(Sample((rng.normal(size=(3, channels, 5, 6)), _boxes(3, k + 9, hi=5.0), [1, 0, 2], size),
                              dict(kw), grad=False))
        rng = _rng(40)
        out.append(Sample((rng.normal(size=(2, channels, 5, 6)), _boxes(3, 41), [1, 2], variants[0][0]),
                          dict(variants[0][1]), noncontig=True, grad=False))
        out.append(Sample((rng.normal(size=(1, channels, 4, 4)), [], [0], variants[0][0]), grad=False))
        return out
    return gen


def _region_errors(fn, name, channels):
    x = oar.zeros([2, channels, 4, 4])
    b = oar.zeros([3, 4])
    return lambda: [
        _err(lambda: fn(x, oar.zeros([3, 5]), oar.to_tensor([1, 2]), 2), ValueError, name),
        _err(lambda: fn(x, b, oar.to_tensor([1, 1]), 2), ValueError, name),
        _err(lambda: fn(x, b, oar.to_tensor([1, 2, 0]), 2), ValueError, name),
        _err(lambda: fn(x, b, oar.to_tensor([1, 2]), 0), ValueError, name),
        _err(lambda: fn(oar.zeros([channels, 4, 4]), b, oar.to_tensor([3]), 2), ValueError, name),
        _err(lambda: fn(x.astype("int32"), b, oar.to_tensor([1, 2]), 2), TypeError, name),
        _err(lambda: fn(x, b, None, 2), ValueError, name),
        _err(lambda: fn(x.numpy(), b, oar.to_tensor([1, 2]), 2), TypeError, name),
    ]


# Bilinear sampling in float16 / bfloat16 rounds the sample positions too.
_LOW_TOL = {"float16": (2e-2, 2e-2), "bfloat16": (8e-2, 8e-2)}

register(OpInfo("vision.ops.roi_align", _region_op(ops.roi_align), _region_ref(ref_roi_align), FLOATS,
                _region_samples(2, [((2, 3), {}), (2, {"aligned": False, "sampling_ratio": 2}),
                                    ((3, 2), {"spatial_scale": 0.5, "sampling_ratio": 1}),
                                    (1, {"aligned": False, "spatial_scale": 2.0})]),
                grad=True, tol=_LOW_TOL,
                errors=lambda: _region_errors(ops.roi_align, "roi_align", 2)()
                + [_err(lambda: ops.roi_align(oar.zeros([1, 1, 4, 4]), oar.zeros([1, 4]), oar.to_tensor([1]), 2,
                                              sampling_ratio=1.5), TypeError, "roi_align")]))

register(OpInfo("vision.ops.roi_pool", _region_op(ops.roi_pool), _region_ref(ref_roi_pool), FLOATS,
                _region_samples(2, [((2, 3), {}), (2, {"spatial_scale": 0.5}), ((3, 1), {"spatial_scale": 2.0})]),
                grad=True, errors=_region_errors(ops.roi_pool, "roi_pool", 2)))

register(OpInfo("vision.ops.psroi_pool", _region_op(ops.psroi_pool), _region_ref(ref_psroi_pool), FLOATS,
                _region_samples(4, [((2, 1), {}), ((1, 2), {"spatial_scale": 0.5}), ((2, 2), {"spatial_scale": 2.0})],
                                hw=(3, 5)),
                grad=True,
                errors=lambda: _region_errors(ops.psroi_pool, "psroi_pool", 4)()
                + [_err(lambda: ops.psroi_pool(oar.zeros([1, 3, 4, 4]), oar.zeros([1, 4]), oar.to_tensor([1]), 2),
                        ValueError, "psroi_pool")]))


# ---------------------------------------------------------------- deform_conv2d

def _dcn_op(x, offset, weight, bias, mask, **kw):
    return ops.deform_conv2d(x, offset, weight, bias, mask=mask, **kw)


def _dcn_ref(x, offset, weight, bias, mask, **kw):
    return ref_deform_conv2d(x, offset, weight, bias, mask=mask, **kw)


def _dcn_samples(dtype):
    rng = _rng(50)

    def arr(*shape, scale=1.0):
        return rng.normal(scale=scale, size=shape)

    return [
        # kernel 1 x 2 on a 2 x 3 map, modulated (v2)
        Sample((arr(1, 2, 2, 3), arr(1, 4, 2, 2, scale=0.8), arr(2, 2, 1, 2), arr(2), rng.uniform(size=(1, 2, 2, 2)))),
        # two deformable groups and two groups, no mask or bias (v1)
        Sample((arr(1, 2, 2, 3), arr(1, 8, 2, 2, scale=0.8), arr(2, 1, 1, 2), None, None),
               {"deformable_groups": 2, "groups": 2}),
        # offsets large enough to leave the image; stride, padding and dilation
        Sample((arr(2, 4, 5, 6), arr(2, 2 * 2 * 4, 3, 4, scale=2.0), arr(6, 2, 2, 2), arr(6),
                rng.uniform(size=(2, 2 * 4, 3, 4))),
               {"stride": 2, "padding": 1, "dilation": (2, 1), "deformable_groups": 2, "groups": 2}, grad=False),
        Sample((arr(2, 2, 3, 4), arr(2, 8, 4, 3, scale=0.8), arr(3, 2, 2, 2), arr(3), rng.uniform(size=(2, 4, 4, 3))),
               {"padding": (1, 0)}, noncontig=True, grad=False),
    ]


def _dcn_errors():
    x, w = oar.zeros([1, 2, 4, 4]), oar.zeros([3, 2, 3, 3])
    off = oar.zeros([1, 18, 2, 2])
    return [
        _err(lambda: ops.deform_conv2d(x, oar.zeros([1, 16, 2, 2]), w), ValueError, "deform_conv2d"),
        _err(lambda: ops.deform_conv2d(x, off, w, mask=oar.zeros([1, 8, 2, 2])), ValueError, "deform_conv2d"),
        _err(lambda: ops.deform_conv2d(x, off, oar.zeros([3, 1, 3, 3])), ValueError, "deform_conv2d"),
        _err(lambda: ops.deform_conv2d(x, off, w, deformable_groups=3), ValueError, "deform_conv2d"),
        _err(lambda: ops.deform_conv2d(x, off, w, stride=0), ValueError, "deform_conv2d"),
        _err(lambda: ops.deform_conv2d(x, off, w, padding=-1), ValueError, "deform_conv2d"),
        _err(lambda: ops.deform_conv2d(oar.zeros([1, 2, 2, 2]), off, w), ValueError, "deform_conv2d"),
        _err(lambda: ops.deform_conv2d(x, off, w, bias=oar.zeros([2])), ValueError, "deform_conv2d"),
        _err(lambda: ops.deform_conv2d(x.numpy(), off, w), TypeError, "deform_conv2d"),
    ]


register(OpInfo("vision.ops.deform_conv2d", _dcn_op, _dcn_ref, FLOATS, _dcn_samples, grad=True,
                tol={"float16": (3e-2, 3e-2), "bfloat16": (2e-1, 1e-1)}, errors=_dcn_errors))


# ---------------------------------------------------------------- box_coder

def _box_coder_samples(dtype):
    rng = _rng(60)

    def boxes(n, lo=0.0):
        return random_boxes(n, lo=lo, hi=8.0, smin=1.0, smax=4.0, rng=rng)

    var = [0.1, 0.1, 0.2, 0.2]
    return [
        Sample((boxes(3), var, boxes(2))),
        Sample((boxes(3), rng.uniform(0.5, 1.5, (3, 4)), boxes(2)), {"box_normalized": False}),
        Sample((boxes(3), var, rng.normal(size=(2, 3, 4))), {"code_type": "decode_center_size"}),
        Sample((boxes(2), rng.uniform(0.5, 1.5, (2, 4)), rng.normal(size=(2, 3, 4))),
               {"code_type": "decode_center_size", "axis": 1, "box_normalized": False}),
        Sample((boxes(3), None, rng.normal(size=(4, 3, 4))), {"code_type": "decode_center_size"}, noncontig=True),
        Sample((boxes(3), var, boxes(0)), grad=False),
    ]


def _box_coder_errors():
    p = oar.zeros([3, 4])
    return [
        _err(lambda: ops.box_coder(oar.zeros([3, 5]), [1.0] * 4, p), ValueError, "box_coder"),
        _err(lambda: ops.box_coder(p, [1.0] * 3, p), TypeError, "box_coder"),
        _err(lambda: ops.box_coder(p, [1.0] * 4, oar.zeros([2, 3, 4]), "decode_center_size", axis=2), ValueError,
             "box_coder"),
        _err(lambda: ops.box_coder(p, [1.0] * 4, oar.zeros([2, 3, 4]), "decode_center_size", axis=1), ValueError,
             "box_coder"),
        _err(lambda: ops.box_coder(p, [1.0] * 4, p.astype("float64")), TypeError, "box_coder"),
    ]


register(OpInfo("vision.ops.box_coder", ops.box_coder, ref_box_coder, FLOATS, _box_coder_samples, grad=True,
                tol={"float16": (5e-2, 2e-2), "bfloat16": (3e-1, 5e-2)}, errors=_box_coder_errors))
