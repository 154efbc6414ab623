"""svmlab.datasets: every source in the resolution order, failure modes, MANIFEST figures.

The download tests start a real HTTP server on 127.0.0.1 (http.server in a
thread) and point pooch at it through SVMLAB_DOWNLOAD_URL; pooch is not mocked.
Expected values come from MANIFEST.md (parsed here) or from parsing the files
directly with scikit-learn / numpy in the test, never from svmlab itself.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import http.server
import lzma
import os
import re
import shutil
import struct
import threading
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from svmlab import datasets
from svmlab.datasets import DatasetCorruptError, DatasetNotFoundError
from svmlab.datasets._parse import read_idx, read_libsvm

from conftest import require_shared_data, shared_data_dir

EMBEDDED = Path(datasets.__file__).resolve().parent.parent / "data"


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def sk_parse(path, n_features):
    opener = lzma.open if str(path).endswith(".xz") else open
    with opener(path, "rb") as fh:
        return load_svmlight_file(fh, n_features=n_features)


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Isolated environment: no SVMLAB_DATA, an empty cache, offline by default."""
    monkeypatch.delenv("SVMLAB_DATA", raising=False)
    monkeypatch.delenv("SVMLAB_DOWNLOAD_URL", raising=False)
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("SVMLAB_CACHE", str(cache))
    monkeypatch.setenv("SVMLAB_OFFLINE", "1")
    datasets.clear_memory_cache()
    yield cache
    datasets.clear_memory_cache()


class _Handler(http.server.SimpleHTTPRequestHandler):
    requests: list

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        self.server.requests.append(self.path)
        super().do_GET()


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A real HTTP server on 127.0.0.1 serving tmp_path/'www'; downloads allowed."""
    root = tmp_path / "www"
    root.mkdir()
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    httpd.requests = []
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    monkeypatch.setenv("SVMLAB_DOWNLOAD_URL", f"http://127.0.0.1:{httpd.server_address[1]}")
    monkeypatch.setenv("SVMLAB_OFFLINE", "0")
    yield root, httpd.requests
    httpd.shutdown()
    httpd.server_close()


def a9a_test_text():
    with lzma.open(EMBEDDED / "a9a.t.xz", "rb") as fh:
        return fh.read()


def expected_a9a_test():
    return sk_parse(EMBEDDED / "a9a.t.xz", 123)


def same_xy(a, b):
    (X1, y1), (X2, y2) = a, b
    return X1.shape == X2.shape and (X1 != X2).nnz == 0 and np.array_equal(y1, y2)


@pytest.fixture
def no_embedded(monkeypatch):
    """a9a without its embedded copy: the cache and download paths of a
    dataset whose content checksum and counts are known."""
    spec = datasets.REGISTRY["a9a"]
    files = {part: tuple(dataclasses.replace(fs, embedded=None) for fs in fss)
             for part, fss in spec.files.items()}
    monkeypatch.setitem(datasets.REGISTRY, "a9a", dataclasses.replace(spec, files=files))


# ---------------------------------------------------------------- contract

def test_embedded_a9a_matches_sklearn(env):
    X, y = datasets.load("a9a", "test")
    assert datasets.locate("a9a", "test") == [("embedded", EMBEDDED / "a9a.t.xz")]
    assert same_xy((X, y), expected_a9a_test())
    assert X.shape == (16281, 123)  # feature 123 never occurs in a9a.t
    assert X.dtype == np.float64 and X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    assert X.has_canonical_format and y.dtype == np.float64
    assert set(np.unique(y)) == {-1.0, 1.0}
    Xtr, ytr = datasets.load("a9a")
    assert Xtr.shape == (32561, 123) and int((ytr == 1).sum()) == 7841


def test_callers_cannot_corrupt_the_memory_cache(env):
    X, y = datasets.load("a9a", "test")
    X.data[:] = 7.0
    X.indices[:] = 0
    y[:] = 0
    X2, y2 = datasets.load("a9a", "test")
    assert same_xy((X2, y2), expected_a9a_test())


def test_cache_comes_before_download(env, no_embedded, server):
    # a cached copy in the upstream name (plain text) with the rows reversed:
    # the same content (the content checksum ignores row order), so we can
    # tell where it came from
    root, requests = server
    (root / "a9a.t").write_bytes(a9a_test_text())
    lines = a9a_test_text().splitlines(keepends=True)[::-1]
    (env / "a9a.t").write_bytes(b"".join(lines))
    X, y = datasets.load("a9a", "test")
    assert datasets.locate("a9a", "test") == [("cache", env / "a9a.t")]
    assert requests == []
    Xe, ye = expected_a9a_test()
    assert np.array_equal(y, ye[::-1])
    assert (X - Xe[::-1]).nnz == 0


def test_embedded_a9a_comes_before_cache_and_download(env, server):
    # a valid cached copy (rows reversed) and a reachable server: neither is
    # used, the checksummed embedded copy is
    root, requests = server
    (root / "a9a.t").write_bytes(a9a_test_text())
    (env / "a9a.t").write_bytes(b"".join(a9a_test_text().splitlines(keepends=True)[::-1]))
    assert same_xy(datasets.load("a9a", "test"), expected_a9a_test())
    assert datasets.locate("a9a", "test") == [("embedded", EMBEDDED / "a9a.t.xz")]
    assert requests == []


def test_svmlab_data_comes_before_cache(env, tmp_path, monkeypatch):
    d = tmp_path / "shared"
    d.mkdir()
    shutil.copy(EMBEDDED / "a9a.t.xz", d / "a9a.t.xz")
    (env / "a9a.t").write_bytes(b"".join(a9a_test_text().splitlines(keepends=True)[::-1]))
    monkeypatch.setenv("SVMLAB_DATA", str(d))
    assert datasets.locate("a9a", "test") == [("SVMLAB_DATA", d / "a9a.t.xz")]
    assert same_xy(datasets.load("a9a", "test"), expected_a9a_test())


def test_download_from_a_real_local_http_server(env, server, no_embedded):
    root, requests = server
    (root / "a9a.t").write_bytes(a9a_test_text())
    (root / "a9a.t").write_bytes(a9a_test_text())
    X, y = datasets.load("a9a", "test")
    assert requests == ["/a9a.t"]
    assert (env / "a9a.t").read_bytes() == a9a_test_text()  # landed in the cache
    assert same_xy((X, y), expected_a9a_test())
    # now it is a cache hit: no second request
    datasets.clear_memory_cache()
    assert datasets.locate("a9a", "test") == [("cache", env / "a9a.t")]
    assert requests == ["/a9a.t"]


def _with_upstream_hash(monkeypatch, name, split, digest):
    spec = datasets.REGISTRY[name]
    fs = dataclasses.replace(spec.files[split][0], upstream_sha256=digest)
    files = dict(spec.files)
    files[split] = (fs,)
    monkeypatch.setitem(datasets.REGISTRY, name, dataclasses.replace(spec, files=files))


def test_checksum_mismatch_in_cache_is_moved_aside_and_redownloaded(env, server, no_embedded,
                                                                     monkeypatch):
    root, requests = server
    good = a9a_test_text()
    (root / "a9a.t").write_bytes(good)
    _with_upstream_hash(monkeypatch, "a9a", "test", hashlib.sha256(good).hexdigest())
    # a cached file with one flipped label: parses fine, counts differ, hash differs
    bad = good.replace(b"-1 ", b"+1 ", 1)
    (env / "a9a.t").write_bytes(bad)
    with pytest.warns(RuntimeWarning, match="checksum mismatch.*moved it to"):
        X, y = datasets.load("a9a", "test")
    assert requests == ["/a9a.t"]
    assert (env / "a9a.t").read_bytes() == good
    assert (env / "a9a.t.corrupt").read_bytes() == bad   # kept for inspection
    assert same_xy((X, y), expected_a9a_test())


def test_download_with_wrong_checksum_gives_no_data(env, server, no_embedded, monkeypatch):
    root, requests = server
    (root / "a9a.t").write_bytes(a9a_test_text())
    _with_upstream_hash(monkeypatch, "a9a", "test", "0" * 64)
    with pytest.raises((DatasetCorruptError, DatasetNotFoundError)) as ei:
        datasets.load("a9a", "test")
    msg = str(ei.value)
    assert "a9a" in msg and "SHA256" in msg.upper() and "127.0.0.1" in msg
    assert not (env / "a9a.t").exists()


def test_truncated_cache_file_is_redownloaded(env, server, no_embedded):
    root, requests = server
    good = a9a_test_text()
    (root / "a9a.t").write_bytes(good)
    (env / "a9a.t").write_bytes(good[: len(good) // 2].rsplit(b"\n", 1)[0] + b"\n")
    with pytest.warns(RuntimeWarning, match="content SHA-256"):
        X, y = datasets.load("a9a", "test")
    assert requests == ["/a9a.t"]
    assert same_xy((X, y), expected_a9a_test())


def test_truncated_download_is_retried_then_refused(env, server, no_embedded):
    root, requests = server
    good = a9a_test_text()
    (root / "a9a.t").write_bytes(good[:100_000].rsplit(b"\n", 1)[0] + b"\n")
    with pytest.warns(RuntimeWarning, match="checksum mismatch"):
        with pytest.raises(DatasetCorruptError, match="(?s)a9a.*content SHA-256"):
            datasets.load("a9a", "test")
    assert requests == ["/a9a.t", "/a9a.t"]  # one re-download, then a clear error
    assert not (env / "a9a.t").exists()


def test_corrupt_libsvm_text_is_a_clear_error(env, tmp_path, monkeypatch):
    d = tmp_path / "shared"
    d.mkdir()
    (d / "diabetes").write_bytes(b"-1 1:0.5 2:abc\n+1 1:x\n")
    monkeypatch.setenv("SVMLAB_DATA", str(d))
    with pytest.warns(RuntimeWarning, match="not a valid LIBSVM"):
        with pytest.raises(DatasetCorruptError) as ei:
            datasets.load("diabetes")
    msg = str(ei.value)
    assert "diabetes" in msg and str(d / "diabetes") in msg
    with pytest.raises(DatasetCorruptError, match="not a valid LIBSVM"):
        read_libsvm(d / "diabetes", 8)


def test_corrupt_stored_copy_falls_back_to_embedded_with_a_warning(env, tmp_path, monkeypatch):
    d = tmp_path / "shared"
    d.mkdir()
    (d / "a9a.t.xz").write_bytes(lzma.compress(b"garbage\n"))
    monkeypatch.setenv("SVMLAB_DATA", str(d))
    with pytest.warns(RuntimeWarning, match="not a valid LIBSVM.*line 1"):
        X, y = datasets.load("a9a", "test")
    assert same_xy((X, y), expected_a9a_test())


def test_offline_and_absent_names_dataset_file_url_and_directory(env):
    with pytest.raises(DatasetNotFoundError) as ei:
        datasets.load("w8a", "train")
    msg = str(ei.value)
    assert "'w8a'" in msg and "w8a.xz" in msg
    assert "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/w8a" in msg
    assert str(env / "w8a") in msg and "SVMLAB_DATA" in msg


def test_unreachable_server_is_a_not_found_error(env, monkeypatch):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    monkeypatch.setenv("SVMLAB_OFFLINE", "0")
    monkeypatch.setenv("SVMLAB_DOWNLOAD_URL", f"http://127.0.0.1:{port}")
    with pytest.raises(DatasetNotFoundError, match=f"(?s)diabetes.*127.0.0.1:{port}/diabetes"):
        datasets.load("diabetes")


def test_mnist_train_images_missing_is_explained(tmp_path, monkeypatch):
    require_shared_data()
    monkeypatch.setenv("SVMLAB_CACHE", str(tmp_path))
    monkeypatch.setenv("SVMLAB_OFFLINE", "1")
    with pytest.raises(DatasetNotFoundError) as ei:
        datasets.load("mnist", "train")
    msg = str(ei.value)
    assert "train-images-idx3-ubyte.gz" in msg
    assert "https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz" in msg
    assert str(Path(shared_data_dir()) / "mnist") in msg and "fashion-mnist" in msg


def test_bad_names_and_splits():
    with pytest.raises(ValueError, match="unknown dataset"):
        datasets.load("nope")
    with pytest.raises(ValueError, match="no split 'test'.*ratsch-splice"):
        datasets.load("splice", "test")
    for name in datasets.list_datasets():
        text = datasets.describe(name)
        assert len(text) > 80


def test_registry_urls_point_at_original_locations():
    for spec in datasets.REGISTRY.values():
        for files in spec.files.values():
            for fs in files:
                if fs.url is None:
                    continue
                # https only: LIBSVM's own host, PyTorch's MNIST mirror (the
                # files of LeCun's http-only page), Fashion-MNIST's repository
                assert fs.url.startswith((
                    "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/",
                    "https://ossci-datasets.s3.amazonaws.com/mnist/",
                    "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/"))
                assert fs.url.endswith(Path(fs.upstream).name)


# ---------------------------------------------------------------- IDX / helpers

def _write_idx(path, arr, code):
    header = bytes([0, 0, code, arr.ndim]) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
    with gzip.open(path, "wb") as fh:
        fh.write(header + arr.astype(arr.dtype.newbyteorder(">")).tobytes())


def test_idx_reader_roundtrip_and_truncation(tmp_path):
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, size=(7, 4, 3)).astype(np.uint8)
    _write_idx(tmp_path / "i.gz", imgs, 0x08)
    assert np.array_equal(read_idx(tmp_path / "i.gz"), imgs)
    f = rng.standard_normal((5, 2)).astype(np.float32)
    _write_idx(tmp_path / "f.gz", f, 0x0D)
    assert np.array_equal(read_idx(tmp_path / "f.gz"), f)
    raw = gzip.decompress((tmp_path / "i.gz").read_bytes())
    (tmp_path / "t").write_bytes(raw[:-5])
    with pytest.raises(DatasetCorruptError, match="truncated"):
        read_idx(tmp_path / "t")
    (tmp_path / "m").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(DatasetCorruptError, match="magic"):
        read_idx(tmp_path / "m")


def test_one_vs_rest():
    y = np.array([8, 1, 8, 3])
    assert np.array_equal(datasets.one_vs_rest(y, 8), [1.0, -1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="does not occur"):
        datasets.one_vs_rest(y, 9)


# ---------------------------------------------------------------- MANIFEST figures

def _manifest_rows():
    text = (Path(shared_data_dir()) / "MANIFEST.md").read_text()
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 8 and cells[1].startswith("`"):
            rows.append({"file": cells[1].strip("`"), "sha256": cells[2].strip("`"),
                         "n": int(cells[3]), "d": int(cells[4]) if cells[4] else None,
                         "labels": cells[5]})
    return rows


def _label_counts(cell):
    if "each" in cell:  # "10 classes, 6000 each"
        k, each = re.match(r"(\d+) classes, (\d+) each", cell).groups()
        return {i: int(each) for i in range(int(k))}
    return {int(a): int(b) for a, b in re.findall(r"(-?\d+): (\d+)", cell)}


#: MANIFEST file -> (dataset, split, part): part 0 = data/images, 1 = labels
_FILE_TO_LOAD = {
    "a9a.xz": ("a9a", "train"), "a9a.t.xz": ("a9a", "test"),
    "w8a.xz": ("w8a", "train"), "w8a.t.xz": ("w8a", "test"),
    "ijcnn1.bz2": ("ijcnn1", "train"), "ijcnn1.t.bz2": ("ijcnn1", "test"),
    "diabetes.xz": ("diabetes", "all"), "splice_scale.xz": ("splice", "train"),
    "ratsch_banana.xz": ("banana", "all"), "ratsch_splice.xz": ("ratsch-splice", "all"),
    "mnist/t10k-images-idx3-ubyte.gz": ("mnist", "test"),
    "mnist/t10k-labels-idx1-ubyte.gz": ("mnist", "test"),
    "fashion-mnist/train-images-idx3-ubyte.gz": ("fashion-mnist", "train"),
    "fashion-mnist/train-labels-idx1-ubyte.gz": ("fashion-mnist", "train"),
    "fashion-mnist/t10k-images-idx3-ubyte.gz": ("fashion-mnist", "test"),
    "fashion-mnist/t10k-labels-idx1-ubyte.gz": ("fashion-mnist", "test"),
}


def test_shared_files_match_manifest(monkeypatch):
    """sha256 of every stored file, and the shapes/label counts load() gives, vs MANIFEST.md."""
    require_shared_data()
    monkeypatch.setenv("SVMLAB_OFFLINE", "1")
    d = Path(shared_data_dir())
    rows = _manifest_rows()
    assert len(rows) >= 16
    checked = set()
    for row in rows:
        path = d / row["file"]
        assert sha256(path) == row["sha256"], row["file"]
        if row["file"] == "mnist/train-labels-idx1-ubyte.gz":
            lab = read_idx(path)  # the training images are missing: check labels alone
            assert lab.shape == (row["n"],)
            vals, cnt = np.unique(lab, return_counts=True)
            assert dict(zip(vals.tolist(), cnt.tolist())) == _label_counts(row["labels"])
            continue
        name, split = _FILE_TO_LOAD[row["file"]]
        assert (name, split) in {(n, s) for n, s in _FILE_TO_LOAD.values()}
        if (name, split) in checked and "labels" not in row["file"]:
            continue
        X, y = datasets.load(name, split)
        assert X.shape[0] == row["n"], row["file"]
        if row["d"] is not None:
            if datasets.get_spec(name).kind == "libsvm":
                assert X.shape[1] >= row["d"]  # d in MANIFEST = largest index used
                assert X.shape[1] == datasets.get_spec(name).n_features
                # the largest index used equals MANIFEST's d (a9a.t: 122)
                assert X.indices.max() + 1 == row["d"], row["file"]
            else:
                assert X.shape[1] == row["d"]
        if row["labels"]:
            vals, cnt = np.unique(y, return_counts=True)
            assert dict(zip([int(v) for v in vals], cnt.tolist())) == _label_counts(row["labels"])
        checked.add((name, split))
    assert len(checked) == len(set(_FILE_TO_LOAD.values()))


def test_shared_libsvm_files_parse_identically_with_sklearn(monkeypatch):
    require_shared_data()
    d = Path(shared_data_dir())
    for fname, (name, split) in [("w8a.t.xz", ("w8a", "test")), ("diabetes.xz", ("diabetes", "all"))]:
        Xe, ye = sk_parse(d / fname, datasets.get_spec(name).n_features)
        X, y = datasets.load(name, split)
        assert (X != Xe).nnz == 0 and np.array_equal(y, ye)
    Xe, ye = load_svmlight_file(str(d / "ijcnn1.bz2"), n_features=22)
    X, y = datasets.load("ijcnn1", "train")
    assert abs(X - Xe).max() == 0 and np.array_equal(y, ye)


def test_embedded_files_are_the_shared_ones():
    require_shared_data()
    for f in ("a9a.xz", "a9a.t.xz"):
        assert sha256(EMBEDDED / f) == sha256(Path(shared_data_dir()) / f)


def test_images_and_our_splits(monkeypatch):
    require_shared_data()
    X, y = datasets.load("mnist", "test")
    raw = read_idx(Path(shared_data_dir()) / "mnist/t10k-images-idx3-ubyte.gz")
    assert X.shape == (10000, 784) and X.dtype == np.float64
    assert np.array_equal(X, raw.reshape(10000, -1) / 255.0)
    assert y.dtype == np.int64 and int((datasets.one_vs_rest(y, 8) == 1).sum()) == 974
    # banana: our deterministic 400/4900 split partitions the 5300-point pool
    Xa, ya = datasets.load("banana", "all")
    Xtr, ytr = datasets.load("banana", "train")
    Xte, yte = datasets.load("banana", "test")
    assert Xtr.shape == (400, 2) and Xte.shape == (4900, 2)
    key = lambda X, y: {tuple(r) + (l,) for r, l in zip(X.toarray().tolist(), y.tolist())}
    assert key(Xtr, ytr) | key(Xte, yte) == key(Xa, ya)
    assert not key(Xtr, ytr) & key(Xte, yte)
    assert same_xy(datasets.load("banana", "train"), (Xtr, ytr))  # deterministic
    Xs, _ = datasets.load("ratsch-splice", "train")
    assert Xs.shape == (1000, 60)


def test_covtype_and_rcv1_offline_errors(env):
    with pytest.raises(DatasetNotFoundError, match="(?s)covtype.*multiclass/covtype.bz2"):
        datasets.load("covtype")
    with pytest.raises(DatasetNotFoundError, match="rcv1-ccat"):
        datasets.load("rcv1-ccat")


# ---------------------------------------------------------------- generators

def test_gauss_m():
    X, y = datasets.gauss_m(4000, random_state=3)
    assert X.shape == (4000, 2) and np.sum(y == 1) == 2000
    d = X[y == 1].mean(0) - X[y == -1].mean(0)
    assert abs(np.linalg.norm(d) - 1.0) < 0.15  # means 1 apart: highly overlapping
    assert np.allclose(np.cov(X[y == 1].T), np.eye(2), atol=0.12)
    X2, y2 = datasets.gauss_m(4000, random_state=3)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    # overlap: the Bayes-optimal linear rule still errs on ~31% of the points
    err = np.mean(np.sign(X @ d) != y)
    assert 0.25 < err < 0.37
    assert same_xy_dense(datasets.load("gauss-m"), datasets.gauss_m(4000, random_state=0))


def same_xy_dense(a, b):
    return np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


@pytest.mark.parametrize("kind", ["blobs", "moons", "xor", "duplicates"])
def test_toy_2d(kind):
    from sklearn.svm import SVC

    X, y = datasets.toy_2d(kind, n=40, random_state=1)
    assert X.shape == (40, 2) and set(np.unique(y)) == {-1.0, 1.0}
    assert same_xy_dense((X, y), datasets.toy_2d(kind, n=40, random_state=1))
    lin = SVC(kernel="linear", C=1e3).fit(X, y).score(X, y)
    if kind == "blobs":
        assert lin == 1.0
    if kind == "xor":
        assert lin < 0.8 and SVC(kernel="rbf", C=100, gamma=1).fit(X, y).score(X, y) == 1.0
    if kind == "duplicates":
        rows = [tuple(r) for r in X.tolist()]
        assert len(set(rows)) < len(rows)
        conflict = any(y[i] != y[j] for i in range(40) for j in range(i) if rows[i] == rows[j])
        assert conflict


def test_sparse_text_scales_and_is_learnable():
    from sklearn.svm import LinearSVC

    X, y = datasets.sparse_text(200_000, 20_000, 30, random_state=0)
    assert sp.isspmatrix_csr(X) and X.shape == (200_000, 20_000)
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32 and X.has_canonical_format
    assert np.allclose(np.sqrt(X.multiply(X).sum(1)).A.ravel(), 1.0)
    assert 20 < X.nnz / X.shape[0] < 35
    df = np.sort(np.diff(X.tocsc().indptr))[::-1]
    assert df[0] > 50 * np.median(df)  # Zipf: a few very frequent words, a long tail
    assert 0.4 < np.mean(y == 1) < 0.6
    # labels follow a hidden linear model: learnable far above chance (5% flipped)
    Xs, ys = datasets.sparse_text(20_000, 2_000, 30, random_state=1)
    acc = LinearSVC(C=1.0).fit(Xs[:15000], ys[:15000]).score(Xs[15000:], ys[15000:])
    assert acc > 0.8
    X2, _ = datasets.sparse_text(1000, 500, 10, random_state=5)
    X3, _ = datasets.sparse_text(1000, 500, 10, random_state=5)
    assert (X2 != X3).nnz == 0
