"""The nn.Layer API: containers, buffers, hooks, state dicts, apply, dtype casts, train/eval."""
import numpy as np
import paddle
import paddle.nn as nn

from _common import init_params, show


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = nn.LayerList([nn.Linear(4, 4) for _ in range(2)])
        self.heads = nn.LayerDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 3)})
        self.scales = nn.ParameterList([paddle.create_parameter([1], "float32") for _ in range(2)])
        self.register_buffer("step", paddle.zeros([1]))
        self.register_buffer("tmp", paddle.ones([2]), persistable=False)
        self.drop = nn.Dropout(0.5)

    def forward(self, x, head="a"):
        for layer, s in zip(self.layers, self.scales):
            x = nn.functional.relu(layer(x)) * s
        self.step += 1
        return self.heads[head](self.drop(x))


net = Block()
init_params(net, seed=0)
show("state_dict_keys", list(net.state_dict().keys()))
show("named_sublayers", [n for n, _ in net.named_sublayers()])
show("buffers", [n for n, _ in net.named_buffers()])
show("num_params", sum(int(np.prod(p.shape)) for p in net.parameters()))
calls = []
pre = net.register_forward_pre_hook(lambda layer, inputs: calls.append(("pre", list(inputs[0].shape))))
post = net.layers[0].register_forward_post_hook(lambda layer, inputs, out: out * 2)
x = paddle.to_tensor(np.random.RandomState(1).randn(3, 4).astype("float32"))
net.eval()
y = net(x, head="b")
show("eval_out", y[0], rtol=1e-5, atol=1e-7)
show("hook_calls", [str(c) for c in calls])
pre.remove()
post.remove()
show("eval_without_hook", net(x)[0], rtol=1e-5, atol=1e-7)
show("step_buffer", net.step)
show("training_flags", [net.training, net.drop.training])
net.train()
show("train_flags", [net.training, net.heads["a"].training])
names = []
net.apply(lambda m: names.append(type(m).__name__))
show("apply_order", names)
net64 = Block()
net64.to(dtype="float64")
show("to_float64", [str(p.dtype).split(".")[-1] for p in net64.parameters()][:2])
net.clear_gradients()
sd = net.state_dict()
sd["layers.0.bias"] = paddle.full([4], 0.5)
net.set_state_dict(sd)
show("set_state_dict", net.layers[0].bias)
seq = nn.Sequential(("first", nn.Linear(2, 2)), ("act", nn.Tanh()))
show("sequential_named", [n for n, _ in seq.named_children()])
show("sublayer_full_names_unique", len({l.full_name() for l in net.sublayers()}) == len(net.sublayers()))
show("extra_repr", str(nn.Linear(2, 3)))
