"""High-level API (``paddle.hapi``): ``Model`` with fit/evaluate/predict,
callbacks, and ``summary``.

>>> import oar
>>> from oar.hapi import Model
>>> Model(oar.nn.Linear(2, 2)).network.weight.shape
[2, 2]
"""
from . import callbacks, event_writer
from .event_writer import SummaryWriter
from .model import Model
from .summary import summary
from .flops import flops

from ..static import InputSpec

__all__ = ["Model", "summary", "flops", "InputSpec", "SummaryWriter", "callbacks"]
