"""Weight normalisation: a parameter w reparametrised as w = g * v / ||v||.

The norm is taken over every axis except ``dim``, so g holds one magnitude per
slice along ``dim``; dim=None or -1 means one norm over the whole tensor (a
0-D g), as in Paddle (other negative dims count from the end).
"""
import numbers

from ... import _C
from ...autograd import no_grad
from ..initializer import _float_work_dtype
from ._reparam import find_hook, get_parameter, new_parameter

__all__ = ["weight_norm", "remove_weight_norm"]

_EPS = 1e-12  # as Paddle: v is divided by max(||v||, _EPS); g starts at sqrt(||w||^2 + _EPS)


def _normalise_dim(dim, ndim, api):
    """dim as a non-negative axis, or None for the whole tensor."""
    if dim is None or dim == -1:
        return None
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"[{api}] dim must be an int or None, got {type(dim).__name__}")
    if not -ndim <= dim < ndim:
        raise ValueError(f"[{api}] dim must be in [-{ndim}, {ndim}) for a {ndim}-D weight, got {dim}")
    return int(dim) % ndim


def _sum_sq_except_dim(v, dim):
    """Sum of squares of v over all axes except dim, keeping dims (0-D for dim None)."""
    if dim is None:
        return _C.sum(_C.square(v))
    axes = [i for i in range(v.ndim) if i != dim]
    return _C.sum(_C.square(v), axes, None, True) if axes else _C.square(v)


def _g_shape(shape, dim, keepdim):
    if dim is None:
        return []
    return [n if i == dim else 1 for i, n in enumerate(shape)] if keepdim else [shape[dim]]


class WeightNorm:
    """The forward pre-hook installed by ``weight_norm``: before each forward it sets
    ``layer.<name>`` to g * v / max(||v||, 1e-12) from ``<name>_g`` and ``<name>_v``.

    >>> import oar
    >>> lin = oar.nn.utils.weight_norm(oar.nn.Linear(2, 2), dim=None)
    >>> hook = list(lin._forward_pre_hooks.values())[0]
    >>> hook.name, hook.dim
    ('weight', -1)
    """

    kind = "weight_norm"

    def __init__(self, name, dim):
        self.name, self.dim = name, dim

    def compute_weight(self, layer):
        g, v = getattr(layer, self.name + "_g"), getattr(layer, self.name + "_v")
        dim = None if self.dim == -1 else self.dim
        work = _float_work_dtype(v.dtype)
        vw = v if v.dtype == work else _C.cast(v, work)
        gw = g if g.dtype == work else _C.cast(g, work)
        inv_norm = _C.rsqrt(_C.maximum(_sum_sq_except_dim(vw, dim), _C.full([], _EPS * _EPS, work)))
        w = vw * (_C.reshape(gw, _g_shape(v.shape, dim, True)) * inv_norm)
        return w if w.dtype == v.dtype else _C.cast(w, v.dtype)

    def __call__(self, layer, inputs):
        setattr(layer, self.name, self.compute_weight(layer))


def weight_norm(layer, name="weight", dim=0):
    """Reparametrises the parameter ``name`` of ``layer`` as g * v / ||v|| and returns the layer.

    The parameter is replaced by two parameters, ``<name>_v`` (its value) and
    ``<name>_g`` (the norms of its slices along dim, shape [shape[dim]]; 0-D for
    dim=None or -1), and ``<name>`` becomes a non-persistable buffer recomputed
    before every forward, so gradients reach g and v. Initially g is
    sqrt(||w||^2 + 1e-12), as in Paddle.

    >>> import oar
    >>> lin = oar.nn.utils.weight_norm(oar.nn.Linear(3, 2))
    >>> [(n, p.shape) for n, p in lin.named_parameters()]
    [('bias', [2]), ('weight_v', [3, 2]), ('weight_g', [3])]
    >>> lin(oar.ones([1, 3])).shape
    [1, 2]
    """
    api = "oar.nn.utils.weight_norm"
    weight = get_parameter(layer, name, WeightNorm, api)
    d = _normalise_dim(dim, weight.ndim, api)
    delattr(layer, name)
    with no_grad():
        w = _C.cast(weight, _float_work_dtype(weight.dtype))
        g = _C.reshape(_C.sqrt(_sum_sq_except_dim(w, d) + _EPS), _g_shape(weight.shape, d, False))
    setattr(layer, name + "_v", new_parameter(layer, weight, weight))
    setattr(layer, name + "_g", new_parameter(layer, _C.cast(g, weight.dtype), weight))
    hook = WeightNorm(name, -1 if d is None else d)
    layer.register_buffer(name, hook.compute_weight(layer), persistable=False)
    layer.register_forward_pre_hook(hook)
    return layer


def remove_weight_norm(layer, name="weight"):
    """Undoes ``weight_norm``: ``<name>`` becomes one parameter again, holding g * v / ||v||.

    >>> import oar
    >>> lin = oar.nn.utils.weight_norm(oar.nn.Linear(3, 2))
    >>> lin = oar.nn.utils.remove_weight_norm(lin)
    >>> [(n, p.shape) for n, p in lin.named_parameters()]
    [('bias', [2]), ('weight', [3, 2])]
    """
    api = "oar.nn.utils.remove_weight_norm"
    found = find_hook(layer, WeightNorm, name, api)
    if found is None:
        raise ValueError(f"[{api}] weight_norm of {name!r} not found in {type(layer).__name__}")
    key, hook = found
    with no_grad():
        w = hook.compute_weight(layer)
    v = getattr(layer, name + "_v")
    del layer._forward_pre_hooks[key]
    delattr(layer, name)
    delattr(layer, name + "_g")
    delattr(layer, name + "_v")
    setattr(layer, name, new_parameter(layer, w, v))
    return layer
