"""The graph IR from Python: capture a function as a Program by tracing, print
it, verify it and run it.

A Program (src/ir/ir.h) is SSA over the same op definitions that eager code
runs. Tracing runs the function once on example inputs; every op it
dispatches is recorded, and the tensors it reads that it did not compute
(layer weights, captured constants) become the program's parameters, bound to
those same tensor objects, so a program run sees later updates to them and
gradients flow back to them.

This is the core that ``oar.jit.to_static`` builds on; it is internal.
"""
from . import _C, _pytree

__all__ = []

Tensor = _C.Tensor


def _flatten(out):
    """The tensors of a function result (Tensors in lists, tuples, dicts, dataclasses) and its layout."""
    leaves = []
    layout = _pytree.flatten(out, leaves)
    return leaves, layout


def _rebuild(tensors, layout):
    """The result of a program: its outputs put in ``layout`` (an oar._pytree layout); ``list`` gives
    all of them as a list and None the only one."""
    if layout is list:
        return list(tensors)
    if layout is None:
        return tensors[0]
    return _pytree.unflatten(layout, tensors)


class Program:
    """A captured program with the tensors bound to its parameters.

    >>> import oar
    >>> from oar import _ir
    >>> prog, out = _ir.trace(lambda x: oar.nn.functional.relu(x * 2.0), [oar.to_tensor([-1.0, 3.0])])
    >>> prog.verify()
    >>> prog.inputs, prog.outputs
    (['x0'], ['out0'])
    >>> prog.run(oar.to_tensor([1.0, -2.0])).numpy().tolist()
    [2.0, 0.0]
    """

    def __init__(self, prog, bindings, out_kind):
        self._prog = prog
        self._bindings = list(bindings)
        self._out_kind = out_kind

    def __str__(self):
        return str(self._prog)

    __repr__ = __str__

    def verify(self):
        """Raises ValueError naming the op and what is wrong if the program is malformed."""
        self._prog.verify()

    @property
    def inputs(self):
        return list(self._prog.input_names)

    @property
    def outputs(self):
        return list(self._prog.output_names)

    @property
    def parameters(self):
        return list(self._prog.parameter_names)

    @property
    def input_types(self):
        """(dtype name, shape) per input; -1 marks a dynamic dim."""
        return [(d, list(s)) for d, s in self._prog.input_types]

    @property
    def notes(self):
        """Ops whose result shapes could not follow a dynamic input dim."""
        return list(self._prog.notes)

    def bound_parameters(self):
        """(name, tensor) for each parameter, in program order."""
        return list(zip(self._prog.parameter_names, self._bindings))

    def optimize(self, dce=True, cse=True, fold=True, fold_conv_bn=False, fuse_softmax_layer_norm=False,
                 fuse_linear_act=False, fuse_conv_act=False, fuse_attention=False, fuse_elementwise=False,
                 build_strategy=None):
        """Runs the graph passes in place until none changes the program, then verifies it.

        dce removes ops whose results nothing reads (never random or
        side-effect ops), cse merges identical ops (same op, operands and
        attributes), fold evaluates ops over captured constants once and
        replaces them by a new constant (named parameters are never folded).
        The fusions replace a pattern whose intermediates nothing else reads
        by one fused op with the same gradient: fuse_softmax_layer_norm
        (hand-written softmax and layer norm over the last axis become the
        single ops), fuse_linear_act (linear or
        matmul + bias, then relu/gelu/silu/sigmoid/tanh), fuse_conv_act (a 4-D
        conv + bias + residual + relu/relu6/gelu/... as one oneDNN convolution
        with post-ops), fuse_attention
        (q k^T, scale, mask, softmax, times v) and fuse_elementwise (a tree of
        elementwise ops evaluated block by block in one kernel).
        fold_conv_bn folds an inference batch_norm into the conv before it,
        baking in the current weights: for inference programs only.
        build_strategy (an oar.static.BuildStrategy) gives all the flags at
        once instead. Returns a dict telling, for each pass that ran, whether
        it changed the program.

        >>> import oar
        >>> from oar import _ir
        >>> c = oar.to_tensor([1.0, 2.0])
        >>> prog, _ = _ir.trace(lambda x: x * (c + c) + x * (c + c), [oar.to_tensor([3.0, 4.0])])
        >>> prog.optimize()
        {'dce': False, 'cse': True, 'fold': True}
        >>> prog.run(oar.to_tensor([1.0, 1.0])).numpy().tolist()
        [4.0, 8.0]
        >>> prog, _ = _ir.trace(lambda x: oar.tanh(oar.exp(x) * 2.0 + x), [oar.to_tensor([3.0, 4.0])])
        >>> prog.optimize(fuse_elementwise=True)["fuse_elementwise"]
        True
        >>> [round(v, 4) for v in prog.run(oar.to_tensor([0.0, -1.0])).numpy().tolist()]
        [0.964, -0.2583]
        """
        flags = dict(dce=dce, cse=cse, fold=fold, fold_conv_bn=fold_conv_bn,
                     fuse_softmax_layer_norm=fuse_softmax_layer_norm, fuse_linear_act=fuse_linear_act,
                     fuse_conv_act=fuse_conv_act, fuse_attention=fuse_attention, fuse_elementwise=fuse_elementwise)
        if build_strategy is not None:
            if not hasattr(build_strategy, "pass_flags"):
                raise TypeError(f"[oar.ir.optimize] build_strategy must be an oar.static.BuildStrategy, "
                                f"got {type(build_strategy).__name__}")
            flags = build_strategy.pass_flags()
        flags = {k: bool(v) for k, v in flags.items()}
        changed, self._bindings = _C._ir_run_passes(self._prog, self._bindings, **flags)
        self._bindings = list(self._bindings)
        return {k: bool(changed[k]) for k, on in flags.items() if on}

    def run(self, *inputs):
        """Runs the program op by op (with autograd, as eager code) on new inputs."""
        for i, t in enumerate(inputs):
            if not isinstance(t, Tensor):
                raise TypeError(f"[oar.ir.run] input {i} must be a Tensor, got {type(t).__name__}")
        outs = self._prog.run(list(inputs), self._bindings)
        return _rebuild(outs, self._out_kind)


def _named(parameters):
    if parameters is None:
        return []
    items = parameters.items() if isinstance(parameters, dict) else parameters
    out = []
    for item in items:
        name, t = item
        if not isinstance(t, Tensor):
            raise TypeError(f"[oar.ir.trace] parameter '{name}' must be a Tensor, got {type(t).__name__}")
        out.append((str(name), t))
    return out


def trace(fn, example_inputs, dynamic_dims=None, parameters=None):
    """Captures ``fn(*example_inputs)`` as a Program; returns (program, eager outputs).

    dynamic_dims: one entry per input, each None or a list of axes whose size
    may differ between runs (an input spec's -1 dims). parameters: (name,
    tensor) pairs or a dict, e.g. ``layer.named_parameters()``, naming the
    tensors the program reads from outside; other such tensors become
    auto-named constants.

    >>> import oar
    >>> from oar import _ir
    >>> lin = oar.nn.Linear(3, 2)
    >>> prog, y = _ir.trace(lin, [oar.ones([4, 3])], dynamic_dims=[[0]], parameters=lin.named_parameters())
    >>> prog.parameters
    ['weight', 'bias']
    >>> prog.run(oar.ones([7, 3])).shape
    [7, 2]
    """
    examples = list(example_inputs)
    for i, t in enumerate(examples):
        if not isinstance(t, Tensor):
            raise TypeError(f"[oar.ir.trace] example input {i} must be a Tensor, got {type(t).__name__}")
    if dynamic_dims is None:
        dynamic_dims = [None] * len(examples)
    dynamic_dims = list(dynamic_dims)
    if len(dynamic_dims) != len(examples):
        raise ValueError(f"[oar.ir.trace] dynamic_dims needs one entry per input ({len(examples)}), "
                         f"got {len(dynamic_dims)}")
    dyn = [[] if d is None else [int(a) for a in d] for d in dynamic_dims]
    kind = []

    def thunk():
        flat, k = _flatten(fn(*examples))
        kind.append(k)
        return flat

    prog, flat, bindings = _C._ir_trace(thunk, examples, [f"x{i}" for i in range(len(examples))], dyn,
                                        _named(parameters))
    return Program(prog, bindings, kind[0]), _rebuild(list(flat), kind[0])
