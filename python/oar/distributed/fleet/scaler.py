"""``fleet.distributed_scaler``: loss scaling that agrees across the ranks."""
from .. import collective as _coll

__all__ = ["distributed_scaler"]


def distributed_scaler(scaler):
    """Makes ``scaler`` (an ``oar.amp.GradScaler``) decide the same on
    every rank: after unscaling this rank's gradients, whether some gradient
    overflowed is combined (any rank) over the job, so all ranks skip or take
    the step together and adapt the scale alike. In a hybrid layout the
    gradients a rank holds before the optimizer's reduction differ between
    ranks, and a step taken by only some ranks would leave the others'
    collectives waiting. Returns ``scaler`` (changed in place).

    >>> import oar
    >>> from oar.distributed import fleet
    >>> _ = fleet.init(is_collective=True)
    >>> scaler = fleet.distributed_scaler(oar.amp.GradScaler(init_loss_scaling=1024))
    >>> scaler.get_loss_scaling()
    1024.0
    >>> oar.distributed.destroy_process_group()
    """
    from ...amp.grad_scaler import AmpScaler
    from ...creation import to_tensor

    if not isinstance(scaler, AmpScaler):
        raise TypeError(f"[oar.distributed.fleet.distributed_scaler] expected an oar.amp.GradScaler, "
                        f"got {type(scaler).__name__}")
    if getattr(scaler, "_distributed", False) or _coll.get_world_size() <= 1:
        return scaler
    local_unscale = scaler.unscale_

    def unscale_(optimizer):
        first = scaler._enable and id(optimizer) not in scaler._unscaled
        local_unscale(optimizer)
        if first:
            flag = to_tensor([int(scaler._found_inf)], dtype="int32")
            _coll.all_reduce(flag, _coll.ReduceOp.MAX, group=_coll.init_parallel_env())
            scaler._found_inf = bool(flag.numpy()[0])

    scaler.unscale_ = unscale_
    scaler._distributed = True
    return scaler
