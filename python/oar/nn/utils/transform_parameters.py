"""Flattening parameters into one vector and writing a vector back into them."""
from ... import _C
from ..._manip import concat
from ...autograd import no_grad
from .clip_grad import _as_param_list

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters, name=None):
    """Concatenates the flattened ``parameters`` into one 1-D Tensor.

    The result is differentiable with respect to the parameters (Paddle's is
    not). Parameters of different dtypes are promoted as by ``oar.concat``.

    >>> import oar
    >>> a = oar.create_parameter([2, 2], "float32", default_initializer=oar.nn.initializer.Constant(1.0))
    >>> b = oar.create_parameter([3], "float32", default_initializer=oar.nn.initializer.Constant(2.0))
    >>> oar.nn.utils.parameters_to_vector([a, b]).numpy().tolist()
    [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0]
    """
    api = "oar.nn.utils.parameters_to_vector"
    params = _as_param_list(parameters, api)
    if not params:
        raise ValueError(f"[{api}] expected at least one parameter, got none")
    return concat([_C.reshape(p, [-1]) for p in params], 0)


def vector_to_parameters(vec, parameters, name=None):
    """Copies consecutive slices of the 1-D ``vec`` into ``parameters`` in place (without gradient).

    Each parameter keeps its identity, shape and dtype (the slice is cast to it).
    ``vec`` needs at least as many elements as the parameters have together;
    elements beyond them are ignored, as in Paddle.

    >>> import oar
    >>> a, b = oar.create_parameter([2, 2], "float32"), oar.create_parameter([1], "float32")
    >>> oar.nn.utils.vector_to_parameters(oar.arange(5, dtype="float32"), [a, b])
    >>> a.numpy().tolist(), b.numpy().tolist()
    ([[0.0, 1.0], [2.0, 3.0]], [4.0])
    """
    api = "oar.nn.utils.vector_to_parameters"
    if not isinstance(vec, _C.Tensor):
        raise TypeError(f"[{api}] vec must be a Tensor, got {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"[{api}] vec must be 1-D, got shape {list(vec.shape)}")
    params = _as_param_list(parameters, api)
    total = sum(p.size for p in params)
    if total > vec.size:
        raise ValueError(f"[{api}] the parameters hold {total} elements but vec has only {vec.size}")
    with no_grad():
        start = 0
        for p in params:
            n = p.size
            p.copy_(_C.cast(_C.reshape(vec[start:start + n], list(p.shape)), p.dtype))
            start += n
