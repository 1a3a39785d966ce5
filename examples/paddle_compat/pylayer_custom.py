"""A custom autograd function (PyLayer) with a hand-written backward, inside a small model."""
import numpy as np
import paddle
from paddle.autograd import PyLayer

from _common import show


class ClippedSquare(PyLayer):
    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        ctx.limit = limit
        return paddle.clip(x * x, max=limit)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensor()
        mask = (x * x < ctx.limit).astype(x.dtype)
        return grad * 2.0 * x * mask


class ScaledTanh(PyLayer):
    @staticmethod
    def forward(ctx, x, scale=2.0):
        y = paddle.tanh(x) * scale
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (ctx.scale - y * y / ctx.scale)


rng = np.random.RandomState(0)
x = paddle.to_tensor(rng.randn(3, 4).astype("float32"), stop_gradient=False)
y = ClippedSquare.apply(x, 1.5)
y.sum().backward()
show("forward", y, rtol=1e-5)
show("grad", x.grad, rtol=1e-5)

w = paddle.create_parameter([4, 2], "float32",
                            default_initializer=paddle.nn.initializer.Assign(rng.randn(4, 2).astype("float32")))
opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[w])
inp = paddle.to_tensor(rng.randn(5, 4).astype("float32"))
losses = []
for _ in range(4):
    out = ScaledTanh.apply(paddle.matmul(inp, w), scale=1.5)
    loss = (out ** 2).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    losses.append(float(loss))
show("losses", losses, rtol=1e-5)
show("w", w, rtol=1e-5)
