"""Checkpoints that move between Paddle and oar: layer and parameter names as
Paddle gives them, optimizer state dicts in Paddle's key layout (read and
written, with oar's earlier layout still read), and training that resumes from a
saved state exactly where the uninterrupted run would be, for every optimizer.

Reference names and keys were recorded with PaddlePaddle 3.3.1 (CPU), each
inside ``paddle.utils.unique_name.guard()``:
``paddle.nn.X(args).full_name()`` and the ``.name`` of each ``state_dict()``
value (LAYER_NAMES, PARAM_NAMES); ``type(name, (paddle.nn.Layer,), {})().full_name()``
for NAME_SCOPES; ``opt.state_dict()`` after three steps of
``paddle.nn.Linear(2, 3)`` (PADDLE_ACCUMULATORS). Paddle itself is not imported.
"""
import math
import warnings

import numpy as np
import pytest

import oar
import oar.optimizer as optim
from oar.nn.layer.layers import _camel_to_snake
from oar.utils import unique_name

# Recorded from Paddle: expression -> layer.full_name() (layers without parameters).
LAYER_NAMES = [
    ("nn.AdaptiveAvgPool1D(2)", "adaptive_avg_pool1d_0"), ("nn.AdaptiveAvgPool2D(2)", "adaptive_avg_pool2d_0"),
    ("nn.AdaptiveAvgPool3D(2)", "adaptive_avg_pool3d_0"), ("nn.AdaptiveMaxPool1D(2)", "adaptive_max_pool1d_0"),
    ("nn.AdaptiveMaxPool2D(2)", "adaptive_max_pool2d_0"), ("nn.AdaptiveMaxPool3D(2)", "adaptive_max_pool3d_0"),
    ("nn.AlphaDropout()", "alpha_dropout_0"), ("nn.AvgPool1D(2)", "avg_pool1d_0"),
    ("nn.AvgPool2D(2)", "avg_pool2d_0"), ("nn.AvgPool3D(2)", "avg_pool3d_0"), ("nn.BCELoss()", "bce_loss_0"),
    ("nn.BCEWithLogitsLoss()", "bce_with_logits_loss_0"), ("nn.CELU()", "celu_0"), ("nn.CTCLoss()", "ctc_loss_0"),
    ("nn.ChannelShuffle(2)", "channel_shuffle_0"), ("nn.CircularPad1D(1)", "circular_pad1d_0"),
    ("nn.CircularPad2D(1)", "circular_pad2d_0"), ("nn.CircularPad3D(1)", "circular_pad3d_0"),
    ("nn.ConstantPad1D(1, 0.0)", "constant_pad1d_0"), ("nn.ConstantPad2D(1, 0.0)", "constant_pad2d_0"),
    ("nn.ConstantPad3D(1, 0.0)", "constant_pad3d_0"), ("nn.CosineEmbeddingLoss()", "cosine_embedding_loss_0"),
    ("nn.CosineSimilarity()", "cosine_similarity_0"), ("nn.CrossEntropyLoss()", "cross_entropy_loss_0"),
    ("nn.Dropout()", "dropout_0"), ("nn.Dropout2D()", "dropout2d_0"), ("nn.Dropout3D()", "dropout3d_0"),
    ("nn.ELU()", "elu_0"), ("nn.FeatureAlphaDropout()", "feature_alpha_dropout_0"), ("nn.Flatten()", "flatten_0"),
    ("nn.Fold([4, 4], 2)", "fold_0"), ("nn.FractionalMaxPool2D(2)", "fractional_max_pool2d_0"),
    ("nn.FractionalMaxPool3D(2)", "fractional_max_pool3d_0"), ("nn.GELU()", "gelu_0"), ("nn.GLU()", "glu_0"),
    ("nn.GaussianNLLLoss()", "gaussian_nll_loss_0"), ("nn.Hardshrink()", "hardshrink_0"),
    ("nn.Hardsigmoid()", "hardsigmoid_0"), ("nn.Hardswish()", "hardswish_0"), ("nn.Hardtanh()", "hardtanh_0"),
    ("nn.HingeEmbeddingLoss()", "hinge_embedding_loss_0"), ("nn.Identity()", "identity_0"),
    ("nn.KLDivLoss()", "kl_div_loss_0"), ("nn.L1Loss()", "l1_loss_0"), ("nn.LPPool1D(2, 2)", "lp_pool1d_0"),
    ("nn.LPPool2D(2, 2)", "lp_pool2d_0"), ("nn.Layer()", "layer_0"), ("nn.LayerDict()", "layer_dict_0"),
    ("nn.LayerList()", "layer_list_0"), ("nn.LeakyReLU()", "leaky_re_lu_0"),
    ("nn.LocalResponseNorm(3)", "local_response_norm_0"), ("nn.LogSigmoid()", "log_sigmoid_0"),
    ("nn.LogSoftmax()", "log_softmax_0"), ("nn.MSELoss()", "mse_loss_0"),
    ("nn.MarginRankingLoss()", "margin_ranking_loss_0"), ("nn.MaxPool1D(2)", "max_pool1d_0"),
    ("nn.MaxPool2D(2)", "max_pool2d_0"), ("nn.MaxPool3D(2)", "max_pool3d_0"),
    ("nn.MaxUnPool1D(2)", "max_un_pool1d_0"), ("nn.MaxUnPool2D(2)", "max_un_pool2d_0"),
    ("nn.MaxUnPool3D(2)", "max_un_pool3d_0"), ("nn.Maxout(2)", "maxout_0"), ("nn.Mish()", "mish_0"),
    ("nn.MultiLabelMarginLoss()", "multi_label_margin_loss_0"),
    ("nn.MultiLabelSoftMarginLoss()", "multi_label_soft_margin_loss_0"),
    ("nn.MultiMarginLoss()", "multi_margin_loss_0"), ("nn.NLLLoss()", "nll_loss_0"), ("nn.Pad1D(1)", "pad1d_0"),
    ("nn.Pad2D(1)", "pad2d_0"), ("nn.Pad3D(1)", "pad3d_0"), ("nn.PairwiseDistance()", "pairwise_distance_0"),
    ("nn.ParameterDict()", "parameter_dict_0"), ("nn.ParameterList()", "parameter_list_0"),
    ("nn.PixelShuffle(2)", "pixel_shuffle_0"), ("nn.PixelUnshuffle(2)", "pixel_unshuffle_0"),
    ("nn.PoissonNLLLoss()", "poisson_nll_loss_0"), ("nn.RNNTLoss()", "rnnt_loss_0"), ("nn.RReLU()", "r_re_lu_0"),
    ("nn.ReLU()", "re_lu_0"), ("nn.ReLU6()", "re_lu6_0"), ("nn.ReflectionPad1D(1)", "reflection_pad1d_0"),
    ("nn.ReflectionPad2D(1)", "reflection_pad2d_0"), ("nn.ReflectionPad3D(1)", "reflection_pad3d_0"),
    ("nn.ReplicationPad1D(1)", "replication_pad1d_0"), ("nn.ReplicationPad2D(1)", "replication_pad2d_0"),
    ("nn.ReplicationPad3D(1)", "replication_pad3d_0"), ("nn.SELU()", "selu_0"), ("nn.Sequential()", "sequential_0"),
    ("nn.Sigmoid()", "sigmoid_0"), ("nn.Silu()", "silu_0"), ("nn.SmoothL1Loss()", "smooth_l1_loss_0"),
    ("nn.SoftMarginLoss()", "soft_margin_loss_0"), ("nn.Softmax()", "softmax_0"), ("nn.Softmax2D()", "softmax2d_0"),
    ("nn.Softplus()", "softplus_0"), ("nn.Softshrink()", "softshrink_0"), ("nn.Softsign()", "softsign_0"),
    ("nn.Swish()", "swish_0"), ("nn.Tanh()", "tanh_0"), ("nn.Tanhshrink()", "tanhshrink_0"),
    ("nn.ThresholdedReLU()", "thresholded_re_lu_0"), ("nn.TripletMarginLoss()", "triplet_margin_loss_0"),
    ("nn.TripletMarginWithDistanceLoss()", "triplet_margin_with_distance_loss_0"),
    ("nn.Unflatten(0, [1, 2])", "unflatten_0"), ("nn.Unfold(2)", "unfold_0"),
    ("nn.Upsample(scale_factor=2)", "upsample_0"),
    ("nn.UpsamplingBilinear2D(scale_factor=2)", "upsampling_bilinear2d_0"),
    ("nn.UpsamplingNearest2D(scale_factor=2)", "upsampling_nearest2d_0"), ("nn.ZeroPad1D(1)", "zero_pad1d_0"),
    ("nn.ZeroPad2D(1)", "zero_pad2d_0"), ("nn.ZeroPad3D(1)", "zero_pad3d_0"),
]

# Recorded from Paddle: expression -> (full_name(), the .name of each state_dict() value in order).
PARAM_NAMES = [
    ("nn.BatchNorm(3)", "batch_norm_0", "batch_norm_0.w_0 batch_norm_0.b_0 batch_norm_0.w_1 batch_norm_0.w_2"),
    ("nn.BatchNorm1D(3)", "batch_norm1d_0",
     "batch_norm1d_0.w_0 batch_norm1d_0.b_0 batch_norm1d_0.w_1 batch_norm1d_0.w_2"),
    ("nn.BatchNorm2D(3)", "batch_norm2d_0",
     "batch_norm2d_0.w_0 batch_norm2d_0.b_0 batch_norm2d_0.w_1 batch_norm2d_0.w_2"),
    ("nn.BatchNorm3D(3)", "batch_norm3d_0",
     "batch_norm3d_0.w_0 batch_norm3d_0.b_0 batch_norm3d_0.w_1 batch_norm3d_0.w_2"),
    ("nn.BiRNN(nn.SimpleRNNCell(2, 3), nn.SimpleRNNCell(2, 3))", "bi_rnn_0",
     "simple_rnn_cell_0.w_0 simple_rnn_cell_0.w_1 simple_rnn_cell_0.b_0 simple_rnn_cell_0.b_1 "
     "simple_rnn_cell_1.w_0 simple_rnn_cell_1.w_1 simple_rnn_cell_1.b_0 simple_rnn_cell_1.b_1"),
    ("nn.Bilinear(2, 3, 4)", "bilinear_0", "bilinear_0.w_0 bilinear_0.b_0"),
    ("nn.Conv1D(2, 3, 3)", "conv1d_0", "conv1d_0.w_0 conv1d_0.b_0"),
    ("nn.Conv1DTranspose(2, 3, 3)", "conv1d_transpose_0", "conv1d_transpose_0.w_0 conv1d_transpose_0.b_0"),
    ("nn.Conv2D(2, 3, 3)", "conv2d_0", "conv2d_0.w_0 conv2d_0.b_0"),
    ("nn.Conv2DTranspose(2, 3, 3)", "conv2d_transpose_0", "conv2d_transpose_0.w_0 conv2d_transpose_0.b_0"),
    ("nn.Conv3D(2, 3, 3)", "conv3d_0", "conv3d_0.w_0 conv3d_0.b_0"),
    ("nn.Conv3DTranspose(2, 3, 3)", "conv3d_transpose_0", "conv3d_transpose_0.w_0 conv3d_transpose_0.b_0"),
    ("nn.Embedding(5, 3)", "embedding_0", "embedding_0.w_0"),
    ("nn.GRU(2, 3)", "gru_0",
     "gru_cell_0.w_0 gru_cell_0.w_1 gru_cell_0.b_0 gru_cell_0.b_1 gru_cell_0.w_0 gru_cell_0.w_1 "
     "gru_cell_0.b_0 gru_cell_0.b_1"),
    ("nn.GRUCell(2, 3)", "gru_cell_0", "gru_cell_0.w_0 gru_cell_0.w_1 gru_cell_0.b_0 gru_cell_0.b_1"),
    ("nn.GroupNorm(2, 4)", "group_norm_0", "group_norm_0.w_0 group_norm_0.b_0"),
    ("nn.HSigmoidLoss(3, 4)", "h_sigmoid_loss_0", "h_sigmoid_loss_0.w_0 h_sigmoid_loss_0.b_0"),
    ("nn.InstanceNorm1D(3)", "instance_norm1d_0", "instance_norm1d_0.w_0 instance_norm1d_0.b_0"),
    ("nn.InstanceNorm2D(3)", "instance_norm2d_0", "instance_norm2d_0.w_0 instance_norm2d_0.b_0"),
    ("nn.InstanceNorm3D(3)", "instance_norm3d_0", "instance_norm3d_0.w_0 instance_norm3d_0.b_0"),
    ("nn.LSTM(2, 3)", "lstm_0",
     "lstm_cell_0.w_0 lstm_cell_0.w_1 lstm_cell_0.b_0 lstm_cell_0.b_1 lstm_cell_0.w_0 lstm_cell_0.w_1 "
     "lstm_cell_0.b_0 lstm_cell_0.b_1"),
    ("nn.LSTMCell(2, 3)", "lstm_cell_0", "lstm_cell_0.w_0 lstm_cell_0.w_1 lstm_cell_0.b_0 lstm_cell_0.b_1"),
    ("nn.LayerNorm(3)", "layer_norm_0", "layer_norm_0.w_0 layer_norm_0.b_0"),
    ("nn.Linear(2, 3)", "linear_0", "linear_0.w_0 linear_0.b_0"),
    ("nn.MultiHeadAttention(4, 2)", "multi_head_attention_0",
     "linear_0.w_0 linear_0.b_0 linear_1.w_0 linear_1.b_0 linear_2.w_0 linear_2.b_0 linear_3.w_0 "
     "linear_3.b_0"),
    ("nn.PReLU()", "p_re_lu_0", "p_re_lu_0.w_0"),
    ("nn.RNN(nn.SimpleRNNCell(2, 3))", "rnn_0",
     "simple_rnn_cell_0.w_0 simple_rnn_cell_0.w_1 simple_rnn_cell_0.b_0 simple_rnn_cell_0.b_1"),
    ("nn.SimpleRNN(2, 3)", "simple_rnn_0",
     "simple_rnn_cell_0.w_0 simple_rnn_cell_0.w_1 simple_rnn_cell_0.b_0 simple_rnn_cell_0.b_1 "
     "simple_rnn_cell_0.w_0 simple_rnn_cell_0.w_1 simple_rnn_cell_0.b_0 simple_rnn_cell_0.b_1"),
    ("nn.SimpleRNNCell(2, 3)", "simple_rnn_cell_0",
     "simple_rnn_cell_0.w_0 simple_rnn_cell_0.w_1 simple_rnn_cell_0.b_0 simple_rnn_cell_0.b_1"),
    ("nn.SpectralNorm([3, 4])", "spectral_norm_0", "spectral_norm_0.w_0 spectral_norm_0.w_1"),
    ("nn.SyncBatchNorm(3)", "sync_batch_norm_0",
     "sync_batch_norm_0.w_0 sync_batch_norm_0.b_0 sync_batch_norm_0.w_1 sync_batch_norm_0.w_2"),
    ("nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8), 1)", "transformer_decoder_0",
     "linear_0.w_0 linear_0.b_0 linear_1.w_0 linear_1.b_0 linear_2.w_0 linear_2.b_0 linear_3.w_0 "
     "linear_3.b_0 linear_4.w_0 linear_4.b_0 linear_5.w_0 linear_5.b_0 linear_6.w_0 linear_6.b_0 "
     "linear_7.w_0 linear_7.b_0 linear_8.w_0 linear_8.b_0 linear_9.w_0 linear_9.b_0 layer_norm_0.w_0 "
     "layer_norm_0.b_0 layer_norm_1.w_0 layer_norm_1.b_0 layer_norm_2.w_0 layer_norm_2.b_0"),
    ("nn.TransformerDecoderLayer(4, 2, 8)", "transformer_decoder_layer_0",
     "linear_0.w_0 linear_0.b_0 linear_1.w_0 linear_1.b_0 linear_2.w_0 linear_2.b_0 linear_3.w_0 "
     "linear_3.b_0 linear_4.w_0 linear_4.b_0 linear_5.w_0 linear_5.b_0 linear_6.w_0 linear_6.b_0 "
     "linear_7.w_0 linear_7.b_0 linear_8.w_0 linear_8.b_0 linear_9.w_0 linear_9.b_0 layer_norm_0.w_0 "
     "layer_norm_0.b_0 layer_norm_1.w_0 layer_norm_1.b_0 layer_norm_2.w_0 layer_norm_2.b_0"),
    ("nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 1)", "transformer_encoder_0",
     "linear_0.w_0 linear_0.b_0 linear_1.w_0 linear_1.b_0 linear_2.w_0 linear_2.b_0 linear_3.w_0 "
     "linear_3.b_0 linear_4.w_0 linear_4.b_0 linear_5.w_0 linear_5.b_0 layer_norm_0.w_0 layer_norm_0.b_0 "
     "layer_norm_1.w_0 layer_norm_1.b_0"),
    ("nn.TransformerEncoderLayer(4, 2, 8)", "transformer_encoder_layer_0",
     "linear_0.w_0 linear_0.b_0 linear_1.w_0 linear_1.b_0 linear_2.w_0 linear_2.b_0 linear_3.w_0 "
     "linear_3.b_0 linear_4.w_0 linear_4.b_0 linear_5.w_0 linear_5.b_0 layer_norm_0.w_0 layer_norm_0.b_0 "
     "layer_norm_1.w_0 layer_norm_1.b_0"),
]

# Class name -> Paddle's name scope (type(name, (paddle.nn.Layer,), {})().full_name() without '_0').
NAME_SCOPES = {
    "My_Layer": "my__layer", "ABcDe": "a_bc_de", "AbCDEfGH": "ab_cd_ef_gh", "X1Y": "x1y", "MLP": "mlp",
    "MyMLPNet": "my_mlp_net", "ResNet50": "res_net50", "HTTPServer2X": "http_server2x", "AaBbCc": "aa_bb_cc",
    "A_B": "a_b", "_Private": "__private", "SE_ResNeXt": "se__res_ne_xt", "XAbBc": "x_ab_bc",
    "ABcDEf": "a_bc_d_ef", "AAbAAb": "a_ab_a_ab", "AbAbA": "ab_ab_a", "ABCDef": "abc_def",
    "ABcdEFgh": "a_bcd_e_fgh", "A1bC": "a1b_c", "Net": "net", "a": "a", "AB": "ab", "Ab2Cd": "ab2_cd",
    "AbCD": "ab_cd", "ABCd1E": "ab_cd1e", "aBc": "a_bc", "aBC": "a_bc", "X__Yz": "x___yz", "Linear_": "linear_",
    "M2Det": "m2_det", "RMSNorm": "rms_norm", "HuberLoss": "huber_loss", "BatchNorm2D": "batch_norm2d",
    "Conv1DTranspose": "conv1d_transpose", "PReLU": "p_re_lu", "LSTMCell": "lstm_cell", "ReLU6": "re_lu6",
    "BCEWithLogitsLoss": "bce_with_logits_loss", "HSigmoidLoss": "h_sigmoid_loss", "RNNTLoss": "rnnt_loss",
}


@pytest.mark.parametrize("expr, full_name", LAYER_NAMES, ids=[e for e, _ in LAYER_NAMES])
def test_layer_names_match_paddle(expr, full_name):
    with unique_name.guard():
        layer = eval(expr, {"nn": oar.nn})
    assert layer.full_name() == full_name
    assert not layer.state_dict()


@pytest.mark.parametrize("expr, full_name, names", PARAM_NAMES, ids=[e for e, *_ in PARAM_NAMES])
def test_parameter_names_match_paddle(expr, full_name, names):
    with unique_name.guard():
        layer = eval(expr, {"nn": oar.nn})
    assert layer.full_name() == full_name
    assert [t.name for t in layer.state_dict().values()] == names.split()


@pytest.mark.parametrize("cls_name", sorted(NAME_SCOPES))
def test_name_scope_rule(cls_name):
    assert _camel_to_snake(cls_name) == NAME_SCOPES[cls_name]
    with unique_name.guard():
        assert type(cls_name, (oar.nn.Layer,), {})().full_name() == NAME_SCOPES[cls_name] + "_0"


def test_unique_name_guard_governs_parameter_names():
    # every value below is what Paddle 3.3.1 gives for the same calls
    with unique_name.guard():
        a = oar.nn.Linear(2, 2)
    with unique_name.guard():
        b = oar.nn.Linear(2, 2)
    assert a.weight.name == b.weight.name == "linear_0.w_0" and a.bias.name == b.bias.name == "linear_0.b_0"
    with unique_name.guard("A_"):
        fc = oar.nn.Linear(2, 2)
    assert (fc.full_name(), fc.weight.name, fc.bias.name) == ("A_linear_0", "A_A_linear_0.w_0", "A_A_linear_0.b_0")
    with unique_name.guard():
        create = oar.framework_param.create_parameter
        names = [create([2], "float32").name, create([2], "float32", is_bias=True).name, create([2], "float32").name]
        assert names == ["create_parameter_0.w_0", "create_parameter_1.b_0", "create_parameter_2.w_0"]
        layer = oar.nn.Layer()
        ws = [layer.create_parameter([2]).name for _ in range(2)]
        assert (layer.full_name(), ws, layer.create_parameter([2], is_bias=True).name) == \
            ("layer_0", ["layer_0.w_0", "layer_0.w_1"], "layer_0.b_0")
        assert [oar.nn.Layer("my").full_name() for _ in range(2)] == ["my_0", "my_1"]
        assert unique_name.generate("linear") == "linear_0"
        assert oar.nn.Linear(2, 2).weight.name == "linear_1.w_0"
        assert unique_name.generate("linear_1.w") == "linear_1.w_1"
    with unique_name.guard():
        fc = oar.nn.Linear(2, 2, weight_attr=oar.ParamAttr(name="myw"))
        assert (fc.weight.name, fc.bias.name) == ("myw", "linear_0.b_0")
        fc = oar.nn.Linear(2, 2, bias_attr=False)
        assert (fc.weight.name, fc.bias) == ("linear_1.w_0", None)


# ---- optimizer state

# Paddle 3.3.1's opt.state_dict() after three steps of Linear(2, 3) held exactly the keys
# '<param>_<accumulator>_0' for both parameters ('linear_0.w_0', 'linear_0.b_0'), with these
# accumulators ([1] = a one-element tensor, else shaped like the parameter):
PADDLE_ACCUMULATORS = {
    "SGD": [],
    "Momentum": ["velocity"],
    "Adam": ["moment1", "moment2", "beta1_pow_acc[1]", "beta2_pow_acc[1]"],
    "Adam-amsgrad": ["moment1", "moment2", "moment2_max", "beta1_pow_acc[1]", "beta2_pow_acc[1]"],
    "AdamW": ["moment1", "moment2", "beta1_pow_acc[1]", "beta2_pow_acc[1]"],
    "Adamax": ["moment", "inf_norm", "beta1_pow_acc[1]"],
    "Adagrad": ["moment"],
    "Adadelta": ["_avg_squared_grad", "_avg_squared_update"],
    "RMSProp": ["momentum", "mean_square", "mean_grad"],
    "RMSProp-centered": ["momentum", "mean_square", "mean_grad"],
    "Lamb": ["moment1", "moment2", "beta1_pow_acc[1]", "beta2_pow_acc[1]"],
    "NAdam": ["momentum_decay_pow", "beta2_pow", "mu_product", "moment1", "moment2"],
    "RAdam": ["beta1_pow", "beta2_pow", "rho", "moment1", "moment2"],
}

# name -> (factory(params), hyperparameters the closed forms below need)
OPTIMIZERS = {
    "SGD": (lambda ps: optim.SGD(0.05, parameters=ps), {}),
    "Momentum": (lambda ps: optim.Momentum(0.05, momentum=0.8, parameters=ps), {}),
    "Adam": (lambda ps: optim.Adam(0.05, beta1=0.8, beta2=0.95, parameters=ps), {"beta1": 0.8, "beta2": 0.95}),
    "Adam-amsgrad": (lambda ps: optim.Adam(0.05, parameters=ps, amsgrad=True), {}),
    "AdamW": (lambda ps: optim.AdamW(0.05, parameters=ps, weight_decay=0.1), {}),
    "Adamax": (lambda ps: optim.Adamax(0.05, beta1=0.7, parameters=ps), {"beta1": 0.7}),
    "Adagrad": (lambda ps: optim.Adagrad(0.05, parameters=ps, initial_accumulator_value=0.1), {}),
    "Adadelta": (lambda ps: optim.Adadelta(1.0, parameters=ps), {}),
    "RMSProp": (lambda ps: optim.RMSProp(0.01, parameters=ps), {}),
    "RMSProp-centered": (lambda ps: optim.RMSProp(0.01, parameters=ps, centered=True, momentum=0.5), {}),
    "Lamb": (lambda ps: optim.Lamb(0.05, parameters=ps), {}),
    "NAdam": (lambda ps: optim.NAdam(0.05, parameters=ps, momentum_decay=0.01), {"momentum_decay": 0.01}),
    "RAdam": (lambda ps: optim.RAdam(0.05, beta2=0.9, parameters=ps), {"beta2": 0.9}),
}
CASES = sorted(OPTIMIZERS)


def _accs(name):
    return [a.replace("[1]", "") for a in PADDLE_ACCUMULATORS[name]]


def _closed_form(acc, t, hp, shape):
    """Paddle's value of a step-count accumulator after t steps (None for state tensors)."""
    b1, b2 = hp.get("beta1", 0.9), hp.get("beta2", 0.999)
    psi = hp.get("momentum_decay", 0.004)
    values = {
        "beta1_pow_acc": b1 ** (t + 1), "beta2_pow_acc": b2 ** (t + 1),  # start at beta, before the first step
        "beta1_pow": b1 ** t, "beta2_pow": b2 ** t, "momentum_decay_pow": 0.96 ** t,
        "rho": t * b2 ** t / (1 - b2 ** t),
        "mu_product": math.prod(b1 * (1 - 0.5 * 0.96 ** (i * psi)) for i in range(1, t + 1)),
    }
    if acc not in values:
        return None
    return np.full([1] if acc.endswith("_acc") else shape, values[acc], np.float32)


_X = np.random.RandomState(0).standard_normal((8, 4, 3)).astype(np.float32)
_Y = np.random.RandomState(1).standard_normal((8, 4, 2)).astype(np.float32)
PARAM_KEYS = ["linear_0.w_0", "linear_0.b_0", "linear_1.w_0", "linear_1.b_0"]


def _model(name):
    """A fresh model and optimizer, named as a new process would name them."""
    with unique_name.guard():
        net = oar.nn.Sequential(oar.nn.Linear(3, 4), oar.nn.Tanh(), oar.nn.Linear(4, 2))
    rng = np.random.RandomState(2)
    for p in net.parameters():
        p.set_value(rng.uniform(-0.5, 0.5, p.shape).astype(np.float32))
    assert [p.name for p in net.parameters()] == PARAM_KEYS
    return net, OPTIMIZERS[name][0](net.parameters())


def _train(net, opt, steps):
    losses = []
    for x, y in zip(_X[steps], _Y[steps]):
        loss = ((net(oar.to_tensor(x)) - oar.to_tensor(y)) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


def _resumed(name, state):
    """Losses of steps 3..5 after loading the weights of `net` and `state` into a new model."""
    net, opt = _model(name)
    net.set_state_dict(state["net"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every entry must be used
        opt.set_state_dict(state["opt"])
    return _train(net, opt, slice(3, 6))


@pytest.fixture(scope="module")
def runs():
    """Per optimizer: the uninterrupted losses, and the model and optimizer after 3 steps."""
    out = {}
    for name in CASES:
        net, opt = _model(name)
        full = _train(net, opt, slice(0, 6))
        net, opt = _model(name)
        _train(net, opt, slice(0, 3))
        out[name] = (full, net, opt)
    return out


@pytest.mark.parametrize("name", CASES)
def test_state_dict_keys_are_paddles(name, runs):
    _, net, opt = runs[name]
    sd = opt.state_dict()
    want = {f"{p}_{a}_0" for p in PARAM_KEYS for a in _accs(name)}
    assert set(sd) == want
    for key in PADDLE_ACCUMULATORS[name]:
        for p in net.parameters():
            acc = key.replace("[1]", "")
            assert sd[f"{p.name}_{acc}_0"].shape == ([1] if key.endswith("[1]") else p.shape)


@pytest.mark.parametrize("name", CASES)
def test_step_counters_follow_paddles_powers(name, runs):
    _, net, opt = runs[name]
    sd = opt.state_dict()
    hp = OPTIMIZERS[name][1]
    for p in net.parameters():
        for acc in _accs(name):
            want = _closed_form(acc, 3, hp, p.shape)
            if want is not None:
                np.testing.assert_allclose(sd[f"{p.name}_{acc}_0"].numpy(), want, rtol=1e-6)
        if name == "RMSProp":
            assert not sd[f"{p.name}_mean_grad_0"].numpy().any()


def test_recorded_paddle_values():
    # Paddle 3.3.1 after 3 Adam steps (beta1 0.9, beta2 0.999): beta1_pow_acc 0.6560999155044556,
    # beta2_pow_acc 0.9960060715675354; RAdam (beta2 0.99) rho after steps 1, 2, 3: 99.0000991821289,
    # 98.50260925292969, 98.00679779052734; NAdam momentum_decay_pow after 3 steps 0.8847359418869019.
    # (Paddle multiplies in float32 step by step, hence the tolerances)
    np.testing.assert_allclose(_closed_form("beta1_pow_acc", 3, {}, [1]), 0.6560999155044556, rtol=1e-6)
    np.testing.assert_allclose(_closed_form("beta2_pow_acc", 3, {}, [1]), 0.9960060715675354, rtol=1e-6)
    rho = [_closed_form("rho", t, {"beta2": 0.99}, [1])[0] for t in (1, 2, 3)]
    np.testing.assert_allclose(rho, [99.0000991821289, 98.50260925292969, 98.00679779052734], rtol=2e-6)
    np.testing.assert_allclose(_closed_form("momentum_decay_pow", 3, {}, [1]), 0.8847359418869019, rtol=1e-7)


@pytest.mark.parametrize("name", CASES)
def test_resume_from_own_files(name, runs, tmp_path):
    full, net, opt = runs[name]
    oar.save(net.state_dict(), str(tmp_path / "m.pdparams"))
    oar.save(opt.state_dict(), str(tmp_path / "m.pdopt"))
    state = {"net": oar.load(str(tmp_path / "m.pdparams")), "opt": oar.load(str(tmp_path / "m.pdopt"))}
    np.testing.assert_allclose(_resumed(name, state), full[3:], rtol=1e-6)


_INTERNAL = {"_avg_squared_grad": "avg_squared_grad", "_avg_squared_update": "avg_squared_update"}


def _paddle_layout(name, net, opt, t=3, hp=None):
    """A state dict in Paddle's layout built from the recorded key names: state tensors copied
    from the optimizer, step-count accumulators from their closed forms."""
    hp = OPTIMIZERS[name][1] if hp is None else hp
    sd = {}
    for p in net.parameters():
        state = opt._accumulators[id(p)]
        for acc in _accs(name):
            inner = _INTERNAL.get(acc, acc)
            value = state[inner].numpy() if inner in state else _closed_form(acc, t, hp, p.shape)
            if value is None:  # mean_grad of an RMSProp that is not centered
                value = np.zeros(p.shape, np.float32)
            sd[f"{p.name}_{acc}_0"] = oar.to_tensor(value)
    return sd


@pytest.mark.parametrize("name", CASES)
def test_resume_from_paddle_layout(name, runs):
    full, net, opt = runs[name]
    state = {"net": {k: oar.to_tensor(v.numpy()) for k, v in net.state_dict().items()},
             "opt": _paddle_layout(name, net, opt)}
    np.testing.assert_allclose(_resumed(name, state), full[3:], rtol=1e-6)


@pytest.mark.parametrize("name", CASES)
def test_resume_from_earlier_oar_layout(name, runs):
    # oar's earlier keys: '<param>_<state>_0' and the counters as '<param>_step' (and '_mu_product')
    full, net, opt = runs[name]
    sd = {}
    for p in net.parameters():
        for n, t in opt._accumulators[id(p)].items():
            sd[f"{p.name}_{n}_0"] = oar.to_tensor(t.numpy())
        sd[f"{p.name}_step"] = oar.to_tensor(np.array([3], np.int64))
        if name == "NAdam":
            psi = OPTIMIZERS[name][1]["momentum_decay"]
            sd[f"{p.name}_mu_product"] = oar.to_tensor(
                np.array([math.prod(0.9 * (1 - 0.5 * 0.96 ** (i * psi)) for i in (1, 2, 3))]))
    state = {"net": {k: oar.to_tensor(v.numpy()) for k, v in net.state_dict().items()}, "opt": sd}
    np.testing.assert_allclose(_resumed(name, state), full[3:], rtol=1e-6)


def test_unused_entries_are_named_in_a_warning(runs):
    _, net, opt = runs["Adam"]
    sd = dict(opt.state_dict())
    # a checkpoint whose parameters had other names: nothing may be dropped silently
    sd["linear_7.w_0_moment1_0"] = sd.pop("linear_0.w_0_moment1_0")
    sd["conv2_d_0.b_1_moment2_0"] = sd["linear_0.b_0_moment2_0"]
    _, fresh = _model("Adam")
    with pytest.warns(UserWarning, match=r"^\[oar.optimizer.Adam\] set_state_dict: 2 entries .*"
                                         r"'linear_7.w_0_moment1_0', 'conv2_d_0.b_1_moment2_0'"):
        fresh.set_state_dict(sd)
    _, fresh = _model("Adam")
    with pytest.warns(UserWarning, match="'LR_Scheduler'"):  # the learning rate here is a float
        fresh.set_state_dict({**opt.state_dict(), "LR_Scheduler": {"last_epoch": 3, "last_lr": 0.1}})
    _, fresh = _model("Adam")
    with pytest.warns(UserWarning, match="no step count saved for"):
        fresh.set_state_dict({k: v for k, v in opt.state_dict().items() if "pow_acc" not in k})


def test_centered_mean_grad_is_reported_to_a_plain_rmsprop(runs):
    _, net, opt = runs["RMSProp-centered"]
    _, plain = _model("RMSProp")
    with pytest.warns(UserWarning, match="mean_grad_0"):
        plain.set_state_dict(opt.state_dict())


def test_step_count_survives_an_underflowed_beta1_power():
    # With beta1 = 0.5, a float32 beta1 ** (t + 1) is 0 after 150 steps; beta2's power still tells t.
    def make():
        with unique_name.guard():
            net = oar.nn.Linear(3, 2)
        net.weight.set_value(np.full([3, 2], 0.3, np.float32))
        net.bias.set_value(np.zeros([2], np.float32))
        return net, optim.Adam(0.01, beta1=0.5, beta2=0.99, parameters=net.parameters())

    x = oar.to_tensor(_X[0])

    def steps(net, opt, n):
        out = []
        for _ in range(n):
            loss = (net(x) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            out.append(float(loss))
        return out

    net, opt = make()
    full = steps(net, opt, 163)
    net, opt = make()
    steps(net, opt, 160)
    sd = {}
    for p in net.parameters():
        st = opt._accumulators[id(p)]
        sd[f"{p.name}_moment1_0"], sd[f"{p.name}_moment2_0"] = st["moment1"], st["moment2"]
        sd[f"{p.name}_beta1_pow_acc_0"] = oar.to_tensor(np.array([0.5 ** 161], np.float32))
        sd[f"{p.name}_beta2_pow_acc_0"] = oar.to_tensor(np.array([0.99 ** 161], np.float32))
    assert sd["linear_0.w_0_beta1_pow_acc_0"].item() == 0.0
    net2, opt2 = make()
    net2.set_state_dict(net.state_dict())
    opt2.set_state_dict(sd)
    np.testing.assert_allclose(steps(net2, opt2, 3), full[160:], rtol=1e-6)


def test_master_weights_and_optimizer_name_in_keys():
    # Paddle 3.3.1, Adam(multi_precision=True) on a bfloat16 parameter 'layer_0.w_0': accumulators
    # '<param>_fp32_master_0_<acc>_0' and {'master_weights': {'<param>': fp32 copy}}; with name='myopt':
    # '<param>_myopt_<acc>_0'.
    def make(**kw):
        w = oar.to_tensor(np.array([1.0, -2.0, 3.0], np.float32)).astype("bfloat16")
        w.stop_gradient = False
        w.name = "layer_0.w_0"
        return w, optim.Adam(0.1, parameters=[w], **kw)

    def step(w, opt):
        (w.astype("float32") ** 2).sum().backward()
        opt.step()
        opt.clear_grad()

    w, opt = make(multi_precision=True)
    step(w, opt)
    sd = opt.state_dict()
    accs = ["moment1", "moment2", "beta1_pow_acc", "beta2_pow_acc"]
    assert set(sd) == {f"layer_0.w_0_fp32_master_0_{a}_0" for a in accs} | {"master_weights"}
    assert list(sd["master_weights"]) == ["layer_0.w_0"] and sd["master_weights"]["layer_0.w_0"].dtype == oar.float32
    w2, opt2 = make(multi_precision=True)
    opt2.set_state_dict(sd)
    step(w, opt)
    step(w2, opt2)
    np.testing.assert_array_equal(w2.astype("float32").numpy(), w.astype("float32").numpy())

    w = oar.to_tensor([1.0, -2.0, 3.0], stop_gradient=False)
    w.name = "linear_0.w_0"
    opt = optim.Adam(0.1, parameters=[w], name="myopt")
    (w * w).sum().backward()
    opt.step()
    assert set(opt.state_dict()) == {f"linear_0.w_0_myopt_{a}_0" for a in accs}
    opt2 = optim.Adam(0.1, parameters=[w], name="myopt")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt2.set_state_dict(opt.state_dict())
    np.testing.assert_array_equal(opt2.state_dict()["linear_0.w_0_myopt_moment1_0"].numpy(),
                                  opt.state_dict()["linear_0.w_0_myopt_moment1_0"].numpy())


def test_paddle_counter_suffix_is_read():
    # A second optimizer in one Paddle process numbers its accumulators '_1', '_2', ...
    w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    w.name = "linear_0.w_0"
    sd = {"linear_0.w_0_velocity_1": oar.to_tensor([0.5, -0.5])}
    opt = optim.Momentum(0.1, momentum=0.5, parameters=[w])
    opt.set_state_dict(sd)
    w.grad = oar.to_tensor([1.0, 1.0])
    opt.step()
    # velocity = 0.5 * [0.5, -0.5] + 1 ; w -= 0.1 * velocity
    np.testing.assert_allclose(w.numpy(), [1.0 - 0.125, 2.0 - 0.075], rtol=1e-6)


# Paddle 3.3.1's LBFGS(history_size=3, max_iter=4).state_dict()['state'] after one step with history
# held these keys; 'al' had history_size entries.
PADDLE_LBFGS_KEYS = ["H_diag", "al", "alpha", "d", "func_evals", "n_iter", "old_sk", "old_yk", "prev_flat_grad",
                     "prev_loss", "ro"]


def test_lbfgs_state_in_paddle_layout():
    def make():
        x = oar.to_tensor([1.0, 2.0, 0.5], dtype="float64", stop_gradient=False)
        opt = optim.LBFGS(1.0, parameters=[x], history_size=3, max_iter=4)

        def closure():
            opt.clear_grad()
            loss = (((x - 3.0) ** 2) * oar.to_tensor([1.0, 5.0, 2.0], dtype="float64") + 0.1 * x ** 4).sum()
            loss.backward()
            return loss
        return x, opt, closure

    x, opt, closure = make()
    opt.step(closure)
    state = opt.state_dict()["state"]
    assert sorted(state) == PADDLE_LBFGS_KEYS and len(state["al"]) == 3
    x2, opt2, closure2 = make()
    x2.set_value(x.numpy())
    opt2.set_state_dict(opt.state_dict())
    opt.step(closure)
    opt2.step(closure2)
    np.testing.assert_array_equal(x2.numpy(), x.numpy())
    # oar's earlier name for the step length, 't'
    x3, opt3, closure3 = make()
    x3.set_value(x.numpy())
    legacy = dict(opt.state_dict()["state"])
    legacy["t"] = legacy.pop("alpha")
    del legacy["al"]
    opt3.set_state_dict({"state": legacy})
    x4, opt4, closure4 = make()
    x4.set_value(x.numpy())
    opt4.set_state_dict(opt.state_dict())
    opt3.step(closure3)
    opt4.step(closure4)
    np.testing.assert_array_equal(x3.numpy(), x4.numpy())
