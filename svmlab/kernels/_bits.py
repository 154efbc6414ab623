"""Bit-packed binary inputs: rows as 64-bit words, inner products by popcount.

When every stored value of the training set is 1 (sparse binary data, such as
Platt's Adult and Web sets, or dense 0/1 data), ``<x_i, x_j>`` is the number
of features the two rows share.  Packing each row into ``ceil(d / 64)``
machine words makes that ``sum_w popcount(b_i[w] & b_j[w])``: a9a's 123
features are two words per row, w8a's 300 five, against ~14 and ~12
scattered loads per row for the CSR gather.  The results are exact integers,
so kernel values computed from them are bit-identical to the general path
(see :mod:`svmlab.kernels._rows`).

``popcount`` is LLVM's ``ctpop`` intrinsic under numba; with
``NUMBA_DISABLE_JIT=1`` it falls back to Python's ``int.bit_count``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._jit import at_numba_import, jit_disabled, njit

__all__ = ["popcount", "pack_rows", "is_binary"]


if jit_disabled():  # pragma: no cover - exercised by the no-JIT subprocess tests

    def popcount(x):
        return int(x).bit_count()

else:
    @at_numba_import
    def _numba_side():
        # the intrinsic is made when numba is imported (the hand-over of
        # svmlab._jit); the interpreted tier uses the twin below
        global _ctpop
        from numba import types
        from numba.extending import intrinsic

        @intrinsic
        def _ctpop(typingctx, x):
            if not isinstance(x, types.Integer):
                return None
            sig = types.int64(x)

            def codegen(context, builder, signature, args):
                c = builder.ctpop(args[0])
                return context.cast(builder, c, signature.args[0], types.int64)

            return sig, codegen

    def _popcount_twin(x):
        return int(x).bit_count()

    @njit(cache=True, inline="always", twin=_popcount_twin)
    def popcount(x):
        """Number of set bits of an integer (LLVM ``ctpop``)."""
        return _ctpop(x)


def is_binary(X):
    """True when every stored (sparse) or every (dense) value is 0 or 1 and
    at least one is 1 in the sparse case (the stored values must all be 1)."""
    if sp.issparse(X):
        return X.nnz > 0 and bool(np.all(X.data == 1.0))
    return X.size > 0 and bool(np.all((X == 0.0) | (X == 1.0)))


@njit(cache=True)
def _pack_csr(indptr, indices, data, n_words):
    n = indptr.shape[0] - 1
    bits = np.zeros((n, n_words), dtype=np.uint64)
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            if data[p] != 0.0:
                c = indices[p]
                bits[i, c // 64] |= np.uint64(1) << np.uint64(c % 64)
    return bits


def pack_rows(X):
    """``(n, ceil(d / 64))`` uint64 array with bit ``k % 64`` of word ``k // 64``
    of row i set when ``X[i, k] != 0``.  ``X`` is CSR or dense."""
    X = sp.csr_matrix(X)
    n_words = max(1, (X.shape[1] + 63) // 64)
    return _pack_csr(X.indptr, X.indices, np.asarray(X.data, dtype=np.float64), n_words)
