"""Python state read by converted code: closures, globals, layer attributes,
``self.training`` branches, containers of layers called in loops, buffers,
InputSpec with None dims, and state that changes between calls.
"""
import functools

import oar
import oar.nn as nn
import oar.nn.functional as F
from oar.static import InputSpec

from .registry import add, kw, randn, seeded

ST = ("state",)
SCALE = 3.0  # a module-level constant read by a converted function


def make_closure(factor):
    bias = oar.to_tensor([0.5, -0.5])

    def f(x):
        return x * factor + bias

    return f


add("closure_constant_and_tensor", make_closure(2.5), [randn(2), randn(3, 2)], ST)


def make_layer_closure():
    lin = seeded(lambda: nn.Linear(3, 2))

    def f(x):
        return F.relu(lin(x))

    return f


add("closure_over_layer", make_layer_closure(), [randn(2, 3), randn(4, 3)], ST)


def global_constant(x):
    return x * SCALE + GLOBAL_TENSOR


GLOBAL_TENSOR = oar.to_tensor([1.0, 2.0])
add("global_constant_and_tensor", global_constant, [randn(2), randn(5, 2)], ST)


class AttrScaled(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.alpha = 0.3
        self.use_residual = True

    def forward(self, x):
        y = self.fc(x) * self.alpha
        if self.use_residual:  # a Python attribute: fixed per layer
            y = y + x
        return y


add("layer_python_attributes", seeded(AttrScaled), [randn(2, 4), randn(1, 4)], ST)


class ManualDropout(nn.Layer):
    """Training and evaluation take different branches on self.training."""

    def __init__(self, training):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.train() if training else self.eval()

    def forward(self, x):
        y = self.fc(x)
        if self.training:
            y = y * 0.5 + y.mean() * 0.5  # a deterministic stand-in for a training-only op
        return y


add("self_training_branch_train", seeded(lambda: ManualDropout(True)), [randn(2, 4), randn(3, 4)], ST)
add("self_training_branch_eval", seeded(lambda: ManualDropout(False)), [randn(2, 4), randn(3, 4)], ST)


class LayerListLoop(nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = nn.LayerList([nn.Linear(4, 4) for _ in range(3)])
        self.norms = nn.LayerList([nn.LayerNorm(4) for _ in range(3)])

    def forward(self, x):
        for layer, norm in zip(self.layers, self.norms):
            x = norm(x + F.gelu(layer(x)))
        return x


add("layerlist_loop_zip", seeded(LayerListLoop), [randn(2, 4), randn(5, 4)], ST)


class LayerListIndexed(nn.Layer):
    """Layers chosen by a Python int argument."""

    def __init__(self):
        super().__init__()
        self.heads = nn.LayerList([nn.Linear(4, k) for k in (2, 3, 5)])

    def forward(self, x, task):
        return self.heads[task](x)


add("layerlist_index_by_python_int", seeded(LayerListIndexed), [(randn(2, 4), 0), (randn(2, 4), 2), (randn(2, 4), 1)],
    ST)


class LayerDictByKey(nn.Layer):
    def __init__(self):
        super().__init__()
        self.branches = nn.LayerDict({"relu": nn.ReLU(), "tanh": nn.Tanh(), "lin": nn.Linear(3, 3)})

    def forward(self, x, kind="relu"):
        return self.branches[kind](x)


add("layerdict_by_string_key", seeded(LayerDictByKey), [randn(2, 3), kw(randn(2, 3), kind="lin"),
                                                         kw(randn(2, 3), kind="tanh")], ST)


class ParamListLoop(nn.Layer):
    def __init__(self):
        super().__init__()
        self.ws = nn.ParameterList([self.create_parameter([3, 3]) for _ in range(3)])

    def forward(self, x):
        for w in self.ws:
            x = oar.tanh(oar.matmul(x, w))
        return x


add("parameterlist_loop", seeded(ParamListLoop), [randn(2, 3), randn(1, 3)], ST)


class BufferUser(nn.Layer):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", oar.to_tensor([1.0, -1.0, 0.5]))
        self.register_buffer("std", oar.to_tensor([2.0, 0.5, 1.0]))

    def forward(self, x):
        return (x - self.mean) / self.std


add("registered_buffers", seeded(BufferUser), [randn(2, 3), randn(4, 3)], ST)


class CounterBuffer(nn.Layer):
    """Counts calls in a buffer updated in place (state carried between calls)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", oar.zeros([1]))

    def forward(self, x):
        self.calls.set_value(self.calls + 1.0)
        return x * self.calls


add("buffer_call_counter", seeded(CounterBuffer), [randn(2), randn(2), randn(2)], ST)


class PythonCounter(nn.Layer):
    """A Python int attribute changed by every call and used in the output."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * float(self.calls)


add("python_attribute_counter", seeded(PythonCounter), [randn(2), randn(2), randn(2)], ST, expect_full_graph=False,
    reason="the output depends on a Python attribute that every call changes: one captured program cannot "
           "follow it (guards on it must retrace)")


class ConfigBranches(nn.Layer):
    """A constructor option selects the forward's code path."""

    def __init__(self, pre_norm):
        super().__init__()
        self.pre_norm = pre_norm
        self.norm = nn.LayerNorm(4)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if self.pre_norm:
            return x + self.fc(self.norm(x))
        return self.norm(x + self.fc(x))


add("constructor_flag_prenorm", seeded(lambda: ConfigBranches(True)), [randn(2, 4), randn(3, 4)], ST)
add("constructor_flag_postnorm", seeded(lambda: ConfigBranches(False)), [randn(2, 4), randn(3, 4)], ST)


class SharedLayerTwice(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(F.relu(self.fc(x)))


add("shared_layer_called_twice", seeded(SharedLayerTwice), [randn(2, 3), randn(3, 3)], ST)


class HelperMethods(nn.Layer):
    """Forward calls a helper method, a staticmethod and a property."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    @staticmethod
    def _squash(x):
        return x / (1.0 + x.abs())

    @property
    def gain(self):
        return 1.5

    def _block(self, x):
        return self._squash(self.fc(x)) * self.gain

    def forward(self, x):
        return self._block(self._block(x))


add("helper_method_static_property", seeded(HelperMethods), [randn(2, 3), randn(1, 3)], ST)


class InputSpecDynamic(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        # Batch and sequence are dynamic: only -1 reshapes keep them dynamic.
        return self.fc(x).reshape([-1, 2]).sum(axis=0)


add("input_spec_two_none_dims", seeded(InputSpecDynamic), [randn(2, 3, 4), randn(1, 5, 4), randn(3, 1, 4)], ST,
    input_spec=[InputSpec([None, None, 4], "float32")])


class InputSpecShapeUse(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        b = x.shape[0]
        return self.fc(x).reshape([b, 2, 2])


add("input_spec_none_dim_shape_used", seeded(InputSpecShapeUse), [randn(2, 4), randn(5, 4)], ST,
    input_spec=[InputSpec([None, 4], "float32")])


def partial_target(x, power, shift):
    return x ** power + shift


add("functools_partial", functools.partial(partial_target, power=2.0, shift=1.0), [randn(3), randn(2, 2)], ST)


class CallsOtherLayerMethod(nn.Layer):
    def __init__(self):
        super().__init__()
        self.enc = seeded(lambda: nn.Linear(3, 3))
        self.dec = nn.Linear(3, 3)

    def encode(self, x):
        return oar.tanh(self.enc(x))

    def forward(self, x):
        return self.dec(self.encode(x)) + self.encode(x)


add("method_called_twice_from_forward", seeded(CallsOtherLayerMethod), [randn(1, 3), randn(2, 3)], ST)


class ClassConstant(nn.Layer):
    EPS = 1e-3
    ACTS = {"a": F.relu, "b": oar.tanh}

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x, act="a"):
        return self.ACTS[act](self.fc(x)) / (x.abs().sum() + self.EPS)


add("class_constants_and_function_table", seeded(ClassConstant), [randn(2, 3), kw(randn(2, 3), act="b")], ST)


def mutable_default_cache(x, _cache={}):  # noqa: B006  the shared default is the point
    """Memoises a constant tensor in a mutable default argument across calls."""
    if "w" not in _cache:
        _cache["w"] = oar.to_tensor([2.0, 3.0])
    return x * _cache["w"]


add("mutable_default_argument_cache", mutable_default_cache, [randn(2), randn(2)], ST)


class SublayerTrainingFlags(nn.Layer):
    """A sublayer switched to eval while the parent trains: each keeps its own flag."""

    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1D(3))
        self.b = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1D(3))
        self.train()
        self.b.eval()

    def forward(self, x):
        return self.a(x) + self.b(x)


add("mixed_sublayer_training_flags", seeded(SublayerTrainingFlags), [randn(4, 3), randn(4, 3)], ST)
