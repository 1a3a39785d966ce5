"""Spectral normalisation: a parameter divided by its largest singular value, estimated by power iteration.

The weight is viewed as a matrix [shape[dim], rest]. Vectors u (length
shape[dim]) and v (length rest) kept between calls approximate its top
singular vectors; sigma = u^T W v. The power iterations run without gradient,
so gradients flow through W only (u and v are constants to them).
"""
import numbers

from ... import _C
from ...autograd import no_grad
from ..initializer import _float_work_dtype
from ..layer.common import Linear
from ..layer.conv import Conv1DTranspose, Conv2DTranspose, Conv3DTranspose
from ._reparam import get_parameter

__all__ = ["spectral_norm"]


def weight_matrix(weight, dim):
    """weight viewed as the matrix [shape[dim], prod(other dims)], dim moved to the front.

    >>> import oar
    >>> weight_matrix(oar.zeros([2, 3, 4]), 1).shape
    [3, 8]
    """
    if dim != 0:
        weight = _C.transpose(weight, [dim] + [i for i in range(weight.ndim) if i != dim])
    return _C.reshape(weight, [weight.shape[0], -1])


def power_iteration(mat, u, v, n_iterations, eps, add_eps=False):
    """``n_iterations`` steps v <- normalise(mat^T u), u <- normalise(mat v), without gradient.

    normalise(x) is x / max(||x||, eps), as Paddle's spectral_norm utility;
    with add_eps=True it is x / (||x|| + eps), as Paddle's SpectralNorm layer.
    Returns the new (u, v).

    >>> import oar
    >>> m = oar.to_tensor([[2.0, 0.0], [0.0, 1.0]])
    >>> u, v = power_iteration(m, oar.to_tensor([0.6, 0.8]), oar.to_tensor([1.0, 0.0]), 30, 1e-12)
    >>> round(float((u * oar.matmul(m, v)).sum()), 4)
    2.0
    """
    with no_grad():
        m = mat.detach()
        for _ in range(n_iterations):
            v = _normalise(_C.matmul(m, u, True, False), eps, add_eps)
            u = _normalise(_C.matmul(m, v, False, False), eps, add_eps)
    return u, v


def _normalise(x, eps, add_eps=False):
    n = _C.sqrt(_C.sum(_C.square(x)))
    return x / (n + eps if add_eps else _C.maximum(n, _C.full([], eps, n.dtype)))


class SpectralNorm:
    """The forward pre-hook installed by ``spectral_norm``: before each forward it sets
    ``layer.<name>`` to ``<name>_orig`` / sigma, first running the power iterations
    (and storing u and v in the buffers ``<name>_u``, ``<name>_v``) when the layer is training.

    >>> import oar
    >>> conv = oar.nn.utils.spectral_norm(oar.nn.Conv2DTranspose(2, 4, 3))
    >>> hook = list(conv._forward_pre_hooks.values())[0]
    >>> hook.name, hook.dim, hook.n_power_iterations
    ('weight', 1, 1)
    """

    kind = "spectral_norm"

    def __init__(self, name, n_power_iterations, dim, eps):
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def compute_weight(self, layer, do_power_iteration):
        weight = getattr(layer, self.name + "_orig")
        u_buf, v_buf = getattr(layer, self.name + "_u"), getattr(layer, self.name + "_v")
        mat = weight_matrix(weight, self.dim)
        if do_power_iteration:
            u, v = power_iteration(mat, u_buf, v_buf, self.n_power_iterations, self.eps)
            with no_grad():
                u_buf.copy_(u)
                v_buf.copy_(v)
        else:  # copies, so that a later in-place update cannot change what backward saved
            u, v = _C.clone(u_buf.detach()), _C.clone(v_buf.detach())
        sigma = _C.sum(u * _C.matmul(mat, v, False, False))
        return weight / sigma

    def __call__(self, layer, inputs):
        setattr(layer, self.name, self.compute_weight(layer, layer.training))


def spectral_norm(layer, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divides the parameter ``name`` of ``layer`` by its spectral norm before every forward; returns the layer.

    The parameter moves to ``<name>_orig``; ``<name>_u`` and ``<name>_v``
    (persistable buffers, random unit vectors at first) hold the power-iteration
    state, updated by n_power_iterations steps in each training-mode forward
    and left as they are in eval mode; ``<name>`` becomes a non-persistable
    buffer. dim defaults to 1 for Linear and ConvNDTranspose layers (their
    output axis), else 0.

    >>> import oar
    >>> lin = oar.nn.Linear(3, 3)
    >>> lin.weight.set_value(oar.diag(oar.to_tensor([4.0, 2.0, 1.0])))
    >>> lin = oar.nn.utils.spectral_norm(lin, n_power_iterations=30)
    >>> _ = lin(oar.ones([1, 3]))
    >>> [round(v, 4) for v in oar.diag(lin.weight).numpy().tolist()]
    [1.0, 0.5, 0.25]
    """
    api = "oar.nn.utils.spectral_norm"
    weight = get_parameter(layer, name, SpectralNorm, api)
    if isinstance(n_power_iterations, bool) or not isinstance(n_power_iterations, numbers.Integral) \
            or n_power_iterations <= 0:
        raise ValueError(f"[{api}] n_power_iterations must be a positive int, got {n_power_iterations!r}")
    if dim is None:
        dim = 1 if isinstance(layer, (Linear, Conv1DTranspose, Conv2DTranspose, Conv3DTranspose)) else 0
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or not -weight.ndim <= dim < weight.ndim:
        raise ValueError(f"[{api}] dim must be an int in [-{weight.ndim}, {weight.ndim}) for the "
                         f"{weight.ndim}-D parameter {name!r}, got {dim!r}")
    dim = int(dim) % weight.ndim
    h = weight.shape[dim]
    w = weight.size // h if h else 0
    hook = SpectralNorm(name, int(n_power_iterations), dim, float(eps))
    with no_grad():
        work = _float_work_dtype(weight.dtype)
        u, v = (_C.cast(_normalise(_C.gaussian([n], work, 0.0, 1.0, 0), hook.eps), weight.dtype) for n in (h, w))
        value = _C.clone(weight.detach())
    delattr(layer, name)
    setattr(layer, name + "_orig", weight)
    layer.register_buffer(name, value, persistable=False)
    layer.register_buffer(name + "_u", u)
    layer.register_buffer(name + "_v", v)
    layer.register_forward_pre_hook(hook)
    return layer
