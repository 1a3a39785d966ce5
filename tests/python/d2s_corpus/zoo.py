"""Model zoo forwards in small configurations: vision models with tiny inputs,
GPT and BERT pieces, transformer layers, recurrent nets, conv nets and MLPs.

Every model is built under the corpus seed and put in eval mode (dropout off,
batch norm on running statistics) unless the program is about training mode.
"""
import oar
import oar.nn as nn
import oar.nn.functional as F
from oar.models import BertConfig, BertForSequenceClassification, BertModel, GPTConfig, GPTForCausalLM, GPTModel
from oar.static import InputSpec
from oar.vision import models as vm

from .registry import add, ints, randn, seeded

Z = ("zoo",)


def _eval(build):
    m = seeded(build)
    m.eval()
    return m


IMG = [randn(1, 3, 32, 32), randn(2, 3, 32, 32)]

add("resnet18_tiny", _eval(lambda: vm.resnet18(num_classes=10)), IMG, Z + ("vision",))
add("resnet_basic_depth18_width16", _eval(lambda: vm.ResNet(vm.BasicBlock, 18, width=16, num_classes=5)),
    [randn(1, 3, 16, 16), randn(3, 3, 16, 16)], Z + ("vision",))
add("mobilenet_v1_quarter", _eval(lambda: vm.mobilenet_v1(scale=0.25, num_classes=10)), IMG, Z + ("vision",))
add("mobilenet_v2_quarter", _eval(lambda: vm.mobilenet_v2(scale=0.25, num_classes=10)), IMG, Z + ("vision",))
add("mobilenet_v3_small_half", _eval(lambda: vm.MobileNetV3Small(scale=0.5, num_classes=10)), IMG, Z + ("vision",))
add("vgg_small_bn", _eval(lambda: vm.VGG(vm.vgg.make_layers([8, "M", 16, "M", 16], batch_norm=True), num_classes=0)),
    IMG, Z + ("vision",))
add("lenet", _eval(lambda: vm.LeNet(num_classes=10)), [randn(1, 1, 28, 28), randn(4, 1, 28, 28)], Z + ("vision",))
add("shufflenet_v2_x0_25", _eval(lambda: vm.shufflenet_v2_x0_25(num_classes=10)), IMG, Z + ("vision",))
add("squeezenet1_1", _eval(lambda: vm.squeezenet1_1(num_classes=10)), [randn(1, 3, 48, 48), randn(2, 3, 48, 48)],
    Z + ("vision",))
add("resnet18_train_mode_bn", seeded(lambda: vm.resnet18(num_classes=4)), [randn(2, 3, 16, 16), randn(3, 3, 16, 16)],
    Z + ("vision", "training_mode"))

_GPT = dict(vocab_size=40, max_position_embeddings=16, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
_BERT = dict(vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
             hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=16)
IDS = [ints(1, 5, hi=40), ints(2, 7, hi=40)]

add("gpt_causal_lm_logits", _eval(lambda: GPTForCausalLM(GPTConfig(**_GPT))), IDS, Z + ("transformer",))
add("gpt_model_hidden", _eval(lambda: GPTModel(GPTConfig(**_GPT))), IDS, Z + ("transformer",))


class GPTLoss(nn.Layer):
    def __init__(self):
        super().__init__()
        self.lm = GPTForCausalLM(GPTConfig(**_GPT))

    def forward(self, ids):
        loss, logits = self.lm(ids, labels=ids)
        return loss, logits.mean()


add("gpt_lm_loss", _eval(GPTLoss), IDS, Z + ("transformer",))
add("bert_model", _eval(lambda: BertModel(BertConfig(**_BERT))), IDS, Z + ("transformer",))
add("bert_seq_cls", _eval(lambda: BertForSequenceClassification(BertConfig(**_BERT), num_classes=3)), IDS,
    Z + ("transformer",))

SEQ = [randn(2, 5, 16), randn(1, 3, 16)]
add("transformer_encoder_layer", _eval(lambda: nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0)), SEQ,
    Z + ("transformer",))
add("transformer_encoder_prenorm", _eval(lambda: nn.TransformerEncoder(
    nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, normalize_before=True), 2)), SEQ, Z + ("transformer",))
add("transformer_decoder_layer", _eval(lambda: nn.TransformerDecoderLayer(16, 2, 32, dropout=0.0)),
    [(randn(2, 4, 16), randn(2, 6, 16)), (randn(1, 2, 16), randn(1, 3, 16))], Z + ("transformer",))
add("transformer_full", _eval(lambda: nn.Transformer(16, 2, 1, 1, 32, dropout=0.0)),
    [(randn(2, 5, 16), randn(2, 3, 16)), (randn(1, 4, 16), randn(1, 4, 16))], Z + ("transformer",))
add("multi_head_attention", _eval(lambda: nn.MultiHeadAttention(16, 4)),
    [(randn(2, 5, 16), randn(2, 5, 16), randn(2, 5, 16)), (randn(1, 3, 16), randn(1, 6, 16), randn(1, 6, 16))],
    Z + ("transformer",))


class MaskedEncoder(nn.Layer):
    """An encoder with a causal mask built from the input length."""

    def __init__(self):
        super().__init__()
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0), 1)

    def forward(self, x):
        s = x.shape[1]
        mask = oar.triu(oar.full([s, s], float("-inf")), diagonal=1)
        return self.enc(x, src_mask=mask)


add("transformer_causal_mask", _eval(MaskedEncoder), SEQ, Z + ("transformer",))

RNN_IN = [randn(2, 6, 4), randn(3, 2, 4)]


class LastHidden(nn.Layer):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        out, state = self.rnn(x)
        return out, state


add("lstm", _eval(lambda: LastHidden(nn.LSTM(4, 8))), RNN_IN, Z + ("rnn",))
add("lstm_2layer_bidirect", _eval(lambda: LastHidden(nn.LSTM(4, 6, num_layers=2, direction="bidirect"))), RNN_IN,
    Z + ("rnn",))
add("gru", _eval(lambda: LastHidden(nn.GRU(4, 8))), RNN_IN, Z + ("rnn",))
add("simple_rnn", _eval(lambda: LastHidden(nn.SimpleRNN(4, 8))), RNN_IN, Z + ("rnn",))


class LSTMWithInit(nn.Layer):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 8)

    def forward(self, x, h0, c0):
        out, (h, c) = self.rnn(x, (h0, c0))
        return out[:, -1] + h[0]


add("lstm_initial_state", _eval(LSTMWithInit),
    [(randn(2, 3, 4), randn(1, 2, 8), randn(1, 2, 8)), (randn(2, 5, 4), randn(1, 2, 8), randn(1, 2, 8))],
    Z + ("rnn",))


class SmallCNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2D(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2D(8)
        self.c2 = nn.Conv2D(8, 8, 3, stride=2, groups=8)
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = F.relu(self.bn(self.c1(x)))
        x = F.max_pool2d(x, 2)
        x = F.gelu(self.c2(x))
        return self.fc(oar.flatten(self.pool(x), 1))


add("small_cnn", _eval(SmallCNN), [randn(1, 3, 16, 16), randn(2, 3, 20, 20)], Z + ("conv",))


class Conv1DNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1D(4, 8, 3, padding=1)
        self.c2 = nn.Conv1D(8, 4, 3, dilation=2)

    def forward(self, x):
        return self.c2(F.relu(self.c1(x))).mean(axis=-1)


add("conv1d_net", _eval(Conv1DNet), [randn(2, 4, 10), randn(1, 4, 7)], Z + ("conv",))


class ConvAutoencoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2D(1, 4, 3, stride=2, padding=1)
        self.dec = nn.Conv2DTranspose(4, 1, 4, stride=2, padding=1)

    def forward(self, x):
        return F.sigmoid(self.dec(F.relu(self.enc(x))))


add("conv_autoencoder", _eval(ConvAutoencoder), [randn(1, 1, 8, 8), randn(2, 1, 12, 12)], Z + ("conv",))


class MLP(nn.Layer):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.LayerList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = F.relu(x)
        return x


add("mlp_3layer", _eval(lambda: MLP([8, 16, 16, 3])), [randn(4, 8), randn(1, 8)], Z + ("mlp",))


class ResidualMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(*[nn.Sequential(nn.LayerNorm(8), nn.Linear(8, 8), nn.GELU(), nn.Dropout(0.5))
                                      for _ in range(3)])
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        for blk in self.blocks:
            x = x + blk(x)
        return F.softmax(self.head(x), axis=-1)


add("residual_mlp_dropout_eval", _eval(ResidualMLP), [randn(3, 8), randn(6, 8)], Z + ("mlp",))


class EmbeddingBag(nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8, padding_idx=0)
        self.fc = nn.Linear(8, 2)

    def forward(self, ids):
        mask = (ids != 0).astype("float32").unsqueeze(-1)
        pooled = (self.emb(ids) * mask).sum(axis=1) / oar.clip(mask.sum(axis=1), min=1.0)
        return self.fc(pooled)


add("embedding_bag", _eval(EmbeddingBag), [ints(2, 5, hi=20), ints(3, 4, hi=20)], Z + ("mlp",))


class DynamicBatchMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        return F.log_softmax(self.fc(x), axis=-1)


add("mlp_input_spec_none_batch", _eval(DynamicBatchMLP), [randn(2, 6), randn(5, 6), randn(1, 6)], Z + ("mlp",),
    input_spec=[InputSpec([None, 6], "float32")])
