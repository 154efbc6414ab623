"""The analytic two-multiplier step (Platt 1998, TR MSR-TR-98-14, section 2.1).

Shared by :class:`svmlab.SMOClassifier` and the ``engine="smo"`` sub-problem
solver of the decomposition family.

Sign conventions used throughout svmlab (they differ from Platt's paper,
which writes ``u = w.x - b``):

* decision function ``f(x) = sum_j alpha_j y_j K(x_j, x) + b`` with ``b`` the
  estimator's ``intercept_``;
* error ``E_i = f(x_i) - y_i``;
* ``eta = K11 + K22 - 2 K12`` (the second derivative of the dual objective
  along the constraint line; Platt's TR writes ``eta = 2 K12 - K11 - K22``).

Along the line ``y1 a1 + y2 a2 = k`` inside the box ``[0, C]^2`` (or
``[0, C1] x [0, C2]`` with per-example bounds, the ``*_box`` variants) the dual
objective ``W`` (to be maximised) is a 1-D quadratic in ``a2`` with curvature
``-eta``.  For ``eta > 0`` its maximiser is ``a2 + y2 (E1 - E2) / eta`` (TR
eq. 16), clipped to ``[L, H]`` (TR eqs. 13, 14, 17); ``a1`` follows from
``s = y1 y2`` (TR eq. 18).  For ``eta <= 0`` the objective is evaluated at
both ends of the segment (TR eq. 19) and the step moves to the better end;
equal ends (within ``eps``) mean no progress.
"""

from __future__ import annotations

import numpy as np
from .._jit import njit

__all__ = ["pair_bounds", "pair_bounds_box", "pair_step", "pair_step_box", "pair_threshold",
           "pair_threshold_box", "segment_objective"]


@njit(cache=True)
def pair_bounds_box(y1, y2, a1, a2, C1, C2):
    """Ends ``(L, H)`` of the feasible segment for the new ``a2`` inside the
    box ``[0, C1] x [0, C2]`` (per-example bounds ``C_i = C * weight_i``, as
    LIBSVM's weighted C-SVC).

    ``y1 != y2`` (TR eq. 13, ``a1 - a2`` fixed): ``L = max(0, a2 - a1)``,
    ``H = min(C2, C1 + a2 - a1)``.
    ``y1 == y2`` (TR eq. 14, ``a1 + a2`` fixed): ``L = max(0, a2 + a1 - C1)``,
    ``H = min(C2, a2 + a1)``.
    """
    if y1 != y2:
        L = max(0.0, a2 - a1)
        H = min(C2, C1 + a2 - a1)
    else:
        L = max(0.0, a2 + a1 - C1)
        H = min(C2, a2 + a1)
    return L, H


@njit(cache=True)
def pair_bounds(y1, y2, a1, a2, C):
    """Ends ``(L, H)`` of the feasible segment for the new ``a2`` (one ``C``
    for both: :func:`pair_bounds_box` with ``C1 = C2 = C``).

    ``y1 != y2`` (TR eq. 13): ``L = max(0, a2 - a1)``, ``H = min(C, C + a2 - a1)``.
    ``y1 == y2`` (TR eq. 14): ``L = max(0, a2 + a1 - C)``, ``H = min(C, a2 + a1)``.
    """
    return pair_bounds_box(y1, y2, a1, a2, C, C)


@njit(cache=True)
def segment_objective(a2_new, y1, y2, a1, a2, E1, E2, b, K11, K12, K22):
    """Change of the dual objective W when a2 moves to ``a2_new`` along the
    constraint line (a1 moving with it).  W is maximised; TR eq. 19 gives the
    same quantity up to sign and a constant."""
    s = y1 * y2
    # gradient of W w.r.t. alpha_i is 1 - y_i (f_i - b) = -y_i (E_i - b)
    d2 = a2_new - a2
    d1 = -s * d2
    g1 = -y1 * (E1 - b)
    g2 = -y2 * (E2 - b)
    quad = d1 * d1 * K11 + d2 * d2 * K22 + 2.0 * s * d1 * d2 * K12
    return g1 * d1 + g2 * d2 - 0.5 * quad


@njit(cache=True)
def pair_step_box(y1, y2, a1, a2, E1, E2, b, K11, K12, K22, C1, C2, eps):
    """One analytic joint step on (a1, a2) in the box ``[0, C1] x [0, C2]``.

    Returns ``(moved, a1_new, a2_new, a2_unclipped, L, H, eta)``.  ``moved``
    is False when the segment is a point (L == H), when ``eta <= 0`` and both
    ends are equally good within ``eps``, or when the change of ``a2`` is
    below ``eps (a2 + a2_new + eps)`` (Platt's takeStep); the old values are
    then returned.  ``a2_unclipped`` is the unconstrained maximiser along the
    line (NaN when ``eta <= 0``).  A new multiplier within ``1e-12 C_i`` of
    ``C_i``, or within ``1e-12 min(C_i, max(a1, a2, a1_new, a2_new))`` of 0,
    is snapped onto that bound (rounding residue).

    An infinite bound (``C_i = inf``, a hard margin) makes ``H`` infinite
    when ``y1 != y2``.  With ``eta > 0`` the step is finite as usual; with
    ``eta <= 0`` the objective along the line is convex, so an infinite end
    is unbounded unless ``eta == 0`` and the slope points to ``L``: then the
    step goes to ``L`` (when the slope exceeds ``eps``), else it does not
    move (the caller reports the stall: the hard-margin dual is unbounded,
    the data cannot be separated).  With ``C_i = inf`` nothing is snapped
    onto the upper bound, and only values below 0 onto 0.
    """
    L, H = pair_bounds_box(y1, y2, a1, a2, C1, C2)
    eta = K11 + K22 - 2.0 * K12
    if L >= H:
        return False, a1, a2, np.nan, L, H, eta
    if eta > 0.0:
        a2_unc = a2 + y2 * (E1 - E2) / eta
        if a2_unc < L:
            a2_new = L
        elif a2_unc > H:
            a2_new = H
        else:
            a2_new = a2_unc
    elif H == np.inf:
        # eta <= 0 on an infinite segment: W' = y2 (E1 - E2) at a2 (W is
        # maximised); only a linear W that decreases towards H has a finite
        # best end
        a2_unc = np.nan
        a2_new = L if (eta == 0.0 and y2 * (E1 - E2) < -eps) else a2
    else:
        a2_unc = np.nan
        wL = segment_objective(L, y1, y2, a1, a2, E1, E2, b, K11, K12, K22)
        wH = segment_objective(H, y1, y2, a1, a2, E1, E2, b, K11, K12, K22)
        if wL > wH + eps:
            a2_new = L
        elif wL < wH - eps:
            a2_new = H
        else:
            a2_new = a2
    if abs(a2_new - a2) < eps * (a2_new + a2 + eps):
        return False, a1, a2, a2_unc, L, H, eta
    s = y1 * y2
    a1_new = a1 + s * (a2 - a2_new)
    # Both lie in their box in exact arithmetic.  Snap rounding residue onto
    # the bounds, as Platt's code does: otherwise a multiplier left at
    # C - 1e-16 counts as free (and, for the working-set rules, as movable
    # with an empty segment).  The residue is a few ulps of the numbers the
    # step combined: within 1e-12 C_i of C_i, and within 1e-12 of the pair's
    # magnitude (at most C_i) of 0.  (A band of 1e-12 C_i at 0 too would, for
    # a huge C, zero legitimate multipliers and break sum y a = Delta by up to
    # 1e-12 C per step: with C = 1e10 the fit never converged.  C_i = inf: no
    # upper band.)
    scale = max(a1, a2, a1_new, a2_new)
    bt1 = 1e-12 * C1 if C1 < np.inf else 0.0
    if a1_new < 1e-12 * min(C1, scale):
        a1_new = 0.0
    elif a1_new > C1 - bt1:
        a1_new = C1
    bt2 = 1e-12 * C2 if C2 < np.inf else 0.0
    if a2_new < 1e-12 * min(C2, scale):
        a2_new = 0.0
    elif a2_new > C2 - bt2:
        a2_new = C2
    return True, a1_new, a2_new, a2_unc, L, H, eta


@njit(cache=True)
def pair_step(y1, y2, a1, a2, E1, E2, b, K11, K12, K22, C, eps):
    """:func:`pair_step_box` with one ``C`` for both multipliers (the box
    ``[0, C]^2`` of the unweighted problem)."""
    return pair_step_box(y1, y2, a1, a2, E1, E2, b, K11, K12, K22, C, C, eps)


@njit(cache=True)
def pair_threshold_box(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C1, C2):
    """New intercept after a joint step (TR eqs. 20, 21, in svmlab's sign),
    with per-example bounds ``C1``, ``C2``.

    ``b1`` makes ``E1 = 0`` and is valid when ``0 < a1_new < C1``; ``b2``
    likewise for a2; when both multipliers end at a bound every value between
    b1 and b2 satisfies KKT and their average is used.
    """
    d1 = y1 * (a1_new - a1)
    d2 = y2 * (a2_new - a2)
    b1 = b - E1 - d1 * K11 - d2 * K12
    b2 = b - E2 - d1 * K12 - d2 * K22
    if 0.0 < a1_new < C1:
        return b1
    if 0.0 < a2_new < C2:
        return b2
    return 0.5 * (b1 + b2)


@njit(cache=True)
def pair_threshold(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C):
    """:func:`pair_threshold_box` with ``C1 = C2 = C``."""
    return pair_threshold_box(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C, C)
