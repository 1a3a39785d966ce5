"""Pillow is optional: only PIL images and reading image files need it, so
`import oar` works without it and the error comes when an image is handled."""
try:
    from PIL import Image
except ImportError:
    Image = None


def require(api):
    """The PIL.Image module, or an ImportError naming the API that needs it."""
    if Image is None:
        raise ImportError(f"[{api}] needs Pillow for PIL images and image files: pip install Pillow")
    return Image
