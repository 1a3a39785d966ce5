"""Op-database entries for the shape, joining, splitting, diagonal, scatter and in-place
functions of python/oar/_shape_ext.py and _shape_index.py.

References are NumPy (written here, index by index where NumPy has no such
function); gradients are checked in float64 against finite differences by
test_opdb.py. Index arguments are passed as lists (the harness would cast
NumPy arrays to the dtype under test) and turned into int64 tensors inside the op.
"""
import itertools

import numpy as np

import oar
from opdb import ALL, COMPLEX, FLOATS, NUMERIC, ErrorInput, OpInfo, Sample, register

NOBOOL = NUMERIC  # arithmetic (x + 0) makes the non-leaf copies used by in-place entries
SIGNED = ("int8", "int16", "int32", "int64") + FLOATS


def _rng(seed):
    return np.random.default_rng(seed)


def _v(shape, seed=0, lo=-3.0, hi=3.0):
    return _rng(seed).uniform(lo, hi, size=shape)


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.{name}]")


def _idx(v):
    return oar.to_tensor(np.asarray(v, dtype=np.int64))


def _copy(x):
    """A non-leaf copy of x, so in-place ops may write into it while gradients reach x."""
    return x + 0


def _parts(parts):
    """A list of tensors as one tensor: each part scaled by its position + 1 and flattened."""
    return oar.concat([oar.flatten(p * (k + 1)) for k, p in enumerate(parts)]) if parts else oar.zeros([0])


def _np_parts(parts):
    return np.concatenate([p.ravel() * (k + 1) for k, p in enumerate(parts)])


def _entry(name, op, ref, dtypes, samples, grad=True, errors=None, **kw):
    register(OpInfo(name, op, ref, dtypes, samples, grad=grad, errors=errors or (lambda: []), **kw))


def _one(*shapes_kwargs, seed=0, noncontig_last=True):
    """Samples of one tensor argument: (shape, kwargs) pairs, the last one also non-contiguous."""
    def gen(dtype):
        out = [Sample((_v(s, seed + i),), dict(k)) for i, (s, k) in enumerate(shapes_kwargs)]
        if noncontig_last:
            s, k = shapes_kwargs[-1]
            out.append(Sample((_v(s, seed + 99),), dict(k), noncontig=True))
        return out
    return gen


# ---------------------------------------------------------------- dimensions and conversions

_entry("atleast_3d", oar.atleast_3d, np.atleast_3d, ALL, _one(((), {}), ((4,), {}), ((2, 3), {}), ((2, 3, 4), {})),
       errors=lambda: [_err(lambda: oar.atleast_3d(), ValueError, "atleast_3d")])
_entry("atleast_2d", oar.atleast_2d, np.atleast_2d, ALL, _one(((), {}), ((4,), {}), ((2, 3), {})))
_entry("atleast_1d", oar.atleast_1d, np.atleast_1d, ALL, _one(((), {}), ((2, 3), {})))

_entry("as_complex", oar.as_complex, lambda a: a[..., 0] + 1j * a[..., 1], ("float32", "float64"),
       _one(((2,), {}), ((3, 2), {}), ((0, 2), {}), ((2, 3, 2), {})),
       out_dtype=lambda d: {"float32": "complex64", "float64": "complex128"}[d],
       errors=lambda: [_err(lambda: oar.as_complex(oar.ones([2, 3])), ValueError, "as_complex"),
                       _err(lambda: oar.as_complex(oar.ones([2], "int32")), TypeError, "as_complex")])
_entry("as_real", oar.as_real, lambda a: np.stack([a.real, a.imag], -1), COMPLEX,
       _one(((), {}), ((3,), {}), ((2, 3), {})), grad=False, complex_grad=True,
       out_dtype=lambda d: {"complex64": "float32", "complex128": "float64"}[d],
       errors=lambda: [_err(lambda: oar.as_real(oar.ones([2])), TypeError, "as_real")])


def _as_strided_ref(x, shape, stride, offset=0):
    flat = np.ascontiguousarray(x).reshape(-1)[offset:]
    return np.lib.stride_tricks.as_strided(flat, shape, [st * flat.itemsize for st in stride]).copy()


def _as_strided_samples(dtype):
    # The offset is given here in elements; the op passes it to oar in bytes, as Paddle counts it.
    return [Sample((_v((2, 3), 1), [3, 2], [1, 3])), Sample((_v((12,), 2), [2, 2], [4, 1], 2)),
            Sample((_v((2, 3), 3), [2, 3], [0, 1])), Sample((_v((3, 4), 4), [4, 2], [1, 5]), noncontig=True)]


_entry("as_strided", lambda x, sh, st, off=0: oar.as_strided(x, sh, st, off * x.element_size()), _as_strided_ref,
       ALL, _as_strided_samples,
       errors=lambda: [_err(lambda: oar.as_strided(oar.ones([4]), [3], [2]), ValueError, "as_strided"),
                       _err(lambda: oar.as_strided(oar.ones([4]), [2], [1], 3), ValueError, "as_strided"),
                       _err(lambda: oar.as_strided(oar.ones([4]), [2, 2], [1]), ValueError, "as_strided")])

_entry("assign", oar.assign, np.copy, ALL, _one(((), {}), ((2, 3), {})),
       errors=lambda: [_err(lambda: oar.assign("abc"), TypeError, "assign")])
_entry("view", oar.view, lambda x, s: x.reshape(s), ALL, lambda d: [Sample((_v((2, 6)), [3, -1])),
                                                                       Sample((_v((4,)), [2, 2, 1]))],
       errors=lambda: [_err(lambda: oar.view(oar.ones([2, 3]), [4]), ValueError, "view"),
                       _err(lambda: oar.view(oar.ones([3]), "float64"), ValueError, "view")])
_entry("view_as", lambda x, y: oar.view_as(x, y), lambda x, y: x.reshape(y.shape), ALL,
       lambda d: [Sample((_v((2, 6)), _v((4, 3))))])
_entry("expand_as", oar.expand_as, lambda x, y: np.broadcast_to(x, y.shape), ALL,
       lambda d: [Sample((_v((3,)), _v((2, 3)))), Sample((_v((2, 1)), _v((2, 4))), noncontig=True),
                  Sample((_v(()), _v((0, 2))))],
       errors=lambda: [_err(lambda: oar.expand_as(oar.ones([3]), oar.ones([2, 4])), ValueError, "expand_as")])
_entry("broadcast_tensors", lambda a, b: oar.stack(oar.broadcast_tensors([a, b])),
       lambda a, b: np.stack(np.broadcast_arrays(a, b)), ALL,
       lambda d: [Sample((_v((2, 1)), _v((3,)))), Sample((_v(()), _v((2, 2))))],
       errors=lambda: [_err(lambda: oar.broadcast_tensors([oar.ones([2]), oar.ones([3])]), ValueError,
                            "broadcast_tensors")])

# ---------------------------------------------------------------- joining and splitting


def _pair(*shape_pairs, axis_kw=None):
    def gen(dtype):
        out = [Sample((_v(a, 1), _v(b, 2)), dict(axis_kw or {})) for a, b in shape_pairs]
        a, b = shape_pairs[0]
        out.append(Sample((_v(a, 3), _v(b, 4)), dict(axis_kw or {}), noncontig=True))
        return out
    return gen


def _join(name, ref, pairs, **kw):
    fn = getattr(oar, name)
    _entry(name, lambda a, b, **k: fn([a, b], **k), ref, ALL, _pair(*pairs, **kw),
           errors=lambda: [_err(lambda: fn(oar.ones([2])), TypeError, name),
                           _err(lambda: fn([oar.ones([2, 3]), oar.ones([3, 3, 3])]), ValueError, name)])


_join("cat", lambda a, b, axis=0: np.concatenate([a, b], axis), [((2, 3), (2, 2))], axis_kw={"axis": 1})
_join("concatenate", lambda a, b: np.concatenate([a, b]), [((2, 3), (1, 3))])
_join("hstack", lambda a, b: np.hstack([a, b]), [((2, 3), (2, 2)), ((3,), (2,)), ((), ())])
_join("vstack", lambda a, b: np.vstack([a, b]), [((2, 3), (1, 3)), ((3,), (3,))])
_join("row_stack", lambda a, b: np.vstack([a, b]), [((2, 3), (3,))])
_join("dstack", lambda a, b: np.dstack([a, b]), [((2, 3), (2, 3)), ((3,), (3,)), ((2, 2, 1), (2, 2, 2))])
_join("column_stack", lambda a, b: np.column_stack([a, b]), [((3,), (3, 2)), ((3, 2), (3, 2))])
_entry("block_diag", lambda a, b, c: oar.block_diag([a, b, c]),
       lambda a, b, c: _np_block_diag([np.atleast_2d(a), np.atleast_2d(b), np.atleast_2d(c)]), ALL,
       lambda d: [Sample((_v((2, 3), 1), _v((1,), 2), _v((), 3))), Sample((_v((2, 2), 4), _v((3, 1), 5),
                                                                            _v((0, 2), 6)))],
       errors=lambda: [_err(lambda: oar.block_diag([oar.ones([2, 2, 2])]), ValueError, "block_diag"),
                       _err(lambda: oar.block_diag([oar.ones([2]), oar.ones([2], "int64")]), TypeError,
                            "block_diag")])


def _np_block_diag(blocks):
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype=blocks[0].dtype)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def _split_entry(name, ref, samples, errors):
    fn = getattr(oar, name)
    _entry(name, lambda x, *a, **k: _parts(fn(x, *a, **k)), lambda x, *a, **k: _np_parts(ref(x, *a, **k)),
           SIGNED, samples, errors=errors)


def _np_tensor_split(x, n, axis=0):
    return np.array_split(x, n, axis) if isinstance(n, int) else np.split(x, n, axis)


_split_entry("tensor_split", _np_tensor_split,
             lambda d: [Sample((_v((7,)), 3)), Sample((_v((2, 5)), [1, 3]), {"axis": 1}),
                        Sample((_v((6,)), [4, 2, 9])), Sample((_v((3, 4)), 4), {"axis": -1}, noncontig=True)],
             lambda: [_err(lambda: oar.tensor_split(oar.ones([3]), 0), ValueError, "tensor_split"),
                      _err(lambda: oar.tensor_split(oar.ones([]), 1), ValueError, "tensor_split"),
                      _err(lambda: oar.tensor_split(oar.ones([3]), 1, axis=1), IndexError, "tensor_split")])
_split_entry("hsplit", lambda x, n: np.array_split(x, n, 1 if x.ndim > 1 else 0) if isinstance(n, int)
             else np.hsplit(x, n), lambda d: [Sample((_v((2, 5)), 2)), Sample((_v((4,)), [1])),
                                              Sample((_v((3, 4)), [1, 3]), noncontig=True)],
             lambda: [_err(lambda: oar.hsplit(oar.ones([]), 1), ValueError, "hsplit")])
_split_entry("vsplit", lambda x, n: np.array_split(x, n, 0) if isinstance(n, int) else np.vsplit(x, n),
             lambda d: [Sample((_v((5, 2)), 2)), Sample((_v((4, 3)), [1, 2]), noncontig=True)],
             lambda: [_err(lambda: oar.vsplit(oar.ones([4]), 2), ValueError, "vsplit")])
_split_entry("dsplit", lambda x, n: np.array_split(x, n, 2) if isinstance(n, int) else np.dsplit(x, n),
             lambda d: [Sample((_v((1, 2, 4)), 2)), Sample((_v((2, 2, 3)), [1]), noncontig=True)],
             lambda: [_err(lambda: oar.dsplit(oar.ones([2, 2]), 2), ValueError, "dsplit")])
_split_entry("unstack", lambda x, axis=0: [np.take(x, i, axis) for i in range(x.shape[axis])],
             lambda d: [Sample((_v((3, 2)),)), Sample((_v((2, 3, 2)),), {"axis": -2}, noncontig=True)],
             lambda: [_err(lambda: oar.unstack(oar.ones([2, 3]), 1, 2), ValueError, "unstack")])

_entry("cartesian_prod", lambda a, b: oar.cartesian_prod([a, b]),
       lambda a, b: np.stack(np.meshgrid(a, b, indexing="ij"), -1).reshape(-1, 2), ALL,
       lambda d: [Sample((_v((2,), 1), _v((3,), 2))), Sample((_v((0,), 1), _v((3,), 2)))],
       errors=lambda: [_err(lambda: oar.cartesian_prod([oar.ones([2, 2])]), ValueError, "cartesian_prod")])


def _np_combinations(x, r=2, with_replacement=False):
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    return np.array([[x[i] for i in c] for c in gen(range(len(x)), r)], dtype=x.dtype).reshape(-1, r)


_entry("combinations", oar.combinations, _np_combinations, ALL,
       lambda d: [Sample((_v((4,)),)), Sample((_v((3,)), 3)), Sample((_v((3,)), 2, True)),
                  Sample((_v((2,)), 3)), Sample((_v((4,)), 2), noncontig=True)],
       errors=lambda: [_err(lambda: oar.combinations(oar.ones([2, 2])), ValueError, "combinations"),
                       _err(lambda: oar.combinations(oar.ones([2]), -1), ValueError, "combinations")])

# ---------------------------------------------------------------- axes

_entry("matrix_transpose", oar.matrix_transpose, lambda x: np.swapaxes(x, -1, -2), ALL,
       _one(((2, 3), {}), ((2, 3, 4), {})),
       errors=lambda: [_err(lambda: oar.matrix_transpose(oar.ones([3])), ValueError, "matrix_transpose")])
_entry("moveaxis", oar.moveaxis, np.moveaxis, ALL,
       lambda d: [Sample((_v((2, 3, 4)), 0, -1)), Sample((_v((2, 3, 4)), [0, 1], [2, 0])),
                  Sample((_v((2, 3, 4)), -1, 0), noncontig=True)],
       errors=lambda: [_err(lambda: oar.moveaxis(oar.ones([2, 3]), [0, 0], [0, 1]), ValueError, "moveaxis"),
                       _err(lambda: oar.moveaxis(oar.ones([2, 3]), 2, 0), IndexError, "moveaxis"),
                       _err(lambda: oar.moveaxis(oar.ones([2, 3]), [0], [0, 1]), ValueError, "moveaxis")])
_entry("swapaxes", oar.swapaxes, lambda x, a, b=None: np.swapaxes(x, a, b) if b is not None else np.transpose(x, a),
       ALL, lambda d: [Sample((_v((2, 3, 4)), 0, 2)), Sample((_v((2, 3, 4)), [1, 2, 0])),
                       Sample((_v((2, 3)), -1, 0), noncontig=True)],
       errors=lambda: [_err(lambda: oar.swapaxes(oar.ones([2, 3]), 0, 5), IndexError, "swapaxes")])
_entry("swapdims", oar.swapdims, np.swapaxes, ALL, lambda d: [Sample((_v((2, 3, 4)), 1, 2))])
_entry("permute", oar.permute, np.transpose, ALL,
       lambda d: [Sample((_v((2, 3, 4)), [2, 0, 1])), Sample((_v((2, 3)), [1, 0]), noncontig=True)],
       errors=lambda: [_err(lambda: oar.permute(oar.ones([2, 3]), [0, 0]), ValueError, "permute")])
_entry("narrow", oar.narrow, lambda x, d, s, n: np.take(x, range(s % x.shape[d], s % x.shape[d] + n), d), ALL,
       lambda d: [Sample((_v((4, 3)), 0, 1, 2)), Sample((_v((2, 5)), -1, -3, 3)),
                  Sample((_v((3, 4)), 1, 0, 0), noncontig=True)],
       errors=lambda: [_err(lambda: oar.narrow(oar.ones([3]), 0, 2, 2), ValueError, "narrow"),
                       _err(lambda: oar.narrow(oar.ones([3]), 1, 0, 1), IndexError, "narrow")])
_entry("ravel", oar.ravel, np.ravel, ALL, _one(((), {}), ((2, 3), {})))
_entry("reverse", oar.reverse, np.flip, ALL,
       lambda d: [Sample((_v((2, 3)), 0)), Sample((_v((2, 3, 2)), [0, 2]), noncontig=True)])


def _rot90_ref(x, k=1, axes=(0, 1)):
    return np.rot90(x, k, axes)


_entry("rot90", oar.rot90, _rot90_ref, ALL,
       lambda d: [Sample((_v((2, 3)),)), Sample((_v((2, 3)), 2)), Sample((_v((2, 3)), -1)),
                  Sample((_v((2, 3, 4)), 3, [2, 0])), Sample((_v((3, 4)), 5), noncontig=True)],
       errors=lambda: [_err(lambda: oar.rot90(oar.ones([3])), ValueError, "rot90"),
                       _err(lambda: oar.rot90(oar.ones([3, 3]), 1, [0, 0]), ValueError, "rot90"),
                       _err(lambda: oar.rot90(oar.ones([3, 3]), 1, [0]), ValueError, "rot90")])
def _unflatten_ref(x, axis, shape):
    axis %= x.ndim
    return x.reshape(x.shape[:axis] + tuple(shape) + x.shape[axis + 1:])


_entry("unflatten", oar.unflatten, _unflatten_ref, ALL,
       lambda d: [Sample((_v((2, 6)), 1, [2, 3])), Sample((_v((6, 2)), 0, [-1, 2]), noncontig=True)],
       errors=lambda: [_err(lambda: oar.unflatten(oar.ones([6]), 0, [4, -1]), ValueError, "unflatten"),
                       _err(lambda: oar.unflatten(oar.ones([6]), 0, [-1, -1]), ValueError, "unflatten")])


def _unfold_ref(x, axis, size, step):
    if x.ndim == 0:
        return x.reshape(1)
    axis %= x.ndim
    w = np.lib.stride_tricks.sliding_window_view(x, size, axis)
    return np.take(w, range(0, w.shape[axis], step), axis)


_entry("unfold", oar.unfold, _unfold_ref, ALL,
       lambda d: [Sample((_v((7,)), 0, 3, 2)), Sample((_v((2, 5)), 1, 2, 1)), Sample((_v((4, 3)), 0, 4, 3)),
                  Sample((_v(()), 0, 1, 1)), Sample((_v((4, 3)), -2, 2, 2), noncontig=True)],
       errors=lambda: [_err(lambda: oar.unfold(oar.ones([3]), 0, 4, 1), ValueError, "unfold"),
                       _err(lambda: oar.unfold(oar.ones([3]), 0, 2, 0), ValueError, "unfold")])
_entry("crop", oar.crop,
       lambda x, shape=None, offsets=None: x[tuple(slice(o, o + (n - o if s == -1 else s)) for n, s, o in
                                                  zip(x.shape, shape, offsets))],
       ALL, lambda d: [Sample((_v((3, 4)), [2, 2], [1, 1])), Sample((_v((3, 4)), [-1, 1], [2, 3]), noncontig=True)],
       errors=lambda: [_err(lambda: oar.crop(oar.ones([2, 3]), [2, 2], [1, 1]), ValueError, "crop"),
                       _err(lambda: oar.crop(oar.ones([2, 3]), [2]), ValueError, "crop")])

# ---------------------------------------------------------------- diagonals and scatters


def _diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1]
    m = n + abs(offset)
    out = np.zeros(x.shape[:-1] + (m, m), dtype=x.dtype)
    for k in range(n):
        i, j = (k, k + offset) if offset >= 0 else (k - offset, k)
        out[..., i, j] = x[..., k]
    nd = x.ndim + 1
    d1, d2 = dim1 % nd, dim2 % nd
    batch = iter(range(nd - 2))
    perm = [nd - 2 if p == d1 else nd - 1 if p == d2 else next(batch) for p in range(nd)]
    return np.transpose(out, perm)


_entry("diag_embed", oar.diag_embed, _diag_embed_ref, ALL,
       lambda d: [Sample((_v((3,)),)), Sample((_v((2, 3)), 1)), Sample((_v((2, 3)), -2, 0, 2)),
                  Sample((_v((2, 2)), 0, 2, 0), noncontig=True)],
       errors=lambda: [_err(lambda: oar.diag_embed(oar.ones([2]), 0, 0, 0), ValueError, "diag_embed"),
                       _err(lambda: oar.diag_embed(oar.ones([])), ValueError, "diag_embed")])


def _diag_scatter_ref(x, y, offset=0, axis1=0, axis2=1):
    out = x.copy()
    moved = np.moveaxis(out, (axis1, axis2), (-2, -1))  # a view of out
    n1, n2 = moved.shape[-2:]
    for k in range(y.shape[-1]):
        i, j = (k, k + offset) if offset >= 0 else (k - offset, k)
        if i < n1 and j < n2:
            moved[..., i, j] = y[..., k]
    return out


def _diag_scatter_samples(dtype):
    return [Sample((_v((3, 3), 1), _v((3,), 2))), Sample((_v((2, 4), 1), _v((2,), 2)), {"offset": 2}),
            Sample((_v((3, 2), 3), _v((2,), 4)), {"offset": -1}),
            Sample((_v((2, 3, 3), 5), _v((3, 2), 6)), {"axis1": 1, "axis2": 0}),
            Sample((_v((3, 4), 7), _v((3,), 8)), noncontig=True)]


_entry("diagonal_scatter", oar.diagonal_scatter, _diag_scatter_ref, ALL, _diag_scatter_samples,
       errors=lambda: [_err(lambda: oar.diagonal_scatter(oar.ones([3, 3]), oar.ones([2])), ValueError,
                            "diagonal_scatter"),
                       _err(lambda: oar.diagonal_scatter(oar.ones([3]), oar.ones([1])), ValueError,
                            "diagonal_scatter"),
                       _err(lambda: oar.diagonal_scatter(oar.ones([3, 3]), oar.ones([3]), 0, 1, 1), ValueError,
                            "diagonal_scatter")])
_entry("Tensor.fill_diagonal_tensor", lambda x, y, **k: x.fill_diagonal_tensor(y, **k),
       lambda x, y, offset=0, dim1=0, dim2=1: _diag_scatter_ref(x, y, offset, dim1, dim2), ALL,
       lambda d: [Sample((_v((2, 3), 1), _v((2,), 2))), Sample((_v((2, 2, 3), 1), _v((3, 2), 2)), {"dim2": 1})])
_entry("Tensor.fill_diagonal_tensor_", lambda x, y, **k: _copy(x).fill_diagonal_tensor_(y, **k),
       lambda x, y, offset=0, dim1=0, dim2=1: _diag_scatter_ref(x, y, offset, dim1, dim2), NOBOOL,
       lambda d: [Sample((_v((3, 2), 1), _v((2,), 2)), {"offset": -1})])


def _select_scatter_ref(x, v, axis, index):
    out = x.copy()
    idx = [slice(None)] * x.ndim
    idx[axis] = index
    out[tuple(idx)] = v
    return out


_entry("select_scatter", oar.select_scatter, _select_scatter_ref, ALL,
       lambda d: [Sample((_v((2, 3), 1), _v((2,), 2), 1, 1)), Sample((_v((2, 3, 2), 3), _v((2, 2), 4), 1, -1)),
                  Sample((_v((3, 4), 5), _v((4,), 6), 0, 2), noncontig=True)],
       errors=lambda: [_err(lambda: oar.select_scatter(oar.ones([2, 3]), oar.ones([3]), 1, 0), ValueError,
                            "select_scatter"),
                       _err(lambda: oar.select_scatter(oar.ones([2, 3]), oar.ones([2]), 1, 3), IndexError,
                            "select_scatter")])


def _index_fill_ref(x, index, axis, value):
    out = x.copy()
    idx = [slice(None)] * x.ndim
    idx[axis] = np.asarray(index, dtype=np.int64)
    out[tuple(idx)] = value
    return out


_entry("index_fill", lambda x, i, a, v: oar.index_fill(x, _idx(i), a, v), _index_fill_ref, ALL,
       lambda d: [Sample((_v((2, 3)), [0, 2], 1, 1)), Sample((_v((3, 2)), [-1], 0, 0)),
                  Sample((_v((3, 4)), [], 1, 1), noncontig=True)],
       errors=lambda: [_err(lambda: oar.index_fill(oar.ones([2]), _idx([2]), 0, 1.0), IndexError, "index_fill"),
                       _err(lambda: oar.index_fill(oar.ones([2]), oar.ones([1]), 0, 1.0), TypeError,
                            "index_fill")])
_entry("index_fill_", lambda x, i, a, v: oar.index_fill_(_copy(x), _idx(i), a, v), _index_fill_ref, NOBOOL,
       lambda d: [Sample((_v((2, 3)), [1], 1, 2))])


def _index_put_ref(x, idx, v, accumulate=False):
    out = x.copy()
    index = tuple(np.asarray(i) for i in idx)
    if accumulate:
        np.add.at(out, index, v)
    else:
        out[index] = v
    return out


def _index_put_samples(dtype):
    return [Sample((_v((3, 3), 1), ([0, 2], [1, 1]), _v((2,), 2))),
            Sample((_v((3, 2), 3), ([2, 0],), _v((2,), 4))),
            Sample((_v((4,), 5), ([1, 1, 3],), _v((3,), 6)), {"accumulate": True}),
            Sample((_v((3,), 7), ([True, False, True],), _v((), 8))),
            Sample((_v((3, 4), 9), ([1],), _v((4,), 10)), noncontig=True)]


def _index_put_op(fn, copy=False):
    def op(x, idx, v, **k):
        ts = tuple(oar.to_tensor(np.asarray(i)) for i in idx)
        return fn(_copy(x) if copy else x, ts, v, **k)
    return op


_entry("index_put", _index_put_op(oar.index_put), _index_put_ref, NOBOOL, _index_put_samples,
       errors=lambda: [_err(lambda: oar.index_put(oar.ones([2]), _idx([0]), oar.ones([1])), TypeError, "index_put"),
                       _err(lambda: oar.index_put(oar.ones([2]), (_idx([5]),), oar.ones([1])), IndexError,
                            "index_put"),
                       _err(lambda: oar.index_put(oar.ones([2, 2]), (_idx([0]),), oar.ones([3])), ValueError,
                            "index_put")])
_entry("index_put_", _index_put_op(oar.index_put_, True), _index_put_ref, NOBOOL, _index_put_samples)


def _take_along_rows(x, index):
    return np.take_along_axis(x, np.asarray(index), 1)


_entry("index_sample", lambda x, i: oar.index_sample(x, _idx(i)), _take_along_rows, ALL,
       lambda d: [Sample((_v((2, 3)), [[0, 2, 2], [1, 0, 0]])), Sample((_v((3, 4)), [[3], [0], [1]]), noncontig=True)],
       errors=lambda: [_err(lambda: oar.index_sample(oar.ones([3]), _idx([[0]])), ValueError, "index_sample"),
                       _err(lambda: oar.index_sample(oar.ones([2, 3]), _idx([[0]])), ValueError, "index_sample")])


def _masked_scatter_ref(x, mask, value):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    out = np.broadcast_to(x, shape).copy()
    m = np.broadcast_to(mask, shape)
    out[m] = value.ravel()[:int(m.sum())]
    return out


def _masked_scatter_samples(dtype):
    rng = _rng(3)
    return [Sample((_v((3, 4), 1), rng.random((3, 4)) > 0.5, _v((12,), 2))),
            Sample((_v((2, 3), 3), np.array([True, False, True]), _v((7,), 4))),
            Sample((_v((3,), 5), np.array([[True], [False]]), _v((3,), 6))),
            Sample((_v((3, 4), 7), rng.random((3, 4)) > 0.5, _v((12,), 8)), noncontig=True)]


_entry("masked_scatter", oar.masked_scatter, _masked_scatter_ref, ALL, _masked_scatter_samples,
       errors=lambda: [_err(lambda: oar.masked_scatter(oar.ones([3]), oar.ones([3]) > 0, oar.ones([2])),
                            ValueError, "masked_scatter"),
                       _err(lambda: oar.masked_scatter(oar.ones([3]), oar.ones([3]), oar.ones([3])), TypeError,
                            "masked_scatter")])
_entry("masked_scatter_", lambda x, m, v: oar.masked_scatter_(_copy(x), m, v), _masked_scatter_ref, NOBOOL,
       lambda d: [Sample((_v((2, 3), 3), np.array([True, False, True]), _v((7,), 4)))])


def _scatter_ref(x, index, src, axis, reduce):
    out = x.copy()
    index = np.asarray(index)
    for pos in np.ndindex(*index.shape):
        tgt = list(pos)
        tgt[axis] = index[pos]
        tgt = tuple(tgt)
        out[tgt] = reduce(out[tgt], src[pos])
    return out


def _scatter_samples(dtype):
    return [Sample((_v((3,), 1), 0, [0, 0, 2], _v((3,), 2))),
            Sample((_v((2, 3), 3), 1, [[0, 0], [2, 1]], _v((2, 2), 4))),
            Sample((_v((2, 3), 5), 1, [[0], [2]], _v((2, 3), 6))),
            Sample((_v((3, 4), 7), 0, [[2, 1, 0, 1]], _v((3, 4), 8)), noncontig=True)]


_entry("scatter_add", lambda x, d, i, s: oar.scatter_add(x, d, _idx(i), s),
       lambda x, d, i, s: _scatter_ref(x, i, s, d, np.add), NOBOOL, _scatter_samples,
       errors=lambda: [_err(lambda: oar.scatter_add(oar.ones([3]), 0, _idx([3]), oar.ones([1])), IndexError,
                            "scatter_add")])
_entry("scatter_add_", lambda x, d, i, s: oar.scatter_add_(_copy(x), d, _idx(i), s),
       lambda x, d, i, s: _scatter_ref(x, i, s, d, np.add), NOBOOL, _scatter_samples)
_entry("scatter_reduce", lambda x, d, i, s: oar.scatter_reduce(x, d, _idx(i), s, "prod"),
       lambda x, d, i, s: _scatter_ref(x, i, s, d, np.multiply), FLOATS + ("int32", "int64"), _scatter_samples,
       grad=False, tol={"float16": (5e-2, 2e-2), "bfloat16": (2e-1, 5e-2)},
       errors=lambda: [_err(lambda: oar.scatter_reduce(oar.ones([3]), 0, _idx([0]), oar.ones([1]), "max"),
                            ValueError, "scatter_reduce")])
_entry("scatter_reduce_sum", lambda x, d, i, s: oar.scatter_reduce(x, d, _idx(i), s, "sum"),
       lambda x, d, i, s: _scatter_ref(x, i, s, d, np.add), FLOATS, _scatter_samples)


def _scatter_nd_ref(index, updates, shape):
    out = np.zeros(shape, dtype=updates.dtype)
    index = np.asarray(index)
    k = index.shape[-1]
    for pos in np.ndindex(*index.shape[:-1]):
        out[tuple(index[pos])] += updates[pos]
    return out


_entry("scatter_nd", lambda i, u, s: oar.scatter_nd(_idx(i), u, s), _scatter_nd_ref, NOBOOL,
       lambda d: [Sample(([[1], [1], [3]], _v((3,)), [4])), Sample(([[0, 1], [1, 0], [0, 1]], _v((3,)), [2, 2])),
                  Sample(([[1]], _v((1, 3)), [2, 3]))],
       errors=lambda: [_err(lambda: oar.scatter_nd(_idx([[4]]), oar.ones([1]), [4]), IndexError, "scatter_nd")])


def _take_ref(x, index, mode="raise"):
    return np.take(x.ravel(), np.asarray(index), mode=mode if mode != "raise" else "raise")


_entry("take", lambda x, i, *a: oar.take(x, _idx(i), *a), _take_ref, ALL,
       lambda d: [Sample((_v((2, 3)), [[0, 5], [-1, 2]])), Sample((_v((3,)), [7, -8], "wrap")),
                  Sample((_v((3,)), [7, -8], "clip")), Sample((_v((3, 4)), [[1, 1, 11]]), noncontig=True)],
       errors=lambda: [_err(lambda: oar.take(oar.ones([2]), _idx([2])), IndexError, "take"),
                       _err(lambda: oar.take(oar.ones([2]), _idx([0]), "bad"), ValueError, "take"),
                       _err(lambda: oar.take(oar.ones([2]), oar.ones([1])), TypeError, "take")])
_entry("take_along_dim", lambda x, i, a: oar.take_along_dim(x, _idx(i), a),
       lambda x, i, a: np.take_along_axis(x, np.asarray(i), a), ALL,
       lambda d: [Sample((_v((2, 3)), [[0], [2]], 1)), Sample((_v((3, 2)), [[2, 0]], 0), noncontig=True)])
_entry("Tensor.repeat", lambda x, *r: x.repeat(*r), lambda x, *r: np.tile(x, r[0] if len(r) == 1 else r), ALL,
       lambda d: [Sample((_v((2, 3)), 2, 1)), Sample((_v((2, 3)), [3])), Sample((_v((2,)), 2, 1, 2)),
                  Sample((_v((2, 3)), [1, 2]), noncontig=True)])

# ---------------------------------------------------------------- in place (into non-leaf copies)

_entry("tril_", lambda x, *a: oar.tril_(_copy(x), *a), np.tril, NOBOOL,
       lambda d: [Sample((_v((3, 3)),)), Sample((_v((2, 3, 4)), -1)), Sample((_v((3, 4)), 1), noncontig=True)],
       errors=lambda: [_err(lambda: oar.tril_(oar.ones([2, 2], "float32").requires_grad_()), ValueError, "tril_")])
_entry("triu_", lambda x, *a: oar.triu_(_copy(x), *a), np.triu, NOBOOL,
       lambda d: [Sample((_v((3, 3)),)), Sample((_v((3, 4)), 1), noncontig=True)])
_entry("where_", lambda c, x, y: oar.where_(c, _copy(x), y), np.where, NOBOOL,
       lambda d: [Sample((_rng(1).random((2, 3)) > 0.5, _v((2, 3), 1), _v((2, 3), 2))),
                  Sample((_rng(2).random((3,)) > 0.5, _v((2, 3), 3), _v((3,), 4)))])
_entry("masked_fill_", lambda x, m, v: oar.masked_fill_(_copy(x), m, v), lambda x, m, v: np.where(m, v, x), NOBOOL,
       lambda d: [Sample((_v((2, 3)), _rng(1).random((2, 3)) > 0.5, 2))])


def _index_add_ref(x, index, axis, value, alpha=1):
    out = x.copy()
    moved = np.moveaxis(out, axis, 0)
    np.add.at(moved, np.asarray(index), np.moveaxis(value, axis, 0) * alpha)
    return out


_entry("index_add_", lambda x, i, a, v, **k: oar.index_add_(_copy(x), _idx(i), a, v, **k), _index_add_ref, NOBOOL,
       lambda d: [Sample((_v((3, 2)), [0, 0], 0, _v((2, 2), 1))),
                  Sample((_v((2, 3)), [2], 1, _v((2, 1), 2)), {"alpha": 2})])
_entry("scatter_", lambda x, i, u, **k: oar.scatter_(_copy(x), _idx(i), u, **k),
       lambda x, i, u, overwrite=True: _scatter_ref(x, np.repeat(np.asarray(i)[:, None], x.shape[1], 1), u, 0,
                                                    (lambda a, b: b)), NOBOOL,
       lambda d: [Sample((_v((3, 2)), [2, 0], _v((2, 2), 1)))])
_entry("Tensor.clip_", lambda x, lo, hi: _copy(x).clip_(lo, hi), np.clip, SIGNED,
       lambda d: [Sample((_v((3, 4)), -1, 2)), Sample((_v((2, 3)), -1.5, 1.5), noncontig=True)])
_entry("Tensor.clamp", lambda x, lo, hi: x.clamp(lo, hi), np.clip, SIGNED, lambda d: [Sample((_v((3, 4)), -1, 2))])
_entry("Tensor.scale_", lambda x, *a: _copy(x).scale_(*a), lambda x, s, b: x * s + b, FLOATS,
       lambda d: [Sample((_v((3, 4)), 2.0, 0.5))])
_entry("Tensor.zero_", lambda x: _copy(x).zero_(), np.zeros_like, NOBOOL, lambda d: [Sample((_v((3, 4)),))])
_entry("Tensor.fill_", lambda x, v: _copy(x).fill_(v), lambda x, v: np.full_like(x, v), NOBOOL,
       lambda d: [Sample((_v((3, 4)), 2))])


def _fill_diagonal_ref(x, value, offset=0, wrap=False):
    out = x.copy()
    rows, cols = x.shape
    end = out.size if wrap else min(out.size, cols * cols)
    flat = out.reshape(-1)
    for i in range(0, end, cols + 1):
        if 0 <= i % cols + offset < cols:
            flat[i + offset] = value
    return out


_entry("Tensor.fill_diagonal_", lambda x, *a, **k: _copy(x).fill_diagonal_(*a, **k), _fill_diagonal_ref, NOBOOL,
       lambda d: [Sample((_v((3, 2)), 5)), Sample((_v((7, 3)), 1), {"wrap": True}),
                  Sample((_v((7, 3)), 1), {"wrap": True, "offset": 1}), Sample((_v((3, 3)), 1), {"offset": -1})],
       errors=lambda: [ErrorInput(lambda: oar.ones([2]).fill_diagonal_(1.0), ValueError,
                                  "[oar.Tensor.fill_diagonal_]")])

# The shape-changing in-place forms (reshape_, squeeze_, cast_, ...) cannot be traced, which every
# entry here is (test_ir.py); test_shape_ext.py checks them.


# ---------------------------------------------------------------- creation


def _range_ref(start, end, step, dtype):
    return np.arange(start, end + step / 2, step).astype(np.float64)


register(OpInfo("range", oar.range, _range_ref, ("float32", "float64", "int32", "int64"),
                lambda d: [Sample((0, 3, 1)), Sample((1, 10, 3)), Sample((3, 0, -1))], creation=True,
                errors=lambda: [_err(lambda: oar.range(0, 3, 0), ValueError, "range"),
                                _err(lambda: oar.range("a"), TypeError, "range")]))
register(OpInfo("tril_indices", oar.tril_indices,
                lambda r, c, o, dtype: np.stack(np.tril_indices(r, o, c)).reshape(2, -1), ("int32", "int64"),
                lambda d: [Sample((3, 4, 1)), Sample((4, 3, -1)), Sample((0, 0, 0)), Sample((2, 2, 5))],
                creation=True, errors=lambda: [_err(lambda: oar.tril_indices(-1, 2), ValueError, "tril_indices"),
                                               _err(lambda: oar.tril_indices(2, 2, 0, "float32"), TypeError,
                                                    "tril_indices")]))
register(OpInfo("triu_indices", oar.triu_indices,
                lambda r, c, o, dtype: np.stack(np.triu_indices(r, o, c if c is not None else r)).reshape(2, -1),
                ("int32", "int64"), lambda d: [Sample((3, None, 1)), Sample((2, 4, -2))], creation=True))
