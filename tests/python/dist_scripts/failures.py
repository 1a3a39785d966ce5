"""A peer that hangs or dies: the waiting ranks must raise a clear error
naming the collective and the ranks, and never hang."""
import os
import sys
import time

import oar
import oar.distributed as dist

mode = sys.argv[1]
dist.init_parallel_env(timeout=2 if mode == "timeout" else None)
rank = dist.get_rank()
x = oar.ones([4])
dist.all_reduce(x)  # one good collective first
start = time.time()
if mode == "timeout":
    # The last rank never joins the second all_reduce (but stays alive).
    if rank == dist.get_world_size() - 1:
        time.sleep(6)
        print(f"rank {rank}: idle rank done", flush=True)
        os._exit(0)
elif mode == "dead":
    if rank == 1:
        os._exit(3)  # dies without a word
    time.sleep(0.5)
try:
    dist.all_reduce(x)
    print(f"rank {rank}: no error", flush=True)
except (TimeoutError, RuntimeError) as e:
    print(f"rank {rank}: {type(e).__name__} after {time.time() - start:.1f}s: {e}", flush=True)
    os._exit(1)
