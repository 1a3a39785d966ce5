"""oar.distributed on custom_cpu tensors (the example plugin's collectives,
across the ranks' processes), checked against NumPy and against one process.

Modes: collectives (all_reduce with every ReduceOp, broadcast, all_gather,
reduce_scatter, reduce, alltoall, scatter, gather, send/recv), dp (data
parallel of a small MLP on custom_cpu against one process on the same global
batch), timeout (rank 1 skips an all_reduce; run with
CUSTOM_CPU_COMM_TIMEOUT=2)."""
import sys
import time

import numpy as np

import oar
import oar.distributed as dist
import oar.nn as nn
import oar.nn.functional as F

mode = sys.argv[1]
dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
DEV = f"custom_cpu:{rank % 2}"
oar.set_device(DEV)


def T(a):
    return oar.to_tensor(np.asarray(a), place=DEV)


def data(r, shape=(3, 4), dtype="float32"):
    return ((np.arange(np.prod(shape)).reshape(shape) % 7 + 1 + r)).astype(dtype)


def collectives():
    checks = 0
    everyone = [data(r) for r in range(n)]
    expected = {
        dist.ReduceOp.SUM: sum(everyone),
        dist.ReduceOp.AVG: sum(everyone) / n,
        dist.ReduceOp.MAX: np.maximum.reduce(everyone),
        dist.ReduceOp.MIN: np.minimum.reduce(everyone),
        dist.ReduceOp.PROD: np.multiply.reduce(everyone),
    }
    for op, want in expected.items():
        for dtype in ("float32", "float64", "int64"):
            if dtype == "int64" and op == dist.ReduceOp.AVG:
                continue
            t = T(data(rank, dtype=dtype))
            dist.all_reduce(t, op=op)
            assert t.place == DEV, t.place
            np.testing.assert_allclose(t.numpy(), want.astype(dtype), rtol=1e-6, err_msg=f"all_reduce {op} {dtype}")
            checks += 1
    for root in range(n):
        t = T(data(rank))
        dist.broadcast(t, src=root)
        np.testing.assert_array_equal(t.numpy(), data(root))
        checks += 1
    out = []
    dist.all_gather(out, T(data(rank)))
    assert len(out) == n
    for r, o in enumerate(out):
        np.testing.assert_array_equal(o.numpy(), data(r))
        checks += 1
    full = [data(r, shape=(n * 2, 3)) for r in range(n)]
    o = T(np.zeros((2, 3), "float32"))
    dist.reduce_scatter(o, [T(b) for b in np.split(full[rank], n)])
    np.testing.assert_array_equal(o.numpy(), np.split(sum(full), n)[rank])
    checks += 1
    t = T(data(rank))
    dist.reduce(t, dst=0)
    if rank == 0:
        np.testing.assert_array_equal(t.numpy(), sum(everyone))
    checks += 1
    outs = [T(np.zeros((3, 4), "float32")) for _ in range(n)]
    dist.alltoall(outs, [T(data(10 * rank + j)) for j in range(n)])
    for j, o in enumerate(outs):
        np.testing.assert_array_equal(o.numpy(), data(10 * j + rank))
        checks += 1
    o = T(np.zeros((3, 4), "float32"))
    dist.scatter(o, [T(data(20 + r)) for r in range(n)] if rank == 0 else None, src=0)
    np.testing.assert_array_equal(o.numpy(), data(20 + rank))
    checks += 1
    got = [] if rank == 0 else None
    dist.gather(T(data(rank)), got, dst=0)
    if rank == 0:
        for r, g in enumerate(got):
            np.testing.assert_array_equal(g.numpy(), data(r))
    checks += 1
    if n > 1:
        if rank == 0:
            dist.send(T(data(7)), dst=1)
        elif rank == 1:
            r = T(np.zeros((3, 4), "float32"))
            dist.recv(r, src=0)
            np.testing.assert_array_equal(r.numpy(), data(7))
        checks += 1
    dist.barrier()
    print(f"rank {rank}: {checks} custom_cpu checks passed", flush=True)


STEPS, GLOBAL = 10, 16
LOCAL = GLOBAL // n


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def build(seed):
    oar.seed(seed)
    model = MLP()
    opt = oar.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    return model, opt


def batches():
    rng = np.random.default_rng(123)
    x = rng.standard_normal((STEPS * GLOBAL, 8)).astype("float32")
    y = (x @ rng.standard_normal((8, 4))).argmax(1).astype("int64")
    return x, y


def reference():
    model, opt = build(1000)
    x, y = batches()
    losses = []
    for s in range(STEPS):
        lo = s * GLOBAL
        loss = F.cross_entropy(model(T(x[lo:lo + GLOBAL])), T(y[lo:lo + GLOBAL]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return np.array(losses), [p.numpy() for p in model.parameters()]


def data_parallel():
    model, opt = build(1000 + rank)  # DataParallel must copy rank 0's start
    dp = oar.DataParallel(model)
    x, y = batches()
    losses = []
    for s in range(STEPS):
        lo = s * GLOBAL + rank * LOCAL
        loss = F.cross_entropy(dp(T(x[lo:lo + LOCAL])), T(y[lo:lo + LOCAL]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        g = loss.detach().clone()
        dist.all_reduce(g, op=dist.ReduceOp.AVG)
        losses.append(float(g))
    return np.array(losses), [p for p in model.parameters()]


def dp():
    ref_losses, ref_params = reference()
    losses, params = data_parallel()
    assert all(p.place == DEV for p in params), [p.place for p in params]
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, err_msg="losses")
    assert ref_losses[-1] < ref_losses[0], ref_losses  # it trained
    for p, q in zip(params, ref_params):
        np.testing.assert_allclose(p.numpy(), q, rtol=1e-5, atol=1e-6, err_msg="parameters")
    print(f"rank {rank}: custom_cpu dp parity ok: loss {ref_losses[0]:.4f} -> {ref_losses[-1]:.4f}", flush=True)


def timeout():
    t = T(data(rank))
    dist.all_reduce(t)  # the communicator is made and works
    if rank == 1:
        time.sleep(4)
        return
    start = time.time()
    try:
        dist.all_reduce(t)
    except RuntimeError as e:
        print(f"rank 0: RuntimeError after {time.time() - start:.1f}s: {e}", flush=True)


{"collectives": collectives, "dp": dp, "timeout": timeout}[mode]()
