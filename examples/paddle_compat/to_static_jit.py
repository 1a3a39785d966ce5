"""Training a to_static model, then paddle.jit.save / paddle.jit.load for inference."""
import os
import tempfile

import numpy as np
import paddle
import paddle.nn as nn
from paddle.static import InputSpec

from _common import init_params, show


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 2)

    def forward(self, x):
        h = nn.functional.silu(self.fc1(x))
        return self.fc2(h) + x[:, :2]


net = Net()
init_params(net, seed=8)
static_net = paddle.jit.to_static(net, input_spec=[InputSpec([None, 6], "float32", name="x")], full_graph=True)
opt = paddle.optimizer.Adam(learning_rate=0.02, parameters=net.parameters())
rng = np.random.RandomState(3)
x = paddle.to_tensor(rng.randn(10, 6).astype("float32"))
t = paddle.to_tensor(rng.randn(10, 2).astype("float32"))
losses = []
for _ in range(6):
    loss = nn.functional.smooth_l1_loss(static_net(x), t)
    loss.backward()
    opt.step()
    opt.clear_grad()
    losses.append(float(loss))
show("losses", losses, rtol=1e-4)
static_net.eval()
ref = static_net(x[:3])
show("eval", ref, rtol=1e-4, atol=1e-6)
with tempfile.TemporaryDirectory() as d:
    prefix = os.path.join(d, "net")
    paddle.jit.save(static_net, prefix)
    loaded = paddle.jit.load(prefix)
    loaded.eval()
    out = loaded(x[:3])
    show("loaded_eq_eager", bool(np.allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)))
    show("loaded_batch7_shape", list(loaded(x[:7]).shape))
