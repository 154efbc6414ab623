"""File parsers: LIBSVM text (through scikit-learn) and MNIST IDX (numpy).

A dataset file may come from anywhere (a download, a cache another program
wrote, a shared directory), so the parsers treat it as untrusted input:

* **Bounded decompression.**  ``.xz``/``.lzma``, ``.bz2`` and ``.gz`` files
  are decompressed in pieces and refused as soon as they exceed
  ``max_bytes`` decompressed bytes (:data:`DEFAULT_MAX_BYTES` unless the
  caller gives the registry's per-file cap), so a decompression bomb costs
  at most ``max_bytes`` of memory and the time to produce them.
* **One kind of error.**  Anything wrong with the content -- damaged
  compressed data (``zlib.error``, ``LZMAError``, ``EOFError``...), a
  malformed line, a feature index 0 in a one-based format, an index beyond
  the dataset's width or beyond 32 bits, a non-finite value, a cut-off IDX
  header, an IDX shape that does not match the payload -- raises
  :class:`DatasetCorruptError` naming the file and the line (text) or the
  byte offset (binary).  A truncated or damaged file never turns into a
  silently wrong dataset.
* **Content hashes.**  :func:`libsvm_content_sha256` and
  :func:`idx_content_sha256` give a file's checksum independent of how it
  is stored (see :mod:`svmlab.datasets._registry`).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import math
import os
import re
import struct
import zlib

import numpy as np
import scipy.sparse as sp

__all__ = ["DatasetCorruptError", "DatasetNotFoundError", "DEFAULT_MAX_BYTES", "open_any",
           "read_bytes", "read_libsvm", "read_idx", "canonical_csr", "libsvm_content_sha256",
           "idx_content_sha256"]

#: decompressed bytes a parser reads from one file unless told otherwise
DEFAULT_MAX_BYTES = 1 << 30
#: decompressed bytes read at a time
_PIECE = 1 << 20


class DatasetNotFoundError(FileNotFoundError):
    """A dataset file is in none of the places svmlab looks (and cannot be downloaded)."""


class DatasetCorruptError(ValueError):
    """A dataset file exists but its checksum or its content is wrong."""


def _compression(path):
    p = os.fspath(path)
    if p.endswith((".xz", ".lzma")):
        return "xz"
    if p.endswith(".bz2"):
        return "bz2"
    if p.endswith(".gz"):
        return "gzip"
    return None


def open_any(path):
    """Open ``path`` for binary reading, decompressing .xz/.bz2/.gz by extension."""
    kind = _compression(path)
    p = os.fspath(path)
    if kind == "xz":
        return lzma.open(p, "rb")
    if kind == "bz2":
        return bz2.open(p, "rb")
    if kind == "gzip":
        return gzip.open(p, "rb")
    return open(p, "rb")


def read_bytes(path, max_bytes=DEFAULT_MAX_BYTES):
    """The (decompressed) content of ``path``, at most ``max_bytes`` bytes.

    Raises :class:`DatasetCorruptError` naming the file and the offsets when
    the compressed data are damaged or cut off, or when the content is
    larger than ``max_bytes`` (a damaged file, or a decompression bomb: the
    reading stops there)."""
    kind = _compression(path)
    out = bytearray()
    try:
        with open(os.fspath(path), "rb") as raw:
            if kind == "xz":
                fh = lzma.LZMAFile(raw)
            elif kind == "bz2":
                fh = bz2.BZ2File(raw)
            elif kind == "gzip":
                fh = gzip.GzipFile(fileobj=raw)
            else:
                fh = raw
            try:
                while True:
                    piece = fh.read(min(_PIECE, max_bytes + 1 - len(out)))
                    if not piece:
                        break
                    out += piece
                    if len(out) > max_bytes:
                        raise DatasetCorruptError(
                            f"{path}: decompresses to more than max_bytes={max_bytes} bytes "
                            f"(stopped at compressed byte {raw.tell()}): a damaged file or a "
                            "decompression bomb. Pass a larger max_bytes to "
                            "svmlab.datasets.load if you trust this file.")
            except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
                if isinstance(exc, DatasetCorruptError):
                    raise
                raise DatasetCorruptError(
                    f"{path}: cannot decompress the {kind or 'file'} data near compressed "
                    f"byte {raw.tell()} (after {len(out)} decompressed bytes): "
                    f"{type(exc).__name__}: {exc}. The file is truncated or damaged.") from exc
    except OSError as exc:
        raise DatasetCorruptError(f"{path}: cannot read the file: {exc}") from exc
    return bytes(out)


def canonical_csr(X) -> sp.csr_matrix:
    """CSR float64 with int32 indices/indptr, summed duplicates and sorted indices."""
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.sort_indices()
    if X.nnz >= 2**31 - 1:
        raise ValueError(f"{X.nnz} non-zeros do not fit int32 indices")
    X.indices = X.indices.astype(np.int32, copy=False)
    X.indptr = X.indptr.astype(np.int32, copy=False)
    return X


_PAIR_RE = re.compile(r"(\d+):(\S+)")


def _number(tok):
    try:
        return float(tok)
    except ValueError:
        return None


def _first_bad_line(raw, n_features):
    """``(line number, reason)`` of the first line of LIBSVM text that is not
    ``label [qid:n] index:value ...`` with one-based indices increasing up to
    ``n_features`` and finite numbers, or None.  Only called once the fast
    parser has refused the file (to name the line); linear in the size."""
    for no, line in enumerate(raw.split(b"\n"), start=1):
        text = line.split(b"#", 1)[0].decode("ascii", "replace").split()
        if not text:
            continue
        label = _number(text[0])
        if label is None or not math.isfinite(label):
            return no, f"label {text[0][:40]!r} is not a finite number"
        last = 0
        for tok in text[1:]:
            if tok.startswith("qid:"):
                continue
            m = _PAIR_RE.fullmatch(tok)
            if not m:
                return no, f"{tok[:40]!r} is not index:value"
            j = int(m.group(1)) if len(m.group(1)) < 19 else 2**63
            if j == 0:
                return no, "feature index 0 in a one-based file (indices start at 1)"
            if j > n_features:
                return no, f"feature index {m.group(1)[:40]} is beyond the {n_features} features"
            if j <= last:
                return no, "feature indices must increase along a line"
            v = _number(m.group(2))
            if v is None:
                return no, f"value {m.group(2)[:40]!r} is not a number"
            if not math.isfinite(v):
                return no, f"value {m.group(2)[:40]} is not finite"
            last = j
    return None


def read_libsvm(path, n_features: int, *, max_bytes=DEFAULT_MAX_BYTES):
    """Parse a (possibly compressed) LIBSVM text file -> (CSR X, raw float labels).

    Indices are one-based (index 0 is an error, never a shift of the whole
    file) and must not exceed ``n_features``, which is always passed (a9a.t
    never uses feature 123, so inferring d would give 122).  The text is
    parsed by :func:`sklearn.datasets.load_svmlight_file` after the bounded
    decompression of :func:`read_bytes`; every failure is a
    :class:`DatasetCorruptError` naming the file and the line."""
    from sklearn.datasets import load_svmlight_file

    raw = read_bytes(path, max_bytes)
    try:
        X, y = load_svmlight_file(io.BytesIO(raw), n_features=n_features, dtype=np.float64,
                                  zero_based=False)
        bad = None
        if X.shape[0] and (not np.all(np.isfinite(X.data)) or not np.all(np.isfinite(y))):
            bad = ValueError("non-finite values")
    except (ValueError, OverflowError, MemoryError) as exc:
        bad = exc
    if bad is not None:
        where = _first_bad_line(raw, n_features)
        at = f"line {where[0]}: {where[1]}" if where else f"{type(bad).__name__}: {bad}"
        raise DatasetCorruptError(
            f"{path}: not a valid LIBSVM file with at most {n_features} features "
            f"(truncated or damaged?): {at}") from bad
    if X.shape[0] == 0:
        raise DatasetCorruptError(f"{path}: the file holds no samples")
    return canonical_csr(X), np.asarray(y, dtype=np.float64)


def libsvm_content_sha256(X, y) -> str:
    """SHA-256 of a LIBSVM dataset's content, independent of its text form
    (``-1`` or ``-1.0``, ``%.6f`` or ``%g``, explicit zeros, compression,
    a trailing empty line) and of its row order: the rows ``(label, indices,
    values)`` as little-endian float64 / int32 / float64 bytes, explicit
    zeros dropped, sorted, each prefixed by its length, after the shape.

    Row order is left out on purpose: LIBSVM's diabetes file and the copy
    svmlab checked differ in row order only (see the registry)."""
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()
    X.sort_indices()
    X.eliminate_zeros()
    ind = X.indices.astype("<i4")
    dat = X.data.astype("<f8")
    lab = np.asarray(y, dtype="<f8")
    ptr = X.indptr
    keys = sorted(lab[i].tobytes() + ind[ptr[i]:ptr[i + 1]].tobytes()
                  + dat[ptr[i]:ptr[i + 1]].tobytes() for i in range(X.shape[0]))
    h = hashlib.sha256(b"svmlab-libsvm-1")
    h.update(np.array(X.shape, dtype="<i8").tobytes())
    for k in keys:
        h.update(len(k).to_bytes(8, "little"))
        h.update(k)
    return h.hexdigest()


def idx_content_sha256(path, max_bytes=DEFAULT_MAX_BYTES) -> str:
    """SHA-256 of an IDX file's uncompressed bytes (the same for the original
    ``.gz`` and any re-compressed copy)."""
    return hashlib.sha256(read_bytes(path, max_bytes)).hexdigest()


_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path, *, max_bytes=DEFAULT_MAX_BYTES) -> np.ndarray:
    """Read an IDX file (MNIST format, optionally gzipped) into a numpy array.

    Header: two zero bytes, a dtype code, the number of dimensions (1 to
    255), then one big-endian uint32 per dimension; the payload follows in C
    order and must be exactly as long as the shape says (the product is
    taken in Python integers: no overflow)."""
    raw = read_bytes(path, max_bytes)
    if len(raw) < 4:
        raise DatasetCorruptError(
            f"{path}: cut-off IDX header: {len(raw)} bytes, the magic number alone has 4")
    if raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise DatasetCorruptError(
            f"{path}: not an IDX file (bad magic number {raw[:4].hex()} at offset 0)")
    ndim = raw[3]
    offset = 4 + 4 * ndim
    if ndim == 0:
        raise DatasetCorruptError(f"{path}: IDX header at offset 3 gives 0 dimensions")
    if len(raw) < offset:
        raise DatasetCorruptError(
            f"{path}: cut-off IDX header: {ndim} dimensions need {offset} header bytes, the "
            f"file has {len(raw)}")
    shape = struct.unpack(f">{ndim}I", raw[4:offset])
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    expected = math.prod(shape) * dtype.itemsize
    if len(raw) - offset != expected:
        raise DatasetCorruptError(
            f"{path}: IDX payload from offset {offset} has {len(raw) - offset} bytes, the "
            f"header (shape {shape}) says {expected}; the file is truncated or damaged")
    return np.frombuffer(raw, dtype, offset=offset).reshape(shape).astype(dtype.newbyteorder("="))
