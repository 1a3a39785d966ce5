"""``paddle.distributed.fleet.utils``: activation recomputation and gradient helpers."""
from . import hybrid_parallel_util  # noqa: F401
from .recompute import recompute

__all__ = ["recompute"]
