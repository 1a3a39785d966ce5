"""``fleet.DistributedStrategy``: the options of a fleet job, with Paddle 3.x's
names and defaults.

Every option is a plain attribute. Switches (``amp``, ``recompute``, ...) are
bools; their settings live in a ``*_configs`` dict, and assigning a dict to
it updates only the keys given (an unknown key is an error, as in Paddle).
Switches oar does not implement raise ``NotImplementedError`` naming the
option when set to True, instead of being silently ignored; hybrid degrees
oar does not implement (sep, context, expert) do the same when above 1.
"""
import copy

__all__ = ["DistributedStrategy"]

_API = "oar.distributed.fleet.DistributedStrategy"

# Switches: name -> (default, None when oar honours it, else why not).
_SWITCHES = {
    "amp": (False, None),
    "find_unused_parameters": (False, None),
    "fuse_all_reduce_ops": (True, None),
    "without_graph_optimization": (True, None),
    "sync_nccl_allreduce": (True, None),
    "split_data": (True, None),
    "cudnn_exhaustive_search": (False, None),
    "cudnn_batchnorm_spatial_persistent": (False, None),
    "calc_comm_same_stream": (False, None),
    # a_sync is the parameter-server switch; it is on by default and unused
    # by collective training, so only its value is kept.
    "a_sync": (True, None),
    "recompute": (False, "it configures static-graph recomputation; in eager code wrap blocks with "
                          "oar.distributed.fleet.utils.recompute"),
    "sharding": (False, "static-graph sharding is not implemented; set hybrid_configs['sharding_degree'] "
                        "for sharded optimizer states"),
    "gradient_merge": (False, "gradient merging is not implemented; accumulate gradients over several "
                              "backward passes before optimizer.step() instead"),
    "pipeline": (False, "static-graph pipelines are not implemented; set hybrid_configs['pp_degree'] and "
                        "use a PipelineLayer"),
    "tensor_parallel": (False, "static-graph tensor parallelism is not implemented; set "
                               "hybrid_configs['mp_degree'] and use the fleet.meta_parallel layers"),
    "lamb": (False, "the LAMB meta-optimizer is not implemented; use oar.optimizer.Lamb directly"),
    "lars": (False, "the LARS meta-optimizer is not implemented"),
    "dgc": (False, "deep gradient compression is not implemented"),
    "localsgd": (False, "local SGD is not implemented"),
    "adaptive_localsgd": (False, "adaptive local SGD is not implemented"),
    "fp16_allreduce": (False, "float16 gradient all-reduce is not implemented"),
    "fuse_grad_merge": (False, "gradient merging is not implemented"),
    "asp": (False, "automatic sparsity is not implemented"),
    "qat": (False, "quantization-aware training through fleet is not implemented"),
    "auto": (False, "use oar.distributed's semi-automatic API (ProcessMesh, shard_tensor, shard_layer)"),
    "semi_auto": (False, "use oar.distributed's semi-automatic API (ProcessMesh, shard_tensor, shard_layer)"),
    "auto_search": (False, "automatic parallel search is not implemented"),
    "elastic": (False, "elastic training is not implemented"),
    "heter_ccl_mode": (False, "heterogeneous collective mode is not implemented"),
    "sync_batch_norm": (False, "cross-process batch-norm statistics are not implemented"),
    "is_fl_ps_mode": (False, "parameter-server training is not implemented in oar"),
    "is_with_coordinator": (False, "parameter-server training is not implemented in oar"),
    "adam_d2sum": (False, "parameter-server training is not implemented in oar"),
}

# Other scalar options: name -> default (the value must keep the default's type).
_SCALARS = {
    "nccl_comm_num": 1,
    "fuse_grad_size_in_MB": 32,
    "last_comm_group_size_MB": 1.0,
    "conv_workspace_size_limit": 512,
    "hybrid_parallel_order": ["dp", "pp", "sharding", "sep", "cp", "mp"],
}

# Config dicts (Paddle's defaults).
_CONFIGS = {
    "amp_configs": {
        "init_loss_scaling": 32768.0, "incr_every_n_steps": 1000, "decr_every_n_nan_or_inf": 2, "incr_ratio": 2.0,
        "decr_ratio": 0.8, "use_dynamic_loss_scaling": True, "custom_white_list": [], "custom_black_list": [],
        "custom_black_varnames": [], "use_pure_fp16": False, "use_fp16_guard": True, "use_optimizer_fp16": False,
        "use_pure_bf16": False},
    "recompute_configs": {"checkpoints": [], "enable_offload": False, "checkpoint_shape": [], "enable_tuning": False,
                          "refined_ops_patterns": []},
    "sharding_configs": {
        "sharding_segment_strategy": "segment_broadcast_MB", "segment_broadcast_MB": 32.0, "segment_anchors": [],
        "sharding_degree": 8, "mp_degree": 1, "dp_degree": 1, "hybrid_dp": False, "gradient_merge_acc_step": 1,
        "optimize_offload": False, "pp_allreduce_in_optimize": False, "pp_degree": 1, "optimize_cast": False,
        "_dp_as_optimizer_sharding": False, "stage": 1, "enable_tuning": False, "use_calc_stream": False},
    "gradient_merge_configs": {"k_steps": 1, "avg": True},
    "pipeline_configs": {"micro_batch_size": 1, "accumulate_steps": 1, "schedule_mode": "1F1B",
                         "p2p_cache_shape": True, "enable_partial_send_recv": True},
    "tensor_parallel_configs": {"tensor_parallel_degree": 1, "tensor_init_seed": -1},
    "lamb_configs": {"lamb_weight_decay": 0.01, "exclude_from_weight_decay": []},
    "lars_configs": {"lars_coeff": 0.001, "lars_weight_decay": 0.0005, "epsilon": 0.0,
                     "exclude_from_weight_decay": []},
    "dgc_configs": {"rampup_begin_step": 0, "rampup_step": 1, "sparsity": []},
    "localsgd_configs": {"k_steps": 1, "begin_step": 1},
    "adaptive_localsgd_configs": {"init_k_steps": 1, "begin_step": 1},
    "gradient_scale_configs": {"scale_strategy": "avg", "scale_gradient": False},
    "a_sync_configs": {
        "k_steps": -1, "max_merge_var_num": 1, "send_queue_size": 16, "independent_recv_thread": False,
        "min_send_grad_num_before_recv": 1, "thread_pool_size": 1, "send_wait_times": 1,
        "runtime_split_send_recv": False, "launch_barrier": True, "heter_worker_device_guard": "cpu",
        "lr_decay_steps": 10, "use_ps_gpu": 0, "use_gpu_graph": 0},
}

# hybrid_configs: the degrees, and one settings object per group kind.
_DEGREES = {"dp_degree": -1, "mp_degree": 1, "pp_degree": 1, "sharding_degree": 1, "sep_degree": 1,
            "ep_degree": 1, "moe_sharding_degree": 1, "cp_degree": 1, "cp_sharding_degree": 1}
_UNSUPPORTED_DEGREES = {"sep_degree": "segment (sequence) parallelism", "cp_degree": "context parallelism",
                        "ep_degree": "expert parallelism", "moe_sharding_degree": "MoE sharding",
                        "cp_sharding_degree": "context-parallel sharding"}
_HYBRID_FLAGS = {"enable_optimizer_timer": False, "split_norm_comm": False}
_SUB_CONFIGS = {
    "mp_configs": {"sync_param": True, "sync_grad": False, "sync_moment": False, "sync_mode": "broadcast",
                   "mp_async_allreduce": False, "mp_skip_c_identity": False, "mp_fused_linear_param_grad_add": False,
                   "need_broadcast_data": True, "recompute_allgather": False, "sp_async_reduce_scatter": False},
    "pp_configs": {"dp_comm_overlap": False, "delay_scale_loss": False, "enable_timer": False,
                   "sharding_comm_overlap": False, "profiling": False, "release_gradients": False,
                   "overlap_p2p_comm": False, "clear_every_step_cache": False, "use_batch_p2p_comm": True,
                   "best_unbalanced_scheduler": False, "enable_offload_queue": False, "enable_dynamic_shape": False,
                   "use_dualpipev": False, "forward_backward_overlap_scheduler": False, "sync_param": False,
                   "sync_moment": False, "sync_mode": "broadcast"},
    "sharding_configs": {"tensor_fusion": False, "accumulate_steps": 1, "comm_overlap": False, "split_param": False,
                         "fuse_optimizer": True, "use_reduce_avg": True, "comm_buffer_size_MB": 256,
                         "release_gradients": False, "free_grads_in_comm": False,
                         "enable_fuse_optimizer_states": False, "offload_opt_buffer_size": -1},
}
for _name in ("dp_configs", "sep_configs", "dp_sep_configs", "pp_tp_configs", "ep_configs", "moe_sharding_configs",
              "default_comm_group_configs", "cp_configs", "cp_sharding_configs", "dp_cp_configs", "cp_mp_configs"):
    _SUB_CONFIGS[_name] = {}
for _cfg in _SUB_CONFIGS.values():
    _cfg["nccl_config"] = None  # NCCL tuning; kept, not used
# The pipeline's micro-batching lives in pipeline_configs; pp_configs reads
# and writes these keys there, so either spelling sets the one value.
_PP_LINKED = ("micro_batch_size", "accumulate_steps")


def _checked(api, key, value, default):
    """``value`` for ``key`` if it has the type of ``default``, else TypeError."""
    if default is None:
        return value
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, list):
        ok = isinstance(value, (list, tuple))
        value = list(value) if ok else value
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise TypeError(f"[{api}] {key} must be {type(default).__name__}, got {type(value).__name__} ({value!r})")
    return value


def _merge(api, name, current, update):
    if not isinstance(update, dict):
        raise TypeError(f"[{api}] {name} must be set with a dict, got {type(update).__name__}")
    for k, v in update.items():
        if k not in current:
            raise ValueError(f"[{api}] {k!r} is not a key of {name}; keys are {sorted(current)}")
        current[k] = _checked(api, f"{name}[{k!r}]", v, _default_of(name, k))


def _default_of(name, key):
    table = _CONFIGS.get(name) or _SUB_CONFIGS.get(name.replace("hybrid_configs.", ""), {})
    return table.get(key)


class _GroupConfig:
    """The settings of one kind of group in ``hybrid_configs`` (Paddle's
    ``pp_configs``, ``mp_configs``, ...): read and set as attributes or items."""

    def __init__(self, name, values, linked=None):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_linked", linked)  # a config dict holding _PP_LINKED keys

    def _key(self, key):
        if key in self._values or (self._linked is not None and key in _PP_LINKED):
            return key
        raise AttributeError(f"[{_API}] {key!r} is not a key of hybrid_configs['{self._name}']; keys are "
                             f"{sorted(self.keys())}")

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        self._key(key)
        return self._linked[key] if key in _PP_LINKED and self._linked is not None else self._values[key]

    def __setattr__(self, key, value):
        self._key(key)
        if key in _PP_LINKED and self._linked is not None:
            self._linked[key] = _checked(_API, f"pp_configs.{key}", value, _CONFIGS["pipeline_configs"][key])
        else:
            self._values[key] = _checked(_API, f"{self._name}.{key}", value, _SUB_CONFIGS[self._name][key])

    __getitem__ = __getattr__
    __setitem__ = __setattr__

    def keys(self):
        return list(self._values) + (list(_PP_LINKED) if self._linked is not None else [])

    def _update(self, update):
        if not isinstance(update, (dict, _GroupConfig)):
            raise TypeError(f"[{_API}] hybrid_configs['{self._name}'] must be set with a dict, "
                            f"got {type(update).__name__}")
        for k in update.keys():
            setattr(self, k, update[k])

    def __deepcopy__(self, memo):
        return _GroupConfig(self._name, copy.deepcopy(self._values, memo), None)

    def __eq__(self, other):
        return isinstance(other, _GroupConfig) and {k: self[k] for k in self.keys()} == {k: other[k] for k in
                                                                                        other.keys()}

    def __repr__(self):
        return repr({k: self[k] for k in self.keys()})


class DistributedStrategy:
    """The options of a fleet job. Set switches and their configs as
    attributes; ``hybrid_configs`` holds the degrees of hybrid parallelism
    (``dp_degree`` -1 means "the ranks left over").

    >>> from oar.distributed import fleet
    >>> s = fleet.DistributedStrategy()
    >>> s.hybrid_configs = {"dp_degree": 1, "mp_degree": 2, "pp_degree": 1}
    >>> s.hybrid_configs["mp_degree"], s.hybrid_configs["sharding_degree"]
    (2, 1)
    >>> s.pipeline_configs = {"accumulate_steps": 4}
    >>> s.pipeline_configs["accumulate_steps"], s.pipeline_configs["micro_batch_size"]
    (4, 1)
    >>> s.amp, s.amp_configs["init_loss_scaling"]
    (False, 32768.0)
    >>> s.lamb = True  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    NotImplementedError: [oar.distributed.fleet.DistributedStrategy] lamb=True is not supported: ... oar.optimizer.Lamb ...
    """

    def __init__(self):
        v = {}
        v.update({k: d for k, (d, _) in _SWITCHES.items()})
        v.update(copy.deepcopy(_SCALARS))
        v.update(copy.deepcopy(_CONFIGS))
        object.__setattr__(self, "_values", v)
        hybrid = dict(_DEGREES)
        hybrid.update(_HYBRID_FLAGS)
        for name, fields in _SUB_CONFIGS.items():
            hybrid[name] = _GroupConfig(name, fields, v["pipeline_configs"] if name == "pp_configs" else None)
        object.__setattr__(self, "_hybrid", hybrid)

    # --- attribute access ----------------------------------------------------
    def __getattr__(self, name):
        if name.startswith("__") or "_values" not in self.__dict__:
            raise AttributeError(name)
        values = self.__dict__["_values"]
        if name == "hybrid_configs":
            return dict(self.__dict__["_hybrid"])
        if name in values:
            v = values[name]
            return copy.deepcopy(v) if isinstance(v, (dict, list)) else v
        raise AttributeError(f"[{_API}] has no option {name!r}")

    def __setattr__(self, name, value):
        values = self._values
        if name == "hybrid_configs":
            self._set_hybrid(value)
        elif name in _SWITCHES:
            if not isinstance(value, bool):
                raise TypeError(f"[{_API}] {name} must be a bool, got {type(value).__name__} ({value!r})")
            why = _SWITCHES[name][1]
            if value and why is not None:
                raise NotImplementedError(f"[{_API}] {name}=True is not supported: {why}")
            values[name] = value
        elif name in _SCALARS:
            value = _checked(_API, name, value, _SCALARS[name])
            if name == "hybrid_parallel_order" and sorted(value) != sorted(_SCALARS[name]):
                raise ValueError(f"[{_API}] hybrid_parallel_order must order {_SCALARS[name]}, got {value}")
            values[name] = value
        elif name in _CONFIGS:
            _merge(_API, name, values[name], value)
        else:
            raise AttributeError(f"[{_API}] has no option {name!r}")

    def _set_hybrid(self, update):
        if not isinstance(update, dict):
            raise TypeError(f"[{_API}] hybrid_configs must be set with a dict, got {type(update).__name__}")
        h = self._hybrid
        for k, v in update.items():
            if k in _SUB_CONFIGS:
                h[k]._update(v)
            elif k in _DEGREES:
                v = _checked(_API, f"hybrid_configs[{k!r}]", v, 1)
                if v < (-1 if k == "dp_degree" else 0):
                    raise ValueError(f"[{_API}] hybrid_configs[{k!r}] must be >= "
                                     f"{-1 if k == 'dp_degree' else 0}, got {v}")
                if v > 1 and k in _UNSUPPORTED_DEGREES:
                    raise NotImplementedError(f"[{_API}] hybrid_configs[{k!r}]={v} is not supported: "
                                              f"{_UNSUPPORTED_DEGREES[k]} is not implemented in oar")
                h[k] = v
            elif k in _HYBRID_FLAGS:
                h[k] = _checked(_API, f"hybrid_configs[{k!r}]", v, False)
            else:
                raise ValueError(f"[{_API}] {k!r} is not a key of hybrid_configs; keys are "
                                 f"{sorted(list(_DEGREES) + list(_HYBRID_FLAGS) + list(_SUB_CONFIGS))}")

    def __deepcopy__(self, memo):
        new = DistributedStrategy()
        for k, v in copy.deepcopy(self._values, memo).items():
            if isinstance(v, dict):  # in place: pp_configs refers to pipeline_configs
                new._values[k].update(v)
            else:
                new._values[k] = v
        for k, v in self._hybrid.items():
            if isinstance(v, _GroupConfig):
                new._hybrid[k]._values.update(copy.deepcopy(v._values, memo))
            else:
                new._hybrid[k] = v
        return new

    def __repr__(self):
        fresh = DistributedStrategy()

        def diff(name, now, then):  # only the keys of a config that differ from the defaults
            if isinstance(now, dict):
                return [f"{name}[{k!r}]={v!r}" for k, v in now.items() if then[k] != v]
            return [f"{name}={now!r}"] if now != then else []

        changed = []
        for k, v in self._values.items():
            changed += diff(k, v, fresh._values[k])
        for k, v in self._hybrid.items():
            now, then = (v._values, fresh._hybrid[k]._values) if isinstance(v, _GroupConfig) else (v, fresh._hybrid[k])
            changed += diff(f"hybrid_configs[{k!r}]", now, then)
        return f"DistributedStrategy({', '.join(changed)})"
