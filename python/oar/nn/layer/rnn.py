"""Recurrent cells and layers with Paddle's names, parameter shapes and gate order.

Cells (SimpleRNNCell, LSTMCell, GRUCell) compute one step. RNN / BiRNN run a cell
over a sequence; SimpleRNN / LSTM / GRU stack them (num_layers, direction) and
expose the parameters as ``weight_ih_l{k}[_reverse]`` etc., like Paddle, so state
dicts match.

The time loop runs in Python. To keep each step short, the built-in cells split
their work: the input projection x W_ih^T + b_ih of every step is one matmul over
the whole sequence before the loop, and a step is then one matmul with W_hh plus
the gate nonlinearities (see ``_project`` / ``_step``).
"""
import math

from ... import _C
from .. import functional as F
from .layers import Layer
from .container import LayerList

__all__ = ["RNNCellBase", "SimpleRNNCell", "LSTMCell", "GRUCell", "RNN", "BiRNN", "SimpleRNN", "LSTM", "GRU"]


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _uniform(std):
    from ..initializer import Uniform

    return Uniform(-std, std)


def _check_sizes(api, input_size, hidden_size):
    for what, v in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise ValueError(f"[oar.nn.{api}] {what} must be a positive int, got {v!r}")


def _linear_t(x, w, b):
    """x @ w^T (+ b): Paddle stores recurrent weights as [out, in]."""
    y = _C.matmul(x, w, False, True)
    return y if b is None else y + b


class RNNCellBase(Layer):
    """Base class of the recurrent cells: initial states and state shapes.

    >>> import oar
    >>> cell = oar.nn.GRUCell(4, 3)
    >>> isinstance(cell, oar.nn.RNNCellBase), cell.get_initial_states(oar.ones([2, 4])).shape
    (True, [2, 3])
    """

    def get_initial_states(self, batch_ref, shape=None, dtype=None, init_value=0.0, batch_dim_idx=0):
        """States filled with init_value, with the batch size of batch_ref (axis batch_dim_idx).

        >>> import oar
        >>> cell = oar.nn.GRUCell(2, 3)
        >>> cell.get_initial_states(oar.ones([4, 2])).shape
        [4, 3]
        """
        import oar

        batch = batch_ref.shape[batch_dim_idx]
        dtype = dtype or _dtype_name(batch_ref)
        shape = self.state_shape if shape is None else shape

        def make(s):
            if isinstance(s, (list, tuple)) and s and isinstance(s[0], (list, tuple)):
                return tuple(make(e) for e in s)
            s = [int(d) for d in s]
            # a leading -1 stands for the batch axis; it is prepended when absent
            return oar.full([batch] + (s[1:] if s and s[0] == -1 else s), init_value, dtype=dtype)

        return make(shape)

    @property
    def state_shape(self):
        raise NotImplementedError

    def _params(self, input_size, hidden_size, gates, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                bias_hh_attr, hh_in=None):
        init = _uniform(1.0 / math.sqrt(hidden_size))
        self.weight_ih = self.create_parameter([gates * hidden_size, input_size], weight_ih_attr,
                                               default_initializer=init)
        self.weight_hh = self.create_parameter([gates * hidden_size, hh_in or hidden_size], weight_hh_attr,
                                               default_initializer=init)
        self.bias_ih = self.create_parameter([gates * hidden_size], bias_ih_attr, is_bias=True,
                                             default_initializer=init)
        self.bias_hh = self.create_parameter([gates * hidden_size], bias_hh_attr, is_bias=True,
                                             default_initializer=init)

    def _project(self, inputs):
        """The input part of the gates for every step at once."""
        return _linear_t(inputs, self.weight_ih, self.bias_ih)

    def _check_input(self, inputs, api):
        if not isinstance(inputs, _C.Tensor):
            raise TypeError(f"[oar.nn.{api}] inputs must be a Tensor, got {type(inputs).__name__}")
        if inputs.ndim < 1 or inputs.shape[-1] != self.input_size:
            raise ValueError(f"[oar.nn.{api}] inputs.shape[-1] must equal input_size ({self.input_size}), got "
                             f"shape {inputs.shape}")

    def forward(self, inputs, states=None):
        self._check_input(inputs, type(self).__name__)
        if states is None:
            states = self.get_initial_states(inputs, batch_dim_idx=0)
        return self._step(self._project(inputs), states)


class SimpleRNNCell(RNNCellBase):
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act 'tanh' or 'relu'.

    forward(inputs [batch, input_size], states [batch, hidden_size]) -> (h', h').

    >>> import oar
    >>> cell = oar.nn.SimpleRNNCell(4, 3)
    >>> y, h = cell(oar.ones([2, 4]))
    >>> y.shape, h.shape
    ([2, 3], [2, 3])
    """

    def __init__(self, input_size, hidden_size, activation="tanh", weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__()
        _check_sizes("SimpleRNNCell", input_size, hidden_size)
        if activation not in ("tanh", "relu"):
            raise ValueError(f"[oar.nn.SimpleRNNCell] activation must be 'tanh' or 'relu', got {activation!r}")
        self.input_size, self.hidden_size, self.activation = input_size, hidden_size, activation
        self._params(input_size, hidden_size, 1, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)
        self._act = _C.tanh if activation == "tanh" else _C._nn_functional.relu

    @property
    def state_shape(self):
        return (self.hidden_size,)

    def _step(self, x_proj, h):
        h = self._act(x_proj + _linear_t(h, self.weight_hh, self.bias_hh))
        return h, h

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}, activation={self.activation}"


class LSTMCell(RNNCellBase):
    """Long short-term memory step with Paddle's gate order (i, f, g, o).

    gates = x W_ih^T + b_ih + h W_hh^T + b_hh; i, f, o = sigmoid; g = tanh;
    c' = f * c + i * g; h' = o * tanh(c') (projected by weight_ho [hidden, proj_size] when
    proj_size > 0). forward(inputs, (h, c)) -> (h', (h', c')).

    >>> import oar
    >>> cell = oar.nn.LSTMCell(4, 3)
    >>> y, (h, c) = cell(oar.ones([2, 4]))
    >>> y.shape, c.shape
    ([2, 3], [2, 3])
    """

    def __init__(self, input_size, hidden_size, weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
                 bias_hh_attr=None, proj_size=0, name=None):
        super().__init__()
        _check_sizes("LSTMCell", input_size, hidden_size)
        if not isinstance(proj_size, int) or proj_size < 0 or proj_size >= hidden_size and proj_size:
            raise ValueError(f"[oar.nn.LSTMCell] proj_size must be an int in [0, hidden_size), got {proj_size!r}")
        self.input_size, self.hidden_size, self.proj_size = input_size, hidden_size, proj_size
        self._params(input_size, hidden_size, 4, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr,
                     hh_in=proj_size or hidden_size)
        if proj_size:
            self.weight_ho = self.create_parameter([hidden_size, proj_size], weight_hh_attr,
                                                   default_initializer=_uniform(1.0 / math.sqrt(hidden_size)))

    @property
    def state_shape(self):
        return ((self.proj_size or self.hidden_size,), (self.hidden_size,))

    def _step(self, x_proj, states):
        h, c = states
        gates = x_proj + _linear_t(h, self.weight_hh, self.bias_hh)
        i, f, g, o = _split4(gates)
        c = _C.sigmoid(f) * c + _C.sigmoid(i) * _C.tanh(g)
        h = _C.sigmoid(o) * _C.tanh(c)
        if self.proj_size:
            h = _C.matmul(h, self.weight_ho, False, False)
        return h, (h, c)

    def extra_repr(self):
        extra = f", proj_size={self.proj_size}" if self.proj_size else ""
        return f"{self.input_size}, {self.hidden_size}{extra}"


def _split4(x):
    import oar

    return oar.split(x, 4, axis=-1)


def _split3(x):
    import oar

    return oar.split(x, 3, axis=-1)


class GRUCell(RNNCellBase):
    """Gated recurrent unit step with Paddle's gate order (r, z, c) and reset-after form.

    xr, xz, xc = x W_ih^T + b_ih; hr, hz, hc = h W_hh^T + b_hh; r = sigmoid(xr + hr);
    z = sigmoid(xz + hz); c = tanh(xc + r * hc); h' = (h - c) * z + c.

    >>> import oar
    >>> cell = oar.nn.GRUCell(4, 3)
    >>> y, h = cell(oar.ones([2, 4]), oar.zeros([2, 3]))
    >>> y.shape
    [2, 3]
    """

    def __init__(self, input_size, hidden_size, weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
                 bias_hh_attr=None, name=None):
        super().__init__()
        _check_sizes("GRUCell", input_size, hidden_size)
        self.input_size, self.hidden_size = input_size, hidden_size
        self._params(input_size, hidden_size, 3, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)

    @property
    def state_shape(self):
        return (self.hidden_size,)

    def _step(self, x_proj, h):
        xr, xz, xc = _split3(x_proj)
        hr, hz, hc = _split3(_linear_t(h, self.weight_hh, self.bias_hh))
        r = _C.sigmoid(xr + hr)
        z = _C.sigmoid(xz + hz)
        c = _C.tanh(xc + r * hc)
        h = (h - c) * z + c
        return h, h

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}"


# ---------------------------------------------------------------------------------------------
# running a cell over a sequence


def _map(fn, *structs):
    if isinstance(structs[0], (tuple, list)):
        return tuple(_map(fn, *parts) for parts in zip(*structs))
    return fn(*structs)


def _run_cell(cell, inputs, states, mask, reverse, kwargs):
    """inputs [T, B, ...] time-major; mask [T, B, 1] (1 inside the sequence) or None."""
    import oar

    # built-in cells whose forward is not overridden take the fast path (input projection hoisted)
    builtin = isinstance(cell, RNNCellBase) and hasattr(cell, "_step") and type(cell).forward is RNNCellBase.forward \
        and not kwargs
    steps = inputs.shape[0]
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    if builtin:
        cell._check_input(inputs, type(cell).__name__)
        xs = oar.unbind(cell._project(inputs), 0) if steps else []
    else:
        xs = oar.unbind(inputs, 0) if steps else []
    ms = oar.unbind(mask, 0) if mask is not None and steps else None
    outputs = [None] * steps
    for t in order:
        out, new_states = cell._step(xs[t], states) if builtin else cell(xs[t], states, **kwargs)
        if ms is not None:
            m = ms[t]
            # past the end of a sequence the state is carried unchanged and the output is zero
            new_states = _map(lambda old, new: new * m + old * (1.0 - m), states, new_states)
            out = out * m
        states = new_states
        outputs[t] = out
    if not outputs:
        raise ValueError("[oar.nn.RNN] inputs must have at least one time step")
    return oar.stack(outputs, 0), states


def _time_mask(sequence_length, steps, dtype):
    if sequence_length is None:
        return None
    m = F.sequence_mask(sequence_length, steps, dtype=dtype)  # [B, T]
    return m.transpose([1, 0]).unsqueeze(-1)


class RNN(Layer):
    """Runs `cell` over the time axis of inputs ([batch, time, ...], or [time, batch, ...] when time_major).

    forward(inputs, initial_states=None, sequence_length=None) -> (outputs, final_states).
    With sequence_length, steps past each sequence's end keep the state unchanged and output zeros.

    >>> import oar
    >>> rnn = oar.nn.RNN(oar.nn.GRUCell(4, 3))
    >>> y, h = rnn(oar.ones([2, 5, 4]))
    >>> y.shape, h.shape
    ([2, 5, 3], [2, 3])
    """

    def __init__(self, cell, is_reverse=False, time_major=False):
        super().__init__()
        if not isinstance(cell, Layer):
            raise TypeError(f"[oar.nn.RNN] cell must be a Layer, got {type(cell).__name__}")
        self.cell, self.is_reverse, self.time_major = cell, is_reverse, time_major

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        if not isinstance(inputs, _C.Tensor) or inputs.ndim < 2:
            raise ValueError(f"[oar.nn.RNN] inputs must be a Tensor with at least 2 dims, got "
                             f"{getattr(inputs, 'shape', type(inputs).__name__)}")
        x = inputs if self.time_major else inputs.transpose([1, 0] + list(range(2, inputs.ndim)))
        if initial_states is None:
            initial_states = self.cell.get_initial_states(x, batch_dim_idx=1)
        mask = _time_mask(sequence_length, x.shape[0], _dtype_name(x))
        out, states = _run_cell(self.cell, x, initial_states, mask, self.is_reverse, kwargs)
        if not self.time_major:
            out = out.transpose([1, 0] + list(range(2, out.ndim)))
        return out, states


class BiRNN(Layer):
    """Runs cell_fw forward and cell_bw backward over inputs and concatenates their outputs.

    forward(inputs, initial_states=None (or (states_fw, states_bw)), sequence_length=None)
    -> (outputs [..., hidden_fw + hidden_bw], (final_states_fw, final_states_bw)).

    >>> import oar
    >>> birnn = oar.nn.BiRNN(oar.nn.LSTMCell(4, 3), oar.nn.LSTMCell(4, 3))
    >>> y, (fw, bw) = birnn(oar.ones([2, 5, 4]))
    >>> y.shape
    [2, 5, 6]
    """

    def __init__(self, cell_fw, cell_bw, time_major=False):
        super().__init__()
        self.cell_fw, self.cell_bw, self.time_major = cell_fw, cell_bw, time_major
        if getattr(cell_fw, "input_size", None) != getattr(cell_bw, "input_size", None):
            raise ValueError(f"[oar.nn.BiRNN] cell_fw and cell_bw must have the same input_size, got "
                             f"{getattr(cell_fw, 'input_size', None)} and {getattr(cell_bw, 'input_size', None)}")

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        import oar

        if not isinstance(inputs, _C.Tensor) or inputs.ndim < 2:
            raise ValueError(f"[oar.nn.BiRNN] inputs must be a Tensor with at least 2 dims, got "
                             f"{getattr(inputs, 'shape', type(inputs).__name__)}")
        if initial_states is None:
            initial_states = (None, None)
        elif not isinstance(initial_states, (list, tuple)) or len(initial_states) != 2:
            raise ValueError("[oar.nn.BiRNN] initial_states must be None or a pair (states_fw, states_bw)")
        x = inputs if self.time_major else inputs.transpose([1, 0] + list(range(2, inputs.ndim)))
        mask = _time_mask(sequence_length, x.shape[0], _dtype_name(x))
        results = []
        for cell, init, reverse in ((self.cell_fw, initial_states[0], False),
                                    (self.cell_bw, initial_states[1], True)):
            if init is None:
                init = cell.get_initial_states(x, batch_dim_idx=1)
            results.append(_run_cell(cell, x, init, mask, reverse, kwargs))
        out = oar.concat([results[0][0], results[1][0]], axis=-1)
        if not self.time_major:
            out = out.transpose([1, 0] + list(range(2, out.ndim)))
        return out, (results[0][1], results[1][1])


# ---------------------------------------------------------------------------------------------
# stacked layers

_BIDIRECT = ("bidirect", "bidirectional")


class RNNBase(LayerList):
    """Shared implementation of SimpleRNN, LSTM and GRU: a list of RNN/BiRNN layers."""

    _cell_type = None
    _api = "RNNBase"

    def __init__(self, mode, input_size, hidden_size, num_layers=1, direction="forward", time_major=False,
                 dropout=0.0, weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None,
                 **cell_kwargs):
        super().__init__()
        api = self._api
        _check_sizes(api, input_size, hidden_size)
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError(f"[oar.nn.{api}] num_layers must be a positive int, got {num_layers!r}")
        if direction not in ("forward",) + _BIDIRECT:
            raise ValueError(f"[oar.nn.{api}] direction must be 'forward', 'bidirect' or 'bidirectional', got "
                             f"{direction!r}")
        if not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
            raise ValueError(f"[oar.nn.{api}] dropout must be a number in [0, 1], got {dropout!r}")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.direction, self.time_major, self.dropout = num_layers, direction, time_major, dropout
        self.num_directions = 2 if direction in _BIDIRECT else 1
        self.proj_size = cell_kwargs.get("proj_size", 0)
        attrs = dict(weight_ih_attr=weight_ih_attr, weight_hh_attr=weight_hh_attr, bias_ih_attr=bias_ih_attr,
                     bias_hh_attr=bias_hh_attr, **cell_kwargs)
        out_size = self.proj_size or hidden_size
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else out_size * self.num_directions
            if self.num_directions == 1:
                self.append(RNN(self._cell_type(in_size, hidden_size, **attrs), False, time_major))
            else:
                self.append(BiRNN(self._cell_type(in_size, hidden_size, **attrs),
                                  self._cell_type(in_size, hidden_size, **attrs), time_major))
        # Paddle also exposes every parameter on the layer itself under flat names.
        for layer in range(num_layers):
            for d in range(self.num_directions):
                rnn = self[layer]
                cell = rnn.cell if self.num_directions == 1 else (rnn.cell_fw, rnn.cell_bw)[d]
                suffix = "_reverse" if d == 1 else ""
                for pname in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_ho"):
                    p = cell._parameters.get(pname)
                    if p is not None:
                        setattr(self, f"{pname}_l{layer}{suffix}", p)

    @property
    def state_components(self):
        return 2 if self.mode == "LSTM" else 1

    def _split_states(self, initial_states, batch, dtype):
        import oar

        n = self.num_layers * self.num_directions
        comps = self.state_components
        sizes = [self.proj_size or self.hidden_size, self.hidden_size] if comps == 2 else [self.hidden_size]
        if initial_states is None:
            initial_states = tuple(oar.zeros([n, batch, s], dtype=dtype) for s in sizes)
        elif comps == 1:
            initial_states = (initial_states,)
        if not isinstance(initial_states, (list, tuple)) or len(initial_states) != comps:
            raise ValueError(f"[oar.nn.{self._api}] initial_states must be "
                             f"{'a pair (h, c)' if comps == 2 else 'a Tensor'} of shape [{n}, batch, hidden]")
        for s, size in zip(initial_states, sizes):
            if not isinstance(s, _C.Tensor) or s.shape != [n, batch, size]:
                raise ValueError(f"[oar.nn.{self._api}] initial states must have shape [{n}, {batch}, {size}], got "
                                 f"{getattr(s, 'shape', type(s).__name__)}")
        per_comp = [oar.unbind(s, 0) for s in initial_states]
        per_layer = []
        for layer in range(self.num_layers):
            dirs = []
            for d in range(self.num_directions):
                k = layer * self.num_directions + d
                dirs.append(tuple(c[k] for c in per_comp) if comps == 2 else per_comp[0][k])
            per_layer.append(dirs[0] if self.num_directions == 1 else tuple(dirs))
        return per_layer

    def forward(self, inputs, initial_states=None, sequence_length=None):
        import oar

        api = self._api
        if not isinstance(inputs, _C.Tensor):
            raise TypeError(f"[oar.nn.{api}] inputs must be a Tensor, got {type(inputs).__name__}")
        if inputs.ndim != 3:
            layout = "[time, batch, input_size]" if self.time_major else "[batch, time, input_size]"
            raise ValueError(f"[oar.nn.{api}] inputs must be 3-D {layout}, got shape {inputs.shape}")
        if inputs.shape[-1] != self.input_size:
            raise ValueError(f"[oar.nn.{api}] inputs.shape[-1] must equal input_size ({self.input_size}), got "
                             f"{inputs.shape[-1]}")
        batch = inputs.shape[1 if self.time_major else 0]
        states = self._split_states(initial_states, batch, _dtype_name(inputs))
        finals = []
        out = inputs
        for i, layer in enumerate(self):
            if i > 0 and self.dropout > 0:
                out = F.dropout(out, self.dropout, training=self.training)
            out, final = layer(out, states[i], sequence_length)
            finals.extend(final if self.num_directions == 2 else [final])
        if self.state_components == 1:
            return out, oar.stack(finals, 0)
        return out, (oar.stack([s[0] for s in finals], 0), oar.stack([s[1] for s in finals], 0))

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.direction != "forward":
            s += f", direction={self.direction}"
        if self.time_major:
            s += ", time_major=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        return s


class SimpleRNN(RNNBase):
    """Multi-layer Elman RNN (tanh or relu).

    forward(inputs, initial_states=None [L*D, batch, hidden], sequence_length=None)
    -> (outputs [batch, time, D*hidden], final_states [L*D, batch, hidden]).

    >>> import oar
    >>> rnn = oar.nn.SimpleRNN(4, 3, num_layers=2, direction="bidirect")
    >>> y, h = rnn(oar.ones([2, 5, 4]))
    >>> y.shape, h.shape
    ([2, 5, 6], [4, 2, 3])
    """

    _cell_type = SimpleRNNCell
    _api = "SimpleRNN"

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward", time_major=False, dropout=0.0,
                 activation="tanh", weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None,
                 name=None):
        mode = "RNN_TANH" if activation == "tanh" else "RNN_RELU"
        super().__init__(mode, input_size, hidden_size, num_layers, direction, time_major, dropout, weight_ih_attr,
                         weight_hh_attr, bias_ih_attr, bias_hh_attr, activation=activation)
        self.activation = activation


class LSTM(RNNBase):
    """Multi-layer LSTM.

    forward(inputs, initial_states=None or (h0, c0) each [L*D, batch, hidden], sequence_length=None)
    -> (outputs [batch, time, D*hidden], (h, c)).

    >>> import oar
    >>> lstm = oar.nn.LSTM(4, 3, num_layers=2)
    >>> y, (h, c) = lstm(oar.ones([2, 5, 4]))
    >>> y.shape, h.shape, c.shape
    ([2, 5, 3], [2, 2, 3], [2, 2, 3])
    """

    _cell_type = LSTMCell
    _api = "LSTM"

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward", time_major=False, dropout=0.0,
                 weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, proj_size=0,
                 name=None):
        kwargs = {"proj_size": proj_size} if proj_size else {}
        super().__init__("LSTM", input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr, **kwargs)


class GRU(RNNBase):
    """Multi-layer GRU.

    forward(inputs, initial_states=None [L*D, batch, hidden], sequence_length=None)
    -> (outputs [batch, time, D*hidden], final_states [L*D, batch, hidden]).

    >>> import oar
    >>> gru = oar.nn.GRU(4, 3, direction="bidirectional")
    >>> y, h = gru(oar.ones([2, 5, 4]))
    >>> y.shape, h.shape
    ([2, 5, 6], [2, 2, 3])
    """

    _cell_type = GRUCell
    _api = "GRU"

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward", time_major=False, dropout=0.0,
                 weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, direction, time_major, dropout, weight_ih_attr,
                         weight_hh_attr, bias_ih_attr, bias_hh_attr)
