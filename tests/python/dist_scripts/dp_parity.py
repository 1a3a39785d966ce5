"""Data parallel on N ranks against one process on the same global batch:
losses and parameters after 20 steps agree within 1e-5 relative.

Modes: plain (MLP with Adam, CNN with Momentum), no_sync (two micro-batches
per step, the first inside no_sync), unused (a branch that only some ranks
use at some steps, with find_unused_parameters=True)."""
import sys

import numpy as np

import oar
import oar.distributed as dist
import oar.nn as nn
import oar.nn.functional as F

mode = sys.argv[1]
dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
STEPS, GLOBAL = 20, 16
LOCAL = GLOBAL // n


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 4)
        # Only the 'unused' run has a branch that steps may skip.
        self.extra = nn.Linear(32, 4) if mode == "unused" else None

    def forward(self, x, use_extra=False):
        h = F.relu(self.fc1(x))
        out = self.fc2(h)
        return out + self.extra(h) if use_extra else out


class CNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 4)

    def forward(self, x, use_extra=False):
        h = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(h.reshape([h.shape[0], -1]))


def build(kind, seed):
    oar.seed(seed)
    model = MLP() if kind == "mlp" else CNN()
    if kind == "mlp":
        opt = oar.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    else:
        opt = oar.optimizer.Momentum(learning_rate=0.05, momentum=0.9, parameters=model.parameters())
    return model, opt


def batches(kind):
    rng = np.random.default_rng(123)
    shape = (STEPS * GLOBAL, 8) if kind == "mlp" else (STEPS * GLOBAL, 1, 8, 8)
    x = rng.standard_normal(shape).astype("float32")
    # Learnable labels: the class a fixed linear map scores highest.
    w = rng.standard_normal((int(np.prod(shape[1:])), 4))
    y = (x.reshape(len(x), -1) @ w).argmax(1).astype("int64")
    return x, y


def uses_extra(step, r):
    # Rank-dependent: some ranks skip the branch at some steps.
    return mode == "unused" and (step + r) % 3 == 0


def reference(kind):
    model, opt = build(kind, 1000)  # rank 0's start
    x, y = batches(kind)
    losses = []
    for s in range(STEPS):
        total = 0
        for r in range(n):  # the global batch, slice by slice (mean of equal-size means)
            lo = s * GLOBAL + r * LOCAL
            out = model(oar.to_tensor(x[lo:lo + LOCAL]), uses_extra(s, r))
            total = total + F.cross_entropy(out, oar.to_tensor(y[lo:lo + LOCAL]))
        loss = total / n
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return np.array(losses), [p.numpy() for p in model.parameters()]


def data_parallel(kind):
    model, opt = build(kind, 1000 + rank)  # DataParallel must copy rank 0's start
    model0, _ = build(kind, 1000)
    # Small buckets, so that several exist and the first start during backward.
    dp = oar.DataParallel(model, find_unused_parameters=(mode == "unused"), comm_buffer_size=0.002,
                          last_comm_buffer_size=0.001)
    assert len(dp._buckets) > 1
    for p, q in zip(model.parameters(), model0.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg="parameters not synced from rank 0")
    x, y = batches(kind)
    ds = oar.io.TensorDataset([oar.to_tensor(x), oar.to_tensor(y)])
    sampler = oar.io.DistributedBatchSampler(ds, batch_size=LOCAL, shuffle=False)
    assert sampler.nranks == n and sampler.local_rank == rank
    loader = oar.io.DataLoader(ds, batch_sampler=sampler)
    losses = []
    for s, (xb, yb) in enumerate(loader):
        np.testing.assert_array_equal(xb.numpy(), x[s * GLOBAL + rank * LOCAL:][:LOCAL])
        if mode == "no_sync":
            half = LOCAL // 2
            with dp.no_sync():
                l1 = F.cross_entropy(dp(xb[:half]), yb[:half]) * 0.5
                l1.backward()
            l2 = F.cross_entropy(dp(xb[half:]), yb[half:]) * 0.5
            l2.backward()
            loss = l1.detach() + l2.detach()
        else:
            loss = F.cross_entropy(dp(xb, uses_extra(s, rank)), yb)
            loss.backward()
            if mode == "plain":  # all-reduces started before the backward pass ended
                assert dp.overlapped_buckets == len(dp._buckets), dp.overlapped_buckets
        opt.step()
        opt.clear_grad()
        g = loss.detach().clone()
        dist.all_reduce(g, op=dist.ReduceOp.AVG)
        losses.append(float(g))
    return np.array(losses), [p.numpy() for p in model.parameters()]


for kind in (["mlp", "cnn"] if mode == "plain" else ["mlp"]):
    ref_losses, ref_params = reference(kind)
    losses, params = data_parallel(kind)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, err_msg=f"{kind} {mode} losses")
    assert ref_losses[-1] < ref_losses[0] * 0.9, ref_losses  # it trained
    for p, q in zip(params, ref_params):
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6, err_msg=f"{kind} {mode} parameters")
    print(f"rank {rank}: {kind} {mode} parity ok: loss {ref_losses[0]:.4f} -> {ref_losses[-1]:.4f}", flush=True)
