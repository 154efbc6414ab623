"""LIBSVM's working-set selection WSS 2, readable (Fan, Chen and Lin, JMLR 2005).

Same problem and signs as :mod:`svmlab.reference.smo` (TR eq. 11 of Platt,
``f(x_i) = f0_i + b``, ``f0_i = sum_j alpha_j y_j K_ij``).  In LIBSVM's
notation the dual is minimised, its gradient is ``grad_t = y_t f0_t - 1``
and ``-y_t grad_t = y_t - f0_t``.  With the paper's index sets::

    I_up  = {t : alpha_t < C_t, y_t = +1  or  alpha_t > 0, y_t = -1}
    I_low = {t : alpha_t < C_t, y_t = -1  or  alpha_t > 0, y_t = +1}

(``C_t = C`` for all t, or one bound per example with weights, as LIBSVM)

each step picks (WSS 2, the second-order choice of j)::

    i = argmax_{t in I_up} -y_t grad_t                          (m = its value)
    j = argmin_{t in I_low, -y_t grad_t < m} -b_it^2 / a_it,
        b_it = m + y_t grad_t > 0,   a_it = K_ii + K_tt - 2 K_it  (tau = 1e-12 if <= 0)

and stops when ``m - M <= tol``, ``M = min_{t in I_low} -y_t grad_t``.  The
pair is moved by the same analytic step as Platt's (``PlattSMO.take_step``,
TR eqs. 13-21, with ``i1 = i``, ``i2 = j``); Platt's running threshold is
kept for the records' ``E1, E2, b_old, b_new``, and the final intercept is
LIBSVM's: the mean of ``y_t - f0_t`` over the free SVs, else the midpoint of
the interval the KKT conditions allow.

It takes the same steps as ``SMOClassifier(selection="wss2",
shrinking=False, cache_size=<every row fits>)`` (the compiled WSS2 loop
:func:`svmlab.smo._dual_core.dual_run` on the C-SVC problem, whose rule's
pieces live in :mod:`svmlab._wss2`); ties are broken as there and as in
LIBSVM: ``i`` is the *largest* maximising index (LIBSVM's ``>=``), ``j`` the
*largest* minimising index (LIBSVM's ``<=``).  Steps take every improvement (the eps of Platt's step test is
1e-12, except for a clipped step that ends on a bound of its segment:
always taken).  If no ``j`` exists or the step cannot move, the run stops
with ``stalled = True`` and ``converged = False``, as the compiled solver
does.  For every kernel, the linear one included, both sides keep ``f0``
from kernel rows, so they match bit for bit given the same ``K`` and
``kdiag``.

    res = wss2(K, y, C=1.0)          # res.alpha, res.b (LIBSVM's), res.records
    explain(res.records[0], C=1.0)   # [(WSS2.select, {...}), (PlattSMO.take_step, {...})]
"""

from __future__ import annotations

import numpy as np

from svmlab._wss2 import TAU
from svmlab.reference._smo_support import drive, take_step_tags
from svmlab.reference.smo import PlattSMO

__all__ = ["TAU", "WSS2", "explain", "gain", "select_j", "wss2"]


def gain(m, v_t, Kii, Ktt, Kit):
    """WSS 2's score of the partners t of i (smaller is better): ``-b_it^2 /
    a_it`` with ``b_it = m - v_t`` and the curvature ``a_it = K_ii + K_tt -
    2 K_it``, replaced by ``TAU`` where it is not positive.  NumPy arrays
    (or numbers).  The readable twin of :func:`svmlab._wss2.gain`, which every
    compiled loop calls; ``tests/test_wss2_rule.py`` checks them equal."""
    b_it = m - v_t  # [gain]
    a_it = np.asarray(Kii + Ktt - 2.0 * Kit, dtype=float)  # [gain]
    a_it = np.where(a_it <= 0.0, TAU, a_it)  # [tau]
    return -b_it * b_it / a_it  # [gain]


def select_j(m, v, low, Kii, kdiag, Ki):
    """WSS 2's ``j`` for ``i`` over whole arrays: the last candidate t (in
    I_low, ``low``, with ``v_t < m``) with the smallest :func:`gain`, or -1
    when there is none.  Readable twin of :func:`svmlab._wss2.select_j`."""
    cand = np.flatnonzero(low & (v < m))
    if len(cand) == 0:
        return -1
    g = gain(m, v[cand], Kii, kdiag[cand], Ki[cand])
    return int(cand[np.flatnonzero(g == g.min())[-1]])


class WSS2(PlattSMO):
    """WSS 2 state on ``K``; ``step()`` takes the next step and returns its
    :class:`svmlab.smo._estimator.SMOStep` (None once ``m - M <= tol`` or stalled)."""

    def __init__(self, K, y, C, *, tol=1e-3, kdiag=None):
        super().__init__(K, y, C, tol=tol, eps=1e-12, kdiag=kdiag)
        self.examine_all = False  # (a field of Platt's records)
        self.stalled = False

    def main_loop(self):
        """Select a pair, step, until ``m - M <= tol``; yields every step's record."""
        while True:
            pair = self.select()
            if pair is None:
                return
            record = self.take_step(*pair, "wss2")
            if record is None and self._clipped_onto_bound(*pair):
                # Platt's step test rejected a change below 1e-12 relative
                # that ends on a bound of the segment: taken (decision 30s01)
                self.eps = 0.0
                try:
                    record = self.take_step(*pair, "wss2")
                finally:
                    self.eps = 1e-12
            if record is None:
                self.stalled = True
                return
            yield record

    def _clipped_onto_bound(self, i1, i2):
        """Whether the step on ``(i1, i2)`` would be clipped to an end of
        its segment that differs from ``alpha[i2]`` (the unconstrained
        minimiser outside ``[L, H]``, with positive curvature)."""
        y1, y2 = self.y[i1], self.y[i2]
        a1, a2 = self.alpha[i1], self.alpha[i2]
        C1, C2 = self.Cv[i1], self.Cv[i2]
        if y1 != y2:
            L, H = max(0.0, a2 - a1), min(C2, C1 + a2 - a1)
        else:
            L, H = max(0.0, a2 + a1 - C1), min(C2, a2 + a1)
        eta = float(self.kdiag[i1]) + float(self.kdiag[i2]) - 2.0 * float(self.K[i2, i1])
        if not (eta > 0 and L < H):
            return False
        E1, E2 = float(self.error(i1)), float(self.error(i2))
        a2_unc = a2 + y2 * (E1 - E2) / eta
        end = L if a2_unc < L else H if a2_unc > H else None
        return end is not None and end != a2

    def select(self):
        """The pair ``(i, j)`` of WSS 2, or None when ``m - M <= tol``."""
        y, a, C = self.y, self.alpha, self.Cv  # C_t, per example
        minus_y_grad = y - self.f0  # -y_t grad_t  # [select-i]
        up = np.where(y > 0, a < C, a > 0.0)  # I_up  # [select-i]
        low = np.where(y > 0, a > 0.0, a < C)  # I_low  # [select-i]
        m = np.max(minus_y_grad, where=up, initial=-np.inf)  # [select-i]
        M = np.min(minus_y_grad, where=low, initial=np.inf)  # [select-i]
        if m - M <= self.tol:
            self.converged = True  # [stop]
            return None  # [stop]
        i = int(np.flatnonzero(up & (minus_y_grad == m))[-1])  # the largest index  # [select-i]
        K_i = self.row(i)  # [select-j]
        cand = np.flatnonzero(low & (minus_y_grad < m))  # [select-j]
        if len(cand) == 0:
            self.stalled = True  # [stalled]
            return None  # [stalled]
        g = gain(m, minus_y_grad[cand], self.kdiag[i], self.kdiag[cand], K_i[cand])  # [select-j]
        j = int(cand[np.flatnonzero(g == g.min())[-1]])  # the largest index  # [select-j]
        return i, j

    def intercept(self):
        """LIBSVM's b: mean of ``y_t - f0_t`` over free SVs, else the midpoint."""
        y, a, C = self.y, self.alpha, self.Cv
        v = y - self.f0
        free = (a > 0.0) & (a < C)
        if free.any():
            return float(np.mean(v[free]))
        lower = ((y > 0) & (a <= 0.0)) | ((y < 0) & (a >= C))  # b >= v_t there
        lo = np.max(v, where=lower, initial=-np.inf)
        hi = np.min(v, where=~lower, initial=np.inf)
        if np.isfinite(lo) and np.isfinite(hi):
            return float(0.5 * (lo + hi))
        return float(lo if np.isfinite(lo) else hi)


def wss2(K, y, C, *, tol=1e-3, max_iter=-1, callback=None, kdiag=None):
    """Run WSS 2 on the kernel matrix ``K``; returns
    :class:`svmlab.reference.smo.SMOResult` with LIBSVM's intercept as ``b``."""
    run = WSS2(K, y, C, tol=tol, kdiag=kdiag)
    return drive(run, max_iter, callback, intercept=run.intercept)


def explain(record, C=None):
    """``[(function, tags)]`` of a recorded WSS 2 step (see
    :func:`svmlab.reference.smo.explain`)."""
    if record.heuristic != "wss2":
        raise ValueError(f"not a WSS 2 step: heuristic {record.heuristic!r}")
    score = {"gain"} | ({"tau"} if record.eta <= 0 else set())
    return [(WSS2.select, {"select-i", "select-j"}), (gain, score),
            (PlattSMO.take_step, take_step_tags(record, C))]
