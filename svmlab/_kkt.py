# One home for the small rules every kernel solver shares.
#
# Problem (Platt's TR eq. 11; LIBSVM's notation): minimise over alpha
#     1/2 sum_ij alpha_i alpha_j y_i y_j K_ij - sum_i alpha_i
#     s.t. 0 <= alpha_i <= C_i,  sum_i y_i alpha_i = 0.
# Write v_i = y_i - f0_i (f0 the output without intercept; in the engines
# v = r - K beta) and e = v - b, the convention of svmlab's engines (Platt's
# error is E_i = -e_i).  The KKT conditions (Platt's
# TR eqs. 9-11; Keerthi et al. 2001) read
#     v_i <= b  for i in I_up,   v_i >= b  for i in I_low,
# with
#     I_up  = {i : y_i = +1, alpha_i < C_i} u {i : y_i = -1, alpha_i > 0}
#             (y_i alpha_i may increase),
#     I_low = {i : y_i = +1, alpha_i > 0}   u {i : y_i = -1, alpha_i < C_i}
#             (y_i alpha_i may decrease).
# They hold (to tol) iff m - M <= tol, where m = max_{I_up} v and
# M = min_{I_low} v (the maximal violating pair).
#
# Every rule comes twice: a compiled numba function (for the solvers' loops)
# and a naive NumPy twin (for reading, for the Python solvers, and as the
# test oracle of the compiled one; tests/test_kkt.py checks they agree).
#
# Decisions where the papers are silent:
# - a label y_i > 0 is the positive class; every other label (-1, and also
#   0 should one slip through) is treated as negative;
# - the intercept is the mean of v over the free vectors (0 < alpha_i < C_i);
#   with no free vector it is the midpoint of [m_bound, M_bound] (LIBSVM's
#   calculate_rho); if only one end is finite it is that end, and with both
#   sets empty (no samples) it is 0.
# - the violation m - M is 0.0 when I_up or I_low is empty (no pair can move).
# - ties in the choice of i: the last maximising index in the SMO loops
#   (takes_i, LIBSVM's), the first in the decomposition's violating_pair
#   (np.argmax's); docs/decisions/33a01.
"""The KKT bookkeeping shared by the kernel solvers: I_up / I_low membership,
the maximal violation m - M, and the intercept rule, each compiled (numba)
with a NumPy twin."""

from __future__ import annotations

import numpy as np
from ._jit import njit

__all__ = [
    "in_up", "in_low", "up_low", "takes_i",
    "intercept", "intercept_np", "intercept_from_v",
    "violating_pair", "violating_pair_np",
    "kkt_violation", "kkt_violation_np",
]


# --------------------------------------------------------------------------
# I_up / I_low (Keerthi et al. 2001, eq. 6; LIBSVM's is_upper/lower_bound)

@njit(cache=True, inline="always")
def in_up(y, a, c):
    """Whether a sample is in I_up (``y alpha`` may increase).

    Parameters
    ----------
    y : float
        The sample's label; ``y > 0`` is the positive class, anything else
        negative.
    a : float
        Its multiplier alpha_i, in [0, c].
    c : float
        Its upper bound C_i.

    Returns
    -------
    bool
        ``a < c`` for a positive sample, ``a > 0`` for a negative one.
    """
    return (a < c) if y > 0 else (a > 0.0)


@njit(cache=True, inline="always")
def in_low(y, a, c):
    """Whether a sample is in I_low (``y alpha`` may decrease).

    Parameters
    ----------
    y : float
        The sample's label; ``y > 0`` is the positive class.
    a : float
        Its multiplier alpha_i, in [0, c].
    c : float
        Its upper bound C_i.

    Returns
    -------
    bool
        ``a > 0`` for a positive sample, ``a < c`` for a negative one.
    """
    return (a > 0.0) if y > 0 else (a < c)


# --------------------------------------------------------------------------
# the maximal-violation choice: i = argmax_{I_up} v, its tie rule takes_i
# (LIBSVM's: the last index).  Every compiled scan of the SMO loops
# (WSS2's first loop in svmlab.smo._dual_core, the fused gradient update,
# Platt's m) takes i through it; the readable twins are
# svmlab.reference.wss2 and svmlab.reference.dual.  The decomposition's
# maximal violating pair (violating_pair below, np.argmax in the blocked
# sub-problem solver) keeps the first index: docs/decisions/33a01.

@njit(cache=True, inline="always")
def takes_i(u, m):
    """Whether ``u`` replaces the running maximum ``m`` of the choice of i:
    ``u >= m`` (the LAST maximising index wins, LIBSVM's
    ``select_working_set``), except that ``-inf`` never does, so a scan
    that feeds ``-inf`` for the samples outside I_up still reports ``i =
    -1`` when I_up is empty.

    Why LIBSVM's rule: after an interior step the pair's ``v`` are equal in
    exact arithmetic, so ties decide the next pair often; on ill-conditioned
    problems the first index took up to 15 times LIBSVM's steps
    (docs/decisions/33a01).

    Written ``u >= max(m, -DBL_MAX)``: the same answer as ``(u >= m) & (u >
    -inf)`` for every ``u`` and ``m`` (NaN never wins either way), one
    comparison on the scan's critical path instead of two and a
    conjunction; measured 13-25 % less time per step on the gallery's
    large-C cells, the same steps (docs/decisions/36a01)."""
    return u >= max(m, -1.7976931348623157e308)


def up_low(y, alpha, C):
    """NumPy twin of :func:`in_up` / :func:`in_low`: the boolean masks
    ``(up, low)`` of I_up and I_low.  ``y``, ``alpha`` arrays (n,); ``C`` a
    scalar or the per-sample bounds (n,)."""
    pos = y > 0
    up = (pos & (alpha < C)) | (~pos & (alpha > 0))
    low = (pos & (alpha > 0)) | (~pos & (alpha < C))
    return up, low


# --------------------------------------------------------------------------
# the intercept: mean over free vectors, else the midpoint

@njit(cache=True)
def intercept(v, y, alpha, C):
    """The intercept b for ``e = v - b``: the mean of ``v`` over the free
    samples (``0 < alpha_i < C_i``, where TR eq. 10 makes ``v_i = b``
    exactly), else the midpoint of the interval ``[max_{I_up} v,
    min_{I_low} v]`` the KKT conditions allow (LIBSVM's calculate_rho); if
    one end is infinite, the finite end; with no samples, 0.

    Parameters
    ----------
    v : float64 array (n,)
        ``y_i - f0_i``, the output error without intercept with its sign
        flipped (in the engines ``v = r - K beta``).
    y : float64 array (n,)
        Labels, +1 / -1.
    alpha : float64 array (n,)
        Multipliers, each in [0, C_i].
    C : float64 array (n,)
        The per-sample upper bounds C_i.

    Returns
    -------
    float
        b.  The free mean is summed in index order, so it is bit for bit
        the value of a sequential loop.
    """
    s = 0.0
    nf = 0
    for k in range(y.shape[0]):
        if alpha[k] > 0.0 and alpha[k] < C[k]:
            s += v[k]
            nf += 1
    if nf > 0:
        return s / nf
    # no free vector: every sample is at a bound, and b may lie anywhere in
    # [max_{I_up} v, min_{I_low} v]
    lo, _, hi, _ = violating_pair(v, y, alpha, C)
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi)
    if np.isfinite(lo):
        return lo
    if np.isfinite(hi):
        return hi
    return 0.0


def intercept_np(v, y, alpha, C):
    """NumPy twin of :func:`intercept` (``C`` a scalar or (n,)).  The free
    mean is ``np.mean`` (pairwise summation), so it may differ from the
    compiled loop in the last bits."""
    free = (alpha > 0) & (alpha < C)
    if free.any():
        return float(v[free].mean())
    up, low = up_low(y, alpha, C)
    # with e = v - b the KKT conditions read v_i <= b on I_up and v_i >= b on
    # I_low, so b lies in [max_{I_up} v, min_{I_low} v]
    lo = v[up].max() if up.any() else -np.inf
    hi = v[low].min() if low.any() else np.inf
    if np.isfinite(lo) and np.isfinite(hi):
        return float(0.5 * (lo + hi))
    return float(lo if np.isfinite(lo) else (hi if np.isfinite(hi) else 0.0))


# the name the Python solvers have always used
intercept_from_v = intercept_np


# --------------------------------------------------------------------------
# m, M and the maximal violation m - M

@njit(cache=True)
def violating_pair(v, y, alpha, C):
    """The maximal violating pair: ``(m, i, M, j)`` with ``m = v_i =
    max_{I_up} v`` and ``M = v_j = min_{I_low} v`` (first index on ties,
    ``np.argmax``'s: the decomposition solvers' rule, which their
    vectorised scans share; the SMO loops take i by :func:`takes_i`,
    LIBSVM's last index).
    An empty set gives ``m = -inf, i = -1`` (or ``M = +inf, j = -1``).

    Parameters
    ----------
    v : float64 array (n,)
        ``y_i - f0_i`` (``-E_i`` in Platt's notation, up to b).
    y : float64 array (n,)
        Labels, +1 / -1.
    alpha : float64 array (n,)
        Multipliers, each in [0, C_i].
    C : float64 array (n,)
        The per-sample upper bounds C_i.

    Returns
    -------
    (float, int, float, int)
    """
    m = -np.inf
    M = np.inf
    i = -1
    j = -1
    for k in range(y.shape[0]):
        vk = v[k]
        if in_up(y[k], alpha[k], C[k]) and vk > m:
            m = vk
            i = k
        if in_low(y[k], alpha[k], C[k]) and vk < M:
            M = vk
            j = k
    return m, i, M, j


def violating_pair_np(v, y, alpha, C, active=None):
    """NumPy twin of :func:`violating_pair` (``C`` a scalar or (n,)); with
    ``active`` (a boolean mask) over the active samples only."""
    up, low = up_low(y, alpha, C)
    if active is not None:
        up &= active
        low &= active
    if up.any():
        vu = np.where(up, v, -np.inf)
        i = int(np.argmax(vu))
        m = float(vu[i])
    else:
        i, m = -1, -np.inf
    if low.any():
        vl = np.where(low, v, np.inf)
        j = int(np.argmin(vl))
        M = float(vl[j])
    else:
        j, M = -1, np.inf
    return m, i, M, j


@njit(cache=True)
def kkt_violation(v, y, alpha, C):
    """The maximal KKT violation ``m - M`` (see :func:`violating_pair`); the
    KKT conditions hold to ``tol`` iff it is ``<= tol``.  0.0 when I_up or
    I_low is empty (no pair can move).  Parameters as :func:`violating_pair`."""
    m, i, M, j = violating_pair(v, y, alpha, C)
    if i < 0 or j < 0:
        return 0.0
    return m - M


def kkt_violation_np(v, y, alpha, C):
    """NumPy twin of :func:`kkt_violation`."""
    up, low = up_low(y, alpha, C)
    if not up.any() or not low.any():
        return 0.0
    return float(v[up].max() - v[low].min())
