"""Random tensor creation with Paddle signatures.

All functions draw from one global counter-based (Philox-4x32-10) generator:
`oar.seed(n)` makes every later draw reproducible, and results do not depend
on the number of threads.
"""
import builtins

import numpy as np

from . import _C
from .creation import _shape_list
from .framework import _dtype

__all__ = [
    "seed", "get_rng_state", "set_rng_state", "rand", "randn", "standard_normal", "randint", "randint_like",
    "rand_like", "randn_like", "uniform", "normal", "bernoulli", "multinomial", "randperm",
    # Activations Paddle also exposes at top level (defined in oar.nn.functional).
    "relu", "relu_",
]


class GeneratorState(tuple):
    """The (seed, offset) of the generator; offsets count 32-bit words drawn."""


def _shape(shape, api):
    s = _shape_list(shape, api)
    for d in s:
        if d < 0:
            raise ValueError(f"[{api}] shape dims must be non-negative, got {s}")
    return s


def _float_dtype(dtype, api):
    dt = _dtype(dtype)
    if dt is None:
        return _C.get_default_dtype()
    if dt not in (_C.dtype.float16, _C.dtype.bfloat16, _C.dtype.float32, _C.dtype.float64):
        raise TypeError(f"[{api}] dtype must be a floating-point dtype, got {dt}")
    return dt


def seed(seed):
    """Seeds the global generator; later random draws are reproducible.

    >>> import oar
    >>> _ = oar.seed(7); a = oar.rand([3])
    >>> _ = oar.seed(7); b = oar.rand([3])
    >>> bool((a.numpy() == b.numpy()).all())
    True
    """
    if isinstance(seed, builtins.bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"[oar.seed] seed must be an int, got {type(seed).__name__}")
    _C.seed(int(seed) & 0xFFFFFFFFFFFFFFFF)
    return GeneratorState(_C.get_rng_state())


def get_rng_state(device=None):
    """The generator state as a list (one entry per device; oar has one CPU generator).

    >>> import oar
    >>> st = oar.get_rng_state()
    >>> a = oar.rand([2]); oar.set_rng_state(st); b = oar.rand([2])
    >>> bool((a.numpy() == b.numpy()).all())
    True
    """
    return [GeneratorState(_C.get_rng_state())]


def set_rng_state(state_list, device=None):
    """Restores a state returned by get_rng_state."""
    st = state_list[0] if isinstance(state_list, list) else state_list
    if not isinstance(st, tuple) or len(st) != 2:
        raise TypeError("[oar.set_rng_state] expects the list returned by oar.get_rng_state()")
    _C.set_rng_state(int(st[0]), int(st[1]))


def uniform(shape, dtype=None, min=-1.0, max=1.0, seed=0, name=None):  # noqa: A002 - Paddle's names
    """Uniform samples in [min, max). A non-zero `seed` uses that seed instead of the global generator.

    >>> import oar
    >>> x = oar.uniform([2, 3], min=2.0, max=3.0)
    >>> v = x.numpy(); bool(((v >= 2.0) & (v < 3.0)).all())
    True
    """
    s = _shape(shape, "oar.uniform")
    dt = _float_dtype(dtype, "oar.uniform")
    if float(min) > float(max):
        raise ValueError(f"[oar.uniform] min must be <= max, got min={min} max={max}")
    return _C.uniform(s, dt, float(min), float(max), int(seed) & 0xFFFFFFFFFFFFFFFF)


def rand(shape, dtype=None, name=None):
    """Uniform samples in [0, 1).

    >>> import oar
    >>> oar.rand([2, 2]).shape
    [2, 2]
    """
    return _C.uniform(_shape(shape, "oar.rand"), _float_dtype(dtype, "oar.rand"), 0.0, 1.0, 0)


def randn(shape, dtype=None, name=None):
    """Standard normal samples (Box-Muller).

    >>> import oar
    >>> oar.randn([3]).dtype == oar.float32
    True
    """
    return _C.gaussian(_shape(shape, "oar.randn"), _float_dtype(dtype, "oar.randn"), 0.0, 1.0, 0)


def standard_normal(shape, dtype=None, name=None):
    """Same as randn.

    >>> import oar
    >>> oar.standard_normal([2]).shape
    [2]
    """
    return _C.gaussian(_shape(shape, "oar.standard_normal"), _float_dtype(dtype, "oar.standard_normal"), 0.0, 1.0, 0)


def normal(mean=0.0, std=1.0, shape=None, name=None):
    """Normal samples. `mean` and `std` may be tensors (the result has their broadcast shape).

    >>> import oar
    >>> oar.normal(10.0, 0.0, [2]).numpy().tolist()
    [10.0, 10.0]
    >>> m = oar.to_tensor([0.0, 100.0])
    >>> bool(oar.normal(m, 1e-3).numpy()[1] > 99)
    True
    """
    if isinstance(mean, _C.Tensor) or isinstance(std, _C.Tensor):
        mt = mean if isinstance(mean, _C.Tensor) else None
        st = std if isinstance(std, _C.Tensor) else None
        dt = (mt if mt is not None else st).dtype
        s = list(np.broadcast_shapes(tuple(mt.shape) if mt is not None else (),
                                     tuple(st.shape) if st is not None else ()))
        if st is not None and bool((st.numpy() < 0).any()):
            raise ValueError("[oar.normal] std must be non-negative")
        z = _C.gaussian(s, _float_dtype(dt, "oar.normal"), 0.0, 1.0, 0)
        return z * std + mean
    if float(std) < 0:
        raise ValueError(f"[oar.normal] std must be non-negative, got {std}")
    s = _shape(shape if shape is not None else [1], "oar.normal")
    return _C.gaussian(s, _C.get_default_dtype(), float(mean), float(std), 0)


def randint(low=0, high=None, shape=[1], dtype=None, name=None):  # noqa: B006 - Paddle's default
    """Integers uniform in [low, high) (in [0, low) when high is None).

    >>> import oar
    >>> x = oar.randint(0, 5, [100])
    >>> v = x.numpy(); bool(((v >= 0) & (v < 5)).all()) and x.dtype == oar.int64
    True
    """
    if high is None:
        low, high = 0, low
    if int(low) >= int(high):
        raise ValueError(f"[oar.randint] low must be less than high, got low={low} high={high}")
    dt = _dtype(dtype) or _C.dtype.int64
    if dt not in (_C.dtype.int32, _C.dtype.int64):
        raise TypeError(f"[oar.randint] dtype must be int32 or int64, got {dt}")
    return _C.randint(int(low), int(high), _shape(shape, "oar.randint"), dt)


def randint_like(x, low=0, high=None, dtype=None, name=None):
    """Integers in [low, high) with the shape of x (and its dtype unless `dtype` is given).

    >>> import oar
    >>> oar.randint_like(oar.zeros([2, 3]), 0, 4).dtype == oar.float32
    True
    """
    if high is None:
        low, high = 0, low
    if int(low) >= int(high):
        raise ValueError(f"[oar.randint_like] low must be less than high, got low={low} high={high}")
    dt = _dtype(dtype) or x.dtype
    return _C.cast(_C.randint(int(low), int(high), list(x.shape), _C.dtype.int64), dt)


def rand_like(x, dtype=None, name=None):
    """Uniform [0, 1) samples with the shape (and dtype) of x.

    >>> import oar
    >>> oar.rand_like(oar.zeros([2], dtype="float64")).dtype == oar.float64
    True
    """
    return _C.uniform(list(x.shape), _float_dtype(dtype or x.dtype, "oar.rand_like"), 0.0, 1.0, 0)


def randn_like(x, dtype=None, name=None):
    """Standard normal samples with the shape (and dtype) of x.

    >>> import oar
    >>> oar.randn_like(oar.zeros([4])).shape
    [4]
    """
    return _C.gaussian(list(x.shape), _float_dtype(dtype or x.dtype, "oar.randn_like"), 0.0, 1.0, 0)


def bernoulli(x, name=None):
    """1 with probability x[i], else 0 (same shape and dtype as x).

    >>> import oar
    >>> oar.bernoulli(oar.to_tensor([0.0, 1.0])).numpy().tolist()
    [0.0, 1.0]
    """
    return _C.bernoulli(x)


def multinomial(x, num_samples=1, replacement=False, name=None):
    """Category indices drawn from the (unnormalised) probabilities in the last axis of x.

    >>> import oar
    >>> oar.multinomial(oar.to_tensor([0.0, 0.0, 1.0]), 2, replacement=True).numpy().tolist()
    [2, 2]
    """
    return _C.multinomial(x, int(num_samples), builtins.bool(replacement))


def randperm(n, dtype="int64", name=None):
    """A random permutation of 0 .. n-1.

    >>> import oar
    >>> sorted(oar.randperm(5).numpy().tolist())
    [0, 1, 2, 3, 4]
    """
    return _C.randperm(int(n), _dtype(dtype))


def _uniform_(self, min=-1.0, max=1.0, seed=0, name=None):  # noqa: A002
    """Fills self with uniform samples in [min, max), in place."""
    from .autograd import no_grad

    with no_grad():
        self.copy_(uniform(list(self.shape), self.dtype, min, max, seed))
    return self


def _normal_(self, mean=0.0, std=1.0, name=None):
    """Fills self with normal samples, in place."""
    from .autograd import no_grad

    with no_grad():
        self.copy_(_C.gaussian(list(self.shape), self.dtype, float(mean), float(std), 0))
    return self


def relu(x, inplace=False, name=None):
    """max(x, 0) (paddle.relu; `inplace=True` overwrites x).

    >>> import oar
    >>> oar.relu(oar.to_tensor([-1.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
    """
    return _C.relu_(x) if inplace else _C.relu(x)


def relu_(x, name=None):
    """relu in place.

    >>> import oar
    >>> x = oar.to_tensor([-1.0, 2.0]); _ = oar.relu_(x); x.numpy().tolist()
    [0.0, 2.0]
    """
    return _C.relu_(x)


__tensor_methods__ = (("uniform_", "_uniform_"), ("normal_", "_normal_"))
