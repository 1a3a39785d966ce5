"""einsum, whose variadic operands a declaration cannot express.

The computation is a composite in C++ (src/ops/linalg_ext.cpp). The other
linear-algebra extras (bmm, mm, dot, outer, t, kron, cross) and lerp,
nan_to_num and logspace are declared in src/ops/linalg.toml and bound in C++;
they are re-exported here for the modules that import them from this one.
"""
from . import _C
from ._C import cross, lerp, nan_to_num, outer  # noqa: F401

__all__ = ["einsum"]


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
