"""Op-database entries for the core ops: activations, softmax, convolution, pooling,
normalisation, cross entropy, indexing, sorting and searching, cumulative and
order statistics, layout, and the dense linear algebra of oar.linalg.

References are written here in NumPy from the definitions (convolution as a sum
of shifted products, pooling by explicit windows, the trigamma function by its
series); gradients are checked in float64 against finite differences by
test_opdb.py. LU and the eigenvectors of eig are in opdb_linalg.py.

Index arguments are passed as Python lists, not NumPy arrays, so that the harness
keeps them integral while it casts the data to the dtype under test. Ops with two
outputs get one entry per output. Eigen- and singular vectors are defined only up
to sign, so their entries compare sign-normalised vectors or sign-free products;
eigenvalues of a general matrix come in LAPACK's order, so they are sorted.
"""
import itertools
import math

import numpy as np

import oar
from opdb import FLOATS, INTS, REAL, ErrorInput, OpInfo, Sample, _values, register

F = oar.nn.functional
LA = oar.linalg
F32_64 = ("float32", "float64")
LOW_TOL = {"float16": (3e-2, 3e-2), "bfloat16": (1e-1, 5e-2)}


def _rng(seed):
    return np.random.default_rng(seed)


def _v(dtype, seed, lo=-2.0, hi=2.0):
    rng = _rng(seed)
    return lambda *shape: _values(shape, dtype, lo, hi, rng)  # noqa: E731


def _err(fn, exc, api):
    return ErrorInput(fn, exc, f"[oar.{api}]")


def _away(shape, seed, lo=-2.0, hi=2.0, kinks=(0.0,), gap=0.05):
    """Uniform samples nudged at least `gap` away from the points where the op has a kink."""
    v = _rng(seed).uniform(lo, hi, size=shape)
    for a in kinks:
        near = np.abs(v - a) < gap
        v[near] = a + np.where(v[near] >= a, gap, -gap)
    return v


def _distinct(shape, seed, scale=1.0):
    """Values with no ties (a shuffled grid), so that orders, maxima and their indices are unique."""
    n = int(np.prod(shape))
    return (_rng(seed).permutation(n) - n / 2.0).reshape(shape) * scale


def _ints(values):
    return oar.to_tensor(np.asarray(values, dtype=np.int64))


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if np.size(x) else np.zeros(np.shape(x))


# ---------------------------------------------------------------- activations

_ACT_SHAPES = [((5,), False), ((3, 4), False), ((0, 3), False), ((2, 3, 4), True), ((), False)]


def _act_samples(seed, lo=-3.0, hi=3.0, kinks=(0.0,), kwargs=None):
    def gen(dtype):
        return [Sample((_away(s, seed + i, lo, hi, kinks),), dict(kwargs or {}), noncontig=nc)
                for i, (s, nc) in enumerate(_ACT_SHAPES)]
    return gen


def _gelu_ref(x, approximate=False):
    if approximate:
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


register(OpInfo("nn.functional.relu", F.relu, lambda x: np.maximum(x, 0), FLOATS, _act_samples(10),
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: F.relu([1.0]), TypeError, "nn.functional.relu")]))
register(OpInfo("nn.functional.gelu", F.gelu, _gelu_ref, FLOATS,
                lambda d: _act_samples(20)(d) + _act_samples(30, kwargs={"approximate": True})(d),
                grad=True, gradgrad=True, tol=LOW_TOL,
                errors=lambda: [_err(lambda: F.gelu([1.0]), TypeError, "nn.functional.gelu")]))
register(OpInfo("nn.functional.silu", F.silu, lambda x: x * _sigmoid(x), FLOATS, _act_samples(40),
                grad=True, gradgrad=True, tol=LOW_TOL,
                errors=lambda: [_err(lambda: F.silu([1.0]), TypeError, "nn.functional.silu")]))
register(OpInfo("nn.functional.log_sigmoid", F.log_sigmoid, lambda x: -np.logaddexp(0, -x), FLOATS,
                _act_samples(50, lo=-30.0, hi=30.0), grad=True, gradgrad=True, tol=LOW_TOL,
                errors=lambda: [_err(lambda: F.log_sigmoid([1.0]), TypeError, "nn.functional.log_sigmoid")]))


def _np_log_softmax(x, axis=-1, dtype=None):
    if x.ndim == 0:
        return np.zeros_like(x)
    m = np.max(x, axis=axis, keepdims=True) if x.size else 0
    z = x - m
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def _softmax_samples(dtype):
    v = _v(dtype, 60, -4.0, 4.0)
    out = [Sample((v(3, 4),)), Sample((v(2, 3, 4),), {"axis": 1}), Sample((v(5),), {"axis": 0}),
           Sample((v(2, 3, 4),), {"axis": -3}, noncontig=True), Sample((v(0, 3),)), Sample((v(),)),
           Sample((v(2, 1500),))]  # rows longer than a CUDA warp's share (the block path)
    if dtype in ("float32", "float16", "bfloat16"):
        out.append(Sample((v(2, 3),), {"dtype": "float64"}, check_dtype=False))
    # Large logits: a stable implementation subtracts the max first.
    out.append(Sample((np.array([[1000.0, 1001.0, 999.0]]) if dtype != "float16" else np.array([[60.0, 61.0, 59.0]]),),
                      grad=False))
    return out


register(OpInfo("nn.functional.log_softmax", F.log_softmax, _np_log_softmax, FLOATS, _softmax_samples,
                grad=True, gradgrad=True, tol=LOW_TOL,
                errors=lambda: [_err(lambda: F.log_softmax(oar.ones([2, 3]), axis=2), IndexError,
                                     "nn.functional.log_softmax")]))
register(OpInfo("nn.functional.softmax", F.softmax, lambda x, axis=-1, dtype=None: np.exp(_np_log_softmax(x, axis)),
                FLOATS, _softmax_samples, grad=True, gradgrad=True, tol=LOW_TOL,
                errors=lambda: [_err(lambda: F.softmax(oar.ones([2, 3]), axis=2), IndexError,
                                     "nn.functional.softmax")]))


# ---------------------------------------------------------------- convolution

def _tuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def _conv_pads(padding, x_sp, k_sp, stride, dilation):
    n = len(x_sp)
    if padding == "VALID":
        return [(0, 0)] * n
    if padding == "SAME":
        pads = []
        for i, k, s, d in zip(x_sp, k_sp, stride, dilation):
            o = -(-i // s)
            total = max((o - 1) * s + (k - 1) * d + 1 - i, 0)
            pads.append((total // 2, total - total // 2))
        return pads
    p = _tuple(padding, n)
    if len(p) == 2 * n:
        return [(p[2 * i], p[2 * i + 1]) for i in range(n)]
    return [(q, q) for q in p]


def _channels_first(x, channel_last):
    return np.moveaxis(x, -1, 1) if channel_last else x


def _np_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCHW"):
    """Direct convolution: for each kernel offset, a strided window of the padded input times w[:, :, offset]."""
    last = data_format in ("NLC", "NHWC", "NDHWC")
    x = _channels_first(x, last)
    n = x.ndim - 2
    s, d = _tuple(stride, n), _tuple(dilation, n)
    pads = _conv_pads(padding, x.shape[2:], w.shape[2:], s, d)
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    osz = [(xp.shape[2 + i] - d[i] * (w.shape[2 + i] - 1) - 1) // s[i] + 1 for i in range(n)]
    cin_g, cout_g = w.shape[1], w.shape[0] // groups
    out = np.zeros((x.shape[0], w.shape[0]) + tuple(osz))
    for k in itertools.product(*[range(m) for m in w.shape[2:]]):
        win = xp[(slice(None), slice(None)) + tuple(slice(k[i] * d[i], k[i] * d[i] + s[i] * (osz[i] - 1) + 1, s[i])
                                                    for i in range(n))]
        for g in range(groups):
            wk = w[(slice(g * cout_g, (g + 1) * cout_g), slice(None)) + k]
            out[:, g * cout_g:(g + 1) * cout_g] += np.einsum("nc...,oc->no...", win[:, g * cin_g:(g + 1) * cin_g], wk)
    if b is not None:
        out += b.reshape((1, -1) + (1,) * n)
    return np.moveaxis(out, 1, -1) if last else out


def _np_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, dilation=1, groups=1,
                       output_size=None, data_format="NCHW"):
    """Transposed convolution: every input element scatters x * w[c, :, offset] to i * stride + offset * dilation."""
    last = data_format in ("NLC", "NHWC", "NDHWC")
    x = _channels_first(x, last)
    n = x.ndim - 2
    s, d, op = _tuple(stride, n), _tuple(dilation, n), _tuple(output_padding, n)
    p = [lo for lo, _ in _conv_pads(padding, x.shape[2:], w.shape[2:], s, d)]
    cin_g, cout_g = x.shape[1] // groups, w.shape[1]
    full = [(x.shape[2 + i] - 1) * s[i] + d[i] * (w.shape[2 + i] - 1) + 1 + op[i] for i in range(n)]
    out = np.zeros((x.shape[0], cout_g * groups) + tuple(full))
    for k in itertools.product(*[range(m) for m in w.shape[2:]]):
        dst = (slice(None),) + tuple(slice(k[i] * d[i], k[i] * d[i] + s[i] * (x.shape[2 + i] - 1) + 1, s[i])
                                     for i in range(n))
        for g in range(groups):
            wk = w[(slice(g * cin_g, (g + 1) * cin_g), slice(None)) + k]
            contrib = np.einsum("nc...,co->no...", x[:, g * cin_g:(g + 1) * cin_g], wk)
            out[(slice(None), slice(g * cout_g, (g + 1) * cout_g)) + dst[1:]] += contrib
    lout = [(x.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (w.shape[2 + i] - 1) + op[i] + 1 for i in range(n)]
    out = out[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + lout[i]) for i in range(n))]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * n)
    return np.moveaxis(out, 1, -1) if last else out


def _conv_samples(nd):
    sp = {1: (7,), 2: (5, 6), 3: (4, 3, 5)}[nd]
    k = {1: (3,), 2: (3, 2), 3: (2, 2, 3)}[nd]
    last = {1: "NLC", 2: "NHWC", 3: "NDHWC"}[nd]

    def gen(dtype):
        v = _v(dtype, 70 + nd, -1.0, 1.0)
        out = [Sample((v(2, 3, *sp), v(4, 3, *k))),
               Sample((v(1, 3, *sp), v(4, 3, *k), v(4)), {"stride": 2, "padding": 1}),
               Sample((v(1, 4, *sp), v(6, 2, *k)), {"groups": 2, "dilation": 2, "padding": 2}),
               Sample((v(1, 2, *sp), v(3, 2, *k), v(3)), {"padding": "SAME"}),
               Sample((v(1, 2, *sp), v(3, 2, *k)), {"padding": "VALID", "stride": [2] * nd}),
               Sample((v(1, 2, *sp), v(2, 2, *k)), {"padding": [1] * nd}, noncontig=True),
               Sample((v(2, *sp, 3), v(2, 3, *k), v(2)), {"data_format": last}),
               Sample((v(0, 3, *sp), v(2, 3, *k)))]
        return out + _small_conv_samples(nd, v, last)
    return gen


def _small_conv_samples(nd, v, last, transpose=False):
    """Inputs small enough for the finite-difference gradient check (at most 60 elements in all)."""
    sp = {1: (5,), 2: (3, 3), 3: (2, 2, 3)}[nd]
    k = {1: (2,), 2: (2, 2), 3: (2, 2, 2)}[nd]
    out = [Sample((v(1, 2, *sp), v(2, 2, *k), v(2)), {"stride": 2, "padding": 1}),
           Sample((v(1, 2, *sp), v(2, 1, *k)), {"groups": 2, "dilation": 2, "padding": 1}),
           Sample((v(1, *sp, 2), v(2, 2, *k), v(2)), {"data_format": last})]
    if transpose:
        out.append(Sample((v(1, 2, *sp), v(2, 1, *k)), {"stride": 2, "output_padding": 1}))
    else:
        out.append(Sample((v(1, 2, *sp), v(2, 2, *k)), {"padding": "SAME"}))
    return out


def _conv_errors(nd):
    name = f"nn.functional.conv{nd}d"
    fn = getattr(F, f"conv{nd}d")
    sp = (5,) * nd
    return lambda: [_err(lambda: fn(oar.ones([1, 3, *sp]), oar.ones([4, 2] + [3] * nd)), ValueError, name),
                    _err(lambda: fn(oar.ones([3, *sp]), oar.ones([4, 3] + [3] * nd)), ValueError, name),
                    _err(lambda: fn(oar.ones([1, 3] + [2] * nd), oar.ones([4, 3] + [3] * nd)), ValueError, name)]


_CONV_TOL = {"float16": (5e-2, 2e-2), "bfloat16": (2e-1, 5e-2), "float32": (1e-5, 1e-4)}
for _nd in (1, 2, 3):
    register(OpInfo(f"nn.functional.conv{_nd}d", getattr(F, f"conv{_nd}d"), _np_conv, FLOATS, _conv_samples(_nd),
                    grad=True, gradgrad=True, tol=_CONV_TOL, errors=_conv_errors(_nd)))


def _conv_t_samples(nd):
    sp = {1: (4,), 2: (3, 4), 3: (2, 3, 2)}[nd]
    k = {1: (3,), 2: (3, 2), 3: (2, 2, 3)}[nd]
    last = {1: "NLC", 2: "NHWC", 3: "NDHWC"}[nd]

    def gen(dtype):
        v = _v(dtype, 80 + nd, -1.0, 1.0)
        return [Sample((v(2, 3, *sp), v(3, 2, *k))),
                Sample((v(1, 3, *sp), v(3, 4, *k), v(4)), {"stride": 2, "padding": 1}),
                Sample((v(1, 4, *sp), v(4, 2, *k)), {"groups": 2, "dilation": 2}),
                Sample((v(1, 2, *sp), v(2, 2, *k)), {"stride": 2, "output_padding": 1}),
                Sample((v(1, 2, *sp), v(2, 3, *k)), {"padding": [1] * nd}, noncontig=True),
                Sample((v(1, *sp, 3), v(3, 2, *k), v(2)), {"data_format": last})] + \
            _small_conv_samples(nd, v, last, transpose=True)
    return gen


for _nd in (1, 2, 3):
    _n = f"conv{_nd}d_transpose"
    register(OpInfo(f"nn.functional.{_n}", getattr(F, _n), _np_conv_transpose, FLOATS, _conv_t_samples(_nd),
                    grad=True, gradgrad=True, tol=_CONV_TOL,
                    errors=(lambda n, nd: lambda: [
                        _err(lambda: getattr(F, n)(oar.ones([1, 3] + [4] * nd), oar.ones([4, 2] + [3] * nd)),
                             ValueError, f"nn.functional.{n}")])(_n, _nd)))


# ---------------------------------------------------------------- pooling

def _np_pool(x, kernel_size, stride=None, padding=0, mode="max", exclusive=True, divisor_override=None,
             ceil_mode=False, data_format="NCHW"):
    last = data_format in ("NLC", "NHWC", "NDHWC")
    x = _channels_first(x, last)
    n = x.ndim - 2
    k = _tuple(kernel_size, n)
    s = _tuple(k if stride is None else stride, n)
    p = _tuple(padding, n)
    osz = []
    for i in range(n):
        span = x.shape[2 + i] + 2 * p[i] - k[i]
        o = (-(-span // s[i]) if ceil_mode else span // s[i]) + 1
        if ceil_mode and (o - 1) * s[i] >= x.shape[2 + i] + p[i]:
            o -= 1
        osz.append(o)
    out = np.zeros(x.shape[:2] + tuple(osz))
    for o in itertools.product(*[range(m) for m in osz]):
        lo = [o[i] * s[i] - p[i] for i in range(n)]
        hi = [lo[i] + k[i] for i in range(n)]
        win = x[(slice(None), slice(None)) + tuple(slice(max(lo[i], 0), min(hi[i], x.shape[2 + i])) for i in range(n))]
        if mode == "max":
            val = win.max(axis=tuple(range(2, 2 + n)))
        else:
            total = win.sum(axis=tuple(range(2, 2 + n)))
            if divisor_override:
                div = divisor_override
            elif exclusive:
                div = int(np.prod(win.shape[2:]))
            else:  # the padded window, clipped to the padded input
                div = int(np.prod([min(hi[i], x.shape[2 + i] + p[i]) - lo[i] for i in range(n)]))
            val = total / div
        out[(slice(None), slice(None)) + o] = val
    return np.moveaxis(out, 1, -1) if last else out


def _pool_samples(nd, mode):
    sp = {1: (8,), 2: (5, 6), 3: (4, 4, 5)}[nd]
    last = {1: None, 2: "NHWC", 3: "NDHWC"}[nd]

    def gen(dtype):
        x = lambda *s: _distinct(s, 90 + nd, 0.1)  # noqa: E731
        out = [Sample((x(2, 3, *sp), 2)), Sample((x(1, 2, *sp), 3), {"stride": 1}),
               Sample((x(1, 2, *sp), 3), {"stride": 2, "padding": 1}),
               Sample((x(1, 2, *sp), [2] * nd), {"stride": [1] * nd}, noncontig=True),
               Sample((x(1, 2, *sp), 2), {"ceil_mode": True}),
               Sample((x(0, 2, *sp), 2))]
        if last:
            out.append(Sample((x(1, *sp, 3), 2), {"data_format": last}))
        if nd == 3:  # small enough for the gradient check
            out += [Sample((x(1, 1, 3, 3, 4), 2), {"stride": 1}), Sample((x(1, 1, 3, 3, 4), 2), {"padding": 1})]
        if mode == "avg":
            out.append(Sample((x(1, 2, *sp), 3), {"stride": 2, "padding": 1, "exclusive": False}))
            if nd > 1:
                out.append(Sample((x(1, 2, *sp), 2), {"divisor_override": 3}))
        return out
    return gen


def _pool_ref(mode):
    return lambda x, kernel_size, **kw: _np_pool(x, kernel_size, mode=mode, **kw)


for _nd in (1, 2, 3):
    for _mode in ("max", "avg"):
        _n = f"{_mode}_pool{_nd}d"
        register(OpInfo(f"nn.functional.{_n}", getattr(F, _n), _pool_ref(_mode), FLOATS, _pool_samples(_nd, _mode),
                        grad=True, gradgrad=True, tol=LOW_TOL,
                        errors=(lambda n, nd: lambda: [
                            _err(lambda: getattr(F, n)(oar.ones([1, 4]), 2), ValueError, f"nn.functional.{n}"),
                            _err(lambda: getattr(F, n)(oar.ones([1, 1] + [4] * nd), 0), ValueError,
                                 f"nn.functional.{n}")])(_n, _nd)))


def _max_pool2d_mask(x, kernel_size, **kw):
    return F.max_pool2d(x, kernel_size, return_mask=True, **kw)[1]


def _np_max_pool2d_mask(x, kernel_size, stride=None, padding=0):
    """The flat index (h * W + w) of each window's maximum in its channel's input plane."""
    k, s, p = _tuple(kernel_size, 2), _tuple(kernel_size if stride is None else stride, 2), _tuple(padding, 2)
    h, w = x.shape[2:]
    oh, ow = (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
    out = np.zeros(x.shape[:2] + (oh, ow), dtype=np.int64)
    for n, c, i, j in itertools.product(range(x.shape[0]), range(x.shape[1]), range(oh), range(ow)):
        r0, c0 = max(i * s[0] - p[0], 0), max(j * s[1] - p[1], 0)
        win = x[n, c, r0:min(i * s[0] - p[0] + k[0], h), c0:min(j * s[1] - p[1] + k[1], w)]
        a, b = np.unravel_index(np.argmax(win), win.shape)
        out[n, c, i, j] = (r0 + a) * w + c0 + b
    return out


register(OpInfo("nn.functional.max_pool2d_mask", _max_pool2d_mask, _np_max_pool2d_mask, F32_64,
                lambda d: [Sample((_distinct((2, 3, 5, 6), 95),), {"kernel_size": 2}),
                           Sample((_distinct((1, 2, 5, 6), 96),), {"kernel_size": 3, "stride": 2, "padding": 1})],
                out_dtype=lambda d: "int32"))


# ---------------------------------------------------------------- normalisation

def _batch_norm(x, rm, rv, w, b, **kw):
    """rm, rv: the running statistics as lists (made on x's device); they are buffers, not differentiable inputs."""
    stat = lambda s: oar.to_tensor(np.asarray(s)).astype(x.dtype).to(x.place)  # noqa: E731
    return F.batch_norm(x, stat(rm), stat(rv), w, b, **kw)


def _np_batch_norm(x, rm, rv, w, b, training=False, momentum=0.9, epsilon=1e-5, data_format="NCHW",
                   use_global_stats=None):
    last = data_format in ("NLC", "NHWC", "NDHWC")
    xc = _channels_first(x, last)
    axes = tuple(i for i in range(xc.ndim) if i != 1)
    shape = (1, -1) + (1,) * (xc.ndim - 2)
    use_batch = training if use_global_stats is None else not use_global_stats
    if use_batch:
        mean, var = xc.mean(axis=axes), xc.var(axis=axes)
    else:
        mean, var = np.asarray(rm), np.asarray(rv)
    y = (xc - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon) * w.reshape(shape) + b.reshape(shape)
    return np.moveaxis(y, 1, -1) if last else y


def _bn_samples(dtype):
    v = _v(dtype, 100)
    pos = _v(dtype, 101, 0.5, 2.0)
    stats = lambda c: (list(_rng(c).uniform(-1, 1, c)), list(_rng(c + 1).uniform(0.5, 2, c)))  # noqa: E731
    return [Sample((v(4, 3, 2, 2), *stats(3), pos(3), v(3)), {"training": True}),
            Sample((v(4, 3, 2, 2), *stats(3), pos(3), v(3)), {"training": False}),
            Sample((v(5, 3), *stats(3), pos(3), v(3)), {"training": True, "epsilon": 1e-3}),
            Sample((v(3, 2, 4), *stats(2), pos(2), v(2)), {"training": True}, noncontig=True),
            Sample((v(2, 2, 2, 3), *stats(3), pos(3), v(3)), {"training": True, "data_format": "NHWC"}),
            Sample((v(2, 2, 2, 3), *stats(3), pos(3), v(3)), {"data_format": "NHWC"}),
            Sample((v(2, 3, 4), *stats(3), pos(3), v(3)), {"training": True, "use_global_stats": True})]


register(OpInfo("nn.functional.batch_norm", _batch_norm, _np_batch_norm, FLOATS, _bn_samples,
                grad=True, gradgrad=True, tol={"float16": (5e-2, 3e-2), "bfloat16": (2e-1, 5e-2)},
                errors=lambda: [_err(lambda: F.batch_norm(oar.ones([2, 3, 4]), oar.ones([4]), oar.ones([4]),
                                                          oar.ones([3]), oar.ones([3])), ValueError,
                                     "nn.functional.batch_norm")]))


def _batch_norm_running(x, rm, rv, w, b, momentum=0.9):
    """The running mean and variance after one training step, stacked."""
    rm, rv = oar.assign(rm), oar.assign(rv)
    F.batch_norm(x, rm, rv, w, b, training=True, momentum=momentum)
    return oar.stack([rm, rv])


def _np_batch_norm_running(x, rm, rv, w, b, momentum=0.9):
    axes = tuple(i for i in range(x.ndim) if i != 1)
    var = x.var(axis=axes)  # Paddle's running variance takes the biased batch variance
    return np.stack([momentum * rm + (1 - momentum) * x.mean(axis=axes), momentum * rv + (1 - momentum) * var])


register(OpInfo("nn.functional.batch_norm_running_stats", _batch_norm_running, _np_batch_norm_running, F32_64,
                lambda d: [Sample((_v(d, 102)(4, 3, 2), _v(d, 103)(3), _v(d, 104, 0.5, 2)(3), np.ones(3),
                                   np.zeros(3)), grad=False),
                           Sample((_v(d, 105)(6, 2), _v(d, 106)(2), _v(d, 107, 0.5, 2)(2), np.ones(2),
                                   np.zeros(2)), {"momentum": 0.5}, grad=False)]))


def _np_layer_norm(x, normalized_shape, weight=None, bias=None, epsilon=1e-5):
    ns = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + epsilon)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def _ln_samples(dtype):
    v = _v(dtype, 110)
    return [Sample((v(3, 4), [4], v(4), v(4))), Sample((v(2, 3, 4), [3, 4], v(3, 4), v(3, 4))),
            Sample((v(2, 3, 4), 4)), Sample((v(2, 5), [5], v(5), None), {"epsilon": 1e-3}),
            Sample((v(3, 4, 2), [2], v(2), v(2)), noncontig=True), Sample((v(0, 4), [4], v(4), v(4))),
            Sample((v(2, 1500), [1500], v(1500), v(1500)))]


register(OpInfo("nn.functional.layer_norm", F.layer_norm, _np_layer_norm, FLOATS, _ln_samples, grad=True,
                gradgrad=True, tol={"float16": (5e-2, 3e-2), "bfloat16": (2e-1, 5e-2)},
                errors=lambda: [_err(lambda: F.layer_norm(oar.ones([2, 3]), [4]), ValueError,
                                     "nn.functional.layer_norm")]))


# ---------------------------------------------------------------- linear, concat, cross entropy

def _np_linear(x, w, b=None):
    y = x @ w
    return y if b is None else y + b


register(OpInfo("nn.functional.linear", F.linear, _np_linear, FLOATS,
                lambda d: [Sample((_v(d, 120)(3, 4), _v(d, 121)(4, 5), _v(d, 122)(5))),
                           Sample((_v(d, 120)(2, 3, 4), _v(d, 121)(4, 2))),
                           Sample((_v(d, 120)(4,), _v(d, 121)(4, 3), _v(d, 122)(3))),  # a 1-D x
                           Sample((_v(d, 120)(3, 4), _v(d, 121)(4, 5), _v(d, 122)(5)), noncontig=True),
                           Sample((_v(d, 120)(0, 4), _v(d, 121)(4, 5), _v(d, 122)(5)))],
                grad=True, gradgrad=True, tol={"float16": (5e-2, 2e-2), "bfloat16": (2e-1, 5e-2)},
                errors=lambda: [_err(lambda: F.linear(oar.ones([2, 3]), oar.ones([4, 5])), ValueError,
                                     "nn.functional.linear")]))


def _concat(*xs, axis=0):
    return oar.concat(list(xs), axis=axis)


register(OpInfo("concat", _concat, lambda *xs, axis=0: np.concatenate(xs, axis=axis), ("bool",) + REAL,
                lambda d: [Sample((_v(d, 130)(2, 3), _v(d, 131)(1, 3), _v(d, 132)(4, 3))),
                           Sample((_v(d, 130)(2, 3), _v(d, 131)(2, 1)), {"axis": 1}),
                           Sample((_v(d, 130)(2, 3, 2), _v(d, 131)(2, 3, 2)), {"axis": -1}, noncontig=True),
                           Sample((_v(d, 130)(0, 3), _v(d, 131)(2, 3))), Sample((_v(d, 130)(4),))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.concat([oar.ones([2, 3]), oar.ones([3, 2])]), ValueError, "concat"),
                                _err(lambda: oar.concat([oar.ones([2, 3]), oar.ones([2, 3])], axis=2), IndexError,
                                     "concat"),
                                _err(lambda: oar.concat([]), ValueError, "concat")]))


def _cross_entropy(x, label, *rest, **kw):
    """label: a list of class ids (int labels) or an array of probabilities (soft labels); rest: the class weight."""
    lab = _ints(label).to(x.place) if isinstance(label, list) else label
    return F.cross_entropy(x, lab, *rest, **kw)


def _np_cross_entropy(x, label, weight=None, ignore_index=-100, reduction="mean", soft_label=False, axis=-1,
                      use_softmax=True, label_smoothing=0.0):
    axis = axis % x.ndim
    c = x.shape[axis]
    logp = np.moveaxis(_np_log_softmax(x, axis) if use_softmax else np.log(x), axis, -1)
    if isinstance(label, list):  # class ids, with or without the class axis of size 1
        lab = np.asarray(label, dtype=np.int64)
        lab = np.moveaxis(lab, axis, -1)[..., 0] if lab.ndim == x.ndim else lab
        keep = lab != ignore_index
        safe = np.where(keep, lab, 0)
        target = np.eye(c)[safe]
        w = (weight[safe] if weight is not None else np.ones(safe.shape)) * keep
    else:
        target = np.moveaxis(label, axis, -1)
        w = np.ones(target.shape[:-1])
    if label_smoothing:
        target = (1 - label_smoothing) * target + label_smoothing / c
    loss = -np.sum(target * logp, axis=-1) * w
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / w.sum()
    return np.expand_dims(loss, axis)


def _ce_samples(dtype):
    v = _v(dtype, 140, -2.0, 2.0)
    probs = _rng(141).dirichlet(np.ones(4), size=3)
    return [Sample((v(3, 4), [0, 3, 1])),
            Sample((v(3, 4), [[2], [0], [3]]), {"reduction": "none"}),
            Sample((v(3, 4), [0, 3, 1], _rng(142).uniform(0.5, 2.0, 4)), {"reduction": "mean"}),
            Sample((v(4, 4), [0, -100, 1, 2]), {"reduction": "sum"}),
            Sample((v(4, 4), [0, 5, 1, 5]), {"ignore_index": 5}),
            Sample((v(3, 4), probs), {"soft_label": True}),
            Sample((v(3, 4), [1, 2, 3]), {"label_smoothing": 0.1}),
            Sample((v(2, 3, 2), [[[0, 1]], [[2, 2]]]), {"axis": 1, "reduction": "none"}),
            Sample((_rng(143).dirichlet(np.ones(4), size=3), [0, 1, 3]), {"use_softmax": False}),
            Sample((v(3, 4), [0, 3, 1]), noncontig=True),
            Sample((v(2, 1500), [[7], [1499]]), {"reduction": "none"})]


register(OpInfo("nn.functional.cross_entropy", _cross_entropy, _np_cross_entropy, FLOATS, _ce_samples, grad=True,
                gradgrad=True, tol={"float16": (3e-2, 3e-2), "bfloat16": (2e-1, 5e-2)},
                errors=lambda: [_err(lambda: F.cross_entropy(oar.ones([3, 4]), _ints([0, 1, 4])), ValueError,
                                     "nn.functional.cross_entropy"),
                                _err(lambda: F.cross_entropy(oar.ones([3, 4]), _ints([0, 1])), ValueError,
                                     "nn.functional.cross_entropy"),
                                _err(lambda: F.cross_entropy(oar.ones([3, 4]), _ints([0, 1, 2]), reduction="avg"),
                                     ValueError, "nn.functional.cross_entropy")]))


# ---------------------------------------------------------------- indexing

def _index_select(x, index, axis=0):
    return oar.index_select(x, _ints(index), axis=axis)


register(OpInfo("index_select", _index_select, lambda x, index, axis=0: np.take(x, index, axis=axis),
                ("bool",) + REAL,
                lambda d: [Sample((_v(d, 150)(4, 3), [0, 3, 3, 1])), Sample((_v(d, 150)(2, 3, 4), [2, 0], -1)),
                           Sample((_v(d, 150)(4, 3), [1, 2], 1), noncontig=True), Sample((_v(d, 150)(4, 3), [])),
                           Sample((_v(d, 150)(5,), [4])),
                           Sample((_v(d, 151)(4, 600), [3, 0, 3]), grad=False)],  # long rows
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.index_select(oar.ones([3, 4]), _ints([0, 5])), IndexError,
                                     "index_select"),
                                _err(lambda: oar.index_select(oar.ones([3, 4]), _ints([0]), axis=2), IndexError,
                                     "index_select")]))


def _index_add(x, index, axis, value):
    return oar.index_add(x, _ints(index), axis, value)


def _np_index_add(x, index, axis, value):
    out = np.moveaxis(x.copy(), axis, 0)
    np.add.at(out, index, np.moveaxis(value, axis, 0))
    return np.moveaxis(out, 0, axis)


register(OpInfo("index_add", _index_add, _np_index_add, REAL,
                lambda d: [Sample((_v(d, 160)(4, 3), [0, 2, 0], 0, _v(d, 161)(3, 3))),
                           Sample((_v(d, 160)(2, 3, 4), [3, 1], -1, _v(d, 161)(2, 3, 2))),
                           Sample((_v(d, 160)(4, 3), [1], 1, _v(d, 161)(4, 1)), noncontig=True),
                           Sample((_v(d, 160)(4, 3), [], 0, _v(d, 161)(0, 3)))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.index_add(oar.ones([3, 4]), _ints([0, 1]), 0, oar.ones([3, 4])),
                                     ValueError, "index_add"),
                                _err(lambda: oar.index_add(oar.ones([3, 4]), _ints([0, 3]), 0, oar.ones([2, 4])),
                                     IndexError, "index_add")]))


def _take_along_axis(x, indices, axis, **kw):
    return oar.take_along_axis(x, _ints(indices), axis, **kw)


def _np_take_along_axis(x, indices, axis, broadcast=True):
    idx = np.asarray(indices, dtype=np.int64)
    if broadcast:
        shape = [i if a == axis % x.ndim else max(i, s) for a, (i, s) in enumerate(zip(idx.shape, x.shape))]
        idx = np.broadcast_to(idx, shape)
        x = np.broadcast_to(x, [s if a == axis % x.ndim else shape[a] for a, s in enumerate(x.shape)])
    return np.take_along_axis(x, idx, axis)


register(OpInfo("take_along_axis", _take_along_axis, _np_take_along_axis, ("bool",) + REAL,
                lambda d: [Sample((_v(d, 170)(3, 4), [[0, 3], [1, 1], [2, 0]], 1)),
                           Sample((_v(d, 170)(3, 4), [[2, 0, 1, 1]], 0)),
                           Sample((_v(d, 170)(2, 3, 4), np.zeros((2, 3, 1), dtype=np.int64).tolist(), -1),
                                  noncontig=True),
                           Sample((_v(d, 170)(3, 4), [[0], [1], [3]], 1)),
                           Sample((_v(d, 170)(3, 4), [[], [], []], 1))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.take_along_axis(oar.ones([3, 4]), _ints([[0, 5]]), 1), IndexError,
                                     "take_along_axis"),
                                _err(lambda: oar.take_along_axis(oar.ones([3, 4]), _ints([0]), 1), ValueError,
                                     "take_along_axis")]))


def _put_along_axis(x, indices, values, axis, **kw):
    return oar.put_along_axis(x, _ints(indices), values, axis, **kw)


def _np_put_along_axis(x, indices, values, axis, reduce="assign", include_self=True):
    """Writes in index order; without include_self the first value written replaces arr's."""
    out = x.copy()
    idx = np.asarray(indices, dtype=np.int64)
    values = np.broadcast_to(values, idx.shape)
    count = np.zeros(x.shape, dtype=np.int64)
    for pos in itertools.product(*[range(s) for s in idx.shape]):
        dst = list(pos)
        dst[axis] = idx[pos]
        dst = tuple(dst)
        v = values[pos]
        if reduce == "assign" or (not include_self and count[dst] == 0):
            out[dst] = v
        elif reduce in ("add", "mean"):
            out[dst] += v
        elif reduce == "mul":
            out[dst] *= v
        elif reduce == "amin":
            out[dst] = min(out[dst], v)
        elif reduce == "amax":
            out[dst] = max(out[dst], v)
        count[dst] += 1
    if reduce == "mean":  # integer means truncate toward zero
        n = np.where(count > 0, count + (1 if include_self else 0), 1)
        out = (np.trunc(out / n) if out.dtype.kind in "iu" else out / n).astype(out.dtype)
    return out


def _put_modes_samples(d):
    """Repeated indices under every reduce mode, and lines longer than arr's axis."""
    dup = [[0, 0], [1, 3], [2, 2]]
    out = [Sample((_v(d, 184)(3, 4), dup, _v(d, 185)(3, 2), 1), {"reduce": r, "include_self": s}, grad=False)
           for r in ("mul", "mean", "amin", "amax") for s in (True, False)]
    long_idx = _rng(187).integers(0, 5, (2, 12)).tolist()
    out += [Sample((_v(d, 184)(3, 4), dup, _v(d, 185)(3, 2), 1), grad=False),
            Sample((_v(d, 186)(2, 5), long_idx, _v(d, 188)(2, 12), 1), grad=False),
            Sample((_v(d, 186)(2, 5), long_idx, _v(d, 188)(2, 12), 1), {"reduce": "add"}, grad=False)]
    return out


register(OpInfo("put_along_axis", _put_along_axis, _np_put_along_axis, REAL,
                lambda d: [Sample((_v(d, 180)(3, 4), [[0, 3], [1, 2], [2, 0]], _v(d, 181)(3, 2), 1)),
                           Sample((_v(d, 180)(3, 4), [[2, 0, 1, 1]], _v(d, 181)(1, 4), 0), noncontig=True),
                           Sample((_v(d, 180)(3, 4), [[0, 0], [1, 3], [2, 2]], _v(d, 181)(3, 2), 1),
                                  {"reduce": "add"}),
                           Sample((_v(d, 180)(3, 4), [[0, 0], [1, 3], [2, 2]], _v(d, 181)(3, 2), 1),
                                  {"reduce": "add", "include_self": False}),
                           Sample((_v(d, 180)(3, 4), [[1], [1], [3]], 2, 1), grad=False)] + _put_modes_samples(d),
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.put_along_axis(oar.ones([3, 4]), _ints([[0, 5]]), 1.0, 1),
                                     IndexError, "put_along_axis")]))


def _gather_nd(x, index):
    return oar.gather_nd(x, oar.to_tensor(np.asarray(index, dtype=np.int64).reshape(np.shape(index))))


def _np_gather_nd(x, index):
    idx = np.asarray(index, dtype=np.int64)
    k = idx.shape[-1]
    if k == 0:  # an empty index row selects all of x
        return np.broadcast_to(x, idx.shape[:-1] + x.shape)
    flat = idx.reshape(-1, k)
    out = np.stack([x[tuple(r)] for r in flat]) if len(flat) else np.zeros((0,) + x.shape[k:], x.dtype)
    return out.reshape(idx.shape[:-1] + x.shape[k:])


register(OpInfo("gather_nd", _gather_nd, _np_gather_nd, ("bool",) + REAL,
                lambda d: [Sample((_v(d, 190)(3, 4), [[0, 1], [2, 3], [0, 1]])),
                           Sample((_v(d, 190)(3, 4, 2), [[2], [0]])),
                           Sample((_v(d, 190)(3, 4, 2), [[[1, 3, 1]], [[0, 0, 0]]]), noncontig=True),
                           Sample((_v(d, 190)(3, 4), [[], []])),
                           Sample((_v(d, 191)(3, 600), [[2], [0], [2]]), grad=False)],  # long slices
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.gather_nd(oar.ones([3, 4]), _ints([[0, 5]])), IndexError,
                                     "gather_nd"),
                                _err(lambda: oar.gather_nd(oar.ones([3, 4]), _ints([[0, 1, 0]])), ValueError,
                                     "gather_nd")]))


def _np_diagonal(x, offset=0, axis1=0, axis2=1):
    return np.diagonal(x, offset, axis1, axis2)


register(OpInfo("diagonal", oar.diagonal, _np_diagonal, ("bool",) + REAL,
                lambda d: [Sample((_v(d, 200)(3, 4),)), Sample((_v(d, 200)(3, 4),), {"offset": 1}),
                           Sample((_v(d, 200)(3, 4),), {"offset": -2}),
                           Sample((_v(d, 200)(2, 3, 4),), {"axis1": 2, "axis2": 0}, noncontig=True),
                           Sample((_v(d, 200)(2, 3, 4),), {"offset": 1, "axis1": -1, "axis2": -2}),
                           Sample((_v(d, 200)(3, 4),), {"offset": 5})],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.diagonal(oar.ones([2, 3]), axis1=0, axis2=0), ValueError,
                                     "diagonal"),
                                _err(lambda: oar.diagonal(oar.ones([2, 3]), axis1=0, axis2=3), IndexError,
                                     "diagonal")]))


def _np_flip(x, axis):
    return np.flip(x, axis=tuple(axis) if isinstance(axis, list) else axis)


register(OpInfo("flip", oar.flip, _np_flip, ("bool",) + REAL,
                lambda d: [Sample((_v(d, 210)(3, 4), 0)), Sample((_v(d, 210)(3, 4), [0, 1])),
                           Sample((_v(d, 210)(2, 3, 4), [-1]), noncontig=True), Sample((_v(d, 210)(0, 3), [1])),
                           Sample((_v(d, 210)(), []))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.flip(oar.ones([2, 3]), axis=2), IndexError, "flip"),
                                _err(lambda: oar.flip(oar.ones([2, 3]), axis=[0, 0]), ValueError, "flip")]))


def _split(x, num_or_sections, axis=0):
    """Every piece of the split, put back together in reverse order."""
    return oar.concat(oar.split(x, num_or_sections, axis=axis)[::-1], axis=axis)


def _np_split(x, num_or_sections, axis=0):
    n = x.shape[axis]
    if isinstance(num_or_sections, int):
        pieces = np.split(x, num_or_sections, axis=axis)
    else:
        secs = list(num_or_sections)
        if -1 in secs:
            secs[secs.index(-1)] = n - sum(s for s in secs if s != -1)
        pieces = np.split(x, np.cumsum(secs)[:-1], axis=axis)
    return np.concatenate(pieces[::-1], axis=axis)


register(OpInfo("split", _split, _np_split, ("bool",) + REAL,
                lambda d: [Sample((_v(d, 220)(6, 2), 3)), Sample((_v(d, 220)(2, 5), [1, 4], 1)),
                           Sample((_v(d, 220)(2, 6, 2), [2, -1, 1], -2), noncontig=True),
                           Sample((_v(d, 220)(4, 3), [4, 0]))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.split(oar.ones([2, 3]), 2, axis=1), ValueError, "split"),
                                _err(lambda: oar.split(oar.ones([2, 3]), [1, 1], axis=1), ValueError, "split"),
                                _err(lambda: oar.split(oar.ones([2, 3]), 1, axis=2), IndexError, "split")]))

register(OpInfo("full_like", oar.full_like,
                lambda x, v, dtype=None: np.full(x.shape, v, dtype=np.float64 if dtype is None else dtype),
                ("bool",) + REAL,
                lambda d: [Sample((_v(d, 225)(2, 3), 1)), Sample((_v(d, 225)(), 0)), Sample((_v(d, 225)(0, 2), 1)),
                           Sample((_v(d, 225)(2, 3), 2.5), {"dtype": "float64"}, check_dtype=False)],
                grad=False))


# ---------------------------------------------------------------- sorting and searching

def _np_argsort(x, axis=-1, descending=False, stable=False):
    key = -x.astype(np.float64) if descending else x
    return np.argsort(key, axis=axis, kind="stable")


def _sort_samples(seed):
    def gen(dtype):
        out = [Sample((_distinct((3, 5), seed),)), Sample((_distinct((3, 5), seed),), {"axis": 0}),
               Sample((_distinct((2, 3, 4), seed),), {"descending": True}, noncontig=True),
               Sample((_distinct((6,), seed),)), Sample((np.zeros((0, 3)),))]
        if dtype in INTS + ("float32", "float64"):  # ties keep their input order with stable=True
            out.append(Sample((np.array([[3, 1, 3, 1, 2], [0, 0, 0, 1, 1]]),), {"stable": True}))
            out.append(Sample((np.array([[3, 1, 3, 1, 2]]),), {"stable": True, "descending": True}))
        out += [Sample((_distinct((2, 300), seed + 1),), {"descending": True}), Sample((_distinct((3000,), seed + 2),)),
                Sample((_distinct((2, 40000), seed + 3),)), Sample((_rng(seed + 4).integers(0, 9, (4, 500)),)),
                Sample((_rng(seed + 4).integers(0, 9, (4, 500)),), {"descending": True})]
        return out
    return gen


register(OpInfo("argsort", oar.argsort, _np_argsort, ("int32", "int64") + FLOATS, _sort_samples(230),
                out_dtype=lambda d: "int64",
                errors=lambda: [_err(lambda: oar.argsort(oar.ones([3, 4]), axis=2), IndexError, "argsort")]))


def _np_topk(x, k, axis=None, largest=True, sorted=True):
    axis = -1 if axis is None else axis
    order = np.argsort(-x.astype(np.float64) if largest else x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis), idx


def _topk_samples(dtype):
    return [Sample((_distinct((3, 5), 240), 2)), Sample((_distinct((3, 5), 241), 3), {"axis": 0}),
            Sample((_distinct((2, 3, 4), 242), 4), {"largest": False}, noncontig=True),
            Sample((_distinct((6,), 243), 6)), Sample((_distinct((3, 4), 244), 0)), Sample((np.zeros((0, 3)), 1)),
            Sample((_distinct((2, 300), 245), 5), grad=False),
            Sample((_distinct((40000,), 246), 3), {"largest": False}, grad=False)]


register(OpInfo("topk", lambda *a, **k: oar.topk(*a, **k)[0], lambda *a, **k: _np_topk(*a, **k)[0],
                ("int32", "int64") + FLOATS, _topk_samples, grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.topk(oar.ones([3, 4]), 5), ValueError, "topk"),
                                _err(lambda: oar.topk(oar.ones([3, 4]), 2, axis=3), IndexError, "topk")]))
register(OpInfo("topk_indices", lambda *a, **k: oar.topk(*a, **k)[1], lambda *a, **k: _np_topk(*a, **k)[1],
                ("int64",) + FLOATS, _topk_samples, out_dtype=lambda d: "int64"))


def _nonzero_samples(dtype):
    r = _rng(250)
    return [Sample((r.integers(0, 2, (3, 4)),)), Sample((r.integers(0, 2, (2, 3, 2)),), noncontig=True),
            Sample((np.zeros((3,)),)), Sample((np.zeros((0, 2)),)), Sample((r.random((5,)) > 0.5,))]


register(OpInfo("nonzero", oar.nonzero, np.argwhere, ("bool",) + REAL, _nonzero_samples,
                out_dtype=lambda d: "int64",
                errors=lambda: [_err(lambda: oar.nonzero([1, 2]), TypeError, "nonzero")]))


def _unique_samples(dtype):
    r = _rng(260)
    return [Sample((r.integers(-3, 4, (10,)),)), Sample((r.integers(0, 3, (3, 4)),)),
            Sample((np.array([[1, 2], [0, 5], [1, 2], [0, 1]]),), {"axis": 0}),
            Sample((np.array([[1, 2, 1], [0, 5, 0]]),), {"axis": 1}), Sample((np.zeros((0,)),))]


def _np_unique(x, axis=None, return_index=False, return_inverse=False, return_counts=False):
    vals, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    if return_index:
        return index
    if return_inverse:
        return inverse.reshape(-1) if axis is not None else inverse.reshape(x.shape if x.ndim else (1,)).reshape(-1)
    if return_counts:
        return counts
    return vals


register(OpInfo("unique", oar.unique, _np_unique, ("int32", "int64") + FLOATS, _unique_samples,
                errors=lambda: [_err(lambda: oar.unique(oar.ones([3, 4]), axis=2), IndexError, "unique")]))
for _k in ("return_index", "return_inverse", "return_counts"):  # each adds one output after the values
    register(OpInfo(f"unique_{_k.split('_')[1]}", (lambda k: lambda x, **kw: oar.unique(x, **{k: True}, **kw)[1])(_k),
                    (lambda k: lambda x, **kw: _np_unique(x, **{k: True}, **kw))(_k), ("int64", "float32"),
                    _unique_samples, out_dtype=lambda d: "int64"))


def _np_searchsorted(seq, values, out_int32=False, right=False):
    side = "right" if right else "left"
    if seq.ndim == 1:
        return np.searchsorted(seq, values, side=side)
    s2, v2 = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
    return np.stack([np.searchsorted(a, b, side=side) for a, b in zip(s2, v2)]).reshape(values.shape)


def _searchsorted_samples(dtype):
    r = _rng(270)
    seq = np.sort(r.integers(-10, 10, (2, 6)), axis=-1)
    return [Sample((np.arange(6) * 2, np.array([-1, 0, 3, 4, 11, 20]))),
            Sample((np.arange(6) * 2, np.array([-1, 0, 3, 4, 11, 20])), {"right": True}),
            Sample((seq, r.integers(-12, 12, (2, 3)))), Sample((seq, r.integers(-12, 12, (2, 3))), {"right": True}),
            Sample((np.arange(6) * 2, np.array([[1, 2], [10, 12]]))),
            Sample((np.arange(4), np.array([1, 3])), {"out_int32": True}, check_dtype=False)]


register(OpInfo("searchsorted", oar.searchsorted, _np_searchsorted, ("int32", "int64", "float32", "float64"),
                _searchsorted_samples, out_dtype=lambda d: "int64",
                errors=lambda: [_err(lambda: oar.searchsorted(oar.ones([3, 4]), oar.ones([2, 4])), ValueError,
                                     "searchsorted")]))


# ---------------------------------------------------------------- argmax, cumulative and order statistics

def _np_arg(f):
    def ref(x, axis=None, keepdim=False, dtype="int64"):
        if axis is None:
            out = f(x.reshape(-1))
            return np.reshape(out, [1] * x.ndim) if keepdim else out
        out = f(x, axis=axis)
        return np.expand_dims(out, axis) if keepdim else out
    return ref


def _arg_samples(dtype):
    v = _v(dtype, 280, -3, 3)
    return [Sample((v(3, 4),)), Sample((v(3, 4),), {"axis": 0}), Sample((v(3, 4),), {"axis": -1, "keepdim": True}),
            Sample((v(2, 3, 4),), {"axis": 1}, noncontig=True), Sample((v(2, 3),), {"keepdim": True}),
            Sample((v(5),), {"axis": 0, "dtype": "int32"}, check_dtype=False), Sample((v(),)),
            Sample((np.array([[1, 3, 3], [2, 2, 0]]),), {"axis": 1}),  # ties: the first occurrence
            Sample((v(3, 500),), {"axis": 1}), Sample((_rng(281).integers(0, 4, (2, 700)),), {"axis": -1}),
            Sample((_rng(282).integers(0, 4, (700, 3)),), {"axis": 0})]


for _n, _f in (("argmax", np.argmax), ("argmin", np.argmin)):
    register(OpInfo(_n, getattr(oar, _n), _np_arg(_f), REAL, _arg_samples, out_dtype=lambda d: "int64",
                    errors=(lambda n: lambda: [
                        _err(lambda: getattr(oar, n)(oar.ones([2, 3]), axis=2), IndexError, n),
                        _err(lambda: getattr(oar, n)(oar.ones([0, 3]), axis=0), ValueError, n)])(_n)))


def _np_cum(f):
    def ref(x, axis=None, dtype=None, dim=None):
        axis = dim if dim is not None else axis
        if axis is None:
            x, axis = x.reshape(-1), 0
        out = f(x, axis=axis) if x.ndim else x
        return out.astype(np.float64) if dtype == "float64" else out
    return ref


def _cum_samples(lo, hi, key="axis"):
    def gen(dtype):
        v = _v(dtype, 290, lo, hi)
        out = [Sample((v(3, 4),), {key: 0}), Sample((v(3, 4),), {key: -1}), Sample((v(2, 3, 4),), {key: 1},
                                                                               noncontig=True),
               Sample((v(0, 3),), {key: 0}), Sample((v(),), {key: 0}), Sample((v(5),), {key: 0})]
        long = _v(dtype, 291, 0.5, 1.5)
        out += [Sample((long(2, 300),), {key: -1}, grad=False), Sample((long(300, 3),), {key: 0}, grad=False)]
        if key == "axis":
            out.append(Sample((v(2, 3),)))  # flattened
        if dtype in ("float32", "int64"):
            out.append(Sample((v(2, 3),), {key: 1, "dtype": "float64"}, check_dtype=False))
        return out
    return gen


register(OpInfo("cumsum", oar.cumsum, _np_cum(np.cumsum), REAL[1:], _cum_samples(-3, 3), grad=True, gradgrad=True,
                tol=LOW_TOL, errors=lambda: [_err(lambda: oar.cumsum(oar.ones([2, 3]), axis=2), IndexError, "cumsum")]))
register(OpInfo("cumprod", oar.cumprod, _np_cum(np.cumprod), ("int32", "int64") + FLOATS, _cum_samples(0.5, 1.5, "dim"),
                grad=True, gradgrad=True, tol=LOW_TOL,
                errors=lambda: [_err(lambda: oar.cumprod(oar.ones([2, 3]), dim=2), IndexError, "cumprod")]))


def _np_cumext(f, which):
    def ref(x, axis=None, dtype="int64"):
        if axis is None:
            x, axis = x.reshape(-1), 0
        if x.ndim == 0:
            return x if which == 0 else np.zeros((), np.int64)
        xm = np.moveaxis(x, axis, -1)
        vals = f.accumulate(xm, axis=-1)
        n = xm.shape[-1]
        # the index of the latest element equal to the running extreme
        hits = np.where(xm[..., None, :] == vals[..., :, None], np.arange(n), -1)
        hits = np.where(np.arange(n)[None, :] <= np.arange(n)[:, None], hits, -1)
        idx = hits.max(axis=-1) if n else np.zeros(xm.shape, np.int64)
        return np.moveaxis(vals if which == 0 else idx, -1, axis)
    return ref


def _cumext_samples(dtype):
    return [Sample((_distinct((3, 4), 300),), {"axis": 0}), Sample((_distinct((3, 4), 301),), {"axis": -1}),
            Sample((_distinct((2, 3, 4), 302),), {"axis": 1}, noncontig=True), Sample((np.zeros((0, 3)),), {"axis": 0}),
            Sample((_distinct((2, 3), 303),)), Sample((_distinct((5,), 304),), {"axis": 0}),
            Sample((_distinct((2, 300), 305),), {"axis": -1}, grad=False)]


for _n, _f in (("cummax", np.maximum), ("cummin", np.minimum)):
    register(OpInfo(_n, (lambda n: lambda *a, **k: getattr(oar, n)(*a, **k)[0])(_n), _np_cumext(_f, 0),
                    ("int32", "int64") + FLOATS, _cumext_samples, grad=True, gradgrad=True,
                    errors=(lambda n: lambda: [_err(lambda: getattr(oar, n)(oar.ones([2, 3]), axis=2), IndexError,
                                                    n)])(_n)))
    register(OpInfo(f"{_n}_indices", (lambda n: lambda *a, **k: getattr(oar, n)(*a, **k)[1])(_n), _np_cumext(_f, 1),
                    ("int64", "float32"),
                    lambda d: _cumext_samples(d) + [Sample((np.array([[1, 3, 3, 2, 3], [2, 2, 0, 0, 5]]),),
                                                           {"axis": 1}),
                                                    Sample((_rng(306).integers(0, 6, (2, 400)),), {"axis": 1})],
                    out_dtype=lambda d: "int64"))


def _np_median(x, axis=None, keepdim=False, mode="avg"):
    if mode == "avg":
        return np.median(x, axis=axis, keepdims=keepdim)
    xs = np.sort(x.reshape(-1) if axis is None else x, axis=-1 if axis is None else axis)
    ax = -1 if axis is None else axis
    n = xs.shape[ax]
    out = np.take(xs, (n - 1) // 2, axis=ax)
    if keepdim:
        out = np.reshape(out, [1] * x.ndim) if axis is None else np.expand_dims(out, axis)
    return out


def _median_samples(dtype):
    return [Sample((_distinct((3, 4), 310),)), Sample((_distinct((3, 5), 311),), {"axis": 1}),
            Sample((_distinct((3, 4), 312),), {"axis": 0, "keepdim": True}),
            Sample((_distinct((2, 3, 4), 313),), {"axis": -1}, noncontig=True), Sample((_distinct((5,), 314),)),
            Sample((_distinct((3, 301), 315),), {"axis": 1}, grad=False)]


register(OpInfo("median", oar.median, _np_median, ("float32", "float64"), _median_samples, grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.median(oar.ones([2, 3]), axis=2), IndexError, "median"),
                                _err(lambda: oar.median(oar.ones([2, 3]), mode="x"), ValueError, "median")]))


def _median_min(x, axis=-1, keepdim=False):
    return oar.median(x, axis=axis, keepdim=keepdim, mode="min")[0]


register(OpInfo("median_min", _median_min, lambda x, axis=-1, keepdim=False: _np_median(x, axis, keepdim, "min"),
                ("float32", "float64"), lambda d: [s for s in _median_samples(d) if "axis" in s.kwargs],
                grad=True, gradgrad=True))


def _np_trigamma(x):
    # Recurrence psi1(x) = psi1(x + 1) + 1/x^2 up to x >= 8, then the asymptotic series.
    x = np.asarray(x, dtype=np.float64).copy()
    acc = np.zeros_like(x)
    while np.any(x < 8):
        m = x < 8
        acc[m] += 1.0 / x[m] ** 2
        x[m] += 1
    i = 1.0 / x
    i2 = i * i
    return acc + i + i2 / 2 + i * i2 * (1 / 6 - i2 * (1 / 30 - i2 * (1 / 42 - i2 / 30)))


def _trigamma(x):
    """The trigamma function as the derivative of digamma (oar has no public trigamma)."""
    t = x.detach()
    t.stop_gradient = False
    return oar.grad([oar.digamma(t)], [t], grad_outputs=[oar.ones_like(t)])[0]


register(OpInfo("trigamma", _trigamma, _np_trigamma, F32_64,
                lambda d: [Sample((_v(d, 320, 0.2, 6.0)(3, 4),)), Sample((np.array([1.0, 0.5, 2.0, 10.0, 100.0]),)),
                           Sample((_v(d, 321, 0.2, 6.0)(2, 3),), noncontig=True), Sample((np.zeros((0,)),))],
                tol={"float64": (1e-9, 1e-9)}))


# ---------------------------------------------------------------- linear algebra

_LA_TOL = {"float32": (1e-4, 1e-4)}


def _la(name):
    return f"linalg.{name}"


def _mats(seed, *shapes):
    """Well-conditioned matrices: random entries plus a multiple of the identity where square."""
    def gen(dtype):
        out = []
        for i, s in enumerate(shapes):
            a = _rng(seed + i).uniform(-1, 1, s)
            if s[-1] == s[-2]:
                a = a + 2 * np.eye(s[-1])
            out.append(Sample((a,)))
        return out
    return gen


def _col_signs(m):
    """The sign of each column's first entry, as a constant: multiplying by it fixes a vector's sign."""
    return oar.sign(m[..., :1, :]).detach()


def _np_col_signs(m):
    return np.sign(m[..., :1, :])


def _mT(x):
    return oar.swapaxes(x, -1, -2)


def _svd_vectors(x):
    u, _, vh = LA.svd(x)
    s = _col_signs(u)
    return oar.concat([u * s, _mT(vh) * s], axis=-2)


def _np_svd_vectors(x):
    u, _, vh = np.linalg.svd(x, full_matrices=False)
    s = _np_col_signs(u)
    return np.concatenate([u * s, np.swapaxes(vh, -1, -2) * s], axis=-2)


def _svd_reconstruct(x, full_matrices=False):
    u, s, vh = LA.svd(x, full_matrices=full_matrices)
    k = s.shape[-1]
    return oar.matmul(u[..., :k] * oar.unsqueeze(s, -2), vh[..., :k, :])


_SVD = _mats(400, (3, 3), (4, 2), (2, 4), (2, 3, 2))
_SVD_ERR = lambda: [_err(lambda: LA.svd(oar.ones([3])), ValueError, _la("svd"))]  # noqa: E731
register(OpInfo("linalg.svd", _svd_reconstruct, lambda x, full_matrices=False: x, F32_64,
                # (the gradient with full_matrices=True is implemented for square matrices only)
                lambda d: _SVD(d) + [Sample((_rng(405).uniform(-1, 1, (4, 2)),), {"full_matrices": True}, grad=False),
                                     Sample((_rng(406).uniform(-1, 1, (3, 3)),), {"full_matrices": True})],
                grad=True, gradgrad=True, tol=_LA_TOL, errors=_SVD_ERR))
register(OpInfo("linalg.svd_values", lambda x: LA.svd(x)[1], lambda x: np.linalg.svd(x, compute_uv=False), F32_64,
                _SVD, grad=True, gradgrad=True, tol=_LA_TOL))
register(OpInfo("linalg.svd_vectors", _svd_vectors, _np_svd_vectors, F32_64, _SVD, grad=True, gradgrad=True,
                tol=_LA_TOL))


def _np_sym(x, UPLO="L"):
    t = np.tril(x) if UPLO == "L" else np.triu(x)
    return t + np.swapaxes(t, -1, -2) - t * np.eye(x.shape[-1])  # the named triangle, mirrored


# eigh reads one triangle, but its gradient is the symmetric one (the input is taken to be symmetric), so the
# gradient samples symmetrise their input first (sym=True); the others check which triangle is read.

def _eigh(x, UPLO="L", sym=False, part=0):
    if sym:
        x = (x + _mT(x)) * 0.5
    w, v = LA.eigh(x, UPLO)
    return w if part == 0 else v * _col_signs(v)


def _np_eigh(x, UPLO="L", sym=False, part=0):
    x = (x + np.swapaxes(x, -1, -2)) / 2 if sym else _np_sym(x, UPLO)
    w, v = np.linalg.eigh(x)
    return w if part == 0 else v * _np_col_signs(v)


def _eigh_samples(dtype):
    r = _rng(410)
    return [Sample((r.uniform(-1, 1, (3, 3)),), grad=False),
            Sample((r.uniform(-1, 1, (3, 3)),), {"UPLO": "U"}, grad=False),
            Sample((r.uniform(-1, 1, (2, 4, 4)),), grad=False), Sample((r.uniform(-1, 1, (3, 3)),), {"sym": True}),
            Sample((r.uniform(-1, 1, (2, 3, 3)),), {"sym": True, "UPLO": "U"}), Sample((r.uniform(-1, 1, (1, 1)),))]


register(OpInfo("linalg.eigh", _eigh, _np_eigh, F32_64, _eigh_samples, grad=True, gradgrad=True, tol=_LA_TOL,
                errors=lambda: [_err(lambda: LA.eigh(oar.ones([2, 3])), ValueError, _la("eigh"))]))
register(OpInfo("linalg.eigh_vectors", lambda x, **k: _eigh(x, part=1, **k), lambda x, **k: _np_eigh(x, part=1, **k),
                F32_64, _eigh_samples, grad=True, gradgrad=True, tol=_LA_TOL))


def _qr(x, mode="reduced", part=0):
    q, r = LA.qr(x, mode)
    s = oar.sign(oar.diagonal(r, axis1=-2, axis2=-1)).detach()  # make diag(R) positive: Q and R are then unique
    k = s.shape[-1]
    if part == 0:
        return q[..., :k] * oar.unsqueeze(s, -2)
    return oar.concat([r[..., :k, :] * oar.unsqueeze(s, -1), r[..., k:, :]], axis=-2)


def _np_qr(x, mode="reduced", part=0):
    q, r = np.linalg.qr(x, mode="complete" if mode == "complete" else "reduced")
    s = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    k = s.shape[-1]
    if part == 0:
        return q[..., :k] * s[..., None, :]
    return np.concatenate([r[..., :k, :] * s[..., :, None], r[..., k:, :]], axis=-2)


def _qr_samples(dtype):
    # (the gradient is implemented for M >= N only)
    return [Sample(s.args, grad=s.args[0].shape[-2] >= s.args[0].shape[-1])
            for s in _mats(420, (3, 3), (4, 2), (2, 4), (2, 3, 2))(dtype)]


_QR = _qr_samples
register(OpInfo("linalg.qr", _qr, _np_qr, F32_64, _QR, grad=True, gradgrad=True, tol=_LA_TOL,
                errors=lambda: [_err(lambda: LA.qr(oar.ones([3])), ValueError, _la("qr")),
                                _err(lambda: LA.qr(oar.ones([3, 3]), mode="foo"), ValueError, _la("qr"))]))
register(OpInfo("linalg.qr_r", lambda x, mode="reduced": _qr(x, mode, 1), lambda x, mode="reduced": _np_qr(x, mode, 1),
                F32_64,
                lambda d: _QR(d) + [Sample((_rng(425).uniform(-1, 1, (4, 2)),), {"mode": "complete"}, grad=False)],
                grad=True, gradgrad=True, tol=_LA_TOL))

register(OpInfo("linalg.inv", LA.inv, np.linalg.inv, F32_64, _mats(430, (3, 3), (2, 2, 2), (1, 1), (0, 2, 2)),
                grad=True, gradgrad=True, tol=_LA_TOL,
                errors=lambda: [_err(lambda: LA.inv(oar.ones([2, 3])), ValueError, _la("inv")),
                                _err(lambda: LA.inv(oar.ones([2, 2])), ValueError, _la("inv"))]))
register(OpInfo("linalg.det", LA.det, np.linalg.det, F32_64,
                lambda d: _mats(440, (3, 3), (2, 2, 2), (1, 1))(d) + [Sample((np.array([[1.0, 2.0], [2.0, 4.0]]),),
                                                                             grad=False)],
                grad=True, gradgrad=True, tol=_LA_TOL,
                errors=lambda: [_err(lambda: LA.det(oar.ones([2, 3])), ValueError, _la("det"))]))


def _np_slogdet(x):
    sign, logabs = np.linalg.slogdet(x)
    return np.stack([sign, logabs])


register(OpInfo("linalg.slogdet", LA.slogdet, _np_slogdet, F32_64,
                lambda d: [Sample((np.array([[0.5, 2.0], [1.0, 0.3]]),)),
                           *_mats(450, (3, 3), (2, 2, 2))(d)],
                grad=True, gradgrad=True, tol=_LA_TOL,
                errors=lambda: [_err(lambda: LA.slogdet(oar.ones([2, 3])), ValueError, _la("slogdet"))]))


def _solve_samples(dtype):
    a = lambda s, k: _rng(k).uniform(-1, 1, s) + 2 * np.eye(s[-1])  # noqa: E731
    return [Sample((a((3, 3), 460), _rng(461).uniform(-1, 1, (3, 2)))),
            Sample((a((2, 3, 3), 462), _rng(463).uniform(-1, 1, (2, 3, 1)))),
            Sample((a((3, 3), 464), _rng(465).uniform(-1, 1, (2, 3, 2)))),
            Sample((a((3, 3), 466), _rng(467).uniform(-1, 1, (3, 2))), noncontig=True)]


register(OpInfo("linalg.solve", LA.solve, np.linalg.solve, F32_64, _solve_samples, grad=True, gradgrad=True,
                tol=_LA_TOL,
                errors=lambda: [_err(lambda: LA.solve(oar.ones([2, 2]), oar.ones([3, 1])), ValueError, _la("solve"))]))


def _np_cholesky(x, upper=False):
    c = np.linalg.cholesky(_np_spd(x))
    return np.swapaxes(c, -1, -2) if upper else c


def _spd(x):
    return oar.matmul(x, _mT(x)) + x.shape[-1] * oar.eye(x.shape[-1], dtype=x.dtype)


def _np_spd(x):
    return x @ np.swapaxes(x, -1, -2) + x.shape[-1] * np.eye(x.shape[-1])


register(OpInfo("linalg.cholesky", lambda x, upper=False: LA.cholesky(_spd(x), upper),
                _np_cholesky, F32_64,
                lambda d: [Sample((_rng(470).uniform(-1, 1, (3, 3)),)),
                           Sample((_rng(471).uniform(-1, 1, (2, 3, 3)),), {"upper": True}),
                           Sample((_rng(472).uniform(-1, 1, (1, 1)),))],
                grad=True, gradgrad=True, tol=_LA_TOL,
                errors=lambda: [_err(lambda: LA.cholesky(oar.ones([2, 3])), ValueError, _la("cholesky")),
                                _err(lambda: LA.cholesky(-oar.eye(2)), ValueError, _la("cholesky"))]))


def _eig_values(x):
    """The eigenvalues as [sorted real parts, sorted imaginary parts]: independent of LAPACK's order."""
    w = LA.eig(x)[0]
    return oar.stack([oar.sort(oar.real(w), axis=-1), oar.sort(oar.imag(w), axis=-1)])


def _np_eig_values(x):
    w = np.linalg.eigvals(x)
    return np.stack([np.sort(w.real, axis=-1), np.sort(w.imag, axis=-1)])


def _eig_samples(dtype):
    r = _rng(480)
    p = r.uniform(-1, 1, (3, 3)) + 2 * np.eye(3)
    real_spec = p @ np.diag([-1.0, 0.5, 2.0]) @ np.linalg.inv(p)  # distinct real eigenvalues
    rot = np.array([[0.5, -2.0, 0.1], [2.0, 0.5, 0.2], [0.0, 0.0, -1.0]])  # 0.5 +- 2i and -1
    return [Sample((real_spec,)), Sample((rot,)), Sample((np.stack([real_spec, real_spec.T]),)),
            Sample((np.array([[3.0]]),))]


register(OpInfo("linalg.eig_values", _eig_values, _np_eig_values, F32_64, _eig_samples, grad=True, gradgrad=True,
                tol=_LA_TOL,
                errors=lambda: [_err(lambda: LA.eig(oar.ones([2, 3])), ValueError, _la("eig"))]))
