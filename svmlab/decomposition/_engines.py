"""Sub-problem engines shared by IRWLS, chunking and decomposition.

Every member of the decomposition family (Osuna, Freund & Girosi 1997;
Joachims' SVMlight 1999; Vapnik's chunking; Platt's SMO; Perez-Cruz et al.'s
IRWLS-SVC with its chunking scheme) alternates two things: choose a working
set ``B`` (:mod:`svmlab.decomposition._working_set`), then solve the dual restricted to
``B`` with everything else fixed.  This module is the second half.

The sub-problem, written with ``beta_i = y_i alpha_i`` (Perez-Cruz et al.'s
variables) over the ``m`` working-set samples::

    max_beta   r' beta - 1/2 beta' K_BB beta
    s.t.       sum_i beta_i = s0,     0 <= y_i beta_i <= C

with ``r_B = y_B - G_in`` where ``G_in = K_BN beta_N`` is the contribution of
the fixed samples (the paper's ``G_in``) and ``s0 = -sum_N beta_N`` (minus the
paper's ``Gb_in``).  For ``B`` = everything, ``r = y`` and ``s0 = 0``: the full
dual of :mod:`svmlab._base`.  The multiplier of the equality constraint is
the intercept ``b``; ``e_i = r_i - (K_BB beta)_i - b`` is the error of
sample i, ``y_i e_i = 1 - y_i f(x_i)``.

Engines (``engine=`` of :class:`~svmlab.DecompositionClassifier`):

``"irwls"``  :class:`ActiveSetSubproblem` with ``rule="irwls"``: the IRWLS-SVC
    procedure of Table 1 of Perez-Cruz et al. (2000): solve the weighted
    least-squares system (3) on S1 (0 < y beta < C) with S2 (beta = 0) and S3
    (y beta = C) fixed, then reorder the sets with rules a-d (all violators
    at once).
``"qp"``  the same class with ``rule="qp"``: a classical primal active-set
    method for a box + one equality QP (Nocedal & Wright, Algorithm 16.3):
    the same equality-constrained Newton system, but a line search that
    stops at the first bound hit, and one constraint released at a time.
    Monotone, finite, dependable for large C; slower than IRWLS because it
    changes one set member per linear solve.
``"smo"``  :func:`smo_engine`: Platt's analytic pair step
    (:func:`svmlab.smo._pairstep.pair_step`) iterated on the sub-problem with the
    maximal-violating pair.  With ``|B| = 2`` it is exactly one SMO step, so
    SMO is decomposition with q = 2 and this engine.

The linear system (3) of the paper, in increment form on S1::

    [ K_11  1 ] [ dbeta_1 ]   [ r_1 - (K beta)_1 ]
    [ 1'    0 ] [    b    ] = [ s0 - sum beta    ]

is solved by Cholesky of ``K_11`` and a Schur complement for ``b``
(``scipy.linalg.cho_factor``); when ``K_11`` is not positive definite, by LU
of the bordered matrix (``scipy.linalg.lu_factor``); if that is singular too,
by least squares.

Speed (the line-search mode is where IRWLS spends almost all of its
iterations on hard problems such as banana with C=316): that mode runs
compiled (:func:`line_iterations`; :meth:`ActiveSetSubproblem.iterate` runs
a line-search iteration in Python only when no usable factor exists, with
the LU / least-squares fallback of :func:`solve_ls`), keeps the Cholesky factor of
``K_11 + ridge I`` between iterations and updates it in O(|S1|^2) per sample
that enters (:func:`chol_append`) or leaves (:func:`chol_delete`, Givens
rotations) S1; and the solvers run with single-threaded BLAS
(``blas_threads = 1`` on their :class:`svmlab._stepping.SolverRun`), since
threads cost more than they save on blocks of a few hundred rows.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
from numba import njit

from .._kkt import intercept, intercept_from_v, up_low, violating_pair
from ..smo._pairstep import pair_step_box
from ..kernels.cache import get_row
from ..kernels._rows import kernel_value

__all__ = [
    "ENGINES",
    "ActiveSetSubproblem",
    "kernel_block",
    "kernel_block_counted",
    "add_rows",
    "smo_engine",
    "solve_subproblem",
    "solve_ls",
    "intercept_from_v",
]

ENGINES = ("qp", "irwls", "smo")

S1, S2, S3 = 1, 2, 3


# --------------------------------------------------------------------------
# kernel rows through the shared cache
# --------------------------------------------------------------------------
@njit(cache=True)
def kernel_block_counted(kd, cd, rows, cols):
    """``(K[rows][:, cols], n_direct)``: entries come from the LRU row cache
    when row ``rows[a]`` (or, by symmetry, row ``cols[c]``) is cached, else
    are computed one by one (``n_direct`` of them).  A working-set block
    does not need the full rows of its samples: only the samples whose
    multiplier changes fetch full rows (for the G update, :func:`add_rows`)."""
    out = np.empty((rows.shape[0], cols.shape[0]))
    n_direct = 0
    for a in range(rows.shape[0]):
        i = rows[a]
        if cd.slot_of[i] >= 0:
            r = get_row(kd, cd, i)
            for c in range(cols.shape[0]):
                out[a, c] = r[cols[c]]
        else:
            for c in range(cols.shape[0]):
                j = cols[c]
                s = cd.slot_of[j]
                if s >= 0:
                    out[a, c] = cd.rows[s, i]
                else:
                    out[a, c] = kernel_value(kd, i, j)
                    n_direct += 1
    return out, n_direct


@njit(cache=True)
def kernel_block(kd, cd, rows, cols):
    """``K[rows][:, cols]`` (cached rows reused, see :func:`kernel_block_counted`)."""
    return kernel_block_counted(kd, cd, rows, cols)[0]


@njit(cache=True)
def add_rows(kd, cd, G, idx, coef):
    """``G += sum_k coef[k] K(x_idx[k], X)`` (the G update), skipping zeros."""
    n = G.shape[0]
    for k in range(idx.shape[0]):
        c = coef[k]
        if c != 0.0:
            r = get_row(kd, cd, idx[k])
            for j in range(n):
                G[j] += c * r[j]


# --------------------------------------------------------------------------
# Cholesky factor of K_11 (+ ridge) kept up to date while S1 changes
# --------------------------------------------------------------------------
@njit(cache=True)
def chol_delete(L, n, p):
    """Remove row/column ``p`` from the lower factor ``L[:n, :n]`` of
    ``A = L L'`` in O(n^2) (rows shifted up, Givens rotations on columns)."""
    for i in range(p, n - 1):
        for j in range(n):
            L[i, j] = L[i + 1, j]
    for k in range(p, n - 1):
        a = L[k, k]
        bb = L[k, k + 1]
        r = np.hypot(a, bb)
        if r == 0.0:
            continue
        c = a / r
        s = bb / r
        for i in range(k, n - 1):
            lk = L[i, k]
            lk1 = L[i, k + 1]
            L[i, k] = c * lk + s * lk1
            L[i, k + 1] = -s * lk + c * lk1
        L[k, k + 1] = 0.0
    for j in range(n):
        L[n - 1, j] = 0.0
        L[j, n - 1] = 0.0


@njit(cache=True)
def chol_append(L, n, kcol, kdiag):
    """Append a row/column (``kcol`` = its entries against the n current
    ones, ``kdiag`` its diagonal) to the factor in O(n^2).  False (factor
    unchanged) if the new pivot is not positive."""
    s = kdiag
    for i in range(n):
        t = kcol[i]
        for j in range(i):
            t -= L[i, j] * L[n, j]
        t /= L[i, i]
        L[n, i] = t
        s -= t * t
    if not (s > 0.0) or not np.isfinite(s):
        for i in range(n):
            L[n, i] = 0.0
        return False
    L[n, n] = np.sqrt(s)
    return True


@njit(cache=True)
def chol_solve(L, n, rhs):
    """``(L L')^{-1} rhs`` for the leading n x n factor."""
    x = rhs.copy()
    for i in range(n):
        t = x[i]
        for j in range(i):
            t -= L[i, j] * x[j]
        x[i] = t / L[i, i]
    for i in range(n - 1, -1, -1):
        t = x[i]
        for j in range(i + 1, n):
            t -= L[j, i] * x[j]
        x[i] = t / L[i, i]
    return x


@njit(cache=True)
def chol_factor(K, order, n, rr, L):
    """Cholesky of ``K[order][:, order] + rr I`` into ``L[:n, :n]`` (lower);
    False if a pivot is not positive (LAPACK potrf's test)."""
    for j in range(n):
        oj = order[j]
        s = K[oj, oj] + rr
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not (s > 0.0) or not np.isfinite(s):
            return False
        ljj = np.sqrt(s)
        L[j, j] = ljj
        for i in range(j + 1, n):
            t = K[order[i], oj]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / ljj
    return True


# state vector of the compiled line-search iterations (see line_iterations)
_ST_B, _ST_NORD, _ST_RR, _ST_BESTW, _ST_FB, _ST_DEGEN, _ST_NITER, _ST_DONE = range(8)
_ST_NA, _ST_NB, _ST_NC, _ST_ND, _ST_METHOD = range(8, 13)
_ST_SIZE = 13
_METHODS = ("cholesky", "cholesky+ridge", "bounds")


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


@njit(cache=True)
def line_iterations(K, y, r, C, tol, s0, qp, max_steps, max_iter, beta, Kb, sets, fbeta, fKb,
                    L, order, st):
    """Up to ``max_steps`` line-search-mode iterations of
    :class:`ActiveSetSubproblem`, compiled (solve (3) on S1 with the kept
    Cholesky factor of ``K_11 + rr I``,
    step to the first bound, rules a/b for the blocking samples, release the
    violators of (9)/(10) by rules c/d).  State in/out through the arrays and
    ``st``.  Returns ``(n_done, need_python)``: ``need_python`` means the
    next iteration needs the LU / least-squares fallback of :func:`solve_ls`
    (nothing was changed for it).  ``C`` holds the per-sample upper bounds
    (m,)."""
    m = y.shape[0]
    Cmax = 0.0
    for i in range(m):
        Cmax = max(Cmax, C[i])
    dmax = 1.0
    for i in range(m):
        dmax = max(dmax, abs(K[i, i]))
    ridge = 1e-12 * dmax
    mark = np.zeros(m, np.bool_)
    kcol = np.empty(m)
    done_steps = 0
    while done_steps < max_steps and st[_ST_DONE] == 0.0:
        nF = 0
        for i in range(m):
            if sets[i] == 1:
                nF += 1
        na = nb = nc = nd = 0
        full = True
        if nF == 0:
            st[_ST_B] = _bounds_b(r, Kb, y, beta, C)
            st[_ST_METHOD] = 2
        else:
            c = s0 - beta.sum()
            n = int(st[_ST_NORD])
            ok = False
            u = np.empty(0)
            w = np.empty(0)
            den = 0.0
            for attempt in range(2):
                fresh = n < 0 or attempt == 1
                if not fresh:
                    n_keep = 0
                    for q in range(n):
                        if sets[order[q]] == 1:
                            n_keep += 1
                    if (n - n_keep + nF - n_keep) * 3 > n + 8:
                        fresh = True
                    else:
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
                                if not chol_append(L, n, kcol[:n], K[i, i] + st[_ST_RR]):
                                    fresh = True
                                    break
                                order[n] = i
                                n += 1
                if fresh:
                    # entries outside the leading block of the largest factor
                    # held so far are zero already
                    nz = m if st[_ST_NORD] < 0 else max(int(st[_ST_NORD]), nF)
                    n = 0
                    scale = 1.0
                    for i in range(m):
                        if sets[i] == 1:
                            order[n] = i
                            n += 1
                            scale = max(scale, abs(K[i, i]))
                    L[:nz, :nz] = 0.0
                    rr = ridge
                    got = False
                    while rr < 1e-2 * scale:
                        if chol_factor(K, order, n, rr, L):
                            got = True
                            break
                        L[:nz, :nz] = 0.0
                        rr *= 100.0
                    if not got:
                        st[_ST_NORD] = -1.0
                        return done_steps, True
                    st[_ST_RR] = rr
                st[_ST_NORD] = n
                rhs = np.empty(n)
                for q in range(n):
                    rhs[q] = r[order[q]] - Kb[order[q]]
                u = chol_solve(L, n, rhs)
                w = chol_solve(L, n, np.ones(n))
                den = w.sum()
                if den > 0 and np.isfinite(den) and np.all(np.isfinite(u)):
                    ok = True
                    break
                if fresh:
                    break
            if not ok:
                st[_ST_NORD] = -1.0
                return done_steps, True
            b = (u.sum() - c) / den
            st[_ST_METHOD] = 0 if st[_ST_RR] == ridge else 1
            # step to the first bound
            t = 1.0
            tq = np.empty(n)
            d = np.empty(n)
            for q in range(n):
                i = order[q]
                # one sample in S1: the equality constraint fixes its step to
                # c exactly (u - b w = c up to rounding, whose sign would
                # decide between a blocked step and a tiny one)
                d[q] = u[q] - b * w[q] if n > 1 else c
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
            st[_ST_DEGEN] = 1.0 if t <= 1e-14 else 0.0
            full = t >= 1.0
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
                if delta != 0.0:
                    for k in range(m):
                        Kb[k] += K[k, i] * delta
            st[_ST_B] = b
        if full:
            b = st[_ST_B]
            single = qp or st[_ST_DEGEN] != 0.0
            best = 0.0
            kbest = -1
            for i in range(m):
                ye = y[i] * (r[i] - Kb[i] - b)
                cm = sets[i] == 2 and ye > tol
                dm = sets[i] == 3 and ye < -tol
                if single:
                    vv = ye if cm else (-ye if dm else 0.0)
                    if vv > best:
                        best = vv
                        kbest = i
                elif cm or dm:
                    sets[i] = 1
                    if cm:
                        nc += 1
                    else:
                        nd += 1
            if single and kbest >= 0:
                if sets[kbest] == 2:
                    nc = 1
                else:
                    nd = 1
                sets[kbest] = 1
            if abs(beta.sum() - s0) <= 1e-9 * (1.0 + Cmax * m):
                W = 0.0
                for i in range(m):
                    W += beta[i] * (r[i] - 0.5 * Kb[i])
                st[_ST_BESTW] = W
                fbeta[:] = beta
                fKb[:] = Kb
                st[_ST_FB] = st[_ST_B]
                if nc == 0 and nd == 0:
                    st[_ST_DONE] = 1.0
        st[_ST_NA] = na
        st[_ST_NB] = nb
        st[_ST_NC] = nc
        st[_ST_ND] = nd
        st[_ST_NITER] += 1
        done_steps += 1
        if st[_ST_DONE] == 0.0 and st[_ST_NITER] >= max_iter:
            beta[:] = fbeta
            Kb[:] = fKb
            st[_ST_B] = st[_ST_FB]
            for i in range(m):
                a = y[i] * beta[i]
                sets[i] = 2 if a <= 0.0 else (3 if a >= C[i] else 1)
            st[_ST_DONE] = 1.0
    return done_steps, False


# --------------------------------------------------------------------------
# intercept from the gradient (LIBSVM's rule), shared by all engines
# --------------------------------------------------------------------------
def as_bounds(C, m):
    """The per-sample upper bounds as a contiguous float64 array of length
    m: a scalar C is repeated, an array is checked and copied."""
    Cv = np.asarray(C, dtype=np.float64)
    if Cv.ndim == 0:
        return np.full(m, float(Cv))
    if Cv.shape != (m,):
        raise ValueError(f"C has shape {Cv.shape}; expected a scalar or ({m},)")
    return np.ascontiguousarray(Cv, dtype=np.float64).copy()


# --------------------------------------------------------------------------
# the linear system (3)
# --------------------------------------------------------------------------
def solve_ls(K11, rhs, c, ridge=0.0, allow_lstsq=True):
    """Solve ``K11 d + b 1 = rhs``, ``1' d = c``.  Returns ``(d, b, method)``.

    With ``ridge > 0`` (the monotone line-search mode) ``K11 + ridge I`` is
    factorised by Cholesky, the ridge growing x100 until it is positive
    definite: the direction is then always a descent direction."""
    m = K11.shape[0]
    ones = np.ones(m)
    if ridge:
        scale = max(1.0, float(np.abs(np.diag(K11)).max()) if m else 1.0)
        rr = ridge
        while rr < 1e-2 * scale:
            try:
                cf = sla.cho_factor(K11 + rr * np.eye(m), lower=True, check_finite=False)
                u = sla.cho_solve(cf, rhs, check_finite=False)
                w = sla.cho_solve(cf, ones, check_finite=False)
                if np.all(np.isfinite(u)) and np.all(np.isfinite(w)) and w.sum() > 0:
                    b = (u.sum() - c) / w.sum()
                    return u - b * w, float(b), "cholesky" if rr == ridge else "cholesky+ridge"
            except np.linalg.LinAlgError:
                pass
            rr *= 100.0
        ridge = rr
    A = K11 + ridge * np.eye(m) if ridge else K11
    try:
        cf = sla.cho_factor(A, lower=True, check_finite=False)
        u = sla.cho_solve(cf, rhs, check_finite=False)
        w = sla.cho_solve(cf, ones, check_finite=False)
        den = w.sum()
        if den > 0 and np.isfinite(den) and np.all(np.isfinite(u)):
            b = (u.sum() - c) / den
            return u - b * w, float(b), "cholesky"
    except np.linalg.LinAlgError:
        pass
    M = np.zeros((m + 1, m + 1))
    M[:m, :m] = A
    M[:m, m] = 1.0
    M[m, :m] = 1.0
    full_rhs = np.append(rhs, c)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sla.LinAlgWarning)
        try:
            lu = sla.lu_factor(M, check_finite=False)
            sol = sla.lu_solve(lu, full_rhs, check_finite=False)
            if np.all(np.isfinite(sol)) and np.abs(np.diag(lu[0])).min() > 1e-12 * max(
                1.0, np.abs(np.diag(lu[0])).max()
            ):
                return sol[:m], float(sol[m]), "lu"
        except (sla.LinAlgWarning, ValueError, np.linalg.LinAlgError):
            pass
    if not allow_lstsq:
        return None, 0.0, "lstsq"
    sol = np.linalg.lstsq(M, full_rhs, rcond=None)[0]
    return sol[:m], float(sol[m]), "lstsq"


# --------------------------------------------------------------------------
# IRWLS (Table 1) and the primal active-set QP
# --------------------------------------------------------------------------
class ActiveSetSubproblem:
    """One sub-problem, advanced one IRWLS (or active-set) iteration at a time.

    Parameters
    ----------
    K : (m, m) kernel block ``K_BB``
    y : (m,) labels in {-1, +1}
    beta : (m,) feasible start (``0 <= y beta <= C``, ``sum beta = s0``)
    r : (m,) linear term (``y - G_in``)
    C, tol : box bound (a scalar, or per-sample bounds ``C_i``) and the
        tolerance of the stopping conditions
    rule : {"irwls", "qp"}
        ``"irwls"``: Table 1 of Perez-Cruz et al.: after solving (3), rule a
        moves every S1 sample with ``y beta < 0`` to S2 and rule b every S1
        sample with ``y beta > C`` to S3 (all at once, clipped to the bound);
        when neither fires, rule c moves every S2 sample with ``y e > tol``
        and rule d every S3 sample with ``y e < -tol`` into S1.  If the sets
        ever repeat (Table 1 is not guaranteed to terminate), the iteration
        returns to the last feasible point and continues with line-search
        steps (still releasing every violator), which decrease the dual
        monotonically.
        ``"qp"``: line search to the first bound (rules a/b only for the
        blocking samples) and release of the single worst violator.

    Attributes after each :meth:`iterate`: ``beta``, ``b``, ``sets`` (1, 2, 3),
    ``moved`` (counts of rules a, b, c, d in the last iteration),
    ``method`` (cholesky / lu / lstsq), ``done``.
    """

    def __init__(self, K, y, beta, r, C, tol, rule="irwls", s0=None, max_iter=None,
                 mode="table1", patience=3):
        self.K = np.ascontiguousarray(K, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.float64)
        self.beta = np.array(beta, dtype=np.float64)
        self.r = np.asarray(r, dtype=np.float64)
        # ``C`` as given (a scalar, or per-sample upper bounds for weighted
        # problems); ``Cv`` the per-sample bounds the iterations read
        self.C = float(C) if np.ndim(C) == 0 else as_bounds(C, len(y))
        self.Cv = as_bounds(C, len(y))
        self._Cmax = float(self.Cv.max()) if len(self.Cv) else 0.0
        self.tol = float(tol)
        self.rule = rule
        self.m = len(self.y)
        self.s0 = float(self.beta.sum()) if s0 is None else float(s0)
        self.Kb = self.K @ self.beta
        yb = self.y * self.beta
        self.sets = np.where(yb <= 0.0, S2, np.where(yb >= self.Cv, S3, S1)).astype(np.int8)
        self.b = self._b_bounds(self.r - self.Kb)
        self.done = False
        self.n_iter = 0
        self.moved = (0, 0, 0, 0)
        self.method = ""
        self.mode = mode if rule == "irwls" else "line"
        self.max_iter = max_iter if max_iter is not None else 50 * self.m + 200
        self._seen = set()
        self.patience = patience
        self._bad = 0
        self._degenerate = False
        self._st = None  # state of the compiled line-search iterations
        self._best_W = float(self.r @ self.beta - 0.5 * self.beta @ self.Kb)
        self._save_feasible()

    # -- helpers ------------------------------------------------------------
    def _save_feasible(self):
        self.feasible_beta = self.beta.copy()
        self.feasible_Kb = self.Kb.copy()
        self.feasible_b = self.b

    def _b_bounds(self, v):
        """b when S1 is empty: the middle of the interval allowed by S2/S3."""
        alpha = self.y * self.beta
        return intercept_from_v(v, self.y, np.clip(alpha, 0, self.Cv), self.Cv)

    def errors(self):
        """``e_i = r_i - (K beta)_i - b`` of every working-set sample."""
        return self.r - self.Kb - self.b

    def weights(self):
        """The IRWLS weights a_i of (8): infinite on S1 (e_i = 0 enforced),
        0 on S2, ``C / (y_i e_i)`` on S3 (infinite if ``y_i e_i <= 0``)."""
        ye = self.y * self.errors()
        a = np.zeros(self.m)
        a[self.sets == S1] = np.inf
        s3 = self.sets == S3
        with np.errstate(divide="ignore"):
            a[s3] = np.where(ye[s3] > 0, self.Cv[s3] / np.where(ye[s3] > 0, ye[s3], 1.0), np.inf)
        return a

    # -- one iteration ---------------------------------------------------------
    def _line_run(self, k):
        """Up to k line-search-mode iterations in compiled code
        (:func:`line_iterations`).  Returns ``(n_done, need_python)``."""
        st = self._st
        if st is None:
            st = self._st = np.zeros(_ST_SIZE)
            st[_ST_NORD] = -1.0
            self._Lnb = np.zeros((self.m, self.m))
            self._ord_nb = np.zeros(self.m, np.int64)
        st[_ST_B] = self.b
        st[_ST_BESTW] = self._best_W
        st[_ST_FB] = self.feasible_b
        st[_ST_DEGEN] = float(self._degenerate)
        st[_ST_NITER] = self.n_iter
        st[_ST_DONE] = float(self.done)
        n_done, need = line_iterations(self.K, self.y, self.r, self.Cv, self.tol, self.s0,
                                       self.rule == "qp", int(k), int(self.max_iter), self.beta,
                                       self.Kb, self.sets, self.feasible_beta, self.feasible_Kb,
                                       self._Lnb, self._ord_nb, st)
        self.b = float(st[_ST_B])
        self._best_W = float(st[_ST_BESTW])
        self.feasible_b = float(st[_ST_FB])
        self._degenerate = bool(st[_ST_DEGEN])
        self.n_iter = int(st[_ST_NITER])
        self.done = bool(st[_ST_DONE])
        if n_done:
            self.moved = (int(st[_ST_NA]), int(st[_ST_NB]), int(st[_ST_NC]), int(st[_ST_ND]))
            self.method = _METHODS[int(st[_ST_METHOD])]
        return int(n_done), bool(need)

    def iterate_many(self, k):
        """Up to k iterations (fewer if the sub-problem is solved); the
        line-search mode runs compiled.  Returns how many were done."""
        n = 0
        while n < k and not self.done:
            if self.mode == "line":
                n_done, need = self._line_run(k - n)
                n += n_done
                if not need:
                    continue
            self.iterate()
            n += 1
        return n

    def iterate(self):
        if self.done:
            return
        if self.mode == "line":
            # compiled; falls through only when (3) needs LU / least squares
            n_done, need = self._line_run(1)
            if not need:
                return
        self.n_iter += 1
        y, C = self.y, self.Cv
        F = np.flatnonzero(self.sets == S1)
        na = nb = nc = nd = 0
        full = True
        feasible = False
        if len(F) == 0:
            self.b = self._b_bounds(self.r - self.Kb)
            self.method = "bounds"
        else:
            v = self.r[F] - self.Kb[F]
            c = self.s0 - self.beta.sum()
            if self.mode == "line":
                # reached only when the compiled iterations (line_iterations,
                # with their kept Cholesky factor) found no usable factor:
                # the LU / least-squares fallback of the bordered system (3)
                d, b, self.method = solve_ls(self.K[np.ix_(F, F)], v, c, 1e-2 * max(
                    1.0, float(np.abs(np.diag(self.K)).max())), allow_lstsq=True)
            else:
                # Table 1: the plain system (3), no ridge
                d, b, self.method = solve_ls(self.K[np.ix_(F, F)], v, c, 0.0,
                                             allow_lstsq=False)
            if self.mode == "table1" and self.method == "lstsq":
                # singular (3): Table 1 cannot continue; the line-search mode
                # uses a ridge-regularised Cholesky direction instead
                self._to_line_search()
                self.moved = (0, 0, 0, 0)
                return
            old = self.beta[F].copy()
            yF = y[F]
            CF = C[F]
            if self.mode == "table1":
                new = old + d
                ynew = yF * new
                low = ynew < 0.0
                high = ynew > CF
                new[low] = 0.0
                new[high] = CF[high] * yF[high]
                na, nb = int(low.sum()), int(high.sum())
                full = na == 0 and nb == 0
                self.beta[F] = new
                self.sets[F[low]] = S2
                self.sets[F[high]] = S3
            else:
                yd = yF * d
                yo = yF * old
                with np.errstate(divide="ignore", invalid="ignore"):
                    t_i = np.where(yd < 0, yo / -yd, np.where(yd > 0, (CF - yo) / yd, np.inf))
                t = min(1.0, float(t_i.min()) if len(t_i) else 1.0)
                t = max(t, 0.0)
                # a zero step (released samples pushed straight back out):
                # release one violator at a time until a step moves again
                self._degenerate = t <= 1e-14
                new = old + t * d
                if t < 1.0:
                    full = False
                    block = t_i <= t * (1 + 1e-12) + 1e-300
                    low = block & (yd < 0)
                    high = block & (yd > 0)
                    new[low] = 0.0
                    new[high] = CF[high] * yF[high]
                    na, nb = int(low.sum()), int(high.sum())
                    self.sets[F[low]] = S2
                    self.sets[F[high]] = S3
                self.beta[F] = new
            self.b = b
            self.Kb += self.K[:, F] @ (self.beta[F] - old)
        if full:
            ye = y * self.errors()
            c_mask = (self.sets == S2) & (ye > self.tol)
            d_mask = (self.sets == S3) & (ye < -self.tol)
            if self.rule == "qp" or self._degenerate:
                viol = np.where(c_mask, ye, 0.0) + np.where(d_mask, -ye, 0.0)
                if viol.max(initial=0.0) > 0:
                    k = int(np.argmax(viol))
                    nc, nd = int(c_mask[k]), int(d_mask[k])
                    self.sets[k] = S1
            else:
                nc, nd = int(c_mask.sum()), int(d_mask.sum())
                self.sets[c_mask | d_mask] = S1
            feasible = abs(self.beta.sum() - self.s0) <= 1e-9 * (1.0 + self._Cmax * self.m)
            if feasible:
                W = float(self.r @ self.beta - 0.5 * self.beta @ self.Kb)
                if self.mode == "table1" and W < self._best_W:
                    # Table 1 went downhill (it has no convergence guarantee):
                    # back to the best feasible point, line-search steps from now
                    self._to_line_search()
                    self.moved = (na, nb, 0, 0)
                    return
                self._best_W = W
                if nc == 0 and nd == 0:
                    self.done = True
                    self._save_feasible()
                    self.moved = (na, nb, nc, nd)
                    return
                self._save_feasible()
            if nc == 0 and nd == 0 and feasible:
                self.done = True
        self.moved = (na, nb, nc, nd)
        if self.mode == "table1" and not self.done:
            # Table 1 has no convergence guarantee: after a repeated set
            # configuration, or `patience` iterations in a row that end at an
            # infeasible point, go back to the last feasible point and continue
            # with line-search steps (monotone in the dual objective)
            self._bad = 0 if (full and feasible) else self._bad + 1
            key = self.sets.tobytes()
            if key in self._seen or self._bad > self.patience:
                self._to_line_search()
            else:
                self._seen.add(key)
        if not self.done and self.n_iter >= self.max_iter:
            # give up on this sub-problem at its last feasible point
            self._restore_feasible()
            self.done = True

    def _restore_feasible(self):
        self.beta = self.feasible_beta.copy()
        self.Kb = self.feasible_Kb.copy()
        self.b = self.feasible_b
        yb = self.y * self.beta
        self.sets = np.where(yb <= 0.0, S2, np.where(yb >= self.Cv, S3, S1)).astype(np.int8)

    def _to_line_search(self):
        self._restore_feasible()
        self.mode = "line"

    def solve(self):
        while not self.done:
            self.iterate_many(1 << 30)
        return self

    @property
    def alpha(self):
        return np.clip(self.y * self.beta, 0.0, self.Cv)


# --------------------------------------------------------------------------
# SMO engine: analytic pair steps on the sub-problem
# --------------------------------------------------------------------------
@njit(cache=True)
def smo_engine(K, y, alpha, r, C, tol, max_iter):
    """Maximal-violating-pair SMO on the sub-problem (in place on ``alpha``).

    ``E_i = (K beta)_i - r_i`` is Platt's error with the fixed part of the
    output folded into ``r`` and b = 0 (b cancels in the pair step).
    ``C`` holds the per-sample upper bounds (m,); a pair moves in its box
    ``[0, C_j] x [0, C_i]``.  Returns ``(n_steps, b)``."""
    m = y.shape[0]
    # v = -E (v_i = r_i - (K beta)_i), kept instead of E so that the shared
    # rules of svmlab._kkt read it directly; negation is exact, so every
    # value is bit for bit -E of Platt's form
    v = np.empty(m)
    for i in range(m):
        s = 0.0
        for j in range(m):
            s += K[i, j] * y[j] * alpha[j]
        v[i] = r[i] - s
    it = 0
    while it < max_iter:
        # i = argmax v over I_up, j = argmin v over I_low (maximal violating pair)
        vi, i, vj, j = violating_pair(v, y, alpha, C)
        if i < 0 or j < 0 or vi - vj <= tol:
            break
        moved, aj, ai, _, _, _, _ = pair_step_box(
            y[j], y[i], alpha[j], alpha[i], -v[j], -v[i], 0.0,
            K[j, j], K[j, i], K[i, i], C[j], C[i], 1e-12,
        )
        if not moved:
            break
        dj = y[j] * (aj - alpha[j])
        di = y[i] * (ai - alpha[i])
        alpha[j] = aj
        alpha[i] = ai
        for k in range(m):
            v[k] -= K[k, j] * dj + K[k, i] * di
        it += 1
    # intercept: mean over free of v, else middle of the interval
    b = intercept(v, y, alpha, C)
    return it, b


def solve_subproblem(engine, K, y, alpha, r, C, tol, max_iter=None):
    """Solve a sub-problem with the named engine.

    ``C`` is a scalar or the per-sample upper bounds (m,).  Returns
    ``(alpha_new, b, n_inner)``; ``alpha`` is not modified."""
    if engine == "smo":
        a = np.array(alpha, dtype=np.float64)
        cap = max_iter if max_iter is not None else 100 * len(a) + 1000
        it, b = smo_engine(np.ascontiguousarray(K), np.asarray(y, np.float64), a,
                           np.asarray(r, np.float64), as_bounds(C, len(a)), float(tol), cap)
        return a, float(b), int(it)
    if engine not in ("qp", "irwls"):
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    sub = ActiveSetSubproblem(K, y, y * alpha, r, C, tol, rule=engine, max_iter=max_iter)
    sub.solve()
    return sub.alpha, float(sub.b), sub.n_iter
