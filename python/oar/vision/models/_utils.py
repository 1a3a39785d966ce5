"""Helpers shared by the vision model builders."""

__all__ = []


def check_pretrained(pretrained, api):
    """Rejects pretrained=True: oar ships no weights and never downloads."""
    if pretrained:
        raise NotImplementedError(
            f"[oar.vision.models.{api}] pretrained weights are not available (oar does not download files); "
            f"build the model with pretrained=False and load a saved state dict with set_state_dict")


def check_num_classes(num_classes, api):
    if isinstance(num_classes, bool) or not isinstance(num_classes, int):
        raise TypeError(f"[oar.vision.models.{api}] num_classes must be an int, got {type(num_classes).__name__}")
    return num_classes
