"""Small text models built from oar.nn layers."""
from oar import _C, _manip, nn

__all__ = ["TextClassifier"]


class TextClassifier(nn.Layer):
    """Embedding -> LSTM -> Linear sequence classifier.

    forward(input_ids [batch, seq_len], seq_len=None) returns logits [batch, num_classes].
    pooling='last' classifies the LSTM's final hidden state (of the top layer; both directions
    concatenated when bidirectional), pooling='mean' the mean of the top layer's outputs over the
    valid positions. Valid positions are the first seq_len[i] of row i when seq_len is given,
    otherwise all positions (the LSTM runs over padding too, so pass seq_len for padded batches).

    >>> import oar
    >>> from oar.text import TextClassifier
    >>> model = TextClassifier(vocab_size=20, embed_dim=8, hidden_size=6, num_classes=3, bidirectional=True)
    >>> ids = oar.to_tensor([[4, 5, 6, 0], [7, 8, 0, 0]])
    >>> model(ids, seq_len=oar.to_tensor([3, 2])).shape
    [2, 3]
    """

    def __init__(self, vocab_size, embed_dim, hidden_size, num_classes, num_layers=1, bidirectional=False,
                 padding_idx=0, dropout=0.0, pooling="last"):
        super().__init__()
        api = "[oar.text.TextClassifier]"
        for what, v in (("vocab_size", vocab_size), ("embed_dim", embed_dim), ("hidden_size", hidden_size),
                        ("num_classes", num_classes), ("num_layers", num_layers)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{api} {what} must be a positive int, got {v!r}")
        if pooling not in ("last", "mean"):
            raise ValueError(f"{api} pooling must be 'last' or 'mean', got {pooling!r}")
        self.num_classes, self.pooling = num_classes, pooling
        self.num_directions = 2 if bidirectional else 1
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=padding_idx)
        self.lstm = nn.LSTM(embed_dim, hidden_size, num_layers=num_layers,
                            direction="bidirect" if bidirectional else "forward", dropout=dropout)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(hidden_size * self.num_directions, num_classes)

    def forward(self, input_ids, seq_len=None):
        api = "[oar.text.TextClassifier]"
        if not isinstance(input_ids, _C.Tensor) or input_ids.ndim != 2:
            raise ValueError(f"{api} input_ids must be a 2-D Tensor [batch, seq_len], got "
                             f"{getattr(input_ids, 'shape', type(input_ids).__name__)}")
        if seq_len is not None:
            seq_len = seq_len.astype("int64")
        out, (h, _) = self.lstm(self.embedding(input_ids), sequence_length=seq_len)
        if self.pooling == "last":
            # h is [num_layers * num_directions, batch, hidden]; the top layer's states come last
            top = [h[h.shape[0] - self.num_directions + d] for d in range(self.num_directions)]
            feat = top[0] if len(top) == 1 else _manip.concat(top, axis=-1)
        else:
            feat = _masked_mean(out, seq_len)
        return self.fc(self.dropout(feat))


def _masked_mean(out, seq_len):
    """Mean of out [batch, time, features] over the first seq_len[i] steps of each row."""
    if seq_len is None:
        return out.mean(axis=1)
    dtype = str(out.dtype).split(".")[-1]
    steps = _C.arange(0, out.shape[1], 1, _C.dtype.int64).unsqueeze(0)
    mask = (steps < seq_len.unsqueeze(1)).astype(dtype).unsqueeze(2)
    count = mask.sum(axis=1).clip(min=1.0)
    return (out * mask).sum(axis=1) / count
