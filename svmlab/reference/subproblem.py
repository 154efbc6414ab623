"""The sub-problem of the decomposition family, readable: the dual over a
working set B with everything else fixed, and the classical active-set
iteration that solves it.

    max  r'beta - 1/2 beta' K beta,   sum_i beta_i = s0,   0 <= y_i beta_i <= C

(``beta = y alpha``, ``r = y_B - K_BN beta_N``, ``s0 = -sum_N beta_N``; with
B = everything, ``r = y``, ``s0 = 0``: the full SVC dual).  The multiplier
of the equality constraint is the intercept b; ``e_i = r_i - (K beta)_i - b``
is the error of sample i and ``y_i e_i = 1 - y_i f(x_i)``.

Samples are split as in Perez-Cruz et al. (2000): S1 (0 < y beta < C, free:
``e_i = 0`` is imposed), S2 (beta = 0) and S3 (y beta = C).  Each iteration
solves the linear system (3) of the paper on S1 (:func:`solve_system3`).

:func:`line_search_iteration` is one iteration of the primal active-set
method (Nocedal & Wright, Algorithm 16.3) that svmlab's ``"qp"`` engine
runs (``release="worst"``: one violator freed per iteration) and that
IRWLS falls back to when Table 1 fails (``release="all"``, see
:mod:`svmlab.reference.irwls`: after a full step it frees at most
``release_cap`` violators (``RELEASE_CAP = 10``; 0: every one), the worst
of each sign of e, up to half each).  ``sum beta`` is fixed, so violators
that all need beta to move the same way cannot move together: with S1
empty the single release (``"worst"``, or after a zero step) frees the
worst violator of each sign.  The direction of (3) is put back on the
plane ``1'd = c`` (a nearly singular K_11 loses it to cancellation).
Ties: among equal violations the smallest index is freed; every sample
whose bound is reached within a relative 1e-12 of the step length is
clipped.

Where the fast code differs: it keeps the Cholesky factor of
``K_11 + ridge I`` and updates it by rotations while S1 changes; here it is
factorised afresh.  Both solve the same systems, so the results agree to
rounding amplified by the condition number of ``K_11 + ridge``
(:mod:`svmlab.reference._rounding` flags the comparisons that this
rounding can decide).
"""

from __future__ import annotations


import numpy as np
import scipy.linalg as sla

from svmlab.reference import _rounding
from svmlab.reference._rounding import near

__all__ = ["S1", "S2", "S3", "up_low", "intercept_from_v", "max_violating_pair",
           "solve_system3", "Subproblem", "line_search_iteration"]

S1, S2, S3 = 1, 2, 3


#: the line-search mode of IRWLS frees at most this many violators after a
#: full step, the worst of each sign of e (svmlab.decomposition._engines.
#: RELEASE_CAP; 0: all)
RELEASE_CAP = 10


def up_low(y, alpha, C):
    """I_up (y_i alpha_i can grow) and I_low (it can shrink)."""
    up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    return up, low


def intercept_from_v(v, y, alpha, C):
    """b for ``v = r - K beta`` (e = v - b): mean of v over the free samples,
    else the middle of [max_{I_up} v, min_{I_low} v] (LIBSVM's rule)."""
    free = (alpha > 0) & (alpha < C)
    if free.any():
        return float(v[free].mean())
    up, low = up_low(y, alpha, C)
    lo = v[up].max() if up.any() else -np.inf
    hi = v[low].min() if low.any() else np.inf
    if np.isfinite(lo) and np.isfinite(hi):
        return float(0.5 * (lo + hi))
    return float(lo if np.isfinite(lo) else (hi if np.isfinite(hi) else 0.0))


def solve_system3(K11, rhs, c, ridge=0.0):
    """System (3) in increment form on S1:  K11 d + b 1 = rhs,  1'd = c.

    Cholesky of ``K11 + rr I`` and a Schur complement for b:
    u = A^-1 rhs, w = A^-1 1, b = (1'u - c) / 1'w, d = u - b w.
    ``ridge = 0`` (Table 1): no ridge; if Cholesky fails, (3) counts as
    singular: ``d = None`` (Table 1 cannot continue; as svmlab, which does
    not try LU of the bordered matrix there).
    ``ridge > 0`` (line search): rr grows x100 from ``ridge`` until the
    factorisation works.  Returns ``(d, b, method)``."""
    m = len(rhs)
    ones = np.ones(m)
    scale = max(1.0, float(np.abs(np.diag(K11)).max()))
    rr = ridge
    while rr < 1e-2 * scale:
        try:
            L = sla.cho_factor(K11 + rr * np.eye(m), lower=True, check_finite=False)
            if ridge > 0:
                _rounding.note_factor(L[0])  # the fast code factorises differently
            u = sla.cho_solve(L, rhs, check_finite=False)
            w = sla.cho_solve(L, ones, check_finite=False)
            if w.sum() > 0 and np.all(np.isfinite(u)):
                b = (u.sum() - c) / w.sum()
                return u - b * w, float(b), "cholesky" if rr == ridge else "cholesky+ridge"
        except np.linalg.LinAlgError:
            pass
        if ridge == 0.0:
            break
        rr *= 100.0
    if ridge == 0.0:
        return None, 0.0, "lstsq"  # K11 not positive definite: (3) singular
    M = np.block([[K11 + rr * np.eye(m), ones[:, None]], [ones[None, :], np.zeros((1, 1))]])
    sol = np.linalg.lstsq(M, np.append(rhs, c), rcond=None)[0]
    return sol[:m], float(sol[m]), "lstsq"


def max_violating_pair(v, y, alpha, C, ties=None):
    """(i, j, gap): i = argmax v over I_up, j = argmin v over I_low (first
    index on ties).  ``ties``: a list noted when a choice is within rounding."""
    up, low = up_low(y, alpha, C)
    if not up.any() or not low.any():
        return -1, -1, 0.0
    v_up, v_low = np.where(up, v, -np.inf), np.where(low, v, np.inf)
    i, j = int(np.argmax(v_up)), int(np.argmin(v_low))
    if ties is not None and (near(np.delete(v_up, i), v[i]) or near(np.delete(v_low, j), v[j])):
        ties.append("two candidates for the maximal violating pair")
    return i, j, float(v[i] - v[j])


class Subproblem:
    """The dual restricted to a working set: ``max r'beta - 1/2 beta'K beta``,
    ``sum beta = s0``, ``0 <= y beta <= C``.  ``release="all"`` is IRWLS
    (Table 1 frees every violator; its line-search safeguard the
    ``release_cap`` worst, 0 for all), ``"worst"`` the classical active-set
    QP (one violator per iteration)."""

    #: Table 1 hands over to the line search after freeing more violators
    #: than there were free samples (svmlab.reference.irwls)
    handover = True

    def __init__(self, K, y, beta, r, C, tol, s0, release="all", mode="table1",
                 release_cap=RELEASE_CAP):
        self.K, self.y, self.r, self.C, self.tol, self.s0 = K, y, r, C, tol, s0
        self.beta = np.array(beta, dtype=float)
        self.release, self.mode, self.m = release, mode, len(y)
        self.release_cap = release_cap  # line search, release="all": at most this many
        self.Kb = K @ self.beta
        self.sets = self.sets_from_beta()
        self.b = intercept_from_v(r - self.Kb, y, np.clip(y * self.beta, 0, C), C)
        self.ridge = 1e-12 * max(1.0, float(np.abs(np.diag(K)).max()))
        self.max_iter = 50 * self.m + 200
        self.n_iter, self.done, self.moved, self.method = 0, False, (0, 0, 0, 0), ""
        self.seen, self.bad, self.degenerate = set(), 0, False
        self.ties = 0  # decisions taken within rounding of a tie
        self.best_W = self.objective()
        self.save_feasible()

    def sets_from_beta(self):
        yb = self.y * self.beta
        return np.where(yb <= 0, S2, np.where(yb >= self.C, S3, S1)).astype(np.int8)

    def objective(self):
        return float(self.r @ self.beta - 0.5 * self.beta @ self.Kb)

    def errors(self):
        """e_i = r_i - (K beta)_i - b;  y_i e_i = 1 - y_i f(x_i)."""
        return self.r - self.Kb - self.b

    def weights(self):
        """a_i of eq. (8): inf on S1 (e_i = 0 enforced), 0 on S2, C/(y_i e_i) on S3."""
        ye = self.y * self.errors()
        a = np.where(self.sets == S1, np.inf, 0.0)
        s3 = self.sets == S3
        with np.errstate(divide="ignore"):
            a[s3] = np.where(ye[s3] > 0, self.C / np.where(ye[s3] > 0, ye[s3], 1.0), np.inf)
        return a

    def feasible(self):
        return abs(self.beta.sum() - self.s0) <= 1e-9 * (1.0 + self.C * self.m)

    def save_feasible(self):
        self.f_beta, self.f_Kb, self.f_b = self.beta.copy(), self.Kb.copy(), self.b

    def to_line_search(self):
        """Back to the last feasible point; line-search iterations from now."""
        self.beta, self.Kb, self.b = self.f_beta.copy(), self.f_Kb.copy(), self.f_b
        self.sets = self.sets_from_beta()
        self.mode = "line"

    def iterate(self, iteration):
        """Run ``iteration(self)`` once (a Table 1 or a line-search
        iteration); after ``50 m + 200`` of them, give up at the last
        feasible point, as svmlab does."""
        self.n_iter += 1
        iteration(self)
        if not self.done and self.n_iter >= self.max_iter:
            self.to_line_search()  # give up at the last feasible point
            self.done = True


def _worst_of_each_sign(idx, viol, grow, k_grow, k_shrink):
    """The ``k_grow`` largest violations among ``grow`` and the ``k_shrink``
    largest among the others (the smaller index on ties), as sorted indices
    ``idx[...]``."""
    out = []
    for side, k in ((grow, k_grow), (~grow, k_shrink)):
        pos = np.flatnonzero(side)
        out.extend(pos[np.argsort(-viol[pos], kind="stable")[:k]].tolist())
    return idx[np.sort(np.array(out, dtype=np.int64))]


def line_search_iteration(sp):
    """One line-search iteration: direction from (3) (ridge-regularised),
    step to the first bound, release violators once a full step is taken."""
    y, C = sp.y, sp.C
    F = np.flatnonzero(sp.sets == S1)
    na = nb = nc = nd = 0
    full = True
    if len(F) == 0:
        sp.b = intercept_from_v(sp.r - sp.Kb, y, np.clip(y * sp.beta, 0, C), C)  # [ls-empty]
        sp.method = "bounds"  # [ls-empty]
    else:
        c = sp.s0 - sp.beta.sum()
        d, b, sp.method = solve_system3(sp.K[np.ix_(F, F)], sp.r[F] - sp.Kb[F],  # [ls-solve]
                                        c, ridge=sp.ridge)  # [ls-solve]
        # back on the plane 1'd = c: a nearly singular K_11 + ridge loses
        # the equality to cancellation in d = u - b w (see solve_system3)
        d = d + (c - d.sum()) / len(d) if len(d) > 1 else np.full(1, c)  # [ls-solve]
        old = sp.beta[F].copy()
        yd, yo = y[F] * d, y[F] * old
        with np.errstate(divide="ignore", invalid="ignore"):  # step length to each bound
            t_i = np.where(yd < 0, yo / -yd, np.where(yd > 0, (C - yo) / yd, np.inf))
        t = max(min(1.0, float(t_i.min())), 0.0)  # [ls-solve]
        sp.ties += _rounding.step_tie(t_i, t, yd, C)  # (tie bookkeeping)
        sp.degenerate = t <= 1e-14
        new = old + t * d
        if t < 1.0:
            full = False  # [ls-bound]
            block = t_i <= t * (1 + 1e-12) + 1e-300  # [ls-bound]
            low, high = block & (yd < 0), block & (yd > 0)
            new[low] = 0.0  # [rule-a]
            sp.sets[F[low]] = S2  # [rule-a]
            new[high] = C * y[F][high]  # [rule-b]
            sp.sets[F[high]] = S3  # [rule-b]
            na, nb = int(low.sum()), int(high.sum())
        sp.beta[F] = new
        sp.Kb += sp.K[:, F] @ (new - old)
        sp.b = b
    if full:
        ye = y * sp.errors()
        sp.ties += near(ye, sp.tol) or near(ye, -sp.tol)  # (tie bookkeeping)
        c_mask = (sp.sets == S2) & (ye > sp.tol)
        d_mask = (sp.sets == S3) & (ye < -sp.tol)
        released = np.flatnonzero(c_mask | d_mask)  # [rule-c, rule-d]
        # e > 0: beta_i must grow (S2 with y = +1, S3 with y = -1)
        grow = (y * ye > 0)[released]
        viol = np.where(c_mask, ye, -ye)[released]
        if sp.release == "worst" or sp.degenerate:
            if len(released):
                sp.ties += _rounding.worst_tie(viol) and len(F) > 0  # (tie bookkeeping)
                if len(F) > 0:
                    released = released[[int(np.argmax(viol))]]  # [release-worst]
                else:
                    # S1 empty: b is the middle of the bounded samples'
                    # interval, and a single freed sample cannot move
                    # (sum beta is fixed): the worst of each sign
                    released = _worst_of_each_sign(released, viol, grow, 1, 1)  # [release-pair]
        elif 0 < sp.release_cap < len(released):
            # at most release_cap of them: the worst of each sign, up to
            # half each (a sign with fewer leaves its share to the other),
            # the smaller index on equal violations
            kp = min(int(grow.sum()), max(sp.release_cap // 2,
                                          sp.release_cap - int((~grow).sum())))
            for side, k in ((grow, kp), (~grow, sp.release_cap - kp)):
                v = np.sort(viol[side])[::-1]
                if 0 < k < len(v):  # (tie bookkeeping)
                    sp.ties += near(v[k - 1], v[k], abs(v[0]))
            released = _worst_of_each_sign(released, viol, grow, kp,  # [release-cap]
                                           sp.release_cap - kp)  # [release-cap]
        nc, nd = int(c_mask[released].sum()), int(d_mask[released].sum())  # [rule-c, rule-d]
        sp.sets[released] = S1  # [rule-c, rule-d]
        if sp.feasible():
            sp.best_W = sp.objective()
            sp.save_feasible()
            if nc == 0 and nd == 0:
                sp.done = True  # [done]
    sp.moved = (na, nb, nc, nd)
