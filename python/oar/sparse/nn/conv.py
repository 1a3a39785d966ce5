"""Sparse convolution and max pooling of channels-last COO tensors ([N, *spatial, C], values [nnz, C]).

Note [sparse convolution]: for each kernel offset o (a loop over the kernel's cells, not over the
nonzeros) an input entry at p feeds the output at q with q * stride = p + padding - o * dilation. Those
pairs form the rule book: a regular convolution's outputs are every q some input reaches; a submanifold
one's are the input positions themselves (found by searchsorted on the sorted input keys), so the
pattern does not dilate layer after layer. Per offset, the values of the paired inputs are gathered,
multiplied by that offset's [C, M] slice of the weight and index_added into the outputs: differentiable
in the values, the weight and the bias, with work proportional to pairs * C * M.
"""
from ... import _C
from .. import _index as ix
from .._tensor import SparseCooTensor
from ..unary import check_sparse

__all__ = ["conv2d", "conv3d", "subm_conv2d", "subm_conv3d", "subm_conv2d_igemm", "subm_conv3d_igemm", "max_pool3d"]

_FORMATS = {2: "NHWC", 3: "NDHWC"}


def _tuple(v, s, api, what, allow_zero=True):
    items = [v] * s if isinstance(v, int) and not isinstance(v, bool) else list(v) if isinstance(v, (list, tuple)) \
        else None
    if items is None or len(items) != s or not all(isinstance(i, int) and not isinstance(i, bool) for i in items) \
            or any(i < (0 if allow_zero else 1) for i in items):
        raise ValueError(f"[{api}] {what} must be an int or {s} ints, each >= {0 if allow_zero else 1}, got {v!r}")
    return items


def _padding(padding, s, kernel, stride, dilation, spatial, api):
    """[(front, back)] per spatial dim from Paddle's forms: an int, s ints, 2s ints (front, back per dim),
    s + 2 pairs in data order (the batch and channel pairs zero), or 'VALID' / 'SAME'."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return [(0, 0)] * s
        if mode == "SAME":  # output size ceil(in / stride), the extra cell of an odd total at the back
            out = []
            for i in range(s):
                n_out = -(-spatial[i] // stride[i])
                total = max((n_out - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 - spatial[i], 0)
                out.append((total // 2, total - total // 2))
            return out
        raise ValueError(f"[{api}] padding as a string must be 'VALID' or 'SAME', got {padding!r}")
    if isinstance(padding, (list, tuple)) and len(padding) == s + 2 and all(isinstance(p, (list, tuple))
                                                                          for p in padding):
        if list(padding[0]) != [0, 0] or list(padding[-1]) != [0, 0]:
            raise ValueError(f"[{api}] the batch and channel padding must be [0, 0], got {padding!r}")
        flat = [v for p in padding[1:-1] for v in p]
        return list(zip(_tuple(flat[0::2], s, api, "padding"), _tuple(flat[1::2], s, api, "padding")))
    if isinstance(padding, (list, tuple)) and len(padding) == 2 * s:
        items = _tuple(list(padding), 2 * s, api, "padding")
        return list(zip(items[0::2], items[1::2]))
    return [(p, p) for p in _tuple(padding, s, api, "padding")]


def _check_input(x, s, api):
    check_sparse(x, api)
    if not isinstance(x, SparseCooTensor) or x.ndim != s + 2 or x.sparse_dim() != s + 1:
        raise ValueError(f"[{api}] x must be a SparseCooTensor [N, {', '.join('DHW'[3 - s:])}, C] with its last "
                         f"dim dense (sparse_dim {s + 1}), got {type(x).__name__} of shape {x.shape}"
                         + (f" and sparse_dim {x.sparse_dim()}" if isinstance(x, SparseCooTensor) else ""))
    return x.coalesce()


def _pairs(x, s, kernel, stride, padding, dilation, subm, api):
    """The rule book: (output coordinates [1 + s, n_out], n_out, [(offset, input rows, output rows)])."""
    import itertools
    import oar
    spatial = x.shape[1:1 + s]
    out_sp = [(spatial[i] + sum(padding[i]) - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(s)]
    if subm:
        out_sp = list(spatial)
    elif any(d <= 0 for d in out_sp):
        raise ValueError(f"[{api}] the output would be empty: spatial size {spatial} with kernel {kernel}, padding "
                         f"{padding} and dilation {dilation} gives {out_sp}")
    ind = ix.i64(x.indices())
    dims = [x.shape[0]] + out_sp
    ix.checked_prod(dims, api)
    raw = []  # (offset number, input rows, output keys)
    for k, off in enumerate(itertools.product(*[range(n) for n in kernel])):
        ok = oar.ones([ind.shape[1]], dtype="bool")
        coords = [ind[0]]
        for i in range(s):
            num = ind[1 + i] + (padding[i][0] - off[i] * dilation[i])
            q = num // stride[i]
            ok = oar.logical_and(ok, oar.logical_and(num % stride[i] == 0, oar.logical_and(q >= 0, q < out_sp[i])))
            coords.append(oar.where(ok, q, oar.zeros_like(q)))
        rows = oar.nonzero(ok).reshape([-1])
        if rows.shape[0]:
            raw.append((k, rows, oar.gather(ix.linear_key(oar.stack(coords, axis=0), dims), rows)))
    if subm:  # outputs are the inputs' own positions: keep the pairs whose output is one of them
        keys = ix.linear_key(ind, dims)
        n_out, out_ind, book = int(keys.shape[0]), ind, []
        for k, rows, okey in raw:
            pos = oar.searchsorted(keys, okey)
            found = oar.gather(keys, oar.minimum(pos, oar.full([], n_out - 1, dtype="int64"))) == okey
            sel = oar.nonzero(found).reshape([-1])
            if sel.shape[0]:
                book.append((k, oar.gather(rows, sel), oar.gather(pos, sel)))
        return out_ind, n_out, out_sp, book
    if not raw:
        return oar.zeros([s + 1, 0], dtype="int64"), 0, out_sp, []
    uniq, inverse = oar.unique(oar.concat([r[2] for r in raw]), return_inverse=True)
    inverse = inverse.reshape([-1])
    book, start = [], 0
    for k, rows, okey in raw:
        n = int(okey.shape[0])
        book.append((k, rows, inverse[start:start + n]))
        start += n
    return ix.unravel(uniq, dims), int(uniq.shape[0]), out_sp, book


def _conv(x, weight, bias, stride, padding, dilation, groups, data_format, s, subm, api):
    import oar
    x = _check_input(x, s, api)
    if data_format != _FORMATS[s]:
        raise ValueError(f"[{api}] data_format must be {_FORMATS[s]!r} (channels last), got {data_format!r}")
    if groups != 1:
        raise ValueError(f"[{api}] only groups=1 is supported, got {groups!r}")
    c = x.shape[-1]
    if not isinstance(weight, _C.Tensor) or weight.ndim != s + 2 or weight.shape[s] != c:
        raise ValueError(f"[{api}] weight must be a dense Tensor [{', '.join(['k'] * s)}, C={c}, M], got "
                         + (f"shape {weight.shape}" if isinstance(weight, _C.Tensor) else type(weight).__name__))
    if weight.dtype != x.dtype:
        raise TypeError(f"[{api}] x and weight must have the same dtype, got {x.dtype} and {weight.dtype}")
    m = weight.shape[-1]
    if bias is not None and (not isinstance(bias, _C.Tensor) or list(bias.shape) != [m]):
        raise ValueError(f"[{api}] bias must be a dense Tensor [{m}], got "
                         + (f"shape {bias.shape}" if isinstance(bias, _C.Tensor) else type(bias).__name__))
    kernel = list(weight.shape[:s])
    stride = _tuple(stride, s, api, "stride", allow_zero=False)
    dilation = _tuple(dilation, s, api, "dilation", allow_zero=False)
    padding = _padding(padding, s, kernel, stride, dilation, x.shape[1:1 + s], api)
    if subm and stride != [1] * s:
        raise ValueError(f"[{api}] a submanifold convolution keeps the input's positions: stride must be 1, got "
                         f"{stride}")
    out_ind, n_out, out_sp, book = _pairs(x, s, kernel, stride, padding, dilation, subm, api)
    w = weight.reshape([-1, c, m])
    out = oar.zeros([n_out, m], dtype=x.dtype)
    for k, rows, outs in book:
        out = oar.index_add(out, outs, 0, oar.matmul(oar.gather(x.values(), rows), w[k]))
    if bias is not None:
        out = out + bias
    return SparseCooTensor(out_ind, out, [x.shape[0]] + out_sp + [m], True)


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NDHWC", name=None):
    """3-D convolution of a sparse x [N, D, H, W, C] (COO, channels dense) with a dense weight
    [kD, kH, kW, C, M]: a sparse [N, D', H', W', M] holding every output position some input entry
    reaches (Note [sparse convolution]). stride and dilation are ints or 3 ints; padding an int, 3 ints,
    6 ints (front, back per dim), 5 pairs in data order, or 'VALID' / 'SAME'.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 0], [0, 1], [0, 1], [1, 1]], [[1.0], [2.0]], [1, 2, 2, 2, 1])
    >>> w = oar.ones([2, 2, 2, 1, 1])
    >>> y = oar.sparse.nn.functional.conv3d(x, w)
    >>> y.shape, y.values().numpy().tolist()
    ([1, 1, 1, 1, 1], [[3.0]])
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 3, False,
                 "oar.sparse.nn.functional.conv3d")


def subm_conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NDHWC", key=None,
                name=None):
    """Submanifold 3-D convolution: as conv3d with stride 1, but computed only at x's own positions, so the
    output [N, D, H, W, M] has x's pattern (use padding = dilation * (k - 1) // 2 to centre the kernel).
    key (a rule-book cache name in Paddle) is accepted and unused.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 0], [0, 0], [0, 0], [0, 1]], [[1.0], [2.0]], [1, 1, 1, 3, 1])
    >>> w = oar.ones([1, 1, 3, 1, 1])
    >>> y = oar.sparse.nn.functional.subm_conv3d(x, w, padding=[0, 0, 1])
    >>> y.indices().numpy().tolist(), y.values().numpy().tolist()
    ([[0, 0], [0, 0], [0, 0], [0, 1]], [[3.0], [3.0]])
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 3, True,
                 "oar.sparse.nn.functional.subm_conv3d")


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NHWC", name=None):
    """2-D convolution of a sparse x [N, H, W, C] (COO, channels dense) with a dense weight [kH, kW, C, M],
    as conv3d with two spatial dims.

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 0], [0, 1], [1, 1]], [[1.0], [2.0]], [1, 2, 2, 1])
    >>> y = oar.sparse.nn.functional.conv2d(x, oar.ones([2, 2, 1, 1]))
    >>> y.shape, y.values().numpy().tolist()
    ([1, 1, 1, 1], [[3.0]])
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 2, False,
                 "oar.sparse.nn.functional.conv2d")


def subm_conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NHWC", key=None,
                name=None):
    """Submanifold 2-D convolution: conv2d computed only at x's own positions (x's pattern is kept).

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 0], [0, 0], [0, 1]], [[1.0], [2.0]], [1, 1, 3, 1])
    >>> y = oar.sparse.nn.functional.subm_conv2d(x, oar.ones([1, 3, 1, 1]), padding=[0, 1])
    >>> y.values().numpy().tolist()
    [[3.0], [3.0]]
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 2, True,
                 "oar.sparse.nn.functional.subm_conv2d")


# Paddle's implicit-GEMM kernels of the submanifold convolutions: the same function here.
subm_conv2d_igemm = subm_conv2d
subm_conv3d_igemm = subm_conv3d


def max_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode=False, data_format="NDHWC", name=None):
    """3-D max pooling of a sparse x [N, D, H, W, C] over its stored entries only: each output position
    that some entry reaches takes, per channel, the largest of the entries in its window (absent entries
    do not count as zeros). stride defaults to kernel_size. Differentiable in the values (ties share).

    >>> import oar
    >>> x = oar.sparse.sparse_coo_tensor([[0, 0], [0, 0], [0, 0], [0, 1]], [[-1.0], [-2.0]], [1, 1, 1, 2, 1])
    >>> y = oar.sparse.nn.functional.max_pool3d(x, [1, 1, 2])
    >>> y.shape, y.values().numpy().tolist()
    ([1, 1, 1, 1, 1], [[-1.0]])
    """
    import oar
    api = "oar.sparse.nn.functional.max_pool3d"
    x = _check_input(x, 3, api)
    if data_format != "NDHWC":
        raise ValueError(f"[{api}] data_format must be 'NDHWC' (channels last), got {data_format!r}")
    if ceil_mode:
        raise ValueError(f"[{api}] ceil_mode=True is not supported")
    kernel = _tuple(kernel_size, 3, api, "kernel_size", allow_zero=False)
    stride = kernel if stride is None else _tuple(stride, 3, api, "stride", allow_zero=False)
    padding = _padding(padding, 3, kernel, stride, [1, 1, 1], x.shape[1:4], api)
    out_ind, n_out, out_sp, book = _pairs(x, 3, kernel, stride, padding, [1, 1, 1], False, api)
    vals = x.values()
    if book:
        rows = oar.concat([b[1] for b in book])
        outs = oar.concat([b[2] for b in book])
        g = oar.gather(vals, rows)  # [pairs, C]
        idx = outs.unsqueeze(-1).expand(g.shape)
        top = oar.put_along_axis(oar.full([n_out, vals.shape[1]], float("-inf"), dtype=vals.dtype), idx, g.detach(),
                                 0, reduce="amax")
        hit = (g.detach() == oar.gather(top, outs)).astype(vals.dtype)
        out = ix.segment_sum(g * hit, outs, n_out) / ix.segment_sum(hit, outs, n_out)
    else:
        out = oar.zeros([0, vals.shape[1]], dtype=vals.dtype)
    return SparseCooTensor(out_ind, out, [x.shape[0]] + out_sp + [x.shape[-1]], True)


ix.scope_module(globals())  # Note [device scope]: sparse arguments count as their values
