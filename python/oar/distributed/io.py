"""Saving and loading the persistable variables of a static program
(Paddle's ``paddle.distributed.io``): its parameters and the state of the
optimizers it minimizes. Each rank saves and loads its own program, to the
folder it is given.

With ``filename=None`` every variable goes to its own safetensors file in
``dirname``, named after the variable (Paddle's layout); with ``filename``
all of them go to that one file in ``dirname``. Files are written by
``oar.save`` (atomic, no pickle).
"""
import os

from .. import serialization as _ser
from ..static import io as _static_io
from ..static import program as _program

__all__ = ["is_persistable", "save_persistables", "load_persistables"]


def is_persistable(var):
    """True for variables that outlive one run of a program (parameters and
    optimizer state); False for data and intermediate values.

    >>> import oar
    >>> from oar.distributed.io import is_persistable
    >>> is_persistable(oar.nn.Linear(2, 2).weight), is_persistable(oar.ones([2]))
    (True, False)
    """
    return bool(getattr(var, "persistable", False))


def _program_of(main_program, api):
    prog = main_program if main_program is not None else _program.default_main_program()
    if not isinstance(prog, _program.Program):
        raise TypeError(f"[{api}] main_program must be an oar.static.Program, got {type(main_program).__name__}")
    return prog


def _persistables(prog):
    out = {n: t.detach() for n, t in _program._program_parameters(prog)}
    for opt in _static_io._optimizers(prog):
        out.update(opt.state_dict())
    return out


def _check_dir(dirname, filename, api):
    if not isinstance(dirname, (str, os.PathLike)) or not str(dirname):
        raise TypeError(f"[{api}] dirname must be a folder path, got {dirname!r}")
    if filename is not None and (not isinstance(filename, str) or not filename or os.sep in filename):
        raise ValueError(f"[{api}] filename must be a file name (no folder) or None, got {filename!r}")


def save_persistables(executor, dirname, main_program=None, filename=None):
    """Saves the persistable variables of ``main_program`` (the default main
    program when None) under ``dirname``: one file per variable, or all in
    ``filename``. ``executor`` is accepted for Paddle's signature; the
    variables are read directly.

    >>> import os, tempfile
    >>> import oar
    >>> from oar.distributed import io
    >>> oar.enable_static()
    >>> main = oar.static.Program()
    >>> with oar.static.program_guard(main):
    ...     x = oar.static.data("x", [None, 2], "float32")
    ...     y = oar.static.nn.fc(x, 1, name="lin")
    >>> d = tempfile.mkdtemp()
    >>> io.save_persistables(oar.static.Executor(), d, main)
    >>> sorted(os.listdir(d))
    ['lin.b_0', 'lin.w_0']
    >>> oar.disable_static()
    """
    api = "oar.distributed.io.save_persistables"
    _check_dir(dirname, filename, api)
    state = _persistables(_program_of(main_program, api))
    os.makedirs(dirname, exist_ok=True)
    if filename is not None:
        _ser.save(state, os.path.join(dirname, filename))
        return
    for name, t in state.items():
        if os.sep in name or name in (".", ".."):
            raise ValueError(f"[{api}] variable name {name!r} cannot be a file name; pass filename to save "
                             "all variables in one file")
        _ser.save({name: t}, os.path.join(dirname, name))


def load_persistables(executor, dirname, main_program=None, filename=None):
    """Loads what ``save_persistables`` wrote under ``dirname`` into the
    persistable variables of ``main_program``; every variable must be found.

    >>> import tempfile
    >>> import oar
    >>> from oar.distributed import io
    >>> oar.enable_static()
    >>> main = oar.static.Program()
    >>> with oar.static.program_guard(main):
    ...     x = oar.static.data("x", [None, 2], "float32")
    ...     y = oar.static.nn.fc(x, 1, name="m", bias_attr=oar.nn.initializer.Constant(3.0))
    >>> d = tempfile.mkdtemp()
    >>> io.save_persistables(None, d, main)
    >>> main.set_state_dict({"m.b_0": [0.0]})
    >>> io.load_persistables(None, d, main)
    >>> main.state_dict()["m.b_0"].tolist()
    [3.0]
    >>> oar.disable_static()
    """
    api = "oar.distributed.io.load_persistables"
    _check_dir(dirname, filename, api)
    prog = _program_of(main_program, api)
    want = _persistables(prog)
    if filename is not None:
        path = os.path.join(dirname, filename)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"[{api}] no such file: {path!r}")
        saved = _ser.load(path)
    else:
        saved = {}
        for name in want:
            path = os.path.join(dirname, name)
            if not os.path.isfile(path):
                raise FileNotFoundError(f"[{api}] variable {name!r} was not saved: no file {path!r}")
            saved.update(_ser.load(path))
    missing = sorted(set(want) - set(saved))
    if missing:
        raise ValueError(f"[{api}] {os.path.join(dirname, filename or '')!r} lacks variables {missing}")
    params = dict(_program._program_parameters(prog))
    _program._assign_parameters(params, {k: v for k, v in saved.items() if k in params}, api)
    opt_state = {k: v for k, v in saved.items() if k not in params}
    if opt_state:
        for opt in _static_io._optimizers(prog):
            opt.set_state_dict(opt_state)
