"""The vectorised math paths (one per instruction set) against NumPy/math.

Every code path the CPU supports is selected in turn; sizes cover full
vectors, tails and single elements; float16/bfloat16 go through float32
blocks."""
import math

import numpy as np
import pytest

import oar
import oar.nn.functional as F
from oar import _C

_erf = np.vectorize(math.erf)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


FUNCS = {
    "exp": (oar.exp, np.exp, (-80.0, 80.0)),
    "expm1": (oar.expm1, np.expm1, (-5.0, 5.0)),
    "log": (oar.log, np.log, (1e-3, 1e3)),
    "log1p": (oar.log1p, np.log1p, (-0.9, 50.0)),
    "sin": (oar.sin, np.sin, (-100.0, 100.0)),
    "cos": (oar.cos, np.cos, (-100.0, 100.0)),
    "tanh": (oar.tanh, np.tanh, (-12.0, 12.0)),
    "erf": (oar.erf, _erf, (-5.0, 5.0)),
    "sigmoid": (oar.sigmoid, _sigmoid, (-100.0, 100.0)),
    "silu": (F.silu, lambda x: x * _sigmoid(x), (-30.0, 30.0)),
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), (-8.0, 8.0)),
    "gelu_tanh": (lambda t: F.gelu(t, approximate=True),
                  lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))), (-8.0, 8.0)),
}
# Relative tolerance per dtype (SLEEF's 1-ulp functions; erf float32 is within 6 ulp);
# absolute tolerance for results that cancel to near zero (sin/cos at large arguments).
TOL = {"float32": (8e-7, 1e-6), "float64": (1e-14, 1e-14), "bfloat16": (8e-3, 1e-2), "float16": (1e-3, 2e-3)}


def _isas():
    found = []
    for isa in ("avx512", "avx2", "portable"):
        if _C._select_vmath_isa(isa):
            found.append(isa)
    _C._select_vmath_isa("best")
    return found


@pytest.fixture(params=_isas())
def isa(request):
    assert _C._select_vmath_isa(request.param)
    assert _C._vmath_isa() == request.param
    yield request.param
    _C._select_vmath_isa("best")


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_against_reference(isa, name, dtype):
    fn, ref, (lo, hi) = FUNCS[name]
    if dtype == "float16":
        lo, hi = max(lo, -10.0), min(hi, 10.0)  # keep exp within float16's range
    rng = np.random.default_rng(0)
    for n in (1, 7, 16, 33, 4099):
        x = rng.uniform(lo, hi, n)
        t = oar.to_tensor(x).astype(dtype)
        xs = t.astype("float64").numpy()  # the values actually stored
        got = fn(t).astype("float64").numpy()
        want = ref(xs)
        if dtype in ("bfloat16", "float16"):  # the result is rounded to the storage type
            want = oar.to_tensor(want).astype(dtype).astype("float64").numpy()
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * np.abs(want).max(initial=1.0),
                                   err_msg=f"{name} {dtype} {isa} n={n}")


def test_float32_erf_small_and_large_arguments(isa):
    x = np.array([0.0, 1e-30, -1e-6, 0.49999, 0.5, 0.50001, 3.9, 4.0, 10.0, -10.0, np.inf, -np.inf], np.float32)
    got = oar.erf(oar.to_tensor(x)).numpy().astype(np.float64)
    np.testing.assert_allclose(got, _erf(x.astype(np.float64)), rtol=8e-7, atol=0)
    assert np.isnan(oar.erf(oar.to_tensor([np.nan], dtype="float32")).numpy()[0])


def test_special_values(isa):
    x = np.array([np.nan, np.inf, -np.inf, 0.0], np.float32)
    t = oar.to_tensor(x)
    np.testing.assert_array_equal(oar.exp(t).numpy(), np.array([np.nan, np.inf, 0.0, 1.0], np.float32))
    np.testing.assert_array_equal(oar.sigmoid(t).numpy(), np.array([np.nan, 1.0, 0.0, 0.5], np.float32))
    np.testing.assert_array_equal(oar.tanh(t).numpy(), np.array([np.nan, 1.0, -1.0, 0.0], np.float32))


def test_non_dense_input_takes_the_iterator():
    x = np.random.default_rng(1).uniform(-3, 3, (64, 64))
    t = oar.to_tensor(x, dtype="float32")[:, ::3]
    np.testing.assert_allclose(oar.exp(t).numpy(), np.exp(x.astype(np.float32)[:, ::3]), rtol=1e-6)


def test_unknown_isa_is_refused():
    assert not _C._select_vmath_isa("sse9")


def _bf16_reference(x):
    """float32 -> bfloat16 bits, round to nearest even (NaN kept as NaN)."""
    bits = x.view(np.uint32).astype(np.uint64)
    r = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), r)


def _special_floats():
    rng = np.random.default_rng(3)
    x = np.concatenate([
        rng.standard_normal(5000).astype(np.float32) * 100,
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65520.0, 1e5, -1e5, 6e-8, 3e-8, 1e-40, -1e-45,
                  1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 3.4e38], np.float32),
        (rng.integers(0, 2 ** 32, 3000, dtype=np.uint64).astype(np.uint32)).view(np.float32),  # any bit pattern
    ])
    return x


@pytest.mark.parametrize("n_extra", [0, 5])
def test_16bit_conversions(isa, n_extra):
    x = _special_floats()[: 8000 + n_extra]
    t = oar.to_tensor(x)
    h = t.astype("float16")
    want16 = x.astype(np.float16)
    got16 = h.numpy()
    np.testing.assert_array_equal(np.isnan(got16), np.isnan(want16))
    ok = ~np.isnan(want16)
    np.testing.assert_array_equal(got16[ok].view(np.uint16), want16[ok].view(np.uint16))
    np.testing.assert_array_equal(h.astype("float32").numpy()[ok], want16[ok].astype(np.float32))
    b = t.astype("bfloat16")
    back = b.astype("float32").numpy()  # widening is exact, so this shows the stored bits
    ref = _bf16_reference(x)
    nan = np.isnan(x)
    np.testing.assert_array_equal(np.isnan(back), nan)
    np.testing.assert_array_equal(back[~nan].view(np.uint32) >> 16, ref[~nan])


def test_float32_exp_underflow_and_overflow_boundaries(isa):
    # exactly 0 below ln(2^-150), denormals just above, inf above ln(FLT_MAX)
    x = np.array([-np.inf, -1e9, -150.0, -104.0, -103.98, -103.9, -100.0, -90.0, -87.5, 88.7, 88.8, 1e9, np.inf,
                  np.nan], np.float32)
    with np.errstate(over="ignore", under="ignore"):
        want = np.exp(x.astype(np.float64)).astype(np.float32)
    got = oar.exp(oar.to_tensor(x)).numpy()
    np.testing.assert_array_equal(got[:-1] == 0, want[:-1] == 0)
    np.testing.assert_allclose(got[:-1], want[:-1], rtol=2e-7, atol=2e-45)
    assert np.isnan(got[-1])
    # softmax over rows with masked (-1e9) entries gives exact zeros there
    s = oar.nn.functional.softmax(oar.to_tensor(np.array([[0.0, -1e9, 1.0, -1e9]], np.float32)), axis=-1).numpy()
    np.testing.assert_allclose(s, [[1 / (1 + np.e), 0.0, np.e / (1 + np.e), 0.0]], rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int64", "complex128"])
def test_binary_ops_against_numpy(isa, dtype):
    # The flat loop of same-shape operands; under OAR_STREAM_BYTES=1 (below)
    # its blocks leave through streaming stores, with per-thread chunks that
    # start off the vector alignment (70001 elements split over threads).
    rng = np.random.default_rng(5)
    for n in (1, 15, 1000, 70001):
        a = rng.integers(-50, 50, n) if dtype.startswith("int") else rng.standard_normal(n)
        b = rng.integers(1, 50, n) if dtype.startswith("int") else rng.standard_normal(n)
        if dtype.startswith("complex"):
            a, b = a + 1j * rng.standard_normal(n), b - 2j * rng.standard_normal(n)
        a, b = a.astype(dtype), b.astype(dtype)
        ta, tb = oar.to_tensor(a), oar.to_tensor(b)
        rtol = 1e-15 if dtype.startswith("complex") else 0  # complex products may contract to FMA
        for got, ref in [(ta + tb, a + b), (ta * tb, a * b), (ta - tb, a - b)]:
            np.testing.assert_allclose(got.numpy(), ref, rtol=rtol, atol=0)
    # operands whose dims merge into one dense run (the general iterator's flat case)
    m = rng.standard_normal((301, 233)).astype(dtype if not dtype.startswith("int") else "float64")
    tm = oar.to_tensor(m)
    np.testing.assert_array_equal((tm[:, ::1] + tm[:, ::1]).numpy(), m + m)


def test_streaming_store_path_against_reference():
    # Outputs of 8 MB and more are written with streaming stores (another
    # loop); OAR_STREAM_BYTES=1 sends every size of the reference test there.
    import os
    import subprocess
    import sys

    env = dict(os.environ, OAR_STREAM_BYTES="1")
    r = subprocess.run([sys.executable, "-m", "pytest", __file__, "-p", "no:cacheprovider", "-p", "no:xdist",
                        "-k", "test_against_reference or test_special_values or test_binary_ops_against_numpy"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout
