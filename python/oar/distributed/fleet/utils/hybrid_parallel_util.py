"""Gradient helpers of hybrid parallelism (Paddle's ``fleet.utils.hybrid_parallel_util``)."""
from ....autograd import no_grad
from ... import collective as _coll

__all__ = ["fused_allreduce_gradients", "fused_allreduce_gradients_with_group"]


def _local(t):
    return t._local_value() if t.is_dist() else t


def fused_allreduce_gradients_with_group(parameter_list, group, bucket_size=128 * 1024 * 1024, scale=None):
    """Averages the gradients of ``parameter_list`` over ``group`` in place:
    one all-reduce per dtype of the concatenated gradients (distributed
    tensors: their pieces). Parameters without a gradient are skipped, so
    every rank must hold gradients for the same parameters. ``scale``, when
    given, multiplies the summed gradients instead of dividing by the group size.

    >>> import oar, oar.distributed as dist
    >>> from oar.distributed.fleet.utils.hybrid_parallel_util import fused_allreduce_gradients_with_group
    >>> w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> (w * 3).sum().backward()
    >>> fused_allreduce_gradients_with_group([w], dist.init_parallel_env())
    >>> w.grad.numpy().tolist()
    [3.0, 3.0]
    >>> dist.destroy_process_group()
    """
    if group is None or group.nranks <= 1 and scale is None:
        return
    by_dtype = {}
    for p in parameter_list:
        if p.grad is not None:
            by_dtype.setdefault(str(p.grad.dtype), []).append(_local(p.grad))
    for grads in by_dtype.values():
        flat = _coll._flat_concat(grads)  # a new buffer, on the gradients' device
        if scale is None:
            _coll.all_reduce(flat, _coll.ReduceOp.AVG, group=group)
        else:
            _coll.all_reduce(flat, _coll.ReduceOp.SUM, group=group)
            flat = flat * scale
        off = 0
        with no_grad():
            for g in grads:
                g.copy_(flat[off:off + g.size].reshape(list(g.shape)), False)
                off += g.size


def fused_allreduce_gradients(parameter_list, hcg):
    """Averages the gradients of ``parameter_list`` over the data-parallel
    group of ``hcg`` (all ranks when ``hcg`` is None), e.g. after backward
    passes run inside ``DataParallel.no_sync()``.

    >>> import oar
    >>> from oar.distributed import fleet
    >>> from oar.distributed.fleet.utils.hybrid_parallel_util import fused_allreduce_gradients
    >>> _ = fleet.init(is_collective=True)
    >>> w = oar.to_tensor([1.0], stop_gradient=False)
    >>> (w * 4).sum().backward()
    >>> fused_allreduce_gradients([w], fleet.get_hybrid_communicate_group())
    >>> w.grad.numpy().tolist()
    [4.0]
    >>> oar.distributed.destroy_process_group()
    """
    group = _coll.init_parallel_env() if hcg is None else hcg.get_data_parallel_group()
    fused_allreduce_gradients_with_group(parameter_list, group)
