"""An MNIST-like MLP trained with Adam on seeded synthetic data."""
import paddle
import paddle.nn as nn
import paddle.nn.functional as F

from _common import batches, init_params, param_summary, show


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 32)
        self.out = nn.Linear(32, 10)

    def forward(self, x):
        x = paddle.flatten(x, start_axis=1)
        x = F.relu(self.fc1(x))
        x = F.gelu(self.fc2(x))
        return self.out(x)


model = MLP()
init_params(model, seed=0)
param_summary(model)
opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters(), beta1=0.9, beta2=0.99)
loss_fn = nn.CrossEntropyLoss()
losses = []
for x, y in batches(1, 8, (32, 1, 28, 28), 10):
    logits = model(paddle.to_tensor(x))
    loss = loss_fn(logits, paddle.to_tensor(y))
    loss.backward()
    opt.step()
    opt.clear_grad()
    losses.append(float(loss))
show("losses", losses, rtol=1e-4)
model.eval()
x, y = batches(99, 1, (16, 1, 28, 28), 10)[0]
with paddle.no_grad():
    logits = model(paddle.to_tensor(x))
probs = F.softmax(logits, axis=-1)
show("probs_row0", probs[0], rtol=1e-4)
show("pred", paddle.argmax(logits, axis=1))
show("acc", paddle.metric.accuracy(probs, paddle.to_tensor(y)))
show("fc1_w_sum", model.fc1.weight.sum(), rtol=1e-3)
show("opt_state_entries", len([k for k in opt.state_dict() if "moment" in k]))
