"""fleet on N ranks against a NumPy reference: a 2-layer MLP (Linear, ReLU,
Linear, mean squared error) trained with SGD (Momentum for sharding) on the
same global batches, under each layout given on the command line:

  dp        fleet.init() -> DataParallel over all ranks
  mp        mp_degree=N -> Column/RowParallelLinear on the fleet's mp group, TensorParallel
            (with a global-norm clip: mp, dpmp, ppmp, dppp and sharding clip)
  pp        pp_degree=N -> PipelineLayer(topology=...), PipelineParallel with 2 micro-batches
  sharding  sharding_degree=N -> optimizer state owned per rank, parameters broadcast
  dpmp      dp=2 x mp=N/2 (4 ranks) -> groups checked against the layout, hybrid optimizer
  ppmp      pp=2 x mp=N/2 (4 ranks) -> a column-parallel stage feeding a row-parallel stage
  dppp      dp=2 x pp=N/2 (4 ranks) -> each pipeline on half the batch, gradients averaged
  scaler    sharding_degree=N with fleet.distributed_scaler: an overflow on one
            rank makes every rank skip the step and lower the scale
  objects   send_object_list / recv_object_list, gloo_* barrier, fleet.util

Parameters after every step must equal the reference (rtol 1e-5). Prints
"rank R: <mode> fleet checks passed" per mode."""
import sys

import numpy as np

import oar
import oar.distributed as dist
import oar.nn as nn
from oar.distributed import fleet
from oar.distributed.fleet import meta_parallel as mpu

IN, H, OUT, B, STEPS, LR, MU, CLIP = 6, 8, 4, 8, 3, 0.1, 0.9, 0.3
dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
rng = np.random.default_rng(11)
W0 = {"w1": rng.standard_normal((IN, H)) * 0.5, "b1": rng.standard_normal(H) * 0.1,
      "w2": rng.standard_normal((H, OUT)) * 0.5, "b2": rng.standard_normal(OUT) * 0.1}
X = rng.standard_normal((STEPS, B, IN))
T = rng.standard_normal((STEPS, B, OUT))


def reference(momentum=False, clip=False):
    """Parameters after each step of full-batch training, in NumPy (with
    ``clip``: gradients scaled to a global norm of at most CLIP)."""
    p = {k: v.copy() for k, v in W0.items()}
    vel = {k: np.zeros_like(v) for k, v in p.items()}
    out = []
    for s in range(STEPS):
        x, t = X[s], T[s]
        h = x @ p["w1"] + p["b1"]
        a = np.maximum(h, 0)
        y = a @ p["w2"] + p["b2"]
        dy = 2 * (y - t) / y.size
        dh = (dy @ p["w2"].T) * (h > 0)
        g = {"w2": a.T @ dy, "b2": dy.sum(0), "w1": x.T @ dh, "b1": dh.sum(0)}
        if clip:
            norm = np.sqrt(sum((v ** 2).sum() for v in g.values()))
            assert norm > CLIP, norm  # so that the clip matters
            g = {k: v * CLIP / norm for k, v in g.items()}
        for k in p:
            if momentum:
                vel[k] = MU * vel[k] + g[k]
                p[k] = p[k] - LR * vel[k]
            else:
                p[k] = p[k] - LR * g[k]
        out.append({k: v.copy() for k, v in p.items()})
    return out


def load(param, value):
    with oar.no_grad():
        v = oar.to_tensor(value.astype("float32"))
        if param.is_dist():
            v = dist.shard_tensor(v, param.process_mesh, param.placements)._local_value()
            param._local_value().copy_(v, False)
        else:
            param.copy_(v, False)


def full(param):
    return (dist.unshard_dtensor(param) if param.is_dist() else param).numpy()


def check(params, want, step, mode):
    for k, p in params.items():
        np.testing.assert_allclose(full(p), want[k], rtol=1e-5, atol=1e-6,
                                   err_msg=f"rank {rank} {mode} step {step} {k}")


class MLP(nn.Layer):
    def __init__(self, parallel):
        super().__init__()
        if parallel:  # no mp_group: the fleet layout's model-parallel group
            self.fc1 = mpu.ColumnParallelLinear(IN, H, gather_output=False)
            self.fc2 = mpu.RowParallelLinear(H, OUT, input_is_parallel=True)
        else:
            self.fc1, self.fc2 = nn.Linear(IN, H), nn.Linear(H, OUT)

    def forward(self, x):
        return self.fc2(nn.functional.relu(self.fc1(x)))


def init(**hybrid):
    s = fleet.DistributedStrategy()
    s.hybrid_configs = hybrid
    if "pp_degree" in hybrid:
        s.pipeline_configs = {"accumulate_steps": 2, "micro_batch_size": B // 2 // hybrid["dp_degree"]}
    fleet.init(is_collective=True, strategy=s)
    return fleet.get_hybrid_communicate_group()


def make_opt(params, momentum=False, clip=False):
    gc = nn.ClipGradByGlobalNorm(CLIP) if clip else None
    if momentum:
        return oar.optimizer.Momentum(LR, MU, parameters=params, grad_clip=gc)
    return oar.optimizer.SGD(LR, parameters=params, grad_clip=gc)


def run_flat(mode, hcg, parallel, momentum=False, clip=False):
    """dp / mp / dpmp / sharding: plain training loop with the fleet wrappers."""
    model = MLP(parallel)
    named = {"w1": model.fc1.weight, "b1": model.fc1.bias, "w2": model.fc2.weight, "b2": model.fc2.bias}
    for k, p in named.items():
        load(p, W0[k])
    model = fleet.distributed_model(model)
    opt = fleet.distributed_optimizer(make_opt(model.parameters(), momentum, clip))
    dp = hcg.get_data_parallel_world_size() * hcg.get_sharding_parallel_world_size()
    me = hcg.get_data_parallel_rank() * hcg.get_sharding_parallel_world_size() + hcg.get_sharding_parallel_rank()
    rows = slice(me * B // dp, (me + 1) * B // dp)
    want = reference(momentum, clip)
    for s in range(STEPS):
        y = model(oar.to_tensor(X[s, rows].astype("float32")))
        loss = ((y - oar.to_tensor(T[s, rows].astype("float32"))) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        check(named, want[s], s, mode)
    return model, opt, named


def mode_dp():
    hcg = init()
    assert hcg.get_parallel_mode() == dist.ParallelMode.DATA_PARALLEL
    assert hcg.get_data_parallel_world_size() == n and hcg.get_data_parallel_rank() == rank
    model, opt, _ = run_flat("dp", hcg, False)
    assert isinstance(model, oar.DataParallel) and model._group is hcg.get_data_parallel_group()
    assert fleet.worker_index() == rank and fleet.worker_num() == n and fleet.is_first_worker() == (rank == 0)


def mode_mp():
    hcg = init(dp_degree=1, mp_degree=n, pp_degree=1)
    assert hcg.get_parallel_mode() == dist.ParallelMode.TENSOR_PARALLEL
    assert hcg.get_model_parallel_rank() == rank and hcg.get_model_parallel_group().ranks == list(range(n))
    model, opt, named = run_flat("mp", hcg, True, clip=True)  # the norm sums the split gradients' pieces
    assert isinstance(model, mpu.TensorParallel)
    assert named["w1"].process_mesh.process_ids == list(range(n))


def mode_dpmp():
    mp = n // 2
    hcg = init(dp_degree=2, mp_degree=mp)
    mine = [r for r in range(n) if r // mp == rank // mp]
    assert hcg.get_model_parallel_group().ranks == mine, hcg
    assert hcg.get_data_parallel_group().ranks == [rank % mp, rank % mp + mp], hcg
    assert hcg.get_data_parallel_rank() == rank // mp and hcg.get_model_parallel_rank() == rank % mp
    assert hcg.get_check_parallel_group().ranks == mine
    _, opt, named = run_flat("dpmp", hcg, True, momentum=True, clip=True)
    assert isinstance(opt, fleet.HybridParallelOptimizer)
    assert named["w2"].process_mesh.process_ids == mine


def mode_sharding():
    hcg = init(dp_degree=1, sharding_degree=n)
    assert hcg.get_parallel_mode() == dist.ParallelMode.SHARDING_PARALLEL
    model, opt, named = run_flat("sharding", hcg, False, momentum=True, clip=True)
    assert isinstance(model, mpu.ShardingParallel)
    # Each rank keeps the velocity of the parameters it owns, and every
    # parameter is owned by exactly one rank.
    owned = [k for k, p in named.items() if id(p) in opt._inner_opt._accumulators]
    everyone = []
    dist.all_gather_object(everyone, owned, group=hcg.get_sharding_parallel_group())
    assert sorted(sum(everyone, [])) == sorted(named), everyone
    assert len(opt.state_dict()) < 2 * len(named)


def mode_pp(mp=1, dp=1, clip=False):
    pp = n // mp // dp
    hcg = init(dp_degree=dp, mp_degree=mp, pp_degree=pp)
    assert hcg.get_parallel_mode() == dist.ParallelMode.PIPELINE_PARALLEL
    # layout order dp, pp, ..., mp: rank = (dp_rank * pp + stage) * mp + mp_rank
    stage = rank // mp % pp
    assert hcg.get_stage_id() == stage and hcg.is_first_stage == (stage == 0)
    assert hcg.get_pipe_parallel_group().ranks == [(rank // (mp * pp) * pp + s) * mp + rank % mp for s in range(pp)]
    assert hcg.get_data_parallel_rank() == rank // (mp * pp)
    if mp == 1:
        descs = [mpu.LayerDesc(nn.Linear, IN, H), nn.ReLU(), mpu.LayerDesc(nn.Linear, H, OUT)] + \
            [nn.Identity() for _ in range(max(0, n - 2))]
    else:  # each stage holds model-parallel layers on its own mp group
        descs = [mpu.LayerDesc(mpu.ColumnParallelLinear, IN, H, gather_output=False), nn.ReLU(),
                 mpu.LayerDesc(mpu.RowParallelLinear, H, OUT, input_is_parallel=True)]
    pl = mpu.PipelineLayer(descs, loss_fn=nn.MSELoss(), topology=hcg.topology())
    own = {k: getattr(pl, k) for k in ("0", "2") if k in pl._sub_layers}
    named = {}
    for k, layer in own.items():
        w, b = ("w1", "b1") if k == "0" else ("w2", "b2")
        named[w], named[b] = layer.weight, layer.bias
    for k, p in named.items():
        load(p, W0[k])
    model = fleet.distributed_model(pl)
    assert isinstance(model, mpu.PipelineParallel) and model.accumulate_steps == 2
    opt = fleet.distributed_optimizer(make_opt(model.parameters(), clip=clip))
    want = reference(clip=clip)
    rows = slice(hcg.get_data_parallel_rank() * B // dp, (hcg.get_data_parallel_rank() + 1) * B // dp)
    for s in range(STEPS):
        model.train_batch([oar.to_tensor(X[s, rows].astype("float32")), oar.to_tensor(T[s, rows].astype("float32"))],
                          opt)
        check(named, want[s], s, "pp")
    if mp > 1:
        assert all(p.process_mesh.process_ids == hcg.get_model_parallel_group().ranks for p in named.values()
                   if p.is_dist())


def mode_ppmp():
    mode_pp(mp=n // 2, clip=True)  # the norm sums over the model-parallel and pipeline groups


def mode_dppp():
    mode_pp(dp=2, clip=True)


def mode_scaler():
    init(dp_degree=1, sharding_degree=n)
    net = MLP(False)
    for k, p in {"w1": net.fc1.weight, "b1": net.fc1.bias, "w2": net.fc2.weight, "b2": net.fc2.bias}.items():
        load(p, W0[k])
    model = fleet.distributed_model(net)
    opt = fleet.distributed_optimizer(oar.optimizer.SGD(LR, parameters=model.parameters()))
    scaler = fleet.distributed_scaler(oar.amp.GradScaler(init_loss_scaling=1024.0))
    before = net.fc1.weight.numpy().copy()
    loss = ((model(oar.to_tensor(X[0].astype("float32"))) - oar.to_tensor(T[0].astype("float32"))) ** 2).mean()
    if rank == 1:
        loss = loss * float("inf")  # this rank's gradients overflow
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.clear_grad()
    np.testing.assert_array_equal(net.fc1.weight.numpy(), before, err_msg=f"rank {rank} stepped")
    assert scaler.get_loss_scaling() == 512.0, scaler.get_loss_scaling()


def mode_objects():
    fleet.init(is_collective=True)
    world = dist.get_group(0)
    if rank == 0:
        dist.send_object_list([{"a": 1}, "two", 3.0], dst=1)
    elif rank == 1:
        got = [None, None, None]
        dist.recv_object_list(got, src_in_group=0, group=world)
        assert got == [{"a": 1}, "two", 3.0], got
    dist.gloo_init_parallel_env(rank, n, "127.0.0.1:6170")
    dist.gloo_barrier()
    dist.gloo_release()
    total = fleet.util.all_reduce(np.array([rank, 1]), "sum")
    assert total.tolist() == [n * (n - 1) // 2, n], total
    assert fleet.util.all_gather(rank * 10) == [r * 10 for r in range(n)]
    assert fleet.util.get_file_shard(list("abcde")) == np.array_split(list("abcde"), n)[rank].tolist()
    fleet.barrier_worker()
    # fleet.utils.hybrid_parallel_util.fused_allreduce_gradients: the mean over the dp group
    w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    v = oar.to_tensor([3.0], dtype="float64", stop_gradient=False)
    ((w * (rank + 1)).sum() + (v * rank).sum()).backward()
    fleet.utils.hybrid_parallel_util.fused_allreduce_gradients([w, v], fleet.get_hybrid_communicate_group())
    assert w.grad.numpy().tolist() == [(n + 1) / 2] * 2 and v.grad.numpy().tolist() == [(n - 1) / 2], (w.grad, v.grad)


for mode in sys.argv[1:]:
    globals()[f"mode_{mode}"]()
    print(f"rank {rank}: {mode} fleet checks passed", flush=True)
