"""Linear-algebra extras (bmm, mm, dot, outer, t, kron, cross, einsum) and the
elementwise/creation functions lerp, nan_to_num and logspace.

The computations are composites in C++ (src/ops/linalg_ext.cpp); this module
gives them Paddle's signatures and attaches the matching Tensor methods.
"""
import numbers

from . import _C

__all__ = ["bmm", "mm", "dot", "outer", "t", "kron", "cross", "einsum", "lerp", "nan_to_num", "logspace"]


def bmm(x, y, name=None):
    """Batched matrix product of two 3-D tensors: [B, M, K] @ [B, K, N] -> [B, M, N].

    >>> import oar
    >>> x = oar.ones([2, 1, 3])
    >>> y = oar.ones([2, 3, 2])
    >>> oar.bmm(x, y).numpy().tolist()
    [[[3.0, 3.0]], [[3.0, 3.0]]]
    """
    return _C._bmm(x, y)


def mm(input, mat2, name=None):  # noqa: A002 - Paddle's argument name
    """Matrix product of `input` and `mat2` (broadcasting like matmul).

    >>> import oar
    >>> a = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> oar.mm(a, a).numpy().tolist()
    [[7.0, 10.0], [15.0, 22.0]]
    """
    return _C._mm(input, mat2)


def dot(x, y, name=None):
    """Inner product of two 1-D tensors (0-D result), or of the rows of two 2-D tensors ([N] result).

    Complex inputs are not conjugated.

    >>> import oar
    >>> oar.dot(oar.to_tensor([1.0, 2.0, 3.0]), oar.to_tensor([4.0, 5.0, 6.0])).item()
    32.0
    """
    return _C._dot(x, y)


def outer(x, y, name=None):
    """Outer product; inputs of other ranks are flattened first.

    >>> import oar
    >>> oar.outer(oar.to_tensor([1, 2]), oar.to_tensor([3, 4, 5])).numpy().tolist()
    [[3, 4, 5], [6, 8, 10]]
    """
    return _C._outer(x, y)


def t(input, name=None):  # noqa: A002
    """Transposes a 2-D tensor; 0-D and 1-D tensors are returned as they are.

    >>> import oar
    >>> oar.t(oar.to_tensor([[1, 2, 3]])).shape
    [3, 1]
    """
    return _C._t(input)


def kron(x, y, name=None):
    """Kronecker product.

    >>> import oar
    >>> oar.kron(oar.to_tensor([1, 10]), oar.to_tensor([1, 2, 3])).numpy().tolist()
    [1, 2, 3, 10, 20, 30]
    """
    return _C._kron(x, y)


def cross(x, y, axis=9, name=None):
    """Cross product of 3-vectors along `axis` (9, the default, means the first axis of size 3).

    >>> import oar
    >>> oar.cross(oar.to_tensor([1.0, 0.0, 0.0]), oar.to_tensor([0.0, 1.0, 0.0])).numpy().tolist()
    [0.0, 0.0, 1.0]
    """
    if axis is None:
        axis = 9
    return _C._cross(x, y, int(axis))


def einsum(equation, *operands):
    """Einstein summation over the operands, e.g. 'ij,jk->ik', 'bij,bjk->bik', 'ii->i', '...ij,...jk'.

    Without '->' the output holds the labels that appear once, in alphabetical order,
    after the dims covered by '...'. Repeated labels in one operand take a diagonal.

    >>> import oar
    >>> a = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> oar.einsum('ii', a).item()
    5.0
    >>> oar.einsum('ij,jk->ik', a, a).numpy().tolist()
    [[7.0, 10.0], [15.0, 22.0]]
    """
    if not isinstance(equation, str):
        raise TypeError(f"[oar.einsum] equation must be a str, got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for i, op in enumerate(operands):
        if not isinstance(op, _C.Tensor):
            raise TypeError(f"[oar.einsum] operand {i} must be a Tensor, got {type(op).__name__}")
    return _C._einsum(equation, list(operands))


def lerp(x, y, weight, name=None):
    """Linear interpolation x + weight * (y - x); `weight` is a Tensor or a float.

    >>> import oar
    >>> oar.lerp(oar.to_tensor([0.0, 1.0]), oar.to_tensor([10.0, 3.0]), 0.5).numpy().tolist()
    [5.0, 2.0]
    """
    if not isinstance(weight, _C.Tensor):
        if not isinstance(weight, numbers.Number):
            raise TypeError(f"[oar.lerp] weight must be a Tensor or a number, got {type(weight).__name__}")
        weight = _C.full([], weight, x.dtype)
    return _C._lerp(x, y, weight)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None, name=None):
    """Replaces NaN by `nan`, +inf by `posinf` and -inf by `neginf` (default: the dtype's largest
    and lowest finite values).

    >>> import oar
    >>> oar.nan_to_num(oar.to_tensor([float('nan'), 1.0, float('-inf')]), neginf=-5.0).numpy().tolist()
    [0.0, 1.0, -5.0]
    """
    return _C._nan_to_num(x, float(nan), None if posinf is None else float(posinf),
                          None if neginf is None else float(neginf))


def _number(v, api, what):
    if isinstance(v, _C.Tensor):
        if v.size != 1:
            raise ValueError(f"[{api}] {what} must be a number or a one-element Tensor, got shape {v.shape}")
        return v.item()
    return v


def logspace(start, stop, num, base=10.0, dtype=None, name=None):
    """`num` values base**e for e evenly spaced from `start` to `stop`.

    >>> import oar
    >>> oar.logspace(0, 3, 4, dtype='float64').numpy().tolist()
    [1.0, 10.0, 100.0, 1000.0]
    """
    api = "oar.logspace"
    start, stop, num, base = (_number(v, api, w) for v, w in
                              ((start, "start"), (stop, "stop"), (num, "num"), (base, "base")))
    if isinstance(num, float) and num.is_integer():
        num = int(num)
    if not isinstance(num, numbers.Integral) or isinstance(num, bool):
        raise TypeError(f"[{api}] num must be an int, got {type(num).__name__}")
    return _C._logspace(float(start), float(stop), int(num), float(base), dtype)


__tensor_methods__ = ("dot", "outer", "lerp", "nan_to_num", "t", "mm", "bmm", "kron", "cross")
