"""to_static with tensor-dependent control flow (if / while / for over a tensor), checked against eager."""
import numpy as np
import paddle
import paddle.nn as nn

from _common import init_params, show


class Gated(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x, n):
        h = self.fc(x)
        if h.mean() > 0:
            h = h * 2.0
        else:
            h = h - 1.0
        i = paddle.zeros([1], dtype="int64")
        while i < n:
            h = paddle.tanh(h) + 0.1
            i += 1
        for _ in range(2):
            h = h + x
        return h


net = Gated()
init_params(net, seed=2)
rng = np.random.RandomState(0)
xs = [paddle.to_tensor(rng.randn(2, 3).astype("float32") + s) for s in (2.0, -2.0)]
n = paddle.to_tensor([3], dtype="int64")
eager = [net(x, n) for x in xs]
static = paddle.jit.to_static(net)
for k, x in enumerate(xs):
    out = static(x, n)
    show(f"branch{k}", out[0], rtol=1e-5, atol=1e-6)
    show(f"branch{k}_eq_eager", bool(np.allclose(out.numpy(), eager[k].numpy(), rtol=1e-5, atol=1e-6)))
out = static(xs[0], paddle.to_tensor([1], dtype="int64"))
show("loop_count_changed", bool(np.allclose(out.numpy(), net(xs[0], paddle.to_tensor([1], dtype="int64")).numpy(),
                                            rtol=1e-5, atol=1e-6)))
x = xs[0].clone()
x.stop_gradient = False
static(x, n).sum().backward()
show("grad_through_static", x.grad[0], rtol=1e-5, atol=1e-6)


@paddle.jit.to_static
def clipped_sum(t):
    s = paddle.zeros([])
    for v in t:
        s = s + paddle.where(v > 0, v, paddle.zeros_like(v)).sum()
    return s


show("function_to_static", clipped_sum(paddle.to_tensor([[1.0, -2.0], [3.0, 4.0]])))
