"""oar.nn.functional.moe_permute / moe_unpermute: every output against the NumPy references in opdb_moe."""
import numpy as np
import pytest

import oar
import oar.nn.functional as F
from opdb_moe import CASES, _probs, ref_moe_permute, ref_moe_unpermute


@pytest.mark.parametrize("case", range(len(CASES)))
def test_permute_outputs(case):
    routes, e, counts, align = CASES[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal((len(routes), 6)).astype(np.float32)
    scale = rng.standard_normal((len(routes), 2)).astype(np.float32)
    probs = _probs(routes, case).astype(np.float32)
    buf, rowmap, prow, sbuf, experts = ref_moe_permute(x, scale, routes, probs, e, counts, align)
    out = F.moe_permute(oar.to_tensor(x), oar.to_tensor(scale), oar.to_tensor(routes, dtype="int32"),
                        oar.to_tensor(probs), e, counts, align, return_expert_indices=True)
    assert len(out) == 5
    np.testing.assert_array_equal(out[0].numpy(), buf.astype(np.float32))
    assert out[1].dtype == oar.int32 and out[4].dtype == oar.int32 and out[2].dtype == oar.float32
    np.testing.assert_array_equal(out[1].numpy(), rowmap)
    np.testing.assert_allclose(out[2].numpy(), prow, rtol=1e-6)
    np.testing.assert_array_equal(out[3].numpy(), sbuf.astype(np.float32))
    np.testing.assert_array_equal(out[4].numpy(), experts)
    # do_gather=False: the same maps, no token copies
    plain = F.moe_permute(oar.to_tensor(x), None, oar.to_tensor(routes, dtype="int32"), oar.to_tensor(probs), e,
                          counts, align, do_gather=False)
    assert len(plain) == 4 and not plain[0].numpy().any() and plain[0].shape == list(buf.shape)
    np.testing.assert_array_equal(plain[1].numpy(), rowmap)
    np.testing.assert_array_equal(plain[2].numpy(), out[2].numpy())


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("weighted", [False, True])
def test_unpermute(case, weighted):
    routes, e, counts, align = CASES[case]
    rng = np.random.default_rng(10 + case)
    x = rng.standard_normal((len(routes), 4)).astype(np.float32)
    _, rowmap, prow, _, _ = ref_moe_permute(x, None, routes, _probs(routes, case), e, counts, align)
    expert_out = rng.standard_normal((len(prow), 4)).astype(np.float32)
    want, want_p = ref_moe_unpermute(expert_out, rowmap, routes, prow.astype(np.float32), weighted)
    got, got_p = F.moe_unpermute(oar.to_tensor(expert_out), oar.to_tensor(rowmap, dtype="int32"),
                                 oar.to_tensor(routes, dtype="int32"), oar.to_tensor(prow.astype(np.float32)),
                                 len(routes), e, using_weighted_combine=weighted)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_p.numpy(), want_p, rtol=1e-6)


def test_round_trip_bfloat16():
    """Permute, weight by the probabilities, unpermute: the tokens come back (probabilities sum to 1)."""
    routes, e, counts, align = CASES[1]
    probs = _probs(routes, 3)
    probs = probs / np.maximum(probs.sum(1, keepdims=True), 1e-12)
    x = np.random.default_rng(4).standard_normal((len(routes), 8)).astype(np.float32)
    xb = oar.to_tensor(x).astype("bfloat16")
    routes_t = oar.to_tensor(routes, dtype="int32")
    buf, rowmap, prow, _ = F.moe_permute(xb, None, routes_t, oar.to_tensor(probs.astype(np.float32)), e, counts,
                                         align)
    weighted = (buf.astype("float32") * prow.unsqueeze(-1)).astype("bfloat16")
    back, p = F.moe_unpermute(weighted, rowmap, routes_t, prow, len(routes), e)
    assert back.dtype == oar.bfloat16
    used = np.asarray(routes).max(1) >= 0  # a token routed nowhere comes back as zeros
    np.testing.assert_allclose(back.astype("float32").numpy(), x * used[:, None], rtol=3e-2, atol=3e-2)
    np.testing.assert_allclose(p.numpy(), probs, rtol=1e-6)


def test_gradient_flows_to_tokens():
    routes, e, counts, align = CASES[0]
    x = oar.to_tensor(np.arange(6, dtype=np.float64).reshape(3, 2), stop_gradient=False)
    buf = F.moe_permute(x, None, oar.to_tensor(routes, dtype="int32"), oar.ones([3, 2]), e, counts, align)[0]
    buf.sum().backward()
    # each token receives one gradient per expert it was copied to
    np.testing.assert_array_equal(x.grad.numpy(), np.repeat([[2.0], [1.0], [2.0]], 2, axis=1))
