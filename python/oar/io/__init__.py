"""Data loading with Paddle's names (``paddle.io``): datasets, samplers and the DataLoader.

>>> import numpy as np
>>> import oar.io
>>> loader = oar.io.DataLoader(oar.io.TensorDataset([np.arange(4)]), batch_size=2)
>>> [b[0].numpy().tolist() for b in loader]
[[0, 1], [2, 3]]
"""
from .collate import *  # noqa: F401,F403
from .dataloader import *  # noqa: F401,F403
from .dataset import *  # noqa: F401,F403
from .sampler import *  # noqa: F401,F403
from .worker import *  # noqa: F401,F403
from . import collate, dataloader, dataset, sampler, worker

__all__ = collate.__all__ + dataloader.__all__ + dataset.__all__ + sampler.__all__ + worker.__all__
