"""Op-database entries for the fused kernels: the first-order gradient kernels (gelu_grad,
relu_grad, softmax_grad, softmax_cross_entropy_grad, layer_norm_grad, rms_norm_grad, batch_norm_grad) and the
fused ops (fused_linear_act, fused_elementwise, fused_reduce, fused_attention and its gradient).

A first-order backward (oar.grad without create_graph) runs a fused gradient kernel; an
entry named <function>_grad returns a gradient of that function (its sample's `wrt` argument)
for an upstream gradient g (its last tensor argument), flattened, against NumPy's formulas. The fused
ops are what the graph passes emit; their entries call them through oar._C. So every device
runs each of these kernels against the CPU (test_opdb_device.py), and test_opdb.py checks the
CPU against NumPy. Rows longer than a warp's share (more than 1024 elements) take the CUDA row
kernels' block path; the long fused_elementwise programs take its one-launch-per-instruction path.
"""
import numpy as np

import oar
from oar import _C
from opdb import FLOATS, OpInfo, Sample, _values, register
from opdb_core import _erf, _np_log_softmax

F = oar.nn.functional
LOW_TOL = {"float16": (5e-2, 3e-2), "bfloat16": (2e-1, 5e-2)}


def _rng(seed):
    return np.random.default_rng(seed)


def _v(dtype, seed, lo=-2.0, hi=2.0):
    rng = _rng(seed)
    return lambda *shape: _values(shape, dtype, lo, hi, rng)  # noqa: E731


def _grads(fn, n_diff):
    """An op returning the gradient of fn(args[:-1]) with respect to its argument `wrt` (one of the
    first n_diff) for the upstream gradient args[-1], flattened. (One gradient per sample, not all of
    them concatenated: the entries then need no kernel beyond the function's own and its gradient's.)"""
    def op(*args, wrt=0, **kwargs):
        *xs, g = args
        diff = []
        for x in xs[:n_diff]:
            x = x.detach()
            x.stop_gradient = False
            diff.append(x)
        out = fn(*diff, *xs[n_diff:], **kwargs)
        return oar.grad([out], diff, grad_outputs=[g])[wrt].flatten()
    return op


def _each_grad(samples):
    """Each sample once per differentiable argument (wrt 0, 1, 2)."""
    return [Sample(s.args, {**s.kwargs, "wrt": k}, noncontig=s.noncontig) for s in samples for k in range(3)]


# ---------------------------------------------------------------- gradient kernels

def _np_gelu_grad(x, g, approximate=False):
    if approximate:
        k, c = np.sqrt(2 / np.pi), 0.044715
        t = np.tanh(k * (x + c * x ** 3))
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x)
    else:
        d = 0.5 * (1 + _erf(x / np.sqrt(2))) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
    return (g * d).ravel()


def _gelu_grad_samples(dtype):
    v = _v(dtype, 200)
    shapes = [((5,), False), ((3, 4), False), ((2, 3, 4), True), ((0, 3), False)]
    return [Sample((v(*s), v(*s)), {"approximate": a}, noncontig=nc) for s, nc in shapes for a in (False, True)]


def _relu_grad_samples(dtype):
    v = _v(dtype, 205)
    return [Sample((v(*s), v(*s)), noncontig=nc) for s, nc in (((5,), False), ((3, 4), False), ((2, 3, 4), True),
                                                             ((0, 3), False))]


register(OpInfo("nn.functional.relu_grad", _grads(F.relu, 1), lambda x, g: (g * (x > 0)).ravel(), FLOATS,
                _relu_grad_samples, tol=LOW_TOL))


register(OpInfo("nn.functional.gelu_grad", _grads(F.gelu, 1), _np_gelu_grad, FLOATS, _gelu_grad_samples,
                tol=LOW_TOL))


def _np_softmax_grad(x, g, axis=-1):
    y = np.exp(_np_log_softmax(x, axis))
    return (y * (g - np.sum(g * y, axis=axis, keepdims=True))).ravel()


def _softmax_grad_samples(dtype):
    v = _v(dtype, 210)
    return [Sample((v(3, 4), v(3, 4))), Sample((v(2, 3, 5), v(2, 3, 5)), noncontig=True),
            Sample((v(2, 1500), v(2, 1500))), Sample((v(0, 4), v(0, 4)))]


register(OpInfo("nn.functional.softmax_grad", _grads(F.softmax, 1), _np_softmax_grad, FLOATS,
                _softmax_grad_samples, tol=LOW_TOL))


def _cross_entropy_grad(x, g, label, ignore_index=-100):
    """label: class ids [N, 1] (a list: the harness keeps it integral), made on x's device."""
    lab = oar.to_tensor(np.asarray(label, dtype=np.int64)).to(x.place)
    return _grads(lambda t: F.cross_entropy(t, lab, ignore_index=ignore_index, reduction="none"), 1)(x, g)


def _np_cross_entropy_grad(x, g, label, ignore_index=-100):
    lab = np.asarray(label, dtype=np.int64)[:, 0]
    keep = lab != ignore_index
    onehot = np.eye(x.shape[1])[np.where(keep, lab, 0)]
    return ((np.exp(_np_log_softmax(x, -1)) - onehot) * g * keep[:, None]).ravel()


def _cross_entropy_grad_samples(dtype):
    v = _v(dtype, 220)
    return [Sample((v(3, 4), v(3, 1), [[0], [3], [1]])),
            Sample((v(4, 5), v(4, 1), [[0], [5], [1], [5]]), {"ignore_index": 5}),
            Sample((v(3, 4), v(3, 1), [[2], [0], [3]]), noncontig=True),
            Sample((v(2, 1500), v(2, 1), [[7], [1499]]))]


register(OpInfo("nn.functional.cross_entropy_grad", _cross_entropy_grad, _np_cross_entropy_grad, FLOATS,
                _cross_entropy_grad_samples, tol=LOW_TOL))


def _np_norm_input_grad(x, g, w, axes, eps):
    """Note [norm gradients] with the statistics of x over `axes`; w broadcasts against x."""
    mu = x.mean(axis=axes, keepdims=True)
    r = 1 / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    xhat = (x - mu) * r
    gw = g * w
    return r * (gw - gw.mean(axis=axes, keepdims=True) - xhat * (gw * xhat).mean(axis=axes, keepdims=True)), xhat


def _layer_norm_grad(x, w, b, g, normalized_shape, epsilon=1e-5, wrt=0):
    return _grads(lambda a, c, d: F.layer_norm(a, normalized_shape, c, d, epsilon), 3)(x, w, b, g, wrt=wrt)


def _np_layer_norm_grad(x, w, b, g, normalized_shape, epsilon=1e-5, wrt=0):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    lead = tuple(range(x.ndim - len(normalized_shape)))
    gx, xhat = _np_norm_input_grad(x, g, w, axes, epsilon)
    return [gx, (g * xhat).sum(axis=lead), g.sum(axis=lead)][wrt].ravel()


def _layer_norm_grad_samples(dtype):
    v = _v(dtype, 230)
    return _each_grad([Sample((v(3, 4), v(4), v(4), v(3, 4)), {"normalized_shape": [4]}),
                       Sample((v(2, 3, 4), v(3, 4), v(3, 4), v(2, 3, 4)),
                              {"normalized_shape": [3, 4], "epsilon": 1e-3}),
                       Sample((v(3, 4, 2), v(2), v(2), v(3, 4, 2)), {"normalized_shape": [2]}, noncontig=True),
                       Sample((v(2, 1500), v(1500), v(1500), v(2, 1500)), {"normalized_shape": [1500]}),
                       Sample((v(0, 4), v(4), v(4), v(0, 4)), {"normalized_shape": [4]})])


register(OpInfo("nn.functional.layer_norm_grad", _layer_norm_grad, _np_layer_norm_grad, FLOATS,
                _layer_norm_grad_samples, tol=LOW_TOL))


def _rms_norm_grad(x, w, g, normalized_shape, eps=1e-5, wrt=0):
    return _grads(lambda a, c: F.rms_norm(a, normalized_shape, c, eps), 2)(x, w, g, wrt=wrt)


def _rms_norm_grad_unweighted(x, g, normalized_shape, eps=1e-5):
    return _grads(lambda a: F.rms_norm(a, normalized_shape, None, eps), 1)(x, g)


def _np_rms_norm_grads(x, w, g, normalized_shape, eps):
    """Note [rms_norm gradients]."""
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    r = 1 / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    xhat = x * r
    gw = g * w
    return r * (gw - xhat * (gw * xhat).mean(axis=axes, keepdims=True)), (g * xhat).sum(axis=tuple(range(x.ndim - len(normalized_shape))))


def _np_rms_norm_grad(x, w, g, normalized_shape, eps=1e-5, wrt=0):
    return _np_rms_norm_grads(x, w, g, normalized_shape, eps)[wrt].ravel()


def _np_rms_norm_grad_unweighted(x, g, normalized_shape, eps=1e-5):
    return _np_rms_norm_grads(x, 1.0, g, normalized_shape, eps)[0].ravel()


def _rms_norm_grad_samples(dtype):
    v = _v(dtype, 235)
    return [Sample(s.args, {**s.kwargs, "wrt": k}, noncontig=s.noncontig) for k in range(2) for s in
            [Sample((v(3, 4), v(4), v(3, 4)), {"normalized_shape": [4]}),
             Sample((v(2, 3, 4), v(3, 4), v(2, 3, 4)), {"normalized_shape": [3, 4], "eps": 1e-3}),
             Sample((v(3, 4, 2), v(2), v(3, 4, 2)), {"normalized_shape": [2]}, noncontig=True),
             Sample((v(2, 1500), v(1500), v(2, 1500)), {"normalized_shape": [1500]}),
             Sample((v(0, 4), v(4), v(0, 4)), {"normalized_shape": [4]})]]


register(OpInfo("nn.functional.rms_norm_grad", _rms_norm_grad, _np_rms_norm_grad, FLOATS, _rms_norm_grad_samples,
                tol=LOW_TOL))
register(OpInfo("nn.functional.rms_norm_grad_unweighted", _rms_norm_grad_unweighted, _np_rms_norm_grad_unweighted,
                FLOATS, lambda d: [Sample((_v(d, 236)(3, 5), _v(d, 237)(3, 5)), {"normalized_shape": [5]}),
                                   Sample((_v(d, 238)(2, 3, 4), _v(d, 239)(2, 3, 4)), {"normalized_shape": [3, 4]},
                                          noncontig=True)],
                tol=LOW_TOL))


def _batch_norm_grad(x, w, b, g, rm, rv, training=True, data_format="NCHW", wrt=0):
    """rm, rv: the running statistics as lists, made on x's device (buffers, not differentiable)."""
    stat = lambda s: oar.to_tensor(np.asarray(s)).astype(x.dtype).to(x.place)  # noqa: E731
    return _grads(lambda a, c, d: F.batch_norm(a, stat(rm), stat(rv), c, d, training=training,
                                               data_format=data_format), 3)(x, w, b, g, wrt=wrt)


def _np_batch_norm_grad(x, w, b, g, rm, rv, training=True, data_format="NCHW", wrt=0):
    last = data_format in ("NLC", "NHWC", "NDHWC")
    xc, gc = (np.moveaxis(x, -1, 1), np.moveaxis(g, -1, 1)) if last else (x, g)
    axes = tuple(i for i in range(xc.ndim) if i != 1)
    shape = (1, -1) + (1,) * (xc.ndim - 2)
    eps = 1e-5
    if training:
        gx, xhat = _np_norm_input_grad(xc, gc, w.reshape(shape), axes, eps)
    else:
        r = 1 / np.sqrt(np.asarray(rv).reshape(shape) + eps)
        xhat = (xc - np.asarray(rm).reshape(shape)) * r
        gx = gc * w.reshape(shape) * r
    gx = np.moveaxis(gx, 1, -1) if last else gx
    return [gx, (gc * xhat).sum(axis=axes), gc.sum(axis=axes)][wrt].ravel()


def _batch_norm_grad_samples(dtype):
    v = _v(dtype, 240)
    pos = _v(dtype, 241, 0.5, 2.0)
    stats = lambda c: (list(_rng(c).uniform(-1, 1, c)), list(_rng(c + 1).uniform(0.5, 2, c)))  # noqa: E731
    return _each_grad([Sample((v(4, 3, 2, 2), pos(3), v(3), v(4, 3, 2, 2), *stats(3))),
                       Sample((v(4, 3, 2, 2), pos(3), v(3), v(4, 3, 2, 2), *stats(3)), {"training": False}),
                       Sample((v(5, 3), pos(3), v(3), v(5, 3), *stats(3))),
                       Sample((v(3, 2, 4), pos(2), v(2), v(3, 2, 4), *stats(2)), noncontig=True),
                       Sample((v(2, 2, 2, 3), pos(3), v(3), v(2, 2, 2, 3), *stats(3)), {"data_format": "NHWC"}),
                       Sample((v(2, 4, 3000), pos(4), v(4), v(2, 4, 3000), *stats(4)))])


register(OpInfo("nn.functional.batch_norm_grad", _batch_norm_grad, _np_batch_norm_grad, FLOATS,
                _batch_norm_grad_samples, tol=LOW_TOL))


# ---------------------------------------------------------------- fused ops

_ACT = {"relu": lambda h: np.maximum(h, 0), "gelu": lambda h: 0.5 * h * (1 + _erf(h / np.sqrt(2))),
        "gelu_tanh": lambda h: 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3))),
        "silu": lambda h: h / (1 + np.exp(-h)), "sigmoid": lambda h: 1 / (1 + np.exp(-h)), "tanh": np.tanh}


def _np_linear_act(x, w, b, act):
    return _ACT[act](x @ w + b)


def _linear_act_samples(dtype):
    v = _v(dtype, 250, -1.0, 1.0)
    out = [Sample((v(3, 4), v(4, 5), v(5)), {"act": a}) for a in _ACT]
    return out + [Sample((v(2, 3, 4), v(4, 5), v(5)), {"act": "gelu"}, noncontig=True),  # w a transposed view
                  Sample((v(4), v(4, 3), v(3)), {"act": "relu"}),
                  Sample((v(3, 0), v(0, 2), v(2)), {"act": "silu"}),
                  Sample((v(0, 4), v(4, 2), v(2)), {"act": "tanh"})]


register(OpInfo("fused_linear_act", lambda x, w, b, act: _C.fused_linear_act(x, w, b, act), _np_linear_act, FLOATS,
                _linear_act_samples, tol=LOW_TOL))


_EW_NP = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
          "maximum": np.maximum, "minimum": np.minimum, "pow": np.power, "neg": np.negative, "exp": np.exp,
          "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda a: 1 / np.sqrt(a), "square": np.square,
          "reciprocal": np.reciprocal, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
          "sigmoid": lambda a: 1 / (1 + np.exp(-a)), "erf": _erf, "abs": np.abs, "relu": _ACT["relu"],
          "silu": _ACT["silu"], "gelu": _ACT["gelu"], "gelu_tanh": _ACT["gelu_tanh"], "expm1": np.expm1,
          "log1p": np.log1p}


def _code(name):
    return _C._fused_elementwise_code("gelu", name == "gelu_tanh") if name.startswith("gelu") else \
        _C._fused_elementwise_code(name)


def _program(steps):
    """steps: (op name, register a, register b or -1) -> the program's ints."""
    return [i for name, a, b in steps for i in (_code(name), a, b)]


def _fused_elementwise(*inputs, steps):
    return _C.fused_elementwise(list(inputs), _program(steps))


def _np_fused_elementwise(*inputs, steps):
    regs = list(inputs)
    for name, a, b in steps:
        regs.append(_EW_NP[name](regs[a]) if b < 0 else _EW_NP[name](regs[a], regs[b]))
    return np.broadcast_to(regs[-1], np.broadcast_shapes(*[np.shape(t) for t in inputs]))


def _every_code(n_in):
    """Each code once over registers 0 (values in [0.5, 2)) and 1, chained so every result is read."""
    steps, unary = [], [n for n in _EW_NP if n not in ("add", "subtract", "multiply", "divide", "maximum",
                                                           "minimum", "pow")]
    for n in ("add", "subtract", "multiply", "divide", "maximum", "minimum", "pow"):
        steps.append((n, 0, 1))
    for n in unary:
        steps.append((n, 0, -1))
    first = n_in
    acc = first
    for k in range(1, len(steps)):
        steps.append(("add", acc, first + k))
        acc = n_in + len(steps) - 1
    return steps


def _fused_elementwise_samples(dtype):
    pos = _v(dtype, 260, 0.5, 2.0)
    v = _v(dtype, 261, -1.0, 1.0)
    chain = [("multiply", 0, 1), ("add", 2, 3), ("tanh", 3, -1), ("subtract", 4, 0), ("exp", 5, -1)]
    # 130 instructions (more than a CUDA launch holds), and 18 inputs: one launch per instruction.
    long_chain = [("multiply", 0, 1)] + [("tanh", 2 + k, -1) if k % 2 else ("add", 2 + k, 0) for k in range(129)]
    many = [("add", 0, 1)] + [("add", 18 + k, k + 2) for k in range(16)] + [("tanh", 34, -1)]
    return [Sample((pos(3, 4), pos(4), pos()), {"steps": chain[:2] + [("gelu_tanh", 4, -1), ("sqrt", 1, -1),
                                                                        ("multiply", 5, 6)]}),
            Sample((v(2, 3), v(2, 3)), {"steps": chain[:1] + [("relu", 2, -1), ("gelu", 1, -1), ("add", 3, 4)]}),
            Sample((pos(2, 3, 4), pos(3, 1), v(4)), {"steps": [("multiply", 0, 1), ("add", 3, 2), ("silu", 4, -1)]},
                   noncontig=True),
            Sample((pos(3, 4), pos(3, 4)), {"steps": _every_code(2)}),
            Sample((v(3, 4), v(4)), {"steps": long_chain}),
            Sample(tuple(v(2, 3) for _ in range(18)), {"steps": many}),
            Sample((v(0, 3), v(3)), {"steps": [("add", 0, 1), ("exp", 2, -1)]})]


register(OpInfo("fused_elementwise", _fused_elementwise, _np_fused_elementwise, FLOATS, _fused_elementwise_samples,
                tol={"float16": (5e-2, 3e-2), "bfloat16": (3e-1, 1e-1)}))


_REDUCE_NP = (np.sum, np.mean, np.max, np.min)


def _fused_reduce(*inputs, steps, kind, axes, keepdim=False):
    return _C.fused_reduce(list(inputs), _program(steps), kind, axes, keepdim)


def _np_fused_reduce(*inputs, steps, kind, axes, keepdim=False):
    return _REDUCE_NP[kind](_np_fused_elementwise(*inputs, steps=steps), axis=tuple(axes), keepdims=keepdim)


def _fused_reduce_samples(dtype):
    pos = _v(dtype, 280, 0.5, 2.0)
    v = _v(dtype, 281, -1.0, 1.0)
    sq = [("subtract", 0, 1), ("square", 2, -1)]
    return [Sample((v(3, 4), v(3, 4)), {"steps": sq, "kind": 1, "axes": [0, 1]}),            # a mean squared error
            Sample((v(2, 3, 5), v(5)), {"steps": [("add", 0, 1), ("gelu", 2, -1)], "kind": 0, "axes": [2]}),
            Sample((pos(4, 3), pos(3)), {"steps": [("multiply", 0, 1), ("log", 2, -1)], "kind": 0, "axes": [0],
                                        "keepdim": True}, noncontig=True),
            Sample((v(2, 3, 4), v(3, 1)), {"steps": [("multiply", 0, 1), ("tanh", 2, -1)], "kind": 2,
                                           "axes": [0, 2]}),
            Sample((v(3, 4),), {"steps": [("exp", 0, -1)], "kind": 3, "axes": [1], "keepdim": True}),
            Sample((v(0, 3), v(3)), {"steps": [("add", 0, 1)], "kind": 0, "axes": [0]})]


register(OpInfo("fused_reduce", _fused_reduce, _np_fused_reduce, FLOATS, _fused_reduce_samples,
                tol={"float16": (5e-2, 3e-2), "bfloat16": (3e-1, 1e-1)}))


def _fused_attention(q, k, v, mask=None, scale=1.0, causal=False):
    return _C.fused_attention(q, k, v, mask, scale, causal)


def np_attention_probs(q, k, mask=None, scale=1.0, causal=False):
    """softmax(q k^T * scale + mask [+ causal -inf above the diagonal]) over the keys."""
    s = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        s = s + mask
    if causal:
        s = np.where(np.arange(k.shape[-2])[None, :] <= np.arange(q.shape[-2])[:, None], s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_attention_grads(q, k, v, g, mask=None, scale=1.0, causal=False):
    """(dq, dk, dv, dmask) of sum(attention(q, k, v) * g), in closed form (Note [attention backward])."""
    p = np_attention_probs(q, k, mask, scale, causal)
    dp = g @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True))
    return (ds * scale) @ k, np.swapaxes(ds * scale, -1, -2) @ q, np.swapaxes(p, -1, -2) @ g, ds


def _np_fused_attention(q, k, v, mask=None, scale=1.0, causal=False):
    if k.shape[-2] == 0:
        return np.zeros(q.shape[:-1] + v.shape[-1:])
    return np_attention_probs(q, k, mask, scale, causal) @ v


def _fused_attention_samples(dtype):
    v = _v(dtype, 270)
    return [Sample((v(2, 3, 4), v(2, 5, 4), v(2, 5, 6)), {"scale": 0.5}),
            Sample((v(2, 2, 3, 4), v(2, 2, 3, 4), v(2, 2, 3, 4), v(3, 3)), {"scale": 0.7}),
            Sample((v(2, 2, 3, 4), v(2, 2, 5, 4), v(2, 2, 5, 2), v(2, 1, 3, 5)), {"causal": True}),
            Sample((v(1, 5, 4), v(1, 3, 4), v(1, 3, 4)), {"causal": True}),
            Sample((v(3, 2, 4), v(3, 2, 4), v(3, 2, 4)), {"scale": 0.3}, noncontig=True),
            Sample((v(2, 2, 1100, 8), v(2, 2, 1100, 8), v(2, 2, 1100, 8)), {"scale": 0.35, "causal": True}),
            Sample((v(2, 3, 0), v(2, 4, 0), v(2, 4, 3))),
            Sample((v(2, 3, 4), v(2, 0, 4), v(2, 0, 5)))]


register(OpInfo("fused_attention", _fused_attention, _np_fused_attention, FLOATS, _fused_attention_samples,
                tol={"float16": (2e-2, 2e-2), "bfloat16": (1e-1, 5e-2)}))


def _fused_attention_grad(q, k, v, *rest, scale=1.0, causal=False, wrt=0):
    """rest: (mask, g) or (g,)."""
    fn = lambda a, b, c, *m: _C.fused_attention(a, b, c, m[0] if m else None, scale, causal)  # noqa: E731
    return _grads(fn, 3)(q, k, v, *rest, wrt=wrt)


def _np_fused_attention_grad(q, k, v, *rest, scale=1.0, causal=False, wrt=0):
    *mask, g = rest
    if q.shape[-2] == 0 or k.shape[-2] == 0:
        return np.zeros((q, k, v)[wrt].shape).ravel()
    return np_attention_grads(q, k, v, g, mask[0] if mask else None, scale, causal)[wrt].ravel()


def _fused_attention_grad_samples(dtype):
    """The forward's samples (but the longest) with an upstream gradient of the output's shape."""
    v = _v(dtype, 275)
    out = []
    for s in _fused_attention_samples(dtype):
        q, vv = s.args[0], s.args[2]
        if q.shape[-2] > 100:
            continue
        out.append(Sample(s.args + (v(*(q.shape[:-1] + vv.shape[-1:])),), s.kwargs, noncontig=s.noncontig))
    out.append(Sample((v(1, 150, 8), v(1, 150, 8), v(1, 150, 4), v(150, 150), v(1, 150, 4)),
                      {"scale": 0.4, "causal": True}))
    return _each_grad(out)


register(OpInfo("fused_attention_grad", _fused_attention_grad, _np_fused_attention_grad, FLOATS,
                _fused_attention_grad_samples, tol={"float16": (5e-2, 3e-2), "bfloat16": (2e-1, 5e-2)}))


def _np_sdpa(q, k, v, attn_mask=None, is_causal=False, scale=None):
    t = lambda a: np.swapaxes(a, 1, 2)  # noqa: E731 - [B, S, H, D] <-> [B, H, S, D]
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    return t(_np_fused_attention(t(q), t(k), t(v), attn_mask, scale, is_causal))


def _sdpa_samples(dtype):
    v = _v(dtype, 280)
    return [Sample((v(2, 3, 2, 4), v(2, 5, 2, 4), v(2, 5, 2, 4))),
            Sample((v(2, 4, 2, 8), v(2, 4, 2, 8), v(2, 4, 2, 8)), {"is_causal": True}),
            Sample((v(1, 3, 2, 4), v(1, 3, 2, 4), v(1, 3, 2, 4), v(1, 2, 3, 3)), {"scale": 0.5})]


register(OpInfo("nn.functional.scaled_dot_product_attention", F.scaled_dot_product_attention, _np_sdpa, FLOATS,
                _sdpa_samples, tol={"float16": (2e-2, 2e-2), "bfloat16": (1e-1, 5e-2)}))
