"""dist.parallelize and its plans, Strategy / DistModel / to_static, local_map,
LocalLayer, shard_scaler, sharded state dicts and the process-group controls:
parity with one process on 2 real ranks, NumPy references in one process, and
argument errors."""
import warnings

import numpy as np
import pytest

import oar
import oar.distributed as dist
from dist_util import ranks_ok, run_ranks

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="oar was built without MPI")

PARITY = ["mp", "mp_regex", "dp", "stage1", "stage2", "stage3", "dp_mp_pp", "sp", "cp_all2all", "cp_p2p", "static",
          "static_stage1"]


def test_parity_2_ranks():
    # Column/row splits, regex and parameter-name keys, data parallel with
    # sharding levels 0-3, dp x mp with a size-1 pp dim, sequence parallel
    # (the layer norm runs on [s/2, b, h] pieces), context parallel (causal
    # attention on half the heads, other layers on half the sequence; both
    # backends, with tensor parallel) and DistModel: 3 AdamW steps'
    # losses and the parameters after them equal one process within 1e-5.
    found = ranks_ok(run_ranks(2, "parallelize_parity.py", *PARITY, timeout=300), 2 * len(PARITY),
                     r"rank (\d+): ok (\w+);")
    assert sorted(found) == sorted((str(r), s) for r in range(2) for s in PARITY)


def test_utils_and_conv_2_ranks():
    # local_map, shard_scaler skipping on both ranks when one overflows,
    # build_sharded_state_dict + save + load_merged_state_dict, group
    # shutdown/restart, and ConvParallel's width split against a plain conv.
    ranks_ok(run_ranks(2, "parallelize_parity.py", "utils", "conv", timeout=300), 4, r"rank \d+: ok \w+;")


# ---------------------------------------------------------------- one process
def _mesh(names=("dp", "mp")):
    return dist.ProcessMesh(np.zeros([1] * len(names), dtype="int64").tolist(), dim_names=list(names))


def _numpy_sgd(w, b, batches, lr, k=1):
    """Linear + MSE trained by SGD in NumPy; k batches' mean gradient per step."""
    losses, gw, gb, seen = [], 0, 0, 0
    for x, y in batches:
        r = x @ w + b - y
        losses.append(float((r * r).mean()))
        gw = gw + 2 * x.T @ r / r.size / k
        gb = gb + 2 * r.sum(0) / r.size / k
        seen += 1
        if seen == k:
            w, b, gw, gb, seen = w - lr * gw, b - lr * gb, 0, 0, 0
    return w, b, losses


def _batches(n):
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((4, 3)).astype("float32"), rng.standard_normal((4, 2)).astype("float32"))
            for _ in range(n)]


@pytest.mark.parametrize("level", [0, 1, 3])
def test_one_process_matches_numpy(level):
    oar.seed(3)
    net = oar.nn.Linear(3, 2)
    w0, b0 = net.weight.numpy(), net.bias.numpy()
    opt = oar.optimizer.SGD(0.1, parameters=net.parameters())
    net, opt = dist.parallelize(net, opt, _mesh(), {"mp_config": {"parallelize_plan": {"": dist.ColWiseParallel()}},
                                                    "dp_config": {"sharding_level": level}})
    assert net.weight.placements == [dist.Replicate(), dist.Shard(1)]
    batches = _batches(3)
    losses = []
    for x, y in batches:
        loss = oar.nn.functional.mse_loss(net(oar.to_tensor(x)), oar.to_tensor(y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    w, b, ref = _numpy_sgd(w0, b0, batches, 0.1)
    np.testing.assert_allclose(losses, ref, rtol=1e-5)
    np.testing.assert_allclose(net.weight.numpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.bias.numpy(), b, rtol=1e-5, atol=1e-6)


def test_dist_model_gradient_merge_matches_numpy():
    oar.seed(4)
    net = oar.nn.Linear(3, 2)
    w0, b0 = net.weight.numpy(), net.bias.numpy()
    mesh = dist.ProcessMesh([0], dim_names=["dp"])
    net = dist.shard_layer(net, mesh)
    opt = oar.optimizer.SGD(0.2, parameters=net.parameters())
    strategy = dist.Strategy({"gradient_merge": {"enable": True, "k_steps": 2}, "return_numpy": False})
    model = dist.to_static(net, None, oar.nn.MSELoss(), opt, strategy)
    assert model._mode == "train"
    batches = _batches(4)
    losses = [float(model(oar.to_tensor(x), oar.to_tensor(y))) for x, y in batches]
    w, b, ref = _numpy_sgd(w0, b0, batches, 0.2, k=2)
    np.testing.assert_allclose(losses, ref, rtol=1e-5)
    np.testing.assert_allclose(net.weight.numpy(), w, rtol=1e-5, atol=1e-6)
    model.eval()
    x, y = batches[0]
    r = x @ w + b - y
    np.testing.assert_allclose(float(model(oar.to_tensor(x), oar.to_tensor(y))), (r * r).mean(), rtol=1e-5)
    model.predict()
    np.testing.assert_allclose(model(oar.to_tensor(x)).numpy(), x @ w + b, rtol=1e-5, atol=1e-6)
    assert sorted(model.state_dict("param")) == ["bias", "weight"]


def test_sequence_parallel_hooks_one_process():
    mesh = _mesh()
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    ident = oar.nn.Identity()
    dist.SequenceParallelBegin().apply(ident, mesh, [])
    y = ident(oar.to_tensor(x))
    assert y.placements == [dist.Replicate(), dist.Shard(0)]
    np.testing.assert_array_equal(y.numpy(), x.transpose(1, 0, 2))
    end = oar.nn.Identity()
    dist.SequenceParallelEnd().apply(end, mesh, [])
    np.testing.assert_array_equal(end(y).numpy(), x)
    with pytest.raises(ValueError, match=r"^\[oar.distributed.parallelize\] sequence parallel expects a 3-D"):
        ident(oar.ones([2, 3]))


def test_row_wise_splits_input_when_not_parallel():
    mesh = dist.ProcessMesh([0], dim_names=["mp"])
    lin = oar.nn.Linear(4, 2)
    seen = []
    lin, _ = dist.parallelize(lin, None, mesh, {"mp_config": {"parallelize_plan": {
        "": dist.RowWiseParallel(is_input_parallel=False)}}})
    lin.register_forward_pre_hook(lambda _l, inp: seen.append(inp[0].placements))
    x = np.ones((3, 4), dtype="float32")
    out = lin(oar.to_tensor(x))
    assert seen == [[dist.Shard(1)]]
    np.testing.assert_allclose(out.numpy(), x @ lin.weight.numpy() + lin.bias.numpy(), rtol=1e-6)


def test_shared_parameter_is_placed_once():
    a, b = oar.nn.Linear(2, 2), oar.nn.Linear(2, 2)
    b.weight = a.weight
    net = oar.nn.Sequential(a, b)
    opt = oar.optimizer.SGD(0.1, parameters=net.parameters())
    net, opt = dist.parallelize(net, opt, _mesh(), {"mp_config": {"parallelize_plan": {"0": dist.ColWiseParallel()}}})
    assert net[0].weight is net[1].weight
    assert len(opt._parameter_list) == 3 and all(p.is_dist() for p in opt._parameter_list)


def test_parallelize_errors():
    api = r"^\[oar.distributed.parallelize\]"
    net = oar.nn.Linear(2, 2)
    with pytest.raises(TypeError, match=api + " model must be"):
        dist.parallelize("net", config={})
    with pytest.raises(TypeError, match=api + " config must be a dict"):
        dist.parallelize(net, mesh=_mesh(), config=[1])
    with pytest.raises(ValueError, match=api + r" unknown config keys \['tp_config'\]"):
        dist.parallelize(net, mesh=_mesh(), config={"tp_config": {}})
    with pytest.raises(TypeError, match=api + " mesh must be"):
        dist.parallelize(net, mesh=[0], config={})
    with pytest.raises(ValueError, match=api + r" the mesh needs a dim named 'mp'"):
        dist.parallelize(net, mesh=_mesh(["dp"]), config={"mp_config": {"parallelize_plan": {
            "": dist.ColWiseParallel()}}})
    with pytest.raises(TypeError, match=api + r" the plan for 'x' must be a plan"):
        dist.parallelize(net, mesh=_mesh(), config={"mp_config": {"parallelize_plan": {"x": "col"}}})
    with pytest.raises(ValueError, match=api + " dp_config sharding_level must be 0, 1, 2 or 3, got 5"):
        dist.parallelize(oar.nn.Linear(2, 2), oar.optimizer.SGD(parameters=net.parameters()), _mesh(),
                         {"dp_config": {"sharding_level": 5}})
    with pytest.raises(ValueError, match=r"^\[oar.distributed.PrepareContextParallel\] the mesh needs a dim "
                                         r"named 'sep'"):
        dist.parallelize(net, mesh=_mesh(), config={"cp_config": {"parallelize_plan": {
            "": dist.PrepareContextParallel()}}})
    with pytest.raises(ValueError, match=r"^\[oar.distributed.SequenceParallelEnd\] the mesh needs a dim named 'mp'"):
        dist.SequenceParallelEnd().apply(net, _mesh(["dp"]), [])
    with pytest.raises(ValueError, match=r"^\[oar.distributed.ContextParallel\] backend must be 'p2p' or 'all2all'"):
        dist.ContextParallel("ring")
    with pytest.raises(TypeError, match=r"^\[oar.distributed.PrepareLayerInput\] fn must be a callable"):
        dist.PrepareLayerInput(None)
    with pytest.raises(ValueError, match=r"^\[oar.distributed.RowWiseParallel\] _OneD.bias_ must have 2 dims"):
        dist.RowWiseParallel().apply(_OneD(), _mesh(), ["bias_"])
    with pytest.raises(ValueError, match=r"^\[oar.distributed.ColWiseParallel\] _OneD.w3 must have 1 or 2"):
        dist.ColWiseParallel().apply(_OneD(), _mesh(), ["w3"])


class _OneD(oar.nn.Layer):
    def __init__(self):
        super().__init__()
        self.bias_ = self.create_parameter([3])
        self.w3 = self.create_parameter([2, 2, 2])

    def forward(self, x):
        return x


def test_pipeline_config():
    api = r"^\[oar.distributed.parallelize\]"
    net = oar.nn.Sequential(oar.nn.Linear(2, 2), oar.nn.Linear(2, 2))
    pp2 = dist.ProcessMesh([[0], [1]], dim_names=["pp", "mp"])
    with pytest.raises(NotImplementedError, match=api + " pipeline stages over a 'pp' mesh dim of size 2"):
        dist.parallelize(net, mesh=pp2, config={"pp_config": {"split_spec": {"0": dist.SplitPoint.END}}})
    with pytest.raises(ValueError, match=api + " pp_config split_spec names 'nope'"):
        dist.parallelize(net, mesh=pp2, config={"pp_config": {"split_spec": {"nope": dist.SplitPoint.END}}})
    with pytest.raises(ValueError, match=api + r" split_spec makes 1 stages, but the mesh's 'pp' dim has 2"):
        dist.parallelize(net, mesh=pp2, config={"pp_config": {"split_spec": {}}})
    with pytest.raises(ValueError, match=api + " pp_config split_spec 'layers' matches no numbered sublayer"):
        dist.parallelize(net, mesh=pp2, config={"pp_config": {"split_spec": "layers"}})
    # one stage: the pp dim of size 1 is dropped
    net, _ = dist.parallelize(net, mesh=_mesh(["pp", "dp"]), config={"pp_config": {"split_spec": {}}})
    assert net[0].weight.process_mesh.dim_names == ["dp"]


def test_parallelize_without_config_or_with_unmatched_key_warns():
    net = oar.nn.Linear(2, 2)
    with pytest.warns(UserWarning, match="config is None"):
        assert dist.parallelize(net)[0] is net
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        dist.parallelize(net, mesh=_mesh(), config={"mp_config": {"parallelize_plan": {
            "missing": dist.ColWiseParallel()}}})
    assert any("['missing'] match no sublayer" in str(x.message) for x in w)


def test_strategy_defaults_and_errors():
    # defaults as in Paddle 3.3.1's paddle.distributed.Strategy()
    s = dist.Strategy()
    assert (s.sharding.enable, s.sharding.stage, s.sharding.degree, s.sharding.comm_buffer_size_MB) == (
        False, 1, 8, 256)
    assert (s.gradient_merge.k_steps, s.gradient_merge.avg) == (1, True)
    assert (s.pipeline.schedule_mode, s.pipeline.accumulate_steps, s.pipeline.micro_batch_size) == ("1F1B", 1, 1)
    assert (s.amp.dtype, s.amp.level, s.amp.init_loss_scaling, s.amp.decr_ratio) == ("float16", "o1", 32768.0, 0.8)
    assert (s.fused_passes.enable, s.recompute.enable, s.sp_optimization.enable) == (False, False, True)
    assert (s.auto_mode, s.return_numpy, s.full_graph, s.split_data, s.seed) == ("semi", True, True, True, None)
    api = r"^\[oar.distributed.Strategy\]"
    with pytest.raises(ValueError, match=api + " expected a dict"):
        dist.Strategy(3)
    with pytest.raises(ValueError, match=api + r" unknown options \['shardin'\]"):
        dist.Strategy({"shardin": {}})
    with pytest.raises(ValueError, match=api + " section 'sharding' has no option 'stag'"):
        dist.Strategy({"sharding": {"stag": 2}})
    with pytest.raises(ValueError, match=api + " section 'amp' has no option 'enabled'"):
        s.amp.enabled = True
    with pytest.raises(ValueError, match=api + " unknown option 'sharding_stage'"):
        s.sharding_stage = 2


def test_dist_model_errors():
    net = oar.nn.Linear(2, 1)
    api = r"^\[oar.distributed.DistModel"
    with pytest.raises(TypeError, match=api + r"\] layer must be"):
        dist.to_static("net")
    with pytest.raises(TypeError, match=api + r"\] strategy must be"):
        dist.to_static(net, strategy={})
    with pytest.raises(NotImplementedError, match=api + r"\] strategy.pipeline"):
        dist.to_static(net, strategy=dist.Strategy({"pipeline": {"enable": True}}))
    model = dist.to_static(net)
    assert model._mode == "predict"
    with pytest.raises(ValueError, match=api + r".train\] train mode needs a loss and an optimizer"):
        model.train()
    with pytest.raises(ValueError, match=api + r".eval\] eval mode needs a loss"):
        model.eval()
    with pytest.raises(TypeError, match=api + r"\] inputs must be tensors"):
        model("x")


def test_dist_attr_dtensor_from_fn_and_local_map():
    mesh = dist.ProcessMesh([[0]], dim_names=["x", "y"])
    a = dist.DistAttr(mesh, [None, "y"])
    assert a.placements == [dist.Replicate(), dist.Shard(1)]
    with pytest.raises(ValueError, match=r"^\[oar.distributed.DistAttr\] 'z' is not a dim"):
        dist.DistAttr(mesh, ["z"])
    with pytest.raises(ValueError, match=r"^\[oar.distributed.DistAttr\] a mesh dim may split only one"):
        dist.DistAttr(mesh, ["x", "x"])
    t = dist.dtensor_from_fn(oar.full, mesh, a.placements, [2, 2], 3.0)
    np.testing.assert_array_equal(t.numpy(), np.full((2, 2), 3.0))
    with pytest.raises(TypeError, match=r"^\[oar.distributed.dtensor_from_fn\] fn must be callable"):
        dist.dtensor_from_fn(3, mesh, a.placements)
    sq = dist.local_map(lambda v: v * v, [a.placements], [a.placements])
    np.testing.assert_array_equal(sq(t).numpy(), np.full((2, 2), 9.0))
    assert sq(oar.to_tensor([2.0])).numpy().tolist() == [4.0]  # a local argument: func as it is
    with pytest.raises(ValueError, match=r"^\[oar.distributed.local_map\] argument 0 has placements"):
        dist.local_map(lambda v: v, [None], [[dist.Shard(0), dist.Replicate()]])(t)
    resh = dist.local_map(lambda v: v, [None], [[dist.Shard(0), dist.Replicate()]], reshard_inputs=True)
    assert not resh(t).is_dist()
    with pytest.raises(ValueError, match=r"^\[oar.distributed.local_map\] func returned 1 outputs"):
        dist.local_map(lambda v: v, [None, None])(t)
    with pytest.raises(TypeError, match=r"^\[oar.distributed.local_map\] out_placements"):
        dist.local_map(lambda v: v, "R")


def test_local_layer_gradient():
    mesh = dist.ProcessMesh([0], dim_names=["x"])

    class Square(dist.LocalLayer):
        def forward(self, v):
            return v * v

    layer = Square([(mesh, [dist.Shard(0)])], [None])
    x = dist.shard_tensor(oar.to_tensor([1.0, 2.0, 3.0]), mesh, [dist.Shard(0)], stop_gradient=False)
    y = layer(x)
    assert y.placements == [dist.Shard(0)]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    with pytest.raises(TypeError, match=r"^\[oar.distributed.LocalLayer\] out_dist_attrs"):
        Square([mesh], None)


def test_shard_scaler_skips_on_overflow():
    scaler = dist.shard_scaler(oar.amp.GradScaler(init_loss_scaling=4.0, decr_ratio=0.5, decr_every_n_nan_or_inf=1))
    mesh = dist.ProcessMesh([0])
    w = dist.shard_tensor(oar.ones([2]), mesh, [dist.Shard(0)], stop_gradient=False)
    opt = oar.optimizer.SGD(1.0, parameters=[w])
    scaler.scale((w * float("inf")).sum()).backward()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(w.numpy(), [1.0, 1.0])
    assert scaler.get_loss_scaling() == 2.0
    with pytest.raises(TypeError, match=r"^\[oar.distributed.shard_scaler\] expected an oar.amp.GradScaler"):
        dist.shard_scaler(object())


def test_sharded_state_dict_roundtrip(tmp_path):
    mesh = dist.ProcessMesh([0])
    w = np.arange(6, dtype="float32").reshape(3, 2)
    ssd = dist.build_sharded_state_dict({"w": dist.shard_tensor(oar.to_tensor(w), mesh, [dist.Shard(1)]),
                                         "v": oar.to_tensor([1.0, 2.0])}, prefix="net.")
    assert ssd["net.w"].global_shape == (3, 2) and ssd["net.v"].local_shape == (2,)
    dist.save_state_dict(ssd, str(tmp_path))
    merged = dist.load_merged_state_dict(str(tmp_path), prefix="net.w")
    assert list(merged) == ["net.w"]
    np.testing.assert_array_equal(merged["net.w"].numpy(), w)
    # a piece receives its region of the saved tensor
    piece = {"net.w": dist.ShardedWeight("net.w", oar.zeros([2, 2]), (2, 2), (3, 2), (1, 0))}
    dist.load_state_dict(piece, str(tmp_path))
    np.testing.assert_array_equal(piece["net.w"].local_tensor.numpy(), w[1:])
    with pytest.raises(ValueError, match=r"^\[oar.distributed.ShardedWeight\] 'k': local_tensor has shape"):
        dist.ShardedWeight("k", oar.zeros([2]), (3,), (3,), (0,))
    with pytest.raises(ValueError, match=r"^\[oar.distributed.ShardedWeight\] 'k': the piece of shape \[2\]"):
        dist.ShardedWeight("k", oar.zeros([2]), (2,), (3,), (2,))
    with pytest.raises(ValueError, match=r"^\[oar.distributed.build_sharded_state_dict\] axis 2 is out of range"):
        dist.build_sharded_state_dict({"v": oar.zeros([2])}, {"v": 2})
    with pytest.raises(FileNotFoundError, match=r"^\[oar.distributed.load_state_dict\]"):
        dist.load_merged_state_dict(str(tmp_path / "none"))


def test_nccl_config_and_group_restart():
    assert dist.create_nccl_config(None) is None
    with pytest.raises(ValueError, match=r"^\[oar.distributed.create_nccl_config\] unknown key 'channels'"):
        dist.create_nccl_config({"channels": 2})
    with pytest.raises(TypeError, match=r"^\[oar.distributed.create_nccl_config\] nchannels must be a int"):
        dist.create_nccl_config({"nchannels": "4"})
    g = dist.new_group([0])
    dist.shutdown_process_group()
    assert dist.get_group(g.id) is None
    dist.restart_process_group()
    t = oar.to_tensor([2.0])
    dist.all_reduce(t, group=g)
    assert float(t) == 2.0 and dist.get_group(g.id) is g
    with pytest.raises(TypeError, match=r"^\[oar.distributed.shutdown_process_group\] group must be"):
        dist.shutdown_process_group(3)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_dist_model_amp(dtype):
    # level o1: the matmul runs in the low dtype; the losses follow NumPy's
    # float32 training within the low dtype's precision, and float16 gets a
    # dynamic loss scaler
    oar.seed(5)
    net = oar.nn.Linear(3, 2)
    w0, b0 = net.weight.numpy(), net.bias.numpy()
    net = dist.shard_layer(net, dist.ProcessMesh([0], dim_names=["dp"]))
    opt = oar.optimizer.SGD(0.1, parameters=net.parameters())
    strategy = dist.Strategy({"amp": {"enable": True, "dtype": dtype, "level": "o1"}})
    model = dist.to_static(net, None, lambda out, y: ((out.astype("float32") - y) ** 2).mean(), opt, strategy)
    assert (model._scaler is not None) == (dtype == "float16")
    batches = _batches(3)
    losses = [float(model(oar.to_tensor(x), oar.to_tensor(y))) for x, y in batches]
    _, _, ref = _numpy_sgd(w0, b0, batches, 0.1)
    np.testing.assert_allclose(losses, ref, rtol=3e-2)
    model.predict()
    model._strategy.return_numpy = False
    assert str(model(oar.to_tensor(batches[0][0])).dtype).endswith(dtype)  # the matmul ran in the low dtype
    with pytest.raises(NotImplementedError, match=r"^\[oar.distributed.DistModel\] strategy.amp.level 'o2'"):
        dist.to_static(net, None, None, None, dist.Strategy({"amp": {"enable": True, "level": "o2"}}))
