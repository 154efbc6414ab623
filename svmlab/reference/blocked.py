"""The blocked decomposition, readable (the loop of
:mod:`svmlab.decomposition._blocked`: ThunderSVM's outer iteration around
LIBSVM's WSS 2 SMO on a working set), on a precomputed float64 kernel
matrix, NumPy only: the test oracle of ``DecompositionClassifier(engine="smo")``.

Its rules are the readable twins of the compiled ones: the maximal
violating pair (:func:`svmlab.reference.subproblem.max_violating_pair`, the
first index on ties), WSS 2's partner
(:func:`svmlab.reference.wss2.select_j`, the last index on ties), the
working-set ranking of the compiled code
(:func:`svmlab.decomposition._blocked.select_working_set`, in its NumPy
statement ``select_working_set_np``) and Platt's
analytic pair step (:func:`svmlab.smo._pairstep.pair_step_box`).  It
reaches the compiled run's optimum; it does not replay its steps (the
compiled code gathers rows in float32 where the cache asks for it).
"""

from __future__ import annotations

import numpy as np

from svmlab.decomposition._blocked import INNER_FRACTION, INNER_STEPS_PER_EXAMPLE
from svmlab.decomposition._blocked import select_working_set_np as select_working_set
from svmlab.reference.subproblem import max_violating_pair, up_low
from svmlab.reference.wss2 import select_j
from svmlab.smo._pairstep import pair_step_box

__all__ = ["blocked_decomposition"]


def blocked_decomposition(K, y, C, tol, q, max_outer=100000):
    """The whole blocked decomposition on the kernel matrix ``K`` (n, n) with
    labels ``y`` (+1/-1) and bound ``C`` (a number or (n,)): returns
    ``(alpha, outer_steps)``.  Each outer step takes the working set (half
    of it kept from the step before), solves its sub-problem by WSS 2 SMO to
    ``max(tol, INNER_FRACTION * gap)``, and updates the gradient; it stops
    when the maximal violation ``m - M`` is ``<= tol``."""
    n = len(y)
    Cv = np.broadcast_to(np.asarray(C, float), (n,)).copy()
    alpha = np.zeros(n)
    G = np.zeros(n)
    half = None
    for step in range(max_outer):
        v = y - G
        _, _, gap = max_violating_pair(v, y, alpha, Cv)
        if gap <= tol:
            return alpha, step
        excl = np.zeros(n, bool)
        if half is None:
            B = select_working_set(v, y, alpha, Cv, q, excl)
        else:
            excl[half] = True
            B = np.concatenate([half, select_working_set(v, y, alpha, Cv, q - len(half), excl)])
        half = B[len(B) - q // 2:]  # the last q/2 stay for the next step
        a = alpha[B].copy()
        vb = v[B].copy()
        yb, Cb = y[B], Cv[B]
        Kb = K[np.ix_(B, B)]
        eps = max(tol, INNER_FRACTION * gap)
        for _ in range(INNER_STEPS_PER_EXAMPLE * len(B)):
            i, _, gap_b = max_violating_pair(vb, yb, a, Cb)
            if gap_b <= eps:
                break
            _, lowb = up_low(yb, a, Cb)
            j = select_j(vb[i], vb, lowb, Kb[i, i], np.diag(Kb), Kb[i])
            moved, aj, ai, *_ = pair_step_box(yb[j], yb[i], a[j], a[i], -vb[j], -vb[i], 0.0,
                                              Kb[j, j], Kb[j, i], Kb[i, i], Cb[j], Cb[i],
                                              1e-12)
            if not moved:
                break
            dj = yb[j] * (aj - a[j])
            di = yb[i] * (ai - a[i])
            a[j], a[i] = aj, ai
            vb -= Kb[:, j] * dj + Kb[:, i] * di
        d = yb * (a - alpha[B])
        if not np.any(d != 0):
            return alpha, step
        G += K[B].T @ d
        alpha[B] = a
    return alpha, max_outer
