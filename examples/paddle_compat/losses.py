"""Loss functions of paddle.nn / paddle.nn.functional, values and gradients."""
import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F

from _common import show

rng = np.random.RandomState(0)
logits = paddle.to_tensor(rng.randn(6, 4).astype("float32"), stop_gradient=False)
label = paddle.to_tensor(rng.randint(0, 4, (6,)).astype("int64"))
ce = F.cross_entropy(logits, label)
ce.backward()
show("ce", ce, rtol=1e-5)
show("ce_grad_row0", logits.grad[0], rtol=1e-5, atol=1e-7)
w = paddle.to_tensor([1.0, 2.0, 0.5, 1.0])
show("ce_weighted", F.cross_entropy(logits, label, weight=w), rtol=1e-5)
show("ce_ignore_index", F.cross_entropy(logits, paddle.to_tensor([0, 1, -100, 2, -100, 3]), ignore_index=-100),
     rtol=1e-5)
show("ce_label_smoothing", F.cross_entropy(logits, label, label_smoothing=0.1), rtol=1e-5)
soft = F.softmax(paddle.to_tensor(rng.randn(6, 4).astype("float32")), axis=-1)
show("ce_soft_label", F.cross_entropy(logits, soft, soft_label=True), rtol=1e-5)
show("ce_none", F.cross_entropy(logits, label, reduction="none"), rtol=1e-5)
show("ce_none_shape", list(F.cross_entropy(logits, label, reduction="none").shape))
show("nll", F.nll_loss(F.log_softmax(logits, axis=1), label), rtol=1e-5)
p = paddle.to_tensor(rng.rand(5).astype("float32"))
t = paddle.to_tensor((rng.rand(5) > 0.5).astype("float32"))
show("bce", F.binary_cross_entropy(p, t), rtol=1e-5)
show("bce_logits", F.binary_cross_entropy_with_logits(p * 4 - 2, t, pos_weight=paddle.to_tensor([2.0])), rtol=1e-5)
show("mse_l1_smooth", [float(F.mse_loss(p, t)), float(F.l1_loss(p, t)), float(F.smooth_l1_loss(p, t, delta=0.5))],
     rtol=1e-5)
show("kl_div", F.kl_div(F.log_softmax(logits, axis=1), soft, reduction="batchmean"), rtol=1e-5)
show("margin_ranking", F.margin_ranking_loss(p, t, paddle.to_tensor([1.0, -1, 1, -1, 1]), margin=0.1), rtol=1e-5)
show("hinge_embedding", F.hinge_embedding_loss(p, paddle.to_tensor([1.0, -1, 1, -1, 1])), rtol=1e-5)
show("cosine_embedding", F.cosine_embedding_loss(logits[:3], logits[3:], paddle.to_tensor([1, -1, 1])), rtol=1e-5)
show("triplet", F.triplet_margin_loss(logits[:2], logits[2:4], logits[4:], margin=3.0), rtol=1e-5)
show("huber_layer", nn.SmoothL1Loss(reduction="sum")(p, t), rtol=1e-5)
show("softmax_with_ce", F.softmax_with_cross_entropy(logits, label.unsqueeze(1))[:, 0], rtol=1e-5)
show("sigmoid_focal", F.sigmoid_focal_loss((p * 4 - 2).reshape([5, 1]), t.reshape([5, 1]), reduction="mean"), rtol=1e-5)
show("multi_label_soft_margin", F.multi_label_soft_margin_loss(logits, (soft > 0.25).astype("float32")), rtol=1e-5)
show("poisson_nll", F.poisson_nll_loss(p, t), rtol=1e-5)
show("gaussian_nll", F.gaussian_nll_loss(p, t, paddle.ones([5]) * 0.5), rtol=1e-5)
log_probs = F.log_softmax(paddle.to_tensor(rng.randn(5, 2, 4).astype("float32")), axis=-1)
ctc = F.ctc_loss(log_probs, paddle.to_tensor([[1, 2], [3, 0]], dtype="int32"), paddle.to_tensor([5, 4], dtype="int64"),
                 paddle.to_tensor([2, 1], dtype="int64"), blank=0, reduction="none")
show("ctc", ctc, rtol=1e-4)
