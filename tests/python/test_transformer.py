"""MultiHeadAttention and Transformer layers against NumPy references built from
the layers' own parameters; masks, caches (incremental decoding equals full
decoding), pre/post norm, gradients against central differences, errors."""
import numpy as np
import pytest

import oar
import oar.nn as nn

RNG = np.random.default_rng(11)


def P(layer):
    return {k: v.numpy().astype(np.float64) for k, v in layer.state_dict().items()}


def np_linear(x, p, prefix):
    return x @ p[prefix + ".weight"] + p[prefix + ".bias"]


def np_softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_mha(p, prefix, q, k, v, heads, mask=None):
    def split(x):
        b, s, e = x.shape
        return x.reshape(b, s, heads, e // heads).transpose(0, 2, 1, 3)

    qh = split(np_linear(q, p, prefix + "q_proj"))
    kh = split(np_linear(k, p, prefix + "k_proj"))
    vh = split(np_linear(v, p, prefix + "v_proj"))
    s = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(qh.shape[-1])
    if mask is not None:
        s = s + mask
    w = np_softmax(s)
    o = (w @ vh).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], -1)
    return np_linear(o, p, prefix + "out_proj"), w


def np_ln(x, p, prefix, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * p[prefix + ".weight"] + p[prefix + ".bias"]


def np_encoder_layer(p, x, heads, mask=None, pre=False, pfx=""):
    r = x
    h = np_ln(x, p, pfx + "norm1") if pre else x
    h = r + np_mha(p, pfx + "self_attn.", h, h, h, heads, mask)[0]
    if not pre:
        h = np_ln(h, p, pfx + "norm1")
    r = h
    if pre:
        h = np_ln(h, p, pfx + "norm2")
    h = r + np_linear(np.maximum(np_linear(h, p, pfx + "linear1"), 0), p, pfx + "linear2")
    return h if pre else np_ln(h, p, pfx + "norm2")


def np_decoder_layer(p, x, mem, heads, tmask=None, mmask=None, pfx=""):
    h = np_ln(x + np_mha(p, pfx + "self_attn.", x, x, x, heads, tmask)[0], p, pfx + "norm1")
    h = np_ln(h + np_mha(p, pfx + "cross_attn.", h, mem, mem, heads, mmask)[0], p, pfx + "norm2")
    f = np_linear(np.maximum(np_linear(h, p, pfx + "linear1"), 0), p, pfx + "linear2")
    return np_ln(h + f, p, pfx + "norm3")


def test_mha_forward_masks_weights():
    mha = nn.MultiHeadAttention(8, 2, kdim=6, vdim=4, need_weights=True).to(dtype="float64")
    p = P(mha)
    q = RNG.standard_normal((2, 3, 8))
    k = RNG.standard_normal((2, 5, 6))
    v = RNG.standard_normal((2, 5, 4))
    bmask = RNG.random((2, 1, 3, 5)) > 0.4
    bmask[..., 0] = True
    T = oar.to_tensor
    out, w = mha(T(q), T(k), T(v), attn_mask=T(bmask))
    ref, rw = np_mha(p, "", q, k, v, 2, (bmask.astype(np.float64) - 1) * 1e9)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), rw, rtol=1e-10, atol=1e-12)
    # an int mask behaves like the bool mask, a float mask is added
    out_i, _ = mha(T(q), T(k), T(v), attn_mask=T(bmask.astype("int32")))
    np.testing.assert_allclose(out_i.numpy(), ref, rtol=1e-10, atol=1e-12)
    fmask = RNG.standard_normal((3, 5))
    out_f, _ = mha(T(q), T(k), T(v), attn_mask=T(fmask))
    np.testing.assert_allclose(out_f.numpy(), np_mha(p, "", q, k, v, 2, fmask)[0], rtol=1e-10)
    assert [n for n, _ in mha.named_parameters()][:2] == ["q_proj.weight", "q_proj.bias"]
    assert mha.k_proj.weight.shape == [6, 8] and mha.v_proj.weight.shape == [4, 8]


def test_mha_float32_and_grad():
    mha = nn.MultiHeadAttention(4, 2)
    x = RNG.standard_normal((1, 3, 4)).astype("float32")
    ref = np_mha(P(mha), "", x.astype(np.float64), x, x, 2)[0]
    np.testing.assert_allclose(mha(oar.to_tensor(x)).numpy(), ref, rtol=1e-5, atol=1e-6)
    mha.to(dtype="float64")
    p = P(mha)
    x = RNG.standard_normal((1, 3, 4))
    mask = np.triu(np.full((3, 3), -1e9), 1)
    w = RNG.standard_normal((1, 3, 4))
    xt = oar.to_tensor(x, stop_gradient=False)
    (mha(xt, attn_mask=oar.to_tensor(mask)) * oar.to_tensor(w)).sum().backward()
    num = np.zeros_like(x)
    eps = 1e-6
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        diff = np_mha(p, "", xp, xp, xp, 2, mask)[0] - np_mha(p, "", xm, xm, xm, 2, mask)[0]
        num[idx] = (diff * w).sum() / (2 * eps)
    np.testing.assert_allclose(xt.grad.numpy(), num, rtol=1e-5, atol=1e-8)
    assert mha.q_proj.weight.grad is not None


def test_mha_cache_incremental_equals_full():
    mha = nn.MultiHeadAttention(4, 2).to(dtype="float64")
    x = oar.to_tensor(RNG.standard_normal((2, 4, 4)))
    causal = nn.Transformer.generate_square_subsequent_mask(4).astype("float64")
    full = mha(x, attn_mask=causal).numpy()
    cache = mha.gen_cache(x)
    assert cache.k.shape == [2, 2, 0, 2]
    steps = []
    for t in range(4):
        xt = x[:, t:t + 1]
        out, cache = mha(xt, xt, xt, None, cache)
        steps.append(out.numpy())
    np.testing.assert_allclose(np.concatenate(steps, 1), full, rtol=1e-10, atol=1e-12)
    assert cache.k.shape == [2, 2, 4, 2]
    mem = oar.to_tensor(RNG.standard_normal((2, 5, 4)))
    static = mha.gen_cache(mem, mem, type=nn.MultiHeadAttention.StaticCache)
    out, _ = mha(x, mem, mem, None, static)
    np.testing.assert_allclose(out.numpy(), mha(x, mem, mem).numpy(), rtol=1e-12)


@pytest.mark.parametrize("pre", [False, True])
def test_encoder_layer_and_encoder(pre):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, normalize_before=pre).to(dtype="float64")
    x = RNG.standard_normal((2, 4, 8))
    mask = RNG.random((2, 1, 1, 4)) > 0.3
    mask[..., 0] = True
    out = layer(oar.to_tensor(x), oar.to_tensor(mask))
    addm = (mask.astype(np.float64) - 1) * 1e9
    np.testing.assert_allclose(out.numpy(), np_encoder_layer(P(layer), x, 2, addm, pre), rtol=1e-9, atol=1e-10)
    enc = nn.TransformerEncoder(layer, 3, norm=None).to(dtype="float64")
    assert enc.layers[0] is layer and len(enc.layers) == 3
    assert not np.allclose(enc.layers[1].linear1.weight.numpy(), layer.linear1.weight.numpy())
    p = P(enc)
    ref = x
    for i in range(3):
        ref = np_encoder_layer(p, ref, 2, addm, pre, pfx=f"layers.{i}.")
    np.testing.assert_allclose(enc(oar.to_tensor(x), oar.to_tensor(mask)).numpy(), ref, rtol=1e-9, atol=1e-10)


def test_decoder_layer_cache_and_transformer():
    dec_layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0).to(dtype="float64")
    tgt = RNG.standard_normal((2, 3, 8))
    mem = RNG.standard_normal((2, 5, 8))
    causal = np.triu(np.full((3, 3), -np.inf), 1)
    T = oar.to_tensor
    out = dec_layer(T(tgt), T(mem), T(causal))
    ref = np_decoder_layer(P(dec_layer), tgt, mem, 2, causal)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-9, atol=1e-10)
    # step-by-step decoding with caches equals the masked full pass
    dec = nn.TransformerDecoder(dec_layer, 2).to(dtype="float64")
    full = dec(T(tgt), T(mem), tgt_mask=T(causal)).numpy()
    cache = dec.gen_cache(T(mem))
    steps = []
    for t in range(3):
        o, cache = dec(T(tgt[:, t:t + 1]), T(mem), None, None, cache)
        steps.append(o.numpy())
    np.testing.assert_allclose(np.concatenate(steps, 1), full, rtol=1e-9, atol=1e-10)

    model = nn.Transformer(8, 2, 2, 2, 16, dropout=0.0).to(dtype="float64")
    src = RNG.standard_normal((2, 5, 8))
    mask = nn.Transformer.generate_square_subsequent_mask(3).astype("float64")
    out = model(T(src), T(tgt), tgt_mask=mask)
    p = P(model)
    m = src
    for i in range(2):
        m = np_encoder_layer(p, m, 2, pfx=f"encoder.layers.{i}.")
    y = tgt
    for i in range(2):
        y = np_decoder_layer(p, y, m, 2, causal, pfx=f"decoder.layers.{i}.")
    np.testing.assert_allclose(out.numpy(), y, rtol=1e-9, atol=1e-10)
    # pre-norm models end with a final LayerNorm on both stacks
    pre = nn.Transformer(8, 2, 1, 1, 16, normalize_before=True)
    assert "encoder.norm.weight" in pre.state_dict() and "decoder.norm.bias" in pre.state_dict()
    assert pre(T(src.astype("float32")), T(tgt.astype("float32"))).shape == [2, 3, 8]


def test_square_mask_and_dropout_modes():
    m = nn.Transformer.generate_square_subsequent_mask(4).numpy()
    np.testing.assert_array_equal(np.isinf(m), np.triu(np.ones((4, 4), bool), 1))
    assert (m[np.tril_indices(4)] == 0).all()
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = oar.to_tensor(RNG.standard_normal((2, 4, 8)).astype("float32"))
    layer.eval()
    np.testing.assert_allclose(layer(x).numpy(), layer(x).numpy())
    layer.train()
    assert not np.allclose(layer(x).numpy(), layer(x).numpy())
    gelu = nn.TransformerEncoderLayer(8, 2, 16, activation="gelu")
    assert gelu(x).shape == [2, 4, 8]


def test_errors():
    with pytest.raises(ValueError, match=r"^\[oar.nn.MultiHeadAttention\]"):
        nn.MultiHeadAttention(10, 3)
    mha = nn.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"^\[oar.nn.MultiHeadAttention\]"):
        mha(oar.ones([2, 3, 6]))
    with pytest.raises(TypeError, match=r"^\[oar.nn.MultiHeadAttention\]"):
        mha([1.0])
    with pytest.raises(ValueError, match=r"^\[oar.nn.TransformerEncoderLayer\]"):
        nn.TransformerEncoderLayer(8, 2, 16, activation="nope")
    with pytest.raises(ValueError, match=r"^\[oar.nn.TransformerEncoder\]"):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 0)
    with pytest.raises(ValueError, match=r"^\[oar.nn.Transformer\]"):
        nn.Transformer.generate_square_subsequent_mask(-1)
