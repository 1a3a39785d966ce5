"""Metric base class, Accuracy, Precision, Recall, Auc and the functional accuracy."""
import abc
import numbers

import numpy as np

from .. import _C

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy"]


def _to_numpy(x, api):
    if isinstance(x, _C.Tensor):
        return x.numpy()
    if isinstance(x, (np.ndarray, np.generic, numbers.Number, list, tuple)):
        return np.asarray(x)
    raise TypeError(f"[{api}] expected a Tensor or an array, got {type(x).__name__}")


def _to_tensor(x, api):
    if isinstance(x, _C.Tensor):
        return x
    from ..creation import to_tensor
    return to_tensor(_to_numpy(x, api))


class Metric(abc.ABC):
    """Base class of metrics: subclasses define ``reset``, ``update``,
    ``accumulate`` and ``name``, and may override ``compute`` (which runs on
    the model's outputs and labels, by default returning them unchanged).

    >>> import oar.metric
    >>> class Mean(oar.metric.Metric):
    ...     def __init__(self): self.reset()
    ...     def reset(self): self.total, self.count = 0.0, 0
    ...     def update(self, x): self.total += float(x.sum()); self.count += x.size
    ...     def accumulate(self): return self.total / max(self.count, 1)
    ...     def name(self): return 'mean'
    >>> import numpy as np
    >>> m = Mean(); m.update(np.array([1.0, 2.0])); m.update(np.array([6.0])); m.accumulate()
    3.0
    """

    def __init__(self):
        pass

    @abc.abstractmethod
    def reset(self):
        """Clears the running state."""

    @abc.abstractmethod
    def update(self, *args):
        """Adds one batch (the outputs of ``compute``) to the running state."""

    @abc.abstractmethod
    def accumulate(self):
        """The metric over everything seen since the last ``reset``."""

    @abc.abstractmethod
    def name(self):
        """The metric's name (a str, or a list of str for several values)."""

    def compute(self, *args):
        """Preprocesses a batch of (outputs..., labels...); the result is passed to ``update``."""
        return args


class Accuracy(Metric):
    """Top-k classification accuracy (``paddle.metric.Accuracy``).

    ``compute(pred, label)`` takes scores ``[N, C]`` and labels ``[N]``,
    ``[N, 1]`` or one-hot ``[N, C]`` and returns a float32 ``[N, maxk]``
    matrix whose row i holds 1 where the i-th ranked class is the label.
    ``update`` returns the batch accuracy (a float, or a list for several
    ``topk``). Names are ``acc`` or ``acc_top1, acc_top5, ...``.

    >>> import oar
    >>> import oar.metric
    >>> m = oar.metric.Accuracy(topk=(1, 2))
    >>> pred = oar.to_tensor([[0.1, 0.5, 0.4], [0.7, 0.2, 0.1]])
    >>> m.update(m.compute(pred, oar.to_tensor([2, 0])))
    [0.5, 1.0]
    >>> m.name()
    ['acc_top1', 'acc_top2']
    """

    def __init__(self, topk=(1,), name=None, *args, **kwargs):
        super().__init__()
        topk = (topk,) if isinstance(topk, numbers.Integral) else tuple(topk)
        if not topk or any(isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1 for k in topk):
            raise ValueError(f"[oar.metric.Accuracy] topk must be positive integers, got {topk!r}")
        self.topk = tuple(int(k) for k in topk)
        self.maxk = max(self.topk)
        base = name or "acc"
        self._name = [f"{base}_top{k}" for k in self.topk] if self.maxk != 1 else [base]
        self.reset()

    def compute(self, pred, label, *args):
        pred = _to_tensor(pred, "oar.metric.Accuracy.compute")
        label = _to_tensor(label, "oar.metric.Accuracy.compute")
        if len(pred.shape) == 0 or pred.shape[-1] < self.maxk:
            raise ValueError(f"[oar.metric.Accuracy.compute] pred needs at least {self.maxk} classes in its last "
                             f"dimension for topk={self.topk}, got shape {list(pred.shape)}")
        from .. import argsort, argmax, reshape
        idx = argsort(pred, axis=-1, descending=True)[..., :self.maxk]
        if len(label.shape) == 1 or (len(label.shape) == 2 and label.shape[-1] == 1):
            label = reshape(label, [-1, 1])
        elif label.shape[-1] != 1:  # one-hot or soft labels
            label = argmax(label, axis=-1, keepdim=True)
        return _C.cast(idx == label.astype("int64"), _C.dtype.float32)

    def update(self, correct, *args):
        correct = _to_numpy(correct, "oar.metric.Accuracy.update")
        if correct.ndim == 0 or correct.shape[-1] < self.maxk:
            raise ValueError(f"[oar.metric.Accuracy.update] correct must have at least {self.maxk} columns "
                             f"(the output of compute), got shape {list(correct.shape)}")
        num_samples = int(np.prod(correct.shape[:-1]))
        accs = []
        for i, k in enumerate(self.topk):
            num_corrects = float(correct[..., :k].sum())
            accs.append(num_corrects / num_samples if num_samples else 0.0)
            self.total[i] += num_corrects
            self.count[i] += num_samples
        return accs[0] if len(self.topk) == 1 else accs

    def reset(self):
        self.total = [0.0] * len(self.topk)
        self.count = [0] * len(self.topk)

    def accumulate(self):
        res = [t / c if c > 0 else 0.0 for t, c in zip(self.total, self.count)]
        return res[0] if len(self.topk) == 1 else res

    def name(self):
        return self._name


def _binary(preds, labels, api):
    preds = _to_numpy(preds, api).reshape(-1)
    labels = _to_numpy(labels, api).reshape(-1)
    if preds.shape[0] != labels.shape[0]:
        raise ValueError(f"[{api}] preds and labels must hold the same number of samples, got {preds.shape[0]} "
                         f"and {labels.shape[0]}")
    return np.floor(preds.astype(np.float64) + 0.5).astype(np.int64), labels.astype(np.int64)


class Precision(Metric):
    """Binary precision tp / (tp + fp); predictions are probabilities of the
    positive class, rounded at 0.5.

    >>> import numpy as np
    >>> import oar.metric
    >>> m = oar.metric.Precision()
    >>> m.update(np.array([0.1, 0.6, 0.8, 0.9]), np.array([0, 1, 0, 1]))
    >>> m.accumulate()
    0.6666666666666666
    """

    def __init__(self, name="precision", *args, **kwargs):
        super().__init__()
        self._name = name
        self.reset()

    def update(self, preds, labels):
        preds, labels = _binary(preds, labels, "oar.metric.Precision.update")
        pos = preds == 1
        self.tp += int(np.sum(pos & (labels == 1)))
        self.fp += int(np.sum(pos & (labels != 1)))

    def reset(self):
        self.tp = 0
        self.fp = 0

    def accumulate(self):
        ap = self.tp + self.fp
        return float(self.tp) / ap if ap != 0 else 0.0

    def name(self):
        return self._name


class Recall(Metric):
    """Binary recall tp / (tp + fn); predictions are probabilities of the
    positive class, rounded at 0.5.

    >>> import numpy as np
    >>> import oar.metric
    >>> m = oar.metric.Recall()
    >>> m.update(np.array([0.1, 0.6, 0.8, 0.2]), np.array([1, 1, 0, 1]))
    >>> m.accumulate()
    0.3333333333333333
    """

    def __init__(self, name="recall", *args, **kwargs):
        super().__init__()
        self._name = name
        self.reset()

    def update(self, preds, labels):
        preds, labels = _binary(preds, labels, "oar.metric.Recall.update")
        lab = labels == 1
        self.tp += int(np.sum(lab & (preds == 1)))
        self.fn += int(np.sum(lab & (preds != 1)))

    def reset(self):
        self.tp = 0
        self.fn = 0

    def accumulate(self):
        recall = self.tp + self.fn
        return float(self.tp) / recall if recall != 0 else 0.0

    def name(self):
        return self._name


class Auc(Metric):
    """Area under the ROC curve, approximated on ``num_thresholds + 1`` score
    buckets (Paddle's algorithm): each sample goes to bucket
    ``int(score * num_thresholds)``, and the curve is integrated with the
    trapezoid rule from the highest bucket down.

    ``update(preds, labels)`` takes ``preds`` of shape ``[N, 2]`` (class
    probabilities; column 1 is the positive class) or ``[N]``/``[N, 1]``
    (the positive probability) and 0/1 labels.

    >>> import numpy as np
    >>> import oar.metric
    >>> m = oar.metric.Auc()
    >>> m.update(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1]))
    >>> m.accumulate()
    0.75
    """

    def __init__(self, curve="ROC", num_thresholds=4095, name="auc", *args, **kwargs):
        super().__init__()
        if curve != "ROC":
            raise NotImplementedError(f"[oar.metric.Auc] only curve='ROC' is supported, got {curve!r}")
        if isinstance(num_thresholds, bool) or not isinstance(num_thresholds, numbers.Integral) \
                or num_thresholds < 1:
            raise ValueError(f"[oar.metric.Auc] num_thresholds must be a positive integer, got {num_thresholds!r}")
        self._curve = curve
        self._num_thresholds = int(num_thresholds)
        self._name = name
        self.reset()

    def update(self, preds, labels):
        api = "oar.metric.Auc.update"
        preds = _to_numpy(preds, api).astype(np.float64)
        labels = _to_numpy(labels, api).reshape(-1)
        if preds.ndim == 2 and preds.shape[1] == 2:
            score = preds[:, 1]
        elif preds.ndim == 1 or (preds.ndim == 2 and preds.shape[1] == 1):
            score = preds.reshape(-1)
        else:
            raise ValueError(f"[{api}] preds must have shape [N, 2], [N, 1] or [N], got {list(preds.shape)}")
        if score.shape[0] != labels.shape[0]:
            raise ValueError(f"[{api}] preds and labels must hold the same number of samples, got "
                             f"{score.shape[0]} and {labels.shape[0]}")
        if score.size and not (np.all(score >= 0.0) and np.all(score <= 1.0)):
            raise ValueError(f"[{api}] scores must be probabilities in [0, 1]")
        bins = (score * self._num_thresholds).astype(np.int64)
        pos = labels.astype(bool)
        n = self._num_thresholds + 1
        self._stat_pos += np.bincount(bins[pos], minlength=n)[:n]
        self._stat_neg += np.bincount(bins[~pos], minlength=n)[:n]

    def reset(self):
        self._stat_pos = np.zeros(self._num_thresholds + 1, dtype=np.float64)
        self._stat_neg = np.zeros(self._num_thresholds + 1, dtype=np.float64)

    def accumulate(self):
        # Walk buckets from the highest score down: cumulative positives are
        # the true-positive counts, cumulative negatives the false positives.
        tp = np.cumsum(self._stat_pos[::-1])
        fp = np.cumsum(self._stat_neg[::-1])
        tot_pos, tot_neg = (tp[-1], fp[-1]) if tp.size else (0.0, 0.0)
        if tot_pos <= 0.0 or tot_neg <= 0.0:
            return 0.0
        tp_prev = np.concatenate([[0.0], tp[:-1]])
        fp_prev = np.concatenate([[0.0], fp[:-1]])
        area = np.sum(np.abs(fp - fp_prev) * (tp + tp_prev) / 2.0)
        return float(area / tot_pos / tot_neg)

    def name(self):
        return self._name


def accuracy(input, label, k=1, correct=None, total=None, name=None):
    """Top-k accuracy of scores ``input`` ``[N, C]`` against labels
    ``[N, 1]`` or ``[N]``, as a float32 0-D Tensor (``paddle.metric.accuracy``).

    >>> import oar
    >>> import oar.metric
    >>> x = oar.to_tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    >>> float(oar.metric.accuracy(x, oar.to_tensor([[1], [0], [0]])))
    0.6666666865348816
    """
    api = "oar.metric.accuracy"
    x = _to_numpy(input, api)
    y = _to_numpy(label, api)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"[{api}] k must be a positive integer, got {k!r}")
    if x.ndim < 1 or x.shape[-1] < k:
        raise ValueError(f"[{api}] input needs at least k={k} classes in its last dimension, got shape "
                         f"{list(x.shape)}")
    x = x.reshape(-1, x.shape[-1])
    if y.size != x.shape[0]:
        raise ValueError(f"[{api}] label must hold one class per row of input ({x.shape[0]}), got shape "
                         f"{list(y.shape)}")
    top = np.argsort(-x, axis=-1, kind="stable")[:, :k]
    hit = np.any(top == y.reshape(-1, 1).astype(np.int64), axis=1)
    from ..creation import to_tensor
    return to_tensor(np.float32(hit.mean() if hit.size else 0.0))
