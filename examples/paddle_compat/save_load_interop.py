"""paddle.save / paddle.load of model and optimizer state dicts, including files written by another run.

With PADDLE_COMPAT_SHARED set to a folder, the first run writes its checkpoint there and later runs
load that file instead, so a checkpoint written by one framework is read by the other.
"""
import os
import tempfile

import numpy as np
import paddle
import paddle.nn as nn

from _common import batches, init_params, show


def make():
    net = nn.Sequential(nn.Conv2D(1, 4, 3), nn.BatchNorm2D(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    init_params(net, seed=4)
    return net, paddle.optimizer.Adam(learning_rate=0.01, parameters=net.parameters())


def train(net, opt, seed, steps):
    losses = []
    for x, y in batches(seed, steps, (4, 1, 6, 6), 3):
        loss = nn.functional.cross_entropy(net(paddle.to_tensor(x)), paddle.to_tensor(y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


shared = os.environ.get("PADDLE_COMPAT_SHARED") or tempfile.mkdtemp()
params_path = os.path.join(shared, "save_load_interop.pdparams")
opt_path = os.path.join(shared, "save_load_interop.pdopt")
# Optimizer state is keyed by parameter names: a fresh name scope gives a new model the same names,
# as a new process would.
if not os.path.exists(params_path):
    with paddle.utils.unique_name.guard():
        net, opt = make()
        train(net, opt, 1, 3)
        paddle.save(net.state_dict(), params_path)
        paddle.save(opt.state_dict(), opt_path)
    paddle.save({"step": 3, "note": "three steps", "arr": np.arange(4, dtype="int32")},
                os.path.join(shared, "save_load_interop.pkl"))

state = paddle.load(params_path)
show("keys", sorted(state.keys()))
show("bn_mean", state["1._mean"], rtol=1e-6)
with paddle.utils.unique_name.guard():
    net, opt = make()
    missing, unexpected = net.set_state_dict(state)
    show("missing_unexpected", [len(missing), len(unexpected)])
    opt_state = paddle.load(opt_path)
    show("opt_state_entries", len(opt_state))
    opt.set_state_dict(opt_state)
    show("resumed_losses", train(net, opt, 2, 3), rtol=1e-4)
extra = paddle.load(os.path.join(shared, "save_load_interop.pkl"))
show("extra", [str(extra["step"]), extra["note"], str(np.asarray(extra["arr"]).tolist())])

with tempfile.TemporaryDirectory() as d:
    own = os.path.join(d, "own.pdparams")
    paddle.save(net.state_dict(), own)
    back = paddle.load(own)
    show("roundtrip_equal", all(np.array_equal(np.asarray(back[k]), v.numpy()) for k, v in net.state_dict().items()))
    t = paddle.to_tensor([[1.5, 2.5]], dtype="float64")
    paddle.save(t, os.path.join(d, "t.pdtensor"))
    t2 = paddle.load(os.path.join(d, "t.pdtensor"))
    show("tensor_roundtrip", [str(t2.dtype).split(".")[-1], str(t2.numpy().tolist())])
