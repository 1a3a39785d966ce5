"""Op-database entries for the shape-manipulation functions declared in
src/ops/manip.toml: stacking, chunking, unbinding, tiling, repeating, rolling,
padding, triangles and diagonals (concat, split, flip and diagonal are in
opdb_core.py).

Functions that return a list of tensors are checked through the list joined
back in reverse order, so that every piece and its order count. The zero-size
samples of diag and diagflat give an output that records no gradient, so they
are left out of the gradient checks.
"""
import numpy as np

import oar
from opdb import REAL, ErrorInput, OpInfo, Sample, _values, register

ALL_REAL = ("bool",) + REAL


def _v(dtype, seed, lo=-2.0, hi=2.0):
    rng = np.random.default_rng(seed)
    return lambda *shape: _values(shape, dtype, lo, hi, rng)  # noqa: E731


def _err(fn, exc, api):
    return ErrorInput(fn, exc, f"[oar.{api}]")


def _stack(*xs, axis=0):
    return oar.stack(list(xs), axis=axis)


register(OpInfo("stack", _stack, lambda *xs, axis=0: np.stack(xs, axis=axis), ALL_REAL,
                lambda d: [Sample((_v(d, 300)(2, 3), _v(d, 301)(2, 3))),
                           Sample((_v(d, 300)(2, 3), _v(d, 301)(2, 3), _v(d, 302)(2, 3)), {"axis": -1}),
                           Sample((_v(d, 300)(2, 3, 2), _v(d, 301)(2, 3, 2)), {"axis": 1}, noncontig=True),
                           Sample((_v(d, 300)(), _v(d, 301)())), Sample((_v(d, 300)(0, 3),), {"axis": 2})],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.stack([oar.ones([2, 3]), oar.ones([3, 2])]), ValueError, "stack"),
                                _err(lambda: oar.stack([oar.ones([2, 3])], axis=3), IndexError, "stack"),
                                _err(lambda: oar.stack(oar.ones([2, 3])), TypeError, "stack"),
                                _err(lambda: oar.stack([oar.ones([2]), 1.0]), TypeError, "stack")]))


def _chunk(x, chunks, axis=0):
    return oar.concat(oar.chunk(x, chunks, axis=axis)[::-1], axis=axis)


register(OpInfo("chunk", _chunk,
                lambda x, chunks, axis=0: np.concatenate(np.split(x, chunks, axis=axis)[::-1], axis=axis),
                ALL_REAL,
                lambda d: [Sample((_v(d, 310)(6, 2), 3)), Sample((_v(d, 310)(2, 4), 2, 1)),
                           Sample((_v(d, 310)(2, 6, 2), 3, -2), noncontig=True), Sample((_v(d, 310)(4, 0), 2))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.chunk(oar.ones([2, 3]), 2, axis=1), ValueError, "chunk"),
                                _err(lambda: oar.chunk(oar.ones([2, 3]), 1, axis=2), IndexError, "chunk"),
                                _err(lambda: oar.chunk(oar.ones([2, 3]), 1.5), TypeError, "chunk")]))


def _unbind(x, axis=0):
    return oar.stack(oar.unbind(x, axis=axis)[::-1], axis=axis)


def _np_unbind(x, axis=0):
    return np.stack([np.take(x, i, axis=axis) for i in range(x.shape[axis])][::-1], axis=axis)


register(OpInfo("unbind", _unbind, _np_unbind, ALL_REAL,
                lambda d: [Sample((_v(d, 320)(3, 2),)), Sample((_v(d, 320)(2, 3), 1)),
                           Sample((_v(d, 320)(2, 3, 4), -1), noncontig=True), Sample((_v(d, 320)(2, 0, 3), 2))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.unbind(oar.ones([2, 3]), axis=2), IndexError, "unbind"),
                                _err(lambda: oar.unbind(oar.ones([])), ValueError, "unbind")]))

register(OpInfo("tile", oar.tile, np.tile, ALL_REAL,
                lambda d: [Sample((_v(d, 330)(2, 3), [2, 1])), Sample((_v(d, 330)(3,), [2, 2])),
                           Sample((_v(d, 330)(2, 3), 2)), Sample((_v(d, 330)(2, 3), (1, 2, 1)), noncontig=True),
                           Sample((_v(d, 330)(0, 3), [2, 1])), Sample((_v(d, 330)(), [3]))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.tile(oar.ones([2, 3]), [-1, 2]), ValueError, "tile"),
                                _err(lambda: oar.tile(oar.ones([2, 3]), None), TypeError, "tile"),
                                _err(lambda: oar.tile(oar.ones([2, 3]), [1.5]), TypeError, "tile")]))

register(OpInfo("repeat_interleave", oar.repeat_interleave,
                lambda x, repeats, axis=None: np.repeat(x, repeats, axis=axis), ALL_REAL,
                lambda d: [Sample((_v(d, 340)(2, 3), 2), {"axis": 1}), Sample((_v(d, 340)(2, 3), [1, 0, 2], 1)),
                           Sample((_v(d, 340)(4,), 3)), Sample((_v(d, 340)(2, 3), 2)),
                           Sample((_v(d, 340)(2, 3, 2), [2, 1], -1), noncontig=True),
                           Sample((_v(d, 340)(0, 3), 2), {"axis": 0})],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.repeat_interleave(oar.ones([2, 3]), [1, 2], axis=1), ValueError,
                                     "repeat_interleave"),
                                _err(lambda: oar.repeat_interleave(oar.ones([2, 3]), -1, axis=1), ValueError,
                                     "repeat_interleave"),
                                _err(lambda: oar.repeat_interleave(oar.ones([2, 3]), 2, axis=2), IndexError,
                                     "repeat_interleave")]))


def _np_roll(x, shifts, axis=None):
    return np.roll(x, shifts, axis=tuple(axis) if isinstance(axis, list) else axis)


register(OpInfo("roll", oar.roll, _np_roll, ALL_REAL,
                lambda d: [Sample((_v(d, 350)(4,), 1)), Sample((_v(d, 350)(2, 3), [1, -1], [0, 1])),
                           Sample((_v(d, 350)(2, 3), 2)), Sample((_v(d, 350)(2, 3, 4), -5), {"axis": -1},
                                                                 noncontig=True),
                           Sample((_v(d, 350)(0, 3), 1), {"axis": 0})],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.roll(oar.ones([2, 3]), 1, axis=3), IndexError, "roll"),
                                _err(lambda: oar.roll(oar.ones([2, 3]), [1, 2], axis=[0]), ValueError, "roll"),
                                _err(lambda: oar.roll(oar.ones([2, 3]), "1"), TypeError, "roll")]))


def _np_pad(x, pad, mode="constant", value=0.0, data_format=None, pad_from_left_axis=True):
    nd, k = x.ndim, len(pad) // 2
    if mode == "constant" and k == nd and pad_from_left_axis:
        axes = list(range(nd))
    else:
        last = nd - 2 if data_format in ("NLC", "NHWC", "NDHWC") else nd - 1
        axes = [last - i for i in range(k)]
    widths = [(0, 0)] * nd
    for i, a in enumerate(axes):
        widths[a] = (pad[2 * i], pad[2 * i + 1])
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    return np.pad(x, widths, np_mode, **({"constant_values": value} if mode == "constant" else {}))


register(OpInfo("pad", oar.pad, _np_pad, REAL,
                lambda d: [Sample((_v(d, 360)(2, 3), [1, 0, 2, 1])), Sample((_v(d, 360)(2, 3), [1, 2]), {"value": 3}),
                           Sample((_v(d, 360)(1, 2, 4), [2, 1]), {"mode": "reflect"}),
                           Sample((_v(d, 360)(1, 2, 3), [1, 2]), {"mode": "replicate"}, noncontig=True),
                           Sample((_v(d, 360)(1, 2, 3), [2, 1]), {"mode": "circular"}),
                           Sample((_v(d, 360)(1, 3, 2), [1, 1]), {"mode": "replicate", "data_format": "NLC"}),
                           Sample((_v(d, 360)(0, 3), [1, 1]))],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.pad(oar.ones([2, 3]), [1, 2, 3]), ValueError, "pad"),
                                _err(lambda: oar.pad(oar.ones([2]), [1, 1, 1, 1, 1, 1], mode="reflect"), ValueError,
                                     "pad"),
                                _err(lambda: oar.pad(oar.ones([2, 3]), [1, 1], value="x"), TypeError, "pad"),
                                _err(lambda: oar.pad(oar.ones([2, 3]), None), TypeError, "pad")]))


def _triangle(name, np_fn):
    fn = getattr(oar, name)
    register(OpInfo(name, fn, lambda x, diagonal=0: np_fn(x, diagonal), ALL_REAL,
                    lambda d: [Sample((_v(d, 370)(3, 4),)), Sample((_v(d, 370)(3, 4), 1)),
                               Sample((_v(d, 370)(2, 3, 4),), {"diagonal": -1}, noncontig=True),
                               Sample((_v(d, 370)(0, 3),))],
                    grad=True, gradgrad=True,
                    errors=lambda: [_err(lambda: fn(oar.ones([3])), ValueError, name),
                                    _err(lambda: fn(oar.ones([2, 3]), 0.5), TypeError, name)]))


_triangle("tril", np.tril)
_triangle("triu", np.triu)


def _np_diag(x, offset=0, padding_value=0):
    if x.ndim == 2:
        return np.diag(x, offset)
    mask = np.diag(np.ones(x.shape, dtype=bool), offset)
    return np.where(mask, np.diag(x, offset), np.asarray(padding_value, dtype=x.dtype))


register(OpInfo("diag", oar.diag, _np_diag, ALL_REAL,
                lambda d: [Sample((_v(d, 380)(3),)), Sample((_v(d, 380)(3), 1)), Sample((_v(d, 380)(3), -2), {
                    "padding_value": 1}), Sample((_v(d, 380)(3, 4),), {"offset": 1}),
                           Sample((_v(d, 380)(3, 4), -1), noncontig=True), Sample((_v(d, 380)(0),), grad=False)],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.diag(oar.ones([2, 2, 2])), ValueError, "diag")]))

register(OpInfo("diagflat", oar.diagflat, lambda x, offset=0: np.diagflat(x, offset), ALL_REAL,
                lambda d: [Sample((_v(d, 390)(3),)), Sample((_v(d, 390)(2, 2), 1)),
                           Sample((_v(d, 390)(2, 3), -2), noncontig=True), Sample((_v(d, 390)(0, 2),), grad=False)],
                grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.diagflat(oar.ones([2]), offset=[1]), TypeError, "diagflat")]))
