"""Pipeline parallelism (oar.distributed.pipeline): 1F1B on real ranks against
one process, and the single-process pieces (segmentation, one-stage
training against NumPy, errors)."""
import re

import numpy as np
import pytest

import oar
import oar.nn as nn
from dist_util import run_ranks
from oar.distributed.pipeline import LayerDesc, PipelineLayer, PipelineParallel, SharedLayerDesc

mpi = pytest.mark.skipif(not oar.distributed.is_available(), reason="oar was built without MPI")


@mpi
@pytest.mark.parametrize("n", [2, 4])
def test_1f1b_matches_one_process(n):
    # SGD and Adam, tuple activations with a stop_gradient part, layer:Block
    # cut, a layer shared by the first and last stage with a global-norm
    # clip, eval_batch, sub-group pipelines (4 ranks), the F/B order per stage.
    p = run_ranks(n, "pp_parity.py")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    found = re.findall(r"rank (\d+): (\d+) pipeline checks passed", p.stdout)
    assert sorted(int(r) for r, _ in found) == list(range(n)), out[-4000:]
    assert all(int(c) >= (17 if n == 2 else 20) for _, c in found), found


@mpi
def test_failing_stage_is_reported_not_hung():
    p = run_ranks(2, "pp_failure.py", timeout=60)
    out = p.stdout + p.stderr
    assert re.search(r"rank 1: ValueError after [\d.]+s: bad labels in micro-batch 2", p.stdout), out[-3000:]
    m = re.search(r"rank 0: (RuntimeError|TimeoutError) after ([\d.]+)s: (.*)", p.stdout)
    assert m and float(m.group(2)) < 10, out[-3000:]
    assert m.group(3).startswith("[oar.distributed.recv]") and "[0, 1]" in m.group(3), m.group(3)


def _mlp_items():
    return [LayerDesc(nn.Linear, 3, 4), nn.ReLU(), LayerDesc(nn.Linear, 4, 4), nn.ReLU(),
            LayerDesc(nn.Linear, 4, 2)]


def test_segmentation():
    from oar.distributed.pipeline import _segment

    items = list(range(10))
    # Uniform: the last (10 % 4) stages take one more item.
    assert _segment(items, 4, "uniform") == [0, 2, 4, 7, 10]
    assert _segment(items, 1, "uniform") == [0, 10]
    assert _segment(items, 3, [0, 1, 5, 10]) == [0, 1, 5, 10]
    descs = [LayerDesc(nn.Linear, 1, 1), nn.ReLU(), LayerDesc(nn.Linear, 1, 1), nn.ReLU(),
             LayerDesc(nn.Linear, 1, 1), LayerDesc(nn.Linear, 1, 1), nn.Tanh()]
    # Each stage ends right after its last Linear; the trailing Tanh joins the last stage.
    assert _segment(descs, 2, "layer:Linear") == [0, 3, 7]
    assert _segment(descs, 4, "layer:linear") == [0, 1, 3, 5, 7]


def test_one_stage_layer_and_names():
    oar.seed(3)
    pl = PipelineLayer(_mlp_items(), num_stages=1, loss_fn=nn.MSELoss())
    assert pl.get_num_stages() == 1 and pl.stage_id == 0
    assert [pl.get_stage_from_index(i) for i in range(5)] == [0] * 5
    # Sublayers keep their index in the model.
    assert [k for k, _ in pl.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight",
                                                     "4.bias"]
    # Built with the same seed as the items built in one process.
    oar.seed(3)
    ref = [d.build_layer() if isinstance(d, LayerDesc) else d for d in _mlp_items()]
    np.testing.assert_array_equal(pl._sub_layers["4"].weight.numpy(), ref[4].weight.numpy())
    x = np.random.default_rng(0).standard_normal((5, 3)).astype("float32")
    h = x
    for la in ref:
        h = la(oar.to_tensor(h)).numpy()
    np.testing.assert_allclose(pl(oar.to_tensor(x)).numpy(), h, rtol=1e-6)
    with pytest.raises(IndexError, match=r"^\[oar.distributed.PipelineLayer\]"):
        pl.get_stage_from_index(5)


@pytest.mark.parametrize("opt_name", ["sgd", "momentum"])
def test_one_stage_train_batch_against_numpy(opt_name):
    # A linear model with MSE: the gradient of the mean loss in closed form.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 3))
    y = rng.standard_normal((8, 2))
    oar.seed(0)
    pl = PipelineLayer([LayerDesc(nn.Linear, 3, 2)], num_stages=1, loss_fn=nn.MSELoss())
    pl.to(dtype="float64")
    pp = PipelineParallel(pl, num_micro_batches=4)
    lin = pl._sub_layers["0"]
    w, b = lin.weight.numpy().copy(), lin.bias.numpy().copy()
    if opt_name == "sgd":
        opt = oar.optimizer.SGD(learning_rate=0.1, parameters=pp.parameters())
    else:
        opt = oar.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=pp.parameters())
    vw, vb = np.zeros_like(w), np.zeros_like(b)
    for _ in range(3):
        loss = pp.train_batch([oar.to_tensor(x), oar.to_tensor(y)], opt)
        r = x @ w + b - y
        np.testing.assert_allclose(float(loss), (r ** 2).mean(), rtol=1e-10)
        gw, gb = 2 * x.T @ r / r.size, 2 * r.sum(0) / r.size
        if opt_name == "sgd":
            w, b = w - 0.1 * gw, b - 0.1 * gb
        else:
            vw, vb = 0.9 * vw + gw, 0.9 * vb + gb
            w, b = w - 0.1 * vw, b - 0.1 * vb
        np.testing.assert_allclose(lin.weight.numpy(), w, rtol=1e-10)
        np.testing.assert_allclose(lin.bias.numpy(), b, rtol=1e-10)
        assert lin.weight.grad is None or not np.any(lin.weight.grad.numpy())  # cleared
    assert pp.schedule == [("F", 0), ("B", 0), ("F", 1), ("B", 1), ("F", 2), ("B", 2), ("F", 3), ("B", 3)]
    out = pp.eval_batch([oar.to_tensor(x), None])
    np.testing.assert_allclose(out.numpy(), x @ w + b, rtol=1e-10)
    ev = pp.eval_batch([oar.to_tensor(x), oar.to_tensor(y)], compute_loss=True)
    np.testing.assert_allclose(float(ev), ((x @ w + b - y) ** 2).mean(), rtol=1e-10)


def test_shared_layer_in_one_stage():
    # Both uses are one layer: its gradient is the sum of both uses'.
    def transposed(layer, h):
        return oar.matmul(h, layer.weight, transpose_y=True)

    oar.seed(5)
    items = [SharedLayerDesc("tie", nn.Linear, None, "weight", 3, 5), nn.Tanh(),
             SharedLayerDesc("tie", nn.Linear, transposed, "weight", 3, 5)]
    pl = PipelineLayer(items, num_stages=1, loss_fn=nn.MSELoss())
    assert [k for k, _ in pl.named_parameters()] == ["shared_layers.tie.weight", "shared_layers.tie.bias"]
    w = pl.shared_layers["tie"].weight.numpy().astype("float64")
    b = pl.shared_layers["tie"].bias.numpy().astype("float64")
    x = np.random.default_rng(2).standard_normal((4, 3))
    pp = PipelineParallel(pl, num_micro_batches=2)
    opt = oar.optimizer.SGD(learning_rate=0.1, parameters=pp.parameters())
    loss = pp.train_batch([oar.to_tensor(x.astype("float32")), oar.zeros([4, 3])], opt)
    t = np.tanh(x @ w + b)
    out = t @ w.T
    np.testing.assert_allclose(float(loss), (out ** 2).mean(), rtol=1e-5)
    d_out = 2 * out / out.size
    d_pre = (d_out @ w) * (1 - t ** 2)
    gw = x.T @ d_pre + d_out.T @ t  # first use + transposed second use
    np.testing.assert_allclose(pl.shared_layers["tie"].weight.numpy(), w - 0.1 * gw, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match=r"^\[oar.distributed.PipelineLayer\] shared layer 'tie' has no parameter"):
        PipelineLayer([SharedLayerDesc("tie", nn.Linear, None, "kernel", 3, 5)])


def test_strategy_configs():
    class Strategy:
        pipeline_configs = {"accumulate_steps": 2, "micro_batch_size": 3}

    pl = PipelineLayer(_mlp_items(), num_stages=1, loss_fn=nn.MSELoss())
    pp = PipelineParallel(pl, strategy=Strategy())
    assert pp.accumulate_steps == 2 and pp.micro_batch_size == 3
    opt = oar.optimizer.SGD(learning_rate=0.1, parameters=pp.parameters())
    float(pp.train_batch([oar.ones([6, 3]), oar.zeros([6, 2])], opt))
    with pytest.raises(ValueError, match=r"^\[oar.distributed.PipelineParallel\] the batch size 4 must equal"):
        pp.train_batch([oar.ones([4, 3]), oar.zeros([4, 2])], opt)


def test_errors():
    layer_err = r"^\[oar.distributed.PipelineLayer\]"
    pp_err = r"^\[oar.distributed.PipelineParallel\]"
    with pytest.raises(ValueError, match=layer_err + " num_stages \\(2\\) must equal"):
        PipelineLayer(_mlp_items(), num_stages=2)  # this process is a pipeline of one rank
    with pytest.raises(ValueError, match=layer_err):
        PipelineLayer(_mlp_items(), num_stages=0)
    with pytest.raises(TypeError, match=layer_err):
        PipelineLayer([])
    with pytest.raises(TypeError, match=layer_err):
        PipelineLayer([LayerDesc(nn.Linear, 2, 2), 3])
    with pytest.raises(ValueError, match=layer_err + " seg_method"):
        PipelineLayer(_mlp_items(), seg_method="by_magic")
    with pytest.raises(ValueError, match=layer_err + " seg_method 'layer:Conv2D'"):
        PipelineLayer(_mlp_items(), seg_method="layer:Conv2D")
    with pytest.raises(ValueError, match=layer_err):
        PipelineLayer(_mlp_items(), seg_method=[0, 6])
    with pytest.raises(NotImplementedError, match=layer_err):
        PipelineLayer(_mlp_items(), num_virtual_pipeline_stages=2)
    with pytest.raises(TypeError, match=r"^\[oar.distributed.LayerDesc\]"):
        LayerDesc(lambda: None)

    pl = PipelineLayer(_mlp_items(), loss_fn=nn.MSELoss())
    with pytest.raises(TypeError, match=pp_err):
        PipelineParallel(nn.Linear(2, 2))
    with pytest.raises(ValueError, match=pp_err):
        PipelineParallel(pl, num_micro_batches=0)
    pp = PipelineParallel(pl, num_micro_batches=4)
    opt = oar.optimizer.SGD(learning_rate=0.1, parameters=pp.parameters())
    with pytest.raises(ValueError, match=pp_err + " the batch size 6 is not divisible by num_micro_batches"):
        pp.train_batch([oar.ones([6, 3]), oar.zeros([6, 2])], opt)
    with pytest.raises(ValueError, match=pp_err + " all tensors of data must have the same batch size"):
        pp.train_batch([oar.ones([8, 3]), oar.zeros([4, 2])], opt)
    with pytest.raises(ValueError, match=pp_err + " the last stage needs the labels"):
        pp.train_batch([oar.ones([8, 3]), None], opt)
    with pytest.raises(TypeError, match=pp_err):
        pp.train_batch(oar.ones([8, 3]), opt)
    with pytest.raises(NotImplementedError, match=pp_err):
        pp.train_batch([oar.ones([8, 3]), oar.zeros([8, 2])], opt, scaler=object())
    no_loss = PipelineParallel(PipelineLayer(_mlp_items()), num_micro_batches=2)
    with pytest.raises(ValueError, match=pp_err + " train_batch needs the PipelineLayer's loss_fn"):
        no_loss.train_batch([oar.ones([8, 3]), oar.zeros([8, 2])], opt)
