"""Kernel blocks: many kernel rows at once, ``K[B, :]`` and ``K[B, C]``.

Every kernel solver (SMO, IRWLS, chunking, decomposition) gets its kernel
values from this layer or from the single rows of :mod:`._rows`; the two
agree (exactly in float64, see below).  ThunderSVM and cuML compute kernel
values this way: a block of rows as one matrix-matrix product, then an
element-wise transform; a row at a time is a matrix-vector product, which
reads all of ``X`` for every row and is bound by memory bandwidth.

Compiled functions (callable from ``@njit`` solver loops)::

    kernel_block(kd, rows, out)             out[a, j] = K(x_rows[a], x_j)
    kernel_block_cols(kd, rows, cols, out)  out[a, c] = K(x_rows[a], x_cols[c])
    kernel_block_gemm, kernel_block_cols_gemm   the same, but float64 blocks of
                                            dense input as one DGEMM (not bit
                                            for bit the rows; see below)

``out`` is a C-contiguous float32 or float64 array, the caller's memory:
the blocks allocate only a scratch of ``len(rows) x d`` (plus
``len(cols) x d`` for :func:`kernel_block_cols`) values of the input's
dtype for dense input, one row of n float64 values for sparse input, and
nothing more.  A solver bounds a block's memory by the number of rows it
asks for: ``len(rows) * n * itemsize`` bytes for ``out``.

Decisions, by input kind and output dtype
-----------------------------------------
dense, float64 ``out``
    Row by row, each row the same BLAS matrix-vector product (``np.dot(X,
    x_i)``) as :func:`svmlab.kernels._rows.kernel_row`, so every block row
    equals the single row **bit for bit**.  (A GEMM sums the d products of
    an inner product in a different order than GEMV: the values would
    differ in the last bits, and ``cache_dtype="float64"`` promises exactly
    the iterates of the single-row code.)
dense, float32 ``out``
    One SGEMM on the float32 copy of ``X`` (``KernelData.dense32``, made by
    :meth:`Kernel.ensure_float32`; without it the rows are rounded to
    float32 on the fly): the gathered block ``X32[rows]`` (contiguous) times
    ``X32.T``, written straight into ``out``, then the transform, computed
    in float64 from the float32 inner product and the float64 squared
    norms (rbf: the vectorised exp of :func:`rbf_exp_row`), rounded once to
    float32.  Half the memory traffic and twice the FMA throughput of
    float64.  Blocks of fewer than :data:`SGEMM_MIN_ROWS` = 8 rows are
    single float32 rows, an SGEMV each (as fast there).  The values differ from the float64 row by
    the float32 rounding of the inputs and of the inner product's sum (an
    error of at most about ``(d + 2) u32 sum_k |x_ak x_jk|``, u32 = 2**-24),
    carried through the kernel's derivative, plus one float32 rounding of
    the value; ``tests/test_kernel_blocks.py`` checks exactly that bound.
sparse (CSR), either dtype
    Row by row: the row is scattered into a dense work vector, every
    stored entry of ``X`` (or of the rows ``cols``) is gathered once, the
    transform is applied to the float64 sum and the result stored (rounded
    once for float32).  float64 block rows equal :func:`kernel_row` bit for
    bit.
binary (bit-packed)
    The bit-packed path of :mod:`._rows`, kept as it is, row by row: the
    values are table lookups of exact integers, identical for every path
    (and exactly the float64 value rounded, for float32).
precomputed (a Gram matrix)
    Gathers from the stored matrix, row by row (rounded once for float32).

:func:`full_matrix` computes the whole kernel matrix at once (one GEMM for
dense input), for a solver that keeps every row (:func:`svmlab.kernels.cache.full_cache`).

A block costs a fraction of its rows computed one by one once it has a few
tens of rows (measurements: docs/decisions/26s07-kernel-values-exp-and-blocks.md).

BLAS and threads: numba's ``np.dot`` on contiguous 2-D float32/float64
arrays calls ``?gemm`` (and ``?gemv`` for a vector) through scipy's
``cython_blas`` (scipy's OpenBLAS), whose threads ``threadpoolctl`` limits;
:attr:`svmlab._stepping.SolverRun.blas_threads` sets that limit for a run
(the estimators' ``n_jobs``).  The Python method :meth:`Kernel.block` uses
numpy's ``matmul`` (numpy's OpenBLAS), which releases the GIL.
"""

from __future__ import annotations

import numpy as np

from .._jit import at_numba_import, interpreted_as, njit
from .._twins import gemm_nt

from . import _rows
from ._rows import (
    LINEAR,
    PRECOMPUTED,
    RBF,
    _precomputed_row,
    _binary_row,
    _shared_bits,
    _exp_reduced,  # noqa: F401  (re-exported: the vectorised exp lives with the rows)
    _table_index,
    _transform,
    is_float64,
    rbf_exp_row,
    rbf_exp_row64,
    kernel_row,
)

__all__ = ["kernel_block", "kernel_block_cols", "kernel_block_gemm", "kernel_block_cols_gemm",
           "block", "full_matrix", "rbf_exp_row", "rbf_exp_row64", "transform_block"]


#: fewest rows for which :func:`kernel_block` uses one SGEMM rather than an
#: SGEMV per row (below it a GEMM runs at GEMV speed)
SGEMM_MIN_ROWS = 8


@njit(cache=True)
def transform_block(out, sq_rows, sq_cols, ktype, gamma, coef0, degree):
    """Turn a block of inner products into kernel values, in place.

    Parameters
    ----------
    out : float32 or float64 array (m, p), C-contiguous
        On entry ``out[a, c] = <x_a, z_c>``; on return ``K(x_a, z_c)``,
        computed in float64 by :func:`svmlab.kernels._rows._transform` (the
        single rows' own transform) and rounded once to ``out``'s dtype --
        the rbf kernel by the vectorised exps: :func:`rbf_exp_row64` into
        float64 (``_transform``'s values bit for bit), :func:`rbf_exp_row`
        into float32 (relative error < 1e-13 before the rounding).
    sq_rows : float64 array (m,)
        ``||x_a||^2``.
    sq_cols : float64 array (p,)
        ``||z_c||^2``.
    ktype, gamma, coef0, degree
        The kernel, as in :class:`svmlab.kernels._rows.KernelData`.
    """
    if ktype == LINEAR:
        return
    m, p = out.shape
    if ktype == RBF:
        # the vectorised exp: float32 blocks rbf_exp_row, float64 blocks
        # rbf_exp_row64 (the single rows' values bit for bit)
        kbuf = np.empty(p, np.int64)
        if is_float64(out):
            for a in range(m):
                rbf_exp_row64(out[a], sq_rows[a], sq_cols, gamma, kbuf)
            return
        pbuf = np.empty(p)
        for a in range(m):
            rbf_exp_row(out[a], sq_rows[a], sq_cols, gamma, pbuf, kbuf)
        return
    for a in range(m):
        sa = sq_rows[a]
        o = out[a]
        for c in range(p):
            o[c] = _transform(np.float64(o[c]), sa, sq_cols[c], ktype, gamma, coef0, degree)


@interpreted_as(gemm_nt)
def _gemm_nt(a, b, out):
    """``out[...] = a @ b.T`` (one GEMM straight into ``out`` when ``out``
    has the dtype of ``a, b``, else through a temporary).
    Pure-Python body for ``NUMBA_DISABLE_JIT``; compiled code uses the
    overload below, which picks the branch by ``out``'s type."""
    if out.dtype == a.dtype:
        np.dot(a, b.T, out=out)
    else:
        out[...] = np.dot(a, b.T)


@at_numba_import
def _numba_side():
    # registered when numba is imported (the hand-over of svmlab._jit)
    from numba.extending import overload

    @overload(_gemm_nt)
    def _gemm_nt_ol(a, b, out):
        if out.dtype == a.dtype:
            def impl(a, b, out):
                np.dot(a, b.T, out)
        else:
            def impl(a, b, out):
                out[:, :] = np.dot(a, b.T)
        return impl


@njit(cache=True)
def _gather32(kd, idx):
    """The rows ``idx`` of the float32 copy of the dense data (or of the
    float64 data, rounded, when there is no float32 copy), contiguous."""
    d = kd.dense.shape[1]
    g = np.empty((idx.shape[0], d), np.float32)
    if kd.dense32.shape[0] == kd.dense.shape[0] and kd.dense32.shape[1] == d:
        for a in range(idx.shape[0]):
            g[a, :] = kd.dense32[idx[a]]
    else:
        for a in range(idx.shape[0]):
            src = kd.dense[idx[a]]
            for k in range(d):
                g[a, k] = np.float32(src[k])
    return g


@njit(cache=True)
def _full32(kd):
    """The float32 copy of the dense data (made on the spot when absent)."""
    if kd.dense32.shape[0] == kd.dense.shape[0] and kd.dense32.shape[1] == kd.dense.shape[1]:
        return kd.dense32
    return kd.dense.astype(np.float32)


@njit(cache=True)
def _gather_sq(sq, idx):
    r = np.empty(idx.shape[0])
    for a in range(idx.shape[0]):
        r[a] = sq[idx[a]]
    return r


@njit(cache=True)
def _sparse_row_cols(kd, i, cols, o, w):
    """``o[c] = K(x_i, x_cols[c])`` for CSR input, transform on the float64
    sum, one rounding into ``o``.  ``w``: a zero float64 scratch of length
    d, left zero."""
    a0, a1 = kd.indptr[i], kd.indptr[i + 1]
    for p in range(a0, a1):
        w[kd.indices[p]] = kd.data[p]
    sqi = kd.sqnorm[i]
    nc = cols.shape[0]
    if kd.ktype == RBF:
        # float64 sums, the vectorised exp (_transform's values), one rounding
        tb = np.empty(nc)
        sb = np.empty(nc)
        for c in range(nc):
            j = cols[c]
            s = 0.0
            for p in range(kd.indptr[j], kd.indptr[j + 1]):
                s += kd.data[p] * w[kd.indices[p]]
            tb[c] = s
            sb[c] = kd.sqnorm[j]
        rbf_exp_row64(tb, sqi, sb, kd.gamma, np.empty(nc, np.int64))
        for c in range(nc):
            o[c] = tb[c]
    else:
        for c in range(nc):
            j = cols[c]
            s = 0.0
            for p in range(kd.indptr[j], kd.indptr[j + 1]):
                s += kd.data[p] * w[kd.indices[p]]
            o[c] = _transform(s, sqi, kd.sqnorm[j], kd.ktype, kd.gamma, kd.coef0, kd.degree)
    for p in range(a0, a1):
        w[kd.indices[p]] = 0.0


@njit(cache=True)
def kernel_block(kd, rows, out):
    """Kernel rows of a block: ``out[a, j] = K(x_rows[a], x_j)`` for all j.

    Parameters
    ----------
    kd : KernelData
        The kernel and its training set (:class:`svmlab.kernels.Kernel`'s
        ``data``).
    rows : int64 array (m,)
        Training indices; any order, duplicates allowed, may be empty.
    out : float32 or float64 array (m, n), C-contiguous
        Receives the block; n is the number of training points.

    Returns nothing.  float64 rows equal :func:`kernel_row` bit for bit;
    float32 rows come from one SGEMM (dense input) or are the float64 row
    rounded once (sparse and binary input); see the module docstring.
    """
    m = rows.shape[0]
    if m == 0:
        return
    if kd.ktype == PRECOMPUTED or kd.binary or kd.sparse:
        if kd.ktype == PRECOMPUTED:
            for a in range(m):
                _precomputed_row(kd, rows[a], kd, out[a])
        elif kd.binary:
            nb = kd.bits.shape[1]
            for a in range(m):
                _binary_row(kd, rows[a], kd.bits, kd.bcount, kd.bwork, np.int64(0), nb,
                            out[a])
        else:
            n = out.shape[1]
            allc = np.arange(n)
            w = np.zeros(kd.work.shape[0])
            for a in range(m):
                _sparse_row_cols(kd, rows[a], allc, out[a], w)
        if kd.qround and is_float64(out):
            for a in range(m):
                _rows.round_to_float32(out[a], 0, out.shape[1])
        return
    if is_float64(out) or m < SGEMM_MIN_ROWS:
        # float64: the single rows bit for bit; a few float32 rows: SGEMV
        # per row is as fast (a GEMM with m < 8 rows runs at GEMV speed)
        for a in range(m):
            kernel_row(kd, rows[a], out[a])
        return
    g = _gather32(kd, rows)
    x32 = _full32(kd)
    _gemm_nt(g, x32, out)
    transform_block(out, _gather_sq(kd.sqnorm, rows), kd.sqnorm, kd.ktype, kd.gamma,
                    kd.coef0, kd.degree)


@njit(cache=True)
def kernel_block_cols(kd, rows, cols, out):
    """A kernel block over a subset of columns: ``out[a, c] = K(x_rows[a],
    x_cols[c])`` (for instance ``K[B, B]``).

    Parameters
    ----------
    kd : KernelData
        The kernel and its training set.
    rows : int64 array (m,)
        Training indices of the block's rows (duplicates allowed).
    cols : int64 array (p,)
        Training indices of its columns (duplicates allowed).
    out : float32 or float64 array (m, p), C-contiguous
        Receives the block.

    Returns nothing.  float64 rows equal ``kernel_row_against(kd, i, kd2,
    .)`` against the contiguous subset ``kd2`` of the rows ``cols``
    (:meth:`Kernel.subset_data`) bit for bit: the same matrix-vector
    product, on the gathered columns.
    """
    m = rows.shape[0]
    p = cols.shape[0]
    if m == 0 or p == 0:
        return
    if kd.ktype == PRECOMPUTED or kd.binary or kd.sparse:
        if kd.ktype == PRECOMPUTED:
            for a in range(m):
                g = kd.dense[rows[a]]
                o = out[a]
                for c in range(p):
                    o[c] = g[kd.cols[cols[c]]]
        elif kd.binary:
            bc = kd.bcount
            for a in range(m):
                i = rows[a]
                o = out[a]
                for c in range(p):
                    j = cols[c]
                    o[c] = kd.table[_table_index(kd.ktype, bc[i], bc[j],
                                                 _shared_bits(kd.brows, i, j))]
        else:
            w = np.zeros(kd.work.shape[0])
            for a in range(m):
                _sparse_row_cols(kd, rows[a], cols, out[a], w)
        if kd.qround and is_float64(out):
            for a in range(m):
                _rows.round_to_float32(out[a], 0, p)
        return
    sqc = _gather_sq(kd.sqnorm, cols)
    if is_float64(out):
        d = kd.dense.shape[1]
        xc = np.empty((p, d))
        kbuf = np.empty(p, np.int64)
        for c in range(p):
            xc[c, :] = kd.dense[cols[c]]
        for a in range(m):
            i = rows[a]
            o = out[a]
            o[:] = np.dot(xc, kd.dense[i])
            if kd.ktype == RBF:
                rbf_exp_row64(o, kd.sqnorm[i], sqc, kd.gamma, kbuf)
            elif kd.ktype != LINEAR:
                sqi = kd.sqnorm[i]
                for c in range(p):
                    o[c] = _transform(o[c], sqi, sqc[c], kd.ktype, kd.gamma, kd.coef0,
                                      kd.degree)
            if kd.qround:
                _rows.round_to_float32(o, 0, p)
        return
    g = _gather32(kd, rows)
    gc = _gather32(kd, cols)
    _gemm_nt(g, gc, out)
    transform_block(out, _gather_sq(kd.sqnorm, rows), sqc, kd.ktype, kd.gamma, kd.coef0,
                    kd.degree)


@njit(cache=True)
def _gather64(kd, idx):
    g = np.empty((idx.shape[0], kd.dense.shape[1]))
    for a in range(idx.shape[0]):
        g[a, :] = kd.dense[idx[a]]
    return g


@njit(cache=True)
def kernel_block_gemm(kd, rows, out):
    """:func:`kernel_block` with a float64 GEMM for dense input into a
    float64 ``out``: ``out[a, j] = K(x_rows[a], x_j)``, the inner products
    as one DGEMM (``X[rows] @ X.T``), so the values may differ from
    :func:`kernel_row` in the last bits (GEMM sums in another order; the
    difference is within ``d u64 sum_k |x_ak x_jk|``, tested at 1e-12
    relative).  For solvers that want float64 blocks fast and do not need
    them bit-identical to the rows (e.g. a sub-problem's ``K_BB``).  Any
    other input or dtype: exactly :func:`kernel_block`."""
    m = rows.shape[0]
    if m == 0:
        return
    if kd.binary or kd.sparse or kd.ktype == PRECOMPUTED or not is_float64(out):
        kernel_block(kd, rows, out)
        return
    _gemm_nt(_gather64(kd, rows), kd.dense, out)
    transform_block(out, _gather_sq(kd.sqnorm, rows), kd.sqnorm, kd.ktype, kd.gamma,
                    kd.coef0, kd.degree)
    if kd.qround:
        for a in range(m):
            _rows.round_to_float32(out[a], 0, out.shape[1])


@njit(cache=True)
def kernel_block_cols_gemm(kd, rows, cols, out):
    """:func:`kernel_block_cols` with a float64 GEMM for dense input into a
    float64 ``out`` (``X[rows] @ X[cols].T``; last-bit differences from the
    rows as in :func:`kernel_block_gemm`).  Any other input or dtype:
    exactly :func:`kernel_block_cols`."""
    if rows.shape[0] == 0 or cols.shape[0] == 0:
        return
    if kd.binary or kd.sparse or kd.ktype == PRECOMPUTED or not is_float64(out):
        kernel_block_cols(kd, rows, cols, out)
        return
    _gemm_nt(_gather64(kd, rows), _gather64(kd, cols), out)
    transform_block(out, _gather_sq(kd.sqnorm, rows), _gather_sq(kd.sqnorm, cols), kd.ktype,
                    kd.gamma, kd.coef0, kd.degree)
    if kd.qround:
        for a in range(rows.shape[0]):
            _rows.round_to_float32(out[a], 0, out.shape[1])


def block(kernel, rows, cols=None, *, dtype=np.float64, out=None):
    """The implementation of :meth:`svmlab.kernels.Kernel.block` (see there):
    ``K[rows, :]`` or ``K[rows, cols]`` of ``kernel``'s training set."""
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    n = kernel.n_samples
    rows = np.ascontiguousarray(np.asarray(rows, dtype=np.int64).ravel())
    if cols is not None:
        cols = np.ascontiguousarray(np.asarray(cols, dtype=np.int64).ravel())
    for name, idx in (("rows", rows), ("cols", cols)):
        if idx is not None and idx.size and (idx.min() < 0 or idx.max() >= n):
            raise IndexError(f"{name} must be training indices in [0, {n}).")
    shape = (rows.shape[0], n if cols is None else cols.shape[0])
    if out is None:
        out = np.empty(shape, dtype=dtype)
    elif (out.shape != shape or out.dtype != dtype or not out.flags.c_contiguous
          or not out.flags.writeable):
        raise ValueError(f"out must be a writeable C-contiguous {dtype} array of shape "
                         f"{shape}, got {out.dtype} {out.shape}.")
    d = kernel.data
    if 0 in shape:
        return out
    if dtype == np.float32 and not d.sparse and not d.binary and d.ktype != PRECOMPUTED:
        kernel.ensure_float32()
        d = kernel.data
        X32 = d.dense32
        Z = X32 if cols is None else X32[cols]
        np.matmul(X32[rows], Z.T, out=out)
        transform_block(out, np.ascontiguousarray(d.sqnorm[rows]),
                        d.sqnorm if cols is None else np.ascontiguousarray(d.sqnorm[cols]),
                        d.ktype, d.gamma, d.coef0, d.degree)
    elif cols is None:
        kernel_block(d, rows, out)
    else:
        kernel_block_cols(d, rows, cols, out)
    return out


def full_matrix(kernel, dtype=np.float64):
    """The whole kernel matrix ``K`` (n, n) of ``kernel``'s training set, as
    a new C-contiguous array of ``dtype`` (float32 or float64): for a solver
    that keeps every row when they all fit its memory (the full-kernel path,
    :func:`svmlab.kernels.cache.full_cache`).

    Dense input: one GEMM (``X @ X.T``; SGEMM on the float32 copy for
    float32, DGEMM for float64), then the transform of
    :func:`transform_block`.  The float64 values may differ from the single
    rows (one DGEMV each) in the last bits: the GEMM sums the d products of
    an inner product in another order, within ``d u64 sum_k |x_ak x_jk|``.
    float32 values are those of the float32 blocks (module docstring).
    CSR input: the sparse product ``X @ X.T`` in float64, then the
    transform (rounded once for float32).  Bit-packed binary input and a
    precomputed Gram matrix: :func:`kernel_block` (the rows' own values).
    Memory: the matrix, plus (CSR, float32) one float64 matrix of the same
    shape while it is made.
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    n = kernel.n_samples
    d = kernel.data
    K = np.empty((n, n), dtype=dtype)
    if n == 0:
        return K
    if d.binary or d.ktype == PRECOMPUTED:
        kernel_block(d, np.arange(n, dtype=np.int64), K)
        return K
    if d.sparse:
        X = kernel.X
        dots = np.asarray((X @ X.T).toarray(), dtype=np.float64)
        transform_block(dots, d.sqnorm, d.sqnorm, d.ktype, d.gamma, d.coef0, d.degree)
        if d.qround:
            dots = dots.astype(np.float32)  # LIBSVM's Qfloat (KernelData.qround)
        K[...] = dots
        return K
    if dtype == np.float32:
        kernel.ensure_float32()
        d = kernel.data
        np.matmul(d.dense32, d.dense32.T, out=K)
    else:
        np.matmul(d.dense, d.dense.T, out=K)
    transform_block(K, d.sqnorm, d.sqnorm, d.ktype, d.gamma, d.coef0, d.degree)
    if d.qround and dtype == np.float64:
        K[...] = K.astype(np.float32)  # LIBSVM's Qfloat (KernelData.qround)
    return K


_rows._BLOCK_IMPL[0] = block
