"""deprecated, require_version, try_import and run_check."""
import functools
import importlib
import inspect
import re
import warnings


class VisibleDeprecationWarning(UserWarning):
    """The warning `deprecated` emits: a UserWarning, so Python shows it by default."""


def deprecated(update_to="", since="", reason="", level=0):
    """Marks a function or class as deprecated (Paddle's arguments).

    The docstring gains a notice (a class keeps being a class; its constructor checks). `level` 0: only the notice; 1: a
    VisibleDeprecationWarning on the first call as well; 2: every call raises
    RuntimeError.

    >>> import warnings
    >>> from oar.utils import deprecated
    >>> @deprecated(since="0.1", update_to="oar.new_fn", reason="renamed", level=1)
    ... def old_fn():
    ...     return 1
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     old_fn(), old_fn()
    ...     print(len(w), "oar.new_fn" in str(w[0].message))
    (1, 1)
    1 True
    """
    api = "oar.utils.deprecated"
    for what, v in (("update_to", update_to), ("since", since), ("reason", reason)):
        if not isinstance(v, str):
            raise TypeError(f"[{api}] {what} must be a str, got {type(v).__name__}")
    if isinstance(level, bool) or level not in (0, 1, 2):
        raise ValueError(f"[{api}] level must be 0, 1 or 2, got {level!r}")

    def decorator(func):
        name = f"{func.__module__}.{func.__qualname__}"
        msg = f'API "{name}" is deprecated' + (f" since {since}" if since else "") + \
            ", and will be removed in future versions."
        if update_to:
            msg += f' Please use "{update_to}" instead.'
        if reason:
            msg += f" Reason: {reason}"
        warned = []

        def check():
            if level == 2:
                raise RuntimeError(f'API "{name}" has been deprecated.' +
                                   (f' Please use "{update_to}" instead.' if update_to else ""))
            if level == 1 and not warned:
                warned.append(True)
                warnings.warn(msg, VisibleDeprecationWarning, stacklevel=3)

        doc = f"\n\nWarning:\n    {msg}\n\n" + (inspect.getdoc(func) or "")
        if inspect.isclass(func):  # a class stays a class: its constructor checks
            init = func.__init__

            @functools.wraps(init)
            def checked_init(self, *args, **kwargs):
                check()
                init(self, *args, **kwargs)

            func.__init__ = checked_init
            func.__doc__ = doc
            return func

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            check()
            return func(*args, **kwargs)

        wrapper.__doc__ = doc
        return wrapper

    return decorator


def _version_tuple(v, api, what):
    if not isinstance(v, str):
        raise TypeError(f"[{api}] {what} must be a str, got {type(v).__name__}")
    if not re.fullmatch(r"\d+(\.\d+){0,3}", v):
        raise ValueError(f"[{api}] {what} must look like '1.2.3' (up to 4 numbers), got {v!r}")
    parts = [int(p) for p in v.split(".")]
    return tuple(parts + [0] * (4 - len(parts)))


def require_version(min_version, max_version=None):
    """Raises if the installed oar's version is below `min_version` or above `max_version`.

    >>> import oar
    >>> oar.utils.require_version("0.0.1")
    >>> try:
    ...     oar.utils.require_version("99.0")
    ... except Exception as e:
    ...     print(type(e).__name__)
    VersionError
    """
    from .. import __version__

    api = "oar.utils.require_version"
    lo = _version_tuple(min_version, api, "min_version")
    hi = None if max_version is None else _version_tuple(max_version, api, "max_version")
    if hi is not None and hi < lo:
        raise ValueError(f"[{api}] max_version {max_version} is below min_version {min_version}")
    have = _version_tuple(__version__, api, "oar.__version__")
    if have < lo or (hi is not None and have > hi):
        wanted = f"between {min_version} and {max_version}" if hi is not None else f"{min_version} or higher"
        raise VersionError(f"[{api}] oar version {wanted} is required, but {__version__} is installed")


class VersionError(Exception):
    """The installed version does not satisfy require_version."""


def try_import(module_name, err_msg=None):
    """Imports a module, or raises ImportError saying how to install it.

    >>> from oar.utils import try_import
    >>> try_import("json").__name__
    'json'
    >>> try:
    ...     try_import("no_such_module_xyz")
    ... except ImportError as e:
    ...     print(str(e)[:44])
    [oar.utils.try_import] could not import no_s
    """
    if not isinstance(module_name, str):
        raise TypeError(f"[oar.utils.try_import] module_name must be a str, got {type(module_name).__name__}")
    install = {"cv2": "opencv-python", "PIL": "pillow", "yaml": "pyyaml", "sklearn": "scikit-learn"}
    try:
        return importlib.import_module(module_name)
    except ImportError:
        pkg = install.get(module_name.split(".")[0], module_name.split(".")[0])
        raise ImportError(err_msg if err_msg is not None else
                          f"[oar.utils.try_import] could not import {module_name}: this feature needs it; "
                          f"install it with `pip install {pkg}`") from None


def run_check():
    """Checks the installation: trains a small linear model for a few steps on
    the CPU (forward, backward, optimizer) and prints a success line.

    >>> import oar
    >>> oar.utils.run_check()
    Running verify oar program ...
    oar works well on 1 CPU.
    oar is installed successfully! Let's start deep learning with oar now.
    """
    import numpy as np

    import oar

    print("Running verify oar program ...")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype("float32")
    w_true = np.array([[1.0], [-2.0], [0.5], [3.0]], dtype="float32")
    y = x @ w_true
    model = oar.nn.Linear(4, 1)
    opt = oar.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    xt, yt = oar.to_tensor(x), oar.to_tensor(y)
    losses = []
    for _ in range(20):
        loss = oar.nn.functional.mse_loss(model(xt), yt)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    if not (np.isfinite(losses).all() and losses[-1] < 0.5 * losses[0]):
        raise RuntimeError(f"[oar.utils.run_check] training did not converge: loss went from {losses[0]:.4g} "
                           f"to {losses[-1]:.4g}; the installation is broken")
    print("oar works well on 1 CPU.")
    print("oar is installed successfully! Let's start deep learning with oar now.")
