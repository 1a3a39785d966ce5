"""Data parallel training: ``oar.DataParallel`` (Paddle's ``paddle.DataParallel``).

Each rank runs the whole model on its share of the batch. Gradients are
averaged over the ranks in buckets: a bucket's all-reduce starts as soon as
the backward pass has produced every gradient in it, so communication runs on
the communication thread while the backward pass computes the rest. Buckets
start in a fixed order (MPI requires the same order of collectives on every
rank, and the order gradients become ready may differ between ranks); at the
end of the backward pass the averaged gradients are written back to
``param.grad``.
"""
import contextlib
import weakref

from .. import _C
from ..nn import Layer
from . import collective as C

__all__ = ["DataParallel", "sync_params_buffers"]


def sync_params_buffers(model, group=None, src_rank=0):
    """Copies every parameter and buffer of rank ``src_rank`` to the other
    ranks, so that every rank starts from the same weights.

    >>> import oar, oar.distributed as dist
    >>> _ = dist.init_parallel_env()
    >>> model = oar.nn.Linear(2, 2)
    >>> before = model.weight.numpy().copy()
    >>> dist.sync_params_buffers(model, src_rank=0)
    >>> bool((model.weight.numpy() == before).all())   # one rank: already equal
    True
    >>> dist.destroy_process_group()
    """
    # The broadcast writes into the tensors' storage: no autograd history.
    for t in list(model.parameters()) + list(model.buffers()):
        if t is not None and t.size:
            C.broadcast(t, src=src_rank, group=group)


class _Bucket:
    __slots__ = ("params", "pending", "ready", "task", "flat", "launched")

    def __init__(self, params):
        self.params = params
        self.reset()

    def reset(self):
        self.pending = len(self.params)
        self.ready = set()
        self.task = None
        self.flat = None
        self.launched = False


class WrappedLayer(Layer):
    """A layer that runs ``self._layers`` and whose state is that layer's
    state (its keys carry no ``_layers.`` prefix), as Paddle's parallel
    wrappers are."""

    def forward(self, *inputs, **kwargs):
        return self._layers(*inputs, **kwargs)

    def state_dict(self, *args, **kwargs):
        return self._layers.state_dict(*args, **kwargs)

    def set_state_dict(self, state_dict, *args, **kwargs):
        return self._layers.set_state_dict(state_dict, *args, **kwargs)


class DataParallel(WrappedLayer):
    """Runs ``layers`` data-parallel over the ranks of ``group`` (all by default).

    Parameters are copied from rank 0 when it is built. After each
    ``loss.backward()`` every ``param.grad`` holds the gradient averaged over
    the ranks. ``comm_buffer_size`` (MB) sizes the gradient buckets;
    ``find_unused_parameters=True`` lets the forward pass leave some parameters
    out (their gradient counts as zero on that rank). Inside ``no_sync()``
    gradients accumulate locally; the next backward outside it averages the sum.
    In a single process started without a launcher it needs no
    ``init_parallel_env`` and trains as the wrapped layer does, as in Paddle.

    >>> import oar
    >>> model = oar.DataParallel(oar.nn.Linear(2, 2))
    >>> model(oar.ones([3, 2])).sum().backward()
    >>> [n for n, _ in model.named_parameters()], model._layers.weight.grad.shape
    (['_layers.weight', '_layers.bias'], [2, 2])
    """

    def __init__(self, layers, strategy=None, comm_buffer_size=25, last_comm_buffer_size=1,
                 find_unused_parameters=False, group=None):
        super().__init__()
        api = "oar.DataParallel"
        if not isinstance(layers, Layer):
            raise TypeError(f"[{api}] layers must be an oar.nn.Layer, got {type(layers).__name__}")
        for name, v in (("comm_buffer_size", comm_buffer_size), ("last_comm_buffer_size", last_comm_buffer_size)):
            if not isinstance(v, (int, float)) or v <= 0:
                raise ValueError(f"[{api}] {name} must be a positive number of MB, got {v!r}")
        self._layers = layers
        self.find_unused_parameters = bool(find_unused_parameters)
        if group is None and C._state["world"] is None and C.get_world_size() <= 1:
            # One process, no launcher: a plain wrapper, as in Paddle (nothing to average).
            self._group, self._nranks = None, 1
        else:
            self._group = group if group is not None else C._world(api)
            self._nranks = self._group.nranks
        self._sync = True
        self._grad_need_sync = True
        self._buckets = []
        self._param_bucket = {}
        self._in_backward = False
        # Buckets whose all-reduce started while the backward pass was still
        # running, in the last backward pass (the overlap, for tests and tuning).
        self.overlapped_buckets = 0
        self._launched_early = 0
        if self._nranks > 1:
            sync_params_buffers(layers, self._group, self._group.ranks[0])
            self._build_buckets(comm_buffer_size, last_comm_buffer_size)

    # --- buckets ------------------------------------------------------------
    def _build_buckets(self, size_mb, last_mb):
        params = [p for p in self._layers.parameters() if not p.stop_gradient]
        seen, unique = set(), []
        for p in params:
            if id(p) not in seen:
                seen.add(id(p))
                unique.append(p)
        # Gradients arrive roughly in reverse order of use: the last layers'
        # first. The first bucket is small so communication starts early.
        limit = last_mb * (1 << 20)
        cur, cur_bytes, cur_dtype = [], 0, None
        for p in reversed(unique):
            nbytes = p.size * p.element_size()
            if cur and (p.dtype != cur_dtype or cur_bytes + nbytes > limit):
                self._buckets.append(_Bucket(cur))
                cur, cur_bytes = [], 0
                limit = size_mb * (1 << 20)
            cur.append(p)
            cur_bytes += nbytes
            cur_dtype = p.dtype
        if cur:
            self._buckets.append(_Bucket(cur))
        me = weakref.ref(self)
        for b, bucket in enumerate(self._buckets):
            for i, p in enumerate(bucket.params):
                self._param_bucket[id(p)] = (b, i)
                p._register_post_accumulate_hook(
                    lambda pid=id(p): (lambda dp: dp is not None and dp._grad_ready(pid))(me()))
        self._next = 0

    def _grad_ready(self, pid):
        if not self._sync:
            return
        if not self._in_backward:
            self._in_backward = True
            me = weakref.ref(self)
            _C._queue_backward_callback(lambda: (lambda dp: dp is not None and dp._finish_backward())(me()))
        b, i = self._param_bucket[pid]
        bucket = self._buckets[b]
        if i not in bucket.ready:
            bucket.ready.add(i)
            bucket.pending -= 1
        self._launch_ready()

    def _launch_ready(self, early=True):
        while self._next < len(self._buckets) and self._buckets[self._next].pending == 0:
            self._launch(self._buckets[self._next])
            self._launched_early += early
            self._next += 1

    def _launch(self, bucket):
        from .._manip import concat
        from ..creation import zeros

        flats = []
        for p in bucket.params:
            g = p.grad
            flats.append(g.reshape([-1]) if g is not None else zeros([p.size], dtype=p.dtype))
        bucket.flat = concat(flats) if len(flats) > 1 else flats[0].clone()
        bucket.task = C.all_reduce(bucket.flat, op=C.ReduceOp.AVG, group=self._group, sync_op=False)
        bucket.launched = True

    def _finish_backward(self):
        self._in_backward = False
        missing = [b for b in self._buckets if b.pending]
        if missing and not self.find_unused_parameters:
            n = sum(b.pending for b in missing)
            for b in self._buckets:
                b.reset()
            self._next = 0
            raise RuntimeError(
                f"[oar.DataParallel] {n} parameter(s) got no gradient in this backward pass, so their "
                "all-reduce could not run; pass find_unused_parameters=True if the forward pass may skip "
                "parameters")
        for b in missing:  # unused here: contribute zeros
            b.pending = 0
        self._launch_ready(early=False)
        self.overlapped_buckets, self._launched_early = self._launched_early, 0
        used = None
        if self.find_unused_parameters:
            # A parameter no rank used keeps no gradient, as in one process
            # (an optimizer then leaves it alone); one small all-reduce tells.
            from ..creation import to_tensor

            mask = [int(p.grad is not None) for b in self._buckets for p in b.params]
            used = to_tensor(mask, dtype="int32")
            C.all_reduce(used, op=C.ReduceOp.MAX, group=self._group)
            used = used.numpy().tolist()
        try:
            k = 0
            for b in self._buckets:
                b.task.wait()
                off = 0
                for p in b.params:
                    n = p.size
                    p.grad = b.flat[off:off + n].reshape(list(p.shape)) if used is None or used[k] else None
                    off += n
                    k += 1
        finally:
            for b in self._buckets:
                b.reset()
            self._next = 0

    # --- Layer API ----------------------------------------------------------
    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of backward passes inside accumulate without communication."""
        prev, self._sync = self._sync, False
        try:
            yield
        finally:
            self._sync = prev

    set_dict = WrappedLayer.set_state_dict
    load_dict = WrappedLayer.set_state_dict

    def scale_loss(self, loss):
        """Kept for Paddle 2.x code: gradients are averaged already."""
        return loss
