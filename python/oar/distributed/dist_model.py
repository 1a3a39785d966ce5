"""``paddle.distributed.Strategy``, ``DistModel`` and ``to_static``: one
training, evaluation or prediction step per call over a layer whose
parameters are distributed tensors.

oar captures the layer's forward with ``oar.jit.to_static`` (the captured
program runs the same ops, SPMD rules and all) and runs the step in Python:
forward, loss, backward, then the optimizer (wrapped by ``shard_optimizer``,
sharded as the strategy's ``sharding`` section says).
"""
import copy

import numpy as np

from .. import _C

__all__ = ["Strategy", "DistModel", "to_static"]

_STRATEGY = "oar.distributed.Strategy"

# section -> defaults (Paddle 3.3's names and default values)
_SECTIONS = {
    "sharding": {"enable": False, "stage": 1, "degree": 8, "enable_overlap": False, "param_comm_stream_num": 1,
                 "grad_comm_stream_num": 1, "param_bucket_size_numel": 1, "grad_bucket_size_numel": 1,
                 "enable_hierarchical_comm": False, "partition_algor": "greedy_even", "enable_tuning": False,
                 "tuning_range": [], "release_gradients": False, "comm_buffer_size_MB": 256,
                 "enable_tensor_fusion": False, "save_unbalanced_param": True},
    "gradient_merge": {"enable": False, "k_steps": 1, "avg": True},
    "pipeline": {"enable": False, "schedule_mode": "1F1B", "pp_degree": 1, "vpp_degree": 1, "vpp_seg_method": "",
                 "micro_batch_size": 1, "accumulate_steps": 1, "generation_batch_size": 1,
                 "enable_send_recv_overlap": False, "job_schedule_profiler_start": -1,
                 "job_schedule_profiler_stop": -1, "program_runtimes": [61, 72, 71, 34, 3],
                 "memory_limit_times": -1, "split_backward": False, "auto_parallel_sync_shared_params": False},
    "amp": {"enable": False, "dtype": "float16", "level": "o1", "init_loss_scaling": 32768.0,
            "incr_every_n_steps": 1000, "decr_every_n_nan_or_inf": 2, "incr_ratio": 2.0, "decr_ratio": 0.8,
            "use_dynamic_loss_scaling": True, "custom_white_list": [], "custom_black_list": [],
            "custom_black_varnames": [], "use_fp16_guard": False, "use_bf16_guard": False,
            "use_master_grad": False, "use_promote": True},
    "fused_passes": {"enable": False, "gemm_epilogue": False, "dropout_add": False},
    "recompute": {"enable": False, "checkpoints": [], "no_recompute_segments": [], "sr": 0,
                  "refined_ops_patterns": [], "enable_tuning": False},
    "mp_optimization": {"allreduce_matmul_grad_overlapping": False, "replace_with_c_embedding": False,
                        "replace_with_parallel_cross_entropy": False},
    "dp_optimization": {"enable": False, "fuse_all_reduce_ops": True, "fuse_grad_size_in_MB": 32,
                        "overlap_comm_cacl": True, "gradient_sync_after_accumulate": False},
    "sp_optimization": {"enable": True},
}
_TOP = {"auto_mode": "semi", "gradient_scale": True, "gradient_scale_using_allreduce_avg": False, "use_cache": True,
        "return_numpy": True, "all_ranks": False, "split_data": True, "seed": None, "reinit": False,
        "full_graph": True}


class _Section:
    """One section of a Strategy: attributes with defaults; unknown names are errors."""

    def __init__(self, name, values):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_values", copy.deepcopy(_SECTIONS[name]))
        for k, v in values.items():
            setattr(self, k, v)

    def __getattr__(self, key):
        values = object.__getattribute__(self, "_values")
        if key in values:
            return values[key]
        raise AttributeError(f"[{_STRATEGY}] section {self._name!r} has no option {key!r}; "
                             f"options: {sorted(values)}")

    def __setattr__(self, key, value):
        if key not in self._values:
            raise ValueError(f"[{_STRATEGY}] section {self._name!r} has no option {key!r}; "
                             f"options: {sorted(self._values)}")
        self._values[key] = value

    def to_dict(self):
        return copy.deepcopy(self._values)

    def __repr__(self):
        return f"{self._name}{self._values}"


class Strategy:
    """Options of a distributed training run, by section: ``sharding``
    (enable, stage 1/2/3, degree, ...), ``gradient_merge`` (enable, k_steps,
    avg), ``pipeline``, ``amp`` (enable, dtype, level, loss scaling),
    ``fused_passes``, ``recompute``, ``mp_optimization``, ``dp_optimization``,
    ``sp_optimization``, and top-level options (``return_numpy``,
    ``full_graph``, ``seed``, ...). ``config`` is a dict of sections (dicts of
    options) and top-level options; what it leaves out keeps its default.

    >>> import oar.distributed as dist
    >>> s = dist.Strategy({"sharding": {"enable": True, "stage": 2}})
    >>> s.sharding.enable, s.sharding.stage, s.sharding.degree, s.gradient_merge.k_steps
    (True, 2, 8, 1)
    >>> s.amp.enable = True
    >>> s.to_dict()["amp"]["enable"]
    True
    """

    def __init__(self, config=None):
        if config is None:
            config = {}
        if not isinstance(config, dict):
            raise ValueError(f"[{_STRATEGY}] expected a dict of options, got {config!r}")
        unknown = sorted(set(config) - set(_SECTIONS) - set(_TOP))
        if unknown:
            raise ValueError(f"[{_STRATEGY}] unknown options {unknown}; sections: {sorted(_SECTIONS)}, "
                             f"top-level options: {sorted(_TOP)}")
        for k, default in _TOP.items():
            object.__setattr__(self, k, copy.deepcopy(config.get(k, default)))
        for name in _SECTIONS:
            values = config.get(name) or {}
            if not isinstance(values, dict):
                raise TypeError(f"[{_STRATEGY}] section {name!r} must be a dict, got {type(values).__name__}")
            object.__setattr__(self, name, _Section(name, values))

    def __setattr__(self, key, value):
        if key in _SECTIONS:
            raise AttributeError(f"[{_STRATEGY}] set the options of section {key!r} one by one "
                                 f"(strategy.{key}.enable = True)")
        if key not in _TOP:
            raise ValueError(f"[{_STRATEGY}] unknown option {key!r}; top-level options: {sorted(_TOP)}")
        object.__setattr__(self, key, value)

    def to_dict(self):
        out = {k: copy.deepcopy(getattr(self, k)) for k in _TOP}
        out.update({name: getattr(self, name).to_dict() for name in _SECTIONS})
        return out

    def __repr__(self):
        return f"Strategy({self.to_dict()})"


def _tensors(batch):
    """The tensors of a batch (a tensor, or a list/tuple of them), flattened."""
    if isinstance(batch, dict):
        batch = list(batch.values())
    if isinstance(batch, (list, tuple)):
        out = []
        for b in batch:
            out += _tensors(b)
        return out
    if isinstance(batch, (_C.Tensor, np.ndarray)):
        return [batch]
    raise TypeError(f"[oar.distributed.DistModel] inputs must be tensors or lists of tensors, "
                    f"got {type(batch).__name__}")


class DistModel:
    """One step per call over a distributed ``layer``; made by
    :func:`to_static`.

    The mode decides what a call does: ``train()`` (needs ``loss`` and
    ``optimizer``): forward, loss, backward and an optimizer step, returns
    the loss; ``eval()`` (needs ``loss``): forward and loss without
    gradients; ``predict()``: the layer's outputs. The initial mode is train
    when loss and optimizer are given, else eval when loss is given, else
    predict. A call takes a batch as the loader yields it, ``inputs...,
    labels`` (the last item is the label when a loss is set; in predict mode
    the label, if passed, is ignored). With ``strategy.return_numpy`` (the
    default) results come back as NumPy arrays of the whole value.

    The strategy's ``sharding`` section shards the optimizer
    (``ShardingStage1/2/3`` along mesh dim 0), ``gradient_merge`` accumulates
    ``k_steps`` calls' gradients (averaged with ``avg``) per update, ``amp``
    (level o1) runs the step under ``oar.amp.auto_cast`` with dynamic loss
    scaling for float16, and ``full_graph`` (default True) runs the forward
    captured by ``oar.jit.to_static``.

    >>> import oar, oar.distributed as dist
    >>> _ = oar.seed(0)
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> net = dist.shard_layer(oar.nn.Linear(2, 1), mesh)
    >>> opt = oar.optimizer.SGD(0.1, parameters=net.parameters())
    >>> x, y = oar.ones([4, 2]), oar.zeros([4, 1])
    >>> model = dist.to_static(net, None, oar.nn.MSELoss(), opt)
    >>> losses = [float(model(x, y)) for _ in range(3)]
    >>> losses[2] < losses[0]
    True
    >>> model.predict(); model(x).shape
    (4, 1)
    >>> dist.destroy_process_group()
    """

    def __init__(self, layer, loader, loss=None, optimizer=None, strategy=None, metrics=None, input_spec=None):
        from ..jit import to_static as _jit_to_static
        from ..nn import Layer

        api = "oar.distributed.DistModel"
        if not isinstance(layer, Layer):
            raise TypeError(f"[{api}] layer must be an oar.nn.Layer, got {type(layer).__name__}")
        if loss is not None and not callable(loss):
            raise TypeError(f"[{api}] loss must be a Layer or a callable, got {type(loss).__name__}")
        if strategy is None:
            strategy = Strategy()
        if not isinstance(strategy, Strategy):
            raise TypeError(f"[{api}] strategy must be an oar.distributed.Strategy, got {type(strategy).__name__}")
        if strategy.pipeline.enable:
            raise NotImplementedError(f"[{api}] strategy.pipeline: build the stages with PipelineLayer and train "
                                      "them with PipelineParallel")
        if strategy.recompute.enable:
            raise NotImplementedError(f"[{api}] strategy.recompute is not supported")
        k = strategy.gradient_merge.k_steps if strategy.gradient_merge.enable else 1
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"[{api}] strategy.gradient_merge.k_steps must be a positive int, got {k!r}")
        self._layer = layer
        self._loader = loader
        self._loss = loss
        self._strategy = strategy
        self._metrics = metrics
        self._k_steps = k
        self._micro = 0
        amp = strategy.amp
        level = str(amp.level).upper()
        if amp.enable and level not in ("O0", "O1"):
            raise NotImplementedError(f"[{api}] strategy.amp.level {amp.level!r}: oar's DistModel runs level o1 "
                                      "(ops cast per the autocast lists; parameters stay float32)")
        self._amp = amp.enable and level == "O1"
        self._scaler = None
        if self._amp and str(amp.dtype) == "float16" and optimizer is not None:
            from ..amp import GradScaler
            from .dtensor_utils import shard_scaler

            self._scaler = shard_scaler(GradScaler(
                init_loss_scaling=amp.init_loss_scaling, incr_ratio=amp.incr_ratio, decr_ratio=amp.decr_ratio,
                incr_every_n_steps=amp.incr_every_n_steps, decr_every_n_nan_or_inf=amp.decr_every_n_nan_or_inf,
                use_dynamic_loss_scaling=amp.use_dynamic_loss_scaling))
        self._optimizer = self._wrap_optimizer(optimizer, strategy) if optimizer is not None else None
        self._forward = _jit_to_static(layer, input_spec=input_spec, full_graph=True) if strategy.full_graph else layer
        self._mode = "train" if optimizer is not None and loss is not None else "eval" if loss is not None \
            else "predict"

    @staticmethod
    def _wrap_optimizer(optimizer, strategy):
        from .sharding import ShardingStage1, ShardingStage2, ShardingStage3, _ShardOptimizer, shard_optimizer

        if isinstance(optimizer, _ShardOptimizer):
            return optimizer
        stage = None
        if strategy.sharding.enable:
            level = int(strategy.sharding.stage)
            if level not in (1, 2, 3):
                raise ValueError(f"[oar.distributed.DistModel] strategy.sharding.stage must be 1, 2 or 3, "
                                 f"got {strategy.sharding.stage!r}")
            stage = (ShardingStage1, ShardingStage2, ShardingStage3)[level - 1](0)
        return shard_optimizer(optimizer, stage)

    # ---- modes
    def train(self):
        """Calls run training steps (forward, backward, optimizer step)."""
        if self._optimizer is None or self._loss is None:
            raise ValueError("[oar.distributed.DistModel.train] train mode needs a loss and an optimizer")
        self._mode = "train"
        self._layer.train()

    def eval(self):
        """Calls return the loss without updating the parameters."""
        if self._loss is None:
            raise ValueError("[oar.distributed.DistModel.eval] eval mode needs a loss")
        self._mode = "eval"
        self._layer.eval()

    def predict(self):
        """Calls return the layer's outputs."""
        self._mode = "predict"
        self._layer.eval()

    # ---- one step
    def _autocast(self):
        from ..amp import auto_cast

        amp = self._strategy.amp
        return auto_cast(enable=self._amp, custom_white_list=amp.custom_white_list or None,
                         custom_black_list=amp.custom_black_list or None, level="O1", dtype=str(amp.dtype),
                         use_promote=amp.use_promote)

    def _out(self, t):
        if not self._strategy.return_numpy or not isinstance(t, _C.Tensor):
            return t
        from .auto_parallel import unshard_dtensor

        return (unshard_dtensor(t) if t.is_dist() else t).numpy()

    def __call__(self, *args):
        from ..autograd import no_grad

        feeds = _tensors(list(args))
        if not feeds:
            raise ValueError("[oar.distributed.DistModel] a call needs the batch's tensors")
        if self._mode in ("train", "eval"):
            if len(feeds) < 2:
                raise ValueError(f"[oar.distributed.DistModel] {self._mode} mode takes inputs and a label, "
                                 f"got {len(feeds)} tensor(s)")
            inputs, label = feeds[:-1], feeds[-1]
        else:
            inputs, label = feeds, None
        if self._mode == "train":
            with self._autocast():
                loss = self._loss(self._forward(*inputs), label)
            scaled = loss / self._k_steps if self._k_steps > 1 and self._strategy.gradient_merge.avg else loss
            (scaled if self._scaler is None else self._scaler.scale(scaled)).backward()
            self._micro += 1
            if self._micro == self._k_steps:
                if self._scaler is None:
                    self._optimizer.step()
                else:
                    self._scaler.step(self._optimizer)
                    self._scaler.update()
                self._optimizer.clear_grad()
                self._micro = 0
            return self._out(loss.detach())
        with no_grad(), self._autocast():
            out = self._forward(*inputs)
            if self._mode == "eval":
                return self._out(self._loss(out, label))
        if isinstance(out, (list, tuple)):
            return type(out)(self._out(o) for o in out)
        return self._out(out)

    # ---- state
    def state_dict(self, mode="all"):
        """The distributed parameters and buffers (``mode`` "param" or
        "all"), and with "all" or "opt" the optimizer's state."""
        if mode not in ("all", "param", "opt"):
            raise ValueError(f"[oar.distributed.DistModel.state_dict] mode must be 'all', 'param' or 'opt', "
                             f"got {mode!r}")
        out = {}
        if mode in ("all", "param"):
            out.update(self._layer.state_dict())
        if mode in ("all", "opt") and self._optimizer is not None:
            out.update(self._optimizer.state_dict())
        return out

    def set_state_dict(self, state_dict):
        """Loads parameters (and optimizer state, when present) from ``state_dict``."""
        own = self._layer.state_dict()
        self._layer.set_state_dict({k: v for k, v in state_dict.items() if k in own})
        rest = {k: v for k, v in state_dict.items() if k not in own}
        if rest and self._optimizer is not None:
            self._optimizer.set_state_dict(rest)


def to_static(layer, loader=None, loss=None, optimizer=None, strategy=None, input_spec=None):
    """A :class:`DistModel` over the distributed ``layer`` (see there): each
    call runs one step of the mode chosen by ``train()``, ``eval()`` or
    ``predict()``. ``loader`` (a ``shard_dataloader`` or ``DataLoader``)
    is kept for reference; batches are passed to the calls.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
    >>> net = dist.shard_layer(oar.nn.Linear(2, 1), mesh)
    >>> model = dist.to_static(net, loss=oar.nn.MSELoss())
    >>> model._mode
    'eval'
    >>> dist.destroy_process_group()
    """
    return DistModel(layer, loader, loss, optimizer, strategy, input_spec=input_spec)
