"""Argument normalisation shared by the convolution and pooling wrappers:
Paddle's int / list / pair / 'same' / 'valid' padding forms, data formats and
per-dim sizes. Errors start with the public API name."""
import numbers

from ... import _C

_FORMATS = {1: ("NCL", "NLC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def check_tensor(x, api, what="x"):
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{api}] {what} must be a Tensor, got {type(x).__name__}")


def channel_last(data_format, nd, api):
    """True for the channel-last format of `nd` spatial dims; ValueError for an unknown one."""
    if data_format not in _FORMATS[nd]:
        raise ValueError(f"[{api}] data_format must be one of {_FORMATS[nd]}, got {data_format!r}")
    return data_format == _FORMATS[nd][1]


def check_rank(x, nd, api):
    if x.ndim != nd + 2:
        raise ValueError(f"[{api}] expects a {nd + 2}-D input (batch, channels and {nd} spatial dims), "
                         f"got shape {list(x.shape)}")


def ntuple(v, nd, what, api, allow_zero=False):
    """An int or a sequence of `nd` ints -> list of `nd` ints (positive unless allow_zero)."""
    if isinstance(v, _C.Tensor):
        v = v.numpy().reshape(-1).tolist()
    if _is_int(v):
        out = [int(v)] * nd
    elif isinstance(v, (list, tuple)) and len(v) == nd and all(_is_int(e) for e in v):
        out = [int(e) for e in v]
    else:
        raise ValueError(f"[{api}] {what} must be an int or {nd} ints, got {v!r}")
    lo = 0 if allow_zero else 1
    if any(e < lo for e in out):
        raise ValueError(f"[{api}] {what} must be {'non-negative' if allow_zero else 'positive'}, got {v!r}")
    return out


def padding(p, nd, is_channel_last, api):
    """Paddle padding forms -> (algorithm, pads_l, pads_r); algorithm is 'same', 'valid' or None."""
    if isinstance(p, str):
        alg = p.lower()
        if alg not in ("same", "valid"):
            raise ValueError(f"[{api}] padding must be 'same', 'valid', an int or a list, got {p!r}")
        return alg, [0] * nd, [0] * nd
    if _is_int(p):
        if p < 0:
            raise ValueError(f"[{api}] padding must be non-negative, got {p}")
        return None, [int(p)] * nd, [int(p)] * nd
    if isinstance(p, (list, tuple)):
        p = list(p)
        if len(p) == nd + 2 and all(isinstance(e, (list, tuple)) for e in p):
            batch_ch = [p[0], p[-1]] if is_channel_last else [p[0], p[1]]
            if any(list(e) != [0, 0] for e in batch_ch):
                raise ValueError(f"[{api}] padding of the batch and channel dims must be [0, 0], got {p!r}")
            sp = p[1:-1] if is_channel_last else p[2:]
            if not all(len(e) == 2 and all(_is_int(v) for v in e) for e in sp):
                raise ValueError(f"[{api}] padding pairs must hold two ints each, got {p!r}")
            pl, pr = [int(e[0]) for e in sp], [int(e[1]) for e in sp]
        elif len(p) == nd and all(_is_int(e) for e in p):
            pl, pr = [int(e) for e in p], [int(e) for e in p]
        elif len(p) == 2 * nd and all(_is_int(e) for e in p):
            pl, pr = [int(e) for e in p[0::2]], [int(e) for e in p[1::2]]
        else:
            raise ValueError(f"[{api}] padding must be an int, {nd} ints, {2 * nd} ints or {nd + 2} pairs, got {p!r}")
        if any(v < 0 for v in pl + pr):
            raise ValueError(f"[{api}] padding must be non-negative, got {p!r}")
        return None, pl, pr
    raise ValueError(f"[{api}] padding must be 'same', 'valid', an int or a list, got {p!r}")


def same_pads(in_sizes, kernel, strides):
    """Paddle's 'same': output ceil(in / stride), the padding split with the extra on the right."""
    pl, pr = [], []
    for i, k, s in zip(in_sizes, kernel, strides):
        out = (i + s - 1) // s
        total = max((out - 1) * s + k - i, 0)
        pl.append(total // 2)
        pr.append(total - total // 2)
    return pl, pr


def to_channel_first(x, nd):
    return _C.transpose(x, [0, nd + 1] + list(range(1, nd + 1)))


def to_channel_last(x, nd):
    return _C.transpose(x, [0] + list(range(2, nd + 2)) + [1])
