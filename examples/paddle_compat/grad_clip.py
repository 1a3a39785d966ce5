"""Gradient clipping: by global norm, by norm and by value, set on the optimizer."""
import numpy as np
import paddle
import paddle.nn as nn

from _common import init_params, show

rng = np.random.RandomState(0)
x = paddle.to_tensor(rng.randn(8, 5).astype("float32") * 5)
t = paddle.to_tensor(rng.randn(8, 3).astype("float32") * 5)
clips = {
    "global_norm": nn.ClipGradByGlobalNorm(clip_norm=1.0),
    "norm": nn.ClipGradByNorm(clip_norm=0.5),
    "value": nn.ClipGradByValue(max=0.1, min=-0.2),
}
for name, clip in clips.items():
    net = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 3))
    init_params(net, seed=1)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters(), grad_clip=clip)
    losses = []
    for _ in range(3):
        loss = nn.functional.mse_loss(net(x), t)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    show(f"{name}_losses", losses, rtol=1e-5)
    show(f"{name}_w0", net[0].weight[0], rtol=1e-5, atol=1e-7)

# need_clip=False in a ParamAttr exempts a parameter from clipping.
lin = nn.Linear(3, 2, bias_attr=paddle.ParamAttr(need_clip=False))
init_params(lin, seed=2)
opt = paddle.optimizer.SGD(learning_rate=1.0, parameters=lin.parameters(), grad_clip=nn.ClipGradByGlobalNorm(0.01))
(lin(paddle.ones([4, 3])) * 10).sum().backward()
opt.step()
show("need_clip_bias", lin.bias, rtol=1e-5)
show("need_clip_weight", lin.weight, rtol=1e-5)
(lin(paddle.ones([4, 3])) * 10).sum().backward()
total = paddle.nn.utils.clip_grad_norm_(lin.parameters(), max_norm=1.0)
show("clip_grad_norm_total", total, rtol=1e-5)
show("clipped_grad", lin.weight.grad, rtol=1e-5)
