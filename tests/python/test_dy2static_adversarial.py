"""Adversarial cases for to_static(full_graph=True): each once gave a result different from eager
execution, or failed with an untyped error, and is checked here against eager execution of the
same Python code (inputs taking different paths, one cached program where the shapes agree).
"""
import functools

import numpy as np
import pytest

import oar
from oar.jit import Dy2StaticError
from test_dy2static import _close  # leaf-by-leaf comparison with eager

P = [[1.0, 2.0, 3.0]]
N = [[-1.0, -2.0, -3.0]]


def check(fn, inputs, programs=1):
    static = oar.jit.to_static(fn, full_graph=True)
    for args in inputs:
        args = tuple(oar.to_tensor(np.asarray(a, "float32")) if isinstance(a, list) else a for a in args)
        _close(static(*args), fn(*args))
    assert len(static.program_cache) == programs
    return static


# ---------------------------------------------------------------- decorators


def _plus_one(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs) + 1.0

    return wrapper


@_plus_one
def _decorated(v):
    if v.sum() > 0:
        return v * 2.0
    return v * 3.0


def test_functools_wraps_wrapper_is_converted_not_the_wrapped_function():
    # The wrapper's own source is converted (inspect follows __wrapped__ to the wrapped function's source,
    # whose decorator the conversion drops: the "+ 1" was lost).
    def f(x):
        return _decorated(x)

    check(f, [(P,), (N,)])
    check(_decorated, [(P,), (N,)])


# ---------------------------------------------------------------- comparison chains


def test_comparison_chain_evaluates_the_middle_operand_once():
    def f(x):
        calls = []

        def probe(v):
            calls.append(1)
            return v

        if 0 < probe(x.sum()) < 10:
            return x + len(calls)
        return x - len(calls)

    check(f, [(P,), (N,), ([[5.0, 5.0, 5.0]],)])


def test_comparison_chain_short_circuits_on_python_values():
    def f(x, a):
        if 3 < a < 1 / 0 if a < 3 else True:
            return x
        return x * 2.0

    s = oar.jit.to_static(f, full_graph=True)
    t = oar.to_tensor(np.asarray(P, "float32"))
    _close(s(t, 1), f(t, 1))


def test_comparison_chain_on_tensors_with_in_and_is():
    def f(x, opts):
        s = x.sum()
        if -1.0 < s <= 7.0 and "scale" in opts and opts is not None:
            return x * opts["scale"]
        return x

    check(f, [(P, {"scale": 2.0}), (N, {"scale": 2.0}), ([[3.0, 3.0, 3.0]], {"scale": 2.0})])


# ---------------------------------------------------------------- assignment expressions


def test_walrus_in_while_condition_is_carried():
    def f(x):
        i = oar.zeros([])
        acc = oar.zeros([])
        while (i := i + 1) < 4:
            if i > 2:
                continue
            acc = acc + i * x.sum()
        return acc, i

    check(f, [(P,), (N,)])


def test_walrus_in_while_condition_with_python_values_and_else():
    def f(x):
        n = 0
        while (n := n + 1) < 3:
            x = x * 2.0
        else:
            x = x + n
        return x, n

    check(f, [(P,), (N,)])


def test_walrus_in_first_operand_of_and():
    def f(x):
        if (s := x.sum()) > 0 and s < 10:
            return x * s
        return x

    check(f, [(P,), (N,), ([[5.0, 5.0, 5.0]],)])


def test_walrus_in_comprehension_inside_branch_binds_the_function_variable():
    def f(x):
        t = x[0]
        if x.sum() > 0:
            ys = [(t := r * 2.0) for r in x]
        return t

    check(f, [(P,), (N,)])


def test_walrus_in_an_operand_evaluated_on_some_paths_is_refused_with_the_line():
    def f(x):
        if x.sum() > 0 and (s := x.mean()) > 1:
            return x * s
        return x

    with pytest.raises(Dy2StaticError, match=r"(?s)assignment expression.*test_dy2static_adversarial.py.*"
                                            r"Assign the variable in a statement"):
        oar.jit.to_static(f, full_graph=True)(oar.to_tensor(np.asarray(P, "float32")))


# ---------------------------------------------------------------- tensors formatted into strings


def test_fstring_of_a_tensor_is_refused_with_the_line():
    # The string held the traced example's values for every later call.
    def f(x):
        s = f"{x.sum()}"
        return x, s

    with pytest.raises(Dy2StaticError, match=r"(?s)formatting a Tensor.*line \d+.*s = f\"\{x.sum\(\)\}\""):
        oar.jit.to_static(f, full_graph=True)(oar.to_tensor(np.asarray(P, "float32")))


@pytest.mark.parametrize("how", ["str", "repr", "format", "method", "percent", "percent_tuple"])
def test_str_repr_format_of_a_tensor_are_refused(how):
    def f(x):
        if how == "str":
            s = str(x)
        elif how == "repr":
            s = repr(x)
        elif how == "format":
            s = format(x)
        elif how == "method":
            s = "{}".format(x)
        elif how == "percent":
            s = "%s" % x
        else:
            s = "%d: %s" % (1, x)
        return x, s

    with pytest.raises(Dy2StaticError, match="formatting a Tensor"):
        oar.jit.to_static(f, full_graph=True)(oar.to_tensor(np.asarray(P, "float32")))


def test_fstring_of_shapes_and_assert_messages_still_work():
    def f(x):
        assert x.sum() > -100, f"bad input {x}"
        tag = f"{x.shape}-{x.dtype}"
        return x * 2.0, tag

    check(f, [(P,), (N,)])
    s = oar.jit.to_static(f, full_graph=True)
    with pytest.raises(AssertionError, match="an assert of a to_static function failed"):
        s(oar.to_tensor(np.full([1, 3], -50.0, "float32")))


# ---------------------------------------------------------------- state changed inside branches and loops


class _Acc:
    def __init__(self):
        self.total = None


def test_attribute_of_a_local_object_assigned_in_a_tensor_loop_is_carried():
    # The attribute kept the traced example's final value for every later call.
    def f(x):
        a = _Acc()
        a.total = x * 0.0
        i = oar.zeros([], "int64")
        while i < x.sum().astype("int64"):
            a.total = a.total + x
            i = i + 1
        return a.total

    check(f, [(P,), ([[1.0, 1.0, 0.0]],), (N,)])


def test_attribute_of_a_local_object_assigned_in_a_tensor_branch_is_carried():
    def f(x):
        a = _Acc()
        a.total = x
        if x.sum() > 0:
            a.total = x * 2.0
        else:
            a.total += 1.0
        return a.total

    check(f, [(P,), (N,)])


def test_attribute_of_self_assigned_in_a_tensor_loop_is_carried():
    class Net(oar.nn.Layer):
        def forward(self, x):
            self.h = x * 0.0
            for i in range(x.sum().astype("int64")):
                self.h = self.h + x
            return self.h

    net = Net()
    static = oar.jit.to_static(Net(), full_graph=True)
    for a in (P, [[1.0, 1.0, 0.0]]):
        t = oar.to_tensor(np.asarray(a, "float32"))
        _close(static(t), net(t))


def test_nonlocal_write_by_a_nested_function_called_in_a_tensor_loop():
    def f(x):
        state = x * 0.0

        def step():
            nonlocal state
            state = state + 1.0

        i = oar.zeros([], "int64")
        while i < x.sum().astype("int64"):
            step()
            i = i + 1
        return state

    check(f, [(P,), ([[1.0, 1.0, 0.0]],)])


def test_nonlocal_write_by_a_nested_function_called_in_a_tensor_branch():
    def f(x):
        state = x

        def put(v):
            nonlocal state
            state = v

        if x.sum() > 0:
            put(x * 2.0)
        return state

    check(f, [(P,), (N,)])


def test_append_by_a_nested_function_called_in_a_tensor_loop():
    def f(x):
        lst = []

        def push(v):
            lst.append(v)

        i = oar.zeros([], "int64")
        while i < x.sum().astype("int64"):
            push(x * i.astype("float32"))
            i = i + 1
        return oar.stack(lst).sum(0)

    check(f, [(P,), ([[1.0, 1.0, 0.0]],)])


def test_augmented_assignment_to_items_of_lists_and_dicts_in_branches_and_loops():
    # a[0] += 1 on a tensor item wrote in place to a tensor from outside the cond region (untyped error).
    def f(x):
        a = [x * 1.0, x * 2.0]
        d = {"k": x * 1.0}
        if x.sum() > 0:
            a[0] += 1.0
            d["k"] *= 3.0
        else:
            a[1] -= 1.0
        i = oar.zeros([], "int64")
        while i < x.sum().astype("int64"):
            a[1] += x
            i = i + 1
        return a[0], a[1], d["k"]

    check(f, [(P,), (N,), ([[1.0, 1.0, 0.0]],)])


# ---------------------------------------------------------------- raise


def test_raise_in_a_tensor_branch_raises_when_the_program_takes_it():
    # Both branches run while tracing: the raise stopped every call, whichever branch the input took.
    def f(x):
        if x.sum() < -1:
            raise ValueError("too small")
        return x * 2.0

    static = check(f, [(P,), ([[0.0, 0.0, 0.0]],)])
    with pytest.raises(ValueError, match="too small") as info:
        static(oar.to_tensor(np.asarray(N, "float32")))
    assert "when its program ran" in " ".join(getattr(info.value, "__notes__", []))
    _close(static(oar.to_tensor(np.asarray(P, "float32"))), f(oar.to_tensor(np.asarray(P, "float32"))))
    assert len(static.program_cache) == 1


def test_raise_in_a_loop_over_python_values_with_tensor_conditions():
    def f(x):
        for i in range(3):
            if x[0, i] < 0:
                raise KeyError(i)
            x = x * 2.0
        return x

    static = check(f, [(P,), ([[1.0, 1.0, 0.0]],)])
    with pytest.raises(KeyError):
        static(oar.to_tensor(np.asarray([[1.0, -1.0, 0.0]], "float32")))


# ---------------------------------------------------------------- tensor lists and loop structures


def test_append_in_one_branch_of_a_tensor_if_inside_a_tensor_loop():
    # The loop's retry for the list's element type was taken by the `if`, and both branches shared one list.
    def f(x):
        out = []
        for i in range(x.sum().astype("int64")):
            if i % 2 == 0:
                out.append(x + 1.0)
        return oar.stack(out).sum(0)

    check(f, [(P,), ([[1.0, 1.0, 0.0]],), ([[2.0, 1.0, 0.0]],)])


def test_pop_from_a_tensor_list_that_is_empty_at_run_time_raises():
    def f(x):
        out = []
        i = oar.zeros([], "int64")
        while i < x.sum().astype("int64"):
            out.append(x)
            i = i + 1
        return out.pop()

    static = check(f, [(P,)])
    with pytest.raises(IndexError, match="pop from empty list"):
        f(oar.to_tensor(np.asarray(N, "float32")))
    with pytest.raises(IndexError, match="pop from empty list"):
        static(oar.to_tensor(np.asarray(N, "float32")))


def test_dict_gaining_a_key_in_a_tensor_loop_is_refused_with_the_line():
    def f(x):
        d = {"a": x}
        i = oar.zeros([], "int64")
        while i < x.sum().astype("int64"):
            d["b"] = x
            i = i + 1
        return d["a"]

    with pytest.raises(Dy2StaticError, match=r"(?s)variable 'd' changes structure.*line \d+.*create every key"):
        oar.jit.to_static(f, full_graph=True)(oar.to_tensor(np.asarray(P, "float32")))


# ---------------------------------------------------------------- in-place writes in branches and loops


def test_in_place_write_in_a_branch_is_refused_naming_the_line_and_the_fix():
    def f(x):
        y = x * 1.0
        if x.sum() > 0:
            y[0] = y[0] + 1.0
        return y

    pattern = r"(?s)in-place write.*line \d+.*y\[0\] = y\[0\] \+ 1.0.*y.clone\(\)"
    with pytest.raises(Dy2StaticError, match=pattern) as info:
        oar.jit.to_static(f, full_graph=True)(oar.to_tensor(np.asarray(P, "float32")))
    assert ", in f\n" in str(info.value)  # the user's function, not the generated branch function


def test_in_place_write_in_a_loop_body_is_refused_naming_the_line():
    def f(x):
        y = x * 1.0
        i = oar.zeros([], "int64")
        while i < 3:
            y.add_(x)
            i = i + 1
        return y

    with pytest.raises(Dy2StaticError, match=r"(?s)in-place write.*line \d+.*y.add_\(x\)"):
        oar.jit.to_static(f, full_graph=True)(oar.to_tensor(np.asarray(P, "float32")))


def test_in_place_write_to_a_copy_made_in_the_branch_works():
    def f(x):
        y = x * 1.0
        if x.sum() > 0:
            y = y.clone()
            y[0, 1] = 7.0
        return y

    check(f, [(P,), (N,)])


# ---------------------------------------------------------------- recursion


def _halve_until(x, depth):
    if depth == 0:
        return x
    if x.sum() > 4:
        x = x / 2.0
    return _halve_until(x, depth - 1)


def test_recursive_function_with_tensor_ifs_and_a_python_bound_is_converted():
    # The converted function named itself as a closure variable of its factory, so recursive functions ran
    # unconverted (a tensor `if` in one then failed as bool() of a Tensor).
    def f(x):
        return _halve_until(x, 3)

    check(f, [(P,), (N,), ([[10.0, 10.0, 10.0]],)])
    check(_halve_until, [(P, 3), ([[10.0, 10.0, 10.0]], 3)])


def _until_large(x):
    if x.sum() > 100:
        return x
    return _until_large(x * 2.0)


def test_recursion_ending_on_a_tensor_condition_is_refused_with_the_line():
    with pytest.raises(Dy2StaticError, match=r"(?s)_until_large calls itself \d+ levels deep.*line \d+.*while"):
        oar.jit.to_static(_until_large, full_graph=True)(oar.to_tensor(np.asarray(P, "float32")))


class _Counter:
    def __init__(self, v):
        self.v = v

    def add(self, t):
        self.v = self.v + t


def test_method_changing_its_object_called_in_a_tensor_loop_and_branch():
    # The object's attribute kept the traced example's final value (loop) or left a tensor of the cond region
    # behind (branch).
    def in_loop(x):
        c = _Counter(x * 0.0)
        i = oar.zeros([], "int64")
        while i < x.sum().astype("int64"):
            c.add(x)
            i = i + 1
        return c.v

    def in_branch(x):
        c = _Counter(x * 0.0)
        if x.sum() > 0:
            c.add(x)
        return c.v

    check(in_loop, [(P,), ([[1.0, 1.0, 0.0]],), (N,)])
    check(in_branch, [(P,), (N,)])
