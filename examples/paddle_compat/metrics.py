"""paddle.metric: Accuracy (top-k), Precision, Recall, Auc and the functional accuracy."""
import numpy as np
import paddle

from _common import show

rng = np.random.RandomState(0)
acc = paddle.metric.Accuracy(topk=(1, 3))
show("acc_name", acc.name())
for _ in range(3):
    logits = paddle.to_tensor(rng.randn(10, 5).astype("float32"))
    label = paddle.to_tensor(rng.randint(0, 5, (10, 1)).astype("int64"))
    correct = acc.compute(logits, label)
    show("batch_acc", acc.update(correct), rtol=1e-6)
show("accumulate", acc.accumulate(), rtol=1e-6)
acc.reset()
show("after_reset", acc.accumulate())

preds = rng.rand(20).astype("float32")
labels = (rng.rand(20) > 0.5).astype("int64")
p, r = paddle.metric.Precision(), paddle.metric.Recall()
p.update(preds, labels)
r.update(preds, labels)
show("precision", p.accumulate(), rtol=1e-6)
show("recall", r.accumulate(), rtol=1e-6)
auc = paddle.metric.Auc(num_thresholds=255)
probs = np.stack([1 - preds, preds], axis=1)
auc.update(probs, labels.reshape(-1, 1))
show("auc", auc.accumulate(), rtol=1e-6)
x = paddle.to_tensor(rng.randn(6, 4).astype("float32"))
y = paddle.to_tensor(rng.randint(0, 4, (6, 1)).astype("int64"))
show("functional_acc_k1", paddle.metric.accuracy(x, y), rtol=1e-6)
show("functional_acc_k2", paddle.metric.accuracy(x, y, k=2), rtol=1e-6)
