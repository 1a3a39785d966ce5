"""Incubating APIs, with Paddle's names: ``oar.incubate.autograd`` and
``oar.incubate.nn.functional`` (fused_rms_norm)."""
from . import autograd, nn

__all__ = ["autograd", "nn"]
