"""oar.sparse: COO and CSR sparse tensors and the functions on them (Paddle's paddle.sparse).

A sparse tensor is a SparseCooTensor or SparseCsrTensor holding index Tensors and one dense values
Tensor; all functions are built from differentiable dense ops, so gradients reach the values and the
dense operands (see Note [sparse as composites] in _index.py).

Note [sparse semantics]: where oar differs from Paddle, on purpose.
- Repeated COO coordinates always mean their sum (to_dense, coalesce, products), as in the usual COO
  convention; Paddle's to_dense keeps one of them.
- divide of two sparse tensors is computed over the union of their entries; positions stored by neither
  stay absent instead of becoming 0/0 = NaN entries (which would make the result dense).
- add/subtract also take a dense y (dense result), multiply a dense y (x's pattern); matmul, mv, addmm and
  masked_matmul run on every device, the CPU included.
- A CSR tensor's to_sparse_coo(sparse_dim) honours sparse_dim.
The functions need concrete index values: they run eagerly, not inside a to_static capture.
"""
from ._tensor import SparseCooTensor, SparseCsrTensor  # noqa: F401
from .creation import sparse_coo_tensor, sparse_csr_tensor  # noqa: F401
from .unary import *  # noqa: F401,F403
from .unary import __all__ as _unary_all
from .binary import *  # noqa: F401,F403
from .binary import __all__ as _binary_all
from .manip import *  # noqa: F401,F403
from .manip import __all__ as _manip_all
from .pca import pca_lowrank  # noqa: F401
from . import nn  # noqa: F401

__all__ = (["SparseCooTensor", "SparseCsrTensor", "sparse_coo_tensor", "sparse_csr_tensor", "nn"]
           + _unary_all + _binary_all + _manip_all + ["pca_lowrank"])

import sys  # noqa: E402

from .. import _api  # noqa: E402

# Note [API error boundary]: errors from the ops these functions are built of name the sparse function.
_api.guard_module(sys.modules[__name__])
_api.guard_module(nn.functional)
