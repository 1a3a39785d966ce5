"""Where in the user's source a converted construct came from.

The rewritten code is compiled with the original file name and every
generated node carries the line of the statement it replaces (Note [line
numbers of converted code] in transformer.py), so a frame of converted code
already reports the user's file and line. These helpers find that frame from
inside the runtime helpers and format it for error messages.
"""
import linecache
import os
import sys

# python/oar: frames under it are the framework's own, not the user's code.
_OAR_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def user_frame(depth=1):
    """The innermost frame outside python/oar, starting ``depth`` frames above the caller."""
    f = sys._getframe(depth + 1)
    while f is not None:
        if not os.path.abspath(f.f_code.co_filename).startswith(_OAR_DIR):
            return f
        f = f.f_back
    return None


class Location:
    """A file, line and function of the user's code (as the converted frame reports it)."""

    __slots__ = ("filename", "lineno", "function")

    def __init__(self, filename, lineno, function):
        self.filename, self.lineno, self.function = filename, lineno, function

    def __str__(self):
        text = f'File "{self.filename}", line {self.lineno}, in {self.function}'
        src = linecache.getline(self.filename, self.lineno).strip()
        return text + (f"\n    {src}" if src else "")


def here(depth=1):
    """The Location of the user's statement being run (``depth`` frames above the caller)."""
    f = user_frame(depth + 1)
    if f is None:
        return Location("<unknown>", 0, "<unknown>")
    return Location(f.f_code.co_filename, f.f_lineno, f.f_code.co_name)


def error(where, what, advice):
    """A Dy2StaticError whose message names the user's file and line."""
    from .._guard import Dy2StaticError

    return Dy2StaticError(f"[oar.jit.to_static] {what}\n  {where}\n{advice}")


def dy2static_error():
    """The Dy2StaticError class (imported late: oar.jit imports this package)."""
    from .._guard import Dy2StaticError

    return Dy2StaticError
