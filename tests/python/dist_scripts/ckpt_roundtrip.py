"""Checkpoints across meshes. `four <saved-by-one> <out>`: on a 2x2 mesh,
load a checkpoint one process saved (other placements), then save the
reference with mixed placements to <out> (an Adam state to <out>-adam,
tensors on sub-meshes to <out>-sub).
`two <dir>`: load them on a 1-D mesh of two ranks with other placements, then
save a checkpoint and crash rank 1 in a second save over it: the first one
must still load whole. Each rank prints its check count."""
import os
import sys

import oar
import oar.distributed as dist
import oar.distributed.checkpoint as ckpt
from oar.distributed import Partial, Shard
from oar.distributed.checkpoint import load_state_dict, save_state_dict

import ckpt_adam
import ckpt_common as cc

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
mode = sys.argv[1]
checks = 0
if mode == "four":
    assert n == 4
    mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    target = cc.zeros_like_target(mesh, cc.LOAD_2X2)
    load_state_dict(target, sys.argv[2])
    checks += cc.check(target, mesh, cc.LOAD_2X2, rank, "1 process -> 2x2")
    save_state_dict(cc.build(mesh, cc.SAVE_2X2), sys.argv[3])
    # Saving again over it replaces it whole (scaled values, a new generation).
    save_state_dict(cc.build(mesh, cc.SAVE_2X2, scale=3), sys.argv[3] + "-again")
    # (the second with an explicit group and another coordinator)
    save_state_dict(cc.build(mesh, cc.SAVE_2X2, scale=-1), sys.argv[3] + "-again",
                    process_group=dist.new_group([0, 1, 2, 3]), coordinator_rank=3)
    ckpt_adam.save(mesh, sys.argv[3] + "-adam", rank)
    # Tensors on sub-meshes: the other ranks hold no piece (and write none).
    x = cc.reference()["a"]
    save_state_dict({"s": dist.shard_tensor(oar.to_tensor(x), dist.ProcessMesh([2, 3]), [Shard(0)]),
                     "p": dist.shard_tensor(oar.to_tensor(x), dist.ProcessMesh([3, 1]), [Partial()])},
                    sys.argv[3] + "-sub")
elif mode == "two":
    assert n == 2
    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    target = cc.zeros_like_target(mesh, cc.LOAD_1D)
    load_state_dict(target, sys.argv[2])
    checks += cc.check(target, mesh, cc.LOAD_1D, rank, "2x2 -> 2 ranks")
    target = cc.zeros_like_target(mesh, cc.LOAD_1D)
    load_state_dict(target, sys.argv[2] + "-again")
    checks += cc.check(target, mesh, cc.LOAD_1D, rank, "2x2 saved twice -> 2 ranks", scale=-1)
    checks += ckpt_adam.load(mesh, sys.argv[2] + "-adam", rank)
    print(f"rank {rank}: {checks} checkpoint checks passed", flush=True)

    # A rank dies in the middle of a save over a good checkpoint.
    checks = 0
    crash = sys.argv[2] + "-crash"
    save_state_dict(cc.build(mesh, cc.LOAD_1D), crash)
    if rank == 1:
        write_json = ckpt._write_json

        def write_then_die(path, obj):  # its pieces and description are on disk; the commit is not
            write_json(path, obj)
            os._exit(3)
        ckpt._write_json = write_then_die
    try:
        save_state_dict(cc.build(mesh, cc.LOAD_1D, scale=5), crash)
        raise AssertionError("a save with a dead rank did not raise")
    except RuntimeError as e:
        assert str(e).startswith("[oar.distributed.save_state_dict]") and "rank 1" in str(e), str(e)
    assert os.path.isfile(os.path.join(crash, "gen-1", "1.safetensors"))  # the dead rank's uncommitted pieces
    target = cc.zeros_like_target(mesh, cc.LOAD_1D)
    load_state_dict(target, crash)  # needs no communication: works with a dead peer
    checks += cc.check(target, mesh, cc.LOAD_1D, rank, "the checkpoint before the crashed save")
    print(f"rank {rank}: {checks} checks after a crashed save passed", flush=True)
if mode == "four":
    print(f"rank {rank}: {checks} checkpoint checks passed", flush=True)
