"""Shape, manipulation, indexing and creation functions of the paddle namespace written over the core ops."""

__all__ = []

# Note [Tensor methods]: the functions above that are also Tensor methods.
__tensor_methods__ = ()
