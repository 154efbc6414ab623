"""LIBSVM's second-order working-set selection, WSS 2 (Fan, Chen and Lin,
JMLR 6, 2005, Algorithm 2): the one home of the rule.

Problem: the SVM dual in LIBSVM's form, ``min 1/2 a'Qa + p'a`` subject to
``y'a = Delta`` and ``0 <= a_t <= U_t``, with ``Q_ts = y_t y_s K_ts``.  Write
``v_t = -y_t grad_t`` (for C-SVC, ``p = -1``: ``v_t = y_t - f0_t``, with
``f0_t = sum_s a_s y_s K_ts`` the decision value without intercept) and

    I_up  = {t : y_t a_t may increase},   I_low = {t : y_t a_t may decrease}

(:func:`svmlab._kkt.in_up`, :func:`svmlab._kkt.in_low`).  One selection::

    i = argmax_{t in I_up} v_t                         m = v_i
    j = argmin_{t in I_low, v_t < m}  -b_it^2 / a_it,  b_it = m - v_t > 0,
        a_it = K_ii + K_tt - 2 K_it,  replaced by TAU when a_it <= 0

and the pair ``(i, j)`` moves by the analytic step (the maximal gain along
the constraint line is ``b_it^2 / (2 a_it)``, so ``j`` is the partner with
the largest second-order gain).  The KKT conditions hold to ``tol`` iff
``m - M <= tol`` with ``M = min_{I_low} v_t``.

Ties (the rule, written once here and in :mod:`svmlab.reference.wss2`):

* ``i``: the LAST maximising index (:func:`takes_i`: ``>=``, LIBSVM's).
  After an interior step the pair's ``v`` are equal in exact arithmetic,
  so this rule decides many pairs; with the first index, svmlab took up to
  15 times LIBSVM's steps on ill-conditioned fits (docs/decisions/33a01).
* ``j``: the LAST minimising index (:func:`takes_j`: ``<=``, LIBSVM's).
* ``a_it <= 0`` (a kernel that is not positive definite on the pair,
  duplicate points): ``TAU`` (LIBSVM's 1e-12), so the gain stays finite
  and such a pair is preferred, as in LIBSVM.

The pieces are small compiled functions that the loops inline
(:mod:`svmlab.smo`'s WSS2 loop, the blocked decomposition's sub-problem
solver); each is written once here (the choice of ``i``, which WSS 2 shares
with every first-order rule, once in :mod:`svmlab._kkt`: :func:`takes_i`), and its readable twin once in :mod:`svmlab.reference.wss2`
(``gain``, ``select_j``).  ``nu`` variants (LIBSVM's ``Solver_NU``) use the
same gain with ``i`` taken per class.

The registry of working-set rules, :data:`RULES`: a rule that keeps the
choice of ``i`` and scores the partners ``j`` differently is one compiled
score function here, one :class:`Rule` entry (its name, the function, the
dotted name of its readable twin) and the twin in
:mod:`svmlab.reference.wss2`; ``tests/test_wss2_rule.py`` checks every entry
against its twin bit for bit.  Platt's heuristics are not an entry: they
are a different loop (``svmlab.smo._platt``), not a different score.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._jit import njit
from ._kkt import in_low, takes_i  # noqa: F401  (the choice of i: svmlab._kkt)

__all__ = ["TAU", "RULES", "Rule", "curvature", "gain", "gain_or_nan", "rule", "takes_i",
           "takes_j", "select_j"]

#: LIBSVM's replacement of a non-positive curvature ``a_it <= 0`` (its ``TAU``)
TAU = 1e-12


@njit(cache=True, inline="always")
def curvature(Kii, Ktt, Kit):
    """``a_it = K_ii + K_tt - 2 K_it``, or :data:`TAU` when it is ``<= 0``."""
    a = Kii + Ktt - 2.0 * Kit
    return TAU if a <= 0.0 else a


@njit(cache=True, inline="always")
def gain(m, v_t, Kii, Ktt, Kit):
    """WSS 2's score of partner t for ``i`` (smaller is better):
    ``-b^2 / a_it`` with ``b = m - v_t`` (:func:`curvature` for ``a_it``)."""
    b = m - v_t
    return -b * b / curvature(Kii, Ktt, Kit)


@njit(cache=True, inline="always")
def gain_or_nan(low, m, v_t, Kii, Ktt, Kit):
    """:func:`gain` when t is a candidate (``low``: t in I_low, and ``m - v_t
    > 0``), else NaN, which never satisfies :func:`takes_j`.  Branch-free,
    so that a loop over it vectorises (whether t is a candidate is
    unpredictable)."""
    g = gain(m, v_t, Kii, Ktt, Kit)
    return g if low & (m - v_t > 0.0) else np.nan


@njit(cache=True, inline="always")
def takes_j(g, best):
    """Whether gain ``g`` replaces the running best of the choice of j
    (``<=``: the last minimising index wins, as LIBSVM's)."""
    return g <= best


@njit(cache=True)
def select_j(m, i, K, v, y, alpha, C):
    """WSS 2's ``j`` on a dense kernel matrix (a decomposition's working-set
    block): the candidates t (in I_low with ``v_t < m``) of the rows of
    ``K``, the last one with the smallest :func:`gain`; -1 if none.

    Parameters
    ----------
    m : float
        ``v_i``, the maximum over I_up.
    i : int
        The first index of the pair (its row ``K[i]``, its diagonal ``K[i, i]``).
    K : float64 array (q, q)
        The kernel matrix of the examples.
    v : float64 array (q,)
        ``-y_t grad_t``.
    y, alpha, C : float64 arrays (q,)
        Labels (+1/-1), multipliers and their upper bounds.
    """
    Kii = K[i, i]
    j = -1
    best = np.inf
    for t in range(y.shape[0]):
        g = gain_or_nan(in_low(y[t], alpha[t], C[t]), m, v[t], Kii, K[t, t], K[i, t])
        if takes_j(g, best):
            best = g
            j = t
    return j


class Rule(NamedTuple):
    """A working-set rule of the WSS 2 family: ``i`` is the maximal ``v``
    over I_up (:func:`takes_i`), ``j`` the candidate t (in I_low, ``v_t <
    m``) with the smallest ``score(m, v_t, K_ii, K_tt, K_it)`` (ties:
    :func:`takes_j`)."""

    #: the name a user passes (``selection=``)
    name: str
    #: the compiled score, ``inline="always"`` (the loops inline it):
    #: ``score(m, v_t, Kii, Ktt, Kit) -> float``, smaller is better
    score: object
    #: dotted name of its readable twin in :mod:`svmlab.reference`, the same
    #: arithmetic on NumPy arrays (checked bit for bit by the tests)
    twin: str


#: the working-set rules, by name (see the module docstring)
RULES = {
    "wss2": Rule("wss2", gain, "svmlab.reference.wss2.gain"),
}


def rule(name):
    """The :class:`Rule` registered as ``name`` (a clear error otherwise)."""
    try:
        return RULES[name]
    except KeyError:
        raise ValueError(f"unknown working-set rule {name!r}; known: {sorted(RULES)}") from None
