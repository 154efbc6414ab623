"""File parsers: LIBSVM text (through scikit-learn) and MNIST IDX (numpy).

A dataset file may come from anywhere (a download, a cache another program
wrote, a shared directory), so the parsers treat it as untrusted input:

* **One read, bounded.**  A file is read once, through one open file
  descriptor, at most ``max_bytes`` bytes (:func:`read_file_bytes`); its
  checksums and its parse come from those same bytes in memory, so a file
  swapped while being read cannot pass with another's checksum.
* **Bounded decompression.**  ``.xz``/``.lzma``, ``.bz2`` and ``.gz`` data
  are decompressed in memory in pieces (:func:`decompress`) and refused as
  soon as they exceed ``max_bytes`` decompressed bytes
  (:data:`DEFAULT_MAX_BYTES` unless the caller gives the registry's
  per-file cap), so a decompression bomb costs at most ``max_bytes`` of
  memory and the time to produce them; bytes after the last compressed
  stream (padding, garbage) are refused, never skipped one by one.
* **One kind of error.**  Anything wrong with the content -- damaged
  compressed data (``zlib.error``, ``LZMAError``, ``EOFError``...), a
  malformed line, a feature index 0 in a one-based format, an index beyond
  the dataset's width or beyond 32 bits, a non-finite value, a cut-off IDX
  header, an IDX shape that does not match the payload, and any other
  exception a parser raises -- is
  a :class:`DatasetCorruptError` naming the file and the line (text) or the
  byte offset (binary).  A truncated or damaged file never turns into a
  silently wrong dataset.
* **Content hashes.**  :func:`libsvm_content_sha256` and
  :func:`idx_content_sha256` give a file's checksum independent of how it
  is stored (see :mod:`svmlab.datasets._registry`).
"""

from __future__ import annotations

import bz2
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

__all__ = ["DatasetCorruptError", "DatasetNotFoundError", "DEFAULT_MAX_BYTES",
           "read_bytes", "read_file_bytes", "decompress", "read_libsvm", "read_idx",
           "parse_libsvm_bytes", "parse_idx_bytes", "canonical_csr", "libsvm_content_sha256",
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


def read_file_bytes(path, max_bytes=DEFAULT_MAX_BYTES):
    """The bytes of ``path`` as stored (compressed or not), read through ONE
    open file descriptor, at most ``max_bytes`` of them.

    Everything svmlab checks and parses comes from these bytes in memory:
    the checksums are taken of exactly the bytes that are parsed, so a file
    replaced or rewritten while it is being read cannot pass with another
    file's checksum (``docs/decisions/27r02-one-read.md``).  A file larger
    than ``max_bytes`` is refused after reading ``max_bytes + 1`` bytes:
    padding (a sparse file of zeros behind a genuine gzip member) costs no
    more than that."""
    try:
        with open(os.fspath(path), "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise DatasetCorruptError(f"{path}: cannot read the file: {exc}") from exc
    if len(data) > max_bytes:
        raise DatasetCorruptError(
            f"{path}: the file is larger than max_bytes={max_bytes} bytes (stopped reading "
            "there): a damaged or padded file. Pass a larger max_bytes to "
            "svmlab.datasets.load if you trust this file.")
    return data


_MAGIC = {"gzip": (b"\x1f\x8b",), "xz": (b"\xfd7zXZ\x00", b"\x5d\x00\x00"), "bz2": (b"BZh",)}


def _decompressor(kind):
    if kind == "gzip":
        return zlib.decompressobj(wbits=31)
    if kind == "xz":
        return lzma.LZMADecompressor(format=lzma.FORMAT_AUTO)
    return bz2.BZ2Decompressor()


def decompress(raw, kind, max_bytes=DEFAULT_MAX_BYTES, name="<bytes>"):
    """Decompress ``raw`` (the stored bytes, ``kind`` "gzip", "xz", "bz2" or
    None) in memory, refusing more than ``max_bytes`` output bytes.

    The work is bounded by the input (``len(raw)``, itself at most the
    caller's ``max_bytes``) and by the output cap: the decompressor is fed
    pieces of the input and asked for at most ``max_bytes + 1 - produced``
    bytes at a time.  Concatenated streams (gzip members, xz streams, bzip2
    streams: what ``gunzip``/``xz -d``/``bunzip2`` accept) are read one
    after the other; any other byte after the last complete stream
    (padding, trailing garbage) is refused, as is a stream cut short.
    Every failure is a :class:`DatasetCorruptError` naming the file and the
    compressed offset."""
    if kind is None:
        if len(raw) > max_bytes:
            raise DatasetCorruptError(f"{name}: more than max_bytes={max_bytes} bytes")
        return bytes(raw)
    out = bytearray()
    pos = 0                 # compressed offset: the input fed so far ends here
    view = memoryview(raw)
    try:
        while True:         # one stream (gzip member, xz or bzip2 stream) per round
            if not any(raw[pos:pos + len(m)] == m for m in _MAGIC[kind]):
                if pos == 0:
                    raise DatasetCorruptError(
                        f"{name}: not {kind} data (no {kind} magic number at offset 0)")
                raise DatasetCorruptError(
                    f"{name}: {len(raw) - pos} bytes of trailing data after the {kind} data "
                    f"that end at compressed offset {pos}: a padded or damaged file")
            dec = _decompressor(kind)
            tail = b""      # zlib: input not consumed because the output was capped
            while not dec.eof:
                if kind == "gzip" and tail:
                    data = tail
                elif kind == "gzip" or dec.needs_input:
                    if pos >= len(raw):
                        raise DatasetCorruptError(
                            f"{name}: cannot decompress the {kind} data: they end early "
                            f"(cut off at compressed byte {len(raw)}, after {len(out)} decompressed bytes): the file is "
                            "truncated")
                    data = view[pos:pos + _PIECE]
                    pos += len(data)
                else:
                    data = b""
                out += dec.decompress(data, max_bytes + 1 - len(out))
                if kind == "gzip":
                    tail = dec.unconsumed_tail
                if len(out) > max_bytes:
                    raise DatasetCorruptError(
                        f"{name}: decompresses to more than max_bytes={max_bytes} bytes "
                        f"(stopped near compressed byte {pos}): a damaged file or a "
                        "decompression bomb. Pass a larger max_bytes to "
                        "svmlab.datasets.load if you trust this file.")
            pos -= len(dec.unused_data)
            if pos >= len(raw):
                return bytes(out)
    except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
        if isinstance(exc, DatasetCorruptError):
            raise
        raise DatasetCorruptError(
            f"{name}: cannot decompress the {kind} data near compressed byte {pos} (after "
            f"{len(out)} decompressed bytes): {type(exc).__name__}: {exc}. The file is "
            "truncated or damaged.") from exc


def read_bytes(path, max_bytes=DEFAULT_MAX_BYTES):
    """The (decompressed) content of ``path``, at most ``max_bytes`` bytes
    read from the file and at most ``max_bytes`` decompressed bytes (see
    :func:`read_file_bytes` and :func:`decompress`); every failure is a
    :class:`DatasetCorruptError` naming the file."""
    return decompress(read_file_bytes(path, max_bytes), _compression(path), max_bytes, path)


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
    return parse_libsvm_bytes(read_bytes(path, max_bytes), n_features, path)


def parse_libsvm_bytes(raw, n_features: int, name="<bytes>"):
    """:func:`read_libsvm` of the decompressed text ``raw``; ``name`` names
    the file in errors.  Any failure, whatever raised it, is a
    :class:`DatasetCorruptError`."""
    try:
        return _parse_libsvm(raw, n_features, name)
    except DatasetCorruptError:
        raise
    except Exception as exc:      # noqa: BLE001 - every parser failure is "corrupt"
        raise DatasetCorruptError(
            f"{name}: not a valid LIBSVM file: {type(exc).__name__}: {exc}") from exc


def _parse_libsvm(raw, n_features, path):
    from sklearn.datasets import load_svmlight_file

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
    :data:`MAX_IDX_DIMS`), then one big-endian uint32 per dimension; the
    payload follows in C order and must be exactly as long as the shape says
    (the product is taken in Python integers: no overflow)."""
    return parse_idx_bytes(read_bytes(path, max_bytes), path)


#: the most dimensions an IDX header may give (numpy's own limit is 64 in
#: numpy 2, 32 before; a dataset has 1 to 3)
MAX_IDX_DIMS = 32


def parse_idx_bytes(raw, name="<bytes>") -> np.ndarray:
    """:func:`read_idx` of the decompressed bytes ``raw``; any failure is a
    :class:`DatasetCorruptError` naming ``name``."""
    try:
        return _parse_idx(raw, name)
    except DatasetCorruptError:
        raise
    except Exception as exc:      # noqa: BLE001 - every parser failure is "corrupt"
        raise DatasetCorruptError(
            f"{name}: not a valid IDX file: {type(exc).__name__}: {exc}") from exc


def _parse_idx(raw, path):
    if len(raw) < 4:
        raise DatasetCorruptError(
            f"{path}: cut-off IDX header: {len(raw)} bytes, the magic number alone has 4")
    if raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise DatasetCorruptError(
            f"{path}: not an IDX file (bad magic number {raw[:4].hex()} at offset 0)")
    ndim = raw[3]
    offset = 4 + 4 * ndim
    if not 1 <= ndim <= MAX_IDX_DIMS:
        raise DatasetCorruptError(
            f"{path}: IDX header at offset 3 gives {ndim} dimensions (1 to {MAX_IDX_DIMS} "
            "are read)")
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
