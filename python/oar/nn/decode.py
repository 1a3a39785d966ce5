"""Decoding with a recurrent cell: ``BeamSearchDecoder`` and ``dynamic_decode`` (Paddle's ``paddle.nn``).

A decoder follows the protocol ``initialize(inits) -> (inputs, states, finished)``,
``step(time, inputs, states, **kwargs) -> (outputs, states, next_inputs, finished)``
and ``finalize(outputs, states, sequence_lengths)``; ``dynamic_decode`` runs it until
every sequence has finished or ``max_step_num`` is passed. The loop runs eagerly in
Python: its trip count depends on the values decoded, so it is not recorded into
static programs.

Beam search keeps ``beam_size`` hypotheses per batch entry. States are laid out as
``[batch, beam, ...]`` between steps and merged to ``[batch * beam, ...]`` for the
cell. Each step adds the cell's log-softmax to the beams' running log-probabilities
(a finished beam can only emit ``end_token``, at no cost), takes the top
``beam_size`` of the ``beam * vocab`` candidates per batch entry, and records the
chosen tokens and their parent beams; ``finalize`` backtracks the parents with
``gather_tree``.
"""
import collections

import numpy as np

from .. import _C
from . import functional as F

__all__ = ["Decoder", "BeamSearchDecoder", "dynamic_decode"]

_KINF = 1e9  # the log-probability cost that rules a candidate out


def _map(fn, *structs):
    """Applies fn to the leaves of equally nested tuples, lists, namedtuples and dicts."""
    s = structs[0]
    if isinstance(s, dict):
        return type(s)((k, _map(fn, *(x[k] for x in structs))) for k in s)
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return type(s)(*(_map(fn, *parts) for parts in zip(*structs)))
    if isinstance(s, (tuple, list)):
        return type(s)(_map(fn, *parts) for parts in zip(*structs))
    return fn(*structs)


def _leaves(s):
    if isinstance(s, dict):
        return [t for k in s for t in _leaves(s[k])]
    if isinstance(s, (tuple, list)):
        return [t for x in s for t in _leaves(x)]
    return [s]


class Decoder:
    """The interface ``dynamic_decode`` drives: ``initialize``, ``step`` and ``finalize``.

    ``tracks_own_finished`` tells ``dynamic_decode`` that the decoder keeps its own
    finished flags and lengths (as ``BeamSearchDecoder`` does).

    >>> import oar
    >>> oar.nn.decode.Decoder().tracks_own_finished
    False
    """

    def initialize(self, inits):
        raise NotImplementedError("[oar.nn.decode.Decoder.initialize] a Decoder subclass must define initialize")

    def step(self, time, inputs, states, **kwargs):
        raise NotImplementedError("[oar.nn.decode.Decoder.step] a Decoder subclass must define step")

    def finalize(self, outputs, final_states, sequence_lengths):
        raise NotImplementedError("[oar.nn.decode.Decoder.finalize] this decoder has no finalize")

    @property
    def tracks_own_finished(self):
        return False


class BeamSearchDecoder(Decoder):
    """Beam search over a recurrent cell, for ``dynamic_decode``.

    ``cell`` maps ``(inputs, states)`` to ``(outputs, new_states)``; ``embedding_fn``
    turns token ids into the cell's inputs and ``output_fn`` turns the cell's outputs
    into vocabulary logits (each is skipped when None). Initial states are
    ``[batch, ...]``; ``dynamic_decode`` returns predicted ids ``[batch, time, beam]``
    (``[time, batch, beam]`` when ``output_time_major``), already backtracked.

    >>> import oar
    >>> _ = oar.seed(0)
    >>> cell = oar.nn.GRUCell(4, 8)
    >>> decoder = oar.nn.BeamSearchDecoder(cell, start_token=0, end_token=1, beam_size=3,
    ...                                    embedding_fn=oar.nn.Embedding(6, 4),
    ...                                    output_fn=oar.nn.Linear(8, 6))
    >>> ids, states = oar.nn.dynamic_decode(decoder, inits=cell.get_initial_states(oar.ones([2, 4])),
    ...                                     max_step_num=5)
    >>> ids.shape[0], ids.shape[2], ids.shape[1] <= 6
    (2, 3, True)
    >>> states.log_probs.shape
    [2, 3]
    """

    OutputWrapper = collections.namedtuple("OutputWrapper", ("scores", "predicted_ids", "parent_ids"))
    StateWrapper = collections.namedtuple("StateWrapper", ("cell_states", "log_probs", "finished", "lengths"))

    def __init__(self, cell, start_token, end_token, beam_size, embedding_fn=None, output_fn=None):
        api = "oar.nn.BeamSearchDecoder"
        if not callable(cell):
            raise TypeError(f"[{api}] cell must be callable (an RNN cell), got {type(cell).__name__}")
        for nm, v in (("start_token", start_token), ("end_token", end_token), ("beam_size", beam_size)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"[{api}] {nm} must be an int, got {type(v).__name__}")
        if beam_size < 1:
            raise ValueError(f"[{api}] beam_size must be >= 1, got {beam_size}")
        if end_token < 0:
            raise ValueError(f"[{api}] end_token must be >= 0, got {end_token}")
        for nm, fn in (("embedding_fn", embedding_fn), ("output_fn", output_fn)):
            if fn is not None and not callable(fn):
                raise TypeError(f"[{api}] {nm} must be callable or None, got {type(fn).__name__}")
        self.cell = cell
        self.embedding_fn = embedding_fn
        self.output_fn = output_fn
        self.start_token = int(start_token)
        self.end_token = int(end_token)
        self.beam_size = int(beam_size)

    # ---- layout helpers
    @staticmethod
    def tile_beam_merge_with_batch(x, beam_size):
        """Repeats each batch entry ``beam_size`` times: ``[batch, ...]`` -> ``[batch * beam_size, ...]``.

        Use it on encoder outputs that the cell reads (attention memories).

        >>> import oar
        >>> x = oar.to_tensor([[1, 2], [3, 4]])
        >>> oar.nn.BeamSearchDecoder.tile_beam_merge_with_batch(x, 2).numpy().tolist()
        [[1, 2], [1, 2], [3, 4], [3, 4]]
        """
        import oar

        if not isinstance(x, oar.Tensor):
            raise TypeError(f"[oar.nn.BeamSearchDecoder.tile_beam_merge_with_batch] x must be a Tensor, "
                            f"got {type(x).__name__}")
        if isinstance(beam_size, bool) or not isinstance(beam_size, (int, np.integer)) or beam_size < 1:
            raise ValueError(f"[oar.nn.BeamSearchDecoder.tile_beam_merge_with_batch] beam_size must be a "
                             f"positive int, got {beam_size!r}")
        if x.ndim == 0:
            raise ValueError("[oar.nn.BeamSearchDecoder.tile_beam_merge_with_batch] x must have a batch dim, "
                             "got a 0-D Tensor")
        shape = list(x.shape)
        x = oar.expand(oar.unsqueeze(x, 1), [shape[0], int(beam_size)] + shape[1:])
        return oar.reshape(x, [shape[0] * int(beam_size)] + shape[1:])

    def _split_batch_beams(self, x):
        import oar

        return oar.reshape(x, [-1, self.beam_size] + list(x.shape[1:]))

    def _merge_batch_beams(self, x):
        import oar

        return oar.reshape(x, [-1] + list(x.shape[2:]))

    def _expand_to_beam_size(self, x):
        import oar

        return oar.tile(oar.unsqueeze(x, 1), [1, self.beam_size] + [1] * (x.ndim - 1))

    def _gather(self, x, indices):
        """x[b, indices[b, k]] for x [batch, beam, ...] and indices [batch, k]."""
        import oar

        batch, k = indices.shape
        beams = x.shape[1]
        flat = indices + oar.arange(batch, dtype=indices.dtype).unsqueeze(1) * beams
        out = oar.gather(oar.reshape(x, [-1] + list(x.shape[2:])), oar.reshape(flat, [-1]), axis=0)
        return oar.reshape(out, [batch, k] + list(x.shape[2:]))

    def _mask_probs(self, probs, finished):
        """A finished beam may only emit end_token, which adds nothing to its score."""
        import oar

        noend = np.full([probs.shape[-1]], -_KINF, dtype=np.float64)
        noend[self.end_token] = 0.0
        noend = oar.to_tensor(noend, dtype=probs.dtype)
        return oar.where(finished.unsqueeze(2), noend, probs)

    # ---- the decoder protocol
    def initialize(self, initial_cell_states):
        """(inputs, StateWrapper, finished) of step 0: every batch entry starts with one live beam.

        >>> import oar
        >>> dec = oar.nn.BeamSearchDecoder(oar.nn.GRUCell(2, 3), 0, 1, beam_size=2)
        >>> inputs, state, finished = dec.initialize(oar.zeros([4, 3]))
        >>> inputs.shape, state.cell_states.shape, state.log_probs.numpy()[0].tolist()
        ([4, 2], [4, 2, 3], [0.0, -1000000000.0])
        """
        import oar

        leaves = _leaves(initial_cell_states)
        if not leaves or not all(isinstance(t, oar.Tensor) for t in leaves):
            raise TypeError("[oar.nn.BeamSearchDecoder.initialize] initial_cell_states must be a Tensor or a "
                            "nested structure of Tensors")
        if any(t.ndim == 0 for t in leaves):
            raise ValueError("[oar.nn.BeamSearchDecoder.initialize] initial cell states need a batch dim, "
                             "got a 0-D Tensor")
        batch = leaves[0].shape[0]
        cell_states = _map(self._expand_to_beam_size, initial_cell_states)
        inputs = oar.full([batch, self.beam_size], self.start_token, dtype="int64")
        dtype = "float64" if oar.get_default_dtype() == "float64" else "float32"
        first = np.array([0.0] + [-_KINF] * (self.beam_size - 1))
        log_probs = oar.tile(oar.to_tensor(first[None], dtype=dtype), [batch, 1])
        finished = oar.full([batch, self.beam_size], False, dtype="bool")
        lengths = oar.zeros([batch, self.beam_size], dtype="int64")
        if self.embedding_fn is not None:
            inputs = self.embedding_fn(inputs)
        return inputs, self.StateWrapper(cell_states, log_probs, finished, lengths), finished

    def _beam_search_step(self, time, logits, next_cell_states, beam_state):
        import oar

        vocab = logits.shape[-1]
        if not 0 <= self.end_token < vocab:
            raise ValueError(f"[oar.nn.BeamSearchDecoder.step] end_token ({self.end_token}) must be in "
                             f"[0, {vocab}), the vocabulary of the logits")
        step_log_probs = F.log_softmax(logits, axis=-1)
        step_log_probs = self._mask_probs(step_log_probs, beam_state.finished)
        log_probs = step_log_probs + beam_state.log_probs.astype(step_log_probs.dtype).unsqueeze(2)
        scores = oar.reshape(log_probs, [-1, self.beam_size * vocab])
        topk_scores, topk_indices = oar.topk(scores, k=self.beam_size)
        beam_indices = oar.floor_divide(topk_indices, oar.full([], vocab, dtype=topk_indices.dtype))
        token_indices = oar.remainder(topk_indices, oar.full([], vocab, dtype=topk_indices.dtype))
        next_log_probs = oar.take_along_axis(scores, topk_indices, axis=1)
        next_cell_states = _map(lambda x: self._gather(x, beam_indices), next_cell_states)
        next_finished = self._gather(beam_state.finished, beam_indices)
        next_lengths = self._gather(beam_state.lengths, beam_indices)
        next_lengths = next_lengths + oar.logical_not(next_finished).astype(next_lengths.dtype)
        next_finished = oar.logical_or(next_finished, oar.equal(token_indices, self.end_token))
        return (self.OutputWrapper(topk_scores, token_indices, beam_indices),
                self.StateWrapper(next_cell_states, next_log_probs, next_finished, next_lengths))

    def step(self, time, inputs, states, **kwargs):
        """One beam-search step: (OutputWrapper, StateWrapper, next inputs, finished)."""
        inputs = _map(self._merge_batch_beams, inputs)
        cell_states = _map(self._merge_batch_beams, states.cell_states)
        cell_outputs, next_cell_states = self.cell(inputs, cell_states, **kwargs)
        cell_outputs = _map(self._split_batch_beams, cell_outputs)
        next_cell_states = _map(self._split_batch_beams, next_cell_states)
        if self.output_fn is not None:
            cell_outputs = self.output_fn(cell_outputs)
        output, state = self._beam_search_step(time, cell_outputs, next_cell_states, states)
        ids = output.predicted_ids
        ids.stop_gradient = True
        next_inputs = self.embedding_fn(ids) if self.embedding_fn is not None else ids
        return output, state, next_inputs, state.finished

    def finalize(self, outputs, final_states, sequence_lengths):
        """Backtracks the time-major step outputs: the token ids of each final beam, [time, batch, beam]."""
        return F.gather_tree(outputs.predicted_ids, outputs.parent_ids), final_states

    @property
    def tracks_own_finished(self):
        return True


def _keep_finished(state, new_state, finished):
    """new_state where the batch entry is still running, the old state where it had finished."""
    import oar

    mask = finished.reshape(list(finished.shape) + [1] * (state.ndim - finished.ndim))
    return oar.where(mask, state, new_state)


def dynamic_decode(decoder, inits=None, max_step_num=None, output_time_major=False, impute_finished=False,
                   is_test=False, return_length=False, **kwargs):
    """Runs ``decoder`` step by step until every sequence finishes or ``max_step_num`` is passed.

    Returns ``(final_outputs, final_states)``, plus the sequence lengths when
    ``return_length``. Step outputs are stacked along time (batch-major unless
    ``output_time_major``) and then given to ``decoder.finalize``. As in Paddle,
    decoding stops after step ``max_step_num`` (so at most ``max_step_num + 1``
    steps run). ``impute_finished`` keeps the states of finished entries for decoders
    that do not track their own; ``is_test`` only concerns static-graph memory in
    Paddle and changes nothing here. Extra keyword arguments go to ``decoder.step``.

    >>> import oar
    >>> _ = oar.seed(1)
    >>> cell = oar.nn.GRUCell(3, 5)
    >>> decoder = oar.nn.BeamSearchDecoder(cell, 0, 1, 2, embedding_fn=oar.nn.Embedding(4, 3),
    ...                                    output_fn=oar.nn.Linear(5, 4))
    >>> ids, states, lengths = oar.nn.dynamic_decode(decoder, cell.get_initial_states(oar.ones([3, 3])),
    ...                                              max_step_num=3, return_length=True)
    >>> ids.shape[0], ids.shape[2], lengths.shape
    (3, 2, [3, 2])
    """
    import oar

    api = "oar.nn.dynamic_decode"
    for nm in ("initialize", "step"):
        if not callable(getattr(decoder, nm, None)):
            raise TypeError(f"[{api}] decoder must have initialize and step methods (a Decoder), "
                            f"got {type(decoder).__name__}")
    if max_step_num is not None and (isinstance(max_step_num, bool)
                                     or not isinstance(max_step_num, (int, np.integer)) or max_step_num < 0):
        raise ValueError(f"[{api}] max_step_num must be None or an int >= 0, got {max_step_num!r}")
    if _C._ir_is_tracing():
        raise RuntimeError(f"[{api}] the decoding loop runs eagerly (its length depends on the decoded "
                           "values); call it outside static mode and to_static")
    inputs, states, finished = decoder.initialize(inits)
    lengths = oar.zeros(finished.shape, dtype="int64")
    own = decoder.tracks_own_finished
    steps = []
    step = 0
    time = oar.full([1], 0, dtype="int64")
    while not bool(oar.all(finished)):
        out, next_states, next_inputs, next_finished = decoder.step(time, inputs, states, **kwargs)
        if not own:
            next_finished = oar.logical_or(next_finished, finished)
            next_lengths = lengths + oar.logical_not(finished).astype(lengths.dtype)
            if impute_finished:
                next_states = _map(lambda s, n: _keep_finished(s, n, finished), states, next_states)
        else:
            next_lengths = getattr(next_states, "lengths", lengths)
        steps.append(out)
        inputs, states, finished, lengths = next_inputs, next_states, next_finished, next_lengths
        step += 1
        time = oar.full([1], step, dtype="int64")
        if max_step_num is not None and step > max_step_num:
            break
    if not steps:
        raise ValueError(f"[{api}] every sequence was finished at initialization: nothing to decode")
    outputs = _map(lambda *xs: oar.stack(list(xs), axis=0), *steps)
    try:
        outputs, states = decoder.finalize(outputs, states, lengths)
    except NotImplementedError:
        pass
    if not output_time_major:
        outputs = _map(lambda x: oar.transpose(x, [1, 0] + list(range(2, x.ndim))), outputs)
    return (outputs, states, lengths) if return_length else (outputs, states)
