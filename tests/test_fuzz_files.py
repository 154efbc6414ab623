"""Fuzzing the readers of untrusted files: LIBSVM model files (svmlab.io)
and dataset files (svmlab.datasets), issue 24.

Hypothesis mutates valid files -- truncation, huge numbers, NaN and
infinity, negative counts, huge indices, wrong counts, random bytes,
deleted and repeated lines, flipped bytes, inside the compressed stream
too -- and every case must end in

* a clean error (``ValueError``; ``DatasetCorruptError`` for dataset
  files), or
* a correct result: what an independent reader written here from the
  format's definition gets from the same bytes (for model files: the same
  accept/refuse decision, and the same decision values and vote),

within resource bounds checked in a way that cannot make CI flaky:

* memory: every case runs under ``tracemalloc``; its peak must stay below
  ``64 x (file size) + 8 MiB``, and the whole test runs with an
  address-space limit of 1 GiB above what is mapped at its start
  (:func:`_limits.memory_headroom`), so a runaway allocation is a
  MemoryError, not a swapping machine;
* time: a CPU-time alarm (``ITIMER_PROF``, 20 s per case, hundreds of
  times what a case takes) turns a hang into a failure.  No wall-clock
  time is compared with a threshold.

Profiles (hypothesis settings, derandomised so that CI runs the same cases
every time):

* ``SVMLAB_FUZZ=ci`` (default): 200 model files, 200 dataset-text, 120
  compressed, 120 IDX and 60 whole ``datasets.load`` cases, about 15 s;
* ``SVMLAB_FUZZ=long``: 20 times as many, with random seeds, for a run by
  hand: ``SVMLAB_FUZZ=long python -m pytest -o addopts="" -s
  tests/test_fuzz_files.py``.

Each test prints one line: cases run, the largest and mean CPU time and
tracemalloc peak per case (shown with ``-s``).
"""

from __future__ import annotations

import bz2
import collections
import contextlib
import dataclasses
import gzip
import io
import lzma
import math
import os
import re
import signal
import struct
import time
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.svm import SVC

from svmlab import datasets
from svmlab.datasets import DatasetCorruptError
from svmlab.datasets._parse import libsvm_content_sha256, read_idx, read_libsvm
from svmlab.datasets._registry import DatasetSpec, FileSpec
from svmlab.io import load_libsvm_model, save_libsvm_model

from _limits import memory_headroom

PROFILE = os.environ.get("SVMLAB_FUZZ", "ci")
_SCALE = {"ci": 1, "long": 20}[PROFILE]
CASE_CPU_SECONDS = 20
MEMORY_PER_BYTE, MEMORY_BASE = 64, 8 << 20


def _settings(n):
    return settings(max_examples=n * _SCALE, deadline=None, derandomize=PROFILE == "ci",
                    database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------- harness

class _CaseTimeout(Exception):
    pass


class Bounds:
    """Runs cases under tracemalloc and a CPU-time alarm; keeps statistics."""

    def __init__(self, name):
        self.name = name
        self.times, self.peaks = [], []
        self.outcomes = collections.Counter()

    @contextlib.contextmanager
    def case(self, size):
        def alarm(signum, frame):
            raise _CaseTimeout(f"a case took more than {CASE_CPU_SECONDS} CPU seconds")

        old = signal.signal(signal.SIGPROF, alarm)
        signal.setitimer(signal.ITIMER_PROF, CASE_CPU_SECONDS)
        tracemalloc.start()
        t0 = time.process_time()
        try:
            yield
        finally:
            dt = time.process_time() - t0
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, old)
            self.times.append(dt)
            self.peaks.append(peak)
        assert peak <= MEMORY_PER_BYTE * size + MEMORY_BASE, (
            f"case of {size} bytes peaked at {peak} bytes")

    def report(self, capsys):
        t, p = np.array(self.times), np.array(self.peaks)
        with capsys.disabled():
            print(f"\n[fuzz {self.name}, profile {PROFILE}] {len(t)} cases; CPU per case "
                  f"max {t.max() * 1e3:.1f} ms, mean {t.mean() * 1e3:.2f} ms; tracemalloc "
                  f"peak per case max {p.max() / 2**20:.2f} MiB, mean {p.mean() / 2**20:.2f} MiB; "
                  + ", ".join(f"{k}: {v}" for k, v in sorted(self.outcomes.items())))


@pytest.fixture(scope="module")
def headroom():
    with memory_headroom(1024):
        yield


# ---------------------------------------------------------------- mutations

NASTY = [b"nan", b"NaN", b"inf", b"-inf", b"1e309", b"-1e309", b"1e308", b"-1", b"-7",
         b"0", b"-0", b"2147483647", b"2147483648", b"4294967296", b"99999999999999999999",
         b"1" * 60, b"1e-320", b"0.5", b"+3", b"3.0", b"1_0", b"", b"x", b"\x00", b"\xff",
         b"2147483648:1", b"0:1", b"-1:1", b"99999999999999999999:1", b"1:nan", b"3:1e309",
         b"1:2:3", b":", b"SV", b"nr_class", b"total_sv 0", b"\n", b"\r\n", b" ", b"\t"]


@st.composite
def mutated(draw, seeds):
    """A seed file with one to three mutations."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["truncate", "token", "insert", "flip", "line", "count",
                                     "number", "number", "number", "space", "space"]))
        n = len(data)
        if kind == "number":            # a number replaced by another valid one
            nums = [(i, j) for i, j in _tokens(data)   # reals, not counts or indices
                    if _is_number(data[i:j]) and (b"." in data[i:j] or b"e" in data[i:j])]
            if nums:
                i, j = draw(st.sampled_from(nums))
                v = draw(st.floats(-1e6, 1e6, allow_nan=False) | st.integers(-50, 50)
                         | st.floats(allow_nan=False, allow_infinity=False))
                data[i:j] = repr(v).encode()
        elif kind == "space":           # white space added: the same content
            at = draw(st.sampled_from([i for i, _ in _tokens(data)] or [0]))
            data[at:at] = draw(st.sampled_from([b" ", b"\t", b"  ", b"\r"]))
        elif kind == "truncate":
            del data[draw(st.integers(0, n)):]
        elif kind == "token":           # a whitespace-separated token replaced
            spans = [(i, j) for i, j in _tokens(data)]
            if spans:
                i, j = draw(st.sampled_from(spans))
                data[i:j] = draw(st.sampled_from(NASTY) | st.binary(max_size=12))
        elif kind == "insert":
            at = draw(st.integers(0, n))
            data[at:at] = draw(st.sampled_from(NASTY) | st.binary(min_size=1, max_size=16))
        elif kind == "flip" and n:
            at = draw(st.integers(0, n - 1))
            data[at] ^= draw(st.integers(1, 255))
        elif kind == "line":            # a line deleted or repeated
            lines = bytes(data).split(b"\n")
            k = draw(st.integers(0, len(lines) - 1))
            if draw(st.booleans()):
                del lines[k]
            else:
                lines.insert(k, lines[k])
            data = bytearray(b"\n".join(lines))
        elif kind == "count":           # a number made off by a little or a lot
            nums = [(i, j) for i, j in _tokens(data) if data[i:j].isdigit()]
            if nums:
                i, j = draw(st.sampled_from(nums))
                v = int(data[i:j]) + draw(st.sampled_from([-2, -1, 1, 2, 10**6, -10**6,
                                                           2**31, 2**40]))
                data[i:j] = str(v).encode()
    return bytes(data)


def _is_number(tok):
    try:
        float(tok)
        return True
    except ValueError:
        return False


def _tokens(data):
    i, n = 0, len(data)
    out = []
    while i < n:
        while i < n and data[i] in b" \t\n\r:":
            i += 1
        j = i
        while j < n and data[j] not in b" \t\n\r:":
            j += 1
        if j > i:
            out.append((i, j))
        i = j
    return out


# ------------------------------------------------- model files: reference

FIELDS = {"svm_type", "kernel_type", "degree", "gamma", "coef0", "nr_class", "total_sv",
          "rho", "label", "probA", "probB", "nr_sv"}
KERNELS = {"linear", "polynomial", "rbf", "sigmoid"}


class Refused(Exception):
    pass


def _ref_int(tok, lo, hi):
    if not re.fullmatch(r"[+-]?[0-9]+", tok):
        raise Refused(f"int {tok!r}")
    if len(tok.lstrip("+-").lstrip("0")) > 18:
        raise Refused("int too long")
    v = int(tok)
    if not lo <= v <= hi:
        raise Refused(f"int {v} out of range")
    return v


def _ref_model_float(tok):
    # model files: decimal literals only (docs/decisions/27r01), where C's
    # strtod and Python's float agree; '1_0', '0x10', '1e' are refused
    if not re.fullmatch(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", tok):
        raise Refused(f"float {tok!r}")
    return _ref_float(tok)


def _ref_float(tok):
    try:
        v = float(tok)
    except (ValueError, OverflowError):
        raise Refused(f"float {tok!r}") from None
    if not math.isfinite(v):
        raise Refused("non-finite")
    return v


def reference_model(raw):
    """LIBSVM's C-SVC model format, read from its definition (the rules of
    svmlab.io's module docstring), independently of svmlab.io."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise Refused("not ascii") from None
    # bytes: printable ASCII, tab, newline, and CR only before a newline (27r01)
    if re.search(r"[^\x20-\x7e\t\n\r]", text) or re.search(r"\r(?!\n|\Z)", text):
        raise Refused("control character")
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    head, at = {}, None
    for i, line in enumerate(lines):
        parts = line.split()
        if not parts:
            continue
        if parts == ["SV"]:
            at = i
            break
        if parts[0] not in FIELDS or parts[0] in head:
            raise Refused("header field")
        head[parts[0]] = parts[1:]
    if at is None:
        raise Refused("no SV")

    def one(key, default=None):
        if key not in head:
            if default is None:
                raise Refused(f"missing {key}")
            return default
        if len(head[key]) != 1:
            raise Refused(f"{key} count")
        return head[key][0]

    if one("svm_type") != "c_svc" or one("kernel_type") not in KERNELS:
        raise Refused("type")
    kernel = one("kernel_type")
    k = _ref_int(one("nr_class"), 2, 1000)
    total = _ref_int(one("total_sv"), 0, 10_000_000)
    P = k * (k - 1) // 2
    if len(head.get("rho", [])) != P:
        raise Refused("rho count")
    rho = [_ref_model_float(t) for t in head["rho"]]
    for key in ("probA", "probB"):
        if key in head:
            if len(head[key]) != P:
                raise Refused(f"{key} count")
            [_ref_model_float(t) for t in head[key]]
    labels = [_ref_int(t, -2**31 + 1, 2**31 - 1) for t in head.get("label", [])]
    if len(labels) != k or len(set(labels)) != k:
        raise Refused("labels")
    nr = [_ref_int(t, 0, 10_000_000) for t in head.get("nr_sv", [])]
    if len(nr) != k or sum(nr) != total:
        raise Refused("nr_sv")
    gamma = None
    if kernel != "linear" or "gamma" in head:
        gamma = _ref_model_float(one("gamma"))
        if gamma < 0:
            raise Refused("gamma < 0")
    degree = _ref_int(one("degree", "3"), 0, 2**31 - 1)
    coef0 = _ref_model_float(one("coef0", "0"))
    # exactly total_sv lines right after 'SV', none blank; only blank lines after
    body = lines[at + 1:at + 1 + total]
    if len(body) != total or not all(ln.split() for ln in body) \
            or any(ln.split() for ln in lines[at + 1 + total:]):
        raise Refused("total_sv vs lines")
    coefs, svs = [], []
    for ln in body:
        toks = ln.split()
        if len(toks) < k - 1 or any(":" in t for t in toks[:k - 1]):
            raise Refused("sv coefficients")
        coefs.append([_ref_model_float(t) for t in toks[:k - 1]])
        row, last = {}, 0
        for t in toks[k - 1:]:
            pieces = t.split(":")
            if len(pieces) != 2 or not pieces[0] or not pieces[1]:
                raise Refused("pair")
            j = _ref_int(pieces[0], 1, 2**31 - 1)
            if j <= last:
                raise Refused("order")
            row[j] = _ref_model_float(pieces[1])
            last = j
        svs.append(row)
    return dict(kernel=kernel, k=k, rho=rho, labels=labels, nr=nr, gamma=gamma or 0.0,
                degree=degree, coef0=coef0, coefs=coefs, svs=svs)


def reference_pair_values(m, X):
    """LIBSVM's pair values (file order) for dense rows X; None where a
    value is not finite."""
    with np.errstate(all="ignore"):
        def K(s, x):
            dot = np.float64(0.0)
            for j, v in s.items():
                if j <= len(x):
                    dot += v * x[j - 1]
            g, c0 = np.float64(m["gamma"]), np.float64(m["coef0"])
            if m["kernel"] == "linear":
                return dot
            if m["kernel"] == "rbf":
                d2 = np.float64(0.0)
                for j in set(s) | {j + 1 for j in range(len(x)) if x[j] != 0}:
                    d2 += (s.get(j, 0.0) - (x[j - 1] if j <= len(x) else 0.0)) ** 2
                return np.exp(-g * d2)
            if m["kernel"] == "polynomial":
                return (g * dot + c0) ** np.float64(m["degree"])
            return np.tanh(g * dot + c0)

        k = m["k"]
        start = np.concatenate([[0], np.cumsum(m["nr"])]).astype(int)
        out = np.empty((len(X), k * (k - 1) // 2))
        scale = np.empty_like(out)
        for r, x in enumerate(X):
            Ks = [K(s, x) for s in m["svs"]]
            p = 0
            for i in range(k):
                for j in range(i + 1, k):
                    terms = [m["coefs"][s][j - 1] * Ks[s] for s in range(start[i], start[i + 1])]
                    terms += [m["coefs"][s][i] * Ks[s] for s in range(start[j], start[j + 1])]
                    out[r, p] = np.sum(terms) - m["rho"][p]
                    scale[r, p] = np.sum(np.abs(terms)) + abs(m["rho"][p])
                    p += 1
    return out, scale


def _model_seeds():
    rng = np.random.default_rng(0)
    seeds = []
    X = rng.normal(size=(30, 4))
    X[rng.random(X.shape) < 0.3] = 0
    for params, k in [(dict(kernel="rbf", gamma=0.5), 2), (dict(kernel="linear"), 2),
                      (dict(kernel="poly", gamma=0.3, degree=2, coef0=1.0), 3),
                      (dict(kernel="sigmoid", gamma=0.1, coef0=-0.5), 3)]:
        y = (X[:, 0] > 0).astype(int) + (k == 3) * (X[:, 1] > 0.5).astype(int)
        svc = SVC(C=1.0, **params).fit(X, y * 3 - 1)
        f = io.StringIO()
        save_libsvm_model(svc, f)
        seeds.append(f.getvalue().encode())
    seeds.append(b"svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 3\n"
                 b"rho 0.25\nlabel 1 -1\nnr_sv 1 2\nSV\n1 1:1 3:2 \n-0.5 2:1 \n-0.5 1:-1 2:0.5 \n")
    return seeds


MODEL_SEEDS = _model_seeds()
X_PRED = np.array([[0.5, -1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [-1.5, 0.25, 1.0, -0.5]])
MODEL_STATS = Bounds("model files")


@_settings(200)
@given(raw=mutated(MODEL_SEEDS))
def test_fuzz_model_files(raw, headroom):
    try:
        ref = reference_model(raw)
    except Refused:
        ref = None
    with MODEL_STATS.case(len(raw)):
        try:
            model = load_libsvm_model(io.BytesIO(raw))
        except ValueError as exc:
            model = None
            assert str(exc).startswith("<file object>"), str(exc)   # names the file
        values = outcome = None
        if model is not None:
            try:
                values = model.libsvm_decision_function(X_PRED)
                pred = model.predict(X_PRED)
                dense_vs_csr = model.libsvm_decision_function(sp.csr_matrix(X_PRED))
            except ValueError as exc:
                assert "not finite" in str(exc)
                outcome = "not finite"
    MODEL_STATS.outcomes["refused" if model is None else "predict refused (not finite)"
                         if outcome else "loaded and predicted"] += 1
    # the same decision as the format's definition
    assert (model is None) == (ref is None), (raw, ref is None)
    if model is None or outcome is not None:
        return
    want, scale = reference_pair_values(ref, X_PRED)
    got = values.reshape(len(X_PRED), -1)
    ok = np.isfinite(want) & np.isfinite(scale)
    assert np.isfinite(want).all(), "svmlab gave finite values the definition does not"
    assert np.all(np.abs(got - want)[ok] <= 1e-9 * (1 + scale[ok])), (got, want)
    np.testing.assert_allclose(dense_vs_csr, values, rtol=1e-12, atol=1e-12 * (1 + scale.max()))
    # LIBSVM's vote, where no pair value is within rounding of 0
    k = ref["k"]
    for r in range(len(X_PRED)):
        if not ok[r].all() or np.any(np.abs(want[r]) <= 1e-9 * (1 + scale[r])):
            continue
        votes, p = [0] * k, 0
        for i in range(k):
            for j in range(i + 1, k):
                votes[i if want[r, p] > 0 else j] += 1
                p += 1
        assert pred[r] == ref["labels"][max(range(k), key=lambda c: (votes[c], -c))]


def test_fuzz_model_files_report(capsys):
    if MODEL_STATS.times:
        MODEL_STATS.report(capsys)


# ------------------------------------------------ dataset files: reference

def reference_libsvm(raw, n_features):
    """LIBSVM/SVMlight text as scikit-learn's reader defines it (bytes split
    on ASCII white space, '#' comments, a ``qid...:...`` token after the
    label whose value is not data, Python's int() and float() of the
    tokens), with one-based indices increasing up to n_features and finite
    numbers."""
    rows, labels = [], []
    for line in raw.split(b"\n"):
        line = line.split(b"#", 1)[0]
        toks = line.split()
        if not toks:
            continue
        labels.append(_ref_float(toks[0]))
        rest = toks[1:]
        if rest and rest[0].startswith(b"qid"):     # a query id: its value is not data
            if b":" not in rest[0]:
                raise Refused("qid")
            rest = rest[1:]
        row, last = {}, 0
        for t in rest:
            pieces = t.split(b":")
            if len(pieces) != 2:
                raise Refused("pair")
            try:
                j = int(pieces[0])
            except ValueError:
                raise Refused("index") from None
            if not 1 <= j <= n_features or j <= last:
                raise Refused("index range/order")
            row[j - 1] = _ref_float(pieces[1])
            last = j
        rows.append(row)
    if not rows:
        raise Refused("empty")
    X = np.zeros((len(rows), n_features))
    for i, row in enumerate(rows):
        for j, v in row.items():
            X[i, j] = v
    return X, np.array(labels)


TEXT_SEEDS = [b"-1 1:0.5 3:1\n+1 2:2 5:-0.25\n1 1:1e-3 2:4 3:1 4:1 5:1\n-1\n",
              b"# a comment\n1 qid:3 2:1\n-1 qid:3 1:1 4:0.5 # tail\n\n1 5:7\n",
              b"1.0 1:1 2:1\n-1.0 3:1\n"]
TEXT_STATS = Bounds("LIBSVM text")


def _check_text_case(path, raw_text, size, stats):
    with stats.case(size):
        try:
            X, y = read_libsvm(path, 5, max_bytes=1 << 20)
        except DatasetCorruptError as exc:
            assert str(path) in str(exc)
            stats.outcomes["refused"] += 1
            return None
    stats.outcomes["read"] += 1
    try:
        Xr, yr = reference_libsvm(raw_text, 5)
    except Refused as exc:
        raise AssertionError(f"svmlab read a file the definition refuses ({exc})") from None
    np.testing.assert_array_equal(X.toarray(), Xr)
    np.testing.assert_array_equal(y, yr)
    assert X.indices.dtype == np.int32 and X.has_canonical_format
    return X, y


@_settings(200)
@given(raw=mutated(TEXT_SEEDS))
def test_fuzz_libsvm_text(raw, tmp_path_factory, headroom):
    path = tmp_path_factory.mktemp("t") / "data"
    path.write_bytes(raw)
    _check_text_case(path, raw, len(raw), TEXT_STATS)


def _gz(b):
    return gzip.compress(b, mtime=0)    # no time stamp: the same seeds every run


COMPRESSORS = {".gz": (_gz, gzip.decompress), ".xz": (lzma.compress, lzma.decompress),
               ".bz2": (bz2.compress, bz2.decompress)}
COMP_STATS = Bounds("compressed LIBSVM text")


@_settings(120)
@given(ext=st.sampled_from(sorted(COMPRESSORS)), data=st.data())
def test_fuzz_compressed_libsvm_text(ext, data, tmp_path_factory, headroom):
    comp, decomp = COMPRESSORS[ext]
    seeds = [comp(s) for s in TEXT_SEEDS] + [comp(TEXT_SEEDS[0] * 2000)]
    raw = data.draw(mutated(seeds))
    path = tmp_path_factory.mktemp("c") / ("data" + ext)
    path.write_bytes(raw)
    try:
        text = decomp(raw)
    except Exception:
        text = None
    res = _check_text_case(path, text if text is not None else b"", 4 * len(raw) + 65536,
                           COMP_STATS)
    if res is not None:
        assert text is not None, "svmlab decompressed what the standard library refuses"


def reference_idx(raw):
    if len(raw) < 4 or raw[0] or raw[1]:
        raise Refused("magic")
    types = {8: ">u1", 9: ">i1", 11: ">i2", 12: ">i4", 13: ">f4", 14: ">f8"}
    if raw[2] not in types or raw[3] == 0 or len(raw) < 4 + 4 * raw[3]:
        raise Refused("header")
    shape = struct.unpack(f">{raw[3]}I", raw[4:4 + 4 * raw[3]])
    dt = np.dtype(types[raw[2]])
    if len(raw) - 4 - 4 * raw[3] != math.prod(shape) * dt.itemsize:
        raise Refused("size")
    return np.frombuffer(raw, dt, offset=4 + 4 * raw[3]).reshape(shape)


def _idx_seed(arr, code):
    return bytes([0, 0, code, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape) + \
        arr.astype(arr.dtype.newbyteorder(">")).tobytes()


IDX_SEEDS = [_idx_seed(np.arange(24, dtype=np.uint8).reshape(2, 3, 4), 8),
             _idx_seed(np.arange(10, dtype=np.uint8), 8),
             _idx_seed(np.linspace(-1, 1, 6).astype(np.float32).reshape(3, 2), 13)]
IDX_STATS = Bounds("IDX")


@_settings(120)
@given(gz=st.booleans(), data=st.data())
def test_fuzz_idx(gz, data, tmp_path_factory, headroom):
    seeds = [_gz(s) for s in IDX_SEEDS] if gz else IDX_SEEDS
    raw = data.draw(mutated(seeds))
    path = tmp_path_factory.mktemp("i") / ("f.gz" if gz else "f")
    path.write_bytes(raw)
    with IDX_STATS.case(4 * len(raw) + 65536):
        try:
            got = read_idx(path, max_bytes=1 << 20)
        except DatasetCorruptError as exc:
            assert str(path) in str(exc)
            IDX_STATS.outcomes["refused"] += 1
            return
    IDX_STATS.outcomes["read"] += 1
    try:
        plain = gzip.decompress(raw) if gz else raw
        want = reference_idx(plain)
    except (Refused, OSError, EOFError, Exception) as exc:
        raise AssertionError(f"svmlab read an IDX file the definition refuses ({exc!r})") from None
    np.testing.assert_array_equal(got, want)


# ----------------------------------------- the whole load(): a cached file

GENUINE = b"-1 1:0.5 3:1\n1 2:2 5:-0.25\n1 1:1e-3 2:4 3:1 4:1 5:1\n-1 4:3\n1 2:1\n"
LOAD_STATS = Bounds("datasets.load of a cached file")


@_settings(60)
@given(ext=st.sampled_from(["", ".gz", ".bz2"]), data=st.data())
def test_fuzz_load_from_a_damaged_cache(ext, data, tmp_path_factory, headroom):
    """A dataset whose only copy is a cached file: load() returns exactly
    the genuine data (the mutation left the content intact) or raises a
    DatasetCorruptError after moving the file aside; nothing else."""
    Xg, yg = reference_libsvm(GENUINE, 5)
    comp = {"": lambda b: b, ".gz": _gz, ".bz2": bz2.compress}[ext]
    raw = data.draw(mutated([comp(GENUINE)]))
    cache = tmp_path_factory.mktemp("cache")
    (cache / ("fuzz" + ext)).write_bytes(raw)
    fs = FileSpec(stored=None, stored_sha256=None, upstream="fuzz" + ext, url=None,
                  content_sha256=libsvm_content_sha256(sp.csr_matrix(Xg), yg),
                  max_bytes=1 << 16, n_samples=5, label_counts={-1: 2, 1: 3})
    spec = DatasetSpec(name="fuzz", title="fuzz", kind="libsvm", n_features=5,
                       description="", citation="", page="", files={"train": (fs,)},
                       splits=("train",))
    env = {k: os.environ.get(k) for k in ("SVMLAB_CACHE", "SVMLAB_OFFLINE", "SVMLAB_DATA")}
    os.environ.update(SVMLAB_CACHE=str(cache), SVMLAB_OFFLINE="1")
    os.environ.pop("SVMLAB_DATA", None)
    datasets.REGISTRY["fuzz"] = spec
    datasets.clear_memory_cache()
    try:
        with LOAD_STATS.case(4 * len(raw) + 65536), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                X, y = datasets.load("fuzz")
            except DatasetCorruptError:
                assert (cache / ("fuzz" + ext + ".corrupt")).exists()
                LOAD_STATS.outcomes["refused, moved aside"] += 1
                return
        LOAD_STATS.outcomes["genuine data"] += 1
        np.testing.assert_array_equal(X.toarray(), Xg)
        np.testing.assert_array_equal(y, yg)
    finally:
        del datasets.REGISTRY["fuzz"]
        datasets.clear_memory_cache()
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_fuzz_dataset_files_report(capsys):
    for stats in (TEXT_STATS, COMP_STATS, IDX_STATS, LOAD_STATS):
        if stats.times:
            stats.report(capsys)
