"""A few training steps of ResNet18 and the small GPT on a GPU match the same steps on the CPU.

Both runs start from the same weights (made on the CPU, one copy moved to the GPU) and see the
same batches; the losses of every step must agree within float32 tolerance (cuDNN and cuBLAS
sum in other orders than the CPU kernels). Skipped where no GPU is visible.
"""
import numpy as np
import pytest

import oar

GPU = oar.device.cuda.device_count() > 0
pytestmark = pytest.mark.skipif(not GPU, reason="no CUDA GPU is visible (needs a build with CUDA and a GPU)")


def _train(model, batches, device, opt_fn, loss_fn, steps):
    model.to(device)
    opt = opt_fn(model.parameters())
    losses = []
    with oar.device.device_guard(device):  # what the model makes itself (position ids) goes there too
        for x, y in batches[:steps]:
            loss = loss_fn(model, oar.to_tensor(x), oar.to_tensor(y))
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(loss.cpu().numpy()))
    return losses


def _twins(make):
    oar.seed(7)
    a = make()
    b = make()
    b.set_state_dict(a.state_dict())
    return a, b


def test_resnet18_steps_match_the_cpu():
    from oar.vision.models import resnet18
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((8, 3, 64, 64)).astype("float32"), rng.integers(0, 10, (8,)).astype("int64"))
               for _ in range(3)]
    cpu, gpu = _twins(lambda: resnet18(num_classes=10))

    def loss_fn(m, x, y):
        return oar.nn.functional.cross_entropy(m(x), y)

    def opt(params):
        return oar.optimizer.Momentum(learning_rate=0.01, momentum=0.9, parameters=params)
    want = _train(cpu, batches, "cpu", opt, loss_fn, 3)
    got = _train(gpu, batches, "gpu:0", opt, loss_fn, 3)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
    assert want[-1] < want[0] or abs(want[-1] - want[0]) < 1.0  # the steps did train


def test_small_gpt_steps_match_the_cpu():
    from oar.models import gpt_small
    rng = np.random.default_rng(1)
    batches = [(ids, ids) for ids in (rng.integers(0, 1024, (4, 64)).astype("int64") for _ in range(3))]
    cpu, gpu = _twins(lambda: gpt_small(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))

    def loss_fn(m, x, y):
        return m(x, labels=y)[0]

    def opt(params):
        return oar.optimizer.AdamW(learning_rate=1e-3, parameters=params)
    want = _train(cpu, batches, "cpu", opt, loss_fn, 3)
    got = _train(gpu, batches, "gpu:0", opt, loss_fn, 3)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    assert want[-1] < want[0]
