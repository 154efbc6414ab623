"""Kernel functions and kernel rows, dense or CSR, separate from any solver.

As in LIBSVM's ``svm.cpp``, the kernel matrix (this module) and its row cache
(:mod:`svmlab.kernels.cache`) live apart from the solvers, so SMO, IRWLS, chunking and
decomposition all read kernel values through the same code.

Kernels and parameters follow scikit-learn's :class:`~sklearn.svm.SVC`:

===========  ======================================
linear       ``<x, z>``
poly         ``(gamma <x, z> + coef0) ** degree``
rbf          ``exp(-gamma ||x - z||^2)``
sigmoid      ``tanh(gamma <x, z> + coef0)``
precomputed  ``G[i, j]``: the user's Gram matrix (see below)
===========  ======================================

``kernel="precomputed"``: ``X`` is the (n, n) Gram matrix of the training
set, ``X[i, j] = K(x_i, x_j)``, as :class:`sklearn.svm.SVC` takes it; row
i of the kernel is row i of ``X`` (LIBSVM's precomputed kernel reads the
same entries; no symmetry is imposed).  A sparse Gram matrix is densified
(a kernel matrix a solver reads row by row is dense in practice; SVC
densifies nothing, but its LIBSVM reads every entry too).  Rows, values,
subsets and blocks are gathers from the stored matrix: a point of a
precomputed kernel is known by its column (``KernelData.cols``).

``gamma="scale"`` means ``1 / (n_features * X.var())`` and ``gamma="auto"``
means ``1 / n_features``, computed on the training data exactly as SVC does.

Numba kernels take raw arrays (dense ``X``, or CSR ``indptr, indices, data``,
pynndescent-style).  A kernel row ``K(x_i, X)`` costs ``O(nnz(X))`` for CSR
input: ``x_i`` is scattered into a dense work vector once, then every stored
entry of ``X`` is visited once.

The numba-facing description of a kernel is the :class:`KernelData` named
tuple, which solvers pass straight into their ``@njit`` loops.

Rows are float64 or float32 (the type of ``out``).  float64 rows: a full
row is one matrix-vector product, a subset row sums each entry in feature
order (the two may differ in the last bits), and every rbf value takes the
same exp, :func:`exp_nonpos`.  Dense data with many zeros (at most
:data:`TRANSPOSE_MAX_DENSITY` nonzeros, MNIST-like images) keep their
transpose too, filled on first use (``n d`` more floats): a float64 row of
x_i with few nonzeros is then a sum over x_i's nonzero features of
contiguous rows of the transpose (:func:`feature_major_dots`), in feature
order, so that it equals the subset row's sums bit for bit; a subset row
sums over x_i's nonzeros only.  float32 rows (a float32 cache,
LIBSVM's ``Qfloat``) of dense input use the float32 copy of the data
(``KernelData.dense32``, :meth:`Kernel.ensure_float32`): SGEMV for a full
row, the vectorised :func:`dot32` entry by entry for a subset, and the
vectorised exp :func:`rbf_exp_row` for rbf rows; CSR and binary float32
rows are the float64 values rounded once.  Many rows at once:
:mod:`svmlab.kernels._blocks`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._jit import at_numba_import, njit

from ._bits import is_binary, pack_rows, popcount
from ._csr import as_csr32

__all__ = [
    "ALL_KERNELS",
    "KERNELS",
    "KernelData",
    "Kernel",
    "kernel_row",
    "kernel_row_against",
    "kernel_row_subset",
    "kernel_value",
    "resolve_gamma",
]

LINEAR, POLY, RBF, SIGMOID, PRECOMPUTED = 0, 1, 2, 3, 4
#: the kernel functions (what the estimators' ``kernel`` accepts by default)
KERNELS = {"linear": LINEAR, "poly": POLY, "rbf": RBF, "sigmoid": SIGMOID}
#: every kind :class:`Kernel` takes: the functions and a precomputed Gram matrix
ALL_KERNELS = {**KERNELS, "precomputed": PRECOMPUTED}


class KernelData(NamedTuple):
    """Raw-array description of a kernel over a training set (numba friendly).

    Exactly one of ``dense`` (n x d, C-contiguous float64) or the CSR triple
    ``(indptr, indices, data)`` carries the data; the other is an empty
    placeholder.  ``sqnorm[i] = ||x_i||^2``.  ``work`` is a length-d scratch
    vector used to scatter a sparse row.

    ``binary`` is True when the inputs are binary and bit-packed (see
    :mod:`svmlab.kernels._bits`): ``bits[w, i]`` is word w of row i (one contiguous
    "plane" per word, so a whole kernel row streams through memory) and
    ``brows[i, w]`` the same words row by row (one cache line per row, for
    kernel values and rows over a subset),
    ``bcount[i]`` the number of ones of row i, ``bwork`` an int32 scratch of
    length n, and ``table`` the kernel as a function
    of an integer (the squared distance ``|x_i|^2 + |x_j|^2 - 2 <x_i, x_j>``
    for rbf, the inner product for the other kernels).  Otherwise these are
    empty placeholders.

    ``dense32`` is a float32 copy of ``dense`` (n x d, C-contiguous) for the
    single-precision kernel rows and blocks (float32 cache rows, see
    :mod:`svmlab.kernels._blocks`), made by :meth:`Kernel.ensure_float32`;
    an empty (0 x 0) placeholder otherwise (float32 rows are then computed
    from ``dense`` and rounded).

    A precomputed kernel (``ktype == PRECOMPUTED``) keeps the user's Gram
    matrix in ``dense``: row t is ``K(x_t, .)`` over every training point,
    and ``cols[t]`` is the training index of point t (its column), so
    ``K(x_i, z_p) = dense[i, cols_z[p]]``; ``cols`` is ``arange(n)`` for the
    training set and the chosen indices for a subset
    (:meth:`Kernel.subset_data`).  ``sqnorm`` then holds the diagonal.
    Empty for the other kernels.

    ``denseT`` (d x n, C-contiguous float64) is the transpose of ``dense``
    for the feature-major row products of data with many zeros
    (:func:`transposed_ready`), filled on first use (``tstate[0]`` becomes
    1), an empty (0 x 0) placeholder when the data have too few zeros
    (:data:`TRANSPOSE_MAX_DENSITY`) or are not dense.

    ``qround`` True: every kernel value this module and
    :mod:`svmlab.kernels._blocks` write into a float64 row, block or single
    value is computed in float64 and then rounded to the nearest float32
    (``np.float64(np.float32(v))``), LIBSVM's ``Qfloat``: ``Q`` computed
    in double, stored as float.  The drop-in classes ask for it
    (:class:`Kernel`'s ``qfloat``), so that they follow LIBSVM's steps
    while their rows stay float64 (float64 storage and arithmetic, the
    feature-major products included); :meth:`Kernel.diag` stays unrounded
    (LIBSVM's ``QD`` is double).  float32 rows are rounded once anyway.
    docs/decisions/36a01-qfloat-rounded-float64-rows.md.
    """

    sparse: bool
    dense: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    sqnorm: np.ndarray
    ktype: int
    gamma: float
    coef0: float
    degree: float
    work: np.ndarray
    binary: bool = False
    bits: np.ndarray = np.zeros((0, 0), np.uint64)
    brows: np.ndarray = np.zeros((0, 0), np.uint64)
    bcount: np.ndarray = np.zeros(0, np.int32)
    table: np.ndarray = np.zeros(0)
    bwork: np.ndarray = np.zeros(0, np.int32)
    dense32: np.ndarray = np.zeros((0, 0), np.float32)
    cols: np.ndarray = np.zeros(0, np.int64)
    denseT: np.ndarray = np.zeros((0, 0))
    tstate: np.ndarray = np.zeros(1, np.int64)
    qround: bool = False


def is_dense_data(kd):
    """Whether kernel values are a transform of inner products of dense
    rows (``kd.dense``), the case the BLAS blocks serve (not CSR, not
    bit-packed, not a precomputed Gram matrix)."""
    return not kd.sparse and not kd.binary and kd.ktype != PRECOMPUTED


@njit(cache=True)
def _precomputed_row(kd, i, kd2, out):
    """``out[p] = K(x_i, z_p)`` of a precomputed kernel: row i of the Gram
    matrix at the columns of ``kd2``'s points (rounded once into a float32
    ``out``)."""
    row = kd.dense[i]
    c = kd2.cols
    for p in range(out.shape[0]):
        out[p] = row[c[p]]


def is_float64(a):
    """Whether array ``a`` holds float64 values (in compiled code a
    compile-time constant, so a branch on it costs nothing)."""
    return a.dtype == np.float64


@at_numba_import
def _numba_side():
    # numba imported at the hand-over (svmlab._jit): the overload of
    # is_float64 is registered then, before any kernel compiles
    from numba import types
    from numba.extending import overload

    @overload(is_float64)
    def _is_float64_ol(a):
        flag = isinstance(a, types.Array) and a.dtype == types.float64
        return lambda a: flag


@njit(cache=True)
def round_to_float32(out, lo, hi):
    """``out[j] = float64(float32(out[j]))`` for ``lo <= j < hi``, in place
    (LIBSVM's ``Qfloat`` rounding of a float64 row, vectorised; the
    row functions call it when ``KernelData.qround``).

    Parameters
    ----------
    out : float64 array
        Kernel values, rounded in place.
    lo, hi : int
        The range of entries rounded.
    """
    for j in range(lo, hi):
        out[j] = np.float64(np.float32(out[j]))


@njit(cache=True)
def _round_subset(out, idx, m):
    """:func:`round_to_float32` of the entries ``idx[:m]`` of ``out``.

    Parameters
    ----------
    out : float64 array
        Kernel values, rounded in place at ``idx[:m]``.
    idx : int64 array (>= m,)
        The entries.
    m : int
        How many of ``idx``.
    """
    for t in range(m):
        j = idx[t]
        out[j] = np.float64(np.float32(out[j]))


@njit(cache=True, inline="always")
def _transform(dot, sqi, sqj, ktype, gamma, coef0, degree):
    if ktype == LINEAR:
        return dot
    elif ktype == RBF:
        d2 = sqi + sqj - 2.0 * dot
        if d2 < 0.0:
            d2 = 0.0
        return exp_nonpos(-gamma * d2)
    elif ktype == POLY:
        return (gamma * dot + coef0) ** degree
    else:
        return math.tanh(gamma * dot + coef0)


_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238  # ln 2, high part (its last 32 bits are 0)
_LN2_LO = 1.9082149292705877e-10  # ln 2 - _LN2_HI
#: 1/k! for k = 0..11, Horner coefficients of exp(r) on |r| <= ln(2)/2
_EXP_C = (1.0, 1.0, 0.5, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320,
          1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800)


@njit(cache=True, inline="always")
def _exp_reduced(x):
    """``(p, k)`` with ``exp(x) = p * 2**k`` for ``-700 <= x <= 0``:
    Cody-Waite reduction ``x = k ln2 + r``, ``|r| <= ln(2)/2``, and the
    degree-11 Taylor polynomial of exp(r) (truncation error below
    ``0.35**12 / 12! < 7e-15``).  Branch-free, so LLVM vectorises a loop
    over it (``math.exp`` is a scalar libm call)."""
    k = np.floor(x * _LOG2E + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = _EXP_C[11]
    p = p * r + _EXP_C[10]
    p = p * r + _EXP_C[9]
    p = p * r + _EXP_C[8]
    p = p * r + _EXP_C[7]
    p = p * r + _EXP_C[6]
    p = p * r + _EXP_C[5]
    p = p * r + _EXP_C[4]
    p = p * r + _EXP_C[3]
    p = p * r + _EXP_C[2]
    p = p * r + _EXP_C[1]
    p = p * r + _EXP_C[0]
    return p, k


#: 1/k! for k = 0..13: the float64 kernel values' exp (:func:`exp_nonpos`)
_EXP64_C = (1.0, 1.0, 0.5, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320,
            1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600,
            1.0 / 6227020800)
#: 2**-j for j = 0..1022 (exact), the scaling of exp_nonpos without a libm call
_POW2_NEG = np.ldexp(1.0, -np.arange(1023))
#: below this argument exp_nonpos returns 0 (exp(-708) ~ 3.3e-308 is the
#: smallest value whose 2**k scaling stays a normal float64)
EXP_MIN = -708.0


@njit(cache=True, inline="always")
def _exp_reduced64(x):
    """``(p, k)`` with ``exp(x) = p * 2**k`` for ``EXP_MIN <= x <= 0``, for
    float64 results: the reduction of :func:`_exp_reduced` and the degree-13
    Taylor polynomial (truncation ``0.35**14 / 14! < 5e-18``, far below one
    float64 ulp; with the roundings of Horner's scheme the result is within
    a few ulp of the correctly rounded exp, tested against ``math.exp``)."""
    k = np.floor(x * _LOG2E + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = _EXP64_C[13]
    p = p * r + _EXP64_C[12]
    p = p * r + _EXP64_C[11]
    p = p * r + _EXP64_C[10]
    p = p * r + _EXP64_C[9]
    p = p * r + _EXP64_C[8]
    p = p * r + _EXP64_C[7]
    p = p * r + _EXP64_C[6]
    p = p * r + _EXP64_C[5]
    p = p * r + _EXP64_C[4]
    p = p * r + _EXP64_C[3]
    p = p * r + _EXP64_C[2]
    p = p * r + _EXP64_C[1]
    p = p * r + _EXP64_C[0]
    return p, k


@njit(cache=True, inline="always")
def exp_nonpos(x):
    """``exp(x)`` for ``x <= 0``, the rbf kernel's exp for every float64
    kernel value (the single values of :func:`_transform`, and, as the
    vectorised :func:`rbf_exp_row64`, the rows and blocks: the same
    operations in the same order, so every path gives the same value bit for
    bit, compiled or not).  ``p * 2**k`` from :func:`_exp_reduced64`; 0 below
    :data:`EXP_MIN` (the true value is then under 3.3e-308).

    Reason: libm's ``exp`` is a scalar call; LLVM vectorises this
    polynomial over a row, where the float64 rows of small dense sets spend
    most of their kernel time (docs/decisions/26s07-kernel-values-exp-and-blocks.md)."""
    if x < EXP_MIN:
        return 0.0
    p, k = _exp_reduced64(x)
    return p * _POW2_NEG[-int(k)]


def _rbf_exp_row64_twin(o, sa, sq_cols, gamma, kbuf):
    """:func:`rbf_exp_row64`'s interpreted twin (:mod:`svmlab._jit`): the same
    element-wise operations on whole arrays (an element-wise loop has no
    order to change, so the values are the kernel's bit for bit)."""
    p = o.shape[0]
    d2 = sa + sq_cols[:p] - 2.0 * o
    d2 = np.where(d2 > 0.0, d2, 0.0)
    x = -gamma * d2
    under = x < EXP_MIN
    x = np.where(x > EXP_MIN, x, EXP_MIN)
    k = np.floor(x * _LOG2E + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    q = np.full(p, _EXP64_C[13])
    for j in range(12, -1, -1):
        q = q * r + _EXP64_C[j]
    q[under] = 0.0
    kbuf[:p] = (k.astype(np.int64) + 1023) << 52
    o[:] = q * kbuf[:p].view(np.float64)


@njit(cache=True, twin=_rbf_exp_row64_twin)
def rbf_exp_row64(o, sa, sq_cols, gamma, kbuf):
    """``o[c] = exp_nonpos(-gamma * max(sa + sq_cols[c] - 2 o[c], 0))`` in
    place, for a float64 row of inner products: :func:`_transform`'s rbf
    value bit for bit (the same operations; the scaling by ``2**k`` is exact
    either way), in two vectorisable passes (polynomial and exponent bits
    ``(k + 1023) << 52``, then the scaling).

    Parameters
    ----------
    o : float64 array (p,)
        Inner products on entry, kernel values on return.
    sa : float
        ``||x_a||^2`` of the row.
    sq_cols : float64 array (p,)
        ``||z_c||^2`` of the columns.
    gamma : float
    kbuf : int64 array (>= p,)
        Scratch.
    """
    p = o.shape[0]
    for c in range(p):
        d2 = sa + sq_cols[c] - 2.0 * o[c]
        d2 = d2 if d2 > 0.0 else 0.0
        x = -gamma * d2
        under = x < EXP_MIN
        x = x if x > EXP_MIN else EXP_MIN
        pc, k = _exp_reduced64(x)
        o[c] = 0.0 if under else pc
        kbuf[c] = (np.int64(k) + 1023) << 52
    scale = kbuf[:p].view(np.float64)
    for c in range(p):
        o[c] = o[c] * scale[c]


@njit(cache=True)
def rbf_exp_row(o, sa, sq_cols, gamma, pbuf, kbuf):
    """``o[c] = exp(-gamma * max(sa + sq_cols[c] - 2 o[c], 0))`` in place, for
    a float32 block row: the rbf transform of the float32 blocks, in two
    vectorisable passes (polynomial and exponent, then the scaling by
    ``2**k``, made from the exponent bits of a float64: ``(k + 1023) <<
    52``).  Relative error below 1e-13 against ``math.exp`` (tested), far
    under the float32 rounding that follows.  Arguments below -700 (values
    under 1e-304, which round to 0 in float32) are clamped to -700.

    Parameters
    ----------
    o : float32 array (p,)
        Inner products on entry, kernel values on return.
    sa : float
        ``||x_a||^2`` of the block row.
    sq_cols : float64 array (p,)
        ``||z_c||^2`` of the columns.
    gamma : float
    pbuf : float64 array (>= p,), kbuf : int64 array (>= p,)
        Scratch.
    """
    p = o.shape[0]
    for c in range(p):
        d2 = sa + sq_cols[c] - 2.0 * np.float64(o[c])
        d2 = d2 if d2 > 0.0 else 0.0
        x = -gamma * d2
        x = x if x > -700.0 else -700.0
        pc, k = _exp_reduced(x)
        pbuf[c] = pc
        kbuf[c] = (np.int64(k) + 1023) << 52
    scale = kbuf.view(np.float64)
    for c in range(p):
        o[c] = pbuf[c] * scale[c]


@njit(cache=True, inline="always")
def row_dot(sparse, dense, indptr, indices, data, i, j):
    """``<x_i, x_j>`` for two rows of the training data, read from the raw
    arrays (the linear kernel's value; every other kernel transforms it).
    The one home of this dot: :func:`kernel_value` and Platt's SMO loop
    (``svmlab.smo._platt``, folded linear kernel) both call it.

    Parameters
    ----------
    sparse : bool
        True: the data are the CSR arrays ``indptr, indices, data`` (indices
        sorted within each row); False: the rows of ``dense``.
    dense : float64 array (n, d)
        The dense data (ignored when ``sparse``).
    indptr, indices, data : int64, int32/int64, float64 arrays
        The CSR arrays (ignored unless ``sparse``).
    i, j : int
        The two rows.

    Returns
    -------
    float
        The sum of ``x_ik x_jk`` in increasing k: for CSR a merge of the two
        sorted index lists, O(nnz_i + nnz_j).
    """
    if sparse:
        a1 = indptr[i + 1]
        b1 = indptr[j + 1]
        p, q, s = indptr[i], indptr[j], 0.0
        while p < a1 and q < b1:
            u = indices[p]
            v = indices[q]
            if u == v:
                s += data[p] * data[q]
                p += 1
                q += 1
            elif u < v:
                p += 1
            else:
                q += 1
        return s
    s = 0.0
    for k in range(dense.shape[1]):
        s += dense[i, k] * dense[j, k]
    return s


@njit(cache=True, inline="always")
def _shared_bits(brows, i, j):
    """<x_i, x_j> of two bit-packed binary rows: the number of shared ones
    (``brows`` is the row-major layout of :class:`KernelData`)."""
    c = 0
    for w in range(brows.shape[1]):
        c += popcount(brows[i, w] & brows[j, w])
    return c


@njit(cache=True, inline="always")
def _table_index(ktype, ci, cj, c):
    if ktype == RBF:
        return ci + cj - 2 * c
    return c


@njit(cache=True)
def kernel_table(ktype, gamma, coef0, degree, max_count):
    """Kernel values of binary inputs as a function of one integer
    (:class:`KernelData`'s ``table``).  Computed by :func:`_transform` itself,
    so a value read from the table equals the one the general path computes
    from the same (exact, integer) inner product and norms."""
    table = np.empty(2 * max_count + 1)
    for k in range(table.shape[0]):
        if ktype == RBF:
            table[k] = _transform(0.0, float(k), 0.0, ktype, gamma, coef0, degree)
        else:
            table[k] = _transform(float(k), 0.0, 0.0, ktype, gamma, coef0, degree)
    return table


@njit(cache=True)
def _binary_row(kd, i, planes, bcount, cnt, lo, hi, out):
    """``out[p] = K(x_i, z_{lo+p})`` for the points ``lo..hi-1`` of a
    bit-packed set (``planes``, ``bcount``: the ``bits`` and ``bcount`` of
    ``kd`` itself or of a subset of it, :meth:`Kernel.subset_data`), binary
    inputs, ``x_i`` a row of ``kd``.  Word plane by word plane, only the
    planes where ``x_i`` has ones: shared-ones counts accumulate in the
    scratch ``cnt`` (length >= hi - lo; contiguous, vectorisable loops), the
    last plane is fused with the table lookup.  (A column range rather than
    a sliced set: a slice of the planes would be a second array type, and a
    second compiled copy of every row function.)"""
    bc = bcount[lo:hi]
    table = kd.table
    n = hi - lo
    xi = kd.brows[i]
    rbf = kd.ktype == RBF
    last = -1
    for w in range(planes.shape[0]):
        if xi[w] != 0:
            last = w
    ci = kd.bcount[i]
    first = True
    for w in range(last):
        b = xi[w]
        if b == 0:
            continue
        pw = planes[w, lo:hi]
        if first:
            for j in range(n):
                cnt[j] = popcount(b & pw[j])
            first = False
        else:
            for j in range(n):
                cnt[j] += popcount(b & pw[j])
    if last < 0:  # x_i = 0
        for j in range(n):
            out[j] = table[ci + bc[j]] if rbf else table[0]
        return
    b = xi[last]
    pw = planes[last, lo:hi]
    if rbf:
        if first:
            for j in range(n):
                out[j] = table[ci + bc[j] - 2 * popcount(b & pw[j])]
        else:
            for j in range(n):
                out[j] = table[ci + bc[j] - 2 * (cnt[j] + popcount(b & pw[j]))]
    else:
        if first:
            for j in range(n):
                out[j] = table[popcount(b & pw[j])]
        else:
            for j in range(n):
                out[j] = table[cnt[j] + popcount(b & pw[j])]


@njit(cache=True)
def _binary_row_subset(kd, i, idx, m, out):
    """:func:`_binary_row` for ``j in idx[:m]`` only (the whole row, which
    streams, when the subset is more than a quarter of it)."""
    brows = kd.brows
    if 4 * m >= brows.shape[0]:
        _binary_row(kd, i, kd.bits, kd.bcount, kd.bwork, np.int64(0), kd.bits.shape[1], out)
        return
    bc = kd.bcount
    ci = bc[i]
    nw = brows.shape[1]
    nz = np.empty(nw, np.int64)
    bi = np.empty(nw, np.uint64)
    k = 0
    for w in range(nw):
        if brows[i, w] != 0:
            nz[k] = w
            bi[k] = brows[i, w]
            k += 1
    for t in range(m):
        j = idx[t]
        c = 0
        for q in range(k):
            c += popcount(bi[q] & brows[j, nz[q]])
        out[j] = kd.table[_table_index(kd.ktype, ci, bc[j], c)]


@njit(cache=True)
def kernel_value(kd, i, j):
    """K(x_i, x_j) for two training points (rounded to float32 precision
    when ``kd.qround``)."""
    if kd.ktype == PRECOMPUTED:
        v = kd.dense[i, kd.cols[j]]
    elif kd.binary:
        c = _shared_bits(kd.brows, i, j)
        v = kd.table[_table_index(kd.ktype, kd.bcount[i], kd.bcount[j], c)]
    else:
        dot = row_dot(kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data, i, j)
        v = _transform(dot, kd.sqnorm[i], kd.sqnorm[j], kd.ktype, kd.gamma, kd.coef0,
                       kd.degree)
    if kd.qround:
        return np.float64(np.float32(v))
    return v


@njit(cache=True)
def kernel_row(kd, i, out):
    """Fill ``out[j] = K(x_i, x_j)`` for every training point j.

    O(n d) for dense input (a BLAS matrix-vector product: DGEMV for a
    float64 ``out``, SGEMV on the float32 copy for a float32 ``out``),
    O(nnz) for CSR, O(n d / 64) for bit-packed binary input.  Dense input
    goes straight to :func:`_dense_row_arrays` (no chain of calls that each
    take ``kd``: decision record 33s01).  ``kd.qround``: a float64 row
    rounded to float32 precision (:class:`KernelData`).
    """
    if kd.ktype != PRECOMPUTED and not kd.binary and not kd.sparse:
        _dense_row_arrays(kd.dense, kd.dense32, i, kd.sqnorm[i], kd.dense, kd.dense32,
                          kd.denseT, kd.tstate, kd.sqnorm, kd.ktype, kd.gamma, kd.coef0,
                          kd.degree, out)
        if kd.qround and is_float64(out):
            round_to_float32(out, 0, out.shape[0])
    else:
        kernel_row_against(kd, i, kd, out)


@njit(cache=True)
def kernel_row_against(kd, i, kd2, out):
    """Fill ``out[p] = K(x_i, z_p)`` for every row z_p of ``kd2``, where
    ``x_i`` is row i of ``kd`` and ``kd2`` holds the same kind of data with
    the same kernel (``kd`` itself, or a subset made by
    :meth:`Kernel.subset_data`, whose rows are then contiguous in memory).
    ``kd.qround``: a float64 row rounded to float32 precision."""
    if kd.ktype == PRECOMPUTED:
        _precomputed_row(kd, i, kd2, out)
    elif kd.binary:
        _binary_row(kd, i, kd2.bits, kd2.bcount, kd2.bwork, np.int64(0), kd2.bits.shape[1],
                    out)
    elif kd.sparse:
        _sparse_row_against(kd, i, kd2, out)
    else:
        _dense_row_against(kd, i, kd2, out)
    if kd.qround and is_float64(out):
        round_to_float32(out, 0, out.shape[0])


@njit(cache=True)
def _sparse_row_against(kd, i, kd2, out):
    """:func:`kernel_row_against` for CSR input: ``x_i`` scattered into the
    work vector, every stored entry of ``kd2`` gathered once; the transform
    is applied to the float64 sum (rbf: the vectorised exp, _transform's
    values), rounded once into a float32 ``out``."""
    n = out.shape[0]
    sqi = kd.sqnorm[i]
    sq2 = kd2.sqnorm
    w = kd2.work
    a0, a1 = kd.indptr[i], kd.indptr[i + 1]
    for p in range(a0, a1):
        w[kd.indices[p]] = kd.data[p]
    ip, ix, dt = kd2.indptr, kd2.indices, kd2.data
    if kd.ktype == RBF:
        tb = np.empty(n)
        for j in range(n):
            s = 0.0
            for p in range(ip[j], ip[j + 1]):
                s += dt[p] * w[ix[p]]
            tb[j] = s
        rbf_exp_row64(tb, sqi, sq2, kd.gamma, np.empty(n, np.int64))
        out[:] = tb
    else:
        for j in range(n):
            s = 0.0
            for p in range(ip[j], ip[j + 1]):
                s += dt[p] * w[ix[p]]
            out[j] = _transform(s, sqi, sq2[j], kd.ktype, kd.gamma, kd.coef0, kd.degree)
    for p in range(a0, a1):
        w[kd.indices[p]] = 0.0


#: dense data whose fraction of nonzero entries is at most this keep their
#: transpose (``KernelData.denseT``) for the feature-major row products, and
#: a row with at most this fraction of nonzeros is computed through it
#: (docs/decisions/32m01-feature-major-rows-of-sparse-dense-data.md)
TRANSPOSE_MAX_DENSITY = 0.75
#: ... and whose transpose takes at most this many bytes (``8 n d``): the
#: transpose doubles the memory of the data, so above this (a 60000 x 784
#: MNIST training set: 376 MB) the rows stay GEMVs; sets that large take the
#: blocked solver's float32 blocks, which never read the transpose
TRANSPOSE_MAX_BYTES = 256 << 20


def keeps_transpose(n, d, nnz):
    """Whether dense float64 data of ``n`` rows, ``d`` features and ``nnz``
    nonzero entries keep a transpose (:data:`TRANSPOSE_MAX_DENSITY`,
    :data:`TRANSPOSE_MAX_BYTES`): one rule for :class:`Kernel` and the
    one-vs-one driver's pair kernels (:mod:`svmlab.smo._ovo`, which states it in
    compiled code)."""
    size = n * d
    return 0 < size and 8 * size <= TRANSPOSE_MAX_BYTES and nnz <= TRANSPOSE_MAX_DENSITY * size


@njit(cache=True)
def transposed_ready(kd):
    """Whether ``kd.denseT`` holds the transpose of ``kd.dense``: False when
    it is the empty placeholder; filled here on the first call (32 x 32
    tiles), then ``kd.tstate[0] = 1``.  A kernel whose rows are never
    computed (a one-vs-one pair served from the shared store) never pays
    for the copy.  Two threads sharing the data may both fill it: they write
    the same values, and the state is set only after a complete fill."""
    return _transposed_ready_arrays(kd.dense, kd.denseT, kd.tstate)


@njit(cache=True)
def _transposed_ready_arrays(X, XT, tstate):
    """:func:`transposed_ready` on the three arrays it reads (the row paths
    call this one: a call that takes the whole :class:`KernelData` pays a
    reference-count update per array field, decision record 33s01)."""
    n, d = X.shape
    if n == 0 or XT.shape[0] != d or XT.shape[1] != n:
        return False
    if tstate[0] == 0:
        for i0 in range(0, n, 32):
            i1 = min(i0 + 32, n)
            for f0 in range(0, d, 32):
                f1 = min(f0 + 32, d)
                for f in range(f0, f1):
                    for i in range(i0, i1):
                        XT[f, i] = X[i, f]
        tstate[0] = 1
    return True


@njit(cache=True, inline="always")
def _nonzeros(x, nz):
    """Positions of the nonzero entries of ``x`` into ``nz``, in increasing
    order; returns how many."""
    k = 0
    for f in range(x.shape[0]):
        if x[f] != 0.0:
            nz[k] = f
            k += 1
    return k


@njit(cache=True, inline="always")
def _few_nonzeros(k, d):
    """Whether a row with k nonzeros of d is sparse enough for the
    products over its nonzeros (:data:`TRANSPOSE_MAX_DENSITY`)."""
    return k <= TRANSPOSE_MAX_DENSITY * d


@njit(cache=True)
def feature_major_dots(x, nz, k, XT, lo, hi, out):
    """``out[t] = <x, z_{lo+t}>`` for ``t < hi - lo``, where ``XT`` is the
    transpose of the rows z (feature-major, d x n) and ``nz[:k]`` the
    nonzero positions of ``x`` in increasing order.

    Each entry is the sequential float64 sum over the features in
    increasing order with the zero products of ``x`` left out: bit for bit
    the per-entry sums of the subset rows (:func:`_dense_sums`; adding a
    product ``0 * z`` of finite z changes no sum).  The work is
    ``k (hi - lo)`` multiply-adds over contiguous rows of ``XT`` (four
    features per pass over ``out``, vectorised across the entries), against
    ``d (hi - lo)`` for the GEMV: MNIST's rows have about 18% nonzeros."""
    m = hi - lo
    for t in range(m):
        out[t] = 0.0
    q = 0
    while q + 4 <= k:
        f0, f1, f2, f3 = nz[q], nz[q + 1], nz[q + 2], nz[q + 3]
        a0, a1, a2, a3 = x[f0], x[f1], x[f2], x[f3]
        r0 = XT[f0, lo:hi]
        r1 = XT[f1, lo:hi]
        r2 = XT[f2, lo:hi]
        r3 = XT[f3, lo:hi]
        for t in range(m):
            out[t] = (((out[t] + a0 * r0[t]) + a1 * r1[t]) + a2 * r2[t]) + a3 * r3[t]
        q += 4
    while q < k:
        f0 = nz[q]
        a0 = x[f0]
        r0 = XT[f0, lo:hi]
        for t in range(m):
            out[t] += a0 * r0[t]
        q += 1


@njit(cache=True)
def _transposed_dots(kd, i, kd2, lo, hi, out):
    """``out[t] = <x_i, z_{lo+t}>`` (x_i row i of ``kd``, z the rows of
    ``kd2``) through ``kd2``'s transpose when it has one and x_i has few
    nonzeros (:func:`feature_major_dots`); returns False, ``out``
    untouched, otherwise."""
    return _transposed_dots_arrays(kd.dense[i], kd2.dense, kd2.denseT, kd2.tstate, lo, hi, out)


@njit(cache=True)
def _transposed_dots_arrays(x, X2, XT2, tstate2, lo, hi, out):
    """:func:`_transposed_dots` with ``x = x_i`` and ``kd2``'s arrays."""
    if not _transposed_ready_arrays(X2, XT2, tstate2):
        return False
    d = x.shape[0]
    nz = np.empty(d, np.int64)
    k = _nonzeros(x, nz)
    if not _few_nonzeros(k, d):
        return False
    feature_major_dots(x, nz, k, XT2, lo, hi, out)
    return True


@njit(cache=True)
def _finish64(kd, sqi, sq2, out):
    """Inner products in the float64 ``out`` to kernel values in place
    (rbf: the vectorised exp :func:`rbf_exp_row64`)."""
    _finish64_arrays(kd.ktype, kd.gamma, kd.coef0, kd.degree, sqi, sq2, out)


@njit(cache=True)
def _finish64_arrays(ktype, gamma, coef0, degree, sqi, sq2, out):
    """:func:`_finish64` with the kernel's scalars."""
    n = out.shape[0]
    if ktype == RBF:
        rbf_exp_row64(out, sqi, sq2, gamma, np.empty(n, np.int64))
    elif ktype != LINEAR:
        for j in range(n):
            out[j] = _transform(out[j], sqi, sq2[j], ktype, gamma, coef0, degree)


@njit(cache=True)
def kernel_row_range(kd, g, lo, hi, out):
    """``out[p] = K(x_g, x_{lo+p})`` for the rows ``lo..hi-1`` of ``kd``
    (one class of a class-ordered set: the one-vs-one store's class blocks,
    :class:`svmlab.kernels.cache.SharedRowStore`).  Bit-packed rows by
    their column range; dense float64 rows of data with many zeros through
    the transpose (:func:`feature_major_dots`); other dense rows by the
    GEMV on the rows' slice (:func:`_dense_row_arrays`'s arithmetic on the
    slices, decision record 33s01); otherwise (CSR, precomputed)
    :func:`kernel_row_against` with a view of those rows as the other side
    (a GEMV for dense rows; the view's arrays keep ``kd``'s types, so no
    second compiled copy of the row functions is made; every field is
    passed, as numba fills in no default of a named tuple).  ``kd.qround``:
    a float64 row rounded to float32 precision."""
    if kd.binary:
        _binary_row(kd, g, kd.bits, kd.bcount, kd.bwork, lo, hi, out)
        if kd.qround and is_float64(out):
            round_to_float32(out, 0, out.shape[0])
        return
    if not kd.sparse and kd.ktype != PRECOMPUTED and is_float64(out):
        # (on kd's arrays, not kd: decision record 33s01)
        X = kd.dense
        if not _transposed_dots_arrays(X[g], X, kd.denseT, kd.tstate, lo, hi, out):
            # the GEMV that kernel_row_against would run on the view below,
            # without building the view (its 21 fields cost more than the
            # product of a small class block: iris, 50 x 4)
            out[:] = np.dot(X[lo:hi], X[g])
        _finish64_arrays(kd.ktype, kd.gamma, kd.coef0, kd.degree, kd.sqnorm[g],
                         kd.sqnorm[lo:hi], out)
        if kd.qround:
            round_to_float32(out, 0, out.shape[0])
        return
    if not kd.sparse and kd.ktype != PRECOMPUTED:
        # a float32 block: _dense_row_against on the view's arrays (its
        # float32 path reads neither the transpose nor its state), without
        # building the view
        _dense_row_arrays(kd.dense, kd.dense32, g, kd.sqnorm[g], kd.dense[lo:hi],
                          kd.dense32[lo:hi], kd.denseT[0:0], kd.tstate, kd.sqnorm[lo:hi],
                          kd.ktype, kd.gamma, kd.coef0, kd.degree, out)
        return
    sub = KernelData(kd.sparse, kd.dense[lo:hi], kd.indptr[lo:hi + 1], kd.indices, kd.data,
                     kd.sqnorm[lo:hi], kd.ktype, kd.gamma, kd.coef0, kd.degree, kd.work,
                     kd.binary, kd.bits, kd.brows[lo:hi], kd.bcount[lo:hi],
                     kd.table, kd.bwork[lo:hi], kd.dense32[lo:hi],
                     kd.cols[lo:hi] if kd.cols.shape[0] > 0 else kd.cols,
                     kd.denseT[0:0], kd.tstate, kd.qround)
    kernel_row_against(kd, g, sub, out)


@njit(cache=True)
def _dense_row_against(kd, i, kd2, out):
    """:func:`kernel_row_against` for dense input: a float64 row is one GEMV
    and the transform (rbf: the vectorised exp), or, when ``kd2`` keeps its
    transpose and x_i has few nonzeros, the products over x_i's nonzeros
    (:func:`feature_major_dots`, the per-entry sums of the subset rows);
    a float32 row one SGEMV on
    the float32 copy when both sides have it (else the float64 GEMV), the
    transform in float64 from the inner product, rounded once.
    (:func:`_dense_row_arrays` on the arrays of ``kd`` and ``kd2``.)"""
    _dense_row_arrays(kd.dense, kd.dense32, i, kd.sqnorm[i], kd2.dense, kd2.dense32,
                      kd2.denseT, kd2.tstate, kd2.sqnorm, kd.ktype, kd.gamma, kd.coef0,
                      kd.degree, out)


@njit(cache=True)
def _dense_row_arrays(X, X32, i, sqi, X2, X2_32, XT2, tstate2, sq2, ktype, gamma, coef0,
                      degree, out):
    """:func:`_dense_row_against` on the arrays it reads (``X``, ``X32``:
    ``kd``'s dense data and float32 copy; ``X2``, ``X2_32``, ``XT2``,
    ``tstate2``, ``sq2``: ``kd2``'s).  A kernel row is computed at most
    steps of a small SMO fit, and a call taking a :class:`KernelData` pays a
    reference-count update per array field (15) on entry and exit: along
    the former chain of calls each taking ``kd`` (and ``kd2``) that was
    several microseconds a row, more than the row's GEMV and exp on a
    100 x 4 set (decision record 33s01).  The same operations on the same
    arrays."""
    n = out.shape[0]
    if is_float64(out):
        if not _transposed_dots_arrays(X[i], X2, XT2, tstate2, 0, n, out):
            out[:] = np.dot(X2, X[i])
        _finish64_arrays(ktype, gamma, coef0, degree, sqi, sq2, out)
        return
    if X32.shape[0] == X.shape[0] and X2_32.shape[0] == n and n > 0 \
            and X32.shape[1] == X.shape[1]:
        if ktype == RBF:
            # SGEMV into the row, then the vectorised exp, as the blocks
            out[:] = np.dot(X2_32, X32[i])
            rbf_exp_row(out, sqi, sq2, gamma, np.empty(n), np.empty(n, np.int64))
            return
        dots32 = np.dot(X2_32, X32[i])
        for j in range(n):
            out[j] = _transform(np.float64(dots32[j]), sqi, sq2[j], ktype, gamma, coef0,
                                degree)
    else:
        dots = np.dot(X2, X[i])
        for j in range(n):
            out[j] = _transform(dots[j], sqi, sq2[j], ktype, gamma, coef0, degree)


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def dot32(a, b):
    """``sum_k a_k b_k`` of two float32 vectors, accumulated in float64, in
    any order (``fastmath`` reassociation: LLVM vectorises the sum).  The
    float32 kernel rows' inner product when a row is computed entry by
    entry (:func:`kernel_row_subset`).

    A product of two float32 numbers is exact in float64 (48 significant
    bits), so the only rounding is that of the float64 sum (relative
    ~1e-16): the value, once transformed and rounded to float32, is the
    same whatever order the compiler sums in -- the compiled function and
    its ``NUMBA_DISABLE_JIT`` twin agree (a float32 accumulator would make
    them differ in the last float32 bit, enough to change an SMO run's
    path).  Its error against the float64 row is that
    of rounding the inputs to float32, within the bound of
    :mod:`svmlab.kernels._blocks`."""
    s = 0.0
    for k in range(a.shape[0]):
        s += np.float64(a[k]) * np.float64(b[k])
    return s


@njit(cache=True)
def _dense_sums(X, i, idx, m, tb):
    """``tb[t] = <x_i, x_idx[t]>`` for ``t < m``, each the sequential float64
    sum over the features (the arithmetic of the float64 subset rows, bit
    for bit, compiled or not), four entries at a time: four independent add
    chains keep the floating-point adder busy (one chain waits on its
    previous add).

    Parameters
    ----------
    X : float64 array (n, d)
        The dense training data.
    i : int
        The row.
    idx : int64 array (>= m,)
        The other rows.
    m : int
        How many of ``idx``.
    tb : float64 array (>= m,)
        Receives the inner products.
    """
    xi = X[i]
    d = xi.shape[0]
    nz = np.empty(d, np.int64)
    k = _nonzeros(xi, nz)
    m4 = m - m % 4
    if _few_nonzeros(k, d):
        # the same sums over x_i's nonzeros only (a product 0 * x of finite
        # x adds nothing): MNIST's rows have about 18% nonzeros
        xv = np.empty(k)
        for q in range(k):
            xv[q] = xi[nz[q]]
        for t in range(0, m4, 4):
            r0, r1, r2, r3 = X[idx[t]], X[idx[t + 1]], X[idx[t + 2]], X[idx[t + 3]]
            s0 = s1 = s2 = s3 = 0.0
            for q in range(k):
                f = nz[q]
                a = xv[q]
                s0 += a * r0[f]
                s1 += a * r1[f]
                s2 += a * r2[f]
                s3 += a * r3[f]
            tb[t] = s0
            tb[t + 1] = s1
            tb[t + 2] = s2
            tb[t + 3] = s3
        for t in range(m4, m):
            xj = X[idx[t]]
            s = 0.0
            for q in range(k):
                s += xv[q] * xj[nz[q]]
            tb[t] = s
        return
    for t in range(0, m4, 4):
        j0, j1, j2, j3 = idx[t], idx[t + 1], idx[t + 2], idx[t + 3]
        s0 = s1 = s2 = s3 = 0.0
        for k in range(d):
            xk = xi[k]
            s0 += xk * X[j0, k]
            s1 += xk * X[j1, k]
            s2 += xk * X[j2, k]
            s3 += xk * X[j3, k]
        tb[t] = s0
        tb[t + 1] = s1
        tb[t + 2] = s2
        tb[t + 3] = s3
    for t in range(m4, m):
        xj = X[idx[t]]
        s = 0.0
        for k in range(d):
            s += xi[k] * xj[k]
        tb[t] = s


@njit(cache=True)
def kernel_row_subset(kd, i, idx, m, out):
    """Fill ``out[j] = K(x_i, x_j)`` only for ``j in idx[:m]`` (other entries
    of ``out`` are left as they are).  Used by solvers that shrink their
    active set (LIBSVM computes only the active part of a row, too).

    Dense input: each entry a sequential float64 dot product (float64
    ``out``; the rbf values then through the vectorised
    :func:`rbf_exp_row64`, the value of :func:`_transform`), or, for
    a float32 ``out`` with the float32 copy of the data (a float32 cache),
    :func:`dot32` on the float32 rows, vectorised (:func:`_subset_row32`).
    Precomputed: the entries of the Gram matrix's row.  ``kd.qround``: the
    float64 entries rounded to float32 precision."""
    if kd.ktype == PRECOMPUTED:
        row = kd.dense[i]
        for t in range(m):
            j = idx[t]
            out[j] = row[kd.cols[j]]
    elif kd.binary:
        _binary_row_subset(kd, i, idx, m, out)
    elif not kd.sparse and not is_float64(out) and kd.dense32.shape[0] == kd.dense.shape[0] \
            and kd.dense32.shape[1] == kd.dense.shape[1] and kd.dense.shape[0] > 0:
        # (on kd's arrays, not kd: a call taking the KernelData pays its
        # reference counts, decision record 33s01)
        _subset_row32(kd.dense32, kd.sqnorm, kd.ktype, kd.gamma, kd.coef0, kd.degree,
                      i, idx, m, out)
    elif not kd.sparse:
        _subset_dense64_arrays(kd.dense, kd.sqnorm, kd.ktype, kd.gamma, kd.coef0, kd.degree,
                               i, idx, m, out)
    else:
        _subset_sparse64(kd, i, idx, m, out)
    if kd.qround and is_float64(out):
        _round_subset(out, idx, m)


@njit(cache=True)
def _subset_row32(x32, sqnorm, ktype, gamma, coef0, degree, i, idx, m, out):
    """:func:`kernel_row_subset` into a float32 ``out`` from the float32 copy
    ``x32`` of dense data: :func:`dot32` per entry, the transform in float64
    (rbf: the vectorised exp), rounded once."""
    sqi = sqnorm[i]
    xi = x32[i]
    if ktype == RBF:
        tb = np.empty(m)
        sb = np.empty(m)
        for t in range(m):
            j = idx[t]
            tb[t] = dot32(xi, x32[j])
            sb[t] = sqnorm[j]
        rbf_exp_row64(tb, sqi, sb, gamma, np.empty(m, np.int64))
        for t in range(m):
            out[idx[t]] = tb[t]
        return
    for t in range(m):
        j = idx[t]
        out[j] = _transform(dot32(xi, x32[j]), sqi, sqnorm[j], ktype, gamma, coef0, degree)


@njit(cache=True)
def _subset_dense64_arrays(X, sqnorm, ktype, gamma, coef0, degree, i, idx, m, out):
    """:func:`kernel_row_subset` of dense rows in float64 arithmetic, on
    the data's arrays (rounded once into a float32 ``out``): the inner
    products first (:func:`_dense_sums`, contiguous), then, for rbf, the
    vectorised exp (:func:`rbf_exp_row64`, the values of
    :func:`_transform`), then scattered into ``out``."""
    sqi = sqnorm[i]
    tb = np.empty(m)
    _dense_sums(X, i, idx, m, tb)
    if ktype == RBF:
        if m > 0:
            sb = np.empty(m)
            for t in range(m):
                sb[t] = sqnorm[idx[t]]
            rbf_exp_row64(tb, sqi, sb, gamma, np.empty(m, np.int64))
            for t in range(m):
                out[idx[t]] = tb[t]
        return
    for t in range(m):
        j = idx[t]
        out[j] = _transform(tb[t], sqi, sqnorm[j], ktype, gamma, coef0, degree)


@njit(cache=True)
def _subset_sparse64(kd, i, idx, m, out):
    """:func:`kernel_row_subset` of CSR rows in float64 arithmetic (rounded
    once into a float32 ``out``): the inner products first, then, for rbf,
    the vectorised exp (:func:`rbf_exp_row64`, the values of
    :func:`_transform`), then scattered into ``out``.  (Dense rows:
    :func:`_subset_dense64_arrays`.)"""
    sqi = kd.sqnorm[i]
    vec = kd.ktype == RBF
    if vec:
        tb = np.empty(m)
        sb = np.empty(m)
        for t in range(m):
            sb[t] = kd.sqnorm[idx[t]]
    else:
        tb = np.empty(0)
        sb = tb
    w = kd.work
    a0, a1 = kd.indptr[i], kd.indptr[i + 1]
    for p in range(a0, a1):
        w[kd.indices[p]] = kd.data[p]
    for t in range(m):
        j = idx[t]
        s = 0.0
        for p in range(kd.indptr[j], kd.indptr[j + 1]):
            s += kd.data[p] * w[kd.indices[p]]
        if vec:
            tb[t] = s
        else:
            out[j] = _transform(s, sqi, kd.sqnorm[j], kd.ktype, kd.gamma, kd.coef0, kd.degree)
    for p in range(a0, a1):
        w[kd.indices[p]] = 0.0
    if vec and m > 0:
        rbf_exp_row64(tb, sqi, sb, kd.gamma, np.empty(m, np.int64))
        for t in range(m):
            out[idx[t]] = tb[t]


#: the implementation of :meth:`Kernel.block`, registered by
#: :mod:`svmlab.kernels._blocks` when the package is imported
_BLOCK_IMPL = [None]


def resolve_gamma(gamma, X):
    """Turn ``"scale"``, ``"auto"`` or a number into the float SVC would use."""
    n_features = X.shape[1]
    if isinstance(gamma, str):
        if gamma == "auto":
            return 1.0 / n_features
        if gamma == "scale":
            # data whose squares overflow are refused by the estimators'
            # scale check (svmlab._validation), not warned about here
            with np.errstate(over="ignore", invalid="ignore"):
                if sp.issparse(X):
                    mean = X.mean()
                    var = X.multiply(X).mean() - mean**2
                else:
                    var = X.var()
            return 1.0 / (n_features * var) if var != 0 else 1.0
        raise ValueError(f"gamma must be 'scale', 'auto' or a positive float, got {gamma!r}")
    return float(gamma)


def _as_csr(X):
    """The kernel's CSR: :func:`svmlab.kernels._csr.as_csr32`, so the
    caller's matrix is never modified (a non-canonical one is copied)."""
    return as_csr32(X)


class Kernel:
    """A kernel function bound to a training set.

    Parameters
    ----------
    X : ndarray (n, d) or CSR matrix
        Training points (validated: finite float64); for
        ``kernel="precomputed"`` the (n, n) Gram matrix of the training set
        (a sparse one is densified; see the module docstring).
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}
    gamma : float or {"scale", "auto"}
    degree : int
    coef0 : float
    binary : {"auto", True, False}
        Bit-pack binary inputs (all values 0 or 1) and compute inner
        products by popcount (:mod:`svmlab.kernels._bits`).  The kernel values are
        the same, bit for bit; only the time differs.  ``"auto"`` packs when
        it is cheaper than the sparse gather.
    qfloat : bool
        Round every float64 kernel value the rows, blocks and single values
        give to float32 precision, the diagonal (:meth:`diag`) excepted:
        LIBSVM's ``Qfloat`` (``KernelData.qround``).  The drop-in classes
        (:class:`svmlab.SVC` and the family) ask for it so that they take
        LIBSVM's steps; the educational estimators keep exact float64
        values.

    Attributes
    ----------
    data : KernelData
        The raw arrays a numba solver loop receives (with ``dense32``, the
        float32 copy of dense X, once :meth:`ensure_float32` made it).
    gamma_ : float
        The resolved gamma.
    binary : bool
        Whether the bit-packed binary path is used.
    """

    def __init__(self, X, kernel="rbf", gamma="scale", degree=3, coef0=0.0, binary="auto",
                 qfloat=False):
        if kernel not in ALL_KERNELS:
            raise ValueError(
                f"Unknown kernel {kernel!r}; choose one of {sorted(ALL_KERNELS)}."
            )
        if binary not in ("auto", True, False):
            raise ValueError(f"binary must be 'auto', True or False, got {binary!r}")
        self.kernel = kernel
        self.gamma_ = resolve_gamma(gamma, X)
        self.degree = degree
        self.coef0 = float(coef0)
        self.n_samples, self.n_features = X.shape
        if kernel == "precomputed":
            self._init_precomputed(X)
            self._set_qfloat(qfloat)
            return
        if sp.issparse(X):
            X = _as_csr(X)
            sqnorm = np.asarray(X.multiply(X).sum(axis=1)).ravel()
            self.data = KernelData(
                True,
                np.zeros((0, 0)),
                X.indptr,
                X.indices,
                X.data,
                sqnorm,
                KERNELS[kernel],
                self.gamma_,
                self.coef0,
                float(degree),
                np.zeros(X.shape[1]),
            )
        else:
            X = np.ascontiguousarray(X, dtype=np.float64)
            if not X.flags.writeable:
                # read-only arrays are a different numba type: one compiled
                # version of every solver loop is enough
                X = X.copy()
            sqnorm = np.einsum("ij,ij->i", X, X)
            self.data = KernelData(
                False,
                X,
                np.zeros(1, np.int32),
                np.zeros(0, np.int32),
                np.zeros(0),
                sqnorm,
                KERNELS[kernel],
                self.gamma_,
                self.coef0,
                float(degree),
                np.zeros(0),
            )
        self.X = X
        self.binary = self._use_bits(X, binary)
        if not sp.issparse(X) and not self.binary and 0 < 8 * X.size <= TRANSPOSE_MAX_BYTES \
                and keeps_transpose(X.shape[0], X.shape[1], np.count_nonzero(X)):
            self.data = self.data._replace(**self._transpose_space(X.shape[0], X.shape[1]))
        if self.binary:
            brows = pack_rows(X)
            bits = np.ascontiguousarray(brows.T)
            bcount = np.round(self.data.sqnorm).astype(np.int32)
            table = kernel_table(KERNELS[kernel], self.gamma_, self.coef0, float(degree),
                                 int(bcount.max()))
            self.data = self.data._replace(binary=True, bits=bits, brows=brows, bcount=bcount,
                                           table=table,
                                           bwork=np.zeros(self.n_samples, np.int32))
        self._set_qfloat(qfloat)

    def _set_qfloat(self, qfloat):
        """Round every float64 kernel value to float32 precision
        (``KernelData.qround``) when ``qfloat``."""
        if qfloat:
            self.data = self.data._replace(qround=True)

    @property
    def qfloat(self):
        """Whether the float64 kernel values are rounded to float32
        precision (LIBSVM's ``Qfloat``; ``KernelData.qround``)."""
        return bool(self.data.qround)

    def __getstate__(self):
        """Pickled (and copied, :func:`copy.copy`) without the transpose's
        values: a fitted model's kernel of its support vectors would
        otherwise double the file with an array that is rebuilt on first
        use; a fresh unfilled one is allocated on loading."""
        state = self.__dict__.copy()
        d = self.data
        if d.denseT.shape[0] > 0:
            state["data"] = d._replace(denseT=np.zeros((0, 0)), tstate=np.zeros(1, np.int64))
            state["_transpose_dropped"] = True
        return state

    def __setstate__(self, state):
        dropped = state.pop("_transpose_dropped", False)
        self.__dict__.update(state)
        if dropped:
            n, d = self.data.dense.shape
            self.data = self.data._replace(**self._transpose_space(n, d))

    @staticmethod
    def _transpose_space(n, d):
        """The fields of a transpose that is filled on its first use
        (:func:`transposed_ready`): an uninitialised d x n array (no page of
        it touched until then) and its state."""
        return dict(denseT=np.empty((d, n)), tstate=np.zeros(1, np.int64))

    def _init_precomputed(self, G):
        """The data of a precomputed kernel: the Gram matrix itself (dense,
        float64, C-contiguous; copied only when it is not), its diagonal in
        ``sqnorm`` and the columns ``arange(n)``."""
        n, m = G.shape
        if n != m:
            raise ValueError(f"Precomputed matrix must be a square matrix. Input is a {n}x{m} "
                             "matrix.")
        if sp.issparse(G):
            G = G.toarray()
        G = np.ascontiguousarray(G, dtype=np.float64)
        if not G.flags.writeable:
            G = G.copy()  # one numba type for every solver loop (see above)
        self.X = G
        self.binary = False
        self.data = KernelData(False, G, np.zeros(1, np.int32), np.zeros(0, np.int32),
                               np.zeros(0), np.ascontiguousarray(np.diagonal(G)),
                               PRECOMPUTED, self.gamma_, self.coef0, float(self.degree),
                               np.zeros(0), cols=np.arange(n, dtype=np.int64))

    @staticmethod
    def _use_bits(X, binary):
        """Whether to bit-pack binary inputs.  ``"auto"``: when they are
        binary and one row's words cost no more than twice its nonzeros
        (sparse) -- always for dense 0/1 input."""
        if binary is False:
            return False
        ok = is_binary(X)
        if binary is True:
            if not ok:
                raise ValueError("binary=True needs inputs whose values are all 0 or 1")
            return True
        if not ok:
            return False
        n_words = (X.shape[1] + 63) // 64
        if sp.issparse(X):
            return n_words <= max(2.0, 2.0 * X.nnz / max(X.shape[0], 1))
        return True

    @property
    def sparse(self):
        return self.data.sparse

    def subset_data(self, idx):
        """:class:`KernelData` for the training rows ``idx`` only, laid out
        contiguously, with the same kernel (and table).  Used as the ``kd2``
        of :func:`kernel_row_against`: rows of a solver's small working
        subset then stream through memory instead of gathering scattered
        rows."""
        idx = np.asarray(idx, dtype=np.int64)
        d = self.data
        if d.binary and d.sparse:
            # bit-packed rows serve every kernel value against the subset:
            # no CSR gather (an empty CSR of the right shape stands in)
            sub = d._replace(indptr=np.zeros(len(idx) + 1, np.int32),
                             indices=np.zeros(0, np.int32), data=np.zeros(0))
        elif d.sparse:
            Xs = self.X[idx]
            Xs.sort_indices()
            sub = d._replace(indptr=Xs.indptr.astype(np.int32),
                             indices=Xs.indices.astype(np.int32),
                             data=np.ascontiguousarray(Xs.data, dtype=np.float64))
        elif d.ktype == PRECOMPUTED:
            # the points' Gram rows (over every training point) and columns
            sub = d._replace(dense=np.ascontiguousarray(d.dense[idx]), cols=d.cols[idx])
        else:
            sub = d._replace(dense=np.ascontiguousarray(d.dense[idx]))
            if d.dense32.shape[0] == d.dense.shape[0] and d.dense.shape[0] > 0:
                sub = sub._replace(dense32=np.ascontiguousarray(d.dense32[idx]))
            if d.denseT.shape[0] > 0:
                sub = sub._replace(**self._transpose_space(len(idx), d.dense.shape[1]))
        sub = sub._replace(sqnorm=np.ascontiguousarray(d.sqnorm[idx]))
        if d.binary:
            brows = np.ascontiguousarray(d.brows[idx])
            sub = sub._replace(brows=brows, bits=np.ascontiguousarray(brows.T),
                               bcount=np.ascontiguousarray(d.bcount[idx]),
                               bwork=np.zeros(len(idx), np.int32))
        return sub

    def ensure_float32(self):
        """Keep a float32 copy of dense input (``data.dense32``) for
        single-precision rows and blocks (SGEMV/SGEMM, see
        :mod:`svmlab.kernels._blocks`); a no-op for sparse or bit-packed
        input, or when the copy exists.  Costs ``4 n d`` bytes; made on
        demand (the estimators make it when ``cache_dtype="float32"``)."""
        d = self.data
        if d.sparse or d.binary or d.ktype == PRECOMPUTED \
                or d.dense32.shape[0] == d.dense.shape[0] > 0:
            return self
        if d.dense.shape[0] == 0:
            return self
        self.data = d._replace(dense32=np.ascontiguousarray(d.dense, dtype=np.float32))
        return self

    def row(self, i, out=None):
        """Kernel row ``K(x_i, X)`` as a new (or the given) float64 array
        (or a given float32 array: then the single-precision row)."""
        if out is None:
            out = np.empty(self.n_samples)
        kernel_row(self.data, int(i), out)
        return out

    def block(self, rows, cols=None, *, dtype=np.float64, out=None):
        """Kernel block ``K[rows, :]`` (or ``K[rows, cols]``) of the training
        set, as a new (or the given, C-contiguous) array of ``dtype``
        (float32 or float64).

        float64 rows equal :meth:`row` bit for bit.  float32 blocks of dense
        input are one SGEMM through numpy (``matmul`` releases the GIL; it
        uses the float32 copy of :meth:`ensure_float32`, made here if
        absent), then the compiled transform of
        :func:`svmlab.kernels._blocks.transform_block`; other inputs call
        the compiled :func:`~svmlab.kernels._blocks.kernel_block` /
        :func:`~svmlab.kernels._blocks.kernel_block_cols`.  See
        :mod:`svmlab.kernels._blocks` for the precision of each path (the
        implementation lives there, :func:`svmlab.kernels._blocks.block`,
        which that module registers here: this module cannot import it).
        """
        return _BLOCK_IMPL[0](self, rows, cols, dtype=dtype, out=out)

    def value(self, i, j):
        return kernel_value(self.data, int(i), int(j))

    def diag(self):
        """``K(x_i, x_i)`` for all i."""
        if self.kernel == "precomputed":
            return self.data.sqnorm.copy()  # the Gram matrix's diagonal
        return self.transform(self.data.sqnorm, None, None, diag=True)

    def transform(self, dot, sq_a, sq_b, diag=False):
        """Apply the kernel to a block of inner products.

        ``dot[a, b] = <a, b>``, ``sq_a`` and ``sq_b`` are the squared norms,
        broadcastable against ``dot``.
        """
        dot = np.asarray(dot, dtype=np.float64)
        if self.kernel == "linear":
            return dot.copy()
        if self.kernel == "rbf":
            if diag:
                return np.ones_like(dot)
            d2 = np.maximum(sq_a + sq_b - 2.0 * dot, 0.0)
            return np.exp(-self.gamma_ * d2)
        if self.kernel == "poly":
            return (self.gamma_ * dot + self.coef0) ** self.degree
        return np.tanh(self.gamma_ * dot + self.coef0)

    def matrix(self, rows=None, Z=None):
        """Kernel block ``K(X[rows], Z)``; ``Z`` defaults to the training set.

        Used for prediction and for small dense sub-problems; the solvers'
        inner loops use :func:`kernel_row` through the cache instead.
        Precomputed kernel: ``Z`` is the Gram matrix of the new points
        against the training points, (n_Z, n_train), and the block is
        ``Z[:, rows].T`` (``G[rows]`` without ``Z``).
        """
        if self.kernel == "precomputed":
            idx = slice(None) if rows is None else rows
            if Z is None:
                return np.array(self.X[idx], dtype=np.float64)
            Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z, dtype=np.float64)
            return np.ascontiguousarray(Z[:, idx].T)
        A = self.X if rows is None else self.X[rows]
        sq_a = self.data.sqnorm if rows is None else self.data.sqnorm[rows]
        if Z is None:
            B, sq_b = self.X, self.data.sqnorm
        else:
            B = Z
            if sp.issparse(Z):
                sq_b = np.asarray(Z.multiply(Z).sum(axis=1)).ravel()
            else:
                sq_b = np.einsum("ij,ij->i", Z, Z)
        dot = A @ B.T
        if sp.issparse(dot):
            dot = dot.toarray()
        return self.transform(np.asarray(dot), sq_a[:, None], sq_b[None, :])
