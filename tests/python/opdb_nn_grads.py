"""Op-database entries whose forward is a gradient, and the fused convolution: the kernels that
only a backward pass (or a fusion pass) reaches get forward samples of their own, so that the
harness checks them against NumPy here and on every device against the CPU (test_opdb_device.py
runs forwards only).

- conv{1,2,3}d_grad_weight: the weight gradient of convolution (the conv_grad_weight op);
- {avg,max}_pool{1,2,3}d_grad and adaptive_{avg,max}_pool2d_grad: avg_pool_grad and
  max_pool_grad;
- max_pool2d_gradgrad: the derivative of max pooling's gradient in its output gradient, which
  gathers through the saved mask (max_pool_gather);
- fused_conv: act(conv(x, w) + bias + residual) as the convolution fusion pass emits it.

References: a linear map's transpose is applied one basis vector at a time (_vjp_linear), and
max pooling's gradients scatter to, or gather from, each window's first maximum.
"""
import itertools
import math

import numpy as np

import oar
import oar.nn.functional as F
from oar import _C
from opdb import FLOATS, OpInfo, Sample, register
from opdb_core import _CONV_TOL, LOW_TOL, _distinct, _erf, _np_conv, _np_pool, _sigmoid, _tuple, _v
from opdb_nn_norm_pool import _np_adaptive


def _leaf(t):
    """A copy of t that gradients flow to."""
    t = t.detach()
    t.stop_gradient = False
    return t


def _vjp_linear(f, shape, gy):
    """The gradient in v of <f(v), gy> for a linear f: f's transpose applied to gy, one basis vector at a time."""
    flat = np.zeros(int(np.prod(shape)))
    for i in range(flat.size):
        e = np.zeros(flat.size)
        e[i] = 1.0
        flat[i] = np.sum(f(e.reshape(shape)) * gy)
    return flat.reshape(shape)


# ---------------------------------------------------------------- convolution: the weight gradient

def _conv_grad_weight_op(nd):
    conv = getattr(F, f"conv{nd}d")

    def op(x, w, gy, **kw):
        w = _leaf(w)
        return oar.grad([conv(x, w, **kw)], [w], grad_outputs=[gy])[0]
    return op


def _np_conv_grad_weight(x, w, gy, **kw):
    return _vjp_linear(lambda v: _np_conv(x, v, **kw), w.shape, gy)


def _conv_grad_weight_samples(nd):
    sp = {1: (7,), 2: (5, 6), 3: (4, 3, 5)}[nd]
    k = {1: (3,), 2: (3, 2), 3: (2, 2, 3)}[nd]

    def gen(dtype):
        v = _v(dtype, 170 + nd, -1.0, 1.0)

        def sample(xs, ws, kw=None, noncontig=False):
            gys = _np_conv(np.zeros(xs), np.zeros(ws), **(kw or {})).shape
            return Sample((v(*xs), v(*ws), v(*gys)), kw or {}, noncontig=noncontig)
        return [sample((2, 3, *sp), (4, 3, *k)),
                sample((1, 3, *sp), (4, 3, *k), {"stride": 2, "padding": 1}),
                sample((1, 4, *sp), (6, 2, *k), {"groups": 2, "dilation": 2, "padding": 2}),
                # an even kernel: "SAME" pads one side more than the other
                sample((1, 2, *sp), (3, 2, *([2] * nd)), {"padding": "SAME"}),
                sample((2, 2, *sp), (2, 2, *k), {"padding": [1] * nd}, noncontig=True),
                sample((0, 3, *sp), (2, 3, *k))]
    return gen


for _nd in (1, 2, 3):
    register(OpInfo(f"nn.functional.conv{_nd}d_grad_weight", _conv_grad_weight_op(_nd), _np_conv_grad_weight, FLOATS,
                    _conv_grad_weight_samples(_nd), tol=_CONV_TOL))


# ---------------------------------------------------------------- pooling: the gradients

def _fixed_windows(shape, kernel_size, stride=None, padding=0, ceil_mode=False):
    """Per spatial dim, each output's window [start, end) clipped to the input, sized as _np_pool sizes them."""
    n = len(shape) - 2
    k = _tuple(kernel_size, n)
    s = _tuple(k if stride is None else stride, n)
    p = _tuple(padding, n)
    wins = []
    for i in range(n):
        span = shape[2 + i] + 2 * p[i] - k[i]
        o = (-(-span // s[i]) if ceil_mode else span // s[i]) + 1
        if ceil_mode and (o - 1) * s[i] >= shape[2 + i] + p[i]:
            o -= 1
        wins.append([(max(a * s[i] - p[i], 0), min(a * s[i] - p[i] + k[i], shape[2 + i])) for a in range(o)])
    return wins


def _adaptive_windows(shape, output_size):
    sp = shape[2:]
    out = [output_size] * len(sp) if isinstance(output_size, int) else list(output_size)
    return [[(a * sp[i] // out[i], -(-(a + 1) * sp[i] // out[i])) for a in range(out[i])] for i in range(len(sp))]


def _np_max_args(x, wins):
    """The flat index, in its (N, C) plane, of each window's first maximum: (N, C, *outputs)."""
    out = np.zeros(x.shape[:2] + tuple(len(w) for w in wins), dtype=np.int64)
    if x.size == 0:
        return out
    for o in itertools.product(*[range(len(w)) for w in wins]):
        bounds = [wins[i][o[i]] for i in range(len(wins))]
        win = x[(slice(None), slice(None)) + tuple(slice(lo, hi) for lo, hi in bounds)]
        first = win.reshape(win.shape[:2] + (-1,)).argmax(axis=-1)
        coords = np.unravel_index(first, win.shape[2:])
        flat = np.zeros(x.shape[:2], dtype=np.int64)
        for i, (lo, _) in enumerate(bounds):
            flat = flat * x.shape[2 + i] + coords[i] + lo
        out[(slice(None), slice(None)) + o] = flat
    return out


def _scatter(args, gy, shape):
    """max_pool_grad: each output's gradient added at its window's maximum."""
    planes = shape[0] * shape[1]
    if planes == 0:
        return np.zeros(shape)
    gx = np.zeros((planes, int(np.prod(shape[2:]))))
    a, g = args.reshape(planes, -1), gy.reshape(planes, -1)
    for q in range(planes):
        np.add.at(gx[q], a[q], g[q])
    return gx.reshape(shape)


def _gather(args, v):
    """max_pool_gather: v at each window's maximum."""
    if args.size == 0:
        return np.zeros(args.shape)
    planes = v.shape[0] * v.shape[1]
    flat = v.reshape(planes, -1)
    return np.take_along_axis(flat, args.reshape(planes, -1), axis=1).reshape(args.shape)


def _pool_grad_op(pool):
    def op(x, gy, *args, **kw):
        x = _leaf(x)
        return oar.grad([pool(x, *args, **kw)], [x], grad_outputs=[gy])[0]
    return op


def _pool_grad_samples(nd, mode):
    sp = {1: (8,), 2: (5, 6), 3: (4, 4, 5)}[nd]

    def gen(dtype):
        x = lambda *s: _distinct(s, 190 + nd, 0.1)  # noqa: E731
        v = _v(dtype, 195 + nd, -1.0, 1.0)

        def sample(xs, k, kw=None, noncontig=False):
            gys = _np_pool(np.zeros(xs), k, mode=mode, **(kw or {})).shape
            return Sample((x(*xs), v(*gys), k), kw or {}, noncontig=noncontig)
        out = [sample((2, 3, *sp), 2), sample((1, 2, *sp), 3, {"stride": 1}),
               sample((1, 2, *sp), 3, {"stride": 2, "padding": 1}),
               sample((1, 2, *sp), [2] * nd, {"stride": [1] * nd}, noncontig=True),
               sample((1, 2, *sp), 2, {"ceil_mode": True}), sample((0, 2, *sp), 2)]
        if mode == "avg":
            out.append(sample((1, 2, *sp), 3, {"stride": 2, "padding": 1, "exclusive": False}))
        return out
    return gen


def _np_avg_pool_grad(x, gy, kernel_size, **kw):
    return _vjp_linear(lambda u: _np_pool(u, kernel_size, mode="avg", **kw), x.shape, gy)


def _np_max_pool_grad(x, gy, kernel_size, **kw):
    return _scatter(_np_max_args(x, _fixed_windows(x.shape, kernel_size, **kw)), gy, x.shape)


for _nd in (1, 2, 3):
    register(OpInfo(f"nn.functional.avg_pool{_nd}d_grad", _pool_grad_op(getattr(F, f"avg_pool{_nd}d")),
                    _np_avg_pool_grad, FLOATS, _pool_grad_samples(_nd, "avg"), tol=LOW_TOL))
    register(OpInfo(f"nn.functional.max_pool{_nd}d_grad", _pool_grad_op(getattr(F, f"max_pool{_nd}d")),
                    _np_max_pool_grad, FLOATS, _pool_grad_samples(_nd, "max"), tol=LOW_TOL))


def _adaptive_grad_samples(mode):
    def gen(dtype):
        x = lambda *s: _distinct(s, 201, 0.1)  # noqa: E731
        v = _v(dtype, 202, -1.0, 1.0)
        # output sizes that divide the input, that do not (overlapping windows), and that exceed it
        return [Sample((x(2, 2, 5, 6), v(2, 2, 3, 3), 3)), Sample((x(1, 2, 5, 6), v(1, 2, 2, 4), [2, 4])),
                Sample((x(1, 2, 5, 6), v(1, 2, 7, 8), [7, 8])),
                Sample((x(1, 2, 6, 4), v(1, 2, 3, 2), [3, 2]), noncontig=True)]
    return gen


def _np_adaptive_avg_grad(x, gy, output_size):
    return _vjp_linear(lambda u: _np_adaptive(u, output_size, mode="avg", nd=2), x.shape, gy)


def _np_adaptive_max_grad(x, gy, output_size):
    return _scatter(_np_max_args(x, _adaptive_windows(x.shape, output_size)), gy, x.shape)


register(OpInfo("nn.functional.adaptive_avg_pool2d_grad", _pool_grad_op(F.adaptive_avg_pool2d), _np_adaptive_avg_grad,
                FLOATS, _adaptive_grad_samples("avg"), tol=LOW_TOL))
register(OpInfo("nn.functional.adaptive_max_pool2d_grad", _pool_grad_op(F.adaptive_max_pool2d), _np_adaptive_max_grad,
                FLOATS, _adaptive_grad_samples("max"), tol=LOW_TOL))


def _max_pool2d_gradgrad(x, gy, v, kernel_size, **kw):
    """d<grad_x, v>/d gy of max pooling: v gathered at each window's maximum (max_pool_gather)."""
    x, gy = _leaf(x), _leaf(gy)
    gx = oar.grad([F.max_pool2d(x, kernel_size, **kw)], [x], grad_outputs=[gy], create_graph=True)[0]
    return oar.grad([gx], [gy], grad_outputs=[v])[0]


def _np_max_pool2d_gradgrad(x, gy, v, kernel_size, **kw):
    return _gather(_np_max_args(x, _fixed_windows(x.shape, kernel_size, **kw)), v)


def _gradgrad_samples(dtype):
    x = lambda *s: _distinct(s, 211, 0.1)  # noqa: E731
    u = _v(dtype, 212, -1.0, 1.0)

    def sample(xs, k, kw=None, noncontig=False):
        gys = _np_pool(np.zeros(xs), k, **(kw or {})).shape
        return Sample((x(*xs), u(*gys), u(*xs), k), kw or {}, noncontig=noncontig)
    return [sample((2, 3, 5, 6), 2), sample((1, 2, 5, 6), 3, {"stride": 2, "padding": 1}),
            sample((1, 2, 5, 6), 2, {"ceil_mode": True}, noncontig=True), sample((0, 2, 5, 6), 2)]


register(OpInfo("nn.functional.max_pool2d_gradgrad", _max_pool2d_gradgrad, _np_max_pool2d_gradgrad, FLOATS,
                _gradgrad_samples, tol=LOW_TOL))


# ---------------------------------------------------------------- the fused convolution

_ACTS = {"": lambda z: z, "relu": lambda z: np.maximum(z, 0.0), "gelu": lambda z: 0.5 * z * (1 + _erf(z / math.sqrt(2))),
         "gelu_tanh": lambda z: 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3))),
         "silu": lambda z: z * _sigmoid(z), "sigmoid": _sigmoid, "tanh": np.tanh}


def _fused_conv(x, w, b=None, r=None, stride=1, padding=0, dilation=1, groups=1, act="", lo=-math.inf, hi=math.inf):
    return _C.fused_conv(x, w, b, r, [stride] * 2, [padding] * 2, [dilation] * 2, groups, act, lo, hi)


def _np_fused_conv(x, w, b=None, r=None, stride=1, padding=0, dilation=1, groups=1, act="", lo=-math.inf,
                   hi=math.inf):
    z = _np_conv(x, w, stride=stride, padding=padding, dilation=dilation, groups=groups)
    if b is not None:
        z = z + b.reshape(1, -1, 1, 1)
    if r is not None:
        z = z + r
    return np.clip(z, lo, hi) if act == "clip" else _ACTS[act](z)


def _fused_conv_samples(dtype):
    v = _v(dtype, 221, -1.0, 1.0)
    x, w = v(2, 4, 6, 5), v(6, 4, 3, 3)
    out = (2, 6, 4, 3)
    samples = [Sample((x, w, v(6), v(*out)), {"act": act}) for act in _ACTS]
    return samples + [
        Sample((x, w, v(6, 1, 1), None), {"act": "clip", "lo": -0.25, "hi": 0.5}),
        Sample((x, w, None, v(*out)), {"act": "clip", "lo": 0.0}),
        Sample((v(1, 4, 7, 7), v(6, 2, 3, 3), v(1, 6, 1, 1), None),
               {"stride": 2, "padding": 1, "groups": 2, "act": "relu"}),
        Sample((v(1, 4, 7, 7), v(4, 4, 2, 2), None, v(1, 4, 5, 5)), {"dilation": 2, "act": "silu"}),
        Sample((x, w, v(6), v(*out)), {"act": "tanh"}, noncontig=True),
        # no input channels: act(bias + residual)
        Sample((v(1, 0, 5, 5), v(3, 0, 3, 3), v(3), v(1, 3, 3, 3)), {"act": "clip", "hi": 0.25}),
        Sample((v(0, 4, 6, 5), w, v(6), None), {"act": "relu"})]


register(OpInfo("fused_conv", _fused_conv, _np_fused_conv, ("float32", "bfloat16"), _fused_conv_samples,
                tol={"float32": (1e-5, 1e-4), "bfloat16": (1e-1, 5e-2)}))
