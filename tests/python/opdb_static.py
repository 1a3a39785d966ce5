"""Op-database entries for the tensor functions of oar.static (metrics)."""
import numpy as np

import oar
from opdb import ErrorInput, OpInfo, Sample, register


def _accuracy_ref(scores, label, k=1):
    top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.float64(np.mean((top == label.reshape(-1, 1)).any(axis=1)))


def _accuracy_samples(dtype):
    rng = np.random.default_rng(70)
    scores = rng.permuted(np.tile(np.arange(5.0), (6, 1)), axis=1)  # distinct scores per row: no ties
    label = rng.integers(0, 5, (6, 1))
    return [Sample((scores, label), grad=False), Sample((scores, label), {"k": 3}, grad=False),
            Sample((scores[:1], label[:1]), {"k": 5}, grad=False)]


def _accuracy_errors():
    scores, label = oar.zeros([2, 3]), oar.zeros([2, 1], dtype="int64")
    return [ErrorInput(lambda: oar.static.accuracy(scores, label, k=4), ValueError, "[oar.static.accuracy]"),
            ErrorInput(lambda: oar.static.accuracy(scores, label, k=0), ValueError, "[oar.static.accuracy]"),
            ErrorInput(lambda: oar.static.accuracy([[1.0]], label), TypeError, "[oar.static.accuracy]")]


register(OpInfo("static.accuracy", oar.static.accuracy, _accuracy_ref, ("float32", "float64"), _accuracy_samples,
                out_dtype=lambda dtype: "float32", errors=_accuracy_errors,
                tol={"float64": (1e-6, 1e-6)}))  # the result is float32 whatever the scores
