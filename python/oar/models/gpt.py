"""GPT-2 style decoder-only language model: token + learned position embeddings, pre-LayerNorm
blocks of causal self-attention and a GELU MLP, a final LayerNorm and an LM head tied to the
token embedding."""
import math

import numpy as np

from oar import _C, _manip, creation, nn
from oar.autograd import no_grad
from oar.nn import functional as F
from oar.framework_param import ParamAttr
from oar.nn.initializer import Normal

from ._config import ModelConfig, check_ids, token_loss

__all__ = ["GPTConfig", "GPTModel", "GPTForCausalLM", "gpt_small"]

_ACTIVATIONS = {
    "gelu": lambda x: F.gelu(x),
    "gelu_new": lambda x: F.gelu(x, approximate=True),  # GPT-2's tanh approximation
    "relu": lambda x: F.relu(x),
}


class GPTConfig(ModelConfig):
    """Hyper-parameters of GPTModel; the defaults are GPT-2 small (124,439,808 parameters).

    intermediate_size defaults to 4 * hidden_size. hidden_act is 'gelu', 'gelu_new' (tanh
    approximation) or 'relu'.

    >>> from oar.models import GPTConfig
    >>> cfg = GPTConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4)
    >>> cfg.intermediate_size, cfg.tie_word_embeddings
    (128, True)
    """

    _defaults = {
        "vocab_size": 50257, "max_position_embeddings": 1024, "hidden_size": 768, "num_hidden_layers": 12,
        "num_attention_heads": 12, "intermediate_size": None, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "layer_norm_epsilon": 1e-5,
        "initializer_range": 0.02, "tie_word_embeddings": True,
    }
    _positive = ("vocab_size", "max_position_embeddings", "hidden_size", "num_hidden_layers", "num_attention_heads",
                 "intermediate_size")
    _probabilities = ("hidden_dropout_prob", "attention_probs_dropout_prob")

    def __init__(self, **kwargs):
        if kwargs.get("intermediate_size") is None:
            kwargs["intermediate_size"] = 4 * kwargs.get("hidden_size", self._defaults["hidden_size"])
        super().__init__(**kwargs)
        if self.hidden_act not in _ACTIVATIONS:
            raise ValueError(f"[oar.models.GPTConfig] hidden_act must be one of {sorted(_ACTIVATIONS)}, "
                             f"got {self.hidden_act!r}")


def _param_attr(std):
    return ParamAttr(initializer=Normal(0.0, std))


class GPTAttention(nn.Layer):
    """Causal multi-head self-attention with a fused qkv projection."""

    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = h // self.num_heads
        self.attn_dropout = config.attention_probs_dropout_prob
        self.qkv_proj = nn.Linear(h, 3 * h, weight_attr=_param_attr(config.initializer_range))
        # GPT-2 scales the init of projections that feed the residual stream by 1/sqrt(2 * layers)
        self.out_proj = nn.Linear(h, h, weight_attr=_param_attr(
            config.initializer_range / math.sqrt(2 * config.num_hidden_layers)))
        self.resid_dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, x, cache=None):
        """cache: the (k, v) of earlier positions, [batch, past, heads, head_dim] each; returns
        (out, (k, v)) with this call's positions appended when a cache is given."""
        b, s, h = x.shape
        # -1 for the batch, so that a captured program keeps it dynamic
        qkv = self.qkv_proj(x).reshape([-1, s, 3, self.num_heads, self.head_dim])
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        if cache is not None:
            if cache[0].shape[1] and s != 1:
                raise ValueError("[oar.models.GPTAttention] with a non-empty cache only one new position "
                                 f"can be attended at a time, got {s}")
            k, v = _manip.concat([cache[0], k], axis=1), _manip.concat([cache[1], v], axis=1)
        # a single new query may see every cached key; otherwise the causal mask applies
        causal = k.shape[1] == s
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_dropout, is_causal=causal,
                                             training=self.training)
        out = self.resid_dropout(self.out_proj(out.reshape([-1, s, h])))
        return out if cache is None else (out, (k, v))


class GPTMLP(nn.Layer):
    """Linear(h, 4h) -> GELU -> Linear(4h, h) -> dropout."""

    def __init__(self, config):
        super().__init__()
        h, inner = config.hidden_size, config.intermediate_size
        self.fc_in = nn.Linear(h, inner, weight_attr=_param_attr(config.initializer_range))
        self.fc_out = nn.Linear(inner, h, weight_attr=_param_attr(
            config.initializer_range / math.sqrt(2 * config.num_hidden_layers)))
        self.act = _ACTIVATIONS[config.hidden_act]
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, x):
        return self.dropout(self.fc_out(self.act(self.fc_in(x))))


class GPTBlock(nn.Layer):
    """x + attn(ln_1(x)), then x + mlp(ln_2(x)) (pre-LayerNorm)."""

    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.hidden_size, epsilon=config.layer_norm_epsilon)
        self.attn = GPTAttention(config)
        self.ln_2 = nn.LayerNorm(config.hidden_size, epsilon=config.layer_norm_epsilon)
        self.mlp = GPTMLP(config)

    def forward(self, x, cache=None):
        if cache is None:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))
        a, cache = self.attn(self.ln_1(x), cache)
        x = x + a
        return x + self.mlp(self.ln_2(x)), cache


class GPTModel(nn.Layer):
    """The GPT trunk: forward(input_ids [batch, seq], position_ids=None, use_cache=False,
    cache=None) returns the final hidden states [batch, seq, hidden_size] after the last
    LayerNorm, plus the per-layer key/value cache when use_cache (for incremental decoding:
    pass it back with the next single token; positions then continue after the cached ones).

    >>> import oar
    >>> from oar.models import GPTConfig, GPTModel
    >>> cfg = GPTConfig(vocab_size=50, max_position_embeddings=16, hidden_size=16, num_hidden_layers=2,
    ...                 num_attention_heads=2)
    >>> GPTModel(cfg)(oar.to_tensor([[1, 2, 3]])).shape
    [1, 3, 16]
    """

    def __init__(self, config):
        super().__init__()
        if not isinstance(config, GPTConfig):
            raise TypeError(f"[oar.models.GPTModel] config must be a GPTConfig, got {type(config).__name__}")
        self.config = config
        init = _param_attr(config.initializer_range)
        self.wte = nn.Embedding(config.vocab_size, config.hidden_size, weight_attr=init)
        self.wpe = nn.Embedding(config.max_position_embeddings, config.hidden_size, weight_attr=init)
        self.drop = nn.Dropout(config.hidden_dropout_prob)
        self.h = nn.LayerList([GPTBlock(config) for _ in range(config.num_hidden_layers)])
        self.ln_f = nn.LayerNorm(config.hidden_size, epsilon=config.layer_norm_epsilon)

    def forward(self, input_ids, position_ids=None, use_cache=False, cache=None):
        past = 0 if cache is None else cache[0][0].shape[1]
        check_ids(input_ids, "GPTModel")
        s = input_ids.shape[1]
        if past + s > self.config.max_position_embeddings:
            raise ValueError(f"[oar.models.GPTModel] input_ids has {s} positions after {past} cached ones, more "
                             f"than max_position_embeddings={self.config.max_position_embeddings}")
        if position_ids is None:
            position_ids = _C.arange(past, past + s, 1, _C.dtype.int64).unsqueeze(0)
        x = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        if not use_cache and cache is None:
            for block in self.h:
                x = block(x)
            return self.ln_f(x)
        if cache is None:
            b, hd = input_ids.shape[0], self.config.hidden_size // self.config.num_attention_heads
            empty = creation.zeros([b, 0, self.config.num_attention_heads, hd], dtype=str(x.dtype).split(".")[-1])
            cache = [(empty, empty)] * len(self.h)
        new_cache = []
        for block, c in zip(self.h, cache):
            x, c = block(x, c)
            new_cache.append(c)
        return self.ln_f(x), new_cache


class GPTForCausalLM(nn.Layer):
    """GPTModel plus a language-model head (tied to the token embedding unless
    config.tie_word_embeddings is False).

    forward(input_ids, labels=None) returns logits [batch, seq, vocab_size], or (loss, logits)
    when labels are given: the mean cross entropy of predicting labels[:, t + 1] from position t
    (labels equal to -100 are ignored; pass labels=input_ids for plain language modelling).

    >>> import oar
    >>> from oar.models import GPTConfig, GPTForCausalLM
    >>> cfg = GPTConfig(vocab_size=50, max_position_embeddings=16, hidden_size=16, num_hidden_layers=2,
    ...                 num_attention_heads=2)
    >>> model = GPTForCausalLM(cfg)
    >>> ids = oar.to_tensor([[1, 2, 3, 4]])
    >>> loss, logits = model(ids, labels=ids)
    >>> logits.shape, loss.shape
    ([1, 4, 50], [])
    >>> model.generate(ids, max_new_tokens=3, temperature=0).shape
    [1, 7]
    """

    def __init__(self, config):
        super().__init__()
        self.gpt = GPTModel(config)
        self.config = config
        if not config.tie_word_embeddings:
            self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias_attr=False,
                                     weight_attr=_param_attr(config.initializer_range))

    def get_output_embeddings(self):
        """The [vocab_size, hidden] (tied) or [hidden, vocab_size] (untied) output weight."""
        return self.gpt.wte.weight if self.config.tie_word_embeddings else self.lm_head.weight

    def _head(self, hidden):
        if self.config.tie_word_embeddings:
            return _C.matmul(hidden, self.gpt.wte.weight, False, True)
        return self.lm_head(hidden)

    def forward(self, input_ids, labels=None):
        logits = self._head(self.gpt(input_ids))
        if labels is None:
            return logits
        check_ids(labels, "GPTForCausalLM", "labels")
        if labels.shape != input_ids.shape:
            raise ValueError(f"[oar.models.GPTForCausalLM] labels must have the shape of input_ids "
                             f"{input_ids.shape}, got {labels.shape}")
        v = self.config.vocab_size
        shift_logits = logits[:, :-1].reshape([-1, v])
        shift_labels = labels[:, 1:].reshape([-1]).astype("int64")
        loss = token_loss(shift_logits, shift_labels)
        return loss, logits

    def generate(self, input_ids, max_new_tokens, temperature=1.0, top_k=None, seed=None):
        """Appends max_new_tokens sampled tokens to input_ids [batch, prompt_len] and returns
        [batch, prompt_len + max_new_tokens] (input_ids' dtype).

        Keys and values of earlier positions are cached while the sequence fits in
        max_position_embeddings; past that, each step reruns the model on the last
        max_position_embeddings tokens. Each step samples from
        softmax(logits / temperature) restricted to the top_k most likely tokens (all when
        top_k is None); temperature == 0 picks the most likely token (greedy, ties to the lowest
        id). seed makes sampling reproducible; without it the draw comes from oar's generator
        (oar.seed). Runs in eval mode without gradients; the training flag is restored after.

        >>> import oar
        >>> from oar.models import GPTConfig, GPTForCausalLM
        >>> model = GPTForCausalLM(GPTConfig(vocab_size=20, max_position_embeddings=8, hidden_size=8,
        ...                                  num_hidden_layers=1, num_attention_heads=2))
        >>> ids = oar.to_tensor([[3, 4]])
        >>> a = model.generate(ids, 4, temperature=0.8, top_k=5, seed=7)
        >>> b = model.generate(ids, 4, temperature=0.8, top_k=5, seed=7)
        >>> a.shape, bool((a == b).all())
        ([1, 6], True)
        """
        import oar

        api = "[oar.models.GPTForCausalLM.generate]"
        check_ids(input_ids, "GPTForCausalLM.generate")
        if input_ids.shape[0] == 0 or input_ids.shape[1] == 0:
            raise ValueError(f"{api} input_ids must hold at least one token per row, got shape {input_ids.shape}")
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, (int, np.integer)) \
                or max_new_tokens < 0:
            raise ValueError(f"{api} max_new_tokens must be a non-negative int, got {max_new_tokens!r}")
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
                or not (temperature >= 0 and math.isfinite(temperature)):
            raise ValueError(f"{api} temperature must be a finite number >= 0, got {temperature!r}")
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer))
                                  or top_k <= 0):
            raise ValueError(f"{api} top_k must be None or a positive int, got {top_k!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise TypeError(f"{api} seed must be None or an int, got {type(seed).__name__}")
        if seed is None and temperature > 0:
            seed = int(oar.randint(0, 2 ** 31 - 1, [1]).item())
        rng = np.random.default_rng(seed)
        dtype = str(input_ids.dtype).split(".")[-1]
        tokens = input_ids.numpy().astype(np.int64)
        ctx = self.config.max_position_embeddings
        was_training = self.training
        self.eval()
        try:
            with no_grad():
                cache = None
                for _ in range(int(max_new_tokens)):
                    if tokens.shape[1] > ctx:  # the window slides: positions shift, the cache is stale
                        cache = None
                        hidden = self.gpt(oar.to_tensor(tokens[:, -ctx:]))
                    elif cache is None:
                        hidden, cache = self.gpt(oar.to_tensor(tokens), use_cache=True)
                    else:
                        hidden, cache = self.gpt(oar.to_tensor(tokens[:, -1:]), use_cache=True, cache=cache)
                    logits = self._head(hidden[:, -1])
                    nxt = _pick_next(logits.numpy().astype(np.float64), temperature, top_k, rng)
                    tokens = np.concatenate([tokens, nxt[:, None]], axis=1)
        finally:
            if was_training:
                self.train()
        return oar.to_tensor(tokens).astype(dtype)


def _pick_next(logits, temperature, top_k, rng):
    """Next token per row of logits [batch, vocab] (float64 NumPy)."""
    if temperature == 0:
        return np.argmax(logits, axis=-1)
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        # a stable sort keeps the lowest ids among ties, so top_k=1 agrees with argmax
        drop = np.argsort(-logits, axis=-1, kind="stable")[:, top_k:]
        np.put_along_axis(logits, drop, -np.inf, axis=-1)
    logits = logits - logits.max(axis=-1, keepdims=True)
    probs = np.exp(logits)
    cdf = np.cumsum(probs, axis=-1)
    u = rng.random(logits.shape[0]) * cdf[:, -1]
    picks = np.array([np.searchsorted(c, x, side="right") for c, x in zip(cdf, u)], dtype=np.int64)
    return np.minimum(picks, logits.shape[-1] - 1)


def gpt_small(vocab_size=1024, max_position_embeddings=128, **kwargs):
    """GPTForCausalLM with 4 layers, width 256, 4 heads, vocab 1024 and 128 positions (the
    benchmark configuration); kwargs override GPTConfig fields.

    >>> from oar.models import gpt_small
    >>> model = gpt_small()
    >>> model.config.num_hidden_layers, sum(p.size for p in model.parameters())
    (4, 3454464)
    """
    fields = dict(vocab_size=vocab_size, max_position_embeddings=max_position_embeddings, hidden_size=256,
                  num_hidden_layers=4, num_attention_heads=4)
    fields.update(kwargs)
    return GPTForCausalLM(GPTConfig(**fields))
