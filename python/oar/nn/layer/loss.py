"""Loss layers over oar.nn.functional's losses."""
from .. import functional as F
from ..functional._loss_ext import _adaptive_log_prob
from ..functional.loss import _check_reduction
from .layers import Layer

__all__ = [
    "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
    "KLDivLoss", "MarginRankingLoss", "CosineEmbeddingLoss", "TripletMarginLoss", "CTCLoss", "SoftMarginLoss",
    "HingeEmbeddingLoss", "GaussianNLLLoss", "PoissonNLLLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
    "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss", "HSigmoidLoss", "RNNTLoss", "AdaptiveLogSoftmaxWithLoss",
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


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood (see oar.nn.functional.gaussian_nll_loss).

    >>> import oar
    >>> oar.nn.GaussianNLLLoss()(oar.to_tensor([1.0]), oar.to_tensor([1.0]), oar.to_tensor([1.0])).item()
    0.0
    """
    _api = "gaussian_nll_loss"

    def __init__(self, full=False, epsilon=1e-6, reduction="mean", name=None):
        super().__init__(reduction)
        self.full, self.epsilon = full, epsilon

    def forward(self, input, label, variance):  # noqa: A002
        return F.gaussian_nll_loss(input, label, variance, self.full, self.epsilon, self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood (see oar.nn.functional.poisson_nll_loss).

    >>> import oar
    >>> oar.nn.PoissonNLLLoss()(oar.to_tensor([0.0]), oar.to_tensor([1.0])).item()
    1.0
    """
    _api = "poisson_nll_loss"

    def __init__(self, log_input=True, full=False, epsilon=1e-8, reduction="mean", name=None):
        super().__init__(reduction)
        self.log_input, self.full, self.epsilon = log_input, full, epsilon

    def forward(self, input, label):  # noqa: A002
        return F.poisson_nll_loss(input, label, self.log_input, self.full, self.epsilon, self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """Multi-label one-versus-all logistic loss (see oar.nn.functional.multi_label_soft_margin_loss).

    >>> import oar
    >>> round(oar.nn.MultiLabelSoftMarginLoss()(oar.zeros([1, 2]), oar.to_tensor([[1.0, 0.0]])).item(), 4)
    0.6931
    """
    _api = "multi_label_soft_margin_loss"

    def __init__(self, weight=None, reduction="mean", name=None):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, label):  # noqa: A002
        return F.multi_label_soft_margin_loss(input, label, self.weight, self.reduction)


class MultiMarginLoss(_Loss):
    """Multi-class hinge loss (see oar.nn.functional.multi_margin_loss).

    >>> import oar
    >>> round(oar.nn.MultiMarginLoss()(oar.to_tensor([[0.1, 0.2, 0.4, 0.8]]), oar.to_tensor([3])).item(), 4)
    0.325
    """
    _api = "multi_margin_loss"

    def __init__(self, p=1, margin=1.0, weight=None, reduction="mean", name=None):
        super().__init__(reduction)
        self.p, self.margin, self.weight = p, margin, weight

    def forward(self, input, label):  # noqa: A002
        return F.multi_margin_loss(input, label, self.p, self.margin, self.weight, self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss (see oar.nn.functional.multi_label_margin_loss).

    >>> import oar
    >>> x = oar.to_tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(oar.nn.MultiLabelMarginLoss()(x, oar.to_tensor([[3, 0, -1, 1]])).item(), 4)
    0.85
    """
    _api = "multi_label_margin_loss"

    def __init__(self, reduction="mean", name=None):
        super().__init__(reduction)

    def forward(self, input, label):  # noqa: A002
        return F.multi_label_margin_loss(input, label, self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with a custom distance (see oar.nn.functional.triplet_margin_with_distance_loss).

    >>> import oar
    >>> a = oar.to_tensor([[0.0, 0.0]])
    >>> oar.nn.TripletMarginWithDistanceLoss(margin=0.5)(a, a, a).item()
    0.5
    """
    _api = "triplet_margin_with_distance_loss"

    def __init__(self, distance_function=None, margin=1.0, swap=False, reduction="mean", name=None):
        super().__init__(reduction)
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, input, positive, negative):  # noqa: A002
        return F.triplet_margin_with_distance_loss(input, positive, negative, self.distance_function, self.margin,
                                                   self.swap, self.reduction)


class RNNTLoss(_Loss):
    """RNN-Transducer loss (see oar.nn.functional.rnnt_loss).

    >>> import oar
    >>> lp = oar.full([1, 2, 2, 2], -0.6931471805599453)
    >>> loss = oar.nn.RNNTLoss()(lp, oar.to_tensor([[1]]), oar.to_tensor([2]), oar.to_tensor([1]))
    >>> round(loss.item(), 4)
    1.3863
    """
    _api = "rnnt_loss"

    def __init__(self, blank=0, fastemit_lambda=0.001, reduction="mean", name=None):
        super().__init__(reduction)
        self.blank, self.fastemit_lambda = blank, fastemit_lambda

    def forward(self, input, label, input_lengths, label_lengths):  # noqa: A002
        return F.rnnt_loss(input, label, input_lengths, label_lengths, self.blank, self.fastemit_lambda,
                           self.reduction)


class HSigmoidLoss(Layer):
    """Hierarchical sigmoid loss with its node weights [num_classes - 1, feature_size] and bias [num_classes - 1, 1].

    is_custom=True means path_table / path_code are passed to forward (the
    weights then have num_classes rows, one per node id).

    >>> import oar
    >>> layer = oar.nn.HSigmoidLoss(3, 5)
    >>> layer(oar.rand([4, 3]), oar.to_tensor([0, 1, 2, 4])).shape, layer.weight.shape, layer.bias.shape
    ([4, 1], [4, 3], [4, 1])
    """

    def __init__(self, feature_size, num_classes, weight_attr=None, bias_attr=None, is_custom=False, is_sparse=False,
                 name=None):
        super().__init__()
        if num_classes < 2 and not is_custom:
            raise ValueError(f"[oar.nn.HSigmoidLoss] num_classes must be >= 2, got {num_classes}")
        self._feature_size, self._num_classes, self._is_custom = feature_size, num_classes, is_custom
        rows = num_classes if is_custom else num_classes - 1
        self.weight = self.create_parameter([rows, feature_size], attr=weight_attr)
        self.bias = self.create_parameter([rows, 1], attr=bias_attr, is_bias=True)

    def forward(self, input, label, path_table=None, path_code=None):  # noqa: A002
        return F.hsigmoid_loss(input, label, self._num_classes, self.weight, self.bias, path_table, path_code)

    def extra_repr(self):
        return f"feature_size={self._feature_size}, num_classes={self._num_classes}"


class AdaptiveLogSoftmaxWithLoss(Layer):
    """Adaptive softmax over n_classes with frequency clusters split at cutoffs.

    Holds head_weight [in_features, cutoffs[0] + n_clusters] (head_bias if
    head_bias=True) and, per cluster i, tail_weights[i] = [proj [in_features,
    in_features // div_value ** (i + 1)], out [.., cluster size]]. The tail
    weights are registered parameters ('tail_weights.i.j'), so optimizers and
    state_dict see them (Paddle's keeps them in a plain list). forward returns
    (output, loss); log_prob and predict give every class's log-probability and
    the most likely class.

    >>> import oar
    >>> asm = oar.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    >>> out, loss = asm(oar.rand([4, 8]), oar.to_tensor([0, 4, 9, 2]))
    >>> out.shape, loss.shape, asm.log_prob(oar.rand([4, 8])).shape, asm.predict(oar.rand([4, 8])).shape
    ([4], [], [4, 10], [4])
    """

    def __init__(self, in_features, n_classes, cutoffs, weight_attr=None, bias_attr=None, div_value=4.0,
                 head_bias=False, name=None):
        super().__init__()
        api = "[oar.nn.AdaptiveLogSoftmaxWithLoss]"
        cutoffs = [int(c) for c in cutoffs]
        if not cutoffs or cutoffs != sorted(set(cutoffs)) or cutoffs[0] <= 0 or cutoffs[-1] >= n_classes:
            raise ValueError(f"{api} cutoffs must be increasing positive ints below n_classes ({n_classes}), "
                             f"got {cutoffs}")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.shortlist_size = cutoffs[0]
        self.n_clusters = len(cutoffs)
        self.head_size = self.shortlist_size + self.n_clusters
        self.head_weight = self.create_parameter([in_features, self.head_size], attr=weight_attr)
        self.head_bias = (self.create_parameter([self.head_size], attr=bias_attr, is_bias=True)
                          if head_bias else None)
        from .container import LayerList, ParameterList

        tails = []
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            pair = ParameterList([self.create_parameter([in_features, hsz], attr=weight_attr),
                                  self.create_parameter([hsz, osz], attr=weight_attr)])
            tails.append(pair)
        self.tail_weights = LayerList(tails)

    def forward(self, input, label):  # noqa: A002
        return F.adaptive_log_softmax_with_loss(input, label, self.head_weight, self._tail_list(), self.cutoffs,
                                                self.head_bias)

    def _tail_list(self):
        return [[pair[0], pair[1]] for pair in self.tail_weights]

    def log_prob(self, input):  # noqa: A002
        """Log-probabilities of every class, [N, n_classes]."""
        return _adaptive_log_prob(input, self.head_weight, self._tail_list(), self.cutoffs, self.head_bias)

    def predict(self, input):  # noqa: A002
        """The most likely class of each row, [N] (int64)."""
        return self.log_prob(input).argmax(-1)
