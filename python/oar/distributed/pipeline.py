"""Pipeline parallelism: a model cut into stages, one per rank, trained on
micro-batches with the 1F1B schedule (Paddle 3.x names: ``LayerDesc``,
``PipelineLayer``, ``PipelineParallel.train_batch`` / ``eval_batch``).

Rank r of the pipeline group holds stage r. Activations travel forward and
their gradients backward as plain local tensors with point-to-point
send/recv between neighbouring stages. Each message is preceded by a small
int64 header (count, dtype, stop_gradient, shape of every tensor), so stages
may pass tuples of tensors of any shape and dtype.

Note [pipeline message order]: every send is asynchronous (``isend``) and
every receive blocks. Between two neighbours, activations only flow from the
lower stage to the higher and gradients only the other way, and MPI delivers
the messages of one sender to one receiver in the order they were sent, so
no tags are needed: the k-th activation message a stage receives is
micro-batch k's. The 1F1B order on every stage is consistent with one global
order of the forward/backward events (a stage only waits for events that
precede its own), so no stage can wait for a message its peer will only send
after a message from it, and there is no deadlock. The send handles are
waited for at the end of the step, which also reports a peer's failure.
"""
import re

import numpy as np

from .. import _C
from ..autograd import backward as _backward
from ..autograd import no_grad
from ..creation import empty, to_tensor, zeros
from ..nn import ClipGradByGlobalNorm, Layer, LayerDict
from ..nn.clip import _needs_clip
from . import collective as _coll

__all__ = ["LayerDesc", "SharedLayerDesc", "PipelineLayer", "PipelineParallel"]

_LAYER_API = "oar.distributed.PipelineLayer"
_PP_API = "oar.distributed.PipelineParallel"


_DTYPES = []


def _dtype_list():
    """The dtypes in the enum's order: a header carries a dtype as its index."""
    if not _DTYPES:
        _DTYPES.extend(type(empty([0]).dtype))
    return _DTYPES


class LayerDesc:
    """Describes one layer of a pipeline: ``layer_func(*inputs, **kwargs)``
    builds it. Only the stage that owns a layer keeps it.

    >>> import oar
    >>> from oar.distributed.pipeline import LayerDesc
    >>> desc = LayerDesc(oar.nn.Linear, 4, 2)
    >>> desc.build_layer().weight.shape
    [4, 2]
    """

    def __init__(self, layer_func, *inputs, **kwargs):
        if not (isinstance(layer_func, type) and issubclass(layer_func, Layer)):
            raise TypeError(f"[oar.distributed.LayerDesc] layer_func must be a subclass of oar.nn.Layer, "
                            f"got {layer_func!r}")
        self.layer_func = layer_func
        self.inputs = inputs
        self.kwargs = kwargs

    def build_layer(self):
        return self.layer_func(*self.inputs, **self.kwargs)

    def __repr__(self):
        return f"LayerDesc({self.layer_func.__name__})"


class SharedLayerDesc(LayerDesc):
    """A layer used at several places of the model (e.g. an embedding tied to
    the output projection): every ``SharedLayerDesc`` with the same ``key``
    is one layer. Where it is used, ``forward_func(layer, x)`` runs it
    (``layer(x)`` when None). Stages that use it each hold a copy, and after
    the backward pass the gradients of its ``shared_weight_attr``
    parameter(s) are summed over those stages, so the copies stay equal.

    >>> import oar
    >>> from oar.distributed.pipeline import SharedLayerDesc
    >>> SharedLayerDesc("emb", oar.nn.Embedding, None, "weight", 10, 4).build_layer().weight.shape
    [10, 4]
    """

    def __init__(self, key, layer_func, forward_func=None, shared_weight_attr="weight", *inputs, **kwargs):
        super().__init__(layer_func, *inputs, **kwargs)
        if not isinstance(key, str):
            raise TypeError(f"[oar.distributed.SharedLayerDesc] key must be a str, got {type(key).__name__}")
        if forward_func is not None and not callable(forward_func):
            raise TypeError(f"[oar.distributed.SharedLayerDesc] forward_func must be callable or None, "
                            f"got {type(forward_func).__name__}")
        self.layer_name = key
        self.forward_func = forward_func
        attrs = [shared_weight_attr] if isinstance(shared_weight_attr, str) else list(shared_weight_attr)
        self.shared_weight_attr = attrs


class _SharedCall:
    def __init__(self, layer, forward_func):
        self.layer, self.forward_func = layer, forward_func

    def __call__(self, *args):
        if self.forward_func is None:
            return self.layer(*args)
        return self.forward_func(self.layer, *args)


def _segment(items, num_stages, seg_method):
    """Stage boundaries: stage s runs items[b[s]:b[s + 1]]."""
    n = len(items)
    if isinstance(seg_method, (list, tuple)):
        b = [int(x) for x in seg_method]
        if len(b) != num_stages + 1 or b[0] != 0 or b[-1] != n or any(x > y for x, y in zip(b, b[1:])):
            raise ValueError(f"[{_LAYER_API}] seg_method as a list must be {num_stages + 1} non-decreasing "
                             f"boundaries from 0 to {n}, got {list(seg_method)}")
        return b
    if seg_method == "uniform":
        if n < num_stages:
            raise ValueError(f"[{_LAYER_API}] cannot cut {n} layers into {num_stages} stages")
        size, extra = divmod(n, num_stages)
        # As in Paddle, the last `extra` stages take one more layer.
        b = [0]
        for s in range(num_stages):
            b.append(b[-1] + size + (1 if s >= num_stages - extra else 0))
        return b
    if isinstance(seg_method, str) and seg_method.startswith("layer:"):
        # As in Paddle, the name is a regular expression searched in the
        # class names, ignoring case.
        pattern = seg_method[len("layer:"):]
        try:
            regex = re.compile(pattern, re.IGNORECASE)
        except re.error as e:
            raise ValueError(f"[{_LAYER_API}] seg_method {seg_method!r}: bad pattern ({e})") from None

        def cls_name(item):
            cls = item.layer_func if isinstance(item, LayerDesc) else type(item)
            return cls.__name__

        marked = [i for i, item in enumerate(items) if regex.search(cls_name(item))]
        if not marked or len(marked) % num_stages:
            raise ValueError(f"[{_LAYER_API}] seg_method {seg_method!r}: the number of matching layers "
                             f"({len(marked)}) must be a positive multiple of num_stages ({num_stages})")
        per = len(marked) // num_stages
        # Each stage ends right after its last marked layer; layers before the
        # first mark go to stage 0 and layers after the last to the last stage.
        return [0] + [marked[per * (s + 1) - 1] + 1 for s in range(num_stages - 1)] + [n]
    raise ValueError(f"[{_LAYER_API}] seg_method must be 'uniform', 'layer:ClassName' or a list of "
                     f"boundaries, got {seg_method!r}")


def _pipe_group(group, api):
    if group is None:
        from .fleet.base.topology import _current_hcg

        hcg = _current_hcg()
        group = hcg.get_pipe_parallel_group() if hcg is not None else _coll.init_parallel_env()
    if not isinstance(group, _coll.Group):
        raise TypeError(f"[{api}] group must be an oar.distributed Group or None, got {type(group).__name__}")
    if not group.is_member():
        raise ValueError(f"[{api}] this rank is not a member of the pipeline group {group.ranks}")
    return group


class PipelineLayer(Layer):
    """The stage of a model that this rank runs.

    ``layers`` is the whole model as a list of ``LayerDesc`` (built here),
    ``Layer`` objects, or plain callables (functions applied to the
    activation). Rank r of ``group`` keeps stage r; by default the group is the pipeline group of
    ``fleet.init``'s layout (also when ``topology`` is given), else all ranks.
    ``seg_method`` cuts the list: ``"uniform"`` (by layer count),
    ``"layer:ClassName"`` (an equal number of ``ClassName`` layers per
    stage), or a list of ``num_stages + 1`` boundaries. Every rank builds
    every described layer, in order, and keeps only its own: with the same
    seed, the parameters equal those of the whole model built in one
    process. Sublayers are named by their index in ``layers``.

    >>> import oar
    >>> from oar.distributed.pipeline import LayerDesc, PipelineLayer
    >>> pl = PipelineLayer([LayerDesc(oar.nn.Linear, 4, 8), oar.nn.ReLU(), LayerDesc(oar.nn.Linear, 8, 2)],
    ...                    num_stages=1, loss_fn=oar.nn.MSELoss())
    >>> pl.get_num_stages(), pl(oar.ones([3, 4])).shape
    (1, [3, 2])
    >>> oar.distributed.destroy_process_group()
    """

    def __init__(self, layers, num_stages=None, topology=None, loss_fn=None, seg_method="uniform",
                 recompute_interval=0, recompute_ctx=None, num_virtual_pipeline_stages=None, group=None):
        super().__init__()
        if topology is not None:
            group = self._topology_group(topology, group)
        if recompute_interval:
            raise NotImplementedError(f"[{_LAYER_API}] recompute_interval is not supported yet")
        if num_virtual_pipeline_stages not in (None, 1):
            raise NotImplementedError(f"[{_LAYER_API}] interleaved (virtual) pipeline stages are not "
                                      "supported yet")
        if not isinstance(layers, (list, tuple)) or not layers:
            raise TypeError(f"[{_LAYER_API}] layers must be a non-empty list, got {layers!r}")
        for i, item in enumerate(layers):
            if not (isinstance(item, (LayerDesc, Layer)) or callable(item)):
                raise TypeError(f"[{_LAYER_API}] layers[{i}] must be a LayerDesc, a Layer or a callable, "
                                f"got {type(item).__name__}")
        self._group = _pipe_group(group, _LAYER_API)
        if num_stages is None:
            num_stages = self._group.nranks
        if isinstance(num_stages, bool) or not isinstance(num_stages, int) or num_stages < 1:
            raise ValueError(f"[{_LAYER_API}] num_stages must be a positive int, got {num_stages!r}")
        if num_stages != self._group.nranks:
            raise ValueError(f"[{_LAYER_API}] num_stages ({num_stages}) must equal the size of the "
                             f"pipeline group ({self._group.nranks} ranks: {self._group.ranks})")
        self._num_stages = num_stages
        self._stage_id = self._group.rank
        self._loss_fn = loss_fn
        self.segment_parts = _segment(list(layers), num_stages, seg_method)
        self._start = self.segment_parts[self._stage_id]
        self._end = self.segment_parts[self._stage_id + 1]
        self.run_function = []
        self.shared_layers = LayerDict()
        # key -> [(attr, shape, dtype)], owning stages: for the gradient sum.
        self._shared = {}
        shared_built = {}
        for i, item in enumerate(layers):
            mine = self._start <= i < self._end
            if isinstance(item, SharedLayerDesc):
                key = item.layer_name
                if key not in shared_built:
                    layer = shared_built[key] = item.build_layer()
                    metas = []
                    for attr in item.shared_weight_attr:
                        w = getattr(layer, attr, None)
                        if not isinstance(w, _C.Tensor):
                            raise ValueError(f"[{_LAYER_API}] shared layer {key!r} has no parameter {attr!r}")
                        metas.append((attr, list(w.shape), w.dtype))
                    self._shared[key] = (metas, set())
                self._shared[key][1].add(self.get_stage_from_index(i))
                if mine:
                    if key not in self.shared_layers:
                        self.shared_layers[key] = shared_built[key]
                    self.run_function.append(_SharedCall(shared_built[key], item.forward_func))
                continue
            # Built on every rank so the random initialisation of the layers
            # this stage keeps is the one a single process would draw.
            built = item.build_layer() if isinstance(item, LayerDesc) else item
            if mine:
                if isinstance(built, Layer):
                    self.add_sublayer(str(i), built)
                self.run_function.append(built)

    @staticmethod
    def _topology_group(topology, group):
        """The pipeline group of ``topology``: that of the fleet layout built on it."""
        from .fleet.base.topology import CommunicateTopology, _current_hcg

        if not isinstance(topology, CommunicateTopology):
            raise TypeError(f"[{_LAYER_API}] topology must be a fleet CommunicateTopology, "
                            f"got {type(topology).__name__}")
        hcg = _current_hcg()
        if hcg is None or hcg.topology() is not topology and (
                hcg.topology().get_hybrid_group_names() != topology.get_hybrid_group_names()
                or any(hcg.topology().get_dim(a) != topology.get_dim(a) for a in topology.get_hybrid_group_names())):
            raise ValueError(f"[{_LAYER_API}] topology {topology} is not the layout of fleet.init(); pass the "
                             "one of fleet.get_hybrid_communicate_group().topology()")
        pipe = hcg.get_pipe_parallel_group()
        if group is not None and list(group.ranks) != list(pipe.ranks):
            raise ValueError(f"[{_LAYER_API}] group {group.ranks} is not the topology's pipeline group {pipe.ranks}")
        return pipe

    def allreduce_shared_weight_gradients(self):
        """Sums the gradients of each shared weight over the stages using it.

        Every rank of the pipeline takes part (with zeros where it does not
        hold the layer), in the order the keys first appear, so the calls
        match on every rank."""
        for key, (metas, owners) in self._shared.items():
            if len(owners) < 2:
                continue
            layer = self.shared_layers[key] if self._stage_id in owners else None
            for attr, shape, dtype in metas:
                w = getattr(layer, attr) if layer is not None else None
                g = w.grad if w is not None and w.grad is not None else zeros(shape, dtype=dtype)
                _coll.all_reduce(g, group=self._group)
                if w is not None and w.grad is None:
                    w.grad = g

    def _duplicate_params(self):
        """ids of shared weights this stage holds but an earlier stage also
        holds: a global gradient norm counts each shared weight once."""
        out = set()
        for key, (metas, owners) in self._shared.items():
            if self._stage_id in owners and min(owners) != self._stage_id:
                out.update(id(getattr(self.shared_layers[key], a)) for a, _, _ in metas)
        return out

    def get_num_stages(self):
        """The number of stages (the size of the pipeline group)."""
        return self._num_stages

    def get_stage_from_index(self, layer_idx):
        """The stage that runs layer ``layer_idx`` of the model."""
        for s in range(self._num_stages):
            if self.segment_parts[s] <= layer_idx < self.segment_parts[s + 1]:
                return s
        raise IndexError(f"[{_LAYER_API}] layer index {layer_idx} is out of range "
                         f"[0, {self.segment_parts[-1]})")

    @property
    def stage_id(self):
        """This rank's stage: its rank in the pipeline group."""
        return self._stage_id

    def forward(self, input):  # noqa: A002 - Paddle's name
        for fn in self.run_function:
            input = fn(*input) if isinstance(input, tuple) else fn(input)
        return input


def _as_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _micro_split(x, m, mb):
    """Micro-batch m of a tensor or a tuple/list of tensors."""
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return tuple(t[m * mb:(m + 1) * mb] for t in x)
    return x[m * mb:(m + 1) * mb]


class PipelineParallel(Layer):
    """Trains a ``PipelineLayer`` with the 1F1B schedule.

    ``train_batch([inputs, labels], optimizer)`` cuts the batch into
    ``num_micro_batches`` equal micro-batches (Paddle: the strategy's
    ``pipeline_configs['accumulate_steps']``), runs
    ``num_stages - stage - 1`` warm-up forwards, then alternates one forward
    and one backward, then the remaining backwards; the last stage's loss of
    a micro-batch is ``loss_fn(output, labels) / num_micro_batches`` so the
    accumulated gradients are those of the mean loss. Then every stage takes
    an optimizer step. It returns the mean loss on every rank. The first
    stage needs the inputs and the last the labels; other ranks may pass
    None for them.

    >>> import numpy as np, oar
    >>> from oar.distributed.pipeline import LayerDesc, PipelineLayer, PipelineParallel
    >>> _ = oar.seed(0)
    >>> pl = PipelineLayer([LayerDesc(oar.nn.Linear, 4, 8), oar.nn.ReLU(), LayerDesc(oar.nn.Linear, 8, 1)],
    ...                    num_stages=1, loss_fn=oar.nn.MSELoss())
    >>> pp = PipelineParallel(pl, num_micro_batches=2)
    >>> opt = oar.optimizer.SGD(learning_rate=0.1, parameters=pp.parameters())
    >>> x, y = oar.ones([4, 4]), oar.zeros([4, 1])
    >>> losses = [float(pp.train_batch([x, y], opt)) for _ in range(3)]
    >>> losses[2] < losses[0]
    True
    >>> oar.distributed.destroy_process_group()
    """

    def __init__(self, layers, hcg=None, strategy=None, num_micro_batches=None, micro_batch_size=None,
                 group=None):
        super().__init__()
        if not isinstance(layers, PipelineLayer):
            raise TypeError(f"[{_PP_API}] layers must be a PipelineLayer, got {type(layers).__name__}")
        if strategy is not None:
            cfg = getattr(strategy, "pipeline_configs", None) or {}
            get = cfg.get if isinstance(cfg, dict) else (lambda k, d=None: getattr(cfg, k, d))
            num_micro_batches = num_micro_batches if num_micro_batches is not None else get("accumulate_steps")
            micro_batch_size = micro_batch_size if micro_batch_size is not None else get("micro_batch_size")
        if group is None and hcg is not None and hasattr(hcg, "get_pipe_parallel_group"):
            group = hcg.get_pipe_parallel_group()
        if num_micro_batches is None:
            num_micro_batches = 1
        if isinstance(num_micro_batches, bool) or not isinstance(num_micro_batches, int) or num_micro_batches < 1:
            raise ValueError(f"[{_PP_API}] num_micro_batches must be a positive int, got {num_micro_batches!r}")
        if micro_batch_size is not None and (isinstance(micro_batch_size, bool)
                                             or not isinstance(micro_batch_size, int) or micro_batch_size < 1):
            raise ValueError(f"[{_PP_API}] micro_batch_size must be a positive int, got {micro_batch_size!r}")
        group = layers._group if group is None else _pipe_group(group, _PP_API)
        if list(group.ranks) != list(layers._group.ranks):
            raise ValueError(f"[{_PP_API}] group {group.ranks} is not the PipelineLayer's group "
                             f"{layers._group.ranks}")
        self._layers = layers
        self._group = layers._group
        self.num_stages = layers.get_num_stages()
        self.stage_id = layers.stage_id
        self.accumulate_steps = num_micro_batches
        self.micro_batch_size = micro_batch_size
        self.is_pipeline_first_stage = self.stage_id == 0
        self.is_pipeline_last_stage = self.stage_id == self.num_stages - 1
        self._prev = self._group.ranks[self.stage_id - 1] if not self.is_pipeline_first_stage else None
        self._next = self._group.ranks[self.stage_id + 1] if not self.is_pipeline_last_stage else None
        # ("F" or "B", micro-batch) events of the last train_batch or
        # eval_batch on this stage, in the order they ran.
        self.schedule = []
        self._pending, self._total_loss = [], None

    def forward(self, *inputs, **kwargs):
        """Runs this rank's stage only (the whole model when there is one stage)."""
        return self._layers(*inputs, **kwargs)

    # -- messages ---------------------------------------------------------

    def _send(self, tensors, dst, with_header):
        tasks = []
        if with_header:
            head = [len(tensors)]
            for t in tensors:
                head += [_dtype_list().index(t.dtype), int(t.stop_gradient), t.ndim] + list(t.shape)
            head_t = to_tensor(np.array(head, dtype=np.int64))
            tasks.append(_coll.isend(to_tensor(np.array([len(head)], dtype=np.int64)), dst, self._group))
            tasks.append(_coll.isend(head_t, dst, self._group))
        for t in tensors:
            tasks.append(_coll.isend(t.detach(), dst, self._group))
        self._pending.extend(tasks)

    def _recv_activations(self):
        n = empty([1], dtype="int64")
        _coll.recv(n, self._prev, self._group)
        head = empty([int(n.numpy()[0])], dtype="int64")
        _coll.recv(head, self._prev, self._group)
        h = head.numpy().tolist()
        out, pos = [], 1
        for _ in range(h[0]):
            code, sg, nd = h[pos:pos + 3]
            shape = h[pos + 3:pos + 3 + nd]
            pos += 3 + nd
            t = empty(shape, dtype=_dtype_list()[code])
            _coll.recv(t, self._prev, self._group)
            # A leaf, so that backward leaves the gradient to send back in .grad.
            t.stop_gradient = bool(sg)
            out.append(t)
        return out

    def _recv_grads(self, outputs):
        grads = []
        for t in outputs:
            g = empty(list(t.shape), dtype=t.dtype)
            _coll.recv(g, self._next, self._group)
            grads.append(g)
        return grads

    # -- one micro-batch ----------------------------------------------------

    def _forward_step(self, m, inputs, labels, mb, compute_loss):
        if self.is_pipeline_first_stage:
            x = _micro_split(inputs, m, mb)
            stage_in = []
        else:
            stage_in = self._recv_activations()
            x = tuple(stage_in) if len(stage_in) > 1 else stage_in[0]
        out = self._layers(x)
        self.schedule.append(("F", m))
        if not self.is_pipeline_last_stage:
            outs = _as_list(out)
            for t in outs:
                if not isinstance(t, _C.Tensor):
                    raise TypeError(f"[{_PP_API}] stage {self.stage_id} must output a Tensor or a tuple of "
                                    f"Tensors, got {type(t).__name__}")
            self._send(outs, self._next, True)
            return stage_in, [t for t in outs if not t.stop_gradient]
        if not compute_loss:
            return stage_in, out
        y = _micro_split(labels, m, mb)
        loss = self._layers._loss_fn(out, y)
        if self.accumulate_steps > 1:
            loss = loss / self.accumulate_steps
        self._total_loss = loss.detach() if self._total_loss is None else self._total_loss + loss.detach()
        return stage_in, [loss]

    def _backward_step(self, m, stage_in, outs):
        if self.is_pipeline_last_stage:
            grads = [None] * len(outs)
        else:
            grads = self._recv_grads(outs)
        if outs:
            _backward(outs, grads)
        self.schedule.append(("B", m))
        if not self.is_pipeline_first_stage:
            back = [t.grad if t.grad is not None else zeros(list(t.shape), dtype=t.dtype)
                    for t in stage_in if not t.stop_gradient]
            if back:
                self._send(back, self._prev, False)

    # -- public -----------------------------------------------------------

    def _batch_size(self, data, api_what, need_labels):
        if not isinstance(data, (list, tuple)) or len(data) != 2:
            raise TypeError(f"[{_PP_API}] {api_what} expects data as [inputs, labels], got {type(data).__name__}")
        inputs, labels = data
        if self.is_pipeline_first_stage and inputs is None:
            raise ValueError(f"[{_PP_API}] the first stage needs the inputs of data")
        if self.is_pipeline_last_stage and labels is None and need_labels:
            raise ValueError(f"[{_PP_API}] the last stage needs the labels of data")
        # Whatever a rank is given is checked, so a rank with the whole batch
        # fails here rather than waiting for a peer that failed.
        ts = _as_list(inputs) + _as_list(labels)
        if not ts:
            return None
        for t in ts:
            if not isinstance(t, _C.Tensor) or t.ndim == 0:
                raise TypeError(f"[{_PP_API}] inputs and labels must be Tensors with a batch axis")
        b = ts[0].shape[0]
        if any(t.shape[0] != b for t in ts):
            raise ValueError(f"[{_PP_API}] all tensors of data must have the same batch size, got "
                             f"{[t.shape[0] for t in ts]}")
        m = self.accumulate_steps
        if b % m:
            raise ValueError(f"[{_PP_API}] the batch size {b} is not divisible by num_micro_batches "
                             f"(accumulate_steps) {m}")
        if self.micro_batch_size is not None and self.micro_batch_size * m != b:
            raise ValueError(f"[{_PP_API}] the batch size {b} must equal micro_batch_size "
                             f"{self.micro_batch_size} x accumulate_steps {m}")
        return b // m

    def _broadcast_loss(self):
        """The last stage's accumulated loss, on every rank of the pipeline."""
        src = self._group.ranks[-1]
        if self.num_stages == 1:
            return self._total_loss
        info = np.zeros([2], dtype=np.float64)
        if self.is_pipeline_last_stage:
            info[:] = [float(self._total_loss), _dtype_list().index(self._total_loss.dtype)]
        buf = to_tensor(info)
        _coll.broadcast(buf, src, self._group)
        if self.is_pipeline_last_stage:
            return self._total_loss
        v = buf.numpy()
        return to_tensor(np.array(v[0]), dtype=_dtype_list()[int(v[1])])

    def _finish_sends(self):
        pending, self._pending = self._pending, []
        for t in pending:
            t.wait()

    def _optimizer_step(self, optimizer):
        # A fleet optimizer averages the gradients over the data-parallel
        # groups first, so the norm below is that of the averaged gradients.
        sync = getattr(optimizer, "_sync_gradients", None)
        if sync is not None:
            sync()
        if getattr(optimizer, "_clips_across_pipeline", False):
            # The fleet optimizer knows every group (model parallel too) and
            # sums the norm over the pipeline itself.
            optimizer.__dict__["_clip_skip"] = self._layers._duplicate_params()
            optimizer.step()
            return
        clip = getattr(optimizer, "_grad_clip", None)
        if not isinstance(clip, ClipGradByGlobalNorm) or self.num_stages == 1:
            optimizer.step()
            return
        # The norm of the whole model's gradients: each stage's sum of
        # squares, summed over the pipeline; the optimizer then applies the
        # common scale (its own clip would only see this stage's norm).
        skip = self._layers._duplicate_params()
        total = zeros([1], dtype="float64")
        with no_grad():
            for p, g in optimizer._collect():
                if _needs_clip(p, g) and id(p) not in skip:
                    g32 = g.astype("float64" if str(g.dtype).endswith("float64") else "float32")
                    total = total + (g32 * g32).sum().astype("float64")
        _coll.all_reduce(total, group=self._group)
        norm = float(np.sqrt(total.numpy()[0]))
        scale = clip.clip_norm / max(norm, clip.clip_norm)
        if clip.auto_skip_clip and scale >= 1.0:
            optimizer.step()
            return

        def apply(pairs):
            return [(p, g * to_tensor(scale, dtype=g.dtype)) if _needs_clip(p, g) else (p, g) for p, g in pairs]

        optimizer._grad_clip = apply
        try:
            optimizer.step()
        finally:
            optimizer._grad_clip = clip

    def train_batch(self, data, optimizer, lr_scheduler=None, scaler=None):
        """One training step on ``data = [inputs, labels]``; returns the mean loss."""
        if scaler is not None:
            raise NotImplementedError(f"[{_PP_API}] a GradScaler is not supported by train_batch yet")
        if self._layers._loss_fn is None:
            raise ValueError(f"[{_PP_API}] train_batch needs the PipelineLayer's loss_fn")
        mb = self._batch_size(data, "train_batch", True)
        inputs, labels = data
        self._layers.train()
        self.schedule, self._pending, self._total_loss = [], [], None
        m_total = self.accumulate_steps
        warmup = min(self.num_stages - self.stage_id - 1, m_total)
        saved = {}
        for m in range(warmup):
            saved[m] = self._forward_step(m, inputs, labels, mb, True)
        for i in range(m_total - warmup):
            f = warmup + i
            saved[f] = self._forward_step(f, inputs, labels, mb, True)
            self._backward_step(i, *saved.pop(i))
        for b in range(m_total - warmup, m_total):
            self._backward_step(b, *saved.pop(b))
        # (After an error the sends are not waited for: a peer stuck on an
        # earlier message would hide the error until the group's timeout.)
        self._finish_sends()
        self._layers.allreduce_shared_weight_gradients()
        self._optimizer_step(optimizer)
        optimizer.clear_grad()
        if lr_scheduler is not None:
            lr_scheduler.step()
        return self._broadcast_loss()

    def eval_batch(self, data, compute_loss=False):
        """Forward only, micro-batch by micro-batch, without gradients.

        With ``compute_loss`` it returns the mean loss on every rank;
        otherwise the last stage returns its outputs concatenated along
        axis 0 (a list of the micro-batch outputs when they are tuples) and
        the other stages None.

        >>> import oar
        >>> from oar.distributed.pipeline import LayerDesc, PipelineLayer, PipelineParallel
        >>> pl = PipelineLayer([LayerDesc(oar.nn.Linear, 4, 2)], num_stages=1, loss_fn=oar.nn.MSELoss())
        >>> pp = PipelineParallel(pl, num_micro_batches=2)
        >>> pp.eval_batch([oar.ones([6, 4]), None]).shape
        [6, 2]
        >>> oar.distributed.destroy_process_group()
        """
        if compute_loss and self._layers._loss_fn is None:
            raise ValueError(f"[{_PP_API}] eval_batch(compute_loss=True) needs the PipelineLayer's loss_fn")
        mb = self._batch_size(data, "eval_batch", compute_loss)
        inputs, labels = data
        self._layers.eval()
        self.schedule, self._pending, self._total_loss = [], [], None
        outs = []
        with no_grad():
            for m in range(self.accumulate_steps):
                _, out = self._forward_step(m, inputs, labels, mb, compute_loss)
                if self.is_pipeline_last_stage and not compute_loss:
                    outs.append(out)
        self._finish_sends()
        if compute_loss:
            return self._broadcast_loss()
        if not self.is_pipeline_last_stage:
            return None
        if all(isinstance(o, _C.Tensor) for o in outs):
            from .._manip import concat

            return concat(outs) if len(outs) > 1 else outs[0]
        return outs
