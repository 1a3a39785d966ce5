"""What weight_norm and spectral_norm share: checking the parameter they reparametrise, creating the
parameters that replace it, and finding the forward pre-hook that recomputes it."""
from ...autograd import no_grad
from ...framework_param import ParamAttr
from .. import initializer as init
from ..layer.layers import Layer


def get_parameter(layer, name, hook_cls, api):
    """The parameter ``name`` of ``layer``, checking that it exists and has no ``hook_cls`` hook yet."""
    if find_hook(layer, hook_cls, name, api) is not None:
        raise RuntimeError(f"[{api}] cannot register two {hook_cls.kind} hooks on the same parameter {name!r}")
    param = layer._parameters.get(name) if isinstance(name, str) else None
    if param is None:
        raise KeyError(f"[{api}] {type(layer).__name__} has no parameter {name!r} "
                       f"(it has {list(layer._parameters)})")
    return param


def new_parameter(layer, value, like):
    """A parameter of ``layer`` holding a copy of ``value``, with the optimiser attributes of ``like``."""
    attr = ParamAttr(initializer=init.Constant(0.0),
                     learning_rate=getattr(like, "optimize_attr", {}).get("learning_rate", 1.0),
                     regularizer=getattr(like, "regularizer", None), trainable=getattr(like, "trainable", True),
                     need_clip=getattr(like, "need_clip", True))
    p = layer.create_parameter(list(value.shape), attr=attr, dtype=value.dtype)
    with no_grad():
        p.copy_(value)
    return p


def find_hook(layer, hook_cls, name, api):
    """The key and hook of the ``hook_cls`` forward pre-hook for parameter ``name``, or None."""
    if not isinstance(layer, Layer):
        raise TypeError(f"[{api}] layer must be an oar.nn.Layer, got {type(layer).__name__}")
    for key, hook in layer._forward_pre_hooks.items():
        if isinstance(hook, hook_cls) and hook.name == name:
            return key, hook
    return None
