"""The source of an in-place op written as a composite (Paddle's `op_` forms
that have no kernel of their own).

Note [in-place composites]
Such an op computes the out-of-place result and copies it into x. When
autograd records x, the result is computed from a copy of x made by
negating twice: clone, cast and the arithmetic ops save their input for
backward and would see it overwritten by the copy back, while neg saves
nothing (and negation is exact: integers wrap back). copy_ then records the
identity gradient from x's new value to the result. A cast whose gradient
kept only the input's dtype would let clone() do this instead.
"""
from . import _C


def inplace_source(x):
    """x itself, or, when autograd records x, a copy no backward node keeps."""
    if x.stop_gradient or not _C.is_grad_enabled():
        return x
    return _C.neg(_C.neg(x))
