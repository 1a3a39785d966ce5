"""Loss layers over oar.nn.functional's losses."""
from .. import functional as F
from ..functional.loss import _check_reduction
from .layers import Layer

__all__ = [
    "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
    "KLDivLoss", "MarginRankingLoss", "CosineEmbeddingLoss", "TripletMarginLoss", "CTCLoss", "SoftMarginLoss",
    "HingeEmbeddingLoss",
]


class _Loss(Layer):
    _api = ""
    _reductions = ("none", "mean", "sum")

    def __init__(self, reduction="mean"):
        super().__init__()
        _check_reduction(reduction, self._api, self._reductions)
        self.reduction = reduction

    def extra_repr(self):
        return f"reduction={self.reduction}"


class CrossEntropyLoss(_Loss):
    """Cross entropy over logits (see oar.nn.functional.cross_entropy).

    >>> import oar
    >>> loss_fn = oar.nn.CrossEntropyLoss()
    >>> round(loss_fn(oar.to_tensor([[2.0, 0.0]]), oar.to_tensor([0])).item(), 4)
    0.1269
    """
    _api = "cross_entropy"

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", soft_label=False, axis=-1, use_softmax=True,
                 label_smoothing=0.0, name=None):
        super().__init__(reduction)
        self.weight, self.ignore_index, self.soft_label = weight, ignore_index, soft_label
        self.axis, self.use_softmax, self.label_smoothing = axis, use_softmax, label_smoothing

    def forward(self, input, label):  # noqa: A002
        return F.cross_entropy(input, label, self.weight, self.ignore_index, self.reduction, self.soft_label,
                               self.axis, self.use_softmax, self.label_smoothing)


class NLLLoss(_Loss):
    """Negative log likelihood over log-probabilities.

    >>> import oar
    >>> round(oar.nn.NLLLoss()(oar.to_tensor([[-0.5, -1.0]]), oar.to_tensor([1])).item(), 4)
    1.0
    """
    _api = "nll_loss"

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", name=None):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input, label):  # noqa: A002
        return F.nll_loss(input, label, self.weight, self.ignore_index, self.reduction)


class BCELoss(_Loss):
    """Binary cross entropy over probabilities.

    >>> import oar
    >>> round(oar.nn.BCELoss()(oar.to_tensor([0.5]), oar.to_tensor([1.0])).item(), 4)
    0.6931
    """
    _api = "binary_cross_entropy"

    def __init__(self, weight=None, reduction="mean", name=None):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, label):  # noqa: A002
        return F.binary_cross_entropy(input, label, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy over logits, with optional pos_weight.

    >>> import oar
    >>> round(oar.nn.BCEWithLogitsLoss()(oar.to_tensor([0.0]), oar.to_tensor([1.0])).item(), 4)
    0.6931
    """
    _api = "binary_cross_entropy_with_logits"

    def __init__(self, weight=None, reduction="mean", pos_weight=None, name=None):
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, logit, label):
        return F.binary_cross_entropy_with_logits(logit, label, self.weight, self.reduction, self.pos_weight)


class MSELoss(_Loss):
    """Mean squared error.

    >>> import oar
    >>> oar.nn.MSELoss()(oar.to_tensor([2.0]), oar.to_tensor([0.0])).item()
    4.0
    """
    _api = "mse_loss"

    def forward(self, input, label):  # noqa: A002
        return F.mse_loss(input, label, self.reduction)


class L1Loss(_Loss):
    """Mean absolute error.

    >>> import oar
    >>> oar.nn.L1Loss()(oar.to_tensor([-2.0]), oar.to_tensor([0.0])).item()
    2.0
    """
    _api = "l1_loss"

    def __init__(self, reduction="mean", name=None):
        super().__init__(reduction)

    def forward(self, input, label):  # noqa: A002
        return F.l1_loss(input, label, self.reduction)


class SmoothL1Loss(_Loss):
    """Paddle's smooth L1 loss (Huber with delta).

    >>> import oar
    >>> oar.nn.SmoothL1Loss()(oar.to_tensor([3.0]), oar.to_tensor([0.0])).item()
    2.5
    """
    _api = "smooth_l1_loss"

    def __init__(self, reduction="mean", delta=1.0, name=None):
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input, label):  # noqa: A002
        return F.smooth_l1_loss(input, label, self.reduction, self.delta)


class HuberLoss(SmoothL1Loss):
    """Huber loss: 0.5 d^2 where |d| < delta, else delta * (|d| - 0.5 delta).

    >>> import oar
    >>> oar.nn.HuberLoss(delta=2.0)(oar.to_tensor([3.0]), oar.to_tensor([0.0])).item()
    4.0
    """


class KLDivLoss(_Loss):
    """KL divergence; input holds log-probabilities.

    >>> import oar
    >>> oar.nn.KLDivLoss(reduction="sum")(oar.log(oar.to_tensor([0.5, 0.5])), oar.to_tensor([0.5, 0.5])).item()
    0.0
    """
    _api = "kl_div"
    _reductions = ("none", "mean", "batchmean", "sum")

    def __init__(self, reduction="mean", log_target=False):
        super().__init__(reduction)
        self.log_target = log_target

    def forward(self, input, label):  # noqa: A002
        return F.kl_div(input, label, self.reduction, self.log_target)


class MarginRankingLoss(_Loss):
    """max(0, -label * (input - other) + margin).

    >>> import oar
    >>> oar.nn.MarginRankingLoss()(oar.to_tensor([1.0]), oar.to_tensor([2.0]), oar.to_tensor([-1.0])).item()
    0.0
    """
    _api = "margin_ranking_loss"

    def __init__(self, margin=0.0, reduction="mean", name=None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input, other, label):  # noqa: A002
        return F.margin_ranking_loss(input, other, label, self.margin, self.reduction)


class CosineEmbeddingLoss(_Loss):
    """1 - cos for label 1, max(0, cos - margin) for label -1.

    >>> import oar
    >>> x = oar.to_tensor([[1.0, 0.0]])
    >>> round(oar.nn.CosineEmbeddingLoss()(x, x, oar.to_tensor([1])).item(), 4)
    0.0
    """
    _api = "cosine_embedding_loss"

    def __init__(self, margin=0, reduction="mean", name=None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input1, input2, label):
        return F.cosine_embedding_loss(input1, input2, label, self.margin, self.reduction)


class TripletMarginLoss(_Loss):
    """max(d(a, p) - d(a, n) + margin, 0).

    >>> import oar
    >>> a = oar.to_tensor([[0.0, 0.0]])
    >>> round(oar.nn.TripletMarginLoss(epsilon=0.0)(a, a, a).item(), 4)
    1.0
    """
    _api = "triplet_margin_loss"

    def __init__(self, margin=1.0, p=2.0, epsilon=1e-6, swap=False, reduction="mean", name=None):
        super().__init__(reduction)
        self.margin, self.p, self.epsilon, self.swap = margin, p, epsilon, swap

    def forward(self, input, positive, negative):  # noqa: A002
        return F.triplet_margin_loss(input, positive, negative, self.margin, self.p, self.epsilon, self.swap,
                                     self.reduction)


class CTCLoss(_Loss):
    """CTC loss (see oar.nn.functional.ctc_loss).

    >>> import oar
    >>> loss = oar.nn.CTCLoss(blank=0)(oar.zeros([3, 1, 2]), oar.to_tensor([[1]]), oar.to_tensor([3]),
    ...                                oar.to_tensor([1]))
    >>> round(loss.item(), 4)
    0.2877
    """
    _api = "ctc_loss"

    def __init__(self, blank=0, reduction="mean"):
        super().__init__(reduction)
        self.blank = blank

    def forward(self, log_probs, labels, input_lengths, label_lengths, norm_by_times=False):
        return F.ctc_loss(log_probs, labels, input_lengths, label_lengths, self.blank, self.reduction, norm_by_times)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-label * input)).

    >>> import oar
    >>> round(oar.nn.SoftMarginLoss()(oar.to_tensor([0.0]), oar.to_tensor([1.0])).item(), 4)
    0.6931
    """
    _api = "soft_margin_loss"

    def __init__(self, reduction="mean", name=None):
        super().__init__(reduction)

    def forward(self, input, label):  # noqa: A002
        return F.soft_margin_loss(input, label, self.reduction)


class HingeEmbeddingLoss(_Loss):
    """input for label 1, max(0, margin - input) for label -1.

    >>> import oar
    >>> round(oar.nn.HingeEmbeddingLoss()(oar.to_tensor([0.3]), oar.to_tensor([-1.0])).item(), 4)
    0.7
    """
    _api = "hinge_embedding_loss"

    def __init__(self, margin=1.0, reduction="mean", name=None):
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input, label):  # noqa: A002
        return F.hinge_embedding_loss(input, label, self.margin, self.reduction)
