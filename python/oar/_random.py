"""Random tensor creation with Paddle signatures.

All functions draw from one global counter-based (Philox-4x32-10) generator:
`oar.seed(n)` makes every later draw reproducible, and results do not depend
on the number of threads. A :class:`Generator` holds a state of its own and
lends it to the draws made under it (Note [generator state]).
"""
import builtins
import contextlib
import math
import os

import numpy as np

from . import _C
from .creation import _shape_list
from .framework import _dtype

# rand, randn, standard_normal, uniform, randint, randint_like, rand_like, randn_like, bernoulli,
# multinomial and randperm are declared in src/ops/random.toml (exported by _ops_gen); the
# samplers here draw with them, and other modules import rand, randn and multinomial from here.
from ._C import multinomial, rand, randn, uniform  # noqa: F401

__all__ = [
    "seed", "get_rng_state", "set_rng_state", "normal",
    "Generator", "manual_seed", "get_cuda_rng_state", "set_cuda_rng_state",
    "bernoulli_", "cauchy_", "geometric_", "log_normal", "log_normal_", "binomial", "poisson", "standard_gamma",
    # Activations Paddle also exposes at top level (defined in oar.nn.functional).
    "relu", "relu_",
]


class GeneratorState(tuple):
    """The (seed, offset) of the generator; offsets count 32-bit words drawn."""

    @property
    def current_seed(self):
        return self[0]


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
    """Seeds the global generator; later random draws are reproducible. Returns
    the global generator (an oar.Generator), as Paddle does.

    >>> import oar
    >>> _ = oar.seed(7); a = oar.rand([3])
    >>> g = oar.seed(7); b = oar.rand([3])
    >>> bool((a.numpy() == b.numpy()).all()), g.initial_seed()
    (True, 7)
    """
    if isinstance(seed, builtins.bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"[oar.seed] seed must be an int, got {type(seed).__name__}")
    _C.seed(int(seed) & 0xFFFFFFFFFFFFFFFF)
    return _default_generator


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
    """Restores a state returned by get_rng_state: the draws that follow repeat.

    >>> import oar
    >>> state = oar.get_rng_state()
    >>> a = oar.rand([3])
    >>> oar.set_rng_state(state)
    >>> bool((oar.rand([3]) == a).all())
    True
    """
    st = state_list[0] if isinstance(state_list, list) else state_list
    if not isinstance(st, tuple) or len(st) != 2:
        raise TypeError("[oar.set_rng_state] expects the list returned by oar.get_rng_state()")
    _C.set_rng_state(int(st[0]), int(st[1]))


# Note [generator state]: oar has one Philox stream per process, whose state is
# (seed, offset). A Generator keeps a state of its own; a draw made under it
# (`with gen._drawing():`, or a `generator=` argument) swaps that state into the
# global slot, draws, keeps the advanced state and swaps the global one back. The
# swap is not atomic with draws made meanwhile by other threads.
_U64 = 0xFFFFFFFFFFFFFFFF


def _seed_value(seed, api):
    if isinstance(seed, builtins.bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"[{api}] seed must be an int, got {type(seed).__name__}")
    return int(seed) & _U64


def _state_value(state, api):
    if isinstance(state, list) and len(state) == 1:
        state = state[0]
    if (not isinstance(state, tuple) or len(state) != 2
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, builtins.bool) for v in state)):
        raise TypeError(f"[{api}] expected a GeneratorState (seed, offset) from get_state(), got {state!r}")
    return GeneratorState((int(state[0]) & _U64, int(state[1])))


class Generator:
    """A random generator with its own state (paddle.Generator).

    ``manual_seed`` restarts it; ``get_state``/``set_state`` save and restore it;
    draws made under it leave the global generator untouched (Note [generator state]).

    >>> import oar
    >>> g = oar.Generator().manual_seed(42)
    >>> g.initial_seed()
    42
    >>> st = g.get_state()
    >>> a = oar.zeros([3]).random_(0, 100, generator=g)
    >>> _ = g.set_state(st)
    >>> b = oar.zeros([3]).random_(0, 100, generator=g)
    >>> a.numpy().tolist() == b.numpy().tolist()
    True
    """

    def __init__(self, seed=None):
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        self._state = GeneratorState((_seed_value(seed, "oar.Generator"), 0))

    def manual_seed(self, seed):
        """Restarts the generator from `seed`; returns the generator.

        >>> import oar
        >>> oar.Generator().manual_seed(3).get_state()
        (3, 0)
        """
        self.set_state((_seed_value(seed, "oar.Generator.manual_seed"), 0))
        return self

    def seed(self):
        """Restarts the generator from a non-deterministic seed and returns that seed.

        >>> import oar
        >>> g = oar.Generator(); s = g.seed(); s == g.initial_seed()
        True
        """
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed the generator was last started from.

        >>> import oar
        >>> oar.Generator(7).initial_seed()
        7
        """
        return self.get_state()[0]

    def get_state(self):
        """The state, a GeneratorState (seed, offset).

        >>> import oar
        >>> oar.Generator(5).get_state()
        (5, 0)
        """
        return self._state

    def set_state(self, state):
        """Restores a state returned by get_state; returns the generator.

        >>> import oar
        >>> g = oar.Generator(1); _ = g.set_state((1, 8)); g.get_state()
        (1, 8)
        """
        self._state = _state_value(state, "oar.Generator.set_state")
        return self

    def random(self):
        """A random 64-bit unsigned integer drawn from the generator.

        >>> import oar
        >>> g = oar.Generator(9); a = g.random(); _ = g.manual_seed(9); a == g.random()
        True
        """
        with self._drawing():
            lo, hi = _C.randint(0, 1 << 32, [2], _C.dtype.int64).numpy().tolist()
        return (int(hi) << 32) | int(lo)

    @contextlib.contextmanager
    def _drawing(self):
        """Draws made inside use (and advance) this generator's state."""
        saved = _C.get_rng_state()
        _C.set_rng_state(*self._state)
        try:
            yield self
        finally:
            self._state = GeneratorState(_C.get_rng_state())
            _C.set_rng_state(*saved)

    def __repr__(self):
        return f"oar.Generator(state={tuple(self.get_state())})"


class _GlobalGenerator(Generator):
    """The process-wide generator: its state is the one oar.seed sets."""

    def __init__(self):
        pass

    def get_state(self):
        return GeneratorState(_C.get_rng_state())

    def set_state(self, state):
        _C.set_rng_state(*_state_value(state, "oar.Generator.set_state"))
        return self

    @contextlib.contextmanager
    def _drawing(self):
        yield self


_default_generator = _GlobalGenerator()


def _drawing(generator, api):
    if generator is None:
        return contextlib.nullcontext()
    if not isinstance(generator, Generator):
        raise TypeError(f"[{api}] generator must be an oar.Generator, got {type(generator).__name__}")
    return generator._drawing()


def manual_seed(seed):
    """Seeds the global generator (as oar.seed) and returns it as a Generator.

    >>> import oar
    >>> g = oar.manual_seed(11)
    >>> g.initial_seed(), g.get_state() == oar.get_rng_state()[0]
    (11, True)
    """
    _C.seed(_seed_value(seed, "oar.manual_seed"))
    return _default_generator


def get_cuda_rng_state():
    """The states of the per-GPU generators: an empty list, because oar draws every
    random number with the CPU generator (get_rng_state), also for tensors later
    moved to a GPU.

    >>> import oar
    >>> oar.get_cuda_rng_state()
    []
    """
    return []


def set_cuda_rng_state(state_list):
    """Restores states returned by get_cuda_rng_state (an empty list: see there).

    >>> import oar
    >>> oar.set_cuda_rng_state(oar.get_cuda_rng_state())
    """
    if not isinstance(state_list, (list, tuple)):
        raise TypeError(f"[oar.set_cuda_rng_state] expected the list returned by get_cuda_rng_state(), "
                        f"got {type(state_list).__name__}")
    if len(state_list):
        raise ValueError(f"[oar.set_cuda_rng_state] oar has no per-GPU generators, so the list must be empty "
                         f"(as get_cuda_rng_state() returns), got {len(state_list)} state(s); use set_rng_state")


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
    return _C.relu_(x) if inplace else _C._nn_functional.relu(x)


def relu_(x, name=None):
    """relu in place.

    >>> import oar
    >>> x = oar.to_tensor([-1.0, 2.0]); _ = oar.relu_(x); x.numpy().tolist()
    [0.0, 2.0]
    """
    return _C.relu_(x)


# Samplers filling a tensor in place (Tensor methods) and drawing from
# distributions without a closed-form inverse (binomial, poisson, gamma).

def _float_tensor(x, api):
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{api}] x must be a Tensor, got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"[{api}] x must have a floating-point dtype, got {x.dtype.name}")
    return x


def _unit(x):
    """float64 uniform samples in [0, 1) with the shape of x."""
    return _C.uniform(list(x.shape), _C.dtype.float64, 0.0, 1.0, 0)


def _fill_(x, values):
    from .autograd import no_grad

    with no_grad():
        x.copy_(_C.cast(values, x.dtype))
    return x


def _check_scalar(v, api, what, lo=None, hi=None, lo_open=False, hi_open=False):
    if isinstance(v, builtins.bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"[{api}] {what} must be a number, got {type(v).__name__}")
    v = float(v)
    bad = (math.isnan(v) or (lo is not None and (v <= lo if lo_open else v < lo))
           or (hi is not None and (v >= hi if hi_open else v > hi)))
    if bad:
        rng = f"{'(' if lo_open else '['}{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}" \
              f"{')' if hi_open else ']'}"
        raise ValueError(f"[{api}] {what} must be in {rng}, got {v}")
    return v


def _prob(p, x, api, what, lo_open=False):
    """A probability (a number, or a tensor broadcastable to x) as a float64 tensor or float."""
    if not isinstance(p, _C.Tensor):
        return _check_scalar(p, api, what, 0.0, 1.0, lo_open=lo_open)
    a = p.numpy()
    try:
        np.broadcast_shapes(a.shape, tuple(x.shape))
    except ValueError:
        raise ValueError(f"[{api}] {what} of shape {list(a.shape)} does not broadcast to x's shape "
                         f"{list(x.shape)}") from None
    if a.size and (np.isnan(a).any() or a.min() < 0 or a.max() > 1 or (lo_open and a.min() == 0)):
        raise ValueError(f"[{api}] {what} must lie in {'(0' if lo_open else '[0'}, 1], got values in "
                         f"[{a.min()}, {a.max()}]")
    return _C.cast(p, _C.dtype.float64)


def bernoulli_(x, p=0.5, name=None):
    """Fills x with 1 (probability p) or 0, in place; p is a number or a tensor broadcastable to x.

    >>> import oar
    >>> x = oar.zeros([3]); x.bernoulli_(oar.to_tensor([0.0, 1.0, 1.0])).numpy().tolist()
    [0.0, 1.0, 1.0]
    """
    api = "oar.bernoulli_"
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{api}] x must be a Tensor, got {type(x).__name__}")
    return _fill_(x, _unit(x) < _prob(p, x, api, "p"))


def cauchy_(x, loc=0, scale=1, name=None):
    """Fills x with Cauchy samples loc + scale * tan(pi * (u - 1/2)), in place.

    >>> import oar
    >>> _ = oar.seed(0)
    >>> v = oar.zeros([4000]).cauchy_(loc=3.0, scale=0.5).numpy()
    >>> bool(abs(float(__import__("numpy").median(v)) - 3.0) < 0.1)
    True
    """
    api = "oar.cauchy_"
    _float_tensor(x, api)
    loc = _check_scalar(loc, api, "loc")
    scale = _check_scalar(scale, api, "scale", 0.0, lo_open=True)
    return _fill_(x, ((_unit(x) - 0.5) * math.pi).tan() * scale + loc)


def geometric_(x, probs, name=None):
    """Fills x with the number of Bernoulli(probs) trials up to the first success
    (1, 2, ...; mean 1/probs), in place. Paddle 3.3 fills non-integral values
    (the continuous log(u)/log(1-p)); oar draws the integer count its
    documentation describes.

    >>> import oar
    >>> oar.zeros([3]).geometric_(1.0).numpy().tolist()
    [1.0, 1.0, 1.0]
    """
    api = "oar.geometric_"
    _float_tensor(x, api)
    p = _prob(probs, x, api, "probs", lo_open=True)
    # log1p(-p) is -inf at p = 1: the ratio is then 0 and the count 1
    if isinstance(p, float):
        denom = math.log1p(-p) if p < 1.0 else -math.inf
    else:
        denom = (-p).log1p()
    k = ((-_unit(x)).log1p() / denom).ceil()
    return _fill_(x, k.clip(min=1.0))


def log_normal(mean=1.0, std=2.0, shape=None, name=None):
    """exp of normal(mean, std) samples: log-normal with median e**mean. `mean` and
    `std` may be tensors, as for normal.

    >>> import oar
    >>> oar.log_normal(0.0, 0.0, [2]).numpy().tolist()
    [1.0, 1.0]
    """
    return normal(mean, std, shape).exp()


def log_normal_(x, mean=1.0, std=2.0, name=None):
    """Fills x with log-normal samples exp(N(mean, std**2)), in place.

    >>> import oar
    >>> oar.zeros([2]).log_normal_(0.0, 0.0).numpy().tolist()
    [1.0, 1.0]
    """
    api = "oar.log_normal_"
    _float_tensor(x, api)
    mean = _check_scalar(mean, api, "mean")
    std = _check_scalar(std, api, "std", 0.0)
    return _fill_(x, _C.gaussian(list(x.shape), _C.dtype.float64, mean, std, 0).exp())


def _exponential_(self, lam=1.0, name=None):
    """Fills self with exponential samples of rate lam (mean 1/lam), in place.

    >>> import oar
    >>> _ = oar.seed(0)
    >>> m = float(oar.zeros([20000]).exponential_(4.0).mean())
    >>> abs(m - 0.25) < 0.01
    True
    """
    api = "oar.Tensor.exponential_"
    _float_tensor(self, api)
    lam = _check_scalar(lam, api, "lam", 0.0, lo_open=True)
    return _fill_(self, (-_unit(self)).log1p() * (-1.0 / lam))


# The largest integer each dtype holds exactly: random_() without bounds draws in [0, it].
_RANDOM_MAX = {"float16": 2 ** 11, "bfloat16": 2 ** 8, "float32": 2 ** 24, "float64": 2 ** 53,
               "bool": 1, "uint8": 255, "int8": 127, "int16": 2 ** 15 - 1, "int32": 2 ** 31 - 1,
               "int64": 2 ** 63 - 1}
_RANDOM_MIN = {"uint8": 0, "int8": -128, "int16": -2 ** 15, "int32": -2 ** 31, "int64": -2 ** 63}


def _random_(self, from_=0, to=None, *, generator=None):
    """Fills self with integers drawn uniformly from [from_, to - 1], in place.
    `random_(n)` draws from [0, n - 1]; `random_()` from [0, m], m the largest
    integer the dtype holds exactly (2**24 for float32, the maximum for integer dtypes).

    >>> import oar
    >>> v = oar.zeros([100], dtype="int64").random_(3, 7).numpy()
    >>> sorted(set(v.tolist()))
    [3, 4, 5, 6]
    """
    api = "oar.Tensor.random_"
    if not isinstance(self, _C.Tensor):
        raise TypeError(f"[{api}] x must be a Tensor, got {type(self).__name__}")
    name = self.dtype.name
    if name not in _RANDOM_MAX:
        raise TypeError(f"[{api}] x must have a real dtype, got {name}")
    for what, v in (("from_", from_), ("to", to)):
        if v is not None and (isinstance(v, builtins.bool) or not isinstance(v, (int, np.integer))):
            raise TypeError(f"[{api}] {what} must be an int, got {type(v).__name__}")
    hi_max = _RANDOM_MAX[name]
    if to is None:
        low, high = (0, int(from_)) if from_ else (0, hi_max + 1)
    else:
        low, high = int(from_), int(to)
    if low >= high:
        raise ValueError(f"[{api}] from_ must be less than to, got from_={low} to={high}")
    if low < _RANDOM_MIN.get(name, -hi_max) or high - 1 > hi_max:
        raise ValueError(f"[{api}] [{low}, {high - 1}] does not fit {name}, which holds integers in "
                         f"[{_RANDOM_MIN.get(name, -hi_max)}, {hi_max}] exactly")
    high = builtins.min(high, 2 ** 63 - 1)  # int64's maximum is then left out
    with _drawing(generator, api):
        values = _C.randint(low, high, list(self.shape), _C.dtype.int64)
    return _fill_(self, values)


def _numpy_generator():
    """A NumPy generator keyed by two words drawn from oar's generator, so that
    oar.seed makes the samplers built on it reproducible too."""
    key = _C.randint(0, 2 ** 62, [2], _C.dtype.int64).numpy().tolist()
    return np.random.Generator(np.random.Philox(np.random.SeedSequence([int(k) for k in key])))


def _float_array(x, api, what="x"):
    _float_tensor(x, api)
    return x.numpy().astype(np.float64)


def binomial(count, prob, name=None):
    """Binomial(count, prob) samples (int64): successes in count trials of
    probability prob; count and prob broadcast together.

    >>> import oar
    >>> oar.binomial(oar.to_tensor([5, 7]), oar.to_tensor([1.0, 0.0])).numpy().tolist()
    [5, 0]
    """
    api = "oar.binomial"
    for what, t in (("count", count), ("prob", prob)):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"[{api}] {what} must be a Tensor, got {type(t).__name__}")
    n, p = count.numpy(), prob.numpy().astype(np.float64)
    try:
        shape = np.broadcast_shapes(n.shape, p.shape)
    except ValueError:
        raise ValueError(f"[{api}] count of shape {list(n.shape)} and prob of shape {list(p.shape)} "
                         "do not broadcast") from None
    if n.size and (np.any(n < 0) or np.any(n != np.floor(n))):
        raise ValueError(f"[{api}] count must hold non-negative integers, got values in [{n.min()}, {n.max()}]")
    if p.size and (np.isnan(p).any() or p.min() < 0 or p.max() > 1):
        raise ValueError(f"[{api}] prob must lie in [0, 1], got values in [{p.min()}, {p.max()}]")
    out = _numpy_generator().binomial(np.broadcast_to(n.astype(np.int64), shape), np.broadcast_to(p, shape))
    return _to_tensor(np.asarray(out, dtype=np.int64))


def poisson(x, name=None):
    """Poisson samples of rate x (same shape and dtype as x).

    >>> import oar
    >>> oar.poisson(oar.to_tensor([0.0, 0.0])).numpy().tolist()
    [0.0, 0.0]
    """
    api = "oar.poisson"
    lam = _float_array(x, api)
    if lam.size and (np.isnan(lam).any() or lam.min() < 0):
        raise ValueError(f"[{api}] the rates x must be non-negative, got values in [{lam.min()}, {lam.max()}]")
    return _C.cast(_to_tensor(np.asarray(_numpy_generator().poisson(lam), dtype=np.float64)), x.dtype)


def standard_gamma(x, name=None):
    """Gamma(shape=x, scale=1) samples (same shape and dtype as x; mean x, variance x).

    >>> import oar
    >>> _ = oar.seed(0)
    >>> m = float(oar.standard_gamma(oar.full([20000], 3.0)).mean())
    >>> abs(m - 3.0) < 0.05
    True
    """
    api = "oar.standard_gamma"
    a = _float_array(x, api)
    if a.size and (np.isnan(a).any() or a.min() <= 0):
        raise ValueError(f"[{api}] the shapes x must be positive, got values in [{a.min()}, {a.max()}]")
    return _C.cast(_to_tensor(np.asarray(_numpy_generator().standard_gamma(a), dtype=np.float64)), x.dtype)


def _to_tensor(a):
    from .creation import to_tensor

    return to_tensor(np.array(a, order="C"))  # (ascontiguousarray would make a 0-D array 1-D)


__tensor_methods__ = (("uniform_", "_uniform_"), ("normal_", "_normal_"), "bernoulli_", "cauchy_", "geometric_",
                      "log_normal_", ("exponential_", "_exponential_"), ("random_", "_random_"))
