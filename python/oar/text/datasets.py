"""Text data sets (paddle.text.datasets), read from the files Paddle publishes.

Each takes `data_file` (the published archive or file); without one it uses
the copy cached under ``~/.cache/oar/dataset/<name>/``, fetching it first
when `download` is True (oar.utils.download: a cached file is never fetched
again). Samples are tuples of NumPy arrays, as in Paddle. Words are str.
"""
import collections
import gzip
import re
import string
import tarfile
import zipfile

import numpy as np

from ..io.dataset import Dataset
from ..utils.download import _check_exists_and_download

__all__ = ["Conll05st", "Imdb", "Imikolov", "Movielens", "UCIHousing", "WMT14", "WMT16"]

# Where Paddle publishes each file, and its MD5.
_UCI_HOUSING = ("http://paddlemodels.bj.bcebos.com/uci_housing/housing.data", "d4accdce7a25600298819f8e28e8d593")
_IMDB = ("https://dataset.bj.bcebos.com/imdb%2FaclImdb_v1.tar.gz", "7c2ac02c03563afcf9b574c7e56c153a")
_IMIKOLOV = ("https://dataset.bj.bcebos.com/imikolov%2Fsimple-examples.tgz", "30177ea32e27c525793142b6bf2c8e2d")
_MOVIELENS = ("https://dataset.bj.bcebos.com/movielens%2Fml-1m.zip", "c4d9eecfca2ab87c1945afe126590906")
_WMT14 = ("http://paddlemodels.bj.bcebos.com/wmt/wmt14.tgz", "0791583d57d5beb693b9414c5b36798c")
_WMT16 = ("http://paddlemodels.bj.bcebos.com/wmt/wmt16.tar.gz", "0c38be43600334966403524a40dcd81e")
_CONLL05 = {
    "data_file": ("http://paddlemodels.bj.bcebos.com/conll05st/conll05st-tests.tar.gz",
                  "387719152ae52d60422c016e92a742fc"),
    "word_dict_file": ("http://paddlemodels.bj.bcebos.com/conll05st%2FwordDict.txt",
                       "ea7fb7d4c75cc6254716f0177a506baa"),
    "verb_dict_file": ("http://paddlemodels.bj.bcebos.com/conll05st%2FverbDict.txt",
                       "0d2977293bbb6cbefab5b0f97db1e77c"),
    "target_dict_file": ("http://paddlemodels.bj.bcebos.com/conll05st%2FtargetDict.txt",
                         "d8c7f03ceb5fc2e5a0fa7503a4353751"),
    "emb_file": ("http://paddlemodels.bj.bcebos.com/conll05st%2Femb", "bf436eb0faa1f6f9103017f8be57cdb7"),
}


def _api(obj):
    return f"oar.text.{type(obj).__name__}"


def _mode(mode, allowed, api):
    m = str(mode).lower()
    if m not in allowed:
        raise ValueError(f"[{api}] mode must be one of {list(allowed)}, got {mode!r}")
    return m


def _resolve(path, source, name, download, api):
    return _check_exists_and_download(path, source[0], source[1], name, download, api)


def _ranked(freq, min_count):
    """Words seen more than min_count times, most frequent first (ties by word); '<unk>' last."""
    kept = sorted(((w, c) for w, c in freq.items() if c > min_count), key=lambda x: (-x[1], x[0]))
    idx = {w: i for i, (w, _) in enumerate(kept)}
    idx["<unk>"] = len(kept)
    return idx


def _tar_member(tar, suffix, api):
    names = [m.name for m in tar.getmembers() if m.name.endswith(suffix)]
    if not names:
        raise ValueError(f"[{api}] {tar.name}: no member ending in {suffix!r}")
    return names


class UCIHousing(Dataset):
    """Boston house prices: 13 features and the price per sample, from the
    whitespace-separated ``housing.data`` (14 numbers per row). Features are
    scaled to (x - mean) / (max - min) over all rows; 'train' is the first 80%
    of rows, 'test' the rest. A sample is (features float32 [13], price float32 [1]).

    >>> import os, tempfile
    >>> from oar.text import UCIHousing
    >>> path = os.path.join(tempfile.mkdtemp(), "housing.data")
    >>> with open(path, "w") as f:
    ...     _ = f.write("\\n".join(" ".join(str(r * 14 + c) for c in range(14)) for r in range(5)))
    >>> ds = UCIHousing(path, mode="train")
    >>> len(ds), ds[0][0].shape, ds[0][1].tolist()
    (4, (13,), [13.0])
    """

    def __init__(self, data_file=None, mode="train", download=True):
        api = _api(self)
        self.mode = _mode(mode, ("train", "test"), api)
        self.data_file = _resolve(data_file, _UCI_HOUSING, "uci_housing", download, api)
        data = np.fromfile(self.data_file, sep=" ")
        if data.size == 0 or data.size % 14:
            raise ValueError(f"[{api}] {self.data_file}: expected rows of 14 numbers, got {data.size} numbers")
        data = data.reshape(-1, 14)
        span = data.max(axis=0) - data.min(axis=0)
        span[span == 0] = 1.0  # a constant column stays at 0 rather than becoming NaN
        data[:, :13] = (data[:, :13] - data[:, :13].mean(axis=0)) / span[:13]
        offset = int(data.shape[0] * 0.8)
        self.data = data[:offset] if self.mode == "train" else data[offset:]
        self.dtype = "float32"

    def __getitem__(self, idx):
        row = self.data[idx]
        return row[:-1].astype(self.dtype), row[-1:].astype(self.dtype)

    def __len__(self):
        return len(self.data)


_PUNCT = str.maketrans("", "", string.punctuation)


class Imdb(Dataset):
    """IMDB movie reviews for sentiment classification, from ``aclImdb_v1.tar.gz``
    (``aclImdb/{train,test}/{pos,neg}/*.txt``). Words are the lower-cased,
    punctuation-free, whitespace-split text; the vocabulary (``word_idx``) holds
    the words seen more than `cutoff` times over train and test, most frequent
    first, then '<unk>'. A sample is (word ids int64 [n], label int64 [1]) with
    label 0 for positive reviews (listed first) and 1 for negative ones.

    >>> import io, os, tarfile, tempfile
    >>> from oar.text import Imdb
    >>> path = os.path.join(tempfile.mkdtemp(), "imdb.tar.gz")
    >>> with tarfile.open(path, "w:gz") as t:
    ...     for name, text in [("train/pos/0.txt", b"Good film!"), ("train/neg/0.txt", b"Bad film.")]:
    ...         info = tarfile.TarInfo("aclImdb/" + name); info.size = len(text)
    ...         t.addfile(info, io.BytesIO(text))
    >>> ds = Imdb(path, mode="train", cutoff=0)
    >>> ds.word_idx
    {'film': 0, 'bad': 1, 'good': 2, '<unk>': 3}
    >>> [(ids.tolist(), label.tolist()) for ids, label in ds]
    [([2, 0], [0]), ([1, 0], [1])]
    """

    def __init__(self, data_file=None, mode="train", cutoff=150, download=True):
        api = _api(self)
        self.mode = _mode(mode, ("train", "test"), api)
        self.data_file = _resolve(data_file, _IMDB, "imdb", download, api)
        docs = self._tokenize(re.compile(r"aclImdb/(train|test)/(pos|neg)/.*\.txt$"))
        freq = collections.Counter(w for _, doc in docs for w in doc)
        self.word_idx = _ranked(freq, cutoff)
        unk = self.word_idx["<unk>"]
        self.docs, self.labels = [], []
        for label, kind in ((0, "pos"), (1, "neg")):
            prefix = f"aclImdb/{self.mode}/{kind}/"
            for name, doc in docs:
                if name.startswith(prefix):
                    self.docs.append([self.word_idx.get(w, unk) for w in doc])
                    self.labels.append(label)

    def _tokenize(self, pattern):
        out = []
        with tarfile.open(self.data_file) as tar:
            for m in tar:
                if m.isfile() and pattern.match(m.name):
                    text = tar.extractfile(m).read().decode("utf-8", errors="replace").rstrip("\n\r")
                    out.append((m.name, text.translate(_PUNCT).lower().split()))
        return out

    def __getitem__(self, idx):
        return np.array(self.docs[idx], dtype=np.int64), np.array([self.labels[idx]], dtype=np.int64)

    def __len__(self):
        return len(self.docs)


class Imikolov(Dataset):
    """The Penn Treebank language-model text (Mikolov's ``simple-examples.tgz``,
    ``./simple-examples/data/ptb.{train,valid,test}.txt``). The vocabulary holds
    the words of train and valid seen more than `min_word_freq` times (with '<s>'
    and '<e>' counted once per line), most frequent first, then '<unk>'.
    'NGRAM' samples are the `window_size`-grams of '<s>' line '<e>' (a tuple of
    `window_size` int64 arrays of shape []); 'SEQ' samples are (['<s>'] + line,
    line + ['<e>']) id arrays, lines longer than `window_size` (when positive) left out.

    >>> import io, os, tarfile, tempfile
    >>> from oar.text import Imikolov
    >>> path = os.path.join(tempfile.mkdtemp(), "simple-examples.tgz")
    >>> with tarfile.open(path, "w:gz") as t:
    ...     for split in ("train", "valid", "test"):
    ...         text = b"a b a\\n"
    ...         info = tarfile.TarInfo(f"./simple-examples/data/ptb.{split}.txt"); info.size = len(text)
    ...         t.addfile(info, io.BytesIO(text))
    >>> ds = Imikolov(path, data_type="NGRAM", window_size=3, min_word_freq=0)
    >>> ds.word_idx
    {'a': 0, '<e>': 1, '<s>': 2, 'b': 3, '<unk>': 4}
    >>> [int(v) for v in ds[0]], len(ds)
    ([2, 0, 3], 3)
    """

    def __init__(self, data_file=None, data_type="NGRAM", window_size=-1, mode="train", min_word_freq=50,
                 download=True):
        api = _api(self)
        self.data_type = str(data_type).upper()
        if self.data_type not in ("NGRAM", "SEQ"):
            raise ValueError(f"[{api}] data_type must be 'NGRAM' or 'SEQ', got {data_type!r}")
        self.mode = _mode(mode, ("train", "test"), api)
        if self.data_type == "NGRAM" and window_size < 1:
            raise ValueError(f"[{api}] window_size must be a positive int for NGRAM data, got {window_size}")
        self.window_size, self.min_word_freq = window_size, min_word_freq
        self.data_file = _resolve(data_file, _IMIKOLOV, "imikolov", download, api)
        with tarfile.open(self.data_file) as tar:
            def lines(split):
                name = f"./simple-examples/data/ptb.{split}.txt"
                try:
                    f = tar.extractfile(name)
                except KeyError:
                    raise ValueError(f"[{api}] {self.data_file}: no member {name!r}") from None
                return [ln.decode("utf-8", errors="replace").split() for ln in f]

            freq = collections.Counter()
            for split in ("train", "valid"):
                for words in lines(split):
                    freq.update(words)
                    freq.update(("<s>", "<e>"))
            freq.pop("<unk>", None)
            self.word_idx = _ranked(freq, min_word_freq)
            unk = self.word_idx["<unk>"]
            self.data = []
            for words in lines(self.mode):
                if self.data_type == "NGRAM":
                    ids = [self.word_idx.get(w, unk) for w in ["<s>", *words, "<e>"]]
                    for i in range(window_size, len(ids) + 1):
                        self.data.append(tuple(ids[i - window_size:i]))
                else:
                    ids = [self.word_idx.get(w, unk) for w in words]
                    src, trg = [self.word_idx["<s>"], *ids], [*ids, self.word_idx["<e>"]]
                    if window_size > 0 and len(src) > window_size:
                        continue
                    self.data.append((src, trg))

    def __getitem__(self, idx):
        return tuple(np.array(d, dtype=np.int64) for d in self.data[idx])

    def __len__(self):
        return len(self.data)


_AGES = [1, 18, 25, 35, 45, 50, 56]


class Movielens(Dataset):
    """MovieLens 1M ratings (``ml-1m.zip``: ``ml-1m/{movies,users,ratings}.dat``,
    '::'-separated, latin-1). Each rating line goes to 'test' with probability
    `test_ratio`, decided by a NumPy RandomState(rand_seed) as in Paddle. A
    sample is (user id, gender (0 male, 1 female), age bucket, job, movie id)
    as int64 [1] arrays, then the movie's category ids and title word ids, then
    the rating scaled to 2 * r - 5 (float [1]). Category and title-word ids
    follow sorted order (Paddle numbers them in set order, which varies).

    >>> import os, tempfile, zipfile
    >>> from oar.text import Movielens
    >>> path = os.path.join(tempfile.mkdtemp(), "ml-1m.zip")
    >>> with zipfile.ZipFile(path, "w") as z:
    ...     z.writestr("ml-1m/movies.dat", "1::Toy Story (1995)::Animation|Comedy\\n")
    ...     z.writestr("ml-1m/users.dat", "1::F::25::10::48067\\n")
    ...     z.writestr("ml-1m/ratings.dat", "1::1::5::978300760\\n")
    >>> ds = Movielens(path, mode="train", test_ratio=0.0)
    >>> [a.tolist() for a in ds[0]]
    [[1], [1], [2], [10], [1], [0, 1], [1, 0], [5.0]]
    """

    def __init__(self, data_file=None, mode="train", test_ratio=0.1, rand_seed=0, download=True):
        api = _api(self)
        self.mode = _mode(mode, ("train", "test"), api)
        if not 0.0 <= float(test_ratio) <= 1.0:
            raise ValueError(f"[{api}] test_ratio must be in [0, 1], got {test_ratio}")
        self.test_ratio, self.rand_seed = float(test_ratio), rand_seed
        self.data_file = _resolve(data_file, _MOVIELENS, "sentiment", download, api)
        title_re = re.compile(r"^(.*)\((\d+)\)$")
        with zipfile.ZipFile(self.data_file) as z:
            def rows(name):
                try:
                    raw = z.read(f"ml-1m/{name}")
                except KeyError:
                    raise ValueError(f"[{api}] {self.data_file}: no member 'ml-1m/{name}'") from None
                return [ln.strip().split("::") for ln in raw.decode("latin-1").splitlines() if ln.strip()]

            movies = {}
            for movie_id, title, cats in rows("movies.dat"):
                m = title_re.match(title)
                movies[int(movie_id)] = (m.group(1) if m else title, cats.split("|"))
            self.movie_title_dict = {w: i for i, w in enumerate(sorted(
                {w.lower() for t, _ in movies.values() for w in t.split()}))}
            self.categories_dict = {c: i for i, c in enumerate(sorted({c for _, cs in movies.values() for c in cs}))}
            users = {}
            for uid, gender, age, job, *_ in rows("users.dat"):
                if int(age) not in _AGES:
                    raise ValueError(f"[{api}] {self.data_file}: user {uid} has age {age}, expected one of {_AGES}")
                users[int(uid)] = [[int(uid)], [0 if gender == "M" else 1], [_AGES.index(int(age))], [int(job)]]
            rng = np.random.RandomState(rand_seed)
            is_test = self.mode == "test"
            self.data = []
            for uid, mid, rating, *_ in rows("ratings.dat"):
                if (rng.random_sample() < self.test_ratio) != is_test:
                    continue
                title, cats = movies[int(mid)]
                self.data.append(users[int(uid)] + [
                    [int(mid)], [self.categories_dict[c] for c in cats],
                    [self.movie_title_dict[w.lower()] for w in title.split()], [float(rating) * 2 - 5.0]])

    def __getitem__(self, idx):
        return tuple(np.array(d) for d in self.data[idx])

    def __len__(self):
        return len(self.data)


def _read_dict(f, size=None):
    """word -> line number for the first `size` lines (all when None) of a word-per-line file."""
    out = {}
    for i, line in enumerate(f):
        if size is not None and i >= size:
            break
        word = line.decode() if isinstance(line, bytes) else line
        out[word.strip()] = i
    return out


class WMT14(Dataset):
    """WMT'14 French-English (Paddle's ``wmt14.tgz``: ``*src.dict``, ``*trg.dict`` and
    tab-separated ``train/train``, ``test/test``, ``gen/gen``). The dictionaries
    are their files' first `dict_size` lines ('<s>', '<e>', '<unk>' = 2 first).
    A sample is (source ids with '<s>'/'<e>', '<s>' + target ids, target ids +
    '<e>'), int64; pairs with more than 80 ids on a side are left out.

    >>> import io, os, tarfile, tempfile
    >>> from oar.text import WMT14
    >>> path = os.path.join(tempfile.mkdtemp(), "wmt14.tgz")
    >>> with tarfile.open(path, "w:gz") as t:
    ...     for name, text in [("src.dict", b"<s>\\n<e>\\n<unk>\\nle\\n"), ("trg.dict", b"<s>\\n<e>\\n<unk>\\nthe\\n"),
    ...                        ("train/train", b"le chat\\tthe cat\\n")]:
    ...         info = tarfile.TarInfo(name); info.size = len(text); t.addfile(info, io.BytesIO(text))
    >>> [a.tolist() for a in WMT14(path, mode="train", dict_size=10)[0]]
    [[0, 3, 2, 1], [0, 3, 2], [3, 2, 1]]
    """

    def __init__(self, data_file=None, mode="train", dict_size=-1, download=True):
        api = _api(self)
        self.mode = _mode(mode, ("train", "test", "gen"), api)
        if isinstance(dict_size, bool) or not isinstance(dict_size, int) or dict_size <= 0:
            raise ValueError(f"[{api}] dict_size must be a positive int, got {dict_size!r}")
        self.dict_size = dict_size
        self.data_file = _resolve(data_file, _WMT14, "wmt14", download, api)
        self.src_ids, self.trg_ids, self.trg_ids_next = [], [], []
        with tarfile.open(self.data_file) as tar:
            self.src_dict = _read_dict(tar.extractfile(_tar_member(tar, "src.dict", api)[0]), dict_size)
            self.trg_dict = _read_dict(tar.extractfile(_tar_member(tar, "trg.dict", api)[0]), dict_size)
            for name in _tar_member(tar, f"{self.mode}/{self.mode}", api):
                for line in tar.extractfile(name):
                    parts = line.decode().strip().split("\t")
                    if len(parts) != 2:
                        continue
                    src = [self.src_dict.get(w, 2) for w in ["<s>", *parts[0].split(), "<e>"]]
                    trg = [self.trg_dict.get(w, 2) for w in parts[1].split()]
                    if len(src) > 80 or len(trg) > 80:
                        continue
                    self.src_ids.append(src)
                    self.trg_ids.append([self.trg_dict["<s>"], *trg])
                    self.trg_ids_next.append([*trg, self.trg_dict["<e>"]])

    def __getitem__(self, idx):
        return tuple(np.array(s[idx], dtype=np.int64) for s in (self.src_ids, self.trg_ids, self.trg_ids_next))

    def __len__(self):
        return len(self.src_ids)

    def get_dict(self, reverse=False):
        """The (source, target) dictionaries; id -> word when `reverse`."""
        if reverse:
            return {v: k for k, v in self.src_dict.items()}, {v: k for k, v in self.trg_dict.items()}
        return self.src_dict, self.trg_dict


class WMT16(Dataset):
    """WMT'16 English-German (Paddle's ``wmt16.tar.gz``: tab-separated English and German
    in ``wmt16/{train,test,val}``). `lang` is the source language ('en' or 'de').
    Each dictionary is '<s>', '<e>', '<unk>', then its language's most frequent
    words in the training text, `*_dict_size` entries in all (Paddle builds the
    target dictionary from the source column; oar from the target language's own).
    A sample is (source ids with '<s>'/'<e>', '<s>' + target ids, target ids + '<e>'), int64.

    >>> import io, os, tarfile, tempfile
    >>> from oar.text import WMT16
    >>> path = os.path.join(tempfile.mkdtemp(), "wmt16.tar.gz")
    >>> with tarfile.open(path, "w:gz") as t:
    ...     text = b"the cat\\tdie katze\\nthe dog\\tder hund\\n"
    ...     info = tarfile.TarInfo("wmt16/train"); info.size = len(text); t.addfile(info, io.BytesIO(text))
    >>> ds = WMT16(path, mode="train", src_dict_size=5, trg_dict_size=10, lang="en")
    >>> ds.src_dict
    {'<s>': 0, '<e>': 1, '<unk>': 2, 'the': 3, 'cat': 4}
    >>> [a.tolist() for a in ds[1]]
    [[0, 3, 2, 1], [0, 5, 6], [5, 6, 1]]
    """

    def __init__(self, data_file=None, mode="train", src_dict_size=-1, trg_dict_size=-1, lang="en", download=True):
        api = _api(self)
        self.mode = _mode(mode, ("train", "test", "val"), api)
        if lang not in ("en", "de"):
            raise ValueError(f"[{api}] lang must be 'en' or 'de', got {lang!r}")
        for what, v in (("src_dict_size", src_dict_size), ("trg_dict_size", trg_dict_size)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"[{api}] {what} must be a positive int, got {v!r}")
        self.lang, self.src_dict_size, self.trg_dict_size = lang, src_dict_size, trg_dict_size
        self.data_file = _resolve(data_file, _WMT16, "wmt16", download, api)
        src_col = 0 if lang == "en" else 1
        with tarfile.open(self.data_file) as tar:
            def pairs(split):
                try:
                    f = tar.extractfile(f"wmt16/{split}")
                except KeyError:
                    raise ValueError(f"[{api}] {self.data_file}: no member 'wmt16/{split}'") from None
                out = []
                for line in f:
                    parts = line.decode().strip().split("\t")
                    if len(parts) == 2:
                        out.append(parts)
                return out

            train = pairs("train")
            self._dicts = {}
            for col, size in ((src_col, src_dict_size), (1 - src_col, trg_dict_size)):
                freq = collections.Counter(w for p in train for w in p[col].split())
                words = ["<s>", "<e>", "<unk>"] + [w for w, _ in freq.most_common(max(size - 3, 0))]
                self._dicts["en" if col == 0 else "de"] = {w: i for i, w in enumerate(words[:size])}
            self.src_dict = self._dicts[lang]
            self.trg_dict = self._dicts["de" if lang == "en" else "en"]
            data = train if self.mode == "train" else pairs(self.mode)
        self.src_ids, self.trg_ids, self.trg_ids_next = [], [], []
        for p in data:
            src = [self.src_dict.get(w, 2) for w in p[src_col].split()]
            trg = [self.trg_dict.get(w, 2) for w in p[1 - src_col].split()]
            self.src_ids.append([0, *src, 1])
            self.trg_ids.append([0, *trg])
            self.trg_ids_next.append([*trg, 1])

    def __getitem__(self, idx):
        return tuple(np.array(s[idx], dtype=np.int64) for s in (self.src_ids, self.trg_ids, self.trg_ids_next))

    def __len__(self):
        return len(self.src_ids)

    def get_dict(self, lang, reverse=False):
        """The dictionary of `lang` ('en' or 'de'); id -> word when `reverse`."""
        if lang not in self._dicts:
            raise ValueError(f"[oar.text.WMT16.get_dict] lang must be 'en' or 'de', got {lang!r}")
        d = self._dicts[lang]
        return {v: k for k, v in d.items()} if reverse else d


class Conll05st(Dataset):
    """CoNLL-2005 semantic role labelling, test.wsj part (Paddle's
    ``conll05st-tests.tar.gz`` with ``conll05st-release/test.wsj/{words,props}/test.wsj.*.gz``,
    plus word, verb and target dictionaries, one entry per line). A sentence
    with k predicates gives k samples; each is 9 int64 arrays of the sentence's
    length: word ids, the ids of the words at predicate offsets -2, -1, 0, +1,
    +2 (repeated; 'bos'/'eos' past the ends), the predicate id (repeated), the
    mark of the 5-word window around the predicate, and the BIO label ids.
    Unknown words get id 0. Label ids: B-/I- pairs of each tag in sorted order, then 'O'.

    >>> import gzip, io, os, tarfile, tempfile
    >>> from oar.text import Conll05st
    >>> d = tempfile.mkdtemp(); j = lambda n: os.path.join(d, n)
    >>> files = [("w", "<unk>\\nbos\\neos\\nhe\\nran\\n"), ("v", "run\\n"), ("t", "B-A0\\nI-A0\\nB-V\\nO\\n")]
    >>> for n, text in files:
    ...     _ = open(j(n), "w").write(text)
    >>> with tarfile.open(j("data.tgz"), "w:gz") as t:
    ...     for kind, text in [("words", b"he\\nran\\n\\n"), ("props", b"-  (A0*)\\nrun  (V*)\\n\\n")]:
    ...         blob = gzip.compress(text); name = f"conll05st-release/test.wsj/{kind}/test.wsj.{kind}.gz"
    ...         info = tarfile.TarInfo(name); info.size = len(blob); t.addfile(info, io.BytesIO(blob))
    >>> ds = Conll05st(j("data.tgz"), j("w"), j("v"), j("t"), emb_file=j("w"))
    >>> [a.tolist() for a in ds[0]]
    [[3, 4], [1, 1], [3, 3], [4, 4], [2, 2], [2, 2], [0, 0], [1, 1], [0, 2]]
    """

    def __init__(self, data_file=None, word_dict_file=None, verb_dict_file=None, target_dict_file=None,
                 emb_file=None, download=True):
        api = _api(self)
        given = {"data_file": data_file, "word_dict_file": word_dict_file, "verb_dict_file": verb_dict_file,
                 "target_dict_file": target_dict_file, "emb_file": emb_file}
        for key, path in given.items():
            setattr(self, key, _resolve(path, _CONLL05[key], "conll05st", download, api))
        with open(self.word_dict_file) as f:
            self.word_dict = _read_dict(f)
        with open(self.verb_dict_file) as f:
            self.predicate_dict = _read_dict(f)
        with open(self.target_dict_file) as f:
            tags = sorted({ln.strip()[2:] for ln in f if ln.strip()[:2] in ("B-", "I-")})
        self.label_dict = {}
        for tag in tags:
            self.label_dict["B-" + tag] = len(self.label_dict)
            self.label_dict["I-" + tag] = len(self.label_dict)
        self.label_dict["O"] = len(self.label_dict)
        self.sentences, self.predicates, self.labels = [], [], []
        self._load(api)

    def _load(self, api):
        base = "conll05st-release/test.wsj"
        with tarfile.open(self.data_file) as tar:
            try:
                words = gzip.decompress(tar.extractfile(f"{base}/words/test.wsj.words.gz").read()).decode()
                props = gzip.decompress(tar.extractfile(f"{base}/props/test.wsj.props.gz").read()).decode()
            except KeyError as e:
                raise ValueError(f"[{api}] {self.data_file}: missing member {e}") from None
        sentence, columns = [], []
        for word, prop in zip(words.splitlines(), props.splitlines()):
            cells = prop.split()
            if cells:
                sentence.append(word.strip())
                columns.append(cells)
                continue
            if columns:
                verbs = [c[0] for c in columns if c[0] != "-"]
                for k in range(1, len(columns[0])):
                    self.sentences.append(sentence)
                    self.predicates.append(verbs[k - 1])
                    self.labels.append(self._bio([c[k] for c in columns], api))
            sentence, columns = [], []

    @staticmethod
    def _bio(spans, api):
        """Bracketed spans ('(A0*', '*', '*)', '(V*)') as B-/I-/O tags."""
        out, tag, inside = [], "O", False
        for s in spans:
            if s == "*":
                out.append("I-" + tag if inside else "O")
            elif s == "*)":
                out.append("I-" + tag)
                inside = False
            elif s.startswith("("):
                tag = s[1:s.index("*")]
                out.append("B-" + tag)
                inside = not s.endswith(")")
            else:
                raise ValueError(f"[{api}] unexpected label {s!r}")
        return out

    def __getitem__(self, idx):
        sentence, labels = self.sentences[idx], self.labels[idx]
        n = len(sentence)
        v = labels.index("B-V")
        mark = [0] * n
        ctx = []
        for off in (-2, -1, 0, 1, 2):
            i = v + off
            if 0 <= i < n:
                mark[i] = 1
                ctx.append(sentence[i])
            else:
                ctx.append("bos" if i < 0 else "eos")
        ids = [[self.word_dict.get(w, 0) for w in sentence]]
        ids += [[self.word_dict.get(w, 0)] * n for w in ctx]
        ids += [[self.predicate_dict.get(self.predicates[idx])] * n, mark, [self.label_dict[t] for t in labels]]
        return tuple(np.array(a, dtype=np.int64) for a in ids)

    def __len__(self):
        return len(self.sentences)

    def get_dict(self):
        """The (word, predicate, label) dictionaries."""
        return self.word_dict, self.predicate_dict, self.label_dict

    def get_embedding(self):
        """The path of the embedding file."""
        return self.emb_file
