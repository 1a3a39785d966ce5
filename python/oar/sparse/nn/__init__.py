"""oar.sparse.nn: layers and functions for sparse tensors."""
from . import functional  # noqa: F401
from .layer import BatchNorm, LeakyReLU, ReLU, ReLU6, Softmax  # noqa: F401

__all__ = ["functional", "ReLU", "ReLU6", "LeakyReLU", "Softmax", "BatchNorm"]
