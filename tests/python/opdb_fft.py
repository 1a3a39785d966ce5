"""Op-database entries for oar.fft, against numpy.fft (and scipy.fft for the
2-D and n-D Hermitian transforms NumPy lacks)."""
import numpy as np
import scipy.fft

import oar
from opdb import ErrorInput, OpInfo, Sample, register

REAL = ("float32", "float64")
ALL = ("float32", "float64", "complex64", "complex128")
CPLX = ("complex64", "complex128")
_TOL = {"float32": (2e-4, 2e-4), "complex64": (2e-4, 2e-4)}
FFT = oar.fft


def _to_complex(dtype):
    return {"float32": "complex64", "float64": "complex128"}.get(dtype, dtype)


def _to_real(dtype):
    return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.fft.{name}]")


def _arr(r, shape, dtype):
    a = r.standard_normal(shape)
    if dtype in CPLX:
        a = a + 1j * r.standard_normal(shape)
    return a


def _samples_1d(seed):
    def samples(dtype):
        r = np.random.default_rng(seed)
        return [Sample((_arr(r, (7,), dtype),)),  # a prime length
                Sample((_arr(r, (8,), dtype),), {"norm": "ortho"}),
                Sample((_arr(r, (3, 5), dtype),), {"n": 8, "norm": "forward"}),  # zero-padded
                Sample((_arr(r, (3, 6), dtype),), {"n": 4}),  # cropped
                Sample((_arr(r, (4, 3), dtype),), {"axis": 0}),
                Sample((_arr(r, (2, 3, 5), dtype),), {"axis": 1, "n": 3}, noncontig=True),
                Sample((_arr(r, (1,), dtype),)),
                Sample((_arr(r, (0, 6), dtype),), grad=False),  # an empty batch
                Sample((_arr(r, (2, 1009), dtype),), grad=False)]
    return samples


def _samples_c2r_1d(seed):
    # Half spectra: the output length is n or 2 * (m - 1).
    def samples(dtype):
        r = np.random.default_rng(seed)
        return [Sample((_arr(r, (5,), dtype),)),
                Sample((_arr(r, (5,), dtype),), {"n": 9, "norm": "ortho"}),  # odd output
                Sample((_arr(r, (3, 4), dtype),), {"n": 12, "norm": "forward"}),  # zero-padded bins
                Sample((_arr(r, (3, 6), dtype),), {"n": 4}),  # cropped bins
                Sample((_arr(r, (4, 3), dtype),), {"axis": 0}),
                Sample((_arr(r, (2, 4, 3), dtype),), {"axis": 1}, noncontig=True),
                Sample((_arr(r, (1,), dtype),), {"n": 1}),
                Sample((_arr(r, (2, 506), dtype),), {"n": 1011}, grad=False)]
    return samples


def _samples_nd(seed, two=False):
    def samples(dtype):
        r = np.random.default_rng(seed)
        out = [Sample((_arr(r, (3, 5), dtype),)),
               Sample((_arr(r, (2, 3, 4), dtype),), {"norm": "ortho"}),
               Sample((_arr(r, (2, 3, 4), dtype),), {"s": [4, 3], "norm": "forward"}),
               Sample((_arr(r, (3, 2, 4), dtype),), {"axes": [0, 2]}),
               Sample((_arr(r, (3, 4, 2), dtype),), {"s": [2, 5], "axes": (-1, 0)}, noncontig=True),
               Sample((_arr(r, (0, 3, 4), dtype),), {"axes": [-2, -1]}, grad=False),
               Sample((_arr(r, (17, 19), dtype),), grad=False)]
        if not two:
            out += [Sample((_arr(r, (2, 3, 4), dtype),), {"s": [3, 3, 3]}),
                    Sample((_arr(r, (2, 3, 4), dtype),), {"axes": [1]})]
        return out
    return samples


def _samples_c2r_nd(seed, two=False):
    def samples(dtype):
        r = np.random.default_rng(seed)
        out = [Sample((_arr(r, (3, 5), dtype),)),
               Sample((_arr(r, (2, 3, 4), dtype),), {"norm": "ortho"}),
               Sample((_arr(r, (2, 3, 4), dtype),), {"s": [4, 5], "norm": "forward"}),
               Sample((_arr(r, (3, 2, 4), dtype),), {"axes": [0, 2]}),
               Sample((_arr(r, (3, 4, 2), dtype),), {"s": [2, 6], "axes": (-1, 0)}, noncontig=True),
               Sample((_arr(r, (17, 10), dtype),), grad=False)]
        if not two:
            out += [Sample((_arr(r, (2, 3, 4), dtype),), {"s": [3, 3, 7]})]
        return out
    return samples


def _common_errors(name, fn, real_only=False):
    x = oar.ones([4, 4])
    errs = [_err(lambda: fn([1.0, 2.0]), TypeError, name),
            _err(lambda: fn(x, norm="none"), ValueError, name),
            _err(lambda: fn(x.astype("float16")), TypeError, name)]
    if real_only:
        errs.append(_err(lambda: fn(oar.ones([4, 4], dtype="complex64")), TypeError, name))
    return errs


def _register_1d(name, ref, dtypes, out, samples, complex_grad, real_only=False):
    fn = getattr(FFT, name)
    errs = _common_errors(name, fn, real_only) + [
        _err(lambda: fn(oar.ones([4]), n=0), ValueError, name),
        _err(lambda: fn(oar.ones([4]), n=2.5), TypeError, name),
        _err(lambda: fn(oar.ones([4]), axis=1), IndexError, name),
        _err(lambda: fn(oar.to_tensor(1.0)), ValueError, name)]
    register(OpInfo(f"fft.{name}", fn, ref, dtypes, samples, out_dtype=out, grad=True, complex_grad=complex_grad,
                    tol=_TOL, errors=lambda: errs))


_register_1d("fft", np.fft.fft, ALL, _to_complex, _samples_1d(900), True)
_register_1d("ifft", np.fft.ifft, ALL, _to_complex, _samples_1d(901), True)
_register_1d("rfft", np.fft.rfft, REAL, _to_complex, _samples_1d(902), False, real_only=True)
_register_1d("ihfft", np.fft.ihfft, REAL, _to_complex, _samples_1d(903), False, real_only=True)
_register_1d("irfft", np.fft.irfft, ALL, _to_real, _samples_c2r_1d(904), True)
_register_1d("hfft", np.fft.hfft, ALL, _to_real, _samples_c2r_1d(905), True)


def _register_nd(name, ref, dtypes, out, samples, complex_grad, real_only=False, two=False):
    fn = getattr(FFT, name)
    errs = _common_errors(name, fn, real_only) + [
        _err(lambda: fn(oar.ones([4, 4]), axes=[0, 0]), ValueError, name),
        _err(lambda: fn(oar.ones([4, 4]), s=[0, 4]), ValueError, name),
        _err(lambda: fn(oar.ones([4, 4]), s=[4, 4], axes=[0]), ValueError, name),
        _err(lambda: fn(oar.ones([4, 4]), axes=[0, 3]), IndexError, name)]
    if two:
        errs += [_err(lambda: fn(oar.ones([4])), ValueError, name),
                 _err(lambda: fn(oar.ones([2, 2, 2]), axes=[0, 1, 2]), ValueError, name)]
    register(OpInfo(f"fft.{name}", fn, ref, dtypes, samples, out_dtype=out, grad=True, complex_grad=complex_grad,
                    tol=_TOL, errors=lambda: errs))


def _np2(f):
    """NumPy's n-D function with the 2-D defaults (axes=(-2, -1))."""
    def ref(x, s=None, axes=(-2, -1), norm="backward"):
        return f(x, s=s, axes=axes, norm=norm)
    return ref


_register_nd("fft2", _np2(np.fft.fftn), ALL, _to_complex, _samples_nd(910, True), True, two=True)
_register_nd("ifft2", _np2(np.fft.ifftn), ALL, _to_complex, _samples_nd(911, True), True, two=True)
_register_nd("rfft2", _np2(np.fft.rfftn), REAL, _to_complex, _samples_nd(912, True), False, True, two=True)
_register_nd("irfft2", _np2(np.fft.irfftn), ALL, _to_real, _samples_c2r_nd(913, True), True, two=True)
_register_nd("hfft2", _np2(scipy.fft.hfftn), ALL, _to_real, _samples_c2r_nd(914, True), True, two=True)
_register_nd("ihfft2", _np2(scipy.fft.ihfftn), REAL, _to_complex, _samples_nd(915, True), False, True, two=True)
_register_nd("fftn", np.fft.fftn, ALL, _to_complex, _samples_nd(916), True)
_register_nd("ifftn", np.fft.ifftn, ALL, _to_complex, _samples_nd(917), True)
_register_nd("rfftn", np.fft.rfftn, REAL, _to_complex, _samples_nd(918), False, True)
_register_nd("irfftn", np.fft.irfftn, ALL, _to_real, _samples_c2r_nd(919), True)
_register_nd("hfftn", scipy.fft.hfftn, ALL, _to_real, _samples_c2r_nd(920), True)
_register_nd("ihfftn", scipy.fft.ihfftn, REAL, _to_complex, _samples_nd(921), False, True)


# The complex path from a real entry's point of view: the entries above run
# real inputs through fft_r2c (both halves); a complex tensor takes fft_c2c.
def _fftn_complex(x, **kw):
    return FFT.fftn(x.astype("complex128" if x.dtype.name == "float64" else "complex64"), **kw)


register(OpInfo("fft.fftn_complex", _fftn_complex, lambda x, **kw: np.fft.fftn(x.astype(complex), **kw), REAL,
                _samples_nd(922), out_dtype=_to_complex, grad=True, tol=_TOL))

# ---- frequencies and shifts
def _freq_samples(dtype):
    return [Sample((1,)), Sample((8,)), Sample((7,), {"d": 0.25}), Sample((10,), {"d": 3.0})]


def _freq(f):
    def op(n, d=1.0, dtype=None):
        return f(n, d=d, dtype=dtype)
    return op


register(OpInfo("fft.fftfreq", _freq(FFT.fftfreq), lambda n, d=1.0, dtype=None: np.fft.fftfreq(n, d), REAL,
                _freq_samples, creation=True,
                errors=lambda: [_err(lambda: FFT.fftfreq(0), ValueError, "fftfreq"),
                                _err(lambda: FFT.fftfreq(2.5), TypeError, "fftfreq"),
                                _err(lambda: FFT.fftfreq(4, d=0), ValueError, "fftfreq")]))
register(OpInfo("fft.rfftfreq", _freq(FFT.rfftfreq), lambda n, d=1.0, dtype=None: np.fft.rfftfreq(n, d), REAL,
                _freq_samples, creation=True,
                errors=lambda: [_err(lambda: FFT.rfftfreq(-3), ValueError, "rfftfreq"),
                                _err(lambda: FFT.rfftfreq("4"), TypeError, "rfftfreq")]))


def _shift_samples(dtype):
    r = np.random.default_rng(930)
    return [Sample((_arr(r, (5,), dtype),)), Sample((_arr(r, (4, 5), dtype),)),
            Sample((_arr(r, (4, 5), dtype),), {"axes": 1}), Sample((_arr(r, (3, 4, 5), dtype),), {"axes": [0, 2]}),
            Sample((_arr(r, (4, 6), dtype),), {"axes": (-1,)}, noncontig=True)]


for _name, _ref in (("fftshift", np.fft.fftshift), ("ifftshift", np.fft.ifftshift)):
    _fn = getattr(FFT, _name)
    register(OpInfo(f"fft.{_name}", _fn, _ref, ALL + ("int32", "int64"), _shift_samples, grad=True, complex_grad=True,
                    errors=lambda _fn=_fn, _name=_name: [
                        _err(lambda: _fn(oar.ones([3]), axes=1), IndexError, _name),
                        _err(lambda: _fn(np.ones(3)), TypeError, _name),
                        _err(lambda: _fn(oar.ones([3]), axes="0"), TypeError, _name)]))
