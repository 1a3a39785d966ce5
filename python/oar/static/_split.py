"""Captured backward programs for to_static calls.

Note [captured backward]
A to_static call that needs gradients runs two programs, as Paddle does: a
forward program that returns the call's outputs and the values the backward
needs, and a backward program that maps those saved values and the gradients
of the outputs to the gradients of the parameters and inputs. Both come from
one joint program, traced per input signature: it runs the forward program
and then ``oar.grad`` of its outputs, so its backward ops are the gradient
rules of the forward ops, recorded by the tracer (the same rules eager
autograd runs). The joint program is split by data flow: ops that the
outputs (and the state updates) need and that do not read the output
gradients form the forward program; the ops that the parameter and input
gradients need form the backward program, whose inputs are the forward values
it reads (saved) and the output gradients. Parameters stay bound to the
layer's tensors in both; optimizer state never enters either.

The call runs the forward program without autograd and gives its outputs one
autograd node (``_C._static_attach_backward``) that runs the backward program.
Gradient rules read concrete shapes, so the programs are specialised to the
call's input shapes. The saved values carry no autograd history, so a
backward with ``create_graph=True`` (a gradient to be differentiated again)
instead reruns the whole forward program with autograd and lets the engine
differentiate it, as eager code would. A call whose program the split cannot
handle (an output that is an input or a parameter, control-flow ops, whose
backward the tracer does not capture) runs the forward program with eager
autograd instead.
"""
import json

from .. import _C, _ir
from ..autograd import no_grad

Tensor = _C.Tensor

_DIFFERENTIABLE = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


class CannotSplit(Exception):
    """The call's program cannot be split; it runs with eager autograd."""


def _differentiable(t):
    return str(t.dtype).split(".")[-1] in _DIFFERENTIABLE


class SplitProgram:
    """The forward and backward programs of one call signature."""

    def __init__(self, forward, backward, num_outputs, diff, params, leaf_index):
        self.forward = forward          # _ir.Program: outputs, then saved values
        self.backward = backward        # _C._BackwardProgram
        self.num_outputs = num_outputs
        self.diff = diff                # indices of the outputs that get gradients
        self.params = params            # bound tensors that get gradients
        self.leaf_index = leaf_index    # indices of the inputs that get gradients

    def __call__(self, leaves):
        rng = _C.get_rng_state()  # a create_graph rerun of the forward draws the same numbers
        with no_grad():
            flat = self.forward.run(*leaves)
        outs, saved = flat[:self.num_outputs], flat[self.num_outputs:]
        _C._static_attach_backward([outs[i] for i in self.diff], list(leaves), self.params, self.leaf_index,
                                   self.backward, saved, rng)
        return outs


def _run_raw(program, leaves):
    return list(program._prog.run(list(leaves), program._bindings))


def build(program, leaves):
    """The SplitProgram of `program` (an oar._ir.Program) for these inputs, or None if nothing needs a gradient."""
    bound = program.bound_parameters()
    params = [t for _, t in bound if not t.stop_gradient]
    leaf_index = [i for i, t in enumerate(leaves) if not t.stop_gradient]
    if not params and not leaf_index:
        return None
    # The runs below (for the output shapes, and the trace) apply the
    # program's state updates (buffers, and parameters written in place);
    # the call applies them once, so undo these.
    try:
        updated = {u["parameter"] for u in json.loads(_C._ir_to_json(program._prog)).get("state_updates", ())}
    except NotImplementedError:  # a program the format cannot write: keep every bound tensor
        updated = {name for name, _ in bound}
    buffers = [t for name, t in bound if name in updated]
    with no_grad():
        saved_buffers = [_C.clone(b) for b in buffers]
    rng = _C.get_rng_state()  # and the random numbers these runs draw
    try:
        with no_grad():
            outs0 = _run_raw(program, leaves)
        diff = [i for i, o in enumerate(outs0) if _differentiable(o)]
        if not diff:
            return None
        n = len(leaves)
        examples = []
        for i, t in enumerate(leaves):
            e = t.detach()
            e.stop_gradient = i not in leaf_index
            examples.append(e)
        cots = [_C.full(outs0[i].shape, 0, outs0[i].dtype) for i in diff]
        used = []

        def joint(*ts):
            xs, cs = ts[:n], ts[n:]
            outs = _run_raw(program, xs)
            wrt = params + [xs[i] for i in leaf_index]
            grads = _C._grad([outs[i] for i in diff], wrt, list(cs), False, False, True)
            # A parameter the outputs do not read gets no gradient (its .grad stays None, as in eager mode).
            used.extend(k for k, g in enumerate(grads) if g is not None)
            return outs + [grads[k] for k in used]

        try:
            joint_program, _ = _ir.trace(joint, examples + cots, parameters=bound)
        except Exception as e:  # e.g. backward through control flow, which tracing does not capture
            raise CannotSplit(str(e)) from e
        # The backward recorded by the trace repeats what the forward computed
        # (CSE) and is mostly chains of elementwise ops (fusion); folding is
        # left to the caller's build strategy.
        joint_program.optimize(dce=True, cse=True, fold=False, fuse_elementwise=True)
    finally:
        _C.set_rng_state(*rng)
        with no_grad():
            for b, s in zip(buffers, saved_buffers):
                b.copy_(s)
    fdoc, fbind, bdoc, bbind = _partition(json.loads(_C._ir_to_json(joint_program._prog)),
                                          joint_program._bindings, n, len(outs0))
    forward = _ir.Program(_C._ir_from_json(json.dumps(fdoc), "<forward program>"), fbind, list)
    backward = _C._static_backward_program(json.dumps(bdoc), bbind, _C._ir_to_json(program._prog),
                                           list(program._bindings), diff)
    wrt = [("param", p) for p in params] + [("leaf", i) for i in leaf_index]
    wrt = [wrt[k] for k in used]
    if not wrt:
        return None
    return SplitProgram(forward, backward, len(outs0), diff, [p for kind, p in wrt if kind == "param"],
                        [i for kind, i in wrt if kind == "leaf"])


def _reads(op):
    out = [v for v in op["operands"] if v is not None]
    for region in op.get("regions", ()):
        out.extend(v for v in region.get("yields", ()) if v is not None)
        for inner in region.get("ops", ()):
            out.extend(_reads(inner))
    return out


def _partition(doc, bindings, num_inputs, num_outputs):
    """Splits the joint program's document into the forward and backward documents (Note [captured backward])."""
    # A py_layer op's region is its forward only; its backward is the Python
    # backward, traced into the joint program (Note [PyLayer in programs]).
    if any(op.get("regions") and op["op"] != "py_layer" for op in doc["ops"]):
        raise CannotSplit("control-flow ops: their backward is not captured by tracing")
    inputs, cot_inputs = doc["inputs"][:num_inputs], doc["inputs"][num_inputs:]
    outputs, grad_outputs = doc["outputs"][:num_outputs], doc["outputs"][num_outputs:]
    arg_ids = {a["id"] for a in doc["inputs"]} | {a["id"] for a in doc["parameters"]}
    out_ids = [o["id"] for o in outputs]
    if any(i in arg_ids for i in out_ids) or len(set(out_ids)) != len(out_ids):
        raise CannotSplit("an output is an input, a parameter, or returned twice")
    types = {a["id"]: (a["dtype"], a["shape"]) for a in doc["inputs"]}
    for op in doc["ops"]:
        for r in op["results"]:
            types[r["id"]] = (r["dtype"], r["shape"])
    # Values that depend on the output gradients.
    cot = {a["id"] for a in cot_inputs}
    for op in doc["ops"]:
        if any(v in cot for v in _reads(op)):
            cot.update(r["id"] for r in op["results"])
    updates = doc.get("state_updates", [])
    need = set(out_ids) | {u["id"] for u in updates}
    forward_ops = set()
    for k in range(len(doc["ops"]) - 1, -1, -1):
        op = doc["ops"][k]
        if any(r["id"] in need for r in op["results"]):
            if any(r["id"] in cot for r in op["results"]):
                raise CannotSplit("an output depends on the output gradients")
            forward_ops.add(k)
            need.update(_reads(op))
    forward_need = need
    need = {o["id"] for o in grad_outputs}
    backward_ops = []
    for k in range(len(doc["ops"]) - 1, -1, -1):
        op = doc["ops"][k]
        if k not in forward_ops and any(r["id"] in need for r in op["results"]):
            backward_ops.append(op)
            need.update(_reads(op))
    backward_ops.reverse()
    forward_defined = {a["id"] for a in inputs}
    for k in forward_ops:
        forward_defined.update(r["id"] for r in doc["ops"][k]["results"])
    saved = sorted(need & forward_defined)

    def params_for(ids):
        ps = [(a, b) for a, b in zip(doc["parameters"], bindings) if a["id"] in ids]
        return [a for a, _ in ps], [b for _, b in ps]

    fparams, fbind = params_for(forward_need | set(saved))
    fdoc = dict(doc)
    fdoc.update(inputs=inputs, parameters=fparams, ops=[op for k, op in enumerate(doc["ops"]) if k in forward_ops],
                outputs=[{"name": f"out{i}", "id": v} for i, v in enumerate(out_ids)] +
                        [{"name": f"saved{j}", "id": v} for j, v in enumerate(saved)],
                state_updates=updates, notes=[])
    bparams, bbind = params_for(need)
    bdoc = json.loads(json.dumps(dict(doc, inputs=[], parameters=bparams, ops=backward_ops)))
    bdoc.update(inputs=[{"name": f"saved{j}", "id": v, "dtype": types[v][0], "shape": types[v][1]}
                        for j, v in enumerate(saved)] + json.loads(json.dumps(cot_inputs)),
                outputs=[{"name": f"grad{i}", "id": o["id"]} for i, o in enumerate(grad_outputs)],
                state_updates=[], notes=[])
    return fdoc, fbind, _renumber(bdoc), bbind


def _renumber(doc):
    """Gives the arguments ids in list order: the reader orders block arguments by id (saved values first)."""
    ids = {}
    for a in doc["inputs"] + doc["parameters"]:
        ids[a["id"]] = len(ids)
    for op in doc["ops"]:
        for r in op["results"]:
            ids[r["id"]] = len(ids)
    for a in doc["inputs"] + doc["parameters"]:
        a["id"] = ids[a["id"]]
    for op in doc["ops"]:
        op["operands"] = [None if v is None else ids[v] for v in op["operands"]]
        for r in op["results"]:
            r["id"] = ids[r["id"]]
    for o in doc["outputs"]:
        o["id"] = ids[o["id"]]
    return doc
