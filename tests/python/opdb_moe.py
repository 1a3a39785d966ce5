"""Op database entries for oar.nn.functional.moe_permute / moe_unpermute, with their NumPy references."""
import numpy as np

import oar
import oar.nn.functional as F
from opdb import FLOATS, ErrorInput, OpInfo, Sample, register


def ref_moe_permute(x, scale, routes, probs, num_experts, tokens_per_expert, padding_alignment,
                    override_buffer_size=-1):
    """Expert by expert, each expert's tokens in token order, each block padded to the alignment."""
    routes, probs = np.asarray(routes), np.asarray(probs, dtype=np.float64)
    sizes = [-(-c // padding_alignment) * padding_alignment for c in tokens_per_expert]
    rows = sum(sizes) if override_buffer_size <= 0 else override_buffer_size
    buf = np.zeros((rows, x.shape[1]), dtype=np.float64)
    sbuf = np.zeros((rows, scale.shape[1])) if scale is not None else None
    rowmap = -np.ones((x.shape[0], num_experts), dtype=np.int64)
    prow = np.zeros(rows)
    experts = -np.ones(rows, dtype=np.int64)
    start = 0
    for e in range(num_experts):
        r = start
        for t in range(x.shape[0]):
            ks = [k for k in range(routes.shape[1]) if routes[t, k] == e]
            if ks:
                buf[r] = x[t]
                if sbuf is not None:
                    sbuf[r] = scale[t]
                rowmap[t, e] = r
                prow[r] = probs[t, ks[0]]
                experts[r] = e
                r += 1
        start += sizes[e]
    return buf, rowmap, prow, sbuf, experts


def ref_moe_unpermute(buf, rowmap, routes, prow, weighted=False):
    out = np.zeros((rowmap.shape[0], buf.shape[1]))
    ptopk = np.zeros(np.asarray(routes).shape)
    for t in range(rowmap.shape[0]):
        for e in range(rowmap.shape[1]):
            r = rowmap[t, e]
            if r >= 0:
                out[t] += buf[r] * (prow[r] if weighted else 1.0)
        for k, e in enumerate(routes[t]):
            if e >= 0:
                ptopk[t, k] = prow[rowmap[t, e]]
    return out, ptopk


# routes (token x top-k, -1 unused), experts, counts, alignment
CASES = [
    ([[0, 2], [1, -1], [1, 0]], 3, [2, 2, 1], 2),
    ([[3, 1, -1], [-1, -1, -1], [0, 3, 2], [1, -1, 0], [2, 1, 3]], 4, [2, 3, 2, 3], 4),
    ([[0], [0], [0], [0]], 2, [4, 0], 1),
]


def _probs(routes, seed):
    r = np.asarray(routes)
    p = np.random.default_rng(seed).uniform(0.1, 1.0, r.shape)
    return np.where(r >= 0, p, 0.0)


def _permute_op(x, routes, probs, num_experts, counts, align, **kw):
    return F.moe_permute(x, None, oar.to_tensor(routes, dtype="int32"), oar.to_tensor(probs, dtype="float32"),
                         num_experts, counts, align, **kw)[0]


def _permute_ref(x, routes, probs, num_experts, counts, align, **kw):
    return ref_moe_permute(x, None, routes, probs, num_experts, counts, align, **kw)[0]


def _permute_samples(dtype):
    rng = np.random.default_rng(1)
    out = []
    for i, (routes, e, counts, align) in enumerate(CASES):
        x = rng.standard_normal((len(routes), 3))
        out.append(Sample((x, routes, _probs(routes, i).tolist(), e, counts, align)))
    routes, e, counts, align = CASES[1]
    out.append(Sample((rng.standard_normal((5, 4)), routes, _probs(routes, 9).tolist(), e, counts, align),
                      {"override_buffer_size": 16}, noncontig=True))
    return out


def _unpermute_inputs(case, dim, seed):
    routes, e, counts, align = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((len(routes), dim))
    _, rowmap, prow, _, _ = ref_moe_permute(x, None, routes, _probs(routes, seed), e, counts, align)
    buf = rng.standard_normal((len(prow), dim))  # what the experts computed, one row per buffer row
    return buf, rowmap, routes, prow, e


def _unpermute_op(buf, rowmap, routes, prow, num_experts, **kw):
    if not isinstance(prow, oar.Tensor):
        prow = oar.to_tensor(np.asarray(prow, dtype=np.float32))
    return F.moe_unpermute(buf, oar.to_tensor(rowmap, dtype="int32"), oar.to_tensor(routes, dtype="int32"), prow,
                           len(routes), num_experts, **kw)[0]


def _unpermute_ref(buf, rowmap, routes, prow, num_experts, using_weighted_combine=False, **kw):
    return ref_moe_unpermute(buf, np.asarray(rowmap), routes, prow, using_weighted_combine)[0]


def _unpermute_samples(dtype):
    out = []
    for i, case in enumerate(CASES):
        buf, rowmap, routes, prow, e = _unpermute_inputs(case, 3, i)
        out.append(Sample((buf, rowmap.tolist(), routes, prow.tolist(), e)))
        out.append(Sample((buf, rowmap.tolist(), routes, prow, e), {"using_weighted_combine": True}))
    return out


def _errors():
    x = oar.ones([3, 2])
    routes = oar.to_tensor([[0, 1], [1, -1], [0, -1]], dtype="int32")
    probs = oar.ones([3, 2])
    pre = "[oar.nn.functional.moe_permute]"
    return [
        ErrorInput(lambda: F.moe_permute(x, None, routes, probs, 2, [2], 1), ValueError, pre),
        ErrorInput(lambda: F.moe_permute(x, None, routes, probs, 2, [2, 2], 0), ValueError, pre),
        ErrorInput(lambda: F.moe_permute(x, None, routes, probs, 2, [1, 2], 1), ValueError, pre),
        ErrorInput(lambda: F.moe_permute(x, None, routes + 1, probs, 2, [2, 2], 1), ValueError, pre),
        ErrorInput(lambda: F.moe_permute(x, None, routes.astype("float32"), probs, 2, [2, 2], 1), TypeError, pre),
        ErrorInput(lambda: F.moe_permute(x, None, routes, oar.ones([3, 3]), 2, [2, 2], 1), ValueError, pre),
        ErrorInput(lambda: F.moe_permute(oar.ones([3]), None, routes, probs, 2, [2, 2], 1), ValueError, pre),
        ErrorInput(lambda: F.moe_permute(x, None, routes, probs, 2, [2, 2], 1, override_buffer_size=3),
                   ValueError, pre),
        ErrorInput(lambda: F.moe_permute(x, None, routes, probs, 2, 4, 1), TypeError, pre),
    ]


def _unpermute_errors():
    buf = oar.ones([4, 2])
    rowmap = oar.to_tensor([[0, 2], [1, -1]], dtype="int32")
    routes = oar.to_tensor([[1, 0], [0, -1]], dtype="int32")
    prow = oar.ones([4])
    pre = "[oar.nn.functional.moe_unpermute]"
    return [
        ErrorInput(lambda: F.moe_unpermute(buf, rowmap, routes, prow, 3, 2), ValueError, pre),
        ErrorInput(lambda: F.moe_unpermute(buf, rowmap + 3, routes, prow, 2, 2), ValueError, pre),
        ErrorInput(lambda: F.moe_unpermute(buf, rowmap, routes, oar.ones([3]), 2, 2), ValueError, pre),
        ErrorInput(lambda: F.moe_unpermute(buf, rowmap.astype("float32"), routes, prow, 2, 2), TypeError, pre),
        ErrorInput(lambda: F.moe_unpermute(buf, rowmap, routes, prow.numpy(), 2, 2), TypeError, pre),
    ]


register(OpInfo("nn.functional.moe_permute", _permute_op, _permute_ref, FLOATS, _permute_samples, grad=True,
                errors=_errors))
register(OpInfo("nn.functional.moe_unpermute", _unpermute_op, _unpermute_ref, FLOATS, _unpermute_samples,
                grad=True, errors=_unpermute_errors))
