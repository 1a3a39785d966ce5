"""Paddle's ``paddle.incubate.nn``: the fused functions in ``oar.incubate.nn.functional``."""
from . import functional

__all__ = ["functional"]
