"""Arithmetic between sparse tensors and with dense ones: add, subtract, multiply, divide, mask_as."""
from .. import _C
from . import _index as ix
from ._tensor import SparseCooTensor, SparseCsrTensor, is_sparse_tensor
from .unary import check_sparse
from .matmul import addmm, masked_matmul, matmul, mv  # noqa: F401  (re-exported)

__all__ = ["add", "subtract", "multiply", "divide", "mask_as", "matmul", "masked_matmul", "addmm", "mv"]


def _same_dtype(y, x):
    return y if y.dtype == x.dtype else y.astype(ix.dname(x._values))


def union(x, y, api):
    """(indices, x values, y values) of two COO tensors over the union of their coordinates (sorted, unique)."""
    import oar
    if x.sparse_dim() != y.sparse_dim():
        raise ValueError(f"[{api}] x and y must have the same sparse_dim, got {x.sparse_dim()} and "
                         f"{y.sparse_dim()}")
    dims = x._shape[:x.sparse_dim()]
    kx, ky = ix.linear_key(ix.i64(x._indices), dims), ix.linear_key(ix.i64(y._indices), dims)
    nx = int(kx.shape[0])
    uniq, inverse = oar.unique(oar.concat([kx, ky]), return_inverse=True)
    inverse = inverse.reshape([-1])
    n = int(uniq.shape[0])
    vx = ix.segment_sum(x._values, inverse[:nx], n)
    vy = ix.segment_sum(_same_dtype(y._values, x._values), inverse[nx:], n)
    return ix.unravel(uniq, dims).astype(ix.dname(x._indices)), vx, vy


def _elementwise(x, y, fn, api):
    check_sparse(x, api)
    if not is_sparse_tensor(y):
        raise TypeError(f"[{api}] y must be a sparse tensor like x, got {type(y).__name__}")
    if type(x) is not type(y):
        raise TypeError(f"[{api}] x and y must have the same layout, got {type(x).__name__} and "
                        f"{type(y).__name__}")
    if x.shape != y.shape:
        raise ValueError(f"[{api}] x and y must have the same shape, got {x.shape} and {y.shape}")
    csr = isinstance(x, SparseCsrTensor)
    xc, yc = (x.to_sparse_coo(), y.to_sparse_coo()) if csr else (x, y)
    ind, vx, vy = union(xc, yc, api)
    out = SparseCooTensor(ind, fn(vx, vy), x._shape, True)
    return out.to_sparse_csr() if csr else out


def _at(x, dense):
    """The entries of a dense tensor of x's shape at x's stored coordinates: [nnz, *dense_dims] (differentiable)."""
    coo = x if isinstance(x, SparseCooTensor) else x.to_sparse_coo()
    sd = coo.sparse_dim()
    flat = ix.reshape(dense, [ix.checked_prod(x._shape[:sd], 'oar.sparse')] + list(dense.shape[sd:]))
    import oar
    return oar.gather(flat, ix.linear_key(ix.i64(coo._indices), x._shape[:sd]), axis=0)


def _check_dense_like(x, y, api):
    if list(y.shape) != x.shape:
        raise ValueError(f"[{api}] the dense y must have x's shape {x.shape}, got {list(y.shape)}")
    return _same_dtype(y, x)


def add(x, y, name=None):
    """x + y for sparse x and y of the same shape and layout (the result has the union of their entries),
    or for sparse x and a dense y of its shape (a dense result).

    >>> import oar
    >>> x = oar.to_tensor([[0.0, -1.0], [4.0, 0.0]]).to_sparse_csr()
    >>> y = oar.to_tensor([[0.0, 1.0], [2.0, 3.0]]).to_sparse_csr()
    >>> oar.sparse.add(x, y).to_dense().numpy().tolist()
    [[0.0, 0.0], [6.0, 3.0]]
    """
    api = "oar.sparse.add"
    if is_sparse_tensor(x) and isinstance(y, _C.Tensor):
        return x.to_dense() + _check_dense_like(x, y, api)
    return _elementwise(x, y, lambda a, b: a + b, api)


def subtract(x, y, name=None):
    """x - y for sparse x and y of the same shape and layout, or for sparse x and a dense y (dense result).

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 1]], [5.0, 6.0], [3])
    >>> y = oar.sparse.sparse_coo_tensor([[1, 2]], [1.0, 2.0], [3])
    >>> oar.sparse.subtract(x, y).to_dense().numpy().tolist()
    [5.0, 5.0, -2.0]
    """
    api = "oar.sparse.subtract"
    if is_sparse_tensor(x) and isinstance(y, _C.Tensor):
        return x.to_dense() - _check_dense_like(x, y, api)
    return _elementwise(x, y, lambda a, b: a - b, api)


def multiply(x, y, name=None):
    """x * y for sparse x and y of the same shape and layout (computed over the union of their entries).

    y may also be a Python number, or a dense tensor of x's shape: the result keeps x's pattern then.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 1]], [5.0, 6.0], [3])
    >>> y = oar.sparse.sparse_coo_tensor([[1, 2]], [2.0, 2.0], [3])
    >>> oar.sparse.multiply(x, y).to_dense().numpy().tolist()
    [0.0, 12.0, 0.0]
    >>> oar.sparse.multiply(x, 3.0).values().numpy().tolist()
    [15.0, 18.0]
    """
    api = "oar.sparse.multiply"
    check_sparse(x, api)
    if isinstance(y, (int, float)) and not isinstance(y, bool):
        return x._with_values(x._values * y)
    if isinstance(y, _C.Tensor):
        return x._with_values(x._values * _at(x, _check_dense_like(x, y, api)))
    return _elementwise(x, y, lambda a, b: a * b, api)


def divide(x, y, name=None):
    """x / y for sparse x and y of the same shape and layout, over the union of their entries (where y has
    no entry it counts as 0, as in the dense quotient), or for a Python number y.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 1]], [5.0, 6.0], [2])
    >>> y = oar.sparse.sparse_coo_tensor([[0, 1]], [2.0, 4.0], [2])
    >>> oar.sparse.divide(x, y).values().numpy().tolist()
    [2.5, 1.5]
    >>> oar.sparse.divide(x, 2).values().numpy().tolist()
    [2.5, 3.0]
    """
    api = "oar.sparse.divide"
    check_sparse(x, api)
    if isinstance(y, (int, float)) and not isinstance(y, bool):
        return x._with_values(x._values / y)
    return _elementwise(x, y, lambda a, b: a / b, api)


def mask_as(x, mask, name=None):
    """The entries of the dense tensor x at the stored coordinates of the sparse mask, in mask's layout
    (differentiable with respect to x).

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> mask = oar.sparse.sparse_csr_tensor([0, 1, 2], [1, 0], [1.0, 1.0], [2, 2])
    >>> oar.sparse.mask_as(x, mask).values().numpy().tolist()
    [2.0, 3.0]
    """
    api = "oar.sparse.mask_as"
    check_sparse(mask, api, "mask")
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{api}] x must be a dense Tensor, got {type(x).__name__}")
    if list(x.shape) != mask.shape:
        raise ValueError(f"[{api}] x and mask must have the same shape, got {list(x.shape)} and {mask.shape}")
    return mask._with_values(_at(mask, x))


ix.scope_module(globals())  # Note [device scope]: sparse arguments count as their values
