"""Static-graph training: program_guard, static.data, static.nn.fc, Executor."""
import numpy as np
import paddle

from _common import show

paddle.enable_static()
rng = np.random.RandomState(0)
w1 = rng.uniform(-0.3, 0.3, (5, 8)).astype("float32")
w2 = rng.uniform(-0.3, 0.3, (8, 1)).astype("float32")
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [None, 5], "float32")
    y = paddle.static.data("y", [None, 1], "float32")
    h = paddle.static.nn.fc(x, 8, activation="relu",
                            weight_attr=paddle.ParamAttr(initializer=paddle.nn.initializer.Assign(w1)),
                            bias_attr=paddle.ParamAttr(initializer=paddle.nn.initializer.Constant(0.1)))
    pred = paddle.static.nn.fc(h, 1, weight_attr=paddle.ParamAttr(initializer=paddle.nn.initializer.Assign(w2)))
    loss = paddle.mean(paddle.square(pred - y))
    paddle.optimizer.SGD(learning_rate=0.05).minimize(loss)
show("x_shape", list(x.shape))
show("pred_shape", list(pred.shape))
exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(startup)
xs = rng.randn(16, 5).astype("float32")
ys = (xs @ rng.randn(5, 1)).astype("float32")
losses = []
for _ in range(8):
    (l,) = exe.run(main, feed={"x": xs, "y": ys}, fetch_list=[loss])
    losses.append(float(l))
show("losses", losses, rtol=1e-4)
(p, l) = exe.run(main, feed={"x": xs[:4], "y": ys[:4]}, fetch_list=[pred, loss])
show("pred_after_training", p, rtol=1e-4, atol=1e-6)
show("param_names", sorted(p.name for p in main.global_block().all_parameters()))
paddle.disable_static()
show("dynamic_again", paddle.in_dynamic_mode())
