"""oar.distributed.fleet: strategy, topology, role makers, util, data
generators, single-process training, and hybrid layouts on real ranks."""
import copy
import io
import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

import oar
import oar.distributed as dist
from dist_util import SCRIPTS, child_env, ranks_ok, run_ranks
from oar.distributed import fleet

needs_mpi = pytest.mark.skipif(not dist.is_available(), reason="oar was built without MPI")


# ---------------------------------------------------------------- strategy
def test_strategy_defaults_are_paddles():
    # Values printed by PaddlePaddle 3.3.1's fleet.DistributedStrategy().
    s = fleet.DistributedStrategy()
    h = s.hybrid_configs
    assert (h["dp_degree"], h["mp_degree"], h["pp_degree"], h["sharding_degree"], h["sep_degree"]) == (-1, 1, 1, 1, 1)
    assert s.pipeline_configs == {"micro_batch_size": 1, "accumulate_steps": 1, "schedule_mode": "1F1B",
                                  "p2p_cache_shape": True, "enable_partial_send_recv": True}
    assert s.hybrid_parallel_order == ["dp", "pp", "sharding", "sep", "cp", "mp"]
    assert (s.amp, s.recompute, s.sharding, s.gradient_merge, s.a_sync, s.fuse_all_reduce_ops) == \
        (False, False, False, False, True, True)
    assert s.amp_configs["init_loss_scaling"] == 32768.0 and s.amp_configs["incr_every_n_steps"] == 1000
    assert s.gradient_merge_configs == {"k_steps": 1, "avg": True}
    assert s.sharding_configs["segment_broadcast_MB"] == 32.0 and s.sharding_configs["stage"] == 1
    assert (s.fuse_grad_size_in_MB, s.last_comm_group_size_MB, s.nccl_comm_num) == (32, 1.0, 1)
    assert h["mp_configs"].need_broadcast_data is True and h["pp_configs"].use_dualpipev is False
    assert h["sharding_configs"].comm_buffer_size_MB == 256


def test_strategy_setters_merge_and_check():
    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"dp_degree": 2, "mp_degree": 2, "pp_configs": {"accumulate_steps": 4}}
    s.hybrid_configs = {"pp_degree": 2}
    h = s.hybrid_configs
    assert (h["dp_degree"], h["mp_degree"], h["pp_degree"]) == (2, 2, 2)
    # pp_configs' micro-batching is pipeline_configs' (one value, two spellings).
    assert s.pipeline_configs["accumulate_steps"] == 4 and h["pp_configs"].accumulate_steps == 4
    h["pp_configs"].micro_batch_size = 3
    assert s.pipeline_configs["micro_batch_size"] == 3
    s.amp_configs = {"init_loss_scaling": 128}
    assert s.amp_configs["init_loss_scaling"] == 128.0 and s.amp_configs["incr_ratio"] == 2.0
    cfg = s.amp_configs
    cfg["incr_ratio"] = 9.0  # a copy: the strategy is unchanged
    assert s.amp_configs["incr_ratio"] == 2.0
    s.amp = True
    s.find_unused_parameters = True
    c = copy.deepcopy(s)
    c.hybrid_configs = {"mp_degree": 1}
    c.pipeline_configs = {"accumulate_steps": 8}
    assert s.hybrid_configs["mp_degree"] == 2 and s.pipeline_configs["accumulate_steps"] == 4
    assert c.hybrid_configs["pp_configs"].accumulate_steps == 8
    assert "amp=True" in repr(s)

    with pytest.raises(ValueError, match=r"^\[oar.distributed.fleet.DistributedStrategy\] 'bogus' is not a key"):
        s.amp_configs = {"bogus": 1}
    with pytest.raises(ValueError, match="'foo' is not a key of hybrid_configs"):
        s.hybrid_configs = {"foo": 1}
    with pytest.raises(TypeError, match=r"hybrid_configs\['mp_degree'\] must be int"):
        s.hybrid_configs = {"mp_degree": "2"}
    with pytest.raises(TypeError, match="amp must be a bool"):
        s.amp = 1
    with pytest.raises(AttributeError, match="has no option 'no_such_option'"):
        s.no_such_option = True
    for name in ("recompute", "sharding", "gradient_merge", "lamb", "dgc", "sync_batch_norm"):
        with pytest.raises(NotImplementedError, match=rf"\] {name}=True is not supported"):
            setattr(s, name, True)
        assert getattr(s, name) is False
        setattr(s, name, False)  # False is accepted
    with pytest.raises(NotImplementedError, match=r"sep_degree'\]=2 is not supported"):
        s.hybrid_configs = {"sep_degree": 2}
    with pytest.raises(AttributeError, match="not a key of hybrid_configs\\['mp_configs'\\]"):
        s.hybrid_configs["mp_configs"].nope = 1


# ---------------------------------------------------------------- topology
def _enumerate(names, dims):
    """The layout by plain enumeration: rank r is the r-th coordinate of
    itertools.product over the axes in order."""
    coords = list(itertools.product(*[range(d) for d in dims]))
    return {r: dict(zip(names, c)) for r, c in enumerate(coords)}


@pytest.mark.parametrize("dims", [[2, 1, 3, 2], [1, 2, 2, 2], [3, 1, 1, 1]])
def test_topology_matches_enumeration(dims):
    names = ["data", "pipe", "sharding", "model"]
    topo = fleet.CommunicateTopology(names, dims)
    ref = _enumerate(names, dims)
    assert topo.world_size() == len(ref)
    for r, c in ref.items():
        assert topo.get_coord(r)._asdict() == c
        assert topo.get_rank(**c) == r
    for a, name in enumerate(names):
        assert topo.get_dim(name) == dims[a]
        for i in range(dims[a]):
            assert topo.get_axis_list(name, i) == sorted(r for r, c in ref.items() if c[name] == i)
        # one group per coordinate of the other axes, in their product order
        others = [m for m in names if m != name]
        want = []
        for oc in itertools.product(*[range(topo.get_dim(m)) for m in others]):
            fixed = dict(zip(others, oc))
            want.append([r for r, c in ref.items() if all(c[m] == fixed[m] for m in others)])
        assert topo.get_comm_list(name) == want
    fused = topo.get_fused_ranks(["data", "model"])
    assert sorted(sum(fused, [])) == list(range(len(ref)))
    for grp in fused:
        assert len({(ref[r]["pipe"], ref[r]["sharding"]) for r in grp}) == 1
    r = len(ref) - 1
    assert topo.get_rank_from_stage(r, data=0) == topo.get_rank(**dict(ref[r], data=0))


def test_topology_defaults_and_errors():
    topo = fleet.CommunicateTopology()
    assert topo.get_hybrid_group_names() == ["data", "pipe", "sharding", "sep", "context", "model"]
    assert topo.world_size() == 1
    t = fleet.CommunicateTopology(["data", "model"], [2, 2])
    with pytest.raises(ValueError, match=r"^\[oar.distributed.fleet.CommunicateTopology\] no axis named 'pipe'"):
        t.get_comm_list("pipe")
    with pytest.raises(IndexError, match="rank 4 is out of range"):
        t.get_coord(4)
    with pytest.raises(ValueError, match="one coordinate per axis"):
        t.get_rank(data=0)
    with pytest.raises(ValueError, match="expected 2 dims"):
        fleet.CommunicateTopology(["data", "model"], [2])


# ---------------------------------------------------------------- data generators
class _Words(fleet.MultiSlotDataGenerator):
    def generate_sample(self, line):
        def reader():
            ids = [int(w) for w in line.split()]
            yield [("ids", ids[1:]), ("label", ids[:1])]
        return reader


class _Padded(_Words):
    def generate_batch(self, samples):
        def reader():
            longest = max(len(s[0][1]) for s in samples)
            for ids, label in samples:
                yield [("ids", ids[1] + [0] * (longest - len(ids[1]))), label]
        return reader


def test_multislot_generators(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("1 5 6 7\n0 8\n"))
    _Words().run_from_stdin()
    assert capsys.readouterr().out == "3 5 6 7 1 1\n1 8 1 0\n"
    g = _Padded()
    g.set_batch(2)
    monkeypatch.setattr(sys, "stdin", io.StringIO("1 5 6 7\n0 8\n1 9\n"))
    g.run_from_stdin()
    assert capsys.readouterr().out == "3 5 6 7 1 1\n3 8 0 0 1 0\n1 9 1 1\n"
    m = fleet.MultiSlotDataGenerator()
    assert m._gen_str((("a", [1, 2.5]), ("b", [3]))) == "2 1 2.5 1 3\n"
    assert m._proto_info == [("a", "float"), ("b", "uint64")]
    with pytest.raises(ValueError, match="slot 1 is named 'c'"):
        m._gen_str([("a", [1]), ("c", [2])])
    with pytest.raises(ValueError, match="slot 'a' has no values"):
        m._gen_str([("a", []), ("b", [2])])
    with pytest.raises(TypeError, match="must be int or float"):
        m._gen_str([("a", ["x"]), ("b", [2])])
    assert m._proto_info == [("a", "float"), ("b", "uint64")]  # unchanged by the bad samples
    s = fleet.MultiSlotStringDataGenerator()
    assert s._gen_str(zip(["w", "l"], [["hi", "yo"], ["1"]])) == "2 hi yo 1 1\n"
    with pytest.raises(TypeError, match="must be str"):
        s._gen_str([("w", [1])])
    with pytest.raises(NotImplementedError, match="override generate_sample"):
        fleet.MultiSlotDataGenerator().run_from_memory()


# ---------------------------------------------------------------- role makers, util
def test_role_makers_and_file_shard(monkeypatch):
    files = list("abcde")
    for workers, want in ((2, [list("abc"), list("de")]), (3, [list("ab"), list("cd"), list("e")]),
                          (7, [[f] for f in files] + [[], []])):
        for i in range(workers):
            u = fleet.UtilBase()
            u._set_role_maker(fleet.UserDefinedRoleMaker(current_id=i, role=fleet.Role.WORKER, worker_num=workers))
            assert u.get_file_shard(files) == want[i]
    rm = fleet.UserDefinedRoleMaker(is_collective=True, current_id=1,
                                    worker_endpoints=["10.0.0.1:6000", "10.0.0.2:6000"])
    rm._generate_role()
    assert (rm._worker_index(), rm._worker_num(), rm._node_num(), rm._is_first_worker()) == (1, 2, 2, False)
    with pytest.raises(NotImplementedError, match="parameter-server"):
        fleet.UserDefinedRoleMaker(current_id=0, role=fleet.Role.SERVER, worker_num=1)._generate_role()
    with pytest.raises(ValueError, match="current_id 3 must be less than the number of workers 2"):
        fleet.UserDefinedRoleMaker(current_id=3, role=fleet.Role.WORKER, worker_num=2)._generate_role()
    monkeypatch.setenv("TRAINING_ROLE", "PSERVER")
    with pytest.raises(NotImplementedError, match="TRAINING_ROLE=PSERVER"):
        fleet.PaddleCloudRoleMaker()._generate_role()
    with pytest.raises(TypeError, match=r"^\[oar.distributed.fleet.UtilBase.get_file_shard\] files must be a list"):
        fleet.util.get_file_shard("abc")


# ---------------------------------------------------------------- one process
def test_single_process_fleet_trains_like_numpy():
    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1}
    fleet.init(is_collective=True, strategy=s)
    assert fleet.worker_num() == 1 and fleet.worker_index() == 0 and fleet.is_first_worker()
    hcg = fleet.get_hybrid_communicate_group()
    assert hcg.get_parallel_mode() == dist.ParallelMode.DATA_PARALLEL
    assert fleet.util.all_reduce([3, 4], "max").tolist() == [3, 4] and fleet.util.all_gather("x") == ["x"]
    rng = np.random.default_rng(0)
    w0, x, t = rng.standard_normal((3, 2)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    layer = oar.nn.Linear(3, 2, bias_attr=False)
    with oar.no_grad():
        layer.weight.copy_(oar.to_tensor(w0.astype("float32")), False)
    model = fleet.distributed_model(layer)
    opt = fleet.distributed_optimizer(oar.optimizer.SGD(0.1, parameters=model.parameters()))
    w = w0.copy()
    for _ in range(3):
        loss = ((model(oar.to_tensor(x.astype("float32"))) - oar.to_tensor(t.astype("float32"))) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        w -= 0.1 * x.T @ (2 * (x @ w - t) / t.size)
    np.testing.assert_allclose(layer.weight.numpy(), w, rtol=1e-5)
    # mp layers made after fleet.init use the layout's model-parallel group
    col = fleet.meta_parallel.ColumnParallelLinear(3, 4)
    assert col.weight.process_mesh.process_ids == hcg.get_model_parallel_group().ranks == [0]
    with pytest.raises(TypeError, match=r"^\[oar.distributed.fleet.distributed_model\] model must be"):
        fleet.distributed_model(lambda v: v)
    with pytest.raises(TypeError, match=r"^\[oar.distributed.fleet.init\] strategy must be"):
        fleet.init(is_collective=True, strategy={"dp_degree": 1})


def test_single_process_amp_o2_and_minimize():
    s = fleet.DistributedStrategy()
    s.amp = True
    s.amp_configs = {"use_pure_bf16": True}
    fleet.init(is_collective=True, strategy=s)
    model = fleet.distributed_model(oar.nn.Linear(2, 2))
    assert model.weight.dtype == oar.bfloat16  # decorated for O2
    fleet.init(is_collective=True)
    w = oar.to_tensor([2.0], stop_gradient=False)
    opt = fleet.distributed_optimizer(oar.optimizer.SGD(0.25, parameters=[w]))
    loss = (w * w).sum()
    loss.backward()
    fleet.minimize(loss)
    assert w.numpy().tolist() == [1.0]  # 2 - 0.25 * 2 * 2
    with pytest.raises(TypeError, match=r"^\[oar.distributed.fleet.distributed_optimizer\] expected an oar"):
        fleet.distributed_optimizer(object())
    assert fleet.distributed_scaler(oar.amp.GradScaler()).get_loss_scaling() == 2.0 ** 16


def test_single_process_pipeline_layer():
    s = fleet.DistributedStrategy()
    s.pipeline_configs = {"accumulate_steps": 2, "micro_batch_size": 2}
    fleet.init(is_collective=True, strategy=s)
    mp = fleet.meta_parallel
    topo = fleet.get_hybrid_communicate_group().topology()
    pl = mp.PipelineLayer([mp.LayerDesc(oar.nn.Linear, 3, 1, bias_attr=False)], loss_fn=oar.nn.MSELoss(),
                          topology=topo)
    model = fleet.distributed_model(pl)
    assert isinstance(model, mp.PipelineParallel) and (model.accumulate_steps, model.micro_batch_size) == (2, 2)
    rng = np.random.default_rng(1)
    x, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 1))
    w = pl.run_function[0].weight.numpy().astype("float64")
    opt = fleet.distributed_optimizer(oar.optimizer.SGD(0.1, parameters=model.parameters()))
    model.train_batch([oar.to_tensor(x.astype("float32")), oar.to_tensor(t.astype("float32"))], opt)
    w -= 0.1 * x.T @ (2 * (x @ w - t) / t.size)
    np.testing.assert_allclose(pl.run_function[0].weight.numpy(), w, rtol=1e-5)
    with pytest.raises(ValueError, match="is not the layout of fleet.init"):
        mp.PipelineLayer([mp.LayerDesc(oar.nn.Linear, 3, 1)], topology=fleet.CommunicateTopology(["data", "pipe"],
                                                                                                  [1, 1]))


def test_paddle_distributed_names():
    assert (dist.ParallelMode.DATA_PARALLEL, dist.ParallelMode.TENSOR_PARALLEL, dist.ParallelMode.PIPELINE_PARALLEL,
            dist.ParallelMode.SHARDING_PARALLEL, dist.ParallelMode.SEGMENT_PARALLEL) == (0, 1, 2, 3, 4)
    assert [int(v) for v in dist.ReduceType] == list(range(7))  # kRedSum .. kRedAll, as in Paddle
    assert dist.Partial(dist.ReduceType.kRedAvg) == dist.Partial("avg")
    with pytest.raises(ValueError, match=r"^\[oar.distributed.Partial\]"):
        dist.Partial(dist.ReduceType.kRedAny)
    assert callable(dist.launch) and dist.launch.main is not None
    with pytest.raises(ValueError, match=r"^\[oar.distributed.gloo_init_parallel_env\] this process is rank 0 of 1"):
        dist.gloo_init_parallel_env(1, 2, "127.0.0.1:6170")
    with pytest.raises(RuntimeError, match="call gloo_init_parallel_env"):
        dist.gloo_barrier()
    with pytest.raises(ValueError, match=r"^\[oar.distributed.send_object_list\] give exactly one of dst"):
        dist.send_object_list([1])
    with pytest.raises(TypeError, match="must be picklable"):
        dist.spawn(lambda: None, nprocs=1)


class _Block(oar.nn.Layer):
    """Linear -> dropout -> ReLU -> Linear, counting its forward passes; returns two outputs."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.drop = oar.nn.Linear(4, 8), oar.nn.Linear(8, 3), oar.nn.Dropout(0.5)
        self.calls = 0

    def forward(self, x, scale=1.0):
        self.calls += 1
        h = self.b(oar.nn.functional.relu(self.drop(self.a(x)))) * scale
        return h, h.sum(axis=1)


@pytest.mark.parametrize("x_needs_grad", [True, False])
def test_recompute_matches_plain_backward(x_needs_grad):
    from oar.distributed.fleet.utils import recompute

    block = _Block()
    x = oar.to_tensor(np.random.default_rng(3).standard_normal((5, 4)).astype("float32"),
                      stop_gradient=not x_needs_grad)

    def grads(use_recompute):
        block.clear_gradients()
        x.clear_grad()
        oar.seed(5)
        h, s = recompute(block, x, scale=2.0) if use_recompute else block(x, scale=2.0)
        (h * h).sum().backward()  # s is left unused: its gradient is None
        out = {n: p.grad.numpy().copy() for n, p in block.named_parameters()}
        if x_needs_grad:
            out["x"] = x.grad.numpy().copy()
        return out, h.numpy()

    block.calls = 0
    want, h_plain = grads(False)
    assert block.calls == 1
    got, h_rc = grads(True)
    assert block.calls == 3  # forward, then again in the backward pass
    np.testing.assert_array_equal(h_rc, h_plain)  # the same dropout mask
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-7, err_msg=k)
    with oar.no_grad():
        block.calls = 0
        recompute(block, x)
        assert block.calls == 1
    with pytest.raises(TypeError, match=r"^\[oar.distributed.fleet.utils.recompute\] function must be callable"):
        recompute(3, x)


def test_rng_state_tracker_streams():
    from oar.distributed.fleet.meta_parallel import RNGStatesTracker, get_rng_state_tracker, model_parallel_random_seed

    t = RNGStatesTracker()
    t.add("a", 7)
    oar.seed(1)
    first = oar.rand([3]).numpy()
    oar.seed(1)
    with t.rng_state("a"):
        in_a = oar.rand([3]).numpy()
        in_a2 = oar.rand([3]).numpy()
    np.testing.assert_array_equal(oar.rand([3]).numpy(), first)  # the global stream did not move
    oar.seed(7)
    np.testing.assert_array_equal(in_a, oar.rand([3]).numpy())
    np.testing.assert_array_equal(in_a2, oar.rand([3]).numpy())  # the stream went on where it stopped
    with pytest.raises(ValueError, match="seed 7 already exists"):
        t.add("b", 7)
    with pytest.raises(ValueError, match="state 'zz' does not exist"):
        with t.rng_state("zz"):
            pass
    fleet.init(is_collective=True)
    model_parallel_random_seed(40)  # one process: mp rank 0, stage 0 -> local seed 41
    glob = oar.rand([2]).numpy()
    with get_rng_state_tracker().rng_state():
        local = oar.rand([2]).numpy()
    oar.seed(40)
    np.testing.assert_array_equal(glob, oar.rand([2]).numpy())
    oar.seed(41)
    np.testing.assert_array_equal(local, oar.rand([2]).numpy())


@pytest.mark.parametrize("filename", [None, "all.safetensors"])
def test_distributed_io_persistables_roundtrip(tmp_path, filename):
    from oar.distributed import io as dio

    oar.enable_static()
    try:
        main, start = oar.static.Program(), oar.static.Program()
        with oar.static.program_guard(main, start):
            x = oar.static.data("x", [None, 3], "float32")
            loss = oar.static.nn.fc(x, 2, name="fc").mean()
            oar.optimizer.Momentum(0.1, 0.9).minimize(loss)
        exe = oar.static.Executor()
        exe.run(start)
        feed = {"x": np.arange(6, dtype="float32").reshape(2, 3)}
        exe.run(main, feed=feed, fetch_list=[loss])
        def snapshot():
            return {k: np.array(v.numpy(), copy=True) for k, v in main.state_dict().items()}

        saved = snapshot()
        if filename is None:
            fleet.save_persistables(exe, str(tmp_path), main)  # the same files
        else:
            dio.save_persistables(exe, str(tmp_path), main, filename=filename)
        names = sorted(os.listdir(tmp_path))
        assert names == ([filename] if filename else sorted(names)) and len(names) >= (1 if filename else 3)
        exe.run(main, feed=feed, fetch_list=[loss])  # moves the weights and the velocity on
        moved = snapshot()
        assert not np.allclose(moved["fc.w_0"], saved["fc.w_0"])
        dio.load_persistables(exe, str(tmp_path), main, filename=filename)
        for k, v in snapshot().items():
            np.testing.assert_array_equal(v, saved[k], err_msg=k)
        # the velocity came back too: the next step repeats the first one after saving
        exe.run(main, feed=feed, fetch_list=[loss])
        np.testing.assert_allclose(snapshot()["fc.w_0"], moved["fc.w_0"], rtol=1e-6)
        assert dio.is_persistable(main.state_dict()["fc.w_0"]) and not dio.is_persistable(x)
        with pytest.raises(FileNotFoundError, match=r"^\[oar.distributed.io.load_persistables\]"):
            dio.load_persistables(exe, str(tmp_path / "nowhere"), main, filename=filename)
    finally:
        oar.disable_static()


# ---------------------------------------------------------------- real ranks
@needs_mpi
def test_fleet_layouts_on_2_ranks():
    modes = ["dp", "mp", "pp", "sharding", "scaler", "objects"]
    found = ranks_ok(run_ranks(2, "fleet_hybrid.py", *modes, timeout=180), 2 * len(modes),
                     r"rank (\d+): (\w+) fleet checks passed")
    assert sorted(found) == sorted((str(r), m) for r in range(2) for m in modes)


@needs_mpi
def test_fleet_hybrid_layouts_on_4_ranks():
    modes = ["dpmp", "ppmp", "dppp", "pp", "sharding"]
    ranks_ok(run_ranks(4, "fleet_hybrid.py", *modes, timeout=180), 4 * len(modes), r"rank \d+: \w+ fleet checks passed")


@needs_mpi
def test_spawn_runs_a_function_on_ranks():
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "fleet_spawn.py")], capture_output=True, text=True,
                       timeout=180, env=child_env(OMP_NUM_THREADS="1"))
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    assert sorted(l for l in p.stdout.splitlines() if "spawned rank" in l) == [
        "[rank 0] spawned rank 0 of 2: sum 10", "[rank 1] spawned rank 1 of 2: sum 10"], out[-3000:]
    assert "spawn parent ok" in p.stdout and "rank 1 exited with code 3" in p.stderr, out[-3000:]
