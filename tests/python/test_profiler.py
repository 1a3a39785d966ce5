"""oar.profiler: per-op rows of eager execution, with Paddle's Profiler API."""
import pytest

import oar
import oar.profiler as profiler


def test_rows_count_calls_and_bytes():
    x = oar.ones([32, 16])
    with profiler.Profiler() as prof:
        for _ in range(3):
            oar.exp(x)
    rows = {r.name: r for r in prof.op_stats()}
    assert rows["exp"].calls == 3
    assert rows["exp"].bytes == 3 * 32 * 16 * 4
    assert rows["exp"].seconds > 0


def test_nothing_recorded_outside_the_window():
    x = oar.ones([4])
    prof = profiler.Profiler()
    oar.exp(x)  # before start
    prof.start()
    oar.sin(x)
    prof.stop()
    oar.cos(x)  # after stop
    assert [r.name for r in prof.op_stats()] == ["sin"]


def test_backward_ops_are_recorded():
    w = oar.ones([8, 8])
    w.stop_gradient = False
    with profiler.Profiler() as prof:
        oar.matmul(w, w).sum().backward()
    names = {r.name for r in prof.op_stats()}
    assert "matmul" in names and "sum" in names
    assert sum(r.calls for r in prof.op_stats() if r.name == "matmul") == 3  # forward + two gradients


def test_record_shapes_splits_rows_by_signature():
    with profiler.Profiler(record_shapes=True) as prof:
        oar.exp(oar.ones([2, 3]))
        oar.exp(oar.ones([5]))
        oar.exp(oar.ones([5]))
    rows = {r.inputs: r.calls for r in prof.op_stats() if r.name == "exp"}
    assert rows == {"float32[2,3]": 1, "float32[5]": 2}


def test_range_scheduler_and_summary(capsys):
    x = oar.ones([4])
    seen = []
    prof = profiler.Profiler(scheduler=(1, 3), on_trace_ready=lambda p: seen.append(p.op_stats()[0].calls))
    prof.start()
    for _ in range(5):
        oar.exp(x)
        prof.step()
    prof.stop()
    assert seen == [2]  # steps 1 and 2 only
    text = prof.summary(time_unit="us")
    assert "exp" in text and "avg step time" in capsys.readouterr().out


def test_make_scheduler_states():
    s = profiler.make_scheduler(closed=1, ready=1, record=2, repeat=1)
    states = [s(i) for i in range(5)]
    assert states == [profiler.ProfilerState.CLOSED, profiler.ProfilerState.READY, profiler.ProfilerState.RECORD,
                      profiler.ProfilerState.RECORD_AND_RETURN, profiler.ProfilerState.CLOSED]


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"^\[oar.profiler.Profiler\]"):
        profiler.Profiler(scheduler=(3, 1))
    with pytest.raises(TypeError, match=r"^\[oar.profiler.Profiler\]"):
        profiler.Profiler(targets=["cpu"])
    with pytest.raises(ValueError, match=r"^\[oar.profiler.make_scheduler\]"):
        profiler.make_scheduler(closed=0, ready=0, record=0)
    with pytest.raises(ValueError, match=r"^\[oar.profiler.Profiler.summary\]"):
        profiler.Profiler().summary(time_unit="days")


def test_inference_runtime_steps_are_recorded(tmp_path):
    # The runtime calls kernels without the eager dispatcher; its steps land
    # in the same rows (fused ones under their own names).
    import numpy as np
    import oar.inference

    net = oar.nn.Sequential(oar.nn.Conv2D(3, 8, 3, padding=1), oar.nn.ReLU(), oar.nn.Conv2D(8, 4, 1))
    net.eval()
    prefix = str(tmp_path / "m")
    oar.jit.save(net, prefix, input_spec=[oar.static.InputSpec([2, 3, 6, 6], "float32", "x")])
    p = oar.inference.create_predictor(oar.inference.Config(prefix + ".json", prefix + ".safetensors"))
    x = np.ones((2, 3, 6, 6), np.float32)
    p.run([x])  # outside the window
    with profiler.Profiler() as prof:
        for _ in range(3):
            p.run([x])
    rows = {r.name: r for r in prof.op_stats()}
    assert rows["fused_conv"].calls == 3 * 2
    assert rows["fused_conv"].bytes == 3 * (2 * 8 * 6 * 6 + 2 * 4 * 6 * 6) * 4
    assert rows["fused_conv"].seconds > 0
