"""Paddle's ``paddle.distributed.fleet`` names for manual parallelism."""
from . import meta_parallel  # noqa: F401
