"""The compiled SMO state machine behind :class:`svmlab.SMOClassifier`.

Everything the algorithm knows lives in explicit arrays (see ``IS_*`` and
``FS_*`` below), so a fit can stop after any successful joint step and resume
later.  :func:`smo_run` is the ONLY implementation of the algorithm: the fast
path calls it with ``want_rec=False`` and a large step budget, the stepped
path calls it with ``kmax=1`` and ``want_rec=True`` to get the record buffer
filled.  Without records it pays one predictable branch per step.

Bookkeeping (documented here because it differs from Platt's pseudo-code):

* While examples are shrunk, kernel rows are computed (and cached) only for
  the active examples, as LIBSVM does; the cache is reset when examples are
  reactivated.  Full rows are computed only to update ``Gbar`` and to rebuild
  the gradient of the shrunk examples.
* Platt's passes over the non-bound examples visit the non-bound examples of
  the start of the pass (kept in an O(1)-update list), in index order.
* Non-linear kernels keep the full "gradient" ``G_i = sum_j alpha_j y_j K_ij``
  (the decision value without the threshold) for every *active* example,
  LIBSVM-style, instead of Platt's error cache for the non-bound examples
  only.  ``E_i = G_i + b - y_i`` is then O(1) for every example, which makes
  Platt's full passes and the wss2 selection O(1) per candidate; the price
  is an O(n_active) update per step, which costs no more than the two kernel
  rows the step needs anyway.  ``Gbar_i = sum_{alpha_j = C} C y_j K_ij`` lets
  the gradient of shrunk examples be rebuilt (LIBSVM's reconstruct_gradient).
* The linear kernel folds the weight vector: ``w`` (dense, length d) is
  updated at every step (Platt's TR section 2.4) and ``E_i = w.x_i + b - y_i``
  is a sparse dot product; no kernel rows and no kernel cache are used.
* The random start positions of Platt's second-choice loops come from a
  Park-Miller "minimal standard" generator whose state is ``ist[IS_RNG]``
  (integer arithmetic that never overflows int64, so the compiled and the
  NUMBA_DISABLE_JIT paths draw the same numbers).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._pairstep import pair_step, pair_threshold, segment_objective
from .cache import cache_reset, get_row, get_row_subset
from .kernels import kernel_row, kernel_row_subset

# --- integer state -----------------------------------------------------------
IS_EXAMINE_ALL = 0  # Platt: current pass visits every (active) example
IS_POS = 1  # Platt: next index of the current pass
IS_NUM_CHANGED = 2  # Platt: successful steps in the current pass
IS_RNG = 3  # Park-Miller state
IS_DONE = 4  # 1 converged, 2 stalled (no progress possible)
IS_N_ACTIVE = 5  # examples not shrunk
IS_SHRINK_COUNTER = 6  # steps until the next shrinking check
IS_UNSHRUNK = 7  # the one-time LIBSVM unshrink near the end happened
IS_ITER = 8  # successful joint steps so far
IS_NB = 9  # number of non-bound examples (0 < alpha < C)
IS_PASSES = 10  # passes started (Platt)
IS_PLEN = 11  # length of the current non-bound pass list (Platt)
IS_SIZE = 12

FS_B = 0  # threshold b (svmlab sign: f(x) = sum alpha y K + b)
FS_SIZE = 2

# --- record buffer layout ----------------------------------------------------
R_ITER, R_I1, R_I2, R_A1_OLD, R_A2_OLD, R_A1_NEW, R_A2_NEW = 0, 1, 2, 3, 4, 5, 6
R_L, R_H, R_ETA, R_E1, R_E2, R_B_OLD, R_B_NEW = 7, 8, 9, 10, 11, 12, 13
R_HEUR, R_CLIPPED, R_A2_UNC, R_Y1, R_Y2, R_EXALL = 14, 15, 16, 17, 18, 19
R_K11, R_K12, R_K22, R_DW, R_NACTIVE, R_NB = 20, 21, 22, 23, 24, 25
R_SIZE = 28

H_MAXDIFF, H_NONBOUND, H_FULL, H_WSS2 = 0, 1, 2, 3
HEURISTICS = ("max|E1-E2|", "nonbound-scan", "full-scan", "wss2")

PLATT, WSS2 = 0, 1
_RNG_M = 2147483647
_RNG_A = 48271


@njit(cache=True)
def rng_next(ist):
    x = (ist[IS_RNG] * _RNG_A) % _RNG_M
    ist[IS_RNG] = x
    return x


@njit(cache=True)
def _add_w(kd, w, i, c):
    if kd.sparse:
        for p in range(kd.indptr[i], kd.indptr[i + 1]):
            w[kd.indices[p]] += c * kd.data[p]
    else:
        row = kd.dense[i]
        for k in range(row.shape[0]):
            w[k] += c * row[k]


@njit(cache=True)
def _xw(sparse, dense, indptr, indices, data, w, i):
    """<x_i, w> from the raw arrays.  Hot loops call this (and never a helper
    taking the ``kd``/``cd`` tuples: passing a tuple of arrays costs numba a
    reference-count update per member and call, ~40 ns, more than the work)."""
    s = 0.0
    if sparse:
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * w[indices[p]]
    else:
        for k in range(dense.shape[1]):
            s += dense[i, k] * w[k]
    return s


@njit(cache=True)
def _xx(sparse, dense, indptr, indices, data, i, j):
    """<x_i, x_j> (the linear kernel value) from the raw arrays."""
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


@njit(cache=True)
def _f0(kd, G, w, linear, i):
    """Decision value without threshold, sum_j alpha_j y_j K_ij (one call per
    step; loops use ``G`` or :func:`_xw` directly)."""
    if linear:
        return _xw(kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data, w, i)
    return G[i]


@njit(cache=True)
def _row(kd, cd, i, act, ist):
    """Kernel row i through the cache; only the active entries are computed
    (and valid) while the active set is shrunk."""
    na = ist[IS_N_ACTIVE]
    if na == act.shape[0]:
        return get_row(kd, cd, i)
    return get_row_subset(kd, cd, i, act, na)


@njit(cache=True)
def _gbar_change(kd, cd, i, c, Gbar, ist):
    """Gbar += c K_i: at once with the cached full row when nothing is
    shrunk, else noted as pending (applied by reconstruct_gradient)."""
    n = Gbar.shape[1]
    if ist[IS_N_ACTIVE] == n:
        r = get_row(kd, cd, i)
        gb = Gbar[0]
        for t in range(n):
            gb[t] += c * r[t]
    else:
        Gbar[1, i] += c


@njit(cache=True, inline="always")
def _nonbound(a, C):
    return a > 0.0 and a < C


@njit(cache=True)
def rebuild_active_list(active, act, ist):
    m = 0
    for i in range(active.shape[0]):
        if active[i]:
            act[m] = i
            m += 1
    ist[IS_N_ACTIVE] = m


@njit(cache=True)
def reconstruct_gradient(kd, cd, y, C, alpha, G, Gbar, active, linear, full):
    """G_i for the shrunk (inactive) examples, from Gbar and the free SVs
    (LIBSVM's reconstruct_gradient).  First brings Gbar up to date: while
    shrunk, bound changes are only noted in ``Gbar[1]`` (net coefficient per
    example) instead of costing a full kernel row each."""
    n = alpha.shape[0]
    if linear:
        return
    gb = Gbar[0]
    pend = Gbar[1]
    for j in range(n):
        if pend[j] != 0.0:
            kernel_row(kd, j, full)
            c = pend[j]
            for t in range(n):
                gb[t] += c * full[t]
            pend[j] = 0.0
    n_inactive = 0
    for i in range(n):
        if not active[i]:
            n_inactive += 1
    if n_inactive == 0:
        return
    inact = np.empty(n_inactive, dtype=np.int64)
    m = 0
    for i in range(n):
        if not active[i]:
            G[i] = gb[i]
            inact[m] = i
            m += 1
    for j in range(n):
        aj = alpha[j]
        if aj > 0.0 and aj < C:
            kernel_row_subset(kd, j, inact, n_inactive, full)
            c = aj * y[j]
            for p in range(n_inactive):
                i = inact[p]
                G[i] += c * full[i]


@njit(cache=True)
def _m_and_M(kd, y, C, alpha, G, w, act, ist, linear):
    """m = max_{I_up} -F_t, M = min_{I_low} -F_t over active t, F_t = f0_t - y_t
    (LIBSVM's -y_t grad_t).  Returns (m, i_m, M)."""
    m = -np.inf
    M = np.inf
    im = -1
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    for p in range(ist[IS_N_ACTIVE]):
        t = act[p]
        mf = y[t] - (_xw(sp, dn, ip, ix, dt, w, t) if linear else G[t])
        a = alpha[t]
        if (y[t] > 0 and a < C) or (y[t] < 0 and a > 0.0):
            if mf > m:
                m = mf
                im = t
        if (y[t] > 0 and a > 0.0) or (y[t] < 0 and a < C):
            if mf < M:
                M = mf
    return m, im, M


@njit(cache=True)
def _unshrink(kd, cd, y, C, alpha, G, Gbar, active, act, ist, linear, full):
    reconstruct_gradient(kd, cd, y, C, alpha, G, Gbar, active, linear, full)
    if ist[IS_N_ACTIVE] < alpha.shape[0]:
        # rows cached while shrunk lack the entries that become active
        cache_reset(cd)
    active[:] = True
    rebuild_active_list(active, act, ist)


@njit(cache=True)
def _shrink(kd, cd, y, C, tol, alpha, G, Gbar, w, active, act, ist, linear, full):
    """LIBSVM's do_shrinking: drop bound examples that cannot be part of a
    violating pair (Joachims 1999; Fan, Chen and Lin 2005, section 5)."""
    m, im, M = _m_and_M(kd, y, C, alpha, G, w, act, ist, linear)
    if ist[IS_UNSHRUNK] == 0 and m - M <= 10.0 * tol:
        ist[IS_UNSHRUNK] = 1
        _unshrink(kd, cd, y, C, alpha, G, Gbar, active, act, ist, linear, full)
        m, im, M = _m_and_M(kd, y, C, alpha, G, w, act, ist, linear)
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    for p in range(ist[IS_N_ACTIVE]):
        t = act[p]
        a = alpha[t]
        if a > 0.0 and a < C:
            continue
        mf = y[t] - (_xw(sp, dn, ip, ix, dt, w, t) if linear else G[t])
        up_only = (y[t] > 0 and a <= 0.0) or (y[t] < 0 and a >= C)
        if up_only:
            if mf < M:
                active[t] = False
        else:
            if mf > m:
                active[t] = False
    rebuild_active_list(active, act, ist)


@njit(cache=True)
def _nb_update(i, a, C, nbi, nbp, ist):
    """Keep the unordered list of non-bound examples (O(1) per change)."""
    inside = a > 0.0 and a < C
    p = nbp[i]
    if inside and p < 0:
        k = ist[IS_NB]
        nbi[k] = i
        nbp[i] = k
        ist[IS_NB] = k + 1
    elif not inside and p >= 0:
        k = ist[IS_NB] - 1
        last = nbi[k]
        nbi[p] = last
        nbp[last] = p
        nbp[i] = -1
        ist[IS_NB] = k


@njit(cache=True)
def _take_step(i1, i2, E1, E2, K12, heur, kd, cd, y, C, eps, kdiag, alpha, G, Gbar,
               w, act, ist, fst, rec, want_rec, linear, nbi, nbp, full):
    """Platt's takeStep (TR section 2.1-2.3) on the explicit state; 1 if the
    pair moved."""
    if i1 == i2:
        return 0
    moved, a1n, a2n, a2u, L, H, eta = pair_step(y[i1], y[i2], alpha[i1], alpha[i2], E1, E2,
                                                fst[FS_B], kdiag[i1], K12, kdiag[i2], C, eps)
    if not moved:
        return 0
    _commit(i1, i2, a1n, a2n, a2u, L, H, eta, E1, E2, K12, heur, kd, cd, y, C, kdiag, alpha,
            G, Gbar, w, act, ist, fst, rec, want_rec, linear, nbi, nbp)
    return 1


@njit(cache=True)
def _commit(i1, i2, a1n, a2n, a2u, L, H, eta, E1, E2, K12, heur, kd, cd, y, C, kdiag, alpha,
            G, Gbar, w, act, ist, fst, rec, want_rec, linear, nbi, nbp):
    """Apply a joint step :func:`pair_step` found: threshold, gradient (or
    folded ``w``), bookkeeping and the record.  Candidate loops run the cheap
    scalar ``pair_step`` themselves and call this only for the pair that
    moves."""
    a1 = alpha[i1]
    a2 = alpha[i2]
    y1 = y[i1]
    y2 = y[i2]
    b = fst[FS_B]
    K11 = kdiag[i1]
    K22 = kdiag[i2]
    bn = pair_threshold(y1, y2, a1, a2, a1n, a2n, E1, E2, b, K11, K12, K22, C)
    d1 = y1 * (a1n - a1)
    d2 = y2 * (a2n - a2)
    if linear:
        _add_w(kd, w, i1, d1)
        _add_w(kd, w, i2, d2)
    else:
        r1 = _row(kd, cd, i1, act, ist)
        r2 = _row(kd, cd, i2, act, ist)
        na = ist[IS_N_ACTIVE]
        for p in range(na):
            t = act[p]
            G[t] += d1 * r1[t] + d2 * r2[t]
        # Gbar[0] tracks sum over alpha_j = C of C y_j K_j (Gbar[1]: pending)
        if (a1 >= C) != (a1n >= C):
            _gbar_change(kd, cd, i1, C * y1 if a1n >= C else -C * y1, Gbar, ist)
        if (a2 >= C) != (a2n >= C):
            _gbar_change(kd, cd, i2, C * y2 if a2n >= C else -C * y2, Gbar, ist)
    alpha[i1] = a1n
    alpha[i2] = a2n
    _nb_update(i1, a1n, C, nbi, nbp, ist)
    _nb_update(i2, a2n, C, nbi, nbp, ist)
    fst[FS_B] = bn
    ist[IS_ITER] += 1
    if want_rec:
        rec[R_ITER] = ist[IS_ITER]
        rec[R_I1] = i1
        rec[R_I2] = i2
        rec[R_A1_OLD] = a1
        rec[R_A2_OLD] = a2
        rec[R_A1_NEW] = a1n
        rec[R_A2_NEW] = a2n
        rec[R_L] = L
        rec[R_H] = H
        rec[R_ETA] = eta
        rec[R_E1] = E1
        rec[R_E2] = E2
        rec[R_B_OLD] = b
        rec[R_B_NEW] = bn
        rec[R_HEUR] = heur
        clipped = (eta <= 0.0) or (a2u < L) or (a2u > H)
        rec[R_CLIPPED] = 1.0 if clipped else 0.0
        rec[R_A2_UNC] = a2u
        rec[R_Y1] = y1
        rec[R_Y2] = y2
        rec[R_EXALL] = ist[IS_EXAMINE_ALL]
        rec[R_K11] = K11
        rec[R_K12] = K12
        rec[R_K22] = K22
        rec[R_DW] = segment_objective(a2n, y1, y2, a1, a2, E1, E2, b, K11, K12, K22)
        rec[R_NACTIVE] = ist[IS_N_ACTIVE]
        rec[R_NB] = ist[IS_NB]


@njit(cache=True)
def _examine(i2, kd, cd, y, C, tol, eps, kdiag, alpha, G, Gbar, w, active, act, ist,
             fst, rec, want_rec, linear, nbi, nbp, full):
    """Platt's examineExample (TR section 2.2): 1 if a joint step was taken."""
    n = alpha.shape[0]
    y2 = y[i2]
    a2 = alpha[i2]
    b = fst[FS_B]
    E2 = _f0(kd, G, w, linear, i2) + b - y2
    r2 = E2 * y2
    if not ((r2 < -tol and a2 < C) or (r2 > tol and a2 > 0.0)):
        return 0
    if not linear:
        row2 = _row(kd, cd, i2, act, ist)
    else:
        row2 = kdiag  # placeholder, unused
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    K22 = kdiag[i2]
    # 1) the non-bound example maximising |E1 - E2|
    if ist[IS_NB] > 1:
        best = -1.0
        i1 = -1
        E1b = 0.0
        for p in range(ist[IS_NB]):
            t = nbi[p]
            Et = (_xw(sp, dn, ip, ix, dt, w, t) if linear else G[t]) + b - y[t]
            d = abs(Et - E2)
            if d > best:
                best = d
                i1 = t
                E1b = Et
        if i1 >= 0:
            K12 = _xx(sp, dn, ip, ix, dt, i1, i2) if linear else row2[i1]
            if _take_step(i1, i2, E1b, E2, K12, H_MAXDIFF, kd, cd, y, C, eps, kdiag, alpha,
                          G, Gbar, w, act, ist, fst, rec, want_rec, linear, nbi, nbp,
                          full):
                return 1
    # 2) the non-bound examples, from a random start
    nb = ist[IS_NB]
    if nb > 0:
        start = rng_next(ist) % nb
        for k in range(nb):
            t = nbi[(start + k) % nb]
            if t == i2:
                continue
            Et = (_xw(sp, dn, ip, ix, dt, w, t) if linear else G[t]) + b - y[t]
            K12 = _xx(sp, dn, ip, ix, dt, t, i2) if linear else row2[t]
            moved, a1n, a2n, a2u, L, H, eta = pair_step(y[t], y2, alpha[t], a2, Et, E2, b,
                                                        kdiag[t], K12, K22, C, eps)
            if moved:
                _commit(t, i2, a1n, a2n, a2u, L, H, eta, Et, E2, K12, H_NONBOUND, kd, cd, y,
                        C, kdiag, alpha, G, Gbar, w, act, ist, fst, rec, want_rec, linear,
                        nbi, nbp)
                return 1
    # 3) the whole (active) set, from a random start
    start = rng_next(ist) % n
    for k in range(n):
        t = (start + k) % n
        if active[t] and t != i2:
            Et = (_xw(sp, dn, ip, ix, dt, w, t) if linear else G[t]) + b - y[t]
            K12 = _xx(sp, dn, ip, ix, dt, t, i2) if linear else row2[t]
            moved, a1n, a2n, a2u, L, H, eta = pair_step(y[t], y2, alpha[t], a2, Et, E2, b,
                                                        kdiag[t], K12, K22, C, eps)
            if moved:
                _commit(t, i2, a1n, a2n, a2u, L, H, eta, Et, E2, K12, H_FULL, kd, cd, y, C,
                        kdiag, alpha, G, Gbar, w, act, ist, fst, rec, want_rec, linear, nbi,
                        nbp)
                return 1
    return 0


@njit(cache=True)
def _wss2_step(kd, cd, y, C, tol, eps, kdiag, alpha, G, Gbar, w, active, act, ist, fst,
               rec, want_rec, linear, scratch, nbi, nbp, full):
    """One LIBSVM iteration with WSS2 (Fan, Chen and Lin 2005, Algorithm 2).
    Returns 1 after a step, 0 when m - M <= tol on the whole set (converged)
    or when the selected pair cannot move (stalled)."""
    while True:
        m, i, M = _m_and_M(kd, y, C, alpha, G, w, act, ist, linear)
        if m - M > tol:
            break
        if ist[IS_N_ACTIVE] < alpha.shape[0]:
            _unshrink(kd, cd, y, C, alpha, G, Gbar, active, act, ist, linear, full)
            ist[IS_UNSHRUNK] = 1
            continue
        ist[IS_DONE] = 1
        return 0
    b = fst[FS_B]
    if linear:
        # <x_i, x_t> for the active t (scatter x_i, gather), no cache
        ri = scratch
        kernel_row_subset(kd, i, act, ist[IS_N_ACTIVE], ri)
    else:
        ri = _row(kd, cd, i, act, ist)
    Kii = kdiag[i]
    j = -1
    best = np.inf
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    for p in range(ist[IS_N_ACTIVE]):
        t = act[p]
        a = alpha[t]
        if (y[t] > 0 and a > 0.0) or (y[t] < 0 and a < C):
            mf = y[t] - (_xw(sp, dn, ip, ix, dt, w, t) if linear else G[t])
            bb = m - mf
            if bb > 0.0:
                aa = Kii + kdiag[t] - 2.0 * ri[t]
                if aa <= 0.0:
                    aa = 1e-12
                v = -bb * bb / aa
                if v <= best:
                    best = v
                    j = t
    if j < 0:
        ist[IS_DONE] = 2
        return 0
    Ei = _f0(kd, G, w, linear, i) + b - y[i]
    Ej = _f0(kd, G, w, linear, j) + b - y[j]
    if _take_step(i, j, Ei, Ej, ri[j], H_WSS2, kd, cd, y, C, eps, kdiag, alpha, G, Gbar, w,
                  act, ist, fst, rec, want_rec, linear, nbi, nbp, full):
        return 1
    ist[IS_DONE] = 2
    return 0


@njit(cache=True)
def smo_run(kd, cd, y, C, tol, eps, kdiag, alpha, G, Gbar, w, active, act, ist, fst,
            rec, want_rec, linear, selection, shrinking, shrink_every, scratch, nbi, nbp,
            plist, full, kmax):
    """Advance by up to ``kmax`` successful joint steps; return how many were
    taken.  ``ist[IS_DONE]`` becomes nonzero once the stopping rule holds."""
    n = alpha.shape[0]
    steps = 0
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    while steps < kmax and ist[IS_DONE] == 0:
        if shrinking and ist[IS_SHRINK_COUNTER] <= 0:
            ist[IS_SHRINK_COUNTER] = shrink_every
            _shrink(kd, cd, y, C, tol, alpha, G, Gbar, w, active, act, ist, linear, full)
        if selection == WSS2:
            if _wss2_step(kd, cd, y, C, tol, eps, kdiag, alpha, G, Gbar, w, active, act,
                          ist, fst, rec, want_rec, linear, scratch, nbi, nbp, full):
                steps += 1
                ist[IS_SHRINK_COUNTER] -= 1
            continue
        # ---- Platt's outer loop (TR section 2.2, main routine) ----
        plen = n if ist[IS_EXAMINE_ALL] else ist[IS_PLEN]
        if ist[IS_POS] >= plen:
            # a pass has ended
            if ist[IS_EXAMINE_ALL]:
                ist[IS_EXAMINE_ALL] = 0
            elif ist[IS_NUM_CHANGED] == 0:
                ist[IS_EXAMINE_ALL] = 1
            if ist[IS_NUM_CHANGED] == 0 and ist[IS_EXAMINE_ALL] == 0:
                # every active example obeys KKT within tol
                if ist[IS_N_ACTIVE] < n:
                    # final pass over every example (unshrink and check)
                    _unshrink(kd, cd, y, C, alpha, G, Gbar, active, act, ist, linear, full)
                    ist[IS_UNSHRUNK] = 1
                    ist[IS_EXAMINE_ALL] = 1
                else:
                    ist[IS_DONE] = 1
                    break
            ist[IS_NUM_CHANGED] = 0
            ist[IS_POS] = 0
            ist[IS_PASSES] += 1
            if ist[IS_EXAMINE_ALL] == 0:
                # the non-bound examples at the start of the pass, in index
                # order (an example becoming non-bound during the pass waits
                # for the next one)
                nb = ist[IS_NB]
                plist[:nb] = np.sort(nbi[:nb])
                ist[IS_PLEN] = nb
            continue
        if ist[IS_EXAMINE_ALL]:
            i2 = ist[IS_POS]
        else:
            i2 = plist[ist[IS_POS]]
        ist[IS_POS] += 1
        if not active[i2]:
            continue
        a = alpha[i2]
        if ist[IS_EXAMINE_ALL] == 0:
            if not (a > 0.0 and a < C):
                continue
        # examineExample's KKT test, here so the examples that obey KKT
        # cost no call
        r2 = ((_xw(sp, dn, ip, ix, dt, w, i2) if linear else G[i2]) + fst[FS_B] - y[i2]) * y[i2]
        if not ((r2 < -tol and a < C) or (r2 > tol and a > 0.0)):
            continue
        if _examine(i2, kd, cd, y, C, tol, eps, kdiag, alpha, G, Gbar, w, active, act, ist,
                    fst, rec, want_rec, linear, nbi, nbp, full):
            ist[IS_NUM_CHANGED] += 1
            steps += 1
            ist[IS_SHRINK_COUNTER] -= 1
    return steps


@njit(cache=True)
def wss2_intercept(kd, cd, y, C, alpha, G, Gbar, w, active, linear, full):
    """LIBSVM's threshold: the mean of y_i - f0_i over free SVs, else the
    midpoint of the interval the KKT conditions allow."""
    reconstruct_gradient(kd, cd, y, C, alpha, G, Gbar, active, linear, full)
    n = alpha.shape[0]
    s = 0.0
    nf = 0
    lo = -np.inf
    hi = np.inf
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    for i in range(n):
        v = y[i] - (_xw(sp, dn, ip, ix, dt, w, i) if linear else G[i])
        a = alpha[i]
        if a > 0.0 and a < C:
            s += v
            nf += 1
        elif (y[i] > 0 and a <= 0.0) or (y[i] < 0 and a >= C):
            lo = max(lo, v)
        else:
            hi = min(hi, v)
    if nf > 0:
        return s / nf
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi)
    return lo if np.isfinite(lo) else hi
