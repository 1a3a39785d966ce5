"""Training steps: forward + loss, and whole steps with backward and an optimizer
step inside the converted function.

Steps that update weights are factories (registry.Program.factory): each mode
gets a new model and optimizer built under the same seed, and the input sets
are consecutive batches, so the loss of batch k checks the weights after k
converted updates against k eager updates.
"""
import oar
import oar.nn as nn
import oar.nn.functional as F

from .registry import add, ints, randn, seeded

TS = ("train_step",)
OPT_STEP = dict(expect_full_graph=False, reason=(
    "steps an optimizer (loss.backward() + optimizer.step()) inside the function: parameters and "
    "optimizer state held by Python objects change as a side effect"))


class MLPLoss(nn.Layer):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))

    def forward(self, x, y):
        return F.mse_loss(self.net(x), y)


add("mlp_forward_mse", seeded(MLPLoss), [(randn(4, 6), randn(4, 1)), (randn(8, 6), randn(8, 1))], TS)


class CNNCrossEntropy(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(1, 4, 3)
        self.fc = nn.Linear(4 * 6 * 6, 3)

    def forward(self, x, label):
        logits = self.fc(oar.flatten(F.relu(self.conv(x)), 1))
        return F.cross_entropy(logits, label), logits.argmax(axis=-1)


add("cnn_forward_cross_entropy", seeded(CNNCrossEntropy),
    [(randn(2, 1, 8, 8), ints(2, hi=3)), (randn(3, 1, 8, 8), ints(3, hi=3))], TS)


class LabelSmoothedLoss(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 4)

    def forward(self, x, label):
        logp = F.log_softmax(self.fc(x), axis=-1)
        one_hot = F.one_hot(label, 4)
        target = one_hot * 0.9 + 0.025
        return -(target * logp).sum(axis=-1).mean()


add("label_smoothed_loss", seeded(LabelSmoothedLoss), [(randn(3, 5), ints(3, hi=4)), (randn(6, 5), ints(6, hi=4))],
    TS)


def _stepper(model_fn, opt_fn, loss_fn, extra=None):
    """A factory of (model, optimizer) train steps: step(*batch) -> loss after one update."""

    def factory():
        model = model_fn()
        opt = opt_fn(model.parameters())

        def step(*batch):
            loss = loss_fn(model, *batch)
            loss.backward()
            if extra is not None:
                extra(model, opt)
            opt.step()
            opt.clear_grad()
            return loss

        return step

    return factory


BATCHES = [(randn(4, 6), randn(4, 1)), (randn(4, 6), randn(4, 1)), (randn(4, 6), randn(4, 1))]


def _mlp():
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))


def _mse(model, x, y):
    return F.mse_loss(model(x), y)


add("train_step_sgd", factory=_stepper(_mlp, lambda p: oar.optimizer.SGD(0.1, parameters=p), _mse), inputs=BATCHES,
    tags=TS, **OPT_STEP)
add("train_step_momentum", factory=_stepper(_mlp, lambda p: oar.optimizer.Momentum(0.05, 0.9, parameters=p), _mse),
    inputs=BATCHES, tags=TS, **OPT_STEP)
add("train_step_adam", factory=_stepper(_mlp, lambda p: oar.optimizer.Adam(0.01, parameters=p), _mse),
    inputs=BATCHES, tags=TS, **OPT_STEP)
add("train_step_adamw_clip", factory=_stepper(
    _mlp, lambda p: oar.optimizer.AdamW(0.01, parameters=p, weight_decay=0.01,
                                        grad_clip=nn.ClipGradByGlobalNorm(0.5)), _mse),
    inputs=BATCHES, tags=TS, **OPT_STEP)


def _lr_sched_factory():
    model = _mlp()
    sched = oar.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)
    opt = oar.optimizer.SGD(sched, parameters=model.parameters())

    def step(x, y):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step()  # Python state that changes every call: the learning rate
        return loss

    return step


add("train_step_lr_scheduler", factory=_lr_sched_factory, inputs=BATCHES, tags=TS, **OPT_STEP)


def _lstm_cls():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(3, 8)
            self.fc = nn.Linear(8, 2)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.fc(out[:, -1])

    return Net()


add("train_step_lstm_adam", factory=_stepper(
    _lstm_cls, lambda p: oar.optimizer.Adam(0.01, parameters=p),
    lambda m, x, y: F.cross_entropy(m(x), y)),
    inputs=[(randn(2, 5, 3), ints(2, hi=2)), (randn(2, 5, 3), ints(2, hi=2)), (randn(2, 5, 3), ints(2, hi=2))],
    tags=TS + ("rnn",),
    **OPT_STEP)


def _tiny_encoder():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(12, 8)
            self.enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
            self.fc = nn.Linear(8, 12)

        def forward(self, ids):
            return self.fc(self.enc(self.emb(ids)))

    return Net()


def _token_ce(model, ids):
    logits = model(ids)
    return F.cross_entropy(logits.reshape([-1, 12]), ids.reshape([-1]))


add("train_step_transformer_sgd", factory=_stepper(_tiny_encoder, lambda p: oar.optimizer.SGD(0.05, parameters=p),
                                                   _token_ce),
    inputs=[ints(2, 4, hi=12), ints(2, 4, hi=12), ints(2, 4, hi=12)], tags=TS + ("transformer",),
    **OPT_STEP)


def _bn_net():
    return nn.Sequential(nn.Conv2D(1, 3, 3), nn.BatchNorm2D(3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 1))


add("train_step_batchnorm_running_stats", factory=_stepper(
    _bn_net, lambda p: oar.optimizer.SGD(0.05, parameters=p), _mse),
    inputs=[(randn(3, 1, 6, 6), randn(3, 1)), (randn(3, 1, 6, 6), randn(3, 1))], tags=TS + ("conv",),
    **OPT_STEP)


def _grad_norm_factory():
    model = _mlp()
    opt = oar.optimizer.SGD(0.1, parameters=model.parameters())

    def step(x, y):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        gnorm = oar.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
        opt.step()
        opt.clear_grad()
        return loss, gnorm

    return step


add("train_step_returns_grad_norm", factory=_grad_norm_factory, inputs=BATCHES, tags=TS, **OPT_STEP)


def _skip_bad_step_factory():
    model = _mlp()
    opt = oar.optimizer.SGD(0.1, parameters=model.parameters())

    def step(x, y):
        loss = F.mse_loss(model(x), y)
        # A data-dependent update: large losses get a regulariser first.
        if loss > 1.0:
            loss = loss + 0.01 * sum((p ** 2).sum() for p in model.parameters())
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return step


add("train_step_conditional_regulariser", factory=_skip_bad_step_factory,
    inputs=[(randn(4, 6), randn(4, 1, scale=5.0)), (randn(4, 6), randn(4, 1, scale=0.01)),
            (randn(4, 6), randn(4, 1, scale=3.0))], tags=TS + ("control_flow",),
    **OPT_STEP)


def _grad_accum_factory():
    model = _mlp()
    opt = oar.optimizer.SGD(0.1, parameters=model.parameters())

    def step(x, y):
        # Two micro-batches accumulate into one update.
        total = oar.zeros([])
        for xs, ys in zip(oar.split(x, 2), oar.split(y, 2)):
            loss = F.mse_loss(model(xs), ys) / 2.0
            loss.backward()
            total = total + loss.detach()
        opt.step()
        opt.clear_grad()
        return total

    return step


add("train_step_grad_accumulation", factory=_grad_accum_factory, inputs=BATCHES, tags=TS, **OPT_STEP)


class ManualSGD(nn.Layer):
    """A step written with oar.grad and parameter updates in place, no optimizer."""

    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([3, 1])
        self.b = self.create_parameter([1], is_bias=True)

    def forward(self, x, y):
        loss = ((oar.matmul(x, self.w) + self.b - y) ** 2).mean()
        gw, gb = oar.grad(loss, [self.w, self.b])
        with oar.no_grad():
            self.w.set_value(self.w - 0.1 * gw)
            self.b.set_value(self.b - 0.1 * gb)
        return loss


add("train_step_manual_grad_update", factory=lambda: ManualSGD(),
    inputs=[(randn(4, 3), randn(4, 1)), (randn(4, 3), randn(4, 1)), (randn(4, 3), randn(4, 1))], tags=TS)


class DoubleBackward(nn.Layer):
    """A gradient-penalty loss: the gradient of a gradient."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        x.stop_gradient = False
        out = oar.tanh(self.fc(x)).sum()
        (gx,) = oar.grad(out, [x], create_graph=True)
        return out + (gx ** 2).sum()


add("gradient_penalty_double_grad", seeded(DoubleBackward), [randn(2, 3), randn(4, 3)], TS)
