"""An LSTM / GRU sequence classifier trained with SGD."""
import numpy as np
import paddle
import paddle.nn as nn

from _common import init_params, param_summary, show


class SeqModel(nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.lstm = nn.LSTM(8, 12, num_layers=2, direction="bidirect")
        self.gru = nn.GRU(24, 6)
        self.head = nn.Linear(6, 3)

    def forward(self, tokens):
        h = self.emb(tokens)
        h, (hn, cn) = self.lstm(h)
        h, g = self.gru(h)
        return self.head(h[:, -1]), hn, cn, g


rng = np.random.RandomState(0)
tokens = paddle.to_tensor(rng.randint(0, 20, size=(4, 7)).astype("int64"))
labels = paddle.to_tensor(rng.randint(0, 3, size=(4,)).astype("int64"))
model = SeqModel()
init_params(model, seed=11)
param_summary(model)
logits, hn, cn, g = model(tokens)
show("shapes", [str(list(t.shape)) for t in (logits, hn, cn, g)])
show("logits", logits, rtol=1e-4, atol=1e-6)
show("hn_sum", hn.sum(), rtol=1e-4)
opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=model.parameters())
losses = []
for _ in range(5):
    logits, *_ = model(tokens)
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    opt.step()
    opt.clear_grad()
    losses.append(float(loss))
show("losses", losses, rtol=1e-4)
cell = nn.GRUCell(3, 4)
init_params(cell, seed=2)
rnn = nn.RNN(cell, is_reverse=True)
y, state = rnn(paddle.to_tensor(rng.randn(2, 5, 3).astype("float32")))
show("rnn_gru_cell_out", y[:, 0], rtol=1e-4, atol=1e-6)
show("rnn_state", state, rtol=1e-4, atol=1e-6)
