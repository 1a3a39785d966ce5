"""oar.nn.BeamSearchDecoder / dynamic_decode against a NumPy beam search written out hypothesis by hypothesis."""
import numpy as np
import pytest

import oar

V, E, H, END, START = 5, 3, 4, 1, 0


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _weights(seed, end_bias=1.0):
    rng = np.random.RandomState(seed)
    w = dict(emb=rng.randn(V, E), wih=rng.randn(3 * H, E), whh=rng.randn(3 * H, H), bih=rng.randn(3 * H),
             bhh=rng.randn(3 * H), wo=rng.randn(H, V) * 2, bo=rng.randn(V))
    w["bo"][END] += end_bias  # sequences end within a few steps
    return {k: v.astype(np.float32) for k, v in w.items()}


def _np_cell(w, token, h):
    """Paddle's GRU step (gates r, z, c; reset after the matmul) and the output projection."""
    x = w["emb"][token].astype(np.float64)
    gx = x @ w["wih"].T + w["bih"]
    gh = h @ w["whh"].T + w["bhh"]
    r = _sigmoid(gx[:H] + gh[:H])
    z = _sigmoid(gx[H:2 * H] + gh[H:2 * H])
    c = np.tanh(gx[2 * H:] + r * gh[2 * H:])
    h = (h - c) * z + c
    logits = h @ w["wo"] + w["bo"]
    logp = logits - logits.max()
    logp = logp - np.log(np.exp(logp).sum())
    return logp, h


def _np_beam_search(w, h0, beam, max_step_num):
    """Per batch entry: the beam's token paths [T, beam], log-probs, lengths and finished flags."""
    # a hypothesis: (tokens, log-prob, state, finished, length); beams 1.. start ruled out
    results = [[([], 0.0, h.astype(np.float64), False, 0)] for h in h0]
    step = 0
    while True:  # the batch runs in lockstep until every beam of every entry has finished
        for b, hyps in enumerate(results):
            cands = []
            for k, (toks, lp, h, fin, ln) in enumerate(hyps):
                logp, h2 = _np_cell(w, toks[-1] if toks else START, h)
                for v in range(V):
                    if fin and v != END:
                        continue  # a finished beam can only repeat the end token, at no cost
                    score = lp if fin else lp + logp[v]
                    cands.append((-score, k * V + v, k, v, h2))
            cands.sort(key=lambda c: (c[0], c[1]))
            new = []
            for negs, _, k, v, h2 in cands[:beam]:
                toks, _, _, fin, ln = hyps[k]
                new.append((toks + [v], -negs, h2, fin or v == END, ln + (0 if fin else 1)))
            results[b] = new
        step += 1
        if all(hh[3] for r in results for hh in r) or step > max_step_num:
            break
    ids = np.array([[hh[0] for hh in r] for r in results]).transpose(0, 2, 1)  # [B, T, beam]
    lps = np.array([[hh[1] for hh in r] for r in results])
    lens = np.array([[hh[4] for hh in r] for r in results])
    fins = np.array([[hh[3] for hh in r] for r in results])
    return ids, lps, lens, fins


def _oar_decoder(w, beam):
    cell = oar.nn.GRUCell(E, H)
    for name, key in (("weight_ih", "wih"), ("weight_hh", "whh"), ("bias_ih", "bih"), ("bias_hh", "bhh")):
        getattr(cell, name).set_value(w[key])
    emb = oar.nn.Embedding(V, E)
    emb.weight.set_value(w["emb"])
    out = oar.nn.Linear(H, V)
    out.weight.set_value(w["wo"])
    out.bias.set_value(w["bo"])
    return oar.nn.BeamSearchDecoder(cell, START, END, beam, embedding_fn=emb, output_fn=out)


@pytest.mark.parametrize("seed,beam,max_step", [(0, 3, 6), (1, 2, 4), (2, 3, 8), (5, 1, 5)])
def test_beam_search_matches_numpy(seed, beam, max_step):
    w = _weights(seed)
    h0 = np.random.RandomState(100 + seed).randn(3, H).astype(np.float32)
    ref_ids, ref_lp, ref_len, ref_fin = _np_beam_search(w, h0, beam, max_step)
    dec = _oar_decoder(w, beam)
    ids, states, lengths = oar.nn.dynamic_decode(dec, oar.to_tensor(h0), max_step_num=max_step,
                                                 return_length=True)
    np.testing.assert_array_equal(ids.numpy(), ref_ids)
    np.testing.assert_allclose(states.log_probs.numpy(), ref_lp, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(lengths.numpy(), ref_len)
    np.testing.assert_array_equal(states.lengths.numpy(), ref_len)
    np.testing.assert_array_equal(states.finished.numpy(), ref_fin)
    assert states.cell_states.shape == [3, beam, H]


def test_time_major_and_stop_on_finish():
    w = _weights(0, end_bias=3.0)
    h0 = np.random.RandomState(7).randn(2, H).astype(np.float32)
    ref_ids, _, _, ref_fin = _np_beam_search(w, h0, 3, 50)
    assert ref_fin.all()  # long enough for every beam to end: decoding stopped by itself
    assert ref_ids.shape[1] < 50
    ids, _ = oar.nn.dynamic_decode(_oar_decoder(w, 3), oar.to_tensor(h0), max_step_num=50, output_time_major=True)
    np.testing.assert_array_equal(ids.numpy(), ref_ids.transpose(1, 0, 2))


def test_initialize_and_tile():
    dec = oar.nn.BeamSearchDecoder(oar.nn.GRUCell(2, 3), 0, 1, beam_size=3)
    h = np.arange(6, dtype=np.float32).reshape(2, 3)
    inputs, state, finished = dec.initialize((oar.to_tensor(h), oar.to_tensor(h * 2)))
    assert inputs.numpy().tolist() == [[0, 0, 0]] * 2
    np.testing.assert_array_equal(state.cell_states[1].numpy(), np.repeat(h[:, None] * 2, 3, axis=1))
    np.testing.assert_array_equal(state.log_probs.numpy(), [[0, -1e9, -1e9]] * 2)
    assert not finished.numpy().any() and state.lengths.numpy().tolist() == [[0, 0, 0]] * 2
    x = np.arange(12).reshape(2, 3, 2)
    tiled = oar.nn.BeamSearchDecoder.tile_beam_merge_with_batch(oar.to_tensor(x), 4)
    np.testing.assert_array_equal(tiled.numpy(), np.repeat(x, 4, axis=0))


class _CountDecoder(oar.nn.decode.Decoder):
    """Counts up per batch entry; entry b finishes once its count reaches limits[b]."""

    def __init__(self, limits):
        self.limits = oar.to_tensor(limits)

    def initialize(self, inits):
        return None, inits, oar.zeros(self.limits.shape, dtype="bool")

    def step(self, time, inputs, states, **kwargs):
        new = states + 1
        return new, new, None, new >= self.limits


@pytest.mark.parametrize("impute", [False, True])
def test_decoder_without_own_finished(impute):
    limits = np.array([1, 3, 2], dtype=np.int64)
    out, states, lengths = oar.nn.dynamic_decode(_CountDecoder(limits), oar.zeros([3], dtype="int64"),
                                                 impute_finished=impute, return_length=True)
    np.testing.assert_array_equal(lengths.numpy(), limits)  # steps taken while unfinished
    before = np.arange(3)[None, :]  # the state each step starts from, per entry and step
    if impute:
        before = np.minimum(before, limits[:, None])  # a finished entry keeps its state
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(before + 1, (3, 3)))  # batch-major [3, 3]
    np.testing.assert_array_equal(states.numpy(), limits if impute else [3, 3, 3])


def test_errors():
    cell = oar.nn.GRUCell(2, 3)
    with pytest.raises(ValueError, match=r"^\[oar.nn.BeamSearchDecoder\] beam_size"):
        oar.nn.BeamSearchDecoder(cell, 0, 1, 0)
    with pytest.raises(TypeError, match=r"^\[oar.nn.BeamSearchDecoder\] cell"):
        oar.nn.BeamSearchDecoder(3, 0, 1, 2)
    with pytest.raises(TypeError, match=r"^\[oar.nn.BeamSearchDecoder\] end_token"):
        oar.nn.BeamSearchDecoder(cell, 0, 1.5, 2)
    dec = oar.nn.BeamSearchDecoder(cell, 0, 7, 2, embedding_fn=oar.nn.Embedding(4, 2),
                                   output_fn=oar.nn.Linear(3, 4))
    with pytest.raises(ValueError, match=r"^\[oar.nn.BeamSearchDecoder.step\] end_token"):
        oar.nn.dynamic_decode(dec, oar.zeros([2, 3]), max_step_num=2)
    with pytest.raises(ValueError, match=r"^\[oar.nn.dynamic_decode\] max_step_num"):
        oar.nn.dynamic_decode(dec, oar.zeros([2, 3]), max_step_num=-1)
    with pytest.raises(TypeError, match=r"^\[oar.nn.dynamic_decode\] decoder"):
        oar.nn.dynamic_decode(object(), oar.zeros([2, 3]))
    with pytest.raises(TypeError, match=r"^\[oar.nn.BeamSearchDecoder.tile_beam_merge_with_batch\]"):
        oar.nn.BeamSearchDecoder.tile_beam_merge_with_batch([1, 2], 2)
