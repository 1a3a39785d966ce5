"""Op-database entries for oar.nn.functional activations, pooling and shuffles.

References are written here in NumPy from the published formulas; gradients are
checked in float64 against finite differences by test_opdb.py.
"""
import numpy as np

import oar
from opdb import ErrorInput, OpInfo, Sample, register

F = oar.nn.functional
REALF = ("float32", "float64")


def _rng(seed):
    return np.random.default_rng(seed)


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.nn.functional.{name}]")


def _away_from(lo, hi, shape, seed, avoid=(), gap=0.05):
    """Uniform samples in [lo, hi) nudged at least `gap` away from the kinks in `avoid`."""
    v = _rng(seed).uniform(lo, hi, size=shape)
    for a in avoid:
        near = np.abs(v - a) < gap
        v[near] = a + np.where(v[near] >= a, gap, -gap)
    return v


def _unary(shape_list, seed, avoid=(), lo=-2.0, hi=2.0):
    def gen(dtype):
        return [Sample((_away_from(lo, hi, s, seed + i, avoid),), noncontig=nc)
                for i, (s, nc) in enumerate(shape_list)]
    return gen


_SHAPES = [((5,), False), ((3, 4), False), ((0, 3), False), ((2, 3, 4), True)]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# ---------------------------------------------------------------- activations

def _celu_ref(x, alpha=1.0):
    return np.maximum(0, x) + np.minimum(0, alpha * (np.exp(x / alpha) - 1))


def _celu_samples(dtype):
    return _unary(_SHAPES, 10)(dtype) + [Sample((_away_from(-2, 2, (3, 4), 3),), {"alpha": 0.5}),
                                         Sample((_away_from(-2, 2, (4,), 4),), {"alpha": -1.5})]


register(OpInfo("nn.functional.celu", F.celu, _celu_ref, REALF, _celu_samples, grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: F.celu(oar.ones([2]), 0.0), ValueError, "celu"),
                                _err(lambda: F.celu([1.0]), TypeError, "celu")]))

register(OpInfo("nn.functional.hardshrink", F.hardshrink,
                lambda x, threshold=0.5: np.where(np.abs(x) >= threshold, x, 0.0), REALF,
                lambda d: _unary(_SHAPES, 20, avoid=(-0.5, 0.5))(d) +
                [Sample((np.array([-1.0, -0.5, 0.5, 0.25, 1.0]),), grad=False),
                 Sample((_away_from(-2, 2, (6,), 5, avoid=(-1.2, 1.2)),), {"threshold": 1.2})],
                grad=True))


def _softshrink_ref(x, threshold=0.5):
    return np.where(x > threshold, x - threshold, np.where(x < -threshold, x + threshold, 0.0))


register(OpInfo("nn.functional.softshrink", F.softshrink, _softshrink_ref, REALF,
                lambda d: _unary(_SHAPES, 30, avoid=(-0.5, 0.5))(d) +
                [Sample((_away_from(-2, 2, (6,), 6, avoid=(-1.0, 1.0)),), {"threshold": 1.0})], grad=True,
                errors=lambda: [_err(lambda: F.softshrink(oar.ones([2]), -1.0), ValueError, "softshrink")]))

register(OpInfo("nn.functional.thresholded_relu", F.thresholded_relu,
                lambda x, threshold=1.0, value=0.0: np.where(x > threshold, x, value), REALF,
                lambda d: _unary(_SHAPES, 40, avoid=(1.0,))(d) +
                [Sample((_away_from(-2, 2, (3, 4), 7, avoid=(0.2,)),), {"threshold": 0.2, "value": 9.0}),
                 Sample((np.array([1.0, 0.5, 2.0]),), grad=False)], grad=True))

register(OpInfo("nn.functional.logsigmoid", F.logsigmoid, lambda x: -np.logaddexp(0, -x), REALF,
                _unary(_SHAPES, 50, lo=-30, hi=30), grad=True))


def _halves(x, axis):
    h = x.shape[axis] // 2
    return np.split(x, [h], axis=axis)


def _glu_ref(x, axis=-1):
    a, b = _halves(x, axis)
    return a * _sigmoid(b)


register(OpInfo("nn.functional.glu", F.glu, _glu_ref, REALF,
                lambda d: [Sample((_away_from(-2, 2, (3, 4), 1),)), Sample((_away_from(-2, 2, (4, 3), 2),),
                                                                          {"axis": 0}),
                           Sample((_away_from(-2, 2, (2, 2, 6), 3),), {"axis": 2}, noncontig=True)],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: F.glu(oar.ones([2, 3])), ValueError, "glu"),
                                _err(lambda: F.glu(oar.ones([2, 4]), axis=2), ValueError, "glu"),
                                _err(lambda: F.glu(oar.ones([2, 4], dtype="int64")), TypeError, "glu")]))


def _swiglu_ref(x, y=None):
    if y is None:
        x, y = _halves(x, -1)
    return x * _sigmoid(x) * y


register(OpInfo("nn.functional.swiglu", F.swiglu, _swiglu_ref, REALF,
                lambda d: [Sample((_away_from(-2, 2, (3, 4), 1),)),
                           Sample((_away_from(-2, 2, (2, 3), 2), _away_from(-2, 2, (2, 3), 3)))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: F.swiglu(oar.ones([2, 3])), ValueError, "swiglu"),
                                _err(lambda: F.swiglu(oar.ones([2, 2]), oar.ones([2, 1])), ValueError, "swiglu")]))


def _prelu_ref(x, w, data_format="NCHW"):
    if w.size > 1:
        axis = x.ndim - 1 if data_format in ("NLC", "NHWC", "NDHWC") else 1
        shape = [1] * x.ndim
        shape[axis] = w.size
        w = w.reshape(shape)
    return np.where(x > 0, x, w * x)


register(OpInfo("nn.functional.prelu", F.prelu, _prelu_ref, REALF,
                lambda d: [Sample((_away_from(-2, 2, (2, 3, 4), 1, avoid=(0,)), np.array([0.25]))),
                           Sample((_away_from(-2, 2, (2, 3, 2), 2, avoid=(0,)), np.array([0.1, 0.2, 0.3]))),
                           Sample((_away_from(-2, 2, (2, 2, 3), 3, avoid=(0,)), np.array([0.1, 0.2, 0.3])),
                                  {"data_format": "NHWC"}),
                           Sample((_away_from(-2, 2, (4,), 4, avoid=(0,)), np.array(0.5)))],
                grad=True,
                errors=lambda: [_err(lambda: F.prelu(oar.ones([2, 4]), oar.ones([3])), ValueError, "prelu"),
                                _err(lambda: F.prelu(oar.ones([2, 3]), oar.ones([1, 3])), ValueError, "prelu"),
                                _err(lambda: F.prelu(oar.ones([3]), oar.ones([3])), ValueError, "prelu"),
                                _err(lambda: F.prelu(oar.ones([2, 3]), oar.ones([3]), "XX"), ValueError,
                                     "prelu")]))


def _maxout_ref(x, groups, axis=1):
    axis %= x.ndim
    shape = x.shape[:axis] + (x.shape[axis] // groups, groups) + x.shape[axis + 1:]
    return x.reshape(shape).max(axis=axis + 1)


register(OpInfo("nn.functional.maxout", F.maxout, _maxout_ref, REALF,
                lambda d: [Sample((_rng(1).permutation(24).reshape(1, 4, 2, 3) / 7.0, 2)),
                           Sample((_rng(2).permutation(24).reshape(1, 2, 2, 6) / 7.0, 3), {"axis": -1})],
                grad=True,
                errors=lambda: [_err(lambda: F.maxout(oar.ones([1, 3, 2, 2]), 2), ValueError, "maxout"),
                                _err(lambda: F.maxout(oar.ones([1, 4, 2, 2]), 0), ValueError, "maxout"),
                                _err(lambda: F.maxout(oar.ones([1, 4, 2, 2]), 2, axis=4), ValueError, "maxout")]))


# ---------------------------------------------------------------- shuffles

def _channel_shuffle_ref(x, groups, data_format="NCHW"):
    if data_format == "NHWC":
        n, h, w, c = x.shape
        return x.reshape(n, h, w, groups, c // groups).transpose(0, 1, 2, 4, 3).reshape(x.shape)
    n, c, h, w = x.shape
    return x.reshape(n, groups, c // groups, h, w).transpose(0, 2, 1, 3, 4).reshape(x.shape)


register(OpInfo("nn.functional.channel_shuffle", F.channel_shuffle, _channel_shuffle_ref, REALF + ("int64",),
                lambda d: [Sample((_rng(1).uniform(-3, 3, (2, 6, 2, 2)), 3)),
                           Sample((_rng(2).uniform(-3, 3, (1, 2, 3, 4)), 2), {"data_format": "NHWC"})],
                grad=True,
                errors=lambda: [_err(lambda: F.channel_shuffle(oar.ones([1, 3, 2, 2]), 2), ValueError,
                                     "channel_shuffle"),
                                _err(lambda: F.channel_shuffle(oar.ones([1, 4, 2]), 2), ValueError,
                                     "channel_shuffle"),
                                _err(lambda: F.channel_shuffle(oar.ones([1, 4, 2, 2]), 2, "NCL"), ValueError,
                                     "channel_shuffle")]))


def _temporal_shift_ref(x, seg_num, shift_ratio=0.25, data_format="NCHW"):
    nt = x.shape[0]
    if data_format == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    c = x.shape[1]
    v = x.reshape((nt // seg_num, seg_num) + x.shape[1:])
    out = np.zeros_like(v)
    c1, c2 = int(c * shift_ratio), int(c * 2 * shift_ratio)
    out[:, 1:, :c1] = v[:, :-1, :c1]
    out[:, :-1, c1:c2] = v[:, 1:, c1:c2]
    out[:, :, c2:] = v[:, :, c2:]
    out = out.reshape(x.shape)
    return out.transpose(0, 2, 3, 1) if data_format == "NHWC" else out


register(OpInfo("nn.functional.temporal_shift", F.temporal_shift, _temporal_shift_ref, REALF,
                lambda d: [Sample((_rng(1).uniform(-3, 3, (4, 4, 1, 2)), 2)),
                           Sample((_rng(2).uniform(-3, 3, (6, 8, 1, 1)), 3), {"shift_ratio": 0.3}),
                           Sample((_rng(3).uniform(-3, 3, (4, 1, 2, 4)), 2), {"data_format": "NHWC"})],
                grad=True,
                errors=lambda: [_err(lambda: F.temporal_shift(oar.ones([3, 4, 1, 2]), 2), ValueError,
                                     "temporal_shift"),
                                _err(lambda: F.temporal_shift(oar.ones([4, 4, 1, 2]), 2, 0.6), ValueError,
                                     "temporal_shift"),
                                _err(lambda: F.temporal_shift(oar.ones([4, 4, 2]), 2), ValueError,
                                     "temporal_shift")]))


# ---------------------------------------------------------------- pooling

def _lp_pool_ref(x, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False, nd=1):
    k = [kernel_size] * nd if isinstance(kernel_size, int) else list(kernel_size)
    s = k if stride is None else ([stride] * nd if isinstance(stride, int) else list(stride))
    p = [padding] * nd if isinstance(padding, int) else list(padding)
    if np.isinf(norm_type):
        raise NotImplementedError
    sizes = x.shape[2:]
    outs = []
    for i, kk, ss, pp in zip(sizes, k, s, p):
        span = i + 2 * pp - kk
        outs.append((span + (ss - 1 if ceil_mode else 0)) // ss + 1)
    y = np.zeros(x.shape[:2] + tuple(outs))
    for idx in np.ndindex(*outs):
        sl = tuple(slice(max(o * ss - pp, 0), min(o * ss - pp + kk, i)) for o, ss, pp, kk, i in
                   zip(idx, s, p, k, sizes))
        y[(Ellipsis,) + idx] = np.sum(x[(slice(None), slice(None)) + sl] ** norm_type, axis=tuple(range(2, 2 + nd)))
    return y ** (1.0 / norm_type)


def _pos(shape, seed):
    return _rng(seed).uniform(0.2, 2.0, shape)


register(OpInfo("nn.functional.lp_pool1d", F.lp_pool1d, _lp_pool_ref, REALF,
                lambda d: [Sample((_pos((2, 2, 5), 1), 2, 2)), Sample((_pos((1, 2, 6), 2), 3, 3), {"stride": 2}),
                           Sample((_pos((1, 1, 5), 3), 2, 2), {"padding": 1}),
                           Sample((_pos((1, 1, 5), 4), 1.5, 2), {"ceil_mode": True}),
                           Sample((_pos((1, 1, 4), 5), -1, 2))],
                grad=True,
                errors=lambda: [_err(lambda: F.lp_pool1d(oar.ones([1, 1, 4]), 0, 2), ValueError, "lp_pool1d"),
                                _err(lambda: F.lp_pool1d(oar.ones([1, 4]), 2, 2), ValueError, "lp_pool1d"),
                                _err(lambda: F.lp_pool1d(oar.ones([1, 1, 4]), 2, 0), ValueError, "lp_pool1d")]))

register(OpInfo("nn.functional.lp_pool2d", lambda x, *a, **k: F.lp_pool2d(x, *a, **k),
                lambda x, *a, **k: _lp_pool_ref(x, *a, nd=2, **k), REALF,
                lambda d: [Sample((_pos((1, 2, 4, 4), 1), 2, 2)),
                           Sample((_pos((1, 1, 4, 5), 2), 3, [2, 3]), {"stride": 1, "padding": [1, 0]}),
                           Sample((_pos((1, 1, 3, 3), 3), 2, 2), {"ceil_mode": True})],
                grad=True,
                errors=lambda: [_err(lambda: F.lp_pool2d(oar.ones([1, 1, 4, 4]), 2, 2, data_format="NCL"),
                                     ValueError, "lp_pool2d")]))


def _unpool_case(nd):
    """x, mask from a max pool of kernel 2 over a fixed input, and the unpool reference."""
    shape = (1, 2) + (4,) * nd
    src = _rng(7 + nd).permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nd]
    _, mask = pool(oar.to_tensor(src), 2, return_mask=True)
    mask_np = mask.numpy().astype(np.int64)
    out_sp = (4,) * nd

    def ref(x):
        y = np.zeros(x.shape[:2] + (int(np.prod(out_sp)),))
        xf = x.reshape(x.shape[:2] + (-1,))
        mf = mask_np.reshape(mask_np.shape[:2] + (-1,))
        for n in range(x.shape[0]):
            for c in range(x.shape[1]):
                y[n, c, mf[n, c]] = xf[n, c]
        return y.reshape(x.shape[:2] + out_sp)

    unpool = {1: F.max_unpool1d, 2: F.max_unpool2d, 3: F.max_unpool3d}[nd]
    return (lambda x: unpool(x, mask.to(x.place), 2)), ref, mask.shape, mask  # the mask joins x's device


for _nd in (1, 2, 3):
    _op, _ref, _mshape, _mask = _unpool_case(_nd)
    _name = f"max_unpool{_nd}d"
    _fn = getattr(F, _name)
    register(OpInfo(f"nn.functional.{_name}", _op, _ref, REALF,
                    (lambda s: lambda d: [Sample((_rng(3).uniform(-2, 2, s),))])(tuple(_mshape)), grad=True,
                    errors=(lambda fn, name, m: lambda: [
                        _err(lambda: fn(oar.ones(m.shape), m.astype("float32"), 2), TypeError, name),
                        _err(lambda: fn(oar.ones(m.shape), m + 100, 2), ValueError, name),
                        _err(lambda: fn(oar.ones(m.shape), m, 2, output_size=[9] * (m.ndim - 2)), ValueError,
                             name),
                    ])(_fn, _name, _mask)))


def _fractional_windows_ref(n_in, n_out, k, u):
    # Paddle's documented sequence: alpha = n_in / n_out (or (n_in - k) / (n_out - 1) with a kernel size).
    if k:
        alpha = (n_in - k) / (n_out - 1) if n_out > 1 else 0.0
    else:
        alpha = n_in / n_out
        base = n_in // n_out
        u *= min((base + 2) / alpha - 1, (n_in + 1 - base) / alpha - (n_out - 1))
    wins = []
    for i in range(n_out):
        st = int((i + u) * alpha) - int(u * alpha)
        en = st + k if k else int((i + 1 + u) * alpha) - int(u * alpha)
        wins.append((max(st, 0), min(en, n_in)))
    return wins


def _fractional_ref(x, output_size, kernel_size=None, random_u=0.5):
    nd = x.ndim - 2
    out = [output_size] * nd if isinstance(output_size, int) else list(output_size)
    k = [0] * nd if kernel_size is None else ([kernel_size] * nd if isinstance(kernel_size, int) else kernel_size)
    wins = [_fractional_windows_ref(i, o, kk, random_u) for i, o, kk in zip(x.shape[2:], out, k)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for idx in np.ndindex(*out):
        sl = tuple(slice(*wins[d][i]) for d, i in enumerate(idx))
        y[(Ellipsis,) + idx] = x[(slice(None), slice(None)) + sl].max(axis=tuple(range(2, 2 + nd)))
    return y


def _distinct(shape, seed):
    return _rng(seed).permutation(int(np.prod(shape))).reshape(shape) / 10.0


register(OpInfo("nn.functional.fractional_max_pool2d", F.fractional_max_pool2d, _fractional_ref, REALF,
                lambda d: [Sample((_distinct((1, 2, 7, 7), 1), 3), {"random_u": 0.3}),
                           Sample((_distinct((1, 1, 5, 7), 2), [2, 4]), {"random_u": 0.8}),
                           Sample((_distinct((1, 1, 6, 6), 3), 3), {"kernel_size": 2, "random_u": 0.5})],
                grad=True,
                errors=lambda: [_err(lambda: F.fractional_max_pool2d(oar.ones([1, 1, 4, 4]), 2, random_u=1.0),
                                     ValueError, "fractional_max_pool2d"),
                                _err(lambda: F.fractional_max_pool2d(oar.ones([1, 1, 4, 4]), 5, random_u=0.5),
                                     ValueError, "fractional_max_pool2d"),
                                _err(lambda: F.fractional_max_pool2d(oar.ones([1, 4, 4]), 2), ValueError,
                                     "fractional_max_pool2d")]))

register(OpInfo("nn.functional.fractional_max_pool3d", F.fractional_max_pool3d, _fractional_ref, REALF,
                lambda d: [Sample((_distinct((1, 1, 5, 4, 5), 1), [2, 3, 3]), {"random_u": 0.4}),
                           Sample((_distinct((1, 1, 4, 4, 4), 2), 2), {"kernel_size": 2, "random_u": 0.6})],
                grad=True))


# ---------------------------------------------------------------- beam search

def _gather_tree_ref(ids, parents):
    out = np.empty_like(ids)
    t_max, batch, beam = ids.shape
    for b in range(batch):
        for k in range(beam):
            out[-1, b, k] = ids[-1, b, k]
            p = parents[-1, b, k]
            for t in range(t_max - 2, -1, -1):
                out[t, b, k] = ids[t, b, p]
                p = parents[t, b, p]
    return out


register(OpInfo("nn.functional.gather_tree", F.gather_tree, _gather_tree_ref, ("int32", "int64"),
                lambda d: [Sample((_rng(1).integers(0, 50, (4, 2, 3)), _rng(2).integers(0, 3, (4, 2, 3)))),
                           Sample((_rng(3).integers(0, 50, (1, 3, 2)), _rng(4).integers(0, 2, (1, 3, 2))))],
                errors=lambda: [_err(lambda: F.gather_tree(oar.ones([2, 2], "int64"), oar.ones([2, 2], "int64")),
                                     ValueError, "gather_tree"),
                                _err(lambda: F.gather_tree(oar.ones([2, 2, 2]), oar.ones([2, 2, 2])), TypeError,
                                     "gather_tree"),
                                _err(lambda: F.gather_tree(oar.ones([2, 2, 2], "int64"),
                                                           oar.full([2, 2, 2], 5, "int64")), ValueError,
                                     "gather_tree")]))


# ---------------------------------------------------------------- attention (reference forms of Paddle's kernels)

def _np_attention(q, k, v, keep=None, scale=None):
    """q [B, Sq, H, D], k/v [B, Sk, Hk, D], keep broadcastable to [B, H, Sq, Sk]; masked-out rows give 0."""
    h, hk = q.shape[2], k.shape[2]
    k = np.repeat(k, h // hk, axis=2)
    v = np.repeat(v, h // hk, axis=2)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    keep = np.ones(s.shape, bool) if keep is None else np.broadcast_to(keep, s.shape)
    s = np.where(keep, s, -np.inf)
    mx = np.max(s, axis=-1, keepdims=True)
    e = np.where(keep, np.exp(s - np.where(np.isfinite(mx), mx, 0)), 0.0)
    den = e.sum(-1, keepdims=True)
    p = np.where(den > 0, e / np.where(den > 0, den, 1), 0.0)
    return np.einsum("bhqk,bkhd->bqhd", p, v)


def _causal(sq, sk):
    return np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)


def _qkv_ref(qkv, causal=False):
    g = qkv.shape[2] - 2
    b, s, _, hk, d = qkv.shape
    q = qkv[:, :, :g].reshape(b, s, g * hk, d)
    return _np_attention(q, qkv[:, :, g], qkv[:, :, g + 1], _causal(s, s) if causal else None)


register(OpInfo("nn.functional.flash_attn_qkvpacked", lambda qkv, **kw: F.flash_attn_qkvpacked(qkv, **kw)[0],
                _qkv_ref, ("float16", "bfloat16") + REALF,
                lambda d: [Sample((_rng(1).standard_normal((2, 3, 3, 1, 4)),)),
                           Sample((_rng(2).standard_normal((1, 4, 4, 2, 2)),), {"causal": True})],
                grad=True,
                errors=lambda: [_err(lambda: F.flash_attn_qkvpacked(oar.ones([2, 3, 3, 4])), ValueError,
                                     "flash_attn_qkvpacked"),
                                _err(lambda: F.flash_attn_qkvpacked(oar.ones([1, 2, 3, 1, 4]), dropout=2.0),
                                     ValueError, "flash_attn_qkvpacked")]))


_CU = np.array([0, 3, 4, 4])  # lengths 3, 1, 0


def _varlen_ref(qkv, causal=False, padded=True, m=4):
    g = qkv.shape[1] - 2
    _, _, hk, d = qkv.shape
    out = np.zeros((qkv.shape[0], g * hk, d))
    for b, (lo, hi) in enumerate(zip(_CU[:-1], _CU[1:])):
        n = hi - lo
        if n == 0:
            continue
        start = b * m if padded else lo
        seq = qkv[start:start + n][None]
        q = seq[:, :, :g].reshape(1, n, g * hk, d)
        out[start:start + n] = _np_attention(q, seq[:, :, g], seq[:, :, g + 1], _causal(n, n) if causal else None,
                                             scale=0.5)[0]
    return out


def _varlen_op(qkv, causal=False, padded=True, m=4):
    cu = oar.to_tensor(_CU.astype(np.int32))
    return F.flash_attn_varlen_qkvpacked(qkv, cu, cu, m, m, 0.5, causal=causal, varlen_padded=padded)[0]


register(OpInfo("nn.functional.flash_attn_varlen_qkvpacked", _varlen_op, _varlen_ref, REALF,
                lambda d: [Sample((_rng(1).standard_normal((12, 3, 1, 2)),)),
                           Sample((_rng(2).standard_normal((12, 4, 1, 2)),), {"causal": True}),
                           Sample((_rng(3).standard_normal((5, 3, 1, 2)),), {"padded": False})],
                grad=True,
                errors=lambda: [_err(lambda: F.flash_attn_varlen_qkvpacked(
                    oar.ones([7, 3, 1, 2]), oar.to_tensor(_CU.astype(np.int32)), oar.to_tensor(_CU.astype(np.int32)),
                    4, 4, 0.5), ValueError, "flash_attn_varlen_qkvpacked"),
                    _err(lambda: F.flash_attn_varlen_qkvpacked(
                        oar.ones([12, 3, 1, 2]), oar.to_tensor(np.array([0, 5, 4, 4], np.int32)),
                        oar.to_tensor(_CU.astype(np.int32)), 4, 4, 0.5), ValueError, "flash_attn_varlen_qkvpacked")]))


_SE_CAUSAL1 = np.array([2, 4, 4, 3, 4], dtype=np.int64).reshape(1, 1, 5, 1)
_SE_BIDIR4 = np.array([[3, 5, 0, 1], [4, 5, 0, 0], [2, 4, 0, 0], [5, 5, 0, 2], [5, 5, 1, 3]],
                      dtype=np.int64).reshape(1, 1, 5, 4)


def _flashmask_keep_ref(se, causal, sq, sk):
    r = np.arange(sq)[:, None]
    cols = se[:, :, :, :]  # [B, H, Sk, n]
    b = [cols[..., i][:, :, None, :] for i in range(cols.shape[-1])]
    if cols.shape[-1] == 1:
        masked = r >= b[0]
    elif cols.shape[-1] == 2 and causal:
        masked = (r >= b[0]) & (r < b[1])
    elif cols.shape[-1] == 2:
        masked = (r >= b[0]) | (r < b[1])
    else:
        masked = ((r >= b[0]) & (r < b[1])) | ((r >= b[2]) & (r < b[3]))
    keep = ~masked
    if causal:
        keep = keep & _causal(sq, sk)
    return keep


def _flashmask_case(se, causal):
    se_t = oar.to_tensor(se.astype(np.int32))

    def op(q, k, v):
        return F.flashmask_attention(q, k, v, se_t.to(q.place), causal=causal)  # on q's device

    def ref(q, k, v):
        return _np_attention(q, k, v, _flashmask_keep_ref(se, causal, q.shape[1], k.shape[1]))
    return op, ref


for _tag, _se, _causal_flag in (("causal", _SE_CAUSAL1, True), ("bidirectional", _SE_BIDIR4, False)):
    _op, _ref = _flashmask_case(_se, _causal_flag)
    register(OpInfo(f"nn.functional.flashmask_attention_{_tag}", _op, _ref, REALF,
                    lambda d: [Sample(tuple(_rng(i).standard_normal((1, 5, 2, 3)) for i in range(3))),
                               Sample((_rng(4).standard_normal((1, 5, 4, 3)), _rng(5).standard_normal((1, 5, 2, 3)),
                                       _rng(6).standard_normal((1, 5, 2, 3))))],
                    grad=True))

register(OpInfo("nn.functional.flashmask_attention_window",
                lambda q, k, v: F.flashmask_attention(q, k, v, window_size=(1, 2)),
                lambda q, k, v: _np_attention(q, k, v, (np.arange(5)[None, :] >= np.arange(5)[:, None] - 1) &
                                              (np.arange(5)[None, :] <= np.arange(5)[:, None] + 2)), REALF,
                lambda d: [Sample(tuple(_rng(i).standard_normal((1, 5, 1, 2)) for i in range(3)))], grad=True,
                errors=lambda: [_err(lambda: F.flashmask_attention(
                    oar.ones([1, 4, 1, 2]), oar.ones([1, 4, 1, 2]), oar.ones([1, 4, 1, 2]),
                    oar.ones([1, 1, 4, 4], "int32"), causal=True), ValueError, "flashmask_attention"),
                    _err(lambda: F.flashmask_attention(oar.ones([1, 4, 3, 2]), oar.ones([1, 4, 2, 2]),
                                                       oar.ones([1, 4, 2, 2])), ValueError, "flashmask_attention")]))


_CSR_OFF = np.array([[[0, 2, 3, 5, 5]], [[0, 1, 2, 3, 4]]])  # batch 2, 1 head, 4 rows (row 3 of batch 0 empty)
_CSR_COL = np.array([[[0, 3, 1, 0, 2]], [[0, 1, 2, 3, 0]]])


def _sparse_ref(q, k, v):
    b, h, m, _ = q.shape
    keep = np.zeros((b, h, m, m), bool)
    for i in range(b):
        for j in range(h):
            for r in range(m):
                keep[i, j, r, _CSR_COL[i, j, _CSR_OFF[i, j, r]:_CSR_OFF[i, j, r + 1]]] = True
    t = [x.transpose(0, 2, 1, 3) for x in (q, k, v)]
    return _np_attention(*t, keep=keep).transpose(0, 2, 1, 3)


register(OpInfo("nn.functional.sparse_attention",
                lambda q, k, v: F.sparse_attention(q, k, v, oar.to_tensor(_CSR_OFF.astype(np.int32)),
                                                   oar.to_tensor(_CSR_COL.astype(np.int32))),
                _sparse_ref, REALF,
                lambda d: [Sample(tuple(_rng(i).standard_normal((2, 1, 4, 3)) for i in range(3)))], grad=True,
                errors=lambda: [_err(lambda: F.sparse_attention(
                    oar.ones([1, 1, 4, 2]), oar.ones([1, 1, 4, 2]), oar.ones([1, 1, 4, 2]),
                    oar.to_tensor(np.array([[[0, 1, 2, 3, 4]]], np.int32)),
                    oar.to_tensor(np.array([[[0, 1, 2, 9]]], np.int32))), ValueError, "sparse_attention"),
                    _err(lambda: F.sparse_attention(
                        oar.ones([1, 1, 4, 2]), oar.ones([1, 1, 4, 2]), oar.ones([1, 1, 4, 2]),
                        oar.ones([1, 1, 5]), oar.ones([1, 1, 4])), TypeError, "sparse_attention")]))
