"""The rest of ``paddle.static``: variables and parameters, places, ``Print``,
metrics (``accuracy``, ``auc``), ``ExponentialMovingAverage``,
``WeightNormParamAttr`` and ``CompiledProgram``.

Values that outlive one run (auc's statistics, moving averages) are tensors
outside the program, as parameters are (Note [static mode] in program.py):
the program reads them through its bindings and each run updates them
after it has computed, through the program's run hooks.
"""
import contextlib
import multiprocessing
import os

import numpy as np

from .. import _C
from ..autograd import no_grad
from ..framework import _dtype
from ..framework_param import ParamAttr, _unique_name
from . import program as _program
from .program import _api_error, _recording_paused, default_main_program

__all__ = ["Variable", "create_global_var", "create_parameter", "cpu_places", "cuda_places", "xpu_places",
           "device_guard", "Print", "accuracy", "auc", "ctr_metric_bundle", "ExponentialMovingAverage",
           "WeightNormParamAttr", "CompiledProgram"]

Tensor = _C.Tensor

# Paddle's static Variable: oar's static values are Tensors (Note [static mode]).
Variable = Tensor


def _shape_list(shape, api):
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = [shape]
    if not isinstance(shape, (list, tuple)) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                       for d in shape):
        raise _api_error(api, f"shape must be a list of ints >= 0, got {shape!r}", TypeError)
    return list(shape)


def create_global_var(shape, value, dtype, persistable=False, force_cpu=False, name=None):
    """A tensor of ``shape`` filled with ``value`` that programs read as a variable, not as a constant.

    It is made outside the recording and bound by the programs that use it
    (under ``name``), so changing its value changes what later runs see.
    It gets no gradient.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> scale = oar.static.create_global_var([1], 2.0, "float32", persistable=True, name="scale")
    >>> y = x * scale
    >>> exe = oar.static.Executor()
    >>> exe.run(feed={"x": np.ones((1, 2), np.float32)}, fetch_list=[y])[0].tolist()
    [[2.0, 2.0]]
    >>> scale.set_value(np.array([3.0], np.float32))
    >>> exe.run(feed={"x": np.ones((1, 2), np.float32)}, fetch_list=[y])[0].tolist()
    [[3.0, 3.0]]
    >>> oar.disable_static()
    """
    api = "create_global_var"
    dims = _shape_list(shape, api)
    if not isinstance(value, (int, float, bool, np.number)):
        raise _api_error(api, f"value must be a number, got {type(value).__name__}", TypeError)
    try:
        dt = _dtype(dtype)
    except (TypeError, ValueError) as e:
        raise _api_error(api, f"dtype must be an oar dtype or its name, got {dtype!r}", TypeError) from e
    if name is not None and not isinstance(name, str):
        raise _api_error(api, f"name must be a str or None, got {type(name).__name__}", TypeError)
    with _recording_paused():
        t = _C.full(dims, value, dt)
    t.stop_gradient = True
    t.name = name or _unique_name("global_var")
    t.persistable = bool(persistable)
    t.trainable = False
    if _program._state.static:
        _program._name_parameter(t)
    return t


def create_parameter(shape, dtype, name=None, attr=None, is_bias=False, default_initializer=None):
    """A new trainable parameter, initialised once outside the program (as ``oar.create_parameter``).

    Programs that read it bind it, so ``append_backward`` and optimizers train it.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> w = oar.static.create_parameter([2, 1], "float32", default_initializer=oar.nn.initializer.Constant(1.0))
    >>> loss = oar.matmul(x, w).sum()
    >>> (p, g), = oar.static.append_backward(loss)
    >>> p is w
    True
    >>> oar.static.Executor().run(feed={"x": np.ones((3, 2), np.float32)}, fetch_list=[g])[0].tolist()
    [[3.0], [3.0]]
    >>> oar.disable_static()
    """
    from ._nn_common import _make_parameter

    return _make_parameter(shape, dtype, name, attr, is_bias, default_initializer)


# ---------------------------------------------------------------- places


def cpu_places(device_count=None):
    """``device_count`` CPU places (default: the CPU_NUM environment variable, else the number of cores).

    >>> import oar
    >>> oar.static.cpu_places(2)
    [Place(cpu), Place(cpu)]
    """
    from .. import CPUPlace

    if device_count is None:
        env = os.environ.get("CPU_NUM")
        device_count = int(env) if env and env.isdigit() else multiprocessing.cpu_count()
    if isinstance(device_count, bool) or not isinstance(device_count, int) or device_count <= 0:
        raise _api_error("cpu_places", f"device_count must be a positive int, got {device_count!r}")
    return [CPUPlace() for _ in range(device_count)]


def cuda_places(device_ids=None):
    """CUDA places for ``device_ids`` (default: every visible GPU).

    >>> import oar
    >>> n = oar.device.cuda.device_count()
    >>> len(oar.static.cuda_places()) == n if n else True
    True
    """
    from .. import CUDAPlace
    from ..device import cuda

    count = cuda.device_count()
    if device_ids is None:
        if count == 0:
            raise _api_error("cuda_places", "no CUDA device is available", RuntimeError)
        device_ids = list(range(count))
    if isinstance(device_ids, int) and not isinstance(device_ids, bool):
        device_ids = [device_ids]
    ids = list(device_ids)
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < count:
            raise _api_error("cuda_places", f"device ids must be ints in [0, {count}) (visible GPUs), got {i!r}")
    return [CUDAPlace(i) for i in ids]


def xpu_places(device_ids=None):
    """Kunlun XPU places. oar has no XPU device, so this raises RuntimeError, as Paddle does when
    built without XPU.

    >>> import oar
    >>> try:
    ...     oar.static.xpu_places()
    ... except RuntimeError as e:
    ...     print(str(e)[:30])
    [oar.static.xpu_places] oar ha
    """
    raise _api_error("xpu_places", "oar has no XPU device (it runs on CPU and CUDA GPUs)", RuntimeError)


@contextlib.contextmanager
def device_guard(device=None):
    """Inside the block, new tensors (parameters, constants) are made on ``device`` ("cpu", "gpu" or "gpu:N").

    oar runs each recorded op where its inputs are, so this places what is
    created inside the block; ``None`` leaves the device as it is.

    >>> import oar
    >>> with oar.static.device_guard("cpu"):
    ...     oar.ones([1]).place
    Place(cpu)
    """
    from .. import device as _device

    if device is None:
        yield
        return
    if not isinstance(device, str):
        raise _api_error("device_guard", f"device must be 'cpu', 'gpu', 'gpu:N' or None, got {device!r}", TypeError)
    kind = device.split(":")[0]
    if kind not in ("cpu", "gpu"):
        raise _api_error("device_guard", f"device must be 'cpu', 'gpu', 'gpu:N' or None, got {device!r}")
    previous = _device.get_device()
    _device.set_device(device)
    try:
        yield
    finally:
        _device.set_device(previous)


# ---------------------------------------------------------------- Print


def Print(input, first_n=-1, message=None, summarize=20, print_tensor_name=True, print_tensor_type=True,
          print_tensor_shape=True, print_tensor_layout=True, print_tensor_lod=True, print_phase="both"):
    """Prints ``input``'s value each time a program that computes it runs; returns ``input``.

    ``first_n`` caps how many runs print (-1: all), ``summarize`` how many
    elements (-1: all); ``message`` prefixes the text. Values print after the
    run. Outside static mode the value prints at once. The layout and LoD
    flags are accepted for Paddle compatibility (oar tensors have neither);
    ``print_phase`` "backward" prints nothing, as the gradient of a printed
    value is not a value of the program.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.Print(x * 2.0, message="doubled: ", print_tensor_name=False)
    >>> _ = oar.static.Executor().run(feed={"x": np.ones((1, 2), np.float32)}, fetch_list=[y])
    doubled: 
      - shape: [1, 2]
      - dtype: float32
      - data: [2.0, 2.0]
    >>> oar.disable_static()
    """
    api = "Print"
    if not isinstance(input, Tensor):
        raise _api_error(api, f"input must be a Tensor, got {type(input).__name__}", TypeError)
    if print_phase not in ("forward", "backward", "both"):
        raise _api_error(api, f"print_phase must be 'forward', 'backward' or 'both', got {print_phase!r}")
    for what, v in (("first_n", first_n), ("summarize", summarize)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise _api_error(api, f"{what} must be an int, got {v!r}", TypeError)
    if print_phase == "backward":
        return input
    name = getattr(input, "name", None)
    count = [0]

    def show(value):
        if 0 <= first_n <= count[0]:
            return
        count[0] += 1
        head = message or ""
        lines = [f"{head}Variable: {name or 'tensor'}" if print_tensor_name else head]
        if print_tensor_shape:
            lines.append(f"  - shape: {list(value.shape)}")
        if print_tensor_type:
            lines.append(f"  - dtype: {str(value.dtype).split('.')[-1]}")
        flat = value.numpy().reshape(-1)
        n = flat.size if summarize < 0 else min(summarize, flat.size)
        lines.append(f"  - data: {flat[:n].tolist()}")
        print("\n".join(lines), flush=True)

    if _program._state.static:
        default_main_program()._root()._hooks.append((input, show))
    else:
        show(input)
    return input


# ---------------------------------------------------------------- metrics


def accuracy(input, label, k=1, correct=None, total=None):
    """Top-k accuracy of scores ``input`` [N, C] against labels [N, 1], as a float32 0-D value of the program.

    ``correct`` and ``total`` are accepted for Paddle compatibility; the
    counts are not written into them.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.static.data("y", [None, 1], "int64")
    >>> acc = oar.static.accuracy(x, y)
    >>> feed = {"x": np.array([[0.1, 0.9], [0.8, 0.2]], np.float32), "y": np.array([[1], [1]])}
    >>> float(oar.static.Executor().run(feed=feed, fetch_list=[acc])[0])
    0.5
    >>> oar.disable_static()
    """
    from .. import topk

    api = "accuracy"
    if not isinstance(input, Tensor) or not isinstance(label, Tensor):
        raise _api_error(api, f"input and label must be Tensors, got {type(input).__name__} and "
                              f"{type(label).__name__}", TypeError)
    shape = list(_program._BUILTIN_SHAPE.__get__(input))
    if isinstance(k, bool) or not isinstance(k, int) or k < 1 or len(shape) != 2 or shape[1] < k:
        raise _api_error(api, f"input must be [N, C] with C >= k and k a positive int; got shape {shape} and "
                              f"k={k!r}")
    _, idx = topk(input, k, axis=1)
    hit = (idx == label.reshape([-1, 1]).astype(idx.dtype)).astype("float32").sum(axis=1)
    return hit.mean()


def auc(input, label, curve="ROC", num_thresholds=4095, topk=1, slide_steps=1, ins_tag_weight=None):
    """Area under the ROC (or PR) curve of the positive-class scores ``input[:, 1]`` against 0/1 ``label``.

    Scores are counted into ``num_thresholds + 1`` buckets. Returns
    ``(auc, batch_auc, [batch_stat_pos, batch_stat_neg, stat_pos, stat_neg])``:
    ``auc`` covers every run so far (the statistics ``stat_*`` grow after
    each run), ``batch_auc`` this run's batch.

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> p = oar.static.data("p", [None, 2], "float32")
    >>> y = oar.static.data("y", [None, 1], "int64")
    >>> auc_out, batch_auc, _ = oar.static.auc(p, y)
    >>> exe = oar.static.Executor()
    >>> feed = {"p": np.array([[0.9, 0.1], [0.2, 0.8]], np.float32), "y": np.array([[0], [1]])}
    >>> [float(v) for v in exe.run(feed=feed, fetch_list=[auc_out, batch_auc])]
    [1.0, 1.0]
    >>> feed = {"p": np.array([[0.3, 0.7], [0.6, 0.4]], np.float32), "y": np.array([[0], [1]])}
    >>> [float(v) for v in exe.run(feed=feed, fetch_list=[auc_out, batch_auc])]
    [0.75, 0.0]
    >>> oar.disable_static()
    """
    from .. import cumsum, flip
    from ..nn import functional as F

    api = "auc"
    if not isinstance(input, Tensor) or not isinstance(label, Tensor):
        raise _api_error(api, f"input and label must be Tensors, got {type(input).__name__} and "
                              f"{type(label).__name__}", TypeError)
    if curve not in ("ROC", "PR"):
        raise _api_error(api, f"curve must be 'ROC' or 'PR', got {curve!r}")
    if isinstance(num_thresholds, bool) or not isinstance(num_thresholds, int) or num_thresholds < 1:
        raise _api_error(api, f"num_thresholds must be a positive int, got {num_thresholds!r}")
    shape = list(_program._BUILTIN_SHAPE.__get__(input))
    if len(shape) != 2 or shape[1] < 2:
        raise _api_error(api, f"input must be [N, 2] (probabilities of class 0 and 1), got shape {shape}")
    buckets = num_thresholds + 1
    stat_pos = create_global_var([buckets], 0, "int64", persistable=True, name=_unique_name("auc_stat_pos"))
    stat_neg = create_global_var([buckets], 0, "int64", persistable=True, name=_unique_name("auc_stat_neg"))
    score = input[:, 1].astype("float64")
    bucket = (score * float(num_thresholds)).astype("int64").clip(0, num_thresholds)
    onehot = F.one_hot(bucket, buckets).astype("float64")            # [N, buckets]
    positive = label.reshape([-1, 1]).astype("float64")
    if ins_tag_weight is not None:
        weight = ins_tag_weight.reshape([-1, 1]).astype("float64")
    else:
        weight = 1.0
    batch_pos = (onehot * positive * weight).sum(axis=0)
    batch_neg = (onehot * (1.0 - positive) * weight).sum(axis=0)

    def area(pos, neg):
        # From the highest threshold down: the trapezoids under (false positives, true positives).
        pos_r, neg_r = flip(pos, [0]), flip(neg, [0])
        tp, fp = cumsum(pos_r, 0), cumsum(neg_r, 0)
        if curve == "ROC":
            total = neg_r * (2.0 * tp - pos_r) / 2.0
            denom = tp[-1] * fp[-1]
        else:
            precision = tp / (tp + fp).clip(min=1e-12)
            prev_tp = tp - pos_r
            prev_precision = prev_tp / (prev_tp + fp - neg_r).clip(min=1e-12)
            total = pos_r * (precision + prev_precision) / 2.0
            denom = tp[-1]
        s = total.sum()
        return (s / denom.clip(min=1e-300)) * (denom > 0).astype("float64")

    batch_auc = area(batch_pos, batch_neg)
    auc_out = area(stat_pos.astype("float64") + batch_pos, stat_neg.astype("float64") + batch_neg)

    _accumulate([(stat_pos, batch_pos), (stat_neg, batch_neg)])
    return auc_out, batch_auc, [batch_pos, batch_neg, stat_pos, stat_neg]


def _accumulate(pairs):
    """After each run (at once outside static mode), adds each batch value to its statistic."""
    def adder(stat):
        def add(value):
            with _recording_paused(), no_grad():
                stat.copy_(stat + value.astype(stat.dtype))
        return add

    for stat, batch in pairs:
        if _program._state.static:
            default_main_program()._root()._hooks.append((batch, adder(stat)))
        else:
            adder(stat)(batch)


def ctr_metric_bundle(input, label, ins_tag_weight=None):
    """Running sums for click-through-rate metrics of predictions ``input`` [N, 1] against ``label`` [N, 1].

    Returns ``[sqrerr, abserr, prob, q, pos, ins_num]``, the sums over every
    run so far (this one included) of ``(input - label)^2``,
    ``|input - label|``, ``input``, ``sigmoid(input)``, ``label`` and the
    instance count, each instance weighted by ``ins_tag_weight`` (1 for
    real instances, 0 for padding; default all 1), as Paddle's. Shapes are
    [1], except ``q`` and ``ins_num`` ([1, 1]).

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> p = oar.static.data("p", [None, 1], "float32")
    >>> y = oar.static.data("y", [None, 1], "float32")
    >>> sums = oar.static.ctr_metric_bundle(p, y)
    >>> feed = {"p": np.array([[0.2], [0.6]], np.float32), "y": np.array([[0.0], [1.0]], np.float32)}
    >>> [round(float(v.reshape(-1)[0]), 4) for v in oar.static.Executor().run(feed=feed, fetch_list=sums)]
    [0.2, 0.6, 0.8, 1.1955, 1.0, 2.0]
    >>> oar.disable_static()
    """
    from ..nn import functional as F

    api = "ctr_metric_bundle"
    if not isinstance(input, Tensor) or not isinstance(label, Tensor):
        raise _api_error(api, f"input and label must be Tensors, got {type(input).__name__} and "
                              f"{type(label).__name__}", TypeError)
    p = input.reshape([-1, 1]).astype("float32")
    y = label.reshape([-1, 1]).astype("float32")
    w = ins_tag_weight.reshape([-1, 1]).astype("float32") if ins_tag_weight is not None else p * 0.0 + 1.0
    batch = [(((p - y) ** 2) * w).sum().reshape([1]), ((p - y).abs() * w).sum().reshape([1]),
             (p * w).sum().reshape([1]), (F.sigmoid(p) * w).sum().reshape([1, 1]), (y * w).sum().reshape([1]),
             w.sum().reshape([1, 1])]
    names = ["sqrerr", "abserr", "prob", "q", "pos_num", "ins_num"]
    stats = [create_global_var(list(b.shape), 0.0, "float32", persistable=True,
                               name=_unique_name(f"ctr_local_{n}")) for n, b in zip(names, batch)]
    _accumulate(list(zip(stats, batch)))
    return [s + b for s, b in zip(stats, batch)]


# ---------------------------------------------------------------- moving averages


class ExponentialMovingAverage:
    """Moving averages of a program's trainable parameters, for evaluation with smoothed weights.

    ``update()`` (after ``minimize``) makes every training run of the
    current main program update, after its optimizer step,
    ``ema = d * ema + (1 - d) * param`` from zeros, where ``d`` is ``decay``,
    or ``min(decay, (1 + t) / (10 + t))`` with ``t`` the value of
    ``thres_steps``. ``apply(executor)`` swaps the bias-corrected averages
    ``ema / (1 - prod(d))`` into the parameters for a ``with`` block and puts
    the parameters back at its end (unless ``need_restore=False``; then
    ``restore(executor)`` does it).

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 1], "float32")
    >>> y = oar.static.nn.fc(x, 1, bias_attr=False, weight_attr=oar.nn.initializer.Constant(1.0))
    >>> _ = oar.optimizer.SGD(learning_rate=0.5).minimize(y.mean())
    >>> ema = oar.static.ExponentialMovingAverage(0.5)
    >>> ema.update()
    >>> exe = oar.static.Executor()
    >>> for _ in range(2):
    ...     _ = exe.run(feed={"x": np.ones((1, 1), np.float32)}, fetch_list=[y])
    >>> w = oar.static.default_main_program().all_parameters()[0]
    >>> w.tolist()
    [[0.0]]
    >>> with ema.apply(exe):
    ...     w.tolist()
    [[0.1666666716337204]]
    >>> w.tolist()
    [[0.0]]
    >>> oar.disable_static()
    """

    def __init__(self, decay=0.999, thres_steps=None, name=None):
        if isinstance(decay, bool) or not isinstance(decay, (int, float)) or not 0.0 <= decay <= 1.0:
            raise _api_error("ExponentialMovingAverage", f"decay must be a number in [0, 1], got {decay!r}")
        self._decay = float(decay)
        self._thres_steps = thres_steps
        self._name = name or _unique_name("ema")
        self._params = []
        self._ema = {}
        self._decay_pow = 1.0
        self._backup = None

    def _decay_now(self):
        if self._thres_steps is None:
            return self._decay
        t = float(self._thres_steps.numpy().reshape(-1)[0]) if isinstance(self._thres_steps, Tensor) \
            else float(self._thres_steps)
        return min(self._decay, (1.0 + t) / (10.0 + t))

    def update(self):
        """Makes each training run of the current main program update the averages."""
        prog = default_main_program()._root()
        params = [t for _, t in _program._program_parameters(prog) if _program._trainable(t)]
        with _recording_paused():
            for p in params:
                if id(p) not in self._ema:
                    self._params.append(p)
                    self._ema[id(p)] = _C.full(list(p.shape), 0, p.dtype)
        prog._after_run.append(self._step)

    def _step(self):
        d = self._decay_now()
        self._decay_pow *= d
        with no_grad():
            for p in self._params:
                e = self._ema[id(p)]
                e.copy_(e * d + p.detach() * (1.0 - d))

    def _averages(self):
        scale = 1.0 - self._decay_pow
        return [self._ema[id(p)] / scale if scale > 0 else p.detach() for p in self._params]

    @contextlib.contextmanager
    def apply(self, executor=None, need_restore=True):
        """Inside the ``with`` block the parameters hold their bias-corrected averages."""
        with _recording_paused(), no_grad():
            self._backup = [_C.clone(p.detach()) for p in self._params]
            for p, a in zip(self._params, self._averages()):
                p.copy_(a.astype(p.dtype))
        try:
            yield
        finally:
            if need_restore:
                self.restore(executor)

    def restore(self, executor=None):
        """Puts back the parameter values that ``apply`` replaced."""
        if self._backup is None:
            return
        with _recording_paused(), no_grad():
            for p, b in zip(self._params, self._backup):
                p.copy_(b)
        self._backup = None


# ---------------------------------------------------------------- parameter attributes and compiled programs


class WeightNormParamAttr(ParamAttr):
    """A ParamAttr that makes ``oar.static.nn`` layers use a weight-normalised weight ``w = g * v / ||v||``.

    ``v`` (the direction, initialised by ``initializer``) and ``g`` (the
    norm, initialised to ``||v||``) are the trained parameters
    (``<name>_v``, ``<name>_g``); the norm is taken over every dim except
    ``dim`` (over all dims when ``dim`` is None).

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> attr = oar.static.WeightNormParamAttr(dim=1, initializer=oar.nn.initializer.Constant(3.0))
    >>> y = oar.static.nn.fc(x, 1, weight_attr=attr, bias_attr=False)
    >>> sorted(p.name for p in oar.static.default_main_program().all_parameters())[0].endswith("_g")
    True
    >>> oar.static.Executor().run(feed={"x": np.ones((1, 2), np.float32)}, fetch_list=[y])[0].tolist()
    [[6.0]]
    >>> oar.disable_static()
    """

    def __init__(self, dim=None, name=None, initializer=None, learning_rate=1.0, regularizer=None, trainable=True,
                 do_model_average=False, need_clip=True):
        super().__init__(name=name, initializer=initializer, learning_rate=learning_rate, regularizer=regularizer,
                         trainable=trainable, do_model_average=do_model_average, need_clip=need_clip)
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
            raise _api_error("WeightNormParamAttr", f"dim must be an int or None, got {dim!r}", TypeError)
        self.dim = dim


class CompiledProgram:
    """A Program with a ``BuildStrategy``: ``Executor.run`` runs the program, and runs that compute no
    gradient run it after the strategy's graph passes (fusions, folding).

    >>> import numpy as np
    >>> import oar
    >>> oar.enable_static()
    >>> x = oar.static.data("x", [None, 2], "float32")
    >>> y = oar.nn.functional.relu(x * 2.0 + 1.0)
    >>> compiled = oar.static.CompiledProgram(oar.static.default_main_program(), oar.static.BuildStrategy())
    >>> oar.static.Executor().run(compiled, feed={"x": np.ones((1, 2), np.float32)}, fetch_list=[y])[0].tolist()
    [[3.0, 3.0]]
    >>> oar.disable_static()
    """

    def __init__(self, program_or_graph, build_strategy=None):
        from .build_strategy import BuildStrategy

        if not isinstance(program_or_graph, _program.Program):
            raise _api_error("CompiledProgram", f"program_or_graph must be an oar.static.Program, "
                                                f"got {type(program_or_graph).__name__}", TypeError)
        if build_strategy is not None and not isinstance(build_strategy, BuildStrategy):
            raise _api_error("CompiledProgram", f"build_strategy must be an oar.static.BuildStrategy, "
                                                f"got {type(build_strategy).__name__}", TypeError)
        self._compiled_program = program_or_graph
        self._build_strategy = build_strategy

    def __str__(self):
        return str(self._compiled_program)
