"""Dataset files that change under the reader, padded compressed files and
headers numpy cannot hold (issue 33, items 10-12).

The expected data are parsed here from the shared files by the standard
library and scikit-learn, never by svmlab.  The swap is made deterministic by
a hook on ``open``: the file at the path is replaced right after svmlab
opens it, which is the moment a reader that opens the file twice (once to
parse, once to hash) can be fooled.
"""

from __future__ import annotations

import bz2
import builtins
import dataclasses
import gzip
import io
import lzma
import os
import shutil
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.datasets import load_svmlight_file

from svmlab import datasets
from svmlab.datasets import DatasetCorruptError
from svmlab.datasets import _parse
from svmlab.datasets._parse import read_idx

from _limits import run_limited
from conftest import require_shared_data, shared_data_dir
from test_datasets import env, server  # noqa: F401

SHARED = shared_data_dir()     # read before the env fixture removes SVMLAB_DATA


def _need_shared():
    if SHARED is None:
        require_shared_data()


def _diabetes_files(tmp_path):
    """(genuine diabetes.xz, tampered copy, genuine (X, y)): the copy has one
    feature value of the first row changed, same rows and labels."""
    _need_shared()
    genuine = Path(SHARED) / "diabetes.xz"
    text = lzma.decompress(genuine.read_bytes())
    first, rest = text.split(b"\n", 1)
    toks = first.split()
    idx, val = toks[-1].split(b":")
    toks[-1] = idx + b":" + repr(float(val) + 1.0).encode()
    tampered_text = b" ".join(toks) + b"\n" + rest
    tampered = tmp_path / "tampered.xz"
    tampered.write_bytes(lzma.compress(tampered_text))
    X, y = load_svmlight_file(io.BytesIO(text), n_features=8)
    Xt, _ = load_svmlight_file(io.BytesIO(tampered_text), n_features=8)
    assert (X != Xt).nnz == 1
    return genuine, tampered, (X.toarray(), y)


def _swap_after_first_open(monkeypatch, target, replacement):
    """From now on, the first ``open`` of ``target`` returns the file there
    and then atomically replaces it by a copy of ``replacement``."""
    real_open = builtins.open
    state = {"swapped": False}
    spare = Path(str(target) + ".spare")
    shutil.copyfile(replacement, spare)

    def hooked(file, *args, **kwargs):
        fh = real_open(file, *args, **kwargs)
        if not state["swapped"] and isinstance(file, (str, os.PathLike)) \
                and os.path.abspath(os.fspath(file)) == os.path.abspath(target):
            state["swapped"] = True
            os.replace(spare, target)
        return fh

    monkeypatch.setattr(builtins, "open", hooked)
    return state


@pytest.mark.parametrize("where", ["SVMLAB_DATA", "cache"])
def test_a_file_swapped_after_it_is_opened_is_never_accepted(env, tmp_path, monkeypatch, where):
    """Item 10: the tampered file is at the path when svmlab opens it, the
    genuine one right after.  A reader that hashes a second open would see the
    genuine file's checksum and return the tampered data; one read must
    refuse (the bytes it parsed are the tampered ones)."""
    genuine, tampered, (X, y) = _diabetes_files(tmp_path)
    if where == "SVMLAB_DATA":
        folder = tmp_path / "shared"
        folder.mkdir()
        monkeypatch.setenv("SVMLAB_DATA", str(folder))
    else:
        folder = env
    target = folder / "diabetes.xz"
    shutil.copyfile(tampered, target)
    state = _swap_after_first_open(monkeypatch, target, genuine)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(DatasetCorruptError, match="checksum mismatch"):
            datasets.load("diabetes", download=False)
    assert state["swapped"]
    monkeypatch.setattr(builtins, "open", io.open)
    # the file now at the path is the genuine one; it loads (the cache's
    # refused copy was moved aside, so put the genuine one back there)
    if where == "cache":
        shutil.copyfile(genuine, target)
    Xg, yg = datasets.load("diabetes", download=False)
    np.testing.assert_array_equal(Xg.toarray(), X)
    np.testing.assert_array_equal(yg, y)


def test_a_file_flipped_between_genuine_and_tampered_never_returns_tampered_data(
        env, tmp_path, monkeypatch):
    """Item 10, the issue's reproducer in small: a thread flips a symlink
    between the genuine and the tampered file (renames every 2 ms) while
    ``load`` runs 40 times (memory cache cleared each time).  Every load
    returns the genuine data or refuses; the number of loads is fixed, the
    time is not asserted."""
    genuine, tampered, (X, y) = _diabetes_files(tmp_path)
    folder = tmp_path / "shared"
    folder.mkdir()
    monkeypatch.setenv("SVMLAB_DATA", str(folder))
    link = folder / "diabetes.xz"
    os.symlink(genuine, link)
    stop = threading.Event()

    def flipper():
        i = 0
        while not stop.is_set():
            tmp = folder / f"next{i % 2}"
            os.symlink(tampered if i % 2 == 0 else genuine, tmp)
            os.replace(tmp, link)
            i += 1
            time.sleep(0.002)

    t = threading.Thread(target=flipper, daemon=True)
    t.start()
    outcomes = {"genuine": 0, "refused": 0}
    try:
        for _ in range(40):
            datasets.clear_memory_cache()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                try:
                    Xg, yg = datasets.load("diabetes", download=False)
                except DatasetCorruptError:
                    outcomes["refused"] += 1
                    continue
            assert np.array_equal(Xg.toarray(), X) and np.array_equal(yg, y), \
                "tampered data returned"
            outcomes["genuine"] += 1
    finally:
        stop.set()
        t.join()
    assert sum(outcomes.values()) == 40


# --------------------------------------------------- item 11: gzip padding

def _mnist_dir(tmp_path, labels_bytes):
    """An SVMLAB_DATA folder with MNIST's genuine test images and the given
    test-labels file."""
    _need_shared()
    d = tmp_path / "shared"
    (d / "mnist").mkdir(parents=True)
    os.symlink(Path(SHARED) / "mnist" / "t10k-images-idx3-ubyte.gz",
               d / "mnist" / "t10k-images-idx3-ubyte.gz")
    (d / "mnist" / "t10k-labels-idx1-ubyte.gz").write_bytes(labels_bytes)
    return d


def _genuine_labels():
    return (Path(SHARED) / "mnist" / "t10k-labels-idx1-ubyte.gz").read_bytes()


def test_gzip_with_zero_padding_is_refused_quickly(env, tmp_path, monkeypatch):
    """Item 11: a genuine labels file with 2 MiB of zero padding (its
    content hash still matches) was accepted after Python's gzip module
    skipped the zeros one at a time.  It is now refused as a
    DatasetCorruptError: beyond max_bytes with the registry's cap, as
    trailing data with a cap large enough to read it all."""
    _need_shared()
    padded = _genuine_labels() + bytes(2 << 20)
    monkeypatch.setenv("SVMLAB_DATA", str(_mnist_dir(tmp_path, padded)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(DatasetCorruptError, match="larger than max_bytes"):
            datasets.load("mnist", "test", download=False)
        with pytest.raises(DatasetCorruptError, match="trailing data after the gzip data"):
            datasets.load("mnist", "test", download=False, max_bytes=1 << 24)


def test_sparse_64_mib_padding_costs_a_bounded_read(tmp_path):
    """Item 11 at the issue's size: 64 MiB of (sparse) zeros behind the
    genuine member, read with a cap that admits them, in a subprocess with 20
    CPU seconds (the unfixed reader needed 167 s).  Refused as trailing
    data; and with the registry's cap after reading at most that cap."""
    _need_shared()
    path = tmp_path / "t10k-labels-idx1-ubyte.gz"
    g = _genuine_labels()
    with open(path, "wb") as f:
        f.write(g)
        f.truncate(len(g) + (64 << 20))
    out = run_limited(f"""
        from svmlab.datasets._parse import read_idx, DatasetCorruptError
        msgs = []
        for cap in ({1 << 27}, {2 * 10008 + (1 << 20)}):
            try:
                read_idx({str(path)!r}, max_bytes=cap)
                msgs.append("accepted")
            except DatasetCorruptError as exc:
                msgs.append(str(exc))
        result = msgs
        """, cpu_s=20, extra_mb=1024)
    assert out["outcome"] == "ok", out
    assert "trailing data" in out["result"][0]
    assert "larger than max_bytes" in out["result"][1]


# ----------------------------------------- item 12: every error is corrupt

def _hundred_dim_header():
    """The issue's 31-byte file: a gzipped IDX header claiming 100
    dimensions (all of size 0, so the sizes agree and only numpy's limit on
    dimensions stops it)."""
    data = gzip.compress(b"\x00\x00\x08\x64" + bytes(400), mtime=0)
    assert len(data) < 40
    return data


def test_idx_header_beyond_numpys_dimensions_is_a_corrupt_file(tmp_path):
    path = tmp_path / "h.gz"
    path.write_bytes(_hundred_dim_header())
    with pytest.raises(DatasetCorruptError, match="100 dimensions"):
        read_idx(path)


def _no_upstream_hash(monkeypatch):
    """MNIST's files checked by content (the test server serves the shared,
    re-gzipped copies, whose bytes differ from the original download)."""
    spec = datasets.REGISTRY["mnist"]
    files = {part: tuple(dataclasses.replace(fs, upstream_sha256=None, upstream_md5=None)
                         for fs in fss) for part, fss in spec.files.items()}
    monkeypatch.setitem(datasets.REGISTRY, "mnist", dataclasses.replace(spec, files=files))


def test_a_cache_file_numpy_cannot_shape_is_moved_aside_and_the_next_source_used(
        env, server, monkeypatch):
    """Item 12: the 31-byte header in the cache raised a plain ValueError on
    every load.  Now it is a DatasetCorruptError: moved aside to .corrupt,
    and the next source (a download from the test server) is used."""
    _need_shared()
    www, requests = server
    (www / "mnist").mkdir()
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        shutil.copyfile(Path(SHARED) / "mnist" / name, www / "mnist" / name)
    _no_upstream_hash(monkeypatch)
    bad = env / "mnist" / "t10k-labels-idx1-ubyte.gz"
    bad.parent.mkdir()
    bad.write_bytes(_hundred_dim_header())
    with pytest.warns(RuntimeWarning, match="100 dimensions.*moved it to"):
        X, y = datasets.load("mnist", "test")
    assert (env / "mnist" / "t10k-labels-idx1-ubyte.gz.corrupt").read_bytes() == \
        _hundred_dim_header()
    want = np.frombuffer(gzip.decompress(_genuine_labels()), np.uint8, offset=8)
    np.testing.assert_array_equal(y, want)
    assert X.shape == (10000, 784)
    assert "/mnist/t10k-labels-idx1-ubyte.gz" in requests


# ------------------------------------ the fuzz suite: compressed stream layouts

def _compress(kind, data):
    return {"gzip": lambda d: gzip.compress(d, mtime=0), "xz": lzma.compress,
            "bz2": bz2.compress}[kind](data)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(kind=st.sampled_from(["gzip", "xz", "bz2"]),
       parts=st.lists(st.binary(max_size=300), min_size=1, max_size=3),
       tail=st.sampled_from(["none", "zeros", "garbage", "cut", "bomb"]),
       n_tail=st.integers(1, 2000))
def test_fuzz_stream_layouts(kind, parts, tail, n_tail):
    """New kinds of input for the fuzz suite (decision 2405): one to three
    concatenated streams, then nothing, zero padding, garbage, a cut, or
    more output than the cap.  The oracle is the construction: concatenated
    complete streams decompress to the concatenated parts; anything else is
    a DatasetCorruptError."""
    raw = b"".join(_compress(kind, p) for p in parts)
    want = b"".join(parts)
    cap = 1 << 16
    if tail == "zeros":
        raw += bytes(n_tail)
    elif tail == "garbage":
        raw += bytes((7 + 13 * i) % 256 or 1 for i in range(n_tail))
    elif tail == "cut":             # within the last stream, never at its start
        last = len(_compress(kind, parts[-1]))
        raw = raw[:len(raw) - 1 - n_tail % (last - 1)]
    elif tail == "bomb":
        raw += _compress(kind, bytes(cap + 1))
    if tail == "none":
        assert _parse.decompress(raw, kind, cap, "f") == want
    else:
        with pytest.raises(DatasetCorruptError, match="^f: "):
            _parse.decompress(raw, kind, cap, "f")
