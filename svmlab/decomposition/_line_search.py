"""The line-search mode of the active-set sub-problem, compiled.

One iteration (the primal active-set method of Nocedal & Wright,
Algorithm 16.3, on the sub-problem of :mod:`svmlab.decomposition._engines`):

1. solve the system (3) on S1 (``K_11 d + b 1 = r_1 - (K beta)_1``,
   ``1'd = s0 - sum beta``) with a kept Cholesky factor of ``K_11 + rr I``
   (:mod:`svmlab._linalg`; appended to and deleted from as S1 changes,
   refactorised when a third of it changed, the ridge ``rr`` growing x100
   from ``1e-12 max|K_ii|`` until it factors);
2. step along d to the first bound (rules a/b for the blocking samples);
3. after a full step, free violators of (9)/(10) (rules c/d,
   :func:`svmlab.decomposition._release.release_pick`) and save the point
   when it is feasible; the sub-problem is solved when a full step frees
   nobody.

The state lives in arrays owned by
:class:`svmlab.decomposition._active_set.ActiveSetSubproblem` and the float
vector ``st`` (indices ``_ST_*``), so that the iterations can be split into
calls in any way and the iterates stay the same.

``K beta`` is kept exact on S1 only; outside S1 it lacks the changes
``pend`` of the samples ``pidx[:npend]`` since the last full step, which
:func:`flush_pending` applies then (the release test needs them).  A
blocked step changes every beta of S1, and updating ``K beta`` everywhere
would cost ``|S1| m`` per step, more than the factor update and the solves
when S1 is small.  The sums differ from the step-by-step update only in
rounding (the readable twin :mod:`svmlab.reference.subproblem` updates step
by step).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .._kkt import intercept
from .._linalg import chol_append, chol_delete, chol_factor, chol_solve2, chol_times
from ._release import release_pick

__all__ = ["line_iterations", "flush_pending", "is_symmetric", "ST_SIZE", "METHODS"]

# state vector of the compiled iterations
_ST_B, _ST_NORD, _ST_RR, _ST_BESTW, _ST_FB, _ST_DEGEN, _ST_NITER, _ST_DONE = range(8)
_ST_NA, _ST_NB, _ST_NC, _ST_ND, _ST_METHOD, _ST_KMAX, _ST_NPEND = range(8, 15)
ST_SIZE = 15
#: how (3) was solved, by ``st[_ST_METHOD]``
METHODS = ("cholesky", "cholesky+ridge", "bounds")


@njit(cache=True)
def _bounds_b(r, Kb, y, beta, C):
    """:func:`svmlab._kkt.intercept` for ``v = r - K beta`` and ``alpha =
    clip(y beta, 0, C)`` (S1 empty); ``C`` the per-sample upper bounds (m,)."""
    m = y.shape[0]
    v = np.empty(m)
    a = np.empty(m)
    for k in range(m):
        v[k] = r[k] - Kb[k]
        a[k] = min(max(y[k] * beta[k], 0.0), C[k])
    return intercept(v, y, a, C)


@njit(cache=True, inline="always")
def _copy(src, dst):
    """``dst[:] = src`` (1-D, same length) as a loop: an array assignment
    would compile numba's shape-mismatch error message, string code that
    costs more to compile than the whole loop."""
    for k in range(src.shape[0]):
        dst[k] = src[k]


@njit(cache=True, inline="always")
def _sum(a):
    """``a.sum()`` as the same left-to-right loop (without numba's axis
    checks to compile)."""
    s = 0.0
    for k in range(a.shape[0]):
        s += a[k]
    return s


@njit(cache=True)
def is_symmetric(K):
    """Whether ``K == K.T`` bit for bit (stops at the first difference)."""
    m = K.shape[0]
    for i in range(m):
        for j in range(i):
            if K[i, j] != K[j, i]:
                return False
    return True


@njit(cache=True, inline="always")
def _pending_sum(KT, pend, pidx, npend):
    """``sum_a pend[pidx[a]] KT[pidx[a]]``: the deferred part of ``K beta``
    (row j of ``KT`` is column j of K, contiguous)."""
    m = KT.shape[0]
    acc = np.zeros(m)
    for a in range(npend):
        j = pidx[a]
        kj = KT[j]
        pj = pend[j]
        for k in range(m):
            acc[k] += kj[k] * pj
    return acc


@njit(cache=True)
def pending_into(KT, Kout, sets, pend, pidx, npend):
    """Add the deferred part of ``K beta`` to ``Kout`` outside S1 (a copy
    for Python), keeping the pending state."""
    if npend == 0:
        return
    acc = _pending_sum(KT, pend, pidx, npend)
    for k in range(Kout.shape[0]):
        if sets[k] != 1:
            Kout[k] += acc[k]


@njit(cache=True)
def flush_pending(KT, Kb, sets, pend, pidx, npend, inp):
    """Apply the deferred ``K beta`` update to the samples outside S1 and
    clear it (``pend`` zeroed and ``inp`` cleared on ``pidx[:npend]``);
    returns the new count of pending entries, 0.

    Parameters
    ----------
    KT : float64 array (m, m)
        The sub-problem's kernel matrix transposed (``K`` itself when it is
        symmetric).
    Kb : float64 array (m,), updated in place
        ``K beta``: exact on S1 (``sets == 1``); outside S1 it lacks
        ``K[k, pidx] @ pend[pidx]``, which this adds.
    sets : int8 array (m,)
        1 = S1, 2 = S2, 3 = S3.
    pend, pidx, npend, inp
        The changes of beta since the last flush, the samples that have
        one (``pidx[:npend]``) and their marks."""
    if npend == 0:
        return 0
    pending_into(KT, Kb, sets, pend, pidx, npend)
    for a in range(npend):
        j = pidx[a]
        pend[j] = 0.0
        inp[j] = False
    return 0


@njit(cache=True, inline="always")
def _update_factor(K, sets, rr, L, order, n, nF, mark, kcol):
    """Bring the kept factor of ``K_11 + rr I`` over ``order[:n]`` to the
    current S1: delete the samples that left, append those that entered.
    Returns the new size, or -1 when a fresh factor is due (more than about
    a third of S1 changed, or an append failed)."""
    m = sets.shape[0]
    n_keep = 0
    for q in range(n):
        if sets[order[q]] == 1:
            n_keep += 1
    if (n - n_keep + nF - n_keep) * 3 > n + 8:
        return -1
    for q in range(n - 1, -1, -1):
        if sets[order[q]] != 1:
            chol_delete(L, n, q)
            for p in range(q, n - 1):
                order[p] = order[p + 1]
            n -= 1
    mark[:] = False
    for q in range(n):
        mark[order[q]] = True
    for i in range(m):
        if sets[i] == 1 and not mark[i]:
            for q in range(n):
                kcol[q] = K[i, order[q]]
            if not chol_append(L, n, kcol, K[i, i] + rr, 0.0):
                return -1
            order[n] = i
            n += 1
    return n


@njit(cache=True, inline="always")
def _fresh_factor(K, sets, st, L, order, nF, ridge):
    """A fresh factor of ``K_11 + rr I`` over S1 (in index order), the ridge
    growing x100 from ``ridge`` while below ``1e-2 max(1, max |K_ii|)``;
    ``st[_ST_RR]`` = the ridge used.  Returns |S1|, or -1 when no ridge
    gave a factor.  Entries outside the leading block of the largest factor
    held so far are zero already, and stay so."""
    m = sets.shape[0]
    nz = m if st[_ST_NORD] < 0 else max(int(st[_ST_NORD]), nF)
    n = np.int64(0)
    scale = 1.0
    for i in range(m):
        if sets[i] == 1:
            order[n] = i
            n += 1
            scale = max(scale, abs(K[i, i]))
    L[:nz, :nz] = 0.0
    rr = ridge
    while rr < 1e-2 * scale:
        if chol_factor(K, order, n, rr, L):
            st[_ST_RR] = rr
            return n
        L[:nz, :nz] = 0.0
        rr *= 100.0
    return -1


@njit(cache=True, inline="always")
def _factor_and_solve(K, r, Kb, sets, st, L, order, nF, ridge, mark, kcol, rhs, u, w):
    """Step 1: the factor over S1 (kept and updated, or fresh when that
    fails) and the solves ``u = (K_11 + rr I)^{-1} (r - K beta)_1``,
    ``w = (K_11 + rr I)^{-1} 1``.  Returns ``(n, sum w, sum u)``; n = -1
    when no usable factor exists (the caller's Python fallback)."""
    n = int(st[_ST_NORD])
    for attempt in range(2):
        fresh = n < 0 or attempt == 1
        if not fresh:
            n = _update_factor(K, sets, st[_ST_RR], L, order, n, nF, mark, kcol)
            fresh = n < 0
        if fresh:
            n = _fresh_factor(K, sets, st, L, order, nF, ridge)
            if n < 0:
                return -1, 0.0, 0.0
        st[_ST_NORD] = n
        for q in range(n):
            rhs[q] = r[order[q]] - Kb[order[q]]
        chol_solve2(L, n, rhs, u, w)
        den = 0.0
        usum = 0.0
        for q in range(n):
            den += w[q]
            usum += u[q]
        if den > 0 and np.isfinite(den) and np.isfinite(usum):
            return n, den, usum
        if fresh:
            break
    return -1, 0.0, 0.0


@njit(cache=True, inline="always")
def _direction(u, w, n, b, c, d):
    """``d = u - b w`` put back on the plane ``1'd = c``: with a nearly
    singular K_11 (a rank-deficient kernel with |S1| above its rank) u and
    w are ~1/ridge large and ``u - b w`` loses the equality to cancellation,
    after which the iterate would never pass the feasibility test.  One
    sample in S1: the equality fixes its step to c exactly."""
    dsum = 0.0
    for q in range(n):
        d[q] = u[q] - b * w[q]
        dsum += d[q]
    corr = (c - dsum) / n
    for q in range(n):
        d[q] = d[q] + corr if n > 1 else c


@njit(cache=True, inline="always")
def _step_to_bound(y, C, beta, sets, order, n, d, tq, pend, pidx, npend, inp):
    """Step 2: ``beta_1 += t d`` with t the largest step in ``[0, 1]`` that
    keeps the box; the samples blocking within a relative 1e-12 of t are
    clipped to their bound and leave S1 (rules a/b).  On return ``d`` holds
    the change of each beta of S1 (recorded as pending).  Returns ``(na,
    nb, full, degenerate, npend)``."""
    t = 1.0
    for q in range(n):
        i = order[q]
        yd = y[i] * d[q]
        yo = y[i] * beta[i]
        if yd < 0:
            tq[q] = yo / -yd
        elif yd > 0:
            tq[q] = (C[i] - yo) / yd
        else:
            tq[q] = np.inf
        if tq[q] < t:
            t = tq[q]
    t = max(t, 0.0)
    full = t >= 1.0
    na = 0
    nb = 0
    for q in range(n):
        i = order[q]
        old = beta[i]
        new = old + t * d[q]
        if not full and tq[q] <= t * (1 + 1e-12) + 1e-300:
            yd = y[i] * d[q]
            if yd < 0:
                new = 0.0
                na += 1
                sets[i] = 2
            elif yd > 0:
                new = C[i] * y[i]
                nb += 1
                sets[i] = 3
        beta[i] = new
        delta = new - old
        d[q] = delta
        if delta != 0.0:
            if not inp[i]:
                inp[i] = True
                pidx[npend] = i
                npend += 1
            pend[i] += delta
    return na, nb, full, t <= 1e-14, npend


@njit(cache=True, inline="always")
def _update_kb(qp, K, KT, Kb, sets, L, n, rr, order, d, pend, pidx, npend, kpbuf, tbuf):
    """``K beta`` on S1 after a step with changes ``d``: the ``"qp"`` rule
    adds rows of ``K'`` gathered at S1, the ``"irwls"`` rule the product
    with ``K_11`` from the factor (:func:`svmlab._linalg.chol_times`, up to
    the factor's backward error).  Samples that left S1 go back to "K beta
    minus the pending part"."""
    if qp:
        for q in range(n):
            delta = d[q]
            if delta != 0.0:
                kt = KT[order[q]]
                for p in range(n):
                    k = order[p]
                    Kb[k] += kt[k] * delta
    else:
        chol_times(L, n, rr, d, kpbuf, tbuf)
        for q in range(n):
            Kb[order[q]] += kpbuf[q]
    for q in range(n):
        k = order[q]
        if sets[k] != 1:
            Kk = K[k]
            acc = 0.0
            for a in range(npend):
                j = pidx[a]
                acc += Kk[j] * pend[j]
            Kb[k] -= acc


@njit(cache=True, inline="always")
def _release(y, r, Kb, b, sets, tol, kmax, nF, vidx, vval, vpos):
    """Step 3: free the violators of (9)/(10) that
    :func:`~svmlab.decomposition._release.release_pick` picks (at most
    ``kmax``, 0: all); returns how many came from S2 and from S3."""
    m = y.shape[0]
    nv = 0
    npos = np.int64(0)
    for i in range(m):
        ye = y[i] * (r[i] - Kb[i] - b)
        if sets[i] == 2 and ye > tol:
            vidx[nv] = i
            vval[nv] = -ye
            vpos[nv] = y[i] > 0
            npos += vpos[nv]
            nv += 1
        elif sets[i] == 3 and ye < -tol:
            vidx[nv] = i
            vval[nv] = ye
            vpos[nv] = y[i] < 0
            npos += vpos[nv]
            nv += 1
    pick = release_pick(vval[:nv], vpos[:nv], npos, kmax, nF)
    nc = 0
    nd = 0
    for q in range(pick.shape[0]):
        i = vidx[pick[q]]
        if sets[i] == 2:
            nc += 1
        else:
            nd += 1
        sets[i] = 1
    return nc, nd


@njit(cache=True, inline="always")
def _save_if_feasible(beta, r, Kb, s0, Cmax, st, fbeta, fKb, done):
    """After a full step: when ``sum beta = s0`` holds (to ``1e-9 (1 + C m)``)
    record the dual value and save the point; ``done``: nobody was freed,
    so the sub-problem is solved."""
    m = beta.shape[0]
    if abs(_sum(beta) - s0) <= 1e-9 * (1.0 + Cmax * m):
        W = 0.0
        for i in range(m):
            W += beta[i] * (r[i] - 0.5 * Kb[i])
        st[_ST_BESTW] = W
        for i in range(m):
            fbeta[i] = beta[i]
            fKb[i] = Kb[i]
        st[_ST_FB] = st[_ST_B]
        if done:
            st[_ST_DONE] = 1.0


@njit(cache=True, inline="always")
def _give_up(y, C, beta, Kb, sets, st, fbeta, fKb):
    """``max_iter`` reached: back to the last feasible point (sets from its
    multipliers), done."""
    st[_ST_B] = st[_ST_FB]
    for i in range(y.shape[0]):
        beta[i] = fbeta[i]
        Kb[i] = fKb[i]
        a = y[i] * beta[i]
        sets[i] = 2 if a <= 0.0 else (3 if a >= C[i] else 1)
    st[_ST_DONE] = 1.0


@njit(cache=True)
def line_iterations(K, y, r, C, tol, s0, qp, max_steps, max_iter, beta, Kb, sets, fbeta, fKb,
                    L, order, st, KT, Kout, pend, pidx, inp):
    """Up to ``max_steps`` iterations of the line-search mode (module
    docstring), state in and out through the arrays and ``st``.

    ``C`` holds the per-sample upper bounds (m,); ``qp``: the ``"qp"``
    rule (one violator freed per full step); otherwise ``st[_ST_KMAX]``
    caps the release (:data:`svmlab.decomposition._release.RELEASE_CAP`);
    a zero step frees the single worst.  ``L`` (m, m) and ``order`` (m,)
    hold the kept factor and its samples, ``KT`` is ``K`` transposed
    (C-contiguous; ``K`` itself when symmetric), ``pend``/``pidx``/``inp``
    the deferred part of ``Kb`` (:func:`flush_pending`).  ``Kout``
    receives ``K beta`` up to date everywhere on return, the state keeping
    its deferred part.

    Returns ``(n_done, need_python)``: ``need_python`` means the next
    iteration needs the LU / least-squares fallback of
    :func:`svmlab.decomposition._bordered.solve_ls` (nothing was changed
    for it).

    The steps of an iteration are the helpers above, each called once here
    and inlined (``inline="always"``): a helper with one call site costs
    less to compile as part of this loop than as a function of its own
    (docs/decisions/26d02-compile-time.md); nesting them further costs
    more again, so this loop stays about one screen long."""
    m = y.shape[0]
    Cmax = 0.0
    dmax = 1.0
    for i in range(m):
        Cmax = max(Cmax, C[i])
        dmax = max(dmax, abs(K[i, i]))
    ridge = 1e-12 * dmax
    mark = np.zeros(m, np.bool_)
    kcol = np.empty(m)
    u = np.empty(m)
    w = np.empty(m)
    rhs = np.empty(m)
    d = np.empty(m)
    tq = np.empty(m)
    vidx = np.empty(m, np.int64)
    vval = np.empty(m)
    vpos = np.empty(m, np.bool_)
    kpbuf = np.empty(m)
    tbuf = np.empty(m)
    npend = int(st[_ST_NPEND])
    done_steps = 0
    while done_steps < max_steps and st[_ST_DONE] == 0.0:
        nF = np.int64(0)  # (a literal 0 would compile the callees once more for it)
        for i in range(m):
            if sets[i] == 1:
                nF += 1
        na = nb = nc = nd = 0
        full = True
        if nF == 0:
            npend = flush_pending(KT, Kb, sets, pend, pidx, npend, inp)
            st[_ST_B] = _bounds_b(r, Kb, y, beta, C)
            st[_ST_METHOD] = 2
        else:
            c = s0 - _sum(beta)
            n, den, usum = _factor_and_solve(K, r, Kb, sets, st, L, order, nF, ridge, mark,
                                             kcol, rhs, u, w)
            if n < 0:
                st[_ST_NORD] = -1.0
                st[_ST_NPEND] = flush_pending(KT, Kb, sets, pend, pidx, npend, inp)
                _copy(Kb, Kout)
                return done_steps, True
            b = (usum - c) / den
            st[_ST_METHOD] = 0 if st[_ST_RR] == ridge else 1
            _direction(u, w, n, b, c, d)
            na, nb, full, degen, npend = _step_to_bound(y, C, beta, sets, order, n, d, tq,
                                                        pend, pidx, npend, inp)
            st[_ST_DEGEN] = 1.0 if degen else 0.0
            _update_kb(qp, K, KT, Kb, sets, L, n, st[_ST_RR], order, d, pend, pidx, npend,
                       kpbuf, tbuf)
            st[_ST_B] = b
        if full:
            npend = flush_pending(KT, Kb, sets, pend, pidx, npend, inp)
            kmax = np.int64(1 if (qp or st[_ST_DEGEN] != 0.0) else st[_ST_KMAX])
            nc, nd = _release(y, r, Kb, st[_ST_B], sets, tol, kmax, nF, vidx, vval, vpos)
            _save_if_feasible(beta, r, Kb, s0, Cmax, st, fbeta, fKb, nc == 0 and nd == 0)
        st[_ST_NA] = na
        st[_ST_NB] = nb
        st[_ST_NC] = nc
        st[_ST_ND] = nd
        st[_ST_NITER] += 1
        done_steps += 1
        if st[_ST_DONE] == 0.0 and st[_ST_NITER] >= max_iter:
            npend = flush_pending(KT, Kb, sets, pend, pidx, npend, inp)
            _give_up(y, C, beta, Kb, sets, st, fbeta, fKb)
    st[_ST_NPEND] = npend
    _copy(Kb, Kout)
    pending_into(KT, Kout, sets, pend, pidx, npend)
    return done_steps, False
