"""Osuna / SVMlight decomposition, readable: the twin of
:class:`svmlab.DecompositionClassifier` with its default engine ``"qp"``
and ``shrinking=False``, on a dense kernel matrix ``K`` (y in {-1, +1}).

The dual (Osuna, Freund & Girosi 1997; Joachims 1999)::

    max  sum_i alpha_i - 1/2 sum_ij y_i y_j K_ij alpha_i alpha_j,
    0 <= alpha_i <= C,  sum_i y_i alpha_i = 0.

Each outer step (:func:`outer_step`):

1. ``v_i = y_i - (K beta)_i`` with ``beta = y alpha``; LIBSVM's gradient is
   ``-y_i v_i``.  Stop when the maximal violation
   ``max_{I_up} v - min_{I_low} v <= tol``.
2. Working set B (:func:`steepest_feasible`, Joachims 1999 sec. 3): the q/2
   largest-v samples of I_up and the smallest-v samples of I_low, then
   more of I_up if there is room; only samples on a violating direction.
   Ties: a stable sort, so among equal ``v`` the smaller index comes first.
   When that set is the one used two steps before, up to one sample
   exchanged, but not the previous one (the selection alternates between
   two sets: a zig-zag), the union of it and the previous set is used
   instead (:func:`break_cycle`; for q > 2).
3. The sub-problem over B with the rest fixed (``r = y_B - K_BN beta_N``),
   solved by the classical primal active-set method (Nocedal & Wright,
   Algorithm 16.3) that the ``"qp"`` engine runs:
   :func:`svmlab.reference.subproblem.line_search_iteration` with
   ``release="worst"``: solve (3) on the free set, step to the first bound,
   free the single worst violator (smallest index on ties), until no
   violation exceeds ``tol / 2``.
4. Clip, snap values within ``1e-12 C`` of a bound onto it, update G.

Stopping: as svmlab, when the maximal violation is ``<= tol``, when fewer
than two samples can be selected, or when the sub-problem's solution does
not move (svmlab then stops with a "stalled" warning; here ``fit`` just
returns).  ``max_iter=-1`` has no cap here (svmlab applies LIBSVM's).

Why iterates are compared within a tolerance, not bit for bit: the fast
engine keeps a Cholesky factor of ``K_FF + 1e-12 I`` that it updates (Givens
rotations) when the free set changes; here it is factorised afresh.  Both
solve the same systems, so the decisions (which bound blocks, which
violator is freed) are the same, and the values differ by rounding
amplified by the condition number of ``K_FF + ridge`` (up to 1e12 when
points repeat).  The tests compare working sets and inner iteration counts
exactly, iterates to ``max(1e-8 max(1, C), 100 eps cond(K_BB + ridge) max(1, C))``,
and allow a step to differ only where :mod:`svmlab.reference._rounding`
flags a decision that this rounding can turn (``ReferenceFit.ties`` /
``inner_ties``).
"""

from __future__ import annotations

import numpy as np

from svmlab.decomposition.estimators import DecompositionRecord
from svmlab.reference import _rounding
from svmlab.reference._rounding import ReferenceFit, near
from svmlab.reference.subproblem import Subproblem, intercept_from_v, line_search_iteration, up_low

__all__ = ["fit", "explain", "steepest_feasible", "break_cycle", "solve_qp", "outer_step",
           "run_outer"]


def steepest_feasible(v, y, alpha, C, q, ties=None):
    """SVMlight's working set ``(B, gap)``, ``|B| <= q``, B sorted.
    ``ties``: a list noted when a choice is within rounding of a tie."""
    up, low = up_low(y, alpha, C)
    if not up.any() or not low.any():
        return np.zeros(0, np.int64), 0.0  # [ws-empty]
    v_up = np.where(up, v, -np.inf)  # only I_up may move with y d_i = +1
    v_low = np.where(low, v, np.inf)  # only I_low may move with y d_i = -1
    gap = float(v_up.max() - v_low.min())  # m(alpha) - M(alpha)
    best_up = np.argsort(-v_up, kind="stable")[:min(q, int(up.sum()))]  # [ws-sort]
    best_low = np.argsort(v_low, kind="stable")[:min(q, int(low.sum()))]  # [ws-sort]
    # keep only samples on a violating direction
    ups = [int(k) for k in best_up if v_up[k] > v_low.min()]
    lows = [int(k) for k in best_low if v_low[k] < v_up.max()]
    top_up = np.sort(v_up[up])[::-1][:q + 1]
    top_low = np.sort(v_low[low])[:q + 1]
    if ties is not None and (near(top_up[1:], top_up[:-1]) or near(top_low[1:], top_low[:-1])
                             or near(top_up, v_low.min()) or near(top_low, v_up.max())):
        ties.append("two candidates for the working set within rounding")
    chosen = []
    for source, limit in ((ups, max(q // 2, 1)), (lows, q), (ups, q)):  # [ws-take]
        for k in source:
            if len(chosen) >= limit:
                break
            if k not in chosen:
                chosen.append(k)
    return np.array(sorted(chosen), dtype=np.int64), gap


def break_cycle(B, used, slack=1):
    """The working set for selection ``B`` after the sets ``used`` so far:
    the union of ``B`` and the last one when ``B`` returns to the one
    before the last but not to the last (two sets alternating), else
    ``B``.  "Returns": at most ``slack`` samples of either set missing from
    the other (an inexact engine makes the selection come back with a
    sample exchanged)."""

    def close(S, T):
        return len(S - T) <= slack and len(T - S) <= slack

    if len(used) >= 2:
        chosen, before, last = set(B), set(used[-2]), set(used[-1])
        if close(chosen, before) and not close(chosen, last):  # [ws-cycle]
            return np.array(sorted(chosen | last), dtype=np.int64)
    return B


def solve_qp(K_BB, y_B, alpha_B, r, C, tol):
    """The sub-problem by the active-set QP; returns ``(alpha_B, b,
    iterations, ties)`` (ties: see :class:`~svmlab.reference._rounding.ReferenceFit`)."""
    beta = y_B * alpha_B
    sp = Subproblem(K_BB, y_B, beta, r, C, tol, s0=float(beta.sum()),
                    release="worst", mode="line")
    while not sp.done:
        sp.iterate(line_search_iteration)  # [qp-iterate]
    return np.clip(y_B * sp.beta, 0.0, C), float(sp.b), sp.n_iter, sp.ties


def outer_step(K, y, C, tol, state, select):
    """One outer step on ``state = {"alpha", "G", "b"}`` (updated in place);
    the record's fields, or None when optimal (or when the sub-problem
    could not move).  ``select(v, y, alpha, C, notes)`` picks the working set."""
    alpha, G = state["alpha"], state["G"]
    state["ties"] = state["inner_ties"] = 0  # (tie bookkeeping)
    v = y - G  # v_i = y_i - (K beta)_i
    notes = []
    B, gap = select(v, y, alpha, C, notes)  # [select]
    state["ties"] = len(notes) + near(gap, tol)  # (tie bookkeeping)
    if len(B) < 2 or gap <= tol:
        return None  # [optimal]
    K_BB = K[np.ix_(B, B)]
    r = v[B] + K_BB @ (y[B] * alpha[B])  # = y_B - K_BN beta_N
    a_new, b, n_inner, inner_ties = solve_qp(K_BB, y[B], alpha[B], r, C, 0.5 * tol)  # [solve]
    a_new = np.clip(a_new, 0.0, C)
    a_new[a_new < 1e-12 * C] = 0.0  # [snap]
    a_new[a_new > C - 1e-12 * C] = C  # [snap]
    d = y[B] * (a_new - alpha[B])
    state["inner_ties"] = inner_ties  # (tie bookkeeping)
    if not np.any(d != 0):
        return None  # [no-progress]
    for k in np.flatnonzero(d):  # G += d_k K[:, B_k], one row at a time
        G += d[k] * K[:, B[k]]  # [update-G]
    alpha[B] = a_new
    state["b"] = b
    return dict(working_set=B.copy(), subproblem_size=len(B), engine="qp",
                engine_iterations=int(n_inner),
                dual_objective=float(alpha.sum() - 0.5 * np.dot(alpha * y, G)),
                max_violation=gap, n_active=len(y), alpha_B=a_new.copy(), b=float(b))


def run_outer(K, y, C, tol, select, max_iter=-1):
    """The outer loop shared with :mod:`svmlab.reference.chunking`: a
    :class:`~svmlab.reference._rounding.ReferenceFit`, b by LIBSVM's rule at the end."""
    K, y = np.asarray(K, float), np.asarray(y, float)
    n = len(y)
    if K.shape != (n, n) or not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("K must be (n, n) and y in {-1, +1} of length n")
    if not C > 0 or not tol > 0:
        raise ValueError(f"C and tol must be > 0, got C={C}, tol={tol}")
    _rounding.reset()
    state = {"alpha": np.zeros(n), "G": np.zeros(n), "b": 0.0}
    records, ties, inner_ties = [], [], []
    while max_iter < 0 or len(records) < max_iter:
        fields = outer_step(K, y, C, tol, state, select)
        if fields is None:
            break
        records.append(DecompositionRecord(iteration=len(records) + 1, **fields))
        if state["ties"]:
            ties.append(len(records))
        if state["inner_ties"]:
            inner_ties.append(len(records))
    alpha = state["alpha"]
    return ReferenceFit(records, alpha, intercept_from_v(y - state["G"], y, alpha, C), ties,
                        inner_ties)


def fit(K, y, C=1.0, tol=1e-3, working_set_size=None, max_iter=-1):
    """Osuna decomposition; ``working_set_size`` q (None: min(10, n)).
    Returns a :class:`~svmlab.reference._rounding.ReferenceFit` with one
    :class:`svmlab.decomposition.estimators.DecompositionRecord` per outer step."""
    n = len(y)
    q = min(10, n) if working_set_size is None else int(working_set_size)
    if not 2 <= q <= n:
        raise ValueError(f"working_set_size must be in [2, n_samples={n}], got {q}")
    used = []

    def select(v, y_, a, C_, t):
        B, gap = steepest_feasible(v, y_, a, C_, q, t)
        if q > 2:
            B = break_cycle(B, used)
            used.append(B)
        return B, gap

    return run_outer(K, y, C, tol, select, max_iter)


def explain(record):
    """``[(function, tags)]`` for one outer step: the selection, the outer
    step, and the active-set iterations of the sub-problem (a free-set
    solve each, a violator freed when the engine took more than one)."""
    qp = {"ls-solve"} | ({"release-worst"} if record.engine_iterations > 1 else set())
    return [(steepest_feasible, {"ws-sort", "ws-take"}), (break_cycle, {"ws-cycle"}),
            (outer_step, {"select", "solve", "snap", "update-G"}),
            (line_search_iteration, qp)]
