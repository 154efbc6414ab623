"""Small compiled linear algebra shared by the solvers: one Cholesky toolkit
and one bounded sorted insertion.

The Cholesky toolkit keeps the lower factor ``L`` of a symmetric positive
definite matrix ``A = L L'`` whose rows and columns come and go one at a
time, as an active-set method's free set does:

* the line-search mode of the decomposition family's active-set
  sub-problem (:mod:`svmlab.decomposition._line_search`) keeps the factor
  of ``K_11 + rr I`` over its free set S1;
* the cutting-plane QP (:func:`svmlab.cutting_plane._qp.active_set_chol`)
  keeps the factor of the free cuts' lifted Gram matrix ``H_FF + 1``.

Storage: the factor of ``n`` variables is the leading ``n x n`` block of a
C-contiguous float64 array allocated once for the largest size; only its
lower triangle is read.  Every routine reads the factor by rows
(contiguous), and the inner products of a row with a vector may be summed
in any order (:func:`dot`, SIMD partial sums): they differ from a
left-to-right sum in rounding only.

===========================  ================================================
:func:`chol_factor`          a fresh factor of ``A[order][:, order] + rr I``
:func:`chol_append`          one more variable, O(n^2)
:func:`chol_delete`          one variable fewer, O(n^2) (Givens rotations)
:func:`chol_solve`           ``A^{-1} b``
:func:`chol_solve2`          ``A^{-1} b`` and ``A^{-1} 1`` in one pass
:func:`chol_times`           ``(A - shift I) v`` from the factor
===========================  ================================================

:func:`insert_sorted` keeps the k best candidates of a scan in order
(bounded insertion), for selection rules that need the k smallest values
of a long list without sorting it.

Every function is valid plain Python (numba's interpreter-free twin), and
none is specialised on constant arguments: callers pass variables.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

__all__ = ["dot", "chol_factor", "chol_append", "chol_delete", "chol_solve", "chol_solve2",
           "chol_times", "insert_sorted"]


@njit(cache=True, fastmath={"reassoc", "contract"})
def dot(a, b, n):
    """``sum_k a[k] b[k]`` for k < n, the sum reassociated (SIMD partial
    sums; a plain float reduction compiles one product at a time).  Only
    these two fast-math flags: no assumption about NaN or infinities, so
    the callers' finiteness tests still hold."""
    s = 0.0
    for k in range(n):
        s += a[k] * b[k]
    return s


@njit(cache=True)
def chol_factor(A, order, n, rr, L):
    """Cholesky of ``A[order[:n]][:, order[:n]] + rr I`` into ``L[:n, :n]``
    (lower; the entries right of the diagonal are not written).  Returns
    False at the first pivot that is not positive and finite (LAPACK
    potrf's test), leaving ``L`` partly written."""
    for j in range(n):
        oj = order[j]
        Lj = L[j]
        s = A[oj, oj] + rr - dot(Lj, Lj, j)
        if not (s > 0.0) or not np.isfinite(s):
            return False
        ljj = np.sqrt(s)
        Lj[j] = ljj
        for i in range(j + 1, n):
            L[i, j] = (A[order[i], oj] - dot(L[i], Lj, j)) / ljj
    return True


@njit(cache=True)
def chol_append(L, n, col, diag, rel):
    """Append variable n to the factor ``L[:n, :n]``: ``col[:n]`` is its
    column of A against the n variables, ``diag`` its diagonal entry.
    Writes row n of L (the forward solve ``L z = col`` and the pivot
    ``sqrt(diag - |z|^2)``) in O(n^2).

    Returns False, with row n of L zeroed, when the squared pivot is not
    above ``rel * diag`` or not finite: the new variable is, to that
    precision, dependent on the others (``rel = 0``: not positive
    definite)."""
    s = diag
    Ln = L[n]
    for i in range(n):
        t = (col[i] - dot(L[i], Ln, i)) / L[i, i]
        Ln[i] = t
        s -= t * t
    if not (s > rel * diag) or not np.isfinite(s):
        for i in range(n + 1):
            Ln[i] = 0.0
        return False
    Ln[n] = np.sqrt(s)
    return True


@njit(cache=True, inline="always")
def _rotate_row(r, cs, sn, k0, k1):
    """Rotations ``k0..k1-1`` of :func:`chol_delete` on row ``r``, in order:
    rotation k mixes entries k and k+1 (skipped when ``cs[k] == 2``)."""
    for k in range(k0, k1):
        c = cs[k]
        if c == 2.0:  # skipped rotation (r == 0)
            continue
        s = sn[k]
        lk = r[k]
        lk1 = r[k + 1]
        r[k] = c * lk + s * lk1
        r[k + 1] = -s * lk + c * lk1


@njit(cache=True, inline="always")
def _rotate_four(r0, r1, r2, r3, cs, sn, k0, k1):
    """:func:`_rotate_row` on four rows at once, interleaved (four
    independent chains of multiply-adds instead of one); each entry takes
    the same operations in the same order as row by row."""
    for k in range(k0, k1):
        c = cs[k]
        if c == 2.0:
            continue
        s = sn[k]
        a0 = r0[k]
        b0 = r0[k + 1]
        a1 = r1[k]
        b1 = r1[k + 1]
        a2 = r2[k]
        b2 = r2[k + 1]
        a3 = r3[k]
        b3 = r3[k + 1]
        r0[k] = c * a0 + s * b0
        r0[k + 1] = -s * a0 + c * b0
        r1[k] = c * a1 + s * b1
        r1[k + 1] = -s * a1 + c * b1
        r2[k] = c * a2 + s * b2
        r2[k + 1] = -s * a2 + c * b2
        r3[k] = c * a3 + s * b3
        r3[k + 1] = -s * a3 + c * b3


@njit(cache=True)
def chol_delete(L, n, p):
    """Remove variable ``p`` (row and column p) from the factor
    ``L[:n, :n]`` in O(n^2); the factor of the other n-1 variables, in
    their order, is left in ``L[:n-1, :n-1]`` and row and column n-1 are
    zeroed.

    The rows below p move up one; row i then has one entry right of its
    diagonal, which Givens rotation i (columns i, i+1, computed from row i
    once rotations p..i-1 have reached it) zeroes.  Row-oriented: each row
    takes its rotations in order while it is in cache, four rows at a time
    for the rotations known before them (:func:`_rotate_four`); every entry
    takes the same operations in the same order as rotating column pairs
    over all rows.  A zero pair skips its rotation."""
    cs = np.empty(n)
    sn = np.empty(n)
    i0 = p
    while i0 < n - 1:
        nb = min(4, n - 1 - i0)
        # shift rows i0+1..i0+nb up (each copied before it is overwritten)
        for i in range(i0, i0 + nb):
            ri = L[i]
            rn = L[i + 1]
            for j in range(i + 2):
                ri[j] = rn[j]
        kdone = p
        if nb == 4:
            _rotate_four(L[i0], L[i0 + 1], L[i0 + 2], L[i0 + 3], cs, sn, p, i0)
            kdone = i0
        for i in range(i0, i0 + nb):
            ri = L[i]
            # the remaining rotations, then the one that zeroes L[i, i+1]
            _rotate_row(ri, cs, sn, kdone, i)
            a = ri[i]
            bb = ri[i + 1]
            r = np.hypot(a, bb)
            if r == 0.0:
                cs[i] = 2.0
                continue
            c = a / r
            s = bb / r
            cs[i] = c
            sn[i] = s
            ri[i] = c * a + s * bb
            ri[i + 1] = 0.0
        i0 += nb
    for j in range(n):
        L[n - 1, j] = 0.0
        L[j, n - 1] = 0.0


@njit(cache=True)
def chol_solve(L, n, b, out):
    """``out[:n] = A^{-1} b[:n]`` with ``A = L L'`` (``b`` and ``out`` of
    length >= n; they may be the same array).  The back substitution with
    ``L'`` subtracts each solved entry times row i of L from the entries
    before it (rows only)."""
    for i in range(n):
        li = L[i]
        out[i] = (b[i] - dot(li, out, i)) / li[i]
    for i in range(n - 1, -1, -1):
        li = L[i]
        xi = out[i] / li[i]
        out[i] = xi
        for j in range(i):
            out[j] -= li[j] * xi


@njit(cache=True)
def chol_solve2(L, n, b, u, w):
    """``u = A^{-1} b`` and ``w = A^{-1} 1`` (the two solves of a bordered
    system with one equality), both in one pass over L; ``u``, ``w``:
    outputs of length >= n."""
    for i in range(n):
        li = L[i]
        d = li[i]
        u[i] = (b[i] - dot(li, u, i)) / d
        w[i] = (1.0 - dot(li, w, i)) / d
    for i in range(n - 1, -1, -1):
        li = L[i]
        d = li[i]
        ui = u[i] / d
        wi = w[i] / d
        u[i] = ui
        w[i] = wi
        for j in range(i):
            u[j] -= li[j] * ui
            w[j] -= li[j] * wi


@njit(cache=True)
def chol_times(L, n, shift, v, out, tmp):
    """``out[:n] = (A - shift I) v`` from the factor ``L L' = A``:
    ``L (L' v) - shift v``, reading rows of L (contiguous) instead of
    gathering the entries of A.  Equals the product with ``A - shift I``
    up to the factor's backward error (a few ulps of ``||A||``).
    ``tmp``: scratch of length >= n (``L' v``)."""
    for j in range(n):
        tmp[j] = 0.0
    for i in range(n):
        li = L[i]
        vi = v[i]
        for j in range(i + 1):
            tmp[j] += li[j] * vi
    for i in range(n):
        out[i] = dot(L[i], tmp, i + 1) - shift * v[i]


@njit(cache=True)
def insert_sorted(idx, val, cnt, t, v):
    """Offer candidate ``t`` with value ``v`` to the buffer ``idx[:cnt]``,
    ``val[:cnt]`` kept sorted by increasing value, of capacity
    ``k = idx.shape[0]``: it goes after every kept value ``<= v`` (so that
    among equal values the earlier offered stays first), and the last one
    drops out when the buffer is full.  Returns the new count.

    One scan offering every candidate keeps the k smallest ``(value,
    order offered)`` pairs, in order, in O(scan + k * insertions); a caller
    skips most candidates by testing ``v < val[k - 1]`` on a full buffer
    first."""
    k = idx.shape[0]
    q = cnt if cnt < k else k - 1
    while q > 0 and val[q - 1] > v:
        if q < k:
            idx[q] = idx[q - 1]
            val[q] = val[q - 1]
        q -= 1
    idx[q] = t
    val[q] = v
    return cnt + 1 if cnt < k else k
