"""oar.hapi.Model: training reaches known optima, evaluate/predict against
NumPy, optimizer steps against closed-form SGD, save/load round trips,
summary parameter counts, AMP, argument errors."""
import numpy as np
import pytest

import oar
import oar.io
import oar.metric
import oar.optimizer
from oar.hapi import InputSpec, Model, summary
from oar.io import DataLoader, TensorDataset


def blobs(n=200, seed=0):
    rs = np.random.RandomState(seed)
    y = rs.randint(0, 2, n)
    x = rs.randn(n, 2).astype("float32") * 0.5 + np.where(y[:, None] == 1, 2.0, -2.0).astype("float32")
    return x, y.reshape(-1, 1).astype("int64")


def np_log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def classifier(seed=0):
    oar.seed(seed)
    net = oar.nn.Sequential(oar.nn.Linear(2, 8), oar.nn.Tanh(), oar.nn.Linear(8, 2))
    model = Model(net)
    model.prepare(oar.optimizer.Adam(learning_rate=0.05, parameters=net.parameters()), oar.nn.CrossEntropyLoss(),
                  oar.metric.Accuracy())
    return model


def test_fit_reaches_high_accuracy_and_evaluate_matches_numpy():
    x, y = blobs()
    model = classifier()
    model.fit(TensorDataset([x, y]), batch_size=32, epochs=5, verbose=0)
    xt, yt = blobs(90, seed=1)
    ds = TensorDataset([xt, yt])
    result = model.evaluate(ds, batch_size=40, verbose=0)
    assert set(result) == {"loss", "acc"}
    (logits,) = model.predict(ds, batch_size=40, stack_outputs=True, verbose=0)
    assert logits.shape == (90, 2)
    np_acc = np.mean(np.argmax(logits, axis=1) == yt[:, 0])
    assert np_acc > 0.97
    assert result["acc"] == pytest.approx(np_acc, abs=1e-12)
    # the logged loss is the last batch's (samples 80..89), as in Paddle
    last = slice(80, 90)
    np_loss = -np.mean(np_log_softmax(logits[last].astype(np.float64))[np.arange(10), yt[last, 0]])
    assert result["loss"][0] == pytest.approx(np_loss, rel=1e-4, abs=1e-6)


def test_predict_unstacked_and_multiple_outputs():
    class TwoHeads(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.a = oar.nn.Linear(2, 3)

        def forward(self, x):
            h = self.a(x)
            return h, h * 2

    model = Model(TwoHeads())
    x, y = blobs(10)
    out = model.predict(TensorDataset([x, y]), batch_size=4, verbose=0)
    assert len(out) == 2 and [o.shape for o in out[0]] == [(4, 3), (4, 3), (2, 3)]
    w, b = model.network.a.weight.numpy(), model.network.a.bias.numpy()
    np.testing.assert_allclose(np.concatenate(out[1]), 2 * (x @ w + b), rtol=1e-5, atol=1e-6)


def linreg(lr=0.1, opt="sgd"):
    oar.seed(3)
    net = oar.nn.Linear(3, 1)
    model = Model(net)
    cls = oar.optimizer.SGD if opt == "sgd" else oar.optimizer.Adam
    model.prepare(cls(learning_rate=lr, parameters=net.parameters()), oar.nn.MSELoss())
    return model


def mse_grads(w, b, x, y):
    r = x @ w + b - y
    n = r.size
    return 2 * x.T @ r / n, 2 * r.sum(axis=0) / n


def test_train_batch_is_one_sgd_step():
    model = linreg(lr=0.1)
    rs = np.random.RandomState(0)
    x, y = rs.randn(8, 3).astype("float32"), rs.randn(8, 1).astype("float32")
    w, b = model.network.weight.numpy().astype(np.float64), model.network.bias.numpy().astype(np.float64)
    loss = model.train_batch([x], [y])
    assert loss[0] == pytest.approx(np.mean((x @ w + b - y) ** 2), rel=1e-5)
    gw, gb = mse_grads(w, b, x, y)
    np.testing.assert_allclose(model.network.weight.numpy(), w - 0.1 * gw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.network.bias.numpy(), b - 0.1 * gb, rtol=1e-5, atol=1e-6)
    assert model.network.weight.grad is None or not np.any(model.network.weight.grad.numpy())
    # update=False only accumulates the gradient
    model.train_batch([x], [y], update=False)
    np.testing.assert_allclose(model.network.weight.numpy(), w - 0.1 * gw, rtol=1e-5, atol=1e-6)


def test_gradient_accumulation_matches_closed_form():
    model = linreg(lr=0.05)
    rs = np.random.RandomState(1)
    x, y = rs.randn(20, 3).astype("float32"), rs.randn(20, 1).astype("float32")
    w, b = model.network.weight.numpy().astype(np.float64), model.network.bias.numpy().astype(np.float64)
    model.fit(TensorDataset([x, y]), batch_size=4, epochs=1, verbose=0, shuffle=False, accumulate_grad_batches=2)
    # 5 batches: steps after batches 2, 4 and 5 (the last batch always steps); gradients are summed
    for group in ([0, 1], [2, 3], [4]):
        gw, gb = np.zeros_like(w), np.zeros_like(b)
        for i in group:
            sl = slice(4 * i, 4 * i + 4)
            g = mse_grads(w, b, x[sl], y[sl])
            gw, gb = gw + g[0], gb + g[1]
        w, b = w - 0.05 * gw, b - 0.05 * gb
    np.testing.assert_allclose(model.network.weight.numpy(), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(model.network.bias.numpy(), b, rtol=1e-4, atol=1e-5)


def test_fit_accepts_dataloader_and_num_iters():
    model = linreg()
    rs = np.random.RandomState(2)
    ds = TensorDataset([rs.randn(12, 3).astype("float32"), rs.randn(12, 1).astype("float32")])
    seen = []
    from oar.hapi.callbacks import Callback

    class Steps(Callback):
        def on_train_batch_end(self, step, logs=None):
            seen.append(logs["batch_size"])

    model.fit(DataLoader(ds, batch_size=5), epochs=2, verbose=0, callbacks=[Steps()])
    assert seen == [5, 5, 2] * 2
    seen.clear()
    model.fit(ds, batch_size=4, epochs=1, num_iters=5, verbose=0, callbacks=[Steps()])
    assert seen == [4, 4, 4, 4, 4]  # num_iters decides the epochs, as in Paddle
    seen.clear()
    result = model.evaluate(ds, batch_size=4, num_iters=2, verbose=0)
    assert set(result) == {"loss"}


def test_inputs_and_labels_specs_split_the_batch():
    class Add(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.lin = oar.nn.Linear(2, 1)

        def forward(self, a, b):
            return self.lin(a + b)

    got = {}

    def loss_fn(out, label):
        got["shapes"] = (out.shape, label.shape)
        return ((out - label) ** 2).mean()

    rs = np.random.RandomState(0)
    a, b = rs.randn(6, 2).astype("float32"), rs.randn(6, 2).astype("float32")
    y = rs.randn(6, 1).astype("float32")
    model = Model(Add(), inputs=[InputSpec([None, 2], "float32", "a"), InputSpec([None, 2], "float32", "b")],
                  labels=[InputSpec([None, 1], "float32", "y")])
    model.prepare(oar.optimizer.SGD(parameters=model.parameters()), loss_fn)
    model.fit(TensorDataset([a, b, y]), batch_size=3, verbose=0)
    assert got["shapes"] == ([3, 1], [3, 1])
    (out,) = model.predict(TensorDataset([a, b, y]), batch_size=6, stack_outputs=True, verbose=0)
    w, bias = model.network.lin.weight.numpy(), model.network.lin.bias.numpy()
    np.testing.assert_allclose(out, (a + b) @ w + bias, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match=r"^\[oar.Model\]"):
        Model(Add(), inputs=[3])


def test_save_load_roundtrip_resumes_optimizer(tmp_path):
    x, y = blobs(64)
    ds = TensorDataset([x, y])
    a = classifier(seed=0)
    a.fit(ds, batch_size=16, epochs=1, verbose=0)
    path = str(tmp_path / "ckpt" / "m")
    a.save(path)
    b = classifier(seed=5)  # different initial weights and parameter names
    assert not np.allclose(a.network[0].weight.numpy(), b.network[0].weight.numpy())
    b.load(path + ".pdparams")
    pa = a.predict(ds, batch_size=64, stack_outputs=True, verbose=0)[0]
    pb = b.predict(ds, batch_size=64, stack_outputs=True, verbose=0)[0]
    np.testing.assert_array_equal(pa, pb)
    # one more Adam step on both: identical only if the moments and step count were restored
    c = classifier(seed=5)
    c.load(path, reset_optimizer=True)
    for m in (a, b, c):
        m.train_batch([x[:16]], [y[:16]])
    for pa_, pb_, pc_ in zip(a.parameters(), b.parameters(), c.parameters()):
        np.testing.assert_array_equal(pa_.numpy(), pb_.numpy())
    assert any(not np.allclose(pa_.numpy(), pc_.numpy()) for pa_, pc_ in zip(a.parameters(), c.parameters()))


def test_load_mismatch(tmp_path):
    a = Model(oar.nn.Linear(2, 3))
    a.save(str(tmp_path / "m"))
    b = Model(oar.nn.Linear(2, 4))
    with pytest.raises(ValueError, match=r"^\[oar.Model.load\] weight receives a shape"):
        b.load(str(tmp_path / "m"))
    before = b.network.weight.numpy().copy()
    with pytest.warns(UserWarning) as record:
        b.load(str(tmp_path / "m"), skip_mismatch=True)
    assert sorted(str(r.message).split(":")[0] for r in record) == [
        "[oar.Model.load] skip loading bias", "[oar.Model.load] skip loading weight"]
    np.testing.assert_array_equal(b.network.weight.numpy(), before)
    with pytest.raises(FileNotFoundError, match=r"^\[oar.Model.load\]"):
        b.load(str(tmp_path / "missing"))


def test_summary_param_counts(capsys):
    net = oar.nn.Sequential(oar.nn.Linear(4, 8), oar.nn.BatchNorm1D(8), oar.nn.ReLU(), oar.nn.Linear(8, 3))
    net[3].weight.stop_gradient = True
    info = summary(net, (None, 4))
    out = capsys.readouterr().out
    # Linear 4*8+8, BatchNorm 8+8 (+8+8 running stats, non-trainable), Linear 8*3+3 (frozen here)
    assert info == {"total_params": 40 + 32 + 27, "trainable_params": 40 + 16 + 3}
    assert "Linear-1" in out and "BatchNorm1D-1" in out and "Linear-2" in out and "[1, 3]" in out
    assert "Total params: 99" in out and "Non-trainable params: 40" in out
    assert net.training  # mode restored
    info2 = summary(net, input=oar.ones([2, 4]))
    assert info2 == info and "[2, 8]" in capsys.readouterr().out
    model = Model(oar.nn.Linear(5, 2), inputs=InputSpec([None, 5], "float32", "x"))
    assert model.summary() == {"total_params": 12, "trainable_params": 12}
    with pytest.raises(ValueError, match=r"^\[oar.Model.summary\]"):
        Model(oar.nn.Linear(5, 2)).summary()


_O2 = {"level": "O2", "dtype": "float16", "init_loss_scaling": 128.0}


@pytest.mark.parametrize("amp", ["O1", {"level": "O1", "dtype": "bfloat16"}, _O2])
def test_amp_training(amp):
    x, y = blobs(128)
    oar.seed(0)
    net = oar.nn.Sequential(oar.nn.Linear(2, 8), oar.nn.Tanh(), oar.nn.Linear(8, 2))
    model = Model(net)
    model.prepare(oar.optimizer.Adam(0.05, parameters=net.parameters()), oar.nn.CrossEntropyLoss(),
                  oar.metric.Accuracy(), amp_configs=amp)
    dtype = amp if isinstance(amp, str) else amp["dtype"]
    dtype = "float16" if amp == "O1" else dtype
    assert (model._scaler is not None) == (dtype == "float16")
    model.fit(TensorDataset([x, y]), batch_size=32, epochs=4, verbose=0)
    (logits,) = model.predict(TensorDataset([x]), batch_size=128, stack_outputs=True, verbose=0)
    assert np.mean(np.argmax(logits.astype(np.float32), 1) == y[:, 0]) > 0.95


def test_argument_errors():
    x, y = blobs(8)
    ds = TensorDataset([x, y])
    model = Model(oar.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match=r"^\[oar.Model.fit\] the model is not prepared"):
        model.fit(ds, verbose=0)
    with pytest.raises(RuntimeError, match=r"^\[oar.Model.evaluate\]"):
        model.evaluate(ds, verbose=0)
    with pytest.raises(TypeError, match=r"^\[oar.Model.prepare\] metrics must be oar.metric.Metric"):
        model.prepare(metrics=[3])
    with pytest.raises(TypeError, match=r"^\[oar.Model.prepare\] optimizer"):
        model.prepare(optimizer="sgd")
    with pytest.raises(ValueError, match=r"^\[oar.Model.prepare\] amp level"):
        model.prepare(amp_configs="O3")
    with pytest.raises(ValueError, match=r"^\[oar.Model.prepare\] unknown amp_configs"):
        model.prepare(amp_configs={"level": "O1", "bad": 1})
    model.prepare(loss=oar.nn.CrossEntropyLoss())
    with pytest.raises(RuntimeError, match=r"^\[oar.Model.fit\] training needs an optimizer"):
        model.fit(ds, verbose=0)
    model.prepare(oar.optimizer.SGD(parameters=model.parameters()), oar.nn.CrossEntropyLoss())
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match=r"^\[oar.Model.fit\] batch_size must be a positive integer"):
            model.fit(ds, batch_size=bad, verbose=0)
    with pytest.raises(ValueError, match=r"^\[oar.Model.fit\] epochs"):
        model.fit(ds, epochs=0, verbose=0)
    with pytest.raises(ValueError, match=r"^\[oar.Model.fit\] accumulate_grad_batches"):
        model.fit(ds, accumulate_grad_batches=0, verbose=0)
    with pytest.raises(ValueError, match=r"^\[oar.Model.fit\] train_data"):
        model.fit(None)
    with pytest.raises(ValueError, match=r"^\[oar.Model.evaluate\] batch_size"):
        model.evaluate(ds, batch_size=0, verbose=0)
    with pytest.raises(ValueError, match=r"^\[oar.Model.predict\] batch_size"):
        model.predict(ds, batch_size=-2, verbose=0)
    with pytest.raises(TypeError, match=r"^\[oar.Model.fit\] data must be"):
        model.fit(42, verbose=0)
    with pytest.raises(TypeError, match=r"^\[oar.Model\] network"):
        Model(lambda v: v)
    with pytest.raises(ValueError, match=r"^\[oar.Model.save\]"):
        model.save("dir/")


def test_save_for_inference_round_trips_through_jit(tmp_path):
    net = oar.nn.Sequential(oar.nn.Linear(4, 8), oar.nn.ReLU(), oar.nn.Linear(8, 3))
    model = oar.Model(net, inputs=[InputSpec([None, 4], "float32", "x")])
    model.prepare()
    net.eval()
    path = str(tmp_path / "infer" / "mlp")
    model.save(path, training=False)
    loaded = oar.jit.load(path)
    x = np.random.default_rng(5).standard_normal((6, 4)).astype(np.float32)
    w1, b1 = net[0].weight.numpy(), net[0].bias.numpy()
    w2, b2 = net[2].weight.numpy(), net[2].bias.numpy()
    want = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    np.testing.assert_allclose(loaded(oar.to_tensor(x)).numpy(), want, rtol=1e-5, atol=1e-6)
