"""Loss and gradients of an MLP or the small GPT under data parallel, tensor
parallel (column then row splits), dp x mp on a 2x2 mesh and the sharding
stages 1/2/3, against the same model trained in one process.

usage: shard_parity.py {mlp|gpt} SETUP [SETUP ...]; each rank prints one
"ok <setup>" line per setup that matched."""
import sys

import numpy as np

import oar
import oar.distributed as dist
import oar.nn as nn
import oar.nn.functional as F
from oar.distributed import Replicate, Shard
from oar.distributed.sharding import ShardingStage1, ShardingStage2, ShardingStage3, shard_optimizer

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
model_kind, setups = sys.argv[1], sys.argv[2:]
STEPS = 4


def _contiguous_reshape():
    """A view op on a distributed tensor (strided_slice, fused_attention's
    output) can leave a strided local piece under a wrapper whose strides say
    contiguous; reshape then fails ("the input's strides do not allow a
    view"). Copy such a piece first (elementwise ops produce contiguous pieces)."""
    plain = oar._C.reshape

    def reshape(x, shape):
        if x.is_dist() and not x._local_value().is_contiguous():
            x = x + oar.zeros([], dtype=str(x.dtype).split(".")[-1])
        return plain(x, shape)

    oar._C.reshape = reshape


_contiguous_reshape()
rng = np.random.default_rng(0)

if model_kind == "gpt":
    from oar.models import GPTConfig, GPTForCausalLM

    cfg = GPTConfig(vocab_size=64, max_position_embeddings=8, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=4, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    data = rng.integers(0, 64, (8, 8)).astype("int64")
    labels = data
    COLUMN, ROW = ("qkv_proj", "fc_in"), ("out_proj", "fc_out")

    def make():
        oar.seed(0)
        return GPTForCausalLM(cfg)

    def loss_of(model, x, y):
        return model(x, labels=y)[0]
else:
    data = rng.standard_normal((8, 6)).astype("float32")
    labels = rng.integers(0, 4, 8).astype("int64")
    COLUMN, ROW = ("0",), ("2",)

    def make():
        oar.seed(0)
        return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))

    def loss_of(model, x, y):
        return F.cross_entropy(model(x), y)


def train(model, opt, x, y, to_np, switch=None):
    """(losses over STEPS AdamW steps, {param name: grad at step 0});
    switch(opt) gives the optimizer for the second half."""
    losses, grads = [], None
    for s in range(STEPS):
        if switch is not None and s == STEPS // 2:
            opt = switch(opt)
        loss = loss_of(model, x, y)
        loss.backward()
        if s == 0:
            grads = {k: to_np(p.grad) for k, p in model.named_parameters()}
        losses.append(float(to_np(loss)))
        opt.step()
        opt.clear_grad()
    return np.array(losses), grads


def adamw(model, clip=False):
    # a clip norm well below the gradients' makes the global norm matter
    return oar.optimizer.AdamW(learning_rate=0.01, parameters=model.parameters(), weight_decay=0.01,
                               grad_clip=nn.ClipGradByGlobalNorm(0.05) if clip else None)


_refs = {}


def reference(clip):
    if clip not in _refs:
        ref = make()
        _refs[clip] = train(ref, adamw(ref, clip), oar.to_tensor(data), oar.to_tensor(labels), lambda t: t.numpy())
    return _refs[clip]


def split_fn(mp_dim, ndim):
    """shard_fn for shard_layer: column-split up-projections (weight [in, out]
    Shard(1), bias Shard(0)), row-split down-projections (weight Shard(0))."""
    def place(dim):
        pl = [Replicate()] * ndim
        pl[mp_dim] = Shard(dim)
        return pl

    def fn(name, sub, mesh):
        last = name.split(".")[-1]
        if last in COLUMN:
            sub.weight = dist.shard_tensor(sub.weight, mesh, place(1))
            sub.bias = dist.shard_tensor(sub.bias, mesh, place(0))
        elif last in ROW:
            sub.weight = dist.shard_tensor(sub.weight, mesh, place(0))
    return fn


mesh1 = dist.ProcessMesh(list(range(n)), dim_names=["dp"])
mesh2 = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"]) if n == 4 else None
configs = {  # setup: (mesh, batch placements, shard_fn for shard_layer, shard_fn for shard_optimizer)
    "dp": (mesh1, [Shard(0)], None, None),
    "mp": (mesh1, [Replicate()], split_fn(0, 1), None),
    "dpmp": (mesh2, [Shard(0), Replicate()], split_fn(1, 2), None),
    "stage1": (mesh1, [Shard(0)], None, ShardingStage1("dp", mesh1)),
    "stage2": (mesh1, [Shard(0)], None, ShardingStage2("dp", mesh1)),
    "stage3": (mesh1, [Shard(0)], None, ShardingStage3("dp", mesh1)),
    "stage3_mp": (mesh2, [Shard(0), Replicate()], split_fn(1, 2), ShardingStage3("dp", mesh2)),
    "stage1_mp": (mesh2, [Shard(0), Replicate()], split_fn(1, 2), ShardingStage1("dp", mesh2)),
}


def full(t):
    return dist.unshard_dtensor(t).numpy()


for setup in setups:
    clip = setup.endswith("_clip")  # the same setup with global-norm gradient clipping
    # "_resume": unsharded steps first, then the optimizer (and its state) is sharded
    resume = setup.endswith("_resume")
    mesh, batch_pl, layer_fn, opt_fn = configs[setup.rsplit("_", 1)[0] if clip or resume else setup]
    ref_losses, ref_grads = reference(clip)
    if clip:  # the clip must be active for the check to mean anything
        assert not np.allclose(ref_losses, reference(False)[0], rtol=1e-4), ref_losses
    model = dist.shard_layer(make(), mesh, layer_fn)
    opt = shard_optimizer(adamw(model, clip), None if resume else opt_fn)
    switch = (lambda o: shard_optimizer(o._inner, opt_fn)) if resume else None
    if setup.startswith("stage3") and not resume:  # the parameters are now stored sharded along dp
        for k, p in model.named_parameters():
            free = [d for d in range(len(p.shape)) if Shard(d) not in p.placements[1:] and p.shape[d] >= n]
            assert isinstance(p.placements[0], Shard if free else Replicate), (k, p.placements)
    x = dist.shard_tensor(oar.to_tensor(data), mesh, batch_pl)
    y = dist.shard_tensor(oar.to_tensor(labels), mesh, batch_pl)
    losses, grads = train(model, opt, x, y, full, switch)
    assert sorted(grads) == sorted(ref_grads)
    for k, g in grads.items():
        scale = np.abs(ref_grads[k]).max()
        np.testing.assert_allclose(g, ref_grads[k], rtol=1e-5, atol=1e-5 * scale,
                                   err_msg=f"rank {rank}: {model_kind} {setup} grad of {k}")
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, err_msg=f"rank {rank}: {model_kind} {setup} losses")
    assert losses[-1] < losses[0], losses
    if opt_fn is not None and not setup.startswith("stage3") and not resume:
        # stages 1/2: this rank holds only its slice of the optimizer state
        sliced = [(k, p) for k, p in model.named_parameters() if id(p) in opt._slices]
        assert any(len(p.shape) == 2 for k, p in sliced), [k for k, _ in sliced]
        for k, p in sliced:
            m1 = opt._accumulators[id(p)]["moment1"]
            assert isinstance(m1.placements[0], Shard), (k, m1.placements)
            assert m1._local_value().size < p._local_value().size, k
    # one write per line: mpirun interleaves the ranks' output by write
    sys.stdout.write(f"rank {rank}: ok {model_kind} {setup};\n")
    sys.stdout.flush()
