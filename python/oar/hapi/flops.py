"""``flops``: the floating-point operations of a network's forward pass, per layer.

The counting rules are Paddle's (``paddle.flops``), so the totals agree for
the layers Paddle counts: a convolution costs, per output element,
``in_channels / groups * prod(kernel) (+ 1 with a bias)``; a linear layer
``in_features`` per output element; batch norm in eval mode ``2`` per
element (every BatchNorm variant here; Paddle counts BatchNorm and
BatchNorm2D only); average pooling ``1`` per output element, adaptive
average pooling ``prod(input / output) + 1``; LeakyReLU ``1`` per input
element. Other layers count as zero unless ``custom_ops`` maps their class
to a function ``fn(layer, inputs, output)`` returning their count.
"""
import numpy as np

from .. import _C, nn
from .summary import _make_inputs, _shape_of, run_hooked

__all__ = ["flops"]


def _numel(t):
    return int(np.prod(t.shape)) if isinstance(t, _C.Tensor) else 0


def _first(x):
    return x[0] if isinstance(x, (list, tuple)) and x else x


def _conv(layer, inputs, out):
    w = layer.weight
    bias = 1 if getattr(layer, "bias", None) is not None else 0
    groups = getattr(layer, "_groups", 1) or 1
    in_channels = _first(inputs).shape[1]
    return _numel(out) * (in_channels // groups * int(np.prod(w.shape[2:])) + bias)


def _linear(layer, inputs, out):
    return layer.weight.shape[0] * _numel(out)


def _batch_norm(layer, inputs, out):
    return 0 if layer.training else 2 * _numel(_first(inputs))


def _avg_pool(layer, inputs, out):
    return _numel(out)


def _adaptive_avg_pool(layer, inputs, out):
    kernel = np.array(_first(inputs).shape[2:]) // np.array(out.shape[2:])
    return (int(np.prod(kernel)) + 1) * _numel(out)


def _per_input_element(layer, inputs, out):
    return _numel(_first(inputs))


def _zero(layer, inputs, out):
    return 0


def _rules():
    rules = {}
    for names, fn in ((("Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose"),
                       _conv),
                      (("BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D"), _batch_norm),
                      (("Linear",), _linear),
                      (("AvgPool1D", "AvgPool2D", "AvgPool3D"), _avg_pool),
                      (("AdaptiveAvgPool1D", "AdaptiveAvgPool2D", "AdaptiveAvgPool3D"), _adaptive_avg_pool),
                      (("LeakyReLU",), _per_input_element),
                      (("ReLU", "ReLU6", "Dropout"), _zero)):
        for n in names:
            if hasattr(nn, n):
                rules[getattr(nn, n)] = fn
    return rules


def flops(net, input_size, custom_ops=None, print_detail=False):
    """The FLOPs of one forward pass of ``net`` on a random input of shape
    ``input_size`` (Paddle's counting rules; see the module docstring). With
    ``print_detail``, prints a table of the leaf layers; always prints the
    totals, and returns the FLOPs.

    >>> import oar
    >>> net = oar.nn.Sequential(oar.nn.Conv2D(1, 6, 3, padding=1), oar.nn.ReLU(), oar.nn.Flatten(),
    ...                         oar.nn.Linear(6 * 4 * 4, 10))
    >>> oar.flops(net, [1, 1, 4, 4])
    Total Flops: 1920     Total Params: 1030
    1920
    """
    api = "oar.flops"
    if not isinstance(net, nn.Layer):
        raise TypeError(f"[{api}] net must be an oar.nn.Layer, got {type(net).__name__}")
    custom_ops = dict(custom_ops or {})
    for k, fn in custom_ops.items():
        if not (isinstance(k, type) and callable(fn)):
            raise TypeError(f"[{api}] custom_ops must map Layer classes to functions fn(layer, inputs, output)")
    rules = _rules()
    rows, hooks = [], []

    def counter(layer, fn):
        def hook(lay, inputs, out):
            n = int(fn(lay, inputs, out) or 0) if fn is not None else 0
            params = sum(_numel(p) for p in lay.parameters())
            rows.append((lay.full_name(), _shape_of(_first(inputs)), _shape_of(out), params, abs(n)))
        return hook

    leaves = [m for m in net.sublayers(include_self=True) if not list(m.children())]
    for m in leaves:
        fn = custom_ops.get(type(m), rules.get(type(m)))
        hooks.append(m.register_forward_post_hook(counter(m, fn)))
    run_hooked(net, _make_inputs(input_size, None), hooks)
    total_ops = sum(r[4] for r in rows)
    total_params = sum(r[3] for r in rows)
    if print_detail:
        head = ("Layer Name", "Input Shape", "Output Shape", "Params", "Flops")
        body = [(n, str(i), str(o), str(p), str(f)) for n, i, o, p, f in rows]
        widths = [max(len(r[c]) for r in [head] + body) + 2 for c in range(5)]
        rule = "+" + "+".join("-" * w for w in widths) + "+"
        lines = [rule, "|" + "|".join(h.center(w) for h, w in zip(head, widths)) + "|", rule]
        lines += ["|" + "|".join(v.center(w) for v, w in zip(r, widths)) + "|" for r in body]
        print("\n".join(lines + [rule]))
    print(f"Total Flops: {total_ops}     Total Params: {total_params}")
    return total_ops
