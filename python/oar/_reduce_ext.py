"""Filled in by its op family."""
__all__ = []
