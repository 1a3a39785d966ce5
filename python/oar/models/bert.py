"""BERT encoder with PaddleNLP's names: BertConfig, BertModel, BertForSequenceClassification,
BertForPretraining (masked-LM and next-sentence heads)."""
from oar import _C, creation, nn
from oar.framework_param import ParamAttr
from oar.nn import functional as F
from oar.nn.initializer import Constant, Normal

from ._config import ModelConfig, check_ids, token_loss

__all__ = ["BertConfig", "BertModel", "BertForSequenceClassification", "BertForPretraining"]

# Additive mask value for padded keys (PaddleNLP's choice; -inf would give NaN for all-pad rows).
_MASK_VALUE = -1e4


class BertConfig(ModelConfig):
    """Hyper-parameters of BertModel; the defaults are BERT-base (109,482,240 parameters with
    the pooler).

    >>> from oar.models import BertConfig
    >>> cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    ...                  intermediate_size=64)
    >>> cfg.max_position_embeddings, cfg.type_vocab_size
    (512, 2)
    """

    _defaults = {
        "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
        "intermediate_size": 3072, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 512, "type_vocab_size": 2,
        "initializer_range": 0.02, "pad_token_id": 0, "layer_norm_eps": 1e-12,
    }
    _positive = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                 "max_position_embeddings", "type_vocab_size")
    _probabilities = ("hidden_dropout_prob", "attention_probs_dropout_prob")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(self.hidden_act, str) or not hasattr(F, self.hidden_act):
            raise ValueError(f"[oar.models.BertConfig] hidden_act must name an oar.nn.functional activation, "
                             f"got {self.hidden_act!r}")


def _normal(config):
    return ParamAttr(initializer=Normal(0.0, config.initializer_range))


class BertEmbeddings(nn.Layer):
    """word + position + token-type embeddings, LayerNorm, dropout."""

    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, h, weight_attr=_normal(config))
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, h, weight_attr=_normal(config))
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, h, weight_attr=_normal(config))
        self.layer_norm = nn.LayerNorm(h, epsilon=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids, token_type_ids=None, position_ids=None):
        s = input_ids.shape[1]
        if position_ids is None:
            position_ids = _C.arange(0, s, 1, _C.dtype.int64).unsqueeze(0)
        if token_type_ids is None:
            token_type_ids = creation.zeros_like(input_ids)
        x = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        x = x + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.layer_norm(x))


class BertPooler(nn.Layer):
    """tanh(Linear(hidden of the first token))."""

    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size, weight_attr=_normal(config))

    def forward(self, hidden_states):
        return F.tanh(self.dense(hidden_states[:, 0]))


class BertModel(nn.Layer):
    """BERT encoder: embeddings, num_hidden_layers post-LayerNorm transformer blocks, pooler.

    forward(input_ids, token_type_ids=None, position_ids=None, attention_mask=None) returns
    (sequence_output [batch, seq, hidden], pooled_output [batch, hidden]). attention_mask may be
    [batch, seq] with 1 for tokens to attend to and 0 for padding, a bool mask (True = attend),
    or a float mask broadcastable to [batch, heads, seq, seq] that is added to the scores; when
    None, positions holding pad_token_id are masked out.

    >>> import oar
    >>> from oar.models import BertConfig, BertModel
    >>> cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
    ...                  intermediate_size=32)
    >>> seq, pooled = BertModel(cfg)(oar.to_tensor([[5, 6, 7, 0]]))
    >>> seq.shape, pooled.shape
    ([1, 4, 16], [1, 16])
    """

    def __init__(self, config):
        super().__init__()
        if not isinstance(config, BertConfig):
            raise TypeError(f"[oar.models.BertModel] config must be a BertConfig, got {type(config).__name__}")
        self.config = config
        self.pad_token_id = config.pad_token_id
        self.embeddings = BertEmbeddings(config)
        layer = nn.TransformerEncoderLayer(
            config.hidden_size, config.num_attention_heads, config.intermediate_size,
            dropout=config.hidden_dropout_prob, activation=config.hidden_act,
            attn_dropout=config.attention_probs_dropout_prob, act_dropout=0.0, weight_attr=_normal(config),
            layer_norm_eps=config.layer_norm_eps)
        self.encoder = nn.TransformerEncoder(layer, config.num_hidden_layers)
        self.pooler = BertPooler(config)

    def _additive_mask(self, input_ids, attention_mask, dtype):
        if attention_mask is None:
            pad = (input_ids == self.pad_token_id).astype(dtype)
            return (pad * _MASK_VALUE).unsqueeze([1, 2])
        if not isinstance(attention_mask, _C.Tensor):
            raise TypeError(f"[oar.models.BertModel] attention_mask must be a Tensor, "
                            f"got {type(attention_mask).__name__}")
        mask_dtype = str(attention_mask.dtype).split(".")[-1]
        keep_mask = mask_dtype == "bool" or "int" in mask_dtype
        if attention_mask.ndim == 2:  # [batch, seq]: 1 attends, 0 is padding, whatever the dtype
            attention_mask, keep_mask = attention_mask.unsqueeze([1, 2]), True
        if keep_mask:
            return (1.0 - attention_mask.astype(dtype)) * _MASK_VALUE
        return attention_mask.astype(dtype)

    def forward(self, input_ids, token_type_ids=None, position_ids=None, attention_mask=None):
        check_ids(input_ids, "BertModel", max_len=self.config.max_position_embeddings)
        x = self.embeddings(input_ids, token_type_ids, position_ids)
        mask = self._additive_mask(input_ids, attention_mask, str(x.dtype).split(".")[-1])
        sequence_output = self.encoder(x, mask)
        return sequence_output, self.pooler(sequence_output)


class BertForSequenceClassification(nn.Layer):
    """BertModel + dropout + Linear on the pooled output.

    forward(input_ids, token_type_ids=None, position_ids=None, attention_mask=None, labels=None)
    returns logits [batch, num_classes], or (loss, logits) with the mean cross entropy when
    labels [batch] are given.

    >>> import oar
    >>> from oar.models import BertConfig, BertForSequenceClassification
    >>> cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    ...                  intermediate_size=32)
    >>> model = BertForSequenceClassification(cfg, num_classes=3)
    >>> loss, logits = model(oar.to_tensor([[5, 6, 7], [8, 9, 0]]), labels=oar.to_tensor([0, 2]))
    >>> logits.shape, loss.shape
    ([2, 3], [])
    """

    def __init__(self, config, num_classes=2, dropout=None):
        super().__init__()
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes <= 0:
            raise ValueError(f"[oar.models.BertForSequenceClassification] num_classes must be a positive int, "
                             f"got {num_classes!r}")
        self.num_classes = num_classes
        self.bert = BertModel(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob if dropout is None else dropout)
        self.classifier = nn.Linear(config.hidden_size, num_classes, weight_attr=_normal(config))

    def forward(self, input_ids, token_type_ids=None, position_ids=None, attention_mask=None, labels=None):
        _, pooled = self.bert(input_ids, token_type_ids, position_ids, attention_mask)
        logits = self.classifier(self.dropout(pooled))
        if labels is None:
            return logits
        return F.cross_entropy(logits, labels.reshape([-1]).astype("int64")), logits


class BertLMPredictionHead(nn.Layer):
    """Linear + activation + LayerNorm, then scores against the (tied) word embeddings + bias."""

    def __init__(self, config, embedding_weights):
        super().__init__()
        self.transform = nn.Linear(config.hidden_size, config.hidden_size, weight_attr=_normal(config))
        self.activation = getattr(F, config.hidden_act)
        self.layer_norm = nn.LayerNorm(config.hidden_size, epsilon=config.layer_norm_eps)
        self.decoder_weight = embedding_weights  # shared with BertEmbeddings, counted once in parameters()
        self.decoder_bias = self.create_parameter([config.vocab_size], is_bias=True,
                                                  default_initializer=Constant(0.0))

    def forward(self, hidden_states):
        h = self.layer_norm(self.activation(self.transform(hidden_states)))
        return _C.matmul(h, self.decoder_weight, False, True) + self.decoder_bias


class BertForPretraining(nn.Layer):
    """BertModel with the masked-LM head (tied to the word embeddings) and the next-sentence head.

    forward(input_ids, token_type_ids=None, position_ids=None, attention_mask=None,
    masked_lm_labels=None, next_sentence_label=None) returns (prediction_scores [batch, seq,
    vocab], seq_relationship_score [batch, 2]); with both labels given, (loss, prediction_scores,
    seq_relationship_score) where loss = masked-LM cross entropy (labels -100 ignored) + the
    next-sentence cross entropy.

    >>> import oar
    >>> from oar.models import BertConfig, BertForPretraining
    >>> cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    ...                  intermediate_size=32)
    >>> model = BertForPretraining(cfg)
    >>> scores, nsp = model(oar.to_tensor([[5, 6, 7]]))
    >>> scores.shape, nsp.shape
    ([1, 3, 50], [1, 2])
    """

    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)
        self.cls_predictions = BertLMPredictionHead(config, self.bert.embeddings.word_embeddings.weight)
        self.cls_seq_relationship = nn.Linear(config.hidden_size, 2, weight_attr=_normal(config))

    def forward(self, input_ids, token_type_ids=None, position_ids=None, attention_mask=None,
                masked_lm_labels=None, next_sentence_label=None):
        seq, pooled = self.bert(input_ids, token_type_ids, position_ids, attention_mask)
        scores = self.cls_predictions(seq)
        nsp = self.cls_seq_relationship(pooled)
        if masked_lm_labels is None or next_sentence_label is None:
            if (masked_lm_labels is None) != (next_sentence_label is None):
                raise ValueError("[oar.models.BertForPretraining] give both masked_lm_labels and "
                                 "next_sentence_label, or neither")
            return scores, nsp
        v = self.bert.config.vocab_size
        mlm = token_loss(scores.reshape([-1, v]), masked_lm_labels.reshape([-1]).astype("int64"))
        nsp_loss = F.cross_entropy(nsp, next_sentence_label.reshape([-1]).astype("int64"))
        return mlm + nsp_loss, scores, nsp
