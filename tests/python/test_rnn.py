"""Recurrent cells and layers against NumPy step equations (Paddle gate order),
gradients against central differences in float64, stacking/direction/initial
states/sequence_length, parameter names, error inputs."""
import numpy as np
import pytest

import oar
import oar.nn as nn

RNG = np.random.default_rng(3)


def sig(x):
    return 1 / (1 + np.exp(-x))


def np_rnn_step(x, h, p, act=np.tanh):
    return act(x @ p["weight_ih"].T + p["bias_ih"] + h @ p["weight_hh"].T + p["bias_hh"])


def np_lstm_step(x, state, p):
    h, c = state
    g = x @ p["weight_ih"].T + p["bias_ih"] + h @ p["weight_hh"].T + p["bias_hh"]
    i, f, gg, o = np.split(g, 4, axis=-1)
    c = sig(f) * c + sig(i) * np.tanh(gg)
    h = sig(o) * np.tanh(c)
    if "weight_ho" in p:
        h = h @ p["weight_ho"]
    return h, c


def np_gru_step(x, h, p):
    xr, xz, xc = np.split(x @ p["weight_ih"].T + p["bias_ih"], 3, axis=-1)
    hr, hz, hc = np.split(h @ p["weight_hh"].T + p["bias_hh"], 3, axis=-1)
    r = sig(xr + hr)
    z = sig(xz + hz)
    c = np.tanh(xc + r * hc)
    return (h - c) * z + c


def params_of(cell):
    return {k: v.numpy().astype(np.float64) for k, v in cell._parameters.items() if v is not None}


def np_run(step, xs, state, p, reverse=False, lengths=None):
    """xs [T, B, I]; returns outputs [T, B, H] and final state (padded steps: carry state, zero output)."""
    T = xs.shape[0]
    outs = [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        new = step(xs[t], state, p)
        out = new[0] if isinstance(new, tuple) else new
        if lengths is not None:
            m = (t < lengths)[:, None].astype(np.float64)
            if isinstance(new, tuple):
                new = tuple(n * m + o * (1 - m) for n, o in zip(new, state))
            else:
                new = new * m + state * (1 - m)
            out = out * m
        state = new
        outs[t] = out
    return np.stack(outs), state


CELLS = [
    ("SimpleRNNCell", lambda i, h: nn.SimpleRNNCell(i, h), np_rnn_step),
    ("SimpleRNNCell_relu", lambda i, h: nn.SimpleRNNCell(i, h, activation="relu"),
     lambda x, s, p: np_rnn_step(x, s, p, lambda v: np.maximum(v, 0))),
    ("LSTMCell", lambda i, h: nn.LSTMCell(i, h), np_lstm_step),
    ("GRUCell", lambda i, h: nn.GRUCell(i, h), np_gru_step),
]


@pytest.mark.parametrize("name,make,step", CELLS, ids=[c[0] for c in CELLS])
def test_cell_forward(name, make, step):
    cell = make(4, 3)
    p = params_of(cell)
    x = RNG.standard_normal((2, 4)).astype("float32")
    if name == "LSTMCell":
        h0, c0 = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
        y, (h, c) = cell(oar.to_tensor(x), (oar.to_tensor(h0.astype("float32")), oar.to_tensor(c0.astype("float32"))))
        rh, rc = step(x.astype(np.float64), (h0, c0), p)
        np.testing.assert_allclose(h.numpy(), rh, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(c.numpy(), rc, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(y.numpy(), rh, rtol=1e-5, atol=1e-6)
    else:
        y, h = cell(oar.to_tensor(x))  # default zero state
        ref = step(x.astype(np.float64), np.zeros((2, 3)), p)
        np.testing.assert_allclose(h.numpy(), ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_cell_shapes_and_init():
    for cell, gates in ((nn.SimpleRNNCell(5, 7), 1), (nn.LSTMCell(5, 7), 4), (nn.GRUCell(5, 7), 3)):
        assert cell.weight_ih.shape == [gates * 7, 5]
        assert cell.weight_hh.shape == [gates * 7, 7]
        assert cell.bias_ih.shape == [gates * 7] and cell.bias_hh.shape == [gates * 7]
        bound = 1 / np.sqrt(7)
        for prm in cell.parameters():
            assert np.abs(prm.numpy()).max() <= bound + 1e-7
    cell = nn.GRUCell(2, 3, bias_ih_attr=False)
    assert cell.bias_ih is None and len(cell.parameters()) == 3
    y, _ = cell(oar.ones([1, 2]))
    assert y.shape == [1, 3]
    assert nn.LSTMCell(2, 3).state_shape == ((3,), (3,))


def _with_float64_params(layer):
    layer.to(dtype="float64")
    return layer


def _cell_grad(make, step, lstm):
    cell = _with_float64_params(make(3, 2))
    x = RNG.standard_normal((2, 3))
    h0 = RNG.standard_normal((2, 2))
    c0 = RNG.standard_normal((2, 2))
    w = RNG.standard_normal((2, 2))

    def loss_np(p, xv, hv):
        out = step(xv, (hv, c0) if lstm else hv, p)
        return ((out[0] + out[1]) * w).sum() if lstm else (out * w).sum()

    xt = oar.to_tensor(x, stop_gradient=False)
    ht = oar.to_tensor(h0, stop_gradient=False)
    if lstm:
        h, c = cell(xt, (ht, oar.to_tensor(c0)))[1]
        loss = ((h + c) * oar.to_tensor(w)).sum()
    else:
        loss = (cell(xt, ht)[1] * oar.to_tensor(w)).sum()
    loss.backward()
    p = params_of(cell)
    eps = 1e-6
    targets = [("x", x, xt.grad), ("h", h0, ht.grad)] + [(k, p[k], cell._parameters[k].grad) for k in p]
    for key, arr, g in targets:
        num = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            old = arr[idx]
            arr[idx] = old + eps
            fp = loss_np(p, x, h0)
            arr[idx] = old - eps
            fm = loss_np(p, x, h0)
            arr[idx] = old
            num[idx] = (fp - fm) / (2 * eps)
        np.testing.assert_allclose(g.numpy(), num, rtol=1e-5, atol=1e-8, err_msg=key)


@pytest.mark.parametrize("name,make,step", CELLS, ids=[c[0] for c in CELLS])
def test_cell_grad(name, make, step):
    _cell_grad(make, step, name == "LSTMCell")


def test_rnn_wrapper_and_sequence_length():
    cell = _with_float64_params(nn.GRUCell(3, 4))
    p = params_of(cell)
    x = RNG.standard_normal((2, 5, 3))
    lengths = np.array([5, 2])
    for reverse in (False, True):
        rnn = nn.RNN(cell, is_reverse=reverse)
        y, h = rnn(oar.to_tensor(x), sequence_length=oar.to_tensor(lengths))
        ry, rh = np_run(np_gru_step, x.transpose(1, 0, 2), np.zeros((2, 4)), p, reverse, lengths)
        np.testing.assert_allclose(y.numpy(), ry.transpose(1, 0, 2), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(h.numpy(), rh, rtol=1e-10, atol=1e-12)
    # time-major input
    rnn = nn.RNN(cell, time_major=True)
    y, h = rnn(oar.to_tensor(x.transpose(1, 0, 2)))
    ry, rh = np_run(np_gru_step, x.transpose(1, 0, 2), np.zeros((2, 4)), p)
    np.testing.assert_allclose(y.numpy(), ry, rtol=1e-10)

    # a user cell without the fast path
    class Doubler(nn.Layer):
        def forward(self, inputs, states):
            s = states + inputs
            return s * 2.0, s

    y, h = nn.RNN(Doubler())(oar.to_tensor(x), oar.zeros([2, 3], dtype="float64"))
    np.testing.assert_allclose(h.numpy(), x.sum(1), rtol=1e-12)
    np.testing.assert_allclose(y.numpy(), 2 * np.cumsum(x, 1), rtol=1e-12)


def test_birnn():
    fw, bw = _with_float64_params(nn.LSTMCell(3, 2)), _with_float64_params(nn.LSTMCell(3, 2))
    x = RNG.standard_normal((2, 4, 3))
    h0 = [RNG.standard_normal((2, 2)) for _ in range(4)]
    birnn = nn.BiRNN(fw, bw)
    T = oar.to_tensor
    y, (sf, sb) = birnn(T(x), ((T(h0[0]), T(h0[1])), (T(h0[2]), T(h0[3]))))
    xt = x.transpose(1, 0, 2)
    yf, rf = np_run(np_lstm_step, xt, (h0[0], h0[1]), params_of(fw))
    yb, rb = np_run(np_lstm_step, xt, (h0[2], h0[3]), params_of(bw), reverse=True)
    np.testing.assert_allclose(y.numpy(), np.concatenate([yf, yb], -1).transpose(1, 0, 2), rtol=1e-10)
    np.testing.assert_allclose(sf[1].numpy(), rf[1], rtol=1e-10)
    np.testing.assert_allclose(sb[0].numpy(), rb[0], rtol=1e-10)


STEPS = {"SimpleRNN": np_rnn_step, "LSTM": np_lstm_step, "GRU": np_gru_step}


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("direction", ["forward", "bidirect"])
def test_stacked_layers(kind, direction):
    L, H, I, B, T = 2, 3, 4, 2, 5
    layer = _with_float64_params(getattr(nn, kind)(I, H, num_layers=L, direction=direction))
    D = 2 if direction == "bidirect" else 1
    x = RNG.standard_normal((B, T, I))
    lengths = np.array([5, 3])
    h0 = RNG.standard_normal((L * D, B, H))
    c0 = RNG.standard_normal((L * D, B, H))
    init = (oar.to_tensor(h0), oar.to_tensor(c0)) if kind == "LSTM" else oar.to_tensor(h0)
    y, states = layer(oar.to_tensor(x), init, oar.to_tensor(lengths))
    # NumPy reference using the flat Paddle parameter names
    sd = {k: v.numpy() for k, v in layer.state_dict().items()}
    inp = x.transpose(1, 0, 2)
    finals = []
    for lyr in range(L):
        outs = []
        for d in range(D):
            sfx = "_reverse" if d else ""
            p = {n: sd[f"{n}_l{lyr}{sfx}"] for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
            k = lyr * D + d
            s0 = (h0[k], c0[k]) if kind == "LSTM" else h0[k]
            o, s = np_run(STEPS[kind], inp, s0, p, reverse=bool(d), lengths=lengths)
            outs.append(o)
            finals.append(s)
        inp = np.concatenate(outs, -1)
    np.testing.assert_allclose(y.numpy(), inp.transpose(1, 0, 2), rtol=1e-10, atol=1e-12)
    assert y.shape == [B, T, D * H]
    if kind == "LSTM":
        np.testing.assert_allclose(states[0].numpy(), np.stack([f[0] for f in finals]), rtol=1e-10)
        np.testing.assert_allclose(states[1].numpy(), np.stack([f[1] for f in finals]), rtol=1e-10)
    else:
        np.testing.assert_allclose(states.numpy(), np.stack(finals), rtol=1e-10)


def test_parameter_names_and_state_dict():
    lstm = nn.LSTM(4, 3, num_layers=2, direction="bidirectional")
    names = [n for n, _ in lstm.named_parameters()]
    expected = []
    for lyr in range(2):
        for sfx in ("", "_reverse"):
            expected += [f"weight_ih_l{lyr}{sfx}", f"weight_hh_l{lyr}{sfx}", f"bias_ih_l{lyr}{sfx}",
                         f"bias_hh_l{lyr}{sfx}"]
    assert names == expected
    sd = lstm.state_dict()
    assert sd["weight_ih_l0"].shape == [12, 4] and sd["weight_ih_l1_reverse"].shape == [12, 6]
    assert "0.cell_fw.weight_ih" in sd and "1.cell_bw.bias_hh" in sd
    other = nn.LSTM(4, 3, num_layers=2, direction="bidirectional")
    other.set_state_dict(sd)
    x = oar.to_tensor(RNG.standard_normal((2, 3, 4)).astype("float32"))
    np.testing.assert_allclose(other(x)[0].numpy(), lstm(x)[0].numpy())
    gru = nn.GRU(2, 5, time_major=True)
    y, h = gru(oar.ones([7, 3, 2]))
    assert y.shape == [7, 3, 5] and h.shape == [1, 3, 5]


def test_lstm_proj_size():
    lstm = _with_float64_params(nn.LSTM(3, 4, proj_size=2))
    assert lstm.weight_ho_l0.shape == [4, 2] and lstm.weight_hh_l0.shape == [16, 2]
    x = RNG.standard_normal((2, 3, 3))
    y, (h, c) = lstm(oar.to_tensor(x))
    p = {k: v.numpy() for k, v in lstm[0].cell._parameters.items()}
    ry, (rh, rc) = np_run(np_lstm_step, x.transpose(1, 0, 2), (np.zeros((2, 2)), np.zeros((2, 4))), p)
    np.testing.assert_allclose(y.numpy(), ry.transpose(1, 0, 2), rtol=1e-10)
    assert h.shape == [1, 2, 2] and c.shape == [1, 2, 4]


def test_dropout_between_layers_and_grad():
    gru = nn.GRU(3, 4, num_layers=3, dropout=0.5)
    x = oar.to_tensor(RNG.standard_normal((2, 6, 3)).astype("float32"), stop_gradient=False)
    gru.eval()
    a = gru(x)[0].numpy()
    b = gru(x)[0].numpy()
    np.testing.assert_allclose(a, b)
    gru.train()
    oar.seed(5)
    c = gru(x)[0]
    assert not np.allclose(a, c.numpy())
    c.sum().backward()
    assert x.grad.shape == [2, 6, 3]
    assert all(prm.grad is not None for prm in gru.parameters())


def test_errors():
    with pytest.raises(ValueError, match=r"^\[oar.nn.LSTM\]"):
        nn.LSTM(4, 3, direction="sideways")
    with pytest.raises(ValueError, match=r"^\[oar.nn.GRU\]"):
        nn.GRU(0, 3)
    with pytest.raises(ValueError, match=r"^\[oar.nn.SimpleRNNCell\]"):
        nn.SimpleRNNCell(2, 3, activation="sigmoid")
    lstm = nn.LSTM(4, 3)
    with pytest.raises(ValueError, match=r"^\[oar.nn.LSTM\]"):
        lstm(oar.ones([2, 3, 5]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.LSTM\]"):
        lstm(oar.ones([2, 3, 4]), oar.zeros([1, 2, 3]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.LSTM\]"):
        lstm(oar.ones([2, 3, 4]), (oar.zeros([2, 2, 3]), oar.zeros([2, 2, 3])))
    with pytest.raises(TypeError, match=r"^\[oar.nn.GRU\]"):
        nn.GRU(2, 3)([1.0])
    with pytest.raises(ValueError, match=r"^\[oar.nn.GRUCell\]"):
        nn.GRUCell(2, 3)(oar.ones([1, 4]))
