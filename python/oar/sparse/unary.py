"""Elementwise functions of sparse tensors: applied to the stored values, the pattern is kept.

Every function here maps 0 to 0 (or to False), so applying it to the stored entries only gives the same
result as applying it to the dense tensor. Repeated COO coordinates are mapped one by one, as stored.
"""
from .. import _C
from . import _index as ix
from ._tensor import SparseCooTensor, SparseCsrTensor, is_sparse_tensor

# (name, what it computes): the functions of the same names in oar, applied to the values.
_VALUE_FUNCTIONS = (
    ("abs", "|x|"), ("asin", "arcsin(x)"), ("asinh", "arsinh(x)"), ("atan", "arctan(x)"),
    ("atanh", "artanh(x)"), ("sin", "sin(x)"), ("sinh", "sinh(x)"), ("tan", "tan(x)"), ("tanh", "tanh(x)"),
    ("sqrt", "sqrt(x)"), ("square", "x * x"), ("log1p", "log(1 + x)"), ("expm1", "exp(x) - 1"),
    ("neg", "-x"), ("deg2rad", "x in radians, for x in degrees"), ("rad2deg", "x in degrees, for x in radians"),
    ("isnan", "whether x is NaN (a bool tensor)"),
)

__all__ = [n for n, _ in _VALUE_FUNCTIONS] + ["pow", "cast", "coalesce", "is_same_shape"]


def check_sparse(x, api, what="x"):
    if not is_sparse_tensor(x):
        raise TypeError(f"[{api}] {what} must be a sparse tensor (SparseCooTensor or SparseCsrTensor), got "
                        f"{type(x).__name__}")
    return x


def _make(name, what):
    import oar
    dense_fn = getattr(oar, name)
    api = f"oar.sparse.{name}"

    def fn(x, name=None):
        check_sparse(x, api)
        return x._with_values(dense_fn(x._values))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""{what} at each stored entry of the sparse tensor x (COO or CSR); the pattern is kept.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 0.25], [0.5, 0.0]]).to_sparse_csr()
    >>> y = oar.sparse.{name}(x)
    >>> bool((y.to_dense() == oar.{name}(x.to_dense())).all())
    True
    """
    return fn


for _n, _w in _VALUE_FUNCTIONS:
    globals()[_n] = _make(_n, _w)
del _n, _w


def pow(x, factor, name=None):
    """x ** factor at each stored entry of the sparse tensor x; factor is a Python number.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 2]], [2.0, 3.0], [3])
    >>> oar.sparse.pow(x, 2).values().numpy().tolist()
    [4.0, 9.0]
    """
    api = "oar.sparse.pow"
    check_sparse(x, api)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        raise TypeError(f"[{api}] factor must be an int or float, got {type(factor).__name__}")
    return x._with_values(x._values ** factor)


def cast(x, index_dtype=None, value_dtype=None, name=None):
    """x with its indices cast to index_dtype (int32 or int64) and/or its values cast to value_dtype.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 2]], [2.0, 3.0], [3])
    >>> y = oar.sparse.cast(x, index_dtype="int32", value_dtype="float64")
    >>> y.indices().dtype, y.dtype
    (paddle.int32, paddle.float64)
    """
    api = "oar.sparse.cast"
    check_sparse(x, api)
    vals = x._values if value_dtype is None else x._values.astype(value_dtype)

    def idx(t):
        if index_dtype is None:
            return t
        out = t.astype(index_dtype)
        if ix.dname(out) not in ix._INT_DTYPES:
            raise TypeError(f"[{api}] index_dtype must be int32 or int64, got {ix.dname(out)}")
        return out

    if isinstance(x, SparseCooTensor):
        return SparseCooTensor(idx(x._indices), vals, x._shape, x._coalesced)
    return SparseCsrTensor(idx(x._crows), idx(x._cols), vals, x._shape)


def coalesce(x, name=None):
    """The COO tensor x with sorted, unique coordinates; the values at repeated coordinates are summed.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 1, 0], [1, 0, 1]], [1.0, 2.0, 3.0], [2, 2])
    >>> y = oar.sparse.coalesce(x)
    >>> y.indices().numpy().tolist(), y.values().numpy().tolist()
    ([[0, 1], [1, 0]], [4.0, 2.0])
    """
    check_sparse(x, "oar.sparse.coalesce")
    return x.coalesce()


def is_same_shape(x, y):
    """Whether x and y (sparse or dense tensors) have the same shape.

    >>> import oar
    >>> x = oar.ones([2, 3]).to_sparse_coo(2)
    >>> oar.sparse.is_same_shape(x, oar.zeros([2, 3])), oar.sparse.is_same_shape(x, oar.zeros([3, 2]))
    (True, False)
    """
    for nm, t in (("x", x), ("y", y)):
        if not (is_sparse_tensor(t) or isinstance(t, _C.Tensor)):
            raise TypeError(f"[oar.sparse.is_same_shape] {nm} must be a Tensor or sparse tensor, got "
                            f"{type(t).__name__}")
    return list(x.shape) == list(y.shape)


ix.scope_module(globals())  # Note [device scope]: sparse arguments count as their values
