"""svmlab's CSR form: canonical CSR, float64 values, int32 ``indices`` and
``indptr`` -- what the compiled kernels take (their signatures are compiled
for int32, and LIBLINEAR, through scikit-learn, refuses int64 indices).

These live in the kernel room, below both the kernels and
:mod:`svmlab._validation` (which re-exports them), so that
:class:`svmlab.kernels.Kernel` and the estimators' validation convert a
sparse input the same way without an import cycle.  No function here
modifies the caller's matrix: a non-canonical one is copied.
"""

import numpy as np
import scipy.sparse as sp

#: the most stored values a CSR matrix with int32 ``indptr`` can hold
#: (module-level so that a test can lower it instead of allocating 2**31 values)
MAX_CSR32_NNZ = 2**31 - 1


def _refuse_too_many(nnz):
    if nnz > MAX_CSR32_NNZ:
        raise ValueError(
            f"The sparse input has {nnz:,} stored values; svmlab's CSR kernels use "
            f"32-bit indices and accept at most {MAX_CSR32_NNZ:,} (2**31 - 1). "
            "Train on a subset of the rows, or on a dask array with smaller "
            "blocks (the cutting-plane estimators).")


def to_csr32(X):
    """Canonical CSR copy with float64 data and int32 indices/indptr.

    (LIBLINEAR, through scikit-learn, refuses int64 indices, and the numba
    kernels are compiled for int32.)

    An input with more than ``MAX_CSR32_NNZ = 2**31 - 1`` stored values
    cannot be indexed by int32 and is refused with a ValueError naming the
    count.  For a sparse input the count is its ``nnz`` (stored values,
    explicit zeros and duplicates included), checked before anything is
    copied; for a dense input it is the non-zeros of the converted matrix.
    """
    if sp.issparse(X):
        _refuse_too_many(int(X.nnz))
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    _refuse_too_many(int(X.nnz))
    X.sum_duplicates()
    X.sort_indices()
    X.indices = X.indices.astype(np.int32, copy=False)
    X.indptr = X.indptr.astype(np.int32, copy=False)
    return X


def as_csr32(X):
    """``X`` (sparse) in svmlab's CSR form: over the caller's own arrays when
    they already are in it (:func:`canonical_csr32`), else a copy
    (:func:`to_csr32`).  The caller's matrix is never modified."""
    Xs = canonical_csr32(X)
    return to_csr32(X) if Xs is None else Xs


def canonical_csr32(X):
    """A new ``csr_matrix`` over the very arrays of ``X`` when ``X`` is
    already what :func:`to_csr32` would make of it, else None.

    "Already": CSR, float64 values and int32 ``indices``/``indptr`` in
    native byte order, each 1-D, C-contiguous and writeable (the compiled
    kernels' signature), ``indptr`` running from 0 to ``len(indices) ==
    len(data)`` without decreasing, and within every row column indices
    strictly increasing inside ``[0, n_features)`` (sorted, no duplicates).
    The test reads the arrays (a few passes over ``nnz`` int32 values,
    cheaper than the copy it spares); it does not ask scipy's cached
    ``has_canonical_format``, which a caller who edited ``indices`` may have
    left stale, and sets nothing on ``X``.

    The matrix returned shares the user's arrays: svmlab's solvers only read
    a validated X (tests/test_validation_no_copy.py fits them on a CSR input
    and compares its arrays before and after), so the copy, 0.4 ms on a9a
    and more on larger sets, is made only for a non-canonical input."""
    if not sp.issparse(X) or X.format != "csr":
        return None
    data, indices, indptr = X.data, X.indices, X.indptr
    n_rows, n_cols = X.shape
    for a, dt in ((data, np.float64), (indices, np.int32), (indptr, np.int32)):
        if (type(a) is not np.ndarray or a.dtype != dt or a.ndim != 1
                or not a.flags.c_contiguous or not a.flags.writeable):
            return None
    nnz = len(indices)
    _refuse_too_many(nnz)  # to_csr32's limit (a test lowers it)
    if len(indptr) != n_rows + 1 or len(data) != nnz or indptr[0] != 0 or indptr[-1] != nnz:
        return None
    if n_rows and np.any(indptr[1:] < indptr[:-1]):
        return None
    if nnz:
        if int(indices.min()) < 0 or int(indices.max()) >= n_cols:
            return None
        # strictly increasing within rows: every step up, except where a
        # new row starts (positions indptr[1:-1] that hold an entry)
        up = indices[1:] > indices[:-1]
        if not up.all():
            starts = indptr[1:-1]
            starts = starts[(starts > 0) & (starts < nnz)]
            up[starts - 1] = True
            if not up.all():
                return None
    return sp.csr_matrix((data, indices, indptr), shape=X.shape, copy=False)
