"""An optimizer's state through a checkpoint: a Linear layer with distributed
parameters trained two Adam steps on one mesh, saved, and loaded onto a
layer placed differently on another mesh; the loaded moments and counters
must equal the saved ones exactly, and the next step must match."""
import numpy as np

import oar
import oar.distributed as dist
from oar.distributed.checkpoint import load_state_dict, save_state_dict

W0 = (np.arange(15, dtype=np.float32).reshape(5, 3) - 6) / 8
B0 = np.array([0.5, -1.0, 2.0], dtype=np.float32)


def model(mesh, wp, bp):
    lin = oar.nn.Linear(5, 3)
    with oar.no_grad():
        lin.weight.copy_(oar.to_tensor(W0), False)
        lin.bias.copy_(oar.to_tensor(B0), False)
    lin.weight = dist.shard_tensor(lin.weight, mesh, wp)
    lin.bias = dist.shard_tensor(lin.bias, mesh, bp)
    return lin, oar.optimizer.Adam(learning_rate=0.1, parameters=lin.parameters())


def step(lin, opt, k):
    # Two backward passes (the gradients add up): one loss adding both sums
    # fails in backward on the dist layer at the time of writing.
    (lin.weight * lin.weight * float(k)).sum().backward()
    (lin.bias * lin.bias * lin.bias).sum().backward()
    opt.step()
    opt.clear_grad()


def flat(sd, prefix=""):
    out = {}
    for k, v in sd.items():
        if isinstance(v, dict):
            out.update(flat(v, f"{prefix}{k}."))
        elif isinstance(v, oar.Tensor):
            out[prefix + k] = dist.unshard_dtensor(v).numpy() if v.is_dist() else v.numpy()
    return out


def save(mesh, path, rank):
    """Two steps, save, then a third step; rank 0 keeps the reference values."""
    lin, opt = model(mesh, [dist.Shard(0), dist.Shard(1)], [dist.Replicate(), dist.Shard(0)])
    step(lin, opt, 1)
    step(lin, opt, 2)
    sd = {"model": lin.state_dict(), "opt": opt.state_dict()}
    save_state_dict(sd, path)
    ref = flat(sd)
    step(lin, opt, 3)
    after = flat({"model": lin.state_dict()})
    if rank == 0:
        np.savez(path + "-ref.npz", **ref, **{"after." + k: v for k, v in after.items()})
    dist.barrier()


def load(mesh, path, rank):
    """Loads onto other placements, compares with the saved values, takes the third step."""
    lin, opt = model(mesh, [dist.Shard(1)], [dist.Replicate()])
    step(lin, opt, 7)  # creates the optimizer state that the load overwrites
    sd = {"model": lin.state_dict(), "opt": opt.state_dict()}
    load_state_dict(sd, path)
    opt.set_state_dict(sd["opt"])
    ref = np.load(path + "-ref.npz")
    got = flat({"model": lin.state_dict(), "opt": opt.state_dict()})
    n = 0
    assert sorted(got) == sorted(k for k in ref.files if not k.startswith("after.")), (sorted(got), ref.files)
    for k, v in got.items():
        assert v.dtype == ref[k].dtype and np.array_equal(v, ref[k]), f"rank {rank} adam {k}: {v} != {ref[k]}"
        n += 1
    assert any("moment1" in k for k in got) and any("moment2" in k for k in got), sorted(got)
    step(lin, opt, 3)
    for k, v in flat({"model": lin.state_dict()}).items():
        np.testing.assert_allclose(v, ref["after." + k], rtol=1e-6, atol=1e-7, err_msg=f"rank {rank} resumed {k}")
        n += 1
    return n
