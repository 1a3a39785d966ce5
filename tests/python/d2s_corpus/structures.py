"""Recursive and structured programs: recursion on a Python depth, tree-shaped
nets, nested list/dict inputs and outputs, dataclass and namedtuple outputs.
"""
import collections
import dataclasses

import oar
import oar.nn as nn
import oar.nn.functional as F

from .registry import add, arr, kw, randn, seeded

S = ("structure",)


def recursive_tree_sum(x, depth):
    """A full binary recursion of the given Python depth."""
    if depth == 0:
        return x
    return recursive_tree_sum(x * 0.5, depth - 1) + recursive_tree_sum(oar.sin(x), depth - 1)


add("recursive_python_depth", recursive_tree_sum, [(randn(3), 2), (randn(3), 4), (randn(3), 0)], S)


def recursive_on_tensor(x):
    """Recursion that ends on a tensor condition: its depth depends on the data."""
    if x.abs().max() < 1.0:
        return x
    return recursive_on_tensor(x / 3.0) + 1.0


add("recursive_tensor_condition", recursive_on_tensor, [arr([0.5]), arr([30.0]), arr([1e4, 2.0])], S,
    expect_full_graph=False, reason="the recursion depth depends on tensor values: a static graph cannot "
                                    "hold an unbounded recursion")


class TreeNet(nn.Layer):
    """A balanced tree of shared cells combining pairs of leaves up to the root."""

    def __init__(self):
        super().__init__()
        self.combine = nn.Linear(8, 4)

    def forward(self, leaves):
        level = list(oar.unbind(leaves, axis=0))
        while len(level) > 1:
            nxt = []
            for i in range(0, len(level) - 1, 2):
                nxt.append(oar.tanh(self.combine(oar.concat([level[i], level[i + 1]]))))
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0]


add("tree_net_pairwise_reduce", seeded(TreeNet), [randn(4, 4), randn(5, 4), randn(1, 4)], S)


class TreeLSTMish(nn.Layer):
    """A recursive net over a tree given as nested Python tuples of leaf indices."""

    def __init__(self):
        super().__init__()
        self.leaf = nn.Linear(3, 6)
        self.node = nn.Linear(12, 6)

    def forward(self, x, tree):
        def visit(t):
            if isinstance(t, int):
                return oar.tanh(self.leaf(x[t]))
            left, right = visit(t[0]), visit(t[1])
            return oar.tanh(self.node(oar.concat([left, right])))

        return visit(tree)


add("tree_structured_python_tuple", seeded(TreeLSTMish),
    [(randn(4, 3), ((0, 1), (2, 3))), (randn(4, 3), (0, (1, (2, 3)))), (randn(2, 3), (1, 0))], S)


def nested_dict_input(batch):
    return batch["x"] * batch["scale"][0] + batch["offsets"][1]


add("nested_dict_input", nested_dict_input,
    [{"x": randn(3), "scale": [arr(2.0), arr(3.0)], "offsets": (randn(3), randn(3))},
     {"x": randn(3), "scale": [arr(-1.0), arr(0.0)], "offsets": (randn(3), randn(3))}], S)


def dict_output(x):
    return {"double": x * 2.0, "stats": {"mean": x.mean(), "max": x.max()}}


add("nested_dict_output", dict_output, [randn(4), randn(2, 3)], S)


def list_output(x, n):
    return [x * float(i) for i in range(n)]


add("list_output_python_len", list_output, [(randn(2), 3), (randn(2), 1)], S)


def tuple_of_tuples(x, y):
    return (x + y, (x - y, (x * y,)))


add("nested_tuple_output", tuple_of_tuples, [(randn(2), randn(2)), (randn(3, 2), randn(2))], S)


@dataclasses.dataclass
class Prediction:
    logits: object
    probs: object
    label: object


class DataclassHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        logits = self.fc(x)
        return Prediction(logits, F.softmax(logits, axis=-1), logits.argmax(axis=-1))


add("dataclass_output", seeded(DataclassHead), [randn(2, 4), randn(5, 4)], S)

Stats = collections.namedtuple("Stats", ["mean", "var"])


def namedtuple_output(x):
    m = x.mean(axis=0)
    return Stats(m, ((x - m) ** 2).mean(axis=0))


add("namedtuple_output", namedtuple_output, [randn(4, 2), randn(3, 2)], S)


def list_of_tensors_input(xs):
    acc = xs[0]
    for t in xs[1:]:
        acc = acc * 0.5 + t
    return acc


add("list_of_tensors_input_varlen", list_of_tensors_input,
    [[randn(3), randn(3)], [randn(3), randn(3), randn(3), randn(3)]], S)


def dict_of_lists_output(x):
    parts = oar.split(x, 2, axis=0)
    return {"parts": list(parts), "sums": [p.sum() for p in parts]}


add("dict_of_lists_output", dict_of_lists_output, [randn(4, 2), randn(2, 3)], S)


def output_with_none(x, with_aux=False):
    aux = x.abs().sum() if with_aux else None
    return x * 2.0, aux


add("output_with_none_leaf", output_with_none, [randn(3), kw(randn(3), with_aux=True)], S)


def output_with_python_number(x):
    return x * 2.0, x.shape[0], "rows"


add("output_with_python_values", output_with_python_number, [randn(3), randn(5)], S)


def dict_input_keys_loop(feats):
    """Iterates over a dict of tensors in key order."""
    total = None
    for name in sorted(feats):
        v = feats[name].mean()
        total = v if total is None else total + v * len(name)
    return total


add("dict_input_iterate_keys", dict_input_keys_loop,
    [{"a": randn(2), "bb": randn(3)}, {"a": randn(2), "bb": randn(3), "ccc": randn(1)}], S)


class NestedStateRNN(nn.Layer):
    """A state passed in and out as a dict of (h, c) tuples per layer."""

    def __init__(self):
        super().__init__()
        self.cells = nn.LayerList([nn.LSTMCell(3, 3) for _ in range(2)])

    def forward(self, x, state):
        new = {}
        for i, cell in enumerate(self.cells):
            x, (h, c) = cell(x, state[f"layer{i}"])
            new[f"layer{i}"] = (h, c)
        return x, new


_STATE = {"layer0": (randn(1, 3), randn(1, 3)), "layer1": (randn(1, 3), randn(1, 3))}
add("nested_dict_state_in_out", seeded(NestedStateRNN), [(randn(1, 3), _STATE), (randn(1, 3), {
    "layer0": (randn(1, 3), randn(1, 3)), "layer1": (randn(1, 3), randn(1, 3))})], S + ("rnn",))


def mutual_recursion_even(x, n):
    if n == 0:
        return x
    return mutual_recursion_odd(x + 1.0, n - 1)


def mutual_recursion_odd(x, n):
    if n == 0:
        return -x
    return mutual_recursion_even(x * 2.0, n - 1)


add("mutual_recursion_python_int", mutual_recursion_even, [(randn(2), 3), (randn(2), 4)], S)
