"""The ``"smo"`` engine: Platt's analytic pair step iterated on a dense
sub-problem with the maximal-violating pair.  With ``|B| = 2`` it is
exactly one SMO step, so SMO is decomposition with q = 2 and this engine.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .._kkt import intercept, violating_pair
from ..smo._pairstep import pair_step_box

__all__ = ["pair_update", "smo_engine"]


@njit(cache=True, inline="always")
def pair_update(K, y, alpha, C, v, i, j):
    """One analytic SMO step on the pair (i, j) of a dense sub-problem, in
    place: Platt's step on the box ``[0, C_j] x [0, C_i]``
    (:func:`svmlab.smo._pairstep.pair_step_box`, E = -v, b = 0), then
    ``v -= K[:, j] dj + K[:, i] di``.  Shared by :func:`smo_engine` and the
    blocked decomposition's :func:`svmlab.decomposition._blocked.block_smo`.

    Parameters
    ----------
    K : float64 array (q, q)
        The sub-problem's kernel matrix.
    y, C : float64 arrays (q,)
        Labels (+1 / -1) and upper bounds C_i.
    alpha : float64 array (q,)
        Multipliers, updated in place.
    v : float64 array (q,)
        ``y_t - G_t`` (= -E_t up to b), updated in place.
    i, j : int
        The pair (i from I_up, j from I_low).

    Returns
    -------
    bool
        Whether the pair moved (False leaves everything unchanged).
    """
    moved, aj, ai, _, _, _, _ = pair_step_box(
        y[j], y[i], alpha[j], alpha[i], -v[j], -v[i], 0.0,
        K[j, j], K[j, i], K[i, i], C[j], C[i], 1e-12,
    )
    if not moved:
        return False
    dj = y[j] * (aj - alpha[j])
    di = y[i] * (ai - alpha[i])
    alpha[j] = aj
    alpha[i] = ai
    for k in range(v.shape[0]):
        v[k] -= K[k, j] * dj + K[k, i] * di
    return True


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
        if not pair_update(K, y, alpha, C, v, i, j):
            break
        it += 1
    # intercept: mean over free of v, else middle of the interval
    b = intercept(v, y, alpha, C)
    return it, b
