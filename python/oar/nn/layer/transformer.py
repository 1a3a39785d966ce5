"""Multi-head attention and the Transformer encoder/decoder, with Paddle's
sublayer names (q_proj/k_proj/v_proj/out_proj, linear1/linear2, norm1..norm3,
dropout1..dropout3), masks and caches, so Paddle state dicts load unchanged.
"""
import collections
import copy

import numpy as np

from ... import _C
from .. import functional as F
from .common import Dropout, Linear
from .container import LayerList
from .layers import Layer

__all__ = ["MultiHeadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer"]


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _convert_attention_mask(attn_mask, dtype):
    """Paddle's rule: bool/int masks keep the 1/True entries (others get -1e9); float masks are added as is."""
    if attn_mask is None:
        return None
    name = _dtype_name(attn_mask)
    if name == "bool" or "int" in name:
        return (attn_mask.astype(dtype) - 1.0) * 1e9
    return attn_mask if name == dtype else attn_mask.astype(dtype)


def _layer_norm(d_model, eps):
    from . import norm

    cls = getattr(norm, "LayerNorm", None) or _LayerNorm
    return cls(d_model, epsilon=eps)


class _LayerNorm(Layer):
    """Minimal LayerNorm over the last axis (weight and bias named as in Paddle), used only when
    oar.nn.LayerNorm is unavailable."""

    def __init__(self, normalized_shape, epsilon=1e-5):
        super().__init__()
        from ..initializer import Constant

        self._epsilon = epsilon
        self.weight = self.create_parameter([normalized_shape], default_initializer=Constant(1.0))
        self.bias = self.create_parameter([normalized_shape], is_bias=True)

    def forward(self, x):
        mean = x.mean(axis=-1, keepdim=True)
        centred = x - mean
        var = (centred * centred).mean(axis=-1, keepdim=True)
        return centred * _C.rsqrt(var + self._epsilon) * self.weight + self.bias


def _attr_list(attr, n, api, what):
    if isinstance(attr, (list, tuple)):
        if len(attr) == 1:
            return [attr[0]] + [copy.deepcopy(attr[0]) for _ in range(n - 1)]
        if len(attr) != n:
            raise ValueError(f"[oar.nn.{api}] {what} as a list must have 1 or {n} entries, got {len(attr)}")
        return list(attr)
    return [attr] + [copy.deepcopy(attr) for _ in range(n - 1)]


def _activation(name, api):
    fn = getattr(F, name, None) if isinstance(name, str) else None
    if fn is None:
        raise ValueError(f"[oar.nn.{api}] unknown activation {name!r}")
    return fn


class MultiHeadAttention(Layer):
    """Multi-head scaled dot-product attention over [batch, seq_len, embed_dim] inputs.

    forward(query, key=None, value=None, attn_mask=None, cache=None) returns out, plus the
    attention weights [batch, num_heads, seq_q, seq_k] when need_weights, plus the updated
    cache when one is given. attn_mask broadcasts to [batch, num_heads, seq_q, seq_k]; bool or
    int masks keep the True/1 entries, float masks are added to the scores.

    >>> import oar
    >>> mha = oar.nn.MultiHeadAttention(8, 2)
    >>> mha(oar.ones([2, 5, 8])).shape
    [2, 5, 8]
    """

    Cache = collections.namedtuple("Cache", ["k", "v"])
    StaticCache = collections.namedtuple("StaticCache", ["k", "v"])

    def __init__(self, embed_dim, num_heads, dropout=0.0, kdim=None, vdim=None, need_weights=False,
                 weight_attr=None, bias_attr=None):
        super().__init__()
        for what, v in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if not isinstance(v, int) or v <= 0:
                raise ValueError(f"[oar.nn.MultiHeadAttention] {what} must be a positive int, got {v!r}")
        if embed_dim % num_heads:
            raise ValueError(f"[oar.nn.MultiHeadAttention] embed_dim ({embed_dim}) must be divisible by "
                             f"num_heads ({num_heads})")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self.head_dim = embed_dim // num_heads
        self.dropout, self.need_weights = dropout, need_weights
        self.q_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.k_proj = Linear(self.kdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.v_proj = Linear(self.vdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.out_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)

    def _heads(self, x):
        return x.reshape([0, 0, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])

    def compute_kv(self, key, value):
        """Projected keys and values, [batch, num_heads, seq_len, head_dim]."""
        return self._heads(self.k_proj(key)), self._heads(self.v_proj(value))

    def gen_cache(self, key, value=None, type=None):  # noqa: A002 - Paddle's argument name
        """Cache(k, v) for incremental decoding (empty, or holding key/value as given), or
        StaticCache(k, v) of the projected key/value when type is StaticCache.

        >>> import oar
        >>> mha = oar.nn.MultiHeadAttention(4, 2)
        >>> cache = mha.gen_cache(oar.ones([3, 1, 4]))
        >>> cache.k.shape
        [3, 2, 0, 2]
        """
        import oar

        type = type or MultiHeadAttention.Cache
        if type is MultiHeadAttention.StaticCache:
            return self.StaticCache(*self.compute_kv(key, key if value is None else value))
        if value is None:
            shape = [key.shape[0], self.num_heads, 0, self.head_dim]
            return self.Cache(oar.zeros(shape, dtype=_dtype_name(key)), oar.zeros(shape, dtype=_dtype_name(key)))
        return self.Cache(key, value)

    def forward(self, query, key=None, value=None, attn_mask=None, cache=None):
        import oar

        api = "[oar.nn.MultiHeadAttention]"
        key = query if key is None else key
        value = query if value is None else value
        for what, t, size in (("query", query, self.embed_dim), ("key", key, self.kdim), ("value", value, self.vdim)):
            if not isinstance(t, _C.Tensor):
                raise TypeError(f"{api} {what} must be a Tensor, got {type(t).__name__}")
            if t.ndim != 3 or t.shape[-1] != size:
                raise ValueError(f"{api} {what} must have shape [batch, seq_len, {size}], got {t.shape}")
        q = self._heads(self.q_proj(query))
        if isinstance(cache, self.StaticCache):
            k, v = cache.k, cache.v
        else:
            k, v = self.compute_kv(key, value)
        if isinstance(cache, self.Cache):
            k, v = oar.concat([cache.k, k], axis=2), oar.concat([cache.v, v], axis=2)
            cache = self.Cache(k, v)
        scores = _C.matmul(q * (self.head_dim ** -0.5), k, False, True)
        if attn_mask is not None:
            scores = scores + _convert_attention_mask(attn_mask, _dtype_name(scores))
        weights = F.softmax(scores, axis=-1)
        if self.dropout:
            weights = F.dropout(weights, self.dropout, training=self.training, mode="upscale_in_train")
        out = _C.matmul(weights, v, False, False).transpose([0, 2, 1, 3])
        out = self.out_proj(out.reshape([0, 0, self.embed_dim]))
        outs = [out]
        if self.need_weights:
            outs.append(weights)
        if cache is not None:
            outs.append(cache)
        return out if len(outs) == 1 else tuple(outs)

    def extra_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}"


def _ffn_parts(layer, d_model, dim_feedforward, dropout, act_dropout, weight_attr, bias_attr, layer_norm_eps,
               n_norm):
    layer.linear1 = Linear(d_model, dim_feedforward, weight_attr, bias_attr=bias_attr)
    layer.dropout = Dropout(act_dropout, mode="upscale_in_train")
    layer.linear2 = Linear(dim_feedforward, d_model, weight_attr, bias_attr=bias_attr)
    for i in range(1, n_norm + 1):
        setattr(layer, f"norm{i}", _layer_norm(d_model, layer_norm_eps))
    for i in range(1, n_norm + 1):
        setattr(layer, f"dropout{i}", Dropout(dropout, mode="upscale_in_train"))


class TransformerEncoderLayer(Layer):
    """Self-attention then a feed-forward block, each with a residual connection and LayerNorm
    (post-norm; pre-norm when normalize_before).

    forward(src [batch, seq, d_model], src_mask=None, cache=None).

    >>> import oar
    >>> layer = oar.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    >>> layer(oar.rand([2, 4, 8])).shape
    [2, 4, 8]
    """

    def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1, activation="relu", attn_dropout=None,
                 act_dropout=None, normalize_before=False, weight_attr=None, bias_attr=None, layer_norm_eps=1e-5):
        self._config = dict(locals())
        self._config.pop("self")
        self._config.pop("__class__", None)
        super().__init__()
        api = "TransformerEncoderLayer"
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        w = _attr_list(weight_attr, 2, api, "weight_attr")
        b = _attr_list(bias_attr, 2, api, "bias_attr")
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout, weight_attr=w[0], bias_attr=b[0])
        _ffn_parts(self, d_model, dim_feedforward, dropout, act_dropout, w[1], b[1], layer_norm_eps, 2)
        self.activation = _activation(activation, api)

    def forward(self, src, src_mask=None, cache=None):
        src_mask = _convert_attention_mask(src_mask, _dtype_name(src))
        residual = src
        if self.normalize_before:
            src = self.norm1(src)
        if cache is None:
            src = self.self_attn(src, src, src, src_mask)
        else:
            src, cache = self.self_attn(src, src, src, src_mask, cache)
        src = residual + self.dropout1(src)
        if not self.normalize_before:
            src = self.norm1(src)
        residual = src
        if self.normalize_before:
            src = self.norm2(src)
        src = self.linear2(self.dropout(self.activation(self.linear1(src))))
        src = residual + self.dropout2(src)
        if not self.normalize_before:
            src = self.norm2(src)
        return src if cache is None else (src, cache)

    def gen_cache(self, src):
        """An empty incremental cache for self-attention."""
        return self.self_attn.gen_cache(src, type=MultiHeadAttention.Cache)


def _clones(layer, num_layers, api):
    if not isinstance(num_layers, int) or num_layers <= 0:
        raise ValueError(f"[oar.nn.{api}] num_layers must be a positive int, got {num_layers!r}")
    # like Paddle, the copies are freshly initialised layers built from the first one's arguments
    config = getattr(layer, "_config", None)
    if config is None:
        raise TypeError(f"[oar.nn.{api}] the layer to repeat must be a TransformerEncoderLayer / "
                        f"TransformerDecoderLayer, got {type(layer).__name__}")
    return LayerList([layer] + [type(layer)(**config) for _ in range(num_layers - 1)])


class TransformerEncoder(Layer):
    """num_layers encoder layers (the first is encoder_layer, the others new layers with its
    configuration), then an optional final norm.

    >>> import oar
    >>> enc = oar.nn.TransformerEncoder(oar.nn.TransformerEncoderLayer(8, 2, 16), 2)
    >>> enc(oar.rand([2, 4, 8])).shape
    [2, 4, 8]
    """

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers, "TransformerEncoder")
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, src_mask=None, cache=None):
        src_mask = _convert_attention_mask(src_mask, _dtype_name(src))
        out, new_caches = src, []
        for i, layer in enumerate(self.layers):
            if cache is None:
                out = layer(out, src_mask=src_mask)
            else:
                out, c = layer(out, src_mask=src_mask, cache=cache[i])
                new_caches.append(c)
        if self.norm is not None:
            out = self.norm(out)
        return out if cache is None else (out, new_caches)

    def gen_cache(self, src):
        """One incremental cache per layer."""
        return [layer.gen_cache(src) for layer in self.layers]


class TransformerDecoderLayer(Layer):
    """Self-attention, cross-attention over memory, then a feed-forward block, each with a
    residual connection and LayerNorm.

    forward(tgt, memory, tgt_mask=None, memory_mask=None, cache=None).

    >>> import oar
    >>> layer = oar.nn.TransformerDecoderLayer(8, 2, 16)
    >>> layer(oar.rand([2, 3, 8]), oar.rand([2, 5, 8])).shape
    [2, 3, 8]
    """

    def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1, activation="relu", attn_dropout=None,
                 act_dropout=None, normalize_before=False, weight_attr=None, bias_attr=None, layer_norm_eps=1e-5):
        self._config = dict(locals())
        self._config.pop("self")
        self._config.pop("__class__", None)
        super().__init__()
        api = "TransformerDecoderLayer"
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        w = _attr_list(weight_attr, 3, api, "weight_attr")
        b = _attr_list(bias_attr, 3, api, "bias_attr")
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout, weight_attr=w[0], bias_attr=b[0])
        self.cross_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout, weight_attr=w[1],
                                             bias_attr=b[1])
        _ffn_parts(self, d_model, dim_feedforward, dropout, act_dropout, w[2], b[2], layer_norm_eps, 3)
        self.activation = _activation(activation, api)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        tgt_mask = _convert_attention_mask(tgt_mask, _dtype_name(tgt))
        memory_mask = _convert_attention_mask(memory_mask, _dtype_name(tgt))
        residual = tgt
        if self.normalize_before:
            tgt = self.norm1(tgt)
        if cache is None:
            tgt = self.self_attn(tgt, tgt, tgt, tgt_mask, None)
        else:
            tgt, incremental_cache = self.self_attn(tgt, tgt, tgt, tgt_mask, cache[0])
        tgt = residual + self.dropout1(tgt)
        if not self.normalize_before:
            tgt = self.norm1(tgt)
        residual = tgt
        if self.normalize_before:
            tgt = self.norm2(tgt)
        if cache is None:
            tgt = self.cross_attn(tgt, memory, memory, memory_mask, None)
        else:
            tgt, static_cache = self.cross_attn(tgt, memory, memory, memory_mask, cache[1])
        tgt = residual + self.dropout2(tgt)
        if not self.normalize_before:
            tgt = self.norm2(tgt)
        residual = tgt
        if self.normalize_before:
            tgt = self.norm3(tgt)
        tgt = self.linear2(self.dropout(self.activation(self.linear1(tgt))))
        tgt = residual + self.dropout3(tgt)
        if not self.normalize_before:
            tgt = self.norm3(tgt)
        return tgt if cache is None else (tgt, (incremental_cache, static_cache))

    def gen_cache(self, memory):
        """(incremental self-attention cache, static cross-attention cache of memory)."""
        return (self.self_attn.gen_cache(memory, type=MultiHeadAttention.Cache),
                self.cross_attn.gen_cache(memory, memory, type=MultiHeadAttention.StaticCache))


class TransformerDecoder(Layer):
    """num_layers decoder layers, then an optional final norm.

    >>> import oar
    >>> dec = oar.nn.TransformerDecoder(oar.nn.TransformerDecoderLayer(8, 2, 16), 2)
    >>> dec(oar.rand([2, 3, 8]), oar.rand([2, 5, 8])).shape
    [2, 3, 8]
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers, "TransformerDecoder")
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        tgt_mask = _convert_attention_mask(tgt_mask, _dtype_name(tgt))
        memory_mask = _convert_attention_mask(memory_mask, _dtype_name(tgt))
        out, new_caches = tgt, []
        for i, layer in enumerate(self.layers):
            if cache is None:
                out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)
            else:
                out, c = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, cache=cache[i])
                new_caches.append(c)
        if self.norm is not None:
            out = self.norm(out)
        return out if cache is None else (out, new_caches)

    def gen_cache(self, memory, do_zip=False):
        """Per-layer caches; with do_zip, a list of (incremental caches, static caches)."""
        caches = [layer.gen_cache(memory) for layer in self.layers]
        return list(zip(*caches)) if do_zip else caches


class Transformer(Layer):
    """Encoder-decoder Transformer (Vaswani et al.) with Paddle's arguments.

    forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None) -> [batch, tgt_len, d_model].

    >>> import oar
    >>> model = oar.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)
    >>> mask = model.generate_square_subsequent_mask(3)
    >>> model(oar.rand([2, 4, 8]), oar.rand([2, 3, 8]), tgt_mask=mask).shape
    [2, 3, 8]
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", attn_dropout=None, act_dropout=None, normalize_before=False,
                 weight_attr=None, bias_attr=None, custom_encoder=None, custom_decoder=None):
        super().__init__()
        if isinstance(weight_attr, (list, tuple)) and len(weight_attr) == 2:
            enc_w, dec_w = weight_attr[0], weight_attr[1]
        else:
            enc_w = dec_w = weight_attr
        if isinstance(bias_attr, (list, tuple)) and len(bias_attr) == 2:
            enc_b, dec_b = bias_attr[0], bias_attr[1]
        else:
            enc_b = dec_b = bias_attr
        common = dict(dropout=dropout, activation=activation, attn_dropout=attn_dropout, act_dropout=act_dropout,
                      normalize_before=normalize_before)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, weight_attr=enc_w, bias_attr=enc_b,
                                            **common)
            norm = _layer_norm(d_model, 1e-5) if normalize_before else None
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, weight_attr=dec_w, bias_attr=dec_b,
                                            **common)
            norm = _layer_norm(d_model, 1e-5) if normalize_before else None
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self.d_model, self.nhead = d_model, nhead

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None):
        src_mask = _convert_attention_mask(src_mask, _dtype_name(src))
        memory = self.encoder(src, src_mask=src_mask)
        tgt_mask = _convert_attention_mask(tgt_mask, _dtype_name(tgt))
        memory_mask = _convert_attention_mask(memory_mask, _dtype_name(memory))
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)

    @staticmethod
    def generate_square_subsequent_mask(length):
        """[length, length] additive mask: 0 on and below the diagonal, -inf above.

        >>> import oar
        >>> oar.nn.Transformer.generate_square_subsequent_mask(2).numpy().tolist()
        [[0.0, -inf], [0.0, 0.0]]
        """
        import oar

        if isinstance(length, _C.Tensor):
            length = int(length.item())
        if not isinstance(length, int) or length < 0:
            raise ValueError(f"[oar.nn.Transformer] length must be a non-negative int, got {length!r}")
        mask = np.triu(np.full((length, length), -np.inf), 1)
        return oar.to_tensor(mask.astype(oar.get_default_dtype()))
