"""The one-vs-one pairs of a small C-SVC fit, several in one compiled call.

Problem.  A one-vs-one fit of k classes solves k(k-1)/2 binary C-SVC duals
(:mod:`svmlab._multiclass`), each by the compiled WSS 2 loop
(:func:`svmlab.smo._dual_core.dual_run`).  On small sets (iris: 150 rows, 3
pairs; digits: 1797 rows, 45 pairs) the loop's own work is a fraction of a
millisecond per pair, while making a pair's state from Python (its
:class:`svmlab.kernels.Kernel`, :class:`svmlab.kernels.KernelCache`,
:class:`svmlab.smo._dual.DualState`, about 60 NumPy calls) and calling the
loop (numba types its named tuples at every call) cost about as much again
(docs/decisions/31d01, 32o01).

Contract.  :func:`ovo_pairs` makes, for each pair from ``p0`` on, exactly
the arrays a pair's :class:`svmlab.smo.SMORun` (WSS 2, float64 row cache
over the fit's :class:`svmlab.kernels.cache.SharedRowStore`) would hold --
the pair's rows of X copied as two slices of the class-ordered set, their
squared norms and kernel diagonal as slices of the whole set's (the same
values: row-wise sums do not depend on the other rows), the bounds, a fresh
row cache of the same number of slots whose misses the store serves -- runs
the same compiled loop on them and takes LIBSVM's intercept as
``DualState.intercepts`` does.  So every step, multiplier and intercept is
the run-by-run path's, bit for bit.  It returns after the first pair that
does not converge within its step allowance (the caller then runs that pair
through its own run, which gives its stop reason and message), or once
``budget`` steps were taken (the caller checks Ctrl-C between calls).

Only dense float64 rows (no CSR, no bit-packed rows, no float32 cache) take
this path; the caller (:meth:`svmlab._multiclass.MulticlassRun._advance_lean`)
checks that, and that no step hook or callback asked for records.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .._kkt import intercept
from ..kernels._rows import KernelData
from ..kernels.cache import CacheData, SharedRows
from ._core import ACTIVE, FS_SIZE, IS_DONE, IS_N_ACTIVE, IS_SHRINK_COUNTER, IS_SIZE
from ._dual_core import (DualIterate, DualOptions, DualProblem, DualRows, dual_gradient,
                         dual_run)
from ._records import DUAL_BUFFER

__all__ = ["ovo_pairs"]


@njit(cache=True)
def ovo_pairs(kd, tmpl, pa, pb, p0, kdiag_all, Cv, C, uniform, tol, eps, shrinking, want_rec,
              limits, slots, offsets, alpha_out, n_iter, done, icpt, counts, budget):
    """Run pairs ``p0, p0+1, ...`` to their end; returns the index of the
    first pair not run to convergence by this call (``len(pa)`` when all
    were), and the steps taken.

    Parameters
    ----------
    kd : KernelData
        The kept training rows ordered by class (dense float64).
    tmpl : SharedRows
        A view of the fit's store (its LRU arrays, ``kd`` and class
        offsets ``coff``); each pair gets its own ``gmap``, ``cls`` and
        ``counts``.
    pa, pb : int64 (P,)
        The pairs' classes (LIBSVM's order).
    kdiag_all : float64 (N,)
        ``K(x_i, x_i)`` of the class-ordered rows.
    Cv : float64 (N,)
        The per-example bounds in class order; ``C`` the scalar bound and
        ``uniform[p]`` whether pair p's bounds are all ``C`` (the run then
        holds ``np.full(n, C)``, else a copy of its slice of ``Cv``).
    tol, eps, shrinking, want_rec : the loop's options (``want_rec`` False).
    limits : int64 (P,)
        The most steps pair p may take in this call (its ``max_iter`` or
        safeguard cap, cut to the caller's allowance).
    slots : int64 (P,)
        The number of rows pair p's cache holds.
    offsets : int64 (P+1,)
        Pair p's multipliers go to ``alpha_out[offsets[p]:offsets[p+1]]``.
    n_iter, done : int64 (P,)
        Out: steps, and 1 when the pair converged.
    icpt : float64 (P,)
        Out: LIBSVM's intercept (svmlab's sign, ``SMORun.intercept``).
    counts : int64 (P, 3)
        Out: cache hits, cache misses, kernel values the store computed.
    budget : int
        Return after the pair during which the steps of this call reach it.
    """
    P = pa.shape[0]
    coff = tmpl.coff
    d = kd.dense.shape[1]
    taken = 0
    for p in range(p0, P):
        a = pa[p]
        b = pb[p]
        a0 = coff[a]
        a1 = coff[a + 1]
        b0 = coff[b]
        b1 = coff[b + 1]
        na = a1 - a0
        n = na + b1 - b0
        # the pair's rows: class a's, then class b's (copies, as the run's Kernel)
        Xp = np.empty((n, d))
        Xp[:na] = kd.dense[a0:a1]
        Xp[na:] = kd.dense[b0:b1]
        sq = np.empty(n)
        sq[:na] = kd.sqnorm[a0:a1]
        sq[na:] = kd.sqnorm[b0:b1]
        kdp = KernelData(kd.sparse, Xp, kd.indptr, kd.indices, kd.data, sq, kd.ktype,
                         kd.gamma, kd.coef0, kd.degree, kd.work, kd.binary, kd.bits,
                         kd.brows, kd.bcount, kd.table, kd.bwork, kd.dense32, kd.cols)
        gmap = np.empty(n, np.int64)
        for t in range(na):
            gmap[t] = a0 + t
        for t in range(na, n):
            gmap[t] = b0 + t - na
        cls = np.empty(2, np.int64)
        cls[0] = a
        cls[1] = b
        cnt = np.zeros(3, np.int64)
        sh = SharedRows(tmpl.rows, tmpl.slot_of, tmpl.owner, tmpl.prev, tmpl.next, tmpl.meta,
                        gmap, tmpl.kd, cls, coff, cnt)
        m = slots[p]
        meta = np.zeros(5, np.int64)
        meta[0] = -1
        meta[1] = -1
        cd = CacheData(np.empty((m, n)), np.full(n, -1, np.int64), np.full(m, -1, np.int64),
                       np.full(m, -1, np.int64), np.full(m, -1, np.int64), meta, sh)
        # the problem: y = +1 for class a, -1 for class b; p = -1, v = -y p
        y = np.ones(n)
        for t in range(na, n):
            y[t] = -1.0
        yp = np.empty(n)
        for t in range(n):
            yp[t] = -y[t] * -1.0
        U = np.empty(n)
        if uniform[p]:
            for t in range(n):
                U[t] = C
        else:
            U[:na] = Cv[a0:a1]
            U[na:] = Cv[b0:b1]
        kdiag = np.empty(n)
        kdiag[:na] = kdiag_all[a0:a1]
        kdiag[na:] = kdiag_all[b0:b1]
        idx = np.arange(n)
        alpha = np.zeros(n)
        G = np.zeros(n)
        Gbar = np.zeros((2, n))
        full = np.zeros(n)
        rowfull = np.zeros(n, np.bool_)
        rb = np.zeros((2, 0))
        active = np.full(n, ACTIVE, np.int8)
        act = np.arange(n)
        ist = np.zeros(IS_SIZE, np.int64)
        ist[IS_N_ACTIVE] = n
        ist[IS_SHRINK_COUNTER] = min(n, 1000)
        fst = np.zeros(FS_SIZE)
        rec = np.zeros(DUAL_BUFFER)
        rows = DualRows(kdp, cd, full, rowfull, rb)
        prob = DualProblem(y, yp, U, kdiag, idx, tol, eps)
        it = DualIterate(alpha, G, Gbar, fst, ist, active, act)
        opt = DualOptions(shrinking, min(n, 1000), want_rec)
        k = dual_run(rows, prob, it, rec, opt, limits[p], None, None, None)
        taken += k
        n_iter[p] = k
        counts[p, 0] = meta[3]
        counts[p, 1] = meta[4]
        counts[p, 2] = cnt[0]
        if ist[IS_DONE] != 1:
            return p, taken
        # LIBSVM's intercept from -y grad = v - f0 (DualState.intercepts)
        shrunk = False
        for t in range(n):
            if active[t] != ACTIVE:
                shrunk = True
                break
        if shrunk:
            f0 = dual_gradient(rows, prob, it, None, None)
        else:
            f0 = G.copy()
        icpt[p] = intercept(yp - f0, y, alpha, U)
        alpha_out[offsets[p]:offsets[p] + n] = alpha
        done[p] = 1
        if taken >= budget:
            return p + 1, taken
    return P, taken
