"""oar.metric against NumPy counts and scikit-learn's ROC AUC."""
import numpy as np
import pytest

import oar
import oar.metric
from oar.metric import Accuracy, Auc, Metric, Precision, Recall

RNG = np.random.default_rng(7)


def np_topk_hits(scores, labels, k):
    top = np.argsort(-scores, axis=1)[:, :k]
    return (top == labels.reshape(-1, 1)).any(axis=1)


@pytest.mark.parametrize("topk", [(1,), (1, 5), (2, 3)])
def test_accuracy_topk_matches_numpy_over_batches(topk):
    m = Accuracy(topk=topk)
    batches = [(RNG.standard_normal((n, 10)).astype("float32"), RNG.integers(0, 10, (n, 1))) for n in (7, 13, 1)]
    for scores, labels in batches:
        got = m.update(m.compute(oar.to_tensor(scores), oar.to_tensor(labels)))
        want = [np_topk_hits(scores, labels, k).mean() for k in topk]
        np.testing.assert_allclose(np.atleast_1d(got), want, rtol=0, atol=1e-12)
    all_s = np.concatenate([b[0] for b in batches])
    all_l = np.concatenate([b[1] for b in batches])
    want = [np_topk_hits(all_s, all_l, k).mean() for k in topk]
    np.testing.assert_allclose(np.atleast_1d(m.accumulate()), want, atol=1e-12)
    m.reset()
    assert np.all(np.atleast_1d(m.accumulate()) == 0.0)


def test_accuracy_label_forms_and_names():
    scores = RNG.standard_normal((20, 4)).astype("float32")
    labels = RNG.integers(0, 4, 20)
    want = np_topk_hits(scores, labels, 1).mean()
    onehot = np.eye(4, dtype="float32")[labels]
    for lab in (labels, labels.reshape(-1, 1), onehot):
        m = Accuracy()
        assert m.update(m.compute(scores, lab)) == pytest.approx(want, abs=1e-12)
    assert Accuracy().name() == ["acc"]
    assert Accuracy(topk=(1, 5), name="top").name() == ["top_top1", "top_top5"]
    correct = Accuracy(topk=(1, 3)).compute(oar.to_tensor(scores), oar.to_tensor(labels))
    assert correct.shape == [20, 3] and correct.dtype == oar.float32


@pytest.mark.parametrize("k", [1, 3])
def test_functional_accuracy(k):
    scores = RNG.standard_normal((30, 6)).astype("float32")
    labels = RNG.integers(0, 6, (30, 1))
    got = oar.metric.accuracy(oar.to_tensor(scores), oar.to_tensor(labels), k=k)
    assert got.shape == [] and got.dtype == oar.float32
    assert float(got) == pytest.approx(np_topk_hits(scores, labels, k).mean(), abs=1e-6)


def test_precision_recall_match_counts():
    p, r = Precision(), Recall()
    all_pred, all_lab = [], []
    for n in (10, 25, 3):
        pred = RNG.random(n).astype("float32")
        lab = RNG.integers(0, 2, n)
        p.update(oar.to_tensor(pred.reshape(-1, 1)), oar.to_tensor(lab.reshape(-1, 1)))
        r.update(pred, lab)
        all_pred.append(pred)
        all_lab.append(lab)
    pred = np.concatenate(all_pred) >= 0.5
    lab = np.concatenate(all_lab) == 1
    tp, fp, fn = np.sum(pred & lab), np.sum(pred & ~lab), np.sum(~pred & lab)
    assert p.accumulate() == pytest.approx(tp / (tp + fp), abs=1e-12)
    assert r.accumulate() == pytest.approx(tp / (tp + fn), abs=1e-12)
    assert p.name() == "precision" and r.name() == "recall"
    p.reset()
    r.reset()
    assert p.accumulate() == 0.0 and r.accumulate() == 0.0  # no positives: defined as 0
    with pytest.raises(ValueError, match=r"^\[oar.metric.Precision.update\]"):
        p.update(np.zeros(3), np.zeros(4))


@pytest.mark.parametrize("n", [50, 400])
def test_auc_matches_sklearn(n):
    from sklearn.metrics import roc_auc_score
    m = Auc()
    scores, labels = [], []
    for _ in range(3):
        lab = RNG.integers(0, 2, n)
        pos = np.clip(0.5 + 0.25 * (lab - 0.5) + 0.2 * RNG.standard_normal(n), 0, 1)
        m.update(np.stack([1 - pos, pos], axis=1), lab.reshape(-1, 1))
        scores.append(pos)
        labels.append(lab)
    want = roc_auc_score(np.concatenate(labels), np.concatenate(scores))
    assert m.accumulate() == pytest.approx(want, abs=1e-3)
    assert m.name() == "auc"


def test_auc_small_thresholds_is_bucketed_closed_form():
    # 2 buckets per unit: scores 0.1, 0.2 fall in bucket 0, 0.6, 0.9 in bucket 1.
    m = Auc(num_thresholds=2)
    m.update(oar.to_tensor([0.1, 0.6, 0.2, 0.9]), oar.to_tensor([0, 0, 1, 1]))
    # ROC points (0,0) -> (1/2, 1/2) -> (1, 1): area = 1/2
    assert m.accumulate() == pytest.approx(0.5)
    m.reset()
    m.update(np.array([0.1, 0.9]), np.array([1, 1]))
    assert m.accumulate() == 0.0  # no negatives


def test_metric_errors():
    with pytest.raises(ValueError, match=r"^\[oar.metric.Accuracy\]"):
        Accuracy(topk=(0,))
    with pytest.raises(ValueError, match=r"^\[oar.metric.Accuracy.compute\]"):
        Accuracy(topk=(5,)).compute(np.zeros((2, 3), "float32"), np.zeros(2, "int64"))
    with pytest.raises(NotImplementedError, match=r"^\[oar.metric.Auc\]"):
        Auc(curve="PR")
    with pytest.raises(ValueError, match=r"^\[oar.metric.Auc.update\]"):
        Auc().update(np.array([1.5]), np.array([1]))
    with pytest.raises(ValueError, match=r"^\[oar.metric.accuracy\]"):
        oar.metric.accuracy(oar.ones([2, 2]), oar.to_tensor([[0], [1]]), k=3)
    with pytest.raises(TypeError):
        Metric()


def test_custom_metric_subclass():
    class Count(Metric):
        def __init__(self):
            self.reset()

        def reset(self):
            self.n = 0

        def update(self, x):
            self.n += len(x)

        def accumulate(self):
            return self.n

        def name(self):
            return "count"

    m = Count()
    assert m.compute(1, 2) == (1, 2)
    m.update([1, 2, 3])
    assert m.accumulate() == 3
