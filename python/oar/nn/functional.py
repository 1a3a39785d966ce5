"""oar.nn.functional: activations and other functional ops."""
__all__ = []
