"""Incubating APIs, with Paddle's names: ``oar.incubate.autograd``."""
from . import autograd

__all__ = ["autograd"]
