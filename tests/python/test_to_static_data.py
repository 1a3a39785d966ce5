"""to_static programs read tensor data at run time, never the traced example's: the count of
entries a mask selects, an index held in a tensor; and updates that a program cannot replay
(backward, an optimizer step) are refused while capturing instead of running once."""
import numpy as np
import pytest

import oar


def test_masked_selection_counts_are_dynamic():
    def f(scores, boxes):
        keep = scores > 0.5
        return oar.masked_select(scores, keep), boxes[keep], oar.nonzero(keep)

    sf = oar.jit.to_static(f, full_graph=True)
    rng = np.random.default_rng(0)
    boxes = oar.to_tensor(rng.standard_normal((6, 4)).astype("float32"))
    for s in ([0.9, 0.1, 0.7, 0.2, 0.3, 0.4], [0.9, 0.8, 0.7, 0.6, 0.55, 0.51], [0.1] * 6):
        scores = oar.to_tensor(np.array(s, dtype="float32"))
        got, want = sf(scores, boxes), f(scores, boxes)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert len(sf.program_cache) == 1
    assert str(sf.concrete_program).count("nonzero") >= 1


def test_tensor_index_is_read_at_run_time():
    def f(x, i):
        y = x[i] * 2.0
        x2 = x.clone()
        x2[i] = 0.0
        return y, x2

    sf = oar.jit.to_static(f, full_graph=True)
    x = oar.to_tensor(np.arange(12, dtype="float32").reshape(4, 3))
    for i in (0, 3, -1, 2):
        got, want = sf(x, oar.to_tensor(i)), f(x, oar.to_tensor(i))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert len(sf.program_cache) == 1
    with pytest.raises(IndexError):
        sf(x, oar.to_tensor(7))


def test_updates_inside_a_full_graph_capture_are_refused():
    net = oar.nn.Linear(2, 1)
    opt = oar.optimizer.SGD(0.1, parameters=net.parameters())
    w0 = net.weight.numpy().copy()

    def backward_inside(x):
        loss = net(x).sum()
        loss.backward()
        return loss

    def step_inside(x):
        opt.step()
        return net(x)

    for fn, what in ((backward_inside, r"Tensor\.backward\(\)"), (step_inside, r"SGD\.step\(\)")):
        with pytest.raises(oar.jit.Dy2StaticError, match=r"\[oar.jit.to_static\] " + what + r" is not supported"):
            oar.jit.to_static(fn, full_graph=True)(oar.ones([3, 2]))
    np.testing.assert_array_equal(net.weight.numpy(), w0)  # nothing was applied
    # Outside a capture both work as usual.
    net(oar.ones([3, 2])).sum().backward()
    opt.step()
    assert not np.array_equal(net.weight.numpy(), w0)


class _ManualSGD(oar.nn.Layer):
    """A training step written with oar.grad and in-place parameter updates, no optimizer."""

    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([3, 1])
        self.b = self.create_parameter([1], is_bias=True)

    def forward(self, x, y):
        loss = ((oar.matmul(x, self.w) + self.b - y) ** 2).mean()
        gw, gb = oar.grad(loss, [self.w, self.b])
        with oar.no_grad():
            self.w.set_value(self.w - 0.1 * gw)
            self.b.set_value(self.b - 0.1 * gb)
        return loss


def test_in_place_parameter_updates_apply_once_per_call():
    oar.seed(3)
    eager = _ManualSGD()
    oar.seed(3)
    static = oar.jit.to_static(_ManualSGD())
    x, y = oar.randn([4, 3]), oar.randn([4, 1])
    for _ in range(4):
        np.testing.assert_allclose(static(x, y).numpy(), eager(x, y).numpy(), rtol=1e-6)
        np.testing.assert_allclose(static.w.numpy(), eager.w.numpy(), rtol=1e-6)


def test_python_loop_over_a_dynamic_batch_is_traced_per_size():
    from oar.static import InputSpec

    def f(x):
        acc = oar.zeros([3])
        for i in range(x.shape[0]):  # a Python loop over an InputSpec's None dim
            acc = acc + x[i] * float(i + 1)
        return acc

    sf = oar.jit.to_static(f, input_spec=[InputSpec([None, 3])], full_graph=True)
    with pytest.warns(UserWarning, match=r"traced again for each new input shape"):
        sf(oar.ones([2, 3]))
    for n in (2, 5, 3):
        x = oar.to_tensor(np.random.default_rng(n).standard_normal((n, 3)).astype("float32"))
        np.testing.assert_allclose(sf(x).numpy(), f(x).numpy(), rtol=1e-6)
    assert len(sf.program_cache) == 3
    with pytest.raises(ValueError, match=r"\[oar.jit.save\] the forward fixes a dynamic input dim"):
        oar.jit.save(sf, "/tmp/unused_prefix", input_spec=[InputSpec([None, 3])])


def test_reading_a_data_dependent_size_in_python_is_refused():
    def f(scores):
        kept = oar.masked_select(scores, scores > 0.5)
        total = oar.zeros([])
        for i in range(kept.shape[0]):  # the count differs between calls with the same input shape
            total = total + kept[i]
        return total

    with pytest.raises(oar.jit.Dy2StaticError, match=r"whose size depends on tensor data"):
        oar.jit.to_static(f, full_graph=True)(oar.to_tensor([0.9, 0.1, 0.7]))

    def g(scores):  # len() reads the count as a tensor of the program: converts
        kept = oar.masked_select(scores, scores > 0.5)
        total = oar.zeros([])
        for i in range(len(kept)):
            total = total + kept[i]
        return total

    sg = oar.jit.to_static(g, full_graph=True)
    for s in ([0.9, 0.1, 0.7], [0.1, 0.2, 0.3], [0.6, 0.7, 0.8]):
        t = oar.to_tensor(s)
        np.testing.assert_allclose(sg(t).numpy(), g(t).numpy(), rtol=1e-6)
    assert len(sg.program_cache) == 1
