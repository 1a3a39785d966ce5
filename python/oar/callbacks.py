"""Training callbacks (``paddle.callbacks``), defined in :mod:`oar.hapi.callbacks`.

>>> import oar.callbacks
>>> oar.callbacks.EarlyStopping(monitor='acc').monitor
'acc'
"""
from .hapi.callbacks import (Callback, CallbackList, EarlyStopping, LRScheduler, ModelCheckpoint, ProgBarLogger,
                             ReduceLROnPlateau, TensorBoard, VisualDL)

__all__ = ["Callback", "CallbackList", "ProgBarLogger", "ModelCheckpoint", "EarlyStopping", "LRScheduler",
           "VisualDL", "TensorBoard", "ReduceLROnPlateau"]
