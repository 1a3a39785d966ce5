"""Every collective of oar.distributed on the ranks of this job, each checked
against NumPy on data every rank can compute for every other rank.

OAR_TEST_PLACE=gpu puts every tensor on this rank's GPU (the NCCL backend)."""
import os

import numpy as np

import oar
import oar.distributed as dist

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
checks = 0
GPU = os.environ.get("OAR_TEST_PLACE", "cpu") == "gpu"
if GPU:
    oar.device.cuda.set_device(rank % oar.device.cuda.device_count())


def T(a, dtype=None):
    """A tensor of a (cast to dtype on the host) on this run's device."""
    t = oar.to_tensor(a)
    if dtype is not None:
        t = t.astype(dtype)
    return t.cuda() if GPU else t


def Z(shape, dtype="float32"):
    return T(np.zeros(shape, dtype=dtype))


def data(r, shape=(3, 4), dtype="float32"):
    """Rank r's input: distinct per rank, exact in every dtype used."""
    v = (np.arange(np.prod(shape)).reshape(shape) % 7 + 1 + r).astype("float64")
    if dtype == "bool":
        return (v.astype(int) + r) % 2 == 0
    if dtype.startswith("complex"):
        return (v + 1j * (v - r)).astype(dtype)
    return v.astype(dtype)


def check(got, want, what, rtol=1e-6):
    global checks
    got = np.asarray(got)
    if got.dtype == np.uint16 or str(got.dtype) in ("float16", "bfloat16"):
        got = got.astype("float64")
    np.testing.assert_allclose(np.asarray(got, dtype=np.result_type(got, np.float64) if got.dtype != bool else bool),
                               want, rtol=rtol, atol=0, err_msg=f"rank {rank}: {what}")
    checks += 1


def as_np(t):
    if t.dtype in (oar.float16, oar.bfloat16):
        return t.cpu().astype("float32").numpy().astype("float64")
    return t.numpy()


all_in = {}
for dt in ["float32", "float64", "int32", "int64", "float16", "bfloat16", "complex64", "bool"]:
    stack = np.stack([data(r, dtype=dt if dt != "bfloat16" else "float32") for r in range(n)])
    ops = {"SUM": stack.sum(0), "MAX": stack.max(0) if dt != "complex64" else None,
           "MIN": stack.min(0) if dt != "complex64" else None, "PROD": stack.prod(0)}
    if dt in ("float32", "float64", "complex64", "float16", "bfloat16"):
        ops["AVG"] = stack.sum(0) / n
    if dt == "bool":
        ops = {"SUM": stack.any(0), "MAX": stack.any(0), "MIN": stack.all(0), "PROD": stack.all(0)}
    for name, want in ops.items():
        if want is None:
            continue
        mine = data(rank, dtype=dt if dt != "bfloat16" else "float32")
        x = T(mine, dt if dt in ("float16", "bfloat16") else None)
        dist.all_reduce(x, op=getattr(dist.ReduceOp, name))
        # 16-bit floats round every partial result (in an order MPI chooses).
        half = {"float16": 2.0**-11, "bfloat16": 2.0**-8}.get(dt)
        check(as_np(x), want.astype("float64") if half else want, f"all_reduce {dt} {name}",
              rtol=n * half if half else 1e-6)

# Asynchronous all_reduce, and a non-contiguous tensor written back in place.
x = T(data(rank))
task = dist.all_reduce(x, sync_op=False)
task.wait()
check(x.numpy(), sum(data(r) for r in range(n)), "async all_reduce")
if not GPU:  # a non-contiguous GPU tensor cannot be made contiguous in this build
    base = oar.to_tensor(data(rank, (4, 3)))
    view = base.t()
    dist.all_reduce(view)
    check(base.numpy(), sum(data(r, (4, 3)) for r in range(n)), "all_reduce of a transposed view")

# A large all_reduce (started in 1 MiB pieces, a few at a time) with a small one
# issued behind it before it finished: both right, in order on every rank.
bigv = (np.arange(3 << 20) % 1000).astype("float32")
big = T(bigv + rank)
small = T(data(rank))
t_big = dist.all_reduce(big, op=dist.ReduceOp.AVG, sync_op=False)
t_small = dist.all_reduce(small, sync_op=False)
t_small.wait()
t_big.wait()
check(big.numpy(), bigv + (n - 1) / 2.0, "large AVG all_reduce in pieces")
check(small.numpy(), sum(data(r) for r in range(n)), "small all_reduce queued behind a large one")

# all_gather into a list and into one tensor; all_gather_object.
out = []
dist.all_gather(out, T(data(rank, (2, 3))))
check(np.stack([o.numpy() for o in out]), np.stack([data(r, (2, 3)) for r in range(n)]), "all_gather list")
cat = Z([2 * n, 3])
dist.all_gather(cat, T(data(rank, (2, 3))))
check(cat.numpy(), np.concatenate([data(r, (2, 3)) for r in range(n)]), "all_gather tensor")
objs = []
dist.all_gather_object(objs, {"rank": rank, "name": "r" * (rank + 1)})
assert objs == [{"rank": r, "name": "r" * (r + 1)} for r in range(n)], objs
checks += 1

# reduce, reduce_scatter, broadcast, scatter, gather.
x = T(data(rank))
dist.reduce(x, dst=n - 1, op=dist.ReduceOp.MAX)
if rank == n - 1:
    check(x.numpy(), np.max([data(r) for r in range(n)], 0), "reduce MAX to the last rank")
blocks = [T(data(rank * n + j, (2, 2))) for j in range(n)]
y = Z([2, 2])
dist.reduce_scatter(y, blocks)
check(y.numpy(), sum(data(r * n + rank, (2, 2)) for r in range(n)), "reduce_scatter")
x = T(data(rank))
dist.broadcast(x, src=min(1, n - 1))
check(x.numpy(), data(min(1, n - 1)), "broadcast from rank 1")
lst = [rank, "x"] if rank == 0 else [None]
dist.broadcast_object_list(lst, src=0)
assert lst == [0, "x"], lst
checks += 1
y = Z([3])
dist.scatter(y, [T(data(10 + j, (3,))) for j in range(n)] if rank == 0 else None, src=0)
check(y.numpy(), data(10 + rank, (3,)), "scatter")
got = []
dist.gather(T(data(rank, (2,))), got if rank == 0 else None, dst=0)
if rank == 0:
    check(np.stack([g.numpy() for g in got]), np.stack([data(r, (2,)) for r in range(n)]), "gather")

# alltoall (equal blocks) and alltoall_single with unequal splits.
outs = []
dist.alltoall(outs, [T(data(rank * 10 + j, (2,))) for j in range(n)])
check(np.stack([o.numpy() for o in outs]), np.stack([data(j * 10 + rank, (2,)) for j in range(n)]), "alltoall")
# Rank r sends j+1 rows to rank j (rows of width 2 holding sender*100 + receiver).
send_rows = [np.full((j + 1, 2), rank * 100 + j, dtype="float32") for j in range(n)]
recv = Z([n * (rank + 1), 2])
dist.alltoall_single(recv, T(np.concatenate(send_rows)), [rank + 1] * n, [j + 1 for j in range(n)])
check(recv.numpy(), np.concatenate([np.full((rank + 1, 2), j * 100 + rank) for j in range(n)]), "alltoall_single")

# send/recv around a ring, blocking and with isend/irecv (a job of one has no peer).
if n > 1:
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    buf = Z([5])
    if rank % 2 == 0:
        dist.send(T(data(rank, (5,))), dst=nxt)
        dist.recv(buf, src=prv)
    else:
        dist.recv(buf, src=prv)
        dist.send(T(data(rank, (5,))), dst=nxt)
    check(buf.numpy(), data(prv, (5,)), "send/recv ring")
    big = T(data(rank, (1 << 18,)))  # past the eager limit: both must be posted
    rbuf = Z([1 << 18])
    t1 = dist.isend(big, dst=nxt)
    t2 = dist.irecv(rbuf, src=prv)
    t1.wait()
    t2.wait()
    check(rbuf.numpy(), data(prv, (1 << 18,)), "isend/irecv ring")
dist.barrier()
checks += 1

# A sub-group of the even ranks.
evens = dist.new_group(list(range(0, n, 2)))
x = T(data(rank))
if evens.is_member():
    dist.all_reduce(x, group=evens)
    check(x.numpy(), sum(data(r) for r in range(0, n, 2)), "all_reduce on the even ranks")
    assert evens.rank == rank // 2 and evens.nranks == (n + 1) // 2
else:
    assert evens.rank == -1
    try:
        dist.all_reduce(x, group=evens)
        raise AssertionError("a collective on a group without this rank must fail")
    except ValueError as e:
        assert "not a member" in str(e), e
checks += 1

# Bad arguments raise typed errors that name the API.
for call, exc, words in [
    (lambda: dist.broadcast(Z([2]), src=n), ValueError, "oar.distributed.broadcast"),
    (lambda: dist.all_reduce(Z([2], dtype="complex64"), op=dist.ReduceOp.MAX), TypeError, "complex"),
    (lambda: dist.all_reduce(Z([2], dtype="int32"), op=dist.ReduceOp.AVG), TypeError, "AVG"),
    (lambda: dist.all_reduce(np.zeros(2)), TypeError, "oar.distributed.all_reduce"),
    (lambda: dist.new_group([0, n]), ValueError, "new_group"),
]:
    try:
        call()
        raise AssertionError(f"expected {exc.__name__} containing {words!r}")
    except exc as e:
        assert words in str(e), e
    checks += 1

dist.barrier()
print(f"rank {rank}: {checks} checks passed", flush=True)
