"""to_static with nested inputs and outputs: lists, tuples, named tuples, dicts and dataclasses of
tensors, with Python values among them; the same through oar.jit.save / oar.jit.load."""
import collections
import dataclasses
import json

import numpy as np
import pytest

import oar
from oar.static import InputSpec

Pair = collections.namedtuple("Pair", "a b")


@dataclasses.dataclass
class Out:
    y: object
    extra: object
    tag: str = "out"


@dataclasses.dataclass(frozen=True)
class Frozen:
    x: object
    n: int


def _same(a, b):
    """Leaf-by-leaf equality of two nested results, tensors against their eager values."""
    if isinstance(a, oar.Tensor):
        assert isinstance(b, oar.Tensor)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    elif dataclasses.is_dataclass(a):
        assert type(a) is type(b)
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name))
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b and type(a) is type(b)


def test_nested_inputs_and_outputs_match_eager():
    def f(p, d, fr):
        return {"sum": p.a + p.b, "list": [d["k"] * 2.0, None, 3],
                "out": Out(p.a * d["k"], (p.b - fr.x,)), "pair": Pair(fr.x * fr.n, "s")}

    sf = oar.jit.to_static(f, full_graph=True)
    for s in (1.0, 2.0, -3.0):
        args = (Pair(oar.full([2], s), oar.ones([2])), {"k": oar.full([2], 3.0)}, Frozen(oar.full([2], s * s), 2))
        _same(sf(*args), f(*args))
    assert len(sf.program_cache) == 1  # the tensors are inputs, not constants baked into the program
    # A different Python value in a record is a different signature.
    sf(Pair(oar.ones([2]), oar.ones([2])), {"k": oar.ones([2])}, Frozen(oar.ones([2]), 5))
    assert len(sf.program_cache) == 2


def test_gradients_flow_through_nested_outputs():
    lin = oar.nn.Linear(3, 2)

    def f(x):
        h = lin(x)
        return Out(h, {"sq": (h * h,)})

    sf = oar.jit.to_static(f, full_graph=True)
    x = oar.randn([4, 3])
    out = sf(x)
    (out.y.sum() + out.extra["sq"][0].sum()).backward()
    got = lin.weight.grad.numpy().copy()
    lin.clear_gradients()
    e = f(x)
    (e.y.sum() + e.extra["sq"][0].sum()).backward()
    np.testing.assert_allclose(got, lin.weight.grad.numpy(), rtol=1e-5)


class _Net(oar.nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin = oar.nn.Linear(2, 2)

    def forward(self, x):
        return {"y": self.lin(x), "pair": (x * 2.0, 7, None), "rec": Out(x + 1.0, [x])}


def test_jit_save_load_nested_outputs(tmp_path):
    net = _Net()
    path = str(tmp_path / "net")
    oar.jit.save(net, path, input_spec=[InputSpec([None, 2])])
    loaded = oar.jit.load(path)
    x = oar.randn([3, 2])
    got, want = loaded(x), net(x)
    # Loading never imports user classes: a dataclass comes back as a dict of its fields.
    assert got["pair"][1:] == (7, None)
    np.testing.assert_allclose(got["y"].numpy(), want["y"].numpy(), rtol=1e-6)
    np.testing.assert_allclose(got["rec"]["y"].numpy(), want["rec"].y.numpy())
    np.testing.assert_allclose(got["rec"]["extra"][0].numpy(), x.numpy())
    assert got["rec"]["tag"] == "out"


def test_jit_save_refuses_outputs_it_cannot_write(tmp_path):
    f = oar.jit.to_static(lambda x: (x * 2.0, np.float64(1.5).tobytes()), full_graph=True)
    with pytest.raises(TypeError, match=r"\[oar.jit.save\] the function returns a bytes"):
        oar.jit.save(f, str(tmp_path / "f"), input_spec=[InputSpec([2])])


def test_jit_load_rejects_a_malformed_output_tree(tmp_path):
    net = _Net()
    path = str(tmp_path / "net")
    oar.jit.save(net, path, input_spec=[InputSpec([None, 2])])
    doc = json.loads(open(path + ".json").read())
    assert doc["meta"]["output_kind"] == "nested"
    doc["meta"]["output_tree"]["dict"][0][1] = {"list": ["tensor", "tensor"]}  # one tensor too many
    open(path + ".json", "w").write(json.dumps(doc))
    with pytest.raises(ValueError, match=r"\[oar.jit.load\] .*output_tree.* places 5 tensors but the program has 4 outputs"):
        oar.jit.load(path)
    doc["meta"]["output_tree"] = {"set": []}
    open(path + ".json", "w").write(json.dumps(doc))
    with pytest.raises(ValueError, match=r"\[oar.jit.load\] .*malformed output layout"):
        oar.jit.load(path)
