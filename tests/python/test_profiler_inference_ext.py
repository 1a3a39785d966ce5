"""oar.profiler (RecordEvent, SummaryView, exports, load_profiler_result) and the
oar.inference names PlaceType, PredictorPool, XpuConfig and the version/size queries."""
import json
import os
import threading
import time

import numpy as np
import pytest

import oar
import oar.profiler as profiler
from oar import inference

# ---- profiler -------------------------------------------------------------------------------


def test_record_event_times_user_ranges():
    with profiler.Profiler() as prof:
        for _ in range(3):
            with profiler.RecordEvent("sleep"):
                time.sleep(0.01)
        ev = profiler.RecordEvent("manual")
        ev.begin()
        oar.exp(oar.ones([4]))
        ev.end()
    rows = {r.name: r for r in prof.event_stats()}
    assert rows["sleep"].calls == 3 and 0.03 <= rows["sleep"].seconds < 2.0
    assert rows["manual"].calls == 1
    # the ops inside the ranges are still op rows; the ranges are not
    names = [r.name for r in prof.op_stats()]
    assert "exp" in names and "sleep" not in names


def test_record_event_outside_recording_is_dropped():
    with profiler.RecordEvent("before"):
        pass
    prof = profiler.Profiler(scheduler=(1, 2))  # records step 1 only
    prof.start()
    with profiler.RecordEvent("step0"):
        pass
    prof.step()
    with profiler.RecordEvent("step1"):
        pass
    prof.step()
    with profiler.RecordEvent("step2"):
        pass
    prof.stop()
    assert [r.name for r in prof.event_stats()] == ["step1"]


def test_record_event_errors():
    with pytest.raises(TypeError, match=r"^\[oar\.profiler\.RecordEvent\]"):
        profiler.RecordEvent(3)
    with pytest.raises(RuntimeError, match=r"^\[oar\.profiler\.RecordEvent\.end\]"):
        profiler.RecordEvent("x").end()


def test_summary_views(capsys):
    with profiler.Profiler() as prof:
        with profiler.RecordEvent("block"):
            oar.exp(oar.ones([8]))
    text = prof.summary(views=profiler.SummaryView.UDFView)
    assert "block" in text and "exp" not in text
    text = prof.summary(views=[profiler.SummaryView.OperatorView])
    assert "exp" in text and "block" not in text
    text = prof.summary()
    assert "exp" in text and "block" in text
    assert int(profiler.SummaryView.UDFView.value) == 8  # Paddle's value
    with pytest.raises(TypeError, match=r"^\[oar\.profiler\.Profiler\.summary\]"):
        prof.summary(views=["ops"])


def _profile_with_steps():
    with profiler.Profiler() as prof:
        for _ in range(2):
            with profiler.RecordEvent("work"):
                oar.exp(oar.ones([16]))
            prof.step()
    return prof


def test_export_chrome_tracing_writes_a_chrome_trace(tmp_path):
    handle = profiler.export_chrome_tracing(str(tmp_path), worker_name="w0")
    prof = _profile_with_steps()
    handle(prof)
    [name] = os.listdir(tmp_path)
    assert name.startswith("w0_time_") and name.endswith(".paddle_trace.json")
    trace = json.load(open(tmp_path / name))
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    work = [e for e in spans if e["name"] == "work"]
    steps = [e for e in spans if e["name"].startswith("ProfileStep#")]
    assert len(work) == 2 and [s["name"] for s in steps] == ["ProfileStep#0", "ProfileStep#1"]
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in spans)
    # each 'work' range lies inside its step
    for w, s in zip(work, steps):
        assert s["ts"] <= w["ts"] and w["ts"] + w["dur"] <= s["ts"] + s["dur"] + 1e-3
    r = profiler.load_profiler_result(str(tmp_path / name))
    assert {op.name for op in r.op_stats()} >= {"exp"} and len(r.events()) == 2 and len(r.steps()) == 2


def test_export_protobuf_roundtrip(tmp_path):
    prof = _profile_with_steps()
    profiler.export_protobuf(str(tmp_path))(prof)
    [name] = os.listdir(tmp_path)
    assert name.endswith(".oar_profile.json")
    r = profiler.load_profiler_result(str(tmp_path / name))
    ops = {o.name: o for o in r.op_stats()}
    live = {o.name: o for o in prof.op_stats()}
    assert ops["exp"].calls == live["exp"].calls == 2
    assert [e[0] for e in r.events()] == ["work", "work"]
    assert r.get_data()["format"] == "oar-profile"


def test_on_trace_ready_runs_per_window(tmp_path):
    sched = profiler.make_scheduler(closed=1, ready=0, record=1, repeat=2)
    with profiler.Profiler(scheduler=sched, on_trace_ready=profiler.export_protobuf(str(tmp_path))) as prof:
        for _ in range(5):
            oar.exp(oar.ones([4]))
            prof.step()
    assert len(os.listdir(tmp_path)) == 2


def test_load_profiler_result_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"^\[oar\.profiler\.load_profiler_result\]"):
        profiler.load_profiler_result(str(tmp_path / "none.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"^\[oar\.profiler\.load_profiler_result\]"):
        profiler.load_profiler_result(str(bad))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"traceEvents": []}))
    with pytest.raises(ValueError, match="not a profile written by oar"):
        profiler.load_profiler_result(str(other))
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"format": "oar-profile", "version": 9, "ops": [], "events": [], "steps": []}))
    with pytest.raises(ValueError, match="version 9"):
        profiler.load_profiler_result(str(newer))


def test_record_event_from_threads():
    with profiler.Profiler() as prof:
        def work():
            with profiler.RecordEvent("thread"):
                time.sleep(0.001)
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    [row] = prof.event_stats()
    assert row.calls == 4


# ---- inference ------------------------------------------------------------------------------


def test_place_type_values_match_paddle():
    # paddle.inference.PlaceType in Paddle 3.3.1
    assert {p.name: int(p) for p in inference.PlaceType} == {"UNK": -1, "CPU": 0, "GPU": 1, "XPU": 2, "CUSTOM": 4}


def test_num_bytes_of_data_type():
    expected = {"FLOAT32": 4, "FLOAT64": 8, "FLOAT16": 2, "BFLOAT16": 2, "INT64": 8, "INT32": 4, "INT16": 2,
                "INT8": 1, "UINT8": 1, "BOOL": 1}
    for t in inference.DataType:
        assert inference.get_num_bytes_of_data_type(t) == expected[t.name]
        assert inference.get_num_bytes_of_data_type(t) == np.dtype(t.name.lower().replace("bfloat16", "float16")
                                                                 .replace("bool", "bool_")).itemsize
    with pytest.raises(TypeError, match=r"^\[oar\.inference\.get_num_bytes_of_data_type\]"):
        inference.get_num_bytes_of_data_type("float32")


def test_trt_versions_say_not_built_with_tensorrt():
    assert inference.get_trt_compile_version() == (0, 0, 0)
    assert inference.get_trt_runtime_version() == (0, 0, 0)


def test_xpu_config_fields_and_errors():
    x = inference.XpuConfig()
    assert x.device_id == 0 and x.l3_size == 0 and x.gemm_compute_precision == 1 and x.context_gm_size == -1
    x.device_id = 2
    c = inference.Config("m")
    assert c.use_xpu() is False and c.use_gpu() is False
    with pytest.raises(NotImplementedError, match=r"^\[oar\.inference\.Config\.set_xpu_config\].*XPU"):
        c.set_xpu_config(x)
    with pytest.raises(TypeError, match=r"^\[oar\.inference\.Config\.set_xpu_config\]"):
        c.set_xpu_config({})
    with pytest.raises(NotImplementedError, match=r"^\[oar\.inference\.Config\.enable_xpu\]"):
        c.enable_xpu()


def test_predictor_pool_runs_and_shares_weights():
    p = inference._demo_predictor()
    pool = inference.PredictorPool(p._config, 3)
    preds = [pool.retrieve(i) for i in range(3)]
    assert len({id(q) for q in preds}) == 3
    assert len({q._weights_id() for q in preds}) == 1
    x = np.arange(12, dtype="float32").reshape(4, 3)
    ref = p.run([x])[0]
    outs = [None] * 3

    def run(i):
        outs[i] = preds[i].run([x])[0]
    threads = [threading.Thread(target=run, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for o in outs:
        np.testing.assert_array_equal(o, ref)
    with pytest.raises(IndexError, match=r"^\[oar\.inference\.PredictorPool\.retrieve\]"):
        pool.retrieve(3)
    with pytest.raises(ValueError, match=r"^\[oar\.inference\.PredictorPool\]"):
        inference.PredictorPool(p._config, 0)
    with pytest.raises(TypeError, match=r"^\[oar\.inference\.PredictorPool\]"):
        inference.PredictorPool("m", 1)


def test_inference_names():
    for n in ["PlaceType", "PredictorPool", "XpuConfig", "get_num_bytes_of_data_type", "get_trt_compile_version",
              "get_trt_runtime_version"]:
        assert n in inference.__all__
    for n in ["RecordEvent", "SummaryView", "export_chrome_tracing", "export_protobuf", "load_profiler_result"]:
        assert n in profiler.__all__
