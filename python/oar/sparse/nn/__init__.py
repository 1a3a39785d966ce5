"""oar.sparse.nn: layers and functions for sparse tensors."""
from . import functional  # noqa: F401
from .layer import BatchNorm, LeakyReLU, ReLU, ReLU6, Softmax, SyncBatchNorm  # noqa: F401
from .conv_layer import Conv2D, Conv3D, MaxPool3D, SubmConv2D, SubmConv3D  # noqa: F401

__all__ = ["functional", "ReLU", "ReLU6", "LeakyReLU", "Softmax", "BatchNorm", "SyncBatchNorm", "Conv2D", "Conv3D",
           "SubmConv2D", "SubmConv3D", "MaxPool3D"]
