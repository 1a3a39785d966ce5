"""Argument checks shared by the audio helpers and feature layers; each
names the API it serves (`api`) in its error."""
import numbers

from ...creation import zeros


def _check_number(v, api, what):
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        raise TypeError(f"[{api}] {what} must be a number, got {type(v).__name__}")
    return float(v)


def _check_int(v, api, what, low=1):
    if not isinstance(v, numbers.Integral) or isinstance(v, bool):
        raise TypeError(f"[{api}] {what} must be an int, got {type(v).__name__}")
    if v < low:
        raise ValueError(f"[{api}] {what} must be at least {low}, got {v}")
    return int(v)


def _float_dtype(dtype, api):
    """The floating-point dtype named by `dtype` (a name or a dtype)."""
    try:
        resolved = zeros([0], dtype="float64").astype(dtype).dtype
    except (TypeError, ValueError):
        raise TypeError(f"[{api}] dtype must be a floating-point dtype such as 'float32', got {dtype!r}") from None
    if not resolved.is_floating_point:
        raise TypeError(f"[{api}] dtype must be a floating-point dtype such as 'float32', got {resolved.name}")
    return resolved
