"""LIBSVM's generalised SMO dual, readable: ``Solver`` and ``Solver_NU``.

One problem covers every formulation of the SVM family (Chang and Lin,
*LIBSVM: a library for support vector machines*, ACM TIST 2011, section 4;
WSS 2 from Fan, Chen and Lin, JMLR 2005)::

    min_a  f(a) = 1/2 a'Q a + p'a
    s.t.   y'a = Delta            (Delta fixed by a feasible start a0)
           0 <= a_t <= U_t,       t = 0 .. l-1
    Q_ts = y_t y_s K(x_idx(t), x_idx(s)),   y_t in {-1, +1}

over ``l`` variables that index ``n`` base points through ``idx`` (the
kernel is only ever evaluated on the base points):

==============  ===================================  =============================
formulation     l, idx, y                            p, U, start a0
==============  ===================================  =============================
C-SVC           n, identity, the labels              p = -1, U = C_i, a0 = 0
epsilon-SVR     2n, [0..n-1, 0..n-1], [+1.., -1..]   p = [eps - z, eps + z],
                                                     U = C_i twice, a0 = 0
one-class       n, identity, all +1                  p = 0, U = w_i, a0 fills
                                                     nu * sum(w) greedily
nu-SVC          n, identity, the labels              p = 0, U = w_i, a0 fills
                                                     nu * sum(w) / 2 per class
nu-SVR          2n, as epsilon-SVR                   p = [-z, +z], U = C_i twice,
                                                     a0 fills C nu sum(w) / 2
==============  ===================================  =============================

(``C_i = C * weight_i``; ``z`` the regression targets.)  The builders
:func:`c_svc`, :func:`epsilon_svr`, :func:`one_class`, :func:`nu_svc` and
:func:`nu_svr` return these as a :class:`DualProblem`, and
:func:`model` turns a solution into the decision function's coefficients
and intercept, as LIBSVM's ``solve_*`` functions do.

The nu forms (nu-SVC, nu-SVR) carry a second equality constraint, ``e'a =
const``, which the start fixes too: a pair step may then only move two
variables of the *same* sign ``y``.  That is ``Solver_NU``: the same
problem, with the selection, the stopping rule and the intercept taken
within each sign class (``nu=True`` below).

The algorithm, step by step (``Dual.step``):

1. **State.**  svmlab keeps, as :mod:`svmlab.reference.wss2` and the
   compiled SMO do, the kernel expansion ``F_t = sum_s y_s a_s K(x_idx(s),
   x_idx(t))`` (the decision value without intercept) rather than LIBSVM's
   gradient, which follows from it: ``G = Q a + p = y F + p``.  Also kept:
   Platt's running threshold ``b`` (TR eqs. 20-21), the intercept the
   steps so far suggest.  (Keeping the same numbers as the C-SVC solvers
   makes this module take their steps, ties included; see below.)
2. **Selection** (WSS 2).  With ``v_t = -y_t G_t = -(F_t + y_t p_t)`` and
   the index sets::

       I_up  = {t : y_t = +1, a_t < U_t}  u  {t : y_t = -1, a_t > 0}
       I_low = {t : y_t = +1, a_t > 0}    u  {t : y_t = -1, a_t < U_t}

   ``i = argmax_{I_up} v`` (``m`` its value), and among ``t in I_low`` with
   ``v_t < m``, ``j = argmin -b_t^2 / a_t``, ``b_t = m - v_t``, ``a_t =
   Q_ii + Q_tt - 2 y_i y_t Q_it`` (``= K_ii + K_tt - 2 K_it``; ``TAU =
   1e-12`` when it is not positive).  nu forms: ``i`` is chosen within each
   sign class (``i_+`` over ``y = +1``, ``i_-`` over ``y = -1``), ``j`` over
   both, each candidate measured against its own class's ``i``; the pair is
   ``(i_{y_j}, j)``.
3. **Stopping rule.**  Stop when ``m - M <= tol``, ``M = min_{I_low} v``
   (nu forms: when ``m_+ - M_+ <= tol`` and ``m_- - M_- <= tol``).
4. **The pair step** (``i1 = i``, ``i2 = j``): the analytic step of Platt's
   TR eqs. 13-19 in (p, y, bounds) form.  The direction keeps ``y'a`` fixed
   (and ``e'a`` too, for a same-sign pair: the nu forms); ``a2`` moves on the
   segment ``[L, H]`` cut from the box ``[0, U_1] x [0, U_2]``, to the
   minimiser of f along it, ``a2 + y2 (E1 - E2) / eta`` clipped, with the
   errors ``E_t = y_t G_t + b = F_t + b + y_t p_t`` (C-SVC: Platt's ``f(x_t)
   - y_t``) and ``eta = K11 + K22 - 2 K12``, the curvature along the line
   (LIBSVM's quad_coef); ``a1`` follows (``s = y1 y2``).  ``eta <= 0``
   (a kernel that is not positive definite, duplicate points): the end of
   the segment with the lower f.  A variable ending within ``1e-12 U_t`` of
   a bound is put on it (svmlab's rule; LIBSVM clips only).
5. **Update.**  ``F += d1 K[i1] + d2 K[i2]``, ``d_k = y_k (a_k^new -
   a_k)`` (so ``G += Q[:, i1] (a1^new - a1) + Q[:, i2] (a2^new - a2)``), and
   ``b`` as Platt's eqs. 20-21 (the value that zeroes E of a free variable
   of the pair; the mean of the two when both end at a bound).
6. **Intercept** (at the end).  ``rho`` is the mean of ``y_t G_t`` over the
   free variables (``0 < a_t < U_t``), else the midpoint of the interval
   the KKT conditions allow; the decision function is ``sum_t y_t a_t
   K(x_idx(t), x) - rho``.  nu forms: ``r_+`` and ``r_-``, the same rule on
   ``G`` within each class, give ``rho = (r_+ - r_-) / 2`` and ``r = (r_+ +
   r_-) / 2``.

Decisions where LIBSVM leaves a choice or where svmlab differs:

* **Ties** are broken as in :mod:`svmlab._wss2` (the rule's one home),
  :mod:`svmlab.reference.wss2` and the compiled
  ``SMOClassifier(selection="wss2")``: ``i`` is the *largest* maximising
  index (within its class for the nu forms), ``j`` the *largest* minimising
  index, as in LIBSVM (docs/decisions/33a01).  Ties are common, not
  rare: after an interior step the two variables have equal ``v`` in exact
  arithmetic, and which one is the larger after rounding decides the next
  pair.  That is why the state and the step use the numbers of svmlab's
  C-SVC solvers (F, b, E) rather than LIBSVM's (G, a direct update of G):
  on C-SVC problems this module then visits the same pairs as
  :mod:`svmlab.reference.wss2` and the compiled solver
  (tests/test_svm_reference_dual.py proves it, alpha within 1e-10 after
  every step).
* The stopping test is ``m - M <= tol`` (LIBSVM: ``< tol``).
* When the rule does not hold but no ``j`` exists, or the step cannot move
  (a change below ``1e-12`` relative, Platt's step test with
  ``eps = 1e-12``, that does not end on a bound of the segment), the run
  stops with ``stalled = True``, never reported as convergence.  A clipped
  step is taken however small it is: a multiplier left a rounding residue
  inside its bound gets there, as in LIBSVM (decision 30s01).
* ``max_iter`` counts steps as LIBSVM's ``max_iter``: after that many steps
  the run stops whatever the state (``stop_reason = "max_iter"``).
* An intercept with no free variable and one end of the KKT interval
  infinite is the finite end (0 if both are infinite).

Records: one :class:`DualStep` per step (the fields say what they hold).

    prob = epsilon_svr(K, z, C=1.0, epsilon=0.1)
    res = solve(prob, tol=1e-3)           # res.alpha, res.rho, res.records ...
    coef, intercept = model(prob, res)    # f(x) = sum_k coef_k K(x_k, x) + intercept
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from svmlab._wss2 import TAU  # LIBSVM's replacement of a non-positive curvature

__all__ = ["TAU", "BOUND_SNAP", "DualProblem", "DualStep", "DualResult", "Dual", "solve",
           "c_svc", "epsilon_svr", "one_class", "nu_svc", "nu_svr", "model", "objective",
           "explain"]

BOUND_SNAP = 1e-12  # a variable within BOUND_SNAP * U_t of a bound is put on it


class DualProblem(NamedTuple):
    """The generalised dual over ``l`` variables (module docstring).

    ``K`` (n, n) kernel matrix of the base points (None in a problem handed
    to a solver that reads the kernel itself, the compiled
    ``svmlab.smo.DualRun``; the builders take ``K=None``); ``idx`` (l,) the base
    point of each variable; ``y`` (l,) signs +-1; ``p`` (l,) linear term;
    ``U`` (l,) upper bounds (``inf`` allowed: a hard margin); ``a0`` (l,)
    the feasible start; ``nu`` whether the nu selection and intercept apply
    (a second equality constraint ``e'a = e'a0``); ``kind`` the formulation's
    name (``"c_svc"``, ``"epsilon_svr"``, ``"one_class"``, ``"nu_svc"``,
    ``"nu_svr"``, or ``"custom"``)."""

    K: np.ndarray
    idx: np.ndarray
    y: np.ndarray
    p: np.ndarray
    U: np.ndarray
    a0: np.ndarray
    nu: bool = False
    kind: str = "custom"


@dataclass(frozen=True, slots=True)
class DualStep:
    """One pair step of the generalised dual.

    Named as :class:`svmlab.smo._estimator.SMOStep` where the meaning is the
    same (so the SMO geometry widgets draw it: the box ``[0, C1] x [0, C2]``,
    the segment ``[L, H]``):

    ``iteration`` (1-based); ``i1, i2`` the pair (variable indices in
    0..l-1; ``i1`` WSS 2's ``i``, the maximiser of ``v = -y G`` over I_up,
    ``i2`` its ``j``); ``y1, y2`` their signs; ``C1, C2`` their upper bounds
    ``U``; ``p1, p2`` their linear terms; ``a1_old, a2_old`` / ``a1_new,
    a2_new`` the variables before/after; ``L, H`` the segment of ``a2``;
    ``eta = K11 + K22 - 2 K12`` and ``K11, K12, K22``; ``E1, E2`` the errors
    ``y G + b`` before the step; ``b_old, b_new`` the running threshold;
    ``a2_unclipped`` the minimiser of f along the line (nan when ``eta <=
    0``), ``clipped`` whether ``a2_new`` is an end of the segment instead;
    ``delta_objective`` the decrease of ``f`` (>= 0; SMOStep's increase of
    ``W = -f``); ``m`` and ``M`` the extremes of the stopping rule before the
    step (nu forms: those of the pair's sign class), ``gap`` the rule's value
    (``m - M``; nu forms: the larger of the two classes'); ``sign_class`` 0
    for the standard solver, the pair's sign (+1 or -1) for the nu forms."""

    iteration: int
    i1: int
    i2: int
    y1: float
    y2: float
    C1: float
    C2: float
    p1: float
    p2: float
    a1_old: float
    a2_old: float
    a1_new: float
    a2_new: float
    L: float
    H: float
    eta: float
    K11: float
    K12: float
    K22: float
    E1: float
    E2: float
    b_old: float
    b_new: float
    a2_unclipped: float
    clipped: bool
    delta_objective: float
    m: float
    M: float
    gap: float
    sign_class: int


class DualResult(NamedTuple):
    """What :func:`solve` returns: ``alpha`` (l,), ``G`` (l,) its gradient,
    ``rho`` (intercept: the decision function subtracts it), ``r`` (the nu
    forms' second multiplier; nan otherwise), ``objective`` ``f(alpha)``,
    ``n_iter``, ``converged``, ``stop_reason`` (``"converged"``,
    ``"max_iter"``, ``"stalled"``, ``"callback"``) and the ``records``."""

    alpha: np.ndarray
    G: np.ndarray
    rho: float
    r: float
    objective: float
    n_iter: int
    converged: bool
    stop_reason: str
    records: list


class Dual:
    """The state of ``Solver`` / ``Solver_NU`` on a :class:`DualProblem`;
    ``step()`` takes the next pair step and returns its :class:`DualStep`
    (None once the stopping rule holds, or the run stalled).  ``kdiag``: the
    kernel's diagonal over the base points if not ``diag(K)`` (a solver's
    own formula, e.g. exactly 1 for rbf)."""

    def __init__(self, prob, *, tol=1e-3, kdiag=None):
        K = np.asarray(prob.K, dtype=np.float64)
        self.idx = np.asarray(prob.idx, dtype=np.int64)
        self.y = np.asarray(prob.y, dtype=np.float64)
        self.p = np.asarray(prob.p, dtype=np.float64)
        self.U = np.asarray(prob.U, dtype=np.float64)
        a0 = np.asarray(prob.a0, dtype=np.float64)
        l = len(self.y)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"K must be a square kernel matrix, got shape {K.shape}")
        if not (self.idx.shape == self.p.shape == self.U.shape == a0.shape == (l,)):
            raise ValueError("idx, y, p, U and a0 must all have the same length l")
        if l < 1 or self.idx.min() < 0 or self.idx.max() >= K.shape[0]:
            raise ValueError("idx must index rows of K")
        if not np.all(np.isin(self.y, (-1.0, 1.0))):
            raise ValueError("y must hold signs -1 or +1")
        if np.any(self.U <= 0) or np.any(np.isnan(self.U)):
            raise ValueError("every upper bound U_t must be positive")
        if np.any(a0 < 0) or np.any(a0 > self.U):
            raise ValueError("the start a0 must lie in the box 0 <= a0 <= U")
        if not (np.all(np.isfinite(K)) and np.all(np.isfinite(self.p))):
            raise ValueError("K or p contains NaN or inf")
        if tol <= 0:
            raise ValueError(f"tol must be positive, got {tol}")
        self.K = K
        self.nu = bool(prob.nu)
        self.tol = float(tol)
        kd = np.diag(K) if kdiag is None else np.asarray(kdiag, dtype=np.float64)
        self.QD = kd[self.idx].copy()  # Q_tt = K(x_idx(t), x_idx(t))
        self.alpha = a0.copy()
        # 1. the kernel expansion F of the start (G = y F + p) and b = 0
        self.F = np.zeros(l)  # [state]
        for t in np.flatnonzero(self.alpha > 0):
            self.F += (self.y[t] * self.alpha[t]) * self.row(t)  # [state]
        self.b = 0.0  # [state]
        self.n_iter = 0
        self.converged = False
        self.stalled = False
        self.gap = np.inf

    def row(self, t):
        """Row ``idx(t)`` of K over the variables: ``K(x_idx(t), x_idx)``
        (column t of Q is ``y * y_t * row(t)``)."""
        return self.K[self.idx[t], self.idx]

    @property
    def G(self):
        """LIBSVM's gradient ``G = Q a + p = y F + p``."""
        return self.y * self.F + self.p

    def in_up(self):
        """I_up: the variables whose ``y_t a_t`` may increase."""
        return np.where(self.y > 0, self.alpha < self.U, self.alpha > 0.0)

    def in_low(self):
        """I_low: the variables whose ``y_t a_t`` may decrease."""
        return np.where(self.y > 0, self.alpha > 0.0, self.alpha < self.U)

    def step(self):
        """The next step's record; None at the end (``for r in iter(run.step, None)``)."""
        if self.converged or self.stalled:
            return None
        pair = self.select()
        if pair is None:
            return None
        return self.take_step(*pair)

    def select(self):
        """WSS 2: ``(i, j, m, M)``, or None (converged, or stalled: no j)."""
        v = -(self.F + self.y * self.p)  # v_t = -y_t G_t  # [select-i]
        up, low = self.in_up(), self.in_low()  # [select-i]
        classes = (1.0, -1.0) if self.nu else (None,)  # [nu-classes]
        best_i, m_of, M_of, gaps = {}, {}, {}, []
        for c in classes:
            in_c = np.ones_like(up) if c is None else (self.y == c)  # [nu-classes]
            m = np.max(v, where=up & in_c, initial=-np.inf)  # [select-i]
            M = np.min(v, where=low & in_c, initial=np.inf)  # [select-i]
            m_of[c], M_of[c] = m, M
            gaps.append(m - M)
            if np.isfinite(m):
                best_i[c] = int(np.flatnonzero(up & in_c & (v == m))[-1])  # largest  # [select-i]
        self.gap = float(max(gaps))
        # 3. the stopping rule
        if self.gap <= self.tol:
            self.converged = True  # [stop]
            return None  # [stop]
        # j: WSS 2's second-order choice over I_low
        best, j = np.inf, -1  # [select-j]
        for c, i in best_i.items():
            in_c = np.ones_like(low) if c is None else (self.y == c)
            cand = np.flatnonzero(low & in_c & (v < m_of[c]))  # [select-j]
            if len(cand) == 0:
                continue
            b = m_of[c] - v[cand]  # b_t > 0  # [select-j]
            a = self.QD[i] + self.QD[cand] - 2.0 * self.row(i)[cand]  # [select-j]
            a[a <= 0] = TAU  # [tau]
            gain = -b * b / a  # [select-j]
            k = np.flatnonzero(gain == gain.min())[-1]  # the largest index  # [select-j]
            # (nu forms: the two classes' best compared, ties to the larger index)
            if gain[k] < best or (gain[k] == best and cand[k] > j):
                best, j = gain[k], int(cand[k])  # [select-j]
        if j < 0:
            self.stalled = True  # [stalled]
            return None  # [stalled]
        c = None if not self.nu else self.y[j]
        return best_i[c], j, m_of[c], M_of[c]

    def error(self, t):
        """``E_t = y_t G_t + b = F_t + b + y_t p_t`` (C-SVC: ``f(x_t) - y_t``)."""
        return (self.F[t] + self.b) + self.y[t] * self.p[t]

    def take_step(self, i1, i2, m, M):
        """4.-5.: the analytic step on ``(a_i1, a_i2)``; None if it cannot move."""
        y1, y2 = float(self.y[i1]), float(self.y[i2])
        C1, C2 = float(self.U[i1]), float(self.U[i2])
        a1, a2 = float(self.alpha[i1]), float(self.alpha[i2])
        E1, E2, b = float(self.error(i1)), float(self.error(i2)), self.b
        s = y1 * y2
        if y1 != y2:  # y1 a1 + y2 a2 fixed: a1 - a2 fixed  # [segment]
            L, H = max(0.0, a2 - a1), min(C2, C1 + a2 - a1)  # [segment]
        else:  # a1 + a2 fixed  # [segment]
            L, H = max(0.0, a2 + a1 - C1), min(C2, a2 + a1)  # [segment]
        k11, k22 = float(self.QD[i1]), float(self.QD[i2])
        k12 = float(self.K[self.idx[i2], self.idx[i1]])  # read from row i2
        eta = k11 + k22 - 2.0 * k12  # the curvature along the line  # [eta]
        if L >= H:
            self.stalled = True  # [stalled]
            return None  # [stalled]
        if eta > 0:
            a2_unc = a2 + y2 * (E1 - E2) / eta  # the minimiser along the line  # [step]
            a2_new = min(max(a2_unc, L), H)  # clipped to the segment  # [clip]
        else:  # f is concave or linear on the line: the better end  # [eta-nonpositive]
            a2_unc = np.nan
            fL = _along(L, y1, y2, a1, a2, E1, E2, b, k11, k12, k22)  # [eta-nonpositive]
            fH = _along(H, y1, y2, a1, a2, E1, E2, b, k11, k12, k22)  # [eta-nonpositive]
            a2_new = L if fL < fH - 1e-12 else H if fH < fL - 1e-12 else a2  # [eta-nonpositive]
        # a change below 1e-12 relative is no step, unless the clipped end
        # puts a multiplier onto its bound: a residue left within rounding of
        # a bound must still be able to reach it (else that pair stays the
        # most violating one and the run stalls short of the optimum)
        onto_bound = eta > 0 and not L <= a2_unc <= H and a2_new != a2  # [stalled]
        if abs(a2_new - a2) < 1e-12 * (a2_new + a2 + 1e-12) and not onto_bound:
            self.stalled = True  # [stalled]
            return None  # [stalled]
        a1_new = a1 + s * (a2 - a2_new)  # [step]
        a1_new, a2_new = snap(a1_new, C1), snap(a2_new, C2)  # [snap]
        # 5. update F (and so G) and the threshold b (Platt's eqs. 20-21)
        d1, d2 = y1 * (a1_new - a1), y2 * (a2_new - a2)  # [update]
        self.F += d1 * self.row(i1) + d2 * self.row(i2)  # [update]
        b1 = b - E1 - d1 * k11 - d2 * k12  # zeroes E1  # [threshold]
        b2 = b - E2 - d1 * k12 - d2 * k22  # zeroes E2  # [threshold]
        self.b = b1 if 0.0 < a1_new < C1 else b2 if 0.0 < a2_new < C2 else 0.5 * (b1 + b2)
        self.alpha[i1], self.alpha[i2] = a1_new, a2_new  # [update]
        self.n_iter += 1
        p1, p2 = float(self.p[i1]), float(self.p[i2])
        return DualStep(
            iteration=self.n_iter, i1=int(i1), i2=int(i2), y1=y1, y2=y2, C1=C1, C2=C2, p1=p1,
            p2=p2, a1_old=a1, a2_old=a2, a1_new=float(a1_new), a2_new=float(a2_new), L=L, H=H,
            eta=eta, K11=k11, K12=k12, K22=k22, E1=E1, E2=E2, b_old=b, b_new=float(self.b),
            a2_unclipped=float(a2_unc), clipped=bool(eta <= 0 or not L <= a2_unc <= H),
            delta_objective=-_along(a2_new, y1, y2, a1, a2, E1, E2, b, k11, k12, k22),
            m=float(m), M=float(M), gap=self.gap, sign_class=0 if not self.nu else int(y1))

    def rho(self):
        """6.: ``(rho, r)``; ``r`` is nan for the standard solver."""
        G = self.G
        if not self.nu:
            return _interval_mid(self.y * G, self.alpha, self.U, self.y), np.nan
        r = {}
        for c in (1.0, -1.0):
            s = self.y == c
            # within one class y_t G_t is c G_t, and the interval is on G
            r[c] = c * _interval_mid(c * G[s], self.alpha[s], self.U[s], self.y[s])
        return 0.5 * (r[1.0] - r[-1.0]), 0.5 * (r[1.0] + r[-1.0])

    def objective(self):
        """``f(a) = 1/2 a'(G + p)``, from the kept expansion."""
        return float(0.5 * np.dot(self.alpha, self.G + self.p))


def _along(a2_new, y1, y2, a1, a2, E1, E2, b, k11, k12, k22):
    """The change of f when a2 moves to ``a2_new`` along the line (a1 with
    it): ``G'd + 1/2 d'Qd`` with ``G_k = y_k (E_k - b)``."""
    s, d2 = y1 * y2, a2_new - a2
    d1 = -s * d2
    g1, g2 = y1 * (E1 - b), y2 * (E2 - b)
    quad = d1 * d1 * k11 + d2 * d2 * k22 + 2.0 * s * d1 * d2 * k12
    return g1 * d1 + g2 * d2 + 0.5 * quad


def _interval_mid(yG, a, U, y):
    """LIBSVM's rho: the mean of ``y_t G_t`` over the free variables; else
    the midpoint of ``[lb, ub]``, the values the KKT conditions leave for it
    (a variable at a bound caps rho from one side); one finite end alone is
    that end, none is 0."""
    free = (a > 0.0) & (a < U)
    if free.any():
        return float(np.mean(yG[free]))
    at_up = a >= U
    # at the upper bound: y = +1 gives rho >= yG, y = -1 gives rho <= yG;
    # at zero: y = +1 gives rho <= yG, y = -1 gives rho >= yG
    lower = (at_up & (y > 0)) | (~at_up & (y < 0))
    lb = np.max(yG, where=lower, initial=-np.inf)
    ub = np.min(yG, where=~lower, initial=np.inf)
    if np.isfinite(lb) and np.isfinite(ub):
        return float(0.5 * (lb + ub))
    if np.isfinite(lb) or np.isfinite(ub):
        return float(lb if np.isfinite(lb) else ub)
    return 0.0


def snap(a, U):
    """A value within ``BOUND_SNAP * U`` of 0 or of U goes onto it (a finite
    U; with ``U = inf`` only the rounding residue below 0 is removed)."""
    if np.isfinite(U):
        band = BOUND_SNAP * U
        return 0.0 if a < band else U if a > U - band else a
    return max(a, 0.0)


def solve(prob, *, tol=1e-3, max_iter=-1, callback=None, record=True, kdiag=None):
    """Run the solver on ``prob`` to the stopping rule, ``max_iter`` steps
    (-1: no limit) or a callback returning False; returns :class:`DualResult`.
    ``kdiag``: the kernel's diagonal over the base points if not ``diag(K)``
    (a solver's own formula, e.g. exactly 1 for rbf)."""
    run = Dual(prob, tol=tol, kdiag=kdiag)
    records = []
    reason = None
    while max_iter < 0 or run.n_iter < max_iter:
        rec = run.step()
        if rec is None:
            break
        if record:
            records.append(rec)
        if callback is not None and callback(rec) is False:
            reason = "callback"
            break
    if reason is None:
        reason = ("converged" if run.converged else "stalled" if run.stalled else "max_iter")
    rho, r = run.rho()
    return DualResult(run.alpha.copy(), run.G.copy(), rho, r, run.objective(), run.n_iter,
                      run.converged, reason, records)


# ---------------------------------------------------------------- the formulations

def _weights(n, weight):
    """n positive weights (``inf`` allowed: a hard margin for that example)."""
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
    if w.shape != (n,) or np.any(w <= 0) or np.any(np.isnan(w)):
        raise ValueError("weight must hold n positive values (remove zero-weight rows "
                         "before building the problem)")
    return w


def _fill(U, total):
    """The start of the nu forms and one-class: variables filled to their
    bound in order until their sum is ``total`` (LIBSVM's greedy start)."""
    a = np.zeros_like(U)
    left = float(total)
    for t in range(len(U)):
        if left <= 0:
            break
        a[t] = min(U[t], left)
        left -= a[t]
    return a


def c_svc(K, y, C, weight=None):
    """C-SVC: ``min 1/2 a'Qa - e'a``, ``y'a = 0``, ``0 <= a_i <= C_i =
    C weight_i`` (``y`` in {-1, +1})."""
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    U = float(C) * _weights(n, weight)
    return DualProblem(K, np.arange(n), y, -np.ones(n), U, np.zeros(n), False, "c_svc")


def epsilon_svr(K, z, C, epsilon, weight=None):
    """epsilon-SVR with targets ``z``: variables ``a`` (the first n, sign
    +1) and ``a*`` (the last n, sign -1), ``p = [eps - z, eps + z]``,
    bounds ``C_i`` for both."""
    z = np.asarray(z, dtype=np.float64)
    n = len(z)
    U = float(C) * _weights(n, weight)
    return DualProblem(K, np.concatenate((np.arange(n), np.arange(n))),
                       np.concatenate((np.ones(n), -np.ones(n))),
                       np.concatenate((epsilon - z, epsilon + z)), np.concatenate((U, U)),
                       np.zeros(2 * n), False, "epsilon_svr")


def one_class(K, nu, weight=None):
    """One-class SVM (Schoelkopf et al.): ``min 1/2 a'Ka``, ``e'a = nu
    sum(w)``, ``0 <= a_i <= w_i`` (LIBSVM's scaling: bounds 1 without
    weights, so ``sum a = nu l``)."""
    n = K.shape[0] if K is not None else len(weight)
    U = _weights(n, weight)
    return DualProblem(K, np.arange(n), np.ones(n), np.zeros(n), U, _fill(U, nu * U.sum()),
                       False, "one_class")


def nu_svc(K, y, nu, weight=None):
    """nu-SVC, LIBSVM's scaled form: ``min 1/2 a'Qa``, ``y'a = 0``, ``e'a =
    nu sum(w)``, ``0 <= a_i <= w_i``; :func:`model` rescales by ``1/r``."""
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    U = _weights(n, weight)
    half = 0.5 * nu * U.sum()
    a0 = np.zeros(n)
    for c in (1.0, -1.0):
        s = np.flatnonzero(y == c)
        a0[s] = _fill(U[s], half)
    return DualProblem(K, np.arange(n), y, np.zeros(n), U, a0, True, "nu_svc")


def nu_svr(K, z, C, nu, weight=None):
    """nu-SVR: ``p = [-z, +z]``, bounds ``C_i`` for both halves, ``e'a = C
    nu sum(w)``; the start puts the same value on ``a_i`` and ``a*_i``."""
    z = np.asarray(z, dtype=np.float64)
    n = len(z)
    U = float(C) * _weights(n, weight)
    half = _fill(U, 0.5 * nu * U.sum())
    return DualProblem(K, np.concatenate((np.arange(n), np.arange(n))),
                       np.concatenate((np.ones(n), -np.ones(n))), np.concatenate((-z, z)),
                       np.concatenate((U, U)), np.concatenate((half, half)), True, "nu_svr")


def model(prob, res, n=None):
    """``(coef, intercept)`` of the decision function ``f(x) = sum_k coef_k
    K(x_k, x) + intercept`` over the n base points, as LIBSVM builds it from
    a solution: ``coef`` sums ``y_t a_t`` over the variables of each base
    point (SVR: ``a_k - a*_k``), ``intercept = -rho``; nu-SVC divides both by
    ``r`` (its solution is scaled: ``C = 1 / r``)."""
    n = prob.K.shape[0] if n is None else n
    coef = np.zeros(n)
    np.add.at(coef, np.asarray(prob.idx), np.asarray(prob.y) * res.alpha)
    rho = res.rho
    if prob.kind == "nu_svc":
        coef, rho = coef / res.r, rho / res.r
    return coef, -rho


def objective(prob, alpha):
    """``f(a) = 1/2 a'Qa + p'a`` computed directly from ``K`` (for checks)."""
    y, idx = np.asarray(prob.y, float), np.asarray(prob.idx)
    ya = y * alpha
    Kl = prob.K[np.ix_(idx, idx)]
    return float(0.5 * ya @ Kl @ ya + np.dot(prob.p, alpha))


def explain(record):
    """``[(function, tags)]`` of a recorded step, for
    :func:`svmlab.reference._source.source_html`."""
    select = {"select-i", "select-j"} | ({"nu-classes"} if record.sign_class else set())
    step = {"segment", "eta", "snap", "update", "threshold"}
    if record.eta > 0:
        step |= {"step", "clip"}
    else:
        step |= {"eta-nonpositive", "step"}
    return [(Dual.select, select), (Dual.take_step, step)]
