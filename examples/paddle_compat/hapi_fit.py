"""The high-level API: Model.prepare / fit / evaluate / predict over a DataLoader."""
import numpy as np
import paddle
import paddle.nn as nn
from paddle.io import DataLoader, Dataset

from _common import init_params, show


class Blobs(Dataset):
    def __init__(self, n, seed):
        rng = np.random.RandomState(seed)
        self.y = rng.randint(0, 3, size=n).astype("int64")
        centers = np.array([[2.0, 0.0], [-2.0, 1.0], [0.0, -2.0]], "float32")
        self.x = (centers[self.y] + 0.7 * rng.randn(n, 2)).astype("float32")

    def __getitem__(self, i):
        return self.x[i], self.y[i:i + 1]

    def __len__(self):
        return len(self.y)


class LossLog(paddle.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_batch_end(self, step, logs=None):
        loss = logs["loss"]
        self.losses.append(float(loss[0] if isinstance(loss, (list, tuple)) else loss))


net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))
init_params(net, seed=0)
model = paddle.Model(net)
model.prepare(paddle.optimizer.Adam(learning_rate=0.05, parameters=net.parameters()),
              nn.CrossEntropyLoss(), paddle.metric.Accuracy())
train = DataLoader(Blobs(64, 1), batch_size=16, shuffle=False)
log = LossLog()
model.fit(train, epochs=3, verbose=0, callbacks=[log])
show("batch_losses", log.losses, rtol=1e-4)
show("num_batches", len(log.losses))
result = model.evaluate(Blobs(30, 2), batch_size=10, verbose=0)
show("eval_keys", sorted(result.keys()))
show("eval_loss", np.asarray(result["loss"]).reshape(-1)[0], rtol=1e-4)
show("eval_acc", result["acc"], rtol=1e-6)
pred = model.predict(Blobs(5, 3), batch_size=5, verbose=0, stack_outputs=True)
show("pred_len", len(pred))
show("pred_shape", list(pred[0].shape))
show("pred", pred[0][:2], rtol=1e-4, atol=1e-5)
