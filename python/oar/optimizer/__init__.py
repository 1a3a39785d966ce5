"""Optimizers (Paddle's ``paddle.optimizer``): each parameter update runs as
one fused in-place op (``oar._C._optimizer``).

>>> import oar
>>> import oar.optimizer
>>> w = oar.to_tensor([1.0, 2.0], stop_gradient=False)
>>> opt = oar.optimizer.Adam(learning_rate=0.1, parameters=[w])
>>> (w * w).sum().backward()
>>> opt.step(); opt.clear_grad()
>>> [round(v, 4) for v in w.numpy().tolist()]
[0.9, 1.9]
"""
from . import lr  # noqa: F401
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .lamb import Lamb
from .lbfgs import LBFGS
from .momentum import Momentum
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSProp
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSProp", "Lamb",
           "NAdam", "RAdam", "LBFGS", "lr"]
