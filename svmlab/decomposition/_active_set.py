"""The active-set sub-problem of the decomposition family: Table 1 of
Perez-Cruz et al. (2000) (the ``"irwls"`` engine) and the classical primal
active-set method (the ``"qp"`` engine), advanced one iteration at a time.

Samples split into S1 (``0 < y beta < C``, free: ``e_i = 0`` imposed), S2
(``beta = 0``) and S3 (``y beta = C``).  Table 1 solves the system (3) on S1
in Python (:mod:`svmlab.decomposition._bordered`); the line-search mode,
where hard problems spend almost all of their iterations, runs compiled
(:mod:`svmlab.decomposition._line_search`) and comes back to Python only
for the LU / least-squares fallback of (3).
"""

from __future__ import annotations

import numpy as np

from .._kkt import intercept_from_v
from ._bordered import solve_ls
from ._line_search import (METHODS, ST_SIZE, _ST_B, _ST_BESTW, _ST_DEGEN, _ST_DONE, _ST_FB,
                           _ST_KMAX, _ST_METHOD, _ST_NA, _ST_NB, _ST_NC, _ST_ND, _ST_NITER,
                           _ST_NORD, _ST_NPEND, is_symmetric, line_iterations)
from ._release import RELEASE_CAP, release_pick

__all__ = ["S1", "S2", "S3", "ActiveSetSubproblem", "as_bounds", "TABLE1_HANDOVER",
           "TABLE1_HANDOVER_MIN", "DOWNHILL_RTOL"]

S1, S2, S3 = 1, 2, 3

#: Table 1 hands a working set over to the line-search mode: when a Table 1
#: iteration has freed (rules c/d) more violators than there were samples
#: in S1, and S1 then holds more than TABLE1_HANDOVER_MIN samples, the next
#: iteration goes back to the point before the release (feasible, saved)
#: and the line-search mode takes the working set from there, instead of
#: solving (3) over (nearly) the whole working set only for rules a/b to
#: clip hundreds of its samples.  A smaller (3) costs little, and Table 1
#: keeps its own course there.  See
#: docs/decisions/26d05-irwls-table1-handover.md.
TABLE1_HANDOVER = True
TABLE1_HANDOVER_MIN = 100

#: Table 1's downhill test: a full Table 1 step counts as lowering the dual
#: only when ``W < best_W - DOWNHILL_RTOL (1 + |best_W|)``.  With S1 already
#: optimal the solve of (3) returns rounding noise and W equals the best
#: value up to a few ulps; an exact comparison would send sound Table 1
#: iterations to the line-search mode at random.  A real downhill step
#: lowers W by far more; one that lowers it by less is accepted, and the
#: dual can fall by that much.  The readable twin
#: (:func:`svmlab.reference.irwls.table1_iteration`) applies the same test.
DOWNHILL_RTOL = 1e-12


def as_bounds(C, m):
    """The per-sample upper bounds as a contiguous float64 array of length
    m: a scalar C is repeated, an array is checked and copied."""
    Cv = np.asarray(C, dtype=np.float64)
    if Cv.ndim == 0:
        return np.full(m, float(Cv))
    if Cv.shape != (m,):
        raise ValueError(f"C has shape {Cv.shape}; expected a scalar or ({m},)")
    return np.ascontiguousarray(Cv, dtype=np.float64).copy()


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
        steps (releasing at most ``release_cap`` of the worst violators,
        balanced by the sign of e, after each full step), which decrease the dual monotonically.
        ``"qp"``: line search to the first bound (rules a/b only for the
        blocking samples) and release of the single worst violator.

    release_cap : int or None
        The line-search mode of ``rule="irwls"`` frees at most this many
        violators (the worst of each sign of e, see :func:`~svmlab.decomposition._release.release_pick`)
        after a full step; 0 frees all of them; None means
        :data:`RELEASE_CAP` (10).
    handover : bool or None
        ``rule="irwls"``: when a Table 1 iteration has freed (rules c/d)
        more violators than there were samples in S1, and S1 now holds more
        than :data:`TABLE1_HANDOVER_MIN` (100), the next iteration goes back
        to the point before (feasible) and the line-search mode takes over,
        instead of solving (3) with all of them free; None means
        :data:`TABLE1_HANDOVER` (True).  False: the paper's Table 1.
    workspace : float64 array (m, m) or None
        Memory for the kept factor of the line-search mode (its contents
        are ignored); None allocates it.

    Attributes after each :meth:`iterate`: ``beta``, ``b``, ``sets`` (1, 2, 3),
    ``moved`` (counts of rules a, b, c, d in the last iteration),
    ``method`` (cholesky / lu / lstsq), ``done``.
    """

    def __init__(self, K, y, beta, r, C, tol, rule="irwls", s0=None, max_iter=None,
                 mode="table1", patience=3, release_cap=None, handover=None,
                 workspace=None):
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
        self.release_cap = RELEASE_CAP if release_cap is None else int(release_cap)
        # Table 1 hands a working set over to the line-search mode after
        # freeing more violators than there were free samples (TABLE1_HANDOVER)
        self.handover = TABLE1_HANDOVER if handover is None else bool(handover)
        # a float64 (m, m) array for the kept factor of the line-search mode
        # (its contents are ignored; IRWLS passes the same one to every
        # working set, sparing a fresh array's page faults)
        self._workspace = workspace
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
            st = self._st = np.zeros(ST_SIZE)
            st[_ST_NORD] = -1.0
            ws = self._workspace
            # (the first factor zeroes the whole array: st[_ST_NORD] < 0)
            self._Lnb = ws if ws is not None and ws.shape == (self.m, self.m) else np.zeros(
                (self.m, self.m))
            self._ord_nb = np.zeros(self.m, np.int64)
            K = self.K
            self._KT = K if is_symmetric(K) else np.ascontiguousarray(K.T)
            # the compiled state's own K beta (deferred outside S1, see
            # _flush_pending) and its pending changes
            self._Kbl = np.empty(self.m)
            self._pend = np.zeros(self.m)
            self._pidx = np.empty(self.m, np.int64)
            self._inp = np.zeros(self.m, np.bool_)
            self._kb_dirty = True
        if self._kb_dirty:
            # Python changed K beta (Table 1, the LU fallback, a restore):
            # the compiled state starts from it, nothing pending
            self._Kbl[:] = self.Kb
            self._pend[:] = 0.0
            self._inp[:] = False
            st[_ST_NPEND] = 0.0
            self._kb_dirty = False
        st[_ST_B] = self.b
        st[_ST_BESTW] = self._best_W
        st[_ST_FB] = self.feasible_b
        st[_ST_DEGEN] = float(self._degenerate)
        st[_ST_NITER] = self.n_iter
        st[_ST_DONE] = float(self.done)
        st[_ST_KMAX] = self.release_cap
        n_done, need = line_iterations(self.K, self.y, self.r, self.Cv, self.tol, self.s0,
                                       self.rule == "qp", int(k), int(self.max_iter), self.beta,
                                       self._Kbl, self.sets, self.feasible_beta, self.feasible_Kb,
                                       self._Lnb, self._ord_nb, st, self._KT, self.Kb,
                                       self._pend, self._pidx, self._inp)
        self.b = float(st[_ST_B])
        self._best_W = float(st[_ST_BESTW])
        self.feasible_b = float(st[_ST_FB])
        self._degenerate = bool(st[_ST_DEGEN])
        self.n_iter = int(st[_ST_NITER])
        self.done = bool(st[_ST_DONE])
        if n_done:
            self.moved = (int(st[_ST_NA]), int(st[_ST_NB]), int(st[_ST_NC]), int(st[_ST_ND]))
            self.method = METHODS[int(st[_ST_METHOD])]
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
        self._kb_dirty = True  # K beta changes here, in Python
        y, C = self.y, self.Cv
        F = np.flatnonzero(self.sets == S1)
        if (self.mode == "table1" and self.handover and len(F) > TABLE1_HANDOVER_MIN
                and 2 * (self.moved[2] + self.moved[3]) > len(F)):
            # the last Table 1 iteration freed more violators than there
            # were free samples: back to the point before (feasible, saved)
            # and line-search iterations from there (TABLE1_HANDOVER)
            self._to_line_search()
            self.moved = (0, 0, 0, 0)
            return
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
                d, b, self.method = solve_ls(self.K[F[:, None], F], v, c, 1e-2 * max(
                    1.0, float(np.abs(np.diag(self.K)).max())), allow_lstsq=True)
                # back on the plane 1'd = c (as line_iterations)
                d = d + (c - d.sum()) / len(d) if len(d) > 1 else np.full(1, c)
            else:
                # Table 1: the plain system (3), no ridge, by Cholesky of
                # K_11; a K_11 that Cholesky cannot factor counts as a
                # singular (3): for a positive semi-definite kernel a failed
                # Cholesky means K_11 is singular to working precision
                # (docs/decisions/26d05-irwls-table1-handover.md)
                d, b, self.method = solve_ls(self.K[F[:, None], F], v, c, 0.0,
                                             allow_lstsq=False, allow_lu=False)
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
            rel = np.flatnonzero(c_mask | d_mask)
            if self.rule == "qp" or self._degenerate:
                kmax = 1
            else:
                kmax = self.release_cap if self.mode == "line" else 0
            if kmax > 0:
                # the line-search mode's release (as line_iterations, by the
                # same compiled rule _release_pick: the worst of each sign)
                vpos = ((self.sets == S2) == (y > 0))[rel]
                pick = release_pick(np.where(c_mask, -ye, ye)[rel], vpos,
                                     int(vpos.sum()), int(kmax), len(F))
                rel = rel[pick]
            nc, nd = int(c_mask[rel].sum()), int(d_mask[rel].sum())
            self.sets[rel] = S1
            feasible = abs(self.beta.sum() - self.s0) <= 1e-9 * (1.0 + self._Cmax * self.m)
            if feasible:
                W = float(self.r @ self.beta - 0.5 * self.beta @ self.Kb)
                if self.mode == "table1" and W < self._best_W - DOWNHILL_RTOL * (
                        1.0 + abs(self._best_W)):
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
        self._kb_dirty = True
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
