"""The two sparse layouts: SparseCooTensor and SparseCsrTensor, and conversions between them and dense Tensors.

A sparse tensor holds index Tensors and one dense values Tensor; see Note [sparse as composites] in _index.py.
Its `stop_gradient` and `grad` are those of its values.
"""
import numpy as np

from .. import _C
from . import _index as ix

Tensor = _C.Tensor


class _SparseBase:
    """What the COO and CSR layouts share: metadata, gradients, printing and Python operators."""

    __slots__ = ("_values", "_shape")

    @property
    def shape(self):
        return list(self._shape)

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def place(self):
        return self._values.place

    @property
    def stop_gradient(self):
        return self._values.stop_gradient

    @stop_gradient.setter
    def stop_gradient(self, v):
        self._values.stop_gradient = v

    @property
    def grad(self):
        """The gradient at this tensor's entries, in its layout (None before a backward pass)."""
        g = self._values.grad
        return None if g is None else self._with_values(g)

    def values(self):
        """The stored values: a dense Tensor [nnz, *dense_dims]."""
        return self._values

    def nnz(self):
        """The number of stored entries."""
        return int(self._values.shape[0])

    def is_sparse(self):
        return True

    def is_dense(self):
        return False

    def is_sparse_coo(self):
        return isinstance(self, SparseCooTensor)

    def is_sparse_csr(self):
        return isinstance(self, SparseCsrTensor)

    def numel(self):
        return int(np.prod(self._shape, dtype=np.int64))

    def detach(self):
        return self._with_values(self._values.detach())

    def astype(self, dtype):
        return self._with_values(self._values.astype(dtype))

    def backward(self, grad_tensor=None, retain_graph=False):
        """Backward from the stored values (a sparse tensor's gradient lives at its entries)."""
        g = None if grad_tensor is None else (grad_tensor.values() if isinstance(grad_tensor, _SparseBase)
                                              else grad_tensor)
        self._values.backward(g, retain_graph)

    def __len__(self):
        return self._shape[0]

    def __repr__(self):
        body = ",\n       ".join(f"{k}={np.array2string(v.numpy(), separator=', ', prefix=' ' * (8 + len(k)))}"
                                 for k, v in self._parts())
        return (f"Tensor(shape={self.shape}, dtype={ix.dname(self._values)}, place={self.place}, "
                f"stop_gradient={self.stop_gradient},\n       {body})")

    __str__ = __repr__

    # Python operators follow oar.sparse's functions (elementwise on the stored entries).
    def __neg__(self):
        from . import unary
        return unary.neg(self)

    def __abs__(self):
        from . import unary
        return unary.abs(self)

    def __add__(self, other):
        from . import binary
        return binary.add(self, other)

    def __sub__(self, other):
        from . import binary
        return binary.subtract(self, other)

    def __mul__(self, other):
        from . import binary
        return binary.multiply(self, other)

    def __rmul__(self, other):
        from . import binary
        return binary.multiply(self, other)

    def __truediv__(self, other):
        from . import binary
        return binary.divide(self, other)

    def __pow__(self, factor):
        from . import unary
        return unary.pow(self, factor)

    def __matmul__(self, other):
        from . import binary
        return binary.matmul(self, other)


class SparseCooTensor(_SparseBase):
    """A tensor in coordinate layout: indices [sparse_dim, nnz] (int) and values [nnz, *shape[sparse_dim:]].

    Made by oar.sparse.sparse_coo_tensor or Tensor.to_sparse_coo; entries may repeat until coalesce() sums them.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_coo(2)
    >>> x.indices().numpy().tolist(), x.values().numpy().tolist(), x.nnz()
    ([[0, 1], [1, 0]], [1.0, 2.0], 2)
    """

    __slots__ = ("_indices", "_coalesced")

    def __init__(self, indices, values, shape, coalesced=False):
        # Trusted constructor: callers have validated (see sparse_coo_tensor for the user-facing checks).
        self._indices, self._values, self._shape = indices, values, [int(d) for d in shape]
        self._coalesced = coalesced

    def _with_values(self, values):
        return SparseCooTensor(self._indices, values, self._shape, self._coalesced)

    def _parts(self):
        return (("indices", self._indices), ("values", self._values))

    def indices(self):
        """The coordinates: an int Tensor [sparse_dim, nnz]."""
        return self._indices

    def sparse_dim(self):
        return int(self._indices.shape[0])

    def dense_dim(self):
        return self.ndim - self.sparse_dim()

    def is_coalesced(self):
        return self._coalesced

    @ix.on_values_device
    def coalesce(self):
        """This tensor with sorted, unique indices; the values of repeated indices are summed.

        >>> import oar
        >>> x = oar.sparse.sparse_coo_tensor([[1, 0, 1]], [1.0, 2.0, 3.0], [2])
        >>> y = x.coalesce()
        >>> y.indices().numpy().tolist(), y.values().numpy().tolist()
        ([[0, 1]], [2.0, 4.0])
        """
        if self._coalesced:
            return self
        ind, val = ix.coalesce(self._indices, self._values, self._shape[:self.sparse_dim()])
        return SparseCooTensor(ind.astype(ix.dname(self._indices)), val, self._shape, True)

    @ix.on_values_device
    def to_dense(self):
        """The dense Tensor with the stored values summed into place and zeros elsewhere (differentiable).

        >>> import oar
        >>> x = oar.sparse.sparse_coo_tensor([[0, 1], [1, 0]], [5.0, 6.0], [2, 2])
        >>> x.to_dense().numpy().tolist()
        [[0.0, 5.0], [6.0, 0.0]]
        """
        sd = self.sparse_dim()
        dims = self._shape[:sd]
        cells = ix.checked_prod(dims, "oar.sparse.SparseCooTensor.to_dense")
        vals = self._values
        is_bool = ix.dname(vals) == "bool"
        if is_bool:
            vals = vals.astype("int32")
        key = ix.linear_key(ix.i64(self._indices), dims)
        out = ix.reshape(ix.segment_sum(vals, key, cells), self._shape)
        return (out != 0) if is_bool else out

    @ix.on_values_device
    def to_sparse_coo(self, sparse_dim=None):
        """This tensor as COO with `sparse_dim` sparse dims (the rest become dense blocks of the values);
        itself when sparse_dim is None or already its own.

        >>> import oar
        >>> x = oar.to_tensor([[0.0, 1.0], [0.0, 0.0]]).to_sparse_coo(2).to_sparse_coo(1)
        >>> x.indices().numpy().tolist(), x.values().numpy().tolist()
        ([[0]], [[0.0, 1.0]])
        """
        api = "oar.sparse.SparseCooTensor.to_sparse_coo"
        if sparse_dim is None:
            return self
        sparse_dim = _check_sparse_dim(sparse_dim, self.ndim, api)
        sd = self.sparse_dim()
        if sparse_dim == sd:
            return self
        import oar
        if sparse_dim > sd:  # split the values' leading dense dims into coordinates, keeping nonzero blocks
            x = self.coalesce()
            extra = sparse_dim - sd
            mask = x._values != 0
            if mask.ndim > 1 + extra:
                mask = mask.any(axis=list(range(1 + extra, mask.ndim)))
            pos = oar.nonzero(mask)  # [m, 1 + extra], row-major, so the result stays sorted
            ind = oar.concat([oar.gather(ix.i64(x._indices), pos[:, 0], axis=1), pos[:, 1:].t()], axis=0)
            return SparseCooTensor(ind.astype(ix.dname(self._indices)), oar.gather_nd(x._values, pos),
                                   self._shape, True)
        # fold trailing sparse dims into dense blocks: one block per distinct leading coordinate
        ind = ix.i64(self._indices)
        lead, moved = self._shape[:sparse_dim], self._shape[sparse_dim:sd]
        block = ix.checked_prod(moved, api)
        key = ix.linear_key(ind[:sparse_dim], lead)
        uniq, inverse = oar.unique(key, return_inverse=True)
        inner = ix.linear_key(ind[sparse_dim:], moved)
        n = int(uniq.shape[0])
        flat = ix.segment_sum(self._values, inverse.reshape([-1]) * block + inner, n * block)
        vals = ix.reshape(flat, [n] + self._shape[sparse_dim:])
        return SparseCooTensor(ix.unravel(uniq, lead).astype(ix.dname(self._indices)), vals, self._shape, True)

    @ix.on_values_device
    def to_sparse_csr(self):
        """This tensor (2-D or 3-D, all dims sparse) in CSR layout."""
        api = "oar.sparse.SparseCooTensor.to_sparse_csr"
        if self.ndim not in (2, 3):
            raise ValueError(f"[{api}] CSR holds 2-D or 3-D (batched) matrices, got a {self.ndim}-D tensor")
        x = self.to_sparse_coo(self.ndim).coalesce()
        ind = ix.i64(x._indices)
        batch = self._shape[0] if self.ndim == 3 else None
        crows = ix.coo_to_csr(ind, self._shape[-2], batch)
        return SparseCsrTensor(crows, ind[-1], x._values, self._shape)


class SparseCsrTensor(_SparseBase):
    """A 2-D matrix, or a batch of them (3-D), in compressed-row layout.

    crows [batch * (rows + 1)] gives, per batch, where each row's entries start in cols and values
    (starting at 0 for each batch); cols [nnz] their columns; values [nnz] their values.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 1.0], [2.0, 3.0]]).to_sparse_csr()
    >>> x.crows().numpy().tolist(), x.cols().numpy().tolist(), x.values().numpy().tolist()
    ([0, 1, 3], [1, 0, 1], [1.0, 2.0, 3.0])
    """

    __slots__ = ("_crows", "_cols")

    def __init__(self, crows, cols, values, shape):
        self._crows, self._cols, self._values, self._shape = crows, cols, values, [int(d) for d in shape]

    def _with_values(self, values):
        return SparseCsrTensor(self._crows, self._cols, values, self._shape)

    def _parts(self):
        return (("crows", self._crows), ("cols", self._cols), ("values", self._values))

    def crows(self):
        """The compressed row offsets: an int Tensor [batch * (rows + 1)]."""
        return self._crows

    def cols(self):
        """The column of each stored entry: an int Tensor [nnz]."""
        return self._cols

    def sparse_dim(self):
        """2: the compressed dims are a matrix's rows and columns (a batch dim is not counted, as in Paddle)."""
        return 2

    def dense_dim(self):
        return 0

    @ix.on_values_device
    def _coo_indices(self):
        """[ndim, nnz] int64 coordinates of the stored entries, in storage order."""
        import oar
        batch = self._shape[0] if self.ndim == 3 else None
        rows = ix.csr_rows(self._crows, self._shape[-2], batch)
        return oar.concat([rows, ix.i64(self._cols).reshape([1, -1])], axis=0)

    @ix.on_values_device
    def to_sparse_coo(self, sparse_dim=None):
        """This matrix in COO layout (sparse_dim defaults to, and is best left at, its rank)."""
        out = SparseCooTensor(self._coo_indices(), self._values, self._shape)
        return out if sparse_dim is None else out.to_sparse_coo(sparse_dim)

    @ix.on_values_device
    def to_sparse_csr(self):
        return self

    @ix.on_values_device
    def coalesce(self):
        """This matrix with columns sorted within each row and repeated entries summed."""
        return self.to_sparse_coo().to_sparse_csr()

    @ix.on_values_device
    def to_dense(self):
        """The dense Tensor of this matrix (differentiable).

        >>> import oar
        >>> x = oar.sparse.sparse_csr_tensor([0, 1, 2], [1, 0], [5.0, 6.0], [2, 2])
        >>> x.to_dense().numpy().tolist()
        [[0.0, 5.0], [6.0, 0.0]]
        """
        return self.to_sparse_coo().to_dense()


def _check_sparse_dim(sparse_dim, ndim, api):
    if isinstance(sparse_dim, bool) or not isinstance(sparse_dim, (int, np.integer)) \
            or not 0 < int(sparse_dim) <= ndim:
        raise ValueError(f"[{api}] sparse_dim must be an int in [1, {ndim}], got {sparse_dim!r}")
    return int(sparse_dim)


def dense_to_coo(x, sparse_dim):
    """Tensor.to_sparse_coo: the entries of dense x whose block x[i_0..i_{sparse_dim-1}] is not all zero."""
    import oar
    sparse_dim = _check_sparse_dim(sparse_dim, x.ndim, "oar.Tensor.to_sparse_coo")
    mask = x != 0
    if x.ndim > sparse_dim:
        mask = mask.any(axis=list(range(sparse_dim, x.ndim)))
    pos = oar.nonzero(mask)  # [nnz, sparse_dim], row-major
    return SparseCooTensor(pos.t(), oar.gather_nd(x, pos), x.shape, True)


def dense_to_csr(x):
    """Tensor.to_sparse_csr: the nonzeros of a dense 2-D matrix or 3-D batch of them."""
    if x.ndim not in (2, 3):
        raise ValueError(f"[oar.Tensor.to_sparse_csr] CSR holds 2-D or 3-D (batched) matrices, got a "
                         f"{x.ndim}-D tensor")
    return dense_to_coo(x, x.ndim).to_sparse_csr()


def is_sparse_tensor(x):
    return isinstance(x, _SparseBase)
