"""Op-database entries for the declared normalisation and adaptive pooling
functions of oar.nn.functional (src/ops/nn.toml) that opdb_core.py does not
cover: group_norm, instance_norm, rms_norm, local_response_norm and the
adaptive pools.

References are written here in NumPy from the published formulas; gradients are
checked in float64 against finite differences by test_opdb.py.
"""
import itertools
import math

import numpy as np

import oar
from opdb import ErrorInput, OpInfo, Sample, register

F = oar.nn.functional
REALF = ("float32", "float64")
NORM_TOL = {"float32": (1e-4, 1e-5)}


def _rng(seed):
    return np.random.default_rng(seed)


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.nn.functional.{name}]")


def _distinct(shape, seed):
    """Values spaced apart (no ties for max pooling), shuffled."""
    n = math.prod(shape)
    return (_rng(seed).permutation(n) * 0.1 - 0.05 * n).reshape(shape)


def _last(data_format):
    return data_format in ("NLC", "NHWC", "NDHWC")


# ---------------------------------------------------------------- normalisation

def _np_group_norm(x, num_groups, epsilon=1e-5, weight=None, bias=None, data_format="NCHW"):
    last = _last(data_format) and x.ndim > 2
    xc = np.moveaxis(x, -1, 1) if last else x
    n, c = xc.shape[:2]
    g = xc.reshape(n, num_groups, c // num_groups * math.prod(xc.shape[2:]))
    y = ((g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + epsilon)).reshape(xc.shape)
    shape = (1, c) + (1,) * (xc.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return np.moveaxis(y, 1, -1) if last else y


register(OpInfo("nn.functional.group_norm", F.group_norm, _np_group_norm, REALF,
                lambda d: [Sample((_rng(1).standard_normal((2, 4, 3)), 2)),
                           Sample((_rng(2).standard_normal((2, 6, 2, 2)), 3, 1e-3, _rng(3).uniform(0.5, 2, 6),
                                   _rng(4).standard_normal(6))),
                           Sample((_rng(5).standard_normal((2, 2, 3, 4)), 2), {"data_format": "NHWC"},
                                  noncontig=True),
                           Sample((_rng(6).standard_normal((3, 4)), np.int64(4)), {"data_format": "NC"}),
                           Sample((_rng(7).standard_normal((0, 4, 3)), 2), grad=False)],
                grad=True, gradgrad=True, tol=NORM_TOL,
                errors=lambda: [_err(lambda: F.group_norm(oar.ones([2, 3, 4]), 2), ValueError, "group_norm"),
                                _err(lambda: F.group_norm(oar.ones([2, 4, 4]), 2.0), ValueError, "group_norm"),
                                _err(lambda: F.group_norm(oar.ones([2, 4, 4]), 2, data_format="CHW"), ValueError,
                                     "group_norm")]))


def _np_instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                      momentum=0.9, eps=1e-5, data_format="NCHW"):
    last = _last(data_format)
    xc = np.moveaxis(x, -1, 1) if last else x
    c = xc.shape[1]
    shape = (1, c) + (1,) * (xc.ndim - 2)
    if use_input_stats:
        axes = tuple(range(2, xc.ndim))
        mean, var = xc.mean(axis=axes, keepdims=True), xc.var(axis=axes, keepdims=True)
    else:
        mean, var = np.asarray(running_mean).reshape(shape), np.asarray(running_var).reshape(shape)
    y = (xc - mean) / np.sqrt(var + eps)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return np.moveaxis(y, 1, -1) if last else y


def _instance_norm(x, running_mean=None, running_var=None, *rest, **kw):
    """running_mean, running_var: lists (buffers, not differentiable inputs)."""
    as_t = lambda v: None if v is None else oar.to_tensor(np.asarray(v)).astype(x.dtype)  # noqa: E731
    return F.instance_norm(x, as_t(running_mean), as_t(running_var), *rest, **kw)


register(OpInfo("nn.functional.instance_norm", _instance_norm, _np_instance_norm, REALF,
                lambda d: [Sample((_rng(11).standard_normal((2, 3, 4)),)),
                           Sample((_rng(12).standard_normal((2, 3, 2, 3)), None, None, _rng(13).uniform(0.5, 2, 3),
                                   _rng(14).standard_normal(3)), {"eps": 1e-3}),
                           Sample((_rng(15).standard_normal((1, 2, 3, 2)),), {"data_format": "NHWC"},
                                  noncontig=True),
                           Sample((_rng(16).standard_normal((2, 3, 4)), [0.1, -0.2, 0.3], [1.0, 2.0, 0.5]),
                                  {"use_input_stats": False})],
                grad=True, gradgrad=True, tol=NORM_TOL,
                errors=lambda: [_err(lambda: F.instance_norm(oar.ones([2, 3])), ValueError, "instance_norm"),
                                _err(lambda: F.instance_norm(oar.ones([2, 3, 4]), use_input_stats=False), ValueError,
                                     "instance_norm"),
                                _err(lambda: F.instance_norm(oar.ones([2, 3, 4]), [0.0] * 3, [1.0] * 3,
                                                             use_input_stats=False), TypeError, "instance_norm"),
                                _err(lambda: F.instance_norm(oar.ones([2, 3, 4]), data_format="NC"), ValueError,
                                     "instance_norm")]))


def _np_rms_norm(x, normalized_shape, weight=None, eps=1e-5):
    ns = [normalized_shape] if isinstance(normalized_shape, (int, np.integer)) else list(normalized_shape)
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return y if weight is None else y * weight


register(OpInfo("nn.functional.rms_norm", F.rms_norm, _np_rms_norm, ("float16", "bfloat16") + REALF,
                lambda d: [Sample((_rng(21).standard_normal((3, 4)), 4)),
                           Sample((_rng(22).standard_normal((2, 3, 4)), [3, 4], _rng(23).uniform(0.5, 2, (3, 4)))),
                           Sample((_rng(26).standard_normal((2, 2, 3, 2)), [2, 3, 2],
                                   _rng(27).uniform(0.5, 2, (2, 3, 2))), {"eps": 1e-6}),
                           Sample((_rng(24).standard_normal((2, 5)), (5,)), {"eps": 1e-3}, noncontig=True),
                           Sample((_rng(28).standard_normal((3, 2, 6)), [6], _rng(29).uniform(0.5, 2, 6)),
                                  noncontig=True),
                           Sample((_rng(25).standard_normal((0, 4)), [4]), grad=False)],
                grad=True, gradgrad=True, tol={**NORM_TOL, "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)},
                errors=lambda: [_err(lambda: F.rms_norm(oar.ones([2, 3]), [2, 3, 4]), ValueError, "rms_norm"),
                                _err(lambda: F.rms_norm(oar.ones([2, 3]), "3"), ValueError, "rms_norm"),
                                _err(lambda: F.rms_norm(oar.ones([2, 3]), [None]), TypeError, "rms_norm"),
                                _err(lambda: F.rms_norm(oar.ones([2, 3]), 3, oar.ones([2])), ValueError, "rms_norm"),
                                _err(lambda: F.rms_norm(oar.ones([2, 3], dtype="int32"), 3), TypeError,
                                     "rms_norm")]))


def _np_local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0, data_format="NCHW"):
    last = _last(data_format)
    xc = np.moveaxis(x, -1, 1) if last else x
    c, pre = xc.shape[1], (size - 1) // 2
    sq = np.stack([(xc[:, max(i - pre, 0):min(i - pre + size, c)] ** 2).sum(axis=1) for i in range(c)], axis=1)
    y = xc / (k + alpha / size * sq) ** beta
    return np.moveaxis(y, 1, -1) if last else y


register(OpInfo("nn.functional.local_response_norm", F.local_response_norm, _np_local_response_norm, REALF,
                lambda d: [Sample((_rng(31).standard_normal((2, 5, 3)), 3)),
                           Sample((_rng(32).standard_normal((1, 4, 2, 3)), 2), {"alpha": 0.5, "beta": 0.6, "k": 2.0}),
                           Sample((_rng(33).standard_normal((1, 2, 3, 6)), 5), {"alpha": 1.0, "data_format": "NHWC"},
                                  noncontig=True),
                           Sample((_rng(34).standard_normal((1, 3, 2, 2, 2)), 1), {"alpha": 0.3})],
                grad=True, gradgrad=True, tol=NORM_TOL,
                errors=lambda: [_err(lambda: F.local_response_norm(oar.ones([2, 3]), 3), ValueError,
                                     "local_response_norm"),
                                _err(lambda: F.local_response_norm(oar.ones([2, 3, 4]), 0), ValueError,
                                     "local_response_norm"),
                                _err(lambda: F.local_response_norm(oar.ones([2, 3, 4]), 3, data_format="NC"),
                                     ValueError, "local_response_norm")]))


# ---------------------------------------------------------------- adaptive pooling

def _np_adaptive(x, output_size, data_format=None, mode="avg", nd=2):
    last = data_format is not None and _last(data_format)
    xc = np.moveaxis(x, -1, 1) if last else x
    sp = xc.shape[2:]
    out = [output_size] * nd if isinstance(output_size, int) else \
        [s if o is None else o for o, s in zip(output_size, sp)]
    y = np.zeros(xc.shape[:2] + tuple(out))
    for o in itertools.product(*[range(m) for m in out]):
        sl = tuple(slice(o[i] * sp[i] // out[i], -(-(o[i] + 1) * sp[i] // out[i])) for i in range(nd))
        win = xc[(slice(None), slice(None)) + sl]
        axes = tuple(range(2, 2 + nd))
        y[(slice(None), slice(None)) + o] = win.max(axis=axes) if mode == "max" else win.mean(axis=axes)
    return np.moveaxis(y, 1, -1) if last else y


_SPATIAL = {1: (7,), 2: (5, 6), 3: (3, 4, 5)}
_LAST = {1: None, 2: "NHWC", 3: "NDHWC"}

for _nd in (1, 2, 3):
    for _mode in ("avg", "max"):
        _name = f"adaptive_{_mode}_pool{_nd}d"

        def _samples(d, nd=_nd, mode=_mode):
            sp = _SPATIAL[nd]
            x = lambda *s: _distinct(s, 30 + nd)  # noqa: E731
            out = [Sample((x(2, 2, *sp), 3)), Sample((x(1, 2, *sp), [2] * nd), noncontig=True),
                   Sample((x(1, 1, *sp), 1)), Sample((x(0, 2, *sp), 2), grad=False)]
            if nd > 1:
                out.append(Sample((x(1, 2, *sp), [None] + [2] * (nd - 1))))
            if mode == "avg" and _LAST[nd]:
                out.append(Sample((x(1, *sp, 2), 2), {"data_format": _LAST[nd]}))
            return out

        def _ref(x, output_size, data_format=None, nd=_nd, mode=_mode):
            return _np_adaptive(x, output_size, data_format, mode, nd)

        register(OpInfo(f"nn.functional.{_name}", getattr(F, _name), _ref, REALF, _samples,
                        grad=True, gradgrad=True,
                        errors=(lambda n, nd: lambda: [
                            _err(lambda: getattr(F, n)(oar.ones([1, 1] + [4] * nd), 0), ValueError, n),
                            _err(lambda: getattr(F, n)(oar.ones([1, 1] + [4] * nd), [2] * (nd + 1)), ValueError, n),
                            _err(lambda: getattr(F, n)(oar.ones([1, 4]), 2), ValueError, n)])(_name, _nd)))
