"""Every op of the op database on every available device other than the CPU, against the CPU.

One harness serves every device: the plugin devices (custom_cpu and any other found) and
CUDA where a GPU is visible. Each forward sample of test_opdb.py runs with its tensors made
on the device (strided views made there too) and must give the CPU's result: exactly for
integer and bool outputs, within the dtype's tolerance for floating ones. An op with no
kernel for the device fails with the dispatcher's NotImplementedError, unless the device
lists it in DEVICE_GAPS (ops a device is known to lack; an entry that starts to pass fails,
so the list only shrinks).

    python tests/python/test_opdb_device.py gpu:0     # a per-op summary instead of pytest
"""
import sys

import numpy as np
import pytest

import oar

oar.set_device("cpu")  # the samples the op database makes when it loads live on the CPU
from opdb import OP_DB, LOW_PRECISION, to_oar  # noqa: E402
from opdb_device_gaps import CUSTOM_CPU as CUSTOM_CPU_GAPS, GPU as GPU_GAPS  # noqa: E402

FWD = [(info, d) for info in OP_DB for d in info.dtypes]


def available_devices():
    devs = []
    try:
        devs += [f"{t}:0" for t in oar.device.get_all_custom_device_type()]
    except (AttributeError, RuntimeError):
        pass
    if oar.device.cuda.device_count() > 0:
        devs.append("gpu:0")
    return devs


DEVICES = available_devices()


def _run(info, sample, dtype, device):
    """The sample run as a user would with `device` selected (oar.set_device): tensors
    the entry makes itself (index tensors, creation ops) go there too."""
    device = device or "cpu"
    args = [to_oar(a, dtype, sample.noncontig, device=device) if isinstance(a, np.ndarray) else a
            for a in sample.args]
    with oar.device.device_guard(device):
        if info.creation:
            return info.op(*args, dtype=dtype, **sample.kwargs)
        return info.op(*args, **sample.kwargs)


def _arrays(out, device):
    """The output's tensors as NumPy arrays, each checked to live on `device`."""
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in _arrays(o, device)]
    if isinstance(out, oar.Tensor):
        where = str(out.place).lower()
        kind = (device or "cpu").split(":")[0]
        assert kind in where or (kind == "gpu" and "gpu" in where), f"output on {out.place}, expected {device}"
        return [out.cpu().numpy()]
    return [np.asarray(out)]


def check(info, dtype, device):
    atol, rtol = info.tolerance(dtype)
    if info.name == "cast":
        atol, rtol = max(atol, 1e-2), max(rtol, 1e-2)
    # The samples are made once per device (seeded: the same values), so that
    # tensors an entry's sample list holds live where the run does.
    with oar.device.device_guard("cpu"):
        on_cpu = info.samples(dtype)
    with oar.device.device_guard(device):
        on_device = info.samples(dtype)
    for ref_sample, sample in zip(on_cpu, on_device):
        want = _arrays(_run(info, ref_sample, dtype, None), None)
        got = _arrays(_run(info, sample, dtype, device), device)
        assert len(got) == len(want), sample
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, (sample, g.shape, w.shape, g.dtype, w.dtype)
            if g.dtype.kind in "biu":
                np.testing.assert_array_equal(g, w, err_msg=repr(sample))
            else:
                tol = (atol, rtol) if dtype not in LOW_PRECISION else (max(atol, 2e-2), max(rtol, 2e-2))
                np.testing.assert_allclose(g, w, atol=tol[0], rtol=tol[1], equal_nan=True, err_msg=repr(sample))


# Ops a device is known to have no kernel for, per device type (opdb_device_gaps.py): op database
# names with "all" their dtypes or a list of them.
DEVICE_GAPS = {"custom_cpu": CUSTOM_CPU_GAPS, "gpu": GPU_GAPS}


def _gap(device, name, dtype):
    listed = DEVICE_GAPS.get(device.split(":")[0], {}).get(name, ())
    return listed == "all" or dtype in listed


@pytest.mark.skipif(not DEVICES, reason="no device other than the CPU: no plugin found and no GPU visible")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("info,dtype", FWD, ids=[f"{i.name}-{d}" for i, d in FWD])
def test_forward_on_device(info, dtype, device):
    if _gap(device, info.name, dtype):
        # no kernel for the device, none for the dtype, or the device's kernel refuses it
        with pytest.raises(NotImplementedError, match=r"has no kernel for device|does not support dtype|not supported"):
            check(info, dtype, device)
        return
    check(info, dtype, device)


def test_device_gaps_name_op_database_entries():
    names = {info.name: info.dtypes for info in OP_DB}
    for device, gaps in DEVICE_GAPS.items():
        for name, dtypes in gaps.items():
            assert name in names, f"{device}: {name} is not an op-database entry"
            assert dtypes == "all" or set(dtypes) <= set(names[name]), f"{device}: {name} lists {dtypes}"


def summary(device):
    """Prints one line per op: ok, the ops without a kernel, or the first mismatch."""
    ok, missing, bad = [], {}, {}
    for info, dtype in FWD:
        try:
            check(info, dtype, device)
            ok.append(f"{info.name}-{dtype}")
        except NotImplementedError as e:
            msg = str(e)
            op = msg[msg.find("[") + 1:msg.find("]")] if "[" in msg else "?"
            missing.setdefault(op, {})[dtype] = msg.splitlines()[0][:160]
        except Exception as e:  # noqa: BLE001 - a report, not a test
            bad[f"{info.name}-{dtype}"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200]}"
    print(f"{device}: {len(ok)} of {len(FWD)} (op, dtype) pairs match the CPU")
    print(f"{len(missing)} ops without a kernel on {device}:")
    for op, dts in sorted(missing.items()):
        print(f"  {op}: {' '.join(sorted(dts))}  ({next(iter(dts.values()))})")
    print(f"{len(bad)} mismatches or errors:")
    for k, v in sorted(bad.items()):
        print(f"  {k}: {v}")


if __name__ == "__main__":
    summary(sys.argv[1] if len(sys.argv) > 1 else (DEVICES or ["cpu"])[0])
