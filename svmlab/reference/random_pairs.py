"""SMO with random pairs, readable: the baseline for Platt's heuristics.

Same problem and signs as :mod:`svmlab.reference.smo` (the SVC dual, TR eq.
11 of Platt's MSR-TR-98-14)::

    max_alpha  sum_i alpha_i - 1/2 sum_ij alpha_i alpha_j y_i y_j K_ij
    s.t.       0 <= alpha_i <= C_i,   sum_i y_i alpha_i = 0

with ``f(x_i) = sum_j alpha_j y_j K_ij + b`` and the errors ``E_i = f(x_i)
- y_i``.  Platt's SMO owes its speed to *which* pair it optimises: the first
choice sweeps the KKT violators (TR section 2.2) and the second choice
maximises ``|E1 - E2|``.  This module keeps everything else and replaces both
choices by chance, so that notebook 02 can show what the heuristics buy:

1. ``i1`` is drawn uniformly among the current KKT violators (TR eq. 12,
   within ``tol``: ``y_i E_i < -tol`` with ``alpha_i < C_i``, or ``y_i E_i >
   tol`` with ``alpha_i > 0``);
2. ``i2`` is drawn uniformly among the other ``n - 1`` points;
3. the pair takes Platt's analytic joint step (TR eqs. 13-19, clipped to
   the segment ``[L, H]`` of the box ``[0, C_i1] x [0, C_i2]``;
   :func:`svmlab.smo._pairstep.pair_step_box`) and the threshold is updated by TR
   eqs. 20-21 (:func:`svmlab.smo._pairstep.pair_threshold_box`);
4. a pair that cannot move (Platt's ``eps`` test) is redrawn, up to ``4 n``
   times before the violators are recomputed; if none of them moves the run
   stops (a stall).

The run stops when no point violates the KKT conditions by more than
``tol``, or after ``max_steps`` successful steps.  The random stream is
numpy's ``default_rng(random_state)``: one draw for ``i1`` and one for
``i2`` per attempt, so a seed reproduces the run exactly.

    records, alpha, b, n_tries = random_pair_smo(K, y, C=1.0, random_state=0)

(:mod:`svmlab.viz.smo` re-exports it.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmlab.smo._pairstep import pair_step_box, pair_threshold_box

__all__ = ["PairRecord", "random_pair_smo"]


@dataclass(frozen=True, slots=True)
class PairRecord:
    """One joint step of :func:`random_pair_smo` (same field names as the
    :class:`svmlab.SMOClassifier` records it is compared with).

    ``kernel_evals`` counts the kernel values an uncached solver would have
    computed so far: two rows of n per *attempted* pair."""

    iteration: int
    i1: int
    i2: int
    y1: float
    y2: float
    a1_old: float
    a2_old: float
    a1_new: float
    a2_new: float
    a2_unclipped: float
    L: float
    H: float
    eta: float
    E1: float
    E2: float
    b_old: float
    b_new: float
    heuristic: str
    clipped: bool
    kernel_evals: int


def random_pair_smo(K, y_pm, C, tol=1e-3, eps=1e-3, max_steps=20000, random_state=0):
    """SMO where the pair is random: ``i1`` uniformly among the current KKT
    violators, ``i2`` uniformly among the other points.

    ``K`` is the full (n, n) kernel matrix (small problems only), ``y_pm``
    the labels in {-1, +1}, ``C`` a number or one bound per example (weights:
    a pair moves in its box ``[0, C_i1] x [0, C_i2]``).  ``eps`` is Platt's
    minimal step (``takeStep``).  Stops when no point violates KKT by more
    than ``tol`` or after ``max_steps`` successful steps.

    Returns ``(records, alpha, b, n_tries)``: the :class:`PairRecord` of
    every successful step, the final multipliers and threshold, and the
    number of pairs attempted (successful or not).
    """
    K = np.asarray(K, dtype=float)
    y = np.asarray(y_pm, dtype=float)
    n = len(y)
    if K.shape != (n, n):
        raise ValueError(f"K has shape {K.shape}; expected ({n}, {n}) for {n} labels.")
    Cv = np.broadcast_to(np.asarray(C, dtype=float), (n,))
    rng = np.random.default_rng(random_state)
    alpha = np.zeros(n)
    b = 0.0
    E = K @ (alpha * y) + b - y  # E_i = f(x_i) - y_i
    records = []
    tries = 0
    evals = 0
    while len(records) < max_steps:
        # KKT violators (TR eq. 12): r_i = y_i E_i = y_i f(x_i) - 1
        r = y * E
        viol = np.flatnonzero(((r < -tol) & (alpha < Cv)) | ((r > tol) & (alpha > 0)))
        if len(viol) == 0:
            break
        moved = False
        for _ in range(4 * n):  # a few random attempts before re-checking KKT
            i1 = int(viol[rng.integers(len(viol))])  # 1. a random violator
            i2 = int(rng.integers(n - 1))  # 2. any other point
            i2 += i2 >= i1
            tries += 1
            evals += 2 * n
            y1, y2 = y[i1], y[i2]
            a1, a2 = alpha[i1], alpha[i2]
            C1, C2 = float(Cv[i1]), float(Cv[i2])
            # 3. Platt's analytic step (TR eqs. 13-19) and threshold (eqs. 20-21)
            ok, a1n, a2n, a2u, L, H, eta = pair_step_box(
                y1, y2, a1, a2, E[i1], E[i2], b, K[i1, i1], K[i1, i2], K[i2, i2], C1, C2, eps)
            if not ok:
                continue  # 4. this pair cannot move: draw another
            bn = pair_threshold_box(y1, y2, a1, a2, a1n, a2n, E[i1], E[i2], b,
                                    K[i1, i1], K[i1, i2], K[i2, i2], C1, C2)
            clipped = not (np.isfinite(a2u) and L < a2u < H)
            records.append(PairRecord(
                iteration=len(records) + 1, i1=i1, i2=i2, y1=y1, y2=y2, a1_old=a1,
                a2_old=a2, a1_new=a1n, a2_new=a2n, a2_unclipped=a2u, L=L, H=H, eta=eta,
                E1=E[i1], E2=E[i2], b_old=b, b_new=bn, heuristic="random",
                clipped=bool(clipped), kernel_evals=evals))
            # every error moves with the two changed multipliers and b
            E += (y1 * (a1n - a1)) * K[i1] + (y2 * (a2n - a2)) * K[i2] + (bn - b)
            alpha[i1], alpha[i2] = a1n, a2n
            b = bn
            moved = True
            break
        if not moved:
            break  # no pair among 4n random draws could move: a stall
    return records, alpha, b, tries
