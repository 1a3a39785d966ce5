"""dist.parallelize (tensor, sequence and data parallel plans, sharding
levels) and dist.to_static's DistModel on real ranks: the losses of a few
AdamW steps and the parameters after them equal the same model trained in one
process; plus shard_scaler, local_map, sharded state dicts and
shutdown/restart of a group.

usage: parallelize_parity.py SETUP [SETUP ...]; each rank prints
"rank R: ok SETUP;" per setup that passed."""
import sys
import tempfile

import numpy as np

import oar
import oar.distributed as dist
import oar.nn as nn
import oar.nn.functional as F
from oar.distributed import Replicate, Shard

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
STEPS = 3
rng = np.random.default_rng(0)
X2 = rng.standard_normal((8, 6)).astype("float32")
Y2 = rng.integers(0, 4, 8).astype("int64")
X3 = rng.standard_normal((2, 4, 6)).astype("float32")  # [b, s, h]
IDS = rng.integers(0, 16, (2, 6)).astype("int64")  # [b, s]
DATA = {"mlp": X2, "seq": X3, "cp": IDS}


class SeqNet(nn.Layer):
    """[b, s, h] -> linear -> (sequence parallel: layer norm) -> column / row split MLP."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 6)
        self.norm = nn.LayerNorm(6)
        self.up = nn.Linear(6, 8)
        self.down = nn.Linear(8, 6)

    def forward(self, x):
        h = self.norm(self.inp(x))
        return self.down(F.relu(self.up(h.transpose([1, 0, 2]))))


class Attn(nn.Layer):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class CPNet(nn.Layer):
    """token ids [b, s] -> embedding -> causal self-attention (2 heads) -> linear."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 8)
        # no bias: a key bias has a zero gradient (softmax ignores a per-query shift), so
        # AdamW would scale rounding noise into its updates
        self.qkv = nn.Linear(8, 24, bias_attr=False)
        self.attn = Attn()
        self.out = nn.Linear(8, 8)

    def forward(self, ids):
        h = self.emb(ids)
        b, s = h.shape[0], h.shape[1]
        q, k, v = [t.reshape([b, s, 2, 4]) for t in oar.split(self.qkv(h), 3, axis=-1)]
        return self.out(self.attn(q, k, v).reshape([b, s, 8]))


def make(kind):
    oar.seed(0)
    if kind == "seq":
        return SeqNet()
    if kind == "cp":
        return CPNet()
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))


def loss_of(kind, model, x, y):
    out = model(x)
    return (out * out).mean() if kind in ("seq", "cp") else F.cross_entropy(out, y)


def adamw(model):
    return oar.optimizer.AdamW(learning_rate=0.05, parameters=model.parameters(), weight_decay=0.01)


def reference(kind):
    model = make(kind)
    opt = adamw(model)
    x, y = oar.to_tensor(DATA[kind]), (oar.to_tensor(Y2) if kind == "mlp" else None)
    losses = []
    for _ in range(STEPS):
        loss = loss_of(kind, model, x, y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return np.array(losses), {k: p.numpy() for k, p in model.named_parameters()}


def full(t):
    return (dist.unshard_dtensor(t) if t.is_dist() else t).numpy()


MLP_PLAN = {"0": dist.ColWiseParallel(), "2": dist.RowWiseParallel()}
SEQ_PLAN = {"inp": dist.SequenceParallelBegin(need_transpose=True),
            "up": [dist.SequenceParallelEnd(need_transpose=False), dist.ColWiseParallel()],
            "down": dist.RowWiseParallel()}
SETUPS = {  # setup: (model kind, mesh, config, batch placements)
    "mp": ("mlp", ([0, 1], ["mp"]), {"mp_config": {"parallelize_plan": MLP_PLAN}}, [Replicate()]),
    "mp_regex": ("mlp", ([0, 1], ["mp"]), {"mp_config": {"parallelize_plan": {
        "[0]": dist.ColWiseParallel(), r"\d.weight": dist.RowWiseParallel()}}}, [Replicate()]),
    "dp": ("mlp", ([0, 1], ["dp"]), {"dp_config": {"sharding_level": 0}}, [Shard(0)]),
    "stage1": ("mlp", ([0, 1], ["dp"]), {"dp_config": {"sharding_level": 1}}, [Shard(0)]),
    "stage2": ("mlp", ([0, 1], ["dp"]), {"dp_config": {"sharding_level": 2}}, [Shard(0)]),
    "stage3": ("mlp", ([0, 1], ["dp"]), {"dp_config": {"sharding_level": "3"}}, [Shard(0)]),
    "dp_mp_pp": ("mlp", ([[[0]], [[1]]], ["dp", "mp", "pp"]),
                 {"dp_config": {"sharding_level": 1}, "mp_config": {"parallelize_plan": MLP_PLAN},
                  "pp_config": {"split_spec": {}}}, [Shard(0), Replicate()]),
    "cp_all2all": ("cp", ([0, 1], ["sep"]), {"cp_config": {"parallelize_plan": {
        "emb": dist.PrepareContextParallel("all2all"), "attn": dist.ContextParallel("all2all")}}}, [Replicate()]),
    "cp_p2p": ("cp", ([[0, 1]], ["mp", "sep"]), {
        "mp_config": {"parallelize_plan": {"qkv": dist.ColWiseParallel(), "out": dist.RowWiseParallel()}},
        "cp_config": {"parallelize_plan": {"": dist.PrepareContextParallel(), "attn": dist.ContextParallel()}}},
        [Replicate(), Replicate()]),
    "sp": ("seq", ([[0, 1]], ["dp", "mp"]), {"mp_config": {"parallelize_plan": SEQ_PLAN}},
           [Replicate(), Replicate()]),
}


def check(setup, losses, params, kind):
    ref_losses, ref_params = reference(kind)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, err_msg=f"rank {rank}: {setup} losses")
    assert losses[-1] < losses[0], losses
    assert sorted(params) == sorted(ref_params)
    for k, v in params.items():
        np.testing.assert_allclose(v, ref_params[k], rtol=1e-5, atol=1e-6, err_msg=f"rank {rank}: {setup} {k}")


def run_parallelize(setup):
    kind, (ids, names), config, batch_pl = SETUPS[setup]
    mesh = dist.ProcessMesh(ids, dim_names=names)
    model = make(kind)
    model, opt = dist.parallelize(model, adamw(model), mesh, config)
    placed = {k: p.placements for k, p in model.named_parameters()}
    if setup == "mp":
        assert placed["0.weight"] == [Shard(1)] and placed["0.bias"] == [Shard(0)], placed
        assert placed["2.weight"] == [Shard(0)] and placed["2.bias"] == [Replicate()], placed
    if setup == "sp":
        assert placed["up.weight"] == [Replicate(), Shard(1)] and placed["down.weight"] == [Replicate(), Shard(0)]
        seen = []  # the layer norm runs on [s/mp, b, h] pieces
        model.norm.register_forward_post_hook(
            lambda _l, _i, out: seen.append((out.placements, out._local_value().shape)))
    run_mesh = mesh.get_mesh_with_dim("pp", 0) if "pp" in names else mesh
    x = dist.shard_tensor(oar.to_tensor(DATA[kind]), run_mesh, batch_pl)
    y = dist.shard_tensor(oar.to_tensor(Y2), run_mesh, batch_pl) if kind == "mlp" else None
    if kind == "cp":  # the attention runs on half the heads, the other layers on half the sequence
        seen = []
        model.attn.register_forward_pre_hook(lambda _l, inp: seen.append(inp[0].placements))
        model.out.register_forward_pre_hook(lambda _l, inp: seen.append(inp[0].placements))
    losses = []
    for _ in range(STEPS):
        loss = loss_of(kind, model, x, y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(full(loss)))
    check(setup, np.array(losses), {k: full(p) for k, p in model.named_parameters()}, kind)
    if kind == "cp":
        assert [pl[-1] for pl in seen[:2]] == [Shard(2), Shard(1)], seen  # along "sep", the last mesh dim
    if setup == "sp":
        assert seen[0] == ([Replicate(), Shard(0)], [4 // n, 2, 6]), seen[0]


def run_static(setup):
    mesh = dist.ProcessMesh([0, 1], dim_names=["dp"])
    model = make("mlp")
    model, opt = dist.parallelize(model, adamw(model), mesh, {"dp_config": {"sharding_level": 0}})
    strategy = dist.Strategy({"sharding": {"enable": setup == "static_stage1", "stage": 1}})
    loader = dist.shard_dataloader([(X2, Y2)] * STEPS, mesh, shard_dims="dp")
    dm = dist.to_static(model, loader, F.cross_entropy, opt, strategy)
    losses = [float(dm(x, y)) for x, y in loader]
    check(setup, np.array(losses), {k: full(p) for k, p in model.named_parameters()}, "mlp")
    dm.eval()
    x, y = next(iter(loader))
    ev = float(dm(x, y))
    dm.predict()
    out = dm(x)
    ref = make("mlp")
    ref.set_state_dict({k: oar.to_tensor(full(p)) for k, p in model.named_parameters()})
    np.testing.assert_allclose(out, ref(oar.to_tensor(X2)).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ev, float(F.cross_entropy(ref(oar.to_tensor(X2)), oar.to_tensor(Y2))), rtol=1e-5)


def run_utils(setup):
    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    # local_map: each rank's row sums of its rows, as a Shard(0) result
    a = np.arange(12, dtype="float32").reshape(4, 3)
    f = dist.local_map(lambda t: t.sum(1), [[Shard(0)]], [[Shard(0)]], mesh)
    got = full(f(dist.shard_tensor(oar.to_tensor(a), mesh, [Shard(0)])))
    np.testing.assert_allclose(got, a.sum(1))
    # shard_scaler: an inf on rank 1 only makes every rank skip the step
    scaler = dist.shard_scaler(oar.amp.GradScaler(init_loss_scaling=4.0))
    w = dist.shard_tensor(oar.ones([2, 2]), mesh, [Shard(0)], stop_gradient=False)
    opt = oar.optimizer.SGD(1.0, parameters=[w])
    scaler.scale((w * 3.0).sum()).backward()
    if rank == 1:
        w.grad._local_value().copy_(oar.full([1, 2], float("inf")), False)
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(full(w), np.ones((2, 2)))  # skipped on both ranks
    assert scaler.get_loss_scaling() == 2.0, scaler.get_loss_scaling()
    # sharded state dict: pieces of a distributed tensor and a rule-split local tensor, saved and merged
    big = np.arange(8, dtype="float32").reshape(4, 2)
    sd = {"w": dist.shard_tensor(oar.to_tensor(big), mesh, [Shard(0)]),
          "b": oar.to_tensor(np.array([rank * 2.0, rank * 2.0 + 1], dtype="float32")),
          "r": oar.to_tensor(np.array([5.0], dtype="float32"))}
    ssd = dist.build_sharded_state_dict(sd, {"b": 0})
    assert ssd["w"].global_offset == (2 * rank, 0) and ssd["b"].global_shape == (4,), ssd
    path = tempfile.gettempdir() + "/oar_parallelize_ssd"
    if rank == 0:
        import shutil

        shutil.rmtree(path, ignore_errors=True)
    dist.barrier()
    dist.save_state_dict(ssd, path)
    merged = dist.load_merged_state_dict(path)
    np.testing.assert_array_equal(merged["w"].numpy(), big)
    np.testing.assert_array_equal(merged["b"].numpy(), [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(merged["r"].numpy(), [5.0])
    back = dist.build_sharded_state_dict({"b": oar.zeros([2])}, {"b": 0})
    dist.load_state_dict(back, path)
    np.testing.assert_array_equal(back["b"].local_tensor.numpy(), [rank * 2.0, rank * 2.0 + 1])
    # shutdown / restart of a group
    g = dist.new_group([0, 1])
    dist.shutdown_process_group(g)
    dist.restart_process_group(g)
    t = oar.to_tensor([float(rank + 1)])
    dist.all_reduce(t, group=g)
    assert float(t) == 3.0, float(t)


def run_conv(setup):
    # ConvParallel splits the width of a stride-2, width-2 kernel's input over "mp"
    mesh = dist.ProcessMesh([0, 1], dim_names=["mp"])
    x = rng.standard_normal((1, 2, 3, 8)).astype("float32")
    oar.seed(0)
    conv = nn.Conv2D(2, 3, kernel_size=[2, 2], stride=[1, 2])
    ref = nn.Conv2D(2, 3, kernel_size=[2, 2], stride=[1, 2])
    ref.set_state_dict(conv.state_dict())
    conv, _ = dist.parallelize(conv, None, mesh, {"mp_config": {"parallelize_plan": {"": dist.ConvParallel()}}})
    seen = []
    conv.register_forward_pre_hook(lambda _l, inp: seen.append(inp[0].placements))
    out = conv(oar.to_tensor(x))
    (out * out).sum().backward()
    want = ref(oar.to_tensor(x))
    (want * want).sum().backward()
    assert seen == [[Shard(3)]], seen
    np.testing.assert_allclose(full(out), want.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(full(conv.weight.grad), ref.weight.grad.numpy(), rtol=1e-5, atol=1e-5)


for setup in sys.argv[1:]:
    if setup in SETUPS:
        run_parallelize(setup)
    elif setup.startswith("static"):
        run_static(setup)
    elif setup == "conv":
        run_conv(setup)
    else:
        run_utils(setup)
    sys.stdout.write(f"rank {rank}: ok {setup};\n")
    sys.stdout.flush()
