"""Viterbi decoding of linear-chain CRF scores (paddle.text.viterbi_decode / ViterbiDecoder)."""
from oar import _C, _manip, creation, nn

__all__ = ["viterbi_decode", "ViterbiDecoder"]


def _check(potentials, transition_params, lengths, api):
    for what, t in (("potentials", potentials), ("transition_params", transition_params), ("lengths", lengths)):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"[{api}] {what} must be a Tensor, got {type(t).__name__}")
    if potentials.ndim != 3:
        raise ValueError(f"[{api}] potentials must be 3-D [batch_size, seq_len, num_tags], got shape "
                         f"{list(potentials.shape)}")
    b, _, n = potentials.shape
    if list(transition_params.shape) != [n, n]:
        raise ValueError(f"[{api}] transition_params must have shape [num_tags, num_tags] = [{n}, {n}], got "
                         f"{list(transition_params.shape)}")
    if list(lengths.shape) != [b]:
        raise ValueError(f"[{api}] lengths must have shape [batch_size] = [{b}], got {list(lengths.shape)}")
    if potentials.dtype.name not in ("float32", "float64") or transition_params.dtype != potentials.dtype:
        raise TypeError(f"[{api}] potentials and transition_params must both be float32 or both float64, got "
                        f"{potentials.dtype.name} and {transition_params.dtype.name}")
    if lengths.dtype.is_floating_point or lengths.dtype.is_complex or lengths.dtype.name == "bool":
        raise TypeError(f"[{api}] lengths must be an integer tensor, got {lengths.dtype.name}")


def viterbi_decode(potentials, transition_params, lengths, include_bos_eos_tag=True, name=None):
    """The highest-scoring tag sequence of each batch row and its score.

    potentials [batch, seq_len, num_tags] are the per-position tag scores,
    transition_params[i, j] the score of tag i followed by tag j, and row b uses
    its first lengths[b] positions. With `include_bos_eos_tag`, a path also
    scores transition_params[-1, first tag] (the last tag is the start tag) and
    transition_params[-2, last tag] (the second-to-last tag is the stop tag), as
    Paddle does. Returns (scores [batch], paths [batch, max(lengths)] int64, 0
    past each row's length).

    >>> import oar
    >>> emission = oar.to_tensor([[[1.0, 0.0], [0.0, 2.0], [5.0, 0.0]]])
    >>> transition = oar.to_tensor([[0.0, 0.5], [-3.0, 0.0]])
    >>> scores, paths = oar.text.viterbi_decode(emission, transition, oar.to_tensor([3]), False)
    >>> scores.numpy().tolist(), paths.numpy().tolist()
    ([6.0], [[0, 0, 0]])
    """
    api = "oar.text.viterbi_decode"
    _check(potentials, transition_params, lengths, api)
    bsz, seq_len, ntags = potentials.shape
    lens = lengths.astype("int64")
    lens_np = lens.numpy()
    if bsz and (lens_np.min() < 0 or lens_np.max() > seq_len):
        raise ValueError(f"[{api}] lengths must lie in [0, seq_len = {seq_len}], got values in "
                         f"[{lens_np.min()}, {lens_np.max()}]")
    max_len = int(lens_np.max()) if bsz else 0
    trans = transition_params
    alpha = potentials[:, 0, :]
    if include_bos_eos_tag:
        alpha = alpha + trans[ntags - 1].unsqueeze(0)
    history = []
    for t in range(1, max_len):
        # best previous tag for each current tag: max over i of alpha[b, i] + trans[i, j]
        cand = alpha.unsqueeze(2) + trans.unsqueeze(0)
        best_prev = cand.argmax(axis=1)
        nxt = cand.max(axis=1) + potentials[:, t, :]
        live = (lens > t).unsqueeze(1)
        alpha = _C.where(live, nxt, alpha)
        history.append(best_prev)
    final = alpha + trans[ntags - 2].unsqueeze(0) if include_bos_eos_tag else alpha
    scores = final.max(axis=1)
    last = final.argmax(axis=1)
    # Backtrack: at step t a row still running (t < length - 1) follows its history;
    # a row that ended at t + 1 or earlier holds its last tag until its end is reached.
    cols = [None] * max_len
    tag = last
    for t in range(max_len - 1, -1, -1):
        if t < max_len - 1:
            prev = history[t].take_along_axis(tag.unsqueeze(1), axis=1).squeeze(1)
            tag = _C.where(lens > t + 1, prev, tag)
        cols[t] = _C.where(lens > t, tag, tag * 0)
    paths = _manip.stack(cols, 1) if cols else creation.zeros([bsz, 0], "int64")
    return scores, paths.astype("int64")


class ViterbiDecoder(nn.Layer):
    """A layer decoding with fixed transition scores: ``forward(potentials, lengths)``
    returns viterbi_decode(potentials, transitions, lengths, include_bos_eos_tag).

    >>> import oar
    >>> decoder = oar.text.ViterbiDecoder(oar.to_tensor([[0.0, 1.0], [-3.0, 0.0]]), include_bos_eos_tag=False)
    >>> scores, paths = decoder(oar.to_tensor([[[0.0, 2.0], [0.0, 3.0]]]), oar.to_tensor([2]))
    >>> paths.numpy().tolist()
    [[1, 1]]
    """

    def __init__(self, transitions, include_bos_eos_tag=True, name=None):
        super().__init__()
        if not isinstance(transitions, _C.Tensor):
            raise TypeError(f"[oar.text.ViterbiDecoder] transitions must be a Tensor, got "
                            f"{type(transitions).__name__}")
        self.transitions = transitions
        self.include_bos_eos_tag = include_bos_eos_tag
        self.name = name

    def forward(self, potentials, lengths):
        return viterbi_decode(potentials, self.transitions, lengths, self.include_bos_eos_tag, self.name)
