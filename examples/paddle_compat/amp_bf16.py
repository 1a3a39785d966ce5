"""Mixed precision on CPU: auto_cast to bfloat16 with a GradScaler, and O2 decoration."""
import numpy as np
import paddle
import paddle.nn as nn

from _common import init_params, show

rng = np.random.RandomState(0)
x = paddle.to_tensor(rng.randn(8, 16).astype("float32"))
y = paddle.to_tensor(rng.randint(0, 4, (8, 1)).astype("int64"))
net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.LayerNorm(32), nn.Linear(32, 4))
init_params(net, seed=1)
# Paddle's auto_cast has no effect on a CPU place; dtype lines are printed only where it casts.
with paddle.amp.auto_cast(level="O1", dtype="bfloat16"):
    effective = paddle.matmul(x, x.T).dtype == paddle.bfloat16
show("amp_effective", effective)
opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
scaler = paddle.amp.GradScaler(init_loss_scaling=1024.0)
losses = []
for _ in range(5):
    with paddle.amp.auto_cast(level="O1", dtype="bfloat16"):
        logits = net(x)
        loss = nn.functional.cross_entropy(logits, y)
    if effective:
        show("o1_dtypes", [str(logits.dtype).split(".")[-1], str(loss.dtype).split(".")[-1]])
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.step(opt)
    scaler.update()
    opt.clear_grad()
    losses.append(float(loss))
show("o1_losses", losses, rtol=2e-2)
if effective:
    show("scaler", [str(scaler.is_enable()), str(scaler.get_init_loss_scaling())])
show("master_w_dtype", str(net[0].weight.dtype).split(".")[-1])

net2 = nn.Sequential(nn.Linear(16, 8), nn.Linear(8, 4))
init_params(net2, seed=2)
opt2 = paddle.optimizer.AdamW(learning_rate=0.01, parameters=net2.parameters(), multi_precision=True)
net2, opt2 = paddle.amp.decorate(models=net2, optimizers=opt2, level="O2", dtype="bfloat16")
if effective:
    show("o2_w_dtype", str(net2[0].weight.dtype).split(".")[-1])
with paddle.amp.auto_cast(level="O2", dtype="bfloat16"):
    out = net2(x)
    loss = out.astype("float32").square().mean()
loss.backward()
opt2.step()
if effective:
    show("o2_out_dtype", str(out.dtype).split(".")[-1])
show("o2_loss", float(loss), rtol=2e-2)
with paddle.amp.auto_cast(enable=False):
    show("disabled_dtype", str(net(x).dtype).split(".")[-1])
