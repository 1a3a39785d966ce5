"""A small configuration base: keyword fields with defaults, validated at construction."""

from oar import _C

__all__ = []


class ModelConfig:
    """Holds a model's hyper-parameters as attributes; `_defaults` lists the fields in order.

    Unknown keywords raise TypeError so a misspelt field is never silently ignored.
    """

    _defaults = {}
    _positive = ()  # fields that must be positive ints
    _probabilities = ()  # fields that must lie in [0, 1]

    def __init__(self, **kwargs):
        api = f"[oar.models.{type(self).__name__}]"
        unknown = sorted(set(kwargs) - set(self._defaults))
        if unknown:
            raise TypeError(f"{api} unknown field(s) {unknown}; expected some of {list(self._defaults)}")
        for key, default in self._defaults.items():
            setattr(self, key, kwargs.get(key, default))
        for key in self._positive:
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{api} {key} must be a positive int, got {v!r}")
        for key in self._probabilities:
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
                raise ValueError(f"{api} {key} must be a number in [0, 1], got {v!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"{api} hidden_size ({self.hidden_size}) must be divisible by num_attention_heads "
                             f"({self.num_attention_heads})")

    def to_dict(self):
        return {key: getattr(self, key) for key in self._defaults}

    def __eq__(self, other):
        return type(other) is type(self) and other.to_dict() == self.to_dict()

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items())
        return f"{type(self).__name__}({fields})"


def check_ids(ids, api, what="input_ids", max_len=None):
    """ids must be a 2-D integer Tensor [batch, seq_len] with seq_len <= max_len."""
    from oar import _C

    if not isinstance(ids, _C.Tensor):
        raise TypeError(f"[oar.models.{api}] {what} must be a Tensor, got {type(ids).__name__}")
    if "int" not in str(ids.dtype):
        raise TypeError(f"[oar.models.{api}] {what} must hold integer token ids, got {ids.dtype}")
    if ids.ndim != 2:
        raise ValueError(f"[oar.models.{api}] {what} must be 2-D [batch, seq_len], got shape {ids.shape}")
    if max_len is not None and ids.shape[1] > max_len:
        raise ValueError(f"[oar.models.{api}] {what} has {ids.shape[1]} positions but the model has only "
                         f"max_position_embeddings={max_len}")


def token_loss(logits, labels, ignore_index=-100):
    """The language-model loss: cross entropy averaged over the labels that
    are not ignore_index (F.cross_entropy's 'mean' divides by every label
    when ignore_index < 0, as Paddle's does)."""
    from oar.nn import functional as F
    total = F.cross_entropy(logits, labels, ignore_index=ignore_index, reduction="sum")
    kept = (labels != ignore_index).astype(total.dtype).sum()
    return total / _C.maximum(kept, _C.full([], 1, kept.dtype))
