"""Data generators writing Paddle's MultiSlot text format."""
from .data_generator import DataGenerator, MultiSlotDataGenerator, MultiSlotStringDataGenerator  # noqa: F401

__all__ = ["DataGenerator", "MultiSlotDataGenerator", "MultiSlotStringDataGenerator"]
