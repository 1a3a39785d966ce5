"""Every op in the C++ registry is checked somewhere: by an op-database entry
(opdb.py and opdb_*.py, run by test_opdb.py) or, where NumPy equality is not the
right check, by the test file named in EXEMPT.

An op is covered by an entry of the same name (`relu` by `nn.functional.relu`,
`linalg_svd` by `linalg.svd`) or by the entries COVERED_BY lists for it. Each
claim is checked: the entry, traced into a program together with its gradients
(and second gradients where the entry checks them), must contain the op. A new op
with neither an entry nor an exemption fails here by name, and so does a table
row whose op is no longer registered.
"""
import pathlib
import re

import numpy as np
import pytest

import oar
from oar import _ir
from opdb import OP_DB, to_oar

TESTS = pathlib.Path(__file__).parent

# Ops that run inside a public function of another name (a fused kernel, a gradient rule, a helper).
COVERED_BY = {
    "conv": ["nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.conv3d"],
    "conv_transpose": ["nn.functional.conv1d_transpose", "nn.functional.conv2d_transpose",
                       "nn.functional.conv3d_transpose"],
    # the weight gradient of convolution and of transposed convolution
    "conv_grad_weight": ["nn.functional.conv2d", "nn.functional.conv2d_transpose"],
    "softmax_cross_entropy": ["nn.functional.cross_entropy"],
    "max_pool": ["nn.functional.max_pool1d", "nn.functional.max_pool2d", "nn.functional.max_pool3d",
                 "nn.functional.max_pool2d_mask"],
    "avg_pool": ["nn.functional.avg_pool1d", "nn.functional.avg_pool2d", "nn.functional.avg_pool3d"],
    # the second derivative of max pooling gathers through the saved mask
    "max_pool_gather": ["nn.functional.max_pool2d"],
    # unique along an axis
    "unique_rows": ["unique", "unique_index", "unique_inverse", "unique_counts"],
    "median_index": ["median", "median_min"],
    # median picks its middle elements; the gradients of cummax/cummin/median scatter back
    "pick_along_axis": ["median", "median_min"],
    "put_add_along_axis": ["cummax", "cummin", "median"],
    # the three shapes of discrete Fourier transform behind oar.fft
    "fft_c2c": ["fft.fftn_complex"],
    "fft_r2c": ["fft.rfft", "fft.ihfft", "fft.rfft2", "fft.ihfft2", "fft.rfftn", "fft.ihfftn"],
    "fft_c2r": ["fft.irfft", "fft.hfft", "fft.irfft2", "fft.hfft2", "fft.irfftn", "fft.hfftn"],
}

# Ops whose results are not fixed NumPy values (random draws, in-place optimiser updates, control flow,
# distributed tensors, fused kernels made by IR passes): the reason, and (file, text) pairs showing the
# file that checks the op and what in it reaches the op.
_OPT = "an in-place optimiser update, checked step by step against NumPy by the optimiser's test"
_MERGED = "a multi-tensor optimiser update, checked bit for bit against the per-parameter op and against NumPy"
_RAND = "a random draw, checked statistically (moments, ranges, seeds), not for NumPy-equal values"
_FLOW = "control flow over sub-programs, checked by running the branches and loops it records"
_DIST = "a distributed-tensor op, checked by running ranks that compare their shards with NumPy"
_FUSED = "a kernel the fusion passes create, checked against the composite it replaces"
EXEMPT = {
    "sgd_": (_OPT, [("test_optimizer.py", "SGD(")]),
    "momentum_": (_OPT, [("test_optimizer.py", "Momentum(")]),
    "adam_": (_OPT, [("test_optimizer.py", "Adam(")]),
    "adamax_": (_OPT, [("test_optimizer.py", "Adamax(")]),
    "adagrad_": (_OPT, [("test_optimizer.py", "Adagrad(")]),
    "adadelta_": (_OPT, [("test_optimizer.py", "Adadelta(")]),
    "rmsprop_": (_OPT, [("test_optimizer.py", "RMSProp(")]),
    "lamb_": (_OPT, [("test_optimizer.py", "Lamb(")]),
    "nadam_": (_OPT, [("test_optimizer.py", "NAdam(")]),
    "radam_": (_OPT, [("test_optimizer.py", "RAdam(")]),
    "merged_sgd_": (_MERGED, [("test_optimizer_multi_tensor.py", "optim.SGD(")]),
    "merged_momentum_": (_MERGED, [("test_optimizer_multi_tensor.py", "optim.Momentum(")]),
    "merged_adam_": (_MERGED, [("test_optimizer_multi_tensor.py", "optim.Adam(")]),
    "merged_adamax_": (_MERGED, [("test_optimizer_multi_tensor.py", "optim.Adamax(")]),
    "merged_adagrad_": (_MERGED, [("test_optimizer_multi_tensor.py", "optim.Adagrad(")]),
    "merged_adadelta_": (_MERGED, [("test_optimizer_multi_tensor.py", "optim.Adadelta(")]),
    "merged_rmsprop_": (_MERGED, [("test_optimizer_multi_tensor.py", "optim.RMSProp(")]),
    "merged_nadam_": (_MERGED, [("test_optimizer_multi_tensor.py", "optim.NAdam(")]),
    "merged_radam_": (_MERGED, [("test_optimizer_multi_tensor.py", "optim.RAdam(")]),
    "uniform": (_RAND, [("test_random.py", "oar.uniform("), ("test_random.py", "oar.rand(")]),
    "gaussian": (_RAND, [("test_random.py", "oar.randn("), ("test_random.py", "oar.normal(")]),
    "randint": (_RAND, [("test_random.py", "oar.randint(")]),
    "bernoulli": (_RAND, [("test_random.py", "oar.bernoulli(")]),
    "multinomial": (_RAND, [("test_random.py", "oar.multinomial(")]),
    "randperm": (_RAND, [("test_random.py", "oar.randperm(")]),
    "cond": (_FLOW, [("test_control_flow.py", "nn.cond(")]),
    "while_loop": (_FLOW, [("test_control_flow.py", "while_loop(")]),
    "switch_case": (_FLOW, [("test_control_flow.py", "switch_case(")]),
    "to_device": ("a move between devices, recorded for autograd only; checked by the device tests against the "
                  "source tensor and its gradient", [("test_custom_device.py", ".cpu().sum().backward()")]),
    "py_layer": ("a user-defined forward and backward, checked against the functions the user wrote",
                 [("test_pylayer.py", "PyLayer")]),
    # dist.reshard in the script that test_dist.py runs on 2 and 4 ranks
    "dist_reshard": (_DIST, [("test_dist.py", "auto_parallel.py"), ("dist_scripts/auto_parallel.py", "dist.reshard(")]),
    # dtensor_from_local / dtensor_to_local inside the model-parallel layers of oar.distributed
    "dist_from_local": (_DIST, [("test_dist.py", "mp_layers.py"),
                                ("dist_scripts/mp_layers.py", "mp.ColumnParallelLinear(")]),
    "dist_to_local": (_DIST, [("test_dist.py", "mp_layers.py"),
                              ("dist_scripts/mp_layers.py", "mp.RowParallelLinear(")]),
    "fused_conv": (_FUSED, [("test_ir_fusion.py", "fused_conv")]),
}

# Entries named after a function that is not public: the op has no function of its own.
_FUSED_OP = "a fused op the graph passes emit, called through oar._C"
NOT_PUBLIC = {"trigamma": "computed as the derivative of oar.digamma", "fused_linear_act": _FUSED_OP,
              "fused_elementwise": _FUSED_OP, "fused_reduce": _FUSED_OP, "fused_attention": _FUSED_OP, "fused_conv": _FUSED_OP,
              "fused_attention_grad": "the first-order gradient kernel of fused_attention"}

REGISTERED = [op for op in oar._C._registered_ops() if not op.endswith("_grad")]
ENTRIES = {info.name: info for info in OP_DB}


def _same_name(op):
    return [n for n in ENTRIES if n.split(".")[-1] == op or n.replace(".", "_") == op]


def _claims(op):
    return _same_name(op) + [n for n in COVERED_BY.get(op, []) if n not in _same_name(op)]


# ---------------------------------------------------------------- tracing an entry

_OP_CALL = re.compile(r"= ([A-Za-z_0-9]+)\(")
_TRACED = {}


def _traced_ops(info):
    """The ops of the programs traced from the entry's samples, with gradients where the entry checks them."""
    if info.name in _TRACED:
        return _TRACED[info.name]
    dtype = next((d for d in ("float64", "float32") if d in info.dtypes), info.dtypes[0])
    found, problems = set(), []
    for sample in info.samples(dtype):
        args = [to_oar(a, dtype, sample.noncontig) if isinstance(a, np.ndarray) else a for a in sample.args]
        pos = [i for i, a in enumerate(args) if isinstance(a, oar.Tensor)]
        inputs = [args[i] for i in pos]
        grad = info.grad and sample.grad
        for t in inputs:
            t.stop_gradient = not (grad and t.dtype.is_floating_point)
        extra = {"dtype": dtype} if info.creation else {}

        def fn(*ts):
            full = list(args)
            for i, t in zip(pos, ts):
                full[i] = t
            out = info.op(*full, **sample.kwargs, **extra)
            diff = [t for t in ts if not t.stop_gradient]
            if not (grad and diff and out.dtype.is_floating_point):
                return out
            gs = [g for g in oar.grad([out], diff, grad_outputs=[oar.ones_like(out)], create_graph=info.gradgrad,
                                      allow_unused=True) if g is not None]
            if info.gradgrad and gs and any(not g.stop_gradient for g in gs):
                total = sum(oar.sum(g) for g in gs if not g.stop_gradient)
                gs += [g for g in oar.grad([total], diff, allow_unused=True) if g is not None]
            return [out] + gs

        try:
            prog, _ = _ir.trace(fn, inputs)
        except Exception as e:  # reported only if no sample shows the op
            problems.append(f"{sample}: {type(e).__name__}: {e}")
            continue
        found |= set(_OP_CALL.findall(str(prog)))
    _TRACED[info.name] = (found, problems)
    return found, problems


# ---------------------------------------------------------------- the tables

def test_every_registered_op_is_covered_or_exempt():
    missing = [op for op in REGISTERED if not _claims(op) and op not in EXEMPT]
    assert not missing, (f"ops with no op-database entry and no exemption: {missing}; add an entry in "
                         "tests/python/opdb_<area>.py, or a COVERED_BY / EXEMPT row in test_opdb_coverage.py")


def test_table_rows_name_registered_ops():
    registered = set(REGISTERED)
    stale = [op for op in list(COVERED_BY) + list(EXEMPT) if op not in registered]
    assert not stale, f"COVERED_BY / EXEMPT rows for ops that are no longer registered: {stale}"
    both = sorted(set(COVERED_BY) & set(EXEMPT))
    assert not both, f"ops both covered and exempt: {both}"


def test_covered_by_names_op_database_entries():
    unknown = {op: [n for n in names if n not in ENTRIES] for op, names in COVERED_BY.items()}
    unknown = {op: names for op, names in unknown.items() if names}
    assert not unknown, f"COVERED_BY names entries that are not in the op database: {unknown}"


def test_exempt_ops_are_exercised_by_the_named_test_files():
    for op, (reason, where) in EXEMPT.items():
        assert reason and where, op
        for path, text in where:
            f = TESTS / path
            assert f.is_file(), f"{op}: {f} does not exist"
            assert text in f.read_text(), f"{op}: {path} no longer contains {text!r}"


def test_op_database_names_are_unique_and_callable():
    names = [info.name for info in OP_DB]
    dups = sorted({n for n in names if names.count(n) > 1})
    assert not dups, f"op-database entries registered twice: {dups}"
    for info in OP_DB:
        assert callable(info.op) and callable(info.ref) and callable(info.samples), info.name
        assert info.dtypes, info.name


def _public(name):
    """The public oar attribute an entry name refers to: oar.<name>, or oar.<name less a _suffix>
    for an entry that checks one output or mode of that function (topk_indices, median_min)."""
    for candidate in (name, *[name.rsplit("_", k)[0] for k in range(1, name.count("_") + 1)]):
        for root in (oar, oar.nn.functional, oar.Tensor):
            obj = root
            for part in candidate.split("."):
                obj = getattr(obj, part, None)
            if obj is not None:
                return obj
    return None


def test_op_database_names_are_public_functions():
    not_found = [n for n in ENTRIES if _public(n) is None and n not in NOT_PUBLIC]
    assert not not_found, f"op-database entries that name no public oar function: {not_found}"
    for n in ENTRIES:
        obj = _public(n)
        assert obj is None or callable(obj) or isinstance(obj, property), n
    stale = [n for n in NOT_PUBLIC if n not in ENTRIES or _public(n) is not None]
    assert not stale, f"NOT_PUBLIC rows that are not entries, or that name a public function now: {stale}"


# ---------------------------------------------------------------- each claim, traced

@pytest.mark.parametrize("op", sorted(COVERED_BY))
def test_each_covered_by_entry_runs_the_op(op):
    for name in COVERED_BY[op]:
        found, problems = _traced_ops(ENTRIES[name])
        assert op in found, f"{name} does not run {op}; it runs {sorted(found)}; trace errors: {problems}"


@pytest.mark.parametrize("op", sorted(op for op in REGISTERED if op not in COVERED_BY and op not in EXEMPT))
def test_an_entry_of_the_same_name_runs_the_op(op):
    names = _same_name(op)
    assert names, f"{op} has no entry"
    seen = {}
    for name in names:
        found, problems = _traced_ops(ENTRIES[name])
        if op in found:
            return
        seen[name] = (sorted(found), problems)
    raise AssertionError(f"no entry named {op} runs it: {seen}")
