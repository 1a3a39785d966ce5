"""``summary``: a table of a network's layers, output shapes and parameter counts."""
import numbers

import numpy as np

from .. import _C
from ..autograd import no_grad

__all__ = ["summary"]

_CONTAINERS = ("Sequential", "LayerList", "LayerDict", "ParameterList")


def _shape_of(x):
    if isinstance(x, _C.Tensor):
        return list(x.shape)
    if isinstance(x, (list, tuple)):
        shapes = [_shape_of(v) for v in x]
        return shapes[0] if len(shapes) == 1 else shapes
    if isinstance(x, dict):
        return {k: _shape_of(v) for k, v in x.items()}
    return []


def _is_shape(obj):
    return isinstance(obj, (list, tuple)) and all(d is None or isinstance(d, numbers.Integral) for d in obj)


def _make_inputs(input_size, dtypes):
    from ..creation import zeros
    from .. import rand
    if _is_shape(input_size) or hasattr(input_size, "shape"):
        sizes = [input_size]
    elif isinstance(input_size, (list, tuple)):
        sizes = list(input_size)
    else:
        raise TypeError(f"[oar.summary] input_size must be a shape tuple, an InputSpec or a list of them, "
                        f"got {type(input_size).__name__}")
    if dtypes is None:
        dtypes = [getattr(s, "dtype", None) or "float32" for s in sizes]
    elif isinstance(dtypes, (list, tuple)):
        if len(dtypes) != len(sizes):
            raise ValueError(f"[oar.summary] dtypes has {len(dtypes)} entries for {len(sizes)} inputs")
    else:
        dtypes = [dtypes] * len(sizes)
    inputs = []
    for size, dtype in zip(sizes, dtypes):
        shape = getattr(size, "shape", size)
        if not _is_shape(shape):
            raise TypeError(f"[oar.summary] each input size must be a tuple of ints, got {size!r}")
        # an unknown (None / -1) dimension, usually the batch, becomes 1
        shape = [1 if d is None or d < 0 else int(d) for d in shape]
        name = str(dtype).replace("paddle.", "")
        if name.startswith(("float", "bfloat")):
            inputs.append(rand(shape).astype(name))
        else:
            inputs.append(zeros(shape, dtype=name))
    return inputs


def run_hooked(net, inputs, hooks):
    """Runs net(*inputs) once in eval mode without recording (BatchNorm
    statistics and dropout untouched), then removes `hooks` (handles of
    forward hooks) and restores every layer's training mode."""
    modes = [(layer, layer.training) for layer in net.sublayers(include_self=True)]
    try:
        net.eval()
        with no_grad():
            net(*inputs)
    finally:
        for h in hooks:
            h.remove()
        for layer, mode in modes:
            layer.training = mode


def summary(net, input_size=None, dtypes=None, input=None):
    """Runs one forward pass on random inputs of ``input_size`` (a shape
    tuple with ``None``/-1 for the batch, an InputSpec, or a list of those;
    or pass ``input`` tensors directly) and prints each layer's output shape
    and parameter count. Persistable buffers (BatchNorm's running mean and
    variance) count as non-trainable parameters, as in Paddle. Returns
    ``{'total_params': n, 'trainable_params': m}``.

    >>> import oar
    >>> net = oar.nn.Sequential(oar.nn.Linear(4, 8), oar.nn.ReLU(), oar.nn.Linear(8, 2))
    >>> info = oar.hapi.summary(net, (None, 4))  # doctest: +ELLIPSIS
    ---...
     Layer (type)       Input Shape          Output Shape          Param #
    ===...
       Linear-1           [[1, 4]]              [1, 8]                  40
        ReLU-1            [[1, 8]]              [1, 8]                   0
       Linear-2           [[1, 8]]              [1, 2]                  18
    ===...
    Total params: 58
    Trainable params: 58
    Non-trainable params: 0
    ---...
    >>> info
    {'total_params': 58, 'trainable_params': 58}
    """
    from ..nn import Layer
    if not isinstance(net, Layer):
        raise TypeError(f"[oar.summary] net must be an oar.nn.Layer, got {type(net).__name__}")
    if input is None and input_size is None:
        raise ValueError("[oar.summary] give input_size or input")
    if input is not None:
        inputs = list(input) if isinstance(input, (list, tuple)) else [input]
    else:
        inputs = _make_inputs(input_size, dtypes)

    rows = []
    counters = {}
    hooks = []

    def hook(layer, layer_in, layer_out):
        cls = type(layer).__name__
        counters[cls] = counters.get(cls, 0) + 1
        own = [p for p in layer._parameters.values() if p is not None]
        bufs = [b for n, b in layer._buffers.items()
                if b is not None and n not in layer._non_persistable_buffer_names_set]
        n_params = sum(int(np.prod(p.shape)) for p in own) + sum(int(np.prod(b.shape)) for b in bufs)
        in_shape = [_shape_of(x) for x in layer_in]
        rows.append((f"{cls}-{counters[cls]}", in_shape, _shape_of(layer_out), n_params))

    layers = net.sublayers(include_self=True)
    for layer in layers:
        is_container = type(layer).__name__ in _CONTAINERS and not layer._parameters
        has_children = bool(layer.sublayers())
        if is_container or (has_children and not layer._parameters and layer is not net) \
                or (layer is net and has_children and not layer._parameters):
            continue
        hooks.append(layer.register_forward_post_hook(hook))
    run_hooked(net, inputs, hooks)

    seen = set()
    total = trainable = 0
    for p in net.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        n = int(np.prod(p.shape))
        total += n
        if getattr(p, "trainable", True) and not p.stop_gradient:
            trainable += n
    for name, b in net.named_buffers():
        owner = net
        *path, leaf = name.split(".")
        for part in path:
            owner = getattr(owner, part)
        if id(b) not in seen and leaf not in owner._non_persistable_buffer_names_set:
            seen.add(id(b))
            total += int(np.prod(b.shape))

    width = 75
    lines = ["-" * width, f"{'Layer (type)':^15}{'Input Shape':^22}{'Output Shape':^20}{'Param #':>13}",
             "=" * width]
    for name, in_shape, out_shape, n in rows:
        lines.append(f"{name:^15}{str(in_shape):^22}{str(out_shape):^20}{n:>13,}")
    lines += ["=" * width, f"Total params: {total:,}", f"Trainable params: {trainable:,}",
              f"Non-trainable params: {total - trainable:,}", "-" * width]
    print("\n".join(lines))
    return {"total_params": total, "trainable_params": trainable}
