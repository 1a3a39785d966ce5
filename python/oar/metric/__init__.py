"""Evaluation metrics with Paddle's names (``paddle.metric``).

A metric is used in two steps, so that the part that needs tensors can run
next to the model and the bookkeeping runs on NumPy: ``compute(outputs,
labels)`` turns a batch into something small (for Accuracy, a 0/1 matrix of
hits), and ``update(*computed)`` adds it to running totals and returns the
batch value; ``accumulate()`` gives the value over everything seen since the
last ``reset()``.

>>> import numpy as np
>>> import oar
>>> import oar.metric
>>> m = oar.metric.Accuracy()
>>> pred = oar.to_tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
>>> label = oar.to_tensor([[1], [1], [1]])
>>> round(m.update(m.compute(pred, label)), 4)
0.6667
"""
from .metrics import Accuracy, Auc, Metric, Precision, Recall, accuracy

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy"]
