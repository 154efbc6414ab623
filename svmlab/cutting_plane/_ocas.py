"""OCAS, the Optimized Cutting Plane Algorithm (Franc & Sonnenburg, ICML 2008;
JMLR 10, 2009), for the same linear SVM as Joachims' Algorithm 1.

Problem (Joachims' OP1 with the paper's C; the bias is a constant feature B)::

    F(w) = 1/2 |w|^2 + C R(w),    R(w) = (1/n) sum_i v_i max(0, 1 - y_i w.x_i)

with example weights ``v_i`` (``class_weight[y_i] * sample_weight_i``; all 1
without weights, and then every function below takes ``v=None``, compiled
as its own specialisation with the weighted branches pruned, so the
unweighted code is unchanged).  The weights enter the cut (``g``, ``d`` carry
``v_i``), the hinge sum of F and the line search's slopes and jumps.

Both methods build the same cutting-plane model of R from subgradients
(the constraints ``g_k.w >= d_k - xi`` of OP2) and solve the same reduced
problem (OP3, :mod:`svmlab.cutting_plane._qp`), whose value is a lower bound on
min F.  They differ in *where* they cut:

* Algorithm 1 cuts at the reduced problem's solution ``w_t``, which can jump
  far from the optimum (the "zig-zag");
* OCAS keeps a best-so-far point ``w_b`` and, per iteration t
  (JMLR 2009, Algorithm 1 "OCAS"):

  1. ``w_t`` = solution of the reduced problem over the cuts so far;
  2. line search: ``w_b <- w_b + k (w_t - w_b)`` with
     ``k = argmin_{k >= 0} F(w_b + k (w_t - w_b))``, solved *exactly*
     (:func:`exact_line_search`; F along the line is a convex piecewise
     quadratic whose kinks are the hinge breakpoints, found by sorting);
  3. stop when ``F(w_b) - F_t(w_t) <= C epsilon`` (upper bound minus the
     reduced problem's lower bound), so ``F(w_b) <= min F + C epsilon``,
     the same guarantee as Joachims' Theorem 3;
  4. cutting point ``w_c = (1 - mu) w_b + mu w_t`` (the paper's mu = 0.1);
     add the cut of R at ``w_c``: ``c_i = [y_i w_c.x_i < 1]``,
     ``g = (1/n) sum_i c_i v_i y_i x_i``, ``d = (1/n) sum_i c_i v_i``.

An iteration makes two O(sn) passes: the margins of ``w_t`` (from which the
margins of ``w_b`` and ``w_c`` follow by linear combination, since all
three lie on one line) and the sum over the violated rows at ``w_c``.

Decisions where the papers are silent (documented here for students):
``w_b`` starts at 0 (the first cut is taken at 0, like Algorithm 1's);
the margins of ``w_b`` are updated as ``m_b + k (m_t - m_b)`` rather than
recomputed (rounding drift ~1e-16 per iteration); ties in the line search
(a flat minimum) take the smallest minimiser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._jit import at_numba_import, njit

from ._passes import add_row_csr, add_row_dense, csr_value, violated_share

#: numba's ``prange`` once numba is imported (the hand-over of svmlab._jit);
#: the parallel kernels never run interpreted, so before that nothing reads it
prange = range


@at_numba_import
def _numba_side():
    global prange
    from numba import prange


__all__ = [
    "OcasRecord",
    "exact_line_search",
    "margins_dense",
    "margins_csr",
    "margins_dense_parallel",
    "margins_csr_parallel",
    "ocas_step",
    "cut_dense",
    "cut_csr",
    "cut_update_dense",
    "cut_update_csr",
    "MU",
    "PARALLEL_MIN_WORK",
    "use_parallel",
    "row_grouping",
    "permute_csr_rows",
]

#: the paper's cutting-point parameter (w_c = (1 - mu) w_b + mu w_t)
MU = 0.1


@dataclass(frozen=True, slots=True)
class OcasRecord:
    """One OCAS iteration (``CuttingPlaneClassifier(method="ocas")``).

    Fields
    ------
    iteration : 1-based iteration number (= cuts added so far).
    w, b : the best-so-far point ``w_b`` after this iteration's line search
        (``b`` its bias, 0 without intercept); ``w_norm`` = norm of ``[w, b]``.
    primal : ``F(w_b)`` (an upper bound on the optimum).
    dual : the reduced problem's value at ``w_t`` (a lower bound);
        ``gap = primal - dual``.  Training stops when ``gap <= C epsilon``.
    step : the exact line-search step k (``w_b = w_b_old + k (w_t - w_b_old)``).
    reduced_w, reduced_b : the reduced problem's solution ``w_t``;
        ``reduced_primal = F(w_t)``.
    cut_w, cut_b : the cutting point ``w_c = (1 - mu) w_b + mu w_t``; ``mu``.
    xi : the reduced problem's slack at ``w_t``.
    xi_new : ``R(w_c)``, the average (weighted) hinge loss at the cutting
        point (the new cut's value there).
    constraint : boolean mask of the new cut c (``None`` on the Dask path);
        ``constraint_size = sum c``, ``constraint_norm = |g|``,
        ``constraint_offset = d``.
    working_set_size : cuts after adding this one; ``alpha`` the reduced
        problem's multipliers after re-solving.
    """

    iteration: int
    w: np.ndarray = field(repr=False)
    b: float
    w_norm: float
    primal: float
    dual: float
    gap: float
    step: float
    reduced_w: np.ndarray = field(repr=False)
    reduced_b: float
    reduced_primal: float
    cut_w: np.ndarray = field(repr=False)
    cut_b: float
    mu: float
    xi: float
    xi_new: float
    constraint: np.ndarray | None = field(repr=False)
    constraint_size: int
    constraint_norm: float
    constraint_offset: float
    working_set_size: int
    alpha: np.ndarray = field(repr=False)


# --------------------------------------------------------------------------
# the O(sn) passes
# --------------------------------------------------------------------------
@njit(cache=True, fastmath={"reassoc", "contract"})
def margins_dense(X, y, w, B, out):
    """``out_i = y_i (w[:d].x_i + w[d] B)`` over dense rows (reassociation
    lets LLVM vectorise the row's dot product)."""
    n, d = X.shape
    wb = w[d] * B
    for i in range(n):
        s = 0.0
        for j in range(d):
            s += X[i, j] * w[j]
        out[i] = y[i] * (s + wb)


@njit(cache=True)
def margins_csr(data, indices, indptr, y, w, B, out):
    """As :func:`margins_dense` for CSR rows (O(nnz)); ``data=None``: a
    binary matrix, every stored value 1 (:func:`~._passes.csr_value`)."""
    n = indptr.shape[0] - 1
    d = w.shape[0] - 1
    wb = w[d] * B
    for i in range(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += csr_value(data, p) * w[indices[p]]
        out[i] = y[i] * (s + wb)


#: the margins pass runs on all cores only above this many stored values
#: (nonzeros, or n * d for dense X): below, waking the threads costs more
#: than the pass (docs/decisions/26d10-ocas-passes-and-line-search.md)
PARALLEL_MIN_WORK = 64_000_000


def use_parallel(work):
    """Whether the margins pass should use :func:`margins_csr_parallel` /
    :func:`margins_dense_parallel` for ``work`` stored values."""
    import numba

    return work >= PARALLEL_MIN_WORK and numba.get_num_threads() > 1


# The same two passes with the rows split over the cores (numba prange).
# Each row's sum is computed by one thread with the same code, so the result
# does not depend on the number of threads; it equals the serial kernel's bit
# for bit in host-tuned code, and to a few ulps in the shipped x86-64-v3 code,
# where LLVM may vectorise the two loops' reassociated sums differently
# (tested; decision 28a01).
@njit(cache=True, parallel=True, fastmath={"reassoc", "contract"})
def margins_dense_parallel(X, y, w, B, out):
    """:func:`margins_dense` with rows in parallel."""
    n, d = X.shape
    wb = w[d] * B
    for i in prange(n):
        s = 0.0
        for j in range(d):
            s += X[i, j] * w[j]
        out[i] = y[i] * (s + wb)


@njit(cache=True, parallel=True)
def margins_csr_parallel(data, indices, indptr, y, w, B, out):
    """:func:`margins_csr` with rows in parallel (``data=None``: binary)."""
    n = indptr.shape[0] - 1
    d = w.shape[0] - 1
    wb = w[d] * B
    for i in prange(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += csr_value(data, p) * w[indices[p]]
        out[i] = y[i] * (s + wb)


@njit(cache=True)
def cut_dense(X, y, marg, B, g, mask, v=None):
    """The cut of R at a point with margins ``marg``: ``c_i = [marg_i < 1]``;
    adds ``sum_i c_i y_i [x_i, B]`` into ``g`` (length d+1), writes c into
    ``mask`` when ``mask.shape[0] == n``; returns ``(sum c_i, sum_i c_i v_i
    (1 - marg_i), sum_i c_i v_i)``, the weights ``v`` also scaling the rows
    added into ``g`` (``v=None``: all 1)."""
    n = X.shape[0]
    keep = mask.shape[0] == n
    cnt = 0
    loss = 0.0
    off = 0.0
    for i in range(n):
        m = marg[i]
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
def cut_csr(data, indices, indptr, y, marg, B, g, mask, v=None):
    """As :func:`cut_dense` for CSR rows (``data=None``: every stored value 1)."""
    n = indptr.shape[0] - 1
    keep = mask.shape[0] == n
    cnt = 0
    loss = 0.0
    off = 0.0
    for i in range(n):
        m = marg[i]
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
def cut_update_dense(X, y, marg, B, g, mask, v=None):
    """The cut of R at a point with margins ``marg``, updated from the
    previous cut instead of summed afresh: on entry ``g`` holds the
    unscaled ``sum_i c_i v_i y_i [x_i, B]`` of the previous cut and
    ``mask`` its ``c`` (uint8, length n; all 0 and ``g = 0`` for the first
    cut, which is then the plain sum of :func:`cut_dense`, in the same
    order).  Only the rows whose ``c_i = [marg_i < 1]`` changed are added
    (+) or removed (-), so the pass costs O(n) plus the changed rows' values
    rather than every violated row's (between consecutive OCAS cutting points
    2-8% of the rows change on a9a and w8a, against 14-36% violated).  On
    exit ``g`` and ``mask`` describe the new cut.  Returns ``(sum c_i,
    sum_i c_i v_i (1 - marg_i), sum_i c_i v_i, rows changed)``; ``v``:
    example weights (None: all 1).

    Rounding: each update adds one rounding error of ``g``'s size, so the
    caller sums afresh from time to time (:class:`~._oracle.ClassifierOracle`
    does every 32 cuts); with binary values and no weights every partial
    sum is an integer and the update is exact."""
    n = X.shape[0]
    cnt = 0
    loss = 0.0
    off = 0.0
    changed = 0
    for i in range(n):
        m = marg[i]
        now = m < 1.0
        li, ci, oi = violated_share(m, y[i], v, i)
        if now:
            cnt += 1
            loss += li
            off += oi
        if now != (mask[i] != 0):
            changed += 1
            add_row_dense(X, i, ci if now else -ci, B, g)
            mask[i] = 1 if now else 0
    return cnt, loss, off, changed


@njit(cache=True)
def cut_update_csr(data, indices, indptr, y, marg, B, g, mask, v=None):
    """As :func:`cut_update_dense` for CSR rows (``data=None``: every stored
    value is 1)."""
    n = indptr.shape[0] - 1
    cnt = 0
    loss = 0.0
    off = 0.0
    changed = 0
    for i in range(n):
        m = marg[i]
        now = m < 1.0
        li, ci, oi = violated_share(m, y[i], v, i)
        if now:
            cnt += 1
            loss += li
            off += oi
        if now != (mask[i] != 0):
            changed += 1
            add_row_csr(data, indices, indptr, i, ci if now else -ci, B, g)
            mask[i] = 1 if now else 0
    return cnt, loss, off, changed


# --------------------------------------------------------------------------
# the exact line search
# --------------------------------------------------------------------------
#: rows per block of the line search's second sweep (see :func:`_search`)
_BLOCK = 16


@njit(cache=True, inline="always")
def _on_side(a, b, below):
    """Whether the hinge term ``max(0, a - k b)`` has its breakpoint
    ``k = a / b`` in (0, 1) (``below``) or in (1, inf), decided on a and b
    (not on the rounded quotient); b = 0: no breakpoint."""
    if below:
        return ((b > 0.0) & (0.0 < a) & (a < b)) | ((b < 0.0) & (b < a) & (a < 0.0))
    return ((b > 0.0) & (a > b)) | ((b < 0.0) & (a < b))


@njit(cache=True, fastmath={"reassoc", "contract"})
def _side_count(mb, v, v_is_target, i0, i1, below):
    """Number of rows i0 <= i < i1 with a breakpoint on the side ``below``
    of k = 1 (:func:`_on_side`); a branch-free loop LLVM vectorises."""
    c = 0
    for i in range(i0, i1):
        a = 1.0 - mb[i]
        b = v[i] - mb[i] if v_is_target else v[i]
        c += _on_side(a, b, below)
    return c


@njit(cache=True, fastmath={"reassoc", "contract"})
def _slopes(wd, mb, v, v_is_target, Cn, wt=None):
    """The derivative of the line-search function just right of k = 0 and
    of k = 1: ``(s0, s1) = (wd - Cn sum_{i active at 0+} wt_i b_i, wd - Cn
    sum_{i active at 1+} wt_i b_i)`` with ``a_i = 1 - mb_i``, ``b_i`` the
    direction's margin (``v_i``, or ``v_i - mb_i`` when ``v_is_target``);
    row i is active at 0+ when ``a_i > 0`` or (``a_i = 0`` and ``b_i < 0``),
    at 1+ likewise with ``a_i - b_i``.  Reassociated sums (vectorised by
    LLVM); the rounding
    differs from a sequential sum by a few ulps of the sum of |terms|.
    Third value: the number of rows with a breakpoint in (0, 1)
    (:func:`_on_side`)."""
    n = mb.shape[0]
    t0 = 0.0
    t1 = 0.0
    cnt = 0
    for i in range(n):
        a = 1.0 - mb[i]
        b = v[i] - mb[i] if v_is_target else v[i]
        neg = b < 0.0
        c = a - b
        cnt += _on_side(a, b, True)
        if wt is not None:
            b = b * wt[i]
        t0 += b if (a > 0.0) | ((a == 0.0) & neg) else 0.0
        t1 += b if (c > 0.0) | ((c == 0.0) & neg) else 0.0
    return wd - Cn * t0, wd - Cn * t1, cnt


@njit(cache=True, inline="always")
def _push_breakpoint(a, b, Cn, wt, i, kk, jump, m):
    """Store row i's breakpoint ``k = a / b`` and the jump ``Cn wt_i |b|`` of
    the derivative there at ``kk[m]``, ``jump[m]``; returns ``m + 1``
    (``wt`` None: every weight 1)."""
    if wt is None:
        cw = Cn
    else:
        cw = Cn * wt[i]
    kk[m] = a / b
    jump[m] = cw * abs(b)
    return m + 1


@njit(cache=True, error_model="numpy")
def _search(wd, dd, mb, v, v_is_target, Cn, kk, jump, wt=None):
    """Core of :func:`exact_line_search`: the direction's margins are
    ``dm_i = v_i`` or, when ``v_is_target``, ``dm_i = v_i - mb_i`` (the
    margins of the target point).  ``kk`` and ``jump`` are work arrays of
    length at least n (the breakpoints on the minimiser's side of k = 1;
    the callers pass 2n).  ``wt``: example weights (None: all 1); a weighted hinge
    term ``wt_i max(0, a_i - k b_i)`` has slope ``-wt_i b_i`` and its kink
    jumps by ``Cn wt_i |b_i|``."""
    n = mb.shape[0]
    # first sweep: the derivative's offset just right of 0 (s0) and of 1
    # (s1), which decides on which side of k = 1 the minimiser lies (k = 1
    # is the first pivot: w_t itself); vectorised (_slopes)
    s0, s1, n_low = _slopes(wd, mb, v, v_is_target, Cn, wt)
    if s0 >= 0.0:
        return 0.0  # phi nondecreasing from 0: w_b stays
    below = dd + s1 >= 0.0  # phi'(1+) >= 0: the minimiser is in (0, 1]
    if below and n_low > _BRACKET_MIN:
        return _search_bracketed(wd, dd, mb, v, v_is_target, Cn, kk, jump, wt, s0, s1)
    # second sweep: the breakpoints a/b on the minimiser's side of 1 only,
    # those in (0, 1) or those in (1, inf) (the flags compare a and b, not
    # the rounded quotient; rows with b = 0 have no breakpoint).  Between
    # consecutive OCAS iterations the minimiser is nearly always in (0, 1)
    # and few rows have their breakpoint there (2-5% on w8a), so the rows
    # are scanned in blocks of _BLOCK whose flags are first counted by a
    # vectorised loop (_side_count); only blocks with a breakpoint are
    # visited row by row, and the division is done for those rows only.
    m = np.int64(0)  # (a literal 0 would compile _select once more for it)
    nblk = (n + _BLOCK - 1) // _BLOCK
    for blk in range(nblk):
        i0 = blk * _BLOCK
        i1 = min(n, i0 + _BLOCK)
        if _side_count(mb, v, v_is_target, i0, i1, below) == 0:
            continue
        for i in range(i0, i1):
            a = 1.0 - mb[i]
            b = v[i] - mb[i] if v_is_target else v[i]
            if _on_side(a, b, below):
                m = _push_breakpoint(a, b, Cn, wt, i, kk, jump, m)
    if below:
        s = s0
        hi = 1.0
    else:               # beyond 1: start right of 1 with the jumps up to 1
        s = s1
        hi = np.inf
    return _select(dd, s, hi, kk, jump, m)


#: the line search narrows (0, 1) by vectorised passes (:func:`_bracket_pass`)
#: before collecting breakpoints when more than this many lie in (0, 1)
_BRACKET_MIN = 4096
#: ... until at most this many are left in the bracket, or after
#: _BRACKET_ROUNDS passes
_BRACKET_FEW = 1024
_BRACKET_ROUNDS = 8


@njit(cache=True, inline="always")
def _in_bracket(a, b, lo, hi):
    """Row with a breakpoint in (0, 1) (:func:`_on_side`) whose rounded
    quotient ``a / b`` lies in (lo, hi)."""
    r = a / b
    return _on_side(a, b, True) & (r > lo) & (r < hi)


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _bracket_pass(mb, v, v_is_target, Cn, wt, lo, p, hi):
    """Over the rows with a breakpoint ``r = a / b`` in (0, 1): ``(Cn sum
    of wt_i |b_i| over lo < r <= p, count of lo < r < p, count of
    p < r < hi)``: the jumps a pivot p of the quickselect of :func:`_search`
    would take and the candidates it would keep on either side, for all
    rows at once (vectorised; b = 0 gives inf or nan, compared false)."""
    js = 0.0
    c1 = 0
    c2 = 0
    for i in range(mb.shape[0]):
        a = 1.0 - mb[i]
        b = v[i] - mb[i] if v_is_target else v[i]
        on = _on_side(a, b, True)
        r = a / b
        j = abs(b)
        if wt is not None:
            j = j * wt[i]
        js += j if on & (r > lo) & (r <= p) else 0.0
        c1 += on & (r > lo) & (r < p)
        c2 += on & (r > p) & (r < hi)
    return Cn * js, c1, c2


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _bracket_count(mb, v, v_is_target, i0, i1, lo, hi):
    """Rows i0 <= i < i1 with :func:`_in_bracket` (vectorised)."""
    c = 0
    for i in range(i0, i1):
        a = 1.0 - mb[i]
        b = v[i] - mb[i] if v_is_target else v[i]
        c += _in_bracket(a, b, lo, hi)
    return c


@njit(cache=True, error_model="numpy")
def _search_bracketed(wd, dd, mb, v, v_is_target, Cn, kk, jump, wt, s0, s1):
    """:func:`_search` when the minimiser is in (0, 1] and many rows have
    their breakpoint there (early OCAS iterations: up to 40% of a9a's rows,
    too many to collect and select one by one).  The bracket
    (lo, hi) = (0, 1) is first narrowed by pivots chosen by regula falsi on
    the derivative (Illinois variant), each tested by one vectorised pass
    over the rows (:func:`_bracket_pass`: exactly the jumps and candidates
    a quickselect pivot would take), until at most ``_BRACKET_FEW``
    breakpoints remain inside; those are collected and the quickselect of
    :func:`_search` finishes.  Same invariant, same minimiser."""
    n = mb.shape[0]
    lo = 0.0
    hi = 1.0
    s = s0
    f_lo = s0               # phi'(lo+)  < 0
    f_hi = dd + s1          # phi'(hi+) >= 0
    side = 0
    for _r in range(_BRACKET_ROUNDS):
        p = lo + (hi - lo) * (-f_lo) / (f_hi - f_lo)
        width = hi - lo
        if not (p > lo + 1e-3 * width):
            p = lo + 1e-3 * width
        if not (p < hi - 1e-3 * width):
            p = hi - 1e-3 * width
        if not (lo < p < hi):
            break
        js, c_lo, c_hi = _bracket_pass(mb, v, v_is_target, Cn, wt, lo, p, hi)
        sp = s + js
        fp = dd * p + sp
        if fp >= 0.0:
            hi = p
            f_hi = fp
            cnt = c_lo
            if side == -1:
                f_lo *= 0.5  # Illinois: the kept end was kept twice
            side = -1
        else:
            lo = p
            s = sp
            f_lo = fp
            cnt = c_hi
            if side == 1:
                f_hi *= 0.5
            side = 1
        if cnt <= _BRACKET_FEW:
            break
    m = np.int64(0)  # (a literal 0 would compile _select once more for it)
    nblk = (n + _BLOCK - 1) // _BLOCK
    for blk in range(nblk):
        i0 = blk * _BLOCK
        i1 = min(n, i0 + _BLOCK)
        if _bracket_count(mb, v, v_is_target, i0, i1, lo, hi) == 0:
            continue
        for i in range(i0, i1):
            a = 1.0 - mb[i]
            b = v[i] - mb[i] if v_is_target else v[i]
            if _in_bracket(a, b, lo, hi):
                m = _push_breakpoint(a, b, Cn, wt, i, kk, jump, m)
    return _select(dd, s, hi, kk, jump, m)


@njit(cache=True)
def _select(dd, s, hi, kk, jump, m):
    """The quickselect of :func:`_search` on the candidates ``kk[:m]``
    (breakpoints in (lo, hi), jumps ``jump[:m]``), ``s`` the derivative's
    offset just right of lo."""
    while m > 0:
        p = kk[m // 2]
        sp = s
        for t in range(m):
            if kk[t] <= p:
                sp += jump[t]
        q = 0
        if dd * p + sp >= 0.0:
            # minimiser in (lo, p]: keep the candidates strictly below p
            hi = p
            for t in range(m):
                if kk[t] < p:
                    kk[q] = kk[t]
                    jump[q] = jump[t]
                    q += 1
        else:
            # minimiser beyond p: lo = p, the jumps up to p are taken
            s = sp
            for t in range(m):
                if kk[t] > p:
                    kk[q] = kk[t]
                    jump[q] = jump[t]
                    q += 1
        m = q
    if dd > 0.0:
        root = -s / dd
        if root < hi:
            return root
    return hi if hi < np.inf else 0.0


@njit(cache=True)
def exact_line_search(wd, dd, mb, dm, Cn, v=None):
    """The minimiser of the line-search function (its readable twin, by a
    full sort of the breakpoints:
    :func:`svmlab.reference.cutting_plane.exact_line_search_sorted`), by a partial
    sort: quickselect on the breakpoints instead of a full sort, expected
    O(n) rather than O(n log n) (the full sort dominated an OCAS iteration
    on a9a).

    Invariant: the minimiser lies in ``(lo, hi]``; ``s`` is the derivative's
    offset just right of ``lo`` (``phi'(k) = dd k + s`` there) and the
    candidate breakpoints are those in ``(lo, hi)``.  A pivot breakpoint p
    splits them: if ``phi'(p+) = dd p + s + (jumps of candidates <= p) >= 0``
    the minimiser is at most p (``hi = p``), else it is beyond p
    (``lo = p``, ``s`` takes those jumps).  With no candidate left, phi is
    one quadratic piece on ``(lo, hi)``: its root ``-s/dd`` if below hi,
    else the kink hi.  The first pivot is k = 1 (the reduced solution
    itself), decided in the same sweep that collects the breakpoints, so
    only the breakpoints on the minimiser's side of 1 are ever stored.
    ``v``: example weights of the hinge terms (None: all 1).
    """
    n = mb.shape[0]
    return _search(wd, dd, mb, dm, False, Cn, np.empty(2 * n), np.empty(2 * n), v)


@njit(cache=True)
def ocas_step(wd, dd, mb, mt, Cn, mu, mc, kk, jump, v=None):
    """Steps 2 and 4 of OCAS on the margins, fused in one compiled call:
    the exact line search from ``w_b`` (margins ``mb``) towards ``w_t``
    (margins ``mt``), the update ``mb <- mb + k (mt - mb)`` in place, and the
    cutting point's margins ``mc = (1 - mu) mb + mu mt``.  Returns
    ``(k, sum_i v_i max(0, 1 - mb_i))`` (the new ``w_b``'s hinge sum;
    ``v`` example weights, None: all 1).  ``kk``, ``jump``: work arrays
    of length 2n."""
    k = _search(wd, dd, mb, mt, True, Cn, kk, jump, v)
    return k, _step_update(k, mb, mt, mu, mc, v)


@njit(cache=True, fastmath={"reassoc", "contract"})
def _step_update(k, mb, mt, mu, mc, v=None):
    """``mb <- mb + k (mt - mb)`` (when k > 0), ``mc = (1 - mu) mb + mu mt``;
    returns ``sum_i v_i max(0, 1 - mb_i)`` (reassociated: vectorised)."""
    n = mb.shape[0]
    hinge = 0.0
    if k > 0.0:
        for i in range(n):
            mb[i] = mb[i] + k * (mt[i] - mb[i])
    for i in range(n):
        m = mb[i]
        if v is None:
            hinge += max(0.0, 1.0 - m)
        else:
            hinge += v[i] * max(0.0, 1.0 - m)
        mc[i] = (1.0 - mu) * m + mu * mt[i]
    return hinge


# --------------------------------------------------------------------------
# mostly-zero dense rows as CSR
# --------------------------------------------------------------------------
@njit(cache=True)
def _row_nnz(X, counts):
    n, d = X.shape
    total = 0
    for i in range(n):
        c = 0
        for j in range(d):
            c += X[i, j] != 0.0
        counts[i] = c
        total += c
    return total


@njit(cache=True)
def _fill_csr(X, indptr, indices, data):
    n, d = X.shape
    for i in range(n):
        p = indptr[i]
        for j in range(d):
            v = X[i, j]
            if v != 0.0:
                indices[p] = j
                data[p] = v
                p += 1


def dense_as_csr(X, max_density):
    """A C-contiguous float64 dense ``X`` as a canonical CSR matrix (int32
    indices, sorted, no explicit zeros) when at most ``max_density`` of its
    entries are nonzero, else ``None``.  Two compiled passes (count, fill):
    scipy's conversion plus a count cost as much as OCAS then saves on
    MNIST."""
    n, d = X.shape
    counts = np.empty(n, dtype=np.int64)
    total = int(_row_nnz(X, counts))
    if total > max_density * X.size or total >= 2**31:
        return None
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(total, dtype=np.int32)
    data = np.empty(total)
    _fill_csr(X, indptr, indices, data)
    import scipy.sparse as sp

    return sp.csr_matrix((data, indices, indptr), shape=(n, d))


# --------------------------------------------------------------------------
# rows grouped by length (short rows of varying length)
# --------------------------------------------------------------------------
#: OCAS groups the rows of a CSR matrix by length when its rows are short
#: (mean stored values per row at most GROUP_MAX_MEAN) and their lengths
#: vary (more than GROUP_MIN_CHANGES of consecutive rows differ in length)
GROUP_MAX_MEAN = 64.0
GROUP_MIN_CHANGES = 0.25


def row_grouping(indptr):
    """The permutation that groups the rows of a CSR matrix by length
    (stable argsort of the row lengths), or ``None`` when it would not pay.

    Why: the passes loop over a row's stored values, and with short rows of
    varying length (w8a: 11.7 values on average, 1 to 114) the loop's exit
    is mispredicted about once per row (w8a's margins pass takes half the
    time grouped, docs/decisions/26d10-ocas-passes-and-line-search.md).
    Long rows (images) amortise the misprediction, so only short rows of
    varying length are grouped."""
    indptr = np.asarray(indptr)
    n = indptr.shape[0] - 1
    if n < 2 or (indptr[-1] - indptr[0]) > GROUP_MAX_MEAN * n:
        return None
    changes, longest = _length_changes(indptr)
    if changes <= GROUP_MIN_CHANGES * (n - 1):
        return None
    perm = np.empty(n, dtype=np.int64)
    _counting_sort_by_length(indptr, longest, perm)
    return perm


@njit(cache=True)
def _length_changes(indptr):
    """``(number of consecutive rows whose lengths differ, longest row)``."""
    n = indptr.shape[0] - 1
    changes = 0
    longest = 0
    prev = -1
    for i in range(n):
        ln = indptr[i + 1] - indptr[i]
        if i > 0 and ln != prev:
            changes += 1
        if ln > longest:
            longest = ln
        prev = ln
    return changes, longest


@njit(cache=True)
def _counting_sort_by_length(indptr, longest, perm):
    """``perm`` = the stable argsort of the row lengths, by counting sort
    (O(n + longest); the same permutation as ``np.argsort(lengths,
    kind="stable")``)."""
    n = indptr.shape[0] - 1
    start = np.zeros(longest + 2, dtype=np.int64)
    for i in range(n):
        start[indptr[i + 1] - indptr[i] + 1] += 1
    for ln in range(1, longest + 2):
        start[ln] += start[ln - 1]
    for i in range(n):
        ln = indptr[i + 1] - indptr[i]
        perm[start[ln]] = i
        start[ln] += 1


@njit(cache=True)
def permute_csr_rows(data, indices, indptr, perm, new_data, new_indices, new_indptr):
    """Row i of the output is row ``perm[i]`` of the input (CSR arrays;
    ``new_indptr`` of length n+1, the others of length nnz; ``data=None``
    and ``new_data=None``: a binary matrix, only the indices are moved)."""
    n = perm.shape[0]
    new_indptr[0] = 0
    q = 0
    for i in range(n):
        r = perm[i]
        for p in range(indptr[r], indptr[r + 1]):
            new_indices[q] = indices[p]
            if data is not None:
                new_data[q] = data[p]
            q += 1
        new_indptr[i + 1] = q

