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


@pytest.mark.parametrize("full_graph", [False, True])
def test_random_ops_draw_fresh_numbers_on_each_call_like_eager(full_graph):
    def f(x):
        return oar.nn.functional.dropout(x, 0.5, training=True) + oar.rand([4]) + oar.randn([4]) * 0.1

    sf = oar.jit.to_static(f, full_graph=full_graph)
    x = oar.ones([4])
    oar.seed(11)
    want = [f(x).numpy() for _ in range(4)]
    oar.seed(11)
    got = [sf(x).numpy() for _ in range(4)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert not np.array_equal(got[0], got[1])  # not the numbers of the traced example again
    oar.seed(11)
    np.testing.assert_array_equal(sf(x).numpy(), want[0])  # a seed still reproduces the run


def test_dropout_training_through_a_program_matches_eager():
    def make():
        oar.seed(2)
        return oar.nn.Sequential(oar.nn.Linear(6, 16), oar.nn.ReLU(), oar.nn.Dropout(0.3), oar.nn.Linear(16, 1))

    eager, static = make(), oar.jit.to_static(make(), full_graph=True)
    opts = [oar.optimizer.SGD(0.05, parameters=m.parameters()) for m in (eager, static)]
    rng = np.random.default_rng(0)
    x, y = oar.to_tensor(rng.standard_normal((8, 6)).astype("float32")), oar.ones([8, 1])
    oar.seed(5)
    losses_e = []
    for _ in range(5):
        loss = ((eager(x) - y) ** 2).mean()
        loss.backward()
        opts[0].step()
        opts[0].clear_grad()
        losses_e.append(loss.item())
    oar.seed(5)
    losses_s = []
    for _ in range(5):
        loss = ((static(x) - y) ** 2).mean()
        loss.backward()
        opts[1].step()
        opts[1].clear_grad()
        losses_s.append(loss.item())
    np.testing.assert_allclose(losses_s, losses_e, rtol=1e-5)


def test_a_second_order_gradient_reruns_the_forward_with_the_same_random_numbers():
    w = oar.to_tensor([0.5, -1.0, 2.0, 1.5], stop_gradient=False)

    def f(x):
        return (oar.nn.functional.dropout(x * w, 0.5, training=True) ** 3).sum()

    sf = oar.jit.to_static(f, full_graph=True)
    x = oar.to_tensor([1.0, 2.0, 3.0, 4.0])
    results = []
    for fn in (f, sf):
        oar.seed(9)
        fn(x)  # a first call (the program's first call traces it)
        out = fn(x)
        (g,) = oar.grad(out, [w], create_graph=True)
        (gg,) = oar.grad(g.sum(), [w])
        results.append((out.numpy(), g.numpy(), gg.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_saved_random_ops_draw_on_each_run(tmp_path):
    from oar.inference import Config, create_predictor
    from oar.static import InputSpec

    net = oar.jit.to_static(lambda x: x + oar.rand([3]), full_graph=True)
    prefix = str(tmp_path / "noise")
    oar.jit.save(net, prefix, input_spec=[InputSpec([3])])
    x = np.zeros(3, "float32")
    loaded = oar.jit.load(prefix)
    a, b = loaded(oar.to_tensor(x)).numpy(), loaded(oar.to_tensor(x)).numpy()
    assert not np.array_equal(a, b) and ((a >= 0) & (a < 1)).all()
    predictor = create_predictor(Config(prefix))
    c, d = predictor.run([x])[0], predictor.run([x])[0]
    assert not np.array_equal(c, d) and ((c >= 0) & (c < 1)).all()
