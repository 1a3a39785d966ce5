"""The op database: every op declares its samples, reference and errors once.

test_opdb.py parametrises over OP_DB and checks, for each entry:
- forward against a NumPy reference for every declared dtype (TOLERANCES per dtype),
  on 0-D, zero-size, broadcasting and non-contiguous inputs;
- gradients against central finite differences in float64 (complex128 too where
  `complex_grad` is set, with the conjugate-Wirtinger convention), and double
  backward (oar.grad with create_graph=True) against finite differences of the
  first gradient where `gradgrad` is set;
- error inputs raise the declared exception type with a message starting "[oar.<name>]".

To add an op, append an OpInfo to OP_DB (or call `register(OpInfo(...))` from a
test module). Sample arrays are NumPy float64/int64/bool arrays; the harness casts
float/int arrays to the dtype under test (bool arrays stay bool, e.g. conditions).
"""
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

import oar

FLOATS = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
INEXACT = FLOATS + COMPLEX
INTS = ("uint8", "int8", "int16", "int32", "int64")
REAL = INTS + FLOATS
NUMERIC = REAL + COMPLEX
ALL = ("bool",) + NUMERIC

# (atol, rtol) per dtype, for outputs compared against a float64 reference.
TOLERANCES = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (3e-2, 3e-2),
    "float32": (1e-5, 1e-5),
    "float64": (1e-10, 1e-10),
    "complex64": (1e-5, 1e-5),
    "complex128": (1e-10, 1e-10),
}
LOW_PRECISION = ("float16", "bfloat16")


@dataclass
class Sample:
    """Positional args (NumPy arrays become tensors, anything else is passed as is) and kwargs."""
    args: tuple
    kwargs: dict = field(default_factory=dict)
    noncontig: bool = False   # make tensor inputs non-contiguous views
    grad: bool = True         # use this sample for gradient checks
    check_dtype: bool = True  # check the output dtype against OpInfo.out_dtype

    def __repr__(self):
        shapes = [a.shape if isinstance(a, np.ndarray) else a for a in self.args]
        return f"Sample({shapes}, {self.kwargs}, noncontig={self.noncontig})"


@dataclass
class ErrorInput:
    fn: Callable[[], Any]
    exc: type
    prefix: str  # the message must start with this, e.g. "[oar.matmul]"


@dataclass
class OpInfo:
    name: str
    op: Callable
    ref: Callable
    dtypes: Sequence[str]
    samples: Callable[[str], list]  # dtype name -> list of Sample
    out_dtype: Optional[Callable[[str], str]] = None  # default: same as the input dtype
    grad: bool = False
    gradgrad: bool = False
    complex_grad: bool = False
    errors: Callable[[], list] = lambda: []
    tol: dict = field(default_factory=dict)  # per-dtype overrides of TOLERANCES
    grad_tol: tuple = (1e-6, 1e-5)
    creation: bool = False  # no tensor inputs; dtype is passed as the `dtype` kwarg
    family: str = "opdb"  # set by register: the opdb module the entry comes from

    def tolerance(self, dtype):
        return self.tol.get(dtype, TOLERANCES.get(dtype, (0, 0)))


OP_DB: list = []


def register(info):
    """Adds an entry; its family is the opdb module that registers it (the
    higher-order checks sample every family)."""
    import sys
    frame = sys._getframe(1)  # the nearest opdb_<area> module on the stack (helpers of opdb.py sit between)
    while frame is not None and not frame.f_globals.get("__name__", "").startswith("opdb_"):
        frame = frame.f_back
    info.family = frame.f_globals["__name__"] if frame is not None else "opdb"
    OP_DB.append(info)
    return info


# ---------------------------------------------------------------- tensors

_NP = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
       "int64": np.int64, "float16": np.float16, "float32": np.float32, "float64": np.float64,
       "complex64": np.complex64, "complex128": np.complex128}


def np_dtype(dtype):
    return _NP.get(dtype, np.float32)


def to_oar(arr, dtype, noncontig=False, stop_gradient=True, device=None):
    """A tensor of `dtype` holding arr's values (bool arrays stay bool); optionally a strided view,
    made on `device` (None: the CPU) so that the view is the device's own."""
    arr = np.asarray(arr)
    target = "bool" if arr.dtype == np.bool_ else dtype
    if noncontig and arr.ndim >= 2:
        # A transposed view of a buffer holding the data with axes 0 and 1 swapped.
        base = to_oar(np.ascontiguousarray(np.swapaxes(arr, 0, 1)), dtype, device=device)
        t = oar.transpose(base, _swap01(arr.ndim))
        t.stop_gradient = stop_gradient
        return t
    if noncontig and arr.ndim == 1:
        # Every other element of a buffer twice as long.
        t = oar.strided_slice(to_oar(np.repeat(arr, 2), dtype, device=device), [0], [0], [2 * arr.shape[0]], [2])
        t.stop_gradient = stop_gradient
        return t
    if target == "bfloat16":
        t = oar.to_tensor(arr.astype(np.float32)).astype("bfloat16")
    else:
        t = oar.to_tensor(arr.astype(_NP[target]))
    if device is not None:
        t = t.to(device)
    t.stop_gradient = stop_gradient
    return t


def _swap01(n):
    p = list(range(n))
    p[0], p[1] = 1, 0
    return p


def ref_array(t):
    """The values of tensor t as a NumPy array for the reference (low precision widened)."""
    a = t.numpy()
    if t.dtype in (oar.float16, oar.bfloat16, oar.float32):
        return a.astype(np.float64)
    if t.dtype == oar.complex64:
        return a.astype(np.complex128)
    return a


def bf16_round(a):
    """Round-to-nearest-even float32 -> bfloat16 -> float32, done on the bits."""
    b = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)


# ---------------------------------------------------------------- sample generators

def _rng(seed=0):
    return np.random.default_rng(seed)


def _values(shape, dtype, lo, hi, rng):
    return np.asarray(_raw_values(shape, dtype, lo, hi, rng))


def _raw_values(shape, dtype, lo, hi, rng):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in INTS:
        lo_i = max(int(np.floor(lo)), 0 if dtype == "uint8" else -100)
        hi_i = min(int(np.ceil(hi)), 100)
        return rng.integers(lo_i, max(hi_i, lo_i + 1), size=shape).astype(np.int64)
    v = rng.uniform(lo, hi, size=shape)
    if dtype in COMPLEX:
        v = v + 1j * rng.uniform(lo, hi, size=shape)
    return v


UNARY_SHAPES = [((), False), ((5,), False), ((3, 4), False), ((0, 3), False), ((2, 3, 4), True),
                ((3, 4), True)]


def unary_samples(lo=-2.0, hi=2.0, special=None):
    def gen(dtype):
        rng = _rng(1)
        out = [Sample((_values(s, dtype, lo, hi, rng),), noncontig=nc) for s, nc in UNARY_SHAPES]
        if special is not None and dtype in INEXACT:
            out.append(Sample((np.array(special),), grad=False))
        return out
    return gen


BINARY_SHAPES = [((3, 4), (3, 4), False), ((2, 3, 4), (4,), False), ((2, 1, 4), (3, 1), False),
                 ((), (), False), ((3,), (), False), ((), (2, 3), False), ((0, 3), (3,), False),
                 ((3, 4), (3, 4), True), ((2, 3, 4), (3, 4), True)]


def binary_samples(lo=-3.0, hi=3.0, ylo=None, yhi=None, scalar=True, y_nonzero=False):
    ylo = lo if ylo is None else ylo
    yhi = hi if yhi is None else yhi

    def gen(dtype):
        rng = _rng(2)
        out = []
        for sx, sy, nc in BINARY_SHAPES:
            x = _values(sx, dtype, lo, hi, rng)
            y = _values(sy, dtype, ylo, yhi, rng)
            if y_nonzero and dtype != "bool":
                y = np.where(y == 0, 1, y)
            out.append(Sample((x, y), noncontig=nc))
        if scalar and dtype != "bool":
            x = _values((3, 4), dtype, lo, hi, rng)
            s = 2 if dtype in INTS else 1.5
            if dtype in INTS and ylo > 2:
                s = int(ylo) + 1
            out.append(Sample((x, s)))
            xs = s if not (dtype in INTS and lo > 0) else int(lo) + 1
            out.append(Sample((xs, _values((3, 4), dtype, ylo, yhi, rng))))
        return out
    return gen


def same(d):
    return d


def to_bool(d):
    return "bool"


def to_real(d):
    return {"complex64": "float32", "complex128": "float64"}.get(d, d)


def sum_dtype(d):
    return "int64" if d in INTS + ("bool",) else d


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.{name}]")


# ---------------------------------------------------------------- binary ops

def _binary_errors(name, fn):
    dt = "int64" if name.startswith("bitwise") else "float32"
    return lambda: [
        _err(lambda: fn(oar.ones([2, 3], dt), oar.ones([4], dt)), ValueError, name),
        _err(lambda: fn(oar.ones([2, 3], dt), oar.ones([3, 2], dt)), ValueError, name),
    ] + ([_err(lambda: fn(oar.ones([2]), oar.ones([2])), TypeError, name)] if dt == "int64" else [])


def _binary(name, ref, dtypes, out=same, grad=False, gradgrad=False, complex_grad=False, **kw):
    fn = getattr(oar, name)
    samples = kw.pop("samples", None) or binary_samples(**kw)
    register(OpInfo(name, fn, ref, dtypes, samples, out_dtype=out, grad=grad, gradgrad=gradgrad,
                    complex_grad=complex_grad, errors=_binary_errors(name, fn)))


_binary("add", np.add, ALL[1:], grad=True, gradgrad=True, complex_grad=True)
_binary("subtract", np.subtract, NUMERIC, grad=True, gradgrad=True, complex_grad=True)
_binary("multiply", np.multiply, NUMERIC, grad=True, gradgrad=True, complex_grad=True)
_binary("divide", np.divide, INEXACT, grad=True, gradgrad=True, complex_grad=True, ylo=0.5, yhi=3.0)
_binary("floor_divide", np.floor_divide, REAL, lo=-20, hi=20, ylo=1, yhi=7)
_binary("remainder", np.mod, REAL, lo=-20, hi=20, ylo=1, yhi=7)
_binary("pow", np.power, ("float16", "bfloat16", "float32", "float64", "int32", "int64"), grad=True,
        gradgrad=True, lo=0.5, hi=2.0, ylo=0.0, yhi=3.0)
_binary("maximum", np.maximum, REAL, grad=True, gradgrad=True)
_binary("minimum", np.minimum, REAL, grad=True, gradgrad=True)
_binary("fmax", np.fmax, REAL, grad=True)
_binary("fmin", np.fmin, REAL, grad=True)
_binary("atan2", np.arctan2, FLOATS, grad=True, gradgrad=True)
_binary("logaddexp", np.logaddexp, FLOATS, grad=True, gradgrad=True, lo=-30.0, hi=30.0)
_binary("hypot", np.hypot, FLOATS, grad=True, gradgrad=True, lo=0.5, hi=3.0)
_binary("copysign", np.copysign, FLOATS, grad=True, gradgrad=True, lo=0.5, hi=3.0, ylo=-3.0, yhi=3.0)
_binary("heaviside", np.heaviside, ("int32", "int64", "float32", "float64"), grad=True, gradgrad=False, lo=-2, hi=2)
_binary("gcd", np.gcd, ("int8", "int16", "int32", "int64"), lo=-50, hi=50, scalar=False)
_binary("lcm", np.lcm, ("int16", "int32", "int64"), lo=-50, hi=50, scalar=False)
for _n, _r in [("equal", np.equal), ("not_equal", np.not_equal)]:
    _binary(_n, _r, ALL, out=to_bool, lo=-2, hi=2)
for _n, _r in [("less_than", np.less), ("less_equal", np.less_equal), ("greater_than", np.greater),
               ("greater_equal", np.greater_equal)]:
    _binary(_n, _r, REAL, out=to_bool, lo=-2, hi=2)
for _n, _r in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
               ("logical_xor", np.logical_xor)]:
    _binary(_n, _r, ("bool", "int32", "int64", "float32"), out=to_bool, lo=-1, hi=1, scalar=False)
for _n, _r in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
               ("bitwise_xor", np.bitwise_xor)]:
    _binary(_n, _r, ("bool",) + INTS, lo=-50, hi=50)


# ---------------------------------------------------------------- unary ops

def _unary(name, ref, dtypes, lo=-2.0, hi=2.0, out=same, grad=True, gradgrad=True, complex_grad=False,
           special=None, tol=None):
    fn = getattr(oar, name)

    def errors():
        if set(dtypes) <= set(FLOATS):  # real-only math rejects complex input
            return [_err(lambda: fn(oar.to_tensor(np.array([1 + 1j]))), TypeError, name)]
        if name == "bitwise_not":
            return [_err(lambda: fn(oar.ones([2])), TypeError, name)]
        return []
    register(OpInfo(name, fn, ref, dtypes, unary_samples(lo, hi, special), out_dtype=out, grad=grad,
                    gradgrad=gradgrad and grad, complex_grad=complex_grad, tol=tol or {}, errors=errors))


def _np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _np_erf(x):
    from math import erf
    return np.vectorize(erf, otypes=[np.float64])(x) if np.size(x) else np.zeros(np.shape(x))


def _np_erfinv(y):
    # Newton on erf(x) = y from a rough start; converges to float64 precision here.
    y = np.asarray(y, dtype=np.float64)
    x = np.zeros_like(y)
    for _ in range(60):
        x = x - (_np_erf(x) - y) / (2 / np.sqrt(np.pi) * np.exp(-x * x))
    return x


def _np_lgamma(x):
    from math import lgamma
    return np.vectorize(lgamma, otypes=[np.float64])(x) if np.size(x) else np.zeros(np.shape(x))


def _np_digamma(x):
    # Recurrence up to x >= 6, then the asymptotic series.
    x = np.asarray(x, dtype=np.float64).copy()
    acc = np.zeros_like(x)
    while np.any(x < 6):
        m = x < 6
        acc[m] -= 1.0 / x[m]
        x[m] += 1
    x2 = 1.0 / (x * x)
    return acc + np.log(x) - 0.5 / x - x2 * (1 / 12 - x2 * (1 / 120 - x2 * (1 / 252 - x2 * (1 / 240 - x2 / 132))))


_SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0]
_unary("neg", np.negative, NUMERIC[1:], complex_grad=True)
_unary("abs", np.abs, NUMERIC[1:], out=to_real, complex_grad=True, lo=0.2, hi=2.0)
_unary("sign", np.sign, REAL[1:], grad=False)
_unary("exp", np.exp, INEXACT, complex_grad=True)
_unary("expm1", np.expm1, FLOATS)
_unary("log", np.log, INEXACT, lo=0.2, hi=3.0, complex_grad=True)
_unary("log2", np.log2, FLOATS, lo=0.2, hi=3.0)
_unary("log10", np.log10, INEXACT, lo=0.2, hi=3.0)
_unary("log1p", np.log1p, FLOATS, lo=-0.5, hi=3.0)
_unary("sqrt", np.sqrt, INEXACT, lo=0.2, hi=3.0, complex_grad=True)
_unary("rsqrt", lambda x: 1 / np.sqrt(x), INEXACT, lo=0.2, hi=3.0)
_unary("square", np.square, NUMERIC[1:], complex_grad=True)
_unary("reciprocal", np.reciprocal, INEXACT, lo=0.5, hi=3.0, complex_grad=True)
for _n, _r in [("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("atan", np.arctan), ("sinh", np.sinh),
               ("cosh", np.cosh), ("tanh", np.tanh), ("asinh", np.arcsinh)]:
    _unary(_n, _r, INEXACT, lo=-1.2, hi=1.2, complex_grad=True)
_unary("asin", np.arcsin, INEXACT, lo=-0.9, hi=0.9)
_unary("acos", np.arccos, INEXACT, lo=-0.9, hi=0.9)
_unary("atanh", np.arctanh, INEXACT, lo=-0.9, hi=0.9)
_unary("acosh", np.arccosh, INEXACT, lo=1.2, hi=3.0)
_unary("sigmoid", _np_sigmoid, INEXACT, lo=-4, hi=4, complex_grad=True)
_unary("erf", _np_erf, FLOATS)
_unary("erfinv", _np_erfinv, FLOATS, lo=-0.9, hi=0.9, tol={"float64": (1e-9, 1e-9)})
_unary("lgamma", _np_lgamma, FLOATS, lo=0.3, hi=5.0, tol={"float64": (1e-9, 1e-9)})
_unary("digamma", _np_digamma, FLOATS, lo=0.3, hi=5.0, tol={"float64": (1e-9, 1e-9)}, gradgrad=False)
for _n, _r in [("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc)]:
    _unary(_n, _r, FLOATS, lo=-5, hi=5, grad=False, special=_SPECIAL)
_unary("round", lambda x: np.where(np.abs(x - np.trunc(x)) == 0.5, np.trunc(x) + np.sign(x), np.round(x)),
       FLOATS, lo=-5, hi=5, grad=False)
for _n, _r in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
    _unary(_n, _r, ("int64",) + INEXACT, out=to_bool, grad=False, special=_SPECIAL)
_unary("logical_not", np.logical_not, ("bool", "int64", "float32"), out=to_bool, grad=False, lo=-1, hi=1)
_unary("bitwise_not", np.invert, ("bool",) + INTS, grad=False, lo=-50, hi=50)
_unary("real", np.real, COMPLEX, out=to_real, complex_grad=True, gradgrad=False, grad=False)
_unary("imag", np.imag, COMPLEX, out=to_real, complex_grad=True, gradgrad=False, grad=False)
_unary("conj", np.conj, COMPLEX, complex_grad=True, gradgrad=False, grad=False)
_unary("angle", np.angle, INEXACT, out=to_real, grad=True, gradgrad=False, lo=0.2, hi=2.0)
_unary("deg2rad", np.deg2rad, FLOATS, lo=-400, hi=400)
_unary("rad2deg", np.rad2deg, FLOATS, lo=-7, hi=7)
_unary("sinc", np.sinc, FLOATS, lo=-3, hi=3, special=[0.0, -0.0, 1.0, np.inf])
_unary("frac", lambda x: x - np.trunc(x), ("int32", "int64", "float32", "float64"), lo=-5, hi=5, special=_SPECIAL)
_unary("signbit", np.signbit, REAL, out=to_bool, grad=False, special=_SPECIAL)
_unary("isposinf", np.isposinf, REAL, out=to_bool, grad=False, special=_SPECIAL)
_unary("isneginf", np.isneginf, REAL, out=to_bool, grad=False, special=_SPECIAL)


# ---------------------------------------------------------------- where, clip, complex, cast

def _where_samples(dtype):
    rng = _rng(3)
    c = lambda s: np.asarray(rng.random(s) > 0.5)  # noqa: E731
    v = lambda s: _values(s, dtype, -3, 3, rng)  # noqa: E731
    out = [Sample((c((3, 4)), v((3, 4)), v((3, 4)))), Sample((c((2, 1, 4)), v((3, 1)), v((4,)))),
           Sample((c(()), v(()), v(()))), Sample((c((0, 2)), v((0, 2)), v((2,)))),
           Sample((c((3, 4)), v((3, 4)), v((3, 4))), noncontig=True)]
    if dtype != "bool":
        s = 2 if dtype in INTS else 1.5
        out += [Sample((c((3, 4)), s, v((3, 4))), check_dtype=dtype not in LOW_PRECISION),
                Sample((c((3, 4)), v((3, 4)), s), check_dtype=dtype not in LOW_PRECISION)]
    return out


register(OpInfo("where", oar.where, np.where, ALL, _where_samples, grad=True, gradgrad=True, complex_grad=True,
                errors=lambda: [_err(lambda: oar.where(oar.ones([2]) > 0, oar.ones([3]), oar.ones([4])),
                                     ValueError, "where")]))


def _clip_samples(dtype):
    rng = _rng(4)
    lo, hi = (-1, 2) if dtype in INTS else (-1.0, 1.5)
    if dtype == "uint8":
        lo = 1
    return [Sample((_values(s, dtype, -3, 3, rng), lo, hi), noncontig=nc) for s, nc in UNARY_SHAPES] + \
        [Sample((_values((3, 4), dtype, -3, 3, rng), None, hi)), Sample((_values((3, 4), dtype, -3, 3, rng), lo))]


register(OpInfo("clip", oar.clip, lambda x, lo=None, hi=None: np.clip(x, lo, hi), REAL, _clip_samples,
                grad=True, gradgrad=True))


def _complex_samples(dtype):
    rng = _rng(5)
    return [Sample((_values(a, dtype, -2, 2, rng), _values(b, dtype, -2, 2, rng)), noncontig=nc)
            for a, b, nc in [((3, 4), (3, 4), False), ((), (), False), ((2, 3), (3,), False), ((0,), (0,), False),
                             ((3, 4), (3, 4), True)]]


register(OpInfo("complex", oar.complex, lambda a, b: a + 1j * b, ("float32", "float64"), _complex_samples,
                out_dtype=lambda d: {"float32": "complex64", "float64": "complex128"}[d], grad=True,
                errors=lambda: [_err(lambda: oar.complex(oar.ones([2]), oar.ones([3])), ValueError, "complex")]))

_CAST_TARGETS = ("bool", "uint8", "int32", "int64", "float16", "float32", "float64", "complex64")


def _cast_samples(dtype):
    rng = _rng(6)
    out = []
    for tgt in _CAST_TARGETS:
        if tgt == "complex64" or dtype in COMPLEX and tgt not in COMPLEX:
            continue
        out.append(Sample((_values((3, 4), dtype, 0, 100, rng), tgt), grad=tgt == "float64"))
    out.append(Sample((_values((2, 3), dtype, 0, 100, rng), "float64"), noncontig=True))
    out.append(Sample((_values((), dtype, 0, 100, rng), "float64")))
    out.append(Sample((_values((0, 2), dtype, 0, 100, rng), "float64")))
    return out


def _cast_ref(x, tgt):
    return x.astype(_NP[tgt]) if tgt != "bool" else x != 0


register(OpInfo("cast", oar.cast, _cast_ref, ALL, _cast_samples, out_dtype=None, grad=True, gradgrad=True,
                errors=lambda: [_err(lambda: oar.cast(oar.ones([2]), "float128"), (TypeError, ValueError), "cast")]))


def _clone_samples(dtype):
    rng = _rng(9)
    return [Sample((_values(s, dtype, -3, 3, rng),), noncontig=nc) for s, nc in
            [((3, 4), False), ((3, 4), True), ((5,), True), ((), False), ((0, 2), False)]]


register(OpInfo("clone", oar.clone, lambda x: np.array(x, copy=True), ALL, _clone_samples, grad=True, gradgrad=True,
                complex_grad=True,
                errors=lambda: [_err(lambda: oar.clone([1.0, 2.0]), TypeError, "clone"),
                                _err(lambda: oar.clone(None), TypeError, "clone")]))


# ---------------------------------------------------------------- reductions

def _reduce_samples(lo, hi, grad=True):
    def gen(dtype):
        rng = _rng(7)
        v = lambda s: _values(s, dtype, lo, hi, rng)  # noqa: E731
        out = []
        for axis in (None, 0, -1, [0, 2], [-1, 0, 1]):
            for keepdim in (False, True):
                out.append(Sample((v((3, 4, 5)),), {"axis": axis, "keepdim": keepdim}))
        out += [Sample((v(()),), {}), Sample((v((2, 3, 4)),), {"axis": 1}, noncontig=True),
                Sample((v((5,)),), {"axis": 0})]
        return out
    return gen


def _zero_size_samples(dtype):
    return [Sample((np.zeros((0, 3)),), {"axis": 0}), Sample((np.zeros((0, 3)),), {"axis": 1, "keepdim": True}),
            Sample((np.zeros((0, 3)),), {})]


def _np_reduce(f):
    def ref(x, axis=None, keepdim=False):
        ax = tuple(axis) if isinstance(axis, list) else axis
        return f(x, axis=ax, keepdims=keepdim)
    return ref


def _reduce_errors(name, fn):
    return lambda: [_err(lambda: fn(oar.ones([2, 3]), axis=2), IndexError, name),
                    _err(lambda: fn(oar.ones([2, 3]), axis=[0, 0]), ValueError, name)]


def _reduce(name, f, dtypes, out=same, lo=-2, hi=2, zero_size=True, extra_errors=None):
    fn = getattr(oar, name)
    base = _reduce_samples(lo, hi)
    gen = (lambda d: base(d) + _zero_size_samples(d)) if zero_size else base
    errs = _reduce_errors(name, fn)
    register(OpInfo(name, fn, _np_reduce(f), dtypes, gen, out_dtype=out, grad=True, gradgrad=True,
                    complex_grad=any(d in COMPLEX for d in dtypes) and name != "prod",
                    errors=(lambda: errs() + extra_errors()) if extra_errors else errs,
                    tol={"float16": (3e-2, 2e-2), "bfloat16": (1e-1, 3e-2)}))


_reduce("sum", np.sum, ALL, out=sum_dtype)
_reduce("mean", np.mean, INEXACT)
_reduce("prod", np.prod, FLOATS + COMPLEX + ("int64",), out=sum_dtype, lo=0.5, hi=1.5)
_reduce("amax", np.amax, REAL, zero_size=False,
        extra_errors=lambda: [_err(lambda: oar.amax(oar.zeros([0, 3]), axis=0), ValueError, "amax")])
_reduce("amin", np.amin, REAL, zero_size=False,
        extra_errors=lambda: [_err(lambda: oar.amin(oar.zeros([0, 3]), axis=0), ValueError, "amin")])


# ---------------------------------------------------------------- shape ops

def _shape_op(name, ref, samples, errors):
    register(OpInfo(name, getattr(oar, name), ref, ALL, samples, grad=True, gradgrad=True, complex_grad=True,
                    errors=errors))


def _vals(dtype, seed=8):
    rng = _rng(seed)
    return lambda s: _values(s, dtype, -3, 3, rng)  # noqa: E731


_shape_op("reshape", lambda x, shape: np.reshape(x, [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]),
          lambda d: [Sample((_vals(d)((2, 3, 4)), s), noncontig=nc) for s, nc in
                     [([6, 4], False), ([-1], False), ([4, -1, 2], True), ([24], True)]] +
          [Sample((_vals(d)(()), [1, 1])), Sample((_vals(d)((1,)), [])), Sample((_vals(d)((0, 3)), [0, 3, 1])),
           Sample((_vals(d)((2, 3, 4)), [0, 12]))],
          lambda: [_err(lambda: oar.reshape(oar.ones([2, 3]), [4]), ValueError, "reshape"),
                   _err(lambda: oar.reshape(oar.ones([2, 3]), [-1, -1]), ValueError, "reshape")])
_shape_op("transpose", lambda x, perm: np.transpose(x, perm),
          lambda d: [Sample((_vals(d)((2, 3, 4)), [2, 0, 1])), Sample((_vals(d)((2, 3, 4)), [1, 0, 2]), noncontig=True),
                     Sample((_vals(d)(()), [])), Sample((_vals(d)((0, 3)), [1, 0]))],
          lambda: [_err(lambda: oar.transpose(oar.ones([2, 3]), [0, 0]), ValueError, "transpose"),
                   _err(lambda: oar.transpose(oar.ones([2, 3]), [0]), ValueError, "transpose")])
_shape_op("expand", lambda x, shape: np.broadcast_to(x, [s if s != -1 else x.shape[i - len(shape) + x.ndim]
                                                          for i, s in enumerate(shape)]),
          lambda d: [Sample((_vals(d)((3, 1)), [2, 3, 4])), Sample((_vals(d)(()), [2, 2])),
                     Sample((_vals(d)((1, 3)), [0, 3])), Sample((_vals(d)((2, 1)), [3, 2, 5]), noncontig=True)],
          lambda: [_err(lambda: oar.expand(oar.ones([2, 3]), [4, 3, 3]), ValueError, "expand"),
                   _err(lambda: oar.expand(oar.ones([2, 3]), [3]), ValueError, "expand")])


def _np_squeeze(x, axis=None):
    if axis is None:
        return np.squeeze(x)
    ax = tuple(a for a in (axis if isinstance(axis, list) else [axis]) if x.shape[a] == 1)
    return np.squeeze(x, ax)


_shape_op("squeeze", _np_squeeze,
          lambda d: [Sample((_vals(d)((1, 3, 1)),)), Sample((_vals(d)((1, 3, 1)), [0])),
                     Sample((_vals(d)((1, 3, 1)), [-1, 1])), Sample((_vals(d)(()),)),
                     Sample((_vals(d)((2, 1, 3)), [1]), noncontig=True), Sample((_vals(d)((0, 1)), [1]))],
          lambda: [_err(lambda: oar.squeeze(oar.ones([2, 3]), [2]), IndexError, "squeeze")])
_shape_op("unsqueeze", lambda x, axis: np.expand_dims(x, tuple(axis)),
          lambda d: [Sample((_vals(d)((2, 3)), [0])), Sample((_vals(d)((2, 3)), [-1])),
                     Sample((_vals(d)((2, 3)), [0, 3])), Sample((_vals(d)(()), [0])),
                     Sample((_vals(d)((2, 3)), [1]), noncontig=True), Sample((_vals(d)((0,)), [0]))],
          lambda: [_err(lambda: oar.unsqueeze(oar.ones([2, 3]), [4]), IndexError, "unsqueeze")])


def _np_flatten(x, s=0, e=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = s % x.ndim, e % x.ndim
    return x.reshape(x.shape[:s] + (-1 if x.size else int(np.prod(x.shape[s:e + 1])),) + x.shape[e + 1:])


_shape_op("flatten", _np_flatten,
          lambda d: [Sample((_vals(d)((2, 3, 4)),)), Sample((_vals(d)((2, 3, 4)), 1, 2)),
                     Sample((_vals(d)((2, 3, 4)), 0, 1), noncontig=True), Sample((_vals(d)(()),)),
                     Sample((_vals(d)((2, 0, 3)), 1, -1))],
          lambda: [_err(lambda: oar.flatten(oar.ones([2, 3]), 1, 0), ValueError, "flatten"),
                   _err(lambda: oar.flatten(oar.ones([2, 3]), 0, 5), IndexError, "flatten")])


def _np_strided_slice(x, axes, starts, ends, strides):
    idx = [slice(None)] * x.ndim
    for a, s, e, st in zip(axes, starts, ends, strides):
        n = x.shape[a]
        if st < 0 and e < -n:
            e = None
        idx[a] = slice(s, e, st)
    return x[tuple(idx)]


_shape_op("strided_slice", _np_strided_slice,
          lambda d: [Sample((_vals(d)((5, 6)), [0], [1], [4], [1])),
                     Sample((_vals(d)((5, 6)), [0, 1], [0, 5], [5, 0], [2, -2])),
                     Sample((_vals(d)((5, 6)), [1], [-1], [-7], [-1])),
                     Sample((_vals(d)((5, 6)), [1], [-100], [100], [3]), noncontig=True),
                     Sample((_vals(d)((5, 6)), [0], [3], [3], [1]))],
          lambda: [_err(lambda: oar.strided_slice(oar.ones([2, 3]), [0], [0], [1], [0]), ValueError,
                        "strided_slice"),
                   _err(lambda: oar.strided_slice(oar.ones([2, 3]), [2], [0], [1], [1]), IndexError,
                        "strided_slice")])


def _np_slice_scatter(x, v, axes, starts, ends, strides):
    out = x.copy()
    idx = [slice(None)] * x.ndim
    for a, s, e, st in zip(axes, starts, ends, strides):
        idx[a] = slice(s, e, st)
    out[tuple(idx)] = v
    return out


_shape_op("slice_scatter", _np_slice_scatter,
          lambda d: [Sample((_vals(d)((5, 6)), _vals(d, 9)((5, 2)), [1], [0], [6], [3])),
                     Sample((_vals(d)((5, 6)), _vals(d, 9)((2, 3)), [0, 1], [4, 1], [0, 6], [-2, 2]), noncontig=True),
                     Sample((_vals(d)((4,)), _vals(d, 9)((0,)), [0], [2], [2], [1]))],
          lambda: [_err(lambda: oar.slice_scatter(oar.ones([4, 4]), oar.ones([3, 4]), [0], [0], [2], [1]),
                        ValueError, "slice_scatter")])


# ---------------------------------------------------------------- matmul

def _np_matmul(x, y, transpose_x=False, transpose_y=False):
    if transpose_x and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if transpose_y and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    return np.matmul(x, y)


def _matmul_samples(dtype):
    v = _vals(dtype, 10)
    pairs = [((3, 4), (4, 5), {}, False), ((4,), (4,), {}, False), ((4,), (4, 5), {}, False),
             ((3, 4), (4,), {}, False), ((2, 3, 4), (2, 4, 5), {}, False), ((2, 1, 3, 4), (3, 4, 5), {}, False),
             ((4, 3), (4, 5), {"transpose_x": True}, False), ((3, 4), (5, 4), {"transpose_y": True}, True),
             ((2, 4, 3), (5, 4), {"transpose_x": True, "transpose_y": True}, False),
             ((3, 0), (0, 2), {}, False), ((0, 3), (3, 2), {}, False), ((2, 3, 4), (2, 4, 5), {}, True)]
    return [Sample((v(a), v(b)), kw, noncontig=nc) for a, b, kw, nc in pairs]


register(OpInfo("matmul", oar.matmul, _np_matmul, NUMERIC, _matmul_samples, grad=True, gradgrad=True,
                complex_grad=True, tol={"float16": (5e-2, 2e-2), "bfloat16": (2e-1, 5e-2)},
                errors=lambda: [_err(lambda: oar.matmul(oar.ones([2, 3]), oar.ones([4, 3])), ValueError, "matmul"),
                                _err(lambda: oar.matmul(oar.ones([]), oar.ones([3])), ValueError, "matmul"),
                                _err(lambda: oar.matmul(oar.ones([2, 2, 3]), oar.ones([3, 3, 2])), ValueError,
                                     "matmul")]))


# ---------------------------------------------------------------- creation

def _creation(name, ref, samples, dtypes, errors):
    register(OpInfo(name, getattr(oar, name), ref, dtypes, samples, creation=True, errors=errors))


_creation("full", lambda shape, v, dtype: np.full(shape, v, dtype=_NP.get(dtype, np.float32)),
          lambda d: [Sample(([2, 3], 1)), Sample(([], 0)), Sample(([0, 4], 1))], ALL,
          lambda: [_err(lambda: oar.full([-1, 2], 1.0), ValueError, "full")])
_creation("zeros", lambda shape, dtype: np.zeros(shape, _NP.get(dtype, np.float32)),
          lambda d: [Sample(([2, 3],)), Sample(([],)), Sample(([0],))], ALL,
          lambda: [_err(lambda: oar.zeros([2, -3]), ValueError, "zeros")])
_creation("ones", lambda shape, dtype: np.ones(shape, _NP.get(dtype, np.float32)),
          lambda d: [Sample(([2, 3],)), Sample(([],)), Sample(([0],))], ALL,
          lambda: [_err(lambda: oar.ones([-2]), ValueError, "ones")])
_creation("arange", lambda *a, dtype: np.arange(*a).astype(_NP.get(dtype, np.float32)),
          lambda d: [Sample((5,)), Sample((2, 11, 3)), Sample((10, 0, -2)), Sample((3, 3))] +
          ([Sample((0.0, 1.0, 0.25))] if d in FLOATS else []), REAL,
          lambda: [_err(lambda: oar.arange(0, 5, 0), ValueError, "arange")])
_creation("linspace", lambda a, b, n, dtype: np.linspace(a, b, n).astype(_NP.get(dtype, np.float32)),
          lambda d: [Sample((0, 1, 5)), Sample((-2, 3, 1)), Sample((1, 0, 0)), Sample((0, 10, 11))],
          FLOATS + ("float64", "int64"), lambda: [_err(lambda: oar.linspace(0, 1, -1), ValueError, "linspace")])
_creation("eye", lambda n, m=None, dtype=None: np.eye(n, m, dtype=_NP.get(dtype, np.float32)),
          lambda d: [Sample((3,)), Sample((2, 4)), Sample((0,)), Sample((3, 0))], ALL,
          lambda: [_err(lambda: oar.eye(-1), ValueError, "eye")])


# ---------------------------------------------------------------- areas
# The database is split by area: tests/python/opdb_<area>.py modules register
# their entries with `register` when this module loads, so every test that
# reads OP_DB sees them all.

def _load_areas():
    import importlib
    import pathlib
    for path in sorted(pathlib.Path(__file__).parent.glob("opdb_*.py")):
        importlib.import_module(path.stem)


_load_areas()
