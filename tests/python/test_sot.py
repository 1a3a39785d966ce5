"""to_static(full_graph=False): symbolic bytecode execution with guards and
graph breaks. Every result is compared with eager execution of the same
Python function (the reference), and the segment counters with what the
guards must do."""
import copy
import dataclasses
import inspect

import numpy as np
import pytest

import oar
from oar import nn
from oar.jit.sot.cache import code_info

RNG = np.random.default_rng(11)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def T(a):
    return oar.to_tensor(np.asarray(a, dtype=np.float32))


def sot(fn):
    # Fusion off: the tests read the captured programs' ops by name.
    plain = oar.static.BuildStrategy()
    plain.fuse_elementwise = False
    return oar.jit.to_static(fn, full_graph=False, build_strategy=plain)


def check(fn, *args, **kwargs):
    """Runs fn eagerly and converted (default mode) on the same arguments; the results must match."""
    static = fn if isinstance(fn, oar.jit.StaticFunction) else sot(fn)
    want = static.dygraph_function(*args, **kwargs) if static._layer is None else \
        static.dygraph_function(static._layer, *args, **kwargs)
    got = static(*args, **kwargs)
    assert_same(got, want)
    return static, got


def assert_same(got, want):
    if isinstance(want, oar.Tensor):
        assert isinstance(got, oar.Tensor), type(got)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, dict):
        assert type(got) is dict and list(got) == list(want)
        for k in want:
            assert_same(got[k], want[k])
    elif dataclasses.is_dataclass(want):
        assert type(got) is type(want)
        for f in dataclasses.fields(want):
            assert_same(getattr(got, f.name), getattr(want, f.name))
    else:
        assert got == want, (got, want)


def line_of(fn, text):
    """The line number of the first source line of fn containing text."""
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(text)


def programs(fn):
    """The programs of the captured segments of fn's code, in capture order of start index."""
    return [seg.program for seg in code_info(fn.__code__).all_segments() if seg.program is not None]


# ---------------------------------------------------------------- data-dependent control flow

def test_data_dependent_if_breaks_and_takes_each_branch():
    def f(x):
        y = oar.tanh(x) * 2.0
        if y.sum() > 0:
            z = y + 1.0
        else:
            z = y - 1.0
        return z * 3.0

    s = sot(f)
    for v in ([1.0, 2.0], [-1.0, -2.0]):
        check(s, T(v))
    first = s.compile_count
    assert first >= 3  # before the break, and one segment per branch
    assert s.graph_breaks == [oar.jit.GraphBreak(__file__, line_of(f, "if y.sum()"),
                                                 "Tensor used as a Python bool (data-dependent control flow)")]
    # Same shapes, either branch: the guards pass, nothing is captured again.
    for v in ([0.5, 2.0], [-3.0, -2.0], [4.0, 1.0]):
        check(s, T(v))
    assert s.compile_count == first and s.recompile_count == 0
    assert len(s.program_cache) == 0  # with breaks, no call was one whole program


def test_while_on_tensor_values():
    def f(x, limit):
        n = 0
        while x.sum() < limit:
            x = x * 2.0
            n += 1
        return x, n

    s = sot(f)
    check(s, T([0.5, 0.25]), 10.0)
    check(s, T([3.0, 1.0]), 10.0)
    check(s, T([0.01, 0.01]), 10.0)
    assert any("Python bool" in b.reason for b in s.graph_breaks)


def test_and_or_on_tensors_break():
    def f(x):
        if x.sum() > 0 and x.mean() < 10.0:
            return x + 1.0
        return x

    check(f, T([1.0, 2.0]))
    check(f, T([-1.0, 2.0]))


# ---------------------------------------------------------------- reading values in the middle

def test_item_then_capture_resumes():
    def f(x):
        y = x * 3.0
        s = y.sum().item()
        z = oar.tanh(y) + s
        return oar.exp(z) * 0.5

    s = sot(f)
    check(s, T([0.1, 0.2]))
    check(s, T([0.3, -0.2]))
    assert [b.lineno for b in s.graph_breaks] == [line_of(f, ".item()")]
    assert "reads a Tensor's value" in s.graph_breaks[0].reason
    # The ops after the break are in a program.
    assert any("exp" in str(p) and "tanh" in str(p) for p in programs(f))


def test_numpy_and_numpy_calls_break():
    def f(x):
        a = x.numpy()
        b = np.sin(a) * 2.0
        y = oar.to_tensor(b) + x
        return oar.nn.functional.relu(y)

    s = sot(f)
    check(s, T([0.5, -2.0, 3.0]))
    check(s, T([1.5, 2.0, -3.0]))  # new values through the same segments
    n = s.compile_count
    check(s, T([-1.5, 4.0, 0.25]))
    assert s.compile_count == n
    reasons = [b.reason for b in s.graph_breaks]
    assert "Tensor.numpy() reads a Tensor's value" in reasons
    assert any(r.startswith("call to numpy.") and "not an oar function" in r for r in reasons), reasons
    assert any("relu" in str(p) for p in programs(f))


def test_print_is_a_break_and_prints(capsys):
    def f(x):
        y = x + 1.0
        print("shape", y.shape)
        return y * y

    s = sot(f)
    check(s, T([1.0, 2.0]))
    out = capsys.readouterr().out
    assert out == "shape [2]\nshape [2]\n"  # eager, then converted
    assert s.graph_breaks[0].reason.startswith("call to print")
    assert s.graph_breaks[0].lineno == line_of(f, "print(")


# ---------------------------------------------------------------- guards

SCALE = 2.0


def test_global_change_is_a_guard_miss():
    global SCALE

    def f(x):
        return x * SCALE + 1.0

    s = sot(f)
    try:
        check(s, T([1.0, 2.0]))
        assert s.compile_count == 1
        check(s, T([1.0, 2.0]))
        assert s.compile_count == 1
        SCALE = 5.0
        check(s, T([1.0, 2.0]))
        assert s.compile_count == 2 and s.recompile_count == 1
        SCALE = 2.0
        check(s, T([1.0, 2.0]))  # the first segment is still cached
        assert s.compile_count == 2
    finally:
        SCALE = 2.0


def test_shape_change_recompiles():
    def f(x):
        return oar.sum(x * x, axis=-1)

    s = sot(f)
    check(s, T(rand(2, 3)))
    check(s, T(rand(2, 3)))
    assert s.compile_count == 1
    check(s, T(rand(4, 3)))
    assert s.compile_count == 2 and s.recompile_count == 1
    check(s, oar.to_tensor(rand(2, 3).astype(np.float64)))  # a new dtype too
    assert s.compile_count == 3


def test_python_argument_values_are_guarded():
    def f(x, n, mode="add"):
        for _ in range(n):
            x = x + 1.0 if mode == "add" else x * 2.0
        return x

    s = sot(f)
    check(s, T([1.0]), 2)
    check(s, T([1.0]), 3)
    check(s, T([1.0]), 3, mode="mul")
    assert s.compile_count == 3
    check(s, T([5.0]), 2)
    assert s.compile_count == 3


class Gate(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)
        if self.training:
            return y * 2.0
        return y - 1.0


def test_training_flag_flip():
    net = Gate()
    oar.jit.to_static(net, full_graph=False)
    x = T(rand(2, 3))
    check(net.forward, x)
    net.eval()
    check(net.forward, x)
    assert net.forward.recompile_count == 1
    net.train()
    check(net.forward, x)
    assert net.forward.compile_count == 2
    assert net.forward.graph_breaks == []


def test_closures():
    def make(scale):
        offset = T([1.0, -1.0])

        def f(x):
            return x * scale + offset

        return f

    f2, f3 = make(2.0), make(3.0)
    s2, s3 = sot(f2), sot(f3)
    check(s2, T([1.0, 2.0]))
    check(s3, T([1.0, 2.0]))  # same code, another closure: its own guarded segment
    check(s2, T([3.0, 2.0]))


# ---------------------------------------------------------------- calls

def helper_with_break(x):
    y = x * 2.0
    if y.mean() > 0:  # a break inside the callee
        y = y + 10.0
    return oar.tanh(y)


def helper_plain(x, k=3.0):
    return x * k


def test_nested_user_functions_with_a_break_inside_the_callee():
    def f(x):
        a = helper_plain(x, k=2.0) + 1.0
        b = helper_with_break(a)
        return oar.exp(b) + a

    s = sot(f)
    check(s, T([1.0, 2.0]))
    check(s, T([-5.0, -2.0]))
    lines = {(b.filename, b.lineno) for b in s.graph_breaks}
    assert (__file__, line_of(helper_with_break, "if y.mean()")) in lines
    assert (__file__, line_of(f, "helper_with_break(a)")) in lines
    n = s.compile_count
    check(s, T([3.0, 2.0]))
    check(s, T([-3.0, -2.0]))
    assert s.compile_count == n


class Block(nn.Layer):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return x + oar.nn.functional.gelu(self.lin(self.norm(x)))


class Stack(nn.Layer):
    def __init__(self, d=4, n=3):
        super().__init__()
        self.blocks = nn.LayerList([Block(d) for _ in range(n)])
        self.head = nn.Linear(d, 2)

    def forward(self, x, skip_last=False):
        for i, blk in enumerate(self.blocks):
            if skip_last and i == len(self.blocks) - 1:
                continue
            x = blk(x)
        return self.head(x)


def test_layer_with_sublayers_is_one_segment_and_binds_parameters():
    net = Stack()
    ref = copy.deepcopy(net)
    oar.jit.to_static(net, full_graph=False)
    x = T(rand(5, 4))
    assert_same(net(x), ref(x))
    assert_same(net(x, skip_last=True), ref(x, skip_last=True))
    assert net.forward.graph_breaks == []
    assert net.forward.compile_count == 2
    # Without a break each call was one program: the program cache and concrete_program show it.
    assert len(net.forward.program_cache) == 2
    net.forward.concrete_program.verify()
    assert net.forward.concrete_program.input_types == [("float32", [5, 4])]
    # Parameters are bound to the program, not baked in: an update is seen without a recapture.
    with oar.no_grad():
        for p, q in zip(net.parameters(), ref.parameters()):
            p.set_value(p * 0.5)
            q.set_value(q * 0.5)
    assert_same(net(x), ref(x))
    assert net.forward.compile_count == 2


# ---------------------------------------------------------------- structures

def test_list_dict_tuple_inputs_and_outputs():
    def f(xs, d, t):
        out = []
        for x in xs:
            out.append(x * d["scale"])
        total = out[0]
        for y in out[1:]:
            total = total + y
        return {"parts": out, "total": total, "pair": (t[0] + total, t[1])}

    s = sot(f)
    args = ([T([1.0]), T([2.0]), T([3.0])], {"scale": 2.0}, (T([0.5]), "tag"))
    check(s, *args)
    check(s, *args)
    assert s.compile_count == 1


@dataclasses.dataclass
class Out:
    logits: oar.Tensor
    loss: oar.Tensor
    note: str = "ok"


def test_dataclass_output():
    def f(x):
        logits = x * 2.0
        return Out(logits=logits, loss=logits.mean())

    s, got = check(f, T([1.0, 3.0]))
    check(s, T([2.0, 3.0]))
    assert got.note == "ok"


def test_early_return():
    def f(x, flag):
        if flag:
            return x + 1.0
        y = x * 2.0
        if y.sum() > 3.0:
            return y
        return -y

    s = sot(f)
    check(s, T([1.0, 2.0]), True)
    check(s, T([1.0, 2.0]), False)
    check(s, T([0.1, 0.2]), False)


def test_for_over_list_and_range_with_break_continue():
    def f(x, weights, n):
        for w in weights:
            if w == 0.0:
                continue
            x = x * w
        for i in range(n):
            if i == 3:
                break
            x = x + float(i)
        return x

    s = sot(f)
    check(s, T([1.0, 2.0]), [2.0, 0.0, 3.0], 5)
    check(s, T([1.0, 2.0]), [2.0, 0.0, 3.0], 2)
    check(s, T([4.0, 2.0]), [2.0, 0.0, 3.0], 5)
    assert s.graph_breaks == []


def test_break_inside_a_loop_resumes_the_loop():
    def f(x, n):
        acc = []
        for i in range(n):
            x = x * 1.5
            if x.sum() > 4.0:  # data-dependent: a break inside the loop body
                x = x - 2.0
            acc.append(x + float(i))
        return acc

    s = sot(f)
    check(s, T([1.0, 1.0]), 4)
    check(s, T([0.5, 1.0]), 4)
    n = s.compile_count
    check(s, T([1.0, 1.0]), 4)
    assert s.compile_count == n


def test_comprehensions_and_unpacking():
    def f(x):
        parts = [x * float(i) for i in range(3)]
        a, *rest = parts
        d = {f"p{i}": p for i, p in enumerate(rest)}
        return a + sum(d.values()), len(d)

    s = sot(f)
    check(s, T([1.0, 2.0]))
    assert s.graph_breaks == []


def test_layer_mutation_in_forward_is_a_break():
    class Counter(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return self.fc(x) * float(self.calls)

    net = Counter()
    ref = copy.deepcopy(net)
    oar.jit.to_static(net, full_graph=False)
    x = T(rand(3, 2))
    for _ in range(3):
        assert_same(net(x), ref(x))
    assert net.calls == 3
    assert any("assignment to the attribute 'calls'" in b.reason for b in net.forward.graph_breaks)


def test_inplace_update_of_an_input_is_a_break():
    def f(x):
        y = x * 2.0
        x.add_(oar.ones_like(x))
        return y + x

    a, b = T([1.0, 2.0]), T([1.0, 2.0])
    s = sot(f)
    assert_same(s(a), f(b))
    assert_same(a, b)


# ---------------------------------------------------------------- training

class Regressor(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(oar.tanh(self.fc1(x)))


def train_step(model, opt, x, y):
    pred = model(x)
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss


def test_training_step_with_backward_and_step_inside_matches_eager():
    base = Regressor()
    models = [copy.deepcopy(base), copy.deepcopy(base)]
    opts = [oar.optimizer.Momentum(learning_rate=0.05, momentum=0.9, parameters=m.parameters()) for m in models]
    step = sot(train_step)
    rng = np.random.default_rng(5)
    w_true = rng.standard_normal((4, 1)).astype(np.float32)
    data = [rng.standard_normal((8, 4)).astype(np.float32) for _ in range(4)]
    xs = [T(d) for d in data]
    ys = [T(np.tanh(d @ w_true)) for d in data]  # learnable targets: the loss must go down
    eager, static = [], []
    for i in range(20):
        eager.append(float(train_step(models[0], opts[0], xs[i % 4], ys[i % 4]).numpy()))
        static.append(float(step(models[1], opts[1], xs[i % 4], ys[i % 4]).numpy()))
    np.testing.assert_allclose(static, eager, rtol=1e-5)
    assert static[-1] < 0.8 * static[0]
    for p, q in zip(models[1].parameters(), models[0].parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)
    reasons = [b.reason for b in step.graph_breaks]
    assert "Tensor.backward(): the backward pass runs eagerly" in reasons
    assert any(r.startswith("call to Momentum.step") for r in reasons), reasons
    n = step.compile_count
    step(models[1], opts[1], xs[0], ys[0])
    assert step.compile_count == n


# ---------------------------------------------------------------- report

def test_sot_report_lists_breaks_with_file_and_line():
    def reported(x):
        y = x + 1.0
        v = y.max().item()
        print("max", v)
        return y / v

    s = sot(reported)
    check(s, T([1.0, 3.0]))
    rep = oar.jit.sot_report()
    rows = [r for r in rep.functions if r.name.endswith("reported")]
    assert rows and rows[-1].compile_count == s.compile_count
    want_item = oar.jit.GraphBreak(__file__, line_of(reported, ".item()"), "Tensor.item() reads a Tensor's value")
    assert want_item in rep.breaks and want_item in s.graph_breaks
    text = str(rep)
    assert f"test_sot.py:{line_of(reported, 'print(')} call to print" in text


def test_unsupported_code_runs_eagerly_and_user_errors_propagate():
    def gen_fn(x):
        yield x * 2.0

    def uses_generator(x):
        return next(gen_fn(x)) + 1.0

    s, _ = check(uses_generator, T([1.0]))
    assert any("generator" in b.reason for b in s.graph_breaks)

    def bad(x):
        return oar.matmul(x, x)

    with pytest.raises(Exception) as eager_err:
        bad(T(rand(2, 3)))
    with pytest.raises(type(eager_err.value)):
        sot(bad)(T(rand(2, 3)))


class NormNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1D(3)
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.bn(x)
        scale = float(y.abs().max())  # a break after the statistics update
        return self.fc(y) / scale


def test_batch_norm_statistics_update_once_per_call_across_breaks():
    net = NormNet()
    ref = copy.deepcopy(net)
    oar.jit.to_static(net, full_graph=False)
    for i in range(3):
        x = T(rand(6, 3))
        assert_same(net(x), ref(x))
    for name, buf in net.named_buffers():
        np.testing.assert_allclose(buf.numpy(), dict(ref.named_buffers())[name].numpy(), rtol=1e-5, atol=1e-6)
    net.eval()
    ref.eval()
    x = T(rand(6, 3))
    assert_same(net(x), ref(x))


def test_internal_error_of_the_executor_runs_the_call_eagerly(monkeypatch):
    from oar.jit.sot import interpreter, opcodes

    def broken(frame, inst):
        raise interpreter.InternalError("a handler failed")

    monkeypatch.setitem(opcodes.HANDLERS, "BINARY_OP", broken)

    def f(x):
        return oar.exp(x) * 2.0

    s, _ = check(f, T([0.5, 1.0]))
    assert any("internal error of the bytecode executor" in b.reason and "ran eagerly" in b.reason
               for b in s.graph_breaks), s.graph_breaks


def test_tensors_only_passed_on_keep_their_shapes_guarded():
    def f(x, ys):
        a = x * 2.0
        v = a.sum().item()  # a break: the next segment starts with ys in the frame
        if ys[0].shape[0] > 2 and ys[1].shape[0] > 2:  # shapes read by Python, no op reads ys
            return a + v
        return a - v

    s = sot(f)
    x = T([1.0, 2.0])
    for n in (3, 1, 3, 1):
        ys = [T(rand(n)), T(rand(n)), T(rand(n))]
        check(s, x, ys)
