"""Gradient clipping: callables that take [(param, grad), ...] and return the clipped list.

Parameters whose ``need_clip`` attribute is False, and entries whose grad is
None, are passed through unchanged (and left out of the global norm).
"""
import math

from .. import _C
from ..autograd import no_grad

__all__ = ["ClipGradByGlobalNorm", "ClipGradByNorm", "ClipGradByValue"]


def _needs_clip(p, g):
    return g is not None and getattr(p, "need_clip", True)


def _check_pairs(params_grads, api):
    pairs = list(params_grads)
    for item in pairs:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"[oar.nn.{api}] expected a list of (param, grad) pairs, got an entry {item!r}")
    return pairs


class ClipGradByValue:
    """Clips every gradient entry into [min, max] (min defaults to -max).

    >>> import oar
    >>> p = oar.ones([2]); g = oar.to_tensor([-3.0, 0.5])
    >>> [g.numpy().tolist() for _, g in oar.nn.ClipGradByValue(1.0)([(p, g)])]
    [[-1.0, 0.5]]
    """

    def __init__(self, max, min=None):  # noqa: A002 - Paddle's names
        min = -max if min is None else min
        if min > max:
            raise ValueError(f"[oar.nn.ClipGradByValue] min ({min}) must be <= max ({max})")
        self.max, self.min = float(max), float(min)

    def __call__(self, params_grads):
        out = []
        with no_grad():
            for p, g in _check_pairs(params_grads, "ClipGradByValue"):
                out.append((p, _C.clip(g, self.min, self.max) if _needs_clip(p, g) else g))
        return out

    def __repr__(self):
        return f"ClipGradByValue(min={self.min}, max={self.max})"


class ClipGradByNorm:
    """Rescales each gradient whose L2 norm exceeds clip_norm down to clip_norm.

    >>> import oar
    >>> p = oar.ones([2]); g = oar.to_tensor([3.0, 4.0])
    >>> [g.numpy().tolist() for _, g in oar.nn.ClipGradByNorm(1.0)([(p, g)])]
    [[0.6000000238418579, 0.800000011920929]]
    """

    def __init__(self, clip_norm):
        if clip_norm <= 0:
            raise ValueError(f"[oar.nn.ClipGradByNorm] clip_norm must be > 0, got {clip_norm}")
        self.clip_norm = float(clip_norm)

    def __call__(self, params_grads):
        out = []
        with no_grad():
            for p, g in _check_pairs(params_grads, "ClipGradByNorm"):
                if not _needs_clip(p, g):
                    out.append((p, g))
                    continue
                norm = _C.sqrt(_C.sum(_C.square(_C.cast(g, _C.dtype.float32)
                                                if g.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else g)))
                scale = self.clip_norm / _C.maximum(norm, _C.full([], self.clip_norm, norm.dtype))
                out.append((p, g * _C.cast(scale, g.dtype)))
        return out

    def __repr__(self):
        return f"ClipGradByNorm(clip_norm={self.clip_norm})"


class ClipGradByGlobalNorm:
    """Scales all gradients by clip_norm / max(global_norm, clip_norm), global_norm being the L2
    norm of all of them together. The optimizer steps with the scaled gradients; param.grad keeps
    the unclipped ones (Paddle scales param.grad in place: see docs/paddle_compat.md).

    >>> import oar
    >>> pairs = [(oar.ones([1]), oar.to_tensor([3.0])), (oar.ones([1]), oar.to_tensor([4.0]))]
    >>> [round(g.item(), 4) for _, g in oar.nn.ClipGradByGlobalNorm(1.0)(pairs)]
    [0.6, 0.8]
    """

    def __init__(self, clip_norm, group_name="default_group", auto_skip_clip=False):
        if clip_norm <= 0:
            raise ValueError(f"[oar.nn.ClipGradByGlobalNorm] clip_norm must be > 0, got {clip_norm}")
        self.clip_norm = float(clip_norm)
        self.group_name = group_name
        self.auto_skip_clip = auto_skip_clip

    def _global_norm(self, pairs):
        from .utils.clip_grad import grads_norm
        return grads_norm([g for p, g in pairs if _needs_clip(p, g)])

    def __call__(self, params_grads):
        pairs = _check_pairs(params_grads, "ClipGradByGlobalNorm")
        with no_grad():
            norm = self._global_norm(pairs)
            if norm is None:
                return pairs
            scale = self.clip_norm / _C.maximum(norm, _C.full([], self.clip_norm, norm.dtype))
            if math.isfinite(self.clip_norm) and self.auto_skip_clip and float(scale) >= 1.0:
                return pairs
            return [(p, g * _C.cast(scale, g.dtype)) if _needs_clip(p, g) else (p, g) for p, g in pairs]

    def __repr__(self):
        return f"ClipGradByGlobalNorm(clip_norm={self.clip_norm})"
