"""Tensor attributes and methods of paddle.Tensor beyond the ops: storage facts, naming, conversions."""

__all__ = []

# Note [Tensor methods]: the functions and properties here that are Tensor attributes.
__tensor_methods__ = ()
