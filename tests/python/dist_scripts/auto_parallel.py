"""Semi-automatic parallelism on the ranks of this job: every reshard
conversion against NumPy slices, ops on distributed tensors, and an MLP
trained with data, tensor (column and row) and dp x mp parallelism against
one process."""
import itertools

import numpy as np

import oar
import oar.distributed as dist
import oar.nn.functional as F
from oar.distributed import Partial, Replicate, Shard

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
checks = 0


def close(got, want, what, rtol=1e-5, atol=1e-6):
    global checks
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"rank {rank}: {what}")
    checks += 1


def piece(x, mesh, placements):
    """NumPy: this rank's piece of x (np.array_split pieces, mesh dims in order)."""
    coord = list(zip(*np.nonzero(mesh.mesh == rank)))[0]
    out = x
    for m, p in enumerate(placements):
        if isinstance(p, Shard):
            out = np.array_split(out, mesh.shape[m], axis=p.dim)[coord[m]]
    return out


def full(t):
    return dist.unshard_dtensor(t).numpy()


mesh1 = dist.ProcessMesh(list(range(n)), dim_names=["x"])
meshes = [mesh1] + ([dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])] if n == 4 else [])
x = np.arange(5 * 6, dtype="float32").reshape(5, 6) / 7.0  # 5 rows: uneven pieces
kinds = [Replicate(), Shard(0), Shard(1), Partial()]

for mesh in meshes:
    combos = [list(c) for c in itertools.product(kinds, repeat=mesh.ndim)
              if sum(isinstance(p, Shard) and p.dim == 0 for p in c) <= 1
              and sum(isinstance(p, Shard) and p.dim == 1 for p in c) <= 1]
    for src in combos:
        t = dist.shard_tensor(oar.to_tensor(x), mesh, src)
        assert t.shape == [5, 6] and t.placements == src, (t.shape, t.placements)
        if not any(isinstance(p, Partial) for p in src):
            close(t._local_value().numpy(), piece(x, mesh, src), f"shard_tensor {src}")
        for dst in combos:
            r = dist.reshard(t, mesh, dst)
            assert r.placements == dst
            if not any(isinstance(p, Partial) for p in dst):
                close(r._local_value().numpy(), piece(x, mesh, dst), f"reshard {src} -> {dst} on {mesh.shape}")
            close(full(r), x, f"value after reshard {src} -> {dst}")

# Moving between meshes (the ranks reversed; on 4 ranks also onto a sub-mesh of two).
rev = dist.ProcessMesh(list(reversed(range(n))), dim_names=["x"])
t = dist.shard_tensor(oar.to_tensor(x), mesh1, [Shard(0)])
r = dist.reshard(t, rev, [Shard(1)])
close(r._local_value().numpy(), piece(x, rev, [Shard(1)]), "reshard onto another mesh")
if n == 4:
    sub = dist.ProcessMesh([2, 3], dim_names=["x"])
    r = dist.reshard(t, sub, [Replicate()])
    if rank in (2, 3):
        close(r._local_value().numpy(), x, "reshard onto a sub-mesh")

# Ops follow their SPMD rules; results equal NumPy.
rng = np.random.default_rng(0)
a = rng.standard_normal((8, 6)).astype("float32")
w = rng.standard_normal((6, 4)).astype("float32")
for pa, pw in [([Shard(0)], [Replicate()]), ([Shard(1)], [Shard(0)]), ([Replicate()], [Shard(1)])]:
    A = dist.shard_tensor(oar.to_tensor(a), mesh1, pa)
    W = dist.shard_tensor(oar.to_tensor(w), mesh1, pw)
    close(full(oar.matmul(A, W)), a @ w, f"matmul {pa} x {pw}")
A = dist.shard_tensor(oar.to_tensor(a), mesh1, [Shard(0)])
e = np.exp(a - a.max(1, keepdims=True))
close(full(F.softmax(A, axis=-1)), e / e.sum(1, keepdims=True), "softmax on rows")
close(full(A.sum(axis=0)), a.sum(0), "sum over the sharded dim (Partial)")
close(full(A.mean()), a.mean(), "mean of all")
close(full(F.layer_norm(A, [6])), (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5),
      "layer_norm", atol=1e-5)
close(full(A.reshape([4, 12])), a.reshape(4, 12), "reshape")
close(full(A.transpose([1, 0])), a.T, "transpose")
close(full(oar.concat([A, A], axis=1)), np.concatenate([a, a], 1), "concat")
close(full(F.relu(A) * 2.0 + A), np.maximum(a, 0) * 2 + a, "elementwise chain")

# An MLP: loss and gradients under dp, mp (column then row) and dp x mp equal one process.
d_in, d_h, d_out, batch = 6, 8, 3, 8
x_np = rng.standard_normal((batch, d_in)).astype("float32")
y_np = rng.integers(0, d_out, batch).astype("int64")
w1_np = rng.standard_normal((d_in, d_h)).astype("float32") * 0.5
w2_np = rng.standard_normal((d_h, d_out)).astype("float32") * 0.5


def mlp_steps(place_x, place_w1, place_w2, mesh, steps=5):
    w1 = dist.shard_tensor(oar.to_tensor(w1_np), mesh, place_w1, stop_gradient=False) if mesh else \
        oar.to_tensor(w1_np, stop_gradient=False)
    w2 = dist.shard_tensor(oar.to_tensor(w2_np), mesh, place_w2, stop_gradient=False) if mesh else \
        oar.to_tensor(w2_np, stop_gradient=False)
    xs = dist.shard_tensor(oar.to_tensor(x_np), mesh, place_x) if mesh else oar.to_tensor(x_np)
    ys = dist.shard_tensor(oar.to_tensor(y_np), mesh, place_x) if mesh else oar.to_tensor(y_np)
    losses, grads = [], None
    for s in range(steps):
        h = F.relu(oar.matmul(xs, w1))
        loss = F.cross_entropy(oar.matmul(h, w2), ys)
        loss.backward()
        if s == 0:
            grads = [full(w1.grad) if mesh else w1.grad.numpy(), full(w2.grad) if mesh else w2.grad.numpy()]
        losses.append(float(full(loss) if mesh else loss.numpy()))
        with oar.no_grad():
            for p in (w1, w2):
                g = p.grad
                if mesh:
                    g = dist.reshard(g, mesh, p.placements)
                p.set_value(p - 0.5 * g) if not mesh else p._local_value().copy_(
                    (p._local_value() - 0.5 * g._local_value()), False)
                p.clear_grad()
    return np.array(losses), grads


ref_losses, ref_grads = mlp_steps(None, None, None, None)
setups = {
    "dp": (mesh1, [Shard(0)], [Replicate()], [Replicate()]),
    "mp": (mesh1, [Replicate()], [Shard(1)], [Shard(0)]),
}
if n == 4:
    m2 = meshes[1]
    setups["dp x mp"] = (m2, [Shard(0), Replicate()], [Replicate(), Shard(1)], [Replicate(), Shard(0)])
for name, (mesh, px, p1, p2) in setups.items():
    losses, grads = mlp_steps(px, p1, p2, mesh)
    close(grads[0], ref_grads[0], f"{name} grad w1")
    close(grads[1], ref_grads[1], f"{name} grad w2")
    close(losses, ref_losses, f"{name} losses")
    assert losses[-1] < losses[0]

# A view's piece is strided; ops after it (reshape) still see a consistent tensor.
b3 = rng.standard_normal((2 * n, 8, 4)).astype("float32")
t3 = dist.shard_tensor(oar.to_tensor(b3), mesh1, [Shard(0)])
close(full(t3[:, :-1].reshape([-1, 4])), b3[:, :-1].reshape(-1, 4), "reshape of a sliced distributed tensor")

# Backward from a resharded scalar, and from a sum of Partial and Replicate scalars.
w = dist.shard_tensor(oar.ones([4]), mesh1, [Shard(0)], stop_gradient=False)
dist.reshard((w * 3.0).sum(), mesh1, [Replicate()]).backward()
close(full(w.grad), np.full(4, 3.0), "gradient through reshard of a scalar")
v = dist.shard_tensor(oar.ones([4]), mesh1, [Replicate()], stop_gradient=False)
w.clear_grad()
((w * w).sum() + (v * v).sum()).backward()
close(full(w.grad), np.full(4, 2.0), "gradient of Partial + Replicate scalars (w)")
close(full(v.grad), np.full(4, 2.0), "gradient of Partial + Replicate scalars (v)")

print(f"rank {rank}: {checks} auto-parallel checks passed", flush=True)
