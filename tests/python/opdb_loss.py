"""Op-database entries for the losses of oar.nn.functional added for Paddle 3.x (references: NumPy forms of
Paddle's definitions). Integer labels are passed as tensors so the gradient check perturbs only float inputs."""
import numpy as np

import oar
from opdb import ErrorInput, OpInfo, Sample, register

F = oar.nn.functional
DT = ("float32", "float64")


def _rng():
    return np.random.default_rng(21)


def _lsig(z):
    return -np.logaddexp(0, -z)


def _gnll_ref(x, y, v, reduction="mean"):
    v = np.maximum(v, 1e-6)
    loss = 0.5 * (np.log(v) + (x - y) ** 2 / v)
    return loss.mean() if reduction == "mean" else loss


def _gnll_samples(dtype):
    r = _rng()
    return [Sample((r.standard_normal((3, 4)), r.standard_normal((3, 4)), r.random((3, 4)) + 0.2)),
            Sample((r.standard_normal((2, 3)), r.standard_normal((2, 3)), r.random((2, 3)) + 0.2),
                   {"reduction": "none"})]


register(OpInfo("gaussian_nll_loss", F.gaussian_nll_loss, _gnll_ref, DT, _gnll_samples, grad=True,
                errors=lambda: [ErrorInput(lambda: F.gaussian_nll_loss(oar.ones([2, 3]), oar.ones([2, 3]),
                                                                       oar.ones([3])), ValueError,
                                           "[oar.nn.functional.gaussian_nll_loss]")]))


def _pnll_ref(x, y, log_input=True):
    return (np.exp(x) - y * x if log_input else x - y * np.log(x + 1e-8)).mean()


def _pnll_samples(dtype):
    r = _rng()
    return [Sample((r.standard_normal((3, 4)), r.integers(0, 4, (3, 4)).astype(np.float64))),
            Sample((r.random((5,)) + 0.5, r.integers(0, 4, (5,)).astype(np.float64)), {"log_input": False})]


register(OpInfo("poisson_nll_loss", F.poisson_nll_loss, _pnll_ref, DT, _pnll_samples, grad=True,
                errors=lambda: [ErrorInput(lambda: F.poisson_nll_loss(oar.ones([2]), oar.ones([3])), ValueError,
                                           "[oar.nn.functional.poisson_nll_loss]")]))


def _mlsm_ref(x, y):
    return (-(y * _lsig(x) + (1 - y) * _lsig(-x))).mean(-1).mean()


def _mlsm_samples(dtype):
    r = _rng()
    return [Sample((r.standard_normal((3, 4)), (r.random((3, 4)) > 0.5).astype(np.float64))),
            Sample((r.standard_normal((1, 6)) * 3, (r.random((1, 6)) > 0.5).astype(np.float64)), noncontig=True)]


register(OpInfo("multi_label_soft_margin_loss", F.multi_label_soft_margin_loss, _mlsm_ref, DT, _mlsm_samples,
                grad=True,
                errors=lambda: [ErrorInput(lambda: F.multi_label_soft_margin_loss(oar.ones([4]), oar.ones([4])),
                                           ValueError, "[oar.nn.functional.multi_label_soft_margin_loss]")]))

_MM_LABEL = np.array([0, 3, 1])


def _mm(x, p=1, margin=1.0):
    return F.multi_margin_loss(x, oar.to_tensor(_MM_LABEL), p=p, margin=margin)


def _mm_ref(x, p=1, margin=1.0):
    n, c = x.shape
    tgt = x[np.arange(n), _MM_LABEL][:, None]
    h = np.maximum(0, margin - tgt + x) ** p
    h[np.arange(n), _MM_LABEL] = 0
    return (h.sum(1) / c).mean()


def _mm_samples(dtype):
    r = _rng()
    return [Sample((r.standard_normal((3, 4)),)), Sample((r.standard_normal((3, 4)),), {"p": 2, "margin": 0.7})]


register(OpInfo("multi_margin_loss", _mm, _mm_ref, DT, _mm_samples, grad=True,
                errors=lambda: [ErrorInput(lambda: F.multi_margin_loss(oar.ones([3, 4]), oar.to_tensor([0, 4, 1])),
                                           ValueError, "[oar.nn.functional.multi_margin_loss]"),
                                ErrorInput(lambda: F.multi_margin_loss(oar.ones([3, 4]), oar.to_tensor([0, 1, 1]),
                                                                       p=3),
                                           ValueError, "[oar.nn.functional.multi_margin_loss]")]))


def _tmd_ref(a, p, n, margin=1.0):
    d = lambda u, v: np.sqrt(((u - v + 1e-6) ** 2).sum(-1))  # noqa: E731
    return np.maximum(d(a, p) - d(a, n) + margin, 0).mean()


def _tmd_samples(dtype):
    r = _rng()
    return [Sample(tuple(r.standard_normal((3, 3, 4)))), Sample(tuple(r.standard_normal((3, 2, 5))), {"margin": 2.0})]


register(OpInfo("triplet_margin_with_distance_loss", F.triplet_margin_with_distance_loss, _tmd_ref, DT,
                _tmd_samples, grad=True,
                errors=lambda: [ErrorInput(lambda: F.triplet_margin_with_distance_loss(
                    oar.ones([2, 3]), oar.ones([2, 3]), oar.ones([2, 3]), margin=-1.0), ValueError,
                    "[oar.nn.functional.triplet_margin_with_distance_loss]")]))

_NP_LABELS = np.array([1, 2, 1, 2])


def _npair(a, p):
    return F.npair_loss(a, p, oar.to_tensor(_NP_LABELS))


def _npair_ref(a, p, l2_reg=0.002):
    lab = (_NP_LABELS[:, None] == _NP_LABELS[None, :]).astype(float)
    lab /= lab.sum(1, keepdims=True)
    s = a @ p.T
    m = s.max(1, keepdims=True)
    lp = s - m - np.log(np.exp(s - m).sum(1, keepdims=True))
    return (-(lab * lp).sum(1)).mean() + ((a ** 2).sum(1).mean() + (p ** 2).sum(1).mean()) * 0.25 * l2_reg


register(OpInfo("npair_loss", _npair, _npair_ref, DT, lambda d: [Sample(tuple(_rng().standard_normal((2, 4, 3))))],
                grad=True,
                errors=lambda: [ErrorInput(lambda: F.npair_loss(oar.ones([4, 3]), oar.ones([4, 3]),
                                                                oar.to_tensor([1, 2])),
                                           ValueError, "[oar.nn.functional.npair_loss]")]))

_DICE_LABEL = np.array([[[0], [2], [1]], [[3], [3], [0]]])


def _dice(x):
    return F.dice_loss(x, oar.to_tensor(_DICE_LABEL))


def _dice_ref(x, eps=1e-5):
    oh = np.eye(x.shape[-1])[_DICE_LABEL[..., 0]]
    inse = (x * oh).sum((1, 2))
    return (1 - 2 * inse / (x.sum((1, 2)) + oh.sum((1, 2)) + eps)).mean()


register(OpInfo("dice_loss", _dice, _dice_ref, DT, lambda d: [Sample((_rng().random((2, 3, 4)),))], grad=True,
                errors=lambda: [ErrorInput(lambda: F.dice_loss(oar.ones([2, 3, 4]), oar.to_tensor([[0, 1, 2]])),
                                           ValueError, "[oar.nn.functional.dice_loss]")]))
