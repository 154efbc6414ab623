"""Dataset files from untrusted sources (issue 24, item 5; issue 23's a9a).

Each reproducer of the issue, with the expected outcome computed here from
the files themselves (numpy, gzip, lzma, hashlib, scikit-learn), never
taken from svmlab.  Decompression bombs run in a subprocess under CPU and
address-space limits (:mod:`_limits`), so that a regression fails the test
instead of exhausting the machine.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import hashlib
import io
import logging
import lzma
import socket
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from svmlab import datasets
from svmlab.datasets import DatasetCorruptError, DatasetNotFoundError
from svmlab.datasets._parse import libsvm_content_sha256, read_idx, read_libsvm

from _limits import run_limited
from conftest import require_shared_data, shared_data_dir
from test_datasets import EMBEDDED, a9a_test_text, env, expected_a9a_test, same_xy, server  # noqa: F401


def _tampered(text, skip=0):
    """a9a.t with one feature of one line changed (3 -> 4, the same one-hot
    group, so the line stays valid): same rows, same labels, other data."""
    lines = text.splitlines(keepends=True)
    hits = [i for i, ln in enumerate(lines) if b" 3:1 " in ln]
    i = hits[skip]
    lines[i] = lines[i].replace(b" 3:1 ", b" 4:1 ", 1)
    assert b" 4:1 4:1 " not in lines[i]
    return b"".join(lines)


def _without_embedded(monkeypatch, name="a9a"):
    spec = datasets.REGISTRY[name]
    files = {part: tuple(dataclasses.replace(fs, embedded=None) for fs in fss)
             for part, fss in spec.files.items()}
    monkeypatch.setitem(datasets.REGISTRY, name, dataclasses.replace(spec, files=files))


# ------------------------------------------- a9a: embedded, never the network

def test_a9a_loads_without_any_network_attempt_or_output(env, monkeypatch, capsys, caplog):
    """Issue 23: the notebooks load a9a; with downloads allowed and no
    network, nothing may try to connect or print (pooch's red "Downloading
    data from ..." included)."""
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network disabled by the test")

    monkeypatch.setenv("SVMLAB_OFFLINE", "0")
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    caplog.set_level(logging.DEBUG)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Xtr, ytr = datasets.load("a9a")
        Xte, yte = datasets.load("a9a", "test")
    assert attempts == []
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    assert [r.getMessage() for r in caplog.records] == []
    assert Xtr.shape == (32561, 123) and int((ytr == 1).sum()) == 7841
    assert same_xy((Xte, yte), expected_a9a_test())
    assert datasets.locate("a9a", "test") == [("embedded", EMBEDDED / "a9a.t.xz")]


def test_corrupt_cached_a9a_with_index_2_31_does_not_block_loading(env):
    # unfixed: OverflowError from the cache, the embedded copy never reached
    good = a9a_test_text()
    (env / "a9a.t").write_bytes(good.replace(b" 3:1 ", b" 2147483648:1 ", 1))
    assert same_xy(datasets.load("a9a", "test"), expected_a9a_test())


def test_tampered_cached_a9a_with_the_same_counts_never_wins(env):
    # unfixed: a cached copy with the right row and label counts was used,
    # in preference to the checksummed embedded copy
    (env / "a9a.t").write_bytes(_tampered(a9a_test_text()))   # same counts, other data
    X, y = datasets.load("a9a", "test")
    assert same_xy((X, y), expected_a9a_test())


def test_corrupt_cache_file_is_moved_aside_and_loading_goes_on(env, server, monkeypatch):
    # a9a without its embedded copy: the cache is the first candidate
    _without_embedded(monkeypatch)
    root, requests = server
    good = a9a_test_text()
    (root / "a9a.t").write_bytes(good)
    bad = good.replace(b" 3:1 ", b" 2147483648:1 ", 1)
    (env / "a9a.t").write_bytes(bad)
    with pytest.warns(RuntimeWarning, match=r"(?s)line \d+: feature index 2147483648.*moved it"):
        X, y = datasets.load("a9a", "test")
    assert same_xy((X, y), expected_a9a_test())
    assert requests == ["/a9a.t"]
    assert (env / "a9a.t.corrupt").read_bytes() == bad


def test_tampered_cache_with_the_same_counts_fails_its_checksum(env, monkeypatch):
    _without_embedded(monkeypatch)
    (env / "a9a.t").write_bytes(_tampered(a9a_test_text(), 5))
    # the counts the registry checks are those of the genuine file
    X, y = load_svmlight_file(env / "a9a.t", n_features=123)
    assert X.shape[0] == 16281 and int((y == 1).sum()) == 3846
    with pytest.warns(RuntimeWarning, match="content SHA-256"):
        with pytest.raises(DatasetCorruptError, match="content SHA-256"):
            datasets.load("a9a", "test")
    assert not (env / "a9a.t").exists() and (env / "a9a.t.corrupt").exists()


def test_tampered_download_is_refused(env, server, monkeypatch):
    # LIBSVM downloads are checked against the registry's SHA-256 (here the
    # content checksum of a9a.t); unfixed: counts only
    _without_embedded(monkeypatch)
    root, requests = server
    (root / "a9a.t").write_bytes(_tampered(a9a_test_text(), 7))
    with pytest.warns(RuntimeWarning, match="content SHA-256"):
        with pytest.raises(DatasetCorruptError, match="content SHA-256"):
            datasets.load("a9a", "test")
    assert requests == ["/a9a.t", "/a9a.t"]     # downloaded once more, then refused
    assert not (env / "a9a.t").exists()


# -------------------------------------------------- every error, one class

def _corrupt_stream(data):
    out = bytearray(data)
    mid = len(out) // 2
    out[mid:mid + 64] = bytes((b ^ 0x5A) for b in out[mid:mid + 64])
    return bytes(out)


def test_damaged_gzip_and_xz_are_dataset_corrupt_errors_with_offsets(tmp_path):
    rng = np.random.default_rng(0)
    payload = rng.integers(0, 256, size=(300, 28, 28)).astype(np.uint8)
    raw = bytes([0, 0, 8, 3]) + struct.pack(">3I", 300, 28, 28) + payload.tobytes()
    (tmp_path / "i.gz").write_bytes(_corrupt_stream(gzip.compress(raw)))
    with pytest.raises(DatasetCorruptError, match=r"i\.gz: cannot decompress the gzip data "
                                                  r"near compressed byte \d+"):
        read_idx(tmp_path / "i.gz")
    text = b"".join(b"%d 1:%d 2:0.5\n" % (i % 2 * 2 - 1, i) for i in range(20000))
    (tmp_path / "d.xz").write_bytes(_corrupt_stream(lzma.compress(text)))
    with pytest.raises(DatasetCorruptError, match=r"d\.xz: cannot decompress the xz data.*"
                                                  r"LZMAError"):
        read_libsvm(tmp_path / "d.xz", 2)
    (tmp_path / "c.xz").write_bytes(lzma.compress(text)[:-40])        # cut off
    with pytest.raises(DatasetCorruptError, match=r"c\.xz: cannot decompress"):
        read_libsvm(tmp_path / "c.xz", 2)


@pytest.mark.parametrize("raw,match", [
    (b"\x00\x00\x08", "cut-off IDX header: 3 bytes"),
    (b"\x00\x00\x08\x03" + struct.pack(">2I", 10, 28), "3 dimensions need 16 header bytes"),
    (b"\x00\x00\x08\x00", "0 dimensions"),
    # 2^31 * 2^31 * 4 overflows int64 to 0: an empty payload must not pass
    (b"\x00\x00\x08\x03" + struct.pack(">3I", 2**31, 2**31, 4), r"says 18446744073709551616"),
    (b"\x00\x00\x07\x01" + struct.pack(">I", 1) + b"\x00", "bad magic number 00000701"),
])
def test_idx_header_damage_is_a_dataset_corrupt_error(tmp_path, raw, match):
    (tmp_path / "f").write_bytes(raw)
    with pytest.raises(DatasetCorruptError, match=match):
        read_idx(tmp_path / "f")


def test_index_zero_is_an_error_not_a_shift(tmp_path):
    # unfixed: scikit-learn's zero_based="auto" shifted every feature of the file
    (tmp_path / "z").write_bytes(b"1 1:1 3:2\n-1 0:4 2:1\n1 2:5\n")
    with pytest.raises(DatasetCorruptError, match=r"z: .*line 2: feature index 0 in a "
                                                  r"one-based file"):
        read_libsvm(tmp_path / "z", 3)
    (tmp_path / "ok").write_bytes(b"1 1:1 3:2\n-1 2:1\n")
    X, y = read_libsvm(tmp_path / "ok", 3)
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 2], [0, 1, 0]])


@pytest.mark.parametrize("line,reason", [
    (b"1 2147483648:1", "feature index 2147483648 is beyond the 5 features"),
    (b"1 99999999999999999999999:1", "feature index 99999999999999999999999 is beyond"),
    (b"1 2:nan", "value nan is not finite"),
    (b"1 2:1e400", "value 1e400 is not finite"),
    (b"inf 2:1", "label 'inf' is not a finite number"),
    (b"1 3:1 2:1", "feature indices must increase"),
    (b"1 2:x", "value 'x' is not a number"),
    (b"1 2", "'2' is not index:value"),
])
def test_bad_lines_name_the_file_and_line(tmp_path, line, reason):
    (tmp_path / "f").write_bytes(b"1 1:1\n-1 2:1\n" + line + b"\n")
    with pytest.raises(DatasetCorruptError) as ei:
        read_libsvm(tmp_path / "f", 5)
    assert f"{tmp_path / 'f'}" in str(ei.value) and f"line 3: {reason}" in str(ei.value)


# -------------------------------------------------------- decompression bombs

def _gzip_bomb(path, gib=1):
    member = gzip.compress(bytes(16 << 20), compresslevel=9)     # 16 MiB of zeros
    path.write_bytes(member * (64 * gib))                        # concatenated members


def _bz2_libsvm_bomb(path, mib=320):
    chunk = bz2.compress(b"1 1:1 2:1\n" * ((8 << 20) // 10))       # 8 MiB of valid lines
    path.write_bytes(chunk * (mib // 8))                         # concatenated streams


def test_gzip_bomb_is_refused_quickly_and_small(env, tmp_path):
    # unfixed: the whole expansion was read (143 s, 785 MB in the issue)
    cache = env
    (cache / "mnist").mkdir()
    _gzip_bomb(cache / "mnist" / "t10k-images-idx3-ubyte.gz")
    size = (cache / "mnist" / "t10k-images-idx3-ubyte.gz").stat().st_size
    assert size < 2 << 20 and gzip.GzipFile(cache / "mnist" / "t10k-images-idx3-ubyte.gz").read(
        1 << 20) == bytes(1 << 20)
    out = run_limited(
        """
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                datasets.load("mnist", "test")
            except datasets.DatasetCorruptError as exc:
                result = [str(exc), [str(x.message) for x in w]]
        """,
        imports="from svmlab import datasets", cpu_s=60, extra_mb=512,
        env={"SVMLAB_CACHE": str(cache), "SVMLAB_OFFLINE": "1", "SVMLAB_DATA": ""})
    assert out["outcome"] == "ok" and out["result"], out
    msg, warned = out["result"]
    assert "more than max_bytes=16728608" in msg and "decompression bomb" in msg
    assert any("moved it to" in w for w in warned)
    assert (cache / "mnist" / "t10k-images-idx3-ubyte.gz.corrupt").exists()


def test_bz2_libsvm_bomb_is_refused_and_the_cap_is_a_keyword(env, tmp_path):
    _bz2_libsvm_bomb(env / "ijcnn1.bz2")
    out = run_limited(
        """
        try:
            datasets.load("ijcnn1")
        except datasets.DatasetCorruptError as exc:
            result = str(exc)
        """,
        imports="import warnings\nwarnings.simplefilter('ignore')\nfrom svmlab import datasets",
        cpu_s=60, extra_mb=512,
        env={"SVMLAB_CACHE": str(env), "SVMLAB_OFFLINE": "1", "SVMLAB_DATA": ""})
    assert out["outcome"] == "ok" and out["result"], out
    assert "more than max_bytes=16738330" in out["result"]
    # the keyword overrides the registry's cap
    (env / "ijcnn1.bz2").write_bytes(bz2.compress(b"1 1:1\n" * 1000))
    with pytest.warns(RuntimeWarning, match="more than max_bytes=100 "):
        with pytest.raises(DatasetCorruptError):
            datasets.load("ijcnn1", max_bytes=100)


# ------------------------------------------------------------- the registry

def test_every_file_carries_a_sha256_or_a_documented_exception():
    for spec in datasets.REGISTRY.values():
        for fss in spec.files.values():
            for fs in fss:
                if spec.name == "covtype":      # no copy could be hashed: see its notes
                    assert fs.hashes == [] and "No SHA-256" in spec.notes
                    continue
                assert fs.hashes, (spec.name, fs.upstream)
                assert all(len(h) == 64 and int(h, 16) >= 0 for h in fs.hashes)
                if fs.url is not None:   # a download is checked by the file or its content
                    assert fs.upstream_sha256 or fs.content_sha256
                assert fs.max_bytes is not None and fs.max_bytes > 0
    # rcv1-ccat comes through scikit-learn's fetch_rcv1, which checks SHA-256 itself
    assert datasets.REGISTRY["rcv1-ccat"].files == {}


def _independent_content_hash(X, y):
    """The content checksum, written again from its definition: rows
    (float64 label, int32 indices, float64 values; zeros dropped) sorted as
    byte strings, each prefixed with its length, after the shape."""
    X = sp.csr_matrix(X)
    rows = []
    for i in range(X.shape[0]):
        r = X.getrow(i)
        keep = r.data != 0
        order = np.argsort(r.indices[keep])
        rows.append(struct.pack("<d", float(y[i])) + r.indices[keep][order].astype("<i4").tobytes()
                    + r.data[keep][order].astype("<f8").tobytes())
    h = hashlib.sha256(b"svmlab-libsvm-1" + struct.pack("<2q", *X.shape))
    for k in sorted(rows):
        h.update(struct.pack("<q", len(k)) + k)
    return h.hexdigest()


def test_content_checksum_ignores_text_form_and_row_order():
    a = b"-1 1:0.5 3:1\n+1 2:2\n1 1:0 2:1.0\n"
    b = b"1.0 2:2.000\n1 2:1e0\n-1.0 1:5e-1 3:1 \n\n"
    Xa, ya = load_svmlight_file(io.BytesIO(a), n_features=3)
    Xb, yb = load_svmlight_file(io.BytesIO(b), n_features=3)
    assert libsvm_content_sha256(Xa, ya) == libsvm_content_sha256(Xb, yb)
    assert libsvm_content_sha256(Xa, ya) == _independent_content_hash(Xa, ya)
    Xc = Xa.copy()
    Xc.data[0] = 0.25
    assert libsvm_content_sha256(Xc, ya) != libsvm_content_sha256(Xa, ya)


def test_registry_checksums_are_those_of_the_shared_files():
    require_shared_data()
    d = Path(shared_data_dir())
    checked = 0
    for spec in datasets.REGISTRY.values():
        for fss in spec.files.values():
            for fs in fss:
                if fs.stored is None or not (d / fs.stored).exists():
                    continue
                raw = (lzma.open if fs.stored.endswith(".xz") else
                       bz2.open if fs.stored.endswith(".bz2") else gzip.open)(d / fs.stored).read()
                if spec.kind == "libsvm":
                    X, y = load_svmlight_file(io.BytesIO(raw), n_features=spec.n_features)
                    want = _independent_content_hash(X, y)
                else:
                    want = hashlib.sha256(raw).hexdigest()
                assert fs.content_sha256 == want, fs.stored
                assert fs.max_bytes >= 2 * len(raw)
                checked += 1
    assert checked == 17
    # a9a: MANIFEST says the stored text is LIBSVM's file byte for byte
    raw = lzma.open(d / "a9a.xz").read()
    assert datasets.REGISTRY["a9a"].files["train"][0].upstream_sha256 == \
        hashlib.sha256(raw).hexdigest() and len(raw) == 2329875


def test_file_without_a_known_checksum_is_used_with_a_warning(env, monkeypatch):
    # covtype has no SHA-256 (decision in its registry notes): content only
    spec = datasets.REGISTRY["covtype"]
    fs = dataclasses.replace(spec.files["all"][0], n_samples=4)
    monkeypatch.setitem(datasets.REGISTRY, "covtype",
                        dataclasses.replace(spec, files={"all": (fs,)}))
    (env / "covtype.bz2").write_bytes(bz2.compress(b"1 1:1\n2 3:1\n7 54:2\n1 2:1\n"))
    with pytest.warns(RuntimeWarning, match="no known SHA-256"):
        X, y = datasets.load("covtype", "all")
    np.testing.assert_array_equal(y, [1, -1, -1, 1])
    assert X.shape == (4, 54)


def test_max_bytes_keyword_is_validated(env):
    with pytest.raises(ValueError, match="max_bytes must be None or a non-negative integer"):
        datasets.load("a9a", max_bytes=-5)
