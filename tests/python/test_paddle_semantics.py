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
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    with pytest.raises(RuntimeError, match=r"^\[oar.DataParallel\] the parallel environment is not initialised"):
        oar.DataParallel(oar.nn.Linear(2, 2))
