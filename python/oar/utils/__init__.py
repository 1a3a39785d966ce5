"""Utilities (paddle.utils): deprecation marks, version and import checks, a
self-check, unique names, downloads into a local cache, DLPack interop."""
from . import dlpack, download, unique_name  # noqa: F401
from ._checks import deprecated, require_version, run_check, try_import

__all__ = ["deprecated", "run_check", "require_version", "try_import"]
