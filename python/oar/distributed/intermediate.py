"""Manual parallel plans (Paddle 3.x ``paddle.distributed.parallelize`` and
its plan classes).

``parallelize(model, optimizer, mesh, config)`` turns a one-process model into
a distributed one on a mesh with named dims: ``mp_config`` places the
parameters of the layers its plan names (``ColWiseParallel`` /
``RowWiseParallel``, sequence-parallel markers, input/output hooks) along the
``"mp"`` dim, ``dp_config`` shards the optimizer along the ``"dp"`` dim
(levels 1/2/3 are ``ShardingStage1/2/3``), and every other parameter is
replicated. Everything is expressed with placements: the SPMD rules of the ops
insert the communication, so the numbers equal those of the one-process model.
The data is placed by the caller (``shard_dataloader`` or ``shard_tensor``).
"""
import enum
import re
import warnings

from .. import _C
from ..autograd import no_grad
from .auto_parallel import ProcessMesh, Replicate, Shard, get_mesh, reshard, set_mesh, shard_tensor

__all__ = ["parallelize", "ColWiseParallel", "RowWiseParallel", "SequenceParallelBegin", "SequenceParallelEnd",
           "SequenceParallelEnable", "SequenceParallelDisable", "PrepareLayerInput", "PrepareLayerOutput",
           "SplitPoint", "ConvParallel", "ContextParallel", "PrepareContextParallel"]

_API = "oar.distributed.parallelize"


def _mesh_dim(mesh, name, api):
    if name not in mesh.dim_names:
        raise ValueError(f"[{api}] the mesh needs a dim named {name!r}; its dims are {mesh.dim_names}")
    return mesh.dim_names.index(name)


def _as_dist(x, mesh):
    return x if x.is_dist() else shard_tensor(x, mesh, [Replicate()] * mesh.ndim)


def _map_first(value, fn):
    """fn applied to value, or to the first item of a tuple/list value."""
    if isinstance(value, (tuple, list)):
        if not value:
            return value
        out = list(value)
        out[0] = fn(out[0])
        return type(value)(out) if isinstance(value, tuple) else out
    return fn(value)


def _with_mp(x, mesh, placement):
    """x resharded so that its placement along the "mp" mesh dim is ``placement``."""
    api = "oar.distributed.parallelize"
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{api}] a plan's hook expected a Tensor, got {type(x).__name__}")
    x = _as_dist(x, mesh)
    pl = list(x.placements)
    pl[_mesh_dim(mesh, "mp", api)] = placement
    return reshard(x, mesh, pl)


def _seq_split(mesh, need_transpose):
    """[b, s, h] (transposed first when need_transpose) or [s, b, h] to the
    sequence dim split along "mp"."""
    def split(t):
        if not isinstance(t, _C.Tensor) or t.ndim != 3:
            raise ValueError(f"[{_API}] sequence parallel expects a 3-D [b, s, h] or [s, b, h] tensor, "
                             f"got {getattr(t, 'shape', type(t).__name__)}")
        t = _as_dist(t, mesh)
        if need_transpose:
            t = t.transpose([1, 0, 2])
        seq = 0
        if "dp" in mesh.dim_names:  # the sequence dim is the one of 0/1 that is not the batch dim
            p = t.placements[mesh.dim_names.index("dp")]
            if isinstance(p, Shard) and p.dim in (0, 1):
                seq = 1 - p.dim
        return _with_mp(t, mesh, Shard(seq))
    return split


def _seq_concat(mesh, need_transpose):
    def concat(t):
        t = _with_mp(t, mesh, Replicate())
        return t.transpose([1, 0, 2]) if need_transpose else t
    return concat


class PlanBase:
    """A parallel plan for one layer of ``mp_config['parallelize_plan']``."""

    def __init__(self):
        self.share_param_list = {}

    def apply(self, layer, process_mesh, shard_param_list):
        raise NotImplementedError(f"[{_API}] PlanBase is abstract; use ColWiseParallel, RowWiseParallel, ...")

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if k not in ("share_param_list", "_memo", "fn"))
        return f"{type(self).__name__}({args})"

    def _place(self, layer, name, mesh, placements):
        """Replaces layer.<name> by its distributed version (a parameter shared
        by several layers is placed once, by the first plan that reaches it)."""
        p = getattr(layer, name, None)
        if not isinstance(p, _C.Tensor) or p.is_dist():
            return
        memo = getattr(self, "_memo", {})
        if id(p) in memo:
            setattr(layer, name, memo[id(p)])
            return
        d = shard_tensor(p, mesh, placements)
        memo[id(p)] = d
        setattr(layer, name, d)


def _mp_placements(mesh, placement):
    pl = [Replicate()] * mesh.ndim
    pl[_mesh_dim(mesh, "mp", _API)] = placement
    return pl


class ColWiseParallel(PlanBase):
    """Splits a layer's output features along the "mp" mesh dim: a 2-D
    ``weight`` ([in, out] of Linear, [vocab, hidden] of Embedding) becomes
    ``Shard(1)``, a 1-D ``bias`` ``Shard(0)``. The output stays split unless
    ``gather_output`` (then it is all-gathered to Replicate).

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
    >>> net = oar.nn.Sequential(oar.nn.Linear(4, 8))
    >>> net, _ = dist.parallelize(net, mesh=mesh, config={"mp_config": {"parallelize_plan": {
    ...     "0": dist.ColWiseParallel()}}})
    >>> net[0].weight.placements, net[0].bias.placements
    ([Shard(dim=1)], [Shard(dim=0)])
    >>> dist.destroy_process_group()
    """

    def __init__(self, gather_output=False):
        super().__init__()
        self.gather_output = bool(gather_output)

    def apply(self, layer, process_mesh, shard_param_list):
        names = list(shard_param_list) or ["weight", "bias"]
        for name in names:
            p = getattr(layer, name, None)
            if not isinstance(p, _C.Tensor):
                continue
            if p.ndim not in (1, 2):
                raise ValueError(f"[oar.distributed.ColWiseParallel] {type(layer).__name__}.{name} must have 1 or "
                                 f"2 dims, got shape {list(p.shape)}")
            self._place(layer, name, process_mesh, _mp_placements(process_mesh, Shard(1 if p.ndim == 2 else 0)))
        if self.gather_output:
            layer.register_forward_post_hook(
                lambda _l, _i, out: _map_first(out, lambda t: _with_mp(t, process_mesh, Replicate())))


class RowWiseParallel(PlanBase):
    """Splits a layer's input features along the "mp" mesh dim: the 2-D
    ``weight`` becomes ``Shard(0)`` (the bias stays replicated), and the
    output is a Partial sum that the next op reduces. With
    ``is_input_parallel=False`` the input is split along its last dim first.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
    >>> lin = oar.nn.Linear(8, 4)
    >>> lin, _ = dist.parallelize(lin, mesh=mesh, config={"mp_config": {"parallelize_plan": {
    ...     "weight": dist.RowWiseParallel()}}})
    >>> lin.weight.placements, lin.bias.placements
    ([Shard(dim=0)], [Replicate()])
    >>> dist.destroy_process_group()
    """

    def __init__(self, is_input_parallel=True):
        super().__init__()
        self.is_input_parallel = bool(is_input_parallel)

    def apply(self, layer, process_mesh, shard_param_list):
        names = [n for n in shard_param_list if n != "bias"] or ["weight"]
        for name in names:
            p = getattr(layer, name, None)
            if not isinstance(p, _C.Tensor):
                continue
            if p.ndim != 2:
                raise ValueError(f"[oar.distributed.RowWiseParallel] {type(layer).__name__}.{name} must have 2 "
                                 f"dims, got shape {list(p.shape)}")
            self._place(layer, name, process_mesh, _mp_placements(process_mesh, Shard(0)))
        if not self.is_input_parallel:
            layer.register_forward_pre_hook(
                lambda _l, inp: _map_first(inp, lambda t: _with_mp(t, process_mesh, Shard(t.ndim - 1))))


def _check_fn(fn, cls):
    if not callable(fn):
        raise TypeError(f"[oar.distributed.{cls}] fn must be a callable taking process_mesh and returning a hook, "
                        f"got {type(fn).__name__}")


class PrepareLayerInput(PlanBase):
    """``fn(process_mesh=mesh)`` returns a forward pre-hook
    ``hook(layer, inputs)`` that prepares (e.g. reshards) the layer's inputs.

    >>> import oar, oar.distributed as dist
    >>> def double(process_mesh):
    ...     return lambda layer, inputs: (inputs[0] * 2,)
    >>> relu = oar.nn.ReLU()
    >>> dist.PrepareLayerInput(double).apply(relu, dist.ProcessMesh([0], dim_names=["mp"]), [])
    >>> relu(oar.to_tensor([1.5])).numpy().tolist()
    [3.0]
    """

    def __init__(self, fn=None):
        super().__init__()
        _check_fn(fn, "PrepareLayerInput")
        self.fn = fn

    def apply(self, layer, process_mesh, shard_param_list):
        layer.register_forward_pre_hook(self.fn(process_mesh=process_mesh))


class PrepareLayerOutput(PlanBase):
    """``fn(process_mesh=mesh)`` returns a forward post-hook
    ``hook(layer, inputs, outputs)`` that prepares the layer's outputs.

    >>> import oar, oar.distributed as dist
    >>> relu = oar.nn.ReLU()
    >>> dist.PrepareLayerOutput(lambda process_mesh: lambda l, i, o: o + 1).apply(
    ...     relu, dist.ProcessMesh([0], dim_names=["mp"]), [])
    >>> relu(oar.to_tensor([-1.0])).numpy().tolist()
    [1.0]
    """

    def __init__(self, fn=None):
        super().__init__()
        _check_fn(fn, "PrepareLayerOutput")
        self.fn = fn

    def apply(self, layer, process_mesh, shard_param_list):
        layer.register_forward_post_hook(self.fn(process_mesh=process_mesh))


class SequenceParallelBegin(PlanBase):
    """Marks the last layer before a sequence-parallel range: its output
    ([b, s, h], transposed to [s, b, h] when ``need_transpose``; else already
    [s, b, h]) is split along the sequence dim over "mp".

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
    >>> ident = oar.nn.Identity()
    >>> dist.SequenceParallelBegin().apply(ident, mesh, [])
    >>> y = ident(oar.zeros([2, 5, 3]))
    >>> y.shape, y.placements
    ([5, 2, 3], [Shard(dim=0)])
    >>> dist.destroy_process_group()
    """

    def __init__(self, need_transpose=True):
        super().__init__()
        self.need_transpose = bool(need_transpose)

    def apply(self, layer, process_mesh, shard_param_list):
        _mesh_dim(process_mesh, "mp", "oar.distributed.SequenceParallelBegin")
        split = _seq_split(process_mesh, self.need_transpose)
        layer.register_forward_post_hook(lambda _l, _i, out: _map_first(out, split))


class SequenceParallelEnd(PlanBase):
    """Marks the first layer after a sequence-parallel range: its input
    ([s/mp, b, h]) is gathered along "mp" (and transposed back to [b, s, h]
    when ``need_transpose``).

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
    >>> ident = oar.nn.Identity()
    >>> dist.SequenceParallelEnd().apply(ident, mesh, [])
    >>> y = ident(dist.shard_tensor(oar.zeros([5, 2, 3]), mesh, [dist.Shard(0)]))
    >>> y.shape, y.placements
    ([2, 5, 3], [Replicate()])
    >>> dist.destroy_process_group()
    """

    def __init__(self, need_transpose=True):
        super().__init__()
        self.need_transpose = bool(need_transpose)

    def apply(self, layer, process_mesh, shard_param_list):
        _mesh_dim(process_mesh, "mp", "oar.distributed.SequenceParallelEnd")
        concat = _seq_concat(process_mesh, self.need_transpose)
        layer.register_forward_pre_hook(lambda _l, inp: _map_first(inp, concat))


class SequenceParallelEnable(PlanBase):
    """Runs one layer sequence-parallel: its [b, s, h] input is split along
    the sequence dim over "mp" and its output gathered back to [b, s, h].

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
    >>> ident = oar.nn.Identity()
    >>> dist.SequenceParallelEnable().apply(ident, mesh, [])
    >>> ident(oar.zeros([2, 5, 3])).shape
    [2, 5, 3]
    >>> dist.destroy_process_group()
    """

    def apply(self, layer, process_mesh, shard_param_list):
        _mesh_dim(process_mesh, "mp", "oar.distributed.SequenceParallelEnable")
        split, concat = _seq_split(process_mesh, True), _seq_concat(process_mesh, True)
        layer.register_forward_pre_hook(lambda _l, inp: _map_first(inp, split))
        layer.register_forward_post_hook(lambda _l, _i, out: _map_first(out, concat))


class SequenceParallelDisable(PlanBase):
    """Runs one layer inside a sequence-parallel range without it: the
    [s/mp, b, h] input is gathered (and transposed to [b, s, h] when
    ``need_transpose``), and the output split again.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
    >>> ident = oar.nn.Identity()
    >>> dist.SequenceParallelDisable().apply(ident, mesh, [])
    >>> y = ident(dist.shard_tensor(oar.zeros([5, 2, 3]), mesh, [dist.Shard(0)]))
    >>> y.shape, y.placements
    ([5, 2, 3], [Shard(dim=0)])
    >>> dist.destroy_process_group()
    """

    def __init__(self, need_transpose=True):
        super().__init__()
        self.need_transpose = bool(need_transpose)

    def apply(self, layer, process_mesh, shard_param_list):
        _mesh_dim(process_mesh, "mp", "oar.distributed.SequenceParallelDisable")
        split = _seq_split(process_mesh, self.need_transpose)
        concat = _seq_concat(process_mesh, self.need_transpose)
        layer.register_forward_pre_hook(lambda _l, inp: _map_first(inp, concat))
        layer.register_forward_post_hook(lambda _l, _i, out: _map_first(out, split))


class ConvParallel(PlanBase):
    """Splits a ``Conv2D``'s input along its width over "mp" when the
    convolution allows it (dilation 1; without width padding, a stride equal
    to the kernel width that divides the width; with padding, stride 1);
    otherwise the input is left as it is. oar's convolution has no SPMD rule
    for a width-split input yet, so the op gathers it again first: the
    result is exact, the activation memory is not reduced.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["mp"])
    >>> conv = oar.nn.Conv2D(1, 2, kernel_size=[1, 2], stride=[1, 2])
    >>> dist.ConvParallel().apply(conv, mesh, [])
    >>> conv(oar.ones([1, 1, 3, 4])).shape
    [1, 2, 3, 2]
    >>> dist.destroy_process_group()
    """

    @staticmethod
    def _width_ok(width, kernel_w, stride_w, pad_w, dilation_w, parts):
        if width % parts or dilation_w != 1:
            return False
        if pad_w == 0:
            return width % stride_w == 0 and stride_w == kernel_w
        return stride_w == 1 and kernel_w // 2 <= width

    def apply(self, layer, process_mesh, shard_param_list):
        fmt = getattr(layer, "_data_format", "NCHW")
        if fmt not in ("NCHW", "NHWC"):
            raise ValueError(f"[oar.distributed.ConvParallel] data_format must be NCHW or NHWC, got {fmt!r}")
        wdim = 3 if fmt == "NCHW" else 2
        mp = _mesh_dim(process_mesh, "mp", "oar.distributed.ConvParallel")

        def pair(v):
            v = list(v) if isinstance(v, (list, tuple)) else [v, v]
            return v[-2:] if len(v) >= 2 else v * 2

        def hook(conv, inputs):
            x = inputs[0] if isinstance(inputs, (tuple, list)) else inputs
            pad = getattr(conv, "_padding", 0)
            pad_w = 1 if isinstance(pad, str) and pad.upper() == "SAME" else (
                0 if isinstance(pad, str) else int(sum(pair(pad)[1:]) if not isinstance(pad, int) else pad))
            if not self._width_ok(x.shape[wdim], conv.weight.shape[3], pair(conv._stride)[1], pad_w,
                                  pair(conv._dilation)[1], process_mesh.shape[mp]):
                return None
            return _map_first(inputs, lambda t: _with_mp(t, process_mesh, Shard(wdim)))

        layer.register_forward_pre_hook(hook)


def _with_sep(x, mesh, placement, api):
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"[{api}] expected Tensor arguments, got {type(x).__name__}")
    x = _as_dist(x, mesh)
    pl = list(x.placements)
    pl[_mesh_dim(mesh, "sep", api)] = placement
    return reshard(x, mesh, pl)


def _check_backend(backend, cls):
    if backend not in ("p2p", "all2all"):
        raise ValueError(f"[oar.distributed.{cls}] backend must be 'p2p' or 'all2all', got {backend!r}")


class PrepareContextParallel(PlanBase):
    """Splits the inputs of a model (e.g. token ids [batch, seq]) along the
    sequence dim (dim 1) over the mesh dim ``"sep"``, so that every layer
    after it works on a piece of the sequence. Both backends split the
    sequence in contiguous pieces.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["sep"])
    >>> ident = oar.nn.Identity()
    >>> dist.PrepareContextParallel("all2all").apply(ident, mesh, [])
    >>> ident(oar.ones([2, 6])).placements
    [Shard(dim=1)]
    >>> dist.destroy_process_group()
    """

    def __init__(self, backend="p2p"):
        super().__init__()
        _check_backend(backend, "PrepareContextParallel")
        self.backend = backend

    def apply(self, layer, process_mesh, shard_param_list):
        api = "oar.distributed.PrepareContextParallel"
        _mesh_dim(process_mesh, "sep", api)

        def split(t):
            if isinstance(t, _C.Tensor) and t.ndim < 2:
                raise ValueError(f"[{api}] inputs must be [batch, seq, ...], got shape {t.shape}")
            return _with_sep(t, process_mesh, Shard(1), api) if isinstance(t, _C.Tensor) else t

        layer.register_forward_pre_hook(lambda _l, inp: tuple(split(t) for t in inp))


class ContextParallel(PlanBase):
    """Runs an attention layer (one calling
    ``scaled_dot_product_attention`` on [batch, seq, heads, head_dim]
    tensors) on a sequence split over the mesh dim ``"sep"``: its
    sequence-split inputs are redistributed to a split over the heads (an
    all-to-all), attention runs on whole sequences for a share of the heads,
    and the output goes back to the sequence split. oar has no ring-attention
    kernel, so ``backend="p2p"`` runs this same all-to-all scheme; the results
    are exact either way.

    >>> import oar, oar.distributed as dist
    >>> mesh = dist.ProcessMesh([0], dim_names=["sep"])
    >>> class Attn(oar.nn.Layer):
    ...     def forward(self, q, k, v):
    ...         return oar.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    >>> attn = Attn()
    >>> dist.ContextParallel().apply(attn, mesh, [])
    >>> q = oar.ones([1, 4, 2, 3])
    >>> attn(q, q, q).placements
    [Shard(dim=1)]
    >>> dist.destroy_process_group()
    """

    def __init__(self, backend="p2p"):
        super().__init__()
        _check_backend(backend, "ContextParallel")
        self.backend = backend

    def apply(self, layer, process_mesh, shard_param_list):
        api = "oar.distributed.ContextParallel"
        _mesh_dim(process_mesh, "sep", api)

        def to_heads(t):
            if not isinstance(t, _C.Tensor):
                return t
            if t.ndim not in (3, 4):
                raise ValueError(f"[{api}] attention inputs must be [batch, seq, heads(, head_dim)], "
                                 f"got shape {t.shape}")
            return _with_sep(t, process_mesh, Shard(2), api)

        layer.register_forward_pre_hook(lambda _l, inp: tuple(to_heads(t) for t in inp))
        layer.register_forward_post_hook(
            lambda _l, _i, out: _map_first(out, lambda t: _with_sep(t, process_mesh, Shard(1), api)))


class SplitPoint(enum.Enum):
    """Where ``pp_config['split_spec']`` cuts the model into pipeline stages:
    ``BEGINNING`` before the named layer, ``END`` after it.

    >>> import oar.distributed as dist
    >>> dist.SplitPoint.END.value
    1
    """

    BEGINNING = 0
    END = 1


# ---------------------------------------------------------------- parallelize

def _match(plan_dict, name, layer):
    """[(plans, parameter names)] of the plan keys matching the sublayer
    ``name``: a key matches the layer name as a whole (as a regular
    expression), or names one of its parameters (``<layer>.weight``)."""
    found = []
    for key, plan in plan_dict.items():
        params = []
        head, _, attr = key.rpartition(".")
        target = key
        if attr and isinstance(getattr(layer, attr, None), _C.Tensor):
            target, params = head, [attr]
        if target == name or re.fullmatch(target, name):
            found.append((plan if isinstance(plan, list) else [plan], params))
    return found


def _check_plan(plan_dict, section):
    if not isinstance(plan_dict, dict):
        raise TypeError(f"[{_API}] {section}['parallelize_plan'] must be a dict of layer name -> plan, "
                        f"got {type(plan_dict).__name__}")
    for key, plan in plan_dict.items():
        if not isinstance(key, str):
            raise TypeError(f"[{_API}] parallelize_plan keys must be layer or parameter names, got {key!r}")
        for p in plan if isinstance(plan, list) else [plan]:
            if not isinstance(p, PlanBase):
                raise TypeError(f"[{_API}] the plan for {key!r} must be a plan (ColWiseParallel, RowWiseParallel, "
                                f"...) or a list of them, got {type(p).__name__}")


def _pipeline(model, pp_config, mesh):
    """Validates pp_config; one pipeline stage is the whole model."""
    if not isinstance(pp_config, dict):
        raise TypeError(f"[{_API}] pp_config must be a dict, got {type(pp_config).__name__}")
    spec = pp_config.get("split_spec")
    if spec is None:
        return
    pp = mesh.get_dim_size(_mesh_dim(mesh, "pp", _API))
    names = [n for n, _ in model.named_sublayers()]
    if isinstance(spec, dict):
        for key, point in spec.items():
            if key not in names:
                raise ValueError(f"[{_API}] pp_config split_spec names {key!r}, which is not a sublayer of the model")
            if not isinstance(point, SplitPoint):
                raise TypeError(f"[{_API}] split_spec[{key!r}] must be a SplitPoint, got {point!r}")
        cuts = len(spec)
    elif isinstance(spec, (str, list, tuple)):
        prefixes = [spec] if isinstance(spec, str) else list(spec)
        matched = [n for n in names if any(re.fullmatch(rf"{re.escape(p)}\.\d+", n) for p in prefixes)]
        if not matched:
            raise ValueError(f"[{_API}] pp_config split_spec {spec!r} matches no numbered sublayer "
                             "(e.g. 'layers' matches 'layers.0', 'layers.1', ...)")
        if len(matched) < pp:
            raise ValueError(f"[{_API}] {len(matched)} layers match split_spec {spec!r}, fewer than the {pp} "
                             "pipeline stages")
        cuts = pp - 1
    else:
        raise TypeError(f"[{_API}] pp_config split_spec must be a dict of layer name -> SplitPoint, a layer-name "
                        f"prefix or a list of them, got {type(spec).__name__}")
    if cuts != pp - 1:
        raise ValueError(f"[{_API}] split_spec makes {cuts + 1} stages, but the mesh's 'pp' dim has {pp}")
    if pp > 1:
        raise NotImplementedError(
            f"[{_API}] pipeline stages over a 'pp' mesh dim of size {pp} are not supported: oar runs an op only on "
            "ranks of its inputs' mesh. Build the stages with oar.distributed.PipelineLayer and train them with "
            "PipelineParallel (1F1B schedule), or use a 'pp' dim of size 1")


def _replace_params(optimizer, mapping):
    """Points the optimizer at the distributed parameters (``mapping``: id of
    the old parameter -> new one), carrying over any state it has."""
    if optimizer is None or not mapping:
        return
    if not hasattr(optimizer, "_parameter_list") or not hasattr(optimizer, "_group_of"):
        raise TypeError(f"[{_API}] optimizer must be an oar.optimizer.Optimizer, got {type(optimizer).__name__}")
    for g in optimizer._param_groups:
        g["params"] = [mapping.get(id(p), p) for p in g["params"]]
    optimizer._parameter_list = [mapping.get(id(p), p) for p in optimizer._parameter_list]
    regroup = {}
    for g in optimizer._param_groups:
        for p in g["params"]:
            regroup[id(p)] = g
    optimizer._group_of = regroup
    for old, new in mapping.items():
        state = optimizer._accumulators.pop(old, None)
        if state is not None:
            with no_grad():
                optimizer._accumulators[id(new)] = {
                    k: shard_tensor(v, new.process_mesh, new.placements) if list(v.shape) == list(new.shape) else v
                    for k, v in state.items()}
        if old in optimizer._scalars:
            optimizer._scalars[id(new)] = optimizer._scalars.pop(old)


def parallelize(model, optimizer=None, mesh=None, config=None):
    """Makes ``model`` (and ``optimizer``) distributed on ``mesh`` (default:
    the mesh of ``oar.distributed.auto_parallel.set_mesh``; a given mesh
    becomes the global one) as ``config`` says:

    - ``mp_config``: ``{"parallelize_plan": {name: plan or [plans]}}``; a
      name is a sublayer name, a regular expression over them
      (``"layers.*.mlp.up"``), or ``<layer>.weight`` for one parameter; the
      plans split along the mesh dim ``"mp"``;
    - ``dp_config``: ``{"sharding_level": 0|1|2|3, "sharding_mesh_dim": "dp"}``
      wraps the optimizer with ``shard_optimizer`` and ``ShardingStage<N>``;
    - ``cp_config``: ``{"parallelize_plan": {...}}`` with
      ``PrepareContextParallel`` / ``ContextParallel`` along ``"sep"``;
    - ``pp_config``: ``{"split_spec": ...}`` is checked; a pipeline needs a
      ``"pp"`` mesh dim of size 1 here (see ``PipelineParallel`` for more).

    Parameters no plan places are replicated. Returns ``(model, optimizer)``;
    the optimizer (when given) updates the distributed parameters. With no
    config both come back unchanged (with a warning); with neither a mesh
    nor a global one it is a ValueError.

    >>> import oar, oar.distributed as dist
    >>> _ = oar.seed(0)
    >>> mesh = dist.ProcessMesh([[0]], dim_names=["dp", "mp"])
    >>> net = oar.nn.Sequential(oar.nn.Linear(4, 8), oar.nn.ReLU(), oar.nn.Linear(8, 2))
    >>> opt = oar.optimizer.SGD(0.1, parameters=net.parameters())
    >>> net, opt = dist.parallelize(net, opt, mesh, {
    ...     "mp_config": {"parallelize_plan": {"0": dist.ColWiseParallel(), "2": dist.RowWiseParallel()}},
    ...     "dp_config": {"sharding_level": 1}})
    >>> [p.placements for p in net.parameters()]
    [[Replicate(), Shard(dim=1)], [Replicate(), Shard(dim=0)], [Replicate(), Shard(dim=0)], [Replicate(), Replicate()]]
    >>> loss = net(oar.ones([3, 4])).mean()
    >>> loss.backward(); opt.step(); opt.clear_grad()
    >>> dist.destroy_process_group()
    """
    from ..nn import Layer

    if not isinstance(model, Layer):
        raise TypeError(f"[{_API}] model must be an oar.nn.Layer, got {type(model).__name__}")
    if config is None:
        warnings.warn(f"[{_API}] config is None: the model and optimizer are returned unchanged")
        return model, optimizer
    if not isinstance(config, dict):
        raise TypeError(f"[{_API}] config must be a dict with dp_config/mp_config/pp_config, "
                        f"got {type(config).__name__}")
    unknown = sorted(set(config) - {"dp_config", "mp_config", "pp_config", "cp_config"})
    if unknown:
        raise ValueError(f"[{_API}] unknown config keys {unknown}; expected dp_config, mp_config, pp_config")
    if mesh is not None:
        if not isinstance(mesh, ProcessMesh):
            raise TypeError(f"[{_API}] mesh must be an oar.distributed.ProcessMesh, got {type(mesh).__name__}")
        set_mesh(mesh)
    mesh = get_mesh()
    if mesh is None:
        raise ValueError(f"[{_API}] no mesh: pass mesh= or call oar.distributed.auto_parallel.set_mesh first")
    if config.get("pp_config") is not None:
        _pipeline(model, config["pp_config"], mesh)
    if "pp" in mesh.dim_names:  # one stage: the mesh without its size-1 pp dim
        mesh = mesh.get_mesh_with_dim("pp", 0)

    old = {id(p): p for p in model.parameters()}
    memo = {}  # id(local parameter) -> its distributed version
    plan_dict = None
    for section in ("mp_config", "cp_config"):  # one plan: the cp plans join the mp ones
        sub = config.get(section)
        if sub is None:
            continue
        if not isinstance(sub, dict):
            raise TypeError(f"[{_API}] {section} must be a dict, got {type(sub).__name__}")
        plans = sub.get("parallelize_plan")
        if plans is not None:
            _check_plan(plans, section)
            plan_dict = dict(plan_dict or {}, **plans)
    if plan_dict is not None:
        used = set()
        for name, layer in model.named_sublayers(include_self=True):
            for plans, params in _match(plan_dict, name, layer):
                for plan in plans:
                    used.add(id(plan))
                    plan._memo = memo
                    plan.apply(layer, mesh, params)
        missed = [k for k, v in plan_dict.items()
                  if not all(id(p) in used for p in (v if isinstance(v, list) else [v]))]
        if missed:
            warnings.warn(f"[{_API}] parallelize_plan keys {missed} match no sublayer or parameter")

    # everything else: replicated (one distributed tensor per shared parameter)
    for _, layer in model.named_sublayers(include_self=True):
        for pname, p in list(layer._parameters.items()):
            if p is None or p.is_dist():
                continue
            if id(p) not in memo:
                memo[id(p)] = shard_tensor(p, mesh, [Replicate()] * mesh.ndim)
            setattr(layer, pname, memo[id(p)])
        for bname, b in list(layer._buffers.items()):
            if b is not None and not b.is_dist():
                layer._buffers[bname] = shard_tensor(b, mesh, [Replicate()] * mesh.ndim)
    _replace_params(optimizer, {k: v for k, v in memo.items() if k in old})

    dp_config = config.get("dp_config")
    if optimizer is not None:
        from .sharding import ShardingStage1, ShardingStage2, ShardingStage3, shard_optimizer

        stage = None
        if dp_config is not None:
            if not isinstance(dp_config, dict):
                raise TypeError(f"[{_API}] dp_config must be a dict, got {type(dp_config).__name__}")
            level = dp_config.get("sharding_level", 0)
            level = int(level) if isinstance(level, str) and level.isdigit() else level
            if level not in (0, 1, 2, 3, None):
                raise ValueError(f"[{_API}] dp_config sharding_level must be 0, 1, 2 or 3, got {level!r}")
            dim = dp_config.get("sharding_mesh_dim", "dp")
            if isinstance(dim, str):
                _mesh_dim(mesh, dim, _API)
            if level:
                stage = (ShardingStage1, ShardingStage2, ShardingStage3)[level - 1](dim, mesh)
        optimizer = shard_optimizer(optimizer, stage)
    return model, optimizer
