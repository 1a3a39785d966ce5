"""Data-dependent control flow: if/elif/else on tensor reductions, while loops to
convergence, for over range(tensor), break/continue, early return, nested
loops, ternaries and and/or/not on tensor conditions.

The input sets of each program are chosen so that they take different
branches or run different iteration counts: a converted program that fixed the
branch or the count of its first input gives a wrong result on the others.
"""
import numpy as np

import oar
import oar.nn.functional as F

from .registry import arr, kw, program, randn

T = ("control_flow",)
POS, NEG = arr([[1.0, 2.0], [0.5, 3.0]]), arr([[-1.0, -2.0], [0.5, -3.0]])


@program("if_sum_positive", [POS, NEG, arr([[0.0, 1.0], [-2.0, 0.5]])], T)
def if_sum_positive(x):
    if x.sum() > 0:
        return x * 2.0
    return x - 1.0


@program("if_else_assign", [POS, NEG], T)
def if_else_assign(x):
    if x.mean() > 0:
        y = F.relu(x) + 1.0
    else:
        y = oar.tanh(x) - 1.0
    return y * 3.0


@program("if_elif_else_mean", [arr([5.0, 6.0]), arr([0.2, 0.3]), arr([-4.0, -1.0])], T)
def if_elif_else_mean(x):
    m = x.mean()
    if m > 1.0:
        out = x / m
    elif m > 0.0:
        out = x * 10.0
    else:
        out = -x
    return out


@program("if_max_abs_normalize", [arr([0.1, -0.5, 0.2]), arr([3.0, -7.0, 1.0])], T)
def if_max_abs_normalize(x):
    peak = x.abs().max()
    if peak > 1.0:
        x = x / peak
    return x


@program("nested_if", [arr([1.0, 2.0]), arr([1.0, -5.0]), arr([-1.0, -2.0]), arr([-1.0, 4.0])], T)
def nested_if(x):
    if x[0] > 0:
        if x[1] > 0:
            return x + 1.0
        return x - 1.0
    else:
        if x[1] > 0:
            return x * 2.0
        return x * -2.0


@program("if_any", [arr([1.0, 2.5, 3.0]), arr([0.0, 1.0, 1.5])], T)
def if_any(x):
    if (x > 2.0).any():
        x = oar.clip(x, max=2.0)
    return x * 1.5


@program("if_all", [arr([1.0, 2.0]), arr([1.0, -2.0])], T)
def if_all(x):
    if (x > 0).all():
        return oar.log(x)
    return oar.exp(x)


@program("if_compare_two_inputs", [(arr([1.0, 2.0]), arr([0.0, 0.5])), (arr([0.0, 0.5]), arr([1.0, 2.0]))], T)
def if_compare_two_inputs(x, y):
    if x.mean() > y.mean():
        return x - y
    return y * 2.0 - x


@program("if_scalar_tensor_truth", [arr(1.0), arr(0.0)], T)
def if_scalar_tensor_truth(flag):
    base = oar.ones([3])
    if flag:
        return base * 5.0
    return base


@program("ternary_mean", [POS, NEG], T)
def ternary_mean(x):
    y = x * 2.0 if x.mean() > 0 else x * -0.5
    return y + 1.0


@program("ternary_nested", [arr([3.0]), arr([0.5]), arr([-2.0])], T)
def ternary_nested(x):
    return x * 3.0 if x.sum() > 1 else (x + 10.0 if x.sum() > 0 else x - 10.0)


@program("and_condition", [(arr([1.0]), arr([2.0])), (arr([1.0]), arr([-2.0])), (arr([-1.0]), arr([2.0]))], T)
def and_condition(x, y):
    if x.sum() > 0 and y.sum() > 0:
        return x + y
    return x - y


@program("or_condition", [arr([5.0, 0.0]), arr([0.0, -5.0]), arr([0.5, 0.5])], T)
def or_condition(x):
    if x.max() > 3.0 or x.min() < -3.0:
        return oar.clip(x, -3.0, 3.0) * 0.1
    return x


@program("not_condition", [arr([1.0, 2.0]), arr([1.0, -2.0])], T)
def not_condition(x):
    if not (x > 0).all():
        x = F.relu(x)
    return x + 0.5


@program("chained_comparison", [arr([0.5]), arr([2.0]), arr([-1.0])], T)
def chained_comparison(x):
    if 0.0 < x.mean() < 1.0:
        return x * 100.0
    return x


@program("bool_ops_mixed_python", [kw(arr([1.0, 1.0]), strict=True), kw(arr([1.0, 1.0]), strict=False),
                                   kw(arr([-1.0, 1.0]), strict=False)], T)
def bool_ops_mixed_python(x, strict):
    # A Python bool short-circuits before the tensor condition is evaluated.
    if strict or x.min() > 0:
        return x * 2.0
    return x


@program("if_static_shape", [randn(2, 3), randn(4, 3)], T)
def if_static_shape(x):
    if x.shape[0] > 2:  # a Python condition on a static dim: a new trace per shape
        return x[:2] * 2.0
    return x + 1.0


@program("if_ndim", [randn(3), randn(2, 3)], T)
def if_ndim(x):
    if x.ndim == 2:
        return x.sum(axis=1)
    return x * 2.0


@program("while_newton_sqrt", [arr([4.0, 9.0]), arr([100.0, 2.0]), arr([1e4, 0.25])], T)
def while_newton_sqrt(a):
    y = oar.ones_like(a)
    steps = oar.zeros([], "int64")
    while (y * y - a).abs().max() > 1e-3 * a.max():
        y = 0.5 * (y + a / y)
        steps = steps + 1
    return y, steps


@program("while_power_iteration", [arr([[2.0, 1.0], [1.0, 3.0]]), arr([[10.0, 0.0], [0.0, 1.0]]),
                                   arr([[1.0, 0.9], [0.9, 1.0]])], T)
def while_power_iteration(m):
    v = oar.ones([2, 1]) / np.sqrt(2.0)
    diff = oar.ones([])
    i = oar.zeros([], "int64")
    while diff > 1e-5 and i < 200:
        w = oar.matmul(m, v)
        w = w / oar.norm(w)
        diff = (w - v).abs().max()
        v = w
        i = i + 1
    return v, i


@program("while_halving", [arr([3.0, 100.0]), arr([0.5, 0.7]), arr([1e6, 1.0])], T)
def while_halving(x):
    count = oar.zeros([], "int64")
    while x.max() > 1.0:
        x = x / 2.0
        count += 1
    return x, count


@program("while_counter_tensor_bound", [arr(3, "int64"), arr(0, "int64"), arr(7, "int64")], T)
def while_counter_tensor_bound(n):
    i = oar.zeros([], "int64")
    acc = oar.zeros([], "float32")
    while i < n:
        acc = acc + i.astype("float32") ** 2
        i = i + 1
    return acc


@program("while_two_carried", [arr(10.0), arr(1.0), arr(50.0)], T)
def while_two_carried(budget):
    spent = oar.zeros([])
    cost = oar.ones([])
    while spent + cost <= budget:
        spent = spent + cost
        cost = cost * 1.5
    return spent, cost


@program("collatz_steps", [arr(6, "int64"), arr(7, "int64"), arr(1, "int64")], T)
def collatz_steps(n):
    steps = oar.zeros([], "int64")
    while n != 1:
        n = oar.where(n % 2 == 0, n // 2, 3 * n + 1)
        steps = steps + 1
    return steps


@program("gcd_euclid", [(arr(48, "int64"), arr(18, "int64")), (arr(17, "int64"), arr(5, "int64")),
                        (arr(9, "int64"), arr(0, "int64"))], T)
def gcd_euclid(a, b):
    while b != 0:
        a, b = b, a % b
    return a


@program("bisection_root", [arr(2.0), arr(10.0), arr(0.5)], T)
def bisection_root(c):
    # Root of t^3 - c on [0, max(c, 1)]; the iteration count depends on the bracket width.
    lo = oar.zeros([])
    hi = oar.maximum(c, oar.ones([]))
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2.0
        if mid ** 3 > c:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2.0


@program("gradient_descent_converge", [arr([3.0, -2.0]), arr([0.01, 0.02]), arr([50.0, 50.0])], T)
def gradient_descent_converge(x):
    # Minimises |x - 1|^2 with a fixed step until the gradient is small.
    target = oar.ones_like(x)
    grad = 2.0 * (x - target)
    while oar.norm(grad) > 1e-3:
        x = x - 0.1 * grad
        grad = 2.0 * (x - target)
    return x


@program("for_range_tensor", [(randn(3), arr(4, "int64")), (randn(3), arr(1, "int64")), (randn(3), arr(0, "int64"))],
         T)
def for_range_tensor(x, n):
    acc = oar.zeros_like(x)
    for i in range(n):
        acc = (acc + x) * 1.1
    return acc


@program("for_range_tensor_cumulative", [(randn(2), arr(3, "int64")), (randn(2), arr(6, "int64"))], T)
def for_range_tensor_cumulative(x, n):
    for _ in range(n):
        x = oar.tanh(x) + 0.5
    return x


@program("for_range_static", [randn(2, 3), randn(5, 3)], T)
def for_range_static(x):
    acc = oar.zeros([3])
    for i in range(x.shape[0]):
        acc = acc + x[i] * float(i)
    return acc


@program("for_break_on_tensor", [arr([0.1, 0.2]), arr([3.0, 4.0]), arr([-1.0, -1.0])], T)
def for_break_on_tensor(x):
    for _ in range(10):
        x = x * 1.5 + 0.1
        if x.sum() > 10.0:
            break
    return x


@program("for_continue_on_tensor", [arr([1.0, -2.0, 3.0, -4.0]), arr([-1.0, -1.0, -1.0, -1.0]),
                                    arr([1.0, 2.0, 3.0, 4.0])], T)
def for_continue_on_tensor(x):
    acc = oar.zeros([])
    for i in range(4):
        if x[i] < 0:
            continue
        acc = acc + x[i] * x[i]
    return acc


@program("for_else_break", [arr([1.0, 2.0, 3.0]), arr([1.0, 9.0, 3.0])], T)
def for_else_break(x):
    found = x * 0.0
    for i in range(3):
        if x[i] > 5.0:
            found = found + float(i)
            break
    else:
        found = found - 1.0
    return found


@program("early_return", [POS, NEG], T)
def early_return(x):
    if x.sum() < 0:
        return -x
    y = x * 2.0
    return y + 1.0


@program("early_return_in_loop", [arr([5.0, 6.0]), arr([1.5, 9.0]), arr([20.0, 30.0])], T)
def early_return_in_loop(x):
    for _ in range(8):
        x = x - 1.0
        if x.min() < 0:
            return x * 100.0
    return x


@program("while_true_break", [arr(1.0), arr(40.0), arr(200.0)], T)
def while_true_break(x):
    while True:
        x = x * 2.0
        if x > 100.0:
            break
    return x


@program("while_with_continue", [arr(5, "int64"), arr(8, "int64"), arr(0, "int64")], T)
def while_with_continue(n):
    i = oar.zeros([], "int64")
    evens = oar.zeros([], "int64")
    while i < n:
        i = i + 1
        if i % 2 == 1:
            continue
        evens = evens + i
    return evens


@program("nested_loops_tensor_break", [randn(3, 4), randn(3, 4, scale=5.0)], T)
def nested_loops_tensor_break(x):
    total = oar.zeros([])
    for i in range(3):
        for j in range(4):
            if x[i, j] > 1.0:
                break
            total = total + x[i, j]
    return total


@program("nested_while_for", [arr(2, "int64"), arr(4, "int64")], T)
def nested_while_for(n):
    i = oar.zeros([], "int64")
    acc = oar.zeros([])
    while i < n:
        for k in range(3):
            acc = acc + (i * k).astype("float32")
        i = i + 1
    return acc


@program("if_inside_while", [arr([10.0, -10.0]), arr([0.5, 0.5])], T)
def if_inside_while(x):
    it = oar.zeros([], "int64")
    while x.abs().max() > 1.0 and it < 50:
        if x.sum() > 0:
            x = x * 0.5
        else:
            x = x * 0.8 + 0.1
        it = it + 1
    return x, it


@program("clamp_loop_python_range", [arr([8.0, 1.0]), arr([0.1, 0.2])], T)
def clamp_loop_python_range(x):
    for _ in range(5):
        if x.max() > 1.0:
            x = x * 0.5
    return x


@program("if_argmax_chain", [arr([3.0, 1.0, 0.0]), arr([0.0, 5.0, 1.0]), arr([0.0, 1.0, 9.0])], T)
def if_argmax_chain(x):
    idx = x.argmax()
    if idx == 0:
        return x * 10.0
    elif idx == 1:
        return x + 100.0
    else:
        return -x


@program("loop_over_tensor_rows", [randn(3, 2), randn(5, 2)], T)
def loop_over_tensor_rows(x):
    acc = oar.zeros([2])
    for row in x:
        acc = acc + row * row.sum()
    return acc


@program("enumerate_tensor_rows", [randn(3, 2), randn(2, 2)], T)
def enumerate_tensor_rows(x):
    acc = oar.zeros([2])
    for i, row in enumerate(x):
        acc = acc + row * float(i)
    return acc


@program("augmented_assign_in_branch", [POS, NEG], T)
def augmented_assign_in_branch(x):
    y = x * 1.0
    if y.sum() > 0:
        y += 1.0
        y *= 2.0
    else:
        y -= 1.0
    return y


@program("where_instead_of_if", [POS, NEG], T)
def where_instead_of_if(x):
    return oar.where(x > 0, x * 2.0, x * 0.1)


@program("cond_api", [POS, NEG], T)
def cond_api(x):
    return oar.static.nn.cond(x.sum() > 0, lambda: x * 2.0, lambda: x - 1.0)


@program("while_loop_api", [arr(3.0), arr(50.0)], T)
def while_loop_api(x):
    i = oar.zeros([], "int64")
    i, x = oar.static.nn.while_loop(lambda i, v: v < 100.0, lambda i, v: [i + 1, v * 3.0], [i, x])
    return i, x


@program("switch_case_api", [arr(0, "int64"), arr(1, "int64"), arr(2, "int64")], T)
def switch_case_api(k):
    x = oar.ones([2])
    return oar.static.nn.switch_case(k, [lambda: x * 1.0, lambda: x * 2.0, lambda: x * 3.0])


@program("loop_tensor_max_bound", [arr([2.5, 0.0]), arr([6.2, 1.0])], T)
def loop_tensor_max_bound(x):
    i = 0.0
    acc = oar.zeros([])
    while i < x.max():  # a Python float compared with a tensor: the loop is tensor-driven
        acc = acc + i
        i = i + 1.0
    return acc


@program("if_returns_different_dtypes_cast", [POS, NEG], T)
def if_returns_different_dtypes_cast(x):
    if x.sum() > 0:
        y = (x > 1.0).astype("float32")
    else:
        y = x.floor()
    return y
