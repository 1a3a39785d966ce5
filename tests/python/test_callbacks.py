"""Callbacks: early stopping on scripted metrics, checkpoints, LR stepping,
the progress bar's output, and TensorBoard event files read back by an
independent parser (own CRC32C and protobuf decoding)."""
import glob
import os
import struct

import numpy as np
import pytest

import oar
import oar.io
import oar.metric
import oar.optimizer
from oar.hapi import Model
from oar.hapi.callbacks import (Callback, EarlyStopping, LRScheduler, ModelCheckpoint, ProgBarLogger,
                                ReduceLROnPlateau, TensorBoard, VisualDL)
from oar.hapi.event_writer import SummaryWriter


def make_data(n=20, seed=0):
    rs = np.random.RandomState(seed)
    x = rs.randn(n, 3).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")
    return oar.io.TensorDataset([x, y])


def make_model(lr=0.05, scheduler=None):
    oar.seed(1)
    net = oar.nn.Linear(3, 1)
    model = Model(net)
    opt = oar.optimizer.SGD(learning_rate=scheduler if scheduler is not None else lr, parameters=net.parameters())
    model.prepare(opt, oar.nn.MSELoss())
    return model


class FakeModel:
    stop_training = False

    def save(self, path):
        self.saved = path


def stop_epoch(values, **kw):
    """Runs EarlyStopping over a scripted sequence; returns (evaluations run, best)."""
    es = EarlyStopping(verbose=0, **kw)
    es.set_model(FakeModel())
    es.on_train_begin()
    for i, v in enumerate(values):
        es.on_eval_end({kw.get("monitor", "loss"): v})
        if es.model.stop_training:
            return i + 1, es.best_value
    return len(values), es.best_value


def test_early_stopping_scripted_sequences():
    accs = [0.5, 0.6, 0.55, 0.58, 0.59, 0.7]
    # improvements at evaluations 1 and 2; no improvement at 3 and 4 -> patience 2 reached at 4
    assert stop_epoch(accs, monitor="acc", patience=2) == (4, 0.6)
    assert stop_epoch(accs, monitor="acc", mode="max", patience=3) == (5, 0.6)
    assert stop_epoch(accs, monitor="acc", patience=4) == (6, 0.7)
    # min_delta 0.05: 0.6 is not better than 0.5 + 0.05 by enough? 0.6 - 0.05 = 0.55 > 0.5 yes; 0.7 - 0.05 > 0.6
    assert stop_epoch(accs, monitor="acc", patience=3, min_delta=0.05) == (5, 0.6)
    assert stop_epoch(accs, monitor="acc", patience=2, min_delta=0.11) == (3, 0.5)
    losses = [[1.0], [0.8], [0.9], [0.7], [0.75], [0.71], [0.72]]
    assert stop_epoch(losses, monitor="loss", patience=2) == (6, 0.7)
    # mode auto minimises 'loss'; baseline must be beaten
    assert stop_epoch(losses, monitor="loss", patience=2, baseline=0.5) == (2, 0.5)
    # an explicit max mode on a loss
    assert stop_epoch([[1.0], [0.5], [0.4]], monitor="loss", mode="max", patience=1) == (2, 1.0)


class Scripted(oar.metric.Metric):
    """A metric whose value at the i-th evaluation is values[i]."""

    def __init__(self, values):
        self.values = values
        self.evals = 0
        self.current = 0.0

    def reset(self):
        pass

    def update(self, *args):
        return self.current

    def compute(self, *args):
        return [0.0]

    def accumulate(self):
        return self.current

    def name(self):
        return "score"


class EvalCounter(Callback):
    def __init__(self, metric):
        super().__init__()
        self.metric = metric
        self.epochs = 0

    def on_eval_begin(self, logs=None):
        self.metric.current = self.metric.values[self.metric.evals]
        self.metric.evals += 1

    def on_epoch_end(self, epoch, logs=None):
        self.epochs += 1


def test_early_stopping_in_fit_saves_best(tmp_path):
    metric = Scripted([0.1, 0.3, 0.2, 0.25, 0.9, 0.95])
    model = make_model()
    model.prepare(model._optimizer, oar.nn.MSELoss(), metrics=metric)
    counter = EvalCounter(metric)
    es = EarlyStopping(monitor="score", mode="max", patience=2, verbose=0)
    model.fit(make_data(), make_data(8, 1), batch_size=5, epochs=6, verbose=0, callbacks=[counter, es],
              save_dir=str(tmp_path))
    assert counter.epochs == 4 and metric.evals == 4
    assert model.stop_training
    assert os.path.exists(tmp_path / "best_model.pdparams")


def test_model_checkpoint_files(tmp_path):
    model = make_model()
    model.fit(make_data(), batch_size=10, epochs=3, verbose=0, save_dir=str(tmp_path), save_freq=2)
    names = sorted(os.listdir(tmp_path))
    assert names == ["1.pdopt", "1.pdparams", "final.pdopt", "final.pdparams"]
    # the final checkpoint holds the trained weights
    state = oar.load(str(tmp_path / "final.pdparams"))
    np.testing.assert_array_equal(state["weight"].numpy(), model.network.weight.numpy())
    with pytest.raises(ValueError, match=r"^\[oar.callbacks.ModelCheckpoint\]"):
        ModelCheckpoint(save_freq=0)


@pytest.mark.parametrize("by_step", [True, False])
def test_lr_scheduler_callback(by_step):
    sched = oar.optimizer.lr.StepDecay(learning_rate=0.1, step_size=1, gamma=0.5)
    model = make_model(scheduler=sched)
    cb = LRScheduler(by_step=by_step, by_epoch=not by_step)
    model.fit(make_data(20), batch_size=5, epochs=2, verbose=0, callbacks=[cb])
    steps = 8 if by_step else 2
    assert sched.last_epoch == steps
    assert model._optimizer.get_lr() == pytest.approx(0.1 * 0.5 ** steps)
    with pytest.raises(ValueError, match=r"^\[oar.callbacks.LRScheduler\]"):
        LRScheduler(by_step=True, by_epoch=True)


def test_reduce_lr_on_plateau():
    model = make_model(lr=1.0)
    cb = ReduceLROnPlateau(patience=2, factor=0.5, verbose=0, cooldown=1)
    cb.set_model(model)
    cb.on_train_begin()
    for loss in [1.0, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6]:
        cb.on_eval_end({"loss": [loss]})
    # cut after evaluations 4 (two without improvement), then one cooldown, then two more -> cut at 7
    assert model._optimizer.get_lr() == pytest.approx(0.25)


def test_progress_bar_output(capsys):
    model = make_model()
    model.prepare(model._optimizer, oar.nn.MSELoss())
    model.fit(make_data(20), make_data(10, 1), batch_size=5, epochs=2, log_freq=2, verbose=2)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "Epoch 1/2"
    train_lines = [ln for ln in lines if ln.startswith("step ")]
    # 4 steps per epoch logged at 2 and 4; eval 2 steps logged at 2; two epochs
    assert [ln.split(" - ")[0] for ln in train_lines] == ["step 2/4", "step 4/4", "step 2/2"] * 2
    for ln in train_lines:
        assert " - loss: " in ln and ln.endswith("/step")
        float(ln.split(" - loss: ")[1].split(" ")[0])
    assert "Eval begin..." in lines and "Eval samples: 10" in lines
    assert "Epoch 2/2" in lines

    model.fit(make_data(20), batch_size=5, epochs=1, verbose=0)
    assert capsys.readouterr().out == ""

    model.fit(make_data(20), batch_size=5, epochs=1, log_freq=1, verbose=1)
    out = capsys.readouterr().out
    assert "step 1/4 [" in out and "ETA:" in out and "step 4/4 [==============================]" in out

    model.predict(make_data(6), batch_size=4, verbose=2)
    out = capsys.readouterr().out
    assert "Predict begin..." in out and "Predict samples: 6" in out


def test_progbar_logger_with_metrics(capsys):
    net = oar.nn.Linear(3, 2)
    model = Model(net)
    model.prepare(oar.optimizer.SGD(parameters=net.parameters()), oar.nn.CrossEntropyLoss(),
                  oar.metric.Accuracy(topk=(1, 2)))
    x = np.random.RandomState(0).randn(8, 3).astype("float32")
    y = np.zeros((8, 1), "int64")
    model.fit(oar.io.TensorDataset([x, y]), batch_size=4, verbose=0, callbacks=[ProgBarLogger(1, verbose=2)])
    out = capsys.readouterr().out
    assert "acc_top1: " in out and "acc_top2: 1.0000" in out


# ---------------------------------------------------------------- TensorBoard files

def crc32c_bitwise(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_varint(buf, pos):
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, pos


def parse_message(buf):
    """{field number: [values]}: varints as int, fixed64/fixed32 as raw bytes, length-delimited as bytes."""
    fields, pos = {}, 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            val, pos = read_varint(buf, pos)
        elif wire == 1:
            val, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            val, pos = buf[pos:pos + 4], pos + 4
        elif wire == 2:
            n, pos = read_varint(buf, pos)
            val, pos = buf[pos:pos + n], pos + n
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        fields.setdefault(field, []).append(val)
    return fields


def read_events(path):
    data = open(path, "rb").read()
    pos, events = 0, []
    while pos < len(data):
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (hcrc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        assert hcrc == masked(crc32c_bitwise(header))
        body = data[pos + 12:pos + 12 + length]
        (dcrc,) = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])
        assert dcrc == masked(crc32c_bitwise(body))
        pos += 16 + length
        f = parse_message(body)
        ev = {"wall_time": struct.unpack("<d", f[1][0])[0], "step": f.get(2, [0])[0]}
        if 3 in f:
            ev["file_version"] = f[3][0].decode()
        if 5 in f:
            ev["values"] = []
            for v in parse_message(f[5][0])[1]:
                vf = parse_message(v)
                ev["values"].append((vf[1][0].decode(), struct.unpack("<f", vf[2][0])[0]))
        events.append(ev)
    assert pos == len(data)
    return events


def test_own_crc32c_reference():
    assert crc32c_bitwise(b"123456789") == 0xE3069283


def test_summary_writer_roundtrip(tmp_path):
    values = [(0.5, 1), (-3.25, 2), (1e-8, 300), (12345.0, 2**40)]
    with SummaryWriter(str(tmp_path)) as w:
        for v, s in values:
            w.add_scalar("a/b", v, s, walltime=1000.5)
        w.add_scalar("neg", 1.0, -5)
    (path,) = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    events = read_events(path)
    assert events[0]["file_version"] == "brain.Event:2"
    got = [(e["values"][0][1], e["step"]) for e in events[1:5]]
    for (v, s), (gv, gs) in zip(values, got):
        assert gs == s and gv == np.float32(v)
    assert all(e["wall_time"] == 1000.5 for e in events[1:5])
    assert events[5]["step"] == 2**64 - 5  # int64 -5 as an unsigned varint
    with pytest.raises(RuntimeError, match=r"^\[oar.hapi.SummaryWriter.add_scalar\]"):
        w.add_scalar("x", 1.0, 1)


class LossRecorder(Callback):
    def __init__(self):
        super().__init__()
        self.train = []
        self.eval = []

    def on_train_batch_end(self, step, logs=None):
        self.train.append(logs["loss"][0])

    def on_eval_end(self, logs=None):
        self.eval.append(logs["loss"][0])


@pytest.mark.parametrize("cls", [TensorBoard, VisualDL])
def test_tensorboard_callback_file(tmp_path, cls):
    model = make_model()
    rec = LossRecorder()
    model.fit(make_data(20), make_data(10, 1), batch_size=5, epochs=2, verbose=0,
              callbacks=[rec, cls(log_dir=str(tmp_path))])
    (path,) = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    events = read_events(path)
    assert events[0]["file_version"] == "brain.Event:2"
    train = [(e["step"], e["values"][0][1]) for e in events[1:] if e["values"][0][0] == "train/loss"]
    evals = [(e["step"], e["values"][0][1]) for e in events[1:] if e["values"][0][0] == "eval/loss"]
    assert [s for s, _ in train] == list(range(1, 9))
    np.testing.assert_array_equal([v for _, v in train], np.float32(rec.train))
    assert [s for s, _ in evals] == [0, 1]
    np.testing.assert_array_equal([v for _, v in evals], np.float32(rec.eval))

    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        return  # the independent parser above is the check that always runs
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    scalars = acc.Scalars("train/loss")
    assert [s.step for s in scalars] == list(range(1, 9))
    np.testing.assert_allclose([s.value for s in scalars], rec.train, rtol=1e-6)


def test_callback_type_error():
    model = make_model()
    with pytest.raises(TypeError, match=r"^\[oar.Model.fit\]"):
        model.fit(make_data(), verbose=0, callbacks=[object()])
