"""Audio (``paddle.audio``): feature layers (`features`) and their helpers
(`functional`): windows, the mel scale, filter banks, decibels and the DCT."""
from . import features, functional

__all__ = ["features", "functional"]
