"""Files fetched once into a local cache (paddle.utils.download).

A file already in the cache (with the right MD5 when one is given) is used
without touching the network, so a machine without one works from a cache
filled beforehand: copy the file to ``<root_dir>/<file name in the URL>``.
Downloads go to a temporary file in the cache folder and are renamed into
place once complete and checked; archives (.tar, .tar.gz, .tgz, .zip) are
unpacked beside them, refusing members that would land outside the folder.
``file://`` URLs are read like any other.
"""
import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile

__all__ = ["get_weights_path_from_url"]

WEIGHTS_HOME = os.path.join(os.path.expanduser("~"), ".cache", "oar", "hapi", "weights")
DATA_HOME = os.path.join(os.path.expanduser("~"), ".cache", "oar", "dataset")

_ARCHIVES = (".tar", ".tar.gz", ".tgz", ".zip")


def _md5(path, chunk=1 << 20):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def _md5_ok(path, md5sum):
    return md5sum is None or _md5(path) == md5sum


def _file_name(url, api):
    if not isinstance(url, str) or not url:
        raise TypeError(f"[{api}] url must be a non-empty str, got {url!r}")
    name = os.path.basename(urllib.parse.unquote(urllib.parse.urlparse(url).path))
    if not name or name in (".", ".."):
        raise ValueError(f"[{api}] the url {url!r} names no file")
    return name


def _download(url, path, md5sum, api):
    """Fetches url into path atomically; raises ConnectionError when it cannot be fetched."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".download-")
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=60) as resp:
                    shutil.copyfileobj(resp, out)
            except (urllib.error.URLError, OSError) as e:
                reason = getattr(e, "reason", e)
                raise ConnectionError(
                    f"[{api}] could not download {url} ({reason}). Without network access, place the file at "
                    f"{path} yourself") from None
            out.flush()
            os.fsync(out.fileno())
        if not _md5_ok(tmp, md5sum):
            raise ValueError(f"[{api}] {url} was downloaded but its MD5 is {_md5(tmp)}, expected {md5sum}")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _is_archive(path):
    return path.endswith(_ARCHIVES)


def _decompress(path, api):
    """Unpacks an archive next to it; returns its single top-level folder, or the folder unpacked into."""
    root = os.path.dirname(path)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            for n in names:
                target = os.path.realpath(os.path.join(root, n))
                if not target.startswith(os.path.realpath(root) + os.sep):
                    raise ValueError(f"[{api}] {path}: member {n!r} would be written outside {root}")
            z.extractall(root)
    elif tarfile.is_tarfile(path):
        with tarfile.open(path) as t:
            names = t.getnames()
            t.extractall(root, filter="data")
    else:
        raise ValueError(f"[{api}] {path} is not a tar or zip archive")
    tops = {n.split("/")[0] for n in names if n.strip("/")}
    if len(tops) == 1 and os.path.isdir(os.path.join(root, next(iter(tops)))):
        return os.path.join(root, next(iter(tops)))
    return root


def get_path_from_url(url, root_dir, md5sum=None, check_exist=True, decompress=True, method="get"):
    """The local path of `url`'s file under `root_dir`, downloading it only when it is not
    there yet (or `check_exist` is False, or its MD5 differs from `md5sum`). Archives are
    unpacked when `decompress`; the path of what they hold is returned. `method` is
    accepted for Paddle compatibility: oar always downloads with urllib.

    >>> import os, tempfile, pathlib
    >>> from oar.utils.download import get_path_from_url
    >>> src = os.path.join(tempfile.mkdtemp(), "w.txt")
    >>> _ = open(src, "w").write("hi")
    >>> cache = tempfile.mkdtemp()
    >>> p = get_path_from_url(pathlib.Path(src).as_uri(), cache)
    >>> p == os.path.join(cache, "w.txt"), open(p).read()
    (True, 'hi')
    """
    api = "oar.utils.download.get_path_from_url"
    name = _file_name(url, api)
    if not isinstance(root_dir, (str, os.PathLike)):
        raise TypeError(f"[{api}] root_dir must be a str or os.PathLike, got {type(root_dir).__name__}")
    if method not in ("get", "wget"):
        raise ValueError(f"[{api}] method must be 'get' or 'wget', got {method!r}")
    if md5sum is not None and not isinstance(md5sum, str):
        raise TypeError(f"[{api}] md5sum must be a str or None, got {type(md5sum).__name__}")
    path = os.path.join(os.fspath(root_dir), name)
    if not (check_exist and os.path.isfile(path) and _md5_ok(path, md5sum)):
        _download(url, path, md5sum, api)
    if decompress and _is_archive(path):
        return _decompress(path, api)
    return path


def get_weights_path_from_url(url, md5sum=None):
    """The local path of a weights file, cached under ``~/.cache/oar/hapi/weights``
    (see get_path_from_url).

    >>> from oar.utils.download import get_weights_path_from_url
    >>> try:
    ...     get_weights_path_from_url("")
    ... except TypeError as e:
    ...     print(str(e)[:50])
    [oar.utils.download.get_path_from_url] url must be
    """
    return get_path_from_url(url, WEIGHTS_HOME, md5sum)


def _check_exists_and_download(path, url, md5, module_name, download=True, api="oar.text"):
    """A data set's file: `path` when given, else the cached copy of `url` under
    ``~/.cache/oar/dataset/<module_name>`` (downloaded when `download` is True)."""
    if path:
        if not os.path.exists(path):
            raise FileNotFoundError(f"[{api}] {path} does not exist")
        return path
    cached = os.path.join(DATA_HOME, module_name, _file_name(url, api))
    if os.path.isfile(cached) and _md5_ok(cached, md5):
        return cached
    if not download:
        raise FileNotFoundError(f"[{api}] no data file given and {cached} is not in the cache; pass data_file or "
                                "download=True")
    return get_path_from_url(url, os.path.join(DATA_HOME, module_name), md5, decompress=False)
