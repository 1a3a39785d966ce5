"""Window functions for short-time transforms (``paddle.audio.functional.get_window``).

Each window is computed in float64 from oar ops and cast to the requested
dtype at the end, so a float32 window carries no float32 rounding from its
own construction. The formulas follow the usual definitions of
scipy.signal.windows (the reference the tests compare with).

Note [periodic windows]: a "periodic" window of M points (fftbins=True, the
default, what spectral analysis wants) is the symmetric window of M + 1
points without its last point, so that its M-periodic extension is smooth.
"""
import math
import numbers

from ... import _C, i0
from ..._manip import concat
from ...creation import arange, linspace, ones, zeros
from ._checks import _float_dtype

__all__ = ["get_window"]

_API = "oar.audio.functional.get_window"


def _general_cosine(m, coeffs):
    fac = linspace(-math.pi, math.pi, m, dtype="float64")
    w = zeros([m], dtype="float64")
    for k, a in enumerate(coeffs):
        w = w + a * (fac * k).cos()
    return w


def _hann(m):
    return _general_cosine(m, (0.5, 0.5))


def _hamming(m):
    return _general_cosine(m, (0.54, 0.46))


def _blackman(m):
    return _general_cosine(m, (0.42, 0.5, 0.08))


def _nuttall(m):
    return _general_cosine(m, (0.3635819, 0.4891775, 0.1365995, 0.0106411))


def _bartlett(m):
    n = arange(m, dtype="float64")
    rise = n * (2.0 / (m - 1))
    return _C.where(n <= (m - 1) / 2.0, rise, 2.0 - rise)


def _triang(m):
    half = (m + 1) // 2
    n = arange(1, half + 1, dtype="float64")
    if m % 2 == 0:
        w = (2 * n - 1.0) / m
        return concat([w, w.flip(0)], axis=0)
    w = 2 * n / (m + 1.0)
    return concat([w, w[:-1].flip(0)], axis=0)


def _bohman(m):
    fac = linspace(-1.0, 1.0, m, dtype="float64")[1:-1].abs()
    w = (1 - fac) * (fac * math.pi).cos() + (fac * math.pi).sin() / math.pi
    edge = zeros([1], dtype="float64")
    return concat([edge, w, edge], axis=0)


def _cosine(m):
    return ((arange(m, dtype="float64") + 0.5) * (math.pi / m)).sin()


def _kaiser(m, beta):
    n = arange(m, dtype="float64")
    alpha = (m - 1) / 2.0
    # clip: rounding may push 1 - r^2 a hair below zero at the ends
    arg = (1 - ((n - alpha) / alpha) ** 2).clip(min=0.0).sqrt() * beta
    return i0(arg) / i0(_C.full([1], float(beta), "float64"))


def _gaussian(m, std):
    n = arange(m, dtype="float64") - (m - 1.0) / 2.0
    return (-(n * n) / (2.0 * std * std)).exp()


def _general_gaussian(m, p, sig):
    n = arange(m, dtype="float64") - (m - 1.0) / 2.0
    return ((n / sig).abs() ** (2.0 * p) * -0.5).exp()


def _exponential(m, center=None, tau=1.0):
    if center is None:
        center = (m - 1) / 2.0
    n = arange(m, dtype="float64")
    return ((n - center).abs() * (-1.0 / tau)).exp()


def _tukey(m, alpha=0.5):
    if alpha <= 0:
        return ones([m], dtype="float64")
    if alpha >= 1.0:
        return _hann(m)
    n = arange(m, dtype="float64")
    width = int(alpha * (m - 1) / 2.0)
    n1, n2, n3 = n[0:width + 1], n[width + 1:m - width - 1], n[m - width - 1:]
    w1 = 0.5 * (1 + (math.pi * (-1 + 2.0 * n1 / alpha / (m - 1))).cos())
    w3 = 0.5 * (1 + (math.pi * (-2.0 / alpha + 1 + 2.0 * n3 / alpha / (m - 1))).cos())
    return concat([w1, ones([n2.shape[0]], dtype="float64"), w3], axis=0)


def _taylor(m, nbar=4, sll=30, norm=True):
    # Taylor's coefficients F_m are a few scalars: computed in Python floats.
    b = 10 ** (sll / 20.0)
    a = math.acosh(b) / math.pi
    s2 = nbar ** 2 / (a ** 2 + (nbar - 0.5) ** 2)
    ma = list(range(1, nbar))
    fm = []
    for i, mi in enumerate(ma):
        num = (1.0 if i % 2 == 0 else -1.0) * math.prod(1 - mi * mi / s2 / (a ** 2 + (j - 0.5) ** 2) for j in ma)
        den = 2.0 * math.prod(1 - mi * mi / (j * j) for j in ma if j != mi)
        fm.append(num / den)

    def w_at(n):
        out = ones(n.shape, dtype="float64")
        for f, mi in zip(fm, ma):
            out = out + 2.0 * f * ((n - m / 2.0 + 0.5) * (2.0 * math.pi * mi / m)).cos()
        return out

    w = w_at(arange(m, dtype="float64"))
    if norm:
        w = w / float(w_at(_C.full([1], (m - 1) / 2.0, "float64"))[0])
    return w


# name -> (function, required parameters, optional parameters); the
# parameters come after the name in a tuple window, as in ('kaiser', 14.0).
_WINDOWS = {
    "hamming": (_hamming, 0, 0), "hann": (_hann, 0, 0), "blackman": (_blackman, 0, 0),
    "nuttall": (_nuttall, 0, 0), "bartlett": (_bartlett, 0, 0), "triang": (_triang, 0, 0),
    "bohman": (_bohman, 0, 0), "cosine": (_cosine, 0, 0), "kaiser": (_kaiser, 1, 0),
    "gaussian": (_gaussian, 1, 0), "general_gaussian": (_general_gaussian, 2, 0),
    "exponential": (_exponential, 0, 2), "tukey": (_tukey, 0, 1), "taylor": (_taylor, 0, 3),
}


def _parse(window, api):
    """(name, params) of a window given as a name or a (name, *params) tuple."""
    if isinstance(window, tuple) and window and isinstance(window[0], str):
        name, params = window[0], tuple(window[1:])
    elif isinstance(window, str):
        name, params = window, ()
    else:
        raise TypeError(f"[{api}] window must be a name or a (name, *params) tuple, got {window!r}")
    if name not in _WINDOWS:
        raise ValueError(f"[{api}] unknown window {name!r}; expected one of {sorted(_WINDOWS)}")
    _, need, optional = _WINDOWS[name]
    if not need <= len(params) <= need + optional:
        expected = f"{need}" if not optional else f"{need} to {need + optional}"
        hint = f" (pass a tuple such as ({name!r}, ...))" if need and not params else ""
        raise ValueError(f"[{api}] the {name!r} window takes {expected} parameter(s), got {len(params)}{hint}")
    for p in params:
        if p is not None and not isinstance(p, numbers.Real):
            raise TypeError(f"[{api}] the parameters of the {name!r} window must be numbers, got {p!r}")
    return name, params


def _make_window(window, win_length, fftbins, dtype, api):
    """get_window with the error messages naming `api`."""
    name, params = _parse(window, api)
    if not isinstance(win_length, numbers.Integral) or isinstance(win_length, bool):
        raise TypeError(f"[{api}] win_length must be an int, got {type(win_length).__name__}")
    if win_length < 0:
        raise ValueError(f"[{api}] win_length must be non-negative, got {win_length}")
    if name == "exponential" and not fftbins and len(params) >= 1 and params[0] is not None:
        raise ValueError(f"[{api}] a symmetric (fftbins=False) exponential window must have center=None, "
                         f"got {params[0]}")
    dtype = _float_dtype(dtype, api)
    win_length = int(win_length)
    if win_length <= 1:
        w = ones([win_length], dtype="float64")
    else:
        m = win_length + 1 if fftbins else win_length  # Note [periodic windows]
        w = _WINDOWS[name][0](m, *params)
        if fftbins:
            w = w[:-1]
    return w.astype(dtype)


def get_window(window, win_length, fftbins=True, dtype="float64"):
    """A window of `win_length` points by name, for the short-time transforms.

    `window` is one of 'hamming', 'hann', 'blackman', 'nuttall', 'bartlett',
    'triang', 'bohman', 'cosine', 'tukey' (alpha=0.5), 'taylor' (nbar=4,
    sll=30, norm=True), 'exponential' (center=None, tau=1.0), or, with their
    parameters in a tuple, ('kaiser', beta), ('gaussian', std) and
    ('general_gaussian', p, sig). With fftbins (the default) the window is
    periodic, as spectral analysis wants; otherwise symmetric, as filter
    design wants.

    Args:
        window (str|tuple): the window's name, or (name, *parameters).
        win_length (int): the number of points.
        fftbins (bool, optional): periodic (True) or symmetric (False).
        dtype (str, optional): a floating-point dtype, default 'float64'.

    Returns:
        Tensor: the window, of shape [win_length].

    Examples:
        >>> import oar
        >>> w = oar.audio.functional.get_window('hann', 4)
        >>> w.numpy().round(3).tolist()
        [0.0, 0.5, 1.0, 0.5]
        >>> oar.audio.functional.get_window(('gaussian', 7.0), 512, dtype='float32').shape
        [512]
    """
    return _make_window(window, win_length, fftbins, dtype, _API)
