"""Decoding loops: greedy and beam search with early stop on EOS, RNN decoders
written as Python loops over time steps with list.append + oar.stack, Viterbi
and CTC-style decoding.

The decoders are tiny Layers built under the corpus seed; each input set
starts from a different state so that decoding stops at different steps.
"""
import oar
import oar.nn as nn
import oar.nn.functional as F

from .registry import add, arr, ints, randn, seeded

D = ("decoding",)
_GROWS = "appends a data-dependent number of tensors to a Python list (the loop stops on a tensor condition)"
V, H, EOS = 7, 8, 0


class GreedyGRUDecoder(nn.Layer):
    """Greedy decoding: feed back the argmax token, stop when every row emitted EOS."""

    def __init__(self, max_len=8):
        super().__init__()
        self.emb = nn.Embedding(V, H)
        self.cell = nn.GRUCell(H, H)
        self.out = nn.Linear(H, V)
        self.max_len = max_len

    def forward(self, h):
        tok = oar.full([h.shape[0]], 1, "int64")
        tokens = []
        done = oar.zeros([h.shape[0]], "bool")
        for _ in range(self.max_len):
            y, h = self.cell(self.emb(tok), h)
            tok = self.out(y).argmax(axis=-1)
            tok = oar.where(done, oar.full_like(tok, EOS), tok)
            tokens.append(tok)
            done = done | (tok == EOS)
            if done.all():
                break
        return oar.stack(tokens, axis=1)


_greedy = seeded(GreedyGRUDecoder)
add("greedy_gru_decode_eos", _greedy, [randn(2, H), randn(1, H, scale=3.0), randn(3, H, scale=0.1)], D,
    expect_full_graph=False, reason=_GROWS)


class TeacherForcedRNN(nn.Layer):
    """A decoder over the time steps of its input (static length): list.append + oar.stack."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, H)
        self.out = nn.Linear(H, 3)

    def forward(self, x):
        b = x.shape[0]
        state = (oar.zeros([b, H]), oar.zeros([b, H]))
        outs = []
        for t in range(x.shape[1]):
            y, state = self.cell(x[:, t], state)
            outs.append(self.out(y))
        return oar.stack(outs, axis=1)


add("rnn_decoder_teacher_forcing", seeded(TeacherForcedRNN), [randn(2, 5, 4), randn(1, 3, 4)], D + ("rnn",))


class ManualLSTM(nn.Layer):
    """An LSTM written out gate by gate, unrolled in Python over time."""

    def __init__(self):
        super().__init__()
        self.ih = nn.Linear(3, 4 * H)
        self.hh = nn.Linear(H, 4 * H, bias_attr=False)

    def forward(self, x):
        h = oar.zeros([x.shape[0], H])
        c = oar.zeros([x.shape[0], H])
        hs = []
        for xt in oar.unbind(x, axis=1):
            i, f, g, o = oar.chunk(self.ih(xt) + self.hh(h), 4, axis=-1)
            c = F.sigmoid(f) * c + F.sigmoid(i) * oar.tanh(g)
            h = F.sigmoid(o) * oar.tanh(c)
            hs.append(h)
        return oar.stack(hs, axis=1), h


add("manual_lstm_unrolled", seeded(ManualLSTM), [randn(2, 4, 3), randn(3, 6, 3)], D + ("rnn",))


class LengthMaskedRNN(nn.Layer):
    """Rows stop updating after their own length (a tensor): masks inside a Python loop."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(3, H)

    def forward(self, x, lengths):
        h = oar.zeros([x.shape[0], H])
        for t in range(x.shape[1]):
            y, h_new = self.cell(x[:, t], h)
            alive = (lengths > t).astype("float32").unsqueeze(-1)
            h = alive * h_new + (1.0 - alive) * h
        return h


add("length_masked_rnn", seeded(LengthMaskedRNN),
    [(randn(2, 5, 3), arr([5, 2], "int64")), (randn(3, 4, 3), arr([1, 4, 3], "int64"))], D + ("rnn",))


class BeamSearch(nn.Layer):
    """Beam search (beam 3) for one sequence; stops early when every beam ended in EOS."""

    def __init__(self, beam=3, max_len=6):
        super().__init__()
        self.emb = nn.Embedding(V, H)
        self.cell = nn.GRUCell(H, H)
        self.out = nn.Linear(H, V)
        self.beam, self.max_len = beam, max_len

    def forward(self, h0, eos_boost):
        k = self.beam
        h = oar.tile(h0, [k, 1])
        tok = oar.full([k], 1, "int64")
        scores = oar.to_tensor([0.0] + [-1e9] * (k - 1))
        finished = oar.zeros([k], "bool")
        history = []
        for _ in range(self.max_len):
            y, h = self.cell(self.emb(tok), h)
            logits = self.out(y) + F.one_hot(oar.to_tensor([EOS]), V) * eos_boost
            logp = F.log_softmax(logits, axis=-1)
            # Finished beams only extend with EOS at no cost.
            eos_only = oar.full([V], -1e9).scatter(oar.to_tensor([EOS]), oar.zeros([1]))
            logp = oar.where(finished.unsqueeze(-1), eos_only.unsqueeze(0).tile([k, 1]), logp)
            total = (scores.unsqueeze(-1) + logp).reshape([-1])
            scores, idx = oar.topk(total, k)
            parent = idx // V
            tok = idx % V
            h = oar.gather(h, parent)
            finished = oar.gather(finished.astype("int64"), parent).astype("bool") | (tok == EOS)
            history = [oar.gather(t, parent) for t in history] + [tok]
            if finished.all():
                break
        return oar.stack(history, axis=1), scores


add("beam_search_eos", seeded(BeamSearch),
    [(randn(1, H), arr(0.0)), (randn(1, H), arr(2.0)), (randn(1, H), arr(8.0))], D, expect_full_graph=False,
    reason=_GROWS)


class GreedyMaxLenTensor(nn.Layer):
    """Greedy decoding whose step count is a tensor argument."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(V, H)
        self.out = nn.Linear(H, V)

    def forward(self, h, steps):
        tok = oar.zeros([h.shape[0], V])
        total = oar.zeros([h.shape[0]])
        for _ in range(steps):
            y, h = self.cell(tok, h)
            logits = self.out(y)
            total = total + logits.max(axis=-1)
            tok = F.one_hot(logits.argmax(axis=-1), V).astype("float32")
        return total


add("greedy_tensor_steps", seeded(GreedyMaxLenTensor),
    [(randn(2, H), arr(3, "int64")), (randn(2, H), arr(5, "int64")), (randn(2, H), arr(1, "int64"))], D)


class GPTGreedy(nn.Layer):
    """Greedy generation with a tiny GPT; stops when the last token is EOS."""

    def __init__(self):
        super().__init__()
        from oar.models import GPTConfig, GPTForCausalLM

        self.lm = GPTForCausalLM(GPTConfig(vocab_size=V, max_position_embeddings=16, hidden_size=8,
                                           num_hidden_layers=1, num_attention_heads=2, hidden_dropout_prob=0.0,
                                           attention_probs_dropout_prob=0.0))

    def forward(self, ids):
        for _ in range(5):
            nxt = self.lm(ids)[:, -1].argmax(axis=-1, keepdim=True)
            ids = oar.concat([ids, nxt], axis=1)
            if (nxt == EOS).all():
                break
        return ids


_gpt = seeded(GPTGreedy)
_gpt.eval()
add("gpt_greedy_generate_eos", _gpt, [ints(1, 3, lo=1, hi=V), ints(1, 2, lo=1, hi=V), ints(1, 4, lo=1, hi=V)], D)


class AttentionDecoder(nn.Layer):
    """Additive attention over encoder states, one decoder step per target position."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(2 * H, H)
        self.att = nn.Linear(2 * H, 1)
        self.out = nn.Linear(H, V)

    def forward(self, enc, steps=3):
        b, s, _ = enc.shape
        h = enc.mean(axis=1)
        outs = []
        for _ in range(steps):
            q = h.unsqueeze(1).expand([b, s, H])
            w = F.softmax(self.att(oar.concat([q, enc], axis=-1)).squeeze(-1), axis=-1)
            ctx = (w.unsqueeze(-1) * enc).sum(axis=1)
            y, h = self.cell(oar.concat([ctx, h], axis=-1), h)
            outs.append(self.out(y))
        return oar.stack(outs, axis=1)


add("attention_decoder", seeded(AttentionDecoder),
    [(randn(2, 5, H),), (randn(1, 3, H), 5)], D + ("rnn",))


class Viterbi(nn.Layer):
    """Viterbi decoding with a Python loop forward and a backtrace loop over reversed time."""

    def __init__(self, n_tags=4):
        super().__init__()
        self.trans = self.create_parameter([n_tags, n_tags])

    def forward(self, emissions):
        score = emissions[0]
        back = []
        for t in range(1, emissions.shape[0]):
            cand = score.unsqueeze(1) + self.trans + emissions[t].unsqueeze(0)
            back.append(cand.argmax(axis=0))
            score = cand.max(axis=0)
        best = score.argmax()
        path = [best]
        for bp in reversed(back):
            best = bp[best]
            path.append(best)
        return oar.stack(path[::-1]), score.max()


add("viterbi_decode", seeded(Viterbi), [randn(5, 4), randn(3, 4), randn(7, 4)], D)


def ctc_greedy(logits):
    """Best path: argmax per step, collapse repeats, drop blanks (a data-dependent length)."""
    best = logits.argmax(axis=-1)
    prev = oar.concat([oar.full([1], -1, "int64"), best[:-1]])
    keep = (best != prev) & (best != 0)
    return oar.masked_select(best, keep)


add("ctc_greedy_collapse", ctc_greedy, [randn(6, 4), randn(9, 4), randn(4, 4)], D)


class StopOnLowConfidence(nn.Layer):
    """Decodes until the top probability falls below a threshold (or 10 steps)."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(V, H)
        self.out = nn.Linear(H, V)

    def forward(self, h):
        tok = oar.zeros([1, V])
        confidences = []
        for _ in range(10):
            h = self.cell(tok, h)[1]
            p = F.softmax(self.out(h) * 4.0, axis=-1)
            conf = p.max()
            if conf < 0.5:
                break
            confidences.append(conf)
            tok = F.one_hot(p.argmax(axis=-1), V).astype("float32")
        if len(confidences) == 0:
            return oar.zeros([0])
        return oar.stack(confidences)


add("decode_until_low_confidence", seeded(StopOnLowConfidence),
    [randn(1, H), randn(1, H, scale=5.0), randn(1, H, scale=0.1)], D, expect_full_graph=False, reason=_GROWS)


def sequence_lengths_from_eos(tokens):
    """The position of the first EOS per row (or the row length) with a loop over columns."""
    b, s = tokens.shape
    lengths = oar.full([b], s, "int64")
    seen = oar.zeros([b], "bool")
    for t in range(s):
        hit = (tokens[:, t] == EOS) & ~seen
        lengths = oar.where(hit, oar.full([b], t, "int64"), lengths)
        seen = seen | hit
    return lengths


add("sequence_lengths_from_eos", sequence_lengths_from_eos,
    [arr([[3, 0, 2], [1, 1, 1]], "int64"), arr([[0, 4], [5, 0], [6, 6]], "int64")], D)


def repetition_penalty_loop(logits, prev_tokens):
    """Penalises tokens already generated, one Python iteration per previous token."""
    for i in range(prev_tokens.shape[0]):
        t = prev_tokens[i]
        val = logits[t]
        logits = logits.scatter(t.unsqueeze(0), oar.where(val > 0, val / 1.5, val * 1.5).unsqueeze(0))
    return logits


add("repetition_penalty_loop", repetition_penalty_loop,
    [(randn(V), arr([1, 3], "int64")), (randn(V), arr([0, 2, 2, 6], "int64"))], D)
