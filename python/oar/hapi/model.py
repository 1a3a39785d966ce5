"""``Model``: Paddle's high-level training API (``paddle.Model``).

``Model(network, inputs, labels)`` wraps a Layer; ``prepare`` sets the
optimizer, loss, metrics and mixed precision; ``fit``/``evaluate``/
``predict`` run epochs over a Dataset or DataLoader with callbacks; and
``train_batch``/``eval_batch``/``predict_batch`` run one batch.

A batch (one DataLoader item, nested lists flattened) is split into the
network's inputs and the labels: the first ``len(inputs)`` entries are
inputs when ``inputs`` specs were given, otherwise all but the last
``len(labels)`` (all but the last one when neither was given). The loss is
called as ``loss(*outputs, *labels)``; each metric as
``metric.update(*metric.compute(*outputs, *labels))``.
"""
import contextlib
import inspect
import numbers
import os
import warnings

import numpy as np

from .. import _C
from ..serialization import _PARAM_NAMES_KEY  # Paddle's structured -> parameter names key
from ..static import InputSpec
from .callbacks import EarlyStopping, config_callbacks

__all__ = ["Model", "InputSpec"]

def _is_spec(obj):
    return hasattr(obj, "shape") and hasattr(obj, "dtype")


def _verify_spec(specs, what):
    if specs is None:
        return None
    if isinstance(specs, dict):
        specs = list(specs.values())
    elif not isinstance(specs, (list, tuple)):
        specs = [specs]
    for s in specs:
        if not _is_spec(s):
            raise TypeError(f"[oar.Model] {what} must be InputSpec-like objects (with .shape and .dtype), "
                            f"got {type(s).__name__}")
    return list(specs)


def _to_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _flatten(data):
    out = []
    for d in _to_list(data):
        if isinstance(d, (list, tuple)):
            out.extend(_flatten(d))
        else:
            out.append(d)
    return out


def _to_tensor(x):
    """A batch element as a tensor on the current device (oar.set_device), where the model's
    parameters are: the DataLoader's batches are made on the CPU."""
    if isinstance(x, _C.Tensor):
        kind, index = _C._default_device()
        return x if tuple(_C._device_index(x)) == (kind, index) else _C._to_device(x, kind, index)
    from ..creation import to_tensor
    return to_tensor(np.asarray(x))


def _to_numpy(x):
    return x.numpy() if isinstance(x, _C.Tensor) else np.asarray(x)


def _loss_numpy(x):
    if isinstance(x, _C.Tensor) and str(x.dtype) in ("paddle.float16", "paddle.bfloat16"):
        x = x.astype("float32")  # NumPy has no bfloat16; report 16-bit losses as float32
    return _to_numpy(x)


def _positive_int(value, name, api, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"[oar.Model.{api}] {name} must be a positive integer, got {value!r}")
    return int(value)


def _forward_arity(network):
    """Number of required positional arguments of network.forward, or None with *args."""
    try:
        sig = inspect.signature(network.forward)
    except (TypeError, ValueError):
        return None
    n = 0
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            return None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            n += 1
    return n


_AMP_KEYS = {"level", "dtype", "init_loss_scaling", "incr_ratio", "decr_ratio", "incr_every_n_steps",
             "decr_every_n_nan_or_inf", "use_dynamic_loss_scaling", "custom_white_list", "custom_black_list",
             "use_fp16_guard", "use_promote"}


class Model:
    """A network with its training loop (``paddle.Model``).

    >>> import numpy as np
    >>> import oar
    >>> from oar.hapi import Model
    >>> from oar.io import TensorDataset
    >>> from oar.metric import Accuracy
    >>> _ = oar.seed(0)
    >>> x = np.random.RandomState(0).randn(64, 2).astype('float32')
    >>> y = (x[:, :1] > 0).astype('int64')
    >>> model = Model(oar.nn.Linear(2, 2))
    >>> model.prepare(oar.optimizer.Adam(0.1, parameters=model.parameters()), oar.nn.CrossEntropyLoss(),
    ...               Accuracy())
    >>> model.fit(TensorDataset([x, y]), batch_size=16, epochs=5, verbose=0)
    >>> model.evaluate(TensorDataset([x, y]), batch_size=64, verbose=0)['acc'] > 0.9
    True
    """

    def __init__(self, network, inputs=None, labels=None):
        from ..nn import Layer
        if not isinstance(network, Layer):
            raise TypeError(f"[oar.Model] network must be an oar.nn.Layer, got {type(network).__name__}")
        self.network = network
        self._inputs = _verify_spec(inputs, "inputs")
        self._labels = _verify_spec(labels, "labels")
        self._loss = None
        self._metrics = []
        self._optimizer = None
        self._prepared = False
        self._amp_level = "O0"
        self._amp_dtype = "float16"
        self._amp_lists = (None, None)
        self._scaler = None
        self._accumulate = 1
        self.num_iters = None
        self._iters_done = 0
        self.stop_training = False
        self.mode = "train"

    # ---------------------------------------------------------------- setup
    def prepare(self, optimizer=None, loss=None, metrics=None, amp_configs=None):
        """Sets the optimizer, the loss (a Layer or callable taking
        ``(*outputs, *labels)``), the metrics (``oar.metric.Metric``
        instances) and mixed precision: ``amp_configs`` is ``'O1'``/``'O2'``
        or a dict with ``level``, ``dtype`` (``'float16'``, which also turns
        on a GradScaler, or ``'bfloat16'``) and the GradScaler's arguments.

        >>> import oar
        >>> from oar.hapi import Model
        >>> m = Model(oar.nn.Linear(2, 2))
        >>> m.prepare(loss=oar.nn.CrossEntropyLoss(), metrics=oar.metric.Accuracy(topk=(1, 2)))
        >>> m._metrics_name()
        ['loss', 'acc_top1', 'acc_top2']
        """
        from ..metric import Metric
        from ..optimizer import Optimizer
        if optimizer is not None and not isinstance(optimizer, Optimizer):
            raise TypeError(f"[oar.Model.prepare] optimizer must be an oar.optimizer.Optimizer, got "
                            f"{type(optimizer).__name__}")
        if loss is not None and not callable(loss):
            raise TypeError(f"[oar.Model.prepare] loss must be an oar.nn.Layer or a callable, got "
                            f"{type(loss).__name__}")
        metrics = _to_list(metrics)
        for m in metrics:
            if not isinstance(m, Metric):
                raise TypeError(f"[oar.Model.prepare] metrics must be oar.metric.Metric instances, got "
                                f"{type(m).__name__}")
        self._optimizer = optimizer
        self._loss = loss
        self._metrics = metrics
        self._prepare_amp(amp_configs)
        self._prepared = True

    def _prepare_amp(self, amp_configs):
        api = "[oar.Model.prepare]"
        if amp_configs is None:
            cfg = {"level": "O0"}
        elif isinstance(amp_configs, str):
            cfg = {"level": amp_configs}
        elif isinstance(amp_configs, dict):
            unknown = set(amp_configs) - _AMP_KEYS
            if unknown:
                raise ValueError(f"{api} unknown amp_configs keys {sorted(unknown)}; allowed: {sorted(_AMP_KEYS)}")
            cfg = dict(amp_configs)
            cfg.setdefault("level", "O1")
        else:
            raise TypeError(f"{api} amp_configs must be None, a level string or a dict, got "
                            f"{type(amp_configs).__name__}")
        level = cfg.pop("level")
        if level not in ("O0", "O1", "O2"):
            raise ValueError(f"{api} amp level must be 'O0', 'O1' or 'O2', got {level!r}")
        dtype = str(cfg.pop("dtype", "float16")).replace("paddle.", "")
        if dtype not in ("float16", "bfloat16"):
            raise ValueError(f"{api} amp dtype must be 'float16' or 'bfloat16', got {dtype!r}")
        self._amp_level, self._amp_dtype = level, dtype
        self._amp_lists = (cfg.pop("custom_white_list", None), cfg.pop("custom_black_list", None))
        cfg.pop("use_fp16_guard", None)
        cfg.pop("use_promote", None)
        self._scaler = None
        if level == "O0":
            return
        from .. import amp
        if level == "O2":
            if self._optimizer is not None:
                amp.decorate(self.network, self._optimizer, level="O2", dtype=dtype)
            else:
                amp.decorate(self.network, level="O2", dtype=dtype)
        if dtype == "float16":  # bfloat16 has float32's range: no loss scaling needed
            self._scaler = amp.GradScaler(**cfg)
        elif cfg:
            warnings.warn(f"{api} loss-scaling options {sorted(cfg)} are ignored with dtype bfloat16")

    def _amp_guard(self):
        if self._amp_level == "O0":
            return contextlib.nullcontext()  # leave any autocast the caller opened in force
        from .. import amp
        white, black = self._amp_lists
        return amp.auto_cast(enable=True, custom_white_list=white, custom_black_list=black, level=self._amp_level,
                             dtype=self._amp_dtype)

    def parameters(self, *args, **kwargs):
        """The network's parameters.

        >>> import oar
        >>> from oar.hapi import Model
        >>> len(Model(oar.nn.Linear(2, 3)).parameters())
        2
        """
        return self.network.parameters(*args, **kwargs)

    def _metrics_name(self):
        names = ["loss"] if self._loss is not None else []
        for m in self._metrics:
            names.extend(_to_list(m.name()))
        return names

    # ---------------------------------------------------------------- one batch
    def _check_train_ready(self, api):
        if not self._prepared:
            raise RuntimeError(f"[oar.Model.{api}] the model is not prepared: call prepare(optimizer, loss) first")
        if self._optimizer is None or self._loss is None:
            raise RuntimeError(f"[oar.Model.{api}] training needs an optimizer and a loss: pass both to prepare()")

    def _forward(self, inputs):
        return self.network(*[_to_tensor(x) for x in _to_list(inputs)])

    def _update_metrics(self, outputs, labels):
        results = []
        for metric in self._metrics:
            computed = metric.compute(*(_to_list(outputs) + labels))
            results.append(metric.update(*[_to_numpy(m) for m in _to_list(computed)]))
        return results

    def train_batch(self, inputs, labels=None, update=True):
        """Runs forward, backward and (with ``update``) an optimizer step on
        one batch. Returns the losses as NumPy arrays, and the metrics' batch
        values when there are metrics: ``([loss], [metric values])``.

        >>> import oar
        >>> from oar.hapi import Model
        >>> m = Model(oar.nn.Linear(2, 1))
        >>> m.prepare(oar.optimizer.SGD(parameters=m.parameters()), oar.nn.MSELoss())
        >>> loss = m.train_batch([oar.ones([4, 2])], [oar.zeros([4, 1])])
        >>> len(loss), loss[0].shape
        (1, ())
        """
        self._check_train_ready("train_batch")
        self.network.train()
        self.mode = "train"
        labels = [_to_tensor(y) for y in _to_list(labels)]
        with self._amp_guard():
            outputs = self._forward(inputs)
            losses = _to_list(self._loss(*(_to_list(outputs) + labels)))
        if not losses:
            raise ValueError("[oar.Model.train_batch] the loss function returned nothing")
        final_loss = losses[0]
        for extra in losses[1:]:
            final_loss = final_loss + extra
        if self._scaler is not None:
            scaled = self._scaler.scale(final_loss)
            scaled.backward()
            if update:
                self._scaler.step(self._optimizer)
                self._scaler.update()
                self._optimizer.clear_grad()
        else:
            final_loss.backward()
            if update:
                self._optimizer.step()
                self._optimizer.clear_grad()
        metrics = self._update_metrics(outputs, labels)
        loss_values = [_loss_numpy(x) for x in losses]
        return (loss_values, metrics) if metrics else loss_values

    def eval_batch(self, inputs, labels=None):
        """Runs forward (no gradients) on one batch and updates the metrics.
        Returns ``([loss], [metric values])``, ``[loss]`` or the metric values.

        >>> import oar
        >>> from oar.hapi import Model
        >>> m = Model(oar.nn.Linear(2, 2))
        >>> m.prepare(loss=oar.nn.CrossEntropyLoss(), metrics=oar.metric.Accuracy())
        >>> loss, (acc,) = m.eval_batch([oar.ones([4, 2])], [oar.zeros([4, 1], 'int64')])
        >>> acc in (0.0, 1.0)
        True
        """
        from ..autograd import no_grad
        self.network.eval()
        self.mode = "eval"
        labels = [_to_tensor(y) for y in _to_list(labels)]
        with no_grad(), self._amp_guard():
            outputs = self._forward(inputs)
            losses = _to_list(self._loss(*(_to_list(outputs) + labels))) if self._loss is not None else []
        metrics = self._update_metrics(outputs, labels)
        loss_values = [_loss_numpy(x) for x in losses]
        if self._loss is not None and metrics:
            return loss_values, metrics
        if self._loss is not None:
            return loss_values
        return metrics

    def predict_batch(self, inputs):
        """The network's outputs on one batch, as a list of NumPy arrays.

        >>> import oar
        >>> from oar.hapi import Model
        >>> m = Model(oar.nn.Linear(2, 3))
        >>> [o.shape for o in m.predict_batch([oar.ones([4, 2])])]
        [(4, 3)]
        """
        from ..autograd import no_grad
        self.network.eval()
        self.mode = "test"
        with no_grad(), self._amp_guard():
            outputs = self._forward(inputs)
        return [_to_numpy(o) for o in _to_list(outputs)]

    # ---------------------------------------------------------------- loops
    def _loader(self, data, api, batch_size, shuffle, drop_last, num_workers):
        from ..io import DataLoader, Dataset, IterableDataset
        if isinstance(data, Dataset):
            if isinstance(data, IterableDataset):
                shuffle = False
            return DataLoader(data, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                              num_workers=num_workers)
        if isinstance(data, DataLoader) or hasattr(data, "__iter__"):
            return data
        raise TypeError(f"[oar.Model.{api}] data must be an oar.io.Dataset, a DataLoader or an iterable of "
                        f"batches, got {type(data).__name__}")

    @staticmethod
    def _len(loader):
        try:
            return len(loader)
        except TypeError:
            return None

    def _split(self, data, mode):
        n = len(data)
        if self._inputs is not None:
            n_in = len(self._inputs)
        elif mode == "predict":
            arity = _forward_arity(self.network)
            n_in = n if arity is None else min(max(arity, 1), n)
        elif self._labels is not None:
            n_in = n - len(self._labels)
        else:
            n_in = n - 1 if n > 1 else n
        if n_in < 1 or n_in > n:
            raise ValueError(f"[oar.Model.{'fit' if mode == 'train' else mode}] a batch of {n} tensors cannot "
                             f"be split into {n_in} inputs and labels")
        return data[:n_in], data[n_in:]

    def _run_one_epoch(self, loader, callbacks, mode, logs=None, max_steps=None):
        logs = {} if logs is None else logs
        outputs = []
        steps = self._len(loader)
        for step, data in enumerate(loader):
            if max_steps is not None and step >= max_steps:
                break
            data = _flatten(data)
            if not data:
                raise ValueError(f"[oar.Model.{mode}] got an empty batch")
            first = data[0]
            batch_size = first.shape[0] if len(getattr(first, "shape", ())) else 1
            callbacks.on_batch_begin(mode, step, logs)
            inputs, labels = self._split(data, mode)
            if mode != "predict":
                if mode == "train":
                    update = (step + 1) % self._accumulate == 0 or (steps is not None and step + 1 == steps)
                    outs = self.train_batch(inputs, labels, update=update)
                else:
                    outs = self.eval_batch(inputs, labels)
                if self._metrics and self._loss is not None:
                    values = [[float(np.asarray(x).reshape(-1)[0]) for x in outs[0]]]
                elif self._loss is not None:
                    values = [[float(np.asarray(x).reshape(-1)[0]) for x in outs]]
                else:
                    values = []
                for metric in self._metrics:
                    values.extend(_to_list(metric.accumulate()))
                for k, v in zip(self._metrics_name(), values):
                    logs[k] = v
            else:
                outputs.append(self.predict_batch(inputs))
            logs["step"] = step
            logs["batch_size"] = int(batch_size)
            callbacks.on_batch_end(mode, step, logs)
            if mode == "train":
                self._iters_done += 1
        for metric in self._metrics:
            metric.reset()
        if mode == "predict":
            return logs, outputs
        return logs

    def fit(self, train_data=None, eval_data=None, batch_size=1, epochs=1, eval_freq=1, log_freq=10, save_dir=None,
            save_freq=1, verbose=2, drop_last=False, shuffle=True, num_workers=0, callbacks=None,
            accumulate_grad_batches=1, num_iters=None):
        """Trains for ``epochs`` epochs, evaluating on ``eval_data`` every
        ``eval_freq`` epochs (from the first), saving to ``save_dir`` every
        ``save_freq`` epochs, stepping the optimizer every
        ``accumulate_grad_batches`` batches, and stopping after ``num_iters``
        batches if given. Data is a Dataset (batched here with ``batch_size``,
        ``shuffle``, ``drop_last``, ``num_workers``) or a DataLoader.

        >>> import numpy as np
        >>> import oar
        >>> from oar.hapi import Model
        >>> from oar.io import TensorDataset
        >>> ds = TensorDataset([np.ones([6, 2], 'float32'), np.ones([6, 1], 'float32')])
        >>> m = Model(oar.nn.Linear(2, 1))
        >>> m.prepare(oar.optimizer.SGD(0.01, parameters=m.parameters()), oar.nn.MSELoss())
        >>> m.fit(ds, batch_size=3, epochs=2, log_freq=1)  # doctest: +ELLIPSIS
        Epoch 1/2
        step 1/2 - loss: ... - ...
        step 2/2 - loss: ... - ...
        Epoch 2/2
        step 1/2 - loss: ... - ...
        step 2/2 - loss: ... - ...
        """
        if train_data is None:
            raise ValueError("[oar.Model.fit] train_data must be given")
        self._check_train_ready("fit")
        batch_size = _positive_int(batch_size, "batch_size", "fit")
        epochs = _positive_int(epochs, "epochs", "fit")
        eval_freq = _positive_int(eval_freq, "eval_freq", "fit")
        log_freq = _positive_int(log_freq, "log_freq", "fit")
        save_freq = _positive_int(save_freq, "save_freq", "fit")
        self._accumulate = _positive_int(accumulate_grad_batches, "accumulate_grad_batches", "fit")
        num_iters = _positive_int(num_iters, "num_iters", "fit", allow_none=True)
        if verbose not in (0, 1, 2, 3):
            raise ValueError(f"[oar.Model.fit] verbose must be 0, 1 or 2, got {verbose!r}")
        train_loader = self._loader(train_data, "fit", batch_size, shuffle, drop_last, num_workers)
        eval_loader = None
        if eval_data is not None:
            eval_loader = self._loader(eval_data, "fit", batch_size, False, False, num_workers)
        steps = self._len(train_loader)
        self.num_iters, self._iters_done = num_iters, 0
        if num_iters is not None and steps:
            epochs = -(-num_iters // steps)  # as in Paddle, num_iters decides the number of epochs
            steps = min(num_iters, steps)
        cbks = config_callbacks(callbacks, model=self, batch_size=batch_size, epochs=epochs, steps=steps,
                                log_freq=log_freq, save_freq=save_freq, save_dir=save_dir, verbose=verbose,
                                metrics=self._metrics_name())
        if any(isinstance(k, EarlyStopping) for k in cbks) and eval_loader is None:
            warnings.warn("[oar.Model.fit] EarlyStopping needs eval_data; it will not stop training")
        self.stop_training = False
        logs = {}
        try:
            cbks.on_begin("train")
            for epoch in range(epochs):
                cbks.on_epoch_begin(epoch)
                remaining = None if num_iters is None else num_iters - self._iters_done
                logs = self._run_one_epoch(train_loader, cbks, "train", max_steps=remaining)
                cbks.on_epoch_end(epoch, logs)
                if eval_loader is not None and epoch % eval_freq == 0:
                    self._run_eval(eval_loader, cbks, None)
                if self.stop_training or (num_iters is not None and self._iters_done >= num_iters):
                    break
            cbks.on_end("train", logs)
        finally:
            self.num_iters = None

    def _run_eval(self, loader, cbks, num_iters):
        steps = self._len(loader)
        if num_iters is not None and steps is not None:
            steps = min(num_iters, steps)
        cbks.on_begin("eval", {"steps": steps, "metrics": self._metrics_name()})
        logs = self._run_one_epoch(loader, cbks, "eval", max_steps=num_iters)
        cbks.on_end("eval", logs)
        return logs

    def evaluate(self, eval_data, batch_size=1, log_freq=10, verbose=2, num_workers=0, callbacks=None,
                 num_iters=None):
        """Evaluates the loss and metrics over ``eval_data``; returns
        ``{'loss': [last batch's loss], <metric name>: value, ...}``.

        >>> import numpy as np
        >>> import oar
        >>> from oar.hapi import Model
        >>> from oar.io import TensorDataset
        >>> m = Model(oar.nn.Linear(2, 2))
        >>> m.prepare(metrics=oar.metric.Accuracy())
        >>> ds = TensorDataset([np.ones([4, 2], 'float32'), np.zeros([4, 1], 'int64')])
        >>> sorted(m.evaluate(ds, batch_size=2, verbose=0))
        ['acc']
        """
        if not self._prepared:
            raise RuntimeError("[oar.Model.evaluate] the model is not prepared: call prepare(loss=..., "
                               "metrics=...) first")
        batch_size = _positive_int(batch_size, "batch_size", "evaluate")
        log_freq = _positive_int(log_freq, "log_freq", "evaluate")
        num_iters = _positive_int(num_iters, "num_iters", "evaluate", allow_none=True)
        loader = self._loader(eval_data, "evaluate", batch_size, False, False, num_workers)
        cbks = config_callbacks(callbacks, model=self, log_freq=log_freq, verbose=verbose,
                                metrics=self._metrics_name(), mode="eval")
        logs = self._run_eval(loader, cbks, num_iters)
        return {k: logs[k] for k in self._metrics_name() if k in logs}

    def predict(self, test_data, batch_size=1, num_workers=0, stack_outputs=False, verbose=1, callbacks=None):
        """The network's outputs over ``test_data``: a list with one entry per
        network output, each a list of per-batch NumPy arrays, or one array
        per output with ``stack_outputs``.

        >>> import numpy as np
        >>> import oar
        >>> from oar.hapi import Model
        >>> from oar.io import TensorDataset
        >>> m = Model(oar.nn.Linear(2, 3))
        >>> out = m.predict(TensorDataset([np.ones([5, 2], 'float32')]), batch_size=2, stack_outputs=True, verbose=0)
        >>> out[0].shape
        (5, 3)
        """
        batch_size = _positive_int(batch_size, "batch_size", "predict")
        loader = self._loader(test_data, "predict", batch_size, False, False, num_workers)
        cbks = config_callbacks(callbacks, model=self, verbose=verbose, metrics=self._metrics_name(),
                                mode="test")
        cbks.on_begin("predict", {"steps": self._len(loader)})
        logs, outputs = self._run_one_epoch(loader, cbks, "predict")
        outputs = [list(o) for o in zip(*outputs)]
        if stack_outputs:
            outputs = [np.vstack(o) if o[0].ndim else np.stack(o) for o in outputs]
        cbks.on_end("predict", logs)
        return outputs

    # ---------------------------------------------------------------- save / load / summary
    def save(self, path, training=True):
        """Saves the parameters to ``path + '.pdparams'`` and the optimizer
        state to ``path + '.pdopt'`` (and the loss scaler's to
        ``path + '.pdscaler'`` under float16 AMP).

        >>> import os, tempfile
        >>> import oar
        >>> from oar.hapi import Model
        >>> m = Model(oar.nn.Linear(2, 3))
        >>> m.prepare(oar.optimizer.Adam(parameters=m.parameters()))
        >>> path = os.path.join(tempfile.mkdtemp(), 'ckpt', 'model')
        >>> m.save(path)
        >>> sorted(os.listdir(os.path.dirname(path)))
        ['model.pdopt', 'model.pdparams']
        """
        from ..serialization import save as oar_save
        if not isinstance(path, (str, os.PathLike)) or not os.path.basename(str(path)):
            raise ValueError(f"[oar.Model.save] path must name a file prefix like 'dir/model', got {path!r}")
        path = str(path)
        if not training:
            jit = getattr(__import__("oar"), "jit", None)
            if jit is None or not hasattr(jit, "save"):
                raise NotImplementedError("[oar.Model.save] training=False exports an inference model through "
                                          "oar.jit.save, which this build does not provide")
            jit.save(self.network, path, input_spec=self._inputs)
            return
        dirname = os.path.dirname(path)
        if dirname:
            os.makedirs(dirname, exist_ok=True)
        params = dict(self.network.state_dict())
        names = {k: v.name for k, v in self.network.named_parameters() if isinstance(getattr(v, "name", None), str)}
        params[_PARAM_NAMES_KEY] = names
        oar_save(params, path + ".pdparams")
        if self._optimizer is not None:
            oar_save(self._optimizer.state_dict(), path + ".pdopt")
        if self._scaler is not None:
            oar_save(self._scaler.state_dict(), path + ".pdscaler")

    def load(self, path, skip_mismatch=False, reset_optimizer=False):
        """Loads parameters (and, unless ``reset_optimizer``, the optimizer
        state) written by ``save``. Missing or wrongly shaped parameters raise
        ValueError, or are skipped with a warning when ``skip_mismatch``.

        >>> import os, tempfile
        >>> import oar
        >>> from oar.hapi import Model
        >>> a, b = Model(oar.nn.Linear(2, 3)), Model(oar.nn.Linear(2, 3))
        >>> path = os.path.join(tempfile.mkdtemp(), 'model')
        >>> a.save(path); b.load(path)
        >>> bool((a.network.weight == b.network.weight).all())
        True
        """
        from ..serialization import load as oar_load
        path = str(path)
        base, ext = os.path.splitext(path)
        if ext in (".pdparams", ".pdopt", ".pdmodel"):
            path = base
        params_file = path + ".pdparams"
        if not os.path.exists(params_file):
            raise FileNotFoundError(f"[oar.Model.load] parameters file {params_file!r} does not exist")
        state = oar_load(params_file, keep_name_table=True)
        if not isinstance(state, dict):
            raise ValueError(f"[oar.Model.load] {params_file!r} does not hold a state dict")
        saved_names = state.pop(_PARAM_NAMES_KEY, None)
        matched = {}
        for key, param in self.network.state_dict().items():
            value = state.get(key)
            err = None
            if value is None:
                err = f"{key} is not found in the provided file"
            elif list(value.shape) != list(param.shape):
                err = f"{key} receives a shape {list(value.shape)}, but the expected shape is {list(param.shape)}"
            if err is not None:
                if not skip_mismatch:
                    raise ValueError(f"[oar.Model.load] {err}")
                warnings.warn(f"[oar.Model.load] skip loading {key}: {err}")
                continue
            matched[key] = value
        self.network.set_state_dict(matched)
        if reset_optimizer or self._optimizer is None:
            return
        opt_file = path + ".pdopt"
        if os.path.exists(opt_file):
            opt_state = oar_load(opt_file)
            if isinstance(saved_names, dict):
                opt_state = self._rename_opt_state(opt_state, saved_names)
            self._optimizer.set_state_dict(opt_state)
        scaler_file = path + ".pdscaler"
        if self._scaler is not None and os.path.exists(scaler_file):
            self._scaler.load_state_dict(oar_load(scaler_file))

    def _rename_opt_state(self, opt_state, saved_names):
        """Optimizer state keys start with parameter names, which differ
        between two constructions of the same network; map the saved names to
        this network's through the structured names."""
        current = {k: v.name for k, v in self.network.named_parameters() if isinstance(getattr(v, "name", None), str)}
        rename = {old: current[k] for k, old in saved_names.items() if k in current and isinstance(old, str)}
        if all(old == new for old, new in rename.items()):
            return opt_state
        olds = sorted(rename, key=len, reverse=True)
        out = {}
        for key, value in opt_state.items():
            new_key = key
            for old in olds:
                if key.startswith(old + "_"):
                    new_key = rename[old] + key[len(old):]
                    break
            out[new_key] = value
        return out

    def summary(self, input_size=None, dtype=None):
        """Prints the network's layers, output shapes and parameter counts
        (see :func:`oar.hapi.summary`); ``input_size`` defaults to the
        ``inputs`` specs.

        >>> import oar
        >>> from oar.hapi import Model, InputSpec
        >>> m = Model(oar.nn.Linear(4, 2), inputs=[InputSpec([None, 4], 'float32', 'x')])
        >>> m.summary()['total_params']  # doctest: +ELLIPSIS
        --...
        10
        """
        from .summary import summary
        size = input_size if input_size is not None else self._inputs
        if size is None:
            raise ValueError("[oar.Model.summary] input_size must be given when the Model has no inputs specs")
        return summary(self.network, size, dtypes=dtype)
