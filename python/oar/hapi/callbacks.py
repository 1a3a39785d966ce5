"""Callbacks of ``Model.fit``/``evaluate``/``predict`` (Paddle's ``paddle.callbacks``).

A callback receives ``on_<mode>_begin/end(logs)``, ``on_epoch_begin/end(epoch,
logs)`` and ``on_<mode>_batch_begin/end(step, logs)`` for mode ``train``,
``eval`` or ``predict``. ``logs`` holds ``loss`` (a list with one value per
loss term, of the latest batch), the metrics' running values, ``step`` and
``batch_size``. ``params`` holds ``batch_size``, ``epochs``, ``steps``,
``verbose`` and ``metrics`` (the names logged).
"""
import numbers
import os
import sys
import time
import warnings

import numpy as np

__all__ = ["Callback", "CallbackList", "ProgBarLogger", "ModelCheckpoint", "EarlyStopping", "LRScheduler",
           "VisualDL", "TensorBoard", "ReduceLROnPlateau", "config_callbacks"]

_MODES = ("train", "eval", "predict")


class Callback:
    """Base class: override the hooks you need. ``self.model`` and
    ``self.params`` are set before training starts.

    >>> import oar
    >>> from oar.hapi.callbacks import Callback
    >>> class CountEpochs(Callback):
    ...     def on_train_begin(self, logs=None): self.n = 0
    ...     def on_epoch_end(self, epoch, logs=None): self.n += 1
    >>> cb = CountEpochs(); cb.on_train_begin(); cb.on_epoch_end(0); cb.n
    1
    """

    def __init__(self):
        self.model = None
        self.params = {}

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self.model = model

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_eval_begin(self, logs=None):
        pass

    def on_eval_end(self, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, step, logs=None):
        pass

    def on_train_batch_end(self, step, logs=None):
        pass

    def on_eval_batch_begin(self, step, logs=None):
        pass

    def on_eval_batch_end(self, step, logs=None):
        pass

    def on_predict_batch_begin(self, step, logs=None):
        pass

    def on_predict_batch_end(self, step, logs=None):
        pass


class CallbackList:
    """Calls a list of callbacks in order; ``on_begin/on_end/on_batch_*`` take the mode.

    >>> from oar.hapi.callbacks import Callback, CallbackList
    >>> class Log(Callback):
    ...     def on_eval_begin(self, logs=None): print('eval', logs)
    >>> CallbackList([Log()]).on_begin('eval', {'steps': 3})
    eval {'steps': 3}
    """

    def __init__(self, callbacks=None):
        self.callbacks = list(callbacks or [])
        self.params = {}
        self.model = None

    def append(self, callback):
        self.callbacks.append(callback)

    def __iter__(self):
        return iter(self.callbacks)

    def set_params(self, params):
        self.params = params
        for c in self.callbacks:
            c.set_params(params)

    def set_model(self, model):
        self.model = model
        for c in self.callbacks:
            c.set_model(model)

    def _call(self, name, *args):
        for c in self.callbacks:
            getattr(c, name)(*args)

    @staticmethod
    def _check_mode(mode):
        if mode not in _MODES:
            raise ValueError(f"[oar.callbacks.CallbackList] mode must be one of {_MODES}, got {mode!r}")

    def on_begin(self, mode, logs=None):
        self._check_mode(mode)
        self._call(f"on_{mode}_begin", logs)

    def on_end(self, mode, logs=None):
        self._check_mode(mode)
        self._call(f"on_{mode}_end", logs)

    def on_epoch_begin(self, epoch=None, logs=None):
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch=None, logs=None):
        self._call("on_epoch_end", epoch, logs)

    def on_batch_begin(self, mode, step=None, logs=None):
        self._check_mode(mode)
        self._call(f"on_{mode}_batch_begin", step, logs)

    def on_batch_end(self, mode, step=None, logs=None):
        self._check_mode(mode)
        self._call(f"on_{mode}_batch_end", step, logs)


# ---------------------------------------------------------------- progress bar

def _format_values(values):
    info = ""
    for k, val in values:
        info += f" - {k}:"
        for v in (val if isinstance(val, (list, tuple)) else [val]):
            if isinstance(v, (float, np.floating)):
                info += f" {v:.4f}" if abs(v) > 1e-3 else f" {v:.4e}"
            else:
                info += f" {v}"
    return info


def _format_time(seconds):
    seconds = int(seconds)
    if seconds > 3600:
        return f"{seconds // 3600}:{(seconds % 3600) // 60:02d}:{seconds % 60:02d}"
    if seconds > 60:
        return f"{seconds // 60}:{seconds % 60:02d}"
    return f"{seconds}s"


class ProgressBar:
    """One line per update (verbose 2), or a bar redrawn in place (verbose 1)."""

    def __init__(self, num=None, width=30, verbose=1, start=True, name="step"):
        self._num = num
        self._width = width
        self._verbose = verbose
        self._name = name
        self._last_width = 0
        self._start = time.time()
        self._dynamic = None

    def start(self):
        self._start = time.time()

    def _is_dynamic(self, out):
        if self._dynamic is None:
            isatty = getattr(out, "isatty", None)
            self._dynamic = bool(isatty and isatty()) or "ipykernel" in sys.modules
        return self._dynamic

    def update(self, current_num, values=()):
        out = sys.stdout
        now = time.time()
        per_unit = (now - self._start) / current_num if current_num else 0.0
        if per_unit >= 1 or per_unit == 0:
            rate = f" - {per_unit:.0f}s/{self._name}"
        elif per_unit >= 1e-3:
            rate = f" - {per_unit * 1e3:.0f}ms/{self._name}"
        else:
            rate = f" - {per_unit * 1e6:.0f}us/{self._name}"
        if self._num:
            digits = len(str(self._num))
            count = f"{self._name} {current_num:{digits}d}/{self._num}"
        else:
            count = f"{self._name} {current_num:3d}"
        if self._verbose == 1:
            line = count
            if self._num:
                done = int(self._width * min(current_num / self._num, 1.0))
                bar = "=" * max(done - 1, 0) + ((">" if current_num < self._num else "=") if done else "")
                line += " [" + bar + "." * (self._width - done) + "]"
            line += _format_values(values)
            if self._num and current_num < self._num:
                line += " - ETA: " + _format_time(per_unit * (self._num - current_num))
            line += rate
            if self._is_dynamic(out):
                pad = max(self._last_width - len(line), 0)
                out.write("\r" + line + " " * pad)
                self._last_width = len(line)
                if self._num is not None and current_num >= self._num:
                    out.write("\n")
            else:
                out.write(line + "\n")
        else:
            out.write(count + _format_values(values) + rate + "\n")
        out.flush()


class ProgBarLogger(Callback):
    """Prints ``Epoch i/n`` and a progress line every ``log_freq`` steps:
    ``step 10/28 - loss: 0.1234 - acc: 0.9500 - 12ms/step``. ``verbose``: 0
    silent, 1 a bar redrawn in place with the ETA, 2 one line per log.

    >>> import numpy as np
    >>> import oar
    >>> from oar.hapi import Model
    >>> from oar.hapi.callbacks import ProgBarLogger
    >>> from oar.io import TensorDataset
    >>> ds = TensorDataset([np.ones([4, 2], 'float32'), np.ones([4, 1], 'float32')])
    >>> model = Model(oar.nn.Linear(2, 1))
    >>> model.prepare(oar.optimizer.SGD(parameters=model.parameters()), oar.nn.MSELoss())
    >>> model.fit(ds, batch_size=2, verbose=0, callbacks=[ProgBarLogger(log_freq=1, verbose=2)])  # doctest: +ELLIPSIS
    Epoch 1/1
    step 1/2 - loss: ... - ...step
    step 2/2 - loss: ... - ...step
    """

    def __init__(self, log_freq=1, verbose=2):
        super().__init__()
        if isinstance(log_freq, bool) or not isinstance(log_freq, numbers.Integral) or log_freq < 1:
            raise ValueError(f"[oar.callbacks.ProgBarLogger] log_freq must be a positive integer, got {log_freq!r}")
        self.epochs = None
        self.steps = None
        self.progbar = None
        self.verbose = verbose
        self.log_freq = int(log_freq)

    def _is_print(self):
        return bool(self.verbose)

    def on_train_begin(self, logs=None):
        self.epochs = self.params.get("epochs")
        self.train_metrics = self.params.get("metrics", [])

    def on_epoch_begin(self, epoch=None, logs=None):
        self.steps = self.params.get("steps")
        self.epoch = epoch
        self.train_step = 0
        self._train_logged = 0
        if self.epochs and self._is_print():
            print(f"Epoch {epoch + 1}/{self.epochs}")
        self.train_progbar = ProgressBar(num=self.steps, verbose=self.verbose)

    def _updates(self, logs, mode):
        metrics = getattr(self, f"{mode}_metrics")
        values = [(k, logs[k]) for k in metrics if k in logs]
        getattr(self, f"{mode}_progbar").update(getattr(self, f"{mode}_step"), values)

    def on_train_batch_end(self, step, logs=None):
        logs = logs or {}
        self.train_step += 1
        if self._is_print() and self.train_step % self.log_freq == 0:
            self._updates(logs, "train")
            self._train_logged = self.train_step

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self._is_print() and self.train_step and self._train_logged != self.train_step:
            self._updates(logs, "train")

    def on_eval_begin(self, logs=None):
        logs = logs or {}
        self.eval_steps = logs.get("steps")
        self.eval_metrics = logs.get("metrics", [])
        self.eval_step = 0
        self._eval_logged = 0
        self.evaled_samples = 0
        self.eval_progbar = ProgressBar(num=self.eval_steps, verbose=self.verbose)
        if self._is_print():
            print("Eval begin...")

    def on_eval_batch_end(self, step, logs=None):
        logs = logs or {}
        self.eval_step += 1
        self.evaled_samples += logs.get("batch_size", 1)
        if self._is_print() and self.eval_step % self.log_freq == 0:
            self._updates(logs, "eval")
            self._eval_logged = self.eval_step

    def on_eval_end(self, logs=None):
        logs = logs or {}
        if self._is_print():
            if self.eval_step and self._eval_logged != self.eval_step:
                self._updates(logs, "eval")
            print(f"Eval samples: {self.evaled_samples}")

    def on_predict_begin(self, logs=None):
        logs = logs or {}
        self.test_steps = logs.get("steps")
        self.test_metrics = []
        self.test_step = 0
        self._test_logged = 0
        self.tested_samples = 0
        self.test_progbar = ProgressBar(num=self.test_steps, verbose=self.verbose)
        if self._is_print():
            print("Predict begin...")

    def on_predict_batch_end(self, step, logs=None):
        logs = logs or {}
        self.test_step += 1
        self.tested_samples += logs.get("batch_size", 1)
        if self._is_print() and self.test_step % self.log_freq == 0:
            self._updates(logs, "test")
            self._test_logged = self.test_step

    def on_predict_end(self, logs=None):
        if self._is_print():
            if self.test_step and self._test_logged != self.test_step:
                self._updates(logs or {}, "test")
            print(f"Predict samples: {self.tested_samples}")


# ---------------------------------------------------------------- checkpoints, early stopping, LR

class ModelCheckpoint(Callback):
    """Saves the model to ``save_dir/<epoch>`` every ``save_freq`` epochs and
    to ``save_dir/final`` at the end of training (``.pdparams`` + ``.pdopt``).

    >>> from oar.hapi.callbacks import ModelCheckpoint
    >>> ModelCheckpoint(save_freq=2, save_dir='ckpt').save_freq
    2
    """

    def __init__(self, save_freq=1, save_dir=None):
        super().__init__()
        if isinstance(save_freq, bool) or not isinstance(save_freq, numbers.Integral) or save_freq < 1:
            raise ValueError(f"[oar.callbacks.ModelCheckpoint] save_freq must be a positive integer, "
                             f"got {save_freq!r}")
        self.save_freq = int(save_freq)
        self.save_dir = save_dir
        self.epoch = 0

    def _is_save(self):
        return self.model is not None and bool(self.save_dir)

    def on_epoch_begin(self, epoch=None, logs=None):
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if self._is_save() and (self.epoch + 1) % self.save_freq == 0:
            path = os.path.join(self.save_dir, str(epoch))
            print(f"save checkpoint at {os.path.abspath(path)}")
            self.model.save(path)

    def on_train_end(self, logs=None):
        if self._is_save():
            path = os.path.join(self.save_dir, "final")
            print(f"save checkpoint at {os.path.abspath(path)}")
            self.model.save(path)


def _scalar_of(value):
    """The number a log entry holds (first element of a list), or None."""
    if isinstance(value, (list, tuple, np.ndarray)):
        value = np.asarray(value).reshape(-1)
        return float(value[0]) if value.size else None
    if isinstance(value, numbers.Number):
        return float(value)
    return None


class EarlyStopping(Callback):
    """Stops ``fit`` when the evaluated ``monitor`` has not improved for
    ``patience`` evaluations (checked after each evaluation, as in Paddle: the
    model stops once the number of evaluations without improvement reaches
    ``patience``). ``mode`` ``'auto'`` maximises names containing ``acc``
    and minimises the rest; an improvement must exceed ``min_delta``;
    ``baseline`` is the value to beat at the start. With ``save_best_model``
    the best model is saved to ``<save_dir>/best_model`` (``save_dir`` is
    fit's).

    >>> from oar.hapi.callbacks import EarlyStopping
    >>> class M: stop_training = False
    >>> es = EarlyStopping(monitor='acc', patience=1, verbose=0); es.set_model(M())
    >>> es.on_train_begin()
    >>> for acc in [0.5, 0.7, 0.6]:
    ...     es.on_eval_end({'acc': acc})
    >>> es.model.stop_training, es.best_value
    (True, 0.7)
    """

    def __init__(self, monitor="loss", mode="auto", patience=0, verbose=1, min_delta=0, baseline=None,
                 save_best_model=True):
        super().__init__()
        if isinstance(patience, bool) or not isinstance(patience, numbers.Integral) or patience < 0:
            raise ValueError(f"[oar.callbacks.EarlyStopping] patience must be a non-negative integer, "
                             f"got {patience!r}")
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"[oar.callbacks.EarlyStopping] mode {mode!r} is unknown, using 'auto'")
            mode = "auto"
        self.monitor = monitor
        self.patience = int(patience)
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(float(min_delta))
        self.wait_epoch = 0
        self.best_weights = None
        self.stopped_epoch = 0
        self.save_best_model = save_best_model
        self.save_dir = None  # set by Model.fit
        if mode == "min" or (mode == "auto" and "acc" not in monitor):
            self.monitor_op = np.less
            self.min_delta = -self.min_delta
        else:
            self.monitor_op = np.greater
        self.best_value = None

    def on_train_begin(self, logs=None):
        self.wait_epoch = 0
        self.stopped_epoch = 0
        if self.baseline is not None:
            self.best_value = self.baseline
        else:
            self.best_value = np.inf if self.monitor_op == np.less else -np.inf
        self.best_weights = None

    def on_eval_end(self, logs=None):
        if logs is None or self.monitor not in logs:
            warnings.warn("[oar.callbacks.EarlyStopping] monitor should be 'loss' or a metric name logged by "
                          f"evaluation, got {self.monitor!r}")
            return
        current = _scalar_of(logs[self.monitor])
        if current is None:
            return
        if self.best_value is None:
            self.on_train_begin()
        if self.monitor_op(current - self.min_delta, self.best_value):
            self.best_value = current
            self.wait_epoch = 0
            if self.save_best_model and self.save_dir is not None:
                self.model.save(os.path.join(self.save_dir, "best_model"))
        else:
            self.wait_epoch += 1
        if self.wait_epoch >= self.patience:
            self.model.stop_training = True
            if self.verbose > 0:
                print(f"Epoch {self.stopped_epoch + 1}: Early stopping.")
                if self.save_best_model and self.save_dir is not None:
                    best = os.path.abspath(os.path.join(self.save_dir, "best_model"))
                    print(f"Best checkpoint has been saved at {best}")
        self.stopped_epoch += 1


def _scheduler_of(model):
    from ..optimizer.lr import LRScheduler as _Sched
    opt = getattr(model, "_optimizer", None)
    lr = getattr(opt, "_learning_rate", None)
    return lr if isinstance(lr, _Sched) else None


class LRScheduler(Callback):
    """Steps the optimizer's learning-rate scheduler after every batch
    (``by_step``) or every epoch (``by_epoch``).

    >>> from oar.hapi.callbacks import LRScheduler
    >>> LRScheduler(by_step=False, by_epoch=True).by_epoch
    True
    """

    def __init__(self, by_step=True, by_epoch=False):
        super().__init__()
        if by_step and by_epoch:
            raise ValueError("[oar.callbacks.LRScheduler] by_step and by_epoch are mutually exclusive")
        self.by_step = by_step
        self.by_epoch = by_epoch

    def on_epoch_end(self, epoch, logs=None):
        sched = _scheduler_of(self.model)
        if self.by_epoch and sched is not None:
            sched.step()

    def on_train_batch_end(self, step, logs=None):
        sched = _scheduler_of(self.model)
        if self.by_step and sched is not None:
            sched.step()


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` when the evaluated
    ``monitor`` has not improved for ``patience`` evaluations (float
    learning rates only), waiting ``cooldown`` evaluations after each cut and
    never going below ``min_lr``.

    >>> import oar
    >>> from oar.hapi.callbacks import ReduceLROnPlateau
    >>> class M: _optimizer = oar.optimizer.SGD(1.0, parameters=[oar.ones([1])])
    >>> cb = ReduceLROnPlateau(patience=1, factor=0.5, verbose=0); cb.set_model(M())
    >>> for loss in [1.0, 1.0, 1.0]:
    ...     cb.on_eval_end({'loss': [loss]})
    >>> M._optimizer.get_lr()
    0.25
    """

    def __init__(self, monitor="loss", factor=0.1, patience=10, verbose=1, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0):
        super().__init__()
        if not 0 <= factor < 1.0:
            raise ValueError(f"[oar.callbacks.ReduceLROnPlateau] factor must be in [0, 1), got {factor!r}")
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"[oar.callbacks.ReduceLROnPlateau] mode {mode!r} is unknown, using 'auto'")
            mode = "auto"
        self.monitor, self.factor, self.patience, self.verbose = monitor, factor, patience, verbose
        self.min_delta, self.cooldown, self.min_lr = abs(min_delta), cooldown, min_lr
        self._minimise = mode == "min" or (mode == "auto" and "acc" not in monitor)
        self.wait, self.cooldown_counter = 0, 0
        self.best = np.inf if self._minimise else -np.inf

    def _better(self, a, b):
        return a < b - self.min_delta if self._minimise else a > b + self.min_delta

    def on_train_begin(self, logs=None):
        self.wait, self.cooldown_counter = 0, 0
        self.best = np.inf if self._minimise else -np.inf

    def on_eval_end(self, logs=None):
        current = _scalar_of((logs or {}).get(self.monitor))
        if current is None:
            warnings.warn(f"[oar.callbacks.ReduceLROnPlateau] monitor {self.monitor!r} is not in the eval logs")
            return
        opt = getattr(self.model, "_optimizer", None)
        if opt is None or _scheduler_of(self.model) is not None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._better(current, self.best):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = opt.get_lr()
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    opt.set_lr(new)
                    if self.verbose > 0:
                        print(f"ReduceLROnPlateau: learning rate reduced from {old} to {new}.")
                self.cooldown_counter, self.wait = self.cooldown, 0


# ---------------------------------------------------------------- TensorBoard / VisualDL scalars

class VisualDL(Callback):
    """Writes the logged loss and metrics as TensorBoard scalars
    (``train/<name>`` per training step, ``eval/<name>`` per evaluation, at
    the epoch) to an event file in ``log_dir``; readable by TensorBoard and
    VisualDL.

    >>> import tempfile
    >>> from oar.hapi.callbacks import VisualDL
    >>> VisualDL(log_dir=tempfile.mkdtemp()).log_dir != ''
    True
    """

    def __init__(self, log_dir):
        super().__init__()
        self.log_dir = log_dir
        self.epochs = None
        self.steps = None
        self.epoch = 0
        self.train_step = 0
        self.train_metrics = []
        self.eval_metrics = []
        self.writer = None
        self._in_fit = False

    def _writer(self):
        if self.writer is None:
            from .event_writer import SummaryWriter
            self.writer = SummaryWriter(self.log_dir)
        return self.writer

    def _close(self):
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def on_train_begin(self, logs=None):
        self.epochs = self.params.get("epochs")
        self.train_metrics = self.params.get("metrics", [])
        self.steps = self.params.get("steps")
        self.train_step = 0
        self._in_fit = True

    def on_epoch_begin(self, epoch=None, logs=None):
        self.steps = self.params.get("steps")
        self.epoch = epoch

    def _updates(self, logs, mode):
        step = self.train_step if mode == "train" else self.epoch
        for k in getattr(self, f"{mode}_metrics"):
            if k in logs:
                value = _scalar_of(logs[k])
                if value is not None:
                    self._writer().add_scalar(f"{mode}/{k}", value, step)

    def on_train_batch_end(self, step, logs=None):
        self.train_step += 1
        self._updates(logs or {}, "train")

    def on_train_end(self, logs=None):
        self._close()
        self._in_fit = False

    def on_eval_begin(self, logs=None):
        self.eval_metrics = (logs or {}).get("metrics", [])

    def on_eval_end(self, logs=None):
        self._updates(logs or {}, "eval")
        if self._in_fit:
            self._writer().flush()
        else:
            self._close()


TensorBoard = VisualDL


def config_callbacks(callbacks=None, model=None, batch_size=None, epochs=None, steps=None, log_freq=2, verbose=2,
                     save_freq=1, save_dir=None, metrics=None, mode="train"):
    """The CallbackList ``Model`` runs: the user's callbacks plus a
    ProgBarLogger (when ``verbose``), an LRScheduler and a ModelCheckpoint
    unless given."""
    cbks = callbacks or []
    cbks = list(cbks) if isinstance(cbks, (list, tuple)) else [cbks]
    for c in cbks:
        if not isinstance(c, Callback):
            raise TypeError(f"[oar.Model.{'fit' if mode == 'train' else mode}] callbacks must be "
                            f"oar.callbacks.Callback instances, got {type(c).__name__}")
    if not any(isinstance(k, ProgBarLogger) for k in cbks) and verbose:
        cbks = [ProgBarLogger(log_freq, verbose=verbose)] + cbks
    if not any(isinstance(k, LRScheduler) for k in cbks):
        cbks = cbks + [LRScheduler()]
    if not any(isinstance(k, ModelCheckpoint) for k in cbks):
        cbks = cbks + [ModelCheckpoint(save_freq, save_dir)]
    for k in cbks:
        if isinstance(k, EarlyStopping):
            k.save_dir = save_dir
    cbk_list = CallbackList(cbks)
    cbk_list.set_model(model)
    params = {"batch_size": batch_size, "epochs": epochs, "steps": steps, "verbose": verbose,
              "metrics": (metrics or []) if mode != "test" else []}
    cbk_list.set_params(params)
    return cbk_list
