"""A Transformer encoder block (no dropout) with a padding mask, trained with AdamW."""
import numpy as np
import paddle
import paddle.nn as nn

from _common import init_params, param_summary, show

rng = np.random.RandomState(4)
encoder = nn.TransformerEncoder(
    nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0, normalize_before=True), 2)
init_params(encoder, seed=5)
param_summary(encoder)
x = paddle.to_tensor(rng.randn(3, 6, 16).astype("float32"))
mask = np.zeros((3, 1, 1, 6), "float32")
mask[1, ..., 4:] = -1e9
mask = paddle.to_tensor(mask)
y = encoder(x, src_mask=mask)
show("out_shape", list(y.shape))
show("out_row", y[1, 0, :6], rtol=1e-4, atol=1e-5)
mha = nn.MultiHeadAttention(16, 2)
init_params(mha, seed=6)
attn = mha(x, x, x)
show("mha_out", attn[0, 0, :6], rtol=1e-4, atol=1e-5)
opt = paddle.optimizer.AdamW(learning_rate=1e-2, parameters=encoder.parameters(), weight_decay=0.01)
target = paddle.to_tensor(rng.randn(3, 6, 16).astype("float32"))
losses = []
for _ in range(5):
    loss = nn.functional.mse_loss(encoder(x, src_mask=mask), target)
    loss.backward()
    opt.step()
    opt.clear_grad()
    losses.append(float(loss))
show("losses", losses, rtol=1e-4)
