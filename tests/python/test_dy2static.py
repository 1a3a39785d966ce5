"""to_static(full_graph=True) converts Python control flow on tensors (oar/jit/dy2static).

Each converted function is checked against eager execution of the same
Python code, for inputs that take different branches or iteration counts,
with one cached program where the shapes agree: the branch is decided when
the program runs, not when it is traced.
"""
import traceback

import numpy as np
import pytest

import oar
from oar.jit import Dy2StaticError
from oar.jit import dy2static
from oar.static import InputSpec


def _np(v):
    if isinstance(v, oar.Tensor):
        return v.numpy()
    if isinstance(v, (list, tuple)):
        return [_np(x) for x in v]
    return v


def _close(a, b):
    a, b = _np(a), _np(b)
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
        return
    if isinstance(a, str):
        assert a == b
        return
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def check(fn, inputs, programs=1, spec=None):
    """Runs fn eagerly and converted on each argument tuple; checks results and the number of programs."""
    static = oar.jit.to_static(fn, input_spec=spec, full_graph=True)
    for args in inputs:
        args = tuple(oar.to_tensor(a) if isinstance(a, (list, float)) or isinstance(a, np.ndarray) else a
                     for a in args)
        _close(static(*args), fn(*args))
    if programs is not None:
        assert len(static.program_cache) == programs
    return static


def _ops(program):
    return str(program)


# ---------------------------------------------------------------- if / elif / else


def test_if_else_decided_at_run_time():
    def f(x):
        if x.sum() > 0:
            y = x * 2.0
        else:
            y = x - 1.0
        return y

    s = check(f, [([1.0, 2.0],), ([-3.0, 1.0],), ([0.5, -0.1],)])
    assert "cond" in _ops(s.concrete_program)


def test_elif_chain_and_nested_if():
    def f(x):
        s = x.sum()
        if s > 10.0:
            y = x * 0.0
        elif s > 0.0:
            if x.max() > 2.0:
                y = x + 100.0
            else:
                y = x + 10.0
        else:
            y = -x
        return y + 1.0

    check(f, [([20.0, 1.0],), ([3.0, 1.0],), ([1.0, 1.0],), ([-1.0, -2.0],)])


def test_variable_defined_in_one_branch_and_unused_after():
    def f(x):
        if x.sum() > 0:
            tmp = x * 3.0
            x = tmp + 1.0
        return x

    check(f, [([1.0],), ([-1.0],)])


def test_early_return_in_if_and_code_after():
    def f(x):
        if x.mean() > 1.0:
            return x * 10.0
        y = x + 1.0
        if y.sum() < 0:
            return y * 2.0
        return y

    check(f, [([3.0, 3.0],), ([-5.0, 0.0],), ([0.5, 0.2],)])


def test_return_of_tuples_from_branches():
    def f(x):
        if x.sum() > 0:
            return x + 1.0, x * 2.0
        else:
            return x - 1.0, x * 3.0

    check(f, [([1.0, 2.0],), ([-4.0, 1.0],)])


def test_python_condition_stays_python():
    def f(x, flag):
        if flag:
            return x + 1.0
        return x - 1.0

    s = oar.jit.to_static(f, full_graph=True)
    assert s(oar.to_tensor([1.0]), True).numpy().tolist() == [2.0]
    assert s(oar.to_tensor([1.0]), False).numpy().tolist() == [0.0]
    assert "cond" not in _ops(s.concrete_program)


def test_python_values_equal_in_both_branches_are_kept():
    def f(x):
        if x.sum() > 0:
            k = 2
            y = x * k
        else:
            k = 2
            y = x + k
        return y * k

    check(f, [([1.0],), ([-1.0],)])


def test_python_values_differing_between_branches_name_the_line():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        if x.sum() > 0:
            mode = "a"
        else:
            mode = "b"
        return x + len(mode)

    line = f.dygraph_function.__code__.co_firstlineno + 2
    with pytest.raises(Dy2StaticError) as info:
        f(oar.to_tensor([1.0]))
    msg = str(info.value)
    assert msg.startswith("[oar.jit.to_static] variable 'mode' differs between the branches")
    assert f'test_dy2static.py", line {line}' in msg
    assert "'a'" in msg and "'b'" in msg


def test_returning_none_on_one_path_and_a_tensor_on_another_is_an_error():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        if x.sum() > 0:
            return x

    with pytest.raises(Dy2StaticError, match=r"(?s)the return value differs between the branches.*None"):
        f(oar.to_tensor([1.0]))


def test_undefined_variable_used_after_the_if_names_it():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        if x.sum() > 0:
            label = "pos"
        return x + len(label)

    with pytest.raises(Dy2StaticError, match=r"variable 'label'"):
        f(oar.to_tensor([1.0]))

    @oar.jit.to_static(full_graph=True)
    def g(x):
        while x.sum() < 5.0:
            x = x + 1.0
            mode = "grow"
        return oar.nn.functional.relu(x) if mode else x

    line = g.dygraph_function.__code__.co_firstlineno + 5
    with pytest.raises(Dy2StaticError, match=rf"(?s)variable 'mode' is used but has no value here.*line {line}.*"
                                             rf"assigned in a `while` loop on a tensor"):
        g(oar.to_tensor([1.0]))

    @oar.jit.to_static(full_graph=True)
    def h(x):
        while x.sum() < 5.0:
            x = x + 1.0
            scale = "2"
        return oar.multiply(x, scale)

    with pytest.raises(Dy2StaticError, match=r"variable 'scale' is used but has no value here"):
        h(oar.to_tensor([1.0]))


def test_branches_with_different_dtypes_are_an_error():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        if x.sum() > 0:
            y = x
        else:
            y = x.astype("int64")
        return y

    with pytest.raises(Dy2StaticError, match=r"(?s)variable 'y' has different types.*float32.*int64"):
        f(oar.to_tensor([1.0]))


def test_if_on_a_multi_element_tensor_is_an_error():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        if x > 0:
            x = x + 1.0
        return x

    with pytest.raises(Dy2StaticError, match=r"shape \[2\].*|exactly one element"):
        f(oar.to_tensor([1.0, 2.0]))


# ---------------------------------------------------------------- while / for


def test_while_on_tensor_condition():
    def f(x):
        i = 0
        while x.sum() < 100.0:
            x = x * 2.0
            i += 1
        return x, i

    s = check(f, [([1.0, 2.0],), ([30.0, 40.0],), ([200.0, 0.0],)])
    assert "while_loop" in _ops(s.concrete_program)


def test_while_with_python_condition_stays_python():
    def f(x):
        i = 0
        while i < 3:
            x = x + 1.0
            i += 1
        return x

    s = check(f, [([1.0],), ([5.0],)])
    assert "while_loop" not in _ops(s.concrete_program)


def test_for_range_of_tensor():
    def f(x, n):
        s = x * 0.0
        k = 0
        for i in range(n):
            s = s * 2.0 + x
            k = k + i
        return s, k

    check(f, [([1.0, 2.0], oar.to_tensor(3)), ([1.0, 2.0], oar.to_tensor(0)), ([1.0, 2.0], oar.to_tensor(5))])


def test_for_range_start_stop_step_tensors():
    def f(x, a, b):
        acc = x * 0.0
        k = 0
        for i in range(a, b, 2):
            acc = acc * 2.0 + 1.0
            k = k + i
        return acc, k

    check(f, [([0.0], oar.to_tensor(1), oar.to_tensor(8)), ([0.0], oar.to_tensor(5), oar.to_tensor(2))])


def test_for_over_tensor_rows_with_dynamic_batch():
    def f(x):
        total = oar.zeros([3])
        for row in x:
            total = total + row * row
        return total

    check(f, [(np.ones([2, 3], "float32"),), (np.arange(12, dtype="float32").reshape(4, 3),)],
          spec=[InputSpec([None, 3], "float32")])


def test_enumerate_of_a_tensor_with_dynamic_batch():
    def f(x):
        total = oar.zeros([2])
        for i, row in enumerate(x):
            total = total + row * (i + 1)
        return total

    check(f, [(np.ones([2, 2], "float32"),), (np.arange(10, dtype="float32").reshape(5, 2),)],
          spec=[InputSpec([None, 2], "float32")])


def test_for_over_python_values_is_unrolled():
    def f(x):
        for scale in [1.0, 2.0, 3.0]:
            x = x * scale
        for i, v in enumerate((1.0, 2.0)):
            x = x + v * i
        for k, v in {"a": 1.0}.items():
            x = x + v
        return x

    s = check(f, [([1.0],), ([2.0],)])
    assert "while_loop" not in _ops(s.concrete_program)


def test_break_and_continue_in_tensor_loop():
    def f(x):
        i = oar.zeros([], "int64")
        acc = oar.zeros([1])
        while i < 10:
            i = i + 1
            if (i % 2) == 0:
                continue
            acc = acc + x * i.astype("float32")
            if acc.sum() > 20.0:
                break
        return acc, i

    check(f, [([1.0],), ([0.1],), ([10.0],)])


def test_break_in_python_range_loop_on_tensor_condition():
    def f(x):
        for i in range(4):
            x = x + 1.0
            if x.sum() > 3.0:
                break
        return x

    check(f, [([0.0],), ([2.5],), ([-10.0],)])


def test_return_inside_loop():
    def f(x):
        i = oar.zeros([], "int64")
        while i < 5:
            x = x * 2.0
            if x.sum() > 10.0:
                return x + 1000.0
            i = i + 1
        return x

    check(f, [([1.0],), ([0.01],)])


def test_for_else():
    def f(x):
        for i in range(3):
            if x.sum() > 5.0:
                break
            x = x + 2.0
        else:
            x = x * 100.0
        return x

    check(f, [([0.0],), ([1.5],), ([9.0],)])


def test_nested_loops():
    def f(x, n):
        total = x * 0.0
        i = oar.zeros([], "int64")
        while i < n:
            j = oar.zeros([], "int64")
            while j < i:
                total = total + x
                j = j + 1
            i = i + 1
        return total

    check(f, [([1.0], oar.to_tensor(3)), ([2.0], oar.to_tensor(5))])


def test_loop_variable_changing_dtype_is_an_error():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        y = x.astype("int64")
        while x.sum() < 10.0:
            x = x + 1.0
            y = x
        return y

    line = f.dygraph_function.__code__.co_firstlineno + 3
    with pytest.raises(Dy2StaticError) as info:
        f(oar.to_tensor([1.0]))
    assert "variable 'y' changes type" in str(info.value)
    assert f"line {line}" in str(info.value)


def test_python_number_loop_counter_becomes_a_tensor():
    def f(x):
        n = 0
        s = 0.0
        while x.sum() > 1.0:
            x = x / 2.0
            n += 1
            s = s + x.sum()
        return x, n, s

    check(f, [([8.0],), ([0.5],)])


def test_value_assigned_in_loop_and_undefined_before():
    def f(x):
        while x.sum() < 10.0:
            x = x + 3.0
            last = x * 2.0
        return last

    check(f, [([1.0],), ([5.0],)])


# ---------------------------------------------------------------- expressions


def test_and_or_not_and_conditional_expressions():
    def f(x):
        s = x.sum()
        a = (s > 0) and (s < 10)
        b = (s < -5) or not (s < 20)
        y = x * 2.0 if a else x - 1.0
        z = y + 1.0 if b else y
        return z

    check(f, [([1.0, 2.0],), ([-10.0, 1.0],), ([30.0, 1.0],)])


def test_comparison_chain():
    def f(x):
        if 0.0 < x.sum() < 5.0:
            return x * 3.0
        return x

    check(f, [([1.0],), ([7.0],), ([-1.0],)])


def test_python_and_or_keep_short_circuit_values():
    def f(x, opts):
        scale = opts and opts.get("scale") or 1.0
        return x * scale

    s = oar.jit.to_static(f, full_graph=True)
    assert s(oar.to_tensor([2.0]), {"scale": 3.0}).numpy().tolist() == [6.0]
    assert s(oar.to_tensor([2.0]), None).numpy().tolist() == [2.0]


# ---------------------------------------------------------------- assert / print


def test_assert_on_tensor_is_checked_when_the_program_runs():
    def f(x):
        assert x.sum() > 0, "must be positive"
        return x + 1.0

    s = oar.jit.to_static(f, full_graph=True)
    line = f.__code__.co_firstlineno + 1
    assert s(oar.to_tensor([1.0])).numpy().tolist() == [2.0]
    # The traced example passed the assert; the program checks each input.
    with pytest.raises(AssertionError, match=rf"must be positive .*test_dy2static.py, line {line}"):
        s(oar.to_tensor([-1.0]))
    assert len(s.program_cache) == 1
    with pytest.raises(AssertionError, match="must be positive"):
        f(oar.to_tensor([-1.0]))


def test_python_assert_still_checks():
    @oar.jit.to_static(full_graph=True)
    def f(x, n):
        assert n > 0, "n must be positive"
        return x * n

    with pytest.raises(AssertionError, match="n must be positive"):
        f(oar.to_tensor([1.0]), 0)


def test_print_of_a_tensor_prints_each_time_the_program_runs(capsys):
    @oar.jit.to_static(full_graph=True)
    def f(x):
        print("value:", x, "end")
        i = oar.zeros([], "int64")
        while i < x.sum():
            print("step", i)
            i = i + 1
        return x + 1.0

    assert f(oar.to_tensor([2.0])).numpy().tolist() == [3.0]
    out = capsys.readouterr().out
    assert out.count("value:") == 1 and out.count("step") == 2 and "[2.]) end" in out
    assert f(oar.to_tensor([3.0])).numpy().tolist() == [4.0]
    out = capsys.readouterr().out
    assert out.count("value:") == 1 and out.count("step") == 3 and "[3.]) end" in out
    assert len(f.program_cache) == 1


# ---------------------------------------------------------------- calls, closures, layers


def _helper(x):
    if x.mean() > 0:
        return x * 5.0
    return x


SCALE = 3.0


def test_called_functions_nested_functions_closures_and_globals():
    offset = 2.0

    def inner(v):
        if v.sum() > 1.0:
            return v + offset
        return v - offset

    def f(x):
        def local(y):
            return y * SCALE if y.sum() < 0 else y

        g = lambda t: t * 2.0  # noqa: E731
        return g(local(inner(_helper(x))))

    check(f, [([1.0],), ([-1.0],), ([0.1],)])


def test_layer_methods_sublayers_and_training_flag():
    class Block(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = oar.nn.Linear(3, 3)

        def forward(self, x):
            h = self.fc(x)
            if h.sum() > 0:
                h = oar.nn.functional.relu(h)
            return h

    class Net(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = oar.nn.LayerList([Block() for _ in range(2)])
            self.__scale = 0.5

        def helper(self, x):
            if x.mean() > 0.1:
                return x * self.__scale
            return x

        def forward(self, x):
            for blk in self.blocks:
                x = blk(x)
            if self.training:
                x = x * 1.0
            return self.helper(x)

    oar.seed(1)
    net = Net()
    eager = [net(oar.to_tensor(v)).numpy() for v in ([[1.0, 2.0, 3.0]], [[-1.0, -2.0, 0.5]])]
    snet = oar.jit.to_static(net, input_spec=[InputSpec([None, 3], "float32")], full_graph=True)
    for v, e in zip(([[1.0, 2.0, 3.0]], [[-1.0, -2.0, 0.5]]), eager):
        np.testing.assert_allclose(snet(oar.to_tensor(v)).numpy(), e, rtol=1e-5)
    assert len(snet.forward.program_cache) == 1
    assert "cond" in _ops(snet.forward.concrete_program)


def test_not_to_static_and_ignored_functions_are_not_converted():
    @oar.jit.not_to_static
    def plain(x):
        return x * 2.0

    def f(x):
        return plain(x) + np.float32(1.0)

    check(f, [([1.0],)])
    assert dy2static.transformed_source(plain) is not None  # still inspectable
    assert dy2static.convert_call.convert_callable(plain) is plain


# ---------------------------------------------------------------- tensor lists


def test_list_appended_in_tensor_loop_becomes_a_tensor_list():
    def f(x, n):
        outs = []
        i = oar.zeros([], "int64")
        while i < n:
            outs.append(x * i.astype("float32"))
            i = i + 1
        return oar.stack(outs), oar.concat(outs), outs[1], len(outs)

    check(f, [([1.0, 2.0], oar.to_tensor(3)), ([1.0, 2.0], oar.to_tensor(5))])


def test_tensor_list_pop_and_existing_items():
    def f(x, n):
        outs = [x]
        for i in range(n):
            outs.append(x + 1.0)
        last = outs.pop()
        return oar.stack(outs), last

    check(f, [([1.0], oar.to_tensor(3)), ([1.0], oar.to_tensor(4))])


# ---------------------------------------------------------------- errors and inspection


def test_generator_is_an_error_naming_the_function():
    def gen(x):
        yield x

    with pytest.raises(Dy2StaticError, match=r"(?s)gen.*generator.*test_dy2static.py"):
        oar.jit.to_static(gen, full_graph=True)(oar.to_tensor([1.0]))


def test_numpy_feeding_python_control_flow_names_the_line():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        if x.numpy().sum() > 0:
            return x
        return -x

    line = f.dygraph_function.__code__.co_firstlineno + 2
    with pytest.raises(Dy2StaticError) as info:
        f(oar.to_tensor([1.0]))
    assert "Tensor.numpy()" in str(info.value) and f"line {line}" in str(info.value)


def test_error_in_converted_code_reports_the_original_line():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        if x.sum() > 0:
            y = x + 1.0
        else:
            y = x.undefined_method()
        return y

    line = f.dygraph_function.__code__.co_firstlineno + 5
    with pytest.raises(AttributeError) as info:
        f(oar.to_tensor([1.0]))
    frames = [(fr.filename, fr.lineno) for fr in traceback.extract_tb(info.tb)]
    assert any(fn.endswith("test_dy2static.py") and ln == line for fn, ln in frames)


def test_transformed_source_and_convert_to_static():
    def f(x):
        while x.sum() < 4.0:
            x = x + 1.0
        return x

    src = dy2static.transformed_source(f)
    assert "_jst.While" in src and "nonlocal x" in src
    g = dy2static.convert_to_static(f)
    assert g(oar.to_tensor([1.0])).numpy().tolist() == [4.0]
    with pytest.raises(TypeError, match=r"^\[oar.jit.dy2static.convert_to_static\]"):
        dy2static.convert_to_static(3)


def test_get_concrete_program_and_save_load(tmp_path):
    class Net(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = oar.nn.Linear(2, 2)

        def forward(self, x):
            h = self.fc(x)
            if h.sum() > 0:
                out = h * 2.0
            else:
                out = h - 1.0
            return out

    oar.seed(3)
    net = Net()
    net.eval()
    xs = [oar.to_tensor([[5.0, 5.0]]), oar.to_tensor([[-5.0, -5.0]])]
    xs = [x if (net(x).sum() > 0) == (i == 0) else -x for i, x in enumerate(xs)]
    eager = [net(x).numpy() for x in xs]
    snet = oar.jit.to_static(net, input_spec=[InputSpec([None, 2], "float32")], full_graph=True)
    prog = snet.forward.get_concrete_program(InputSpec([None, 2], "float32"))
    assert "cond" in _ops(prog)
    path = str(tmp_path / "model")
    oar.jit.save(snet, path)
    loaded = oar.jit.load(path)
    for x, e in zip(xs, eager):
        np.testing.assert_allclose(loaded(x).numpy(), e, rtol=1e-5)


# ---------------------------------------------------------------- training


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_training_through_converted_control_flow_matches_eager(opt):
    class MLP(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc1 = oar.nn.Linear(4, 8)
            self.fc2 = oar.nn.Linear(8, 1)

        def forward(self, x):
            h = self.fc1(x)
            if h.mean() > 0:
                h = oar.nn.functional.relu(h)
            else:
                h = oar.tanh(h) * 2.0
            k = oar.zeros([], "int64")
            while k < 2:
                h = h * 0.9 + 0.01
                k = k + 1
            return self.fc2(h)

    def run(static):
        oar.seed(7)
        net = MLP()
        if static:
            net = oar.jit.to_static(net, full_graph=True)
        make = oar.optimizer.SGD if opt == "sgd" else oar.optimizer.Adam
        o = make(learning_rate=0.05, parameters=net.parameters())
        rng = np.random.default_rng(0)
        losses = []
        for step in range(20):
            x = oar.to_tensor(rng.normal(size=(6, 4)).astype("float32") + (1.0 if step % 2 else -1.0))
            y = oar.to_tensor(rng.normal(size=(6, 1)).astype("float32"))
            loss = ((net(x) - y) ** 2).mean()
            loss.backward()
            o.step()
            o.clear_grad()
            losses.append(float(loss))
        return losses

    eager, static = run(False), run(True)
    np.testing.assert_allclose(static, eager, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- more Python forms


class _Base(oar.nn.Layer):
    def __init__(self):
        super().__init__()
        self.__bias = 1.0

    def forward(self, x):
        if x.sum() > 0:
            return x + self.__bias
        return x - self.__bias


class _Child(_Base):
    @staticmethod
    def twice(v):
        return v * 2.0 if v.mean() > 0 else v

    def forward(self, x):
        y = super().forward(x)
        return self.twice(y)


def test_super_private_names_and_staticmethods_convert():
    net = _Child()
    eager = [net(oar.to_tensor(v)).numpy() for v in ([1.0, 2.0], [-4.0, 1.0], [0.5, -0.6])]
    snet = oar.jit.to_static(_Child(), full_graph=True)
    for v, e in zip(([1.0, 2.0], [-4.0, 1.0], [0.5, -0.6]), eager):
        np.testing.assert_allclose(snet(oar.to_tensor(v)).numpy(), e)
    assert len(snet.forward.program_cache) == 1
    assert str(snet.forward.concrete_program).count("cond(") >= 2


def test_closure_cells_are_shared_with_the_original():
    calls = []
    count = 0

    def f(x):
        nonlocal count
        count += 1
        calls.append(1)
        if x.sum() > 0:
            x = x * 2.0
        return x

    s = check(f, [([1.0],), ([-1.0],)])
    assert count == len(calls)  # the converted copy updates the same cell
    assert len(s.program_cache) == 1


def test_ignore_module_keeps_python_semantics(tmp_path, monkeypatch):
    mod = tmp_path / "d2s_ignored_mod.py"
    mod.write_text("def pick(x):\n    if x.sum() > 0:\n        return x\n    return -x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import d2s_ignored_mod

    def f(x):
        return d2s_ignored_mod.pick(x)

    check(f, [([1.0],), ([-1.0],)])  # converted: decides per input
    oar.jit.ignore_module([d2s_ignored_mod])
    try:
        with pytest.raises(Dy2StaticError, match="bool"):  # not converted: `if tensor:` runs in Python
            oar.jit.to_static(f, full_graph=True)(oar.to_tensor([1.0]))
    finally:
        from oar.jit import api
        api._ignored_modules.remove(d2s_ignored_mod)


def test_eager_calls_of_a_converted_function_keep_python_semantics():
    def f(x, items):
        total = x * 0.0
        for v in items:
            if v > 1:
                continue
            total = total + v
        while total.sum() < 5.0:
            total = total + 1.0
        return total if total.sum() > 6.0 else -total

    g = dy2static.convert_to_static(f)
    for items in ([0, 1, 2], [3, 4], []):
        _close(g(oar.to_tensor([1.0]), items), f(oar.to_tensor([1.0]), items))


def test_loop_over_range_of_shape_stays_python_and_dynamic_batch_loop_converts():
    def f(x):
        for j in range(x.shape[1]):  # a static dim: unrolled
            x = x + float(j)
        n = len(x)
        out = x * 0.0
        i = 0
        while i < n:  # n is a tensor when dim 0 is dynamic
            out = out + x
            i = i + 1
        return out

    s = check(f, [(np.ones([2, 3], "float32"),), (np.ones([5, 3], "float32"),)],
              spec=[InputSpec([None, 3], "float32")])
    assert "while_loop" in _ops(s.concrete_program)


def test_tensor_control_flow_inside_try_except_is_refused():
    @oar.jit.to_static(full_graph=True)
    def f(x):
        try:
            if x.sum() > 0:
                x = x + 1.0
        except ValueError:
            x = x * 0.0
        return x

    line = f.dygraph_function.__code__.co_firstlineno + 3
    with pytest.raises(Dy2StaticError, match=rf"(?s)an `if` on a tensor inside a try block.*line {line}"):
        f(oar.to_tensor([1.0]))

    @oar.jit.to_static(full_graph=True)
    def g(x):
        try:
            y = x * 2.0
        finally:
            pass
        if y.sum() > 0:  # outside the try: converts
            y = y + 1.0
        return y

    assert g(oar.to_tensor([-1.0])).numpy().tolist() == [-2.0]


def _nested_def(x):
    if x.sum() > 0:
        def g(y):
            if y.mean() > 1:
                return y * 2
            return y + x
        z = g(x)
    else:
        z = -x
    return z


def _if_in_tensor_for(x):
    acc = oar.zeros([2])
    for row in x:
        if row.sum() > 0:
            acc = acc + row
        else:
            acc = acc - row
    return acc


def _return_in_tensor_for(x):
    for row in x:
        if row.sum() > 2:
            return row
    return x[0] * 0


def _deep(x):
    i = 0
    if x.sum() > 0:
        while x.sum() < 50:
            if x.max() > 10:
                x = x + 5
            else:
                x = x * 2
            i += 1
    else:
        x = -x
    return x, i


def _list_branches(x):
    if x.sum() > 0:
        r = [x, x * 2]
    else:
        r = [x - 1, x * 3]
    return r[0] + r[1]


def _flag_in_python_loop(x):
    found = False
    for i in range(3):
        if x[i] > 0:
            found = True
    return oar.where(found, x, -x) if isinstance(found, oar.Tensor) else (x if found else -x)


def _growing(x):
    while x.sum() < 50:
        x = oar.concat([x, x])
    return x


def _python_while_with_tensor_break(x):
    i = 0
    while i < 10:
        x = x + 1.0
        i += 1
        if x.sum() > 5:
            break
    return x, i


def _elif_returns(x):
    s = x.sum()
    if s < 0:
        return x * 0
    elif s < 1:
        return x * 1
    elif s < 2:
        return x * 2
    return x * 3


def _dict_item_set_in_branch(x):
    d = {"a": x, "b": [x]}
    if x.sum() > 0:
        d["a"] = x * 3
        d["b"].append(x)
    else:
        d["b"].append(-x)
    y = x * 2 if x.sum() > 1 else 0.0
    return d["a"] + d["b"][-1] + y


@pytest.mark.parametrize("fn, inputs", [
    (_python_while_with_tensor_break, [[0.0], [3.0], [-20.0]]),
    (_elif_returns, [[-1.0], [0.5], [1.5], [3.0]]),
    (_dict_item_set_in_branch, [[1.0], [-1.0], [3.0]]),
    (_nested_def, [[1.0, 3.0], [-1.0, -2.0], [0.5, 0.6]]),
    (_if_in_tensor_for, [[[1.0, 2.0], [-3.0, 1.0]], [[1.0, -5.0], [3.0, 1.0]]]),
    (_return_in_tensor_for, [[[1.0, 2.0], [-3.0, 1.0]], [[0.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [4.0, 1.0]]]),
    (_deep, [[1.0, 2.0], [-1.0, 2.0], [20.0, 2.0]]),
    (_list_branches, [[1.0], [-1.0]]),
    (_flag_in_python_loop, [[1.0, -1.0, -2.0], [-1.0, -1.0, -2.0]]),
    (_growing, [[1.0, 2.0], [10.0, 20.0], [60.0, 0.0]]),
])
def test_more_control_flow_matches_eager(fn, inputs):
    check(fn, [(np.asarray(v, "float32"),) for v in inputs])


def test_user_layers_inside_sequential_are_converted():
    class Gate(oar.nn.Layer):
        def forward(self, x):
            if x.mean() > 0:
                return x * 2.0
            return x - 1.0

    net = oar.nn.Sequential(oar.nn.Linear(2, 2), Gate(), Gate())
    s = oar.jit.to_static(oar.nn.Sequential(*[layer for layer in net.children()]), full_graph=True)
    for v in ([[1.0, 2.0]], [[-3.0, 1.0]], [[0.2, -0.1]]):
        x = oar.to_tensor(v)
        np.testing.assert_allclose(s(x).numpy(), net(x).numpy(), rtol=1e-5)
    assert len(s.forward.program_cache) == 1


def test_layer_called_in_a_tensor_loop():
    class Step(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = oar.nn.Linear(3, 3)

        def forward(self, x, n):
            for _ in range(n):
                x = oar.tanh(self.fc(x))
            return x

    oar.seed(0)
    net = Step()
    s = oar.jit.to_static(net, full_graph=True)
    for n in (2, 4, 0):
        x = oar.to_tensor([[1.0, 2.0, 3.0]])
        np.testing.assert_allclose(s(x, oar.to_tensor(n)).numpy(), net.forward.dygraph_function(net, x, n).numpy(),
                                   rtol=1e-5)
    assert len(s.forward.program_cache) == 1


def test_function_without_source_runs_as_traced_and_warns_when_that_fails():
    namespace = {}
    exec("def f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n", {}, namespace)
    s = oar.jit.to_static(namespace["f"], full_graph=True)
    with pytest.warns(UserWarning, match=r"ran without source conversion.*could not be read"):
        with pytest.raises(Dy2StaticError, match="bool"):
            s(oar.to_tensor([1.0]))
    exec("def g(x):\n    return x * 2.0\n", {}, namespace)
    assert oar.jit.to_static(namespace["g"], full_graph=True)(oar.to_tensor([1.0])).numpy().tolist() == [2.0]


def test_tensor_list_with_dynamic_batch_saves_and_loads(tmp_path):
    class Unroll(oar.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = oar.nn.Linear(2, 2)

        def forward(self, x, n):
            outs = []
            for _ in range(n):
                x = oar.tanh(self.fc(x))
                outs.append(x)
            return oar.stack(outs).sum(0)

    oar.seed(5)
    net = Unroll()
    xs = [oar.to_tensor([[1.0, 2.0]]), oar.to_tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])]
    refs = [(x, k, net.forward.__func__(net, x, k).numpy()) for x in xs for k in (1, 3)]
    s = oar.jit.to_static(net, input_spec=[InputSpec([None, 2]), InputSpec([], "int64")], full_graph=True)
    for x, k, ref in refs:
        np.testing.assert_allclose(s(x, oar.to_tensor(k)).numpy(), ref, rtol=1e-5)
    assert len(s.forward.program_cache) == 1
    path = str(tmp_path / "unroll")
    oar.jit.save(s, path)
    loaded = oar.jit.load(path)
    for x, k, ref in refs:
        np.testing.assert_allclose(loaded(x, oar.to_tensor(k)).numpy(), ref, rtol=1e-5)


_CALLS = 0


def _global_counter(x):
    global _CALLS
    _CALLS += 1
    return x * float(_CALLS)


class _AttributeCounter(oar.nn.Layer):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.built = False

    def forward(self, x):
        self.built = True  # a flag set to the same value on every call is fine
        self.calls += 1
        return x * float(self.calls)


def test_changes_to_python_state_are_refused_not_baked_in():
    layer = _AttributeCounter()
    for fn, what in ((_global_counter, "_CALLS"), (layer, "self.calls")):
        with pytest.raises(oar.jit.Dy2StaticError, match=r"changing the Python value of " + what):
            oar.jit.to_static(fn, full_graph=True)(oar.ones([2]))
    assert _CALLS == 0 and layer.calls == 0  # refused before the write


def test_returns_in_every_branch_of_nested_ifs():
    def f(x):
        if x[0] > 0:
            if x[1] > 0:
                return x + 1.0
            return x - 1.0
        else:
            if x[1] > 0:
                return x * 2.0
            return x * -2.0

    check(f, [([1.0, 2.0],), ([1.0, -5.0],), ([-1.0, -2.0],), ([-1.0, 4.0],)])


def test_enumerate_over_rows_of_a_static_tensor_gives_python_indices():
    def f(x):
        acc = oar.zeros([2])
        for i, row in enumerate(x):
            acc = acc + row * float(i)  # i is a Python int, as in eager code
        return acc

    s = check(f, [(np.arange(6, dtype="float32").reshape(3, 2),), (np.ones([3, 2], "float32"),)])
    assert "while_loop" not in _ops(s.concrete_program)


def test_augmented_assignment_to_a_tensor_inside_a_branch():
    def f(x):
        y = x * 1.0
        if y.sum() > 0:
            y += 1.0
            y *= 2.0
        else:
            y -= 1.0
        return y

    s = check(f, [([1.0, 2.0],), ([-1.0, -2.0],)])
    assert "cond" in _ops(s.concrete_program)
