"""File parsers: LIBSVM text (through scikit-learn) and MNIST IDX (numpy).

Both raise :class:`DatasetCorruptError` with the file name on bad content, so
a truncated or damaged file never turns into a silently wrong dataset.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os

import numpy as np
import scipy.sparse as sp

__all__ = ["DatasetCorruptError", "DatasetNotFoundError", "open_any", "read_libsvm", "read_idx",
           "canonical_csr"]


class DatasetNotFoundError(FileNotFoundError):
    """A dataset file is in none of the places svmlab looks (and cannot be downloaded)."""


class DatasetCorruptError(ValueError):
    """A dataset file exists but its checksum or its content is wrong."""


def open_any(path):
    """Open ``path`` for binary reading, decompressing .xz/.bz2/.gz by extension."""
    p = os.fspath(path)
    if p.endswith(".xz") or p.endswith(".lzma"):
        return lzma.open(p, "rb")
    if p.endswith(".bz2"):
        return bz2.open(p, "rb")
    if p.endswith(".gz"):
        return gzip.open(p, "rb")
    return open(p, "rb")


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


def read_libsvm(path, n_features: int):
    """Parse a (possibly compressed) LIBSVM text file -> (CSR X, raw float labels).

    Uses :func:`sklearn.datasets.load_svmlight_file`; always passes
    ``n_features`` (a9a.t never uses feature 123, so inferring d would give 122).
    """
    from sklearn.datasets import load_svmlight_file

    try:
        with open_any(path) as fh:
            X, y = load_svmlight_file(fh, n_features=n_features, dtype=np.float64)
    except (ValueError, EOFError, OSError, lzma.LZMAError) as exc:
        raise DatasetCorruptError(
            f"{path}: not a valid LIBSVM file with at most {n_features} features "
            f"(truncated or damaged?): {type(exc).__name__}: {exc}") from exc
    if X.shape[0] == 0:
        raise DatasetCorruptError(f"{path}: the file holds no samples")
    if not np.all(np.isfinite(X.data)) or not np.all(np.isfinite(y)):
        raise DatasetCorruptError(f"{path}: non-finite values")
    return canonical_csr(X), np.asarray(y, dtype=np.float64)


_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path) -> np.ndarray:
    """Read an IDX file (MNIST format, optionally gzipped) into a numpy array.

    Header: two zero bytes, a dtype code, the number of dimensions, then one
    big-endian uint32 per dimension; the payload follows in C order.
    """
    try:
        with open_any(path) as fh:
            raw = fh.read()
    except (OSError, EOFError) as exc:
        raise DatasetCorruptError(f"{path}: cannot decompress ({exc})") from exc
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise DatasetCorruptError(f"{path}: not an IDX file (bad magic number)")
    ndim = raw[3]
    shape = tuple(int(s) for s in np.frombuffer(raw, ">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    offset = 4 + 4 * ndim
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - offset != expected:
        raise DatasetCorruptError(
            f"{path}: IDX payload has {len(raw) - offset} bytes, header says {expected} "
            f"(shape {shape}); the file is truncated or damaged")
    return np.frombuffer(raw, dtype, offset=offset).reshape(shape).astype(dtype.newbyteorder("="))
