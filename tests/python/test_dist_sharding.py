"""Sharded optimizers (stages 1/2/3) and shard_dataloader: parity of an MLP
and the small GPT with one process on real ranks, and argument checks."""

import numpy as np
import pytest

import oar
import oar.distributed as dist
from dist_util import ranks_ok, run_ranks
from oar.distributed.sharding import (ShardingStage1, ShardingStage2, ShardingStage3, shard_dataloader,
                                      shard_optimizer)

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="oar was built without MPI")

ALL = ["dp", "mp", "dpmp", "stage1", "stage2", "stage3", "stage1_mp", "stage3_mp"]
# MLP only: global-norm clipping; sharding an optimizer that already has state
EXTRA = ["dp_clip", "stage1_clip", "stage2_clip", "stage3_clip", "stage1_mp_clip", "stage1_resume", "stage2_resume",
         "stage3_resume"]


@pytest.mark.parametrize("model", ["mlp", "gpt"])
def test_parity_4_ranks(model):
    # dp, mp (column then row splits), dp x mp on 2x2, stages 1/2/3 on dp and
    # with mp: loss and every gradient at step 0 and the losses of 4 AdamW
    # steps equal one process within 1e-5 relative (the MLP also with
    # global-norm gradient clipping, which must see every gradient slice, and
    # with the optimizer sharded after two unsharded steps).
    setups = ALL + (EXTRA if model == "mlp" else [])
    p = run_ranks(4, "shard_parity.py", model, *setups)
    found = ranks_ok(p, 4 * len(setups), rf"rank (\d+): ok {model} (\w+);")
    assert sorted(found) == sorted((str(r), s) for r in range(4) for s in setups)
    # every op of these models has an SPMD rule (none falls back to replicating)
    assert "has no SPMD rule" not in p.stderr, p.stderr[-3000:]


def test_parity_2_ranks():
    setups = ["dp", "mp", "stage1", "stage2", "stage3"]
    ranks_ok(run_ranks(2, "shard_parity.py", "mlp", *setups), 2 * len(setups), r"rank \d+: ok mlp \w+;")


@pytest.mark.parametrize("n", [2, 4])
def test_shard_dataloader(n):
    found = ranks_ok(run_ranks(n, "shard_data.py"), n, r"rank \d+: (\d+) shard_dataloader checks passed")
    assert all(int(c) >= 10 for c in found)


# ---- one process (a job of one rank)
def _mesh():
    return dist.ProcessMesh([0], dim_names=["dp"])


def test_stage_arguments():
    mesh = _mesh()
    assert ShardingStage2(mesh).stage == 2  # Paddle's older ShardingStageN(mesh) form
    with pytest.raises(ValueError, match=r"^\[oar.distributed.ShardingStage1\] mesh_dim 'mp'"):
        ShardingStage1("mp", mesh)
    with pytest.raises(ValueError, match=r"^\[oar.distributed.ShardingStage3\] mesh_dim 1"):
        ShardingStage3(1, mesh)
    with pytest.raises(TypeError, match=r"^\[oar.distributed.ShardingStage2\] mesh_dim"):
        ShardingStage2(1.5)
    with pytest.raises(TypeError, match=r"^\[oar.distributed.ShardingStage1\] mesh must"):
        ShardingStage1(0, mesh=[0, 1])


def test_shard_optimizer_arguments():
    with pytest.raises(TypeError, match=r"^\[oar.distributed.shard_optimizer\] expected an oar.optimizer"):
        shard_optimizer(object())
    w = oar.to_tensor([1.0], stop_gradient=False)
    with pytest.raises(TypeError, match=r"^\[oar.distributed.shard_optimizer\] shard_fn"):
        shard_optimizer(oar.optimizer.SGD(parameters=[w]), shard_fn=lambda name, p, acc: acc)


@pytest.mark.parametrize("stage", [None, ShardingStage1, ShardingStage2, ShardingStage3])
def test_one_rank_matches_plain_optimizer(stage):
    # On a one-rank mesh nothing is split: every stage must give the plain update.
    mesh = _mesh()
    w0 = np.arange(12, dtype="float32").reshape(4, 3) / 10
    plain = oar.to_tensor(w0, stop_gradient=False)
    opt = oar.optimizer.AdamW(0.1, parameters=[plain], weight_decay=0.1)
    w = dist.shard_tensor(oar.to_tensor(w0), mesh, [dist.Replicate()], stop_gradient=False)
    sopt = shard_optimizer(oar.optimizer.AdamW(0.1, parameters=[w], weight_decay=0.1),
                           None if stage is None else stage("dp", mesh))
    for _ in range(3):
        (plain * plain).sum().backward()
        opt.step()
        opt.clear_grad()
        (w * w).sum().backward()
        sopt.step()
        sopt.clear_grad()
    np.testing.assert_allclose(dist.unshard_dtensor(w).numpy(), plain.numpy(), rtol=1e-6)
    # a plain NumPy AdamW for the first step pins the update itself
    assert not np.allclose(plain.numpy(), w0)


def test_local_parameters_pass_through():
    # parameters that are not distributed are updated as by the inner optimizer
    w = oar.to_tensor([2.0, -1.0], stop_gradient=False)
    opt = shard_optimizer(oar.optimizer.SGD(0.5, parameters=[w]), ShardingStage1("dp", _mesh()))
    (w * 3.0).sum().backward()
    opt.step()
    np.testing.assert_allclose(w.numpy(), [0.5, -2.5])


def test_shard_dataloader_arguments():
    mesh = _mesh()
    with pytest.raises(TypeError, match=r"^\[oar.distributed.shard_dataloader\] meshes"):
        shard_dataloader([], "mesh")
    with pytest.raises(TypeError, match=r"^\[oar.distributed.shard_dataloader\] meshes"):
        shard_dataloader([], [])
    with pytest.raises(ValueError, match=r"^\[oar.distributed.shard_dataloader\] shard_dims needs one entry"):
        shard_dataloader([], [mesh, mesh], shard_dims=[0])
    with pytest.raises(ValueError, match=r"^\[oar.distributed.shard_dataloader\] shard dim 'mp'"):
        shard_dataloader([], mesh, shard_dims="mp")
    with pytest.raises(TypeError, match=r"^\[oar.distributed.shard_dataloader\] a shard dim"):
        shard_dataloader([], mesh, shard_dims=1.0)


def test_shard_dataloader_batch_kinds():
    mesh = _mesh()
    x = np.arange(6, dtype="float32").reshape(3, 2)
    batches = [x, (x, 7), {"a": oar.to_tensor(x), "b": "text"}, oar.to_tensor(np.float32(2.0))]
    out = list(shard_dataloader(batches, mesh, shard_dims="dp"))
    assert out[0].placements == [dist.Shard(0)]
    np.testing.assert_array_equal(out[0].numpy(), x)
    assert isinstance(out[1], tuple) and out[1][1] == 7 and out[1][0].is_dist()
    assert out[2]["b"] == "text" and out[2]["a"].placements == [dist.Shard(0)]
    assert out[3].placements == [dist.Replicate()]  # a 0-D tensor has no batch dim to split
