"""Pipeline parallel (1F1B) on N ranks against one process on the same batch:
losses and parameters after a few train_batch steps agree within 1e-5
relative, for SGD and Adam; the schedule of F/B events on every stage is
1F1B; a stage boundary may carry a tuple with a stop_gradient tensor; the
"layer:Linear" cut; eval_batch; pipelines on sub-groups; typed errors.

Prints "rank R: N pipeline checks passed"."""
import numpy as np

import oar
import oar.distributed as dist
import oar.nn as nn
import oar.nn.functional as F
from oar.distributed.pipeline import LayerDesc, PipelineLayer, PipelineParallel, SharedLayerDesc

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
STEPS, BATCH, M = 6, 16, 4
CLIP = 0.2  # small enough that every step of the clipped run clips
checks = 0


class Block(nn.Layer):
    """Linear + ReLU; takes a tensor or a pair, and outputs a pair whose
    second tensor is stop_gradient, to send a tuple over a stage boundary."""

    def __init__(self, i, o):
        super().__init__()
        self.fc = nn.Linear(i, o)

    def forward(self, a, b=None):
        h = F.relu(self.fc(a if b is None else a + b))
        return h, (h * 0.5).detach()


def merge(a, b):  # a plain function as a pipeline item
    return a + b


def tied_out(layer, h):  # the shared Linear(8, 16) used transposed: 16 -> 8
    return oar.matmul(h, layer.weight, transpose_y=True)


def descs(kind):
    if kind == "shared":
        # One Linear at the first and the last stage (weight and bias summed).
        tie = ("tie", nn.Linear, None, ["weight", "bias"], 8, 16)
        return [SharedLayerDesc(*tie), nn.Tanh(), LayerDesc(nn.Linear, 16, 16), nn.ReLU(),
                LayerDesc(nn.Linear, 16, 16), nn.ReLU(),
                SharedLayerDesc("tie", nn.Linear, tied_out, ["weight", "bias"], 8, 16), LayerDesc(nn.Linear, 8, 4)]
    if kind == "mlp":
        # 4 Linear layers (8 items): 4 per stage on 2 ranks, 2 on 4 ranks.
        return [LayerDesc(nn.Linear, 8, 16), nn.ReLU(), LayerDesc(nn.Linear, 16, 16), nn.Tanh(),
                LayerDesc(nn.Linear, 16, 16), nn.ReLU(), LayerDesc(nn.Linear, 16, 4), nn.Identity()]
    # 'tuple': one Block per stage under the layer:Block cut.
    return [LayerDesc(Block, 8, 16)] + [LayerDesc(Block, 16, 16) for _ in range(n - 1)] + [
        merge, LayerDesc(nn.Linear, 16, 4)]


def make_opt(name, params):
    if name == "sgd":
        return oar.optimizer.SGD(learning_rate=0.1, parameters=params)
    if name == "sgd_clip":
        return oar.optimizer.SGD(learning_rate=0.5, parameters=params, grad_clip=nn.ClipGradByGlobalNorm(CLIP))
    return oar.optimizer.Adam(learning_rate=0.01, parameters=params)


def data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((STEPS, BATCH, 8)).astype("float32")
    w = rng.standard_normal((8, 4))
    y = (x @ w).argmax(-1).astype("int64")
    return x, y


def reference(kind, opt_name):
    """The whole model in this process, with the same seed and items."""
    oar.seed(2024)
    layers, named, shared = [], {}, {}
    for i, d in enumerate(descs(kind)):
        if isinstance(d, SharedLayerDesc):
            first = d.layer_name not in shared
            if first:  # one layer per key, built where it first appears
                shared[d.layer_name] = d.build_layer()
            la = shared[d.layer_name]
            layers.append(la if d.forward_func is None else (lambda h, la=la, f=d.forward_func: f(la, h)))
            if first:
                named.update({f"shared_layers.{d.layer_name}.{k}": p for k, p in la.named_parameters()})
            continue
        la = d.build_layer() if isinstance(d, LayerDesc) else d
        layers.append(la)
        if isinstance(la, nn.Layer):
            named.update({f"{i}.{k}": p for k, p in la.named_parameters()})
    opt = make_opt(opt_name, list(named.values()))
    x, y = data()
    losses, norms = [], []
    for s in range(STEPS):
        total = 0
        for m in range(M):  # mean of the micro-batch mean losses
            h = oar.to_tensor(x[s, m * (BATCH // M):(m + 1) * (BATCH // M)])
            for la in layers:
                h = la(*h) if isinstance(h, tuple) else la(h)
            total = total + F.cross_entropy(h, oar.to_tensor(y[s, m * (BATCH // M):(m + 1) * (BATCH // M)]))
        loss = total / M
        loss.backward()
        norms.append(np.sqrt(sum((p.grad.numpy().astype("float64") ** 2).sum() for p in named.values())))
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    params = {name: p.numpy() for name, p in named.items()}
    return np.array(losses), params, norms


def expected_schedule(stages, stage):
    # Written out for M = 4: warm-up forwards, then F/B pairs, then backwards.
    table = {
        2: ["F0 F1 B0 F2 B1 F3 B2 B3", "F0 B0 F1 B1 F2 B2 F3 B3"],
        4: ["F0 F1 F2 F3 B0 B1 B2 B3", "F0 F1 F2 B0 F3 B1 B2 B3", "F0 F1 B0 F2 B1 F3 B2 B3",
            "F0 B0 F1 B1 F2 B2 F3 B3"],
    }
    return table[stages][stage]


def pipeline(kind, opt_name, group=None, seg="uniform"):
    oar.seed(2024)
    stages = group.nranks if group is not None else n
    pl = PipelineLayer(descs(kind), num_stages=stages, loss_fn=nn.CrossEntropyLoss(), seg_method=seg,
                       group=group)
    pp = PipelineParallel(pl, num_micro_batches=M, group=group)
    opt = make_opt(opt_name, pp.parameters())
    x, y = data()
    first, last = pp.is_pipeline_first_stage, pp.is_pipeline_last_stage
    losses = []
    for s in range(STEPS):
        # Only the first stage needs the inputs and the last the labels.
        xb = oar.to_tensor(x[s]) if first else None
        yb = oar.to_tensor(y[s]) if last else None
        losses.append(float(pp.train_batch([xb, yb], opt)))
    got = " ".join(f"{k}{m}" for k, m in pp.schedule)
    return np.array(losses), {name: p.numpy() for name, p in pp.named_parameters()}, got, pp


def check_parity(kind, opt_name, group=None, seg="uniform"):
    global checks
    ref_losses, ref_params, norms = reference(kind, opt_name)
    losses, params, sched, pp = pipeline(kind, opt_name, group, seg)
    tag = f"{kind}/{opt_name}/{seg}/group={None if group is None else group.ranks}"
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, err_msg=f"{tag} losses")
    if opt_name == "sgd_clip":
        assert min(norms) > CLIP, (tag, norms)  # every step clipped
    else:
        assert ref_losses[-1] < ref_losses[0], (tag, ref_losses)  # it trained
    assert params, f"{tag}: stage {pp.stage_id} holds no parameters"
    for name, p in params.items():
        # Sublayers keep their index in the whole model, as in one process.
        key = name[len("_layers."):]
        np.testing.assert_allclose(p, ref_params[key], rtol=1e-5, atol=1e-6, err_msg=f"{tag} {name}")
    stages = pp.num_stages
    if M == 4 and stages in (2, 4):
        assert sched == expected_schedule(stages, pp.stage_id), (tag, pp.stage_id, sched)
    checks += 3
    return pp


pp = check_parity("mlp", "sgd")
check_parity("mlp", "adam")
check_parity("tuple", "adam", seg="layer:Block")
check_parity("shared", "sgd_clip")

# eval_batch: the whole-model forward / loss without touching the parameters.
before = [p.numpy() for p in pp.parameters()]
x, y = data()
xb = oar.to_tensor(x[0]) if pp.is_pipeline_first_stage else None
yb = oar.to_tensor(y[0]) if pp.is_pipeline_last_stage else None
loss = pp.eval_batch([xb, yb], compute_loss=True)
out = pp.eval_batch([xb, yb])
oar.seed(2024)
ref_layers = [d.build_layer() if isinstance(d, LayerDesc) else d for d in descs("mlp")]
ref_opt = make_opt("sgd", [p for la in ref_layers for p in la.parameters()])
for s in range(STEPS):  # replay the SGD run to reach the same parameters
    total = 0
    for m in range(M):
        h = oar.to_tensor(x[s, m * 4:(m + 1) * 4])
        for la in ref_layers:
            h = la(h)
        total = total + F.cross_entropy(h, oar.to_tensor(y[s, m * 4:(m + 1) * 4]))
    (total / M).backward()
    ref_opt.step()
    ref_opt.clear_grad()
h = oar.to_tensor(x[0])
for la in ref_layers:
    h = la(h)
np.testing.assert_allclose(float(loss), float(F.cross_entropy(h, oar.to_tensor(y[0]))), rtol=1e-5)
if pp.is_pipeline_last_stage:
    np.testing.assert_allclose(out.numpy(), h.numpy(), rtol=1e-5, atol=1e-6)
else:
    assert out is None
assert pp.schedule == [("F", m) for m in range(M)], pp.schedule
for p, q in zip(before, pp.parameters()):
    np.testing.assert_array_equal(p, q.numpy())
checks += 3

# Two 2-stage pipelines side by side on sub-groups of non-adjacent ranks.
if n == 4:
    groups = [dist.new_group([0, 2]), dist.new_group([1, 3])]
    check_parity("mlp", "adam", group=groups[rank % 2])

# Errors, raised on every rank before any message is exchanged.
try:
    PipelineLayer(descs("mlp"), num_stages=n + 1, loss_fn=nn.CrossEntropyLoss())
    raise AssertionError("num_stages != group size was accepted")
except ValueError as e:
    assert str(e).startswith("[oar.distributed.PipelineLayer] num_stages"), e
x6 = oar.ones([6, 8])
try:
    # Every rank holds the batch, so every rank can tell.
    pp.train_batch([x6, oar.zeros([6], dtype="int64")], make_opt("sgd", pp.parameters()))
    raise AssertionError("a batch not divisible by num_micro_batches was accepted")
except ValueError as e:
    assert str(e).startswith("[oar.distributed.PipelineParallel]") and "divisible" in str(e), e
checks += 2

dist.barrier()
print(f"rank {rank}: {checks} pipeline checks passed", flush=True)
