"""Training on a plugin device: an MLP and the digits CNN of examples/train_digits.py train on
custom_cpu (plugins/custom_cpu) from the same initial weights as on the CPU, with the same
losses and the same held-out accuracy."""
import importlib.util
import os

import numpy as np
import pytest

import oar
import oar.nn as nn
from conftest import CUSTOM_CPU

DEVICE = "custom_cpu:0"
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


@pytest.fixture(autouse=True)
def on_cpu_after():
    assert os.path.exists(CUSTOM_CPU), f"{CUSTOM_CPU} is missing: `make build` builds it"
    yield
    oar.set_device("cpu")


def digits_example():
    spec = importlib.util.spec_from_file_location("train_digits", os.path.join(EXAMPLES, "train_digits.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def params(net):
    return [p.numpy().copy() for p in net.parameters()]


def train_mlp(device, x, y, steps=6):
    """Losses of `steps` Adam steps of a small MLP built and trained on `device`."""
    oar.set_device(device)
    oar.seed(7)
    net = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 5))
    opt = oar.optimizer.Adam(learning_rate=1e-2, parameters=net.parameters())
    xt, yt = oar.to_tensor(x), oar.to_tensor(y)
    assert xt.place == device and net.parameters()[0].place == device
    losses = []
    for _ in range(steps):
        loss = nn.functional.cross_entropy(net(xt), yt)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, params(net)


def test_mlp_trains_with_adam_as_on_the_cpu():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 20)).astype("float32")
    y = rng.integers(0, 5, 16).astype("int64")
    cpu_losses, cpu_params = train_mlp("cpu", x, y)
    dev_losses, dev_params = train_mlp(DEVICE, x, y)
    assert cpu_losses[-1] < cpu_losses[0]
    np.testing.assert_allclose(dev_losses, cpu_losses, rtol=1e-4)
    for a, b in zip(dev_params, cpu_params):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)


def train_digits(device, mod, train, test, steps, batch=64):
    """Loss per step and held-out accuracy of the example's CNN trained on `device` (AdamW with a
    cosine schedule, dropout on), from the weights a fixed seed gives."""
    oar.set_device(device)
    oar.seed(2024)
    net = mod.make_net()
    init = params(net)
    sched = oar.optimizer.lr.CosineAnnealingDecay(learning_rate=2e-3, T_max=steps)
    opt = oar.optimizer.AdamW(learning_rate=sched, parameters=net.parameters(), weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    order = np.random.default_rng(1).permutation(len(train.images))
    losses = []
    net.train()
    for s in range(steps):
        idx = order[(s * batch) % len(order):][:batch]
        xb, yb = oar.to_tensor(train.images[idx]), oar.to_tensor(train.labels[idx])
        loss = loss_fn(net(xb), yb)
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step()
        losses.append(float(loss))
    net.eval()
    with oar.no_grad():
        pred = net(oar.to_tensor(test.images)).argmax(axis=1)
        assert pred.place == device
        correct = int((pred == oar.to_tensor(test.labels.reshape(-1))).astype("int32").sum())
    return init, np.array(losses), correct


def test_digits_cnn_trains_as_on_the_cpu():
    pytest.importorskip("sklearn")
    from oar.vision.datasets import Digits

    mod = digits_example()
    train, test = Digits(mode="train"), Digits(mode="test")
    steps = 24  # about one epoch of 64 images
    cpu_init, cpu_losses, cpu_correct = train_digits("cpu", mod, train, test, steps)
    dev_init, dev_losses, dev_correct = train_digits(DEVICE, mod, train, test, steps)
    for a, b in zip(dev_init, cpu_init):
        np.testing.assert_array_equal(a, b)
    assert cpu_losses[-4:].mean() < 0.5 * cpu_losses[:4].mean(), cpu_losses
    # Sums in another order (the CPU's convolutions are oneDNN's): float rounding only.
    np.testing.assert_allclose(dev_losses, cpu_losses, rtol=1e-4)
    assert abs(dev_correct - cpu_correct) <= 1, (dev_correct, cpu_correct, len(test))
    assert cpu_correct > 0.8 * len(test)


def _t(x):
    """A transposed view of x with x's values: strided input for the kernels."""
    return x.transpose([0, 1, 3, 2]) if x.ndim == 4 else x.t()


F = nn.functional
STRIDED_CASES = {
    "conv2d": (lambda a, w: F.conv2d(_t(a), w, padding=1, stride=2), [(2, 3, 7, 6), (4, 3, 3, 3)]),
    "conv2d_grouped": (lambda a, w: F.conv2d(a, _t(w), padding=[0, 1], groups=2), [(2, 4, 5, 5), (6, 2, 3, 2)]),
    "max_pool2d": (lambda a: F.max_pool2d(_t(a), 3, stride=2, padding=1), [(2, 3, 7, 6)]),
    "avg_pool2d": (lambda a: F.avg_pool2d(_t(a), 2, padding=1, exclusive=False), [(2, 3, 5, 6)]),
    "adaptive_avg_pool2d": (lambda a: F.adaptive_avg_pool2d(a, 3), [(2, 3, 7, 5)]),
    "linear": (lambda a, w, b: F.linear(_t(a), w, b), [(5, 4), (5, 3), (3,)]),
    "relu": (lambda a: F.relu(_t(a)), [(4, 5)]),
    "sum": (lambda a: oar.sum(_t(a), axis=[0, 2]), [(2, 3, 4, 5)]),
    "mean": (lambda a: oar.mean(_t(a), axis=1, keepdim=True), [(2, 3, 4, 5)]),
    "argmax": (lambda a: oar.argmax(_t(a), axis=0), [(4, 5)]),
    "where": (lambda a, b: oar.where(_t(a) > 0, _t(a), b), [(4, 5), (1, 4)]),
    "softmax": (lambda a: F.softmax(_t(a), axis=-1), [(4, 5)]),
    "log_softmax": (lambda a: F.log_softmax(_t(a), axis=1), [(2, 3, 4, 5)]),
    "cross_entropy": (lambda a: F.cross_entropy(_t(a), oar.to_tensor(np.array([0, 2, 1, 4, 3]))), [(5, 5)]),
}


@pytest.mark.parametrize("name", sorted(STRIDED_CASES))
def test_kernels_read_strided_inputs_and_gradients_as_on_the_cpu(name):
    fn, shapes = STRIDED_CASES[name]
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    results = {}
    for device in ("cpu", DEVICE):
        oar.set_device(device)
        xs = [oar.to_tensor(a, stop_gradient=False) for a in arrays]
        out = fn(*xs)
        assert out.place == device
        grads = []
        if out.dtype == oar.float32:
            (out * oar.to_tensor(np.linspace(-1, 1, out.size, dtype="float32").reshape(out.shape))).sum().backward()
            grads = [x.grad.numpy() for x in xs if x.grad is not None]
        results[device] = [out.numpy(), *grads]
    for d, c in zip(results[DEVICE], results["cpu"]):
        np.testing.assert_allclose(d, c, rtol=1e-5, atol=1e-5)
    assert len(results[DEVICE]) == len(results["cpu"])


def fit_mlp(device, x, y):
    """Model.fit for one epoch on `device`: the DataLoader's CPU batches go to the device."""
    oar.set_device(device)
    oar.seed(3)
    net = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 5))
    model = oar.Model(net)
    model.prepare(oar.optimizer.Adam(learning_rate=1e-2, parameters=net.parameters()), nn.CrossEntropyLoss())
    data = oar.io.TensorDataset([oar.to_tensor(x, place="cpu"), oar.to_tensor(y[:, None], place="cpu")])
    model.fit(data, batch_size=8, epochs=1, shuffle=False, verbose=0)
    assert net.parameters()[0].place == device
    return params(net)


def test_model_fit_moves_the_batches_to_the_device():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((32, 20)).astype("float32")
    y = rng.integers(0, 5, 32).astype("int64")
    want = fit_mlp("cpu", x, y)
    got = fit_mlp(DEVICE, x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)
