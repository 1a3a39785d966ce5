"""Paddle behaviours that Paddle programs rely on, outside any one module's tests."""
import numpy as np
import pytest

import oar


def test_single_process_data_parallel_needs_no_init():
    # Without a launcher, DataParallel wraps the layer and trains exactly as the layer does.
    oar.seed(3)
    plain = oar.nn.Linear(3, 2)
    wrapped = oar.nn.Linear(3, 2)
    wrapped.set_state_dict(plain.state_dict())
    dp = oar.DataParallel(wrapped)
    x = oar.to_tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    for model in (plain, dp):
        opt = oar.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
        for _ in range(3):
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
    np.testing.assert_allclose(dp._layers.weight.numpy(), plain.weight.numpy(), rtol=1e-6)
    assert list(dp.state_dict()) == ["weight", "bias"]


def test_data_parallel_under_a_launcher_still_needs_init(monkeypatch):
    from oar.distributed import collective
    monkeypatch.setitem(collective._state, "world", None)  # whatever an earlier test in this process set up
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    with pytest.raises(RuntimeError, match=r"^\[oar.DataParallel\] the parallel environment is not initialised"):
        oar.DataParallel(oar.nn.Linear(2, 2))


def test_nuclear_norm_of_a_matrix_needs_no_axis():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    got = oar.norm(oar.to_tensor(a), p="nuc").item()
    np.testing.assert_allclose(got, np.linalg.svd(a, compute_uv=False).sum(), rtol=1e-12)
    assert oar.linalg.norm(oar.to_tensor(a), p="nuc").item() == pytest.approx(got)


def test_to_grayscale_weights_follow_paddle_per_input_kind():
    from oar.vision.transforms import functional as TF
    rgb = np.array([[[200, 10, 30]]], dtype=np.uint8)
    # PIL/NumPy images: 0.299 R + 0.587 G + 0.114 B; tensors: 0.2989 R (Paddle's tensor path).
    assert TF.to_grayscale(rgb).reshape(-1)[0] == int(round(0.299 * 200 + 0.587 * 10 + 0.114 * 30))
    t = oar.to_tensor(np.array([[[200.0]], [[10.0]], [[30.0]]], dtype=np.float32))  # CHW
    np.testing.assert_allclose(TF.to_grayscale(t).numpy().reshape(-1)[0], 0.2989 * 200 + 0.587 * 10 + 0.114 * 30,
                               rtol=1e-6)


def test_set_value_on_a_0d_tensor():
    t = oar.to_tensor(1.0)
    t.set_value(np.float32(3.5))
    assert t.shape == [] and t.item() == 3.5
