"""Composable function transforms: ``vmap``, ``grad``, ``grad_and_value``,
``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` and ``functional_call``.

>>> import oar
>>> x = oar.to_tensor([[1.0, 2.0], [3.0, 4.0]])
>>> per_row = oar.vmap(oar.func.grad(lambda r: (r ** 2).sum()))(x)
>>> per_row.numpy().tolist()
[[2.0, 4.0], [6.0, 8.0]]
"""
from ._transforms import functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from ._vmap import vmap, vmap_stats

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call",
           "vmap_stats"]
