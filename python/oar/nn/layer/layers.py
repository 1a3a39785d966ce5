"""Layer: the base class of every oar.nn module (Paddle's paddle.nn.Layer).

A Layer owns parameters, buffers and sublayers, registered by attribute
assignment. Parameters are plain Tensors with stop_gradient=False and the
attributes set by oar.framework_param.create_parameter.
"""
import collections
import itertools
import re

from ... import _C
from ...autograd import no_grad
from ...framework import _dtype
from ...framework_param import ParamAttr, _mark_parameter, _unique_name, create_parameter as _create_parameter

_static_program = []  # [oar.static.program], imported on first use: that package imports this one


def _static_mode():
    """The oar.static.program module while static mode is on, else None."""
    if not _static_program:
        from ...static import program

        _static_program.append(program)
    return _static_program[0] if _static_program[0]._state.static else None

__all__ = ["Layer"]

Tensor = _C.Tensor


def _is_parameter(value):
    """A parameter is a tensor created by create_parameter (it carries `trainable` and `persistable`)."""
    return isinstance(value, Tensor) and hasattr(value, "trainable") and hasattr(value, "optimize_attr")


def _set_value(self, value):
    """Copies value (Tensor, array or list) into self in place; the shape must match."""
    import numpy as np

    src = value if isinstance(value, Tensor) else _C.from_numpy(np.asarray(value, order="C"))
    if list(src.shape) != list(self.shape):
        raise ValueError(f"[Tensor.set_value] shape {list(src.shape)} does not match {list(self.shape)}")
    with no_grad():
        self.copy_(src)


def _tensor_deepcopy(self, memo):
    """A copy with its own storage, the same stop_gradient and copies of its Python attributes."""
    import copy

    with no_grad():
        new = _C.clone(self.detach())
    new.stop_gradient = self.stop_gradient
    memo[id(self)] = new
    for key, value in getattr(self, "__dict__", {}).items():
        setattr(new, key, copy.deepcopy(value, memo))
    return new


# Layers are deep-copied (e.g. TransformerEncoder clones its layer), which copies their tensors.
__tensor_methods__ = (("set_value", "_set_value"), ("__deepcopy__", "_tensor_deepcopy"))


class HookRemoveHelper:
    """Returned by register_forward_*_hook; ``remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks):
        self._hooks = hooks
        self._hook_id = next(HookRemoveHelper._ids)

    def remove(self):
        self._hooks.pop(self._hook_id, None)


def _camel_to_snake(name):
    """A class name as Paddle turns it into a layer's name scope: an underscore goes
    before a capital that starts a lowercase run (``Conv1DTranspose`` -> ``conv1d_transpose``)
    and between a lowercase letter and a capital (``PReLU`` -> ``p_re_lu``); digits never
    start one (``BatchNorm2D`` -> ``batch_norm2d``)."""
    name = re.sub(r"(?<=.)(?=[A-Z][a-z])", "_", name)
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower()


class Layer:
    """Base class of layers: holds parameters, buffers and sublayers and runs ``forward``.

    >>> import oar
    >>> class Net(oar.nn.Layer):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = oar.nn.Linear(2, 3)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> net = Net()
    >>> list(net.state_dict().keys())
    ['fc.weight', 'fc.bias']
    >>> net(oar.ones([4, 2])).shape
    [4, 3]
    """

    def __init__(self, name_scope=None, dtype=None):
        self.training = True
        if dtype is None:  # the framework default at construction, so set_default_dtype applies to new layers
            dtype = str(_C.get_default_dtype()).split(".")[-1]
        if name_scope is None:
            name_scope = _camel_to_snake(type(self).__name__)
        self._full_name = _unique_name(name_scope)
        self._dtype = dtype
        self._parameters = collections.OrderedDict()
        self._buffers = collections.OrderedDict()
        self._non_persistable_buffer_names_set = set()
        self._sub_layers = collections.OrderedDict()
        self._forward_pre_hooks = collections.OrderedDict()
        self._forward_post_hooks = collections.OrderedDict()

    # ---- registration

    def __setattr__(self, name, value):
        d = self.__dict__
        params, layers, buffers = d.get("_parameters"), d.get("_sub_layers"), d.get("_buffers")
        if isinstance(value, Layer) or _is_parameter(value):
            if params is None:
                raise RuntimeError(f"[oar.nn.Layer] call super().__init__() before assigning {name!r}")
            target = layers if isinstance(value, Layer) else params
            for store in (params, layers, buffers):
                if store is not target:
                    store.pop(name, None)
            d.pop(name, None)
            target[name] = value  # an existing entry keeps its position
            return
        if params is not None and name in params:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"[oar.nn.Layer] parameter {name!r} can only be set to a Tensor or None, "
                                f"got {type(value).__name__}")
            params[name] = value
            return
        if layers is not None and name in layers:
            if value is not None:
                raise TypeError(f"[oar.nn.Layer] sublayer {name!r} can only be set to a Layer or None, "
                                f"got {type(value).__name__}")
            layers[name] = None
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"[oar.nn.Layer] buffer {name!r} can only be set to a Tensor or None, "
                                f"got {type(value).__name__}")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        for store in ("_parameters", "_sub_layers", "_buffers"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._sub_layers, self._buffers):
            if name in store:
                del store[name]
                self._non_persistable_buffer_names_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._sub_layers) | set(self._buffers))

    def create_parameter(self, shape, attr=None, dtype=None, is_bias=False, default_initializer=None):
        """Creates a parameter named after this layer; attr=False returns None.

        Weights and biases are numbered separately, by ``oar.utils.unique_name``
        (so ``unique_name.guard()`` restarts them): 'linear_0.w_0', 'linear_0.b_0', ...

        >>> import oar
        >>> layer = oar.nn.Layer()
        >>> w = layer.create_parameter([2, 3]); w.shape, w.stop_gradient
        ([2, 3], False)
        >>> with oar.utils.unique_name.guard():
        ...     fc = oar.nn.Linear(2, 3)
        >>> fc.weight.name, fc.bias.name
        ('linear_0.w_0', 'linear_0.b_0')
        """
        from .. import initializer as init

        attr = ParamAttr._to_attr(attr)
        if attr is False:
            return None
        if attr.initializer is None and default_initializer is None:
            default_initializer = init._global_bias_init if is_bias else init._global_weight_init
        name = attr.name or _unique_name(f"{self._full_name}.{'b' if is_bias else 'w'}")
        static = _static_mode()
        if static is None:
            return _create_parameter(shape, dtype if dtype is not None else self._dtype, name=name, attr=attr,
                                     is_bias=is_bias, default_initializer=default_initializer)
        # Static mode: a parameter is initialised once, outside the program,
        # which binds it under its name (Note [static mode]).
        with static._recording_paused():
            p = _create_parameter(shape, dtype if dtype is not None else self._dtype, name=name, attr=attr,
                                  is_bias=is_bias, default_initializer=default_initializer)
        static._name_parameter(p)
        return p

    def add_parameter(self, name, parameter):
        """Registers parameter (a Tensor or None) under name.

        >>> import oar
        >>> layer = oar.nn.Layer()
        >>> p = layer.add_parameter("w", layer.create_parameter([2]))
        >>> [n for n, _ in layer.named_parameters()]
        ['w']
        """
        self._check_name(name, "add_parameter")
        if parameter is not None:
            if not isinstance(parameter, Tensor):
                raise TypeError(f"[oar.nn.Layer.add_parameter] parameter must be a Tensor, "
                                f"got {type(parameter).__name__}")
            if not _is_parameter(parameter):
                _mark_parameter(parameter, getattr(parameter, "name", None) or _unique_name("param"))
        self.__dict__.pop(name, None)
        self._parameters[name] = parameter
        return parameter

    def add_sublayer(self, name, sublayer):
        """Registers sublayer under name and returns it.

        >>> import oar
        >>> net = oar.nn.Layer()
        >>> _ = net.add_sublayer("act", oar.nn.ReLU())
        >>> [n for n, _ in net.named_children()]
        ['act']
        """
        if sublayer is not None and not isinstance(sublayer, Layer):
            raise TypeError(f"[oar.nn.Layer.add_sublayer] sublayer must be a Layer, got {type(sublayer).__name__}")
        self._check_name(str(name), "add_sublayer")
        self._sub_layers[str(name)] = sublayer
        return sublayer

    def register_buffer(self, name, tensor, persistable=True):
        """Registers a tensor that is state but not a parameter (persistable ones go into state_dict).

        >>> import oar
        >>> layer = oar.nn.Layer()
        >>> layer.register_buffer("running", oar.zeros([2]))
        >>> list(layer.state_dict().keys())
        ['running']
        """
        if not isinstance(name, str) or not name or "." in name:
            raise ValueError(f"[oar.nn.Layer.register_buffer] name must be a non-empty str without '.', got {name!r}")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"[oar.nn.Layer.register_buffer] buffer must be a Tensor or None, "
                            f"got {type(tensor).__name__}")
        if name in self._parameters or name in self._sub_layers:
            raise KeyError(f"[oar.nn.Layer.register_buffer] {name!r} is already a parameter or sublayer")
        static = _static_mode()
        if static is not None and tensor is not None:
            # A buffer made by recorded ops (zeros for batch-norm statistics)
            # would be a value of the program, recomputed on each run; a copy
            # made outside the recording is bound, as a parameter is.
            with static._recording_paused():
                tensor = _C.clone(tensor)
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if persistable:
            self._non_persistable_buffer_names_set.discard(name)
        else:
            self._non_persistable_buffer_names_set.add(name)

    @staticmethod
    def _check_name(name, api):
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"[oar.nn.Layer.{api}] name must be a non-empty str without '.', got {name!r}")

    # ---- traversal

    def named_sublayers(self, prefix="", include_self=False, layers_set=None):
        """Yields (name, layer) for every sublayer, depth first, each layer once.

        >>> import oar
        >>> net = oar.nn.Sequential(oar.nn.Linear(2, 2), oar.nn.ReLU())
        >>> [n for n, _ in net.named_sublayers()]
        ['0', '1']
        """
        if layers_set is None:
            layers_set = set()
        if include_self and id(self) not in layers_set:
            layers_set.add(id(self))
            yield prefix, self
        for key, layer in self._sub_layers.items():
            if layer is None or id(layer) in layers_set:
                continue
            name = prefix + ("." if prefix else "") + key
            yield from layer.named_sublayers(prefix=name, include_self=True, layers_set=layers_set)

    def sublayers(self, include_self=False):
        """All sublayers (recursively), as a list.

        >>> import oar
        >>> len(oar.nn.Sequential(oar.nn.Linear(2, 2), oar.nn.ReLU()).sublayers())
        2
        """
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def named_children(self):
        """Yields (name, layer) for the direct sublayers.

        >>> import oar
        >>> [n for n, _ in oar.nn.Sequential(oar.nn.ReLU()).named_children()]
        ['0']
        """
        seen = set()
        for name, layer in self._sub_layers.items():
            if layer is not None and id(layer) not in seen:
                seen.add(id(layer))
                yield name, layer

    def children(self):
        """Yields the direct sublayers.

        >>> import oar
        >>> len(list(oar.nn.Sequential(oar.nn.ReLU(), oar.nn.Tanh()).children()))
        2
        """
        for _, layer in self.named_children():
            yield layer

    def _named_members(self, getter, prefix, include_sublayers):
        seen = set()
        layers = self.named_sublayers(prefix=prefix, include_self=True) if include_sublayers else [(prefix, self)]
        for layer_prefix, layer in layers:
            for name, value in getter(layer):
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield layer_prefix + ("." if layer_prefix else "") + name, value

    def named_parameters(self, prefix="", include_sublayers=True):
        """Yields (structured name, parameter), each parameter once.

        >>> import oar
        >>> [n for n, _ in oar.nn.Linear(2, 3).named_parameters()]
        ['weight', 'bias']
        """
        yield from self._named_members(lambda m: m._parameters.items(), prefix, include_sublayers)

    def parameters(self, include_sublayers=True):
        """All parameters, as a list.

        >>> import oar
        >>> [p.shape for p in oar.nn.Linear(2, 3).parameters()]
        [[2, 3], [3]]
        """
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_buffers(self, prefix="", include_sublayers=True):
        """Yields (structured name, buffer).

        >>> import oar
        >>> layer = oar.nn.Layer(); layer.register_buffer("b", oar.zeros([1]))
        >>> [n for n, _ in layer.named_buffers()]
        ['b']
        """
        yield from self._named_members(lambda m: m._buffers.items(), prefix, include_sublayers)

    def buffers(self, include_sublayers=True):
        """All buffers, as a list.

        >>> import oar
        >>> layer = oar.nn.Layer(); layer.register_buffer("b", oar.zeros([1]))
        >>> len(layer.buffers())
        1
        """
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    # ---- state

    def state_dict(self, destination=None, include_sublayers=True, structured_name_prefix="", use_hook=True,
                   keep_vars=True):
        """An OrderedDict of structured name -> tensor: parameters and persistable buffers.

        >>> import oar
        >>> sorted(oar.nn.Linear(2, 3).state_dict().keys())
        ['bias', 'weight']
        """
        dest = collections.OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                dest[structured_name_prefix + name] = p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistable_buffer_names_set:
                dest[structured_name_prefix + name] = b
        if include_sublayers:
            for name, layer in self._sub_layers.items():
                if layer is not None:
                    layer.state_dict(dest, True, structured_name_prefix + name + ".", use_hook, keep_vars)
        return dest

    def set_state_dict(self, state_dict, use_structured_name=True):
        """Copies values from state_dict into the parameters and buffers, in place.

        Shapes must match exactly; values are cast to the parameter's dtype. Returns
        (missing_keys, unexpected_keys).

        >>> import oar
        >>> a, b = oar.nn.Linear(2, 2), oar.nn.Linear(2, 2)
        >>> missing, unexpected = b.set_state_dict(a.state_dict())
        >>> missing, unexpected, bool((a.weight == b.weight).all())
        ([], [], True)
        """
        static = _static_mode()
        if static is None:
            return self._load_state_dict(state_dict, use_structured_name)
        # Loading weights in static mode takes effect at once, as in Paddle;
        # recorded, the writes would become state updates that every run repeats.
        with static._recording_paused():
            return self._load_state_dict(state_dict, use_structured_name)

    def _load_state_dict(self, state_dict, use_structured_name):
        import numpy as np

        own = self.state_dict()
        if not use_structured_name:
            own = collections.OrderedDict((getattr(t, "name", k), t) for k, t in own.items())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        with no_grad():
            for key, target in own.items():
                if key not in state_dict:
                    continue
                value = state_dict[key]
                if not isinstance(value, Tensor):
                    arr = np.asarray(value)
                    if arr.dtype == object:
                        raise TypeError(f"[oar.nn.Layer.set_state_dict] {key!r}: expected a Tensor or array, "
                                        f"got {type(value).__name__}")
                    value = _C.from_numpy(np.ascontiguousarray(arr))
                if list(value.shape) != list(target.shape):
                    raise ValueError(f"[oar.nn.Layer.set_state_dict] {key!r}: shape {list(value.shape)} in the "
                                     f"state dict does not match the layer's shape {list(target.shape)}")
                src_float = str(value.dtype).split(".")[-1].startswith(("float", "bfloat", "complex"))
                dst_float = str(target.dtype).split(".")[-1].startswith(("float", "bfloat", "complex"))
                if src_float != dst_float:
                    raise ValueError(f"[oar.nn.Layer.set_state_dict] {key!r}: dtype {value.dtype} in the state "
                                     f"dict cannot be loaded into a tensor of dtype {target.dtype}")
                target.copy_(value)
        return missing, unexpected

    set_dict = set_state_dict
    load_dict = set_state_dict

    # ---- modes, hooks, call

    def train(self):
        """Puts this layer and its sublayers in training mode.

        >>> import oar
        >>> d = oar.nn.Dropout(); _ = d.eval(); _ = d.train(); d.training
        True
        """
        for layer in self.sublayers(include_self=True):
            layer.training = True
        return self

    def eval(self):
        """Puts this layer and its sublayers in evaluation mode.

        >>> import oar
        >>> d = oar.nn.Dropout(); _ = d.eval(); d.training
        False
        """
        for layer in self.sublayers(include_self=True):
            layer.training = False
        return self

    def register_forward_pre_hook(self, hook):
        """hook(layer, inputs) runs before forward; a non-None return replaces the inputs.

        >>> import oar
        >>> relu = oar.nn.ReLU()
        >>> h = relu.register_forward_pre_hook(lambda layer, inp: (inp[0] * 2,))
        >>> relu(oar.to_tensor([1.0])).numpy().tolist()
        [2.0]
        >>> h.remove(); relu(oar.to_tensor([1.0])).numpy().tolist()
        [1.0]
        """
        handle = HookRemoveHelper(self._forward_pre_hooks)
        self._forward_pre_hooks[handle._hook_id] = hook
        return handle

    def register_forward_post_hook(self, hook):
        """hook(layer, inputs, output) runs after forward; a non-None return replaces the output.

        >>> import oar
        >>> relu = oar.nn.ReLU()
        >>> h = relu.register_forward_post_hook(lambda layer, inp, out: out + 1)
        >>> relu(oar.to_tensor([1.0])).numpy().tolist()
        [2.0]
        >>> h.remove()
        """
        handle = HookRemoveHelper(self._forward_post_hooks)
        self._forward_post_hooks[handle._hook_id] = hook
        return handle

    def forward(self, *inputs, **kwargs):
        raise NotImplementedError(f"[oar.nn.Layer] {type(self).__name__} does not define forward()")

    def __call__(self, *inputs, **kwargs):
        static = _static_mode()
        if static is not None:
            static._keep_pristine_buffers(self)
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, inputs)
            if result is not None:
                inputs = result if isinstance(result, tuple) else (result,)
        outputs = self.forward(*inputs, **kwargs)
        for hook in list(self._forward_post_hooks.values()):
            result = hook(self, inputs, outputs)
            if result is not None:
                outputs = result
        return outputs

    # ---- conversions and utilities

    def apply(self, fn):
        """Calls fn on every sublayer and then on self; returns self.

        >>> import oar
        >>> names = []
        >>> _ = oar.nn.Sequential(oar.nn.ReLU()).apply(lambda m: names.append(type(m).__name__))
        >>> names
        ['ReLU', 'Sequential']
        """
        for layer in self.children():
            layer.apply(fn)
        fn(self)
        return self

    def _convert(self, fn):
        """Replaces every parameter and buffer t with fn(t), keeping parameter attributes."""
        for layer in self.sublayers(include_self=True):
            for store in (layer._parameters, layer._buffers):
                for key, t in list(store.items()):
                    if t is None:
                        continue
                    with no_grad():
                        new = fn(t)
                    if new is t:
                        continue
                    for attr in ("name", "trainable", "persistable", "need_clip", "optimize_attr", "regularizer",
                                 "is_distributed"):
                        if hasattr(t, attr):
                            setattr(new, attr, getattr(t, attr))
                    new.stop_gradient = t.stop_gradient
                    store[key] = new
        return self

    def to(self, device=None, dtype=None, blocking=None):
        """Moves parameters and buffers to `device` ('cpu', 'gpu:0', a Place) and/or casts the
        floating ones to dtype; returns self.

        >>> import oar
        >>> fc = oar.nn.Linear(2, 2).to(dtype="float64")
        >>> fc.weight.dtype == oar.float64
        True
        >>> fc.to("cpu").weight.place
        Place(cpu)
        """
        if device is not None:
            from ...device import _parse
            kind, index = _parse(device, "oar.nn.Layer.to")

            def move(t):
                return t if tuple(_C._device_index(t)) == (kind, index) else _C._to_device(t, kind, index)
            self._convert(move)
        if dtype is None:
            return self
        dt = _dtype(dtype)

        def cast(t):
            name = str(t.dtype).split(".")[-1]
            if name.startswith(("float", "bfloat")) and t.dtype != dt:
                return _C.cast(t, dt)
            return t

        self._convert(cast)
        for layer in self.sublayers(include_self=True):
            layer._dtype = str(dt).split(".")[-1]
        return self

    def astype(self, dtype=None):
        """Casts floating parameters and buffers to dtype; returns self.

        >>> import oar
        >>> oar.nn.Linear(2, 2).astype("float64").bias.dtype == oar.float64
        True
        """
        return self.to(dtype=dtype)

    def float(self):
        return self.to(dtype="float32")

    def double(self):
        return self.to(dtype="float64")

    def clear_gradients(self, set_to_zero=True):
        """Clears the gradients of all parameters.

        >>> import oar
        >>> fc = oar.nn.Linear(2, 1)
        >>> fc(oar.ones([1, 2])).sum().backward()
        >>> fc.clear_gradients(set_to_zero=False); fc.weight.grad is None
        True
        """
        for p in self.parameters():
            if p.grad is not None:
                p._clear_grad(set_to_zero)

    def full_name(self):
        """The unique name of this layer, e.g. 'linear_0'.

        >>> import oar
        >>> oar.nn.Linear(2, 2).full_name().startswith("linear_")
        True
        """
        return self._full_name

    def extra_repr(self):
        """Extra text shown in repr(layer); override in subclasses."""
        return ""

    def __repr__(self):
        lines = []
        for name, layer in self._sub_layers.items():
            child = repr(layer).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"
