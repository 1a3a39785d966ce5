"""oar.distributed.spawn from a plain process: a function of this script
runs on 2 ranks, each joins the job and all-reduces its rank; a failing
function makes spawn raise. Prints "spawn parent ok"."""
import sys

import oar
import oar.distributed as dist


def work(scale, fail):
    if fail:  # rank 1 fails, rank 0 ends normally (the launcher's environment names the rank)
        if dist.get_rank() == 1:
            raise SystemExit(3)
        return
    dist.init_parallel_env()
    r, n = dist.get_rank(), dist.get_world_size()
    x = oar.to_tensor([float(r * scale)])
    dist.all_reduce(x)
    print(f"spawned rank {r} of {n}: sum {x.numpy()[0]:g}", flush=True)


if __name__ == "__main__":
    ctx = dist.spawn(work, args=(10, False), nprocs=2)
    assert ctx.exit_code == 0, ctx.exit_code
    try:
        dist.spawn(work, args=(1, True), nprocs=2, grace=2)
    except RuntimeError as e:
        assert "exit code 3" in str(e), e
    else:
        sys.exit("a failing rank did not make spawn raise")
    print("spawn parent ok", flush=True)
