"""Convolutions with Paddle signatures: conv1d/2d/3d and their transposes.

They are declared in src/ops/nn.toml and come from the generated _ops_gen:
the bindings turn Paddle's padding forms ('same', 'valid', ints, per-side
lists, pairs) and channel-last formats into the channel-first form of the C++
ops (src/ops/conv.cpp). float32 and bfloat16 run on oneDNN.
"""
from ._ops_gen import (conv1d, conv1d_transpose, conv2d, conv2d_transpose, conv3d,  # noqa: F401
                       conv3d_transpose)

__all__ = ["conv1d", "conv2d", "conv3d", "conv1d_transpose", "conv2d_transpose", "conv3d_transpose"]
