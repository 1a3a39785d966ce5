"""oar.utils (deprecated, require_version, try_import, run_check, unique_name, download)
and oar.text (data sets from synthetic files in Paddle's formats, Viterbi decoding)."""
import gzip
import hashlib
import io
import itertools
import os
import pathlib
import tarfile
import warnings
import zipfile

import numpy as np
import pytest

import oar
from oar.utils import download, unique_name

# ---- utils ----------------------------------------------------------------------------------


def test_deprecated_levels():
    @oar.utils.deprecated(since="0.1", update_to="oar.new", reason="renamed", level=1)
    def old(x):
        """Adds one."""
        return x + 1

    assert "deprecated since 0.1" in old.__doc__ and "Adds one." in old.__doc__
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert old(1) == 2 and old(2) == 3
    assert len(w) == 1 and "oar.new" in str(w[0].message) and issubclass(w[0].category, UserWarning)

    @oar.utils.deprecated(level=0)
    def quiet():
        return 0

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        quiet()
    assert w == []

    @oar.utils.deprecated(update_to="oar.other", level=2)
    def gone():
        return 0

    with pytest.raises(RuntimeError, match="oar.other"):
        gone()
    with pytest.raises(ValueError, match=r"^\[oar\.utils\.deprecated\]"):
        oar.utils.deprecated(level=3)

    @oar.utils.deprecated(since="0.2", level=1)
    class Old:
        def __init__(self, v):
            self.v = v

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        objs = [Old(1), Old(2)]
    assert isinstance(objs[0], Old) and objs[1].v == 2 and len(w) == 1 and "since 0.2" in str(w[0].message)


def test_require_version():
    oar.utils.require_version("0.0.1")
    oar.utils.require_version("0.0.1", "99.0")
    with pytest.raises(Exception, match="99.0"):
        oar.utils.require_version("99.0")
    with pytest.raises(Exception, match="0.0.1"):
        oar.utils.require_version("0.0.0", "0.0.1")
    with pytest.raises(TypeError, match=r"^\[oar\.utils\.require_version\]"):
        oar.utils.require_version(1)
    with pytest.raises(ValueError, match=r"^\[oar\.utils\.require_version\]"):
        oar.utils.require_version("1.x")


def test_try_import():
    assert oar.utils.try_import("math").sqrt(4.0) == 2.0
    with pytest.raises(ImportError, match="pip install no_such_mod_abc"):
        oar.utils.try_import("no_such_mod_abc")
    with pytest.raises(ImportError, match="custom message"):
        oar.utils.try_import("no_such_mod_abc", "custom message")


def test_run_check_prints_success(capsys):
    oar.utils.run_check()
    out = capsys.readouterr().out
    assert "oar works well on 1 CPU." in out and "installed successfully" in out


def test_unique_name():
    with unique_name.guard():
        assert [unique_name.generate("fc") for _ in range(3)] == ["fc_0", "fc_1", "fc_2"]
        assert unique_name.generate("conv") == "conv_0"
        with unique_name.guard("pre_"):
            assert unique_name.generate("fc") == "pre_fc_0"
        assert unique_name.generate("fc") == "fc_3"
        old = unique_name.switch()
        assert unique_name.generate("fc") == "fc_0"
        unique_name.switch(old)
        assert unique_name.generate("fc") == "fc_4"
    with pytest.raises(TypeError, match=r"^\[oar\.utils\.unique_name\.generate\]"):
        unique_name.generate(3)


def _md5(data):
    return hashlib.md5(data).hexdigest()


def test_download_file_url_into_cache(tmp_path):
    src = tmp_path / "src" / "weights.bin"
    src.parent.mkdir()
    src.write_bytes(b"abc" * 100)
    cache = tmp_path / "cache"
    p = download.get_path_from_url(src.as_uri(), str(cache), md5sum=_md5(b"abc" * 100))
    assert p == str(cache / "weights.bin") and open(p, "rb").read() == b"abc" * 100
    # in the cache: the source is no longer needed
    src.unlink()
    assert download.get_path_from_url(src.as_uri(), str(cache), md5sum=_md5(b"abc" * 100)) == p
    # a wrong MD5 means the cached copy is stale: it is fetched again, which now fails
    with pytest.raises(ConnectionError, match=r"^\[oar\.utils\.download\.get_path_from_url\]"):
        download.get_path_from_url(src.as_uri(), str(cache), md5sum="0" * 32)


def test_download_md5_mismatch_is_rejected(tmp_path):
    src = tmp_path / "a.txt"
    src.write_bytes(b"data")
    with pytest.raises(ValueError, match="MD5"):
        download.get_path_from_url(src.as_uri(), str(tmp_path / "c"), md5sum=_md5(b"other"))
    assert not (tmp_path / "c" / "a.txt").exists()


def test_download_unreachable_network_is_a_clear_error(tmp_path):
    # port 9 (discard) on the loopback interface refuses connections: no traffic leaves the machine
    with pytest.raises(ConnectionError, match=r"could not download .*place the file at"):
        download.get_path_from_url("http://127.0.0.1:9/model.pdparams", str(tmp_path))


def test_weights_path_uses_prepopulated_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(download, "WEIGHTS_HOME", str(tmp_path))
    (tmp_path / "resnet.pdparams").write_bytes(b"w")
    p = download.get_weights_path_from_url("http://127.0.0.1:9/x/resnet.pdparams", md5sum=_md5(b"w"))
    assert p == str(tmp_path / "resnet.pdparams")


def test_download_decompresses_archives(tmp_path):
    arch = tmp_path / "pkg.tar.gz"
    with tarfile.open(arch, "w:gz") as t:
        data = b"hello"
        info = tarfile.TarInfo("pkg/readme.txt")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    out = download.get_path_from_url(arch.as_uri(), str(tmp_path / "c"))
    assert out == str(tmp_path / "c" / "pkg")
    assert open(os.path.join(out, "readme.txt")).read() == "hello"
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../escape.txt", "x")
    with pytest.raises(ValueError, match="outside"):
        download.get_path_from_url(evil.as_uri(), str(tmp_path / "d"))


# ---- text data sets -------------------------------------------------------------------------

def _tar(path, members, mode="w:gz"):
    with tarfile.open(path, mode) as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return str(path)


def test_uci_housing(tmp_path):
    rng = np.random.default_rng(0)
    data = rng.uniform(0, 10, size=(10, 14)).round(3)
    path = tmp_path / "housing.data"
    path.write_text("\n".join(" ".join(f"{v:.3f}" for v in row) for row in data))
    feats = (data[:, :13] - data[:, :13].mean(0)) / (data.max(0) - data.min(0))[:13]
    train = oar.text.UCIHousing(str(path), mode="train")
    test = oar.text.UCIHousing(str(path), mode="test")
    assert len(train) == 8 and len(test) == 2
    x, y = test[1]
    assert x.dtype == np.float32 and x.shape == (13,) and y.shape == (1,)
    np.testing.assert_allclose(x, feats[9], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y, data[9, 13:], rtol=1e-6)
    with pytest.raises(ValueError, match=r"^\[oar\.text\.UCIHousing\]"):
        oar.text.UCIHousing(str(path), mode="val")
    bad = tmp_path / "bad.data"
    bad.write_text("1 2 3")
    with pytest.raises(ValueError, match="14 numbers"):
        oar.text.UCIHousing(str(bad))


def test_dataset_cache_and_no_download(tmp_path, monkeypatch):
    monkeypatch.setattr(download, "DATA_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="download=True"):
        oar.text.UCIHousing(download=False)
    (tmp_path / "uci_housing").mkdir()
    (tmp_path / "uci_housing" / "housing.data").write_text(" ".join(["1"] * 14 * 5))
    # a cached copy with the wrong MD5 is not used; without network that is a clear error
    with pytest.raises(FileNotFoundError):
        oar.text.UCIHousing(download=False)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        oar.text.UCIHousing(str(tmp_path / "missing.data"))


def test_imdb(tmp_path):
    reviews = {
        "aclImdb/train/pos/1.txt": b"A great, great movie!",
        "aclImdb/train/neg/2.txt": b"A dull movie.",
        "aclImdb/test/pos/3.txt": b"Great fun",
        "aclImdb/test/neg/4.txt": b"dull DULL",
        "aclImdb/README": b"not a review",
    }
    path = _tar(tmp_path / "aclImdb_v1.tar.gz", reviews)
    ds = oar.text.Imdb(path, mode="train", cutoff=1)
    # counts over train and test: great 3, dull 3, a 2, movie 2, fun 1 -> kept if > 1
    assert ds.word_idx == {"dull": 0, "great": 1, "a": 2, "movie": 3, "<unk>": 4}
    ids, label = ds[0]
    assert ids.tolist() == [2, 1, 1, 3] and label.tolist() == [0]
    ids, label = ds[1]
    assert ids.tolist() == [2, 0, 3] and label.tolist() == [1]
    test = oar.text.Imdb(path, mode="test", cutoff=1)
    assert len(test) == 2 and test[0][0].tolist() == [1, 4] and test[1][0].tolist() == [0, 0]


def test_imikolov(tmp_path):
    files = {"./simple-examples/data/ptb.train.txt": b"x y\nx\n",
             "./simple-examples/data/ptb.valid.txt": b"y z <unk>\n",
             "./simple-examples/data/ptb.test.txt": b"z q\n"}
    path = _tar(tmp_path / "simple-examples.tgz", files)
    ds = oar.text.Imikolov(path, data_type="NGRAM", window_size=2, mode="train", min_word_freq=0)
    # <s>: 3, <e>: 3, x: 2, y: 2, z: 1 (<unk> in the text is not counted)
    assert ds.word_idx == {"<e>": 0, "<s>": 1, "x": 2, "y": 3, "z": 4, "<unk>": 5}
    assert [tuple(int(v) for v in s) for s in ds] == [(1, 2), (2, 3), (3, 0), (1, 2), (2, 0)]
    seq = oar.text.Imikolov(path, data_type="SEQ", mode="test", min_word_freq=0)
    src, trg = seq[0]
    assert src.tolist() == [1, 4, 5] and trg.tolist() == [4, 5, 0]
    short = oar.text.Imikolov(path, data_type="SEQ", window_size=2, mode="train", min_word_freq=0)
    assert len(short) == 1  # "<s> x y" is longer than 2
    with pytest.raises(ValueError, match=r"^\[oar\.text\.Imikolov\].*window_size"):
        oar.text.Imikolov(path, data_type="NGRAM")


def test_movielens(tmp_path):
    path = tmp_path / "ml-1m.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("ml-1m/movies.dat", "1::Alpha Beta (1999)::Drama|Comedy\n2::Gamma (2001)::Drama\n")
        z.writestr("ml-1m/users.dat", "7::M::56::3::0000\n8::F::1::0::0000\n")
        z.writestr("ml-1m/ratings.dat", "".join(f"{u}::{m}::{r}::0\n" for u, m, r in
                                                [(7, 1, 5), (8, 2, 1), (7, 2, 3), (8, 1, 4)] * 5))
    tr = oar.text.Movielens(str(path), mode="train", test_ratio=0.3, rand_seed=3)
    te = oar.text.Movielens(str(path), mode="test", test_ratio=0.3, rand_seed=3)
    rs = np.random.RandomState(3)
    goes_test = rs.random_sample(20) < 0.3
    assert len(te) == goes_test.sum() and len(tr) == 20 - goes_test.sum()
    s = tr[0] if not goes_test[0] else te[0]
    # user 7: male (0), age 56 -> bucket 6, job 3; movie 1: Drama|Comedy, "alpha beta"; rating 2*5-5
    assert [a.tolist() for a in s] == [[7], [0], [6], [3], [1], [1, 0], [0, 1], [5.0]]


def test_wmt14_and_wmt16(tmp_path):
    p14 = _tar(tmp_path / "wmt14.tgz", {
        "wmt14/src.dict": b"<s>\n<e>\n<unk>\nun\nchat\nrare\n",
        "wmt14/trg.dict": b"<s>\n<e>\n<unk>\na\ncat\n",
        "wmt14/test/test": b"un chat rare\ta cat dog\nbad line\n"})
    ds = oar.text.WMT14(p14, mode="test", dict_size=5)  # 'rare' is line 5: cut
    assert len(ds) == 1
    assert [a.tolist() for a in ds[0]] == [[0, 3, 4, 2, 1], [0, 3, 4, 2], [3, 4, 2, 1]]
    assert ds.get_dict(reverse=True)[1][4] == "cat"
    p16 = _tar(tmp_path / "wmt16.tar.gz", {
        "wmt16/train": b"a b b\tx y\nb c\ty y\n", "wmt16/val": b"b q\ty z\n"})
    de = oar.text.WMT16(p16, mode="val", src_dict_size=4, trg_dict_size=5, lang="de")
    # source German: y 3, x 1 -> y first; target English: b 3, a 1, c 1
    assert de.src_dict == {"<s>": 0, "<e>": 1, "<unk>": 2, "y": 3}
    assert de.trg_dict == {"<s>": 0, "<e>": 1, "<unk>": 2, "b": 3, "a": 4}
    assert [a.tolist() for a in de[0]] == [[0, 3, 2, 1], [0, 3, 2], [3, 2, 1]]
    with pytest.raises(ValueError, match=r"^\[oar\.text\.WMT16\]"):
        oar.text.WMT16(p16, src_dict_size=0, trg_dict_size=4)


def test_conll05st(tmp_path):
    words = b"The\ncat\nsat\n\ncats\nsit\nand\ngo\n\n"
    props = (b"-    (A0*\n-    *)\nsit  (V*)\n\n"
             b"-    (A0*)  (A0*)\nsit  (V*)   *\n-    *      *\ngo   *      (V*)\n\n")
    base = "conll05st-release/test.wsj"
    data = _tar(tmp_path / "c.tar.gz", {f"{base}/words/test.wsj.words.gz": gzip.compress(words),
                                        f"{base}/props/test.wsj.props.gz": gzip.compress(props)})
    wd = tmp_path / "w.txt"
    wd.write_text("<unk>\nbos\neos\nThe\ncat\nsat\ncats\nsit\ngo\n")
    vd = tmp_path / "v.txt"
    vd.write_text("go\nsit\n")
    td = tmp_path / "t.txt"
    td.write_text("B-A0\nI-A0\nB-V\nI-V\nO\n")
    ds = oar.text.Conll05st(str(data), str(wd), str(vd), str(td), emb_file=str(wd))
    assert len(ds) == 3  # one sample per predicate
    assert ds.get_dict()[2] == {"B-A0": 0, "I-A0": 1, "B-V": 2, "I-V": 3, "O": 4}
    assert ds.get_embedding() == str(wd)
    word, n2, n1, c0, p1, p2, pred, mark, label = [a.tolist() for a in ds[0]]
    assert word == [3, 4, 5] and pred == [1, 1, 1] and mark == [1, 1, 1]
    assert (n2, n1, c0, p1, p2) == ([3] * 3, [4] * 3, [5] * 3, [2] * 3, [2] * 3)
    assert label == [0, 1, 2]  # B-A0 I-A0 B-V
    # second sentence, predicate 'go' (last word): window -2..0 marked, 'eos' after it, 'and' unknown (0)
    word, n2, n1, c0, p1, p2, pred, mark, label = [a.tolist() for a in ds[2]]
    assert word == [6, 7, 0, 8] and pred == [0] * 4 and mark == [0, 1, 1, 1]
    assert (n2[0], n1[0], c0[0], p1[0], p2[0]) == (7, 0, 8, 2, 2)
    assert label == [0, 4, 4, 2]


# ---- Viterbi ----------------------------------------------------------------------------------

def _brute_force(em, tr, lengths, with_tags):
    """Best score and path per row by enumerating every tag sequence."""
    n = tr.shape[0]
    scores, paths = [], []
    for b, length in enumerate(lengths):
        best = None
        for path in itertools.product(range(n), repeat=int(length)):
            s = sum(em[b, t, path[t]] for t in range(length)) + sum(tr[path[t - 1], path[t]]
                                                                    for t in range(1, length))
            if with_tags:
                s += tr[n - 1, path[0]] + tr[n - 2, path[-1]]
            if best is None or s > best[0]:
                best = (s, path)
        scores.append(best[0])
        paths.append(list(best[1]) + [0] * (max(lengths) - length))
    return np.array(scores), np.array(paths)


@pytest.mark.parametrize("with_tags", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_viterbi_matches_brute_force(with_tags, dtype):
    rng = np.random.default_rng(1 if with_tags else 2)
    batch, seq_len, ntags = 4, 5, 4
    em = rng.standard_normal((batch, seq_len, ntags))
    tr = rng.standard_normal((ntags, ntags))
    lengths = np.array([5, 3, 1, 4])
    scores, paths = oar.text.viterbi_decode(oar.to_tensor(em.astype(dtype)), oar.to_tensor(tr.astype(dtype)),
                                            oar.to_tensor(lengths), with_tags)
    ref_s, ref_p = _brute_force(em, tr, lengths, with_tags)
    assert paths.dtype == oar.int64 and paths.shape == [batch, 5]
    np.testing.assert_allclose(scores.numpy(), ref_s, rtol=1e-5, atol=1e-5)
    assert paths.numpy().tolist() == ref_p.tolist()
    decoder = oar.text.ViterbiDecoder(oar.to_tensor(tr.astype(dtype)), include_bos_eos_tag=with_tags)
    s2, p2 = decoder(oar.to_tensor(em.astype(dtype)), oar.to_tensor(lengths))
    assert p2.numpy().tolist() == ref_p.tolist()


def test_viterbi_path_width_is_max_length():
    rng = np.random.default_rng(3)
    em, tr = rng.standard_normal((2, 6, 3)), rng.standard_normal((3, 3))
    _, paths = oar.text.viterbi_decode(oar.to_tensor(em), oar.to_tensor(tr), oar.to_tensor([2, 3]), False)
    ref_s, ref_p = _brute_force(em, tr, [2, 3], False)
    assert paths.numpy().tolist() == ref_p.tolist()


def test_viterbi_errors():
    em, tr = oar.zeros([1, 2, 3]), oar.zeros([3, 3])
    with pytest.raises(ValueError, match=r"^\[oar\.text\.viterbi_decode\].*3-D"):
        oar.text.viterbi_decode(oar.zeros([2, 3]), tr, oar.to_tensor([1]))
    with pytest.raises(ValueError, match=r"^\[oar\.text\.viterbi_decode\].*transition_params"):
        oar.text.viterbi_decode(em, oar.zeros([2, 2]), oar.to_tensor([1]))
    with pytest.raises(ValueError, match=r"^\[oar\.text\.viterbi_decode\].*lengths"):
        oar.text.viterbi_decode(em, tr, oar.to_tensor([3]))
    with pytest.raises(TypeError, match=r"^\[oar\.text\.viterbi_decode\]"):
        oar.text.viterbi_decode(em, tr, oar.to_tensor([1.0]))


def test_names_match_paddle_text():
    # paddle.text.__all__ in Paddle 3.3.1
    for n in ["Conll05st", "Imdb", "Imikolov", "Movielens", "UCIHousing", "WMT14", "WMT16", "ViterbiDecoder",
              "viterbi_decode"]:
        assert n in oar.text.__all__ and hasattr(oar.text, n)
    assert pathlib.Path(oar.text.datasets.__file__).exists()
