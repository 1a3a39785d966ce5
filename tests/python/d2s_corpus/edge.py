"""Converter edge cases: names bound in one branch, shadowing, nested functions,
lambdas, default and variadic arguments, print/assert on tensors, NumPy calls,
.item(), len(), isinstance, string formatting, exceptions, generators and
comprehensions, in-place writes, unusual statements.

Programs that read tensor values into Python on purpose (NumPy, .item(),
float(), formatting a value) cannot become one graph and say so
(expect_full_graph=False with the reason); default mode must still run them.
"""
import numpy as np

import oar
import oar.nn.functional as F

from .registry import add, arr, ints, kw, program, randn

E = ("edge",)
POS, NEG = arr([1.0, 2.0, 3.0]), arr([-1.0, -2.0, 0.5])

_VALUE = "reads a tensor value into Python"


@program("var_defined_in_one_branch", [POS, NEG], E)
def var_defined_in_one_branch(x):
    if x.mean() > 0:
        y = x + 1.0
        z = y * 2.0
    else:
        z = x
    return z


@program("var_defined_only_in_branch_used_inside", [POS, NEG], E)
def var_defined_only_in_branch_used_inside(x):
    out = x * 1.0
    if x.sum() > 0:
        tmp = oar.exp(-x)
        out = out + tmp
    return out


@program("shadowed_names_and_builtins", [POS, randn(2, 3)], E)
def shadowed_names_and_builtins(x):
    x = x + 1.0
    x = oar.tanh(x)
    sum = x.sum()  # noqa: A001  shadows the builtin on purpose
    max = x.max()  # noqa: A001
    return x * sum - max


@program("nested_function", [POS, randn(4)], E)
def nested_function(x):
    def inner(v, k=2.0):
        return v * k + 1.0

    return inner(inner(x), k=0.5)


@program("nested_function_with_tensor_if", [POS, NEG], E)
def nested_function_with_tensor_if(x):
    def pick(v):
        if v.sum() > 0:
            return v
        return -v

    return pick(x) + pick(x - 2.0)


@program("closure_modified_by_nonlocal", [POS, randn(3)], E)
def closure_modified_by_nonlocal(x):
    acc = x * 0.0

    def add_to(v):
        nonlocal acc
        acc = acc + v

    for k in range(3):
        add_to(x * float(k))
    return acc


@program("lambda_and_map", [POS, randn(2, 2)], E)
def lambda_and_map(x):
    fns = [lambda v: v * 2.0, lambda v: oar.sin(v), lambda v: v ** 2]
    return sum(map(lambda f: f(x), fns))


@program("default_args", [POS, kw(POS, scale=-1.0), kw(NEG, scale=3.0, shift=arr([1.0, 1.0, 1.0]))], E)
def default_args(x, scale=2.0, shift=None):
    y = x * scale
    if shift is not None:
        y = y + shift
    return y


@program("var_positional_args", [(POS,), (POS, NEG), (POS, NEG, POS, NEG)], E)
def var_positional_args(*xs):
    total = xs[0]
    for t in xs[1:]:
        total = total + t * 0.5
    return total


@program("var_keyword_args", [kw(POS), kw(POS, double=True), kw(NEG, offset=arr(3.0), double=False)], E)
def var_keyword_args(x, **opts):
    if opts.get("double", False):
        x = x * 2.0
    if "offset" in opts:
        x = x + opts["offset"]
    return x


@program("keyword_only_args", [kw(POS, mode="sum"), kw(POS, mode="mean"), kw(randn(2, 3), mode="max")], E)
def keyword_only_args(x, *, mode):
    return getattr(x, mode)()


@program("print_tensor", [POS, NEG], E)
def print_tensor(x):
    y = x * 2.0
    print("y =", y)
    return y + 1.0


@program("assert_on_tensor", [POS, arr([0.5, 0.25])], E)
def assert_on_tensor(x):
    assert (x > 0).all(), "inputs must be positive"
    return oar.log(x)


@program("assert_on_shape", [randn(2, 3), randn(4, 3)], E)
def assert_on_shape(x):
    assert x.shape[-1] == 3, f"expected 3 features, got {x.shape[-1]}"
    return x.sum(axis=-1)


@program("numpy_call_on_tensor", [POS, NEG], E, expect_full_graph=False,
         reason=f"{_VALUE} (x.numpy()) and computes with NumPy")
def numpy_call_on_tensor(x):
    v = np.sort(x.numpy())[::-1].copy()
    return oar.to_tensor(v) * 2.0


@program("item_in_python_if", [POS, NEG], E, expect_full_graph=False, reason=f"{_VALUE} (.item()) to branch")
def item_in_python_if(x):
    m = x.max().item()
    if m > 1.0:
        return x / m
    return x


@program("float_of_tensor_in_math", [POS, arr([4.0, 0.5, 0.1])], E, expect_full_graph=False,
         reason=f"{_VALUE} (float()) for math.sqrt")
def float_of_tensor_in_math(x):
    import math

    return x * math.sqrt(float(x.sum()))


@program("int_of_tensor_as_shape", [arr(2, "int64"), arr(5, "int64")], E, expect_full_graph=False,
         reason=f"{_VALUE} (int()) and makes it an output shape")
def int_of_tensor_as_shape(n):
    return oar.ones([int(n), 2]) * 3.0


@program("tolist_and_python_sum", [POS, NEG], E, expect_full_graph=False, reason=f"{_VALUE} (.tolist())")
def tolist_and_python_sum(x):
    vals = x.tolist()
    return x * (sum(v for v in vals if v > 0) + 1.0)


@program("len_of_tensor", [randn(3, 2), randn(5, 2)], E)
def len_of_tensor(x):
    return x * float(len(x))


@program("isinstance_checks", [POS, (POS, arr(2.0)), (POS, 3.0)], E)
def isinstance_checks(x, w=None):
    if isinstance(w, oar.Tensor):
        return x * w
    if isinstance(w, float):
        return x + w
    return x


@program("string_formatting_keys", [randn(2, 2), randn(3, 2)], E)
def string_formatting_keys(x):
    parts = {f"row_{i:02d}": x[i] for i in range(x.shape[0])}
    name = "shape={}x{}".format(*x.shape)
    return oar.stack([parts[k] for k in sorted(parts)]) * float(len(name))


@program("fstring_of_tensor_value", [POS, NEG], E, expect_full_graph=False,
         reason=f"{_VALUE}: formats the value into a string")
def fstring_of_tensor_value(x):
    label = f"{x.sum().item():.1f}"
    return x * float(len(label))


@program("exception_caught_shape_error", [randn(2, 3), randn(7, 7)], E)
def exception_caught_shape_error(x):
    try:
        y = x.reshape([7, 7])
    except ValueError:
        y = x.flatten()
    return y * 2.0


@program("raise_on_tensor_condition_caught", [POS, NEG], E, expect_full_graph=False,
         reason="raises from a branch taken on a tensor value: a graph has no exceptions")
def raise_on_tensor_condition_caught(x):
    try:
        if x.min() < 0:
            raise ValueError("negative input")
        return oar.sqrt(x)
    except ValueError:
        return x.abs()


@program("try_finally", [POS, NEG], E)
def try_finally(x):
    log = []
    try:
        y = x * 3.0
    finally:
        log.append("done")
    return y + float(len(log))


@program("generator_expression_sum", [(POS, NEG), (randn(3), randn(3))], E)
def generator_expression_sum(a, b):
    return sum(u * v for u, v in zip(oar.unbind(a), oar.unbind(b)))


@program("list_comprehension_rows", [randn(3, 2), randn(2, 2)], E)
def list_comprehension_rows(x):
    return oar.stack([oar.tanh(x[i]) * i for i in range(x.shape[0])])


@program("comprehension_tensor_filter", [randn(4, 2), randn(3, 2, scale=3.0)], E, expect_full_graph=False,
         reason="a comprehension keeps a data-dependent number of tensors in a Python list")
def comprehension_tensor_filter(x):
    kept = [r for r in x if r.sum() > 0]
    return oar.stack(kept) if kept else oar.zeros([0, 2])


@program("generator_function", [randn(3), randn(5)], E)
def generator_function(x):
    def powers(v, n):
        p = v
        for _ in range(n):
            yield p
            p = p * v

    return oar.stack(list(powers(x, 3)))


@program("dict_comprehension_and_items", [randn(2), randn(4)], E)
def dict_comprehension_and_items(x):
    d = {k: x * k for k in (1.0, 2.0, 3.0)}
    return sum(v / k for k, v in d.items())


@program("inplace_setitem_and_add_", [randn(3, 3), randn(4, 3)], E)
def inplace_setitem_and_add_(x):
    y = x.clone()
    y[0] = 5.0
    y[:, 1] = y[:, 1] * 2.0
    y.add_(oar.ones_like(y))
    return y


@program("tensor_index_with_tensor", [(randn(5), arr(1, "int64")), (randn(5), arr(4, "int64"))], E)
def tensor_index_with_tensor(x, i):
    return x[i] * 2.0 + x.sum()


@program("star_unpacking", [randn(6), randn(9)], E)
def star_unpacking(x):
    first, *rest = oar.split(x, 3)
    return first * 2.0 + sum(rest)


@program("walrus_on_tensor", [POS, NEG], E)
def walrus_on_tensor(x):
    if (s := x.sum()) > 0:
        return x / s
    return x * s


@program("match_statement_python_value", [(POS, "double"), (POS, "neg"), (POS, "other")], E)
def match_statement_python_value(x, op):
    match op:
        case "double":
            return x * 2.0
        case "neg":
            return -x
        case _:
            return x


@program("del_and_rebind", [POS, NEG], E)
def del_and_rebind(x):
    tmp = x * 2.0
    y = tmp + 1.0
    del tmp
    tmp = y * 0.5
    return tmp


@program("with_no_grad_block", [POS, NEG], E)
def with_no_grad_block(x):
    with oar.no_grad():
        y = x * 2.0
    return y + 1.0


@program("decorated_inner_function", [POS, NEG], E)
def decorated_inner_function(x):
    import functools

    def twice(fn):
        @functools.wraps(fn)
        def w(v):
            return fn(fn(v))

        return w

    @twice
    def step(v):
        return v * 0.5 + 1.0

    return step(x)


@program("helper_class_instance", [POS, randn(2)], E)
def helper_class_instance(x):
    class Affine:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def __call__(self, v):
            return v * self.a + self.b

    return Affine(2.0, -1.0)(x)


@program("optional_tensor_is_none", [(POS, None), (POS, NEG)], E)
def optional_tensor_is_none(x, mask=None):
    if mask is None:
        return x
    return x * (mask > 0).astype("float32")


@program("python_bool_flag", [(POS, True), (POS, False)], E)
def python_bool_flag(x, flag):
    return F.relu(x) if flag else F.sigmoid(x)


@program("python_max_of_tensors", [(POS, NEG), (NEG, POS)], E, expect_full_graph=False,
         reason="the builtin max() compares tensor values in Python")
def python_max_of_tensors(a, b):
    return max(a.sum(), b.sum()) * a


@program("range_with_negative_step", [randn(5), randn(4)], E)
def range_with_negative_step(x):
    acc = oar.zeros([])
    for i in range(x.shape[0] - 1, -1, -2):
        acc = acc * 2.0 + x[i]
    return acc


@program("int_tensor_arithmetic_exact", [ints(4, hi=100), ints(6, hi=1000)], E)
def int_tensor_arithmetic_exact(x):
    return (x * 7 + 3) // 5 % 11, (x > 50).astype("int32").sum()


@program("bool_tensor_outputs", [POS, NEG], E)
def bool_tensor_outputs(x):
    return x > 0, oar.logical_not(x > 1.0), (x > 0).any()


@program("empty_tensor_reduction", [arr(np.zeros([0, 3])), randn(2, 3)], E)
def empty_tensor_reduction(x):
    return x.sum(axis=0), x.shape[0] * oar.ones([1])


@program("while_python_counter_and_tensor", [arr([100.0]), arr([0.5])], E)
def while_python_counter_and_tensor(x):
    n = 0
    while n < 10 and x.sum() > 1.0:
        x = x * 0.5
        n += 1
    return x


def global_statement_counter(x):
    global _EDGE_CALLS
    _EDGE_CALLS += 1
    return x * float(_EDGE_CALLS)


def _reset_global_counter():
    # Every mode starts counting from zero, as a fresh process would.
    global _EDGE_CALLS
    _EDGE_CALLS = 0
    return global_statement_counter


_EDGE_CALLS = 0
add("global_statement_counter", factory=_reset_global_counter, inputs=[POS, POS, NEG], tags=E, expect_full_graph=False,
    reason="the output depends on a global that every call changes: one captured program cannot follow it")


@program("tensor_method_chain_dtype", [ints(3, 2, hi=5, dtype="int32"), ints(2, 2, hi=5, dtype="int32")], E)
def tensor_method_chain_dtype(x):
    return x.astype("float32").mean(axis=0).astype("float64") * 0.5
