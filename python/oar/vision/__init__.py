"""Computer vision (``paddle.vision``): image transforms, datasets, models and detection ops.

>>> import oar.vision
>>> oar.vision.get_image_backend()
'pil'
"""
from . import datasets, models, ops, transforms
from .image import get_image_backend, image_load, set_image_backend

__all__ = ["datasets", "models", "ops", "transforms", "get_image_backend", "set_image_backend", "image_load"]
