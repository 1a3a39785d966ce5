"""Higher-order gradients with paddle.grad: a gradient penalty and second derivatives."""
import numpy as np
import paddle
import paddle.nn as nn

from _common import init_params, show

x = paddle.to_tensor([0.5, -1.0, 2.0], stop_gradient=False)
y = paddle.sin(x) * x ** 3
(dy,) = paddle.grad(y.sum(), x, create_graph=True)
(d2y,) = paddle.grad(dy.sum(), x, create_graph=True)
(d3y,) = paddle.grad(d2y.sum(), x)
show("dy", dy, rtol=1e-5)
show("d2y", d2y, rtol=1e-5)
show("d3y", d3y, rtol=1e-5)

# WGAN-GP style gradient penalty on a small critic.
critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
init_params(critic, seed=1)
opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=critic.parameters())
rng = np.random.RandomState(2)
penalties = []
for _ in range(4):
    inp = paddle.to_tensor(rng.randn(6, 4).astype("float32"), stop_gradient=False)
    score = critic(inp)
    (g,) = paddle.grad(score, inp, grad_outputs=paddle.ones_like(score), create_graph=True)
    gp = ((g.norm(2, axis=1) - 1.0) ** 2).mean()
    loss = score.mean() + 10.0 * gp
    loss.backward()
    opt.step()
    opt.clear_grad()
    penalties.append(float(gp))
show("penalties", penalties, rtol=1e-4)

a = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
b = paddle.to_tensor([0.5, -0.5], stop_gradient=False)
z = (paddle.matmul(a, b) ** 2).sum()
ga, gb = paddle.grad([z], [a, b], create_graph=True)
hb = paddle.grad(gb.sum(), a, retain_graph=True)[0]
show("ga", ga, rtol=1e-5)
show("gb", gb, rtol=1e-5)
show("d_gb_da", hb, rtol=1e-5)
(none_grad,) = paddle.grad(z, [paddle.to_tensor([1.0], stop_gradient=False)], allow_unused=True)
show("unused_is_none", none_grad is None)
