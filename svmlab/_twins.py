"""What compiled code computes, written in Python, for interpreted kernels
(see :mod:`svmlab._jit`).

numba implements ``np.dot`` with scipy's BLAS; NumPy's ``np.dot`` uses
NumPy's own BLAS build, whose kernels can round differently.  An
interpreted kernel therefore sees :data:`numba_numpy` as ``np``: NumPy,
except :func:`dot`, which makes numba's BLAS calls; :func:`gemm_nt` is the
twin of a kernel helper's ``np.dot(a, b.T, out)``.  Kernel-specific twins
are declared beside their kernels (``njit(twin=...)``).
``tests/test_jit_tiers.py`` proves them equal to the compiled code.
"""

from __future__ import annotations

import numpy as np

__all__ = ["dot", "gemm_nt", "numba_numpy"]


def _c_or_f(x):
    """``x`` itself when C- or F-contiguous, else a C-contiguous copy (what
    numba's BLAS calls do with a non-contiguous array)."""
    return x if (x.flags.c_contiguous or x.flags.f_contiguous) else np.ascontiguousarray(x)


def dot(a, b, out=None):
    """``np.dot`` as numba computes it for float arrays: the same BLAS routine
    of scipy's library (``ddot``/``dgemv``/``dgemm``, single precision
    alike), with the same transposition, sizes and leading dimensions that
    numba passes (``numba/np/linalg.py``: ``dot_2_vv``, ``dot_3_vm``,
    ``call_xxgemv``, ``call_xxgemm``).  NumPy's ``np.dot`` calls NumPy's own
    BLAS build, whose kernels can round differently.  Other dtypes (exact
    integer products) go to NumPy."""
    from scipy.linalg import blas

    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype != b.dtype or a.dtype not in (np.float32, np.float64):
        return np.dot(a, b) if out is None else np.dot(a, b, out=out)
    pre = "d" if a.dtype == np.float64 else "s"
    a, b = _c_or_f(a), _c_or_f(b)
    if a.ndim == 1 and b.ndim == 1:
        if a.shape[0] != b.shape[0]:
            raise ValueError("incompatible array sizes for np.dot(a, b) (vector * vector)")
        return a.dtype.type(getattr(blas, pre + "dot")(a, b)) if a.shape[0] else a.dtype.type(0)
    gemv, gemm = getattr(blas, pre + "gemv"), getattr(blas, pre + "gemm")
    if a.ndim == 2 and b.ndim == 1:  # matrix * vector
        m, k = a.shape
        res = np.zeros(m, a.dtype)
        if k and m:
            if a.flags.c_contiguous:  # gemv('T', k, m, a, lda=k, x)
                res = gemv(1.0, a.T, b, trans=1)
            else:  # F: gemv('N', m, k, a, lda=m, x)
                res = gemv(1.0, a, b, trans=0)
    elif a.ndim == 1 and b.ndim == 2:  # vector * matrix: b.T x
        k, n = b.shape
        res = np.zeros(n, a.dtype)
        if k and n:
            if b.flags.c_contiguous:  # gemv('N', n, k, b, lda=n, x)
                res = gemv(1.0, b.T, a, trans=0)
            else:  # F: gemv('T', k, n, b, lda=k, x)
                res = gemv(1.0, b, a, trans=1)
    elif a.ndim == 2 and b.ndim == 2:  # C-ordered result: res.T = b.T a.T, Fortran
        m, k = a.shape
        n = b.shape[1]
        if k == 0 or m == 0 or n == 0:
            res = np.zeros((m, n), a.dtype)
        elif n == 1 and m == 1:  # numba: a (1, k) times b (k, 1) is ddot
            res = np.full((1, 1), getattr(blas, pre + "dot")(a.ravel(), b.ravel()), a.dtype)
        elif n == 1:  # numba: matrix times vector by gemv
            res = dot(a, b.ravel()).reshape(m, 1)
        elif m == 1:  # numba: vector times matrix by gemv
            res = dot(a.ravel(), b).reshape(1, n)
        else:
            A, ta = (b.T, 0) if b.flags.c_contiguous else (b, 1)
            B, tb = (a.T, 0) if a.flags.c_contiguous else (a, 1)
            res = gemm(1.0, A, B, trans_a=ta, trans_b=tb).T
    else:
        return np.dot(a, b) if out is None else np.dot(a, b, out=out)
    res = np.asarray(res, dtype=a.dtype)
    if out is None:
        return np.ascontiguousarray(res)
    out[...] = res
    return out


class _NumbaNumpy:
    """The ``np`` an interpreted kernel sees: NumPy, except for the functions
    whose compiled implementation computes differently (:func:`dot`)."""

    dot = staticmethod(dot)

    def __getattr__(self, name):
        return getattr(np, name)


#: replaces the ``numpy`` module in interpreted kernels' globals
numba_numpy = _NumbaNumpy()


def gemm_nt(a, b, out):
    """``out[...] = a @ b.T`` by the very BLAS calls compiled code makes.

    In compiled code ``a`` (m, k) and ``out`` (m, n) are C-ordered and
    ``b.T`` has numba's F layout (the transpose of C-ordered ``b`` (n, k)),
    whatever the sizes; numba's ``np.dot(a, b.T, out)`` then calls: nothing
    for an empty product (zeros), ``dot`` when m = n = 1, ``gemv('T', k, m,
    a, lda=k, b)`` when n = 1, ``gemv('T', k, n, b, lda=k, a)`` when m = 1,
    else ``gemm('T', 'N', n, m, k, b, lda=k, a, ldb=k)`` for ``out.T``.
    :func:`dot` cannot tell ``b.T``'s layout when a size is 1 (the array is
    both C- and F-contiguous then), so this twin spells the calls out."""
    from scipy.linalg import blas

    pre = "d" if a.dtype == np.float64 else "s"
    m, k = a.shape
    n = b.shape[0]
    if k == 0 or m == 0 or n == 0:
        res = np.zeros((m, n), a.dtype)
    elif m == 1 and n == 1:
        res = np.full((1, 1), getattr(blas, pre + "dot")(a.ravel(), b.ravel()), a.dtype)
    elif n == 1:
        res = getattr(blas, pre + "gemv")(1.0, a.T, b.ravel(), trans=1).reshape(m, 1)
    elif m == 1:
        res = getattr(blas, pre + "gemv")(1.0, b.T, a.ravel(), trans=1).reshape(1, n)
    else:
        res = getattr(blas, pre + "gemm")(1.0, b.T, a.T, trans_a=1, trans_b=0).T
    out[...] = res
