"""Manual tensor parallelism (Paddle's ``fleet.meta_parallel`` layers).

Each layer takes and returns plain local tensors, as in Paddle, and holds its
weight as a distributed tensor split over the model-parallel group. Inside,
the computation runs on distributed tensors, so the communication (and its
gradient) comes from the ops' SPMD rules and the differentiable crossings
``dtensor_from_local`` / ``dtensor_to_local``: no hand-written collectives.
"""
from .. import _C
from ..creation import zeros_like
from ..nn import Layer
from ..nn import functional as F
from . import collective as C
from .auto_parallel import ProcessMesh, Replicate, Shard, dtensor_from_local, dtensor_to_local, reshard, \
    shard_tensor

__all__ = ["ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding", "ParallelCrossEntropy"]


def _mesh(group, api):
    """The 1-D mesh of the model-parallel group: ``group``, else the
    model-parallel group of ``fleet.init``'s layout, else all ranks."""
    if group is None:
        from .fleet.base.topology import _current_hcg

        hcg = _current_hcg()
        group = hcg.get_model_parallel_group() if hcg is not None else C._world(api)
    return ProcessMesh(list(group.ranks), dim_names=["mp"])


def _divisible(api, what, n, k):
    if n % k:
        raise ValueError(f"[{api}] {what} ({n}) must be divisible by the model-parallel degree ({k})")


class ColumnParallelLinear(Layer):
    """``y = x W + b`` with W's columns (and b) split over the group. With
    ``gather_output`` every rank returns the whole y, else its column block.

    >>> import oar, oar.distributed as dist
    >>> from oar.distributed.fleet.meta_parallel import ColumnParallelLinear
    >>> _ = dist.init_parallel_env()
    >>> fc = ColumnParallelLinear(4, 6, gather_output=True)
    >>> fc.weight.placements, fc(oar.ones([3, 4])).shape
    ([Shard(dim=1)], [3, 6])
    >>> dist.destroy_process_group()
    """

    def __init__(self, in_features, out_features, weight_attr=None, has_bias=None, gather_output=True,
                 fuse_matmul_bias=False, mp_group=None, name=None, bias_attr=None):
        super().__init__()
        api = "oar.distributed.fleet.meta_parallel.ColumnParallelLinear"
        self._mesh = _mesh(mp_group, api)
        _divisible(api, "out_features", out_features, len(self._mesh.process_ids))
        self.gather_output = gather_output
        w = self.create_parameter([in_features, out_features], attr=weight_attr)
        self.weight = shard_tensor(w, self._mesh, [Shard(1)])
        self.bias = None
        if has_bias is None or has_bias:
            b = self.create_parameter([out_features], attr=bias_attr, is_bias=True)
            self.bias = shard_tensor(b, self._mesh, [Shard(0)])

    def forward(self, x):
        xd = dtensor_from_local(x, self._mesh, [Replicate()])
        y = F.linear(xd, self.weight, self.bias)
        if self.gather_output:
            y = reshard(y, self._mesh, [Replicate()])
        return dtensor_to_local(y)


class RowParallelLinear(Layer):
    """``y = x W + b`` with W's rows split over the group. With
    ``input_is_parallel`` x is this rank's block of columns (a
    ColumnParallelLinear's output without gather); y is whole on every rank.

    >>> import oar, oar.distributed as dist
    >>> from oar.distributed.fleet.meta_parallel import ColumnParallelLinear, RowParallelLinear
    >>> _ = dist.init_parallel_env()
    >>> up = ColumnParallelLinear(4, 8, gather_output=False)
    >>> down = RowParallelLinear(8, 4, input_is_parallel=True)
    >>> down.weight.placements, down(up(oar.ones([3, 4]))).shape
    ([Shard(dim=0)], [3, 4])
    >>> dist.destroy_process_group()
    """

    def __init__(self, in_features, out_features, weight_attr=None, has_bias=True, input_is_parallel=False,
                 fuse_matmul_bias=False, mp_group=None, name=None, bias_attr=None):
        super().__init__()
        api = "oar.distributed.fleet.meta_parallel.RowParallelLinear"
        self._mesh = _mesh(mp_group, api)
        _divisible(api, "in_features", in_features, len(self._mesh.process_ids))
        self.input_is_parallel = input_is_parallel
        w = self.create_parameter([in_features, out_features], attr=weight_attr)
        self.weight = shard_tensor(w, self._mesh, [Shard(0)])
        self.bias = None
        if has_bias:
            b = self.create_parameter([out_features], attr=bias_attr, is_bias=True)
            self.bias = shard_tensor(b, self._mesh, [Replicate()])

    def forward(self, x):
        last = len(x.shape) - 1
        if self.input_is_parallel:
            xd = dtensor_from_local(x, self._mesh, [Shard(last)])
        else:
            xd = reshard(dtensor_from_local(x, self._mesh, [Replicate()]), self._mesh, [Shard(last)])
        y = reshard(_C.matmul(xd, self.weight), self._mesh, [Replicate()])  # Partial(sum) -> all-reduce
        if self.bias is not None:
            y = y + self.bias
        return dtensor_to_local(y)


class VocabParallelEmbedding(Layer):
    """An embedding table whose rows (the vocabulary) are split over the group;
    each rank looks up the ids in its range, and the pieces are summed.

    >>> import oar, oar.distributed as dist
    >>> from oar.distributed.fleet.meta_parallel import VocabParallelEmbedding
    >>> _ = dist.init_parallel_env()
    >>> emb = VocabParallelEmbedding(10, 4)
    >>> emb.weight.placements, emb(oar.to_tensor([[1, 2, 3]])).shape
    ([Shard(dim=0)], [1, 3, 4])
    >>> dist.destroy_process_group()
    """

    def __init__(self, num_embeddings, embedding_dim, weight_attr=None, mp_group=None, name=None):
        super().__init__()
        self._mesh = _mesh(mp_group, "oar.distributed.fleet.meta_parallel.VocabParallelEmbedding")
        w = self.create_parameter([num_embeddings, embedding_dim], attr=weight_attr)
        self.weight = shard_tensor(w, self._mesh, [Shard(0)])

    def forward(self, x):
        xd = dtensor_from_local(x, self._mesh, [Replicate()])
        y = reshard(F.embedding(xd, self.weight), self._mesh, [Replicate()])
        return dtensor_to_local(y)


class ParallelCrossEntropy(Layer):
    """Softmax cross entropy of logits whose class axis is split over the group
    (a ColumnParallelLinear's output without gather): the row maximum and the
    sum of exponentials are reduced across the group; no rank holds all classes.
    Returns the per-sample loss with a trailing axis of 1, as Paddle does.

    >>> import oar, oar.distributed as dist
    >>> from oar.distributed.fleet.meta_parallel import ParallelCrossEntropy
    >>> _ = dist.init_parallel_env()
    >>> logits = oar.to_tensor([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    >>> loss = ParallelCrossEntropy()(logits, oar.to_tensor([[1], [0]]))
    >>> loss.shape, [round(v, 4) for v in loss.numpy().ravel().tolist()]  # log(3), log(e^2 + 2) - 2
    ([2, 1], [1.0986, 0.2395])
    >>> dist.destroy_process_group()
    """

    def __init__(self, mp_group=None, name=None, ignore_index=-100):
        super().__init__()
        self._mesh = _mesh(mp_group, "oar.distributed.fleet.meta_parallel.ParallelCrossEntropy")
        self.ignore_index = ignore_index

    def forward(self, input, label):
        api = "oar.distributed.fleet.meta_parallel.ParallelCrossEntropy"
        last = len(input.shape) - 1
        logits = dtensor_from_local(input, self._mesh, [Shard(last)])
        classes = logits.shape[-1]
        if len(label.shape) == len(input.shape):
            label = _C.squeeze(label, [-1])
        if list(label.shape) != list(input.shape[:-1]):
            raise ValueError(f"[{api}] label shape {list(label.shape)} does not match logits {list(input.shape)}")
        rep = [Replicate()]
        m = reshard(logits.amax(axis=-1, keepdim=True), self._mesh, rep).detach()
        shifted = logits - m
        total = reshard(_C.exp(shifted).sum(axis=-1, keepdim=True), self._mesh, rep)
        valid = label != self.ignore_index
        safe = _C.where(valid, label, zeros_like(label))
        onehot = F.one_hot(safe, classes).astype(input.dtype)
        picked = reshard((shifted * onehot).sum(axis=-1, keepdim=True), self._mesh, rep)
        loss = (_C.log(total) - picked) * _C.unsqueeze(valid.astype(input.dtype), [-1])
        return dtensor_to_local(loss)
