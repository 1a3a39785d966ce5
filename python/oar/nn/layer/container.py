"""Containers: Sequential, LayerList, LayerDict, ParameterList, ParameterDict; Parameter.

Module, ModuleList and ModuleDict are the same classes as Layer, LayerList
and LayerDict, as in Paddle 3.x.
"""
import collections

import numpy as np

from ... import _C
from ...framework_param import _mark_parameter, _unique_name
from .layers import Layer, _is_parameter

__all__ = ["Sequential", "LayerList", "LayerDict", "ParameterList", "ParameterDict", "Parameter", "Module",
           "ModuleList", "ModuleDict"]


def _norm_index(idx, n, api):
    if not isinstance(idx, int):
        raise TypeError(f"[oar.nn.{api}] index must be an int or a slice, got {type(idx).__name__}")
    if idx < -n or idx >= n:
        raise IndexError(f"[oar.nn.{api}] index {idx} is out of range for a container of length {n}")
    return idx + n if idx < 0 else idx


class Sequential(Layer):
    """Runs its sublayers in order. Accepts layers, (name, layer) pairs, or one OrderedDict.

    >>> import oar, collections
    >>> net = oar.nn.Sequential(oar.nn.Linear(2, 3), oar.nn.ReLU())
    >>> net(oar.ones([1, 2])).shape
    [1, 3]
    >>> named = oar.nn.Sequential(("fc", oar.nn.Linear(2, 3)), ("act", oar.nn.ReLU()))
    >>> type(named["act"]).__name__, len(named[:1])
    ('ReLU', 1)
    """

    def __init__(self, *layers):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], (dict, collections.OrderedDict)):
            items = list(layers[0].items())
        elif layers and all(isinstance(x, (tuple, list)) and len(x) == 2 and isinstance(x[1], Layer)
                            for x in layers):
            items = [(str(n), layer) for n, layer in layers]
        else:
            items = [(str(i), layer) for i, layer in enumerate(layers)]
        for name, layer in items:
            if not isinstance(layer, Layer):
                raise TypeError(f"[oar.nn.Sequential] expected Layer arguments, got {type(layer).__name__}")
            self.add_sublayer(name, layer)

    def __getitem__(self, idx):
        if isinstance(idx, str):
            return self._sub_layers[idx]
        items = list(self._sub_layers.items())
        if isinstance(idx, slice):
            return Sequential(*items[idx])
        return items[_norm_index(idx, len(items), "Sequential")][1]

    def __setitem__(self, idx, layer):
        if isinstance(idx, str):
            self.add_sublayer(idx, layer)
            return
        keys = list(self._sub_layers.keys())
        self.add_sublayer(keys[_norm_index(idx, len(keys), "Sequential")], layer)

    def __delitem__(self, idx):
        keys = list(self._sub_layers.keys())
        if isinstance(idx, slice):
            for k in keys[idx]:
                del self._sub_layers[k]
        else:
            del self._sub_layers[keys[_norm_index(idx, len(keys), "Sequential")]]

    def __len__(self):
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())

    def append(self, layer):
        """Adds a layer at the end."""
        self.add_sublayer(str(len(self._sub_layers)), layer)
        return self

    def forward(self, input):  # noqa: A002 - Paddle's name
        for layer in self._sub_layers.values():
            input = layer(input)
        return input


class LayerList(Layer):
    """A list of layers, registered as sublayers '0', '1', ...

    >>> import oar
    >>> layers = oar.nn.LayerList([oar.nn.Linear(2, 2) for _ in range(3)])
    >>> _ = layers.append(oar.nn.ReLU())
    >>> len(layers), len(layers.parameters())
    (4, 6)
    """

    def __init__(self, sublayers=None):
        super().__init__()
        if sublayers is not None:
            for layer in sublayers:
                self.append(layer)

    def _reindex(self, layers):
        self._sub_layers.clear()
        for i, layer in enumerate(layers):
            self.add_sublayer(str(i), layer)

    def __getitem__(self, idx):
        layers = list(self._sub_layers.values())
        if isinstance(idx, slice):
            return LayerList(layers[idx])
        return layers[_norm_index(idx, len(layers), "LayerList")]

    def __setitem__(self, idx, layer):
        idx = _norm_index(idx, len(self._sub_layers), "LayerList")
        self.add_sublayer(str(idx), layer)

    def __delitem__(self, idx):
        layers = list(self._sub_layers.values())
        if isinstance(idx, slice):
            del layers[idx]
        else:
            del layers[_norm_index(idx, len(layers), "LayerList")]
        self._reindex(layers)

    def __len__(self):
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())

    def append(self, sublayer):
        """Adds a layer at the end."""
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def insert(self, index, sublayer):
        """Inserts a layer before index."""
        layers = list(self._sub_layers.values())
        layers.insert(index, sublayer)
        self._reindex(layers)

    def extend(self, sublayers):
        """Appends every layer of sublayers."""
        for layer in sublayers:
            self.append(layer)
        return self


class LayerDict(Layer):
    """An ordered dict of named layers.

    >>> import oar
    >>> d = oar.nn.LayerDict({"fc": oar.nn.Linear(2, 2), "act": oar.nn.ReLU()})
    >>> list(d.keys()), "fc" in d
    (['fc', 'act'], True)
    """

    def __init__(self, sublayers=None):
        super().__init__()
        if sublayers is not None:
            self.update(sublayers)

    def __getitem__(self, key):
        return self._sub_layers[key]

    def __setitem__(self, key, sublayer):
        self.add_sublayer(key, sublayer)

    def __delitem__(self, key):
        del self._sub_layers[key]

    def __len__(self):
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers)

    def __contains__(self, key):
        return key in self._sub_layers

    def clear(self):
        self._sub_layers.clear()

    def pop(self, key):
        return self._sub_layers.pop(key)

    def keys(self):
        return self._sub_layers.keys()

    def items(self):
        return self._sub_layers.items()

    def values(self):
        return self._sub_layers.values()

    def update(self, sublayers):
        """Adds the layers of a mapping or an iterable of (name, layer) pairs."""
        items = sublayers.items() if hasattr(sublayers, "items") else sublayers
        for pair in items:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError("[oar.nn.LayerDict] update expects a mapping or (name, layer) pairs")
            self.add_sublayer(pair[0], pair[1])


class ParameterList(Layer):
    """A list of parameters, registered as '0', '1', ...

    >>> import oar
    >>> params = oar.nn.ParameterList([oar.framework_param.create_parameter([2], "float32") for _ in range(2)])
    >>> len(params), [n for n, _ in params.named_parameters()]
    (2, ['0', '1'])
    """

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            for p in parameters:
                self.append(p)

    def __getitem__(self, idx):
        params = list(self._parameters.values())
        return params[_norm_index(idx, len(params), "ParameterList")]

    def __setitem__(self, idx, param):
        self.add_parameter(str(_norm_index(idx, len(self._parameters), "ParameterList")), param)

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, parameter):
        """Adds a parameter at the end (a plain Tensor becomes a trainable parameter)."""
        if not isinstance(parameter, _C.Tensor):
            raise TypeError(f"[oar.nn.ParameterList] expected a Tensor, got {type(parameter).__name__}")
        if not _is_parameter(parameter):
            _mark_parameter(parameter, _unique_name("param"))
        self.add_parameter(str(len(self._parameters)), parameter)
        return self


class ParameterDict(Layer):
    """An ordered dict of named parameters (a plain Tensor becomes a trainable parameter).

    >>> import oar
    >>> d = oar.nn.ParameterDict({"w": oar.nn.Parameter([2, 3], "float32")})
    >>> d["b"] = oar.nn.Parameter(oar.ones([3]))
    >>> len(d), [n for n, _ in d.named_parameters()], "w" in d
    (2, ['w', 'b'], True)
    """

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, parameter):
        if not isinstance(parameter, _C.Tensor):
            raise TypeError(f"[oar.nn.ParameterDict] expected a Tensor, got {type(parameter).__name__}")
        self.add_parameter(key, parameter)

    def __delitem__(self, key):
        del self._parameters[key]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def update(self, parameters):
        """Adds the parameters of a mapping or an iterable of (name, tensor) pairs."""
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for pair in items:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError("[oar.nn.ParameterDict] update expects a mapping or (name, tensor) pairs")
            self[pair[0]] = pair[1]


class _ParameterMeta(type):
    def __instancecheck__(cls, obj):
        return _is_parameter(obj)


class Parameter(metaclass=_ParameterMeta):
    """A trainable parameter: Parameter(shape, dtype) is zero-filled, Parameter(tensor) copies tensor.

    Parameters are oar Tensors carrying parameter attributes (name, trainable,
    ...); ``isinstance(t, oar.nn.Parameter)`` tells them from other tensors.

    >>> import oar
    >>> p = oar.nn.Parameter([2, 3], "float32")
    >>> p.shape, p.stop_gradient, p.trainable, isinstance(p, oar.nn.Parameter), isinstance(oar.ones([1]), oar.nn.Parameter)
    ([2, 3], False, True, True, False)
    """

    def __new__(cls, shape_or_tensor, dtype=None, name=None, trainable=True, **kwargs):
        if isinstance(shape_or_tensor, _C.Tensor):
            t = _C.clone(shape_or_tensor.detach())
            if dtype is not None:
                t = t.astype(dtype)
        else:
            try:
                shape = [int(d) for d in shape_or_tensor]
            except TypeError:
                raise TypeError(f"[oar.nn.Parameter] expected a shape or a Tensor, "
                                f"got {type(shape_or_tensor).__name__}") from None
            if any(d < 0 for d in shape):
                raise ValueError(f"[oar.nn.Parameter] shape entries must be >= 0, got {shape}")
            dt = dtype if dtype is not None else str(_C.get_default_dtype()).split(".")[-1]
            t = _C.from_numpy(np.zeros(shape, dtype=np.float64)).astype(dt)
        _mark_parameter(t, name or _unique_name("_eager_param_base"), trainable=trainable)
        return t


Module = Layer
ModuleList = LayerList
ModuleDict = LayerDict
