"""Helpers shared by the Paddle compatibility scripts: one result-line format
and seeded NumPy initial weights, so that two frameworks start equal and print
comparable numbers.

A result line is ``name: v1 v2 ...`` and may end with ``| rtol=R atol=A`` to
loosen (or tighten) the comparison of that line.
"""
import numpy as np
import paddle


def _fmt(v):
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.8g}"
    if isinstance(v, (complex, np.complexfloating)):
        return f"{v.real:.8g} {v.imag:.8g}"
    return str(v)


def show(name, value, rtol=None, atol=None):
    """Prints ``name: values`` for a tensor, array, number, string or a list of them."""
    if isinstance(value, paddle.Tensor):
        value = value.numpy()
    if isinstance(value, str):
        text = value
    elif isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        text = " ".join(value)
    else:
        arr = np.asarray(value)
        text = " ".join(_fmt(v) for v in arr.reshape(-1).tolist()) if arr.size else "<empty>"
    tol = []
    if rtol is not None:
        tol.append(f"rtol={rtol}")
    if atol is not None:
        tol.append(f"atol={atol}")
    print(f"{name}: {text}" + (" | " + " ".join(tol) if tol else ""))


def init_params(layer, seed, scale=None):
    """Sets every parameter of ``layer`` from a seeded NumPy draw, in parameters() order.

    Weights get U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (or U(-scale, scale)); normalisation
    statistics (``_mean``/``_variance``) keep their initial values.
    """
    rng = np.random.RandomState(seed)
    for name, p in layer.named_parameters():
        if name.endswith(("_mean", "_variance")):
            continue
        shape = list(p.shape)
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        s = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
        arr = rng.uniform(-s, s, size=shape)
        p.set_value(arr.astype(p.numpy().dtype))


def param_summary(layer):
    """Parameter count and the (name, shape) list, as result lines."""
    show("num_params", sum(int(np.prod(p.shape)) for p in layer.parameters()))
    show("param_shapes", [f"{n}={'x'.join(str(d) for d in p.shape)}" for n, p in layer.named_parameters()])


def batches(seed, n, shape, classes):
    """``n`` seeded (x, label) NumPy batches: x float32 ~ N(0, 1) of ``shape``, labels int64 [B, 1]."""
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(n):
        x = rng.randn(*shape).astype("float32")
        y = rng.randint(0, classes, size=(shape[0], 1)).astype("int64")
        out.append((x, y))
    return out
