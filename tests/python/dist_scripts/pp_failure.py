"""A stage that fails in the middle of a 1F1B step: the failing rank raises
its own error at once, and its peers, waiting for its messages, raise an
error naming the receive instead of hanging."""
import os
import time

import oar
import oar.distributed as dist
import oar.nn as nn
from oar.distributed.pipeline import LayerDesc, PipelineLayer, PipelineParallel

dist.init_parallel_env(timeout=3)
rank, n = dist.get_rank(), dist.get_world_size()
calls = []


def loss_fn(out, y):
    calls.append(1)
    if len(calls) == 3:
        raise ValueError("bad labels in micro-batch 2")
    return nn.functional.mse_loss(out, y)


pl = PipelineLayer([LayerDesc(nn.Linear, 4, 4) for _ in range(n)], loss_fn=loss_fn)
pp = PipelineParallel(pl, num_micro_batches=4)
opt = oar.optimizer.SGD(learning_rate=0.1, parameters=pp.parameters())
start = time.time()
try:
    pp.train_batch([oar.ones([8, 4]), oar.zeros([8, 4])], opt)
    print(f"rank {rank}: no error", flush=True)
except (ValueError, TimeoutError, RuntimeError) as e:
    print(f"rank {rank}: {type(e).__name__} after {time.time() - start:.1f}s: {e}", flush=True)
    os._exit(1)
