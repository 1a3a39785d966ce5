"""oar.nn.utils: in-place gradient clipping, parameters as one vector, and the weight
reparametrisations weight_norm and spectral_norm (forward pre-hooks on a layer)."""
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .spectral_norm_hook import spectral_norm
from .transform_parameters import parameters_to_vector, vector_to_parameters
from .weight_norm_hook import remove_weight_norm, weight_norm

__all__ = [
    "weight_norm", "remove_weight_norm", "spectral_norm", "parameters_to_vector", "vector_to_parameters",
    "clip_grad_norm_", "clip_grad_value_",
]
