"""O(sn) passes of the cutting-plane method (Joachims 2006), in numba.

All take raw arrays.  ``w`` has length ``d + 1``: the last entry multiplies a
constant feature of value ``B`` (``B = 1`` models the bias as an extra
feature, as the paper suggests; ``B = 0`` means no bias, and the last
entry of the accumulated vector stays 0).

Classification (Algorithm 1, the argmax over c in OP2)::

    c_i = 1  iff  y_i w.x_i < 1
    xi' = sum_i c_i v_i (1 - y_i w.x_i)        (returned unscaled; / n later)
    g   = sum_i c_i v_i y_i x_i               (accumulated unscaled)
    d   = sum_i c_i v_i                       (returned unscaled)

with example weights ``v`` (``v=None``: every ``v_i = 1``, the paper's
unweighted OP2).  ``v is None`` is decided when numba compiles the pass (a
separate specialisation, the weighted branch pruned), so the unweighted
pass is the same machine code as without weights.

Ordinal regression (Algorithm 2, the argmax over c in OP5), with scores
``s_i = w.x_i``::

    c+_i = #{j : y_j < y_i, s_i - s_j < 1}     (i is the higher-ranked member)
    c-_i = #{j : y_j > y_i, s_j - s_i < 1}     (i is the lower-ranked member)
    sum_{violated (i,j)} (x_i - x_j) = sum_i (c+_i - c-_i) x_i

computed by one sort and a sweep with per-rank counters: O(n log n + R n),
no pair is ever enumerated.
"""

from __future__ import annotations

import numpy as np
from .._jit import njit

__all__ = [
    "cls_pass_dense",
    "cls_pass_csr",
    "scores_dense",
    "scores_csr",
    "wsum_dense",
    "wsum_csr",
    "ordinal_counts",
]


@njit(cache=True, fastmath={"reassoc", "contract"})
def _dot_row(X, i, w, d):
    """``X[i, :d] . w[:d]``; reassociation lets LLVM use SIMD (wide dense
    rows such as images)."""
    s = 0.0
    for j in range(d):
        s += X[i, j] * w[j]
    return s


@njit(cache=True, inline="always")
def violated_share(m, yi, v, i):
    """A violated row's share of the most violated constraint (``m = y_i
    w.x_i < 1``): ``(v_i (1 - m), v_i y_i, v_i)``, the terms it adds to the
    loss, to the coefficient of ``x_i`` in ``g`` and to the offset; ``v_i = 1``
    when ``v`` is None (decided at compile time, so the unweighted passes
    keep their own machine code).  Shared by Algorithm 1's fused pass and
    OCAS's cut (:mod:`svmlab.cutting_plane._ocas`)."""
    if v is None:
        return 1.0 - m, yi, 1.0
    return v[i] * (1.0 - m), yi * v[i], v[i]


@njit(cache=True, inline="always")
def add_row_dense(X, i, c, B, g):
    """``g += c [x_i, B]`` for a dense row."""
    d = X.shape[1]
    for j in range(d):
        g[j] += c * X[i, j]
    g[d] += c * B


@njit(cache=True, inline="always")
def csr_value(data, p):
    """The stored value ``data[p]`` of a CSR matrix; ``data=None`` stands for
    a binary matrix whose stored values are all 1 (a9a, w8a: the passes
    then read only the column indices, a third of the memory traffic).
    ``data is None`` is decided when numba compiles the caller (its own
    specialisation), as for the weights ``v``."""
    if data is None:
        return 1.0
    return data[p]


@njit(cache=True, inline="always")
def add_row_csr(data, indices, indptr, i, c, B, g):
    """``g += c [x_i, B]`` for a CSR row (``g`` has length d+1; ``data=None``:
    every stored value is 1, see :func:`csr_value`)."""
    for p in range(indptr[i], indptr[i + 1]):
        g[indices[p]] += c * csr_value(data, p)
    g[g.shape[0] - 1] += c * B


@njit(cache=True)
def cls_pass_dense(X, y, w, B, g, mask, v=None):
    """Most violated constraint of OP2 over dense rows.

    Adds ``sum_i c_i v_i y_i [x_i, B]`` into ``g`` (length d+1); writes ``c``
    into ``mask`` (uint8, length n) when ``mask.shape[0] == n``.  Returns
    ``(count, loss, offset)`` = ``(sum c_i, sum_i c_i v_i (1 - y_i w.x_i),
    sum_i c_i v_i)``; ``v`` (n,) example weights or None (all 1).
    """
    n, d = X.shape
    keep = mask.shape[0] == n
    cnt = 0
    loss = 0.0
    off = 0.0
    wb = w[d] * B
    for i in range(n):
        s = wb + _dot_row(X, i, w, d)
        m = y[i] * s
        if m < 1.0:
            cnt += 1
            li, ci, oi = violated_share(m, y[i], v, i)
            loss += li
            off += oi
            add_row_dense(X, i, ci, B, g)
            if keep:
                mask[i] = 1
        elif keep:
            mask[i] = 0
    return cnt, loss, off


@njit(cache=True)
def cls_pass_csr(data, indices, indptr, y, w, B, g, mask, v=None):
    """As :func:`cls_pass_dense` for CSR rows (O(nnz); ``data=None``: every
    stored value is 1, see :func:`csr_value`)."""
    n = indptr.shape[0] - 1
    d = w.shape[0] - 1
    keep = mask.shape[0] == n
    cnt = 0
    loss = 0.0
    off = 0.0
    wb = w[d] * B
    for i in range(n):
        s = wb
        for p in range(indptr[i], indptr[i + 1]):
            s += csr_value(data, p) * w[indices[p]]
        m = y[i] * s
        if m < 1.0:
            cnt += 1
            li, ci, oi = violated_share(m, y[i], v, i)
            loss += li
            off += oi
            add_row_csr(data, indices, indptr, i, ci, B, g)
            if keep:
                mask[i] = 1
        elif keep:
            mask[i] = 0
    return cnt, loss, off


@njit(cache=True)
def scores_dense(X, w, out):
    """``out_i = w[:d] . x_i`` (no constant feature)."""
    n, d = X.shape
    for i in range(n):
        out[i] = _dot_row(X, i, w, d)


@njit(cache=True)
def scores_csr(data, indices, indptr, w, out):
    n = indptr.shape[0] - 1
    for i in range(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * w[indices[p]]
        out[i] = s


@njit(cache=True)
def wsum_dense(X, coef, g):
    """``g[:d] += sum_i coef_i x_i`` (rows with coef 0 are skipped)."""
    n, d = X.shape
    for i in range(n):
        c = coef[i]
        if c != 0.0:
            for j in range(d):
                g[j] += c * X[i, j]


@njit(cache=True)
def wsum_csr(data, indices, indptr, coef, g):
    n = indptr.shape[0] - 1
    for i in range(n):
        c = coef[i]
        if c != 0.0:
            for p in range(indptr[i], indptr[i + 1]):
                g[indices[p]] += c * data[p]


@njit(cache=True)
def ordinal_counts(s, rank, R, c_plus, c_minus):
    """Joachims' Algorithm 2 sweep: ``c+`` and ``c-`` (int64, length n).

    ``rank`` holds integers in ``[0, R)`` (ranks may be empty).  Returns
    ``(n_violated_pairs, loss_sum)`` with
    ``loss_sum = sum_{violated (i,j)} (1 - (s_i - s_j))
    = sum_i c+_i (1 - s_i) + c-_i s_i``.
    """
    n = s.shape[0]
    order = np.argsort(s)
    ss = s[order]
    # number of examples with rank < r, and with rank > r
    size = np.zeros(R, dtype=np.int64)
    for i in range(n):
        size[rank[i]] += 1
    n_lower = np.zeros(R, dtype=np.int64)
    acc = 0
    for r in range(R):
        n_lower[r] = acc
        acc += size[r]
    # c+_i = #{j: rank_j < rank_i} - #{j: rank_j < rank_i, s_j <= s_i - 1}
    cnt = np.zeros(R, dtype=np.int64)
    p = 0
    for t in range(n):
        i = order[t]
        thr = s[i] - 1.0
        while p < n and ss[p] <= thr:
            cnt[rank[order[p]]] += 1
            p += 1
        below = 0
        for r in range(rank[i]):
            below += cnt[r]
        c_plus[i] = n_lower[rank[i]] - below
    # c-_i = #{j: rank_j > rank_i, s_j < s_i + 1}
    for r in range(R):
        cnt[r] = 0
    p = 0
    for t in range(n):
        i = order[t]
        thr = s[i] + 1.0
        while p < n and ss[p] < thr:
            cnt[rank[order[p]]] += 1
            p += 1
        above = 0
        for r in range(rank[i] + 1, R):
            above += cnt[r]
        c_minus[i] = above
    npairs = 0
    loss = 0.0
    for i in range(n):
        npairs += c_plus[i]
        loss += c_plus[i] * (1.0 - s[i]) + c_minus[i] * s[i]
    return npairs, loss
