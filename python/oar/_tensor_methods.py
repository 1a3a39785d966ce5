"""Tensor methods written in Python: printing, conversions, backward (indexing is in python/bind/getitem.cpp)."""
import builtins

import weakref

import numpy as np

from . import _C
from .autograd import backward as _backward_many

Tensor = _C.Tensor


def _place(self):
    from .device import _place_from
    return _place_from(*_C._device_index(self))


def _move(self, kind, index, blocking=True):
    if tuple(_C._device_index(self)) == (kind, index):
        return self
    out = _C._to_device(self, kind, index, blocking)
    out.stop_gradient = self.stop_gradient
    return out


def _cpu(self):
    """This tensor on the CPU (itself when it is there already); differentiable."""
    return _move(self, 0, 0)


def _cuda(self, device_id=None, blocking=True):
    """This tensor on a GPU (the current one by default), as Paddle's Tensor.cuda."""
    from .device import cuda
    return _move(self, 1, cuda._index(device_id, "oar.Tensor.cuda"))


def _is_device_name(s):
    """Whether the string `s` names a device rather than a dtype ('cpu', 'gpu:0', 'custom_cpu:1', ...)."""
    kind = s.split(":")[0].lower()
    if ":" in s or kind in ("cpu", "gpu", "cuda"):
        return True
    try:
        _C.dtype_from_name(s)
        return False
    except (TypeError, ValueError):
        return True  # not a dtype: parsed as a device, which names what is wrong


def _to(self, *args, **kwargs):
    """Tensor.to(device=None, dtype=None, blocking=None): moves and/or casts; a
    Tensor argument gives both its device and its dtype. blocking=False queues a
    copy from the host on the device's current stream; differentiable."""
    from .device import Place, _parse
    api = "oar.Tensor.to"
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    blocking = kwargs.pop("blocking", None)
    if kwargs:
        raise TypeError(f"[{api}] unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, _C.Tensor):
            device, dtype = _place(a), a.dtype
        elif isinstance(a, (Place, int)) and not isinstance(a, bool) or (isinstance(a, str) and _is_device_name(a)):
            device = a
        elif isinstance(a, bool) or a is None:
            blocking = a
        else:
            dtype = a
    out = self
    if dtype is not None:
        out = out.astype(dtype)
    if device is not None:
        out = _move(out, *_parse(device, api), blocking=blocking is not False)
    return out


def _repr(self):
    from ._framework_ext import PRINT_OPTIONS as opts
    arr = self.numpy()
    prefix = "       "
    sci = opts["sci_mode"]
    formatter = None if sci is None else {"float_kind": (lambda v: f"{v:.{opts['precision']}e}") if sci else
                                          (lambda v: f"{v:.{opts['precision']}f}")}
    body = np.array2string(arr, separator=", ", prefix=prefix, precision=opts["precision"],
                           threshold=opts["threshold"], edgeitems=opts["edgeitems"], max_line_width=opts["linewidth"],
                           formatter=formatter)
    dt = str(self.dtype).split(".")[-1]
    return (f"Tensor(shape={self.shape}, dtype={dt}, place={_place(self)}, "
            f"stop_gradient={self.stop_gradient},\n{prefix}{body})")


def _item(self, *idx):
    if idx:
        return self[idx].item()
    if self.size != 1:
        raise ValueError(f"[Tensor.item] only a tensor with one element can be converted to a Python number, "
                         f"got shape {self.shape}")
    return self.numpy().reshape(-1)[0].item()


def _scalar_conv(kind):
    def conv(self):
        if self.size != 1:
            raise TypeError(f"[Tensor.__{kind.__name__}__] only a tensor with one element can be converted, "
                            f"got shape {self.shape}")
        return kind(self.item())
    return conv


def _index(self):
    if self.dtype not in (_C.dtype.int8, _C.dtype.int16, _C.dtype.int32, _C.dtype.int64, _C.dtype.uint8) \
            or self.size != 1:
        raise TypeError("[Tensor.__index__] only a one-element integer tensor can be used as an index")
    return int(self.item())


def _len(self):
    if self.ndim == 0:
        raise TypeError("[Tensor.__len__] len() of a 0-D tensor")
    return self.shape[0]


def _iter(self):
    if self.ndim == 0:
        raise TypeError("[Tensor.__iter__] iteration over a 0-D tensor")
    for i in range(self.shape[0]):
        yield self[i]


def _backward(self, grad_tensor=None, retain_graph=False):
    """Accumulates the gradient of this tensor into the .grad of the leaves."""
    _backward_many([self], [grad_tensor], retain_graph)


class _HookSlot:
    """Holds a registered hook until its handle removes it."""
    __slots__ = ("fn", "__weakref__")

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, grad):
        return None if self.fn is None else self.fn(grad)


class _HookHandle:
    def __init__(self, slot, owner_slots):
        self._slot, self._owner_slots = slot, owner_slots

    def remove(self):
        """Unregisters the hook; removing twice is harmless."""
        self._slot.fn = None
        if self._owner_slots is not None and self._slot in self._owner_slots:
            self._owner_slots.remove(self._slot)


def _register_hook(self, hook):
    """Calls hook(grad) when the gradient of this tensor is computed; a
    returned tensor replaces it. Returns a handle whose ``remove()`` unregisters it.

    >>> import oar
    >>> x = oar.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> h = x.register_hook(lambda g: g * 10)
    >>> (x * x).sum().backward()
    >>> x.grad.numpy().tolist()
    [20.0, 40.0]
    >>> h.remove(); x.clear_grad()
    >>> (x * x).sum().backward()
    >>> x.grad.numpy().tolist()
    [2.0, 4.0]
    """
    if not callable(hook):
        raise TypeError(f"[Tensor.register_hook] hook must be callable, got {type(hook).__name__}")
    slot = _HookSlot(hook)
    if self.is_leaf:
        # The tensor's __dict__ owns the slot and the C++ side holds only a weak
        # reference, so a hook that refers back to the tensor forms a cycle the
        # garbage collector can see (and free).
        slots = self.__dict__.setdefault("_hook_slots", [])
        slots.append(slot)
        ref = weakref.ref(slot)
        self._register_hook(lambda g: (lambda s: None if s is None else s(g))(ref()))
        return _HookHandle(slot, slots)
    # Non-leaf hooks live on the graph node, which may outlive this Python object.
    self._register_hook(slot)
    return _HookHandle(slot, None)


def _clear_gradient(self, set_to_zero=True):
    self._clear_grad(set_to_zero)


def _T(self):
    return _C.transpose(self, list(range(self.ndim))[::-1])


def _tolist(self):
    return self.numpy().tolist()


def _requires_grad_get(self):
    return not self.stop_gradient


def _requires_grad_set(self, v):
    self.stop_gradient = not v


# A parameter's `trainable` is `not stop_gradient`, as in Paddle: setting
# either changes both. Plain tensors have no `trainable` until one is set
# (code tells parameters from buffers by it).
def _trainable_get(self):
    d = self.__dict__
    if "optimize_attr" not in d and not d.get("_has_trainable"):
        raise AttributeError("'Tensor' object has no attribute 'trainable'")
    return not self.stop_gradient


def _trainable_set(self, v):
    self.__dict__["_has_trainable"] = True
    self.stop_gradient = not bool(v)


def _reshape(self, *shape, name=None):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, Tensor)):
        shape = shape[0]
    return _C.reshape(self, shape if isinstance(shape, (list, Tensor)) else list(shape))


_reshape.__doc__ = _C.reshape.__doc__ + "\nAs a method, the dims may also be given one by one: x.reshape(2, 3).\n"


def _dim_size(self, axis=None):
    return self.size if axis is None else self.shape[axis]


Tensor.__repr__ = _repr
Tensor.__str__ = _repr
Tensor.item = _item
Tensor.__float__ = _scalar_conv(float)
Tensor.__int__ = _scalar_conv(int)
Tensor.__bool__ = _scalar_conv(builtins.bool)
Tensor.__complex__ = _scalar_conv(complex)
Tensor.__index__ = _index
Tensor.__len__ = _len
Tensor.__iter__ = _iter
Tensor.__hash__ = object.__hash__
Tensor.__array__ = lambda self, dtype=None, copy=None: self.numpy() if dtype is None else self.numpy().astype(dtype)
Tensor.backward = _backward
Tensor.register_hook = _register_hook
Tensor.clear_grad = _clear_gradient
Tensor.clear_gradient = _clear_gradient
Tensor.place = property(_place)
Tensor.T = property(_T)
Tensor.tolist = _tolist
Tensor.requires_grad = property(_requires_grad_get, _requires_grad_set)
Tensor.trainable = property(_trainable_get, _trainable_set)
Tensor.reshape = _reshape
Tensor.broadcast_to = lambda self, shape, name=None: _C.expand(self, shape)
Tensor.is_tensor = lambda self: True
Tensor.cpu = _cpu
Tensor.cuda = _cuda
Tensor.to = _to
Tensor.value = lambda self: self


def _to_sparse_coo(self, sparse_dim):
    """This dense tensor as an oar.sparse.SparseCooTensor whose first `sparse_dim` dims are coordinates.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_coo(2)
    >>> x.indices().numpy().tolist(), x.values().numpy().tolist()
    ([[0, 1], [1, 0]], [1.0, 2.0])
    """
    from .sparse._tensor import dense_to_coo
    return dense_to_coo(self, sparse_dim)


def _to_sparse_csr(self):
    """This dense 2-D matrix (or 3-D batch of them) as an oar.sparse.SparseCsrTensor of its nonzeros.

    >>> import oar
    >>> x = oar.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr()
    >>> x.crows().numpy().tolist(), x.cols().numpy().tolist()
    ([0, 1, 2], [1, 0])
    """
    from .sparse._tensor import dense_to_csr
    return dense_to_csr(self)


def _is_sparse(self):
    """False: a Tensor is dense (sparse tensors are oar.sparse.SparseCooTensor and SparseCsrTensor).

    >>> import oar
    >>> x = oar.ones([2, 2])
    >>> x.is_sparse(), x.is_sparse_coo(), x.is_sparse_csr(), x.to_sparse_csr().is_sparse()
    (False, False, False, True)
    """
    return False


Tensor.to_sparse_coo = _to_sparse_coo
Tensor.to_sparse_csr = _to_sparse_csr
Tensor.is_sparse = _is_sparse
Tensor.is_sparse_coo = _is_sparse
Tensor.is_sparse_csr = _is_sparse

# Note [Tensor methods]: the Tensor's Python-level methods are attached here
# and nowhere else (the C++-bound and declared ops are methods already, from
# python/bind). A module of functions names those of its functions that are
# also Tensor methods in `__tensor_methods__`: a name, or a pair (method name,
# the module's attribute name or the attribute itself, e.g. a property).
# Called once oar has loaded
# them all; later modules win, so a Python wrapper replaces a bound method of that name.
_METHOD_MODULES = ("_random", "linalg", "_math_ext", "_shape_ext", "_tensor_ext",
                   "nn.layer.layers", "distributed.auto_parallel", "signal")


def _attach_module_methods():
    import importlib
    for name in _METHOD_MODULES:
        mod = importlib.import_module(f"{__package__}.{name}")
        for entry in mod.__tensor_methods__:
            method, attr = (entry, entry) if isinstance(entry, str) else entry
            setattr(Tensor, method, getattr(mod, attr) if isinstance(attr, str) else attr)
