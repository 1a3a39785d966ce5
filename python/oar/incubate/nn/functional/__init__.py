"""Paddle's ``paddle.incubate.nn.functional``: fused_rms_norm."""
from .fused_rms_norm import fused_rms_norm

__all__ = ["fused_rms_norm"]
