"""Computer vision (``paddle.vision``): image transforms and datasets.

>>> import oar.vision
>>> oar.vision.get_image_backend()
'pil'
"""
from . import datasets, models, transforms
from .image import get_image_backend, image_load, set_image_backend

__all__ = ["datasets", "models", "transforms", "get_image_backend", "set_image_backend", "image_load"]
