"""oar.nn.functional: the functional forms of the layers in oar.nn."""
from .activation import *  # noqa: F401,F403
