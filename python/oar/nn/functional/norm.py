"""Normalisation with Paddle signatures: batch_norm, layer_norm, group_norm,
instance_norm, rms_norm and local_response_norm (C++ ops in src/ops/norm.cpp).

They are declared in src/ops/nn.toml and come from the generated _ops_gen.
batch_norm, layer_norm and rms_norm run fused kernels, and a first-order
backward runs their fused gradient kernels; under create_graph the gradients
are composites of ops, so they are differentiable to any order.
"""
from ._ops_gen import (batch_norm, group_norm, instance_norm, layer_norm, local_response_norm,  # noqa: F401
                       rms_norm)

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "local_response_norm"]
