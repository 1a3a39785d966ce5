"""shard_dataloader on the ranks of this job: each batch's pieces against
NumPy slices (whole batches on every rank, and per-rank pieces with
is_dataset_splitted), dict batches over two meshes, and an MLP trained from
the sharded loader against one process."""
import sys

import numpy as np

import oar
import oar.distributed as dist
import oar.nn as nn
import oar.nn.functional as F
from oar.distributed import Replicate, Shard
from oar.distributed.sharding import shard_dataloader, shard_optimizer
from oar.io import DataLoader, TensorDataset

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
checks = 0


def close(got, want, what):
    global checks
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"rank {rank}: {what}")
    checks += 1


rng = np.random.default_rng(0)
xs = rng.standard_normal((16, 3)).astype("float32")
ys = rng.integers(0, 4, 16).astype("int64")
mesh = dist.ProcessMesh(list(range(n)), dim_names=["dp"])
bs = 2 * n

# The whole batch on every rank: each rank keeps its rows.
loader = shard_dataloader(DataLoader(TensorDataset([oar.to_tensor(xs), oar.to_tensor(ys)]), batch_size=bs),
                          mesh, shard_dims="dp")
assert len(loader) == 16 // bs
for i, (bx, by) in enumerate(loader):
    assert bx.shape == [bs, 3] and bx.placements == [Shard(0)] and by.placements == [Shard(0)]
    rows = slice(i * bs + 2 * rank, i * bs + 2 * rank + 2)
    close(bx._local_value().numpy(), xs[rows], f"piece of batch {i}")
    close(by._local_value().numpy(), ys[rows], f"labels of batch {i}")
    close(dist.unshard_dtensor(bx).numpy(), xs[i * bs:(i + 1) * bs], f"batch {i}")

# shard_dims=None replicates.
bx, by = next(iter(shard_dataloader(DataLoader(TensorDataset([oar.to_tensor(xs), oar.to_tensor(ys)]),
                                               batch_size=bs), mesh)))
assert bx.placements == [Replicate()]
close(bx._local_value().numpy(), xs[:bs], "replicated batch")

# is_dataset_splitted: each rank's loader yields its own rows.
mine = TensorDataset([oar.to_tensor(xs[rank::n].copy())])
for i, (bx,) in enumerate(shard_dataloader(DataLoader(mine, batch_size=2), mesh, shard_dims=0,
                                           is_dataset_splitted=True)):
    assert bx.shape == [2 * n, 3] and bx.placements == [Shard(0)]
    want = np.concatenate([xs[r::n][2 * i:2 * i + 2] for r in range(n)])
    close(dist.unshard_dtensor(bx).numpy(), want, f"split batch {i}")

# Dict batches over two meshes: input_keys on the first, the rest on the last.
if n == 4:
    m2 = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    batches = [{"x": xs[:8], "y": ys[:8]}]
    b = next(iter(shard_dataloader(batches, [mesh, m2], input_keys=["x"], shard_dims=["dp", "dp"])))
    assert b["x"].process_mesh == mesh and b["x"].placements == [Shard(0)]
    assert b["y"].process_mesh == m2 and b["y"].placements == [Shard(0), Replicate()]
    close(dist.unshard_dtensor(b["y"]).numpy(), ys[:8], "dict labels")

# Training from the sharded loader equals one process on whole batches.


def make():
    oar.seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 4))


def run(model, batches, opt):
    losses = []
    for bx, by in batches:
        loss = F.cross_entropy(model(bx), by)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(dist.unshard_dtensor(loss).numpy() if loss.is_dist() else loss.numpy()))
    return np.array(losses)


data = TensorDataset([oar.to_tensor(xs), oar.to_tensor(ys)])
ref = make()
ref_losses = run(ref, DataLoader(data, batch_size=bs), oar.optimizer.AdamW(0.05, parameters=ref.parameters()))
model = dist.shard_layer(make(), mesh)
opt = shard_optimizer(oar.optimizer.AdamW(0.05, parameters=model.parameters()))
losses = run(model, shard_dataloader(DataLoader(data, batch_size=bs), mesh, shard_dims="dp"), opt)
np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, err_msg=f"rank {rank}: losses from shard_dataloader")
checks += 1
sys.stdout.write(f"rank {rank}: {checks} shard_dataloader checks passed\n")
sys.stdout.flush()
