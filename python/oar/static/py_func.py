"""``py_func``: a Python function on NumPy arrays as one op of a static program.

Note [py_func]
``py_func`` is a PyLayer (Note [PyLayer in programs] in src/ir/tracer.h): while a
program records, the call becomes one ``py_layer`` op, and each run of the
program hands the op back to Python, which calls ``func`` on the inputs' NumPy
values. ``func`` is not called while recording: the op's region then yields
placeholders (zeros) of the declared output dtypes and shapes. A ``-1`` dim of
an output, or a dim as large as the same dim of an input's recorded value
(static ``data`` records dynamic dims at size 2), follows that input dim, so a
program recorded once runs at any batch size. The backward calls
``backward_func`` through a second such op, so gradients also run it on the
values of each run. Because the region holds only placeholders, a program
saved for the C++ runtime cannot run ``func``.

With ``out=None`` the function only observes its inputs (printing, logging):
in static mode it runs after each run of the program, on the inputs' values.
"""
import numpy as np

from .. import _C
from ..autograd import PyLayer
from ..framework import _dtype
from . import program as _program

__all__ = ["py_func"]

_API = "oar.static.py_func"


def _as_list(v, what, allow):
    if v is None:
        return []
    items = list(v) if isinstance(v, (list, tuple)) else [v]
    for t in items:
        if not isinstance(t, allow):
            names = " or ".join(a.__name__ for a in allow)
            raise TypeError(f"[{_API}] {what} must be a {names} or a list of them, got {type(t).__name__}")
    return items


class _Out:
    """One declared output: dtype and dims, each dim fixed or following (input, axis)."""

    def __init__(self, spec, inputs, index):
        from . import InputSpec

        if isinstance(spec, _C.Tensor):
            shape = spec.__dict__.get("_declared_shape") or spec.shape
            dtype = spec.dtype
        elif isinstance(spec, np.ndarray):
            shape, dtype = spec.shape, _dtype(spec.dtype)
        else:  # InputSpec
            shape, dtype = spec.shape, spec.dtype
        self.dtype = dtype
        self.dims = []
        for j, d in enumerate(shape):
            d = -1 if d is None else int(d)
            src = [i for i, x in enumerate(inputs) if x.ndim > j and (d == -1 or x.shape[j] == d)]
            if src:
                self.dims.append((src[0], j, d))
            elif d == -1:
                src = [i for i, x in enumerate(inputs) if x.ndim > 0]
                if not src:
                    raise ValueError(f"[{_API}] out[{index}] has a -1 dim ({list(shape)}) but no input has a dim "
                                     "for it to follow")
                self.dims.append((src[0], 0, d))
            else:
                self.dims.append(d)

    def placeholder(self, xs):
        """Zeros of the declared dtype whose followed dims are those of the inputs (recorded values)."""
        import oar

        y = oar.zeros([1 if isinstance(d, tuple) else d for d in self.dims], dtype="float32")
        for j, d in enumerate(self.dims):
            if isinstance(d, tuple):
                i, axis, _ = d
                v = oar.zeros_like(xs[i], dtype="float32")
                others = [k for k in range(v.ndim) if k != axis]
                if others:
                    v = v.sum(axis=others)
                if len(self.dims) > 1:
                    v = v.unsqueeze([k for k in range(len(self.dims)) if k != j])
                y = y + v
        return y.astype(self.dtype)

    def check(self, arr, index, xs):
        """arr as a tensor of the declared dtype, after checking its rank and fixed dims."""
        import oar

        # A followed dim may take the input's size of this run; one declared with a size may also keep it.
        ok = [None if isinstance(d, tuple) and d[2] == -1 else
              {d[2], xs[d[0]].shape[d[1]]} if isinstance(d, tuple) else {d} for d in self.dims]
        if arr.ndim != len(ok) or any(o is not None and n not in o for o, n in zip(ok, arr.shape)):
            declared = [d[2] if isinstance(d, tuple) else d for d in self.dims]
            raise ValueError(f"[{_API}] func returned an array of shape {list(arr.shape)} for out[{index}], "
                             f"which was declared with shape {declared}")
        t = oar.to_tensor(arr)
        return t if t.dtype == self.dtype else t.astype(self.dtype)


def _arrays(result, n, what):
    """The arrays a user function returned: a list or tuple holds one per output, anything else is one."""
    items = list(result) if isinstance(result, (list, tuple)) else [result]
    if n == 1 and len(items) != 1:
        items = [result]  # one output given as nested lists
    if len(items) != n:
        raise ValueError(f"[{_API}] {what} must return {n} array(s), got {len(items)}")
    return [None if a is None else np.asarray(a.numpy() if isinstance(a, _C.Tensor) else a) for a in items]


def _values(xs):
    return [None if x is None else x.numpy() for x in xs]


class _Call:
    """What one py_func call runs: func and its outputs, and the backward's selection of arguments."""

    def __init__(self, func, outs, backward_func, keep, nx):
        self.func, self.outs, self.backward_func, self.keep, self.nx = func, outs, backward_func, keep, nx

    def forward(self, xs):
        if _C._ir_is_tracing():
            return [o.placeholder(xs) for o in self.outs]
        result = self.func(*_values(xs))
        if not self.outs:
            return []
        arrays = _arrays(result, len(self.outs), "func")
        for i, a in enumerate(arrays):
            if a is None:
                raise ValueError(f"[{_API}] func returned None for out[{i}]; it must return an array per output")
        return [o.check(a, i, xs) for i, (o, a) in enumerate(zip(self.outs, arrays))]

    def backward(self, args):
        """args: the inputs, the outputs and the outputs' gradients; returns one gradient per input."""
        import oar

        xs = args[:self.nx]
        if _C._ir_is_tracing():
            return [oar.zeros_like(x) for x in xs]
        chosen = [a for a, k in zip(args, self.keep) if k] + list(args[self.nx + len(self.outs):])
        grads = _arrays(self.backward_func(*_values(chosen)), self.nx, "backward_func")
        out = []
        for x, g in zip(xs, grads):
            if g is None:  # no gradient for this input
                out.append(oar.zeros_like(x))
                continue
            if list(g.shape) != list(x.shape):
                raise ValueError(f"[{_API}] backward_func returned a gradient of shape {list(g.shape)} for an "
                                 f"input of shape {list(x.shape)}")
            out.append(oar.to_tensor(g).astype(x.dtype))
        return out


class _PyFuncGrad(PyLayer):
    """The backward of py_func as its own op: runs backward_func on NumPy values."""

    @staticmethod
    def forward(ctx, call, *args):
        ctx.n = sum(isinstance(a, _C.Tensor) for a in args)
        return tuple(call.backward(args))

    @staticmethod
    def backward(ctx, *grads):
        return (None,) * ctx.n


class _PyFunc(PyLayer):
    @staticmethod
    def forward(ctx, call, *xs):
        outs = call.forward(xs)
        ctx.call = call
        if call.backward_func is None:
            ctx.mark_non_differentiable(*outs)
        else:
            ctx.save_for_backward(*xs, *outs)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        saved = list(ctx.saved_tensor())
        grads = [g if isinstance(g, _C.Tensor) else None for g in grads]
        result = _PyFuncGrad.apply(ctx.call, *saved, *grads)
        return tuple(result) if isinstance(result, (tuple, list)) else result


def py_func(func, x, out, backward_func=None, skip_vars_in_backward_input=None):
    """Runs ``func`` on the NumPy values of ``x`` as an op of the program (Note [py_func]).

    ``x`` is a Tensor or a list of Tensors (or None); ``func`` receives their values
    as NumPy arrays and returns one array per output. ``out`` declares the outputs:
    a Tensor (its dtype and shape; the result is also written into it, so it can be
    fetched), a NumPy array or an ``oar.static.InputSpec`` (its dtype and shape, -1
    for a dim that follows the inputs), or a list of them, or None when ``func``
    only observes its inputs. ``backward_func`` receives the inputs, the outputs
    (minus those in ``skip_vars_in_backward_input``) and the outputs' gradients, and
    returns one gradient array (or None) per input; without it no gradient flows
    back through the op. Returns the outputs (a Tensor, or a list for a list).

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> main = oar.static.Program()
    >>> with oar.static.program_guard(main):
    ...     x = oar.static.data("x", [None, 2], "float32")
    ...     y = oar.static.py_func(lambda a: np.sort(a, axis=1)[:, ::-1] * 10,
    ...                            x, oar.static.InputSpec([-1, 2], "float32"))
    >>> exe = oar.static.Executor()
    >>> exe.run(main, feed={"x": np.array([[1, 2], [4, 3], [0, 5]], "float32")}, fetch_list=[y])[0].tolist()
    [[20.0, 10.0], [40.0, 30.0], [50.0, 0.0]]
    >>> oar.disable_static()
    """
    from . import InputSpec

    if not callable(func):
        raise TypeError(f"[{_API}] func must be callable, got {type(func).__name__}")
    if backward_func is not None and not callable(backward_func):
        raise TypeError(f"[{_API}] backward_func must be callable or None, got {type(backward_func).__name__}")
    xs = _as_list(x, "x", (_C.Tensor,))
    outs_given = _as_list(out, "out", (_C.Tensor, np.ndarray, InputSpec))
    skip = _as_list(skip_vars_in_backward_input, "skip_vars_in_backward_input", (_C.Tensor,))
    known = {id(t) for t in xs} | {id(t) for t in outs_given}
    for t in skip:
        if id(t) not in known:
            raise ValueError(f"[{_API}] skip_vars_in_backward_input must hold tensors of x or out, "
                             f"got one that is neither")
    skipped = {id(t) for t in skip}
    # Skipping an input skips every mention of it, as Paddle skips variables by name.
    keep = [id(t) not in skipped for t in xs] + [id(t) not in skipped for t in outs_given]
    outs = [_Out(o, xs, i) for i, o in enumerate(outs_given)]
    call = _Call(func, outs, backward_func, keep, len(xs))

    if not outs_given:
        if _program._state.static:
            if not xs:
                raise ValueError(f"[{_API}] with out=None, x must name the tensors func observes")
            seen = {}

            def hook(i):
                def run(value):
                    seen[i] = value
                    if len(seen) == len(xs):
                        func(*[np.asarray(seen[k]) for k in range(len(xs))])
                        seen.clear()
                return run

            root = _program.default_main_program()._root()
            root._hooks.extend((t, hook(i)) for i, t in enumerate(xs))
        elif not _C._ir_is_tracing():
            func(*_values(xs))
        return None

    results = _PyFunc.apply(call, *xs)
    results = list(results) if isinstance(results, (tuple, list)) else [results]
    final = []
    for given, r in zip(outs_given, results):
        if isinstance(given, _C.Tensor):
            import oar

            oar.assign(r, output=given)
            final.append(given)
        else:
            final.append(r)
    if isinstance(out, (list, tuple)):
        return final
    return final[0]
