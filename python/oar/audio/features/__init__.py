"""Audio feature layers (``paddle.audio.features``): Spectrogram, MelSpectrogram,
LogMelSpectrogram and MFCC, from waveforms [batch, time] or [time]."""
from . import layers  # noqa: F401
from .layers import MFCC, LogMelSpectrogram, MelSpectrogram, Spectrogram

__all__ = ["Spectrogram", "MelSpectrogram", "LogMelSpectrogram", "MFCC"]
