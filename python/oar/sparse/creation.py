"""oar.sparse.sparse_coo_tensor and sparse_csr_tensor: validated construction of the sparse layouts."""
import numpy as np

from .. import _C
from . import _index as ix
from ._tensor import SparseCooTensor, SparseCsrTensor

__all__ = ["sparse_coo_tensor", "sparse_csr_tensor"]


def _as_tensor(data, dtype, place, api, what):
    import oar
    if isinstance(data, _C.Tensor):
        t = data
    else:
        try:
            t = oar.to_tensor(data)
        except (TypeError, ValueError) as e:
            raise TypeError(f"[{api}] {what} must be a Tensor, NumPy array or nested list, got "
                            f"{type(data).__name__}: {e}") from None
    if dtype is not None:
        t = t.astype(dtype)
    if place is not None:
        t = t.to(place)
    return t


def _index_tensor(data, place, api, what):
    t = _as_tensor(data, None, place, api, what)
    if ix.dname(t) not in ix._INT_DTYPES:
        raise TypeError(f"[{api}] {what} must be int32 or int64, got {ix.dname(t)}")
    return t


def _with_grad_policy(values, stop_gradient):
    """stop_gradient=True gives values cut from any graph; False keeps a differentiable chain or starts one."""
    if stop_gradient:  # a fresh handle either way, so flags set on the result never reach the caller's tensor
        return values.detach()
    if values.stop_gradient:  # a fresh leaf, so the caller's tensor is not changed
        values = values.detach()
        values.stop_gradient = False
    return values


def _check_shape(shape, api):
    if isinstance(shape, _C.Tensor):
        shape = shape.numpy().tolist()
    if not isinstance(shape, (list, tuple)) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape):
        raise TypeError(f"[{api}] shape must be a list or tuple of ints, got {shape!r}")
    if any(int(d) < 0 for d in shape):
        raise ValueError(f"[{api}] shape must not have negative sizes, got {list(shape)}")
    return [int(d) for d in shape]


def sparse_coo_tensor(indices, values, shape=None, dtype=None, place=None, stop_gradient=True):
    """A SparseCooTensor from coordinates indices [sparse_dim, nnz] and values [nnz, *dense_dims].

    shape defaults to one more than the largest index in each sparse dim, followed by values.shape[1:].
    Repeated coordinates are kept (coalesce() sums them). The indices are checked: int32/int64, 2-D,
    non-negative and inside shape. With stop_gradient=False the values stay differentiable: a values
    Tensor that already requires grad keeps its graph, any other becomes a new leaf.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 1, 2], [1, 2, 0]], [1.0, 2.0, 3.0], [3, 3])
    >>> x.to_dense().numpy().tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [3.0, 0.0, 0.0]]
    >>> x.is_sparse_coo(), x.nnz(), x.shape
    (True, 3, [3, 3])
    """
    api = "oar.sparse.sparse_coo_tensor"
    ind = _index_tensor(indices, place, api, "indices")
    vals = _as_tensor(values, dtype, place, api, "values")
    if ind.ndim != 2:
        raise ValueError(f"[{api}] indices must be 2-D [sparse_dim, nnz], got shape {ind.shape}")
    if vals.ndim < 1:
        raise ValueError(f"[{api}] values must be at least 1-D [nnz, *dense_dims], got a 0-D tensor")
    sd, nnz = ind.shape
    if sd < 1:
        raise ValueError(f"[{api}] indices must have at least one row (sparse_dim >= 1), got shape {ind.shape}")
    if vals.shape[0] != nnz:
        raise ValueError(f"[{api}] values.shape[0] ({vals.shape[0]}) must equal the number of indices "
                         f"indices.shape[1] ({nnz})")
    h = ix.host(ind)
    if h is not None and nnz and h.min() < 0:
        raise ValueError(f"[{api}] indices must be non-negative, got {int(h.min())}")
    if shape is None:
        if h is None or nnz == 0:
            raise ValueError(f"[{api}] shape cannot be inferred from empty indices; give shape")
        shape = [int(m) + 1 for m in h.max(axis=1)] + list(vals.shape[1:])
    shape = _check_shape(shape, api)
    if len(shape) != sd + vals.ndim - 1:
        raise ValueError(f"[{api}] len(shape) ({len(shape)}) must equal sparse_dim ({sd}) + values.ndim - 1 "
                         f"({vals.ndim - 1}), got shape {shape}")
    if list(vals.shape[1:]) != shape[sd:]:
        raise ValueError(f"[{api}] values.shape[1:] {list(vals.shape[1:])} must equal shape[{sd}:] {shape[sd:]}")
    ix.checked_prod(shape[:sd], api)
    if h is not None and nnz:
        over = h.max(axis=1) >= np.asarray(shape[:sd])
        if over.any():
            d = int(np.argmax(over))
            raise ValueError(f"[{api}] indices[{d}] must be less than shape[{d}] ({shape[d]}), got "
                             f"{int(h[d].max())}")
    return SparseCooTensor(ind, _with_grad_policy(vals, stop_gradient), shape)


def sparse_csr_tensor(crows, cols, values, shape, dtype=None, place=None, stop_gradient=True):
    """A SparseCsrTensor: a 2-D matrix [rows, cols] or a batch [batch, rows, cols] in compressed-row layout.

    crows [batch * (rows + 1)] lists, per batch and starting at 0, where each row's entries begin in cols
    and values; cols [nnz] holds their columns and values [nnz] their values. Checked: int32/int64 indices,
    lengths that agree, crows starting at 0 and non-decreasing per batch, columns inside shape.

    >>> import oar
    >>> x = oar.sparse.sparse_csr_tensor([0, 2, 3, 5], [1, 3, 2, 0, 1], [1.0, 2.0, 3.0, 4.0, 5.0], [3, 4])
    >>> x.to_dense().numpy().tolist()
    [[0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 3.0, 0.0], [4.0, 5.0, 0.0, 0.0]]
    >>> x.is_sparse_csr(), x.nnz()
    (True, 5)
    """
    api = "oar.sparse.sparse_csr_tensor"
    cr = _index_tensor(crows, place, api, "crows")
    co = _index_tensor(cols, place, api, "cols")
    vals = _as_tensor(values, dtype, place, api, "values")
    shape = _check_shape(shape, api)
    if len(shape) not in (2, 3):
        raise ValueError(f"[{api}] shape must be 2-D [rows, cols] or 3-D [batch, rows, cols], got {shape}")
    for nm, t in (("crows", cr), ("cols", co), ("values", vals)):
        if t.ndim != 1:
            raise ValueError(f"[{api}] {nm} must be 1-D, got shape {t.shape}")
    nb, m, n = (shape[0] if len(shape) == 3 else 1), shape[-2], shape[-1]
    if cr.shape[0] != nb * (m + 1):
        raise ValueError(f"[{api}] crows must have batch * (rows + 1) = {nb * (m + 1)} entries for shape {shape}, "
                         f"got {cr.shape[0]}")
    nnz = co.shape[0]
    if vals.shape[0] != nnz:
        raise ValueError(f"[{api}] cols ({nnz}) and values ({vals.shape[0]}) must have the same length")
    hc = ix.host(cr)
    if hc is not None:
        c = hc.reshape(nb, m + 1).astype(np.int64)
        if (c[:, 0] != 0).any():
            raise ValueError(f"[{api}] crows must start at 0 for every batch, got {c[:, 0].tolist()}")
        if (np.diff(c, axis=1) < 0).any():
            raise ValueError(f"[{api}] crows must be non-decreasing, got {hc.tolist()}")
        if int(c[:, -1].sum()) != nnz:
            raise ValueError(f"[{api}] crows say {int(c[:, -1].sum())} entries in all, but cols and values have "
                             f"{nnz}")
        h = ix.host(co)
        if nnz and (h.min() < 0 or h.max() >= n):
            raise ValueError(f"[{api}] cols must be in [0, {n}), got values in [{int(h.min())}, {int(h.max())}]")
    return SparseCsrTensor(cr, co, _with_grad_policy(vals, stop_gradient), shape)
