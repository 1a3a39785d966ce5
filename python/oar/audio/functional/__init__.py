"""Audio helpers (``paddle.audio.functional``): windows, the mel scale, mel
filter banks, decibels and the DCT used by the features of oar.audio.features."""
import sys

from ... import _api
from . import functional, window
from .functional import (compute_fbank_matrix, create_dct, fft_frequencies, hz_to_mel, mel_frequencies,  # noqa: F401
                         mel_to_hz, power_to_db)
from .window import get_window  # noqa: F401

__all__ = ["compute_fbank_matrix", "create_dct", "fft_frequencies", "hz_to_mel", "mel_frequencies", "mel_to_hz",
           "power_to_db", "get_window"]

# Note [API error boundary]: errors from the ops inside name the function called.
for _m in (functional, window):
    _api.guard_module(_m, __name__)
_api.guard_module(sys.modules[__name__])
del _m
