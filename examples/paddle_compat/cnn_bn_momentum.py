"""A small CNN with BatchNorm and Dropout(p=0) trained with Momentum, weight decay and an LR schedule."""
import paddle
import paddle.nn as nn

from _common import batches, init_params, param_summary, show

net = nn.Sequential(
    nn.Conv2D(3, 8, 3, padding=1), nn.BatchNorm2D(8), nn.ReLU(),
    nn.MaxPool2D(2),
    nn.Conv2D(8, 16, 3, stride=2, padding=1, bias_attr=False), nn.BatchNorm2D(16), nn.ReLU(),
    nn.AdaptiveAvgPool2D(1), nn.Flatten(), nn.Dropout(p=0.0),
    nn.Linear(16, 5),
)
init_params(net, seed=3)
param_summary(net)
show("buffers", sorted(k for k in net.state_dict().keys() if "_mean" in k or "_variance" in k))
sched = paddle.optimizer.lr.PiecewiseDecay(boundaries=[3, 6], values=[0.1, 0.05, 0.01])
opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=0.9, parameters=net.parameters(),
                                weight_decay=paddle.regularizer.L2Decay(1e-3), use_nesterov=True)
losses, lrs = [], []
net.train()
for x, y in batches(5, 8, (8, 3, 16, 16), 5):
    loss = nn.functional.cross_entropy(net(paddle.to_tensor(x)), paddle.to_tensor(y))
    loss.backward()
    opt.step()
    opt.clear_grad()
    lrs.append(opt.get_lr())
    sched.step()
    losses.append(float(loss))
show("losses", losses, rtol=1e-4)
show("lrs", lrs)
show("bn1_running_mean", net[1]._mean, rtol=1e-4, atol=1e-6)
show("bn1_running_var", net[1]._variance, rtol=1e-4)
net.eval()
x = batches(7, 1, (2, 3, 16, 16), 5)[0][0]
with paddle.no_grad():
    out = net(paddle.to_tensor(x))
show("eval_out", out, rtol=1e-4, atol=1e-6)
show("eval_shape", list(out.shape))
